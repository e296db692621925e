//! SMO at large C against LIBSVM: the linear kernel (the same objective in both, no γ to match) on the small
//! binary sets, C from 1 to 10⁴, as a grid search over C reaches them. Large C makes the dual's faces flat
//! (few free examples, a kernel of low rank), where pair updates crawl; ours adds face steps there
//! (`maxmargin_optim`'s SMO, `face.rs`).
//!
//! For each set and C: our whole command (`train --kernel linear -c C`, defaults otherwise) and
//! `svm-train -s 0 -t 0 -c C` (defaults: ε = 10⁻³, its cap of 10⁷ iterations), medians of 3 interleaved
//! runs; our passes, stop reason, objective and certified gap from the model; LIBSVM's iterations, whether
//! it stopped at its cap, and its dual in our λ-form (`−obj/(C·n)`), which our objective bounds from above.
//!
//! Rerun: `cargo build --release -p maxmargin-cli && MAXMARGIN_DATA=/abs/path/to/shared/data cargo bench -p
//! maxmargin-benches --bench smo_large_c`. Output: `target/bench-report/smo_large_c.{md,json}`. Needs
//! `svm-train` on PATH (`apt-get install libsvm-tools`) for the LIBSVM columns.

use maxmargin_benches::{command, data_dir, median, out_dir, s};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

const SETS: [&str; 2] = [
    "heart_scale/heart_scale",
    "breast-cancer_scale/breast-cancer_scale",
];
const CS: [f64; 4] = [1.0, 100.0, 1000.0, 10000.0];
/// LIBSVM's default cap on iterations (`max_iter` in svm.cpp's solver).
const LIBSVM_CAP: u64 = 10_000_000;

#[derive(Serialize)]
struct Row {
    data: String,
    rows: usize,
    c: f64,
    ours_seconds: f64,
    ours_epochs: f64,
    ours_stop: String,
    ours_objective: f64,
    ours_gap: Option<f64>,
    libsvm_seconds: Option<f64>,
    libsvm_iterations: Option<u64>,
    libsvm_at_cap: Option<bool>,
    libsvm_dual: Option<f64>,
}

fn timed(mut c: Command) -> (f64, String) {
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
    )
}

/// The number after the last `key` in LIBSVM's output.
fn after<T: std::str::FromStr>(out: &str, key: &str) -> Option<T> {
    let rest = out.rsplit(key).next().filter(|_| out.contains(key))?;
    let token = rest.split([',', '\n']).next()?;
    token.trim().parse().ok()
}

fn measure(train: &Path, c: f64, have_libsvm: bool, work: &Path) -> Row {
    let (mine, yours) = (work.join("model.mm"), work.join("model.svm"));
    let ours = || {
        let mut cmd = Command::new(command());
        cmd.args(["train", &s(train), "--kernel", "linear", "-q"])
            .args(["-c", &c.to_string(), "-o", &s(&mine)]);
        cmd
    };
    let theirs = || {
        let mut cmd = Command::new("svm-train");
        cmd.args(["-s", "0", "-t", "0", "-c", &c.to_string()])
            .args([&s(train), &s(&yours)]);
        cmd
    };
    let (mut one, mut lib, mut out) = (Vec::new(), Vec::new(), String::new());
    for _ in 0..3 {
        one.push(timed(ours()).0);
        if have_libsvm {
            let (t, o) = timed(theirs());
            lib.push(t);
            out = o;
        }
    }
    let model = maxmargin::linear::LinearModel::load(&mine).expect("our model");
    let t = &model.training;
    let n = t.n_samples;
    let iterations: Option<u64> = have_libsvm.then(|| after(&out, "#iter = ")).flatten();
    Row {
        data: train
            .file_name()
            .map_or_else(String::new, |f| f.to_string_lossy().into_owned()),
        rows: n,
        c,
        ours_seconds: median(&mut one),
        ours_epochs: t.epochs,
        ours_stop: format!("{:?}", t.stop),
        ours_objective: t.objective,
        ours_gap: t.gap,
        libsvm_seconds: have_libsvm.then(|| median(&mut lib)),
        libsvm_iterations: iterations,
        libsvm_at_cap: iterations.map(|i| i >= LIBSVM_CAP),
        libsvm_dual: have_libsvm
            .then(|| after::<f64>(&out, "obj = "))
            .flatten()
            .map(|o| -o / (c * n as f64)),
    }
}

fn main() {
    let Some(dir) = data_dir() else {
        eprintln!(
            "smo_large_c: set MAXMARGIN_DATA (cargo xtask bench --data-dir DIR); nothing measured"
        );
        return;
    };
    let have_libsvm = Command::new("svm-train").output().is_ok();
    let work = out_dir().join("smo-large-c");
    std::fs::create_dir_all(&work).expect("work dir");
    let mut rows = Vec::new();
    for set in SETS {
        let train = dir.join(set);
        if !train.exists() {
            continue;
        }
        for c in CS {
            rows.push(measure(&train, c, have_libsvm, &work));
        }
    }
    let opt = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or_else(|| "–".to_string(), f);
    let mut md = String::from(
        "# SMO at large C: maxmargin train --kernel linear -c C against svm-train -s 0 -t 0 -c C\n\n\
         | set | C | ours (s) | passes | stop | objective | gap | LIBSVM (s) | its iterations | its dual \
         | ratio |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in &rows {
        let _ = writeln!(
            md,
            "| {} | {} | {:.3} | {:.1} | {} | {:.6} | {} | {} | {} | {} | {} |",
            r.data,
            r.c,
            r.ours_seconds,
            r.ours_epochs,
            r.ours_stop,
            r.ours_objective,
            opt(r.ours_gap, &|g| format!("{g:.1e}")),
            opt(r.libsvm_seconds, &|t| format!("{t:.3}")),
            r.libsvm_iterations.map_or_else(
                || "–".to_string(),
                |i| format!("{i}{}", if i >= LIBSVM_CAP { " (its cap)" } else { "" })
            ),
            opt(r.libsvm_dual, &|d| format!("{d:.6}")),
            opt(r.libsvm_seconds, &|t| format!("{:.2}", r.ours_seconds / t)),
        );
    }
    let out = out_dir();
    std::fs::write(out.join("smo_large_c.md"), &md).expect("write report");
    std::fs::write(
        out.join("smo_large_c.json"),
        serde_json::to_string_pretty(&rows).expect("json"),
    )
    .expect("write report");
    print!("{md}");
}
