//! Parameters of a linear SVM: the solver, the regularization, budgets and each solver's settings, checked once.

use super::*;

/// Which algorithm trains the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SolverKind {
    /// Pegasos (stochastic, `O(nnz)` per step).
    Pegasos,
    /// The batch subgradient method (one pass per iteration; best iterate kept).
    Subgradient,
    /// Dual coordinate descent (LIBLINEAR's `-s 3`), stopping on the projected gradient: the default, since
    /// it is the fastest method here and certifies its result.
    #[default]
    Dcd,
    /// A kernel SVM by SMO (LIBSVM's `-s 0`): the decision is a sum over support vectors.
    Smo,
    /// Truncated Newton in the primal, for the squared hinge and logistic losses (LIBLINEAR's `-s 2` and
    /// `-s 0`): on rows ≫ features it takes tens of passes where DCD takes hundreds.
    Newton,
}

impl std::fmt::Display for SolverKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Pegasos => "pegasos",
            Self::Subgradient => "subgradient",
            Self::Dcd => "dcd",
            Self::Smo => "smo",
            Self::Newton => "newton",
        })
    }
}

impl std::str::FromStr for SolverKind {
    type Err = OptimError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "pegasos" => Ok(Self::Pegasos),
            "subgradient" => Ok(Self::Subgradient),
            "dcd" => Ok(Self::Dcd),
            "smo" => Ok(Self::Smo),
            "newton" => Ok(Self::Newton),
            _ => Err(OptimError::InvalidParam {
                name: "solver",
                value: s.into(),
                reason: "must be pegasos, subgradient, dcd, smo or newton",
            }),
        }
    }
}

/// The algorithm that trains a linear SVM, with its own settings (the seed is [`LinearSvmParams::seed`]).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum LinearSolver {
    /// Dual coordinate descent (LIBLINEAR's `-s 3`, `-s 1` with the squared hinge): the default.
    Dcd(DcdParams),
    /// Pegasos.
    Pegasos(PegasosParams),
    /// The batch subgradient method.
    Subgradient(SubgradientParams),
    /// A kernel SVM by SMO, with its kernel.
    Smo {
        /// The solver's settings.
        smo: SmoParams,
        /// The kernel.
        kernel: KernelChoice,
    },
    /// Truncated Newton in the primal (the squared hinge and logistic losses), stopping on its certified
    /// relative gap.
    Newton(Newton),
}

impl LinearSolver {
    /// Which algorithm.
    pub fn kind(&self) -> SolverKind {
        match self {
            Self::Dcd(_) => SolverKind::Dcd,
            Self::Pegasos(_) => SolverKind::Pegasos,
            Self::Subgradient(_) => SolverKind::Subgradient,
            Self::Smo { .. } => SolverKind::Smo,
            Self::Newton(_) => SolverKind::Newton,
        }
    }

    /// Pegasos as the facade runs it by default: the iterates averaged from the second pass on, permutation
    /// sampling, `η_t = 1/(λt)` (measured in docs/BENCHMARKS.md: on a9a the average after 10 epochs reaches
    /// LIBLINEAR's test accuracy, 0.850, where the last iterate stops at 0.824).
    pub fn default_pegasos() -> PegasosParams {
        PegasosParams::new().average(true)
    }

    fn set_seed(&mut self, seed: u64) -> Result<(), Error> {
        let own = match self {
            Self::Dcd(d) => &mut d.seed,
            Self::Pegasos(p) => &mut p.seed,
            Self::Subgradient(_) | Self::Smo { .. } | Self::Newton(_) => return Ok(()),
        };
        if *own != 0 && *own != seed {
            return Err(OptimError::InvalidParam {
                name: "seed",
                value: own.to_string(),
                reason: "of the solver differs from LinearSvmParams::seed, the one seed of a run; set only that",
            }
            .into());
        }
        *own = seed;
        Ok(())
    }
}

/// The solver's name, as the command line writes it.
impl std::fmt::Display for LinearSolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.kind().fmt(f)
    }
}

impl From<DcdParams> for LinearSolver {
    fn from(p: DcdParams) -> Self {
        Self::Dcd(p)
    }
}

impl From<PegasosParams> for LinearSolver {
    fn from(p: PegasosParams) -> Self {
        Self::Pegasos(p)
    }
}

impl From<KernelChoice> for LinearSolver {
    /// SMO with its default settings and this kernel.
    fn from(kernel: KernelChoice) -> Self {
        Self::Smo {
            smo: SmoParams::default(),
            kernel,
        }
    }
}

impl From<Newton> for LinearSolver {
    fn from(p: Newton) -> Self {
        Self::Newton(p)
    }
}

impl From<SubgradientParams> for LinearSolver {
    fn from(p: SubgradientParams) -> Self {
        Self::Subgradient(p)
    }
}

/// Each kind with the facade's defaults for it.
impl From<SolverKind> for LinearSolver {
    fn from(kind: SolverKind) -> Self {
        match kind {
            SolverKind::Dcd => Self::Dcd(DcdParams::default()),
            SolverKind::Pegasos => Self::Pegasos(Self::default_pegasos()),
            SolverKind::Subgradient => Self::Subgradient(SubgradientParams::new()),
            SolverKind::Smo => Self::Smo {
                smo: SmoParams::default(),
                kernel: KernelChoice::default(),
            },
            SolverKind::Newton => Self::Newton(Newton::default()),
        }
    }
}

/// Unchecked parameters of a linear SVM; [`LinearSvmParams::check`] turns them into a [`LinearSvm`].
///
/// Model and checkpoint files store them as the flat record of model format 3 (see `record.rs`), so files
/// written before they became typed load unchanged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "ParamsRecord", into = "ParamsRecord")]
#[non_exhaustive]
pub struct LinearSvmParams {
    /// The algorithm and its settings.
    pub solver: LinearSolver,
    /// λ, or C in LIBLINEAR's (`CSum`) or SVM-struct's (`CMean`) convention: converted to λ once, by
    /// [`Regularization::lambda`], with the training set's size.
    pub regularization: Regularization,
    /// The loss: the hinge, or the squared hinge (DCD only).
    pub loss: BinaryLoss,
    /// When to stop and how often to evaluate. With `eval_every_epochs` infinite (the default) the run
    /// evaluates once per pass when something needs it (a tolerance, a gap stop, `keep_best`, a trace), else
    /// once at the end. Without any limit, [`LinearSvmParams::check`] sets the solver's default budget.
    pub budget: Budget,
    /// How the intercept is handled.
    pub bias: Bias,
    /// Class weights `(label, weight)`: the loss of an example of that label counts `weight` times
    /// (LIBLINEAR's `-wi`); labels not listed weigh 1.
    pub class_weights: Vec<(f64, f64)>,
    /// Feature scaling fitted on the training rows and stored in the model.
    pub scale: Scaling,
    /// The seed of all randomness.
    pub seed: u64,
    /// Worker threads (`None`: all cores). The model does not depend on it, so it is not stored: model files
    /// are the same bytes whatever the thread count.
    pub threads: Option<usize>,
    /// Someone reads the trace: evaluate once per pass unless `budget` says how often. Not stored in models,
    /// which do not depend on it.
    pub trace: bool,
    /// An approximated kernel (format 5): the linear solver trains on random Fourier or Nyström features
    /// fitted on the scaled training rows.
    pub approx: Option<crate::approx::Approximation>,
    /// The label to train as the positive class (+1; `predict` gives it when the score is above the
    /// cut-off, and precision, recall and the probabilities are its): `None` for the larger label.
    pub positive: Option<f64>,
}

impl Default for LinearSvmParams {
    fn default() -> Self {
        Self {
            solver: LinearSolver::Dcd(DcdParams::default()),
            regularization: Regularization::CSum(1.0),
            loss: BinaryLoss::Hinge,
            budget: Budget::default(),
            bias: Bias::Feature,
            class_weights: Vec::new(),
            scale: Scaling::None,
            seed: 0,
            threads: None,
            trace: false,
            approx: None,
            positive: None,
        }
    }
}

impl LinearSvmParams {
    /// Default passes when no budget is given: Pegasos.
    pub const DEFAULT_PEGASOS_EPOCHS: f64 = 10.0;
    /// Default iterations when no budget is given: the batch method.
    pub const DEFAULT_SUBGRADIENT_ITERATIONS: u64 = 500;
    /// Default passes when no budget is given: DCD (which normally stops on its own test long before).
    pub const DEFAULT_DCD_EPOCHS: f64 = 1000.0;

    /// The defaults: LIBLINEAR's, dual coordinate descent at `C = 1` with ε = 0.1 and the intercept as a
    /// regularized constant feature, seed 0: the method that is fastest here and stops on a certified
    /// criterion. For Pegasos ([`LinearSolver::default_pegasos`]) the default budget is 10 epochs.
    ///
    /// An unregularized intercept under Pegasos' `η_t = 1/(λt)` takes steps of `1/(λt)` with no shrinkage
    /// and wanders far from the optimum for small λ, hence the regularized feature.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the solver: a [`LinearSolver`], one solver's parameters ([`DcdParams`], [`PegasosParams`],
    /// [`SubgradientParams`]), or a [`SolverKind`] with the facade's defaults for it.
    pub fn solver(mut self, solver: impl Into<LinearSolver>) -> Self {
        self.solver = solver.into();
        self
    }

    /// Sets λ.
    pub fn lambda(self, lambda: f64) -> Self {
        self.regularization(Regularization::Lambda(lambda))
    }

    /// Sets C in LIBLINEAR's convention `½‖w‖² + CΣℓ` (converted with the training set size).
    pub fn c(self, c: f64) -> Self {
        self.regularization(Regularization::CSum(c))
    }

    /// Sets the regularization in any convention.
    pub fn regularization(mut self, r: Regularization) -> Self {
        self.regularization = r;
        self
    }

    /// Sets the budget.
    pub fn budget(mut self, budget: Budget) -> Self {
        self.budget = budget;
        self
    }

    /// Sets the number of passes (a shortcut into [`LinearSvmParams::budget`]).
    pub fn epochs(mut self, epochs: f64) -> Self {
        self.budget.max_epochs = Some(epochs);
        self
    }

    /// Sets the number of steps (a shortcut into [`LinearSvmParams::budget`]).
    pub fn iterations(mut self, iterations: u64) -> Self {
        self.budget.max_iterations = Some(iterations);
        self
    }

    /// Stops DCD when the duality gap is at most this fraction of the objective (checked at evaluations; a
    /// shortcut into [`LinearSvmParams::budget`]).
    pub fn gap(mut self, gap: f64) -> Self {
        self.budget.gap_tolerance = Some(gap);
        self
    }

    /// Sets the loss.
    pub fn loss(mut self, loss: BinaryLoss) -> Self {
        self.loss = loss;
        self
    }

    /// Sets the bias mode.
    pub fn bias(mut self, bias: Bias) -> Self {
        self.bias = bias;
        self
    }

    /// Scales the features (statistics from the training rows, stored in the model).
    pub fn scale(mut self, scale: Scaling) -> Self {
        self.scale = scale;
        self
    }

    /// Sets the number of worker threads.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = Some(threads);
        self
    }

    /// Sets the seed.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Trains on an approximated kernel's features (random Fourier or Nyström) instead of the rows.
    pub fn approx(mut self, approx: crate::approx::Approximation) -> Self {
        self.approx = Some(approx);
        self
    }

    /// Checks every parameter once; only checked values reach a solver.
    ///
    /// # Errors
    /// [`Error::Optim`] or [`Error::Core`] naming the bad value.
    ///
    /// # Examples
    /// ```
    /// use maxmargin::LinearSvmParams;
    /// assert!(LinearSvmParams::new().c(1.0).check().is_ok());
    /// assert!(LinearSvmParams::new().lambda(-1.0).check().is_err());
    /// assert!(LinearSvmParams::new().epochs(0.0).check().is_err());
    /// ```
    pub fn check(mut self) -> Result<LinearSvm, Error> {
        // Any positive n validates the constant; the real n is used at fit time.
        self.regularization.lambda(1)?;
        let b = &mut self.budget;
        if b.max_epochs.is_none() && b.max_iterations.is_none() && b.max_seconds.is_none() {
            match self.solver {
                LinearSolver::Pegasos(_) => b.max_epochs = Some(Self::DEFAULT_PEGASOS_EPOCHS),
                LinearSolver::Subgradient(_) => {
                    b.max_iterations = Some(Self::DEFAULT_SUBGRADIENT_ITERATIONS)
                }
                LinearSolver::Dcd(_) | LinearSolver::Smo { .. } | LinearSolver::Newton(_) => {
                    b.max_epochs = Some(Self::DEFAULT_DCD_EPOCHS)
                }
            }
        }
        crate::parallel::check_threads(self.threads)?;
        self.solver.set_seed(self.seed)?;
        if let Some(a) = &self.approx {
            a.check()?;
            if matches!(self.solver, LinearSolver::Smo { .. }) {
                return Err(crate::error::refuse(
                    "approx",
                    a.method,
                    "cannot apply to the exact kernel SVM (smo): an approximated kernel is trained by \
                     the linear solvers (dcd, pegasos, subgradient)",
                ));
            }
        }
        self.run_budget().check()?;
        match self.solver {
            LinearSolver::Pegasos(p) => {
                p.check()?;
            }
            LinearSolver::Subgradient(p) => {
                p.check()?;
            }
            LinearSolver::Newton(p) => {
                p.check()?;
                if self.loss == BinaryLoss::Hinge {
                    return Err(OptimError::InvalidParam {
                        name: "loss",
                        value: "hinge".into(),
                        reason: "cannot apply to newton, which needs a differentiable loss: give \
                                 squared-hinge or logistic, or train the hinge by dcd",
                    }
                    .into());
                }
            }
            LinearSolver::Smo { smo, kernel } => {
                smo.check()?;
                let refuse = |name: &'static str, value: String, reason: &'static str| {
                    Err(OptimError::InvalidParam {
                        name,
                        value,
                        reason,
                    }
                    .into())
                };
                kernel.check()?;
                if self.bias != Bias::Unregularized {
                    return refuse(
                        "bias",
                        format!("{:?}", self.bias).to_lowercase(),
                        "cannot apply to a kernel SVM, whose intercept is unregularized (as LIBSVM's): \
                         give unregularized or leave it out",
                    );
                }
                if self.loss != BinaryLoss::Hinge {
                    let name = match self.loss {
                        BinaryLoss::Logistic => "logistic",
                        _ => "squared-hinge",
                    };
                    return refuse(
                        "loss",
                        name.into(),
                        "cannot apply to a kernel SVM, which has the hinge loss",
                    );
                }
            }
            LinearSolver::Dcd(d) => {
                d.check()?;
                if !d.shrinking {
                    return Err(OptimError::InvalidParam {
                        name: "shrinking",
                        value: "false".into(),
                        reason: "is not stored in model files, so the facade always shrinks; train with \
                                 maxmargin_optim::Dcd to compare",
                    }
                    .into());
                }
                if self.bias == Bias::Unregularized && d.blocks > 1 {
                    return Err(OptimError::InvalidParam {
                        name: "bias",
                        value: "unregularized".into(),
                        reason: "is not supported by dcd with blocks; use one block, or bias feature or none",
                    }
                    .into());
                }
            }
        }
        Ok(LinearSvm {
            step_details: false,
            sample_weights: None,
            params: self,
            plan: crate::checkpoint::CheckpointPlan::default(),
        })
    }

    /// Whether Newton's method in the primal ([`SolverKind::Newton`]) is the solver to choose when none was
    /// asked for, on `n_rows` rows of `n_features` columns: the loss is smooth (the squared hinge or the
    /// logistic loss) and the rows outnumber the features the model weighs (the approximated kernel's
    /// components, if any). DCD's passes grow with the condition of the rows' `n × n` Gram matrix and
    /// Newton's with the `d × d` Hessian's: on 8000 dense rows of 1000 features DCD ends its 1000 passes
    /// uncertified where Newton certifies in 10 steps (scikit-learn's `dual="auto"` makes the same choice).
    pub fn primal_suits(&self, n_rows: usize, n_features: usize) -> bool {
        let d = self
            .approx
            .as_ref()
            .map_or(n_features, |a| a.dimension(n_rows));
        self.loss != BinaryLoss::Hinge && n_rows > d
    }

    /// Whether the evaluations of a run are made only for a watcher (a trace, step details): an unwatched
    /// run would make none, so they test no stop and keep no best output.
    pub(crate) fn watched_only(&self) -> bool {
        let b = self.budget;
        b.eval_every_epochs.is_infinite()
            && b.tolerance.is_none()
            && b.gap_tolerance.is_none()
            && !b.keep_best
    }

    /// The trainer's budget: evaluations once per pass when something reads them and the budget does not
    /// say how often.
    pub(crate) fn run_budget(&self) -> Budget {
        let b = self.budget;
        let needed =
            b.tolerance.is_some() || b.gap_tolerance.is_some() || b.keep_best || self.trace;
        b.evaluating_every(if b.eval_every_epochs.is_infinite() && needed {
            1.0
        } else {
            b.eval_every_epochs
        })
    }
}

impl LinearSvmParams {
    /// The kernel a kernel SVM was asked for (`None` for the linear solvers).
    pub(crate) fn kernel_choice(&self) -> Option<KernelChoice> {
        match self.solver {
            LinearSolver::Smo { kernel, .. } => Some(kernel),
            _ => None,
        }
    }
}

impl crate::checkpoint::SameProblem for LinearSvmParams {
    /// Also the seed and DCD's blocks: the model depends on them, and a run resumed with others matched
    /// neither run (a user's probe).
    fn differs_from(&self, stored: &Self) -> Option<(&'static str, String, String)> {
        // Unset, the positive label is the larger one (it read "positive label none").
        let positive = |p: &Self| {
            p.positive.map_or_else(
                || "the larger label (the default)".to_string(),
                maxmargin_io::libsvm::format_number,
            )
        };
        let blocks = |p: &Self| match p.solver {
            LinearSolver::Dcd(d) => d.blocks,
            _ => 1,
        };
        crate::checkpoint::first_difference(&[
            ("seed", &stored.seed, &self.seed),
            ("blocks", &blocks(stored), &blocks(self)),
            ("bias", &stored.bias, &self.bias),
            ("loss", &stored.loss, &self.loss),
            ("class weights", &stored.class_weights, &self.class_weights),
            (
                "scaling",
                &stored.scale.to_string(),
                &self.scale.to_string(),
            ),
            ("kernel", &stored.kernel_choice(), &self.kernel_choice()),
            ("approximated kernel", &stored.approx, &self.approx),
            ("positive label", &positive(stored), &positive(self)),
        ])
    }
}
