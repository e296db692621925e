//! Bad input and outputs that cannot be written: one clear line, never a destroyed or half-written file,
//! long lines, lying gzip trailers and crafted model sizes.

use super::*;

#[test]
fn bad_input_is_one_clear_line() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.svm");
    std::fs::write(&bad, "+1 1:0.5\n-1 2:abc\n").unwrap();
    let model = tmp.path().join("m.model");
    let err = fails(&["train", s(&bad), "-o", s(&model)], 1);
    assert!(
        err.contains("bad.svm:2:4: feature value: \"abc\" is not a number"),
        "{err}"
    );
    assert!(!model.exists(), "no model is written on error");

    let one = tmp.path().join("one.svm");
    std::fs::write(&one, "1 1:1\n1 2:1\n").unwrap();
    let err = fails(&["train", s(&one), "-o", s(&model)], 1);
    assert!(err.contains("exactly two classes"), "{err}");

    let err = fails(&["train", "/no/such/file.svm", "-o", s(&model)], 1);
    assert!(err.contains("/no/such/file.svm"), "{err}");

    let data = heart(tmp.path());
    let err = fails(&["train", s(&data), "-o", s(&model), "--lambda", "0"], 1);
    assert!(
        err.contains("lambda must be positive and finite, got 0"),
        "{err}"
    );
    let err = fails(&["train", s(&data), "-o", s(&model), "--step", "fast"], 2);
    assert!(err.contains("step rule"), "{err}");
    fails(
        &[
            "train",
            s(&data),
            "-o",
            s(&model),
            "--lambda",
            "1",
            "-c",
            "1",
        ],
        2,
    );

    // A model that is not one, and a truncated one.
    let err = fails(&["predict", s(&bad), s(&data)], 1);
    assert!(err.contains("not a maxmargin model file"), "{err}");
    ok(&["train", s(&data), "-o", s(&model), "--quiet"]);
    let bytes = std::fs::read(&model).unwrap();
    std::fs::write(&model, &bytes[..bytes.len() / 2]).unwrap();
    let err = fails(&["eval", s(&model), s(&data)], 1);
    assert!(err.contains("truncated"), "{err}");

    // Training over an existing model with bad data leaves the old model whole.
    std::fs::write(&model, &bytes).unwrap();
    fails(&["train", s(&bad), "-o", s(&model)], 1);
    assert_eq!(std::fs::read(&model).unwrap(), bytes);
}
/// Output errors are errors, never panics: a full device is one `error:` line and status 1, a closed pipe
/// ends `predict` and `eval` quietly with status 0, a full standard error does not stop training.
#[test]
fn output_errors_are_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let model = tmp.path().join("m.model");
    ok(&["train", s(&data), "-o", s(&model), "-q"]);
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    for args in [
        vec!["eval", s(&model), s(&data)],
        vec!["eval", s(&model), s(&data), "--json"],
        vec!["cv", s(&data)],
        vec!["demo", "--out", s(&tmp.path().join("demo"))],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_maxmargin"))
            .args(&args)
            .stdout(full())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.starts_with("error: writing to standard output"),
            "{err}"
        );
    }
    let out = Command::new(env!("CARGO_BIN_EXE_maxmargin"))
        .args(["train", s(&data), "-o", s(&model), "--solver", "pegasos"])
        .stderr(full())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    // A reader that goes away after one line.
    let big = tmp.path().join("big.svm");
    std::fs::write(&big, maxmargin::datasets::HEART_SCALE.repeat(50)).unwrap();
    for sub in ["predict", "eval"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_maxmargin"))
            .args([sub, s(&model), s(&big)])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{sub}");
        assert!(
            out.stderr.is_empty(),
            "{sub}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
/// Writing never destroys what stands at the path: a device or directory is refused, a symlink is written
/// through to its target, a missing directory is named; files follow the umask.
#[test]
fn writes_that_never_destroy() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let err = fails(&["train", s(&data), "-o", "/dev/null", "-q"], 1);
    assert!(err.contains("/dev/null: not a regular file"), "{err}");
    let err = fails(&["train", s(&data), "-o", s(tmp.path()), "-q"], 1);
    assert!(err.contains("not a regular file"), "{err}");
    let target = tmp.path().join("target.model");
    let link = tmp.path().join("link.model");
    std::fs::write(&target, "old").unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    ok(&["train", s(&data), "-o", s(&link), "-q"]);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(maxmargin::LinearModel::load(&target).is_ok());
    let missing = tmp.path().join("no/such/dir/m.model");
    let err = fails(&["train", s(&data), "-o", s(&missing), "-q"], 1);
    assert!(
        err.contains("its directory")
            && err.contains("no/such/dir does not exist")
            && !err.contains(".maxmargin-"),
        "{err}"
    );
    // The error of a missing input names it once.
    let err = fails(&["train", "/no/such.svm", "-o", s(&target)], 1);
    assert_eq!(err.matches("No such file").count(), 1, "{err}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
    let umask = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| {
            l.strip_prefix("Umask:")
                .map(|v| u32::from_str_radix(v.trim(), 8).unwrap())
        })
        .unwrap();
    assert_eq!(mode, 0o666 & !umask);
}
/// Reading is linear in the input whatever the line length, a line longer than 64 MiB is an error naming it,
/// a bad token is quoted in at most 80 characters, and a gzip trailer's claimed size is not trusted.
#[test]
fn long_lines_and_lying_trailers() {
    use std::io::Write as _;
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("m.model");
    // One line of 200,000 features (2.4 MB) and a short one: quick, and trains.
    let wide = tmp.path().join("wide.svm");
    let mut text = String::from("+1");
    for j in 1..=200_000 {
        text.push_str(&format!(" {j}:0.5"));
    }
    text.push_str("\n-1 1:1\n");
    std::fs::write(&wide, text).unwrap();
    let start = std::time::Instant::now();
    ok(&["train", s(&wide), "-o", s(&model), "-q"]);
    assert!(start.elapsed().as_secs_f64() < 5.0, "{:?}", start.elapsed());
    // 70 MB without a line end, gzipped: refused at 64 MiB, quickly.
    let zeros = tmp.path().join("zeros.gz");
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&zeros).unwrap(),
        flate2::Compression::fast(),
    );
    let block = vec![b'0'; 1 << 20];
    for _ in 0..70 {
        gz.write_all(&block).unwrap();
    }
    gz.finish().unwrap();
    for task in ["binary", "multiclass", "multilabel", "chain"] {
        let err = fails(&["train", s(&zeros), "--task", task, "-o", s(&model)], 1);
        assert!(
            err.contains("zeros.gz:1:1: line: longer than 64 MiB"),
            "{task}: {err}"
        );
    }
    // A 10 MB bad token is quoted in 80 characters.
    let bad = tmp.path().join("bad.svm");
    std::fs::write(&bad, format!("+1 1:{}\n", "x".repeat(10 << 20))).unwrap();
    let err = fails(&["train", s(&bad), "-o", s(&model)], 1);
    assert!(err.len() < 400, "{} bytes", err.len());
    // A tiny gzip file whose trailer claims 4 GB.
    let liar = tmp.path().join("liar.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(maxmargin::datasets::HEART_SCALE.as_bytes())
        .unwrap();
    let mut bytes = gz.finish().unwrap();
    let n = bytes.len();
    bytes[n - 4..].copy_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(&liar, bytes).unwrap();
    let out = maxmargin(&["train", s(&liar), "-o", s(&model), "-q"]);
    // The stream's own size check may reject it; either way no gigabytes and no panic.
    assert!(matches!(out.status.code(), Some(0) | Some(1)), "{out:?}");
}
/// A crafted JSON model whose label count wraps around the size check is a clear error, not a panic.
#[test]
fn crafted_model_sizes_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (iris, model) = iris_model(tmp.path(), "m.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    m["n_labels"] = serde_json::json!(9_223_372_036_854_775_808u64);
    std::fs::write(&model, m.to_string()).unwrap();
    for cmd in ["predict", "eval"] {
        let err = fails(&[cmd, s(&model), s(&iris)], 1);
        assert!(err.contains("checksum does not match"), "{err}");
    }
    // With the checksum made to match (format 2's rule: sorted keys, which a forger can recompute from the
    // JSON alone), the sizes themselves are checked.
    m["format_version"] = serde_json::json!(2);
    let mut payload = m.as_object().unwrap().clone();
    for k in [
        "format",
        "format_version",
        "kind",
        "crate_version",
        "checksum",
    ] {
        payload.remove(k);
    }
    let crc = crc32fast::hash(&serde_json::to_vec(&payload).unwrap());
    m["checksum"] = serde_json::json!(crc);
    std::fs::write(&model, m.to_string()).unwrap();
    for cmd in ["predict", "eval"] {
        let err = fails(&[cmd, s(&model), s(&iris)], 1);
        assert!(err.contains("inconsistent multiclass model"), "{err}");
    }
}

/// `-` is standard input for one input at most (`predict - -` read the model from it and then found no
/// data), and standard output only for predict's labels (`train -o -` wrote a file named `-`).
#[test]
fn standard_input_and_output_are_refused_where_they_cannot_apply() {
    let err = fails(&["predict", "-", "-"], 1);
    assert!(
        err.contains("MODEL and DATA name standard input (-) together"),
        "{err}"
    );
    let tmp = tempfile::tempdir().unwrap();
    let data = super::heart(tmp.path());
    for args in [
        &["train", s(&data), "-o", "-"][..],
        &["cache", s(&data), "-o", "-"],
        &["train", s(&data), "-o", "m.model", "--trace", "-"],
    ] {
        let err = fails(args, 1);
        assert!(
            err.contains(" -: standard output takes predict's labels only"),
            "{args:?}: {err}"
        );
    }
    assert!(!Path::new("-").exists());
}
