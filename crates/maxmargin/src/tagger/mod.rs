//! Sequence labelling on CoNLL column files: a chain structural SVM over template features, with the
//! feature dictionary saved beside the weights so that a trained tagger tags new text.
//!
//! ```
//! # fn main() -> Result<(), maxmargin::Error> {
//! use maxmargin::io::conll::{Sentence, Template};
//! use maxmargin::structured_svm::{StructuredSvmParams, Task};
//! let train = vec![
//!     Sentence::from_rows(&[vec!["The", "DT"], vec!["dog", "NN"], vec!["ran", "VBD"]], &["B-NP", "I-NP", "B-VP"]),
//!     Sentence::from_rows(&[vec!["A", "DT"], vec!["cat", "NN"], vec!["sat", "VBD"]], &["B-NP", "I-NP", "B-VP"]),
//! ];
//! let svm = StructuredSvmParams::new(Task::Chain).lambda(0.1).max_passes(50.0).check()?;
//! let fit = maxmargin::tagger::fit(&svm, &train, Template::chunking(), "inline".as_ref(), &mut ())?;
//! let tags = fit.model.tag(&train)?;
//! assert_eq!(tags[0], vec!["B-NP", "I-NP", "B-VP"]);
//! let e = fit.model.evaluate(&train, None)?;
//! assert_eq!(e.chunks.map(|c| c.chunk_f1), Some(1.0));
//! # Ok(()) }
//! ```

use crate::Error;
use crate::structured_svm::{ChainShape, Prediction, StructuredModel, StructuredSvm, Task};
use maxmargin_core::vector::SparseVec;
use maxmargin_io::IoError;
use maxmargin_io::conll::{self, FeatureMap, Sentence, Template};
use maxmargin_io::model_file;
use maxmargin_io::svm_hmm::SequenceData;
use maxmargin_optim::{Observer, OptimError};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

mod dictionary;
mod latent;

pub use dictionary::{Dictionary, dictionary, dictionary_with_rows};
pub use latent::{LATENT_TAGGER_KIND, LatentTagger, LatentTaggerFitReport, fit_latent};

/// Whether a model file's kind is a tagger's (plain or with latent states).
pub fn is_tagger_kind(kind: &str) -> bool {
    kind == TAGGER_KIND || kind == LATENT_TAGGER_KIND
}

/// The shape of the chain a tagger's features make: its bigram features, and second-order transitions
/// when the template has a `T` line.
fn chain_shape(features: &FeatureMap) -> ChainShape {
    ChainShape::edges(features.n_edge_features())
        .with_second_order(features.template().second_order())
}

/// The kind of a tagger's model file.
pub const TAGGER_KIND: &str = "chain-conll";

/// A chain model with the templates and dictionaries that turn sentences into its inputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tagger {
    /// The chain model (tag `k` of the dictionary is the model's tag `k + 1`).
    pub model: StructuredModel,
    /// Templates, features and tags.
    pub features: FeatureMap,
}

/// A trained tagger with its training trace.
pub type TaggerFitReport = crate::linear::FitReport<Tagger>;

/// A tagger's measures on labelled sentences: tokens, and chunks by conlleval's definition when the tags are
/// chunk tags.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TaggerEvaluation {
    /// Sentences.
    pub sentences: usize,
    /// Tokens.
    pub tokens: usize,
    /// The fraction of tokens tagged right.
    pub token_accuracy: f64,
    /// Chunk scores, when every tag of the data is a chunk tag ([`conll::is_chunk_tag`]: `O`, `B-X`, `I-X`,
    /// `E-X`, `S-X`); `None` for other tags (parts of speech), whose measure is the token accuracy. In JSON
    /// its keys sit beside the others (`chunk_f1`, `per_type`, ...), absent when it is `None`.
    #[serde(flatten)]
    pub chunks: Option<ChunkEvaluation>,
    /// Tokens whose tag training never saw (each counts as an error).
    pub unknown_tags: usize,
    /// The λ of the objective.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lambda: Option<f64>,
    /// `λ/2‖w‖² + (1/n)Σ H_i(w)` over the sentences (only when every tag is known).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub objective: Option<f64>,
    /// Whether the model's training reached its optimum.
    pub converged: bool,
}

/// conlleval's chunk scores: over all chunks, and by chunk type.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ChunkEvaluation {
    /// Chunks found with the right span and type, over chunks found.
    pub chunk_precision: f64,
    /// Chunks found with the right span and type, over chunks in the data.
    pub chunk_recall: f64,
    /// Their harmonic mean.
    pub chunk_f1: f64,
    /// Chunks in the data.
    pub gold_chunks: usize,
    /// Chunks predicted.
    pub predicted_chunks: usize,
    /// Chunks right.
    pub correct_chunks: usize,
    /// The same by chunk type (`NP`, `PER`, ...), for every type in the data or the predictions.
    pub per_type: BTreeMap<String, TypeScore>,
}

/// One chunk type's scores (a row of conlleval's table).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct TypeScore {
    /// Chunks of the type found with the right span, over chunks of the type found.
    pub precision: f64,
    /// Chunks of the type found with the right span, over chunks of the type in the data.
    pub recall: f64,
    /// Their harmonic mean.
    pub f1: f64,
    /// Chunks of the type in the data.
    pub support: usize,
    /// Chunks of the type predicted.
    pub found: usize,
    /// Chunks of the type right.
    pub correct: usize,
}

impl From<conll::ChunkScore> for TypeScore {
    fn from(s: conll::ChunkScore) -> Self {
        Self {
            precision: s.precision,
            recall: s.recall,
            f1: s.f1,
            support: s.gold,
            found: s.predicted,
            correct: s.correct,
        }
    }
}

impl ChunkEvaluation {
    /// conlleval's scores of `predicted` tags against `gold` ones, sentence by sentence.
    pub fn score<S, T, G, P>(gold: &[G], predicted: &[P]) -> Self
    where
        S: AsRef<str>,
        T: AsRef<str>,
        G: AsRef<[S]>,
        P: AsRef<[T]>,
    {
        let all = conll::chunk_score(gold, predicted);
        Self {
            chunk_precision: all.precision,
            chunk_recall: all.recall,
            chunk_f1: all.f1,
            gold_chunks: all.gold,
            predicted_chunks: all.predicted,
            correct_chunks: all.correct,
            per_type: conll::chunk_score_by_type(gold, predicted)
                .into_iter()
                .map(|(kind, s)| (kind, s.into()))
                .collect(),
        }
    }
}

/// Trains a tagger: builds the dictionaries with `template` on `train` (read from `source`), then the chain
/// model with `svm` (whose task must be [`Task::Chain`]).
///
/// # Errors
/// A task other than chains, a template naming more input columns than the data has, no sentences, or the
/// solver's errors.
pub fn fit(
    svm: &StructuredSvm,
    train: &[Sentence],
    template: Template,
    source: &Path,
    observer: &mut (dyn Observer + Send),
) -> Result<TaggerFitReport, Error> {
    let features = dictionary_with_rows(train, template, 1, svm.params().threads)?;
    fit_with_map(svm, train, features, source, observer)
}

/// As [`fit`], with the dictionaries already built on `train` (by [`dictionary_with_rows`], or a
/// [`FeatureMap`] of [`FeatureMap::fit_with`]), for callers that look at them first (a warm start checks they
/// are the earlier tagger's).
///
/// # Errors
/// As [`fit`], or rows made on other sentences than `train`.
pub fn fit_with_map(
    svm: &StructuredSvm,
    train: &[Sentence],
    features: impl Into<Dictionary>,
    source: &Path,
    observer: &mut (dyn Observer + Send),
) -> Result<TaggerFitReport, Error> {
    let features = features.into();
    check_trainable(svm, train, features.features(), source)?;
    let (features, data) = features.training_data(svm, train, source)?;
    let report = svm.fit_chain_with_edges(&data, chain_shape(&features), observer)?;
    // The chain's one-tag note names tag numbers (1-based); the user wrote the tag's name.
    let one_tag = format!("every tag in {} is the same (1)", data.source.display());
    let warnings = (report.warnings.into_iter())
        .map(
            |w| match (w.strip_prefix(&one_tag), features.tag_names().first()) {
                (Some(rest), Some(name)) => {
                    format!(
                        "every tag in {} is the same ({name}){rest}",
                        data.source.display()
                    )
                }
                _ => w,
            },
        )
        .collect();
    Ok(TaggerFitReport {
        model: Tagger {
            model: report.model,
            features,
        },
        trace: report.trace,
        warnings,
    })
}

/// Refuses to train a tagger with other than a chain estimator, a template reading more columns than the
/// data has, or a `%v` cell that is not a number.
fn check_trainable(
    svm: &StructuredSvm,
    train: &[Sentence],
    features: &FeatureMap,
    source: &Path,
) -> Result<(), Error> {
    if svm.params().task != Task::Chain {
        return Err(OptimError::InvalidParam {
            name: "task",
            value: svm.params().task.kind().into(),
            reason: "a tagger is a chain model",
        }
        .into());
    }
    let inputs = train.iter().map(|s| s.columns.len()).min().unwrap_or(0);
    if features.template().columns() > inputs {
        return Err(IoError::Mismatch {
            path: source.to_path_buf(),
            message: format!(
                "the {} template reads {} input columns, the data has {inputs} (and the tag)",
                features.template().name(),
                features.template().columns()
            ),
        }
        .into());
    }
    check_values(features.template(), train, source)
}

/// The tags of predictions (1-based tag numbers) by their names in the dictionary.
fn tag_names(
    features: &FeatureMap,
    predictions: Vec<Prediction>,
) -> Result<Vec<Vec<String>>, Error> {
    let names = features.tag_names();
    predictions
        .into_iter()
        .map(|p| match p {
            Prediction::Tags(t) => Ok(t
                .iter()
                .map(|&k| {
                    names
                        .get((k as usize).wrapping_sub(1))
                        .cloned()
                        .unwrap_or_default()
                })
                .collect()),
            _ => Err(Error::Optim(OptimError::InvalidParam {
                name: "task",
                value: "not a chain".into(),
                reason: "a tagger is a chain model",
            })),
        })
        .collect()
}

/// Tags chain data by name.
type TagData<'a> = dyn Fn(&SequenceData) -> Result<Vec<Vec<String>>, Error> + 'a;

/// A tagger's measures on labelled `sentences` (read from `source`): `tag_data` tags chain data built by
/// `features`, `objective` gives the objective at `lambda` (asked only when every tag is known); `converged`
/// is the model's.
fn evaluate_with(
    features: &FeatureMap,
    (sentences, source): (&[Sentence], &Path),
    (converged, lambda): (bool, Option<f64>),
    tag_data: &TagData<'_>,
    objective: &dyn Fn(&SequenceData) -> Result<Option<f64>, Error>,
) -> Result<TaggerEvaluation, Error> {
    if sentences.is_empty() || sentences.iter().any(|s| s.tags.len() != s.len()) {
        return Err(OptimError::InvalidParam {
            name: "data",
            value: format!("{} sentences", sentences.len()),
            reason: "evaluation needs labelled sentences (the tag as the last column)",
        }
        .into());
    }
    check_values(features.template(), sentences, source)?;
    let unknown = sentences
        .iter()
        .flat_map(|s| &s.tags)
        .filter(|t| features.tag_id(t).is_none())
        .count();
    // One pass of feature building serves the predictions and the objective (an unknown tag stands as
    // tag 0 there, and the objective is only given when there is none).
    let data = sequences(features, sentences, None, source, |s| {
        s.tags
            .iter()
            .map(|t| features.tag_id(t).unwrap_or(0))
            .collect()
    });
    let predicted = tag_data(&data)?;
    let gold: Vec<&[String]> = sentences.iter().map(|s| s.tags.as_slice()).collect();
    let chunk_tags = gold
        .iter()
        .all(|g| g.iter().all(|t| conll::is_chunk_tag(t)));
    let tokens: usize = sentences.iter().map(Sentence::len).sum();
    let right: usize = gold
        .iter()
        .zip(&predicted)
        .map(|(g, p)| g.iter().zip(p).filter(|(a, b)| a == b).count())
        .sum();
    let objective = match lambda {
        Some(_) if unknown == 0 => objective(&data)?,
        _ => None,
    };
    Ok(TaggerEvaluation {
        sentences: sentences.len(),
        tokens,
        token_accuracy: right as f64 / tokens.max(1) as f64,
        chunks: chunk_tags.then(|| ChunkEvaluation::score(&gold, &predicted)),
        unknown_tags: unknown,
        lambda,
        objective,
        converged,
    })
}

/// Checks that every cell a `%v` template line reads (a real-valued feature) is a finite number, naming the
/// first that is not by its line of `source` (or by sentence and token when `source` is not a CoNLL file).
///
/// # Errors
/// [`IoError::Parse`] (or [`IoError::Mismatch`]) naming the cell.
pub fn check_values(
    template: &Template,
    sentences: &[Sentence],
    source: &Path,
) -> Result<(), Error> {
    template.check_values(sentences).map_err(|(s, t, c, cell)| {
        let message = format!(
            "{:?} is not a finite number; the template reads input column {c} as a value (%v)",
            cell.chars().take(40).collect::<String>()
        );
        match conll::token_line(source, s, t) {
            Some(line) => IoError::Parse {
                path: source.to_path_buf(),
                line,
                column: c + 1,
                field: "value",
                message,
            },
            None => IoError::Mismatch {
                path: source.to_path_buf(),
                message: format!("sentence {}, token {}: {message}", s + 1, t + 1),
            },
        }
        .into()
    })
}

/// The chain data of sentences: their `rows`, else features by the dictionary, and tags by `tags`
/// (0-based).
fn sequences(
    features: &FeatureMap,
    sentences: &[Sentence],
    rows: Option<Vec<Vec<SparseVec>>>,
    source: &Path,
    tags: impl Fn(&Sentence) -> Vec<u32>,
) -> SequenceData {
    SequenceData {
        // Sentence by sentence in parallel (on the caller's pool), collected in order.
        sequences: rows
            .unwrap_or_else(|| sentences.par_iter().map(|s| features.features(s)).collect()),
        labels: sentences.iter().map(tags).collect(),
        qids: (0..sentences.len() as u64).collect(),
        n_features: features.n_features(),
        n_labels: features.n_tags(),
        source: source.to_path_buf(),
    }
}

impl Tagger {
    /// The tags of every sentence, by name.
    ///
    /// # Errors
    /// A model inconsistent with its dictionary (not one this crate saved).
    pub fn tag(&self, sentences: &[Sentence]) -> Result<Vec<Vec<String>>, Error> {
        self.tag_from(sentences, Path::new("text"))
    }

    /// As [`Tagger::tag`], for sentences read from `source` (errors about a cell name its line there).
    ///
    /// # Errors
    /// As [`Tagger::tag`], and a `%v` cell that is not a number.
    pub fn tag_from(
        &self,
        sentences: &[Sentence],
        source: &Path,
    ) -> Result<Vec<Vec<String>>, Error> {
        check_values(self.features.template(), sentences, source)?;
        let data = sequences(&self.features, sentences, None, source, |s| {
            vec![0; s.len()]
        });
        self.tag_data(&data)
    }

    /// The tags, by name, of chain data built from sentences by this tagger's dictionary.
    fn tag_data(&self, data: &SequenceData) -> Result<Vec<Vec<String>>, Error> {
        tag_names(
            &self.features,
            self.model
                .predict_chain_with_edges(data, chain_shape(&self.features))?,
        )
    }

    /// Token accuracy, chunk precision, recall and F1 (conlleval's, overall and by type, when the tags are
    /// chunk tags) and, with `lambda`, the objective, on labelled sentences. A tag training never saw counts as an error, not a refusal.
    ///
    /// # Errors
    /// Sentences without tags, or none at all.
    pub fn evaluate(
        &self,
        sentences: &[Sentence],
        lambda: Option<f64>,
    ) -> Result<TaggerEvaluation, Error> {
        self.evaluate_from(sentences, lambda, Path::new("data"))
    }

    /// As [`Tagger::evaluate`], for sentences read from `source` (errors about a cell name its line there).
    ///
    /// # Errors
    /// As [`Tagger::evaluate`], and a `%v` cell that is not a number.
    pub fn evaluate_from(
        &self,
        sentences: &[Sentence],
        lambda: Option<f64>,
        source: &Path,
    ) -> Result<TaggerEvaluation, Error> {
        let objective = |data: &SequenceData| -> Result<Option<f64>, Error> {
            Ok(self
                .model
                .evaluate_chain_with_edges(data, chain_shape(&self.features), lambda)?
                .objective)
        };
        let run = (self.model.training.converged, lambda);
        evaluate_with(
            &self.features,
            (sentences, source),
            run,
            &|data| self.tag_data(data),
            &objective,
        )
    }

    /// Saves the tagger atomically (JSON for `.json` paths).
    ///
    /// # Errors
    /// [`Error::Io`] naming the file.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        Ok(model_file::save(path, TAGGER_KIND, self)?)
    }

    /// Loads a tagger, checking that its model and dictionaries agree.
    ///
    /// # Errors
    /// [`Error::Io`] for a missing, foreign, corrupt or inconsistent file.
    pub fn load(path: &Path) -> Result<Self, Error> {
        let version = model_file::read_header(path)?.format_version;
        let tagger: Self = if version < 4 {
            let (_, old): (_, crate::compat::TaggerV3) = model_file::load(path, TAGGER_KIND)?;
            old.into()
        } else if version < 5 {
            let (_, old): (_, crate::compat::TaggerV4) = model_file::load(path, TAGGER_KIND)?;
            old.into()
        } else if version < 6 {
            let (_, old): (_, crate::compat::TaggerV5) = model_file::load(path, TAGGER_KIND)?;
            old.into()
        } else if version < 7 {
            let (_, old): (_, crate::compat::TaggerV6) = model_file::load(path, TAGGER_KIND)?;
            old.into()
        } else {
            model_file::load(path, TAGGER_KIND)?.1
        };
        tagger.validated(path)
    }

    /// A tagger decoded by other means than [`Tagger::load`] (a Python pickle) as `load` makes it: its model
    /// and dictionaries checked against each other (errors name `source`), its chain's shape set from its
    /// template (which the file does not store).
    ///
    /// # Errors
    /// [`Error::Io`] ([`IoError::BadModel`]) naming `source` and what disagrees.
    pub fn validated(mut self, source: &Path) -> Result<Self, Error> {
        let bad = |message: String| -> Error {
            IoError::BadModel {
                path: source.to_path_buf(),
                message,
            }
            .into()
        };
        if self.model.task != Task::Chain {
            return Err(bad(format!(
                "a tagger holds a {} model",
                self.model.task.kind()
            )));
        }
        let f = &self.features;
        self.model
            .check_consistent_with_edges(source, chain_shape(f))?;
        if self.model.n_features != f.n_features() || self.model.n_labels != f.n_tags().max(1) {
            return Err(bad(format!(
                "the chain model has {} features and {} tags, its dictionary {} and {}",
                self.model.n_features,
                self.model.n_labels,
                f.n_features(),
                f.n_tags()
            )));
        }
        let shape = chain_shape(&self.features);
        self.model.shape = shape;
        Ok(self)
    }
}
