//! Structured runs stopped and resumed from their checkpoints (the bits of a run never stopped; a checkpoint
//! of another run refused by name), warm starts from a model, and the latent rounds' checkpoints.

use maxmargin::checkpoint::CheckpointPlan;
use maxmargin::structured_svm::{StructSolverKind, StructuredSvmParams, Task};

#[test]
fn checkpoint_and_resume_continue_exactly() {
    let data = maxmargin::datasets::iris().unwrap();
    let dir = tempfile::tempdir().unwrap();
    for solver in [
        StructSolverKind::Bcfw,
        StructSolverKind::Oneslack,
        StructSolverKind::Ssg,
        StructSolverKind::Nslack,
    ] {
        let base = StructuredSvmParams::new(Task::Multiclass)
            .solver(solver)
            .lambda(0.01)
            .epsilon(1e-6)
            .seed(3);
        let straight = base
            .clone()
            .max_passes(40.0)
            .check()
            .unwrap()
            .fit_multiclass(&data, &mut ())
            .unwrap()
            .model;
        let ck = dir.path().join(format!("{solver:?}.ck"));
        base.clone()
            .max_passes(15.0)
            .check()
            .unwrap()
            .checkpoints(CheckpointPlan::new().save_to(&ck))
            .fit_multiclass(&data, &mut ())
            .unwrap();
        let resumed = base
            .clone()
            .max_passes(40.0)
            .check()
            .unwrap()
            .checkpoints(CheckpointPlan::new().resume_from(&ck))
            .fit_multiclass(&data, &mut ())
            .unwrap()
            .model;
        let bits = |w: &[f64]| w.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&resumed.w), bits(&straight.w), "{solver:?}");
        assert_eq!(
            resumed.training.passes, straight.training.passes,
            "{solver:?}"
        );
    }
    // A checkpoint of another solver or problem is a clear error.
    let ck = dir.path().join("Bcfw.ck");
    let other = StructuredSvmParams::new(Task::Multiclass)
        .solver(StructSolverKind::Ssg)
        .check()
        .unwrap()
        .checkpoints(CheckpointPlan::new().resume_from(&ck));
    let e = other.fit_multiclass(&data, &mut ()).unwrap_err();
    assert!(e.to_string().contains("checkpoint-multiclass-bcfw"), "{e}");
    let wrong_lambda = StructuredSvmParams::new(Task::Multiclass)
        .solver(StructSolverKind::Bcfw)
        .lambda(0.5)
        .check()
        .unwrap()
        .checkpoints(CheckpointPlan::new().resume_from(&ck));
    let e = wrong_lambda.fit_multiclass(&data, &mut ()).unwrap_err();
    assert!(e.to_string().contains("checkpoint made for"), "{e}");
}

#[test]
fn ssg_warm_starts_from_a_model() {
    let data = maxmargin::datasets::iris().unwrap();
    let lambda = 0.01;
    let best = StructuredSvmParams::new(Task::Multiclass)
        .lambda(lambda)
        .epsilon(1e-5)
        .max_passes(2000.0);
    let good = best
        .check()
        .unwrap()
        .fit_multiclass(&data, &mut ())
        .unwrap()
        .model;
    let ssg = StructuredSvmParams::new(Task::Multiclass)
        .solver(StructSolverKind::Ssg)
        .lambda(lambda)
        .max_passes(1.0)
        .seed(2);
    let cold = ssg
        .clone()
        .check()
        .unwrap()
        .fit_multiclass(&data, &mut ())
        .unwrap()
        .model;
    let warm = ssg
        .check()
        .unwrap()
        .warm_start_from(&good)
        .unwrap()
        .fit_multiclass(&data, &mut ())
        .unwrap()
        .model;
    // One pass from the optimum stays near it; one pass from zero does not.
    assert!(
        warm.training.objective < cold.training.objective,
        "{} vs {}",
        warm.training.objective,
        cold.training.objective
    );
    // A warm-started run's checkpoint resumes to the bits of the run never stopped (the weights it holds
    // are in the layout it trains on, whether or not the resumed run is warm-started).
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("warm.ck");
    let warm_ssg = |passes: f64| {
        StructuredSvmParams::new(Task::Multiclass)
            .solver(StructSolverKind::Ssg)
            .lambda(lambda)
            .max_passes(passes)
            .seed(2)
            .check()
            .unwrap()
    };
    let straight = (warm_ssg(4.0).warm_start_from(&good).unwrap())
        .fit_multiclass(&data, &mut ())
        .unwrap()
        .model;
    (warm_ssg(2.0).warm_start_from(&good).unwrap())
        .checkpoints(CheckpointPlan::new().save_to(&ck))
        .fit_multiclass(&data, &mut ())
        .unwrap();
    let resumed = warm_ssg(4.0)
        .checkpoints(CheckpointPlan::new().resume_from(&ck))
        .fit_multiclass(&data, &mut ())
        .unwrap()
        .model;
    let bits = |w: &[f64]| w.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&resumed.w), bits(&straight.w));
    let other = StructuredSvmParams::new(Task::Multiclass)
        .check()
        .unwrap()
        .warm_start_from(&good);
    assert!(
        other
            .unwrap_err()
            .to_string()
            .contains("needs the ssg solver")
    );
}

#[test]
fn latent_rounds_checkpoint_and_resume_to_the_same_bits() {
    let seqs = maxmargin::io::svm_hmm::read_from(
        maxmargin::datasets::periodic_tags(60, 12, 0.3, 5).as_bytes(),
        "periodic".as_ref(),
    )
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("rounds.ckpt");
    let svm = |seed: u64, plan: CheckpointPlan| {
        StructuredSvmParams::new(Task::Chain)
            .seed(seed)
            .check()
            .unwrap()
            .checkpoints(plan)
    };
    let whole = svm(1, CheckpointPlan::new().save_to(&file))
        .fit_latent_chain(&seqs, 2, &mut ())
        .unwrap()
        .model;
    let resumed = svm(1, CheckpointPlan::new().resume_from(&file))
        .fit_latent_chain(&seqs, 2, &mut ())
        .unwrap()
        .model;
    assert_eq!(resumed, whole);
    let err = svm(2, CheckpointPlan::new().resume_from(&file))
        .fit_latent_chain(&seqs, 2, &mut ())
        .unwrap_err()
        .to_string();
    assert!(err.contains("seed 1; this run has 2"), "{err}");
    let err = svm(1, CheckpointPlan::new().resume_from(&file))
        .fit_latent_chain(&seqs, 3, &mut ())
        .unwrap_err()
        .to_string();
    assert!(err.contains("checkpoint made for"), "{err}");
    let err = svm(1, CheckpointPlan::new().save_to(&file).every(5.0))
        .fit_latent_chain(&seqs, 2, &mut ())
        .unwrap_err()
        .to_string();
    assert!(err.contains("after every round"), "{err}");
    // Every later round depends on the budgets too: a resume with another is refused by name.
    let err = StructuredSvmParams::new(Task::Chain)
        .seed(1)
        .max_passes(7.0)
        .check()
        .unwrap()
        .checkpoints(CheckpointPlan::new().resume_from(&file))
        .fit_latent_chain(&seqs, 2, &mut ())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("checkpoint made with") && err.contains("passes"),
        "{err}"
    );
    let data = maxmargin::structured_svm::StructData::Chain(&seqs);
    let err = svm(1, CheckpointPlan::new().save_to(&file))
        .cross_validate_latent(data, &[0, 1].repeat(30), Some(2))
        .unwrap_err()
        .to_string();
    assert!(err.contains("one per fold"), "{err}");
    // A truncated checkpoint is refused naming the file, not a panic.
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
    let err = svm(1, CheckpointPlan::new().resume_from(&file))
        .fit_latent_chain(&seqs, 2, &mut ())
        .unwrap_err()
        .to_string();
    assert!(err.contains("rounds.ckpt"), "{err}");
}
