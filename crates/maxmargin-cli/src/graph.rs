//! `train --task graph`, and `predict` / `eval` for graph models: graphs as JSON lines, one per line, a
//! label per node.

use crate::args::InferenceArg;
use crate::{TrainCmd, structured};
use anyhow::{Result, bail};
use maxmargin::io::graphs;
use maxmargin::structured::Inference;
use maxmargin::structured_svm::{GraphModel, GraphOptions, StructEvaluation, Task};
use std::path::Path;

/// Trains, saves and reports a graph model; returns whether it converged.
pub(crate) fn train(cmd: &TrainCmd) -> Result<bool> {
    let args = &cmd.opts;
    if args.warm_start.is_some() {
        bail!(
            "--warm-start applies to binary, multiclass, multilabel and chain models, not yet to --task graph"
        );
    }
    let (svm, mut bar) = structured::estimator(args, Task::Graph)?;
    let data = graphs::read(crate::load::not_csv(&cmd.data, "graph")?)?;
    let report = svm.fit_graph(&data, options(cmd), &mut bar)?;
    bar.finish();
    report.model.save(&cmd.output)?;
    finished(cmd, &svm, &report, crate::report::Ran::InMemory)
}

/// The graph options the flags ask for (`--inference`, `--directed`, `--labels`, `--relaxed`).
pub(crate) fn options(cmd: &TrainCmd) -> GraphOptions {
    let mut options = GraphOptions::new()
        .directed(cmd.graph.directed)
        .relaxed(cmd.graph.relaxed);
    if let Some(i) = cmd.graph.inference {
        options = options.inference(i.method());
    }
    if let Some(k) = cmd.graph.labels {
        options = options.n_labels(k);
    }
    options
}

/// Reports a trained graph model saved to `--output` (trained in this process's memory, or over ranks);
/// returns whether it converged.
pub(crate) fn finished(
    cmd: &TrainCmd,
    svm: &maxmargin::structured_svm::StructuredSvm,
    report: &maxmargin::structured_svm::GraphFitReport,
    ran: crate::report::Ran,
) -> Result<bool> {
    if report.relaxed {
        note!(
            "note: trained over the LP relaxation (--relaxed): {} of {} loss-augmented answers were fractional; \
             the duality gap is the relaxed problem's, whose hinges (maxima over the local polytope) are at \
             least the true ones",
            report.fractional_answers,
            report.inference_calls.0
        );
    }
    crate::report::finished_with(
        &cmd.opts,
        &cmd.output,
        svm,
        (&report.model.model, &report.trace, &report.warnings),
        (ran, report.certified),
    )
}

/// Warns (once, on stderr) when the graphs of `data` have more node or edge features than `model` was
/// trained on: the extra node features are ignored, as for every other task. Fewer edge features than the
/// model's are refused when the graphs are checked.
fn check_width(model: &GraphModel, data: &graphs::GraphData) {
    let known = model.model.n_features;
    if data.n_features > known {
        let (mut values, mut nodes) = (0usize, 0usize);
        for v in data.graphs.iter().flat_map(|g| &g.nodes) {
            let beyond = v
                .as_row()
                .indices()
                .iter()
                .filter(|&&j| j as usize >= known)
                .count();
            values += beyond;
            nodes += usize::from(beyond > 0);
        }
        note!(
            "warning: {}: {values} feature values in {nodes} nodes are beyond the model's {known} node features \
             (the graphs have {}) and are ignored",
            data.source.display(),
            data.n_features
        );
    } else if data.n_features < known && data.graphs.iter().any(|g| !g.nodes.is_empty()) {
        note!(
            "warning: {}: the graphs have {} node features, the model {known}: the missing ones count as 0",
            data.source.display(),
            data.n_features
        );
    }
}

/// The method `--inference` asks `predict` and `eval` to infer with instead of the model's; refused for a
/// model that is not a graph model, naming its kind.
pub(crate) fn overriding(
    model: &Path,
    inference: Option<InferenceArg>,
) -> Result<Option<Inference>> {
    let Some(inference) = inference else {
        return Ok(None);
    };
    let kind = maxmargin::io::model_file::read_header(model)?.kind;
    if kind != maxmargin::structured_svm::GRAPH_KIND {
        bail!(
            "--inference applies to graph models (train --task graph); {} is a {kind} model, which infers \
             exactly",
            model.display()
        );
    }
    Ok(Some(inference.method()))
}

/// The graph model in `path`, inferring with `inference` when given (`--inference`), else its own method.
fn load(path: &Path, inference: Option<Inference>) -> Result<GraphModel> {
    let model = GraphModel::load(path)?;
    Ok(match inference {
        Some(i) => model.with_inference(i),
        None => model,
    })
}

/// One line per graph: its nodes' labels (0-based, as in the file) separated by spaces, or with `json` an
/// object `{"labels": [...]}`.
pub(crate) fn predict(
    model_path: &Path,
    data: &Path,
    json: bool,
    inference: Option<Inference>,
) -> Result<Vec<String>> {
    let model = load(model_path, inference)?;
    let data = graphs::read(crate::load::not_csv(data, "graph")?)?;
    check_width(&model, &data);
    let labels = model.predict(&data)?;
    Ok(labels
        .iter()
        .map(|y| {
            if json {
                serde_json::json!({ "labels": y }).to_string()
            } else {
                y.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(" ")
            }
        })
        .collect())
}

/// Node accuracy, Hamming loss, mean and per-class IoU (and the objective with `lambda`).
pub(crate) fn eval(
    model_path: &Path,
    data: &Path,
    (lambda, json): (Option<f64>, bool),
    inference: Option<Inference>,
) -> Result<()> {
    let model = load(model_path, inference)?;
    let data = graphs::read(crate::load::not_csv(data, "graph")?)?;
    check_width(&model, &data);
    let e: StructEvaluation = model.evaluate(&data, lambda)?;
    if json {
        out!("{}", serde_json::to_string(&e)?);
        return Ok(());
    }
    out!("graphs            {}", e.n);
    if let Some(method) = &e.inference {
        match e.uncertified {
            Some(k) if k > 0 => {
                out!("inference         {method} ({k} predictions not certified exact)")
            }
            _ => out!("inference         {method}"),
        }
    }
    let rows = [
        ("node accuracy", e.accuracy),
        ("hamming loss", e.hamming_loss),
        ("mean IoU", e.mean_iou),
        ("objective", e.objective),
    ];
    crate::struct_report::print_measures(&rows)?;
    if let Some(iou) = &e.per_class_iou {
        out!("label  IoU");
        for (k, v) in iou.iter().enumerate() {
            out!(
                "{k:<6} {}",
                v.map_or("-".to_string(), |v| format!("{v:.4}"))
            );
        }
    }
    Ok(())
}
