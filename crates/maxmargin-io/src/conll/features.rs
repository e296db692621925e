//! The feature and tag dictionaries of a tagger, built on its training sentences and saved with its model.

use super::{Sentence, Template};
use foldhash::fast::RandomState;
use indexmap::IndexSet;
use maxmargin_core::vector::SparseVec;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Strings to ids. foldhash (hashbrown's default, randomly seeded, so crafted strings cannot be made to
/// collide in advance) rather than the standard SipHash: hashing feature strings was 4% of a one-thread
/// CoNLL-2000 run. The ids come from the order of first appearance, not from the hasher or its seed.
type Ids = std::collections::HashMap<String, u32, RandomState>;
/// A chunk's features in order of first appearance.
type FirstSeen = IndexSet<String, RandomState>;

/// Sentences per chunk of the parallel dictionary build (a chunk's features are hashed once more when the
/// chunks are merged, so chunks are large).
const DICTIONARY_CHUNK: usize = 512;

/// Gives each of `found` not yet in `ids` the next id, in order.
fn intern(names: &mut Vec<String>, ids: &mut Ids, found: FirstSeen) {
    for f in found {
        if let std::collections::hash_map::Entry::Vacant(e) = ids.entry(f) {
            names.push(e.key().clone());
            e.insert(names.len() as u32 - 1);
        }
    }
}

/// Feature and tag dictionaries built on a training set, with the templates that made them.
///
/// Unigram features (from `U` templates) have indices `0..n_features()`; bigram features (from `B`
/// templates with macros, observation-dependent transitions) follow them, at
/// `n_features()..n_features() + n_edge_features()`, and fire from a sentence's second token on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Stored", into = "Stored")]
pub struct FeatureMap {
    template: Template,
    inputs: usize,
    names: Vec<String>,
    features: Ids,
    edge_names: Vec<String>,
    edge_features: Ids,
    tags: Vec<String>,
    tag_ids: Ids,
}

/// What a model file keeps: the template text, the feature strings and the tags in index order. The
/// unigram features come first, then the bigram ones (their strings start with `B`, the unigram ones with
/// `U`, as the template lines that make them).
#[derive(Serialize, Deserialize)]
struct Stored {
    template_name: String,
    template: String,
    inputs: usize,
    features: Vec<String>,
    tags: Vec<String>,
}

impl From<FeatureMap> for Stored {
    fn from(m: FeatureMap) -> Self {
        Self {
            template_name: m.template.name().to_string(),
            template: m.template.text().to_string(),
            inputs: m.inputs,
            features: m.names.into_iter().chain(m.edge_names).collect(),
            tags: m.tags,
        }
    }
}

impl TryFrom<Stored> for FeatureMap {
    type Error = String;

    fn try_from(s: Stored) -> Result<Self, String> {
        let template = Template::parse(&s.template_name, &s.template)
            .map_err(|(line, col, m)| format!("stored template, line {line}:{col}: {m}"))?;
        let index = |names: &[String], what: &str| -> Result<Ids, String> {
            let ids: Ids = names
                .iter()
                .enumerate()
                .map(|(i, n)| (n.clone(), i as u32))
                .collect();
            if ids.len() == names.len() && names.len() <= u32::MAX as usize {
                Ok(ids)
            } else {
                Err(format!("stored {what} repeat a name"))
            }
        };
        if template.columns() > s.inputs {
            return Err(format!(
                "the stored template needs {} input columns, the tagger has {}",
                template.columns(),
                s.inputs
            ));
        }
        let (edge_names, names): (Vec<String>, Vec<String>) =
            s.features.into_iter().partition(|f| f.starts_with('B'));
        if !edge_names.is_empty() && template.edge_len() == 0 {
            return Err(format!(
                "{} stored bigram features, and the stored template has no bigram (B) line with macros",
                edge_names.len()
            ));
        }
        Ok(Self {
            features: index(&names, "features")?,
            edge_features: index(&edge_names, "bigram features")?,
            tag_ids: index(&s.tags, "tags")?,
            template,
            inputs: s.inputs,
            names,
            edge_names,
            tags: s.tags,
        })
    }
}

impl FeatureMap {
    /// Builds the dictionaries from the training sentences with the [`Template::chunking`] templates when
    /// every sentence has at least two input columns, else [`Template::ner`].
    pub fn fit(train: &[Sentence]) -> Self {
        let inputs = train.iter().map(|s| s.columns.len()).min().unwrap_or(0);
        let template = if inputs >= 2 {
            Template::chunking()
        } else {
            Template::ner(inputs)
        };
        Self::fit_with(train, template)
    }

    /// Builds the dictionaries from the training sentences with the given templates (indices in order of
    /// first appearance). A template naming a column a sentence lacks yields no feature there; use
    /// [`Template::columns`] to refuse such data first.
    pub fn fit_with(train: &[Sentence], template: Template) -> Self {
        let inputs = train
            .iter()
            .map(|s| s.columns.len())
            .min()
            .unwrap_or(0)
            .max(template.columns());
        let mut map = Self {
            template,
            inputs,
            names: Vec::new(),
            features: Ids::default(),
            edge_names: Vec::new(),
            edge_features: Ids::default(),
            tags: Vec::new(),
            tag_ids: Ids::default(),
        };
        // Each chunk of sentences lists its features in order of first appearance, in parallel; taken in
        // chunk order, those lists give the ids of one sequential pass (first appearance in the whole set),
        // whatever the thread count.
        let template = &map.template;
        let firsts: Vec<[FirstSeen; 2]> = train
            .par_chunks(DICTIONARY_CHUNK)
            .map(|chunk| {
                let (mut buf, mut first) =
                    (String::new(), [FirstSeen::default(), FirstSeen::default()]);
                let mut add = |kind: usize, f: &str| {
                    if !first[kind].contains(f) {
                        first[kind].insert(f.to_string());
                    }
                };
                for s in chunk {
                    for t in 0..s.len() {
                        template.for_each_feature(s, t, &mut buf, |f, _| add(0, f));
                        template.for_each_edge_feature(s, t, &mut buf, |f| add(1, f));
                    }
                }
                first
            })
            .collect();
        for [unigrams, edges] in firsts {
            intern(&mut map.names, &mut map.features, unigrams);
            intern(&mut map.edge_names, &mut map.edge_features, edges);
        }
        map.tags = Self::tag_order(train);
        map.tag_ids = (map.tags.iter().enumerate())
            .map(|(i, t)| (t.clone(), i as u32))
            .collect();
        map
    }

    /// The tags of training sentences in the order a dictionary built on them numbers them (first
    /// appearance), without building the features.
    pub fn tag_order(train: &[Sentence]) -> Vec<String> {
        let mut seen = std::collections::HashSet::new();
        let mut tags = Vec::new();
        for tag in train.iter().flat_map(|s| &s.tags) {
            if seen.insert(tag.as_str()) {
                tags.push(tag.clone());
            }
        }
        tags
    }

    /// As [`FeatureMap::fit_with`], keeping only the features that fire at least `min_count` times in the
    /// training tokens (CRFsuite's `feature.minfreq`): rare features, most of them seen once, are most of a
    /// tagger's dictionary and weights. `min_count ≤ 1` keeps every feature (the same map as `fit_with`).
    ///
    /// # Examples
    /// ```
    /// use maxmargin_io::conll::{FeatureMap, Sentence, Template};
    /// let s = |words: &[&str]| Sentence {
    ///     columns: vec![words.iter().map(|w| w.to_string()).collect()],
    ///     tags: words.iter().map(|_| "O".to_string()).collect(),
    /// };
    /// let train = [s(&["the", "cat"]), s(&["the", "dog"])];
    /// let all = FeatureMap::fit_with(&train, Template::ner(1));
    /// let common = FeatureMap::fit_with_min_count(&train, Template::ner(1), 2);
    /// assert!(common.n_features() < all.n_features());
    /// assert!(common.feature_names().iter().all(|f| all.feature_names().contains(f)));
    /// ```
    pub fn fit_with_min_count(train: &[Sentence], template: Template, min_count: usize) -> Self {
        let all = Self::fit_with(train, template);
        if min_count <= 1 {
            return all;
        }
        // Counted on every core, a pair of count vectors per thread's share, added up: integers, so the
        // same counts whatever the thread count.
        let zeros = || {
            (
                vec![0usize; all.names.len()],
                vec![0usize; all.edge_names.len()],
            )
        };
        let (counts, edge_counts) = train
            .par_chunks(DICTIONARY_CHUNK)
            .fold(zeros, |(mut counts, mut edge_counts), chunk| {
                let mut buf = String::new();
                for s in chunk {
                    for t in 0..s.len() {
                        all.template.for_each_feature(s, t, &mut buf, |f, _| {
                            if let Some(&i) = all.features.get(f) {
                                counts[i as usize] += 1;
                            }
                        });
                        all.template.for_each_edge_feature(s, t, &mut buf, |f| {
                            if let Some(&i) = all.edge_features.get(f) {
                                edge_counts[i as usize] += 1;
                            }
                        });
                    }
                }
                (counts, edge_counts)
            })
            .reduce(zeros, |(mut a, mut ea), (b, eb)| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                ea.iter_mut().zip(eb).for_each(|(x, y)| *x += y);
                (a, ea)
            });
        let keep = |names: &[String], counts: &[usize]| -> (Vec<String>, Ids) {
            let kept: Vec<String> = names
                .iter()
                .zip(counts)
                .filter(|(_, c)| **c >= min_count)
                .map(|(n, _)| n.clone())
                .collect();
            let ids = kept
                .iter()
                .enumerate()
                .map(|(i, n)| (n.clone(), i as u32))
                .collect();
            (kept, ids)
        };
        let (names, features) = keep(&all.names, &counts);
        let (edge_names, edge_features) = keep(&all.edge_names, &edge_counts);
        Self {
            names,
            features,
            edge_names,
            edge_features,
            ..all
        }
    }

    /// Number of unigram features.
    pub fn n_features(&self) -> usize {
        self.names.len()
    }

    /// Number of bigram features (observation-dependent transitions), indexed after the unigram ones.
    pub fn n_edge_features(&self) -> usize {
        self.edge_names.len()
    }

    /// The bigram feature strings, by index (less [`n_features`](Self::n_features)).
    pub fn edge_feature_names(&self) -> &[String] {
        &self.edge_names
    }

    /// Number of tags.
    pub fn n_tags(&self) -> usize {
        self.tags.len()
    }

    /// The tag names, by id.
    pub fn tag_names(&self) -> &[String] {
        &self.tags
    }

    /// The unigram feature strings, by index.
    pub fn feature_names(&self) -> &[String] {
        &self.names
    }

    /// The templates.
    pub fn template(&self) -> &Template {
        &self.template
    }

    /// The number of input columns of the training data (text to tag has this many, or one more: a tag).
    pub fn inputs(&self) -> usize {
        self.inputs
    }

    /// One sparse feature vector per position: the unigram features (1, or a `%v` cell's number), then the
    /// bigram ones (1) at `n_features() + e`; features not in the dictionary are dropped, and a feature made
    /// twice at a token counts once.
    pub fn features(&self, s: &Sentence) -> Vec<SparseVec> {
        let mut buf = String::new();
        let first_edge = self.names.len() as u32;
        (0..s.len())
            .map(|t| {
                let mut cells: Vec<(u32, f64)> =
                    Vec::with_capacity(self.template.len() + self.template.edge_len());
                self.template.for_each_feature(s, t, &mut buf, |f, v| {
                    if let Some(&j) = self.features.get(f) {
                        cells.push((j, v));
                    }
                });
                self.template.for_each_edge_feature(s, t, &mut buf, |f| {
                    if let Some(&e) = self.edge_features.get(f) {
                        cells.push((first_edge + e, 1.0));
                    }
                });
                // Stable: of a feature made twice, the first is kept (the same string reads the same cell).
                cells.sort_by_key(|c| c.0);
                cells.dedup_by_key(|c| c.0);
                let (idx, val) = cells.into_iter().unzip();
                SparseVec::new(idx, val).unwrap_or_default()
            })
            .collect()
    }

    /// The tag ids of a sentence, or the first tag the training set never had.
    ///
    /// # Errors
    /// The unknown tag, as `Err(tag)`.
    pub fn tags(&self, s: &Sentence) -> Result<Vec<u32>, String> {
        s.tags
            .iter()
            .map(|t| self.tag_id(t).ok_or_else(|| t.clone()))
            .collect()
    }

    /// The id of a tag, when training saw it.
    pub fn tag_id(&self, tag: &str) -> Option<u32> {
        self.tag_ids.get(tag).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sentences of words that recur at intervals, so that chunks of the parallel build meet features that
    /// earlier chunks already numbered and features of their own.
    fn corpus(n: usize) -> Vec<Sentence> {
        (0..n)
            .map(|i| {
                let words: Vec<String> = (0..1 + i % 5)
                    .map(|t| format!("w{}", (i * 7 + t * 13) % (40 + i / 3)))
                    .collect();
                Sentence {
                    tags: words.iter().map(|_| format!("T{}", i % 3)).collect(),
                    columns: vec![words],
                }
            })
            .collect()
    }

    /// The ids are the order in which one sequential pass meets the features, whatever the chunks and the
    /// thread count.
    #[test]
    fn ids_follow_first_appearance_over_chunks_and_threads() -> Result<(), String> {
        let train = corpus(3 * DICTIONARY_CHUNK + 17);
        // Unigrams, and bigram features (a B line with a macro: observation-dependent transitions).
        let text = "U00:%x[0,0]\nU01:%x[-1,0]/%x[0,0]\nB\nB01:%x[0,0]\n";
        let template = Template::parse("mine", text).map_err(|e| format!("{e:?}"))?;
        // Built on 1 and 3 threads, with `min_count` (1: every feature): the same map either way.
        let on =
            |threads: usize, min_count: usize| -> Result<FeatureMap, String> {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build();
                let pool = pool.map_err(|e| e.to_string())?;
                Ok(pool.install(|| {
                    FeatureMap::fit_with_min_count(&train, template.clone(), min_count)
                }))
            };
        let map = on(1, 1)?;
        assert_eq!(map, on(3, 1)?);
        assert_eq!(map, FeatureMap::fit_with(&train, template.clone()));
        let common_map = on(1, 3)?;
        assert_eq!(common_map, on(3, 3)?);
        let mut counts = std::collections::HashMap::<String, usize>::new();
        let (mut order, mut edge_order, mut buf) = (Vec::new(), Vec::new(), String::new());
        let (mut seen, mut edge_seen) = (
            std::collections::HashSet::new(),
            std::collections::HashSet::new(),
        );
        for s in &train {
            for t in 0..s.len() {
                map.template.for_each_feature(s, t, &mut buf, |f, _| {
                    *counts.entry(f.to_string()).or_default() += 1;
                    if seen.insert(f.to_string()) {
                        order.push(f.to_string());
                    }
                });
                map.template.for_each_edge_feature(s, t, &mut buf, |f| {
                    if edge_seen.insert(f.to_string()) {
                        edge_order.push(f.to_string());
                    }
                });
            }
        }
        assert!(
            order.len() > 100,
            "unigrams worth numbering: {}",
            order.len()
        );
        assert!(edge_order.len() > 20, "bigrams too: {}", edge_order.len());
        assert_eq!(map.feature_names(), &order[..]);
        assert_eq!(map.edge_feature_names(), &edge_order[..]);
        let kept: Vec<&String> = order.iter().filter(|f| counts[*f] >= 3).collect();
        assert!(
            !kept.is_empty() && kept.len() < order.len(),
            "{}",
            kept.len()
        );
        assert!(common_map.feature_names().iter().eq(kept));
        assert!((map.names.iter().enumerate()).all(|(i, f)| map.features[f] == i as u32));
        let edges = map.edge_names.iter().enumerate();
        assert!(edges.clone().all(|(i, f)| map.edge_features[f] == i as u32));
        Ok(())
    }
}
