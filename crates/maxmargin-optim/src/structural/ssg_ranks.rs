//! SSG over ranks by averaging: every round each rank takes one local epoch of SSG steps on its shard (the
//! whole problem's λ, its own sampler and step counter), then the ranks replace their iterate by the average
//! of all ranks' (weighted by shard size: one allreduce of the weights). The output is the weighted average of
//! the ranks' outputs; it is certified by [`StructProblem::dual_bound`]'s construction with the oracle passes
//! of every rank summed (one allreduce of `dim + 2` numbers).

use super::problem::{bound_point, scaled_bound};
use super::{Ssg, SsgState, StructProblem};
use crate::collective::{
    Averaging, Collective, DistributedFit, NoCheckpoints, RoundCheckpoints, Rounds,
    averaging_rounds,
};
use crate::error::OptimError;
use crate::trainer::Solver;
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
        self.train_distributed_with(comm, problem, n_total, limits, &mut NoCheckpoints)
    }

    /// As [`Ssg::train_distributed`], resuming from and writing checkpoints at round boundaries through
    /// `checkpoints` (every rank its own state; a resumed run ends with the same bits as one never stopped).
    ///
    /// # Errors
    /// As [`Ssg::train_distributed`], and what `checkpoints` returns.
    pub fn train_distributed_with<S>(
        &self,
        comm: &dyn Collective,
        problem: &StructProblem<'_, S>,
        n_total: usize,
        limits: Rounds,
        checkpoints: &mut dyn RoundCheckpoints<SsgState>,
    ) -> Result<DistributedFit<Vec<f64>>, OptimError>
    where
        S: OutputSpace,
        S::Output: Sync,
    {
        let mut solver = self.clone();
        let state = solver.init(problem)?;
        let share = problem.n_samples() as f64 / n_total as f64;
        let mut local = Local {
            solver,
            state,
            problem,
            n_total,
        };
        averaging_rounds(comm, &mut local, (share, n_total), limits, checkpoints)
    }
}

/// One rank's SSG.
struct Local<'p, 'a, S: OutputSpace> {
    solver: Ssg,
    state: SsgState,
    problem: &'p StructProblem<'a, S>,
    n_total: usize,
}

impl<S> Averaging for Local<'_, '_, S>
where
    S: OutputSpace,
    S::Output: Sync,
{
    type State = SsgState;

    fn state(&self) -> &SsgState {
        &self.state
    }

    fn restore(&mut self, state: SsgState) {
        self.state = state;
    }

    fn epoch(&mut self) -> Result<(), OptimError> {
        for _ in 0..self.problem.n_samples() {
            self.solver.step(self.problem, &mut self.state)?;
        }
        Ok(())
    }

    fn current(&self) -> Vec<f64> {
        Ssg::current(&self.state).to_vec()
    }

    fn set_current(&mut self, v: &[f64]) {
        Ssg::set_current(&mut self.state, v);
    }

    fn output(&self) -> Vec<f64> {
        Ssg::weights(&self.state)
    }

    /// The global primal objective of `w` and its dual bound, from one oracle pass per rank and one allreduce
    /// of `dim + 2` numbers.
    fn certify(&self, comm: &dyn Collective, w: &[f64]) -> Result<(f64, f64), OptimError> {
        let problem = self.problem;
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
                (lambda, self.n_total),
                ws,
                &mut tail[0],
            );
        }
        comm.allreduce_sum(&mut buf)?;
        let dual = scaled_bound(lambda, &buf[..dim], buf[dim]);
        let objective = 0.5 * lambda * norm_sq(w) + buf[dim + 1] / self.n_total as f64;
        Ok((objective, dual))
    }
}
