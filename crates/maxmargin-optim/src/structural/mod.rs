//! Structural training: the problem over any output space, and its solvers (SSG, BCFW, the
//! Crammer–Singer dual, cutting planes with their QP, and the structured perceptron as the baseline), and the
//! outer loop of latent structural SVMs.

pub mod bcfw;
pub mod crammer_singer;
pub mod cutting_plane;
pub mod latent;
pub mod perceptron;
pub mod problem;
pub mod qp;
pub mod softmax;
pub mod ssg;
mod ssg_ranks;
pub mod ssg_stream;

pub use problem::StructProblem;
pub use ssg::{Ssg, SsgParams, SsgState};
pub use ssg_stream::{ExamplePasses, ExampleStream};
