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
//! pass fit in [`RowStream::with_hold_bytes`] (the facade gives the size of one of the source's buckets, so
//! memory stays independent of the rows), the next pass copies them into memory as they are visited, their
//! column numbers becoming their places there ([`HELD`] and below), and the passes that follow are the
//! in-memory method's own ([`Dcd::sweep`], with its shrinking) until the stopping test reopens every row: the
//! reopening pass reads the file again, takes the held duals back into the column and lets go of the rows.
//!
//! **Stopping.** LIBLINEAR's test: the projected gradient's spread within ε on the rows still visited reopens
//! every row; within ε with none set aside, one certifying pass (no steps) values the primal at `w` and the
//! dual at `α`, and the run is converged when the relative gap is within the target, else ε is divided by 10
//! and every row reopens, as [`Dcd::with_gap_target`] does in memory. The trainer's evaluations (and the
//! budget's end) are certified the same way, so every run ends with the exact gap of the weights it returns.

use super::coordinate::{Coordinate, OPEN, Visit, box_and_diag, dot, visit};
use super::{Dcd, DcdState};
use crate::binary::stream::{RowStream, Streamed};
use crate::error::OptimError;
use crate::gap_target::{self, PassEnd};
use crate::problem::{Bias, BinaryLoss, BinaryProblem, LinearWeights};
use crate::trainer::{Certificate, Progress, Solver, StopReason};
use maxmargin_core::objective::Lambda;
use maxmargin_core::vector::{SparseRows, norm_sq};

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
#[derive(Debug, Clone, PartialEq)]
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

/// Streamed DCD between two passes.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamedDcd {
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
    tightened: u32,
    /// Passes of steps (streamed or held), and the times rows were taken into memory.
    iteration: u64,
    holds: u64,
    /// Coordinate steps visited.
    visited: u64,
    /// The column has been written.
    filled: bool,
    /// The stopping test passed at a certified gap within the target (or ε at its floor).
    converged: bool,
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

impl Geometry {
    fn of(problem: &RowStream<'_>) -> Self {
        Self {
            loss: problem.loss,
            c_box: maxmargin_core::objective::c_sum(problem.lambda, problem.n),
            feature: problem.bias == Bias::Feature,
            d: problem.d,
            lambda: problem.lambda,
            bias: problem.bias,
            n: problem.n,
        }
    }
}

/// DCD on a stream: no unregularized intercept (its duals move in pairs). An iteration is a pass (streamed
/// or held), epochs count coordinate steps / n as in memory; when a pass passes the stopping test the step
/// certifies it (one more read), and the run has converged when the gap is within the target.
impl<'a> Solver<RowStream<'a>> for Streamed<Dcd> {
    type State = StreamedDcd;
    type Output = LinearWeights;

    fn init(&mut self, problem: &RowStream<'a>) -> Result<StreamedDcd, OptimError> {
        if problem.bias == Bias::Unregularized {
            return Err(crate::error::invalid(
                "bias",
                "unregularized",
                "cannot be streamed by dcd (its duals would have to move in pairs); give feature or none",
            ));
        }
        if problem.loss == BinaryLoss::Logistic {
            return Err(crate::error::invalid(
                "loss",
                "logistic",
                "cannot be streamed yet; train in memory (without --stream)",
            ));
        }
        let feature = problem.bias == Bias::Feature;
        Ok(StreamedDcd {
            w: vec![0.0; problem.d + usize::from(feature)],
            held: None,
            bounds: OPEN,
            n_shrunk: 0,
            active_bytes: u64::MAX,
            reopen: false,
            tightened: 0,
            iteration: 0,
            holds: 0,
            visited: 0,
            filled: false,
            converged: false,
        })
    }

    fn step(&mut self, problem: &RowStream<'a>, st: &mut StreamedDcd) -> Result<(), OptimError> {
        let at = Geometry::of(problem);
        let dcd = self.solver();
        let passed = if st.held.is_some() && !st.reopen {
            dcd.held_pass(st, at)?
        } else {
            dcd.stream_pass(problem, st, at)?
        };
        if passed {
            let epsilon = gap_target::tightened(dcd.params.epsilon, st.tightened);
            let done = gap_target::accepts(dcd.gap_target, epsilon, || {
                let objective = self.objective(problem, st)?;
                let dual = problem.carried.borrow().certificate(objective).dual;
                Ok::<_, OptimError>((objective, objective - dual.unwrap_or(f64::NEG_INFINITY)))
            })?;
            if done {
                st.converged = true;
            } else {
                st.tightened += 1;
                st.reopen = true;
                st.bounds = OPEN;
            }
        }
        Ok(())
    }

    fn progress(&self, problem: &RowStream<'a>, st: &StreamedDcd) -> Progress {
        Progress {
            iteration: st.iteration,
            epoch: st.visited as f64 / problem.n as f64,
        }
    }

    fn output(&self, problem: &RowStream<'a>, st: &StreamedDcd) -> LinearWeights {
        let d = problem.d;
        let w = st.held.as_ref().map_or(&st.w, |h| &h.state.w);
        let b = if problem.bias == Bias::Feature {
            w[d]
        } else {
            0.0
        };
        LinearWeights {
            w: w[..d].to_vec(),
            b,
        }
    }

    /// The primal at `w` and the dual at the column's (and the held rows') `α`, from one pass that takes no
    /// step (none when asked again at the same point).
    fn objective(&self, problem: &RowStream<'a>, st: &StreamedDcd) -> Result<f64, OptimError> {
        let p = self.progress(problem, st);
        if let Some(objective) = problem.carried.borrow().at(p) {
            return Ok(objective);
        }
        let (objective, bound) = certify(problem, st, Geometry::of(problem))?;
        problem.carried.borrow_mut().keep(p, objective, bound);
        Ok(objective)
    }

    fn certificate(
        &self,
        problem: &RowStream<'a>,
        _st: &StreamedDcd,
        objective: f64,
    ) -> Result<Certificate, OptimError> {
        Ok(problem.carried.borrow().certificate(objective))
    }

    fn stop(&self, st: &StreamedDcd) -> Option<StopReason> {
        st.converged.then_some(StopReason::Converged)
    }
}

impl Dcd {
    /// One pass of coordinate steps over the rows not set aside (every row when reopening, which also takes
    /// back the held rows' duals), taking the rows it keeps into memory when the last pass's fit in
    /// `hold_bytes`; returns whether LIBLINEAR's stopping test passed with no row set aside.
    fn stream_pass(
        &self,
        problem: &RowStream<'_>,
        st: &mut StreamedDcd,
        at: Geometry,
    ) -> Result<bool, OptimError> {
        let hold_bytes = problem.hold_bytes;
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
        problem.pass_with_column_where(!st.filled, &keep, &mut |x, y, c, v| {
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
    fn held_pass(&self, st: &mut StreamedDcd, at: Geometry) -> Result<bool, OptimError> {
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
        st: &mut StreamedDcd,
        pg_max: f64,
        pg_min: f64,
        held_aside: u64,
    ) -> bool {
        let epsilon = gap_target::tightened(self.params.epsilon, st.tightened);
        let set_aside = st.n_shrunk + held_aside > 0;
        match gap_target::end_of_pass(pg_max, pg_min, epsilon, set_aside) {
            PassEnd::Shrink(bounds) => {
                st.bounds = bounds;
                false
            }
            PassEnd::Reopen => {
                st.bounds = OPEN;
                st.reopen = true;
                false
            }
            PassEnd::Passed => {
                st.bounds = OPEN;
                true
            }
        }
    }

    /// The rows taken into memory with the in-memory method's own state over them (its boxes, diagonals and
    /// `Q_ii` from [`Solver::init`] with the whole problem's `C`), their duals, the run's `w` and bounds, and
    /// an order of its own (the seed and the number of holds).
    fn hold(&self, t: Taking, st: &mut StreamedDcd, at: Geometry) -> Result<Held, OptimError> {
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
    problem: &RowStream<'_>,
    st: &StreamedDcd,
    at: Geometry,
) -> Result<(f64, f64), OptimError> {
    let n = at.n as f64;
    let (mut losses, mut total, mut quad) = (0.0, 0.0, 0.0);
    let held = st.held.as_ref();
    let w = held.map_or(&st.w, |h| &h.state.w);
    problem.pass_with_column_where(!st.filled, &|_| true, &mut |x, y, c, v| {
        losses += c * at.loss.value(y * dot(w, x, at.d, at.feature));
        let (upper, diag) = box_and_diag(at.loss, at.c_box * c);
        let a = Held::dual(held, *v, upper);
        total += a;
        quad += diag * a * a;
        Ok(())
    })?;
    let norm = norm_sq(w);
    Ok((
        0.5 * at.lambda * norm + losses / n,
        at.lambda * (total - 0.5 * norm - 0.5 * quad),
    ))
}
