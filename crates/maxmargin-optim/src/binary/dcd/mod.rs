//! Dual coordinate descent for L2-regularized SVMs with the hinge (L1) or squared hinge (L2) loss (Hsieh, Chang,
//! Lin, Keerthi, Sundararajan 2008). For the squared hinge the box is `[0, ∞)` and `Q` gains `1/(2C)` on its
//! diagonal; everything else is the same.
//!
//! In LIBLINEAR's C-form the dual is `min_α ½αᵀQα − eᵀα`, `0 ≤ α_i ≤ C`, `Q_ij = y_i y_j ⟨x_i, x_j⟩`, with
//! `w = Σ α_i y_i x_i`; here `C = 1/(λn)` so the primal is the λ-form `λ/2‖w‖² + (1/n)Σ hinge` (which is `λ`
//! times the C-form one). Each outer iteration visits the active examples in a fresh seeded permutation and
//! sets `α_i ← clip(α_i − G_i/Q_ii, 0, C)` with `G_i = y_i⟨w, x_i⟩ − 1`, updating `w` in `O(nnz(x_i))`.
//! Shrinking drops examples whose projected gradient says they stay at a bound; the stopping test is
//! LIBLINEAR's: the spread of the projected gradient over all examples below `epsilon`. The duality gap is
//! exact and reported (the trainer can stop on it: `Budget::gap_tolerance`). The bias is a regularized
//! constant feature (LIBLINEAR's `-B 1`), absent, or unregularized.
//!
//! **Unregularized bias.** It adds `Σ α_i y_i = 0` to the dual, so single coordinates cannot move. Two phases:
//! 1. *Outer search.* For a fixed `b` the problem is the ordinary one with margins `y_i(⟨w, x_i⟩ + b)`, solved
//!    by the same passes (to `max(ε, 10⁻²)`); its optimum `φ(b)` is convex with slope `−λ Σ α_i(b) y_i`. After
//!    each inner solve `b` moves toward the root of `s(b) = Σ α_i y_i` (doubling steps until `s` changes sign,
//!    then safeguarded interpolation), the duals carried over (they stay in their boxes). It ends when
//!    `|s| ≤ ε·C`, or when the bracket closes on a jump of `s` (with the hinge, examples exactly on the margin
//!    can take any dual in their box, so `s(b)` is not continuous at the optimal `b`).
//! 2. *Pair steps* from the duals balanced to `Σ α_i y_i = 0` (the heavier class scaled down): each pass
//!    computes `v_i = −y_i G_i`, pairs the most violating examples of LIBSVM's `I_up` (by `v` descending) with
//!    those of `I_low` (ascending), each once, and solves each pair exactly with fresh gradients along
//!    `α_i += y_i δ, α_j −= y_j δ`: `δ = (v_i − v_j) / (‖x_i − x_j‖² + D_ii + D_jj)`, clipped to both boxes. The
//!    stop is LIBSVM's `m(α) − M(α) ≤ ε`, and `b = −y_i G_i` averaged over the free examples.
//!
//! The certificate balances the duals the same way, so the reported dual is a true lower bound.
//!
//! **Blocks (all cores).** With `blocks = B > 1` each pass splits the seeded permutation of the active examples
//! into `B` fixed blocks and runs the ordinary coordinate steps of every block at once, each against its own
//! copy of `w`. The block steps are then summed into one direction `(dα, dw)` and taken with the step
//! `t ∈ [0, 1]` that maximizes the dual along it, which is exact because the dual is quadratic:
//! `t = (Σ dα_i − ⟨w, dw⟩ − Σ D_ii α_i dα_i) / (‖dw‖² + Σ D_ii dα_i²)`, clipped. Every block's steps raise the
//! dual, so the sum is an ascent direction and the dual rises every pass; blocks that barely interact give
//! `t ≈ 1` (`B` passes' worth of progress in one), blocks that pull `w` the same way give `t ≈ 1/B`.
//! This is CoCoA's combination (Jaggi et al. 2014, Ma et al. 2015) with the step chosen by line search
//! instead of the safe `1/B`. Shrinking works per block with the previous pass's bounds. The blocks depend
//! on the seed and `B` only, never on the number of threads, so the weights are the same bits on one core
//! or many.
//!
//! **Warm start.** [`Dcd::warm_state`] starts from a previous dual (clipped into the new box, `w` rebuilt from
//! it), e.g. the solution at a smaller `C` on a regularization path.

use crate::error::{
    OptimError, all_finite, check_epsilon, distinct_below, fits, in_boxes, invalid,
};
use crate::gap_target::{self, PassEnd};
use crate::problem::{Bias, BinaryLoss, BinaryProblem, LinearWeights};
use crate::trainer::{Certificate, Progress, Solver, StepDetail, StopReason};
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Unchecked DCD parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DcdParams {
    /// Stop when the projected gradient's spread `max PG − min PG` is below this (LIBLINEAR's `-e`, 0.1).
    pub epsilon: f64,
    /// Shrink examples that stay at a bound.
    pub shrinking: bool,
    /// The seed of the permutations.
    pub seed: u64,
    /// Blocks updated in parallel per pass (1: the sequential method). The result depends on this and the
    /// seed, not on the number of threads.
    #[serde(default = "one")]
    pub blocks: usize,
}

fn one() -> usize {
    1
}

impl Default for DcdParams {
    fn default() -> Self {
        Self {
            epsilon: 0.1,
            shrinking: true,
            seed: 0,
            blocks: 1,
        }
    }
}

impl DcdParams {
    /// LIBLINEAR's defaults: ε = 0.1, shrinking, one block, seed 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the stopping tolerance ε on the projected gradient's spread.
    pub fn epsilon(mut self, epsilon: f64) -> Self {
        self.epsilon = epsilon;
        self
    }

    /// Sets whether examples that stay at a bound are shrunk (set aside until the stopping test reopens them).
    pub fn shrinking(mut self, shrinking: bool) -> Self {
        self.shrinking = shrinking;
        self
    }

    /// Sets the seed of the permutations.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Sets the number of blocks updated in parallel per pass.
    pub fn blocks(mut self, blocks: usize) -> Self {
        self.blocks = blocks;
        self
    }

    /// Checks the parameters.
    ///
    /// # Errors
    /// [`OptimError::InvalidParam`] for a bad ε.
    pub fn check(self) -> Result<Dcd, OptimError> {
        check_epsilon(self.epsilon)?;
        if self.blocks == 0 {
            return Err(invalid("blocks", 0, "must be at least 1"));
        }
        Ok(Dcd {
            params: self,
            gap_target: crate::gap_target::GapTarget::default(),
            n_total: None,
        })
    }
}

/// Checked DCD.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dcd {
    params: DcdParams,
    gap_target: crate::gap_target::GapTarget,
    /// Over ranks: the whole problem's example count, for `C = 1/(λn)` (`None`: this problem's).
    n_total: Option<usize>,
}

/// DCD state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DcdState {
    /// Outer iterations.
    pub iteration: u64,
    /// Coordinate updates visited (for passes = visited / n).
    pub visited: u64,
    w: Vec<f64>,
    alpha: Vec<f64>,
    qd: Vec<f64>,
    upper: Vec<f64>,
    diag: Vec<f64>,
    active: Vec<usize>,
    pg_max_old: f64,
    pg_min_old: f64,
    rng: ChaCha8Rng,
    converged: bool,
    /// Unregularized bias: the intercept of the outer search, its bracket `(b, Σ α_i y_i)`, its step, and
    /// whether the pair steps have taken over.
    #[serde(default)]
    b: f64,
    #[serde(default)]
    below: Option<(f64, f64)>,
    #[serde(default)]
    above: Option<(f64, f64)>,
    #[serde(default)]
    b_step: f64,
    #[serde(default)]
    pairs: bool,
    /// How many times ε was divided by 10 because its test passed with the gap above the target.
    #[serde(default)]
    tightened: u32,
    /// The logistic loss: each dual's complement `U_i − α_i`, kept exactly (empty for the hinges).
    #[serde(default)]
    rest: Vec<f64>,
}

impl DcdState {
    /// The dual variables `α` (C-form, `0 ≤ α_i ≤ c_i C`).
    pub fn alpha(&self) -> &[f64] {
        &self.alpha
    }
}

impl Dcd {
    /// Also requires a relative duality gap of at most `target` when the projected-gradient test passes:
    /// if the exact gap (one pass) is larger, ε is divided by 10 and the passes go on from there, down to
    /// [`MIN_EPSILON`]. On badly scaled or separable data a small projected gradient can leave a gap of a few
    /// per cent (mushrooms at ε = 0.1: 6%); with a target the run stops by its own rule at a certified gap.
    pub fn with_gap_target(mut self, target: Option<f64>) -> Self {
        self.gap_target.set = target;
        self
    }

    /// ε now: the parameter, divided by 10 for each tightening.
    fn epsilon(&self, st: &DcdState) -> f64 {
        gap_target::tightened(self.params.epsilon, st.tightened)
    }

    /// At a pass whose stopping test passed: accepts it ([`gap_target::accepts`]), or divides ε by 10 and
    /// reopens every example.
    fn accept(&self, problem: &BinaryProblem<'_>, st: &mut DcdState) -> bool {
        let certify = || {
            let objective = problem.objective(&self.output(problem, st));
            let gap = self.dual_certificate(problem, st, objective).gap;
            Ok::<_, std::convert::Infallible>((objective, gap.unwrap_or(0.0)))
        };
        let Ok(done) = gap_target::accepts(self.gap_target.get(), self.epsilon(st), certify);
        if done {
            return true;
        }
        st.tightened += 1;
        st.active = (0..problem.n_samples()).collect();
        if problem.loss() != BinaryLoss::Logistic {
            // Shrinking starts again; a logistic run keeps its inner Newton tolerance, the last pass's.
            st.pg_max_old = f64::INFINITY;
            st.pg_min_old = f64::NEG_INFINITY;
        }
        false
    }

    /// A state that starts from the dual `alpha` (for example the solution at a smaller `C`), clipped into
    /// this problem's box, with `w = Σ α_i y_i x_i` rebuilt from it.
    ///
    /// # Errors
    /// [`OptimError::LengthMismatch`] when `alpha` has not one entry per example, or as [`Solver::init`].
    pub fn warm_state(
        &mut self,
        problem: &BinaryProblem<'_>,
        alpha: &[f64],
    ) -> Result<DcdState, OptimError> {
        crate::error::same_length(problem.n_samples(), alpha.len())?;
        let mut st = self.init(problem)?;
        let logistic = problem.loss() == BinaryLoss::Logistic;
        for (i, &a) in alpha.iter().enumerate() {
            let u = st.upper[i];
            st.alpha[i] = if logistic && u > 0.0 {
                let start = logistic::start_of(u);
                if a.is_finite() {
                    a.clamp(start, u - start)
                } else {
                    start
                }
            } else if a.is_finite() {
                a.clamp(0.0, u)
            } else {
                0.0
            };
            if logistic {
                st.rest[i] = u - st.alpha[i];
            }
        }
        sum_weights(problem, &st.alpha, &mut st.w);
        Ok(st)
    }

    /// LIBLINEAR's end-of-pass test: stop when the projected gradient's spread is below ε on every example;
    /// on a shrunk set, check everything again first.
    fn end_pass(&self, problem: &BinaryProblem<'_>, st: &mut DcdState, pg_max: f64, pg_min: f64) {
        // The outer search over b needs only rough inner solves; the pair steps finish to ε.
        let tolerance = if problem.bias() == Bias::Unregularized && !st.pairs {
            self.epsilon(st).max(bias::OUTER_INNER_EPSILON)
        } else {
            self.epsilon(st)
        };
        if problem.loss() == BinaryLoss::Logistic {
            // Nothing shrinks; the test is the largest |G_i| (LIBLINEAR's -s 7), and it sets the next pass's
            // inner Newton tolerance. Nothing visited (every weight zero): nothing to move, the test passes.
            let largest = logistic::largest(pg_max, pg_min);
            if largest <= tolerance {
                st.converged = self.accept(problem, st);
            } else {
                (st.pg_max_old, st.pg_min_old) = (largest, -largest);
            }
            return;
        }
        let set_aside = st.active.len() != problem.n_samples();
        match gap_target::end_of_pass(pg_max, pg_min, tolerance, set_aside) {
            PassEnd::Shrink(bounds) => (st.pg_max_old, st.pg_min_old) = bounds,
            PassEnd::Reopen => {
                st.active = (0..problem.n_samples()).collect();
                (st.pg_max_old, st.pg_min_old) = coordinate::OPEN;
            }
            PassEnd::Passed => {
                if problem.bias() == Bias::Unregularized && !self.settle_bias(problem, st) {
                    // A new intercept, or the pair steps from here: the passes go on from these duals.
                    (st.pg_max_old, st.pg_min_old) = coordinate::OPEN;
                    return;
                }
                st.converged = self.accept(problem, st);
            }
        }
    }

    /// `C = 1/(λn)`.
    fn c(problem: &BinaryProblem<'_>) -> f64 {
        maxmargin_core::objective::c_sum(problem.lambda(), problem.n_samples())
    }

    /// The box `U_i` and the diagonal `D_ii` of example `i` with weight `c_i`: `(c_i C, 0)` for the hinge,
    /// `(∞, 1/(2 c_i C))` for the squared hinge. A zero weight gives `(0, 0)`: the example is left out.
    fn box_and_diag(problem: &BinaryProblem<'_>, i: usize) -> (f64, f64) {
        box_and_diag(problem.loss(), Self::c(problem) * problem.weight(i))
    }
}

pub use crate::gap_target::MIN_EPSILON;

impl Dcd {
    /// One pass of the sequential method over the active examples in a fresh seeded permutation, shrinking
    /// those that stay at a bound; returns the projected gradient's range over the visited ones (the end of
    /// the pass, its stopping test, is the caller's: [`Solver::step`] in memory, the streamed run's working
    /// set on disk).
    fn sweep(&self, problem: &BinaryProblem<'_>, st: &mut DcdState) -> (f64, f64) {
        let (x, y) = (problem.x(), problem.y());
        let d = problem.n_features();
        let feature = problem.bias() == Bias::Feature;
        let logistic = problem.loss() == BinaryLoss::Logistic;
        st.active.shuffle(&mut st.rng);
        let (mut pg_max, mut pg_min) = (f64::NEG_INFINITY, f64::INFINITY);
        // The largest change one step made to any weight (|Δα_i|·‖x̃_i‖ bounds it).
        let mut largest_move = 0.0f64;
        let mut k = 0;
        while k < st.active.len() {
            let i = st.active[k];
            st.visited += 1;
            // Touch the next example's row and dual now, so their cache misses overlap with this step
            // (the order is random; a prefetch without `unsafe`).
            if let Some(&next) = st.active.get(k + 1) {
                let r = x.row(next);
                std::hint::black_box((
                    r.indices().first(),
                    r.values().first(),
                    st.alpha[next],
                    st.qd[next],
                ));
            }
            let (upper, diag) = (st.upper[i], st.diag[i]);
            if upper == 0.0 {
                // A zero-weight example has α_i = 0 for good.
                k += 1;
                continue;
            }
            let c = Coordinate {
                x: x.row(i),
                y: y[i],
                upper,
                diag,
                qd: st.qd[i],
            };
            if logistic {
                let duals = (st.alpha[i], st.rest[i]);
                let (v, rest) =
                    logistic::visit(&mut st.w, (d, feature, st.b), c, duals, st.pg_max_old);
                if let Visit::Kept { pg, new, .. } = v {
                    pg_max = pg_max.max(pg);
                    pg_min = pg_min.min(pg);
                    largest_move = largest_move.max((new - st.alpha[i]).abs() * st.qd[i].sqrt());
                    (st.alpha[i], st.rest[i]) = (new, rest);
                }
                k += 1;
                continue;
            }
            let shrink = (self.params.shrinking, (st.pg_max_old, st.pg_min_old));
            match visit(&mut st.w, (d, feature, st.b), c, st.alpha[i], shrink) {
                Visit::Shrunk => {
                    st.active.swap_remove(k);
                    continue;
                }
                Visit::Kept { pg, new, .. } => {
                    pg_max = pg_max.max(pg);
                    pg_min = pg_min.min(pg);
                    st.alpha[i] = new;
                }
            }
            k += 1;
        }
        if logistic {
            logistic::rebuild_after_cancellation(problem, st, largest_move);
        }
        (pg_max, pg_min)
    }
}

/// `w = Σ α_i y_i x̃_i` (the bias feature's weight last when there is one), summed in row order over the
/// nonzero duals into `w`, which is cleared first: the start from given duals and the repair of a running sum
/// that cancelled.
fn sum_weights(problem: &BinaryProblem<'_>, alpha: &[f64], w: &mut [f64]) {
    let d = problem.n_features();
    let feature = problem.bias() == Bias::Feature;
    w.iter_mut().for_each(|v| *v = 0.0);
    for (i, (&a, &y)) in alpha.iter().zip(problem.y()).enumerate() {
        if a != 0.0 {
            problem.x().row(i).axpy(a * y, &mut w[..d]);
            if feature {
                w[d] += a * y;
            }
        }
    }
}

impl<'a> Solver<BinaryProblem<'a>> for Dcd {
    type State = DcdState;

    type Output = LinearWeights;

    /// A gap target not set on the solver is the budget's gap tolerance (see `gap_target::GapTarget`).
    fn set_budget(&mut self, budget: &crate::Budget) {
        self.gap_target.adopt(budget);
    }

    fn detail(&self, p: &BinaryProblem<'a>, st: &DcdState) -> Option<StepDetail> {
        Some(crate::problem::detail(p, self.output(p, st), Vec::new()))
    }

    fn init(&mut self, problem: &BinaryProblem<'a>) -> Result<DcdState, OptimError> {
        if problem.bias() == Bias::Unregularized && self.params.blocks > 1 {
            return Err(invalid(
                "bias",
                "unregularized",
                "is not supported with blocks; use feature or none, or one block",
            ));
        }
        if problem.loss() == BinaryLoss::Logistic {
            self.refuse_logistic(problem)?;
        }
        let feature = problem.bias() == Bias::Feature;
        let (n, d) = (problem.n_samples(), problem.n_features());
        let c = maxmargin_core::objective::c_sum(problem.lambda(), self.n_total.unwrap_or(n));
        let (upper, diag): (Vec<f64>, Vec<f64>) = (0..n)
            .map(|i| box_and_diag(problem.loss(), c * problem.weight(i)))
            .unzip();
        let qd = problem
            .x()
            .rows()
            .zip(&diag)
            .map(|(r, dg)| r.norm_sq() + if feature { 1.0 } else { 0.0 } + dg)
            .collect();
        let mut w = vec![0.0; d + usize::from(feature)];
        let (alpha, rest) = if problem.loss() == BinaryLoss::Logistic {
            // The logistic duals start inside their boxes, and w = Σ α_i y_i x̃_i with them.
            let (alpha, rest) = logistic::start(&upper);
            sum_weights(problem, &alpha, &mut w);
            (alpha, rest)
        } else {
            (vec![0.0; n], Vec::new())
        };
        Ok(DcdState {
            iteration: 0,
            visited: 0,
            w,
            alpha,
            qd,
            upper,
            diag,
            active: (0..n).collect(),
            pg_max_old: f64::INFINITY,
            pg_min_old: f64::NEG_INFINITY,
            rng: crate::random::rng(self.params.seed),
            converged: false,
            b: 0.0,
            below: None,
            above: None,
            b_step: 1.0,
            pairs: false,
            tightened: 0,
            rest,
        })
    }

    /// The derived vectors must be the ones [`Solver::init`] makes of this problem, the duals finite, in
    /// their boxes, and the active set indices of distinct rows.
    fn check_state(&self, problem: &BinaryProblem<'a>, st: &DcdState) -> Result<(), OptimError> {
        let fresh = { *self }.init(problem)?;
        let n = problem.n_samples();
        fits(st.w.len() == fresh.w.len() && all_finite(&st.w), "w")?;
        fits(
            (st.qd.as_slice(), st.upper.as_slice(), st.diag.as_slice())
                == (
                    fresh.qd.as_slice(),
                    fresh.upper.as_slice(),
                    fresh.diag.as_slice(),
                ),
            "the rows' norms and boxes (a checkpoint of other data?)",
        )?;
        fits(in_boxes(&st.alpha, &st.upper, n, 1e-12), "alpha")?;
        if problem.loss() == BinaryLoss::Logistic {
            logistic::check(st, n)?;
        }
        fits(distinct_below(&st.active, n), "the active set")?;
        fits(st.b.is_finite() && st.b_step.is_finite(), "the intercept")
    }

    fn step(&mut self, problem: &BinaryProblem<'a>, st: &mut DcdState) -> Result<(), OptimError> {
        if problem.bias() == Bias::Unregularized && st.pairs {
            self.step_pairs(problem, st);
            return Ok(());
        }
        if self.params.blocks > 1 {
            self.step_blocks(problem, st);
            return Ok(());
        }
        let (pg_max, pg_min) = self.sweep(problem, st);
        st.iteration += 1;
        self.end_pass(problem, st, pg_max, pg_min);
        Ok(())
    }

    fn progress(&self, problem: &BinaryProblem<'a>, st: &DcdState) -> Progress {
        Progress {
            iteration: st.iteration,
            epoch: st.visited as f64 / problem.n_samples() as f64,
        }
    }

    fn output(&self, problem: &BinaryProblem<'a>, st: &DcdState) -> LinearWeights {
        let d = problem.n_features();
        let b = match problem.bias() {
            Bias::Feature => st.w[d],
            Bias::Unregularized if st.pairs => Self::unregularized_bias(problem, st),
            Bias::Unregularized => st.b,
            Bias::None => 0.0,
        };
        LinearWeights {
            w: st.w[..d].to_vec(),
            b,
        }
    }

    fn objective(&self, problem: &BinaryProblem<'a>, st: &DcdState) -> Result<f64, OptimError> {
        Ok(problem.objective(&self.output(problem, st)))
    }

    fn certificate(
        &self,
        problem: &BinaryProblem<'a>,
        st: &DcdState,
        objective: f64,
    ) -> Result<Certificate, OptimError> {
        Ok(self.dual_certificate(problem, st, objective))
    }

    fn stop(&self, st: &DcdState) -> Option<StopReason> {
        st.converged.then_some(StopReason::Converged)
    }
}

impl Dcd {
    /// The exact dual at `st` and its gap to `objective`, with the active set's size.
    pub(crate) fn dual_certificate(
        &self,
        problem: &BinaryProblem<'_>,
        st: &DcdState,
        objective: f64,
    ) -> Certificate {
        // D_C(α) = Σα − ½‖w‖² − ½ D Σα², and the λ-form dual is λ·D_C. With an unregularized bias the dual
        // also needs Σ α_i y_i = 0: the heavier class's duals are scaled down to balance (still in the box).
        let (alpha, w) = if problem.bias() == Bias::Unregularized && !st.pairs {
            Self::balanced(problem, st)
        } else {
            (st.alpha.clone(), st.w.clone())
        };
        let norm: f64 = w.iter().map(|v| v * v).sum();
        let dual = if problem.loss() == BinaryLoss::Logistic {
            // D_C(α) = Σ U_i H(α_i/U_i) − ½‖w‖², H the binary entropy.
            let entropy = logistic::entropy(&alpha, &st.rest, &st.upper);
            problem.lambda() * (entropy - 0.5 * norm)
        } else {
            let quad: f64 = alpha.iter().zip(&st.diag).map(|(a, d)| d * a * a).sum();
            problem.lambda() * (alpha.iter().sum::<f64>() - 0.5 * norm - 0.5 * quad)
        };
        Certificate {
            active_constraints: Some(st.active.len()),
            ..Certificate::of_dual(objective, dual)
        }
    }
}

mod bias;
mod blocks;
mod bound;
pub(crate) mod coordinate;
mod distributed;
mod logistic;
pub(crate) mod stream;
pub(crate) use coordinate::box_and_diag;
use coordinate::{Coordinate, Visit, visit};
pub use distributed::DcdRanks;

pub use bound::dual_bound;
