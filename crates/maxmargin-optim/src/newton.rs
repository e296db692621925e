//! Truncated Newton's method for smooth, strongly convex primal objectives: multinomial logistic
//! regression ([`crate::softmax`]) and the binary squared-hinge and logistic losses
//! ([`crate::binary::primal`], LIBLINEAR's primal `-s 2` and `-s 0`), written once.
//!
//! Each step solves `H d = −∇P` by conjugate gradients preconditioned by `H`'s diagonal (features of any
//! scale), to a relative residual of `min(0.5, √‖∇P‖)`, then backtracks (Armijo) along `d`. Each step
//! decreases the objective, and the last ones converge quadratically (superlinearly for the squared hinge,
//! whose generalized Hessian is piecewise constant). Its cost is a pass over the rows per gradient, Hessian
//! product and line-search trial: on rows ≫ features it takes tens of passes where a dual method takes
//! hundreds.
//!
//! The run stops when the problem's certificate (a dual point built from the gradient, as the model's own
//! probabilities or margins make it) has a gap within the target, relative to the objective.

use crate::error::{OptimError, invalid};
use crate::trainer::{Certificate, Progress, Solver, StopReason};
use serde::{Deserialize, Serialize};

/// A smooth, strongly convex objective over a vector of `dim()` variables that [`Newton`] minimizes.
pub trait Smooth {
    /// What an evaluation keeps for the gradient, Hessian products and certificate (probabilities, margins).
    type Point;
    /// What training returns, made from the variables.
    type Output: Clone;

    /// The number of variables.
    fn dim(&self) -> usize;

    /// `P(w)` and what the derivatives at `w` need.
    fn evaluate(&self, w: &[f64]) -> (f64, Self::Point);

    /// `P(w)` alone (a line-search trial).
    fn value(&self, w: &[f64]) -> f64 {
        self.evaluate(w).0
    }

    /// `∇P(w)`, from the evaluation at `w`.
    fn gradient(&self, w: &[f64], at: &Self::Point) -> Vec<f64>;

    /// `H v`, `H` the (generalized) Hessian at the evaluation's point.
    fn hessian_times(&self, at: &Self::Point, v: &[f64]) -> Vec<f64>;

    /// `H`'s diagonal (each entry > 0): the conjugate gradients' preconditioner.
    fn hessian_diagonal(&self, at: &Self::Point) -> Vec<f64>;

    /// The dual point the gradient `g` at `w` makes, and its gap to `objective`.
    fn certificate(&self, w: &[f64], at: &Self::Point, g: &[f64], objective: f64) -> Certificate;

    /// The output of the variables `w`.
    fn output(&self, w: &[f64]) -> Self::Output;

    /// The weights after a step, for a trace followed step by step. The default reports nothing.
    fn detail(&self, _w: &[f64]) -> Option<crate::trainer::StepDetail> {
        None
    }
}

/// Newton's method's settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Newton {
    /// Stop when the duality gap is at most this fraction of the objective (0: run until no step lowers the
    /// objective, or the budget ends).
    pub gap_target: f64,
    /// Conjugate-gradient steps per Newton step at most.
    pub max_cg: usize,
}

impl Default for Newton {
    fn default() -> Self {
        Self {
            gap_target: 1e-3,
            max_cg: 100,
        }
    }
}

impl Newton {
    /// Checks the settings.
    ///
    /// # Errors
    /// [`OptimError::InvalidParam`] for a gap target that is not finite and >= 0, or no conjugate-gradient
    /// step.
    pub fn check(self) -> Result<Self, OptimError> {
        if !(self.gap_target.is_finite() && self.gap_target >= 0.0) {
            return Err(invalid("gap", self.gap_target, "must be finite and >= 0"));
        }
        if self.max_cg == 0 {
            return Err(invalid("max_cg", self.max_cg, "must be at least 1"));
        }
        Ok(self)
    }
}

/// Newton's state: the variables and what the last step found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewtonState {
    /// The variables (for softmax the weights, class-major; for a binary problem `w`, then `b` if any).
    pub w: Vec<f64>,
    /// Newton steps taken.
    pub iteration: u64,
    /// Passes over the rows so far (each gradient, Hessian product and line-search trial is one).
    pub passes: f64,
    converged: bool,
    /// No step along the last Newton direction decreased the objective (rounding): the run stops.
    #[serde(default)]
    stalled: bool,
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(a, b)| a * b).sum()
}

impl<P: Smooth> Solver<P> for Newton {
    type State = NewtonState;
    type Output = P::Output;

    fn init(&mut self, p: &P) -> Result<NewtonState, OptimError> {
        Ok(NewtonState {
            w: vec![0.0; p.dim()],
            iteration: 0,
            passes: 0.0,
            converged: false,
            stalled: false,
        })
    }

    fn step(&mut self, p: &P, st: &mut NewtonState) -> Result<(), OptimError> {
        if st.converged {
            return Ok(());
        }
        let (f, at) = p.evaluate(&st.w);
        let g = p.gradient(&st.w, &at);
        st.passes += 1.0;
        let cert = p.certificate(&st.w, &at, &g, f);
        if cert.gap.is_some_and(|gap| gap <= self.gap_target * f.abs()) {
            st.converged = true;
            return Ok(());
        }
        // Conjugate gradients on H d = −g, preconditioned by H's diagonal, to a relative residual of
        // min(0.5, √‖g‖) (truncated Newton).
        let g_norm = maxmargin_core::vector::norm_sq(&g).sqrt();
        let tol = g_norm * g_norm.sqrt().min(0.5);
        let diag = p.hessian_diagonal(&at);
        st.passes += 1.0;
        let precondition =
            |r: &[f64]| -> Vec<f64> { r.iter().zip(&diag).map(|(r, h)| r / h).collect() };
        let mut dir = vec![0.0; g.len()];
        let mut r: Vec<f64> = g.iter().map(|v| -v).collect();
        let mut z = precondition(&r);
        let mut s = z.clone();
        let mut rz = dot(&r, &z);
        for _ in 0..self.max_cg {
            if maxmargin_core::vector::norm_sq(&r).sqrt() <= tol {
                break;
            }
            let hs = p.hessian_times(&at, &s);
            st.passes += 1.0;
            let shs = dot(&s, &hs);
            if shs <= 0.0 {
                break;
            }
            let alpha = rz / shs;
            dir.iter_mut().zip(&s).for_each(|(d, v)| *d += alpha * v);
            r.iter_mut().zip(&hs).for_each(|(v, h)| *v -= alpha * h);
            z = precondition(&r);
            let rz_new = dot(&r, &z);
            let beta = rz_new / rz;
            rz = rz_new;
            s.iter_mut().zip(&z).for_each(|(v, z)| *v = z + beta * *v);
        }
        if dir.iter().all(|v| *v == 0.0) {
            dir = precondition(&g.iter().map(|v| -v).collect::<Vec<_>>());
        }
        // Backtracking (Armijo) along the Newton direction.
        let slope = dot(&g, &dir);
        let mut t = 1.0;
        let mut moved = false;
        for _ in 0..40 {
            let trial: Vec<f64> = st.w.iter().zip(&dir).map(|(w, d)| w + t * d).collect();
            let ft = p.value(&trial);
            st.passes += 1.0;
            if ft <= f + 1e-4 * t * slope {
                // A step that changes no variable (rounding) is no move: the run stops.
                moved = trial != st.w;
                st.w = trial;
                break;
            }
            t *= 0.5;
        }
        st.stalled = !moved;
        st.iteration += 1;
        Ok(())
    }

    fn progress(&self, _p: &P, st: &NewtonState) -> Progress {
        Progress {
            iteration: st.iteration,
            epoch: st.passes,
        }
    }

    fn output(&self, p: &P, st: &NewtonState) -> P::Output {
        p.output(&st.w)
    }

    fn objective(&self, p: &P, st: &NewtonState) -> Result<f64, OptimError> {
        Ok(p.value(&st.w))
    }

    fn certificate(
        &self,
        p: &P,
        st: &NewtonState,
        objective: f64,
    ) -> Result<Certificate, OptimError> {
        let (_, at) = p.evaluate(&st.w);
        let g = p.gradient(&st.w, &at);
        Ok(p.certificate(&st.w, &at, &g, objective))
    }

    fn check_state(&self, p: &P, st: &NewtonState) -> Result<(), OptimError> {
        if st.w.len() != p.dim() || !st.w.iter().all(|v| v.is_finite()) {
            return Err(invalid(
                "state",
                st.w.len(),
                "weights do not fit the problem",
            ));
        }
        Ok(())
    }

    fn detail(&self, p: &P, st: &NewtonState) -> Option<crate::trainer::StepDetail> {
        p.detail(&st.w)
    }

    fn stop(&self, st: &NewtonState) -> Option<StopReason> {
        if st.converged {
            Some(StopReason::Converged)
        } else {
            // The objective can no longer decrease in floating point: the certificate says how far it is.
            st.stalled.then_some(StopReason::Tolerance)
        }
    }
}
