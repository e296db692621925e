//! Small real datasets embedded in the crate (heart_scale, iris), for examples, doctests and `maxmargin demo`.
//!
//! [`Shapes`] generates noisy pictures of shapes as graph data, seeded, for graph and grid models;
//! [`opposite_clusters`] classes that are each two clusters, for latent models.
//!
//! Only data small enough to ship is here; see `data/*.SOURCE.md` for provenance and licence (iris: BSD-3
//! as scikit-learn ships it; heart_scale: LIBSVM's BSD-3, notice in `data/heart_scale.COPYRIGHT`). Larger
//! datasets are read from files with [`crate::io::libsvm::read`].

pub use crate::shapes::Shapes;

use crate::Error;
use maxmargin_io::libsvm::{LabeledData, parse_real_label, read_from};

/// The raw LIBSVM text of `heart_scale` (Statlog Heart, 270 examples, 13 features scaled to [−1, 1]).
///
/// Distributed by LIBSVM under its BSD 3-clause licence; the notice ships beside it as
/// `data/heart_scale.COPYRIGHT`. Cite the UCI Statlog (Heart) data and LIBSVM when publishing results on it.
pub const HEART_SCALE: &str = include_str!("../data/heart_scale");

/// `heart_scale`, parsed: 270 rows, labels `+1` (120) and `−1` (150).
///
/// # Errors
/// None in practice (the text is fixed); the type is the reader's.
///
/// # Examples
/// ```
/// # fn main() -> Result<(), maxmargin::Error> {
/// let d = maxmargin::datasets::heart_scale()?;
/// assert_eq!((d.n_samples(), d.x.n_features()), (270, 13));
/// # Ok(()) }
/// ```
pub fn heart_scale() -> Result<LabeledData, Error> {
    Ok(read_from(
        HEART_SCALE.as_bytes(),
        "<embedded heart_scale>".as_ref(),
        parse_real_label,
    )?)
}

/// The LIBSVM text of Fisher's iris (150 examples, 4 features, classes 0, 1, 2), decompressed from the
/// shared `sklearn_iris/iris.libsvm.gz`.
pub const IRIS: &str = include_str!("../data/iris.libsvm");

/// Iris, parsed: 150 rows, 4 features, 3 classes of 50.
///
/// # Errors
/// None in practice (the bytes are fixed); the type is the reader's.
///
/// # Examples
/// ```
/// # fn main() -> Result<(), maxmargin::Error> {
/// let d = maxmargin::datasets::iris()?;
/// assert_eq!((d.n_samples(), d.x.n_features()), (150, 4));
/// # Ok(()) }
/// ```
pub fn iris() -> Result<LabeledData, Error> {
    Ok(read_from(
        IRIS.as_bytes(),
        "<embedded iris>".as_ref(),
        parse_real_label,
    )?)
}

/// LIBSVM text of `n` rows of `classes` classes in the plane, each class two clusters on opposite sides of
/// the origin: cluster `j` of the `2·classes` clusters sits at angle `j·π/classes` on a circle of radius 3,
/// spread uniformly `±spread` in each coordinate, and belongs to class `j mod classes` (labels `0 ..
/// classes − 1`). No linear template scores both clusters of a class, so a plain multiclass SVM mixes the
/// classes up, and a mixture of two templates per class (`--latent-subclasses 2`) separates them: the
/// generator of latent structural SVMs' example. Seeded: the same seed, the same text.
///
/// # Examples
/// ```
/// let text = maxmargin::datasets::opposite_clusters(12, 3, 1.0, 7);
/// assert_eq!(text.lines().count(), 12);
/// assert!(text.starts_with("0 1:"));
/// assert_eq!(text, maxmargin::datasets::opposite_clusters(12, 3, 1.0, 7));
/// ```
pub fn opposite_clusters(n: usize, classes: usize, spread: f64, seed: u64) -> String {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x6F70_706F_7369_7465);
    let clusters = 2 * classes.max(1);
    let mut out = String::new();
    for i in 0..n {
        let j = i % clusters;
        let angle = j as f64 * std::f64::consts::PI / classes.max(1) as f64;
        let x = 3.0 * angle.cos() + spread * rng.random_range(-1.0..=1.0);
        let y = 3.0 * angle.sin() + spread * rng.random_range(-1.0..=1.0);
        out.push_str(&format!("{} 1:{x} 2:{y}\n", j % classes.max(1)));
    }
    out
}

/// `n` sequences of `length` tokens in svm_hmm text whose tags (1 and 2) run in a period of four, `1 1 2 2`,
/// from a random phase, each token showing its tag as one of two indicator features (`1:1` for tag 1, `2:1`
/// for tag 2) but the other one with probability `noise`. Every tag is followed by itself or the other
/// equally often, so a first-order chain's transitions carry nothing and it tags by the noisy token alone;
/// two latent states per tag (`--latent-states 2`) learn the period and read each token with its
/// neighbours: the generator of latent-state chains' example. Seeded: the same seed, the same text.
///
/// # Examples
/// ```
/// let text = maxmargin::datasets::periodic_tags(3, 8, 0.3, 7);
/// assert_eq!(text.lines().count(), 24);
/// assert!(text.lines().all(|l| l.contains(" qid:")));
/// assert_eq!(text, maxmargin::datasets::periodic_tags(3, 8, 0.3, 7));
/// ```
pub fn periodic_tags(n: usize, length: usize, noise: f64, seed: u64) -> String {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x7065_7269_6F64_6963);
    let mut out = String::new();
    for q in 0..n {
        let phase: usize = rng.random_range(0..4);
        for t in 0..length {
            let tag = 1 + (t + phase) / 2 % 2;
            let p = if noise.is_nan() {
                0.0
            } else {
                noise.clamp(0.0, 1.0)
            };
            let shown = if rng.random_bool(p) { 3 - tag } else { tag };
            out.push_str(&format!("{tag} qid:{} {shown}:1\n", q + 1));
        }
    }
    out
}
