//! Multinomial logistic regression (`train --task multiclass --loss softmax`) against scikit-learn's
//! `LogisticRegression` (lbfgs, multinomial), side by side on the multiclass sets found in `MAXMARGIN_DATA`,
//! at C = 1 with the bias a regularized constant feature (scikit-learn: `fit_intercept=False` and a column
//! of ones, so both minimize `½‖W‖² + C Σ_i ℓ_i`).
//!
//! - **Optimum.** Ours to a relative gap of 10⁻⁶, theirs to `tol=1e-10`; both objectives computed by one
//!   evaluator (this program, from each model's weights), their relative difference beside our certified gap.
//! - **Time.** Whole commands (ours: parse, train, save; theirs: load, fit, in one Python process whose
//!   start is not counted), 3 interleaved runs each, medians; ours on one and on two threads. scikit-learn's
//!   lbfgs uses its own threads (BLAS).
//! - **Accuracy** on the set's test file.
//!
//! Needs `python3` with scikit-learn (`MAXMARGIN_PYTHON` names another interpreter); without it, our side
//! only. Output: `target/bench-report/softmax.{md,json}`.

use maxmargin::io::libsvm::{self, LabeledData};
use maxmargin_benches::{command, data_dir, median, out_dir, s};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

const SETS: [(&str, &str); 3] = [
    ("letter/letter.scale.gz", "letter/letter.scale.t.gz"),
    ("pendigits/pendigits", "pendigits/pendigits.t"),
    ("sklearn_iris/iris.libsvm.gz", "sklearn_iris/iris.libsvm.gz"),
];
const ROUNDS: usize = 3;

/// Fits scikit-learn and prints the fit's seconds, then the weights (one line per class, bias last) and the
/// classes.
const SKLEARN: &str = r#"
import sys, time, numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import LogisticRegression
X, y = load_svmlight_file(sys.argv[1])
X = np.hstack([X.toarray(), np.ones((X.shape[0], 1))])
t = time.time()
m = LogisticRegression(C=1.0, fit_intercept=False, tol=1e-10, max_iter=100000).fit(X, y)
print(time.time() - t)
print(" ".join(repr(float(c)) for c in m.classes_))
for w in m.coef_:
    print(" ".join(repr(float(v)) for v in w))
"#;

#[derive(Serialize)]
struct Row {
    data: String,
    rows: usize,
    classes: usize,
    ours_objective: f64,
    ours_relative_gap: Option<f64>,
    theirs_objective: Option<f64>,
    relative_difference: Option<f64>,
    ours_accuracy: f64,
    theirs_accuracy: Option<f64>,
    ours_seconds_1: f64,
    ours_seconds_2: f64,
    theirs_seconds: Option<f64>,
    ratio_1: Option<f64>,
    ratio_2: Option<f64>,
}

/// `½‖W‖² + Σ_i [log Σ_k e^{⟨w_k, x_i⟩} − ⟨w_{y_i}, x_i⟩]` (C = 1), weights class-major with the bias last in
/// each block of `d + 1`; and the accuracy of the argmax on `test`.
fn objective(data: &LabeledData, w: &[Vec<f64>], classes: &[f64]) -> f64 {
    let reg: f64 = w.iter().flatten().map(|v| v * v).sum::<f64>() / 2.0;
    let loss: f64 = data
        .x
        .rows()
        .zip(&data.labels)
        .map(|(x, y)| {
            let z: Vec<f64> = w.iter().map(|wc| score(x, wc)).collect();
            let max = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let lse = max + z.iter().map(|v| (v - max).exp()).sum::<f64>().ln();
            let c = classes.iter().position(|c| c == y).expect("a known class");
            lse - z[c]
        })
        .sum();
    reg + loss
}

fn score(x: maxmargin::core::vector::SparseRow<'_>, wc: &[f64]) -> f64 {
    let d = wc.len() - 1;
    x.iter()
        .filter(|(j, _)| *j < d)
        .map(|(j, v)| v * wc[j])
        .sum::<f64>()
        + wc[d]
}

fn accuracy(test: &LabeledData, w: &[Vec<f64>], classes: &[f64]) -> f64 {
    let right = test
        .x
        .rows()
        .zip(&test.labels)
        .filter(|(x, y)| {
            let z: Vec<f64> = w.iter().map(|wc| score(*x, wc)).collect();
            let best = (0..z.len()).fold(0, |b, i| if z[i] > z[b] { i } else { b });
            classes[best] == **y
        })
        .count();
    right as f64 / test.n_samples() as f64
}

fn ours(train: &Path, model: &Path, threads: usize) -> f64 {
    let start = Instant::now();
    let out = Command::new(command())
        .args([
            "train",
            &s(train),
            "--task",
            "multiclass",
            "--loss",
            "softmax",
            "-c",
            "1",
        ])
        .args([
            "--gap",
            "1e-6",
            "-q",
            "--threads",
            &threads.to_string(),
            "-o",
            &s(model),
        ])
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    start.elapsed().as_secs_f64()
}

fn theirs(python: &str, script: &Path, train: &Path) -> Option<(f64, Vec<f64>, Vec<Vec<f64>>)> {
    let out = Command::new(python).arg(script).arg(train).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = text.lines();
    let seconds: f64 = lines.next()?.trim().parse().ok()?;
    let parse = |l: &str| {
        l.split(' ')
            .map(|v| v.parse::<f64>().ok())
            .collect::<Option<Vec<_>>>()
    };
    let classes = parse(lines.next()?)?;
    let w = lines.map(parse).collect::<Option<Vec<_>>>()?;
    Some((seconds, classes, w))
}

fn main() {
    let Some(dir) = data_dir() else {
        eprintln!(
            "softmax: set MAXMARGIN_DATA (cargo xtask bench --data-dir DIR); nothing measured"
        );
        return;
    };
    let python = std::env::var("MAXMARGIN_PYTHON").unwrap_or_else(|_| "python3".into());
    let work = out_dir().join("softmax-data");
    std::fs::create_dir_all(&work).expect("work dir");
    let script = work.join("sklearn_softmax.py");
    std::fs::write(&script, SKLEARN).expect("write the script");
    let mut rows = Vec::new();
    for (set, test) in SETS {
        let (Ok(train), Ok(test)) = (libsvm::read(&dir.join(set)), libsvm::read(&dir.join(test)))
        else {
            continue;
        };
        let name = set.split('/').next().unwrap_or(set).to_string();
        let tr = work.join(format!("{name}.train"));
        libsvm::write(&tr, &train).expect("write");
        let model = work.join(format!("{name}.model"));
        let (mut one, mut two, mut lib) = (Vec::new(), Vec::new(), Vec::new());
        let mut fitted = None;
        for _ in 0..ROUNDS {
            one.push(ours(&tr, &model, 1));
            two.push(ours(&tr, &model, 2));
            if let Some(t) = theirs(&python, &script, &tr) {
                lib.push(t.0);
                fitted = Some(t);
            }
        }
        let m = maxmargin::StructuredModel::load(&model).expect("our model");
        let width = m.n_features + 1;
        let w: Vec<Vec<f64>> = m.w.chunks(width).map(<[f64]>::to_vec).collect();
        let ours_objective = objective(&train, &w, &m.classes);
        let theirs_objective = fitted.as_ref().map(|(_, c, tw)| objective(&train, tw, c));
        let (s1, s2) = (median(&mut one), median(&mut two));
        let theirs_seconds = (!lib.is_empty()).then(|| median(&mut lib));
        rows.push(Row {
            data: name,
            rows: train.n_samples(),
            classes: m.n_labels,
            ours_objective,
            ours_relative_gap: m.training.gap.map(|g| g / m.training.objective),
            theirs_objective,
            relative_difference: theirs_objective.map(|t| (ours_objective - t) / t),
            ours_accuracy: accuracy(&test, &w, &m.classes),
            theirs_accuracy: fitted.as_ref().map(|(_, c, tw)| accuracy(&test, tw, c)),
            ours_seconds_1: s1,
            ours_seconds_2: s2,
            theirs_seconds,
            ratio_1: theirs_seconds.map(|t| s1 / t),
            ratio_2: theirs_seconds.map(|t| s2 / t),
        });
    }
    let cell = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or("-".to_string(), f);
    let mut md = String::from(
        "# Softmax: train --task multiclass --loss softmax against scikit-learn LogisticRegression (lbfgs, C = 1)\n\n\
         | data | rows | classes | objective (ours) | relative gap (ours) | objective (scikit-learn) | relative difference | test accuracy (ours / scikit-learn) | ours s, 1 thread | ratio | ours s, 2 threads | ratio | scikit-learn s |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in &rows {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {:.8} | {} | {} | {} | {:.4} / {} | {:.2} | {} | {:.2} | {} | {} |",
            r.data,
            r.rows,
            r.classes,
            r.ours_objective,
            cell(r.ours_relative_gap, &|v| format!("{v:.1e}")),
            cell(r.theirs_objective, &|v| format!("{v:.8}")),
            cell(r.relative_difference, &|v| format!("{v:.1e}")),
            r.ours_accuracy,
            cell(r.theirs_accuracy, &|v| format!("{v:.4}")),
            r.ours_seconds_1,
            cell(r.ratio_1, &|v| format!("{v:.2}")),
            r.ours_seconds_2,
            cell(r.ratio_2, &|v| format!("{v:.2}")),
            cell(r.theirs_seconds, &|v| format!("{v:.2}")),
        );
    }
    println!("{md}");
    let out = out_dir();
    std::fs::write(out.join("softmax.md"), &md).expect("write the report");
    std::fs::write(
        out.join("softmax.json"),
        serde_json::to_string_pretty(&rows).expect("json"),
    )
    .expect("write the report");
}
