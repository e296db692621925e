//! Joachims' svm_hmm format: one token per line, `TAG qid:N idx:val ... [# comment]`, tags from 1, the
//! tokens of one sequence on consecutive lines with the same `qid`.

use crate::IoError;
use maxmargin_core::vector::SparseVec;
use std::path::{Path, PathBuf};

/// Sequences with one tag per position (0-based in memory: tag `k` in the file is label `k − 1`).
#[derive(Debug, Clone, PartialEq)]
pub struct SequenceData {
    /// One feature vector per position, per sequence (0-based feature indices).
    pub sequences: Vec<Vec<SparseVec>>,
    /// One label per position, per sequence.
    pub labels: Vec<Vec<u32>>,
    /// The `qid` of each sequence.
    pub qids: Vec<u64>,
    /// One past the largest feature index.
    pub n_features: usize,
    /// One past the largest label.
    pub n_labels: usize,
    /// The file.
    pub source: PathBuf,
}

impl SequenceData {
    /// Number of sequences.
    pub fn n_sequences(&self) -> usize {
        self.sequences.len()
    }

    /// Number of positions over all sequences.
    pub fn n_tokens(&self) -> usize {
        self.labels.iter().map(Vec::len).sum()
    }
}

fn parse_tag(tok: &str) -> Result<u32, String> {
    match tok.parse::<u32>() {
        Ok(0) => Err("tag 0: svm_hmm tags start at 1".into()),
        Ok(t) => Ok(t - 1),
        Err(_) => Err(format!(
            "{} is not a tag (a positive integer)",
            crate::libsvm::quote(tok)
        )),
    }
}

/// Reads an svm_hmm file.
///
/// # Errors
/// [`IoError::Parse`] for a bad token, a line without `qid:`, or a `qid` that reappears after another
/// sequence (tokens of one sequence must be consecutive); [`IoError::Io`].
///
/// # Examples
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let p = dir.path().join("s.dat");
/// std::fs::write(&p, "1 qid:1 1:1 # a\n2 qid:1 2:1\n1 qid:2 3:1\n")?;
/// let d = maxmargin_io::svm_hmm::read(&p)?;
/// assert_eq!(d.labels, vec![vec![0, 1], vec![0]]);
/// assert_eq!((d.n_features, d.n_labels), (3, 2));
/// # Ok(()) }
/// ```
pub fn read(path: &Path) -> Result<SequenceData, IoError> {
    crate::cache::refuse(path)?;
    read_from(crate::open_maybe_gz(path)?, path)
}

/// Reads svm_hmm text from any buffered reader; `path` names the source in errors.
///
/// # Errors
/// As [`read`].
///
/// # Examples
/// ```
/// let d = maxmargin_io::svm_hmm::read_from(&b"1 qid:1 1:1\n2 qid:1 2:1\n"[..], "inline".as_ref())?;
/// assert_eq!(d.labels, vec![vec![0, 1]]);
/// # Ok::<(), maxmargin_io::IoError>(())
/// ```
pub fn read_from(reader: impl std::io::BufRead, path: &Path) -> Result<SequenceData, IoError> {
    let flat = crate::libsvm::read_from(reader, path, parse_tag)?;
    let mut out = SequenceData {
        sequences: Vec::new(),
        labels: Vec::new(),
        qids: Vec::new(),
        n_features: flat.x.n_features(),
        n_labels: flat
            .labels
            .iter()
            .map(|&l| l as usize + 1)
            .max()
            .unwrap_or(0),
        source: path.to_path_buf(),
    };
    let mut seen = std::collections::HashSet::new();
    for (i, row) in flat.x.rows().enumerate() {
        let line = flat.lines[i];
        let Some(qid) = flat.qids[i] else {
            return Err(IoError::Parse {
                path: path.to_path_buf(),
                line,
                column: 1,
                field: "qid",
                message: "missing qid: every svm_hmm line needs qid:N after the tag".into(),
            });
        };
        if out.qids.last() != Some(&qid) {
            if !seen.insert(qid) {
                return Err(IoError::Parse {
                    path: path.to_path_buf(),
                    line,
                    column: 1,
                    field: "qid",
                    message: format!(
                        "qid {qid} appears again after another sequence: tokens of one sequence must be consecutive"
                    ),
                });
            }
            out.qids.push(qid);
            out.sequences.push(Vec::new());
            out.labels.push(Vec::new());
        }
        let (seq, labels) = (out.sequences.last_mut(), out.labels.last_mut());
        if let (Some(seq), Some(labels)) = (seq, labels) {
            seq.push(row.to_owned());
            labels.push(flat.labels[i]);
        }
    }
    Ok(out)
}
