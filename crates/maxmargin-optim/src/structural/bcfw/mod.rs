//! Block-coordinate Frank–Wolfe for structural SVMs (Lacoste-Julien, Jaggi, Schmidt, Pletscher 2013).
//!
//! The dual of `λ/2‖w‖² + (1/n)Σ H_i(w)` is kept through per-example shares: `w = Σ_i w_i`, `ℓ = Σ_i ℓ_i`.
//! A step on block `i` calls the oracle at `w` for `ŷ`, forms the corner `w_s = (ψ(x_i, y_i) − ψ(x_i, ŷ))/(λn)`,
//! `ℓ_s = Δ(y_i, ŷ)/n`, and moves `(w_i, ℓ_i)` toward it with the exact line search
//! `γ = [λ(w_i − w_s)ᵀw − ℓ_i + ℓ_s] / [λ‖w_i − w_s‖²]` clipped to `[0, 1]`. The shares are sparse vectors (the
//! support of `ψ` on example `i`), so memory is `O(nnz)`, not `n × dim`, and a step never touches all of `w`.
//!
//! The weighted average `w̄ = Σ_k k·w^(k) / Σ_k k` (and `ℓ̄` alike) is kept in `O(nnz)` per step with
//! `Σ_k c_k w^(k) = C w − Σ_k C_{k−1} δ_k`. The duality gap `F(w) − D(α) = λ‖w‖² + (1/n)ΣH_i(w) − ℓ` is exact
//! (one pass of oracle calls, in parallel) and is computed every `gap_every` passes as the stopping test.
//!
//! With pairwise steps, a step moves weight from the block's worst active corner to the oracle's instead
//! ([`pairwise`]): the shares become lists of sparse atoms. The average is kept beside them when asked,
//! and each certification returns the better of the last iterate and the average: the last iterate once
//! pairwise steps converge, the average while they do not (unscaled data, where the last iterate of 1,000
//! passes had a primal 20% above the average's).

use crate::error::{OptimError, all_finite, fits, invalid};
use crate::sampler::Sampler;
use crate::sampler::Sampling;
use crate::structural::problem::StructProblem;
use crate::trainer::{Certificate, Progress, Solver, StopReason};
use maxmargin_core::vector::{SparseVec, norm_sq};
use maxmargin_struct::OutputSpace;
use serde::{Deserialize, Serialize};

/// Unchecked BCFW parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BcfwParams {
    /// Return the weighted average of the iterates (the paper's BCFW-wavg).
    pub average: bool,
    /// How blocks are drawn (`Permutation` or `Uniform`; `Cyclic` is allowed for worked examples).
    pub sampling: Sampling,
    /// The seed.
    pub seed: u64,
    /// Compute the exact duality gap every this many passes.
    pub gap_every: f64,
    /// Stop when the gap is at most this fraction of the primal objective.
    pub gap_tolerance: Option<f64>,
    /// Frank–Wolfe or pairwise steps (from the worst active corner to the oracle's), or `Auto`: pairwise
    /// when the atoms fit in [`ATOMS_MAX_BYTES`].
    #[serde(default)]
    pub steps: Steps,
}

/// The kind of block step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Steps {
    /// Frank–Wolfe steps toward the oracle's corner, the weighted average returned when `average`.
    FrankWolfe,
    /// Pairwise steps: the last iterate is returned, or with `average`, whichever of it and the weighted
    /// average has the lower primal at each certification (the higher of their duals certifies it).
    Pairwise,
    /// Pairwise when at most [`MAX_ATOMS`] atoms per example, each of twice the true output's nonzeros,
    /// fit in [`ATOMS_MAX_BYTES`], else Frank–Wolfe steps; either way as `average` says.
    #[default]
    Auto,
}

/// The memory that pairwise atoms may take at most for `Steps::Auto` to choose them.
pub const ATOMS_MAX_BYTES: usize = 256 << 20;

impl Default for BcfwParams {
    fn default() -> Self {
        Self {
            average: true,
            sampling: Sampling::Permutation,
            seed: 0,
            gap_every: 5.0,
            gap_tolerance: Some(0.01),
            steps: Steps::Auto,
        }
    }
}

impl BcfwParams {
    /// Pairwise steps, returning the last iterate (no average kept).
    pub fn pairwise() -> Self {
        Self {
            average: false,
            steps: Steps::Pairwise,
            ..Self::default()
        }
    }

    /// Frank–Wolfe steps with the weighted average (the 2013 paper's BCFW-wavg).
    pub fn frank_wolfe() -> Self {
        Self {
            steps: Steps::FrankWolfe,
            ..Self::default()
        }
    }

    /// Checks the parameters.
    ///
    /// # Errors
    /// [`OptimError::InvalidParam`].
    pub fn check(self) -> Result<Bcfw, OptimError> {
        if !(self.gap_every.is_finite() && self.gap_every > 0.0) {
            return Err(invalid(
                "gap_every",
                self.gap_every,
                "must be positive and finite",
            ));
        }
        if let Some(t) = self.gap_tolerance
            && !(t.is_finite() && t >= 0.0)
        {
            return Err(invalid("gap tolerance", t, "must be finite and >= 0"));
        }
        Ok(Bcfw {
            params: self,
            n_total: None,
        })
    }
}

/// Checked BCFW.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bcfw {
    params: BcfwParams,
    /// Over ranks: the whole problem's example count, for the corners' `1/(λn)` (`None`: this problem's).
    n_total: Option<usize>,
}

/// BCFW state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BcfwState {
    /// Steps taken.
    pub k: u64,
    w: Vec<f64>,
    ell: f64,
    w_i: Shares,
    ell_i: Vec<f64>,
    psi_truth: Vec<SparseVec>,
    avg: Option<WeightedAverage>,
    sampler: Sampler,
    next_gap: f64,
    /// The last exact certificate of the output: `(step k, primal, dual, gap)`. The primal is reused while
    /// no step has been taken since, so a gap check and an evaluation at the same state cost one pass.
    pub last: Option<(u64, f64, f64, f64)>,
    /// Pairwise steps with the average kept: the last certification found the last iterate's primal lower
    /// than the average's, so it is the output.
    #[serde(default)]
    last_iterate: bool,
    #[serde(skip)]
    scatter: Scatter,
}

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

impl Bcfw {
    /// Whether this problem gets pairwise steps.
    fn pairwise<S: OutputSpace>(&self, problem: &StructProblem<'_, S>) -> bool {
        match self.params.steps {
            Steps::FrankWolfe => false,
            Steps::Pairwise => true,
            Steps::Auto => {
                let nnz: usize = problem
                    .x()
                    .iter()
                    .zip(problem.y())
                    .map(|(x, y)| {
                        let mut k = 0usize;
                        problem.space().for_each_feature(x, y, &mut |_, _| k += 1);
                        k
                    })
                    .sum();
                // An atom entry is an index and a value (12 bytes) in a vector with slack (2×).
                nnz.saturating_mul(2 * MAX_ATOMS * 24) <= ATOMS_MAX_BYTES
            }
        }
    }

    fn output_of(&self, st: &BcfwState) -> (Vec<f64>, f64) {
        if st.last_iterate {
            return (st.w.clone(), st.ell);
        }
        Self::average_of(st)
    }

    /// The weighted average `(w̄, ℓ̄)`, or the iterate when none is kept.
    fn average_of(st: &BcfwState) -> (Vec<f64>, f64) {
        match &st.avg {
            Some(a) if a.c_sum > 0.0 => (
                st.w.iter()
                    .zip(&a.u)
                    .map(|(w, u)| (a.c_sum * w - u) / a.c_sum)
                    .collect(),
                a.ell_sum / a.c_sum,
            ),
            _ => (st.w.clone(), st.ell),
        }
    }

    fn certify<S: OutputSpace>(
        &self,
        problem: &StructProblem<'_, S>,
        st: &mut BcfwState,
    ) -> Result<(), OptimError>
    where
        S::Output: Sync,
    {
        if st.last.is_some_and(|l| l.0 == st.k) {
            return Ok(());
        }
        let lambda = problem.lambda();
        if Self::both(st) {
            // Pairwise steps with the average kept: both points are feasible for the dual and both give a
            // primal, so the lower primal is the output and the higher dual bounds the optimum. The last
            // iterate wins once pairwise steps converge; the average while they do not (unscaled data).
            // When the last iterate is already certified within the tolerance, the average's oracle pass
            // is skipped.
            let p_last = problem.primal(&st.w)?;
            let dual = self.dual_of(st, lambda);
            let done = self
                .params
                .gap_tolerance
                .is_some_and(|t| p_last - dual <= t * p_last.abs());
            let p_avg = if done {
                f64::INFINITY
            } else {
                problem.primal(&Self::average_of(st).0)?
            };
            st.last_iterate = p_last <= p_avg;
            let primal = p_last.min(p_avg);
            st.last = Some((st.k, primal, dual, primal - dual));
            return Ok(());
        }
        let primal = problem.primal(&self.output_of(st).0)?;
        let dual = self.dual_of(st, lambda);
        st.last = Some((st.k, primal, dual, primal - dual));
        Ok(())
    }

    /// Pairwise steps with the weighted average kept beside them.
    fn both(st: &BcfwState) -> bool {
        matches!(st.w_i, Shares::Atoms(_)) && st.avg.is_some()
    }

    /// The dual certificate: the output's, or with pairwise steps and the average, the higher of the two.
    fn dual_of(&self, st: &BcfwState, lambda: f64) -> f64 {
        let at = |(w, ell): (Vec<f64>, f64)| -0.5 * lambda * norm_sq(&w) + ell;
        if Self::both(st) {
            (-0.5 * lambda * norm_sq(&st.w) + st.ell).max(at(Self::average_of(st)))
        } else {
            at(self.output_of(st))
        }
    }

    /// The gap check when a pass of `gap_every` is complete.
    fn after_step<S: OutputSpace>(
        &self,
        problem: &StructProblem<'_, S>,
        st: &mut BcfwState,
    ) -> Result<(), OptimError>
    where
        S::Output: Sync,
    {
        if st.sampler.epochs() >= st.next_gap - 1e-12 {
            st.next_gap += self.params.gap_every;
            self.certify(problem, st)?;
        }
        Ok(())
    }
}

impl Bcfw {
    /// One block step on block `i` (the one the sampler drew), Frank–Wolfe or pairwise, without the gap
    /// check that follows it in a pass: what one process and each rank's share of a round both take.
    fn block_step<S>(
        &self,
        problem: &StructProblem<'_, S>,
        st: &mut BcfwState,
        i: usize,
    ) -> Result<(), OptimError>
    where
        S: OutputSpace,
        S::Output: Sync,
    {
        let n = self.n_total.unwrap_or(problem.n_samples()) as f64;
        let lambda = problem.lambda();
        let v = problem.oracle(&st.w, i)?;
        // The corner: w_s = (ψ(y_i) − ψ(ŷ))/(λn), ℓ_s = Δ/n.
        let scale = 1.0 / (lambda * n);
        let ell_s = v.loss / n;
        let dim = st.w.len();
        st.k += 1;
        if let Shares::Atoms(blocks) = &mut st.w_i {
            // u_s = ψ(y_i) − ψ(ŷ). On small spaces (chains) it is scattered in O(nnz) and only the entries
            // that do not cancel are sorted; on large ones (many classes) a dense scratch would be the
            // largest thing held, so ψ(ŷ) is sorted and merged.
            let (x_i, truth) = (&problem.x()[i], &st.psi_truth[i]);
            let u_s = if dim <= SCATTER_MAX_DIM {
                let ws = &mut st.scatter;
                ws.ensure(dim);
                for (j, v) in truth.as_row().iter() {
                    ws.add(j, v);
                }
                problem
                    .space()
                    .for_each_feature(x_i, &v.output, &mut |j, v| ws.add(j, -v));
                ws.take_sorted()
            } else {
                let psi_hat = problem.space().joint_feature(x_i, &v.output);
                SparseVec::lincomb(1.0, truth, -1.0, &psi_hat)
            };
            let c_prev = st.avg.as_ref().map_or(0.0, |a| a.c_sum);
            if let Some(m) = blocks[i].step(&st.w, u_s, v.loss, n, lambda) {
                // δ = (γ/(λn))·d, applied to w and, as C_{k−1}·δ, to the average's sum.
                for (j, dj) in m.d.as_row().iter() {
                    st.w[j] += m.scale * dj;
                    if let Some(a) = &mut st.avg {
                        a.u[j] += c_prev * m.scale * dj;
                    }
                }
                let ell_new = m.loss_sum / n;
                st.ell += ell_new - st.ell_i[i];
                st.ell_i[i] = ell_new;
            }
            let (k, ell) = (st.k as f64, st.ell);
            if let Some(a) = &mut st.avg {
                a.c_sum += k;
                a.ell_sum += k * ell;
            }
            return Ok(());
        }
        let c_prev = st.avg.as_ref().map_or(0.0, |a| a.c_sum);
        let gamma = match &mut st.w_i {
            Shares::Sparse(shares) => {
                let psi_hat = problem.space().joint_feature(&problem.x()[i], &v.output);
                let w_s = SparseVec::lincomb(scale, &st.psi_truth[i], -scale, &psi_hat);
                let d = SparseVec::lincomb(1.0, &shares[i], -1.0, &w_s);
                let numerator = lambda * d.as_row().dot(&st.w) - st.ell_i[i] + ell_s;
                let gamma = line_search(numerator, lambda * d.as_row().norm_sq());
                if gamma > 0.0 {
                    // w_i ← w_i − γ d, w ← w − γ d, and u += C_{k−1}·δ with δ = −γ d.
                    for (j, dj) in d.as_row().iter() {
                        st.w[j] -= gamma * dj;
                        if let Some(a) = &mut st.avg {
                            a.u[j] -= c_prev * gamma * dj;
                        }
                    }
                    shares[i] = SparseVec::lincomb(1.0, &shares[i], -gamma, &d);
                }
                gamma
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
                gamma
            }
            // Taken above.
            Shares::Atoms(_) => 0.0,
        };
        if gamma > 0.0 {
            let ell_new = (1.0 - gamma) * st.ell_i[i] + gamma * ell_s;
            st.ell += ell_new - st.ell_i[i];
            st.ell_i[i] = ell_new;
        }
        let (k, ell) = (st.k as f64, st.ell);
        if let Some(a) = &mut st.avg {
            a.c_sum += k;
            a.ell_sum += k * ell;
        }
        Ok(())
    }
}

impl<'a, S: OutputSpace<Output: Sync>> Solver<StructProblem<'a, S>> for Bcfw {
    type State = BcfwState;
    type Output = Vec<f64>;

    fn init(&mut self, problem: &StructProblem<'a, S>) -> Result<BcfwState, OptimError> {
        problem.require_margin("bcfw")?;
        let (n, dim) = (problem.n_samples(), problem.dim());
        let pairwise = self.pairwise(problem);
        Ok(BcfwState {
            k: 0,
            w: vec![0.0; dim],
            ell: 0.0,
            w_i: if pairwise {
                Shares::Atoms(vec![pairwise::Block::default(); n])
            } else if n.saturating_mul(dim).saturating_mul(8) <= DENSE_SHARES_MAX_BYTES {
                Shares::Dense {
                    shares: vec![0.0; n * dim],
                    sq: vec![0.0; n],
                }
            } else {
                Shares::Sparse(vec![SparseVec::default(); n])
            },
            ell_i: vec![0.0; n],
            psi_truth: problem.truth_features(),
            avg: self.params.average.then(|| WeightedAverage {
                u: vec![0.0; dim],
                c_sum: 0.0,
                ell_sum: 0.0,
            }),
            sampler: Sampler::new(self.params.sampling, n, self.params.seed),
            next_gap: self.params.gap_every,
            last: None,
            last_iterate: false,
            scatter: Scatter::default(),
        })
    }

    fn check_state(
        &self,
        problem: &StructProblem<'a, S>,
        st: &BcfwState,
    ) -> Result<(), OptimError> {
        let (n, dim) = (problem.n_samples(), problem.dim());
        fits(
            st.w.len() == dim && all_finite(&st.w) && st.ell.is_finite(),
            "w",
        )?;
        fits(st.w_i.fits(n, dim), "the shares")?;
        fits(
            st.ell_i.len() == n && all_finite(&st.ell_i),
            "the shares' losses",
        )?;
        fits(
            st.psi_truth == problem.truth_features(),
            "the true outputs' features (a checkpoint of other data?)",
        )?;
        fits(
            st.avg
                .as_ref()
                .is_none_or(|a| a.u.len() == dim && all_finite(&a.u)),
            "the average",
        )?;
        fits(st.sampler.fits(n), "the sampler")
    }

    fn step(
        &mut self,
        problem: &StructProblem<'a, S>,
        st: &mut BcfwState,
    ) -> Result<(), OptimError> {
        let i = st.sampler.next_index();
        self.block_step(problem, st, i)?;
        self.after_step(problem, st)
    }

    fn progress(&self, _problem: &StructProblem<'a, S>, st: &BcfwState) -> Progress {
        Progress {
            iteration: st.k,
            epoch: st.sampler.epochs(),
        }
    }

    fn output(&self, _problem: &StructProblem<'a, S>, st: &BcfwState) -> Vec<f64> {
        self.output_of(st).0
    }

    fn objective(&self, problem: &StructProblem<'a, S>, st: &BcfwState) -> Result<f64, OptimError> {
        match st.last {
            Some((k, primal, _, _)) if k == st.k => Ok(primal),
            _ => problem.primal(&self.output_of(st).0),
        }
    }

    fn certificate(
        &self,
        problem: &StructProblem<'a, S>,
        st: &BcfwState,
        objective: f64,
    ) -> Result<Certificate, OptimError> {
        let dual = self.dual_of(st, problem.lambda());
        Ok(Certificate {
            // Pairwise steps: the active atoms over all blocks.
            active_constraints: match &st.w_i {
                Shares::Atoms(blocks) => Some(blocks.iter().map(pairwise::Block::len).sum()),
                _ => None,
            },
            oracle_calls: Some(problem.oracle_calls()),
            ..Certificate::of_dual(objective, dual)
        })
    }

    fn finish(&mut self, problem: &StructProblem<'a, S>, mut st: BcfwState) -> BcfwState {
        if self.certify(problem, &mut st).is_err() {
            st.last = None;
        }
        st
    }

    fn stop(&self, st: &BcfwState) -> Option<StopReason> {
        let tol = self.params.gap_tolerance?;
        let (_, primal, _, gap) = st.last?;
        (gap <= tol * primal.abs()).then_some(StopReason::Converged)
    }
}

mod distributed;
pub use distributed::{BcfwRankState, BcfwRanks};
pub mod pairwise;
mod shares;

pub use shares::DENSE_SHARES_MAX_BYTES;
use shares::{SCATTER_MAX_DIM, Scatter, Shares, WeightedAverage};

pub use pairwise::MAX_ATOMS;
