//! A binary cache of a LIBSVM dataset (`maxmargin cache DATA -o DATA.mmc`): the CSR matrix, labels, qids and
//! line numbers as written in memory, so that repeated runs skip parsing. [`crate::libsvm::read`] recognizes a
//! cache by its magic bytes and reads it instead of text, so every command that reads LIBSVM data reads a
//! cache too.
//!
//! Layout (little-endian): `MXMCACHE`, format version (u32), 4 zero bytes, rows, features, nonzeros and the
//! source name's length (u64 each), the source name (UTF-8), then the arrays — labels (f64 × rows), qids
//! (u64 × rows, `u64::MAX` for none), lines (u64 × rows), row starts (u64 × rows + 1), and each row's feature
//! indices (u32) followed by its values (f64) — and last a CRC-32 of every byte before it.
//!
//! Both directions stream through a buffer and the checksum, row by row, so that the file is never held in
//! memory beside the dataset. Mapping the file (memmap2) would save no copy, since every byte becomes part of
//! the dataset, and would need `unsafe`, which this workspace forbids. Sizes in the header are checked against
//! the file's length before anything is allocated from them; a file whose checksum fails yields nothing.

use crate::IoError;
use crate::atomic::write_atomic;
use crate::dataset::LabeledData;
use maxmargin_core::vector::SparseRows;
use std::io::{Read, Write};
use std::path::Path;

/// The first bytes of a cache file.
pub const MAGIC: &[u8; 8] = b"MXMCACHE";
/// The cache format this build writes and reads.
pub const VERSION: u32 = 1;
const HEADER: usize = 8 + 4 + 4 + 8 * 4;
/// The longest source name kept.
const MAX_SOURCE: usize = 4096;

/// Whether the file at `path` starts with the cache magic (false when it cannot be read).
pub fn is_cache(path: &Path) -> bool {
    // Only a regular file is peeked at: the bytes read from a pipe (`<(zcat d.gz)`) would be lost to the
    // reader that follows.
    if !crate::open::is_regular_file(path) {
        return false;
    }
    let mut head = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && &head == MAGIC
}

/// A cache file (`maxmargin cache`) handed to a reader of text is refused by name, not read as bytes.
///
/// # Errors
/// [`IoError::Parse`] when `path` is a cache.
pub fn refuse(path: &Path) -> Result<(), IoError> {
    if is_cache(path) {
        return Err(IoError::Parse {
            path: path.to_path_buf(),
            line: 1,
            column: 1,
            field: "cache",
            message:
                "a cache holds single-label LIBSVM data (binary, multiclass); this task reads text"
                    .into(),
        });
    }
    Ok(())
}

/// Writes `data` as a cache file, atomically.
///
/// # Errors
/// [`IoError::Io`] naming the file.
///
/// # Examples
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let text = dir.path().join("d.svm");
/// std::fs::write(&text, "+1 qid:3 1:0.5 4:2\n-1 2:1\n")?;
/// let data = maxmargin_io::libsvm::read(&text)?;
/// let cache = dir.path().join("d.mmc");
/// maxmargin_io::cache::write(&cache, &data)?;
/// let back = maxmargin_io::libsvm::read(&cache)?; // read recognizes the cache
/// assert_eq!((back.x, back.labels, back.qids), (data.x, data.labels, data.qids));
/// # Ok(()) }
/// ```
pub fn write(path: &Path, data: &LabeledData) -> Result<(), IoError> {
    let n = data.n_samples();
    let x = &data.x;
    let source = data.source.display().to_string();
    let source = &source.as_bytes()[..source.len().min(MAX_SOURCE)];
    // Streamed through a CRC-32 and a buffer: the file is never held in memory beside the data.
    write_atomic(path, |f| {
        let mut out = Hashing {
            inner: std::io::BufWriter::with_capacity(1 << 16, f),
            crc: crc32fast::Hasher::new(),
        };
        out.write_all(MAGIC)?;
        out.write_all(&VERSION.to_le_bytes())?;
        out.write_all(&[0; 4])?;
        for v in [n, x.n_features(), x.nnz(), source.len()] {
            out.write_all(&(v as u64).to_le_bytes())?;
        }
        out.write_all(source)?;
        for l in &data.labels {
            out.write_all(&l.to_le_bytes())?;
        }
        for i in 0..n {
            let q = data.qids.get(i).copied().flatten().unwrap_or(u64::MAX);
            out.write_all(&q.to_le_bytes())?;
        }
        for i in 0..n {
            let line = data.lines.get(i).copied().unwrap_or(i + 1) as u64;
            out.write_all(&line.to_le_bytes())?;
        }
        let mut start = 0u64;
        out.write_all(&start.to_le_bytes())?;
        for row in x.rows() {
            start += row.nnz() as u64;
            out.write_all(&start.to_le_bytes())?;
        }
        for row in x.rows() {
            for j in row.indices() {
                out.write_all(&j.to_le_bytes())?;
            }
            for v in row.values() {
                out.write_all(&v.to_le_bytes())?;
            }
        }
        let crc = out.crc.clone().finalize();
        out.inner.write_all(&crc.to_le_bytes())?;
        out.inner.flush()
    })
}

/// A reader or writer that hashes what passes through it.
struct Hashing<W> {
    inner: W,
    crc: crc32fast::Hasher,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.crc.update(&buf[..n]);
        Ok(n)
    }
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Little-endian words of a byte slice (whose length is a multiple of `N`).
fn words<const N: usize>(bytes: &[u8]) -> impl Iterator<Item = [u8; N]> + '_ {
    bytes.chunks_exact(N).map(|c| {
        let mut w = [0u8; N];
        w.copy_from_slice(c);
        w
    })
}

/// Reads a cache file. The dataset's source reads `CACHE (cached from ORIGINAL)`, and its line numbers are
/// the original file's, so errors about a row point into the text it came from.
///
/// # Errors
/// [`IoError::Parse`] (field `cache`) naming what is wrong (not a cache, another version,
/// sizes that do not match the file, a checksum mismatch, an inconsistent matrix); [`IoError::Io`].
pub fn read(path: &Path) -> Result<LabeledData, IoError> {
    let bad = |message: String| IoError::Parse {
        path: path.to_path_buf(),
        line: 1,
        column: 1,
        field: "cache",
        message,
    };
    let mut file = std::fs::File::open(path).map_err(|e| IoError::io(path, e))?;
    let len = file.metadata().map_err(|e| IoError::io(path, e))?.len();
    let mut head = [0u8; HEADER];
    file.read_exact(&mut head)
        .map_err(|_| bad(format!("{len} bytes: shorter than a cache header")))?;
    if &head[..8] != MAGIC {
        return Err(bad("not a maxmargin cache (no MXMCACHE magic)".into()));
    }
    let version = u32::from_le_bytes([head[8], head[9], head[10], head[11]]);
    if version != VERSION {
        return Err(bad(format!(
            "cache format {version}; this build reads {VERSION} (rebuild it with `maxmargin cache`)"
        )));
    }
    let field = |k: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&head[16 + 8 * k..24 + 8 * k]);
        u64::from_le_bytes(w)
    };
    let (n, d, nnz, src) = (field(0), field(1), field(2), field(3));
    // The file's length says what it holds: sizes that do not add up to it are refused before any allocation.
    let expected = (|| {
        let rows = n
            .checked_mul(8 * 3)?
            .checked_add(n.checked_add(1)?.checked_mul(8)?)?;
        let entries = nnz.checked_mul(12)?;
        (HEADER as u64)
            .checked_add(src)?
            .checked_add(rows)?
            .checked_add(entries)?
            .checked_add(4)
    })();
    if expected != Some(len) || src > MAX_SOURCE as u64 || d > u64::from(u32::MAX) + 1 {
        return Err(bad(format!(
            "{len} bytes do not fit {n} rows, {nnz} nonzeros and {d} features (cut short or edited)"
        )));
    }
    let (n, nnz, src) = (n as usize, nnz as usize, src as usize);
    let mut input = Hashing {
        inner: std::io::BufReader::with_capacity(1 << 16, file),
        crc: crc32fast::Hasher::new(),
    };
    input.crc.update(&head);
    let cut = |e: std::io::Error| IoError::io(path, e);
    let mut source = vec![0u8; src];
    input.read_exact(&mut source).map_err(cut)?;
    let mut word = [0u8; 8];
    let mut column = |input: &mut Hashing<_>| -> Result<Vec<u64>, IoError> {
        (0..n)
            .map(|_| {
                input.read_exact(&mut word).map_err(cut)?;
                Ok(u64::from_le_bytes(word))
            })
            .collect()
    };
    let labels: Vec<f64> = column(&mut input)?
        .into_iter()
        .map(f64::from_bits)
        .collect();
    let qids: Vec<Option<u64>> = column(&mut input)?
        .into_iter()
        .map(|q| Some(q).filter(|&q| q != u64::MAX))
        .collect();
    let lines: Vec<usize> = column(&mut input)?
        .into_iter()
        .map(|l| l as usize)
        .collect();
    let mut starts = column(&mut input)?;
    input.read_exact(&mut word).map_err(cut)?;
    starts.push(u64::from_le_bytes(word));
    // Rows are decoded one at a time into two small buffers: the matrix is the only full copy.
    let mut x = SparseRows::new();
    x.reserve(nnz);
    let (mut raw, mut idx, mut val) = (Vec::new(), Vec::new(), Vec::new());
    for (i, w) in starts.windows(2).enumerate() {
        let (a, b) = (w[0] as usize, w[1] as usize);
        if a > b || b > nnz || (i == 0 && a != 0) {
            return Err(bad(format!("row {} has inconsistent bounds", i + 1)));
        }
        raw.resize(12 * (b - a), 0);
        input.read_exact(&mut raw).map_err(cut)?;
        let (indices, values) = raw.split_at(4 * (b - a));
        idx.clear();
        idx.extend(words::<4>(indices).map(u32::from_le_bytes));
        val.clear();
        val.extend(words::<8>(values).map(f64::from_le_bytes));
        x.push_row(&idx, &val)
            .map_err(|e| bad(format!("row {}: {e}", i + 1)))?;
    }
    let mut crc = [0u8; 4];
    input.inner.read_exact(&mut crc).map_err(cut)?;
    if input.crc.finalize().to_le_bytes() != crc {
        return Err(bad(
            "checksum mismatch: the cache is corrupt or was edited".into()
        ));
    }
    // The text parser refuses labels that are not finite numbers; so does its cache, naming the row.
    if let Some(i) = labels.iter().position(|l| !l.is_finite()) {
        return Err(bad(format!(
            "row {} (line {} of the source): the label {} is not a finite number",
            i + 1,
            lines[i],
            labels[i]
        )));
    }
    let source = String::from_utf8_lossy(&source).into_owned();
    if starts.last().copied() != Some(nnz as u64) || x.n_features() as u64 > d {
        return Err(bad("the rows do not match the header's sizes".into()));
    }
    x.set_n_features_at_least(d as usize);
    Ok(LabeledData {
        x,
        labels,
        qids,
        lines,
        source: format!("{} (cached from {source})", path.display()).into(),
        feature_names: Vec::new(),
        label_column: None,
    })
}
