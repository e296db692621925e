//! What a run reports: why it stopped, each evaluation of the trace, what a solver certifies, and the
//! finished fit.

use super::{Progress, StepDetail};
use crate::error::OptimError;
use serde::{Deserialize, Serialize};

/// Why training stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StopReason {
    /// The iteration budget was used.
    MaxIterations,
    /// The epoch budget was used.
    MaxEpochs,
    /// The time budget was used.
    Time,
    /// The objective stopped improving by more than the tolerance.
    Tolerance,
    /// The solver certified convergence itself.
    Converged,
    /// The duality gap fell below the gap tolerance.
    Gap,
    /// Not trained here: the weights were imported from another program's model file (`maxmargin convert`),
    /// with no certificate.
    Imported,
    /// The caller asked the run to stop ([`Observer::stop_requested`](super::Observer::stop_requested):
    /// Ctrl-C in an interactive session).
    Interrupted,
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::MaxIterations => "max_iterations",
            Self::MaxEpochs => "max_epochs",
            Self::Time => "time",
            Self::Tolerance => "tolerance",
            Self::Converged => "converged",
            Self::Gap => "gap",
            Self::Imported => "imported",
            Self::Interrupted => "interrupted",
        })
    }
}

/// One evaluation in the trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TraceRecord {
    /// Steps taken.
    pub iteration: u64,
    /// Passes over the data.
    pub epoch: f64,
    /// Seconds since training started (excluding nothing: evaluations count).
    pub seconds: f64,
    /// The primal objective of the solver's current output (for the batch subgradient method, of the best
    /// iterate so far).
    pub objective: f64,
    /// The dual objective, for solvers that have one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dual: Option<f64>,
    /// The duality gap (primal − dual), for solvers that have one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap: Option<f64>,
    /// Active constraints (working-set size), for cutting-plane solvers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_constraints: Option<usize>,
    /// Calls of the loss-augmented oracle so far, for structured solvers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oracle_calls: Option<u64>,
    /// The weights and the step's examples, when the trainer traces every step
    /// ([`Trainer::with_step_details`](super::Trainer::with_step_details)) and the solver reports them
    /// ([`Solver::detail`](super::Solver::detail)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<StepDetail>,
}

/// What a solver can certify about its current state, beyond the primal objective.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Certificate {
    /// The dual objective.
    pub dual: Option<f64>,
    /// The duality gap.
    pub gap: Option<f64>,
    /// Active constraints.
    pub active_constraints: Option<usize>,
    /// Oracle calls so far.
    pub oracle_calls: Option<u64>,
}

impl Certificate {
    /// The certificate of `objective` by the dual value (or lower bound) `dual`.
    pub fn of_dual(objective: f64, dual: f64) -> Self {
        Self {
            dual: Some(dual),
            gap: Some(objective - dual),
            ..Self::default()
        }
    }
}

/// The result of training.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Fit<O> {
    /// The solver's output.
    pub output: O,
    /// Its primal objective.
    pub objective: f64,
    /// Every evaluation, in order; the last one is at the end of training.
    #[serde(with = "super::run::every_field")]
    pub trace: Vec<TraceRecord>,
    /// Why training stopped.
    pub stop: StopReason,
    /// Steps and passes taken.
    pub progress: Progress,
}

impl<O> Fit<O> {
    /// The output taken out and `output` put in its place, the rest of the fit kept: for a caller that
    /// turns the solver's output into a model of its own.
    pub fn replace_output<U>(self, output: U) -> (O, Fit<U>) {
        let Fit {
            output: taken,
            objective,
            trace,
            stop,
            progress,
        } = self;
        let fit = Fit {
            output,
            objective,
            trace,
            stop,
            progress,
        };
        (taken, fit)
    }
}

impl<O> Fit<Vec<O>> {
    /// Independent fits run side by side (one-vs-rest classes, one-vs-one machines) as one: the outputs in
    /// order; the objectives, gaps, steps and passes summed, in one trace record of the whole run's `seconds`
    /// (the fits' own clocks overlap on several threads and add up on one); the first stop short of its
    /// target (a budget), else a gap test if any fit stopped on one, else converged.
    pub fn combined(fits: Vec<Fit<O>>, seconds: f64) -> Self {
        let gap = fits
            .iter()
            .map(|f| f.trace.last().and_then(|r| r.gap))
            .sum::<Option<f64>>();
        let progress = Progress {
            iteration: fits.iter().map(|f| f.progress.iteration).sum(),
            epoch: fits.iter().map(|f| f.progress.epoch).sum(),
        };
        let objective = fits.iter().map(|f| f.objective).sum();
        let last = TraceRecord {
            iteration: progress.iteration,
            epoch: progress.epoch,
            seconds,
            objective,
            dual: None,
            gap,
            active_constraints: None,
            oracle_calls: None,
            step: None,
        };
        // A budget or another stop short of the target names the whole run; then a gap test; else converged.
        let reached = |s: &StopReason| matches!(s, StopReason::Converged | StopReason::Gap);
        let stops = || fits.iter().map(|f| f.stop);
        let stop = (stops().find(|s| !reached(s)))
            .or_else(|| stops().find(|s| *s == StopReason::Gap))
            .unwrap_or(StopReason::Converged);
        Self {
            output: fits.into_iter().map(|f| f.output).collect(),
            objective,
            trace: vec![last],
            stop,
            progress,
        }
    }
}

pub(crate) fn record(p: Progress, seconds: f64, objective: f64, c: Certificate) -> TraceRecord {
    TraceRecord {
        iteration: p.iteration,
        epoch: p.epoch,
        seconds,
        objective,
        dual: c.dual,
        gap: c.gap,
        active_constraints: c.active_constraints,
        oracle_calls: c.oracle_calls,
        step: None,
    }
}

/// The objective, or the error that names the step where it stopped being finite (every evaluation and the
/// end of training check it, so no non-finite result leaves the trainer).
pub(crate) fn finite(objective: f64, p: Progress) -> Result<f64, OptimError> {
    if objective.is_finite() {
        Ok(objective)
    } else {
        Err(OptimError::NonFinite {
            iteration: p.iteration,
            epoch: p.epoch,
            value: objective,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stopped(stop: StopReason) -> Fit<()> {
        Fit {
            output: (),
            objective: 1.0,
            trace: Vec::new(),
            stop,
            progress: Progress {
                iteration: 1,
                epoch: 1.0,
            },
        }
    }

    /// One-vs-rest on unscaled digits: classes that stopped on their gap test beside classes at their pass
    /// budget were reported as "stopped on its gap test ... not converged"; the budget names the run.
    #[test]
    fn a_combined_fit_is_named_by_a_budget_before_a_gap_test() {
        use StopReason::{Converged, Gap, MaxEpochs};
        for (stops, want) in [
            (vec![Gap, MaxEpochs, Converged], MaxEpochs),
            (vec![Converged, Gap], Gap),
            (vec![Converged, Converged], Converged),
        ] {
            let fits = stops.iter().map(|s| stopped(*s)).collect();
            assert_eq!(Fit::combined(fits, 0.0).stop, want, "{stops:?}");
        }
    }
}
