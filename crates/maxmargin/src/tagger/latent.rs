//! Taggers whose tags each have latent states (`train --format conll --latent-states K`): a latent chain
//! model ([`LatentChainModel`]) over the tagger's template features, trained by CCCP rounds.

use super::*;
use crate::structured_svm::{ChainShape, LatentChainModel};

/// The kind of a latent tagger's model file.
pub const LATENT_TAGGER_KIND: &str = "chain-conll-latent";

/// A latent chain model with the templates and dictionaries that turn sentences into its inputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatentTagger {
    /// The latent chain model (tag `k` of the dictionary is the model's tag `k + 1`).
    pub model: LatentChainModel,
    /// Templates, features and tags.
    pub features: FeatureMap,
}

/// A trained latent tagger with the trace of its kept round's convex solve.
pub type LatentTaggerFitReport = crate::linear::FitReport<LatentTagger>;

/// Trains a tagger whose tags each have `states` latent states, on dictionaries built on `train` (read from
/// `source`), with `svm` ([`StructuredSvm::fit_latent_chain`]: its rounds, checkpoints and tag weights).
///
/// # Errors
/// As [`fit_with_map`]; a template with bigram (`B` with macros) or `T` lines (observation-dependent or
/// second-order transitions with latent states are not built).
pub fn fit_latent(
    svm: &StructuredSvm,
    train: &[Sentence],
    features: impl Into<Dictionary>,
    states: usize,
    source: &Path,
    observer: &mut (dyn Observer + Send),
) -> Result<LatentTaggerFitReport, Error> {
    let features = features.into();
    check_trainable(svm, train, features.features(), source)?;
    if chain_shape(features.features()) != ChainShape::default() {
        return Err(crate::error::refuse(
            "latent states",
            format!("the template {}", features.features().template().name()),
            "apply to templates of U lines and a plain B line only (not to bigram lines with macros, nor \
             to T lines: second-order transitions)",
        ));
    }
    let (features, data) = features.training_data(svm, train, source)?;
    let report = svm.fit_latent_chain(&data, states, observer)?;
    Ok(LatentTaggerFitReport {
        model: LatentTagger {
            model: report.model,
            features,
        },
        trace: report.trace,
        warnings: report.warnings,
    })
}

impl LatentTagger {
    /// The tags of every sentence, by name (read from `source`: errors about a cell name its line there).
    ///
    /// # Errors
    /// A `%v` cell that is not a number.
    pub fn tag_from(
        &self,
        sentences: &[Sentence],
        source: &Path,
    ) -> Result<Vec<Vec<String>>, Error> {
        check_values(self.features.template(), sentences, source)?;
        let data = sequences(&self.features, sentences, None, source, |s| {
            vec![0; s.len()]
        });
        tag_names(&self.features, self.model.predict(&data)?)
    }

    /// As [`Tagger::evaluate_from`]: token accuracy, chunk scores for chunk tags and, with `lambda`, the
    /// latent objective.
    ///
    /// # Errors
    /// Sentences without tags, or none at all; a `%v` cell that is not a number.
    pub fn evaluate_from(
        &self,
        sentences: &[Sentence],
        lambda: Option<f64>,
        source: &Path,
    ) -> Result<TaggerEvaluation, Error> {
        let objective = |data: &SequenceData| -> Result<Option<f64>, Error> {
            Ok(self.model.evaluate(data, lambda)?.objective)
        };
        let tag = |data: &SequenceData| tag_names(&self.features, self.model.predict(data)?);
        // As the svm_hmm latent chain's evaluation says it: the kept round's convex solve.
        let converged = self.model.model.training.converged;
        evaluate_with(
            &self.features,
            (sentences, source),
            (converged, lambda),
            &tag,
            &objective,
        )
    }

    /// Saves the tagger atomically (JSON for `.json` paths).
    ///
    /// # Errors
    /// [`Error::Io`] naming the file.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        self.check(path)?;
        Ok(model_file::save(path, LATENT_TAGGER_KIND, self)?)
    }

    /// Loads a latent tagger, checking that its model and dictionaries agree.
    ///
    /// # Errors
    /// [`Error::Io`] for a missing, foreign, corrupt or inconsistent file.
    pub fn load(path: &Path) -> Result<Self, Error> {
        let (_, tagger): (_, Self) = model_file::load(path, LATENT_TAGGER_KIND)?;
        tagger.check(path)?;
        Ok(tagger)
    }

    fn check(&self, path: &Path) -> Result<(), Error> {
        self.model.check(path)?;
        let (m, f) = (&self.model, &self.features);
        if m.model.n_features != f.n_features()
            || m.tags != f.n_tags().max(1)
            || chain_shape(f) != ChainShape::default()
        {
            return Err(IoError::BadModel {
                path: path.to_path_buf(),
                message: format!(
                    "the latent chain model has {} features and {} tags, its dictionary {} and {}{}",
                    m.model.n_features,
                    m.tags,
                    f.n_features(),
                    f.n_tags(),
                    if chain_shape(f) == ChainShape::default() {
                        ""
                    } else {
                        " with bigram or T template lines"
                    }
                ),
            }
            .into());
        }
        Ok(())
    }
}
