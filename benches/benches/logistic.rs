//! Logistic regression against LIBLINEAR's dual solver (`liblinear-train -s 7`), whole commands side by side on
//! every binary set found in `MAXMARGIN_DATA`, at C = 1 with the bias as a regularized feature (`-B 1`).
//!
//! - **Optimum.** Both driven to ε = 10⁻⁸; each model's primal objective is computed by one evaluator (ours,
//!   on the file's weights), and their relative difference reported with our certified gap.
//! - **Time.** At LIBLINEAR's default ε = 0.1 and at 0.01: parse, train and save, runs interleaved (ours,
//!   theirs, …), 5 of each, medians and the ratio ours/LIBLINEAR; each run's objective relative to the tight
//!   one says whether the two stop at the same precision.
//!
//! Output: `target/bench-report/logistic.{md,json}`. Needs the release command and `liblinear-train` on PATH
//! (`apt-get install liblinear-tools`); without LIBLINEAR it reports our side only.

use maxmargin::core::hinge::logistic;
use maxmargin::io::libsvm::{self, LabeledData};
use maxmargin_benches::{command, data_dir, liblinear, median, out_dir, s};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const C: f64 = 1.0;
const ROUNDS: usize = 5;
const TIMED_EPSILONS: [f64; 2] = [0.1, 0.01];
const SETS: [&str; 6] = [
    "heart_scale/heart_scale",
    "breast-cancer_scale/breast-cancer_scale",
    "mushrooms/mushrooms",
    "phishing/phishing.gz",
    "a9a/a9a.gz",
    "reuters_lasvm/reuters.trn.gz",
];

#[derive(Serialize)]
struct Timed {
    epsilon: f64,
    ours_seconds: f64,
    theirs_seconds: Option<f64>,
    ratio: Option<f64>,
    /// Each run's objective relative to LIBLINEAR's tight one (ours when LIBLINEAR is absent).
    ours_relative: f64,
    theirs_relative: Option<f64>,
}

#[derive(Serialize)]
struct Row {
    data: String,
    rows: usize,
    features: usize,
    ours_objective: f64,
    ours_gap: Option<f64>,
    theirs_objective: Option<f64>,
    /// (ours − LIBLINEAR's) / LIBLINEAR's, both at ε = 1e-8.
    relative_difference: Option<f64>,
    timed: Vec<Timed>,
}

/// The λ-form logistic objective of weights `(w, b)` (b a regularized feature), with `y = +1` for `positive`.
fn objective(data: &LabeledData, w: &[f64], b: f64, positive: f64) -> f64 {
    let n = data.n_samples() as f64;
    let lambda = 1.0 / (C * n);
    let loss: f64 = data
        .x
        .rows()
        .zip(&data.labels)
        .map(|(r, &l)| {
            let y = if l == positive { 1.0 } else { -1.0 };
            logistic(y * (r.dot(w) + b))
        })
        .sum();
    0.5 * lambda * (w.iter().map(|v| v * v).sum::<f64>() + b * b) + loss / n
}

fn ours(data: &Path, model: &Path, epsilon: f64) -> Command {
    let mut c = Command::new(command());
    c.args(["train", &s(data), "--loss", "logistic", "--cost", "1", "-q"])
        .args(["--epsilon", &epsilon.to_string(), "-o", &s(model)]);
    c
}

fn theirs(data: &Path, model: &Path, epsilon: f64) -> Command {
    let mut c = Command::new("liblinear-train");
    c.args([
        "-s",
        "7",
        "-c",
        "1",
        "-B",
        "1",
        "-q",
        "-e",
        &epsilon.to_string(),
    ])
    .args([s(data), s(model)]);
    c
}

fn timed(mut c: Command) -> Option<f64> {
    let start = Instant::now();
    let out = c.output().ok()?;
    out.status.success().then(|| start.elapsed().as_secs_f64())
}

/// Our model's objective and certified gap, from its file.
fn ours_objective(data: &LabeledData, model: &Path) -> (f64, Option<f64>) {
    let m = maxmargin::linear::LinearModel::load(model).expect("our model");
    let o = m.objective(data, m.lambda).expect("objective");
    (o, m.training.gap)
}

fn theirs_objective(data: &LabeledData, model: &Path) -> Option<f64> {
    let m = liblinear::Model::read(model)?;
    let (w, b) = m.column(0, data.x.n_features());
    Some(objective(data, &w, b, m.labels[0]))
}

fn main() {
    let Some(dir) = data_dir() else {
        eprintln!(
            "logistic: set MAXMARGIN_DATA (cargo xtask bench --data-dir DIR); nothing measured"
        );
        return;
    };
    let work = out_dir().join("logistic-data");
    std::fs::create_dir_all(&work).expect("work dir");
    let have_liblinear = Command::new("liblinear-train").output().is_ok();
    let mut rows = Vec::new();
    for set in SETS {
        let source = dir.join(set);
        let Ok(data) = libsvm::read(&source) else {
            continue;
        };
        let name = set.split('/').next().unwrap_or(set).to_string();
        // Both read the same uncompressed file.
        let file = work.join(&name);
        libsvm::write(&file, &data).expect("write the data");
        let (mine, yours): (PathBuf, PathBuf) = (
            work.join(format!("{name}.mm")),
            work.join(format!("{name}.ll")),
        );
        ours(&file, &mine, 1e-8).status().expect("maxmargin");
        let (ours_objective_tight, ours_gap) = ours_objective(&data, &mine);
        let theirs_tight = if have_liblinear {
            theirs(&file, &yours, 1e-8).status().expect("liblinear");
            theirs_objective(&data, &yours)
        } else {
            None
        };
        let reference = theirs_tight.unwrap_or(ours_objective_tight);
        let mut timed_rows = Vec::new();
        for epsilon in TIMED_EPSILONS {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for _ in 0..ROUNDS {
                a.extend(timed(ours(&file, &mine, epsilon)));
                if have_liblinear {
                    b.extend(timed(theirs(&file, &yours, epsilon)));
                }
            }
            let ours_seconds = median(&mut a);
            let theirs_seconds = (!b.is_empty()).then(|| median(&mut b));
            let rel = |o: f64| (o - reference) / reference;
            timed_rows.push(Timed {
                epsilon,
                ours_seconds,
                theirs_seconds,
                ratio: theirs_seconds.map(|t| ours_seconds / t),
                ours_relative: rel(ours_objective(&data, &mine).0),
                theirs_relative: have_liblinear
                    .then(|| theirs_objective(&data, &yours))
                    .flatten()
                    .map(rel),
            });
        }
        rows.push(Row {
            data: name,
            rows: data.n_samples(),
            features: data.x.n_features(),
            ours_objective: ours_objective_tight,
            ours_gap,
            theirs_objective: theirs_tight,
            relative_difference: theirs_tight.map(|t| (ours_objective_tight - t) / t),
            timed: timed_rows,
        });
    }
    let mut md = String::from(
        "# Logistic regression: maxmargin --loss logistic against liblinear-train -s 7 (C = 1, -B 1)\n\n\
         | data | rows | features | objective at ε=1e-8 (ours) | LIBLINEAR's | relative difference | our gap | ε | ours s | LIBLINEAR s | ratio | ours rel. obj. | LIBLINEAR rel. obj. |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let cell = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or("-".into(), f);
    for r in &rows {
        for (k, t) in r.timed.iter().enumerate() {
            let head = if k == 0 {
                format!(
                    "{} | {} | {} | {:.10} | {} | {} | {}",
                    r.data,
                    r.rows,
                    r.features,
                    r.ours_objective,
                    cell(r.theirs_objective, &|v| format!("{v:.10}")),
                    cell(r.relative_difference, &|v| format!("{v:.1e}")),
                    cell(r.ours_gap, &|v| format!("{v:.1e}")),
                )
            } else {
                " | | | | | |".into()
            };
            let _ = writeln!(
                md,
                "| {head} | {} | {:.3} | {} | {} | {:.1e} | {} |",
                t.epsilon,
                t.ours_seconds,
                cell(t.theirs_seconds, &|v| format!("{v:.3}")),
                cell(t.ratio, &|v| format!("{v:.2}")),
                t.ours_relative,
                cell(t.theirs_relative, &|v| format!("{v:.1e}")),
            );
        }
    }
    println!("{md}");
    let out = out_dir();
    std::fs::write(out.join("logistic.md"), &md).expect("write the report");
    std::fs::write(
        out.join("logistic.json"),
        serde_json::to_string_pretty(&rows).expect("json"),
    )
    .expect("write the report");
}
