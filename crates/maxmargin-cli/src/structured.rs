//! The structured tasks of the command: `train --task multiclass|multilabel|chain`, and `predict` / `eval`
//! for the models they save. Multiclass data is LIBSVM, multilabel data LIBSVM multilabel, chains svm_hmm.

pub(crate) use crate::report::{finished, tolerance};
use crate::{SolverArg, TaskArg, TrainArgs, progress};
use anyhow::{Context, Result, bail};
use maxmargin::io::{multilabel, svm_hmm};
use maxmargin::optim::Bias;
use maxmargin::structured_svm::{
    ChainShape, StructEvaluation, StructSolverKind, StructuredModel, StructuredSvmParams, Task,
};
use std::path::Path;

fn params(
    args: &TrainArgs,
    task: Task,
    class_weights: Option<Vec<(f64, f64)>>,
) -> Result<StructuredSvmParams> {
    let name = task.kind();
    crate::refuse(
        &[
            ("--epochs", args.epochs.is_some()),
            ("--iterations", args.iterations.is_some()),
        ],
        &format!("applies to binary training; --task {name} takes --max-passes"),
    )?;
    crate::refuse(
        &[
            ("--batch-size", args.batch_size.is_some()),
            ("--step", args.step.is_some()),
            ("--projection", args.projection),
            ("--average", args.average),
            ("--last", args.last),
            ("--average-from", args.average_from.is_some()),
            ("--sampling", args.sampling.is_some()),
            ("--trace-weights", args.trace_weights),
            ("--pos-label", args.pos_label.is_some()),
        ],
        &format!("applies to binary training, not to --task {name}"),
    )?;
    if task != Task::Multiclass {
        crate::refuse(
            &args.kernel.given(),
            &format!(
                "applies to binary and multiclass kernel models; --task {name} has no kernels yet"
            ),
        )?;
    }
    let approx = args.kernel.approximation();
    let exact = args.kernel.kernel.is_some() && approx.is_none();
    if approx.is_none() {
        crate::refuse(
            &[("--components", args.kernel.components.is_some())],
            "applies to an approximated kernel (--approx rff|nystroem)",
        )?;
    }
    if !exact && approx.is_none() {
        crate::refuse(
            &args.kernel.given(),
            "applies to kernel SVMs (--kernel), not to a linear model",
        )?;
    }
    if approx.is_some() {
        crate::refuse(
            &[("--cache-mb", args.kernel.cache_mb.is_some())],
            "applies to the exact kernel SVM, which caches kernel rows; --approx caches none",
        )?;
    }
    if exact || approx.is_some() {
        args.kernel.refuse_unused()?;
    }
    let mut p = StructuredSvmParams::new(task).seed(args.seed);
    if let Some(r) = args.structural.rescaling {
        p = p.rescaling(r.rescaling());
    }
    if let Some(loss) = args.loss {
        // One-vs-rest's binary loss; the library refuses it for the other solvers and tasks, by name.
        if task != Task::Multiclass {
            bail!(
                "--loss applies to binary training and to --task multiclass --solver ovr, not to --task {name}"
            );
        }
        match loss.binary() {
            Some(l) => p.loss = l,
            None => {
                if let Some(s) = args.solver {
                    bail!(
                        "--loss softmax is multinomial logistic regression, trained by its own Newton solver; \
                         leave --solver {} out",
                        s.name()
                    );
                }
                if args.epsilon.is_some() {
                    bail!(
                        "--epsilon does not apply to --loss softmax, whose Newton method stops on its \
                         certified gap (--gap)"
                    );
                }
                p = p.solver(StructSolverKind::Softmax);
            }
        }
    }
    if let Some(s) = args.solver {
        p = p.solver(match s {
            SolverArg::Dcd => StructSolverKind::Dcd,
            SolverArg::Ovr => StructSolverKind::Ovr,
            SolverArg::Ovo => StructSolverKind::Ovo,
            SolverArg::Bcfw => StructSolverKind::Bcfw,
            SolverArg::Oneslack => StructSolverKind::Oneslack,
            SolverArg::Nslack => StructSolverKind::Nslack,
            SolverArg::Ssg => StructSolverKind::Ssg,
            SolverArg::Perceptron => StructSolverKind::Perceptron,
            SolverArg::Pegasos | SolverArg::Subgradient | SolverArg::Smo | SolverArg::Newton => bail!(
                "--solver {} applies to binary training; --task {name} takes bcfw, oneslack, nslack, ssg or \
                 perceptron (multiclass also dcd or ovr, and with --kernel ovo or ovr)",
                s.name()
            ),
        });
    }
    if exact {
        if p.solver == StructSolverKind::Softmax {
            bail!(
                "--loss softmax cannot apply to a kernel SVM (the hinge); --approx nystroem with --loss softmax \
                 learns a curved boundary with probabilities"
            );
        }
        if let Some(s) = args.solver
            && !matches!(s, SolverArg::Ovo | SolverArg::Ovr)
        {
            bail!(
                "--kernel with --task multiclass trains smo machines one-vs-one (ovo, the default) or \
                 one-vs-rest (ovr); --solver {} trains a linear model",
                s.name()
            );
        }
        if args.bias == Some(Bias::Feature) {
            bail!(
                "--bias feature cannot apply to a kernel SVM, whose machines' intercepts are unregularized \
                 (leave --bias out)"
            );
        }
        p = p.kernel(args.kernel.choice());
        if let Some(mb) = args.kernel.cache_mb {
            p.cache_mb = mb;
        }
    }
    p.approx = approx;
    match args.bias {
        None | Some(Bias::Feature) => {}
        Some(Bias::None) => p = p.bias(false),
        Some(other) => {
            bail!("--bias {other} applies to binary training; --task {name} takes none or feature")
        }
    }
    if let Some(scale) = args.scale {
        p = p.scale(scale.into());
    }
    if args.sample_weights.is_some()
        && !(task == Task::Multiclass
            && matches!(p.solver, StructSolverKind::Dcd | StructSolverKind::Softmax))
    {
        bail!(
            "--sample-weights applies to binary training and to --task multiclass with --solver dcd (the \
             Crammer-Singer dual), not to --task {name} with --solver {}",
            format!("{:?}", p.solver).to_lowercase()
        );
    }
    let weighted = (task == Task::Multiclass
        && matches!(
            p.solver,
            maxmargin::StructSolverKind::Dcd
                | maxmargin::StructSolverKind::Ovr
                | maxmargin::StructSolverKind::Ovo
                | maxmargin::StructSolverKind::Softmax
        ))
        || (matches!(task, Task::Chain | Task::Graph) && p.solver != StructSolverKind::Perceptron);
    if !args.class_weights.is_empty() && !weighted {
        bail!(
            "-w applies to binary training, to --task multiclass with --solver dcd or ovr, and to --task chain \
             and graph (not with the perceptron, which has no loss to weight), not to --task {name} with \
             --solver {}",
            format!("{:?}", p.solver).to_lowercase()
        );
    }
    let class_weights = match class_weights {
        Some(resolved) => resolved,
        None if task == Task::Chain => tag_order(args.numeric_class_weights()?)?,
        None => args.numeric_class_weights()?,
    };
    p = p.class_weights(class_weights);
    if let Some(r) = args.regularization() {
        p.regularization = r;
    }
    if p.solver == StructSolverKind::Perceptron {
        let flags = [
            ("--epsilon", args.epsilon.is_some()),
            ("--gap", args.gap.is_some()),
            ("--tolerance", args.tolerance.is_some()),
            ("--keep-best", args.keep_best),
        ];
        if let Some((flag, _)) = flags.iter().find(|f| f.1) {
            bail!(
                "{flag} cannot apply to --solver perceptron, which minimizes no objective and has no \
                 certificate: it stops when a pass makes no mistake or on --max-passes"
            );
        }
    }
    // ε is BCFW's relative gap tolerance, as --gap is: given both, one would be ignored. SSG has no ε.
    if args.epsilon.is_some() {
        if p.solver == StructSolverKind::Bcfw && args.gap.is_some() {
            bail!(
                "--epsilon and --gap are both BCFW's relative gap tolerance: give one of them (--gap {} \
                 would rule)",
                args.gap.unwrap_or_default()
            );
        }
        if p.solver == StructSolverKind::Ssg {
            bail!(
                "--epsilon does not apply to --solver ssg, which has no test of its own: it stops on its \
                 certified relative gap (--gap) or its budget"
            );
        }
    }
    if let Some(b) = args.blocks {
        if p.solver != StructSolverKind::Bcfw {
            let trained_by = match p.solver {
                StructSolverKind::Softmax => "--loss softmax".to_string(),
                StructSolverKind::Dcd => "the Crammer-Singer dual (--solver dcd)".to_string(),
                other => format!("--solver {}", format!("{other:?}").to_lowercase()),
            };
            bail!(
                "--blocks applies to binary training with --solver dcd and to structured training with \
                 --solver bcfw, not to --task {name} trained by {trained_by}"
            );
        }
        p = p.blocks(b);
    }
    if let Some(e) = args.epsilon {
        p = p.epsilon(e);
    }
    if let Some(t) = args.threads {
        p = p.threads(t);
    }
    p.max_passes = args.max_passes;
    p.gap = args.gap;
    p.keep_best = args.keep_best;
    p.max_seconds = args.seconds;
    p.tolerance = args.tolerance;
    p.eval_every = args.eval_every;
    p.trace = args.trace.is_some();
    Ok(p)
}

/// Trains, saves and reports a structured model; returns whether it converged.
pub fn train(data: &Path, output: &Path, task: TaskArg, args: &TrainArgs) -> Result<bool> {
    let task = match task {
        TaskArg::Multiclass => Task::Multiclass,
        TaskArg::Multilabel => Task::Multilabel,
        TaskArg::Chain => Task::Chain,
        TaskArg::Binary | TaskArg::Graph => bail!("binary and graph training go their own ways"),
    };
    if let Some(s) = args.structural.latent_subclasses {
        if task != Task::Multiclass {
            bail!(
                "--latent-subclasses applies to --task multiclass, not --task {} (chains take --latent-states)",
                task.kind()
            );
        }
        return crate::latent::train(data, output, args, s);
    }
    if let Some(k) = args.structural.latent_states {
        return crate::latent::train_chain(data, output, args, k);
    }
    let (mut svm, mut bar) = estimator(args, task)?;
    if let Some(path) = &args.warm_start {
        svm = svm.warm_start_from(&StructuredModel::load(path)?)?;
    }
    let report = match task {
        Task::Multiclass => {
            let rows = crate::load::read_labelled(data)?;
            crate::report::advise_before_training(
                &rows.x,
                args.scale.is_some_and(|s| s != crate::ScaleArg::None)
                    || crate::report::nonlinear_kernel(args),
            );
            if let Some(path) = &args.sample_weights {
                let weights = crate::groups::read_sample_weights(path, rows.n_samples(), data)?;
                svm = svm
                    .sample_weights(weights)
                    .with_context(|| path.display().to_string())?;
            }
            svm.fit_multiclass_owned(rows, &mut bar)?
        }
        Task::Multilabel => svm.fit_multilabel(
            &multilabel::read(crate::load::not_csv(data, "multilabel")?)?,
            &mut bar,
        )?,
        Task::Chain => svm.fit_chain(
            &svm_hmm::read(crate::load::not_csv(data, "svm_hmm")?)?,
            &mut bar,
        )?,
        Task::Custom => bail!("custom output spaces train from Rust (StructuredSvm::fit)"),
        other => bail!("--task {} does not train from this command", other.kind()),
    };
    bar.finish();
    report.model.save(output)?;
    if report.model.is_second_order() && !args.quiet {
        note!(
            "second-order transitions: {} weights for {} tags",
            report.model.n_labels.pow(3),
            report.model.n_labels
        );
    }
    finished(
        args,
        output,
        &svm,
        (&report.model, &report.trace, &report.warnings),
        crate::report::Ran::InMemory,
    )
}

/// `train --stream --task multiclass --solver ssg`: returns whether the run converged.
pub(crate) fn train_streamed(cmd: &crate::TrainCmd, dir: &Path) -> Result<bool> {
    let (svm, _) = estimator(&cmd.opts, Task::Multiclass)?;
    let report = svm.fit_multiclass_stream(&cmd.data, dir)?;
    report.model.save(&cmd.output)?;
    finished(
        &cmd.opts,
        &cmd.output,
        &svm,
        (&report.model, &report.trace, &report.warnings),
        crate::report::Ran::Streamed,
    )
}

/// The checked estimator the flags ask for, with its checkpoints, and the progress display heading for its
/// gap tolerance.
pub(crate) fn estimator(
    args: &TrainArgs,
    task: Task,
) -> Result<(maxmargin::StructuredSvm, progress::TrainingProgress)> {
    estimator_weighted(args, task, None)
}

/// A chain's `-w` weights in tag order, each tag once (the same weights give the same model whatever their
/// order on the command line).
pub(crate) fn tag_order(mut weights: Vec<(f64, f64)>) -> Result<Vec<(f64, f64)>> {
    weights.sort_by(|a, b| a.0.total_cmp(&b.0));
    if let Some(p) = weights.windows(2).find(|p| p[0].0 == p[1].0) {
        bail!("-w names the tag {} twice", p[0].0);
    }
    Ok(weights)
}

/// As [`estimator`], with the class weights already resolved (a tagger's by tag name) or, with `None`,
/// read from the flags as numbers.
pub(crate) fn estimator_weighted(
    args: &TrainArgs,
    task: Task,
    class_weights: Option<Vec<(f64, f64)>>,
) -> Result<(maxmargin::StructuredSvm, progress::TrainingProgress)> {
    let svm = params(args, task, class_weights)?
        .check()?
        .checkpoints(args.checkpoints())
        .chain_shape(ChainShape::edges(0).with_second_order(args.structural.second_order()));
    let bar =
        progress::TrainingProgress::new(svm.params().max_passes, None, tolerance(&svm), args.quiet);
    Ok((svm, bar))
}

/// One line per prediction: a class value, a comma-separated label set, or one tag per token (as the
/// svm_hmm file has one token per line).
pub fn predict(model_path: &std::path::Path, data: &std::path::Path) -> Result<Vec<String>> {
    if maxmargin::io::model_file::read_header(model_path)?.kind
        == maxmargin::structured_svm::LATENT_CHAIN_KIND
    {
        return crate::latent::predict_chain(model_path, data);
    }
    let model = StructuredModel::load(model_path)?;
    let preds = match model.task {
        Task::Multiclass => model.predict_multiclass(&crate::load::read_to_predict(
            data,
            model_path,
            crate::load::ModelShape::structured(&model),
        )?)?,
        Task::Multilabel => {
            model.predict_multilabel(&crate::load::read_multilabel_for(data, &model)?)?
        }
        Task::Chain => {
            model.predict_chain(&crate::load::read_sequences_for(data, model.n_features)?)?
        }
        Task::Custom => bail!(
            "{}: a custom-space model predicts from Rust",
            model_path.display()
        ),
        other => bail!(
            "{}: a {} model does not predict from this command",
            model_path.display(),
            other.kind()
        ),
    };
    Ok(match model.task {
        Task::Chain => tag_lines(&preds),
        _ => preds.iter().map(ToString::to_string).collect(),
    })
}

/// A chain's predictions as svm_hmm files lay them out: one tag per line, a line per token.
pub(crate) fn tag_lines(preds: &[maxmargin::structured_svm::Prediction]) -> Vec<String> {
    preds
        .iter()
        .flat_map(|p| {
            p.to_string()
                .split(' ')
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

pub fn eval(
    model_path: &std::path::Path,
    data: &std::path::Path,
    (lambda, json): (Option<f64>, bool),
    grouping: Option<&crate::groups::Grouping>,
    inference: Option<maxmargin::structured::Inference>,
) -> Result<()> {
    if maxmargin::io::model_file::read_header(model_path)?.kind
        == maxmargin::structured_svm::GRAPH_KIND
    {
        if grouping.is_some() {
            bail!(
                "--group-by and --groups apply to binary and multiclass models; {} is a graph model",
                model_path.display()
            );
        }
        return crate::graph::eval(model_path, data, (lambda, json), inference);
    }
    if maxmargin::io::model_file::read_header(model_path)?.kind
        == maxmargin::structured_svm::LATENT_KIND
    {
        if grouping.is_some() {
            bail!(
                "--group-by and --groups apply to binary and multiclass models; {} is a latent model",
                model_path.display()
            );
        }
        let e = crate::latent::evaluate(model_path, data, lambda)?;
        return crate::struct_report::print_evaluation(&e, false, json);
    }
    if maxmargin::io::model_file::read_header(model_path)?.kind
        == maxmargin::structured_svm::LATENT_CHAIN_KIND
    {
        if grouping.is_some() {
            bail!(
                "--group-by and --groups apply to binary and multiclass models; {} is a latent chain model",
                model_path.display()
            );
        }
        let m = maxmargin::structured_svm::LatentChainModel::load(model_path)?;
        let sequences = crate::load::read_sequences_for(data, m.model.n_features)?;
        let e = m.evaluate(&sequences, lambda)?;
        crate::struct_report::unknown_labels(&e, (data, model_path), true, lambda)?;
        return crate::struct_report::print_evaluation(&e, false, json);
    }
    let loaded = crate::load::Loaded::load(model_path)?;
    let (model, calibrated) = (loaded.model(), loaded.calibrated());
    if let Some(g) = grouping {
        if model.task != Task::Multiclass {
            bail!(
                "--group-by and --groups apply to binary and multiclass models; {} is a {} model",
                model_path.display(),
                model.task.kind()
            );
        }
        return crate::struct_report::eval_groups(model, model_path, data, lambda, json, g);
    }
    let e: StructEvaluation = match (model.task, calibrated) {
        (Task::Multiclass, calibrated) => {
            let shape = crate::load::ModelShape::structured(model);
            let rows = crate::load::read_for_model(data, model_path, shape)?;
            match calibrated {
                Some(c) => c.evaluate(&rows, lambda)?,
                None => model.evaluate_multiclass(&rows, lambda)?,
            }
        }
        (Task::Multilabel, _) => {
            model.evaluate_multilabel(&crate::load::read_multilabel_for(data, model)?, lambda)?
        }
        (Task::Chain, _) => model.evaluate_chain(
            &crate::load::read_sequences_for(data, model.n_features)?,
            lambda,
        )?,
        (Task::Custom, _) => bail!(
            "{}: a custom-space model evaluates from Rust",
            model_path.display()
        ),
        (other, _) => bail!(
            "{}: a {} model does not evaluate from this command",
            model_path.display(),
            other.kind()
        ),
    };
    let chain = model.task == Task::Chain;
    crate::struct_report::unknown_labels(&e, (data, model_path), chain, lambda)?;
    crate::struct_report::print_evaluation(&e, model.task == Task::Multilabel, json)
}

/// What the summary line adds for a kernel model: the kernel, the approximation, the support vectors.
pub(crate) fn kernel_family(model: &StructuredModel) -> String {
    match (&model.params.approx, &model.kernel, &model.features) {
        (Some(a), Some(k), _) => format!(
            " ({} approximation of the {}, {} landmarks)",
            a.method,
            k.kernel.name(),
            k.n_support()
        ),
        (Some(a), None, Some(m)) => format!(
            " ({} approximation of the rbf, {} components)",
            a.method,
            m.components()
        ),
        (None, Some(k), _) => format!(
            " ({} kernel, {} machines, {} support vectors)",
            k.kernel.name(),
            k.machines.len(),
            k.n_support()
        ),
        _ => String::new(),
    }
}
