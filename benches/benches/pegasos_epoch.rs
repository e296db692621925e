//! End-to-end measurement for the binary slice, printed and written to `target/bench-report/`:
//!
//! 1. The cost of one Pegasos epoch against a plain pass of sparse dot products over the same data (the
//!    memory-bound limit of this work), measured interleaved (pass, epoch, pass, epoch, ...) and reported
//!    as the ratio of medians, since these machines are shared and noisy.
//! 2. The primal objective after fixed budgets (1, 3, 10 epochs) against the optimum of a long run, for
//!    Pegasos (last and averaged) and the batch subgradient method, so later solvers can be compared.

use maxmargin::core::objective::Lambda;
use maxmargin::io::libsvm::BinaryLabels;
use maxmargin::optim::random::permutation;
use maxmargin::optim::{
    Bias, BinaryProblem, Budget, PegasosParams, Sampling, Solver, StepRule, SubgradientParams,
    Trainer,
};
use maxmargin_benches::{binary_sets, median, time};
use std::fmt::Write as _;
use std::hint::black_box;

const LAMBDA: f64 = 1e-4;
const ROUNDS: usize = 15;

fn main() {
    // `cargo bench` passes `--bench`; this harness takes no other arguments.
    let mut report = String::from("# Pegasos epoch cost and objective after fixed budgets\n\n");
    let _ = writeln!(
        report,
        "λ = {LAMBDA}, bias as a feature, seed 1, {ROUNDS} interleaved rounds, medians.\n"
    );
    let _ = writeln!(
        report,
        "Times in ms; ratios are to the plain pass in file order / in the epoch's permuted order.\n\n\
         | data | n | d | nnz | pass, file order | pass, permuted | Pegasos epoch (last) | Pegasos epoch (averaged) | averaged, cyclic order |\n\
         |---|---|---|---|---|---|---|---|---|"
    );
    let mut objectives = String::from(
        "\n| data | solver | 1 epoch | 3 epochs | 10 epochs | optimum (long run) |\n|---|---|---|---|---|---|\n",
    );
    for (name, data) in binary_sets() {
        let Ok(labels) = BinaryLabels::from_labels(&data.source, &data.labels) else {
            continue;
        };
        let Ok(y) = labels.targets(&data) else {
            continue;
        };
        let Ok(lambda) = Lambda::new(LAMBDA) else {
            continue;
        };
        let Ok(problem) = BinaryProblem::new(&data.x, &y, lambda, Bias::Feature) else {
            continue;
        };
        let n = data.n_samples();
        let w: Vec<f64> = (0..data.x.n_features())
            .map(|j| (j % 7) as f64 * 0.1 - 0.3)
            .collect();

        let epoch = |average: bool, sampling: Sampling| -> Option<f64> {
            let mut solver = PegasosParams::new()
                .average(average)
                .sampling(sampling)
                .seed(1)
                .check()
                .ok()?;
            let mut state = solver.init(&problem).ok()?;
            let (secs, ok) = time(|| {
                for _ in 0..n {
                    solver.step(&problem, &mut state).ok()?;
                }
                Some(())
            });
            ok?;
            black_box(&state);
            Some(secs)
        };
        let order = permutation(n, 1);
        let mut t: [Vec<f64>; 5] = Default::default();
        for _ in 0..ROUNDS {
            let (secs, s) = time(|| data.x.rows().map(|r| r.dot(black_box(&w))).sum::<f64>());
            black_box(s);
            t[0].push(secs);
            let (secs, s) = time(|| {
                order
                    .iter()
                    .map(|&i| data.x.row(i).dot(black_box(&w)))
                    .sum::<f64>()
            });
            black_box(s);
            t[1].push(secs);
            for (k, (average, sampling)) in [
                (false, Sampling::Permutation),
                (true, Sampling::Permutation),
                (true, Sampling::Cyclic),
            ]
            .into_iter()
            .enumerate()
            {
                if let Some(secs) = epoch(average, sampling) {
                    t[2 + k].push(secs);
                }
            }
        }
        let m: Vec<f64> = t.iter_mut().map(|v| median(v)).collect();
        let _ = writeln!(
            report,
            "| {name} | {n} | {} | {} | {:.3} | {:.3} | {:.3} ({:.1}× / {:.1}×) | {:.3} ({:.1}× / {:.1}×) | {:.3} ({:.1}×) |",
            data.x.n_features(),
            data.x.nnz(),
            m[0] * 1e3,
            m[1] * 1e3,
            m[2] * 1e3,
            m[2] / m[0],
            m[2] / m[1],
            m[3] * 1e3,
            m[3] / m[0],
            m[3] / m[1],
            m[4] * 1e3,
            m[4] / m[0],
        );

        // Objectives after fixed budgets, against a long averaged Pegasos run.
        let run_peg = |epochs: f64, average: bool| -> Option<f64> {
            let mut s = PegasosParams::new().average(average).seed(1).check().ok()?;
            Some(
                Trainer::new(Budget::epochs(epochs))
                    .ok()?
                    .run(&mut s, &problem, &mut ())
                    .ok()?
                    .objective,
            )
        };
        let run_sub = |iters: u64| -> Option<f64> {
            let mut s = SubgradientParams::new()
                .step(StepRule::Pegasos)
                .check()
                .ok()?;
            Some(
                Trainer::new(Budget::iterations(iters))
                    .ok()?
                    .run(&mut s, &problem, &mut ())
                    .ok()?
                    .objective,
            )
        };
        let optimum = run_peg(300.0, true).unwrap_or(f64::NAN);
        let fmt = |v: Option<f64>| {
            v.map_or("-".into(), |v| {
                format!("{v:.5} ({:+.1}%)", 100.0 * (v - optimum) / optimum)
            })
        };
        for (solver, f) in [
            (
                "pegasos (last)",
                &(|e: f64| run_peg(e, false)) as &dyn Fn(f64) -> Option<f64>,
            ),
            ("pegasos (averaged)", &|e: f64| run_peg(e, true)),
            ("batch subgradient", &|e: f64| run_sub(e as u64)),
        ] {
            let _ = writeln!(
                objectives,
                "| {name} | {solver} | {} | {} | {} | {optimum:.5} |",
                fmt(f(1.0)),
                fmt(f(3.0)),
                fmt(f(10.0))
            );
        }
    }
    report.push_str(&objectives);
    report.push_str("\nThe optimum is the objective of 300 epochs of averaged Pegasos.\n");
    println!("{report}");
    let dir = maxmargin_benches::out_dir();
    if std::fs::create_dir_all(&dir).is_ok() {
        let path = dir.join("pegasos_epoch.md");
        match std::fs::write(&path, &report) {
            Ok(()) => println!("written to {}", path.display()),
            Err(e) => eprintln!("could not write {}: {e}", path.display()),
        }
    }
}
