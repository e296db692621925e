//! Pegasos over ranks by averaging: every round each rank takes one local epoch of Pegasos steps on its
//! shard (the whole problem's λ, its own sampler and step counter), then the ranks replace their last iterate
//! by the average of all ranks' (weighted by shard size: one allreduce of `d + 2` numbers). The output is the
//! weighted average of the ranks' outputs (their averaged iterates when averaging). It is certified like one
//! process's Pegasos, by the duals its margins suggest ([`super::guess`]), summed over ranks; the bound is
//! not polished by coordinate descent here, so it is looser than one process's.

use super::guess::MarginDuals;
use crate::Pegasos;
use crate::collective::{Collective, DistributedFit, Rounds, round_record};
use crate::error::OptimError;
use crate::problem::{BinaryProblem, LinearWeights};
use crate::trainer::Solver;

impl Pegasos {
    /// Trains on the shard `problem` (this rank's examples, with the λ of the whole problem) of a problem of
    /// `n_total` examples over `comm`: a local epoch per round, then the average. Every rank must call it with
    /// the same parameters and feature count; every rank ends with the same weights.
    ///
    /// # Errors
    /// [`OptimError::InvalidParam`] for the squared hinge, [`OptimError::Collective`] when another rank failed,
    /// [`OptimError::NonFinite`].
    pub fn train_distributed(
        &self,
        comm: &dyn Collective,
        problem: &BinaryProblem<'_>,
        n_total: usize,
        limits: Rounds,
    ) -> Result<DistributedFit<LinearWeights>, OptimError> {
        let started = std::time::Instant::now();
        let mut solver = *self;
        let mut st = solver.init(problem)?;
        let n = problem.n_samples();
        let share = n as f64 / n_total as f64;
        let steps = n.div_ceil(self.params().batch_size);
        let (mut trace, mut round) = (Vec::new(), 0u64);
        let mut visited = 0.0;
        let stop = loop {
            if let Some(why) = limits.spent(round, visited, n_total as f64) {
                break why;
            }
            round += 1;
            for _ in 0..steps {
                solver.step(problem, &mut st)?;
            }
            visited += n_total as f64;
            let (mut full, b) = st.current();
            full.iter_mut().for_each(|x| *x *= share);
            full.push(share * b);
            comm.allreduce_sum(&mut full)?;
            let b = full.pop().unwrap_or(0.0);
            st.set_current(&full, b);
            if !limits.due(round, visited, n_total as f64) {
                continue;
            }
            let output = self.agreed_output(comm, problem, &st, share)?;
            let record = certify(
                comm,
                problem,
                &output,
                n_total,
                (round, visited / n_total as f64),
                started,
            )?;
            let relative =
                record.gap.unwrap_or(f64::INFINITY) / record.objective.abs().max(f64::MIN_POSITIVE);
            trace.push(record);
            if relative <= limits.gap_tolerance {
                break crate::trainer::StopReason::Gap;
            }
        };
        let output = self.agreed_output(comm, problem, &st, share)?;
        if trace.last().is_none_or(|r| r.iteration != round) {
            let record = certify(
                comm,
                problem,
                &output,
                n_total,
                (round, visited / n_total as f64),
                started,
            )?;
            trace.push(record);
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

    /// The weighted average of every rank's output.
    fn agreed_output(
        &self,
        comm: &dyn Collective,
        problem: &BinaryProblem<'_>,
        st: &crate::pegasos::PegasosState,
        share: f64,
    ) -> Result<LinearWeights, OptimError> {
        let mine = self.weights(st, problem.n_features(), problem.bias());
        let mut buf: Vec<f64> = mine.w.iter().map(|x| share * x).collect();
        buf.push(share * mine.b);
        comm.allreduce_sum(&mut buf)?;
        let b = buf.pop().unwrap_or(0.0);
        Ok(LinearWeights { w: buf, b })
    }
}

/// The global primal objective of `w` and the bound of its margins' duals, from one allreduce of
/// `2(d + 1) + 3` numbers.
fn certify(
    comm: &dyn Collective,
    problem: &BinaryProblem<'_>,
    w: &LinearWeights,
    n_total: usize,
    at: (u64, f64),
    started: std::time::Instant,
) -> Result<crate::trainer::TraceRecord, OptimError> {
    let (lambda, bias) = (problem.lambda(), problem.bias());
    let mut sums = MarginDuals::new(lambda, n_total, problem.n_features(), bias);
    for (i, (x, &y)) in problem.x().rows().zip(problem.y()).enumerate() {
        sums.add(x, y, problem.weight(i), w);
    }
    comm.allreduce_sum(sums.as_mut_slice())?;
    let guess = sums.finish(bias);
    let reg = problem.reg_norm_sq(w);
    let objective = 0.5 * lambda * reg + guess.loss / n_total as f64;
    round_record(objective, lambda * guess.dual_c, at, started)
}
