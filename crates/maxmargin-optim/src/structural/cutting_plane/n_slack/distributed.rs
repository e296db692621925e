//! n-slack cutting planes over ranks, a solver the trainer runs (`Trainer::resume_over`): each round every
//! rank runs the loss-augmented oracle on its examples at the agreed `w`, finds which of them are violated
//! beyond their slack (from its own planes), and builds the planes of its new violating outputs; one
//! allreduce sums the hinges and the counts, a second gathers every rank's new planes; rank 0 alone keeps the
//! whole working set and takes one process's decision (`NSlack::decide_and_solve`: stop at a certified gap,
//! the ε test, the working-set QP) and broadcasts the new `w` with it. Rank `r` holding the `r`-th contiguous
//! share of the examples, rank 0 adds the planes in one process's order and solves the same QP, so any
//! number of ranks trains one process's weights; only the oracle calls are shared out (the QP is rank 0's
//! alone, as it is one thread's in one process).

use super::*;
use crate::collective::Collective;

/// n-slack on one rank's shard of a problem spread over the ranks of a [`Collective`].
pub type NSlackRanks<'c> = crate::collective::OverRanks<'c, NSlack>;

/// One rank's n-slack state over ranks: the agreed `w`; the working set of every rank's planes, numbered by
/// their examples' places in the whole problem (rank 0's; empty elsewhere), and whether its last QP was
/// solved; this rank's own planes (numbered within its shard: its slacks), outputs and true joint features;
/// ε's divisions; the rounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NSlackRankState<O> {
    w: Vec<f64>,
    set: WorkingSet,
    qp_solved: bool,
    mine: WorkingSet,
    outputs: Vec<Vec<O>>,
    psi_truth: Vec<SparseVec>,
    tightened: u32,
    round: u64,
    converged: bool,
}

impl NSlack {
    /// This solver over the ranks of `comm`, each rank training on its shard (with the λ of the whole
    /// problem) of a problem of `n_total` examples, rank `r` holding the `r`-th contiguous share; every rank
    /// uses the same parameters, space and dimension and ends with the same weights (rank 0's, broadcast).
    pub fn over_ranks(self, comm: &dyn Collective, n_total: usize) -> NSlackRanks<'_> {
        NSlackRanks::new(self, comm, n_total)
    }
}

/// Appends plane `(i, a, b)` to `buf` as `[i, b, nnz, indices…, values…]`.
fn encode(buf: &mut Vec<f64>, (i, a, b): &(usize, SparseVec, f64)) {
    let row = a.as_row();
    buf.extend([*i as f64, *b, row.nnz() as f64]);
    buf.extend(row.indices().iter().map(|&k| f64::from(k)));
    buf.extend_from_slice(row.values());
}

/// The planes of one rank's segment of the gathered buffer, their examples moved by `offset`; `None` when
/// the segment is not whole planes (the ranks disagree on the buffer: a transport fault).
fn decode(mut seg: &[f64], offset: usize, out: &mut Vec<(usize, SparseVec, f64)>) -> Option<()> {
    while let [i, b, nnz, rest @ ..] = seg {
        let nnz = *nnz as usize;
        let (idx, rest) = rest.split_at_checked(nnz)?;
        let (val, rest) = rest.split_at_checked(nnz)?;
        let idx = idx.iter().map(|&k| k as u32).collect();
        let a = SparseVec::new(idx, val.to_vec()).ok()?;
        out.push((offset + *i as usize, a, *b));
        seg = rest;
    }
    seg.is_empty().then_some(())
}

impl<'a, S: OutputSpace<Output: Sync>> Solver<StructProblem<'a, S>> for NSlackRanks<'_> {
    type State = NSlackRankState<S::Output>;
    type Output = Vec<f64>;

    /// The budget's gap tolerance reaches the solver of every rank, as in one process.
    fn set_budget(&mut self, budget: &crate::Budget) {
        self.solver.gap_target.adopt(budget);
    }

    fn set_deadline(&mut self, deadline: Option<std::time::Instant>) {
        self.solver.deadline = deadline;
    }

    fn init(&mut self, problem: &StructProblem<'a, S>) -> Result<Self::State, OptimError> {
        Ok(NSlackRankState {
            w: vec![0.0; problem.dim()],
            set: WorkingSet {
                without_gram: self.solver.params.qp == QpSolver::Smo,
                ..WorkingSet::default()
            },
            qp_solved: true,
            mine: WorkingSet {
                without_gram: true,
                ..WorkingSet::default()
            },
            outputs: vec![Vec::new(); problem.n_samples()],
            psi_truth: problem.truth_features(),
            tightened: 0,
            round: 0,
            converged: false,
        })
    }

    fn step(
        &mut self,
        problem: &StructProblem<'a, S>,
        st: &mut Self::State,
    ) -> Result<(), OptimError> {
        let (rank, size, n) = (self.comm.rank(), self.comm.size(), self.n_total);
        let (dim, here, lambda) = (problem.dim(), problem.n_samples(), problem.lambda());
        let eps = crate::gap_target::tightened(self.solver.params.epsilon, st.tightened);
        let v = problem.oracle_all(&st.w)?;
        let slacks = st.mine.slacks(here, &st.w);
        // Each rank's segment: its examples' upper bounds on the hinges (summed in example order, as one
        // process sums them), then its new planes; gathered by a sum in which every other rank's slots are 0.
        let mut segment: Vec<f64> = v.iter().map(|v| v.upper()).collect();
        let found = violations(problem, v, (&slacks, eps), &st.outputs, &st.psi_truth);
        for plane in &found.planes {
            encode(&mut segment, plane);
        }
        let mut head = vec![0.0; 1 + 2 * size];
        head[0] = found.violated as f64;
        head[1 + rank] = here as f64;
        head[1 + size + rank] = segment.len() as f64;
        self.comm.allreduce_sum(&mut head)?;
        let counts = shares(&head[1..=size], n)?;
        let lengths: Vec<usize> = head[1 + size..].iter().map(|&l| l as usize).collect();
        let start: usize = lengths[..rank].iter().sum();
        let mut gathered = vec![0.0; lengths.iter().sum()];
        gathered[start..start + segment.len()].copy_from_slice(&segment);
        if size > 1 {
            self.comm.allreduce_sum(&mut gathered)?;
        }
        st.round += 1;
        let mut out = vec![0.0; dim + 1];
        if rank == 0 {
            let (mut uppers, mut planes) = (Vec::with_capacity(n), Vec::new());
            let (mut at, mut offset) = (0, 0);
            for r in 0..size {
                let seg = &gathered[at..at + lengths[r]];
                uppers.extend_from_slice(&seg[..counts[r]]);
                decode(&seg[counts[r]..], offset, &mut planes).ok_or_else(|| {
                    OptimError::Collective {
                        rank,
                        message: format!("the planes gathered from rank {r} are not whole planes"),
                    }
                })?;
                at += lengths[r];
                offset += counts[r];
            }
            let primal = 0.5 * lambda * norm_sq(&st.w) + uppers.iter().sum::<f64>() / n as f64;
            let decision = if self
                .solver
                .certified(primal, st.round == 1, &st.set, lambda, &st.w)
            {
                Decision::Converged
            } else {
                let pass = Pass {
                    primal,
                    violated: head[0] as usize,
                };
                let held = Held {
                    w: &mut st.w,
                    set: &mut st.set,
                    qp_solved: &mut st.qp_solved,
                    tightened: st.tightened,
                };
                self.solver
                    .decide_and_solve((lambda, n), pass, planes, held)?
            };
            out[..dim].copy_from_slice(&st.w);
            out[dim] = decision.code();
        }
        self.comm.broadcast(&mut out, 0)?;
        let converged = Decision::receive(&out, &mut st.w, &mut st.converged, &mut st.tightened);
        // The planes joined rank 0's working set unless the pass was certified first (as in one process).
        if !converged {
            for ((i, a, b), output) in found.planes.into_iter().zip(found.outputs) {
                st.mine.add(a, b, i);
                st.outputs[i].push(output);
            }
        }
        Ok(())
    }

    fn progress(&self, _problem: &StructProblem<'a, S>, st: &Self::State) -> Progress {
        Progress {
            iteration: st.round,
            epoch: st.round as f64,
        }
    }

    fn output(&self, _problem: &StructProblem<'a, S>, st: &Self::State) -> Vec<f64> {
        st.w.clone()
    }

    /// The global primal from one oracle pass per rank, its hinges' upper bounds gathered and summed in
    /// example order (one process's sum, bit for bit).
    fn objective(
        &self,
        problem: &StructProblem<'a, S>,
        st: &Self::State,
    ) -> Result<f64, OptimError> {
        let (rank, size, n) = (self.comm.rank(), self.comm.size(), self.n_total);
        let found = problem.oracle_all(&st.w)?;
        let mut counts = vec![0.0; size];
        counts[rank] = found.len() as f64;
        self.comm.allreduce_sum(&mut counts)?;
        let counts = shares(&counts, n)?;
        let start: usize = counts[..rank].iter().sum();
        let mut uppers = vec![0.0; n];
        for (u, v) in uppers[start..].iter_mut().zip(&found) {
            *u = v.upper();
        }
        if size > 1 {
            self.comm.allreduce_sum(&mut uppers)?;
        }
        Ok(0.5 * problem.lambda() * norm_sq(&st.w) + uppers.iter().sum::<f64>() / n as f64)
    }

    /// Rank 0's working-set dual and size, broadcast.
    fn certificate(
        &self,
        problem: &StructProblem<'a, S>,
        st: &Self::State,
        objective: f64,
    ) -> Result<Certificate, OptimError> {
        let mut held = [
            st.set.dual(problem.lambda(), &st.w),
            st.set.planes.len() as f64,
        ];
        self.comm.broadcast(&mut held, 0)?;
        Ok(Certificate {
            active_constraints: Some(held[1] as usize),
            ..Certificate::of_dual(objective, held[0])
        })
    }

    fn stop(&self, st: &Self::State) -> Option<StopReason> {
        st.converged.then_some(StopReason::Converged)
    }

    /// Lengths and values of `w`, the working sets (rank 0's over the whole problem's examples, this rank's
    /// over its shard's), the outputs kept per example, and the true outputs' features.
    fn check_state(
        &self,
        problem: &StructProblem<'a, S>,
        st: &Self::State,
    ) -> Result<(), OptimError> {
        let (dim, here) = (problem.dim(), problem.n_samples());
        crate::error::fits(st.w.len() == dim && crate::error::all_finite(&st.w), "w")?;
        crate::error::fits(st.set.fits(dim, self.n_total), "the working set")?;
        crate::error::fits(
            st.mine.fits(dim, here) && st.outputs.len() == here,
            "this rank's planes and outputs",
        )?;
        crate::error::fits(
            st.psi_truth == problem.truth_features(),
            "the true outputs' features (a checkpoint of other data?)",
        )
    }
}

/// The ranks' example counts from their allreduced slots, which must add up to the whole problem's `n` (a
/// caller's `n_total` that is not the shards' sum would number planes beyond the working set's groups); every
/// rank sees the same counts, so every rank returns the same error.
fn shares(slots: &[f64], n: usize) -> Result<Vec<usize>, OptimError> {
    let counts: Vec<usize> = slots.iter().map(|&c| c as usize).collect();
    let total: usize = counts.iter().sum();
    if total != n {
        return Err(crate::error::invalid(
            "n_total",
            format!("{n} (the ranks' shares hold {total} examples in all)"),
            "must be the sum of the ranks' example counts",
        ));
    }
    Ok(counts)
}
