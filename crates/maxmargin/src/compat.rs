//! Model payloads as format version 1 wrote them, frozen, and their conversion to today's models.
//!
//! bincode is not self-describing: a payload is read with exactly the struct that wrote it. Format 2 added
//! the fitted scaling, the convergence record (`converged`, the final gap) and a few parameters, so files of
//! format 1 are decoded with the structs below and upgraded. Never change these structs; when a payload
//! changes again, freeze the current one next to them and bump `model_file::FORMAT_VERSION`.

use crate::linear::{LinearModel, LinearSvmParams, ParamsRecord, SolverKind, TrainingSummary};
use crate::structured_svm::{
    StructSolverKind, StructTrainingSummary, StructuredModel, StructuredSvmParams, Task,
};
use maxmargin_core::objective::Regularization;
use maxmargin_core::scale::Scaling;
use maxmargin_optim::{Bias, BinaryLoss, Sampling, StepRule, StopReason};
use serde::{Deserialize, Serialize};

/// `LinearSvmParams` of format 1.
#[derive(Serialize, Deserialize)]
pub(crate) struct LinearSvmParamsV1 {
    solver: SolverKind,
    regularization: Regularization,
    epochs: Option<f64>,
    iterations: Option<u64>,
    max_seconds: Option<f64>,
    tolerance: Option<f64>,
    batch_size: usize,
    step: Option<StepRule>,
    bias: Bias,
    projection: bool,
    average: bool,
    average_from_epoch: f64,
    sampling: Sampling,
    seed: u64,
    eval_every_epochs: f64,
    #[serde(default)]
    keep_best: bool,
    #[serde(default = "dcd_epsilon")]
    epsilon: f64,
    #[serde(default)]
    loss: BinaryLoss,
    #[serde(default)]
    class_weights: Vec<(f64, f64)>,
    #[serde(default)]
    gap: Option<f64>,
    #[serde(default = "one")]
    blocks: usize,
    #[serde(default)]
    threads: Option<usize>,
}

fn dcd_epsilon() -> f64 {
    0.1
}

fn one() -> usize {
    1
}

fn yes() -> bool {
    true
}

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
#[derive(Serialize, Deserialize)]
pub(crate) struct LinearModelV1 {
    w: Vec<f64>,
    b: f64,
    labels: [f64; 2],
    n_features: usize,
    bias: Bias,
    lambda: f64,
    seed: u64,
    params: LinearSvmParamsV1,
    training: TrainingSummaryV1,
}

/// Format 1 kept no gap for binary models; a run is taken as converged when its solver said so.
fn converged(stop: StopReason) -> bool {
    matches!(stop, StopReason::Converged | StopReason::Gap)
}

impl From<LinearModelV1> for LinearModel {
    fn from(m: LinearModelV1) -> Self {
        let p = m.params;
        let params = LinearSvmParams::from(ParamsRecord {
            solver: p.solver,
            regularization: p.regularization,
            epochs: p.epochs,
            iterations: p.iterations,
            max_seconds: p.max_seconds,
            tolerance: p.tolerance,
            batch_size: p.batch_size,
            step: p.step,
            bias: p.bias,
            projection: p.projection,
            average: p.average,
            average_from_epoch: p.average_from_epoch,
            sampling: p.sampling,
            seed: p.seed,
            eval_every_epochs: Some(p.eval_every_epochs),
            keep_best: p.keep_best,
            epsilon: p.epsilon,
            loss: p.loss,
            class_weights: p.class_weights,
            gap: p.gap,
            blocks: p.blocks,
            threads: p.threads,
            scale: Scaling::None,
            trace: false,
            kernel: None,
            cache_mb: maxmargin_optim::SmoParams::default().cache_mb,
            approx: None,
            positive: None,
        });
        let t = m.training;
        Self {
            w: m.w,
            b: m.b,
            labels: m.labels,
            n_features: m.n_features,
            bias: m.bias,
            lambda: m.lambda,
            seed: m.seed,
            params,
            training: TrainingSummary {
                n_samples: t.n_samples,
                objective: t.objective,
                iterations: t.iterations,
                epochs: t.epochs,
                stop: t.stop,
                gap: None,
                converged: converged(t.stop),
            },
            scaler: None,
            kernel: None,
            features: None,
            inputs: None,
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
#[derive(Serialize, Deserialize)]
pub(crate) struct StructuredModelV1 {
    task: Task,
    w: Vec<f64>,
    n_features: usize,
    n_labels: usize,
    #[serde(default)]
    classes: Vec<f64>,
    lambda: f64,
    seed: u64,
    params: StructuredSvmParamsV1,
    training: StructTrainingSummaryV1,
}

impl From<StructuredModelV1> for StructuredModel {
    fn from(m: StructuredModelV1) -> Self {
        let p = m.params;
        let params = StructuredSvmParams {
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
            class_weights: Vec::new(),
            scale: Scaling::None,
            tolerance: None,
            trace: false,
            loss: BinaryLoss::Hinge,
            ..StructuredSvmParams::default()
        };
        let t = m.training;
        Self {
            task: m.task,
            w: m.w,
            n_features: m.n_features,
            n_labels: m.n_labels,
            classes: m.classes,
            lambda: m.lambda,
            seed: m.seed,
            params,
            training: StructTrainingSummary {
                n_samples: t.n_samples,
                objective: t.objective,
                gap: t.gap,
                iterations: t.iterations,
                passes: t.passes,
                stop: t.stop,
                converged: converged(t.stop),
            },
            scaler: None,
            kernel: None,
            features: None,
            inputs: None,
            shape: Default::default(),
        }
    }
}
