//! Before any work: the files a command will write are checked against each other and against the files it
//! reads (`train D -o D`, `-o m.model --trace m.model`, `convert M -o M`, `plot T -o T` once destroyed a file
//! or left a trace in the model's place), and each must be a file in a directory that exists.

use crate::args::Command;
use anyhow::{Result, bail};
use std::path::{Path, PathBuf};

/// What `command` reads and writes, each named by the flag (or argument) that gave it.
type Named<'a> = Vec<(&'static str, &'a Path)>;

fn files(command: &Command) -> (Named<'_>, Named<'_>) {
    let (mut inputs, mut outputs): (Named<'_>, Named<'_>) = (Vec::new(), Vec::new());
    match command {
        Command::Train(cmd) => {
            let a = &cmd.opts;
            inputs.push(("DATA", &cmd.data));
            // A template may be a built-in's name: it is an input where it is a file.
            let template = cmd
                .template
                .as_deref()
                .map(Path::new)
                .filter(|p| p.is_file());
            let optional = [
                ("--template", template),
                ("--warm-start", a.warm_start.as_deref()),
                ("--sample-weights", a.sample_weights.as_deref()),
            ];
            inputs.extend(optional.into_iter().filter_map(|(f, p)| Some((f, p?))));
            // --resume and --checkpoint may name one file: the run resumes from it and keeps saving there.
            outputs.push(("-o", &cmd.output));
            outputs.extend(a.trace.as_deref().map(|p| ("--trace", p)));
            outputs.extend(a.checkpoint.as_deref().map(|p| ("--checkpoint", p)));
            if let Some(r) = a.resume.as_deref() {
                inputs.push(("--resume", r));
            }
        }
        Command::Predict {
            model,
            data,
            output,
            ..
        } => {
            inputs.extend([("MODEL", model.as_path()), ("DATA", data.as_path())]);
            outputs.extend(output.as_deref().map(|p| ("-o", p)));
        }
        Command::Compare(cmd) => {
            inputs.extend([("TRAIN", cmd.train.as_path()), ("DEV", cmd.dev.as_path())]);
            outputs.extend(cmd.plot.as_deref().map(|p| ("--plot", p)));
        }
        Command::Cv(cmd) => {
            inputs.push(("DATA", &cmd.data));
            outputs.extend(cmd.output.as_deref().map(|p| ("-o", p)));
        }
        Command::Plot { traces, output, .. } => {
            inputs.extend(traces.iter().map(|t| ("TRACE", t.as_path())));
            outputs.push(("-o", output));
        }
        Command::Cache { data, output } => {
            inputs.push(("DATA", data));
            outputs.push(("-o", output));
        }
        Command::Convert { input, output, .. } => {
            inputs.push(("INPUT", input));
            outputs.push(("-o", output));
        }
        Command::PlotBoundary {
            model,
            data,
            output,
        }
        | Command::Calibrate {
            model,
            data,
            output,
            ..
        }
        | Command::Threshold {
            model,
            data,
            output,
            ..
        } => {
            inputs.extend([("MODEL", model.as_path()), ("DATA", data.as_path())]);
            outputs.push(("-o", output));
        }
        Command::Eval { .. }
        | Command::Demo { .. }
        | Command::Inspect { .. }
        | Command::BenchPredict { .. } => {}
    }
    (inputs, outputs)
}

/// Where `path` is (or would be) on disk: the canonical path of an existing file, else its directory's
/// canonical path joined with its name. `None` for standard input/output (`-`) and for what is not a regular
/// file or a path to one (`/dev/null` may stand for several outputs).
fn place(path: &Path) -> Option<PathBuf> {
    if path.as_os_str() == "-" {
        return None;
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => path.canonicalize().ok(),
        Ok(_) => None,
        Err(_) => {
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            Some(dir.canonicalize().ok()?.join(path.file_name()?))
        }
    }
}

/// Refuses, before any work, an output that is a directory or in a directory that does not exist, two
/// outputs that name one file, an output that names one of the command's inputs, and a figure whose name
/// asks for a format other than SVG or PNG.
///
/// # Errors
/// Naming the flags and the file.
pub(crate) fn check(command: &Command) -> Result<()> {
    let (inputs, outputs) = files(command);
    let pictures: Option<&Path> = match command {
        Command::Plot { output, .. } | Command::PlotBoundary { output, .. } => Some(output),
        Command::Compare(cmd) => cmd.plot.as_deref(),
        _ => None,
    };
    // A figure is SVG, or PNG for a .png name: a .jpg or .pdf name would get SVG bytes under it.
    if let Some(path) = pictures {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        if let Some(ext) = ext.filter(|e| e != "svg" && e != "png") {
            bail!(
                "{}: figures are written as SVG (.svg) or PNG (.png), not .{ext}",
                path.display()
            );
        }
    }
    // `-` is standard input once (two inputs cannot both read it: the first would leave the second empty),
    // and standard output only for predict's labels; elsewhere it would be a file named `-`.
    let stdin: Vec<&str> = inputs
        .iter()
        .filter(|(_, p)| p.as_os_str() == "-")
        .map(|(f, _)| *f)
        .collect();
    if stdin.len() > 1 {
        bail!(
            "{} name standard input (-) together: one input at most can read it",
            stdin.join(" and ")
        );
    }
    if !matches!(command, Command::Predict { .. })
        && let Some((flag, _)) = outputs.iter().find(|(_, p)| p.as_os_str() == "-")
    {
        bail!("{flag} -: standard output takes predict's labels only; name a file to write");
    }
    for (flag, path) in &outputs {
        if path.is_dir() {
            bail!(
                "{flag} {}: a directory, not a regular file; name a file to write",
                path.display()
            );
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if path.as_os_str() != "-" && !dir.is_dir() {
            bail!(
                "{flag} {}: its directory {} does not exist",
                path.display(),
                dir.display()
            );
        }
    }
    for (i, (flag, path)) in outputs.iter().enumerate() {
        let Some(here) = place(path) else { continue };
        if let Some((other, _)) = outputs[..i]
            .iter()
            .find(|(_, p)| place(p).as_ref() == Some(&here))
        {
            bail!(
                "{other} and {flag} both name {}: give each output its own file",
                path.display()
            );
        }
        if let Some((input, _)) = inputs.iter().find(|(input, p)| {
            place(p).as_ref() == Some(&here) && (*flag, *input) != ("--checkpoint", "--resume")
        }) {
            bail!(
                "{flag} {} is the command's {input}: writing it would replace what is read; give the output \
                 another name",
                path.display()
            );
        }
    }
    Ok(())
}
