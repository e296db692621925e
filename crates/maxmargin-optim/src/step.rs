//! Step-size rules `η_k` for subgradient-type methods.

use crate::error::{OptimError, invalid};
use serde::{Deserialize, Serialize};

/// A step-size rule, evaluated at iteration `k = 1, 2, ...`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "rule", content = "eta")]
pub enum StepRule {
    /// `η_k = η`.
    Constant(f64),
    /// `η_k = η₀ / k`.
    Inverse(f64),
    /// `η_k = 1/(λk)`, the Pegasos rule (optimal for λ-strongly convex objectives).
    Pegasos,
}

impl StepRule {
    /// Checks that `η` or `η₀` is positive and finite.
    ///
    /// # Errors
    /// [`OptimError::InvalidParam`].
    pub fn check(self) -> Result<Self, OptimError> {
        match self {
            Self::Constant(e) | Self::Inverse(e) if !(e.is_finite() && e > 0.0) => {
                Err(invalid("step size", e, "must be positive and finite"))
            }
            _ => Ok(self),
        }
    }

    /// `η_k` for regularization `λ`.
    ///
    /// # Examples
    /// ```
    /// use maxmargin_optim::StepRule;
    /// assert_eq!(StepRule::Constant(0.1).eta(5, 0.5), 0.1);
    /// assert_eq!(StepRule::Inverse(1.0).eta(4, 0.5), 0.25);
    /// assert_eq!(StepRule::Pegasos.eta(4, 0.5), 0.5);
    /// ```
    pub fn eta(self, k: u64, lambda: f64) -> f64 {
        let k = k as f64;
        match self {
            Self::Constant(e) => e,
            Self::Inverse(e0) => e0 / k,
            Self::Pegasos => 1.0 / (lambda * k),
        }
    }

    /// The shrink factor `1 − η_k λ` of the regularizer's gradient step; exactly `1 − 1/k` for the Pegasos
    /// rule, where `η_k λ = 1/k`.
    pub fn shrink(self, k: u64, lambda: f64) -> f64 {
        match self {
            Self::Pegasos => 1.0 - 1.0 / k as f64,
            _ => 1.0 - self.eta(k, lambda) * lambda,
        }
    }
}

impl std::fmt::Display for StepRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Constant(e) => write!(f, "constant:{e}"),
            Self::Inverse(e) => write!(f, "inverse:{e}"),
            Self::Pegasos => write!(f, "pegasos"),
        }
    }
}

impl std::str::FromStr for StepRule {
    type Err = OptimError;

    /// Parses `constant:ETA`, `inverse:ETA0` or `pegasos`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || {
            invalid(
                "step rule",
                s,
                "must be constant:ETA, inverse:ETA0 or pegasos",
            )
        };
        let rule = match s.split_once(':') {
            None if s == "pegasos" => Self::Pegasos,
            Some(("constant", v)) => Self::Constant(v.parse().map_err(|_| bad())?),
            Some(("inverse", v)) => Self::Inverse(v.parse().map_err(|_| bad())?),
            _ => return Err(bad()),
        };
        rule.check()
    }
}
