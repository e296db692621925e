//! Integration tests of `maxmargin-optim`: worked examples, agreement with naive dense updates, budgets.

// Their reference optima come from the crate's interior-point solver (feature `clarabel`, on in the
// workspace's `cargo test`, which the facade's dependency turns on).
mod approximate;
mod bcfw_blocks;
#[cfg(feature = "clarabel")]
mod degenerate;
mod distributed;
mod distributed_struct;
mod dual;
mod kernel;
mod latent;
mod logistic;
mod pegasos;
#[cfg(feature = "clarabel")]
mod qp;
mod rescaling;
mod state;
mod stream;
mod structural;
mod subgradient;
mod trainer;

use maxmargin_core::objective::Lambda;

pub use maxmargin_core::testing::rows as data;

/// A checked λ.
pub fn lambda(v: f64) -> Lambda {
    Lambda::new(v).unwrap()
}
