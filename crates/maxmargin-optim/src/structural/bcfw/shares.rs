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

/// Pairwise steps may sum a corner in a dense scratch up to this dimension (64 MiB of values, beside a `w` of
/// as many): below [`SORT_MIN_DIM`] every corner out of order, above it those of more than
/// [`DIFFERENCE_BUFFER`] entries; beyond this dimension every corner is sorted in the buffer. (CoNLL-2000
/// chunking, 4.4 million weights, went from sorted sparse corners to the scratch when this rose from 2²⁰:
/// 0.9× the time, peak memory 848 → 610 MB; its short corners are now sorted in the buffer.)
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
    /// Frank–Wolfe shares of `n` blocks in `dim` dimensions, all zero: dense when they fit in `budget` bytes
    /// ([`DENSE_SHARES_MAX_BYTES`], shared out among blocks in one process), else sparse.
    pub(super) fn frank_wolfe(n: usize, dim: usize, budget: usize) -> Self {
        if n.saturating_mul(dim).saturating_mul(8) <= budget {
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
    pub(super) fn of_atoms(
        blocks: &[pairwise::Block],
        dim: usize,
        scale: f64,
        budget: usize,
    ) -> Self {
        let mut out = Self::frank_wolfe(blocks.len(), dim, budget);
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

/// The entries of `w` a block's steps wrote in a round of blocks in one process ([`super::blocks`]), each
/// once, in the order first written; `all` after a dense share's step, which writes every entry. Not part
/// of the state's meaning: never saved.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Written {
    marks: Marks,
    pub(super) indices: Vec<u32>,
    pub(super) all: bool,
}

impl Written {
    /// Entry `j` is about to be written.
    pub(super) fn note(&mut self, j: usize) {
        if !self.all && self.marks.insert(j) {
            self.indices.push(j as u32);
        }
    }

    /// Empty again for the next round (its marks kept allocated).
    pub(super) fn clear(&mut self) {
        self.marks.clear(&self.indices);
        self.indices.clear();
        self.all = false;
    }
}

/// A set of indices as bits (a 2-million-wide `w` in 256 kB, which stays in cache where a byte per entry
/// would not).
#[derive(Debug, Clone, Default, PartialEq)]
struct Marks(Vec<u64>);

impl Marks {
    /// Adds `j`; whether it was new.
    fn insert(&mut self, j: usize) -> bool {
        let (word, bit) = (j / 64, 1u64 << (j % 64));
        if word >= self.0.len() {
            self.0.resize(word + 1, 0);
        }
        let new = self.0[word] & bit == 0;
        self.0[word] |= bit;
        new
    }

    /// Removes `indices`, the set's members, leaving it empty.
    fn clear(&mut self, indices: &[u32]) {
        for &j in indices {
            if let Some(w) = self.0.get_mut(j as usize / 64) {
                *w = 0;
            }
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

/// The entries of a difference sorted in a buffer at most (16 bytes each); more add up in the `dim`-wide
/// scratch.
const DIFFERENCE_BUFFER: usize = 1 << 14;
/// Up to this dimension the scratch stays in cache, and a difference that comes out of order adds up there
/// at once (OCR chains, 4,000 weights: sorting took 4% more time than the scratch).
const SORT_MIN_DIM: usize = 1 << 16;

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
    /// without zeros. Entries that come in increasing order (a multiclass difference) are kept as they come.
    /// Past [`SORT_MIN_DIM`] dimensions, out-of-order entries are kept too, up to [`DIFFERENCE_BUFFER`] of
    /// them, then sorted by index (stably: the entries of one index add up in the order they came, from zero,
    /// the numbers the scratch would give) and summed: on CoNLL-2000 chains, whose differences come token by
    /// token, sorting a few hundred entries costs a third of scattering them over 4 million weights. Other
    /// differences add up in the `dim`-wide scratch in the order they came, up to [`SCATTER_MAX_DIM`];
    /// beyond it a scratch would be the largest thing held, and the buffer keeps every entry (16 bytes an
    /// entry, in proportion to the two `ψ` visited). Entries at `dim` or beyond are dropped, and the buffer
    /// is left empty.
    pub(super) fn difference(
        &mut self,
        emit: impl FnOnce(&mut dyn FnMut(usize, f64)),
        dim: usize,
    ) -> SparseVec {
        let mut pairs = std::mem::take(&mut self.pairs);
        pairs.clear();
        let (mut sorted, mut scattered) = (true, false);
        emit(&mut |j, v| {
            if j >= dim {
                return;
            }
            if !scattered {
                let in_order = pairs.last().is_none_or(|p| p.0 < j);
                let sort_later = dim > SORT_MIN_DIM && pairs.len() < DIFFERENCE_BUFFER;
                if (sorted && in_order) || sort_later || dim > SCATTER_MAX_DIM {
                    sorted &= in_order;
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
            if !sorted {
                pairs.sort_by_key(|p| p.0);
            }
            // Each index's entries from zero, in the order they came.
            let (idx, val) = (pairs.chunk_by(|a, b| a.0 == b.0))
                .map(|run| (run[0].0 as u32, run.iter().fold(0.0, |sum, p| sum + p.1)))
                .filter(|p| p.1 != 0.0)
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

    /// The sum of `entries` index by index, each from zero in the order they come (what the scratch adds):
    /// what a difference must equal bit for bit.
    fn summed(entries: &[(usize, f64)], dim: usize) -> SparseVec {
        let mut sums = std::collections::BTreeMap::new();
        for &(j, v) in entries.iter().filter(|e| e.0 < dim) {
            *sums.entry(j as u32).or_insert(0.0) += v;
        }
        let (idx, val) = sums.into_iter().filter(|e| e.1 != 0.0).unzip();
        SparseVec::new(idx, val).unwrap()
    }

    /// Entries in any order, repeated or cancelling, sum as the scratch adds them bit for bit, whether they
    /// are sorted in the buffer, added up in the scratch past it, or all buffered past SCATTER_MAX_DIM; zeros
    /// and entries beyond `dim` are dropped, and nothing is kept for the next step.
    #[test]
    fn a_difference_is_the_scratchs_sum_bit_for_bit() {
        let mut s = Scatter::default();
        let sorted = [(1, 2.0), (4, 0.0), (7, -1.5), (9, 3.0)];
        let got = s.difference(|visit| sorted.iter().for_each(|&(j, v)| visit(j, v)), 10);
        assert_eq!(
            got,
            SparseVec::new(vec![1, 7, 9], vec![2.0, -1.5, 3.0]).unwrap()
        );
        assert!(s.acc.is_empty(), "sorted entries need no scratch");
        let unsorted = [(9, 1.0), (1, 2.0), (5, 4.0), (7, -1.5), (9, 2.0), (5, -4.0)];
        let got2 = s.difference(|visit| unsorted.iter().for_each(|&(j, v)| visit(j, v)), 10);
        assert_eq!(got2, got);
        let wide = s.difference(
            |visit| [(3, 1.0), (12, 5.0)].iter().for_each(|&(j, v)| visit(j, v)),
            10,
        );
        assert_eq!(wide, SparseVec::new(vec![3], vec![1.0]).unwrap());
        assert!(s.pairs.is_empty(), "nothing is kept between steps");
        // Sums whose rounding depends on the order (0.1 + 0.2 + 0.3 ≠ 0.3 + 0.2 + 0.1), short and past the
        // buffer, against the scratch.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for (len, dim) in [
            (50, 300),
            (50, SORT_MIN_DIM + 1),
            (DIFFERENCE_BUFFER + 7, SORT_MIN_DIM + 1),
            (DIFFERENCE_BUFFER + 7, SCATTER_MAX_DIM + 1),
        ] {
            let entries: Vec<(usize, f64)> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    let v = [0.1, 0.2, 0.3, -0.7, 1e-17][(state >> 40) as usize % 5];
                    // Most entries within the first 300 (repeats), a few anywhere up to past `dim`.
                    let j = (state >> 8) as usize;
                    let j = if j.is_multiple_of(7) {
                        j % (dim + 5)
                    } else {
                        j % 300
                    };
                    (j, v)
                })
                .collect();
            let got = s.difference(|visit| entries.iter().for_each(|&(j, v)| visit(j, v)), dim);
            let want = summed(&entries, dim);
            assert_eq!(
                got.as_row().indices(),
                want.as_row().indices(),
                "{len} entries"
            );
            let bits = |v: &SparseVec| {
                v.as_row()
                    .values()
                    .iter()
                    .map(|x| x.to_bits())
                    .collect::<Vec<_>>()
            };
            assert_eq!(bits(&got), bits(&want), "{len} entries");
            assert!(s.touched.is_empty() && !s.mark.contains(&true) && s.pairs.is_empty());
            assert!(
                s.acc.len() <= SCATTER_MAX_DIM,
                "no scratch past SCATTER_MAX_DIM"
            );
        }
        // An in-order run longer than the buffer, then entries out of order: into the scratch, the same sums.
        let dim = SORT_MIN_DIM + 1;
        let mut entries: Vec<(usize, f64)> =
            (0..DIFFERENCE_BUFFER + 10).map(|j| (j, 0.1)).collect();
        entries.extend([(5, 0.2), (DIFFERENCE_BUFFER + 3, 0.3), (dim + 1, 1.0)]);
        let got = s.difference(|visit| entries.iter().for_each(|&(j, v)| visit(j, v)), dim);
        assert_eq!(got, summed(&entries, dim));
        assert!(s.touched.is_empty() && s.pairs.is_empty());
    }
}
