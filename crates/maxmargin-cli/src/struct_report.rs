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

/// Says in one `warning:` line how many rows (tokens, for a chain) of `data` had labels (tags) `model` never
/// saw in training, and which (a few): each is counted as an error. With `--lambda`, when that left no
/// objective, refuses instead, saying why.
pub(crate) fn unknown_labels(
    e: &StructEvaluation,
    (data, model): (&Path, &Path),
    chain: bool,
    lambda: Option<f64>,
) -> Result<()> {
    let Some(u) = &e.unknown_labels else {
        return Ok(());
    };
    let (rows, labels) = if chain {
        ("tokens", "tags")
    } else {
        ("rows", "labels")
    };
    let mut which: Vec<String> = u.labels.iter().take(5).map(ToString::to_string).collect();
    if u.labels.len() > 5 {
        which.push(format!("... {} in all", u.labels.len()));
    }
    let which = which.join(", ");
    if lambda.is_some() && e.objective.is_none() {
        anyhow::bail!(
            "--lambda: the objective needs every {} known to the model; {} has {} {rows} with {labels} \
             training never saw ({which}), which have no hinge term",
            &labels[..labels.len() - 1],
            data.display(),
            u.count
        );
    }
    note!(
        "warning: {}: {} {rows} have {labels} {} never saw in training ({which}); each is counted as an \
         error",
        data.display(),
        u.count,
        model.display()
    );
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
    unknown_labels(&overall, (data_path, model_path), false, lambda)?;
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
