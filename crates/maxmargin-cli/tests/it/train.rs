//! `train` on binary data: every shipped dataset round-trips, JSON keys, the same flags give the same bytes
//! on any thread count, class weights, warm starts, blocks, the warning of a run short of its optimum, every
//! flag honoured or refused, and sizes that follow the data.

use super::*;

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
    // Prices in tenths: 60 distinct over 300 rows (five each), most with a fraction.
    let prices: String = (0..300)
        .map(|i| format!("{:.1} 1:{}\n", 20.0 + f64::from(i % 60) * 0.3, i % 7))
        .collect();
    let prices = file("prices.svm", &prices);
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
            vec!["train", "--task", "multiclass", s(&prices), "-o", o],
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
    // The refusal names the line whose index asked for the width.
    let err = fails(&["train", s(&big), "-o", o], 1);
    assert!(err.contains("index in line 1 of"), "{err}");
    let zeros = file("zeros.svm", "-0 1:1\n0 1:2\n1 2:1\n1 2:2\n");
    ok(&["train", "--task", "multiclass", s(&zeros), "-o", o, "-q"]);
    // Whole-number labels are classes however many: 60 classes of one or two rows each train (few-shot data).
    let few: String = (0..90)
        .map(|i| format!("{} {}:1\n", i % 60, i % 60 + 1))
        .collect();
    ok(&[
        "train",
        "--task",
        "multiclass",
        s(&file("few.svm", &few)),
        "-o",
        o,
        "-q",
    ]);
}

/// Values whose squares overflow a float: DCD stalled at w = 0 (a model predicting one class, "converged by
/// the solver's rule") or saved an objective of 5.8e306 printed in 300 digits. Refused by line unless scaled.
#[test]
fn values_whose_squares_overflow_are_refused_by_line_unless_scaled() {
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("m.model");
    let o = s(&model);
    let data = tmp.path().join("huge.svm");
    let rows: String = (0..20)
        .map(|i| {
            format!(
                "{} 1:{} 2:1\n",
                if i % 2 == 0 { "+1" } else { "-1" },
                f64::from(i) - 9.5
            )
        })
        .collect();
    let text = format!("# values near the largest float\n{rows}+1 1:1e200 2:1\n");
    std::fs::write(&data, &text).unwrap();
    // The same rows with label sets {0} and {1}.
    let sets = tmp.path().join("huge.ml");
    std::fs::write(&sets, text.replace("+1 ", "0 ").replace("-1 ", "1 ")).unwrap();
    for (task, data) in [
        ("binary", &data),
        ("multiclass", &data),
        ("multilabel", &sets),
    ] {
        let err = fails(&["train", "--task", task, s(data), "-o", o], 1);
        assert!(err.contains("overflow a 64-bit float"), "{task}: {err}");
        assert!(
            err.contains("|x| up to 1.000e200 at line 22 of"),
            "{task}: {err}"
        );
        assert!(!model.exists(), "{task}");
    }
    ok(&["train", s(&data), "--scale", "maxabs", "-o", o, "-q"]);
    // Chains and graphs name the position or node (they saved an objective of 1.7e299, or SSG failed
    // naming no file).
    let seq = tmp.path().join("huge.dat");
    std::fs::write(
        &seq,
        "1 qid:1 1:1\n2 qid:1 2:1\n2 qid:2 1:1e300\n1 qid:2 2:1\n",
    )
    .unwrap();
    let graph = tmp.path().join("huge.jsonl");
    let g =
        |v: &str| format!("{{\"features\":[[1,0],[0,{v}]],\"edges\":[[0,1]],\"labels\":[0,1]}}\n");
    std::fs::write(&graph, g("1") + &g("1e300")).unwrap();
    for (task, data, at) in [
        ("chain", &seq, "at position 1 of sequence qid:2 of"),
        ("graph", &graph, "at node 1 of the graph on line 2 of"),
    ] {
        for solver in ["bcfw", "ssg"] {
            let err = fails(
                &[
                    "train",
                    "--task",
                    task,
                    s(data),
                    "-o",
                    o,
                    "--solver",
                    solver,
                ],
                1,
            );
            assert!(
                err.contains(at) && err.contains("1.000e300"),
                "{task} {solver}: {err}"
            );
        }
    }
}

/// A negative value is the flag's value, refused by its range check naming the flag (clap took `-1` for an
/// unknown flag).
#[test]
fn negative_values_are_refused_by_their_flags_range() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let model = tmp.path().join("m.model");
    for (flag, says) in [
        ("-c", "C must be positive"),
        ("--epsilon", "epsilon must be positive"),
        ("--seconds", "seconds must be positive"),
    ] {
        let stderr = fails(&["train", s(&data), flag, "-1", "-o", s(&model)], 1);
        assert!(stderr.contains(says), "{flag}: {stderr}");
    }
    // The gap's range is the parser's (a usage error): at least 0 and below 1.
    let stderr = fails(&["train", s(&data), "--gap", "-1", "-o", s(&model)], 2);
    assert!(stderr.contains("invalid value '-1' for '--gap"), "{stderr}");
}
