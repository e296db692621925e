//! Issue 23: every example in a command's `--help` runs as written and succeeds, so the help cannot drift
//! from what the command does. The examples read a few files this test writes into a scratch folder:
//! heart.svm (200 heart_scale rows), dev.svm (the other 70), heart.csv (heart with a `target` column),
//! iris.svm and two.svm (two features).

use super::*;

/// The subcommands, in the order their examples build on each other (train makes the models the others
/// read; calibrate the model threshold reads).
const COMMANDS: [&str; 13] = [
    "train",
    "predict",
    "eval",
    "cv",
    "calibrate",
    "threshold",
    "inspect",
    "bench-predict",
    "compare",
    "plot",
    "plot-boundary",
    "convert",
    "cache",
];

#[test]
fn issue_23_every_example_in_the_help_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let heart = maxmargin::datasets::HEART_SCALE;
    let lines: Vec<&str> = heart.lines().collect();
    std::fs::write(dir.join("heart.svm"), lines[..200].join("\n") + "\n").unwrap();
    std::fs::write(dir.join("dev.svm"), lines[200..].join("\n") + "\n").unwrap();
    super::csv_and_labels::heart_csv(dir);
    std::fs::write(dir.join("iris.svm"), maxmargin::datasets::IRIS).unwrap();
    let two: String = lines
        .iter()
        .map(|l| {
            let mut t = l.split_whitespace();
            let label = t.next().unwrap();
            let kept: Vec<&str> = t
                .filter(|kv| kv.starts_with("1:") || kv.starts_with("2:"))
                .collect();
            format!("{label} {}\n", kept.join(" "))
        })
        .collect();
    std::fs::write(dir.join("two.svm"), two).unwrap();
    // heart.svm is re-read by train: keep the file the examples name as the 200 rows.
    let mut ran = 0;
    for command in COMMANDS {
        let help = ok(&[command, "--help"]);
        let examples: Vec<&str> = help
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("$ maxmargin "))
            .collect();
        assert!(!examples.is_empty(), "{command} --help has no example");
        for example in examples {
            let args: Vec<&str> = example.split_whitespace().collect();
            let out = Command::new(env!("CARGO_BIN_EXE_maxmargin"))
                .args(&args)
                .current_dir(dir)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "`maxmargin {example}` (from {command} --help) failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            ran += 1;
        }
    }
    // Every command but demo (which writes a folder of figures) is here.
    let top = ok(&["--help"]);
    let listed = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| !["demo", "help"].contains(c))
        .count();
    assert_eq!(listed, COMMANDS.len(), "{top}");
    assert!(ran >= 20, "{ran}");
}
