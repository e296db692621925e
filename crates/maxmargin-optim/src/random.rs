//! Seeded randomness: every random choice in maxmargin comes from a `ChaCha8Rng` made here.

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

/// The generator for `seed` (crate-internal: no third-party type in the public API).
pub(crate) fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// A random permutation of `0..n`, the same for the same seed on every machine.
///
/// # Examples
/// ```
/// let p = maxmargin_optim::random::permutation(5, 42);
/// let mut s = p.clone();
/// s.sort_unstable();
/// assert_eq!(s, vec![0, 1, 2, 3, 4]);
/// assert_eq!(p, maxmargin_optim::random::permutation(5, 42));
/// ```
pub fn permutation(n: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(&mut rng(seed));
    order
}
