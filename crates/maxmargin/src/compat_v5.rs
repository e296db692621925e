//! Model payloads of format 5, frozen: format 6 added the positive label asked for to the stored binary
//! parameters (`ParamsRecord::positive`), and what a model knows of its inputs (feature names, a sketch of
//! the training rows: `LinearModel::inputs`, `StructuredModel::inputs`). Files of format 5 are decoded with
//! the structs below and upgraded. Never change these structs.

use crate::linear::{
    Calibration, DecisionModel, KernelChoice, KernelExpansion, LinearModel, ParamsRecord,
    SolverKind, Threshold, TrainingSummary,
};
use crate::structured_svm::{
    CalibratedMulticlass, MulticlassCalibration, MulticlassKernel, StructTrainingSummary,
    StructuredModel, Task,
};
use crate::tagger::Tagger;
use maxmargin_core::objective::Regularization;
use maxmargin_core::scale::{Scaler, Scaling};
use maxmargin_io::conll::FeatureMap as ConllFeatures;
use maxmargin_optim::{Bias, BinaryLoss, Sampling, StepRule};
use serde::{Deserialize, Serialize};

/// `ParamsRecord` of format 5.
#[derive(Serialize, Deserialize)]
pub(crate) struct ParamsRecordV5 {
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
    #[serde(default)]
    approx: Option<crate::approx::Approximation>,
}

fn dcd_epsilon() -> f64 {
    maxmargin_optim::DcdParams::default().epsilon
}

fn one_block() -> usize {
    1
}

impl From<ParamsRecordV5> for ParamsRecord {
    fn from(r: ParamsRecordV5) -> Self {
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
            approx: r.approx,
            positive: None,
        }
    }
}

/// `LinearModel` of format 5.
#[derive(Serialize, Deserialize)]
pub(crate) struct LinearModelV5 {
    w: Vec<f64>,
    b: f64,
    labels: [f64; 2],
    n_features: usize,
    bias: Bias,
    lambda: f64,
    seed: u64,
    params: ParamsRecordV5,
    training: TrainingSummary,
    #[serde(default)]
    scaler: Option<Scaler>,
    #[serde(default)]
    kernel: Option<Box<KernelExpansion>>,
    #[serde(default)]
    features: Option<Box<crate::approx::FeatureMap>>,
}

impl From<LinearModelV5> for LinearModel {
    fn from(m: LinearModelV5) -> Self {
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
            features: m.features,
            inputs: None,
        }
    }
}

/// `DecisionModel` of format 5.
#[derive(Serialize, Deserialize)]
pub(crate) struct DecisionModelV5 {
    model: LinearModelV5,
    calibration: Option<Calibration>,
    threshold: Option<Threshold>,
}

impl From<DecisionModelV5> for DecisionModel {
    fn from(m: DecisionModelV5) -> Self {
        Self {
            model: m.model.into(),
            calibration: m.calibration,
            threshold: m.threshold,
        }
    }
}

/// `StructuredModel` of format 5.
#[derive(Serialize, Deserialize)]
pub(crate) struct StructuredModelV5 {
    task: Task,
    w: Vec<f64>,
    n_features: usize,
    n_labels: usize,
    #[serde(default)]
    classes: Vec<f64>,
    lambda: f64,
    seed: u64,
    params: crate::compat_v6::StructuredSvmParamsV6,
    training: StructTrainingSummary,
    #[serde(default)]
    scaler: Option<Scaler>,
    #[serde(default)]
    kernel: Option<Box<MulticlassKernel>>,
    #[serde(default)]
    features: Option<Box<crate::approx::FeatureMap>>,
}

impl From<StructuredModelV5> for StructuredModel {
    fn from(m: StructuredModelV5) -> Self {
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
            kernel: m.kernel,
            features: m.features,
            inputs: None,
            shape: Default::default(),
        }
    }
}

/// `CalibratedMulticlass` of format 5.
#[derive(Serialize, Deserialize)]
pub(crate) struct CalibratedMulticlassV5 {
    model: StructuredModelV5,
    calibration: MulticlassCalibration,
}

impl From<CalibratedMulticlassV5> for CalibratedMulticlass {
    fn from(m: CalibratedMulticlassV5) -> Self {
        Self {
            model: m.model.into(),
            calibration: m.calibration,
        }
    }
}

/// `Tagger` of format 5.
#[derive(Serialize, Deserialize)]
pub(crate) struct TaggerV5 {
    model: StructuredModelV5,
    features: ConllFeatures,
}

impl From<TaggerV5> for Tagger {
    fn from(t: TaggerV5) -> Self {
        Self {
            model: t.model.into(),
            features: t.features,
        }
    }
}
