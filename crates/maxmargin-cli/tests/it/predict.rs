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
