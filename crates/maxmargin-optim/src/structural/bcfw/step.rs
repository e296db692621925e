//! A BCFW block step: Frank–Wolfe on dense or sparse shares, or pairwise on atoms (first trying the block's
//! active corners when the cache is on), with the exact line search; what one process and each rank's share
//! of a round both take.

use super::shares::Shares;
use super::{Bcfw, BcfwState, CACHE_FRACTION, CACHE_GLOBAL, pairwise};
use crate::error::OptimError;
use crate::structural::problem::StructProblem;
use maxmargin_core::vector::SparseVec;
use maxmargin_struct::OutputSpace;

/// The exact line search `γ = numerator / denominator` clipped to `[0, 1]` (a zero denominator moves all
/// the way when the numerator is positive).
fn line_search(numerator: f64, denominator: f64) -> f64 {
    if denominator > 0.0 {
        (numerator / denominator).clamp(0.0, 1.0)
    } else if numerator > 0.0 {
        1.0
    } else {
        0.0
    }
}

impl BcfwState {
    /// Block `i`'s loss share becomes `ell_new`.
    fn set_loss(&mut self, i: usize, ell_new: f64) {
        self.ell += ell_new - self.ell_i[i];
        self.ell_i[i] = ell_new;
    }

    /// The step just taken (the `k`-th) counted in the weighted average's sums.
    fn count_step(&mut self) {
        let (k, ell) = (self.k as f64, self.ell);
        if let Some(a) = &mut self.avg {
            a.c_sum += k;
            a.ell_sum += k * ell;
        }
    }
}

impl Bcfw {
    /// A pairwise step's move on block `i` applied to `w`, `ℓ` and the average, and the step counted in the
    /// average's weights.
    fn apply_pairwise(st: &mut BcfwState, i: usize, moved: Option<pairwise::Move>, n: f64) {
        let c_prev = st.avg.as_ref().map_or(0.0, |a| a.c_sum);
        if let Some(m) = moved {
            // δ = (γ/(λn))·d, applied to w and, as C_{k−1}·δ, to the average's sum.
            for (j, dj) in m.d.as_row().iter() {
                if let Some(log) = &mut st.written {
                    log.note(j);
                }
                st.w[j] += m.scale * dj;
                if let Some(a) = &mut st.avg {
                    a.u[j] += c_prev * m.scale * dj;
                }
            }
            st.set_loss(i, m.loss_sum / n);
        }
        st.count_step();
    }

    /// One block step on block `i` (the one the sampler drew), Frank–Wolfe or pairwise, without the gap
    /// check that follows it in a pass: what one process and each rank's share of a round both take.
    /// Returns the block's gap at `w` before the step.
    pub(super) fn block_step<S>(
        &self,
        problem: &StructProblem<'_, S>,
        st: &mut BcfwState,
        i: usize,
    ) -> Result<f64, OptimError>
    where
        S: OutputSpace,
        S::Output: Sync,
    {
        let n = self.n_total.unwrap_or(problem.n_samples()) as f64;
        let lambda = problem.lambda();
        // With the cache, the block's active corners come first: a step between them when they close enough
        // of the gap, else the oracle's step with the same scan. Passes count oracle steps only, so at most a
        // pass's worth of cached steps come in a row: a run whose gaps are all but closed (cached steps of
        // vanishing gain, the thresholds at 0) still reaches its budget.
        let mut scanned = None;
        let run_left = st.cached_run < st.ell_i.len() as u64;
        if let Shares::Atoms(blocks) = &mut st.w_i
            && let Some(&last_gap) = st.oracle_gaps.get(i)
            && run_left
        {
            let scan = blocks[i].scan(&st.w, n);
            let g = scan.cache_gap();
            let mean_gap = st.cache_ref / n;
            if g.is_finite()
                && g > 0.0
                && g >= CACHE_FRACTION * last_gap
                && g >= CACHE_GLOBAL * mean_gap
                && let Some(moved) = blocks[i].cached_step(&scan, n, lambda)
            {
                // (A step that would not move, a gap of rounding, falls through to the oracle.)
                st.k += 1;
                st.cached += 1;
                st.cached_run += 1;
                Self::apply_pairwise(st, i, Some(moved), n);
                // A lower bound on the block's gap before the step (the oracle's corner may close more).
                return Ok(g);
            }
            scanned = Some(scan);
        }
        let v = problem.oracle(&st.w, i)?;
        st.cached_run = 0;
        // The corner: w_s = (ψ(y_i) − ψ(ŷ))/(λn), ℓ_s = Δ/n.
        let scale = 1.0 / (lambda * n);
        let ell_s = v.loss / n;
        let dim = st.w.len();
        st.k += 1;
        if let Shares::Atoms(blocks) = &mut st.w_i {
            // u_s = ψ(y_i) − ψ(ŷ): on a space that gives it, only the entries where the outputs differ (on a
            // chain, the tokens whose tags differ); on others ψ(y_i), held already, and −ψ(ŷ). Summed as
            // `Scatter::difference` says (sorted, or in a scratch; a multiclass difference comes sorted).
            let (x_i, truth) = (&problem.x()[i], &st.psi_truth[i]);
            let space = problem.space();
            let emit = |visit: &mut dyn FnMut(usize, f64)| {
                if space.has_feature_difference() {
                    space.for_each_feature_difference(x_i, &problem.y()[i], &v.output, visit);
                } else {
                    truth.as_row().iter().for_each(|(j, a)| visit(j, a));
                    space.for_each_feature(x_i, &v.output, &mut |j, a| visit(j, -a));
                }
            };
            let u_s = st.scatter.difference(emit, dim);
            let (gap, moved) = match &scanned {
                Some(scan) => blocks[i].step_scanned(scan, &st.w, (u_s, v.loss), n, lambda),
                None => blocks[i].step(&st.w, u_s, v.loss, n, lambda),
            };
            if let Some(g) = st.oracle_gaps.get_mut(i) {
                // A non-finite gap (a non-finite loss) would make the run's own checkpoint unreadable.
                *g = if gap.is_finite() { gap } else { 0.0 };
            }
            Self::apply_pairwise(st, i, moved, n);
            return Ok(gap);
        }
        let c_prev = st.avg.as_ref().map_or(0.0, |a| a.c_sum);
        let (gamma, gap) = match &mut st.w_i {
            Shares::Sparse(shares) => {
                let psi_hat = problem.space().joint_feature(&problem.x()[i], &v.output);
                let w_s = SparseVec::lincomb(scale, &st.psi_truth[i], -scale, &psi_hat);
                let d = SparseVec::lincomb(1.0, &shares[i], -1.0, &w_s);
                let numerator = lambda * d.as_row().dot(&st.w) - st.ell_i[i] + ell_s;
                let gamma = line_search(numerator, lambda * d.as_row().norm_sq());
                if gamma > 0.0 {
                    // w_i ← w_i − γ d, w ← w − γ d, and u += C_{k−1}·δ with δ = −γ d.
                    for (j, dj) in d.as_row().iter() {
                        if let Some(log) = &mut st.written {
                            log.note(j);
                        }
                        st.w[j] -= gamma * dj;
                        if let Some(a) = &mut st.avg {
                            a.u[j] -= c_prev * gamma * dj;
                        }
                    }
                    shares[i] = SparseVec::lincomb(1.0, &shares[i], -gamma, &d);
                }
                (gamma, numerator)
            }
            Shares::Dense { shares, sq } => {
                let share = &mut shares[i * dim..(i + 1) * dim];
                let ws = &mut st.scatter;
                ws.ensure(dim);
                for (j, v) in st.psi_truth[i].as_row().iter() {
                    ws.add(j, scale * v);
                }
                problem
                    .space()
                    .for_each_feature(&problem.x()[i], &v.output, &mut |j, v| {
                        ws.add(j, -scale * v)
                    });
                // d = w_i − w_s, with w_s sparse: d·w = w_i·w − w_s·w, ‖d‖² = ‖w_i‖² − 2 w_i·w_s + ‖w_s‖².
                let (mut ws_w, mut ws_share, mut ws_sq) = (0.0, 0.0, 0.0);
                for &j in &ws.touched {
                    let a = ws.acc[j];
                    ws_w += a * st.w[j];
                    ws_share += a * share[j];
                    ws_sq += a * a;
                }
                let wi_w: f64 = share.iter().zip(&st.w).map(|(a, b)| a * b).sum();
                let numerator = lambda * (wi_w - ws_w) - st.ell_i[i] + ell_s;
                let d_sq = (sq[i] - 2.0 * ws_share + ws_sq).max(0.0);
                let gamma = line_search(numerator, lambda * d_sq);
                if gamma > 0.0 {
                    if let Some(log) = &mut st.written {
                        log.all = true;
                    }
                    // δ = −γ w_i + γ w_s, applied to w, u and w_i.
                    match &mut st.avg {
                        Some(a) => {
                            for ((w, u), s) in
                                st.w.iter_mut().zip(a.u.iter_mut()).zip(share.iter_mut())
                            {
                                let delta = -gamma * *s;
                                *w += delta;
                                *u += c_prev * delta;
                                *s *= 1.0 - gamma;
                            }
                            for &j in &ws.touched {
                                let v = ws.acc[j];
                                st.w[j] += gamma * v;
                                a.u[j] += c_prev * gamma * v;
                                share[j] += gamma * v;
                            }
                        }
                        None => {
                            for (w, s) in st.w.iter_mut().zip(share.iter_mut()) {
                                *w -= gamma * *s;
                                *s *= 1.0 - gamma;
                            }
                            for &j in &ws.touched {
                                let v = ws.acc[j];
                                st.w[j] += gamma * v;
                                share[j] += gamma * v;
                            }
                        }
                    }
                    // ‖(1−γ)w_i + γ w_s‖², from the products already at hand.
                    sq[i] = ((1.0 - gamma) * (1.0 - gamma) * sq[i]
                        + 2.0 * gamma * (1.0 - gamma) * ws_share
                        + gamma * gamma * ws_sq)
                        .max(0.0);
                }
                ws.clear();
                (gamma, numerator)
            }
            // Taken above.
            Shares::Atoms(_) => (0.0, 0.0),
        };
        if gamma > 0.0 {
            st.set_loss(i, (1.0 - gamma) * st.ell_i[i] + gamma * ell_s);
        }
        st.count_step();
        Ok(gap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BcfwParams;
    use crate::trainer::Solver;
    use maxmargin_core::objective::Lambda;
    use maxmargin_struct::MulticlassSpace;

    /// Cached steps never come more than a pass in a row, so passes advance even when the cache's
    /// thresholds are 0 (every block's last oracle gap 0, no certificate yet).
    #[test]
    fn cached_steps_never_hold_the_passes_back() {
        let space = MulticlassSpace::new(3, 3).unwrap();
        let x: Vec<SparseVec> = (0..12u32)
            .map(|i| SparseVec::new(vec![i % 3], vec![1.0 + f64::from(i) / 7.0]).unwrap())
            .collect();
        let y: Vec<u32> = (0..12u32).map(|i| (i * 7 + 1) % 3).collect();
        let problem = StructProblem::new(&space, &x, &y, Lambda::new(1e-3).unwrap()).unwrap();
        let mut bcfw = BcfwParams {
            gap_tolerance: None,
            ..BcfwParams::pairwise()
        }
        .check()
        .unwrap();
        let mut st = bcfw.init(&problem).unwrap();
        let n = y.len() as u64;
        for _ in 0..40 * n {
            st.oracle_gaps.iter_mut().for_each(|g| *g = 0.0);
            st.last = None;
            bcfw.step(&problem, &mut st).unwrap();
            assert!(st.cached_run <= n);
        }
        assert!(st.cached > 0, "the cache was used");
        assert!(Bcfw::epochs(&st) >= 40.0 * n as f64 / (n + 1) as f64 / n as f64 * 0.99);
    }
}
