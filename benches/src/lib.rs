//! Shared helpers for the maxmargin benchmarks: where the data is, and robust timing statistics.
//!
//! Large datasets are read from the directory in `MAXMARGIN_DATA` (set by `cargo xtask bench --data-dir`);
//! without it the benchmarks fall back to the embedded heart_scale, so `cargo bench` always measures
//! something.

pub mod liblinear;

use maxmargin::io::libsvm::{self, LabeledData};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The data directory, when `MAXMARGIN_DATA` names one.
pub fn data_dir() -> Option<PathBuf> {
    std::env::var_os("MAXMARGIN_DATA")
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
}

/// Loads `relative` from the data directory, or `None` when it is not there.
pub fn load(relative: &str) -> Option<(String, LabeledData)> {
    let path = data_dir()?.join(relative);
    let data = libsvm::read(&path).ok()?;
    let name = relative.split('/').next().unwrap_or(relative).to_string();
    Some((name, data))
}

/// The binary training sets the benchmarks use when present, else the embedded heart_scale.
pub fn binary_sets() -> Vec<(String, LabeledData)> {
    let found: Vec<_> = [
        "a9a/a9a.gz",
        "reuters_lasvm/reuters.trn.gz",
        "phishing/phishing.gz",
    ]
    .into_iter()
    .filter_map(load)
    .collect();
    if found.is_empty() {
        match maxmargin::datasets::heart_scale() {
            Ok(d) => vec![("heart_scale".into(), d)],
            Err(_) => Vec::new(),
        }
    } else {
        found
    }
}

/// Whether the comma-separated list in the environment variable `var` names `name` (everything is chosen
/// when the variable is unset or empty): how a bench is told to run only some of its datasets or solvers.
pub fn chosen(var: &str, name: &str) -> bool {
    std::env::var(var).map_or(true, |list| {
        list.is_empty() || list.split(',').any(|s| s.trim() == name)
    })
}

/// Seconds taken by `f`.
pub fn time<T>(f: impl FnOnce() -> T) -> (f64, T) {
    let start = Instant::now();
    let out = f();
    (start.elapsed().as_secs_f64(), out)
}

/// Runs a whole command, which must succeed: its seconds, stdout and stderr.
pub fn timed_command(mut c: std::process::Command) -> (f64, String, String) {
    let start = Instant::now();
    let out = c.output().expect("run");
    assert!(
        out.status.success(),
        "{c:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        start.elapsed().as_secs_f64(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The number after the last `key` in a reference tool's output (LIBSVM's `obj = `, `#iter = `, `nSV = `;
/// LIBLINEAR's `Objective value = `), up to a comma or the line's end.
pub fn value_after<T: std::str::FromStr>(out: &str, key: &str) -> Option<T> {
    let rest = out.rsplit(key).next().filter(|_| out.contains(key))?;
    let token = rest.split([',', '\n']).next()?;
    token.trim().parse().ok()
}

/// The median of a non-empty sample.
pub fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n == 0 {
        return f64::NAN;
    }
    if !n.is_multiple_of(2) {
        xs[n / 2]
    } else {
        0.5 * (xs[n / 2 - 1] + xs[n / 2])
    }
}

/// `"1_000"`-style thousands for benchmark ids.
pub fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push('_');
        }
        out.push(c);
    }
    out
}

/// The target directory: `MAXMARGIN_TARGET_DIR` (set by `cargo xtask bench` from `cargo metadata`, so
/// `CARGO_TARGET_DIR` and cargo's configuration count), else `CARGO_TARGET_DIR`, else the workspace's
/// `target/`.
fn target_dir() -> PathBuf {
    ["MAXMARGIN_TARGET_DIR", "CARGO_TARGET_DIR"]
        .iter()
        .find_map(|k| std::env::var_os(k).filter(|v| !v.is_empty()))
        .map_or_else(
            || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"),
            PathBuf::from,
        )
}

/// `TARGET/bench-report/`, created: where the benches write their reports.
pub fn out_dir() -> PathBuf {
    let d = target_dir().join("bench-report");
    let _ = std::fs::create_dir_all(&d);
    d
}

/// The release command the benches run whole (`cargo xtask bench` builds it first): `MAXMARGIN_BIN` when
/// set, else `TARGET/release/maxmargin`.
pub fn command() -> PathBuf {
    std::env::var_os("MAXMARGIN_BIN")
        .filter(|v| !v.is_empty())
        .map_or_else(|| target_dir().join("release/maxmargin"), PathBuf::from)
}

/// A path as a command-line argument.
pub fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// A synthetic multiclass set of 100 classes over 20,000 features (1-based indices): each class has 60
/// typical features, a row takes 20 of its class's and 10 at random, values in [0, 1) (the structural bench
/// writes them with three decimals). The classes come from one fixed seed, shared
/// by training and test rows; the rows from `seed`. Each row: its class and its sorted `(index, value)`s.
pub fn many_classes(rows: usize, seed: u64) -> Vec<(usize, Vec<(usize, f64)>)> {
    let mut model = maxmargin::testing::Lcg::new(1);
    let (k, d) = (100usize, 20_000usize);
    let centers: Vec<Vec<usize>> = (0..k)
        .map(|_| {
            (0..60)
                .map(|_| 1 + (model.unit() * d as f64) as usize)
                .collect()
        })
        .collect();
    let mut next = maxmargin::testing::Lcg::new(seed);
    (0..rows)
        .map(|_| {
            let c = (next.unit() * k as f64) as usize;
            let mut idx: Vec<usize> = Vec::with_capacity(30);
            for _ in 0..20 {
                idx.push(centers[c][(next.unit() * 60.0) as usize]);
            }
            for _ in 0..10 {
                idx.push(1 + (next.unit() * d as f64) as usize);
            }
            idx.sort_unstable();
            idx.dedup();
            let row = idx.into_iter().map(|j| (j, next.unit())).collect();
            (c, row)
        })
        .collect()
}
