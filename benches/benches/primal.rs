//! Newton's method in the primal (the default for the squared hinge and the logistic loss when rows outnumber
//! features) against DCD (`--solver dcd`) and LIBLINEAR's primal solvers (`liblinear-train -s 2`, `-s 0`):
//! whole commands side by side, C = 1, the bias a regularized feature (`-B 1`).
//!
//! Sets: the binary sets in `MAXMARGIN_DATA` with more rows than features, and two dense synthetic sets made
//! here (rows ≫ features, Gaussian columns of unequal scales, labels from a noisy linear rule), of the shape
//! where a scikit-learn user met DCD's 1,000-pass budget. Each command runs 3 times, interleaved; medians.
//! One evaluator (ours, on the model files' weights) values every model against a tight optimum (Newton to a
//! relative gap of 10⁻¹⁰), so "rel. obj." says whether the runs stop at the same precision.
//!
//! Output: `target/bench-report/primal.{md,json}`. Needs the release command; without `liblinear-train` on
//! PATH it reports our side only.

use maxmargin::core::hinge::logistic;
use maxmargin::io::libsvm::{self, LabeledData};
use maxmargin_benches::{command, data_dir, liblinear, median, out_dir, s};
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

const ROUNDS: usize = 3;
const SETS: [&str; 5] = [
    "heart_scale/heart_scale",
    "breast-cancer_scale/breast-cancer_scale",
    "mushrooms/mushrooms",
    "phishing/phishing.gz",
    "a9a/a9a.gz",
];

#[derive(Serialize)]
struct Row {
    data: String,
    rows: usize,
    features: usize,
    loss: &'static str,
    optimum: f64,
    /// (label, median seconds, objective relative to the optimum) of each command.
    runs: Vec<(String, f64, f64)>,
}

/// A dense set of `n` rows over `d` columns: column `j` has scale `1 + 9·(j mod 7)/6`, labels the sign of a
/// fixed random rule plus noise (5% flipped).
fn dense(n: usize, d: usize, seed: u64) -> String {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let rule: Vec<f64> = (0..d).map(|_| rng.random_range(-1.0..1.0)).collect();
    let mut text = String::new();
    for _ in 0..n {
        let x: Vec<f64> = (0..d)
            .map(|j| {
                let g: f64 = (0..3).map(|_| rng.random_range(-1.0..1.0)).sum();
                g * (1.0 + 9.0 * (j % 7) as f64 / 6.0)
            })
            .collect();
        let score: f64 = x.iter().zip(&rule).map(|(a, b)| a * b).sum();
        let flip = rng.random_range(0.0..1.0) < 0.05;
        let y = if (score > 0.0) != flip { 1 } else { -1 };
        let _ = write!(text, "{y}");
        for (j, v) in x.iter().enumerate() {
            let _ = write!(text, " {}:{v:.4}", j + 1);
        }
        text.push('\n');
    }
    text
}

/// The λ-form objective of `(w, b)` (b a regularized feature), `y = +1` for `positive`.
fn objective(data: &LabeledData, (w, b): (&[f64], f64), positive: f64, loss: &str) -> f64 {
    let n = data.n_samples() as f64;
    let sum: f64 = data
        .x
        .rows()
        .zip(&data.labels)
        .map(|(r, &l)| {
            let z = if l == positive { 1.0 } else { -1.0 } * (r.dot(w) + b);
            match loss {
                "logistic" => logistic(z),
                _ => (1.0 - z).max(0.0).powi(2),
            }
        })
        .sum();
    0.5 / n * (w.iter().map(|v| v * v).sum::<f64>() + b * b) + sum / n
}

fn value(data: &LabeledData, model: &Path, loss: &str, ours: bool) -> f64 {
    if ours {
        let m = maxmargin::linear::LinearModel::load(model).expect("our model");
        m.objective(data, m.lambda).expect("objective")
    } else {
        let m = liblinear::Model::read(model).expect("LIBLINEAR's model");
        let (w, b) = m.column(0, data.x.n_features());
        objective(data, (&w, b), m.labels[0], loss)
    }
}

fn timed(mut c: Command) -> f64 {
    let start = Instant::now();
    let out = c.output().expect("the command runs");
    assert!(out.status.success(), "{c:?}: {out:?}");
    start.elapsed().as_secs_f64()
}

fn main() {
    let work = out_dir().join("primal-data");
    std::fs::create_dir_all(&work).expect("work dir");
    let mut sets: Vec<(String, std::path::PathBuf)> = Vec::new();
    for (name, n, d, seed) in [
        ("dense-8000x1000", 8000, 1000, 1),
        ("dense-20000x50", 20_000, 50, 2),
    ] {
        let file = work.join(name);
        std::fs::write(&file, dense(n, d, seed)).expect("write the data");
        sets.push((name.into(), file));
    }
    if let Some(dir) = data_dir() {
        for set in SETS {
            let Ok(data) = libsvm::read(&dir.join(set)) else {
                continue;
            };
            let name = set.split('/').next().unwrap_or(set).to_string();
            let file = work.join(&name);
            libsvm::write(&file, &data).expect("write the data");
            sets.push((name, file));
        }
    }
    let have_liblinear = Command::new("liblinear-train").output().is_ok();
    let mut rows = Vec::new();
    for (name, file) in &sets {
        let data = libsvm::read(file).expect("read back");
        for (loss, s_flag) in [("squared-hinge", "2"), ("logistic", "0")] {
            let model = work.join("m.model");
            let ours = |extra: &[&str]| {
                let mut c = Command::new(command());
                c.args([
                    "train",
                    &s(file),
                    "--loss",
                    loss,
                    "-c",
                    "1",
                    "-q",
                    "-o",
                    &s(&model),
                ])
                .args(extra);
                c
            };
            timed(ours(&["--solver", "newton", "--gap", "1e-10"]));
            let optimum = value(&data, &model, loss, true);
            let mut commands: Vec<(String, Command, bool)> = vec![
                ("maxmargin (default)".into(), ours(&[]), true),
                (
                    "maxmargin --solver dcd".into(),
                    ours(&["--solver", "dcd"]),
                    true,
                ),
            ];
            if have_liblinear {
                let mut c = Command::new("liblinear-train");
                c.args([
                    "-s",
                    s_flag,
                    "-c",
                    "1",
                    "-B",
                    "1",
                    "-q",
                    &s(file),
                    &s(&model),
                ]);
                commands.push((format!("liblinear-train -s {s_flag}"), c, false));
            }
            let mut seconds = vec![Vec::new(); commands.len()];
            let mut relative = vec![0.0; commands.len()];
            for _ in 0..ROUNDS {
                for (k, (_, c, is_ours)) in commands.iter_mut().enumerate() {
                    let mut again = Command::new(c.get_program());
                    again.args(c.get_args());
                    seconds[k].push(timed(again));
                    relative[k] = (value(&data, &model, loss, *is_ours) - optimum) / optimum;
                }
            }
            let runs = commands
                .iter()
                .zip(seconds.iter_mut().zip(&relative))
                .map(|((label, _, _), (t, r))| (label.clone(), median(t), *r))
                .collect();
            rows.push(Row {
                data: name.clone(),
                rows: data.n_samples(),
                features: data.x.n_features(),
                loss,
                optimum,
                runs,
            });
        }
    }
    let mut md = String::from(
        "# Newton in the primal against DCD and LIBLINEAR's primal solvers (C = 1, -B 1)\n\n\
         | data | rows | features | loss | optimum | command | seconds | ratio to LIBLINEAR | rel. obj. |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for r in &rows {
        let reference = r.runs.iter().find(|(l, _, _)| l.starts_with("liblinear"));
        for (k, (label, t, rel)) in r.runs.iter().enumerate() {
            let head = if k == 0 {
                format!(
                    "{} | {} | {} | {} | {:.8}",
                    r.data, r.rows, r.features, r.loss, r.optimum
                )
            } else {
                " | | | |".into()
            };
            let ratio = reference.map_or("-".into(), |(_, l, _)| format!("{:.2}", t / l));
            let _ = writeln!(md, "| {head} | {label} | {t:.3} | {ratio} | {rel:.1e} |");
        }
    }
    println!("{md}");
    let out = out_dir();
    std::fs::write(out.join("primal.md"), &md).expect("write the report");
    let json = serde_json::to_string_pretty(&rows).expect("json");
    std::fs::write(out.join("primal.json"), json).expect("write the report");
}
