//! Model payloads of format 1 where they differ from later formats inside a field, frozen (see [`super`]):
//! the training summaries had no convergence record and the structured parameters stored the thread count
//! and a number for `eval_every`.

use super::params::{LinearSvmParamsV1, yes};
use super::{Absent, LinearModelOf, StructuredModelOf};
use crate::linear::TrainingSummary;
use crate::structured_svm::{StructSolverKind, StructTrainingSummary, StructuredSvmParams, Task};
use maxmargin_core::objective::Regularization;
use maxmargin_optim::StopReason;
use serde::{Deserialize, Serialize};

/// `TrainingSummary` of format 1.
#[derive(Serialize, Deserialize)]
pub(crate) struct TrainingSummaryV1 {
    n_samples: usize,
    objective: f64,
    iterations: u64,
    epochs: f64,
    stop: StopReason,
}

/// `LinearModel` of format 1.
pub(crate) type LinearModelV1 = LinearModelOf<LinearSvmParamsV1, TrainingSummaryV1, Absent>;

/// Format 1 kept no gap for binary models; a run is taken as converged when its solver said so.
fn converged(stop: StopReason) -> bool {
    matches!(stop, StopReason::Converged | StopReason::Gap)
}

impl From<TrainingSummaryV1> for TrainingSummary {
    fn from(t: TrainingSummaryV1) -> Self {
        Self {
            n_samples: t.n_samples,
            objective: t.objective,
            iterations: t.iterations,
            epochs: t.epochs,
            stop: t.stop,
            gap: None,
            converged: converged(t.stop),
        }
    }
}

/// `StructuredSvmParams` of format 1.
#[derive(Serialize, Deserialize)]
pub(crate) struct StructuredSvmParamsV1 {
    task: Task,
    solver: StructSolverKind,
    regularization: Regularization,
    epsilon: f64,
    max_passes: Option<f64>,
    max_seconds: Option<f64>,
    threads: Option<usize>,
    seed: u64,
    eval_every: f64,
    #[serde(default = "yes")]
    bias: bool,
    #[serde(default)]
    keep_best: bool,
    #[serde(default)]
    gap: Option<f64>,
}

/// `StructTrainingSummary` of format 1.
#[derive(Serialize, Deserialize)]
pub(crate) struct StructTrainingSummaryV1 {
    n_samples: usize,
    objective: f64,
    gap: Option<f64>,
    iterations: u64,
    passes: f64,
    stop: StopReason,
}

/// `StructuredModel` of format 1.
pub(crate) type StructuredModelV1 =
    StructuredModelOf<StructuredSvmParamsV1, StructTrainingSummaryV1, Absent>;

impl From<StructuredSvmParamsV1> for StructuredSvmParams {
    fn from(p: StructuredSvmParamsV1) -> Self {
        Self {
            task: p.task,
            solver: p.solver,
            regularization: p.regularization,
            epsilon: p.epsilon,
            max_passes: p.max_passes,
            max_seconds: p.max_seconds,
            threads: p.threads,
            seed: p.seed,
            eval_every: Some(p.eval_every),
            bias: p.bias,
            keep_best: p.keep_best,
            gap: p.gap,
            // Format 1 had no class weights, scaling, tolerance or loss choice: the defaults (none, the
            // hinge) are what it trained with.
            ..StructuredSvmParams::default()
        }
    }
}

impl From<StructTrainingSummaryV1> for StructTrainingSummary {
    fn from(t: StructTrainingSummaryV1) -> Self {
        Self {
            n_samples: t.n_samples,
            objective: t.objective,
            gap: t.gap,
            iterations: t.iterations,
            passes: t.passes,
            stop: t.stop,
            converged: converged(t.stop),
        }
    }
}
