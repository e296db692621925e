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
    let data = graphs::read(&cmd.data)?;
    let mut options = GraphOptions::new().directed(cmd.graph.directed);
    if let Some(i) = cmd.graph.inference {
        options = options.inference(i.method());
    }
    let report = svm.fit_graph(&data, options, &mut bar)?;
    bar.finish();
    report.model.save(&cmd.output)?;
    structured::finished(
        args,
        &cmd.output,
        &svm,
        (&report.model.model, &report.trace, &report.warnings),
        true,
    )
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
    let labels = model.predict(&graphs::read(data)?)?;
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
    let e: StructEvaluation = model.evaluate(&graphs::read(data)?, lambda)?;
    if json {
        out!("{}", serde_json::to_string(&e)?);
        return Ok(());
    }
    out!("graphs            {}", e.n);
    let rows = [
        ("node accuracy", e.accuracy),
        ("hamming loss", e.hamming_loss),
        ("mean IoU", e.mean_iou),
        ("objective", e.objective),
    ];
    for (name, v) in rows {
        if let Some(v) = v {
            out!("{name:<17} {v:.6}");
        }
    }
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
