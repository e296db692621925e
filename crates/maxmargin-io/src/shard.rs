//! One rank's share of a LIBSVM text file: the file's bytes cut into `size` equal ranges, each moved forward
//! to the next line start, so every line belongs to exactly one rank (the one whose range holds its first
//! byte) and each rank reads only about `1/size` of the file. Errors name the file's own line numbers, counted
//! only when there is an error to report.

use crate::IoError;
use crate::libsvm::{LabeledData, parse_real_label, read_from};
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

/// A rank's rows, and where they start in the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Shard {
    /// The rows; `lines` counts from 1 at the shard's first line (see [`Shard::file_line`]).
    pub data: LabeledData,
    /// The byte offset of the shard's first line.
    pub start: u64,
}

impl Shard {
    /// The file's 1-based line number of the shard's line `line` (1-based): reads the bytes before the
    /// shard to count their lines, so call it for messages only.
    ///
    /// # Errors
    /// [`IoError::Io`] naming the file.
    pub fn file_line(&self, line: usize) -> Result<usize, IoError> {
        file_line(&self.data.source, self.start, line)
    }
}

/// The 1-based line number in `path` of line `line` (1-based) of the shard starting at byte `start`; reads
/// the bytes before it, so call it for messages only.
///
/// # Errors
/// [`IoError::Io`] naming the file.
pub fn file_line(path: &Path, start: u64, line: usize) -> Result<usize, IoError> {
    Ok(lines_before(path, start)? + line)
}

/// Reads rank `rank`'s share of the LIBSVM text file `path` split among `size` ranks.
///
/// # Errors
/// [`IoError::Unsplittable`] for gzip input, a cache file or standard input (their byte ranges are not line
/// ranges); [`IoError::Io`], or [`IoError::Parse`] naming the file's line, column and field.
///
/// # Examples
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let p = dir.path().join("d.svm");
/// std::fs::write(&p, "+1 1:1\n-1 2:1\n+1 1:2\n-1 2:2\n+1 1:3\n")?;
/// let parts: Vec<_> = (0..3).map(|r| maxmargin_io::shard::read_shard(&p, r, 3)).collect::<Result<_, _>>()?;
/// let rows: Vec<usize> = parts.iter().map(|s| s.data.n_samples()).collect();
/// assert_eq!(rows, [2, 2, 1]); // 35 bytes: 0..11, 11..23, 23..35, each from the next line start
/// # Ok(()) }
/// ```
pub fn read_shard(path: &Path, rank: usize, size: usize) -> Result<Shard, IoError> {
    let (mut file, begin, to) = open_range(path, rank, size)?;
    let text = lines_of_range(&mut file, path, (begin, to))?;
    let data = read_from(&text[..], path, parse_real_label).map_err(|e| in_file(e, begin))?;
    Ok(Shard { data, start: begin })
}

/// A rank's sequences of an svm_hmm file, and where they start in the file.
#[derive(Debug, Clone, PartialEq)]
pub struct SequenceShard {
    /// The sequences.
    pub data: crate::svm_hmm::SequenceData,
    /// The byte offset of the shard's first line.
    pub start: u64,
}

/// Reads rank `rank`'s share of the svm_hmm file `path` split among `size` ranks: the byte ranges as
/// [`read_shard`]'s, each moved forward to the next sequence start (a line whose `qid` differs from the
/// previous token line's), so every sequence belongs to the rank whose range holds its first byte.
///
/// # Errors
/// As [`read_shard`], and the svm_hmm reader's errors with the file's line numbers.
pub fn read_sequence_shard(
    path: &Path,
    rank: usize,
    size: usize,
) -> Result<SequenceShard, IoError> {
    let io = |e| IoError::io(path, e);
    let (mut file, mut begin, to) = open_range(path, rank, size)?;
    // Lines that continue the sequence running into this range belong to the rank before.
    if let Some(running) = qid_before(path, begin)? {
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = file.read_until(b'\n', &mut line).map_err(io)?;
            if n == 0 || qid_of(&line).is_some_and(|q| q != running) {
                break;
            }
            begin += n as u64;
        }
        file.seek(SeekFrom::Start(begin)).map_err(io)?;
    }
    let mut text = Vec::new();
    let mut at = begin;
    let mut last = None;
    loop {
        let start = text.len();
        let n = file.read_until(b'\n', &mut text).map_err(io)?;
        if n == 0 {
            break;
        }
        let qid = qid_of(&text[start..]);
        // Past the range, only the lines that finish the last sequence.
        if at >= to && qid.is_some_and(|q| Some(q) != last) {
            text.truncate(start);
            break;
        }
        last = qid.or(last);
        at += n as u64;
    }
    let data = crate::svm_hmm::read_from(&text[..], path).map_err(|e| in_file(e, begin))?;
    Ok(SequenceShard { data, start: begin })
}

/// A rank's graphs of a JSON-lines graph file (see [`crate::graphs`]), with the file's own line numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphShard {
    /// The graphs; each record's `line` is its line in the whole file.
    pub data: crate::graphs::GraphData,
    /// The byte offset of the shard's first line.
    pub start: u64,
}

/// Reads rank `rank`'s share of the graph file `path` split among `size` ranks: the byte ranges of
/// [`read_shard`], one graph per line, so every graph belongs to the rank whose range holds its first byte.
/// The records' lines are the file's, so that errors found later (a label beyond the model's, a cycle for
/// `exact-tree`) name the line a user can open.
///
/// # Errors
/// As [`read_shard`], the graph reader's errors with the file's line numbers, and
/// [`IoError::Unsplittable`] for a share without a graph (more ranks than graphs).
///
/// # Examples
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let p = dir.path().join("g.jsonl");
/// let line = r#"{"features": [[1, 0], [0, 1]], "edges": [[0, 1]], "labels": [0, 1]}"#;
/// std::fs::write(&p, format!("{line}\n{line}\n{line}\n"))?;
/// let parts: Vec<_> = (0..2).map(|r| maxmargin_io::shard::read_graph_shard(&p, r, 2)).collect::<Result<_, _>>()?;
/// assert_eq!((parts[0].data.n_graphs(), parts[1].data.n_graphs()), (2, 1));
/// assert_eq!(parts[1].data.graphs[0].line, 3);
/// # Ok(()) }
/// ```
pub fn read_graph_shard(path: &Path, rank: usize, size: usize) -> Result<GraphShard, IoError> {
    let (mut file, begin, to) = open_range(path, rank, size)?;
    let text = lines_of_range(&mut file, path, (begin, to))?;
    let before = if begin > 0 {
        lines_before(path, begin)?
    } else {
        0
    };
    let data = match crate::graphs::read_from_after(&text[..], path, before) {
        Ok(data) => data,
        Err(IoError::Empty { .. }) => {
            return Err(IoError::Unsplittable {
                path: path.to_path_buf(),
                message: format!(
                    "rank {rank} of {size} has no graphs (its share starts at byte {begin}): use fewer ranks"
                ),
            });
        }
        Err(e) => return Err(e),
    };
    Ok(GraphShard { data, start: begin })
}

/// The whole lines of `file` (at byte `begin`, a line start) that start before byte `to`.
fn lines_of_range(
    file: &mut BufReader<File>,
    path: &Path,
    (begin, to): (u64, u64),
) -> Result<Vec<u8>, IoError> {
    let mut text = Vec::new();
    let mut at = begin;
    while at < to {
        let n = file
            .read_until(b'\n', &mut text)
            .map_err(|e| IoError::io(path, e))?;
        if n == 0 {
            break;
        }
        at += n as u64;
    }
    Ok(text)
}

/// Opens `path` for a rank's share: refuses what cannot be split, and returns the reader at the first line
/// start at or after the share's first byte, that line start, and the share's end.
fn open_range(
    path: &Path,
    rank: usize,
    size: usize,
) -> Result<(BufReader<File>, u64, u64), IoError> {
    let unsplittable = |message: &str| IoError::Unsplittable {
        path: path.to_path_buf(),
        message: message.into(),
    };
    if crate::open::is_stdin(path) {
        return Err(unsplittable(
            "standard input cannot be split between ranks; give a file",
        ));
    }
    if crate::cache::is_cache(path) {
        return Err(unsplittable(
            "a cache file cannot be split between ranks; give the LIBSVM text it was made from",
        ));
    }
    let io = |e| IoError::io(path, e);
    let mut file = BufReader::with_capacity(1 << 16, File::open(path).map_err(io)?);
    if file.fill_buf().map_err(io)?.starts_with(&[0x1f, 0x8b]) {
        return Err(unsplittable(
            "gzip input cannot be split between ranks; decompress it first (gunzip -k)",
        ));
    }
    let len = file.get_ref().metadata().map_err(io)?.len();
    let cut = |r: usize| (u128::from(len) * r as u128 / size.max(1) as u128) as u64;
    let (from, to) = (cut(rank), cut(rank + 1));
    // The first line starting at or after `from`: the byte before it is a line end.
    let mut begin = 0;
    if from > 0 {
        file.seek(SeekFrom::Start(from - 1)).map_err(io)?;
        let mut skipped = Vec::new();
        begin = from - 1 + file.read_until(b'\n', &mut skipped).map_err(io)? as u64;
    }
    Ok((file, begin, to))
}

/// A parse error of a shard starting at byte `begin`, with the file's own line number (other errors as they
/// are).
pub fn in_file(e: IoError, begin: u64) -> IoError {
    match e {
        IoError::Parse {
            path,
            line,
            column,
            field,
            message,
        } => match file_line(&path, begin, line) {
            Ok(line) => IoError::Parse {
                line,
                path,
                column,
                field,
                message,
            },
            Err(e) => e,
        },
        other => other,
    }
}

/// The `qid` of an svm_hmm token line (its second field), `None` for a blank or comment line.
fn qid_of(line: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(line).ok()?;
    let content = text.split('#').next()?;
    let field = content.split_whitespace().nth(1)?;
    field.strip_prefix("qid:")?.parse().ok()
}

/// The `qid` of the last token line that ends before byte `end` (read backwards in growing windows), if any.
fn qid_before(path: &Path, end: u64) -> Result<Option<u64>, IoError> {
    let io = |e| IoError::io(path, e);
    let mut file = File::open(path).map_err(io)?;
    let mut window = 1u64 << 16;
    loop {
        let from = end.saturating_sub(window);
        let mut buf = vec![0; (end - from) as usize];
        file.seek(SeekFrom::Start(from)).map_err(io)?;
        file.read_exact(&mut buf).map_err(io)?;
        // Whole lines only: past the window's first line end, unless the window starts the file.
        let whole = if from == 0 {
            &buf[..]
        } else {
            match buf.iter().position(|&b| b == b'\n') {
                Some(p) => &buf[p + 1..],
                None => &[][..],
            }
        };
        if let Some(q) = whole.split(|&b| b == b'\n').rev().find_map(qid_of) {
            return Ok(Some(q));
        }
        if from == 0 {
            return Ok(None);
        }
        window *= 2;
    }
}

/// Lines that end before byte `end` of the file.
fn lines_before(path: &Path, end: u64) -> Result<usize, IoError> {
    let file = File::open(path).map_err(|e| IoError::io(path, e))?;
    let mut reader = BufReader::with_capacity(1 << 16, file.take(end));
    let mut count = 0;
    loop {
        let buf = reader.fill_buf().map_err(|e| IoError::io(path, e))?;
        if buf.is_empty() {
            return Ok(count);
        }
        count += buf.iter().filter(|&&b| b == b'\n').count();
        let n = buf.len();
        reader.consume(n);
    }
}
