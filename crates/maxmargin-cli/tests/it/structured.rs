//! `train`, `predict` and `eval` on multiclass, multilabel and chain data, every structured solver.

use super::*;

#[test]
fn structured_tasks_train_predict_eval() {
    let tmp = tempfile::tempdir().unwrap();
    // Multiclass on the embedded iris, every solver.
    let iris = tmp.path().join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    for solver in ["bcfw", "oneslack", "nslack", "ssg", "dcd", "ovr"] {
        let model = tmp.path().join(format!("iris.{solver}.json"));
        let trace = tmp.path().join(format!("iris.{solver}.jsonl"));
        ok(&[
            "train",
            "--task",
            "multiclass",
            s(&iris),
            "-o",
            s(&model),
            "--solver",
            solver,
            "--lambda",
            "0.01",
            "--max-passes",
            "300",
            "--threads",
            "1",
            "--trace",
            s(&trace),
            "--quiet",
        ]);
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
        assert_eq!(v["kind"], "multiclass");
        let report: serde_json::Value = serde_json::from_str(&ok(&[
            "eval",
            s(&model),
            s(&iris),
            "--json",
            "--lambda",
            "0.01",
        ]))
        .unwrap();
        assert!(
            report["accuracy"].as_f64().unwrap() > 0.9,
            "{solver}: {report}"
        );
        assert!(report["objective"].as_f64().is_some());
        let preds = ok(&["predict", s(&model), s(&iris)]);
        assert_eq!(preds.lines().count(), 150);
        assert!(
            preds.lines().all(|l| ["0", "1", "2"].contains(&l)),
            "{preds}"
        );
        let last: serde_json::Value = serde_json::from_str(
            std::fs::read_to_string(&trace)
                .unwrap()
                .lines()
                .last()
                .unwrap(),
        )
        .unwrap();
        assert!(last["stop"].is_string(), "{last}");
    }
    // A checkpointed run resumed to the same budget gives the model of one straight run.
    let (a, b, ck) = (
        tmp.path().join("a.json"),
        tmp.path().join("b.json"),
        tmp.path().join("run.ck"),
    );
    let common = [
        "--task",
        "multiclass",
        "--solver",
        "bcfw",
        "--lambda",
        "0.01",
        "--epsilon",
        "1e-9",
        "--quiet",
    ];
    ok(&[
        &["train", s(&iris), "-o", s(&a), "--max-passes", "30"][..],
        &common,
    ]
    .concat());
    ok(&[
        &[
            "train",
            s(&iris),
            "-o",
            s(&b),
            "--max-passes",
            "10",
            "--checkpoint",
            s(&ck),
        ][..],
        &common,
    ]
    .concat());
    ok(&[
        &[
            "train",
            s(&iris),
            "-o",
            s(&b),
            "--max-passes",
            "30",
            "--resume",
            s(&ck),
        ][..],
        &common,
    ]
    .concat());
    let w = |p: &Path| {
        serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(p).unwrap()).unwrap()["w"].clone()
    };
    assert_eq!(w(&a), w(&b));

    // Bad combinations are one clear line.
    let model = tmp.path().join("m.model");
    let err = fails(
        &[
            "train",
            "--task",
            "multiclass",
            s(&iris),
            "-o",
            s(&model),
            "--solver",
            "pegasos",
        ],
        1,
    );
    assert!(
        err.contains("--solver pegasos applies to binary training; --task multiclass takes bcfw"),
        "{err}"
    );
    // A solver that does not exist is a usage error, with the list.
    let err = fails(&["train", s(&iris), "-o", s(&model), "--solver", "sgd"], 2);
    assert!(err.contains("possible values: dcd, pegasos"), "{err}");
    let err = fails(
        &["train", s(&iris), "-o", s(&model), "--max-passes", "3"],
        1,
    );
    assert!(
        err.contains("--max-passes applies to structured tasks"),
        "{err}"
    );
    let err = fails(&["train", "--task", "tree", s(&iris), "-o", s(&model)], 2);
    assert!(err.contains("task"), "{err}");

    let Some(data) = shared_data() else { return };
    // Chains on OCR fold 0 (a short run), multilabel on yeast.
    let ocr = data.join("ocr_letters/ocr.fold0.svmhmm.gz");
    let model = tmp.path().join("ocr.model");
    ok(&[
        "train",
        "--task",
        "chain",
        s(&ocr),
        "-o",
        s(&model),
        "--max-passes",
        "10",
        "--quiet",
    ]);
    let report: serde_json::Value =
        serde_json::from_str(&ok(&["eval", s(&model), s(&ocr), "--json"])).unwrap();
    assert!(report["token_error"].as_f64().unwrap() < 0.5, "{report}");
    assert!(report["sequence_accuracy"].as_f64().is_some());
    let tags = ok(&["predict", s(&model), s(&ocr)]);
    assert_eq!(
        tags.lines().count(),
        maxmargin::io::svm_hmm::read(&ocr).unwrap().n_tokens()
    );
    let yeast = data.join("yeast/yeast.train.libsvm.gz");
    let model = tmp.path().join("yeast.model");
    ok(&[
        "train",
        "--task",
        "multilabel",
        s(&yeast),
        "-o",
        s(&model),
        "--max-passes",
        "10",
        "--quiet",
    ]);
    let report: serde_json::Value = serde_json::from_str(&ok(&[
        "eval",
        s(&model),
        s(&yeast),
        "--json",
        "--lambda",
        "0.01",
    ]))
    .unwrap();
    for key in ["hamming_loss", "exact_match", "micro_f1", "objective"] {
        assert!(report[key].as_f64().is_some(), "{key}: {report}");
    }
    assert!(report["hamming_loss"].as_f64().unwrap() < 0.3, "{report}");
}
/// A 6-label multilabel set with unscaled features (0.02 to 240, as audio features are): 1-slack at -c 1 was
/// still running after 10 minutes. Now a bounded run ends in seconds and says it is not converged, and
/// with --scale maxabs it converges.
#[test]
fn unscaled_multilabel_one_slack_ends_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("emotions.svm");
    let mut lcg = maxmargin::testing::Lcg::new(3);
    let mut next = move || lcg.unit();
    let (n, d) = (391, 72);
    let weights: Vec<Vec<f64>> = (0..6)
        .map(|_| (0..d).map(|_| next() * 2.0 - 1.0).collect())
        .collect();
    let mut text = String::new();
    for _ in 0..n {
        let z: Vec<f64> = (0..d).map(|_| next() * 2.0 - 1.0).collect();
        let labels: Vec<String> = (0..6)
            .filter(|&l| z.iter().zip(&weights[l]).map(|(a, b)| a * b).sum::<f64>() > 0.3)
            .map(|l| l.to_string())
            .collect();
        text.push_str(&labels.join(","));
        for (j, v) in z.iter().enumerate() {
            let scale = 0.02 * (240.0f64 / 0.02).powf(j as f64 / (d - 1) as f64);
            text.push_str(&format!(" {}:{:.4}", j + 1, v.abs() * scale));
        }
        text.push('\n');
    }
    std::fs::write(&data, text).unwrap();
    let model = tmp.path().join("m.model");
    let base = [
        "train",
        "--task",
        "multilabel",
        s(&data),
        "-o",
        s(&model),
        "--solver",
        "oneslack",
        "-c",
        "1",
        "--quiet",
    ];
    let start = std::time::Instant::now();
    let err = ok_stderr(&[&base[..], &["--max-passes", "60"]].concat());
    assert!(start.elapsed().as_secs() < 60, "{:?}", start.elapsed());
    assert!(err.contains("--scale"), "{err}");
    assert!(
        err.lines()
            .any(|l| l.starts_with("warning: oneslack stopped on its pass budget")),
        "{err}"
    );
    let err = ok_stderr(&[&base[..], &["--scale", "maxabs", "--require-convergence"]].concat());
    assert!(err.is_empty(), "{err}");
}

/// A true label the model never saw in training is a miss it could not avoid: `eval` counts it (it used
/// to drop it, and a test set of such labels scored perfectly).
#[test]
fn multilabel_eval_counts_labels_unseen_in_training_as_misses() {
    let tmp = tempfile::tempdir().unwrap();
    let (train, test, model) = (
        tmp.path().join("train.svm"),
        tmp.path().join("test.svm"),
        tmp.path().join("m.model"),
    );
    std::fs::write(&train, "1,2 1:1\n2 2:1\n").unwrap();
    std::fs::write(&test, "1,9 1:1\n").unwrap();
    ok(&[
        "train",
        "--task",
        "multilabel",
        s(&train),
        "-o",
        s(&model),
        "-q",
    ]);
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["eval", s(&model), s(&test), "--json"])).unwrap();
    assert_eq!(json["subset_accuracy"], 0.0, "{json}");
    assert_eq!(json["micro_recall"], 0.5, "{json}");
    let classes = json["per_class"].as_array().unwrap();
    let nine = classes.iter().find(|c| c["class"] == 9.0).unwrap();
    assert_eq!(
        (nine["support"].as_u64(), nine["recall"].as_f64()),
        (Some(1), Some(0.0))
    );
    // The model's labels, then each unseen one: nothing is sized by the largest label number (4e9 asked
    // eval for 96 GB and aborted).
    std::fs::write(&test, "1,4000000000 1:1\n2 2:1\n").unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["eval", s(&model), s(&test), "--json"])).unwrap();
    let classes: Vec<f64> = (json["per_class"].as_array().unwrap().iter())
        .map(|c| c["class"].as_f64().unwrap())
        .collect();
    assert_eq!(classes, [0.0, 1.0, 2.0, 4e9], "{json}");
    assert_eq!(json["micro_recall"].as_f64(), Some(2.0 / 3.0), "{json}");
}

/// A label (tag) training never saw, as a rare class only the test split has, is counted by `eval` as an
/// error and named in one warning, as the tagger counts an unknown tag; `--lambda` says why it cannot give
/// the objective. Data whose rows mostly have such labels is still another task's.
#[test]
fn eval_counts_labels_training_never_saw_as_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let path = |name: &str| tmp.path().join(name);
    let (iris, model) = (path("iris.svm"), path("iris.model"));
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    let base = ["train", "--task", "multiclass", s(&iris), "-q"];
    ok(&[&base[..], &["-o", s(&model)]].concat());
    let known = json_of(&ok(&["eval", s(&model), s(&iris), "--json"]));
    assert!(known.get("unknown_labels").is_none(), "{known}");
    // Iris and two rows of classes 7 and 9: 150 known rows and 2 errors more.
    let rare = path("rare.svm");
    let extra = "7 1:0.1 2:0.2\n9 3:0.3\n";
    std::fs::write(&rare, format!("{}{extra}", maxmargin::datasets::IRIS)).unwrap();
    let out = maxmargin(&["eval", s(&model), s(&rare), "--json"]);
    assert!(out.status.success(), "{out:?}");
    let e = json_of(&String::from_utf8(out.stdout).unwrap());
    let right = known["accuracy"].as_f64().unwrap() * 150.0;
    let accuracy = e["accuracy"].as_f64().unwrap();
    assert!((accuracy - right / 152.0).abs() < 1e-12, "{e}");
    assert_eq!(e["n"], 152);
    assert_eq!(e["unknown_labels"]["count"], 2, "{e}");
    assert_eq!(e["unknown_labels"]["labels"], serde_json::json!([7.0, 9.0]));
    let nine = &e["per_class"][4];
    assert_eq!(
        (nine["class"].as_f64(), nine["support"].as_u64()),
        (Some(9.0), Some(1))
    );
    assert_eq!(nine["recall"].as_f64(), Some(0.0), "{e}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.matches("warning:").count(), 1, "{err}");
    assert!(
        err.contains("2 rows have labels") && err.contains("never saw in training (7, 9)"),
        "{err}"
    );
    let err = fails(&["eval", s(&model), s(&rare), "--lambda", "0.01"], 1);
    assert!(
        err.contains("--lambda: the objective needs every label known")
            && err.contains("2 rows with labels training never saw (7, 9)"),
        "{err}"
    );
    // Rows mostly of labels the model never saw are another task's data, refused.
    let other = path("other.svm");
    std::fs::write(&other, "1 1:1\n4 1:1\n5 1:1\n6 1:1\n").unwrap();
    let err = fails(&["eval", s(&model), s(&other)], 1);
    assert!(
        err.contains("other.svm:2:1: label: 4 is none of the 3 classes")
            && err.contains("3 of its 4 rows have labels the model never saw"),
        "{err}"
    );
    // So are rows mostly of unseen labels, however few the labels.
    std::fs::write(&other, "4 1:1\n5 1:1\n1 1:1\n").unwrap();
    let err = fails(&["eval", s(&model), s(&other)], 1);
    assert!(
        err.contains("other.svm:1: label 4: 2 of its 3 rows have labels the 3 classes"),
        "{err}"
    );
    // A chain: tag 4 is one token of three, an error of the token error.
    let (train, test, chain) = (path("train.hmm"), path("test.hmm"), path("chain.model"));
    std::fs::write(
        &train,
        "1 qid:1 1:1\n2 qid:1 2:1\n3 qid:1 3:1\n1 qid:2 1:1\n2 qid:2 2:1\n",
    )
    .unwrap();
    std::fs::write(&test, "1 qid:1 1:1\n4 qid:1 2:1\n3 qid:1 3:1\n").unwrap();
    ok(&["train", "--task", "chain", s(&train), "-o", s(&chain), "-q"]);
    let out = maxmargin(&["eval", s(&chain), s(&test), "--json"]);
    assert!(out.status.success(), "{out:?}");
    let e = json_of(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(e["unknown_labels"]["count"], 1, "{e}");
    assert_eq!(e["sequence_accuracy"], 0.0, "{e}");
    assert!(e["token_error"].as_f64().unwrap() >= 1.0 / 3.0, "{e}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("1 tokens have tags") && err.contains("(4)"),
        "{err}"
    );
    let err = fails(&["eval", s(&chain), s(&test), "--lambda", "0.01"], 1);
    assert!(err.contains("every tag known to the model"), "{err}");
    // A chain with latent states alike (it said `example 0: label 3 at position 1 is outside ...`).
    let latent = path("latent.model");
    let states = ["--latent-states", "2", "-o", s(&latent), "-q"];
    ok(&[&["train", "--task", "chain", s(&train)][..], &states[..]].concat());
    let out = maxmargin(&["eval", s(&latent), s(&test), "--json"]);
    assert!(out.status.success(), "{out:?}");
    let e = json_of(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(
        e["unknown_labels"]["labels"],
        serde_json::json!([4.0]),
        "{e}"
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("1 tokens have tags") && err.contains("(4)"),
        "{err}"
    );
    let err = fails(&["eval", s(&latent), s(&test), "--lambda", "0.01"], 1);
    assert!(err.contains("every tag known to the model"), "{err}");
    // Multilabel already counted them as misses; it warns too (its objective is over the model's labels).
    let (train, test, ml) = (path("train.ml"), path("test.ml"), path("ml.model"));
    std::fs::write(&train, "1,2 1:1\n2 2:1\n").unwrap();
    std::fs::write(&test, "1,9 1:1\n2 2:1\n").unwrap();
    ok(&[
        "train",
        "--task",
        "multilabel",
        s(&train),
        "-o",
        s(&ml),
        "-q",
    ]);
    let err = ok_stderr(&["eval", s(&ml), s(&test)]);
    assert!(
        err.contains("1 rows have labels") && err.contains("(9)"),
        "{err}"
    );
}

fn json_of(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap()
}

/// Features beyond a multilabel or chain model's are ignored by its predictions and counted in a warning,
/// as for the other tasks.
#[test]
fn multilabel_and_chain_data_with_unknown_features_are_warned_of() {
    let tmp = tempfile::tempdir().unwrap();
    let path = |name: &str| tmp.path().join(name);
    std::fs::write(path("train.svm"), "1,2 1:1\n2 2:1\n").unwrap();
    std::fs::write(path("test.svm"), "1 1:1 77:1\n").unwrap();
    std::fs::write(path("train.hmm"), "1 qid:1 1:1\n2 qid:1 2:1\n1 qid:2 1:1\n").unwrap();
    std::fs::write(path("test.hmm"), "1 qid:1 1:1 50:1\n2 qid:1 2:1 99999:3\n").unwrap();
    for (task, train, test) in [
        ("multilabel", "train.svm", "test.svm"),
        ("chain", "train.hmm", "test.hmm"),
    ] {
        let model = path(&format!("{task}.model"));
        ok(&[
            "train",
            "--task",
            task,
            s(&path(train)),
            "-o",
            s(&model),
            "-q",
        ]);
        for command in ["predict", "eval"] {
            let stderr = ok_stderr(&[command, s(&model), s(&path(test))]);
            assert!(
                stderr.contains("beyond the model's 2 features") && stderr.contains("are ignored"),
                "{task} {command}: {stderr}"
            );
        }
    }
}

/// Training data whose tags or label sets are all one trains a model that predicts it everywhere, and says
/// so (a multiclass model of one class is refused).
#[test]
fn chains_and_label_sets_of_one_output_are_warned_of() {
    let tmp = tempfile::tempdir().unwrap();
    let path = |name: &str| tmp.path().join(name);
    std::fs::write(path("one.hmm"), "1 qid:1 1:1\n1 qid:1 2:1\n1 qid:2 1:1\n").unwrap();
    std::fs::write(path("one.svm"), "1 1:1\n1 2:1\n").unwrap();
    std::fs::write(path("two.svm"), "1 1:1\n1,2 2:1\n").unwrap();
    let model = path("m.model");
    for (task, data, warned) in [
        ("chain", "one.hmm", true),
        ("multilabel", "one.svm", true),
        ("multilabel", "two.svm", false),
    ] {
        let stderr = ok_stderr(&["train", "--task", task, s(&path(data)), "-o", s(&model)]);
        assert_eq!(
            stderr.contains("nothing to tell apart"),
            warned,
            "{task} {data}: {stderr}"
        );
    }
    // A tagger names its one tag as the text does, not by number.
    std::fs::write(path("one.conll"), "a DT B-NP\nb NN B-NP\n\nc DT B-NP\n").unwrap();
    let one = path("one.conll");
    let stderr = ok_stderr(&[
        "train",
        "--task",
        "chain",
        "--format",
        "conll",
        s(&one),
        "-o",
        s(&model),
    ]);
    assert!(
        stderr.contains("one.conll is the same (B-NP): the model has nothing"),
        "{stderr}"
    );
}

/// `--blocks` with BCFW: blocks of examples stepped at once, the same model bytes on one thread or two
/// (multiclass on iris, a CoNLL tagger); refused with other solvers and at 0.
#[test]
fn bcfw_blocks_give_the_same_model_on_any_thread_count() {
    let tmp = tempfile::tempdir().unwrap();
    let iris = tmp.path().join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    let conll = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/conll2000-head/train.txt");
    let runs: [(&str, &[&str]); 2] = [
        (
            "iris",
            &["--task", "multiclass", s(&iris), "--solver", "bcfw"],
        ),
        (
            "conll",
            &[
                "--task",
                "chain",
                "--format",
                "conll",
                s(&conll),
                "--lambda",
                "0.1",
            ],
        ),
    ];
    for (name, args) in runs {
        let mut bytes = Vec::new();
        for threads in ["1", "2"] {
            let model = tmp.path().join(format!("{name}-{threads}.model"));
            let mut all = vec!["train"];
            all.extend_from_slice(args);
            all.extend(["-o", s(&model), "--blocks", "3", "--threads", threads]);
            let out = ok_stderr(&all);
            assert!(
                out.contains("stop: converged") || out.contains("stop: gap"),
                "{name}: {out}"
            );
            bytes.push(std::fs::read(&model).unwrap());
        }
        assert_eq!(bytes[0], bytes[1], "{name}");
    }
    // A checkpoint of blocks resumes with the same blocks to the bits of a run never stopped, and names its
    // kind to a run without them.
    let flags = [
        "--task",
        "multiclass",
        s(&iris),
        "--solver",
        "bcfw",
        "--blocks",
        "2",
    ];
    let run = |more: &[&str]| ok_stderr(&[&["train"][..], &flags, more].concat());
    let (stopped, ck) = (tmp.path().join("stopped"), tmp.path().join("ck"));
    run(&[
        "-o",
        s(&stopped),
        "--max-passes",
        "5",
        "--checkpoint",
        s(&ck),
    ]);
    let (resumed, whole) = (tmp.path().join("resumed"), tmp.path().join("whole"));
    run(&["-o", s(&resumed), "--resume", s(&ck)]);
    run(&["-o", s(&whole)]);
    assert_eq!(
        std::fs::read(&resumed).unwrap(),
        std::fs::read(&whole).unwrap()
    );
    let without = [&flags[..5], &["-o", "m", "--resume", s(&ck)]].concat();
    let err = fails(&[&["train"][..], &without].concat(), 1);
    assert!(err.contains("checkpoint-multiclass-bcfw-blocks2"), "{err}");
    let iris_train = ["train", "--task", "multiclass", s(&iris), "-o", "m"];
    let err = fails(&[&iris_train[..], &["--blocks", "2"]].concat(), 1);
    assert!(
        err.contains("--blocks applies to") && err.contains("dcd"),
        "{err}"
    );
    let bcfw_at_zero = ["--solver", "bcfw", "--blocks", "0"];
    let err = fails(&[&iris_train[..], &bcfw_at_zero].concat(), 1);
    assert!(err.contains("blocks"), "{err}");
}

/// Three sequences of 300 tokens: BCFW's 1,000 default passes are 3,000 block steps, and stop short (three
/// sequences of 3,000 tokens did not converge in 40,000). The warning names the 1-slack cutting planes,
/// which converge there, and a run with more examples is not told so.
#[test]
fn few_long_sequences_are_pointed_to_the_cutting_planes() {
    let tmp = tempfile::tempdir().unwrap();
    let write = |name: &str, n: usize, len: usize| {
        let mut text = String::new();
        for q in 1..=n {
            for t in 0..len {
                let tag = (t * 7 + q) % 3 + 1;
                text.push_str(&format!("{tag} qid:{q} {tag}:1 {}:0.5\n", 4 + (t % 5)));
            }
        }
        let path = tmp.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let model = tmp.path().join("m.model");
    let few = write("few.svmhmm", 3, 300);
    let says = ok_stderr(&["train", "--task", "chain", s(&few), "-o", s(&model)]);
    assert!(says.contains("not converged"), "{says}");
    assert!(
        says.contains("--solver oneslack (with 3 examples"),
        "{says}"
    );
    let converged = ok_stderr(&[
        "train",
        "--task",
        "chain",
        s(&few),
        "--solver",
        "oneslack",
        "-o",
        s(&model),
    ]);
    assert!(converged.contains("stop: converged"), "{converged}");
    let short = ok_stderr(&[
        "train",
        "--task",
        "chain",
        s(&write("many.svmhmm", 60, 15)),
        "--max-passes",
        "1",
        "-o",
        s(&model),
    ]);
    assert!(
        short.contains("not converged") && !short.contains("--solver oneslack"),
        "{short}"
    );
}
