//! Structural SVMs: multiclass (Crammer–Singer), multilabel and chain models, trained by SSG, n-slack,
//! 1-slack or BCFW, with the same builder → check → fit → model shape as [`crate::linear`].
//!
//! Training minimizes `λ/2‖w‖² + (1/n)Σ_i H_i(w)` with the structured hinge of the task's output space (0-1
//! loss for multiclass, Hamming loss for multilabel and chains, counted in labels or positions). Models
//! are saved with the same versioned header as binary ones, under the kinds `multiclass`, `multilabel`
//! and `chain`; they keep their parameters and seed and no timings.

use crate::Error;
use maxmargin_core::objective::{Lambda, Regularization};
use maxmargin_core::scale::{Scaler, Scaling};
use maxmargin_core::vector::{SparseRows, SparseVec, norm_sq};
use maxmargin_io::IoError;
use maxmargin_io::libsvm::{ClassLabels, LabeledData};
use maxmargin_io::model_file;
use maxmargin_io::multilabel::{MultilabelData, indicators};
use maxmargin_io::svm_hmm::SequenceData;
use maxmargin_optim::{
    BcfwParams, Budget, CrammerSingerParams, NSlackParams, Observer, OneSlackParams, OptimError,
    Solver, SsgParams, StopReason, StructProblem, TraceRecord, Trainer,
};
use maxmargin_struct::{ChainSpace, MulticlassSpace, MultilabelSpace, OutputSpace};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What is predicted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Task {
    /// One class per example (Crammer–Singer), 0-1 loss.
    Multiclass,
    /// A set of labels per example, Hamming loss.
    Multilabel,
    /// A tag per position of a sequence (first-order chain), Hamming loss.
    Chain,
}

impl Task {
    /// The model kind in model files.
    pub fn kind(self) -> &'static str {
        match self {
            Self::Multiclass => "multiclass",
            Self::Multilabel => "multilabel",
            Self::Chain => "chain",
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
            _ => Err(OptimError::InvalidParam {
                name: "task",
                value: s.into(),
                reason: "must be binary, multiclass, multilabel or chain",
            }),
        }
    }
}

/// Which structural solver trains the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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
            _ => Err(OptimError::InvalidParam {
                name: "solver",
                value: s.into(),
                reason: "must be ssg, nslack, oneslack, bcfw, or for multiclass dcd or ovr",
            }),
        }
    }
}

/// Unchecked parameters of a structural SVM.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
            epsilon: 0.01,
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
        }
    }
}

impl StructuredSvmParams {
    /// Default passes when no budget is given.
    pub const DEFAULT_MAX_PASSES: f64 = 1000.0;
    /// Passes between BCFW's gap checks (and the trainer's evaluations, when they are needed) by default.
    pub const DEFAULT_EVAL_EVERY: f64 = 5.0;

    /// Defaults for `task`: the Crammer–Singer dual (`dcd`) for multiclass, BCFW otherwise; λ = 0.01, stop at
    /// ε = 0.01 (BCFW: a 1% duality gap) or 1000 passes.
    pub fn new(task: Task) -> Self {
        Self {
            task,
            solver: match task {
                Task::Multiclass => StructSolverKind::Dcd,
                Task::Multilabel | Task::Chain => StructSolverKind::Bcfw,
            },
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

    /// Class weights `(class value, weight)` for multiclass `dcd` and `ovr`.
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

    /// Checks every parameter once.
    ///
    /// # Errors
    /// [`Error::Optim`] or [`Error::Core`] naming the bad value.
    pub fn check(mut self) -> Result<StructuredSvm, Error> {
        self.regularization.lambda(1)?;
        if self.max_passes.is_none() && self.max_seconds.is_none() {
            self.max_passes = Some(Self::DEFAULT_MAX_PASSES);
        }
        crate::parallel::check_threads(self.threads)?;
        if matches!(self.solver, StructSolverKind::Dcd | StructSolverKind::Ovr)
            && self.task != Task::Multiclass
        {
            return Err(OptimError::InvalidParam {
                name: "solver",
                value: format!("{:?}", self.solver).to_lowercase(),
                reason: "is for the multiclass task only",
            }
            .into());
        }
        let weighted = self.task == Task::Multiclass
            && matches!(self.solver, StructSolverKind::Dcd | StructSolverKind::Ovr);
        if !self.class_weights.is_empty() && !weighted {
            return Err(OptimError::InvalidParam {
                name: "class weights",
                value: format!("{:?}", self.class_weights),
                reason: "apply to binary training and to multiclass with --solver dcd or ovr",
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
            resume: None,
            checkpoint: None,
            warm: None,
        })
    }

    fn budget(&self) -> Budget {
        let needed = self.tolerance.is_some() || self.gap.is_some() || self.keep_best || self.trace;
        Budget {
            max_iterations: None,
            max_epochs: self.max_passes,
            max_seconds: self.max_seconds,
            tolerance: self.tolerance,
            eval_every_epochs: self.eval_every.unwrap_or(if needed {
                Self::DEFAULT_EVAL_EVERY
            } else {
                f64::INFINITY
            }),
            keep_best: self.keep_best,
            gap_tolerance: self.gap,
        }
    }

    fn bcfw(&self) -> BcfwParams {
        BcfwParams {
            seed: self.seed,
            gap_every: self.eval_every.unwrap_or(Self::DEFAULT_EVAL_EVERY),
            gap_tolerance: Some(self.epsilon),
            ..BcfwParams::default()
        }
    }

    fn one_slack(&self) -> OneSlackParams {
        OneSlackParams {
            epsilon: self.epsilon,
            ..OneSlackParams::default()
        }
    }

    fn n_slack(&self) -> NSlackParams {
        NSlackParams {
            epsilon: self.epsilon,
            ..NSlackParams::default()
        }
    }

    fn cs(&self) -> CrammerSingerParams {
        CrammerSingerParams {
            epsilon: self.epsilon,
            shrinking: true,
            seed: self.seed,
        }
    }

    fn ssg(&self) -> SsgParams {
        SsgParams {
            seed: self.seed,
            ..SsgParams::default()
        }
    }
}

/// A checked structural SVM estimator.
#[derive(Debug, Clone, PartialEq)]
pub struct StructuredSvm {
    params: StructuredSvmParams,
    resume: Option<std::path::PathBuf>,
    checkpoint: Option<std::path::PathBuf>,
    warm: Option<Vec<f64>>,
}

/// What a checkpoint file holds: the solver's whole state (weights, duals, working sets, counters, RNG) and
/// what it was made for, so that resuming continues exactly where the run stopped.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct CheckpointFile<St> {
    n_samples: usize,
    dim: usize,
    lambda: f64,
    params: StructuredSvmParams,
    state: St,
}

/// What training did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StructTrainingSummary {
    /// Training examples.
    pub n_samples: usize,
    /// The final primal objective (λ-form).
    pub objective: f64,
    /// The final duality gap, where the solver has one.
    pub gap: Option<f64>,
    /// Solver iterations.
    pub iterations: u64,
    /// Passes over the data.
    pub passes: f64,
    /// Why training stopped.
    pub stop: StopReason,
    /// Whether the run reached its optimum: the solver's own certified stop, or a final relative gap within
    /// the tolerance (`gap`; for BCFW its ε; else [`crate::convergence::DEFAULT_GAP`]).
    #[serde(default)]
    pub converged: bool,
}

/// A trained structural model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StructuredModel {
    /// What it predicts.
    pub task: Task,
    /// The weights (layout of the task's output space).
    pub w: Vec<f64>,
    /// Input features of the data (the constant bias feature, when used, is one more, at this index).
    pub n_features: usize,
    /// Classes, labels or tags.
    pub n_labels: usize,
    /// Multiclass: the data's class values, in class-index order.
    #[serde(default)]
    pub classes: Vec<f64>,
    /// The λ trained with.
    pub lambda: f64,
    /// The seed trained with.
    pub seed: u64,
    /// All parameters trained with.
    pub params: StructuredSvmParams,
    /// What training did.
    pub training: StructTrainingSummary,
    /// The feature scaling fitted on the training rows; `w` acts on scaled inputs, and every prediction
    /// applies it first.
    #[serde(default)]
    pub scaler: Option<Scaler>,
}

/// A structural model with its training trace.
#[derive(Debug, Clone, PartialEq)]
pub struct StructFitReport {
    /// The model.
    pub model: StructuredModel,
    /// Every evaluation (with dual, gap and constraint counts where the solver has them).
    pub trace: Vec<TraceRecord>,
    /// What a user should know about the run (badly scaled features, a stop short of the optimum), each
    /// one line without the `warning:` prefix.
    pub warnings: Vec<String>,
}

/// The measures users expect for each task, and the objective when λ was given.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct StructEvaluation {
    /// Examples (sequences for chains).
    pub n: usize,
    /// Multiclass: the fraction of correct classes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<f64>,
    /// Multilabel: the fraction of wrong label decisions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hamming_loss: Option<f64>,
    /// Multilabel: the fraction of examples with every label right.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exact_match: Option<f64>,
    /// Multilabel: micro-averaged F1 over all label decisions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub micro_f1: Option<f64>,
    /// Chains: the fraction of wrong positions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_error: Option<f64>,
    /// Chains: the fraction of sequences with every position right.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequence_accuracy: Option<f64>,
    /// The λ of the objective.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lambda: Option<f64>,
    /// `λ/2‖w‖² + (1/n)Σ H_i(w)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub objective: Option<f64>,
    /// Whether the model's training reached its optimum (from the model file).
    #[serde(default)]
    pub converged: bool,
}

/// What multiclass training learned from the data before building its examples.
struct MulticlassParts {
    d: usize,
    classes: ClassLabels,
    weights: Vec<f64>,
    scaler: Option<Scaler>,
    warnings: Vec<String>,
    max_abs: f64,
}

impl MulticlassParts {
    fn into_report(self) -> ReportParts {
        ReportParts {
            classes: self.classes.classes,
            scaler: self.scaler,
            warnings: self.warnings,
            max_abs: self.max_abs,
        }
    }
}

/// What a finished run's model and report carry besides the fit: class values, the scaler, the warnings so
/// far, and the largest input magnitude (for the advice in a warning).
struct ReportParts {
    classes: Vec<f64>,
    scaler: Option<Scaler>,
    warnings: Vec<String>,
    max_abs: f64,
}

/// Inputs and outputs of a task, ready for its space.
struct Examples<I, O> {
    x: Vec<I>,
    y: Vec<O>,
}

/// The rows as sparse vectors of width `n_features`, with the constant feature appended at index
/// `n_features` when `bias` (features at or beyond `n_features`, unseen in training, are dropped).
fn rows_to_vecs(
    data: &maxmargin_core::vector::SparseRows,
    n_features: usize,
    bias: bool,
) -> Vec<SparseVec> {
    data.rows()
        .map(|r| with_bias(&r.to_owned(), n_features, bias))
        .collect()
}

fn with_bias(x: &SparseVec, n_features: usize, bias: bool) -> SparseVec {
    let r = x.as_row();
    let (mut idx, mut val): (Vec<u32>, Vec<f64>) = r
        .iter()
        .filter(|(j, _)| *j < n_features)
        .map(|(j, v)| (j as u32, v))
        .unzip();
    if bias {
        idx.push(n_features as u32);
        val.push(1.0);
    }
    SparseVec::new(idx, val).unwrap_or_default()
}

fn sequences_with_bias(
    seqs: &[Vec<SparseVec>],
    n_features: usize,
    bias: bool,
    scaler: Option<&Scaler>,
) -> Vec<Vec<SparseVec>> {
    seqs.iter()
        .map(|s| {
            s.iter()
                .map(|x| match scaler {
                    Some(sc) => with_bias(&sc.transform_row(x.as_row()), n_features, bias),
                    None => with_bias(x, n_features, bias),
                })
                .collect()
        })
        .collect()
}

impl StructuredSvm {
    /// The checked parameters.
    pub fn params(&self) -> &StructuredSvmParams {
        &self.params
    }

    /// Starts training from the solver state in a checkpoint file written by [`StructuredSvm::checkpoint_to`]
    /// (same task, solver, data and λ); budgets count from where that run stopped.
    pub fn resume_from(mut self, path: &Path) -> Self {
        self.resume = Some(path.to_path_buf());
        self
    }

    /// Writes the solver's final state to `path` (atomically) after training, for a later
    /// [`StructuredSvm::resume_from`].
    pub fn checkpoint_to(mut self, path: &Path) -> Self {
        self.checkpoint = Some(path.to_path_buf());
        self
    }

    /// Starts SSG from a trained model's weights (same task and shape). The other solvers carry dual
    /// variables that a model does not hold: continue them with [`StructuredSvm::resume_from`] instead.
    ///
    /// # Errors
    /// [`Error::Optim`] when the solver is not SSG or the model's task differs.
    pub fn warm_start_from(mut self, model: &StructuredModel) -> Result<Self, Error> {
        if self.params.solver != StructSolverKind::Ssg {
            return Err(OptimError::InvalidParam {
                name: "warm start",
                value: format!("{:?}", self.params.solver).to_lowercase(),
                reason: "needs the ssg solver (the others keep dual variables: use a checkpoint and resume)",
            }
            .into());
        }
        if model.task != self.params.task || model.params.bias != self.params.bias {
            return Err(OptimError::InvalidParam {
                name: "warm start",
                value: model.task.kind().into(),
                reason: "the model's task or bias differs from this run's",
            }
            .into());
        }
        self.warm = Some(model.w.clone());
        Ok(self)
    }

    fn checkpoint_kind(&self) -> String {
        let solver = match self.params.solver {
            StructSolverKind::Ssg => "ssg",
            StructSolverKind::Nslack => "nslack",
            StructSolverKind::Oneslack => "oneslack",
            StructSolverKind::Bcfw => "bcfw",
            StructSolverKind::Dcd => "dcd",
            StructSolverKind::Ovr => "ovr",
        };
        format!("checkpoint-{}-{solver}", self.params.task.kind())
    }

    /// Runs solver `s` from scratch or from the checkpoint, and writes the checkpoint when asked.
    fn with<P, T>(
        &self,
        trainer: &Trainer,
        mut s: T,
        p: &P,
        meta: (usize, usize, f64),
        o: &mut dyn Observer,
    ) -> Result<maxmargin_optim::Fit<Vec<f64>>, Error>
    where
        T: Solver<P, Output = Vec<f64>>,
        T::State: Serialize + serde::de::DeserializeOwned,
    {
        let (n_samples, dim, lambda) = meta;
        let kind = self.checkpoint_kind();
        let state = match &self.resume {
            Some(path) => {
                if model_file::read_header(path)?.format_version < 2 {
                    return Err(IoError::BadModel {
                        path: path.clone(),
                        message:
                            "a checkpoint of format 1, from an older maxmargin: start the run again"
                                .into(),
                    }
                    .into());
                }
                let (_, file): (_, CheckpointFile<T::State>) = model_file::load(path, &kind)?;
                if (file.n_samples, file.dim) != (n_samples, dim) || file.lambda != lambda {
                    return Err(IoError::BadModel {
                        path: path.clone(),
                        message: format!(
                            "checkpoint made for {} examples, {} weights, lambda {}; this run has {n_samples}, {dim}, {lambda}",
                            file.n_samples, file.dim, file.lambda
                        ),
                    }
                    .into());
                }
                file.state
            }
            None => s.init(p)?,
        };
        let (fit, state) = trainer.run_from(&mut s, p, state, o)?;
        if let Some(path) = &self.checkpoint {
            let file = CheckpointFile {
                n_samples,
                dim,
                lambda,
                params: self.params.clone(),
                state,
            };
            model_file::save(path, &kind, &file)?;
        }
        Ok(fit)
    }

    fn run<S>(
        &self,
        space: &S,
        ex: &Examples<S::Input, S::Output>,
        observer: &mut (dyn Observer + Send),
    ) -> Result<(maxmargin_optim::Fit<Vec<f64>>, f64), Error>
    where
        S: OutputSpace,
        S::Output: Sync + Serialize + serde::de::DeserializeOwned,
    {
        let lambda = self.params.regularization.lambda(ex.x.len())?;
        let problem = StructProblem::new(space, &ex.x, &ex.y, lambda)?;
        let trainer = Trainer::new(self.params.budget())?;
        let meta = (ex.x.len(), space.dim(), lambda.get());
        let go = |observer: &mut (dyn Observer + Send)| -> Result<maxmargin_optim::Fit<Vec<f64>>, Error> {
            match self.params.solver {
                StructSolverKind::Bcfw => self.with(&trainer, self.params.bcfw().check()?, &problem, meta, observer),
                StructSolverKind::Oneslack => self.with(&trainer, self.params.one_slack().check()?.with_gap_target(Some(self.gap_target())), &problem, meta, observer),
                StructSolverKind::Nslack => self.with(&trainer, self.params.n_slack().check()?.with_gap_target(Some(self.gap_target())), &problem, meta, observer),
                StructSolverKind::Dcd | StructSolverKind::Ovr => Err(OptimError::InvalidParam {
                    name: "solver",
                    value: format!("{:?}", self.params.solver).to_lowercase(),
                    reason: "is for the multiclass task only",
                }
                .into()),
                StructSolverKind::Ssg => {
                    let mut ssg = self.params.ssg().check()?;
                    if let Some(w) = &self.warm {
                        ssg = ssg.warm_start(w.clone());
                    }
                    self.with(&trainer, ssg, &problem, meta, observer)
                }
            }
        };
        let fit = crate::parallel::with_threads(self.params.threads, || go(observer))?;
        Ok((fit, lambda.get()))
    }

    /// The Crammer–Singer dual (see [`maxmargin_optim::crammer_singer`]).
    fn run_cs(
        &self,
        space: &MulticlassSpace,
        ex: &Examples<SparseVec, u32>,
        class_weights: Vec<f64>,
        observer: &mut (dyn Observer + Send),
    ) -> Result<(maxmargin_optim::Fit<Vec<f64>>, f64), Error> {
        let lambda = self.params.regularization.lambda(ex.x.len())?;
        let problem = StructProblem::new(space, &ex.x, &ex.y, lambda)?;
        let trainer = Trainer::new(self.params.budget())?;
        let meta = (ex.x.len(), space.dim(), lambda.get());
        let fit = crate::parallel::with_threads(self.params.threads, || {
            self.with(
                &trainer,
                self.params
                    .cs()
                    .check()?
                    .with_class_weights(class_weights)?
                    .with_gap_target(Some(self.gap_target())),
                &problem,
                meta,
                observer,
            )
        })?;
        Ok((fit, lambda.get()))
    }

    /// One-vs-rest: one binary DCD per class, classes in parallel, assembled into the multiclass layout
    /// (class-major blocks of `width` weights, the bias weight last in each block). The objective, gap and
    /// passes are the sums over the classes, in one trace record.
    fn run_ovr(
        &self,
        x: &maxmargin_core::vector::SparseRows,
        y: &[u32],
        n_classes: usize,
        class_weights: &[f64],
    ) -> Result<(maxmargin_optim::Fit<Vec<f64>>, f64), Error> {
        let n = x.n_rows();
        let lambda = self.params.regularization.lambda(n)?;
        let classes: Vec<usize> = y.iter().map(|&c| c as usize).collect();
        let bias = if self.params.bias {
            maxmargin_optim::Bias::Feature
        } else {
            maxmargin_optim::Bias::None
        };
        let dcd = maxmargin_optim::DcdParams {
            epsilon: self.params.epsilon,
            shrinking: true,
            seed: self.params.seed,
            blocks: 1,
        };
        let fits = crate::parallel::with_threads(self.params.threads, || {
            let ovr = maxmargin_optim::ovr::OneVsRest {
                lambda,
                bias,
                loss: maxmargin_optim::BinaryLoss::Hinge,
                dcd,
                budget: self.params.budget(),
                gap_target: Some(self.gap_target()),
            };
            Ok(ovr.fit_weighted(x, &classes, n_classes, class_weights)?)
        })?;
        let d = x.n_features();
        let width = self.width(d);
        let mut w = vec![0.0; width * n_classes];
        for (m, fit) in fits.iter().enumerate() {
            w[m * width..m * width + d].copy_from_slice(&fit.output.w);
            if self.params.bias {
                w[m * width + d] = fit.output.b;
            }
        }
        let gap = fits
            .iter()
            .map(|f| f.trace.last().and_then(|r| r.gap))
            .sum::<Option<f64>>();
        let last = maxmargin_optim::TraceRecord {
            iteration: fits.iter().map(|f| f.progress.iteration).sum(),
            epoch: fits.iter().map(|f| f.progress.epoch).sum(),
            seconds: fits
                .iter()
                .filter_map(|f| f.trace.last().map(|r| r.seconds))
                .fold(0.0, f64::max),
            objective: fits.iter().map(|f| f.objective).sum(),
            dual: None,
            gap,
            active_constraints: None,
            oracle_calls: None,
        };
        let fit = maxmargin_optim::Fit {
            output: w,
            objective: last.objective,
            stop: fits
                .iter()
                .map(|f| f.stop)
                .find(|s| *s != StopReason::Converged)
                .unwrap_or(StopReason::Converged),
            progress: maxmargin_optim::Progress {
                iteration: last.iteration,
                epoch: last.epoch,
            },
            trace: vec![last],
        };
        Ok((fit, lambda.get()))
    }

    /// The relative gap a run must reach to count as converged: `gap`, else the default.
    fn gap_target(&self) -> f64 {
        self.params.gap.unwrap_or(crate::convergence::DEFAULT_GAP)
    }

    /// The space's input width: the data's features, plus the constant one.
    fn width(&self, n_features: usize) -> usize {
        (n_features + usize::from(self.params.bias)).max(1)
    }

    /// The model and report of a finished run: the certified gap, whether it converged (with a warning
    /// when not), and the scaling it was trained with.
    fn finish(
        &self,
        fit: maxmargin_optim::Fit<Vec<f64>>,
        lambda: f64,
        shape: (usize, usize, usize),
        report: ReportParts,
    ) -> Result<StructFitReport, Error> {
        let ReportParts {
            classes,
            scaler,
            mut warnings,
            max_abs,
        } = report;
        let (n, n_features, n_labels) = shape;
        let gap = fit.trace.last().and_then(|r| r.gap);
        let tolerance = self.params.gap.unwrap_or(match self.params.solver {
            StructSolverKind::Bcfw => self.params.epsilon,
            _ => crate::convergence::DEFAULT_GAP,
        });
        let converged = crate::convergence::converged(fit.stop, fit.objective, gap, tolerance);
        crate::convergence::check_finite(&fit.output, 0.0, fit.objective)?;
        if !converged {
            let solver = format!("{:?}", self.params.solver).to_lowercase();
            warnings.push(crate::convergence::warning(
                &crate::convergence::Stopped {
                    solver,
                    stop: fit.stop,
                    passes: fit.progress.epoch,
                    objective: fit.objective,
                    gap,
                    tolerance,
                },
                &crate::convergence::structured_advice(
                    self.params.scale,
                    max_abs,
                    self.params.task == Task::Multiclass,
                    self.params.solver,
                ),
            ));
        }
        let model = StructuredModel {
            task: self.params.task,
            w: fit.output,
            n_features,
            n_labels,
            classes,
            lambda,
            seed: self.params.seed,
            params: self.params.clone(),
            training: StructTrainingSummary {
                n_samples: n,
                objective: fit.objective,
                gap,
                iterations: fit.progress.iteration,
                passes: fit.progress.epoch,
                stop: fit.stop,
                converged,
            },
            scaler,
        };
        Ok(StructFitReport {
            model,
            trace: fit.trace,
            warnings,
        })
    }

    /// Class weights by class index, from the `(class value, weight)` pairs of the parameters.
    fn class_weight_vector(&self, classes: &ClassLabels) -> Result<Vec<f64>, Error> {
        if self.params.class_weights.is_empty() {
            return Ok(Vec::new());
        }
        let mut out = vec![1.0; classes.len()];
        for &(label, weight) in &self.params.class_weights {
            let Some(m) = classes.classes.iter().position(|&c| c == label) else {
                return Err(OptimError::InvalidParam {
                    name: "class weight",
                    value: label.to_string(),
                    reason: "names a class the training data does not have",
                }
                .into());
            };
            out[m] = weight;
        }
        Ok(out)
    }

    /// The scaler for `x` (or the note that it looks badly scaled) and the scaled copy, when asked for.
    fn scaled(
        &self,
        x: &maxmargin_core::vector::SparseRows,
        warnings: &mut Vec<String>,
    ) -> Result<(Option<Scaler>, Option<maxmargin_core::vector::SparseRows>), Error> {
        let scaler = crate::convergence::fit_scaler(self.params.scale, x, warnings)?;
        let scaled = scaler.as_ref().map(|s| s.transform(x));
        Ok((scaler, scaled))
    }

    /// What multiclass training needs from the data before the examples are built: checked sizes, the
    /// class map and targets, class weights, the scaler (and the scaled rows), the warnings so far.
    fn prepare_multiclass(
        &self,
        data: &LabeledData,
    ) -> Result<(MulticlassParts, Vec<u32>, Option<SparseRows>), Error> {
        crate::limits::check_features(&data.source, data.x.n_features(), data.x.nnz())?;
        let classes = ClassLabels::from_labels(&data.source, &data.labels)?;
        crate::limits::check_classes(&data.source, classes.len(), data.n_samples())?;
        let y = classes.indices(data)?;
        let weights = self.class_weight_vector(&classes)?;
        let mut warnings = Vec::new();
        let (scaler, scaled) = self.scaled(&data.x, &mut warnings)?;
        let max_abs = crate::convergence::max_abs(scaled.as_ref().unwrap_or(&data.x));
        let parts = MulticlassParts {
            d: data.x.n_features(),
            classes,
            weights,
            scaler,
            warnings,
            max_abs,
        };
        Ok((parts, y, scaled))
    }

    /// Trains a multiclass model on LIBSVM data (any class values).
    ///
    /// # Errors
    /// [`Error::Io`] for data without classes, [`Error::Optim`] for bad parameters.
    pub fn fit_multiclass(
        &self,
        data: &LabeledData,
        observer: &mut (dyn Observer + Send),
    ) -> Result<StructFitReport, Error> {
        let (parts, y, scaled) = self.prepare_multiclass(data)?;
        let x = scaled.as_ref().unwrap_or(&data.x);
        if self.params.solver == StructSolverKind::Ovr {
            let k = parts.classes.len();
            let (fit, lambda) = self.run_ovr(x, &y, k, &parts.weights)?;
            return self.finish(fit, lambda, (y.len(), parts.d, k), parts.into_report());
        }
        let x = rows_to_vecs(x, parts.d, self.params.bias);
        drop(scaled);
        self.multiclass_examples(Examples { x, y }, parts, observer)
    }

    /// As [`StructuredSvm::fit_multiclass`], but takes the data and frees its matrix once the examples are
    /// built, so the data is held once while training instead of twice (what the command does).
    ///
    /// # Errors
    /// As [`StructuredSvm::fit_multiclass`].
    pub fn fit_multiclass_owned(
        &self,
        data: LabeledData,
        observer: &mut (dyn Observer + Send),
    ) -> Result<StructFitReport, Error> {
        if self.params.solver == StructSolverKind::Ovr {
            return self.fit_multiclass(&data, observer);
        }
        let (parts, y, scaled) = self.prepare_multiclass(&data)?;
        let x = rows_to_vecs(
            scaled.as_ref().unwrap_or(&data.x),
            parts.d,
            self.params.bias,
        );
        drop(scaled);
        drop(data);
        self.multiclass_examples(Examples { x, y }, parts, observer)
    }

    fn multiclass_examples(
        &self,
        ex: Examples<SparseVec, u32>,
        parts: MulticlassParts,
        observer: &mut (dyn Observer + Send),
    ) -> Result<StructFitReport, Error> {
        let k = parts.classes.len();
        let space = MulticlassSpace::new(self.width(parts.d), k)?;
        let (fit, lambda) = match self.params.solver {
            StructSolverKind::Dcd => self.run_cs(&space, &ex, parts.weights.clone(), observer)?,
            _ => self.run(&space, &ex, observer)?,
        };
        let shape = (ex.x.len(), parts.d, k);
        drop(ex);
        self.finish(fit, lambda, shape, parts.into_report())
    }

    /// Trains a multilabel model.
    ///
    /// # Errors
    /// As [`StructuredSvm::fit_multiclass`].
    pub fn fit_multilabel(
        &self,
        data: &MultilabelData,
        observer: &mut (dyn Observer + Send),
    ) -> Result<StructFitReport, Error> {
        crate::limits::check_features(&data.source, data.x.n_features(), data.x.nnz())?;
        let l = maxmargin_io::multilabel::n_labels(data).max(1);
        let mut used: Vec<u32> = data.labels.iter().flatten().copied().collect();
        used.sort_unstable();
        used.dedup();
        crate::limits::check_labels(&data.source, "label number", l, used.len())?;
        let d = data.x.n_features();
        let mut warnings = Vec::new();
        let (scaler, scaled) = self.scaled(&data.x, &mut warnings)?;
        let x = scaled.as_ref().unwrap_or(&data.x);
        let max_abs = crate::convergence::max_abs(x);
        let ex = Examples {
            x: rows_to_vecs(x, d, self.params.bias),
            y: indicators(&data.labels, l),
        };
        drop(scaled);
        let space = MultilabelSpace::new(self.width(d), l)?;
        let (fit, lambda) = self.run(&space, &ex, observer)?;
        let shape = (ex.x.len(), d, l);
        let report = ReportParts {
            classes: Vec::new(),
            scaler,
            warnings,
            max_abs,
        };
        self.finish(fit, lambda, shape, report)
    }

    /// Trains a chain model on svm_hmm sequences.
    ///
    /// # Errors
    /// As [`StructuredSvm::fit_multiclass`].
    pub fn fit_chain(
        &self,
        data: &SequenceData,
        observer: &mut (dyn Observer + Send),
    ) -> Result<StructFitReport, Error> {
        let (d, l) = (data.n_features, data.n_labels.max(1));
        let nnz = data
            .sequences
            .iter()
            .flatten()
            .map(|v| v.as_row().nnz())
            .sum();
        crate::limits::check_features(&data.source, d, nnz)?;
        let mut used: Vec<u32> = data.labels.iter().flatten().copied().collect();
        used.sort_unstable();
        used.dedup();
        crate::limits::check_labels(&data.source, "tag number", l, used.len())?;
        let mut warnings = Vec::new();
        let tokens = || data.sequences.iter().flatten().map(SparseVec::as_row);
        let n_tokens = data.sequences.iter().map(Vec::len).sum();
        let scaler = crate::convergence::fit_scaler_on(
            self.params.scale,
            tokens,
            n_tokens,
            d,
            &mut warnings,
        )?;
        let ex = Examples {
            x: sequences_with_bias(&data.sequences, d, self.params.bias, scaler.as_ref()),
            y: data.labels.clone(),
        };
        let max_abs =
            ex.x.iter()
                .flatten()
                .flat_map(|v| v.as_row().values().iter().map(|v| v.abs()))
                .fold(0.0, f64::max);
        let space = ChainSpace::new(self.width(d), l)?;
        let (fit, lambda) = self.run(&space, &ex, observer)?;
        let shape = (ex.x.len(), d, l);
        let report = ReportParts {
            classes: Vec::new(),
            scaler,
            warnings,
            max_abs,
        };
        self.finish(fit, lambda, shape, report)
    }
}

/// A prediction of a structured model, in the data's own terms.
#[derive(Debug, Clone, PartialEq)]
pub enum Prediction {
    /// A class value.
    Class(f64),
    /// A label set (0-based labels, increasing).
    Labels(Vec<u32>),
    /// One tag per position (1-based, as in svm_hmm files).
    Tags(Vec<u32>),
}

impl std::fmt::Display for Prediction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let join = |v: &[u32], sep: &str| {
            v.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(sep)
        };
        match self {
            Self::Class(c) => write!(f, "{c}"),
            Self::Labels(l) => f.write_str(&join(l, ",")),
            Self::Tags(t) => f.write_str(&join(t, " ")),
        }
    }
}

impl StructuredModel {
    fn width(&self) -> usize {
        (self.n_features + usize::from(self.params.bias)).max(1)
    }

    fn multiclass_space(&self) -> Result<MulticlassSpace, Error> {
        Ok(MulticlassSpace::new(self.width(), self.n_labels)?)
    }

    fn multilabel_space(&self) -> Result<MultilabelSpace, Error> {
        Ok(MultilabelSpace::new(self.width(), self.n_labels)?)
    }

    fn chain_space(&self) -> Result<ChainSpace, Error> {
        Ok(ChainSpace::new(self.width(), self.n_labels)?)
    }

    fn inputs(&self, x: &maxmargin_core::vector::SparseRows) -> Vec<SparseVec> {
        match &self.scaler {
            Some(s) => rows_to_vecs(&s.transform(x), self.n_features, self.params.bias),
            None => rows_to_vecs(x, self.n_features, self.params.bias),
        }
    }

    fn sequences(&self, seqs: &[Vec<SparseVec>]) -> Vec<Vec<SparseVec>> {
        sequences_with_bias(
            seqs,
            self.n_features,
            self.params.bias,
            self.scaler.as_ref(),
        )
    }

    fn wrong_task(&self, expected: Task) -> Error {
        Error::Optim(OptimError::InvalidParam {
            name: "task",
            value: self.task.kind().into(),
            reason: match expected {
                Task::Multiclass => "the data is multiclass",
                Task::Multilabel => "the data is multilabel",
                Task::Chain => "the data is sequences",
            },
        })
    }

    /// Predicts every row of multiclass data.
    ///
    /// # Errors
    /// When the model is not a multiclass model.
    pub fn predict_multiclass(&self, data: &LabeledData) -> Result<Vec<Prediction>, Error> {
        if self.task != Task::Multiclass {
            return Err(self.wrong_task(Task::Multiclass));
        }
        let space = self.multiclass_space()?;
        self.inputs(&data.x)
            .iter()
            .map(|x| {
                let k = space.decode(&self.w, x)? as usize;
                Ok(Prediction::Class(
                    self.classes.get(k).copied().unwrap_or(k as f64),
                ))
            })
            .collect()
    }

    /// Predicts every row of multilabel data.
    ///
    /// # Errors
    /// When the model is not a multilabel model.
    pub fn predict_multilabel(&self, data: &MultilabelData) -> Result<Vec<Prediction>, Error> {
        if self.task != Task::Multilabel {
            return Err(self.wrong_task(Task::Multilabel));
        }
        let space = self.multilabel_space()?;
        self.inputs(&data.x)
            .iter()
            .map(|x| {
                let on = space.decode(&self.w, x)?;
                Ok(Prediction::Labels(
                    (0..on.len() as u32).filter(|&l| on[l as usize]).collect(),
                ))
            })
            .collect()
    }

    /// Predicts every sequence (tags 1-based, as in svm_hmm files).
    ///
    /// # Errors
    /// When the model is not a chain model, or for an empty sequence.
    pub fn predict_chain(&self, data: &SequenceData) -> Result<Vec<Prediction>, Error> {
        if self.task != Task::Chain {
            return Err(self.wrong_task(Task::Chain));
        }
        let space = self.chain_space()?;
        self.sequences(&data.sequences)
            .iter()
            .map(|x| {
                Ok(Prediction::Tags(
                    space
                        .decode(&self.w, x)?
                        .into_iter()
                        .map(|t| t + 1)
                        .collect(),
                ))
            })
            .collect()
    }

    fn objective<S: OutputSpace>(
        &self,
        space: &S,
        x: &[S::Input],
        y: &[S::Output],
        lambda: Option<f64>,
    ) -> Result<Option<f64>, Error>
    where
        S::Output: Sync,
    {
        let Some(l) = lambda else { return Ok(None) };
        let lambda = Lambda::new(l)?;
        let problem = StructProblem::new(space, x, y, lambda)?;
        Ok(Some(
            0.5 * l * norm_sq(&self.w) + problem.mean_hinge(&self.w)?,
        ))
    }

    /// Accuracy (and the objective with `lambda`) on multiclass data.
    ///
    /// # Errors
    /// A label the model does not know (naming its line), or the wrong task.
    pub fn evaluate_multiclass(
        &self,
        data: &LabeledData,
        lambda: Option<f64>,
    ) -> Result<StructEvaluation, Error> {
        if self.task != Task::Multiclass {
            return Err(self.wrong_task(Task::Multiclass));
        }
        let classes = ClassLabels {
            classes: self.classes.clone(),
        };
        let y = classes.indices(data)?;
        let space = self.multiclass_space()?;
        let x = self.inputs(&data.x);
        let correct = x
            .iter()
            .zip(&y)
            .filter(|(xi, yi)| space.decode(&self.w, xi).ok() == Some(**yi))
            .count();
        let n = nonempty(data.n_samples(), &data.source)?;
        Ok(StructEvaluation {
            n,
            accuracy: Some(correct as f64 / n as f64),
            lambda,
            objective: self.objective(&space, &x, &y, lambda)?,
            converged: self.training.converged,
            ..StructEvaluation::default()
        })
    }

    /// Hamming loss, exact match and micro-F1 (and the objective) on multilabel data.
    ///
    /// # Errors
    /// The wrong task, or an empty dataset.
    pub fn evaluate_multilabel(
        &self,
        data: &MultilabelData,
        lambda: Option<f64>,
    ) -> Result<StructEvaluation, Error> {
        if self.task != Task::Multilabel {
            return Err(self.wrong_task(Task::Multilabel));
        }
        let space = self.multilabel_space()?;
        let x = self.inputs(&data.x);
        let y = indicators(&data.labels, self.n_labels);
        let n = nonempty(data.n_samples(), &data.source)?;
        let (mut wrong, mut exact, mut tp, mut fp, mut fn_) =
            (0usize, 0usize, 0usize, 0usize, 0usize);
        for (xi, yi) in x.iter().zip(&y) {
            let p = space.decode(&self.w, xi)?;
            let mut all = true;
            for (a, b) in p.iter().zip(yi) {
                match (*a, *b) {
                    (true, true) => tp += 1,
                    (true, false) => fp += 1,
                    (false, true) => fn_ += 1,
                    (false, false) => {}
                }
                if a != b {
                    wrong += 1;
                    all = false;
                }
            }
            exact += usize::from(all);
        }
        let f1 = if tp == 0 {
            0.0
        } else {
            2.0 * tp as f64 / (2 * tp + fp + fn_) as f64
        };
        Ok(StructEvaluation {
            n,
            hamming_loss: Some(wrong as f64 / (n * self.n_labels) as f64),
            exact_match: Some(exact as f64 / n as f64),
            micro_f1: Some(f1),
            lambda,
            objective: self.objective(&space, &x, &y, lambda)?,
            converged: self.training.converged,
            ..StructEvaluation::default()
        })
    }

    /// Per-token error and per-sequence accuracy (and the objective) on sequences.
    ///
    /// # Errors
    /// The wrong task, a tag beyond the model's, or an empty dataset.
    pub fn evaluate_chain(
        &self,
        data: &SequenceData,
        lambda: Option<f64>,
    ) -> Result<StructEvaluation, Error> {
        if self.task != Task::Chain {
            return Err(self.wrong_task(Task::Chain));
        }
        let space = self.chain_space()?;
        let n = nonempty(data.n_sequences(), &data.source)?;
        let seqs = self.sequences(&data.sequences);
        let (mut wrong, mut tokens, mut right_seqs) = (0usize, 0usize, 0usize);
        for (i, (x, y)) in seqs.iter().zip(&data.labels).enumerate() {
            space
                .check_output(x, y)
                .map_err(|source| OptimError::Example { index: i, source })?;
            let p = space.decode(&self.w, x)?;
            let w = p.iter().zip(y).filter(|(a, b)| a != b).count();
            wrong += w;
            tokens += y.len();
            right_seqs += usize::from(w == 0);
        }
        Ok(StructEvaluation {
            n,
            token_error: Some(wrong as f64 / tokens.max(1) as f64),
            sequence_accuracy: Some(right_seqs as f64 / n as f64),
            lambda,
            objective: self.objective(&space, &seqs, &data.labels, lambda)?,
            converged: self.training.converged,
            ..StructEvaluation::default()
        })
    }

    /// Saves the model atomically (JSON for `.json` paths).
    ///
    /// # Errors
    /// [`Error::Io`] naming the file.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        Ok(model_file::save(path, self.task.kind(), self)?)
    }

    /// Loads a structural model of any task, checking it is whole and consistent.
    ///
    /// # Errors
    /// [`Error::Io`] for a missing, foreign, truncated, corrupt or inconsistent file.
    pub fn load(path: &Path) -> Result<Self, Error> {
        let header = model_file::read_header(path)?;
        let task = match header.kind.as_str() {
            "multiclass" => Task::Multiclass,
            "multilabel" => Task::Multilabel,
            "chain" => Task::Chain,
            other => {
                return Err(IoError::WrongKind {
                    path: path.to_path_buf(),
                    expected: "multiclass, multilabel or chain".into(),
                    found: other.into(),
                }
                .into());
            }
        };
        let model: Self = if header.format_version < 2 {
            let (_, old): (_, crate::compat::StructuredModelV1) =
                model_file::load(path, task.kind())?;
            old.into()
        } else {
            model_file::load(path, task.kind())?.1
        };
        // Sizes from the file are checked with overflow-free arithmetic against the weights actually read
        // (a crafted `"n_labels": 9223372036854775808` wrapped around and later asked for every byte there is).
        let d = model.n_features.checked_add(usize::from(model.params.bias));
        let l = model.n_labels;
        let expected = d.and_then(|d| match task {
            Task::Multiclass | Task::Multilabel => d.max(1).checked_mul(l),
            Task::Chain => d
                .max(1)
                .checked_mul(l)
                .and_then(|u| l.checked_mul(l).and_then(|t| u.checked_add(t)))
                .and_then(|v| v.checked_add(l.checked_mul(2)?)),
        });
        let classes_ok = task != Task::Multiclass || model.classes.len() == l;
        let scaler_ok = model.scaler.as_ref().is_none_or(|s| {
            s.factor.len() <= model.n_features
                && s.factor.iter().all(|v| v.is_finite())
                && s.offsets
                    .iter()
                    .all(|(j, o)| (*j as usize) < s.factor.len() && o.is_finite())
        });
        if model.task != task
            || expected != Some(model.w.len())
            || !classes_ok
            || !scaler_ok
            || !model.w.iter().all(|v| v.is_finite())
        {
            return Err(IoError::BadModel {
                path: path.to_path_buf(),
                message: format!(
                    "inconsistent {} model: {} weights for {} features and {} labels, {} class values",
                    task.kind(),
                    model.w.len(),
                    model.n_features,
                    model.n_labels,
                    model.classes.len()
                ),
            }
            .into());
        }
        Ok(model)
    }
}

fn nonempty(n: usize, source: &Path) -> Result<usize, Error> {
    if n == 0 {
        Err(IoError::Empty {
            path: source.to_path_buf(),
        }
        .into())
    } else {
        Ok(n)
    }
}
