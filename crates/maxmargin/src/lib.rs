#![doc = include_str!("../README.md")]
//!
//! ## What is where
//!
//! maxmargin: max-margin learning in Rust.
//!
//! This is the crate users depend on. It re-exports the layers below and adds estimators that go from a
//! dataset to a saved model in a few lines:
//!
//! ```
//! # fn main() -> Result<(), maxmargin::Error> {
//! use maxmargin::prelude::*;
//! let data = maxmargin::datasets::heart_scale()?;
//! let svm = LinearSvmParams::new().lambda(0.01).epochs(20.0).seed(7).check()?;
//! let model = svm.fit(&data)?;
//! let report = model.evaluate(&data, None)?;
//! assert!(report.accuracy > 0.8);
//! # Ok(()) }
//! ```
//!
//! Layers: [`core`] (hinge, subdifferentials, objectives, vectors), [`structured`] (output spaces and
//! loss-augmented inference), [`optim`] (solvers and the trainer), [`io`] (data formats, model files).
//! The facade adds [`linear`] (the binary linear SVM estimator and its model), [`datasets`] (small embedded
//! data) and, with the feature `testing`, `testing` (the tests' and fuzz targets' helpers). It holds no algorithm
//! of its own.

pub mod approx;
pub mod checkpoint;
pub mod compare;
mod compat;
pub mod convergence;
pub mod convert;
pub mod datasets;
pub mod distributed;
mod error;
pub mod inputs;
pub mod limits;
pub mod linear;
mod parallel;
pub mod prelude;
mod shapes;
pub mod side_files;
pub mod structured_svm;
pub mod tagger;
#[cfg(feature = "testing")]
pub mod testing;
pub mod worked;

pub use error::Error;
pub use linear::{Evaluation, LinearModel, LinearSolver, LinearSvm, LinearSvmParams, SolverKind};
pub use maxmargin_core as core;
pub use maxmargin_io as io;
pub use maxmargin_optim as optim;
pub use maxmargin_struct as structured;
pub use parallel::{check_threads, max_threads};
pub use structured_svm::{
    StructSolverKind, StructuredModel, StructuredSvm, StructuredSvmParams, Task,
};
