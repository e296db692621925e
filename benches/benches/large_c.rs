//! Large C against LIBLINEAR and LIBSVM: C from 1 to 10⁴, as a grid search over C reaches, on the small
//! binary sets with few features. Large C makes the dual's faces flat (few free duals, a kernel of low
//! rank), where coordinate steps (DCD) and pair updates (SMO) crawl; ours adds face steps there
//! (`maxmargin_optim`'s `face.rs`).
//!
//! Two tables. DCD: `train -c C` (defaults: the hinge, the bias a feature) against `liblinear-train -s 3 -c
//! C -B 1` (defaults: ε = 0.1, its cap of 1,000 iterations). SMO: `train --kernel linear -c C` (the same
//! objective in both, no γ to match) against `svm-train -s 0 -t 0 -c C` (defaults: ε = 10⁻³, its cap of
//! 10⁷ iterations). Medians of 3 interleaved runs of the whole commands; our passes, stop reason, objective
//! and certified gap from the model; the reference's iterations, whether it stopped at its cap (its
//! warning), and its dual in our λ-form (`−obj/(C·n)`), which the optimum bounds from above.
//!
//! Rerun: `cargo build --release -p maxmargin-cli && MAXMARGIN_DATA=/abs/path/to/shared/data cargo bench -p
//! maxmargin-benches --bench large_c`. Output: `target/bench-report/large_c.{md,json}`. Needs `svm-train`
//! and `liblinear-train` on PATH (`apt-get install libsvm-tools liblinear-tools`) for their columns.

use maxmargin_benches::{command, data_dir, median, out_dir, s, timed_command, value_after};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

const SETS: [&str; 2] = [
    "heart_scale/heart_scale",
    "breast-cancer_scale/breast-cancer_scale",
];
const CS: [f64; 4] = [1.0, 100.0, 1000.0, 10000.0];
/// The two methods measured: ours (its extra flags) and the reference (program, its flags, the key of its
/// dual objective in what it prints).
#[derive(Clone, Copy)]
struct Method {
    name: &'static str,
    ours: &'static [&'static str],
    program: &'static str,
    theirs: &'static [&'static str],
    objective_key: &'static str,
}

const METHODS: [Method; 2] = [
    Method {
        name: "dcd",
        ours: &[],
        program: "liblinear-train",
        theirs: &["-s", "3", "-B", "1"],
        objective_key: "Objective value = ",
    },
    Method {
        name: "smo",
        ours: &["--kernel", "linear"],
        program: "svm-train",
        theirs: &["-s", "0", "-t", "0"],
        objective_key: "obj = ",
    },
];

#[derive(Serialize)]
struct Row {
    method: &'static str,
    data: String,
    rows: usize,
    c: f64,
    ours_seconds: f64,
    ours_epochs: f64,
    ours_stop: String,
    ours_objective: f64,
    ours_gap: Option<f64>,
    reference_seconds: Option<f64>,
    reference_iterations: Option<u64>,
    reference_at_cap: Option<bool>,
    reference_dual: Option<f64>,
}

/// A whole command's seconds and what it printed (LIBSVM warns of its cap on stderr, LIBLINEAR on stdout).
fn timed(c: Command) -> (f64, String) {
    let (t, out, err) = timed_command(c);
    (t, out + &err)
}

/// One set at one C; `have`: the reference program is on PATH.
fn measure(method: Method, have: bool, train: &Path, c: f64, work: &Path) -> Row {
    let (mine, yours) = (work.join("model.mm"), work.join("model.ref"));
    let ours = || {
        let mut cmd = Command::new(command());
        cmd.args(["train", &s(train), "-q"])
            .args(method.ours)
            .args(["-c", &c.to_string(), "-o", &s(&mine)]);
        cmd
    };
    let theirs = || {
        let mut cmd = Command::new(method.program);
        cmd.args(method.theirs)
            .args(["-c", &c.to_string()])
            .args([&s(train), &s(&yours)]);
        cmd
    };
    let (mut one, mut lib, mut out) = (Vec::new(), Vec::new(), String::new());
    for _ in 0..3 {
        one.push(timed(ours()).0);
        if have {
            let (t, o) = timed(theirs());
            lib.push(t);
            out = o;
        }
    }
    let model = maxmargin::linear::LinearModel::load(&mine).expect("our model");
    let t = &model.training;
    let n = t.n_samples;
    Row {
        method: method.name,
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
        reference_seconds: have.then(|| median(&mut lib)),
        reference_iterations: have.then(|| value_after(&out, "#iter = ")).flatten(),
        reference_at_cap: have.then(|| out.contains("reaching max number of iterations")),
        reference_dual: have
            .then(|| value_after::<f64>(&out, method.objective_key))
            .flatten()
            .map(|o| -o / (c * n as f64)),
    }
}

fn main() {
    let Some(dir) = data_dir() else {
        eprintln!(
            "large_c: set MAXMARGIN_DATA (cargo xtask bench --data-dir DIR); nothing measured"
        );
        return;
    };
    let work = out_dir().join("large-c");
    std::fs::create_dir_all(&work).expect("work dir");
    let mut rows = Vec::new();
    for method in METHODS {
        let have = Command::new(method.program).output().is_ok();
        for set in SETS {
            let train = dir.join(set);
            if !train.exists() {
                continue;
            }
            for c in CS {
                rows.push(measure(method, have, &train, c, &work));
            }
        }
    }
    let opt = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or_else(|| "–".to_string(), f);
    let mut md = String::new();
    for method in METHODS {
        let _ = write!(
            md,
            "# Large C, {}: maxmargin train {} against {} {}\n\n\
             | set | C | ours (s) | passes | stop | objective | gap | {} (s) | its iterations | its dual \
             | ratio |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
            method.name,
            if method.ours.is_empty() {
                "(defaults)".to_string()
            } else {
                method.ours.join(" ")
            },
            method.program,
            method.theirs.join(" "),
            method.program,
        );
        for r in rows.iter().filter(|r| r.method == method.name) {
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
                opt(r.reference_seconds, &|t| format!("{t:.3}")),
                r.reference_iterations.map_or_else(
                    || "–".to_string(),
                    |i| format!(
                        "{i}{}",
                        if r.reference_at_cap == Some(true) {
                            " (its cap)"
                        } else {
                            ""
                        }
                    )
                ),
                opt(r.reference_dual, &|d| format!("{d:.6}")),
                opt(r.reference_seconds, &|t| format!(
                    "{:.2}",
                    r.ours_seconds / t
                )),
            );
        }
        md.push('\n');
    }
    let out = out_dir();
    std::fs::write(out.join("large_c.md"), &md).expect("write report");
    std::fs::write(
        out.join("large_c.json"),
        serde_json::to_string_pretty(&rows).expect("json"),
    )
    .expect("write report");
    print!("{md}");
}
