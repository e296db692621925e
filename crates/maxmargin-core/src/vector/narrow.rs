//! Rows narrowed to a model's features: a model of `n` features reads only the entries at indices below
//! `n` (a kernel's distance would otherwise count the others).

use super::{Buffer, SparseRow, SparseRows};

impl<'a> SparseRow<'a> {
    /// The entries at indices below `n` (a model of `n` features reads only those; a kernel would
    /// otherwise count the others in its distances).
    ///
    /// # Examples
    /// ```
    /// use maxmargin_core::vector::SparseRow;
    /// let x = SparseRow::new(&[0, 2, 5], &[1.0, 2.0, 3.0]).unwrap();
    /// assert_eq!(x.below(3).indices(), [0, 2]);
    /// assert_eq!(x.below(9).nnz(), 3);
    /// ```
    pub fn below(&self, n: usize) -> SparseRow<'a> {
        let k = self.idx.partition_point(|&j| (j as usize) < n);
        SparseRow {
            idx: &self.idx[..k],
            val: &self.val[..k],
        }
    }
}

impl SparseRows {
    /// The rows with only their entries at indices below `n` ([`SparseRow::below`]): these rows themselves
    /// when none reaches `n`, else a narrowed copy of `n` features.
    ///
    /// # Examples
    /// ```
    /// use maxmargin_core::vector::SparseRows;
    /// let x = SparseRows::from_dense_rows(&[&[1.0, 0.0, 2.0], &[0.0, 3.0, 0.0]]).unwrap();
    /// assert_eq!(x.below(2).row(0).indices(), [0]);
    /// assert!(matches!(x.below(3), std::borrow::Cow::Borrowed(_)));
    /// ```
    pub fn below(&self, n: usize) -> std::borrow::Cow<'_, SparseRows> {
        if self.n_features <= n {
            return std::borrow::Cow::Borrowed(self);
        }
        let (mut idx, mut val, mut indptr) = (Vec::new(), Vec::new(), vec![0]);
        for r in self.rows().map(|r| r.below(n)) {
            idx.extend_from_slice(r.idx);
            val.extend_from_slice(r.val);
            indptr.push(idx.len());
        }
        let out = SparseRows {
            indptr,
            idx: Buffer::Owned(idx),
            val: Buffer::Owned(val),
            n_features: n,
        };
        std::borrow::Cow::Owned(out)
    }
}
