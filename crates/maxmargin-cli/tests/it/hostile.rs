//! The smaller findings of the hostile-input issue, each as the user met it (see docs/BAD_INPUT.md).

use super::{fails, ok, s};

#[test]
fn empty_structured_files_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    let out = tmp.path().join("m.model");
    for task in ["binary", "multiclass", "multilabel", "chain"] {
        let err = fails(&["train", s(&empty), "--task", task, "-o", s(&out)], 1);
        assert!(
            err.contains(&format!("{}: no examples", s(&empty))),
            "{task}: {err}"
        );
    }
    assert!(!out.exists());
}

#[test]
fn invalid_utf8_names_the_line_once_in_every_format() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.txt");
    std::fs::write(&bad, b"1 qid:1 1:1\n1 qid:1 \xff2:1\n").unwrap();
    let out = tmp.path().join("m.model");
    for task in ["binary", "multiclass", "multilabel", "chain"] {
        let err = fails(&["train", s(&bad), "--task", task, "-o", s(&out)], 1);
        assert!(
            err.contains("bad.txt:2:9: text: invalid UTF-8"),
            "{task}: {err}"
        );
        assert_eq!(err.matches("UTF-8").count(), 1, "{err}");
    }
}

#[test]
fn format_version_zero_is_not_called_newer() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("d.svm");
    std::fs::write(&data, "+1 1:1\n-1 1:-1\n").unwrap();
    let model = tmp.path().join("m.json");
    super::ok(&["train", s(&data), "-o", s(&model), "--quiet"]);
    let text = std::fs::read_to_string(&model).unwrap();
    let now = maxmargin::io::model_file::FORMAT_VERSION;
    let v0 = text.replacen(
        &format!("\"format_version\": {now}"),
        "\"format_version\": 0",
        1,
    );
    assert_ne!(text, v0);
    std::fs::write(&model, v0).unwrap();
    let err = fails(&["predict", s(&model), s(&data)], 1);
    assert!(
        err.contains("format version 0 is not one this build reads"),
        "{err}"
    );
    assert!(!err.contains("newer"), "{err}");
}

/// Finding 3: values or parameters too large for `f64` end in an error naming the step, or in a finite
/// model; never a NaN model written with status 0.
#[test]
fn non_finite_training_is_an_error_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let huge = tmp.path().join("huge.svm");
    std::fs::write(&huge, "+1 1:1e308\n-1 1:-1e308\n").unwrap();
    let heart = super::heart(tmp.path());
    let model = tmp.path().join("m.model");
    // Values whose squares overflow are refused by line before any step.
    let err = fails(
        &["train", s(&huge), "--solver", "pegasos", "-o", s(&model)],
        1,
    );
    assert!(
        err.contains("overflow a 64-bit float") && err.contains("line 1 of"),
        "{err}"
    );
    for args in [
        vec![
            "train",
            s(&heart),
            "--solver",
            "pegasos",
            "--lambda",
            "1e-300",
        ],
        vec![
            "train",
            s(&heart),
            "--solver",
            "pegasos",
            "--step",
            "constant:1e300",
        ],
    ] {
        let mut args = args.clone();
        args.extend(["-o", s(&model)]);
        let err = fails(&args, 1);
        assert!(
            err.contains("non-finite objective") && err.contains("by step"),
            "{args:?}: {err}"
        );
        // The data file is named, as errors at one of its lines are.
        assert!(
            err.contains(&format!("error: {}: training produced", args[1])),
            "{args:?}: {err}"
        );
        assert!(!model.exists(), "{args:?}");
    }
    // Where the solver keeps a finite iterate, the model is finite and says it did not converge.
    for args in [
        vec!["train", s(&heart), "--lambda", "1e-300"],
        vec![
            "train",
            s(&heart),
            "--solver",
            "subgradient",
            "--step",
            "constant:1e300",
        ],
    ] {
        let mut args = args.clone();
        args.extend(["-o", s(&model)]);
        let out = super::maxmargin(&args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("not converged"),
            "{args:?}"
        );
        let m = maxmargin::LinearModel::load(&model).unwrap();
        assert!(m.w.iter().all(|v| v.is_finite()) && m.b.is_finite());
    }
}

/// Checkpoint flags that cannot apply are refused, never ignored.
#[test]
fn checkpoint_flags_that_cannot_apply_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let heart = super::heart(tmp.path());
    let iris = tmp.path().join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    let (model, ck) = (tmp.path().join("m.model"), tmp.path().join("run.ck"));
    // A period without a file to write is a usage error.
    fails(
        &[
            "train",
            s(&heart),
            "-o",
            s(&model),
            "--checkpoint-every",
            "1",
        ],
        2,
    );
    // A non-positive period.
    let err = fails(
        &[
            "train",
            s(&heart),
            "-o",
            s(&model),
            "--checkpoint",
            s(&ck),
            "--checkpoint-every",
            "0",
        ],
        1,
    );
    assert!(err.contains("checkpoint-every"), "{err}");
    // One-vs-rest keeps no resumable state.
    let err = fails(
        &[
            "train",
            s(&iris),
            "--task",
            "multiclass",
            "--solver",
            "ovr",
            "-o",
            s(&model),
            "--checkpoint",
            s(&ck),
        ],
        1,
    );
    assert!(err.contains("cannot apply"), "{err}");
    // A warm start and a resume at once.
    super::ok(&[
        "train",
        s(&heart),
        "-o",
        s(&model),
        "--checkpoint",
        s(&ck),
        "-q",
    ]);
    let err = fails(
        &[
            "train",
            s(&heart),
            "-o",
            s(&model),
            "--resume",
            s(&ck),
            "--warm-start",
            s(&ck),
        ],
        1,
    );
    assert!(
        err.contains("cannot apply with a resumed checkpoint"),
        "{err}"
    );
    // A checkpoint of another solver, or made for other data, is named as such.
    let err = fails(
        &[
            "train",
            s(&heart),
            "--solver",
            "pegasos",
            "-o",
            s(&model),
            "--resume",
            s(&ck),
        ],
        1,
    );
    assert!(err.contains("run.ck"), "{err}");
    let err = fails(
        &[
            "train",
            s(&iris),
            "--task",
            "multiclass",
            "-o",
            s(&model),
            "--resume",
            s(&ck),
        ],
        1,
    );
    assert!(err.contains("run.ck"), "{err}");
    // Resuming a run that converged gives its model again.
    let first = std::fs::read(&model).unwrap();
    super::ok(&[
        "train",
        s(&heart),
        "-o",
        s(&model),
        "--checkpoint",
        s(&ck),
        "-q",
    ]);
    let again = tmp.path().join("again.model");
    super::ok(&[
        "train",
        s(&heart),
        "-o",
        s(&again),
        "--resume",
        s(&ck),
        "-q",
    ]);
    assert_eq!(
        std::fs::read(&model).unwrap(),
        std::fs::read(&again).unwrap()
    );
    let _ = first;
}

/// Off a terminal a long run says how it goes, one line per period (10 s by default), unless `--quiet`.
#[test]
fn off_a_terminal_progress_lines_come_at_their_period() {
    let Some(data) = super::shared_data() else {
        return;
    };
    let a9a = data.join("a9a/a9a.gz");
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("m.model");
    let trace = tmp.path().join("t.jsonl");
    let run = |quiet: bool| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_maxmargin"));
        cmd.args(["train", s(&a9a), "--solver", "pegasos", "--epochs", "60"])
            .args(["--trace", s(&trace), "-o", s(&model)])
            .env("MAXMARGIN_PROGRESS_SECONDS", "0.02");
        if quiet {
            cmd.arg("--quiet");
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stderr).unwrap()
    };
    let err = run(false);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("progress: "))
        .collect();
    assert!(lines.len() >= 2, "{err}");
    assert!(lines.iter().all(|l| l.contains(" s, pass ")), "{err}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains(", primal ") && l.contains(", gap ")),
        "{err}"
    );
    assert!(!run(true).contains("progress: "));
}

/// Issue 23, items 1 and 2: a LIBLINEAR header's numbers are untrusted (a size that wraps, labels and a bias
/// that are not finite), and `convert` never writes a model that no command can load.
/// Issue 23, items 3 and 4: a development row whose score is not finite, and development rows of one class
/// only, are refused naming the row or the missing class; nothing is saved.
#[test]
fn issue_23_non_finite_scores_and_one_class_dev_sets_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let p = |n: &str| tmp.path().join(n);
    std::fs::write(
        p("train.svm"),
        "+1 1:0.1 2:0.1\n-1 1:-0.1 2:-0.1\n+1 1:0.2 2:0.1\n-1 1:-0.1 2:-0.3\n",
    )
    .unwrap();
    ok(&[
        "train",
        s(&p("train.svm")),
        "-c",
        "100",
        "-o",
        s(&p("m.model")),
        "-q",
    ]);
    // Line 3 scores ∞ − ∞ = NaN, line 4 scores +∞.
    std::fs::write(
        p("nan.svm"),
        "+1 1:0.1 2:0.1\n-1 1:-0.1 2:-0.1\n+1 1:1e308 2:-1e308\n-1 1:1e308 2:1e308\n",
    )
    .unwrap();
    std::fs::write(p("positive.svm"), "+1 1:0.1 2:0.1\n+1 1:0.3 2:0.2\n").unwrap();
    let out = p("out.model");
    let (model, nan, positive) = (p("m.model"), p("nan.svm"), p("positive.svm"));
    let rules: [&[&str]; 3] = [
        &["calibrate", "--method", "platt"],
        &["calibrate", "--method", "isotonic"],
        &["threshold", "--max-flag-rate", "0.5"],
    ];
    for rule in rules {
        let mut args = vec![rule[0], s(&model), s(&nan)];
        args.extend_from_slice(&rule[1..]);
        args.extend_from_slice(&["-o", s(&out)]);
        let err = fails(&args, 1);
        assert!(
            err.contains(
                "nan.svm:3:1: features: the model scores this row NaN, not a finite number"
            ),
            "{rule:?}: {err}"
        );
        args[2] = s(&positive);
        let err = fails(&args, 1);
        assert!(
            err.contains("positive.svm: no row of class -1"),
            "{rule:?}: {err}"
        );
        assert!(!out.exists(), "{rule:?}");
    }
    // Multiclass one-vs-rest calibration needs rows of every class.
    let (_, iris) = super::iris_model(tmp.path(), "iris.model");
    std::fs::write(
        p("setosa.svm"),
        "1 1:-0.5 2:0.3 3:-0.9 4:-0.9\n1 1:-0.6 2:0.1 3:-0.8 4:-0.9\n",
    )
    .unwrap();
    let setosa = p("setosa.svm");
    let err = fails(&["calibrate", s(&iris), s(&setosa), "-o", s(&out)], 1);
    assert!(err.contains("setosa.svm: no row of class 0"), "{err}");
    assert!(!out.exists());
}

/// Issue 23, item 12: outputs that name one file, or a command's own input, and outputs that cannot be files
/// are refused before any work, and nothing is replaced.
#[test]
fn issue_23_outputs_that_would_replace_an_input_or_each_other_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let heart = super::heart(tmp.path());
    let model = tmp.path().join("m.model");
    ok(&["train", s(&heart), "-o", s(&model), "-q"]);
    let (h, m) = (s(&heart), s(&model));
    let before = (
        std::fs::read(&heart).unwrap(),
        std::fs::read(&model).unwrap(),
    );
    let fresh = tmp.path().join("n.model");
    let n = s(&fresh);
    let dir = s(tmp.path());
    for (args, expected) in [
        (
            &["train", h, "-o", n, "--trace", n][..],
            "-o and --trace both name",
        ),
        (&["train", h, "-o", h][..], "is the command's DATA"),
        (&["predict", m, h, "-o", h][..], "is the command's DATA"),
        (&["predict", m, h, "-o", m][..], "is the command's MODEL"),
        (&["convert", m, "-o", m][..], "is the command's INPUT"),
        (&["calibrate", m, h, "-o", h][..], "is the command's DATA"),
        (
            &["train", h, "-o", dir][..],
            "a directory, not a regular file",
        ),
        (
            &["train", h, "-o", "/no/such/dir/m.model"][..],
            "its directory /no/such/dir does not exist",
        ),
    ] {
        let err = fails(args, 1);
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    assert_eq!(
        (
            std::fs::read(&heart).unwrap(),
            std::fs::read(&model).unwrap()
        ),
        before
    );
    assert!(!fresh.exists());
    // A run may resume from its checkpoint and keep saving there.
    let ck = tmp.path().join("c.ck");
    let c = s(&ck);
    ok(&[
        "train",
        h,
        "-o",
        n,
        "--checkpoint",
        c,
        "--epochs",
        "3",
        "-q",
    ]);
    ok(&["train", h, "-o", n, "--checkpoint", c, "--resume", c, "-q"]);
}

/// Issue 23, item 13: messages that misled now say what the user gave and what is so.
#[test]
fn issue_23_messages_name_what_the_user_gave() {
    let tmp = tempfile::tempdir().unwrap();
    let p = |n: &str| tmp.path().join(n);
    let heart = super::heart(tmp.path());
    let out = p("x.model");
    let err = fails(&["train", s(&heart), "-o", s(&out), "-c", "1e308"], 1);
    assert!(err.contains("C: too large: λ = 1/(C·n) is 0"), "{err}");
    let many: String = (0..100).map(|i| format!("{i} 1:1\n")).collect();
    std::fs::write(p("many.svm"), many).unwrap();
    let err = fails(&["train", s(&p("many.svm")), "-o", s(&out)], 1);
    assert!(err.contains("found at least 9: 0, 1"), "{err}");
    std::fs::write(p("ml.svm"), "4000000000 1:1\n1 1:2\n").unwrap();
    let err = fails(
        &[
            "train",
            "--task",
            "multilabel",
            s(&p("ml.svm")),
            "-o",
            s(&out),
        ],
        1,
    );
    assert!(err.contains("got 4000000000 (the largest in"), "{err}");
    let one: String = std::iter::once("+1 1:1\n".to_string())
        .chain((0..50).map(|i| format!("-1 1:{}\n", i % 3)))
        .collect();
    std::fs::write(p("one.svm"), one).unwrap();
    let err = fails(&["cv", s(&p("one.svm"))], 1);
    assert!(
        err.contains("class 1 has 1 row: the fold that tests it would train without it"),
        "{err}"
    );
}

/// A few kilobytes with hundreds of labels and one far feature index asked for gigabytes of dense weights
/// (an abort on a failed allocation, or the kernel's OOM killer): refused by name before any is allocated,
/// for every task whose model holds a weight vector per label.
#[test]
fn many_labels_over_a_far_feature_are_refused_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.model");
    let rows: String = (0..300).map(|i| format!("{i} 1:1 1000000:1\n")).collect();
    let twice: String = (0..300)
        .map(|i| format!("{i} 1:1 1000000:1\n{i} 1:1 1000000:1\n"))
        .collect();
    let tags: String = (1..=300)
        .map(|i| format!("{i} qid:{i} 1:1 1000000:1\n"))
        .collect();
    for (name, text, task) in [
        ("ml.txt", &rows, "multilabel"),
        ("mc.svm", &twice, "multiclass"),
        ("hmm.dat", &tags, "chain"),
    ] {
        let data = dir.path().join(name);
        std::fs::write(&data, text).unwrap();
        let err = fails(&["train", s(&data), "--task", task, "-o", s(&model)], 1);
        assert!(
            err.contains("features × labels") && err.contains(name),
            "{task}: {err}"
        );
        assert!(!model.exists());
    }
}

/// A UTF-8 byte order mark opening a file (Windows editors and Excel write one) is skipped by every
/// reader: LIBSVM data, sample weights, CoNLL text (where it stuck to the first word) and graph lines give
/// the plain file's model, to the byte.
#[test]
fn a_byte_order_mark_opening_a_file_is_skipped_by_every_reader() {
    let tmp = tempfile::tempdir().unwrap();
    let bom = |name: &str, text: &[u8]| {
        let (plain, marked) = (
            tmp.path().join(name),
            tmp.path().join(format!("bom-{name}")),
        );
        std::fs::write(&plain, text).unwrap();
        std::fs::write(&marked, [b"\xEF\xBB\xBF".as_slice(), text].concat()).unwrap();
        (plain, marked)
    };
    let same = |args: &[&str], a: &std::path::Path, b: &std::path::Path, label: &str| {
        let (ma, mb) = (tmp.path().join("a.model"), tmp.path().join("b.model"));
        let run = |data: &std::path::Path, out: &std::path::Path| {
            let mut all = vec!["train", s(data)];
            all.extend_from_slice(args);
            all.extend_from_slice(&["-o", s(out), "-q"]);
            ok(&all);
        };
        run(a, &ma);
        run(b, &mb);
        assert_eq!(
            std::fs::read(&ma).unwrap(),
            std::fs::read(&mb).unwrap(),
            "{label}"
        );
    };
    let (svm, svm_bom) = bom("d.svm", b"+1 1:1 2:0.5\n-1 1:-1\n+1 2:1\n-1 1:-0.5 2:-1\n");
    same(&[], &svm, &svm_bom, "libsvm");
    let (w, w_bom) = bom("w.txt", b"1\n2\n1\n3\n");
    let (ma, mb) = (tmp.path().join("wa.model"), tmp.path().join("wb.model"));
    ok(&[
        "train",
        s(&svm),
        "--sample-weights",
        s(&w),
        "-o",
        s(&ma),
        "-q",
    ]);
    ok(&[
        "train",
        s(&svm),
        "--sample-weights",
        s(&w_bom),
        "-o",
        s(&mb),
        "-q",
    ]);
    assert_eq!(
        std::fs::read(&ma).unwrap(),
        std::fs::read(&mb).unwrap(),
        "weights"
    );
    let (conll, conll_bom) = bom(
        "c.txt",
        b"He PRP B-NP\nran VBD B-VP\n\nShe PRP B-NP\nsat VBD B-VP\n",
    );
    same(
        &["--task", "chain", "--format", "conll"],
        &conll,
        &conll_bom,
        "conll",
    );
    let (graph, graph_bom) = bom(
        "g.jsonl",
        b"{\"features\": [[1, 0], [0, 1]], \"edges\": [[0, 1]], \"labels\": [0, 1]}\n",
    );
    same(&["--task", "graph"], &graph, &graph_bom, "graph");
}
