//! What users feed the commands: standard input, data of another task, features the model never saw, and
//! label sets that come back empty.

use super::{fails, heart, ok, s};
use std::io::Write;
use std::process::{Command, Stdio};

fn with_stdin(args: &[&str], input: &[u8]) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_maxmargin"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn a_dash_reads_standard_input_for_train_predict_and_eval() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let bytes = std::fs::read(&data).unwrap();
    let (from_file, from_stdin) = (tmp.path().join("f.model"), tmp.path().join("s.model"));
    ok(&["train", s(&data), "-o", s(&from_file), "-q"]);
    let out = with_stdin(&["train", "-", "-o", s(&from_stdin), "-q"], &bytes);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(&from_file).unwrap(),
        std::fs::read(&from_stdin).unwrap()
    );
    let predicted = with_stdin(&["predict", s(&from_file), "-"], &bytes);
    assert_eq!(
        predicted.stdout,
        ok(&["predict", s(&from_file), s(&data)]).into_bytes()
    );
    // gzip on standard input too.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&bytes).unwrap();
    let evaluated = with_stdin(
        &["eval", s(&from_file), "-", "--json"],
        &gz.finish().unwrap(),
    );
    assert_eq!(
        String::from_utf8(evaluated.stdout).unwrap(),
        ok(&["eval", s(&from_file), s(&data), "--json"])
    );
    // Errors name the place as given.
    let bad = with_stdin(&["train", "-", "-o", s(&from_stdin)], b"+1 1:x\n");
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("-:1:4: feature value"));
}

#[test]
fn data_of_another_task_is_refused_and_unseen_features_are_counted() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let model = tmp.path().join("h.model");
    ok(&["train", s(&data), "-o", s(&model), "-q"]);
    let iris = tmp.path().join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    for cmd in ["predict", "eval"] {
        let err = fails(&[cmd, s(&model), s(&iris)], 1);
        assert!(
            err.contains("iris.svm:1:1: label: 0 is none of the 2 classes of")
                && err.contains("(-1, 1), and the file has 3 distinct labels"),
            "{err}"
        );
    }
    // Binary training of more than two classes points to the tasks that take them.
    let err = fails(
        &["train", s(&iris), "-o", s(&tmp.path().join("x.model"))],
        1,
    );
    assert!(
        err.contains("found 3") && err.contains("--task multiclass"),
        "{err}"
    );
    // The row blamed is the first with a foreign label, not the one that makes a label too many.
    let mixed = tmp.path().join("mixed.svm");
    std::fs::write(&mixed, "2 1:1\n2 1:1\n1 1:1\n-1 1:1\n").unwrap();
    let err = fails(&["eval", s(&model), s(&mixed)], 1);
    assert!(
        err.contains("mixed.svm:1:1: label: 2 is none of the 2 classes"),
        "{err}"
    );
    // Unlabelled rows (one placeholder label) predict; features beyond the model's 13 are counted once.
    let extra = tmp.path().join("extra.svm");
    std::fs::write(&extra, "0 1:0.5 20:1 30:2\n0 2:1\n0 14:1\n").unwrap();
    let out = super::maxmargin(&["predict", s(&model), s(&extra)]);
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.matches("warning:").count(), 1, "{err}");
    assert!(
        err.contains(
            "3 feature values in 2 rows have indices beyond the model's 13 features (up to 30)"
        ),
        "{err}"
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 3);
}

#[test]
fn an_empty_predicted_label_set_is_written_as_a_marker_the_reader_takes_back() {
    let tmp = tempfile::tempdir().unwrap();
    // Label 0 on the first feature, label 1 on the second; rows with neither feature have no label.
    let rows: String = (0..60)
        .map(|i| match i % 3 {
            0 => "0 1:1\n".to_string(),
            1 => "1 2:1\n".to_string(),
            _ => "- 3:1\n".to_string(),
        })
        .collect();
    let data = tmp.path().join("ml.svm");
    std::fs::write(&data, &rows).unwrap();
    let model = tmp.path().join("ml.model");
    ok(&[
        "train",
        "--task",
        "multilabel",
        s(&data),
        "-o",
        s(&model),
        "-q",
        "--lambda",
        "0.01",
    ]);
    let predicted = ok(&["predict", s(&model), s(&data)]);
    let lines: Vec<&str> = predicted.lines().collect();
    assert_eq!(&lines[..3], &["0", "1", "-"], "{predicted}");
    assert!(lines.iter().all(|l| !l.is_empty()));
    // The predictions, as labels of a new file, read back to the same sets.
    let again: String = lines.iter().map(|l| format!("{l} 1:1\n")).collect();
    let back = maxmargin::io::libsvm::read_from(
        again.as_bytes(),
        "again".as_ref(),
        maxmargin::io::multilabel::parse_label_set,
    )
    .unwrap();
    assert_eq!(back.labels[2], Vec::<u32>::new());
    assert_eq!(back.labels[0], vec![0]);
}

#[test]
fn a_cache_trains_and_evaluates_as_its_text_does() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let cache = tmp.path().join("heart.mmc");
    let err = super::maxmargin(&["cache", s(&data), "-o", s(&cache)]);
    assert!(err.status.success());
    assert!(
        String::from_utf8(err.stderr)
            .unwrap()
            .contains("cached 270 rows, 13 features")
    );
    let (a, b) = (tmp.path().join("a.model"), tmp.path().join("b.model"));
    ok(&["train", s(&data), "-o", s(&a), "-q"]);
    ok(&["train", s(&cache), "-o", s(&b), "-q"]);
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert_eq!(
        ok(&["eval", s(&a), s(&cache), "--json"]),
        ok(&["eval", s(&a), s(&data), "--json"])
    );
    assert_eq!(
        ok(&["cv", s(&cache), "-k", "3"]),
        ok(&["cv", s(&data), "-k", "3"])
    );
    let err = fails(
        &["train", "--task", "multilabel", s(&cache), "-o", s(&a)],
        1,
    );
    assert!(err.contains("a cache holds single-label"), "{err}");
}

/// A cache handed to a task that reads text (chains in svm_hmm or CoNLL, graphs, multilabel) is refused by
/// name, not read as bytes ("invalid UTF-8").
#[test]
fn a_cache_is_refused_by_every_reader_of_text() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("heart.mmc");
    ok(&["cache", s(&heart(tmp.path())), "-o", s(&cache)]);
    let model = tmp.path().join("m.model");
    for task in [
        &["--task", "chain"][..],
        &["--task", "chain", "--format", "conll"],
        &["--task", "graph"],
        &["--task", "multilabel"],
    ] {
        let mut args = vec!["train", s(&cache), "-o", s(&model)];
        args.extend(task);
        let err = fails(&args, 1);
        assert!(
            err.contains("a cache holds single-label"),
            "{task:?}: {err}"
        );
    }
}

/// CoNLL text given without `--format conll` is refused at its first label, as before, and pointed to the
/// tagger; LIBSVM rows with a bad label are not.
#[test]
fn conll_text_read_as_rows_points_to_the_tagger() {
    let tmp = tempfile::tempdir().unwrap();
    let conll = tmp.path().join("ner.txt");
    std::fs::write(
        &conll,
        "-DOCSTART- -X- -X- O\n\nPeter NNP B-NP B-PER\nran VBD B-VP O\n",
    )
    .unwrap();
    let model = tmp.path().join("m.model");
    for task in ["binary", "chain", "multiclass"] {
        let err = fails(&["train", s(&conll), "--task", task, "-o", s(&model)], 1);
        assert!(
            err.contains("ner.txt:1:1: label:") && err.contains("--task chain --format conll"),
            "{task}: {err}"
        );
    }
    let rows = tmp.path().join("rows.svm");
    std::fs::write(&rows, "yes 1:0.5 3:1\n").unwrap();
    let err = fails(&["train", s(&rows), "-o", s(&model)], 1);
    assert!(
        err.contains("rows.svm:1:1: label") && !err.contains("CoNLL"),
        "{err}"
    );
}
