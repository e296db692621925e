//! The fuzzed entry points: what the cargo-fuzz targets under `fuzz/` and the bounded property test in
//! the ordinary suite (`tests/it/fuzz.rs`) feed arbitrary bytes to. Each reads the bytes as a user's file
//! would be read and, when that succeeds, uses the result as the commands do; it returns normally for any
//! input, good or bad, and panics only on a bug (a panic in the library, or two readers that disagree).

use crate::io::{conll, libsvm, multilabel, svm_hmm};
use crate::linear::LinearModel;
use crate::structured_svm::StructuredModel;
use std::path::Path;

/// A LIBSVM file: the sequential and the parallel reader must agree (the same rows or the same error);
/// a file that reads is then checked against the memory limits, as training does first.
///
/// # Panics
/// When the two readers disagree.
pub fn libsvm(bytes: &[u8]) {
    let source = Path::new("fuzz.svm");
    let one = libsvm::read_from(bytes, source, libsvm::parse_real_label);
    let all = libsvm::read_parallel_from(bytes, source, libsvm::parse_real_label);
    match (&one, &all) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "the readers disagree on the rows"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "the readers disagree"),
        _ => panic!("one reader accepts what the other refuses: {one:?} against {all:?}"),
    }
    if let Ok(d) = one {
        let _ = crate::limits::check_features(&d.source, d.x.n_features(), d.x.nnz());
        let _ = crate::io::labels::BinaryLabels::from_labels(&d.source, &d.labels);
    }
}

/// A multilabel file (`1,3 idx:val ...`).
pub fn multilabel(bytes: &[u8]) {
    if let Ok(d) = libsvm::read_from(bytes, Path::new("fuzz.ml"), multilabel::parse_label_set) {
        let k = multilabel::n_labels(&d);
        if k <= 4096 {
            let _ = multilabel::indicators(&d.labels, k);
        }
    }
}

/// An svm_hmm file (`TAG qid:N idx:val ...`).
pub fn svm_hmm(bytes: &[u8]) {
    if let Ok(d) = svm_hmm::read_from(bytes, Path::new("fuzz.hmm")) {
        assert_eq!(d.sequences.len(), d.labels.len());
        assert!(
            d.labels
                .iter()
                .flatten()
                .all(|&l| (l as usize) < d.n_labels)
        );
    }
}

/// A CoNLL file: read, then features and tags built as training does.
pub fn conll(bytes: &[u8]) {
    if let Ok(sentences) = conll::read_from(bytes, Path::new("fuzz.conll")) {
        let map = conll::FeatureMap::fit(&sentences);
        for s in &sentences {
            assert_eq!(map.features(s).len(), s.len());
            let _ = map.tags(s);
        }
    }
    // The same bytes as a template file, applied to a sentence.
    if let Ok(text) = std::str::from_utf8(bytes)
        && let Ok(t) = conll::Template::parse("fuzz", text)
    {
        let s =
            conll::Sentence::from_rows(&[vec!["He", "PRP"], vec!["ran", "VBD"]], &["B-NP", "B-VP"]);
        let map = conll::FeatureMap::fit_with(std::slice::from_ref(&s), t);
        assert!(map.features(&s).len() == 2);
    }
}

/// A model file in either encoding, written to `dir` and loaded as each kind of model; a model that
/// loads then predicts a small dataset of each kind.
///
/// # Panics
/// When the file cannot be written to `dir`.
pub fn model(bytes: &[u8], dir: &Path) {
    let path = dir.join("fuzz.model");
    // ok: a harness failure, not an input the library must survive.
    std::fs::write(&path, bytes).expect("write the fuzz input");
    let rows = libsvm::read_from(
        &b"1 1:1 3:-2\n-1 2:0.5\n"[..],
        &path,
        libsvm::parse_real_label,
    );
    let Ok(rows) = rows else { return };
    if let Ok(m) = LinearModel::load(&path) {
        let _ = m.decision_rows(&rows.x);
        let _ = m.evaluate(&rows, None);
    }
    if let Ok(m) = crate::linear::DecisionModel::load(&path) {
        let _ = m.predict_rows(&rows.x);
        let _ = m.probabilities(&rows.x);
        let _ = m.evaluate(&rows, Some(0.1));
    }
    if let Ok(m) = StructuredModel::load(&path) {
        let _ = m.predict_multiclass(&rows);
        if let Ok(ml) =
            libsvm::read_from(&b"0,2 1:1\n 2:1\n"[..], &path, multilabel::parse_label_set)
        {
            let _ = m.predict_multilabel(&ml);
        }
        if let Ok(seq) = svm_hmm::read_from(&b"1 qid:1 1:1\n2 qid:1 2:1\n"[..], &path) {
            let _ = m.predict_chain(&seq);
        }
    }
    if let Ok(cached) = maxmargin_io::cache::read(&path) {
        assert_eq!(cached.x.n_rows(), cached.labels.len());
    }
    if let Ok(lib) = maxmargin_io::liblinear::LiblinearModel::read(&path)
        && let Ok(imported) = crate::convert::from_liblinear(&lib, &path)
    {
        match imported {
            crate::convert::Imported::Binary(m) => {
                let _ = m.decision_rows(&rows.x);
            }
            crate::convert::Imported::Multiclass(m) => {
                let _ = m.predict_multiclass(&rows);
            }
        }
    }
    if let Ok(t) = crate::tagger::Tagger::load(&path) {
        let layout = conll::Layout::Inputs(t.features.inputs());
        if let Ok(s) = conll::read_layout(&b"He PRP B-NP\nran VBD B-VP\n"[..], &path, layout) {
            let _ = t.tag(&s);
            let _ = t.evaluate(&s, Some(0.1));
        }
    }
}
