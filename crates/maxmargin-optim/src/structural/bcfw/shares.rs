//! What BCFW keeps per example and the scratch of a step: the shares `w_i` (dense, sparse, or pairwise
//! atoms), the weighted average's running sums, and the dense scatter a corner is built in.

use super::pairwise;
use maxmargin_core::vector::SparseVec;
use serde::{Deserialize, Serialize};

/// The weighted running sums behind `w̄` and `ℓ̄`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct WeightedAverage {
    pub(super) u: Vec<f64>,
    pub(super) c_sum: f64,
    pub(super) ell_sum: f64,
}

/// Per-example shares `w_i` are stored densely when `n × dim` doubles fit in this many bytes: a share's
/// support (features of `x_i` times every label seen) can exceed `dim` on small spaces such as OCR, where
/// sparse merges would cost more than dense passes.
pub const DENSE_SHARES_MAX_BYTES: usize = 256 << 20;

/// Pairwise steps build their corner in a dense scratch up to this dimension (8 MiB of values).
pub(super) const SCATTER_MAX_DIM: usize = 1 << 20;

/// The per-example shares `w_i`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) enum Shares {
    /// `n × dim`, row-major, with each share's squared norm kept up to date (so a step reads each share
    /// once, not twice).
    Dense {
        /// The shares.
        shares: Vec<f64>,
        /// `‖w_i‖²`.
        sq: Vec<f64>,
    },
    /// One sparse vector per example.
    Sparse(Vec<SparseVec>),
    /// Pairwise steps: each block's active corners.
    Atoms(Vec<pairwise::Block>),
}

impl Shares {
    /// Whether decoded shares are `n` blocks in `dim` dimensions with finite values.
    pub(super) fn fits(&self, n: usize, dim: usize) -> bool {
        match self {
            Self::Dense { shares, sq } => {
                Some(shares.len()) == n.checked_mul(dim)
                    && sq.len() == n
                    && shares.iter().chain(sq).all(|v| v.is_finite())
            }
            Self::Sparse(v) => v.len() == n && v.iter().all(|s| s.fits(dim)),
            Self::Atoms(blocks) => blocks.len() == n && blocks.iter().all(|b| b.fits(dim)),
        }
    }

    /// The convex combination `(1 − t)·before + t·after` of two states of the same blocks (a round over
    /// ranks takes each rank's block steps only part of the way, `t`).
    pub(super) fn mix(before: &Self, after: Self, t: f64) -> Self {
        match (before, after) {
            (Self::Dense { shares: b, .. }, Self::Dense { shares: a, sq }) => {
                let shares: Vec<f64> = b.iter().zip(&a).map(|(b, a)| b + t * (a - b)).collect();
                let dim = shares.len() / sq.len().max(1);
                let sq = shares
                    .chunks(dim.max(1))
                    .map(|c| c.iter().map(|v| v * v).sum())
                    .collect();
                Self::Dense { shares, sq }
            }
            (Self::Sparse(b), Self::Sparse(a)) => Self::Sparse(
                b.iter()
                    .zip(&a)
                    .map(|(b, a)| SparseVec::lincomb(1.0 - t, b, t, a))
                    .collect(),
            ),
            (Self::Atoms(b), Self::Atoms(a)) => Self::Atoms(
                b.iter()
                    .zip(a)
                    .map(|(b, a)| pairwise::Block::mix(b, a, t))
                    .collect(),
            ),
            // The same state keeps its kind: a round never changes it.
            (_, after) => after,
        }
    }
}

/// A dense scratch vector for the corner `w_s` of a dense-share step: `ψ(y_i)` and `ψ(ŷ)` are scattered
/// into it in `O(nnz)` (no sorted sparse vectors: building and merging them cost a fifth of OCR's run), and
/// it is cleared after the step. Not part of the state's meaning: never saved.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Scatter {
    pub(super) acc: Vec<f64>,
    pub(super) mark: Vec<bool>,
    pub(super) touched: Vec<usize>,
}

impl Scatter {
    pub(super) fn add(&mut self, j: usize, v: f64) {
        if j >= self.acc.len() {
            return;
        }
        if !self.mark[j] {
            self.mark[j] = true;
            self.touched.push(j);
        }
        self.acc[j] += v;
    }

    pub(super) fn ensure(&mut self, dim: usize) {
        if self.acc.len() != dim {
            self.acc = vec![0.0; dim];
            self.mark = vec![false; dim];
            self.touched.clear();
        }
    }

    /// The nonzero entries as a sorted sparse vector; the scratch is cleared.
    pub(super) fn take_sorted(&mut self) -> SparseVec {
        let mut pairs: Vec<(u32, f64)> = self
            .touched
            .iter()
            .filter(|&&j| self.acc[j] != 0.0)
            .map(|&j| (j as u32, self.acc[j]))
            .collect();
        pairs.sort_unstable_by_key(|p| p.0);
        self.clear();
        let (idx, val) = pairs.into_iter().unzip();
        SparseVec::new(idx, val).unwrap_or_default()
    }

    pub(super) fn clear(&mut self) {
        for &j in &self.touched {
            self.acc[j] = 0.0;
            self.mark[j] = false;
        }
        self.touched.clear();
    }
}
