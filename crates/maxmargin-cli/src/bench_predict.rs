//! `bench-predict`: what a binary model costs to serve, measured on this machine: batch rows per second, the
//! latency of one row in process (after a warm-up), the bytes on disk and in memory, and the support vectors of
//! a kernel model. The model is loaded and the rows read before any clock runs.

use anyhow::{Result, bail};
use std::path::Path;

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
    let data = crate::load::read_to_predict(
        data_path,
        model_path,
        crate::load::ModelShape::binary(model),
    )?;
    let n = data.n_samples();
    if n == 0 {
        bail!("{}: no rows to score", data_path.display());
    }
    let budget = maxmargin::linear::serving::ServingBudget::default();
    let speed = maxmargin::linear::serving::measure(&decision, &data.x, budget);
    let kernel = model.kernel.as_ref();
    let report = Report {
        model: model_path.display().to_string(),
        family: match (kernel, &model.params.approx) {
            (_, Some(a)) => format!(
                "{} approximation of the {} kernel ({}{})",
                a.method,
                kernel.map_or("rbf", |k| k.kernel.name()),
                if model.is_probabilistic() {
                    "logistic regression, "
                } else {
                    ""
                },
                match kernel {
                    Some(k) => format!("{} landmarks", k.n_support()),
                    None => format!("{} components", model.w.len()),
                }
            ),
            (Some(k), None) => format!("{} kernel SVM", k.kernel.name()),
            (None, None) if model.is_probabilistic() => "logistic regression".into(),
            (None, None) => "linear SVM".into(),
        },
        rows: n,
        batch_rounds: speed.batch_rounds,
        timed_rows: speed.timed_rows,
        rows_per_second: speed.rows_per_second,
        p50_us: speed.p50_us,
        p99_us: speed.p99_us,
        max_us: speed.max_us,
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
        speed.batch_rounds
    );
    out!(
        "one row, in process ({} timed after {} warm-up): p50 {:.3} us, p99 {:.3} us, max {:.3} us",
        speed.timed_rows,
        budget.warm_up,
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
