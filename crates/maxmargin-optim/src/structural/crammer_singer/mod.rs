//! The Crammer–Singer multiclass SVM by sequential dual coordinate descent over examples (Keerthi, Sundararajan,
//! Chang, Hsieh, Lin 2008; LIBLINEAR's `-s 4`), on a [`StructProblem`] over a [`MulticlassSpace`].
//!
//! The primal is the structural one, `λ/2‖W‖² + (1/n)Σ_i max_m [Δ(y_i, m) + ⟨w_m, x_i⟩ − ⟨w_{y_i}, x_i⟩]`, with
//! any cost matrix whose diagonal is zero (the 0-1 loss is Crammer and Singer's). With `C = 1/(λn)` its dual
//! has one block `α_i ∈ ℝ^K` per example: `Σ_m α_i^m = 0`, `α_i^m ≤ C·[m = y_i]`, `w_m = Σ_i α_i^m x_i`, and
//! maximizes `D(α) = −½‖W‖² − Σ_i Σ_m Δ(y_i, m) α_i^m`. A step solves example `i`'s block exactly: with
//! `A = ‖x_i‖²`, `B_m = ⟨w_m, x_i⟩ + Δ(y_i, m) − A α_i^m` and `D_m = B_m + A C [m = y_i]`, the new block is
//! `α_i^m = (min(D_m, β) − B_m)/A` where `β` solves `Σ_m max(0, D_m − β) = A C` (the `D_m` sorted once, `O(K log K)`).
//!
//! The weights are kept feature-major (`w[j K + m]`) so that the `K` scores of an example take one walk over
//! its non-zeros; [`Solver::output`] returns them in the space's layout (class-major unless the space is
//! [`MulticlassSpace::feature_major`]). The violation of block `i` is
//! `max_m G_m − min_{m: α_i^m < C[m = y_i]} G_m` with `G_m = ⟨w_m, x_i⟩ + Δ(y_i, m)`; a pass stops the run when
//! every violation is below `epsilon` (LIBLINEAR's test and default, 0.1). Shrinking works per class, as in
//! Keerthi et al.: a class at its bound whose `G_m` is below every free class's stays at the bound and leaves
//! the example's block (its score is no longer computed), and an example with one class left leaves the pass.
//! The shrinking tolerance starts at `max(10ε, 1)` and halves each time the shrunk problem is solved, and
//! everything is checked again before stopping. The duality gap is exact and reported.

use crate::error::{OptimError, all_finite, check_epsilon, distinct_below, fits, invalid};
use crate::structural::problem::StructProblem;
use crate::trainer::{Certificate, Progress, Solver, StopReason};
use maxmargin_struct::{MulticlassSpace, OutputSpace};
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Unchecked Crammer–Singer DCD parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CrammerSingerParams {
    /// Stop when every block's violation is below this (LIBLINEAR's `-e`, 0.1).
    pub epsilon: f64,
    /// Shrink examples that are safely outside the margin.
    pub shrinking: bool,
    /// The seed of the permutations.
    pub seed: u64,
}

impl Default for CrammerSingerParams {
    fn default() -> Self {
        Self {
            epsilon: 0.1,
            shrinking: true,
            seed: 0,
        }
    }
}

impl CrammerSingerParams {
    /// Checks the parameters.
    ///
    /// # Errors
    /// [`OptimError::InvalidParam`] for a bad ε.
    pub fn check(self) -> Result<CrammerSinger, OptimError> {
        check_epsilon(self.epsilon)?;
        Ok(CrammerSinger {
            params: self,
            class_weights: Vec::new(),
            example_weights: Vec::new(),
            gap_target: crate::gap_target::GapTarget::default(),
            n_total: None,
        })
    }
}

/// Checked Crammer–Singer DCD.
#[derive(Debug, Clone, PartialEq)]
pub struct CrammerSinger {
    params: CrammerSingerParams,
    class_weights: Vec<f64>,
    example_weights: Vec<f64>,
    gap_target: crate::gap_target::GapTarget,
    /// Over ranks: the whole problem's example count, for `C = 1/(λn)` (`None`: this problem's).
    n_total: Option<usize>,
}

impl CrammerSinger {
    /// Class weights, one per class (LIBLINEAR's `-wi`): the losses of class `m`'s examples count
    /// `weights[m]` times, so their dual box is `weights[m]·C`. Empty: every class weighs 1.
    ///
    /// # Errors
    /// [`OptimError::InvalidParam`] for a negative or non-finite weight.
    pub fn with_class_weights(mut self, weights: Vec<f64>) -> Result<Self, OptimError> {
        if let Some(bad) = weights.iter().find(|v| !(v.is_finite() && **v >= 0.0)) {
            return Err(invalid("class weight", bad, "must be finite and >= 0"));
        }
        self.class_weights = weights;
        Ok(self)
    }

    /// Example weights, one per example (a row's loss counts `weights[i]` times, on top of its class's
    /// weight), so example `i`'s dual box is `weights[i]·c_{y_i}·C`. Empty: every example weighs 1.
    ///
    /// # Errors
    /// [`OptimError::InvalidParam`] for a negative or non-finite weight.
    pub fn with_example_weights(mut self, weights: Vec<f64>) -> Result<Self, OptimError> {
        if let Some(bad) = weights.iter().find(|v| !(v.is_finite() && **v >= 0.0)) {
            return Err(invalid("example weight", bad, "must be finite and >= 0"));
        }
        self.example_weights = weights;
        Ok(self)
    }

    /// Also requires a relative duality gap of at most `target` when the violation test passes: if the
    /// exact gap (one oracle pass) is larger, ε is divided by 10 and the passes go on, down to
    /// [`crate::dcd::MIN_EPSILON`] (as [`crate::Dcd::with_gap_target`]).
    pub fn with_gap_target(mut self, target: Option<f64>) -> Self {
        self.gap_target.set = target;
        self
    }

    /// ε now: the parameter, divided by 10 for each tightening.
    fn epsilon(&self, st: &CrammerSingerState) -> f64 {
        crate::gap_target::tightened(self.params.epsilon, st.tightened)
    }

    /// The weight of example `i` of class `y` (1 without weights).
    fn weight(&self, i: usize, y: usize) -> f64 {
        self.class_weights.get(y).copied().unwrap_or(1.0)
            * self.example_weights.get(i).copied().unwrap_or(1.0)
    }
}

/// Crammer–Singer DCD state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrammerSingerState {
    /// Passes over the active examples.
    pub iteration: u64,
    /// Blocks visited (for passes = visited / n).
    pub visited: u64,
    /// Feature-major weights `w[j K + m]`.
    w: Vec<f64>,
    /// Example-major duals `α[i K + m]`.
    alpha: Vec<f64>,
    /// `Δ(y, m)` as a `K × K` table.
    cost: Vec<f64>,
    /// `‖x_i‖²`.
    sq: Vec<f64>,
    /// Examples in the pass.
    active: Vec<usize>,
    /// Each example's classes, the active ones first (`order[i K..i K + n_active[i]]`).
    order: Vec<u32>,
    /// Active classes per example.
    n_active: Vec<u32>,
    eps_shrink: f64,
    start_from_all: bool,
    rng: ChaCha8Rng,
    converged: bool,
    /// How many times ε was divided by 10 because its test passed with the gap above the target.
    #[serde(default)]
    tightened: u32,
}

impl CrammerSingerState {
    /// The duals, example-major: `alpha()[i K + m] = α_i^m` (C-form).
    pub fn alpha(&self) -> &[f64] {
        &self.alpha
    }
}

/// `Δ(y, m)` from the table, or the 0-1 loss when the table is empty.
#[inline]
fn cost_at(cost: &[f64], k: usize, y: usize, m: usize) -> f64 {
    if cost.is_empty() {
        if y == m { 0.0 } else { 1.0 }
    } else {
        cost[y * k + m]
    }
}

impl CrammerSinger {
    /// `C = 1/(λn)`, with the whole problem's `n` over ranks.
    fn c_of(&self, problem: &StructProblem<'_, MulticlassSpace>) -> f64 {
        let n = self.n_total.unwrap_or(problem.n_samples());
        maxmargin_core::objective::c_sum(problem.lambda(), n)
    }
}

/// `β` with `Σ_m max(0, D_m − β) = budget`, from the `D_m` sorted in decreasing order (`budget > 0`).
fn threshold(sorted: &[f64], budget: f64) -> f64 {
    let mut sum = sorted[0] - budget;
    let mut r = 1;
    while r < sorted.len() && sum < r as f64 * sorted[r] {
        sum += sorted[r];
        r += 1;
    }
    sum / r as f64
}

impl CrammerSinger {
    /// At a pass whose stopping test passed: accepts it, or divides ε by 10 (see
    /// [`CrammerSinger::with_gap_target`]).
    fn accept(
        &self,
        problem: &StructProblem<'_, MulticlassSpace>,
        st: &mut CrammerSingerState,
    ) -> bool {
        // An objective that cannot be valued accepts the pass: the trainer's evaluation reports the error.
        let done = crate::gap_target::accepts(self.gap_target.get(), self.epsilon(st), || {
            let objective = self.objective(problem, st)?;
            let gap = self.dual_certificate(problem, st, objective).gap;
            Ok::<_, OptimError>((objective, gap.unwrap_or(0.0)))
        })
        .unwrap_or(true);
        if !done {
            st.tightened += 1;
        }
        done
    }
}

impl<'a> Solver<StructProblem<'a, MulticlassSpace>> for CrammerSinger {
    type State = CrammerSingerState;
    type Output = Vec<f64>;

    /// A gap target not set on the solver is the budget's gap tolerance (see `gap_target::GapTarget`).
    fn set_budget(&mut self, budget: &crate::Budget) {
        self.gap_target.adopt(budget);
    }

    fn init(
        &mut self,
        problem: &StructProblem<'a, MulticlassSpace>,
    ) -> Result<CrammerSingerState, OptimError> {
        problem.require_margin("the crammer-singer dual")?;
        let space = problem.space();
        let k = space.n_classes();
        // The 0-1 loss stays implicit (an empty table): nothing here is quadratic in the classes then.
        let mut cost = Vec::new();
        if !space.costs().is_zero_one() {
            cost = vec![0.0; k * k];
            for y in 0..k {
                for m in 0..k {
                    cost[y * k + m] = space.loss(&(y as u32), &(m as u32));
                }
                if cost[y * k + y] != 0.0 {
                    return Err(invalid(
                        "cost matrix",
                        cost[y * k + y],
                        "must have a zero diagonal for the Crammer-Singer dual",
                    ));
                }
            }
        }
        let d = problem.dim() / k;
        let n = problem.n_samples();
        let sq: Vec<f64> = problem.x().iter().map(|x| x.as_row().norm_sq()).collect();
        // An example with x_i = 0 has a linear dual block: its optimum puts C on its class and −C on the
        // class of largest cost (the primal's hinge there is that cost), and w does not move. The steps below
        // skip such blocks, so they are set here once, which keeps the certified gap exact.
        if !self.class_weights.is_empty() && self.class_weights.len() != k {
            return Err(OptimError::LengthMismatch {
                rows: k,
                targets: self.class_weights.len(),
            });
        }
        if !self.example_weights.is_empty() && self.example_weights.len() != n {
            return Err(OptimError::LengthMismatch {
                rows: n,
                targets: self.example_weights.len(),
            });
        }
        let mut alpha = vec![0.0; n * k];
        for (i, (&s, &y)) in sq.iter().zip(problem.y()).enumerate() {
            let y = y as usize;
            let c = self.c_of(problem) * self.weight(i, y);
            if s > 0.0 || c <= 0.0 {
                continue;
            }
            let at = |m: usize| cost_at(&cost, k, y, m);
            let worst = (0..k)
                .filter(|&m| m != y)
                .max_by(|&a, &b| at(a).total_cmp(&at(b)).then(b.cmp(&a)));
            if let Some(m) = worst
                && at(m) > 0.0
            {
                alpha[i * k + y] = c;
                alpha[i * k + m] = -c;
            }
        }
        Ok(CrammerSingerState {
            iteration: 0,
            visited: 0,
            w: vec![0.0; d * k],
            alpha,
            cost,
            sq,
            active: (0..n).collect(),
            order: (0..n).flat_map(|_| 0..k as u32).collect(),
            n_active: vec![k as u32; n],
            eps_shrink: (10.0 * self.params.epsilon).max(1.0),
            start_from_all: true,
            rng: crate::random::rng(self.params.seed),
            converged: false,
            tightened: 0,
        })
    }

    /// The derived vectors must be the ones [`Solver::init`] makes of this problem, the duals finite, and
    /// every index (active examples, each example's class order and count) in range.
    fn check_state(
        &self,
        problem: &StructProblem<'a, MulticlassSpace>,
        st: &CrammerSingerState,
    ) -> Result<(), OptimError> {
        let fresh = self.clone().init(problem)?;
        let (n, k) = (problem.n_samples(), problem.space().n_classes());
        fits(st.w.len() == fresh.w.len() && all_finite(&st.w), "w")?;
        fits(
            (st.cost.as_slice(), st.sq.as_slice()) == (fresh.cost.as_slice(), fresh.sq.as_slice()),
            "the rows' norms and costs (a checkpoint of other data?)",
        )?;
        fits(st.alpha.len() == n * k && all_finite(&st.alpha), "alpha")?;
        fits(distinct_below(&st.active, n), "the active set")?;
        fits(
            st.order.len() == n * k
                && st.order.iter().all(|&m| (m as usize) < k)
                && st.n_active.len() == n
                && st.n_active.iter().all(|&a| a as usize <= k),
            "the classes' order",
        )?;
        fits(st.eps_shrink.is_finite(), "the shrinking tolerance")
    }

    fn step(
        &mut self,
        problem: &StructProblem<'a, MulticlassSpace>,
        st: &mut CrammerSingerState,
    ) -> Result<(), OptimError> {
        let k = problem.space().n_classes();
        let c_base = self.c_of(problem);
        let (xs, ys) = (problem.x(), problem.y());
        st.active.shuffle(&mut st.rng);
        // Scratch, indexed by position in the example's class order.
        let mut g = vec![0.0; k];
        let mut b = vec![0.0; k];
        let mut dd = vec![0.0; k];
        let mut sorted = vec![0.0; k];
        // The classes whose dual moved, with their steps (usually two or three of the K).
        let mut moved: Vec<(usize, f64)> = Vec::with_capacity(k);
        let mut violation_max: f64 = 0.0;
        let mut idx = 0;
        while idx < st.active.len() {
            let i = st.active[idx];
            st.visited += 1;
            // Touch the next example's rows and duals now, so their cache misses overlap with this
            // example's work (the visiting order is random; this is a prefetch without `unsafe`).
            if let Some(&next) = st.active.get(idx + 1) {
                let row = xs[next].as_row();
                std::hint::black_box((
                    row.indices().first(),
                    row.indices().last(),
                    st.alpha[next * k],
                    st.alpha[next * k + k - 1],
                    st.order[next * k],
                ));
            }
            let (x, y, a_sq) = (xs[i].as_row(), ys[i] as usize, st.sq[i]);
            let c = c_base * self.weight(i, y);
            let cost = &st.cost;
            let order = &mut st.order[i * k..(i + 1) * k];
            let alpha = &mut st.alpha[i * k..(i + 1) * k];
            let mut act = st.n_active[i] as usize;
            for p in 0..act {
                g[p] = cost_at(cost, k, y, order[p] as usize);
            }
            for (j, v) in x.iter() {
                let w = &st.w[j * k..(j + 1) * k];
                for p in 0..act {
                    g[p] += v * w[order[p] as usize];
                }
            }
            let bound = |m: usize| if m == y { c } else { 0.0 };
            let (mut max_g, mut min_g) = (f64::NEG_INFINITY, f64::INFINITY);
            for p in 0..act {
                let m = order[p] as usize;
                max_g = max_g.max(g[p]);
                if alpha[m] < bound(m) {
                    min_g = min_g.min(g[p]);
                }
            }
            if self.params.shrinking {
                let mut p = 0;
                while p < act {
                    let m = order[p] as usize;
                    if alpha[m] == bound(m) && g[p] < min_g {
                        act -= 1;
                        order.swap(p, act);
                        g.swap(p, act);
                    } else {
                        p += 1;
                    }
                }
                st.n_active[i] = act as u32;
                if act <= 1 {
                    st.active.swap_remove(idx);
                    continue;
                }
            }
            idx += 1;
            let violation = max_g - min_g;
            if violation <= 1e-12 || a_sq <= 0.0 {
                continue;
            }
            violation_max = violation_max.max(violation);
            for p in 0..act {
                let m = order[p] as usize;
                b[p] = g[p] - a_sq * alpha[m];
                dd[p] = b[p] + if m == y { a_sq * c } else { 0.0 };
            }
            sorted[..act].copy_from_slice(&dd[..act]);
            sorted[..act].sort_unstable_by(|p, q| q.total_cmp(p));
            let beta = threshold(&sorted[..act], a_sq * c);
            moved.clear();
            for p in 0..act {
                let m = order[p] as usize;
                // At the bound exactly (C for the true class, 0 for the others): a rounded C − 1e-16 would
                // look free and keep the violation up forever.
                let new = if dd[p] <= beta {
                    bound(m)
                } else {
                    ((beta - b[p]) / a_sq).min(bound(m))
                };
                if new != alpha[m] {
                    moved.push((m, new - alpha[m]));
                    alpha[m] = new;
                }
            }
            for (j, v) in x.iter() {
                let w = &mut st.w[j * k..(j + 1) * k];
                for &(m, step) in &moved {
                    w[m] += step * v;
                }
            }
        }
        st.iteration += 1;
        let epsilon = self.epsilon(st);
        let tolerance = if self.params.shrinking {
            st.eps_shrink
        } else {
            epsilon
        };
        if violation_max < tolerance {
            if violation_max < epsilon && st.start_from_all && self.accept(problem, st) {
                st.converged = true;
            } else {
                // Solved on the shrunk problem (or ε was just tightened): check everything again, with a
                // tighter shrinking tolerance.
                st.active = (0..problem.n_samples()).collect();
                st.n_active.fill(k as u32);
                st.eps_shrink = (st.eps_shrink / 2.0).max(self.epsilon(st));
                st.start_from_all = true;
            }
        } else {
            st.start_from_all = false;
        }
        Ok(())
    }

    fn progress(
        &self,
        problem: &StructProblem<'a, MulticlassSpace>,
        st: &CrammerSingerState,
    ) -> Progress {
        Progress {
            iteration: st.iteration,
            epoch: st.visited as f64 / problem.n_samples() as f64,
        }
    }

    fn output(
        &self,
        problem: &StructProblem<'a, MulticlassSpace>,
        st: &CrammerSingerState,
    ) -> Vec<f64> {
        problem.space().from_feature_major(&st.w)
    }

    fn objective(
        &self,
        problem: &StructProblem<'a, MulticlassSpace>,
        st: &CrammerSingerState,
    ) -> Result<f64, OptimError> {
        // λ/2‖W‖² + (1/n)Σ c_{y_i} H_i(W).
        let w = self.output(problem, st);
        Ok(0.5 * problem.lambda() * maxmargin_core::vector::norm_sq(&w)
            + self.loss_sum(problem, &w)? / problem.n_samples() as f64)
    }

    fn certificate(
        &self,
        problem: &StructProblem<'a, MulticlassSpace>,
        st: &CrammerSingerState,
        objective: f64,
    ) -> Result<Certificate, OptimError> {
        Ok(self.dual_certificate(problem, st, objective))
    }

    fn stop(&self, st: &CrammerSingerState) -> Option<StopReason> {
        st.converged.then_some(StopReason::Converged)
    }
}

impl CrammerSinger {
    /// `Σ c_{y_i} H_i(W)` over the problem's examples in their order (a weight of 1 changes no bit): the
    /// primal's loss, and what a shard adds to it over ranks.
    fn loss_sum(
        &self,
        problem: &StructProblem<'_, MulticlassSpace>,
        w: &[f64],
    ) -> Result<f64, OptimError> {
        Ok(problem
            .oracle_all(w)?
            .iter()
            .zip(problem.y())
            .enumerate()
            .map(|(i, (v, &y))| self.weight(i, y as usize) * v.hinge)
            .sum())
    }

    /// `Σ Δ α` over the problem's examples: the dual's linear term, and what a shard adds to it over ranks.
    fn dual_linear(
        &self,
        problem: &StructProblem<'_, MulticlassSpace>,
        st: &CrammerSingerState,
    ) -> f64 {
        let k = problem.space().n_classes();
        problem
            .y()
            .iter()
            .enumerate()
            .map(|(i, &y)| {
                let y = y as usize;
                (0..k)
                    .map(|m| cost_at(&st.cost, k, y, m) * st.alpha[i * k + m])
                    .sum::<f64>()
            })
            .sum()
    }

    /// The exact dual at `st` and its gap to `objective`, with the active set's size.
    fn dual_certificate(
        &self,
        problem: &StructProblem<'_, MulticlassSpace>,
        st: &CrammerSingerState,
        objective: f64,
    ) -> Certificate {
        let norm: f64 = st.w.iter().map(|v| v * v).sum();
        let linear = self.dual_linear(problem, st);
        // D_C(α) = −½‖W‖² − Σ Δ α, and the λ-form dual is λ·D_C.
        let dual = problem.lambda() * (-0.5 * norm - linear);
        Certificate {
            active_constraints: Some(st.active.len()),
            ..Certificate::of_dual(objective, dual)
        }
    }
}

mod distributed;
pub use distributed::CrammerSingerRanks;
