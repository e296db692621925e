//! The collective operations a bulk-synchronous solver needs, and two of their implementations: one process
//! ([`Single`]) and threads as ranks ([`ThreadRanks`], so the distributed protocols run in ordinary tests).
//! The MPI implementation lives in the facade behind its `mpi` feature; this crate carries no transport.
//!
//! Every operation is called by every rank in the same order with buffers of the same length. Sums are
//! formed in rank order (or by the root and broadcast), so every rank holds the same bits and the same
//! number of ranks gives the same result on every run.

use crate::error::OptimError;
use crate::trainer::{StopReason, TraceRecord};
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

/// What a distributed run gives every rank.
#[derive(Debug, Clone, PartialEq)]
pub struct DistributedFit<O> {
    /// The weights, the same bits on every rank.
    pub output: O,
    /// The global primal objective (λ-form).
    pub objective: f64,
    /// Each evaluation: rounds, objective, certified dual and gap (seconds measured on this rank).
    pub trace: Vec<TraceRecord>,
    /// Why it stopped.
    pub stop: StopReason,
    /// Rounds taken (each one local pass on every rank).
    pub rounds: u64,
    /// Passes over the data: coordinate steps visited over all ranks, divided by n.
    pub epochs: f64,
}

/// A distributed loop's state at a round boundary on one rank: the solver's state and the loop's counters,
/// what a checkpoint holds so a resumed run ends with the same bits as one never stopped.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RoundState<S> {
    /// Rounds taken.
    pub round: u64,
    /// Steps over all ranks (passes × n).
    pub visited: f64,
    /// Times the stopping tolerance was tightened.
    pub tightened: i32,
    /// The evaluations so far.
    #[serde(with = "crate::trainer::run::every_field")]
    pub trace: Vec<TraceRecord>,
    /// This rank's solver state.
    pub state: S,
}

/// A [`RoundState`] borrowed from a running loop: what a checkpoint writes, without copying the solver's state
/// (BCFW's shares may be hundreds of MiB). It encodes as a `RoundState`, so a file written from one reads back
/// as the other.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct RoundStateRef<'a, S> {
    /// Rounds taken.
    pub round: u64,
    /// Steps over all ranks (passes × n).
    pub visited: f64,
    /// Times the stopping tolerance was tightened.
    pub tightened: i32,
    /// The evaluations so far.
    #[serde(serialize_with = "crate::trainer::run::every_field::serialize")]
    pub trace: &'a [TraceRecord],
    /// This rank's solver state.
    pub state: &'a S,
}

impl<'a, S> RoundStateRef<'a, S> {
    /// The state of a loop after `round` rounds and `visited` steps, its tolerance tightened `tightened` times.
    pub fn new(
        state: &'a S,
        trace: &'a [TraceRecord],
        (round, visited, tightened): (u64, f64, i32),
    ) -> Self {
        Self {
            round,
            visited,
            tightened,
            trace,
            state,
        }
    }
}

impl<S: Clone> RoundStateRef<'_, S> {
    /// An owned copy.
    pub fn to_owned_state(&self) -> RoundState<S> {
        RoundState {
            round: self.round,
            visited: self.visited,
            tightened: self.tightened,
            trace: self.trace.to_vec(),
            state: self.state.clone(),
        }
    }
}

/// Where a distributed loop resumes from and writes its round-boundary checkpoints (the facade's files).
pub trait RoundCheckpoints<S> {
    /// This rank's state to continue from, if the run resumes.
    ///
    /// # Errors
    /// A checkpoint that cannot be read or was made for another run.
    fn resume(&mut self) -> Result<Option<RoundState<S>>, OptimError>;
    /// Whether to write a checkpoint at this round boundary; every rank must get the same answer (decide on
    /// one rank and broadcast).
    ///
    /// # Errors
    /// [`OptimError::Collective`].
    fn due(&mut self, comm: &dyn Collective) -> Result<bool, OptimError>;
    /// Writes this rank's state (during the run when [`RoundCheckpoints::due`], and once at the end).
    ///
    /// # Errors
    /// [`OptimError::Checkpoint`].
    fn save(&mut self, state: RoundStateRef<'_, S>) -> Result<(), OptimError>;
}

/// No checkpoints.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoCheckpoints;

impl<S> RoundCheckpoints<S> for NoCheckpoints {
    fn resume(&mut self) -> Result<Option<RoundState<S>>, OptimError> {
        Ok(None)
    }

    fn due(&mut self, _comm: &dyn Collective) -> Result<bool, OptimError> {
        Ok(false)
    }

    fn save(&mut self, _state: RoundStateRef<'_, S>) -> Result<(), OptimError> {
        Ok(())
    }
}

/// One rank's side of training by averaging (Pegasos, SSG over ranks): a local epoch, its iterate as one
/// vector, and the certificate of an agreed output.
pub(crate) trait Averaging {
    /// The solver's state on this rank (what a checkpoint holds).
    type State;
    /// The state.
    fn state(&self) -> &Self::State;
    /// Continues from a checkpoint's state.
    fn restore(&mut self, state: Self::State);
    /// One pass of local steps over this rank's examples.
    fn epoch(&mut self) -> Result<(), OptimError>;
    /// The current iterate as one vector (the same length on every rank).
    fn current(&self) -> Vec<f64>;
    /// Replaces the current iterate.
    fn set_current(&mut self, v: &[f64]);
    /// What this rank would return (an average of its iterates, or the last).
    fn output(&self) -> Vec<f64>;
    /// The global primal objective and dual bound of the agreed output (collective).
    fn certify(&self, comm: &dyn Collective, output: &[f64]) -> Result<(f64, f64), OptimError>;
}

/// Rounds of a local epoch on every rank, then the shard-weighted average of the iterates (`share` is this
/// rank's fraction of the examples), certified every `limits.eval_every` rounds and at the end; every rank
/// returns the same bits.
pub(crate) fn averaging_rounds<A: Averaging>(
    comm: &dyn Collective,
    local: &mut A,
    (share, n_total): (f64, usize),
    limits: Rounds,
    checkpoints: &mut dyn RoundCheckpoints<A::State>,
) -> Result<DistributedFit<Vec<f64>>, OptimError> {
    let started = std::time::Instant::now();
    let n = n_total as f64;
    let (mut trace, mut round, mut visited) = (Vec::new(), 0u64, 0.0);
    if let Some(r) = checkpoints.resume()? {
        (trace, round, visited) = (r.trace, r.round, r.visited);
        local.restore(r.state);
    }
    let agreed = |local: &A| -> Result<Vec<f64>, OptimError> {
        let mut v: Vec<f64> = local.output().iter().map(|x| share * x).collect();
        comm.allreduce_sum(&mut v)?;
        Ok(v)
    };
    let certify = |local: &A, output: &[f64], round, visited: f64| {
        let (objective, dual) = local.certify(comm, output)?;
        round_record(objective, dual, (round, visited / n), started)
    };
    let stop = loop {
        if checkpoints.due(comm)? {
            checkpoints.save(RoundStateRef::new(
                local.state(),
                &trace,
                (round, visited, 0),
            ))?;
        }
        if let Some(why) = limits.spent(round, visited, n) {
            break why;
        }
        round += 1;
        local.epoch()?;
        visited += n;
        let mut v: Vec<f64> = local.current().iter().map(|x| share * x).collect();
        comm.allreduce_sum(&mut v)?;
        local.set_current(&v);
        if !limits.due(round, visited, n) {
            continue;
        }
        let record = certify(local, &agreed(local)?, round, visited)?;
        let relative =
            record.gap.unwrap_or(f64::INFINITY) / record.objective.abs().max(f64::MIN_POSITIVE);
        trace.push(record);
        if relative <= limits.gap_tolerance {
            break StopReason::Gap;
        }
    };
    let output = agreed(local)?;
    if trace.last().is_none_or(|r| r.iteration != round) {
        trace.push(certify(local, &output, round, visited)?);
    }
    checkpoints.save(RoundStateRef::new(
        local.state(),
        &trace,
        (round, visited, 0),
    ))?;
    let objective = trace.last().map_or(f64::NAN, |r| r.objective);
    Ok(DistributedFit {
        output,
        objective,
        trace,
        stop,
        rounds: round,
        epochs: visited / n,
    })
}

/// The run's limits: passes, the relative gap to stop at, and evaluations every so many rounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rounds {
    /// Stop after this many passes over the data (coordinate steps visited over all ranks / n), as one
    /// process's epochs; with shrinking a round is often much less than a pass.
    pub max_epochs: f64,
    /// Stop after this many rounds (one process's DCD iterations).
    pub max_rounds: u64,
    /// Stop at a certified relative gap within this.
    pub gap_tolerance: f64,
    /// Certify every this many rounds (each costs one pass over the shard and one small allreduce).
    pub eval_every: u64,
}

/// What an evaluation of a distributed run calls for.
pub(crate) enum Verdict {
    /// Stop, for this reason.
    Stop(StopReason),
    /// The solver's own test passed with the gap above the target: divide ε by 10 and go on.
    Tighten,
    /// Go on.
    Go,
}

impl Rounds {
    /// The budget's stop once `round` rounds and `visited` coordinate steps (over all ranks, of a problem of
    /// `n` examples) are spent.
    pub(crate) fn spent(&self, round: u64, visited: f64, n: f64) -> Option<StopReason> {
        if visited >= self.max_epochs * n {
            Some(StopReason::MaxEpochs)
        } else if round >= self.max_rounds {
            Some(StopReason::MaxIterations)
        } else {
            None
        }
    }

    /// Whether round `round` ends with an evaluation: every `eval_every` rounds, and at the budget's end.
    pub(crate) fn due(&self, round: u64, visited: f64, n: f64) -> bool {
        round.is_multiple_of(self.eval_every.max(1)) || self.spent(round, visited, n).is_some()
    }

    /// Judges the evaluation just recorded: a certified relative gap within the target stops the run
    /// (converged when the solver's own test `passed` too); a passed test with a larger gap tightens ε, unless
    /// ε is at its floor already.
    pub(crate) fn verdict(&self, record: &TraceRecord, passed: bool, epsilon: f64) -> Verdict {
        let relative =
            record.gap.unwrap_or(f64::INFINITY) / record.objective.abs().max(f64::MIN_POSITIVE);
        if relative <= self.gap_tolerance {
            Verdict::Stop(if passed {
                StopReason::Converged
            } else {
                StopReason::Gap
            })
        } else if !passed {
            Verdict::Go
        } else if epsilon <= crate::dcd::MIN_EPSILON {
            Verdict::Stop(StopReason::Converged)
        } else {
            Verdict::Tighten
        }
    }
}

/// The trace record of a distributed evaluation at `round` (and `epochs` passes): the global primal and dual
/// every rank computed from the same sums, refused when not finite.
pub(crate) fn round_record(
    objective: f64,
    dual: f64,
    (round, epochs): (u64, f64),
    started: std::time::Instant,
) -> Result<TraceRecord, OptimError> {
    if !objective.is_finite() {
        return Err(OptimError::NonFinite {
            iteration: round,
            epoch: epochs,
            value: objective,
        });
    }
    Ok(TraceRecord {
        iteration: round,
        epoch: epochs,
        seconds: started.elapsed().as_secs_f64(),
        objective,
        dual: Some(dual),
        gap: Some(objective - dual),
        active_constraints: None,
        oracle_calls: None,
        step: None,
    })
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
