//! Atomic file writes: a temporary file in the target's directory, synced, then renamed over the target.
//!
//! A reader sees the old file or the new one, never half of one, and a failed write leaves no debris.

use crate::IoError;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The temporary files of writes in progress, for [`remove_in_flight`].
static IN_FLIGHT: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Keeps a temporary file in [`IN_FLIGHT`] while it lives.
struct Registered(PathBuf);

impl Registered {
    /// Creates the temporary file in `dir` and registers it under one hold of the registry's lock: a signal
    /// handler running [`remove_in_flight`] sees either no file or a registered one, never a file created and
    /// not yet registered (a run killed in that window once left one behind).
    fn create(dir: &Path) -> std::io::Result<(tempfile::NamedTempFile, Self)> {
        let mut files = IN_FLIGHT
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let tmp = tempfile::Builder::new()
            .prefix(".maxmargin-")
            .suffix(".tmp")
            .tempfile_in(dir)?;
        files.push(tmp.path().to_path_buf());
        let registered = Self(tmp.path().to_path_buf());
        Ok((tmp, registered))
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        let mut files = IN_FLIGHT
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(i) = files.iter().position(|p| *p == self.0) {
            files.swap_remove(i);
        }
        // A failed write's temporary file goes while the lock is held, whatever the order in which it and
        // this are dropped; after a successful rename the path no longer exists and this does nothing.
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Removes the temporary files of every write in progress and returns holding the registry's lock, so no
/// write can register another one: for a program about to exit on a signal (SIGINT, SIGTERM), which would
/// otherwise leave them behind. A write caught between its rename and this has already put its file in
/// place whole; one caught before it loses only its temporary file.
pub fn remove_in_flight() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    let files = IN_FLIGHT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for p in files.iter() {
        let _ = std::fs::remove_file(p);
    }
    files
}

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
    let err = |e| IoError::io(path, e);
    // Only a regular file (or a new path) is replaced. A symlink is written through to its target, as `cp`
    // does; a device, directory or pipe at the path is refused instead of being replaced by a file.
    let resolved;
    let path = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            resolved = std::fs::canonicalize(path).map_err(err)?;
            check_regular(&resolved, path)?;
            resolved.as_path()
        }
        Ok(m) if !m.file_type().is_file() => return Err(not_regular(path)),
        _ => path,
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(IoError::io(
            path,
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("its directory {} does not exist", dir.display()),
            ),
        ));
    }
    remove_stale(dir);
    let (tmp, _registered) = Registered::create(dir).map_err(err)?;
    {
        let mut w = BufWriter::new(tmp.as_file());
        write(&mut w).map_err(err)?;
        w.flush().map_err(err)?;
    }
    tmp.as_file().sync_all().map_err(err)?;
    set_usual_permissions(tmp.path()).map_err(err)?;
    tmp.persist(path).map_err(|e| err(e.error))?;
    // Make the rename itself durable where the platform allows opening a directory.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

fn not_regular(path: &Path) -> IoError {
    IoError::io(
        path,
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file: refusing to replace it (choose a file path)",
        ),
    )
}

fn check_regular(target: &Path, link: &Path) -> Result<(), IoError> {
    match std::fs::metadata(target) {
        Ok(m) if !m.is_file() => Err(not_regular(link)),
        _ => Ok(()),
    }
}

/// Temporary files are created `0600`; the written file gets the usual `0666` less the process's umask (read
/// from `/proc/self/status` on Linux; `022` where it cannot be read).
#[cfg(unix)]
fn set_usual_permissions(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let umask = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022);
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666 & !umask))
}

#[cfg(not(unix))]
fn set_usual_permissions(_path: &Path) -> std::io::Result<()> {
    Ok(())
}

/// Temporary files of this kind older than an hour are what a killed run (`kill -9`, a power cut) left
/// behind: the next write into the same directory removes them. Failures are ignored (another process may
/// be removing them too).
fn remove_stale(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let hour = std::time::Duration::from_secs(3600);
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with(".maxmargin-") && name.ends_with(".tmp")) {
            continue;
        }
        let old = entry
            .metadata()
            .ok()
            .filter(std::fs::Metadata::is_file)
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > hour);
        if old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temporaries(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let p = entry?.path();
            if p.extension().is_some_and(|e| e == "tmp") {
                out.push(p);
            }
        }
        Ok(out)
    }

    #[test]
    fn a_signal_mid_write_removes_the_temporary_file() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let target = dir.path().join("model.bin");
        let result = write_atomic(&target, |w| {
            w.write_all(b"half a model")?;
            let mine = temporaries(dir.path())?;
            assert_eq!(mine.len(), 1, "the write's temporary file exists");
            // What the command's signal handler does, from another thread.
            let removed = std::thread::scope(|s| {
                s.spawn(|| remove_in_flight().clone())
                    .join()
                    .map_err(|_| std::io::Error::other("the handler thread panicked"))
            })?;
            assert!(removed.iter().any(|p| mine.contains(p)), "{removed:?}");
            assert!(temporaries(dir.path())?.is_empty());
            Ok(())
        });
        // The write could not finish, and nothing is left: no target, no temporary.
        assert!(result.is_err());
        assert!(!target.exists());
        assert!(temporaries(dir.path())?.is_empty());
        // Finished writes leave the registry.
        write_atomic(&target, |w| w.write_all(b"whole"))?;
        let registry = IN_FLIGHT
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        assert!(!registry.iter().any(|p| p.starts_with(dir.path())));
        Ok(())
    }
}
