//! Model payloads of formats 2 and 3, frozen: format 4 added the kernel to the stored parameters
//! (`ParamsRecord::kernel`), the kernel expansion to binary models (`LinearModel::kernel`) and one-vs-rest's
//! loss to the structured parameters (`StructuredSvmParams::loss`), so files of formats 2 and 3 are decoded
//! with the structs below and upgraded. Never change these structs.

use crate::linear::{
    Calibration, DecisionModel, LinearModel, ParamsRecord, SolverKind, Threshold, TrainingSummary,
};
use crate::structured_svm::{
    CalibratedMulticlass, CustomModel, MulticlassCalibration, StructSolverKind,
    StructTrainingSummary, StructuredModel, StructuredSvmParams, Task,
};
use crate::tagger::Tagger;
use maxmargin_core::objective::Regularization;
use maxmargin_core::scale::{Scaler, Scaling};
use maxmargin_io::conll::FeatureMap;
use maxmargin_optim::{Bias, BinaryLoss, Sampling, StepRule};
use serde::{Deserialize, Serialize};

/// `ParamsRecord` of formats 2 and 3.
#[derive(Serialize, Deserialize)]
pub(crate) struct ParamsRecordV3 {
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
    eval_every_epochs: Option<f64>,
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
    #[serde(default = "one_block")]
    blocks: usize,
    /// Not stored (the model does not depend on it).
    #[serde(skip)]
    threads: Option<usize>,
    #[serde(default)]
    scale: Scaling,
    /// Not stored (the model does not depend on it).
    #[serde(skip)]
    trace: bool,
}

fn dcd_epsilon() -> f64 {
    maxmargin_optim::DcdParams::default().epsilon
}

fn one_block() -> usize {
    1
}

impl From<ParamsRecordV3> for ParamsRecord {
    fn from(r: ParamsRecordV3) -> Self {
        Self {
            solver: r.solver,
            regularization: r.regularization,
            epochs: r.epochs,
            iterations: r.iterations,
            max_seconds: r.max_seconds,
            tolerance: r.tolerance,
            batch_size: r.batch_size,
            step: r.step,
            bias: r.bias,
            projection: r.projection,
            average: r.average,
            average_from_epoch: r.average_from_epoch,
            sampling: r.sampling,
            seed: r.seed,
            eval_every_epochs: r.eval_every_epochs,
            keep_best: r.keep_best,
            epsilon: r.epsilon,
            loss: r.loss,
            class_weights: r.class_weights,
            gap: r.gap,
            blocks: r.blocks,
            threads: r.threads,
            scale: r.scale,
            trace: r.trace,
            kernel: None,
            cache_mb: maxmargin_optim::SmoParams::default().cache_mb,
            approx: None,
            positive: None,
        }
    }
}

/// `LinearModel` of formats 2 and 3.
#[derive(Serialize, Deserialize)]
pub(crate) struct LinearModelV3 {
    w: Vec<f64>,
    b: f64,
    labels: [f64; 2],
    n_features: usize,
    bias: Bias,
    lambda: f64,
    seed: u64,
    params: ParamsRecordV3,
    training: TrainingSummary,
    #[serde(default)]
    scaler: Option<Scaler>,
}

impl From<LinearModelV3> for LinearModel {
    fn from(m: LinearModelV3) -> Self {
        Self {
            w: m.w,
            b: m.b,
            labels: m.labels,
            n_features: m.n_features,
            bias: m.bias,
            lambda: m.lambda,
            seed: m.seed,
            params: ParamsRecord::from(m.params).into(),
            training: m.training,
            scaler: m.scaler,
            kernel: None,
            features: None,
            inputs: None,
        }
    }
}

/// `DecisionModel` of formats 2 and 3.
#[derive(Serialize, Deserialize)]
pub(crate) struct DecisionModelV3 {
    model: LinearModelV3,
    calibration: Option<Calibration>,
    threshold: Option<Threshold>,
}

impl From<DecisionModelV3> for DecisionModel {
    fn from(m: DecisionModelV3) -> Self {
        Self {
            model: m.model.into(),
            calibration: m.calibration,
            threshold: m.threshold,
        }
    }
}

/// `StructuredSvmParams` of formats 2 and 3 (format 4 added one-vs-rest's `loss`).
#[derive(Serialize, Deserialize)]
pub(crate) struct StructuredSvmParamsV3 {
    task: Task,
    solver: StructSolverKind,
    regularization: Regularization,
    epsilon: f64,
    max_passes: Option<f64>,
    max_seconds: Option<f64>,
    #[serde(skip)]
    threads: Option<usize>,
    seed: u64,
    eval_every: Option<f64>,
    #[serde(default = "yes")]
    bias: bool,
    #[serde(default)]
    keep_best: bool,
    #[serde(default)]
    gap: Option<f64>,
    #[serde(default)]
    class_weights: Vec<(f64, f64)>,
    #[serde(default)]
    scale: Scaling,
    #[serde(default)]
    tolerance: Option<f64>,
    #[serde(skip)]
    trace: bool,
}

fn yes() -> bool {
    true
}

impl From<StructuredSvmParamsV3> for StructuredSvmParams {
    fn from(p: StructuredSvmParamsV3) -> Self {
        Self {
            task: p.task,
            solver: p.solver,
            regularization: p.regularization,
            epsilon: p.epsilon,
            max_passes: p.max_passes,
            max_seconds: p.max_seconds,
            threads: p.threads,
            seed: p.seed,
            eval_every: p.eval_every,
            bias: p.bias,
            keep_best: p.keep_best,
            gap: p.gap,
            class_weights: p.class_weights,
            scale: p.scale,
            tolerance: p.tolerance,
            trace: p.trace,
            loss: BinaryLoss::Hinge,
            ..StructuredSvmParams::default()
        }
    }
}

/// `StructuredModel` of formats 2 and 3.
#[derive(Serialize, Deserialize)]
pub(crate) struct StructuredModelV3 {
    task: Task,
    w: Vec<f64>,
    n_features: usize,
    n_labels: usize,
    #[serde(default)]
    classes: Vec<f64>,
    lambda: f64,
    seed: u64,
    params: StructuredSvmParamsV3,
    training: StructTrainingSummary,
    #[serde(default)]
    scaler: Option<Scaler>,
}

impl From<StructuredModelV3> for StructuredModel {
    fn from(m: StructuredModelV3) -> Self {
        Self {
            task: m.task,
            w: m.w,
            n_features: m.n_features,
            n_labels: m.n_labels,
            classes: m.classes,
            lambda: m.lambda,
            seed: m.seed,
            params: m.params.into(),
            training: m.training,
            scaler: m.scaler,
            kernel: None,
            features: None,
            inputs: None,
            shape: Default::default(),
        }
    }
}

/// `CalibratedMulticlass` of formats 2 and 3.
#[derive(Serialize, Deserialize)]
pub(crate) struct CalibratedMulticlassV3 {
    model: StructuredModelV3,
    calibration: MulticlassCalibration,
}

impl From<CalibratedMulticlassV3> for CalibratedMulticlass {
    fn from(m: CalibratedMulticlassV3) -> Self {
        Self {
            model: m.model.into(),
            calibration: m.calibration,
        }
    }
}

/// `Tagger` of formats 2 and 3.
#[derive(Serialize, Deserialize)]
pub(crate) struct TaggerV3 {
    model: StructuredModelV3,
    features: FeatureMap,
}

impl From<TaggerV3> for Tagger {
    fn from(t: TaggerV3) -> Self {
        Self {
            model: t.model.into(),
            features: t.features,
        }
    }
}

/// `CustomModel` of formats 2 and 3.
#[derive(Serialize, Deserialize)]
#[serde(bound = "S: Serialize + serde::de::DeserializeOwned")]
pub(crate) struct CustomModelV3<S> {
    space: S,
    w: Vec<f64>,
    lambda: f64,
    params: StructuredSvmParamsV3,
    training: StructTrainingSummary,
}

impl<S> From<CustomModelV3<S>> for CustomModel<S> {
    fn from(m: CustomModelV3<S>) -> Self {
        Self {
            space: m.space,
            w: m.w,
            lambda: m.lambda,
            params: m.params.into(),
            training: m.training,
        }
    }
}
