//! A round of BCFW's block-synchronous steps, what the ranks ([`super::distributed`]) and the blocks of one
//! process ([`super::blocks`]) both take: each part takes one process's block steps on its own examples
//! against its own copy of `w`, the parts' changes are summed, and every part takes the step `t ∈ [0, 1]`
//! that maximizes the dual `ℓ − λ/2‖w‖²` along the sum; the blocks a round moved go to
//! `(1 − t)·before + t·after`. Then one process's rule decides on the sums whether a certification is due.

use super::shares::Before;
use super::*;

/// What a part's steps of a round left to combine: its loss share before, the blocks it moved as they were
/// before (with their loss shares), its steps that called the oracle, and whether its atoms become
/// Frank–Wolfe shares at the round's end (they completed a pass over its examples and outgrew the budget).
pub(super) struct LocalRound {
    pub(super) ell0: f64,
    touched: Vec<(usize, Before, f64)>,
    pub(super) called: u64,
    pub(super) converts: bool,
}

/// The step along a round's summed change: `t = slope / quad` clipped to `[0, 1]`, where `slope` is the
/// dual's derivative at `t = 0` and `quad` its curvature (`λ‖dw‖²`); all the way when there is none.
pub(super) fn round_step(slope: f64, quad: f64) -> f64 {
    if quad > 0.0 {
        (slope / quad).clamp(0.0, 1.0)
    } else {
        1.0
    }
}

/// After a round in which some part's atoms became Frank–Wolfe shares: the last certification's ratio was
/// the pairwise output's, and every part drops it, as the converting part does, so that their predictions
/// of the next certificate (and their decisions to make one) stay the same.
pub(super) fn forget_calibration(parts: &mut [BcfwState]) {
    parts.iter_mut().for_each(|p| p.calibration = None);
}

impl Bcfw {
    /// A part's `steps` block steps of a round, on `problem` (its examples), with one process's own step.
    pub(super) fn local_steps<S>(
        &self,
        problem: &StructProblem<'_, S>,
        local: &mut BcfwState,
        steps: usize,
    ) -> Result<LocalRound, OptimError>
    where
        S: OutputSpace,
        S::Output: Sync,
    {
        let ell0 = local.ell;
        // The blocks this round moves, as they were before it: only they are mixed when the step is partial,
        // so a round costs its steps, not the shard.
        let mut touched: Vec<(usize, Before, f64)> = Vec::with_capacity(steps);
        let mut seen = std::collections::HashSet::with_capacity(steps);
        let called_before = local.k - local.cached;
        for _ in 0..steps {
            let i = local.sampler.next_index();
            if seen.insert(i) {
                touched.push((i, local.w_i.before(i), local.ell_i[i]));
            }
            let gap = self.block_step(problem, local, i)?;
            // (None kept: a checkpoint from before the ranks kept the gaps has none.)
            if let Some(g) = local.block_gaps.get_mut(i) {
                *g = gap.is_finite().then_some(gap);
            }
        }
        let n = local.ell_i.len() as u64;
        let called = local.k - local.cached;
        Ok(LocalRound {
            ell0,
            touched,
            called: called - called_before,
            converts: called / n > called_before / n && self.atoms_over_budget(local),
        })
    }

    /// The round's step `t` taken by a part whose `w` and `ℓ` are already the agreed ones: the blocks it
    /// moved go to `(1 − t)·before + t·after`; then atoms the round found beyond the budget become
    /// Frank–Wolfe shares ([`Bcfw::keep_atoms_in_budget`]; the same dual point). When any part converts,
    /// every part must forget its calibration ([`forget_calibration`]), so that all decide alike.
    pub(super) fn mix_round<S: OutputSpace>(
        &self,
        problem: &StructProblem<'_, S>,
        local: &mut BcfwState,
        round: LocalRound,
        t: f64,
    ) {
        if t != 1.0 {
            for (i, before, e0) in round.touched {
                local.w_i.mix_block(i, before, t);
                local.ell_i[i] = e0 + t * (local.ell_i[i] - e0);
            }
        }
        if round.converts {
            self.atoms_to_shares(problem, local);
        }
    }

    /// After a round that took the passes from `before` to `epochs`, with the parts' blocks' gaps summing to
    /// `estimate`: one process's rule on the sums decides whether a certification is due (`certify` makes
    /// it from the first part, and every part is calibrated by it), else records the skipped schedule in
    /// every part. The parts hold the agreed `w` and `ℓ`; `next_gap` is when the next certification is due,
    /// and a new certificate goes to `last`.
    pub(super) fn after_round(
        &self,
        parts: &mut [BcfwState],
        (before, epochs): (f64, f64),
        (estimate, lambda): (Option<f64>, f64),
        (next_gap, last): (&mut f64, &mut Option<(u64, f64, f64, f64)>),
        certify: impl FnOnce(&BcfwState) -> Result<(u64, f64, f64, f64), OptimError>,
    ) -> Result<(), OptimError> {
        let scheduled = epochs >= *next_gap - 1e-12;
        if scheduled {
            *next_gap += self.params.gap_every;
        }
        let pass_end = epochs.floor() > before.floor();
        if !(scheduled || pass_end) {
            return Ok(());
        }
        // (Valued only here: the dual reads all of `w`, which a round's steps do not.)
        let predicted = (parts.first()).and_then(|p| self.predicted_gap(p, lambda, estimate));
        if let Some(first) = parts.first()
            && self.certification_due(scheduled, pass_end, predicted)
        {
            let made = certify(first)?;
            parts
                .iter_mut()
                .for_each(|p| Bcfw::calibrate(p, estimate, made.3));
            *last = Some(made);
        } else {
            parts
                .iter_mut()
                .for_each(|p| Bcfw::skipped(p, scheduled, predicted));
        }
        Ok(())
    }
}
