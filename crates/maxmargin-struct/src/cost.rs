//! Cost matrices `C[y][y′] = Δ(y, y′)` over a finite label set: finite, `≥ 0`, zero on the diagonal, and not
//! necessarily symmetric.

use crate::error::StructError;
use serde::{Deserialize, Serialize};

/// A checked `L × L` cost matrix. The 0-1 loss is kept implicit (no `L²` table: 20,000 classes would take
/// 3.2 GB); other matrices are stored row by row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostMatrix {
    n: usize,
    /// Row-major `C`, or empty for the 0-1 loss.
    c: Vec<f64>,
}

impl CostMatrix {
    /// The 0-1 loss: `C[y][y′] = 1[y ≠ y′]`.
    ///
    /// # Errors
    /// [`StructError::Empty`] for `n = 0`.
    pub fn zero_one(n: usize) -> Result<Self, StructError> {
        crate::error::at_least_one(n, "number of labels")?;
        Ok(Self { n, c: Vec::new() })
    }

    /// Checks a matrix that did not come from a constructor (one read from a file): at least one label, and
    /// either the implicit 0-1 loss or `L²` finite costs, `≥ 0`, zero on the diagonal.
    ///
    /// # Errors
    /// [`StructError::Empty`], [`StructError::LengthMismatch`] or [`StructError::InvalidCost`].
    pub fn validate(&self) -> Result<(), StructError> {
        crate::error::at_least_one(self.n, "number of labels")?;
        if self.c.is_empty() {
            return Ok(());
        }
        if self.n.checked_mul(self.n) != Some(self.c.len()) {
            return Err(StructError::LengthMismatch {
                what: "cost matrix entries",
                expected: self.n.saturating_mul(self.n),
                got: self.c.len(),
            });
        }
        Self::new(self.c.chunks(self.n).map(<[f64]>::to_vec).collect()).map(|_| ())
    }

    /// Whether this is the 0-1 loss kept implicitly.
    pub fn is_zero_one(&self) -> bool {
        self.c.is_empty()
    }

    /// Builds and checks `C[a][b] = f(a, b)`.
    ///
    /// # Errors
    /// [`StructError::Empty`] or [`StructError::InvalidCost`].
    pub fn from_fn(n: usize, f: impl Fn(usize, usize) -> f64) -> Result<Self, StructError> {
        let rows: Vec<Vec<f64>> = (0..n).map(|a| (0..n).map(|b| f(a, b)).collect()).collect();
        Self::new(rows)
    }

    /// Checks rows `C[y] = [Δ(y, 0), ..., Δ(y, L−1)]`.
    ///
    /// # Errors
    /// [`StructError::Empty`], [`StructError::LengthMismatch`] or [`StructError::InvalidCost`].
    ///
    /// # Examples
    /// ```
    /// use maxmargin_struct::CostMatrix;
    /// assert!(CostMatrix::new(vec![vec![0.0, 2.0], vec![0.5, 0.0]]).is_ok()); // asymmetric is fine
    /// assert!(CostMatrix::new(vec![vec![0.0, -1.0], vec![1.0, 0.0]]).is_err());
    /// assert!(CostMatrix::new(vec![vec![1.0, 1.0], vec![1.0, 0.0]]).is_err());
    /// ```
    pub fn new(rows: Vec<Vec<f64>>) -> Result<Self, StructError> {
        let n = rows.len();
        crate::error::at_least_one(n, "number of labels")?;
        let mut c = Vec::with_capacity(n * n);
        for (a, row) in rows.into_iter().enumerate() {
            if row.len() != n {
                return Err(StructError::LengthMismatch {
                    what: "cost matrix row",
                    expected: n,
                    got: row.len(),
                });
            }
            for (b, &v) in row.iter().enumerate() {
                let ok = v.is_finite() && v >= 0.0 && (a != b || v == 0.0);
                if !ok {
                    return Err(StructError::InvalidCost {
                        row: a,
                        col: b,
                        value: v,
                    });
                }
            }
            c.extend(row);
        }
        Ok(Self { n, c })
    }

    /// Number of labels.
    pub fn n_labels(&self) -> usize {
        self.n
    }

    /// `Δ(y, y′)`.
    #[inline]
    pub fn cost(&self, y: usize, y_hat: usize) -> f64 {
        if self.c.is_empty() {
            if y == y_hat { 0.0 } else { 1.0 }
        } else {
            self.c[y * self.n + y_hat]
        }
    }

    /// `Σ_t C[y_t][ŷ_t]`: the loss of a labelling that decomposes over positions (Hamming for the 0-1 matrix).
    pub fn sequence_loss(&self, y: &[u32], y_hat: &[u32]) -> f64 {
        y.iter()
            .zip(y_hat)
            .map(|(&a, &b)| self.cost(a as usize, b as usize))
            .sum()
    }

    /// Adds row `y`, `[Δ(y, y′)]_y′`, to `scores` (one per label).
    #[inline]
    pub fn add_row(&self, y: usize, scores: &mut [f64]) {
        self.add_scaled_row(y, 1.0, scores);
    }

    /// Adds row `y` times `scale` to `scores` (one per label).
    #[inline]
    pub fn add_scaled_row(&self, y: usize, scale: f64, scores: &mut [f64]) {
        if self.c.is_empty() {
            for (l, s) in scores.iter_mut().enumerate() {
                if l != y {
                    *s += scale;
                }
            }
        } else {
            for (s, c) in scores.iter_mut().zip(&self.c[y * self.n..(y + 1) * self.n]) {
                *s += scale * c;
            }
        }
    }
}
