//! The maximum of finitely many affine functions, `f(w) = max_k h_k(w)` with `h_k(w) = a_k + ⟨g_k, w⟩`.
//!
//! Every loss in this library is such a maximum (the hinge is `max(0, 1 − y⟨w, x⟩)`, the structured hinge
//! a maximum over outputs), so its value, active set and subdifferential are computed here once:
//! `∂f(w) = conv{g_k : h_k(w) = f(w)}`. This is the reference implementation, not a fast path: solvers use
//! specialised code that is tested against it. Ties are never errors: they are the active set.

use crate::error::{CoreError, check_finite, check_tol};
use nalgebra::{DMatrix, DVector};

/// The largest set of slopes for which [`AffineMax::is_subgradient`] decides hull membership exactly.
pub const MAX_HULL_SLOPES: usize = 16;

/// `f(w) = max_k a_k + ⟨g_k, w⟩` over a non-empty family of pieces that share one dimension.
#[derive(Debug, Clone, PartialEq)]
pub struct AffineMax {
    dim: usize,
    offsets: Vec<f64>,
    /// Row-major: slope `k` is `slopes[k*dim..(k+1)*dim]`.
    slopes: Vec<f64>,
}

/// The value of an [`AffineMax`] at a point together with the pieces that attain it.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// `f(w)`.
    pub value: f64,
    /// The indices `k` with `h_k(w) ≥ f(w) − tol`, increasing.
    pub active: Vec<usize>,
}

impl AffineMax {
    /// Builds `max_k a_k + ⟨g_k, w⟩` from `(a_k, g_k)` pairs.
    ///
    /// # Errors
    /// [`CoreError::EmptyFamily`] for no pieces, [`CoreError::LengthMismatch`] when slopes differ in
    /// length, [`CoreError::NonFinite`] for a NaN or infinite offset or slope entry.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), maxmargin_core::CoreError> {
    /// use maxmargin_core::affine::AffineMax;
    /// // The hinge of x = (2, 1), y = +1 as a function of w: max(0, 1 − ⟨(2, 1), w⟩).
    /// let f = AffineMax::new(vec![(0.0, vec![0.0, 0.0]), (1.0, vec![-2.0, -1.0])])?;
    /// assert_eq!(f.value(&[0.0, 0.0])?, 1.0);
    /// assert!(AffineMax::new(vec![]).is_err());
    /// # Ok(()) }
    /// ```
    pub fn new(pieces: Vec<(f64, Vec<f64>)>) -> Result<Self, CoreError> {
        let dim = pieces.first().ok_or(CoreError::EmptyFamily)?.1.len();
        let mut offsets = Vec::with_capacity(pieces.len());
        let mut slopes = Vec::with_capacity(pieces.len() * dim);
        for (a, g) in pieces {
            if g.len() != dim {
                return Err(CoreError::LengthMismatch {
                    what: "slope",
                    expected: dim,
                    got: g.len(),
                });
            }
            offsets.push(a);
            slopes.extend_from_slice(&g);
        }
        check_finite("offset", &offsets)?;
        check_finite("slope entry", &slopes)?;
        Ok(Self {
            dim,
            offsets,
            slopes,
        })
    }

    /// Dimension of `w`.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of pieces.
    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    /// Always false: the family is never empty.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Slope `g_k`.
    pub fn slope(&self, k: usize) -> &[f64] {
        &self.slopes[k * self.dim..(k + 1) * self.dim]
    }

    /// Offset `a_k`.
    pub fn offset(&self, k: usize) -> f64 {
        self.offsets[k]
    }

    fn check_point(&self, w: &[f64]) -> Result<(), CoreError> {
        self.check_vector("point", w)
    }

    /// `v` (a point or a subgradient, named `what`) has the dimension and finite entries.
    fn check_vector(&self, what: &'static str, v: &[f64]) -> Result<(), CoreError> {
        if v.len() != self.dim {
            return Err(CoreError::LengthMismatch {
                what,
                expected: self.dim,
                got: v.len(),
            });
        }
        check_finite(what, v)
    }

    fn piece(&self, k: usize, w: &[f64]) -> f64 {
        self.offsets[k] + self.slope(k).iter().zip(w).map(|(g, x)| g * x).sum::<f64>()
    }

    /// `f(w) = max_k h_k(w)`.
    ///
    /// # Errors
    /// [`CoreError::LengthMismatch`] or [`CoreError::NonFinite`] for a bad point.
    pub fn value(&self, w: &[f64]) -> Result<f64, CoreError> {
        Ok(self.evaluate(w, 0.0)?.value)
    }

    /// The value and the active set `{k : h_k(w) ≥ f(w) − tol}`; `tol = 0` keeps exact ties only.
    ///
    /// # Errors
    /// A bad point, or [`CoreError::InvalidTolerance`].
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), maxmargin_core::CoreError> {
    /// use maxmargin_core::affine::AffineMax;
    /// let f = AffineMax::new(vec![(0.0, vec![0.0]), (1.0, vec![-1.0])])?; // max(0, 1 − z)
    /// assert_eq!(f.evaluate(&[1.0], 0.0)?.active, vec![0, 1]); // the kink
    /// assert_eq!(f.evaluate(&[0.0], 0.0)?.active, vec![1]);
    /// # Ok(()) }
    /// ```
    pub fn evaluate(&self, w: &[f64], tol: f64) -> Result<Evaluation, CoreError> {
        self.check_point(w)?;
        check_tol(tol)?;
        let values: Vec<f64> = (0..self.len()).map(|k| self.piece(k, w)).collect();
        let value = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let active = (0..self.len())
            .filter(|&k| values[k] >= value - tol)
            .collect();
        Ok(Evaluation { value, active })
    }

    /// The active slopes `g_k`, whose convex hull is `∂f(w)`.
    ///
    /// # Errors
    /// As [`AffineMax::evaluate`].
    pub fn active_slopes(&self, w: &[f64], tol: f64) -> Result<Vec<&[f64]>, CoreError> {
        Ok(self
            .evaluate(w, tol)?
            .active
            .into_iter()
            .map(|k| self.slope(k))
            .collect())
    }

    /// One subgradient: the slope of the lowest-index active piece.
    ///
    /// # Errors
    /// As [`AffineMax::evaluate`].
    pub fn subgradient(&self, w: &[f64]) -> Result<Vec<f64>, CoreError> {
        let e = self.evaluate(w, 0.0)?;
        Ok(self.slope(e.active[0]).to_vec())
    }

    /// Whether `g ∈ ∂f(w) = conv{g_k : k active}` up to `tol` (in the residual and in the weights).
    ///
    /// In one dimension the hull is the interval `[min g_k, max g_k]`. Otherwise the test is exact for up to
    /// [`MAX_HULL_SLOPES`] active slopes: by Carathéodory, `g` is in the hull exactly when it is a
    /// non-negative affine combination of some affinely independent subset, and every subset is tried.
    ///
    /// # Errors
    /// A bad point or `g`, [`CoreError::InvalidTolerance`], or [`CoreError::TooManySlopes`].
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), maxmargin_core::CoreError> {
    /// use maxmargin_core::affine::AffineMax;
    /// let f = AffineMax::new(vec![(0.0, vec![0.0]), (1.0, vec![-1.0])])?; // max(0, 1 − z)
    /// assert!(f.is_subgradient(&[1.0], &[-0.25], 1e-12)?);
    /// assert!(!f.is_subgradient(&[1.0], &[0.5], 1e-12)?);
    /// # Ok(()) }
    /// ```
    pub fn is_subgradient(&self, w: &[f64], g: &[f64], tol: f64) -> Result<bool, CoreError> {
        let e = self.evaluate(w, tol)?;
        self.check_vector("subgradient", g)?;
        let slopes: Vec<&[f64]> = e.active.iter().map(|&k| self.slope(k)).collect();
        in_convex_hull(&slopes, g, tol)
    }

    /// The subgradient inequality `f(z) ≥ f(w) + ⟨g, z − w⟩ − tol`, which holds for every `g ∈ ∂f(w)`.
    ///
    /// # Errors
    /// A bad point, `z` or `g`.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), maxmargin_core::CoreError> {
    /// use maxmargin_core::affine::AffineMax;
    /// let f = AffineMax::new(vec![(0.0, vec![0.0]), (1.0, vec![-1.0])])?;
    /// assert!(f.subgradient_inequality(&[1.0], &[-0.5], &[3.0], 0.0)?);
    /// assert!(!f.subgradient_inequality(&[1.0], &[0.5], &[3.0], 0.0)?); // 0.5 is no subgradient
    /// # Ok(()) }
    /// ```
    pub fn subgradient_inequality(
        &self,
        w: &[f64],
        g: &[f64],
        z: &[f64],
        tol: f64,
    ) -> Result<bool, CoreError> {
        check_tol(tol)?;
        let fw = self.value(w)?;
        let fz = self.value(z)?;
        self.check_vector("subgradient", g)?;
        let lin: f64 = g
            .iter()
            .zip(z.iter().zip(w))
            .map(|(g, (z, w))| g * (z - w))
            .sum();
        Ok(fz >= fw + lin - tol)
    }
}

/// Whether `g` is a convex combination of `slopes` up to `tol`; exact for small sets (see
/// [`AffineMax::is_subgradient`]).
///
/// # Errors
/// [`CoreError::TooManySlopes`] beyond [`MAX_HULL_SLOPES`] slopes in more than one dimension,
/// [`CoreError::EmptyFamily`] for no slopes.
///
/// # Examples
/// ```
/// # fn main() -> Result<(), maxmargin_core::CoreError> {
/// use maxmargin_core::affine::in_convex_hull;
/// let s: [&[f64]; 3] = [&[0.0, 0.0], &[1.0, 0.0], &[0.0, 1.0]];
/// assert!(in_convex_hull(&s, &[0.25, 0.25], 1e-12)?);
/// assert!(!in_convex_hull(&s, &[0.75, 0.75], 1e-12)?);
/// # Ok(()) }
/// ```
pub fn in_convex_hull(slopes: &[&[f64]], g: &[f64], tol: f64) -> Result<bool, CoreError> {
    check_tol(tol)?;
    let dim = g.len();
    if slopes.is_empty() {
        return Err(CoreError::EmptyFamily);
    }
    if dim == 1 {
        let lo = slopes.iter().map(|s| s[0]).fold(f64::INFINITY, f64::min);
        let hi = slopes
            .iter()
            .map(|s| s[0])
            .fold(f64::NEG_INFINITY, f64::max);
        return Ok(g[0] >= lo - tol && g[0] <= hi + tol);
    }
    if slopes.len() > MAX_HULL_SLOPES {
        return Err(CoreError::TooManySlopes {
            max: MAX_HULL_SLOPES,
            got: slopes.len(),
        });
    }
    let max_size = slopes.len().min(dim + 1);
    for mask in 1u32..(1u32 << slopes.len()) {
        let members: Vec<usize> = (0..slopes.len()).filter(|i| mask & (1 << i) != 0).collect();
        if members.len() > max_size {
            continue;
        }
        if affine_combination_is_convex(slopes, &members, g, tol) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Solves `g ≈ g_0 + Σ_{i>0} θ_i (g_i − g_0)` in least squares over `members` and checks that the residual
/// is within `tol` and all weights (including `θ_0 = 1 − Σθ_i`) are `≥ −tol`.
fn affine_combination_is_convex(slopes: &[&[f64]], members: &[usize], g: &[f64], tol: f64) -> bool {
    let dim = g.len();
    let base = slopes[members[0]];
    let rhs = DVector::from_iterator(dim, g.iter().zip(base).map(|(g, b)| g - b));
    if members.len() == 1 {
        return rhs.norm() <= tol;
    }
    let cols = members.len() - 1;
    let d = DMatrix::from_fn(dim, cols, |r, c| slopes[members[c + 1]][r] - base[r]);
    let svd = d.clone().svd(true, true);
    let Ok(theta) = svd.solve(&rhs, 1e-12) else {
        return false;
    };
    let residual = (&d * &theta - &rhs).norm();
    let theta0 = 1.0 - theta.sum();
    residual <= tol.max(1e-12 * (1.0 + rhs.norm()))
        && theta0 >= -tol
        && theta.iter().all(|&t| t >= -tol)
}
