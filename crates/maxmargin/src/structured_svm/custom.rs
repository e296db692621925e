//! A user's own output space, first-class: trained by [`StructuredSvm::fit`] with any structural solver
//! (BCFW, SSG, 1-slack, n-slack), certified like the built-in tasks, and kept in a [`CustomModel`] that saves
//! the space with its weights, loads under the space's own kind, predicts and evaluates.

use super::*;
use serde::de::DeserializeOwned;

/// An output space that a model file can hold: it serializes (with whatever it needs to rebuild itself) and
/// names itself, so that [`CustomModel::load`] reads only models of this space.
pub trait CustomSpace: OutputSpace + Serialize + DeserializeOwned {
    /// The space's name; model files of it have the kind `custom-NAME`.
    const NAME: &'static str;
}

/// A model over a user's output space.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound = "S: Serialize + DeserializeOwned")]
pub struct CustomModel<S> {
    /// The space, as the user built it.
    pub space: S,
    /// The weights (length `space.dim()`).
    pub w: Vec<f64>,
    /// The λ trained with.
    pub lambda: f64,
    /// All parameters trained with.
    pub params: StructuredSvmParams,
    /// What training did.
    pub training: StructTrainingSummary,
}

/// A custom-space model with its training trace.
pub type CustomFitReport<S> = crate::linear::FitReport<CustomModel<S>>;

/// How a custom-space model does on labelled examples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CustomEvaluation {
    /// Examples.
    pub n: usize,
    /// The mean task loss `Δ(y, ŷ)` of the predictions.
    pub mean_loss: f64,
    /// The fraction of examples predicted with zero loss.
    pub exact: f64,
    /// `λ/2‖w‖² + (1/n)Σ H_i(w)` at the model's λ (with the hinge rescaled as the model was trained).
    pub objective: f64,
    /// Whether the model's training reached its optimum.
    pub converged: bool,
}

impl StructuredSvm {
    /// Trains on a user's own output space (parameters made with `StructuredSvmParams::new(Task::Custom)`;
    /// solvers `bcfw`, `ssg`, `oneslack` or `nslack`). The space defines every feature: no bias feature is
    /// added and no scaling applies.
    ///
    /// # Errors
    /// [`Error::Optim`] for parameters that do not apply to a custom space; what the space's checks, the
    /// solver or the checkpoint files return.
    pub fn fit<S>(
        &self,
        space: S,
        x: Vec<S::Input>,
        y: Vec<S::Output>,
        observer: &mut (dyn Observer + Send),
    ) -> Result<CustomFitReport<S>, Error>
    where
        S: CustomSpace,
        S::Output: Sync + Serialize + DeserializeOwned,
    {
        self.check_sample_weights(Task::Custom)?;
        if self.params.task != Task::Custom {
            return Err(crate::error::refuse(
                "task",
                self.params.task.kind(),
                "fit takes a custom space: make the parameters with StructuredSvmParams::new(Task::Custom)",
            ));
        }
        if self.params.bias {
            return Err(crate::error::refuse(
                "bias",
                "true",
                "cannot apply: a custom space defines its own features",
            ));
        }
        if self.params.scale != Scaling::None {
            return Err(crate::error::refuse(
                "scale",
                format!("{:?}", self.params.scale).to_lowercase(),
                "cannot apply: a custom space defines its own features",
            ));
        }
        let ex = Examples { x, y };
        let (fit, lambda) = self.run(&space, (&ex.x, &ex.y), observer)?;
        let (n, dim) = (ex.x.len(), space.dim());
        drop(ex);
        let report = self.finish(
            fit,
            lambda,
            (n, dim, 0),
            ReportParts {
                classes: Vec::new(),
                scaler: None,
                warnings: Vec::new(),
                max_abs: 0.0,
                over_ranks: false,
            },
        )?;
        let StructuredModel {
            w,
            lambda,
            params,
            training,
            ..
        } = report.model;
        Ok(CustomFitReport {
            model: CustomModel {
                space,
                w,
                lambda,
                params,
                training,
            },
            trace: report.trace,
            warnings: report.warnings,
        })
    }
}

impl<S: CustomSpace> CustomModel<S> {
    /// The model kind in files: `custom-` and the space's name.
    pub fn kind() -> String {
        format!("custom-{}", S::NAME)
    }

    /// The best output for `x`: `argmax_y ⟨w, ψ(x, y)⟩` (plain decoding, no loss).
    ///
    /// # Errors
    /// What the space's input check or decoder returns.
    pub fn predict(&self, x: &S::Input) -> Result<S::Output, Error> {
        self.space.check_input(x)?;
        Ok(self.space.decode(&self.w, x)?)
    }

    /// Mean loss, exact fraction and objective on labelled examples.
    ///
    /// # Errors
    /// [`Error::Optim`] for no examples or unequal lengths; what the space's checks return.
    pub fn evaluate(&self, x: &[S::Input], y: &[S::Output]) -> Result<CustomEvaluation, Error> {
        if x.len() != y.len() {
            return Err(OptimError::LengthMismatch {
                rows: x.len(),
                targets: y.len(),
            }
            .into());
        }
        if x.is_empty() {
            return Err(OptimError::NoExamples.into());
        }
        let (mut loss, mut exact, mut hinge) = (0.0, 0usize, 0.0);
        for (xi, yi) in x.iter().zip(y) {
            self.space.check_output(xi, yi)?;
            let l = self.space.loss_for(xi, yi, &self.predict(xi)?);
            loss += l;
            exact += usize::from(l == 0.0);
            hinge += match self.params.rescaling {
                Rescaling::Slack => self.space.slack_rescaled(&self.w, xi, yi)?.upper(),
                // A space's bound where it gives one, as training summed it.
                _ => self.space.loss_augmented(&self.w, xi, yi)?.upper(),
            };
        }
        let n = x.len() as f64;
        let norm: f64 = self.w.iter().map(|v| v * v).sum();
        Ok(CustomEvaluation {
            n: x.len(),
            mean_loss: loss / n,
            exact: exact as f64 / n,
            objective: 0.5 * self.lambda * norm + hinge / n,
            converged: self.training.converged,
        })
    }

    /// Writes the model (space included) atomically, as JSON for `.json` paths and bincode otherwise.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        Ok(maxmargin_io::model_file::save(path, &Self::kind(), self)?)
    }

    /// Reads a model of this space written by [`CustomModel::save`]; a model of another space or task is
    /// refused by its kind.
    ///
    /// # Errors
    /// [`Error::Io`] for a missing, foreign, corrupt or inconsistent file.
    pub fn load(path: &Path) -> Result<Self, Error> {
        let version = maxmargin_io::model_file::read_header(path)?.format_version;
        let model: Self = if version < 4 {
            let (_, old): (_, crate::compat::CustomModelV3<S>) =
                maxmargin_io::model_file::load(path, &Self::kind())?;
            old.into()
        } else if version < 5 {
            let (_, old): (_, crate::compat::CustomModelV4<S>) =
                maxmargin_io::model_file::load(path, &Self::kind())?;
            old.into()
        } else if version < 7 {
            let (_, old): (_, crate::compat::CustomModelV6<S>) =
                maxmargin_io::model_file::load(path, &Self::kind())?;
            old.into()
        } else {
            maxmargin_io::model_file::load(path, &Self::kind())?.1
        };
        let bad = |message: String| -> Error {
            IoError::BadModel {
                path: path.to_path_buf(),
                message,
            }
            .into()
        };
        if model.w.len() != model.space.dim() {
            return Err(bad(format!(
                "{} weights for a space of dimension {}",
                model.w.len(),
                model.space.dim()
            )));
        }
        if !model.w.iter().all(|v| v.is_finite()) || !model.lambda.is_finite() {
            return Err(bad("weights must be finite".into()));
        }
        Ok(model)
    }
}
