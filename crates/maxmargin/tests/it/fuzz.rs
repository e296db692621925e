//! A bounded fuzz of the entry points the cargo-fuzz targets exercise (`maxmargin::testing::fuzz`), on
//! stable and in every CI run: arbitrary bytes, and real files and models with random edits. Any panic is
//! a bug. Inputs the fuzzers found are replayed first, as ordinary regression tests.

use maxmargin::linear::LinearSvmParams;
use maxmargin::structured_svm::{StructuredSvmParams, Task};
use maxmargin::testing::fuzz;
use proptest::prelude::*;
use std::sync::LazyLock;

/// Inputs the fuzz targets found, replayed on every entry point.
#[test]
fn inputs_the_fuzzers_found_stay_fixed() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz");
    let scratch = tempfile::tempdir().unwrap();
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        fuzz::libsvm(&bytes);
        fuzz::multilabel(&bytes);
        fuzz::svm_hmm(&bytes);
        fuzz::conll(&bytes);
        fuzz::model(&bytes, scratch.path());
        fuzz::template(&bytes);
        fuzz::side_files(&bytes, scratch.path());
        fuzz::liblinear(&bytes, scratch.path());
        fuzz::checkpoint(&bytes, scratch.path());
        seen += 1;
    }
    assert!(seen >= 1);
}

/// Real text of each format, to be edited.
const TEXTS: [&[u8]; 6] = [
    b"+1 1:0.708 2:1 3:1 4:-0.32 5:-0.105 6:-1\n-1 1:0.583 2:-1 3:0.333 # c\n+1 qid:3 7:1e-3\n",
    b"0,2 1:0.5 4:-1\n 2:1\n1 3:0.25\n",
    b"1 qid:1 1:1 5:0.5 # a\n2 qid:1 2:1\n1 qid:2 3:1\n",
    b"Confidence NN B-NP\nin IN B-PP\nthe DT B-NP\n\nHe PRP B-NP\n",
    b"-1 1:-1 2:-2\r\n+1 1:2 2:1\n\n# only a comment\n",
    b"{\"features\": [[1, 0], [0, 1], [1, 1]], \"edges\": [[0, 1], [1, 2], [2, 0]], \"labels\": [0, 1, 1]}\n\
      {\"features_sparse\": [[[0, 2]], []], \"edges\": [[1, 0]], \"labels\": [1, 0]}\n",
];

/// Small models of both encodings, to be edited: binary, calibrated with a threshold, and multiclass, bincode
/// and JSON.
static MODELS: LazyLock<Vec<Vec<u8>>> = LazyLock::new(|| {
    let dir = tempfile::tempdir().unwrap();
    let heart = maxmargin::io::libsvm::read_from(
        maxmargin::datasets::HEART_SCALE.as_bytes(),
        "heart".as_ref(),
        maxmargin::io::libsvm::parse_real_label,
    )
    .unwrap();
    let iris = maxmargin::io::libsvm::read_from(
        maxmargin::datasets::IRIS.as_bytes(),
        "iris".as_ref(),
        maxmargin::io::libsvm::parse_real_label,
    )
    .unwrap();
    let binary = LinearSvmParams::new().check().unwrap().fit(&heart).unwrap();
    let multi = StructuredSvmParams::new(Task::Multiclass)
        .check()
        .unwrap()
        .fit_multiclass(&iris, &mut ())
        .unwrap()
        .model;
    let (decision, _) = maxmargin::linear::DecisionModel::new(binary.clone())
        .calibrate(&heart, maxmargin::linear::CalibrationMethod::Platt)
        .unwrap()
        .choose_threshold(&heart, maxmargin::linear::ThresholdRule::MaxFlagRate(0.3))
        .unwrap();
    let mut out = Vec::new();
    for ext in ["model", "json"] {
        let p = dir.path().join(format!("d.{ext}"));
        decision.save(&p).unwrap();
        out.push(std::fs::read(&p).unwrap());
        let p = dir.path().join(format!("b.{ext}"));
        binary.save(&p).unwrap();
        out.push(std::fs::read(&p).unwrap());
        let p = dir.path().join(format!("m.{ext}"));
        multi.save(&p).unwrap();
        out.push(std::fs::read(&p).unwrap());
    }
    out
});

/// Files beside the data, to be edited: LIBLINEAR models (binary and multiclass), checkpoints of each solver
/// family the checkpoint entry point resumes, a template, weights, group names and a trace.
static SIDE: LazyLock<Vec<(&'static str, Vec<u8>)>> = LazyLock::new(|| {
    use maxmargin::checkpoint::CheckpointPlan;
    use maxmargin::structured_svm::StructSolverKind;
    let dir = tempfile::tempdir().unwrap();
    let rows = maxmargin::io::libsvm::read_from(
        &b"1 1:1 3:-2\n-1 2:0.5\n1 1:0.5 2:-1\n-1 3:1\n"[..],
        "fuzz.svm".as_ref(),
        maxmargin::io::libsvm::parse_real_label,
    )
    .unwrap();
    let mut out = Vec::new();
    let binary = LinearSvmParams::new().check().unwrap().fit(&rows).unwrap();
    let lib = dir.path().join("b.liblinear");
    maxmargin::convert::binary_to_liblinear(&binary)
        .write(&lib)
        .unwrap();
    out.push(("liblinear", std::fs::read(&lib).unwrap()));
    let multi = StructuredSvmParams::new(Task::Multiclass).check().unwrap();
    let multi = multi.fit_multiclass(&rows, &mut ()).unwrap().model;
    maxmargin::convert::multiclass_to_liblinear(&multi)
        .unwrap()
        .write(&lib)
        .unwrap();
    out.push(("liblinear", std::fs::read(&lib).unwrap()));
    let ck = dir.path().join("run.ck");
    let plan = CheckpointPlan::new().save_to(&ck);
    let svm = LinearSvmParams::new().epochs(2.0).check().unwrap();
    svm.checkpoints(plan.clone()).fit(&rows).unwrap();
    out.push(("checkpoint", std::fs::read(&ck).unwrap()));
    for solver in [StructSolverKind::Dcd, StructSolverKind::Bcfw] {
        let mut p = StructuredSvmParams::new(Task::Multiclass);
        p.solver = solver;
        p.max_passes = Some(2.0);
        let svm = p.check().unwrap().checkpoints(plan.clone());
        svm.fit_multiclass(&rows, &mut ()).unwrap();
        out.push(("checkpoint", std::fs::read(&ck).unwrap()));
    }
    out.push((
        "template",
        b"U00:%x[0,0]\nU01:%x[-1,0]/%x[0,0]\n# c\nB\n".to_vec(),
    ));
    out.push(("side", b"1\n0.5\n2\n".to_vec()));
    out.push(("side", b"north\nsouth\nnorth\n".to_vec()));
    out.push((
        "side",
        b"{\"iteration\":1,\"epoch\":1.0,\"seconds\":0.1,\"objective\":1.0}\n{\"stop\":\"gap\",\"tolerance\":0.01}\n"
            .to_vec(),
    ));
    out
});

/// Bytes that matter to the parsers.
const ALPHABET: &[u8] = b"0123456789:,.-+eE #\n\r\tqid\"{}[]\xff\x00";

/// One edit: where (a fraction of the length), what (insert, delete, replace) and which byte.
fn edits() -> impl Strategy<Value = Vec<(f64, u8, u8)>> {
    prop::collection::vec((0.0..1.0f64, 0u8..3, any::<u8>()), 0..8)
}

fn edit(seed: &[u8], edits: &[(f64, u8, u8)]) -> Vec<u8> {
    let mut b = seed.to_vec();
    for &(at, op, byte) in edits {
        let i = ((at * b.len() as f64) as usize).min(b.len());
        let byte = if byte < 128 {
            ALPHABET[byte as usize % ALPHABET.len()]
        } else {
            byte
        };
        match op {
            0 => b.insert(i, byte),
            1 if i < b.len() => {
                b.remove(i);
            }
            _ if i < b.len() => b[i] = byte,
            _ => b.push(byte),
        }
    }
    b
}

fn all_readers(bytes: &[u8]) {
    fuzz::libsvm(bytes);
    fuzz::multilabel(bytes);
    fuzz::svm_hmm(bytes);
    fuzz::conll(bytes);
    fuzz::graphs(bytes);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn readers_survive_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        all_readers(&bytes);
    }

    #[test]
    fn readers_survive_edited_files(which in 0..TEXTS.len(), e in edits()) {
        all_readers(&edit(TEXTS[which], &e));
    }

    #[test]
    fn model_loading_survives_edited_models(which in 0..6usize, e in edits()) {
        let dir = tempfile::tempdir().unwrap();
        fuzz::model(&edit(&MODELS[which], &e), dir.path());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Issue 23: LIBLINEAR models, checkpoints, templates and side files, edited, through their readers.
    #[test]
    fn side_inputs_survive_edits(which in 0..9usize, e in edits()) {
        let dir = tempfile::tempdir().unwrap();
        let (kind, seed) = &SIDE[which];
        let bytes = edit(seed, &e);
        match *kind {
            "liblinear" => fuzz::liblinear(&bytes, dir.path()),
            "checkpoint" => fuzz::checkpoint(&bytes, dir.path()),
            "template" => fuzz::template(&bytes),
            _ => fuzz::side_files(&bytes, dir.path()),
        }
    }
}
