//! Calibrated multiclass models: one Platt sigmoid per class, fitted one-vs-rest on development rows (the
//! class's score against "this class or not"), the probabilities normalized to sum to 1. Saved under kind
//! [`MULTICLASS_DECISION_KIND`]; [`StructuredModel::load`] reads such a file as its model alone.

use super::*;
use maxmargin_core::calibration::Platt;

/// The kind of a calibrated multiclass model file.
pub const MULTICLASS_DECISION_KIND: &str = "multiclass-decision";

/// One-vs-rest Platt maps, by class, and what they were fitted on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MulticlassCalibration {
    /// One sigmoid per class, in the model's class order.
    pub maps: Vec<Platt>,
    /// Development rows they were fitted on.
    pub rows: usize,
    /// The development file.
    pub source: String,
}

/// A multiclass model with its calibration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibratedMulticlass {
    /// The trained model.
    pub model: StructuredModel,
    /// Scores to probabilities.
    pub calibration: MulticlassCalibration,
}

impl CalibratedMulticlass {
    /// Fits one Platt sigmoid per class on development rows (disjoint from training), one-vs-rest.
    ///
    /// # Errors
    /// A model that is not multiclass, labels it does not know, or no rows.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), maxmargin::Error> {
    /// use maxmargin::structured_svm::{CalibratedMulticlass, StructuredSvmParams, Task};
    /// let iris = maxmargin::datasets::iris()?;
    /// let model = StructuredSvmParams::new(Task::Multiclass).check()?.fit_multiclass(&iris, &mut ())?.model;
    /// let cal = CalibratedMulticlass::fit(model, &iris)?;
    /// let p = cal.probabilities(&iris)?;
    /// assert!(p.iter().all(|row| (row.iter().sum::<f64>() - 1.0).abs() < 1e-12));
    /// # Ok(()) }
    /// ```
    pub fn fit(model: StructuredModel, dev: &LabeledData) -> Result<Self, Error> {
        let y = super::model::class_indices(&model.classes, dev)?;
        super::model::nonempty(dev.n_samples(), &dev.source)?;
        let scores = model.multiclass_scores(dev)?;
        if let Some(c) = (0..model.n_labels).find(|&c| !y.iter().any(|&t| t as usize == c)) {
            return Err(crate::linear::missing_class(
                dev,
                model.classes[c],
                "every class",
            ));
        }
        let maps = (0..model.n_labels)
            .map(|c| {
                let s: Vec<f64> = scores.iter().map(|row| row[c]).collect();
                let positive: Vec<bool> = y.iter().map(|&t| t as usize == c).collect();
                Platt::fit(&s, &positive).ok_or_else(|| -> Error {
                    IoError::Empty {
                        path: dev.source.clone(),
                    }
                    .into()
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            model,
            calibration: MulticlassCalibration {
                maps,
                rows: dev.n_samples(),
                source: dev.source.display().to_string(),
            },
        })
    }

    /// Each row's probability of each class (the model's class order), summing to 1.
    ///
    /// # Errors
    /// As [`StructuredModel::multiclass_scores`].
    pub fn probabilities(&self, data: &LabeledData) -> Result<Vec<Vec<f64>>, Error> {
        let k = self.calibration.maps.len();
        Ok(self
            .model
            .multiclass_scores(data)?
            .into_iter()
            .map(|row| {
                let raw: Vec<f64> = row
                    .iter()
                    .zip(&self.calibration.maps)
                    .map(|(&s, m)| m.probability(s))
                    .collect();
                let total: f64 = raw.iter().sum();
                if total > 0.0 && total.is_finite() {
                    raw.iter().map(|p| p / total).collect()
                } else {
                    vec![1.0 / k as f64; k]
                }
            })
            .collect())
    }

    /// The model's multiclass measures, with the Brier score and log loss of the probabilities.
    ///
    /// # Errors
    /// As [`StructuredModel::evaluate_multiclass`].
    pub fn evaluate(
        &self,
        data: &LabeledData,
        lambda: Option<f64>,
    ) -> Result<StructEvaluation, Error> {
        let mut e = self.model.evaluate_multiclass(data, lambda)?;
        let (y, _, _) = super::model::class_indices_with_unknown(&self.model.classes, data);
        let p = self.probabilities(data)?;
        let (brier, log) = brier_and_log_loss(&p, &y);
        e.brier = Some(brier);
        e.log_loss = Some(log);
        Ok(e)
    }

    /// Saves the calibrated model atomically (JSON for `.json` paths).
    ///
    /// # Errors
    /// [`Error::Io`] naming the file.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        Ok(model_file::save(path, MULTICLASS_DECISION_KIND, self)?)
    }

    /// Loads a calibrated multiclass model, checking it is whole and consistent.
    ///
    /// # Errors
    /// [`Error::Io`] for a missing, foreign, corrupt or inconsistent file.
    pub fn load(path: &Path) -> Result<Self, Error> {
        let version = model_file::read_header(path)?.format_version;
        let m: Self = if version < 4 {
            let (_, old): (_, crate::compat::CalibratedMulticlassV3) =
                model_file::load(path, MULTICLASS_DECISION_KIND)?;
            old.into()
        } else if version < 5 {
            let (_, old): (_, crate::compat::CalibratedMulticlassV4) =
                model_file::load(path, MULTICLASS_DECISION_KIND)?;
            old.into()
        } else if version < 6 {
            let (_, old): (_, crate::compat::CalibratedMulticlassV5) =
                model_file::load(path, MULTICLASS_DECISION_KIND)?;
            old.into()
        } else if version < 7 {
            let (_, old): (_, crate::compat::CalibratedMulticlassV6) =
                model_file::load(path, MULTICLASS_DECISION_KIND)?;
            old.into()
        } else {
            model_file::load(path, MULTICLASS_DECISION_KIND)?.1
        };
        m.model.check_consistent(path)?;
        let finite = m
            .calibration
            .maps
            .iter()
            .all(|p| p.a.is_finite() && p.b.is_finite());
        if m.model.task != Task::Multiclass
            || m.calibration.maps.len() != m.model.n_labels
            || !finite
        {
            return Err(IoError::BadModel {
                path: path.to_path_buf(),
                message: format!(
                    "{} calibration maps for a {} model of {} classes",
                    m.calibration.maps.len(),
                    m.model.task.kind(),
                    m.model.n_labels
                ),
            }
            .into());
        }
        Ok(m)
    }
}

impl StructuredModel {
    /// Whether the model is one-vs-rest logistic regression, whose scores are each class's log-odds.
    pub fn is_probabilistic(&self) -> bool {
        self.task == Task::Multiclass
            && (self.params.solver == super::StructSolverKind::Softmax
                || (self.params.solver == super::StructSolverKind::Ovr
                    && self.params.loss == maxmargin_optim::BinaryLoss::Logistic))
    }

    /// One-vs-rest logistic regression's own probabilities: each class's `σ(score)`, normalized to sum to 1
    /// (as scikit-learn's one-vs-rest `predict_proba`).
    ///
    /// # Errors
    /// [`Error::Optim`] for a model that is not one-vs-rest logistic regression, or as
    /// [`StructuredModel::multiclass_scores`].
    pub fn own_probabilities(&self, data: &LabeledData) -> Result<Vec<Vec<f64>>, Error> {
        if !self.is_probabilistic() {
            return Err(OptimError::InvalidParam {
                name: "probability",
                value: "a margin model".into(),
                reason: "needs one-vs-rest logistic regression (--solver ovr --loss logistic) or a calibrated \
                         model (maxmargin calibrate)",
            }
            .into());
        }
        let scores = self.multiclass_scores(data)?;
        if self.params.solver == super::StructSolverKind::Softmax {
            // Multinomial: the scores' softmax.
            return Ok(scores
                .into_iter()
                .map(|s| {
                    let max = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    let e: Vec<f64> = s.iter().map(|v| (v - max).exp()).collect();
                    let total: f64 = e.iter().sum();
                    e.iter().map(|v| v / total).collect()
                })
                .collect());
        }
        Ok(scores
            .into_iter()
            .map(|s| {
                let p: Vec<f64> = s
                    .iter()
                    .map(|&v| maxmargin_core::hinge::sigmoid(v))
                    .collect();
                let total: f64 = p.iter().sum();
                if total > 0.0 {
                    p.iter().map(|v| v / total).collect()
                } else {
                    vec![1.0 / p.len() as f64; p.len()]
                }
            })
            .collect())
    }
}

/// The multiclass Brier score (the squared distance to the one-hot truth, summed over the classes) and log
/// loss of probabilities `p` (one row per example, classes in the model's order) for class indices `y`.
pub(super) fn brier_and_log_loss(p: &[Vec<f64>], y: &[u32]) -> (f64, f64) {
    let n = p.len().max(1) as f64;
    let (mut brier, mut log) = (0.0, 0.0);
    for (row, &t) in p.iter().zip(y) {
        for (c, &pc) in row.iter().enumerate() {
            let target = f64::from(u8::from(c == t as usize));
            brier += (pc - target) * (pc - target);
        }
        // A class the model never saw has probability 0: its term is (0 − 1)².
        if t as usize >= row.len() {
            brier += 1.0;
        }
        log -= row
            .get(t as usize)
            .copied()
            .unwrap_or(0.0)
            .clamp(1e-15, 1.0)
            .ln();
    }
    (brier / n, log / n)
}
