#![doc = include_str!("../README.md")]
//!
//! ## What is where
//!
//! Output spaces, joint feature maps and loss-augmented inference.
//!
//! An [`OutputSpace`] says what an output is, how it is scored and how wrong it is: a joint feature map
//! `ψ(x, y)` (so the score is `s(y) = ⟨w, ψ(x, y)⟩`), a task loss `Δ(y, y′) ≥ 0` with `Δ(y, y) = 0`, plain
//! decoding `argmax_y′ s(y′)`, and loss-augmented inference `argmax_y′ s(y′) + Δ(y, y′)`. The loss is
//! added, never subtracted, and the two are separate, named methods: decoding is not loss-augmented
//! inference, and a hinge computed with decoding can be too small (see the tests).
//!
//! Shipped spaces: [`BinarySpace`], [`MulticlassSpace`] (Crammer–Singer, 0-1 loss or a cost matrix),
//! [`MultilabelSpace`] (independent labels, weighted Hamming loss), [`PerPositionSpace`] (unary scores
//! per position, labels per position), [`ChainSpace`] (first-order chains, Viterbi), [`GraphSpace`]
//! (pairwise graphs and grids, with exact tree, brute-force or loopy max-product [`Inference`]), and
//! [`BruteForce`], which enumerates any [`Enumerable`] space and is the reference the others are tested
//! against. The structured hinge itself, its maximizers and its subgradient come from
//! `maxmargin_core::structured`, through [`brute_force`] and [`add_subgradient`].
//!
//! This crate knows nothing of solvers or files.

mod binary;
mod chain;
mod cost;
mod error;
mod graph;
mod latent;
mod latent_chain;
mod multiclass;
mod multilabel;
mod oracle;
mod per_position;
mod rescaling;
mod sequence;

pub use binary::BinarySpace;
pub use chain::ChainSpace;
pub use cost::CostMatrix;
pub use error::StructError;
pub use graph::{Graph, GraphSpace, Inference, Marginals, Relaxation, RelaxedGraphSpace};
pub use latent::{LatentMulticlassSpace, LatentSpace};
pub use latent_chain::LatentChainSpace;
pub use multiclass::MulticlassSpace;
pub use multilabel::MultilabelSpace;
pub use oracle::{
    BruteForce, Enumerable, MAX_ENUMERATED, OutputSpace, Violation, add_subgradient, brute_force,
    structured_hinge,
};
pub use per_position::{PerPositionSpace, PositionInput};
pub use rescaling::{Rescaling, slack_brute_force, slack_value};
pub use sequence::Sequence;

pub use maxmargin_core::structured::StructuredHinge;

/// The math core this crate's signatures use (`SparseVec`, `SparseRows`, `Lambda`, …), re-exported so a
/// dependent needs no second dependency line.
pub use maxmargin_core as core;
