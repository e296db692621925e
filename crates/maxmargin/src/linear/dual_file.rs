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
