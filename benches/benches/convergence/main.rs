//! The convergence targets, whole commands side by side with LIBLINEAR (`liblinear-train`, Debian's
//! liblinear-tools, when on PATH), one thread, interleaved runs, medians:
//!
//! - binary: `maxmargin train F -o M --solver dcd -c 1 --bias none --threads 1` against `liblinear-train -s 3
//!   -c 1` (LIBLINEAR's defaults: no bias, ε = 0.1) on every binary set found, and on a synthetic copy of a9a
//!   with 8% of its rows emptied and 1% duplicated with the label flipped;
//! - multiclass: `--task multiclass -c 1 --bias none --epsilon 0.1 --threads 1` (Crammer–Singer, the default)
//!   against `liblinear-train -s 4 -c 1` on letter and pendigits scaled to [0, 1];
//! - the default `maxmargin train a9a` against the optimum of its objective (a DCD run at ε = 1e-5);
//! - raw pendigits with `--scale minmax`: converged, its gap and test accuracy;
//! - binary at equal precision (#29): on the sets of 5,000 rows or more, each program's loosest setting that
//!   ends within `PRECISION` (1e-4 by default) of the optimum, relative (ours `--gap`, or in a second row
//!   `--epsilon`; LIBLINEAR's `-e`: the first of a ladder that does), then the two timed side by side; ours
//!   on one thread, and by `--gap` on two with `--blocks 2`. `CONVERGENCE_PRECISION_ONLY=1` measures this table alone.
//!
//! Each row gives our time, LIBLINEAR's, the ratio, both objectives (LIBLINEAR's model read from its file and
//! evaluated by our code), our certified relative gap and whether our run converged.
//! Output: `target/bench-report/convergence.{md,json}`. Needs the release command (`cargo xtask bench` builds
//! it); reads `MAXMARGIN_DATA`.

use maxmargin::LinearModel;
use maxmargin::StructuredModel;
use maxmargin::core::objective::Lambda;
use maxmargin::io::libsvm::{self, BinaryLabels, ClassLabels, LabeledData};
use maxmargin::optim::{Bias, BinaryProblem, LinearWeights};
use maxmargin_benches::{command, data_dir, liblinear, median, out_dir, s};
use serde::Serialize;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

mod precision;
use precision::{OUR_EPSILONS, OUR_GAPS, precision_row, precision_table, reference};

const ROUNDS: usize = 5;

#[derive(Debug, Serialize)]
struct Row {
    name: String,
    ours_seconds: f64,
    liblinear_seconds: Option<f64>,
    ratio: Option<f64>,
    ours_objective: f64,
    liblinear_objective: Option<f64>,
    relative_gap: Option<f64>,
    converged: bool,
    passes: f64,
}

/// Our run's summary: its objective, certified gap, whether it converged, and its passes.
type Ours = (f64, Option<f64>, bool, f64);

impl Row {
    /// A row from both programs' median times, LIBLINEAR's objective and our run's summary.
    fn new(
        name: String,
        (ours_seconds, liblinear_seconds): (f64, Option<f64>),
        liblinear_objective: Option<f64>,
        (objective, gap, converged, passes): Ours,
    ) -> Self {
        Self {
            name,
            ours_seconds,
            liblinear_seconds,
            ratio: liblinear_seconds.map(|l| ours_seconds / l),
            ours_objective: objective,
            liblinear_objective,
            relative_gap: gap.map(|g| g / objective),
            converged,
            passes,
        }
    }
}

/// One line on stderr as each row is measured: the set, both times, their ratio, whether it converged.
fn progress(row: Option<&Row>) {
    let Some(r) = row else { return };
    let theirs = r
        .liblinear_seconds
        .map_or("-".into(), |t| format!("{t:.3}s"));
    let ratio = r.ratio.map_or("-".into(), |t| format!("{t:.2}x"));
    eprintln!(
        "convergence: {}: {:.3}s against LIBLINEAR {theirs} ({ratio}), {:.1} passes, converged {}",
        r.name, r.ours_seconds, r.passes, r.converged
    );
}

fn timed(cmd: &mut Command) -> f64 {
    let start = Instant::now();
    let ok = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(ok, "{cmd:?} failed");
    start.elapsed().as_secs_f64()
}

/// Writes `data` uncompressed, so both programs parse the same text.
fn write_plain(data: &LabeledData, path: &Path) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for (row, label) in data.x.rows().zip(&data.labels) {
        write!(f, "{label}").unwrap();
        for (j, v) in row.iter() {
            write!(f, " {}:{v}", j + 1).unwrap();
        }
        writeln!(f).unwrap();
    }
}

/// a9a with 8% of its rows emptied and 1% duplicated with the label flipped (seeded).
fn degenerate(data: &LabeledData, path: &Path) {
    let mut lcg = maxmargin::testing::Lcg::new(11);
    let mut next = move || (lcg.next_u64() >> 33) % 100;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for (row, &label) in data.x.rows().zip(&data.labels) {
        let (empty, dup) = (next() < 8, next() < 1);
        let line = |f: &mut std::io::BufWriter<std::fs::File>, label: f64, with_row: bool| {
            write!(f, "{label}").unwrap();
            if with_row {
                for (j, v) in row.iter() {
                    write!(f, " {}:{v}", j + 1).unwrap();
                }
            }
            writeln!(f).unwrap();
        };
        line(&mut f, label, !empty);
        if dup {
            line(&mut f, -label, !empty);
        }
    }
}

/// `(ours, liblinear)` median seconds over interleaved runs.
fn versus(ours: &mut Command, theirs: Option<&mut Command>) -> (f64, Option<f64>) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let mut theirs = theirs;
    for _ in 0..ROUNDS {
        a.push(timed(ours));
        if let Some(t) = theirs.as_deref_mut() {
            b.push(timed(t));
        }
    }
    (median(&mut a), (!b.is_empty()).then(|| median(&mut b)))
}

fn binary_row(name: &str, file: &Path, dir: &Path, have: bool) -> Row {
    let ours_model = dir.join(format!("{name}.ours.json"));
    let theirs_model = dir.join(format!("{name}.liblinear"));
    let mut ours = Command::new(command());
    ours.args([
        "train",
        &s(file),
        "-o",
        &s(&ours_model),
        "--solver",
        "dcd",
        "-c",
        "1",
        "--bias",
        "none",
        "--threads",
        "1",
        "-q",
    ]);
    let mut theirs = Command::new("liblinear-train");
    theirs.args(["-q", "-s", "3", "-c", "1", &s(file), &s(&theirs_model)]);
    let (ours_seconds, liblinear_seconds) = versus(&mut ours, have.then_some(&mut theirs));
    let model = LinearModel::load(&ours_model).unwrap();
    let data = libsvm::read(file).unwrap();
    let t = &model.training;
    let liblinear_objective = have
        .then(|| liblinear_binary_objective(&theirs_model, &data, model.lambda))
        .flatten();
    Row::new(
        format!("{name} binary dcd vs -s 3"),
        (ours_seconds, liblinear_seconds),
        liblinear_objective,
        (t.objective, t.gap, t.converged, t.epochs),
    )
}

/// LIBLINEAR's primal objective (λ-form, no bias) from its model file.
fn liblinear_binary_objective(path: &Path, data: &LabeledData, lambda: f64) -> Option<f64> {
    let m = liblinear::Model::read(path)?;
    let labels = BinaryLabels::from_labels(&data.source, &data.labels).ok()?;
    let y = labels.targets(data).ok()?;
    // LIBLINEAR's first label is its positive class.
    let first = m.labels.first().copied()?;
    let (w, _) = m.column(0, data.x.n_features());
    let sign = if first == labels.positive { 1.0 } else { -1.0 };
    let w: Vec<f64> = w.iter().map(|v| sign * v).collect();
    let problem = BinaryProblem::new(&data.x, &y, Lambda::new(lambda).ok()?, Bias::None).ok()?;
    Some(problem.objective(&LinearWeights { w, b: 0.0 }))
}

fn multiclass_row(name: &str, file: &Path, dir: &Path, have: bool, extra: &[&str]) -> Row {
    let ours_model = dir.join(format!("{name}.ours.json"));
    let theirs_model = dir.join(format!("{name}.liblinear"));
    let mut ours = Command::new(command());
    ours.args([
        "train",
        "--task",
        "multiclass",
        &s(file),
        "-o",
        &s(&ours_model),
        "-c",
        "1",
        "--bias",
        "none",
        "--epsilon",
        "0.1",
        "--threads",
        "1",
        "-q",
    ]);
    ours.args(extra);
    let mut theirs = Command::new("liblinear-train");
    theirs.args(["-q", "-s", "4", "-c", "1", &s(file), &s(&theirs_model)]);
    let run_theirs = have && extra.is_empty();
    let (ours_seconds, liblinear_seconds) = versus(&mut ours, run_theirs.then_some(&mut theirs));
    let model = StructuredModel::load(&ours_model).unwrap();
    let t = &model.training;
    let liblinear_objective = run_theirs
        .then(|| {
            let data = libsvm::read(file).ok()?;
            liblinear_multiclass_objective(&theirs_model, &data, &model)
        })
        .flatten();
    Row::new(
        format!("{name} multiclass cs vs -s 4"),
        (ours_seconds, liblinear_seconds),
        liblinear_objective,
        (t.objective, t.gap, t.converged, t.passes),
    )
}

/// LIBLINEAR's Crammer–Singer objective, by putting its weights into our model and evaluating there.
fn liblinear_multiclass_objective(
    path: &Path,
    data: &LabeledData,
    ours: &StructuredModel,
) -> Option<f64> {
    let m = liblinear::Model::read(path)?;
    let classes = ClassLabels::from_labels(&data.source, &data.labels).ok()?;
    let d = ours.n_features;
    let mut w = vec![0.0; d * classes.len()];
    for (k, &c) in classes.classes.iter().enumerate() {
        let col = m.labels.iter().position(|&l| l == c)?;
        let (wc, _) = m.column(col, d);
        w[k * d..(k + 1) * d].copy_from_slice(&wc[..d]);
    }
    let mut model = ours.clone();
    model.w = w;
    model
        .evaluate_multiclass(data, Some(ours.lambda))
        .ok()?
        .objective
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let Some(data) = data_dir() else {
        eprintln!("convergence: MAXMARGIN_DATA is not set; nothing measured");
        return;
    };
    if !command().exists() {
        eprintln!(
            "convergence: {} does not exist: build the release command first (cargo xtask bench does)",
            command().display()
        );
        std::process::exit(1);
    }
    let have = Command::new("liblinear-train").output().is_ok();
    let dir = out_dir().join("convergence-work");
    let _ = std::fs::create_dir_all(&dir);
    let mut rows = Vec::new();
    let mut precision = Vec::new();
    // CONVERGENCE_PRECISION_ONLY=1: the table at equal precision alone.
    let only_precision = std::env::var_os("CONVERGENCE_PRECISION_ONLY").is_some();
    let binary = [
        ("a9a", "a9a/a9a.gz"),
        ("reuters", "reuters_lasvm/reuters.trn.gz"),
        ("phishing", "phishing/phishing.gz"),
        ("mushrooms", "mushrooms/mushrooms"),
        ("heart_scale", "heart_scale/heart_scale"),
        ("breast_cancer", "breast-cancer_scale/breast-cancer_scale"),
    ];
    for (name, rel) in binary {
        let Ok(d) = libsvm::read(&data.join(rel)) else {
            continue;
        };
        let plain = dir.join(format!("{name}.svm"));
        write_plain(&d, &plain);
        if d.x.n_rows() >= 5_000 {
            // Sets whose runs take more than the process's start.
            let files = (plain.as_path(), dir.as_path());
            let r = reference(name, files, have);
            for (threads, knob) in [
                ("1", ("--gap", &OUR_GAPS[..])),
                ("1", ("--epsilon", &OUR_EPSILONS[..])),
                ("2", ("--gap", &OUR_GAPS[..])),
            ] {
                precision.push(precision_row(name, files, &r, threads, knob));
                eprintln!("convergence: {:?}", precision.last());
            }
        }
        if only_precision {
            continue;
        }
        rows.push(binary_row(name, &plain, &dir, have));
        if name == "a9a" {
            let deg = dir.join("a9a_degenerate.svm");
            degenerate(&d, &deg);
            rows.push(binary_row("a9a_degenerate", &deg, &dir, have));
        }
        progress(rows.last());
    }
    let mut multiclass = Vec::new();
    if only_precision {
        let md = precision_table(&precision);
        std::fs::write(out_dir().join("convergence_precision.md"), &md).unwrap();
        println!("{md}");
        return;
    }
    if let Ok(d) = libsvm::read(&data.join("letter/letter.scale.gz")) {
        let p = dir.join("letter.svm");
        write_plain(&d, &p);
        multiclass.push(("letter", p));
    }
    if let Ok(d) = libsvm::read(&data.join("pendigits/pendigits")) {
        // Scaled to [0, 1] (the features are 0–100), as the end-to-end table does.
        let mut scaled = d.clone();
        let rows_scaled = maxmargin::core::scale::Scaler::fit(
            maxmargin::core::scale::Scaling::MinMax,
            d.x.rows(),
            d.x.n_rows(),
            d.x.n_features(),
        )
        .unwrap()
        .transform(&d.x);
        scaled.x = rows_scaled;
        let p = dir.join("pendigits_scaled.svm");
        write_plain(&scaled, &p);
        multiclass.push(("pendigits_scaled", p));
    }
    for (name, p) in &multiclass {
        rows.push(multiclass_row(name, p, &dir, have, &[]));
        progress(rows.last());
    }
    // Raw pendigits, scaled inside the model.
    let raw = data.join("pendigits/pendigits");
    let mut accuracy = None;
    if raw.exists() {
        let mut r = multiclass_row(
            "pendigits_raw_minmax",
            &raw,
            &dir,
            false,
            &["--scale", "minmax"],
        );
        r.name = "pendigits raw --scale minmax".into();
        let model = StructuredModel::load(&dir.join("pendigits_raw_minmax.ours.json")).unwrap();
        let test = libsvm::read(&data.join("pendigits/pendigits.t")).unwrap();
        accuracy = model.evaluate_multiclass(&test, None).unwrap().accuracy;
        rows.push(r);
    }
    // The default command on a9a against the optimum of its objective.
    let mut default_gap = None;
    let a9a = data.join("a9a/a9a.gz");
    if a9a.exists() {
        let (m1, m2) = (dir.join("a9a.default.json"), dir.join("a9a.tight.json"));
        let run = |args: &[&str]| {
            let st = Command::new(command()).args(args).status().unwrap();
            assert!(st.success());
        };
        run(&["train", &s(&a9a), "-o", &s(&m1), "-q"]);
        run(&["train", &s(&a9a), "-o", &s(&m2), "-q", "--epsilon", "1e-5"]);
        let (d, t) = (
            LinearModel::load(&m1).unwrap(),
            LinearModel::load(&m2).unwrap(),
        );
        let optimum = t.training.objective - t.training.gap.unwrap_or(0.0);
        default_gap = Some((d.training.objective - optimum) / optimum);
    }
    let mut md = String::new();
    let _ = writeln!(
        md,
        "| run | ours (s) | LIBLINEAR (s) | ratio | our objective | LIBLINEAR's | our relative gap | converged | passes |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|");
    let f = |v: Option<f64>, p: usize| v.map_or("–".into(), |v| format!("{v:.p$}"));
    for r in &rows {
        let _ = writeln!(
            md,
            "| {} | {:.3} | {} | {} | {:.6} | {} | {} | {} | {:.1} |",
            r.name,
            r.ours_seconds,
            f(r.liblinear_seconds, 3),
            f(r.ratio, 2),
            r.ours_objective,
            f(r.liblinear_objective, 6),
            r.relative_gap.map_or("–".into(), |g| format!("{g:.1e}")),
            if r.converged { "yes" } else { "no" },
            r.passes
        );
    }
    let _ = writeln!(
        md,
        "\nDefault `maxmargin train a9a.gz -o M`: {} above the optimum of its objective (relative).",
        default_gap.map_or("–".into(), |g| format!("{g:.1e}"))
    );
    let _ = writeln!(
        md,
        "Raw pendigits with `--scale minmax`: test accuracy {}.",
        f(accuracy, 4)
    );
    md.push_str(&precision_table(&precision));
    if !have {
        let _ = writeln!(
            md,
            "\n`liblinear-train` was not on PATH: only our side was measured."
        );
    }
    let out = out_dir();
    std::fs::write(out.join("convergence.md"), &md).unwrap();
    std::fs::write(
        out.join("convergence.json"),
        serde_json::to_string_pretty(&serde_json::json!({
            "rows": rows,
            "default_a9a_relative_excess": default_gap,
            "pendigits_minmax_accuracy": accuracy,
            "equal_precision": precision,
        }))
        .unwrap(),
    )
    .unwrap();
    println!("{md}");
}
