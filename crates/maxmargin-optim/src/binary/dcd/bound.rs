//! A certified lower bound on the optimum from any primal point, for the solvers that have no dual.

use super::*;

/// A certified lower bound on the optimum of `problem` (λ-form dual value) from any primal point: what
/// solvers without a dual (Pegasos, the batch subgradient method) report as their certificate.
///
/// The duals start from the margins of `weights` (`α_i = U_i` for examples inside the margin, `0` outside;
/// for the squared hinge `α_i = 2 c_i C ξ_i`; for the logistic loss `α_i = U_i σ(−m_i)`, the duals these
/// margins make optimal), are scaled (except the logistic ones) by the `t ≥ 0` that maximizes the dual along them
/// (at most 1 where the box binds), then improved by five passes of DCD without shrinking, and their dual
/// value is returned (with an unregularized bias the heavier class is scaled down first, as DCD's own
/// certificate does). Every dual-feasible point gives a lower bound, so `objective − bound` is a true gap;
/// the cost is about eight passes over the data.
///
/// # Errors
/// What DCD's initialization returns (not expected for a checked problem).
pub fn dual_bound(problem: &BinaryProblem<'_>, weights: &LinearWeights) -> Result<f64, OptimError> {
    let (x, y) = (problem.x(), problem.y());
    let c = Dcd::c(problem);
    let feature = problem.bias() == Bias::Feature;
    let mut alpha: Vec<f64> = x
        .rows()
        .zip(y)
        .enumerate()
        .map(|(i, (row, &yi))| {
            let margin = yi * (row.dot(&weights.w) + weights.b);
            let (upper, _) = Dcd::box_and_diag(problem, i);
            match problem.loss() {
                BinaryLoss::Hinge if margin < 1.0 => upper,
                BinaryLoss::Hinge => 0.0,
                BinaryLoss::SquaredHinge => 2.0 * c * problem.weight(i) * (1.0 - margin).max(0.0),
                // The dual that is optimal for these weights' margins.
                BinaryLoss::Logistic => upper * maxmargin_core::hinge::sigmoid(-margin),
            }
        })
        .collect();
    // The best multiple t of these duals: D(tα) = t Σα − t²/2 (‖w(α)‖² + Σ D_ii α_i²).
    let d = problem.n_features();
    let mut w = vec![0.0; d + usize::from(feature)];
    let (mut sum, mut quad) = (0.0, 0.0);
    for (i, (&a, &yi)) in alpha.iter().zip(y).enumerate() {
        if a != 0.0 {
            x.row(i).axpy(a * yi, &mut w[..d]);
            if feature {
                w[d] += a * yi;
            }
            sum += a;
            quad += Dcd::box_and_diag(problem, i).1 * a * a;
        }
    }
    let curvature = maxmargin_core::vector::norm_sq(&w) + quad;
    let t_max = match problem.loss() {
        BinaryLoss::Hinge | BinaryLoss::Logistic => 1.0,
        BinaryLoss::SquaredHinge => f64::INFINITY,
    };
    // The logistic dual is not quadratic along α: its margins' duals are taken as they are.
    let t = if problem.loss() == BinaryLoss::Logistic {
        1.0
    } else if curvature > 0.0 {
        (sum / curvature).clamp(0.0, t_max)
    } else {
        t_max.min(1.0)
    };
    for a in &mut alpha {
        *a *= t;
    }
    let mut dcd = DcdParams {
        epsilon: 0.1,
        shrinking: false,
        seed: 0,
        blocks: 1,
    }
    .check()?;
    let mut st = dcd.warm_state(problem, &alpha)?;
    for _ in 0..DUAL_BOUND_PASSES {
        if st.converged {
            break;
        }
        dcd.step(problem, &mut st)?;
    }
    // Only the dual is wanted: the primal passed in does not change it, so none is computed here (the caller
    // has it already).
    Ok(dcd
        .dual_certificate(problem, &st, 0.0)
        .dual
        .unwrap_or(0.0)
        .max(0.0))
}

/// DCD passes that [`dual_bound`] takes from the margins' duals.
const DUAL_BOUND_PASSES: usize = 5;
