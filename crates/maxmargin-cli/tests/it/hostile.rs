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
    for args in [
        vec!["train", s(&huge), "--solver", "pegasos"],
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
        assert!(!model.exists(), "{args:?}");
    }
    // Where the solver keeps a finite iterate, the model is finite and says it did not converge.
    for args in [
        vec!["train", s(&huge)],
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
#[test]
fn issue_23_crafted_liblinear_headers_are_refused_naming_the_field() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o.model");
    let huge = "18446744073709551615";
    for (name, header, rest, expected) in [
        (
            "wrap2",
            format!("nr_class 2\nlabel 1 -1\nnr_feature {huge}\nbias 1"),
            "",
            "nr_feature",
        ),
        (
            "wrap3",
            format!("nr_class 3\nlabel 1 -1 2\nnr_feature {huge}\nbias 1"),
            "",
            "nr_feature",
        ),
        (
            "near",
            "nr_class 2\nlabel 1 -1\nnr_feature 18446744073709551614\nbias 1".into(),
            "",
            "weight rows",
        ),
        (
            "inf",
            "nr_class 2\nlabel 1 -1\nnr_feature 1\nbias inf".into(),
            "1 \n2 \n",
            "bias: bias inf must be finite",
        ),
        (
            "nanlabel",
            "nr_class 2\nlabel nan nan\nnr_feature 1\nbias -1".into(),
            "1 \n",
            "label: NaN is not a finite label",
        ),
        (
            "nan3",
            "nr_class 3\nlabel nan nan nan\nnr_feature 1\nbias -1".into(),
            "1 2 3 \n",
            "label: NaN",
        ),
        (
            "over",
            "nr_class 2\nlabel 1 -1\nnr_feature 1\nbias 1e308".into(),
            "1 \n1e10 \n",
            "bias: 1e308 times the bias weight 1e10 is not finite",
        ),
        (
            "twice",
            "nr_class 3\nlabel 1 1 2\nnr_feature 1\nbias -1".into(),
            "1 2 3 \n",
            "a label repeats",
        ),
    ] {
        let path = tmp.path().join(format!("{name}.txt"));
        let text = format!("solver_type L2R_L1LOSS_SVC_DUAL\n{header}\nw\n{rest}");
        std::fs::write(&path, text).unwrap();
        let err = fails(&["convert", s(&path), "-o", s(&out)], 1);
        assert!(
            err.contains(&format!("{name}.txt")) && err.contains(expected),
            "{name}: {err}"
        );
        assert!(!err.contains("panicked"), "{name}: {err}");
        assert!(!out.exists(), "{name}: a model was written");
    }
}

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

/// Issue 23, item 6: the Crammer–Singer dual's dense examples × classes table is refused before it is
/// allocated when it is far beyond what the data needs (20,000 classes × 3 rows asked for 9.6 GB).
#[test]
fn issue_23_a_crammer_singer_table_out_of_proportion_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("many.svm");
    let mut text = String::new();
    for c in 0..4000 {
        for r in 0..3 {
            text.push_str(&format!("{c} 1:{}\n", r + 1));
        }
    }
    std::fs::write(&data, text).unwrap();
    let out = tmp.path().join("m.model");
    let err = fails(
        &["train", "--task", "multiclass", s(&data), "-o", s(&out)],
        1,
    );
    assert!(
        err.contains("12000 × 4000 = 48000000 in") && err.contains("use --solver bcfw or ssg"),
        "{err}"
    );
    assert!(!out.exists());
}

/// Issue 23, items 7 and 8: templates are bounded (macros per line, lines per file, bytes, offsets without
/// wrapping), and every side file a command reads is read with the data reader's line cap or refused by
/// its first bytes (each of these took 4 to 8.6 GB on `/dev/zero`).
#[test]
fn issue_23_templates_and_side_files_are_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    let p = |n: &str| tmp.path().join(n);
    let conll = p("c.txt");
    std::fs::write(&conll, "Confidence NN B-NP\nin IN O\n\n").unwrap();
    let out = p("x.model");
    let macros = vec!["%x[0,0]"; 20_000].join("/");
    for (name, text, expected) in [
        (
            "wide",
            format!("U00:{macros}\n"),
            "20000 macros on one template line; at most 16",
        ),
        ("wrap", "U00:%x[-2147483648,0]\n".to_string(), "|row| <= 64"),
        (
            "many",
            "U:%x[0,0]\n".repeat(5000),
            "more than 4096 unigram template lines",
        ),
    ] {
        let t = p(name);
        std::fs::write(&t, text).unwrap();
        let err = fails(
            &[
                "train",
                "--task",
                "chain",
                "--format",
                "conll",
                s(&conll),
                "-o",
                s(&out),
                "--template",
                s(&t),
            ],
            1,
        );
        assert!(
            err.contains(name) && err.contains(expected),
            "{name}: {err}"
        );
    }
    if !std::path::Path::new("/dev/zero").exists() {
        return;
    }
    let heart = super::heart(tmp.path());
    let model = p("h.model");
    ok(&["train", s(&heart), "-o", s(&model), "-q"]);
    let (h, m, o) = (s(&heart), s(&model), s(&out));
    let z = "/dev/zero";
    for (args, expected) in [
        (
            &["train", h, "-o", o, "--sample-weights", z][..],
            "/dev/zero:1:1: line: longer than 64 MiB",
        ),
        (
            &["eval", m, h, "--groups", z][..],
            "/dev/zero:1:1: line: longer than 64 MiB",
        ),
        (
            &["plot", z, "-o", o][..],
            "/dev/zero:1:1: line: longer than 64 MiB",
        ),
        (
            &["predict", z, h][..],
            "/dev/zero: not a maxmargin model file",
        ),
        (
            &["train", h, "-o", o, "--resume", z][..],
            "/dev/zero: not a maxmargin model file",
        ),
        (
            &["train", h, "-o", o, "--warm-start", z][..],
            "/dev/zero: not a maxmargin model file",
        ),
        (
            &[
                "train",
                "--task",
                "chain",
                "--format",
                "conll",
                s(&conll),
                "-o",
                o,
                "--template",
                z,
            ][..],
            "/dev/zero:1:1: template: longer than 1024 KiB",
        ),
    ] {
        let err = fails(args, 1);
        assert!(err.contains(expected), "{args:?}: {err}");
    }
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

/// Issue 23, item 9: values a figure cannot draw are refused naming the record or the row (a trace with an
/// objective of 1.7e308 beside 0, and `plot-boundary` on a row `1 1:1.7e308 2:0`, hung at 100% CPU).
#[test]
fn issue_23_figures_of_values_too_large_to_draw_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let p = |n: &str| tmp.path().join(n);
    std::fs::write(
        p("t.jsonl"),
        "{\"iteration\":1,\"epoch\":1.0,\"seconds\":0.1,\"objective\":1.7e308}\n\
         {\"iteration\":2,\"epoch\":2.0,\"seconds\":0.2,\"objective\":0}\n{\"stop\":\"gap\"}\n",
    )
    .unwrap();
    let (trace, svg) = (p("t.jsonl"), p("t.svg"));
    let err = fails(&["plot", s(&trace), "-o", s(&svg), "--y", "primal"], 1);
    assert!(
        err.contains("record 1: (1e0, 1.7e308) cannot be drawn"),
        "{err}"
    );
    std::fs::write(p("b.svm"), "1 1:1.7e308 2:0\n-1 1:0 2:0\n").unwrap();
    std::fs::write(p("ok.svm"), "1 1:1 2:0\n-1 1:0 2:0\n").unwrap();
    let (data, fine, model) = (p("b.svm"), p("ok.svm"), p("b.model"));
    ok(&["train", s(&fine), "-o", s(&model), "-q"]);
    let err = fails(&["plot-boundary", s(&model), s(&data), "-o", s(&svg)], 1);
    assert!(
        err.contains("b.svm:1:1: features: (1.7e308, 0e0) cannot be drawn"),
        "{err}"
    );
    assert!(!svg.exists());
}

/// Issue 23, item 10: a checkpoint whose payload was edited and whose CRC was recomputed is an error or a
/// run, never a panic (an index out of bounds in the vector code, and in Crammer–Singer's and BCFW's state).
#[test]
fn issue_23_edited_checkpoints_with_a_forged_checksum_never_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let heart = super::heart(tmp.path());
    let iris = tmp.path().join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    let ck = tmp.path().join("c.ck");
    let out = tmp.path().join("m.model");
    let runs: [(&std::path::Path, &str, &[&str]); 4] = [
        (&heart, "--epochs", &[]),
        (&heart, "--epochs", &["--solver", "pegasos"]),
        (&iris, "--max-passes", &["--task", "multiclass"]),
        (
            &iris,
            "--max-passes",
            &["--task", "multiclass", "--solver", "bcfw"],
        ),
    ];
    for (data, budget, flags) in runs {
        let mut first = vec!["train", s(data), "-o", s(&out), "-q", budget, "2"];
        first.extend_from_slice(flags);
        first.extend_from_slice(&["--checkpoint", s(&ck)]);
        ok(&first);
        let good = std::fs::read(&ck).unwrap();
        // The payload sits between the header (ending in its 8-byte length) and the 4-byte CRC at the end.
        let end = good.len() - 4;
        let start = (8..200)
            .find(|&p| {
                let len = u64::from_le_bytes(good[p - 8..p].try_into().unwrap());
                len == (end - p) as u64
            })
            .expect("a bincode checkpoint");
        let mut lcg = maxmargin::core::testing::Lcg::new(7);
        for _ in 0..60 {
            let mut bad = good.clone();
            for _ in 0..3 {
                let at = start + (lcg.unit() * (end - start) as f64) as usize % (end - start);
                bad[at] = [0xff, 0x00, 0x7f, 0x80][(lcg.unit() * 4.0) as usize % 4];
            }
            let crc = crc32fast::hash(&bad[start..end]);
            bad[end..].copy_from_slice(&crc.to_le_bytes());
            std::fs::write(&ck, &bad).unwrap();
            let mut args = vec!["train", s(data), "-o", s(&out), "-q", budget, "4"];
            args.extend_from_slice(flags);
            args.extend_from_slice(&["--resume", s(&ck)]);
            let o = super::maxmargin(&args);
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                !err.contains("panicked") && o.status.code().is_some_and(|c| c <= 1),
                "{flags:?}: {err}"
            );
        }
    }
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
