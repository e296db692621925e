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
