//! How a linear SVM's parameters are stored in model and checkpoint files: one flat record, the layout of
//! model format 3, kept as it is so that files written before the parameters became typed load unchanged
//! and JSON models keep their keys. The typed [`LinearSvmParams`] is converted to and from it by serde
//! (`#[serde(from, into)]`), so no other code sees the record.

use super::*;

/// The stored form of [`LinearSvmParams`]; never reorder, rename or retype a field (bincode reads a payload
/// with exactly the struct that wrote it). A change of layout bumps `model_file::FORMAT_VERSION` and
/// freezes this struct in `compat`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ParamsRecord {
    pub(crate) solver: SolverKind,
    pub(crate) regularization: Regularization,
    pub(crate) epochs: Option<f64>,
    pub(crate) iterations: Option<u64>,
    pub(crate) max_seconds: Option<f64>,
    pub(crate) tolerance: Option<f64>,
    pub(crate) batch_size: usize,
    pub(crate) step: Option<StepRule>,
    pub(crate) bias: Bias,
    pub(crate) projection: bool,
    pub(crate) average: bool,
    pub(crate) average_from_epoch: f64,
    pub(crate) sampling: Sampling,
    pub(crate) seed: u64,
    pub(crate) eval_every_epochs: Option<f64>,
    #[serde(default)]
    pub(crate) keep_best: bool,
    #[serde(default = "dcd_epsilon")]
    pub(crate) epsilon: f64,
    #[serde(default)]
    pub(crate) loss: BinaryLoss,
    #[serde(default)]
    pub(crate) class_weights: Vec<(f64, f64)>,
    #[serde(default)]
    pub(crate) gap: Option<f64>,
    #[serde(default = "one_block")]
    pub(crate) blocks: usize,
    /// Not stored (the model does not depend on it).
    #[serde(skip)]
    pub(crate) threads: Option<usize>,
    #[serde(default)]
    pub(crate) scale: Scaling,
    /// Not stored (the model does not depend on it).
    #[serde(skip)]
    pub(crate) trace: bool,
    /// The kernel asked for (format 4; `None` for the linear solvers).
    #[serde(default)]
    pub(crate) kernel: Option<KernelChoice>,
    /// Not stored (the model does not depend on it).
    #[serde(skip, default = "cache_mb")]
    pub(crate) cache_mb: f64,
    /// The approximated kernel asked for (format 5).
    #[serde(default)]
    pub(crate) approx: Option<crate::approx::Approximation>,
    /// The label trained as the positive class when one was asked for (format 6).
    #[serde(default)]
    pub(crate) positive: Option<f64>,
}

fn cache_mb() -> f64 {
    SmoParams::default().cache_mb
}

fn one_block() -> usize {
    1
}

fn dcd_epsilon() -> f64 {
    DcdParams::default().epsilon
}

/// The record's field for a step rule: `None` for the default `1/(λt)`, as files have always said it.
fn stored_step(step: StepRule) -> Option<StepRule> {
    (step != StepRule::Pegasos).then_some(step)
}

impl From<LinearSvmParams> for ParamsRecord {
    fn from(p: LinearSvmParams) -> Self {
        // Fields of the solvers not used: the values the facade has always written for them.
        let pegasos = LinearSolver::default_pegasos();
        let dcd = DcdParams::default();
        let (pg, step, epsilon, blocks) = match p.solver {
            LinearSolver::Dcd(d) => (pegasos, None, d.epsilon, d.blocks),
            LinearSolver::Pegasos(g) => (g, stored_step(g.step), dcd.epsilon, dcd.blocks),
            LinearSolver::Subgradient(s) => (pegasos, stored_step(s.step), dcd.epsilon, dcd.blocks),
            LinearSolver::Smo { smo, .. } => (pegasos, None, smo.epsilon, dcd.blocks),
            // Newton's relative gap target is its epsilon (its conjugate-gradient cap is not a flag).
            LinearSolver::Newton(n) => (pegasos, None, n.gap_target, dcd.blocks),
        };
        let (kernel, cache_mb) = match p.solver {
            LinearSolver::Smo { smo, kernel } => (Some(kernel), smo.cache_mb),
            _ => (None, SmoParams::default().cache_mb),
        };
        Self {
            solver: p.solver.kind(),
            regularization: p.regularization,
            epochs: p.budget.max_epochs,
            iterations: p.budget.max_iterations,
            max_seconds: p.budget.max_seconds,
            tolerance: p.budget.tolerance,
            batch_size: pg.batch_size,
            step,
            bias: p.bias,
            projection: pg.projection,
            average: pg.average,
            average_from_epoch: pg.average_from_epoch,
            sampling: pg.sampling,
            seed: p.seed,
            eval_every_epochs: p
                .budget
                .eval_every_epochs
                .is_finite()
                .then_some(p.budget.eval_every_epochs),
            keep_best: p.budget.keep_best,
            epsilon,
            loss: p.loss,
            class_weights: p.class_weights,
            gap: p.budget.gap_tolerance,
            blocks,
            threads: p.threads,
            scale: p.scale,
            trace: p.trace,
            kernel,
            cache_mb,
            approx: p.approx,
            positive: p.positive,
        }
    }
}

impl From<ParamsRecord> for LinearSvmParams {
    fn from(r: ParamsRecord) -> Self {
        let step = r.step.unwrap_or(StepRule::Pegasos);
        let solver = match r.solver {
            SolverKind::Dcd => LinearSolver::Dcd(
                DcdParams::new()
                    .epsilon(r.epsilon)
                    .seed(r.seed)
                    .blocks(r.blocks),
            ),
            SolverKind::Pegasos => LinearSolver::Pegasos(PegasosParams {
                batch_size: r.batch_size,
                step,
                projection: r.projection,
                average: r.average,
                average_from_epoch: r.average_from_epoch,
                sampling: r.sampling,
                seed: r.seed,
            }),
            SolverKind::Subgradient => LinearSolver::Subgradient(SubgradientParams { step }),
            SolverKind::Smo => LinearSolver::Smo {
                smo: SmoParams {
                    epsilon: r.epsilon,
                    cache_mb: r.cache_mb,
                },
                kernel: r.kernel.unwrap_or_default(),
            },
            SolverKind::Newton => LinearSolver::Newton(Newton {
                gap_target: r.epsilon,
                ..Newton::default()
            }),
        };
        let mut budget = Budget::default();
        budget.max_iterations = r.iterations;
        budget.max_epochs = r.epochs;
        budget.max_seconds = r.max_seconds;
        budget.tolerance = r.tolerance;
        budget.eval_every_epochs = r.eval_every_epochs.unwrap_or(f64::INFINITY);
        budget.keep_best = r.keep_best;
        budget.gap_tolerance = r.gap;
        Self {
            solver,
            regularization: r.regularization,
            loss: r.loss,
            budget,
            bias: r.bias,
            class_weights: r.class_weights,
            scale: r.scale,
            seed: r.seed,
            threads: r.threads,
            trace: r.trace,
            approx: r.approx,
            positive: r.positive,
        }
    }
}
