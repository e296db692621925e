//! What `eval` prints for a structured model: its measures (JSON, or a line each and the per-class and
//! confusion tables), and a multiclass model's measures by group.

use anyhow::Result;
use maxmargin::structured_svm::{StructEvaluation, StructuredModel};
use std::path::Path;

/// A line per measure that is there: its name and value (the layout of every structured `eval`).
pub(crate) fn print_measures(rows: &[(&str, Option<f64>)]) -> Result<()> {
    for (name, v) in rows {
        if let Some(v) = v {
            out!("{name:<17} {v:.6}");
        }
    }
    Ok(())
}

/// `eval`'s report of a structured model: JSON, or a line per measure and the tables.
pub(crate) fn print_evaluation(e: &StructEvaluation, multilabel: bool, json: bool) -> Result<()> {
    if json {
        out!("{}", serde_json::to_string(e)?);
        return Ok(());
    }
    out!("examples          {}", e.n);
    let rows = [
        ("accuracy", e.accuracy),
        ("hamming loss", e.hamming_loss),
        ("subset accuracy", e.subset_accuracy.or(e.exact_match)),
        ("micro precision", e.micro_precision),
        ("micro recall", e.micro_recall),
        ("micro F1", e.micro_f1),
        ("macro precision", e.macro_precision),
        ("macro recall", e.macro_recall),
        ("macro F1", e.macro_f1),
        ("token error", e.token_error),
        ("sequence accuracy", e.sequence_accuracy),
        ("brier", e.brier),
        ("log loss", e.log_loss),
        ("objective", e.objective),
    ];
    print_measures(&rows)?;
    if let Some(classes) = &e.per_class {
        let cell = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.4}"));
        let name = if multilabel { "label" } else { "class" };
        out!("{name:<12} support  precision  recall  f1");
        for c in classes {
            out!(
                "{:<12} {:>7}  {:>9}  {:>6}  {:>6}",
                c.class,
                c.support,
                cell(c.precision),
                cell(c.recall),
                cell(c.f1)
            );
        }
    }
    if let Some(conf) = &e.confusion {
        out!("confusion (actual -> predicted: rows, the pairs that occur)");
        for &(a, p, n) in &conf.entries {
            out!("  {} -> {}: {n}", conf.labels[a], conf.labels[p]);
        }
    }
    Ok(())
}

/// Multiclass measures overall and by group.
pub(crate) fn eval_groups(
    model: &StructuredModel,
    model_path: &Path,
    data_path: &Path,
    lambda: Option<f64>,
    json: bool,
    grouping: &crate::groups::Grouping,
) -> Result<()> {
    let data = crate::load::read_for_model(
        data_path,
        model_path,
        crate::load::ModelShape::structured(model),
    )?;
    let overall = model.evaluate_multiclass(&data, lambda)?;
    let mut rows = Vec::new();
    for (name, members) in crate::groups::groups(&data, grouping)? {
        let e = model.evaluate_multiclass(&data.select(&members), lambda)?;
        let support: Vec<usize> = e
            .per_class
            .as_deref()
            .unwrap_or_default()
            .iter()
            .map(|c| c.support)
            .filter(|&s| s > 0)
            .collect();
        let note = crate::groups::note(e.n, &support);
        rows.push((name, e, note));
    }
    if json {
        out!("{}", crate::groups::with_groups(&overall, &rows)?);
        return Ok(());
    }
    let cell = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.4}"));
    out!(
        "examples          {}  accuracy {}  macro F1 {}",
        overall.n,
        cell(overall.accuracy),
        cell(overall.macro_f1)
    );
    out!("by group");
    out!("  group         rows   accuracy  macro F1  note");
    for (name, e, note) in &rows {
        let line = format!(
            "  {name:<13} {:<6} {:<9} {:<9} {}",
            e.n,
            cell(e.accuracy),
            cell(e.macro_f1),
            note.as_deref().unwrap_or("")
        );
        out!("{}", line.trim_end());
    }
    Ok(())
}
