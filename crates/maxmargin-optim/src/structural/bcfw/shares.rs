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

/// Pairwise steps build their corner in a dense scratch up to this dimension (64 MiB of values, beside a `w`
/// of as many). CoNLL-2000 chunking (4.4 million weights) went from sorted sparse corners to the scratch when
/// this rose from 2²⁰: the same model bits, 0.9× the time, and peak memory 848 → 610 MB (the sorted corners'
/// allocations were the rest).
pub(super) const SCATTER_MAX_DIM: usize = 1 << 23;

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
    /// Frank–Wolfe shares of `n` blocks in `dim` dimensions, all zero: dense when they fit in
    /// [`DENSE_SHARES_MAX_BYTES`], else sparse.
    pub(super) fn frank_wolfe(n: usize, dim: usize) -> Self {
        if n.saturating_mul(dim).saturating_mul(8) <= DENSE_SHARES_MAX_BYTES {
            Self::Dense {
                shares: vec![0.0; n * dim],
                sq: vec![0.0; n],
            }
        } else {
            Self::Sparse(vec![SparseVec::default(); n])
        }
    }

    /// The Frank–Wolfe shares `w_i = Σ weight·u/(λn)` of pairwise blocks (`scale = 1/(λn)`): the same
    /// point of the dual, held without its atoms.
    pub(super) fn of_atoms(blocks: &[pairwise::Block], dim: usize, scale: f64) -> Self {
        let mut out = Self::frank_wolfe(blocks.len(), dim);
        for (i, b) in blocks.iter().enumerate() {
            let share = b.combination(scale);
            match &mut out {
                Self::Dense { shares, sq } => {
                    let row = &mut shares[i * dim..(i + 1) * dim];
                    for (j, v) in share.as_row().iter() {
                        row[j] = v;
                    }
                    sq[i] = share.as_row().norm_sq();
                }
                Self::Sparse(v) => v[i] = share,
                Self::Atoms(_) => {}
            }
        }
        out
    }

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

    /// Block `i`'s share as it is now, to take a round's steps on it part of the way later
    /// ([`Shares::mix_block`]).
    pub(super) fn before(&self, i: usize) -> Before {
        match self {
            Self::Dense { shares, sq } => {
                let dim = shares.len() / sq.len();
                Before::Dense(shares[i * dim..(i + 1) * dim].to_vec())
            }
            Self::Sparse(v) => Before::Sparse(v[i].clone()),
            Self::Atoms(blocks) => Before::Atoms(blocks[i].clone()),
        }
    }

    /// Block `i`'s share becomes the convex combination `(1 − t)·before + t·now` (a round over ranks takes
    /// each rank's block steps only part of the way, `t`): a point of the block's domain.
    pub(super) fn mix_block(&mut self, i: usize, before: Before, t: f64) {
        match (self, before) {
            (Self::Dense { shares, sq }, Before::Dense(b)) => {
                let dim = b.len();
                let row = &mut shares[i * dim..(i + 1) * dim];
                for (a, b) in row.iter_mut().zip(&b) {
                    *a = b + t * (*a - b);
                }
                sq[i] = row.iter().map(|v| v * v).sum();
            }
            (Self::Sparse(v), Before::Sparse(b)) => {
                v[i] = SparseVec::lincomb(1.0 - t, &b, t, &v[i]);
            }
            (Self::Atoms(blocks), Before::Atoms(b)) => {
                let after = std::mem::take(&mut blocks[i]);
                blocks[i] = pairwise::Block::mix(&b, after, t);
            }
            // A round never changes the kind of the shares.
            _ => {}
        }
    }

    /// Every block's `λ⟨w_i, w⟩ − ℓ_i` at `w` (the block gap less `H_i(w)/n`), for `n` examples.
    pub(super) fn values(&self, w: &[f64], ell_i: &[f64], lambda: f64, n: f64) -> Vec<f64> {
        match self {
            Self::Dense { shares, .. } => shares
                .chunks_exact(w.len().max(1))
                .zip(ell_i)
                .map(|(s, l)| lambda * s.iter().zip(w).map(|(a, b)| a * b).sum::<f64>() - l)
                .collect(),
            Self::Sparse(v) => v
                .iter()
                .zip(ell_i)
                .map(|(s, l)| lambda * s.as_row().dot(w) - l)
                .collect(),
            Self::Atoms(blocks) => blocks.iter().map(|b| b.value(w, n)).collect(),
        }
    }
}

/// One block's share before a round's steps ([`Shares::before`]).
pub(super) enum Before {
    Dense(Vec<f64>),
    Sparse(SparseVec),
    Atoms(pairwise::Block),
}

/// A dense scratch vector for the corner `w_s` of a dense-share step: `ψ(y_i)` and `ψ(ŷ)` are scattered
/// into it in `O(nnz)` (no sorted sparse vectors: building and merging them cost a fifth of OCR's run), and
/// it is cleared after the step. Not part of the state's meaning: never saved.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Scatter {
    pub(super) acc: Vec<f64>,
    pub(super) mark: Vec<bool>,
    pub(super) touched: Vec<usize>,
    /// The entries of a difference as they came ([`Scatter::difference`]).
    pairs: Vec<(usize, f64)>,
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

    /// The sum of the entries `emit` visits (an index may come more than once), as a sorted sparse vector
    /// without zeros. While the entries come in strictly increasing order (a multiclass difference: two
    /// classes' copies of `x`) they are kept as they come, the same numbers the scratch would give; at the
    /// first that does not, those kept so far and the rest add up in the scratch, `dim` wide, in the order
    /// they came. So only a sorted run is ever buffered, and the buffer is left empty.
    pub(super) fn difference(
        &mut self,
        emit: impl FnOnce(&mut dyn FnMut(usize, f64)),
        dim: usize,
    ) -> SparseVec {
        let mut pairs = std::mem::take(&mut self.pairs);
        pairs.clear();
        let mut scattered = false;
        emit(&mut |j, v| {
            if !scattered {
                if pairs.last().is_none_or(|p| p.0 < j) && j < dim {
                    pairs.push((j, v));
                    return;
                }
                self.ensure(dim);
                for &(i, u) in &pairs {
                    self.add(i, u);
                }
                pairs.clear();
                scattered = true;
            }
            self.add(j, v);
        });
        let out = if scattered {
            self.take_sorted()
        } else {
            let (idx, val) = (pairs.iter())
                .filter(|p| p.1 != 0.0)
                .map(|&(j, v)| (j as u32, v))
                .unzip();
            SparseVec::new(idx, val).unwrap_or_default()
        };
        pairs.clear();
        self.pairs = pairs;
        out
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Entries in increasing order are taken as they come, others add up in the scratch: the same sparse
    /// vector either way, without zeros, and the scratch clean for the next step.
    #[test]
    fn a_difference_is_the_same_sorted_or_scattered() {
        let mut s = Scatter::default();
        let sorted = [(1, 2.0), (4, 0.0), (7, -1.5), (9, 3.0)];
        let got = s.difference(|visit| sorted.iter().for_each(|&(j, v)| visit(j, v)), 10);
        assert_eq!(
            got,
            SparseVec::new(vec![1, 7, 9], vec![2.0, -1.5, 3.0]).unwrap()
        );
        assert!(s.acc.is_empty(), "sorted entries need no scratch");
        // The same sum, visited out of order, with a repeated index and a cancelling pair.
        let scattered = [(9, 1.0), (1, 2.0), (5, 4.0), (7, -1.5), (9, 2.0), (5, -4.0)];
        let got2 = s.difference(|visit| scattered.iter().for_each(|&(j, v)| visit(j, v)), 10);
        assert_eq!(got2, got);
        assert!(s.touched.is_empty() && s.acc.iter().all(|&a| a == 0.0) && !s.mark.contains(&true));
        // Entries beyond `dim` are dropped, as the scratch drops them.
        let wide = s.difference(
            |visit| [(3, 1.0), (12, 5.0)].iter().for_each(|&(j, v)| visit(j, v)),
            10,
        );
        assert_eq!(wide, SparseVec::new(vec![3], vec![1.0]).unwrap());
        assert!(s.pairs.is_empty(), "nothing is kept between steps");
    }
}
