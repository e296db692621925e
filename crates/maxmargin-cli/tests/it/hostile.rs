//! The smaller findings of the hostile-input issue, each as the user met it (see docs/BAD_INPUT.md).

use super::{fails, s};

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
