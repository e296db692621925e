//! Models of format 3 (main at eb96265, before format 4 added kernels) load and predict the same bits: every
//! kind, in both encodings (`tests/data/format3`, with the predictions the format-3 command made of them);
//! and binary models of format 4 (main at b945d0a, before format 5 added approximated kernels), in
//! `tests/data/format4`, and format 5's in `tests/data/format5`.

use super::*;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/format3")
        .join(name)
}

fn fixture4(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/format4")
        .join(name)
}

/// Predicts with `model` on `data` and checks the bits against `expected`; then saves it again as this
/// build's format (JSON, by `convert`) and checks that copy predicts the same.
fn same_bits_and_saved_again(
    model: &Path,
    data: &Path,
    flags: &[&str],
    expected: &Path,
    dir: &Path,
) {
    let mut args = vec!["predict", s(model), s(data)];
    args.extend_from_slice(flags);
    let kept = std::fs::read_to_string(expected).unwrap();
    assert_eq!(ok(&args), kept, "{model:?} {flags:?}");
    let again = dir.join("again.json");
    ok(&["convert", s(model), "--to", "json", "-o", s(&again)]);
    let text = std::fs::read_to_string(&again).unwrap();
    let now = maxmargin::io::model_file::FORMAT_VERSION;
    assert!(
        text.contains(&format!("\"format_version\": {now}")),
        "{model:?}"
    );
    let mut args = vec!["predict", s(&again), s(data)];
    args.extend_from_slice(flags);
    assert_eq!(ok(&args), kept, "{model:?} saved again");
}

#[test]
fn format_4_models_predict_the_same_bits() {
    let tmp = tempfile::tempdir().unwrap();
    let heart = heart(tmp.path());
    let iris = tmp.path().join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    let p = ["--scores", "--probability"];
    let runs: [(&str, &[&str], &str); 7] = [
        ("heart.model", &["--scores"], "heart.model.predictions"),
        ("heart.cal.model", &p, "heart.cal.model.probabilities"),
        (
            "heart.decision.model",
            &p,
            "heart.decision.model.probabilities",
        ),
        (
            "heart.logistic.json",
            &["--scores"],
            "heart.logistic.json.predictions",
        ),
        (
            "heart.logistic.json",
            &p,
            "heart.logistic.json.probabilities",
        ),
        (
            "heart.rbf.model",
            &["--scores"],
            "heart.rbf.model.predictions",
        ),
        ("heart.rbf.iso.json", &p, "heart.rbf.iso.json.probabilities"),
    ];
    for (model, flags, expected) in runs {
        same_bits_and_saved_again(
            &fixture4(model),
            &heart,
            flags,
            &fixture4(expected),
            tmp.path(),
        );
    }
}

fn fixture5(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/format5")
        .join(name)
}

#[test]
fn format_5_models_of_every_kind_predict_the_same_bits() {
    let tmp = tempfile::tempdir().unwrap();
    let heart = heart(tmp.path());
    let iris = tmp.path().join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    let p1 = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/p1");
    let (scores, both, probability) = (
        &["--scores"][..],
        &["--scores", "--probability"][..],
        &["--probability"][..],
    );
    let runs: [(&str, &Path, &[&str], &str); 9] = [
        ("heart.model", &heart, scores, "heart.model.predictions"),
        (
            "heart.cal.model",
            &heart,
            both,
            "heart.cal.model.probabilities",
        ),
        (
            "heart.decision.model",
            &heart,
            both,
            "heart.decision.model.probabilities",
        ),
        (
            "heart.nystroem.model",
            &heart,
            scores,
            "heart.nystroem.model.predictions",
        ),
        (
            "heart.rff.json",
            &heart,
            scores,
            "heart.rff.json.predictions",
        ),
        ("iris.model", &iris, scores, "iris.model.predictions"),
        (
            "iris.cal.model",
            &iris,
            probability,
            "iris.cal.model.probabilities",
        ),
        (
            "iris.ovo.model",
            &iris,
            scores,
            "iris.ovo.model.predictions",
        ),
        (
            "iris.softmax.json",
            &iris,
            probability,
            "iris.softmax.json.probabilities",
        ),
    ];
    for (model, data, flags, expected) in runs {
        same_bits_and_saved_again(
            &fixture5(model),
            data,
            flags,
            &fixture5(expected),
            tmp.path(),
        );
    }
    let structured: [(&str, PathBuf, &[&str]); 3] = [
        ("multilabel.model", p1.join("iris-multilabel.svm"), &[]),
        ("chain.model", p1.join("iris-chain.svmhmm"), &[]),
        (
            "tagger.model",
            fixture5("small.conll"),
            &["--format", "conll"],
        ),
    ];
    for (model, data, flags) in structured {
        let path = fixture5(model);
        let mut args = vec!["predict", s(&path), s(&data)];
        args.extend_from_slice(flags);
        let kept = std::fs::read_to_string(fixture5(&format!("{model}.predictions"))).unwrap();
        assert_eq!(ok(&args), kept, "{model}");
    }
}

#[test]
fn format_3_models_of_every_kind_predict_the_same_bits() {
    let tmp = tempfile::tempdir().unwrap();
    let heart = heart(tmp.path());
    let iris = tmp.path().join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    let runs: [(&str, &Path, &[&str], &str); 10] = [
        (
            "heart.model",
            &heart,
            &["--scores"],
            "heart.model.predictions",
        ),
        (
            "heart.cal.model",
            &heart,
            &["--scores", "--probability"],
            "heart.cal.model.predictions",
        ),
        (
            "heart.decision.model",
            &heart,
            &["--scores", "--probability"],
            "heart.decision.model.predictions",
        ),
        (
            "heart.pegasos.json",
            &heart,
            &["--scores"],
            "heart.pegasos.json.predictions",
        ),
        (
            "heart.iso.json",
            &heart,
            &["--scores", "--probability"],
            "heart.iso.json.predictions",
        ),
        ("iris.model", &iris, &["--scores"], "iris.model.predictions"),
        (
            "iris.cal.model",
            &iris,
            &["--scores"],
            "iris.cal.model.predictions",
        ),
        (
            "iris.cal.model",
            &iris,
            &["--probability"],
            "iris.cal.model.probabilities",
        ),
        (
            "iris.ovr.json",
            &iris,
            &["--scores"],
            "iris.ovr.json.predictions",
        ),
        (
            "tagger.model",
            &fixture("small.test"),
            &[],
            "tagger.model.predictions",
        ),
    ];
    for (model, data, flags, expected) in runs {
        if expected.starts_with("tagger") {
            // convert does not re-encode taggers
            let model = fixture(model);
            let mut args = vec!["predict", s(&model), s(data)];
            args.extend_from_slice(flags);
            let kept = std::fs::read_to_string(fixture(expected)).unwrap();
            assert_eq!(ok(&args), kept, "{model:?} {flags:?}");
            continue;
        }
        same_bits_and_saved_again(&fixture(model), data, flags, &fixture(expected), tmp.path());
    }
}

fn fixture6(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/format6")
        .join(name)
}

/// Structured models of format 6 (before format 7 stored the hinge's rescaling) load as margin-rescaled,
/// which they were, and predict the same bits.
#[test]
fn format_6_structured_models_predict_the_same_bits() {
    let tmp = tempfile::tempdir().unwrap();
    let iris = tmp.path().join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    let runs: [(&str, &[&str], &str); 4] = [
        ("iris.model", &["--scores"], "iris.model.predictions"),
        (
            "iris.cal.model",
            &["--probability"],
            "iris.cal.model.probabilities",
        ),
        (
            "iris.ovo.model",
            &["--scores"],
            "iris.ovo.model.predictions",
        ),
        (
            "iris.softmax.json",
            &["--probability"],
            "iris.softmax.json.probabilities",
        ),
    ];
    for (model, flags, expected) in runs {
        same_bits_and_saved_again(
            &fixture6(model),
            &iris,
            flags,
            &fixture6(expected),
            tmp.path(),
        );
    }
    let again = tmp.path().join("again.json");
    ok(&[
        "convert",
        s(&fixture6("iris.model")),
        "--to",
        "json",
        "-o",
        s(&again),
    ]);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&again).unwrap()).unwrap();
    assert_eq!(v["params"]["rescaling"], "margin", "{v}");
    let p1 = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/p1");
    let structured: [(&str, PathBuf, &[&str]); 4] = [
        ("multilabel.model", p1.join("iris-multilabel.svm"), &[]),
        ("chain.model", p1.join("iris-chain.svmhmm"), &[]),
        (
            "tagger.model",
            fixture6("small.conll"),
            &["--format", "conll"],
        ),
        ("graph.model", fixture6("graphs.jsonl"), &[]),
    ];
    for (model, data, flags) in structured {
        let path = fixture6(model);
        let mut args = vec!["predict", s(&path), s(&data)];
        args.extend_from_slice(flags);
        let kept = std::fs::read_to_string(fixture6(&format!("{model}.predictions"))).unwrap();
        assert_eq!(ok(&args), kept, "{model}");
    }
}
