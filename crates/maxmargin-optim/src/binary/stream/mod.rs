//! Training on rows read pass by pass (data larger than memory). The source is a problem like the rows in
//! memory ([`RowStream`]), and [`Streamed`] runs Pegasos, the batch subgradient method or DCD on it under
//! the [`Trainer`](crate::Trainer): the loop, budgets, trace, tolerance, best-iterate and gap stops are the
//! in-memory run's. A streamed step is a pass (for Pegasos, a pass of its steps, stopped inside the pass
//! where the budget's steps, passes or seconds end).
//!
//! Memory is `O(d)`: the weights, the subgradient or the averaging sums, one batch of rows, and the dual
//! bound's weights. Pegasos visits the rows in their stored order (the source shuffled them once, by the
//! seed), which is its cyclic sampling; the step itself is [`Pegasos`](crate::Pegasos)'s own. The batch subgradient
//! method takes one step per pass, as in memory.
//!
//! **The certificate** is [`dual_bound`](crate::dcd::dual_bound)'s, out of core: one pass computes the
//! primal objective and the duals `α_i = U_i` inside the margin (0 outside), writing them to a per-row
//! column the source keeps on disk; they are balanced between the classes when the intercept is
//! unregularized and scaled by the best `t ∈ [0, 1]`; then `polish` passes of dual coordinate descent
//! read and rewrite the column. Any dual-feasible point bounds the optimum from below, so the best bound
//! seen in a run is kept and `objective − bound` is a true gap. (With an unregularized intercept the
//! duals cannot move one at a time, so that bound is not polished and is looser.) An evaluation asked
//! twice at one point (the trainer's last, after a stop at an evaluation) reads nothing the second time.

use super::guess::MarginDuals;
use crate::dcd::coordinate::{Coordinate, OPEN, Visit, visit};
use crate::error::{OptimError, invalid};
use crate::problem::{Bias, BinaryLoss, LinearWeights};
use crate::trainer::{Budget, Progress};
use maxmargin_core::hinge::hinge;
use maxmargin_core::vector::{SparseRow, norm_sq};
use std::cell::{Cell, RefCell};
use std::time::Instant;

mod place;
mod solvers;
pub(crate) use place::{Carried, certifying};
pub use place::{Placed, Resumable, SourcePlace, StreamPlace};
pub use solvers::StreamedPegasos;

/// What a pass hands each row to: `(x_i, y_i = ±1, c_i)`.
pub type RowVisit<'a> = dyn FnMut(SparseRow<'_>, f64, f64) -> Result<(), OptimError> + 'a;
/// What a pass with a column hands each row to: `(x_i, y_i, c_i, the row's number)`.
pub type ColumnVisit<'a> =
    dyn FnMut(SparseRow<'_>, f64, f64, &mut f64) -> Result<(), OptimError> + 'a;
/// Rows read pass by pass, `(x_i, y_i = ±1, c_i)`, each pass in the order the source chooses (the same
/// row keeps its column number whatever the order).
pub trait RowPasses: Resumable {
    /// Rows `n`.
    fn n_rows(&self) -> usize;
    /// Features `d` (indices below it).
    fn n_features(&self) -> usize;
    /// Hands every row to `row`, in the stored order.
    ///
    /// # Errors
    /// A read error of the source, or what `row` returns.
    fn pass(&mut self, row: &mut RowVisit<'_>) -> Result<(), OptimError>;
    /// Like [`RowPasses::pass`], with one number per row kept beside the rows (0 for every row when `reset`):
    /// `row` may change it, and the next such pass sees the change.
    ///
    /// # Errors
    /// As [`RowPasses::pass`].
    fn pass_with_column(
        &mut self,
        reset: bool,
        row: &mut ColumnVisit<'_>,
    ) -> Result<(), OptimError>;
    /// Like [`RowPasses::pass_with_column`], handing `row` only the rows whose number satisfies `keep` and
    /// leaving the others' numbers as they are: a source that can skip reading or decoding those rows
    /// should (streamed DCD's passes visit only the coordinates shrinking has not set aside).
    ///
    /// # Errors
    /// As [`RowPasses::pass`].
    fn pass_with_column_where(
        &mut self,
        reset: bool,
        keep: &dyn Fn(f64) -> bool,
        row: &mut ColumnVisit<'_>,
    ) -> Result<(), OptimError> {
        self.pass_with_column(reset, &mut |x, y, c, v| {
            if keep(*v) { row(x, y, c, v) } else { Ok(()) }
        })
    }
}

/// The budget's counts and end inside a step that is a pass (see [`Streamed`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct PassLimits {
    max_iterations: Option<u64>,
    max_epochs: Option<f64>,
    deadline: Option<Instant>,
}

/// Steps between two looks at the clock inside a pass.
pub(crate) const CLOCK_EVERY: u64 = 1024;

impl PassLimits {
    /// Whether the budget ends after a step inside a pass: its steps, its passes, or (looking at the clock
    /// every [`CLOCK_EVERY`] steps) its time, by the trainer's own tests.
    pub(crate) fn reached(&self, steps: u64, epochs: f64) -> bool {
        self.max_iterations.is_some_and(|m| steps >= m)
            || self.max_epochs.is_some_and(|m| epochs >= m - 1e-12)
            || (steps.is_multiple_of(CLOCK_EVERY)
                && self.deadline.is_some_and(|d| Instant::now() >= d))
    }
}

/// A solver run on a streamed source ([`RowStream`], or
/// [`ExampleStream`](crate::structural::ssg_stream::ExampleStream) for SSG): every step is a pass over the
/// source, and evaluations are certificates computed in passes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Streamed<S> {
    solver: S,
    pub(crate) limits: PassLimits,
}

impl<S> Streamed<S> {
    /// `solver` on a stream.
    pub fn new(solver: S) -> Self {
        Self {
            solver,
            limits: PassLimits::default(),
        }
    }

    /// The solver.
    pub fn solver(&self) -> &S {
        &self.solver
    }

    pub(crate) fn solver_mut(&mut self) -> &mut S {
        &mut self.solver
    }

    /// What the trainer's budget says about steps inside a pass.
    pub(crate) fn set_budget(&mut self, budget: &Budget) {
        self.limits.max_iterations = budget.max_iterations;
        self.limits.max_epochs = budget.max_epochs;
    }

    /// The trainer's deadline, for steps inside a pass.
    pub(crate) fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.limits.deadline = deadline;
    }
}

/// A streamed solver's evaluations on `$problem` (whose `certify(progress, output)` values the output and
/// keeps its bound): the objective, the best bound as its certificate, and the budget and deadline for steps
/// inside a pass.
macro_rules! streamed_reports {
    ($problem:ty) => {
        fn objective(&self, problem: &$problem, s: &Self::State) -> Result<f64, OptimError> {
            problem.certify(self.progress(problem, s), || self.output(problem, s))
        }

        fn certificate(
            &self,
            problem: &$problem,
            _s: &Self::State,
            objective: f64,
        ) -> Result<Certificate, OptimError> {
            Ok(problem.carried.borrow().certificate(objective))
        }

        fn set_budget(&mut self, budget: &Budget) {
            Streamed::set_budget(self, budget);
        }

        fn set_deadline(&mut self, deadline: Option<Instant>) {
            Streamed::set_deadline(self, deadline);
        }
    };
}
pub(crate) use streamed_reports;

/// Rows read pass by pass as a problem: `λ/2 (‖w‖² [+ b²]) + (1/n)Σ c_i ℓ(y_i(⟨w, x_i⟩ + b))` over a
/// [`RowPasses`] source, the certificate's state beside it. The source is read by one pass at a time.
pub struct RowStream<'a> {
    rows: RefCell<&'a mut dyn RowPasses>,
    pub(crate) lambda: f64,
    pub(crate) bias: Bias,
    pub(crate) loss: BinaryLoss,
    pub(crate) n: usize,
    pub(crate) d: usize,
    polish: usize,
    pub(crate) hold_bytes: u64,
    pub(crate) carried: RefCell<Carried>,
    passes: Cell<u64>,
}

impl<'a> RowStream<'a> {
    /// The problem at `λ` with the intercept and loss given over `rows`; no certificate polishing, no rows
    /// held in memory.
    ///
    /// # Errors
    /// [`OptimError::NoExamples`] for no rows; an invalid `λ`.
    pub fn new(
        rows: &'a mut dyn RowPasses,
        lambda: f64,
        bias: Bias,
        loss: BinaryLoss,
    ) -> Result<Self, OptimError> {
        let (n, d) = (rows.n_rows(), rows.n_features());
        if n == 0 {
            return Err(OptimError::NoExamples);
        }
        if !(lambda.is_finite() && lambda > 0.0) {
            return Err(invalid("lambda", lambda, "must be finite and > 0"));
        }
        Ok(Self {
            rows: RefCell::new(rows),
            lambda,
            bias,
            loss,
            n,
            d,
            polish: 0,
            hold_bytes: 0,
            carried: RefCell::new(Carried::new()),
            passes: Cell::new(0),
        })
    }

    /// Dual coordinate descent passes that tighten each certificate of Pegasos and the batch subgradient
    /// method.
    #[must_use]
    pub fn with_polish(mut self, passes: usize) -> Self {
        self.polish = passes;
        self
    }

    /// Streamed DCD holds the rows still active in memory once they fit in this many bytes (0: never).
    #[must_use]
    pub fn with_hold_bytes(mut self, bytes: u64) -> Self {
        self.hold_bytes = bytes;
        self
    }

    /// Rows `n`.
    pub fn n_rows(&self) -> usize {
        self.n
    }

    /// Passes over the source so far, the certificates' included.
    pub fn passes(&self) -> u64 {
        self.passes.get()
    }

    /// The best certified lower bound on the optimum so far.
    pub fn best_bound(&self) -> f64 {
        self.carried.borrow().best
    }

    /// `f`, a certificate's passes, leaving the training passes' orders as they were (see `certifying`).
    pub(crate) fn certifying<T>(
        &self,
        f: impl FnOnce() -> Result<T, OptimError>,
    ) -> Result<T, OptimError> {
        place::certifying(&self.rows, f)
    }

    /// One pass (see [`RowPasses::pass`]).
    pub(crate) fn pass(&self, row: &mut RowVisit<'_>) -> Result<(), OptimError> {
        self.passes.set(self.passes.get() + 1);
        self.rows.borrow_mut().pass(row)
    }

    /// One pass with the column (see [`RowPasses::pass_with_column_where`]).
    pub(crate) fn pass_with_column_where(
        &self,
        reset: bool,
        keep: &dyn Fn(f64) -> bool,
        row: &mut ColumnVisit<'_>,
    ) -> Result<(), OptimError> {
        self.passes.set(self.passes.get() + 1);
        self.rows
            .borrow_mut()
            .pass_with_column_where(reset, keep, row)
    }

    /// Refuses a loss other than the hinge for `solver`.
    fn require_hinge(&self, solver: &'static str) -> Result<(), OptimError> {
        if self.loss == BinaryLoss::Hinge {
            Ok(())
        } else {
            Err(invalid(
                solver,
                "squared-hinge",
                "supports the hinge loss only; use dcd",
            ))
        }
    }

    /// `λ/2 (‖w‖² [+ b²]) + loss/n`.
    fn objective_from(&self, w: &LinearWeights, loss: f64) -> f64 {
        let extra = if self.bias == Bias::Feature {
            w.b * w.b
        } else {
            0.0
        };
        0.5 * self.lambda * (norm_sq(&w.w) + extra) + loss / self.n as f64
    }

    /// The primal objective of `w` at `p`, certified by a dual bound kept when better than the best so far;
    /// asked again at the same `p`, the objective evaluated then. The first certificate starts the duals
    /// from `w`'s margins (one pass, which also gives the objective); later ones take one pass for the
    /// objective and continue the duals where the last certificate left them, so the bound tightens over a
    /// run. Then `polish` passes of coordinate descent.
    fn certify(&self, p: Progress, w: impl FnOnce() -> LinearWeights) -> Result<f64, OptimError> {
        if let Some(objective) = self.carried.borrow().at(p) {
            return Ok(objective);
        }
        self.certifying(|| self.certify_at(p, w()))
    }

    fn certify_at(&self, p: Progress, w: LinearWeights) -> Result<f64, OptimError> {
        let (lambda, bias, d) = (self.lambda, self.bias, self.d);
        let feature = bias == Bias::Feature;
        let carried = self.carried.borrow_mut().duals.take();
        let (objective, mut scale, mut bound, mut wa) = match carried {
            Some(wa) if bias != Bias::Unregularized => {
                let mut loss = 0.0;
                self.pass(&mut |x, y, c| {
                    loss += c * hinge(y * (x.dot(&w.w) + w.b));
                    Ok(())
                })?;
                (
                    self.objective_from(&w, loss),
                    [1.0, 1.0],
                    f64::NEG_INFINITY,
                    wa,
                )
            }
            _ => {
                let mut sums = MarginDuals::new(lambda, self.n, d, bias);
                self.pass_with_column_where(true, &|_| true, &mut |x, y, c, alpha| {
                    *alpha = sums.add(x, y, c, &w);
                    Ok(())
                })?;
                let g = sums.finish(bias);
                let objective = self.objective_from(&w, g.loss);
                (objective, g.factor, lambda * g.dual_c, g.wa)
            }
        };
        let polish = if bias == Bias::Unregularized {
            0
        } else {
            self.polish
        };
        let shape = (
            BinaryLoss::Hinge,
            maxmargin_core::objective::c_sum(lambda, self.n),
            feature,
        );
        for _ in 0..polish {
            let mut total = 0.0;
            self.pass_with_column_where(false, &|_| true, &mut |x, y, c, alpha| {
                let old = *alpha * scale[usize::from(y > 0.0)];
                let coordinate = Coordinate::of(x, y, c, shape);
                let new = match visit(&mut wa, (d, feature, 0.0), coordinate, old, NO_SHRINKING) {
                    Visit::Kept { new, .. } => new,
                    Visit::Shrunk => old,
                };
                *alpha = new;
                total += new;
                Ok(())
            })?;
            scale = [1.0, 1.0];
            bound = bound.max(lambda * (total - 0.5 * norm_sq(&wa)));
        }
        let mut carried = self.carried.borrow_mut();
        carried.duals = Some(wa);
        carried.keep(p, objective, bound);
        Ok(objective)
    }
}

impl Placed for RowStream<'_> {
    fn place(&self) -> Result<StreamPlace, OptimError> {
        StreamPlace::of(&self.passes, &self.carried, &self.rows)
    }

    /// Checks the certificate's duals' length, and one number per row in the column, each a dual or one of
    /// streamed DCD's codes.
    fn restore(&self, place: StreamPlace) -> Result<(), OptimError> {
        let len = self.d + usize::from(self.bias == Bias::Feature);
        place.restore((len, Some(self.n)), &self.passes, &self.carried, &self.rows)
    }
}

/// A visit that never sets a coordinate aside.
const NO_SHRINKING: (bool, (f64, f64)) = (false, OPEN);
