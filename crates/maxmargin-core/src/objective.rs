//! Regularized objectives and their three conventions, converted exactly.
//!
//! - λ-form (Pegasos, BCFW, this library's internal convention): `F_λ(w) = λ/2‖w‖² + (1/n)Σℓ_i`.
//! - C-sum form (LIBLINEAR, the lecture): `F_C(w) = ½‖w‖² + CΣℓ_i`; the same minimizer as `F_λ` with
//!   `λ = 1/(C n)`, and `F_λ = λ·F_C`.
//! - C-mean form (SVM-struct, dlib): `F_C/n(w) = ½‖w‖² + (C/n)Σℓ_i`; `λ = 1/C`, and `F_λ = λ·F_C/n`.
//!
//! [`Regularization`] names its convention in its variant, so a `C` can never be read as a `λ`: solvers take
//! a checked [`Lambda`], obtained through [`Regularization::lambda`] with the number of examples.
//! This module only evaluates objectives from their parts; it does not compute losses over data.

use crate::error::CoreError;
use serde::{Deserialize, Serialize};

/// A checked λ: positive and finite.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
pub struct Lambda(f64);

impl Lambda {
    /// Checks `λ > 0` and finite.
    ///
    /// # Errors
    /// [`CoreError::InvalidRegularization`].
    ///
    /// # Examples
    /// ```
    /// use maxmargin_core::objective::Lambda;
    /// assert!(Lambda::new(0.01).is_ok());
    /// assert!(Lambda::new(0.0).is_err());
    /// ```
    pub fn new(lambda: f64) -> Result<Self, CoreError> {
        if lambda.is_finite() && lambda > 0.0 {
            Ok(Self(lambda))
        } else {
            Err(CoreError::InvalidRegularization {
                name: "lambda",
                value: lambda,
            })
        }
    }

    /// The value.
    pub fn get(self) -> f64 {
        self.0
    }
}

/// LIBLINEAR's `C` for a λ and `n` examples, `1/(λn)`: the per-example box of the dual problems
/// (the inverse of [`Regularization::lambda`] for [`Regularization::CSum`]; the one place it is computed).
///
/// # Examples
/// ```
/// use maxmargin_core::objective::{Regularization, c_sum};
/// let lambda = Regularization::CSum(2.0).lambda(8).unwrap().get();
/// assert_eq!(c_sum(lambda, 8), 2.0);
/// ```
pub fn c_sum(lambda: f64, n_samples: usize) -> f64 {
    1.0 / (lambda * n_samples as f64)
}

/// A regularization constant in the convention it was given in.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Regularization {
    /// λ in `λ/2‖w‖² + (1/n)Σℓ_i`.
    Lambda(f64),
    /// C in `½‖w‖² + CΣℓ_i` (LIBLINEAR's `-c`).
    CSum(f64),
    /// C in `½‖w‖² + (C/n)Σℓ_i` (SVM-struct's `-c`).
    CMean(f64),
}

impl Regularization {
    fn check(self) -> Result<f64, CoreError> {
        let (name, v) = match self {
            Self::Lambda(v) => ("lambda", v),
            Self::CSum(v) | Self::CMean(v) => ("C", v),
        };
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(CoreError::InvalidRegularization { name, value: v })
        }
    }

    /// The λ with the same minimizer, for `n_samples` examples: `λ`, `1/(C n)` or `1/C`.
    ///
    /// # Errors
    /// [`CoreError::InvalidRegularization`] for a constant that is not positive and finite,
    /// [`CoreError::NoExamples`] for `n_samples = 0`.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), maxmargin_core::CoreError> {
    /// use maxmargin_core::objective::Regularization;
    /// assert_eq!(Regularization::CSum(1.0).lambda(4)?.get(), 0.25);
    /// assert_eq!(Regularization::CMean(4.0).lambda(100)?.get(), 0.25);
    /// // A C whose λ is not a positive float says which way to move it.
    /// let e = |c: f64| Regularization::CSum(c).lambda(200).unwrap_err().to_string();
    /// assert!(e(1e308).contains("too large") && e(1e-320).contains("too small"));
    /// # Ok(()) }
    /// ```
    pub fn lambda(self, n_samples: usize) -> Result<Lambda, CoreError> {
        let v = self.check()?;
        if n_samples == 0 {
            return Err(CoreError::NoExamples);
        }
        let n = n_samples as f64;
        let derived = Lambda::new(match self {
            Self::Lambda(_) => v,
            Self::CSum(_) => 1.0 / (v * n),
            Self::CMean(_) => 1.0 / v,
        });
        // The C the user gave is named, not the λ it became (`-c 1e308` said "lambda … got 0").
        // λ underflows to 0 for a huge C and overflows for a tiny one (`C=1e-320` said "too large").
        let large = match self {
            Self::CSum(_) => v * n >= 1.0,
            _ => v >= 1.0,
        };
        match (self, derived) {
            (Self::Lambda(_), d) | (_, d @ Ok(_)) => d,
            (_, Err(_)) if large => Err(CoreError::InvalidParam {
                name: "C",
                reason: "too large: λ = 1/(C·n) is 0 in floating point; give a smaller C",
            }),
            (_, Err(_)) => Err(CoreError::InvalidParam {
                name: "C",
                reason: "too small: λ = 1/(C·n) is not finite in floating point; give a larger C",
            }),
        }
    }

    /// The factor `κ` with `F_λ = κ·F` where `F` is the objective in this convention (`1` for λ-form).
    ///
    /// # Errors
    /// As [`Regularization::lambda`].
    pub fn to_lambda_form_factor(self, n_samples: usize) -> Result<f64, CoreError> {
        let lambda = self.lambda(n_samples)?.get();
        Ok(match self {
            Self::Lambda(_) => 1.0,
            Self::CSum(_) | Self::CMean(_) => lambda,
        })
    }

    /// The objective in this convention from its parts: `‖w‖²` (of the regularized weights only), the loss
    /// sum `Σℓ_i` and `n`.
    ///
    /// # Errors
    /// As [`Regularization::lambda`].
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), maxmargin_core::CoreError> {
    /// use maxmargin_core::objective::Regularization;
    /// // ‖w‖² = 2, Σℓ = 3, n = 4.
    /// assert_eq!(Regularization::Lambda(0.5).objective(2.0, 3.0, 4)?, 0.5 + 0.75);
    /// assert_eq!(Regularization::CSum(2.0).objective(2.0, 3.0, 4)?, 1.0 + 6.0);
    /// assert_eq!(Regularization::CMean(2.0).objective(2.0, 3.0, 4)?, 1.0 + 1.5);
    /// # Ok(()) }
    /// ```
    pub fn objective(
        self,
        norm_sq: f64,
        loss_sum: f64,
        n_samples: usize,
    ) -> Result<f64, CoreError> {
        let v = self.check()?;
        if n_samples == 0 {
            return Err(CoreError::NoExamples);
        }
        let n = n_samples as f64;
        Ok(match self {
            Self::Lambda(_) => 0.5 * v * norm_sq + loss_sum / n,
            Self::CSum(_) => 0.5 * norm_sq + v * loss_sum,
            Self::CMean(_) => 0.5 * norm_sq + v / n * loss_sum,
        })
    }
}

/// The λ-form objective `λ/2‖w‖² + (1/n)Σℓ_i` from its parts.
///
/// # Errors
/// [`CoreError::NoExamples`] for `n_samples = 0`.
///
/// # Examples
/// ```
/// # fn main() -> Result<(), maxmargin_core::CoreError> {
/// use maxmargin_core::objective::{Lambda, lambda_objective};
/// assert_eq!(lambda_objective(Lambda::new(0.5)?, 2.0, 3.0, 4)?, 1.25);
/// # Ok(()) }
/// ```
pub fn lambda_objective(
    lambda: Lambda,
    norm_sq: f64,
    loss_sum: f64,
    n_samples: usize,
) -> Result<f64, CoreError> {
    Regularization::Lambda(lambda.get()).objective(norm_sq, loss_sum, n_samples)
}
