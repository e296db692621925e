//! BCFW on every core (issue #29): one process's sequential block steps against `--blocks 2` (blocks of
//! examples stepped at once, each against its own copy of `w`, combined by an exact line search), on one
//! thread and on two, each to the default certified 1% gap. Sets: OCR fold 0 (`--lambda 0.01 --bias none`),
//! CoNLL-2000 chunking (the defaults) and the synthetic 100-class set (3,000 rows, `--solver bcfw`, C = 1),
//! with `MAXMARGIN_DATA` for the first two. Whole commands, rounds interleaved; the table gives the median
//! training seconds as `train` prints them, the whole command's, the passes, the objective and the ratio of
//! training seconds to the sequential run on one thread; and whether the two `--blocks 2` runs wrote the
//! same model bytes. `BCFW_BLOCKS_ROUNDS` sets the rounds (default 3).
//!
//! Rerun: `cargo build --release -p maxmargin-cli && MAXMARGIN_DATA=/abs/path/to/shared/data cargo bench -p
//! maxmargin-benches --bench bcfw_blocks`. Output: `target/bench-report/bcfw_blocks.md`.

use maxmargin_benches::{command, data_dir, many_classes, median, out_dir, s, timed_command};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;

/// The runs compared: a name and the flags.
const RUNS: [(&str, &[&str]); 4] = [
    ("sequential, 1 thread", &["--threads", "1"]),
    ("sequential, 2 threads", &["--threads", "2"]),
    ("--blocks 2, 1 thread", &["--blocks", "2", "--threads", "1"]),
    (
        "--blocks 2, 2 threads",
        &["--blocks", "2", "--threads", "2"],
    ),
];

/// What `train` printed: training seconds, passes, objective.
fn summary(stderr: &str) -> Option<(f64, f64, f64)> {
    let line = stderr.lines().find(|l| l.starts_with("trained "))?;
    let after = |key: &str| line.split(key).nth(1);
    let number = |text: &str| {
        let t: String = (text.chars())
            .take_while(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | '-' | '+'))
            .collect();
        t.parse::<f64>().ok()
    };
    let seconds = number(after(" in ")?)?;
    let passes = number(line.split(" (").nth(1)?)?;
    let objective = number(after("objective ")?)?;
    Some((seconds, passes, objective))
}

fn main() {
    let rounds: usize = std::env::var("BCFW_BLOCKS_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let work = out_dir().join("bcfw-blocks");
    let _ = std::fs::create_dir_all(&work);
    let k100 = work.join("k100.train.svm");
    let mut text = String::new();
    for (class, row) in many_classes(3000, 7) {
        let _ = write!(text, "{class}");
        for (j, v) in row {
            let _ = write!(text, " {j}:{v:.3}");
        }
        text.push('\n');
    }
    std::fs::write(&k100, text).expect("write the 100-class set");
    let mut sets: Vec<(&str, Vec<String>)> = Vec::new();
    if let Some(d) = data_dir() {
        let ocr: PathBuf = d.join("ocr_letters/ocr.fold0.svmhmm.gz");
        let conll: PathBuf = d.join("conll2000/train.txt.gz");
        sets.push((
            "OCR fold 0",
            [
                "--task",
                "chain",
                &s(&ocr),
                "--lambda",
                "0.01",
                "--bias",
                "none",
            ]
            .map(String::from)
            .to_vec(),
        ));
        sets.push((
            "CoNLL-2000",
            ["--task", "chain", "--format", "conll", &s(&conll)]
                .map(String::from)
                .to_vec(),
        ));
    }
    sets.push((
        "100 classes",
        ["--task", "multiclass", &s(&k100), "--solver", "bcfw"]
            .map(String::from)
            .to_vec(),
    ));
    let mut md = String::from(
        "| set | run | train s (median) | whole s | passes | objective | × sequential, 1 thread |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for (name, args) in &sets {
        let mut train = vec![Vec::new(); RUNS.len()];
        let mut whole = vec![Vec::new(); RUNS.len()];
        let mut last = vec![(0.0, 0.0); RUNS.len()];
        let mut bytes: Vec<Vec<u8>> = vec![Vec::new(); RUNS.len()];
        for _ in 0..rounds {
            for (k, (_, flags)) in RUNS.iter().enumerate() {
                let model = work.join(format!("model-{k}"));
                let mut cmd = Command::new(command());
                cmd.arg("train")
                    .args(args)
                    .args(*flags)
                    .args(["-o", &s(&model)]);
                let (secs, _, err) = timed_command(cmd);
                let (t, passes, objective) = summary(&err).expect("train's summary line");
                train[k].push(t);
                whole[k].push(secs);
                last[k] = (passes, objective);
                bytes[k] = std::fs::read(&model).unwrap_or_default();
            }
        }
        let base = median(&mut train[0].clone());
        for (k, (run, _)) in RUNS.iter().enumerate() {
            let t = median(&mut train[k]);
            let _ = writeln!(
                md,
                "| {name} | {run} | {t:.2} | {:.2} | {:.2} | {:.6} | {:.2} |",
                median(&mut whole[k]),
                last[k].0,
                last[k].1,
                t / base
            );
        }
        let _ = writeln!(
            md,
            "| {name} | --blocks 2: the same model bytes on 1 and 2 threads | {} | | | | |",
            bytes[2] == bytes[3] && !bytes[2].is_empty()
        );
    }
    println!("{md}");
    let out = out_dir().join("bcfw_blocks.md");
    std::fs::write(&out, &md).expect("write the report");
    eprintln!("wrote {}", out.display());
}
