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
use maxmargin_optim::newton::Newton;
use maxmargin_optim::{
    Bias, BinaryLoss, BinaryProblem, Budget, DcdParams, LinearWeights, Observer, OptimError,
    PegasosParams, Sampling, SmoParams, Solver, StepRule, StopReason, SubgradientParams,
    TraceRecord, Trainer,
};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The model kind written in model files.
pub const MODEL_KIND: &str = "binary";

/// A checked linear SVM estimator.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearSvm {
    params: LinearSvmParams,
    pub(crate) plan: crate::checkpoint::CheckpointPlan,
    step_details: bool,
    pub(crate) sample_weights: Option<Vec<f64>>,
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

/// How a run ended, for judging it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Finished {
    pub(crate) stop: StopReason,
    pub(crate) objective: f64,
    pub(crate) gap: Option<f64>,
    pub(crate) progress: maxmargin_optim::Progress,
}

impl Finished {
    /// How `fit` ended: its stop, objective, last certified gap and progress.
    pub(crate) fn of<O>(fit: &maxmargin_optim::Fit<O>) -> Self {
        Self {
            stop: fit.stop,
            objective: fit.objective,
            gap: fit.trace.last().and_then(|r| r.gap),
            progress: fit.progress,
        }
    }
}

/// What a model records of the rows it was trained on: their two labels, λ and how many there were.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TrainedOn {
    pub(crate) labels: BinaryLabels,
    pub(crate) lambda: f64,
    pub(crate) n_samples: usize,
}

/// A trained model with its training trace and what a user should know about the run: binary models
/// (`FitReport`), and, under their own names, structural ([`crate::structured_svm::StructFitReport`]),
/// custom-space and latent ones.
#[derive(Debug, Clone, PartialEq)]
pub struct FitReport<M = LinearModel> {
    /// The model.
    pub model: M,
    /// The objective at each evaluation (with seconds, which vary from run to run; the dual, gap and
    /// constraint counts where the solver has them). A latent model's are its kept round's convex solve's.
    pub trace: Vec<TraceRecord>,
    /// What a user should know about the run: badly scaled features, a stop short of the optimum (each one
    /// line, without the `warning:` prefix).
    pub warnings: Vec<String>,
}

impl LinearSvm {
    /// Traces every step: an evaluation after each, with the weights and the step's examples, their margins
    /// and cases in [`TraceRecord::step`] (for small problems followed by hand, such as the Pegasos table).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), maxmargin::Error> {
    /// use maxmargin::prelude::*;
    /// use maxmargin::io::libsvm::{parse_real_label, read_from};
    /// let data = read_from(&b"+1 1:2 2:1\n-1 1:-1 2:-2\n"[..], "ab".as_ref(), parse_real_label)?;
    /// let pegasos = PegasosParams::new().sampling(Sampling::Cyclic); // the last iterate, not the average
    /// let svm = LinearSvmParams::new().solver(pegasos).lambda(1.0).bias(Bias::None).iterations(6)
    ///     .check()?.tracing_steps(true);
    /// let trace = svm.fit_observed(&data, &mut ())?.trace;
    /// let step = trace[5].step.as_ref().unwrap();
    /// assert_eq!(step.weights, [0.5, 0.5]);
    /// assert!((step.examples[0].margin - 0.8).abs() < 1e-12);
    /// assert_eq!(step.examples[0].case, "violated");
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn tracing_steps(mut self, on: bool) -> Self {
        self.step_details = on;
        self
    }

    /// Per-row weights: row `i`'s loss counts `weights[i]` times (times its class weight), in every binary
    /// solver; one non-negative finite number per training row, in file order. Weight 0 drops a row; weight 2
    /// counts it twice.
    ///
    /// # Errors
    /// A negative or non-finite weight (the count is checked against the data at fit time).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), maxmargin::Error> {
    /// let data = maxmargin::datasets::heart_scale()?;
    /// let ones = maxmargin::LinearSvmParams::new().check()?.sample_weights(vec![1.0; 270])?.fit(&data)?;
    /// let plain = maxmargin::LinearSvmParams::new().check()?.fit(&data)?;
    /// assert_eq!(ones.w, plain.w);
    /// # Ok(()) }
    /// ```
    pub fn sample_weights(mut self, weights: Vec<f64>) -> Result<Self, Error> {
        crate::limits::check_sample_weights(&weights)?;
        self.sample_weights = Some(weights);
        Ok(self)
    }

    /// The checked parameters.
    pub fn params(&self) -> &LinearSvmParams {
        &self.params
    }

    /// Checkpoints as `plan` says: resume from one, write one at the end and every so many seconds (see
    /// [`crate::checkpoint`]; a run resumed from any checkpoint ends with the same bits as one never stopped).
    pub fn checkpoints(mut self, plan: crate::checkpoint::CheckpointPlan) -> Self {
        self.plan = plan;
        self
    }

    /// The kind of this estimator's checkpoint files.
    pub fn checkpoint_kind(&self) -> String {
        format!("checkpoint-binary-{}", self.params.solver.kind())
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
        let (mut report, dual) = crate::parallel::with_threads(self.params.threads, || {
            self.fit_in_pool(data, alpha, observer)
        })?;
        report.model.inputs = Some(Box::new(crate::inputs::Inputs::of(data)));
        Ok((report, dual))
    }

    /// Each row's loss weight, its class's times its own; `None` when every row weighs 1.
    pub(crate) fn row_weights(
        &self,
        labels: &BinaryLabels,
        data: &LabeledData,
    ) -> Result<Option<Vec<f64>>, Error> {
        if self.params.class_weights.is_empty() && self.sample_weights.is_none() {
            return Ok(None);
        }
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
        let n = data.n_samples();
        if let Some(sw) = &self.sample_weights
            && sw.len() != n
        {
            return Err(OptimError::LengthMismatch {
                rows: n,
                targets: sw.len(),
            }
            .into());
        }
        let weights = data.labels.iter().enumerate().map(|(i, l)| {
            let class = (self.params.class_weights.iter())
                .find(|(c, _)| c == l)
                .map_or(1.0, |(_, w)| *w);
            class * self.sample_weights.as_ref().map_or(1.0, |sw| sw[i])
        });
        let weights: Vec<f64> = weights.collect();
        crate::limits::some_weight_above_zero(
            &weights,
            "class weights",
            "row weights (class times row)",
        )?;
        Ok(Some(weights))
    }

    /// The model of a finished run, judged: converged or not (with a warning naming `advice` when not), and
    /// refused when not finite.
    pub(crate) fn model(
        &self,
        LinearWeights { w, b }: LinearWeights,
        on: TrainedOn,
        end: Finished,
        scaler: Option<Scaler>,
        advice: &str,
        warnings: &mut Vec<String>,
    ) -> Result<LinearModel, Error> {
        let tolerance =
            (self.params.budget.gap_tolerance).unwrap_or(crate::convergence::DEFAULT_GAP);
        let converged = crate::convergence::converged(end.stop, end.objective, end.gap, tolerance);
        crate::convergence::check_finite(&w, b, end.objective)?;
        if !converged {
            warnings.push(crate::convergence::warning(
                &crate::convergence::Stopped {
                    solver: self.params.solver.kind().to_string(),
                    stop: end.stop,
                    passes: end.progress.epoch,
                    objective: end.objective,
                    gap: end.gap,
                    tolerance,
                },
                advice,
            ));
        }
        Ok(LinearModel {
            n_features: w.len(),
            w,
            b,
            labels: [on.labels.negative, on.labels.positive],
            bias: self.params.bias,
            lambda: on.lambda,
            seed: self.params.seed,
            params: self.params.clone(),
            training: TrainingSummary {
                n_samples: on.n_samples,
                objective: end.objective,
                iterations: end.progress.iteration,
                epochs: end.progress.epoch,
                stop: end.stop,
                gap: end.gap,
                converged,
            },
            scaler,
            kernel: None,
            features: None,
            inputs: None,
        })
    }

    fn fit_in_pool(
        &self,
        data: &LabeledData,
        alpha: Option<&[f64]>,
        observer: &mut (dyn Observer + Send),
    ) -> Result<(FitReport, Option<Vec<f64>>), Error> {
        crate::limits::check_data_features(data)?;
        let labels = BinaryLabels::from_labels(&data.source, &data.labels)?
            .with_positive(&data.source, self.params.positive)?;
        let y = labels.targets(data)?;
        let n = data.n_samples();
        let lambda = self.params.regularization.lambda(n)?;
        let on = TrainedOn {
            labels,
            lambda: lambda.get(),
            n_samples: n,
        };
        let mut warnings = Vec::new();
        let kernel = self.params.kernel_choice().map(|k| k.kind);
        let scaler =
            crate::convergence::fit_scaler_for(self.params.scale, &data.x, kernel, &mut warnings)?;
        let scaled = scaler.as_ref().map(|s| s.transform(&data.x));
        let x = scaled.as_ref().unwrap_or(&data.x);
        crate::limits::check_row_norms(data, x)?;
        let map = match &self.params.approx {
            Some(a) => {
                crate::limits::check_mapped_rows(n, a.dimension(n))?;
                Some(a.fit(x, self.params.seed)?)
            }
            None => None,
        };
        let mapped = map.as_ref().map(|m| m.transform(x)).transpose()?;
        let inputs = x;
        let x = mapped.as_ref().unwrap_or(x);
        let mut problem =
            BinaryProblem::new(x, &y, lambda, self.params.bias)?.with_loss(self.params.loss);
        let weights = self.row_weights(&labels, data)?;
        if let Some(weights) = &weights {
            problem = problem.with_example_weights(weights)?;
        }
        if alpha.is_some() && self.plan.resume.is_some() {
            return Err(OptimError::InvalidParam {
                name: "warm start",
                value: "duals".into(),
                reason: "cannot apply with a resumed checkpoint, which carries its own state",
            }
            .into());
        }
        let trainer = Trainer::new(self.params.run_budget())?
            .with_step_details(self.step_details)
            .stopping_every(self.params.watched_only().then_some(f64::INFINITY))?;
        let made = crate::checkpoint::Made {
            n_samples: n,
            dim: problem.n_features(),
            lambda: lambda.get(),
            rows: crate::inputs::examples_digest(x.rows(), &y, weights.as_deref()),
        };
        let kind = self.checkpoint_kind();
        let tag = (kind.as_str(), made, &self.params);
        if let LinearSolver::Smo { smo, kernel } = self.params.solver {
            if alpha.is_some() {
                return Err(OptimError::InvalidParam {
                    name: "warm start",
                    value: "duals".into(),
                    reason: "applies to dcd, not to a kernel SVM",
                }
                .into());
            }
            let kernel = kernel.resolve(x);
            let mut kp = maxmargin_optim::KernelProblem::new(x, &y, lambda, kernel)?;
            if let Some(weights) = &weights {
                kp = kp.with_example_weights(weights)?;
            }
            let target = self.params.budget.gap_tolerance;
            let target = target.unwrap_or(crate::convergence::DEFAULT_GAP);
            let mut s = smo.check()?.with_gap_target(Some(target));
            let init = |s: &mut maxmargin_optim::Smo| Ok(s.init(&kp)?);
            let (fit, _) =
                crate::checkpoint::train(&trainer, &mut s, &kp, init, tag, &self.plan, observer)?;
            let mut end = Finished::of(&fit);
            let expansion = KernelExpansion::from_solution(kernel, x, &fit.output.coef);
            let (labels_weights, at) = ((&y[..], weights.as_deref()), (lambda.get(), fit.output.b));
            if let Some((p, d, note)) =
                kernel::recomputed_objective(&expansion, x, labels_weights, at, end.objective)
            {
                // Both sides of the certificate valued anew from the saved model; the gap is at least the
                // running value's error, which measures how far the arithmetic can be trusted here.
                let error = (p - end.objective).abs();
                end.gap = end.gap.map(|_| (p - d).abs().max(error));
                end.objective = p;
                warnings.push(note);
            }
            let weights = LinearWeights {
                w: vec![0.0; x.n_features()],
                b: fit.output.b,
            };
            let advice = "a smaller --epsilon, more passes (--epochs), or --scale";
            let mut model = self.model(weights, on, end, scaler, advice, &mut warnings)?;
            model.kernel = Some(Box::new(expansion));
            let report = FitReport {
                model,
                trace: fit.trace,
                warnings,
            };
            return Ok((report, None));
        }
        let mut dual = None;
        let fit = match self.params.solver {
            LinearSolver::Pegasos(p) => {
                let mut s = p.check()?;
                let init = |s: &mut maxmargin_optim::Pegasos| Ok(s.init(&problem)?);
                let (fit, _) = crate::checkpoint::train(
                    &trainer, &mut s, &problem, init, tag, &self.plan, observer,
                )?;
                fit
            }
            LinearSolver::Subgradient(p) => {
                let mut s = p.check()?;
                let init = |s: &mut maxmargin_optim::Subgradient| Ok(s.init(&problem)?);
                let (fit, _) = crate::checkpoint::train(
                    &trainer, &mut s, &problem, init, tag, &self.plan, observer,
                )?;
                fit
            }
            LinearSolver::Smo { .. } => unreachable!("trained above"),
            LinearSolver::Newton(n) => {
                let primal = maxmargin_optim::binary::primal::Primal::new(problem)?;
                // The run's gap, when asked, is Newton's target (its own stop, checked every step).
                let target = self.params.budget.gap_tolerance.unwrap_or(n.gap_target);
                let mut s = Newton {
                    gap_target: target,
                    ..n
                }
                .check()?;
                let init = |s: &mut Newton| Ok(s.init(&primal)?);
                let (fit, _) = crate::checkpoint::train(
                    &trainer, &mut s, &primal, init, tag, &self.plan, observer,
                )?;
                fit
            }
            LinearSolver::Dcd(d) => {
                let target = self.params.budget.gap_tolerance;
                let target = target.unwrap_or(crate::convergence::DEFAULT_GAP);
                let mut dcd = d.check()?.with_gap_target(Some(target));
                let init = |d: &mut maxmargin_optim::Dcd| match alpha {
                    Some(a) => Ok(d.warm_state(&problem, a)?),
                    None => Ok(d.init(&problem)?),
                };
                let (fit, run) = crate::checkpoint::train(
                    &trainer, &mut dcd, &problem, init, tag, &self.plan, observer,
                )?;
                dual = Some(run.state.alpha().to_vec());
                fit
            }
        };
        let advice = crate::convergence::binary_advice(
            (self.params.solver.kind(), self.params.loss),
            self.params.scale,
            x,
        );
        let end = Finished::of(&fit);
        let mut model = self.model(fit.output, on, end, scaler, &advice, &mut warnings)?;
        match map {
            Some(crate::approx::FittedMap::Fourier(f)) => {
                model.features = Some(Box::new(crate::approx::FeatureMap::Fourier(f)));
            }
            Some(crate::approx::FittedMap::Nystroem(ny)) => {
                // ⟨w, N k(x)⟩ = Σ_j (N w)_j K(l_j, x): the kernel expansion over the landmarks.
                let coef = ny.fold(&model.w);
                model.kernel = Some(Box::new(KernelExpansion::from_parts(
                    ny.kernel,
                    ny.landmarks,
                    coef,
                )));
                model.w = vec![0.0; inputs.n_features()];
                model.n_features = inputs.n_features();
            }
            None => {}
        }
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

mod cv;
mod decision;
mod dual_file;
pub(crate) mod kernel;
mod model;
mod orientation;
mod params;
mod record;
pub mod serving;
mod stream;

pub use cv::{
    CrossValidation, FoldMetrics, Metric, PathPoint, best_c, cross_validate, cross_validate_folds,
    group_folds, regularization_path, regularization_path_folds,
};
pub(crate) use cv::{check_fold_count, check_folds, split, stratified_classes, stratified_folds};
pub(crate) use decision::missing_class;
pub use decision::{
    AtThreshold, Calibration, CalibrationMap, CalibrationMethod, DECISION_KIND, DecisionModel,
    Threshold, ThresholdRule,
};
pub use dual_file::{DUAL_KIND, DualFile, warm_duals};
pub use kernel::{KernelChoice, KernelExpansion, KernelKind};
pub use model::{Evaluation, LinearModel};
pub use params::{LinearSolver, LinearSvmParams, SolverKind};
pub(crate) use record::ParamsRecord;
pub(crate) use stream::PassError;
pub use stream::{STREAM_EVAL_EVERY, STREAM_POLISH};
