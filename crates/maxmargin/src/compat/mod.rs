//! Model payloads of older formats, frozen, and their upgrade to today's models.
//!
//! bincode is not self-describing: a payload is read with exactly the layout that wrote it, and a JSON
//! payload's typed checksum is over the JSON that layout writes. Each format's layout is one of the generic
//! structs below (and in [`params`]) with the fields it did not have yet as [`Absent`], which is nothing in
//! bincode and no key in JSON, so one struct spells every format's field order once:
//! - format 2 added the fitted scaling, the convergence record (`converged`, the final gap) and a few
//!   parameters (format 1 is in [`v1`] where its layout differs inside a field);
//! - format 4 the kernel to the stored parameters (`ParamsRecord::kernel`), the kernel expansion to binary
//!   models (`LinearModel::kernel`) and one-vs-rest's loss to the structured parameters;
//! - format 5 the approximated kernel to the binary and structured parameters and the kernel to the structured
//!   ones, the random Fourier features
//!   to binary and structured models, and the multiclass kernel machines (`StructuredModel::kernel`);
//! - format 6 the positive label asked for (`ParamsRecord::positive`) and what a model knows of its inputs
//!   (`LinearModel::inputs`, `StructuredModel::inputs`);
//! - format 7 how the loss enters the structured hinge (`StructuredSvmParams::rescaling`); older files are
//!   upgraded to margin rescaling, which is what they were trained with.
//!
//! Never change these layouts or their aliases: a format's bytes are the aliases' field order. When a
//! payload changes again, alias today's layout here (a field these structs lack becomes a type parameter
//! that the older aliases leave [`Absent`]) and bump `model_file::FORMAT_VERSION`.

pub(crate) mod params;
pub(crate) mod v1;

pub(crate) use params::{ParamsRecordV3, ParamsRecordV4, ParamsRecordV5};
use params::{StructParamsV3, StructParamsV4, StructParamsV6};

use crate::linear::{
    Calibration, DecisionModel, KernelExpansion, LinearModel, ParamsRecord, Threshold,
    TrainingSummary,
};
use crate::structured_svm::{
    CalibratedMulticlass, CustomModel, GraphModel, MulticlassCalibration, MulticlassKernel,
    StructTrainingSummary, StructuredModel, StructuredSvmParams, Task,
};
use crate::tagger::Tagger;
use maxmargin_core::scale::{Scaler, Scaling};
use maxmargin_io::conll::FeatureMap as ConllFeatures;
use maxmargin_optim::{Bias, BinaryLoss};
use maxmargin_struct::GraphSpace;
use serde::{Deserialize, Serialize};

/// A field a format did not have: no bytes in bincode, no key in JSON (with
/// `#[serde(default, skip_serializing_if = "Stored::absent")]`), today's default when upgraded.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub(crate) struct Absent;

impl<'de> Deserialize<'de> for Absent {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        if d.is_human_readable() {
            // A JSON key of that name, which the format's own struct ignored as an unknown field.
            serde::de::IgnoredAny::deserialize(d)?;
        } else {
            <()>::deserialize(d)?;
        }
        Ok(Absent)
    }
}

/// Whether a field is [`Absent`] (for `skip_serializing_if`).
pub(crate) trait Stored {
    fn absent(&self) -> bool {
        false
    }
}

impl Stored for Absent {
    fn absent(&self) -> bool {
        true
    }
}
impl<T> Stored for Option<T> {}
impl Stored for Scaling {}
impl Stored for BinaryLoss {}

/// A stored field's value today: itself, or today's default for an [`Absent`] one.
pub(crate) trait Upgrade<T> {
    fn upgrade(self) -> T;
}

impl<T: Default> Upgrade<T> for Absent {
    fn upgrade(self) -> T {
        T::default()
    }
}
impl<T> Upgrade<Option<T>> for Option<T> {
    fn upgrade(self) -> Option<T> {
        self
    }
}
impl Upgrade<Option<f64>> for f64 {
    fn upgrade(self) -> Option<f64> {
        Some(self)
    }
}
impl Upgrade<Scaling> for Scaling {
    fn upgrade(self) -> Scaling {
        self
    }
}
impl Upgrade<BinaryLoss> for BinaryLoss {
    fn upgrade(self) -> BinaryLoss {
        self
    }
}

/// `LinearModel` of formats 1 to 5: the parameters `P`, the training summary `T`, and the scaler `S`
/// (format 2), kernel expansion `K` (format 4) and random Fourier features `F` (format 5).
#[derive(Serialize, Deserialize)]
pub(crate) struct LinearModelOf<
    P,
    T = TrainingSummary,
    S: Stored = Option<Scaler>,
    K: Stored = Absent,
    F: Stored = Absent,
> {
    w: Vec<f64>,
    b: f64,
    labels: [f64; 2],
    n_features: usize,
    bias: Bias,
    lambda: f64,
    seed: u64,
    params: P,
    training: T,
    #[serde(default, skip_serializing_if = "Stored::absent")]
    scaler: S,
    #[serde(default, skip_serializing_if = "Stored::absent")]
    kernel: K,
    #[serde(default, skip_serializing_if = "Stored::absent")]
    features: F,
}

pub(crate) type LinearModelV3 = LinearModelOf<ParamsRecordV3>;
pub(crate) type LinearModelV4 =
    LinearModelOf<ParamsRecordV4, TrainingSummary, Option<Scaler>, Option<Box<KernelExpansion>>>;
pub(crate) type LinearModelV5 = LinearModelOf<
    ParamsRecordV5,
    TrainingSummary,
    Option<Scaler>,
    Option<Box<KernelExpansion>>,
    Option<Box<crate::approx::FeatureMap>>,
>;

impl<P, T, S: Stored, K: Stored, F: Stored> From<LinearModelOf<P, T, S, K, F>> for LinearModel
where
    P: Into<ParamsRecord>,
    T: Into<TrainingSummary>,
    S: Upgrade<Option<Scaler>>,
    K: Upgrade<Option<Box<KernelExpansion>>>,
    F: Upgrade<Option<Box<crate::approx::FeatureMap>>>,
{
    fn from(m: LinearModelOf<P, T, S, K, F>) -> Self {
        Self {
            w: m.w,
            b: m.b,
            labels: m.labels,
            n_features: m.n_features,
            bias: m.bias,
            lambda: m.lambda,
            seed: m.seed,
            params: Into::<ParamsRecord>::into(m.params).into(),
            training: m.training.into(),
            scaler: m.scaler.upgrade(),
            kernel: m.kernel.upgrade(),
            features: m.features.upgrade(),
            inputs: None,
        }
    }
}

/// `StructuredModel` of formats 1 to 6: the parameters `P`, the training summary `T`, and the scaler `S`
/// (format 2), kernel machines `K` and random Fourier features `F` (format 5) and inputs `I` (format 6).
#[derive(Serialize, Deserialize)]
pub(crate) struct StructuredModelOf<
    P,
    T = StructTrainingSummary,
    S: Stored = Option<Scaler>,
    K: Stored = Absent,
    F: Stored = Absent,
    I: Stored = Absent,
> {
    task: Task,
    w: Vec<f64>,
    n_features: usize,
    n_labels: usize,
    #[serde(default)]
    classes: Vec<f64>,
    lambda: f64,
    seed: u64,
    params: P,
    training: T,
    #[serde(default, skip_serializing_if = "Stored::absent")]
    scaler: S,
    #[serde(default, skip_serializing_if = "Stored::absent")]
    kernel: K,
    #[serde(default, skip_serializing_if = "Stored::absent")]
    features: F,
    #[serde(default, skip_serializing_if = "Stored::absent")]
    inputs: I,
}

pub(crate) type StructuredModelV3 = StructuredModelOf<StructParamsV3>;
pub(crate) type StructuredModelV4 = StructuredModelOf<StructParamsV4>;
pub(crate) type StructuredModelV5 = StructuredModelOf<
    StructParamsV6,
    StructTrainingSummary,
    Option<Scaler>,
    Option<Box<MulticlassKernel>>,
    Option<Box<crate::approx::FeatureMap>>,
>;
pub(crate) type StructuredModelV6 = StructuredModelOf<
    StructParamsV6,
    StructTrainingSummary,
    Option<Scaler>,
    Option<Box<MulticlassKernel>>,
    Option<Box<crate::approx::FeatureMap>>,
    Option<Box<crate::inputs::Inputs>>,
>;

impl<P, T, S: Stored, K: Stored, F: Stored, I: Stored> From<StructuredModelOf<P, T, S, K, F, I>>
    for StructuredModel
where
    P: Into<StructuredSvmParams>,
    T: Into<StructTrainingSummary>,
    S: Upgrade<Option<Scaler>>,
    K: Upgrade<Option<Box<MulticlassKernel>>>,
    F: Upgrade<Option<Box<crate::approx::FeatureMap>>>,
    I: Upgrade<Option<Box<crate::inputs::Inputs>>>,
{
    fn from(m: StructuredModelOf<P, T, S, K, F, I>) -> Self {
        Self {
            task: m.task,
            w: m.w,
            n_features: m.n_features,
            n_labels: m.n_labels,
            classes: m.classes,
            lambda: m.lambda,
            seed: m.seed,
            params: m.params.into(),
            training: m.training.into(),
            scaler: m.scaler.upgrade(),
            kernel: m.kernel.upgrade(),
            features: m.features.upgrade(),
            inputs: m.inputs.upgrade(),
            shape: Default::default(),
        }
    }
}

/// A frozen payload that holds the model of its format, `M`, beside fields of its own that no format
/// changed, and its upgrade: the model upgraded, the fields as they are.
macro_rules! holder {
    ($(#[$doc:meta])* $name:ident<M: $inner:ty> => $today:ty { $($field:ident: $ty:ty),+ }) => {
        $(#[$doc])*
        #[derive(Serialize, Deserialize)]
        pub(crate) struct $name<M> {
            model: M,
            $($field: $ty),+
        }

        impl<M: Into<$inner>> From<$name<M>> for $today {
            fn from(m: $name<M>) -> Self {
                Self {
                    model: m.model.into(),
                    $($field: m.$field),+
                }
            }
        }
    };
}

holder! {
    /// `DecisionModel` of formats 2 to 5.
    DecisionOf<M: LinearModel> => DecisionModel {
        calibration: Option<Calibration>,
        threshold: Option<Threshold>
    }
}
holder! {
    /// `CalibratedMulticlass` of formats 2 to 6.
    CalibratedOf<M: StructuredModel> => CalibratedMulticlass { calibration: MulticlassCalibration }
}
holder! {
    /// `Tagger` of formats 2 to 6.
    TaggerOf<M: StructuredModel> => Tagger { features: ConllFeatures }
}
holder! {
    /// `GraphModel` of format 6.
    GraphOf<M: StructuredModel> => GraphModel { space: GraphSpace }
}

pub(crate) type DecisionModelV3 = DecisionOf<LinearModelV3>;
pub(crate) type DecisionModelV4 = DecisionOf<LinearModelV4>;
pub(crate) type DecisionModelV5 = DecisionOf<LinearModelV5>;
pub(crate) type CalibratedMulticlassV3 = CalibratedOf<StructuredModelV3>;
pub(crate) type CalibratedMulticlassV4 = CalibratedOf<StructuredModelV4>;
pub(crate) type CalibratedMulticlassV5 = CalibratedOf<StructuredModelV5>;
pub(crate) type CalibratedMulticlassV6 = CalibratedOf<StructuredModelV6>;
pub(crate) type TaggerV3 = TaggerOf<StructuredModelV3>;
pub(crate) type TaggerV4 = TaggerOf<StructuredModelV4>;
pub(crate) type TaggerV5 = TaggerOf<StructuredModelV5>;
pub(crate) type TaggerV6 = TaggerOf<StructuredModelV6>;
pub(crate) type GraphModelV6 = GraphOf<StructuredModelV6>;

/// `CustomModel` of formats 2 to 6: the user's space `S` and the parameters `P` of its format.
#[derive(Serialize, Deserialize)]
pub(crate) struct CustomOf<S, P> {
    space: S,
    w: Vec<f64>,
    lambda: f64,
    params: P,
    training: StructTrainingSummary,
}

pub(crate) type CustomModelV3<S> = CustomOf<S, StructParamsV3>;
pub(crate) type CustomModelV4<S> = CustomOf<S, StructParamsV4>;
pub(crate) type CustomModelV6<S> = CustomOf<S, StructParamsV6>;

impl<S, P: Into<StructuredSvmParams>> From<CustomOf<S, P>> for CustomModel<S> {
    fn from(m: CustomOf<S, P>) -> Self {
        Self {
            space: m.space,
            w: m.w,
            lambda: m.lambda,
            params: m.params.into(),
            training: m.training,
        }
    }
}
