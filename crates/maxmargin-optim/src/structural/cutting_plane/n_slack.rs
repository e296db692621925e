//! n-slack cutting planes: one constraint per example and violating output, the dual by example blocks.

use super::*;

/// Unchecked n-slack parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NSlackParams {
    /// Add an output when it violates its example's constraints by more than ε; stop when none does.
    pub epsilon: f64,
    /// How the dual QP is solved.
    pub qp: QpSolver,
}

impl Default for NSlackParams {
    fn default() -> Self {
        Self {
            epsilon: 1e-3,
            qp: QpSolver::Smo,
        }
    }
}

impl NSlackParams {
    /// Checks the parameters.
    ///
    /// # Errors
    /// [`OptimError::InvalidParam`] for a bad ε.
    pub fn check(self) -> Result<NSlack, OptimError> {
        check_epsilon(self.epsilon)?;
        self.qp.check()?;
        Ok(NSlack {
            params: self,
            gap_target: crate::gap_target::GapTarget::default(),
            deadline: None,
        })
    }
}

/// Checked n-slack cutting planes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NSlack {
    params: NSlackParams,
    gap_target: crate::gap_target::GapTarget,
    deadline: Option<std::time::Instant>,
}

impl NSlack {
    /// Also requires a relative duality gap of at most `target` when the ε test passes (see
    /// [`OneSlack::with_gap_target`]).
    pub fn with_gap_target(mut self, target: Option<f64>) -> Self {
        self.gap_target.set = target;
        self
    }
}

/// n-slack state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NSlackState<O> {
    /// Passes (each a pass of oracle calls and a QP solve).
    pub iteration: u64,
    /// Whether the last working-set QP was solved to its tolerance.
    qp_solved: bool,
    w: Vec<f64>,
    set: WorkingSet,
    outputs: Vec<Vec<O>>,
    psi_truth: Vec<SparseVec>,
    converged: bool,
    /// How many times ε was divided by 10 by the gap target.
    #[serde(default)]
    tightened: u32,
}

impl<'a, S: OutputSpace<Output: Sync>> Solver<StructProblem<'a, S>> for NSlack {
    type State = NSlackState<S::Output>;
    type Output = Vec<f64>;

    /// A gap target not set on the solver is the budget's gap tolerance (see `gap_target::GapTarget`).
    fn set_budget(&mut self, budget: &crate::Budget) {
        self.gap_target.adopt(budget);
    }

    fn init(&mut self, problem: &StructProblem<'a, S>) -> Result<Self::State, OptimError> {
        Ok(NSlackState {
            iteration: 0,
            qp_solved: true,
            w: vec![0.0; problem.dim()],
            set: WorkingSet {
                without_gram: self.params.qp == QpSolver::Smo,
                ..WorkingSet::default()
            },
            outputs: vec![Vec::new(); problem.n_samples()],
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
        let v = problem.oracle_all(&st.w)?;
        st.iteration += 1;
        let eps = crate::gap_target::tightened(self.params.epsilon, st.tightened);
        // The bounds where the oracle gives them: the primal stays an upper bound, the gap a certificate.
        let mean_hinge = v.iter().map(|v| v.upper()).sum::<f64>() / problem.n_samples() as f64;
        // The pass of oracle calls gives the exact primal at w, and w = (1/λ)Σα a holds for the working
        // set's duals: the gap is known at every pass, so a run stops as soon as it is certified, whether
        // or not the working-set QP was solved to its own tolerance. A gap within ε is what the ε test
        // promises (every violation within ε of its slack, the QP solved), so ε is honoured too.
        let lambda = problem.lambda();
        let primal = 0.5 * lambda * norm_sq(&st.w) + mean_hinge;
        let gap = primal - st.set.dual(lambda, &st.w);
        if let Some(target) = self.gap_target.get()
            && st.iteration > 1
            && gap <= target * primal.abs()
            && gap <= eps
        {
            st.converged = true;
            return Ok(());
        }
        let mut slacks = vec![0.0f64; problem.n_samples()];
        for p in &st.set.planes {
            slacks[p.group] = slacks[p.group].max(p.b - p.a.as_row().dot(&st.w));
        }
        // Converged when no example is violated by more than ε beyond its slack. A violated output that
        // is already in the working set adds nothing, but means the working-set QP needs more solving.
        let mut violated = 0;
        for (i, v) in v.into_iter().enumerate() {
            if v.hinge > slacks[i] + eps {
                violated += 1;
                if !st.outputs[i].contains(&v.output) {
                    let psi_hat = problem.space().joint_feature(&problem.x()[i], &v.output);
                    let c = problem.plane_scale(v.loss);
                    st.set.add(
                        SparseVec::lincomb(c, &st.psi_truth[i], -c, &psi_hat),
                        v.loss,
                        i,
                    );
                    st.outputs[i].push(v.output);
                }
            }
        }
        if violated == 0 && st.qp_solved {
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
        }
        let eps = crate::gap_target::tightened(self.params.epsilon, st.tightened);
        let n = problem.n_samples();
        match self.params.qp {
            // The blocks are solved to a KKT tolerance of ε/10 (hinge units): the outer loop only needs the
            // working-set problem a little more accurately than its own ε, and warm starts carry the rest.
            QpSolver::Smo => {
                st.qp_solved = st.set.solve_blocks(
                    problem.lambda(),
                    1.0 / n as f64,
                    n,
                    &mut st.w,
                    (0.1 * eps, self.deadline),
                );
            }
            QpSolver::Clarabel => {
                st.set.solve(
                    problem.lambda(),
                    &vec![1.0 / n as f64; n],
                    &mut st.w,
                    self.params.qp,
                )?;
                st.qp_solved = true;
            }
        }
        Ok(())
    }

    fn set_deadline(&mut self, deadline: Option<std::time::Instant>) {
        self.deadline = deadline;
    }

    fn progress(&self, _problem: &StructProblem<'a, S>, st: &Self::State) -> Progress {
        Progress {
            iteration: st.iteration,
            epoch: st.iteration as f64,
        }
    }

    planes_report!(S, |n| n);
}
