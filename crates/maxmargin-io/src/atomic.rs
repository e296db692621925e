//! Atomic file writes: a temporary file in the target's directory, synced, then renamed over the target.
//!
//! A reader sees the old file or the new one, never half of one, and a failed write leaves no debris.

use crate::IoError;
use std::io::{BufWriter, Write};
use std::path::Path;

/// Writes `path` atomically with the bytes `write` produces.
///
/// # Errors
/// [`IoError::Io`] naming `path` when the directory is not writable, the disk is full, or `write` fails.
///
/// # Examples
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::io::Write;
/// let dir = tempfile::tempdir()?;
/// let p = dir.path().join("out.txt");
/// maxmargin_io::atomic::write_atomic(&p, |w| w.write_all(b"hello"))?;
/// assert_eq!(std::fs::read_to_string(&p)?, "hello");
/// # Ok(()) }
/// ```
pub fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), IoError> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let err = |e| IoError::io(path, e);
    let tmp = tempfile::Builder::new()
        .prefix(".maxmargin-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(err)?;
    {
        let mut w = BufWriter::new(tmp.as_file());
        write(&mut w).map_err(err)?;
        w.flush().map_err(err)?;
    }
    tmp.as_file().sync_all().map_err(err)?;
    tmp.persist(path).map_err(|e| err(e.error))?;
    // Make the rename itself durable where the platform allows opening a directory.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}
