//! Label maps: the two classes of a binary problem to ±1 ([`BinaryLabels`]), the classes of a multiclass
//! problem to indices ([`ClassLabels`]). Both name the file and line of a label they do not know.

use crate::IoError;
use crate::dataset::LabeledData;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The two classes of a binary problem and their mapping to ±1: the smaller label is −1, the larger +1
/// (so `-1/+1`, `0/1` and `1/2` all map in their natural order).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BinaryLabels {
    /// The label mapped to −1.
    pub negative: f64,
    /// The label mapped to +1.
    pub positive: f64,
}

impl BinaryLabels {
    /// Finds the two classes of `labels`.
    ///
    /// # Errors
    /// [`IoError::Empty`] for no labels, [`IoError::NotBinary`] for one class or more than two.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), maxmargin_io::IoError> {
    /// use maxmargin_io::libsvm::BinaryLabels;
    /// let m = BinaryLabels::from_labels("d".as_ref(), &[2.0, 1.0, 2.0])?;
    /// assert_eq!((m.negative, m.positive), (1.0, 2.0));
    /// assert!(BinaryLabels::from_labels("d".as_ref(), &[1.0, 1.0]).is_err());
    /// # Ok(()) }
    /// ```
    pub fn from_labels(source: &Path, labels: &[f64]) -> Result<Self, IoError> {
        let mut distinct: Vec<f64> = Vec::new();
        for &l in labels {
            if !distinct.contains(&l) {
                distinct.push(l);
                if distinct.len() > 8 {
                    break;
                }
            }
        }
        distinct.sort_by(f64::total_cmp);
        match distinct.as_slice() {
            [] => Err(IoError::Empty {
                path: source.to_path_buf(),
            }),
            &[negative, positive] => Ok(Self { negative, positive }),
            other => Err(IoError::NotBinary {
                path: source.to_path_buf(),
                found: other.len(),
                at_least: other.len() > 8,
                labels: other
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    /// The same two classes with `positive` as the positive one (`None` keeps the larger label).
    ///
    /// # Errors
    /// [`IoError::Mismatch`] when `positive` is neither class of `source`.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), maxmargin_io::IoError> {
    /// use maxmargin_io::libsvm::BinaryLabels;
    /// let m = BinaryLabels::from_labels("d".as_ref(), &[0.0, 1.0])?.with_positive("d".as_ref(), Some(0.0))?;
    /// assert_eq!((m.negative, m.positive), (1.0, 0.0));
    /// assert!(m.with_positive("d".as_ref(), Some(2.0)).is_err());
    /// # Ok(()) }
    /// ```
    pub fn with_positive(self, source: &Path, positive: Option<f64>) -> Result<Self, IoError> {
        match positive {
            None => Ok(self),
            Some(p) if p == self.positive => Ok(self),
            Some(p) if p == self.negative => Ok(Self {
                negative: self.positive,
                positive: self.negative,
            }),
            Some(p) => Err(IoError::Mismatch {
                path: source.to_path_buf(),
                message: format!(
                    "--pos-label {p} is not one of its two labels ({} and {})",
                    self.negative.min(self.positive),
                    self.negative.max(self.positive)
                ),
            }),
        }
    }

    /// ±1 for a known label, `None` for any other.
    pub fn to_sign(&self, label: f64) -> Option<f64> {
        if label == self.positive {
            Some(1.0)
        } else if label == self.negative {
            Some(-1.0)
        } else {
            None
        }
    }

    /// The label for a decision value: positive when `f > 0`, negative otherwise.
    pub fn from_decision(&self, f: f64) -> f64 {
        if f > 0.0 {
            self.positive
        } else {
            self.negative
        }
    }

    /// The ±1 targets of a whole dataset; a label outside the two classes is an error naming its line.
    ///
    /// # Errors
    /// [`IoError::Parse`] at the first row whose label is neither class.
    pub fn targets(&self, data: &LabeledData) -> Result<Vec<f64>, IoError> {
        data.labels
            .iter()
            .enumerate()
            .map(|(i, &l)| {
                self.to_sign(l).ok_or_else(|| IoError::Parse {
                    path: data.source.clone(),
                    line: data.lines.get(i).copied().unwrap_or(i + 1),
                    column: 1,
                    field: "label",
                    message: format!(
                        "label {l} is neither class of the model ({} or {})",
                        self.negative, self.positive
                    ),
                })
            })
            .collect()
    }
}

/// The classes of a multiclass problem mapped to `0..K`: sorted when found in data
/// ([`ClassLabels::from_labels`]); a model converted from LIBLINEAR keeps LIBLINEAR's order (first appearance
/// in its training file, which decides its ties), and lookups serve either.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassLabels {
    /// The distinct labels, increasing from data; class `k` is `classes[k]`.
    pub classes: Vec<f64>,
}

impl ClassLabels {
    /// Finds the classes of `labels`.
    ///
    /// # Errors
    /// [`IoError::Empty`] for no labels.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), maxmargin_io::IoError> {
    /// use maxmargin_io::libsvm::ClassLabels;
    /// let c = ClassLabels::from_labels("d".as_ref(), &[3.0, 1.0, 3.0, 2.0])?;
    /// assert_eq!((c.index_of(3.0), c.index_of(5.0)), (Some(2), None));
    /// # Ok(()) }
    /// ```
    pub fn from_labels(source: &Path, labels: &[f64]) -> Result<Self, IoError> {
        let mut classes = labels.to_vec();
        classes.sort_by(f64::total_cmp);
        classes.dedup();
        if classes.is_empty() {
            return Err(IoError::Empty {
                path: source.to_path_buf(),
            });
        }
        Ok(Self { classes })
    }

    /// Number of classes.
    pub fn len(&self) -> usize {
        self.classes.len()
    }

    /// Always false: there is at least one class.
    pub fn is_empty(&self) -> bool {
        self.classes.is_empty()
    }

    /// The class index of a label: by bisection, and where that misses (classes out of order) by a scan.
    pub fn index_of(&self, label: f64) -> Option<u32> {
        let same = |c: &f64| c.total_cmp(&label).is_eq();
        self.classes
            .binary_search_by(|c| c.total_cmp(&label))
            .ok()
            .or_else(|| self.classes.iter().position(same))
            .map(|k| k as u32)
    }

    /// The class indices of a dataset; a label outside the classes is an error naming its line. Classes out
    /// of order are looked up in a map built once.
    ///
    /// # Errors
    /// [`IoError::Parse`] at the first unknown label.
    pub fn indices(&self, data: &LabeledData) -> Result<Vec<u32>, IoError> {
        let by_bits: Option<std::collections::HashMap<u64, u32>> =
            (!self.classes.is_sorted_by(|a, b| a.total_cmp(b).is_lt())).then(|| {
                (self.classes.iter().enumerate())
                    .map(|(k, c)| (c.to_bits(), k as u32))
                    .collect()
            });
        data.labels
            .iter()
            .enumerate()
            .map(|(i, &l)| {
                let k = match &by_bits {
                    Some(map) => map.get(&l.to_bits()).copied(),
                    None => self.index_of(l),
                };
                k.ok_or_else(|| IoError::Parse {
                    path: data.source.clone(),
                    line: data.lines.get(i).copied().unwrap_or(i + 1),
                    column: 1,
                    field: "label",
                    message: format!(
                        "label {l} is not one of the {} training classes",
                        self.len()
                    ),
                })
            })
            .collect()
    }
}
