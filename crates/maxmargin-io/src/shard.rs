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
    let mut text = Vec::new();
    let mut at = begin;
    while at < to {
        let n = file.read_until(b'\n', &mut text).map_err(io)?;
        if n == 0 {
            break;
        }
        at += n as u64;
    }
    let data = read_from(&text[..], path, parse_real_label).map_err(|e| match e {
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
    })?;
    Ok(Shard { data, start: begin })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_is_read_by_exactly_one_rank_and_errors_name_the_files_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("d.svm");
        let mut text = String::new();
        for i in 0..97 {
            // Lines of uneven length, a comment and a blank line among them.
            text.push_str(&format!(
                "{} {}:{}{}\n",
                if i % 2 == 0 { 1 } else { -1 },
                i % 7 + 1,
                i,
                "0".repeat(i % 13)
            ));
            if i == 40 {
                text.push_str("# a comment\n\n");
            }
        }
        std::fs::write(&p, &text).unwrap();
        let whole = crate::libsvm::read(&p).unwrap();
        for size in [1, 2, 3, 5, 8, 64, 200] {
            let mut labels = Vec::new();
            let mut values = Vec::new();
            for r in 0..size {
                let s = read_shard(&p, r, size).unwrap();
                for (k, &l) in s.data.lines.iter().enumerate() {
                    assert_eq!(s.file_line(l).unwrap(), whole.lines[labels.len() + k]);
                }
                labels.extend(s.data.labels);
                values.extend(s.data.x.rows().map(|row| row.values().to_vec()));
            }
            assert_eq!(labels, whole.labels, "{size} ranks");
            assert_eq!(
                values,
                whole
                    .x
                    .rows()
                    .map(|r| r.values().to_vec())
                    .collect::<Vec<_>>()
            );
        }
        std::fs::write(&p, format!("{text}+1 3:x\n")).unwrap();
        let e = read_shard(&p, 2, 3).unwrap_err().to_string();
        assert!(
            e.ends_with("d.svm:100:4: feature value: \"x\" is not a number"),
            "{e}"
        );
    }

    #[test]
    fn compressed_and_cached_input_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("d.svm.gz");
        std::fs::write(&p, [0x1f, 0x8b, 8, 0]).unwrap();
        let e = read_shard(&p, 0, 2).unwrap_err().to_string();
        assert!(
            e.contains("d.svm.gz: gzip input cannot be split between ranks"),
            "{e}"
        );
    }
}
