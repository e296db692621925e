//! A labelled dataset in memory, whatever file it came from (LIBSVM text, a cache, a shard): rows, labels, qids
//! and line numbers. It reads and writes nothing; [`crate::libsvm`] and [`crate::cache`] fill it.

use maxmargin_core::vector::SparseRows;
use std::path::PathBuf;

/// A labelled dataset read from a file.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset<L> {
    /// The feature rows (0-based indices).
    pub x: SparseRows,
    /// One label per row, as written in the file.
    pub labels: Vec<L>,
    /// The `qid:` of each row, where given.
    pub qids: Vec<Option<u64>>,
    /// The 1-based line of each row in its file (for error messages about a row).
    pub lines: Vec<usize>,
    /// Where the data came from (for error messages).
    pub source: PathBuf,
    /// Feature `j`'s name (0-based), from a CSV header; empty when the file has none (LIBSVM).
    pub feature_names: Vec<String>,
    /// The label column's name, from a CSV header.
    pub label_column: Option<String>,
}

impl<L> Dataset<L> {
    /// A dataset of these rows and labels with no qids and no names.
    pub fn new(source: PathBuf, x: SparseRows, labels: Vec<L>, lines: Vec<usize>) -> Self {
        Self {
            qids: labels.iter().map(|_| None).collect(),
            x,
            labels,
            lines,
            source,
            feature_names: Vec::new(),
            label_column: None,
        }
    }

    /// Number of examples.
    pub fn n_samples(&self) -> usize {
        self.labels.len()
    }
}

impl<L: Clone> Dataset<L> {
    /// The rows `rows` (indices into this dataset, each below [`Dataset::n_samples`]), in that order, with
    /// their labels, qids and line numbers.
    ///
    /// # Panics
    /// When an index is out of range.
    ///
    /// # Examples
    /// ```
    /// let d = maxmargin_io::libsvm::read_from(&b"1 1:1\n-1 2:1\n1 3:1\n"[..], "x".as_ref(),
    ///     maxmargin_io::libsvm::parse_real_label)?;
    /// let s = d.select(&[2, 0]);
    /// assert_eq!((s.labels.as_slice(), s.lines.as_slice()), (&[1.0, 1.0][..], &[3, 1][..]));
    /// # Ok::<(), maxmargin_io::IoError>(())
    /// ```
    pub fn select(&self, rows: &[usize]) -> Self {
        Self {
            x: self.x.select(rows),
            labels: rows.iter().map(|&i| self.labels[i].clone()).collect(),
            qids: rows
                .iter()
                .map(|&i| self.qids.get(i).copied().flatten())
                .collect(),
            lines: rows
                .iter()
                .map(|&i| self.lines.get(i).copied().unwrap_or(i + 1))
                .collect(),
            source: self.source.clone(),
            feature_names: self.feature_names.clone(),
            label_column: self.label_column.clone(),
        }
    }
}

/// A dataset with one real label per row: binary, multiclass or regression targets.
pub type LabeledData = Dataset<f64>;
