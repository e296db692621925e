//! The CoNLL tagger on Python lists of sentences: a chain model over template features (the facade's
//! `tagger`), whose file is the one `maxmargin train --task chain --format conll` writes.

use super::*;
use maxmargin::io::conll::{Sentence, Template};
use maxmargin::tagger::{self, Tagger};
use std::path::Path;

/// A trained tagger: tags sentences, evaluates them as conlleval does, saves the command's tagger file.
#[pyclass(module = "maxmargin._core", name = "TaggerModel", frozen)]
pub(crate) struct PyTagger {
    tagger: Tagger,
}

/// Sentences as the facade reads them: each token a list of its input columns (the word first), with the
/// tags when given (one per token).
fn sentences(
    rows: Vec<Vec<Vec<String>>>,
    tags: Option<Vec<Vec<String>>>,
) -> PyResult<Vec<Sentence>> {
    if let Some(t) = &tags
        && t.len() != rows.len()
    {
        return Err(value_error(format!(
            "{} tag sequences for {} sentences",
            t.len(),
            rows.len()
        )));
    }
    let no_tags: Vec<String> = Vec::new();
    rows.iter()
        .enumerate()
        .map(|(i, sentence)| {
            if sentence.is_empty() {
                return Err(value_error(format!("sentence {i} is empty")));
            }
            let width = sentence[0].len();
            if let Some((j, _)) = sentence
                .iter()
                .enumerate()
                .find(|(_, token)| token.len() != width || token.is_empty())
            {
                return Err(value_error(format!(
                    "sentence {i}, token {j}: {} columns where the sentence's first token has {width}",
                    sentence[j].len()
                )));
            }
            let these = match &tags {
                Some(t) if t[i].len() != sentence.len() => {
                    return Err(value_error(format!(
                        "sentence {i}: {} tags for {} tokens",
                        t[i].len(),
                        sentence.len()
                    )));
                }
                Some(t) => &t[i],
                None => &no_tags,
            };
            Ok(Sentence::from_rows(sentence, these))
        })
        .collect()
}

/// The templates `template` names: `chunking`, `ner`, a template file, or a template's text.
fn template(name: &str, train: &[Sentence]) -> PyResult<Template> {
    let inputs = train.iter().map(|s| s.columns.len()).min().unwrap_or(0);
    match name {
        "chunking" => {
            if inputs < 2 {
                return Err(value_error(
                    "template='chunking' reads two columns per token (the word and its POS tag): give \
                     tokens as (word, POS) pairs, or template='ner'",
                ));
            }
            Ok(Template::chunking())
        }
        "ner" => Ok(Template::ner(inputs)),
        text if !Path::new(text).exists() && (text.contains('\n') || text.contains('%')) => {
            Template::parse("inline", text).map_err(|(line, column, message)| {
                value_error(format!("template line {line}, column {column}: {message}"))
            })
        }
        file => {
            let path = Path::new(file);
            if !path.exists() {
                return Err(value_error(format!(
                    "template={file:?}: not chunking, ner, an existing template file or a template's text"
                )));
            }
            Template::read(path).map_err(value_error)
        }
    }
}

#[pymethods]
impl PyTagger {
    /// The tags of every sentence (tokens as lists of columns).
    fn tag(&self, py: Python<'_>, rows: Vec<Vec<Vec<String>>>) -> PyResult<Vec<Vec<String>>> {
        let sentences = sentences(rows, None)?;
        py.detach(|| self.tagger.tag(&sentences))
            .map_err(value_error)
    }

    /// The token accuracy and, when the tags are chunk tags, conlleval's chunk precision, recall and F1
    /// (overall and `per_type`) on labelled sentences.
    fn evaluate<'py>(
        &self,
        py: Python<'py>,
        rows: Vec<Vec<Vec<String>>>,
        tags: Vec<Vec<String>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let sentences = sentences(rows, Some(tags))?;
        let e = py
            .detach(|| self.tagger.evaluate(&sentences, None))
            .map_err(value_error)?;
        dict(py, &e)
    }

    /// The tags the tagger knows, in its order.
    #[getter]
    fn tags(&self) -> Vec<String> {
        self.tagger.features.tag_names().to_vec()
    }

    /// The columns per token the tagger was trained on (its templates read them).
    #[getter]
    fn n_columns(&self) -> usize {
        self.tagger.features.inputs()
    }
}

persisted!(PyTagger { tagger: Tagger }, "tagger");

/// Trains a tagger on sentences (tokens as lists of columns, the word first) and their tags, with the
/// templates `template`, by the settings of `learning` ([`Learning`]; its `c` `None`: the command's default λ); features
/// seen fewer than `min_count` times dropped; `class_weight` a tag's mistakes' cost by tag name. Returns the
/// tagger and the run's certificate.
#[pyfunction]
#[pyo3(signature = (rows, tags, template, learning, *, min_count=1, class_weight=None))]
pub(crate) fn fit_tagger<'py>(
    py: Python<'py>,
    rows: Vec<Vec<Vec<String>>>,
    tags: Vec<Vec<String>>,
    template: &str,
    learning: Learning,
    min_count: usize,
    class_weight: Option<std::collections::HashMap<String, f64>>,
) -> PyResult<(PyTagger, Bound<'py, PyDict>)> {
    let train = sentences(rows, Some(tags))?;
    if train.is_empty() {
        return Err(value_error("no sentences"));
    }
    let template = self::template(template, &train)?;
    // The names and the settings are checked before the dictionary is built (minutes on a large corpus).
    let class_weight = class_weight.unwrap_or_default();
    let seen: std::collections::HashSet<&str> = train
        .iter()
        .flat_map(|s| s.tags.iter().map(String::as_str))
        .collect();
    if let Some(tag) = class_weight.keys().find(|t| !seen.contains(t.as_str())) {
        return Err(value_error(format!(
            "class_weight names the tag {tag:?}, which the training tags do not have"
        )));
    }
    learning.params(Task::Chain)?.check().map_err(value_error)?;
    let features = tagger::dictionary_with_rows(&train, template, min_count, learning.n_jobs)
        .map_err(value_error)?;
    // Weights by tag number (1-based, as the chain model numbers its tags), in tag order.
    let mut weights = Vec::new();
    for (tag, weight) in class_weight {
        let Some(id) = features.features().tag_id(&tag) else {
            return Err(value_error(format!(
                "class_weight names the tag {tag:?}, which the training tags do not have"
            )));
        };
        weights.push((f64::from(id) + 1.0, weight));
    }
    weights.sort_by(|a, b| a.0.total_cmp(&b.0));
    let svm = learning
        .params(Task::Chain)?
        .class_weights(weights)
        .check()
        .map_err(value_error)?;
    let (report, interrupted) = interruptible(py, learning.verbose, |watch| {
        tagger::fit_with_map(&svm, &train, features, Path::new("<sentences>"), watch)
    });
    let report = kept(report, interrupted)?;
    let fitted = Fitted::of_structured(&report.model.model, report.warnings);
    Ok((
        PyTagger {
            tagger: report.model,
        },
        fitted.report(py)?,
    ))
}
