//! Opening data files, gzip-compressed or not: the gzip magic bytes decide, not the file name. The path `-`
//! is standard input.

use crate::IoError;
use flate2::read::MultiGzDecoder;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// Opens `path` for buffered reading, decompressing on the fly when it starts with the gzip magic bytes.
///
/// # Errors
/// [`IoError::Io`] naming the file when it cannot be opened or read.
///
/// # Examples
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::io::BufRead;
/// let dir = tempfile::tempdir()?;
/// let p = dir.path().join("plain.txt");
/// std::fs::write(&p, "+1 1:0.5\n")?;
/// let mut line = String::new();
/// maxmargin_io::open_maybe_gz(&p)?.read_line(&mut line)?;
/// assert_eq!(line, "+1 1:0.5\n");
/// # Ok(()) }
/// ```
pub fn open_maybe_gz(path: &Path) -> Result<Box<dyn BufRead>, IoError> {
    if is_stdin(path) {
        return maybe_gz(std::io::stdin(), path);
    }
    let file = File::open(path).map_err(|e| IoError::io(path, e))?;
    maybe_gz(file, path)
}

/// Whether `path` is a regular file, which can be opened twice and read from the start each time (a pipe,
/// such as a shell's `<(zcat d.gz)`, gives its bytes once).
pub(crate) fn is_regular_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// Whether `path` names standard input (`-`).
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

fn maybe_gz(source: impl Read + 'static, path: &Path) -> Result<Box<dyn BufRead>, IoError> {
    let mut reader = BufReader::with_capacity(1 << 16, source);
    let head = reader.fill_buf().map_err(|e| IoError::io(path, e))?;
    if head.starts_with(&[0x1f, 0x8b]) {
        let decoder: Box<dyn Read> = Box::new(MultiGzDecoder::new(reader));
        Ok(Box::new(BufReader::with_capacity(1 << 16, decoder)))
    } else {
        Ok(Box::new(reader))
    }
}
