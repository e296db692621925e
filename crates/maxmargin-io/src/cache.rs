//! A binary cache of a LIBSVM dataset (`maxmargin cache DATA -o DATA.mmc`): the CSR matrix, labels, qids and
//! line numbers as written in memory, so that repeated runs skip parsing. [`crate::libsvm::read`] recognizes a
//! cache by its magic bytes and reads it instead of text, so every command that reads LIBSVM data reads a
//! cache too.
//!
//! Layout (little-endian): `MXMCACHE`, format version (u32), 4 zero bytes, rows, features, nonzeros and the
//! source name's length (u64 each), the source name (UTF-8), then the arrays — labels (f64 × rows), qids
//! (u64 × rows, `u64::MAX` for none), lines (u64 × rows), row starts (u64 × rows + 1), feature indices (u32 ×
//! nonzeros), values (f64 × nonzeros) — and last a CRC-32 of every byte before it.
//!
//! The file is read whole into memory and decoded from there: every byte is copied into the dataset anyway,
//! so mapping it (memmap2) would save no copy and would need `unsafe`, which this workspace forbids. Sizes in
//! the header are checked against the file's length before anything is allocated from them, and the
//! checksum before anything is decoded.

use crate::IoError;
use crate::atomic::write_atomic;
use crate::libsvm::LabeledData;
use maxmargin_core::vector::SparseRows;
use std::io::Read;
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
    let mut head = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && &head == MAGIC
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
    let mut bytes = Vec::with_capacity(HEADER + source.len() + n * 32 + x.nnz() * 12 + 12);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&VERSION.to_le_bytes());
    bytes.extend_from_slice(&[0; 4]);
    for v in [n, x.n_features(), x.nnz(), source.len()] {
        bytes.extend_from_slice(&(v as u64).to_le_bytes());
    }
    bytes.extend_from_slice(source);
    for l in &data.labels {
        bytes.extend_from_slice(&l.to_le_bytes());
    }
    for i in 0..n {
        let q = data.qids.get(i).copied().flatten().unwrap_or(u64::MAX);
        bytes.extend_from_slice(&q.to_le_bytes());
    }
    for i in 0..n {
        let line = data.lines.get(i).copied().unwrap_or(i + 1) as u64;
        bytes.extend_from_slice(&line.to_le_bytes());
    }
    let mut start = 0u64;
    bytes.extend_from_slice(&start.to_le_bytes());
    for row in x.rows() {
        start += row.nnz() as u64;
        bytes.extend_from_slice(&start.to_le_bytes());
    }
    for row in x.rows() {
        for j in row.indices() {
            bytes.extend_from_slice(&j.to_le_bytes());
        }
    }
    for row in x.rows() {
        for v in row.values() {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
    }
    let crc = crc32fast::hash(&bytes);
    bytes.extend_from_slice(&crc.to_le_bytes());
    write_atomic(path, |f| f.write_all(&bytes))
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
    let mut bytes = head.to_vec();
    bytes.reserve_exact((len as usize).saturating_sub(HEADER));
    file.read_to_end(&mut bytes)
        .map_err(|e| IoError::io(path, e))?;
    if bytes.len() as u64 != len {
        return Err(bad("the file changed while it was read".into()));
    }
    let (body, crc) = bytes.split_at(bytes.len() - 4);
    if crc32fast::hash(body).to_le_bytes() != crc {
        return Err(bad(
            "checksum mismatch: the cache is corrupt or was edited".into()
        ));
    }
    let (n, nnz, src) = (n as usize, nnz as usize, src as usize);
    let mut at = HEADER;
    let mut take = |size: usize| {
        let s = &body[at..at + size];
        at += size;
        s
    };
    let source = String::from_utf8_lossy(take(src)).into_owned();
    let labels: Vec<f64> = words::<8>(take(8 * n)).map(f64::from_le_bytes).collect();
    let qids: Vec<Option<u64>> = words::<8>(take(8 * n))
        .map(|w| Some(u64::from_le_bytes(w)).filter(|&q| q != u64::MAX))
        .collect();
    let lines: Vec<usize> = words::<8>(take(8 * n))
        .map(|w| u64::from_le_bytes(w) as usize)
        .collect();
    let starts: Vec<u64> = words::<8>(take(8 * (n + 1)))
        .map(u64::from_le_bytes)
        .collect();
    let (indices, values) = (take(4 * nnz), take(8 * nnz));
    // Rows are decoded one at a time into two small buffers: the matrix is the only full copy.
    let mut x = SparseRows::new();
    x.reserve(nnz);
    let (mut idx, mut val) = (Vec::new(), Vec::new());
    for (i, w) in starts.windows(2).enumerate() {
        let (a, b) = (w[0] as usize, w[1] as usize);
        if a > b || b > nnz || (i == 0 && a != 0) {
            return Err(bad(format!("row {} has inconsistent bounds", i + 1)));
        }
        idx.clear();
        idx.extend(words::<4>(&indices[4 * a..4 * b]).map(u32::from_le_bytes));
        val.clear();
        val.extend(words::<8>(&values[8 * a..8 * b]).map(f64::from_le_bytes));
        x.push_row(&idx, &val)
            .map_err(|e| bad(format!("row {}: {e}", i + 1)))?;
    }
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
    })
}
