//! Checkpoint files: one kind of file for every solver and task, written by the [`Trainer`] at the end of a
//! run and, when asked, every so many seconds during it; a run resumed from one ends with the same bits as
//! a run that never stopped.
//!
//! A checkpoint holds what it was made for (examples, weights, λ, the parameters) and the whole
//! [`Run`]: the solver's state (weights, duals, working sets, counters, the RNG) and the trainer's (trace,
//! next evaluation, best output, seconds). It is written through [`model_file::save`], so atomically: a
//! kill during a write leaves the previous checkpoint whole.
//!
//! Where the file lives is a `Store`: one file for one process (`OneFile`), each rank's own file over ranks
//! (`distributed::checkpoint::RankFiles`), or one file that also keeps where a stream stands (`StreamFile`:
//! the source's pass count and per-row column, what the certificates carry).

use crate::Error;
use maxmargin_io::{IoError, model_file};
use maxmargin_optim::{
    Checkpoints, Collective, Observer, OptimError, Placed, Run, Single, Solver, StreamPlace,
    Trainer,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The oldest format version whose checkpoints this build resumes (format 3 added the trainer's state, format 4
/// the logistic duals' complements to dual coordinate descent's, format 5 the approximated kernel to the
/// binary parameters they store, format 6 a digest of the examples, format 7 the rescaling to the structured
/// parameters they store).
pub const MIN_FORMAT_VERSION: u32 = 7;

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
struct FileRef<'a, Pm, St, O, X: Extra> {
    made: Made,
    params: &'a Pm,
    run: &'a Run<St, O>,
    #[serde(skip_serializing_if = "absent_ref")]
    extra: &'a X,
}

/// A checkpoint file's contents: what it was made for, the run, and what its store keeps beside them
/// (nothing for one process, which is not written at all, so files of before read and check the same; a
/// stream's place).
#[derive(Serialize, Deserialize)]
pub(crate) struct CheckpointFile<Pm, St, O, X: Extra = ()> {
    pub(crate) made: Made,
    params: Pm,
    pub(crate) run: Run<St, O>,
    #[serde(default, skip_serializing_if = "Extra::absent")]
    extra: X,
}

/// What a store keeps beside the run: nothing (`()`, never written) or something always written.
pub(crate) trait Extra: Default {
    /// Whether it is left out of the file.
    fn absent(&self) -> bool {
        false
    }
}

impl Extra for () {
    fn absent(&self) -> bool {
        true
    }
}

fn absent_ref<X: Extra>(x: &&X) -> bool {
    x.absent()
}

/// What a checkpoint file keeps: states, outputs and parameters that serde writes and reads back.
pub(crate) trait Serde: Serialize + DeserializeOwned {}

impl<T: Serialize + DeserializeOwned> Serde for T {}

/// A solver on `P` whose state and output a checkpoint file can keep.
pub(crate) trait Resumable<P>: Solver<P, State: Serde, Output: Serde> {}

impl<P, S: Solver<P, State: Serde, Output: Serde>> Resumable<P> for S {}

/// Parameters that shape the problem a checkpoint's state belongs to: a run resumes a state only with the
/// same ones (the budget, the tolerances and the thread count may change; the bias, the loss, the weights
/// and the scaling may not, since the state's vectors and boxes were made for them).
pub(crate) trait SameProblem: Serde {
    /// `(parameter, stored, this run's)` for the first parameter that differs.
    fn differs_from(&self, stored: &Self) -> Option<(&'static str, String, String)>;
}

/// The first pair of `(name, stored, current)` whose values differ, printed with `Debug` in the user's
/// words: an option's value without `Some(..)`, an empty list as `none`, pairs as `LABEL=WEIGHT` (a resume
/// refusal read "class weights []; this run has [(1.0, 2.0)]" and "positive label none; this run has
/// some(-1.0)").
pub(crate) fn first_difference(
    pairs: &[(&'static str, &dyn std::fmt::Debug, &dyn std::fmt::Debug)],
) -> Option<(&'static str, String, String)> {
    let words = |v: &dyn std::fmt::Debug| {
        let debug = format!("{v:?}");
        // Text is already in the user's words (its `Debug` only quotes it).
        if let Some(text) = debug.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
            return text.to_string();
        }
        // A unit variant as its flag spells it: `SquaredHinge` → `squared-hinge` (it read "squaredhinge").
        let text = if debug.starts_with(|c: char| c.is_ascii_uppercase())
            && debug.chars().all(|c| c.is_ascii_alphanumeric())
        {
            let mut kebab = String::new();
            for (i, c) in debug.chars().enumerate() {
                if i > 0 && c.is_ascii_uppercase() {
                    kebab.push('-');
                }
                kebab.push(c.to_ascii_lowercase());
            }
            kebab
        } else {
            debug.to_lowercase()
        };
        let number = |t: &str| t.trim().trim_end_matches(".0").to_string();
        if let Some(inner) = text.strip_prefix("some(").and_then(|t| t.strip_suffix(')')) {
            number(inner)
        } else if text == "[]" {
            "none".to_string()
        } else if let Some(pairs) = text.strip_prefix("[(").and_then(|t| t.strip_suffix(")]")) {
            // Class weights as the command takes them: LABEL=WEIGHT.
            let pair = |p: &str| match p.split_once(',') {
                Some((label, weight)) => format!("{}={}", number(label), number(weight)),
                None => p.to_string(),
            };
            pairs.split("), (").map(pair).collect::<Vec<_>>().join(" ")
        } else {
            text
        }
    };
    pairs.iter().find_map(|(name, a, b)| {
        let (a, b) = (words(*a), words(*b));
        (a != b).then_some((*name, a, b))
    })
}

/// Refuses a checkpoint of `kind` from a format older than [`MIN_FORMAT_VERSION`], naming it (the state it
/// holds is not what this build's solvers keep).
pub(crate) fn refuse_older(path: &Path, kind: &str) -> Result<(), Error> {
    let header = model_file::read_header(path)?;
    if header.format_version < MIN_FORMAT_VERSION && header.kind == kind {
        return Err(IoError::BadModel {
            path: path.to_path_buf(),
            message: format!(
                "a checkpoint of format {}, from an older maxmargin: start the run again",
                header.format_version
            ),
        }
        .into());
    }
    Ok(())
}

/// Refuses a checkpoint `stored` for another run than `now`: other sizes, problem-shaping parameters or
/// examples. Over ranks, `local` is `(stored, now)` examples on this rank, which must agree too.
pub(crate) fn check_made<Pm: SameProblem>(
    path: &Path,
    (stored, stored_params): (Made, &Pm),
    (now, params): (Made, &Pm),
    local: Option<(usize, usize)>,
) -> Result<(), Error> {
    let bad = |message: String| -> Error {
        IoError::BadModel {
            path: path.to_path_buf(),
            message,
        }
        .into()
    };
    let sizes = |m: &Made| (m.n_samples, m.dim, m.lambda.to_bits());
    let local_differs = local.is_some_and(|(a, b)| a != b);
    if sizes(&stored) != sizes(&now) || local_differs {
        let (here_then, here_now) = match local {
            Some((a, b)) => (format!(" ({a} on this rank)"), format!(" ({b})")),
            None => (String::new(), String::new()),
        };
        return Err(bad(format!(
            "checkpoint made for {} examples{here_then}, {} weights, lambda {}; this run has {}{here_now}, {}, {}",
            stored.n_samples, stored.dim, stored.lambda, now.n_samples, now.dim, now.lambda
        )));
    }
    if let Some((name, was, is)) = params.differs_from(stored_params) {
        return Err(bad(format!(
            "checkpoint made with {name} {was}; this run has {is} (resume with the settings it was made with)"
        )));
    }
    if stored.rows != now.rows {
        let (these, count) = match local {
            Some((_, b)) => ("this rank's", b),
            None => ("these", now.n_samples),
        };
        return Err(bad(format!(
            "checkpoint made for other examples than {these} (the same number, {count}, but other rows, labels \
             or weights): resume on the data it was made with"
        )));
    }
    Ok(())
}

/// Reads a checkpoint of `kind`, refusing one from an older format or made for another run (other examples,
/// dimension or λ, or other problem-shaping parameters than `expect`'s).
pub(crate) fn load<Pm, St, O, X>(
    path: &Path,
    kind: &str,
    expect: Option<(Made, &Pm)>,
) -> Result<CheckpointFile<Pm, St, O, X>, Error>
where
    Pm: SameProblem,
    St: Serde,
    O: Serde,
    X: Serde + Extra,
{
    // A run over ranks wrote PATH.rank0, PATH.rank1, ...: say so, not "no such file".
    let rank0 = crate::distributed::checkpoint::rank_path(path, 0);
    if !path.exists() && rank0.exists() {
        return Err(OptimError::Checkpoint {
            message: format!(
                "{}: no such file, but {} is there: a run over MPI ranks made it; resume it under mpirun \
                 with the number of ranks it was made with",
                path.display(),
                rank0.display()
            ),
        }
        .into());
    }
    refuse_older(path, kind)?;
    let (_, file): (_, CheckpointFile<Pm, St, O, X>) = model_file::load(path, kind)?;
    if let Some((made, params)) = expect {
        check_made(path, (file.made, &file.params), (made, params), None)?;
    }
    Ok(file)
}

/// An observer for runs that have no other: it keeps what the run warns of (a final checkpoint that could
/// not be written) for the run's report, or prints it on standard error where no report carries it (a
/// rank's own checkpoint file).
pub(crate) enum Heard {
    /// Kept for the report.
    Kept(Vec<String>),
    /// Printed as `warning: ...`.
    Printed,
}

impl Observer for Heard {
    fn on_warning(&mut self, message: &str) {
        match self {
            Self::Kept(w) => w.push(message.to_string()),
            Self::Printed => eprintln!("warning: {message}"),
        }
    }
}

/// Where a run's checkpoints are read and written: one file for one process ([`OneFile`]), or each rank's
/// own file over ranks (`distributed::checkpoint::RankFiles`). Both check what a file was made for.
pub(crate) trait Store<St, O> {
    /// The file a plan's `path` means here (itself, but for a rank's own file).
    fn file(&self, path: &Path) -> PathBuf {
        path.to_path_buf()
    }
    /// The run in `file`, refused when made for another run.
    fn load(&self, file: &Path) -> Result<Run<St, O>, Error>;
    /// Writes `run` to `file` (atomically).
    fn save(&self, file: &Path, run: &Run<St, O>) -> Result<(), Error>;
}

/// One process's checkpoint file of `kind`, for a run `made` with `params`.
pub(crate) struct OneFile<'a, Pm> {
    kind: &'a str,
    made: Made,
    params: &'a Pm,
}

impl<Pm, St, O> Store<St, O> for OneFile<'_, Pm>
where
    Pm: SameProblem,
    St: Serde,
    O: Serde,
{
    fn load(&self, file: &Path) -> Result<Run<St, O>, Error> {
        Ok(load::<Pm, St, O, ()>(file, self.kind, Some((self.made, self.params)))?.run)
    }

    fn save(&self, file: &Path, run: &Run<St, O>) -> Result<(), Error> {
        let (made, params) = (self.made, self.params);
        let payload = FileRef {
            made,
            params,
            run,
            extra: &(),
        };
        Ok(model_file::save(file, self.kind, &payload)?)
    }
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
    S: Resumable<P>,
    Pm: SameProblem,
{
    let store = OneFile { kind, made, params };
    let run = (&Single as &dyn Collective, trainer, solver, problem);
    train_with(&store, run, init, plan, observer)
}

/// The one checkpointed run for every solver, task and mode: resumes from the plan's file as `store` reads
/// it (the decoded state checked against the problem before any step reads it) or starts from `init`, runs
/// the trainer over `comm` (all ranks write after the same step, when rank 0's clock says a period has
/// passed), and writes the final run.
pub(crate) fn train_with<P, S>(
    store: &dyn Store<S::State, S::Output>,
    (comm, trainer, solver, problem): (&dyn Collective, &Trainer, &mut S, &P),
    init: impl FnOnce(&mut S) -> Result<S::State, Error>,
    plan: &CheckpointPlan,
    observer: &mut dyn Observer,
) -> Result<maxmargin_optim::Resumed<S, P>, Error>
where
    S: Solver<P>,
{
    plan.check()?;
    let run = match &plan.resume {
        Some(path) => {
            let file = store.file(path);
            let run = store.load(&file)?;
            solver
                .check_state(problem, &run.state)
                .map_err(|e| IoError::BadModel {
                    path: file.clone(),
                    message: e.to_string(),
                })?;
            same_round(comm, &file, solver.progress(problem, &run.state), &run)?;
            run
        }
        None => {
            let state = init(solver)?;
            trainer.start(solver, problem, state)
        }
    };
    let target = plan.save_to.as_deref().map(|path| store.file(path));
    let (fit, run) = match (&target, plan.every_seconds) {
        (Some(file), Some(every_seconds)) => {
            let mut write = |run: &Run<S::State, S::Output>| {
                store.save(file, run).map_err(|e| OptimError::Checkpoint {
                    message: e.to_string(),
                })
            };
            let checkpoints = Checkpoints {
                every_seconds,
                save: &mut write,
            };
            trainer.resume_over(comm, solver, problem, run, observer, Some(checkpoints))?
        }
        _ => trainer.resume_over(comm, solver, problem, run, observer, None)?,
    };
    // The model is trained whatever happens to its last checkpoint (a full disk): it is kept, and the
    // caller hears that the file holds an earlier state, or none.
    if let Some(file) = &target
        && let Err(e) = store.save(file, &run)
    {
        observer.on_warning(&format!(
            "the final checkpoint could not be written ({e}): the trained model is kept, but {} is not this \
             run's end (an earlier checkpoint, if one is there, resumes from before it)",
            file.display()
        ));
    }
    Ok((fit, run))
}

/// Refuses ranks' checkpoints of different rounds: each rank writes its own file, so a run killed between
/// two ranks' writes leaves a set no run ever was, whose collectives do not match (a probe's resumes
/// segfaulted, hung, or ended in `MPI_ERR_TRUNCATE`). The ranks compare their rounds (iterations, passes,
/// evaluations, the next one due) by two allreduces before any other collective; one process agrees with
/// itself.
fn same_round<St, O>(
    comm: &dyn Collective,
    file: &Path,
    at: maxmargin_optim::Progress,
    run: &Run<St, O>,
) -> Result<(), Error> {
    let mine = [
        at.iteration as f64,
        at.epoch,
        run.trace.len() as f64,
        run.next_eval,
    ];
    let mut high = mine;
    comm.allreduce_max(&mut high)?;
    let mut low = mine.map(|v| -v);
    comm.allreduce_max(&mut low)?;
    if high.iter().zip(&low).all(|(h, l)| *h == -*l) {
        return Ok(());
    }
    Err(OptimError::Checkpoint {
        message: format!(
            "{}: this rank's checkpoint is of iteration {} ({:.2} passes), and the ranks' files range from \
             iteration {} to {}: they were written after different rounds (a run stopped between two ranks' \
             writes); resume from a set of files written together, or start the run again",
            file.display(),
            at.iteration,
            at.epoch,
            -low[0],
            high[0]
        ),
    }
    .into())
}

/// What a stream's checkpoint keeps beside the run: the seed whose order the rows are in, and the stream's
/// place (an `Option` for `Default`; always written).
type StreamExtra = (u64, Option<StreamPlace>);

impl Extra for StreamExtra {}

/// One process's checkpoint of a streamed run (kind `…-stream`): the run, and where its stream stands (the
/// column costs 8 bytes a row), for rows in the order `seed` shuffled them into.
pub(crate) struct StreamFile<'a, Pm> {
    kind: String,
    made: Made,
    params: &'a Pm,
    seed: u64,
    stream: &'a dyn Placed,
}

impl<Pm, St, O> Store<St, O> for StreamFile<'_, Pm>
where
    Pm: SameProblem,
    St: Serde,
    O: Serde,
{
    fn load(&self, file: &Path) -> Result<Run<St, O>, Error> {
        let expect = Some((self.made, self.params));
        let stored = load::<Pm, St, O, StreamExtra>(file, &self.kind, expect)?;
        let (seed, place) = stored.extra;
        let bad = |message: String| -> Error {
            IoError::BadModel {
                path: file.to_path_buf(),
                message,
            }
            .into()
        };
        if seed != self.seed {
            return Err(bad(format!(
                "checkpoint made with seed {seed}; this run has {} (a streamed run's rows come in its seed's \
                 order: resume with the seed it was made with)",
                self.seed
            )));
        }
        let place =
            place.ok_or_else(|| bad("a streamed checkpoint without its stream's place".into()))?;
        self.stream.restore(place).map_err(|e| bad(e.to_string()))?;
        Ok(stored.run)
    }

    fn save(&self, file: &Path, run: &Run<St, O>) -> Result<(), Error> {
        let extra: StreamExtra = (self.seed, Some(self.stream.place()?));
        let payload = FileRef {
            made: self.made,
            params: self.params,
            run,
            extra: &extra,
        };
        Ok(model_file::save(file, &self.kind, &payload)?)
    }
}

/// [`train`] for a streamed problem: the checkpoint (kind `KIND-stream`) also keeps where the stream stands,
/// for rows shuffled by `seed`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn train_stream<P, S, Pm>(
    trainer: &Trainer,
    solver: &mut S,
    problem: &P,
    init: impl FnOnce(&mut S) -> Result<S::State, Error>,
    (kind, made, params, seed): (&str, Made, &Pm, u64),
    plan: &CheckpointPlan,
    observer: &mut dyn Observer,
) -> Result<maxmargin_optim::Resumed<S, P>, Error>
where
    P: Placed,
    S: Resumable<P>,
    Pm: SameProblem,
{
    let store = StreamFile {
        kind: format!("{kind}-stream"),
        made,
        params,
        seed,
        stream: problem,
    };
    let run = (&Single as &dyn Collective, trainer, solver, problem);
    train_with(&store, run, init, plan, observer)
}

#[cfg(test)]
#[path = "checkpoint_tests.rs"]
mod tests;
