//! `train --rescaling slack`: the cutting planes train the slack-rescaled hinge on multiclass and multilabel
//! data, the model says so and eval's objective is that hinge's; where it cannot apply it is refused by name.

use super::*;

fn model_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn slack_rescaling_trains_and_is_stored() {
    let tmp = tempfile::tempdir().unwrap();
    let iris = tmp.path().join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    let train = |solver: &str, rescaling: &str| {
        let model = tmp.path().join(format!("{solver}-{rescaling}.json"));
        ok(&[
            "train",
            s(&iris),
            "--task",
            "multiclass",
            "--solver",
            solver,
            "--rescaling",
            rescaling,
            "--lambda",
            "0.01",
            "--scale",
            "maxabs",
            "--gap",
            "1e-4",
            "-o",
            s(&model),
            "-q",
        ]);
        model
    };
    let (one, n, margin) = (
        train("oneslack", "slack"),
        train("nslack", "slack"),
        train("oneslack", "margin"),
    );
    let objective = |m: &Path| model_json(m)["training"]["objective"].as_f64().unwrap();
    for m in [&one, &n] {
        let v = model_json(m);
        assert_eq!(v["params"]["rescaling"], "slack", "{v}");
        assert_eq!(v["training"]["converged"], true, "{v}");
        // eval's objective is the slack-rescaled one the run certified.
        let e: serde_json::Value =
            serde_json::from_str(&ok(&["eval", s(m), s(&iris), "--json", "--lambda", "0.01"]))
                .unwrap();
        let (a, b) = (e["objective"].as_f64().unwrap(), objective(m));
        assert!((a - b).abs() <= 1e-9 * b, "eval {a} vs training {b}");
    }
    // Both solvers reach the same optimum (within their 1e-4 gaps). With the 0-1 loss, Δ·(1 + s′ − s) and
    // Δ + s′ − s agree on every wrong class: margin rescaling's optimum is the same.
    let (a, b, c) = (objective(&one), objective(&n), objective(&margin));
    assert!((a - b).abs() <= 2e-4 * a, "{a} vs {b}");
    assert!((a - c).abs() <= 2e-4 * a, "slack {a} vs margin {c}");
    assert_eq!(model_json(&margin)["params"]["rescaling"], "margin");
    // Multilabel, with n-slack.
    let ml = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/p1/iris-multilabel.svm");
    let m = tmp.path().join("ml.json");
    ok(&[
        "train",
        s(&ml),
        "--task",
        "multilabel",
        "--solver",
        "nslack",
        "--rescaling",
        "slack",
        "--scale",
        "maxabs",
        "-o",
        s(&m),
        "-q",
    ]);
    assert_eq!(model_json(&m)["params"]["rescaling"], "slack");
    // The Hamming loss counts up to 3 labels here: the two problems differ.
    let mm = tmp.path().join("ml-margin.json");
    ok(&[
        "train",
        s(&ml),
        "--task",
        "multilabel",
        "--solver",
        "nslack",
        "--scale",
        "maxabs",
        "-o",
        s(&mm),
        "-q",
    ]);
    let (a, c) = (objective(&m), objective(&mm));
    assert!((a - c).abs() > 1e-3 * a, "slack {a} vs margin {c}");
}

#[test]
fn slack_rescaling_is_refused_where_it_cannot_apply() {
    let tmp = tempfile::tempdir().unwrap();
    let iris = tmp.path().join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    let out = tmp.path().join("m.model");
    let err = fails(
        &[
            "train",
            s(&iris),
            "--task",
            "multiclass",
            "--solver",
            "bcfw",
            "--rescaling",
            "slack",
            "-o",
            s(&out),
        ],
        1,
    );
    assert!(
        err.contains("rescaling") && err.contains("oneslack or nslack"),
        "{err}"
    );
    let chain = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/p1/iris-chain.svmhmm");
    let err = fails(
        &[
            "train",
            s(&chain),
            "--task",
            "chain",
            "--solver",
            "oneslack",
            "--rescaling",
            "slack",
            "-o",
            s(&out),
        ],
        1,
    );
    assert!(err.contains("chains and graphs have none"), "{err}");
    let heart = super::heart(tmp.path());
    let err = fails(
        &["train", s(&heart), "--rescaling", "slack", "-o", s(&out)],
        1,
    );
    assert!(
        err.contains("--rescaling") && err.contains("structured tasks"),
        "{err}"
    );
    assert!(!out.exists());
}

/// A flag that a structured solver would ignore is refused by name: `--epsilon` beside `--gap` for BCFW
/// (both its relative gap tolerance: `--gap 0.1 --epsilon 0.5` ran as `--gap 0.1`), `--epsilon` for SSG.
#[test]
fn tolerances_a_structured_solver_would_ignore_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let iris = tmp.path().join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    let model = tmp.path().join("m.json");
    let base = ["train", "--task", "multiclass", s(&iris), "-o", s(&model)];
    fn with<'a>(base: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
        [base, more].concat()
    }
    let err = fails(
        &with(
            &base,
            &["--solver", "bcfw", "--gap", "0.1", "--epsilon", "0.5"],
        ),
        1,
    );
    assert!(err.contains("--epsilon and --gap are both BCFW's"), "{err}");
    let err = fails(&with(&base, &["--solver", "ssg", "--epsilon", "0.5"]), 1);
    assert!(
        err.contains("--epsilon does not apply to --solver ssg"),
        "{err}"
    );
    ok(&with(
        &base,
        &["--solver", "bcfw", "--epsilon", "0.05", "-q"],
    ));
    ok(&with(
        &base,
        &[
            "--solver",
            "oneslack",
            "--gap",
            "0.05",
            "--epsilon",
            "0.05",
            "-q",
        ],
    ));
}
