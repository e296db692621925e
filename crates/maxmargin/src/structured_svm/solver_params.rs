//! What the checked parameters hand the solvers: the relative gap a run aims at and stops on, the trainer's
//! budget, and each structural solver's own parameters.

use super::*;

impl StructuredSvmParams {
    /// The relative gap a run is judged by, and aims at: `gap`, else BCFW's ε (its own gap tolerance), else
    /// the default 1%.
    pub(crate) fn gap_target(&self) -> f64 {
        self.gap.unwrap_or(match self.solver {
            StructSolverKind::Bcfw => self.epsilon,
            _ => crate::convergence::DEFAULT_GAP,
        })
    }

    /// The trainer's gap stop: the gap target, except where ε is the solver's own test (Crammer–Singer,
    /// one-vs-rest, the cutting planes) and was set tighter than its default with no `gap`: that asks for
    /// more than the default gap, and ε rules as before.
    pub(crate) fn stop_gap(&self) -> Option<f64> {
        let own_test = !matches!(self.solver, StructSolverKind::Bcfw | StructSolverKind::Ssg);
        if self.gap.is_none() && own_test && self.epsilon < Self::DEFAULT_EPSILON {
            None
        } else {
            Some(self.gap_target())
        }
    }

    pub(super) fn budget(&self) -> Budget {
        self.budget_watched(self.trace)
    }

    /// The budget of a run that keeps its trace to itself (one-vs-rest and one-vs-one machines, whose
    /// traces are not the run's): a trace does not change when it evaluates, hence where it stops.
    pub(super) fn untraced_budget(&self) -> Budget {
        self.budget_watched(false)
    }

    /// The trainer of a run: evaluated every 5 passes when only a trace reads the evaluations, its stops
    /// tested where an untraced run's (every 20) would be, so that watching a run does not change its model.
    pub(super) fn trainer(&self) -> Result<Trainer, OptimError> {
        let watched_only = self.trace && self.eval_every.is_none() && !self.stops_on_evaluations();
        let trainer = Trainer::new(self.budget())?
            .stopping_every(watched_only.then_some(Self::CHEAP_EVAL_EVERY))?;
        // The perceptron does not minimize the objective it is evaluated by: its last average is its output.
        Ok(if self.solver == StructSolverKind::Perceptron {
            trainer.keeping_the_last()
        } else {
            trainer
        })
    }

    fn stops_on_evaluations(&self) -> bool {
        self.tolerance.is_some() || self.gap.is_some() || self.keep_best
    }

    fn budget_watched(&self, trace: bool) -> Budget {
        let needed = self.stops_on_evaluations() || trace;
        let mut budget = Budget::default();
        budget.max_epochs = self.max_passes;
        budget.max_seconds = self.max_seconds;
        budget.tolerance = self.tolerance;
        budget.eval_every_epochs = self.eval_every.unwrap_or(if needed {
            Self::DEFAULT_EVAL_EVERY
        } else {
            Self::CHEAP_EVAL_EVERY
        });
        budget.keep_best = self.keep_best;
        // The run stops at the first evaluation that certifies the target, as at the solver's own test.
        budget.gap_tolerance = self.stop_gap();
        budget
    }

    pub(super) fn bcfw(&self) -> BcfwParams {
        BcfwParams {
            seed: self.seed,
            gap_every: self.eval_every.unwrap_or(Self::DEFAULT_EVAL_EVERY),
            // One tolerance: `gap` when given (it stopped at ε = 1% while asked for 0.1%), else ε.
            gap_tolerance: Some(self.gap.unwrap_or(self.epsilon)),
            ..BcfwParams::default()
        }
    }

    pub(super) fn one_slack(&self) -> OneSlackParams {
        OneSlackParams {
            epsilon: self.epsilon,
            ..OneSlackParams::default()
        }
    }

    pub(super) fn n_slack(&self) -> NSlackParams {
        NSlackParams {
            epsilon: self.epsilon,
            ..NSlackParams::default()
        }
    }

    pub(super) fn cs(&self) -> CrammerSingerParams {
        CrammerSingerParams {
            epsilon: self.epsilon,
            shrinking: true,
            seed: self.seed,
        }
    }

    pub(super) fn perceptron(&self) -> maxmargin_optim::PerceptronParams {
        maxmargin_optim::PerceptronParams::new().seed(self.seed)
    }

    pub(super) fn ssg(&self) -> SsgParams {
        SsgParams {
            seed: self.seed,
            ..SsgParams::default()
        }
    }
}
