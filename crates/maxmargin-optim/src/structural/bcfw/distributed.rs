//! BCFW over ranks: synchronous mini-batch block-coordinate Frank–Wolfe. Each round every rank takes one
//! Frank–Wolfe block step (with its exact line search, against its own copy of `w`) for each of its examples
//! in a seeded order; the summed change `(dw, dℓ)` of the dual point is allreduced and every rank takes the
//! step `t ∈ [0, 1]` that maximizes the dual `ℓ − λ/2‖w‖²` along it: `t = (dℓ − λ⟨w, dw⟩) / (λ‖dw‖²)`,
//! clipped (each block's move stays in its simplex on the segment). Each example's share `w_i` is kept dense,
//! within [`DENSE_SHARES_MAX_BYTES`] per rank. The primal needs one oracle pass and one more allreduce; the
//! stop is the certified relative gap, as one process's.

use super::*;
use crate::collective::{
    Collective, DistributedFit, NoCheckpoints, RoundCheckpoints, RoundStateRef, Rounds, Verdict,
    round_record,
};
use rand::seq::SliceRandom;

/// One block's move this round: example, step γ, the corner `(w_s, ℓ_s)` (sparse: a difference of joint
/// features).
/// One rank's BCFW state over ranks, what a round checkpoint holds: its examples' dense shares and their
/// losses, the agreed dual point `(w, ℓ)`, and the visiting order with the generator that shuffles it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BcfwRankState {
    shares: Vec<Vec<f64>>,
    share_loss: Vec<f64>,
    w: Vec<f64>,
    ell: f64,
    rng: rand_chacha::ChaCha8Rng,
    order: Vec<usize>,
}

struct Move {
    i: usize,
    gamma: f64,
    corner: SparseVec,
    loss: f64,
}

impl Bcfw {
    /// Trains on the shard `problem` (this rank's examples, with the λ of the whole problem) of a problem of
    /// `n_total` examples over `comm`; every rank calls it with the same parameters, space and dimension and
    /// ends with the same weights.
    ///
    /// # Errors
    /// [`OptimError::InvalidParam`] when the dense shares would not fit, the oracle's errors,
    /// [`OptimError::Collective`] when another rank failed.
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

    /// As [`Bcfw::train_distributed`], resuming from and writing checkpoints at round boundaries through
    /// `checkpoints` (every rank its own state; a resumed run ends with the same bits as one never stopped).
    ///
    /// # Errors
    /// As [`Bcfw::train_distributed`], and what `checkpoints` returns.
    pub fn train_distributed_with<S>(
        &self,
        comm: &dyn Collective,
        problem: &StructProblem<'_, S>,
        n_total: usize,
        limits: Rounds,
        checkpoints: &mut dyn RoundCheckpoints<BcfwRankState>,
    ) -> Result<DistributedFit<Vec<f64>>, OptimError>
    where
        S: OutputSpace,
        S::Output: Sync,
    {
        let (dim, lambda, n) = (problem.dim(), problem.lambda(), n_total as f64);
        let bytes = (problem.n_samples() as u128) * (dim as u128) * 8;
        if bytes > DENSE_SHARES_MAX_BYTES as u128 {
            return Err(invalid(
                "bcfw over ranks",
                format!(
                    "{} examples x {dim} weights on rank {}",
                    problem.n_samples(),
                    comm.rank()
                ),
                "keeps each example's share dense, which would not fit; use more ranks or --solver oneslack",
            ));
        }
        let started = std::time::Instant::now();
        let truth = problem.truth_features();
        let (mut st, mut trace, mut round, mut calls) = match checkpoints.resume()? {
            Some(r) => (r.state, r.trace, r.round, r.visited),
            None => {
                let seed =
                    self.params.seed ^ (comm.rank() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                let state = BcfwRankState {
                    shares: vec![vec![0.0; dim]; problem.n_samples()],
                    share_loss: vec![0.0; problem.n_samples()],
                    w: vec![0.0; dim],
                    ell: 0.0,
                    rng: crate::random::rng(seed),
                    order: (0..problem.n_samples()).collect(),
                };
                (state, Vec::new(), 0u64, 0.0)
            }
        };
        let stop = loop {
            if checkpoints.due(comm)? {
                checkpoints.save(RoundStateRef::new(&st, &trace, (round, calls, 0)))?;
            }
            let BcfwRankState {
                shares,
                share_loss,
                w,
                ell,
                rng,
                order,
            } = &mut st;
            if let Some(why) = limits.spent(round, calls, n) {
                break why;
            }
            round += 1;
            order.shuffle(rng);
            let mut local = w.clone();
            let mut moves = Vec::new();
            let mut dl = 0.0;
            let mut corner = vec![0.0; dim];
            for &i in order.iter() {
                let v = problem.oracle(&local, i)?;
                // The corner: w_s = (ψ(y_i) − ψ(ŷ))/(λn), ℓ_s = Δ(y_i, ŷ)/n.
                corner.fill(0.0);
                truth[i].as_row().axpy(1.0 / (lambda * n), &mut corner);
                let (x, yh) = (&problem.x()[i], &v.output);
                problem
                    .space()
                    .add_joint_feature(x, yh, -1.0 / (lambda * n), &mut corner);
                let loss = v.loss / n;
                let (mut num, mut den) = (share_loss[i] - loss, 0.0);
                for ((c, s), l) in corner.iter().zip(&shares[i]).zip(&local) {
                    let d = s - c;
                    num -= lambda * d * l;
                    den += d * d;
                }
                // γ maximizing the dual along the block's segment towards the corner.
                let gamma = if den > 0.0 {
                    (-num / (lambda * den)).clamp(0.0, 1.0)
                } else {
                    1.0
                };
                if gamma > 0.0 {
                    for ((l, c), s) in local.iter_mut().zip(&corner).zip(&shares[i]) {
                        *l += gamma * (c - s);
                    }
                    dl += gamma * (loss - share_loss[i]);
                    moves.push(Move {
                        i,
                        gamma,
                        corner: SparseVec::from_dense(&corner).unwrap_or_default(),
                        loss,
                    });
                }
            }
            let mut buf: Vec<f64> = local.iter().zip(w.iter()).map(|(a, b)| a - b).collect();
            buf.extend([dl, order.len() as f64]);
            comm.allreduce_sum(&mut buf)?;
            calls += buf[dim + 1];
            let dw = &buf[..dim];
            let quad = lambda * dw.iter().map(|v| v * v).sum::<f64>();
            let slope = buf[dim] - lambda * w.iter().zip(dw).map(|(a, b)| a * b).sum::<f64>();
            let t = if quad > 0.0 {
                (slope / quad).clamp(0.0, 1.0)
            } else {
                1.0
            };
            for (x, d) in w.iter_mut().zip(dw) {
                *x += t * d;
            }
            *ell += t * buf[dim];
            for m in moves {
                let step = t * m.gamma;
                // w_i ← (1 − step) w_i + step w_s.
                for s in shares[m.i].iter_mut() {
                    *s *= 1.0 - step;
                }
                m.corner.as_row().axpy(step, &mut shares[m.i]);
                share_loss[m.i] += step * (m.loss - share_loss[m.i]);
            }
            if !limits.due(round, calls, n) {
                continue;
            }
            let mut hinge = [problem.oracle_all(w)?.iter().map(|v| v.hinge).sum::<f64>()];
            comm.allreduce_sum(&mut hinge)?;
            let sq = norm_sq(w);
            let (primal, dual) = (0.5 * lambda * sq + hinge[0] / n, *ell - 0.5 * lambda * sq);
            let record = round_record(primal, dual, (round, calls / n), started)?;
            let verdict = limits.verdict(&record, false, 0.0);
            trace.push(record);
            if let Verdict::Stop(why) = verdict {
                break why;
            }
        };
        checkpoints.save(RoundStateRef::new(&st, &trace, (round, calls, 0)))?;
        let Some(last) = trace.last() else {
            return Err(OptimError::NoExamples);
        };
        Ok(DistributedFit {
            output: st.w,
            objective: last.objective,
            trace,
            stop,
            rounds: round,
            epochs: calls / n,
        })
    }
}
