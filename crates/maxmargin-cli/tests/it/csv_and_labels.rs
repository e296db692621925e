//! Issue 23's first workflow: CSV data with a header (names kept in the model, columns matched by name),
//! `--pos-label`, a warning when development rows are the training rows, checkpoints that know their rows,
//! and data through a pipe.

use super::*;

/// Heart as CSV: a `target` label column between named features, and the same rows' LIBSVM file.
pub(super) fn heart_csv(dir: &Path) -> (PathBuf, PathBuf) {
    let svm = heart(dir);
    let data = maxmargin::io::libsvm::read(&svm).unwrap();
    let d = data.x.n_features();
    let names: Vec<String> = (1..=d).map(|j| format!("f{j}")).collect();
    let mut text = format!("{},target,{}\n", names[0], names[1..].join(","));
    for (i, row) in data.x.rows().enumerate() {
        let mut v = vec![0.0; d];
        for (j, x) in row.iter() {
            v[j] = x;
        }
        let cells: Vec<String> = v.iter().map(|x| format!("{x:?}")).collect();
        text.push_str(&format!(
            "{},{},{}\n",
            cells[0],
            data.labels[i],
            cells[1..].join(",")
        ));
    }
    let csv = dir.join("heart.csv");
    std::fs::write(&csv, text).unwrap();
    (svm, csv)
}

#[test]
fn issue_23_csv_trains_the_same_model_and_keeps_the_names() {
    let dir = tempfile::tempdir().unwrap();
    let (svm, csv) = heart_csv(dir.path());
    let (m_svm, m_csv) = (dir.path().join("svm.model"), dir.path().join("csv.model"));
    ok(&["train", s(&svm), "-o", s(&m_svm), "-q"]);
    // The label column is named; without it the header is listed.
    let e = fails(&["train", s(&csv), "-o", s(&m_csv)], 1);
    assert!(
        e.contains("no column named \"label\"") && e.contains("f1, target, f2"),
        "{e}"
    );
    ok(&[
        "train",
        s(&csv),
        "-o",
        s(&m_csv),
        "--label-column",
        "target",
        "-q",
    ]);
    let a = maxmargin::LinearModel::load(&m_svm).unwrap();
    let b = maxmargin::LinearModel::load(&m_csv).unwrap();
    assert_eq!(a.w, b.w);
    assert_eq!(b.feature_names()[..2], ["f1".to_string(), "f2".to_string()]);
    assert!(a.feature_names().is_empty());
    // Predictions on the CSV rows (columns reversed, one more, no label column) equal the LIBSVM ones.
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut reordered = String::new();
    for line in text.lines() {
        let mut cells: Vec<&str> = line.split(',').collect();
        cells.remove(1);
        cells.reverse();
        let extra = if reordered.is_empty() { "note" } else { "x" };
        reordered.push_str(&format!("{},{extra}\n", cells.join(",")));
    }
    let new = dir.path().join("new.csv");
    std::fs::write(&new, reordered).unwrap();
    let out = maxmargin(&["predict", s(&m_csv), s(&new)]);
    assert!(out.status.success());
    let warned = String::from_utf8_lossy(&out.stderr);
    assert!(
        warned.contains("1 columns are not features of the model") && warned.contains("note"),
        "{warned}"
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        ok(&["predict", s(&m_svm), s(&svm)])
    );
    // A missing feature is named; a bad cell names its line and column.
    let short = dir.path().join("short.csv");
    std::fs::write(&short, "f1,f2\n1,2\n").unwrap();
    let e = fails(&["predict", s(&m_csv), s(&short)], 1);
    assert!(e.contains("no column \"f3\""), "{e}");
    let bad = dir.path().join("bad.svm");
    std::fs::write(&bad, "f1,target\n1,1\nabc,-1\n").unwrap();
    let e = fails(
        &[
            "train",
            s(&bad),
            "--format",
            "csv",
            "--label-column",
            "target",
            "-o",
            s(&dir.path().join("bad.model")),
        ],
        1,
    );
    assert!(
        e.contains("bad.svm:3:1: feature value: column \"f1\": \"abc\""),
        "{e}"
    );
    // eval and inspect read it too, and inspect names the features.
    let eval = ok(&["eval", s(&m_csv), s(&csv), "--label-column", "target"]);
    assert_eq!(eval, ok(&["eval", s(&m_svm), s(&svm)]));
    let inspect = ok(&["inspect", s(&m_csv), s(&csv), "--label-column", "target"]);
    assert!(
        inspect.contains(" f12:-1.0") && inspect.contains("\n  f12 "),
        "{inspect}"
    );
    assert!(!inspect.contains(" 12:"), "{inspect}");
    // --label-column on LIBSVM data, and CSV where it cannot apply, are refused by name.
    let e = fails(&["eval", s(&m_svm), s(&svm), "--label-column", "y"], 1);
    assert!(e.contains("--label-column applies to CSV data"), "{e}");
    let e = fails(
        &["train", s(&csv), "--task", "multilabel", "-o", s(&m_csv)],
        1,
    );
    assert!(e.contains("applies to --task binary or multiclass"), "{e}");
    let e = fails(&["train", s(&csv), "--stream", "-o", s(&m_csv)], 1);
    assert!(e.contains("on LIBSVM data"), "{e}");
}

#[test]
fn issue_23_pos_label_chooses_the_class_every_command_speaks_of() {
    let dir = tempfile::tempdir().unwrap();
    let data = heart(dir.path());
    let (plus, minus) = (
        dir.path().join("plus.model"),
        dir.path().join("minus.model"),
    );
    ok(&["train", s(&data), "-o", s(&plus), "-q"]);
    ok(&[
        "train",
        s(&data),
        "-o",
        s(&minus),
        "--pos-label",
        "-1",
        "-q",
    ]);
    let m = maxmargin::LinearModel::load(&minus).unwrap();
    assert_eq!(m.labels, [1.0, -1.0]);
    assert_eq!(m.params.positive, Some(-1.0));
    // The same labels predicted; eval of either speaks of -1 when asked.
    assert_eq!(
        ok(&["predict", s(&minus), s(&data)]),
        ok(&["predict", s(&plus), s(&data)])
    );
    let e = ok(&["eval", s(&minus), s(&data)]);
    assert!(e.contains("prevalence of -1: 0.5556"), "{e}");
    assert_eq!(e, ok(&["eval", s(&plus), s(&data), "--pos-label", "-1"]));
    assert_ne!(e, ok(&["eval", s(&plus), s(&data)]));
    // calibrate and threshold save the turned model.
    let cal = dir.path().join("cal.model");
    ok_stderr(&[
        "calibrate",
        s(&plus),
        s(&data),
        "-o",
        s(&cal),
        "--pos-label",
        "-1",
    ]);
    let c = maxmargin::linear::DecisionModel::load(&cal).unwrap();
    assert_eq!(c.model.labels, [1.0, -1.0]);
    let probabilities = ok(&["predict", s(&cal), s(&data), "--probability"]);
    let first: f64 = probabilities
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    // Row 1 is a +1 row the model gets right: its probability of -1 is small.
    assert!(first < 0.5, "{probabilities}");
    let t = dir.path().join("t.model");
    ok_stderr(&[
        "threshold",
        s(&cal),
        s(&data),
        "-o",
        s(&t),
        "--min-recall",
        "0.9",
        "--pos-label",
        "-1",
    ]);
    // A threshold chosen for one class is not turned to the other.
    let e = fails(&["eval", s(&t), s(&data), "--pos-label", "1"], 1);
    assert!(
        e.contains("threshold was fitted with -1 as the positive label"),
        "{e}"
    );
    // A label the data lacks, and tasks without a positive class, are refused by name.
    let e = fails(&["train", s(&data), "-o", s(&plus), "--pos-label", "2"], 1);
    assert!(
        e.contains("--pos-label 2 is not one of its two labels (-1 and 1)"),
        "{e}"
    );
    let (iris, iris_model) = iris_model(dir.path(), "iris.model");
    let e = fails(&["eval", s(&iris_model), s(&iris), "--pos-label", "1"], 1);
    assert!(e.contains("--pos-label applies to binary models"), "{e}");
    let e = fails(
        &[
            "train",
            s(&iris),
            "--task",
            "multiclass",
            "--pos-label",
            "1",
            "-o",
            s(&iris_model),
        ],
        1,
    );
    assert!(e.contains("--pos-label"), "{e}");
}

#[test]
fn issue_23_development_rows_that_are_the_training_rows_are_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let data = heart(dir.path());
    let model = dir.path().join("h.model");
    ok(&["train", s(&data), "-o", s(&model), "-q"]);
    let out = dir.path().join("out.model");
    let warned = ok_stderr(&["calibrate", s(&model), s(&data), "-o", s(&out)]);
    assert!(
        warned.contains("warning:") && warned.contains("holds the very rows"),
        "{warned}"
    );
    // A part of the training rows, shuffled: still warned, as an estimate.
    let text = maxmargin::datasets::HEART_SCALE;
    let mut lines: Vec<&str> = text.lines().take(120).collect();
    lines.reverse();
    let part = dir.path().join("part.svm");
    std::fs::write(&part, lines.join("\n") + "\n").unwrap();
    let warned = ok_stderr(&[
        "threshold",
        s(&model),
        s(&part),
        "-o",
        s(&out),
        "--max-flag-rate",
        "0.3",
    ]);
    assert!(warned.contains("about 100% of the rows"), "{warned}");
    // Rows the model has not seen: no warning.
    let (train, dev) = (dir.path().join("train.svm"), dir.path().join("dev.svm"));
    let all: Vec<&str> = text.lines().collect();
    std::fs::write(&train, all[..200].join("\n") + "\n").unwrap();
    std::fs::write(&dev, all[200..].join("\n") + "\n").unwrap();
    ok(&["train", s(&train), "-o", s(&model), "-q"]);
    let quiet = ok_stderr(&["calibrate", s(&model), s(&dev), "-o", s(&out)]);
    assert!(!quiet.contains("warning"), "{quiet}");
    // Multiclass models too.
    let (iris, iris_model) = iris_model(dir.path(), "iris.model");
    let warned = ok_stderr(&["calibrate", s(&iris_model), s(&iris), "-o", s(&out)]);
    assert!(warned.contains("holds the very rows"), "{warned}");
}

#[test]
fn issue_23_a_checkpoint_resumes_only_on_its_own_rows() {
    let dir = tempfile::tempdir().unwrap();
    let data = heart(dir.path());
    // The same file with every label flipped: same shape, other rows.
    let flipped = dir.path().join("flipped.svm");
    let text: String = maxmargin::datasets::HEART_SCALE
        .lines()
        .map(|l| match l.strip_prefix("+1") {
            Some(rest) => format!("-1{rest}\n"),
            None => format!("+1{}\n", l.strip_prefix("-1").unwrap()),
        })
        .collect();
    std::fs::write(&flipped, text).unwrap();
    let (ck, m) = (dir.path().join("run.ck"), dir.path().join("m.model"));
    for task in [
        &["--epochs", "2"][..],
        &["--task", "multiclass", "--max-passes", "2"][..],
    ] {
        let mut args = vec!["train", s(&data), "-o", s(&m), "--checkpoint", s(&ck), "-q"];
        args.extend_from_slice(task);
        maxmargin(&args);
        assert!(ck.exists());
        let mut again = vec!["train", s(&flipped), "-o", s(&m), "--resume", s(&ck)];
        again.extend_from_slice(task);
        let e = fails(&again, 1);
        assert!(
            e.contains("checkpoint made for other examples than these (the same number, 270"),
            "{task:?}: {e}"
        );
        // With its own rows it resumes.
        let mut own = vec!["train", s(&data), "-o", s(&m), "--resume", s(&ck), "-q"];
        own.extend_from_slice(task);
        ok(&own);
        // --pos-label changes the targets, so the same file with the other positive class is refused too.
        if task.len() == 2 {
            let mut turned = own.clone();
            turned.extend_from_slice(&["--pos-label", "-1"]);
            let e = fails(&turned, 1);
            assert!(e.contains("positive"), "{e}");
        }
        std::fs::remove_file(&ck).unwrap();
    }
}

#[test]
fn issue_23_data_and_models_through_a_pipe_are_read_whole() {
    // A shell's `<(zcat d.gz)` is a pipe: peeking at it for a cache's or gzip's magic bytes lost them
    // (`label 8333 is neither class`).
    let dir = tempfile::tempdir().unwrap();
    let data = heart(dir.path());
    let model = dir.path().join("h.model");
    ok(&["train", s(&data), "-o", s(&model), "-q"]);
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "{} eval {} <(cat {})",
            env!("CARGO_BIN_EXE_maxmargin"),
            s(&model),
            s(&data)
        ))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        ok(&["eval", s(&model), s(&data)])
    );
    // A model through a pipe, or on standard input as `-`, is read once: the header that picks the command's
    // path and the model it loads are the same bytes (the second read of the pipe found nothing: "not a
    // maxmargin model file").
    let bin = env!("CARGO_BIN_EXE_maxmargin");
    let (m, d) = (s(&model), s(&data));
    for script in [
        format!("{bin} predict <(cat {m}) {d}"),
        format!("cat {m} | {bin} predict - {d}"),
    ] {
        let out = Command::new("bash")
            .arg("-c")
            .arg(&script)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{script}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            ok(&["predict", m, d]),
            "{script}"
        );
    }
}

/// `--label-column` names a CSV column: data that is never CSV (svm_hmm, multilabel, graph JSON lines) is
/// refused with it, naming the file and its kind, where the flag was silently ignored.
#[test]
fn label_column_is_refused_for_data_that_is_never_csv() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/p1");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("m.model");
    for (task, file, kind) in [
        ("chain", "iris-chain.svmhmm", "svm_hmm"),
        ("multilabel", "iris-multilabel.svm", "multilabel"),
    ] {
        let data = fixtures.join(file);
        let err = fails(
            &[
                "train",
                "--task",
                task,
                s(&data),
                "--label-column",
                "y",
                "-o",
                s(&out),
            ],
            1,
        );
        assert!(
            err.contains(file) && err.contains(&format!("not to {kind} data")),
            "{task}: {err}"
        );
        assert!(!out.exists());
        ok(&["train", "--task", task, s(&data), "-o", s(&out), "-q"]);
        for command in ["predict", "eval"] {
            let err = fails(&[command, s(&out), s(&data), "--label-column", "y"], 1);
            assert!(
                err.contains(&format!("not to {kind} data")),
                "{command}: {err}"
            );
        }
        std::fs::remove_file(&out).unwrap();
    }
}

/// A `--label-column` that names one of the model's features would read that feature as the label and
/// leave it at 0 unsaid: refused, naming the column. An empty value after a colon is called missing, not a
/// missing label.
#[test]
fn a_label_column_that_is_a_model_feature_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, model) = (tmp.path().join("a.csv"), tmp.path().join("m.model"));
    std::fs::write(
        &data,
        "label,x,y\n1,0.5,100\n-1,0.2,-100\n1,0.4,90\n-1,0.1,-80\n",
    )
    .unwrap();
    ok(&["train", s(&data), "-o", s(&model), "-q"]);
    for command in ["predict", "eval"] {
        let err = fails(&[command, s(&model), s(&data), "--label-column", "y"], 1);
        assert!(
            err.contains("a.csv: the label column \"y\" is a feature of the model"),
            "{command}: {err}"
        );
    }
    let svm = tmp.path().join("m.svm");
    std::fs::write(&svm, "1 1:\n-1 1:2\n").unwrap();
    let err = fails(&["train", s(&svm), "-o", s(&model)], 1);
    assert!(
        err.contains("m.svm:1:3: feature value: missing: the value after the colon is empty"),
        "{err}"
    );
    // A quote never closed in the header (it said "no examples").
    std::fs::write(&data, "label,x,\"y\n1,0.5,1\n-1,0.2,0\n").unwrap();
    let err = fails(&["train", s(&data), "-o", s(&model)], 1);
    assert!(err.contains("a.csv:1:3: header: a quote opened"), "{err}");
}

/// A model of numbered features on CSV columns, or of named columns on LIBSVM data, is matched by
/// position, and a warning says so.
#[test]
fn models_and_data_that_cannot_match_by_name_are_warned_of() {
    let tmp = tempfile::tempdir().unwrap();
    let path = |name: &str| tmp.path().join(name);
    std::fs::write(path("named.csv"), "a,b,label\n1,2,1\n3,4,-1\n5,6,1\n").unwrap();
    std::fs::write(path("numbered.svm"), "1 1:1 2:2\n-1 1:3 2:4\n1 1:5 2:6\n").unwrap();
    for (train, test, says) in [
        ("numbered.svm", "named.csv", "without feature names"),
        ("named.csv", "numbered.svm", "named CSV columns (a, ...)"),
    ] {
        let model = path(&format!("{train}.model"));
        ok(&["train", s(&path(train)), "-o", s(&model), "-q"]);
        for command in ["predict", "eval"] {
            let stderr = ok_stderr(&[command, s(&model), s(&path(test))]);
            assert!(
                stderr.contains(says),
                "{train} on {test}, {command}: {stderr}"
            );
        }
        let same = ok_stderr(&["predict", s(&model), s(&path(train))]);
        assert!(!same.contains("warning"), "{train}: {same}");
    }
}

/// A model trained on CSV reads CSV when `--format` is not given, whatever the file's name (a `.txt`
/// header file was read as LIBSVM: `"label,a,b,c" is not a number`); a model trained on LIBSVM given such a
/// file says to pass `--format csv`.
#[test]
fn a_model_trained_on_csv_reads_csv_without_format() {
    let tmp = tempfile::tempdir().unwrap();
    let path = |name: &str| tmp.path().join(name);
    let rows = "label,a,b\n1,2,0\n-1,0,2\n1,3,1\n-1,1,3\n1,2,1\n-1,0,1\n";
    std::fs::write(path("d.txt"), rows).unwrap();
    std::fs::write(path("d.csv"), rows).unwrap();
    let model = path("csv.model");
    ok(&[
        "train",
        s(&path("d.txt")),
        "--format",
        "csv",
        "-o",
        s(&model),
        "-q",
    ]);
    let given = ok(&["predict", s(&model), s(&path("d.csv"))]);
    assert_eq!(given.lines().count(), 6, "{given}");
    let out = maxmargin(&["predict", s(&model), s(&path("d.txt"))]);
    assert!(out.status.success(), "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
    assert_eq!(String::from_utf8(out.stdout).unwrap(), given);
    let e = ok(&["eval", s(&model), s(&path("d.txt")), "--json"]);
    assert!(e.contains("\"n\":6") || e.contains("\"examples\":6"), "{e}");
    // --format libsvm still reads LIBSVM.
    let err = fails(
        &[
            "predict",
            s(&model),
            s(&path("d.txt")),
            "--format",
            "libsvm",
        ],
        1,
    );
    assert!(err.contains("d.txt:1:1: label"), "{err}");
    // A LIBSVM model: the header's line is named, with the flag that reads it.
    std::fs::write(path("d.svm"), "1 1:2\n-1 2:2\n1 1:3 2:1\n-1 1:1 2:3\n").unwrap();
    let lib = path("svm.model");
    ok(&["train", s(&path("d.svm")), "-o", s(&lib), "-q"]);
    let err = fails(&["predict", s(&lib), s(&path("d.txt"))], 1);
    assert!(
        err.contains("d.txt:1:1: label: \"label,a,b\" is not a number")
            && err.contains("looks like a CSV header: pass --format csv"),
        "{err}"
    );
}

/// A model trained with `--label-column y` reads its labels from `y` in `eval` and `predict` without the flag
/// again (a helper's probe: the default `label` was looked for); the flag still names another column.
#[test]
fn eval_and_predict_read_the_label_column_the_model_was_trained_with() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("d.csv");
    std::fs::write(
        &data,
        "a,b,y\n1,0,1\n0,1,-1\n2,0,1\n0,2,-1\n1.5,0.1,1\n0.2,1.4,-1\n",
    )
    .unwrap();
    let model = tmp.path().join("m.model");
    ok(&[
        "train",
        s(&data),
        "--label-column",
        "y",
        "-o",
        s(&model),
        "-q",
    ]);
    let e = ok(&["eval", s(&model), s(&data), "--json"]);
    assert!(e.contains("\"accuracy\":1"), "{e}");
    assert_eq!(ok(&["predict", s(&model), s(&data)]).lines().count(), 6);
    // Rows without the label column are predicted as before.
    let rows = tmp.path().join("rows.csv");
    std::fs::write(&rows, "a,b\n1,0\n0,1\n").unwrap();
    assert_eq!(ok(&["predict", s(&model), s(&rows)]), "1\n-1\n");
    let err = fails(&["eval", s(&model), s(&data), "--label-column", "a"], 1);
    assert!(
        err.contains("the label column \"a\" is a feature of the model"),
        "{err}"
    );
}
