//! Running a solver on a task's problem: from scratch or a checkpoint, the Crammer–Singer dual, one-vs-rest, and judging the finished run.

use super::*;

impl StructuredSvm {
    /// n-slack as the parameters ask: its ε test accepted by the gap target (else ε divided by 10), and a
    /// pass certified within the target ending the run at once, unless ε was asked tighter than the default
    /// without a gap (then ε rules, as the trainer's stop does).
    pub(super) fn n_slack(&self) -> Result<maxmargin_optim::NSlack, Error> {
        Ok(self
            .params
            .n_slack()
            .check()?
            .with_gap_target(Some(self.gap_target()))
            .stop_when_certified(self.params.stop_gap().is_some()))
    }

    pub(super) fn checkpoint_kind(&self) -> String {
        let solver = match self.params.solver {
            StructSolverKind::Ssg => "ssg",
            StructSolverKind::Nslack => "nslack",
            StructSolverKind::Oneslack => "oneslack",
            StructSolverKind::Bcfw => "bcfw",
            StructSolverKind::Dcd => "dcd",
            StructSolverKind::Ovr => "ovr",
            StructSolverKind::Ovo => "ovo",
            StructSolverKind::Softmax => "softmax",
            StructSolverKind::Perceptron => "perceptron",
        };
        // Blocks of BCFW keep a state of their own.
        let solver = match self.params.blocks {
            b if b > 1 => format!("{solver}-blocks{b}"),
            _ => solver.to_string(),
        };
        match self.method {
            Some(method) => format!("checkpoint-{}-{solver}-{method}", self.params.task.kind()),
            None => format!("checkpoint-{}-{solver}", self.params.task.kind()),
        }
    }

    /// The same estimator for a graph run inferring with `method` (named in its checkpoints' kind).
    pub(super) fn inferring_with(&self, method: &'static str) -> Self {
        Self {
            method: Some(method),
            ..self.clone()
        }
    }

    /// Runs solver `s` from scratch or from the checkpoint, and writes checkpoints when asked.
    pub(super) fn with<P, T>(
        &self,
        trainer: &Trainer,
        mut s: T,
        p: &P,
        meta: (usize, usize, f64, u64),
        o: &mut dyn Observer,
    ) -> Result<maxmargin_optim::Fit<Vec<f64>>, Error>
    where
        T: Solver<P, Output = Vec<f64>>,
        T::State: Serialize + serde::de::DeserializeOwned,
    {
        if self.warm.is_some() && self.plan.resume.is_some() {
            return Err(OptimError::InvalidParam {
                name: "warm start",
                value: "a model".into(),
                reason: "cannot apply with a resumed checkpoint, which carries its own state",
            }
            .into());
        }
        let (n_samples, dim, lambda, rows) = meta;
        let made = crate::checkpoint::Made {
            n_samples,
            dim,
            lambda,
            rows,
        };
        let kind = self.checkpoint_kind();
        let (fit, _) = crate::checkpoint::train(
            trainer,
            &mut s,
            p,
            |s| Ok(s.init(p)?),
            (&kind, made, &self.params),
            &self.plan,
            o,
        )?;
        Ok(fit)
    }

    pub(super) fn run<S>(
        &self,
        space: &S,
        (x, y): (&[S::Input], &[S::Output]),
        observer: &mut (dyn Observer + Send),
    ) -> Result<(maxmargin_optim::Fit<Vec<f64>>, f64), Error>
    where
        S: OutputSpace,
        S::Output: Sync + Serialize + serde::de::DeserializeOwned,
    {
        let lambda = self.params.regularization.lambda(x.len())?;
        let problem =
            StructProblem::new(space, x, y, lambda)?.with_rescaling(self.params.rescaling)?;
        let trainer = self.params.trainer()?;
        let rows = crate::inputs::space_digest(space, x, y, self.sample_weights.as_deref());
        let meta = (x.len(), space.dim(), lambda.get(), rows);
        let go = |observer: &mut (dyn Observer + Send)| -> Result<maxmargin_optim::Fit<Vec<f64>>, Error> {
            match self.params.solver {
                StructSolverKind::Bcfw if self.params.blocks > 1 => self.with(&trainer, self.params.bcfw().check()?.in_blocks(self.params.blocks)?, &problem, meta, observer),
                StructSolverKind::Bcfw => self.with(&trainer, self.params.bcfw().check()?, &problem, meta, observer),
                StructSolverKind::Oneslack => self.with(&trainer, self.params.one_slack().check()?.with_gap_target(Some(self.gap_target())), &problem, meta, observer),
                StructSolverKind::Nslack => self.with(&trainer, self.n_slack()?, &problem, meta, observer),
                StructSolverKind::Dcd | StructSolverKind::Ovr | StructSolverKind::Ovo | StructSolverKind::Softmax => Err(OptimError::InvalidParam {
                    name: "solver",
                    value: format!("{:?}", self.params.solver).to_lowercase(),
                    reason: "is for the multiclass task only",
                }
                .into()),
                StructSolverKind::Perceptron => self.with(&trainer, self.params.perceptron().check()?, &problem, meta, observer),
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
    pub(super) fn run_cs(
        &self,
        space: &MulticlassSpace,
        (x, y): (&[SparseVec], &[u32]),
        class_weights: Vec<f64>,
        observer: &mut (dyn Observer + Send),
    ) -> Result<(maxmargin_optim::Fit<Vec<f64>>, f64), Error> {
        let lambda = self.params.regularization.lambda(x.len())?;
        let problem = StructProblem::new(space, x, y, lambda)?;
        let trainer = self.params.trainer()?;
        let rows = crate::inputs::space_digest(space, x, y, self.sample_weights.as_deref());
        let meta = (x.len(), space.dim(), lambda.get(), rows);
        let fit = crate::parallel::with_threads(self.params.threads, || {
            self.with(
                &trainer,
                self.params
                    .cs()
                    .check()?
                    .with_class_weights(class_weights)?
                    .with_example_weights(self.sample_weights.clone().unwrap_or_default())?
                    .with_gap_target(Some(self.gap_target())),
                &problem,
                meta,
                observer,
            )
        })?;
        Ok((fit, lambda.get()))
    }

    /// Multinomial logistic regression by Newton's method, with class and sample weights on the rows' losses.
    pub(super) fn run_softmax(
        &self,
        space: &MulticlassSpace,
        ex: &Examples<SparseVec, u32>,
        class_weights: &[f64],
        observer: &mut (dyn Observer + Send),
    ) -> Result<(maxmargin_optim::Fit<Vec<f64>>, f64), Error> {
        let n = ex.x.len();
        let lambda = self.params.regularization.lambda(n)?;
        let k = space.n_classes();
        let width = space.dim() / k.max(1);
        let weights: Vec<f64> = (0..n)
            .map(|i| {
                let class = class_weights.get(ex.y[i] as usize).copied().unwrap_or(1.0);
                class * self.sample_weights.as_ref().map_or(1.0, |w| w[i])
            })
            .collect();
        let weighted = !class_weights.is_empty() || self.sample_weights.is_some();
        let mut problem =
            maxmargin_optim::softmax::SoftmaxProblem::new(&ex.x, &ex.y, k, width, lambda)?;
        if weighted {
            problem = problem.with_example_weights(&weights)?;
        }
        let trainer = self.params.trainer()?;
        let rows = crate::inputs::space_digest(space, &ex.x, &ex.y, self.sample_weights.as_deref());
        let meta = (n, space.dim(), lambda.get(), rows);
        let solver = maxmargin_optim::softmax::Softmax {
            gap_target: self.gap_target(),
            ..Default::default()
        }
        .check()?;
        let fit = crate::parallel::with_threads(self.params.threads, || {
            self.with(&trainer, solver, &problem, meta, observer)
        })?;
        Ok((fit, lambda.get()))
    }

    /// One-vs-rest: one binary DCD per class, classes in parallel, assembled into the multiclass layout
    /// (class-major blocks of `width` weights, the bias weight last in each block). The objective, gap and
    /// passes are the sums over the classes, in one trace record.
    pub(super) fn run_ovr(
        &self,
        x: &maxmargin_core::vector::SparseRows,
        y: &[u32],
        n_classes: usize,
        class_weights: &[f64],
    ) -> Result<(maxmargin_optim::Fit<Vec<f64>>, f64), Error> {
        if !self.plan.is_empty() {
            return Err(OptimError::InvalidParam {
                name: "checkpoint",
                value: "ovr".into(),
                reason: "cannot apply: one-vs-rest trains its classes independently and keeps no \
                         resumable state (the Crammer-Singer dual, --solver dcd, does)",
            }
            .into());
        }
        let n = x.n_rows();
        let lambda = self.params.regularization.lambda(n)?;
        let classes: Vec<usize> = y.iter().map(|&c| c as usize).collect();
        let bias = if self.params.bias {
            maxmargin_optim::Bias::Feature
        } else {
            maxmargin_optim::Bias::None
        };
        let dcd = maxmargin_optim::DcdParams::new()
            .epsilon(self.params.epsilon)
            .seed(self.params.seed);
        let fit = crate::parallel::with_threads(self.params.threads, || {
            let ovr = maxmargin_optim::ovr::OneVsRest {
                lambda,
                bias,
                loss: self.params.loss,
                dcd,
                budget: self.params.untraced_budget(),
                gap_target: Some(self.gap_target()),
            };
            let samples = self.sample_weights.as_deref().unwrap_or_default();
            Ok(ovr.fit_multiclass(x, &classes, n_classes, (class_weights, samples))?)
        })?;
        Ok((fit, lambda.get()))
    }

    /// The relative gap a run must reach to count as converged (see [`StructuredSvmParams::gap_target`]).
    pub(super) fn gap_target(&self) -> f64 {
        self.params.gap_target()
    }

    /// The space's input width: the data's features, plus the constant one.
    pub(super) fn width(&self, n_features: usize) -> usize {
        (n_features + usize::from(self.params.bias)).max(1)
    }

    /// The model and report of a finished run: the certified gap, whether it converged (with a warning
    /// when not), and the scaling it was trained with.
    pub(super) fn finish(
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
            over_ranks,
        } = report;
        let (n, n_features, n_labels) = shape;
        let gap = fit.trace.last().and_then(|r| r.gap);
        let tolerance = self.gap_target();
        let converged = crate::convergence::converged(fit.stop, fit.objective, gap, tolerance);
        crate::convergence::check_finite(&fit.output, 0.0, fit.objective)?;
        if !converged && self.params.solver == StructSolverKind::Perceptron {
            // It minimizes no objective: its own test (a pass without a mistake) is all there is to report.
            warnings.push(format!(
                "perceptron stopped {} after {:.1} passes with mistakes left in its last pass (it converges \
                 only when a pass makes none, on separable data; it has no certificate); try more passes \
                 (--max-passes), or --solver bcfw for a certified SVM",
                crate::convergence::stopped_on(fit.stop),
                fit.progress.epoch
            ));
        } else if !converged {
            let solver = format!("{:?}", self.params.solver).to_lowercase();
            let advice = crate::convergence::structured_advice(
                (self.params.scale, over_ranks),
                max_abs,
                (self.params.task, n),
                (self.params.solver, self.params.loss),
            );
            warnings.push(crate::convergence::warning(
                &crate::convergence::Stopped {
                    solver,
                    stop: fit.stop,
                    passes: fit.progress.epoch,
                    objective: fit.objective,
                    gap,
                    tolerance,
                },
                &advice,
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
            kernel: None,
            features: None,
            inputs: None,
            shape: ChainShape::default(),
        };
        Ok(StructFitReport {
            model,
            trace: fit.trace,
            warnings,
        })
    }
}

/// What a checkpoint must agree on to be resumed: the problem (features, scaling, kernel, hinge) and the
/// seed, not the budget (the blocks are in the checkpoint's kind).
impl crate::checkpoint::SameProblem for StructuredSvmParams {
    fn differs_from(&self, stored: &Self) -> Option<(&'static str, String, String)> {
        crate::checkpoint::first_difference(&[
            ("seed", &stored.seed, &self.seed),
            ("bias", &stored.bias, &self.bias),
            ("class weights", &stored.class_weights, &self.class_weights),
            (
                "scaling",
                &stored.scale.to_string(),
                &self.scale.to_string(),
            ),
            ("kernel", &stored.kernel, &self.kernel),
            ("approximated kernel", &stored.approx, &self.approx),
            ("rescaling", &stored.rescaling, &self.rescaling),
        ])
    }
}
