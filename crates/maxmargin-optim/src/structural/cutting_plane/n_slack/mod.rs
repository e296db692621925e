//! n-slack cutting planes: one constraint per example and violating output, the dual by example blocks.

use super::*;
use maxmargin_struct::Violation;

mod distributed;

pub use distributed::{NSlackRankState, NSlackRanks};

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
            early: true,
        })
    }
}

/// Checked n-slack cutting planes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NSlack {
    params: NSlackParams,
    gap_target: crate::gap_target::GapTarget,
    deadline: Option<std::time::Instant>,
    early: bool,
}

impl NSlack {
    /// Also requires a relative duality gap of at most `target` when the ε test passes (see
    /// [`OneSlack::with_gap_target`]).
    pub fn with_gap_target(mut self, target: Option<f64>) -> Self {
        self.gap_target.set = target;
        self
    }

    /// Whether a pass whose certified gap is within the gap target ends the run at once, before the ε test
    /// passes (on by default: every pass knows its gap). Off, only the ε test ends the run, accepted by the
    /// gap target as [`NSlack::with_gap_target`] says: for an ε asked tighter than the gap target implies.
    pub fn stop_when_certified(mut self, on: bool) -> Self {
        self.early = on;
        self
    }

    /// Whether a pass with primal `primal` at `w` is certified within the gap target (never the first pass,
    /// whose working set is empty).
    fn certified(
        &self,
        primal: f64,
        first: bool,
        set: &WorkingSet,
        lambda: f64,
        w: &[f64],
    ) -> bool {
        self.early
            && !first
            && self
                .gap_target
                .get()
                .is_some_and(|t| primal - set.dual(lambda, w) <= t * primal.abs())
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
        let (n, lambda) = (problem.n_samples(), problem.lambda());
        // The bounds where the oracle gives them: the primal stays an upper bound, the gap a certificate.
        let mean_hinge = v.iter().map(|v| v.upper()).sum::<f64>() / n as f64;
        let primal = 0.5 * lambda * norm_sq(&st.w) + mean_hinge;
        if self.certified(primal, st.iteration == 1, &st.set, lambda, &st.w) {
            st.converged = true;
            return Ok(());
        }
        let slacks = st.set.slacks(n, &st.w);
        let found = violations(problem, v, (&slacks, eps), &st.outputs, &st.psi_truth);
        for (&(i, ..), output) in found.planes.iter().zip(found.outputs) {
            st.outputs[i].push(output);
        }
        let pass = Pass {
            primal,
            violated: found.violated,
        };
        let held = Held {
            w: &mut st.w,
            set: &mut st.set,
            qp_solved: &mut st.qp_solved,
            tightened: st.tightened,
        };
        self.decide_and_solve((lambda, n), pass, found.planes, held)?
            .apply(&mut st.converged, &mut st.tightened);
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

/// What a pass of oracle calls found, for the holder of the working set to decide on.
struct Pass {
    /// `λ/2‖w‖² + (1/n)Σ` of the oracle's upper bounds on the hinges.
    primal: f64,
    /// How many examples are violated by more than ε beyond their slack.
    violated: usize,
}

/// The state the working set's holder changes: `w`, the working set, whether its QP was solved, and ε's
/// divisions so far.
struct Held<'s> {
    w: &'s mut Vec<f64>,
    set: &'s mut WorkingSet,
    qp_solved: &'s mut bool,
    tightened: u32,
}

/// The outputs of a pass that violate their example's constraints by more than ε: how many examples are
/// violated, and the planes `(example, a, b)` of the violating outputs not yet among the example's `outputs`
/// (the working set's), in example order, with those outputs (for the caller to keep once it adds the planes).
struct Found<O> {
    violated: usize,
    planes: Vec<(usize, SparseVec, f64)>,
    outputs: Vec<O>,
}

fn violations<S: OutputSpace>(
    problem: &StructProblem<'_, S>,
    found: Vec<Violation<S::Output>>,
    (slacks, eps): (&[f64], f64),
    outputs: &[Vec<S::Output>],
    psi_truth: &[SparseVec],
) -> Found<S::Output> {
    let mut out = Found {
        violated: 0,
        planes: Vec::new(),
        outputs: Vec::new(),
    };
    // A violated output that is already in the working set adds nothing, but means the working-set QP
    // needs more solving.
    for (i, v) in found.into_iter().enumerate() {
        if v.hinge > slacks[i] + eps {
            out.violated += 1;
            if !outputs[i].contains(&v.output) {
                let psi_hat = problem.space().joint_feature(&problem.x()[i], &v.output);
                let c = problem.plane_scale(v.loss);
                let a = SparseVec::lincomb(c, &psi_truth[i], -c, &psi_hat);
                out.planes.push((i, a, v.loss));
                out.outputs.push(v.output);
            }
        }
    }
    out
}

impl NSlack {
    /// The working set's holder's part of a pass not already certified (one process's, or rank 0's over
    /// ranks; see [`NSlack::certified`]: the pass gives the exact primal at `w`, and `w = (1/λ)Σα a` holds
    /// for the working set's duals, so the gap is known at every pass), for a problem of `n` examples: the
    /// new planes (global example numbers) join the working set; with no example violated by more than ε and
    /// the QP solved, the ε test has passed and the gap target accepts it or divides ε by 10; and the QP is
    /// solved again.
    fn decide_and_solve(
        &self,
        (lambda, n): (f64, usize),
        pass: Pass,
        planes: Vec<(usize, SparseVec, f64)>,
        held: Held<'_>,
    ) -> Result<Decision, OptimError> {
        for (i, a, b) in planes {
            held.set.add(a, b, i);
        }
        let mut decision = Decision::Go;
        let eps = crate::gap_target::tightened(self.params.epsilon, held.tightened);
        if pass.violated == 0 && *held.qp_solved {
            let dual = held.set.dual(lambda, held.w);
            if gap_accepts(self.gap_target.get(), eps, pass.primal, dual) {
                return Ok(Decision::Converged);
            }
            decision = Decision::Tighten;
        }
        let tightened = held.tightened + u32::from(decision == Decision::Tighten);
        let eps = crate::gap_target::tightened(self.params.epsilon, tightened);
        match self.params.qp {
            // The blocks are solved to a KKT tolerance of ε/10 (hinge units): the outer loop only needs the
            // working-set problem a little more accurately than its own ε, and warm starts carry the rest.
            QpSolver::Smo => {
                *held.qp_solved = held.set.solve_blocks(
                    lambda,
                    1.0 / n as f64,
                    n,
                    held.w,
                    (0.1 * eps, self.deadline),
                );
            }
            QpSolver::Clarabel => {
                held.set
                    .solve(lambda, &vec![1.0 / n as f64; n], held.w, self.params.qp)?;
                *held.qp_solved = true;
            }
        }
        Ok(decision)
    }
}
