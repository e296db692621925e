//! The block-parallel mode: blocks of coordinate steps against private copies of `w`, summed and taken with
//! an exact dual line search (see the module docs of [`super`]).

use super::*;
use rand::seq::SliceRandom;

impl Dcd {
    /// One pass of the block-parallel mode (see the module docs).
    pub(super) fn step_blocks(&self, problem: &BinaryProblem<'_>, st: &mut DcdState) {
        use rayon::prelude::*;
        st.active.shuffle(&mut st.rng);
        let size = st.active.len().div_ceil(self.params.blocks).max(1);
        let shrinking = self.params.shrinking;
        let (w, alpha, qd, upper, diag) = (&st.w, &st.alpha, &st.qd, &st.upper, &st.diag);
        let (pg_max_old, pg_min_old) = (st.pg_max_old, st.pg_min_old);
        let results: Vec<BlockStep> = st
            .active
            .par_chunks(size)
            .map(|chunk| {
                let cx = PassContext {
                    problem,
                    alpha,
                    qd,
                    upper,
                    diag,
                    shrinking,
                    bounds: (pg_max_old, pg_min_old),
                };
                local_pass(&cx, chunk, w.clone())
            })
            .map(|(mut r, local)| {
                // Keep only the block's change of w, so the combination below is a plain sum.
                r.changes.shrink_to_fit();
                r.with_dw(local, w)
            })
            .collect();
        // The summed direction (dα, dw) and the exact step t ∈ [0, 1] that maximizes the dual along it:
        // D(α + t dα) = D(α) + t (Σ dα − ⟨w, dw⟩ − Σ D_ii α_i dα_i) − t²/2 (‖dw‖² + Σ D_ii dα_i²).
        let mut dw = vec![0.0; st.w.len()];
        let (mut lin, mut quad) = (0.0, 0.0);
        let mut active = Vec::with_capacity(st.active.len());
        let (mut pg_max, mut pg_min) = (f64::NEG_INFINITY, f64::INFINITY);
        for r in &results {
            for (s, v) in dw.iter_mut().zip(&r.dw) {
                *s += v;
            }
            for &(i, da) in &r.changes {
                lin += da - st.diag[i] * st.alpha[i] * da;
                quad += st.diag[i] * da * da;
            }
            active.extend_from_slice(&r.kept);
            pg_max = pg_max.max(r.pg_max);
            pg_min = pg_min.min(r.pg_min);
        }
        lin -= st.w.iter().zip(&dw).map(|(a, b)| a * b).sum::<f64>();
        quad += dw.iter().map(|v| v * v).sum::<f64>();
        let t = if quad > 0.0 {
            (lin / quad).clamp(0.0, 1.0)
        } else {
            1.0
        };
        for r in &results {
            for &(i, da) in &r.changes {
                st.alpha[i] = (st.alpha[i] + t * da).clamp(0.0, st.upper[i]);
            }
        }
        for (w, v) in st.w.iter_mut().zip(&dw) {
            *w += t * v;
        }
        st.visited += st.active.len() as u64;
        st.iteration += 1;
        st.active = active;
        self.end_pass(problem, st, pg_max, pg_min);
    }
}

/// What a block's coordinate steps read: the problem, the duals, their boxes and the shrinking bounds.
pub(super) struct PassContext<'a, 'p> {
    pub(super) problem: &'a BinaryProblem<'p>,
    pub(super) alpha: &'a [f64],
    pub(super) qd: &'a [f64],
    pub(super) upper: &'a [f64],
    pub(super) diag: &'a [f64],
    pub(super) shrinking: bool,
    pub(super) bounds: (f64, f64),
}

/// The ordinary coordinate steps over `chunk`'s examples against `local`, a private copy of `w`; returns
/// the steps taken and the moved copy.
pub(super) fn local_pass(
    cx: &PassContext<'_, '_>,
    chunk: &[usize],
    mut local: Vec<f64>,
) -> (BlockResult, Vec<f64>) {
    let (x, y) = (cx.problem.x(), cx.problem.y());
    let d = cx.problem.n_features();
    let feature = cx.problem.bias() == Bias::Feature;
    let mut r = BlockResult {
        changes: Vec::new(),
        kept: Vec::with_capacity(chunk.len()),
        pg_max: f64::NEG_INFINITY,
        pg_min: f64::INFINITY,
    };
    for &i in chunk {
        if cx.upper[i] == 0.0 {
            r.kept.push(i);
            continue;
        }
        let c = Coordinate {
            x: x.row(i),
            y: y[i],
            upper: cx.upper[i],
            diag: cx.diag[i],
            qd: cx.qd[i],
        };
        let a = cx.alpha[i];
        let Visit::Kept { pg, new, stepped } = visit(
            &mut local,
            (d, feature, 0.0),
            c,
            a,
            (cx.shrinking, cx.bounds),
        ) else {
            continue;
        };
        r.kept.push(i);
        r.pg_max = r.pg_max.max(pg);
        r.pg_min = r.pg_min.min(pg);
        if stepped {
            r.changes.push((i, new - a));
        }
    }
    (r, local)
}

/// What one block of the parallel mode did: its dual steps, the examples it keeps active, its change of `w`
/// and its projected-gradient range.
pub(super) struct BlockResult {
    pub(super) changes: Vec<(usize, f64)>,
    pub(super) kept: Vec<usize>,
    pub(super) pg_max: f64,
    pub(super) pg_min: f64,
}

/// A block's result with its change of `w` (`local − w`).
struct BlockStep {
    changes: Vec<(usize, f64)>,
    kept: Vec<usize>,
    dw: Vec<f64>,
    pg_max: f64,
    pg_min: f64,
}

impl BlockResult {
    fn with_dw(self, mut local: Vec<f64>, w: &[f64]) -> BlockStep {
        for (l, w) in local.iter_mut().zip(w) {
            *l -= w;
        }
        BlockStep {
            changes: self.changes,
            kept: self.kept,
            dw: local,
            pg_max: self.pg_max,
            pg_min: self.pg_min,
        }
    }
}
