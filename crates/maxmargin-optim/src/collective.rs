//! The collective operations a bulk-synchronous solver needs, and two of their implementations: one process
//! ([`Single`]) and threads as ranks ([`ThreadRanks`], so the distributed protocols run in ordinary tests).
//! The MPI implementation lives in the facade behind its `mpi` feature; this crate carries no transport.
//! Solvers over ranks are ordinary [`Solver`](crate::Solver)s whose steps are rounds; the trainer runs them
//! (`Trainer::resume_over`), so the loop, its budgets and its checkpoints are one process's.
//!
//! Every operation is called by every rank in the same order with buffers of the same length. Sums are
//! formed in rank order (or by the root and broadcast), so every rank holds the same bits and the same
//! number of ranks gives the same result on every run.

use crate::error::OptimError;
use std::sync::{Arc, Condvar, Mutex};

/// Rank, size, and the collective operations over `f64` buffers.
pub trait Collective {
    /// This process's rank, `0..size`.
    fn rank(&self) -> usize;
    /// The number of ranks.
    fn size(&self) -> usize;
    /// Replaces `buf` on every rank with the element-wise sum over the ranks.
    ///
    /// # Errors
    /// [`OptimError::Collective`] when another rank failed.
    fn allreduce_sum(&self, buf: &mut [f64]) -> Result<(), OptimError>;
    /// Replaces `buf` on every rank with the element-wise maximum over the ranks.
    ///
    /// # Errors
    /// As [`Collective::allreduce_sum`].
    fn allreduce_max(&self, buf: &mut [f64]) -> Result<(), OptimError>;
    /// Copies rank `root`'s `buf` into every rank's.
    ///
    /// # Errors
    /// As [`Collective::allreduce_sum`].
    fn broadcast(&self, buf: &mut [f64], root: usize) -> Result<(), OptimError>;
}

/// Solver `S` on one rank's shard of a problem of `n_total` examples spread over the ranks of a
/// [`Collective`]: what `Dcd::over_ranks`, `CrammerSinger::over_ranks`, `Bcfw::over_ranks`,
/// `NSlack::over_ranks` and `OneSlack::over_ranks` return, a [`Solver`](crate::Solver) whose steps are rounds, run by
/// `Trainer::resume_over`.
#[derive(Clone, Copy)]
pub struct OverRanks<'c, S> {
    pub(crate) solver: S,
    pub(crate) comm: &'c dyn Collective,
    pub(crate) n_total: usize,
}

impl<'c, S> OverRanks<'c, S> {
    pub(crate) fn new(solver: S, comm: &'c dyn Collective, n_total: usize) -> Self {
        Self {
            solver,
            comm,
            n_total,
        }
    }
}

impl<S: std::fmt::Debug> std::fmt::Debug for OverRanks<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OverRanks")
            .field("solver", &self.solver)
            .field("rank", &self.comm.rank())
            .field("size", &self.comm.size())
            .field("n_total", &self.n_total)
            .finish()
    }
}

/// One process: rank 0 of 1, every operation leaves the buffer as it is.
#[derive(Debug, Clone, Copy, Default)]
pub struct Single;

impl Collective for Single {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn allreduce_sum(&self, _: &mut [f64]) -> Result<(), OptimError> {
        Ok(())
    }
    fn allreduce_max(&self, _: &mut [f64]) -> Result<(), OptimError> {
        Ok(())
    }
    fn broadcast(&self, _: &mut [f64], _: usize) -> Result<(), OptimError> {
        Ok(())
    }
}

/// Threads of one process as ranks, meeting at a barrier that a failed rank opens for everyone (so a rank
/// that returns an error or panics ends the others' waits with an error, never a hang).
#[derive(Debug)]
pub struct ThreadRanks {
    rank: usize,
    group: Arc<Group>,
}

#[derive(Debug)]
struct Group {
    size: usize,
    state: Mutex<Meeting>,
    turn: Condvar,
}

#[derive(Debug)]
struct Meeting {
    slots: Vec<Vec<f64>>,
    arrived: usize,
    generation: u64,
    failed: Option<usize>,
}

impl ThreadRanks {
    /// Runs `work` on `size` threads, one per rank, and returns each rank's result in rank order. A rank that
    /// fails (an error or a panic) makes every other rank's next collective operation fail.
    ///
    /// # Panics
    /// When `size` is 0, or again on this thread when a rank panicked.
    pub fn run<T: Send>(
        size: usize,
        work: impl Fn(&ThreadRanks) -> Result<T, OptimError> + Sync,
    ) -> Vec<Result<T, OptimError>> {
        assert!(size > 0, "at least one rank");
        let group = Arc::new(Group {
            size,
            state: Mutex::new(Meeting {
                slots: vec![Vec::new(); size],
                arrived: 0,
                generation: 0,
                failed: None,
            }),
            turn: Condvar::new(),
        });
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..size)
                .map(|rank| {
                    let comm = ThreadRanks {
                        rank,
                        group: Arc::clone(&group),
                    };
                    let work = &work;
                    s.spawn(move || {
                        let out =
                            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&comm)));
                        if !matches!(out, Ok(Ok(_))) {
                            comm.fail();
                        }
                        out
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| match h.join() {
                    Ok(Ok(result)) => result,
                    Ok(Err(panic)) | Err(panic) => std::panic::resume_unwind(panic),
                })
                .collect()
        })
    }

    fn fail(&self) {
        let mut m = self.group.state.lock().unwrap_or_else(|p| p.into_inner());
        m.failed.get_or_insert(self.rank);
        self.group.turn.notify_all();
    }

    /// Waits until every rank has arrived (or one has failed).
    fn barrier<'g>(
        &'g self,
        mut m: std::sync::MutexGuard<'g, Meeting>,
    ) -> Result<std::sync::MutexGuard<'g, Meeting>, OptimError> {
        let generation = m.generation;
        m.arrived += 1;
        if m.arrived == self.group.size {
            m.arrived = 0;
            m.generation += 1;
            self.group.turn.notify_all();
        } else {
            while m.generation == generation && m.failed.is_none() {
                m = self.group.turn.wait(m).unwrap_or_else(|p| p.into_inner());
            }
        }
        match m.failed {
            Some(r) if m.generation == generation => Err(OptimError::Collective {
                rank: self.rank,
                message: format!("rank {r} failed"),
            }),
            _ => Ok(m),
        }
    }

    /// Deposits `buf`, waits for all, combines every rank's deposit with `combine`, waits again.
    fn exchange(
        &self,
        buf: &mut [f64],
        combine: impl Fn(&[Vec<f64>], &mut [f64]),
    ) -> Result<(), OptimError> {
        let mut m = self.group.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(r) = m.failed {
            return Err(OptimError::Collective {
                rank: self.rank,
                message: format!("rank {r} failed"),
            });
        }
        m.slots[self.rank].clear();
        m.slots[self.rank].extend_from_slice(buf);
        let m = self.barrier(m)?;
        combine(&m.slots, buf);
        self.barrier(m).map(drop)
    }
}

impl Collective for ThreadRanks {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.group.size
    }
    fn allreduce_sum(&self, buf: &mut [f64]) -> Result<(), OptimError> {
        self.exchange(buf, |slots, out| {
            out.fill(0.0);
            for s in slots {
                for (o, v) in out.iter_mut().zip(s) {
                    *o += v;
                }
            }
        })
    }
    fn allreduce_max(&self, buf: &mut [f64]) -> Result<(), OptimError> {
        self.exchange(buf, |slots, out| {
            out.fill(f64::NEG_INFINITY);
            for s in slots {
                for (o, v) in out.iter_mut().zip(s) {
                    *o = o.max(*v);
                }
            }
        })
    }
    fn broadcast(&self, buf: &mut [f64], root: usize) -> Result<(), OptimError> {
        self.exchange(buf, |slots, out| out.copy_from_slice(&slots[root]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_sum_in_rank_order_and_a_failed_rank_ends_the_others_waits() {
        let sums = ThreadRanks::run(3, |c| {
            let mut b = [c.rank() as f64, 1.0];
            c.allreduce_sum(&mut b)?;
            let mut m = [c.rank() as f64];
            c.allreduce_max(&mut m)?;
            let mut r = [c.rank() as f64 + 10.0];
            c.broadcast(&mut r, 2)?;
            Ok((b, m[0], r[0]))
        });
        for s in sums {
            assert_eq!(s.unwrap(), ([3.0, 3.0], 2.0, 12.0));
        }
        let out = ThreadRanks::run(3, |c| {
            if c.rank() == 1 {
                return Err(OptimError::NoExamples);
            }
            let mut b = [1.0];
            c.allreduce_sum(&mut b)?;
            Ok(())
        });
        assert_eq!(out[1], Err(OptimError::NoExamples));
        for r in [0, 2] {
            assert!(
                matches!(&out[r], Err(OptimError::Collective { message, .. }) if message == "rank 1 failed")
            );
        }
    }
}
