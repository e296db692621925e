//! Integration tests of `maxmargin-optim`: worked examples, agreement with naive dense updates, budgets.

mod degenerate;
mod dual;
mod pegasos;
mod qp;
mod structural;
mod subgradient;
mod trainer;

use maxmargin_core::objective::Lambda;
use maxmargin_core::vector::SparseRows;

/// Rows and targets from dense rows.
pub fn data(rows: &[(&[f64], f64)]) -> (SparseRows, Vec<f64>) {
    let dense: Vec<&[f64]> = rows.iter().map(|r| r.0).collect();
    (
        SparseRows::from_dense_rows(&dense).unwrap(),
        rows.iter().map(|r| r.1).collect(),
    )
}

/// A checked λ.
pub fn lambda(v: f64) -> Lambda {
    Lambda::new(v).unwrap()
}
