//! Gap sampling for BCFW (Osokin, Alayrac, Lukasewitz, Dokania & Lacoste-Julien, ICML 2016, "Minding the
//! gaps"): blocks are drawn with probability proportional to their block gaps
//! `g_i = H_i(w)/n − ℓ_i + λ⟨w_i, w⟩` (the duality gap is `Σ_i g_i`), so the steps go where the dual is
//! furthest from the primal instead of spreading evenly over blocks that are already optimal.
//!
//! The estimates are exact when taken: every oracle call gives its block's gap at the `w` of that step (the
//! line search's numerator), and a certification at the last iterate gives all of them at once. Between
//! those they go stale, which is why the certifications that refresh them come every few passes; the first
//! pass is a permutation, so that every block has an estimate before any is drawn by it. The draws come
//! from a seeded generator of their own and a sum tree over the estimates (`O(log n)` a draw or an update),
//! so a run is the same for the same seed.

use crate::error::all_finite;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// The block gaps' estimates and the generator that draws by them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct GapSampler {
    /// `tree[m + i]` is block `i`'s estimate (`m` the leaves, a power of two); `tree[k]` the sum of its
    /// children's.
    tree: Vec<f64>,
    n: usize,
    rng: ChaCha8Rng,
    /// Every block has an estimate (its first visit is behind it).
    ready: bool,
}

/// The seed of the draws beside the sampler's own.
const STREAM: u64 = 0x6761_7073;

impl GapSampler {
    pub(super) fn new(n: usize, seed: u64) -> Self {
        let m = n.max(1).next_power_of_two();
        Self {
            tree: vec![0.0; 2 * m],
            n,
            rng: crate::random::rng(seed ^ STREAM),
            ready: false,
        }
    }

    fn leaves(&self) -> usize {
        self.tree.len() / 2
    }

    /// Block `i`'s gap is `g` (a negative or non-finite value, which only rounding or an approximate oracle
    /// gives, counts as 0).
    pub(super) fn set(&mut self, i: usize, g: f64) {
        let m = self.leaves();
        let mut k = m + i;
        self.tree[k] = if g.is_finite() { g.max(0.0) } else { 0.0 };
        while k > 1 {
            k /= 2;
            self.tree[k] = self.tree[2 * k] + self.tree[2 * k + 1];
        }
    }

    /// Every block's gap at once (from a certification), `gaps[i]` block `i`'s.
    pub(super) fn refresh(&mut self, gaps: impl Iterator<Item = f64>) {
        let m = self.leaves();
        for (leaf, g) in self.tree[m..m + self.n].iter_mut().zip(gaps) {
            *leaf = if g.is_finite() { g.max(0.0) } else { 0.0 };
        }
        for k in (1..m).rev() {
            self.tree[k] = self.tree[2 * k] + self.tree[2 * k + 1];
        }
        self.ready = true;
    }

    /// Marks every block as estimated (after the first pass visited each once).
    pub(super) fn start(&mut self) {
        self.ready = true;
    }

    pub(super) fn ready(&self) -> bool {
        self.ready
    }

    /// A block drawn with probability proportional to its estimate, `None` while some block has none yet or
    /// when every estimate is 0 (the caller's sampler draws then).
    pub(super) fn draw(&mut self) -> Option<usize> {
        let total = self.tree[1];
        if !self.ready || total.is_nan() || total <= 0.0 || total.is_infinite() {
            return None;
        }
        let m = self.leaves();
        let mut u = self.rng.random::<f64>() * total;
        let mut k = 1;
        while k < m {
            let left = self.tree[2 * k];
            if u < left || self.tree[2 * k + 1] <= 0.0 {
                k *= 2;
            } else {
                u -= left;
                k = 2 * k + 1;
            }
        }
        Some((k - m).min(self.n - 1))
    }

    /// Whether a decoded sampler holds `n` blocks' finite, non-negative estimates.
    pub(super) fn fits(&self, n: usize) -> bool {
        let m = n.max(1).next_power_of_two();
        self.n == n
            && self.tree.len() == 2 * m
            && all_finite(&self.tree)
            && self.tree.iter().all(|&g| g >= 0.0)
            && self.tree[m + n..].iter().all(|&g| g == 0.0)
            // Each sum as `set` and `refresh` make it, to the bit.
            && (1..m).all(|k| self.tree[k] == self.tree[2 * k] + self.tree[2 * k + 1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_follow_the_estimates_and_skip_the_blocks_at_zero() {
        let mut s = GapSampler::new(5, 7);
        assert_eq!(s.draw(), None, "no estimates yet");
        s.refresh([1.0, 0.0, 3.0, 0.0, -2.0].into_iter());
        let mut counts = [0usize; 5];
        for _ in 0..40_000 {
            counts[s.draw().unwrap()] += 1;
        }
        assert_eq!((counts[1], counts[3], counts[4]), (0, 0, 0));
        let ratio = counts[2] as f64 / counts[0] as f64;
        assert!((ratio - 3.0).abs() < 0.15, "{counts:?}");
        s.set(2, 0.0);
        s.set(0, 0.0);
        assert_eq!(s.draw(), None, "every gap closed");
        s.set(3, f64::NAN);
        assert_eq!(s.draw(), None);
        s.set(4, 0.5);
        assert_eq!(s.draw(), Some(4));
        assert!(s.fits(5));
    }

    #[test]
    fn the_same_seed_draws_the_same_blocks() {
        let draws = |seed| {
            let mut s = GapSampler::new(9, seed);
            s.refresh((0..9).map(|i| f64::from(i) + 0.5));
            (0..50).map(|_| s.draw().unwrap()).collect::<Vec<_>>()
        };
        assert_eq!(draws(1), draws(1));
        assert_ne!(draws(1), draws(2));
    }
}
