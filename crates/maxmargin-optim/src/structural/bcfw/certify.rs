//! BCFW's certificates: the duality gap of the output (the last iterate, the weighted average, or with
//! pairwise steps the better of the two), each an oracle pass, and when to pay for one: the blocks' last
//! measured gaps, scaled as the last certification found them, predict the next certificate, and scheduled
//! certifications far above the target ([`SKIP_ABOVE_TARGET`]) are skipped.

use super::*;

impl Bcfw {
    pub(super) fn certify<S: OutputSpace>(
        &self,
        problem: &StructProblem<'_, S>,
        st: &mut BcfwState,
        scheduled: bool,
    ) -> Result<(), OptimError>
    where
        S::Output: Sync,
    {
        if st.last.is_some_and(|l| l.0 == st.k) {
            return Ok(());
        }
        let lambda = problem.lambda();
        if Self::both(st) {
            // Pairwise steps with the average kept: both points are feasible for the dual and both give a
            // primal, so the lower primal is the output and the higher dual bounds the optimum. The last
            // iterate wins once pairwise steps converge; the average while they do not (unscaled data).
            // Each primal is an oracle pass. The last scheduled certification's winner goes first (the
            // iterate with gap sampling, whose estimates its pass refreshes, and at the run's end); the other
            // point is valued only when the first is not certified within the tolerance and, for the
            // iterate, when its estimated primal (its dual plus the blocks' last gaps, when every block has
            // one) is below the average's.
            let dual = self.dual_of(st, lambda);
            let within = |p: f64| {
                self.params
                    .gap_tolerance
                    .is_some_and(|t| p - dual <= t * p.abs())
            };
            let iterate_first = st.gaps.is_some() || st.iterate_won || !scheduled;
            let (p_last, p_avg) = if iterate_first {
                let p_last = self.primal_at_iterate(problem, st, scheduled)?;
                let p_avg = if within(p_last) {
                    f64::INFINITY
                } else {
                    Self::with_average(st, |w, _| problem.primal(w))?
                };
                (p_last, p_avg)
            } else {
                let p_avg = Self::with_average(st, |w, _| problem.primal(w))?;
                let promising = Self::estimated_gap(st)
                    .is_none_or(|e| Self::iterate_dual(st, lambda) + e < p_avg);
                let p_last = if within(p_avg) || !promising {
                    f64::INFINITY
                } else {
                    self.primal_at_iterate(problem, st, scheduled)?
                };
                (p_last, p_avg)
            };
            st.last_iterate = p_last <= p_avg;
            let primal = p_last.min(p_avg);
            st.last = Some((st.k, primal, dual, primal - dual));
            return Ok(());
        }
        let primal = if st.avg.is_none() || st.last_iterate {
            self.primal_at_iterate(problem, st, scheduled)?
        } else {
            self.with_output(st, |w, _| problem.primal(w))?
        };
        let dual = self.dual_of(st, lambda);
        st.last = Some((st.k, primal, dual, primal - dual));
        Ok(())
    }

    /// The primal at the last iterate `w`; its oracle pass also gives every block's gap at `w`, which
    /// refreshes gap sampling's estimates.
    pub(super) fn primal_at_iterate<S: OutputSpace>(
        &self,
        problem: &StructProblem<'_, S>,
        st: &mut BcfwState,
        refresh: bool,
    ) -> Result<f64, OptimError>
    where
        S::Output: Sync,
    {
        let Some(gaps) = st.gaps.as_mut().filter(|_| refresh) else {
            return problem.primal(&st.w);
        };
        let violations = problem.oracle_all(&st.w)?;
        let n = problem.n_samples() as f64;
        let lambda = problem.lambda();
        // The bounds where the oracle gives them: the primal stays an upper bound, the gap a certificate.
        let hinge: f64 = violations.iter().map(|v| v.upper()).sum();
        let values = st.w_i.values(&st.w, &st.ell_i, lambda, n);
        gaps.refresh(violations.iter().zip(values).map(|(v, s)| v.hinge / n + s));
        Ok(0.5 * lambda * norm_sq(&st.w) + hinge / n)
    }

    /// Passes so far: the steps that called the oracle, over the blocks (the cache's steps cost a scan of a
    /// block's active corners, not an oracle call, and come on top, so that a budget of passes buys the same
    /// oracle calls with the cache as without).
    pub(super) fn epochs(st: &BcfwState) -> f64 {
        st.k.saturating_sub(st.cached) as f64 / st.ell_i.len() as f64
    }

    /// The sum of the blocks' last measured gaps, once every block has one.
    pub(super) fn estimated_gap(st: &BcfwState) -> Option<f64> {
        if st.block_gaps.is_empty() {
            return None;
        }
        st.block_gaps.iter().copied().sum::<Option<f64>>()
    }

    /// The iterate's dual `−λ‖w‖²/2 + ℓ`.
    pub(super) fn iterate_dual(st: &BcfwState, lambda: f64) -> f64 {
        -0.5 * lambda * norm_sq(&st.w) + st.ell
    }

    /// The certified gap the blocks' gaps predict (their sum scaled by the last certification's ratio) and
    /// the primal it implies, where there is a ratio and a target (not with gap sampling, whose own
    /// estimates certifications refresh).
    pub(super) fn predicted_gap(
        &self,
        st: &BcfwState,
        lambda: f64,
        estimate: Option<f64>,
    ) -> Option<(f64, f64)> {
        if st.gaps.is_some() || self.params.gap_tolerance.is_none() {
            return None;
        }
        let gap = st.calibration? * estimate?;
        Some((gap, self.dual_of(st, lambda) + gap))
    }

    /// Pairwise steps with the weighted average kept beside them.
    pub(super) fn both(st: &BcfwState) -> bool {
        matches!(st.w_i, Shares::Atoms(_)) && st.avg.is_some()
    }

    /// The dual certificate: the output's, or with pairwise steps and the average, the higher of the two.
    pub(super) fn dual_of(&self, st: &BcfwState, lambda: f64) -> f64 {
        let at = |w: &[f64], ell: f64| -0.5 * lambda * norm_sq(w) + ell;
        if Self::both(st) {
            Self::iterate_dual(st, lambda).max(Self::with_average(st, at))
        } else {
            self.with_output(st, at)
        }
    }

    /// The certification when a pass of `gap_every` is complete, unless the blocks' gaps put it well
    /// above the target; and at any other pass's end when they, scaled as the last certification found
    /// them (its gap over their sum then), put the certificate within the target.
    pub(super) fn after_step<S: OutputSpace>(
        &self,
        problem: &StructProblem<'_, S>,
        st: &mut BcfwState,
    ) -> Result<(), OptimError>
    where
        S::Output: Sync,
    {
        let scheduled = Self::epochs(st) >= st.next_gap - 1e-12;
        let pass_end =
            st.cached_run == 0 && (st.k - st.cached).is_multiple_of(st.ell_i.len() as u64);
        if !(scheduled || pass_end) {
            return Ok(());
        }
        let estimate = Self::estimated_gap(st);
        let predicted = self.predicted_gap(st, problem.lambda(), estimate);
        if scheduled {
            st.next_gap += self.params.gap_every;
        }
        if !self.certification_due(scheduled, pass_end, predicted) {
            Self::skipped(st, scheduled, predicted);
            return Ok(());
        }
        self.certify(problem, st, true)?;
        let gap = st.last.map_or(0.0, |l| l.3.max(0.0));
        Self::calibrate(st, estimate, gap);
        // (Not at the run's end: a run resumed from there checks in the order of one never stopped.)
        st.iterate_won = st.last_iterate;
        Ok(())
    }

    /// Whether a certification is due after a step, given the predicted `(gap, primal)`: a scheduled one
    /// unless the prediction is above [`SKIP_ABOVE_TARGET`] times the target, another at a pass's end when
    /// the prediction is within the target. One process and the ranks (on their sums) decide by it.
    pub(super) fn certification_due(
        &self,
        scheduled: bool,
        pass_end: bool,
        predicted: Option<(f64, f64)>,
    ) -> bool {
        let tol = self.params.gap_tolerance.unwrap_or(0.0);
        if scheduled {
            !predicted.is_some_and(|(gap, primal)| gap > SKIP_ABOVE_TARGET * tol * primal.abs())
        } else {
            pass_end && predicted.is_some_and(|(gap, primal)| gap <= tol * primal.abs())
        }
    }

    /// A scheduled certification skipped on the `predicted` gap: the cache's reference follows the
    /// prediction, where the certificate would be. One process and the ranks (on their sums) keep it so.
    pub(super) fn skipped(st: &mut BcfwState, scheduled: bool, predicted: Option<(f64, f64)>) {
        if let Some((gap, _)) = predicted.filter(|_| scheduled) {
            st.cache_ref = gap;
        }
    }

    /// After a certification of `gap`: the cache's reference, and the ratio of the gap over the blocks'
    /// `estimate` then, which scales the next predictions.
    pub(super) fn calibrate(st: &mut BcfwState, estimate: Option<f64>, gap: f64) {
        st.cache_ref = gap.max(0.0);
        st.calibration = estimate.filter(|&e| e > 0.0).map(|e| gap.max(0.0) / e);
    }
}
