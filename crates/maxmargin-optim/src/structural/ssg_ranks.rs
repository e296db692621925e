//! SSG over ranks by averaging: every round each rank takes one local epoch of SSG steps on its shard (the
//! whole problem's λ, its own sampler and step counter), then the ranks replace their iterate by the average
//! of all ranks' (weighted by shard size: one allreduce of the weights). The output is the weighted average of
//! the ranks' outputs; it is certified by [`StructProblem::dual_bound`]'s construction with the oracle passes
//! of every rank summed (one allreduce of `dim + 2` numbers).

use super::problem::{bound_point, scaled_bound};
use super::{Ssg, StructProblem};
use crate::collective::{Collective, DistributedFit, Rounds, round_record};
use crate::error::OptimError;
use crate::trainer::{Solver, StopReason, TraceRecord};
use maxmargin_core::vector::norm_sq;
use maxmargin_struct::OutputSpace;

impl Ssg {
    /// Trains on the shard `problem` (this rank's examples, with the λ of the whole problem) of a problem of
    /// `n_total` examples over `comm`: a local epoch per round, then the average. Every rank must call it with
    /// the same parameters and space; every rank ends with the same weights.
    ///
    /// # Errors
    /// An oracle's error, [`OptimError::Collective`] when another rank failed, [`OptimError::NonFinite`].
    pub fn train_distributed<S>(
        &self,
        comm: &dyn Collective,
        problem: &StructProblem<'_, S>,
        n_total: usize,
        limits: Rounds,
    ) -> Result<DistributedFit<Vec<f64>>, OptimError>
    where
        S: OutputSpace,
        S::Output: Sync,
    {
        let started = std::time::Instant::now();
        let mut solver = self.clone();
        let mut st = solver.init(problem)?;
        let share = problem.n_samples() as f64 / n_total as f64;
        let (mut trace, mut round, mut visited) = (Vec::new(), 0u64, 0.0);
        let stop = loop {
            if let Some(why) = limits.spent(round, visited, n_total as f64) {
                break why;
            }
            round += 1;
            for _ in 0..problem.n_samples() {
                solver.step(problem, &mut st)?;
            }
            visited += n_total as f64;
            let mut w: Vec<f64> = Ssg::current(&st).iter().map(|x| share * x).collect();
            comm.allreduce_sum(&mut w)?;
            Ssg::set_current(&mut st, &w);
            if !limits.due(round, visited, n_total as f64) {
                continue;
            }
            let output = agreed_output(comm, &st, share)?;
            let at = (round, visited / n_total as f64);
            let record = certify(comm, problem, &output, n_total, at, started)?;
            let relative =
                record.gap.unwrap_or(f64::INFINITY) / record.objective.abs().max(f64::MIN_POSITIVE);
            trace.push(record);
            if relative <= limits.gap_tolerance {
                break StopReason::Gap;
            }
        };
        let output = agreed_output(comm, &st, share)?;
        if trace.last().is_none_or(|r| r.iteration != round) {
            let at = (round, visited / n_total as f64);
            trace.push(certify(comm, problem, &output, n_total, at, started)?);
        }
        let objective = trace.last().map_or(f64::NAN, |r| r.objective);
        Ok(DistributedFit {
            output,
            objective,
            trace,
            stop,
            rounds: round,
            epochs: visited / n_total as f64,
        })
    }
}

/// The weighted average of every rank's output.
fn agreed_output(
    comm: &dyn Collective,
    st: &super::SsgState,
    share: f64,
) -> Result<Vec<f64>, OptimError> {
    let mut w: Vec<f64> = Ssg::weights(st).iter().map(|x| share * x).collect();
    comm.allreduce_sum(&mut w)?;
    Ok(w)
}

/// The global primal objective of `w` and its dual bound, from one oracle pass per rank and one allreduce.
fn certify<S>(
    comm: &dyn Collective,
    problem: &StructProblem<'_, S>,
    w: &[f64],
    n_total: usize,
    at: (u64, f64),
    started: std::time::Instant,
) -> Result<TraceRecord, OptimError>
where
    S: OutputSpace,
    S::Output: Sync,
{
    let lambda = problem.lambda();
    let violations = problem.oracle_all(w)?;
    // [w_s | ℓ_s, Σ H_i]
    let dim = problem.dim();
    let mut buf = vec![0.0; dim + 2];
    for ((x, y), v) in problem.x().iter().zip(problem.y()).zip(&violations) {
        buf[dim + 1] += v.hinge;
        let (ws, tail) = buf.split_at_mut(dim);
        bound_point(
            problem.space(),
            (x, y, v),
            (lambda, n_total),
            ws,
            &mut tail[0],
        );
    }
    comm.allreduce_sum(&mut buf)?;
    let dual = scaled_bound(lambda, &buf[..dim], buf[dim]);
    let objective = 0.5 * lambda * norm_sq(w) + buf[dim + 1] / n_total as f64;
    round_record(objective, dual, at, started)
}
