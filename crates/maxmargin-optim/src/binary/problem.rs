//! Binary linear problems: `F(w, b) = λ/2 (‖w‖² [+ b²]) + (1/n)Σ ℓ(y_i(⟨w, x_i⟩ + b))` with the hinge
//! `ℓ(z) = max(0, 1 − z)` (an SVM), its square, or the logistic loss `log(1 + e^{−z})` (logistic regression).
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
#[non_exhaustive]
pub enum Bias {
    /// No intercept: `b = 0`.
    None,
    /// An intercept outside the regularizer, updated with the same step as `w`.
    #[default]
    Unregularized,
    /// A constant feature `1` appended to every row; its weight is `b` and is regularized.
    Feature,
}

/// The name `FromStr` reads (`none`, `unregularized`, `feature`).
impl std::fmt::Display for Bias {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::None => "none",
            Self::Unregularized => "unregularized",
            Self::Feature => "feature",
        })
    }
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

/// The loss of a binary problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum BinaryLoss {
    /// `max(0, 1 − z)` (L1-loss SVM).
    #[default]
    Hinge,
    /// `max(0, 1 − z)²` (L2-loss SVM; dual coordinate descent only).
    SquaredHinge,
    /// `log(1 + e^{−z})` (logistic regression; dual coordinate descent only, Yu, Huang & Lin 2011).
    Logistic,
}

impl BinaryLoss {
    /// `ℓ(z)`.
    pub fn value(self, z: f64) -> f64 {
        match self {
            Self::Hinge => hinge(z),
            Self::SquaredHinge => hinge(z) * hinge(z),
            Self::Logistic => maxmargin_core::hinge::logistic(z),
        }
    }
}

impl std::str::FromStr for BinaryLoss {
    type Err = OptimError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "hinge" => Ok(Self::Hinge),
            "squared-hinge" | "squared_hinge" => Ok(Self::SquaredHinge),
            "logistic" => Ok(Self::Logistic),
            _ => Err(crate::error::invalid(
                "loss",
                s,
                "must be hinge, squared-hinge or logistic",
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

impl LinearWeights {
    /// `f(x) = ⟨w, x⟩ + b`; features beyond the weights contribute nothing.
    ///
    /// # Examples
    /// ```
    /// use maxmargin_optim::LinearWeights;
    /// use maxmargin_optim::core::vector::SparseVec;
    /// let f = LinearWeights { w: vec![0.5, -1.0], b: 0.25 };
    /// let x = SparseVec::from_dense(&[2.0, 1.0, 7.0]).unwrap();
    /// assert_eq!(f.decision(x.as_row()), 0.25);
    /// ```
    pub fn decision(&self, x: maxmargin_core::vector::SparseRow<'_>) -> f64 {
        x.dot(&self.w) + self.b
    }
}

/// A binary problem: rows, ±1 targets, λ and the bias mode.
#[derive(Debug, Clone, Copy)]
pub struct BinaryProblem<'a> {
    x: &'a SparseRows,
    y: &'a [f64],
    lambda: Lambda,
    bias: Bias,
    loss: BinaryLoss,
    weights: Option<&'a [f64]>,
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
        Ok(Self {
            x,
            y,
            lambda,
            bias,
            loss: BinaryLoss::Hinge,
            weights: None,
        })
    }

    /// The same problem with another loss (the hinge by default).
    pub fn with_loss(mut self, loss: BinaryLoss) -> Self {
        self.loss = loss;
        self
    }

    /// The loss.
    pub fn loss(&self) -> BinaryLoss {
        self.loss
    }

    /// Per-example weights `c_i ≥ 0` on the loss (class weights, expanded): the objective becomes
    /// `λ/2‖w‖² + (1/n)Σ c_i ℓ_i`.
    ///
    /// # Errors
    /// [`OptimError::LengthMismatch`] or [`OptimError::InvalidParam`] for a negative or non-finite weight.
    pub fn with_example_weights(mut self, c: &'a [f64]) -> Result<Self, OptimError> {
        crate::error::same_length(self.y.len(), c.len())?;
        if let Some(bad) = c.iter().find(|v| !(v.is_finite() && **v >= 0.0)) {
            return Err(crate::error::invalid(
                "example weight",
                bad,
                "must be finite and >= 0",
            ));
        }
        self.weights = Some(c);
        Ok(self)
    }

    /// The weight `c_i` of example `i` (1 without weights).
    #[inline]
    pub fn weight(&self, i: usize) -> f64 {
        self.weights.map_or(1.0, |c| c[i])
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

    /// The mean loss `(1/n)Σ ℓ(y_i(⟨w, x_i⟩ + b))` (the hinge unless the problem says otherwise).
    pub fn mean_hinge(&self, weights: &LinearWeights) -> f64 {
        self.loss_sum(weights) / self.n_samples() as f64
    }

    /// The weighted loss summed over the examples, in their order: `Σ c_i ℓ(y_i(⟨w, x_i⟩ + b))` (what a
    /// shard adds to the whole problem's mean over ranks).
    pub(crate) fn loss_sum(&self, weights: &LinearWeights) -> f64 {
        self.x
            .rows()
            .zip(self.y)
            .enumerate()
            .map(|(i, (row, &y))| {
                self.weight(i) * self.loss.value(y * (row.dot(&weights.w) + weights.b))
            })
            .sum()
    }

    /// The primal objective `λ/2 (‖w‖² [+ b²]) + (1/n)Σ ℓ`.
    pub fn objective(&self, weights: &LinearWeights) -> f64 {
        0.5 * self.lambda() * self.reg_norm_sq(weights) + self.mean_hinge(weights)
    }

    /// An error unless the loss is the hinge (for solvers written for it).
    pub(crate) fn require_hinge(&self, solver: &'static str) -> Result<(), OptimError> {
        match self.loss {
            BinaryLoss::Hinge => Ok(()),
            BinaryLoss::SquaredHinge => Err(crate::error::invalid(
                solver,
                "squared-hinge",
                "supports the hinge loss only; use dcd",
            )),
            BinaryLoss::Logistic => Err(crate::error::invalid(
                solver,
                "logistic",
                "supports the hinge loss only; use dcd",
            )),
        }
    }
}

/// The step detail of a binary solver's output: its weights, its bias when the problem has one, and the
/// step's examples.
pub(crate) fn detail(
    problem: &BinaryProblem<'_>,
    output: LinearWeights,
    examples: Vec<crate::trainer::StepExample>,
) -> crate::trainer::StepDetail {
    crate::trainer::StepDetail {
        weights: output.w,
        bias: (problem.bias() != Bias::None).then_some(output.b),
        examples,
    }
}

/// The certificate of a primal solver's `output` (its `objective`): the dual-feasible point built from the
/// output's margins ([`crate::dcd::dual_bound`]), none when it cannot be built.
pub(crate) fn margin_certificate(
    problem: &BinaryProblem<'_>,
    output: &LinearWeights,
    objective: f64,
) -> crate::trainer::Certificate {
    crate::dcd::dual_bound(problem, output).map_or_else(
        |_| Default::default(),
        |d| crate::trainer::Certificate::of_dual(objective, d),
    )
}
