//! `compare TRAIN DEV`: one row per model family (see [`maxmargin::compare`]), a line saying which wins on
//! what, and optionally the AUC-against-latency picture and the calibrated models.

use crate::args::CompareCmd;
use anyhow::{Context, Result};
use maxmargin::compare::{CompareParams, Comparison, Family};

pub(crate) fn run(cmd: &CompareCmd) -> Result<()> {
    let families = cmd
        .families
        .iter()
        .map(|f| f.trim().parse::<Family>())
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(dir) = &cmd.out_dir
        && !dir.is_dir()
    {
        anyhow::bail!("--out-dir {}: not a directory", dir.display());
    }
    // A kernel flag with no family to apply it to would be silently ignored.
    let uses = |wanted: &[Family]| families.iter().any(|f| wanted.contains(f));
    if cmd.gamma_grid.is_some() && !uses(&[Family::Rbf, Family::Nystroem, Family::Rff]) {
        anyhow::bail!(
            "--gamma-grid applies to the rbf, nystroem and rff families, and --families has none of them"
        );
    }
    if cmd.components.is_some() && !uses(&[Family::Nystroem, Family::Rff]) {
        anyhow::bail!(
            "--components applies to the nystroem and rff families, and --families has neither"
        );
    }
    let defaults = CompareParams::default();
    let params = CompareParams {
        cs: cmd.c_grid.clone(),
        gamma_factors: cmd
            .gamma_grid
            .clone()
            .unwrap_or(defaults.gamma_factors.clone()),
        folds: cmd.folds,
        components: cmd.components.unwrap_or(defaults.components),
        scale: cmd.scale.into(),
        seed: cmd.seed,
        threads: cmd.threads,
        families,
        ..defaults
    };
    params.check()?;
    let train = crate::load::read_labelled(&cmd.train)?;
    let dev = crate::load::read_labelled(&cmd.dev)?;
    // Each family is fitted on the training features: the development rows' others are ignored, as every
    // command that scores rows with a model says.
    crate::load::warn_beyond(
        dev.x.rows().map(|r| r.indices()),
        train.x.n_features(),
        &cmd.dev,
    );
    let shared = rows_also_in(&dev, &train);
    // A few repeats happen in data of discrete features; a tenth or more is a file given twice or a split
    // that leaked.
    if shared > 0 && shared * 10 >= dev.labels.len() {
        note!(
            "warning: {shared} of the {} development rows of {} are also training rows of {} (same label and \
             features): their scores are optimistic and the comparison flatters the families that fit the \
             training rows closest; use development rows that training never saw",
            dev.labels.len(),
            cmd.dev.display(),
            cmd.train.display()
        );
    }
    let result = maxmargin::compare::compare(&train, &dev, &params)?;
    for r in result.families.iter().filter(|r| !r.converged) {
        note!(
            "warning: {}'s final fit stopped short of its certified optimum (C {}); its row is measured \
             all the same",
            r.family,
            r.c
        );
    }
    if let Some(dir) = &cmd.out_dir {
        for r in &result.families {
            if let Some(m) = &r.model {
                let path = dir.join(format!("{}.model", r.family));
                m.save(&path)?;
                note!("saved {}", path.display());
            }
        }
    }
    if let Some(path) = &cmd.plot {
        plot(&result, path)?;
        note!("wrote {}", path.display());
    }
    if cmd.json {
        out!("{}", serde_json::to_string_pretty(&result)?);
        return Ok(());
    }
    print_table(&result, cmd)
}

fn opt(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.4}"))
}

fn bytes(b: u64) -> String {
    match b {
        b if b >= 1 << 20 => format!("{:.1} MB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} kB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

fn print_table(c: &Comparison, cmd: &CompareCmd) -> Result<()> {
    out!(
        "{} training rows of {} (C{} chosen by {}-fold cross-validation on them, by roc auc); {} development \
         rows of {}: {} calibrate (platt), {} measure",
        c.train_rows,
        cmd.train.display(),
        if c.families.iter().any(|f| f.gamma.is_some()) {
            " and gamma"
        } else {
            ""
        },
        cmd.folds,
        c.calibration_rows + c.evaluation_rows,
        cmd.dev.display(),
        c.calibration_rows,
        c.evaluation_rows
    );
    out!(
        "{:<9} {:>7} {:>10} {:>8} {:>8} {:>8} {:>8} {:>9} {:>10} {:>10} {:>9}",
        "family",
        "C",
        "gamma",
        "roc_auc",
        "avg_prec",
        "brier",
        "accuracy",
        "fit_s",
        "p99_us",
        "rows/s",
        "bytes"
    );
    for r in &c.families {
        out!(
            "{:<9} {:>7} {:>10} {:>8} {:>8} {:>8} {:>8.4} {:>9.3} {:>10.2} {:>10.0} {:>9}",
            r.family.name(),
            r.c,
            r.gamma.map_or("-".into(), |g| format!("{g:.3e}")),
            opt(r.roc_auc),
            opt(r.average_precision),
            opt(r.brier),
            r.accuracy,
            r.fit_seconds,
            r.speed.p99_us,
            r.speed.rows_per_second,
            bytes(r.model_bytes)
        );
    }
    let wins: Vec<String> = c
        .wins
        .iter()
        .map(|w| {
            let value = match w.measure.as_str() {
                "model_bytes" => bytes(w.value as u64),
                "p99_us" => format!("{:.2} us", w.value),
                "fit_seconds" => format!("{:.3} s", w.value),
                _ => format!("{:.4}", w.value),
            };
            format!("{} {} ({value})", w.measure, w.family)
        })
        .collect();
    out!("wins: {}", wins.join("; "));
    if let Some(own) = c
        .families
        .iter()
        .find_map(|f| f.own_brier.map(|b| (f.family, b)))
    {
        out!(
            "{}'s own probabilities (no calibration) have brier {:.4} on the same rows",
            own.0,
            own.1
        );
    }
    out!(
        "a margin is not a probability: brier is after calibration on the other half of {}; choose on \
         development data only, then measure the chosen family once on the sealed test file",
        cmd.dev.display()
    );
    Ok(())
}

fn plot(c: &Comparison, path: &std::path::Path) -> Result<()> {
    let series: Vec<crate::plot::Series> = c
        .families
        .iter()
        .filter_map(|f| {
            Some(crate::plot::Series {
                name: f.family.name().into(),
                points: vec![(f.speed.p99_us.max(1e-3), f.roc_auc?)],
            })
        })
        .collect();
    crate::plot::LineChart {
        title: "ROC AUC against the latency of one row".into(),
        x_desc: "p99 latency of one row (microseconds, log scale)".into(),
        y_desc: "ROC AUC on development rows".into(),
        log_x: true,
        log_y: false,
        series: &series,
        guides: &[],
    }
    .write(path)
    .with_context(|| format!("drawing {}", path.display()))
}

/// How many rows of `dev` (label and features, to the bit) are rows of `train` too. Rows are indexed by
/// their hash ([`maxmargin::inputs::row_hash`]), and a hash that matches is compared in full, so the memory
/// is a word a training row.
fn rows_also_in(
    dev: &maxmargin::io::libsvm::LabeledData,
    train: &maxmargin::io::libsvm::LabeledData,
) -> usize {
    type Data = maxmargin::io::libsvm::LabeledData;
    let hash = |d: &Data, i: usize| maxmargin::inputs::row_hash(d.labels[i], d.x.row(i));
    let same = |a: &Data, i: usize, b: &Data, j: usize| {
        let (r, s) = (a.x.row(i), b.x.row(j));
        a.labels[i].to_bits() == b.labels[j].to_bits()
            && r.indices() == s.indices()
            && r.values()
                .iter()
                .map(|v| v.to_bits())
                .eq(s.values().iter().map(|v| v.to_bits()))
    };
    let mut by_hash = std::collections::HashMap::<u64, Vec<usize>>::new();
    for j in 0..train.labels.len() {
        by_hash.entry(hash(train, j)).or_default().push(j);
    }
    (0..dev.labels.len())
        .filter(|&i| {
            by_hash
                .get(&hash(dev, i))
                .is_some_and(|js| js.iter().any(|&j| same(dev, i, train, j)))
        })
        .count()
}
