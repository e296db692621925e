//! The `maxmargin` command: train, evaluate, calibrate, compare and serve linear, logistic, kernel and structural
//! SVMs on LIBSVM, CSV, svm_hmm and CoNLL files.
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

mod args;
mod bench_predict;
mod binary;
mod compare;
mod convert;
mod cv_binary;
mod cv_structured;
mod decision;
mod demo;
mod figures;
mod graph;
mod groups;
mod inspect;
mod latent;
mod load;
#[cfg(test)]
mod man;
mod outputs;
mod plot;
mod predict;
mod progress;
mod ranks;
mod report;
mod struct_report;
mod structured;
mod tagger;

use anyhow::{Context, Result, bail};
use args::*;
use binary::{eval, train_binary};
use clap::{CommandFactory, FromArgMatches};
use cv_binary::cv;
use maxmargin::core::scale::Scaling;
use maxmargin::io::atomic::write_atomic;
use maxmargin::io::libsvm;
use maxmargin::linear::FitReport;
use maxmargin::prelude::*;
use predict::predict;
use std::io::Write;
use std::path::{Path, PathBuf};

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

/// On SIGINT, SIGTERM or SIGHUP: remove the temporary files of writes in progress (a model or a checkpoint
/// half-written), say so, and exit with 128 + the signal's number, as a shell reports a killed command. The
/// last complete checkpoint, if any, stays for `--resume`.
fn remove_temporaries_on_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            let held = maxmargin::io::atomic::remove_in_flight();
            note!(
                "interrupted by signal {signal}: {} partial file(s) removed, none left",
                held.len()
            );
            std::process::exit(128 + signal);
        }
    });
}

fn main() {
    remove_temporaries_on_signals();
    // A negative value (`-c -1`) is taken as the value and refused by its own range check, naming the flag,
    // rather than as an unknown flag.
    let command = Cli::command().mut_subcommands(|c| c.allow_negative_numbers(true));
    let cli = Cli::from_arg_matches(&command.get_matches()).unwrap_or_else(|e| e.exit());
    match run(cli) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            note!("error: {}", one_line(&e));
            std::process::exit(1);
        }
    }
}

/// An error as one clear line: its chain of causes joined by `: `, leaving out a cause whose text the line
/// already ends with (errors that print their source themselves would otherwise say it twice).
fn one_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.is_empty() {
            line = text;
        } else if !line.ends_with(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
    }
    line
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
    outputs::check(&cli.command)?;
    // The global --label-column means something only where CSV data is read.
    let reads_no_csv = match &cli.command {
        Command::Demo { .. } => Some("demo (it trains on embedded data)"),
        Command::Plot { .. } => Some("plot (it reads trace files)"),
        Command::Convert { .. } => Some("convert (it reads a model)"),
        _ => None,
    };
    if let (Some(command), Some(_)) = (reads_no_csv, &cli.label_column) {
        bail!("--label-column applies to commands that read CSV data, not to {command}");
    }
    let csv_format = match &cli.command {
        Command::Train(cmd) => cmd.format,
        Command::Predict { format, .. } | Command::Eval { format, .. } => *format,
        Command::Cv(cmd) => cmd.format,
        _ => None,
    };
    crate::load::choose_csv(
        csv_format == Some(FormatArg::Csv),
        csv_format.is_some(),
        cli.label_column.clone(),
    );
    if let Command::Train(cmd) = &cli.command
        && cmd.opts.structural.order.is_some()
        && cmd.task != TaskArg::Chain
    {
        bail!(
            "--order applies to --task chain (the order of its tag transitions), not --task {}",
            format!("{:?}", cmd.task).to_lowercase()
        );
    }
    if ranks::launched().is_some_and(|p| p > 1) {
        return match &cli.command {
            Command::Train(cmd) => {
                refuse(
                    &[
                        (
                            "--latent-subclasses",
                            cmd.opts.structural.latent_subclasses.is_some(),
                        ),
                        (
                            "--latent-states",
                            cmd.opts.structural.latent_states.is_some(),
                        ),
                        ("--min-count", cmd.opts.structural.min_count.is_some()),
                        ("--order 2", cmd.opts.structural.second_order()),
                    ],
                    "is not built for training over MPI ranks; run it as one process",
                )?;
                ranks::train(cmd)
            }
            _ => bail!("only train runs over several MPI ranks; run this command as one process"),
        };
    }
    match &cli.command {
        Command::Train(cmd) => size_thread_pool(cmd.opts.threads)?,
        Command::Cv(cmd) => size_thread_pool(cmd.opts.threads)?,
        Command::Compare(cmd) => size_thread_pool(cmd.threads)?,
        _ => {}
    }
    match cli.command {
        Command::Train(cmd) => train(&cmd),
        Command::Predict {
            model,
            data,
            output,
            scores,
            json,
            probability,
            format,
            inference,
        } => crate::load::check_format(&model, format)
            .and_then(|()| crate::graph::overriding(&model, inference))
            .and_then(|inference| {
                predict(
                    &model,
                    &data,
                    output.as_deref(),
                    (scores, json, probability, inference),
                )
            })
            .map(|()| 0),
        Command::Eval {
            model,
            data,
            lambda,
            json,
            group_by,
            groups,
            format,
            pos_label,
            inference,
        } => {
            crate::load::check_format(&model, format)?;
            let inference = crate::graph::overriding(&model, inference)?;
            let grouping = groups::from_flags(group_by, groups.as_deref());
            let flags = (lambda, json, pos_label, inference);
            eval(&model, &data, grouping.as_ref(), flags).map(|()| 0)
        }
        Command::Cv(cmd) => cv(&cmd).map(|converged| {
            if cmd.require_convergence && !converged {
                NOT_CONVERGED
            } else {
                0
            }
        }),
        Command::Demo { out } => demo::run(&out).map(|()| 0),
        Command::Plot {
            traces,
            output,
            x,
            y,
            title,
        } => figures::plot(&traces, &output, x, y, title).map(|()| 0),
        Command::Cache { data, output } => {
            let rows = crate::load::read_labelled(&data)?;
            maxmargin::io::cache::write(&output, &rows)?;
            let size = std::fs::metadata(&output).map(|m| m.len()).unwrap_or(0);
            note!(
                "cached {} rows, {} features, {} nonzeros of {} in {} ({size} bytes)",
                rows.n_samples(),
                rows.x.n_features(),
                rows.x.nnz(),
                data.display(),
                output.display()
            );
            Ok(0)
        }
        Command::Convert { input, output, to } => convert::run(&input, &output, to).map(|()| 0),
        Command::Inspect {
            model,
            data,
            nearest,
            top_features,
            json,
        } => inspect::run(&model, &data, nearest, top_features, json).map(|()| 0),
        Command::Compare(cmd) => compare::run(&cmd).map(|()| 0),
        Command::BenchPredict { model, data, json } => {
            bench_predict::run(&model, &data, json).map(|()| 0)
        }
        Command::PlotBoundary {
            model,
            data,
            output,
        } => {
            figures::plot_boundary(&model, &data, &output)?;
            note!("wrote {}", output.display());
            Ok(0)
        }
        Command::Calibrate {
            model,
            data,
            output,
            method,
            pos_label,
        } => decision::calibrate(&model, &data, &output, method, pos_label).map(|()| 0),
        Command::Threshold {
            model,
            data,
            output,
            cost_fn,
            cost_fp,
            max_flag_rate,
            min_recall,
            at,
            at_score,
            pos_label,
        } => {
            use maxmargin::linear::ThresholdRule as R;
            let rule = match (
                cost_fn.zip(cost_fp),
                max_flag_rate,
                min_recall,
                at,
                at_score,
            ) {
                (Some((a, b)), None, None, None, None) => R::Cost {
                    false_negative: a,
                    false_positive: b,
                },
                (None, Some(r), None, None, None) => R::MaxFlagRate(r),
                (None, None, Some(r), None, None) => R::MinRecall(r),
                (None, None, None, Some(p), None) => R::AtProbability(p),
                (None, None, None, None, Some(s)) => R::AtScore(s),
                _ => bail!(
                    "threshold needs one rule: --cost-fn A --cost-fp B, --max-flag-rate R, --min-recall R, --at P \
                     or --at-score S"
                ),
            };
            decision::threshold(&model, &data, &output, rule, pos_label).map(|()| 0)
        }
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

/// `train --stream`: the data read from disk pass by pass (binary: dcd, pegasos, subgradient; multiclass:
/// ssg); returns whether the run converged.
fn streamed(cmd: &TrainCmd, format: FormatArg) -> Result<bool> {
    let multiclass = cmd.task == TaskArg::Multiclass;
    let what = if !(multiclass || cmd.task == TaskArg::Binary) {
        Some(format!(
            "--task {}",
            format!("{:?}", cmd.task).to_lowercase()
        ))
    } else if format != FormatArg::Libsvm || crate::load::is_csv(&cmd.data) {
        Some(format!("{}, which is not LIBSVM data", cmd.data.display()))
    } else {
        None
    };
    if let Some(what) = what {
        bail!(
            "--stream applies to --task binary (dcd, pegasos, subgradient) or multiclass (ssg) on LIBSVM data, \
             not to {what}"
        );
    }
    let args = &cmd.opts;
    refuse(
        &[
            ("--threads", args.threads.is_some()),
            ("--trace-weights", args.trace_weights),
            ("--sample-weights", args.sample_weights.is_some()),
            ("--warm-start", args.warm_start.is_some()),
        ],
        "does not apply to --stream (one thread reads the rows in passes; nothing per row is kept in memory)",
    )?;
    let dir = match &cmd.stream_dir {
        Some(dir) if !dir.is_dir() => bail!(
            "--stream-dir {}: not a directory that exists (the parsed rows are written there)",
            dir.display()
        ),
        Some(dir) => dir.clone(),
        None => match cmd.output.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        },
    };
    if multiclass {
        structured::train_streamed(cmd, &dir)
    } else {
        binary::train_streamed(cmd, &dir)
    }
}

/// Whether line `line` of `data` (whose label did not parse) reads as CoNLL text: two or more columns and no
/// `index:value` feature. Only the first 64 KiB are read, through gzip when the file is compressed.
fn looks_like_conll(data: &Path, line: usize) -> bool {
    use std::io::{BufRead, Read};
    let Ok(file) = maxmargin::io::open_maybe_gz(data) else {
        return false;
    };
    let reader = std::io::BufReader::new(file.take(1 << 16));
    let Some(Ok(text)) = reader.lines().nth(line.saturating_sub(1)) else {
        return false;
    };
    let columns: Vec<&str> = text.split_ascii_whitespace().collect();
    let feature = |t: &str| {
        t.split_once(':')
            .is_some_and(|(i, v)| i.parse::<u64>().is_ok() && v.parse::<f64>().is_ok())
    };
    columns.len() >= 2 && !columns.iter().any(|t| feature(t))
}

/// A training error that arose from the values of `data` rather than a place in it (the objective
/// overflowing) names the file, as errors at a line do.
fn on_data(e: anyhow::Error, data: &Path) -> anyhow::Error {
    let overflowed = e.chain().any(|c| {
        matches!(
            c.downcast_ref::<maxmargin::Error>(),
            Some(maxmargin::Error::Optim(
                maxmargin::optim::OptimError::NonFinite { .. }
            ))
        ) || matches!(
            c.downcast_ref::<maxmargin::optim::OptimError>(),
            Some(maxmargin::optim::OptimError::NonFinite { .. })
        )
    });
    use maxmargin::io::IoError;
    // The data errors in the chain, raised by io itself or carried by the facade's error.
    let io_errors = || {
        e.chain().filter_map(|c| {
            c.downcast_ref::<IoError>()
                .or_else(|| match c.downcast_ref() {
                    Some(maxmargin::Error::Io(io)) => Some(io),
                    _ => None,
                })
        })
    };
    let many_classes = io_errors().any(
        |io| matches!(io, IoError::NotBinary { found, at_least, .. } if *found > 2 || *at_least),
    );
    let label_line = io_errors().find_map(|io| match io {
        IoError::Parse {
            line,
            column: 1,
            field: "label",
            ..
        } => Some(*line),
        _ => None,
    });
    if overflowed {
        anyhow::anyhow!("{}: {e}", data.display())
    } else if label_line.is_some_and(|l| looks_like_conll(data, l)) {
        anyhow::anyhow!(
            "{}; the file looks like CoNLL columns (a token and its tags on each line, no index:value \
             features): train a tagger with --task chain --format conll",
            one_line(&e)
        )
    } else if many_classes {
        anyhow::anyhow!(
            "{}; train more than two classes with --task multiclass (or --task multilabel for sets of \
             labels)",
            one_line(&e)
        )
    } else {
        e
    }
}

fn train(cmd: &TrainCmd) -> Result<i32> {
    let (data_path, output, args) = (&cmd.data, &cmd.output, &cmd.opts);
    let format = cmd.format.unwrap_or(FormatArg::of(cmd.task));
    let task_name = format!("{:?}", cmd.task).to_lowercase();
    if format == FormatArg::Conll && cmd.task != TaskArg::Chain {
        bail!("--format conll applies to --task chain (a tag per token), not --task {task_name}");
    }
    let csv = format == FormatArg::Csv || crate::load::is_csv(data_path);
    if csv && !matches!(cmd.task, TaskArg::Binary | TaskArg::Multiclass) {
        bail!(
            "CSV data (--format csv, or a .csv file) applies to --task binary or multiclass, not --task {task_name}"
        );
    }
    if format != FormatArg::Conll && format != FormatArg::Csv && format != FormatArg::of(cmd.task) {
        bail!(
            "--task {task_name} reads {} data{}, not --format {}",
            FormatArg::of(cmd.task).name(),
            if cmd.task == TaskArg::Chain {
                " or conll"
            } else {
                ""
            },
            format.name()
        );
    }
    if cmd.template.is_some() && format != FormatArg::Conll {
        bail!("--template applies to --format conll (feature templates over CoNLL columns)");
    }
    if cmd.opts.structural.second_order() && cmd.opts.structural.latent_states.is_some() {
        bail!(
            "--order 2 with --latent-states is not built: latent states are how a first-order chain \
             remembers more than the previous tag; choose one"
        );
    }
    if cmd.opts.structural.min_count.is_some() && format != FormatArg::Conll {
        bail!("--min-count applies to --format conll (the tagger's feature dictionary)");
    }
    if cmd.opts.structural.latent_states.is_some()
        && (cmd.stream
            || !matches!(format, FormatArg::SvmHmm | FormatArg::Conll)
            || cmd.task != TaskArg::Chain)
    {
        bail!(
            "--latent-states applies to --task chain in memory on svm_hmm or CoNLL files, not to {}",
            if cmd.stream {
                "--stream".to_string()
            } else {
                format!("--task {task_name} --format {}", format.name())
            }
        );
    }
    if cmd.opts.structural.latent_subclasses.is_some()
        && (cmd.stream || format == FormatArg::Conll || cmd.task != TaskArg::Multiclass)
    {
        bail!(
            "--latent-subclasses applies to --task multiclass in memory (LIBSVM or CSV rows), not to {}",
            if cmd.stream {
                "--stream".to_string()
            } else {
                format!("--task {task_name} --format {}", format.name())
            }
        );
    }
    if cmd.stream_dir.is_some() && !cmd.stream {
        bail!("--stream-dir applies to --stream");
    }
    if cmd.task != TaskArg::Graph {
        refuse(
            &[
                ("--inference", cmd.graph.inference.is_some()),
                ("--directed", cmd.graph.directed),
                ("--labels", cmd.graph.labels.is_some()),
                ("--relaxed", cmd.graph.relaxed),
            ],
            &format!("applies to --task graph, not --task {task_name}"),
        )?;
    } else if cmd.stream {
        bail!(
            "--stream applies to --task binary and multiclass; --task graph reads its graphs into memory"
        );
    }
    let converged = if cmd.stream {
        streamed(cmd, format)
    } else if format == FormatArg::Conll {
        tagger::train(data_path, output, cmd.template.as_deref(), args)
    } else if cmd.task == TaskArg::Binary {
        train_binary(data_path, output, args)
    } else if cmd.task == TaskArg::Graph {
        graph::train(cmd)
    } else {
        structured::train(data_path, output, cmd.task, args)
    }
    .map_err(|e| on_data(e, data_path))?;
    Ok(if cmd.require_convergence && !converged {
        NOT_CONVERGED
    } else {
        0
    })
}
