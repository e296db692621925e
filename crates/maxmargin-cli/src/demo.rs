//! `maxmargin demo`: the worked examples, then a real train / save / load / evaluate cycle on the embedded
//! heart_scale data (a seeded 200/70 split), all in a temporary directory that is removed afterwards.

use anyhow::{Context, Result};
use maxmargin::io::libsvm::LabeledData;
use maxmargin::prelude::*;
use maxmargin::worked;
use std::time::Instant;

/// Splits rows by a seeded shuffle: the first `n_train` rows of the permutation train, the rest test.
fn split(data: &LabeledData, n_train: usize, seed: u64) -> (LabeledData, LabeledData) {
    use maxmargin::optim::random::permutation;
    let order = permutation(data.n_samples(), seed);
    let part = |rows: &[usize]| LabeledData {
        x: data.x.select(rows),
        labels: rows.iter().map(|&i| data.labels[i]).collect(),
        qids: rows.iter().map(|&i| data.qids[i]).collect(),
        lines: rows.iter().map(|&i| data.lines[i]).collect(),
        source: data.source.clone(),
    };
    (part(&order[..n_train]), part(&order[n_train..]))
}

pub fn run() -> Result<()> {
    out!(
        "== The hinge and the 0-1 loss ==\n{}",
        worked::hinge_table()
    );
    out!(
        "== Pegasos by hand: A = (2,1) +1, B = (-1,-2) -1, C = 1, eta_t = 1/t ==\n{}",
        worked::pegasos_hand_table()?
    );
    out!(
        "== Batch subgradient, the lesson's six points (lambda 0.04, step 0.12, 500 iterations) ==\n{}",
        worked::lesson_example()?
    );

    let data = maxmargin::datasets::heart_scale()?;
    let (train, test) = split(&data, 200, 1);
    out!(
        "== heart_scale (embedded): {} examples, {} features; train {} / test {} ==",
        data.n_samples(),
        data.x.n_features(),
        train.n_samples(),
        test.n_samples()
    );
    let lambda = 0.01;
    let dir = tempfile::tempdir().context("creating a temporary directory")?;
    out!(
        "Every run ends certified: \"gap\" is its duality gap, a proven bound on how far its objective is above\n\
         the optimum; a run is \"converged\" when that gap is within 1% of the objective. DCD, the default,\n\
         converges; Pegasos and the subgradient method stop on their budgets and say how far they are.\n"
    );
    out!("solver       epochs  objective  gap        converged  train acc  test acc  seconds");
    for (name, params) in [
        ("dcd", LinearSvmParams::new().lambda(lambda)),
        (
            "pegasos",
            LinearSvmParams::new()
                .solver(SolverKind::Pegasos)
                .lambda(lambda)
                .epochs(30.0)
                .seed(1),
        ),
        (
            "pegasos-last",
            LinearSvmParams::new()
                .solver(SolverKind::Pegasos)
                .lambda(lambda)
                .epochs(30.0)
                .average(false)
                .seed(1),
        ),
        (
            "subgradient",
            LinearSvmParams::new()
                .solver(SolverKind::Subgradient)
                .lambda(lambda)
                .iterations(2000),
        ),
    ] {
        let start = Instant::now();
        let model = params.check()?.fit(&train)?;
        let seconds = start.elapsed().as_secs_f64();
        let path = dir.path().join(format!("{name}.model"));
        model.save(&path)?;
        let loaded = LinearModel::load(&path)?;
        anyhow::ensure!(
            loaded == model,
            "the model saved to {} did not load back equal",
            path.display()
        );
        let tr = loaded.evaluate(&train, Some(lambda))?;
        let te = loaded.evaluate(&test, None)?;
        out!(
            "{name:<12} {:<7.1} {:<10.6} {:<10} {:<10} {:<10.4} {:<9.4} {seconds:.3}",
            model.training.epochs,
            tr.objective.unwrap_or(f64::NAN),
            gap_cell(model.training.gap),
            if model.training.converged {
                "yes"
            } else {
                "no"
            },
            tr.accuracy,
            te.accuracy
        );
    }
    out!("\nEach model was saved, loaded back identical, and evaluated from the file.");

    let iris = maxmargin::datasets::iris()?;
    out!(
        "\n== iris (embedded): multiclass Crammer-Singer SVM, lambda 0.01, every structural solver (dcd: the default) =="
    );
    out!("solver     passes  objective  gap        converged  accuracy");
    for solver in ["dcd", "bcfw", "oneslack", "nslack", "ssg"] {
        let params = maxmargin::StructuredSvmParams::new(maxmargin::Task::Multiclass)
            .solver(solver.parse()?)
            .lambda(0.01)
            .epsilon(1e-3)
            .max_passes(500.0)
            .seed(1);
        let model = params.check()?.fit_multiclass(&iris, &mut ())?.model;
        let e = model.evaluate_multiclass(&iris, None)?;
        out!(
            "{solver:<10} {:<7.0} {:<10.6} {:<10} {:<10} {:.4}",
            model.training.passes,
            model.training.objective,
            gap_cell(model.training.gap),
            if model.training.converged {
                "yes"
            } else {
                "no"
            },
            e.accuracy.unwrap_or(f64::NAN)
        );
    }
    out!(
        "Next: maxmargin train DATA -o MODEL; maxmargin eval MODEL DATA --lambda L; maxmargin predict MODEL DATA"
    );
    Ok(())
}

/// A gap in the tables: two significant digits, or `-` without one.
fn gap_cell(gap: Option<f64>) -> String {
    gap.map_or("-".into(), |g| format!("{g:.2e}"))
}
