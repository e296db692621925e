//! Models of format 3 (main at eb96265, before format 4 added kernels) load and predict the same bits: every
//! kind, in both encodings (`tests/data/format3`, with the predictions the format-3 command made of them).

use super::*;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/format3")
        .join(name)
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
        let model = fixture(model);
        let mut args = vec!["predict", s(&model), s(data)];
        args.extend_from_slice(flags);
        let made = ok(&args);
        let kept = std::fs::read_to_string(fixture(expected)).unwrap();
        assert_eq!(made, kept, "{model:?} {flags:?}");
        if expected.starts_with("tagger") {
            continue; // convert does not re-encode taggers
        }
        // Saved again, it is a format-4 file that predicts the same.
        let again = tmp.path().join("again.json");
        ok(&["convert", s(&model), "--to", "json", "-o", s(&again)]);
        let text = std::fs::read_to_string(&again).unwrap();
        assert!(text.contains("\"format_version\": 4"), "{model:?}");
        let mut args = vec!["predict", s(&again), s(data)];
        args.extend_from_slice(flags);
        assert_eq!(ok(&args), kept, "{model:?} saved again");
    }
}
