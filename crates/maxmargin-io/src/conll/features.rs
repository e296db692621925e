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

/// Gives each of `found` not yet in `ids` the next id, in order; the ids of `found`, in its order.
fn intern(names: &mut Vec<String>, ids: &mut Ids, found: FirstSeen) -> Vec<u32> {
    found
        .into_iter()
        .map(|f| match ids.entry(f) {
            std::collections::hash_map::Entry::Occupied(e) => *e.get(),
            std::collections::hash_map::Entry::Vacant(e) => {
                names.push(e.key().clone());
                *e.insert(names.len() as u32 - 1)
            }
        })
        .collect()
}

/// Marks a chunk-local id as a bigram feature's in a token's cells.
const EDGE: u64 = 1 << 63;
/// Cells reserved for a chunk at most (16 MB).
const RESERVED_CELLS: usize = 1 << 20;

/// A token's row from its cells in the order the templates made them: sorted by index, stably, so of a
/// feature made twice the first is kept.
fn finish_row(cells: &mut Vec<(u32, f64)>) -> SparseVec {
    cells.sort_by_key(|c| c.0);
    cells.dedup_by_key(|c| c.0);
    let (idx, val) = cells.iter().copied().unzip();
    SparseVec::new(idx, val).unwrap_or_default()
}

/// Names to their positions (`None` when a name repeats).
fn index(names: &[String]) -> Option<Ids> {
    let ids: Ids = (names.iter().enumerate())
        .map(|(i, n)| (n.clone(), i as u32))
        .collect();
    (ids.len() == names.len()).then_some(ids)
}

/// What one chunk of sentences makes: its unigram and bigram features in order of first appearance, how
/// often each fired, and (when rows are asked for) every token's cells by chunk-local id, bigram ones marked
/// by [`EDGE`], in the order the templates make them: one buffer for the chunk, token `k`'s cells ending at
/// `ends[k]` (no allocation per token).
#[derive(Default)]
struct Chunk {
    first: [FirstSeen; 2],
    counts: [Vec<usize>; 2],
    cells: Vec<(u64, f64)>,
    ends: Vec<usize>,
}

impl Chunk {
    fn of(template: &Template, sentences: &[Sentence], rows: bool) -> Self {
        let mut chunk = Chunk::default();
        if rows {
            // A template line makes at most one feature at a token: up to RESERVED_CELLS, no buffer grows by
            // copying (past it, a bound that large may be far from what fires: the buffer grows instead).
            let tokens = sentences.iter().map(Sentence::len).sum::<usize>();
            let bound = tokens.saturating_mul(template.len() + template.edge_len());
            chunk.cells.reserve(bound.min(RESERVED_CELLS));
            chunk.ends.reserve(tokens);
        }
        let mut buf = String::new();
        for s in sentences {
            for t in 0..s.len() {
                let mut add = |kind: usize, f: &str, v: f64| {
                    let id = match chunk.first[kind].get_index_of(f) {
                        Some(id) => id,
                        None => {
                            chunk.first[kind].insert(f.to_string());
                            chunk.counts[kind].push(0);
                            chunk.counts[kind].len() - 1
                        }
                    };
                    chunk.counts[kind][id] += 1;
                    if rows {
                        chunk
                            .cells
                            .push((id as u64 | if kind == 1 { EDGE } else { 0 }, v));
                    }
                };
                template.for_each_feature(s, t, &mut buf, |f, v| add(0, f, v));
                template.for_each_edge_feature(s, t, &mut buf, |f| add(1, f, 1.0));
                if rows {
                    chunk.ends.push(chunk.cells.len());
                }
            }
        }
        chunk
    }

    /// The rows of the chunk's `sentences`, by the final ids of its local ones (`u32::MAX`: dropped), as
    /// [`FeatureMap::features`] makes them.
    fn rows(
        self,
        sentences: &[Sentence],
        ids: &[Vec<u32>; 2],
        first_edge: u32,
    ) -> Vec<Vec<SparseVec>> {
        let (mut ends, mut start) = (self.ends.iter().copied(), 0);
        let mut token = || {
            let end = ends.next().unwrap_or(start);
            let cells = &self.cells[start..end];
            start = end;
            cells
        };
        let mut scratch = Vec::new();
        let mut row = |cells: &[(u64, f64)]| {
            // By final id; a dropped feature (`u32::MAX`) leaves.
            scratch.clear();
            scratch.extend(cells.iter().filter_map(|&(id, v)| {
                let kind = usize::from(id & EDGE != 0);
                match ids[kind][(id & !EDGE) as usize] {
                    u32::MAX => None,
                    j => Some((j + if kind == 1 { first_edge } else { 0 }, v)),
                }
            }));
            finish_row(&mut scratch)
        };
        (sentences.iter())
            .map(|s| (0..s.len()).map(|_| row(token())).collect())
            .collect()
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
            index(names)
                .filter(|_| names.len() <= u32::MAX as usize)
                .ok_or_else(|| format!("stored {what} repeat a name"))
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
        Self::build(train, template, 1, false).0
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
        Self::build(train, template, min_count, false).0
    }

    /// As [`FeatureMap::fit_with_min_count`], with the training sentences' rows (`features(s)` of each, in
    /// order) made in the same pass: the templates are expanded once, not once for the dictionary and again
    /// for the rows.
    pub fn fit_with_rows(
        train: &[Sentence],
        template: Template,
        min_count: usize,
    ) -> (Self, Vec<Vec<SparseVec>>) {
        Self::build(train, template, min_count, true)
    }

    /// The dictionaries, and the rows when asked. Each chunk of sentences lists its features in order of first
    /// appearance, in parallel; taken in chunk order, those lists give the ids of one sequential pass (first
    /// appearance in the whole set), whatever the thread count. Counts are integers added up, so the same
    /// for any thread count too.
    fn build(
        train: &[Sentence],
        template: Template,
        min_count: usize,
        rows: bool,
    ) -> (Self, Vec<Vec<SparseVec>>) {
        let inputs = train
            .iter()
            .map(|s| s.columns.len())
            .min()
            .unwrap_or(0)
            .max(template.columns());
        let mut chunks: Vec<Chunk> = train
            .par_chunks(DICTIONARY_CHUNK)
            .map(|c| Chunk::of(&template, c, rows))
            .collect();
        let (mut names, mut features) =
            ([Vec::new(), Vec::new()], [Ids::default(), Ids::default()]);
        let mut counts = [Vec::new(), Vec::new()];
        let mut local_ids: Vec<[Vec<u32>; 2]> = Vec::with_capacity(chunks.len());
        for chunk in &mut chunks {
            local_ids.push(std::array::from_fn(|kind| {
                let found = std::mem::take(&mut chunk.first[kind]);
                let ids = intern(&mut names[kind], &mut features[kind], found);
                counts[kind].resize(names[kind].len(), 0);
                for (&id, &c) in ids.iter().zip(&chunk.counts[kind]) {
                    counts[kind][id as usize] += c;
                }
                ids
            }));
        }
        if min_count > 1 {
            // Rare features leave; the others keep their order and are numbered again.
            for kind in 0..2 {
                let mut kept = vec![u32::MAX; names[kind].len()];
                let all = std::mem::take(&mut names[kind]);
                for (i, name) in all.into_iter().enumerate() {
                    if counts[kind][i] >= min_count {
                        kept[i] = names[kind].len() as u32;
                        names[kind].push(name);
                    }
                }
                features[kind].retain(|_, id| {
                    *id = kept[*id as usize];
                    *id != u32::MAX
                });
                if rows {
                    for ids in &mut local_ids {
                        ids[kind].iter_mut().for_each(|id| *id = kept[*id as usize]);
                    }
                }
            }
        }
        let first_edge = names[0].len() as u32;
        let rows = if rows {
            let per_chunk: Vec<Vec<Vec<SparseVec>>> = (chunks.into_par_iter())
                .zip(train.par_chunks(DICTIONARY_CHUNK))
                .zip(local_ids.par_iter())
                .map(|((chunk, sentences), ids)| chunk.rows(sentences, ids, first_edge))
                .collect();
            per_chunk.into_iter().flatten().collect()
        } else {
            Vec::new()
        };
        let [names, edge_names] = names;
        let [features, edge_features] = features;
        let tags = Self::tag_order(train);
        // Tags of first appearance are distinct.
        let tag_ids = index(&tags).unwrap_or_default();
        let map = Self {
            template,
            inputs,
            names,
            features,
            edge_names,
            edge_features,
            tags,
            tag_ids,
        };
        (map, rows)
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
                finish_row(&mut cells)
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

    /// Rows made with the dictionary equal the rows it makes afterwards where they are hardest to keep
    /// equal: empty sentences across chunks, `%v` values (zeros make no feature; one line twice), and a
    /// `min_count` that drops every unigram (each word is unique) but keeps bigrams of a column of
    /// few values.
    #[test]
    fn rows_made_in_the_dictionarys_pass_are_the_rows_it_makes() -> Result<(), String> {
        let train: Vec<Sentence> = (0..2 * DICTIONARY_CHUNK + 9)
            .map(|i| {
                let n = if i % 97 == 0 { 0 } else { 1 + i % 4 };
                let words = (0..n).map(|t| format!("u{i}_{t}")).collect();
                let values = (0..n).map(|t| format!("{}", (i + t) % 3)).collect();
                Sentence {
                    tags: (0..n).map(|t| format!("T{}", t % 2)).collect(),
                    columns: vec![words, values],
                }
            })
            .collect();
        let text = "U00:%x[0,0]\nU01:%v[0,1]\nU02:%v[-1,1]\nU01:%v[0,1]\nB\nB01:%x[0,1]\n";
        let template = Template::parse("hard", text).map_err(|e| format!("{e:?}"))?;
        for (threads, min_count) in [(1, 1), (2, 1), (2, 2), (1, usize::MAX)] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build();
            let pool = pool.map_err(|e| e.to_string())?;
            let (map, rows) =
                pool.install(|| FeatureMap::fit_with_rows(&train, template.clone(), min_count));
            assert_eq!(
                map,
                FeatureMap::fit_with_min_count(&train, template.clone(), min_count)
            );
            assert_eq!(rows.len(), train.len());
            assert!(rows.iter().zip(&train).all(|(r, s)| *r == map.features(s)));
            if min_count == 2 {
                assert!(map.feature_names().iter().all(|f| !f.starts_with("U00")));
                assert!(
                    map.n_edge_features() > 0
                        && rows.iter().flatten().any(|r| r.as_row().nnz() > 0)
                );
            }
        }
        Ok(())
    }

    /// The ids are the order in which one sequential pass meets the features, whatever the chunks and the
    /// thread count.
    #[test]
    fn ids_follow_first_appearance_over_chunks_and_threads() -> Result<(), String> {
        let train = corpus(3 * DICTIONARY_CHUNK + 17);
        // Unigrams (U00 twice: a feature made twice at a token), and bigram features (a B line with a
        // macro: observation-dependent transitions).
        let text = "U00:%x[0,0]\nU01:%x[-1,0]/%x[0,0]\nU00:%x[0,0]\nB\nB01:%x[0,0]\n";
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
        // The rows made with the dictionary are the rows the dictionary makes afterwards.
        for (threads, min_count, map) in [(1, 1, &map), (3, 1, &map), (3, 3, &common_map)] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build();
            let pool = pool.map_err(|e| e.to_string())?;
            let (with_rows, rows) =
                pool.install(|| FeatureMap::fit_with_rows(&train, template.clone(), min_count));
            assert_eq!(&with_rows, map);
            assert_eq!(rows.len(), train.len());
            assert!(rows.iter().zip(&train).all(|(r, s)| *r == map.features(s)));
        }
        assert!((map.names.iter().enumerate()).all(|(i, f)| map.features[f] == i as u32));
        let common = common_map.names.iter().enumerate();
        assert!(
            common
                .clone()
                .all(|(i, f)| common_map.features[f] == i as u32)
        );
        assert_eq!(common_map.features.len(), common_map.names.len());
        let edges = map.edge_names.iter().enumerate();
        assert!(edges.clone().all(|(i, f)| map.edge_features[f] == i as u32));
        Ok(())
    }
}
