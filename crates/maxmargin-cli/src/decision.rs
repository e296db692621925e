//! `calibrate` and `threshold`: turning a binary model's scores into decisions, on development data.

use super::*;
use maxmargin::linear::{CalibrationMethod, DecisionModel, ThresholdRule};

/// A binary model, turned to `pos_label` as its positive class when one is given.
pub(crate) fn load_binary(model: &Path, pos_label: Option<f64>) -> Result<DecisionModel> {
    let kind = maxmargin::io::model_file::read_header(model)?.kind;
    if kind != maxmargin::linear::MODEL_KIND && kind != maxmargin::linear::DECISION_KIND {
        bail!(
            "{}: a {kind} model; calibrate takes binary and multiclass models, threshold binary ones",
            model.display()
        );
    }
    let m = DecisionModel::load(model)?;
    Ok(match pos_label {
        Some(label) => m.with_positive(model, label)?,
        None => m,
    })
}

/// Warns when the development rows are the rows the model was trained on (or mostly are).
fn warn_training_rows(
    inputs: Option<&maxmargin::inputs::Inputs>,
    dev: &maxmargin::io::libsvm::LabeledData,
    model: &Path,
    what: &str,
) {
    let sketch = inputs.and_then(|i| i.rows.as_ref());
    if let Some(w) = sketch.and_then(|s| s.warning(dev, &model.display().to_string(), what)) {
        note!("warning: {w}");
    }
}

pub(crate) fn calibrate(
    model: &Path,
    data: &Path,
    output: &Path,
    method: MethodArg,
    pos_label: Option<f64>,
) -> Result<()> {
    let kind = maxmargin::io::model_file::read_header(model)?.kind;
    if kind == "multiclass" || kind == maxmargin::structured_svm::MULTICLASS_DECISION_KIND {
        if pos_label.is_some() {
            bail!(
                "--pos-label applies to binary models; {} is a {kind} model",
                model.display()
            );
        }
        if method != MethodArg::Platt {
            bail!(
                "--method isotonic applies to binary models; multiclass models calibrate one-vs-rest by Platt"
            );
        }
        let m = maxmargin::StructuredModel::load(model)?;
        let dev =
            crate::load::read_for_model(data, model, crate::load::ModelShape::structured(&m))?;
        let sketch = m.inputs.clone();
        let cal = maxmargin::structured_svm::CalibratedMulticlass::fit(m, &dev)?;
        cal.save(output)?;
        warn_training_rows(sketch.as_deref(), &dev, model, "calibrate");
        let e = cal.evaluate(&dev, None)?;
        note!(
            "calibrated {} classes one-vs-rest (Platt) on {} rows of {}: brier {:.4}, log loss {:.4} there; saved {}",
            cal.calibration.maps.len(),
            dev.n_samples(),
            data.display(),
            e.brier.unwrap_or(f64::NAN),
            e.log_loss.unwrap_or(f64::NAN),
            output.display()
        );
        return Ok(());
    }
    let m = load_binary(model, pos_label)?;
    let dev = crate::load::read_for_binary(data, model, &m.model)?;
    let sketch = m.model.inputs.clone();
    let method = match method {
        MethodArg::Platt => CalibrationMethod::Platt,
        MethodArg::Isotonic => CalibrationMethod::Isotonic,
    };
    let before = (m.threshold_at_probability(), m.cut());
    let m = m.calibrate(&dev, method)?;
    match (before.0, &m.threshold) {
        (Some(p), Some(t)) if t.score != before.1 => note!(
            "the threshold at probability {p} moves with the calibration: score {} (was {})",
            cut_text(t.score),
            cut_text(before.1)
        ),
        (Some(p), None) => note!(
            "warning: the threshold at probability {p} is dropped: this calibration does not increase with \
             the score, so no score cut-off gives it (decisions are at score > 0 again)"
        ),
        _ => {}
    }
    m.save(output)?;
    warn_training_rows(sketch.as_deref(), &dev, model, "calibrate");
    let e = m.evaluate(&dev, None)?;
    note!(
        "calibrated on {} rows of {} ({method:?}): brier {:.4}, log loss {:.4} there; saved {}",
        dev.n_samples(),
        data.display(),
        e.brier.unwrap_or(f64::NAN),
        e.log_loss.unwrap_or(f64::NAN),
        output.display()
    );
    Ok(())
}

pub(crate) fn threshold(
    model: &Path,
    data: &Path,
    output: &Path,
    rule: ThresholdRule,
    pos_label: Option<f64>,
) -> Result<()> {
    let m = load_binary(model, pos_label)?;
    let dev = crate::load::read_for_binary(data, model, &m.model)?;
    let (m, at) = m.choose_threshold(&dev, rule)?;
    m.save(output)?;
    warn_training_rows(
        m.model.inputs.as_deref(),
        &dev,
        model,
        "choose the threshold",
    );
    let cell = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.4}"));
    let t = at.threshold;
    // On a calibrated model the cut-off is also a probability: the lowest a flagged row can have (the
    // probability just above the cut, since rows above it are flagged), printed beside the score.
    let probability = match m.probability_at(t.next_up()) {
        Some(p) if t < f64::MAX => format!(", probability {p:.4}"),
        _ => String::new(),
    };
    let threshold = cut_text(t);
    out!(
        "threshold {threshold}{probability}  (on {} rows of {}: precision {}, recall {}, flag rate {:.4})",
        dev.n_samples(),
        data.display(),
        cell(at.precision),
        cell(at.recall),
        at.flag_rate
    );
    note!("saved {}", output.display());
    Ok(())
}

/// A cut-off just below a round number (the last score under a probability's crossing) is a tiny or a long
/// number: printed in exponent form then, so that it reads (and parses back) short.
fn short_score(t: f64) -> String {
    if t != 0.0 && !(1e-4..1e15).contains(&t.abs()) {
        format!("{t:e}")
    } else {
        format!("{}", t + 0.0)
    }
}

/// A cut-off as printed: its score, or what the sentinels `f64::MIN` and `f64::MAX` (every score, or none,
/// reaches the probability asked for) mean.
fn cut_text(t: f64) -> String {
    match t {
        f64::MIN => "none: every row is flagged".to_string(),
        f64::MAX => "none: no row is flagged".to_string(),
        t => short_score(t),
    }
}
