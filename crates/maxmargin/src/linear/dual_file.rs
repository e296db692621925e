//! A DCD dual solution on disk, to warm-start training at another C.

use super::*;

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

/// Duals for a DCD warm start on `data` at `lambda`, from any file that has them: a dual file
/// ([`DualFile`]), a DCD checkpoint ([`crate::checkpoint`], its duals scaled as a dual file's), or a
/// binary model (its margins: `α_i = C` inside the margin, else 0).
///
/// # Errors
/// [`Error::Io`] naming the file when it is none of these, damaged, or made for other examples.
pub fn warm_duals(path: &Path, data: &LabeledData, lambda: f64) -> Result<Vec<f64>, Error> {
    let kind = model_file::read_header(path)?.kind;
    if kind == MODEL_KIND {
        return LinearModel::load(path)?.dual_guess(data, lambda);
    }
    if kind == "checkpoint-binary-dcd" {
        let file: crate::checkpoint::CheckpointFile<
            LinearSvmParams,
            maxmargin_optim::dcd::DcdState,
            LinearWeights,
        > = crate::checkpoint::load(path, &kind, None)?;
        let alpha = file.run.state.alpha().to_vec();
        let lambda_old = file.made.lambda;
        return DualFile {
            n_samples: file.made.n_samples,
            lambda: lambda_old,
            alpha,
        }
        .alpha_for(path, data, lambda);
    }
    if kind != DUAL_KIND {
        return Err(IoError::WrongKind {
            path: path.to_path_buf(),
            expected: format!(
                "a binary model ({MODEL_KIND}), a binary dcd checkpoint (checkpoint-binary-dcd) or a dual \
                 file ({DUAL_KIND})"
            ),
            found: kind,
        }
        .into());
    }
    DualFile::load(path)?.alpha_for(path, data, lambda)
}
