//! What `predict`, `eval` and the structured commands read beside the command line: a structured model file
//! of any kind, and data checked to fit the model it is given to. It calls no command.

use super::*;
use maxmargin::StructuredModel;

/// Refuses a `--format` other than the one the model at `path` reads (the flag `train` took, accepted by
/// `predict` and `eval` where it means the same).
pub(crate) fn check_format(path: &Path, format: Option<FormatArg>) -> Result<()> {
    let Some(given) = format else {
        return Ok(());
    };
    let kind = maxmargin::io::model_file::read_header(path)?.kind;
    let reads = match kind.as_str() {
        "multilabel" => FormatArg::Multilabel,
        "chain" => FormatArg::SvmHmm,
        k if k == maxmargin::tagger::TAGGER_KIND => FormatArg::Conll,
        _ => FormatArg::Libsvm,
    };
    if given != reads {
        bail!(
            "{}: a {kind} model reads {} data, not --format {}",
            path.display(),
            reads.name(),
            given.name()
        );
    }
    Ok(())
}

/// A structured model file, read once: a calibrated multiclass file (kind `multiclass-decision`) as the
/// calibrated model, any other as its model.
pub(crate) enum Loaded {
    /// One-vs-rest Platt maps over a multiclass model.
    Calibrated(maxmargin::structured_svm::CalibratedMulticlass),
    /// A structured model.
    Plain(StructuredModel),
}

impl Loaded {
    pub(crate) fn load(path: &Path) -> Result<Self> {
        let kind = maxmargin::io::model_file::read_header(path)?.kind;
        Ok(
            if kind == maxmargin::structured_svm::MULTICLASS_DECISION_KIND {
                Self::Calibrated(maxmargin::structured_svm::CalibratedMulticlass::load(path)?)
            } else {
                Self::Plain(StructuredModel::load(path)?)
            },
        )
    }

    pub(crate) fn model(&self) -> &StructuredModel {
        match self {
            Self::Calibrated(c) => &c.model,
            Self::Plain(m) => m,
        }
    }

    pub(crate) fn calibrated(&self) -> Option<&maxmargin::structured_svm::CalibratedMulticlass> {
        match self {
            Self::Calibrated(c) => Some(c),
            Self::Plain(_) => None,
        }
    }
}

/// Reads LIBSVM data for a model with `classes` and `n_features`: data with more distinct labels than the
/// model has classes is another task's (an a9a model on letter data) and is refused, saying what the model
/// expects; features beyond the model's are ignored by the prediction and counted in one `warning:` line.
pub(crate) fn read_for_model(
    data_path: &Path,
    model_path: &Path,
    classes: &[f64],
    n_features: usize,
) -> Result<maxmargin::io::libsvm::LabeledData> {
    fits_model(
        libsvm::read(data_path)?,
        data_path,
        model_path,
        classes,
        n_features,
    )
}

/// Reads rows to predict for a model, as [`read_for_model`]: a row may have no label (it starts with its
/// features) or the placeholder `?`.
pub(crate) fn read_to_predict(
    data_path: &Path,
    model_path: &Path,
    classes: &[f64],
    n_features: usize,
) -> Result<maxmargin::io::libsvm::LabeledData> {
    let data = libsvm::read_unlabelled(data_path)?;
    fits_model(data, data_path, model_path, classes, n_features)
}

fn fits_model(
    data: maxmargin::io::libsvm::LabeledData,
    data_path: &Path,
    model_path: &Path,
    classes: &[f64],
    n_features: usize,
) -> Result<maxmargin::io::libsvm::LabeledData> {
    let mut seen: Vec<f64> = Vec::new();
    for (i, &l) in data.labels.iter().enumerate() {
        if !l.is_nan() && !seen.contains(&l) {
            seen.push(l);
            if seen.len() > classes.len() {
                let names: Vec<String> = classes.iter().map(ToString::to_string).collect();
                bail!(
                    "{}:{}: label {l} makes {} distinct labels, more than the {} classes of {} ({}): the data is \
                     for another task or model",
                    data_path.display(),
                    data.lines.get(i).copied().unwrap_or(i + 1),
                    seen.len(),
                    classes.len(),
                    model_path.display(),
                    names.join(", ")
                );
            }
        }
    }
    let (mut beyond, mut rows, mut widest) = (0usize, 0usize, 0usize);
    for row in data.x.rows() {
        let outside = row.indices().iter().filter(|&&j| j as usize >= n_features);
        let (count, top) = outside.fold((0, 0), |(c, m), &j| (c + 1, m.max(j as usize + 1)));
        if count > 0 {
            beyond += count;
            rows += 1;
            widest = widest.max(top);
        }
    }
    if beyond > 0 {
        note!(
            "warning: {}: {beyond} feature values in {rows} rows have indices beyond the model's {n_features} \
             features (up to {widest}) and are ignored",
            data_path.display()
        );
    }
    Ok(data)
}
