//! The stochastic subgradient method on a structural problem (structured Pegasos).

use super::problem::StructProblem;
use crate::error::{OptimError, all_finite, fits, invalid};
use crate::sampler::{Sampler, Sampling};
use crate::step::StepRule;
use crate::trainer::{Certificate, Progress, Solver};
use maxmargin_core::vector::norm_sq;
use maxmargin_struct::{OutputSpace, Violation, add_subgradient};
use serde::{Deserialize, Serialize};

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
    /// One step on example `(x, y)` whose most violating output at `st.w` is `v` (the caller drew it).
    pub(crate) fn apply<S: OutputSpace>(
        &self,
        st: &mut SsgState,
        space: &S,
        (x, y, v): (&S::Input, &S::Output, &Violation<S::Output>),
        lambda: f64,
    ) {
        st.t += 1;
        let eta = self.params.step.eta(st.offset + st.t, lambda);
        let shrink = self.params.step.shrink(st.offset + st.t, lambda);
        st.w.iter_mut().for_each(|x| *x *= shrink);
        if v.hinge > 0.0 {
            add_subgradient(space, x, y, &v.output, -eta, &mut st.w);
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
    }

    /// The state before the first step on `n` examples visited in the order they come (streamed passes).
    pub(crate) fn init_streamed(&self, dim: usize, n: usize) -> SsgState {
        SsgState {
            t: 0,
            offset: 0,
            w: vec![0.0; dim],
            sum: if self.params.average {
                vec![0.0; dim]
            } else {
                Vec::new()
            },
            count: 0,
            sampler: Sampler::new(Sampling::Cyclic, n, self.params.seed),
        }
    }

    /// The weights `st` stands for: the average when averaging has started, else the last iterate.
    pub(crate) fn weights(st: &SsgState) -> Vec<f64> {
        if st.count > 0 {
            let c = st.count as f64;
            st.sum.iter().map(|s| s / c).collect()
        } else {
            st.w.clone()
        }
    }

    /// The current iterate (what the oracle is asked about).
    pub(crate) fn current(st: &SsgState) -> &[f64] {
        &st.w
    }

    /// Replaces the current iterate (the averaging sum so far is kept): what ranks do after averaging.
    pub(crate) fn set_current(st: &mut SsgState, w: &[f64]) {
        st.w.copy_from_slice(w);
    }

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
    pub(crate) sampler: Sampler,
}

impl SsgState {
    /// Checks a decoded state against `n` examples in `dim` dimensions (in memory or streamed).
    pub(crate) fn check(&self, dim: usize, n: usize) -> Result<(), OptimError> {
        fits(self.w.len() == dim && all_finite(&self.w), "w")?;
        fits(
            ((self.sum.is_empty() && self.count == 0) || self.sum.len() == dim)
                && all_finite(&self.sum),
            "the average",
        )?;
        fits(self.sampler.fits(n), "the sampler")
    }
}

impl<'a, S: OutputSpace<Output: Sync>> Solver<StructProblem<'a, S>> for Ssg {
    type State = SsgState;
    type Output = Vec<f64>;

    fn init(&mut self, problem: &StructProblem<'a, S>) -> Result<SsgState, OptimError> {
        problem.require_margin("ssg")?;
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

    fn check_state(&self, problem: &StructProblem<'a, S>, st: &SsgState) -> Result<(), OptimError> {
        st.check(problem.dim(), problem.n_samples())
    }

    fn step(
        &mut self,
        problem: &StructProblem<'a, S>,
        st: &mut SsgState,
    ) -> Result<(), OptimError> {
        let i = st.sampler.next_index();
        let v = problem.oracle(&st.w, i)?;
        let (x, y) = (&problem.x()[i], &problem.y()[i]);
        self.apply(st, problem.space(), (x, y, &v), problem.lambda());
        Ok(())
    }

    fn progress(&self, _problem: &StructProblem<'a, S>, st: &SsgState) -> Progress {
        Progress {
            iteration: st.t,
            epoch: st.sampler.epochs(),
        }
    }

    fn output(&self, _problem: &StructProblem<'a, S>, st: &SsgState) -> Vec<f64> {
        Self::weights(st)
    }

    fn objective(&self, problem: &StructProblem<'a, S>, st: &SsgState) -> Result<f64, OptimError> {
        problem.primal(&self.output(problem, st))
    }

    /// No dual of its own: [`StructProblem::dual_bound`] at the output certifies how far it is from the
    /// optimum (one more oracle pass).
    fn certificate(
        &self,
        problem: &StructProblem<'a, S>,
        st: &SsgState,
        objective: f64,
    ) -> Result<Certificate, OptimError> {
        let dual = problem.dual_bound(&self.output(problem, st)).ok();
        Ok(Certificate {
            oracle_calls: Some(problem.oracle_calls()),
            ..dual.map_or_else(Certificate::default, |d| Certificate::of_dual(objective, d))
        })
    }
}
