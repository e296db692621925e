//! `maxmargin inspect MODEL DATA`: a binary model's boundary seen through labelled rows — the geometry the
//! hinge works on (rows beyond the margin, on it, inside it, misclassified), the rows nearest the boundary,
//! the margin violators, and the features that weigh most.

use anyhow::{Result, bail};
use maxmargin::io::libsvm::format_number;
use maxmargin::linear::DecisionModel;
use serde::Serialize;
use std::path::Path;

/// Rows whose margin is within this of 1 count as on the margin.
const ON_MARGIN: f64 = 1e-9;

#[derive(Serialize)]
struct Contribution {
    /// The feature (1-based, as in the data file).
    feature: usize,
    /// Its name, for a model trained on CSV data.
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    /// `w_j · x_j`, in the data's own units.
    contribution: f64,
}

#[derive(Serialize)]
struct Row {
    line: usize,
    label: f64,
    score: f64,
    /// `y·f(x)`, with y = ±1.
    margin: f64,
    features: Vec<Contribution>,
}

#[derive(Serialize)]
struct Heavy {
    feature: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    weight: f64,
}

#[derive(Serialize)]
struct Inspection {
    n: usize,
    beyond: usize,
    on: usize,
    inside: usize,
    misclassified: usize,
    threshold: f64,
    /// Rows its decisions get wrong at the model's chosen cut-off (`score > threshold`), when it has one:
    /// `misclassified` counts them at the margin geometry's 0, which such a model does not decide at.
    #[serde(skip_serializing_if = "Option::is_none")]
    misclassified_at_threshold: Option<usize>,
    nearest: Vec<Row>,
    violators_total: usize,
    violators: Vec<Row>,
    heaviest: Vec<Heavy>,
    scaled: bool,
    /// A kernel SVM's support vectors (no weights to list: its score is their kernel expansion).
    #[serde(skip_serializing_if = "Option::is_none")]
    support_vectors: Option<usize>,
    /// An approximated kernel's method and components (Nyström: its landmarks are the support vectors).
    #[serde(skip_serializing_if = "Option::is_none")]
    approx: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    components: Option<usize>,
}

/// The top `k` entries by absolute value, ties by index.
fn top_by_abs<T>(mut items: Vec<(usize, f64, T)>, k: usize) -> Vec<(usize, f64, T)> {
    items.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()).then(a.0.cmp(&b.0)));
    items.truncate(k);
    items
}

pub(crate) fn run(
    model_path: &Path,
    data_path: &Path,
    nearest: usize,
    top_features: usize,
    json: bool,
) -> Result<()> {
    let kind = maxmargin::io::model_file::read_header(model_path)?.kind;
    if kind != maxmargin::linear::MODEL_KIND && kind != maxmargin::linear::DECISION_KIND {
        bail!(
            "inspect reads binary models (one boundary and its margins); {} is a {kind} model",
            model_path.display()
        );
    }
    let decision = DecisionModel::load(model_path)?;
    let model = &decision.model;
    let data = crate::load::read_for_binary(data_path, model_path, model)?;
    // Nothing to look at the boundary through: refused, as eval refuses it.
    if data.labels.is_empty() {
        return Err(maxmargin::io::IoError::Empty {
            path: data_path.to_path_buf(),
        }
        .into());
    }
    let [neg, pos] = model.labels;
    if let Some(i) = data.labels.iter().position(|&l| l != neg && l != pos) {
        bail!(
            "{}:{}: label {} is neither class of the model ({} or {})",
            data_path.display(),
            data.lines.get(i).copied().unwrap_or(i + 1),
            format_number(data.labels[i]),
            format_number(neg),
            format_number(pos)
        );
    }
    // Weights on the data's own units: the scaling folded in, so contributions read off the file's values.
    // A kernel model has no weights: no contributions, and its support vectors instead of features.
    let (w, _) = match &model.scaler {
        _ if model.is_nonlinear() => (Vec::new(), model.b),
        Some(s) => s.fold_linear(&model.w, model.b),
        None => (model.w.clone(), model.b),
    };
    let scores = model.scores(&data)?;
    let cut = decision.cut();
    // A model trained on CSV data names its features (1-based here, as in the table).
    let name_of = |feature: usize| model.feature_names().get(feature - 1).cloned();
    let row_of = |i: usize| -> Row {
        let y = if data.labels[i] == pos { 1.0 } else { -1.0 };
        let parts: Vec<(usize, f64, ())> = data
            .x
            .row(i)
            .iter()
            .filter(|&(j, _)| j < w.len())
            .map(|(j, v)| (j + 1, w[j] * v, ()))
            .collect();
        Row {
            line: data.lines.get(i).copied().unwrap_or(i + 1),
            label: data.labels[i],
            score: scores[i],
            margin: y * scores[i],
            features: top_by_abs(parts, 3)
                .into_iter()
                .map(|(feature, contribution, ())| Contribution {
                    feature,
                    name: name_of(feature),
                    contribution,
                })
                .collect(),
        }
    };
    let margins: Vec<f64> = (0..data.n_samples())
        .map(|i| {
            if data.labels[i] == pos {
                scores[i]
            } else {
                -scores[i]
            }
        })
        .collect();
    let count = |f: &dyn Fn(f64) -> bool| margins.iter().filter(|&&m| f(m)).count();
    let mut by_distance: Vec<usize> = (0..scores.len()).collect();
    by_distance.sort_by(|&a, &b| {
        (scores[a] - cut)
            .abs()
            .total_cmp(&(scores[b] - cut).abs())
            .then(a.cmp(&b))
    });
    let mut violators: Vec<usize> = (0..margins.len())
        .filter(|&i| margins[i] < 1.0 - ON_MARGIN)
        .collect();
    violators.sort_by(|&a, &b| margins[a].total_cmp(&margins[b]).then(a.cmp(&b)));
    let heavy: Vec<(usize, f64, ())> = w.iter().enumerate().map(|(j, &v)| (j + 1, v, ())).collect();
    let report = Inspection {
        n: data.n_samples(),
        beyond: count(&|m| m > 1.0 + ON_MARGIN),
        on: count(&|m| (m - 1.0).abs() <= ON_MARGIN),
        inside: count(&|m| m > 0.0 && m < 1.0 - ON_MARGIN),
        misclassified: count(&|m| m <= 0.0),
        threshold: cut,
        misclassified_at_threshold: (decision.threshold.is_some()).then(|| {
            (scores.iter().zip(&data.labels))
                .filter(|&(&f, &l)| (f > cut) != (l == pos))
                .count()
        }),
        nearest: by_distance
            .iter()
            .take(nearest)
            .map(|&i| row_of(i))
            .collect(),
        violators_total: violators.len(),
        violators: violators.iter().take(nearest).map(|&i| row_of(i)).collect(),
        heaviest: top_by_abs(heavy, top_features)
            .into_iter()
            .map(|(feature, weight, ())| Heavy {
                feature,
                name: name_of(feature),
                weight,
            })
            .collect(),
        scaled: model.scaler.is_some(),
        support_vectors: model.kernel.as_ref().map(|k| k.n_support()),
        approx: model.params.approx.map(|a| a.method.to_string()),
        components: model.features.as_ref().map(|m| m.components()).or(model
            .kernel
            .as_ref()
            .filter(|_| model.params.approx.is_some())
            .map(|k| k.n_support())),
    };
    if json {
        out!("{}", serde_json::to_string(&report)?);
        return Ok(());
    }
    print(&report, pos)
}

fn print(r: &Inspection, pos: f64) -> Result<()> {
    out!(
        "rows {} (y = +1 for label {}, else -1; f(x) = <w,x> + b; margin y*f(x))",
        r.n,
        format_number(pos)
    );
    out!("  beyond the margin (y*f > 1)     {}", r.beyond);
    out!("  on the margin (y*f = 1)         {}", r.on);
    out!("  inside the margin (0 < y*f < 1) {}", r.inside);
    out!("  misclassified (y*f <= 0)        {}", r.misclassified);
    if let Some(wrong) = r.misclassified_at_threshold {
        out!(
            "  decided wrongly at the model's threshold (f > {}): {wrong}",
            format_number(r.threshold)
        );
    }
    let table = |rows: &[Row]| -> Result<()> {
        out!("  line      label   score       margin      largest contributions (feature:w*x)");
        for row in rows {
            let parts: Vec<String> = row
                .features
                .iter()
                .map(|c| match &c.name {
                    Some(n) => format!("{n}:{}", crate::report::short(c.contribution, 4, true)),
                    None => format!(
                        "{}:{}",
                        c.feature,
                        crate::report::short(c.contribution, 4, true)
                    ),
                })
                .collect();
            out!(
                "  {:<9} {:<7} {:<11} {:<11} {}",
                row.line,
                row.label,
                crate::report::short(row.score, 4, false),
                crate::report::short(row.margin, 4, false),
                parts.join(" ")
            );
        }
        Ok(())
    };
    out!(
        "nearest the boundary (f(x) = {}): {}",
        format_number(r.threshold),
        r.nearest.len()
    );
    table(&r.nearest)?;
    out!(
        "margin violators (y*f < 1), most violated first: {} of {}",
        r.violators.len(),
        r.violators_total
    );
    table(&r.violators)?;
    if let (Some(method), Some(k)) = (&r.approx, r.components) {
        out!(
            "an approximated kernel ({method}): {k} components, no weights per feature (f(x) = <w, z(x)> + b, \
             z the kernel's approximate feature map{})",
            if method == "nystroem" {
                ", kept as the kernel expansion over its landmarks"
            } else {
                ""
            }
        );
        return Ok(());
    }
    if let Some(n) = r.support_vectors {
        out!(
            "a kernel SVM: {n} support vectors, no weights per feature (f(x) = sum of their kernel values + b)"
        );
        return Ok(());
    }
    out!(
        "heaviest features (|w|{}):",
        if r.scaled {
            ", on the scaled features"
        } else {
            ""
        }
    );
    let width = (r.heaviest.iter())
        .filter_map(|h| h.name.as_ref().map(|n| n.chars().count()))
        .fold(9, usize::max);
    for h in &r.heaviest {
        match &h.name {
            Some(n) => out!("  {n:<width$} {}", crate::report::short(h.weight, 6, true)),
            None => out!(
                "  {:<9} {}",
                h.feature,
                crate::report::short(h.weight, 6, true)
            ),
        }
    }
    Ok(())
}
