//! Checkpoints of a run over ranks: at round boundaries every rank writes its own state to `PATH.rank<r>`
//! (atomically, through [`model_file`]), when rank 0's clock says a period has passed (its decision is
//! broadcast, so all ranks write at the same round) and at the end. A run resumes with the same number of
//! ranks, the same data and the problem-shaping parameters, each rank from its own file, and ends with the
//! same bits as a run never stopped.

use crate::Error;
use crate::checkpoint::{CheckpointPlan, Made, SameProblem};
use maxmargin_io::{IoError, model_file};
use maxmargin_optim::{Collective, OptimError, RoundCheckpoints, RoundState, RoundStateRef};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One rank's checkpoint file.
#[derive(Serialize, Deserialize)]
struct RankFile<Pm, S> {
    made: Made,
    params: Pm,
    rank: usize,
    size: usize,
    /// This rank's examples.
    n_local: usize,
    state: RoundState<S>,
}

/// This rank's checkpoint file for the plan's `path`.
pub fn rank_path(path: &Path, rank: usize) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".rank{rank}"));
    PathBuf::from(name)
}

/// The facade's [`RoundCheckpoints`]: files per rank as the plan says.
pub(crate) struct RankFiles<'a, Pm> {
    plan: &'a CheckpointPlan,
    kind: String,
    made: Made,
    params: &'a Pm,
    rank: usize,
    size: usize,
    n_local: usize,
    last: Instant,
}

impl<'a, Pm> RankFiles<'a, Pm> {
    /// This rank's files for `plan`, of `kind`, for a run `made` with `params` and `n_local` examples here.
    pub(crate) fn new(
        plan: &'a CheckpointPlan,
        kind: String,
        made: Made,
        params: &'a Pm,
        comm: &dyn Collective,
        n_local: usize,
    ) -> Self {
        Self {
            plan,
            kind,
            made,
            params,
            rank: comm.rank(),
            size: comm.size(),
            n_local,
            last: Instant::now(),
        }
    }
}

impl<Pm, S> RoundCheckpoints<S> for RankFiles<'_, Pm>
where
    Pm: Serialize + DeserializeOwned + SameProblem + Clone,
    S: Serialize + DeserializeOwned,
{
    fn resume(&mut self) -> Result<Option<RoundState<S>>, OptimError> {
        let Some(path) = &self.plan.resume else {
            return Ok(None);
        };
        let mine = rank_path(path, self.rank);
        if !mine.exists() {
            return Err(OptimError::Checkpoint {
                message: format!(
                    "{}: no checkpoint for rank {} of {} (resume with the number of ranks it was made with)",
                    mine.display(),
                    self.rank,
                    self.size
                ),
            });
        }
        self.load(&mine)
            .map(Some)
            .map_err(|e| OptimError::Checkpoint {
                message: e.to_string(),
            })
    }

    fn due(&mut self, comm: &dyn Collective) -> Result<bool, OptimError> {
        let (Some(_), Some(every)) = (&self.plan.save_to, self.plan.every_seconds) else {
            return Ok(false);
        };
        let mut flag = [f64::from(u8::from(
            self.last.elapsed().as_secs_f64() >= every,
        ))];
        comm.broadcast(&mut flag, 0)?;
        if flag[0] != 0.0 {
            self.last = Instant::now();
        }
        Ok(flag[0] != 0.0)
    }

    fn save(&mut self, state: RoundStateRef<'_, S>) -> Result<(), OptimError> {
        let Some(path) = &self.plan.save_to else {
            return Ok(());
        };
        let file = RankFileRef {
            made: self.made,
            params: self.params,
            rank: self.rank,
            size: self.size,
            n_local: self.n_local,
            state,
        };
        model_file::save(&rank_path(path, self.rank), &self.kind, &file).map_err(|e| {
            OptimError::Checkpoint {
                message: e.to_string(),
            }
        })
    }
}

#[derive(Serialize)]
struct RankFileRef<'a, Pm, S> {
    made: Made,
    params: &'a Pm,
    rank: usize,
    size: usize,
    n_local: usize,
    state: RoundStateRef<'a, S>,
}

impl<Pm> RankFiles<'_, Pm>
where
    Pm: Serialize + DeserializeOwned + SameProblem + Clone,
{
    fn load<S: Serialize + DeserializeOwned>(&self, path: &Path) -> Result<RoundState<S>, Error> {
        let bad = |message: String| -> Error {
            IoError::BadModel {
                path: path.to_path_buf(),
                message,
            }
            .into()
        };
        let (_, file): (_, RankFile<Pm, S>) = model_file::load(path, &self.kind)?;
        if (file.rank, file.size) != (self.rank, self.size) {
            return Err(bad(format!(
                "checkpoint of rank {} of {}; this is rank {} of {} (resume with the number of ranks it was \
                 made with)",
                file.rank, file.size, self.rank, self.size
            )));
        }
        if file.made != self.made || file.n_local != self.n_local {
            return Err(bad(format!(
                "checkpoint made for {} examples ({} on this rank), {} weights, lambda {}; this run has {} ({}), \
                 {}, {}",
                file.made.n_samples,
                file.n_local,
                file.made.dim,
                file.made.lambda,
                self.made.n_samples,
                self.n_local,
                self.made.dim,
                self.made.lambda
            )));
        }
        if let Some((name, stored, now)) = self.params.differs_from(&file.params) {
            return Err(bad(format!(
                "checkpoint made with {name} {stored}; this run has {now} (resume with the settings it was made with)"
            )));
        }
        Ok(file.state)
    }
}
