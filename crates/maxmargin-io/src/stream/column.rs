//! A [`Column`]: one number per row of a [`RowFile`] on disk beside it (a dual variable per row), and the
//! passes that hand each row its number to read and change.

use super::{RowFile, StreamRow, WINDOW, le_f64};
use crate::IoError;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

/// One number per row of a [`RowFile`], kept on disk beside it and read and written a bucket at a time,
/// so a per-row state such as a dual variable costs no memory.
#[derive(Debug)]
pub struct Column {
    file: File,
    filled: bool,
}

impl Column {
    /// An empty column in `dir` (every row reads 0 until a pass writes it).
    ///
    /// # Errors
    /// [`IoError::Io`] naming `dir`.
    pub fn new(dir: &Path) -> Result<Self, IoError> {
        Ok(Self {
            file: tempfile::tempfile_in(dir).map_err(|e| IoError::io(dir, e))?,
            filled: false,
        })
    }
}

impl Column {
    /// Every row's number in row-file order (`None` before a pass wrote the column, when every row reads 0):
    /// what a checkpoint of a streamed run keeps, 8 bytes a row.
    ///
    /// # Errors
    /// [`IoError::Io`] naming `rows`' source when the column cannot be read.
    pub fn values(&self, rows: &RowFile) -> Result<Option<Vec<f64>>, IoError> {
        if !self.filled {
            return Ok(None);
        }
        let fail = |e| IoError::io(&rows.source, e);
        let n = rows.summary.n_rows;
        let mut bytes = vec![0u8; 8 * n];
        let mut f = &self.file;
        f.seek(SeekFrom::Start(0)).map_err(fail)?;
        f.read_exact(&mut bytes).map_err(fail)?;
        Ok(Some(bytes.chunks_exact(8).map(le_f64).collect()))
    }

    /// Writes every row's number (row-file order, one per row of `rows`): a checkpointed run's column back.
    ///
    /// # Errors
    /// [`IoError::Io`] naming `rows`' source when the column cannot be written, or when `values` does not
    /// hold one number per row.
    pub fn set_values(&mut self, rows: &RowFile, values: &[f64]) -> Result<(), IoError> {
        let fail = |e| IoError::io(&rows.source, e);
        if values.len() != rows.summary.n_rows {
            return Err(fail(std::io::Error::other(format!(
                "a column of {} numbers for {} rows",
                values.len(),
                rows.summary.n_rows
            ))));
        }
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut f = &self.file;
        f.seek(SeekFrom::Start(0)).map_err(fail)?;
        f.write_all(&bytes).map_err(fail)?;
        self.filled = true;
        Ok(())
    }
}

impl RowFile {
    /// Like [`RowFile::pass`], handing each row its number in `column` to read and change (0 for every row
    /// when `reset`, or before any pass wrote the column).
    ///
    /// # Errors
    /// As [`RowFile::pass`].
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use maxmargin_io::{IoError, stream::{Column, RowFile}};
    /// let dir = tempfile::tempdir()?;
    /// let data = dir.path().join("d.svm");
    /// std::fs::write(&data, "1 1:1\n2 1:2\n")?;
    /// let rows = RowFile::prepare(&data, dir.path(), 0)?;
    /// let mut column = Column::new(dir.path())?;
    /// rows.pass_with_column(&mut column, false, |r, v| { *v += r.label; Ok::<_, IoError>(()) })?;
    /// let mut seen = Vec::new();
    /// rows.pass_with_column(&mut column, false, |r, v| { seen.push(*v - r.label); Ok::<_, IoError>(()) })?;
    /// assert_eq!(seen, [0.0, 0.0]);
    /// # Ok(()) }
    /// ```
    pub fn pass_with_column<E: From<IoError>>(
        &self,
        column: &mut Column,
        reset: bool,
        row: impl FnMut(StreamRow<'_>, &mut f64) -> Result<(), E>,
    ) -> Result<(), E> {
        self.pass_with_column_where(column, reset, |_| true, row)
    }

    /// Like [`RowFile::pass_with_column`], handing out only the rows whose number satisfies `keep` (the
    /// others are neither decoded nor changed): a pass over the rows a solver still works on, such as the
    /// coordinates that shrinking has not set aside.
    ///
    /// # Errors
    /// As [`RowFile::pass`].
    pub fn pass_with_column_where<E: From<IoError>>(
        &self,
        column: &mut Column,
        reset: bool,
        keep: impl Fn(f64) -> bool,
        mut row: impl FnMut(StreamRow<'_>, &mut f64) -> Result<(), E>,
    ) -> Result<(), E> {
        let fail = |e| IoError::io(&self.source, e);
        let read_old = column.filled && !reset;
        // One bucket's numbers per slot of the window, and the bytes they are read from and written as.
        let values: std::cell::RefCell<[Vec<f64>; WINDOW]> = Default::default();
        let bytes = std::cell::RefCell::new(Vec::<u8>::new());
        let file = &column.file;
        let offset = |b: usize| 8 * self.buckets[b].first_row as u64;
        self.visit::<E>(
            |slot, b, rows| {
                let v = &mut values.borrow_mut()[slot];
                let bytes = &mut *bytes.borrow_mut();
                v.clear();
                v.reserve_exact(rows);
                bytes.clear();
                bytes.reserve_exact(8 * rows);
                if read_old {
                    bytes.resize(8 * rows, 0);
                    let mut f = file;
                    f.seek(SeekFrom::Start(offset(b))).map_err(fail)?;
                    f.read_exact(bytes).map_err(fail)?;
                    v.extend(bytes.chunks_exact(8).map(le_f64));
                } else {
                    v.resize(rows, 0.0);
                }
                Ok(())
            },
            |slot, within| keep(values.borrow()[slot][within]),
            |r, slot, within| row(r, &mut values.borrow_mut()[slot][within]),
            |slot, b, _| {
                let v = &values.borrow()[slot];
                let out = &mut *bytes.borrow_mut();
                out.clear();
                v.iter()
                    .for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
                let mut f = file;
                f.seek(SeekFrom::Start(offset(b))).map_err(fail)?;
                f.write_all(out).map_err(fail)?;
                Ok(())
            },
        )?;
        column.filled = true;
        Ok(())
    }
}
