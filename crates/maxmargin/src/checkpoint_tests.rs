//! The checkpointed run's own tests: what happens when its file cannot be written.

use super::*;
use maxmargin_optim::{Bias, BinaryProblem, Budget, SubgradientParams};

/// A store whose every write fails, as on a full disk.
struct FullDisk;

impl<St, O> Store<St, O> for FullDisk {
    fn load(&self, file: &Path) -> Result<Run<St, O>, Error> {
        Err(full(file, "nothing to read"))
    }
    fn save(&self, file: &Path, _run: &Run<St, O>) -> Result<(), Error> {
        Err(full(file, "No space left on device"))
    }
}

fn full(file: &Path, why: &str) -> Error {
    IoError::Io {
        path: file.to_path_buf(),
        cause: std::io::Error::other(why.to_string()),
    }
    .into()
}

/// A final checkpoint that cannot be written leaves the trained model to the caller, with a warning that
/// names the file and why; the model is the one a run without a checkpoint gives.
#[test]
fn a_final_checkpoint_that_cannot_be_written_keeps_the_model() {
    let (x, y) = maxmargin_core::worked::lesson_rows();
    let problem = BinaryProblem::new(
        &x,
        &y,
        maxmargin_core::objective::Lambda::new(0.04).unwrap(),
        Bias::None,
    )
    .unwrap();
    let trainer = Trainer::new(Budget::iterations(50)).unwrap();
    let fit = |plan: &CheckpointPlan, heard: &mut Heard| {
        let mut solver = SubgradientParams::new().check().unwrap();
        let init = |s: &mut _| Ok(Solver::init(s, &problem)?);
        let run = (&Single as &dyn Collective, &trainer, &mut solver, &problem);
        train_with(&FullDisk, run, init, plan, heard).unwrap().0
    };
    let mut heard = Heard::Kept(Vec::new());
    let plain = fit(&CheckpointPlan::default(), &mut heard);
    assert!(matches!(&heard, Heard::Kept(w) if w.is_empty()));
    let saved = fit(
        &CheckpointPlan::default().save_to(Path::new("run.ckpt")),
        &mut heard,
    );
    assert_eq!(saved.output, plain.output);
    let Heard::Kept(warnings) = heard else {
        unreachable!("the observer keeps what it hears")
    };
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("run.ckpt") && warnings[0].contains("No space left"),
        "{}",
        warnings[0]
    );
}
