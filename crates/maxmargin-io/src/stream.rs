//! Data larger than memory: a LIBSVM file (plain, gzip or standard input) parsed once into binary rows on
//! disk that training reads pass by pass, each pass in a fresh random order.
//!
//! [`RowFile::prepare`] reads the text once, checking every line as [`crate::libsvm`] does (errors name
//! the file, line, column and field) and counting rows, features and labels. The parsed rows go to an
//! anonymous temporary file in the directory given (removed by the system even when the process dies), and
//! are scattered at random, by the seed, into buckets of about [`BUCKET_BYTES`] (at most [`MAX_BUCKETS`])
//! laid end to end in the row file. [`RowFile::pass`] visits the buckets in a random order, [`WINDOW`] (two)
//! at a time paired afresh each pass, and the rows of the two interleaved in a random order: every pass is
//! a new order drawn from the seed and the pass's number (a file sorted by class comes out mixed, and no
//! bucket's rows are visited as a fixed group, which slows coordinate descent by orders of magnitude).
//!
//! Memory: one line while parsing, plus the buckets' write buffers (4 KiB each); two buckets in a pass
//! (`max(BUCKET_BYTES, bytes / MAX_BUCKETS)` each: bounded up to 1 GiB of parsed rows, growing slowly after).
//! Nothing else grows with the number of rows. Disk: about twice the parsed rows while preparing, once
//! after. A [`Column`] keeps one number per row on disk (a dual variable), read and written a bucket at a
//! time.

use crate::IoError;
use crate::libsvm::{for_each_row, parse_real_label};
use maxmargin_core::vector::SparseRow;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

mod column;
pub use column::Column;

/// The parsed rows a bucket aims at.
pub const BUCKET_BYTES: u64 = 1 << 20;
/// The most buckets (each holds an open file and a write buffer while scattering).
pub const MAX_BUCKETS: u64 = 1024;
/// The most distinct labels a streamed file may have.
pub const MAX_LABELS: usize = 1 << 16;
/// The write buffer of each bucket.
const BUCKET_BUFFER: usize = 4 << 10;
/// The read buffer of a pass.
const PASS_BUFFER: usize = 1 << 20;
/// Buckets in memory at once during a pass, their rows interleaved (see `RowFile::visit`).
pub const WINDOW: usize = 2;
/// A row's header on disk: line (u64), label (f64), nonzeros (u32).
const HEADER: usize = 20;

/// What preparing a file found.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Rows (non-blank, non-comment lines).
    pub n_rows: usize,
    /// One past the largest 0-based feature index.
    pub n_features: usize,
    /// Nonzeros over all rows.
    pub nnz: u64,
    /// The distinct labels, smallest first, with their row counts.
    pub labels: Vec<(f64, usize)>,
    /// Bytes of parsed rows on disk.
    pub bytes: u64,
    /// The largest absolute feature value (0 without features), for advice on scaling.
    pub max_abs: f64,
    /// The line of the first row with the largest feature index (0 without features), for errors.
    pub widest_line: usize,
    /// The line of the first row whose squared norm overflows a 64-bit float, and its largest `|x|`.
    pub overflow: Option<(usize, f64)>,
}

/// One row of a pass, borrowed for the length of the callback.
#[derive(Debug, Clone, Copy)]
pub struct StreamRow<'a> {
    /// Its place in the row file, `0..n_rows` (the same row has the same index in every pass).
    pub index: usize,
    /// Its 1-based line in the source file.
    pub line: usize,
    /// Its label.
    pub label: f64,
    /// Its features.
    pub x: SparseRow<'a>,
}

/// A source file parsed into shuffled binary rows on disk (see the module docs).
#[derive(Debug)]
pub struct RowFile {
    file: File,
    source: PathBuf,
    summary: Summary,
    buckets: Vec<Bucket>,
    seed: u64,
    passes: std::cell::Cell<u64>,
}

/// A run of rows in the row file.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    offset: u64,
    bytes: u64,
    first_row: usize,
    rows: usize,
}

impl RowFile {
    /// Parses `source` (LIBSVM text, gzip or not, `-` for standard input) into a row file in `dir`,
    /// in the order `seed` chooses.
    ///
    /// # Errors
    /// [`IoError::Parse`] naming the line, column and field of the first bad token (or a label past
    /// [`MAX_LABELS`]), [`IoError::Empty`] for no rows, [`IoError::Io`] naming the source or `dir`.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let dir = tempfile::tempdir()?;
    /// let data = dir.path().join("d.svm");
    /// std::fs::write(&data, "+1 1:1\n-1 2:1\n+1 1:2 3:1\n")?;
    /// let rows = maxmargin_io::stream::RowFile::prepare(&data, dir.path(), 7)?;
    /// assert_eq!((rows.summary().n_rows, rows.summary().n_features), (3, 3));
    /// let mut lines = Vec::new();
    /// rows.pass(|r| { lines.push(r.line); Ok::<_, maxmargin_io::IoError>(()) })?;
    /// lines.sort();
    /// assert_eq!(lines, [1, 2, 3]);
    /// # Ok(()) }
    /// ```
    pub fn prepare(source: &Path, dir: &Path, seed: u64) -> Result<Self, IoError> {
        Self::prepare_in_buckets(source, dir, seed, BUCKET_BYTES)
    }

    /// [`RowFile::prepare`], handing `observe` every row's label and features as it is parsed, in file
    /// order (what a model records of its rows is taken then, without another read).
    ///
    /// # Errors
    /// As [`RowFile::prepare`].
    pub fn prepare_observed(
        source: &Path,
        dir: &Path,
        seed: u64,
        observe: &mut dyn FnMut(f64, SparseRow<'_>),
    ) -> Result<Self, IoError> {
        Self::prepare_with(source, dir, seed, BUCKET_BYTES, observe)
    }

    /// [`RowFile::prepare`] with buckets of about `bucket_bytes` (at least one row each, at most
    /// [`MAX_BUCKETS`]): smaller buckets mix the order of a pass more and hold less in memory.
    ///
    /// # Errors
    /// As [`RowFile::prepare`].
    pub fn prepare_in_buckets(
        source: &Path,
        dir: &Path,
        seed: u64,
        bucket_bytes: u64,
    ) -> Result<Self, IoError> {
        Self::prepare_with(source, dir, seed, bucket_bytes, &mut |_, _| {})
    }

    fn prepare_with(
        source: &Path,
        dir: &Path,
        seed: u64,
        bucket_bytes: u64,
        observe: &mut dyn FnMut(f64, SparseRow<'_>),
    ) -> Result<Self, IoError> {
        if crate::cache::is_cache(source) {
            return Err(IoError::Unsplittable {
                path: source.to_path_buf(),
                message:
                    "--stream reads LIBSVM text (plain or gzip), not a cache file, which is read \
                          whole; give the text file"
                        .into(),
            });
        }
        let temp = |e| IoError::io(dir, e);
        let mut parsed = BufWriter::new(tempfile::tempfile_in(dir).map_err(temp)?);
        let mut labels: BTreeMap<u64, (f64, usize)> = BTreeMap::new();
        let (mut n_rows, mut n_features, mut nnz, mut bytes) = (0usize, 0usize, 0u64, 0u64);
        let mut max_abs = 0.0f64;
        let (mut widest_line, mut overflow) = (0, None);
        let reader = crate::open_maybe_gz(source)?;
        for_each_row(reader, source, parse_real_label, |row| {
            let known = labels.len();
            match labels.get_mut(&row.label.to_bits()) {
                Some(entry) => entry.1 += 1,
                None if known == MAX_LABELS => {
                    return Err(IoError::Parse {
                        path: source.to_path_buf(),
                        line: row.line,
                        column: 1,
                        field: "label",
                        message: format!("more than {MAX_LABELS} distinct labels"),
                    });
                }
                None => {
                    labels.insert(row.label.to_bits(), (row.label, 1));
                }
            }
            n_rows += 1;
            nnz += row.idx.len() as u64;
            max_abs = row.val.iter().fold(max_abs, |m, v| m.max(v.abs()));
            if let Some(&last) = row.idx.last()
                && last as usize >= n_features
            {
                (n_features, widest_line) = (last as usize + 1, row.line);
            }
            if let Ok(x) = SparseRow::new(row.idx, row.val) {
                if overflow.is_none() && !x.norm_sq().is_finite() {
                    let largest = row.val.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                    overflow = Some((row.line, largest));
                }
                observe(row.label, x);
            }
            bytes += write_row(&mut parsed, row.line, row.label, row.idx, row.val).map_err(temp)?;
            Ok(())
        })?;
        if n_rows == 0 {
            return Err(IoError::Empty {
                path: source.to_path_buf(),
            });
        }
        let mut parsed = parsed.into_inner().map_err(|e| temp(e.into_error()))?;
        let (file, buckets) = scatter(&mut parsed, (bytes, bucket_bytes.max(1)), dir, seed)?;
        let mut labels: Vec<(f64, usize)> = labels.into_values().collect();
        labels.sort_by(|a, b| a.0.total_cmp(&b.0));
        Ok(Self {
            file,
            source: source.to_path_buf(),
            summary: Summary {
                n_rows,
                n_features,
                nnz,
                labels,
                bytes,
                max_abs,
                widest_line,
                overflow,
            },
            buckets,
            seed,
            passes: std::cell::Cell::new(0),
        })
    }

    /// What preparing found.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// The bytes of the largest bucket: what a pass holds in memory at once.
    pub fn bucket_bytes(&self) -> u64 {
        self.buckets.iter().map(|b| b.bytes).max().unwrap_or(0)
    }

    /// The source file (for error messages about a row).
    pub fn source(&self) -> &Path {
        &self.source
    }

    /// Passes made so far: the next pass's order is drawn from the seed and this number.
    pub fn passes(&self) -> u64 {
        self.passes.get()
    }

    /// Continues as if `passes` passes had been made (a checkpointed run resumed): the next pass comes in
    /// the order that run's next pass had.
    pub fn set_passes(&self, passes: u64) {
        self.passes.set(passes);
    }

    /// Reads every row once, in a new random order (see the module docs), handing each to `row`.
    ///
    /// # Errors
    /// [`IoError::Io`] when the row file cannot be read (disk trouble), and whatever `row` returns.
    pub fn pass<E: From<IoError>>(
        &self,
        mut row: impl FnMut(StreamRow<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        self.visit(
            |_, _, _| Ok(()),
            |_, _| true,
            |r, _, _| row(r),
            |_, _, _| Ok(()),
        )
    }

    /// The buckets in this pass's order, taken [`WINDOW`] at a time, each read whole and the rows of the
    /// window handed out together in a random order: `enter(slot, bucket, rows)` before its rows (`slot` its
    /// place in the window), `row(r, slot, within)` for each that `wanted(slot, within)` (`within` its place
    /// in the bucket; the others are not decoded), `leave(slot, bucket, rows)` after the window.
    ///
    /// Rows of a window are interleaved because a pass that visits fixed groups of rows one after the other
    /// converges far slower than one over a random permutation (coordinate descent on the logistic dual:
    /// 10,000 rows in two fixed halves took 1,313 passes to a gap of 10⁻⁶ against 14 shuffled whole), and the
    /// window's buckets are paired afresh each pass, so no group stays together.
    fn visit<E: From<IoError>>(
        &self,
        mut enter: impl FnMut(usize, usize, usize) -> Result<(), E>,
        wanted: impl Fn(usize, usize) -> bool,
        mut row: impl FnMut(StreamRow<'_>, usize, usize) -> Result<(), E>,
        mut leave: impl FnMut(usize, usize, usize) -> Result<(), E>,
    ) -> Result<(), E> {
        let fail = |e| IoError::io(&self.source, e);
        let pass = self.passes.get();
        self.passes.set(pass + 1);
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(pass + 1);
        let mut order: Vec<usize> = (0..self.buckets.len()).collect();
        order.shuffle(&mut rng);
        let mut file = self.file.try_clone().map_err(fail)?;
        let mut wholes: [ReadBucket; WINDOW] = Default::default();
        let (mut idx, mut val) = (Vec::new(), Vec::new());
        let mut visit: Vec<(usize, usize)> = Vec::new();
        for window in order.chunks(WINDOW) {
            visit.clear();
            for (slot, &b) in window.iter().enumerate() {
                let bucket = self.buckets[b];
                let (whole, starts) = &mut wholes[slot];
                file.seek(SeekFrom::Start(bucket.offset)).map_err(fail)?;
                // Exactly the bucket (a doubling growth would hold up to twice the largest one).
                let size = usize::try_from(bucket.bytes)
                    .map_err(std::io::Error::other)
                    .map_err(fail)?;
                whole.clear();
                whole.reserve_exact(size);
                whole.resize(size, 0);
                file.read_exact(whole).map_err(fail)?;
                record_starts(whole, starts).map_err(fail)?;
                if starts.len() != bucket.rows {
                    return Err(fail(std::io::ErrorKind::UnexpectedEof.into()).into());
                }
                visit.extend((0..starts.len()).map(|within| (slot, within)));
                enter(slot, b, bucket.rows)?;
            }
            visit.shuffle(&mut rng);
            for &(slot, within) in &visit {
                if !wanted(slot, within) {
                    continue;
                }
                let bucket = self.buckets[window[slot]];
                let (whole, starts) = &wholes[slot];
                let (at, len) = starts[within];
                let (line, label) =
                    decode_row(&whole[at..at + len], &mut idx, &mut val).map_err(fail)?;
                let x = SparseRow::new(&idx, &val).map_err(|e| IoError::Parse {
                    path: self.source.clone(),
                    line,
                    column: 1,
                    field: "row file",
                    message: format!("the temporary row file changed under the run: {e}"),
                })?;
                let index = bucket.first_row + within;
                row(
                    StreamRow {
                        index,
                        line,
                        label,
                        x,
                    },
                    slot,
                    within,
                )?;
            }
            for (slot, &b) in window.iter().enumerate() {
                leave(slot, b, self.buckets[b].rows)?;
            }
        }
        Ok(())
    }
}

/// A little-endian `f64`.
fn le_f64(c: &[u8]) -> f64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(c);
    f64::from_le_bytes(b)
}

/// A bucket read whole during a pass, and where each of its records starts and how long it is.
type ReadBucket = (Vec<u8>, Vec<(usize, usize)>);

/// Appends one row; returns the bytes written.
fn write_row(
    out: &mut impl Write,
    line: usize,
    label: f64,
    idx: &[u32],
    val: &[f64],
) -> std::io::Result<u64> {
    let nnz = u32::try_from(idx.len()).map_err(std::io::Error::other)?;
    out.write_all(&(line as u64).to_le_bytes())?;
    out.write_all(&label.to_le_bytes())?;
    out.write_all(&nnz.to_le_bytes())?;
    for j in idx {
        out.write_all(&j.to_le_bytes())?;
    }
    for v in val {
        out.write_all(&v.to_le_bytes())?;
    }
    Ok((HEADER + 12 * idx.len()) as u64)
}

/// Decodes one row record into the buffers; returns its line and label.
fn decode_row(
    record: &[u8],
    idx: &mut Vec<u32>,
    val: &mut Vec<f64>,
) -> std::io::Result<(usize, f64)> {
    let (line, label, nnz) = decode_header(record);
    let body = record
        .get(HEADER..HEADER + 12 * nnz)
        .ok_or(std::io::ErrorKind::UnexpectedEof)?;
    let (ib, vb) = body.split_at(4 * nnz);
    idx.clear();
    idx.extend(
        ib.chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
    );
    val.clear();
    val.extend(vb.chunks_exact(8).map(le_f64));
    Ok((line, label))
}

/// The start and length of every record in a bucket's bytes.
fn record_starts(whole: &[u8], starts: &mut Vec<(usize, usize)>) -> std::io::Result<()> {
    starts.clear();
    let mut at = 0;
    while at < whole.len() {
        let head = whole
            .get(at..at + HEADER)
            .ok_or(std::io::ErrorKind::UnexpectedEof)?;
        let len = HEADER + 12 * decode_header(head).2;
        if at + len > whole.len() {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        starts.push((at, len));
        at += len;
    }
    Ok(())
}

fn decode_header(head: &[u8]) -> (usize, f64, usize) {
    let mut u8s = [0u8; 8];
    u8s.copy_from_slice(&head[0..8]);
    let line = u64::from_le_bytes(u8s) as usize;
    u8s.copy_from_slice(&head[8..16]);
    let label = f64::from_le_bytes(u8s);
    let nnz = u32::from_le_bytes([head[16], head[17], head[18], head[19]]) as usize;
    (line, label, nnz)
}

/// Scatters the parsed rows into buckets at random, then lays the buckets end to end in a new file.
fn scatter(
    parsed: &mut File,
    (bytes, bucket_bytes): (u64, u64),
    dir: &Path,
    seed: u64,
) -> Result<(File, Vec<Bucket>), IoError> {
    let temp = |e| IoError::io(dir, e);
    let k = bytes.div_ceil(bucket_bytes).clamp(1, MAX_BUCKETS) as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    parsed.seek(SeekFrom::Start(0)).map_err(temp)?;
    let mut files = Vec::with_capacity(k);
    for _ in 0..k {
        let file = tempfile::tempfile_in(dir).map_err(temp)?;
        files.push((BufWriter::with_capacity(BUCKET_BUFFER, file), 0u64, 0usize));
    }
    let mut reader = BufReader::with_capacity(PASS_BUFFER, &*parsed);
    let (mut record, mut read) = (Vec::new(), 0u64);
    while read < bytes {
        let mut head = [0u8; HEADER];
        reader.read_exact(&mut head).map_err(temp)?;
        let (_, _, nnz) = decode_header(&head);
        record.clear();
        record.extend_from_slice(&head);
        record.resize(HEADER + 12 * nnz, 0);
        reader.read_exact(&mut record[HEADER..]).map_err(temp)?;
        read += record.len() as u64;
        let (out, size, rows) = &mut files[rand::Rng::random_range(&mut rng, 0..k)];
        out.write_all(&record).map_err(temp)?;
        *size += record.len() as u64;
        *rows += 1;
    }
    let mut out = BufWriter::with_capacity(PASS_BUFFER, tempfile::tempfile_in(dir).map_err(temp)?);
    let mut buckets = Vec::with_capacity(k);
    let (mut offset, mut first_row) = (0u64, 0usize);
    for (writer, size, rows) in files {
        let mut file = writer.into_inner().map_err(|e| temp(e.into_error()))?;
        file.seek(SeekFrom::Start(0)).map_err(temp)?;
        std::io::copy(&mut file, &mut out).map_err(temp)?;
        if rows > 0 {
            buckets.push(Bucket {
                offset,
                bytes: size,
                first_row,
                rows,
            });
        }
        offset += size;
        first_row += rows;
    }
    Ok((out.into_inner().map_err(|e| temp(e.into_error()))?, buckets))
}
