//! The stored training parameters of older formats, frozen (see [`super`]).

use super::{Absent, Stored, Upgrade};
use crate::approx::Approximation;
use crate::linear::{KernelChoice, ParamsRecord, SolverKind};
use crate::structured_svm::{StructSolverKind, StructuredSvmParams, Task};
use maxmargin_core::objective::Regularization;
use maxmargin_core::scale::Scaling;
use maxmargin_optim::{Bias, BinaryLoss, Sampling, StepRule};
use serde::{Deserialize, Serialize};

/// `ParamsRecord` (`LinearSvmParams` in format 1) of formats 1 to 5: how often the objective was evaluated
/// `E` (a number in format 1, optional since), the thread count `Th` (stored by format 1 only), and the
/// scaling `S` (format 2), kernel `K` (format 4) and approximated kernel `A` (format 5).
#[derive(Serialize, Deserialize)]
pub(crate) struct BinaryParamsOf<
    E,
    Th: Stored = Absent,
    S: Stored = Scaling,
    K: Stored = Absent,
    A: Stored = Absent,
> {
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
    eval_every_epochs: E,
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
    #[serde(default, skip_serializing_if = "Stored::absent")]
    threads: Th,
    #[serde(default, skip_serializing_if = "Stored::absent")]
    scale: S,
    #[serde(default, skip_serializing_if = "Stored::absent")]
    kernel: K,
    #[serde(default, skip_serializing_if = "Stored::absent")]
    approx: A,
}

pub(crate) type LinearSvmParamsV1 = BinaryParamsOf<f64, Option<usize>, Absent>;
pub(crate) type ParamsRecordV3 = BinaryParamsOf<Option<f64>>;
pub(crate) type ParamsRecordV4 = BinaryParamsOf<Option<f64>, Absent, Scaling, Option<KernelChoice>>;
pub(crate) type ParamsRecordV5 =
    BinaryParamsOf<Option<f64>, Absent, Scaling, Option<KernelChoice>, Option<Approximation>>;

/// DCD's ε of formats 1 to 5, for a JSON payload without one.
fn dcd_epsilon() -> f64 {
    0.1
}

fn one_block() -> usize {
    1
}

pub(super) fn yes() -> bool {
    true
}

impl<E, Th: Stored, S: Stored, K: Stored, A: Stored> From<BinaryParamsOf<E, Th, S, K, A>>
    for ParamsRecord
where
    E: Upgrade<Option<f64>>,
    Th: Upgrade<Option<usize>>,
    S: Upgrade<Scaling>,
    K: Upgrade<Option<KernelChoice>>,
    A: Upgrade<Option<Approximation>>,
{
    fn from(r: BinaryParamsOf<E, Th, S, K, A>) -> Self {
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
            eval_every_epochs: r.eval_every_epochs.upgrade(),
            keep_best: r.keep_best,
            epsilon: r.epsilon,
            loss: r.loss,
            class_weights: r.class_weights,
            gap: r.gap,
            blocks: r.blocks,
            threads: r.threads.upgrade(),
            scale: r.scale.upgrade(),
            trace: false,
            kernel: r.kernel.upgrade(),
            cache_mb: maxmargin_optim::SmoParams::default().cache_mb,
            approx: r.approx.upgrade(),
            positive: None,
        }
    }
}

/// `StructuredSvmParams` of formats 2 to 6 (format 1's is [`super::v1::StructuredSvmParamsV1`]):
/// one-vs-rest's loss `L` (format 4), and the kernel `K` and approximated kernel `A` (format 5).
#[derive(Serialize, Deserialize)]
pub(crate) struct StructParamsOf<L: Stored = Absent, K: Stored = Absent, A: Stored = Absent> {
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
    #[serde(default, skip_serializing_if = "Stored::absent")]
    loss: L,
    #[serde(default, skip_serializing_if = "Stored::absent")]
    kernel: K,
    #[serde(default, skip_serializing_if = "Stored::absent")]
    approx: A,
}

pub(crate) type StructParamsV3 = StructParamsOf;
pub(crate) type StructParamsV4 = StructParamsOf<BinaryLoss>;
/// Formats 5 and 6.
pub(crate) type StructParamsV6 =
    StructParamsOf<BinaryLoss, Option<KernelChoice>, Option<Approximation>>;

impl<L: Stored, K: Stored, A: Stored> From<StructParamsOf<L, K, A>> for StructuredSvmParams
where
    L: Upgrade<BinaryLoss>,
    K: Upgrade<Option<KernelChoice>>,
    A: Upgrade<Option<Approximation>>,
{
    fn from(p: StructParamsOf<L, K, A>) -> Self {
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
            loss: p.loss.upgrade(),
            kernel: p.kernel.upgrade(),
            approx: p.approx.upgrade(),
            ..StructuredSvmParams::default()
        }
    }
}
