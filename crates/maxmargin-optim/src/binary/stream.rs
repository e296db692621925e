//! Training on rows read pass by pass (data larger than memory): Pegasos and the batch subgradient method
//! over a [`RowPasses`] source, certified by a dual bound built in passes too.
//!
//! Memory is `O(d)`: the weights, the subgradient or the averaging sums, one batch of rows, and the dual
//! bound's weights. Pegasos visits the rows in their stored order (the source shuffled them once, by the
//! seed), which is its cyclic sampling; the step itself is [`Pegasos`]'s own. The batch subgradient
//! method takes one step per pass, as in memory.
//!
//! **The certificate** is [`dual_bound`](crate::dcd::dual_bound)'s, out of core: one pass computes the
//! primal objective and the duals `α_i = U_i` inside the margin (0 outside), writing them to a per-row
//! column the source keeps on disk; they are balanced between the classes when the intercept is
//! unregularized and scaled by the best `t ∈ [0, 1]`; then `polish` passes of dual coordinate descent
//! read and rewrite the column. Any dual-feasible point bounds the optimum from below, so the best bound
//! seen in a run is kept and `objective − bound` is a true gap. (With an unregularized intercept the
//! duals cannot move one at a time, so that bound is not polished and is looser.)

use super::guess::MarginDuals;
use super::pegasos::Geometry;
use crate::dcd::coordinate::{Coordinate, OPEN, Visit, visit};
use crate::error::OptimError;
use crate::problem::{Bias, BinaryLoss, LinearWeights};
use crate::subgradient::PassSums;
use crate::trainer::{Progress, StopReason, TraceRecord};
use crate::{Dcd, Pegasos, Subgradient};
use maxmargin_core::hinge::hinge;
use maxmargin_core::vector::{SparseRow, SparseRows, norm_sq};
use std::time::Instant;

/// What a pass hands each row to: `(x_i, y_i = ±1, c_i)`.
pub type RowVisit<'a> = dyn FnMut(SparseRow<'_>, f64, f64) -> Result<(), OptimError> + 'a;
/// What a pass with a column hands each row to: `(x_i, y_i, c_i, the row's number)`.
pub type ColumnVisit<'a> =
    dyn FnMut(SparseRow<'_>, f64, f64, &mut f64) -> Result<(), OptimError> + 'a;

/// Rows read pass by pass, `(x_i, y_i = ±1, c_i)`, each pass in the order the source chooses (the same
/// row keeps its column number whatever the order).
pub trait RowPasses {
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

/// A streamed solver.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StreamSolver {
    /// Dual coordinate descent, the duals kept in a column on disk (the hinge or the squared hinge; no
    /// unregularized intercept), with shrinking, ε and the gap target as in memory.
    Dcd(Dcd),
    /// Pegasos over the stored order.
    Pegasos(Pegasos),
    /// The batch subgradient method, a step per pass.
    Subgradient(Subgradient),
}

/// When a streamed run stops and how it is certified.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StreamLimits {
    /// Training passes (for the subgradient method, steps).
    pub max_epochs: f64,
    /// Pegasos steps.
    pub max_steps: u64,
    /// Seconds.
    pub max_seconds: Option<f64>,
    /// Stop when the certified gap is at most this times `|objective|`.
    pub gap_tolerance: f64,
    /// Certify every this many training passes (and at the end); for DCD, every this many epochs of
    /// coordinate steps (a pass over the rows shrinking leaves is less than one).
    pub eval_every: u64,
    /// Dual coordinate descent passes that tighten each certificate.
    pub polish: usize,
    /// Streamed DCD holds the rows still active in memory once they fit in this many bytes (the source's
    /// bucket, so memory stays independent of the rows; 0: never).
    pub hold_bytes: u64,
}

/// What a streamed run ends with.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamFit<O = LinearWeights> {
    /// The weights (DCD's best certified iterate, Pegasos' or SSG's average or last iterate, the subgradient
    /// method's best).
    pub output: O,
    /// Their primal objective.
    pub objective: f64,
    /// The best certified lower bound on the optimum.
    pub dual: f64,
    /// Why it stopped.
    pub stop: StopReason,
    /// Steps and training passes.
    pub progress: Progress,
    /// One record per certificate.
    pub trace: Vec<TraceRecord>,
    /// Passes over the source, the certificates' included.
    pub passes: u64,
}

impl<O> StreamFit<O> {
    /// `objective − dual`.
    pub fn gap(&self) -> f64 {
        self.objective - self.dual
    }
}

/// Trains `solver` on `rows` at `λ` with the intercept `bias` (the hinge loss) within `limits`.
///
/// # Errors
/// A read error of the source, [`OptimError::NoExamples`] for no rows, or an invalid limit.
pub fn train_stream(
    solver: &StreamSolver,
    rows: &mut dyn RowPasses,
    lambda: f64,
    (bias, loss): (Bias, BinaryLoss),
    limits: &StreamLimits,
) -> Result<StreamFit, OptimError> {
    let name = match solver {
        StreamSolver::Dcd(_) => "dcd",
        StreamSolver::Pegasos(_) => "pegasos",
        StreamSolver::Subgradient(_) => "subgradient",
    };
    if loss != BinaryLoss::Hinge && name != "dcd" {
        return Err(crate::error::invalid(
            name,
            "squared-hinge",
            "supports the hinge loss only; use dcd",
        ));
    }
    if bias == Bias::Unregularized && name == "dcd" {
        return Err(crate::error::invalid(
            "bias",
            "unregularized",
            "cannot be streamed by dcd (its duals would have to move in pairs); give feature or none",
        ));
    }
    let at = Geometry {
        lambda,
        bias,
        n: rows.n_rows(),
        d: rows.n_features(),
    };
    if at.n == 0 {
        return Err(OptimError::NoExamples);
    }
    if limits.eval_every == 0 {
        return Err(crate::error::invalid("eval_every", 0, "must be at least 1"));
    }
    if !(lambda.is_finite() && lambda > 0.0) {
        return Err(crate::error::invalid(
            "lambda",
            lambda,
            "must be finite and > 0",
        ));
    }
    let run = Run {
        rows,
        at,
        limits,
        started: Instant::now(),
        dual: f64::NEG_INFINITY,
        duals: None,
        trace: Vec::new(),
        passes: 0,
    };
    match solver {
        StreamSolver::Dcd(dcd) => dcd.train_stream(run.rows, lambda, (bias, loss), limits),
        StreamSolver::Pegasos(p) => run.pegasos(p),
        StreamSolver::Subgradient(s) => run.subgradient(s),
    }
}

struct Run<'r> {
    rows: &'r mut dyn RowPasses,
    at: Geometry,
    limits: &'r StreamLimits,
    started: Instant,
    dual: f64,
    /// `w(α)` of the duals in the column (scaled as the last certificate left them to be).
    duals: Option<Vec<f64>>,
    trace: Vec<TraceRecord>,
    passes: u64,
}

/// A visit that never sets a coordinate aside.
const NO_SHRINKING: (bool, (f64, f64)) = (false, OPEN);

/// Rows between two looks at the clock.
pub(crate) const CLOCK_EVERY: u64 = 1024;

impl Run<'_> {
    fn out_of_time(&self) -> bool {
        self.limits
            .max_seconds
            .is_some_and(|s| self.started.elapsed().as_secs_f64() >= s)
    }

    fn record(&mut self, objective: f64, progress: Progress) -> Result<(), OptimError> {
        let r = record(self.started, objective, self.dual, progress)?;
        self.trace.push(r);
        Ok(())
    }

    fn pegasos(mut self, pegasos: &Pegasos) -> Result<StreamFit, OptimError> {
        let Geometry { n, d, bias, .. } = self.at;
        let k = pegasos.params().batch_size;
        let mut st = pegasos.init_streamed(n, d, bias);
        let mut batch = SparseRows::new();
        let (mut ys, mut cs) = (Vec::with_capacity(k), Vec::with_capacity(k));
        let mut epochs = 0u64;
        let limits = *self.limits;
        loop {
            let mut stop = None;
            let started = self.started;
            self.rows.pass(&mut |x, y, c| {
                if stop.is_some() {
                    return Ok(());
                }
                batch
                    .push_row(x.indices(), x.values())
                    .map_err(OptimError::Core)?;
                ys.push(y);
                cs.push(c);
                let i = st.sampler.next_index();
                st.last.push((i, 0.0));
                if ys.len() < k {
                    return Ok(());
                }
                pegasos.advance(&mut st, self.at, |m, _| (batch.row(m), ys[m], cs[m]));
                batch.clear();
                ys.clear();
                cs.clear();
                st.last.clear();
                stop = limits.after_step(st.sampler.epochs(), st.t, started);
                Ok(())
            })?;
            self.passes += 1;
            epochs += 1;
            let stop = stop.or_else(|| self.out_of_time().then_some(StopReason::Time));
            if stop.is_some() || epochs.is_multiple_of(limits.eval_every) {
                let output = pegasos.weights(&st, d, bias);
                let progress = Progress {
                    iteration: st.t,
                    epoch: st.sampler.epochs(),
                };
                let objective = self.certify(&output, progress)?;
                let done = stop.or_else(|| self.certified(objective).then_some(StopReason::Gap));
                if let Some(stop) = done {
                    return Ok(self.finish(output, objective, stop, progress));
                }
            }
        }
    }

    fn subgradient(mut self, solver: &Subgradient) -> Result<StreamFit, OptimError> {
        let Geometry { lambda, bias, n, d } = self.at;
        // The first pass evaluates w = 0 and keeps it as the best so far, as in memory.
        let mut s = Subgradient::fresh(d, f64::INFINITY);
        loop {
            let mut grad = std::mem::take(&mut s.grad);
            let mut sums = PassSums::begin(&s.current, lambda, bias, n, &mut grad);
            let current = &s.current;
            self.rows.pass(&mut |x, y, c| {
                let z = y * (x.dot(&current.w) + current.b);
                sums.add(x, y, c, z, &mut grad);
                Ok(())
            })?;
            s.grad = grad;
            self.passes += 1;
            let evaluated = sums.end(&s.current, lambda, bias);
            solver.advance(&mut s, evaluated, lambda, bias);
            let stop = if s.k as f64 >= self.limits.max_epochs {
                Some(StopReason::MaxIterations)
            } else {
                self.out_of_time().then_some(StopReason::Time)
            };
            if stop.is_some() || s.k.is_multiple_of(self.limits.eval_every) {
                let progress = Progress {
                    iteration: s.k,
                    epoch: s.k as f64,
                };
                let best = s.best.clone();
                let objective = self.certify(&best, progress)?;
                let done = stop.or_else(|| self.certified(objective).then_some(StopReason::Gap));
                if let Some(stop) = done {
                    return Ok(self.finish(best, objective, stop, progress));
                }
            }
        }
    }

    fn certified(&self, objective: f64) -> bool {
        objective - self.dual <= self.limits.gap_tolerance * objective.abs()
    }

    fn finish(
        self,
        output: LinearWeights,
        objective: f64,
        stop: StopReason,
        progress: Progress,
    ) -> StreamFit {
        StreamFit {
            output,
            objective,
            dual: self.dual,
            stop,
            progress,
            trace: self.trace,
            passes: self.passes,
        }
    }

    /// The primal objective of `w` and a dual bound (kept when better than the best so far); records both
    /// in the trace. The first certificate starts the duals from `w`'s margins (one pass, which also gives
    /// the objective); later ones take one pass for the objective and continue the duals where the last
    /// certificate left them, so the bound tightens over a run. Then `polish` passes of coordinate descent.
    fn certify(&mut self, w: &LinearWeights, progress: Progress) -> Result<f64, OptimError> {
        let Geometry {
            lambda, bias, n, ..
        } = self.at;
        let feature = bias == Bias::Feature;
        let fresh = self.duals.is_none() || bias == Bias::Unregularized;
        let (objective, mut scale) = if fresh {
            let (objective, guess, wa, scale) = self.guess(w)?;
            self.dual = self.dual.max(lambda * guess);
            self.duals = Some(wa);
            (objective, scale)
        } else {
            let mut loss = 0.0;
            self.rows.pass(&mut |x, y, c| {
                loss += c * hinge(y * (x.dot(&w.w) + w.b));
                Ok(())
            })?;
            self.passes += 1;
            (self.objective_from(w, loss), [1.0, 1.0])
        };
        let polish = if bias == Bias::Unregularized {
            0
        } else {
            self.limits.polish
        };
        let shape = (
            BinaryLoss::Hinge,
            maxmargin_core::objective::c_sum(lambda, n),
            feature,
        );
        let d = self.at.d;
        let mut wa = self.duals.take().unwrap_or_default();
        for _ in 0..polish {
            let mut total = 0.0;
            self.rows.pass_with_column(false, &mut |x, y, c, alpha| {
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
            self.passes += 1;
            scale = [1.0, 1.0];
            self.dual = self.dual.max(lambda * (total - 0.5 * norm_sq(&wa)));
        }
        self.duals = Some(wa);
        self.record(objective, progress)?;
        Ok(objective)
    }

    /// `λ/2 (‖w‖² [+ b²]) + loss/n`.
    fn objective_from(&self, w: &LinearWeights, loss: f64) -> f64 {
        let extra = if self.at.bias == Bias::Feature {
            w.b * w.b
        } else {
            0.0
        };
        0.5 * self.at.lambda * (norm_sq(&w.w) + extra) + loss / self.at.n as f64
    }

    /// One pass from `w`'s margins: its objective, the C-form dual of the duals `α_i = U_i` inside the
    /// margin (written to the column; balanced between the classes for an unregularized intercept and
    /// scaled by the best `t`), `w(α)` with that scaling applied, and the per-class factors still to apply
    /// to the column.
    #[allow(clippy::type_complexity)]
    fn guess(&mut self, w: &LinearWeights) -> Result<(f64, f64, Vec<f64>, [f64; 2]), OptimError> {
        let Geometry { lambda, bias, n, d } = self.at;
        let mut sums = MarginDuals::new(lambda, n, d, bias);
        self.rows.pass_with_column(true, &mut |x, y, c, alpha| {
            *alpha = sums.add(x, y, c, w);
            Ok(())
        })?;
        self.passes += 1;
        let g = sums.finish(bias);
        let objective = self.objective_from(w, g.loss);
        Ok((objective, g.dual_c, g.wa, g.factor))
    }
}

/// The trace record of a certificate at `progress`: the primal and the dual bound, refused when the
/// primal is not finite (the trainer's record and check).
pub(crate) fn record(
    started: Instant,
    objective: f64,
    dual: f64,
    progress: Progress,
) -> Result<TraceRecord, OptimError> {
    let objective = crate::trainer::finite(objective, progress)?;
    let certificate = crate::trainer::Certificate {
        dual: Some(dual),
        gap: Some(objective - dual),
        ..Default::default()
    };
    let seconds = started.elapsed().as_secs_f64();
    Ok(crate::trainer::record(
        progress,
        seconds,
        objective,
        certificate,
    ))
}

impl StreamLimits {
    /// Why a streamed run stops after a step, if it does: its passes, its steps, or (looking at the clock
    /// every [`CLOCK_EVERY`] steps) its seconds.
    pub(crate) fn after_step(
        &self,
        epochs: f64,
        steps: u64,
        started: Instant,
    ) -> Option<StopReason> {
        if epochs >= self.max_epochs {
            Some(StopReason::MaxEpochs)
        } else if steps >= self.max_steps {
            Some(StopReason::MaxIterations)
        } else if steps.is_multiple_of(CLOCK_EVERY)
            && self
                .max_seconds
                .is_some_and(|s| started.elapsed().as_secs_f64() >= s)
        {
            Some(StopReason::Time)
        } else {
            None
        }
    }
}
