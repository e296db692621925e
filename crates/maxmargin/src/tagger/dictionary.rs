//! A tagger's dictionaries, built on its training sentences on every core, and (when asked) those sentences'
//! feature rows made in the same pass.

use super::{StructuredSvm, sequences};
use crate::Error;
use maxmargin_core::vector::SparseVec;
use maxmargin_io::conll::{FeatureMap, Sentence, Template};
use maxmargin_io::svm_hmm::SequenceData;
use std::path::Path;

/// Dictionaries built on training sentences, and the rows of those sentences when they were made with them
/// ([`dictionary_with_rows`]). What [`super::fit_with_map`] and [`super::fit_latent`] train on; a
/// [`FeatureMap`] converts into one without rows (they are made from it then).
#[derive(Debug, Clone, PartialEq)]
pub struct Dictionary {
    features: FeatureMap,
    /// The rows, with the digest of the sentences' cells they were made on.
    rows: Option<(Vec<Vec<SparseVec>>, u64)>,
}

/// A digest of the sentences' cells, in order (what a row depends on), each cell length-prefixed.
fn cells_digest(sentences: &[Sentence]) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for s in sentences {
        h.update(&(s.columns.len() as u64).to_le_bytes());
        for cell in s.columns.iter().flatten() {
            h.update(&(cell.len() as u64).to_le_bytes());
            h.update(cell.as_bytes());
        }
    }
    h.digest()
}

impl From<FeatureMap> for Dictionary {
    fn from(features: FeatureMap) -> Self {
        Self {
            features,
            rows: None,
        }
    }
}

impl Dictionary {
    /// Templates, features and tags.
    pub fn features(&self) -> &FeatureMap {
        &self.features
    }

    /// The templates, features and tags, without the rows.
    pub fn into_features(self) -> FeatureMap {
        self.features
    }

    /// The chain data of the training sentences `train` (every training tag is in the dictionary built on
    /// them): the rows made with the dictionary, else made now on the estimator's threads.
    ///
    /// # Errors
    /// Rows made on other sentences than `train` (another digest of their cells; [`Error::Optim`]: a
    /// caller's mistake, named).
    pub(super) fn training_data(
        self,
        svm: &StructuredSvm,
        train: &[Sentence],
        source: &Path,
    ) -> Result<(FeatureMap, SequenceData), Error> {
        let Self { features, rows } = self;
        let rows = match rows {
            Some((rows, digest)) if digest != cells_digest(train) => {
                return Err(crate::error::refuse(
                    "dictionary",
                    format!("rows of {} sentences", rows.len()),
                    "were made on other sentences than the training ones",
                ));
            }
            rows => rows.map(|(rows, _)| rows),
        };
        let data = crate::parallel::with_threads(svm.params().threads, || {
            Ok(sequences(&features, train, rows, source, |tags| {
                features.tags(tags).unwrap_or_default()
            }))
        })?;
        Ok((features, data))
    }
}

/// [`FeatureMap::fit_with_min_count`] on `threads` threads (`None`: all cores): the dictionary is built by
/// chunks of sentences in parallel and does not depend on the thread count.
///
/// # Errors
/// [`Error::Optim`] for a thread count of 0 or past [`crate::max_threads`], or a thread pool that cannot
/// start.
pub fn dictionary(
    train: &[Sentence],
    template: Template,
    min_count: usize,
    threads: Option<usize>,
) -> Result<FeatureMap, Error> {
    on_threads(threads, || {
        FeatureMap::fit_with_min_count(train, template, min_count)
    })
}

/// `f` on a checked count of `threads` (`None`: all cores).
fn on_threads<T: Send>(threads: Option<usize>, f: impl FnOnce() -> T + Send) -> Result<T, Error> {
    crate::check_threads(threads)?;
    crate::parallel::with_threads(threads, || Ok(f()))
}

/// As [`dictionary`], with the training sentences' rows made in the same pass
/// ([`FeatureMap::fit_with_rows`]: the templates are expanded once, not once more when training starts).
///
/// # Errors
/// As [`dictionary`].
///
/// # Examples
/// ```
/// # fn main() -> Result<(), maxmargin::Error> {
/// use maxmargin::io::conll::{Sentence, Template};
/// use maxmargin::structured_svm::{StructuredSvmParams, Task};
/// use maxmargin::tagger;
/// let s = |w: [&str; 2], t: [&str; 2]| Sentence::from_rows(&[vec![w[0], "DT"], vec![w[1], "NN"]], &t);
/// let train = vec![s(["The", "dog"], ["B-NP", "I-NP"]), s(["ran", "home"], ["B-VP", "B-NP"])];
/// let svm = StructuredSvmParams::new(Task::Chain).lambda(0.1).max_passes(20.0).check()?;
/// let with_rows = tagger::dictionary_with_rows(&train, Template::chunking(), 1, None)?;
/// let map = tagger::dictionary(&train, Template::chunking(), 1, None)?;
/// assert_eq!(with_rows.features(), &map);
/// // Trained on the rows made with the dictionary, or on rows made from it afterwards: the same weights.
/// let a = tagger::fit_with_map(&svm, &train, with_rows.clone(), "inline".as_ref(), &mut ())?;
/// let b = tagger::fit_with_map(&svm, &train, map, "inline".as_ref(), &mut ())?;
/// assert_eq!(a.model.model.w, b.model.model.w);
/// // Rows made on other sentences are refused, of other lengths or not.
/// assert!(tagger::fit_with_map(&svm, &train[..1], with_rows.clone(), "inline".as_ref(), &mut ()).is_err());
/// let swapped = vec![train[1].clone(), train[0].clone()];
/// assert!(tagger::fit_with_map(&svm, &swapped, with_rows, "inline".as_ref(), &mut ()).is_err());
/// # Ok(()) }
/// ```
pub fn dictionary_with_rows(
    train: &[Sentence],
    template: Template,
    min_count: usize,
    threads: Option<usize>,
) -> Result<Dictionary, Error> {
    let (features, rows) = on_threads(threads, || {
        FeatureMap::fit_with_rows(train, template, min_count)
    })?;
    Ok(Dictionary {
        features,
        rows: Some((rows, cells_digest(train))),
    })
}
