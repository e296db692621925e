//! `predict` and `eval` on a binary model: to a file, and as text.

use super::*;

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
    // `-o -` is standard output, not a file named "-".
    let to_stdout = ok(&["predict", s(&model), s(&data), "-o", "-"]);
    assert_eq!(to_stdout, std::fs::read_to_string(&out).unwrap());
    let text = ok(&["eval", s(&model), s(&data), "--lambda", "0.01"]);
    assert!(text.contains("\n  accuracy   0."), "{text}");
    assert!(text.contains("objective  "), "{text}");
}

/// Issue 23, a first workflow: new rows have no label; `predict` scores them (a row may start with its
/// features, or with `?`), for binary and multiclass models, while `eval` still needs the labels.
#[test]
fn issue_23_rows_without_a_label_are_predicted() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let model = tmp.path().join("h.model");
    ok(&["train", s(&data), "-o", s(&model), "-q"]);
    let new = tmp.path().join("new.svm");
    std::fs::write(&new, "1:0.7 2:1 3:-0.3\n? 1:0.1\n+1 1:0.7 2:1 3:-0.3\n").unwrap();
    let out = ok(&["predict", s(&model), s(&new), "--scores"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(
        lines[0], lines[2],
        "an unlabelled row scores as its labelled copy"
    );
    let (_, iris) = iris_model(tmp.path(), "iris.model");
    let out = ok(&["predict", s(&iris), s(&new), "--json"]);
    assert_eq!(out.lines().count(), 3, "{out}");
    let err = fails(&["eval", s(&model), s(&new)], 1);
    assert!(err.contains("new.svm:1:1: label: missing label"), "{err}");
}

/// Issue 24: `train --loss logistic` is logistic regression by dual coordinate descent; `predict --probability`
/// and `eval`'s Brier score use its own probabilities (no calibration), `threshold --at P` sets a cut-off on
/// them, and it goes to LIBLINEAR as `L2R_LR_DUAL`. What it does not run in yet is refused by name.
#[test]
fn issue_24_logistic_regression_gives_its_own_probabilities() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let model = tmp.path().join("lr.model");
    let summary = ok_stderr(&["train", s(&data), "--loss", "logistic", "-o", s(&model)]);
    assert!(summary.contains("(logistic regression)"), "{summary}");
    assert!(summary.contains("stop: converged"), "{summary}");
    let out = ok(&["predict", s(&model), s(&data), "--probability", "--scores"]);
    for line in out.lines() {
        let f: Vec<f64> = line
            .split(' ')
            .skip(1)
            .map(|v| v.parse().unwrap())
            .collect();
        assert!((f[1] - 1.0 / (1.0 + (-f[0]).exp())).abs() < 1e-12, "{line}");
    }
    let text = ok(&["eval", s(&model), s(&data)]);
    assert!(
        text.contains("probabilities (the logistic model's own)"),
        "{text}"
    );
    assert!(text.contains("  brier      0."), "{text}");
    let cut = tmp.path().join("cut.model");
    let said = ok(&[
        "threshold",
        s(&model),
        s(&data),
        "--at",
        "0.7",
        "-o",
        s(&cut),
    ]);
    assert!(said.contains("probability 0.7000"), "{said}");
    let lib = tmp.path().join("lr.liblinear");
    ok(&["convert", s(&model), "--to", "liblinear", "-o", s(&lib)]);
    let text = std::fs::read_to_string(&lib).unwrap();
    assert!(text.starts_with("solver_type L2R_LR_DUAL\n"), "{text}");
    // The hinge's model still has none, and says how to get them.
    let svm = tmp.path().join("svm.model");
    ok(&["train", s(&data), "-o", s(&svm), "-q"]);
    let err = fails(&["predict", s(&svm), s(&data), "--probability"], 1);
    assert!(err.contains("--loss logistic"), "{err}");
    for (flags, says) in [
        (
            &["--solver", "pegasos"][..],
            "--loss logistic applies to --solver dcd",
        ),
        (
            &["--solver", "dcd", "--bias", "unregularized"][..],
            "not supported by dcd with the logistic loss",
        ),
        (&["--blocks", "2"][..], "one block"),
    ] {
        let mut args = vec!["train", s(&data), "--loss", "logistic", "-o", s(&svm)];
        args.extend_from_slice(flags);
        let err = fails(&args, 1);
        assert!(err.contains(says), "{flags:?}: {err}");
    }
}

/// Issue 24: one-vs-rest logistic regression for multiclass data (`--task multiclass --solver ovr --loss
/// logistic`) gives its own probabilities (each class's σ, normalized); other structured solvers refuse the loss.
#[test]
fn issue_24_one_vs_rest_logistic_regression_gives_class_probabilities() {
    let tmp = tempfile::tempdir().unwrap();
    let iris = tmp.path().join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    let model = tmp.path().join("lr.model");
    let args = [
        "train",
        s(&iris),
        "--task",
        "multiclass",
        "--solver",
        "ovr",
        "--loss",
        "logistic",
    ];
    let mut train = args.to_vec();
    train.extend(["-o", s(&model), "-q"]);
    ok(&train);
    let out = ok(&["predict", s(&model), s(&iris), "--probability"]);
    let rows: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(rows.len(), 150, "{out}");
    for row in rows {
        let p: Vec<f64> = row.split(' ').skip(1).map(|v| v.parse().unwrap()).collect();
        assert_eq!(p.len(), 3);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12, "{row}");
    }
    let err = fails(
        &[
            "train",
            s(&iris),
            "--task",
            "multiclass",
            "--loss",
            "logistic",
            "-o",
            s(&model),
        ],
        1,
    );
    assert!(err.contains("applies to one-vs-rest"), "{err}");
    // A hinge one-vs-rest model still needs a calibration.
    let svm = tmp.path().join("svm.model");
    ok(&[
        "train",
        s(&iris),
        "--task",
        "multiclass",
        "--solver",
        "ovr",
        "-o",
        s(&svm),
        "-q",
    ]);
    let err = fails(&["predict", s(&svm), s(&iris), "--probability"], 1);
    assert!(err.contains("not calibrated"), "{err}");
}
