#![doc = include_str!("../README.md")]
//!
//! ## What is where
//!
//! The mathematics of max-margin learning, small and exact.
//!
//! This crate holds the reference implementations every other maxmargin crate stands on:
//!
//! - [`affine`]: the maximum of finitely many affine functions, `f(w) = max_k a_k + ⟨g_k, w⟩`,
//!   with its value, active set and subdifferential `∂f(w) = conv{g_k : k active}`.
//! - [`hinge`]: the binary hinge `max(0, 1 − z)` and its relatives (0-1, perceptron, squared hinge),
//!   with subdifferentials in the margin `z` and in the weights `w`.
//! - [`structured`]: the structured hinge `max_y′ [Δ(y, y′) + s(y′) − s(y)]` over a finite candidate set,
//!   its maximizers, its subgradient `ψ(ŷ) − ψ(y)` and its slack form.
//! - [`objective`]: the λ-form `λ/2‖w‖² + (1/n)Σℓ`, the C-sum form `½‖w‖² + CΣℓ` and the C-mean form
//!   `½‖w‖² + (C/n)Σℓ`, converted exactly.
//! - [`vector`]: sparse vectors, a CSR matrix of sparse rows, and dense helpers on `&[f64]`.
//!
//! It is not a solver library and knows nothing of output spaces, files or randomness.
//!
//! # Examples
//!
//! ```
//! use maxmargin_core::hinge::{hinge, hinge_subdifferential};
//! assert_eq!(hinge(0.5), 0.5);
//! let d = hinge_subdifferential(1.0);
//! assert_eq!((d.lo, d.hi), (-1.0, 0.0));
//! ```

pub mod affine;
mod buffer;
pub mod calibration;
mod error;
pub mod hinge;
pub mod kernel;
pub mod metrics;
pub mod objective;
pub mod scale;
pub mod structured;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod vector;
pub mod worked;

pub use error::CoreError;
