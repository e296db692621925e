//! Pegasos over ranks by averaging: every round each rank takes one local epoch of Pegasos steps on its
//! shard (the whole problem's λ, its own sampler and step counter), then the ranks replace their last iterate
//! by the average of all ranks' (weighted by shard size: one allreduce of `d + 2` numbers). The output is the
//! weighted average of the ranks' outputs (their averaged iterates when averaging). It is certified like one
//! process's Pegasos, by the duals its margins suggest ([`super::guess`]), summed over ranks; the bound is
//! not polished by coordinate descent here, so it is looser than one process's.

use super::guess::MarginDuals;
use crate::Pegasos;
use crate::collective::{
    Averaging, Collective, DistributedFit, NoCheckpoints, RoundCheckpoints, Rounds,
    averaging_rounds,
};
use crate::error::OptimError;
use crate::pegasos::PegasosState;
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
        self.train_distributed_with(comm, problem, n_total, limits, &mut NoCheckpoints)
    }

    /// As [`Pegasos::train_distributed`], resuming from and writing checkpoints at round boundaries through
    /// `checkpoints` (every rank its own state; a resumed run ends with the same bits as one never stopped).
    ///
    /// # Errors
    /// As [`Pegasos::train_distributed`], and what `checkpoints` returns.
    pub fn train_distributed_with(
        &self,
        comm: &dyn Collective,
        problem: &BinaryProblem<'_>,
        n_total: usize,
        limits: Rounds,
        checkpoints: &mut dyn RoundCheckpoints<PegasosState>,
    ) -> Result<DistributedFit<LinearWeights>, OptimError> {
        let mut solver = *self;
        let state = solver.init(problem)?;
        let share = problem.n_samples() as f64 / n_total as f64;
        let mut local = Local {
            solver,
            state,
            problem,
            n_total,
        };
        let fit = averaging_rounds(comm, &mut local, (share, n_total), limits, checkpoints)?;
        let DistributedFit {
            mut output,
            objective,
            trace,
            stop,
            rounds,
            epochs,
        } = fit;
        let b = output.pop().unwrap_or(0.0);
        Ok(DistributedFit {
            output: LinearWeights { w: output, b },
            objective,
            trace,
            stop,
            rounds,
            epochs,
        })
    }
}

/// One rank's Pegasos; vectors are the weights with the intercept appended.
struct Local<'p, 'a> {
    solver: Pegasos,
    state: PegasosState,
    problem: &'p BinaryProblem<'a>,
    n_total: usize,
}

impl Averaging for Local<'_, '_> {
    type State = PegasosState;

    fn state(&self) -> &PegasosState {
        &self.state
    }

    fn restore(&mut self, state: PegasosState) {
        self.state = state;
    }

    fn epoch(&mut self) -> Result<(), OptimError> {
        let steps = self
            .problem
            .n_samples()
            .div_ceil(self.solver.params().batch_size);
        for _ in 0..steps {
            self.solver.step(self.problem, &mut self.state)?;
        }
        Ok(())
    }

    fn current(&self) -> Vec<f64> {
        let (mut full, b) = self.state.current();
        full.push(b);
        full
    }

    fn set_current(&mut self, v: &[f64]) {
        let (full, b) = v.split_at(v.len() - 1);
        self.state.set_current(full, b[0]);
    }

    fn output(&self) -> Vec<f64> {
        let p = self.problem;
        let mut w = self.solver.weights(&self.state, p.n_features(), p.bias());
        w.w.push(w.b);
        w.w
    }

    /// The global primal objective of `w` and the bound of its margins' duals, from one allreduce of
    /// `2(d + 1) + 3` numbers.
    fn certify(&self, comm: &dyn Collective, output: &[f64]) -> Result<(f64, f64), OptimError> {
        let problem = self.problem;
        let (w, b) = output.split_at(output.len() - 1);
        let w = LinearWeights {
            w: w.to_vec(),
            b: b[0],
        };
        let (lambda, bias) = (problem.lambda(), problem.bias());
        let mut sums = MarginDuals::new(lambda, self.n_total, problem.n_features(), bias);
        for (i, (x, &y)) in problem.x().rows().zip(problem.y()).enumerate() {
            sums.add(x, y, problem.weight(i), &w);
        }
        comm.allreduce_sum(sums.as_mut_slice())?;
        let guess = sums.finish(bias);
        let objective = 0.5 * lambda * problem.reg_norm_sq(&w) + guess.loss / self.n_total as f64;
        Ok((objective, lambda * guess.dual_c))
    }
}
