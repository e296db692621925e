//! A point of the local marginal polytope from ADMM's state, exactly feasible, so that its joint feature is a
//! corner a solver may step to and its value a lower bound on the relaxation's maximum.
//!
//! ADMM's global marginals `p_i` and its factors' marginals `μ_f` agree only in the limit. The node
//! marginals are taken as `p_i` clipped at zero and normalized; each factor's table is then fitted to its two
//! ends' marginals: rows and columns whose sums exceed their node's marginal are scaled down to it, and the
//! deficits left (`r = p_i − μ1 ≥ 0`, `c = p_j − μᵀ1 ≥ 0`, with equal totals) are filled by `r cᵀ / Σc`,
//! which keeps the table non-negative and makes both its sums exact.

use super::Problem;

/// A feasible point of the local polytope and its value `Σ_i θ_i·p_i + Σ_e θ_e·μ_e`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Fractional {
    /// Node marginals (`n × L`, node-major; each row on the simplex).
    pub nodes: Vec<f64>,
    /// Edge marginals (`m × L²`, the first end's label by rows; each table's sums are its ends' marginals).
    pub edges: Vec<f64>,
    pub value: f64,
}

impl Problem<'_> {
    /// The feasible point nearest ADMM's marginals `marg` and its factors' active sets `warm` (see the
    /// module docs).
    pub(super) fn feasible(&self, marg: &[f64], warm: &[(Vec<usize>, Vec<f64>)]) -> Fractional {
        let (p, l) = (self.p, self.p.n_labels);
        let mut nodes = marg.to_vec();
        for row in nodes.chunks_exact_mut(l) {
            row.iter_mut().for_each(|m| *m = m.max(0.0));
            let total: f64 = row.iter().sum();
            if total > 0.0 {
                row.iter_mut().for_each(|m| *m /= total);
            } else {
                row.fill(1.0 / l as f64);
            }
            // A node within rounding of a label is that label: the point stays feasible (the edges are
            // fitted to it below) and stores as a labelling's node, not as `L` values.
            let (top, m) = super::super::infer::argmax(row);
            if m >= 1.0 - SNAP {
                row.fill(0.0);
                row[top] = 1.0;
            }
        }
        let mut value: f64 = nodes.iter().zip(&p.unary).map(|(m, t)| m * t).sum();
        let mut edges = vec![0.0; self.edges.len() * l * l];
        let (mut rows, mut cols) = (vec![0.0; l], vec![0.0; l]);
        for ((table, &[i, j]), (e, (set, weights))) in edges
            .chunks_exact_mut(l * l)
            .zip(self.edges)
            .zip(warm.iter().enumerate())
        {
            let (pi, pj) = (&nodes[i as usize * l..][..l], &nodes[j as usize * l..][..l]);
            for (&c, &w) in set.iter().zip(weights) {
                table[c] += w.max(0.0);
            }
            fit_to_marginals(table, (pi, pj), (&mut rows, &mut cols));
            value += table
                .iter()
                .zip(p.table(e))
                .map(|(m, t)| m * t)
                .sum::<f64>();
        }
        Fractional {
            nodes,
            edges,
            value,
        }
    }
}

/// How far below 1 a node's largest marginal may be and the node count as labelled.
const SNAP: f64 = 1e-9;

/// The label of a one-hot row, if it is one.
fn one_hot(row: &[f64]) -> Option<usize> {
    let at = row.iter().position(|&m| m == 1.0)?;
    row.iter()
        .enumerate()
        .all(|(a, &m)| a == at || m == 0.0)
        .then_some(at)
}

/// Makes the non-negative `L × L` table's row sums `pi` and column sums `pj` (both on the simplex) by
/// scaling down rows and then columns that exceed them and filling the deficits with their outer product.
/// Where an end is labelled the table is determined (that label's row or column is the other end's
/// marginal) and is written exactly.
pub(crate) fn fit_to_marginals(
    table: &mut [f64],
    (pi, pj): (&[f64], &[f64]),
    (rows, cols): (&mut [f64], &mut [f64]),
) {
    let l = pi.len();
    if let Some(a) = one_hot(pi) {
        table.fill(0.0);
        table[a * l..(a + 1) * l].copy_from_slice(pj);
        return;
    }
    if let Some(b) = one_hot(pj) {
        table.fill(0.0);
        for (row, &m) in table.chunks_exact_mut(l).zip(pi) {
            row[b] = m;
        }
        return;
    }
    for (row, &target) in table.chunks_exact_mut(l).zip(pi) {
        let sum: f64 = row.iter().sum();
        if sum > target {
            let scale = target / sum;
            row.iter_mut().for_each(|m| *m *= scale);
        }
    }
    cols.fill(0.0);
    for row in table.chunks_exact(l) {
        for (c, &m) in cols.iter_mut().zip(row) {
            *c += m;
        }
    }
    for (b, &target) in pj.iter().enumerate() {
        if cols[b] > target {
            let scale = target / cols[b];
            for row in table.chunks_exact_mut(l) {
                row[b] *= scale;
            }
        }
    }
    cols.fill(0.0);
    for (row, r) in table.chunks_exact(l).zip(rows.iter_mut()) {
        *r = row.iter().sum();
        for (c, &m) in cols.iter_mut().zip(row) {
            *c += m;
        }
    }
    for (r, &target) in rows.iter_mut().zip(pi) {
        *r = (target - *r).max(0.0);
    }
    for (c, &target) in cols.iter_mut().zip(pj) {
        *c = (target - *c).max(0.0);
    }
    let total: f64 = cols.iter().sum();
    if total > 0.0 {
        for (row, &r) in table.chunks_exact_mut(l).zip(rows.iter()) {
            for (m, &c) in row.iter_mut().zip(cols.iter()) {
                *m += r * c / total;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn simplex(raw: &[f64]) -> Vec<f64> {
        let total: f64 = raw.iter().sum();
        raw.iter().map(|r| r / total).collect()
    }

    proptest! {
        /// Whatever the table starts as, it ends non-negative with exactly the asked sums (to rounding).
        #[test]
        fn a_fitted_table_has_the_marginals_asked(
            (raw_i, raw_j, start) in (1usize..5).prop_flat_map(|l| (
                prop::collection::vec(0.01f64..1.0, l),
                prop::collection::vec(0.01f64..1.0, l),
                prop::collection::vec(0.0f64..1.0, l * l),
            ))
        ) {
            let (pi, pj) = (simplex(&raw_i), simplex(&raw_j));
            let l = pi.len();
            let mut table = start;
            let (mut rows, mut cols) = (vec![0.0; l], vec![0.0; l]);
            fit_to_marginals(&mut table, (&pi, &pj), (&mut rows, &mut cols));
            prop_assert!(table.iter().all(|&m| m >= 0.0));
            for a in 0..l {
                let row: f64 = table[a * l..(a + 1) * l].iter().sum();
                let col: f64 = (0..l).map(|b| table[b * l + a]).sum();
                prop_assert!((row - pi[a]).abs() < 1e-12, "row {a}: {row} against {}", pi[a]);
                prop_assert!((col - pj[a]).abs() < 1e-12, "column {a}: {col} against {}", pj[a]);
            }
        }
    }

    /// An end that is a label determines the table, written exactly (so that an edge between two labelled
    /// nodes is their indicator, to the bit).
    #[test]
    fn a_labelled_end_determines_the_table() {
        let (mut rows, mut cols) = (vec![0.0; 3], vec![0.0; 3]);
        let mut table = vec![0.3, 0.1, 0.2, 0.05, 0.1, 0.0, 0.1, 0.1, 0.05];
        fit_to_marginals(
            &mut table,
            (&[0.0, 1.0, 0.0], &[0.0, 0.0, 1.0]),
            (&mut rows, &mut cols),
        );
        assert_eq!(table, vec![0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
        fit_to_marginals(
            &mut table,
            (&[0.25, 0.25, 0.5], &[1.0, 0.0, 0.0]),
            (&mut rows, &mut cols),
        );
        assert_eq!(table, vec![0.25, 0.0, 0.0, 0.25, 0.0, 0.0, 0.5, 0.0, 0.0]);
    }

    /// A table already consistent with its marginals is left as it is.
    #[test]
    fn a_consistent_table_is_unchanged() {
        let (pi, pj) = ([0.25, 0.75], [0.5, 0.5]);
        let mut table = vec![0.25, 0.0, 0.25, 0.5];
        let (mut rows, mut cols) = (vec![0.0; 2], vec![0.0; 2]);
        fit_to_marginals(&mut table, (&pi, &pj), (&mut rows, &mut cols));
        assert_eq!(table, vec![0.25, 0.0, 0.25, 0.5]);
    }
}
