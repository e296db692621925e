//! Which label a binary model calls positive: `train --pos-label` chooses it before training, and
//! [`LinearModel::with_positive`] turns a trained model around after (the score changes sign, the labels
//! swap), so that `eval`, `calibrate` and `threshold` speak of the class a user cares about.

use super::*;

impl LinearModel {
    /// This model with `label` as its positive class: the same model when it already is, else the score
    /// negated (`w`, `b`, a kernel's coefficients), the labels swapped and `params.positive` set. Every row
    /// gets the same label as before, except a row scoring exactly 0, which goes to the negative class in
    /// either orientation; a logistic model's probabilities become `1 − p`, as they should.
    ///
    /// # Errors
    /// [`Error::Io`] when `label` is neither of the model's labels.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use maxmargin::prelude::*;
    /// let data = maxmargin::datasets::heart_scale()?;
    /// let model = LinearSvmParams::new().check()?.fit(&data)?;
    /// let turned = model.clone().with_positive(std::path::Path::new("heart"), -1.0)?;
    /// assert_eq!(turned.labels, [1.0, -1.0]);
    /// assert_eq!(turned.predict_rows(&data.x), model.predict_rows(&data.x));
    /// # Ok(()) }
    /// ```
    pub fn with_positive(mut self, path: &Path, label: f64) -> Result<Self, Error> {
        let map = self.label_map().with_positive(path, Some(label))?;
        if map.positive == self.labels[1] {
            return Ok(self);
        }
        self.w.iter_mut().for_each(|v| *v = -*v);
        self.b = -self.b;
        if let Some(k) = self.kernel.as_mut() {
            k.coef.iter_mut().for_each(|v| *v = -*v);
        }
        self.labels = [map.negative, map.positive];
        self.params.positive = Some(map.positive);
        Ok(self)
    }
}

impl DecisionModel {
    /// This model with `label` as its positive class ([`LinearModel::with_positive`]); a Platt calibration
    /// turns with it exactly (`P'(s) = 1 − P(−s)`).
    ///
    /// # Errors
    /// [`Error::Io`] when `label` is neither of the model's labels, or when turning it would need an
    /// isotonic map or a chosen cut-off turned too (they were fitted for the other class: fit them again
    /// on the turned model).
    pub fn with_positive(mut self, path: &Path, label: f64) -> Result<Self, Error> {
        let before = self.model.labels[1];
        self.model = self.model.with_positive(path, label)?;
        let turned = self.model.labels[1] != before;
        if !turned {
            return Ok(self);
        }
        let refuse = |what: &str| -> Error {
            IoError::Mismatch {
                path: path.to_path_buf(),
                message: format!(
                    "its {what} was fitted with {} as the positive label; --pos-label {label} needs it fitted \
                     again (calibrate or threshold the model as trained, with --pos-label {label})",
                    self.model.labels[0]
                ),
            }
            .into()
        };
        if self.threshold.is_some() {
            return Err(refuse("threshold"));
        }
        if let Some(c) = self.calibration.as_mut() {
            match &mut c.map {
                CalibrationMap::Platt(p) => p.b = -p.b,
                CalibrationMap::Isotonic(_) => return Err(refuse("isotonic calibration")),
            }
        }
        Ok(self)
    }
}
