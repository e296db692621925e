//! The names most programs need: `use maxmargin::prelude::*;`.

pub use crate::Error;
pub use crate::linear::{
    Evaluation, LinearModel, LinearSolver, LinearSvm, LinearSvmParams, SolverKind,
};
pub use maxmargin_core::objective::Regularization;
pub use maxmargin_core::vector::{SparseRows, SparseVec};
pub use maxmargin_io::libsvm::LabeledData;
pub use maxmargin_optim::{
    Bias, Budget, DcdParams, Newton, PegasosParams, Sampling, StepRule, StopReason,
    SubgradientParams,
};
