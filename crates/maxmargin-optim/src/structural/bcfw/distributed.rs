//! BCFW over ranks, a solver the trainer runs (`Trainer::resume_over`): synchronous mini-batch
//! block-coordinate steps with one process's own block step. Each round every rank takes block steps on a
//! small share of its shard ([`Bcfw`]'s step, Frank–Wolfe or pairwise as one process chooses, against its own
//! copy of `w`), the summed change `(dw, dℓ)` of the dual point is allreduced, and every rank takes the step
//! `t ∈ [0, 1]` that maximizes the dual `ℓ − λ/2‖w‖²` along it: `t = (dℓ − λ⟨w, dw⟩) / (λ‖dw‖²)`, clipped.
//! Each block the round moved then goes to `(1 − t)·before + t·after`, a convex combination of two points of
//! its domain (for pairwise atoms, the atoms of both, reweighted: `Shares::mix_block`), so the dual point
//! stays feasible and is the same combination; only those blocks are kept and mixed, so a round costs its
//! steps and a few passes over `w`, never the shard. The iterate is returned (no average over ranks). The
//! primal needs one oracle pass and one more allreduce, due every `gap_every` passes; as in one process, the
//! blocks' last measured gaps (their sum over the ranks rides on the round's allreduce), scaled as the last
//! certification found them, skip those far above the target and call one at a pass's end when within it.
//! With pairwise steps each rank tries its blocks' cached corners before the oracle, as one process does,
//! and rounds count the steps that called the oracle. The stop is the certified relative gap, as one
//! process's.

use super::round::{forget_calibration, round_step};
use super::*;
use crate::collective::Collective;

/// Rounds per pass over a shard (fewer when the weights are large beside the examples: `round_steps`).
/// On OCR fold 0 over 2 ranks to a 1% gap: 675 passes with a round per pass, 360 with 16 and 350 with 64
/// (Frank–Wolfe steps); with pairwise steps 175 with 16 and 150 with 64, against one process's 120 (all before
/// the ranks kept the cache; with it, 33 passes against one process's 30).
const ROUNDS_PER_PASS: usize = 64;

/// BCFW on one rank's shard of a problem spread over the ranks of a [`Collective`].
pub type BcfwRanks<'c> = crate::collective::OverRanks<'c, Bcfw>;

/// One rank's BCFW state over ranks, what its checkpoint holds: one process's state over this rank's
/// examples (its shares, its sampler; its `w` and `ℓ` the agreed ones), the rounds and oracle calls over all
/// ranks, when the next exact certificate is due, and the last one `(round, primal, dual, gap)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BcfwRankState {
    local: BcfwState,
    round: u64,
    calls: f64,
    next_gap: f64,
    last: Option<(u64, f64, f64, f64)>,
}

impl Bcfw {
    /// This solver over the ranks of `comm`, each rank training on its shard (with the λ of the whole
    /// problem) of a problem of `n_total` examples; every rank uses the same parameters, space and dimension
    /// and ends with the same weights. Each rank's blocks are visited in an order from the seed and its rank.
    pub fn over_ranks(self, comm: &dyn Collective, n_total: usize) -> BcfwRanks<'_> {
        let mut bcfw = self;
        bcfw.n_total = Some(n_total);
        bcfw.params.average = false;
        bcfw.params.gap_sampling = false;
        // Pairwise steps as one process takes them (`Steps::Auto`) while rounds are small shares of a pass,
        // whose line search stays near t = 1 (see `PAIRWISE_MAX_SHARE`, and `init`).
        bcfw.params.seed ^= (comm.rank() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        BcfwRanks::new(bcfw, comm, n_total)
    }
}

/// Block steps a rank takes per round on a shard of `n` examples whose true outputs' joint features have
/// `nnz` nonzeros in all, in `dim` dimensions: a [`ROUNDS_PER_PASS`]-th of its shard, and at least as many
/// as keep the round's own work (a few passes over `w`, the allreduce of `dim + 2` numbers) a fraction of its
/// steps' (a step costs about the nonzeros of its example's joint feature, times the oracle's factor): on
/// OCR a round's own work measured 52 µs, a block step 29 µs, about 8 nonzeros in `w`'s place per nonzero
/// of an example.
fn round_steps(n: usize, nnz: usize, dim: usize) -> usize {
    let n = n.max(1);
    let overhead = (dim * n).div_ceil(4 * nnz.max(1));
    n.div_ceil(ROUNDS_PER_PASS).max(overhead).clamp(1, n)
}

/// Rounds of at least this share of a pass take Frank–Wolfe steps: a pairwise step taken part of the way
/// (t < 1) keeps both its atoms, and rounds this large take every block part of the way (3 ranks on 120
/// OCR words, a round per pass, stalled at a 2.4e-3 gap with pairwise steps).
const PAIRWISE_MAX_SHARE: usize = 8;

impl BcfwRanks<'_> {
    /// One round: this rank's block steps, one allreduce of their change, the common step along the sum.
    /// Returns the sum over the ranks of their blocks' last measured gaps, once every block has one.
    fn round<S>(
        &self,
        problem: &StructProblem<'_, S>,
        st: &mut BcfwRankState,
    ) -> Result<Option<f64>, OptimError>
    where
        S: OutputSpace,
        S::Output: Sync,
    {
        let (dim, lambda) = (problem.dim(), problem.lambda());
        let local = &mut st.local;
        let w0 = local.w.clone();
        let nnz = local.psi_truth.iter().map(|p| p.as_row().nnz()).sum();
        let steps = round_steps(local.psi_truth.len(), nnz, dim);
        let round = self.solver.local_steps(problem, local, steps)?;
        let ell0 = round.ell0;
        let mut buf: Vec<f64> = local.w.iter().zip(&w0).map(|(a, b)| a - b).collect();
        // A rank whose blocks do not all have a gap yet sends NaN, and the sum is none.
        let estimate = Bcfw::estimated_gap(local).unwrap_or(f64::NAN);
        // Passes count the steps that called the oracle, as one process's do (the cache's come on top).
        buf.extend([
            local.ell - ell0,
            round.called as f64,
            estimate,
            f64::from(u8::from(round.converts)),
        ]);
        self.comm.allreduce_sum(&mut buf)?;
        st.calls += buf[dim + 1];
        st.round += 1;
        let dw = &buf[..dim];
        let quad = lambda * dw.iter().map(|v| v * v).sum::<f64>();
        let slope = buf[dim] - lambda * w0.iter().zip(dw).map(|(a, b)| a * b).sum::<f64>();
        let t = round_step(slope, quad);
        for ((w, w0), d) in local.w.iter_mut().zip(&w0).zip(dw) {
            *w = w0 + t * d;
        }
        local.ell = ell0 + t * buf[dim];
        self.solver.mix_round(problem, local, round, t);
        if buf[dim + 3] > 0.0 {
            forget_calibration(std::slice::from_mut(local));
        }
        Ok(Some(buf[dim + 2]).filter(|e| e.is_finite()))
    }

    /// The exact certificate `(round, primal, dual, gap)` of the agreed point: one oracle pass per rank and
    /// one allreduce.
    fn certificate_of<S>(
        &self,
        problem: &StructProblem<'_, S>,
        local: &BcfwState,
        round: u64,
    ) -> Result<(u64, f64, f64, f64), OptimError>
    where
        S: OutputSpace,
        S::Output: Sync,
    {
        let (lambda, w) = (problem.lambda(), &local.w);
        let mut hinge = [problem
            .oracle_all(w)?
            .iter()
            .map(|v| v.upper())
            .sum::<f64>()];
        self.comm.allreduce_sum(&mut hinge)?;
        let sq = norm_sq(w);
        let primal = 0.5 * lambda * sq + hinge[0] / self.n_total as f64;
        let dual = local.ell - 0.5 * lambda * sq;
        Ok((round, primal, dual, primal - dual))
    }
}

impl<'a, S: OutputSpace<Output: Sync>> Solver<StructProblem<'a, S>> for BcfwRanks<'_> {
    type State = BcfwRankState;
    type Output = Vec<f64>;

    fn init(&mut self, problem: &StructProblem<'a, S>) -> Result<BcfwRankState, OptimError> {
        problem.require_margin("bcfw")?;
        let (n, dim) = (problem.n_samples(), problem.dim());
        let nnz = problem
            .truth_features()
            .iter()
            .map(|p| p.as_row().nnz())
            .sum();
        if self.solver.params.steps == Steps::Auto
            && round_steps(n, nnz, dim).saturating_mul(PAIRWISE_MAX_SHARE) > n
        {
            self.solver.params.steps = Steps::FrankWolfe;
        }
        let local = self.solver.init(problem)?;
        Ok(BcfwRankState {
            local,
            round: 0,
            calls: 0.0,
            next_gap: self.solver.params.gap_every,
            last: None,
        })
    }

    /// This rank's blocks, checked as one process's state.
    fn check_state(
        &self,
        problem: &StructProblem<'a, S>,
        st: &BcfwRankState,
    ) -> Result<(), OptimError> {
        self.solver.check_state(problem, &st.local)
    }

    fn step(
        &mut self,
        problem: &StructProblem<'a, S>,
        st: &mut BcfwRankState,
    ) -> Result<(), OptimError> {
        let n = self.n_total as f64;
        let before = st.calls / n;
        let estimate = self.round(problem, st)?;
        let epochs = st.calls / n;
        // One process's rule, on the sums over the ranks, so every rank decides alike.
        let round = st.round;
        self.solver.after_round(
            std::slice::from_mut(&mut st.local),
            (before, epochs),
            (estimate, problem.lambda()),
            (&mut st.next_gap, &mut st.last),
            |local| self.certificate_of(problem, local, round),
        )
    }

    fn progress(&self, _problem: &StructProblem<'a, S>, st: &BcfwRankState) -> Progress {
        Progress {
            iteration: st.round,
            epoch: st.calls / self.n_total as f64,
        }
    }

    fn output(&self, _problem: &StructProblem<'a, S>, st: &BcfwRankState) -> Vec<f64> {
        st.local.w.clone()
    }

    /// The last certificate's primal when no round has been taken since, else one oracle pass per rank and
    /// one allreduce.
    fn objective(
        &self,
        problem: &StructProblem<'a, S>,
        st: &BcfwRankState,
    ) -> Result<f64, OptimError> {
        if let Some((round, primal, _, _)) = st.last
            && round == st.round
        {
            return Ok(primal);
        }
        Ok(self.certificate_of(problem, &st.local, st.round)?.1)
    }

    fn certificate(
        &self,
        problem: &StructProblem<'a, S>,
        st: &BcfwRankState,
        objective: f64,
    ) -> Result<Certificate, OptimError> {
        let dual = st.local.ell - 0.5 * problem.lambda() * norm_sq(&st.local.w);
        Ok(Certificate::of_dual(objective, dual))
    }

    fn finish(&mut self, problem: &StructProblem<'a, S>, mut st: BcfwRankState) -> BcfwRankState {
        if st.last.is_none_or(|l| l.0 != st.round) {
            st.last = self.certificate_of(problem, &st.local, st.round).ok();
        }
        st
    }

    fn stop(&self, st: &BcfwRankState) -> Option<StopReason> {
        self.solver.certified_stop(st.last)
    }
}
