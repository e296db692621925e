//! The end-to-end table: for every dataset found in `MAXMARGIN_DATA` and every solver, the time and passes to
//! reach a primal objective within 10⁻³ (relative) of the optimum, and the test accuracy there; LIBLINEAR
//! side by side when `liblinear-train` is on PATH; peak memory; SVG plots of the objective gap.
//!
//! Two kinds of measurement, both at C = 1 with the bias as a regularized feature (LIBLINEAR's `-B 1`):
//!
//! - **Solver curves (in process).** Each of our solvers runs step by step; the clock runs only inside
//!   `step`, and after every pass the objective is evaluated off the clock. The optimum comes from a very
//!   long DCD run (ε = 10⁻⁶ or a time cap), cached in `target/bench-report/optimum.json`.
//! - **Whole commands.** `maxmargin train` against `liblinear-train` on the same uncompressed file, parse and
//!   train and save included, at the loosest ε (from a fixed list) whose model reaches the target by our
//!   evaluator, LIBLINEAR's model read from its file. Runs are interleaved (ours, theirs, ours, …), 5 of
//!   each, and medians are reported with the ratio ours/LIBLINEAR. Peak resident memory comes from
//!   `/usr/bin/time -f %M` around one run of each.
//!
//! Split by what it measures: `curves` (solvers in process), `commands` (whole commands against LIBLINEAR),
//! `data` (splits, accuracies, the cached optimum), `run` (one dataset), `report` (the table and plots).
//!
//! Output: `target/bench-report/end_to_end.{md,json}` and `end_to_end-<data>-{seconds,passes}.svg`.
//! Needs the release command (`cargo build --release -p maxmargin-cli`; `cargo xtask bench` builds it).

use maxmargin::core::objective::Lambda;
use maxmargin::core::vector::{SparseRows, SparseVec};
use maxmargin::io::libsvm::{self, BinaryLabels, ClassLabels, LabeledData};
use maxmargin::optim::{
    BcfwParams, Bias, BinaryProblem, CrammerSingerParams, DcdParams, LinearWeights, OneSlackParams,
    PegasosParams, Solver, SsgParams, StructProblem, SubgradientParams,
};
use maxmargin::structured::MulticlassSpace;
use maxmargin_benches::{data_dir, liblinear, median};
use plotters::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

mod commands;
mod curves;
mod data;
mod report;
mod run;

use commands::*;
use curves::*;
use data::*;
use report::*;
use run::*;

const C: f64 = 1.0;
const TARGET: f64 = 1e-3;
const ROUNDS: usize = 5;
/// Wall-clock cap of one in-process solver curve.
const CURVE_SECONDS: f64 = 20.0;
/// Wall-clock cap of the optimum run.
const OPTIMUM_SECONDS: f64 = 120.0;
/// A whole-command run slower than this that misses the target ends its ε sweep.
const SWEEP_GIVE_UP: f64 = 10.0;
const EPS_LIST: [f64; 11] = [
    1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001, 0.0001,
];

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Binary,
    Multiclass,
}

struct Dataset {
    name: &'static str,
    kind: Kind,
    train: &'static str,
    /// A test file, or `None` for a seeded 80/20 split of the training file.
    test: Option<&'static str>,
    /// Multiply every feature by this (pendigits' raw 0–100 features, scaled to [0, 1]).
    scale: f64,
}

const DATASETS: [Dataset; 7] = [
    Dataset {
        name: "a9a",
        kind: Kind::Binary,
        train: "a9a/a9a.gz",
        test: Some("a9a/a9a.t.gz"),
        scale: 1.0,
    },
    Dataset {
        name: "reuters_lasvm",
        kind: Kind::Binary,
        train: "reuters_lasvm/reuters.trn.gz",
        test: Some("reuters_lasvm/reuters.tst.gz"),
        scale: 1.0,
    },
    Dataset {
        name: "phishing",
        kind: Kind::Binary,
        train: "phishing/phishing.gz",
        test: None,
        scale: 1.0,
    },
    Dataset {
        name: "mushrooms",
        kind: Kind::Binary,
        train: "mushrooms/mushrooms",
        test: None,
        scale: 1.0,
    },
    Dataset {
        name: "letter",
        kind: Kind::Multiclass,
        train: "letter/letter.scale.gz",
        test: Some("letter/letter.scale.t.gz"),
        scale: 1.0,
    },
    Dataset {
        name: "pendigits",
        kind: Kind::Multiclass,
        train: "pendigits/pendigits",
        test: Some("pendigits/pendigits.t"),
        scale: 1.0,
    },
    Dataset {
        name: "pendigits_scaled",
        kind: Kind::Multiclass,
        train: "pendigits/pendigits",
        test: Some("pendigits/pendigits.t"),
        scale: 0.01,
    },
];

/// One point of a solver curve.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Point {
    seconds: f64,
    passes: f64,
    objective: f64,
}

/// One in-process solver run.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Curve {
    solver: String,
    points: Vec<Point>,
    /// Seconds and passes at the first point within the target, when reached.
    reached: Option<(f64, f64)>,
    /// Test accuracy of the model at that point (or at the end).
    test_accuracy: f64,
}

/// One whole-command comparison.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Versus {
    ours: String,
    theirs: String,
    ours_epsilon: Option<f64>,
    theirs_epsilon: Option<f64>,
    ours_objective: Option<f64>,
    theirs_objective: Option<f64>,
    ours_seconds: Option<f64>,
    theirs_seconds: Option<f64>,
    ratio: Option<f64>,
    ours_peak_kb: Option<u64>,
    theirs_peak_kb: Option<u64>,
    ours_test_accuracy: Option<f64>,
    theirs_test_accuracy: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Report {
    name: String,
    n_train: usize,
    n_test: usize,
    n_features: usize,
    nnz: usize,
    /// Bytes of the training set in CSR form (8-byte values, 4-byte indices, 8-byte row starts and labels).
    csr_bytes: usize,
    optimum: f64,
    optimum_gap: f64,
    ovr_optimum: Option<f64>,
    curves: Vec<Curve>,
    versus: Vec<Versus>,
}

fn out_dir() -> PathBuf {
    maxmargin_benches::out_dir()
}

/// A cached optimum: the best primal objective found and its certified gap (absolute), when there is one.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Optimum {
    objective: f64,
    gap: Option<f64>,
}

fn main() {
    let Some(dir) = data_dir() else {
        println!("end_to_end: set MAXMARGIN_DATA (cargo xtask bench --data-dir DIR)");
        return;
    };
    let ours_bin = maxmargin_benches::command();
    if !ours_bin.exists() {
        println!("end_to_end: build the command first (cargo build --release -p maxmargin-cli)");
        return;
    }
    let have_liblinear = Command::new("liblinear-train").output().is_ok();
    let tmp = std::env::temp_dir().join("maxmargin-end-to-end");
    let _ = std::fs::create_dir_all(&tmp);
    let _ = std::fs::create_dir_all(out_dir());
    let reports: Vec<Report> = DATASETS
        .iter()
        .filter(|ds| maxmargin_benches::chosen("MAXMARGIN_BENCH_ONLY", ds.name))
        .filter_map(|ds| run_dataset(ds, &dir, &tmp, &ours_bin, have_liblinear))
        .collect();
    let md = markdown(&reports, have_liblinear);
    println!("{md}");
    let _ = std::fs::write(out_dir().join("end_to_end.md"), &md);
    if let Ok(json) = serde_json::to_string_pretty(&reports) {
        let _ = std::fs::write(out_dir().join("end_to_end.json"), json);
    }
}
