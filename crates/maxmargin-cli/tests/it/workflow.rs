//! The guide's decision workflow on a9a, run as a user runs it: C chosen by cross-validation on the
//! training file, the held-out file split into a development half and a sealed test half, calibration and a
//! threshold on the development half, one evaluation on the sealed half. What the commands print is
//! `docs/guide/src/generated/a9a_workflow.txt`, which the guide includes; this test fails when they differ
//! (`MAXMARGIN_BLESS=1` rewrites it). Model bytes are reproducible, so the numbers are too.

use super::shared_data;
use std::io::{BufRead, Write};
use std::path::Path;
use std::process::Command;

/// Runs the command in `dir` with relative paths; returns `$ command` then what it printed (stdout, then
/// stderr), as a user sees it.
fn run(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_maxmargin"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the binary runs");
    assert!(
        out.status.success(),
        "maxmargin {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    format!(
        "$ maxmargin {}\n{}{}",
        args.join(" "),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap()
    )
}

#[test]
fn the_guides_a9a_workflow_prints_what_the_guide_shows() {
    let Some(data) = shared_data() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::copy(data.join("a9a/a9a.gz"), dir.join("a9a.gz")).unwrap();
    // The held-out file, split as the guide's awk lines do: odd lines develop, even lines stay sealed.
    let held =
        flate2::read::MultiGzDecoder::new(std::fs::File::open(data.join("a9a/a9a.t.gz")).unwrap());
    let (mut dev, mut test) = (
        std::fs::File::create(dir.join("dev.svm")).unwrap(),
        std::fs::File::create(dir.join("test.svm")).unwrap(),
    );
    for (i, line) in std::io::BufReader::new(held).lines().enumerate() {
        let target = if i % 2 == 0 { &mut dev } else { &mut test };
        writeln!(target, "{}", line.unwrap()).unwrap();
    }
    let mut text = String::new();
    for args in [
        &[
            "cv",
            "a9a.gz",
            "-k",
            "5",
            "--c-path",
            "0.01,0.1,1,10",
            "--metric",
            "roc_auc",
            "--refit",
            "-o",
            "a9a.model",
        ][..],
        &["calibrate", "a9a.model", "dev.svm", "-o", "a9a.cal.model"],
        &[
            "threshold",
            "a9a.cal.model",
            "dev.svm",
            "--max-flag-rate",
            "0.1",
            "-o",
            "a9a.dec.model",
        ],
        &["eval", "a9a.dec.model", "test.svm"],
    ] {
        text.push_str(&run(dir, args));
        text.push('\n');
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/guide/src/generated/a9a_workflow.txt");
    if std::env::var_os("MAXMARGIN_BLESS").is_some() {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let on_disk = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (MAXMARGIN_BLESS=1 writes it)", path.display()));
    assert_eq!(
        on_disk, text,
        "the guide's workflow output differs from what the commands print now"
    );
}
