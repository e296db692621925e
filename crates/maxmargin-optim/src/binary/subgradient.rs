//! The batch subgradient method on `F(w, b) = λ/2 (‖w‖² [+ b²]) + (1/n)Σ max(0, 1 − y_i(⟨w, x_i⟩ + b))`.
//!
//! Each iteration is one pass over the data: it computes every margin at `(w_k, b_k)`, which gives
//! `F(w_k, b_k)` for free, and the subgradient `g_k = λw_k − (1/n)Σ_{z_i < 1} y_i x_i` (θ = 0 at an exact
//! kink `z_i = 1`), with `−(1/n)Σ_{z_i < 1} y_i` (`+ λb` when the bias is a feature) for the intercept. Then
//! `w_{k+1} = w_k − η_k g_k`. The method is no descent method, so the best iterate seen is kept and
//! returned.

use crate::error::OptimError;
use crate::problem::{Bias, BinaryProblem, LinearWeights};
use crate::step::StepRule;
use crate::trainer::{Progress, Solver};
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
    grad: Vec<f64>,
}

impl Subgradient {
    /// One pass: `F(w, b)` and the subgradient into `grad` (returns the intercept's part).
    fn evaluate(problem: &BinaryProblem<'_>, at: &LinearWeights, grad: &mut [f64]) -> (f64, f64) {
        let n = problem.n_samples() as f64;
        let lambda = problem.lambda();
        grad.iter_mut()
            .zip(&at.w)
            .for_each(|(g, w)| *g = lambda * w);
        let mut loss = 0.0;
        let mut gb = if problem.bias() == Bias::Feature {
            lambda * at.b
        } else {
            0.0
        };
        for (i, (row, &y)) in problem.x().rows().zip(problem.y()).enumerate() {
            let z = y * (row.dot(&at.w) + at.b);
            if z < 1.0 {
                let c = problem.weight(i);
                loss += c * (1.0 - z);
                row.axpy(-c * y / n, grad);
                gb -= c * y / n;
            }
        }
        let objective = 0.5 * lambda * problem.reg_norm_sq(at) + loss / n;
        (objective, gb)
    }
}

impl<'a> Solver<BinaryProblem<'a>> for Subgradient {
    type State = SubgradientState;

    fn detail(
        &self,
        problem: &BinaryProblem<'a>,
        st: &SubgradientState,
    ) -> Option<crate::trainer::StepDetail> {
        Some(crate::problem::detail(
            problem,
            self.output(problem, st),
            Vec::new(),
        ))
    }
    type Output = LinearWeights;

    fn init(&mut self, problem: &BinaryProblem<'a>) -> Result<SubgradientState, OptimError> {
        problem.require_hinge("subgradient")?;
        let zero = LinearWeights {
            w: vec![0.0; problem.n_features()],
            b: 0.0,
        };
        Ok(SubgradientState {
            k: 0,
            best_objective: problem.objective(&zero),
            best: zero.clone(),
            current: zero,
            grad: vec![0.0; problem.n_features()],
        })
    }

    fn step(
        &mut self,
        problem: &BinaryProblem<'a>,
        s: &mut SubgradientState,
    ) -> Result<(), OptimError> {
        let (objective, gb) = Self::evaluate(problem, &s.current, &mut s.grad);
        if objective < s.best_objective {
            s.best_objective = objective;
            s.best.clone_from(&s.current);
        }
        s.k += 1;
        let eta = self.step.eta(s.k, problem.lambda());
        for (w, g) in s.current.w.iter_mut().zip(&s.grad) {
            *w -= eta * g;
        }
        if problem.bias() != Bias::None {
            s.current.b -= eta * gb;
        }
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

    fn objective(&self, _problem: &BinaryProblem<'a>, s: &SubgradientState) -> f64 {
        s.best_objective
    }

    /// No dual of its own: a dual-feasible point built from the output's margins (see
    /// [`crate::dcd::dual_bound`]) certifies how far the output is from the optimum.
    fn certificate(
        &self,
        problem: &BinaryProblem<'a>,
        s: &Self::State,
        objective: f64,
    ) -> crate::trainer::Certificate {
        let dual = crate::dcd::dual_bound(problem, &self.output(problem, s)).ok();
        crate::trainer::Certificate {
            dual,
            gap: dual.map(|d| objective - d),
            ..crate::trainer::Certificate::default()
        }
    }
}
