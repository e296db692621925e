//! The convergence bench's table at equal precision (#29): each program's loosest setting that ends within
//! `PRECISION` of the optimum, then the two timed side by side (see the bench's header).

use super::{liblinear_binary_objective, timed, versus};
use maxmargin::LinearModel;
use maxmargin::io::libsvm;
use maxmargin_benches::{command, s};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

/// Time to the same objective precision: each program's loosest setting (ours `--gap`, LIBLINEAR's `-e`)
/// whose run ends within `precision` of the optimum (relative, against a tight run's certified lower
/// bound), then both settings timed side by side.
#[derive(Debug, Serialize)]
pub(super) struct PrecisionRow {
    name: String,
    precision: f64,
    ours_setting: Option<String>,
    ours_seconds: Option<f64>,
    ours_excess: Option<f64>,
    liblinear_setting: Option<String>,
    liblinear_seconds: Option<f64>,
    liblinear_excess: Option<f64>,
    ratio: Option<f64>,
}

/// Our two knobs: the certified relative gap (`--gap`) and LIBLINEAR's own projected-gradient tolerance
/// (`--epsilon`, under the default 1% gap target).
pub(super) const OUR_GAPS: [&str; 6] = ["1e-2", "3e-3", "1e-3", "3e-4", "1e-4", "3e-5"];
pub(super) const OUR_EPSILONS: [&str; 7] = ["0.1", "0.03", "0.01", "3e-3", "1e-3", "3e-4", "1e-4"];
const LIBLINEAR_LADDER: [&str; 9] = [
    "0.1", "0.03", "0.01", "3e-3", "1e-3", "3e-4", "1e-4", "3e-5", "1e-5",
];

/// The first setting of `ladder` whose run (`command(setting)`, then `objective()`) ends within
/// `precision` of `optimum`, with that run's relative excess.
fn loosest(
    ladder: &[&str],
    command: impl Fn(&str) -> Command,
    objective: impl Fn() -> Option<f64>,
    optimum: f64,
    precision: f64,
) -> Option<(String, f64)> {
    ladder.iter().find_map(|&setting| {
        timed(&mut command(setting));
        let excess = (objective()? - optimum) / optimum.abs();
        (excess <= precision).then(|| (setting.to_string(), excess))
    })
}

/// What the rows of a set share: the precision asked, the optimum (a tight run's certified lower bound) and
/// LIBLINEAR's loosest `-e` that reaches the precision with its excess (found once per set).
pub(super) struct Reference {
    precision: f64,
    optimum: f64,
    liblinear: Option<(String, f64)>,
}

pub(super) fn reference(name: &str, (file, dir): (&Path, &Path), have: bool) -> Reference {
    let precision = std::env::var("PRECISION")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(1e-4);
    let tight = dir.join(format!("{name}.tight.json"));
    let st = Command::new(command())
        .args(["train", &s(file), "-o", &s(&tight), "-q", "--solver", "dcd"])
        .args(["-c", "1", "--bias", "none", "--epsilon", "1e-6"])
        .status()
        .unwrap();
    assert!(st.success());
    let t = LinearModel::load(&tight).unwrap();
    let optimum = t.training.objective - t.training.gap.unwrap_or(0.0);
    let theirs_model = dir.join(name);
    let data = libsvm::read(file).unwrap();
    let their_objective = || liblinear_binary_objective(&theirs_model, &data, t.lambda);
    let liblinear = have
        .then(|| {
            let theirs = |e: &str| liblinear_command(e, file, &theirs_model);
            loosest(
                &LIBLINEAR_LADDER,
                theirs,
                their_objective,
                optimum,
                precision,
            )
        })
        .flatten();
    Reference {
        precision,
        optimum,
        liblinear,
    }
}

/// `liblinear-train -s 3 -c 1 -e E` (no bias) on `file`, its model to `model`.
fn liblinear_command(e: &str, file: &Path, model: &Path) -> Command {
    let mut c = Command::new("liblinear-train");
    c.args(["-q", "-s", "3", "-c", "1", "-e", e, &s(file), &s(model)]);
    c
}

pub(super) fn precision_row(
    name: &str,
    (file, dir): (&Path, &Path),
    r: &Reference,
    threads: &str,
    (knob, ladder): (&str, &[&str]),
) -> PrecisionRow {
    let (precision, optimum) = (r.precision, r.optimum);
    let ours_model = dir.join(format!("{name}.p.json"));
    let ours = |value: &str| {
        let mut c = Command::new(command());
        c.args([
            "train",
            &s(file),
            "-o",
            &s(&ours_model),
            "-q",
            "--solver",
            "dcd",
        ])
        .args([
            "-c",
            "1",
            "--bias",
            "none",
            knob,
            value,
            "--threads",
            threads,
        ]);
        if threads != "1" {
            c.args(["--blocks", threads]);
        }
        c
    };
    let theirs_model = dir.join(name);
    let our_objective = || Some(LinearModel::load(&ours_model).ok()?.training.objective);
    let mine = loosest(ladder, ours, our_objective, optimum, precision);
    let other = r.liblinear.clone();
    let (mut a, mut b) = (
        mine.as_ref().map(|(g, _)| ours(g)),
        other
            .as_ref()
            .map(|(e, _)| liblinear_command(e, file, &theirs_model)),
    );
    let (ours_seconds, liblinear_seconds) = match a.as_mut() {
        Some(a) => {
            let (x, y) = versus(a, b.as_mut());
            (Some(x), y)
        }
        None => (None, b.as_mut().map(|b| versus(b, None).0)),
    };
    let blocks = if threads == "1" {
        String::new()
    } else {
        format!(", --threads {threads} --blocks {threads}")
    };
    PrecisionRow {
        name: format!("{name}{blocks}"),
        precision,
        ours_setting: mine.as_ref().map(|(g, _)| format!("{knob} {g}")),
        ours_seconds,
        ours_excess: mine.map(|(_, e)| e),
        liblinear_setting: other.as_ref().map(|(e, _)| format!("-e {e}")),
        liblinear_seconds,
        liblinear_excess: other.map(|(_, e)| e),
        ratio: ours_seconds.zip(liblinear_seconds).map(|(o, l)| o / l),
    }
}

pub(super) fn precision_table(rows: &[PrecisionRow]) -> String {
    let mut md = String::from(
        "\n| set | precision | ours | ours (s) | ours above the optimum | LIBLINEAR -s 3 | LIBLINEAR (s) | its excess | ratio |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    let f = |v: Option<f64>, p: usize| v.map_or("–".into(), |v| format!("{v:.p$}"));
    let e = |v: Option<f64>| v.map_or("–".into(), |v| format!("{v:.1e}"));
    for r in rows {
        let _ = writeln!(
            md,
            "| {} | {:.0e} | {} | {} | {} | {} | {} | {} | {} |",
            r.name,
            r.precision,
            r.ours_setting.as_deref().unwrap_or("none reached it"),
            f(r.ours_seconds, 3),
            e(r.ours_excess),
            r.liblinear_setting.as_deref().unwrap_or("–"),
            f(r.liblinear_seconds, 3),
            e(r.liblinear_excess),
            f(r.ratio, 2),
        );
    }
    md
}
