//! The trained binary model: decision values, predictions, evaluation, save and load.

use super::*;

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
    /// A kernel SVM's support vectors and coefficients (format 4): the score is their kernel expansion, not
    /// `⟨w, x⟩` (and `w` is zero).
    #[serde(default)]
    pub kernel: Option<Box<KernelExpansion>>,
    /// An approximated kernel's feature map (format 5: random Fourier features), applied after the scaler:
    /// the score is `⟨w, z(x)⟩ + b`, `w` one weight per component. (A Nyström model is kept as the kernel
    /// expansion over its landmarks it equals.)
    #[serde(default)]
    pub features: Option<Box<crate::approx::FeatureMap>>,
    /// What the model knows of its inputs (format 6): feature names from a CSV header, a sketch of the
    /// training rows.
    #[serde(default)]
    pub inputs: Option<Box<crate::inputs::Inputs>>,
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
    /// Ranking: the probability that a positive row scores above a negative one (ties count 1/2); `None`
    /// without both classes. No threshold is involved.
    #[serde(default)]
    pub roc_auc: Option<f64>,
    /// Ranking: average precision over the score order; `None` without positives.
    #[serde(default)]
    pub average_precision: Option<f64>,
    /// Decision at the model's threshold: of the rows predicted positive, the share that are.
    #[serde(default)]
    pub precision: Option<f64>,
    /// Decision: of the positive rows, the share predicted positive.
    #[serde(default)]
    pub recall: Option<f64>,
    /// Decision: the harmonic mean of precision and recall.
    #[serde(default)]
    pub f1: Option<f64>,
    /// The share of positive rows (what precision is to be compared with).
    #[serde(default)]
    pub prevalence: f64,
    /// Counts by actual (rows) and predicted (columns) label, named by the model's labels (negative first).
    #[serde(default)]
    pub confusion: Option<maxmargin_core::metrics::Confusion>,
    /// Calibrated models: the mean squared error of the probabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub brier: Option<f64>,
    /// Calibrated models: the mean negative log-probability of the true labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_loss: Option<f64>,
}

impl LinearModel {
    /// Whether the model's scores are log-odds (logistic regression), so that `σ(f(x))` is its own
    /// probability of the positive label; a margin model's scores are not probabilities.
    pub fn is_probabilistic(&self) -> bool {
        self.params.loss == maxmargin_optim::BinaryLoss::Logistic
    }

    /// `f(x) = ⟨w, x⟩ + b` (a kernel model's `Σ_k coef_k K(s_k, x) + b`), on the row scaled as in training
    /// when the model has a scaler.
    pub fn decision_function(&self, x: SparseRow<'_>) -> f64 {
        if let Some(k) = &self.kernel {
            // Features beyond the model's are ignored (the kernel's distance would count them); a linear
            // model's dot product ignores them already, so its rows, the serving path, are not narrowed.
            let x = x.below(self.n_input_features());
            return match &self.scaler {
                Some(s) => k.value(s.transform_row(x).as_row()) + self.b,
                None => k.value(x) + self.b,
            };
        }
        if let Some(map) = &self.features {
            let x = x.below(self.n_input_features());
            return match &self.scaler {
                Some(s) => map.score(s.transform_row(x).as_row(), &self.w) + self.b,
                None => map.score(x, &self.w) + self.b,
            };
        }
        match &self.scaler {
            Some(s) => s.transform_row(x).as_row().dot(&self.w) + self.b,
            None => x.dot(&self.w) + self.b,
        }
    }

    /// The input features the model reads: its weights' (a feature map's own inputs when it has one).
    pub fn n_input_features(&self) -> usize {
        crate::approx::FeatureMap::n_input_of(self.features.as_deref(), self.n_features)
    }

    /// Feature `j`'s name (0-based) when the model was trained on CSV data with a header; empty otherwise.
    pub fn feature_names(&self) -> &[String] {
        crate::inputs::Inputs::names_of(self.inputs.as_deref())
    }

    /// The label column's name when the model was trained on CSV data (`predict` and `eval` read it by
    /// that name unless `--label-column` says otherwise); `None` otherwise.
    pub fn label_column(&self) -> Option<&str> {
        crate::inputs::Inputs::label_column_of(self.inputs.as_deref())
    }

    /// Whether the model's boundary is not linear in the features: a kernel SVM, a Nyström model (kept as a
    /// kernel expansion) or random Fourier features. Such a model has no weight per feature.
    pub fn is_nonlinear(&self) -> bool {
        self.kernel.is_some() || self.features.is_some()
    }

    /// Whether the model scores through an approximated kernel's feature map (random Fourier features).
    pub fn is_approximated(&self) -> bool {
        self.features.is_some()
    }

    /// The bytes the model's vectors hold in memory (weights, scaler, support vectors and their
    /// coefficients): what serving it keeps resident, beside a few hundred bytes of parameters.
    pub fn memory_bytes(&self) -> usize {
        let f = std::mem::size_of::<f64>();
        let scaler = self.scaler.as_ref().map_or(0, |s| {
            s.factor.len() * f + s.offsets.len() * std::mem::size_of::<(u32, f64)>()
        });
        let kernel = self.kernel.as_ref().map_or(0, |k| {
            let s = &k.support;
            (s.n_rows() + 1) * std::mem::size_of::<usize>()
                + s.nnz() * (std::mem::size_of::<u32>() + f)
                + k.coef.len() * 2 * f
        });
        let features = self.features.as_ref().map_or(0, |m| m.memory_bytes());
        std::mem::size_of::<Self>() + self.w.len() * f + scaler + kernel + features
    }

    /// Whether the model is a kernel SVM (its score a sum over support vectors).
    pub fn is_kernel(&self) -> bool {
        self.kernel.is_some()
    }

    /// `f(x_i)` for every row, with the scaling folded into the weights once (a kernel model scales the rows
    /// and sums over its support vectors, rows in parallel).
    pub fn decision_rows(&self, x: &SparseRows) -> Vec<f64> {
        if let Some(k) = &self.kernel {
            // Features beyond the model's are ignored, as by the weights of a linear model.
            let x = x.below(self.n_input_features());
            let values = match &self.scaler {
                Some(s) => k.values(&s.transform(&x)),
                None => k.values(&x),
            };
            return values.into_iter().map(|v| v + self.b).collect();
        }
        if self.features.is_some() {
            use rayon::prelude::*;
            return (0..x.n_rows())
                .into_par_iter()
                .map(|i| self.decision_function(x.row(i)))
                .collect();
        }
        let (w, b) = match &self.scaler {
            Some(s) => s.fold_linear(&self.w, self.b),
            None => (self.w.clone(), self.b),
        };
        x.rows().map(|r| r.dot(&w) + b).collect()
    }

    /// `f(x_i)` for every row of `data` ([`LinearModel::decision_rows`]), refusing the first row whose score
    /// is not finite by its file and line ([`crate::limits::check_scores`]): weights near `f64::MAX` (a
    /// converted or edited model) times large features overflow, and no label can be read from NaN.
    ///
    /// # Errors
    /// [`Error::Io`] naming the first row whose score is NaN or infinite.
    pub fn scores(&self, data: &LabeledData) -> Result<Vec<f64>, Error> {
        let scores = self.decision_rows(&data.x);
        crate::limits::check_scores(data, scores.chunks(1), "no label can be read from it")?;
        Ok(scores)
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
        let c = maxmargin_core::objective::c_sum(lambda, data.n_samples());
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
                let margin = y * self.decision_function(row);
                Ok(if self.is_probabilistic() {
                    // A logistic model's margins make these duals optimal.
                    c * maxmargin_core::hinge::sigmoid(-margin)
                } else if margin < 1.0 {
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

    pub(super) fn label_map(&self) -> BinaryLabels {
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
        self.evaluate_at(data, lambda, 0.0)
    }

    /// As [`LinearModel::evaluate`], with the decisions taken at `score > threshold` instead of `> 0` (the
    /// ranking measures and the objective do not depend on it).
    ///
    /// # Errors
    /// As [`LinearModel::evaluate`].
    pub fn evaluate_at(
        &self,
        data: &LabeledData,
        lambda: Option<f64>,
        threshold: f64,
    ) -> Result<Evaluation, Error> {
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
        // Means summed term by term (each divided by n first): finite scores give a finite mean.
        let (mut mean_hinge, mut mean_loss) = (0.0, 0.0);
        let n = data.n_samples();
        let scores = self.scores(data)?;
        for ((&f, &yi), label) in scores.iter().zip(&y).zip(&data.labels) {
            mean_hinge += hinge(yi * f) / n as f64;
            let weight = self
                .params
                .class_weights
                .iter()
                .find(|(c, _)| c == label)
                .map_or(1.0, |(_, w)| *w);
            mean_loss += weight * self.params.loss.value(yi * f) / n as f64;
            match (yi > 0.0, f > threshold) {
                (true, true) => tp += 1,
                (false, true) => fp += 1,
                (false, false) => tn += 1,
                (true, false) => fn_ += 1,
            }
        }
        let positive: Vec<bool> = y.iter().map(|&v| v > 0.0).collect();
        let decisions = maxmargin_core::metrics::Decisions::from_counts(tp, fp, fn_);
        let bias_sq = if self.bias == Bias::Feature {
            self.b * self.b
        } else {
            0.0
        };
        let reg = match (&self.kernel, lambda) {
            // ‖w‖² in the kernel's space costs a kernel value per pair of support vectors: only when asked
            // (a Nyström model's regularized bias feature adds b², as a linear model's).
            (Some(k), Some(_)) => k.norm_sq() + bias_sq,
            (Some(_), None) => 0.0,
            (None, _) => norm_sq(&self.w) + bias_sq,
        };
        let objective = lambda.map(|l| 0.5 * l * reg + mean_loss);
        if let (Some(l), Some(o)) = (lambda, objective)
            && !o.is_finite()
        {
            return Err(maxmargin_optim::OptimError::InvalidParam {
                name: "lambda",
                value: format!("{l:e}"),
                reason: "gives an objective beyond a 64-bit float with this model (its squared norm or its \
                         mean loss overflows): no objective can be reported",
            }
            .into());
        }
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
            objective,
            converged: self.training.converged,
            roc_auc: maxmargin_core::metrics::roc_auc(&scores, &positive),
            average_precision: maxmargin_core::metrics::average_precision(&scores, &positive),
            precision: decisions.precision,
            recall: decisions.recall,
            f1: decisions.f1,
            prevalence: (tp + fn_) as f64 / n as f64,
            brier: None,
            log_loss: None,
            confusion: Some(maxmargin_core::metrics::Confusion::count(
                self.labels.to_vec(),
                positive
                    .iter()
                    .zip(&scores)
                    .map(|(&p, &f)| (usize::from(p), usize::from(f > threshold))),
            )),
        })
    }

    /// Saves the model atomically: JSON when the path ends in `.json`, the binary format otherwise.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file; an existing file is then left as it was.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        self.check_consistent(path)?;
        Ok(model_file::save(path, MODEL_KIND, self)?)
    }

    /// Checks what every command relies on: a weight per feature, finite weights and intercept, a scaler
    /// that fits, two increasing finite labels; saving checks it too, so no file is written that no command
    /// can load.
    ///
    /// # Errors
    /// [`IoError::BadModel`] naming `path` and the field.
    pub(crate) fn check_consistent(&self, path: &Path) -> Result<(), Error> {
        let bad = |m: String| {
            Error::Io(IoError::BadModel {
                path: path.to_path_buf(),
                message: m,
            })
        };
        if self.w.len() != self.n_features {
            return Err(bad(format!(
                "{} weights for {} features",
                self.w.len(),
                self.n_features
            )));
        }
        if let Some(j) = self.w.iter().position(|v| !v.is_finite()) {
            return Err(bad(format!(
                "weight {} is {}, not finite",
                j + 1,
                self.w[j]
            )));
        }
        if !self.b.is_finite() {
            return Err(bad(format!("the intercept is {}, not finite", self.b)));
        }
        if !(self.lambda.is_finite() && self.lambda > 0.0) {
            return Err(bad(format!(
                "lambda is {}, not positive and finite",
                self.lambda
            )));
        }
        if let Some(why) = self
            .features
            .as_ref()
            .and_then(|m| m.invalid(self.n_features))
        {
            return Err(bad(why));
        }
        if let Some(s) = &self.scaler
            && (s.factor.len() > self.n_input_features()
                || !s.factor.iter().all(|v| v.is_finite() && *v >= 0.0)
                || !s
                    .offsets
                    .iter()
                    .all(|(j, o)| (*j as usize) < s.factor.len() && o.is_finite()))
        {
            return Err(bad("the scaler does not fit the weights".into()));
        }
        if let Some(why) = self
            .kernel
            .as_ref()
            .and_then(|k| k.invalid(self.n_features))
        {
            return Err(bad(why));
        }
        // The positive label is `labels[1]`: the larger one unless training was asked for another
        // (`--pos-label`, format 6).
        let distinct = self.labels[0].is_finite()
            && self.labels[1].is_finite()
            && self.labels[0] != self.labels[1];
        let increasing = self.labels[0] < self.labels[1];
        if !distinct || (!increasing && self.params.positive != Some(self.labels[1])) {
            return Err(bad(format!(
                "labels {:?} must be two increasing values, or the positive label asked for last",
                self.labels
            )));
        }
        if let Some(why) = self
            .inputs
            .as_ref()
            .and_then(|i| i.invalid(self.n_input_features()))
        {
            return Err(bad(why));
        }
        Ok(())
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
        let version = model_file::read_header(path)?.format_version;
        let model: Self = if version < 2 {
            let (_, old): (_, crate::compat::v1::LinearModelV1) =
                model_file::load(path, MODEL_KIND)?;
            old.into()
        } else if version < 4 {
            let (_, old): (_, crate::compat::LinearModelV3) = model_file::load(path, MODEL_KIND)?;
            old.into()
        } else if version < 5 {
            let (_, old): (_, crate::compat::LinearModelV4) = model_file::load(path, MODEL_KIND)?;
            old.into()
        } else if version < 6 {
            let (_, old): (_, crate::compat::LinearModelV5) = model_file::load(path, MODEL_KIND)?;
            old.into()
        } else {
            model_file::load(path, MODEL_KIND)?.1
        };
        model.validated(path)
    }

    /// A model decoded by other means than [`LinearModel::load`] (a Python pickle), checked as `load`
    /// checks it.
    ///
    /// # Errors
    /// [`Error::Io`] ([`IoError::BadModel`]) naming `source` and the field.
    pub fn validated(self, source: &Path) -> Result<Self, Error> {
        self.check_consistent(source)?;
        Ok(self)
    }
}
