//! The batch subgradient method on `F(w, b) = λ/2 (‖w‖² [+ b²]) + (1/n)Σ max(0, 1 − y_i(⟨w, x_i⟩ + b))`.
//!
//! Each iteration is one pass over the data: it computes every margin at `(w_k, b_k)`, which gives
//! `F(w_k, b_k)` for free, and the subgradient `g_k = λw_k − (1/n)Σ_{z_i < 1} y_i x_i` (θ = 0 at an exact
//! kink `z_i = 1`), with `−(1/n)Σ_{z_i < 1} y_i` (`+ λb` when the bias is a feature) for the intercept. Then
//! `w_{k+1} = w_k − η_k g_k`. The method is no descent method, so the best iterate seen is kept and
//! returned.

use crate::error::{OptimError, all_finite, fits};
use crate::problem::{Bias, BinaryProblem, LinearWeights};
use crate::step::StepRule;
use crate::trainer::{Progress, Solver, StepDetail};
use maxmargin_core::vector::SparseRow;
use serde::{Deserialize, Serialize};

/// Unchecked parameters of the batch subgradient method.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SubgradientParams {
    /// The step rule.
    pub step: StepRule,
}

impl Default for SubgradientParams {
    fn default() -> Self {
        Self {
            step: StepRule::Pegasos,
        }
    }
}

impl SubgradientParams {
    /// Default parameters: the `1/(λk)` step.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the step rule.
    pub fn step(mut self, step: StepRule) -> Self {
        self.step = step;
        self
    }

    /// Checks the parameters.
    ///
    /// # Errors
    /// [`OptimError::InvalidParam`] for a bad step size.
    pub fn check(self) -> Result<Subgradient, OptimError> {
        Ok(Subgradient {
            step: self.step.check()?,
        })
    }
}

/// The checked batch subgradient method.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Subgradient {
    step: StepRule,
}

/// State of the batch subgradient method.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubgradientState {
    /// Iterations taken.
    pub k: u64,
    /// The current iterate.
    pub current: LinearWeights,
    /// The best iterate evaluated so far and its objective.
    pub best: LinearWeights,
    /// `F(best)`.
    pub best_objective: f64,
    pub(crate) grad: Vec<f64>,
}

impl SubgradientState {
    /// Checks a decoded state against `d` features (in memory or streamed).
    pub(crate) fn check(&self, d: usize) -> Result<(), OptimError> {
        let fine = |w: &LinearWeights| w.w.len() == d && all_finite(&w.w) && w.b.is_finite();
        fits(
            fine(&self.current) && fine(&self.best) && self.grad.len() == d,
            "the iterates",
        )?;
        fits(!self.best_objective.is_nan(), "the best objective")
    }
}

/// One pass's sums at a point `(w, b)`: the loss and the subgradient (`grad` holds `λw − (1/n)Σ c_i y_i x_i`
/// over the violated rows so far).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PassSums {
    loss: f64,
    gb: f64,
    n: f64,
}

impl PassSums {
    /// Starts a pass at `at` over `n` rows: `grad ← λw`.
    pub(crate) fn begin(
        at: &LinearWeights,
        lambda: f64,
        bias: Bias,
        n: usize,
        grad: &mut [f64],
    ) -> Self {
        grad.iter_mut()
            .zip(&at.w)
            .for_each(|(g, w)| *g = lambda * w);
        Self {
            loss: 0.0,
            gb: if bias == Bias::Feature {
                lambda * at.b
            } else {
                0.0
            },
            n: n as f64,
        }
    }

    /// Adds row `x` (target `y`, loss weight `c`) with its margin `z` at the point.
    #[inline]
    pub(crate) fn add(&mut self, x: SparseRow<'_>, y: f64, c: f64, z: f64, grad: &mut [f64]) {
        if z < 1.0 {
            self.loss += c * (1.0 - z);
            x.axpy(-c * y / self.n, grad);
            self.gb -= c * y / self.n;
        }
    }

    /// `F(w, b)` and the intercept's part of the subgradient.
    pub(crate) fn end(self, at: &LinearWeights, lambda: f64, bias: Bias) -> (f64, f64) {
        let extra = if bias == Bias::Feature {
            at.b * at.b
        } else {
            0.0
        };
        let reg = maxmargin_core::vector::norm_sq(&at.w) + extra;
        (0.5 * lambda * reg + self.loss / self.n, self.gb)
    }
}

impl Subgradient {
    /// One pass: `F(w, b)` and the subgradient into `grad` (returns the intercept's part).
    fn evaluate(problem: &BinaryProblem<'_>, at: &LinearWeights, grad: &mut [f64]) -> (f64, f64) {
        let (lambda, bias) = (problem.lambda(), problem.bias());
        let mut sums = PassSums::begin(at, lambda, bias, problem.n_samples(), grad);
        for (i, (row, &y)) in problem.x().rows().zip(problem.y()).enumerate() {
            let z = y * (row.dot(&at.w) + at.b);
            sums.add(row, y, problem.weight(i), z, grad);
        }
        sums.end(at, lambda, bias)
    }

    /// Keeps the point just evaluated if it is the best so far, then steps from it along the subgradient.
    pub(crate) fn advance(
        &self,
        s: &mut SubgradientState,
        (objective, gb): (f64, f64),
        lambda: f64,
        bias: Bias,
    ) {
        if objective < s.best_objective {
            s.best_objective = objective;
            s.best.clone_from(&s.current);
        }
        s.k += 1;
        let eta = self.step.eta(s.k, lambda);
        for (w, g) in s.current.w.iter_mut().zip(&s.grad) {
            *w -= eta * g;
        }
        if bias != Bias::None {
            s.current.b -= eta * gb;
        }
    }

    /// The state before the first step, `F(0)` being `objective_at_zero`.
    pub(crate) fn fresh(d: usize, objective_at_zero: f64) -> SubgradientState {
        let zero = LinearWeights {
            w: vec![0.0; d],
            b: 0.0,
        };
        SubgradientState {
            k: 0,
            best_objective: objective_at_zero,
            best: zero.clone(),
            current: zero,
            grad: vec![0.0; d],
        }
    }
}

impl<'a> Solver<BinaryProblem<'a>> for Subgradient {
    type State = SubgradientState;

    type Output = LinearWeights;

    fn detail(&self, p: &BinaryProblem<'a>, st: &SubgradientState) -> Option<StepDetail> {
        Some(crate::problem::detail(p, self.output(p, st), Vec::new()))
    }

    fn init(&mut self, problem: &BinaryProblem<'a>) -> Result<SubgradientState, OptimError> {
        problem.require_hinge("subgradient")?;
        let d = problem.n_features();
        let zero = LinearWeights {
            w: vec![0.0; d],
            b: 0.0,
        };
        Ok(Self::fresh(d, problem.objective(&zero)))
    }

    fn check_state(
        &self,
        problem: &BinaryProblem<'a>,
        s: &SubgradientState,
    ) -> Result<(), OptimError> {
        s.check(problem.n_features())
    }

    fn step(
        &mut self,
        problem: &BinaryProblem<'a>,
        s: &mut SubgradientState,
    ) -> Result<(), OptimError> {
        let sums = Self::evaluate(problem, &s.current, &mut s.grad);
        self.advance(s, sums, problem.lambda(), problem.bias());
        Ok(())
    }

    fn progress(&self, _problem: &BinaryProblem<'a>, s: &SubgradientState) -> Progress {
        Progress {
            iteration: s.k,
            epoch: s.k as f64,
        }
    }

    fn finish(&mut self, problem: &BinaryProblem<'a>, mut s: SubgradientState) -> SubgradientState {
        let objective = problem.objective(&s.current);
        if objective < s.best_objective {
            s.best_objective = objective;
            s.best.clone_from(&s.current);
        }
        s
    }

    fn output(&self, _problem: &BinaryProblem<'a>, s: &SubgradientState) -> LinearWeights {
        s.best.clone()
    }

    fn objective(
        &self,
        _problem: &BinaryProblem<'a>,
        s: &SubgradientState,
    ) -> Result<f64, OptimError> {
        Ok(s.best_objective)
    }

    /// No dual of its own: a dual-feasible point built from the output's margins (see
    /// [`crate::dcd::dual_bound`]) certifies how far the output is from the optimum.
    fn certificate(
        &self,
        problem: &BinaryProblem<'a>,
        s: &Self::State,
        objective: f64,
    ) -> Result<crate::trainer::Certificate, OptimError> {
        Ok(crate::problem::margin_certificate(
            problem,
            &self.output(problem, s),
            objective,
        ))
    }
}
