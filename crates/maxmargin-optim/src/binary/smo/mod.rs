//! Kernel SVMs by sequential minimal optimization with second-order working-set selection (Fan, Chen & Lin,
//! JMLR 2005; the method of LIBSVM, whose paper and design this follows, written here).
//!
//! The C-form dual is `min_α ½αᵀQα − Σα_i` over `0 ≤ α_i ≤ U_i` (`U_i = c_i C`, `C = 1/(λn)`) and
//! `Σ y_i α_i = 0`, with `Q_ij = y_i y_j K(x_i, x_j)` and the decision `f(x) = Σ α_i y_i K(x_i, x) + b`, `b`
//! unregularized. The gradient `G = Qα − e` is kept. Each iteration picks `i` in
//! `I_up = {t : α_t < U_t, y_t = 1} ∪ {t : α_t > 0, y_t = −1}` with the largest `−y_t G_t`, then `j` in
//! `I_low` (the mirror set) with `−y_j G_j < −y_i G_i` minimizing `−b_ij²/a_ij`, `b_ij = −y_i G_i + y_j G_j`,
//! `a_ij = K_ii + K_jj − 2K_ij` (a small τ when not positive), the second-order decrease of the pair. The
//! pair moves along `α_i += y_i δ, α_j −= y_j δ`, which keeps `Σ y α`, with `δ = b_ij/a_ij` clipped to both
//! boxes, and `G_t += y_t (K_ti − K_tj) δ`.
//!
//! It stops when `max_{I_up} −yG − min_{I_low} −yG ≤ ε` (LIBSVM's `-e`, 10⁻³) and, with a gap target, the
//! exact duality gap is within it (else ε is divided by 10, as DCD does). The certificate is exact and
//! costs `O(n)` from `G`: `αᵀQα = Σ α_i(G_i + 1)`, `y_i f(x_i) = G_i + 1 + y_i b`, so the primal
//! `½αᵀQα + Σ U_i max(0, −G_i − y_i b)` and the dual `Σα − ½αᵀQα` (times λ for the λ-form) are sums.
//! `b` is LIBSVM's: the mean of `−y_t G_t` over free examples, else the middle of the bounds' range.
//!
//! Kernel rows come from an LRU cache bounded by [`SmoParams::cache_mb`], computed in parallel; the result
//! does not depend on the thread count. A step is [`STEP_ITERATIONS`] iterations (`n` on fewer examples: one
//! "pass"), so budgets of time, passes and iterations and periodic checkpoints are honoured within a pass
//! on large sets, where a pass of kernel rows takes seconds.
//!
//! **Shrinking** (LIBSVM's heuristic, Fan, Chen & Lin 2005 §5): every `min(n/4, 1000)` iterations the examples
//! at a bound whose gradient says they will stay there (`be_shrunk`: at the bound that `I_up` or `I_low`
//! excludes, with `−y G` beyond the other set's extreme) leave the working-set scans. Unlike LIBSVM, which
//! lets shrunk examples back once (at a violation within `10ε`), each shrinking judges every example
//! against the extremes over all of them, so an example shrunk too early comes back at the next one; a
//! stopping test passed on the shrunk set is checked again on all of them. The gradient is still kept for
//! every example (so nothing is reconstructed and the certificate stays exact); what shrinks is the two
//! `O(n)` scans per iteration, which dominate when kernel rows are cheap or cached. The active set and its
//! countdown are part of the state, so a checkpoint (taken between steps) resumes the same bits.
//!
//! **Face steps**: where pair updates crawl along a flat face of the dual (a low-rank kernel, a large `C`),
//! each shrinking of a long run also takes a conjugate-gradient step over the free examples (`face.rs`).

use crate::error::{OptimError, all_finite, check_epsilon, fits, in_boxes, invalid};
use crate::trainer::{Certificate, Progress, Solver, StopReason};
use maxmargin_core::kernel::Kernel;
use maxmargin_core::objective::Lambda;
use maxmargin_core::vector::SparseRows;
use serde::{Deserialize, Serialize};

mod cache;
mod face;
pub mod multiclass;
mod shrink;
use cache::KernelCache;
use shrink::{Shrinking, shrink_every};

/// A kernel SVM problem: rows, ±1 targets, λ, the kernel and per-example weights on the loss.
#[derive(Debug, Clone)]
pub struct KernelProblem<'a> {
    /// The rows, targets, λ and weights, as a linear problem with an unregularized intercept holds them.
    data: crate::BinaryProblem<'a>,
    kernel: Kernel,
    norms: Vec<f64>,
}

impl<'a> KernelProblem<'a> {
    /// Checks and bundles a problem.
    ///
    /// # Errors
    /// As [`crate::BinaryProblem::new`], or [`OptimError::InvalidParam`] for a bad kernel parameter.
    pub fn new(
        x: &'a SparseRows,
        y: &'a [f64],
        lambda: Lambda,
        kernel: Kernel,
    ) -> Result<Self, OptimError> {
        let data = crate::BinaryProblem::new(x, y, lambda, crate::Bias::Unregularized)?;
        kernel
            .check()
            .map_err(|(name, value, reason)| invalid(name, value, reason))?;
        let norms = x.rows().map(|r| r.norm_sq()).collect();
        Ok(Self {
            data,
            kernel,
            norms,
        })
    }

    /// Per-example weights `c_i ≥ 0` on the loss.
    ///
    /// # Errors
    /// As [`crate::BinaryProblem::with_example_weights`].
    pub fn with_example_weights(mut self, c: &'a [f64]) -> Result<Self, OptimError> {
        self.data = self.data.with_example_weights(c)?;
        Ok(self)
    }

    /// The kernel.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// The rows, targets, λ and weights (`x()`, `y()`, `lambda()`, `n_samples()`).
    pub fn data(&self) -> &crate::BinaryProblem<'a> {
        &self.data
    }

    fn weight(&self, i: usize) -> f64 {
        self.data.weight(i)
    }

    /// `C = 1/(λn)`.
    fn c(&self) -> f64 {
        maxmargin_core::objective::c_sum(self.data.lambda(), self.data.n_samples())
    }

    fn kernel_diag(&self, i: usize) -> f64 {
        self.kernel.self_value(self.norms[i])
    }
}

/// Unchecked SMO parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SmoParams {
    /// Stop when `max_{I_up} −yG − min_{I_low} −yG` is below this (LIBSVM's `-e`, 10⁻³).
    pub epsilon: f64,
    /// Megabytes of kernel rows kept (LIBSVM's `-m`, 100).
    pub cache_mb: f64,
}

impl Default for SmoParams {
    fn default() -> Self {
        Self {
            epsilon: 1e-3,
            cache_mb: 100.0,
        }
    }
}

impl SmoParams {
    /// Checks the parameters.
    ///
    /// # Errors
    /// [`OptimError::InvalidParam`] for a bad ε or cache size.
    pub fn check(self) -> Result<Smo, OptimError> {
        check_epsilon(self.epsilon)?;
        if !(self.cache_mb.is_finite() && self.cache_mb > 0.0) {
            return Err(invalid("cache-mb", self.cache_mb, "must be finite and > 0"));
        }
        Ok(Smo {
            params: self,
            gap_target: crate::gap_target::GapTarget::default(),
            cache: KernelCache::default(),
            scanned: 0,
        })
    }
}

/// Checked SMO, with its kernel cache.
#[derive(Debug)]
pub struct Smo {
    params: SmoParams,
    gap_target: crate::gap_target::GapTarget,
    cache: KernelCache,
    /// Examples the working-set scans visited, over the run.
    scanned: u64,
}

/// Iterations in a step on large sets (a step is `n` iterations on fewer examples).
pub const STEP_ITERATIONS: usize = 1000;

/// SMO's state: the duals and the gradient (the kernel cache is rebuilt on demand).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SmoState {
    /// Iterations (pair updates) so far.
    pub iteration: u64,
    alpha: Vec<f64>,
    grad: Vec<f64>,
    upper: Vec<f64>,
    converged: bool,
    tightened: u32,
    #[serde(default)]
    shrink: Shrinking,
}

impl SmoState {
    /// The duals `α` (C-form, `0 ≤ α_i ≤ c_i C`).
    pub fn alpha(&self) -> &[f64] {
        &self.alpha
    }
}

/// The decision function of a kernel SVM: `f(x) = Σ_i coef_i K(x_i, x) + b`, `coef_i = α_i y_i` over every
/// training row (zero off the support vectors).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelWeights {
    /// `α_i y_i` for every training row.
    pub coef: Vec<f64>,
    /// The intercept.
    pub b: f64,
}

/// `a_ij` below this is replaced by it (LIBSVM's τ).
const TAU: f64 = 1e-12;

impl Smo {
    /// Also requires a relative duality gap of at most `target` when the ε test passes (see
    /// [`crate::Dcd::with_gap_target`]).
    pub fn with_gap_target(mut self, target: Option<f64>) -> Self {
        self.gap_target.set = target;
        self
    }

    /// Kernel rows computed so far (cache misses).
    pub fn rows_computed(&self) -> u64 {
        self.cache.computed
    }

    /// Examples the working-set selection has looked at so far (shrinking makes it fewer than iterations
    /// times examples).
    pub fn examples_scanned(&self) -> u64 {
        self.scanned
    }

    fn epsilon(&self, st: &SmoState) -> f64 {
        crate::gap_target::tightened(self.params.epsilon, st.tightened)
    }

    /// `(I_up, I_low)` membership of example `t`.
    #[inline]
    fn sets(y: f64, a: f64, u: f64) -> (bool, bool) {
        let (below, above) = (a < u, a > 0.0);
        if y > 0.0 {
            (below, above)
        } else {
            (above, below)
        }
    }

    /// LIBSVM's intercept: `−ρ`, `ρ` the mean of `y_t G_t` over free examples, else the middle of the range
    /// the bounded ones leave.
    fn intercept(problem: &KernelProblem<'_>, st: &SmoState) -> f64 {
        let (mut ub, mut lb) = (f64::INFINITY, f64::NEG_INFINITY);
        let (mut sum, mut free) = (0.0, 0usize);
        for t in 0..problem.data.n_samples() {
            let (y, a, u) = (problem.data.y()[t], st.alpha[t], st.upper[t]);
            if u == 0.0 {
                continue;
            }
            let yg = y * st.grad[t];
            if a >= u {
                if y < 0.0 {
                    ub = ub.min(yg);
                } else {
                    lb = lb.max(yg);
                }
            } else if a <= 0.0 {
                if y > 0.0 {
                    ub = ub.min(yg);
                } else {
                    lb = lb.max(yg);
                }
            } else {
                sum += yg;
                free += 1;
            }
        }
        let rho = if free > 0 {
            sum / free as f64
        } else if ub.is_finite() && lb.is_finite() {
            0.5 * (ub + lb)
        } else if ub.is_finite() {
            ub
        } else if lb.is_finite() {
            lb
        } else {
            0.0
        };
        -rho
    }

    /// The λ-form primal and dual from the gradient.
    fn primal_dual(problem: &KernelProblem<'_>, st: &SmoState) -> (f64, f64) {
        let b = Self::intercept(problem, st);
        let (mut quad, mut sum, mut loss) = (0.0, 0.0, 0.0);
        for t in 0..problem.data.n_samples() {
            let (a, g, y) = (st.alpha[t], st.grad[t], problem.data.y()[t]);
            quad += a * (g + 1.0);
            sum += a;
            loss += st.upper[t] * (-g - y * b).max(0.0);
        }
        let l = problem.data.lambda();
        (l * (0.5 * quad + loss), l * (sum - 0.5 * quad))
    }

    /// At an iteration whose ε test passed: accepts it or tightens ε.
    fn accept(&self, problem: &KernelProblem<'_>, st: &mut SmoState) -> bool {
        let certify = || {
            let (p, d) = Self::primal_dual(problem, st);
            Ok::<_, std::convert::Infallible>((p, p - d))
        };
        let Ok(done) = crate::gap_target::accepts(self.gap_target.get(), self.epsilon(st), certify);
        if !done {
            st.tightened += 1;
        }
        done
    }

    /// The pair of the working set over the active examples: `i` (the largest `−y G` over `I_up`, `m`), `j`
    /// (the best second-order decrease over `I_low` below `m`) and `M` (the smallest `−y G` over `I_low`);
    /// `None` for `i` when nothing in `I_up` is active.
    fn select(
        &mut self,
        problem: &KernelProblem<'_>,
        st: &SmoState,
    ) -> (Option<(usize, f64)>, usize, f64) {
        let y = problem.data.y();
        self.scanned += st.shrink.active.len() as u64;
        let (mut i, mut m) = (usize::MAX, f64::NEG_INFINITY);
        for &t in &st.shrink.active {
            let (up, _) = Self::sets(y[t], st.alpha[t], st.upper[t]);
            let v = -y[t] * st.grad[t];
            if up && v > m {
                (i, m) = (t, v);
            }
        }
        if i == usize::MAX {
            return (None, usize::MAX, f64::INFINITY);
        }
        let data = (problem.data.x(), problem.norms.as_slice(), problem.kernel);
        let kii = problem.kernel_diag(i);
        let row_i = self.cache.row(data, i);
        let (mut j, mut best, mut big_m) = (usize::MAX, f64::INFINITY, f64::INFINITY);
        for &t in &st.shrink.active {
            let (_, low) = Self::sets(y[t], st.alpha[t], st.upper[t]);
            if !low {
                continue;
            }
            let v = -y[t] * st.grad[t];
            big_m = big_m.min(v);
            let b = m - v;
            if b > 0.0 {
                let a = kii + problem.kernel_diag(t) - 2.0 * row_i[t];
                let score = -(b * b) / if a > 0.0 { a } else { TAU };
                if score < best {
                    (j, best) = (t, score);
                }
            }
        }
        (Some((i, m)), j, big_m)
    }

    /// One SMO iteration; `true` when the stopping test ended the run.
    fn iterate(&mut self, problem: &KernelProblem<'_>, st: &mut SmoState) -> bool {
        let (y, n) = (problem.data.y(), problem.data.n_samples());
        if st.iteration.is_multiple_of(shrink_every(n) as u64) {
            self.face_step(problem, st);
        }
        st.shrink.countdown = st.shrink.countdown.saturating_sub(1);
        if st.shrink.countdown == 0 {
            st.shrink.countdown = shrink_every(n);
            self.shrink_active(problem, st);
        }
        let (mut picked, mut j, mut big_m) = self.select(problem, st);
        let passed = |picked: Option<(usize, f64)>, j: usize, big_m: f64| {
            picked.is_none_or(|(_, m)| m - big_m <= self.epsilon(st) || j == usize::MAX)
        };
        if passed(picked, j, big_m) && st.shrink.active.len() < n {
            // Passed on the shrunk set: every example back, and the test again over all of them.
            st.shrink.active = (0..n).collect();
            st.shrink.countdown = 1;
            (picked, j, big_m) = self.select(problem, st);
        }
        let Some((i, m)) = picked else {
            // Nothing can move (every example at a bound that holds it, or no weight).
            return self.accept(problem, st);
        };
        if m - big_m <= self.epsilon(st) || j == usize::MAX {
            return self.accept(problem, st);
        }
        let data = (problem.data.x(), problem.norms.as_slice(), problem.kernel);
        let kii = problem.kernel_diag(i);
        let (row_i, row_j) = self.cache.pair(data, i, j);
        let a = kii + problem.kernel_diag(j) - 2.0 * row_i[j];
        let b = m - (-y[j] * st.grad[j]);
        let step = b / if a > 0.0 { a } else { TAU };
        // Room along the direction in each box.
        let room_i = if y[i] > 0.0 {
            st.upper[i] - st.alpha[i]
        } else {
            st.alpha[i]
        };
        let room_j = if y[j] > 0.0 {
            st.alpha[j]
        } else {
            st.upper[j] - st.alpha[j]
        };
        let delta = step.min(room_i).min(room_j);
        // A clipped move lands exactly on the bound.
        st.alpha[i] = if delta == room_i {
            if y[i] > 0.0 { st.upper[i] } else { 0.0 }
        } else {
            st.alpha[i] + y[i] * delta
        };
        st.alpha[j] = if delta == room_j {
            if y[j] > 0.0 { 0.0 } else { st.upper[j] }
        } else {
            st.alpha[j] - y[j] * delta
        };
        for (((g, &yt), &ki), &kj) in st.grad.iter_mut().zip(y).zip(row_i).zip(row_j) {
            *g += yt * (ki - kj) * delta;
        }
        false
    }
}

impl<'a> Solver<KernelProblem<'a>> for Smo {
    type State = SmoState;
    type Output = KernelWeights;

    /// A gap target not set on the solver is the budget's gap tolerance (see `gap_target::GapTarget`).
    fn set_budget(&mut self, budget: &crate::Budget) {
        self.gap_target.adopt(budget);
    }

    fn init(&mut self, problem: &KernelProblem<'a>) -> Result<SmoState, OptimError> {
        let n = problem.data.n_samples();
        self.cache = KernelCache::new(n, self.params.cache_mb * 1024.0 * 1024.0);
        let c = problem.c();
        let upper: Vec<f64> = (0..n).map(|i| c * problem.weight(i)).collect();
        if let Some(bad) = upper.iter().find(|u| !u.is_finite()) {
            return Err(invalid(
                "C",
                *bad,
                "is too large for this data (C·weight overflows)",
            ));
        }
        Ok(SmoState {
            iteration: 0,
            alpha: vec![0.0; n],
            grad: vec![-1.0; n],
            upper,
            converged: false,
            tightened: 0,
            shrink: Shrinking::all(n),
        })
    }

    /// The boxes must be this problem's, the duals finite and in them, the gradient finite.
    fn check_state(&self, problem: &KernelProblem<'a>, st: &SmoState) -> Result<(), OptimError> {
        let n = problem.data.n_samples();
        let c = problem.c();
        fits(
            st.upper.len() == n && (0..n).all(|i| st.upper[i] == c * problem.weight(i)),
            "the boxes (a checkpoint of other data?)",
        )?;
        fits(in_boxes(&st.alpha, &st.upper, n, 0.0), "alpha")?;
        fits(st.grad.len() == n && all_finite(&st.grad), "the gradient")?;
        let balance: f64 = st
            .alpha
            .iter()
            .zip(problem.data.y())
            .map(|(a, y)| a * y)
            .sum();
        let scale: f64 = st.upper.iter().sum::<f64>().max(1.0);
        fits(
            balance.abs() <= 1e-9 * scale,
            "alpha (sum of y_i alpha_i is not 0)",
        )?;
        let active = &st.shrink.active;
        fits(
            st.shrink.countdown <= shrink_every(n)
                && active.windows(2).all(|w| w[0] < w[1])
                && active.last().is_none_or(|&t| t < n),
            "the active examples",
        )
    }

    fn step(&mut self, problem: &KernelProblem<'a>, st: &mut SmoState) -> Result<(), OptimError> {
        if self.cache.capacity_rows() == 0 {
            // A resumed run: the cache is built on the first step.
            self.cache = KernelCache::new(
                problem.data.n_samples(),
                self.params.cache_mb * 1024.0 * 1024.0,
            );
        }
        // A fresh run (or a checkpoint of a build that kept shrinking per step) starts with every example.
        if st.shrink.countdown == 0 {
            st.shrink = Shrinking::all(problem.data.n_samples());
        }
        for _ in 0..problem.data.n_samples().clamp(1, STEP_ITERATIONS) {
            st.iteration += 1;
            if self.iterate(problem, st) {
                st.converged = true;
                break;
            }
        }
        Ok(())
    }

    fn progress(&self, problem: &KernelProblem<'a>, st: &SmoState) -> Progress {
        Progress {
            iteration: st.iteration,
            epoch: st.iteration as f64 / problem.data.n_samples().max(1) as f64,
        }
    }

    fn output(&self, problem: &KernelProblem<'a>, st: &SmoState) -> KernelWeights {
        KernelWeights {
            coef: st
                .alpha
                .iter()
                .zip(problem.data.y())
                .map(|(a, y)| a * y)
                .collect(),
            b: Self::intercept(problem, st),
        }
    }

    fn objective(&self, problem: &KernelProblem<'a>, st: &SmoState) -> Result<f64, OptimError> {
        Ok(Self::primal_dual(problem, st).0)
    }

    fn certificate(
        &self,
        problem: &KernelProblem<'a>,
        st: &SmoState,
        objective: f64,
    ) -> Result<Certificate, OptimError> {
        let (_, dual) = Self::primal_dual(problem, st);
        let support = st.alpha.iter().filter(|&&a| a > 0.0).count();
        Ok(Certificate {
            active_constraints: Some(support),
            ..Certificate::of_dual(objective, dual)
        })
    }

    fn stop(&self, st: &SmoState) -> Option<StopReason> {
        st.converged.then_some(StopReason::Converged)
    }
}
