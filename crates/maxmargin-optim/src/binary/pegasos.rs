//! Pegasos: stochastic subgradient steps on `λ/2‖w‖² + (1/n)Σ max(0, 1 − y_i(⟨w, x_i⟩ + b))`.
//!
//! At step `t` a batch `A_t` of `k` examples is drawn and, with `η_t = 1/(λt)` (or another [`StepRule`]),
//! `w ← (1 − η_t λ) w + (η_t/k) Σ_{i ∈ A_t, z_i < 1} y_i x_i`, optionally followed by the projection onto the
//! ball of radius `1/√λ` (Shalev-Shwartz, Singer, Srebro, Cotter 2011). With `λ = 1/C` this is the lecture's
//! C-form `w ← w − η_t (w − C y x)` when violated and `w ← (1 − η_t) w` otherwise, `η_t = 1/t`.
//!
//! The weights are kept as `w = s·v`: the shrink is `s ← s(1 − η_t λ)`, an update touches only the nonzeros
//! of the batch, and `‖v‖²` is maintained alongside, so a step costs `O(nnz)` and never `O(d)`. When `s`
//! gets very small or large, `v ← s·v`, `s ← 1` (rare). The averaged iterate `(1/T)Σ_t w_t` (over the steps
//! after `average_from_epoch` passes) is kept in
//! the same cost with the identity `Σ_t s_t v_t = B_T v_T − Σ_k B_{k−1} δ_k`, `B_t = Σ_{τ≤t} s_τ`, where
//! `δ_k` is step `k`'s change to `v`.
//!
//! The intercept is absent, unregularized (updated with the same step), or a constant feature stored as
//! the last entry of `v`. Sampling is uniform with replacement, by a fresh permutation each epoch, or
//! cyclic, all from one seeded `ChaCha8Rng` in the state.

use crate::error::{OptimError, all_finite, fits, invalid};
use crate::problem::{Bias, BinaryProblem, LinearWeights};
use crate::sampler::Sampler;
pub use crate::sampler::Sampling;
use crate::step::StepRule;
use crate::trainer::{Progress, Solver};
use maxmargin_core::vector::SparseRow;
use serde::{Deserialize, Serialize};

/// Unchecked Pegasos parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PegasosParams {
    /// Examples per step `k`.
    pub batch_size: usize,
    /// The step rule (`1/(λt)` by default).
    pub step: StepRule,
    /// Project onto the ball of radius `1/√λ` after each step.
    pub projection: bool,
    /// Return the average of the iterates instead of the last.
    pub average: bool,
    /// Average only the iterates after this many passes (the first pass's iterates are far from the
    /// optimum and would weigh on the average for long); a run shorter than this returns the last iterate.
    pub average_from_epoch: f64,
    /// How examples are drawn.
    pub sampling: Sampling,
    /// The seed of the `ChaCha8Rng`.
    pub seed: u64,
}

impl Default for PegasosParams {
    fn default() -> Self {
        Self {
            batch_size: 1,
            step: StepRule::Pegasos,
            projection: false,
            average: false,
            average_from_epoch: 1.0,
            sampling: Sampling::Permutation,
            seed: 0,
        }
    }
}

impl PegasosParams {
    /// Defaults: `k = 1`, `η_t = 1/(λt)`, no projection, last iterate, permutation sampling, seed 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the batch size `k`.
    pub fn batch_size(mut self, k: usize) -> Self {
        self.batch_size = k;
        self
    }

    /// Sets the step rule.
    pub fn step(mut self, step: StepRule) -> Self {
        self.step = step;
        self
    }

    /// Turns the projection on or off.
    pub fn projection(mut self, on: bool) -> Self {
        self.projection = on;
        self
    }

    /// Returns the averaged iterate when on.
    pub fn average(mut self, on: bool) -> Self {
        self.average = on;
        self
    }

    /// Sets the number of passes after which averaging starts (0 averages every iterate).
    pub fn average_from_epoch(mut self, epochs: f64) -> Self {
        self.average_from_epoch = epochs;
        self
    }

    /// Sets the sampling scheme.
    pub fn sampling(mut self, sampling: Sampling) -> Self {
        self.sampling = sampling;
        self
    }

    /// Sets the seed.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Checks the parameters.
    ///
    /// # Errors
    /// [`OptimError::InvalidParam`] for `k = 0` or a bad step size.
    ///
    /// # Examples
    /// ```
    /// use maxmargin_optim::PegasosParams;
    /// assert!(PegasosParams::new().batch_size(8).seed(42).check().is_ok());
    /// assert!(PegasosParams::new().batch_size(0).check().is_err());
    /// ```
    pub fn check(self) -> Result<Pegasos, OptimError> {
        if self.batch_size == 0 {
            return Err(invalid("batch size", 0, "must be at least 1"));
        }
        self.step.check()?;
        if !(self.average_from_epoch.is_finite() && self.average_from_epoch >= 0.0) {
            return Err(invalid(
                "average_from_epoch",
                self.average_from_epoch,
                "must be finite and >= 0",
            ));
        }
        Ok(Pegasos { params: self })
    }

    /// Refuses a batch larger than the `n` training rows: one step would take every row, some many times,
    /// and a budget of passes would buy one or a few giant steps.
    pub(crate) fn check_batch(&self, n: usize) -> Result<(), OptimError> {
        if self.batch_size > n.max(1) {
            return Err(OptimError::InvalidParam {
                name: "batch size",
                value: format!("{} for {n} rows", self.batch_size),
                reason: "must not exceed the training rows",
            });
        }
        Ok(())
    }
}

/// Checked Pegasos.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pegasos {
    params: PegasosParams,
}

/// The running sum behind the averaged iterate (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Averager {
    /// Folded sums from before the last renormalization (empty until the first).
    base: Vec<f64>,
    /// `Σ_k B_{k−1} δ_k` since the last renormalization.
    u: Vec<f64>,
    /// `B = Σ s_τ` since the last renormalization.
    scale_sum: f64,
    /// `Σ b_t` for the unregularized intercept.
    b_sum: f64,
    /// Iterates summed.
    count: u64,
}

/// Pegasos state: `w = s·v` (plus the bias), counters, sampling and the RNG.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PegasosState {
    /// Steps taken.
    pub t: u64,
    s: f64,
    v: Vec<f64>,
    v_norm_sq: f64,
    b: f64,
    avg: Option<Averager>,
    pub(crate) sampler: Sampler,
    /// The examples of the last step and their margins `y_i(⟨w_t, x_i⟩ + b_t)` before the step.
    pub last: Vec<(usize, f64)>,
}

impl PegasosState {
    /// Checks a decoded state against `n` rows of `d` features with intercept `bias` (in memory or streamed).
    pub(crate) fn check(&self, n: usize, d: usize, bias: Bias) -> Result<(), OptimError> {
        let st = self;
        let len = d + usize::from(bias == Bias::Feature);
        fits(st.v.len() == len && all_finite(&st.v), "v")?;
        fits(
            [st.s, st.v_norm_sq, st.b].iter().all(|x| x.is_finite()) && st.s != 0.0,
            "the scale",
        )?;
        fits(st.sampler.fits(n), "the sampler")?;
        fits(
            st.last.iter().all(|&(i, z)| i < n && z.is_finite()),
            "the last step",
        )?;
        fits(
            st.avg.as_ref().is_none_or(|a| {
                a.u.len() == len
                    && (a.base.is_empty() || a.base.len() == len)
                    && all_finite(&a.u)
                    && all_finite(&a.base)
                    && a.scale_sum.is_finite()
                    && a.b_sum.is_finite()
            }),
            "the average",
        )
    }
}

/// Renormalize when `|s|` leaves `[RENORM_LOW, 1/RENORM_LOW]`.
const RENORM_LOW: f64 = 1e-9;
/// With averaging, `B v` and `u` cancel to a relative precision of about `ε/|s|`, so `s` is kept above this.
/// Under `η_t = 1/(λt)`, `s_t ≈ 1/t`: a renormalization every factor of 10⁴ in `t`, negligible.
const RENORM_LOW_AVERAGING: f64 = 1e-4;

impl PegasosState {
    /// `⟨w, x⟩ + b` for the current (last) iterate.
    fn decision(&self, x: SparseRow<'_>, d: usize, bias: Bias) -> f64 {
        let wx = self.s * x.dot(&self.v[..d]);
        match bias {
            Bias::None => wx,
            Bias::Unregularized => wx + self.b,
            Bias::Feature => wx + self.s * self.v[d],
        }
    }

    /// The last iterate as one vector: `s·v` (the bias feature's weight last when there is one), and the
    /// unregularized intercept.
    pub(crate) fn current(&self) -> (Vec<f64>, f64) {
        (self.v.iter().map(|v| self.s * v).collect(), self.b)
    }

    /// Replaces the last iterate (the averaging sums so far are kept): what ranks do after averaging.
    pub(crate) fn set_current(&mut self, full: &[f64], b: f64) {
        self.fold_average();
        self.v.copy_from_slice(full);
        self.v_norm_sq = self.v.iter().map(|x| x * x).sum();
        self.s = 1.0;
        self.b = b;
    }

    /// Folds the averaging sum and sets `v ← s·v`, `s ← 1`: `O(d)`, rare.
    fn renormalize(&mut self) {
        self.fold_average();
        let s = self.s;
        self.v.iter_mut().for_each(|x| *x *= s);
        self.v_norm_sq = self.v.iter().map(|x| x * x).sum();
        self.s = 1.0;
    }

    /// Moves `B v − u` into the base sum and restarts `B` and `u`.
    fn fold_average(&mut self) {
        if let Some(a) = &mut self.avg {
            if a.base.is_empty() {
                a.base = vec![0.0; self.v.len()];
            }
            for ((base, u), v) in a.base.iter_mut().zip(a.u.iter_mut()).zip(&self.v) {
                *base += a.scale_sum * v - *u;
                *u = 0.0;
            }
            a.scale_sum = 0.0;
        }
    }

    /// `v ← v + a·x` (and the bias entry), keeping `‖v‖²` and the averaging sum `u`.
    fn add(&mut self, a: f64, x: SparseRow<'_>, d: usize, bias_feature: bool) {
        let mut delta_norm = 0.0;
        let scale_sum = self.avg.as_ref().map_or(0.0, |av| av.scale_sum);
        for (j, xj) in x.iter() {
            if j >= d {
                continue;
            }
            let old = self.v[j];
            let step = a * xj;
            let new = old + step;
            delta_norm += new * new - old * old;
            self.v[j] = new;
            if let Some(av) = &mut self.avg {
                av.u[j] += scale_sum * step;
            }
        }
        if bias_feature {
            let old = self.v[d];
            let new = old + a;
            delta_norm += new * new - old * old;
            self.v[d] = new;
            if let Some(av) = &mut self.avg {
                av.u[d] += scale_sum * a;
            }
        }
        self.v_norm_sq = (self.v_norm_sq + delta_norm).max(0.0);
    }
}

/// What a step needs to know of the problem besides its rows.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Geometry {
    pub(crate) lambda: f64,
    pub(crate) bias: Bias,
    pub(crate) n: usize,
    pub(crate) d: usize,
}

impl Pegasos {
    /// The checked parameters.
    pub fn params(&self) -> &PegasosParams {
        &self.params
    }

    /// One step over the batch the caller drew into `st.last` (example ids, margins to be filled in):
    /// `row(m, id)` gives the `m`-th batch member's row, ±1 target and loss weight.
    pub(crate) fn advance<'r>(
        &self,
        st: &mut PegasosState,
        at: Geometry,
        row: impl Fn(usize, usize) -> (SparseRow<'r>, f64, f64),
    ) {
        let p = &self.params;
        let Geometry { lambda, bias, n, d } = at;
        let k = st.last.len();

        // The margins at w_t, before any change.
        for m in 0..k {
            let (x, y, _) = row(m, st.last[m].0);
            st.last[m].1 = y * st.decision(x, d, bias);
        }
        st.t += 1;
        let eta = p.step.eta(st.t, lambda);
        let shrink = p.step.shrink(st.t, lambda);

        // The regularizer's step: w ← (1 − ηλ) w, in O(1).
        if shrink == 0.0 {
            st.fold_average();
            st.v.iter_mut().for_each(|x| *x = 0.0);
            st.v_norm_sq = 0.0;
            st.s = 1.0;
        } else {
            st.s *= shrink;
        }

        // The loss's step over the violated examples: w ← w + (η/k) y_i x_i.
        let gain = eta / k as f64;
        for m in 0..k {
            let (i, z) = st.last[m];
            if z < 1.0 {
                let (x, y, c) = row(m, i);
                let gain = gain * c;
                let a = gain * y / st.s;
                st.add(a, x, d, bias == Bias::Feature);
                if bias == Bias::Unregularized {
                    st.b += gain * y;
                }
            }
        }

        // Projection onto the ball of radius 1/√λ.
        if p.projection {
            let norm = st.s.abs() * st.v_norm_sq.sqrt();
            let radius = 1.0 / lambda.sqrt();
            if norm > radius {
                st.s *= radius / norm;
            }
        }
        let low = if p.average {
            RENORM_LOW_AVERAGING
        } else {
            RENORM_LOW
        };
        if st.s.abs() < low || st.s.abs() > 1.0 / low {
            st.renormalize();
        }
        let (s, b) = (st.s, st.b);
        let averaging = st.sampler.drawn as f64 >= p.average_from_epoch * n as f64;
        if let Some(a) = st.avg.as_mut().filter(|_| averaging) {
            // Before the start B stays 0, so the δ's of those steps add nothing to u: the sum starts here.
            a.scale_sum += s;
            a.b_sum += b;
            a.count += 1;
        }
    }

    /// The state before the first step on `n` rows of `d` features read in their stored order (the
    /// streamed passes, whose order was shuffled on disk).
    pub(crate) fn init_streamed(&self, n: usize, d: usize, bias: Bias) -> PegasosState {
        self.fresh(n, d, bias, Sampling::Cyclic)
    }

    fn fresh(&self, n: usize, d: usize, bias: Bias, sampling: Sampling) -> PegasosState {
        let len = d + usize::from(bias == Bias::Feature);
        PegasosState {
            t: 0,
            s: 1.0,
            v: vec![0.0; len],
            v_norm_sq: 0.0,
            b: 0.0,
            avg: self.params.average.then(|| Averager {
                base: Vec::new(),
                u: vec![0.0; len],
                scale_sum: 0.0,
                b_sum: 0.0,
                count: 0,
            }),
            sampler: Sampler::new(sampling, n, self.params.seed),
            last: Vec::with_capacity(self.params.batch_size),
        }
    }

    /// The weights `st` stands for (the average when averaging), with the intercept split off.
    pub(crate) fn weights(&self, st: &PegasosState, d: usize, bias: Bias) -> LinearWeights {
        let (full, b_unreg) = match &st.avg {
            Some(a) if a.count > 0 => {
                let c = a.count as f64;
                let w: Vec<f64> = (0..st.v.len())
                    .map(|j| {
                        let base = a.base.get(j).copied().unwrap_or(0.0);
                        (base + a.scale_sum * st.v[j] - a.u[j]) / c
                    })
                    .collect();
                (w, a.b_sum / c)
            }
            _ => (st.v.iter().map(|v| st.s * v).collect(), st.b),
        };
        let b = match bias {
            Bias::None => 0.0,
            Bias::Unregularized => b_unreg,
            Bias::Feature => full[d],
        };
        let mut w = full;
        w.truncate(d);
        LinearWeights { w, b }
    }
}

impl<'a> Solver<BinaryProblem<'a>> for Pegasos {
    type State = PegasosState;

    fn detail(
        &self,
        problem: &BinaryProblem<'a>,
        st: &PegasosState,
    ) -> Option<crate::trainer::StepDetail> {
        let examples = st
            .last
            .iter()
            .map(|&(i, z)| crate::trainer::StepExample::new(i, z))
            .collect();
        Some(crate::problem::detail(
            problem,
            self.output(problem, st),
            examples,
        ))
    }
    type Output = LinearWeights;

    fn init(&mut self, problem: &BinaryProblem<'a>) -> Result<PegasosState, OptimError> {
        problem.require_hinge("pegasos")?;
        let (n, d) = (problem.n_samples(), problem.n_features());
        Ok(self.fresh(n, d, problem.bias(), self.params.sampling))
    }

    fn check_state(
        &self,
        problem: &BinaryProblem<'a>,
        st: &PegasosState,
    ) -> Result<(), OptimError> {
        st.check(problem.n_samples(), problem.n_features(), problem.bias())
    }

    fn step(
        &mut self,
        problem: &BinaryProblem<'a>,
        st: &mut PegasosState,
    ) -> Result<(), OptimError> {
        let (x, y) = (problem.x(), problem.y());
        st.last.clear();
        for _ in 0..self.params.batch_size {
            let i = st.sampler.next_index();
            st.last.push((i, 0.0));
        }
        let at = Geometry {
            lambda: problem.lambda(),
            bias: problem.bias(),
            n: problem.n_samples(),
            d: problem.n_features(),
        };
        self.advance(st, at, |_, i| (x.row(i), y[i], problem.weight(i)));
        Ok(())
    }

    fn progress(&self, _problem: &BinaryProblem<'a>, st: &PegasosState) -> Progress {
        Progress {
            iteration: st.t,
            epoch: st.sampler.epochs(),
        }
    }

    fn output(&self, problem: &BinaryProblem<'a>, st: &PegasosState) -> LinearWeights {
        self.weights(st, problem.n_features(), problem.bias())
    }

    fn objective(&self, problem: &BinaryProblem<'a>, st: &PegasosState) -> Result<f64, OptimError> {
        Ok(problem.objective(&self.output(problem, st)))
    }

    /// No dual of its own: a dual-feasible point built from the output's margins (see
    /// [`crate::dcd::dual_bound`]) certifies how far the output is from the optimum.
    fn certificate(
        &self,
        problem: &BinaryProblem<'a>,
        st: &Self::State,
        objective: f64,
    ) -> Result<crate::trainer::Certificate, OptimError> {
        Ok(crate::problem::margin_certificate(
            problem,
            &self.output(problem, st),
            objective,
        ))
    }
}
