//! Pairwise steps for BCFW (block-coordinate pairwise Frank–Wolfe; Lacoste-Julien & Jaggi 2015, Osokin et
//! al. 2016, "Minding the gaps").
//!
//! Each block's dual is a convex combination of its corners: the true output (weight `truth`, corner 0) and
//! atoms `u = ψ(x_i, y_i) − ψ(x_i, y)` with loss `Δ(y_i, y)`. A step moves weight from the *away* atom (the
//! active one whose corner is worst for the dual now, largest `g = (⟨w, u⟩ − Δ)/n`) to the oracle's corner
//! `ŷ` (smallest `g`), with the exact line search on `λ/2‖w‖² − ℓ` capped by the away atom's weight. A
//! Frank–Wolfe step shrinks every atom alike and zig-zags when a block's optimum lies inside a face (many
//! classes, a few of them active); a pairwise step empties a wrong atom in one move, so the gap falls
//! linearly in practice. The cost follows the change: `ψ(y_i) − ψ(ŷ)` and the away atom, both sparse (for
//! Crammer–Singer's ψ, two class blocks), never a dense share.
//!
//! Memory is the active atoms: at most [`MAX_ATOMS`] per example; past that the two lightest atoms merge
//! into their weighted mean (a point of the block's domain, so `w` and the dual do not change).

use maxmargin_core::vector::SparseVec;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The most atoms kept per example (besides the true output).
pub const MAX_ATOMS: usize = 24;

/// An atom's entry: a `u32` index and an `f64` value.
pub(super) const ATOM_ENTRY_BYTES: usize = 12;

/// One atom of a block: `u = ψ(y_i) − ψ(y)`, `‖u‖²`, `Δ(y_i, y)` and its weight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Atom {
    /// Shared, so that a block's state before a round's steps is kept without copying its atoms (stored
    /// as the vector itself).
    u: Arc<SparseVec>,
    sq: f64,
    loss: f64,
    weight: f64,
}

/// A block's convex combination: the true output's weight and the atoms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Block {
    truth: f64,
    atoms: Vec<Atom>,
}

impl Block {
    /// Whether a decoded block is a convex combination of atoms in `dim` dimensions, each with its `‖u‖²`.
    pub(super) fn fits(&self, dim: usize) -> bool {
        let total = self.truth + self.atoms.iter().map(|a| a.weight).sum::<f64>();
        self.truth.is_finite()
            && self.truth >= 0.0
            && (total - 1.0).abs() <= 1e-6
            && self.atoms.iter().all(|a| {
                a.u.fits(dim)
                    && a.sq.is_finite()
                    // A step to an active atom takes its stored ‖u‖² (written as the norm, so equal).
                    && (a.sq - a.u.as_row().norm_sq()).abs() <= 1e-9 * a.sq.abs().max(1.0)
                    && a.loss.is_finite()
                    && a.weight.is_finite()
                    && a.weight >= 0.0
            })
    }
}

/// `⟨w, u⟩` in four partial sums: the scan values every active atom at each step, and one running sum
/// waits on each addition's latency (on OCR chains, whose `w` sits in cache, that wait was the scan's time).
/// Entries beyond `w` count 0, as [`maxmargin_core::vector::SparseRow::dot`]'s do.
fn dot_wide(u: &SparseVec, w: &[f64]) -> f64 {
    let row = u.as_row();
    let (idx, val) = (row.indices(), row.values());
    let at = |t: usize| w.get(idx[t] as usize).map_or(0.0, |wj| val[t] * wj);
    let mut s = [0.0; 4];
    let whole = idx.len() / 4 * 4;
    for t in (0..whole).step_by(4) {
        s[0] += at(t);
        s[1] += at(t + 1);
        s[2] += at(t + 2);
        s[3] += at(t + 3);
    }
    for t in whole..idx.len() {
        s[t - whole] += at(t);
    }
    (s[0] + s[1]) + (s[2] + s[3])
}

impl Default for Block {
    fn default() -> Self {
        Self {
            truth: 1.0,
            atoms: Vec::new(),
        }
    }
}

/// A block's active corners at some `w` ([`Block::scan`]).
pub(super) struct Scan {
    away: Option<usize>,
    g_away: f64,
    best: Option<usize>,
    g_best: f64,
    value: f64,
}

impl Scan {
    /// The gap the active corners alone can close: `Σ weight·g − min g`, a lower bound on the block's gap.
    pub(super) fn cache_gap(&self) -> f64 {
        self.value - self.g_best
    }
}

/// Where a pairwise step moves weight: an active atom (by index), or a corner `(u, Δ)` that may be new
/// (the oracle's, or the true output's: `u` empty, `Δ` 0).
enum Target {
    Atom(usize),
    Corner(SparseVec, f64),
}

/// What a pairwise step changed: `w += scale·d` (with `d` sparse) and `ℓ_i`'s new value times `n`.
pub(super) struct Move {
    /// The direction `u_s − u_a` in `ψ` units.
    pub d: SparseVec,
    /// `γ/(λn)`: the factor on `d` for `w`.
    pub scale: f64,
    /// The block's `Σ weight·Δ` after the step (`n ℓ_i`).
    pub loss_sum: f64,
}

impl Block {
    /// `Σ weight·Δ` over the atoms (`n ℓ_i`).
    fn loss_sum(&self) -> f64 {
        self.atoms.iter().map(|a| a.weight * a.loss).sum()
    }

    /// The memory the block's atoms hold: their entries (an index and a value each), the atoms, and each
    /// vector's shared allocation (its two counts and the vector).
    pub(super) fn bytes(&self) -> usize {
        const SHARED: usize = std::mem::size_of::<SparseVec>() + 2 * std::mem::size_of::<usize>();
        (self.atoms.iter())
            .map(|a| a.u.as_row().nnz() * ATOM_ENTRY_BYTES + std::mem::size_of::<Atom>() + SHARED)
            .sum()
    }

    /// `scale·Σ weight·u` over the atoms: with `scale = 1/(λn)`, the block's share `w_i`.
    pub(super) fn combination(&self, scale: f64) -> SparseVec {
        (self.atoms.iter()).fold(SparseVec::default(), |acc, a| {
            SparseVec::lincomb(1.0, &acc, scale * a.weight, &a.u)
        })
    }

    /// How many atoms are active.
    pub(super) fn len(&self) -> usize {
        self.atoms.len()
    }

    /// `λ⟨w_i, w⟩ − ℓ_i = Σ weight·(⟨w, u⟩ − Δ)/n`: the block's part of the gap besides `H_i(w)/n`.
    pub(super) fn value(&self, w: &[f64], n: f64) -> f64 {
        self.scan(w, n).value
    }

    /// The active corners at `w`, for `n` examples: each atom's `g = (⟨w, u⟩ − Δ)/n` (the true output's is
    /// 0), the away corner (largest `g` among those with weight), the best (smallest `g`, the true output
    /// included whatever its weight) and the block's `Σ weight·g`.
    pub(super) fn scan(&self, w: &[f64], n: f64) -> Scan {
        let mut scan = Scan {
            away: None,
            g_away: if self.truth > 0.0 {
                0.0
            } else {
                f64::NEG_INFINITY
            },
            best: None,
            g_best: 0.0,
            value: 0.0,
        };
        for (k, a) in self.atoms.iter().enumerate() {
            let g = (dot_wide(&a.u, w) - a.loss) / n;
            scan.value += a.weight * g;
            if g > scan.g_away && a.weight > 0.0 {
                (scan.away, scan.g_away) = (Some(k), g);
            }
            if g < scan.g_best {
                (scan.best, scan.g_best) = (Some(k), g);
            }
        }
        scan
    }

    /// One pairwise step toward the oracle's corner `(u_s, Δ_s)` at `w`, for `n` examples and λ, with the
    /// block's gap at `w` before it. The move is `None` when no step improves the dual (the block is optimal
    /// for this `w`).
    pub(super) fn step(
        &mut self,
        w: &[f64],
        u_s: SparseVec,
        loss_s: f64,
        n: f64,
        lambda: f64,
    ) -> (f64, Option<Move>) {
        let scan = self.scan(w, n);
        self.step_scanned(&scan, w, (u_s, loss_s), n, lambda)
    }

    /// [`Block::step`] with the block's corners already scanned at `w`.
    pub(super) fn step_scanned(
        &mut self,
        scan: &Scan,
        w: &[f64],
        (u_s, loss_s): (SparseVec, f64),
        n: f64,
        lambda: f64,
    ) -> (f64, Option<Move>) {
        // Summed as the scan sums the atoms, so an oracle corner that is an active atom has its value.
        let g_s = (dot_wide(&u_s, w) - loss_s) / n;
        let block_gap = scan.value - g_s;
        (
            block_gap,
            self.pairwise_move(
                Target::Corner(u_s, loss_s),
                g_s,
                (scan.away, scan.g_away),
                n,
                lambda,
            ),
        )
    }

    /// A pairwise step from the away corner to the best active one (or the true output) without an oracle
    /// call: the cache of past corners (Osokin et al. 2016; Shah, Kolmogorov & Lampert 2015).
    pub(super) fn cached_step(&mut self, scan: &Scan, n: f64, lambda: f64) -> Option<Move> {
        let target = match scan.best {
            None => Target::Corner(SparseVec::default(), 0.0),
            Some(k) => Target::Atom(k),
        };
        self.pairwise_move(target, scan.g_best, (scan.away, scan.g_away), n, lambda)
    }

    /// The pairwise step from the away atom (`away`, its `g_a`) to the corner `target` (its `g_s`).
    fn pairwise_move(
        &mut self,
        target: Target,
        g_s: f64,
        (away, g_a): (Option<usize>, f64),
        n: f64,
        lambda: f64,
    ) -> Option<Move> {
        let gain = g_a - g_s;
        if gain.is_nan() || gain <= 0.0 {
            return None;
        }
        let (u_s, loss_s, s_sq) = match &target {
            Target::Atom(k) => (&*self.atoms[*k].u, self.atoms[*k].loss, self.atoms[*k].sq),
            Target::Corner(u, loss) => (u, *loss, u.as_row().norm_sq()),
        };
        let (d, d_sq, loss_a, cap) = match away {
            None => (u_s.clone(), s_sq, 0.0, self.truth),
            Some(k) => {
                let a = &self.atoms[k];
                let d = SparseVec::lincomb(1.0, u_s, -1.0, &a.u);
                let d_sq = d.as_row().norm_sq();
                (d, d_sq, a.loss, a.weight)
            }
        };
        // f(γ) = λ/2‖w + γ d/(λn)‖² − ℓ − γ(Δ_s − Δ_a)/n: f'(0) = −gain, f'' = ‖d‖²/(λn²).
        let curvature = d_sq / (lambda * n * n);
        let gamma = if curvature > 0.0 {
            (gain / curvature).min(cap)
        } else {
            cap
        };
        if gamma.is_nan() || gamma <= 0.0 || d.as_row().nnz() == 0 && loss_s == loss_a {
            return None;
        }
        // Weight from the away corner (dropped when emptied) to the target: an active atom's weight grows
        // before the away atom leaves (which moves the last atom into its place); a new corner is added
        // after (adding may merge atoms).
        if let Target::Atom(k) = target {
            self.atoms[k].weight += gamma;
        }
        match away {
            None => {
                self.truth = if gamma >= cap { 0.0 } else { cap - gamma };
            }
            Some(k) => {
                if gamma >= cap {
                    self.atoms.swap_remove(k);
                } else {
                    self.atoms[k].weight -= gamma;
                }
            }
        }
        if let Target::Corner(u, loss) = target {
            self.add(Arc::new(u), s_sq, loss, gamma);
        }
        Some(Move {
            d,
            scale: gamma / (lambda * n),
            loss_sum: self.loss_sum(),
        })
    }

    /// Adds `gamma` to the corner `(u, Δ)`: to its atom if present (the true output when `u` is empty and
    /// `Δ` is 0), else as a new atom, merging the two lightest first when the block is full.
    fn add(&mut self, u: Arc<SparseVec>, sq: f64, loss: f64, gamma: f64) {
        if u.as_row().nnz() == 0 && loss == 0.0 {
            self.truth += gamma;
            return;
        }
        let same = |a: &Atom| a.loss == loss && (Arc::ptr_eq(&a.u, &u) || a.u == u);
        if let Some(a) = self.atoms.iter_mut().find(|a| same(a)) {
            a.weight += gamma;
            return;
        }
        if self.atoms.len() >= MAX_ATOMS {
            self.merge_lightest();
        }
        self.atoms.push(Atom {
            u,
            sq,
            loss,
            weight: gamma,
        });
    }

    /// The convex combination `(1 − t)·before + t·after` of two states of the same block (a point of its
    /// domain, whose share is the same combination of theirs): the atoms of both, weighted, equal corners
    /// merged, the lightest merged past [`MAX_ATOMS`].
    pub(super) fn mix(before: &Self, after: Self, t: f64) -> Self {
        let mut out = Self {
            truth: (1.0 - t) * before.truth,
            atoms: before
                .atoms
                .iter()
                .map(|a| Atom {
                    weight: (1.0 - t) * a.weight,
                    ..a.clone()
                })
                .filter(|a| a.weight > 0.0)
                .collect(),
        };
        out.truth += t * after.truth;
        for a in after.atoms {
            if a.weight > 0.0 {
                out.add(a.u, a.sq, a.loss, t * a.weight);
            }
        }
        out
    }

    /// Replaces the two lightest atoms by their weighted mean.
    fn merge_lightest(&mut self) {
        if self.atoms.len() < 2 {
            return;
        }
        let mut order: Vec<usize> = (0..self.atoms.len()).collect();
        order.sort_by(|&a, &b| self.atoms[a].weight.total_cmp(&self.atoms[b].weight));
        let (i, j) = (order[0].min(order[1]), order[0].max(order[1]));
        let b = self.atoms.swap_remove(j);
        let a = &mut self.atoms[i];
        let total = a.weight + b.weight;
        if total > 0.0 {
            let (p, q) = (a.weight / total, b.weight / total);
            a.u = Arc::new(SparseVec::lincomb(p, &a.u, q, &b.u));
            a.sq = a.u.as_row().norm_sq();
            a.loss = p * a.loss + q * b.loss;
        }
        a.weight = total;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sv(pairs: &[(u32, f64)]) -> SparseVec {
        let (i, v) = pairs.iter().copied().unzip();
        SparseVec::new(i, v).unwrap()
    }

    #[test]
    fn a_decoded_atom_must_carry_its_norm() {
        let mut b = Block::default();
        let (_, m) = b.step(&[0.0, 0.0], sv(&[(0, 2.0)]), 1.0, 1.0, 1.0);
        assert!(m.is_some() && b.fits(2));
        b.atoms[0].sq = 5.0;
        assert!(!b.fits(2));
        b.atoms[0].sq = f64::INFINITY;
        assert!(!b.fits(2));
    }

    #[test]
    fn a_step_moves_weight_and_keeps_the_sum_one() {
        let mut b = Block::default();
        let w = [0.0, 0.0];
        let (gap, m) = b.step(&w, sv(&[(0, 1.0)]), 1.0, 1.0, 1.0);
        let m = m.unwrap();
        // At w = 0: H = Δ = 1 and the block is all truth, so its gap is 1.
        assert_eq!(gap, 1.0);
        // From the truth (g = 0) to g_s = −1: curvature 1, gain 1, γ = 1 (all of the truth's weight).
        assert_eq!(m.scale, 1.0);
        assert_eq!(b.truth, 0.0);
        assert_eq!(b.len(), 1);
        assert_eq!(m.loss_sum, 1.0);
        let total: f64 = b.truth + b.atoms.iter().map(|a| a.weight).sum::<f64>();
        assert_eq!(total, 1.0);
        // At w = u_s the corner is optimal: no step.
        let (gap, m) = b.step(&[1.0, 0.0], sv(&[(0, 1.0)]), 1.0, 1.0, 1.0);
        assert!(m.is_none());
        assert_eq!(gap, 0.0);
    }

    /// `Σ weight·u` and `Σ weight·Δ` of a block, and its total weight.
    fn point(b: &Block) -> (Vec<f64>, f64, f64) {
        let mut p = vec![0.0; 4];
        for a in &b.atoms {
            a.u.as_row().axpy(a.weight, &mut p);
        }
        let mass = b.truth + b.atoms.iter().map(|a| a.weight).sum::<f64>();
        (p, b.loss_sum(), mass)
    }

    #[test]
    fn a_mix_is_the_same_combination_of_the_two_points() {
        let mut before = Block::default();
        before.add(Arc::new(sv(&[(0, 1.0)])), 1.0, 1.0, 0.25);
        before.truth = 0.75;
        let mut after = before.clone();
        after
            .step(&[0.0; 4], sv(&[(1, 2.0), (3, -1.0)]), 2.0, 1.0, 1.0)
            .1
            .unwrap();
        let t = 0.3;
        let mixed = Block::mix(&before, after.clone(), t);
        let ((pb, lb, _), (pa, la, _), (pm, lm, mass)) =
            (point(&before), point(&after), point(&mixed));
        for j in 0..4 {
            assert!(
                (pm[j] - ((1.0 - t) * pb[j] + t * pa[j])).abs() < 1e-12,
                "{j}"
            );
        }
        assert!((lm - ((1.0 - t) * lb + t * la)).abs() < 1e-12);
        assert!((mass - 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_full_block_merges_its_lightest_atoms_without_moving_the_point() {
        let mut b = Block::default();
        for k in 0..MAX_ATOMS as u32 + 3 {
            b.add(
                Arc::new(sv(&[(k, 1.0)])),
                1.0,
                1.0,
                1.0 / 64.0 + f64::from(k) * 1e-3,
            );
        }
        assert_eq!(b.len(), MAX_ATOMS);
        let mass: f64 = b.atoms.iter().map(|a| a.weight).sum();
        let point: f64 = b
            .atoms
            .iter()
            .map(|a| a.weight * a.u.as_row().iter().map(|(_, v)| v).sum::<f64>())
            .sum();
        assert!((mass - point).abs() < 1e-12);
    }
}
