//! The unregularized intercept: the outer search over `b` and the pair steps that finish it (see the module
//! docs of [`super`]).

use super::*;

/// Inner tolerance while searching an unregularized intercept, and the bracket width that ends the search.
pub(super) const OUTER_INNER_EPSILON: f64 = 1e-2;
const OUTER_BRACKET: f64 = 1e-4;

impl Dcd {
    /// `−y_i G_i = y_i (1 − D_ii α_i) − ⟨w, x_i⟩` for every example (the bias-free margin terms).
    fn minus_y_grad(problem: &BinaryProblem<'_>, st: &DcdState, i: usize) -> f64 {
        let y = problem.y()[i];
        y * (1.0 - st.diag[i] * st.alpha[i]) - problem.x().row(i).dot(&st.w)
    }

    /// `I_up` (α_i can move so that `y_i α_i` grows) and `I_low` (so that it shrinks), LIBSVM's sets.
    fn up_low(y: f64, a: f64, upper: f64) -> (bool, bool) {
        let (below, above) = (a < upper, a > 0.0);
        if y > 0.0 {
            (below, above)
        } else {
            (above, below)
        }
    }

    /// The intercept for an unregularized bias: `−y_i G_i` averaged over free examples, else the middle of the
    /// violating range.
    pub(super) fn unregularized_bias(problem: &BinaryProblem<'_>, st: &DcdState) -> f64 {
        let (mut sum, mut free) = (0.0, 0usize);
        let (mut m, mut big_m) = (f64::NEG_INFINITY, f64::INFINITY);
        for i in 0..problem.n_samples() {
            if st.upper[i] == 0.0 {
                continue;
            }
            let v = Self::minus_y_grad(problem, st, i);
            let a = st.alpha[i];
            if a > 0.0 && a < st.upper[i] {
                sum += v;
                free += 1;
            }
            let (up, low) = Self::up_low(problem.y()[i], a, st.upper[i]);
            if up {
                m = m.max(v);
            }
            if low {
                big_m = big_m.min(v);
            }
        }
        if free > 0 {
            sum / free as f64
        } else if m.is_finite() && big_m.is_finite() {
            0.5 * (m + big_m)
        } else {
            0.0
        }
    }

    /// One pass of pair steps for the unregularized bias (see the module docs).
    pub(super) fn step_pairs(&self, problem: &BinaryProblem<'_>, st: &mut DcdState) {
        let (x, y) = (problem.x(), problem.y());
        let n = problem.n_samples();
        // −y G at the pass's start, and LIBSVM's sets.
        let v: Vec<f64> = (0..n).map(|i| Self::minus_y_grad(problem, st, i)).collect();
        let (mut up, mut low): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
        for i in (0..n).filter(|&i| st.upper[i] > 0.0) {
            let (u, l) = Self::up_low(y[i], st.alpha[i], st.upper[i]);
            if u {
                up.push(i);
            }
            if l {
                low.push(i);
            }
        }
        st.visited += n as u64;
        st.iteration += 1;
        let m = up.iter().map(|&i| v[i]).fold(f64::NEG_INFINITY, f64::max);
        let big_m = low.iter().map(|&i| v[i]).fold(f64::INFINITY, f64::min);
        if m - big_m <= self.epsilon(st) && self.accept(problem, st) {
            st.converged = true;
            return;
        }
        // The most violating pairs first: I_up by v descending against I_low by v ascending, each example
        // in at most one pair, while the pair still violates.
        up.sort_by(|&a, &b| v[b].total_cmp(&v[a]).then(a.cmp(&b)));
        low.sort_by(|&a, &b| v[a].total_cmp(&v[b]).then(a.cmp(&b)));
        let mut used = vec![false; n];
        let mut pairs = Vec::new();
        let (mut a, mut b) = (0, 0);
        while a < up.len() && b < low.len() {
            let (i, j) = (up[a], low[b]);
            if used[i] {
                a += 1;
                continue;
            }
            if used[j] || i == j {
                b += 1;
                continue;
            }
            if v[i] - v[j] <= 0.0 {
                break;
            }
            used[i] = true;
            used[j] = true;
            pairs.push((i, j));
            a += 1;
            b += 1;
        }
        for (i, j) in pairs {
            let (xi, xj) = (x.row(i), x.row(j));
            let (vi, vj) = (
                Self::minus_y_grad(problem, st, i),
                Self::minus_y_grad(problem, st, j),
            );
            let curvature = (st.qd[i] - st.diag[i]) + (st.qd[j] - st.diag[j])
                - 2.0 * xi.dot_sparse(&xj)
                + st.diag[i]
                + st.diag[j];
            // The dual along α_i += y_i δ, α_j −= y_j δ has slope v_i − v_j and curvature as above; where
            // the curvature vanishes (two empty rows, or two equal ones) it is linear, and rises to the
            // box's end (LIBSVM's τ-guard would take a huge step to the same place).
            let mut delta = if curvature > 0.0 {
                (vi - vj) / curvature
            } else if vi > vj {
                f64::INFINITY
            } else {
                continue;
            };
            // α_i + y_i δ ∈ [0, U_i] and α_j − y_j δ ∈ [0, U_j].
            let (lo_i, hi_i) = if y[i] > 0.0 {
                (-st.alpha[i], st.upper[i] - st.alpha[i])
            } else {
                (st.alpha[i] - st.upper[i], st.alpha[i])
            };
            let (lo_j, hi_j) = if y[j] > 0.0 {
                (st.alpha[j] - st.upper[j], st.alpha[j])
            } else {
                (-st.alpha[j], st.upper[j] - st.alpha[j])
            };
            delta = delta.clamp(lo_i.max(lo_j), hi_i.min(hi_j));
            if delta == 0.0 {
                continue;
            }
            st.alpha[i] = (st.alpha[i] + y[i] * delta).clamp(0.0, st.upper[i]);
            st.alpha[j] = (st.alpha[j] - y[j] * delta).clamp(0.0, st.upper[j]);
            xi.axpy(delta, &mut st.w);
            xj.axpy(-delta, &mut st.w);
        }
    }

    /// The outer search over an unregularized intercept, at an inner optimum for the current `b` (see the
    /// module docs). Returns `true` when `|s| ≤ ε·C`; otherwise moves `b`, or, once the bracket has closed
    /// on a jump of `s`, balances the duals and hands over to the pair steps, and returns `false`.
    pub(super) fn settle_bias(&self, problem: &BinaryProblem<'_>, st: &mut DcdState) -> bool {
        let s: f64 = st.alpha.iter().zip(problem.y()).map(|(a, y)| a * y).sum();
        // The squared hinge's box is unbounded: its duals' scale is C (times the largest example weight).
        let box_max = st.upper.iter().copied().fold(0.0, f64::max);
        let scale = if box_max.is_finite() {
            box_max
        } else {
            let most = (0..problem.n_samples())
                .map(|i| problem.weight(i))
                .fold(0.0, f64::max);
            Self::c(problem) * most
        };
        if s.abs() <= self.epsilon(st) * scale {
            return true;
        }
        if s > 0.0 {
            st.below = Some((st.b, s));
        } else {
            st.above = Some((st.b, s));
        }
        st.b = match (st.below, st.above) {
            (Some((lo, s_lo)), Some((hi, s_hi))) => {
                if (hi - lo).abs() <= OUTER_BRACKET * (1.0 + st.b.abs()) {
                    // s jumps here (examples on the margin can take any dual in their box): the pair steps
                    // finish from balanced duals, which they keep balanced.
                    let (alpha, w) = Self::balanced(problem, st);
                    st.alpha = alpha;
                    st.w = w;
                    st.pairs = true;
                    return false;
                }
                let t = (s_lo / (s_lo - s_hi)).clamp(0.1, 0.9);
                lo + t * (hi - lo)
            }
            (Some((lo, _)), None) => {
                st.b_step *= 2.0;
                lo + st.b_step / 2.0
            }
            (None, Some((hi, _))) => {
                st.b_step *= 2.0;
                hi - st.b_step / 2.0
            }
            (None, None) => st.b,
        };
        false
    }

    /// Duals with `Σ α_i y_i = 0`, the heavier class scaled down (still in the box), and their `w`.
    pub(super) fn balanced(problem: &BinaryProblem<'_>, st: &DcdState) -> (Vec<f64>, Vec<f64>) {
        let y = problem.y();
        let (pos, neg) =
            st.alpha.iter().zip(y).fold(
                (0.0, 0.0),
                |(p, n), (a, y)| {
                    if *y > 0.0 { (p + a, n) } else { (p, n + a) }
                },
            );
        let (heavy, factor) = if pos > neg {
            (1.0, if pos > 0.0 { neg / pos } else { 1.0 })
        } else {
            (-1.0, if neg > 0.0 { pos / neg } else { 1.0 })
        };
        let mut alpha = st.alpha.clone();
        let mut w = st.w.clone();
        for (i, a) in alpha.iter_mut().enumerate() {
            if y[i] == heavy && *a != 0.0 {
                problem.x().row(i).axpy(-(1.0 - factor) * *a * y[i], &mut w);
                *a *= factor;
            }
        }
        (alpha, w)
    }
}
