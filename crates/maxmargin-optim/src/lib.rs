#![doc = include_str!("../README.md")]
//!
//! ## What is where
//!
//! Solvers for max-margin objectives, and the one loop that runs them.
//!
//! - [`problem`]: what is minimized, e.g. [`BinaryProblem`]: `λ/2‖w‖² + (1/n)Σ max(0, 1 − y_i(⟨w, x_i⟩ + b))`.
//! - [`subgradient`]: the batch subgradient method with step rules, keeping the best iterate (it is no
//!   descent method).
//! - [`pegasos`]: Pegasos (Shalev-Shwartz, Singer, Srebro, Cotter 2011), `η_t = 1/(λt)`, mini-batches,
//!   projection, sampling schemes, bias modes, averaging; `w = s·v` so a step costs `O(nnz(x))`.
//! - [`dcd`]: dual coordinate descent for the hinge and squared hinge (LIBLINEAR's `-s 3` / `-s 1`), with a
//!   block-parallel mode whose result depends on the seed only; [`crammer_singer`]: the multiclass dual by
//!   blocks of one example (LIBLINEAR's `-s 4`); [`ovr`]: one-vs-rest from the binary solver, classes in
//!   parallel.
//! - [`trainer`]: [`Trainer`] owns the loop: budgets (iterations, epochs, seconds), the tolerance, the
//!   trace, observers. A [`Solver`] only writes `init` and `step`; solvers never print.
//!
//! Randomness comes from one `ChaCha8Rng` seeded from the parameters and carried in the solver state, so
//! the same seed, data and parameters give the same weights, bit for bit. This crate reads no files.

pub mod averaged;
pub mod binary;
pub mod collective;
mod error;
pub(crate) mod face;
pub(crate) mod gap_target;
pub mod newton;
pub mod random;
pub mod sampler;
pub mod step;
pub mod structural;
pub mod trainer;

// The solvers' modules at their paths of before the split by family.
pub use binary::{dcd, ovr, pegasos, problem, smo, stream, subgradient};
pub use structural::{bcfw, crammer_singer, cutting_plane, latent, perceptron, qp, softmax};

pub use averaged::{Averaged, AveragedState, Averaging};
pub use bcfw::{Bcfw, BcfwBlocks, BcfwParams, BcfwRanks, Steps as BcfwSteps};
pub use collective::{Collective, OverRanks, Single, ThreadRanks};
pub use crammer_singer::{CrammerSinger, CrammerSingerParams, CrammerSingerRanks};
pub use cutting_plane::{
    NSlack, NSlackParams, NSlackRanks, OneSlack, OneSlackParams, OneSlackRanks, QpSolver,
};
pub use dcd::{Dcd, DcdParams, DcdRanks};
pub use error::OptimError;
pub use newton::{Newton, NewtonState, Smooth};
pub use pegasos::{Pegasos, PegasosParams};
pub use perceptron::{Perceptron, PerceptronParams};
pub use problem::{Bias, BinaryLoss, BinaryProblem, LinearWeights};
pub use sampler::Sampling;
pub use smo::{KernelProblem, KernelWeights, Smo, SmoParams, SmoState};
pub use step::StepRule;
pub use stream::{Placed, Resumable, RowPasses, RowStream, SourcePlace, StreamPlace, Streamed};
pub use structural::{ExamplePasses, ExampleStream, Ssg, SsgParams, StructProblem};
pub use subgradient::{Subgradient, SubgradientParams};
pub use trainer::{
    Best, Budget, Certificate, Checkpoints, Fit, Observer, Progress, Resumed, Run, Solver,
    StepDetail, StepExample, StopReason, TraceRecord, Trainer,
};

/// The math core this crate's signatures use (`SparseVec`, `SparseRows`, `Lambda`, …), re-exported so a
/// dependent needs no second dependency line.
pub use maxmargin_core as core;
