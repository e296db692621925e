//! Newton's method in the primal (`--solver newton`): chosen for the smooth losses when the rows outnumber
//! the features, certified at DCD's optimum, and refused by name where it cannot apply.

use super::*;

/// The JSON model's solver, objective, gap and verdict.
fn trained(model: &Path) -> (String, f64, f64, bool) {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(model).unwrap()).unwrap();
    let t = &v["training"];
    (
        v["params"]["solver"].as_str().unwrap().to_string(),
        t["objective"].as_f64().unwrap(),
        t["gap"].as_f64().unwrap(),
        t["converged"].as_bool().unwrap(),
    )
}

#[test]
fn the_smooth_losses_train_by_newton_to_dcds_certified_optimum() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let (newton, dcd) = (tmp.path().join("n.json"), tmp.path().join("d.json"));
    for loss in ["squared-hinge", "logistic"] {
        // 270 rows of 13 features: Newton unless a solver is asked for.
        ok(&["train", s(&data), "--loss", loss, "-o", s(&newton), "-q"]);
        let (solver, objective, gap, converged) = trained(&newton);
        assert_eq!(solver, "newton", "{loss}");
        assert!(
            converged && gap >= 0.0 && gap <= 1e-3 * objective,
            "{loss}: {gap}"
        );
        let tight = ["--solver", "dcd", "--epsilon", "1e-6", "--gap", "1e-9"];
        let mut args = vec!["train", s(&data), "--loss", loss, "-o", s(&dcd), "-q"];
        args.extend(tight);
        ok(&args);
        let (solver, optimum, _, _) = trained(&dcd);
        assert_eq!(solver, "dcd");
        // Newton's objective is within its certified gap of DCD's tight optimum.
        assert!(
            objective >= optimum - 1e-12,
            "{loss}: {objective} {optimum}"
        );
        assert!(
            objective - optimum <= gap + 1e-12,
            "{loss}: {objective} {optimum} {gap}"
        );
        // A tighter gap is honoured.
        ok(&[
            "train",
            s(&data),
            "--loss",
            loss,
            "--gap",
            "1e-8",
            "-o",
            s(&newton),
            "-q",
        ]);
        let (_, objective, gap, converged) = trained(&newton);
        assert!(converged && gap <= 1e-8 * objective, "{loss}: {gap}");
        assert!((objective - optimum).abs() <= 1e-7 * optimum, "{loss}");
        // The model predicts as any binary model does; logistic regression's probabilities included.
        let preds = ok(&["predict", s(&newton), s(&data)]);
        assert_eq!(preds.lines().count(), 270);
        if loss == "logistic" {
            ok(&["predict", s(&newton), s(&data), "--probability"]);
        }
    }
    // A flag only DCD reads keeps DCD.
    let args = ["train", s(&data), "--loss", "logistic", "--epsilon", "0.01"];
    ok(&[&args[..], &["-o", s(&dcd), "-q"]].concat());
    assert_eq!(trained(&dcd).0, "dcd");
    // Where DCD cannot, Newton trains a logistic model with an unregularized intercept.
    let args = [
        "train",
        s(&data),
        "--loss",
        "logistic",
        "--bias",
        "unregularized",
    ];
    ok(&[&args[..], &["-o", s(&newton), "-q"]].concat());
    assert!(trained(&newton).3);
}

#[test]
fn newton_is_refused_where_it_cannot_apply() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let model = tmp.path().join("m.model");
    let base = ["train", s(&data), "-o", s(&model), "--solver", "newton"];
    for (flags, says) in [
        (&[][..], "differentiable loss"),
        (&["--loss", "hinge"][..], "differentiable loss"),
        (&["--loss", "logistic", "--epsilon", "0.1"][..], "--gap"),
        (
            &["--loss", "logistic", "--blocks", "2"][..],
            "applies to --solver dcd",
        ),
        (&["--loss", "logistic", "--step", "pegasos"][..], "--step"),
        (&["--loss", "logistic", "--stream"][..], "newton"),
        (
            &["--task", "multiclass", "--loss", "logistic"][..],
            "binary",
        ),
    ] {
        let err = fails(&[&base[..], flags].concat(), 1);
        assert!(err.contains(says), "{flags:?}: {err}");
    }
}

#[test]
fn a_newton_run_stopped_by_its_budget_resumes_to_the_uninterrupted_bits() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let (straight, resumed, ck) = (
        tmp.path().join("a.model"),
        tmp.path().join("b.model"),
        tmp.path().join("run.ck"),
    );
    let run = [
        "train",
        s(&data),
        "--loss",
        "logistic",
        "--gap",
        "1e-10",
        "-q",
    ];
    ok(&[&run[..], &["-o", s(&straight)]].concat());
    let stopped = ["--epochs", "10", "--checkpoint", s(&ck), "-o", s(&resumed)];
    ok(&[&run[..], &stopped].concat());
    let (_, _, gap, converged) = {
        let json = tmp.path().join("b.json");
        ok(&[&run[..], &["--epochs", "10", "-o", s(&json)]].concat());
        trained(&json)
    };
    assert!(
        !converged && gap > 1e-3,
        "10 passes should stop short: {gap}"
    );
    ok(&[
        &run[..],
        &[
            "--checkpoint",
            s(&ck),
            "--resume",
            s(&ck),
            "-o",
            s(&resumed),
        ],
    ]
    .concat());
    assert_eq!(
        std::fs::read(&straight).unwrap(),
        std::fs::read(&resumed).unwrap()
    );
    // A checkpoint of the other solver names the flag that resumes it.
    let dcd = ["--solver", "dcd", "--checkpoint", s(&ck), "-o", s(&resumed)];
    std::fs::remove_file(&ck).unwrap();
    ok(&[&run[..], &dcd].concat());
    let err = fails(
        &[&run[..], &["--resume", s(&ck), "-o", s(&resumed)]].concat(),
        1,
    );
    assert!(err.contains("resume it with --solver dcd"), "{err}");
}

/// Watching a run does not change its model: --trace-weights follows Newton's steps.
#[test]
fn trace_weights_follow_newtons_steps() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let (plain, traced, trace) = (
        tmp.path().join("a.model"),
        tmp.path().join("b.model"),
        tmp.path().join("t.jsonl"),
    );
    let run = ["train", s(&data), "--loss", "logistic", "-q"];
    ok(&[&run[..], &["-o", s(&plain)]].concat());
    let watch = ["--trace-weights", "--trace", s(&trace), "-o", s(&traced)];
    ok(&[&run[..], &watch].concat());
    let text = std::fs::read_to_string(&trace).unwrap();
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["step"]["weights"].as_array().unwrap().len(), 13);
    let (a, b) = (
        maxmargin::linear::LinearModel::load(&plain).unwrap(),
        maxmargin::linear::LinearModel::load(&traced).unwrap(),
    );
    assert_eq!((a.w, a.b), (b.w, b.b));
}

/// Rows enough for Newton's sums to be cut into chunks summed in parallel: the same bytes on one thread as
/// on two.
#[test]
fn newton_models_do_not_depend_on_the_thread_count() {
    let tmp = tempfile::tempdir().unwrap();
    let mut next = maxmargin::testing::Lcg::new(7);
    let mut text = String::new();
    for _ in 0..6000 {
        let x: Vec<f64> = (0..6).map(|_| 4.0 * next.unit() - 2.0).collect();
        let y = if x[0] - x[1] + 0.5 * x[2] + next.unit() - 0.5 > 0.0 {
            1
        } else {
            -1
        };
        text.push_str(&y.to_string());
        for (j, v) in x.iter().enumerate() {
            text.push_str(&format!(" {}:{v:.3}", j + 1));
        }
        text.push('\n');
    }
    let data = tmp.path().join("rows.svm");
    std::fs::write(&data, text).unwrap();
    for loss in ["squared-hinge", "logistic"] {
        let mut bytes = Vec::new();
        for threads in ["1", "2"] {
            let model = tmp.path().join(format!("{loss}-{threads}.model"));
            let args = ["train", s(&data), "--loss", loss, "--threads", threads];
            ok(&[&args[..], &["-o", s(&model), "-q"]].concat());
            bytes.push(std::fs::read(&model).unwrap());
        }
        assert_eq!(bytes[0], bytes[1], "{loss}");
        let model = tmp.path().join(format!("{loss}-1.model"));
        let m = maxmargin::linear::LinearModel::load(&model).unwrap();
        assert!(m.training.converged, "{loss}");
    }
}
