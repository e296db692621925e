//! BCFW on blocks of examples in one process, on every core: the rounds of BCFW over ranks
//! ([`super::distributed`]) with the examples cut into `B` contiguous blocks instead of shards on ranks.
//! Each round every block takes one process's block steps (Frank–Wolfe or pairwise, with its cache) on a
//! [`ROUNDS_PER_PASS`]-th of its examples (at least [`MIN_ROUND_STEPS`], at most a
//! [`MAX_ROUND_SHARE`]-th) against its own copy of `w`, all blocks at once on the thread pool; their
//! changes are summed in block order over the entries of `w` they wrote (so a round costs its steps, not
//! `w`'s width), and every block takes the exact step along the sum ([`super::round`]). The blocks, their
//! orders and the sums depend on `B` and the seed only, so the model is the same bits for any thread
//! count; one thread takes the blocks one after the other. Every block keeps at least
//! [`MIN_BLOCK_EXAMPLES`] examples.
//!
//! As over ranks, the iterate is returned (no average is kept) and blocks are drawn by permutation; a pass
//! is `n` steps that called the oracle, and certifications are one process's, on the whole problem.
//!
//! What it costs (`cargo bench -p maxmargin-benches --bench bcfw_blocks`, two cores): a round's own work
//! (the blocks' shares kept from before it, the entries written, their sum) made `--blocks 2` on one thread
//! 1.35–1.7× one process's time, and two threads won that back and no more: 0.97× on CoNLL-2000 (11 passes
//! against 9), 1.10× on the 100-class set (the same 33 passes), 1.27× on OCR (35 against 30). Coupled
//! examples cost passes as blocks grow (CoNLL-2000: 25 passes with 4 blocks). Blocks pay where steps are
//! dear beside a round's meeting and examples share few features; the sequential method stays the default.

use super::round::{forget_calibration, round_step};
use super::*;
use crate::structural::problem::StructProblem;
use rayon::prelude::*;

/// Rounds per pass over a block's examples: on OCR fold 0 over 2 ranks, 64 rounds a pass took the passes of
/// one process (see [`super::distributed`]).
const ROUNDS_PER_PASS: usize = 64;

/// Examples per block at least (with more than one block): on 60 short sequences, 3 blocks left a relative
/// gap of 1.1·10⁻⁴ after 1,000 passes and 60 blocks 2.7·10⁻³, where one process reached 4·10⁻⁷.
const MIN_BLOCK_EXAMPLES: usize = 16;

/// A round's steps per block are at most this fraction of its examples (iris, 50 rows a block: rounds of a
/// third of a block left a 7% gap after 1,000 passes where one step a round converged in 440).
const MAX_ROUND_SHARE: usize = 16;

/// Block steps per block and round at least, up to a [`MAX_ROUND_SHARE`]-th of its examples: a round's
/// meeting of the threads costs tens of microseconds, and on OCR fold 0 (313 words a block) five steps a
/// round took 1.03 s on two threads and 32 passes, sixteen 0.64 s and 35 (one process: 0.51 s and 30).
const MIN_ROUND_STEPS: usize = 16;

/// BCFW over `B` blocks of the examples in one process: see the module docs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BcfwBlocks {
    solver: Bcfw,
    blocks: usize,
}

/// The state of BCFW over blocks: one process's state for each block of examples (its shares, sampler and
/// cache; its `w` and `ℓ` the agreed ones), the rounds, the oracle steps over all blocks, when the next
/// exact certificate is due, and the last one `(round, primal, dual, gap)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BcfwBlocksState {
    parts: Vec<BcfwState>,
    round: u64,
    calls: f64,
    next_gap: f64,
    last: Option<(u64, f64, f64, f64)>,
    /// Oracle calls the blocks' steps made (certifications count on the whole problem).
    steps_calls: u64,
    /// The sum of a round's changes, over the entries written (scratch: never saved).
    #[serde(skip)]
    sum: Scratch,
}

/// A round's summed change, added up in the scatter a step's corner is built in (the entries in the order
/// first written), and the agreed `w` (every block's before its steps; rebuilt from the first block's after
/// a resume).
#[derive(Debug, Clone, Default)]
struct Scratch {
    change: Scatter,
    base: Vec<f64>,
    /// Rounds whose step was partial (`t < 1`), for the tests.
    partial: u64,
}

/// Scratch, not part of the state's meaning: equal to any other.
impl PartialEq for Scratch {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Bcfw {
    /// This solver on `blocks` contiguous blocks of the examples, each block's steps against its own copy of
    /// `w` and all blocks at once on the thread pool (see [`BcfwBlocks`]); the model depends on `blocks` and
    /// the seed, not on the number of threads. As over ranks, it returns the last iterate and draws blocks by
    /// permutation (the parameters' average and gap sampling do not apply to rounds), and the memory
    /// budgets of pairwise atoms ([`ATOMS_MAX_BYTES`], or the budget set) and of dense shares
    /// ([`DENSE_SHARES_MAX_BYTES`]) are shared out among the blocks. With more than one block, each must
    /// keep at least 16 examples (refused when the run starts).
    ///
    /// # Errors
    /// [`OptimError::InvalidParam`] when `blocks` is 0.
    pub fn in_blocks(self, blocks: usize) -> Result<BcfwBlocks, OptimError> {
        if blocks == 0 {
            return Err(invalid("blocks", blocks, "must be at least 1"));
        }
        let mut solver = self;
        solver.params.average = false;
        solver.params.gap_sampling = false;
        solver.atoms_budget = self.atoms_budget / blocks;
        solver.dense_budget = self.dense_budget / blocks;
        Ok(BcfwBlocks { solver, blocks })
    }
}

impl BcfwBlocks {
    /// The examples of block `b` of `n`: contiguous, of sizes differing by at most one.
    fn range(&self, b: usize, n: usize) -> std::ops::Range<usize> {
        (b * n / self.blocks)..((b + 1) * n / self.blocks)
    }

    /// Block `b`'s solver on `n` examples: the whole problem's `n` for its corners, its own seed.
    fn part(&self, b: usize, n: usize) -> Bcfw {
        let mut s = self.solver;
        s.n_total = Some(n);
        s.params.seed ^= (b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        s
    }

    /// One round: every block's steps at once, then the sum of their changes over the entries they wrote,
    /// and the common exact step along it. Returns the sum of the blocks' last measured gaps, once every
    /// block has one.
    fn round<S: OutputSpace<Output: Sync>>(
        &self,
        problem: &StructProblem<'_, S>,
        st: &mut BcfwBlocksState,
    ) -> Result<Option<f64>, OptimError> {
        let (n, dim, lambda) = (problem.n_samples(), problem.dim(), problem.lambda());
        let ell0 = st.parts[0].ell;
        if st.sum.base.len() != dim {
            st.sum.base = st.parts[0].w.clone();
        }
        st.sum.change.ensure(dim);
        let results: Vec<Result<(super::round::LocalRound, u64), OptimError>> = (st.parts)
            .par_iter_mut()
            .enumerate()
            .with_max_len(1)
            .map(|(b, local)| {
                let shard = problem.shard(self.range(b, n));
                let m = shard.n_samples();
                let at_least = MIN_ROUND_STEPS.min(m.div_ceil(MAX_ROUND_SHARE));
                let steps = m.div_ceil(ROUNDS_PER_PASS).max(at_least);
                local.written.get_or_insert_with(Written::default).clear();
                let round = self.part(b, n).local_steps(&shard, local, steps)?;
                Ok((round, shard.oracle_calls()))
            })
            .collect();
        let mut rounds = Vec::with_capacity(results.len());
        for r in results {
            let (round, calls) = r?;
            st.steps_calls = st.steps_calls.saturating_add(calls);
            st.calls += round.called as f64;
            rounds.push(round);
        }
        st.round = st.round.saturating_add(1);
        // The summed change over the entries written, block by block in order (an entry a block did not
        // write adds nothing), against the agreed `w` of before the round.
        let sum = &mut st.sum;
        for p in &st.parts {
            let Some(written) = &p.written else { continue };
            let mut add = |j: usize| sum.change.add(j, p.w[j] - sum.base[j]);
            if written.all {
                (0..dim).for_each(&mut add);
            } else {
                written.indices.iter().for_each(|&j| add(j as usize));
            }
        }
        let dell: f64 = (st.parts.iter().zip(&rounds))
            .map(|(p, r)| p.ell - r.ell0)
            .sum();
        let (mut quad, mut dot) = (0.0, 0.0);
        for &j in &sum.change.touched {
            let d = sum.change.acc[j];
            quad += d * d;
            dot += sum.base[j] * d;
        }
        let t = round_step(dell - lambda * dot, lambda * quad);
        sum.partial += u64::from(t < 1.0);
        for &j in &sum.change.touched {
            sum.base[j] += t * sum.change.acc[j];
        }
        let ell = ell0 + t * dell;
        let converts = rounds.iter().any(|r| r.converts);
        let estimate: Option<f64> = st.parts.iter().map(Bcfw::estimated_gap).sum();
        let (order, base) = (&sum.change.touched, &sum.base);
        (st.parts.par_iter_mut().zip(rounds).enumerate())
            .with_max_len(1)
            .for_each(|(b, (p, round))| {
                for &j in order {
                    p.w[j] = base[j];
                }
                p.ell = ell;
                let shard = problem.shard(self.range(b, n));
                self.part(b, n).mix_round(&shard, p, round, t);
                if let Some(w) = &mut p.written {
                    w.clear();
                }
            });
        sum.change.clear();
        if converts {
            forget_calibration(&mut st.parts);
        }
        Ok(estimate)
    }

    /// The exact certificate `(round, primal, dual, gap)` of the agreed point: one oracle pass.
    fn certificate_of<S: OutputSpace<Output: Sync>>(
        problem: &StructProblem<'_, S>,
        local: &BcfwState,
        round: u64,
    ) -> Result<(u64, f64, f64, f64), OptimError> {
        let primal = problem.primal(&local.w)?;
        let dual = Bcfw::iterate_dual(local, problem.lambda());
        Ok((round, primal, dual, primal - dual))
    }
}

impl<'a, S: OutputSpace<Output: Sync>> Solver<StructProblem<'a, S>> for BcfwBlocks {
    type State = BcfwBlocksState;
    type Output = Vec<f64>;

    fn init(&mut self, problem: &StructProblem<'a, S>) -> Result<BcfwBlocksState, OptimError> {
        problem.require_margin("bcfw")?;
        let n = problem.n_samples();
        if self.blocks > 1 && n / self.blocks < MIN_BLOCK_EXAMPLES {
            return Err(invalid(
                "blocks",
                self.blocks,
                "must leave every block at least 16 examples (blocks that small step against copies that \
                 barely move, and converge slowly)",
            ));
        }
        let parts = (0..self.blocks)
            .map(|b| self.part(b, n).init(&problem.shard(self.range(b, n))))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(BcfwBlocksState {
            parts,
            round: 0,
            calls: 0.0,
            next_gap: self.solver.params.gap_every,
            last: None,
            steps_calls: 0,
            sum: Scratch::default(),
        })
    }

    /// Every block checked as one process's state over its examples, all holding the same `w` and `ℓ`.
    fn check_state(
        &self,
        problem: &StructProblem<'a, S>,
        st: &BcfwBlocksState,
    ) -> Result<(), OptimError> {
        let n = problem.n_samples();
        fits(st.parts.len() == self.blocks, "the blocks")?;
        for (b, part) in st.parts.iter().enumerate() {
            self.part(b, n)
                .check_state(&problem.shard(self.range(b, n)), part)?;
        }
        let first = &st.parts[0];
        fits(
            (st.parts.iter()).all(|p| p.w == first.w && p.ell.to_bits() == first.ell.to_bits()),
            "the blocks' weights",
        )?;
        // The agreed loss is the blocks' shares' sum (a crafted one would fake the dual).
        let shares: f64 = st.parts.iter().flat_map(|p| &p.ell_i).sum();
        fits(
            (shares - first.ell).abs() <= 1e-9 * first.ell.abs().max(1.0),
            "the blocks' losses",
        )?;
        fits(
            st.calls.is_finite() && st.calls >= 0.0 && st.next_gap.is_finite() && st.next_gap > 0.0,
            "the passes",
        )
    }

    fn step(
        &mut self,
        problem: &StructProblem<'a, S>,
        st: &mut BcfwBlocksState,
    ) -> Result<(), OptimError> {
        let n = problem.n_samples() as f64;
        let before = st.calls / n;
        let estimate = self.round(problem, st)?;
        let round = st.round;
        self.solver.after_round(
            &mut st.parts,
            (before, st.calls / n),
            (estimate, problem.lambda()),
            (&mut st.next_gap, &mut st.last),
            |local| Self::certificate_of(problem, local, round),
        )
    }

    fn progress(&self, problem: &StructProblem<'a, S>, st: &BcfwBlocksState) -> Progress {
        Progress {
            iteration: st.round,
            epoch: st.calls / problem.n_samples() as f64,
        }
    }

    fn output(&self, _problem: &StructProblem<'a, S>, st: &BcfwBlocksState) -> Vec<f64> {
        st.parts[0].w.clone()
    }

    /// The last certificate's primal when no round has been taken since, else one oracle pass.
    fn objective(
        &self,
        problem: &StructProblem<'a, S>,
        st: &BcfwBlocksState,
    ) -> Result<f64, OptimError> {
        match st.last {
            Some((round, primal, _, _)) if round == st.round => Ok(primal),
            _ => problem.primal(&st.parts[0].w),
        }
    }

    fn certificate(
        &self,
        problem: &StructProblem<'a, S>,
        st: &BcfwBlocksState,
        objective: f64,
    ) -> Result<Certificate, OptimError> {
        let dual = Bcfw::iterate_dual(&st.parts[0], problem.lambda());
        Ok(Certificate {
            oracle_calls: Some(problem.oracle_calls().saturating_add(st.steps_calls)),
            ..Certificate::of_dual(objective, dual)
        })
    }

    fn finish(
        &mut self,
        problem: &StructProblem<'a, S>,
        mut st: BcfwBlocksState,
    ) -> BcfwBlocksState {
        if st.last.is_none_or(|l| l.0 != st.round) {
            st.last = Self::certificate_of(problem, &st.parts[0], st.round).ok();
        }
        st
    }

    fn stop(&self, st: &BcfwBlocksState) -> Option<StopReason> {
        self.solver.certified_stop(st.last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BcfwParams;
    use maxmargin_core::objective::Lambda;
    use maxmargin_struct::MulticlassSpace;

    /// `Σ_i w_i` over every block's shares, and `Σ_i ℓ_i`.
    fn shares_sum(st: &BcfwBlocksState, dim: usize, scale: f64) -> (Vec<f64>, f64) {
        let mut w = vec![0.0; dim];
        for p in &st.parts {
            match &p.w_i {
                Shares::Dense { shares, .. } => {
                    for row in shares.chunks(dim) {
                        w.iter_mut().zip(row).for_each(|(a, b)| *a += b);
                    }
                }
                Shares::Sparse(v) => v.iter().for_each(|s| s.as_row().axpy(1.0, &mut w)),
                Shares::Atoms(blocks) => {
                    (blocks.iter()).for_each(|b| b.combination(scale).as_row().axpy(1.0, &mut w));
                }
            }
        }
        (w, st.parts.iter().flat_map(|p| &p.ell_i).sum())
    }

    /// Every round keeps the dual point: each block holds the agreed `w` and `ℓ`, and they are the sums of
    /// the blocks' shares, with pairwise atoms, dense Frank–Wolfe shares (each step writes all of `w`), and
    /// atoms that outgrow a small budget and become shares mid-run; partial steps (`t < 1`) come up; the
    /// same bits on one thread and on three.
    #[test]
    fn every_round_keeps_the_dual_point_of_the_blocks_shares() {
        let mut lcg = maxmargin_core::testing::Lcg::new(5);
        let x: Vec<SparseVec> = (0..96)
            .map(|_| {
                let v: Vec<f64> = (0..6).map(|_| lcg.unit31() * 2.0 - 1.0).collect();
                SparseVec::from_dense(&v).unwrap()
            })
            .collect();
        let y: Vec<u32> = (0..96u32)
            .map(|i| (i * 7 + u32::from(x[i as usize].as_row().values()[0] > 0.0)) % 4)
            .collect();
        let space = MulticlassSpace::new(6, 4).unwrap();
        let problem = StructProblem::new(&space, &x, &y, Lambda::new(0.01).unwrap()).unwrap();
        let (dim, scale) = (problem.dim(), 1.0 / (0.01 * 96.0));
        let base = BcfwParams {
            gap_tolerance: None,
            gap_every: 2.0,
            ..BcfwParams::default()
        };
        let kinds = [
            (BcfwParams::pairwise(), usize::MAX),
            (BcfwParams::frank_wolfe(), usize::MAX),
            // Atoms past 2 kB a block become shares after a pass.
            (base, 6 * 1024),
        ];
        for (params, budget) in kinds {
            let run = |threads: usize| {
                let mut solver = BcfwParams { seed: 3, ..params }
                    .check()
                    .unwrap()
                    .with_atoms_budget(budget)
                    .in_blocks(3)
                    .unwrap();
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                pool.install(|| {
                    let mut st = solver.init(&problem).unwrap();
                    let mut converted = false;
                    for _ in 0..300 {
                        solver.step(&problem, &mut st).unwrap();
                        let first = &st.parts[0];
                        for p in &st.parts {
                            assert_eq!(p.w, first.w);
                            assert_eq!(p.ell.to_bits(), first.ell.to_bits());
                        }
                        let (w, ell) = shares_sum(&st, dim, scale);
                        let drift = w.iter().zip(&first.w).map(|(a, b)| (a - b).abs());
                        assert!(drift.fold(0.0, f64::max) < 1e-12, "{params:?}");
                        assert!((ell - first.ell).abs() < 1e-12, "{params:?}");
                        converted |= st.parts.iter().any(|p| !matches!(p.w_i, Shares::Atoms(_)));
                    }
                    assert!(st.sum.partial > 0, "{params:?}: some rounds took t < 1");
                    (st.parts[0].w.clone(), converted)
                })
            };
            let (w1, converted) = run(1);
            assert_eq!(run(3).0, w1, "{params:?}");
            if budget < usize::MAX {
                assert!(converted, "the small budget converted the atoms");
            }
        }
    }
}
