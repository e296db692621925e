//! Binary `cv`: stratified (or `--groups`) k-fold cross-validation at one C or along `--c-path`, by the
//! chosen `--metric`, with `--refit` and `--json`; `cv --task ...` is `cv_structured`'s.

use super::*;

/// `cv`; returns whether every fold's model converged.
pub(crate) fn cv(cmd: &CvCmd) -> Result<bool> {
    let args = &cmd.opts;
    refuse(
        &[
            ("--trace", args.trace.is_some()),
            ("--trace-weights", args.trace_weights),
            ("--sample-weights", args.sample_weights.is_some()),
            ("--max-passes", args.max_passes.is_some()),
            ("--checkpoint", args.checkpoint.is_some()),
            ("--checkpoint-every", args.checkpoint_every.is_some()),
            ("--resume", args.resume.is_some()),
            ("--warm-start", args.warm_start.is_some()),
        ],
        "does not apply to cv",
    )?;
    let task = match cmd.task {
        TaskArg::Binary => None,
        TaskArg::Multiclass => Some(maxmargin::structured_svm::Task::Multiclass),
        TaskArg::Multilabel => Some(maxmargin::structured_svm::Task::Multilabel),
        TaskArg::Chain => Some(maxmargin::structured_svm::Task::Chain),
        TaskArg::Graph => bail!(
            "cv takes --task binary, multiclass, multilabel or chain; for --task graph, train on one file \
             and eval on another"
        ),
    };
    check_format(cmd)?;
    if let Some(task) = task {
        return crate::cv_structured::cv(cmd, task);
    }
    let params = crate::binary::params(args)?;
    params.clone().check()?;
    let data = crate::load::read_labelled(&cmd.data)?;
    let params = crate::binary::chosen_for(params, args, &data.x);
    if data.n_samples() == 0 {
        return Err(maxmargin::io::IoError::Empty {
            path: data.source.clone(),
        }
        .into());
    }
    let groups = match &cmd.groups {
        Some(path) => {
            let names =
                maxmargin::side_files::read_group_names(path, data.n_samples(), &data.source)?;
            Some(maxmargin::linear::group_folds(&names, cmd.folds)?)
        }
        None => None,
    };
    let metric = maxmargin::linear::Metric::from(cmd.metric);
    let name = metric.name();
    let cell =
        |v: Option<(f64, f64)>| v.map_or("-".to_string(), |(m, sd)| format!("{m:.4}  {sd:.4}"));
    let mut all_converged = true;
    let chosen = if cmd.c_path.is_empty() {
        let svm = params.clone().check()?;
        let cv = match &groups {
            Some(folds) => maxmargin::linear::cross_validate_folds(&svm, &data, folds)?,
            None => maxmargin::linear::cross_validate(&svm, &data, cmd.folds, args.seed)?,
        };
        all_converged &= warn_unconverged(&[(None, &cv)], cmd.folds);
        if cmd.json {
            out!("{}", serde_json::to_string(&cv)?);
        } else {
            for (f, m) in cv.folds.iter().enumerate() {
                let v = match metric {
                    maxmargin::linear::Metric::Accuracy => Some(m.accuracy),
                    maxmargin::linear::Metric::RocAuc => m.roc_auc,
                    maxmargin::linear::Metric::F1 => m.f1,
                    maxmargin::linear::Metric::AveragePrecision => m.average_precision,
                };
                out!(
                    "fold {}  {name} {}",
                    f + 1,
                    v.map_or("-".to_string(), |v| format!("{v:.4}"))
                );
            }
            match cv.mean(metric) {
                Some((m, sd)) => out!("mean    {name} {m:.4} (sd {sd:.4})"),
                None => out!("mean    {name} - (no fold has both classes)"),
            }
        }
        None
    } else {
        let path = match &groups {
            Some(folds) => {
                maxmargin::linear::regularization_path_folds(&params, &data, &cmd.c_path, folds)?
            }
            None => maxmargin::linear::regularization_path(
                &params,
                &data,
                &cmd.c_path,
                cmd.folds,
                args.seed,
            )?,
        };
        let cvs: Vec<_> = path.iter().map(|p| (Some(p.c), &p.cv)).collect();
        all_converged &= warn_unconverged(&cvs, cmd.folds);
        let best = maxmargin::linear::best_c(&path, metric);
        if cmd.json {
            // Today's array of points, each with the chosen metric's mean and whether it is the best C.
            let mut points = serde_json::to_value(&path)?;
            if let Some(items) = points.as_array_mut() {
                for (item, p) in items.iter_mut().zip(&path) {
                    item["metric"] = serde_json::json!(name);
                    item["score"] = serde_json::json!(p.cv.mean(metric).map(|m| m.0));
                    item["best"] = serde_json::json!(best.is_some_and(|b| b.0 == p.c));
                }
            }
            out!("{points}");
        } else {
            // The means leave out folds without the metric: say which, once (the JSON has them as null).
            let without: std::collections::BTreeSet<usize> = path
                .iter()
                .flat_map(|p| p.cv.folds_without(metric))
                .collect();
            if !without.is_empty() {
                let folds: Vec<String> = without.iter().map(usize::to_string).collect();
                note!(
                    "warning: {name} is undefined on fold {} of {} (its test rows hold one class), so the \
                     means below are over the other folds",
                    folds.join(", "),
                    cmd.folds
                );
            }
            out!("C            {name} (mean, sd)  accuracy  passes");
            for p in &path {
                out!(
                    "{:<12} {:<20} {:.4}    {:.1}",
                    maxmargin::io::libsvm::format_number(p.c),
                    cell(p.cv.mean(metric)),
                    p.cv.accuracy,
                    p.passes
                );
            }
            match best {
                Some((c, v)) => {
                    let tied = path
                        .iter()
                        .filter(|p| p.cv.mean(metric).is_some_and(|m| m.0 == v))
                        .count();
                    let tie = if tied > 1 {
                        format!(", the smallest of {tied} tied C values")
                    } else {
                        String::new()
                    };
                    let c = maxmargin::io::libsvm::format_number(c);
                    out!("best C = {c} ({name} {v:.4}{tie})");
                }
                None => out!("best C: none ({name} needs both classes in a fold's test rows)"),
            }
        }
        match best {
            Some((c, _)) => Some(c),
            None if cmd.refit => bail!("--refit: no C has a {name} to choose by"),
            None => None,
        }
    };
    if let (true, Some(out_path)) = (cmd.refit, &cmd.output) {
        let final_params = match chosen {
            Some(c) => params.c(c),
            None => params,
        };
        let report = final_params.check()?.fit_observed(&data, &mut ())?;
        for w in &report.warnings {
            note!("warning: {w}");
        }
        report.model.save(out_path)?;
        let t = &report.model.training;
        all_converged &= t.converged;
        let fit = (t.objective, t.gap, t.converged);
        crate::report::refit_saved((t.n_samples, "rows"), chosen, fit, out_path);
    }
    Ok(all_converged)
}

/// One `warning:` line for the folds (at each C) whose models stopped short of their certified gap: their
/// measures are of unconverged models (`train -c 100` warned, `cv -c 100` said nothing); returns whether none
/// did.
/// Refuses a `--format` that `cv --task` cannot read, as `train` does, and CoNLL text, which cv does not
/// cross-validate.
fn check_format(cmd: &CvCmd) -> Result<()> {
    let task = format!("{:?}", cmd.task).to_lowercase();
    let csv = cmd.format == Some(FormatArg::Csv) || crate::load::is_csv(&cmd.data);
    match cmd.format {
        Some(FormatArg::Conll) => bail!(
            "{}: cv reads svm-hmm sequences for --task chain, not CoNLL text (--format conll): train a \
             tagger on one file and eval it on another",
            cmd.data.display()
        ),
        _ if csv && !matches!(cmd.task, TaskArg::Binary | TaskArg::Multiclass) => bail!(
            "CSV data (--format csv, or a .csv file) applies to --task binary or multiclass, not --task \
             {task}"
        ),
        Some(f) if f != FormatArg::Csv && f != FormatArg::of(cmd.task) => bail!(
            "cv --task {task} reads {} data, not --format {}",
            FormatArg::of(cmd.task).name(),
            f.name()
        ),
        _ => Ok(()),
    }
}

fn warn_unconverged(cvs: &[(Option<f64>, &maxmargin::linear::CrossValidation)], k: usize) -> bool {
    let short: Vec<String> = cvs
        .iter()
        .filter(|(_, cv)| cv.unconverged() > 0)
        .map(|(c, cv)| match c {
            Some(c) => format!("{} of {k} at C={c}", cv.unconverged()),
            None => format!("{} of {k}", cv.unconverged()),
        })
        .collect();
    if !short.is_empty() {
        note!(
            "warning: folds stopped short of convergence ({}): their measures are of unconverged models; \
             try more passes (--epochs), --scale maxabs or a smaller C",
            short.join(", ")
        );
    }
    short.is_empty()
}
