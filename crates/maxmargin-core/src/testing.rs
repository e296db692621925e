//! What tests, doctests, examples and benchmarks of every crate share (feature `testing`, off by default):
//! a seeded pseudo-random stream, small fixed rows, where the shared public datasets are, and the worked
//! examples' data again ([`crate::worked`]). In core, since every crate's tests can reach it.

use crate::vector::SparseRows;
pub use crate::worked::{lesson_rows, two_points};
use std::path::{Path, PathBuf};

/// A seeded linear congruential stream (Knuth's MMIX constants): the same numbers on every machine, for
/// generated test data. Not for the solvers, which draw from `rand_chacha`.
///
/// # Examples
/// ```
/// let mut a = maxmargin_core::testing::Lcg::new(3);
/// let mut b = maxmargin_core::testing::Lcg::new(3);
/// assert_eq!(a.unit(), b.unit());
/// assert!((0.0..1.0).contains(&a.unit()));
/// ```
#[derive(Debug, Clone)]
pub struct Lcg(u64);

impl Lcg {
    /// The stream from `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next state, all 64 bits (its high bits are the random ones).
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0
    }

    /// The next number in `[0, 1)`, from the top 53 bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// The next number in `[0, 1)`, from the top 31 bits (the older tests' draws, kept so their data stay
    /// the same).
    pub fn unit31(&mut self) -> f64 {
        (self.next_u64() >> 33) as f64 / (1u64 << 31) as f64
    }
}

/// Dense rows with their labels as sparse rows (zeros left out), for small fixed data.
///
/// # Panics
/// On a non-finite value (fixtures are written by hand).
pub fn rows(rows: &[(&[f64], f64)]) -> (SparseRows, Vec<f64>) {
    let dense: Vec<&[f64]> = rows.iter().map(|r| r.0).collect();
    // ok: fixed, finite data written in a test.
    let x = SparseRows::from_dense_rows(&dense).expect("fixture rows are finite");
    (x, rows.iter().map(|r| r.1).collect())
}

/// The folder of the shared datasets for tests: `MAXMARGIN_DATA`, else `shared/data` beside the checkout of
/// the crate whose `CARGO_MANIFEST_DIR` is `manifest_dir` (a crate under `crates/`). `None`
/// when it is not there, so a test can skip; under `CI` a missing folder is a failure instead.
///
/// # Panics
/// When `CI` is set and the folder is missing.
pub fn shared_data(manifest_dir: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("MAXMARGIN_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(manifest_dir).join("../../../shared/data"));
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "shared data not found at {}",
        dir.display()
    );
    eprintln!("shared data not found at {}; skipping", dir.display());
    None
}
