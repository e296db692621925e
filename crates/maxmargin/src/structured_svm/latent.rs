//! Multiclass models with latent subclasses (Yu & Joachims 2009): each class a mixture of templates, trained
//! by CCCP rounds of completion and a convex structural SVM ([`maxmargin_optim::latent::cccp`]).

use super::*;
use maxmargin_optim::latent::{CccpParams, CccpRound, CccpState, CccpStop, LatentFit, cccp_from};
use maxmargin_struct::{LatentMulticlassSpace, LatentSpace};

/// The model kind of a multiclass model with latent subclasses.
pub const LATENT_KIND: &str = "multiclass-latent";

/// A multiclass model whose classes are each a mixture of `subclasses` linear templates: a row's class is
/// that of its best template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LatentMulticlassModel {
    /// The joint model over the `K·S` templates, whose class values are the template numbers `c·S + h`; it
    /// holds the scaler, the parameters, and the training summary of the kept round's convex solve.
    pub model: StructuredModel,
    /// The class values, in class order.
    pub classes: Vec<f64>,
    /// Templates per class `S`.
    pub subclasses: usize,
    /// The latent objective `F(w)` at the model's weights.
    pub objective: f64,
    /// Every outer round: the latent objective, the convex problem's objective, gap and passes, and the
    /// completions that changed.
    pub rounds: Vec<CccpRound>,
    /// Why the rounds stopped.
    pub stop: CccpStop,
}

/// A latent model with the trace of its kept round's convex solve and the run's warnings.
pub type LatentFitReport = crate::linear::FitReport<LatentMulticlassModel>;

impl StructuredSvm {
    /// Trains a multiclass model with `subclasses` latent templates per class (any multiclass solver but
    /// one-vs-rest, one-vs-one and softmax trains each round; the first completions come from the seed).
    ///
    /// With a checkpoint plan, the rounds resume from its file and write one after every round
    /// ([`StructuredSvm::checkpoints`]; a period in seconds is refused); with ssg each round's solve starts
    /// from the previous round's weights.
    ///
    /// # Errors
    /// What [`StructuredSvm::fit_multiclass`] returns; [`Error::Optim`] naming a setting that cannot apply
    /// (kernels, approximations, sample weights, a warm start from a model, a checkpoint period, the solvers
    /// above).
    pub fn fit_latent_multiclass(
        &self,
        data: &LabeledData,
        subclasses: usize,
        observer: &mut (dyn Observer + Send),
    ) -> Result<LatentFitReport, Error> {
        self.check_latent("latent subclasses", subclasses, Task::Multiclass)?;
        let (parts, y, scaled) = self.prepare_multiclass(data)?;
        let x = rows_to_vecs(
            scaled.as_ref().unwrap_or(&data.x),
            parts.d,
            self.params.bias,
        );
        drop(scaled);
        let (k, d, n) = (parts.classes.len(), parts.d, x.len());
        let nnz = x.iter().map(|v| v.as_row().nnz()).sum();
        joint_labels("latent subclasses", k, subclasses, nnz)?;
        let space = LatentMulticlassSpace::new(self.width(d), k, subclasses)?;
        let lambda = self.params.regularization.lambda(n)?;
        let weights: Vec<f64> = if parts.weights.is_empty() {
            Vec::new()
        } else {
            (0..k * subclasses)
                .map(|j| parts.weights[j / subclasses])
                .collect()
        };
        let fit = self.latent_rounds(&space, (&x, &y), lambda, |svm, problem| {
            let ex = (x.as_slice(), problem.y());
            let (fit, _) = match svm.params.solver {
                StructSolverKind::Dcd => {
                    svm.run_cs(space.joint(), ex, weights.clone(), observer)?
                }
                _ => svm.run(space.joint(), ex, observer)?,
            };
            Ok(fit)
        })?;
        let (_, inner) = fit.inner.replace_output(fit.w);
        let mut report = parts.into_report();
        let classes = std::mem::replace(
            &mut report.classes,
            (0..k * subclasses).map(|j| j as f64).collect(),
        );
        let mut r = self.finish(inner, lambda.get(), (n, d, k * subclasses), report)?;
        r.model.inputs = Some(Box::new(crate::inputs::Inputs::of(data)));
        r.warnings.extend(rounds_warning(
            fit.stop,
            fit.rounds.len(),
            CccpParams::default().tolerance,
        ));
        Ok(LatentFitReport {
            model: LatentMulticlassModel {
                model: r.model,
                classes,
                subclasses,
                objective: fit.objective,
                rounds: fit.rounds,
                stop: fit.stop,
            },
            trace: r.trace,
            warnings: r.warnings,
        })
    }

    /// Refuses what the latent rounds cannot train: `what` (`latent subclasses` or `latent states`) of
    /// `count` per class or tag, for `task`.
    pub(super) fn check_latent(
        &self,
        what: &'static str,
        count: usize,
        task: Task,
    ) -> Result<(), Error> {
        let p = &self.params;
        if count == 0 {
            return Err(crate::error::refuse(what, 0, "must be at least 1"));
        }
        if p.task != task {
            return Err(crate::error::refuse(
                what,
                p.task.kind(),
                match task {
                    Task::Chain => "apply to the chain task",
                    _ => "apply to the multiclass task",
                },
            ));
        }
        if p.kernel.is_some() || p.approx.is_some() {
            return Err(crate::error::refuse(
                what,
                "with a kernel",
                "mix linear templates; kernels and their approximations are not latent models here",
            ));
        }
        if matches!(
            p.solver,
            StructSolverKind::Ovr | StructSolverKind::Ovo | StructSolverKind::Softmax
        ) {
            return Err(crate::error::refuse(
                what,
                format!("with {:?}", p.solver).to_lowercase(),
                "train each round with dcd (Crammer-Singer), bcfw, oneslack, nslack, ssg or perceptron",
            ));
        }
        if p.rescaling != Rescaling::Margin {
            return Err(crate::error::refuse(
                what,
                "with slack rescaling",
                "the rounds judge the margin-rescaled latent objective; slack rescaling of latent models is not \
                 built yet",
            ));
        }
        if self.sample_weights.is_some() || self.warm.is_some() {
            return Err(crate::error::refuse(
                what,
                "with sample weights or a warm start from a model",
                "are not built for the latent rounds yet",
            ));
        }
        if self.shape != ChainShape::default() {
            return Err(crate::error::refuse(
                what,
                "with second-order transitions or edge features",
                "latent states are how a first-order chain remembers more than the previous tag; choose one",
            ));
        }
        if self.plan.every_seconds.is_some() {
            return Err(crate::error::refuse(
                "checkpoint period",
                what,
                "does not apply to latent training, which writes its checkpoint after every round (a killed \
                 run resumes from the last round it finished)",
            ));
        }
        Ok(())
    }

    /// The CCCP rounds over `space`, as the plan asks: resumed from its checkpoint, one written after every
    /// round (kind `checkpoint-<task>-latent-<solver>`, for the same examples, λ, seed and parameters). Each
    /// round's convex solve (`solve`) runs without the plan, and with ssg from the previous round's
    /// weights; the completions run on the requested thread pool too.
    pub(super) fn latent_rounds<S, F>(
        &self,
        space: &S,
        (x, y): (&[S::Input], &[S::Label]),
        lambda: Lambda,
        mut solve: F,
    ) -> Result<LatentFit<S::Output>, Error>
    where
        S: LatentSpace<
                Input: Sync,
                Label: Sync,
                Output: Sync + Serialize + serde::de::DeserializeOwned,
            >,
        F: FnMut(
                &StructuredSvm,
                &StructProblem<'_, S>,
            ) -> Result<maxmargin_optim::Fit<Vec<f64>>, Error>
            + Send,
    {
        let outer = CccpParams {
            seed: self.params.seed,
            ..CccpParams::default()
        };
        let initial = (x.iter().zip(y).enumerate())
            .map(|(index, (xi, yi))| {
                space
                    .initial(xi, yi, outer.seed)
                    .map_err(|source| OptimError::Example { index, source })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let made = crate::checkpoint::Made {
            n_samples: x.len(),
            dim: space.dim(),
            lambda: lambda.get(),
            rows: crate::inputs::space_digest(space, x, &initial, None),
        };
        let kind = self.checkpoint_kind().replacen(
            self.params.task.kind(),
            &format!("{}-latent", self.params.task.kind()),
            1,
        );
        let start = match &self.plan.resume {
            Some(path) => {
                crate::checkpoint::refuse_older(path, &kind)?;
                let (_, file): (_, RoundsCheckpoint<S::Output>) = model_file::load(path, &kind)?;
                if file.params.seed != self.params.seed {
                    return Err(IoError::BadModel {
                        path: path.clone(),
                        message: format!(
                            "checkpoint made with seed {}; this run has {} (the first completions come \
                             from the seed)",
                            file.params.seed, self.params.seed
                        ),
                    }
                    .into());
                }
                crate::checkpoint::check_made(
                    path,
                    (file.made, &file.params),
                    (made, &self.params),
                    None,
                )?;
                let bad = |message: String| -> Error {
                    IoError::BadModel {
                        path: path.clone(),
                        message,
                    }
                    .into()
                };
                // Every later round depends on every setting but the thread count.
                if let Some((name, was, is)) = differing_setting(&file.params, &self.params) {
                    return Err(bad(format!(
                        "checkpoint made with {name} {was}; this run has {is} (resume latent rounds with the \
                         settings they were made with)"
                    )));
                }
                file.state
                    .check_fits(space, x)
                    .map_err(|e| bad(format!("the rounds' state does not fit: {e}")))?;
                Some(file.state)
            }
            None => None,
        };
        let plain = StructuredSvm {
            plan: Default::default(),
            warm: None,
            ..self.clone()
        };
        let save = |state: &CccpState<S::Output>| -> Result<(), Error> {
            if let Some(path) = &self.plan.save_to {
                let file = RoundsCheckpointRef {
                    made,
                    params: &self.params,
                    state,
                };
                model_file::save(path, &kind, &file)?;
            }
            Ok(())
        };
        crate::parallel::with_threads(self.params.threads, || {
            cccp_from(
                space,
                (x, y),
                lambda,
                outer,
                start,
                save,
                |problem, previous| match previous {
                    Some(w) if self.params.solver == StructSolverKind::Ssg => {
                        let warm = StructuredSvm {
                            warm: Some(w.to_vec()),
                            ..plain.clone()
                        };
                        solve(&warm, problem)
                    }
                    _ => solve(&plain, problem),
                },
            )
        })
    }
}

/// The first setting (as JSON names it) in which `stored` and `now` differ, but the thread count.
fn differing_setting(
    stored: &StructuredSvmParams,
    now: &StructuredSvmParams,
) -> Option<(String, String, String)> {
    let (a, b) = (
        serde_json::to_value(stored).ok()?,
        serde_json::to_value(now).ok()?,
    );
    let (a, b) = (a.as_object()?, b.as_object()?);
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter(|k| k.as_str() != "threads")
        .find(|k| a.get(*k) != b.get(*k))
        .map(|k| {
            let show = |v: Option<&serde_json::Value>| v.map_or("none".into(), |v| v.to_string());
            (k.clone(), show(a.get(k)), show(b.get(k)))
        })
}

/// A checkpoint across latent rounds: what the run was made for, its parameters, where the rounds stand.
#[derive(Serialize, Deserialize)]
struct RoundsCheckpoint<O> {
    made: crate::checkpoint::Made,
    params: StructuredSvmParams,
    state: CccpState<O>,
}

#[derive(Serialize)]
struct RoundsCheckpointRef<'a, O> {
    made: crate::checkpoint::Made,
    params: &'a StructuredSvmParams,
    state: &'a CccpState<O>,
}

impl LatentMulticlassModel {
    fn space(&self) -> Result<LatentMulticlassSpace, Error> {
        let width = self.model.w.len() / self.model.n_labels.max(1);
        Ok(LatentMulticlassSpace::new(
            width.max(1),
            self.classes.len(),
            self.subclasses,
        )?)
    }

    /// The class value of every row.
    ///
    /// # Errors
    /// A row the model cannot read (more features than it knows).
    pub fn predict(&self, data: &LabeledData) -> Result<Vec<f64>, Error> {
        let templates = self.model.predict_multiclass(data)?;
        Ok(templates
            .iter()
            .map(|p| match p {
                Prediction::Class(t) => self.classes[*t as usize / self.subclasses],
                _ => f64::NAN,
            })
            .collect())
    }

    /// Every class's score for every row (its best template's), classes in order.
    ///
    /// # Errors
    /// As [`LatentMulticlassModel::predict`].
    pub fn scores(&self, data: &LabeledData) -> Result<Vec<Vec<f64>>, Error> {
        Ok(self
            .model
            .multiclass_scores(data)?
            .iter()
            .map(|s| {
                s.chunks(self.subclasses)
                    .map(|c| c.iter().copied().fold(f64::NEG_INFINITY, f64::max))
                    .collect()
            })
            .collect())
    }

    /// Accuracy, precision, recall and F1 by class, the confusion pairs, and with `lambda` the latent
    /// objective, on labelled rows.
    ///
    /// # Errors
    /// A label the model does not know (naming its line), or no rows.
    pub fn evaluate(
        &self,
        data: &LabeledData,
        lambda: Option<f64>,
    ) -> Result<StructEvaluation, Error> {
        let y = super::model::class_indices(&self.classes, data)?;
        let n = model::nonempty(data.n_samples(), &data.source)?;
        let space = self.space()?;
        let x = self.model.inputs(&data.x)?;
        // The best template's class, read off the checked scores (a row that overflows names its line).
        let predicted: Vec<u32> = self
            .model
            .predict_multiclass(data)?
            .iter()
            .map(|p| match p {
                Prediction::Class(t) => (*t as usize / self.subclasses) as u32,
                _ => 0,
            })
            .collect();
        let objective = match lambda {
            Some(l) => {
                let completions = x
                    .iter()
                    .zip(&y)
                    .map(|(xi, yi)| space.complete(&self.model.w, xi, yi))
                    .collect::<Result<Vec<_>, _>>()?;
                let problem = StructProblem::new(&space, &x, &completions, Lambda::new(l)?)?
                    .with_rescaling(self.model.params.rescaling)?;
                Some(problem.primal(&self.model.w)?)
            }
            None => None,
        };
        Ok(StructEvaluation {
            n,
            lambda,
            objective,
            converged: self.model.training.converged,
            ..super::multilabel::classified(&self.classes, &y, &predicted)
        })
    }

    /// Saves the model (JSON when `path` ends in `.json`).
    ///
    /// # Errors
    /// [`Error::Io`] naming the file.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        self.check(path)?;
        Ok(model_file::save(path, LATENT_KIND, self)?)
    }

    /// Loads a latent multiclass model, checking that its parts agree.
    ///
    /// # Errors
    /// [`Error::Io`] for a missing, foreign, truncated, corrupt or inconsistent file.
    pub fn load(path: &Path) -> Result<Self, Error> {
        let (_, model): (_, Self) = model_file::load(path, LATENT_KIND)?;
        model.validated(path)
    }

    /// A model decoded by other means than [`LatentMulticlassModel::load`] (a Python pickle), its parts
    /// checked against each other as `load` checks them.
    ///
    /// # Errors
    /// [`Error::Io`] ([`IoError::BadModel`]) naming `source` and what disagrees.
    pub fn validated(self, source: &Path) -> Result<Self, Error> {
        self.check(source)?;
        Ok(self)
    }

    fn check(&self, path: &Path) -> Result<(), Error> {
        let m = &self.model;
        m.check_consistent(path)?;
        let templates = self.classes.len().checked_mul(self.subclasses);
        let mut sorted = self.classes.clone();
        sorted.sort_by(f64::total_cmp);
        let distinct = sorted.windows(2).all(|p| p[0] != p[1]);
        // The joint model's class values are its template numbers 0 .. K·S − 1, in order.
        let numbered = m.classes.iter().enumerate().all(|(j, &c)| c == j as f64);
        if m.task != Task::Multiclass
            || m.kernel.is_some()
            || m.features.is_some()
            || self.subclasses == 0
            || templates != Some(m.n_labels)
            || !distinct
            || !numbered
            || !self.classes.iter().all(|c| c.is_finite())
        {
            return Err(IoError::BadModel {
                path: path.to_path_buf(),
                message: format!(
                    "inconsistent latent model: {} classes of {} templates for {} templates",
                    self.classes.len(),
                    self.subclasses,
                    m.n_labels
                ),
            }
            .into());
        }
        Ok(())
    }
}

/// Latent subclasses per class, or states per tag, at most.
pub const MAX_LATENT: usize = 64;

/// The joint labels `labels × per` of a latent space, refused when the `joint²` table of costs (and, for
/// chains, transitions) it needs is far beyond the data's size (8 per nonzero plus 4,194,304).
pub(super) fn joint_labels(
    what: &'static str,
    labels: usize,
    per: usize,
    nnz: usize,
) -> Result<usize, Error> {
    let joint = labels.saturating_mul(per);
    let limit = nnz.saturating_mul(8).saturating_add(1 << 22);
    if per > MAX_LATENT {
        return Err(crate::error::refuse(
            what,
            per,
            "at most 64 a class or tag: each multiplies the model's weights",
        ));
    }
    if joint.saturating_mul(joint) > limit || joint > u32::MAX as usize {
        return Err(crate::error::refuse(
            what,
            per,
            "make a table of (labels x that)^2 costs far beyond the data's size: use fewer",
        ));
    }
    Ok(joint)
}

/// The warning a latent run's stop deserves, when it does.
pub(super) fn rounds_warning(stop: CccpStop, rounds: usize, tolerance: f64) -> Option<String> {
    match stop {
        CccpStop::Rose => Some(format!(
            "latent round {rounds} raised the objective (its convex solve stopped short of the optimum): \
             the weights of round {} are kept; a tighter --gap or more passes (--max-passes) help",
            rounds - 1
        )),
        CccpStop::Rounds => Some(format!(
            "latent rounds stopped after {rounds} with the objective still falling by more than {tolerance:e} \
             a round: the completions may not have settled"
        )),
        _ => None,
    }
}
