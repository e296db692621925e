//! 1-slack cutting planes over ranks, reduce–solve–broadcast, a solver the trainer runs
//! (`Trainer::resume_over`): each round every rank runs the loss-augmented oracle on its examples and sums
//! its part of the joint constraint `(a, b)` (scaled by the whole problem's `1/n`); one allreduce gives every
//! rank the constraint and the mean hinge at `w`, so the primal; rank 0 alone keeps the working set, adds the
//! constraint, solves the QP and broadcasts the new `w` with its dual and its decision. The stop is one
//! process's: the ε test on the joint constraint accepted at a certified relative gap within the target
//! (else ε is divided by 10); budgets, evaluations and checkpoints are the trainer's.

use super::*;
use crate::collective::Collective;
use maxmargin_core::vector::dot;

/// 1-slack on one rank's shard of a problem spread over the ranks of a [`Collective`].
pub type OneSlackRanks<'c> = crate::collective::OverRanks<'c, OneSlack>;

/// One rank's 1-slack state over ranks: the agreed `w`, the working set (rank 0's; empty elsewhere), this
/// rank's true joint features, ε's tightenings, the rounds and oracle calls over all ranks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OneSlackRankState {
    w: Vec<f64>,
    set: WorkingSet,
    psi_truth: Vec<SparseVec>,
    tightened: u32,
    round: u64,
    calls: f64,
    converged: bool,
}

impl OneSlack {
    /// This solver over the ranks of `comm`, each rank training on its shard (with the λ of the whole
    /// problem) of a problem of `n_total` examples; every rank uses the same parameters, space and dimension
    /// and ends with the same weights (rank 0's, broadcast).
    pub fn over_ranks(self, comm: &dyn Collective, n_total: usize) -> OneSlackRanks<'_> {
        OneSlackRanks::new(self, comm, n_total)
    }
}

impl<'a, S: OutputSpace<Output: Sync>> Solver<StructProblem<'a, S>> for OneSlackRanks<'_> {
    type State = OneSlackRankState;
    type Output = Vec<f64>;

    /// The budget's gap tolerance reaches the solver of every rank, as in one process.
    fn set_budget(&mut self, budget: &crate::Budget) {
        self.solver.gap_target.adopt(budget);
    }

    fn init(&mut self, problem: &StructProblem<'a, S>) -> Result<OneSlackRankState, OptimError> {
        Ok(OneSlackRankState {
            w: vec![0.0; problem.dim()],
            set: WorkingSet::default(),
            psi_truth: problem.truth_features(),
            tightened: 0,
            round: 0,
            calls: 0.0,
            converged: false,
        })
    }

    fn step(
        &mut self,
        problem: &StructProblem<'a, S>,
        st: &mut OneSlackRankState,
    ) -> Result<(), OptimError> {
        let (dim, lambda, n) = (problem.dim(), problem.lambda(), self.n_total as f64);
        let params = self.solver.params;
        let epsilon = crate::gap_target::tightened(params.epsilon, st.tightened);
        let mut buf = joint_part(problem, &st.psi_truth, &st.w, n)?;
        self.comm.allreduce_sum(&mut buf)?;
        st.calls += buf[dim + 1];
        st.round += 1;
        // The joint constraint's violation at w: the mean hinge (the sparse plane only rank 0 keeps).
        let violation = buf[dim] - dot(&buf[..dim], &st.w)?;
        let primal = 0.5 * lambda * norm_sq(&st.w) + violation.max(0.0) + buf[dim + 2];
        // Rank 0 decides and solves; the others receive w and the decision.
        let mut out = vec![0.0; dim + 1];
        if self.comm.rank() == 0 {
            let xi = st.set.slack(0, &st.w);
            let mut decision = Decision::Go;
            if violation <= xi + epsilon {
                let dual = st.set.dual(lambda, &st.w);
                decision = if gap_accepts(self.solver.gap_target.get(), epsilon, primal, dual) {
                    Decision::Converged
                } else {
                    Decision::Tighten
                };
            }
            if decision != Decision::Converged {
                if violation > xi {
                    let a = SparseVec::from_dense(&buf[..dim]).unwrap_or_default();
                    st.set.add(a, buf[dim], 0);
                }
                st.set.solve(lambda, &[1.0], &mut st.w, params.qp)?;
                st.set.drop_idle(params.inactive_limit);
            }
            out[..dim].copy_from_slice(&st.w);
            out[dim] = decision.code();
        }
        self.comm.broadcast(&mut out, 0)?;
        Decision::receive(&out, &mut st.w, &mut st.converged, &mut st.tightened);
        Ok(())
    }

    fn progress(&self, _problem: &StructProblem<'a, S>, st: &OneSlackRankState) -> Progress {
        Progress {
            iteration: st.round,
            epoch: st.calls / self.n_total as f64,
        }
    }

    fn output(&self, _problem: &StructProblem<'a, S>, st: &OneSlackRankState) -> Vec<f64> {
        st.w.clone()
    }

    /// The global primal from one oracle pass per rank and one allreduce of the joint constraint's parts.
    fn objective(
        &self,
        problem: &StructProblem<'a, S>,
        st: &OneSlackRankState,
    ) -> Result<f64, OptimError> {
        let dim = problem.dim();
        let mut buf = joint_part(problem, &st.psi_truth, &st.w, self.n_total as f64)?;
        self.comm.allreduce_sum(&mut buf)?;
        let violation = buf[dim] - dot(&buf[..dim], &st.w)?;
        Ok(0.5 * problem.lambda() * norm_sq(&st.w) + violation.max(0.0) + buf[dim + 2])
    }

    /// Rank 0's working-set dual, broadcast.
    fn certificate(
        &self,
        problem: &StructProblem<'a, S>,
        st: &OneSlackRankState,
        objective: f64,
    ) -> Result<Certificate, OptimError> {
        let mut dual = [if self.comm.rank() == 0 {
            st.set.dual(problem.lambda(), &st.w)
        } else {
            0.0
        }];
        self.comm.broadcast(&mut dual, 0)?;
        Ok(Certificate::of_dual(objective, dual[0]))
    }

    fn stop(&self, st: &OneSlackRankState) -> Option<StopReason> {
        st.converged.then_some(StopReason::Converged)
    }
}

/// This rank's part of the joint constraint of the oracle's outputs at `w`: `Σ (ψ(y_i) − ψ(ŷ_i))/n` over
/// its examples, then `Σ Δ(y_i, ŷ_i)/n`, then its example count, then how far the oracle's bounds lie above
/// the hinges it found, `Σ (upper_i − hinge_i)/n` (0 for exact oracles): the primal adds it, so that it stays
/// an upper bound and the gap a certificate where inference only bounds the maxima.
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
    let mut buf = vec![0.0; dim + 3];
    for (i, v) in found.iter().enumerate() {
        let loss = problem
            .space()
            .loss_for(&problem.x()[i], &problem.y()[i], &v.output);
        let c = problem.plane_scale(loss);
        truth[i].as_row().axpy(c / n, &mut buf[..dim]);
        problem
            .space()
            .add_joint_feature(&problem.x()[i], &v.output, -c / n, &mut buf[..dim]);
        buf[dim] += loss / n;
        buf[dim + 2] += (v.upper() - v.hinge) / n;
    }
    buf[dim + 1] = found.len() as f64;
    Ok(buf)
}
