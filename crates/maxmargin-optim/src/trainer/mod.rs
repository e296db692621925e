//! One loop for every solver: budgets, tolerance, trace and observers.
//!
//! A [`Solver`] owns only its algorithm (`init`, `step`, and what it can report); the [`Trainer`] decides
//! when to evaluate the objective, when to stop and what to tell observers. Nothing here prints.

use crate::collective::{Collective, Single};
use crate::error::OptimError;

mod budget;
mod detail;
mod fit;
pub(crate) mod run;
pub use budget::Budget;
pub use detail::{StepDetail, StepExample};
pub use fit::{Certificate, Fit, StopReason, TraceRecord};
pub(crate) use fit::{finite, record};
pub use run::{Best, Checkpoints, Resumed, Run};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// How far a solver has come.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// Steps taken.
    pub iteration: u64,
    /// Passes over the data: examples touched by steps divided by `n`.
    pub epoch: f64,
}

/// An algorithm that the [`Trainer`] can run on problems of type `P`.
pub trait Solver<P> {
    /// Everything the algorithm carries from step to step (weights, counters, the RNG).
    type State: Clone;
    /// What training returns.
    type Output: Clone;

    /// The state before the first step.
    ///
    /// # Errors
    /// When the problem does not suit the solver.
    fn init(&mut self, problem: &P) -> Result<Self::State, OptimError>;

    /// One step, in place. (The state is passed by reference rather than by value: Pegasos' state holds
    /// its RNG and buffers, and moving it twice per `O(nnz)` step cost a measurable share of the step.)
    ///
    /// # Errors
    /// When the step cannot be taken.
    fn step(&mut self, problem: &P, state: &mut Self::State) -> Result<(), OptimError>;

    /// Steps and passes so far.
    fn progress(&self, problem: &P, state: &Self::State) -> Progress;

    /// The output for the current state (last, averaged or best iterate, as the solver is set up).
    fn output(&self, problem: &P, state: &Self::State) -> Self::Output;

    /// The primal objective of [`Solver::output`], as cheaply as the solver can give it.
    ///
    /// # Errors
    /// What the evaluation meets: over ranks it is a collective operation (every rank calls it at the same
    /// point) and another rank's failure is [`OptimError::Collective`] here; streamed, a read of the source.
    fn objective(&self, problem: &P, state: &Self::State) -> Result<f64, OptimError>;

    /// What the solver can certify now (dual, gap, working set, oracle calls), asked at each evaluation
    /// with the primal `objective` just computed. The default certifies nothing.
    ///
    /// # Errors
    /// As [`Solver::objective`].
    fn certificate(
        &self,
        _problem: &P,
        _state: &Self::State,
        _objective: f64,
    ) -> Result<Certificate, OptimError> {
        Ok(Certificate::default())
    }

    /// Checks a state decoded from a checkpoint against the problem before any step reads it (lengths,
    /// indices, finite values): a crafted or stale state is an error naming what does not fit, never an
    /// index out of bounds. The default accepts every state.
    ///
    /// # Errors
    /// [`OptimError::InvalidParam`] naming the part of the state.
    fn check_state(&self, _problem: &P, _state: &Self::State) -> Result<(), OptimError> {
        Ok(())
    }

    /// Called once after the last step, before the output is taken (the batch subgradient method evaluates
    /// its last iterate here). The default changes nothing.
    fn finish(&mut self, _problem: &P, state: Self::State) -> Self::State {
        state
    }

    /// The moment the trainer's time budget ends, for solvers whose single steps can be long (a cutting-plane
    /// QP): they check it inside the step and return early with a consistent state. The default ignores it.
    fn set_deadline(&mut self, _deadline: Option<std::time::Instant>) {}

    /// The trainer's budget, for solvers whose one step is many of the budget's steps or a pass (a streamed
    /// pass of Pegasos steps): they stop inside the step where the budget ends, with a consistent state, and
    /// the trainer's own test then stops the run. The default ignores it.
    fn set_budget(&mut self, _budget: &Budget) {}

    /// A stop the solver certifies itself (a duality gap, a vanished violation).
    fn stop(&self, _state: &Self::State) -> Option<StopReason> {
        None
    }

    /// The weights and the last step's examples, for a trace followed step by step. The default reports
    /// nothing.
    fn detail(&self, _problem: &P, _state: &Self::State) -> Option<StepDetail> {
        None
    }
}

/// Receives the trainer's events; every method has a no-op default.
pub trait Observer {
    /// After every step.
    fn on_step(&mut self, _progress: Progress) {}
    /// After every evaluation of the objective.
    fn on_eval(&mut self, _record: &TraceRecord) {}
    /// Whether the caller asks the run to stop now, checked after every step: the run then ends as at a
    /// budget's end, evaluated and certified, with [`StopReason::Interrupted`]. Honoured by one process; over
    /// several ranks the run goes on (the ranks would have to agree on the step, a broadcast per step).
    fn stop_requested(&mut self) -> bool {
        false
    }

    /// Something went wrong that does not undo the run (a final checkpoint that could not be written): the
    /// caller keeps the trained model and hears why it should not count on the rest.
    fn on_warning(&mut self, _message: &str) {}
}

/// What a run's counted evaluations have seen: the lowest objective, whether one rose above it, and the
/// epoch of the last.
struct Seen {
    lowest: f64,
    rose: bool,
    counted: f64,
}

/// The observer that does nothing.
impl Observer for () {}

/// Runs a solver under a budget.
#[derive(Debug, Clone, Copy)]
pub struct Trainer {
    budget: Budget,
    details: bool,
    stop_every: Option<f64>,
    best_since_rise: bool,
}

impl Trainer {
    /// A trainer with a checked budget.
    ///
    /// # Errors
    /// As [`Budget::check`].
    pub fn new(budget: Budget) -> Result<Self, OptimError> {
        Ok(Self {
            budget: budget.check()?,
            details: false,
            stop_every: None,
            best_since_rise: true,
        })
    }

    /// Keeps the last output of a run cut short by a budget, not the best evaluated since the objective
    /// first rose: for a method that does not minimize the objective it is evaluated by (the perceptron).
    #[must_use]
    pub fn keeping_the_last(mut self) -> Self {
        self.best_since_rise = false;
        self
    }

    /// Tests the tolerance and the gap only at the evaluations that cross a multiple of `epochs` passes:
    /// the stops of a run evaluated every `epochs` passes, for a run evaluated more often only to be watched
    /// (a trace, step details), so that watching a run does not change where it stops. `epochs` should be
    /// a multiple of the budget's `eval_every_epochs`. `None` (the default) tests at every evaluation.
    ///
    /// # Errors
    /// [`OptimError::InvalidParam`] for a count that is not positive.
    pub fn stopping_every(mut self, epochs: Option<f64>) -> Result<Self, OptimError> {
        if let Some(e) = epochs
            && e.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater)
        {
            return Err(OptimError::InvalidParam {
                name: "stop_every",
                value: e.to_string(),
                reason: "must be positive",
            });
        }
        self.stop_every = epochs;
        Ok(self)
    }

    /// Whether an evaluation at `epoch`, the last counted one at `before`, counts: it is one an unwatched
    /// run makes too (it crosses a multiple of the stops' cadence, `stop_every` or else the evaluations'),
    /// where the stops are tested and the best output since a rise is kept. Evaluations made only for a
    /// watcher (a trace, step details) do not count, so watching a run does not change its model.
    fn counts(&self, before: f64, epoch: f64) -> bool {
        let s = self.stop_every.unwrap_or(self.budget.eval_every_epochs);
        let multiple = |e: f64| (e / s + 1e-12).floor();
        s.is_finite() && multiple(epoch) > multiple(before)
    }

    /// Past the first rise of the objective among the counted evaluations (a primal that is not
    /// descending: a dual method on ill-conditioned data, a stochastic one), the best evaluated output is
    /// kept too, for a run that ends on a budget above it; before any rise nothing is copied.
    fn consider<P, S: Solver<P>>(
        &self,
        (solver, problem): (&S, &P),
        run: &mut Run<S::State, S::Output>,
        (objective, p): (f64, Progress),
        seen: &mut Seen,
    ) {
        seen.rose |= objective > seen.lowest;
        seen.lowest = seen.lowest.min(objective);
        seen.counted = p.epoch;
        if (self.budget.keep_best || (seen.rose && self.best_since_rise))
            && run.best.as_ref().is_none_or(|b| objective < b.objective)
        {
            run.best = Some(Best {
                objective,
                output: solver.output(problem, &run.state),
                progress: p,
            });
        }
    }

    /// Evaluates after every step and records the solver's [`StepDetail`] (weights, the step's examples and
    /// their margins) in the trace: for small problems followed by hand. Costs an objective per step.
    #[must_use]
    pub fn with_step_details(mut self, on: bool) -> Self {
        self.details = on;
        self
    }

    fn budget_stop(&self, p: Progress, seconds: f64) -> Option<StopReason> {
        let b = &self.budget;
        if b.max_iterations.is_some_and(|m| p.iteration >= m) {
            Some(StopReason::MaxIterations)
        } else if b.max_epochs.is_some_and(|m| p.epoch >= m - 1e-12) {
            Some(StopReason::MaxEpochs)
        } else if b.max_seconds.is_some_and(|m| seconds >= m) {
            Some(StopReason::Time)
        } else {
            None
        }
    }

    /// Whether an evaluation's certified gap is within the budget's gap tolerance.
    fn gap_stop(&self, objective: f64, gap: Option<f64>) -> bool {
        matches!((self.budget.gap_tolerance, gap), (Some(tol), Some(gap)) if gap <= tol * objective.abs())
    }

    fn tolerance_stop(&self, trace: &[TraceRecord]) -> bool {
        let Some(tol) = self.budget.tolerance else {
            return false;
        };
        let w = Budget::TOLERANCE_WINDOW;
        if trace.len() <= w {
            return false;
        }
        let old = trace[trace.len() - 1 - w].objective;
        let new = trace[trace.len() - 1].objective;
        (old - new) <= tol * old.abs().max(f64::MIN_POSITIVE)
    }

    /// Trains: steps until a budget, the tolerance or the solver stops it, evaluating on schedule.
    ///
    /// # Errors
    /// What the solver returns.
    pub fn run<P, S: Solver<P>>(
        &self,
        solver: &mut S,
        problem: &P,
        observer: &mut dyn Observer,
    ) -> Result<Fit<S::Output>, OptimError> {
        let state = solver.init(problem)?;
        Ok(self.run_from(solver, problem, state, observer)?.0)
    }

    /// [`Trainer::run`] on every rank of `comm` (see [`Trainer::resume_over`]).
    ///
    /// # Errors
    /// What the solver returns, [`OptimError::Collective`] when another rank failed.
    pub fn run_over<P, S: Solver<P>>(
        &self,
        comm: &dyn Collective,
        solver: &mut S,
        problem: &P,
        observer: &mut dyn Observer,
    ) -> Result<Fit<S::Output>, OptimError> {
        let state = solver.init(problem)?;
        let run = self.start(solver, problem, state);
        Ok(self
            .resume_over(comm, solver, problem, run, observer, None)?
            .0)
    }

    /// The run that starts from `state` (a fresh one, or the state another run returned): an empty trace,
    /// the next evaluation due at the first multiple of `eval_every_epochs` past the state's passes.
    pub fn start<P, S: Solver<P>>(
        &self,
        solver: &S,
        problem: &P,
        state: S::State,
    ) -> Run<S::State, S::Output> {
        let every = self.budget.eval_every_epochs;
        let done = solver.progress(problem, &state).epoch;
        Run {
            state,
            trace: Vec::new(),
            next_eval: ((done / every).floor() + 1.0) * every,
            best: None,
            seconds: 0.0,
        }
    }

    /// Trains from a given state (a checkpoint, or the state another run returned) and returns the final
    /// state too, so training can be resumed later. Budgets count from the state's own progress: a run that
    /// stopped at 5 epochs and is resumed with a budget of 10 epochs takes 5 more. Resuming continues
    /// exactly: 5 epochs, then 5 more, give the same bits as 10 in one run.
    ///
    /// # Errors
    /// What the solver returns.
    pub fn run_from<P, S: Solver<P>>(
        &self,
        solver: &mut S,
        problem: &P,
        state: S::State,
        observer: &mut dyn Observer,
    ) -> Result<(Fit<S::Output>, S::State), OptimError> {
        let run = self.start(solver, problem, state);
        let (fit, run) = self.resume(solver, problem, run, observer, None)?;
        Ok((fit, run.state))
    }

    /// Trains from a [`Run`] (one from [`Trainer::start`], or a checkpoint) until a budget, the tolerance or
    /// the solver stops it, evaluating on schedule and handing the run to `checkpoints` periodically; returns
    /// the fit and the final run (whose state has been through [`Solver::finish`]). A run resumed from any
    /// checkpoint ends with the same bits as one that never stopped (time budgets aside).
    ///
    /// # Errors
    /// What the solver or the checkpoint writer returns.
    pub fn resume<P, S: Solver<P>>(
        &self,
        solver: &mut S,
        problem: &P,
        run: Run<S::State, S::Output>,
        observer: &mut dyn Observer,
        checkpoints: Option<Checkpoints<'_, Run<S::State, S::Output>>>,
    ) -> Result<Resumed<S, P>, OptimError> {
        self.resume_over(&Single, solver, problem, run, observer, checkpoints)
    }

    /// [`Trainer::resume`] on every rank of `comm`, for a solver whose steps and evaluations are collective
    /// (a round over the ranks' shards): every decision the loop takes on the clock (the time budget, when to
    /// write a checkpoint) is rank 0's, broadcast, so all ranks step, evaluate and stop together. With
    /// [`Single`] it is [`Trainer::resume`].
    ///
    /// # Errors
    /// What the solver or the checkpoint writer returns, [`OptimError::Collective`] when another rank failed.
    pub fn resume_over<P, S: Solver<P>>(
        &self,
        comm: &dyn Collective,
        solver: &mut S,
        problem: &P,
        mut run: Run<S::State, S::Output>,
        observer: &mut dyn Observer,
        mut checkpoints: Option<Checkpoints<'_, Run<S::State, S::Output>>>,
    ) -> Result<Resumed<S, P>, OptimError> {
        let start = Instant::now();
        let before = run.seconds;
        let elapsed = || before + start.elapsed().as_secs_f64();
        // The clock as rank 0 reads it (one broadcast over ranks; nothing for one process).
        let agreed = |t: f64| -> Result<f64, OptimError> {
            if comm.size() == 1 {
                return Ok(t);
            }
            let mut b = [t];
            comm.broadcast(&mut b, 0)?;
            Ok(b[0])
        };
        let mut last_save = before;
        let mut period = checkpoints.as_ref().map_or(0.0, |c| c.every_seconds);
        solver.set_budget(&self.budget);
        if let Some(m) = self.budget.max_seconds {
            let left = std::time::Duration::try_from_secs_f64((m - before).max(0.0)).ok();
            solver.set_deadline(left.and_then(|d| start.checked_add(d)));
        }
        // A run that had already stopped (a finished run's checkpoint, resumed with the same budget) takes
        // no step: the same model again. Periodic checkpoints are written only where no stop applied.
        // So does one that stopped on its certified gap: its last evaluation is of the state it resumes.
        let spent = agreed(before)?;
        let at = solver.progress(problem, &run.state);
        // What the counted evaluations so far saw (a resumed run's trace holds them).
        let mut seen = Seen {
            lowest: f64::INFINITY,
            rose: false,
            counted: if run.trace.is_empty() { at.epoch } else { 0.0 },
        };
        let mut last_counted = false;
        for r in &run.trace {
            last_counted = self.counts(seen.counted, r.epoch);
            if last_counted {
                seen.rose |= r.objective > seen.lowest;
                seen.lowest = seen.lowest.min(r.objective);
                seen.counted = r.epoch;
            }
        }
        let certified = run.trace.last().is_some_and(|r| {
            r.iteration == at.iteration
                && r.epoch == at.epoch
                && last_counted
                && self.gap_stop(r.objective, r.gap)
        });
        let already = solver
            .stop(&run.state)
            .or_else(|| certified.then_some(StopReason::Gap))
            .or_else(|| self.budget_stop(at, spent));
        let stop = if let Some(s) = already {
            s
        } else {
            loop {
                solver.step(problem, &mut run.state)?;
                let p = solver.progress(problem, &run.state);
                observer.on_step(p);
                if comm.size() == 1 && observer.stop_requested() {
                    break StopReason::Interrupted;
                }
                // Reading the clock costs as much as a sparse step: only with a time budget or checkpoints.
                let seconds = if self.budget.max_seconds.is_some() || checkpoints.is_some() {
                    agreed(elapsed())?
                } else {
                    0.0
                };
                let stop = solver
                    .stop(&run.state)
                    .or_else(|| self.budget_stop(p, seconds));
                if let Some(s) = stop {
                    break s;
                }
                if self.details || p.epoch >= run.next_eval - 1e-12 {
                    while run.next_eval <= p.epoch + 1e-12 {
                        run.next_eval += self.budget.eval_every_epochs;
                    }
                    let objective = finite(solver.objective(problem, &run.state)?, p)?;
                    let tests = self.counts(seen.counted, p.epoch);
                    if tests {
                        self.consider((&*solver, problem), &mut run, (objective, p), &mut seen);
                    }
                    let certificate = solver.certificate(problem, &run.state, objective)?;
                    let mut record = record(p, elapsed(), objective, certificate);
                    if self.details {
                        record.step = solver.detail(problem, &run.state);
                    }
                    observer.on_eval(&record);
                    run.trace.push(record);
                    if tests && self.tolerance_stop(&run.trace) {
                        break StopReason::Tolerance;
                    }
                    if tests && self.gap_stop(objective, certificate.gap) {
                        break StopReason::Gap;
                    }
                }
                if let Some(c) = checkpoints.as_mut()
                    && seconds - last_save >= period
                {
                    run.seconds = seconds;
                    (c.save)(&run)?;
                    last_save = agreed(elapsed())?;
                    // Checkpoints take at most about a tenth of the time: a write that takes longer than a
                    // tenth of the period stretches it.
                    period = c.every_seconds.max(10.0 * (last_save - seconds));
                }
            }
        };
        run.state = solver.finish(problem, run.state);
        let p = solver.progress(problem, &run.state);
        let own = finite(solver.objective(problem, &run.state)?, p)?;
        // The final evaluation is one an unwatched run makes in its loop when the run stopped where that
        // run evaluates (a run resumed from this one's checkpoint then goes on as one that never stopped).
        if already.is_none() && self.counts(seen.counted, p.epoch) {
            self.consider((&*solver, problem), &mut run, (own, p), &mut seen);
        }
        let mut output = solver.output(problem, &run.state);
        let mut objective = own;
        // The best evaluated output replaces the last one when asked (keep_best), or when the run stopped
        // short of its certificate (a budget, an interruption) above it: the certificate below (this
        // objective against the last state's lower bound) holds for either.
        let certified_stop = matches!(
            stop,
            StopReason::Converged | StopReason::Gap | StopReason::Tolerance
        );
        if let Some(b) = &run.best
            && b.objective < objective
            && (self.budget.keep_best || !certified_stop)
        {
            output = b.output.clone();
            objective = b.objective;
        }
        // The run's own trace (checkpointed) ends with the state's own evaluation; the fit's, with the
        // output it returns.
        let certificate = solver.certificate(problem, &run.state, own)?;
        let seconds = if run.trace.last().is_none_or(|r| r.iteration != p.iteration) {
            let mut record = record(p, elapsed(), own, certificate);
            if self.details {
                record.step = solver.detail(problem, &run.state);
            }
            run.trace.push(record);
            None
        } else {
            run.trace.last_mut().map(|last| {
                let seconds = last.seconds;
                *last = TraceRecord {
                    seconds,
                    step: last.step.take(),
                    ..record(p, seconds, own, certificate)
                };
                seconds
            })
        };
        let mut trace = run.trace.clone();
        if objective != own
            && let Some(last) = trace.last_mut()
        {
            let certificate = solver.certificate(problem, &run.state, objective)?;
            *last = TraceRecord {
                step: last.step.take(),
                ..record(p, last.seconds, objective, certificate)
            };
        }
        if seconds.is_none()
            && let Some(last) = trace.last()
        {
            observer.on_eval(last);
        }
        run.seconds = elapsed();
        Ok((
            Fit {
                output,
                objective,
                trace,
                stop,
                progress: p,
            },
            run,
        ))
    }
}
