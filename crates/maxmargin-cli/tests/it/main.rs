//! The `maxmargin` binary, run as a user runs it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod convert;
mod cv;
mod groups;
mod hostile;
mod inputs;
mod inspect;
mod p1;
mod pictures;
mod ranks;
mod resume;
mod scores;
mod stream;
mod tagger;
mod weights;
mod worked;
mod workflow;

fn maxmargin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_maxmargin"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn ok(args: &[&str]) -> String {
    let out = maxmargin(args);
    assert!(
        out.status.success(),
        "maxmargin {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs a failing command and returns its stderr, checking the exit code and that it is one line.
fn fails(args: &[&str], code: i32) -> String {
    let out = maxmargin(args);
    assert_eq!(
        out.status.code(),
        Some(code),
        "maxmargin {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8(out.stderr).unwrap();
    if code == 1 {
        assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
        assert!(err.starts_with("error: "), "{err}");
    }
    err
}

fn shared_data() -> Option<PathBuf> {
    maxmargin::testing::shared_data(env!("CARGO_MANIFEST_DIR"))
}

fn heart(dir: &Path) -> PathBuf {
    let p = dir.join("heart.svm");
    std::fs::write(&p, maxmargin::datasets::HEART_SCALE).unwrap();
    p
}

/// Iris written to `dir`, and a multiclass model trained on it (default flags) saved as `dir/name`.
fn iris_model(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let iris = dir.join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    let model = dir.join(name);
    ok(&[
        "train",
        "--task",
        "multiclass",
        s(&iris),
        "-o",
        s(&model),
        "-q",
    ]);
    (iris, model)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn train_predict_eval_round_trip_on_every_binary_dataset() {
    let Some(data) = shared_data() else { return };
    let tmp = tempfile::tempdir().unwrap();
    for (train, test) in [
        ("a9a/a9a.gz", "a9a/a9a.t.gz"),
        ("mushrooms/mushrooms", "mushrooms/mushrooms"),
        ("phishing/phishing.gz", "phishing/phishing.gz"),
        ("heart_scale/heart_scale", "heart_scale/heart_scale"),
        (
            "breast-cancer_scale/breast-cancer_scale",
            "breast-cancer_scale/breast-cancer_scale",
        ),
        (
            "reuters_lasvm/reuters.trn.gz",
            "reuters_lasvm/reuters.tst.gz",
        ),
    ] {
        let (train, test) = (data.join(train), data.join(test));
        let model = tmp.path().join("m.model");
        ok(&[
            "train",
            s(&train),
            "-o",
            s(&model),
            "--epochs",
            "3",
            "--quiet",
        ]);
        let preds = ok(&["predict", s(&model), s(&test)]);
        let report: serde_json::Value = serde_json::from_str(&ok(&[
            "eval",
            s(&model),
            s(&test),
            "--json",
            "--lambda",
            "1e-4",
        ]))
        .unwrap();
        let n = report["n"].as_u64().unwrap() as usize;
        assert_eq!(preds.lines().count(), n, "{}", train.display());
        // The predictions are in the data's own labels, and agree with the reported accuracy.
        let truth = maxmargin::io::libsvm::read(&test).unwrap().labels;
        let correct = preds
            .lines()
            .zip(&truth)
            .filter(|(p, t)| p.parse::<f64>().unwrap() == **t)
            .count();
        assert_eq!(correct as u64, report["correct"].as_u64().unwrap());
        let acc = report["accuracy"].as_f64().unwrap();
        assert!(acc > 0.75, "{}: accuracy {acc}", train.display());
        assert!(report["objective"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn json_model_has_the_documented_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let model = tmp.path().join("m.json");
    ok(&["train", s(&data), "-o", s(&model), "-c", "1", "--quiet"]);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    assert_eq!(v["kind"], "binary");
    assert_eq!(v["w"].as_array().unwrap().len(), 13);
    assert!(v["b"].is_f64());
    assert_eq!(v["labels"], serde_json::json!([-1.0, 1.0]));
    assert_eq!(v["n_features"], 13);
    assert_eq!(v["seed"], 0);
    assert!((v["lambda"].as_f64().unwrap() - 1.0 / 270.0).abs() < 1e-15);
    assert_eq!(v["params"]["regularization"]["c_sum"], 1.0);
}

#[test]
fn same_flags_same_model_bytes_and_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let (a, b) = (tmp.path().join("a.model"), tmp.path().join("b.model"));
    let trace = tmp.path().join("trace.jsonl");
    let flags = [
        "--solver",
        "pegasos",
        "--sampling",
        "uniform",
        "--seed",
        "9",
        "--batch-size",
        "4",
        "--epochs",
        "6",
        "--quiet",
    ];
    ok(&[
        &["train", s(&data), "-o", s(&a), "--trace", s(&trace)][..],
        &flags,
    ]
    .concat());
    ok(&[&["train", s(&data), "-o", s(&b)][..], &flags].concat());
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // One evaluation per pass (a batch of 4 does not divide 270, so passes end just past each integer),
    // then the summary.
    assert_eq!(lines.len(), 7, "six evaluations and a summary");
    let epochs: Vec<f64> = lines[..6]
        .iter()
        .map(|l| l["epoch"].as_f64().unwrap())
        .collect();
    for (k, e) in epochs.iter().enumerate() {
        assert!(
            *e >= (k + 1) as f64 && *e < (k + 1) as f64 + 4.0 / 270.0,
            "{epochs:?}"
        );
    }
    assert!(
        lines[0]["objective"].is_f64()
            && lines[0]["seconds"].is_f64()
            && lines[0]["iteration"].is_u64()
    );
    assert_eq!(lines[6]["stop"], "max_epochs");
}

#[test]
fn predict_to_file_and_eval_text() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let model = tmp.path().join("m.model");
    ok(&[
        "train",
        s(&data),
        "-o",
        s(&model),
        "--solver",
        "subgradient",
        "--iterations",
        "50",
        "--quiet",
    ]);
    let out = tmp.path().join("preds.txt");
    assert_eq!(ok(&["predict", s(&model), s(&data), "-o", s(&out)]), "");
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 270);
    let text = ok(&["eval", s(&model), s(&data), "--lambda", "0.01"]);
    assert!(text.contains("\n  accuracy   0."), "{text}");
    assert!(text.contains("objective  "), "{text}");
}

#[test]
fn bad_input_is_one_clear_line() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.svm");
    std::fs::write(&bad, "+1 1:0.5\n-1 2:abc\n").unwrap();
    let model = tmp.path().join("m.model");
    let err = fails(&["train", s(&bad), "-o", s(&model)], 1);
    assert!(
        err.contains("bad.svm:2:4: feature value: \"abc\" is not a number"),
        "{err}"
    );
    assert!(!model.exists(), "no model is written on error");

    let one = tmp.path().join("one.svm");
    std::fs::write(&one, "1 1:1\n1 2:1\n").unwrap();
    let err = fails(&["train", s(&one), "-o", s(&model)], 1);
    assert!(err.contains("exactly two classes"), "{err}");

    let err = fails(&["train", "/no/such/file.svm", "-o", s(&model)], 1);
    assert!(err.contains("/no/such/file.svm"), "{err}");

    let data = heart(tmp.path());
    let err = fails(&["train", s(&data), "-o", s(&model), "--lambda", "0"], 1);
    assert!(
        err.contains("lambda must be positive and finite, got 0"),
        "{err}"
    );
    let err = fails(&["train", s(&data), "-o", s(&model), "--step", "fast"], 2);
    assert!(err.contains("step rule"), "{err}");
    fails(
        &[
            "train",
            s(&data),
            "-o",
            s(&model),
            "--lambda",
            "1",
            "-c",
            "1",
        ],
        2,
    );

    // A model that is not one, and a truncated one.
    let err = fails(&["predict", s(&bad), s(&data)], 1);
    assert!(err.contains("not a maxmargin model file"), "{err}");
    ok(&["train", s(&data), "-o", s(&model), "--quiet"]);
    let bytes = std::fs::read(&model).unwrap();
    std::fs::write(&model, &bytes[..bytes.len() / 2]).unwrap();
    let err = fails(&["eval", s(&model), s(&data)], 1);
    assert!(err.contains("truncated"), "{err}");

    // Training over an existing model with bad data leaves the old model whole.
    std::fs::write(&model, &bytes).unwrap();
    fails(&["train", s(&bad), "-o", s(&model)], 1);
    assert_eq!(std::fs::read(&model).unwrap(), bytes);
}

#[test]
fn class_weights_from_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let model = tmp.path().join("w.json");
    ok(&[
        "train",
        s(&data),
        "-o",
        s(&model),
        "--solver",
        "dcd",
        "-w",
        "1=4",
        "-w",
        "-1=0.5",
        "--quiet",
    ]);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    assert_eq!(
        v["params"]["class_weights"],
        serde_json::json!([[1.0, 4.0], [-1.0, 0.5]])
    );
    let err = fails(&["train", s(&data), "-o", s(&model), "-w", "1=-2"], 2);
    assert!(err.contains("weight must be finite and >= 0"), "{err}");
}

#[test]
fn cv_reports_folds() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let out: serde_json::Value = serde_json::from_str(&ok(&[
        "cv",
        s(&data),
        "-k",
        "3",
        "--solver",
        "dcd",
        "-c",
        "1",
        "--json",
    ]))
    .unwrap();
    assert_eq!(out["fold_accuracy"].as_array().unwrap().len(), 3);
    assert!(out["accuracy"].as_f64().unwrap() > 0.75, "{out}");
    let err = fails(&["cv", s(&data), "-k", "1"], 1);
    assert!(err.contains("folds"), "{err}");
    // Train's flags apply to cv too, and a path reports every C.
    let path: serde_json::Value = serde_json::from_str(&ok(&[
        "cv",
        s(&data),
        "-k",
        "3",
        "--solver",
        "dcd",
        "--epsilon",
        "0.01",
        "--c-path",
        "0.01,0.1,1",
        "--threads",
        "1",
        "--json",
    ]))
    .unwrap();
    let points = path.as_array().unwrap();
    assert_eq!(points.len(), 3);
    assert_eq!(points[2]["c"], 1.0);
    assert_eq!(
        points[2]["cv"]["fold_accuracy"].as_array().unwrap().len(),
        3
    );
    let err = fails(&["cv", s(&data), "--solver", "dcd", "--c-path", "1,0.1"], 1);
    assert!(err.contains("increasing"), "{err}");
    // cv trains binary models: it offers no --task (a usage error, status 2).
    let err = fails(&["cv", s(&data), "--task", "chain"], 2);
    assert!(err.contains("--task"), "{err}");
    let err = fails(&["cv", s(&data), "--resume", "x.ckpt"], 1);
    assert!(err.contains("--resume does not apply to cv"), "{err}");
}

#[test]
fn binary_dcd_warm_starts_from_a_checkpoint_at_another_c() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let (small, big, cold) = (
        tmp.path().join("small.json"),
        tmp.path().join("big.json"),
        tmp.path().join("cold.json"),
    );
    let dual = tmp.path().join("small.dual");
    let train = |out: &Path, c: &str, extra: &[&str]| {
        let mut args = vec![
            "train",
            s(&data),
            "-o",
            s(out),
            "--solver",
            "dcd",
            "-c",
            c,
            "--epsilon",
            "1e-6",
            "--quiet",
        ];
        args.extend_from_slice(extra);
        ok(&args);
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
        v
    };
    train(&small, "0.1", &["--checkpoint", s(&dual)]);
    let warm = train(&big, "1", &["--warm-start", s(&dual)]);
    let cold = train(&cold, "1", &[]);
    let (ow, oc) = (
        warm["training"]["objective"].as_f64().unwrap(),
        cold["training"]["objective"].as_f64().unwrap(),
    );
    assert!((ow - oc).abs() < 1e-6 * oc, "warm {ow} cold {oc}");
    // From a model instead of duals: its margins give the starting duals; same optimum.
    let from_model = tmp.path().join("from_model.json");
    let fm = train(&from_model, "1", &["--warm-start", s(&small)]);
    let om = fm["training"]["objective"].as_f64().unwrap();
    assert!((om - oc).abs() < 1e-6 * oc, "from model {om} cold {oc}");
    // Duals of other data, other solvers: one clear line each.
    let iris = tmp.path().join("iris.svm");
    let other = tmp.path().join("other.json");
    let err = fails(
        &[
            "train",
            s(&data),
            "-o",
            s(&other),
            "--solver",
            "pegasos",
            "--warm-start",
            s(&dual),
        ],
        1,
    );
    assert!(err.contains("--solver dcd"), "{err}");
    std::fs::write(&iris, "1 1:1\n-1 1:-1\n").unwrap();
    let err = fails(
        &[
            "train",
            s(&iris),
            "-o",
            s(&other),
            "--solver",
            "dcd",
            "--warm-start",
            s(&dual),
        ],
        1,
    );
    assert!(
        err.contains("duals for 270 examples; the training data has 2"),
        "{err}"
    );
}

#[test]
fn binary_dcd_blocks_and_gap_stop() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let mut weights = Vec::new();
    for threads in ["1", "2"] {
        let model = tmp.path().join(format!("blocks-{threads}.json"));
        ok(&[
            "train",
            s(&data),
            "-o",
            s(&model),
            "--solver",
            "dcd",
            "-c",
            "1",
            "--blocks",
            "3",
            "--threads",
            threads,
            "--quiet",
        ]);
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
        weights.push(v["w"].clone());
    }
    assert_eq!(weights[0], weights[1]);
    let model = tmp.path().join("gap.json");
    ok(&[
        "train",
        s(&data),
        "-o",
        s(&model),
        "--solver",
        "dcd",
        "--epsilon",
        "1e-9",
        "--gap",
        "1e-3",
        "--quiet",
    ]);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    assert_eq!(v["training"]["stop"], "gap");
}

#[test]
fn demo_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let pictures = tmp.path().join("pictures");
    let out = ok(&["demo", "--out", s(&pictures)]);
    assert!(out.contains("(1/2, 1/2)"), "{out}");
    assert!(out.contains("loaded back identical"), "{out}");
    // Every table says what its columns mean.
    for words in [
        "subdifferential",
        "Case \"violated\" (margin < 1)",
        "Not a descent method",
        "<- loss-augmented inference",
    ] {
        assert!(out.contains(words), "the demo lacks {words:?}");
    }
    // The pictures it names are there, each a whole SVG with its curves or points.
    for (file, has) in [
        ("heart-training.svg", "pegasos"),
        ("iris-training.svg", "oneslack"),
        ("losses.svg", "hinge"),
        ("boundary.svg", "margins"),
    ] {
        assert!(out.contains(file), "{out}");
        let svg = std::fs::read_to_string(pictures.join(file)).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
            "{file}"
        );
        assert!(svg.contains(has), "{file} lacks {has}");
    }
    // The boundary picture's command, as printed, draws it again from the files left beside it.
    let again = tmp.path().join("again.svg");
    ok(&[
        "plot-boundary",
        s(&pictures.join("iris-petals.model")),
        s(&pictures.join("iris-petals.svm")),
        "-o",
        s(&again),
    ]);
    assert_eq!(
        std::fs::read(&again).unwrap(),
        std::fs::read(pictures.join("boundary.svg")).unwrap()
    );
}

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

/// Runs a command that succeeds and returns its stderr.
fn ok_stderr(args: &[&str]) -> String {
    let out = maxmargin(args);
    assert!(
        out.status.success(),
        "maxmargin {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn a_run_short_of_its_optimum_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let model = tmp.path().join("m.json");
    let trace = tmp.path().join("t.jsonl");
    let args = [
        "train",
        s(&data),
        "-o",
        s(&model),
        "--solver",
        "pegasos",
        "--epochs",
        "2",
        "--quiet",
        "--trace",
        s(&trace),
    ];
    // One warning line, also under --quiet, and exit 0.
    let err = ok_stderr(&args);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("warning: pegasos stopped on its pass budget") && err.contains("gap"),
        "{err}"
    );
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    assert_eq!(m["training"]["converged"], false);
    assert!(m["training"]["gap"].as_f64().unwrap() > 0.0);
    let summary: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&trace)
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(summary["converged"], false);
    let eval = ok(&["eval", s(&model), s(&data), "--json"]);
    let e: serde_json::Value = serde_json::from_str(&eval).unwrap();
    assert_eq!(e["converged"], false);
    // --require-convergence: status 3, and the model is still written.
    std::fs::remove_file(&model).unwrap();
    let out = maxmargin(&[&args[..], &["--require-convergence"]].concat());
    assert_eq!(out.status.code(), Some(3));
    assert!(model.exists());
    // The default (dcd) converges: no warning, status 0 even when required.
    let err = ok_stderr(&[
        "train",
        s(&data),
        "-o",
        s(&model),
        "--quiet",
        "--require-convergence",
    ]);
    assert!(err.is_empty(), "{err}");
}

#[test]
fn every_flag_is_honoured_or_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let iris = tmp.path().join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    let model = tmp.path().join("m.json");
    let o = s(&model);
    for (flags, needle) in [
        (
            &["--projection"][..],
            "--projection applies to --solver pegasos",
        ),
        (
            &["--batch-size", "4"],
            "--batch-size applies to --solver pegasos",
        ),
        (
            &["--step", "pegasos"],
            "--step applies to --solver pegasos or subgradient",
        ),
        (
            &["--solver", "pegasos", "--epsilon", "0.1"],
            "--epsilon applies to --solver dcd",
        ),
        (
            &["--solver", "subgradient", "--sampling", "cyclic"],
            "--sampling applies to --solver pegasos",
        ),
        (&["--threads", "100000"], "threads"),
    ] {
        let err = fails(&[&["train", s(&data), "-o", o][..], flags].concat(), 1);
        assert!(err.contains(needle), "{flags:?}: {err}");
    }
    let task = |t: &'static str, flags: &[&'static str]| -> Vec<String> {
        let mut v: Vec<String> = ["train", "--task", t, s(&iris), "-o", o]
            .iter()
            .map(|x| x.to_string())
            .collect();
        v.extend(flags.iter().map(|x| x.to_string()));
        v
    };
    for (t, flags, needle) in [
        (
            "multiclass",
            &["--bias", "unregularized"][..],
            "--task multiclass takes none or feature",
        ),
        (
            "multiclass",
            &["--sampling", "cyclic"],
            "not to --task multiclass",
        ),
        (
            "multiclass",
            &["--solver", "bcfw", "-w", "1=2"],
            "not to --task multiclass with --solver bcfw",
        ),
        ("multilabel", &["-w", "1=2"], "not to --task multilabel"),
        ("chain", &["--loss", "hinge"], "not to --task chain"),
    ] {
        let args = task(t, flags);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let err = fails(&args, 1);
        assert!(err.contains(needle), "{flags:?}: {err}");
    }
    // Honoured: multiclass without a bias, with class weights, and scaled.
    let args = task(
        "multiclass",
        &["--bias", "none", "-w", "1=3", "--scale", "maxabs", "-q"],
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(&args);
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    assert_eq!(m["params"]["bias"], false);
    assert_eq!(m["params"]["class_weights"][0][1], 3.0);
    assert_eq!(m["params"]["scale"], "max_abs");
    assert!(m["scaler"]["factor"].is_array());
    assert_eq!(m["w"].as_array().unwrap().len(), 3 * 4, "no bias weights");
    let acc: serde_json::Value =
        serde_json::from_str(&ok(&["eval", o, s(&iris), "--json"])).unwrap();
    assert!(acc["accuracy"].as_f64().unwrap() > 0.75, "{acc}");
    // Chains without a bias.
    let seq = tmp.path().join("seq.svmhmm");
    std::fs::write(
        &seq,
        "1 qid:1 1:1\n2 qid:1 2:1\n1 qid:2 1:1\n2 qid:2 2:1 3:0.5\n",
    )
    .unwrap();
    ok(&[
        "train",
        "--task",
        "chain",
        s(&seq),
        "-o",
        o,
        "--bias",
        "none",
        "-q",
    ]);
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    assert_eq!(m["params"]["bias"], false);
    let predicted = ok(&["predict", o, s(&seq)]);
    assert_eq!(predicted.lines().collect::<Vec<_>>(), ["1", "2", "1", "2"]);
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

/// Model files do not depend on --threads (the count is not stored), for binary and structured tasks.
#[test]
fn model_bytes_do_not_depend_on_threads() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let iris = tmp.path().join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    for (task, file) in [("binary", &data), ("multiclass", &iris)] {
        let bytes: Vec<Vec<u8>> = ["1", "2"]
            .iter()
            .map(|t| {
                let m = tmp.path().join(format!("{task}{t}.model"));
                ok(&[
                    "train",
                    "--task",
                    task,
                    s(file),
                    "-o",
                    s(&m),
                    "--threads",
                    t,
                    "-q",
                ]);
                std::fs::read(&m).unwrap()
            })
            .collect();
        assert_eq!(bytes[0], bytes[1], "{task}");
    }
}

/// One large index, label or tag is a clear error before anything is allocated (one `1000000000:1` made the
/// binary trainer take 23 GB); labels `-0` and `0` are one class; `--threads` has a bound.
#[test]
fn sizes_follow_the_data() {
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("m.model");
    let o = s(&model);
    let file = |name: &str, text: &str| {
        let p = tmp.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let big = file("big.svm", "-1 1000000000:1\n+1 1:1\n");
    let huge = file("huge.svm", "-1 4000000000:1\n+1 1:1\n2 2:1\n");
    let tags = file("tags.svmhmm", "1 qid:1 1:1\n20000 qid:1 2:1\n");
    let labels = file("labels.svm", "4000000000 1:1\n1 2:1\n");
    let regression: String = (0..400)
        .map(|i| format!("{:.3} 1:{} 2:{}\n", f64::from(i) * 0.37, i % 7, i % 3))
        .collect();
    let regression = file("reg.svm", &regression);
    for (args, needle) in [
        (
            vec!["train", s(&big), "-o", o],
            "feature index is far beyond",
        ),
        (
            vec!["train", "--task", "multiclass", s(&huge), "-o", o],
            "feature index is far beyond",
        ),
        (
            vec!["train", "--task", "chain", s(&tags), "-o", o],
            "tag number is far beyond",
        ),
        (
            vec!["train", "--task", "multilabel", s(&labels), "-o", o],
            "label number is far beyond",
        ),
        (
            vec!["train", "--task", "multiclass", s(&regression), "-o", o],
            "regression",
        ),
        (
            vec!["train", s(&big), "-o", o, "--threads", "100000"],
            "threads",
        ),
    ] {
        let err = fails(&args, 1);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    assert!(!model.exists());
    let zeros = file("zeros.svm", "-0 1:1\n0 1:2\n1 2:1\n1 2:2\n");
    ok(&["train", "--task", "multiclass", s(&zeros), "-o", o, "-q"]);
}

/// Output errors are errors, never panics: a full device is one `error:` line and status 1, a closed pipe
/// ends `predict` and `eval` quietly with status 0, a full standard error does not stop training.
#[test]
fn output_errors_are_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let model = tmp.path().join("m.model");
    ok(&["train", s(&data), "-o", s(&model), "-q"]);
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    for args in [
        vec!["eval", s(&model), s(&data)],
        vec!["eval", s(&model), s(&data), "--json"],
        vec!["cv", s(&data)],
        vec!["demo", "--out", s(&tmp.path().join("demo"))],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_maxmargin"))
            .args(&args)
            .stdout(full())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.starts_with("error: writing to standard output"),
            "{err}"
        );
    }
    let out = Command::new(env!("CARGO_BIN_EXE_maxmargin"))
        .args(["train", s(&data), "-o", s(&model), "--solver", "pegasos"])
        .stderr(full())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    // A reader that goes away after one line.
    let big = tmp.path().join("big.svm");
    std::fs::write(&big, maxmargin::datasets::HEART_SCALE.repeat(50)).unwrap();
    for sub in ["predict", "eval"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_maxmargin"))
            .args([sub, s(&model), s(&big)])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{sub}");
        assert!(
            out.stderr.is_empty(),
            "{sub}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Writing never destroys what stands at the path: a device or directory is refused, a symlink is written
/// through to its target, a missing directory is named; files follow the umask.
#[test]
fn writes_that_never_destroy() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let err = fails(&["train", s(&data), "-o", "/dev/null", "-q"], 1);
    assert!(err.contains("/dev/null: not a regular file"), "{err}");
    let err = fails(&["train", s(&data), "-o", s(tmp.path()), "-q"], 1);
    assert!(err.contains("not a regular file"), "{err}");
    let target = tmp.path().join("target.model");
    let link = tmp.path().join("link.model");
    std::fs::write(&target, "old").unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    ok(&["train", s(&data), "-o", s(&link), "-q"]);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(maxmargin::LinearModel::load(&target).is_ok());
    let missing = tmp.path().join("no/such/dir/m.model");
    let err = fails(&["train", s(&data), "-o", s(&missing), "-q"], 1);
    assert!(
        err.contains("its directory")
            && err.contains("no/such/dir does not exist")
            && !err.contains(".maxmargin-"),
        "{err}"
    );
    // The error of a missing input names it once.
    let err = fails(&["train", "/no/such.svm", "-o", s(&target)], 1);
    assert_eq!(err.matches("No such file").count(), 1, "{err}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
    let umask = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| {
            l.strip_prefix("Umask:")
                .map(|v| u32::from_str_radix(v.trim(), 8).unwrap())
        })
        .unwrap();
    assert_eq!(mode, 0o666 & !umask);
}

/// Reading is linear in the input whatever the line length, a line longer than 64 MiB is an error naming it,
/// a bad token is quoted in at most 80 characters, and a gzip trailer's claimed size is not trusted.
#[test]
fn long_lines_and_lying_trailers() {
    use std::io::Write as _;
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("m.model");
    // One line of 200,000 features (2.4 MB) and a short one: quick, and trains.
    let wide = tmp.path().join("wide.svm");
    let mut text = String::from("+1");
    for j in 1..=200_000 {
        text.push_str(&format!(" {j}:0.5"));
    }
    text.push_str("\n-1 1:1\n");
    std::fs::write(&wide, text).unwrap();
    let start = std::time::Instant::now();
    ok(&["train", s(&wide), "-o", s(&model), "-q"]);
    assert!(start.elapsed().as_secs_f64() < 5.0, "{:?}", start.elapsed());
    // 70 MB without a line end, gzipped: refused at 64 MiB, quickly.
    let zeros = tmp.path().join("zeros.gz");
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&zeros).unwrap(),
        flate2::Compression::fast(),
    );
    let block = vec![b'0'; 1 << 20];
    for _ in 0..70 {
        gz.write_all(&block).unwrap();
    }
    gz.finish().unwrap();
    for task in ["binary", "multiclass", "multilabel", "chain"] {
        let err = fails(&["train", s(&zeros), "--task", task, "-o", s(&model)], 1);
        assert!(
            err.contains("zeros.gz:1:1: line: longer than 64 MiB"),
            "{task}: {err}"
        );
    }
    // A 10 MB bad token is quoted in 80 characters.
    let bad = tmp.path().join("bad.svm");
    std::fs::write(&bad, format!("+1 1:{}\n", "x".repeat(10 << 20))).unwrap();
    let err = fails(&["train", s(&bad), "-o", s(&model)], 1);
    assert!(err.len() < 400, "{} bytes", err.len());
    // A tiny gzip file whose trailer claims 4 GB.
    let liar = tmp.path().join("liar.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(maxmargin::datasets::HEART_SCALE.as_bytes())
        .unwrap();
    let mut bytes = gz.finish().unwrap();
    let n = bytes.len();
    bytes[n - 4..].copy_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(&liar, bytes).unwrap();
    let out = maxmargin(&["train", s(&liar), "-o", s(&model), "-q"]);
    // The stream's own size check may reject it; either way no gigabytes and no panic.
    assert!(matches!(out.status.code(), Some(0) | Some(1)), "{out:?}");
}

/// A crafted JSON model whose label count wraps around the size check is a clear error, not a panic.
#[test]
fn crafted_model_sizes_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (iris, model) = iris_model(tmp.path(), "m.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    m["n_labels"] = serde_json::json!(9_223_372_036_854_775_808u64);
    std::fs::write(&model, m.to_string()).unwrap();
    for cmd in ["predict", "eval"] {
        let err = fails(&[cmd, s(&model), s(&iris)], 1);
        assert!(err.contains("checksum does not match"), "{err}");
    }
    // With the checksum made to match (format 2's rule: sorted keys, which a forger can recompute from the
    // JSON alone), the sizes themselves are checked.
    m["format_version"] = serde_json::json!(2);
    let mut payload = m.as_object().unwrap().clone();
    for k in [
        "format",
        "format_version",
        "kind",
        "crate_version",
        "checksum",
    ] {
        payload.remove(k);
    }
    let crc = crc32fast::hash(&serde_json::to_vec(&payload).unwrap());
    m["checksum"] = serde_json::json!(crc);
    std::fs::write(&model, m.to_string()).unwrap();
    for cmd in ["predict", "eval"] {
        let err = fails(&[cmd, s(&model), s(&iris)], 1);
        assert!(err.contains("inconsistent multiclass model"), "{err}");
    }
}
