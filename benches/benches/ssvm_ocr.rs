//! OCR letters (train on fold 0, test on folds 1–9), a chain with unary pixel features and transitions,
//! λ = 0.01, Hamming loss: every structural solver side by side, with passes, seconds, primal, dual gap and
//! the test letter error. Needs `MAXMARGIN_DATA`. Writes `target/bench-report/ssvm_ocr.md`.
//! `SSVM_OCR_SOLVERS=bcfw,oneslack` restricts the solvers.

use maxmargin::core::objective::Lambda;
use maxmargin::optim::{
    BcfwParams, Budget, Fit, NSlackParams, OneSlackParams, Solver, SsgParams, StructProblem,
    Trainer,
};
use maxmargin::structured::{ChainSpace, OutputSpace};
use maxmargin_benches::{data_dir, time};
use std::fmt::Write as _;

/// Seconds and the fit of one solver's run, or `None` when it failed.
type Run = Option<(f64, Fit<Vec<f64>>)>;

fn main() {
    let Some(dir) = data_dir() else {
        println!("ssvm_ocr: set MAXMARGIN_DATA (or cargo xtask bench --data-dir DIR) to run it");
        return;
    };
    let (Ok(train), Ok(test)) = (
        maxmargin::io::svm_hmm::read(&dir.join("ocr_letters/ocr.fold0.svmhmm.gz")),
        maxmargin::io::svm_hmm::read(&dir.join("ocr_letters/ocr.folds1-9.svmhmm.gz")),
    ) else {
        println!("ssvm_ocr: OCR data not found under {}", dir.display());
        return;
    };
    let Ok(space) = ChainSpace::new(128, 26) else {
        return;
    };
    let Ok(lambda) = Lambda::new(0.01) else {
        return;
    };
    let Ok(problem) = StructProblem::new(&space, &train.sequences, &train.labels, lambda) else {
        return;
    };
    let wanted = |name: &str| maxmargin_benches::chosen("SSVM_OCR_SOLVERS", name);
    let test_error = |w: &[f64]| {
        let (mut wrong, mut total) = (0usize, 0usize);
        for (x, y) in test.sequences.iter().zip(&test.labels) {
            if let Ok(p) = space.decode(w, x) {
                wrong += p.iter().zip(y).filter(|(a, b)| a != b).count();
            }
            total += y.len();
        }
        wrong as f64 / total as f64
    };
    let mut report = String::from(
        "# OCR letters, chain SSVM, λ = 0.01 (train fold 0: 626 words; test folds 1–9: 6,251 words)\n\n\
         | solver | stop | passes (all oracle calls / n, evaluations included) | seconds | primal | dual gap | gap / primal | active constraints | test letter error |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    fn run<'p, S: Solver<StructProblem<'p, ChainSpace>, Output = Vec<f64>>>(
        solver: &mut S,
        problem: &StructProblem<'p, ChainSpace>,
        budget: Budget,
    ) -> Run {
        let trainer = Trainer::new(budget).ok()?;
        let before = problem.oracle_calls();
        let (secs, fit) = time(|| trainer.run(solver, problem, &mut ()));
        let mut fit = fit.ok()?;
        // Count this run's oracle calls only (the problem's counter is shared by the runs).
        if let Some(last) = fit.trace.last_mut() {
            last.oracle_calls = last.oracle_calls.map(|c| c - before);
        }
        Some((secs, fit))
    }
    let gap_budget = |passes: f64| Budget::epochs(passes).evaluating_every(10.0);
    let mut results: Vec<(&str, Run)> = Vec::new();
    if wanted("bcfw") {
        let mut s = BcfwParams {
            gap_every: 5.0,
            gap_tolerance: Some(0.01),
            ..BcfwParams::default()
        }
        .check();
        results.push((
            "bcfw",
            s.as_mut()
                .ok()
                .and_then(|s| run(s, &problem, gap_budget(500.0))),
        ));
    }
    if wanted("oneslack") {
        let mut s = OneSlackParams {
            epsilon: 1e-3,
            ..OneSlackParams::default()
        }
        .check();
        results.push((
            "1-slack",
            s.as_mut().ok().and_then(|s| {
                run(
                    s,
                    &problem,
                    Budget::iterations(2_000).evaluating_every(10.0),
                )
            }),
        ));
    }
    if wanted("nslack") {
        let mut s = NSlackParams {
            epsilon: 1e-3,
            ..NSlackParams::default()
        }
        .check();
        results.push((
            "n-slack",
            s.as_mut()
                .ok()
                .and_then(|s| run(s, &problem, Budget::iterations(200).evaluating_every(10.0))),
        ));
    }
    if wanted("ssg") {
        let mut s = SsgParams {
            seed: 1,
            ..SsgParams::default()
        }
        .check();
        results.push((
            "ssg",
            s.as_mut()
                .ok()
                .and_then(|s| run(s, &problem, gap_budget(50.0))),
        ));
    }
    for (name, r) in results {
        let Some((secs, fit)) = r else {
            let _ = writeln!(report, "| {name} | failed | | | | | | | |");
            continue;
        };
        let last = fit.trace.last();
        let gap = last.and_then(|r| r.gap);
        let _ = writeln!(
            report,
            "| {name} | {} | {:.1} | {secs:.2} | {:.5} | {} | {} | {} | {:.4} |",
            fit.stop,
            last.and_then(|r| r.oracle_calls)
                .map_or(fit.progress.epoch, |c| c as f64
                    / problem.n_samples() as f64),
            fit.objective,
            gap.map_or("-".into(), |g| format!("{g:.2e}")),
            gap.map_or("-".into(), |g| format!("{:.4}", g / fit.objective)),
            last.and_then(|r| r.active_constraints)
                .map_or("-".into(), |a| a.to_string()),
            test_error(&fit.output)
        );
    }
    println!("{report}");
    let out = maxmargin_benches::out_dir();
    if std::fs::create_dir_all(&out).is_ok() {
        let _ = std::fs::write(out.join("ssvm_ocr.md"), &report);
    }
}
