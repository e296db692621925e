//! The picture commands: `plot` (training curves from `train --trace` files) and `plot-boundary` (the
//! soft-margin figure of a two-feature binary model over its data).

use crate::plot::{BoundaryChart, LineChart, Series};
use anyhow::{Result, bail};
use maxmargin::core::vector::SparseRows;
use maxmargin::linear::DecisionModel;
use std::path::{Path, PathBuf};

/// What `plot --x` puts on the horizontal axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum XArg {
    /// Passes over the data (`epoch` in the trace).
    Passes,
    /// Seconds since training started.
    Seconds,
    /// Calls of the loss-augmented oracle (structured solvers).
    OracleCalls,
}

/// What `plot --y` puts on the vertical axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum YArg {
    /// The primal objective.
    Primal,
    /// The duality gap relative to the primal objective (a proven bound on the distance to the optimum).
    Gap,
}

/// A trace file: its evaluations and what its summary line says.
pub(crate) type Trace = maxmargin::side_files::TraceFile;

/// Reads a `train --trace` file: one JSON record per evaluation, then a summary line.
pub(crate) fn read_trace(path: &Path) -> Result<Trace> {
    Ok(maxmargin::side_files::read_trace(path)?)
}

/// The largest magnitude a figure draws: beyond it an axis's padded range overflows (a trace with an
/// objective of 1.7e308 beside 0 hung `plot`).
const PLOT_LIMIT: f64 = 1e100;

/// Points `plot-boundary` draws at the most; more are thinned evenly (1e6 points took 1.5 GB).
const MAX_BOUNDARY_POINTS: usize = 20_000;

fn plottable(v: f64) -> bool {
    v.is_finite() && v.abs() <= PLOT_LIMIT
}

/// The curve of one trace, named `name` in the legend, on the chosen axes; an error names `file` (and the
/// record's line, where the trace was read from one) when it lacks what an axis needs.
pub(crate) fn curve(trace: &Trace, (name, file): (&str, &str), x: XArg, y: YArg) -> Result<Series> {
    let mut points = Vec::with_capacity(trace.records.len());
    for (k, r) in trace.records.iter().enumerate() {
        let xv = match x {
            XArg::Passes => r.epoch,
            XArg::Seconds => r.seconds,
            XArg::OracleCalls => match r.oracle_calls {
                Some(c) => c as f64,
                None => bail!(
                    "{file}: the trace has no oracle calls (a binary solver's); use --x passes or seconds"
                ),
            },
        };
        let yv = match y {
            YArg::Primal => r.objective,
            YArg::Gap => match r.gap {
                Some(g) => g / r.objective.abs().max(f64::MIN_POSITIVE),
                None => continue,
            },
        };
        if !(plottable(xv) && plottable(yv)) {
            let at = trace.lines.get(k).map_or_else(
                || format!(": record {}", k + 1),
                |l| format!(":{l}:1: record"),
            );
            bail!(
                "{file}{at}: ({xv:e}, {yv:e}) cannot be drawn (values within ±{PLOT_LIMIT:e} can)"
            );
        }
        points.push((xv, yv));
    }
    if points.is_empty() {
        bail!("{file}: the trace has no duality gaps; use --y primal");
    }
    Ok(Series {
        name: name.to_string(),
        points,
    })
}

/// `plot`: several traces in one figure.
pub(crate) fn plot(
    traces: &[PathBuf],
    output: &Path,
    x: XArg,
    y: YArg,
    title: Option<String>,
) -> Result<()> {
    let mut series = Vec::new();
    let mut guides: Vec<(f64, String)> = Vec::new();
    for path in traces {
        let trace = read_trace(path)?;
        let name = path.file_stem().map_or_else(
            || path.display().to_string(),
            |s| s.to_string_lossy().into_owned(),
        );
        series.push(curve(&trace, (&name, &path.display().to_string()), x, y)?);
        if let (YArg::Gap, Some(t)) = (y, trace.tolerance)
            && !guides.iter().any(|g| g.0 == t)
        {
            guides.push((t, format!("tolerance {t:e}")));
        }
    }
    let (x_desc, log_x) = match x {
        XArg::Passes => ("passes over the data", true),
        XArg::Seconds => ("seconds", true),
        XArg::OracleCalls => ("oracle calls", true),
    };
    let positive = series.iter().flat_map(|s| &s.points).all(|p| p.1 > 0.0);
    let y_desc = match y {
        YArg::Primal => "primal objective",
        YArg::Gap => "duality gap / primal (relative)",
    };
    LineChart {
        title: title.unwrap_or_else(|| format!("{y_desc} against {x_desc}")),
        x_desc: x_desc.into(),
        y_desc: y_desc.into(),
        log_x,
        log_y: positive,
        series: &series,
        guides: &guides,
    }
    .write(output)?;
    note!("wrote {}", output.display());
    Ok(())
}

/// The two coordinates of each row (a missing feature is 0).
fn coordinates(x: &SparseRows) -> Vec<(f64, f64)> {
    x.rows()
        .map(|r| {
            let d = r.to_dense(2);
            (d[0], d[1])
        })
        .collect()
}

/// `f(x) = a·x1 + b·x2 + c` of a binary model on two features, read off its decision function (which
/// applies the model's scaling and bias, both affine).
fn affine(model: &maxmargin::LinearModel) -> Result<(f64, f64, f64)> {
    let probe = SparseRows::from_dense_rows(&[&[0.0, 0.0], &[1.0, 0.0], &[0.0, 1.0]])?;
    let v = model.decision_rows(&probe);
    Ok((v[1] - v[0], v[2] - v[0], v[0]))
}

/// `plot-boundary`: the soft-margin figure of a binary model trained on two features.
pub(crate) fn plot_boundary(model_path: &Path, data_path: &Path, output: &Path) -> Result<()> {
    let kind = maxmargin::io::model_file::read_header(model_path)?.kind;
    if kind != maxmargin::linear::MODEL_KIND && kind != maxmargin::linear::DECISION_KIND {
        bail!(
            "plot-boundary draws binary models; {} is a {kind} model",
            model_path.display()
        );
    }
    let decision = DecisionModel::load(model_path)?;
    let model = &decision.model;
    if model.is_nonlinear() {
        bail!(
            "plot-boundary draws a linear boundary and its margins; {} is a kernel model, whose boundary is curved",
            model_path.display()
        );
    }
    let data = crate::load::read_for_binary(data_path, model_path, model)?;
    let d = data.x.n_features().max(model.n_features);
    if d > 2 {
        bail!(
            "plot-boundary draws two-feature data; {} has {} features{}",
            data_path.display(),
            data.x.n_features(),
            if model.n_features > 2 {
                format!(" and the model {}", model.n_features)
            } else {
                String::new()
            }
        );
    }
    // A row the model scores NaN or ±∞ cannot be placed against the margins (it was silently not ringed).
    model.scores(&data)?;
    let [neg, pos] = model.labels;
    let mut points: Vec<(f64, f64, bool)> = coordinates(&data.x)
        .into_iter()
        .zip(&data.labels)
        .map(|((a, b), &l)| (a, b, l == pos))
        .collect();
    if let Some(i) = points
        .iter()
        .position(|p| !(plottable(p.0) && plottable(p.1)))
    {
        bail!(
            "{}:{}:1: features: ({:e}, {:e}) cannot be drawn (values within ±{PLOT_LIMIT:e} can)",
            data_path.display(),
            data.lines.get(i).copied().unwrap_or(i + 1),
            points[i].0,
            points[i].1
        );
    }
    if points.len() > MAX_BOUNDARY_POINTS {
        let every = points.len().div_ceil(MAX_BOUNDARY_POINTS);
        note!(
            "drawing every {every}th of {} rows (at most {MAX_BOUNDARY_POINTS} points)",
            points.len()
        );
        points = points.into_iter().step_by(every).collect();
    }
    BoundaryChart {
        title: format!(
            "{}: boundary, margins and violators on {}",
            model_path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            data_path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
        ),
        points: &points,
        affine: affine(model)?,
        cut: decision.cut(),
        names: [neg.to_string(), pos.to_string()],
    }
    .write(output)
}

/// The hinge `max(0, 1 − z)` and the 0-1 loss `1[z ≤ 0]` against the margin `z = y·f(x)`.
pub(crate) fn losses(output: &Path) -> Result<()> {
    let zs: Vec<f64> = (0..=100)
        .map(|i| -2.0 + 5.0 * f64::from(i) / 100.0)
        .collect();
    let hinge = zs
        .iter()
        .map(|&z| (z, maxmargin::core::hinge::hinge(z)))
        .collect();
    let series = [
        Series {
            name: "hinge max(0, 1 - z)".into(),
            points: hinge,
        },
        Series {
            name: "0-1 loss 1[z <= 0]".into(),
            points: vec![(-2.0, 1.0), (0.0, 1.0), (0.0, 0.0), (3.0, 0.0)],
        },
    ];
    LineChart {
        title: "The hinge bounds the 0-1 loss from above (z = y f(x), the margin)".into(),
        x_desc: "z".into(),
        y_desc: "loss".into(),
        log_x: false,
        log_y: false,
        series: &series,
        guides: &[],
    }
    .write(output)
}
