//! `predict`: labels, scores and probabilities for every kind of model, and the checks that the data fits
//! the model it is given to.

use super::*;
use crate::load::{Loaded, read_to_predict};

/// A multiclass prediction as a JSON number (its class value).
fn class_value(p: &maxmargin::structured_svm::Prediction) -> serde_json::Value {
    match p {
        maxmargin::structured_svm::Prediction::Class(v) => serde_json::json!(v),
        other => serde_json::json!(other.to_string()),
    }
}

/// `predict` on a multiclass model with `--scores`, `--json` or `--probability`: the label, then the scores
/// and the probabilities by class (named by a `#` header line in text).
fn multiclass_lines(
    model_path: &Path,
    data: &Path,
    (scores, json, probability): (bool, bool, bool),
) -> Result<Vec<String>> {
    let loaded = Loaded::load(model_path)?;
    let (model, cal) = (loaded.model(), loaded.calibrated());
    let data = read_to_predict(data, model_path, crate::load::ModelShape::structured(model))?;
    let preds = model.predict_multiclass(&data)?;
    let values = if scores {
        model.multiclass_scores(&data)?
    } else {
        Vec::new()
    };
    let probs = match (cal, probability) {
        (Some(c), true) => c.probabilities(&data)?,
        (None, true) => model.own_probabilities(&data)?,
        _ => Vec::new(),
    };
    let labels: Vec<(serde_json::Value, String)> = preds
        .iter()
        .map(|p| (class_value(p), p.to_string()))
        .collect();
    let (scores, probs) = (
        scores.then_some(&values[..]),
        probability.then_some(&probs[..]),
    );
    Ok(class_lines(&model.classes, &labels, scores, probs, json))
}

/// One line per row of a model that predicts a class: in text the label (as `text`), then the scores and
/// the probabilities asked for, named by a `# label score(c) ... p(c) ...` header; in JSON `{"label": L}`
/// with `"scores"` and `"probabilities"` by class.
pub(crate) fn class_lines(
    classes: &[f64],
    labels: &[(serde_json::Value, String)],
    scores: Option<&[Vec<f64>]>,
    probs: Option<&[Vec<f64>]>,
    json: bool,
) -> Vec<String> {
    let by_class = |v: &[f64]| -> serde_json::Value {
        classes
            .iter()
            .zip(v)
            .map(|(c, v)| (c.to_string(), serde_json::json!(v)))
            .collect::<serde_json::Map<String, serde_json::Value>>()
            .into()
    };
    let mut lines = Vec::with_capacity(labels.len() + 1);
    if !json && (scores.is_some() || probs.is_some()) {
        let mut names = vec!["# label".to_string()];
        if scores.is_some() {
            names.extend(classes.iter().map(|c| format!("score({c})")));
        }
        if probs.is_some() {
            names.extend(classes.iter().map(|c| format!("p({c})")));
        }
        lines.push(names.join(" "));
    }
    for (i, (value, text)) in labels.iter().enumerate() {
        let (s, p) = (scores.and_then(|v| v.get(i)), probs.and_then(|v| v.get(i)));
        if json {
            let mut o = serde_json::json!({ "label": value });
            if let Some(s) = s {
                o["scores"] = by_class(s);
            }
            if let Some(p) = p {
                o["probabilities"] = by_class(p);
            }
            lines.push(o.to_string());
        } else {
            let mut line = text.clone();
            for v in s.into_iter().flatten().chain(p.into_iter().flatten()) {
                line.push(' ');
                line.push_str(&v.to_string());
            }
            lines.push(line);
        }
    }
    lines
}

/// `predict --scores` on a multilabel model: the label set, then one decision value per label (a label is on
/// when its value is positive), named by a `#` header line in text; in JSON `scores` maps each label to it.
fn multilabel_lines(model_path: &Path, data: &Path, json: bool) -> Result<Vec<String>> {
    let model = maxmargin::structured_svm::StructuredModel::load(model_path)?;
    let data = crate::load::read_multilabel_for(data, &model)?;
    let preds = model.predict_multilabel(&data)?;
    let values = model.multilabel_scores(&data)?;
    let mut lines = Vec::with_capacity(preds.len() + 1);
    if !json {
        let names = (0..model.n_labels).map(|l| format!("score({l})"));
        lines.push(
            std::iter::once("# labels".to_string())
                .chain(names)
                .collect::<Vec<_>>()
                .join(" "),
        );
    }
    for (p, v) in preds.iter().zip(&values) {
        lines.push(if json {
            let scores: serde_json::Map<String, serde_json::Value> = v
                .iter()
                .enumerate()
                .map(|(l, s)| (l.to_string(), serde_json::json!(s)))
                .collect();
            serde_json::json!({ "label": p.to_string(), "scores": scores }).to_string()
        } else {
            std::iter::once(p.to_string())
                .chain(v.iter().map(f64::to_string))
                .collect::<Vec<_>>()
                .join(" ")
        });
    }
    Ok(lines)
}

/// `predict`: one line per row, the predicted label, with `--scores` the decision values beside it, with
/// `--json` as JSON objects.
pub(crate) fn predict(
    model_path: &Path,
    data: &Path,
    output: Option<&Path>,
    (scores, json, probability, inference): (
        bool,
        bool,
        bool,
        Option<maxmargin::structured::Inference>,
    ),
) -> Result<()> {
    let kind = maxmargin::io::model_file::read_header(model_path)?.kind;
    let binary = kind == maxmargin::linear::MODEL_KIND || kind == maxmargin::linear::DECISION_KIND;
    // One-vs-rest logistic regression has probabilities of its own, as a calibrated model does.
    let calibrated_multi = kind == maxmargin::structured_svm::MULTICLASS_DECISION_KIND
        || (probability
            && kind == "multiclass"
            && maxmargin::structured_svm::StructuredModel::load(model_path)?.is_probabilistic());
    if probability && !binary && !calibrated_multi {
        bail!(
            "--probability applies to calibrated binary and multiclass models; {} is a {kind} model{}",
            model_path.display(),
            if kind == "multiclass" {
                " not calibrated: a margin is not a confidence; fit one on development rows with \
                 `maxmargin calibrate MODEL DEV_DATA -o MODEL2`"
            } else {
                ""
            }
        );
    }
    let tagger = maxmargin::tagger::is_tagger_kind(&kind);
    if tagger && (scores || json) {
        bail!(
            "--scores and --json apply to binary and multiclass models; {} is a tagger: predict writes CoNLL \
             columns with the predicted tag last",
            model_path.display()
        );
    }
    let graph = kind == maxmargin::structured_svm::GRAPH_KIND;
    if graph && scores {
        bail!(
            "--scores applies to binary, multiclass and multilabel models; {} is a graph model: predict writes a line of \
             node labels per graph",
            model_path.display()
        );
    }
    let latent = kind == maxmargin::structured_svm::LATENT_KIND;
    let lines: Vec<String> = if latent {
        crate::latent::predict(model_path, data, scores, json)?
    } else if tagger {
        crate::tagger::predict(model_path, data)?
    } else if graph {
        crate::graph::predict(model_path, data, json, inference)?
    } else if binary {
        let model = maxmargin::linear::DecisionModel::load(model_path)?;
        let data = read_to_predict(
            data,
            model_path,
            crate::load::ModelShape::binary(&model.model),
        )?;
        let values = model.model.scores(&data)?;
        let labels: Vec<f64> = values.iter().map(|&f| model.label_at(f)).collect();
        let probs = if probability {
            model
                .probabilities(&data.x)
                .with_context(|| format!("{}", model_path.display()))?
        } else {
            Vec::new()
        };
        labels
            .iter()
            .zip(&values)
            .enumerate()
            .map(|(i, (l, v))| {
                if json {
                    let mut o = serde_json::json!({ "label": l });
                    if scores {
                        o["score"] = serde_json::json!(v);
                    }
                    if probability {
                        o["probability"] = serde_json::json!(probs[i]);
                    }
                    o.to_string()
                } else {
                    let mut line = maxmargin::io::libsvm::format_number(*l);
                    if scores {
                        line.push(' ');
                        line.push_str(&maxmargin::io::libsvm::format_number(*v));
                    }
                    if probability {
                        line.push_str(&format!(" {}", probs[i]));
                    }
                    line
                }
            })
            .collect()
    } else if (kind == "multiclass" || calibrated_multi) && (scores || json || probability) {
        multiclass_lines(model_path, data, (scores, json, probability))?
    } else if kind == "multilabel" && scores {
        multilabel_lines(model_path, data, json)?
    } else if scores {
        bail!(
            "--scores applies to binary, multiclass and multilabel models; {} is a {kind} model",
            model_path.display()
        );
    } else if json {
        structured::predict(model_path, data)?
            .iter()
            .map(|l| serde_json::json!({ "label": l }).to_string())
            .collect()
    } else {
        structured::predict(model_path, data)?
    };
    let write = |w: &mut dyn Write| -> std::io::Result<()> {
        for p in &lines {
            writeln!(w, "{p}")?;
        }
        Ok(())
    };
    // `-o -` is standard output, as for most commands that take an output file.
    match output.filter(|p| *p != Path::new("-")) {
        Some(path) => write_atomic(path, write)?,
        None => {
            let stdout = std::io::stdout();
            let mut lock = std::io::BufWriter::new(stdout.lock());
            write(&mut lock)
                .and_then(|()| lock.flush())
                .or_else(quiet_on_closed_pipe)
                .context("writing predictions to standard output")?;
        }
    }
    Ok(())
}
