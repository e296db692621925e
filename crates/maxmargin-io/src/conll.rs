//! CoNLL column files (`word POS tag` per line, a blank line between sentences) and the feature templates
//! chunkers use, mapped to indices by a dictionary built on the training set.
//!
//! Templates for position `t` (each a binary feature): a bias; the word, its lowercase, its shape
//! (`Xx`, `d`, ... with runs collapsed) and its POS tag; prefixes and suffixes of length 1–4 of the lowercase
//! word; the word, lowercase, shape and POS at offsets ±1 and ±2 (padded with `<s>`/`</s>`); and the POS
//! bigrams `(t−1, t)` and `(t, t+1)`. Indices are given in order of first appearance in the training data,
//! so the dictionary is deterministic; features unseen in training are dropped at test time.

use crate::{IoError, open_maybe_gz};
use maxmargin_core::vector::SparseVec;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

/// One sentence: parallel columns.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Sentence {
    /// The words.
    pub words: Vec<String>,
    /// Their part-of-speech tags.
    pub pos: Vec<String>,
    /// Their labels (the last column: chunk tags such as `B-NP`).
    pub tags: Vec<String>,
}

/// Reads a CoNLL column file: at least three whitespace-separated columns per line (word, POS, ..., tag).
///
/// # Errors
/// [`IoError::Parse`] for a line with fewer than three columns, [`IoError::Io`].
///
/// # Examples
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let p = dir.path().join("c.txt");
/// std::fs::write(&p, "He PRP B-NP\nran VBD B-VP\n\nOK UH O\n")?;
/// let s = maxmargin_io::conll::read(&p)?;
/// assert_eq!(s.len(), 2);
/// assert_eq!(s[0].tags, vec!["B-NP", "B-VP"]);
/// # Ok(()) }
/// ```
pub fn read(path: &Path) -> Result<Vec<Sentence>, IoError> {
    read_from(open_maybe_gz(path)?, path)
}

/// Reads CoNLL text from any buffered reader; `path` names the source in errors. Lines are bounded by
/// [`crate::libsvm::MAX_LINE_BYTES`].
///
/// # Errors
/// As [`read`].
///
/// # Examples
/// ```
/// let s = maxmargin_io::conll::read_from(&b"He PRP B-NP\n\nOK UH O\n"[..], "inline".as_ref())?;
/// assert_eq!(s.len(), 2);
/// # Ok::<(), maxmargin_io::IoError>(())
/// ```
pub fn read_from(reader: impl std::io::BufRead, path: &Path) -> Result<Vec<Sentence>, IoError> {
    let mut out = Vec::new();
    let mut current = Sentence::default();
    let mut text = crate::lines::Lines::new(reader, path);
    while let Some((line_no, buf)) = text.next_line()? {
        let cols: Vec<&str> = buf.split_whitespace().collect();
        if cols.is_empty() {
            if !current.words.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            continue;
        }
        if cols.len() < 3 {
            return Err(IoError::Parse {
                path: path.to_path_buf(),
                line: line_no,
                column: 1,
                field: "columns",
                message: format!(
                    "expected at least 3 columns (word POS tag), got {}",
                    cols.len()
                ),
            });
        }
        current.words.push(cols[0].to_string());
        current.pos.push(cols[1].to_string());
        current.tags.push(cols[cols.len() - 1].to_string());
    }
    if !current.words.is_empty() {
        out.push(current);
    }
    Ok(out)
}

/// The shape of a word: `X` upper, `x` lower, `d` digit, other characters kept, runs collapsed.
///
/// # Examples
/// ```
/// assert_eq!(maxmargin_io::conll::shape("McDonald's-1990"), "XxXx'x-d");
/// ```
pub fn shape(word: &str) -> String {
    let mut out = String::new();
    for c in word.chars() {
        let s = if c.is_uppercase() {
            'X'
        } else if c.is_lowercase() {
            'x'
        } else if c.is_ascii_digit() {
            'd'
        } else {
            c
        };
        if !out.ends_with(s) {
            out.push(s);
        }
    }
    out
}

/// The feature strings of position `t`, appended to `out` (cleared first).
fn templates(s: &Sentence, t: usize, out: &mut Vec<String>) {
    out.clear();
    let n = s.words.len();
    let at = |col: &Vec<String>, o: isize| -> String {
        let i = t as isize + o;
        if i < 0 {
            "<s>".into()
        } else if i as usize >= n {
            "</s>".into()
        } else {
            col[i as usize].clone()
        }
    };
    let word = &s.words[t];
    let lower = word.to_lowercase();
    out.push("b".into());
    for o in [-2isize, -1, 0, 1, 2] {
        let w = at(&s.words, o);
        let mut f = String::new();
        let _ = write!(f, "w{o}={w}");
        out.push(f);
        out.push(format!("l{o}={}", w.to_lowercase()));
        out.push(format!("s{o}={}", shape(&w)));
        out.push(format!("p{o}={}", at(&s.pos, o)));
    }
    let chars: Vec<char> = lower.chars().collect();
    for k in 1..=4.min(chars.len()) {
        out.push(format!("pre{k}={}", chars[..k].iter().collect::<String>()));
        out.push(format!(
            "suf{k}={}",
            chars[chars.len() - k..].iter().collect::<String>()
        ));
    }
    out.push(format!("pp-1={}|{}", at(&s.pos, -1), at(&s.pos, 0)));
    out.push(format!("pp+1={}|{}", at(&s.pos, 0), at(&s.pos, 1)));
}

/// Feature and tag dictionaries built on a training set.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FeatureMap {
    features: HashMap<String, u32>,
    tags: Vec<String>,
    tag_ids: HashMap<String, u32>,
}

impl FeatureMap {
    /// Builds the dictionaries from the training sentences (indices in order of first appearance).
    pub fn fit(train: &[Sentence]) -> Self {
        let mut map = Self::default();
        let mut buf = Vec::new();
        for s in train {
            for t in 0..s.words.len() {
                templates(s, t, &mut buf);
                for f in buf.drain(..) {
                    let next = map.features.len() as u32;
                    map.features.entry(f).or_insert(next);
                }
            }
            for tag in &s.tags {
                if !map.tag_ids.contains_key(tag) {
                    map.tag_ids.insert(tag.clone(), map.tags.len() as u32);
                    map.tags.push(tag.clone());
                }
            }
        }
        map
    }

    /// Number of features.
    pub fn n_features(&self) -> usize {
        self.features.len()
    }

    /// Number of tags.
    pub fn n_tags(&self) -> usize {
        self.tags.len()
    }

    /// The tag names, by id.
    pub fn tag_names(&self) -> &[String] {
        &self.tags
    }

    /// One sparse binary feature vector per position; features not in the dictionary are dropped.
    pub fn features(&self, s: &Sentence) -> Vec<SparseVec> {
        let mut buf = Vec::new();
        (0..s.words.len())
            .map(|t| {
                templates(s, t, &mut buf);
                let mut idx: Vec<u32> = buf
                    .iter()
                    .filter_map(|f| self.features.get(f).copied())
                    .collect();
                idx.sort_unstable();
                idx.dedup();
                let val = vec![1.0; idx.len()];
                SparseVec::new(idx, val).unwrap_or_default()
            })
            .collect()
    }

    /// The tag ids of a sentence, or the first tag the training set never had.
    ///
    /// # Errors
    /// The unknown tag, as `Err(tag)`.
    pub fn tags(&self, s: &Sentence) -> Result<Vec<u32>, String> {
        s.tags
            .iter()
            .map(|t| self.tag_ids.get(t).copied().ok_or_else(|| t.clone()))
            .collect()
    }
}

/// A chunk: `[start, end)` positions and its type (`NP`, `VP`, ...).
pub type Chunk = (usize, usize, String);

fn split_tag(tag: &str) -> (&str, &str) {
    match tag.split_once('-') {
        Some((prefix, kind)) => (prefix, kind),
        None => (tag, ""),
    }
}

/// The chunks of a BIO tag sequence, by the conlleval rules: a chunk starts at `B-X`, or at `I-X` when the
/// previous tag is `O` or of another type, and ends before `O`, `B-*`, a tag of another type, or the end.
///
/// # Examples
/// ```
/// use maxmargin_io::conll::chunks;
/// let tags = ["B-NP", "I-NP", "O", "I-VP", "B-NP", "B-NP"];
/// assert_eq!(chunks(&tags), vec![(0, 2, "NP".into()), (3, 4, "VP".into()), (4, 5, "NP".into()), (5, 6, "NP".into())]);
/// ```
pub fn chunks<S: AsRef<str>>(tags: &[S]) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut open: Option<(usize, &str)> = None;
    for (t, tag) in tags.iter().enumerate() {
        let (prefix, kind) = split_tag(tag.as_ref());
        let continues = prefix == "I" && open.is_some_and(|(_, k)| k == kind);
        if !continues {
            if let Some((start, k)) = open.take() {
                out.push((start, t, k.to_string()));
            }
            if prefix == "B" || prefix == "I" {
                open = Some((t, kind));
            }
        }
    }
    if let Some((start, k)) = open {
        out.push((start, tags.len(), k.to_string()));
    }
    out
}

/// Chunk precision, recall and F1 (conlleval's definition: a chunk counts only with exact type and span).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ChunkScore {
    /// Chunks predicted with the right span and type.
    pub correct: usize,
    /// Chunks predicted.
    pub predicted: usize,
    /// Chunks in the gold standard.
    pub gold: usize,
    /// `correct / predicted`.
    pub precision: f64,
    /// `correct / gold`.
    pub recall: f64,
    /// The harmonic mean of precision and recall.
    pub f1: f64,
}

/// Scores predicted tag sequences against gold ones, sentence by sentence.
///
/// # Examples
/// ```
/// use maxmargin_io::conll::chunk_score;
/// let gold = vec![vec!["B-NP", "I-NP", "B-VP"]];
/// let pred = vec![vec!["B-NP", "B-NP", "B-VP"]];
/// let s = chunk_score(&gold, &pred);
/// assert_eq!((s.correct, s.predicted, s.gold), (1, 3, 2));
/// ```
pub fn chunk_score<S: AsRef<str>, T: AsRef<str>>(gold: &[Vec<S>], pred: &[Vec<T>]) -> ChunkScore {
    let mut s = ChunkScore::default();
    for (g, p) in gold.iter().zip(pred) {
        let (gc, pc) = (chunks(g), chunks(p));
        s.gold += gc.len();
        s.predicted += pc.len();
        s.correct += pc.iter().filter(|c| gc.contains(c)).count();
    }
    let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    s.precision = ratio(s.correct, s.predicted);
    s.recall = ratio(s.correct, s.gold);
    s.f1 = if s.precision + s.recall > 0.0 {
        2.0 * s.precision * s.recall / (s.precision + s.recall)
    } else {
        0.0
    };
    s
}
