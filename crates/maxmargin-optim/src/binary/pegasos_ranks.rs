//! Pegasos over ranks by averaging ([`crate::averaged`]): every round each rank takes one local epoch of
//! Pegasos steps on its shard, then the ranks replace their last iterate by the shard-weighted average of all
//! ranks' (one allreduce of `d + 2` numbers). The output is the weighted average of the ranks' outputs (their
//! averaged iterates when averaging), certified like one process's Pegasos by the duals its margins suggest
//! ([`super::guess`]), summed over ranks; the bound is not polished by coordinate descent here, so it is
//! looser than one process's.

use super::guess::MarginDuals;
use crate::Pegasos;
use crate::averaged::{Averaged, Averaging};
use crate::collective::Collective;
use crate::error::OptimError;
use crate::pegasos::PegasosState;
use crate::problem::{BinaryProblem, LinearWeights};
use crate::trainer::Solver;

impl Pegasos {
    /// Pegasos over the ranks of `comm` by averaging, each rank training on its shard (with the λ of the
    /// whole problem) of a problem of `n_total` examples; the trainer runs it with
    /// [`crate::Trainer::resume_over`]. Every rank uses the same parameters and feature count and ends with the
    /// same weights.
    pub fn over_ranks(self, comm: &dyn Collective, n_total: usize) -> Averaged<'_, Pegasos> {
        Averaged::new(self, comm, n_total)
    }
}

/// Vectors are the weights with the intercept appended.
impl<'a> Averaging<BinaryProblem<'a>> for Pegasos {
    type Local = PegasosState;
    type Output = LinearWeights;

    fn init_local(&mut self, problem: &BinaryProblem<'a>) -> Result<PegasosState, OptimError> {
        self.init(problem)
    }

    fn n_local(&self, problem: &BinaryProblem<'a>) -> usize {
        problem.n_samples()
    }

    fn epoch(
        &mut self,
        problem: &BinaryProblem<'a>,
        st: &mut PegasosState,
    ) -> Result<(), OptimError> {
        let steps = problem.n_samples().div_ceil(self.params().batch_size);
        for _ in 0..steps {
            self.step(problem, st)?;
        }
        Ok(())
    }

    fn current(&self, st: &PegasosState) -> Vec<f64> {
        let (mut full, b) = st.current();
        full.push(b);
        full
    }

    fn set_current(&self, st: &mut PegasosState, v: &[f64]) {
        let (full, b) = v.split_at(v.len() - 1);
        st.set_current(full, b[0]);
    }

    fn local_output(&self, p: &BinaryProblem<'a>, st: &PegasosState) -> Vec<f64> {
        let mut w = self.weights(st, p.n_features(), p.bias());
        w.w.push(w.b);
        w.w
    }

    fn to_output(&self, _problem: &BinaryProblem<'a>, v: &[f64]) -> LinearWeights {
        let (w, b) = v.split_at(v.len() - 1);
        LinearWeights {
            w: w.to_vec(),
            b: b[0],
        }
    }

    /// The global primal objective of `w` and the bound of its margins' duals, from one allreduce of
    /// `2(d + 1) + 3` numbers.
    fn certify(
        &self,
        comm: &dyn Collective,
        problem: &BinaryProblem<'a>,
        output: &[f64],
        n_total: usize,
    ) -> Result<(f64, f64), OptimError> {
        let w = self.to_output(problem, output);
        let (lambda, bias) = (problem.lambda(), problem.bias());
        let mut sums = MarginDuals::new(lambda, n_total, problem.n_features(), bias);
        for (i, (x, &y)) in problem.x().rows().zip(problem.y()).enumerate() {
            sums.add(x, y, problem.weight(i), &w);
        }
        comm.allreduce_sum(sums.as_mut_slice())?;
        let guess = sums.finish(bias);
        let objective = 0.5 * lambda * problem.reg_norm_sq(&w) + guess.loss / n_total as f64;
        Ok((objective, lambda * guess.dual_c))
    }
}
