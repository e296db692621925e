//! A binary model's decisions as `maxmargin calibrate` and `maxmargin threshold` make them: a calibration
//! fitted on development rows (so scores become probabilities) and a cut-off chosen on them by costs, review
//! capacity, recall or by hand, kept with the model ([`Model`]) and saved in the command's decision file.

use super::*;
use crate::kernel::{Model, Trained};
use maxmargin::linear::{AtThreshold, CalibrationMethod, DecisionModel, ThresholdRule};

/// The binary model of `model` (linear, kernel or approximated kernel), or why there is none to decide with.
fn binary(model: &Model) -> PyResult<&DecisionModel> {
    match &model.trained {
        Trained::Binary(d) => Ok(d),
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
    let dev = development(&m.model, x, y)?;
    let d = m.clone().calibrate(&dev, method).map_err(value_error)?;
    Ok(Model::of(Trained::Binary(Box::new(d))))
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
    let dev = development(&m.model, x, y)?;
    let (d, at) = m
        .clone()
        .choose_threshold(&dev, rule)
        .map_err(value_error)?;
    Ok((Model::of(Trained::Binary(Box::new(d))), at))
}
