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

/// A graph file (JSON lines): read, then, when it reads, a graph model trained on it for two passes,
/// predicting and evaluating on it, as the command does.
pub fn graphs(bytes: &[u8]) {
    use crate::structured_svm::{GraphOptions, StructuredSvmParams, Task};
    if let Ok(d) = crate::io::graphs::read_from(bytes, Path::new("fuzz.jsonl")) {
        assert!(d.graphs.iter().all(|g| !g.nodes.is_empty()));
        let Ok(svm) = StructuredSvmParams::new(Task::Graph)
            .max_passes(2.0)
            .check()
        else {
            return;
        };
        if let Ok(r) = svm.fit_graph(&d, GraphOptions::new(), &mut ()) {
            let _ = r.model.predict(&d);
            let _ = r.model.evaluate(&d, Some(1.0));
        }
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
    // The same bytes as a template file.
    template(bytes);
}

/// A CoNLL `--template` file, parsed and applied to a sentence as training does.
pub fn template(bytes: &[u8]) {
    if let Ok(text) = std::str::from_utf8(bytes)
        && let Ok(t) = conll::Template::parse("fuzz", text)
    {
        let s =
            conll::Sentence::from_rows(&[vec!["He", "PRP"], vec!["ran", "VBD"]], &["B-NP", "B-VP"]);
        let map = conll::FeatureMap::fit_with(std::slice::from_ref(&s), t);
        assert!(map.features(&s).len() == 2);
    }
}

/// The side files a command reads beside its data, for a three-row dataset: sample weights, group names
/// and a training trace.
///
/// # Panics
/// When the file cannot be written to `dir`, or a reader returns another count than the rows.
pub fn side_files(bytes: &[u8], dir: &Path) {
    let path = dir.join("fuzz.side");
    // ok: a harness failure, not an input the library must survive.
    std::fs::write(&path, bytes).expect("write the fuzz input");
    let data = Path::new("data.svm");
    if let Ok(w) = crate::side_files::read_weights(&path, 3, data) {
        assert!(w.len() == 3 && w.iter().all(|v| v.is_finite() && *v >= 0.0));
    }
    if let Ok(g) = crate::side_files::read_group_names(&path, 3, data) {
        assert!(g.len() == 3 && g.iter().all(|n| !n.is_empty()));
    }
    if let Ok(t) = crate::side_files::read_trace(&path) {
        assert!(!t.records.is_empty());
    }
}

/// A LIBLINEAR model file: read, converted as `convert` does, then saved (a converted model must pass what
/// loading checks) and used to predict.
///
/// # Panics
/// When the file cannot be written to `dir`, or a converted model cannot be saved.
pub fn liblinear(bytes: &[u8], dir: &Path) {
    let path = dir.join("fuzz.liblinear");
    // ok: a harness failure, not an input the library must survive.
    std::fs::write(&path, bytes).expect("write the fuzz input");
    let Ok(lib) = maxmargin_io::liblinear::LiblinearModel::read(&path) else {
        return;
    };
    let Ok(imported) = crate::convert::from_liblinear(&lib, &path) else {
        return;
    };
    let rows = libsvm::read_from(
        &b"1 1:1 3:-2\n-1 2:0.5\n"[..],
        &path,
        libsvm::parse_real_label,
    );
    let Ok(rows) = rows else { return };
    let out = dir.join("converted.model");
    match imported {
        crate::convert::Imported::Binary(m) => {
            let _ = m.decision_rows(&rows.x);
            m.save(&out)
                .expect("a converted model passes what loading checks");
        }
        crate::convert::Imported::Multiclass(m) => {
            let _ = m.predict_multiclass(&rows);
            m.save(&out)
                .expect("a converted model passes what loading checks");
        }
    }
}

/// `bytes` with the CRC-32 of a binary model file's payload recomputed, when they are framed as one
/// (magic, version, two length-prefixed strings, the payload's length, the payload, the checksum); other
/// bytes unchanged.
pub fn with_checksum(bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let framed = || -> Option<(usize, usize)> {
        if !bytes.starts_with(&maxmargin_io::model_file::MAGIC) {
            return None;
        }
        let mut at = 12;
        for _ in 0..2 {
            let len = u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?) as usize;
            at += 2 + len;
        }
        let len = u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?);
        let start = at + 8;
        let end = start.checked_add(usize::try_from(len).ok()?)?;
        (end.checked_add(4)? == bytes.len()).then_some((start, end))
    };
    if let Some((start, end)) = framed() {
        let crc = crc32fast::hash(&bytes[start..end]);
        out[end..].copy_from_slice(&crc.to_le_bytes());
    }
    out
}

/// A checkpoint file given to `--resume`: every solver family resumes from it (a short run on small data)
/// or refuses it; none panics.
///
/// # Panics
/// When the file cannot be written to `dir`.
pub fn checkpoint(bytes: &[u8], dir: &Path) {
    use crate::checkpoint::CheckpointPlan;
    use crate::linear::{LinearSolver, LinearSvmParams};
    use crate::structured_svm::{StructSolverKind, StructuredSvmParams, Task};
    let path = dir.join("fuzz.ck");
    // The checksum is made right, so that edits reach the decoder and the state checks (an edited payload
    // with a recomputed CRC made `--resume` panic).
    // ok: a harness failure, not an input the library must survive.
    std::fs::write(&path, with_checksum(bytes)).expect("write the fuzz input");
    let plan = CheckpointPlan::new().resume_from(&path);
    let binary = libsvm::read_from(
        &b"1 1:1 3:-2\n-1 2:0.5\n1 1:0.5 2:-1\n-1 3:1\n"[..],
        Path::new("fuzz.svm"),
        libsvm::parse_real_label,
    );
    let Ok(binary) = binary else { return };
    for solver in [
        LinearSolver::Dcd(Default::default()),
        LinearSolver::Pegasos(LinearSolver::default_pegasos()),
    ] {
        let mut p = LinearSvmParams::new().epochs(2.0);
        p.solver = solver;
        if let Ok(svm) = p.check() {
            let _ = svm.checkpoints(plan.clone()).fit(&binary);
        }
    }
    for solver in [StructSolverKind::Dcd, StructSolverKind::Bcfw] {
        let mut p = StructuredSvmParams::new(Task::Multiclass);
        p.solver = solver;
        p.max_passes = Some(2.0);
        if let Ok(svm) = p.check() {
            let _ = svm
                .checkpoints(plan.clone())
                .fit_multiclass(&binary, &mut ());
        }
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
