//! 1-slack cutting planes: one joint constraint per iteration (Joachims, Finley & Yu 2009).

use super::*;

/// Unchecked 1-slack parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OneSlackParams {
    /// Stop when the most violated joint constraint is violated by at most ε (in mean-hinge units).
    pub epsilon: f64,
    /// Past outputs kept per example for cheap iterations (0, the default, turns the cache off). Measured on
    /// OCR (λ = 0.01): without the cache 1-slack converges to ε = 10⁻³ in 809 iterations and 20 s; with 10
    /// outputs per example, scoring the cache costs about as much as Viterbi, and 3,000 mostly cached
    /// iterations (54 s) still leave a 13% gap. The cache pays when the oracle is expensive.
    pub cache_size: usize,
    /// Solves after which a constraint with α = 0 is dropped.
    pub inactive_limit: usize,
    /// How the dual QP is solved.
    pub qp: QpSolver,
}

impl Default for OneSlackParams {
    fn default() -> Self {
        Self {
            epsilon: 1e-3,
            cache_size: 0,
            inactive_limit: 50,
            qp: QpSolver::Smo,
        }
    }
}

impl OneSlackParams {
    /// Checks the parameters.
    ///
    /// # Errors
    /// [`OptimError::InvalidParam`] for a bad ε.
    pub fn check(self) -> Result<OneSlack, OptimError> {
        check_epsilon(self.epsilon)?;
        self.qp.check()?;
        Ok(OneSlack {
            params: self,
            gap_target: crate::gap_target::GapTarget::default(),
        })
    }
}

/// Checked 1-slack cutting planes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OneSlack {
    params: OneSlackParams,
    gap_target: crate::gap_target::GapTarget,
}

impl OneSlack {
    /// Also requires a relative duality gap of at most `target` when the ε test passes: ε is in mean-hinge
    /// units, so on a problem whose objective is small it can pass with a gap of many per cent (digits at
    /// ε = 0.01: 14%). If the gap (free at that point: the oracle pass gives the primal) is larger, ε is
    /// divided by 10 and the iterations go on, down to [`crate::dcd::MIN_EPSILON`].
    pub fn with_gap_target(mut self, target: Option<f64>) -> Self {
        self.gap_target.set = target;
        self
    }
}

/// 1-slack state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OneSlackState<O> {
    /// QP solves (constraints added).
    pub iteration: u64,
    /// Oracle calls made by training (not by evaluations).
    pub oracle_calls: u64,
    /// Iterations served from the cache.
    pub cached_iterations: u64,
    w: Vec<f64>,
    set: WorkingSet,
    cache: Vec<Vec<O>>,
    psi_truth: Vec<SparseVec>,
    converged: bool,
    /// How many times ε was divided by 10 by the gap target.
    #[serde(default)]
    tightened: u32,
}

impl OneSlack {
    /// The joint constraint of outputs `y_hat` (one per example).
    fn joint<S: OutputSpace>(
        problem: &StructProblem<'_, S>,
        psi_truth: &[SparseVec],
        y_hat: &[&S::Output],
    ) -> (SparseVec, f64) {
        let n = problem.n_samples() as f64;
        let mut dense = vec![0.0; problem.dim()];
        let mut b = 0.0;
        for (i, yh) in y_hat.iter().enumerate() {
            let loss = problem
                .space()
                .loss_for(&problem.x()[i], &problem.y()[i], yh);
            let c = problem.plane_scale(loss);
            psi_truth[i].as_row().axpy(c / n, &mut dense);
            problem
                .space()
                .add_joint_feature(&problem.x()[i], yh, -c / n, &mut dense);
            b += loss / n;
        }
        (SparseVec::from_dense(&dense).unwrap_or_default(), b)
    }
}

impl<'a, S: OutputSpace<Output: Sync>> Solver<StructProblem<'a, S>> for OneSlack {
    type State = OneSlackState<S::Output>;
    type Output = Vec<f64>;

    /// A gap target not set on the solver is the budget's gap tolerance (see `gap_target::GapTarget`).
    fn set_budget(&mut self, budget: &crate::Budget) {
        self.gap_target.adopt(budget);
    }

    fn init(&mut self, problem: &StructProblem<'a, S>) -> Result<Self::State, OptimError> {
        Ok(OneSlackState {
            iteration: 0,
            oracle_calls: 0,
            cached_iterations: 0,
            w: vec![0.0; problem.dim()],
            set: WorkingSet::default(),
            cache: vec![Vec::new(); problem.n_samples()],
            psi_truth: problem.truth_features(),
            converged: false,
            tightened: 0,
        })
    }

    fn step(
        &mut self,
        problem: &StructProblem<'a, S>,
        st: &mut Self::State,
    ) -> Result<(), OptimError> {
        let eps = crate::gap_target::tightened(self.params.epsilon, st.tightened);
        let xi = st.set.slack(0, &st.w);
        let space = problem.space();
        // A cheap iteration: the most violated joint constraint among cached outputs.
        let mut plane = None;
        if self.params.cache_size > 0 && st.cache.iter().all(|c| !c.is_empty()) {
            let picks: Vec<&S::Output> = st
                .cache
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let (x, y) = (&problem.x()[i], &problem.y()[i]);
                    let slack = problem.rescaling() == maxmargin_struct::Rescaling::Slack;
                    let truth = if slack { space.score(&st.w, x, y) } else { 0.0 };
                    let value = |o: &S::Output| {
                        let (loss, score) = (space.loss_for(x, y, o), space.score(&st.w, x, o));
                        if slack {
                            maxmargin_struct::slack_value(loss, score, truth)
                        } else {
                            loss + score
                        }
                    };
                    c.iter().fold(
                        &c[0],
                        |best, o| if value(o) > value(best) { o } else { best },
                    )
                })
                .collect();
            let (a, b) = Self::joint(problem, &st.psi_truth, &picks);
            if b - a.as_row().dot(&st.w) > xi + eps {
                plane = Some((a, b));
                st.cached_iterations += 1;
            }
        }
        let (a, b) = match plane {
            Some(p) => p,
            None => {
                let v = problem.oracle_all(&st.w)?;
                st.oracle_calls += v.len() as u64;
                let outputs: Vec<&S::Output> = v.iter().map(|v| &v.output).collect();
                let (a, b) = Self::joint(problem, &st.psi_truth, &outputs);
                for (c, v) in st.cache.iter_mut().zip(&v) {
                    if self.params.cache_size > 0 && !c.contains(&v.output) {
                        if c.len() == self.params.cache_size {
                            c.remove(0);
                        }
                        c.push(v.output.clone());
                    }
                }
                let violation = b - a.as_row().dot(&st.w);
                if violation <= xi + eps {
                    // The joint constraint of the oracle's outputs is the mean hinge exactly, plus, where
                    // the oracle only bounds a maximum, how far its bound lies above what it found (0 for
                    // exact oracles): the primal stays an upper bound, the gap a certificate.
                    let lambda = problem.lambda();
                    let beyond: f64 = v.iter().map(|v| v.upper() - v.hinge).sum::<f64>()
                        / problem.n_samples() as f64;
                    let primal = 0.5 * lambda * norm_sq(&st.w) + violation.max(0.0) + beyond;
                    if gap_accepts(
                        self.gap_target.get(),
                        eps,
                        primal,
                        st.set.dual(lambda, &st.w),
                    ) {
                        st.converged = true;
                        return Ok(());
                    }
                    st.tightened += 1;
                    if violation <= xi {
                        // Nothing to add: the working set's QP is what needs more solving.
                        st.set.solve(lambda, &[1.0], &mut st.w, self.params.qp)?;
                        st.iteration += 1;
                        return Ok(());
                    }
                }
                (a, b)
            }
        };
        st.set.add(a, b, 0);
        st.set
            .solve(problem.lambda(), &[1.0], &mut st.w, self.params.qp)?;
        st.set.drop_idle(self.params.inactive_limit);
        st.iteration += 1;
        Ok(())
    }

    fn progress(&self, problem: &StructProblem<'a, S>, st: &Self::State) -> Progress {
        Progress {
            iteration: st.iteration,
            epoch: st.oracle_calls as f64 / problem.n_samples() as f64,
        }
    }

    planes_report!(S, |_| 1);
}
mod distributed;
pub use distributed::{OneSlackRankState, OneSlackRanks};
