//! 1-slack cutting planes over ranks, reduce–solve–broadcast: each round every rank runs the
//! loss-augmented oracle on its examples and sums its part of the joint constraint `(a, b)` (scaled by the
//! whole problem's `1/n`); one allreduce gives every rank the constraint and the mean hinge at `w`, so the
//! primal; rank 0 alone keeps the working set, adds the constraint, solves the QP and broadcasts the new `w`
//! with its dual and its decision. The stop is one process's: the ε test on the joint constraint accepted at a
//! certified relative gap within the target (else ε is divided by 10), or the gap itself, or the budget.

use super::*;
use crate::collective::{Collective, DistributedFit, Rounds, Verdict, round_record};
use maxmargin_core::vector::dot;

/// Rank 0's decision, sent with `w`.
const GO: f64 = 0.0;
const CONVERGED: f64 = 1.0;
const GAP: f64 = 2.0;

impl OneSlack {
    /// Trains on the shard `problem` (this rank's examples, with the λ of the whole problem) of a problem
    /// of `n_total` examples over `comm`; every rank calls it with the same parameters, space and dimension
    /// and ends with the same weights (rank 0's, broadcast).
    ///
    /// # Errors
    /// The oracle's or the QP's errors (on the rank that met them), [`OptimError::Collective`] when another
    /// rank failed.
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
        let (dim, lambda, n) = (problem.dim(), problem.lambda(), n_total as f64);
        let truth = problem.truth_features();
        let mut w = vec![0.0; dim];
        let mut set = WorkingSet::default();
        let mut epsilon = self.params.epsilon;
        let (mut round, mut calls) = (0u64, 0.0);
        let mut trace = Vec::new();
        let stop = loop {
            if let Some(why) = limits.spent(round, calls, n) {
                break why;
            }
            round += 1;
            let mut buf = joint_part(problem, &truth, &w, n)?;
            comm.allreduce_sum(&mut buf)?;
            calls += buf[dim + 1];
            // The joint constraint's violation at w: the mean hinge (the sparse plane only rank 0 keeps).
            let violation = buf[dim] - dot(&buf[..dim], &w)?;
            let primal = 0.5 * lambda * norm_sq(&w) + violation.max(0.0);
            // Rank 0 decides and solves; the others receive w, the dual and the decision.
            let mut out = vec![0.0; dim + 2];
            if comm.rank() == 0 {
                let dual = set.dual(lambda, &w);
                let xi = set.slack(0, &w);
                let passed = violation <= xi + epsilon;
                let record = round_record(primal, dual, (round, calls / n), started)?;
                let mut decision = GO;
                match limits.verdict(&record, passed, epsilon) {
                    Verdict::Stop(StopReason::Converged) => decision = CONVERGED,
                    Verdict::Stop(_) => decision = GAP,
                    verdict => {
                        if matches!(verdict, Verdict::Tighten) {
                            epsilon /= 10.0;
                        }
                        if violation > xi {
                            let a = SparseVec::from_dense(&buf[..dim]).unwrap_or_default();
                            set.add(a, buf[dim], 0);
                        }
                        set.solve(lambda, &[1.0], &mut w, self.params.qp)?;
                        set.drop_idle(self.params.inactive_limit);
                    }
                }
                out[..dim].copy_from_slice(&w);
                out[dim] = dual;
                out[dim + 1] = decision;
            }
            comm.broadcast(&mut out, 0)?;
            trace.push(round_record(primal, out[dim], (round, calls / n), started)?);
            w.copy_from_slice(&out[..dim]);
            match out[dim + 1] {
                CONVERGED => break StopReason::Converged,
                GAP => break StopReason::Gap,
                _ => {}
            }
        };
        if matches!(stop, StopReason::MaxEpochs | StopReason::MaxIterations) {
            // The budget ended after rank 0 moved w: certify the w returned (one more oracle round).
            let mut buf = joint_part(problem, &truth, &w, n)?;
            comm.allreduce_sum(&mut buf)?;
            let primal = 0.5 * lambda * norm_sq(&w) + (buf[dim] - dot(&buf[..dim], &w)?).max(0.0);
            let mut dual = [if comm.rank() == 0 {
                set.dual(lambda, &w)
            } else {
                0.0
            }];
            comm.broadcast(&mut dual, 0)?;
            trace.push(round_record(primal, dual[0], (round, calls / n), started)?);
        }
        let Some(last) = trace.last() else {
            return Err(OptimError::NoExamples);
        };
        let objective = last.objective;
        Ok(DistributedFit {
            output: w,
            objective,
            trace,
            stop,
            rounds: round,
            epochs: calls / n,
        })
    }
}

/// This rank's part of the joint constraint of the oracle's outputs at `w`: `Σ (ψ(y_i) − ψ(ŷ_i))/n` over
/// its examples, then `Σ Δ(y_i, ŷ_i)/n`, then its example count.
fn joint_part<S>(
    problem: &StructProblem<'_, S>,
    truth: &[SparseVec],
    w: &[f64],
    n: f64,
) -> Result<Vec<f64>, OptimError>
where
    S: OutputSpace,
    S::Output: Sync,
{
    let dim = problem.dim();
    let found = problem.oracle_all(w)?;
    let mut buf = vec![0.0; dim + 2];
    for (i, v) in found.iter().enumerate() {
        truth[i].as_row().axpy(1.0 / n, &mut buf[..dim]);
        problem
            .space()
            .add_joint_feature(&problem.x()[i], &v.output, -1.0 / n, &mut buf[..dim]);
        buf[dim] += problem.space().loss(&problem.y()[i], &v.output) / n;
    }
    buf[dim + 1] = found.len() as f64;
    Ok(buf)
}
