//! The `maxmargin` command: train, predict, eval and demo for linear SVMs on LIBSVM files.
//!
//! Every flag maps to a field of the library's parameter types, so anything the command does can be done
//! from Rust; this binary adds only presentation: the progress bar, tables, JSON output and exit codes.
//! Errors print one line (`error: FILE:LINE:COLUMN: ...` for bad data) and exit with status 1.

/// `println!` that returns write errors instead of panicking (a closed pipe ends the command quietly with
/// status 0, as `head` expects; a full disk is an error). Only inside functions returning `anyhow::Result`.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::emit(format_args!($($arg)*))?
    };
}

/// `eprintln!` that never panics: when standard error itself cannot be written, there is nobody to tell.
macro_rules! note {
    ($($arg:tt)*) => {
        $crate::note_line(format_args!($($arg)*))
    };
}

mod demo;
mod progress;
mod structured;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use maxmargin::core::scale::Scaling;
use maxmargin::io::atomic::write_atomic;
use maxmargin::io::libsvm;
use maxmargin::linear::FitReport;
use maxmargin::prelude::*;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Max-margin learning: train, evaluate and apply linear SVMs on LIBSVM / SVMlight files.
#[derive(Debug, Parser)]
#[command(name = "maxmargin", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Train a binary linear SVM (or, with --task, a multiclass, multilabel or chain SVM) and save the model.
    Train(Box<TrainCmd>),
    /// Predict one label per line (in the data's own label values).
    Predict {
        /// The model file.
        model: PathBuf,
        /// LIBSVM data (plain or .gz).
        data: PathBuf,
        /// Write predictions here (atomically) instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Accuracy, counts, and with --lambda the primal objective, of a model on labelled data.
    Eval {
        /// The model file.
        model: PathBuf,
        /// LIBSVM data (plain or .gz).
        data: PathBuf,
        /// Also report λ/2‖w‖² + mean hinge for this λ.
        #[arg(long)]
        lambda: Option<f64>,
        /// Print one JSON object instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Stratified, seeded k-fold cross-validation of a binary linear SVM (any of train's flags): accuracy per
    /// fold and their mean, or with --c-path, per C along a warm-started regularization path.
    Cv(Box<CvCmd>),
    /// Run the worked examples and train, save, load and evaluate a model on embedded data.
    Demo,
}

#[derive(Debug, Args)]
struct TrainCmd {
    /// LIBSVM data (plain or .gz); labels may be any two numbers (+1/-1, 0/1, 1/2, ...).
    data: PathBuf,
    /// Where to save the model (JSON when the name ends in .json).
    #[arg(short, long)]
    output: PathBuf,
    /// binary, multiclass, multilabel or chain (data: LIBSVM, LIBSVM, LIBSVM multilabel, svm_hmm).
    #[arg(long, value_enum, default_value_t = TaskArg::Binary)]
    task: TaskArg,
    /// Exit with status 3 when the run stops short of its optimum (the model is still written, and the
    /// warning printed).
    #[arg(long)]
    require_convergence: bool,
    #[command(flatten)]
    opts: TrainArgs,
}

/// What `train --task` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum TaskArg {
    /// Two classes.
    Binary,
    /// One class of many (LIBSVM).
    Multiclass,
    /// A set of labels (LIBSVM multilabel).
    Multilabel,
    /// A tag per token (svm_hmm).
    Chain,
}

/// What `--scale` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ScaleArg {
    /// The features as they are.
    None,
    /// Divide each feature by its largest absolute value (sparse data stays sparse).
    Maxabs,
    /// Map each feature's [min, max] to [0, 1] (sparse data stays sparse for non-negative features).
    Minmax,
    /// Divide by the standard deviation; centred only on dense data (sparse data stays sparse).
    Standard,
}

impl From<ScaleArg> for Scaling {
    fn from(s: ScaleArg) -> Self {
        match s {
            ScaleArg::None => Self::None,
            ScaleArg::Maxabs => Self::MaxAbs,
            ScaleArg::Minmax => Self::MinMax,
            ScaleArg::Standard => Self::Standard,
        }
    }
}

#[derive(Debug, Args)]
struct CvCmd {
    /// LIBSVM data (plain or .gz) with two classes.
    data: PathBuf,
    /// Number of folds.
    #[arg(short = 'k', long, default_value_t = 5)]
    folds: usize,
    /// A regularization path: increasing C values, comma-separated (e.g. 0.01,0.1,1,10); each fold's model
    /// at a C starts from its dual solution at the previous C (dcd).
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["c", "lambda"])]
    c_path: Vec<f64>,
    /// Print one JSON object (`fold_accuracy`, `accuracy`, `std`), or with --c-path a JSON array of
    /// (`c`, `cv`, `passes`, `objective`).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    opts: TrainArgs,
}

/// Training flags shared by `train` and `cv`.
#[derive(Debug, Args)]
struct TrainArgs {
    /// binary: dcd (default; LIBLINEAR's -s 3), pegasos or subgradient; multiclass: dcd (default;
    /// Crammer–Singer, as LIBLINEAR's -s 4), ovr (one-vs-rest DCD), bcfw, oneslack, nslack or ssg; multilabel
    /// and chain: bcfw (default), oneslack, nslack or ssg.
    #[arg(long)]
    solver: Option<String>,
    /// Scale the features: statistics fitted on the training rows only, stored in the model and applied by
    /// predict and eval. none (default), maxabs (sparse stays sparse), minmax (to [0, 1]; sparse stays sparse
    /// for non-negative features), standard (centred on dense data only).
    #[arg(long, value_enum)]
    scale: Option<ScaleArg>,
    /// dcd: projected-gradient tolerance [0.1]; structured: cutting-plane violation, or BCFW's relative gap [0.01].
    #[arg(long)]
    epsilon: Option<f64>,
    /// Structured: budget in passes over the data (oracle calls / n) [default: 1000].
    #[arg(long)]
    max_passes: Option<f64>,
    /// Worker threads [default: all cores]; the model does not depend on it.
    #[arg(long)]
    threads: Option<usize>,
    /// dcd: blocks of examples updated in parallel per pass (1: sequential, as LIBLINEAR); the model depends
    /// on the blocks and the seed, not on --threads.
    #[arg(long)]
    blocks: Option<usize>,
    /// Stop once the duality gap is at most this fraction of the objective (dcd, and structured solvers with
    /// a gap), checked every --eval-every passes.
    #[arg(long)]
    gap: Option<f64>,
    /// Structured: write the solver's final state here, to continue later with --resume. Binary dcd: write the
    /// dual solution here, for --warm-start at another C.
    #[arg(long)]
    checkpoint: Option<PathBuf>,
    /// Structured: continue from a --checkpoint file (same data, task, solver and λ); budgets count from it.
    #[arg(long)]
    resume: Option<PathBuf>,
    /// Structured, ssg: start from this model's weights. Binary dcd: start from the duals of a --checkpoint
    /// file made on the same examples at any C, or from a binary model (α_i = C inside its margin, else 0).
    #[arg(long)]
    warm_start: Option<PathBuf>,
    /// λ in λ/2‖w‖² + (1/n)Σ hinge [binary default: C = 1; structured: λ = 0.01].
    #[arg(long, conflicts_with = "c")]
    lambda: Option<f64>,
    /// C in LIBLINEAR's ½‖w‖² + CΣ hinge; converted to λ = 1/(C n) [binary default: 1].
    #[arg(short = 'c', long = "cost")]
    c: Option<f64>,
    /// Passes over the data [default: 1000 for dcd, which stops on its own test first; 10 for pegasos; for
    /// subgradient, 500 iterations].
    #[arg(long, conflicts_with = "iterations")]
    epochs: Option<f64>,
    /// Steps (pegasos) or full-batch iterations (subgradient).
    #[arg(long)]
    iterations: Option<u64>,
    /// Stop after this many seconds (the model then depends on the machine's speed).
    #[arg(long)]
    seconds: Option<f64>,
    /// Stop when the objective improves by less than this, relative, over the last 5 evaluations.
    #[arg(long)]
    tolerance: Option<f64>,
    /// Examples per Pegasos step [1].
    #[arg(long)]
    batch_size: Option<usize>,
    /// constant:ETA, inverse:ETA0 (ETA0/t) or pegasos (1/(λt)).
    #[arg(long)]
    step: Option<StepRule>,
    /// none, unregularized or feature (a regularized constant feature, as LIBLINEAR's -B 1) [feature];
    /// structured tasks: none or feature.
    #[arg(long)]
    bias: Option<Bias>,
    /// Project onto the ball of radius 1/√λ after each Pegasos step.
    #[arg(long)]
    projection: bool,
    /// Return the average of the Pegasos iterates (the default; see --last).
    #[arg(long, conflicts_with = "last")]
    average: bool,
    /// Return the last Pegasos iterate instead of the average.
    #[arg(long)]
    last: bool,
    /// With --average, average only the iterates after this many passes [1].
    #[arg(long)]
    average_from: Option<f64>,
    /// Pegasos: permutation (per epoch, the default), uniform (with replacement) or cyclic.
    #[arg(long)]
    sampling: Option<Sampling>,
    /// Seed of all randomness.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Evaluate the objective and its certificate every this many passes (for the trace) [with --trace:
    /// 1 for binary, 5 for structured; otherwise only when a stop needs it, and at the end].
    #[arg(long)]
    eval_every: Option<f64>,
    /// Class weight LABEL=WEIGHT (repeatable): that class's losses count WEIGHT times, as LIBLINEAR's -wi.
    #[arg(short = 'w', long = "weight", value_parser = parse_class_weight, allow_hyphen_values = true)]
    class_weights: Vec<(f64, f64)>,
    /// hinge (default), or squared-hinge (with --solver dcd).
    #[arg(long)]
    loss: Option<maxmargin::optim::BinaryLoss>,
    /// Return the evaluated model with the lowest objective instead of the final one.
    #[arg(long)]
    keep_best: bool,
    /// Write the trace (one JSON object per evaluation, then a summary line) to this file.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// No progress bar and no summary (warnings are still printed).
    #[arg(short, long)]
    quiet: bool,
}

/// Parses `LABEL=WEIGHT`.
fn parse_class_weight(s: &str) -> Result<(f64, f64), String> {
    let (label, weight) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?} is not LABEL=WEIGHT"))?;
    let label: f64 = label
        .parse()
        .map_err(|_| format!("{label:?} is not a label"))?;
    let weight: f64 = weight
        .parse()
        .map_err(|_| format!("{weight:?} is not a weight"))?;
    if !(weight.is_finite() && weight >= 0.0) {
        return Err(format!("weight must be finite and >= 0, got {weight}"));
    }
    Ok((label, weight))
}

/// Writes one line to standard output: a closed pipe exits quietly with status 0, other errors are returned.
fn emit(args: std::fmt::Arguments<'_>) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_fmt(args)
        .and_then(|()| stdout.write_all(b"\n"))
    {
        Ok(()) => Ok(()),
        Err(e) => quiet_on_closed_pipe(e).context("writing to standard output"),
    }
}

/// Ends the command with status 0 when the reader went away (`predict … | head`); any other error is returned.
fn quiet_on_closed_pipe(e: std::io::Error) -> Result<()> {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    Err(e.into())
}

/// Writes one line to standard error, ignoring failure.
fn note_line(args: std::fmt::Arguments<'_>) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr
        .write_fmt(args)
        .and_then(|()| stderr.write_all(b"\n"));
}

fn main() {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            // One clear line; the chain of causes joined.
            note!("error: {e:#}");
            std::process::exit(1);
        }
    }
}

/// The exit status of a run that trained a model short of its optimum under `--require-convergence`.
pub const NOT_CONVERGED: i32 = 3;

/// With `--threads T`, every parallel part of the command (reading the data, training, cross-validation)
/// runs on T threads: the global pool is sized before anything else starts.
fn size_thread_pool(threads: Option<usize>) -> Result<()> {
    if let Some(t) = threads {
        maxmargin::check_threads(Some(t))?;
        // The command's own thread is worker 0, so `--threads 1` starts no other thread and `--threads T`
        // starts T − 1 (a small run then costs no thread hand-off: heart_scale 4.0 → 3.3 ms).
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .use_current_thread()
            .build_global()
            .context("starting the thread pool")?;
    }
    Ok(())
}

fn run(cli: Cli) -> Result<i32> {
    match &cli.command {
        Command::Train(cmd) => size_thread_pool(cmd.opts.threads)?,
        Command::Cv(cmd) => size_thread_pool(cmd.opts.threads)?,
        _ => {}
    }
    match cli.command {
        Command::Train(cmd) => train(&cmd),
        Command::Predict {
            model,
            data,
            output,
        } => predict(&model, &data, output.as_deref()).map(|()| 0),
        Command::Eval {
            model,
            data,
            lambda,
            json,
        } => eval(&model, &data, lambda, json).map(|()| 0),
        Command::Cv(cmd) => cv(&cmd).map(|()| 0),
        Command::Demo => demo::run().map(|()| 0),
    }
}

/// The flags that were given, by name, from a list of `(flag, given)`.
fn given(flags: &[(&'static str, bool)]) -> Vec<&'static str> {
    flags.iter().filter(|(_, g)| *g).map(|(f, _)| *f).collect()
}

/// An error naming the first flag of `flags` that was given, and why it cannot apply.
fn refuse(flags: &[(&'static str, bool)], why: &str) -> Result<()> {
    match given(flags).first() {
        Some(flag) => bail!("{flag} {why}"),
        None => Ok(()),
    }
}

/// The library's parameters for the command's flags (binary task). Every flag is honoured or refused.
fn params(args: &TrainArgs) -> Result<LinearSvmParams> {
    let solver: SolverKind = args.solver.as_deref().unwrap_or("dcd").parse()?;
    let pegasos_only = [
        ("--batch-size", args.batch_size.is_some()),
        ("--projection", args.projection),
        ("--average", args.average),
        ("--last", args.last),
        ("--average-from", args.average_from.is_some()),
        ("--sampling", args.sampling.is_some()),
    ];
    let dcd_only = [
        ("--epsilon", args.epsilon.is_some()),
        ("--blocks", args.blocks.is_some()),
        (
            "--loss squared-hinge",
            args.loss == Some(maxmargin::optim::BinaryLoss::SquaredHinge),
        ),
        ("--checkpoint", args.checkpoint.is_some()),
        ("--warm-start", args.warm_start.is_some()),
    ];
    let structured_only = [
        ("--max-passes", args.max_passes.is_some()),
        ("--resume", args.resume.is_some()),
    ];
    refuse(
        &structured_only,
        "applies to structured tasks (--task multiclass|multilabel|chain), not to binary; binary dcd continues \
         from a --checkpoint with --warm-start",
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
    if solver == SolverKind::Dcd {
        refuse(
            &[("--step", args.step.is_some())],
            "applies to --solver pegasos or subgradient, not dcd",
        )?;
    }
    let mut p = LinearSvmParams::new()
        .solver(solver)
        .batch_size(args.batch_size.unwrap_or(1))
        .bias(args.bias.unwrap_or(Bias::Feature))
        .projection(args.projection)
        .average(args.average || !args.last)
        .sampling(args.sampling.unwrap_or(Sampling::Permutation))
        .seed(args.seed)
        .scale(args.scale.map_or(Scaling::None, Scaling::from));
    p.eval_every_epochs = args.eval_every;
    p.trace = args.trace.is_some();
    p.average_from_epoch = args.average_from.unwrap_or(1.0);
    p.keep_best = args.keep_best;
    p.loss = args.loss.unwrap_or_default();
    p.class_weights.clone_from(&args.class_weights);
    if let Some(e) = args.epsilon {
        p.epsilon = e;
    }
    if let Some(l) = args.lambda {
        p = p.lambda(l);
    }
    if let Some(c) = args.c {
        p = p.c(c);
    }
    p.epochs = args.epochs;
    p.iterations = args.iterations;
    p.max_seconds = args.seconds;
    p.tolerance = args.tolerance;
    p.step = args.step;
    p.gap = args.gap;
    p.blocks = args.blocks.unwrap_or(1);
    p.threads = args.threads;
    Ok(p)
}

/// Prints each warning as one `warning:` line on stderr, whatever `--quiet` says.
fn print_warnings(warnings: &[String]) {
    for w in warnings {
        note!("warning: {w}");
    }
}

fn cv(cmd: &CvCmd) -> Result<()> {
    let args = &cmd.opts;
    refuse(
        &[
            ("--trace", args.trace.is_some()),
            ("--max-passes", args.max_passes.is_some()),
            ("--checkpoint", args.checkpoint.is_some()),
            ("--resume", args.resume.is_some()),
            ("--warm-start", args.warm_start.is_some()),
        ],
        "does not apply to cv",
    )?;
    let params = params(args)?;
    let data = libsvm::read(&cmd.data)?;
    if !cmd.c_path.is_empty() {
        let path = maxmargin::linear::regularization_path(
            &params,
            &data,
            &cmd.c_path,
            cmd.folds,
            args.seed,
        )?;
        if cmd.json {
            out!("{}", serde_json::to_string(&path)?);
        } else {
            out!("C            accuracy  sd      passes");
            for p in &path {
                out!(
                    "{:<12} {:.4}    {:.4}  {:.1}",
                    p.c,
                    p.cv.accuracy,
                    p.cv.std,
                    p.passes
                );
            }
        }
        return Ok(());
    }
    let svm = params.check()?;
    let cv = maxmargin::linear::cross_validate(&svm, &data, cmd.folds, args.seed)?;
    if cmd.json {
        out!("{}", serde_json::to_string(&cv)?);
    } else {
        for (f, a) in cv.fold_accuracy.iter().enumerate() {
            out!("fold {}  accuracy {a:.4}", f + 1);
        }
        out!("mean    accuracy {:.4} (sd {:.4})", cv.accuracy, cv.std);
    }
    Ok(())
}

fn train(cmd: &TrainCmd) -> Result<i32> {
    let (data_path, output, args) = (&cmd.data, &cmd.output, &cmd.opts);
    let converged = if cmd.task == TaskArg::Binary {
        train_binary(data_path, output, args)?
    } else {
        structured::train(data_path, output, cmd.task, args)?
    };
    Ok(if cmd.require_convergence && !converged {
        NOT_CONVERGED
    } else {
        0
    })
}

/// Trains, saves and reports a binary model; returns whether it converged.
fn train_binary(data_path: &Path, output: &Path, args: &TrainArgs) -> Result<bool> {
    let svm = params(args)?.check()?;
    let data = libsvm::read(data_path)?;
    let mut bar =
        progress::TrainingProgress::new(svm.params().epochs, svm.params().iterations, args.quiet);
    // A warm start comes from duals (a --checkpoint file) or from a model's margins.
    let alpha = match &args.warm_start {
        Some(path) => {
            let lambda = svm.params().regularization.lambda(data.n_samples())?.get();
            let kind = maxmargin::io::model_file::read_header(path)?.kind;
            if kind == maxmargin::linear::MODEL_KIND {
                Some(LinearModel::load(path)?.dual_guess(&data, lambda)?)
            } else {
                Some(maxmargin::linear::DualFile::load(path)?.alpha_for(path, &data, lambda)?)
            }
        }
        None => None,
    };
    let (
        FitReport {
            model,
            trace,
            warnings,
        },
        dual,
    ) = svm.fit_warm(&data, alpha.as_deref(), &mut bar)?;
    if let (Some(path), Some(alpha)) = (&args.checkpoint, dual) {
        maxmargin::linear::DualFile {
            n_samples: data.n_samples(),
            lambda: model.lambda,
            alpha,
        }
        .save(path)?;
    }
    bar.finish();
    model.save(output)?;
    let t = &model.training;
    if let Some(path) = &args.trace {
        write_trace(
            path,
            &trace,
            serde_json::json!({
                "stop": t.stop,
                "objective": t.objective,
                "gap": t.gap,
                "converged": t.converged,
                "iterations": t.iterations,
                "epoch": t.epochs,
            }),
        )?;
    }
    print_warnings(&warnings);
    if !args.quiet {
        let seconds = trace.last().map_or(0.0, |r| r.seconds);
        note!(
            "trained {} on {} examples x {} features: lambda {:.3e}, objective {:.6}, gap {}, {} iterations ({:.2} epochs) in {seconds:.2}s, stop: {}{}",
            svm.params().solver,
            data.n_samples(),
            data.x.n_features(),
            model.lambda,
            t.objective,
            t.gap.map_or("-".into(), |g| format!("{g:.3e}")),
            t.iterations,
            t.epochs,
            t.stop,
            if t.converged { "" } else { " (not converged)" },
        );
        note!("saved {}", output.display());
    }
    Ok(t.converged)
}

/// Writes a JSONL trace (one record per evaluation, then the summary) atomically.
fn write_trace(
    path: &Path,
    trace: &[maxmargin::optim::TraceRecord],
    summary: serde_json::Value,
) -> Result<()> {
    write_atomic(path, |w| {
        for r in trace {
            serde_json::to_writer(&mut *w, r)?;
            writeln!(w)?;
        }
        serde_json::to_writer(&mut *w, &summary)?;
        writeln!(w)
    })?;
    Ok(())
}

fn predict(model_path: &Path, data: &Path, output: Option<&Path>) -> Result<()> {
    let kind = maxmargin::io::model_file::read_header(model_path)?.kind;
    let lines: Vec<String> = if kind == maxmargin::linear::MODEL_KIND {
        let model = LinearModel::load(model_path)?;
        let data = libsvm::read(data)?;
        model
            .predict_rows(&data.x)
            .iter()
            .map(ToString::to_string)
            .collect()
    } else {
        structured::predict(model_path, data)?
    };
    let write = |w: &mut dyn Write| -> std::io::Result<()> {
        for p in &lines {
            writeln!(w, "{p}")?;
        }
        Ok(())
    };
    match output {
        Some(path) => write_atomic(path, write)?,
        None => {
            let stdout = std::io::stdout();
            let mut lock = std::io::BufWriter::new(stdout.lock());
            write(&mut lock)
                .and_then(|()| lock.flush())
                .or_else(quiet_on_closed_pipe)
                .context("writing predictions to standard output")?;
        }
    }
    Ok(())
}

fn eval(model_path: &Path, data_path: &Path, lambda: Option<f64>, json: bool) -> Result<()> {
    if let Some(l) = lambda
        && !(l.is_finite() && l > 0.0)
    {
        bail!("--lambda must be positive and finite, got {l}");
    }
    let kind = maxmargin::io::model_file::read_header(model_path)?.kind;
    if kind != maxmargin::linear::MODEL_KIND {
        return structured::eval(model_path, data_path, lambda, json);
    }
    let model = LinearModel::load(model_path)?;
    let data = libsvm::read(data_path)?;
    let e = model.evaluate(&data, lambda)?;
    if json {
        out!("{}", serde_json::to_string(&e)?);
    } else {
        out!("accuracy   {:.4}  ({}/{})", e.accuracy, e.correct, e.n);
        out!("           predicted +  predicted -");
        out!("actual +   {:<11}  {}", e.true_positive, e.false_negative);
        out!("actual -   {:<11}  {}", e.false_positive, e.true_negative);
        out!("mean hinge {:.6}", e.mean_hinge);
        if let (Some(l), Some(o)) = (e.lambda, e.objective) {
            out!("objective  {o:.6}  (lambda {l:e})");
        }
    }
    Ok(())
}
