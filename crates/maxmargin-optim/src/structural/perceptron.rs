//! The structured perceptron (Collins 2002), averaged: the fast baseline the SVM solvers are compared with.
//!
//! Each step decodes one example (plain inference, no loss added) and, when the output is wrong, moves `w`
//! by `ψ(x, y) − ψ(x, ŷ)`. The averaged perceptron returns the mean of the iterates, kept in `O(1)` per step
//! by Daumé's trick: with `c` the steps so far and `u` the sum of `c · update`, the mean is `w − u/c`.
//!
//! It minimizes no objective, so it has no duality gap of its own: a run stops when a pass over the data
//! makes no mistake (the data are separated; [`StopReason::Converged`]), or
//! on its budget. Its evaluations report the SVM primal of its output at the problem's `λ`, for comparison
//! with the SVM solvers, and no certificate.

use super::problem::StructProblem;
use crate::error::{OptimError, all_finite, fits};
use crate::sampler::{Sampler, Sampling};
use crate::trainer::{Certificate, Progress, Solver, StopReason};
use maxmargin_struct::{OutputSpace, add_subgradient};
use serde::{Deserialize, Serialize};

/// Unchecked parameters of the structured perceptron.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PerceptronParams {
    /// Return the average of the iterates (the averaged perceptron, the default) instead of the last.
    pub average: bool,
    /// The seed of the order of the examples (a new permutation each pass).
    pub seed: u64,
}

impl Default for PerceptronParams {
    fn default() -> Self {
        Self {
            average: true,
            seed: 0,
        }
    }
}

impl PerceptronParams {
    /// The averaged perceptron, seed 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets whether the output is the average of the iterates.
    pub fn average(mut self, average: bool) -> Self {
        self.average = average;
        self
    }

    /// Sets the seed of the order of the examples.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Checks the parameters (there is nothing to refuse).
    ///
    /// # Errors
    /// None today; kept for the parameters every solver checks.
    pub fn check(self) -> Result<Perceptron, OptimError> {
        Ok(Perceptron { params: self })
    }
}

/// The checked structured perceptron.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Perceptron {
    params: PerceptronParams,
}

/// State of [`Perceptron`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerceptronState {
    /// Steps taken.
    pub t: u64,
    w: Vec<f64>,
    /// `Σ c · update` for the average (empty without averaging).
    u: Vec<f64>,
    /// Mistakes in the pass under way, and in the last whole pass.
    mistakes: u64,
    last_pass_mistakes: Option<u64>,
    sampler: Sampler,
}

impl PerceptronState {
    /// Mistakes in the last whole pass (`None` before the first pass ends).
    pub fn last_pass_mistakes(&self) -> Option<u64> {
        self.last_pass_mistakes
    }
}

impl Perceptron {
    /// The output: the mean of the iterates `w − u/c` (`c` the steps so far), or the last iterate.
    fn weights(&self, st: &PerceptronState) -> Vec<f64> {
        if !self.params.average || st.t == 0 {
            return st.w.clone();
        }
        let c = st.t as f64;
        st.w.iter().zip(&st.u).map(|(w, u)| w - u / c).collect()
    }
}

impl<'a, S: OutputSpace<Output: Sync>> Solver<StructProblem<'a, S>> for Perceptron {
    type State = PerceptronState;
    type Output = Vec<f64>;

    fn init(&mut self, problem: &StructProblem<'a, S>) -> Result<PerceptronState, OptimError> {
        problem.require_margin("perceptron")?;
        let dim = problem.dim();
        Ok(PerceptronState {
            t: 0,
            w: vec![0.0; dim],
            u: if self.params.average {
                vec![0.0; dim]
            } else {
                Vec::new()
            },
            mistakes: 0,
            last_pass_mistakes: None,
            sampler: Sampler::new(Sampling::Permutation, problem.n_samples(), self.params.seed),
        })
    }

    fn check_state(
        &self,
        problem: &StructProblem<'a, S>,
        st: &PerceptronState,
    ) -> Result<(), OptimError> {
        let dim = problem.dim();
        fits(st.w.len() == dim && all_finite(&st.w), "w")?;
        let u_len = if self.params.average { dim } else { 0 };
        fits(st.u.len() == u_len && all_finite(&st.u), "the average")?;
        fits(st.sampler.fits(problem.n_samples()), "the sampler")
    }

    fn step(
        &mut self,
        problem: &StructProblem<'a, S>,
        st: &mut PerceptronState,
    ) -> Result<(), OptimError> {
        let n = problem.n_samples() as u64;
        let i = st.sampler.next_index();
        let (x, y) = (&problem.x()[i], &problem.y()[i]);
        let space = problem.space();
        let y_hat = space.decode(&st.w, x).map_err(OptimError::Struct)?;
        st.t += 1;
        if y_hat != *y {
            st.mistakes += 1;
            // w ← w + ψ(x, y) − ψ(x, ŷ); u ← u + c·(ψ(x, y) − ψ(x, ŷ)) with c the steps before this one.
            add_subgradient(space, x, y, &y_hat, -1.0, &mut st.w);
            if self.params.average {
                add_subgradient(space, x, y, &y_hat, -((st.t - 1) as f64), &mut st.u);
            }
        }
        if st.t.is_multiple_of(n) {
            st.last_pass_mistakes = Some(st.mistakes);
            st.mistakes = 0;
        }
        Ok(())
    }

    fn progress(&self, _problem: &StructProblem<'a, S>, st: &PerceptronState) -> Progress {
        Progress {
            iteration: st.t,
            epoch: st.sampler.epochs(),
        }
    }

    fn output(&self, _problem: &StructProblem<'a, S>, st: &PerceptronState) -> Vec<f64> {
        self.weights(st)
    }

    /// The SVM primal of the output at the problem's `λ` (for comparison; the perceptron minimizes none).
    fn objective(
        &self,
        problem: &StructProblem<'a, S>,
        st: &PerceptronState,
    ) -> Result<f64, OptimError> {
        problem.primal(&self.weights(st))
    }

    /// No certificate: the perceptron has no dual; only the oracle calls the evaluations made.
    fn certificate(
        &self,
        problem: &StructProblem<'a, S>,
        _st: &PerceptronState,
        _objective: f64,
    ) -> Result<Certificate, OptimError> {
        Ok(Certificate {
            oracle_calls: Some(problem.oracle_calls()),
            ..Certificate::default()
        })
    }

    /// A whole pass without a mistake: the training data are separated.
    fn stop(&self, st: &PerceptronState) -> Option<StopReason> {
        (st.last_pass_mistakes == Some(0)).then_some(StopReason::Converged)
    }
}
