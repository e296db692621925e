//! The stochastic subgradient method on structural examples read pass by pass (data larger than memory):
//! the step is [`Ssg`]'s own, the examples come in the order the source chooses, and every certificate is
//! [`StructProblem::dual_bound`](super::StructProblem::dual_bound)'s construction in one pass of oracle
//! calls, which also gives the primal objective. Memory is that of `w` (and its average), not of the examples.

use super::Ssg;
use super::problem::{bound_point, scaled_bound};
use crate::binary::stream::{StreamFit, StreamLimits, record};
use crate::error::OptimError;
use crate::trainer::{Progress, StopReason};
use maxmargin_core::vector::norm_sq;
use maxmargin_struct::OutputSpace;
use std::time::Instant;

/// What a pass hands each example to.
pub type ExampleVisit<'a, S> = dyn FnMut(&<S as OutputSpace>::Input, &<S as OutputSpace>::Output) -> Result<(), OptimError>
    + 'a;

/// Structural examples read pass by pass.
pub trait ExamplePasses<S: OutputSpace> {
    /// Examples `n`.
    fn n_examples(&self) -> usize;
    /// Hands every example to `example`, in the order the source chooses.
    ///
    /// # Errors
    /// A read error of the source, or what `example` returns.
    fn pass(&mut self, example: &mut ExampleVisit<'_, S>) -> Result<(), OptimError>;
}

/// Trains `ssg` on the examples of `source` in `space` at `λ` within `limits` (`max_epochs` passes,
/// `max_steps` steps, seconds, the relative gap, a certificate every `eval_every` passes).
///
/// # Errors
/// A read error of the source, an oracle's error, [`OptimError::NoExamples`], or an invalid limit.
pub fn train_ssg_stream<S: OutputSpace>(
    ssg: &Ssg,
    space: &S,
    source: &mut dyn ExamplePasses<S>,
    lambda: f64,
    limits: &StreamLimits,
) -> Result<StreamFit<Vec<f64>>, OptimError> {
    let n = source.n_examples();
    if n == 0 {
        return Err(OptimError::NoExamples);
    }
    if limits.eval_every == 0 {
        return Err(crate::error::invalid("eval_every", 0, "must be at least 1"));
    }
    let started = Instant::now();
    let mut st = ssg.init_streamed(space.dim(), n);
    let (mut dual, mut trace) = (f64::NEG_INFINITY, Vec::new());
    let (mut passes, mut epochs) = (0u64, 0u64);
    loop {
        let mut stop = None;
        source.pass(&mut |x, y| {
            if stop.is_some() {
                return Ok(());
            }
            st.sampler.next_index();
            let v = space.loss_augmented(Ssg::current(&st), x, y)?;
            ssg.apply(&mut st, space, (x, y, &v), lambda);
            stop = limits.after_step(st.sampler.epochs(), st.t, started);
            Ok(())
        })?;
        passes += 1;
        epochs += 1;
        let out_of_time = limits
            .max_seconds
            .is_some_and(|s| started.elapsed().as_secs_f64() >= s);
        let stop = stop.or(out_of_time.then_some(StopReason::Time));
        if stop.is_none() && !epochs.is_multiple_of(limits.eval_every) {
            continue;
        }
        let w = Ssg::weights(&st);
        let (objective, bound) = certify(space, source, &w, lambda, n)?;
        passes += 1;
        dual = dual.max(bound);
        let progress = Progress {
            iteration: st.t,
            epoch: st.sampler.epochs(),
        };
        trace.push(record(started, objective, dual, progress)?);
        let certified = objective - dual <= limits.gap_tolerance * objective.abs();
        if let Some(stop) = stop.or(certified.then_some(StopReason::Gap)) {
            return Ok(StreamFit {
                output: w,
                objective,
                dual,
                stop,
                progress,
                trace,
                passes,
            });
        }
    }
}

/// The primal objective at `w` and the dual bound of [`super::StructProblem::dual_bound`], in one pass.
fn certify<S: OutputSpace>(
    space: &S,
    source: &mut dyn ExamplePasses<S>,
    w: &[f64],
    lambda: f64,
    n: usize,
) -> Result<(f64, f64), OptimError> {
    let mut ws = vec![0.0; space.dim()];
    let (mut hinge, mut ell) = (0.0, 0.0);
    source.pass(&mut |x, y| {
        let v = space.loss_augmented(w, x, y)?;
        hinge += v.hinge;
        bound_point(space, (x, y, &v), (lambda, n), &mut ws, &mut ell);
        Ok(())
    })?;
    let objective = 0.5 * lambda * norm_sq(w) + hinge / n as f64;
    Ok((objective, scaled_bound(lambda, &ws, ell)))
}
