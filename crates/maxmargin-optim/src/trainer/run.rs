//! A run in progress, as the trainer carries it from step to step and a checkpoint holds it.

use super::{Fit, OptimError, Progress, Solver, TraceRecord};
use serde::{Deserialize, Serialize};

/// The best evaluated output so far (for [`super::Budget::keep_best`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Best<O> {
    /// Its primal objective.
    pub objective: f64,
    /// The output.
    pub output: O,
    /// When it was evaluated.
    pub progress: Progress,
}

/// A run in progress: the solver's state and everything the trainer carries from step to step (the trace,
/// the next evaluation, the best output, the time spent). A checkpoint holds one; a run resumed from it
/// continues bit for bit as if it had not stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run<St, O> {
    /// The solver's state.
    pub state: St,
    /// Every evaluation so far.
    #[serde(with = "every_field")]
    pub trace: Vec<TraceRecord>,
    /// The pass at which the next evaluation is due.
    pub next_eval: f64,
    /// The best evaluated output, when the budget keeps it.
    pub best: Option<Best<O>>,
    /// Seconds of training so far (time budgets and the trace count from the start of the first run).
    pub seconds: f64,
}

/// The trace in a checkpoint with every field written: [`TraceRecord`] leaves out absent fields for JSON
/// lines, which a non-self-describing encoding (bincode) cannot read back.
pub(crate) mod every_field {
    use super::TraceRecord;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    type Row = (
        u64,
        f64,
        f64,
        f64,
        Option<f64>,
        Option<f64>,
        Option<usize>,
        Option<u64>,
    );

    pub(crate) fn serialize<S: Serializer>(trace: &[TraceRecord], s: S) -> Result<S::Ok, S::Error> {
        let rows: Vec<Row> = trace
            .iter()
            .map(|r| {
                (
                    r.iteration,
                    r.epoch,
                    r.seconds,
                    r.objective,
                    r.dual,
                    r.gap,
                    r.active_constraints,
                    r.oracle_calls,
                )
            })
            .collect();
        rows.serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<TraceRecord>, D::Error> {
        let rows = Vec::<Row>::deserialize(d)?;
        Ok(rows
            .into_iter()
            .map(|r| TraceRecord {
                iteration: r.0,
                epoch: r.1,
                seconds: r.2,
                objective: r.3,
                dual: r.4,
                gap: r.5,
                active_constraints: r.6,
                oracle_calls: r.7,
                step: None,
            })
            .collect())
    }
}

/// Periodic checkpoints: `save` receives the run whenever `every_seconds` of training have passed since
/// the last one (checked after each step, at a point from which resuming continues exactly). When one
/// write takes longer than a tenth of the period, the period stretches to ten writes' time, so that
/// checkpoints never cost more than about a tenth of the training time.
pub struct Checkpoints<'a, R> {
    /// Seconds between checkpoints.
    pub every_seconds: f64,
    /// Writes one checkpoint (atomically, so that a kill during the write leaves the previous one).
    pub save: &'a mut dyn FnMut(&R) -> Result<(), OptimError>,
}

impl<R> std::fmt::Debug for Checkpoints<'_, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkpoints")
            .field("every_seconds", &self.every_seconds)
            .finish_non_exhaustive()
    }
}

/// What [`super::Trainer::resume`] returns: the fit and the final run.
pub type Resumed<S, P> = (
    Fit<<S as Solver<P>>::Output>,
    Run<<S as Solver<P>>::State, <S as Solver<P>>::Output>,
);
