//! DCD on rows read pass by pass: the same coordinate visit, shrinking, stopping test and gap target as in
//! memory, with the duals kept in the source's per-row column instead of a vector.
//!
//! **Passes.** Each pass visits the rows in the order the source chooses (a new one each pass), and only the
//! rows shrinking has not set aside: a shrunk row's column holds [`SHRUNK_AT_ZERO`] or [`SHRUNK_AT_UPPER`]
//! (shrinking only sets aside a dual at a bound, so the bound is all it keeps), and a source that can skip
//! such rows without decoding them does.
//!
//! **The working set in memory.** Shrinking soon leaves a small part of the rows active, and a pass that
//! reads the whole file for them costs far more than their steps. So when the rows still active after a
//! pass fit in [`StreamLimits::hold_bytes`] (the facade gives the size of one of the source's buckets, so
//! memory stays independent of the rows), the next pass copies them into memory as they are visited, their
//! column numbers becoming their places there ([`HELD`] and below), and the passes that follow are the
//! in-memory method's own ([`Dcd::sweep`], with its shrinking) until the stopping test reopens every row: the
//! reopening pass reads the file again, takes the held duals back into the column and lets go of the rows.
//!
//! **Stopping.** LIBLINEAR's test: the projected gradient's spread within ε on the rows still visited reopens
//! every row; within ε with none set aside, one certifying pass (no steps) values the primal at `w` and the
//! dual at `α`, and the run is converged when the relative gap is within the target, else ε is divided by 10
//! and every row reopens, as [`Dcd::with_gap_target`] does in memory. The budget's end is certified the same
//! way, so every run ends with the exact gap of the weights it returns.

use super::coordinate::{Coordinate, OPEN, Visit, box_and_diag, dot, visit};
use super::{Dcd, DcdState, MIN_EPSILON};
use crate::binary::stream::{RowPasses, StreamFit, StreamLimits, record};
use crate::error::OptimError;
use crate::problem::{Bias, BinaryLoss, BinaryProblem, LinearWeights};
use crate::trainer::Solver;
use crate::trainer::{Progress, StopReason, TraceRecord};
use maxmargin_core::objective::Lambda;
use maxmargin_core::vector::{SparseRows, norm_sq};
use std::time::Instant;

/// A row set aside at `α_i = 0`, as its column holds it.
pub(crate) const SHRUNK_AT_ZERO: f64 = -1.0;
/// A row set aside at `α_i = U_i`.
pub(crate) const SHRUNK_AT_UPPER: f64 = -2.0;
/// A row held in memory at place `k` has `HELD − k` in its column.
pub(crate) const HELD: f64 = -3.0;
/// What one held row costs beside its nonzeros (12 bytes each): its offset, target, weight, dual, box,
/// diagonal, `Q_ii` and place in the active list.
const HELD_ROW_BYTES: u64 = 64;

/// Rows being taken into memory during a pass, with their duals.
#[derive(Default)]
struct Taking {
    x: SparseRows,
    y: Vec<f64>,
    c: Vec<f64>,
    alpha: Vec<f64>,
}

/// The rows held in memory and the in-memory method's state over them (whose `w` is the run's while held).
struct Held {
    x: SparseRows,
    y: Vec<f64>,
    c: Vec<f64>,
    state: DcdState,
}

impl Held {
    /// The dual of the row whose column says `v` (`upper` its box).
    #[inline]
    fn dual(held: Option<&Self>, v: f64, upper: f64) -> f64 {
        if v >= 0.0 {
            v
        } else if v == SHRUNK_AT_UPPER {
            upper
        } else if v <= HELD {
            held.map_or(0.0, |h| h.state.alpha[(HELD - v) as usize])
        } else {
            0.0
        }
    }
}

/// Where a streamed run is between passes.
struct Streamed {
    /// `w` while no rows are held.
    w: Vec<f64>,
    held: Option<Held>,
    /// Shrinking's bounds from the last pass.
    bounds: (f64, f64),
    /// Rows whose column says they are set aside.
    n_shrunk: u64,
    /// Bytes the rows active after the last streamed pass would take in memory.
    active_bytes: u64,
    /// The next pass reads every row and turns set-aside and held numbers back into duals.
    reopen: bool,
    tightened: i32,
    /// Passes of steps (streamed or held), and the times rows were taken into memory.
    iteration: u64,
    holds: u64,
    /// Coordinate steps visited.
    visited: u64,
    /// Reads of the source, the certificates' included.
    passes: u64,
    /// The column has been written.
    filled: bool,
    trace: Vec<TraceRecord>,
}

/// What every pass of a run shares: the loss, `C = 1/(λn)`, the bias as a feature, `d`, `λ`, the bias, `n`.
#[derive(Clone, Copy)]
struct Geometry {
    loss: BinaryLoss,
    c_box: f64,
    feature: bool,
    d: usize,
    lambda: f64,
    bias: Bias,
    n: usize,
}

impl Dcd {
    /// Trains on `rows` at `λ` with the intercept and loss given (no unregularized intercept: its duals move
    /// in pairs) within `limits`: `max_epochs` counts coordinate steps / n as in memory, `max_steps` counts
    /// passes (one process's iterations), then seconds, the relative gap target, and a certificate every
    /// `eval_every` epochs (`u64::MAX`: only where the stopping test or the budget calls for one).
    ///
    /// # Errors
    /// A read error of the source, [`OptimError::NonFinite`].
    pub(crate) fn train_stream(
        &self,
        rows: &mut dyn RowPasses,
        lambda: f64,
        (bias, loss): (Bias, BinaryLoss),
        limits: &StreamLimits,
    ) -> Result<StreamFit, OptimError> {
        let started = Instant::now();
        let (n, d) = (rows.n_rows(), rows.n_features());
        let feature = bias == Bias::Feature;
        let at = Geometry {
            loss,
            c_box: maxmargin_core::objective::c_sum(lambda, n),
            feature,
            d,
            lambda,
            bias,
            n,
        };
        let mut st = Streamed {
            w: vec![0.0; d + usize::from(feature)],
            held: None,
            bounds: OPEN,
            n_shrunk: 0,
            active_bytes: u64::MAX,
            reopen: false,
            tightened: 0,
            iteration: 0,
            holds: 0,
            visited: 0,
            passes: 0,
            filled: false,
            trace: Vec::new(),
        };
        let mut dual = f64::NEG_INFINITY;
        // Coordinate steps at the last certificate: the next is due `eval_every` epochs later.
        let mut evaluated = 0u64;
        let every = (limits.eval_every as f64 * n as f64).min(u64::MAX as f64) as u64;
        loop {
            let budget = if st.visited as f64 >= limits.max_epochs * n as f64 {
                Some(StopReason::MaxEpochs)
            } else if st.iteration >= limits.max_steps {
                Some(StopReason::MaxIterations)
            } else {
                limits
                    .max_seconds
                    .is_some_and(|s| started.elapsed().as_secs_f64() >= s)
                    .then_some(StopReason::Time)
            };
            let passed = match budget {
                Some(_) => false,
                None if st.held.is_some() && !st.reopen => self.held_pass(&mut st, at)?,
                None => self.stream_pass(rows, &mut st, at, limits.hold_bytes)?,
            };
            if budget.is_none() && !passed && st.visited - evaluated < every {
                continue;
            }
            evaluated = st.visited;
            let (objective, bound) = certify(rows, &mut st, at)?;
            dual = dual.max(bound);
            let progress = Progress {
                iteration: st.iteration,
                epoch: st.visited as f64 / n as f64,
            };
            st.trace.push(record(started, objective, dual, progress)?);
            let relative = (objective - dual) / objective.abs().max(f64::MIN_POSITIVE);
            let epsilon = self.params.epsilon / 10f64.powi(st.tightened);
            let stop = if budget.is_some() {
                budget
            } else if passed && (relative <= limits.gap_tolerance || epsilon <= MIN_EPSILON) {
                Some(StopReason::Converged)
            } else if relative <= limits.gap_tolerance {
                Some(StopReason::Gap)
            } else {
                if passed {
                    st.tightened += 1;
                    st.reopen = true;
                    st.bounds = OPEN;
                }
                None
            };
            if let Some(stop) = stop {
                let mut w = match st.held {
                    Some(h) => h.state.w,
                    None => st.w,
                };
                let b = if feature { w[d] } else { 0.0 };
                w.truncate(d);
                return Ok(StreamFit {
                    output: LinearWeights { w, b },
                    objective,
                    dual,
                    stop,
                    progress,
                    trace: st.trace,
                    passes: st.passes,
                });
            }
        }
    }

    /// One pass of coordinate steps over the rows not set aside (every row when reopening, which also takes
    /// back the held rows' duals), taking the rows it keeps into memory when the last pass's fit in
    /// `hold_bytes`; returns whether LIBLINEAR's stopping test passed with no row set aside.
    fn stream_pass(
        &self,
        rows: &mut dyn RowPasses,
        st: &mut Streamed,
        at: Geometry,
        hold_bytes: u64,
    ) -> Result<bool, OptimError> {
        let reopen = st.reopen;
        let mut released = if reopen { st.held.take() } else { None };
        if let Some(h) = released.as_mut() {
            st.w = std::mem::take(&mut h.state.w);
        }
        let shape = (at.loss, at.c_box, at.feature);
        let shrink = (self.params.shrinking, st.bounds);
        let mut taken = (!reopen && st.active_bytes <= hold_bytes).then(Taking::default);
        let (mut pg_max, mut pg_min) = (f64::NEG_INFINITY, f64::INFINITY);
        let (mut visited, mut shrunk, mut kept_bytes) = (0u64, 0u64, 0u64);
        let w = &mut st.w;
        let keep = |v: f64| reopen || v >= 0.0;
        rows.pass_with_column_where(!st.filled, &keep, &mut |x, y, c, v| {
            visited += 1;
            let coordinate = Coordinate::of(x, y, c, shape);
            if coordinate.upper == 0.0 {
                // A zero-weight row has α_i = 0 for good.
                *v = 0.0;
                return Ok(());
            }
            let a = Held::dual(released.as_ref(), *v, coordinate.upper);
            match visit(w, (at.d, at.feature, 0.0), coordinate, a, shrink) {
                Visit::Shrunk => {
                    *v = if a == 0.0 {
                        SHRUNK_AT_ZERO
                    } else {
                        SHRUNK_AT_UPPER
                    };
                    shrunk += 1;
                }
                Visit::Kept { pg, new, .. } => {
                    pg_max = pg_max.max(pg);
                    pg_min = pg_min.min(pg);
                    kept_bytes += 12 * x.nnz() as u64 + HELD_ROW_BYTES;
                    *v = new;
                    if let Some(t) = taken.as_mut() {
                        *v = HELD - t.y.len() as f64;
                        t.x.push_row(x.indices(), x.values())
                            .map_err(OptimError::Core)?;
                        t.y.push(y);
                        t.c.push(c);
                        t.alpha.push(new);
                    }
                }
            }
            Ok(())
        })?;
        st.filled = true;
        st.passes += 1;
        st.iteration += 1;
        st.visited += visited;
        st.n_shrunk = if reopen { shrunk } else { st.n_shrunk + shrunk };
        st.active_bytes = kept_bytes;
        st.reopen = false;
        if let Some(t) = taken {
            st.holds += 1;
            st.held = Some(self.hold(t, st, at)?);
        }
        Ok(self.end_stream_pass(st, pg_max, pg_min, 0))
    }

    /// One pass of the in-memory method over the held rows; returns as [`Dcd::stream_pass`].
    fn held_pass(&self, st: &mut Streamed, at: Geometry) -> Result<bool, OptimError> {
        let Some(h) = st.held.as_mut() else {
            return Ok(false);
        };
        let problem = held_problem((&h.x, &h.y, &h.c), at)?;
        (h.state.pg_max_old, h.state.pg_min_old) = st.bounds;
        let before = h.state.visited;
        let (pg_max, pg_min) = self.sweep(&problem, &mut h.state);
        let set_aside = (h.y.len() - h.state.active.len()) as u64;
        st.visited += h.state.visited - before;
        st.iteration += 1;
        Ok(self.end_stream_pass(st, pg_max, pg_min, set_aside))
    }

    /// LIBLINEAR's end of a pass (see [`Dcd::end_pass`]): within ε with rows set aside (in the column or,
    /// `held_aside`, among the held ones) reopens them all; within ε with none passes the test; otherwise the
    /// pass's extremes become shrinking's bounds.
    fn end_stream_pass(
        &self,
        st: &mut Streamed,
        pg_max: f64,
        pg_min: f64,
        held_aside: u64,
    ) -> bool {
        let epsilon = self.params.epsilon / 10f64.powi(st.tightened);
        if pg_max - pg_min <= epsilon {
            st.bounds = OPEN;
            if st.n_shrunk + held_aside == 0 {
                return true;
            }
            st.reopen = true;
            return false;
        }
        st.bounds = super::coordinate::next_bounds(pg_max, pg_min);
        false
    }

    /// The rows taken into memory with the in-memory method's own state over them (its boxes, diagonals and
    /// `Q_ii` from [`Solver::init`] with the whole problem's `C`), their duals, the run's `w` and bounds, and
    /// an order of its own (the seed and the number of holds).
    fn hold(&self, t: Taking, st: &mut Streamed, at: Geometry) -> Result<Held, OptimError> {
        let Taking { mut x, y, c, alpha } = t;
        x.set_n_features_at_least(at.d);
        let mut dcd = *self;
        dcd.n_total = Some(at.n);
        dcd.params.seed ^= st.holds.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut state = dcd.init(&held_problem((&x, &y, &c), at)?)?;
        state.alpha = alpha;
        state.w = std::mem::take(&mut st.w);
        (state.pg_max_old, state.pg_min_old) = st.bounds;
        Ok(Held { x, y, c, state })
    }
}

/// The held rows as an in-memory problem.
fn held_problem<'a>(
    (x, y, c): (&'a SparseRows, &'a [f64], &'a [f64]),
    at: Geometry,
) -> Result<BinaryProblem<'a>, OptimError> {
    BinaryProblem::new(x, y, Lambda::new(at.lambda)?, at.bias)?
        .with_loss(at.loss)
        .with_example_weights(c)
}

/// The primal objective at `w` and the dual at the column's (and the held rows') `α`, from one pass that
/// takes no step: `λ/2‖w‖² + (1/n)Σ c_i ℓ_i` and `λ(Σα − ½‖w‖² − ½ Σ D_ii α_i²)`.
fn certify(
    rows: &mut dyn RowPasses,
    st: &mut Streamed,
    at: Geometry,
) -> Result<(f64, f64), OptimError> {
    let n = rows.n_rows() as f64;
    let (mut losses, mut total, mut quad) = (0.0, 0.0, 0.0);
    let held = st.held.as_ref();
    let w = held.map_or(&st.w, |h| &h.state.w);
    rows.pass_with_column_where(!st.filled, &|_| true, &mut |x, y, c, v| {
        losses += c * at.loss.value(y * dot(w, x, at.d, at.feature));
        let (upper, diag) = box_and_diag(at.loss, at.c_box * c);
        let a = Held::dual(held, *v, upper);
        total += a;
        quad += diag * a * a;
        Ok(())
    })?;
    let norm = norm_sq(w);
    st.filled = true;
    st.passes += 1;
    Ok((
        0.5 * at.lambda * norm + losses / n,
        at.lambda * (total - 0.5 * norm - 0.5 * quad),
    ))
}
