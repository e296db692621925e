//! The LIBSVM / SVMlight format: `label [qid:N] idx:val idx:val ... [# comment]`, one example per line.
//!
//! Indices are 1-based and strictly increasing in the file and 0-based in memory. Blank lines, `#`
//! comments and CRLF line ends are accepted; a file starting with the gzip magic bytes is decompressed on
//! the fly. Lines are streamed into one CSR buffer, so a file is never held twice in memory. [`read`] parses
//! on all cores: it reads 256 KiB of text at a time, cuts it into 32 KiB pieces at line ends, parses the
//! pieces in parallel and appends them in file order, so the result and the first error reported are the
//! same as a sequential read's, whatever the number of threads. Labels are
//! arbitrary finite numbers; [`BinaryLabels`] maps the two classes of a binary problem to ±1. Every error
//! names the file, line, column and field. The multilabel and svm_hmm variants reuse [`read_with`].

use crate::atomic::write_atomic;
pub use crate::dataset::{Dataset, LabeledData};
pub use crate::labels::{BinaryLabels, ClassLabels};
use crate::{IoError, open_maybe_gz};
use maxmargin_core::vector::SparseRows;
use std::io::BufRead;
use std::path::Path;

/// A parse failure inside one field, before the file and line are attached.
struct FieldError {
    column: usize,
    field: &'static str,
    message: String,
}

/// A token as quoted in an error: at most 80 characters, so one bad 10 MB token is not echoed whole.
pub(crate) fn quote(tok: &str) -> String {
    const MAX: usize = 80;
    match tok.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{:?}… ({} bytes)", &tok[..cut], tok.len()),
        None => format!("{tok:?}"),
    }
}

fn parse_f64(tok: &str) -> Result<f64, String> {
    if tok.is_empty() {
        return Err("missing: the value after the colon is empty".into());
    }
    match tok.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(v) => Err(format!("{v} is not a finite number")),
        Err(_) => Err(format!("{} is not a number", quote(tok))),
    }
}

pub use crate::number::format_number;

/// Parses a real label such as `+1`, `-1`, `0`, `2` or `3.5`.
///
/// # Errors
/// A message with the bad text when the label is not a finite number.
pub fn parse_real_label(tok: &str) -> Result<f64, String> {
    // `-0` and `0` are one label (adding 0.0 turns −0.0 into +0.0): otherwise sorting and equality disagree
    // and a file with both was refused by its own class map.
    if tok.is_empty() {
        return Err("missing label".into());
    }
    let v = parse_f64(tok)? + 0.0;
    // Integers past 2^53 that a float cannot hold read as a neighbour: two classes would become one.
    if v.abs() < 9_007_199_254_740_992.0 {
        return Ok(v);
    }
    let digits = tok.strip_prefix(['+', '-']).unwrap_or(tok);
    if digits.bytes().all(|b| b.is_ascii_digit()) {
        let held = format!("{:.0}", v.abs());
        if digits.trim_start_matches('0') != held {
            return Err(format!(
                "{} is an integer past 2^53 that a 64-bit float cannot hold (it reads as {held}), so \
                 labels that differ there would be one class: renumber the classes",
                quote(tok)
            ));
        }
    }
    Ok(v)
}

/// Byte offset of `tok` inside `line` (both from the same buffer), 1-based.
fn column_of(line: &str, tok: &str) -> usize {
    tok.as_ptr() as usize - line.as_ptr() as usize + 1
}

/// Parses one non-empty, comment-free line into the row buffers; returns the label and qid.
#[allow(clippy::type_complexity)]
fn parse_line<L>(
    line: &str,
    parse_label: &mut impl FnMut(&str) -> Result<L, String>,
    idx: &mut Vec<u32>,
    val: &mut Vec<f64>,
) -> Result<(L, Option<u64>), FieldError> {
    idx.clear();
    val.clear();
    let mut tokens = line.split_ascii_whitespace();
    let Some(first) = tokens.next() else {
        return Err(FieldError {
            column: 1,
            field: "label",
            message: "missing label".into(),
        });
    };
    // A first token with a colon (other than qid:) is a feature: the label field is empty, as the
    // multilabel format allows for an empty label set.
    let empty_label = first.contains(':') && !first.starts_with("qid:");
    let label =
        parse_label(if empty_label { "" } else { first }).map_err(|message| FieldError {
            column: column_of(line, first),
            field: "label",
            message,
        })?;
    let mut qid = None;
    let mut previous: u64 = 0;
    let rest = std::iter::once(first).filter(|_| empty_label).chain(tokens);
    for (k, tok) in rest.enumerate() {
        let column = column_of(line, tok);
        let fail = |field, message| FieldError {
            column,
            field,
            message,
        };
        let Some((key, value)) = tok.split_once(':') else {
            return Err(fail(
                "feature",
                format!("{} is not of the form index:value", quote(tok)),
            ));
        };
        if key == "qid" {
            if k != 0 {
                return Err(fail("qid", "qid must come right after the label".into()));
            }
            let q = value
                .parse::<u64>()
                .map_err(|_| fail("qid", format!("{value:?} is not a non-negative integer")))?;
            qid = Some(q);
            continue;
        }
        let j = key.parse::<u64>().map_err(|_| {
            fail(
                "feature index",
                format!("{key:?} is not a positive integer"),
            )
        })?;
        if j == 0 {
            return Err(fail(
                "feature index",
                "index 0: indices start at 1, as in LIBSVM and LIBLINEAR (a file written zero-based, as \
                 scikit-learn's dump_svmlight_file does by default, needs zero_based=False)"
                    .into(),
            ));
        }
        if j > u64::from(u32::MAX) {
            return Err(fail(
                "feature index",
                format!("index {j} is larger than {}", u32::MAX),
            ));
        }
        if j <= previous {
            return Err(fail(
                "feature index",
                format!("index {j} does not increase (follows {previous})"),
            ));
        }
        previous = j;
        let v = parse_f64(value).map_err(|m| fail("feature value", m))?;
        idx.push((j - 1) as u32);
        val.push(v);
    }
    Ok((label, qid))
}

/// Reads a LIBSVM-format file whose labels `parse_label` understands, streaming it into one CSR matrix.
///
/// # Errors
/// [`IoError::Io`] when the file cannot be read, [`IoError::Parse`] naming the line, column and field of
/// the first bad token.
pub fn read_with<L>(
    path: &Path,
    parse_label: impl FnMut(&str) -> Result<L, String>,
) -> Result<Dataset<L>, IoError> {
    crate::cache::refuse(path)?;
    read_from(open_maybe_gz(path)?, path, parse_label)
}

/// Reads LIBSVM-format text from any buffered reader; `path` names the source in errors.
///
/// # Errors
/// As [`read_with`].
///
/// # Examples
/// ```
/// # fn main() -> Result<(), maxmargin_io::IoError> {
/// use maxmargin_io::libsvm::{read_from, parse_real_label};
/// let d = read_from(&b"1 3:1.5\n0 1:1\n"[..], "inline".as_ref(), parse_real_label)?;
/// assert_eq!((d.n_samples(), d.x.n_features()), (2, 3));
/// # Ok(()) }
/// ```
pub fn read_from<L>(
    reader: impl BufRead,
    path: &Path,
    parse_label: impl FnMut(&str) -> Result<L, String>,
) -> Result<Dataset<L>, IoError> {
    let mut x = SparseRows::new();
    let (mut labels, mut qids, mut lines) = (Vec::new(), Vec::new(), Vec::new());
    for_each_row(reader, path, parse_label, |row| {
        x.push_row(row.idx, row.val).map_err(|e| IoError::Parse {
            path: path.to_path_buf(),
            line: row.line,
            column: 1,
            field: "feature",
            message: e.to_string(),
        })?;
        labels.push(row.label);
        qids.push(row.qid);
        lines.push(row.line);
        Ok(())
    })?;
    Ok(Dataset {
        x,
        labels,
        qids,
        lines,
        source: path.to_path_buf(),
        feature_names: Vec::new(),
        label_column: None,
    })
}

/// One parsed line, borrowed from the reader's buffers for the length of a callback.
#[derive(Debug)]
pub struct ParsedRow<'a, L> {
    /// The 1-based line in the file.
    pub line: usize,
    /// The label.
    pub label: L,
    /// The `qid:`, where given.
    pub qid: Option<u64>,
    /// 0-based feature indices, strictly increasing.
    pub idx: &'a [u32],
    /// Their values.
    pub val: &'a [f64],
}

/// Parses LIBSVM-format text one line at a time and hands each row to `row`, holding one line in memory
/// (what [`read_from`] and the streaming passes of [`crate::stream`] are built on).
///
/// # Errors
/// As [`read_with`], and whatever `row` returns.
pub fn for_each_row<L>(
    reader: impl BufRead,
    path: &Path,
    mut parse_label: impl FnMut(&str) -> Result<L, String>,
    mut row: impl FnMut(ParsedRow<'_, L>) -> Result<(), IoError>,
) -> Result<(), IoError> {
    let (mut idx, mut val) = (Vec::new(), Vec::new());
    let mut text = crate::lines::Lines::new(reader, path);
    while let Some((line_no, buf)) = text.next_line()? {
        let content = buf.split('#').next().unwrap_or("");
        let content = content.trim_end_matches(['\n', '\r']);
        if content.trim().is_empty() {
            continue;
        }
        let (label, qid) =
            parse_line(content, &mut parse_label, &mut idx, &mut val).map_err(|e| {
                IoError::Parse {
                    path: path.to_path_buf(),
                    line: line_no,
                    column: e.column,
                    field: e.field,
                    message: e.message,
                }
            })?;
        row(ParsedRow {
            line: line_no,
            label,
            qid,
            idx: &idx,
            val: &val,
        })?;
    }
    Ok(())
}

/// Text per parallel piece, and the text read from the file per round (pieces × this).
const PIECE_BYTES: usize = 32 << 10;
const PIECES_PER_ROUND: usize = 8;

/// One piece of a file, parsed: rows, labels, qids, 1-based lines inside the piece, and its line count.
struct Piece<L> {
    x: SparseRows,
    labels: Vec<L>,
    qids: Vec<Option<u64>>,
    lines: Vec<usize>,
    n_lines: usize,
}

/// Parses one piece of whole lines; an error carries its 1-based line inside the piece.
fn parse_piece<L>(
    bytes: &[u8],
    parse_label: &(impl Fn(&str) -> Result<L, String> + Sync),
) -> Result<Piece<L>, (usize, FieldError)> {
    let mut piece = Piece {
        x: SparseRows::new(),
        labels: Vec::new(),
        qids: Vec::new(),
        lines: Vec::new(),
        n_lines: 0,
    };
    let (mut idx, mut val) = (Vec::new(), Vec::new());
    let mut label_of = |t: &str| parse_label(t);
    // UTF-8 is checked line by line, so the first error in the file is the one reported, as by the
    // sequential reader.
    for raw in bytes.split_inclusive(|&b| b == b'\n') {
        piece.n_lines += 1;
        let line = piece.n_lines;
        let raw = std::str::from_utf8(raw).map_err(|e| {
            (
                line,
                FieldError {
                    column: e.valid_up_to() + 1,
                    field: "text",
                    message: "invalid UTF-8".into(),
                },
            )
        })?;
        let content = raw.split('#').next().unwrap_or("");
        let content = content.trim_end_matches(['\n', '\r']);
        if content.trim().is_empty() {
            continue;
        }
        let (label, qid) =
            parse_line(content, &mut label_of, &mut idx, &mut val).map_err(|e| (line, e))?;
        piece.x.push_row(&idx, &val).map_err(|e| {
            (
                line,
                FieldError {
                    column: 1,
                    field: "feature",
                    message: e.to_string(),
                },
            )
        })?;
        piece.labels.push(label);
        piece.qids.push(qid);
        piece.lines.push(line);
    }
    Ok(piece)
}

/// Reads LIBSVM-format text on all cores (see the module docs); `path` names the source in errors.
///
/// # Errors
/// As [`read_with`]; invalid UTF-8 is a parse error of the field `text`.
///
/// # Examples
/// ```
/// # fn main() -> Result<(), maxmargin_io::IoError> {
/// use maxmargin_io::libsvm::{read_parallel_from, parse_real_label};
/// let d = read_parallel_from(&b"1 3:1.5\n0 1:1\n"[..], "inline".as_ref(), parse_real_label)?;
/// assert_eq!((d.n_samples(), d.x.n_features()), (2, 3));
/// # Ok(()) }
/// ```
pub fn read_parallel_from<L: Send>(
    reader: impl std::io::Read,
    path: &Path,
    parse_label: impl Fn(&str) -> Result<L, String> + Sync,
) -> Result<Dataset<L>, IoError> {
    read_in_pieces(
        reader,
        path,
        parse_label,
        PIECE_BYTES,
        PIECES_PER_ROUND,
        None,
    )
}

/// Largest text size whose entry bound is reserved up front (beyond it the buffers grow as they fill).
const RESERVE_LIMIT: u64 = 4 << 30;

/// The text size of a file: its length, or for gzip the size its trailer records (exact for one member
/// below 4 GiB), capped at deflate's largest ratio; `None` when unknown.
fn text_size(path: &Path) -> Option<u64> {
    use std::io::{Read, Seek, SeekFrom};
    if !crate::open::is_regular_file(path) {
        return None;
    }
    let mut f = std::fs::File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    let mut magic = [0u8; 2];
    f.read_exact(&mut magic).ok()?;
    if magic != [0x1f, 0x8b] {
        return Some(len);
    }
    if len < 18 {
        return None;
    }
    f.seek(SeekFrom::End(-4)).ok()?;
    let mut isize = [0u8; 4];
    f.read_exact(&mut isize).ok()?;
    // The trailer is not trusted beyond what deflate can do (at most 1032 bytes out per byte in): a 5 KB file
    // claiming 4 GB would otherwise reserve gigabytes.
    Some(u64::from(u32::from_le_bytes(isize)).min(len.saturating_mul(1032)))
}

/// [`read_parallel_from`] with the piece size and pieces per round given (for tests that cut small texts
/// into many pieces and rounds), and the text's size when known: every stored entry takes at least four
/// bytes of text (`1:1 `), so a quarter of it bounds the entries, and reserving that bound up front keeps
/// the peak memory at the matrix itself instead of up to twice it while growing.
///
/// # Errors
/// As [`read_parallel_from`].
#[doc(hidden)]
pub fn read_in_pieces<L: Send>(
    reader: impl std::io::Read,
    path: &Path,
    parse_label: impl Fn(&str) -> Result<L, String> + Sync,
    piece_bytes: usize,
    pieces_per_round: usize,
    text_bytes: Option<u64>,
) -> Result<Dataset<L>, IoError> {
    use rayon::prelude::*;
    use std::io::Read;
    let mut out = Dataset {
        x: SparseRows::new(),
        labels: Vec::new(),
        qids: Vec::new(),
        lines: Vec::new(),
        source: path.to_path_buf(),
        feature_names: Vec::new(),
        label_column: None,
    };
    if let Some(bytes) = text_bytes {
        out.x.reserve(usize::try_from(bytes / 4).unwrap_or(0));
    }
    let mut reader = crate::lines::without_bom(reader, path)?;
    let mut carry: Vec<u8> = Vec::new();
    let mut line_base = 0;
    loop {
        // A round reads at least as much as is carried over (an overlong line doubles what is read, so a
        // line of L bytes costs O(L), not O(L²) as with a fixed step), and only the new bytes are searched.
        let piece_bytes = piece_bytes.max(1);
        let want = (piece_bytes * pieces_per_round.max(1))
            .max(carry.len())
            .max(piece_bytes);
        let mut buf = std::mem::take(&mut carry);
        let old = buf.len();
        buf.reserve_exact(want + 1);
        let got = (&mut reader)
            .take(want as u64)
            .read_to_end(&mut buf)
            .map_err(|e| IoError::io(path, e))?;
        let eof = got < want;
        if !eof {
            // Keep the unfinished last line for the next round (the carried part holds no line end).
            match buf[old..].iter().rposition(|&b| b == b'\n') {
                Some(p) => carry = buf.split_off(old + p + 1),
                None => {
                    check_line_length(path, line_base, buf.len())?;
                    carry = buf;
                    continue;
                }
            }
        } else if !buf[old..].contains(&b'\n') {
            check_line_length(path, line_base, buf.len())?;
        }
        let mut bounds = vec![0];
        while let Some(&start) = bounds.last().filter(|&&s| s < buf.len()) {
            let cut = (start + piece_bytes).min(buf.len());
            let end = buf[cut..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(buf.len(), |p| cut + p + 1);
            bounds.push(end);
        }
        let pieces: Vec<_> = bounds
            .par_windows(2)
            .map(|w| parse_piece(&buf[w[0]..w[1]], &parse_label))
            .collect();
        for piece in pieces {
            match piece {
                Ok(p) => {
                    out.x.append(&p.x);
                    out.labels.extend(p.labels);
                    out.qids.extend(p.qids);
                    out.lines.extend(p.lines.iter().map(|l| l + line_base));
                    line_base += p.n_lines;
                }
                Err((line, e)) => {
                    return Err(IoError::Parse {
                        path: path.to_path_buf(),
                        line: line_base + line,
                        column: e.column,
                        field: e.field,
                        message: e.message,
                    });
                }
            }
        }
        if eof {
            return Ok(out);
        }
    }
}

pub use crate::lines::MAX_LINE_BYTES;
use crate::lines::check_line_length;

/// Reads a LIBSVM-format file with real labels, parsing on all cores.
///
/// # Errors
/// As [`read_with`].
///
/// # Examples
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let p = dir.path().join("d.svm");
/// std::fs::write(&p, "+1 1:2 2:1\r\n# a comment\n\n-1 1:-1 2:-2 # trailing\n")?;
/// let d = maxmargin_io::libsvm::read(&p)?;
/// assert_eq!(d.labels, vec![1.0, -1.0]);
/// assert_eq!(d.x.row(1).values(), &[-1.0, -2.0]);
/// let err = std::fs::write(&p, "+1 1:2 0:1\n").map(|_| maxmargin_io::libsvm::read(&p));
/// assert!(err?.unwrap_err().to_string().contains(":1:8: feature index: index 0"));
/// # Ok(()) }
/// ```
pub fn read(path: &Path) -> Result<LabeledData, IoError> {
    read_labelled_by(path, parse_real_label)
}

/// A cache, or a text file read in parallel pieces with `parse_label`.
fn read_labelled_by(
    path: &Path,
    parse_label: fn(&str) -> Result<f64, String>,
) -> Result<LabeledData, IoError> {
    if crate::cache::is_cache(path) {
        return crate::cache::read(path);
    }
    let reader = open_maybe_gz(path)?;
    let mut data = read_in_pieces(
        reader,
        path,
        parse_label,
        PIECE_BYTES,
        PIECES_PER_ROUND,
        text_size(path).filter(|&n| n <= RESERVE_LIMIT),
    )?;
    data.x.shrink_to_fit();
    Ok(data)
}

/// A label for rows that are to be predicted: a number, or none (a line that starts with its features) or
/// `?` as a placeholder, both read as NaN.
///
/// # Errors
/// As [`parse_real_label`] for any other text.
pub fn parse_label_or_none(tok: &str) -> Result<f64, String> {
    if tok.is_empty() || tok == "?" {
        Ok(f64::NAN)
    } else {
        parse_real_label(tok)
    }
}

/// Reads rows to predict: as [`read`], where a row may have no label (it starts with its features) or the
/// placeholder `?`, each read as NaN.
///
/// # Errors
/// As [`read`].
pub fn read_unlabelled(path: &Path) -> Result<LabeledData, IoError> {
    read_labelled_by(path, parse_label_or_none)
}

/// Writes a dataset in LIBSVM format (1-based indices, `qid:` where present), atomically.
///
/// # Errors
/// [`IoError::Io`] naming the file.
pub fn write(path: &Path, data: &LabeledData) -> Result<(), IoError> {
    write_atomic(path, |w| {
        for (i, row) in data.x.rows().enumerate() {
            write!(w, "{}", data.labels[i])?;
            if let Some(Some(q)) = data.qids.get(i) {
                write!(w, " qid:{q}")?;
            }
            for (j, v) in row.iter() {
                write!(w, " {}:{}", j + 1, v)?;
            }
            writeln!(w)?;
        }
        Ok(())
    })
}
