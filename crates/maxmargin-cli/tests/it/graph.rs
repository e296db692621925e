//! `train --task graph`, `predict` and `eval` on graphs as JSON lines: generated noisy shapes end to end,
//! the inference flags and their refusals, bad graph files named by line.

use super::{fails, ok, ok_stderr, s};
use maxmargin::datasets::Shapes;

#[test]
fn graphs_train_predict_and_evaluate_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let shapes = Shapes::default().size(8, 8);
    let (train, test) = (
        dir.path().join("train.jsonl"),
        dir.path().join("test.jsonl"),
    );
    maxmargin::io::graphs::write(&train, &shapes.generate(16, 1)).unwrap();
    maxmargin::io::graphs::write(&test, &shapes.generate(5, 2)).unwrap();
    let model = dir.path().join("g.model");
    let trace = dir.path().join("t.jsonl");
    let err = ok_stderr(&[
        "train",
        s(&train),
        "--task",
        "graph",
        "-o",
        s(&model),
        "--max-passes",
        "20",
        "--inference",
        "max-product",
        "--trace",
        s(&trace),
    ]);
    assert!(err.contains("not a certificate"), "{err}");
    // Whatever the gap, the summary never calls an approximate oracle's gap certified.
    let summary = err.lines().find(|l| l.starts_with("trained")).unwrap();
    assert!(
        summary.contains("approximate inference") && !summary.contains("certified gap"),
        "{summary}"
    );
    let text = std::fs::read_to_string(&trace).unwrap();
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(
        (&last["certified"], &last["converged"]),
        (&serde_json::json!(false), &serde_json::json!(false)),
        "{last}"
    );
    let lines = ok(&["predict", s(&model), s(&test)]);
    assert_eq!(lines.lines().count(), 5);
    assert!(lines.lines().all(|l| l.split(' ').count() == 64), "{lines}");
    let json = ok(&["predict", s(&model), s(&test), "--json"]);
    let first: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert_eq!(first["labels"].as_array().map(Vec::len), Some(64));
    let e: serde_json::Value = serde_json::from_str(&ok(&[
        "eval",
        s(&model),
        s(&test),
        "--json",
        "--lambda",
        "1",
    ]))
    .unwrap();
    for key in [
        "accuracy",
        "hamming_loss",
        "mean_iou",
        "per_class_iou",
        "objective",
    ] {
        assert!(e.get(key).is_some(), "{key} missing: {e}");
    }
    assert!(e["accuracy"].as_f64().unwrap() > 0.8, "{e}");
    assert_eq!(e["inference"], "max-product", "{e}");
    let text = ok(&["eval", s(&model), s(&test)]);
    assert!(
        text.contains("node accuracy") && text.contains("mean IoU"),
        "{text}"
    );
    // Exact inference on each picture's rows (a forest), directed tables, from the flags.
    let exact = dir.path().join("e.model");
    ok(&[
        "train",
        s(&train),
        "--task",
        "graph",
        "-o",
        s(&exact),
        "--inference",
        "max-product",
        "--directed",
        "-q",
    ]);
    let err = fails(
        &[
            "train",
            s(&train),
            "--task",
            "graph",
            "-o",
            s(&exact),
            "--inference",
            "exact-tree",
        ],
        1,
    );
    assert!(
        err.contains("train.jsonl:1:1: edges:") && err.contains("closes a cycle"),
        "{err}"
    );
}

#[test]
fn graph_flags_and_files_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("g.jsonl");
    std::fs::write(
        &data,
        "{\"features\": [[1], [0]], \"edges\": [[0, 1]], \"labels\": [0, 1]}\n",
    )
    .unwrap();
    let heart = super::heart(dir.path());
    let m = dir.path().join("m.model");
    let err = fails(
        &[
            "train",
            s(&heart),
            "-o",
            s(&m),
            "--inference",
            "max-product",
        ],
        1,
    );
    assert!(
        err.contains("--inference") && err.contains("--task graph"),
        "{err}"
    );
    let err = fails(
        &[
            "train",
            s(&heart),
            "-o",
            s(&m),
            "--task",
            "chain",
            "--directed",
        ],
        1,
    );
    assert!(err.contains("--directed"), "{err}");
    let err = fails(
        &[
            "train",
            s(&data),
            "-o",
            s(&m),
            "--task",
            "graph",
            "--stream",
        ],
        1,
    );
    assert!(err.contains("--stream"), "{err}");
    let err = fails(&["cv", s(&data), "--task", "graph"], 1);
    assert!(err.contains("--task graph"), "{err}");
    let err = fails(
        &[
            "train",
            s(&data),
            "-o",
            s(&m),
            "--task",
            "graph",
            "--inference",
            "ad4",
        ],
        2,
    );
    assert!(err.contains("exact-tree"), "{err}");
    for (text, says) in [
        (
            "{\"features\": [[1], [0]], \"edges\": [[0, 0]], \"labels\": [0, 1]}",
            "self-loop",
        ),
        (
            "{\"features\": [[1], [0]], \"edges\": [[0, 1], [1, 0]], \"labels\": [0, 1]}",
            "already joined",
        ),
        (
            "{\"features\": [[1], [0]], \"edges\": [[0, 9]], \"labels\": [0, 1]}",
            "does not exist",
        ),
        (
            "{\"features\": [[1], [0]], \"edges\": [], \"labels\": [0]}",
            "1 labels for 2 nodes",
        ),
        (
            "{\"features\": [[1], [0]], \"edges\": [], \"labels\": [0, 1], \"extra\": 1}",
            "unknown field",
        ),
        ("not json", "json"),
    ] {
        let bad = dir.path().join("bad.jsonl");
        std::fs::write(&bad, format!("# a comment\n{text}\n")).unwrap();
        let err = fails(&["train", s(&bad), "-o", s(&m), "--task", "graph"], 1);
        assert!(
            err.contains("bad.jsonl:2:") && err.contains(says),
            "{text}: {err}"
        );
    }
    assert!(!m.exists());
}

/// Two-label noisy shapes of `side × side` in `dir`: `n` training pictures from `seed`, 4 test pictures from
/// `seed + 1`; returns the two files.
fn binary_shapes(
    dir: &std::path::Path,
    side: usize,
    (n, seed): (usize, u64),
) -> (std::path::PathBuf, std::path::PathBuf) {
    let shapes = Shapes::default().size(side, side).labels(2);
    let (train, test) = (dir.join("b.jsonl"), dir.join("t.jsonl"));
    maxmargin::io::graphs::write(&train, &shapes.generate(n, seed)).unwrap();
    maxmargin::io::graphs::write(&test, &shapes.generate(4, seed + 1)).unwrap();
    (train, test)
}

/// `--inference qpbo` (alias `graph-cut`): two labels train with an exact oracle, so the run is certified
/// (no warning), and the model predicts with the cut it was trained with. So does `--inference trws`, whose
/// bound certifies every answer where the relaxation is tight (two labels, attractive tables).
#[test]
fn graph_cuts_train_a_certified_binary_segmentation() {
    let dir = tempfile::tempdir().unwrap();
    let (train, test) = binary_shapes(dir.path(), 8, (12, 3));
    let model = dir.path().join("b.model");
    for name in ["qpbo", "graph-cut", "trws"] {
        let err = ok_stderr(&[
            "train",
            s(&train),
            "--task",
            "graph",
            "-o",
            s(&model),
            "--inference",
            name,
        ]);
        assert!(!err.contains("warning"), "{err}");
    }
    let lines = ok(&["predict", s(&model), s(&test)]);
    assert_eq!(lines.lines().count(), 4);
    assert!(
        lines
            .lines()
            .all(|l| l.split(' ').all(|v| v == "0" || v == "1")),
        "{lines}"
    );
}

/// `--relaxed` trains over ad3's LP relaxation: the run says so and how many answers were fractional, the
/// model predicts labellings; with another inference method, or another task, the flag is refused by name.
#[test]
fn relaxed_training_says_which_problem_it_certified() {
    let dir = tempfile::tempdir().unwrap();
    let (train, test) = binary_shapes(dir.path(), 8, (12, 5));
    let model = dir.path().join("r.model");
    let base = ["train", s(&train), "--task", "graph", "-o", s(&model)];
    let train_with =
        |extra: &[&'static str]| -> Vec<&str> { base.iter().chain(extra).copied().collect() };
    let err = ok_stderr(&train_with(&["--inference", "ad3", "--relaxed"]));
    assert!(
        err.contains("LP relaxation (--relaxed)")
            && err.contains("fractional")
            && !err.contains("warning"),
        "{err}"
    );
    let lines = ok(&["predict", s(&model), s(&test)]);
    assert_eq!(lines.lines().count(), 4);
    let err = fails(&train_with(&["--inference", "trws", "--relaxed"]), 1);
    assert!(
        err.contains("relaxed") && err.contains("--inference ad3"),
        "{err}"
    );
    let rows = dir.path().join("rows.svm");
    std::fs::write(&rows, "1 1:1\n-1 1:-1\n").unwrap();
    let err = fails(&["train", s(&rows), "-o", s(&model), "--relaxed"], 1);
    assert!(
        err.contains("--relaxed") && err.contains("--task graph"),
        "{err}"
    );
}

/// `predict --inference` and `eval --inference` infer with another method than the model's: a model trained
/// by the default (trws) predicts with graph cuts or AD3 (exact on these pictures' two labels); refused by name
/// for a model that is not a graph model.
#[test]
fn predict_and_eval_infer_with_the_method_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let (train, test) = binary_shapes(dir.path(), 6, (10, 5));
    let model = dir.path().join("m.model");
    ok_stderr(&["train", s(&train), "--task", "graph", "-o", s(&model)]);
    let exact = ok(&["predict", s(&model), s(&test), "--inference", "ad3"]);
    let cut = ok(&["predict", s(&model), s(&test), "--inference", "qpbo"]);
    assert_eq!(exact, cut, "two exact methods, one answer");
    // Two labels with an attractive table: the relaxation is tight, and TRW-S reaches it.
    let trws = ok(&["predict", s(&model), s(&test), "--inference", "trws"]);
    assert_eq!(exact, trws);
    assert_eq!(exact.lines().count(), 4);
    let e: serde_json::Value = serde_json::from_str(&ok(&[
        "eval",
        s(&model),
        s(&test),
        "--json",
        "--inference",
        "qpbo",
    ]))
    .unwrap();
    assert!(e["accuracy"].as_f64().unwrap() > 0.5, "{e}");
    assert_eq!(
        (&e["inference"], &e["uncertified"]),
        (&serde_json::json!("qpbo"), &serde_json::json!(0))
    );
    let rows = dir.path().join("rows.svm");
    std::fs::write(&rows, "1 1:1\n-1 1:-1\n").unwrap();
    let linear = dir.path().join("l.model");
    ok(&["train", s(&rows), "-o", s(&linear), "-q"]);
    for command in ["predict", "eval"] {
        let err = fails(&[command, s(&linear), s(&rows), "--inference", "ad3"], 1);
        assert!(
            err.contains("--inference applies to graph models")
                && err.contains("is a binary model"),
            "{err}"
        );
    }
}

/// `--labels N` declares labels the training graphs lack (a model trained on pictures of one label can then
/// evaluate pictures with more), a label beyond it is refused by line, and a model that can only predict one
/// label is named in a warning. Graphs wider than the model are predicted with a warning counting the
/// values ignored.
#[test]
fn graph_labels_and_widths_are_said() {
    let dir = tempfile::tempdir().unwrap();
    let (train, test) = binary_shapes(dir.path(), 5, (6, 7));
    let data = maxmargin::io::graphs::read(&train).unwrap();
    let zeros = maxmargin::io::graphs::GraphData {
        graphs: data
            .graphs
            .iter()
            .map(|g| maxmargin::io::graphs::GraphRecord {
                labels: g.labels.as_ref().map(|y| vec![0; y.len()]),
                node_weights: None,
                ..g.clone()
            })
            .collect(),
        ..data.clone()
    };
    let blank = dir.path().join("zeros.jsonl");
    maxmargin::io::graphs::write(&blank, &zeros).unwrap();
    let model = dir.path().join("z.model");
    let err = ok_stderr(&["train", s(&blank), "--task", "graph", "-o", s(&model)]);
    assert!(
        err.contains("every node label") && err.contains("--labels"),
        "{err}"
    );
    let err = fails(&["eval", s(&model), s(&test)], 1);
    assert!(err.contains("t.jsonl:1:1: labels:"), "{err}");
    let err = ok_stderr(&[
        "train",
        s(&blank),
        "--task",
        "graph",
        "-o",
        s(&model),
        "--labels",
        "2",
    ]);
    assert!(!err.contains("every node label"), "{err}");
    assert!(ok(&["eval", s(&model), s(&test)]).contains("node accuracy"));
    let err = fails(
        &[
            "train",
            s(&train),
            "--task",
            "graph",
            "-o",
            s(&model),
            "--labels",
            "1",
        ],
        1,
    );
    assert!(
        err.contains("b.jsonl:") && err.contains("outside the 1 labels"),
        "{err}"
    );
    let wide = maxmargin::io::graphs::GraphData {
        graphs: data
            .graphs
            .iter()
            .map(|g| maxmargin::io::graphs::GraphRecord {
                nodes: g
                    .nodes
                    .iter()
                    .map(|v| {
                        let (mut idx, mut val) =
                            (v.as_row().indices().to_vec(), v.as_row().values().to_vec());
                        idx.push(data.n_features as u32 + 2);
                        val.push(1.0);
                        maxmargin::core::vector::SparseVec::new(idx, val).unwrap()
                    })
                    .collect(),
                ..g.clone()
            })
            .collect(),
        n_features: data.n_features + 3,
        ..data.clone()
    };
    let wider = dir.path().join("wide.jsonl");
    maxmargin::io::graphs::write(&wider, &wide).unwrap();
    let err = ok_stderr(&["predict", s(&model), s(&wider)]);
    assert!(
        err.contains("wide.jsonl:") && err.contains(&format!("{} feature values", data.n_nodes())),
        "{err}"
    );
}

/// Class weights (and node weights) of 0 for every token or node leave no loss: refused as multiclass
/// refuses them, instead of a model of w = 0 that said "converged".
#[test]
fn weights_of_zero_for_every_token_or_node_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (seq, graphs, model) = (
        tmp.path().join("s.dat"),
        tmp.path().join("g.jsonl"),
        tmp.path().join("m.model"),
    );
    std::fs::write(&seq, "1 qid:1 1:1\n2 qid:1 2:1\n2 qid:2 1:1\n1 qid:2 2:1\n").unwrap();
    let line = |w: &str| {
        format!(
            "{{\"features\":[[1,0],[0,1]],\"edges\":[[0,1]],\"labels\":[0,1],\"node_weights\":[{w}]}}\n"
        )
    };
    let refused = |args: &[&str]| {
        let err = fails(args, 1);
        assert!(
            err.contains("class weights must give some token or node a weight above 0"),
            "{err}"
        );
        assert!(!model.exists());
    };
    refused(&[
        "train",
        "--task",
        "chain",
        s(&seq),
        "-o",
        s(&model),
        "-w",
        "1=0",
        "-w",
        "2=0",
    ]);
    std::fs::write(&graphs, line("1,1").repeat(2)).unwrap();
    refused(&[
        "train",
        "--task",
        "graph",
        s(&graphs),
        "-o",
        s(&model),
        "-w",
        "0=0",
        "-w",
        "1=0",
    ]);
    // Node weights of 0 throughout, or class weights that zero the only weighted nodes.
    std::fs::write(&graphs, line("0,0").repeat(2)).unwrap();
    refused(&["train", "--task", "graph", s(&graphs), "-o", s(&model)]);
    std::fs::write(&graphs, line("1,0").repeat(2)).unwrap();
    refused(&[
        "train",
        "--task",
        "graph",
        s(&graphs),
        "-o",
        s(&model),
        "-w",
        "0=0",
    ]);
    ok(&[
        "train",
        "--task",
        "graph",
        s(&graphs),
        "-o",
        s(&model),
        "-w",
        "1=0",
        "-q",
    ]);
}
