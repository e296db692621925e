//! maxmargin's DCD against LIBLINEAR's `-s 3` (dual CD, hinge loss, bias as a feature), whole commands side by
//! side: the time to reach a primal objective within 10⁻³ (relative) of the optimum, where the optimum comes
//! from our DCD at ε = 10⁻⁵ and LIBLINEAR's objective is computed by our evaluator from its model file. Runs
//! are interleaved (ours, theirs, ours, theirs, …), 5 of each, medians. Needs `MAXMARGIN_DATA` and
//! `liblinear-train` on PATH (Debian's liblinear-tools). Writes `target/bench-report/liblinear_compare.md`.

use maxmargin::core::objective::Lambda;
use maxmargin::io::libsvm::{self, LabeledData};
use maxmargin::optim::{Bias, BinaryProblem, LinearWeights};
use maxmargin_benches::{data_dir, median};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const C: f64 = 1.0;
const ROUNDS: usize = 5;

/// Reads a LIBLINEAR model file: its label order, bias and weights.
fn read_liblinear(path: &Path) -> Option<(Vec<f64>, f64, Vec<f64>)> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut labels = Vec::new();
    let mut bias = -1.0;
    let mut lines = text.lines();
    for line in lines.by_ref() {
        let mut parts = line.split_whitespace();
        match parts.next()? {
            "label" => labels = parts.filter_map(|v| v.parse().ok()).collect(),
            "bias" => bias = parts.next()?.parse().ok()?,
            "w" => break,
            _ => {}
        }
    }
    let w: Vec<f64> = lines.filter_map(|l| l.trim().parse().ok()).collect();
    Some((labels, bias, w))
}

/// Our λ-form objective of LIBLINEAR's model (its first label is the +1 class, its bias weight regularized).
fn liblinear_objective(data: &LabeledData, lambda: Lambda, model: &Path) -> Option<f64> {
    let (labels, bias, mut w) = read_liblinear(model)?;
    let positive = *labels.first()?;
    let y: Vec<f64> = data
        .labels
        .iter()
        .map(|&l| if l == positive { 1.0 } else { -1.0 })
        .collect();
    let b = if bias > 0.0 { w.pop()? * bias } else { 0.0 };
    w.resize(data.x.n_features(), 0.0);
    let problem = BinaryProblem::new(&data.x, &y, lambda, Bias::Feature).ok()?;
    Some(problem.objective(&LinearWeights { w, b }))
}

fn ours_objective(data: &LabeledData, lambda: f64, model: &Path) -> Option<f64> {
    let m = maxmargin::LinearModel::load(model).ok()?;
    m.objective(data, lambda).ok()
}

fn timed(cmd: &mut Command) -> Option<f64> {
    let start = Instant::now();
    let status = cmd.status().ok()?;
    status.success().then(|| start.elapsed().as_secs_f64())
}

fn main() {
    let Some(dir) = data_dir() else {
        println!("liblinear_compare: set MAXMARGIN_DATA");
        return;
    };
    if Command::new("liblinear-train").output().is_err() {
        println!(
            "liblinear_compare: liblinear-train not on PATH (apt-get install liblinear-tools)"
        );
        return;
    }
    let ours_bin = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/release/maxmargin");
    if !ours_bin.exists() {
        println!(
            "liblinear_compare: build the command first (cargo build --release -p maxmargin-cli)"
        );
        return;
    }
    let tmp = std::env::temp_dir().join("maxmargin-liblinear-compare");
    let _ = std::fs::create_dir_all(&tmp);
    let mut report = String::from(
        "# DCD against LIBLINEAR -s 3 (C = 1, bias feature), time to 1e-3 relative objective\n\n\
         Whole commands on uncompressed copies (parse + train + save), 5 interleaved runs, medians.\n\n\
         | data | n | optimum | ours: ε | ours: objective | ours: s | LIBLINEAR: ε | LIBLINEAR: objective | LIBLINEAR: s | ratio ours/LIBLINEAR |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for file in [
        "a9a/a9a.gz",
        "reuters_lasvm/reuters.trn.gz",
        "phishing/phishing.gz",
    ] {
        let Ok(data) = libsvm::read(&dir.join(file)) else {
            continue;
        };
        let name = file.split('/').next().unwrap_or(file);
        // An uncompressed copy, so both programs parse the same text.
        let plain = tmp.join(format!("{name}.svm"));
        if libsvm::write(&plain, &data).is_err() {
            continue;
        }
        let n = data.n_samples();
        let lambda = 1.0 / (C * n as f64);
        let Ok(lam) = Lambda::new(lambda) else {
            continue;
        };
        let ours_model = tmp.join(format!("{name}.model"));
        let theirs_model = tmp.join(format!("{name}.liblinear"));
        let ours = |eps: f64| {
            let mut c = Command::new(&ours_bin);
            c.args([
                "train",
                plain.to_str().unwrap_or(""),
                "-o",
                ours_model.to_str().unwrap_or(""),
            ])
            .args([
                "--solver",
                "dcd",
                "-c",
                "1",
                "--epsilon",
                &eps.to_string(),
                "--eval-every",
                "1e9",
                "--quiet",
            ]);
            c
        };
        let theirs = |eps: f64| {
            let mut c = Command::new("liblinear-train");
            c.args([
                "-q",
                "-s",
                "3",
                "-c",
                "1",
                "-B",
                "1",
                "-e",
                &eps.to_string(),
            ])
            .args([
                plain.to_str().unwrap_or(""),
                theirs_model.to_str().unwrap_or(""),
            ]);
            c
        };
        // The optimum, from a tight DCD run.
        if timed(&mut ours(1e-5)).is_none() {
            continue;
        }
        let Some(optimum) = ours_objective(&data, lambda, &ours_model) else {
            continue;
        };
        let target = optimum * (1.0 + 1e-3);
        // The loosest ε that reaches the target, for each program.
        let eps_list = [1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001];
        let pick = |run: &dyn Fn(f64) -> Command, objective: &dyn Fn() -> Option<f64>| {
            eps_list.iter().find_map(|&e| {
                timed(&mut run(e))?;
                let o = objective()?;
                (o <= target).then_some((e, o))
            })
        };
        let Some((eo, oo)) = pick(&ours, &|| ours_objective(&data, lambda, &ours_model)) else {
            continue;
        };
        let Some((et, ot)) = pick(&theirs, &|| liblinear_objective(&data, lam, &theirs_model))
        else {
            continue;
        };
        let (mut to, mut tt) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            if let Some(t) = timed(&mut ours(eo)) {
                to.push(t);
            }
            if let Some(t) = timed(&mut theirs(et)) {
                tt.push(t);
            }
        }
        let (mo, mt) = (median(&mut to), median(&mut tt));
        let _ = writeln!(
            report,
            "| {name} | {n} | {optimum:.6} | {eo} | {oo:.6} | {mo:.3} | {et} | {ot:.6} | {mt:.3} | {:.2} |",
            mo / mt
        );
    }
    println!("{report}");
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/bench-report");
    if std::fs::create_dir_all(&out).is_ok() {
        let _ = std::fs::write(out.join("liblinear_compare.md"), &report);
    }
}
