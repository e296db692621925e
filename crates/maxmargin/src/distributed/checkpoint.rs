//! Checkpoints of a run over ranks: the trainer's checkpoints (one mechanism for every solver and mode), each
//! rank writing its own [`Run`] to `PATH.rank<r>` (atomically, through [`model_file`]) when rank 0's clock
//! says a period has passed (the trainer broadcasts it, so all ranks write after the same round) and at the
//! end. A run resumes with the same number of ranks, the same data and the problem-shaping parameters, each
//! rank from its own file, and ends with the same bits as a run never stopped.

use crate::Error;
use crate::checkpoint::{CheckpointPlan, Made, Resumable, SameProblem, Serde, Store};
use maxmargin_io::{IoError, model_file};
use maxmargin_optim::{Collective, Observer, OptimError, Run, Trainer};
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

/// Trains `solver` over the ranks of `comm` as the plan asks ([`crate::checkpoint::train_with`]): each rank
/// resumes from its own file `PATH.rank<r>` (same number of ranks, examples on this rank, dimension, λ and
/// problem-shaping parameters) or starts from `init`, and writes its file when rank 0's clock says a period
/// has passed and at the end; a run resumed from any of them ends with the same bits as one never stopped.
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
    S: Resumable<P>,
    Pm: SameProblem,
{
    let files = RankFiles::new(run_kind(kind), made, params, comm, n_local);
    let run = (comm, trainer, solver, problem);
    crate::checkpoint::train_with(&files, run, init, plan, observer)
}

impl<Pm, St, O> Store<St, O> for RankFiles<'_, Pm>
where
    Pm: SameProblem,
    St: Serde,
    O: Serde,
{
    fn file(&self, path: &Path) -> PathBuf {
        rank_path(path, self.rank)
    }

    /// This rank's run, refused when the file does not exist, is of an older format or of the round loops'
    /// kind, or was made for another rank, number of ranks, problem or parameters.
    fn load(&self, file: &Path) -> Result<Run<St, O>, Error> {
        if !file.exists() {
            // The path without the rank's suffix is one process's checkpoint.
            let one = file.with_extension("");
            let why = if one.exists()
                && file
                    .extension()
                    .is_some_and(|e| e.to_string_lossy().starts_with("rank"))
            {
                format!(
                    "{} is one process's checkpoint: resume it without mpirun",
                    one.display()
                )
            } else {
                "resume with the number of ranks it was made with".to_string()
            };
            return Err(OptimError::Checkpoint {
                message: format!(
                    "{}: no checkpoint for rank {} of {} ({why})",
                    file.display(),
                    self.rank,
                    self.size
                ),
            }
            .into());
        }
        let header = model_file::read_header(file)?;
        if header.kind.starts_with("checkpoint-ranks-") {
            return Err(IoError::BadModel {
                path: file.to_path_buf(),
                message: "a checkpoint over ranks from an older maxmargin (a round loop's state, not the \
                          trainer's run): start the run again"
                    .into(),
            }
            .into());
        }
        crate::checkpoint::refuse_older(file, &self.kind)?;
        let (_, f): (_, RunFile<Pm, St, O>) = model_file::load(file, &self.kind)?;
        if (f.rank, f.size) != (self.rank, self.size) {
            return Err(IoError::BadModel {
                path: file.to_path_buf(),
                message: format!(
                    "checkpoint of rank {} of {}; this is rank {} of {} (resume with the number of ranks it \
                     was made with)",
                    f.rank, f.size, self.rank, self.size
                ),
            }
            .into());
        }
        let local = Some((f.n_local, self.n_local));
        crate::checkpoint::check_made(file, (f.made, &f.params), (self.made, self.params), local)?;
        Ok(f.run)
    }

    fn save(&self, file: &Path, run: &Run<St, O>) -> Result<(), Error> {
        let payload = RunFileRef {
            made: self.made,
            params: self.params,
            rank: self.rank,
            size: self.size,
            n_local: self.n_local,
            run,
        };
        Ok(model_file::save(file, &self.kind, &payload)?)
    }
}
