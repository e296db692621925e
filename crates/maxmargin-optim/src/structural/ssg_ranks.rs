//! SSG over ranks by averaging ([`crate::averaged`]): every round each rank takes one local epoch of SSG steps
//! on its shard, then the ranks replace their iterate by the shard-weighted average of all ranks' (one
//! allreduce of the weights). The output is the weighted average of the ranks' outputs; it is certified by
//! [`StructProblem::dual_bound`]'s construction with the oracle passes of every rank summed (one allreduce of
//! `dim + 2` numbers).

use super::problem::{bound_point, scaled_bound};
use super::{Ssg, SsgState, StructProblem};
use crate::averaged::{Averaged, Averaging};
use crate::collective::Collective;
use crate::error::OptimError;
use crate::trainer::Solver;
use maxmargin_core::vector::norm_sq;
use maxmargin_struct::OutputSpace;

impl Ssg {
    /// SSG over the ranks of `comm` by averaging, each rank training on its shard (with the λ of the whole
    /// problem) of a problem of `n_total` examples; the trainer runs it with
    /// [`crate::Trainer::resume_over`]. Every rank uses the same parameters and space and ends with the same
    /// weights.
    pub fn over_ranks(self, comm: &dyn Collective, n_total: usize) -> Averaged<'_, Ssg> {
        Averaged::new(self, comm, n_total)
    }
}

impl<'a, S: OutputSpace<Output: Sync>> Averaging<StructProblem<'a, S>> for Ssg {
    type Local = SsgState;
    type Output = Vec<f64>;

    fn init_local(&mut self, problem: &StructProblem<'a, S>) -> Result<SsgState, OptimError> {
        self.init(problem)
    }

    fn n_local(&self, problem: &StructProblem<'a, S>) -> usize {
        problem.n_samples()
    }

    fn epoch(
        &mut self,
        problem: &StructProblem<'a, S>,
        st: &mut SsgState,
    ) -> Result<(), OptimError> {
        for _ in 0..problem.n_samples() {
            self.step(problem, st)?;
        }
        Ok(())
    }

    fn current(&self, st: &SsgState) -> Vec<f64> {
        Ssg::current(st).to_vec()
    }

    fn set_current(&self, st: &mut SsgState, v: &[f64]) {
        Ssg::set_current(st, v);
    }

    fn local_output(&self, _problem: &StructProblem<'a, S>, st: &SsgState) -> Vec<f64> {
        Ssg::weights(st)
    }

    fn to_output(&self, _problem: &StructProblem<'a, S>, v: &[f64]) -> Vec<f64> {
        v.to_vec()
    }

    /// The global primal objective of `w` and its dual bound, from one oracle pass per rank and one allreduce
    /// of `dim + 2` numbers.
    fn certify(
        &self,
        comm: &dyn Collective,
        problem: &StructProblem<'a, S>,
        w: &[f64],
        n_total: usize,
    ) -> Result<(f64, f64), OptimError> {
        let lambda = problem.lambda();
        let violations = problem.oracle_all(w)?;
        // [w_s | ℓ_s, Σ H_i]
        let dim = problem.dim();
        let mut buf = vec![0.0; dim + 2];
        for ((x, y), v) in problem.x().iter().zip(problem.y()).zip(&violations) {
            buf[dim + 1] += v.upper();
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
        Ok((objective, dual))
    }
}
