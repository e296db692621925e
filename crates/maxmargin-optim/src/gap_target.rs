//! The gap target, written once for every method whose own stopping test has a tolerance ε: DCD (in memory,
//! streamed and over ranks), Crammer–Singer (both), SMO and the cutting planes.
//!
//! When the method's test passes at ε, the run may end only if no target was asked for, if ε has reached
//! [`MIN_EPSILON`], or if the certified gap `primal − dual` is within `target · |primal|`. Otherwise ε is
//! divided by 10 (the state counts the divisions) and the method goes on from where it is. A small projected
//! gradient can leave a gap of a few per cent on badly scaled or separable data (mushrooms at ε = 0.1: 6%);
//! with a target the run stops by its own rule at a certified gap.
//!
//! Within a pass, LIBLINEAR's end-of-pass test ([`end_of_pass`]) is the dual coordinate methods' own:
//! within ε with examples set aside by shrinking reopens them all; within ε with none passes the test;
//! otherwise the pass's extremes bound the next pass's shrinking.

/// The smallest ε that a gap target tightens to.
pub const MIN_EPSILON: f64 = 1e-9;

/// ε after `times` divisions by 10.
pub(crate) fn tightened(epsilon: f64, times: u32) -> f64 {
    epsilon / 10f64.powi(times as i32)
}

/// Whether a stopping test that passed at `epsilon` may end the run under `target`. `certify` gives the
/// primal and the certified gap; it is called only when the answer depends on them (a target, and ε above
/// its floor), so a collective certificate is computed by every rank or by none, as their ε agree.
///
/// # Errors
/// `certify`'s.
pub(crate) fn accepts<E>(
    target: Option<f64>,
    epsilon: f64,
    certify: impl FnOnce() -> Result<(f64, f64), E>,
) -> Result<bool, E> {
    let Some(target) = target else {
        return Ok(true);
    };
    if epsilon <= MIN_EPSILON {
        return Ok(true);
    }
    let (primal, gap) = certify()?;
    Ok(gap <= target * primal.abs())
}

/// [`accepts`] with `solver`'s own certificate at `st` (its objective and gap; a gap it cannot give counts
/// as 0): for a solver over ranks, whose objective and certificate are collective.
///
/// # Errors
/// The solver's, from its objective or certificate.
pub(crate) fn accepts_certified<P, S: crate::trainer::Solver<P>>(
    solver: &S,
    problem: &P,
    st: &S::State,
    (target, epsilon): (Option<f64>, f64),
) -> Result<bool, crate::error::OptimError> {
    accepts(target, epsilon, || {
        let objective = solver.objective(problem, st)?;
        let gap = solver.certificate(problem, st, objective)?.gap;
        Ok((objective, gap.unwrap_or(0.0)))
    })
}

/// What LIBLINEAR's test says at the end of a pass whose projected gradient spans `[pg_min, pg_max]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum PassEnd {
    /// Not within ε: the next pass shrinks by these bounds (`PGmax_old`, `PGmin_old`).
    Shrink((f64, f64)),
    /// Within ε on a shrunk set: every example is visited again, with open bounds.
    Reopen,
    /// Within ε with nothing set aside: the test passed.
    Passed,
}

/// LIBLINEAR's end-of-pass test at tolerance `epsilon`; `set_aside` says whether shrinking left any example
/// out of the pass.
pub(crate) fn end_of_pass(pg_max: f64, pg_min: f64, epsilon: f64, set_aside: bool) -> PassEnd {
    if pg_max - pg_min > epsilon {
        PassEnd::Shrink(next_bounds(pg_max, pg_min))
    } else if set_aside {
        PassEnd::Reopen
    } else {
        PassEnd::Passed
    }
}

/// Shrinking's bounds for the next pass from this pass's projected-gradient range (LIBLINEAR's `PGmax_old`,
/// `PGmin_old`: a bound that is not strictly on its side of zero shrinks nothing).
fn next_bounds(pg_max: f64, pg_min: f64) -> (f64, f64) {
    (
        if pg_max > 0.0 { pg_max } else { f64::INFINITY },
        if pg_min < 0.0 {
            pg_min
        } else {
            f64::NEG_INFINITY
        },
    )
}

/// A solver's relative gap target: the one its caller set (`with_gap_target`), else the trainer's budget's
/// gap tolerance (handed over by `Solver::set_budget` at every run, so a run with another budget takes
/// its gap, never the last run's).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct GapTarget {
    pub(crate) set: Option<f64>,
    budget: Option<f64>,
}

impl GapTarget {
    /// The target in force.
    pub(crate) fn get(self) -> Option<f64> {
        self.set.or(self.budget)
    }

    /// The budget's gap tolerance, for when none was set.
    pub(crate) fn adopt(&mut self, budget: &crate::Budget) {
        self.budget = budget.gap_tolerance;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A target taken from a budget follows the budget of each run, and one set by the caller wins.
    #[test]
    fn a_budgets_gap_is_each_runs_and_a_set_target_wins() {
        let mut t = GapTarget::default();
        t.adopt(&crate::Budget::epochs(1.0).with_gap(1e-3));
        assert_eq!(t.get(), Some(1e-3));
        t.adopt(&crate::Budget::epochs(1.0));
        assert_eq!(t.get(), None);
        t.set = Some(1e-6);
        t.adopt(&crate::Budget::epochs(1.0).with_gap(1e-2));
        assert_eq!(t.get(), Some(1e-6));
    }

    #[test]
    fn the_certificate_is_asked_for_only_when_it_decides() {
        let never = || -> Result<(f64, f64), ()> { panic!("certified without need") };
        assert_eq!(accepts(None, 0.1, never), Ok(true));
        assert_eq!(accepts(Some(0.01), MIN_EPSILON, never), Ok(true));
        assert_eq!(
            accepts(Some(0.01), 0.1, || Ok::<_, ()>((2.0, 0.02))),
            Ok(true)
        );
        assert_eq!(
            accepts(Some(0.01), 0.1, || Ok::<_, ()>((-2.0, 0.03))),
            Ok(false)
        );
        assert_eq!(accepts(Some(0.01), 0.1, || Err("oracle")), Err("oracle"));
        assert_eq!(tightened(0.1, 2), 0.1 / 100.0);
    }

    #[test]
    fn the_end_of_a_pass_shrinks_reopens_or_passes() {
        assert_eq!(
            end_of_pass(0.5, -0.5, 0.1, true),
            PassEnd::Shrink((0.5, -0.5))
        );
        // A bound not strictly on its side of zero shrinks nothing.
        assert_eq!(
            end_of_pass(-0.2, -0.5, 0.1, false),
            PassEnd::Shrink((f64::INFINITY, -0.5))
        );
        assert_eq!(end_of_pass(0.05, 0.0, 0.1, true), PassEnd::Reopen);
        assert_eq!(end_of_pass(0.05, 0.0, 0.1, false), PassEnd::Passed);
        // Nothing visited (every weight zero): the range is empty and the test passes.
        assert_eq!(
            end_of_pass(f64::NEG_INFINITY, f64::INFINITY, 0.1, false),
            PassEnd::Passed
        );
    }
}
