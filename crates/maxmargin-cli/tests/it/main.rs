//! The `maxmargin` binary, run as a user runs it: one file per command or theme, the helpers here.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod approx;
mod convert;
mod crafted;
mod csv_and_labels;
mod cv;
mod decisions;
mod demo;
mod format3;
mod graph;
mod groups;
mod help;
mod hostile;
mod inputs;
mod inspect;
mod kernel;
mod latent;
mod latent_chain;
mod newton;
mod outputs;
mod p1;
mod pictures;
mod predict;
mod ranks;
mod rescaling;
mod resume;
mod scores;
mod second_order;
mod stream;
mod structured;
mod tagger;
mod train;
mod trial;
mod weights;
mod worked;
mod workflow;

fn maxmargin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_maxmargin"))
        .args(args)
        .output()
        .expect("the binary runs")
}
fn ok(args: &[&str]) -> String {
    let out = maxmargin(args);
    assert!(
        out.status.success(),
        "maxmargin {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
/// Runs a failing command and returns its stderr, checking the exit code and that it is one line.
fn fails(args: &[&str], code: i32) -> String {
    let out = maxmargin(args);
    assert_eq!(
        out.status.code(),
        Some(code),
        "maxmargin {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all = String::from_utf8(out.stderr).unwrap();
    // A warning printed before the work began (the scaling note) may come first; the error is one line.
    let err: String = all
        .lines()
        .skip_while(|l| l.starts_with("warning: "))
        .map(|l| format!("{l}\n"))
        .collect();
    if code == 1 {
        assert_eq!(err.trim_end().lines().count(), 1, "not one line: {all}");
        assert!(err.starts_with("error: "), "{all}");
    }
    err
}
fn shared_data() -> Option<PathBuf> {
    maxmargin::testing::shared_data(env!("CARGO_MANIFEST_DIR"))
}
fn heart(dir: &Path) -> PathBuf {
    let p = dir.join("heart.svm");
    std::fs::write(&p, maxmargin::datasets::HEART_SCALE).unwrap();
    p
}
/// Iris written to `dir`, and a multiclass model trained on it (default flags) saved as `dir/name`.
fn iris_model(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let iris = dir.join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    let model = dir.join(name);
    ok(&[
        "train",
        "--task",
        "multiclass",
        s(&iris),
        "-o",
        s(&model),
        "-q",
    ]);
    (iris, model)
}
fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}
/// Runs a command that succeeds and returns its stderr.
fn ok_stderr(args: &[&str]) -> String {
    let out = maxmargin(args);
    assert!(
        out.status.success(),
        "maxmargin {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stderr).unwrap()
}
