//! Binary linear SVM problems: `F(w, b) = λ/2 (‖w‖² [+ b²]) + (1/n)Σ max(0, 1 − y_i(⟨w, x_i⟩ + b))`.
//!
//! The intercept `b` is absent, unregularized, or a constant feature whose weight is regularized like the
//! others. A problem borrows its data; it does not train anything.

use crate::error::OptimError;
use maxmargin_core::hinge::hinge;
use maxmargin_core::objective::Lambda;
use maxmargin_core::vector::{SparseRows, norm_sq};
use serde::{Deserialize, Serialize};

/// How the intercept is handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bias {
    /// No intercept: `b = 0`.
    None,
    /// An intercept outside the regularizer, updated with the same step as `w`.
    #[default]
    Unregularized,
    /// A constant feature `1` appended to every row; its weight is `b` and is regularized.
    Feature,
}

impl std::str::FromStr for Bias {
    type Err = OptimError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "none" => Ok(Self::None),
            "unregularized" => Ok(Self::Unregularized),
            "feature" => Ok(Self::Feature),
            _ => Err(crate::error::invalid(
                "bias",
                s,
                "must be none, unregularized or feature",
            )),
        }
    }
}

/// Weights and intercept of a linear decision function `f(x) = ⟨w, x⟩ + b`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinearWeights {
    /// One weight per feature.
    pub w: Vec<f64>,
    /// The intercept (0 when the problem has no bias).
    pub b: f64,
}

/// A binary problem: rows, ±1 targets, λ and the bias mode.
#[derive(Debug, Clone, Copy)]
pub struct BinaryProblem<'a> {
    x: &'a SparseRows,
    y: &'a [f64],
    lambda: Lambda,
    bias: Bias,
}

impl<'a> BinaryProblem<'a> {
    /// Checks and bundles a problem.
    ///
    /// # Errors
    /// [`OptimError::NoExamples`], [`OptimError::LengthMismatch`], or [`OptimError::BadTarget`] for a
    /// target other than ±1.
    pub fn new(
        x: &'a SparseRows,
        y: &'a [f64],
        lambda: Lambda,
        bias: Bias,
    ) -> Result<Self, OptimError> {
        if x.n_rows() != y.len() {
            return Err(OptimError::LengthMismatch {
                rows: x.n_rows(),
                targets: y.len(),
            });
        }
        if y.is_empty() {
            return Err(OptimError::NoExamples);
        }
        if let Some(index) = y.iter().position(|&v| v != 1.0 && v != -1.0) {
            return Err(OptimError::BadTarget {
                index,
                value: y[index],
            });
        }
        Ok(Self { x, y, lambda, bias })
    }

    /// The rows.
    pub fn x(&self) -> &'a SparseRows {
        self.x
    }

    /// The ±1 targets.
    pub fn y(&self) -> &'a [f64] {
        self.y
    }

    /// λ.
    pub fn lambda(&self) -> f64 {
        self.lambda.get()
    }

    /// The bias mode.
    pub fn bias(&self) -> Bias {
        self.bias
    }

    /// Number of examples `n`.
    pub fn n_samples(&self) -> usize {
        self.y.len()
    }

    /// Number of features `d`.
    pub fn n_features(&self) -> usize {
        self.x.n_features()
    }

    /// The regularized squared norm: `‖w‖²`, plus `b²` when the bias is a feature.
    pub fn reg_norm_sq(&self, weights: &LinearWeights) -> f64 {
        let extra = if self.bias == Bias::Feature {
            weights.b * weights.b
        } else {
            0.0
        };
        norm_sq(&weights.w) + extra
    }

    /// The mean hinge `(1/n)Σ max(0, 1 − y_i(⟨w, x_i⟩ + b))`.
    pub fn mean_hinge(&self, weights: &LinearWeights) -> f64 {
        let sum: f64 = self
            .x
            .rows()
            .zip(self.y)
            .map(|(row, &y)| hinge(y * (row.dot(&weights.w) + weights.b)))
            .sum();
        sum / self.n_samples() as f64
    }

    /// The primal objective `λ/2 (‖w‖² [+ b²]) + (1/n)Σ hinge`.
    pub fn objective(&self, weights: &LinearWeights) -> f64 {
        0.5 * self.lambda() * self.reg_norm_sq(weights) + self.mean_hinge(weights)
    }
}
