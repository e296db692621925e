//! Parameters of a linear SVM: the solver, the regularization, budgets and each solver's settings, checked once.

use super::*;

/// Which algorithm trains the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SolverKind {
    /// Pegasos (stochastic, `O(nnz)` per step).
    Pegasos,
    /// The batch subgradient method (one pass per iteration; best iterate kept).
    Subgradient,
    /// Dual coordinate descent (LIBLINEAR's `-s 3`), stopping on the projected gradient: the default, since
    /// it is the fastest method here and certifies its result.
    #[default]
    Dcd,
}

impl std::fmt::Display for SolverKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Pegasos => "pegasos",
            Self::Subgradient => "subgradient",
            Self::Dcd => "dcd",
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
            _ => Err(OptimError::InvalidParam {
                name: "solver",
                value: s.into(),
                reason: "must be pegasos, subgradient or dcd",
            }),
        }
    }
}

/// Unchecked parameters of a linear SVM; [`LinearSvmParams::check`] turns them into a [`LinearSvm`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinearSvmParams {
    /// The algorithm.
    pub solver: SolverKind,
    /// λ, or C in LIBLINEAR's (`CSum`) or SVM-struct's (`CMean`) convention.
    pub regularization: Regularization,
    /// Passes over the data (for the batch method, iterations).
    pub epochs: Option<f64>,
    /// Steps (Pegasos) or iterations (batch).
    pub iterations: Option<u64>,
    /// Wall-clock budget in seconds (results then depend on the machine).
    pub max_seconds: Option<f64>,
    /// Stop when the objective improves by less than this, relative, over the last evaluations.
    pub tolerance: Option<f64>,
    /// Examples per Pegasos step.
    pub batch_size: usize,
    /// The step rule; `None` means `1/(λt)`.
    pub step: Option<StepRule>,
    /// How the intercept is handled.
    pub bias: Bias,
    /// Pegasos' projection onto the ball of radius `1/√λ`.
    pub projection: bool,
    /// Return Pegasos' averaged iterate.
    pub average: bool,
    /// Average Pegasos' iterates only after this many passes.
    pub average_from_epoch: f64,
    /// How Pegasos draws examples.
    pub sampling: Sampling,
    /// The seed of all randomness.
    pub seed: u64,
    /// Evaluate the objective and certificate (for the trace) every this many passes; `None`: only when
    /// something needs it (a tolerance, a gap stop, `keep_best`), else once at the end.
    pub eval_every_epochs: Option<f64>,
    /// Return the evaluated iterate with the lowest objective instead of the final one.
    #[serde(default)]
    pub keep_best: bool,
    /// DCD: stop when the projected gradient's spread is below this (LIBLINEAR's `-e`).
    #[serde(default = "dcd_epsilon")]
    pub epsilon: f64,
    /// The loss: the hinge, or the squared hinge (DCD only).
    #[serde(default)]
    pub loss: BinaryLoss,
    /// Class weights `(label, weight)`: the loss of an example of that label counts `weight` times
    /// (LIBLINEAR's `-wi`); labels not listed weigh 1.
    #[serde(default)]
    pub class_weights: Vec<(f64, f64)>,
    /// Stop at an evaluation whose certified duality gap is at most this fraction of the objective (DCD).
    #[serde(default)]
    pub gap: Option<f64>,
    /// DCD: blocks updated in parallel per pass (1: sequential). The model depends on this and the seed,
    /// not on the number of threads.
    #[serde(default = "one_block")]
    pub blocks: usize,
    /// Worker threads (`None`: all cores). The model does not depend on it, so it is not stored: model files
    /// are the same bytes whatever the thread count.
    #[serde(skip)]
    pub threads: Option<usize>,
    /// Feature scaling fitted on the training rows and stored in the model.
    #[serde(default)]
    pub scale: Scaling,
    /// Someone reads the trace: without `eval_every_epochs`, evaluate once per pass. Not stored in models,
    /// which do not depend on it.
    #[serde(skip)]
    pub trace: bool,
}

fn one_block() -> usize {
    1
}

fn dcd_epsilon() -> f64 {
    0.1
}

impl Default for LinearSvmParams {
    fn default() -> Self {
        Self {
            solver: SolverKind::Dcd,
            regularization: Regularization::CSum(1.0),
            epochs: None,
            iterations: None,
            max_seconds: None,
            tolerance: None,
            batch_size: 1,
            step: None,
            bias: Bias::Feature,
            projection: false,
            average: true,
            average_from_epoch: 1.0,
            sampling: Sampling::Permutation,
            seed: 0,
            eval_every_epochs: None,
            keep_best: false,
            epsilon: 0.1,
            loss: BinaryLoss::Hinge,
            class_weights: Vec::new(),
            gap: None,
            blocks: 1,
            threads: None,
            scale: Scaling::None,
            trace: false,
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
    /// criterion. For Pegasos (one [`LinearSvmParams::solver`] away) the defaults are 10 epochs, the iterates
    /// averaged from the second epoch on, permutation sampling.
    ///
    /// Pegasos' defaults were measured (see docs/BENCHMARKS.md): on a9a the averaged iterate after 10 epochs
    /// reaches LIBLINEAR's test accuracy (0.850) where the last iterate stops at 0.824, and an
    /// unregularized intercept under `η_t = 1/(λt)` takes steps of `1/(λt)` with no shrinkage and wanders
    /// far from the optimum for small λ.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the solver.
    pub fn solver(mut self, solver: SolverKind) -> Self {
        self.solver = solver;
        self
    }

    /// Sets λ.
    pub fn lambda(mut self, lambda: f64) -> Self {
        self.regularization = Regularization::Lambda(lambda);
        self
    }

    /// Sets C in LIBLINEAR's convention `½‖w‖² + CΣℓ` (converted with the training set size).
    pub fn c(mut self, c: f64) -> Self {
        self.regularization = Regularization::CSum(c);
        self
    }

    /// Sets the regularization in any convention.
    pub fn regularization(mut self, r: Regularization) -> Self {
        self.regularization = r;
        self
    }

    /// Sets the number of passes.
    pub fn epochs(mut self, epochs: f64) -> Self {
        self.epochs = Some(epochs);
        self
    }

    /// Sets the number of steps.
    pub fn iterations(mut self, iterations: u64) -> Self {
        self.iterations = Some(iterations);
        self
    }

    /// Sets a time budget.
    pub fn max_seconds(mut self, seconds: f64) -> Self {
        self.max_seconds = Some(seconds);
        self
    }

    /// Sets the tolerance.
    pub fn tolerance(mut self, tol: f64) -> Self {
        self.tolerance = Some(tol);
        self
    }

    /// Sets the batch size.
    pub fn batch_size(mut self, k: usize) -> Self {
        self.batch_size = k;
        self
    }

    /// Sets the step rule.
    pub fn step(mut self, step: StepRule) -> Self {
        self.step = Some(step);
        self
    }

    /// Sets the bias mode.
    pub fn bias(mut self, bias: Bias) -> Self {
        self.bias = bias;
        self
    }

    /// Turns the projection on or off.
    pub fn projection(mut self, on: bool) -> Self {
        self.projection = on;
        self
    }

    /// Turns averaging on or off.
    pub fn average(mut self, on: bool) -> Self {
        self.average = on;
        self
    }

    /// Sets the sampling scheme.
    pub fn sampling(mut self, s: Sampling) -> Self {
        self.sampling = s;
        self
    }

    /// Evaluates the objective (for the trace) every `epochs` passes; each evaluation costs a pass.
    pub fn eval_every(mut self, epochs: f64) -> Self {
        self.eval_every_epochs = Some(epochs);
        self
    }

    /// Scales the features (statistics from the training rows, stored in the model).
    pub fn scale(mut self, scale: Scaling) -> Self {
        self.scale = scale;
        self
    }

    /// Sets DCD's stopping tolerance on the projected gradient (LIBLINEAR's `-e`).
    pub fn epsilon(mut self, epsilon: f64) -> Self {
        self.epsilon = epsilon;
        self
    }

    /// Stops DCD when the duality gap is at most this fraction of the objective (checked at evaluations).
    pub fn gap(mut self, gap: f64) -> Self {
        self.gap = Some(gap);
        self
    }

    /// Sets the number of DCD blocks updated in parallel.
    pub fn blocks(mut self, blocks: usize) -> Self {
        self.blocks = blocks;
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
        if self.epochs.is_none() && self.iterations.is_none() && self.max_seconds.is_none() {
            match self.solver {
                SolverKind::Pegasos => self.epochs = Some(Self::DEFAULT_PEGASOS_EPOCHS),
                SolverKind::Subgradient => {
                    self.iterations = Some(Self::DEFAULT_SUBGRADIENT_ITERATIONS)
                }
                SolverKind::Dcd => self.epochs = Some(Self::DEFAULT_DCD_EPOCHS),
            }
        }
        crate::parallel::check_threads(self.threads)?;
        self.budget().check()?;
        self.pegasos().check()?;
        self.subgradient().check()?;
        self.dcd().check()?;
        if self.solver == SolverKind::Dcd && self.bias == Bias::Unregularized && self.blocks > 1 {
            return Err(OptimError::InvalidParam {
                name: "bias",
                value: "unregularized".into(),
                reason: "is not supported by dcd with blocks; use one block, or bias feature or none",
            }
            .into());
        }
        Ok(LinearSvm {
            step_details: false,
            sample_weights: None,
            params: self,
            plan: crate::checkpoint::CheckpointPlan::default(),
        })
    }

    pub(super) fn budget(&self) -> Budget {
        let needed = self.tolerance.is_some() || self.gap.is_some() || self.keep_best || self.trace;
        Budget {
            max_iterations: self.iterations,
            max_epochs: self.epochs,
            max_seconds: self.max_seconds,
            tolerance: self.tolerance,
            eval_every_epochs: self.eval_every_epochs.unwrap_or(if needed {
                1.0
            } else {
                f64::INFINITY
            }),
            keep_best: self.keep_best,
            gap_tolerance: self.gap,
        }
    }

    pub(super) fn pegasos(&self) -> PegasosParams {
        PegasosParams::new()
            .batch_size(self.batch_size)
            .step(self.step.unwrap_or(StepRule::Pegasos))
            .projection(self.projection)
            .average(self.average)
            .average_from_epoch(self.average_from_epoch)
            .sampling(self.sampling)
            .seed(self.seed)
    }

    pub(super) fn dcd(&self) -> maxmargin_optim::DcdParams {
        maxmargin_optim::DcdParams {
            epsilon: self.epsilon,
            shrinking: true,
            seed: self.seed,
            blocks: self.blocks,
        }
    }

    pub(super) fn subgradient(&self) -> SubgradientParams {
        SubgradientParams::new().step(self.step.unwrap_or(StepRule::Pegasos))
    }
}
