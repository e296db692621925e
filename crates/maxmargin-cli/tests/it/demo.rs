//! `demo`: the worked examples' tables and pictures.

use super::*;

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
