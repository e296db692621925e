//! The LIBSVM multilabel format: `l1,l2,... idx:val ...`, labels 0-based or not, an empty label set allowed
//! (the line then starts with its first feature).

use crate::IoError;
use crate::libsvm::{Dataset, read_with};
use std::path::Path;

/// A multilabel dataset: each row's label set, sorted and without repeats.
pub type MultilabelData = Dataset<Vec<u32>>;

/// How an empty label set is written where a field cannot be blank (`maxmargin predict`'s output, or a
/// line whose labels would otherwise vanish): the reader takes it back as the empty set.
pub const EMPTY_SET: &str = "-";

/// Parses `l1,l2,...` (or an empty field, or [`EMPTY_SET`]) into a sorted set of labels.
///
/// # Errors
/// A message naming the bad label.
///
/// # Examples
/// ```
/// use maxmargin_io::multilabel::{EMPTY_SET, parse_label_set};
/// assert_eq!(parse_label_set("3,1")?, vec![1, 3]);
/// assert_eq!(parse_label_set(EMPTY_SET)?, Vec::<u32>::new());
/// assert!(parse_label_set("1,x").is_err());
/// # Ok::<(), String>(())
/// ```
pub fn parse_label_set(tok: &str) -> Result<Vec<u32>, String> {
    if tok.is_empty() || tok == EMPTY_SET {
        return Ok(Vec::new());
    }
    let mut out = tok
        .split(',')
        .map(|l| {
            l.parse::<u32>().map_err(|_| match l {
                // `0, 1` splits into `0,` and `1`: the set's separator is a comma alone.
                "" => format!(
                    "{} has an empty label: a label set is its labels joined by commas, with no spaces \
                     (0,1)",
                    crate::libsvm::quote(tok)
                ),
                l => format!(
                    "{} is not a label (a non-negative integer)",
                    crate::libsvm::quote(l)
                ),
            })
        })
        .collect::<Result<Vec<u32>, String>>()?;
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Reads a multilabel LIBSVM file.
///
/// # Errors
/// As [`crate::libsvm::read_with`].
///
/// # Examples
/// ```
/// # fn main() -> Result<(), maxmargin_io::IoError> {
/// use maxmargin_io::libsvm::read_from;
/// use maxmargin_io::multilabel::parse_label_set;
/// let d = read_from(&b"2,0 1:1\n 3:0.5\n1 2:1\n"[..], "inline".as_ref(), parse_label_set)?;
/// assert_eq!(d.labels, vec![vec![0, 2], vec![], vec![1]]);
/// # Ok(()) }
/// ```
pub fn read(path: &Path) -> Result<MultilabelData, IoError> {
    read_with(path, parse_label_set)
}

/// One more than the largest label in the data (0 when no row has a label).
pub fn n_labels(data: &MultilabelData) -> usize {
    data.labels
        .iter()
        .filter_map(|l| l.last())
        .map(|&l| l as usize + 1)
        .max()
        .unwrap_or(0)
}

/// The label sets as indicator vectors of length `n_labels` (labels at or beyond it are dropped).
pub fn indicators(labels: &[Vec<u32>], n_labels: usize) -> Vec<Vec<bool>> {
    labels
        .iter()
        .map(|set| {
            let mut v = vec![false; n_labels];
            for &l in set {
                if let Some(slot) = v.get_mut(l as usize) {
                    *slot = true;
                }
            }
            v
        })
        .collect()
}
