//! Kernel SVMs against LIBSVM (`svm-train -s 0 -t 2`), whole commands side by side on every binary set found
//! in `MAXMARGIN_DATA` small enough for an exact kernel (≤ 50k rows), RBF at C = 1 with the same γ (scikit-learn's
//! `scale` on the training rows, passed to both as a number).
//!
//! For each set: the dual objective of both (LIBSVM prints its `obj`; ours is the model's objective minus its
//! certified gap, in the C-form), their relative difference, the support vectors, the test accuracy of both
//! (the set's test file, or every fifth row held out), the whole command's seconds of ours on one and on two
//! threads against `svm-train` (`-m 100`, ours `--cache-mb 100`; medians of 3 interleaved runs, 1 on sets over
//! 20k rows), and our peak memory beside the cache bound plus the data's size.
//!
//! Then multiclass (letter, pendigits, iris): one-vs-one SMO against `svm-train` at C = 1 and the same γ (the
//! dual summed over the machines: ours computed from the model's coefficients, LIBSVM's from the `obj` it prints
//! per machine), test accuracy, SVs and seconds; and the Nyström approximation with
//! K = 1000 landmarks beside the exact model: its accuracy and batch predictions per second (in process,
//! median of 3), the ratio of the two speeds.
//!
//! Output: `target/bench-report/kernel.{md,json}` (and `kernel_multiclass.json`). Needs the release command and LIBSVM's `svm-train` /
//! `svm-predict` on PATH (`apt-get install libsvm-tools`).

use maxmargin::core::kernel::gamma_scale;
use maxmargin::io::libsvm::{self, LabeledData};
use maxmargin_benches::{command, data_dir, median, out_dir, s, timed_command, value_after};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const SETS: [(&str, Option<&str>); 5] = [
    ("heart_scale/heart_scale", None),
    ("breast-cancer_scale/breast-cancer_scale", None),
    ("mushrooms/mushrooms", None),
    ("phishing/phishing.gz", None),
    ("a9a/a9a.gz", Some("a9a/a9a.t.gz")),
];
const MAX_ROWS: usize = 50_000;
const MULTICLASS: [(&str, Option<&str>); 3] = [
    ("letter/letter.scale.gz", Some("letter/letter.scale.t.gz")),
    ("pendigits/pendigits", Some("pendigits/pendigits.t")),
    ("sklearn_iris/iris.libsvm.gz", None),
];
const LANDMARKS: usize = 1000;

/// What both tables compare, LIBSVM's side absent where it is not installed: the duals, the support
/// vectors, the test accuracy, and the medians of the whole command's seconds (ours on one and two threads).
#[derive(Serialize)]
struct Against {
    theirs_dual: Option<f64>,
    ours_dual: f64,
    relative_difference: Option<f64>,
    theirs_support: Option<usize>,
    ours_support: usize,
    theirs_accuracy: Option<f64>,
    ours_accuracy: f64,
    theirs_seconds: Option<f64>,
    ours_seconds_1: f64,
    ours_seconds_2: f64,
    ratio_1: Option<f64>,
    ratio_2: Option<f64>,
}

impl Against {
    /// From (LIBSVM's, ours) duals, support vectors and accuracies, and the runs' seconds (LIBSVM's, ours on
    /// one thread, on two).
    fn new(
        (theirs_dual, ours_dual): (Option<f64>, f64),
        (theirs_support, ours_support): (Option<usize>, usize),
        (theirs_accuracy, ours_accuracy): (Option<f64>, f64),
        (lib, one, two): (&mut [f64], &mut [f64], &mut [f64]),
    ) -> Self {
        let theirs_seconds = (!lib.is_empty()).then(|| median(lib));
        let (s1, s2) = (median(one), median(two));
        Self {
            theirs_dual,
            ours_dual,
            relative_difference: theirs_dual.map(|d| (ours_dual - d) / d),
            theirs_support,
            ours_support,
            theirs_accuracy,
            ours_accuracy,
            theirs_seconds,
            ours_seconds_1: s1,
            ours_seconds_2: s2,
            ratio_1: theirs_seconds.map(|t| s1 / t),
            ratio_2: theirs_seconds.map(|t| s2 / t),
        }
    }

    /// The table's cells from the duals to the ratio on two threads; `also` (Nyström's) follows our accuracy.
    fn cells(&self, also: Option<f64>) -> String {
        let cell = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or("-".to_string(), f);
        let also = also.map_or(String::new(), |a| format!(" / {a:.4}"));
        format!(
            "{} | {:.6} | {} | {} / {} | {} / {:.4}{also} | {} | {:.2} | {} | {:.2} | {}",
            cell(self.theirs_dual, &|v| format!("{v:.6}")),
            self.ours_dual,
            cell(self.relative_difference, &|v| format!("{v:.1e}")),
            cell(self.theirs_support.map(|v| v as f64), &|v| format!("{v}")),
            self.ours_support,
            cell(self.theirs_accuracy, &|v| format!("{v:.4}")),
            self.ours_accuracy,
            cell(self.theirs_seconds, &|v| format!("{v:.2}")),
            self.ours_seconds_1,
            cell(self.ratio_1, &|v| format!("{v:.2}")),
            self.ours_seconds_2,
            cell(self.ratio_2, &|v| format!("{v:.2}")),
        )
    }
}

#[derive(Serialize)]
struct MulticlassRow {
    data: String,
    rows: usize,
    classes: usize,
    gamma: f64,
    #[serde(flatten)]
    against: Against,
    nystroem_accuracy: f64,
    nystroem_seconds: f64,
    exact_rows_per_second: f64,
    nystroem_rows_per_second: f64,
    speedup: f64,
}

/// `Σ_machines (Σ|coef| − ½ Σ_jk coef_j coef_k K(s_j, s_k))`: the C-form duals of a multiclass kernel
/// model's machines (coef = α y), summed.
fn machines_dual(k: &maxmargin::structured_svm::MulticlassKernel) -> f64 {
    k.machines
        .iter()
        .map(|m| {
            let rows: Vec<_> = m.rows.iter().map(|&r| k.support.row(r as usize)).collect();
            let mut quad = 0.0;
            for (a, ca) in rows.iter().zip(&m.coef) {
                for (b, cb) in rows.iter().zip(&m.coef) {
                    quad += ca * cb * k.kernel.eval(*a, *b);
                }
            }
            m.coef.iter().map(|c| c.abs()).sum::<f64>() - 0.5 * quad
        })
        .sum()
}

/// Rows per second of `predict_multiclass` on `data` (median of 3).
fn rows_per_second(model: &maxmargin::StructuredModel, data: &LabeledData) -> f64 {
    let mut t: Vec<f64> = (0..3)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(model.predict_multiclass(data).expect("predict"));
            start.elapsed().as_secs_f64()
        })
        .collect();
    data.n_samples() as f64 / median(&mut t)
}

fn multiclass(dir: &Path, work: &Path, have_libsvm: bool) -> Vec<MulticlassRow> {
    let mut rows = Vec::new();
    for (set, test) in MULTICLASS {
        let Some((name, train, test, tr, te)) = prepare(dir, set, test, work) else {
            continue;
        };
        let gamma = gamma_scale(&train.x);
        let (mine, yours, approx) = (
            work.join(format!("{name}.mm")),
            work.join(format!("{name}.svm")),
            work.join(format!("{name}.nystroem.mm")),
        );
        let ours_multiclass = |threads: usize| {
            let mut c = ours(&tr, &mine, gamma, threads);
            c.args(["--task", "multiclass"]);
            c
        };
        let (mut one, mut two, mut lib) = (Vec::new(), Vec::new(), Vec::new());
        let mut libsvm_out = String::new();
        for _ in 0..3 {
            one.push(timed_command(ours_multiclass(1)).0);
            two.push(timed_command(ours_multiclass(2)).0);
            if have_libsvm {
                let (t, out, _) = timed_command(theirs(&tr, &yours, gamma));
                lib.push(t);
                libsvm_out = out;
            }
        }
        let mut c = Command::new(command());
        c.args([
            "train",
            &s(&tr),
            "--task",
            "multiclass",
            "--approx",
            "nystroem",
            "-q",
        ])
        .args([
            "--components",
            &LANDMARKS.to_string(),
            "--gamma",
            &format!("{gamma:e}"),
        ])
        .args(["--solver", "ovr", "-c", "1", "-o", &s(&approx)]);
        let nystroem_seconds = timed_command(c).0;
        let model = maxmargin::StructuredModel::load(&mine).expect("our model");
        let nystroem = maxmargin::StructuredModel::load(&approx).expect("our nystroem model");
        let k = model.kernel.as_ref().expect("a kernel model");
        let ours_dual = machines_dual(k);
        let accuracy = |m: &maxmargin::StructuredModel| {
            m.evaluate_multiclass(&test, None)
                .expect("eval")
                .accuracy
                .unwrap_or(0.0)
        };
        // LIBSVM prints one `obj = ` per machine: the minimized ½αᵀQα − Σα.
        let objs: Vec<f64> = libsvm_out
            .split("obj = ")
            .skip(1)
            .filter_map(|r| r.split(',').next()?.trim().parse().ok())
            .collect();
        let theirs_dual = (have_libsvm && !objs.is_empty()).then(|| -objs.iter().sum::<f64>());
        let theirs_support = libsvm_out
            .rsplit("Total nSV = ")
            .next()
            .filter(|_| have_libsvm)
            .and_then(|r| r.lines().next())
            .and_then(|v| v.trim().parse().ok());
        let theirs_accuracy = have_libsvm
            .then(|| libsvm_accuracy(&te, &yours, work))
            .flatten();
        let (exact_rps, nystroem_rps) = (
            rows_per_second(&model, &test),
            rows_per_second(&nystroem, &test),
        );
        rows.push(MulticlassRow {
            data: name,
            rows: train.n_samples(),
            classes: model.n_labels,
            gamma,
            against: Against::new(
                (theirs_dual, ours_dual),
                (theirs_support, k.n_support()),
                (theirs_accuracy, accuracy(&model)),
                (&mut lib, &mut one, &mut two),
            ),
            nystroem_accuracy: accuracy(&nystroem),
            nystroem_seconds,
            exact_rows_per_second: exact_rps,
            nystroem_rows_per_second: nystroem_rps,
            speedup: nystroem_rps / exact_rps,
        });
    }
    rows
}

#[derive(Serialize)]
struct Row {
    data: String,
    rows: usize,
    gamma: f64,
    #[serde(flatten)]
    against: Against,
    ours_peak_mb: Option<f64>,
    data_mb: f64,
}

/// Our RBF SVM (C = 1, a 100 MB cache) on `train`, saved to `model`; a binary one unless more arguments say.
fn ours(train: &Path, model: &Path, gamma: f64, threads: usize) -> Command {
    let mut c = Command::new(command());
    c.args(["train", &s(train), "--kernel", "rbf", "-c", "1", "-q"])
        .args(["--gamma", &format!("{gamma:e}"), "--cache-mb", "100"])
        .args(["--threads", &threads.to_string(), "-o", &s(model)]);
    c
}

fn theirs(train: &Path, model: &Path, gamma: f64) -> Command {
    let mut c = Command::new("svm-train");
    c.args(["-s", "0", "-t", "2", "-c", "1", "-m", "100"])
        .args(["-g", &format!("{gamma:e}"), &s(train), &s(model)]);
    c
}

fn peak_mb(c: &Command) -> Option<f64> {
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(c.get_program())
        .args(c.get_args())
        .output()
        .ok()?;
    let kb: f64 = String::from_utf8_lossy(&out.stderr)
        .lines()
        .last()?
        .trim()
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

/// A set's training and test rows (its test file, or every fifth row held out), written under `work` as
/// `NAME.train` and `NAME.test`: `(NAME, train, test, train file, test file)`; `None` when the set is absent.
fn prepare(
    dir: &Path,
    set: &str,
    test: Option<&str>,
    work: &Path,
) -> Option<(String, LabeledData, LabeledData, PathBuf, PathBuf)> {
    let all = libsvm::read(&dir.join(set)).ok()?;
    let (train, test) = match test.and_then(|t| libsvm::read(&dir.join(t)).ok()) {
        Some(t) => (all, t),
        None => split(&all),
    };
    let name = set.split('/').next().unwrap_or(set).to_string();
    let (tr, te) = (
        work.join(format!("{name}.train")),
        work.join(format!("{name}.test")),
    );
    libsvm::write(&tr, &train).expect("write");
    libsvm::write(&te, &test).expect("write");
    Some((name, train, test, tr, te))
}

/// `svm-predict`'s accuracy of the LIBSVM model `model` on the rows of `test`.
fn libsvm_accuracy(test: &Path, model: &Path, work: &Path) -> Option<f64> {
    let out = Command::new("svm-predict")
        .args([s(test), s(model), s(&work.join("predictions"))])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let pct: f64 = text
        .split("Accuracy = ")
        .nth(1)?
        .split('%')
        .next()?
        .parse()
        .ok()?;
    Some(pct / 100.0)
}

/// Every fifth row held out, the rest to train on.
fn split(data: &LabeledData) -> (LabeledData, LabeledData) {
    let pick = |keep: &dyn Fn(usize) -> bool| {
        let idx: Vec<usize> = (0..data.n_samples()).filter(|&i| keep(i)).collect();
        data.select(&idx)
    };
    (pick(&|i| i % 5 != 4), pick(&|i| i % 5 == 4))
}

fn main() {
    let Some(dir) = data_dir() else {
        eprintln!(
            "kernel: set MAXMARGIN_DATA (cargo xtask bench --data-dir DIR); nothing measured"
        );
        return;
    };
    let have_libsvm = Command::new("svm-train").output().is_ok();
    let work = out_dir().join("kernel-data");
    std::fs::create_dir_all(&work).expect("work dir");
    let mut rows = Vec::new();
    for (set, test) in SETS {
        let Some((name, train, test, tr, te)) = prepare(&dir, set, test, &work) else {
            continue;
        };
        if train.n_samples() > MAX_ROWS {
            continue;
        }
        let gamma = gamma_scale(&train.x);
        let (mine, yours) = (
            work.join(format!("{name}.mm")),
            work.join(format!("{name}.svm")),
        );
        let rounds = if train.n_samples() > 20_000 { 1 } else { 3 };
        let (mut one, mut two, mut lib) = (Vec::new(), Vec::new(), Vec::new());
        let mut libsvm_out = String::new();
        for _ in 0..rounds {
            one.push(timed_command(ours(&tr, &mine, gamma, 1)).0);
            two.push(timed_command(ours(&tr, &mine, gamma, 2)).0);
            if have_libsvm {
                let (t, out, _) = timed_command(theirs(&tr, &yours, gamma));
                lib.push(t);
                libsvm_out = out;
            }
        }
        let model = maxmargin::linear::LinearModel::load(&mine).expect("our model");
        let t = &model.training;
        let ours_dual = (t.objective - t.gap.unwrap_or(0.0)) / model.lambda;
        let ours_accuracy = model.evaluate(&test, None).expect("eval").accuracy;
        let theirs_dual = have_libsvm
            .then(|| value_after::<f64>(&libsvm_out, "obj = "))
            .flatten()
            .map(|o| -o);
        let theirs_support = have_libsvm
            .then(|| value_after(&libsvm_out, "nSV = "))
            .flatten();
        let theirs_accuracy = have_libsvm
            .then(|| libsvm_accuracy(&te, &yours, &work))
            .flatten();
        rows.push(Row {
            data: name,
            rows: train.n_samples(),
            gamma,
            against: Against::new(
                (theirs_dual, ours_dual),
                (
                    theirs_support,
                    model.kernel.as_ref().map_or(0, |k| k.n_support()),
                ),
                (theirs_accuracy, ours_accuracy),
                (&mut lib, &mut one, &mut two),
            ),
            ours_peak_mb: peak_mb(&ours(&tr, &mine, gamma, 2)),
            data_mb: std::fs::metadata(&tr).map_or(0.0, |m| m.len() as f64 / 1048576.0),
        });
    }
    let mut md = String::from(
        "# Kernel SVMs: maxmargin train --kernel rbf against svm-train -s 0 -t 2 (C = 1, the same gamma)\n\n\
         | data | rows | gamma | dual (LIBSVM) | dual (ours) | relative difference | SVs (LIBSVM / ours) | test accuracy (LIBSVM / ours) | LIBSVM s | ours s, 1 thread | ratio | ours s, 2 threads | ratio | our peak MB | data file MB |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in &rows {
        let _ = writeln!(
            md,
            "| {} | {} | {:.4e} | {} | {} | {:.1} |",
            r.data,
            r.rows,
            r.gamma,
            r.against.cells(None),
            r.ours_peak_mb.map_or("-".into(), |v| format!("{v:.0}")),
            r.data_mb,
        );
    }
    let multi = multiclass(&dir, &work, have_libsvm);
    md.push_str(
        "\n# Multiclass: train --task multiclass --kernel rbf (one-vs-one SMO) against svm-train (C = 1, the same gamma), and Nyström with 1000 landmarks\n\n\
         | data | rows | classes | gamma | dual, summed (LIBSVM) | dual (ours) | relative difference | SVs (LIBSVM / ours) | test accuracy (LIBSVM / ours / Nyström) | LIBSVM s | ours s, 1 thread | ratio | ours s, 2 threads | ratio | Nyström fit s | predictions/s exact / Nyström | Nyström speed-up |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in &multi {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {:.4e} | {} | {:.2} | {:.0} / {:.0} | {:.1} |",
            r.data,
            r.rows,
            r.classes,
            r.gamma,
            r.against.cells(Some(r.nystroem_accuracy)),
            r.nystroem_seconds,
            r.exact_rows_per_second,
            r.nystroem_rows_per_second,
            r.speedup,
        );
    }
    println!("{md}");
    let out = out_dir();
    std::fs::write(
        out.join("kernel_multiclass.json"),
        serde_json::to_string_pretty(&multi).expect("json"),
    )
    .expect("write the report");
    std::fs::write(out.join("kernel.md"), &md).expect("write the report");
    std::fs::write(
        out.join("kernel.json"),
        serde_json::to_string_pretty(&rows).expect("json"),
    )
    .expect("write the report");
}
