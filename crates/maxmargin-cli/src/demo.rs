//! `maxmargin demo`: the worked examples, then a real train / save / load / evaluate cycle on the embedded
//! heart_scale data (a seeded 200/70 split) and iris, with the models in a temporary directory that is
//! removed afterwards; the pictures (training curves, a soft-margin boundary, the losses) go to a folder
//! that stays, with the two-feature data and model of the boundary picture, so its command can be rerun.

use anyhow::{Context, Result};
use maxmargin::io::libsvm::LabeledData;
use maxmargin::prelude::*;
use maxmargin::worked;
use std::path::Path;
use std::time::Instant;

/// Splits rows by a seeded shuffle: the first `n_train` rows of the permutation train, the rest test.
fn split(data: &LabeledData, n_train: usize, seed: u64) -> (LabeledData, LabeledData) {
    use maxmargin::optim::random::permutation;
    let order = permutation(data.n_samples(), seed);
    (
        data.select(&order[..n_train]),
        data.select(&order[n_train..]),
    )
}

pub fn run(pictures: &Path) -> Result<()> {
    // The folder is made and tried before the minute of work whose pictures it receives, not after.
    std::fs::create_dir_all(pictures)
        .and_then(|()| tempfile::NamedTempFile::new_in(pictures).map(drop))
        .with_context(|| {
            format!(
                "--out {}: the pictures' folder cannot be created or written",
                pictures.display()
            )
        })?;
    let mut binary_curves = Vec::new();
    let mut struct_curves = Vec::new();
    out!(
        "== The hinge and the 0-1 loss ==\n\
         z is the margin y*f(x); the hinge max(0, 1 - z) bounds the 0-1 loss from above. dhinge/dz is its\n\
         subdifferential: at the kink z = 1 any slope in [-1, 0] is a valid subgradient.\n{}",
        worked::hinge_table()
    );
    out!(
        "== Pegasos by hand: A = (2,1) +1, B = (-1,-2) -1, C = 1, eta_t = 1/t ==\n\
         Each step takes one point; margin is y<w_t, x> before the step. Case \"violated\" (margin < 1): w shrinks\n\
         by (1 - eta_t/C) and moves by eta_t*y*x; case \"else\": it only shrinks. The same run from the command\n\
         line: maxmargin train ab.svm --solver pegasos --lambda 1 --sampling cyclic --last --bias none\n\
         --iterations 6 --trace hand.jsonl --trace-weights (the lecture's C = 1 is --lambda 1, not -c 1).\n{}",
        worked::pegasos_hand_table()?
    );
    out!(
        "== Batch subgradient, the lesson's six points (lambda 0.04, step 0.12, 500 iterations) ==\n\
         Not a descent method: the last iterate is not the best, and the solver returns the best it evaluated.\n{}",
        worked::lesson_example()?
    );
    out!(
        "== Plain decoding is not loss-augmented inference (a 3-word chain, Hamming loss) ==\n\
         Training needs the output maximizing score + loss, not the best-scoring one: here decoding finds the\n\
         truth, yet another tagging beats it once the loss is added, and only that one moves w.\n{}",
        worked::decoding_is_not_inference()?
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
                .solver(LinearSolver::Pegasos(PegasosParams::new()))
                .lambda(lambda)
                .epochs(30.0)
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
        let report = params.check()?.fit_observed(&train, &mut ())?;
        let seconds = start.elapsed().as_secs_f64();
        let model = report.model;
        binary_curves.push(curve(&report.trace, name));
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
        let report = params.check()?.fit_multiclass(&iris, &mut ())?;
        struct_curves.push(curve(&report.trace, solver));
        let model = report.model;
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
    draw(pictures, &binary_curves, &struct_curves)?;
    out!(
        "Next: maxmargin train DATA -o MODEL; maxmargin eval MODEL DATA --lambda L; maxmargin predict MODEL DATA"
    );
    Ok(())
}

/// A run's curve for the pictures: its relative duality gap by pass, or its primal without gaps.
fn curve(trace: &[maxmargin::optim::TraceRecord], name: &str) -> crate::plot::Series {
    let trace = crate::figures::Trace {
        records: trace.to_vec(),
        tolerance: None,
        run: None,
        lines: Vec::new(),
    };
    use crate::figures::{XArg, YArg, curve};
    curve(&trace, (name, name), XArg::Passes, YArg::Gap)
        .or_else(|_| curve(&trace, (name, name), XArg::Passes, YArg::Primal))
        .unwrap_or(crate::plot::Series {
            name: name.into(),
            points: Vec::new(),
        })
}

/// The demo's pictures, and what each shows.
fn draw(
    dir: &Path,
    binary: &[crate::plot::Series],
    structural: &[crate::plot::Series],
) -> Result<()> {
    use crate::plot::LineChart;
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating the pictures' folder {}", dir.display()))?;
    let gap_curves = |all: &[crate::plot::Series]| -> Vec<crate::plot::Series> {
        all.iter()
            .filter(|s| !s.points.is_empty() && s.points.iter().all(|p| p.1 > 0.0 && p.1 < 1e3))
            .map(|s| crate::plot::Series {
                name: s.name.clone(),
                points: s.points.clone(),
            })
            .collect()
    };
    let tolerance = [(
        maxmargin::convergence::DEFAULT_GAP,
        "converged below 1e-2".to_string(),
    )];
    for (file, title, curves) in [
        (
            "heart-training.svg",
            "heart_scale: duality gap / primal by pass",
            gap_curves(binary),
        ),
        (
            "iris-training.svg",
            "iris, Crammer-Singer: duality gap / primal by pass",
            gap_curves(structural),
        ),
    ] {
        LineChart {
            title: title.into(),
            x_desc: "passes over the data".into(),
            y_desc: "duality gap / primal (relative)".into(),
            log_x: true,
            log_y: true,
            series: &curves,
            guides: &tolerance,
        }
        .write(&dir.join(file))?;
    }
    crate::figures::losses(&dir.join("losses.svg"))?;
    // The soft-margin figure on real data that overlaps: iris versicolor (-1) against virginica (+1) on
    // petal length and width.
    let iris = maxmargin::datasets::iris()?;
    let mut text = String::new();
    for (row, &label) in iris.x.rows().zip(&iris.labels) {
        if label == 0.0 {
            continue;
        }
        let d = row.to_dense(4);
        text.push_str(&format!(
            "{} 1:{} 2:{}\n",
            if label == 2.0 { "+1" } else { "-1" },
            d[2],
            d[3]
        ));
    }
    let data = dir.join("iris-petals.svm");
    maxmargin::io::atomic::write_atomic(&data, |w| w.write_all(text.as_bytes()))?;
    let model_path = dir.join("iris-petals.model");
    let petals = maxmargin::io::libsvm::read(&data)?;
    LinearSvmParams::new()
        .c(1.0)
        .check()?
        .fit(&petals)?
        .save(&model_path)?;
    crate::figures::plot_boundary(&model_path, &data, &dir.join("boundary.svg"))?;
    out!(
        "\n== Pictures in {}/ ==\n\
         heart-training.svg  each binary solver's duality gap (relative) by pass: DCD falls below the 1% line\n\
         iris-training.svg   the same for the structural solvers on iris\n\
         losses.svg          the hinge max(0, 1 - z) above the 0-1 loss, against the margin z = y f(x)\n\
         boundary.svg        iris versicolor vs virginica (petal length, width): the boundary, the margins and\n\
         \x20                   the violators, drawn by: maxmargin plot-boundary {m} {d} -o boundary.svg",
        dir.display(),
        m = model_path.display(),
        d = data.display()
    );
    Ok(())
}

/// A gap in the tables: two significant digits, or `-` without one.
fn gap_cell(gap: Option<f64>) -> String {
    gap.map_or("-".into(), |g| format!("{g:.2e}"))
}
