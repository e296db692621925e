//! Model payloads of format 6, frozen: format 7 added how the loss enters the hinge
//! (`StructuredSvmParams::rescaling`, margin or slack rescaling) to the stored structural parameters. Files
//! of format 6 (and the structural parameters of format 5, the same layout) are decoded with the structs
//! below and upgraded to margin rescaling, which is what they were trained with. Never change these structs.

use crate::structured_svm::{
    CalibratedMulticlass, CustomModel, GraphModel, MulticlassCalibration, MulticlassKernel,
    StructSolverKind, StructTrainingSummary, StructuredModel, StructuredSvmParams, Task,
};
use crate::tagger::Tagger;
use maxmargin_core::objective::Regularization;
use maxmargin_core::scale::{Scaler, Scaling};
use maxmargin_io::conll::FeatureMap as ConllFeatures;
use maxmargin_optim::BinaryLoss;
use maxmargin_struct::GraphSpace;
use serde::{Deserialize, Serialize};

/// `StructuredSvmParams` of formats 5 and 6.
#[derive(Serialize, Deserialize)]
pub(crate) struct StructuredSvmParamsV6 {
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
    #[serde(default)]
    kernel: Option<crate::linear::KernelChoice>,
    #[serde(default)]
    approx: Option<crate::approx::Approximation>,
}

fn yes() -> bool {
    true
}

impl From<StructuredSvmParamsV6> for StructuredSvmParams {
    fn from(p: StructuredSvmParamsV6) -> Self {
        let mut out = StructuredSvmParams::new(p.task);
        out.task = p.task;
        out.solver = p.solver;
        out.regularization = p.regularization;
        out.epsilon = p.epsilon;
        out.max_passes = p.max_passes;
        out.max_seconds = p.max_seconds;
        out.seed = p.seed;
        out.eval_every = p.eval_every;
        out.bias = p.bias;
        out.keep_best = p.keep_best;
        out.gap = p.gap;
        out.class_weights = p.class_weights;
        out.scale = p.scale;
        out.tolerance = p.tolerance;
        out.loss = p.loss;
        out.kernel = p.kernel;
        out.approx = p.approx;
        out
    }
}

/// `StructuredModel` of format 6.
#[derive(Serialize, Deserialize)]
pub(crate) struct StructuredModelV6 {
    task: Task,
    w: Vec<f64>,
    n_features: usize,
    n_labels: usize,
    #[serde(default)]
    classes: Vec<f64>,
    lambda: f64,
    seed: u64,
    params: StructuredSvmParamsV6,
    training: StructTrainingSummary,
    #[serde(default)]
    scaler: Option<Scaler>,
    #[serde(default)]
    kernel: Option<Box<MulticlassKernel>>,
    #[serde(default)]
    features: Option<Box<crate::approx::FeatureMap>>,
    #[serde(default)]
    inputs: Option<Box<crate::inputs::Inputs>>,
}

impl From<StructuredModelV6> for StructuredModel {
    fn from(m: StructuredModelV6) -> Self {
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
            inputs: m.inputs,
            shape: Default::default(),
        }
    }
}

/// `CalibratedMulticlass` of format 6.
#[derive(Serialize, Deserialize)]
pub(crate) struct CalibratedMulticlassV6 {
    model: StructuredModelV6,
    calibration: MulticlassCalibration,
}

impl From<CalibratedMulticlassV6> for CalibratedMulticlass {
    fn from(m: CalibratedMulticlassV6) -> Self {
        Self {
            model: m.model.into(),
            calibration: m.calibration,
        }
    }
}

/// `Tagger` of format 6.
#[derive(Serialize, Deserialize)]
pub(crate) struct TaggerV6 {
    model: StructuredModelV6,
    features: ConllFeatures,
}

impl From<TaggerV6> for Tagger {
    fn from(t: TaggerV6) -> Self {
        Self {
            model: t.model.into(),
            features: t.features,
        }
    }
}

/// `GraphModel` of format 6.
#[derive(Serialize, Deserialize)]
pub(crate) struct GraphModelV6 {
    model: StructuredModelV6,
    space: GraphSpace,
}

impl From<GraphModelV6> for GraphModel {
    fn from(m: GraphModelV6) -> Self {
        Self {
            model: m.model.into(),
            space: m.space,
        }
    }
}

/// `CustomModel` of formats 5 and 6.
#[derive(Serialize, Deserialize)]
pub(crate) struct CustomModelV6<S> {
    space: S,
    w: Vec<f64>,
    lambda: f64,
    params: StructuredSvmParamsV6,
    training: StructTrainingSummary,
}

impl<S> From<CustomModelV6<S>> for CustomModel<S> {
    fn from(m: CustomModelV6<S>) -> Self {
        Self {
            space: m.space,
            w: m.w,
            lambda: m.lambda,
            params: m.params.into(),
            training: m.training,
        }
    }
}
