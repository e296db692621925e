//! The binary linear SVM: parameters → checked estimator → `fit` → model → `save` / `load` / `predict`.
//!
//! Training minimizes `λ/2‖w‖² + (1/n)Σ max(0, 1 − y_i(⟨w, x_i⟩ + b))` with Pegasos or the batch subgradient
//! method (see [`crate::optim`]). The two classes of the data, whatever their numbers, are mapped to ±1 (the
//! smaller label is −1) and the model keeps the mapping, so predictions come back in the data's own labels.
//! The model also keeps the parameters and seed it was trained with, so a run can be reproduced; it keeps
//! no timings, so the same seed, data and parameters give the same model file, byte for byte.

use crate::Error;
use maxmargin_core::hinge::hinge;
use maxmargin_core::objective::Regularization;
use maxmargin_core::scale::{Scaler, Scaling};
use maxmargin_core::vector::{SparseRow, SparseRows, norm_sq};
use maxmargin_io::IoError;
use maxmargin_io::libsvm::{BinaryLabels, LabeledData};
use maxmargin_io::model_file;
use maxmargin_optim::{
    Bias, BinaryLoss, BinaryProblem, Budget, LinearWeights, Observer, OptimError, PegasosParams,
    Sampling, Solver, StepRule, StopReason, SubgradientParams, TraceRecord, Trainer,
};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The model kind written in model files.
pub const MODEL_KIND: &str = "binary";

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
        Ok(LinearSvm { params: self })
    }

    fn budget(&self) -> Budget {
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

    fn pegasos(&self) -> PegasosParams {
        PegasosParams::new()
            .batch_size(self.batch_size)
            .step(self.step.unwrap_or(StepRule::Pegasos))
            .projection(self.projection)
            .average(self.average)
            .average_from_epoch(self.average_from_epoch)
            .sampling(self.sampling)
            .seed(self.seed)
    }

    fn dcd(&self) -> maxmargin_optim::DcdParams {
        maxmargin_optim::DcdParams {
            epsilon: self.epsilon,
            shrinking: true,
            seed: self.seed,
            blocks: self.blocks,
        }
    }

    fn subgradient(&self) -> SubgradientParams {
        SubgradientParams::new().step(self.step.unwrap_or(StepRule::Pegasos))
    }
}

/// A checked linear SVM estimator.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearSvm {
    params: LinearSvmParams,
}

/// What training did, kept in the model (no timings, so models are reproducible byte for byte).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainingSummary {
    /// Training examples.
    pub n_samples: usize,
    /// The final primal objective in λ-form.
    pub objective: f64,
    /// Steps taken.
    pub iterations: u64,
    /// Passes over the data.
    pub epochs: f64,
    /// Why training stopped.
    pub stop: StopReason,
    /// The final certified duality gap (primal − a dual lower bound), λ-form.
    #[serde(default)]
    pub gap: Option<f64>,
    /// Whether the run reached its optimum: the solver's own certified stop, or a final relative gap within
    /// the tolerance (`gap`, else [`crate::convergence::DEFAULT_GAP`]).
    #[serde(default)]
    pub converged: bool,
}

/// A trained model and its training trace.
#[derive(Debug, Clone, PartialEq)]
pub struct FitReport {
    /// The model.
    pub model: LinearModel,
    /// The objective at each evaluation (with seconds, which vary from run to run).
    pub trace: Vec<TraceRecord>,
    /// What a user should know about the run: badly scaled features, a stop short of the optimum (each one
    /// line, without the `warning:` prefix).
    pub warnings: Vec<String>,
}

impl LinearSvm {
    /// The checked parameters.
    pub fn params(&self) -> &LinearSvmParams {
        &self.params
    }

    /// Trains on a dataset with exactly two classes.
    ///
    /// # Errors
    /// [`Error::Io`] for data without exactly two classes, [`Error::Optim`] for an empty set.
    pub fn fit(&self, data: &LabeledData) -> Result<LinearModel, Error> {
        Ok(self.fit_observed(data, &mut ())?.model)
    }

    /// Trains, telling `observer` about every step and evaluation, and returns the trace too.
    ///
    /// # Errors
    /// As [`LinearSvm::fit`].
    pub fn fit_observed(
        &self,
        data: &LabeledData,
        observer: &mut (dyn Observer + Send),
    ) -> Result<FitReport, Error> {
        Ok(self.fit_warm(data, None, observer)?.0)
    }

    /// Trains DCD starting from the dual `alpha` of an earlier fit on the same examples (clipped into this
    /// fit's box), and returns the new dual with the report; the other solvers ignore `alpha` and return no
    /// dual. This is how [`regularization_path`] moves from one `C` to the next.
    ///
    /// # Errors
    /// As [`LinearSvm::fit`], and [`Error::Optim`] when `alpha` has not one entry per example.
    pub fn fit_warm(
        &self,
        data: &LabeledData,
        alpha: Option<&[f64]>,
        observer: &mut (dyn Observer + Send),
    ) -> Result<(FitReport, Option<Vec<f64>>), Error> {
        crate::parallel::with_threads(self.params.threads, || {
            self.fit_in_pool(data, alpha, observer)
        })
    }

    fn fit_in_pool(
        &self,
        data: &LabeledData,
        alpha: Option<&[f64]>,
        observer: &mut (dyn Observer + Send),
    ) -> Result<(FitReport, Option<Vec<f64>>), Error> {
        crate::limits::check_features(&data.source, data.x.n_features(), data.x.nnz())?;
        let labels = BinaryLabels::from_labels(&data.source, &data.labels)?;
        let y = labels.targets(data)?;
        let n = data.n_samples();
        let lambda = self.params.regularization.lambda(n)?;
        let mut warnings = Vec::new();
        let scaler = crate::convergence::fit_scaler(self.params.scale, &data.x, &mut warnings)?;
        let scaled = scaler.as_ref().map(|s| s.transform(&data.x));
        let x = scaled.as_ref().unwrap_or(&data.x);
        let mut problem =
            BinaryProblem::new(x, &y, lambda, self.params.bias)?.with_loss(self.params.loss);
        let weights: Vec<f64>;
        if !self.params.class_weights.is_empty() {
            for &(label, _) in &self.params.class_weights {
                if labels.to_sign(label).is_none() {
                    return Err(OptimError::InvalidParam {
                        name: "class weight",
                        value: label.to_string(),
                        reason: "names a label the training data does not have",
                    }
                    .into());
                }
            }
            weights = data
                .labels
                .iter()
                .map(|l| {
                    self.params
                        .class_weights
                        .iter()
                        .find(|(c, _)| c == l)
                        .map_or(1.0, |(_, w)| *w)
                })
                .collect();
            problem = problem.with_example_weights(&weights)?;
        }
        let trainer = Trainer::new(self.params.budget())?;
        let mut dual = None;
        let fit = match self.params.solver {
            SolverKind::Pegasos => {
                trainer.run(&mut self.params.pegasos().check()?, &problem, observer)?
            }
            SolverKind::Subgradient => {
                trainer.run(&mut self.params.subgradient().check()?, &problem, observer)?
            }
            SolverKind::Dcd => {
                let target = self.params.gap.unwrap_or(crate::convergence::DEFAULT_GAP);
                let mut dcd = self.params.dcd().check()?.with_gap_target(Some(target));
                let state = match alpha {
                    Some(a) => dcd.warm_state(&problem, a)?,
                    None => dcd.init(&problem)?,
                };
                let (fit, state) = trainer.run_from(&mut dcd, &problem, state, observer)?;
                dual = Some(state.alpha().to_vec());
                fit
            }
        };
        let gap = fit.trace.last().and_then(|r| r.gap);
        let tolerance = self.params.gap.unwrap_or(crate::convergence::DEFAULT_GAP);
        let converged = crate::convergence::converged(fit.stop, fit.objective, gap, tolerance);
        crate::convergence::check_finite(&fit.output.w, fit.output.b, fit.objective)?;
        if !converged {
            warnings.push(crate::convergence::warning(
                &crate::convergence::Stopped {
                    solver: self.params.solver.to_string(),
                    stop: fit.stop,
                    passes: fit.progress.epoch,
                    objective: fit.objective,
                    gap,
                    tolerance,
                },
                &crate::convergence::binary_advice(self.params.solver, self.params.scale, x),
            ));
        }
        let LinearWeights { w, b } = fit.output;
        let model = LinearModel {
            n_features: w.len(),
            w,
            b,
            labels: [labels.negative, labels.positive],
            bias: self.params.bias,
            lambda: lambda.get(),
            seed: self.params.seed,
            params: self.params.clone(),
            training: TrainingSummary {
                n_samples: n,
                objective: fit.objective,
                iterations: fit.progress.iteration,
                epochs: fit.progress.epoch,
                stop: fit.stop,
                gap,
                converged,
            },
            scaler,
        };
        Ok((
            FitReport {
                model,
                trace: fit.trace,
                warnings,
            },
            dual,
        ))
    }
}

/// A trained binary linear model `f(x) = ⟨w, x⟩ + b`, predicting `labels[1]` when `f(x) > 0`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinearModel {
    /// One weight per feature (0-based; feature `j` of a LIBSVM file is `w[j − 1]`).
    pub w: Vec<f64>,
    /// The intercept.
    pub b: f64,
    /// `[negative, positive]`: the data's labels mapped to −1 and +1.
    pub labels: [f64; 2],
    /// Number of features seen in training; features beyond it have weight zero.
    pub n_features: usize,
    /// How the intercept was trained.
    pub bias: Bias,
    /// The λ trained with (after converting any C).
    pub lambda: f64,
    /// The seed trained with.
    pub seed: u64,
    /// All parameters trained with.
    pub params: LinearSvmParams,
    /// What training did.
    pub training: TrainingSummary,
    /// The feature scaling fitted on the training rows; `w` acts on scaled rows, and every prediction
    /// applies it first.
    #[serde(default)]
    pub scaler: Option<Scaler>,
}

/// Accuracy, counts, and optionally the primal objective of a model on a labelled dataset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    /// Examples.
    pub n: usize,
    /// Correct predictions.
    pub correct: usize,
    /// `correct / n`.
    pub accuracy: f64,
    /// Positive examples predicted positive.
    pub true_positive: usize,
    /// Negative examples predicted positive.
    pub false_positive: usize,
    /// Negative examples predicted negative.
    pub true_negative: usize,
    /// Positive examples predicted negative.
    pub false_negative: usize,
    /// `(1/n)Σ max(0, 1 − y_i f(x_i))`.
    pub mean_hinge: f64,
    /// The λ of the objective, when one was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lambda: Option<f64>,
    /// `λ/2‖w‖² + (1/n)Σ c_i ℓ_i` (the model's loss and class weights; `b²` in the norm only when the bias was
    /// a regularized feature).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub objective: Option<f64>,
    /// Whether the model's training reached its optimum (from the model file).
    #[serde(default)]
    pub converged: bool,
}

impl LinearModel {
    /// `f(x) = ⟨w, x⟩ + b`, on the row scaled as in training when the model has a scaler.
    pub fn decision_function(&self, x: SparseRow<'_>) -> f64 {
        match &self.scaler {
            Some(s) => s.transform_row(x).as_row().dot(&self.w) + self.b,
            None => x.dot(&self.w) + self.b,
        }
    }

    /// `f(x_i)` for every row, with the scaling folded into the weights once.
    pub fn decision_rows(&self, x: &SparseRows) -> Vec<f64> {
        let (w, b) = match &self.scaler {
            Some(s) => s.fold_linear(&self.w, self.b),
            None => (self.w.clone(), self.b),
        };
        x.rows().map(|r| r.dot(&w) + b).collect()
    }

    /// A dual starting point for DCD on `data` with `lambda` from this model: `α_i = C` for the examples it
    /// puts inside the margin (`y_i f(x_i) < 1`), `0` for the others, `C = 1/(λn)` (class weights not
    /// applied; DCD clips into each example's own box). For a model trained at a smaller C this is the duals'
    /// usual shape at the larger one, and DCD rebuilds `w` from it, so the state is consistent.
    ///
    /// # Errors
    /// [`Error::Io`] when the data's labels are not the model's two classes.
    pub fn dual_guess(&self, data: &LabeledData, lambda: f64) -> Result<Vec<f64>, Error> {
        let map = self.label_map();
        let c = 1.0 / (lambda * data.n_samples() as f64);
        data.x
            .rows()
            .zip(&data.labels)
            .enumerate()
            .map(|(i, (row, &label))| {
                let y = map.to_sign(label).ok_or_else(|| IoError::Parse {
                    path: data.source.clone(),
                    line: data.lines.get(i).copied().unwrap_or(i + 1),
                    column: 1,
                    field: "label",
                    message: format!("{label} is not one of the model's labels {:?}", self.labels),
                })?;
                Ok(if y * self.decision_function(row) < 1.0 {
                    c
                } else {
                    0.0
                })
            })
            .collect()
    }

    /// The predicted label (in the data's own values) of one row.
    pub fn predict(&self, x: SparseRow<'_>) -> f64 {
        self.label_map().from_decision(self.decision_function(x))
    }

    /// The predicted label of every row.
    pub fn predict_rows(&self, x: &SparseRows) -> Vec<f64> {
        let map = self.label_map();
        self.decision_rows(x)
            .into_iter()
            .map(|f| map.from_decision(f))
            .collect()
    }

    fn label_map(&self) -> BinaryLabels {
        BinaryLabels {
            negative: self.labels[0],
            positive: self.labels[1],
        }
    }

    /// The primal objective `λ/2‖w‖² + (1/n)Σ hinge` on `data` (`b²` joins the norm only for a feature bias).
    ///
    /// # Errors
    /// As [`LinearModel::evaluate`].
    pub fn objective(&self, data: &LabeledData, lambda: f64) -> Result<f64, Error> {
        Ok(self
            .evaluate(data, Some(lambda))?
            .objective
            .unwrap_or(f64::NAN))
    }

    /// Accuracy and counts on `data`, and the objective when `lambda` is given.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file and line of a label that is neither of the model's classes, or for an
    /// empty dataset; [`Error::Core`] for an invalid λ.
    pub fn evaluate(&self, data: &LabeledData, lambda: Option<f64>) -> Result<Evaluation, Error> {
        if data.n_samples() == 0 {
            return Err(IoError::Empty {
                path: data.source.clone(),
            }
            .into());
        }
        let lambda = lambda
            .map(|l| maxmargin_core::objective::Lambda::new(l).map(|l| l.get()))
            .transpose()?;
        let y = self.label_map().targets(data)?;
        let (mut tp, mut fp, mut tn, mut fn_) = (0, 0, 0, 0);
        let (mut hinge_sum, mut loss_sum) = (0.0, 0.0);
        for ((f, &yi), label) in self
            .decision_rows(&data.x)
            .into_iter()
            .zip(&y)
            .zip(&data.labels)
        {
            hinge_sum += hinge(yi * f);
            let weight = self
                .params
                .class_weights
                .iter()
                .find(|(c, _)| c == label)
                .map_or(1.0, |(_, w)| *w);
            loss_sum += weight * self.params.loss.value(yi * f);
            match (yi > 0.0, f > 0.0) {
                (true, true) => tp += 1,
                (false, true) => fp += 1,
                (false, false) => tn += 1,
                (true, false) => fn_ += 1,
            }
        }
        let n = data.n_samples();
        let mean_hinge = hinge_sum / n as f64;
        let reg = norm_sq(&self.w)
            + if self.bias == Bias::Feature {
                self.b * self.b
            } else {
                0.0
            };
        Ok(Evaluation {
            n,
            correct: tp + tn,
            accuracy: (tp + tn) as f64 / n as f64,
            true_positive: tp,
            false_positive: fp,
            true_negative: tn,
            false_negative: fn_,
            mean_hinge,
            lambda,
            objective: lambda.map(|l| 0.5 * l * reg + loss_sum / n as f64),
            converged: self.training.converged,
        })
    }

    /// Saves the model atomically: JSON when the path ends in `.json`, the binary format otherwise.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file; an existing file is then left as it was.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        Ok(model_file::save(path, MODEL_KIND, self)?)
    }

    /// Loads a model saved by [`LinearModel::save`] (either encoding), checking it is whole and consistent.
    ///
    /// # Errors
    /// [`Error::Io`] for a missing, foreign, truncated, corrupt or inconsistent file.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use maxmargin::prelude::*;
    /// let data = maxmargin::datasets::heart_scale()?;
    /// let model = LinearSvmParams::new().epochs(2.0).check()?.fit(&data)?;
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("heart.model");
    /// model.save(&path)?;
    /// assert_eq!(LinearModel::load(&path)?, model);
    /// # Ok(()) }
    /// ```
    pub fn load(path: &Path) -> Result<Self, Error> {
        let model: Self = if model_file::read_header(path)?.format_version < 2 {
            let (_, old): (_, crate::compat::LinearModelV1) = model_file::load(path, MODEL_KIND)?;
            old.into()
        } else {
            model_file::load(path, MODEL_KIND)?.1
        };
        let bad = |m: String| {
            Error::Io(IoError::BadModel {
                path: path.to_path_buf(),
                message: m,
            })
        };
        if model.w.len() != model.n_features {
            return Err(bad(format!(
                "{} weights for {} features",
                model.w.len(),
                model.n_features
            )));
        }
        if !model.w.iter().all(|v| v.is_finite()) || !model.b.is_finite() {
            return Err(bad("weights must be finite".into()));
        }
        if let Some(s) = &model.scaler
            && (s.factor.len() > model.n_features
                || !s.factor.iter().all(|v| v.is_finite())
                || !s
                    .offsets
                    .iter()
                    .all(|(j, o)| (*j as usize) < s.factor.len() && o.is_finite()))
        {
            return Err(bad("the scaler does not fit the weights".into()));
        }
        if model.labels[0].partial_cmp(&model.labels[1]) != Some(std::cmp::Ordering::Less) {
            return Err(bad(format!(
                "labels {:?} must be two increasing values",
                model.labels
            )));
        }
        Ok(model)
    }
}

/// The kind of a DCD dual file.
pub const DUAL_KIND: &str = "dual-binary-dcd";

/// A DCD dual solution on disk (`α`, C-form), to warm-start training on the same examples at another C.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DualFile {
    /// Training examples the duals belong to.
    pub n_samples: usize,
    /// The λ they were trained with.
    pub lambda: f64,
    /// One dual per example, in the data's order.
    pub alpha: Vec<f64>,
}

impl DualFile {
    /// Writes the file atomically (the model file header, kind [`DUAL_KIND`]).
    ///
    /// # Errors
    /// [`Error::Io`] naming the file.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        Ok(model_file::save(path, DUAL_KIND, self)?)
    }

    /// Reads a dual file written by [`DualFile::save`].
    ///
    /// # Errors
    /// [`Error::Io`] for a missing, damaged or foreign file.
    pub fn load(path: &Path) -> Result<Self, Error> {
        let (_, file): (_, Self) = model_file::load(path, DUAL_KIND)?;
        if file.alpha.len() != file.n_samples {
            return Err(IoError::BadModel {
                path: path.to_path_buf(),
                message: format!("{} duals for {} examples", file.alpha.len(), file.n_samples),
            }
            .into());
        }
        Ok(file)
    }

    /// The duals as a starting point for training on `data` with `lambda`: each `α_i` scaled by
    /// `C_new/C_old = λ_old/λ_new`, so examples at the old box's bound start at the new one (Chu, Hsieh, Lin
    /// 2015); or an error naming the file when the duals were made for another number of examples.
    ///
    /// # Errors
    /// [`Error::Io`].
    pub fn alpha_for(
        &self,
        path: &Path,
        data: &LabeledData,
        lambda: f64,
    ) -> Result<Vec<f64>, Error> {
        if self.n_samples != data.n_samples() {
            return Err(IoError::BadModel {
                path: path.to_path_buf(),
                message: format!(
                    "duals for {} examples; the training data has {}",
                    self.n_samples,
                    data.n_samples()
                ),
            }
            .into());
        }
        let scale = self.lambda / lambda;
        Ok(self.alpha.iter().map(|a| a * scale).collect())
    }
}

/// The result of k-fold cross-validation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrossValidation {
    /// Test accuracy of each fold, in fold order.
    pub fold_accuracy: Vec<f64>,
    /// Their mean.
    pub accuracy: f64,
    /// Their standard deviation.
    pub std: f64,
}

/// Stratified, seeded k-fold cross-validation of a linear SVM: each class's examples are permuted with `seed`
/// and dealt round-robin into `k` folds; each fold is tested on a model trained on the other `k − 1`. Folds
/// train in parallel and the result does not depend on the number of threads.
///
/// # Errors
/// [`Error::Optim`] for `k < 2` or `k` above the number of examples; what training returns.
///
/// # Examples
/// ```
/// # fn main() -> Result<(), maxmargin::Error> {
/// let data = maxmargin::datasets::heart_scale()?;
/// let svm = maxmargin::LinearSvmParams::new().lambda(0.01).epochs(5.0).check()?;
/// let cv = maxmargin::linear::cross_validate(&svm, &data, 5, 1)?;
/// assert_eq!(cv.fold_accuracy.len(), 5);
/// assert!(cv.accuracy > 0.75);
/// # Ok(()) }
/// ```
pub fn cross_validate(
    svm: &LinearSvm,
    data: &LabeledData,
    k: usize,
    seed: u64,
) -> Result<CrossValidation, Error> {
    use rayon::prelude::*;
    let fold_of = stratified_folds(data, k, seed)?;
    let fold_accuracy = (0..k)
        .into_par_iter()
        .map(|f| {
            let (train, test) = split(data, &fold_of, f);
            let model = svm.fit(&train)?;
            Ok(model.evaluate(&test, None)?.accuracy)
        })
        .collect::<Result<Vec<f64>, Error>>()?;
    Ok(CrossValidation::from_folds(fold_accuracy))
}

impl CrossValidation {
    fn from_folds(fold_accuracy: Vec<f64>) -> Self {
        let k = fold_accuracy.len().max(1) as f64;
        let mean = fold_accuracy.iter().sum::<f64>() / k;
        let var = fold_accuracy
            .iter()
            .map(|a| (a - mean).powi(2))
            .sum::<f64>()
            / k;
        Self {
            fold_accuracy,
            accuracy: mean,
            std: var.sqrt(),
        }
    }
}

/// The fold (0..k) of every example: each class's examples are permuted with `seed` and dealt round-robin.
fn stratified_folds(data: &LabeledData, k: usize, seed: u64) -> Result<Vec<usize>, Error> {
    let n = data.n_samples();
    if k < 2 || k > n {
        return Err(OptimError::InvalidParam {
            name: "folds",
            value: k.to_string(),
            reason: "must be at least 2 and at most the number of examples",
        }
        .into());
    }
    let labels = BinaryLabels::from_labels(&data.source, &data.labels)?;
    let y = labels.targets(data)?;
    let mut fold_of = vec![0usize; n];
    let mut next = 0;
    for (c, class) in [-1.0, 1.0].into_iter().enumerate() {
        let members: Vec<usize> = (0..n).filter(|&i| y[i] == class).collect();
        for &j in &maxmargin_optim::random::permutation(members.len(), seed.wrapping_add(c as u64))
        {
            fold_of[members[j]] = next % k;
            next += 1;
        }
    }
    Ok(fold_of)
}

/// The examples of `data` outside fold `f` (training) and inside it (test), each in file order.
fn split(data: &LabeledData, fold_of: &[usize], f: usize) -> (LabeledData, LabeledData) {
    let subset = |rows: &[usize]| LabeledData {
        x: data.x.select(rows),
        labels: rows.iter().map(|&i| data.labels[i]).collect(),
        qids: rows
            .iter()
            .map(|&i| data.qids.get(i).copied().flatten())
            .collect(),
        lines: rows
            .iter()
            .map(|&i| data.lines.get(i).copied().unwrap_or(i + 1))
            .collect(),
        source: data.source.clone(),
    };
    let n = fold_of.len();
    let train: Vec<usize> = (0..n).filter(|&i| fold_of[i] != f).collect();
    let test: Vec<usize> = (0..n).filter(|&i| fold_of[i] == f).collect();
    (subset(&train), subset(&test))
}

/// One `C` of a regularization path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PathPoint {
    /// LIBLINEAR's `C` (`λ = 1/(C n)`, with `n` the training examples of each fold).
    pub c: f64,
    /// Cross-validated accuracy at this `C`.
    pub cv: CrossValidation,
    /// Passes over the data at this `C`, averaged over the folds (warm starts make them fewer).
    pub passes: f64,
    /// The final objective of each fold's model (λ-form).
    pub objective: Vec<f64>,
}

/// A regularization path: for each `C` of `cs` (increasing), k-fold cross-validated accuracy, where each
/// fold's model at a `C` starts from that fold's dual solution at the previous `C`, scaled by `C_new/C_old`
/// (DCD; the other solvers start from scratch). The folds are those of [`cross_validate`] and run in parallel; the result does not
/// depend on the number of threads.
///
/// # Errors
/// [`Error::Optim`] for an empty, non-increasing or non-positive `cs`, bad folds, or what training returns.
///
/// # Examples
/// ```
/// # fn main() -> Result<(), maxmargin::Error> {
/// let data = maxmargin::datasets::heart_scale()?;
/// let params = maxmargin::LinearSvmParams::new().solver(maxmargin::SolverKind::Dcd);
/// let path = maxmargin::linear::regularization_path(&params, &data, &[0.01, 0.1, 1.0], 5, 1)?;
/// assert_eq!(path.len(), 3);
/// assert!(path.iter().all(|p| p.cv.accuracy > 0.7));
/// # Ok(()) }
/// ```
pub fn regularization_path(
    params: &LinearSvmParams,
    data: &LabeledData,
    cs: &[f64],
    k: usize,
    seed: u64,
) -> Result<Vec<PathPoint>, Error> {
    use rayon::prelude::*;
    if cs.is_empty()
        || cs
            .windows(2)
            .any(|p| p[0].partial_cmp(&p[1]) != Some(std::cmp::Ordering::Less))
    {
        return Err(OptimError::InvalidParam {
            name: "c path",
            value: format!("{cs:?}"),
            reason: "must be a non-empty list of increasing values",
        }
        .into());
    }
    let svms = cs
        .iter()
        .map(|&c| params.clone().c(c).check())
        .collect::<Result<Vec<_>, _>>()?;
    let fold_of = stratified_folds(data, k, seed)?;
    let run = || {
        (0..k)
            .into_par_iter()
            .map(|f| {
                let (train, test) = split(data, &fold_of, f);
                // The previous C's duals and λ; scaled by C_new/C_old before use (see `DualFile::alpha_for`).
                let mut previous: Option<(Vec<f64>, f64)> = None;
                svms.iter()
                    .map(|svm| {
                        let lambda = svm.params.regularization.lambda(train.n_samples())?.get();
                        let alpha = previous.take().map(|(a, old)| {
                            a.iter().map(|v| v * (old / lambda)).collect::<Vec<f64>>()
                        });
                        let (report, dual) = svm.fit_in_pool(&train, alpha.as_deref(), &mut ())?;
                        previous = dual.map(|d| (d, lambda));
                        let accuracy = report.model.evaluate(&test, None)?.accuracy;
                        let t = &report.model.training;
                        Ok((accuracy, t.epochs, t.objective))
                    })
                    .collect::<Result<Vec<_>, Error>>()
            })
            .collect::<Result<Vec<_>, Error>>()
    };
    let per_fold = crate::parallel::with_threads(params.threads, run)?;
    Ok(cs
        .iter()
        .enumerate()
        .map(|(j, &c)| PathPoint {
            c,
            cv: CrossValidation::from_folds(per_fold.iter().map(|f| f[j].0).collect()),
            passes: per_fold.iter().map(|f| f[j].1).sum::<f64>() / k as f64,
            objective: per_fold.iter().map(|f| f[j].2).collect(),
        })
        .collect())
}
