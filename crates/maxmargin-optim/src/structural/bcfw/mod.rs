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
//! (one pass of oracle calls, in parallel) and is the stopping test. Its pass is not free, so it is scheduled
//! every `gap_every` passes but taken only where it may stop the run: every step measures its block's gap at
//! the iterate of the time, and their sum (stale, but free) estimates the iterate's gap; scaled as the last
//! certification found it (its gap over the sum then), it predicts the next. After the first, a scheduled
//! check is skipped while the prediction is above [`SKIP_ABOVE_TARGET`] times the target, and a pass's end
//! between schedules is checked once it is within the target. On #27's 200 noisy pictures of 64 × 64 pixels
//! this took the oracle calls to a certified 1% from 28 passes' worth to 23 (19 passes and four
//! certifications, where there were 20 and eight).
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
    /// Compute the exact duality gap every this many passes, unless the blocks' gaps, scaled as the last
    /// certification found them, put it above [`SKIP_ABOVE_TARGET`] times `gap_tolerance`; and between
    /// these at a pass's end where they put it within. Exactly every this many passes without a tolerance or
    /// with gap sampling.
    pub gap_every: f64,
    /// Stop when the gap is at most this fraction of the primal objective.
    pub gap_tolerance: Option<f64>,
    /// Frank–Wolfe or pairwise steps (from the worst active corner to the oracle's), or `Auto`: pairwise
    /// when the atoms fit in [`ATOMS_MAX_BYTES`].
    #[serde(default)]
    pub steps: Steps,
    /// Draw blocks with probability proportional to their estimated gaps after a first pass by permutation
    /// (Osokin et al. 2016), where certifications refresh the estimates: with pairwise steps or without the
    /// average (Frank–Wolfe steps with the average draw by permutation: estimates that only visits update go
    /// stale, and letter and scene stalled). Sequential steps only: over ranks and blocks each draws its
    /// blocks by permutation. Off by default: without the cache it took the 100-class set to 1% in 0.6× the
    /// time of permutation but OCR chains in 1.2× (long words have the larger gaps and the dearer steps);
    /// with the cache it adds nothing measurable (`cargo bench -p maxmargin-benches --bench bcfw_variants`).
    #[serde(default)]
    pub gap_sampling: bool,
    /// With pairwise steps, try the block's active corners before the oracle (Osokin et al. 2016's cache):
    /// a step between them is taken without an oracle call when the gap they close is at least
    /// [`CACHE_FRACTION`] of the block's gap at its last oracle call and [`CACHE_GLOBAL`] of the mean block
    /// gap at the last scheduled certification. Certificates still come from oracle passes, so they stay
    /// exact. Over ranks each rank keeps its blocks' caches, with the agreed certificates as the reference.
    /// A pass is `n` steps that called the oracle; the cache's steps come on top. On by default: to a certified 1%
    /// gap, OCR chains in 0.41× the time of no cache (30 passes instead of 115) and the 100-class set in
    /// 0.66× (`cargo bench -p maxmargin-benches --bench bcfw_variants`).
    #[serde(default = "on")]
    pub cache: bool,
}

fn on() -> bool {
    true
}

/// A scheduled certification is skipped while the sum of the blocks' gaps measured at their last steps
/// (free with every step, but each at its own iterate), scaled as the last certification found it (its
/// gap over the sum then), exceeds this many times the gap target. The first is always made: the sum
/// estimates the iterate's gap, and the certified one (the average's, or the better of the two) may be far
/// below it.
pub const SKIP_ABOVE_TARGET: f64 = 3.0;

/// The cache's part of a block's last measured gap that its active corners must close to skip the oracle.
pub const CACHE_FRACTION: f64 = 0.5;
/// The cache's part of the mean block gap (the last certified gap over `n`) that they must close too.
pub const CACHE_GLOBAL: f64 = 0.01;

/// The kind of block step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Steps {
    /// Frank–Wolfe steps toward the oracle's corner, the weighted average returned when `average`.
    FrankWolfe,
    /// Pairwise steps: the last iterate is returned, or with `average`, whichever of it and the weighted
    /// average has the lower primal at each certification (the higher of their duals certifies it).
    Pairwise,
    /// Pairwise when one atom per example of twice the true output's nonzeros fits in [`ATOMS_MAX_BYTES`],
    /// else Frank–Wolfe steps; either way as `average` says. Atoms that outgrow [`ATOMS_MAX_BYTES`] later
    /// (up to [`MAX_ATOMS`] per example) become Frank–Wolfe shares at the end of a pass: on CoNLL-2000
    /// chunking (200,000 features, 22 tags) the atoms held 100 MB at λ = 10⁻³ and pairwise steps reached
    /// a certified 1% gap in 35 passes, where Frank–Wolfe steps were at 6.9% after 66.
    #[default]
    Auto,
}

/// The memory that pairwise atoms may take at most under `Steps::Auto` (per rank over ranks, shared out
/// among blocks in one process).
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
            gap_sampling: false,
            cache: true,
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
        if self.gap_sampling && self.average && self.steps == Steps::FrankWolfe {
            return Err(invalid(
                "gap_sampling",
                true,
                "needs pairwise steps or no average: with Frank-Wolfe steps and the average, certifications \
                 value the average and the estimates would go stale",
            ));
        }
        Ok(Bcfw {
            params: self,
            n_total: None,
            atoms_budget: ATOMS_MAX_BYTES,
            dense_budget: DENSE_SHARES_MAX_BYTES,
        })
    }
}

/// Checked BCFW.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bcfw {
    params: BcfwParams,
    /// Over ranks: the whole problem's example count, for the corners' `1/(λn)` (`None`: this problem's).
    n_total: Option<usize>,
    /// The bytes `Steps::Auto` lets pairwise atoms hold ([`ATOMS_MAX_BYTES`] unless set).
    atoms_budget: usize,
    /// The bytes Frank–Wolfe shares may hold densely ([`DENSE_SHARES_MAX_BYTES`], shared out among blocks).
    dense_budget: usize,
}

impl Bcfw {
    /// The same solver with `Steps::Auto`'s memory for pairwise atoms set to `bytes` instead of
    /// [`ATOMS_MAX_BYTES`] (for tests and machines with other means).
    #[must_use]
    pub fn with_atoms_budget(mut self, bytes: usize) -> Self {
        self.atoms_budget = bytes;
        self
    }
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
    /// Gap sampling's estimates and draws.
    #[serde(default)]
    gaps: Option<gaps::GapSampler>,
    /// The cache: each block's gap at its last oracle call (empty without the cache).
    #[serde(default)]
    oracle_gaps: Vec<f64>,
    /// Steps the cache took (without an oracle call): passes count the others.
    #[serde(default)]
    cached: u64,
    /// The cache's steps since the last oracle call.
    #[serde(default)]
    cached_run: u64,
    /// The cache's reference: the gap at the last certification before the run's end, or the predicted one at
    /// a skipped schedule (0 before the first).
    #[serde(default)]
    cache_ref: f64,
    /// Each block's gap at its last step (`None` before its first), whose sum estimates the iterate's gap.
    #[serde(default)]
    block_gaps: Vec<Option<f64>>,
    /// The last certification's gap over the blocks' gaps' sum then (`None` before one with a sum).
    #[serde(default)]
    calibration: Option<f64>,
    /// The last iterate won the last certification before the run's end (the end's may differ: a run
    /// resumed from its end checks in the order of one never stopped).
    #[serde(default)]
    iterate_won: bool,
    /// In a round of blocks in one process, the entries of `w` the steps wrote (`None` otherwise).
    #[serde(skip)]
    written: Option<Written>,
    #[serde(skip)]
    scatter: Scatter,
    #[serde(skip)]
    average_buf: AverageBuf,
}

/// Where the weighted average is written to be valued (its dual at every pass's end, its primal at a
/// certification): one `dim`-wide buffer for the run instead of a fresh one each time (on CoNLL-2000, 35 MB
/// allocated and faulted in at each pass's end). Not part of the state's meaning: never saved, equal to any
/// other, empty when cloned.
#[derive(Debug, Default)]
struct AverageBuf(std::sync::Mutex<Vec<f64>>);

impl Clone for AverageBuf {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl PartialEq for AverageBuf {
    fn eq(&self, _: &Self) -> bool {
        true
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
                // One atom per example as large as it can be (every entry of ψ(y_i) and of ψ(ŷ)), as the
                // first pass from w = 0 may leave; past the budget later, the atoms become Frank–Wolfe
                // shares ([`Bcfw::keep_atoms_in_budget`]).
                nnz.saturating_mul(2 * pairwise::ATOM_ENTRY_BYTES) <= self.atoms_budget
            }
        }
    }

    /// Under `Steps::Auto`, pairwise atoms that hold more than the budget become Frank–Wolfe shares of the
    /// same dual point (so `w` and `ℓ` do not change), with the cache off and, with the average, its
    /// Frank–Wolfe rules (the average, restarted at the iterate, is the output; blocks drawn by
    /// permutation). Called between passes (over ranks and blocks, after a round that completed one), it
    /// depends on the state alone: a resumed run converts where an uninterrupted one does.
    fn keep_atoms_in_budget<S: OutputSpace>(
        &self,
        problem: &StructProblem<'_, S>,
        st: &mut BcfwState,
    ) {
        if self.atoms_over_budget(st) {
            self.atoms_to_shares(problem, st);
        }
    }

    /// Whether `Steps::Auto`'s pairwise atoms hold more than the budget.
    fn atoms_over_budget(&self, st: &BcfwState) -> bool {
        let Shares::Atoms(blocks) = &st.w_i else {
            return false;
        };
        self.params.steps == Steps::Auto
            && blocks.iter().map(pairwise::Block::bytes).sum::<usize>() > self.atoms_budget
    }

    /// The atoms become Frank–Wolfe shares ([`Bcfw::keep_atoms_in_budget`]).
    fn atoms_to_shares<S: OutputSpace>(&self, problem: &StructProblem<'_, S>, st: &mut BcfwState) {
        let Shares::Atoms(blocks) = &st.w_i else {
            return;
        };
        let n = self.n_total.unwrap_or(problem.n_samples()) as f64;
        st.w_i = Shares::of_atoms(
            blocks,
            problem.dim(),
            1.0 / (problem.lambda() * n),
            self.dense_budget,
        );
        st.oracle_gaps = Vec::new();
        st.cached_run = 0;
        if let Some(a) = &mut st.avg {
            // The average starts again at the iterate: the pairwise steps' iterates are behind it, and
            // their average would be the output (often worse than the iterate) from now on.
            a.u.iter_mut().for_each(|u| *u = 0.0);
            (a.c_sum, a.ell_sum) = (0.0, 0.0);
            st.gaps = None;
            st.last_iterate = false;
            st.iterate_won = false;
        }
        // The last certification's ratio was the pairwise output's.
        st.calibration = None;
        st.last = None;
    }

    /// Converged when the `last` certificate `(step, primal, dual, gap)` is within the gap tolerance: one
    /// process's stop, the ranks' and the blocks'.
    pub(super) fn certified_stop(&self, last: Option<(u64, f64, f64, f64)>) -> Option<StopReason> {
        let tol = self.params.gap_tolerance?;
        let (_, primal, _, gap) = last?;
        (gap <= tol * primal.abs()).then_some(StopReason::Converged)
    }

    /// `f` of the output `(w, ℓ)`: the last iterate when it won the last certification, else the weighted
    /// average (the iterate when none is kept).
    fn with_output<R>(&self, st: &BcfwState, f: impl FnOnce(&[f64], f64) -> R) -> R {
        if st.last_iterate {
            return f(&st.w, st.ell);
        }
        Self::with_average(st, f)
    }

    /// `f` of the weighted average `(w̄, ℓ̄)` (or of the iterate when none is kept).
    fn with_average<R>(st: &BcfwState, f: impl FnOnce(&[f64], f64) -> R) -> R {
        match Self::fill_average(st) {
            Some((buf, ell)) => f(&buf, ell),
            None => f(&st.w, st.ell),
        }
    }

    /// The weighted average written into the state's buffer, entry by entry on every core (the same
    /// numbers whatever the thread count), with `ℓ̄`; none when no average is kept yet.
    fn fill_average(st: &BcfwState) -> Option<(std::sync::MutexGuard<'_, Vec<f64>>, f64)> {
        use rayon::prelude::*;
        let a = st.avg.as_ref().filter(|a| a.c_sum > 0.0)?;
        let mut buf = (st.average_buf.0.lock()).unwrap_or_else(|p| p.into_inner());
        buf.resize(st.w.len(), 0.0);
        (buf.par_iter_mut().with_min_len(1 << 16))
            .zip(st.w.par_iter().zip(&a.u))
            .for_each(|(b, (w, u))| *b = (a.c_sum * w - u) / a.c_sum);
        Some((buf, a.ell_sum / a.c_sum))
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
            } else {
                Shares::frank_wolfe(n, dim, self.dense_budget)
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
            // The estimates are refreshed by certifications at the last iterate: with Frank–Wolfe steps and the
            // average, certifications value the average only, and estimates that only visits update go
            // stale (blocks measured near 0 would not be drawn again), so those runs draw by permutation.
            gaps: (self.params.gap_sampling && (pairwise || !self.params.average))
                .then(|| gaps::GapSampler::new(n, self.params.seed)),
            oracle_gaps: if self.params.cache && pairwise {
                vec![0.0; n]
            } else {
                Vec::new()
            },
            cached: 0,
            cached_run: 0,
            cache_ref: 0.0,
            block_gaps: vec![None; n],
            calibration: None,
            iterate_won: false,
            written: None,
            scatter: Scatter::default(),
            average_buf: AverageBuf::default(),
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
        fits(st.sampler.fits(n), "the sampler")?;
        let atoms = matches!(st.w_i, Shares::Atoms(_));
        fits(
            st.gaps.as_ref().is_none_or(|g| g.fits(n))
                && st.gaps.is_some()
                    == (self.params.gap_sampling && (atoms || !self.params.average)),
            "the gap estimates",
        )?;
        fits(
            st.oracle_gaps.len() == if self.params.cache && atoms { n } else { 0 }
                && all_finite(&st.oracle_gaps)
                && st.cache_ref.is_finite()
                && st.cache_ref >= 0.0
                && st.cached <= st.k
                && st.cached_run <= st.cached,
            "the cache's gaps",
        )?;
        // Empty in a checkpoint of before the estimate: its checks are then all made.
        fits(
            (st.block_gaps.is_empty() || st.block_gaps.len() == n)
                && st.block_gaps.iter().flatten().all(|g| g.is_finite())
                && st.calibration.is_none_or(|c| c.is_finite() && c >= 0.0),
            "the blocks' gaps",
        )
    }

    fn step(
        &mut self,
        problem: &StructProblem<'a, S>,
        st: &mut BcfwState,
    ) -> Result<(), OptimError> {
        if st.k > 0 && st.k.is_multiple_of(st.ell_i.len() as u64) {
            self.keep_atoms_in_budget(problem, st);
        }
        let drawn = st.gaps.as_mut().and_then(gaps::GapSampler::draw);
        let i = drawn.unwrap_or_else(|| st.sampler.next_index());
        let gap = self.block_step(problem, st, i)?;
        if let Some(g) = st.block_gaps.get_mut(i) {
            *g = gap.is_finite().then_some(gap);
        }
        let first_pass_done = Self::epochs(st) >= 1.0;
        if let Some(g) = &mut st.gaps {
            g.set(i, gap);
            // A first pass by permutation (or in order) visited every block; uniform draws wait for the
            // first certification's refresh.
            if !g.ready() && first_pass_done && self.params.sampling != Sampling::Uniform {
                g.start();
            }
        }
        self.after_step(problem, st)
    }

    fn progress(&self, _problem: &StructProblem<'a, S>, st: &BcfwState) -> Progress {
        Progress {
            iteration: st.k,
            epoch: Self::epochs(st),
        }
    }

    fn output(&self, _problem: &StructProblem<'a, S>, st: &BcfwState) -> Vec<f64> {
        if st.last_iterate {
            return st.w.clone();
        }
        // The average's buffer is handed out: one `dim`-wide vector, not a copy of it.
        match Self::fill_average(st) {
            Some((mut buf, _)) => std::mem::take(&mut *buf),
            None => st.w.clone(),
        }
    }

    fn objective(&self, problem: &StructProblem<'a, S>, st: &BcfwState) -> Result<f64, OptimError> {
        match st.last {
            Some((k, primal, _, _)) if k == st.k => Ok(primal),
            _ => self.with_output(st, |w, _| problem.primal(w)),
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
        // Not a scheduled certification: it refreshes neither gap sampling's estimates nor the cache's
        // reference gap, so a run resumed from here takes the steps of one never stopped.
        if self.certify(problem, &mut st, false).is_err() {
            st.last = None;
        }
        st
    }

    fn stop(&self, st: &BcfwState) -> Option<StopReason> {
        self.certified_stop(st.last)
    }
}

mod blocks;
pub use blocks::{BcfwBlocks, BcfwBlocksState};
mod certify;
mod distributed;
pub use distributed::{BcfwRankState, BcfwRanks};
mod gaps;
pub mod pairwise;
mod round;
mod shares;
mod step;

pub use shares::DENSE_SHARES_MAX_BYTES;
use shares::{Scatter, Shares, WeightedAverage, Written};

pub use pairwise::MAX_ATOMS;
