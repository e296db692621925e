//! Multiclass models with latent subclasses (`train --task multiclass --latent-subclasses S`, kind
//! `multiclass-latent`) and chains with latent states (`train --task chain --latent-states K`, kind
//! `chain-latent`), and `predict` and `eval` on their files.

use super::*;
use crate::load::{ModelShape, read_for_model, read_to_predict};
use maxmargin::structured_svm::{LatentMulticlassModel, StructEvaluation};

/// What data for a latent model must fit: its classes (not its templates) and its features.
fn shape(m: &LatentMulticlassModel) -> ModelShape<'_> {
    ModelShape {
        classes: &m.classes,
        // Its evaluation refuses a label it never saw, naming the line.
        counts_unknown: false,
        ..ModelShape::structured(&m.model)
    }
}

/// Trains, saves and reports; returns whether both the outer rounds and the kept convex solve converged.
pub(crate) fn train(
    data: &Path,
    output: &Path,
    args: &TrainArgs,
    subclasses: usize,
) -> Result<bool> {
    let (svm, mut bar) = structured::estimator(args, maxmargin::structured_svm::Task::Multiclass)?;
    if args.sample_weights.is_some() || args.warm_start.is_some() {
        bail!("--sample-weights and --warm-start do not apply to --latent-subclasses yet");
    }
    let rows = crate::load::read_labelled(data)?;
    crate::report::advise_before_training(
        &rows.x,
        args.scale.is_some_and(|s| s != crate::ScaleArg::None),
    );
    let report = svm.fit_latent_multiclass(&rows, subclasses, &mut bar)?;
    bar.finish();
    report.model.save(output)?;
    let m = &report.model;
    let what = format!("{} classes of {subclasses} templates", m.classes.len());
    let run = (&m.model, &report.trace[..], &report.warnings[..]);
    rounds_reported(args, output, &svm, run, (&what, &m.rounds, m.stop))
}

/// Reports a saved latent model's last convex solve and its rounds (`what` it mixes); returns whether both
/// the rounds and that solve converged.
pub(crate) fn rounds_reported(
    args: &TrainArgs,
    output: &Path,
    svm: &maxmargin::StructuredSvm,
    run: (
        &maxmargin::StructuredModel,
        &[maxmargin::optim::TraceRecord],
        &[String],
    ),
    (what, rounds, stop): (
        &str,
        &[maxmargin::optim::latent::CccpRound],
        maxmargin::optim::latent::CccpStop,
    ),
) -> Result<bool> {
    let inner = structured::finished(args, output, svm, run, crate::report::Ran::InMemory)?;
    if !args.quiet {
        let objectives: Vec<String> = rounds
            .iter()
            .map(|r| format!("{:.6}", r.objective))
            .collect();
        use maxmargin::optim::latent::CccpStop;
        let how = match stop {
            CccpStop::Converged => "the rounds converged",
            CccpStop::Rose => {
                "stopped when a round raised the objective; the round before it is kept"
            }
            CccpStop::Rounds => "stopped at the round budget",
            _ => "stopped",
        };
        note!(
            "latent: {what}; {} round{} ({how}{}), objective by round {}",
            rounds.len(),
            if rounds.len() == 1 { "" } else { "s" },
            if inner {
                ""
            } else {
                "; the kept convex solve did not converge"
            },
            objectives.join(" ")
        );
    }
    Ok(inner && stop == maxmargin::optim::latent::CccpStop::Converged)
}

/// Trains a chain with `states` latent states per tag on an svm_hmm file, saves and reports; returns
/// whether both the outer rounds and the kept convex solve converged.
pub(crate) fn train_chain(
    data: &Path,
    output: &Path,
    args: &TrainArgs,
    states: usize,
) -> Result<bool> {
    let (svm, mut bar) = structured::estimator(args, maxmargin::structured_svm::Task::Chain)?;
    if args.warm_start.is_some() {
        bail!("--warm-start does not apply to --latent-states yet");
    }
    let sequences = maxmargin::io::svm_hmm::read(crate::load::not_csv(data, "svm_hmm")?)?;
    let report = svm.fit_latent_chain(&sequences, states, &mut bar)?;
    bar.finish();
    report.model.save(output)?;
    let m = &report.model;
    let what = format!("{} tags of {states} states", m.tags);
    let run = (&m.model, &report.trace[..], &report.warnings[..]);
    rounds_reported(args, output, &svm, run, (&what, &m.rounds, m.stop))
}

/// `predict`'s lines for a latent chain: one tag per token (1-based, as the svm_hmm file has them).
pub(crate) fn predict_chain(model_path: &Path, data: &Path) -> Result<Vec<String>> {
    let m = maxmargin::structured_svm::LatentChainModel::load(model_path)?;
    let sequences = crate::load::read_sequences_for(data, m.model.n_features)?;
    Ok(structured::tag_lines(&m.predict(&sequences)?))
}

/// `predict`'s lines: the class, with `--scores` each class's score (its best template's) after a `#`
/// header, or JSON objects.
pub(crate) fn predict(
    model_path: &Path,
    data: &Path,
    scores: bool,
    json: bool,
) -> Result<Vec<String>> {
    let m = LatentMulticlassModel::load(model_path)?;
    let rows = read_to_predict(data, model_path, shape(&m))?;
    let labels = m.predict(&rows)?;
    let values = if scores { m.scores(&rows)? } else { Vec::new() };
    let labels: Vec<(serde_json::Value, String)> = labels
        .iter()
        .map(|l| (serde_json::json!(l), l.to_string()))
        .collect();
    let scores = scores.then_some(&values[..]);
    Ok(crate::predict::class_lines(
        &m.classes, &labels, scores, None, json,
    ))
}

/// `eval`'s measures of a latent model on labelled rows.
pub(crate) fn evaluate(
    model_path: &Path,
    data: &Path,
    lambda: Option<f64>,
) -> Result<StructEvaluation> {
    let m = LatentMulticlassModel::load(model_path)?;
    let rows = read_for_model(data, model_path, shape(&m))?;
    Ok(m.evaluate(&rows, lambda)?)
}
