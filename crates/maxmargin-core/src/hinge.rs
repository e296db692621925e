//! The binary hinge `max(0, 1 − z)` with `z = y(⟨w, x⟩ + b)`, and its relatives.
//!
//! Subdifferentials are given in the margin `z` as closed intervals and in the weights through the chain
//! rule: `∂_w ℓ = {θ · (−y x) : θ ∈ [θ_lo, θ_hi]}` with `θ = −∂_z ℓ`. The 0-1 loss is not convex and has no
//! subdifferential; its value at `z = 0` follows a stated, configurable convention.
//! This module computes single losses; sums over datasets live with the solvers.

use crate::affine::AffineMax;
use crate::error::CoreError;
use crate::vector::SparseRow;
use serde::{Deserialize, Serialize};

/// A closed interval `[lo, hi]` of reals (a point when `lo == hi`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Lower end.
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
}

impl Interval {
    /// The one-point interval `{x}`.
    pub fn point(x: f64) -> Self {
        Self { lo: x, hi: x }
    }

    /// Whether `lo ≤ x ≤ hi`.
    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }

    /// Whether the interval is a single point.
    pub fn is_point(&self) -> bool {
        self.lo == self.hi
    }
}

/// The margin `z = y(⟨w, x⟩ + b)`.
///
/// # Examples
/// ```
/// # fn main() -> Result<(), maxmargin_core::CoreError> {
/// use maxmargin_core::{hinge::margin, vector::SparseVec};
/// let x = SparseVec::new(vec![0, 1], vec![2.0, 1.0])?;
/// assert_eq!(margin(&[1.0, 0.5], 0.0, x.as_row(), 1.0), 2.5);
/// # Ok(()) }
/// ```
pub fn margin(w: &[f64], b: f64, x: SparseRow<'_>, y: f64) -> f64 {
    y * (x.dot(w) + b)
}

/// The hinge `max(0, 1 − z)`.
///
/// # Examples
/// ```
/// assert_eq!(maxmargin_core::hinge::hinge(-2.0), 3.0);
/// assert_eq!(maxmargin_core::hinge::hinge(2.0), 0.0);
/// ```
pub fn hinge(z: f64) -> f64 {
    (1.0 - z).max(0.0)
}

/// The logistic loss `log(1 + e^{−z})`, computed without overflow or cancellation for any finite `z`
/// (`−z + log(1 + e^{z})` for `z < 0`).
///
/// # Examples
/// ```
/// use maxmargin_core::hinge::logistic;
/// assert!((logistic(0.0) - std::f64::consts::LN_2).abs() < 1e-15);
/// assert_eq!(logistic(-1000.0), 1000.0);
/// assert!(logistic(40.0) > 0.0 && logistic(40.0) < 1e-17);
/// ```
pub fn logistic(z: f64) -> f64 {
    if z >= 0.0 {
        (-z).exp().ln_1p()
    } else {
        -z + z.exp().ln_1p()
    }
}

/// The logistic function `σ(z) = 1 / (1 + e^{−z})`, the probability a logistic model gives the positive
/// class at score `z` (without overflow for any `z`).
///
/// # Examples
/// ```
/// use maxmargin_core::hinge::sigmoid;
/// assert_eq!(sigmoid(0.0), 0.5);
/// assert!((sigmoid(2.0) + sigmoid(-2.0) - 1.0).abs() < 1e-15);
/// assert_eq!(sigmoid(-1000.0), 0.0);
/// ```
pub fn sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

/// `∂_z max(0, 1 − z)`: `{−1}` for `z < 1`, `[−1, 0]` at `z = 1`, `{0}` for `z > 1`.
///
/// # Examples
/// ```
/// use maxmargin_core::hinge::hinge_subdifferential;
/// assert_eq!(hinge_subdifferential(0.0).lo, -1.0);
/// assert!(hinge_subdifferential(1.0).contains(-0.5));
/// assert!(hinge_subdifferential(3.0).is_point());
/// ```
pub fn hinge_subdifferential(z: f64) -> Interval {
    if z < 1.0 {
        Interval::point(-1.0)
    } else if z > 1.0 {
        Interval::point(0.0)
    } else {
        Interval { lo: -1.0, hi: 0.0 }
    }
}

/// Where the margin `z` stands relative to the hinge's kink at `z = 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum HingeCase {
    /// `z < 1`: the loss is `1 − z` and the subgradient in `w` is `−y x`.
    Violated,
    /// `z = 1`: every `θ(−y x)`, `θ ∈ [0, 1]`, is a subgradient.
    Kink,
    /// `z > 1`: the loss and its subgradient are zero.
    Satisfied,
}

impl HingeCase {
    /// Classifies a margin.
    pub fn of(z: f64) -> Self {
        if z < 1.0 {
            Self::Violated
        } else if z > 1.0 {
            Self::Satisfied
        } else {
            Self::Kink
        }
    }

    /// The range of `θ` with `θ(−y x) ∈ ∂_w ℓ`.
    pub fn theta(&self) -> Interval {
        match self {
            Self::Violated => Interval::point(1.0),
            Self::Kink => Interval { lo: 0.0, hi: 1.0 },
            Self::Satisfied => Interval::point(0.0),
        }
    }
}

/// The subgradient `θ(−y x)` of the hinge in `w` (and `−θ y` in the intercept), written into `g`.
///
/// # Errors
/// [`CoreError::ThetaOutOfRange`] when `θ ∉ HingeCase::of(z).theta()`.
///
/// # Examples
/// ```
/// # fn main() -> Result<(), maxmargin_core::CoreError> {
/// use maxmargin_core::{hinge::hinge_subgradient_w, vector::SparseVec};
/// let x = SparseVec::new(vec![0, 1], vec![2.0, 1.0])?;
/// let mut g = vec![0.0; 2];
/// let gb = hinge_subgradient_w(&[0.0, 0.0], 0.0, x.as_row(), 1.0, 1.0, &mut g)?;
/// assert_eq!((g, gb), (vec![-2.0, -1.0], -1.0));
/// # Ok(()) }
/// ```
pub fn hinge_subgradient_w(
    w: &[f64],
    b: f64,
    x: SparseRow<'_>,
    y: f64,
    theta: f64,
    g: &mut [f64],
) -> Result<f64, CoreError> {
    let case = HingeCase::of(margin(w, b, x, y));
    let range = case.theta();
    if !range.contains(theta) {
        return Err(CoreError::ThetaOutOfRange {
            theta,
            lo: range.lo,
            hi: range.hi,
        });
    }
    g.iter_mut().for_each(|v| *v = 0.0);
    x.axpy(-theta * y, g);
    Ok(-theta * y)
}

/// The hinge of one example as a maximum of affine functions of `w`: `max(0, 1 − y⟨x, w⟩)`, with pieces
/// `(0, 0)` and `(1, −y x)` in that order.
///
/// # Errors
/// [`CoreError::NonFinite`] for a bad entry.
///
/// # Examples
/// ```
/// # fn main() -> Result<(), maxmargin_core::CoreError> {
/// use maxmargin_core::{hinge::hinge_as_affine_max, vector::SparseVec};
/// let x = SparseVec::new(vec![0, 1], vec![2.0, 1.0])?;
/// let f = hinge_as_affine_max(x.as_row(), 1.0, 2)?;
/// assert_eq!(f.value(&[0.25, 0.0])?, 0.5);
/// # Ok(()) }
/// ```
pub fn hinge_as_affine_max(x: SparseRow<'_>, y: f64, dim: usize) -> Result<AffineMax, CoreError> {
    let mut g = vec![0.0; dim];
    x.axpy(-y, &mut g);
    AffineMax::new(vec![(0.0, vec![0.0; dim]), (1.0, g)])
}

/// How the 0-1 loss counts a margin of exactly zero (a point on the decision boundary).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum ZeroAtBoundary {
    /// `z = 0` is a mistake: `ℓ₀₁(0) = 1` (the default; a tie is not a correct prediction).
    #[default]
    Mistake,
    /// `z = 0` is correct: `ℓ₀₁(0) = 0`.
    Correct,
}

/// Margin losses `ℓ(z)`, each with its value and, where convex, its subdifferential in `z`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum MarginLoss {
    /// `max(0, 1 − z)`.
    Hinge,
    /// `max(0, 1 − z)²`.
    SquaredHinge,
    /// The perceptron loss `max(0, −z)`.
    Perceptron,
    /// The logistic loss `log(1 + e^{−z})` (logistic regression).
    Logistic,
    /// `1[z < 0]`, with `z = 0` counted by the given convention.
    ZeroOne(ZeroAtBoundary),
}

impl MarginLoss {
    /// `ℓ(z)`.
    ///
    /// # Examples
    /// ```
    /// use maxmargin_core::hinge::{MarginLoss, ZeroAtBoundary};
    /// assert_eq!(MarginLoss::SquaredHinge.value(-1.0), 4.0);
    /// assert_eq!(MarginLoss::ZeroOne(ZeroAtBoundary::Mistake).value(0.0), 1.0);
    /// assert_eq!(MarginLoss::ZeroOne(ZeroAtBoundary::Correct).value(0.0), 0.0);
    /// ```
    pub fn value(&self, z: f64) -> f64 {
        match self {
            Self::Hinge => hinge(z),
            Self::SquaredHinge => hinge(z).powi(2),
            Self::Perceptron => (-z).max(0.0),
            Self::Logistic => logistic(z),
            Self::ZeroOne(conv) => {
                let mistake = z < 0.0 || (z == 0.0 && *conv == ZeroAtBoundary::Mistake);
                if mistake { 1.0 } else { 0.0 }
            }
        }
    }

    /// `∂_z ℓ(z)`, or `None` for the non-convex 0-1 loss.
    ///
    /// # Examples
    /// ```
    /// use maxmargin_core::hinge::MarginLoss;
    /// let d = MarginLoss::Perceptron.subdifferential(0.0).unwrap();
    /// assert_eq!((d.lo, d.hi), (-1.0, 0.0));
    /// assert_eq!(MarginLoss::SquaredHinge.subdifferential(0.0).unwrap().lo, -2.0);
    /// ```
    pub fn subdifferential(&self, z: f64) -> Option<Interval> {
        Some(match self {
            Self::Hinge => hinge_subdifferential(z),
            Self::SquaredHinge => Interval::point(-2.0 * hinge(z)),
            Self::Perceptron if z < 0.0 => Interval::point(-1.0),
            Self::Perceptron if z > 0.0 => Interval::point(0.0),
            Self::Perceptron => Interval { lo: -1.0, hi: 0.0 },
            Self::Logistic => Interval::point(-sigmoid(-z)),
            Self::ZeroOne(_) => return None,
        })
    }
}
