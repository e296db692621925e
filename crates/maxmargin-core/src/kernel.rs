//! Kernels `K(x, z)` on sparse rows: linear, Gaussian (RBF), polynomial and sigmoid, as LIBSVM defines them.
//!
//! | kernel | `K(x, z)` |
//! |---|---|
//! | linear | `⟨x, z⟩` |
//! | rbf | `exp(−γ‖x − z‖²)` |
//! | poly | `(γ⟨x, z⟩ + coef0)^degree` |
//! | sigmoid | `tanh(γ⟨x, z⟩ + coef0)` (not positive semi-definite for every γ, coef0) |
//!
//! The RBF kernel is computed from the dot product and the squared norms, `‖x − z‖² = ‖x‖² + ‖z‖² − 2⟨x, z⟩`
//! (clamped at 0 against rounding), so a row of kernel values costs one sparse dot per pair.

use crate::vector::SparseRow;
use serde::{Deserialize, Serialize};

/// A kernel and its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kernel {
    /// `⟨x, z⟩`.
    Linear,
    /// `exp(−γ‖x − z‖²)`.
    Rbf {
        /// `γ > 0`.
        gamma: f64,
    },
    /// `(γ⟨x, z⟩ + coef0)^degree`.
    Poly {
        /// `γ > 0`.
        gamma: f64,
        /// The constant term.
        coef0: f64,
        /// The degree, at least 1.
        degree: u32,
    },
    /// `tanh(γ⟨x, z⟩ + coef0)`.
    Sigmoid {
        /// `γ > 0`.
        gamma: f64,
        /// The constant term.
        coef0: f64,
    },
}

impl Kernel {
    /// `K(x, z)` from their dot product and squared norms.
    ///
    /// # Examples
    /// ```
    /// use maxmargin_core::kernel::Kernel;
    /// let rbf = Kernel::Rbf { gamma: 0.5 };
    /// // ‖x − z‖² = 1 + 4 − 2·0 = 5.
    /// assert!((rbf.from_dot(0.0, 1.0, 4.0) - (-2.5f64).exp()).abs() < 1e-15);
    /// let poly = Kernel::Poly { gamma: 1.0, coef0: 1.0, degree: 2 };
    /// assert_eq!(poly.from_dot(2.0, 0.0, 0.0), 9.0);
    /// ```
    #[inline]
    pub fn from_dot(&self, dot: f64, x_sq: f64, z_sq: f64) -> f64 {
        match *self {
            Self::Linear => dot,
            Self::Rbf { gamma } => (-gamma * (x_sq + z_sq - 2.0 * dot).max(0.0)).exp(),
            Self::Poly {
                gamma,
                coef0,
                degree,
            } => (gamma * dot + coef0).powi(degree as i32),
            Self::Sigmoid { gamma, coef0 } => (gamma * dot + coef0).tanh(),
        }
    }

    /// `K(x, z)` of two sparse rows.
    pub fn eval(&self, x: SparseRow<'_>, z: SparseRow<'_>) -> f64 {
        let dot = x.dot_sparse(&z);
        match self {
            Self::Rbf { .. } => self.from_dot(dot, x.norm_sq(), z.norm_sq()),
            _ => self.from_dot(dot, 0.0, 0.0),
        }
    }

    /// Whether the kernel needs the rows' squared norms (RBF).
    pub fn needs_norms(&self) -> bool {
        matches!(self, Self::Rbf { .. })
    }

    /// `K(x, x)` from `‖x‖²`.
    pub fn self_value(&self, x_sq: f64) -> f64 {
        self.from_dot(x_sq, x_sq, x_sq)
    }

    /// The kernel's name as the command line spells it.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Linear => "linear",
            Self::Rbf { .. } => "rbf",
            Self::Poly { .. } => "poly",
            Self::Sigmoid { .. } => "sigmoid",
        }
    }

    /// Checks the parameters: `γ` finite and `> 0`, `coef0` finite, a degree from 1 to 100.
    ///
    /// # Errors
    /// `(parameter, value, reason)` of the first bad one.
    ///
    /// # Examples
    /// ```
    /// use maxmargin_core::kernel::Kernel;
    /// assert!(Kernel::Rbf { gamma: 0.1 }.check().is_ok());
    /// assert_eq!(Kernel::Rbf { gamma: 0.0 }.check().unwrap_err().0, "gamma");
    /// ```
    pub fn check(&self) -> Result<(), (&'static str, f64, &'static str)> {
        let gamma_ok = |g: f64| {
            if g.is_finite() && g > 0.0 {
                Ok(())
            } else {
                Err(("gamma", g, "must be finite and > 0"))
            }
        };
        let coef_ok = |c: f64| {
            if c.is_finite() {
                Ok(())
            } else {
                Err(("coef0", c, "must be finite"))
            }
        };
        match *self {
            Self::Linear => Ok(()),
            Self::Rbf { gamma } => gamma_ok(gamma),
            Self::Poly {
                gamma,
                coef0,
                degree,
            } => {
                gamma_ok(gamma)?;
                coef_ok(coef0)?;
                if (1..=100).contains(&degree) {
                    Ok(())
                } else {
                    Err(("degree", f64::from(degree), "must be from 1 to 100"))
                }
            }
            Self::Sigmoid { gamma, coef0 } => {
                gamma_ok(gamma)?;
                coef_ok(coef0)
            }
        }
    }
}

/// scikit-learn's `gamma="scale"`: `1 / (d · Var(X))`, the variance over every entry of the `n × d` matrix
/// (zeros included); 1 when the variance is 0.
///
/// # Examples
/// ```
/// use maxmargin_core::vector::SparseRows;
/// let x = SparseRows::from_dense_rows(&[&[1.0, 0.0], &[-1.0, 0.0]]).unwrap();
/// // Entries 1, 0, −1, 0: mean 0, variance 1/2, d = 2.
/// assert_eq!(maxmargin_core::kernel::gamma_scale(&x), 1.0);
/// ```
pub fn gamma_scale(x: &crate::vector::SparseRows) -> f64 {
    let (n, d) = (x.n_rows() as f64, x.n_features() as f64);
    let count = n * d;
    if count == 0.0 {
        return 1.0;
    }
    let (mut sum, mut sq) = (0.0, 0.0);
    for r in x.rows() {
        for &v in r.values() {
            sum += v;
            sq += v * v;
        }
    }
    let mean = sum / count;
    let var = (sq / count - mean * mean).max(0.0);
    if var > 0.0 && var.is_finite() {
        1.0 / (d * var)
    } else {
        1.0
    }
}
