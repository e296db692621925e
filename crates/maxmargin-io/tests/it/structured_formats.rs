//! The sequence, multilabel and CoNLL readers on good and bad input.

use maxmargin_io::IoError;

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn parse_error(e: IoError) -> (usize, &'static str, String) {
    match e {
        IoError::Parse {
            line,
            field,
            message,
            ..
        } => (line, field, message),
        other => panic!("expected a parse error, got {other}"),
    }
}

#[test]
fn svm_hmm_groups_by_qid_and_rejects_bad_sequences() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        &dir,
        "ok.dat",
        "3 qid:7 1:1\n1 qid:7 4:0.5\n2 qid:9 2:1 # c\n",
    );
    let d = maxmargin_io::svm_hmm::read(&p).unwrap();
    assert_eq!(d.qids, vec![7, 9]);
    assert_eq!(d.labels, vec![vec![2, 0], vec![1]]);
    assert_eq!(d.sequences[0][1].as_row().indices(), &[3]);

    let p = write(&dir, "again.dat", "1 qid:1 1:1\n1 qid:2 1:1\n1 qid:1 1:1\n");
    let (line, field, msg) = parse_error(maxmargin_io::svm_hmm::read(&p).unwrap_err());
    assert_eq!((line, field), (3, "qid"));
    assert!(msg.contains("consecutive"), "{msg}");

    let p = write(&dir, "noqid.dat", "1 qid:1 1:1\n2 1:1\n");
    assert_eq!(
        parse_error(maxmargin_io::svm_hmm::read(&p).unwrap_err()).0,
        2
    );

    let p = write(&dir, "zero.dat", "0 qid:1 1:1\n");
    let (line, field, msg) = parse_error(maxmargin_io::svm_hmm::read(&p).unwrap_err());
    assert_eq!((line, field), (1, "label"));
    assert!(msg.contains("start at 1"), "{msg}");
}

#[test]
fn multilabel_sets_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "ml.svm", "3,1,1 1:1\n2:0.5\n0 1:1\n");
    let d = maxmargin_io::multilabel::read(&p).unwrap();
    assert_eq!(d.labels, vec![vec![1, 3], vec![], vec![0]]);
    assert_eq!(d.x.row(1).indices(), &[1]);
    assert_eq!(maxmargin_io::multilabel::n_labels(&d), 4);
    assert_eq!(
        maxmargin_io::multilabel::indicators(&d.labels, 4)[0],
        vec![false, true, false, true]
    );
    let p = write(&dir, "bad.svm", "1,x 1:1\n");
    let (line, field, msg) = parse_error(maxmargin_io::multilabel::read(&p).unwrap_err());
    assert_eq!((line, field), (1, "label"));
    assert!(msg.contains("\"x\""), "{msg}");
    // A binary file whose first line has no label is an error, not an empty label.
    let p = write(&dir, "nolabel.svm", "1:1 2:1\n");
    let (_, field, msg) = parse_error(maxmargin_io::libsvm::read(&p).unwrap_err());
    assert_eq!((field, msg.as_str()), ("label", "missing label"));
}

#[test]
fn conll_bad_columns() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "c.txt", "He PRP B-NP\nran VBD\n");
    let (line, field, _) = parse_error(maxmargin_io::conll::read(&p).unwrap_err());
    assert_eq!((line, field), (2, "columns"));
}

#[test]
fn conll_features_are_deterministic_and_drop_unknowns() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "c.txt", "He PRP B-NP\nran VBD B-VP\n\nShe PRP B-NP\n");
    let s = maxmargin_io::conll::read(&p).unwrap();
    let a = maxmargin_io::conll::FeatureMap::fit(&s);
    let b = maxmargin_io::conll::FeatureMap::fit(&s);
    assert_eq!(a.features(&s[0]), b.features(&s[0]));
    assert_eq!(a.tags(&s[0]).unwrap(), vec![0, 1]);
    let unseen = maxmargin_io::conll::Sentence {
        words: vec!["zzz".into()],
        pos: vec!["XX".into()],
        tags: vec!["I-ADJP".into()],
    };
    assert_eq!(a.tags(&unseen).unwrap_err(), "I-ADJP");
    // An unseen word keeps only the features training saw (bias, padding, shape): fewer than a seen one.
    let x = a.features(&unseen);
    let seen = a.features(&s[1]);
    assert!(x[0].as_row().nnz() >= 1 && x[0].as_row().nnz() < seen[0].as_row().nnz());
    assert!(
        x[0].as_row()
            .indices()
            .iter()
            .all(|&j| (j as usize) < a.n_features())
    );
}
