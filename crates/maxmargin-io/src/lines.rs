//! Reading text one line at a time with bounded memory: a line longer than [`MAX_LINE_BYTES`] is an error
//! naming the file and line (never a buffer that grows until memory runs out), and invalid UTF-8 is an
//! error naming the line and column (never an I/O error without a place).

use crate::IoError;
use std::io::{BufRead, ErrorKind, Read};
use std::path::Path;

/// The longest line the readers accept (64 MiB): longer is an error naming the file and line, never a
/// buffer that grows until memory runs out (a gzip of 1 GB of zeros has no line end).
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// An error for the line after `line_base` complete ones when it is longer than [`MAX_LINE_BYTES`].
pub(crate) fn check_line_length(path: &Path, line_base: usize, len: usize) -> Result<(), IoError> {
    if len > MAX_LINE_BYTES {
        return Err(IoError::Parse {
            path: path.to_path_buf(),
            line: line_base + 1,
            column: 1,
            field: "line",
            message: format!("longer than {} MiB", MAX_LINE_BYTES >> 20),
        });
    }
    Ok(())
}

/// The UTF-8 byte order mark, skipped where it opens a file.
pub(crate) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// `reader` without the byte order mark that may open it (the bytes read to look for one are given back
/// otherwise).
///
/// # Errors
/// [`IoError::Io`] naming `path` when the first bytes cannot be read.
pub(crate) fn without_bom<R: std::io::Read>(
    mut reader: R,
    path: &Path,
) -> Result<std::io::Chain<std::io::Cursor<Vec<u8>>, R>, IoError> {
    let mut head = Vec::with_capacity(BOM.len());
    (&mut reader)
        .take(BOM.len() as u64)
        .read_to_end(&mut head)
        .map_err(|e| IoError::io(path, e))?;
    if head == BOM {
        head.clear();
    }
    Ok(std::io::Read::chain(std::io::Cursor::new(head), reader))
}

/// The parse error for bytes that are not UTF-8 at 1-based `line`, `valid` bytes into it.
pub(crate) fn utf8_error(path: &Path, line: usize, valid: usize) -> IoError {
    IoError::Parse {
        path: path.to_path_buf(),
        line,
        column: valid + 1,
        field: "text",
        message: "invalid UTF-8".into(),
    }
}

/// Reads lines of text from a buffered reader, one at a time, into one reused buffer: every reader of
/// text here goes through it, side files (weights, groups, traces) included. A UTF-8 byte order mark at
/// the start of the file is skipped.
pub struct Lines<'p, R> {
    reader: R,
    path: &'p Path,
    buf: Vec<u8>,
    /// Lines read so far.
    line: usize,
}

impl<'p, R: BufRead> Lines<'p, R> {
    /// Lines of `reader`, read from `path` (named in errors).
    pub fn new(reader: R, path: &'p Path) -> Self {
        Self {
            reader,
            path,
            buf: Vec::new(),
            line: 0,
        }
    }

    /// The same reader numbering its lines after the first `lines` of a file (a share of a file that starts
    /// past them), so that errors name the file's own line numbers.
    pub fn after(mut self, lines: usize) -> Self {
        self.line = lines;
        self
    }

    /// The next line's 1-based number and text with its line end, or `None` at the end of the input. The work is linear in the
    /// bytes read; memory is at most [`MAX_LINE_BYTES`] plus one read buffer.
    ///
    /// # Errors
    /// [`IoError::Io`] when reading fails, [`IoError::Parse`] for an over-long line (field `line`) or
    /// invalid UTF-8 (field `text`).
    pub fn next_line(&mut self) -> Result<Option<(usize, &str)>, IoError> {
        self.buf.clear();
        loop {
            let chunk = match self.reader.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(IoError::io(self.path, e)),
            };
            if chunk.is_empty() {
                break;
            }
            let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            // The line end itself does not count against the limit.
            let content = self.buf.len() + take - usize::from(done);
            check_line_length(self.path, self.line, content)?;
            self.buf.extend_from_slice(&chunk[..take]);
            self.reader.consume(take);
            if done {
                break;
            }
        }
        if self.buf.is_empty() {
            return Ok(None);
        }
        // A byte order mark opening the file (as Windows editors and Excel write UTF-8) is not text.
        if self.line == 0 && self.buf.starts_with(BOM) {
            self.buf.drain(..BOM.len());
        }
        self.line += 1;
        match std::str::from_utf8(&self.buf) {
            Ok(s) => Ok(Some((self.line, s))),
            Err(e) => Err(utf8_error(self.path, self.line, e.valid_up_to())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &[u8]) -> Result<Vec<String>, IoError> {
        let mut lines = Lines::new(text, Path::new("t"));
        let mut out = Vec::new();
        while let Some((_, l)) = lines.next_line()? {
            out.push(l.to_string());
        }
        Ok(out)
    }

    #[test]
    fn splits_after_each_line_end_and_keeps_a_last_line_without_one() -> Result<(), IoError> {
        assert_eq!(all(b"a\nb\r\n\nc")?, ["a\n", "b\r\n", "\n", "c"]);
        assert!(all(b"")?.is_empty());
        Ok(())
    }

    #[test]
    fn a_byte_order_mark_opening_the_file_is_skipped_and_nowhere_else() -> Result<(), IoError> {
        assert_eq!(
            all(b"\xEF\xBB\xBF1 1:2\n\xEF\xBB\xBFx")?,
            ["1 1:2\n", "\u{feff}x"]
        );
        let mut share = Lines::new(&b"\xEF\xBB\xBFy\n"[..], Path::new("t")).after(3);
        assert_eq!(share.next_line()?, Some((4, "\u{feff}y\n")));
        Ok(())
    }

    #[test]
    fn invalid_utf8_names_the_line_and_column() {
        let err = all(b"ok\nab\xffc\n").unwrap_err().to_string();
        assert!(err.contains("t:2:3: text: invalid UTF-8"), "{err}");
    }

    #[test]
    fn a_line_over_the_limit_is_an_error_before_it_is_held() {
        // A reader that never ends a line: the error comes once the limit is passed.
        let endless = std::io::BufReader::new(std::io::repeat(b'x'));
        let mut lines = Lines::new(endless, Path::new("t"));
        let err = lines.next_line().unwrap_err().to_string();
        assert!(err.contains("t:1:1: line: longer than 64 MiB"), "{err}");
        assert!(lines.buf.len() <= MAX_LINE_BYTES);
    }
}
