//! BCFW over ranks, a solver the trainer runs (`Trainer::resume_over`): synchronous mini-batch
//! block-coordinate Frank–Wolfe. Each round every rank takes one
//! Frank–Wolfe block step (with its exact line search, against its own copy of `w`) for each of its examples
//! in a seeded order; the summed change `(dw, dℓ)` of the dual point is allreduced and every rank takes the
//! step `t ∈ [0, 1]` that maximizes the dual `ℓ − λ/2‖w‖²` along it: `t = (dℓ − λ⟨w, dw⟩) / (λ‖dw‖²)`,
//! clipped (each block's move stays in its simplex on the segment). Each example's share `w_i` is kept dense,
//! within [`DENSE_SHARES_MAX_BYTES`] per rank. The primal needs one oracle pass and one more allreduce,
//! taken every `gap_every` passes as one process does; the stop is the certified relative gap, as one
//! process's.

use super::*;
use crate::collective::Collective;
use rand::seq::SliceRandom;

/// One rank's BCFW state over ranks, what its checkpoint holds: its examples' dense shares and their
/// losses, the agreed dual point `(w, ℓ)`, the visiting order with the generator that shuffles it, the
/// rounds and oracle calls over all ranks, and the last exact certificate `(round, primal, dual, gap)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BcfwRankState {
    shares: Vec<Vec<f64>>,
    share_loss: Vec<f64>,
    w: Vec<f64>,
    ell: f64,
    rng: rand_chacha::ChaCha8Rng,
    order: Vec<usize>,
    round: u64,
    calls: f64,
    next_gap: f64,
    last: Option<(u64, f64, f64, f64)>,
}

/// BCFW on one rank's shard of a problem spread over the ranks of a [`Collective`].
pub type BcfwRanks<'c> = crate::collective::OverRanks<'c, Bcfw>;

/// One block's move this round: example, step γ, the corner `(w_s, ℓ_s)` (sparse: a difference of joint
/// features).
struct Move {
    i: usize,
    gamma: f64,
    corner: SparseVec,
    loss: f64,
}

impl Bcfw {
    /// This solver over the ranks of `comm`, each rank training on its shard (with the λ of the whole
    /// problem) of a problem of `n_total` examples; every rank uses the same parameters, space and dimension
    /// and ends with the same weights.
    pub fn over_ranks(self, comm: &dyn Collective, n_total: usize) -> BcfwRanks<'_> {
        BcfwRanks::new(self, comm, n_total)
    }
}

impl BcfwRanks<'_> {
    /// One round of block steps on every rank and the common step along their sum.
    fn round<S>(
        &self,
        problem: &StructProblem<'_, S>,
        st: &mut BcfwRankState,
    ) -> Result<(), OptimError>
    where
        S: OutputSpace,
        S::Output: Sync,
    {
        let (dim, lambda, n) = (problem.dim(), problem.lambda(), self.n_total as f64);
        let truth = problem.truth_features();
        let BcfwRankState {
            shares,
            share_loss,
            w,
            rng,
            order,
            ..
        } = st;
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
        self.comm.allreduce_sum(&mut buf)?;
        st.calls += buf[dim + 1];
        st.round += 1;
        let dw = &buf[..dim];
        let quad = lambda * dw.iter().map(|v| v * v).sum::<f64>();
        let slope = buf[dim] - lambda * st.w.iter().zip(dw).map(|(a, b)| a * b).sum::<f64>();
        let t = if quad > 0.0 {
            (slope / quad).clamp(0.0, 1.0)
        } else {
            1.0
        };
        for (x, d) in st.w.iter_mut().zip(dw) {
            *x += t * d;
        }
        st.ell += t * buf[dim];
        for m in moves {
            let step = t * m.gamma;
            // w_i ← (1 − step) w_i + step w_s.
            for s in st.shares[m.i].iter_mut() {
                *s *= 1.0 - step;
            }
            m.corner.as_row().axpy(step, &mut st.shares[m.i]);
            st.share_loss[m.i] += step * (m.loss - st.share_loss[m.i]);
        }
        Ok(())
    }

    /// The exact certificate of the agreed point: one oracle pass per rank and one allreduce.
    fn certify<S>(
        &self,
        problem: &StructProblem<'_, S>,
        st: &mut BcfwRankState,
    ) -> Result<(), OptimError>
    where
        S: OutputSpace,
        S::Output: Sync,
    {
        let lambda = problem.lambda();
        let mut hinge = [problem
            .oracle_all(&st.w)?
            .iter()
            .map(|v| v.hinge)
            .sum::<f64>()];
        self.comm.allreduce_sum(&mut hinge)?;
        let sq = norm_sq(&st.w);
        let (primal, dual) = (
            0.5 * lambda * sq + hinge[0] / self.n_total as f64,
            st.ell - 0.5 * lambda * sq,
        );
        st.last = Some((st.round, primal, dual, primal - dual));
        Ok(())
    }
}

impl<'a, S> Solver<StructProblem<'a, S>> for BcfwRanks<'_>
where
    S: OutputSpace,
    S::Output: Sync,
{
    type State = BcfwRankState;
    type Output = Vec<f64>;

    fn init(&mut self, problem: &StructProblem<'a, S>) -> Result<BcfwRankState, OptimError> {
        let dim = problem.dim();
        let bytes = (problem.n_samples() as u128) * (dim as u128) * 8;
        if bytes > DENSE_SHARES_MAX_BYTES as u128 {
            return Err(invalid(
                "bcfw over ranks",
                format!(
                    "{} examples x {dim} weights on rank {}",
                    problem.n_samples(),
                    self.comm.rank()
                ),
                "keeps each example's share dense, which would not fit; use more ranks or --solver oneslack",
            ));
        }
        let seed =
            self.solver.params.seed ^ (self.comm.rank() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        Ok(BcfwRankState {
            shares: vec![vec![0.0; dim]; problem.n_samples()],
            share_loss: vec![0.0; problem.n_samples()],
            w: vec![0.0; dim],
            ell: 0.0,
            rng: crate::random::rng(seed),
            order: (0..problem.n_samples()).collect(),
            round: 0,
            calls: 0.0,
            next_gap: self.solver.params.gap_every,
            last: None,
        })
    }

    fn step(
        &mut self,
        problem: &StructProblem<'a, S>,
        st: &mut BcfwRankState,
    ) -> Result<(), OptimError> {
        self.round(problem, st)?;
        if st.calls / self.n_total as f64 >= st.next_gap - 1e-12 {
            st.next_gap += self.solver.params.gap_every;
            self.certify(problem, st)?;
        }
        Ok(())
    }

    fn progress(&self, _problem: &StructProblem<'a, S>, st: &BcfwRankState) -> Progress {
        Progress {
            iteration: st.round,
            epoch: st.calls / self.n_total as f64,
        }
    }

    fn output(&self, _problem: &StructProblem<'a, S>, st: &BcfwRankState) -> Vec<f64> {
        st.w.clone()
    }

    fn objective(&self, problem: &StructProblem<'a, S>, st: &BcfwRankState) -> f64 {
        self.try_objective(problem, st).unwrap_or(f64::NAN)
    }

    /// The last certificate's primal when no round has been taken since, else one oracle pass per rank and
    /// one allreduce.
    fn try_objective(
        &self,
        problem: &StructProblem<'a, S>,
        st: &BcfwRankState,
    ) -> Result<f64, OptimError> {
        if let Some((round, primal, _, _)) = st.last
            && round == st.round
        {
            return Ok(primal);
        }
        let mut st = st.clone();
        self.certify(problem, &mut st)?;
        Ok(st.last.map_or(f64::NAN, |l| l.1))
    }

    fn certificate(
        &self,
        problem: &StructProblem<'a, S>,
        st: &BcfwRankState,
        objective: f64,
    ) -> Certificate {
        let dual = st.ell - 0.5 * problem.lambda() * norm_sq(&st.w);
        Certificate {
            dual: Some(dual),
            gap: Some(objective - dual),
            active_constraints: None,
            oracle_calls: None,
        }
    }

    fn finish(&mut self, problem: &StructProblem<'a, S>, mut st: BcfwRankState) -> BcfwRankState {
        if st.last.is_none_or(|l| l.0 != st.round) && self.certify(problem, &mut st).is_err() {
            st.last = None;
        }
        st
    }

    fn stop(&self, st: &BcfwRankState) -> Option<StopReason> {
        let tol = self.solver.params.gap_tolerance?;
        let (_, primal, _, gap) = st.last?;
        (gap <= tol * primal.abs()).then_some(StopReason::Converged)
    }
}
