//! The duals of the cutting-plane methods, solved by clarabel (an interior-point conic solver):
//! `max_α bᵀα − (1/(2λ)) αᵀGα` subject to `α ≥ 0` and `Σ_{j ∈ g} α_j ≤ cap_g` for each group `g`.
//! One group with cap 1 is the 1-slack dual; one group per example with cap `1/n` is the n-slack dual.

use crate::error::OptimError;
#[cfg(feature = "clarabel")]
use clarabel::algebra::CscMatrix;
#[cfg(feature = "clarabel")]
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, NonnegativeConeT, SolverStatus,
};

/// Whether this build has the interior-point solver (the crate's feature `clarabel`).
pub const HAS_INTERIOR_POINT: bool = cfg!(feature = "clarabel");

/// Without the feature `clarabel` there is no interior-point solver: an error that says so.
///
/// # Errors
/// Always [`OptimError::Qp`], naming the feature.
#[cfg(not(feature = "clarabel"))]
pub fn solve_dual(
    _gram: &[Vec<f64>],
    _b: &[f64],
    _lambda: f64,
    _group: &[usize],
    _caps: &[f64],
) -> Result<Vec<f64>, OptimError> {
    Err(OptimError::Qp(
        "this build has no interior-point solver: enable maxmargin-optim's feature `clarabel` (the \
         maxmargin facade does), or use the qp solver smo"
            .into(),
    ))
}

/// Solves the dual QP with clarabel; `gram[j][k] = ⟨a_j, a_k⟩`, `group[j]` the group of variable `j`
/// (feature `clarabel`).
///
/// # Errors
/// [`OptimError::Qp`] when clarabel does not reach a solution.
#[cfg(feature = "clarabel")]
pub fn solve_dual(
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

/// The exact maximizer along a pair's line, `violation / curvature`, within the mass `available` to move
/// (all of it where the dual is linear along the line).
pub(crate) fn step_length(violation: f64, curvature: f64, available: f64) -> f64 {
    if curvature > 0.0 {
        (violation / curvature).min(available)
    } else {
        available
    }
}

/// The same dual, solved by pairwise coordinate ascent (SMO) within each group, from a warm start; the
/// default for the cutting-plane methods, tested against [`solve_dual`].
///
/// Each group gets an implicit slack variable (`b = 0`, no quadratic term), so its constraint becomes an
/// equality `Σ α + α_slack = cap` over a simplex. A step moves mass from one of the variables holding mass
/// to the one with the largest gradient `g = b − (G/λ)α`, by the exact maximizer along that line; the partner
/// is the violating holder whose step gains the most (second order, as LIBSVM's working-set selection). It stops when, in every group, no such pair differs by more than `tol` (the
/// KKT conditions to `tol`), which makes the dual optimal to within `tol` times the caps' total. Warm starts
/// (the previous solution, zero for new constraints) make the re-solves of a cutting-plane method cheap.
///
/// At most `max_sweeps` sweeps; also returns whether the KKT conditions hold to the tolerance (false when
/// the cap stopped it first).
#[allow(clippy::too_many_arguments)]
pub fn solve_dual_smo_capped(
    gram: &[Vec<f64>],
    b: &[f64],
    lambda: f64,
    group: &[usize],
    caps: &[f64],
    warm: &[f64],
    tol: f64,
    max_sweeps: usize,
) -> (Vec<f64>, bool) {
    let m = b.len();
    let mut alpha: Vec<f64> = (0..m)
        .map(|j| warm.get(j).copied().unwrap_or(0.0).max(0.0))
        .collect();
    // Feasible start: scale down any group over its cap; the slack holds the rest.
    let mut used = vec![0.0; caps.len()];
    for (a, &g) in alpha.iter().zip(group) {
        used[g] += a;
    }
    for (a, &g) in alpha.iter_mut().zip(group) {
        if used[g] > caps[g] {
            *a *= caps[g] / used[g];
        }
    }
    let mut slack: Vec<f64> = caps.to_vec();
    for (a, &g) in alpha.iter().zip(group) {
        slack[g] -= a;
    }
    slack.iter_mut().for_each(|s| *s = s.max(0.0));
    let q = |i: usize, j: usize| gram[i][j] / lambda;
    let mut grad: Vec<f64> = (0..m)
        .map(|i| b[i] - (0..m).map(|j| q(i, j) * alpha[j]).sum::<f64>())
        .collect();
    let members: Vec<Vec<usize>> = {
        let mut v = vec![Vec::new(); caps.len()];
        for (j, &g) in group.iter().enumerate() {
            v[g].push(j);
        }
        v
    };
    // Gradients are updated step by step, so they carry rounding of about ε_mach·max Q_jj·(the caps' total);
    // asking for a violation below that can never be met (unscaled features make Q_jj ~ 1e9 while b ~ 1),
    // and the sweeps would run to their cap on every solve. The tolerance is floored there.
    let q_max = (0..m).map(|j| q(j, j)).fold(0.0, f64::max);
    let cap_total: f64 = caps.iter().sum();
    let tol = tol.max(1e3 * f64::EPSILON * q_max * cap_total);
    // Index `m` stands for the group's slack variable: gradient 0, no quadratic term.
    let mut solved = false;
    for _ in 0..max_sweeps {
        let mut worst = 0.0f64;
        for (g, idx) in members.iter().enumerate() {
            for _ in 0..(50 * idx.len().max(1)) {
                // Up: the largest gradient (slack's is 0). Down: the smallest among those holding mass; the
                // largest violation decides whether the group is solved.
                let mut up = (m, 0.0);
                let mut down = (m, if slack[g] > 0.0 { 0.0 } else { f64::INFINITY });
                for &j in idx {
                    if grad[j] > up.1 {
                        up = (j, grad[j]);
                    }
                    if alpha[j] > 0.0 && grad[j] < down.1 {
                        down = (j, grad[j]);
                    }
                }
                let violation = up.1 - down.1;
                if violation <= tol || violation.is_nan() || up.0 == down.0 {
                    break;
                }
                worst = worst.max(violation);
                // Second-order choice of the partner (Fan, Chen & Lin 2005, LIBSVM's WSS 2): among the
                // holders that violate with `up`, the one whose exact pair step gains the most,
                // (g_up − g_j)² / (Q_up,up + Q_jj − 2 Q_up,j). With nearly parallel planes of large norm
                // (unscaled features) the first-order pair zigzags for millions of steps; this does not.
                let i = up.0;
                // Q entries with index `m`, the slack, are 0.
                let qe = |a: usize, b: usize| if a < m && b < m { q(a, b) } else { 0.0 };
                // The dual's curvature along the pair (i, j), and its scale.
                let curvature =
                    |j: usize| (qe(i, i) + qe(j, j) - 2.0 * qe(i, j), qe(i, i) + qe(j, j));
                let gain = |j: usize, gj: f64| {
                    let (c, scale) = curvature(j);
                    if c > 1e-12 * scale.max(f64::MIN_POSITIVE) {
                        (up.1 - gj).powi(2) / c
                    } else {
                        f64::INFINITY
                    }
                };
                let mut best = (down.0, gain(down.0, down.1));
                if slack[g] > 0.0 && m != down.0 && up.1 > 0.0 {
                    let v = gain(m, 0.0);
                    if v > best.1 {
                        best = (m, v);
                    }
                }
                for &j in idx {
                    if j != i && alpha[j] > 0.0 && grad[j] < up.1 - tol {
                        let v = gain(j, grad[j]);
                        if v > best.1 {
                            best = (j, v);
                        }
                    }
                }
                let j = best.0;
                let violation = up.1 - if j < m { grad[j] } else { 0.0 };
                let curvature = curvature(j).0;
                let available = if j < m { alpha[j] } else { slack[g] };
                let t = step_length(violation, curvature, available);
                if t <= 0.0 {
                    break;
                }
                if i < m {
                    alpha[i] += t;
                } else {
                    slack[g] += t;
                }
                if j < m {
                    alpha[j] -= t;
                    if alpha[j] < 1e-300 {
                        alpha[j] = 0.0;
                    }
                } else {
                    slack[g] -= t;
                }
                for (k, gk) in grad.iter_mut().enumerate() {
                    let di = if i < m { q(k, i) } else { 0.0 };
                    let dj = if j < m { q(k, j) } else { 0.0 };
                    *gk -= t * (di - dj);
                }
            }
        }
        if worst <= tol {
            solved = true;
            break;
        }
    }
    (alpha, solved)
}
