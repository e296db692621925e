//! Binary training: the problem (rows, ±1 targets, λ, a bias mode, a loss) and its solvers (Pegasos, the
//! batch subgradient method, dual coordinate descent, one-vs-rest over DCD, and Newton's method in the
//! primal).

pub mod dcd;
mod guess;
pub mod ovr;
pub mod pegasos;
mod pegasos_ranks;
pub mod primal;
pub mod problem;
pub mod smo;
pub mod stream;
pub mod subgradient;
