//! The Crammer–Singer dual over ranks, as binary DCD's (see `dcd::distributed`), a solver the trainer runs
//! (`Trainer::resume_over`): each round every rank runs one pass of the exact block steps over its examples
//! against its own copy of `W`, the changes `dW` and `Σ Δ·dα` are summed by one allreduce of `dK + 2`
//! numbers, and every rank takes the step `t ∈ [0, 1]` that maximizes the dual `−½‖W‖² − Σ Δ α` along the
//! summed direction: `t = −(⟨W, dW⟩ + Σ Δ dα) / ‖dW‖²`, clipped (each block's move stays feasible on the
//! segment). No shrinking over several ranks (its per-class bounds do not survive a step `t < 1`); one rank
//! is one process, its steps, shrinking and certificate the in-memory method's, bit for bit. A round whose blocks pass
//! the violation test on every rank is accepted at a certified gap within the target, else ε is divided by
//! 10, as one process does; the trainer's budgets, evaluations and gap stop are one process's.

use super::*;
use crate::collective::Collective;

/// The Crammer–Singer dual on one rank's shard of a problem spread over the ranks of a [`Collective`].
pub type CrammerSingerRanks<'c> = crate::collective::OverRanks<'c, CrammerSinger>;

impl CrammerSinger {
    /// This solver over the ranks of `comm`, each rank training on its shard (with the λ of the whole
    /// problem) of a problem of `n_total` examples; every rank uses the same parameters, space and dimension
    /// and ends with the same weights (label-major, as [`Solver::output`]).
    pub fn over_ranks(self, comm: &dyn Collective, n_total: usize) -> CrammerSingerRanks<'_> {
        let mut cs = self;
        // One rank is one process (its own steps, shrinking and gap target); over several, no shrinking.
        cs.params.shrinking &= comm.size() == 1;
        cs.n_total = Some(n_total);
        CrammerSingerRanks::new(cs, comm, n_total)
    }
}

type Problem<'p, 'a> = &'p StructProblem<'a, MulticlassSpace>;

impl CrammerSingerRanks<'_> {
    /// One round: the local pass, one allreduce of the direction, the common step; returns whether every
    /// rank's blocks passed the violation test.
    fn round(
        &mut self,
        problem: Problem<'_, '_>,
        st: &mut CrammerSingerState,
    ) -> Result<bool, OptimError> {
        let k = problem.space().n_classes();
        let (alpha0, w0, seen) = (st.alpha.clone(), st.w.clone(), st.visited);
        // The local passes accept their own test (the gap target is the round's).
        let target = std::mem::take(&mut self.solver.gap_target);
        let stepped = self.solver.step(problem, st);
        self.solver.gap_target = target;
        stepped?;
        let mut buf: Vec<f64> = st.w.iter().zip(&w0).map(|(a, b)| a - b).collect();
        let mut lin = 0.0;
        for (i, &y) in problem.y().iter().enumerate() {
            for m in 0..k {
                let da = st.alpha[i * k + m] - alpha0[i * k + m];
                lin += cost_at(&st.cost, k, y as usize, m) * da;
            }
        }
        let m = buf.len();
        buf.extend([lin, (st.visited - seen) as f64]);
        self.comm.allreduce_sum(&mut buf)?;
        let mut open = [f64::from(u8::from(!st.converged))];
        self.comm.allreduce_max(&mut open)?;
        st.converged = false;
        st.visited = seen + buf[m + 1] as u64;
        let dw = &buf[..m];
        let slope = -w0.iter().zip(dw).map(|(a, b)| a * b).sum::<f64>() - buf[m];
        let quad: f64 = dw.iter().map(|v| v * v).sum();
        let t = if quad > 0.0 {
            (slope / quad).clamp(0.0, 1.0)
        } else {
            1.0
        };
        for (a, a0) in st.alpha.iter_mut().zip(&alpha0) {
            *a = a0 + t * (*a - a0);
        }
        for ((w, w0), d) in st.w.iter_mut().zip(&w0).zip(dw) {
            *w = w0 + t * d;
        }
        Ok(open[0] == 0.0)
    }
}

impl<'a> Solver<StructProblem<'a, MulticlassSpace>> for CrammerSingerRanks<'_> {
    type State = CrammerSingerState;
    type Output = Vec<f64>;

    /// The budget's gap tolerance reaches the solver of every rank, as in one process.
    fn set_budget(&mut self, budget: &crate::Budget) {
        self.solver.gap_target.adopt(budget);
    }

    fn init(&mut self, problem: Problem<'_, 'a>) -> Result<CrammerSingerState, OptimError> {
        self.solver.init(problem)
    }

    /// This rank's share, checked as one process's state.
    fn check_state(
        &self,
        problem: Problem<'_, 'a>,
        st: &CrammerSingerState,
    ) -> Result<(), OptimError> {
        self.solver.check_state(problem, st)
    }

    fn step(
        &mut self,
        problem: Problem<'_, 'a>,
        st: &mut CrammerSingerState,
    ) -> Result<(), OptimError> {
        if self.comm.size() == 1 {
            return self.solver.step(problem, st);
        }
        if !self.round(problem, st)? {
            return Ok(());
        }
        // Every rank's ε agrees, so every rank values the certificate (collectively) or none does.
        let test = (self.solver.gap_target.get(), self.solver.epsilon(st));
        let done = crate::gap_target::accepts_certified(self, problem, st, test)?;
        if done {
            st.converged = true;
        } else {
            st.tightened += 1;
        }
        Ok(())
    }

    fn progress(&self, _problem: Problem<'_, 'a>, st: &CrammerSingerState) -> Progress {
        Progress {
            iteration: st.iteration,
            epoch: st.visited as f64 / self.n_total as f64,
        }
    }

    fn output(&self, problem: Problem<'_, 'a>, st: &CrammerSingerState) -> Vec<f64> {
        self.solver.output(problem, st)
    }

    /// The global primal from one oracle pass per rank and one allreduce of the weighted hinge sums.
    fn objective(
        &self,
        problem: Problem<'_, 'a>,
        st: &CrammerSingerState,
    ) -> Result<f64, OptimError> {
        let w = self.solver.output(problem, st);
        let mut sums = [self.solver.loss_sum(problem, &w)?];
        self.comm.allreduce_sum(&mut sums)?;
        let norm = maxmargin_core::vector::norm_sq(&w);
        Ok(0.5 * problem.lambda() * norm + sums[0] / self.n_total as f64)
    }

    /// The global dual `λ(−½‖W‖² − Σ Δ α)` from one allreduce of `Σ Δ α`.
    fn certificate(
        &self,
        problem: Problem<'_, 'a>,
        st: &CrammerSingerState,
        objective: f64,
    ) -> Result<Certificate, OptimError> {
        let mut sums = [self.solver.dual_linear(problem, st), st.active.len() as f64];
        self.comm.allreduce_sum(&mut sums)?;
        let norm: f64 = st.w.iter().map(|v| v * v).sum();
        let dual = problem.lambda() * (-0.5 * norm - sums[0]);
        Ok(Certificate {
            active_constraints: Some(sums[1] as usize),
            ..Certificate::of_dual(objective, dual)
        })
    }

    fn stop(&self, st: &CrammerSingerState) -> Option<StopReason> {
        st.converged.then_some(StopReason::Converged)
    }
}
