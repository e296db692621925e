//! A binary model's decisions as `maxmargin calibrate` and `maxmargin threshold` make them: a calibration
//! fitted on development rows (so scores become probabilities) and a cut-off chosen on them by costs, review
//! capacity, recall or by hand, kept with the model ([`Model`]) and saved in the command's decision file.

use super::*;
use crate::kernel::{Model, Trained};
use maxmargin::linear::{
    AtThreshold, Calibration, CalibrationMethod, DecisionModel, Threshold, ThresholdRule,
};

/// What turns a binary model's scores into decisions, beside the model.
#[derive(Clone, Default)]
pub(crate) struct Decision {
    pub(crate) calibration: Option<Calibration>,
    pub(crate) threshold: Option<Threshold>,
}

impl Decision {
    /// The model and its decision parts.
    pub(crate) fn split(m: DecisionModel) -> (LinearModel, Self) {
        let parts = Self {
            calibration: m.calibration,
            threshold: m.threshold,
        };
        (m.model, parts)
    }

    /// Whether anything was fitted or chosen.
    pub(crate) fn is_some(&self) -> bool {
        self.calibration.is_some() || self.threshold.is_some()
    }

    /// The decision model of `model` with these parts.
    pub(crate) fn of(&self, model: &LinearModel) -> DecisionModel {
        DecisionModel {
            model: model.clone(),
            calibration: self.calibration.clone(),
            threshold: self.threshold.clone(),
        }
    }
}

/// The binary model of `model` (linear, kernel or approximated kernel), or why there is none to decide with.
fn binary(model: &Model) -> PyResult<&LinearModel> {
    match &model.trained {
        Trained::Binary(m) => Ok(m),
        Trained::Multiclass(_) => Err(value_error(
            "calibrate and threshold apply to two classes (a cut-off on one score): for more classes \
             calibrate with sklearn.calibration.CalibratedClassifierCV",
        )),
    }
}

/// Development rows with class indices `y` (0 or 1) as the model's labels.
fn development(m: &LinearModel, x: SparseRows, y: &[f64]) -> PyResult<LabeledData> {
    if y.len() != x.n_rows() {
        return Err(value_error(format!(
            "{} labels for {} rows",
            y.len(),
            x.n_rows()
        )));
    }
    let labels = y
        .iter()
        .map(|&i| if i == 0.0 { m.labels[0] } else { m.labels[1] })
        .collect();
    let mut data = dataset(x, labels);
    data.source = "development rows".into();
    Ok(data)
}

/// `model` with a calibration (`platt` or `isotonic`) fitted on the development rows `x`, `y`.
pub(crate) fn calibrated(model: &Model, x: SparseRows, y: &[f64], method: &str) -> PyResult<Model> {
    let m = binary(model)?;
    let method = match method {
        "platt" | "sigmoid" => CalibrationMethod::Platt,
        "isotonic" => CalibrationMethod::Isotonic,
        other => {
            return Err(value_error(format!(
                "method={other:?}: give platt (sigmoid) or isotonic"
            )));
        }
    };
    let dev = development(m, x, y)?;
    let d = model
        .decision
        .of(m)
        .calibrate(&dev, method)
        .map_err(value_error)?;
    let (m, decision) = Decision::split(d);
    Ok(Model {
        trained: Trained::Binary(Box::new(m)),
        decision,
    })
}

/// `model` with the cut-off chosen on the development rows `x`, `y` by `rule` (`cost` with `value` the cost
/// of a missed positive and `false_positive` a false alarm's, `max_flag_rate`, `min_recall`, `score` or
/// `probability`), and what that cut-off does on them.
pub(crate) fn thresholded(
    model: &Model,
    x: SparseRows,
    y: &[f64],
    (rule, value, false_positive): (&str, f64, f64),
) -> PyResult<(Model, AtThreshold)> {
    let m = binary(model)?;
    let rule = match rule {
        "cost" => ThresholdRule::Cost {
            false_negative: value,
            false_positive,
        },
        "max_flag_rate" => ThresholdRule::MaxFlagRate(value),
        "min_recall" => ThresholdRule::MinRecall(value),
        "score" => ThresholdRule::AtScore(value),
        "probability" => ThresholdRule::AtProbability(value),
        other => {
            return Err(value_error(format!(
                "rule {other:?}: give cost, max_flag_rate, min_recall, score or probability"
            )));
        }
    };
    let dev = development(m, x, y)?;
    let (d, at) = (model.decision.of(m))
        .choose_threshold(&dev, rule)
        .map_err(value_error)?;
    let (m, decision) = Decision::split(d);
    let model = Model {
        trained: Trained::Binary(Box::new(m)),
        decision,
    };
    Ok((model, at))
}
