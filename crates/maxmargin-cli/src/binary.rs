//! The binary task of the command: `train`, `cv`, and `predict` / `eval` for binary models (dispatching
//! structured models to [`crate::structured`]).

use super::*;
use maxmargin::io::libsvm::format_number;

/// The library's parameters for the command's flags (binary task). Every flag is honoured or refused.
pub(crate) fn params(args: &TrainArgs) -> Result<LinearSvmParams> {
    let approx = args.kernel.approximation();
    if approx.is_none() {
        refuse(
            &[("--components", args.kernel.components.is_some())],
            "applies to an approximated kernel (--approx rff|nystroem)",
        )?;
    }
    let kernel_given = args.kernel.kernel.is_some() && approx.is_none();
    let default = if kernel_given {
        SolverArg::Smo
    } else {
        SolverArg::Dcd
    };
    let solver = match args.solver.unwrap_or(default) {
        SolverArg::Smo => SolverKind::Smo,
        other if kernel_given => bail!(
            "--kernel trains a kernel SVM by smo; --solver {} trains a linear model (leave --solver out)",
            other.name()
        ),
        SolverArg::Dcd => SolverKind::Dcd,
        SolverArg::Pegasos => SolverKind::Pegasos,
        SolverArg::Subgradient => SolverKind::Subgradient,
        SolverArg::Newton => SolverKind::Newton,
        other => bail!(
            "--solver {} applies to structured tasks (--task multiclass|multilabel|chain); binary takes dcd, \
             pegasos, subgradient, smo or newton",
            other.name()
        ),
    };
    let pegasos_only = [
        ("--batch-size", args.batch_size.is_some()),
        ("--projection", args.projection),
        ("--average", args.average),
        ("--last", args.last),
        ("--average-from", args.average_from.is_some()),
        ("--sampling", args.sampling.is_some()),
    ];
    let dcd_only = [
        ("--blocks", args.blocks.is_some()),
        ("--warm-start", args.warm_start.is_some()),
    ];
    let smooth_losses = [
        (
            "--loss squared-hinge",
            args.loss == Some(LossArg::SquaredHinge),
        ),
        ("--loss logistic", args.loss == Some(LossArg::Logistic)),
    ];
    // --max-passes has a binary counterpart; the others have none.
    refuse(
        &[("--max-passes", args.max_passes.is_some())],
        "applies to structured tasks (--task multiclass|multilabel|chain), not to binary (use --epochs)",
    )?;
    refuse(
        &[
            ("--rescaling", args.structural.rescaling.is_some()),
            (
                "--latent-subclasses",
                args.structural.latent_subclasses.is_some(),
            ),
            ("--latent-states", args.structural.latent_states.is_some()),
            ("--min-count", args.structural.min_count.is_some()),
            ("--order", args.structural.order.is_some()),
        ],
        "applies to structured tasks (--task multiclass|multilabel|chain), not to binary",
    )?;
    if solver != SolverKind::Pegasos {
        refuse(
            &pegasos_only,
            &format!("applies to --solver pegasos, not {solver}"),
        )?;
    }
    if solver != SolverKind::Dcd {
        refuse(&dcd_only, &format!("applies to --solver dcd, not {solver}"))?;
    }
    if !matches!(solver, SolverKind::Dcd | SolverKind::Newton) {
        refuse(
            &smooth_losses,
            &format!("applies to --solver dcd or newton, not {solver}"),
        )?;
    }
    if solver == SolverKind::Newton {
        if !matches!(args.loss, Some(LossArg::SquaredHinge | LossArg::Logistic)) {
            bail!(
                "--solver newton trains a differentiable loss: give --loss squared-hinge or --loss logistic \
                 (the hinge is trained by dcd, the default)"
            );
        }
        refuse(
            &[("--epsilon", args.epsilon.is_some())],
            "does not apply to --solver newton, which stops on its certified relative gap (--gap)",
        )?;
    }
    if !matches!(solver, SolverKind::Dcd | SolverKind::Smo) {
        refuse(
            &[("--epsilon", args.epsilon.is_some())],
            &format!("applies to --solver dcd or smo, not {solver}"),
        )?;
    }
    if approx.is_some() {
        if solver == SolverKind::Smo {
            bail!(
                "--approx trains a linear solver (dcd, pegasos, subgradient) on approximated kernel \
                 features; --solver smo is the exact kernel SVM (leave out one of them)"
            );
        }
        refuse(
            &[("--cache-mb", args.kernel.cache_mb.is_some())],
            "applies to the exact kernel SVM (smo), which caches kernel rows; --approx caches none",
        )?;
        refuse(
            &[("--trace-weights", args.trace_weights)],
            "applies to linear models of the features; an approximated kernel's weights are per component",
        )?;
        args.kernel.refuse_unused()?;
    } else if solver != SolverKind::Smo {
        refuse(
            &args.kernel.given(),
            "applies to kernel SVMs (--kernel), not to a linear model",
        )?;
    }
    if matches!(
        solver,
        SolverKind::Dcd | SolverKind::Smo | SolverKind::Newton
    ) {
        refuse(
            &[("--step", args.step.is_some())],
            &format!("applies to --solver pegasos or subgradient, not {solver}"),
        )?;
    }
    if solver == SolverKind::Smo {
        refuse(
            &[("--trace-weights", args.trace_weights)],
            "applies to linear models (a kernel SVM has no weights per feature)",
        )?;
        args.kernel.refuse_unused()?;
    }
    if args.last && args.average_from.is_some() {
        bail!("--average-from applies to the average of the iterates; --last returns the last one");
    }
    // Averaging asked to start at or after the last pass would return the last iterate, unasked.
    if let (Some(from), SolverKind::Pegasos) = (args.average_from, solver) {
        let epochs = match (args.epochs, args.iterations, args.seconds) {
            (Some(e), _, _) => Some(e),
            (None, None, None) => Some(LinearSvmParams::DEFAULT_PEGASOS_EPOCHS),
            _ => None,
        };
        if let Some(epochs) = epochs.filter(|&e| from >= e && !args.last) {
            let (from, epochs) = (format_number(from), format_number(epochs));
            bail!(
                "--average-from {from} starts averaging at or after the last of the {epochs} passes run \
                 (--epochs): the model would be the last iterate; ask for it with --last, or average from \
                 fewer passes"
            );
        }
    }
    let step = args.step.unwrap_or(StepRule::Pegasos);
    let solver = match solver {
        SolverKind::Dcd => LinearSolver::Dcd(
            DcdParams::new()
                .epsilon(args.epsilon.unwrap_or(DcdParams::default().epsilon))
                .blocks(args.blocks.unwrap_or(1)),
        ),
        SolverKind::Pegasos => LinearSolver::Pegasos(PegasosParams {
            batch_size: args.batch_size.unwrap_or(1),
            step,
            projection: args.projection,
            average: args.average || !args.last,
            average_from_epoch: args.average_from.unwrap_or(1.0),
            sampling: args.sampling.unwrap_or(Sampling::Permutation),
            seed: args.seed,
        }),
        SolverKind::Subgradient => LinearSolver::Subgradient(SubgradientParams { step }),
        SolverKind::Smo => args.kernel.solver(args.epsilon),
        SolverKind::Newton => LinearSolver::Newton(Newton {
            gap_target: args.gap.unwrap_or(Newton::default().gap_target),
            ..Newton::default()
        }),
        other => bail!("--solver {other} is not a binary solver of this command"),
    };
    // A kernel SVM's intercept is unregularized (as LIBSVM's); a linear model's is a feature by default.
    let bias = match solver {
        LinearSolver::Smo { .. } => args.bias.unwrap_or(Bias::Unregularized),
        _ => args.bias.unwrap_or(Bias::Feature),
    };
    let mut budget = Budget::default();
    budget.max_iterations = args.iterations;
    budget.max_epochs = args.epochs;
    budget.max_seconds = args.seconds;
    budget.tolerance = args.tolerance;
    budget.eval_every_epochs = args.eval_every.unwrap_or(f64::INFINITY);
    budget.keep_best = args.keep_best;
    budget.gap_tolerance = args.gap;
    let mut p = LinearSvmParams::new()
        .solver(solver)
        .budget(budget)
        .bias(bias)
        .loss(match args.loss {
            None => Default::default(),
            Some(l) => l.binary().ok_or_else(|| {
                anyhow::anyhow!(
                    "--loss softmax is multinomial logistic regression: it applies to --task multiclass; \
                     binary logistic regression is --loss logistic"
                )
            })?,
        })
        .seed(args.seed)
        .scale(args.scale.map_or(Scaling::None, Scaling::from));
    p.trace = args.trace.is_some();
    p.class_weights = args.numeric_class_weights()?;
    if let Some(r) = args.regularization() {
        p.regularization = r;
    }
    p.threads = args.threads;
    p.approx = approx;
    p.positive = args.pos_label;
    Ok(p)
}

/// The parameters for `data` when no solver was asked for: Newton's method in the primal where it suits the
/// problem's shape ([`LinearSvmParams::primal_suits`]), unless a flag only DCD reads was given.
pub(crate) fn chosen_for(
    mut p: LinearSvmParams,
    args: &TrainArgs,
    x: &SparseRows,
) -> LinearSvmParams {
    let dcd_flags = args.epsilon.is_some() || args.blocks.is_some() || args.warm_start.is_some();
    if args.solver.is_none()
        && !dcd_flags
        && matches!(p.solver, LinearSolver::Dcd(_))
        && p.primal_suits(x.n_rows(), x.n_features())
    {
        p.solver = LinearSolver::Newton(Newton {
            gap_target: args.gap.unwrap_or(Newton::default().gap_target),
            ..Newton::default()
        });
    }
    p
}

/// Trains, saves and reports a binary model; returns whether it converged.
pub(crate) fn train_binary(data_path: &Path, output: &Path, args: &TrainArgs) -> Result<bool> {
    let p = params(args)?;
    p.clone().check()?;
    let data = crate::load::read_labelled(data_path)?;
    let mut svm = chosen_for(p, args, &data.x).check()?;
    svm = svm.checkpoints(args.checkpoints());
    // A batch beyond the rows would make each step take every row, some many times (cv's folds and a rank's
    // share hold fewer rows than the file, so this is the whole file's count, checked here).
    if let Some(k) = args.batch_size.filter(|&k| k > data.n_samples()) {
        bail!(
            "--batch-size {k} is more than the {} training rows of {}: one step would take every row, some \
             several times",
            data.n_samples(),
            data_path.display()
        );
    }
    crate::report::advise_before_training(
        &data.x,
        args.scale.is_some_and(|s| s != ScaleArg::None) || crate::report::nonlinear_kernel(args),
    );
    if let Some(path) = &args.sample_weights {
        let weights = crate::groups::read_sample_weights(path, data.n_samples(), data_path)?;
        // The facade's checks of the weights as a whole (not all zero) name the file here.
        svm = svm
            .sample_weights(weights)
            .with_context(|| path.display().to_string())?;
    }
    if args.trace_weights {
        let d = data.x.n_features();
        if d > MAX_TRACED_FEATURES {
            bail!(
                "--trace-weights writes w at every step, for problems of at most {MAX_TRACED_FEATURES} features; {} has {d}",
                data_path.display()
            );
        }
        svm = svm.tracing_steps(true);
    }
    let mut bar = progress_bar(svm.params(), args);
    // A warm start comes from duals (a dcd --checkpoint file, an older dual file) or a model's margins.
    let alpha = match &args.warm_start {
        Some(path) => {
            let lambda = svm.params().regularization.lambda(data.n_samples())?.get();
            Some(maxmargin::linear::warm_duals(path, &data, lambda)?)
        }
        None => None,
    };
    let (
        FitReport {
            model,
            trace,
            warnings,
        },
        _,
    ) = svm.fit_warm(&data, alpha.as_deref(), &mut bar)?;
    bar.finish();
    model.save(output)?;
    let what = format!(
        "{}{} on {} examples x {} features",
        svm.params().solver.kind(),
        crate::report::binary_family(&model),
        data.n_samples(),
        data.x.n_features()
    );
    finished(
        args,
        output,
        svm.params(),
        (&model, &trace, &warnings),
        (what, true),
    )
}

/// The progress bar of a binary run with `params`' budget.
fn progress_bar(params: &LinearSvmParams, args: &TrainArgs) -> progress::TrainingProgress {
    let budget = &params.budget;
    progress::TrainingProgress::new(
        budget.max_epochs,
        budget.max_iterations,
        budget
            .gap_tolerance
            .unwrap_or(maxmargin::convergence::DEFAULT_GAP),
        args.quiet,
    )
}

/// `train --stream`: DCD (the default), Pegasos or the batch subgradient method over rows read from disk pass
/// by pass; returns whether the run converged.
pub(crate) fn train_streamed(cmd: &TrainCmd, dir: &Path) -> Result<bool> {
    let (data_path, output, args) = (&cmd.data, &cmd.output, &cmd.opts);
    let svm = params(args)?.check()?.checkpoints(args.checkpoints());
    let mut bar = progress_bar(svm.params(), args);
    let FitReport {
        model,
        trace,
        warnings,
    } = svm.fit_stream_observed(data_path, dir, &mut bar)?;
    bar.finish();
    model.save(output)?;
    let what = format!(
        "{} streamed{} on {} examples x {} features",
        svm.params().solver.kind(),
        crate::report::binary_family(&model),
        model.training.n_samples,
        model.n_features
    );
    finished(
        args,
        output,
        svm.params(),
        (&model, &trace, &warnings),
        (what, false),
    )
}

/// Reports a saved binary model's training under the heading `what`; returns whether it converged.
pub(crate) fn finished(
    args: &TrainArgs,
    output: &Path,
    params: &LinearSvmParams,
    (model, trace, warnings): (&LinearModel, &[maxmargin::optim::TraceRecord], &[String]),
    (what, in_memory): (String, bool),
) -> Result<bool> {
    let t = &model.training;
    report::report(
        args,
        output,
        &report::Finished {
            trace,
            warnings,
            what,
            lambda: model.lambda,
            stop: t.stop,
            objective: t.objective,
            gap: t.gap,
            converged: t.converged,
            certified: true,
            iterations: (t.iterations, iteration_unit(&params.solver, in_memory)),
            passes: (t.epochs, "epoch", "epochs"),
            tolerance: (params.budget.gap_tolerance).unwrap_or(maxmargin::convergence::DEFAULT_GAP),
        },
    )
}

/// What one of a binary solver's iterations is: DCD's is a pass over the rows shrinking left active (so
/// there are more of them than epochs), SMO's one pair of duals, Pegasos' one step.
fn iteration_unit(solver: &maxmargin::linear::LinearSolver, in_memory: bool) -> &'static str {
    use maxmargin::linear::LinearSolver;
    match solver {
        LinearSolver::Dcd(_) if in_memory => "passes over the active rows",
        LinearSolver::Smo { .. } => "pair steps",
        LinearSolver::Pegasos(_) => "steps",
        LinearSolver::Newton(_) => "Newton steps",
        _ => "iterations",
    }
}

/// The widest problem `--trace-weights` follows step by step.
const MAX_TRACED_FEATURES: usize = 20;

/// `eval`: `--lambda`, `--json`, `--pos-label` and `--inference` (graph models) in `flags`.
pub(crate) fn eval(
    model_path: &Path,
    data_path: &Path,
    grouping: Option<&crate::groups::Grouping>,
    (lambda, json, pos_label, inference): (
        Option<f64>,
        bool,
        Option<f64>,
        Option<maxmargin::structured::Inference>,
    ),
) -> Result<()> {
    if let Some(l) = lambda
        && !(l.is_finite() && l > 0.0)
    {
        bail!("--lambda must be positive and finite, got {l}");
    }
    let kind = maxmargin::io::model_file::read_header(model_path)?.kind;
    if maxmargin::tagger::is_tagger_kind(&kind) && pos_label.is_some() {
        bail!(
            "--pos-label applies to binary models; {} is a tagger",
            model_path.display()
        );
    }
    if maxmargin::tagger::is_tagger_kind(&kind) {
        if grouping.is_some() {
            bail!(
                "--group-by and --groups apply to binary and multiclass models; {} is a tagger",
                model_path.display()
            );
        }
        return crate::tagger::eval(model_path, data_path, lambda, json);
    }
    if kind != maxmargin::linear::MODEL_KIND && kind != maxmargin::linear::DECISION_KIND {
        if pos_label.is_some() {
            bail!(
                "--pos-label applies to binary models; {} is a {kind} model",
                model_path.display()
            );
        }
        return structured::eval(model_path, data_path, (lambda, json), grouping, inference);
    }
    let decision = crate::decision::load_binary(model_path, pos_label)?;
    let model = &decision.model;
    let data = crate::load::read_for_binary(data_path, model_path, model)?;
    let e = decision.evaluate(&data, lambda)?;
    let by_group = match grouping {
        Some(g) => crate::groups::groups(&data, g)?
            .into_iter()
            .map(|(name, rows)| {
                let ge = decision.evaluate(&data.select(&rows), lambda)?;
                let positives = ge.true_positive + ge.false_negative;
                let note = crate::groups::note(ge.n, &[positives, ge.n - positives]);
                Ok((name, ge, note))
            })
            .collect::<Result<Vec<_>>>()?,
        None => Vec::new(),
    };
    if json {
        if grouping.is_some() {
            out!("{}", crate::groups::with_groups(&e, &by_group)?);
        } else {
            out!("{}", serde_json::to_string(&e)?);
        }
    } else {
        let cell = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.4}"));
        let [neg, pos] = model.labels.map(format_number);
        out!(
            "examples   {}  (prevalence of {pos}: {:.4})",
            e.n,
            e.prevalence
        );
        out!("ranking (the scores' order, no threshold)");
        out!("  roc auc            {}", cell(e.roc_auc));
        out!("  average precision  {}", cell(e.average_precision));
        out!(
            "decision (at the model's threshold, score > {} means {pos})",
            decision.cut()
        );
        out!("  accuracy   {:.4}  ({}/{})", e.accuracy, e.correct, e.n);
        out!("  precision  {}", cell(e.precision));
        out!("  recall     {}", cell(e.recall));
        out!("  f1         {}", cell(e.f1));
        let (hp, hn) = (format!("predicted {pos}"), format!("predicted {neg}"));
        let w = hp.len().max(hn.len()).max(8);
        let a = format!("actual {pos}")
            .len()
            .max(format!("actual {neg}").len());
        out!("  {:a$}  {hp:>w$}  {hn:>w$}", "");
        out!(
            "  {:a$}  {:>w$}  {:>w$}",
            format!("actual {pos}"),
            e.true_positive,
            e.false_negative
        );
        out!(
            "  {:a$}  {:>w$}  {:>w$}",
            format!("actual {neg}"),
            e.false_positive,
            e.true_negative
        );
        if let (Some(b), Some(l)) = (e.brier, e.log_loss) {
            let whose = if decision.calibration.is_some() {
                "calibrated"
            } else {
                "the logistic model's own"
            };
            out!("probabilities ({whose})");
            out!("  brier      {b:.4}");
            out!("  log loss   {l:.4}");
        }
        out!(
            "mean hinge {}",
            crate::report::short(e.mean_hinge, 6, false)
        );
        if let (Some(l), Some(o)) = (e.lambda, e.objective) {
            out!(
                "objective  {}  (lambda {l:e})",
                crate::report::short(o, 6, false)
            );
        }
        if grouping.is_some() {
            out!("by group (decisions at the model's threshold; ranking without one)");
            out!(
                "  group         rows   prevalence  accuracy  precision  recall  f1      roc_auc  note"
            );
            for (name, ge, note) in &by_group {
                let line = format!(
                    "  {name:<13} {:<6} {:<11.4} {:<9.4} {:<10} {:<7} {:<7} {:<8} {}",
                    ge.n,
                    ge.prevalence,
                    ge.accuracy,
                    cell(ge.precision),
                    cell(ge.recall),
                    cell(ge.f1),
                    cell(ge.roc_auc),
                    note.as_deref().unwrap_or("")
                );
                out!("{}", line.trim_end());
            }
        }
    }
    Ok(())
}
