//! The Crammer–Singer dual over ranks, as binary DCD's (see `dcd::distributed`): each round every rank runs
//! one pass of the exact block steps over its examples against its own copy of `W`, the changes `dW` and
//! `Σ Δ·dα` are summed by one allreduce of `dK + 2` numbers, and every rank takes the step `t ∈ [0, 1]`
//! that maximizes the dual `−½‖W‖² − Σ Δ α` along the summed direction:
//! `t = −(⟨W, dW⟩ + Σ Δ dα) / ‖dW‖²`, clipped (each block's move stays feasible on the segment). No
//! shrinking (its per-class bounds do not survive a step `t < 1`). The run stops when every rank's blocks
//! pass the violation test and the certified gap is within the target, or on the gap at an evaluation, or
//! on the budget.

use super::*;
use crate::collective::{
    Collective, DistributedFit, NoCheckpoints, RoundCheckpoints, RoundStateRef, Rounds, Verdict,
};
use crate::trainer::TraceRecord;

impl CrammerSinger {
    /// Trains on the shard `problem` (this rank's examples, with the λ of the whole problem) of a problem
    /// of `n_total` examples over `comm`; every rank calls it with the same parameters, space and dimension
    /// and ends with the same weights (label-major, as [`Solver::output`]).
    ///
    /// # Errors
    /// As [`Solver::init`], [`OptimError::Collective`] when another rank failed, [`OptimError::NonFinite`].
    pub fn train_distributed(
        &self,
        comm: &dyn Collective,
        problem: &StructProblem<'_, MulticlassSpace>,
        n_total: usize,
        limits: Rounds,
    ) -> Result<DistributedFit<Vec<f64>>, OptimError> {
        self.train_distributed_with(comm, problem, n_total, limits, &mut NoCheckpoints)
    }

    /// As [`CrammerSinger::train_distributed`], resuming from and writing checkpoints at round boundaries
    /// through `checkpoints` (every rank its own state; a resumed run ends with the same bits as one never
    /// stopped).
    ///
    /// # Errors
    /// As [`CrammerSinger::train_distributed`], and what `checkpoints` returns.
    pub fn train_distributed_with(
        &self,
        comm: &dyn Collective,
        problem: &StructProblem<'_, MulticlassSpace>,
        n_total: usize,
        limits: Rounds,
        checkpoints: &mut dyn RoundCheckpoints<CrammerSingerState>,
    ) -> Result<DistributedFit<Vec<f64>>, OptimError> {
        let started = std::time::Instant::now();
        let mut solver = self.clone();
        solver.params.shrinking = false;
        solver.gap_target = None;
        solver.n_total = Some(n_total);
        let k = problem.space().n_classes();
        let (mut st, mut trace, mut tightened, mut round, mut visited) =
            match checkpoints.resume()? {
                Some(r) => (r.state, r.trace, r.tightened, r.round, r.visited),
                None => (solver.init(problem)?, Vec::new(), 0, 0u64, 0.0),
            };
        let base_epsilon = solver.params.epsilon;
        solver.params.epsilon = base_epsilon / 10f64.powi(tightened);
        let stop = loop {
            if checkpoints.due(comm)? {
                checkpoints.save(RoundStateRef::new(&st, &trace, (round, visited, tightened)))?;
            }
            if let Some(why) = limits.spent(round, visited, n_total as f64) {
                break why;
            }
            round += 1;
            let (alpha0, w0, seen) = (st.alpha.clone(), st.w.clone(), st.visited);
            solver.step(problem, &mut st)?;
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
            comm.allreduce_sum(&mut buf)?;
            let mut open = [f64::from(u8::from(!st.converged))];
            comm.allreduce_max(&mut open)?;
            let passed = open[0] == 0.0;
            st.converged = false;
            visited += buf[m + 1];
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
            if !(passed || limits.due(round, visited, n_total as f64)) {
                continue;
            }
            let record = solver.certify(
                comm,
                problem,
                &st,
                n_total,
                (round, visited / n_total as f64),
                started,
            )?;
            let verdict = limits.verdict(&record, passed, solver.params.epsilon);
            trace.push(record);
            match verdict {
                Verdict::Stop(why) => break why,
                Verdict::Tighten => {
                    tightened += 1;
                    solver.params.epsilon = base_epsilon / 10f64.powi(tightened);
                }
                Verdict::Go => {}
            }
        };
        checkpoints.save(RoundStateRef::new(&st, &trace, (round, visited, tightened)))?;
        let Some(last) = trace.last() else {
            return Err(OptimError::NoExamples);
        };
        Ok(DistributedFit {
            output: solver.output(problem, &st),
            objective: last.objective,
            trace,
            stop,
            rounds: round,
            epochs: visited / n_total as f64,
        })
    }

    /// The global primal, dual and gap from one allreduce of the local weighted hinge sum and `Σ Δ α`.
    fn certify(
        &self,
        comm: &dyn Collective,
        problem: &StructProblem<'_, MulticlassSpace>,
        st: &CrammerSingerState,
        n_total: usize,
        (round, epochs): (u64, f64),
        started: std::time::Instant,
    ) -> Result<TraceRecord, OptimError> {
        let k = problem.space().n_classes();
        let w = self.output(problem, st);
        let loss: f64 = problem
            .oracle_all(&w)?
            .iter()
            .zip(problem.y())
            .enumerate()
            .map(|(i, (v, &y))| self.weight(i, y as usize) * v.hinge)
            .sum();
        let linear: f64 = problem
            .y()
            .iter()
            .enumerate()
            .map(|(i, &y)| {
                (0..k)
                    .map(|m| cost_at(&st.cost, k, y as usize, m) * st.alpha[i * k + m])
                    .sum::<f64>()
            })
            .sum();
        let mut sums = [loss, linear];
        comm.allreduce_sum(&mut sums)?;
        let lambda = problem.lambda();
        let norm: f64 = st.w.iter().map(|v| v * v).sum();
        let objective = 0.5 * lambda * norm + sums[0] / n_total as f64;
        let dual = lambda * (-0.5 * norm - sums[1]);
        crate::collective::round_record(objective, dual, (round, epochs), started)
    }
}
