//! What a model knows of the rows it was trained on (model format 6): the names of its features (from a
//! CSV header) and a small sketch of the training rows, so that `calibrate` and `threshold` can say when
//! they are handed the very rows the model was fitted on; and the digest a checkpoint keeps of the rows
//! its state belongs to.
//!
//! Rows are hashed with XXH3 (64 bits, stable across builds and machines) over their label and their
//! nonzeros' indices and value bits. The sketch keeps the [`SKETCH_SIZE`] smallest distinct row hashes (a
//! bottom-k sketch, Cohen & Kaplan 2007): the fraction of another set's rows that fall among them, over
//! those of its rows whose hash is within the sketch's range, estimates how many of its rows are training
//! rows, without storing them.

use maxmargin_core::vector::SparseRow;
use maxmargin_io::libsvm::LabeledData;
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::Xxh3;

/// Row hashes a sketch keeps.
pub const SKETCH_SIZE: usize = 64;

/// What a model keeps of its inputs.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Inputs {
    /// Feature `j`'s name (0-based), from a CSV header; empty for LIBSVM data.
    pub feature_names: Vec<String>,
    /// The label column's name, for CSV data.
    pub label_column: Option<String>,
    /// A sketch of the training rows, when they were all in memory.
    pub rows: Option<RowSketch>,
}

impl Inputs {
    /// The feature names of a model's `inputs`, when it knows them; empty otherwise.
    pub(crate) fn names_of(inputs: Option<&Self>) -> &[String] {
        inputs.map_or(&[], |i| &i.feature_names)
    }

    /// The label column's name of a model's `inputs`, when it was trained on CSV data.
    pub(crate) fn label_column_of(inputs: Option<&Self>) -> Option<&str> {
        inputs.and_then(|i| i.label_column.as_deref())
    }

    /// The inputs of `data`: its feature names and a sketch of its rows.
    pub fn of(data: &LabeledData) -> Self {
        Self {
            feature_names: data.feature_names.clone(),
            label_column: data.label_column.clone(),
            rows: Some(RowSketch::of(data)),
        }
    }

    /// Why a decoded record cannot be a model's (for `n_features` features), if it cannot.
    pub(crate) fn invalid(&self, n_features: usize) -> Option<String> {
        if !self.feature_names.is_empty() && self.feature_names.len() != n_features {
            return Some(format!(
                "{} feature names for {n_features} features",
                self.feature_names.len()
            ));
        }
        self.rows.as_ref().and_then(RowSketch::invalid)
    }

    /// The name of feature `j` (0-based), when the model has names.
    pub fn name(&self, j: usize) -> Option<&str> {
        self.feature_names.get(j).map(String::as_str)
    }
}

/// A 64-bit hash of one row and its label (stable: XXH3 of the label's, indices' and values' bits).
pub fn row_hash(label: f64, row: SparseRow<'_>) -> u64 {
    let mut h = Xxh3::new();
    h.update(&label.to_bits().to_le_bytes());
    for (j, v) in row.iter() {
        h.update(&(j as u64).to_le_bytes());
        h.update(&v.to_bits().to_le_bytes());
    }
    h.digest()
}

/// An order-dependent digest of a sequence of 64-bit words (row hashes, targets, weights): what a
/// checkpoint records of the examples its state was made for.
#[derive(Default)]
pub(crate) struct Digest(Xxh3);

impl Digest {
    pub(crate) fn new() -> Self {
        Self(Xxh3::new())
    }

    pub(crate) fn word(&mut self, w: u64) {
        self.0.update(&w.to_le_bytes());
    }

    pub(crate) fn float(&mut self, v: f64) {
        self.word(v.to_bits());
    }

    pub(crate) fn finish(&self) -> u64 {
        self.0.digest()
    }
}

/// The digest of training rows as a solver sees them: each row, its ±1 (or class) target and its weight.
pub(crate) fn examples_digest<'a>(
    rows: impl Iterator<Item = SparseRow<'a>>,
    targets: &[f64],
    weights: Option<&[f64]>,
) -> u64 {
    let mut d = Digest::new();
    for (i, (row, &y)) in rows.zip(targets).enumerate() {
        d.word(row_hash(y, row));
        d.float(weights.and_then(|w| w.get(i)).copied().unwrap_or(1.0));
    }
    d.finish()
}

/// The digest of structured examples as a solver sees them: each example's joint feature vector `ψ(x, y)`
/// at its true output (which carries its input and its label) and its weight.
pub(crate) fn space_digest<S: maxmargin_struct::OutputSpace<Output: Sync>>(
    space: &S,
    x: &[S::Input],
    y: &[S::Output],
    weights: Option<&[f64]>,
) -> u64 {
    use rayon::prelude::*;
    // Each example's hash on every core (one buffer per example, hashed at once: the digest of the same
    // bytes fed entry by entry), then folded in example order.
    let hashes: Vec<u64> = (x.par_iter().zip(y))
        .map_init(Vec::new, |bytes, (xi, yi)| {
            bytes.clear();
            space.for_each_feature(xi, yi, &mut |j, v| {
                bytes.extend_from_slice(&(j as u64).to_le_bytes());
                bytes.extend_from_slice(&v.to_bits().to_le_bytes());
            });
            xxhash_rust::xxh3::xxh3_64(bytes)
        })
        .collect();
    let mut d = Digest::new();
    for (i, h) in hashes.into_iter().enumerate() {
        d.word(h);
        d.float(weights.and_then(|w| w.get(i)).copied().unwrap_or(1.0));
    }
    d.finish()
}

/// A bottom-k sketch of a set of rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowSketch {
    /// Rows sketched.
    pub n_rows: usize,
    /// The wrapping sum of every row's hash: equal for the same rows in any order.
    pub sum: u64,
    /// The smallest distinct row hashes, increasing, at most [`SKETCH_SIZE`].
    pub smallest: Vec<u64>,
}

/// A [`RowSketch`] built a row at a time in memory of its size, whatever the rows' number (a streamed run's
/// rows, as the stream parses them); [`RowSketch::of`] is it over a dataset. Any order of the rows gives the
/// same sketch.
#[derive(Debug, Default)]
pub(crate) struct SketchBuilder {
    n_rows: usize,
    sum: u64,
    smallest: std::collections::BTreeSet<u64>,
}

impl SketchBuilder {
    /// Adds a row with its label.
    pub(crate) fn add(&mut self, label: f64, row: SparseRow<'_>) {
        let h = row_hash(label, row);
        self.n_rows += 1;
        self.sum = self.sum.wrapping_add(h);
        let full = self.smallest.len() == SKETCH_SIZE;
        if full && self.smallest.last().is_some_and(|&top| h >= top) {
            return;
        }
        if self.smallest.insert(h) && self.smallest.len() > SKETCH_SIZE {
            self.smallest.pop_last();
        }
    }

    /// The wrapping sum of the rows' hashes so far: equal for the same rows in any order.
    pub(crate) fn sum(&self) -> u64 {
        self.sum
    }

    /// The sketch of the rows added.
    pub(crate) fn finish(self) -> RowSketch {
        RowSketch {
            n_rows: self.n_rows,
            sum: self.sum,
            smallest: self.smallest.into_iter().collect(),
        }
    }
}

/// How much of a set of rows a sketch says it has seen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Overlap {
    /// The same rows (in any order).
    Same,
    /// About this fraction of the rows are sketched rows, estimated from `sampled` of them.
    Part {
        /// The estimated fraction.
        fraction: f64,
        /// Rows the estimate is made from.
        sampled: usize,
    },
}

impl RowSketch {
    /// The sketch of a dataset's rows with their labels.
    pub fn of(data: &LabeledData) -> Self {
        let mut sketch = SketchBuilder::default();
        for (r, &l) in data.x.rows().zip(&data.labels) {
            sketch.add(l, r);
        }
        sketch.finish()
    }

    fn hashes(data: &LabeledData) -> Vec<u64> {
        data.x
            .rows()
            .zip(&data.labels)
            .map(|(r, &l)| row_hash(l, r))
            .collect()
    }

    /// The sketch of every rank's rows from each rank's sketch of its own: the sketch one process takes of
    /// all of them (the smallest distinct hashes of the union are among the ranks' smallest; counts and
    /// sums add), the same on every rank. One allreduce of `ranks × 132` numbers: each hash and sum as two
    /// 32-bit halves, exact in an `f64`.
    ///
    /// # Errors
    /// [`maxmargin_optim::OptimError::Collective`] when another rank failed.
    pub(crate) fn over_ranks(
        self,
        comm: &dyn maxmargin_optim::Collective,
    ) -> Result<Self, maxmargin_optim::OptimError> {
        const SLOT: usize = 4 + 2 * SKETCH_SIZE;
        let halves = |h: u64| [(h >> 32) as f64, (h & 0xFFFF_FFFF) as f64];
        let whole = |hi: f64, lo: f64| ((hi as u64) << 32) | lo as u64;
        let mut buf = vec![0.0; comm.size() * SLOT];
        let mine = &mut buf[comm.rank() * SLOT..(comm.rank() + 1) * SLOT];
        mine[0] = self.n_rows as f64;
        mine[1] = self.smallest.len() as f64;
        mine[2..4].copy_from_slice(&halves(self.sum));
        for (k, &h) in self.smallest.iter().enumerate() {
            mine[4 + 2 * k..6 + 2 * k].copy_from_slice(&halves(h));
        }
        comm.allreduce_sum(&mut buf)?;
        let (mut n_rows, mut sum, mut hashes) = (0usize, 0u64, Vec::new());
        for slot in buf.chunks_exact(SLOT) {
            n_rows += slot[0] as usize;
            sum = sum.wrapping_add(whole(slot[2], slot[3]));
            let count = (slot[1] as usize).min(SKETCH_SIZE);
            hashes.extend((0..count).map(|k| whole(slot[4 + 2 * k], slot[5 + 2 * k])));
        }
        hashes.sort_unstable();
        hashes.dedup();
        hashes.truncate(SKETCH_SIZE);
        Ok(Self {
            n_rows,
            sum,
            smallest: hashes,
        })
    }

    fn invalid(&self) -> Option<String> {
        (self.smallest.len() > SKETCH_SIZE
            || self.smallest.len() > self.n_rows
            || self.smallest.windows(2).any(|p| p[0] >= p[1]))
        .then(|| "the row sketch is not a sketch".to_string())
    }

    /// How much of `data` this sketch's rows make up: `Same` for the same rows, else an estimate of the
    /// fraction of `data`'s rows that are sketched rows (`None` when none of its rows fall in the sketch's
    /// range, so nothing can be said).
    pub fn overlap(&self, data: &LabeledData) -> Option<Overlap> {
        let hashes = Self::hashes(data);
        let sum = hashes.iter().fold(0u64, |s, &h| s.wrapping_add(h));
        if hashes.len() == self.n_rows && sum == self.sum {
            return Some(Overlap::Same);
        }
        // Every hash up to the sketch's largest is in it when it holds all the rows it saw (it is exact
        // then); otherwise only hashes up to its largest can be checked.
        let complete = self.smallest.len() < SKETCH_SIZE;
        let top = self.smallest.last().copied()?;
        let (mut sampled, mut found) = (0usize, 0usize);
        for h in hashes {
            if complete || h <= top {
                sampled += 1;
                found += usize::from(self.smallest.binary_search(&h).is_ok());
            }
        }
        (sampled > 0).then(|| Overlap::Part {
            fraction: found as f64 / sampled as f64,
            sampled,
        })
    }

    /// A `warning:` line (without the prefix) when `data` is, or is mostly, the rows sketched: calibrating
    /// or choosing a cut-off on training rows fits their optimistic margins.
    pub fn warning(&self, data: &LabeledData, model: &str, what: &str) -> Option<String> {
        let source = data.source.display();
        match self.overlap(data)? {
            Overlap::Same => Some(format!(
                "{source} holds the very rows {model} was trained on: {what} on rows it has not seen \
                 (training rows' margins are optimistic)"
            )),
            Overlap::Part { fraction, sampled } if fraction >= 0.5 && sampled >= 5 => {
                Some(format!(
                    "about {:.0}% of the rows of {source} are rows {model} was trained on (estimated from {sampled} \
                 of them): {what} on rows it has not seen (training rows' margins are optimistic)",
                    100.0 * fraction
                ))
            }
            Overlap::Part { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use maxmargin_core::vector::SparseRows;

    fn data(rows: &[(f64, f64)]) -> LabeledData {
        let mut x = SparseRows::new();
        for &(_, v) in rows {
            x.push_row(&[0], &[v]).unwrap();
        }
        LabeledData::new(
            "d".into(),
            x,
            rows.iter().map(|r| r.0).collect(),
            (1..=rows.len()).collect(),
        )
    }

    #[test]
    fn the_sketch_knows_its_own_rows_in_any_order_and_estimates_a_part() {
        let rows: Vec<(f64, f64)> = (0..2000)
            .map(|i| (if i % 2 == 0 { 1.0 } else { -1.0 }, i as f64))
            .collect();
        let s = RowSketch::of(&data(&rows));
        assert_eq!(s.smallest.len(), SKETCH_SIZE);
        let mut reversed = rows.clone();
        reversed.reverse();
        assert_eq!(s.overlap(&data(&reversed)), Some(Overlap::Same));
        // Half training rows, half new ones: about a half, from some rows.
        let half: Vec<(f64, f64)> = (1000..3000)
            .map(|i| (if i % 2 == 0 { 1.0 } else { -1.0 }, i as f64))
            .collect();
        match s.overlap(&data(&half)) {
            Some(Overlap::Part { fraction, sampled }) => {
                assert!((fraction - 0.5).abs() < 0.15, "{fraction}");
                assert!(sampled > 30, "{sampled}");
            }
            other => panic!("{other:?}"),
        }
        // Other labels are other rows.
        let flipped: Vec<(f64, f64)> = rows.iter().map(|&(l, v)| (-l, v)).collect();
        assert!(s.warning(&data(&flipped), "m", "calibrate").is_none());
        assert!(s.warning(&data(&rows[..500]), "m", "calibrate").is_some());
    }

    #[test]
    fn a_small_sketch_is_exact() {
        let rows: Vec<(f64, f64)> = (0..50).map(|i| (1.0, i as f64)).collect();
        let s = RowSketch::of(&data(&rows));
        assert_eq!(
            s.overlap(&data(&rows[..20])),
            Some(Overlap::Part {
                fraction: 1.0,
                sampled: 20
            })
        );
        let other: Vec<(f64, f64)> = (100..140).map(|i| (1.0, i as f64)).collect();
        assert_eq!(
            s.overlap(&data(&other)),
            Some(Overlap::Part {
                fraction: 0.0,
                sampled: 40
            })
        );
    }
}
