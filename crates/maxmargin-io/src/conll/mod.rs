//! CoNLL column files (`word [POS ...] tag` per line, a blank line between sentences), the feature templates
//! taggers use ([`Template`]), and the dictionary that maps their strings to indices ([`FeatureMap`]).
//!
//! A file's lines all have the same number of whitespace-separated columns: the input columns (the word
//! first) and, in labelled data, the tag last. `-DOCSTART-` lines (CoNLL-2002/2003) end a sentence and are
//! skipped. Feature indices are given in order of first appearance in the training data, so the dictionary
//! is deterministic; features unseen in training are dropped at test time.

mod features;
mod template;

pub use features::FeatureMap;
pub use template::{
    MAX_AFFIX, MAX_MACROS_PER_TEMPLATE, MAX_OFFSET, MAX_TEMPLATE_BYTES, MAX_TEMPLATES, Template,
};

use crate::{IoError, open_maybe_gz};
use std::path::Path;

/// One sentence: its input columns and, when labelled, its tags.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Sentence {
    /// The input columns, column by column: `columns[0]` are the words, `columns[1]` (when the file has
    /// one) their part-of-speech tags, and so on; every column has one cell per token.
    pub columns: Vec<Vec<String>>,
    /// The tags (the last column: chunk tags such as `B-NP`); empty for unlabelled text.
    pub tags: Vec<String>,
}

impl Sentence {
    /// A sentence from rows of cells (the input columns of each token) and its tags (or none).
    ///
    /// # Examples
    /// ```
    /// let s = maxmargin_io::conll::Sentence::from_rows(&[vec!["He", "PRP"], vec!["ran", "VBD"]], &["B-NP", "B-VP"]);
    /// assert_eq!((s.len(), s.words()[1].as_str(), s.tags[0].as_str()), (2, "ran", "B-NP"));
    /// ```
    pub fn from_rows<S: AsRef<str>, T: AsRef<str>>(rows: &[Vec<S>], tags: &[T]) -> Self {
        let width = rows.iter().map(Vec::len).max().unwrap_or(0);
        let columns = (0..width)
            .map(|c| {
                rows.iter()
                    .map(|r| {
                        r.get(c)
                            .map_or_else(String::new, |v| v.as_ref().to_string())
                    })
                    .collect()
            })
            .collect();
        Self {
            columns,
            tags: tags.iter().map(|t| t.as_ref().to_string()).collect(),
        }
    }

    /// The words (the first column).
    pub fn words(&self) -> &[String] {
        self.columns.first().map_or(&[], Vec::as_slice)
    }

    /// Number of tokens.
    pub fn len(&self) -> usize {
        self.words().len()
    }

    /// Whether the sentence has no token.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The input cells of token `t`, in column order.
    pub fn row(&self, t: usize) -> impl Iterator<Item = &str> + '_ {
        self.columns
            .iter()
            .filter_map(move |c| c.get(t).map(String::as_str))
    }
}

/// Which column, if any, holds the tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Labelled data: the last column is the tag, at least two columns per line.
    Labelled,
    /// Text for a tagger trained on this many input columns: lines with that many columns are untagged,
    /// lines with one more carry a (gold) tag last; a file is one or the other throughout.
    Inputs(usize),
}

/// Reads a labelled CoNLL column file: at least two whitespace-separated columns per line (word, ..., tag),
/// the same number on every line.
///
/// # Errors
/// [`IoError::Parse`] for a line with too few columns or another count than the first line's,
/// [`IoError::Io`].
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
    crate::cache::refuse(path)?;
    read_from(open_maybe_gz(path)?, path)
}

/// Reads labelled CoNLL text from any buffered reader; `path` names the source in errors. Lines are bounded
/// by [`crate::libsvm::MAX_LINE_BYTES`].
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
    read_layout(reader, path, Layout::Labelled)
}

/// Reads CoNLL text as `layout` says: labelled, or for a tagger with a known number of input columns
/// (tagged or untagged).
///
/// # Errors
/// As [`read`]; with [`Layout::Inputs`], a line with another number of columns than the layout allows or
/// than the first line.
///
/// # Examples
/// ```
/// use maxmargin_io::conll::{Layout, read_layout};
/// let s = read_layout(&b"He PRP\nran VBD\n"[..], "text".as_ref(), Layout::Inputs(2))?;
/// assert_eq!((s[0].len(), s[0].tags.len()), (2, 0));
/// # Ok::<(), maxmargin_io::IoError>(())
/// ```
pub fn read_layout(
    reader: impl std::io::BufRead,
    path: &Path,
    layout: Layout,
) -> Result<Vec<Sentence>, IoError> {
    let mut out = Vec::new();
    let mut current = Sentence::default();
    // The column count, and the line that set it.
    let mut width: Option<(usize, usize)> = None;
    let mut text = crate::lines::Lines::new(reader, path);
    let bad = |line: usize, message: String| IoError::Parse {
        path: path.to_path_buf(),
        line,
        column: 1,
        field: "columns",
        message,
    };
    while let Some((line_no, buf)) = text.next_line()? {
        // Columns are split on ASCII spaces and tabs only, as conlleval and CRF++ split them: a no-break or
        // ideographic space (U+00A0, U+3000) inside a token is part of it.
        let mut cols = buf.split_ascii_whitespace().peekable();
        let docstart = cols.peek().is_some_and(|c| *c == "-DOCSTART-");
        if cols.peek().is_none() || docstart {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            continue;
        }
        let cols: Vec<&str> = cols.collect();
        let n = cols.len();
        match width {
            Some((w, first)) if w != n => {
                return Err(bad(
                    line_no,
                    format!(
                        "expected {w} columns, as on the first token line (line {first}), got {n}"
                    ),
                ));
            }
            Some(_) => {}
            None => {
                let ok = match layout {
                    Layout::Labelled => n >= 2,
                    Layout::Inputs(k) => n == k || n == k + 1,
                };
                if !ok {
                    return Err(bad(
                        line_no,
                        match layout {
                            Layout::Labelled => {
                                format!("expected at least 2 columns (word ... tag), got {n}")
                            }
                            Layout::Inputs(k) => format!(
                                "expected {k} input columns (and optionally the tag), as the model was trained on, got {n}"
                            ),
                        },
                    ));
                }
                width = Some((n, line_no));
            }
        }
        let tagged = match layout {
            Layout::Labelled => true,
            Layout::Inputs(k) => n == k + 1,
        };
        let inputs = if tagged { n - 1 } else { n };
        if current.columns.len() != inputs {
            current.columns = vec![Vec::new(); inputs];
        }
        for (c, cell) in cols[..inputs].iter().enumerate() {
            current.columns[c].push((*cell).to_string());
        }
        if tagged {
            current.tags.push(cols[n - 1].to_string());
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    Ok(out)
}

/// Every line of CoNLL text as read, without its line end, and whether it is a token's (the lines [`read`]
/// takes tokens from, in order; blank and `-DOCSTART-` lines are not): for output that mirrors its input
/// line for line.
///
/// # Errors
/// As reading text does ([`IoError::Io`], an over-long line, invalid UTF-8).
pub fn visit_lines(
    reader: impl std::io::BufRead,
    path: &Path,
    mut visit: impl FnMut(&str, bool) -> Result<(), IoError>,
) -> Result<(), IoError> {
    let mut text = crate::lines::Lines::new(reader, path);
    while let Some((_, buf)) = text.next_line()? {
        let line = buf.trim_end_matches(['\n', '\r']);
        let first = line.split_ascii_whitespace().next();
        visit(line, first.is_some_and(|f| f != "-DOCSTART-"))?;
    }
    Ok(())
}

/// The 1-based line of token `token` of sentence `sentence` (both 0-based, as [`read`] numbers them) in a
/// CoNLL file, found by reading the file again (for an error about one of its cells); `None` when the file
/// cannot be read or is shorter.
pub fn token_line(path: &Path, sentence: usize, token: usize) -> Option<usize> {
    let mut text = crate::lines::Lines::new(open_maybe_gz(path).ok()?, path);
    let (mut s, mut t, mut inside) = (0usize, 0usize, false);
    while let Ok(Some((line_no, buf))) = text.next_line() {
        let first = buf.split_ascii_whitespace().next();
        if first.is_none() || first == Some("-DOCSTART-") {
            if inside {
                (s, t, inside) = (s + 1, 0, false);
            }
            continue;
        }
        if (s, t) == (sentence, token) {
            return Some(line_no);
        }
        (t, inside) = (t + 1, true);
    }
    None
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

/// A chunk: `[start, end)` positions and its type (`NP`, `VP`, ...).
pub type Chunk = (usize, usize, String);

fn split_tag(tag: &str) -> (&str, &str) {
    match tag.split_once('-') {
        Some((prefix, kind)) => (prefix, kind),
        None => (tag, ""),
    }
}

/// The chunks of a tag sequence by conlleval's rules, for IOB1, IOB2 (BIO) and IOBES tags: a chunk starts at
/// `B-X` or `S-X`, at `I-X` or `E-X` after `O`, `E-*` or `S-*`, or at any tag whose type differs from the
/// previous tag's; it ends after `E-*` or `S-*`, before `B-*`, `S-*` or `O` that follow `B-*` or `I-*`, before
/// a change of type, or at the end.
///
/// # Examples
/// ```
/// use maxmargin_io::conll::chunks;
/// let tags = ["B-NP", "I-NP", "O", "I-VP", "B-NP", "B-NP"];
/// assert_eq!(chunks(&tags), vec![(0, 2, "NP".into()), (3, 4, "VP".into()), (4, 5, "NP".into()), (5, 6, "NP".into())]);
/// let iobes = ["S-PER", "B-LOC", "E-LOC", "O", "B-ORG", "I-ORG", "E-ORG", "I-ORG"];
/// assert_eq!(chunks(&iobes), vec![(0, 1, "PER".into()), (1, 3, "LOC".into()), (4, 7, "ORG".into()), (7, 8, "ORG".into())]);
/// ```
pub fn chunks<S: AsRef<str>>(tags: &[S]) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut open: Option<(usize, &str)> = None;
    let mut prev: (&str, &str) = ("O", "");
    for (t, tag) in tags.iter().enumerate() {
        let (prefix, kind) = split_tag(tag.as_ref());
        let (pp, pk) = prev;
        let ends = matches!((pp, prefix), ("B" | "I", "B" | "S" | "O"))
            || matches!(pp, "E" | "S")
            || (pp != "O" && pk != kind);
        let starts = matches!(prefix, "B" | "S")
            || (matches!(pp, "E" | "S" | "O") && matches!(prefix, "E" | "I"))
            || (prefix != "O" && pk != kind);
        if ends && let Some((start, k)) = open.take() {
            out.push((start, t, k.to_string()));
        }
        if starts && prefix != "O" {
            open = Some((t, kind));
        }
        prev = (prefix, kind);
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

impl ChunkScore {
    /// The score of `correct` chunks right out of `predicted` found and `gold` in the data.
    pub fn from_counts(correct: usize, predicted: usize, gold: usize) -> Self {
        let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let (precision, recall) = (ratio(correct, predicted), ratio(correct, gold));
        let f1 = if precision + recall > 0.0 {
            2.0 * precision * recall / (precision + recall)
        } else {
            0.0
        };
        Self {
            correct,
            predicted,
            gold,
            precision,
            recall,
            f1,
        }
    }
}

/// Whether `tag` is a chunk tag as conlleval reads one: `O`, or `B-`, `I-`, `E-` or `S-` followed by a type.
/// Part-of-speech tags (`NN`, `VBD`) are not: chunk scores mean nothing for them.
///
/// # Examples
/// ```
/// use maxmargin_io::conll::is_chunk_tag;
/// assert!(is_chunk_tag("O") && is_chunk_tag("B-NP") && is_chunk_tag("S-PER"));
/// assert!(!is_chunk_tag("NN") && !is_chunk_tag("B-") && !is_chunk_tag("PRP$"));
/// ```
pub fn is_chunk_tag(tag: &str) -> bool {
    tag == "O"
        || matches!(
            tag.split_once('-'),
            Some(("B" | "I" | "E" | "S", kind)) if !kind.is_empty()
        )
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
pub fn chunk_score<S, T, G, P>(gold: &[G], pred: &[P]) -> ChunkScore
where
    S: AsRef<str>,
    T: AsRef<str>,
    G: AsRef<[S]>,
    P: AsRef<[T]>,
{
    let by_type = chunk_score_by_type(gold, pred);
    let total = |f: fn(&ChunkScore) -> usize| by_type.values().map(f).sum::<usize>();
    ChunkScore::from_counts(
        total(|s| s.correct),
        total(|s| s.predicted),
        total(|s| s.gold),
    )
}

/// [`chunk_score`] for each chunk type found in the data or the predictions (conlleval's table), by type name.
///
/// # Examples
/// ```
/// use maxmargin_io::conll::chunk_score_by_type;
/// let gold = vec![vec!["B-NP", "I-NP", "B-VP"]];
/// let pred = vec![vec!["B-NP", "B-NP", "B-VP"]];
/// let t = chunk_score_by_type(&gold, &pred);
/// assert_eq!((t["NP"].correct, t["NP"].predicted, t["NP"].gold), (0, 2, 1));
/// assert_eq!(t["VP"].f1, 1.0);
/// ```
pub fn chunk_score_by_type<S, T, G, P>(
    gold: &[G],
    pred: &[P],
) -> std::collections::BTreeMap<String, ChunkScore>
where
    S: AsRef<str>,
    T: AsRef<str>,
    G: AsRef<[S]>,
    P: AsRef<[T]>,
{
    let mut counts = std::collections::BTreeMap::<String, [usize; 3]>::new();
    for (g, p) in gold.iter().zip(pred) {
        let (gc, pc) = (chunks(g.as_ref()), chunks(p.as_ref()));
        for c in &pc {
            let n = counts.entry(c.2.clone()).or_default();
            n[1] += 1;
            n[0] += usize::from(gc.contains(c));
        }
        for c in gc {
            counts.entry(c.2).or_default()[2] += 1;
        }
    }
    counts
        .into_iter()
        .map(|(kind, [correct, predicted, gold])| {
            (kind, ChunkScore::from_counts(correct, predicted, gold))
        })
        .collect()
}
