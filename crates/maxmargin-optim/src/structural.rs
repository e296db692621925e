//! Structural SVM problems over any output space, and the stochastic subgradient method (structured
//! Pegasos).
//!
//! The objective is `F(w) = λ/2‖w‖² + (1/n)Σ_i H_i(w)` with `H_i(w) = max_y [Δ(y_i, y) + ⟨w, ψ(x_i, y)⟩ −
//! ⟨w, ψ(x_i, y_i)⟩]`, the structured hinge computed by the space's loss-augmented oracle. A full pass of
//! oracle calls (for the primal objective, a duality gap, or a cutting plane) runs in parallel with rayon;
//! its results are collected in example order and summed in that order, so they do not depend on the
//! number of threads.

use crate::error::{OptimError, invalid};
use crate::pegasos::Sampling;
use crate::sampler::Sampler;
use crate::step::StepRule;
use crate::trainer::{Certificate, Progress, Solver};
use maxmargin_core::objective::Lambda;
use maxmargin_core::vector::{SparseVec, norm_sq};
use maxmargin_struct::{OutputSpace, Violation, add_subgradient};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};

/// A structural SVM problem: a space, examples, and λ. It counts oracle calls.
#[derive(Debug)]
pub struct StructProblem<'a, S: OutputSpace> {
    space: &'a S,
    x: &'a [S::Input],
    y: &'a [S::Output],
    lambda: Lambda,
    calls: AtomicU64,
}

impl<'a, S: OutputSpace> StructProblem<'a, S> {
    /// Checks every example against the space and bundles the problem.
    ///
    /// # Errors
    /// [`OptimError::LengthMismatch`], [`OptimError::NoExamples`], or [`OptimError::Example`] naming the
    /// first example that does not fit.
    pub fn new(
        space: &'a S,
        x: &'a [S::Input],
        y: &'a [S::Output],
        lambda: Lambda,
    ) -> Result<Self, OptimError> {
        if x.len() != y.len() {
            return Err(OptimError::LengthMismatch {
                rows: x.len(),
                targets: y.len(),
            });
        }
        if x.is_empty() {
            return Err(OptimError::NoExamples);
        }
        for (index, (xi, yi)) in x.iter().zip(y).enumerate() {
            space
                .check_input(xi)
                .and_then(|()| space.check_output(xi, yi))
                .map_err(|source| OptimError::Example { index, source })?;
        }
        Ok(Self {
            space,
            x,
            y,
            lambda,
            calls: AtomicU64::new(0),
        })
    }

    /// The output space.
    pub fn space(&self) -> &'a S {
        self.space
    }

    /// The inputs.
    pub fn x(&self) -> &'a [S::Input] {
        self.x
    }

    /// The true outputs.
    pub fn y(&self) -> &'a [S::Output] {
        self.y
    }

    /// λ.
    pub fn lambda(&self) -> f64 {
        self.lambda.get()
    }

    /// Number of examples `n`.
    pub fn n_samples(&self) -> usize {
        self.x.len()
    }

    /// Length of `w`.
    pub fn dim(&self) -> usize {
        self.space.dim()
    }

    /// `ψ(x_i, y_i)` of every example, as sparse vectors (what the dual methods subtract from).
    pub fn truth_features(&self) -> Vec<SparseVec> {
        self.x
            .iter()
            .zip(self.y)
            .map(|(x, y)| self.space.joint_feature(x, y))
            .collect()
    }

    /// Loss-augmented inference on example `i` (counted).
    ///
    /// # Errors
    /// What the oracle returns (not expected for checked examples and `w.len() == dim()`).
    pub fn oracle(&self, w: &[f64], i: usize) -> Result<Violation<S::Output>, OptimError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        Ok(self.space.loss_augmented(w, &self.x[i], &self.y[i])?)
    }

    /// Loss-augmented inference on every example, in parallel, in example order.
    ///
    /// # Errors
    /// As [`StructProblem::oracle`].
    pub fn oracle_all(&self, w: &[f64]) -> Result<Vec<Violation<S::Output>>, OptimError>
    where
        S::Input: Sync,
        S::Output: Sync,
    {
        (0..self.n_samples())
            .into_par_iter()
            .map(|i| self.oracle(w, i))
            .collect()
    }

    /// `(1/n)Σ H_i(w)`, summed in example order.
    ///
    /// # Errors
    /// As [`StructProblem::oracle`].
    pub fn mean_hinge(&self, w: &[f64]) -> Result<f64, OptimError>
    where
        S::Output: Sync,
    {
        let v = self.oracle_all(w)?;
        Ok(v.iter().map(|v| v.hinge).sum::<f64>() / self.n_samples() as f64)
    }

    /// The primal objective `λ/2‖w‖² + (1/n)Σ H_i(w)`.
    ///
    /// # Errors
    /// As [`StructProblem::oracle`].
    pub fn primal(&self, w: &[f64]) -> Result<f64, OptimError>
    where
        S::Output: Sync,
    {
        Ok(0.5 * self.lambda() * norm_sq(w) + self.mean_hinge(w)?)
    }

    /// A certified lower bound on the optimum (the λ-form dual value of a feasible point) from any `w`, with
    /// one pass of oracle calls: every example puts the same weight `t` on its most violating output `ŷ_i`
    /// at `w` (the rest on its true output), so the dual point has `w_s = (1/(λn)) Σ_i [ψ(x_i, y_i) −
    /// ψ(x_i, ŷ_i)]` and loss `ℓ_s = (1/n) Σ_i Δ(y_i, ŷ_i)`, and `D(t) = t ℓ_s − (λ/2) t² ‖w_s‖²` is maximized
    /// over `t ∈ [0, 1]`. This is what solvers without a dual (SSG) report as their certificate.
    ///
    /// # Errors
    /// As [`StructProblem::oracle`].
    pub fn dual_bound(&self, w: &[f64]) -> Result<f64, OptimError>
    where
        S::Input: Sync,
        S::Output: Sync,
    {
        let violations = self.oracle_all(w)?;
        let n = self.n_samples() as f64;
        let scale = 1.0 / (self.lambda() * n);
        let mut ws = vec![0.0; self.dim()];
        let mut ell = 0.0;
        for ((x, y), v) in self.x.iter().zip(self.y).zip(&violations) {
            if v.loss > 0.0 {
                self.space.add_joint_feature(x, y, scale, &mut ws);
                self.space.add_joint_feature(x, &v.output, -scale, &mut ws);
                ell += v.loss / n;
            }
        }
        let curvature = self.lambda() * norm_sq(&ws);
        let t = if curvature > 0.0 {
            (ell / curvature).clamp(0.0, 1.0)
        } else {
            1.0
        };
        Ok((t * ell - 0.5 * curvature * t * t).max(0.0))
    }

    /// Oracle calls so far.
    pub fn oracle_calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }
}

/// Unchecked parameters of the stochastic subgradient method.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SsgParams {
    /// The step rule (`1/(λt)` by default).
    pub step: StepRule,
    /// Project onto the ball of radius `1/√λ` after each step.
    pub projection: bool,
    /// Return the average of the iterates after `average_from_epoch` passes.
    pub average: bool,
    /// Passes before averaging starts.
    pub average_from_epoch: f64,
    /// How examples are drawn.
    pub sampling: Sampling,
    /// The seed.
    pub seed: u64,
}

impl Default for SsgParams {
    fn default() -> Self {
        Self {
            step: StepRule::Pegasos,
            projection: false,
            average: true,
            average_from_epoch: 1.0,
            sampling: Sampling::Permutation,
            seed: 0,
        }
    }
}

impl SsgParams {
    /// Checks the parameters.
    ///
    /// # Errors
    /// [`OptimError::InvalidParam`].
    pub fn check(self) -> Result<Ssg, OptimError> {
        self.step.check()?;
        if !(self.average_from_epoch.is_finite() && self.average_from_epoch >= 0.0) {
            return Err(invalid(
                "average_from_epoch",
                self.average_from_epoch,
                "must be finite and >= 0",
            ));
        }
        Ok(Ssg {
            params: self,
            initial: None,
        })
    }
}

/// The checked stochastic subgradient method for structural SVMs:
/// `w ← (1 − η_t λ) w − η_t (ψ(x_i, ŷ) − ψ(x_i, y_i))` with `ŷ` from loss-augmented inference.
/// The regularizer's shrink is `O(dim)` per step (the oracle needs `w` itself); BCFW has no such cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Ssg {
    params: SsgParams,
    initial: Option<Vec<f64>>,
}

impl Ssg {
    /// Starts from weights `w` (a previous model's) instead of zero: a warm start. The step schedule starts as
    /// if one pass had already been made (`η = 1/(λ(n + t))` under the Pegasos rule): from `t = 1` the first
    /// step would shrink `w` by `1 − 1/1 = 0` and erase the start.
    ///
    /// # Errors
    /// [`OptimError::WarmStartLength`] is reported at `init` when the length differs from the space's.
    pub fn warm_start(mut self, w: Vec<f64>) -> Self {
        self.initial = Some(w);
        self
    }
}

/// State of [`Ssg`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SsgState {
    /// Steps taken.
    pub t: u64,
    /// Steps counted as already taken by the step schedule (a warm start's `n`).
    offset: u64,
    w: Vec<f64>,
    sum: Vec<f64>,
    count: u64,
    sampler: Sampler,
}

impl<'a, S> Solver<StructProblem<'a, S>> for Ssg
where
    S: OutputSpace,
    S::Output: Sync,
{
    type State = SsgState;
    type Output = Vec<f64>;

    fn init(&mut self, problem: &StructProblem<'a, S>) -> Result<SsgState, OptimError> {
        let dim = problem.dim();
        let w = match &self.initial {
            Some(w) if w.len() != dim => {
                return Err(OptimError::WarmStartLength {
                    expected: dim,
                    got: w.len(),
                });
            }
            Some(w) => w.clone(),
            None => vec![0.0; dim],
        };
        Ok(SsgState {
            t: 0,
            offset: if self.initial.is_some() {
                problem.n_samples() as u64
            } else {
                0
            },
            w,
            sum: if self.params.average {
                vec![0.0; dim]
            } else {
                Vec::new()
            },
            count: 0,
            sampler: Sampler::new(self.params.sampling, problem.n_samples(), self.params.seed),
        })
    }

    fn step(
        &mut self,
        problem: &StructProblem<'a, S>,
        st: &mut SsgState,
    ) -> Result<(), OptimError> {
        let i = st.sampler.next_index();
        let v = problem.oracle(&st.w, i)?;
        st.t += 1;
        let lambda = problem.lambda();
        let eta = self.params.step.eta(st.offset + st.t, lambda);
        let shrink = self.params.step.shrink(st.offset + st.t, lambda);
        st.w.iter_mut().for_each(|x| *x *= shrink);
        if v.hinge > 0.0 {
            add_subgradient(
                problem.space(),
                &problem.x()[i],
                &problem.y()[i],
                &v.output,
                -eta,
                &mut st.w,
            );
        }
        if self.params.projection {
            let norm = norm_sq(&st.w).sqrt();
            let radius = 1.0 / lambda.sqrt();
            if norm > radius {
                st.w.iter_mut().for_each(|x| *x *= radius / norm);
            }
        }
        if self.params.average && st.sampler.epochs() >= self.params.average_from_epoch {
            st.sum.iter_mut().zip(&st.w).for_each(|(s, w)| *s += w);
            st.count += 1;
        }
        Ok(())
    }

    fn progress(&self, _problem: &StructProblem<'a, S>, st: &SsgState) -> Progress {
        Progress {
            iteration: st.t,
            epoch: st.sampler.epochs(),
        }
    }

    fn output(&self, _problem: &StructProblem<'a, S>, st: &SsgState) -> Vec<f64> {
        if st.count > 0 {
            let c = st.count as f64;
            st.sum.iter().map(|s| s / c).collect()
        } else {
            st.w.clone()
        }
    }

    fn objective(&self, problem: &StructProblem<'a, S>, st: &SsgState) -> f64 {
        problem
            .primal(&self.output(problem, st))
            .unwrap_or(f64::NAN)
    }

    /// No dual of its own: [`StructProblem::dual_bound`] at the output certifies how far it is from the
    /// optimum (one more oracle pass).
    fn certificate(
        &self,
        problem: &StructProblem<'a, S>,
        st: &SsgState,
        objective: f64,
    ) -> Certificate {
        let dual = problem.dual_bound(&self.output(problem, st)).ok();
        Certificate {
            dual,
            gap: dual.map(|d| objective - d),
            oracle_calls: Some(problem.oracle_calls()),
            ..Certificate::default()
        }
    }
}
