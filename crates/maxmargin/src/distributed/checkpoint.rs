//! Checkpoints of a run over ranks: the trainer's checkpoints (one mechanism for every solver and mode), each
//! rank writing its own [`Run`] to `PATH.rank<r>` (atomically, through [`model_file`]) when rank 0's clock
//! says a period has passed (the trainer broadcasts it, so all ranks write after the same round) and at the
//! end. A run resumes with the same number of ranks, the same data and the problem-shaping parameters, each
//! rank from its own file, and ends with the same bits as a run never stopped.

use crate::Error;
use crate::checkpoint::{CheckpointPlan, Made, SameProblem};
use maxmargin_io::{IoError, model_file};
use maxmargin_optim::{Checkpoints, Collective, Observer, OptimError, Run, Solver, Trainer};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// This rank's checkpoint file for the plan's `path`.
pub fn rank_path(path: &Path, rank: usize) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".rank{rank}"));
    PathBuf::from(name)
}

/// This rank's files as the plan says, and what they must have been made for.
pub(crate) struct RankFiles<'a, Pm> {
    kind: String,
    made: Made,
    params: &'a Pm,
    rank: usize,
    size: usize,
    n_local: usize,
}

impl<'a, Pm> RankFiles<'a, Pm> {
    /// This rank's files of `kind`, for a run `made` with `params` and `n_local` examples here.
    pub(crate) fn new(
        kind: String,
        made: Made,
        params: &'a Pm,
        comm: &dyn Collective,
        n_local: usize,
    ) -> Self {
        Self {
            kind,
            made,
            params,
            rank: comm.rank(),
            size: comm.size(),
            n_local,
        }
    }
}

/// One rank's checkpoint of a run the trainer drives over ranks: what it was made for, the rank, and the
/// trainer's [`Run`] (the rank's solver state, the trace, the next evaluation, the seconds).
#[derive(Serialize, Deserialize)]
struct RunFile<Pm, St, O> {
    made: Made,
    params: Pm,
    rank: usize,
    size: usize,
    n_local: usize,
    run: Run<St, O>,
}

#[derive(Serialize)]
struct RunFileRef<'a, Pm, St, O> {
    made: Made,
    params: &'a Pm,
    rank: usize,
    size: usize,
    n_local: usize,
    run: &'a Run<St, O>,
}

/// The kind of a rank's file of a run the trainer drives (`checkpoint-rank-TASK-SOLVER`); the kind before it,
/// `checkpoint-ranks-…`, held a round loop's state and is refused by name.
pub(crate) fn run_kind(kind: &str) -> String {
    format!("checkpoint-rank-{kind}")
}

/// Trains `solver` over the ranks of `comm` as the plan asks: each rank resumes from its own file
/// `PATH.rank<r>` (same number of ranks, examples on this rank, dimension, λ and problem-shaping parameters)
/// or starts from `init`, and writes its file when rank 0's clock says a period has passed and at the end;
/// a run resumed from any of them ends with the same bits as one never stopped.
#[allow(clippy::too_many_arguments)]
pub(crate) fn train_over<P, S, Pm>(
    comm: &dyn Collective,
    trainer: &Trainer,
    solver: &mut S,
    problem: &P,
    init: impl FnOnce(&mut S) -> Result<S::State, Error>,
    (kind, made, params): (&str, Made, &Pm),
    (plan, n_local): (&CheckpointPlan, usize),
    observer: &mut dyn Observer,
) -> Result<maxmargin_optim::Resumed<S, P>, Error>
where
    S: Solver<P>,
    S::State: Serialize + DeserializeOwned,
    S::Output: Serialize + DeserializeOwned,
    Pm: Serialize + DeserializeOwned + SameProblem + Clone,
{
    plan.check()?;
    let kind = run_kind(kind);
    let files = RankFiles::new(kind, made, params, comm, n_local);
    let run = match &plan.resume {
        Some(path) => {
            let mine = files.mine(path)?;
            let run = files.load_run(&mine)?;
            // The decoded state is checked against this rank's share before any round reads it.
            solver.check_state(problem, &run.state).map_err(|e| {
                maxmargin_io::IoError::BadModel {
                    path: mine.clone(),
                    message: e.to_string(),
                }
            })?;
            run
        }
        None => {
            let state = init(solver)?;
            trainer.start(solver, problem, state)
        }
    };
    let write = |run: &Run<S::State, S::Output>| -> Result<(), OptimError> {
        let Some(path) = &plan.save_to else {
            return Ok(());
        };
        let file = RunFileRef {
            made,
            params,
            rank: files.rank,
            size: files.size,
            n_local,
            run,
        };
        model_file::save(&rank_path(path, files.rank), &files.kind, &file).map_err(|e| {
            OptimError::Checkpoint {
                message: e.to_string(),
            }
        })
    };
    let (fit, run) = match (&plan.save_to, plan.every_seconds) {
        (Some(_), Some(every_seconds)) => {
            let mut save = |run: &Run<S::State, S::Output>| write(run);
            let checkpoints = Checkpoints {
                every_seconds,
                save: &mut save,
            };
            trainer.resume_over(comm, solver, problem, run, observer, Some(checkpoints))?
        }
        _ => trainer.resume_over(comm, solver, problem, run, observer, None)?,
    };
    write(&run)?;
    Ok((fit, run))
}

impl<Pm> RankFiles<'_, Pm>
where
    Pm: Serialize + DeserializeOwned + SameProblem + Clone,
{
    /// This rank's file for the plan's `path`, refused when it does not exist.
    fn mine(&self, path: &Path) -> Result<PathBuf, Error> {
        let mine = rank_path(path, self.rank);
        if !mine.exists() {
            return Err(OptimError::Checkpoint {
                message: format!(
                    "{}: no checkpoint for rank {} of {} (resume with the number of ranks it was made with)",
                    mine.display(),
                    self.rank,
                    self.size
                ),
            }
            .into());
        }
        Ok(mine)
    }

    fn load_run<St, O>(&self, path: &Path) -> Result<Run<St, O>, Error>
    where
        St: Serialize + DeserializeOwned,
        O: Serialize + DeserializeOwned,
    {
        let header = model_file::read_header(path)?;
        if header.kind.starts_with("checkpoint-ranks-") {
            return Err(IoError::BadModel {
                path: path.to_path_buf(),
                message: "a checkpoint over ranks from an older maxmargin (a round loop's state, not the \
                          trainer's run): start the run again"
                    .into(),
            }
            .into());
        }
        let (_, file): (_, RunFile<Pm, St, O>) = model_file::load(path, &self.kind)?;
        self.check(
            (file.rank, file.size, file.n_local),
            file.made,
            &file.params,
            path,
        )?;
        Ok(file.run)
    }

    /// Refuses a file of another rank or number of ranks, another problem, or other problem-shaping
    /// parameters.
    fn check(
        &self,
        (rank, size, n_local): (usize, usize, usize),
        made: Made,
        params: &Pm,
        path: &Path,
    ) -> Result<(), Error> {
        let bad = |message: String| -> Error {
            IoError::BadModel {
                path: path.to_path_buf(),
                message,
            }
            .into()
        };
        if (rank, size) != (self.rank, self.size) {
            return Err(bad(format!(
                "checkpoint of rank {rank} of {size}; this is rank {} of {} (resume with the number of ranks it \
                 was made with)",
                self.rank, self.size
            )));
        }
        let sizes = |m: &Made| (m.n_samples, m.dim, m.lambda.to_bits());
        if sizes(&made) != sizes(&self.made) || n_local != self.n_local {
            return Err(bad(format!(
                "checkpoint made for {} examples ({} on this rank), {} weights, lambda {}; this run has {} ({}), \
                 {}, {}",
                made.n_samples,
                n_local,
                made.dim,
                made.lambda,
                self.made.n_samples,
                self.n_local,
                self.made.dim,
                self.made.lambda
            )));
        }
        if let Some((name, stored, now)) = self.params.differs_from(params) {
            return Err(bad(format!(
                "checkpoint made with {name} {stored}; this run has {now} (resume with the settings it was made with)"
            )));
        }
        if made.rows != self.made.rows {
            return Err(bad(format!(
                "checkpoint made for other examples than this rank's (the same number, {n_local}, but other rows, \
                 labels or weights): resume on the data it was made with"
            )));
        }
        Ok(())
    }
}
