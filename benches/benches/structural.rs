//! The structural solvers on hard shapes, whole commands, one run each: time and peak memory to a certified 1%
//! gap (each run capped at `STRUCTURAL_SECONDS`, default 120, and then reported as not converged), the primal,
//! and the test error from `maxmargin eval --json`.
//!
//! Problems: a synthetic 100-class sparse multiclass set (3,000 rows, 20,000 features, about 30 nonzeros per
//! row, seeded), a synthetic ill-conditioned multilabel set (400 rows, 72 features scaled by up to 240, 6
//! labels, seeded), OCR chains (fold 0 to train, folds 1-9 to test, λ = 0.01, no bias) and yeast (multilabel).
//! Solvers: multiclass dcd (Crammer–Singer), bcfw, oneslack, nslack; the others bcfw, oneslack, nslack, ssg.
//!
//! `STRUCTURAL_SOLVERS=dcd,bcfw` runs only those solvers.
//!
//! Output: `target/bench-report/structural.{md,json}`. Needs the release command (`cargo xtask bench` builds
//! it) and `/usr/bin/time` for peak memory; reads `MAXMARGIN_DATA` for OCR and yeast.

use maxmargin_benches::{command, data_dir, out_dir, s};
use serde::Serialize;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::Command;

#[derive(Debug, Serialize)]
struct Row {
    problem: String,
    solver: String,
    seconds: f64,
    peak_mb: Option<f64>,
    passes: f64,
    primal: f64,
    relative_gap: Option<f64>,
    converged: bool,
    test_metric: String,
}

/// A seeded stream in [0, 1).
fn stream(seed: u64) -> impl FnMut() -> f64 {
    let mut lcg = maxmargin::testing::Lcg::new(seed);
    move || lcg.unit()
}

/// The 100-class set ([`maxmargin_benches::many_classes`]) as a LIBSVM file.
fn write_many_classes(path: &Path, rows: usize, seed: u64) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for (c, row) in maxmargin_benches::many_classes(rows, seed) {
        write!(f, "{c}").unwrap();
        for (j, v) in row {
            write!(f, " {j}:{v:.3}").unwrap();
        }
        writeln!(f).unwrap();
    }
}

/// 6 labels from 72 features whose scales grow to 240 (unscaled, as the set that stalled 1-slack).
fn ill_conditioned(path: &Path, rows: usize, seed: u64) {
    // The labels' weights come from one fixed seed, shared by the training and test files.
    let mut model = stream(1);
    let weights: Vec<Vec<f64>> = (0..6)
        .map(|_| (0..72).map(|_| model() * 2.0 - 1.0).collect())
        .collect();
    let mut next = stream(seed);
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for _ in 0..rows {
        let x: Vec<f64> = (0..72)
            .map(|j| next() * (1.0 + 239.0 * j as f64 / 71.0))
            .collect();
        let labels: Vec<String> = (0..6)
            .filter(|&l| {
                let score: f64 = x
                    .iter()
                    .enumerate()
                    .map(|(j, v)| weights[l][j] * v / (1.0 + 239.0 * j as f64 / 71.0))
                    .sum();
                score + 0.5 * (next() - 0.5) > 0.0
            })
            .map(|l| l.to_string())
            .collect();
        write!(f, "{}", labels.join(",")).unwrap();
        for (j, v) in x.iter().enumerate() {
            write!(f, " {}:{v:.2}", j + 1).unwrap();
        }
        writeln!(f).unwrap();
    }
}

/// Runs `train` under `/usr/bin/time`, then `eval --json` on the test file.
fn run(problem: &str, task: &str, solver: &str, train: &Path, test: &Path, extra: &[&str]) -> Row {
    let dir = out_dir().join("structural");
    let _ = std::fs::create_dir_all(&dir);
    let model = dir.join(format!("{problem}-{solver}.json"));
    let cap = std::env::var("STRUCTURAL_SECONDS").unwrap_or_else(|_| "120".into());
    let mut args: Vec<String> = ["train", &s(train), "--task", task, "--solver", solver]
        .iter()
        .map(|a| a.to_string())
        .collect();
    args.extend(["-o".into(), s(&model), "--seconds".into(), cap, "-q".into()]);
    args.extend(extra.iter().map(|a| a.to_string()));
    let timed = Command::new("/usr/bin/time")
        .args(["-f", "%e %M"])
        .arg(command())
        .args(&args)
        .output();
    let (seconds, peak_mb) = match &timed {
        Ok(out) if out.status.success() || out.status.code() == Some(0) => {
            let err = String::from_utf8_lossy(&out.stderr);
            let last = err.lines().last().unwrap_or("");
            let mut it = last.split_whitespace();
            let secs = it.next().and_then(|v| v.parse().ok()).unwrap_or(f64::NAN);
            let kb: Option<f64> = it.next().and_then(|v| v.parse().ok());
            (secs, kb.map(|k| k / 1024.0))
        }
        _ => {
            // No /usr/bin/time: time it here, without memory.
            let start = std::time::Instant::now();
            let ok = Command::new(command())
                .args(&args)
                .status()
                .map(|s| s.success());
            assert!(matches!(ok, Ok(true)), "{problem} {solver} failed");
            (start.elapsed().as_secs_f64(), None)
        }
    };
    let text = std::fs::read_to_string(&model).unwrap();
    let m: serde_json::Value = serde_json::from_str(&text).unwrap();
    let t = &m["training"];
    let primal = t["objective"].as_f64().unwrap_or(f64::NAN);
    let eval = Command::new(command())
        .args(["eval", &s(&model), &s(test), "--json"])
        .output()
        .unwrap();
    let e: serde_json::Value = serde_json::from_slice(&eval.stdout).unwrap_or_default();
    let test_metric = ["accuracy", "hamming_loss", "token_error"]
        .iter()
        .find_map(|k| e[*k].as_f64().map(|v| format!("{k} {v:.4}")))
        .unwrap_or_default();
    Row {
        problem: problem.into(),
        solver: solver.into(),
        seconds,
        peak_mb,
        passes: t["passes"].as_f64().unwrap_or(f64::NAN),
        primal,
        relative_gap: t["gap"].as_f64().map(|g| g / primal.abs()),
        converged: t["converged"].as_bool().unwrap_or(false),
        test_metric,
    }
}

/// Whether `STRUCTURAL_SOLVERS` asks for `solver`.
fn wanted(solver: &&str) -> bool {
    maxmargin_benches::chosen("STRUCTURAL_SOLVERS", solver)
}

fn main() {
    let dir = out_dir().join("structural");
    let _ = std::fs::create_dir_all(&dir);
    let mut rows = Vec::new();
    let (k_train, k_test) = (dir.join("k100.train.svm"), dir.join("k100.test.svm"));
    write_many_classes(&k_train, 3000, 7);
    write_many_classes(&k_test, 1000, 8);
    let (m_train, m_test) = (dir.join("ill.train.svm"), dir.join("ill.test.svm"));
    ill_conditioned(&m_train, 400, 3);
    ill_conditioned(&m_test, 200, 4);
    // (problem, task, solvers, train, test, flags): the synthetic sets, then shared/data's where present.
    let c1: &[&str] = &["-c", "1"];
    let mut sets = vec![
        (
            "100-class sparse",
            "multiclass",
            ["dcd", "bcfw", "oneslack", "nslack"],
            k_train,
            k_test,
            c1,
        ),
        (
            "ill-conditioned multilabel",
            "multilabel",
            ["bcfw", "oneslack", "nslack", "ssg"],
            m_train,
            m_test,
            c1,
        ),
    ];
    if let Some(data) = data_dir() {
        let iterative = ["bcfw", "oneslack", "nslack", "ssg"];
        sets.push((
            "OCR",
            "chain",
            iterative,
            data.join("ocr_letters/ocr.fold0.svmhmm.gz"),
            data.join("ocr_letters/ocr.folds1-9.svmhmm.gz"),
            &["--lambda", "0.01", "--bias", "none"],
        ));
        sets.push((
            "yeast",
            "multilabel",
            iterative,
            data.join("yeast/yeast.train.libsvm.gz"),
            data.join("yeast/yeast.test.libsvm.gz"),
            &[],
        ));
    }
    for (problem, task, solvers, train, test, extra) in &sets {
        if !train.exists() {
            continue;
        }
        for solver in solvers.iter().filter(|s| wanted(s)) {
            rows.push(run(problem, task, solver, train, test, extra));
        }
    }
    let mut md = String::from(
        "| problem | solver | seconds | peak MB | passes | primal | relative gap | converged | test |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in &rows {
        writeln!(
            md,
            "| {} | {} | {:.2} | {} | {:.0} | {:.6} | {} | {} | {} |",
            r.problem,
            r.solver,
            r.seconds,
            r.peak_mb.map_or("-".into(), |m| format!("{m:.0}")),
            r.passes,
            r.primal,
            r.relative_gap.map_or("-".into(), |g| format!("{g:.1e}")),
            if r.converged { "yes" } else { "no" },
            r.test_metric
        )
        .unwrap();
    }
    print!("{md}");
    std::fs::write(out_dir().join("structural.md"), &md).unwrap();
    std::fs::write(
        out_dir().join("structural.json"),
        serde_json::to_string_pretty(&rows).unwrap(),
    )
    .unwrap();
}
