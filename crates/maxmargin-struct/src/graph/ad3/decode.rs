//! Reading AD3's dual: a labelling from the multipliers, node by node, as TRW-S decodes (Kolmogorov 2006).
//!
//! The dual is AD3's: every edge `f = (i, j)` holds `φ_f(a, b) = P_f(a, b) + θ_i(a)/deg_i + λ_{f,i}(a) +
//! θ_j(b)/deg_j + λ_{f,j}(b)` with the multipliers of each node summing to zero over its edges, so that
//! `Σ_f φ_f(y_i, y_j)` is the value of any labelling `y`. A node's label is chosen with its labelled
//! neighbours' edges read at their labels and the other edges maximized over their far end.

use crate::graph::infer::oriented;

impl super::Problem<'_> {
    /// `max_b [P_e(a, b) + θ_j(b)/deg_j + λ_{e,j}(b)]` over node `j`'s allowed labels `b`, for every `a`, where
    /// node `i` is the first end of `e` when `first` (written into `out`).
    fn message(
        &self,
        lambda: &[f64],
        allowed: &[bool],
        (j, e, first): (u32, u32, bool),
        out: &mut [f64],
    ) {
        let (l, j, e) = (self.p.n_labels, j as usize, e as usize);
        let table = self.p.table(e);
        let other = &lambda[(2 * e + usize::from(first)) * l..][..l];
        let shares = &self.shares[j * l..(j + 1) * l];
        let ok = &allowed[j * l..(j + 1) * l];
        out.fill(f64::NEG_INFINITY);
        for b in (0..l).filter(|&b| ok[b]) {
            let tail = shares[b] + other[b];
            for (a, o) in out.iter_mut().enumerate() {
                *o = o.max(oriented(table, l, first, a, b) + tail);
            }
        }
    }

    /// A labelling read from the multipliers node by node (TRW-S's decoding): each node takes the allowed
    /// label that is best given its labelled neighbours and the messages of the others.
    pub(super) fn decode(&self, lambda: &[f64], allowed: &[bool]) -> Vec<u32> {
        let (n, l) = (self.p.n_nodes(), self.p.n_labels);
        let mut y = vec![u32::MAX; n];
        let mut score = vec![0.0; l];
        let mut row = vec![0.0; l];
        for i in 0..n {
            score.copy_from_slice(self.p.node(i));
            for &(j, e, first) in self.adj.of(i) {
                let table = self.p.table(e as usize);
                let yj = y[j as usize];
                if yj == u32::MAX {
                    self.message(lambda, allowed, (j, e, first), &mut row);
                    for (s, r) in score.iter_mut().zip(&row) {
                        *s += r;
                    }
                } else {
                    let b = yj as usize;
                    for (a, s) in score.iter_mut().enumerate() {
                        *s += oriented(table, l, first, a, b);
                    }
                }
            }
            let ok = &allowed[i * l..(i + 1) * l];
            let mut top = (0, f64::NEG_INFINITY);
            for a in (0..l).filter(|&a| ok[a]) {
                if score[a] > top.1 {
                    top = (a, score[a]);
                }
            }
            y[i] = top.0 as u32;
        }
        y
    }
}
