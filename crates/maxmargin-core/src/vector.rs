//! Feature vectors: sparse vectors, a CSR matrix of sparse rows, and dense helpers.
//!
//! Dense weights are plain `&[f64]` at crate boundaries (nalgebra's `DVector::as_slice()` where a dense
//! vector is owned); the dense helpers here delegate to nalgebra. Sparse indices are 0-based, strictly
//! increasing and `u32`; a feature index beyond the length of a dense weight vector has weight zero, so a
//! model can score rows with features it never saw. This module does no file I/O.

use crate::buffer::Buffer;
pub use crate::buffer::SharedSlice;
use crate::error::{CoreError, check_finite};
use nalgebra::DVectorView;
use serde::{Deserialize, Serialize};

mod narrow;

/// Dot product of two dense vectors of the same length, `⟨a, b⟩ = Σ a_j b_j`.
///
/// # Errors
/// [`CoreError::LengthMismatch`] when the lengths differ.
///
/// # Examples
/// ```
/// # fn main() -> Result<(), maxmargin_core::CoreError> {
/// assert_eq!(maxmargin_core::vector::dot(&[1.0, 2.0], &[3.0, 4.0])?, 11.0);
/// # Ok(()) }
/// ```
pub fn dot(a: &[f64], b: &[f64]) -> Result<f64, CoreError> {
    if a.len() != b.len() {
        return Err(CoreError::LengthMismatch {
            what: "dot operand",
            expected: a.len(),
            got: b.len(),
        });
    }
    Ok(DVectorView::from_slice(a, a.len()).dot(&DVectorView::from_slice(b, b.len())))
}

/// Squared Euclidean norm of a dense vector, `‖a‖² = Σ a_j²`.
///
/// # Examples
/// ```
/// assert_eq!(maxmargin_core::vector::norm_sq(&[3.0, 4.0]), 25.0);
/// ```
pub fn norm_sq(a: &[f64]) -> f64 {
    DVectorView::from_slice(a, a.len()).norm_squared()
}

/// `y ← y + alpha·x` on dense vectors of the same length.
///
/// # Errors
/// [`CoreError::LengthMismatch`] when the lengths differ.
///
/// # Examples
/// ```
/// # fn main() -> Result<(), maxmargin_core::CoreError> {
/// let mut y = vec![1.0, 1.0];
/// maxmargin_core::vector::axpy(2.0, &[1.0, -1.0], &mut y)?;
/// assert_eq!(y, vec![3.0, -1.0]);
/// # Ok(()) }
/// ```
pub fn axpy(alpha: f64, x: &[f64], y: &mut [f64]) -> Result<(), CoreError> {
    if x.len() != y.len() {
        return Err(CoreError::LengthMismatch {
            what: "axpy operand",
            expected: y.len(),
            got: x.len(),
        });
    }
    for (yj, xj) in y.iter_mut().zip(x) {
        *yj += alpha * xj;
    }
    Ok(())
}

/// A borrowed sparse vector: strictly increasing indices and their values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SparseRow<'a> {
    idx: &'a [u32],
    val: &'a [f64],
}

impl<'a> SparseRow<'a> {
    /// A row over borrowed buffers, checked like [`SparseRows::push_row`] (rows read back from disk).
    ///
    /// # Errors
    /// [`CoreError::UnsortedIndex`], [`CoreError::NonFinite`] or [`CoreError::LengthMismatch`].
    ///
    /// # Examples
    /// ```
    /// use maxmargin_core::vector::SparseRow;
    /// assert_eq!(SparseRow::new(&[1, 3], &[2.0, 1.0]).map(|r| r.dot(&[1.0, 1.0, 1.0, 5.0])), Ok(7.0));
    /// assert!(SparseRow::new(&[3, 1], &[2.0, 1.0]).is_err());
    /// ```
    pub fn new(idx: &'a [u32], val: &'a [f64]) -> Result<Self, CoreError> {
        check_sparse(idx, val)?;
        Ok(Self { idx, val })
    }

    /// The indices, strictly increasing.
    pub fn indices(&self) -> &'a [u32] {
        self.idx
    }

    /// The values, one per index.
    pub fn values(&self) -> &'a [f64] {
        self.val
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.idx.len()
    }

    /// `(index, value)` pairs in index order.
    pub fn iter(&self) -> impl Iterator<Item = (usize, f64)> + 'a {
        self.idx
            .iter()
            .map(|&j| j as usize)
            .zip(self.val.iter().copied())
    }

    /// `⟨x, w⟩` against dense weights; entries at indices `>= w.len()` count as zero.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), maxmargin_core::CoreError> {
    /// let x = maxmargin_core::vector::SparseVec::new(vec![0, 2], vec![1.0, 2.0])?;
    /// assert_eq!(x.as_row().dot(&[3.0, 9.0, 0.5]), 4.0);
    /// assert_eq!(x.as_row().dot(&[3.0]), 3.0);
    /// # Ok(()) }
    /// ```
    #[inline]
    pub fn dot(&self, w: &[f64]) -> f64 {
        let mut s = 0.0;
        for (&j, &v) in self.idx.iter().zip(self.val) {
            if let Some(wj) = w.get(j as usize) {
                s += v * wj;
            }
        }
        s
    }

    /// `w ← w + alpha·x`; entries at indices `>= w.len()` are dropped.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), maxmargin_core::CoreError> {
    /// let x = maxmargin_core::vector::SparseVec::new(vec![1], vec![2.0])?;
    /// let mut w = vec![0.0, 1.0];
    /// x.as_row().axpy(0.5, &mut w);
    /// assert_eq!(w, vec![0.0, 2.0]);
    /// # Ok(()) }
    /// ```
    #[inline]
    pub fn axpy(&self, alpha: f64, w: &mut [f64]) {
        for (&j, &v) in self.idx.iter().zip(self.val) {
            if let Some(wj) = w.get_mut(j as usize) {
                *wj += alpha * v;
            }
        }
    }

    /// Squared norm `‖x‖²`.
    pub fn norm_sq(&self) -> f64 {
        self.val.iter().map(|v| v * v).sum()
    }

    /// Sparse–sparse dot product by merging the index lists.
    pub fn dot_sparse(&self, other: &SparseRow<'_>) -> f64 {
        let (mut i, mut k, mut s) = (0, 0, 0.0);
        while i < self.idx.len() && k < other.idx.len() {
            match self.idx[i].cmp(&other.idx[k]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => k += 1,
                std::cmp::Ordering::Equal => {
                    s += self.val[i] * other.val[k];
                    i += 1;
                    k += 1;
                }
            }
        }
        s
    }

    /// One past the largest index, or 0 for an empty row.
    pub fn dim_hint(&self) -> usize {
        self.idx.last().map_or(0, |&j| j as usize + 1)
    }

    /// A dense copy of length `dim` (entries beyond `dim` dropped).
    pub fn to_dense(&self, dim: usize) -> Vec<f64> {
        let mut out = vec![0.0; dim];
        self.axpy(1.0, &mut out);
        out
    }

    /// An owned copy.
    pub fn to_owned(&self) -> SparseVec {
        SparseVec {
            idx: self.idx.to_vec(),
            val: self.val.to_vec(),
        }
    }
}

/// Checks that `idx` is strictly increasing and `val` finite and of the same length.
fn check_sparse(idx: &[u32], val: &[f64]) -> Result<(), CoreError> {
    if idx.len() != val.len() {
        return Err(CoreError::LengthMismatch {
            what: "sparse values",
            expected: idx.len(),
            got: val.len(),
        });
    }
    for pair in idx.windows(2) {
        if pair[1] <= pair[0] {
            return Err(CoreError::UnsortedIndex {
                index: pair[1],
                previous: pair[0],
            });
        }
    }
    check_finite("sparse value", val)
}

/// An owned sparse vector `{ idx, val }` with strictly increasing indices and finite values.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SparseVec {
    idx: Vec<u32>,
    val: Vec<f64>,
}

impl SparseVec {
    /// Builds a sparse vector, checking order, finiteness and lengths.
    ///
    /// # Errors
    /// [`CoreError::UnsortedIndex`], [`CoreError::NonFinite`] or [`CoreError::LengthMismatch`].
    ///
    /// # Examples
    /// ```
    /// use maxmargin_core::vector::SparseVec;
    /// assert!(SparseVec::new(vec![0, 3], vec![1.0, 2.0]).is_ok());
    /// assert!(SparseVec::new(vec![3, 0], vec![1.0, 2.0]).is_err());
    /// ```
    pub fn new(idx: Vec<u32>, val: Vec<f64>) -> Result<Self, CoreError> {
        check_sparse(&idx, &val)?;
        Ok(Self { idx, val })
    }

    /// The sparse form of a dense vector (zeros dropped).
    ///
    /// # Errors
    /// [`CoreError::NonFinite`] for a NaN or infinite entry.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), maxmargin_core::CoreError> {
    /// let x = maxmargin_core::vector::SparseVec::from_dense(&[0.0, 2.0, 0.0])?;
    /// assert_eq!(x.as_row().indices(), &[1]);
    /// # Ok(()) }
    /// ```
    pub fn from_dense(dense: &[f64]) -> Result<Self, CoreError> {
        check_finite("dense value", dense)?;
        let (idx, val) = dense
            .iter()
            .enumerate()
            .filter(|(_, v)| **v != 0.0)
            .map(|(j, &v)| (j as u32, v))
            .unzip();
        Ok(Self { idx, val })
    }

    /// Whether the vector is what [`SparseVec::new`] builds, with every index below `dim`: decoded state
    /// (a checkpoint) is checked with it before any index is used.
    pub fn fits(&self, dim: usize) -> bool {
        self.idx.len() == self.val.len()
            && self.idx.windows(2).all(|p| p[0] < p[1])
            && self.idx.last().is_none_or(|&j| (j as usize) < dim)
            && self.val.iter().all(|v| v.is_finite())
    }

    /// `a·x + b·y` by merging the index lists; entries that come out exactly zero are dropped.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), maxmargin_core::CoreError> {
    /// use maxmargin_core::vector::SparseVec;
    /// let x = SparseVec::new(vec![0, 2], vec![1.0, 1.0])?;
    /// let y = SparseVec::new(vec![2, 5], vec![1.0, 4.0])?;
    /// let z = SparseVec::lincomb(2.0, &x, -2.0, &y);
    /// assert_eq!((z.as_row().indices(), z.as_row().values()), (&[0, 5][..], &[2.0, -8.0][..]));
    /// # Ok(()) }
    /// ```
    pub fn lincomb(a: f64, x: &SparseVec, b: f64, y: &SparseVec) -> SparseVec {
        let (mut i, mut k) = (0, 0);
        let n = x.idx.len() + y.idx.len();
        let (mut idx, mut val) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let mut push = |j: u32, v: f64| {
            if v != 0.0 {
                idx.push(j);
                val.push(v);
            }
        };
        // Both lists while both last, then the rest of either: the same sums in the same order as one loop
        // over the union, without its end-of-list tests on every entry.
        while i < x.idx.len() && k < y.idx.len() {
            let (xj, yj) = (x.idx[i], y.idx[k]);
            if xj < yj {
                push(xj, a * x.val[i]);
                i += 1;
            } else if yj < xj {
                push(yj, b * y.val[k]);
                k += 1;
            } else {
                push(xj, a * x.val[i] + b * y.val[k]);
                i += 1;
                k += 1;
            }
        }
        for (&j, &v) in x.idx[i..].iter().zip(&x.val[i..]) {
            push(j, a * v);
        }
        for (&j, &v) in y.idx[k..].iter().zip(&y.val[k..]) {
            push(j, b * v);
        }
        SparseVec { idx, val }
    }

    /// The borrowed view used by every operation.
    pub fn as_row(&self) -> SparseRow<'_> {
        SparseRow {
            idx: &self.idx,
            val: &self.val,
        }
    }
}

/// A dataset of sparse rows in compressed sparse row form: one `indptr`, one `idx` and one `val` buffer.
/// The index and value buffers are the matrix's own, or another owner's read in place
/// ([`SparseRows::from_shared`]; cloned by reference, copied only when rows are added).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SparseRows {
    indptr: Vec<usize>,
    idx: Buffer<u32>,
    val: Buffer<f64>,
    n_features: usize,
}

impl Default for SparseRows {
    fn default() -> Self {
        Self::new()
    }
}

impl SparseRows {
    /// An empty matrix with no rows and no features.
    pub fn new() -> Self {
        Self {
            indptr: vec![0],
            idx: Buffer::Owned(Vec::new()),
            val: Buffer::Owned(Vec::new()),
            n_features: 0,
        }
    }

    /// Appends a row, checking it; `n_features` grows to cover its largest index.
    ///
    /// # Errors
    /// [`CoreError::UnsortedIndex`], [`CoreError::NonFinite`] or [`CoreError::LengthMismatch`].
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), maxmargin_core::CoreError> {
    /// let mut x = maxmargin_core::vector::SparseRows::new();
    /// x.push_row(&[0, 4], &[1.0, -1.0])?;
    /// assert_eq!((x.n_rows(), x.n_features(), x.nnz()), (1, 5, 2));
    /// # Ok(()) }
    /// ```
    pub fn push_row(&mut self, idx: &[u32], val: &[f64]) -> Result<(), CoreError> {
        check_sparse(idx, val)?;
        self.idx.to_mut().extend_from_slice(idx);
        self.val.to_mut().extend_from_slice(val);
        self.indptr.push(self.idx.len());
        if let Some(&last) = idx.last() {
            self.n_features = self.n_features.max(last as usize + 1);
        }
        Ok(())
    }

    /// Removes every row, keeping the buffers' memory and the feature count (a reused batch).
    pub fn clear(&mut self) {
        self.indptr.truncate(1);
        match (&mut self.idx, &mut self.val) {
            (Buffer::Owned(i), Buffer::Owned(v)) => {
                i.clear();
                v.clear();
            }
            // Another owner's rows are let go, not copied to be cleared.
            _ => {
                self.idx = Buffer::Owned(Vec::new());
                self.val = Buffer::Owned(Vec::new());
            }
        }
    }

    /// Builds a matrix from dense rows (zeros dropped).
    ///
    /// # Errors
    /// [`CoreError::NonFinite`] for a NaN or infinite entry.
    pub fn from_dense_rows(rows: &[&[f64]]) -> Result<Self, CoreError> {
        let mut out = Self::new();
        for row in rows {
            let s = SparseVec::from_dense(row)?;
            out.push_row(&s.idx, &s.val)?;
            out.n_features = out.n_features.max(row.len());
        }
        Ok(out)
    }

    /// A matrix over buffers another owner keeps (an array read in place): row `i` is
    /// `idx[indptr[i]..indptr[i + 1]]` with its values, `n_features` at least one past every index. The rows
    /// are checked as [`SparseRows::push_row`] checks them, and nothing of `idx` or `val` is copied.
    ///
    /// # Errors
    /// [`CoreError::InvalidRow`] naming the first row (from 0) whose offsets, indices or values are wrong.
    ///
    /// # Examples
    /// ```
    /// use maxmargin_core::vector::{SharedSlice, SparseRows};
    /// use std::sync::Arc;
    /// let idx: Arc<dyn SharedSlice<u32>> = Arc::new(vec![0, 2, 1]);
    /// let val: Arc<dyn SharedSlice<f64>> = Arc::new(vec![1.0, 2.0, 3.0]);
    /// let x = SparseRows::from_shared(vec![0, 2, 3], idx, val, 3).unwrap();
    /// assert_eq!((x.n_rows(), x.row(1).indices()), (2, &[1][..]));
    /// ```
    pub fn from_shared(
        indptr: Vec<usize>,
        idx: std::sync::Arc<dyn SharedSlice<u32>>,
        val: std::sync::Arc<dyn SharedSlice<f64>>,
        n_features: usize,
    ) -> Result<Self, CoreError> {
        let (i, v) = (idx.as_slice(), val.as_slice());
        let invalid = |row: usize, reason: String| CoreError::InvalidRow { row, reason };
        if indptr.first() != Some(&0) {
            return Err(invalid(0, "the offsets must start at 0".into()));
        }
        if i.len() != v.len() {
            let reason = format!("{} indices but {} values", i.len(), v.len());
            return Err(invalid(0, reason));
        }
        for (row, w) in indptr.windows(2).enumerate() {
            let (a, b) = (w[0], w[1]);
            if a > b || b > i.len() {
                let reason = format!("offsets [{a}, {b}) outside the {} stored values", i.len());
                return Err(invalid(row, reason));
            }
            check_sparse(&i[a..b], &v[a..b]).map_err(|e| invalid(row, e.to_string()))?;
            if let Some(&j) = i[a..b].last()
                && j as usize >= n_features
            {
                return Err(invalid(row, format!("column {j} outside 0..{n_features}")));
            }
        }
        if indptr.last() != Some(&i.len()) {
            let reason = format!("the offsets end before the {} stored values", i.len());
            return Err(invalid(indptr.len().saturating_sub(2), reason));
        }
        Ok(Self {
            indptr,
            idx: Buffer::Shared(idx),
            val: Buffer::Shared(val),
            n_features,
        })
    }

    /// Row `i`.
    ///
    /// # Panics
    /// When `i >= n_rows()`, like slice indexing.
    #[inline(always)]
    pub fn row(&self, i: usize) -> SparseRow<'_> {
        let (a, b) = (self.indptr[i], self.indptr[i + 1]);
        SparseRow {
            idx: &self.idx[a..b],
            val: &self.val[a..b],
        }
    }

    /// All rows in order.
    pub fn rows(&self) -> impl Iterator<Item = SparseRow<'_>> {
        (0..self.n_rows()).map(|i| self.row(i))
    }

    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.indptr.len() - 1
    }

    /// Number of features: at least one past the largest stored index.
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// Raises the number of features (a file header or a model may know more features than appear).
    pub fn set_n_features_at_least(&mut self, n: usize) {
        self.n_features = self.n_features.max(n);
    }

    /// Whether the buffers form valid rows: offsets from 0 rising to the end of both buffers, each row's
    /// indices strictly increasing and below the feature count, every value finite. A decoded matrix (from a
    /// file) is checked with this before any row is read.
    ///
    /// # Examples
    /// ```
    /// use maxmargin_core::vector::SparseRows;
    /// let x = SparseRows::from_dense_rows(&[&[1.0, 0.0], &[0.0, 2.0]]).unwrap();
    /// assert!(x.is_valid());
    /// ```
    pub fn is_valid(&self) -> bool {
        let offsets = self.indptr.first() == Some(&0)
            && self.indptr.windows(2).all(|w| w[0] <= w[1])
            && self.indptr.last() == Some(&self.idx.len())
            && self.idx.len() == self.val.len();
        offsets
            && self.indptr.windows(2).all(|w| {
                let idx = &self.idx[w[0]..w[1]];
                idx.windows(2).all(|p| p[0] < p[1])
                    && idx.last().is_none_or(|&j| (j as usize) < self.n_features)
            })
            && self.val.iter().all(|v| v.is_finite())
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.idx.len()
    }

    /// Reserves room for `nnz` more stored entries (pages never written are never resident, so an upper
    /// bound costs address space, not memory, and saves the copies and the slack of growing).
    pub fn reserve(&mut self, nnz: usize) {
        self.idx.to_mut().reserve(nnz);
        self.val.to_mut().reserve(nnz);
    }

    /// Releases unused capacity.
    pub fn shrink_to_fit(&mut self) {
        self.indptr.shrink_to_fit();
        if let Buffer::Owned(v) = &mut self.idx {
            v.shrink_to_fit();
        }
        if let Buffer::Owned(v) = &mut self.val {
            v.shrink_to_fit();
        }
    }

    /// Appends all rows of `other` (already checked when they were pushed there).
    pub fn append(&mut self, other: &SparseRows) {
        let base = self.idx.len();
        self.idx.to_mut().extend_from_slice(&other.idx);
        self.val.to_mut().extend_from_slice(&other.val);
        self.indptr
            .extend(other.indptr[1..].iter().map(|&p| base + p));
        self.n_features = self.n_features.max(other.n_features);
    }

    /// The rows at `rows`, in that order, as a new matrix with the same number of features.
    pub fn select(&self, rows: &[usize]) -> Self {
        let mut out = Self::new();
        for &i in rows {
            let r = self.row(i);
            out.idx.to_mut().extend_from_slice(r.idx);
            out.val.to_mut().extend_from_slice(r.val);
            out.indptr.push(out.idx.len());
        }
        out.n_features = self.n_features;
        out
    }

    /// `X w`: the dot product of every row with dense weights.
    pub fn mat_vec(&self, w: &[f64]) -> Vec<f64> {
        self.rows().map(|r| r.dot(w)).collect()
    }
}
