//! Step-size rules `η_k` for subgradient-type methods.

use crate::error::{OptimError, invalid};
use serde::{Deserialize, Serialize};

/// A step-size rule, evaluated at iteration `k = 1, 2, ...`.
///
/// In JSON it reads `{"rule": "constant", "eta": 0.1}`; in binary encodings (bincode), which cannot name
/// fields, it is a plain variant index and value (the tagged form made models trained with `--step`
/// unloadable in bincode).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
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

/// [`StepRule`] as JSON shows it.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "rule", content = "eta")]
enum Tagged {
    Constant(f64),
    Inverse(f64),
    Pegasos,
}

/// [`StepRule`] for binary encodings.
#[derive(Serialize, Deserialize)]
enum Plain {
    Constant(f64),
    Inverse(f64),
    Pegasos,
}

impl Serialize for StepRule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match (*self, s.is_human_readable()) {
            (Self::Constant(e), true) => Tagged::Constant(e).serialize(s),
            (Self::Inverse(e), true) => Tagged::Inverse(e).serialize(s),
            (Self::Pegasos, true) => Tagged::Pegasos.serialize(s),
            (Self::Constant(e), false) => Plain::Constant(e).serialize(s),
            (Self::Inverse(e), false) => Plain::Inverse(e).serialize(s),
            (Self::Pegasos, false) => Plain::Pegasos.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for StepRule {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(if d.is_human_readable() {
            match Tagged::deserialize(d)? {
                Tagged::Constant(e) => Self::Constant(e),
                Tagged::Inverse(e) => Self::Inverse(e),
                Tagged::Pegasos => Self::Pegasos,
            }
        } else {
            match Plain::deserialize(d)? {
                Plain::Constant(e) => Self::Constant(e),
                Plain::Inverse(e) => Self::Inverse(e),
                Plain::Pegasos => Self::Pegasos,
            }
        })
    }
}
