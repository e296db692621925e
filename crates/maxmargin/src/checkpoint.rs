//! Checkpoint files: one kind of file for every solver and task, written by the [`Trainer`] at the end of a
//! run and, when asked, every so many seconds during it; a run resumed from one ends with the same bits as
//! a run that never stopped.
//!
//! A checkpoint holds what it was made for (examples, weights, λ, the parameters) and the whole
//! [`Run`]: the solver's state (weights, duals, working sets, counters, the RNG) and the trainer's (trace,
//! next evaluation, best output, seconds). It is written through [`model_file::save`], so atomically: a
//! kill during a write leaves the previous checkpoint whole.

use crate::Error;
use maxmargin_io::{IoError, model_file};
use maxmargin_optim::{Checkpoints, Observer, OptimError, Run, Solver, Trainer};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The oldest format version whose checkpoints this build resumes (format 3 added the trainer's state, format 4
/// the logistic duals' complements to dual coordinate descent's, format 5 the approximated kernel to the
/// binary parameters they store, format 6 a digest of the examples).
pub const MIN_FORMAT_VERSION: u32 = 6;

/// Where checkpoints go and where a run resumes from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CheckpointPlan {
    /// Continue from this checkpoint file.
    pub resume: Option<PathBuf>,
    /// Write checkpoints here (at the end of the run, and periodically with `every_seconds`).
    pub save_to: Option<PathBuf>,
    /// Seconds between checkpoints during the run.
    pub every_seconds: Option<f64>,
}

impl CheckpointPlan {
    /// No checkpoints.
    pub fn new() -> Self {
        Self::default()
    }

    /// Continues from the checkpoint file at `path` (same data, solver and λ; budgets count from it).
    pub fn resume_from(mut self, path: &Path) -> Self {
        self.resume = Some(path.to_path_buf());
        self
    }

    /// Writes the run's state to `path` (atomically) at the end of training.
    pub fn save_to(mut self, path: &Path) -> Self {
        self.save_to = Some(path.to_path_buf());
        self
    }

    /// Also writes it every `seconds` during training (needs [`CheckpointPlan::save_to`]).
    pub fn every(mut self, seconds: f64) -> Self {
        self.every_seconds = Some(seconds);
        self
    }

    /// Checks the plan: a period needs a file, and must be positive and finite.
    ///
    /// # Errors
    /// [`Error::Optim`] naming the problem.
    pub fn check(&self) -> Result<(), Error> {
        if let Some(s) = self.every_seconds {
            if !(s.is_finite() && s > 0.0) {
                return Err(OptimError::InvalidParam {
                    name: "checkpoint-every",
                    value: s.to_string(),
                    reason: "must be a positive number of seconds",
                }
                .into());
            }
            if self.save_to.is_none() {
                return Err(OptimError::InvalidParam {
                    name: "checkpoint-every",
                    value: s.to_string(),
                    reason: "needs a checkpoint file to write (--checkpoint FILE)",
                }
                .into());
            }
        }
        Ok(())
    }

    /// Whether anything is asked of checkpoints.
    pub fn is_empty(&self) -> bool {
        self.resume.is_none() && self.save_to.is_none()
    }
}

/// What a run is made for; a checkpoint resumes only a run made for the same.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct Made {
    pub(crate) n_samples: usize,
    pub(crate) dim: usize,
    pub(crate) lambda: f64,
    /// A digest of the examples as the solver saw them (rows, targets, weights: `inputs::examples_digest`),
    /// so that a resume on other rows of the same shape is refused (format 6).
    pub(crate) rows: u64,
}

#[derive(Serialize)]
struct FileRef<'a, Pm, St, O> {
    made: Made,
    params: &'a Pm,
    run: &'a Run<St, O>,
}

/// A checkpoint file's contents.
#[derive(Serialize, Deserialize)]
pub(crate) struct CheckpointFile<Pm, St, O> {
    pub(crate) made: Made,
    params: Pm,
    pub(crate) run: Run<St, O>,
}

/// Parameters that shape the problem a checkpoint's state belongs to: a run resumes a state only with the
/// same ones (the budget, the tolerances and the thread count may change; the bias, the loss, the weights
/// and the scaling may not, since the state's vectors and boxes were made for them).
pub(crate) trait SameProblem {
    /// `(parameter, stored, this run's)` for the first parameter that differs.
    fn differs_from(&self, stored: &Self) -> Option<(&'static str, String, String)>;
}

/// The first pair of `(name, stored, current)` whose values differ, printed with `Debug`.
pub(crate) fn first_difference(
    pairs: &[(&'static str, &dyn std::fmt::Debug, &dyn std::fmt::Debug)],
) -> Option<(&'static str, String, String)> {
    pairs.iter().find_map(|(name, a, b)| {
        let (a, b) = (format!("{a:?}"), format!("{b:?}"));
        (a != b).then(|| (*name, a.to_lowercase(), b.to_lowercase()))
    })
}

/// Reads a checkpoint of `kind`, refusing one from an older format or made for another run (other examples,
/// dimension or λ, or other problem-shaping parameters than `expect`'s).
pub(crate) fn load<Pm, St, O>(
    path: &Path,
    kind: &str,
    expect: Option<(Made, &Pm)>,
) -> Result<CheckpointFile<Pm, St, O>, Error>
where
    Pm: Serialize + DeserializeOwned + SameProblem,
    St: Serialize + DeserializeOwned,
    O: Serialize + DeserializeOwned,
{
    let bad = |message: String| -> Error {
        IoError::BadModel {
            path: path.to_path_buf(),
            message,
        }
        .into()
    };
    let header = model_file::read_header(path)?;
    if header.format_version < MIN_FORMAT_VERSION && header.kind == kind {
        return Err(bad(format!(
            "a checkpoint of format {}, from an older maxmargin: start the run again",
            header.format_version
        )));
    }
    let (_, file): (_, CheckpointFile<Pm, St, O>) = model_file::load(path, kind)?;
    let Some((m, params)) = expect else {
        return Ok(file);
    };
    let sizes = |m: &Made| (m.n_samples, m.dim, m.lambda.to_bits());
    if sizes(&file.made) != sizes(&m) {
        return Err(bad(format!(
            "checkpoint made for {} examples, {} weights, lambda {}; this run has {}, {}, {}",
            file.made.n_samples, file.made.dim, file.made.lambda, m.n_samples, m.dim, m.lambda
        )));
    }
    if let Some((name, stored, now)) = params.differs_from(&file.params) {
        return Err(bad(format!(
            "checkpoint made with {name} {stored}; this run has {now} (resume with the settings it was made with)"
        )));
    }
    if file.made.rows != m.rows {
        return Err(bad(format!(
            "checkpoint made for other examples than these (the same number, {}, but other rows, labels or \
             weights): resume on the data it was made with",
            m.n_samples
        )));
    }
    Ok(file)
}

fn save<Pm: Serialize, St: Serialize, O: Serialize>(
    path: &Path,
    kind: &str,
    made: Made,
    params: &Pm,
    run: &Run<St, O>,
) -> Result<(), Error> {
    Ok(model_file::save(
        path,
        kind,
        &FileRef { made, params, run },
    )?)
}

/// Trains `solver` from the plan's checkpoint (or from `init` when there is none), writing checkpoints as
/// the plan asks; returns the fit and the final run.
#[allow(clippy::too_many_arguments)]
pub(crate) fn train<P, S, Pm>(
    trainer: &Trainer,
    solver: &mut S,
    problem: &P,
    init: impl FnOnce(&mut S) -> Result<S::State, Error>,
    (kind, made, params): (&str, Made, &Pm),
    plan: &CheckpointPlan,
    observer: &mut dyn Observer,
) -> Result<maxmargin_optim::Resumed<S, P>, Error>
where
    S: Solver<P>,
    S::State: Serialize + DeserializeOwned,
    S::Output: Serialize + DeserializeOwned,
    Pm: Serialize + DeserializeOwned + SameProblem,
{
    plan.check()?;
    let run = match &plan.resume {
        Some(path) => {
            let run = load::<Pm, S::State, S::Output>(path, kind, Some((made, params)))?.run;
            // The decoded state is checked against the problem before any step reads it.
            solver
                .check_state(problem, &run.state)
                .map_err(|e| IoError::BadModel {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
            run
        }
        None => {
            let state = init(solver)?;
            trainer.start(solver, problem, state)
        }
    };
    let (fit, run) = match (&plan.save_to, plan.every_seconds) {
        (Some(path), Some(every_seconds)) => {
            let mut write = |run: &Run<S::State, S::Output>| {
                save(path, kind, made, params, run).map_err(|e| OptimError::Checkpoint {
                    message: e.to_string(),
                })
            };
            let checkpoints = Checkpoints {
                every_seconds,
                save: &mut write,
            };
            trainer.resume(solver, problem, run, observer, Some(checkpoints))?
        }
        _ => trainer.resume(solver, problem, run, observer, None)?,
    };
    if let Some(path) = &plan.save_to {
        save(path, kind, made, params, &run)?;
    }
    Ok((fit, run))
}
