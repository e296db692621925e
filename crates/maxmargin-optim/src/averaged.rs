//! Training by averaging over ranks (Pegasos, SSG), as a solver the trainer runs (`Trainer::resume_over`):
//! a step is a round, one local epoch of the solver's own steps on every rank's shard (the whole problem's λ,
//! each rank its own sampler and step counter), after which the ranks replace their iterate by the
//! shard-weighted average of all ranks' (one allreduce). The output is the shard-weighted average of the
//! ranks' outputs (their averaged iterates when averaging), agreed after every round (one more allreduce),
//! and it is certified by the solver's own dual bound with its sums added up over the ranks. Budgets,
//! evaluations, the gap stop and checkpoints are the trainer's, as for one process.

use crate::collective::Collective;
use crate::error::OptimError;
use crate::trainer::{Certificate, Progress, Solver};
use serde::{Deserialize, Serialize};
use std::cell::Cell;

/// One rank's side of a solver trained by averaging: a local epoch, its iterate as one vector, its output,
/// and the certificate of an agreed output as sums over the ranks.
pub trait Averaging<P> {
    /// The solver's state on this rank.
    type Local: Clone;
    /// What training returns, from the agreed vector.
    type Output: Clone;
    /// The state before the first round.
    ///
    /// # Errors
    /// When the problem does not suit the solver.
    fn init_local(&mut self, problem: &P) -> Result<Self::Local, OptimError>;
    /// Examples on this rank.
    fn n_local(&self, problem: &P) -> usize;
    /// One pass of local steps over this rank's examples.
    ///
    /// # Errors
    /// What a step returns.
    fn epoch(&mut self, problem: &P, st: &mut Self::Local) -> Result<(), OptimError>;
    /// The current iterate as one vector (the same length on every rank).
    fn current(&self, st: &Self::Local) -> Vec<f64>;
    /// Replaces the current iterate.
    fn set_current(&self, st: &mut Self::Local, v: &[f64]);
    /// What this rank would return (an average of its iterates, or the last), as one vector.
    fn local_output(&self, problem: &P, st: &Self::Local) -> Vec<f64>;
    /// The output of the agreed vector.
    fn to_output(&self, problem: &P, v: &[f64]) -> Self::Output;
    /// The global primal objective and dual bound of the agreed output (collective).
    ///
    /// # Errors
    /// [`OptimError::Collective`], or what an oracle returns.
    fn certify(
        &self,
        comm: &dyn Collective,
        problem: &P,
        output: &[f64],
        n_total: usize,
    ) -> Result<(f64, f64), OptimError>;
}

/// A solver trained by averaging over the ranks of a [`Collective`] (see the module docs).
pub struct Averaged<'c, A> {
    local: A,
    comm: &'c dyn Collective,
    n_total: usize,
    /// The last certificate: `(round, objective, dual)`, so an evaluation costs one pass, not two.
    last: Cell<Option<(u64, f64, f64)>>,
}

impl<A: std::fmt::Debug> std::fmt::Debug for Averaged<'_, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Averaged")
            .field("local", &self.local)
            .field("rank", &self.comm.rank())
            .field("n_total", &self.n_total)
            .finish()
    }
}

impl<'c, A> Averaged<'c, A> {
    /// `local` on this rank's shard of a problem of `n_total` examples over `comm`.
    pub fn new(local: A, comm: &'c dyn Collective, n_total: usize) -> Self {
        Self {
            local,
            comm,
            n_total,
            last: Cell::new(None),
        }
    }
}

/// One rank's state: the solver's own, the rounds taken and the agreed output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AveragedState<L> {
    /// The solver's state on this rank.
    pub local: L,
    /// Rounds taken (each a local epoch on every rank: one pass over the data).
    pub rounds: u64,
    /// The shard-weighted average of the ranks' outputs.
    pub agreed: Vec<f64>,
}

/// `share · v` summed over the ranks, `share` this rank's fraction of the examples.
fn average(comm: &dyn Collective, share: f64, v: Vec<f64>) -> Result<Vec<f64>, OptimError> {
    let mut v: Vec<f64> = v.iter().map(|x| share * x).collect();
    comm.allreduce_sum(&mut v)?;
    Ok(v)
}

impl<A> Averaged<'_, A> {
    /// This rank's fraction of the examples.
    fn share<P>(&self, problem: &P) -> f64
    where
        A: Averaging<P>,
    {
        self.local.n_local(problem) as f64 / self.n_total as f64
    }

    fn certified<P>(
        &self,
        problem: &P,
        st: &AveragedState<A::Local>,
    ) -> Result<(f64, f64), OptimError>
    where
        A: Averaging<P>,
    {
        if let Some((round, objective, dual)) = self.last.get()
            && round == st.rounds
        {
            return Ok((objective, dual));
        }
        let (objective, dual) = self
            .local
            .certify(self.comm, problem, &st.agreed, self.n_total)?;
        self.last.set(Some((st.rounds, objective, dual)));
        Ok((objective, dual))
    }
}

impl<A: Averaging<P>, P> Solver<P> for Averaged<'_, A> {
    type State = AveragedState<A::Local>;
    type Output = A::Output;

    fn init(&mut self, problem: &P) -> Result<Self::State, OptimError> {
        let local = self.local.init_local(problem)?;
        let share = self.share(problem);
        let agreed = average(self.comm, share, self.local.local_output(problem, &local))?;
        Ok(AveragedState {
            local,
            rounds: 0,
            agreed,
        })
    }

    fn step(&mut self, problem: &P, st: &mut Self::State) -> Result<(), OptimError> {
        let share = self.share(problem);
        self.local.epoch(problem, &mut st.local)?;
        let v = average(self.comm, share, self.local.current(&st.local))?;
        self.local.set_current(&mut st.local, &v);
        st.agreed = average(
            self.comm,
            share,
            self.local.local_output(problem, &st.local),
        )?;
        st.rounds += 1;
        Ok(())
    }

    fn progress(&self, _problem: &P, st: &Self::State) -> Progress {
        Progress {
            iteration: st.rounds,
            epoch: st.rounds as f64,
        }
    }

    fn output(&self, problem: &P, st: &Self::State) -> A::Output {
        self.local.to_output(problem, &st.agreed)
    }

    fn objective(&self, problem: &P, st: &Self::State) -> Result<f64, OptimError> {
        Ok(self.certified(problem, st)?.0)
    }

    fn certificate(
        &self,
        problem: &P,
        st: &Self::State,
        objective: f64,
    ) -> Result<Certificate, OptimError> {
        let (_, dual) = self.certified(problem, st)?;
        Ok(Certificate::of_dual(objective, dual))
    }
}
