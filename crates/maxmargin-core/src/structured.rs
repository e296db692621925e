//! The structured hinge of one example over a finite candidate set.
//!
//! Given scores `s(y′) = ⟨w, ψ(x, y′)⟩` and task losses `Δ(y, y′)` for candidates `y′`, with the true output
//! `y` among them, the structured hinge is `H = max_y′ [Δ(y, y′) + s(y′) − s(y)]`. It is `≥ 0` (take
//! `y′ = y`), it is the smallest slack `ξ ≥ 0` with `s(y) ≥ s(y′) + Δ(y, y′) − ξ` for all `y′`, and it bounds
//! the loss of prediction: `Δ(y, ŷ) ≤ H` for every score maximizer `ŷ`. Δ needs only `Δ ≥ 0` and
//! `Δ(y, y) = 0` (no symmetry, no triangle inequality). Ties are not errors: every maximizer is returned.
//! This module works on explicit candidate lists; output spaces with efficient oracles live in
//! `maxmargin-struct` and are tested against it.

use crate::affine::AffineMax;
use crate::error::{CoreError, check_finite, check_tol};

/// The structured hinge of one example and the candidates attaining it.
#[derive(Debug, Clone, PartialEq)]
pub struct StructuredHinge {
    /// `H = max_y′ [Δ(y, y′) + s(y′) − s(y)] ≥ 0`.
    pub value: f64,
    /// Every `y′` attaining the maximum (within the tolerance), increasing. Non-empty.
    pub maximizers: Vec<usize>,
}

impl StructuredHinge {
    /// The maximizer picked deterministically: the lowest index. Any maximizer gives the same value.
    pub fn argmax(&self) -> usize {
        self.maximizers[0]
    }
}

/// Checks a candidate set: equal lengths, non-empty, finite, `Δ ≥ 0`, truth inside with `Δ(y, y) = 0`.
fn check_candidates(scores: &[f64], losses: &[f64], truth: usize) -> Result<(), CoreError> {
    if scores.is_empty() {
        return Err(CoreError::EmptyFamily);
    }
    if losses.len() != scores.len() {
        return Err(CoreError::LengthMismatch {
            what: "losses",
            expected: scores.len(),
            got: losses.len(),
        });
    }
    check_finite("score", scores)?;
    check_finite("loss", losses)?;
    if let Some(index) = losses.iter().position(|&l| l < 0.0) {
        return Err(CoreError::NegativeLoss {
            index,
            value: losses[index],
        });
    }
    if truth >= scores.len() {
        return Err(CoreError::TruthOutOfRange {
            truth,
            len: scores.len(),
        });
    }
    if losses[truth] != 0.0 {
        return Err(CoreError::NonzeroTruthLoss(losses[truth]));
    }
    Ok(())
}

/// `H = max_y′ [Δ(y, y′) + s(y′) − s(y)]` with its maximizers (ties within `tol`).
///
/// # Errors
/// [`CoreError::EmptyFamily`], [`CoreError::LengthMismatch`], [`CoreError::NonFinite`],
/// [`CoreError::NegativeLoss`], [`CoreError::TruthOutOfRange`], [`CoreError::NonzeroTruthLoss`] or
/// [`CoreError::InvalidTolerance`].
///
/// # Examples
/// ```
/// # fn main() -> Result<(), maxmargin_core::CoreError> {
/// use maxmargin_core::structured::structured_hinge;
/// // Three classes, truth 0, 0-1 loss: class 2 scores 0.5 below the truth, so it violates by 0.5.
/// let h = structured_hinge(&[1.0, 0.0, 0.5], &[0.0, 1.0, 1.0], 0, 0.0)?;
/// assert_eq!((h.value, h.maximizers), (0.5, vec![2]));
/// # Ok(()) }
/// ```
pub fn structured_hinge(
    scores: &[f64],
    losses: &[f64],
    truth: usize,
    tol: f64,
) -> Result<StructuredHinge, CoreError> {
    check_candidates(scores, losses, truth)?;
    check_tol(tol)?;
    let st = scores[truth];
    let aug = |k: usize| losses[k] + scores[k] - st;
    let value = (0..scores.len()).map(aug).fold(f64::NEG_INFINITY, f64::max);
    let maximizers = (0..scores.len())
        .filter(|&k| aug(k) >= value - tol)
        .collect();
    Ok(StructuredHinge { value, maximizers })
}

/// Plain decoding: the score maximizers `argmax_y′ s(y′)` (ties within `tol`), increasing. No loss is added:
/// this is prediction, not loss-augmented inference.
///
/// # Errors
/// [`CoreError::EmptyFamily`], [`CoreError::NonFinite`] or [`CoreError::InvalidTolerance`].
///
/// # Examples
/// ```
/// # fn main() -> Result<(), maxmargin_core::CoreError> {
/// assert_eq!(maxmargin_core::structured::decode(&[1.0, 3.0, 3.0], 0.0)?, vec![1, 2]);
/// # Ok(()) }
/// ```
pub fn decode(scores: &[f64], tol: f64) -> Result<Vec<usize>, CoreError> {
    if scores.is_empty() {
        return Err(CoreError::EmptyFamily);
    }
    check_finite("score", scores)?;
    check_tol(tol)?;
    let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Ok((0..scores.len())
        .filter(|&k| scores[k] >= best - tol)
        .collect())
}

/// Whether slack `ξ` satisfies every margin constraint `s(y) ≥ s(y′) + Δ(y, y′) − ξ` (within `tol`) and
/// `ξ ≥ 0`. The smallest such `ξ` is the structured hinge.
///
/// # Errors
/// As [`structured_hinge`].
///
/// # Examples
/// ```
/// # fn main() -> Result<(), maxmargin_core::CoreError> {
/// use maxmargin_core::structured::slack_is_feasible;
/// let (s, d) = ([1.0, 0.0, 0.5], [0.0, 1.0, 1.0]);
/// assert!(slack_is_feasible(&s, &d, 0, 0.5, 0.0)?);
/// assert!(!slack_is_feasible(&s, &d, 0, 0.49, 0.0)?);
/// # Ok(()) }
/// ```
pub fn slack_is_feasible(
    scores: &[f64],
    losses: &[f64],
    truth: usize,
    xi: f64,
    tol: f64,
) -> Result<bool, CoreError> {
    check_candidates(scores, losses, truth)?;
    check_tol(tol)?;
    Ok(xi >= 0.0 && (0..scores.len()).all(|k| scores[truth] >= scores[k] + losses[k] - xi - tol))
}

/// The subgradient `ψ(ŷ) − ψ(y)` of the structured hinge in `w`, for candidate `y_hat`, from dense joint
/// features `psi[k] = ψ(x, y_k)`.
///
/// # Errors
/// [`CoreError::TruthOutOfRange`] for an index outside `psi`, [`CoreError::LengthMismatch`] for features
/// of different lengths.
///
/// # Examples
/// ```
/// # fn main() -> Result<(), maxmargin_core::CoreError> {
/// use maxmargin_core::structured::feature_difference;
/// let psi = vec![vec![1.0, 0.0], vec![0.0, 1.0]];
/// assert_eq!(feature_difference(&psi, 0, 1)?, vec![-1.0, 1.0]);
/// # Ok(()) }
/// ```
pub fn feature_difference(
    psi: &[Vec<f64>],
    truth: usize,
    y_hat: usize,
) -> Result<Vec<f64>, CoreError> {
    for &k in &[truth, y_hat] {
        if k >= psi.len() {
            return Err(CoreError::TruthOutOfRange {
                truth: k,
                len: psi.len(),
            });
        }
    }
    let (a, b) = (&psi[y_hat], &psi[truth]);
    if a.len() != b.len() {
        return Err(CoreError::LengthMismatch {
            what: "joint feature",
            expected: b.len(),
            got: a.len(),
        });
    }
    Ok(a.iter().zip(b).map(|(a, b)| a - b).collect())
}

/// The structured hinge as a function of `w`: `max_k [Δ_k + ⟨ψ_k − ψ_truth, w⟩]`, one affine piece per
/// candidate, in candidate order. Its subdifferential is the hull of the feature differences of the
/// maximizers.
///
/// # Errors
/// As [`structured_hinge`] for the losses, and [`CoreError::LengthMismatch`] for the features.
///
/// # Examples
/// ```
/// # fn main() -> Result<(), maxmargin_core::CoreError> {
/// use maxmargin_core::structured::structured_hinge_as_affine_max;
/// let psi = vec![vec![1.0, 0.0], vec![0.0, 1.0]];
/// let f = structured_hinge_as_affine_max(&psi, &[0.0, 1.0], 0)?;
/// assert_eq!(f.value(&[2.0, 0.0])?, 0.0);
/// assert_eq!(f.value(&[0.0, 0.0])?, 1.0);
/// # Ok(()) }
/// ```
pub fn structured_hinge_as_affine_max(
    psi: &[Vec<f64>],
    losses: &[f64],
    truth: usize,
) -> Result<AffineMax, CoreError> {
    check_candidates(&vec![0.0; psi.len()], losses, truth)?;
    let pieces = (0..psi.len())
        .map(|k| Ok((losses[k], feature_difference(psi, truth, k)?)))
        .collect::<Result<Vec<_>, CoreError>>()?;
    AffineMax::new(pieces)
}
