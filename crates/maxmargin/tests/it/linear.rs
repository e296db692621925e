//! The linear SVM estimator end to end on the embedded data: fit, evaluate, save, load, predict.

use maxmargin::io::libsvm::read_from;
use maxmargin::prelude::*;

fn heart() -> LabeledData {
    maxmargin::datasets::heart_scale().unwrap()
}

#[test]
fn fit_predict_save_load_round_trip() {
    let data = heart();
    let model = LinearSvmParams::new()
        .lambda(0.01)
        .epochs(20.0)
        .seed(3)
        .check()
        .unwrap()
        .fit(&data)
        .unwrap();
    let report = model.evaluate(&data, Some(0.01)).unwrap();
    assert!(report.accuracy > 0.8, "{report:?}");
    assert_eq!(report.n, 270);
    assert_eq!(report.correct, report.true_positive + report.true_negative);
    // The objective reported at training equals the one the evaluator computes.
    assert!((report.objective.unwrap() - model.training.objective).abs() < 1e-12);
    let dir = tempfile::tempdir().unwrap();
    for name in ["m.model", "m.json"] {
        let path = dir.path().join(name);
        model.save(&path).unwrap();
        let back = LinearModel::load(&path).unwrap();
        assert_eq!(back, model);
        assert_eq!(back.predict_rows(&data.x), model.predict_rows(&data.x));
    }
    // Predictions come back in the data's own labels.
    let preds = model.predict_rows(&data.x);
    assert!(preds.iter().all(|&p| p == 1.0 || p == -1.0));
}

#[test]
fn labels_one_two_are_kept() {
    let text = "1 1:-1\n2 1:1\n1 1:-2\n2 1:2\n";
    let data = read_from(
        text.as_bytes(),
        "inline".as_ref(),
        maxmargin::io::libsvm::parse_real_label,
    )
    .unwrap();
    let model = LinearSvmParams::new()
        .lambda(0.1)
        .epochs(50.0)
        .check()
        .unwrap()
        .fit(&data)
        .unwrap();
    assert_eq!(model.labels, [1.0, 2.0]);
    assert_eq!(model.predict_rows(&data.x), vec![1.0, 2.0, 1.0, 2.0]);
}

#[test]
fn same_seed_same_model_bytes() {
    let data = heart();
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    let uniform = LinearSolver::default_pegasos().sampling(Sampling::Uniform);
    for solver in [LinearSolver::from(SolverKind::Dcd), uniform.into()] {
        files.clear();
        for (k, seed) in [(0, 11), (1, 11), (2, 12)] {
            let svm = LinearSvmParams::new()
                .solver(solver)
                .seed(seed)
                .check()
                .unwrap();
            let path = dir.path().join(format!("{k}.model"));
            svm.fit(&data).unwrap().save(&path).unwrap();
            files.push(std::fs::read(&path).unwrap());
        }
        assert_eq!(files[0], files[1], "{solver:?}");
        assert_ne!(files[0], files[2], "{solver:?}");
    }
}

#[test]
fn c_converts_with_the_training_set_size() {
    let data = heart();
    let model = LinearSvmParams::new()
        .c(1.0)
        .epochs(1.0)
        .check()
        .unwrap()
        .fit(&data)
        .unwrap();
    assert!((model.lambda - 1.0 / 270.0).abs() < 1e-15);
}

#[test]
fn subgradient_and_pegasos_reach_similar_objectives() {
    let data = heart();
    let lambda = 0.05;
    let sub = LinearSvmParams::new()
        .solver(SolverKind::Subgradient)
        .lambda(lambda)
        .iterations(3000);
    let peg = LinearSvmParams::new()
        .solver(SolverKind::Pegasos)
        .lambda(lambda)
        .epochs(100.0)
        .seed(1);
    let a = sub
        .check()
        .unwrap()
        .fit(&data)
        .unwrap()
        .objective(&data, lambda)
        .unwrap();
    let b = peg
        .check()
        .unwrap()
        .fit(&data)
        .unwrap()
        .objective(&data, lambda)
        .unwrap();
    assert!((a - b).abs() / a < 0.02, "subgradient {a} vs pegasos {b}");
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let data = heart();
    let one_class = read_from(
        "1 1:1\n1 2:1\n".as_bytes(),
        "one.svm".as_ref(),
        maxmargin::io::libsvm::parse_real_label,
    )
    .unwrap();
    let svm = LinearSvmParams::new().check().unwrap();
    let e = svm.fit(&one_class).unwrap_err();
    assert!(
        e.to_string()
            .contains("one.svm: a binary problem needs exactly two classes"),
        "{e}"
    );
    let model = svm.fit(&data).unwrap();
    let other = read_from(
        "3 1:1\n".as_bytes(),
        "t.svm".as_ref(),
        maxmargin::io::libsvm::parse_real_label,
    )
    .unwrap();
    let e = model.evaluate(&other, None).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("t.svm:1:1: label: label 3 is neither class"),
        "{e}"
    );
    assert!(
        LinearSvmParams::new()
            .solver(PegasosParams::new().batch_size(0))
            .check()
            .is_err()
    );
    assert!(LinearSvmParams::new().c(f64::NAN).check().is_err());
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("junk.model");
    std::fs::write(&p, b"not a model").unwrap();
    assert!(
        LinearModel::load(&p)
            .unwrap_err()
            .to_string()
            .contains("not a maxmargin model file")
    );
}

#[test]
fn dcd_converges_with_a_certified_gap_and_matches_the_other_solvers() {
    let data = heart();
    let lambda = 0.01;
    let dcd = LinearSvmParams::new()
        .solver(SolverKind::Dcd)
        .lambda(lambda);
    let params = dcd.clone().solver(DcdParams::new().epsilon(1e-6));
    let report = params
        .check()
        .unwrap()
        .fit_observed(&data, &mut ())
        .unwrap();
    assert_eq!(report.model.training.stop, StopReason::Converged);
    let last = report.trace.last().unwrap();
    let (dual, gap) = (last.dual.unwrap(), last.gap.unwrap());
    assert!(
        gap >= -1e-12 && gap < 1e-5 * last.objective,
        "gap {gap}, dual {dual}"
    );
    let sub = LinearSvmParams::new()
        .solver(SolverKind::Subgradient)
        .lambda(lambda)
        .bias(Bias::Feature)
        .iterations(20_000);
    let s = sub
        .check()
        .unwrap()
        .fit(&data)
        .unwrap()
        .objective(&data, lambda)
        .unwrap();
    assert!(
        report.model.training.objective <= s + 1e-9,
        "dcd {} vs subgradient {s}",
        report.model.training.objective
    );
    assert!((s - report.model.training.objective) / s < 1e-3);
    // Same seed, same bits; the unregularized bias trains by pair steps, but not in blocks.
    let a = dcd.clone().seed(4).check().unwrap().fit(&data).unwrap();
    let b = dcd.clone().seed(4).check().unwrap().fit(&data).unwrap();
    assert_eq!(a, b);
    let free = dcd
        .clone()
        .bias(Bias::Unregularized)
        .solver(DcdParams::new().epsilon(1e-6))
        .check()
        .unwrap()
        .fit_observed(&data, &mut ())
        .unwrap();
    let gap = free.trace.last().and_then(|r| r.gap).unwrap();
    assert!(gap <= 1e-6 * free.model.training.objective, "gap {gap}");
    // Not regularizing the intercept can only lower the optimum.
    assert!(free.model.training.objective <= report.model.training.objective + 1e-6);
    assert!(
        dcd.bias(Bias::Unregularized)
            .solver(DcdParams::new().blocks(2))
            .check()
            .is_err()
    );
}

#[test]
fn squared_hinge_dcd_certifies_its_optimum() {
    let data = heart();
    let params = LinearSvmParams::new()
        .solver(DcdParams::new().epsilon(1e-6))
        .lambda(0.01)
        .loss(maxmargin::optim::BinaryLoss::SquaredHinge);
    let report = params
        .clone()
        .check()
        .unwrap()
        .fit_observed(&data, &mut ())
        .unwrap();
    let last = report.trace.last().unwrap();
    let gap = last.gap.unwrap();
    assert!(gap >= -1e-12 && gap < 1e-5 * last.objective, "gap {gap}");
    // The model's objective is evaluated with its own loss.
    let e = report.model.evaluate(&data, Some(0.01)).unwrap();
    assert!((e.objective.unwrap() - report.model.training.objective).abs() < 1e-12);
    // Pegasos refuses the squared hinge.
    let mut peg = LinearSvmParams::new().solver(SolverKind::Pegasos);
    peg.loss = maxmargin::optim::BinaryLoss::SquaredHinge;
    let err = peg.check().unwrap().fit(&data).unwrap_err();
    assert!(
        err.to_string().contains("supports the hinge loss only"),
        "{err}"
    );
}

#[test]
fn cross_validation_is_stratified_and_deterministic() {
    let data = heart();
    let svm = LinearSvmParams::new()
        .lambda(0.01)
        .epochs(5.0)
        .check()
        .unwrap();
    let a = maxmargin::linear::cross_validate(&svm, &data, 5, 3).unwrap();
    let b = maxmargin::linear::cross_validate(&svm, &data, 5, 3).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.fold_accuracy.len(), 5);
    assert!(a.accuracy > 0.75 && a.std >= 0.0);
    let mean = a.fold_accuracy.iter().sum::<f64>() / 5.0;
    assert!((mean - a.accuracy).abs() < 1e-15);
    assert!(maxmargin::linear::cross_validate(&svm, &data, 1, 3).is_err());
    assert!(maxmargin::linear::cross_validate(&svm, &data, 271, 3).is_err());
}

#[test]
fn class_weights_shift_the_decision_and_keep_certificates() {
    let data = heart();
    let base = LinearSvmParams::new().solver(SolverKind::Dcd).lambda(0.01);
    let plain = base.clone().check().unwrap().fit(&data).unwrap();
    let mut ones = base.clone();
    ones.class_weights = vec![(1.0, 1.0), (-1.0, 1.0)];
    assert_eq!(
        ones.check().unwrap().fit(&data).unwrap().w,
        plain.w,
        "weights of one change nothing"
    );
    let mut heavy = base.clone();
    heavy.class_weights = vec![(1.0, 5.0)];
    heavy.solver = DcdParams::new().epsilon(1e-6).into();
    let report = heavy
        .clone()
        .check()
        .unwrap()
        .fit_observed(&data, &mut ())
        .unwrap();
    let last = report.trace.last().unwrap();
    assert!(last.gap.unwrap() < 1e-5 * last.objective, "{last:?}");
    let (p, h) = (
        plain.evaluate(&data, None).unwrap(),
        report.model.evaluate(&data, Some(0.01)).unwrap(),
    );
    assert!(
        h.true_positive > p.true_positive,
        "more weight on +1 finds more positives"
    );
    assert!((h.objective.unwrap() - report.model.training.objective).abs() < 1e-12);
    // Pegasos and the subgradient method take the same weights.
    for solver in [SolverKind::Pegasos, SolverKind::Subgradient] {
        let p = heavy.clone().solver(solver);
        let m = p.check().unwrap().fit(&data).unwrap();
        assert!(
            m.evaluate(&data, None).unwrap().true_positive >= p_tp(&plain, &data),
            "{solver:?}"
        );
    }
    heavy.class_weights = vec![(3.0, 2.0)];
    assert!(
        heavy
            .check()
            .unwrap()
            .fit(&data)
            .unwrap_err()
            .to_string()
            .contains("label the training data does not have")
    );
}

fn p_tp(m: &LinearModel, data: &LabeledData) -> usize {
    m.evaluate(data, None).unwrap().true_positive
}

#[test]
fn regularization_path_warm_starts_and_matches_cold_cross_validation() {
    let data = maxmargin::datasets::heart_scale().unwrap();
    let params = LinearSvmParams::new().solver(DcdParams::new().epsilon(1e-6));
    let cs = [0.01, 0.1, 1.0, 10.0];
    let path = maxmargin::linear::regularization_path(&params, &data, &cs, 4, 3).unwrap();
    assert_eq!(path.len(), 4);
    for (point, &c) in path.iter().zip(&cs) {
        let cold =
            maxmargin::linear::cross_validate(&params.clone().c(c).check().unwrap(), &data, 4, 3)
                .unwrap();
        // Same folds, same optimum up to the tolerance: the same held-out accuracy.
        assert_eq!(point.c, c);
        assert!(
            (point.cv.accuracy - cold.accuracy).abs() <= 1.0 / 67.0,
            "C {c}: path {} vs cold {}",
            point.cv.accuracy,
            cold.accuracy
        );
    }
    // In any order the path runs from the smallest C; a repeated C is refused.
    let unsorted =
        maxmargin::linear::regularization_path(&params, &data, &[1.0, 0.1], 4, 3).unwrap();
    assert_eq!((unsorted[0].c, unsorted[1].c), (0.1, 1.0));
    assert!(maxmargin::linear::regularization_path(&params, &data, &[1.0, 1.0], 4, 3).is_err());
    assert!(maxmargin::linear::regularization_path(&params, &data, &[], 4, 3).is_err());
}

/// A model trained with a step rule loads from both encodings (bincode could not read the tagged form the
/// step rule had in JSON: every model trained with `--step` failed to load from a `.model` file).
#[test]
fn models_with_every_step_rule_load_in_both_encodings() {
    use maxmargin::optim::StepRule;
    let data = heart();
    let dir = tempfile::tempdir().unwrap();
    for step in [
        StepRule::Constant(0.1),
        StepRule::Inverse(2.0),
        StepRule::Pegasos,
    ] {
        let solvers: [LinearSolver; 2] = [
            LinearSolver::default_pegasos().step(step).into(),
            SubgradientParams::new().step(step).into(),
        ];
        for solver in solvers {
            let model = LinearSvmParams::new()
                .solver(solver)
                .check()
                .unwrap()
                .fit(&data)
                .unwrap();
            for ext in ["model", "json"] {
                let p = dir.path().join(format!("m.{ext}"));
                model.save(&p).unwrap();
                let back = LinearModel::load(&p).unwrap();
                assert_eq!(back, model, "{solver} {step:?} {ext}");
            }
        }
    }
}

/// Issue 23, item 10: a decision model written with a valid checksum but a map no calibration makes
/// (isotonic probabilities −5 and 7, scores out of order, unequal lengths, a scaler factor of −1) is refused
/// on load naming the map; nothing `predict --probability` would print outside [0, 1].
#[test]
fn issue_23_decision_models_with_impossible_maps_are_refused() {
    use maxmargin::core::calibration::{Isotonic, Platt};
    use maxmargin::linear::{Calibration, CalibrationMap, DECISION_KIND, DecisionModel};
    let data = maxmargin::datasets::heart_scale().unwrap();
    let model = LinearSvmParams::new().check().unwrap().fit(&data).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.model");
    let with = |map: CalibrationMap| {
        let mut m = DecisionModel::new(model.clone());
        m.calibration = Some(Calibration {
            map,
            rows: 10,
            source: "dev".into(),
        });
        m
    };
    let iso =
        |upper: Vec<f64>, values: Vec<f64>| CalibrationMap::Isotonic(Isotonic { upper, values });
    with(iso(vec![-1.0, 1.0], vec![0.2, 0.9]))
        .save(&path)
        .unwrap();
    assert!(DecisionModel::load(&path).is_ok());
    let mut scaled = with(iso(vec![-1.0, 1.0], vec![0.2, 0.9]));
    scaled.model.scaler = Some(maxmargin::core::scale::Scaler {
        kind: maxmargin::core::scale::Scaling::MaxAbs,
        factor: vec![-1.0; 13],
        offsets: Vec::new(),
    });
    for (what, bad, expected) in [
        (
            "outside [0, 1]",
            with(iso(vec![-1.0, 1.0], vec![-5.0, 7.0])),
            "isotonic map",
        ),
        (
            "out of order",
            with(iso(vec![1.0, -1.0], vec![0.2, 0.9])),
            "isotonic map",
        ),
        (
            "unequal",
            with(iso(vec![-1.0, 1.0, 2.0], vec![0.2, 0.9])),
            "isotonic map",
        ),
        (
            "platt",
            with(CalibrationMap::Platt(Platt {
                a: f64::NAN,
                b: 0.0,
            })),
            "Platt",
        ),
        ("scaler", scaled, "scaler"),
    ] {
        // Written past the checks that `save` makes, as a hostile editor with a recomputed checksum would.
        maxmargin::io::model_file::save(&path, DECISION_KIND, &bad).unwrap();
        let err = DecisionModel::load(&path).unwrap_err().to_string();
        assert!(err.contains(expected), "{what}: {err}");
    }
}

/// A model's λ is checked on loading as its weights are: a file edited to a λ of 0, below or not finite
/// (whose objectives would mean nothing) is refused by name.
#[test]
fn models_with_a_lambda_not_positive_are_refused() {
    let data = heart();
    let model = LinearSvmParams::new().check().unwrap().fit(&data).unwrap();
    let path = std::path::Path::new("edited.model");
    for lambda in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let mut edited = model.clone();
        edited.lambda = lambda;
        let err = edited.validated(path).unwrap_err().to_string();
        assert!(err.contains("lambda is"), "{lambda}: {err}");
    }
    assert!(model.clone().validated(path).is_ok());
    let iris = maxmargin::datasets::iris().unwrap();
    let svm = maxmargin::StructuredSvmParams::new(maxmargin::Task::Multiclass)
        .check()
        .unwrap();
    let mut multiclass = svm.fit_multiclass(&iris, &mut ()).unwrap().model;
    multiclass.lambda = -1.0;
    let err = multiclass.validated(path).unwrap_err().to_string();
    assert!(err.contains("lambda is -1"), "{err}");
}
