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
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/bench-report")
}

/// Seeded 80/20 split of `data`.
fn split(data: &LabeledData) -> (LabeledData, LabeledData) {
    let n = data.n_samples();
    let order = maxmargin::optim::random::permutation(n, 2026);
    let cut = n * 4 / 5;
    let mut train: Vec<usize> = order[..cut].to_vec();
    let mut test: Vec<usize> = order[cut..].to_vec();
    train.sort_unstable();
    test.sort_unstable();
    let subset = |rows: &[usize]| LabeledData {
        x: data.x.select(rows),
        labels: rows.iter().map(|&i| data.labels[i]).collect(),
        qids: vec![None; rows.len()],
        lines: rows.iter().map(|&i| i + 1).collect(),
        source: data.source.clone(),
    };
    (subset(&train), subset(&test))
}

fn scaled(data: LabeledData, s: f64) -> LabeledData {
    if s == 1.0 {
        return data;
    }
    let mut x = SparseRows::new();
    for r in data.x.rows() {
        let v: Vec<f64> = r.values().iter().map(|v| v * s).collect();
        // Same indices, increasing as before: cannot fail.
        let _ = x.push_row(r.indices(), &v);
    }
    x.set_n_features_at_least(data.x.n_features());
    LabeledData { x, ..data }
}

/// How a solver's output is judged: its training objective, its test accuracy, and the objective to reach.
struct Judge<'a, O> {
    objective: &'a dyn Fn(&O) -> f64,
    accuracy: &'a dyn Fn(&O) -> f64,
    target: f64,
}

/// Drives a solver pass by pass, the clock running only inside `step`, the objective evaluated after every
/// pass off the clock, until the target, the solver's own stop, or the caps.
fn curve<P, S: Solver<P>>(
    name: &str,
    solver: &mut S,
    problem: &P,
    judge: &Judge<'_, S::Output>,
    max_passes: f64,
) -> Option<Curve> {
    let (objective, accuracy, target) = (judge.objective, judge.accuracy, judge.target);
    let every = 1.0;
    let mut state = solver.init(problem).ok()?;
    let mut points = Vec::new();
    let mut seconds = 0.0;
    let mut next = every;
    let mut reached = None;
    let mut last = None;
    loop {
        let start = Instant::now();
        solver.step(problem, &mut state).ok()?;
        seconds += start.elapsed().as_secs_f64();
        let passes = solver.progress(problem, &state).epoch;
        let done = solver.stop(&state).is_some() || seconds > CURVE_SECONDS || passes >= max_passes;
        if passes + 1e-12 >= next || done {
            while next <= passes + 1e-12 {
                next += every;
            }
            let out = solver.output(problem, &state);
            let o = objective(&out);
            points.push(Point {
                seconds,
                passes,
                objective: o,
            });
            if o <= target {
                reached = Some((seconds, passes));
                last = Some(out);
                break;
            }
            last = Some(out);
        }
        if done {
            break;
        }
    }
    Some(Curve {
        solver: name.into(),
        points,
        reached,
        test_accuracy: last.map_or(f64::NAN, |o| accuracy(&o)),
    })
}

/// Fraction of `y` (±1) predicted right by `sign(⟨w, x⟩ + b)`.
fn binary_accuracy(x: &SparseRows, y: &[f64], w: &LinearWeights) -> f64 {
    let right = x
        .rows()
        .zip(y)
        .filter(|(r, y)| {
            let f: f64 = r
                .iter()
                .filter(|(j, _)| *j < w.w.len())
                .map(|(j, v)| v * w.w[j])
                .sum::<f64>()
                + w.b;
            (f > 0.0) == (**y > 0.0)
        })
        .count();
    right as f64 / y.len().max(1) as f64
}

/// The rows with the constant feature appended at `d`, features at or beyond `d` dropped.
fn with_bias(x: &SparseRows, d: usize) -> Vec<SparseVec> {
    x.rows()
        .map(|r| {
            let (mut idx, mut val): (Vec<u32>, Vec<f64>) = r
                .iter()
                .filter(|(j, _)| *j < d)
                .map(|(j, v)| (j as u32, v))
                .unzip();
            idx.push(d as u32);
            val.push(1.0);
            SparseVec::new(idx, val).unwrap_or_default()
        })
        .collect()
}

/// Fraction of classes right by `argmax_m ⟨w_m, x⟩` (label-major weights over `width` inputs).
fn multiclass_accuracy(x: &[SparseVec], y: &[u32], w: &[f64], k: usize) -> f64 {
    let width = w.len() / k;
    let right = x
        .iter()
        .zip(y)
        .filter(|(x, y)| {
            let mut best = (0, f64::NEG_INFINITY);
            for m in 0..k {
                let s = x.as_row().dot(&w[m * width..(m + 1) * width]);
                if s > best.1 {
                    best = (m, s);
                }
            }
            best.0 == **y as usize
        })
        .count();
    right as f64 / y.len().max(1) as f64
}

/// `(seconds, success)` of a command.
fn timed(cmd: &mut Command) -> Option<f64> {
    let start = Instant::now();
    let status = cmd.status().ok()?;
    status.success().then(|| start.elapsed().as_secs_f64())
}

/// Peak resident set in KB of a command, by `/usr/bin/time -f %M`.
fn peak_kb(cmd: &Command) -> Option<u64> {
    let mut t = Command::new("/usr/bin/time");
    t.args(["-f", "%M"])
        .arg(cmd.get_program())
        .args(cmd.get_args());
    let out = t.output().ok()?;
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .last()?
        .trim()
        .parse()
        .ok()
}

/// A cached optimum: the best primal objective found and its certified gap (absolute), when there is one.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Optimum {
    objective: f64,
    gap: Option<f64>,
}

/// The cached optimum of `key`, or `compute()` stored under it.
fn cached(key: &str, compute: impl FnOnce() -> Option<(f64, f64)>) -> Option<(f64, f64)> {
    let path = out_dir().join("optimum.json");
    let mut cache: BTreeMap<String, Optimum> = std::fs::read_to_string(&path)
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default();
    if let Some(v) = cache.get(key) {
        return Some((v.objective, v.gap.unwrap_or(f64::NAN)));
    }
    let v = compute()?;
    cache.insert(
        key.into(),
        Optimum {
            objective: v.0,
            gap: v.1.is_finite().then_some(v.1),
        },
    );
    let _ = std::fs::create_dir_all(out_dir());
    if let Ok(s) = serde_json::to_string_pretty(&cache) {
        let _ = std::fs::write(&path, s);
    }
    Some(v)
}

/// Objective of a binary problem given by `(x, y)` for any weights.
fn binary_objective(x: &SparseRows, y: &[f64], lambda: Lambda, w: &LinearWeights) -> f64 {
    BinaryProblem::new(x, y, lambda, Bias::Feature).map_or(f64::NAN, |p| p.objective(w))
}

/// Whole-command comparison: the loosest ε of each program that reaches `target` by `objective_of`, then
/// interleaved timed runs.
#[allow(clippy::too_many_arguments)]
fn versus(
    ours_name: &str,
    theirs_name: &str,
    ours: &dyn Fn(f64) -> Command,
    theirs: Option<&dyn Fn(f64) -> Command>,
    ours_objective: &dyn Fn() -> Option<f64>,
    theirs_objective: &dyn Fn() -> Option<f64>,
    ours_accuracy: &dyn Fn() -> Option<f64>,
    theirs_accuracy: &dyn Fn() -> Option<f64>,
    target: f64,
) -> Versus {
    // The loosest ε that reaches the target; a run that misses it after more than SWEEP_GIVE_UP seconds
    // (an iteration cap) ends the sweep, since a tighter ε cannot take less.
    let pick = |run: &dyn Fn(f64) -> Command, objective: &dyn Fn() -> Option<f64>| {
        for &e in &EPS_LIST {
            let seconds = timed(&mut run(e))?;
            let o = objective()?;
            if o <= target {
                return Some((e, o));
            }
            if seconds > SWEEP_GIVE_UP {
                return None;
            }
        }
        None
    };
    let mine = pick(ours, ours_objective);
    let ours_acc = mine.and_then(|_| ours_accuracy());
    let yours = theirs.and_then(|t| pick(t, theirs_objective));
    let theirs_acc = yours.and_then(|_| theirs_accuracy());
    let (mut to, mut tt) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        if let Some((e, _)) = mine
            && let Some(t) = timed(&mut ours(e))
        {
            to.push(t);
        }
        if let (Some((e, _)), Some(run)) = (yours, theirs)
            && let Some(t) = timed(&mut run(e))
        {
            tt.push(t);
        }
    }
    let ours_seconds = (!to.is_empty()).then(|| median(&mut to));
    let theirs_seconds = (!tt.is_empty()).then(|| median(&mut tt));
    Versus {
        ours: ours_name.into(),
        theirs: theirs_name.into(),
        ours_epsilon: mine.map(|m| m.0),
        theirs_epsilon: yours.map(|m| m.0),
        ours_objective: mine.map(|m| m.1),
        theirs_objective: yours.map(|m| m.1),
        ours_seconds,
        theirs_seconds,
        ratio: ours_seconds.zip(theirs_seconds).map(|(a, b)| a / b),
        ours_peak_kb: mine.and_then(|(e, _)| peak_kb(&ours(e))),
        theirs_peak_kb: yours.zip(theirs).and_then(|((e, _), run)| peak_kb(&run(e))),
        ours_test_accuracy: ours_acc,
        theirs_test_accuracy: theirs_acc,
    }
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

#[allow(clippy::too_many_lines)]
fn run_dataset(
    ds: &Dataset,
    dir: &Path,
    tmp: &Path,
    ours_bin: &Path,
    have_liblinear: bool,
) -> Option<Report> {
    let train = scaled(libsvm::read(&dir.join(ds.train)).ok()?, ds.scale);
    let (train, test) = match ds.test {
        Some(t) => (train, scaled(libsvm::read(&dir.join(t)).ok()?, ds.scale)),
        None => split(&train),
    };
    let train_file = tmp.join(format!("{}.train.svm", ds.name));
    let test_file = tmp.join(format!("{}.test.svm", ds.name));
    libsvm::write(&train_file, &train).ok()?;
    libsvm::write(&test_file, &test).ok()?;
    let n = train.n_samples();
    let d = train.x.n_features();
    let nnz = train.x.nnz();
    let lambda = Lambda::new(1.0 / (C * n as f64)).ok()?;
    eprintln!("end_to_end: {} ({n} x {d}, {nnz} non-zeros)", ds.name);
    let ours_model = tmp.join(format!("{}.model", ds.name));
    let theirs_model = tmp.join(format!("{}.liblinear", ds.name));
    let mut report = Report {
        name: ds.name.into(),
        n_train: n,
        n_test: test.n_samples(),
        n_features: d,
        nnz,
        csr_bytes: nnz * 12 + (n + 1) * 8 + n * 8,
        optimum: f64::NAN,
        optimum_gap: f64::NAN,
        ovr_optimum: None,
        curves: Vec::new(),
        versus: Vec::new(),
    };
    let key = format!("{}:C={C}:n={n}:nnz={nnz}", ds.name);
    let train_cmd = |extra: &[&str], eps: f64| {
        let mut c = Command::new(ours_bin);
        c.args(["train", &s(&train_file), "-o", &s(&ours_model)])
            .args(["-c", &C.to_string(), "--epsilon", &eps.to_string()])
            .args(["--eval-every", "1e9", "--quiet"])
            .args(extra);
        c
    };
    let liblinear_cmd = |solver: &'static str| {
        let (train_file, theirs_model) = (train_file.clone(), theirs_model.clone());
        move |eps: f64| {
            let mut c = Command::new("liblinear-train");
            c.args(["-q", "-s", solver, "-c", &C.to_string(), "-B", "1"])
                .args(["-e", &eps.to_string()])
                .args([s(&train_file), s(&theirs_model)]);
            c
        }
    };
    match ds.kind {
        Kind::Binary => {
            let labels = BinaryLabels::from_labels(&train.source, &train.labels).ok()?;
            let y = labels.targets(&train).ok()?;
            let y_test: Vec<f64> = test
                .labels
                .iter()
                .map(|&l| if l == labels.positive { 1.0 } else { -1.0 })
                .collect();
            let problem = BinaryProblem::new(&train.x, &y, lambda, Bias::Feature).ok()?;
            let (optimum, gap) = cached(&key, || {
                let mut dcd = DcdParams {
                    epsilon: 1e-6,
                    ..DcdParams::default()
                }
                .check()
                .ok()?;
                let mut st = dcd.init(&problem).ok()?;
                let start = Instant::now();
                while dcd.stop(&st).is_none() && start.elapsed().as_secs_f64() < OPTIMUM_SECONDS {
                    dcd.step(&problem, &mut st).ok()?;
                }
                let o = dcd.objective(&problem, &st);
                let c = dcd.certificate(&problem, &st, o);
                Some((o, c.gap.unwrap_or(f64::NAN)))
            })?;
            report.optimum = optimum;
            report.optimum_gap = gap;
            let target = optimum * (1.0 + TARGET);
            let objective = |w: &LinearWeights| problem.objective(w);
            let accuracy = |w: &LinearWeights| binary_accuracy(&test.x, &y_test, w);
            let judge = Judge {
                objective: &objective,
                accuracy: &accuracy,
                target,
            };
            let dcd = |blocks: usize| DcdParams {
                epsilon: 1e-9,
                blocks,
                ..DcdParams::default()
            };
            let runs: Vec<Option<Curve>> = vec![
                curve("dcd", &mut dcd(1).check().ok()?, &problem, &judge, 1e6),
                curve(
                    "dcd --blocks 2 (all cores)",
                    &mut dcd(2).check().ok()?,
                    &problem,
                    &judge,
                    1e6,
                ),
                curve(
                    "pegasos",
                    &mut PegasosParams::new().check().ok()?,
                    &problem,
                    &judge,
                    200.0,
                ),
                curve(
                    "subgradient",
                    &mut SubgradientParams::new().check().ok()?,
                    &problem,
                    &judge,
                    200.0,
                ),
            ];
            report.curves = runs.into_iter().flatten().collect();
            let ours_objective = || {
                let m = maxmargin::LinearModel::load(&ours_model).ok()?;
                m.objective(&train, lambda.get()).ok()
            };
            let ours_accuracy = || {
                let m = maxmargin::LinearModel::load(&ours_model).ok()?;
                m.evaluate(&test, None).ok().map(|e| e.accuracy)
            };
            let theirs_weights = || {
                let m = liblinear::Model::read(&theirs_model)?;
                let (w, b) = m.column(0, d);
                // LIBLINEAR's first label is its +1 class.
                let sign = if m.labels.first() == Some(&labels.positive) {
                    1.0
                } else {
                    -1.0
                };
                Some(LinearWeights {
                    w: w.iter().map(|v| v * sign).collect(),
                    b: b * sign,
                })
            };
            let theirs_objective =
                || theirs_weights().map(|w| binary_objective(&train.x, &y, lambda, &w));
            let theirs_accuracy =
                || theirs_weights().map(|w| binary_accuracy(&test.x, &y_test, &w));
            let s3 = liblinear_cmd("3");
            let theirs: Option<&dyn Fn(f64) -> Command> = have_liblinear.then_some(&s3);
            for (name, extra) in [
                ("dcd, 1 thread", vec!["--solver", "dcd", "--threads", "1"]),
                ("dcd, all cores", vec!["--solver", "dcd"]),
                (
                    "dcd --blocks 2, all cores",
                    vec!["--solver", "dcd", "--blocks", "2"],
                ),
            ] {
                let ours = |e: f64| train_cmd(&extra, e);
                report.versus.push(versus(
                    name,
                    "liblinear -s 3",
                    &ours,
                    theirs,
                    &ours_objective,
                    &theirs_objective,
                    &ours_accuracy,
                    &theirs_accuracy,
                    target,
                ));
            }
        }
        Kind::Multiclass => {
            let classes = ClassLabels::from_labels(&train.source, &train.labels).ok()?;
            let k = classes.len();
            let y = classes.indices(&train).ok()?;
            let y_test: Vec<u32> = test
                .labels
                .iter()
                .map(|l| classes.classes.iter().position(|c| c == l).unwrap_or(k) as u32)
                .collect();
            let x = with_bias(&train.x, d);
            let x_test = with_bias(&test.x, d);
            let space = MulticlassSpace::new(d + 1, k).ok()?;
            let problem = StructProblem::new(&space, &x, &y, lambda).ok()?;
            let (optimum, gap) = cached(&key, || {
                let mut cs = CrammerSingerParams {
                    epsilon: 1e-5,
                    ..CrammerSingerParams::default()
                }
                .check()
                .ok()?;
                let mut st = cs.init(&problem).ok()?;
                let start = Instant::now();
                let mut best = f64::INFINITY;
                let mut gap = f64::NAN;
                let mut next_eval = 0.0;
                while cs.stop(&st).is_none() && start.elapsed().as_secs_f64() < OPTIMUM_SECONDS {
                    cs.step(&problem, &mut st).ok()?;
                    let secs = start.elapsed().as_secs_f64();
                    if secs >= next_eval {
                        next_eval = secs + 5.0;
                        let o = cs.objective(&problem, &st);
                        if o < best {
                            best = o;
                            gap = cs.certificate(&problem, &st, o).gap.unwrap_or(f64::NAN);
                        }
                    }
                }
                let o = cs.objective(&problem, &st);
                if o < best {
                    best = o;
                    gap = cs.certificate(&problem, &st, o).gap.unwrap_or(f64::NAN);
                }
                Some((best, gap))
            })?;
            report.optimum = optimum;
            report.optimum_gap = gap;
            let target = optimum * (1.0 + TARGET);
            let objective = |w: &Vec<f64>| problem.primal(w).unwrap_or(f64::INFINITY);
            let accuracy = |w: &Vec<f64>| multiclass_accuracy(&x_test, &y_test, w, k);
            let judge = Judge {
                objective: &objective,
                accuracy: &accuracy,
                target,
            };
            let runs: Vec<Option<Curve>> = vec![
                curve(
                    "cs (dcd)",
                    &mut CrammerSingerParams {
                        epsilon: 1e-9,
                        ..CrammerSingerParams::default()
                    }
                    .check()
                    .ok()?,
                    &problem,
                    &judge,
                    1e6,
                ),
                curve(
                    "bcfw",
                    &mut BcfwParams {
                        gap_tolerance: None,
                        gap_every: 1e12,
                        ..BcfwParams::default()
                    }
                    .check()
                    .ok()?,
                    &problem,
                    &judge,
                    1e6,
                ),
                curve(
                    "oneslack",
                    &mut OneSlackParams {
                        epsilon: 1e-9,
                        ..OneSlackParams::default()
                    }
                    .check()
                    .ok()?,
                    &problem,
                    &judge,
                    1e6,
                ),
                curve(
                    "ssg",
                    &mut SsgParams::default().check().ok()?,
                    &problem,
                    &judge,
                    500.0,
                ),
            ];
            report.curves = runs.into_iter().flatten().collect();
            // Whole commands: Crammer–Singer against -s 4.
            let cs_objective = |w: &[f64]| problem.primal(w).ok();
            let ours_weights = || {
                let m = maxmargin::StructuredModel::load(&ours_model).ok()?;
                Some(m.w)
            };
            let theirs_weights = || {
                let m = liblinear::Model::read(&theirs_model)?;
                // Our class order: `classes.classes`; LIBLINEAR's: its label line.
                let mut w = vec![0.0; (d + 1) * k];
                for (m_ours, c) in classes.classes.iter().enumerate() {
                    let col = m.labels.iter().position(|l| l == c)?;
                    let (wc, b) = m.column(col, d);
                    w[m_ours * (d + 1)..m_ours * (d + 1) + d].copy_from_slice(&wc);
                    w[m_ours * (d + 1) + d] = b;
                }
                Some(w)
            };
            let ours_objective = || ours_weights().and_then(|w| cs_objective(&w));
            let theirs_objective = || theirs_weights().and_then(|w| cs_objective(&w));
            let ours_accuracy =
                || ours_weights().map(|w| multiclass_accuracy(&x_test, &y_test, &w, k));
            let theirs_accuracy =
                || theirs_weights().map(|w| multiclass_accuracy(&x_test, &y_test, &w, k));
            let s4 = liblinear_cmd("4");
            let theirs: Option<&dyn Fn(f64) -> Command> = have_liblinear.then_some(&s4);
            let extra = [
                "--task",
                "multiclass",
                "--solver",
                "dcd",
                "--threads",
                "1",
                "--max-passes",
                "20000",
            ];
            let ours = |e: f64| train_cmd(&extra, e);
            report.versus.push(versus(
                "cs (dcd), 1 thread",
                "liblinear -s 4",
                &ours,
                theirs,
                &ours_objective,
                &theirs_objective,
                &ours_accuracy,
                &theirs_accuracy,
                target,
            ));
            // One-vs-rest against -s 3: the objective is the sum of the binary ones.
            let ovr_objective = |w: &[f64]| -> f64 {
                (0..k)
                    .map(|m| {
                        let ym: Vec<f64> = y
                            .iter()
                            .map(|&c| if c as usize == m { 1.0 } else { -1.0 })
                            .collect();
                        let block = &w[m * (d + 1)..(m + 1) * (d + 1)];
                        binary_objective(
                            &train.x,
                            &ym,
                            lambda,
                            &LinearWeights {
                                w: block[..d].to_vec(),
                                b: block[d],
                            },
                        )
                    })
                    .sum()
            };
            let ovr_opt = cached(&format!("{key}:ovr"), || {
                let fits = maxmargin::optim::ovr::OneVsRest {
                    lambda,
                    bias: Bias::Feature,
                    loss: maxmargin::optim::BinaryLoss::Hinge,
                    dcd: DcdParams {
                        epsilon: 1e-6,
                        ..DcdParams::default()
                    },
                    budget: maxmargin::optim::Budget {
                        eval_every_epochs: 1e9,
                        max_seconds: Some(OPTIMUM_SECONDS / k as f64),
                        ..maxmargin::optim::Budget::epochs(1e6)
                    },
                    gap_target: None,
                }
                .fit(
                    &train.x,
                    &y.iter().map(|&c| c as usize).collect::<Vec<_>>(),
                    k,
                )
                .ok()?;
                Some((fits.iter().map(|f| f.objective).sum(), f64::NAN))
            });
            if let Some((ovr_opt, _)) = ovr_opt {
                report.ovr_optimum = Some(ovr_opt);
                let ours_objective = || ours_weights().map(|w| ovr_objective(&w));
                let theirs_objective = || theirs_weights().map(|w| ovr_objective(&w));
                let s3 = liblinear_cmd("3");
                let theirs: Option<&dyn Fn(f64) -> Command> = have_liblinear.then_some(&s3);
                for (name, threads) in [("ovr, 1 thread", Some("1")), ("ovr, all cores", None)] {
                    let mut extra = vec!["--task", "multiclass", "--solver", "ovr"];
                    if let Some(t) = threads {
                        extra.extend(["--threads", t]);
                    }
                    let ours = |e: f64| train_cmd(&extra, e);
                    report.versus.push(versus(
                        name,
                        "liblinear -s 3",
                        &ours,
                        theirs,
                        &ours_objective,
                        &theirs_objective,
                        &ours_accuracy,
                        &theirs_accuracy,
                        ovr_opt * (1.0 + TARGET),
                    ));
                }
            }
        }
    }
    plot(&report);
    Some(report)
}

/// Two SVG plots per dataset: relative objective gap against seconds and against passes, log scale.
fn plot(report: &Report) {
    for (axis, x_of) in [
        ("seconds", (|p: &Point| p.seconds) as fn(&Point) -> f64),
        ("passes", |p: &Point| p.passes),
    ] {
        let path = out_dir().join(format!("end_to_end-{}-{axis}.svg", report.name));
        let series: Vec<(String, Vec<(f64, f64)>)> = report
            .curves
            .iter()
            .map(|c| {
                let pts = c
                    .points
                    .iter()
                    .map(|p| {
                        let gap = ((p.objective - report.optimum) / report.optimum).max(1e-9);
                        (x_of(p).max(1e-4), gap)
                    })
                    .collect();
                (c.solver.clone(), pts)
            })
            .collect();
        let x_max = series
            .iter()
            .flat_map(|s| s.1.iter().map(|p| p.0))
            .fold(1e-3, f64::max);
        let x_min = series
            .iter()
            .flat_map(|s| s.1.iter().map(|p| p.0))
            .fold(f64::INFINITY, f64::min)
            .min(x_max / 10.0);
        let y_min = series
            .iter()
            .flat_map(|s| s.1.iter().map(|p| p.1))
            .fold(TARGET, f64::min)
            / 3.0;
        let y_max = series
            .iter()
            .flat_map(|s| s.1.iter().map(|p| p.1))
            .fold(1e-3, f64::max);
        let root = SVGBackend::new(&path, (800, 500)).into_drawing_area();
        let draw = || -> Result<(), Box<dyn std::error::Error>> {
            root.fill(&WHITE)?;
            let mut chart = ChartBuilder::on(&root)
                .caption(
                    format!(
                        "{}: (P - P*)/P* against {axis} (C = 1, in process, evaluation off the clock)",
                        report.name
                    ),
                    ("sans-serif", 18),
                )
                .margin(15)
                .x_label_area_size(40)
                .y_label_area_size(60)
                .build_cartesian_2d(
                    (x_min..x_max * 1.2).log_scale(),
                    (y_min..y_max * 2.0).log_scale(),
                )?;
            chart
                .configure_mesh()
                .x_desc(axis)
                .y_desc("relative objective gap")
                .y_label_formatter(&|v| format!("{v:.0e}"))
                .draw()?;
            for (i, (name, pts)) in series.iter().enumerate() {
                let color = Palette99::pick(i).to_rgba();
                chart
                    .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))?
                    .label(name.as_str())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
            }
            chart
                .draw_series(LineSeries::new(
                    [(x_min, TARGET), (x_max * 1.19, TARGET)],
                    BLACK.mix(0.4),
                ))?
                .label("target 1e-3")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.mix(0.4)));
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()?;
            root.present()?;
            Ok(())
        };
        if let Err(e) = draw() {
            eprintln!("end_to_end: plot {} failed: {e}", path.display());
        }
    }
}

fn fmt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.digits$}"))
}

fn markdown(reports: &[Report], have_liblinear: bool) -> String {
    let mut md = String::from(
        "# End-to-end: time to a primal objective within 1e-3 (relative) of the optimum, C = 1\n\n\
         Generated by `cargo xtask bench` (bench `end_to_end`); every number below comes from one run on one machine.\n\n\
         ## Solvers in process\n\n\
         The clock runs only inside the solvers' steps; the objective is evaluated after every pass, off the clock.\n\
         The optimum is a long DCD run (ε = 1e-6, Crammer–Singer ε = 1e-5, or a 120 s cap; its certified gap is shown).\n\n\
         | data | n | d | optimum | its certified gap (relative) | solver | seconds to 1e-3 | passes to 1e-3 | test accuracy | best relative gap |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in reports {
        for c in &r.curves {
            let best = c
                .points
                .iter()
                .map(|p| (p.objective - r.optimum) / r.optimum)
                .fold(f64::INFINITY, f64::min);
            let _ = writeln!(
                md,
                "| {} | {} | {} | {:.6} | {:.1e} | {} | {} | {} | {:.4} | {:.1e} |",
                r.name,
                r.n_train,
                r.n_features,
                r.optimum,
                r.optimum_gap / r.optimum,
                c.solver,
                c.reached
                    .map_or_else(|| "not reached".into(), |(s, _)| format!("{s:.3}")),
                c.reached
                    .map_or_else(|| "-".into(), |(_, p)| format!("{p:.1}")),
                c.test_accuracy,
                best,
            );
        }
    }
    md.push_str(
        "\n## Whole commands against LIBLINEAR\n\n\
         `maxmargin train` and `liblinear-train` on the same uncompressed file (parse, train, save), each at the loosest ε of \
         1, 0.5, 0.2, …, 1e-4 whose model is within 1e-3 of the optimum by our evaluator (for one-vs-rest: of the sum of the \
         per-class binary optima). 5 interleaved runs each, medians; peak resident memory from `/usr/bin/time`.\n\n",
    );
    if !have_liblinear {
        md.push_str("`liblinear-train` was not on PATH: only our side was measured.\n\n");
    }
    md.push_str(
        "| data | ours | ε | s | peak MB | test acc. | LIBLINEAR | ε | s | peak MB | test acc. | ratio ours/LIBLINEAR |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in reports {
        for v in &r.versus {
            let mb = |kb: Option<u64>| {
                kb.map_or_else(|| "-".into(), |k| format!("{:.1}", k as f64 / 1024.0))
            };
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                r.name,
                v.ours,
                v.ours_epsilon
                    .map_or_else(|| "not reached".into(), |e| e.to_string()),
                fmt(v.ours_seconds, 3),
                mb(v.ours_peak_kb),
                fmt(v.ours_test_accuracy, 4),
                v.theirs,
                v.theirs_epsilon
                    .map_or_else(|| "not reached".into(), |e| e.to_string()),
                fmt(v.theirs_seconds, 3),
                mb(v.theirs_peak_kb),
                fmt(v.theirs_test_accuracy, 4),
                fmt(v.ratio, 2),
            );
        }
    }
    md.push_str(
        "\n## Memory\n\n\
         The training set in CSR form (8-byte values, 4-byte indices, 8-byte row starts and labels) against the peak \
         resident memory of the whole `maxmargin train` command (dcd, one thread).\n\n\
         | data | n | nnz | CSR MB | peak MB (ours) | peak MB (LIBLINEAR) |\n|---|---|---|---|---|---|\n",
    );
    for r in reports {
        if let Some(v) = r.versus.first() {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {:.1} | {} | {} |",
                r.name,
                r.n_train,
                r.nnz,
                r.csr_bytes as f64 / 1048576.0,
                v.ours_peak_kb
                    .map_or_else(|| "-".into(), |k| format!("{:.1}", k as f64 / 1024.0)),
                v.theirs_peak_kb
                    .map_or_else(|| "-".into(), |k| format!("{:.1}", k as f64 / 1024.0)),
            );
        }
    }
    md.push_str("\nPlots: `end_to_end-<data>-seconds.svg` and `end_to_end-<data>-passes.svg` beside this file.\n");
    md
}

fn main() {
    let Some(dir) = data_dir() else {
        println!("end_to_end: set MAXMARGIN_DATA (cargo xtask bench --data-dir DIR)");
        return;
    };
    let ours_bin = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/release/maxmargin");
    if !ours_bin.exists() {
        println!("end_to_end: build the command first (cargo build --release -p maxmargin-cli)");
        return;
    }
    let have_liblinear = Command::new("liblinear-train").output().is_ok();
    let only = std::env::var("MAXMARGIN_BENCH_ONLY").ok();
    let tmp = std::env::temp_dir().join("maxmargin-end-to-end");
    let _ = std::fs::create_dir_all(&tmp);
    let _ = std::fs::create_dir_all(out_dir());
    let reports: Vec<Report> = DATASETS
        .iter()
        .filter(|ds| {
            only.as_deref()
                .is_none_or(|o| o.split(',').any(|n| n == ds.name))
        })
        .filter_map(|ds| run_dataset(ds, &dir, &tmp, &ours_bin, have_liblinear))
        .collect();
    let md = markdown(&reports, have_liblinear);
    println!("{md}");
    let _ = std::fs::write(out_dir().join("end_to_end.md"), &md);
    if let Ok(json) = serde_json::to_string_pretty(&reports) {
        let _ = std::fs::write(out_dir().join("end_to_end.json"), json);
    }
}
