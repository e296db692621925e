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
    // `0, 1` (a space after the comma) names the set and how it is written, not an empty label `""`.
    let p = write(&dir, "spaced.svm", "0, 1 1:1\n");
    let (_, _, msg) = parse_error(maxmargin_io::multilabel::read(&p).unwrap_err());
    assert!(
        msg.contains("\"0,\" has an empty label") && msg.contains("no spaces"),
        "{msg}"
    );
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

/// A no-break or ideographic space inside a token is part of it (French numbers, CJK text): it split the
/// token into two columns, and the error then blamed the next, well-formed line.
#[test]
fn conll_columns_are_split_on_ascii_whitespace_only() {
    let d = tempfile::tempdir().unwrap();
    let p = write(
        &d,
        "u.conll",
        "12\u{a0}000 CD O\nef NN B-NP\n\n\u{4e00}\u{3000}\u{4e8c} NN O\n",
    );
    let s = maxmargin_io::conll::read(&p).unwrap();
    assert_eq!(s[0].columns[0], ["12\u{a0}000", "ef"]);
    assert_eq!(s[1].columns[0], ["\u{4e00}\u{3000}\u{4e8c}"]);
    let p = write(&d, "bad.conll", "\nab NN O\ncd O\n");
    let (line, _, message) = parse_error(maxmargin_io::conll::read(&p).unwrap_err());
    assert_eq!(line, 3);
    assert!(
        message.contains("as on the first token line (line 2)"),
        "{message}"
    );
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
    let unseen = maxmargin_io::conll::Sentence::from_rows(&[vec!["zzz", "XX"]], &["I-ADJP"]);
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

#[test]
fn conll_templates_parse_expand_and_name_their_mistakes() {
    use maxmargin_io::conll::{FeatureMap, Sentence, Template};
    // The built-ins parse, and say which columns they read.
    assert_eq!(Template::chunking().columns(), 2);
    assert_eq!(Template::ner(1).columns(), 1);
    assert_eq!(Template::ner(3).columns(), 3);
    assert!(!Template::chunking().name().contains("unparsable"));
    // A CRF++ template: one feature per U line and token, cells padded past the ends.
    let t = Template::parse(
        "t",
        "U0:%x[-1,0]\nU1:%x[0,0]/%x[0,1]\nU2:%suffix2[0,0]\nU3:%shape[1,0]\n\nB\n",
    )
    .unwrap();
    let s = Sentence::from_rows(&[vec!["He", "PRP"], vec!["ran", "VBD"]], &["B-NP", "B-VP"]);
    let map = FeatureMap::fit_with(std::slice::from_ref(&s), t);
    let names = map.feature_names();
    assert_eq!(
        names,
        &[
            "U0:<s>",
            "U1:He/PRP",
            "U2:he",
            "U3:x",
            "U0:He",
            "U1:ran/VBD",
            "U2:an",
            "U3:</x>"
        ]
    );
    assert_eq!(map.features(&s)[1].as_row().indices(), &[4, 5, 6, 7]);
    // Saved and read back (as a model file does), the dictionary is the same.
    let back: FeatureMap = serde_json::from_str(&serde_json::to_string(&map).unwrap()).unwrap();
    assert_eq!(back, map);
    // Bigram templates: one feature per transition (from the second token on), indexed after the unigram
    // ones, stored after them and read back as bigram features.
    let t = Template::parse("t", "U0:%x[0,0]\nB\nB1:%x[-1,1]/%x[0,1]\n").unwrap();
    assert_eq!((t.len(), t.edge_len(), t.columns()), (1, 1, 2));
    let s3 = Sentence::from_rows(
        &[vec!["He", "PRP"], vec!["ran", "VBD"], vec!["home", "NN"]],
        &["B-NP", "B-VP", "B-NP"],
    );
    let map = FeatureMap::fit_with(std::slice::from_ref(&s3), t.clone());
    assert_eq!(map.feature_names(), &["U0:He", "U0:ran", "U0:home"]);
    assert_eq!(map.edge_feature_names(), &["B1:PRP/VBD", "B1:VBD/NN"]);
    let x = map.features(&s3);
    assert_eq!(x[0].as_row().indices(), &[0]);
    assert_eq!(x[1].as_row().indices(), &[1, 3]);
    assert_eq!(x[2].as_row().indices(), &[2, 4]);
    let back: FeatureMap = serde_json::from_str(&serde_json::to_string(&map).unwrap()).unwrap();
    assert_eq!(back, map);
    // A minimum count prunes bigram features too.
    let twice = [s3.clone(), s.clone()];
    let pruned = FeatureMap::fit_with_min_count(&twice, t, 2);
    assert_eq!(pruned.edge_feature_names(), &["B1:PRP/VBD"]);
    // Stored bigram features need a bigram template line to make them.
    let mut stored: serde_json::Value = serde_json::to_value(&map).unwrap();
    stored["template"] = "U0:%x[0,0]\n".into();
    let err = serde_json::from_value::<FeatureMap>(stored).unwrap_err();
    assert!(err.to_string().contains("no bigram"), "{err}");
    // Real-valued columns: `%v` makes the cell the feature's value (zero and rows outside the sentence make
    // none); cells that are not finite numbers are named by sentence, token and column.
    let t = Template::parse("t", "U0:%x[0,0]\nUv:%v[0,1]\nUpv:%x[0,0]/%v[-1,1]\n").unwrap();
    assert!(t.has_values() && !Template::chunking().has_values());
    let s = Sentence::from_rows(
        &[vec!["a", "0.5"], vec!["b", "0"], vec!["c", "-2e1"]],
        &["O", "O", "O"],
    );
    let map = FeatureMap::fit_with(std::slice::from_ref(&s), t.clone());
    assert_eq!(
        map.feature_names(),
        &["U0:a", "Uv:%v[0,1]", "U0:b", "Upv:b/%v[-1,1]", "U0:c"]
    );
    let x = map.features(&s);
    assert_eq!(
        x[0].as_row().iter().collect::<Vec<_>>(),
        vec![(0, 1.0), (1, 0.5)]
    );
    assert_eq!(
        x[1].as_row().iter().collect::<Vec<_>>(),
        vec![(2, 1.0), (3, 0.5)]
    );
    assert_eq!(
        x[2].as_row().iter().collect::<Vec<_>>(),
        vec![(1, -20.0), (4, 1.0)]
    );
    assert_eq!(t.check_values(std::slice::from_ref(&s)), Ok(()));
    let bad = Sentence::from_rows(&[vec!["a", "1"], vec!["b", "NaN"]], &["O", "O"]);
    assert_eq!(
        t.check_values(&[s.clone(), bad]),
        Err((1, 1, 1, "NaN".to_string()))
    );
    // Mistakes name line and column.
    for (text, line, col, what) in [
        ("U0:%x[0,0]\nU1:%x[0]\n", 2, 4, "[row,column]"),
        ("U0:%foo[0,0]\n", 1, 4, "unknown macro %foo"),
        ("  X0:%x[0,0]\n", 1, 3, "starts with U"),
        ("U0:%x[99,0]\n", 1, 4, "|row| <= 64"),
        ("U0:%prefix0[0,0]\n", 1, 4, "unknown macro"),
        ("U0:%x[0,0\n", 1, 4, "not closed"),
        ("U0:%x[0,0]\nB0:%lower[0]\n", 2, 4, "[row,column]"),
        ("U0:%v[0,1]/%v[0,2]\n", 1, 1, "stands once"),
        ("U0:%x[0,0]\nB0:%v[0,1]\n", 2, 1, "unigram (U) line"),
        ("# only a comment\n", 1, 1, "no unigram"),
    ] {
        let (l, c, m) = Template::parse("t", text).unwrap_err();
        assert_eq!((l, c), (line, col), "{text:?}: {m}");
        assert!(m.contains(what), "{text:?}: {m}");
    }
}

#[test]
fn conll_layouts_tagged_untagged_and_docstart() {
    use maxmargin_io::conll::{Layout, read_from, read_layout};
    let p = std::path::Path::new("x.conll");
    // CoNLL-2003's -DOCSTART- lines end a sentence and are skipped; two columns (word tag) are enough.
    let s = read_from(
        &b"-DOCSTART- O\n\nEU B-ORG\nrejects O\n-DOCSTART- O\nPeter B-PER\n"[..],
        p,
    )
    .unwrap();
    assert_eq!(s.len(), 2);
    assert_eq!(
        (
            s[0].columns.len(),
            s[0].tags.len(),
            s[1].words()[0].as_str()
        ),
        (1, 2, "Peter")
    );
    // A line with another number of columns than the first is named.
    let err = read_from(&b"a B c\nd e\n"[..], p).unwrap_err().to_string();
    assert!(
        err.contains("x.conll:2:1: columns: expected 3 columns"),
        "{err}"
    );
    // For a tagger with two input columns: untagged or tagged, not both.
    let s = read_layout(&b"He PRP\nran VBD\n"[..], p, Layout::Inputs(2)).unwrap();
    assert!(s[0].tags.is_empty());
    let s = read_layout(&b"He PRP B-NP\n"[..], p, Layout::Inputs(2)).unwrap();
    assert_eq!(s[0].tags, vec!["B-NP"]);
    let err = read_layout(&b"He PRP\nran VBD B-VP\n"[..], p, Layout::Inputs(2)).unwrap_err();
    assert!(err.to_string().contains(":2:1: columns"), "{err}");
    let err = read_layout(&b"He\n"[..], p, Layout::Inputs(2)).unwrap_err();
    assert!(
        err.to_string().contains("expected 2 input columns"),
        "{err}"
    );
}

#[test]
fn caches_read_back_exactly_and_refuse_damage() {
    use maxmargin_io::{cache, libsvm};
    let dir = tempfile::tempdir().unwrap();
    let text = write(
        &dir,
        "d.svm",
        "+1 qid:7 1:0.5 40:-2\n-1 2:1e-300\n\n+1 3:4\n",
    );
    let data = libsvm::read(&text).unwrap();
    let path = dir.path().join("d.mmc");
    cache::write(&path, &data).unwrap();
    assert!(cache::is_cache(&path) && !cache::is_cache(&text));
    let back = libsvm::read(&path).unwrap();
    assert_eq!(
        (&back.x, &back.labels, &back.qids, &back.lines),
        (&data.x, &data.labels, &data.qids, &data.lines)
    );
    assert!(back.source.display().to_string().contains("cached from"));
    let bytes = std::fs::read(&path).unwrap();
    let damaged = |name: &str, b: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, b).unwrap();
        libsvm::read(&p).unwrap_err().to_string()
    };
    // One flipped bit in a value: the checksum.
    let mut flipped = bytes.clone();
    let at = flipped.len() - 10;
    flipped[at] ^= 1;
    assert!(damaged("flip.mmc", &flipped).contains("checksum mismatch"));
    // Cut short, or a header claiming more rows than the file holds: refused before allocating.
    assert!(damaged("short.mmc", &bytes[..bytes.len() - 3]).contains("do not fit"));
    let mut huge = bytes.clone();
    huge[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(damaged("huge.mmc", &huge).contains("do not fit"));
    let mut newer = bytes.clone();
    newer[8] = 9;
    assert!(damaged("newer.mmc", &newer).contains("cache format 9"));
    // A label that is not a finite number (the text parser refuses one; a cache written by hand, with a
    // right checksum, could hold one): named by row and source line.
    let mut nan = data.clone();
    nan.labels[1] = f64::NAN;
    let nan_path = dir.path().join("nan.mmc");
    cache::write(&nan_path, &nan).unwrap();
    let err = libsvm::read(&nan_path).unwrap_err().to_string();
    assert!(
        err.contains("nan.mmc") && err.contains("row 2 (line 2 of the source): the label NaN"),
        "{err}"
    );
    // Multilabel reads text only.
    let err = maxmargin_io::multilabel::read(&path)
        .unwrap_err()
        .to_string();
    assert!(err.contains("a cache holds single-label"), "{err}");
}
