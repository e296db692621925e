//! Logistic regression (`--loss logistic`) through the facade: certified like the SVMs, its own
//! probabilities in `predict`, `eval`, `threshold --at P`, LIBLINEAR's `L2R_LR_DUAL` both ways, cross-validation
//! and warm starts along a C path, and the modes it does not run in yet refused by name.

use maxmargin::linear::{DecisionModel, ThresholdRule};
use maxmargin::optim::BinaryLoss;
use maxmargin::prelude::*;

fn heart() -> LabeledData {
    maxmargin::datasets::heart_scale().unwrap()
}

fn logistic(c: f64) -> LinearSvmParams {
    LinearSvmParams::new()
        .solver(DcdParams::new().epsilon(1e-8))
        .c(c)
        .loss(BinaryLoss::Logistic)
}

#[test]
fn logistic_regression_is_certified_and_its_scores_are_log_odds() {
    let data = heart();
    let report = logistic(1.0)
        .check()
        .unwrap()
        .fit_observed(&data, &mut ())
        .unwrap();
    let model = &report.model;
    assert!(model.training.converged);
    let last = report.trace.last().unwrap();
    let gap = last.gap.unwrap();
    assert!(gap >= -1e-12 && gap <= 1e-7 * last.objective, "gap {gap}");
    // The objective is the logistic one, evaluated from the model as the run reported it.
    let e = model.evaluate(&data, Some(model.lambda)).unwrap();
    assert!((e.objective.unwrap() - model.training.objective).abs() <= 1e-12);
    // At the optimum, the gradient in b vanishes: Σ y_i σ(−y_i f_i) = λ b (the bias is a regularized feature).
    let f = model.decision_rows(&data.x);
    let y: Vec<f64> = data
        .labels
        .iter()
        .map(|&l| if l == model.labels[1] { 1.0 } else { -1.0 })
        .collect();
    let n = y.len() as f64;
    let slope: f64 = f
        .iter()
        .zip(&y)
        .map(|(f, y)| y * maxmargin_core::hinge::sigmoid(-y * f))
        .sum::<f64>()
        / n;
    assert!(
        (slope - model.lambda * model.b).abs() < 1e-6,
        "slope {slope}"
    );
    // Its probabilities are its own, σ(f), with no calibration; eval reports their Brier score.
    let decision = DecisionModel::new(model.clone());
    assert!(decision.has_probabilities());
    let p = decision.probabilities(&data.x).unwrap();
    for (p, f) in p.iter().zip(&f) {
        assert_eq!(*p, maxmargin_core::hinge::sigmoid(*f));
    }
    let e = decision.evaluate(&data, None).unwrap();
    assert!(e.brier.unwrap() > 0.0 && e.brier.unwrap() < 0.25);
    // A hinge model has none.
    let svm = LinearSvmParams::new()
        .c(1.0)
        .check()
        .unwrap()
        .fit(&data)
        .unwrap();
    let hinge = DecisionModel::new(svm);
    assert!(!hinge.has_probabilities());
    assert!(hinge.probabilities(&data.x).is_err());
    assert!(hinge.evaluate(&data, None).unwrap().brier.is_none());
}

#[test]
fn a_logistic_cut_off_by_probability_needs_no_calibration() {
    let data = heart();
    let model = logistic(1.0).check().unwrap().fit(&data).unwrap();
    let decision = DecisionModel::new(model);
    let scores = decision.model.decision_rows(&data.x);
    for p in [0.2, 0.5, 0.9] {
        let (m, at) = decision
            .clone()
            .choose_threshold(&data, ThresholdRule::AtProbability(p))
            .unwrap();
        // Flagged exactly when the model's probability is at least p.
        let flagged = m.predict_rows(&data.x);
        for (f, label) in scores.iter().zip(&flagged) {
            let sure = maxmargin_core::hinge::sigmoid(*f) >= p;
            assert_eq!(*label == m.model.labels[1], sure, "p {p}, score {f}");
        }
        let back = m.probability_at(at.threshold.next_up()).unwrap();
        assert!((back - p).abs() < 1e-9, "{back} at {p}");
    }
}

#[test]
fn logistic_models_go_to_liblinear_and_back_as_l2r_lr_dual() {
    let data = heart();
    let model = logistic(0.5).check().unwrap().fit(&data).unwrap();
    let lib = maxmargin::convert::binary_to_liblinear(&model);
    assert_eq!(lib.solver, "L2R_LR_DUAL");
    let dir = tempfile::tempdir().unwrap();
    let back = maxmargin::convert::from_liblinear(&lib, &dir.path().join("m")).unwrap();
    let maxmargin::convert::Imported::Binary(back) = back else {
        panic!("not binary")
    };
    assert!(back.is_probabilistic());
    let (a, b) = (
        DecisionModel::new(model).probabilities(&data.x).unwrap(),
        DecisionModel::new(back).probabilities(&data.x).unwrap(),
    );
    for (a, b) in a.iter().zip(&b) {
        assert!((a - b).abs() < 1e-12);
    }
}

#[test]
fn logistic_cross_validation_and_its_c_path_converge_with_warm_starts() {
    let data = heart();
    let params = logistic(1.0);
    let svm = params.clone().check().unwrap();
    let cv = maxmargin::linear::cross_validate(&svm, &data, 5, 0).unwrap();
    assert!(cv.converged);
    assert!(cv.accuracy > 0.75, "{}", cv.accuracy);
    let path =
        maxmargin::linear::regularization_path(&params, &data, &[0.01, 0.1, 1.0, 10.0], 5, 0)
            .unwrap();
    assert_eq!(path.len(), 4);
    for point in &path {
        assert!(point.cv.converged, "C {}", point.c);
    }
    // Each fold's objective at C matches a cold run's.
    let cold = maxmargin::linear::regularization_path(&params, &data, &[10.0], 5, 0).unwrap();
    for (warm, cold) in path[3].objective.iter().zip(&cold[0].objective) {
        assert!((warm - cold).abs() <= 1e-7 * cold, "{warm} {cold}");
    }
}

#[test]
fn logistic_regression_refuses_by_name_what_it_does_not_run_yet() {
    let data = heart();
    let unregularized = logistic(1.0).bias(maxmargin::optim::Bias::Unregularized);
    let e = unregularized.check().unwrap().fit(&data).unwrap_err();
    assert!(e.to_string().contains("logistic"), "{e}");
    let blocks = LinearSvmParams::new()
        .solver(DcdParams::new().blocks(2))
        .loss(BinaryLoss::Logistic);
    let e = blocks.check().unwrap().fit(&data).unwrap_err();
    assert!(e.to_string().contains("one block"), "{e}");
}
