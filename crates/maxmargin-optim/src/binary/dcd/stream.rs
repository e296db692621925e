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
use super::{Dcd, DcdState, logistic};
use crate::binary::stream::{RowStream, Streamed};
use crate::error::{OptimError, all_finite, fits};
use crate::gap_target::{self, PassEnd};
use crate::problem::{Bias, BinaryLoss, BinaryProblem, LinearWeights};
use crate::trainer::{Certificate, Progress, Solver, StopReason};
use maxmargin_core::objective::Lambda;
use maxmargin_core::vector::{SparseRows, norm_sq};
use serde::{Deserialize, Serialize};

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
    /// The logistic duals' complements (empty for the hinges).
    rest: Vec<f64>,
}

/// The rows held in memory and the in-memory method's state over them (whose `w` is the run's while held).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
            held.and_then(|h| h.state.alpha.get((HELD - v) as usize))
                .copied()
                .unwrap_or(0.0)
        } else {
            0.0
        }
    }

    /// The logistic dual and its complement `(α_i, U_i − α_i)` of the row whose column says `v` (`upper` its
    /// box): `v > 0` is `α_i` (kept when it is the smaller), `v ∈ (−1, 0)` is `−(U_i − α_i)/U_i` (the
    /// complement kept, relative to the box, so that a complement far below `U_i` keeps its digits), a held
    /// row's are the held state's, and `0` is a row not visited yet (`α_i = 0`, the start's closure).
    #[inline]
    fn logistic_duals(held: Option<&Self>, v: f64, upper: f64) -> (f64, f64) {
        if v > 0.0 {
            (v, upper - v)
        } else if v <= HELD {
            let k = (HELD - v) as usize;
            held.and_then(|h| Some((*h.state.alpha.get(k)?, *h.state.rest.get(k)?)))
                .unwrap_or((0.0, upper))
        } else if v < 0.0 && v > SHRUNK_AT_ZERO {
            let r = -v * upper;
            (upper - r, r)
        } else {
            (0.0, upper)
        }
    }
}

/// The column's number for the logistic dual `a` and its complement `r` in a box `upper` (see
/// [`Held::logistic_duals`]): the smaller of the two.
#[inline]
fn logistic_column(a: f64, r: f64, upper: f64) -> f64 {
    if a <= r {
        a
    } else {
        -(r / upper).max(f64::MIN_POSITIVE)
    }
}

/// Streamed DCD between two passes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

    /// The budget's gap tolerance becomes DCD's target when none was set, as in memory.
    fn set_budget(&mut self, budget: &crate::Budget) {
        Streamed::set_budget(self, budget);
        self.solver_mut().gap_target.adopt(budget);
    }

    fn init(&mut self, problem: &RowStream<'a>) -> Result<StreamedDcd, OptimError> {
        if problem.bias == Bias::Unregularized {
            return Err(crate::error::invalid(
                "bias",
                "unregularized",
                "cannot be streamed by dcd (its duals would have to move in pairs); give feature or none",
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

    /// `w`'s length and values (empty while rows are held: the held state has the run's `w`, which the
    /// in-memory method's check covers), and the held rows as the in-memory method checks its state over
    /// them.
    fn check_state(&self, problem: &RowStream<'a>, st: &StreamedDcd) -> Result<(), OptimError> {
        let at = Geometry::of(problem);
        let len = if st.held.is_some() {
            0
        } else {
            at.d + usize::from(at.feature)
        };
        fits(st.w.len() == len && all_finite(&st.w), "w")?;
        fits(!st.bounds.0.is_nan() && !st.bounds.1.is_nan(), "the bounds")?;
        if let Some(h) = &st.held {
            fits(
                h.x.is_valid() && h.x.n_rows() == h.y.len() && h.x.n_features() == at.d,
                "the held rows",
            )?;
            let problem = held_problem((&h.x, &h.y, &h.c), at)?;
            let mut dcd = *self.solver();
            dcd.n_total = Some(at.n);
            dcd.check_state(&problem, &h.state)?;
        }
        Ok(())
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
            let done = gap_target::accepts(dcd.gap_target.get(), epsilon, || {
                let objective = self.objective(problem, st)?;
                let dual = problem.carried.borrow().certificate(objective).dual;
                Ok::<_, OptimError>((objective, objective - dual.unwrap_or(f64::NEG_INFINITY)))
            })?;
            if done {
                st.converged = true;
            } else {
                st.tightened += 1;
                st.reopen = true;
                if problem.loss != BinaryLoss::Logistic {
                    // Shrinking starts again; a logistic run keeps its inner Newton tolerance.
                    st.bounds = OPEN;
                }
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
        let (objective, bound) =
            problem.certifying(|| certify(problem, st, Geometry::of(problem)))?;
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
        let logistic = at.loss == BinaryLoss::Logistic;
        let mut taken = (!reopen && st.active_bytes <= hold_bytes).then(Taking::default);
        let (mut pg_max, mut pg_min) = (f64::NEG_INFINITY, f64::INFINITY);
        let (mut visited, mut shrunk, mut kept_bytes) = (0u64, 0u64, 0u64);
        // The largest change one logistic step made to any weight (see `logistic::CANCELLATION`).
        let mut largest_move = 0.0f64;
        let w = &mut st.w;
        let keep = |v: f64| reopen || v >= 0.0 || (logistic && v > SHRUNK_AT_ZERO);
        let layout = (at.d, at.feature, 0.0);
        problem.pass_with_column_where(!st.filled, &keep, &mut |x, y, c, v| {
            visited += 1;
            let coordinate = Coordinate::of(x, y, c, shape);
            if coordinate.upper == 0.0 {
                // A zero-weight row has α_i = 0 for good.
                *v = 0.0;
                return Ok(());
            }
            let (visit, rest) = if logistic {
                let (mut a, mut r) = Held::logistic_duals(released.as_ref(), *v, coordinate.upper);
                if a == 0.0 {
                    // A row not visited yet starts inside its box, as in memory.
                    (a, r) = (logistic::start_of(coordinate.upper), coordinate.upper);
                    r -= a;
                    logistic::add_row(w, layout, coordinate, a);
                }
                let (visit, r_new) = logistic::visit(w, layout, coordinate, (a, r), st.bounds.0);
                if let Visit::Kept { new, .. } = visit {
                    largest_move = largest_move.max((new - a).abs() * coordinate.qd.sqrt());
                }
                (visit, r_new)
            } else {
                let a = Held::dual(released.as_ref(), *v, coordinate.upper);
                match visit(w, layout, coordinate, a, shrink) {
                    Visit::Shrunk => {
                        *v = if a == 0.0 {
                            SHRUNK_AT_ZERO
                        } else {
                            SHRUNK_AT_UPPER
                        };
                        shrunk += 1;
                        return Ok(());
                    }
                    kept => (kept, 0.0),
                }
            };
            let Visit::Kept { pg, new, .. } = visit else {
                unreachable!("a shrunk row has returned")
            };
            pg_max = pg_max.max(pg);
            pg_min = pg_min.min(pg);
            kept_bytes += 12 * x.nnz() as u64 + HELD_ROW_BYTES;
            *v = if logistic {
                logistic_column(new, rest, coordinate.upper)
            } else {
                new
            };
            if let Some(t) = taken.as_mut() {
                *v = HELD - t.y.len() as f64;
                t.x.push_row(x.indices(), x.values())
                    .map_err(OptimError::Core)?;
                t.y.push(y);
                t.c.push(c);
                t.alpha.push(new);
                if logistic {
                    t.rest.push(rest);
                }
            }
            Ok(())
        })?;
        let cancelled = logistic && logistic::cancelled(w, largest_move);
        if cancelled && taken.is_none() {
            sum_column_weights(problem, w, at)?;
        }
        st.filled = true;
        st.iteration += 1;
        st.visited += visited;
        st.n_shrunk = if reopen { shrunk } else { st.n_shrunk + shrunk };
        st.active_bytes = kept_bytes;
        st.reopen = false;
        if let Some(t) = taken {
            st.holds += 1;
            st.held = Some(self.hold(t, st, at, cancelled)?);
        }
        Ok(self.end_stream_pass(st, (pg_max, pg_min), 0, logistic))
    }

    /// One pass of the in-memory method over the held rows; returns as [`Dcd::stream_pass`].
    fn held_pass(&self, st: &mut StreamedDcd, at: Geometry) -> Result<bool, OptimError> {
        let Some(h) = st.held.as_mut() else {
            return Ok(false);
        };
        let problem = held_problem((&h.x, &h.y, &h.c), at)?;
        (h.state.pg_max_old, h.state.pg_min_old) = st.bounds;
        let before = h.state.visited;
        let extremes = self.sweep(&problem, &mut h.state);
        let set_aside = (h.y.len() - h.state.active.len()) as u64;
        st.visited += h.state.visited - before;
        st.iteration += 1;
        let logistic = at.loss == BinaryLoss::Logistic;
        Ok(self.end_stream_pass(st, extremes, set_aside, logistic))
    }

    /// LIBLINEAR's end of a pass (see [`Dcd::end_pass`]): within ε with rows set aside (in the column or,
    /// `held_aside`, among the held ones) reopens them all; within ε with none passes the test; otherwise the
    /// pass's extremes become shrinking's bounds.
    fn end_stream_pass(
        &self,
        st: &mut StreamedDcd,
        (pg_max, pg_min): (f64, f64),
        held_aside: u64,
        logistic: bool,
    ) -> bool {
        let epsilon = gap_target::tightened(self.params.epsilon, st.tightened);
        if logistic {
            // Nothing shrinks: the test is the largest |G_i|, which sets the next pass's inner tolerance
            // (as in memory, `Dcd::end_pass`).
            let largest = logistic::largest(pg_max, pg_min);
            st.bounds = (largest, -largest);
            return largest <= epsilon;
        }
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
    ///
    /// A logistic run holds every row it can move (nothing shrinks), so when the pass's running sum
    /// `cancelled` its digits away, `w` is summed again from the held duals.
    fn hold(
        &self,
        t: Taking,
        st: &mut StreamedDcd,
        at: Geometry,
        cancelled: bool,
    ) -> Result<Held, OptimError> {
        let Taking {
            mut x,
            y,
            c,
            alpha,
            rest,
        } = t;
        x.set_n_features_at_least(at.d);
        let mut dcd = *self;
        dcd.n_total = Some(at.n);
        dcd.params.seed ^= st.holds.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let problem = held_problem((&x, &y, &c), at)?;
        let mut state = dcd.init(&problem)?;
        state.alpha = alpha;
        if at.loss == BinaryLoss::Logistic {
            state.rest = rest;
        }
        state.w = std::mem::take(&mut st.w);
        if cancelled {
            super::sum_weights(&problem, &state.alpha, &mut state.w);
        }
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
/// takes no step: `λ/2‖w‖² + (1/n)Σ c_i ℓ_i` and `λ(Σα − ½‖w‖² − ½ Σ D_ii α_i²)`, or for the logistic loss
/// `λ(Σ U_i H(α_i/U_i) − ½‖w‖²)`.
fn certify(
    problem: &RowStream<'_>,
    st: &StreamedDcd,
    at: Geometry,
) -> Result<(f64, f64), OptimError> {
    let n = at.n as f64;
    let (mut losses, mut total, mut quad) = (0.0, 0.0, 0.0);
    let held = st.held.as_ref();
    let w = held.map_or(&st.w, |h| &h.state.w);
    let logistic = at.loss == BinaryLoss::Logistic;
    problem.pass_with_column_where(!st.filled, &|_| true, &mut |x, y, c, v| {
        losses += c * at.loss.value(y * dot(w, x, at.d, at.feature));
        let (upper, diag) = box_and_diag(at.loss, at.c_box * c);
        if logistic {
            let (a, r) = Held::logistic_duals(held, *v, upper);
            total += logistic::entropy_of(a, r, upper);
        } else {
            let a = Held::dual(held, *v, upper);
            total += a;
            quad += diag * a * a;
        }
        Ok(())
    })?;
    let norm = norm_sq(w);
    Ok((
        0.5 * at.lambda * norm + losses / n,
        at.lambda * (total - 0.5 * norm - 0.5 * quad),
    ))
}

/// `w = Σ α_i y_i x̃_i` summed again from the column's logistic duals (one pass, no step), after a step whose
/// move cancelled the running sum's digits away (as `logistic::rebuild_after_cancellation` in memory).
fn sum_column_weights(
    problem: &RowStream<'_>,
    w: &mut [f64],
    at: Geometry,
) -> Result<(), OptimError> {
    w.iter_mut().for_each(|v| *v = 0.0);
    problem.pass_with_column_where(false, &|_| true, &mut |x, y, c, v| {
        let (upper, _) = box_and_diag(at.loss, at.c_box * c);
        let (a, _) = Held::logistic_duals(None, *v, upper);
        if a != 0.0 {
            x.axpy(a * y, &mut w[..at.d]);
            if at.feature {
                w[at.d] += a * y;
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 24: the column keeps a logistic dual's complement relative to its box, so a complement far
    /// below the box (a row far on the wrong side) comes back with its digits, not rounded to the box's.
    #[test]
    fn a_logistic_complement_far_below_its_box_comes_back_from_the_column_with_its_digits() {
        for upper in [1e-6, 0.37, 1.0, 3.0, 1e9] {
            for fraction in [1e-300, 1e-40, 1e-17, 1e-3, 0.3, 0.5] {
                let r = fraction * upper;
                let a = upper - r;
                let (a_back, r_back) =
                    Held::logistic_duals(None, logistic_column(a, r, upper), upper);
                assert!(
                    (r_back - r).abs() <= 4.0 * f64::EPSILON * r,
                    "{upper} {fraction}: {r_back} vs {r}"
                );
                assert!((a_back - a).abs() <= 4.0 * f64::EPSILON * a);
                // The smaller dual is kept as it is.
                let (small, rest) = Held::logistic_duals(None, logistic_column(r, a, upper), upper);
                assert_eq!(small, r);
                assert!((rest - a).abs() <= 4.0 * f64::EPSILON * a);
            }
        }
        // Never a number the column gives another meaning (a set-aside or held row).
        for v in [
            logistic_column(1.0, 1e-320, 1.0),
            logistic_column(2.0, 1.0, 3.0),
        ] {
            assert!(v < 0.0 && v > SHRUNK_AT_ZERO, "{v}");
        }
    }
}
