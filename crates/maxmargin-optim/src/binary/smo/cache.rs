//! Kernel rows `K(x_i, ·)` over every training row, computed on demand (in parallel: each entry is its own
//! sum, so the values do not depend on the thread count) and kept in a least-recently-used cache bounded in
//! bytes, as LIBSVM keeps its `Q` columns. Entries are kept in `f64` (LIBSVM keeps `float`s, half the bytes):
//! the gradient is updated from them, and the certificate is computed from the gradient, so its exactness is
//! theirs.

use maxmargin_core::kernel::Kernel;
use maxmargin_core::vector::SparseRows;

/// At most this many features are scattered into a dense buffer for a row's dot products; wider data uses
/// the sparse merge.
const DENSE_LIMIT: usize = 1 << 20;

/// The row cache of one problem.
#[derive(Debug, Default)]
pub(crate) struct KernelCache {
    /// Cached rows by training row, with the stamp of their last use.
    rows: Vec<Option<(u64, Box<[f64]>)>>,
    cached: Vec<usize>,
    capacity: usize,
    clock: u64,
    dense: Vec<f64>,
    /// Rows computed (cache misses) so far.
    pub(crate) computed: u64,
}

impl KernelCache {
    /// A cache for `n` rows of `n` entries within `bytes`, holding at least two rows (one step needs two).
    pub(crate) fn new(n: usize, bytes: f64) -> Self {
        let per_row = (n.max(1) * std::mem::size_of::<f64>()) as f64;
        let capacity = ((bytes / per_row).floor() as usize).clamp(2, n.max(2));
        Self {
            rows: (0..n).map(|_| None).collect(),
            cached: Vec::new(),
            capacity,
            clock: 0,
            dense: Vec::new(),
            computed: 0,
        }
    }

    /// How many rows it holds at most (0 before [`KernelCache::new`]).
    pub(crate) fn capacity_rows(&self) -> usize {
        self.capacity
    }

    /// Rows `i` and `j` of the kernel matrix (computed when not cached).
    pub(crate) fn pair(
        &mut self,
        (x, norms, kernel): (&SparseRows, &[f64], Kernel),
        i: usize,
        j: usize,
    ) -> (&[f64], &[f64]) {
        self.ensure(x, norms, kernel, i, None);
        self.ensure(x, norms, kernel, j, Some(i));
        let (a, b) = (&self.rows[i], &self.rows[j]);
        match (a, b) {
            (Some((_, a)), Some((_, b))) => (a, b),
            _ => unreachable!("both rows were just made present"),
        }
    }

    /// Row `i`, computed when not cached.
    pub(crate) fn row(
        &mut self,
        (x, norms, kernel): (&SparseRows, &[f64], Kernel),
        i: usize,
    ) -> &[f64] {
        self.ensure(x, norms, kernel, i, None);
        match &self.rows[i] {
            Some((_, r)) => r,
            None => unreachable!("the row was just made present"),
        }
    }

    fn ensure(
        &mut self,
        x: &SparseRows,
        norms: &[f64],
        kernel: Kernel,
        i: usize,
        keep: Option<usize>,
    ) {
        self.clock += 1;
        if let Some((stamp, _)) = &mut self.rows[i] {
            *stamp = self.clock;
            return;
        }
        if self.cached.len() >= self.capacity {
            // Evict the least recently used row other than `keep`.
            let (pos, _) = self
                .cached
                .iter()
                .enumerate()
                .filter(|&(_, &r)| Some(r) != keep)
                .min_by_key(|&(_, &r)| self.rows[r].as_ref().map_or(0, |(s, _)| *s))
                .expect("the cache holds at least two rows");
            let old = self.cached.swap_remove(pos);
            self.rows[old] = None;
        }
        let row = self.compute(x, norms, kernel, i);
        self.computed += 1;
        self.rows[i] = Some((self.clock, row));
        self.cached.push(i);
    }

    fn compute(&mut self, x: &SparseRows, norms: &[f64], kernel: Kernel, i: usize) -> Box<[f64]> {
        use rayon::prelude::*;
        let n = x.n_rows();
        let xi = x.row(i);
        let d = x.n_features();
        let mut out = vec![0f64; n];
        let ni = norms.get(i).copied().unwrap_or(0.0);
        let value =
            |t: usize, dot: f64| kernel.from_dot(dot, ni, norms.get(t).copied().unwrap_or(0.0));
        const CHUNK: usize = 2048;
        if d <= DENSE_LIMIT {
            if self.dense.len() < d {
                self.dense.resize(d, 0.0);
            }
            for (&j, &v) in xi.indices().iter().zip(xi.values()) {
                self.dense[j as usize] = v;
            }
            let dense = &self.dense;
            out.par_chunks_mut(CHUNK)
                .enumerate()
                .for_each(|(c, chunk)| {
                    for (k, o) in chunk.iter_mut().enumerate() {
                        let t = c * CHUNK + k;
                        let r = x.row(t);
                        let dot: f64 = r
                            .indices()
                            .iter()
                            .zip(r.values())
                            .map(|(&j, &v)| dense[j as usize] * v)
                            .sum();
                        *o = value(t, dot);
                    }
                });
            for &j in xi.indices() {
                self.dense[j as usize] = 0.0;
            }
        } else {
            out.par_chunks_mut(CHUNK)
                .enumerate()
                .for_each(|(c, chunk)| {
                    for (k, o) in chunk.iter_mut().enumerate() {
                        let t = c * CHUNK + k;
                        *o = value(t, xi.dot_sparse(&x.row(t)));
                    }
                });
        }
        out.into_boxed_slice()
    }
}
