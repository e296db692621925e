//! Model payloads of format 4, frozen: format 5 added the approximated kernel to the stored binary
//! parameters (`ParamsRecord::approx`) and the random Fourier features to binary models
//! (`LinearModel::features`); and the kernel and approximation to the structured parameters
//! (`StructuredSvmParams::{kernel, approx}`) and the multiclass kernel machines and random Fourier features
//! to structured models (`StructuredModel::{kernel, features}`). Files of format 4 are decoded with the
//! structs below and upgraded. Never change these structs.

use crate::linear::{
    Calibration, DecisionModel, KernelChoice, KernelExpansion, LinearModel, ParamsRecord,
    SolverKind, Threshold, TrainingSummary,
};
use crate::structured_svm::{
    CalibratedMulticlass, CustomModel, MulticlassCalibration, StructSolverKind,
    StructTrainingSummary, StructuredModel, StructuredSvmParams, Task,
};
use crate::tagger::Tagger;
use maxmargin_core::objective::Regularization;
use maxmargin_core::scale::{Scaler, Scaling};
use maxmargin_io::conll::FeatureMap as ConllFeatures;
use maxmargin_optim::{Bias, BinaryLoss, Sampling, StepRule};
use serde::{Deserialize, Serialize};

/// `ParamsRecord` of format 4.
#[derive(Serialize, Deserialize)]
pub(crate) struct ParamsRecordV4 {
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
    #[serde(default)]
    scale: Scaling,
    #[serde(default)]
    kernel: Option<KernelChoice>,
}

fn dcd_epsilon() -> f64 {
    maxmargin_optim::DcdParams::default().epsilon
}

fn one_block() -> usize {
    1
}

fn yes() -> bool {
    true
}

impl From<ParamsRecordV4> for ParamsRecord {
    fn from(r: ParamsRecordV4) -> Self {
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
            threads: None,
            scale: r.scale,
            trace: false,
            kernel: r.kernel,
            cache_mb: maxmargin_optim::SmoParams::default().cache_mb,
            approx: None,
            positive: None,
        }
    }
}

/// `LinearModel` of format 4.
#[derive(Serialize, Deserialize)]
pub(crate) struct LinearModelV4 {
    w: Vec<f64>,
    b: f64,
    labels: [f64; 2],
    n_features: usize,
    bias: Bias,
    lambda: f64,
    seed: u64,
    params: ParamsRecordV4,
    training: TrainingSummary,
    #[serde(default)]
    scaler: Option<Scaler>,
    #[serde(default)]
    kernel: Option<Box<KernelExpansion>>,
}

impl From<LinearModelV4> for LinearModel {
    fn from(m: LinearModelV4) -> Self {
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
            kernel: m.kernel,
            features: None,
            inputs: None,
        }
    }
}

/// `DecisionModel` of format 4.
#[derive(Serialize, Deserialize)]
pub(crate) struct DecisionModelV4 {
    model: LinearModelV4,
    calibration: Option<Calibration>,
    threshold: Option<Threshold>,
}

impl From<DecisionModelV4> for DecisionModel {
    fn from(m: DecisionModelV4) -> Self {
        Self {
            model: m.model.into(),
            calibration: m.calibration,
            threshold: m.threshold,
        }
    }
}

/// `StructuredSvmParams` of format 4 (format 5 added the kernel and the approximated kernel).
#[derive(Serialize, Deserialize)]
pub(crate) struct StructuredSvmParamsV4 {
    task: Task,
    solver: StructSolverKind,
    regularization: Regularization,
    epsilon: f64,
    max_passes: Option<f64>,
    max_seconds: Option<f64>,
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
    #[serde(default)]
    loss: BinaryLoss,
}

impl From<StructuredSvmParamsV4> for StructuredSvmParams {
    fn from(p: StructuredSvmParamsV4) -> Self {
        Self {
            task: p.task,
            solver: p.solver,
            regularization: p.regularization,
            epsilon: p.epsilon,
            max_passes: p.max_passes,
            max_seconds: p.max_seconds,
            seed: p.seed,
            eval_every: p.eval_every,
            bias: p.bias,
            keep_best: p.keep_best,
            gap: p.gap,
            class_weights: p.class_weights,
            scale: p.scale,
            tolerance: p.tolerance,
            loss: p.loss,
            ..StructuredSvmParams::default()
        }
    }
}

/// `StructuredModel` of format 4.
#[derive(Serialize, Deserialize)]
pub(crate) struct StructuredModelV4 {
    task: Task,
    w: Vec<f64>,
    n_features: usize,
    n_labels: usize,
    #[serde(default)]
    classes: Vec<f64>,
    lambda: f64,
    seed: u64,
    params: StructuredSvmParamsV4,
    training: StructTrainingSummary,
    #[serde(default)]
    scaler: Option<Scaler>,
}

impl From<StructuredModelV4> for StructuredModel {
    fn from(m: StructuredModelV4) -> Self {
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

/// `CalibratedMulticlass` of format 4.
#[derive(Serialize, Deserialize)]
pub(crate) struct CalibratedMulticlassV4 {
    model: StructuredModelV4,
    calibration: MulticlassCalibration,
}

impl From<CalibratedMulticlassV4> for CalibratedMulticlass {
    fn from(m: CalibratedMulticlassV4) -> Self {
        Self {
            model: m.model.into(),
            calibration: m.calibration,
        }
    }
}

/// `Tagger` of format 4.
#[derive(Serialize, Deserialize)]
pub(crate) struct TaggerV4 {
    model: StructuredModelV4,
    features: ConllFeatures,
}

impl From<TaggerV4> for Tagger {
    fn from(t: TaggerV4) -> Self {
        Self {
            model: t.model.into(),
            features: t.features,
        }
    }
}

/// `CustomModel` of format 4.
#[derive(Serialize, Deserialize)]
#[serde(bound = "S: Serialize + serde::de::DeserializeOwned")]
pub(crate) struct CustomModelV4<S> {
    space: S,
    w: Vec<f64>,
    lambda: f64,
    params: StructuredSvmParamsV4,
    training: StructTrainingSummary,
}

impl<S> From<CustomModelV4<S>> for CustomModel<S> {
    fn from(m: CustomModelV4<S>) -> Self {
        Self {
            space: m.space,
            w: m.w,
            lambda: m.lambda,
            params: m.params.into(),
            training: m.training,
        }
    }
}
