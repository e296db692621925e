//! The duals of the cutting-plane methods, solved by clarabel (an interior-point conic solver):
//! `max_α bᵀα − (1/(2λ)) αᵀGα` subject to `α ≥ 0` and `Σ_{j ∈ g} α_j ≤ cap_g` for each group `g`.
//! One group with cap 1 is the 1-slack dual; one group per example with cap `1/n` is the n-slack dual.

use crate::error::OptimError;
use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, NonnegativeConeT, SolverStatus,
};

/// Solves the dual QP; `gram[j][k] = ⟨a_j, a_k⟩`, `group[j]` the group of variable `j`.
pub(crate) fn solve_dual(
    gram: &[Vec<f64>],
    b: &[f64],
    lambda: f64,
    group: &[usize],
    caps: &[f64],
) -> Result<Vec<f64>, OptimError> {
    let m = b.len();
    if m == 0 {
        return Ok(Vec::new());
    }
    // P = G/λ, upper triangle, column by column.
    let (mut colptr, mut rowval, mut nzval) = (vec![0usize], Vec::new(), Vec::new());
    for j in 0..m {
        for (i, row) in gram.iter().enumerate().take(j + 1) {
            rowval.push(i);
            nzval.push(row[j] / lambda);
        }
        colptr.push(rowval.len());
    }
    let p = CscMatrix::new(m, m, colptr, rowval, nzval);
    let q: Vec<f64> = b.iter().map(|v| -v).collect();
    // Rows 0..m: −α_j + s = 0 (α ≥ 0); rows m..m+G: Σ_{j∈g} α_j + s = cap_g.
    let (mut colptr, mut rowval, mut nzval) = (vec![0usize], Vec::new(), Vec::new());
    for (j, &g) in group.iter().enumerate() {
        rowval.extend([j, m + g]);
        nzval.extend([-1.0, 1.0]);
        colptr.push(rowval.len());
    }
    let a = CscMatrix::new(m + caps.len(), m, colptr, rowval, nzval);
    let mut rhs = vec![0.0; m];
    rhs.extend_from_slice(caps);
    let cones = [NonnegativeConeT(m + caps.len())];
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .max_iter(200)
        .build()
        .map_err(|e| OptimError::Qp(format!("{e:?}")))?;
    let mut solver = DefaultSolver::new(&p, &q, &a, &rhs, &cones, settings)
        .map_err(|e| OptimError::Qp(format!("{e:?}")))?;
    solver.solve();
    match solver.solution.status {
        SolverStatus::Solved | SolverStatus::AlmostSolved => {}
        other => {
            return Err(OptimError::Qp(format!(
                "status {other:?} with {m} constraints"
            )));
        }
    }
    // Clean the interior-point solution onto the feasible set.
    let mut alpha: Vec<f64> = solver.solution.x.iter().map(|v| v.max(0.0)).collect();
    let mut sums = vec![0.0; caps.len()];
    for (a, &g) in alpha.iter().zip(group) {
        sums[g] += a;
    }
    for (a, &g) in alpha.iter_mut().zip(group) {
        if sums[g] > caps[g] {
            *a *= caps[g] / sums[g];
        }
    }
    Ok(alpha)
}
