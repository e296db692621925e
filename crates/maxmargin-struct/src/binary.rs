//! The binary SVM as a structured space: `y ∈ {−1, +1}`, `ψ(x, y) = (y/2)·x`, 0-1 loss.
//!
//! With this `ψ`, `max_y′ [Δ(y, y′) + ⟨w, ψ(x, y′)⟩ − ⟨w, ψ(x, y)⟩] = max(0, 1 − y⟨w, x⟩)`: the binary hinge
//! exactly.

use crate::error::{StructError, check_call, check_features, check_labelled_call};
use crate::oracle::{Enumerable, OutputSpace, Violation};
use maxmargin_core::vector::SparseVec;

/// Binary outputs `±1` over sparse inputs with `n_features` features.
#[derive(Debug, Clone, PartialEq)]
pub struct BinarySpace {
    n_features: usize,
}

impl BinarySpace {
    /// A binary space over `n_features` features.
    ///
    /// # Errors
    /// [`StructError::Empty`] for no features.
    pub fn new(n_features: usize) -> Result<Self, StructError> {
        crate::error::at_least_one(n_features, "number of features")?;
        Ok(Self { n_features })
    }
}

impl OutputSpace for BinarySpace {
    type Input = SparseVec;
    type Output = i8;

    fn dim(&self) -> usize {
        self.n_features
    }

    fn check_input(&self, x: &SparseVec) -> Result<(), StructError> {
        check_features(x, 0, self.n_features)
    }

    fn check_output(&self, _x: &SparseVec, y: &i8) -> Result<(), StructError> {
        if *y == 1 || *y == -1 {
            Ok(())
        } else {
            Err(StructError::LabelOutOfRange {
                position: 0,
                label: *y as u32,
                n_labels: 2,
            })
        }
    }

    fn for_each_feature(&self, x: &SparseVec, y: &i8, visit: &mut dyn FnMut(usize, f64)) {
        let half = f64::from(*y) / 2.0;
        x.as_row().iter().for_each(|(j, v)| visit(j, half * v));
    }

    fn add_joint_feature(&self, x: &SparseVec, y: &i8, scale: f64, into: &mut [f64]) {
        x.as_row().axpy(scale * f64::from(*y) / 2.0, into);
    }

    fn score(&self, w: &[f64], x: &SparseVec, y: &i8) -> f64 {
        f64::from(*y) / 2.0 * x.as_row().dot(w)
    }

    fn loss(&self, y: &i8, y_hat: &i8) -> f64 {
        if y == y_hat { 0.0 } else { 1.0 }
    }

    /// `+1` when `⟨w, x⟩ > 0`, else `−1` (a tie is `−1`).
    fn decode(&self, w: &[f64], x: &SparseVec) -> Result<i8, StructError> {
        check_call(self, w, x)?;
        Ok(if x.as_row().dot(w) > 0.0 { 1 } else { -1 })
    }

    /// `−y` when `1 − y⟨w, x⟩ > 0`, else `y` (a tie keeps the truth).
    fn loss_augmented(
        &self,
        w: &[f64],
        x: &SparseVec,
        y: &i8,
    ) -> Result<Violation<i8>, StructError> {
        check_labelled_call(self, w, x, y)?;
        let h = 1.0 - f64::from(*y) * x.as_row().dot(w);
        Ok(if h > 0.0 {
            Violation {
                output: -*y,
                loss: 1.0,
                hinge: h,
                bound: None,
            }
        } else {
            Violation {
                output: *y,
                loss: 0.0,
                hinge: 0.0,
                bound: None,
            }
        })
    }
}

impl Enumerable for BinarySpace {
    fn enumerate(&self, _x: &SparseVec) -> Result<Vec<i8>, StructError> {
        Ok(vec![-1, 1])
    }
}
