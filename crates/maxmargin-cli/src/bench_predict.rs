//! `bench-predict`: what a binary model costs to serve, measured on this machine: batch rows per second, the
//! latency of one row in process (after a warm-up), the bytes on disk and in memory, and the support vectors of
//! a kernel model. The model is loaded and the rows read before any clock runs.

use anyhow::{Result, bail};
use std::path::Path;
use std::time::Instant;

/// Rows scored one at a time before the timed ones.
const WARM_UP: usize = 200;
/// Rows timed one at a time (cycling through the data), or as many as fit in [`TIMED_SECONDS`] (at least
/// [`MIN_TIMED`]).
const TIMED: usize = 10_000;
const TIMED_SECONDS: f64 = 2.0;
const MIN_TIMED: usize = 100;
/// The batch is scored again until this many seconds have passed.
const BATCH_SECONDS: f64 = 0.5;

#[derive(serde::Serialize)]
struct Report {
    model: String,
    family: String,
    rows: usize,
    batch_rounds: usize,
    timed_rows: usize,
    rows_per_second: f64,
    p50_us: f64,
    p99_us: f64,
    max_us: f64,
    model_bytes: u64,
    memory_bytes: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    support_vectors: Option<usize>,
    weights: usize,
}

pub(crate) fn run(model_path: &Path, data_path: &Path, json: bool) -> Result<()> {
    let kind = maxmargin::io::model_file::read_header(model_path)?.kind;
    if kind != maxmargin::linear::MODEL_KIND && kind != maxmargin::linear::DECISION_KIND {
        bail!(
            "bench-predict measures binary models (linear, logistic, kernel); {} is a {kind} model",
            model_path.display()
        );
    }
    let decision = maxmargin::linear::DecisionModel::load(model_path)?;
    let model = &decision.model;
    let data =
        crate::load::read_to_predict(data_path, model_path, &model.labels, model.n_features)?;
    let n = data.n_samples();
    if n == 0 {
        bail!("{}: no rows to score", data_path.display());
    }
    // Batch: every row scored at once, again until the clock has run long enough to read.
    let (mut rounds, start) = (0usize, Instant::now());
    while rounds == 0 || start.elapsed().as_secs_f64() < BATCH_SECONDS {
        std::hint::black_box(decision.predict_rows(&data.x));
        rounds += 1;
    }
    let rows_per_second = (rounds * n) as f64 / start.elapsed().as_secs_f64();
    // One row at a time, as a server scores a request.
    for i in 0..WARM_UP {
        std::hint::black_box(model.decision_function(data.x.row(i % n)));
    }
    let begun = Instant::now();
    let mut us = Vec::with_capacity(TIMED);
    for i in 0..TIMED {
        if i >= MIN_TIMED && begun.elapsed().as_secs_f64() > TIMED_SECONDS {
            break;
        }
        let t = Instant::now();
        std::hint::black_box(model.decision_function(data.x.row(i % n)));
        us.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let timed = us.len();
    us.sort_by(f64::total_cmp);
    let at = |q: f64| us[((q * us.len() as f64).ceil() as usize).clamp(1, us.len()) - 1];
    let kernel = model.kernel.as_ref();
    let report = Report {
        model: model_path.display().to_string(),
        family: match kernel {
            Some(k) => format!("{} kernel SVM", k.kernel.name()),
            None if model.is_probabilistic() => "logistic regression".into(),
            None => "linear SVM".into(),
        },
        rows: n,
        batch_rounds: rounds,
        timed_rows: timed,
        rows_per_second,
        p50_us: at(0.5),
        p99_us: at(0.99),
        max_us: us[us.len() - 1],
        model_bytes: std::fs::metadata(model_path)?.len(),
        memory_bytes: model.memory_bytes(),
        support_vectors: kernel.map(|k| k.n_support()),
        weights: if kernel.is_some() { 0 } else { model.w.len() },
    };
    if json {
        out!("{}", serde_json::to_string(&report)?);
        return Ok(());
    }
    out!("model  {} ({})", report.model, report.family);
    match report.support_vectors {
        Some(sv) => out!("       {sv} support vectors"),
        None => out!("       {} weights", report.weights),
    }
    out!(
        "batch  {:.0} rows/s ({} rows of {}, {} rounds)",
        report.rows_per_second,
        n,
        data_path.display(),
        rounds
    );
    out!(
        "one row, in process ({timed} timed after {WARM_UP} warm-up): p50 {:.3} us, p99 {:.3} us, max {:.3} us",
        report.p50_us,
        report.p99_us,
        report.max_us
    );
    out!(
        "size   {} bytes on disk, {} bytes in memory",
        report.model_bytes,
        report.memory_bytes
    );
    Ok(())
}
