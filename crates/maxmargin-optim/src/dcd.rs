//! Dual coordinate descent for L2-regularized SVMs with the hinge (L1) or squared hinge (L2) loss (Hsieh, Chang,
//! Lin, Keerthi, Sundararajan 2008). For the squared hinge the box is `[0, ∞)` and `Q` gains `1/(2C)` on its
//! diagonal; everything else is the same.
//!
//! In LIBLINEAR's C-form the dual is `min_α ½αᵀQα − eᵀα`, `0 ≤ α_i ≤ C`, `Q_ij = y_i y_j ⟨x_i, x_j⟩`, with
//! `w = Σ α_i y_i x_i`; here `C = 1/(λn)` so the primal is the λ-form `λ/2‖w‖² + (1/n)Σ hinge` (which is `λ`
//! times the C-form one). Each outer iteration visits the active examples in a fresh seeded permutation and
//! sets `α_i ← clip(α_i − G_i/Q_ii, 0, C)` with `G_i = y_i⟨w, x_i⟩ − 1`, updating `w` in `O(nnz(x_i))`.
//! Shrinking drops examples whose projected gradient says they stay at a bound; the stopping test is
//! LIBLINEAR's: the spread of the projected gradient over all examples below `epsilon`. The duality gap is
//! exact and reported (the trainer can stop on it: `Budget::gap_tolerance`). The bias is a regularized
//! constant feature (LIBLINEAR's `-B 1`); an unregularized bias would add an equality constraint to the dual
//! and is not supported.
//!
//! **Blocks (all cores).** With `blocks = B > 1` each pass splits the seeded permutation of the active examples
//! into `B` fixed blocks and runs the ordinary coordinate steps of every block at once, each against its own
//! copy of `w`. The block steps are then summed into one direction `(dα, dw)` and taken with the step
//! `t ∈ [0, 1]` that maximizes the dual along it, which is exact because the dual is quadratic:
//! `t = (Σ dα_i − ⟨w, dw⟩ − Σ D_ii α_i dα_i) / (‖dw‖² + Σ D_ii dα_i²)`, clipped. Every block's steps raise the
//! dual, so the sum is an ascent direction and the dual rises every pass; blocks that barely interact give
//! `t ≈ 1` (`B` passes' worth of progress in one), blocks that pull `w` the same way give `t ≈ 1/B`.
//! This is CoCoA's combination (Jaggi et al. 2014, Ma et al. 2015) with the step chosen by line search
//! instead of the safe `1/B`. Shrinking works per block with the previous pass's bounds. The blocks depend
//! on the seed and `B` only, never on the number of threads, so the weights are the same bits on one core
//! or many.
//!
//! **Warm start.** [`Dcd::warm_state`] starts from a previous dual (clipped into the new box, `w` rebuilt from
//! it), e.g. the solution at a smaller `C` on a regularization path.

use crate::error::{OptimError, invalid};
use crate::problem::{Bias, BinaryLoss, BinaryProblem, LinearWeights};
use crate::trainer::{Certificate, Progress, Solver, StopReason};
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Unchecked DCD parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DcdParams {
    /// Stop when the projected gradient's spread `max PG − min PG` is below this (LIBLINEAR's `-e`, 0.1).
    pub epsilon: f64,
    /// Shrink examples that stay at a bound.
    pub shrinking: bool,
    /// The seed of the permutations.
    pub seed: u64,
    /// Blocks updated in parallel per pass (1: the sequential method). The result depends on this and the
    /// seed, not on the number of threads.
    #[serde(default = "one")]
    pub blocks: usize,
}

fn one() -> usize {
    1
}

impl Default for DcdParams {
    fn default() -> Self {
        Self {
            epsilon: 0.1,
            shrinking: true,
            seed: 0,
            blocks: 1,
        }
    }
}

impl DcdParams {
    /// Checks the parameters.
    ///
    /// # Errors
    /// [`OptimError::InvalidParam`] for a bad ε.
    pub fn check(self) -> Result<Dcd, OptimError> {
        if !(self.epsilon.is_finite() && self.epsilon > 0.0) {
            return Err(invalid(
                "epsilon",
                self.epsilon,
                "must be positive and finite",
            ));
        }
        if self.blocks == 0 {
            return Err(invalid("blocks", 0, "must be at least 1"));
        }
        Ok(Dcd { params: self })
    }
}

/// Checked DCD.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dcd {
    params: DcdParams,
}

/// DCD state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DcdState {
    /// Outer iterations.
    pub iteration: u64,
    /// Coordinate updates visited (for passes = visited / n).
    pub visited: u64,
    w: Vec<f64>,
    alpha: Vec<f64>,
    qd: Vec<f64>,
    upper: Vec<f64>,
    diag: Vec<f64>,
    active: Vec<usize>,
    pg_max_old: f64,
    pg_min_old: f64,
    rng: ChaCha8Rng,
    converged: bool,
}

impl DcdState {
    /// The dual variables `α` (C-form, `0 ≤ α_i ≤ c_i C`).
    pub fn alpha(&self) -> &[f64] {
        &self.alpha
    }
}

impl Dcd {
    /// A state that starts from the dual `alpha` (for example the solution at a smaller `C`), clipped into
    /// this problem's box, with `w = Σ α_i y_i x_i` rebuilt from it.
    ///
    /// # Errors
    /// [`OptimError::LengthMismatch`] when `alpha` has not one entry per example, or as [`Solver::init`].
    pub fn warm_state(
        &mut self,
        problem: &BinaryProblem<'_>,
        alpha: &[f64],
    ) -> Result<DcdState, OptimError> {
        if alpha.len() != problem.n_samples() {
            return Err(OptimError::LengthMismatch {
                rows: problem.n_samples(),
                targets: alpha.len(),
            });
        }
        let mut st = self.init(problem)?;
        let d = problem.n_features();
        let feature = problem.bias() == Bias::Feature;
        for (i, &a) in alpha.iter().enumerate() {
            let a = if a.is_finite() {
                a.clamp(0.0, st.upper[i])
            } else {
                0.0
            };
            if a != 0.0 {
                st.alpha[i] = a;
                let delta = a * problem.y()[i];
                problem.x().row(i).axpy(delta, &mut st.w[..d]);
                if feature {
                    st.w[d] += delta;
                }
            }
        }
        Ok(st)
    }

    /// One pass of the block-parallel mode (see the module docs).
    fn step_blocks(&self, problem: &BinaryProblem<'_>, st: &mut DcdState) {
        use rayon::prelude::*;
        let (x, y) = (problem.x(), problem.y());
        let d = problem.n_features();
        let feature = problem.bias() == Bias::Feature;
        st.active.shuffle(&mut st.rng);
        let size = st.active.len().div_ceil(self.params.blocks).max(1);
        let shrinking = self.params.shrinking;
        let (w, alpha, qd, upper, diag) = (&st.w, &st.alpha, &st.qd, &st.upper, &st.diag);
        let (pg_max_old, pg_min_old) = (st.pg_max_old, st.pg_min_old);
        let results: Vec<BlockStep> = st
            .active
            .par_chunks(size)
            .map(|chunk| {
                let mut local = w.clone();
                let mut r = BlockResult {
                    changes: Vec::new(),
                    kept: Vec::with_capacity(chunk.len()),
                    pg_max: f64::NEG_INFINITY,
                    pg_min: f64::INFINITY,
                };
                for &i in chunk {
                    if upper[i] == 0.0 {
                        r.kept.push(i);
                        continue;
                    }
                    let row = x.row(i);
                    let a = alpha[i];
                    let g = y[i] * dot(&local, row, d, feature) - 1.0 + diag[i] * a;
                    let pg = if a == 0.0 {
                        if shrinking && g > pg_max_old {
                            continue;
                        }
                        g.min(0.0)
                    } else if a == upper[i] {
                        if shrinking && g < pg_min_old {
                            continue;
                        }
                        g.max(0.0)
                    } else {
                        g
                    };
                    r.kept.push(i);
                    r.pg_max = r.pg_max.max(pg);
                    r.pg_min = r.pg_min.min(pg);
                    if pg.abs() > 1e-12 && qd[i] > 0.0 {
                        let new = (a - g / qd[i]).clamp(0.0, upper[i]);
                        let delta = (new - a) * y[i];
                        r.changes.push((i, new - a));
                        row.axpy(delta, &mut local[..d]);
                        if feature {
                            local[d] += delta;
                        }
                    }
                }
                (r, local)
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

    /// LIBLINEAR's end-of-pass test: stop when the projected gradient's spread is below ε on every example;
    /// on a shrunk set, check everything again first.
    fn end_pass(&self, problem: &BinaryProblem<'_>, st: &mut DcdState, pg_max: f64, pg_min: f64) {
        if pg_max - pg_min <= self.params.epsilon {
            if st.active.len() == problem.n_samples() {
                st.converged = true;
                return;
            }
            st.active = (0..problem.n_samples()).collect();
            st.pg_max_old = f64::INFINITY;
            st.pg_min_old = f64::NEG_INFINITY;
            return;
        }
        st.pg_max_old = if pg_max > 0.0 { pg_max } else { f64::INFINITY };
        st.pg_min_old = if pg_min < 0.0 {
            pg_min
        } else {
            f64::NEG_INFINITY
        };
    }

    /// `C = 1/(λn)`.
    fn c(problem: &BinaryProblem<'_>) -> f64 {
        1.0 / (problem.lambda() * problem.n_samples() as f64)
    }

    /// The box `U_i` and the diagonal `D_ii` of example `i` with weight `c_i`: `(c_i C, 0)` for the hinge,
    /// `(∞, 1/(2 c_i C))` for the squared hinge. A zero weight gives `(0, 0)`: the example is left out.
    fn box_and_diag(problem: &BinaryProblem<'_>, i: usize) -> (f64, f64) {
        let c = Self::c(problem) * problem.weight(i);
        if c == 0.0 {
            return (0.0, 0.0);
        }
        match problem.loss() {
            BinaryLoss::Hinge => (c, 0.0),
            BinaryLoss::SquaredHinge => (f64::INFINITY, 0.5 / c),
        }
    }
}

/// What one block of the parallel mode did: its dual steps, the examples it keeps active, its change of `w`
/// and its projected-gradient range.
struct BlockResult {
    changes: Vec<(usize, f64)>,
    kept: Vec<usize>,
    pg_max: f64,
    pg_min: f64,
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

/// `⟨w, x_i⟩` with the constant feature at index `d` when the bias is a feature.
fn dot(w: &[f64], x: maxmargin_core::vector::SparseRow<'_>, d: usize, feature: bool) -> f64 {
    let s = x.dot(&w[..d]);
    if feature { s + w[d] } else { s }
}

impl<'a> Solver<BinaryProblem<'a>> for Dcd {
    type State = DcdState;
    type Output = LinearWeights;

    fn init(&mut self, problem: &BinaryProblem<'a>) -> Result<DcdState, OptimError> {
        if problem.bias() == Bias::Unregularized {
            return Err(invalid(
                "bias",
                "unregularized",
                "is not supported by dual coordinate descent; use feature or none",
            ));
        }
        let feature = problem.bias() == Bias::Feature;
        let (n, d) = (problem.n_samples(), problem.n_features());
        let (upper, diag): (Vec<f64>, Vec<f64>) =
            (0..n).map(|i| Self::box_and_diag(problem, i)).unzip();
        let qd = problem
            .x()
            .rows()
            .zip(&diag)
            .map(|(r, dg)| r.norm_sq() + if feature { 1.0 } else { 0.0 } + dg)
            .collect();
        Ok(DcdState {
            iteration: 0,
            visited: 0,
            w: vec![0.0; d + usize::from(feature)],
            alpha: vec![0.0; n],
            qd,
            upper,
            diag,
            active: (0..n).collect(),
            pg_max_old: f64::INFINITY,
            pg_min_old: f64::NEG_INFINITY,
            rng: crate::random::rng(self.params.seed),
            converged: false,
        })
    }

    fn step(&mut self, problem: &BinaryProblem<'a>, st: &mut DcdState) -> Result<(), OptimError> {
        let (x, y) = (problem.x(), problem.y());
        let d = problem.n_features();
        let feature = problem.bias() == Bias::Feature;
        if self.params.blocks > 1 {
            self.step_blocks(problem, st);
            return Ok(());
        }
        st.active.shuffle(&mut st.rng);
        let (mut pg_max, mut pg_min) = (f64::NEG_INFINITY, f64::INFINITY);
        let mut k = 0;
        while k < st.active.len() {
            let i = st.active[k];
            st.visited += 1;
            // Touch the next example's row and dual now, so their cache misses overlap with this step
            // (the order is random; a prefetch without `unsafe`).
            if let Some(&next) = st.active.get(k + 1) {
                let r = x.row(next);
                std::hint::black_box((
                    r.indices().first(),
                    r.values().first(),
                    st.alpha[next],
                    st.qd[next],
                ));
            }
            let row = x.row(i);
            let (upper, diag) = (st.upper[i], st.diag[i]);
            if upper == 0.0 {
                // A zero-weight example has α_i = 0 for good.
                k += 1;
                continue;
            }
            let a = st.alpha[i];
            let g = y[i] * dot(&st.w, row, d, feature) - 1.0 + diag * a;
            let mut pg = 0.0;
            if a == 0.0 {
                if self.params.shrinking && g > st.pg_max_old {
                    st.active.swap_remove(k);
                    continue;
                }
                if g < 0.0 {
                    pg = g;
                }
            } else if a == upper {
                if self.params.shrinking && g < st.pg_min_old {
                    st.active.swap_remove(k);
                    continue;
                }
                if g > 0.0 {
                    pg = g;
                }
            } else {
                pg = g;
            }
            pg_max = pg_max.max(pg);
            pg_min = pg_min.min(pg);
            if pg.abs() > 1e-12 && st.qd[i] > 0.0 {
                let new = (a - g / st.qd[i]).clamp(0.0, upper);
                let delta = (new - a) * y[i];
                st.alpha[i] = new;
                row.axpy(delta, &mut st.w[..d]);
                if feature {
                    st.w[d] += delta;
                }
            }
            k += 1;
        }
        st.iteration += 1;
        self.end_pass(problem, st, pg_max, pg_min);
        Ok(())
    }

    fn progress(&self, problem: &BinaryProblem<'a>, st: &DcdState) -> Progress {
        Progress {
            iteration: st.iteration,
            epoch: st.visited as f64 / problem.n_samples() as f64,
        }
    }

    fn output(&self, problem: &BinaryProblem<'a>, st: &DcdState) -> LinearWeights {
        let d = problem.n_features();
        let b = if problem.bias() == Bias::Feature {
            st.w[d]
        } else {
            0.0
        };
        LinearWeights {
            w: st.w[..d].to_vec(),
            b,
        }
    }

    fn objective(&self, problem: &BinaryProblem<'a>, st: &DcdState) -> f64 {
        problem.objective(&self.output(problem, st))
    }

    fn certificate(
        &self,
        problem: &BinaryProblem<'a>,
        st: &DcdState,
        objective: f64,
    ) -> Certificate {
        // D_C(α) = Σα − ½‖w‖² − ½ D Σα², and the λ-form dual is λ·D_C.
        let norm: f64 = st.w.iter().map(|v| v * v).sum();
        let quad: f64 = st.alpha.iter().zip(&st.diag).map(|(a, d)| d * a * a).sum();
        let dual = problem.lambda() * (st.alpha.iter().sum::<f64>() - 0.5 * norm - 0.5 * quad);
        Certificate {
            dual: Some(dual),
            gap: Some(objective - dual),
            active_constraints: Some(st.active.len()),
            oracle_calls: None,
        }
    }

    fn stop(&self, st: &DcdState) -> Option<StopReason> {
        st.converged.then_some(StopReason::Converged)
    }
}
