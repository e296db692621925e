//! BCFW's block choice and its cache side by side (issue #29): permutation or gap sampling (Osokin et al.
//! 2016), with or without the cache of active corners, each to a certified 1% gap (checked every 5 passes),
//! on the synthetic 100-class set (3,000 rows, `λ = 1/n`, the structural bench's) and on OCR chains (fold
//! 0, λ = 0.01, with `MAXMARGIN_DATA`). Rounds alternate the variants; the table gives the median seconds,
//! the passes (block steps / n), the oracle calls / n (certifications included), the certified relative gap,
//! and the median time as a ratio to permutation without the cache. `BCFW_VARIANTS_ROUNDS` sets the rounds
//! (default 3). Writes `target/bench-report/bcfw_variants.md`.

use maxmargin::core::objective::Lambda;
use maxmargin::core::vector::SparseVec;
use maxmargin::optim::{BcfwParams, Budget, StructProblem, Trainer};
use maxmargin::structured::{ChainSpace, MulticlassSpace, OutputSpace};
use maxmargin_benches::{data_dir, median, time};
use std::fmt::Write as _;

/// The variants: name, gap sampling, cache.
const VARIANTS: [(&str, bool, bool); 4] = [
    ("permutation", false, false),
    ("gap sampling", true, false),
    ("cache", false, true),
    ("gap sampling + cache", true, true),
];

/// One run's passes, oracle calls / n and relative gap.
type Measure = (f64, f64, f64);

fn measure<S: OutputSpace<Output: Sync>>(
    problem: &StructProblem<'_, S>,
    (gap_sampling, cache): (bool, bool),
) -> Option<(f64, Measure)> {
    let mut solver = BcfwParams {
        gap_sampling,
        cache,
        gap_every: 5.0,
        gap_tolerance: Some(0.01),
        ..BcfwParams::default()
    }
    .check()
    .ok()?;
    let trainer = Trainer::new(Budget::epochs(1000.0)).ok()?;
    let before = problem.oracle_calls();
    let (secs, fit) = time(|| trainer.run(&mut solver, problem, &mut ()));
    let fit = fit.ok()?;
    let calls = (problem.oracle_calls() - before) as f64 / problem.n_samples() as f64;
    let gap = fit.trace.last().and_then(|r| r.gap).unwrap_or(f64::NAN) / fit.objective;
    Some((secs, (fit.progress.epoch, calls, gap)))
}

fn table<S: OutputSpace<Output: Sync>>(
    report: &mut String,
    title: &str,
    problem: &StructProblem<'_, S>,
    rounds: usize,
) {
    let mut secs: Vec<Vec<f64>> = vec![Vec::new(); VARIANTS.len()];
    let mut last: Vec<Option<Measure>> = vec![None; VARIANTS.len()];
    for _ in 0..rounds {
        for (k, &(_, gaps, cache)) in VARIANTS.iter().enumerate() {
            if let Some((s, m)) = measure(problem, (gaps, cache)) {
                secs[k].push(s);
                last[k] = Some(m);
            }
        }
    }
    let medians: Vec<f64> = secs.iter_mut().map(|s| median(s)).collect();
    let _ = writeln!(
        report,
        "## {title}\n\n| variant | seconds (median of {rounds}) | ratio | passes | oracle calls / n | relative gap |\n|---|---|---|---|---|---|"
    );
    for (k, (name, _, _)) in VARIANTS.iter().enumerate() {
        let Some((passes, calls, gap)) = last[k] else {
            let _ = writeln!(report, "| {name} | failed | | | | |");
            continue;
        };
        let _ = writeln!(
            report,
            "| {name} | {:.2} | {:.2} | {passes:.0} | {calls:.0} | {gap:.1e} |",
            medians[k],
            medians[k] / medians[0]
        );
    }
    report.push('\n');
}

fn main() {
    let rounds = std::env::var("BCFW_VARIANTS_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3usize);
    let mut report = String::from("# BCFW: block choice and cache, to a certified 1% gap\n\n");
    let rows = maxmargin_benches::many_classes(3000, 7);
    let x: Vec<SparseVec> = rows
        .iter()
        .filter_map(|(_, row)| {
            // Three decimals and 0-based indices, as the command reads the structural bench's file.
            let (idx, val) = row
                .iter()
                .map(|&(j, v)| ((j - 1) as u32, (v * 1000.0).round() / 1000.0))
                .unzip();
            SparseVec::new(idx, val).ok()
        })
        .collect();
    let y: Vec<u32> = rows.iter().map(|&(c, _)| c as u32).collect();
    if let (Ok(space), Ok(lambda)) = (MulticlassSpace::new(20_000, 100), Lambda::new(1.0 / 3000.0))
        && let Ok(problem) = StructProblem::new(&space, &x, &y, lambda)
    {
        table(
            &mut report,
            "100 classes, 3,000 rows, λ = 1/n",
            &problem,
            rounds,
        );
    }
    if let Some(dir) = data_dir()
        && let Ok(train) =
            maxmargin::io::svm_hmm::read(&dir.join("ocr_letters/ocr.fold0.svmhmm.gz"))
        && let (Ok(space), Ok(lambda)) = (ChainSpace::new(128, 26), Lambda::new(0.01))
        && let Ok(problem) = StructProblem::new(&space, &train.sequences, &train.labels, lambda)
    {
        table(
            &mut report,
            "OCR chains, fold 0, λ = 0.01",
            &problem,
            rounds,
        );
    }
    println!("{report}");
    let out = maxmargin_benches::out_dir();
    if std::fs::create_dir_all(&out).is_ok() {
        let _ = std::fs::write(out.join("bcfw_variants.md"), &report);
    }
}
