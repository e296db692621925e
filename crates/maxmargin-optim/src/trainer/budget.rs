//! A run's budget: when it stops (iterations, passes, seconds, a tolerance, a certified gap) and how often it
//! evaluates. It checks its numbers; the trainer applies them.

use crate::error::{OptimError, invalid};
use serde::{Deserialize, Serialize};

/// When to stop and how often to evaluate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Budget {
    /// Stop after this many steps.
    pub max_iterations: Option<u64>,
    /// Stop after this many passes over the data.
    pub max_epochs: Option<f64>,
    /// Stop after this many seconds (then results depend on the machine's speed).
    pub max_seconds: Option<f64>,
    /// Stop when the objective improved by less than this, relative, over the last
    /// [`Budget::TOLERANCE_WINDOW`] evaluations.
    pub tolerance: Option<f64>,
    /// Evaluate the objective every this many passes (each evaluation is a pass over the data, and a
    /// certificate may cost more); `f64::INFINITY` evaluates only once, at the end, which is all a run
    /// needs when nothing reads the trace and no tolerance or gap stop is set.
    pub eval_every_epochs: f64,
    /// Return the evaluated output with the lowest objective rather than the last one (for methods that
    /// are not descent methods; the batch subgradient method keeps its best iterate by itself).
    #[serde(default)]
    pub keep_best: bool,
    /// Stop at an evaluation whose certified duality gap is at most this times `|objective|` (solvers
    /// without a certificate never stop on it).
    #[serde(default)]
    pub gap_tolerance: Option<f64>,
}

/// No limit yet, evaluating only at the end: add one ([`Budget::check`] refuses a budget without any).
impl Default for Budget {
    fn default() -> Self {
        Self {
            max_iterations: None,
            max_epochs: None,
            max_seconds: None,
            tolerance: None,
            eval_every_epochs: f64::INFINITY,
            keep_best: false,
            gap_tolerance: None,
        }
    }
}

impl Budget {
    /// Evaluations compared by the tolerance test.
    pub const TOLERANCE_WINDOW: usize = 5;

    /// A budget of `epochs` passes, evaluating once per pass.
    pub fn epochs(epochs: f64) -> Self {
        Self {
            max_iterations: None,
            max_epochs: Some(epochs),
            max_seconds: None,
            tolerance: None,
            eval_every_epochs: 1.0,
            keep_best: false,
            gap_tolerance: None,
        }
    }

    /// A budget of `iterations` steps, evaluating once per pass.
    pub fn iterations(iterations: u64) -> Self {
        Self {
            max_iterations: Some(iterations),
            max_epochs: None,
            ..Self::epochs(0.0)
        }
    }

    /// The same budget, also stopped after `seconds`.
    pub fn with_seconds(mut self, seconds: f64) -> Self {
        self.max_seconds = Some(seconds);
        self
    }

    /// The same budget, also stopped when the objective improves by less than `tolerance` (relative) over
    /// [`Budget::TOLERANCE_WINDOW`] evaluations.
    pub fn with_tolerance(mut self, tolerance: f64) -> Self {
        self.tolerance = Some(tolerance);
        self
    }

    /// The same budget, also stopped at an evaluation whose certified gap is at most `gap` times the
    /// objective (the one gap tolerance of a run: solvers with a stop of their own on the gap, such as BCFW,
    /// are given the same number by the facade).
    pub fn with_gap(mut self, gap: f64) -> Self {
        self.gap_tolerance = Some(gap);
        self
    }

    /// The same budget, evaluating every `epochs` passes (`f64::INFINITY`: only at the end).
    pub fn evaluating_every(mut self, epochs: f64) -> Self {
        self.eval_every_epochs = epochs;
        self
    }

    /// The same budget, returning the evaluated output with the lowest objective.
    pub fn keeping_best(mut self) -> Self {
        self.keep_best = true;
        self
    }

    /// Checks that some budget is set and every number is in range.
    ///
    /// # Errors
    /// [`OptimError::Unbounded`] or [`OptimError::InvalidParam`].
    pub fn check(self) -> Result<Self, OptimError> {
        if self.max_iterations.is_none() && self.max_epochs.is_none() && self.max_seconds.is_none()
        {
            return Err(OptimError::Unbounded);
        }
        if let Some(e) = self.max_epochs
            && !(e.is_finite() && e > 0.0)
        {
            return Err(invalid("epochs", e, "must be positive and finite"));
        }
        if self.max_iterations == Some(0) {
            return Err(invalid("iterations", 0, "must be positive"));
        }
        if let Some(s) = self.max_seconds
            && !(s.is_finite() && s > 0.0)
        {
            return Err(invalid("seconds", s, "must be positive and finite"));
        }
        if let Some(t) = self.tolerance
            && !(t.is_finite() && t >= 0.0)
        {
            return Err(invalid("tolerance", t, "must be finite and >= 0"));
        }
        if let Some(t) = self.gap_tolerance
            && !(t.is_finite() && t >= 0.0)
        {
            return Err(invalid("gap", t, "must be finite and >= 0"));
        }
        if self.eval_every_epochs.is_nan() || self.eval_every_epochs <= 0.0 {
            return Err(invalid(
                "eval_every_epochs",
                self.eval_every_epochs,
                "must be positive (infinite: only at the end)",
            ));
        }
        Ok(self)
    }
}
