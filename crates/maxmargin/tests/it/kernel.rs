//! Kernel SVMs through the facade: an RBF model trains with a certificate, scores by its support vectors,
//! saves and loads, calibrates and thresholds like any binary model, and is refused where it cannot apply.

use maxmargin::linear::{DecisionModel, KernelChoice, KernelKind, ThresholdRule};
use maxmargin::prelude::*;

fn heart() -> LabeledData {
    maxmargin::datasets::heart_scale().unwrap()
}

fn rbf(c: f64) -> LinearSvmParams {
    LinearSvmParams::new()
        .solver(KernelChoice::default())
        .bias(maxmargin::optim::Bias::Unregularized)
        .c(c)
}

#[test]
fn an_rbf_svm_is_certified_and_scores_by_its_support_vectors() {
    let data = heart();
    let report = rbf(1.0)
        .check()
        .unwrap()
        .fit_observed(&data, &mut ())
        .unwrap();
    let model = &report.model;
    assert!(model.training.converged, "{:?}", model.training);
    let k = model.kernel.as_ref().unwrap();
    assert!(k.n_support() > 0 && k.n_support() < data.n_samples());
    // gamma = scale: 1 / (d · Var(X)).
    let maxmargin::core::kernel::Kernel::Rbf { gamma } = k.kernel else {
        panic!("not rbf")
    };
    assert!((gamma - maxmargin::core::kernel::gamma_scale(&data.x)).abs() < 1e-15);
    // The decision of every row is the expansion's, one row or all at once.
    let all = model.decision_rows(&data.x);
    for (i, f) in all.iter().enumerate().step_by(17) {
        assert!((model.decision_function(data.x.row(i)) - f).abs() < 1e-12);
    }
    // Nonlinear: better on its training rows than the linear SVM at the same C.
    let linear = LinearSvmParams::new()
        .c(1.0)
        .check()
        .unwrap()
        .fit(&data)
        .unwrap();
    let (a, b) = (
        model.evaluate(&data, None).unwrap().accuracy,
        linear.evaluate(&data, None).unwrap().accuracy,
    );
    assert!(a > b, "rbf {a}, linear {b}");
    // The objective evaluated from the model is the run's (‖w‖² from the support vectors).
    let e = model.evaluate(&data, Some(model.lambda)).unwrap();
    let o = e.objective.unwrap();
    assert!(
        (o - model.training.objective).abs() <= 1e-9 * o,
        "{o} against {}",
        model.training.objective
    );
    // Saved and loaded, it is the same model; calibrated and thresholded as any binary model.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rbf.model");
    model.save(&path).unwrap();
    assert_eq!(&LinearModel::load(&path).unwrap(), model);
    let d = DecisionModel::new(model.clone())
        .calibrate(&data, maxmargin::linear::CalibrationMethod::Platt)
        .unwrap();
    let (d, _) = d
        .choose_threshold(&data, ThresholdRule::AtProbability(0.5))
        .unwrap();
    let p = dir.path().join("rbf.dec.model");
    d.save(&p).unwrap();
    assert_eq!(DecisionModel::load(&p).unwrap(), d);
    assert!(d.evaluate(&data, None).unwrap().brier.is_some());
}

#[test]
fn every_kernel_trains_and_bad_settings_are_refused_by_name() {
    let data = heart();
    for kind in [KernelKind::Linear, KernelKind::Poly, KernelKind::Sigmoid] {
        let choice = KernelChoice {
            kind,
            ..KernelChoice::default()
        };
        let params = LinearSvmParams::new()
            .solver(choice)
            .bias(maxmargin::optim::Bias::Unregularized);
        let model = params.check().unwrap().fit(&data).unwrap();
        assert!(model.is_kernel());
        assert!(
            model.evaluate(&data, None).unwrap().accuracy > 0.6,
            "{kind:?}"
        );
    }
    let feature = LinearSvmParams::new().solver(KernelChoice::default());
    let e = feature.check().unwrap_err();
    assert!(e.to_string().contains("unregularized"), "{e}");
    let bad = rbf(1.0).solver(KernelChoice {
        gamma: Some(-1.0),
        ..KernelChoice::default()
    });
    assert!(bad.check().unwrap_err().to_string().contains("gamma"));
    let logistic = rbf(1.0).loss(maxmargin::optim::BinaryLoss::Logistic);
    assert!(logistic.check().unwrap_err().to_string().contains("hinge"));
}
