//! Training on rows streamed from disk (`LinearSvm::fit_stream`): DCD reaches the in-memory optimum,
//! every certificate is a true lower bound, the same seed gives the same bytes, and what cannot stream is
//! refused naming why.

use maxmargin::core::scale::Scaling;
use maxmargin::optim::BinaryLoss;
use maxmargin::prelude::*;
use std::path::{Path, PathBuf};

fn heart_file(dir: &Path) -> PathBuf {
    let path = dir.join("heart.svm");
    maxmargin::io::libsvm::write(&path, &maxmargin::datasets::heart_scale().unwrap()).unwrap();
    path
}

/// The in-memory optimum of heart at C = 1 with `bias` and `loss`, to a 1e-9 relative gap (ε at its default:
/// the gap target tightens it, where a tiny ε from the start stalls shrinking short of the optimum).
fn optimum(bias: Bias, loss: BinaryLoss) -> f64 {
    let data = maxmargin::datasets::heart_scale().unwrap();
    let svm = LinearSvmParams::new()
        .bias(bias)
        .loss(loss)
        .gap(1e-9)
        .check()
        .unwrap();
    let t = svm.fit(&data).unwrap().training;
    assert!(
        t.converged && t.gap.is_some_and(|g| g <= 1e-9 * t.objective),
        "{t:?}"
    );
    t.objective
}

#[test]
fn streamed_dcd_reaches_the_in_memory_optimum_and_certifies_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = heart_file(dir.path());
    for (bias, loss) in [
        (Bias::Feature, BinaryLoss::Hinge),
        (Bias::None, BinaryLoss::Hinge),
        (Bias::Feature, BinaryLoss::SquaredHinge),
    ] {
        let opt = optimum(bias, loss);
        let svm = LinearSvmParams::new()
            .bias(bias)
            .loss(loss)
            .gap(1e-4)
            .check()
            .unwrap();
        let report = svm.fit_stream(&path, dir.path()).unwrap();
        let t = &report.model.training;
        let gap = t.gap.unwrap();
        assert!(
            t.converged && matches!(t.stop, StopReason::Gap | StopReason::Converged),
            "{bias:?} {loss:?}: {t:?}"
        );
        assert!(gap <= 1e-4 * t.objective, "{gap}");
        assert!(
            t.objective >= opt * (1.0 - 1e-9),
            "{} below the optimum {opt}",
            t.objective
        );
        assert!(
            t.objective - gap <= opt * (1.0 + 1e-9),
            "the bound {} passes {opt}",
            t.objective - gap
        );
        assert!(
            t.objective <= opt * (1.0 + 1e-4),
            "{} vs {opt}",
            t.objective
        );
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    }
}

#[test]
fn streamed_pegasos_and_subgradient_report_true_bounds_and_say_when_short() {
    let dir = tempfile::tempdir().unwrap();
    let path = heart_file(dir.path());
    for bias in [Bias::Feature, Bias::Unregularized, Bias::None] {
        let opt = optimum(bias, BinaryLoss::Hinge);
        for solver in [
            LinearSolver::Pegasos(LinearSolver::default_pegasos()),
            LinearSolver::from(SolverKind::Subgradient),
        ] {
            let svm = LinearSvmParams::new()
                .bias(bias)
                .solver(solver)
                .epochs(30.0)
                .check()
                .unwrap();
            let report = svm.fit_stream(&path, dir.path()).unwrap();
            let t = &report.model.training;
            let dual = t.objective - t.gap.unwrap();
            assert!(
                t.objective >= opt * (1.0 - 1e-9),
                "{solver}: {} < {opt}",
                t.objective
            );
            assert!(
                dual <= opt * (1.0 + 1e-9),
                "{solver} {bias:?}: bound {dual} > {opt}"
            );
            assert!(dual > 0.0, "{solver} {bias:?}: no bound");
            assert_eq!(
                t.converged,
                report.warnings.is_empty(),
                "{:?}",
                report.warnings
            );
            if !t.converged {
                assert!(
                    report.warnings[0].contains("not converged"),
                    "{:?}",
                    report.warnings
                );
            }
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_model_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = heart_file(dir.path());
    for solver in [
        LinearSolver::from(SolverKind::Dcd),
        LinearSolver::Pegasos(LinearSolver::default_pegasos()),
    ] {
        let bytes = |seed: u64| {
            let svm = LinearSvmParams::new()
                .solver(solver)
                .seed(seed)
                .epochs(12.0);
            let model = svm
                .check()
                .unwrap()
                .fit_stream(&path, dir.path())
                .unwrap()
                .model;
            let out = dir.path().join("m.model");
            model.save(&out).unwrap();
            std::fs::read(&out).unwrap()
        };
        assert_eq!(bytes(3), bytes(3), "{solver}");
        assert_ne!(bytes(3), bytes(4), "{solver}: the seed chooses the order");
    }
}

#[test]
fn what_cannot_stream_is_refused_naming_why() {
    let dir = tempfile::tempdir().unwrap();
    let path = heart_file(dir.path());
    let refused = |p: LinearSvmParams, why: &str| {
        let e = p
            .check()
            .unwrap()
            .fit_stream(&path, dir.path())
            .unwrap_err()
            .to_string();
        assert!(e.contains(why), "{why}: {e}");
    };
    refused(
        LinearSvmParams::new().bias(Bias::Unregularized),
        "give feature or none",
    );
    refused(
        LinearSvmParams::new().solver(DcdParams::new().blocks(2)),
        "read one bucket at a time",
    );
    refused(
        LinearSvmParams::new()
            .solver(LinearSolver::Pegasos(LinearSolver::default_pegasos()))
            .loss(BinaryLoss::SquaredHinge),
        "hinge loss only",
    );
    let mut weighted = LinearSvmParams::new();
    weighted.class_weights = vec![(7.0, 2.0)];
    refused(weighted, "does not have");
    let svm = LinearSvmParams::new()
        .check()
        .unwrap()
        .sample_weights(vec![1.0; 270])
        .unwrap();
    let e = svm.fit_stream(&path, dir.path()).unwrap_err().to_string();
    assert!(e.contains("not built for streaming"), "{e}");
    let three = dir.path().join("three.svm");
    std::fs::write(&three, "1 1:1\n2 1:2\n3 1:3\n").unwrap();
    let e = LinearSvmParams::new()
        .check()
        .unwrap()
        .fit_stream(&three, dir.path())
        .unwrap_err();
    assert!(
        e.to_string().contains("three.svm") && e.to_string().contains("1, 2, 3"),
        "{e}"
    );
}

/// Iris scaled to [-1, 1] per feature, written to `dir` (SSG's one-pass bound is loose on raw iris).
pub(crate) fn scaled_iris(dir: &Path) -> PathBuf {
    let path = dir.join("iris.svm");
    let mut data = maxmargin::datasets::iris().unwrap();
    let x = &data.x;
    let scaler =
        maxmargin::core::scale::Scaler::fit(Scaling::MaxAbs, x.rows(), x.n_rows(), x.n_features());
    data.x = scaler.unwrap().transform(&data.x);
    maxmargin::io::libsvm::write(&path, &data).unwrap();
    path
}

#[test]
fn streamed_ssg_certifies_a_multiclass_model_against_the_crammer_singer_optimum() {
    use maxmargin::structured_svm::{StructSolverKind, StructuredSvmParams, Task};
    let dir = tempfile::tempdir().unwrap();
    let path = scaled_iris(dir.path());
    let data = maxmargin::io::libsvm::read(&path).unwrap();
    // λ = 0.01: the subgradient method certifies 2% there within its budget (at the default C = 1, λ = 1/150,
    // it needs more passes).
    let lambda = maxmargin::core::objective::Regularization::Lambda(0.01);
    let mut exact = StructuredSvmParams::new(Task::Multiclass);
    exact.regularization = lambda;
    exact.gap = Some(1e-9);
    exact.epsilon = 1e-12;
    let opt = (exact.check().unwrap())
        .fit_multiclass(&data, &mut ())
        .unwrap()
        .model
        .training
        .objective;
    let mut p = StructuredSvmParams::new(Task::Multiclass);
    p.regularization = lambda;
    p.solver = StructSolverKind::Ssg;
    p.gap = Some(0.02);
    let report = p
        .check()
        .unwrap()
        .fit_multiclass_stream(&path, dir.path())
        .unwrap();
    let t = &report.model.training;
    let gap = t.gap.unwrap();
    assert!(t.converged && gap <= 0.02 * t.objective, "{t:?}");
    assert!(
        t.objective >= opt * (1.0 - 1e-9) && t.objective - gap <= opt * (1.0 + 1e-9),
        "{t:?} vs {opt}"
    );
    assert_eq!(report.model.classes, [0.0, 1.0, 2.0]);
    // Another solver, or what needs the rows in memory, is refused naming why.
    for (solver, why) in [
        (StructSolverKind::Dcd, "multiclass with ssg can"),
        (StructSolverKind::Bcfw, "multiclass with ssg can"),
    ] {
        let mut p = StructuredSvmParams::new(Task::Multiclass);
        p.solver = solver;
        let e = p
            .check()
            .unwrap()
            .fit_multiclass_stream(&path, dir.path())
            .unwrap_err();
        assert!(e.to_string().contains(why), "{e}");
    }
    // Raw iris with --scale maxabs: one statistics pass, the scaler kept in the model as in memory.
    let raw = dir.path().join("raw.svm");
    std::fs::write(&raw, maxmargin::datasets::IRIS).unwrap();
    let mut p = StructuredSvmParams::new(Task::Multiclass);
    p.regularization = lambda;
    p.solver = StructSolverKind::Ssg;
    p.scale = Scaling::MaxAbs;
    let svm = p.check().unwrap();
    let streamed = svm.fit_multiclass_stream(&raw, dir.path()).unwrap().model;
    assert!(streamed.training.converged, "{:?}", streamed.training);
    let mut q = StructuredSvmParams::new(Task::Multiclass);
    q.regularization = lambda;
    q.scale = Scaling::MaxAbs;
    let raw_data = maxmargin::io::libsvm::read(&raw).unwrap();
    let memory = q
        .check()
        .unwrap()
        .fit_multiclass(&raw_data, &mut ())
        .unwrap()
        .model;
    assert_eq!(streamed.scaler, memory.scaler);
}

#[test]
fn streamed_scaling_is_the_in_memory_scaling() {
    let dir = tempfile::tempdir().unwrap();
    let data = maxmargin::datasets::iris().unwrap();
    // Two classes of raw iris (features up to 7.9).
    let rows: Vec<usize> = (0..data.n_samples())
        .filter(|&i| data.labels[i] != 2.0)
        .collect();
    let two = data.select(&rows);
    let path = dir.path().join("two.svm");
    maxmargin::io::libsvm::write(&path, &two).unwrap();
    let p = LinearSvmParams::new().scale(Scaling::MaxAbs).gap(1e-4);
    let memory = p.clone().check().unwrap().fit(&two).unwrap();
    let streamed = p
        .check()
        .unwrap()
        .fit_stream(&path, dir.path())
        .unwrap()
        .model;
    assert_eq!(streamed.scaler, memory.scaler);
    let (a, b) = (streamed.training.objective, memory.training.objective);
    assert!((a - b).abs() <= 2e-4 * b, "{a} vs {b}");
    assert!(streamed.training.converged);
}

#[test]
fn issue_30_streamed_runs_take_the_trainers_budgets_tolerance_and_best_iterate() {
    let dir = tempfile::tempdir().unwrap();
    let path = heart_file(dir.path());
    let pegasos = || LinearSolver::Pegasos(LinearSolver::default_pegasos());
    // A step budget ends inside a pass, at that step, as in memory.
    let svm = LinearSvmParams::new()
        .solver(pegasos())
        .iterations(1000)
        .check()
        .unwrap();
    let t = svm.fit_stream(&path, dir.path()).unwrap().model.training;
    assert_eq!(
        (t.iterations, t.stop),
        (1000, StopReason::MaxIterations),
        "{t:?}"
    );
    assert!((t.epochs - 1000.0 / 270.0).abs() < 1e-9, "{t:?}");
    // The tolerance and the best iterate, refused before the streams ran in the trainer's loop.
    let mut p = LinearSvmParams::new().solver(pegasos()).epochs(400.0);
    p.budget.tolerance = Some(1e-3);
    p.budget.keep_best = true;
    p.budget.gap_tolerance = Some(1e-12);
    let report = p.check().unwrap().fit_stream(&path, dir.path()).unwrap();
    let t = &report.model.training;
    assert_eq!(t.stop, StopReason::Tolerance, "{t:?}");
    assert!(t.epochs < 400.0, "{t:?}");
    let best = report
        .trace
        .iter()
        .map(|r| r.objective)
        .fold(f64::INFINITY, f64::min);
    assert!(
        t.objective <= best,
        "{} vs the trace's best {best}",
        t.objective
    );
}

/// Issue 23: a streamed model records the same sketch of its training rows as an in-memory model of the same
/// file (taken as the stream parses them), so `calibrate` and `threshold` warn about training rows after
/// `--stream` too; a multiclass model streamed by SSG as well.
#[test]
fn issue_23_streamed_models_sketch_their_rows_as_in_memory_ones() {
    use maxmargin::structured_svm::{StructSolverKind, StructuredSvmParams, Task};
    let dir = tempfile::tempdir().unwrap();
    let path = heart_file(dir.path());
    let data = maxmargin::io::libsvm::read(&path).unwrap();
    let svm = LinearSvmParams::new().check().unwrap();
    let sketch = |m: &LinearModel| m.inputs.as_ref().and_then(|i| i.rows.clone());
    let in_memory = sketch(&svm.fit(&data).unwrap()).unwrap();
    let streamed = sketch(&svm.fit_stream(&path, dir.path()).unwrap().model).unwrap();
    assert_eq!(streamed, in_memory);
    assert_eq!(
        streamed.overlap(&data),
        Some(maxmargin::inputs::Overlap::Same)
    );
    let iris = scaled_iris(dir.path());
    let iris_data = maxmargin::io::libsvm::read(&iris).unwrap();
    let mut p = StructuredSvmParams::new(Task::Multiclass);
    p.solver = StructSolverKind::Ssg;
    p.max_passes = Some(2.0);
    let svm = p.check().unwrap();
    let rows = |m: &maxmargin::structured_svm::StructuredModel| {
        m.inputs.as_ref().and_then(|i| i.rows.clone())
    };
    let in_memory = rows(&svm.fit_multiclass(&iris_data, &mut ()).unwrap().model).unwrap();
    let streamed = rows(&svm.fit_multiclass_stream(&iris, dir.path()).unwrap().model).unwrap();
    assert_eq!(streamed, in_memory);
}

#[test]
fn issue_30_streamed_runs_resumed_from_their_checkpoints_end_with_the_same_bits() {
    use maxmargin::checkpoint::CheckpointPlan;
    let dir = tempfile::tempdir().unwrap();
    let path = heart_file(dir.path());
    let ck = dir.path().join("run.ckpt");
    let pegasos = LinearSolver::Pegasos(LinearSolver::default_pegasos());
    let subgradient = LinearSolver::from(SolverKind::Subgradient);
    // DCD reads the file, then holds its active rows in memory: stops on both sides of that, and one
    // with the logistic loss (the column keeps complements).
    for (name, params, stops) in [
        ("dcd", LinearSvmParams::new().gap(1e-7), &[1u64, 2, 6][..]),
        (
            "dcd logistic",
            LinearSvmParams::new().loss(BinaryLoss::Logistic).gap(1e-7),
            &[1, 3],
        ),
        (
            "pegasos",
            LinearSvmParams::new().solver(pegasos).epochs(9.0),
            &[2, 5],
        ),
        (
            "subgradient",
            LinearSvmParams::new().solver(subgradient).epochs(9.0),
            &[2, 5],
        ),
    ] {
        let fit = |p: LinearSvmParams, plan: CheckpointPlan| {
            let svm = p.check().unwrap().checkpoints(plan);
            svm.fit_stream(&path, dir.path()).unwrap().model
        };
        let whole = fit(params.clone(), CheckpointPlan::new());
        for &stop in stops {
            let budget = if name.starts_with("dcd") {
                params.clone().iterations(stop)
            } else {
                params.clone().epochs(stop as f64)
            };
            let stopped = fit(budget, CheckpointPlan::new().save_to(&ck));
            assert!(
                stopped.training.iterations < whole.training.iterations,
                "{name} {stop}: {:?}",
                stopped.training
            );
            let resumed = fit(params.clone(), CheckpointPlan::new().resume_from(&ck));
            let t = (&resumed.training, &whole.training);
            assert_eq!(
                (&resumed.w, resumed.b),
                (&whole.w, whole.b),
                "{name} {stop}"
            );
            assert_eq!(t.0.iterations, t.1.iterations, "{name} {stop}");
            assert_eq!(t.0.objective, t.1.objective, "{name} {stop}");
            assert_eq!(t.0.converged, t.1.converged, "{name} {stop}");
        }
        // Another seed orders the rows otherwise: refused, naming it.
        let e = params
            .clone()
            .seed(9)
            .check()
            .unwrap()
            .checkpoints(CheckpointPlan::new().resume_from(&ck))
            .fit_stream(&path, dir.path())
            .unwrap_err()
            .to_string();
        assert!(e.contains("seed"), "{name}: {e}");
        // An in-memory run does not take a streamed run's checkpoint.
        let data = maxmargin::datasets::heart_scale().unwrap();
        let svm = params.clone().check().unwrap();
        let e = svm
            .checkpoints(CheckpointPlan::new().resume_from(&ck))
            .fit(&data)
            .unwrap_err()
            .to_string();
        assert!(e.contains("stream"), "{name}: {e}");
    }
}

#[test]
fn issue_30_streamed_ssg_resumed_from_its_checkpoint_ends_with_the_same_bits() {
    use maxmargin::checkpoint::CheckpointPlan;
    use maxmargin::structured_svm::{StructSolverKind, StructuredSvmParams, Task};
    let dir = tempfile::tempdir().unwrap();
    let path = scaled_iris(dir.path());
    let ck = dir.path().join("ssg.ckpt");
    let fit = |passes: f64, plan: CheckpointPlan| {
        let mut p = StructuredSvmParams::new(Task::Multiclass).max_passes(passes);
        p.solver = StructSolverKind::Ssg;
        p.gap = Some(1e-6);
        let svm = p.check().unwrap().checkpoints(plan);
        svm.fit_multiclass_stream(&path, dir.path()).unwrap().model
    };
    let whole = fit(30.0, CheckpointPlan::new());
    let _ = fit(7.0, CheckpointPlan::new().save_to(&ck));
    let resumed = fit(30.0, CheckpointPlan::new().resume_from(&ck));
    assert_eq!(resumed.w, whole.w);
    assert_eq!(
        (resumed.training.iterations, resumed.training.objective),
        (whole.training.iterations, whole.training.objective)
    );
}
