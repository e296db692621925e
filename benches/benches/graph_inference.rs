//! Graph inference and training: exact tree inference on a 10,000-node random tree with 10 labels, loopy
//! max-product, AD3 and graph cuts (α-expansion) on a 64 × 64 grid with 5 labels (milliseconds per loss-augmented call, medians of 9), and
//! training (the default solver, n-slack) on generated noisy shapes against the per-pixel model (test pixel
//! accuracy, seconds), and the structural solvers side by side on pictures from 4 × 4 to 32 × 32 (with
//! `GRAPH_LARGE=1`, also issue #27's 200 pictures of 64 × 64: about 6 minutes more; with
//! `GRAPH_INFERENCE_ONLY=1`, the inference tables alone; with `GRAPH_RELAXED_ONLY=1`, the inference tables
//! and training over the LP relaxation against exact ad3 and trws).
//! Writes `target/bench-report/graph_inference.md`.
//!
//! Rerun: `cargo bench -p maxmargin-benches --bench graph_inference`.

use maxmargin::core::vector::SparseVec;
use maxmargin::datasets::Shapes;
use maxmargin::io::graphs::GraphData;
use maxmargin::structured::{Graph, GraphSpace, Inference, OutputSpace};
use maxmargin::structured_svm::GraphOptions;
use maxmargin::{StructuredSvmParams, Task};
use maxmargin_benches::{median, time};
use rand::{Rng, SeedableRng};
use std::fmt::Write as _;
use std::hint::black_box;

fn rng(seed: u64) -> rand_chacha::ChaCha8Rng {
    rand_chacha::ChaCha8Rng::seed_from_u64(seed)
}

/// Milliseconds per loss-augmented call, median of `rounds` rounds of `calls` calls.
fn per_call(
    space: &GraphSpace,
    w: &[f64],
    x: &Graph,
    y: &Vec<u32>,
    (rounds, calls): (usize, usize),
) -> f64 {
    let mut rounds: Vec<f64> = (0..rounds)
        .map(|_| {
            time(|| {
                for _ in 0..calls {
                    black_box(space.loss_augmented(w, x, y).ok());
                }
            })
            .0 / calls as f64
                * 1e3
        })
        .collect();
    median(&mut rounds)
}

fn tree(report: &mut String) {
    let (n, l, d) = (10_000usize, 10usize, 20usize);
    let mut r = rng(1);
    let nodes: Vec<SparseVec> = (0..n)
        .map(|_| {
            let dense: Vec<f64> = (0..d).map(|_| r.random_range(-1.0..1.0)).collect();
            SparseVec::from_dense(&dense).unwrap_or_default()
        })
        .collect();
    let edges: Vec<[u32; 2]> = (1..n as u32).map(|j| [r.random_range(0..j), j]).collect();
    let x = Graph::new(nodes, edges).expect("a tree");
    let y: Vec<u32> = (0..n).map(|_| r.random_range(0..l as u32)).collect();
    for inference in [
        Inference::ExactTree,
        Inference::MAX_PRODUCT,
        Inference::TRWS,
    ] {
        let space = GraphSpace::new(d, l, inference).expect("a space");
        let w: Vec<f64> = (0..space.dim())
            .map(|_| r.random_range(-1.0..1.0))
            .collect();
        let ms = per_call(&space, &w, &x, &y, (9, 5));
        let _ = writeln!(
            report,
            "| random tree | {n} | {} | {l} | {} | {ms:.2} |",
            n - 1,
            inference.name()
        );
    }
}

fn grid(report: &mut String) {
    let (side, l) = (64usize, 5usize);
    let data = Shapes::default().size(side, side).labels(l).generate(1, 9);
    let g = &data.graphs[0];
    let x = Graph::new(g.nodes.clone(), g.edges.clone()).expect("a grid");
    let y = g.labels.clone().unwrap_or_default();
    let mut r = rng(2);
    let space = GraphSpace::new(l, l, Inference::MAX_PRODUCT).expect("a space");
    // Unary weights that read the noisy one-hot code, attractive pairwise weights.
    let mut w: Vec<f64> = (0..space.dim())
        .map(|_| r.random_range(-0.2..0.2))
        .collect();
    for k in 0..l {
        w[k * l + k] += 1.0;
    }
    for (t, v) in w[l * l..].iter_mut().enumerate() {
        *v += if [0, 5, 9, 12, 14].contains(&t) {
            0.5
        } else {
            0.0
        };
    }
    let ad3 = space.with_inference(Inference::AD3);
    let cut = space.with_inference(Inference::Qpbo);
    let trws = space.with_inference(Inference::TRWS);
    let mut found = String::new();
    for space in [&space, &trws, &ad3, &cut] {
        let inference = space.inference();
        let rounds = if space.inference().is_exact()
            || ["max-product", "trws"].contains(&space.inference().name())
        {
            (9, 3)
        } else {
            (3, 1)
        };
        let ms = per_call(space, &w, &x, &y, rounds);
        let _ = writeln!(
            report,
            "| {side}×{side} grid | {} | {} | {l} | {} | {ms:.2} |",
            x.n_nodes(),
            x.edges().len(),
            inference.name()
        );
        let hinge = space
            .loss_augmented(&w, &x, &y)
            .map_or(f64::NAN, |v| v.hinge);
        let _ = write!(found, " {} {hinge:.4};", inference.name());
    }
    let _ = writeln!(
        report,
        "\nAnswers left uncertified on the grid: AD3 {} of its calls, TRW-S {} of its calls. Loss-augmented \
         hinge found (higher is better):{found}\n",
        ad3.uncertified_calls(),
        trws.uncertified_calls()
    );
}

fn without_edges(d: &GraphData) -> GraphData {
    let mut out = d.clone();
    for g in &mut out.graphs {
        g.edges.clear();
    }
    out
}

/// Test pixel accuracy of `model` on `data` (NaN where it cannot be evaluated).
fn accuracy(model: &maxmargin::structured_svm::GraphModel, data: &GraphData) -> f64 {
    model
        .evaluate(data, None)
        .ok()
        .and_then(|e| e.accuracy)
        .unwrap_or(f64::NAN)
}

fn training(report: &mut String) {
    report.push_str(
        "\n## Training on noisy shapes (the default solver, λ = 1, 1,000-pass budget, 3 labels, noise 1)\n\n\
         | pictures | size | grid accuracy | per-pixel accuracy | grid seconds | grid passes | per-pixel seconds |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for (n, side) in [(100usize, 16usize), (100, 32)] {
        let shapes = Shapes::default().size(side, side);
        let (train, test) = (shapes.generate(n, 1), shapes.generate(n, 2));
        let svm = StructuredSvmParams::new(Task::Graph)
            .check()
            .expect("params");
        let (tg, grid) = time(|| svm.fit_graph(&train, GraphOptions::new(), &mut ()));
        let (tp, pixels) =
            time(|| svm.fit_graph(&without_edges(&train), GraphOptions::new(), &mut ()));
        let (Ok(grid), Ok(pixels)) = (grid, pixels) else {
            continue;
        };
        let _ = writeln!(
            report,
            "| {n} | {side}×{side} | {:.4} | {:.4} | {tg:.2} | {:.0} | {tp:.2} |",
            accuracy(&grid.model, &test),
            accuracy(&pixels.model, &without_edges(&test)),
            grid.model.model.training.passes
        );
    }
}

/// Training over the LP relaxation (`--relaxed`, ad3's fractional points, no branch and bound) against
/// ad3's exact answers (branch and bound) and trws on noisy 5-label shapes, where the relaxation is loose on
/// some calls: seconds, passes, the certified relative gap (the relaxed problem's for `--relaxed`), the
/// final objective (the relaxed one is at least the exact optimum) and test pixel accuracy.
fn relaxed(report: &mut String) {
    report.push_str(
        "\n## Training over the LP relaxation (n-slack, λ = 1, 5 labels, noise 1.5, to a certified 1% gap)\n\n\
         | pictures | size | inference | seconds | passes | relative gap | objective | fractional answers | \
         uncertified answers | test accuracy |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let shapes = Shapes::default().size(32, 32).labels(5).noise(1.5);
    let (n, side) = (40usize, 32usize);
    let (train, test) = (shapes.generate(n, 11), shapes.generate(n, 12));
    let svm = StructuredSvmParams::new(Task::Graph)
        .check()
        .expect("params");
    for (name, options) in [
        ("trws", GraphOptions::new().inference(Inference::TRWS)),
        ("ad3", GraphOptions::new().inference(Inference::AD3)),
        (
            "ad3 --relaxed",
            GraphOptions::new().inference(Inference::AD3).relaxed(true),
        ),
    ] {
        let (seconds, fit) = time(|| svm.fit_graph(&train, options, &mut ()));
        let Ok(fit) = fit else { continue };
        let t = &fit.model.model.training;
        let accuracy = accuracy(&fit.model, &test);
        let _ = writeln!(
            report,
            "| {n} | {side}×{side} | {name} | {seconds:.2} | {:.0} | {:.4} | {:.4} | {} | {} of {} | {accuracy:.4} |",
            t.passes,
            t.gap.unwrap_or(f64::NAN) / t.objective.abs(),
            t.objective,
            fit.fractional_answers,
            fit.inference_calls.1,
            fit.inference_calls.0,
        );
    }
}

/// The default solver (n-slack, on one thread and on two) against BCFW (one thread; its block steps are
/// sequential) to the default certified 1% gap on noisy shapes, trained and tested on seeded pictures.
fn solvers(report: &mut String) {
    use maxmargin::StructSolverKind as K;
    report.push_str(
        "\n## Solvers on noisy shapes (λ = 1, to a certified 1% gap, default inference)\n\n\
         | pictures | size | solver | threads | seconds | × bcfw | passes | relative gap | test accuracy |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    let mut sizes = vec![
        (1000usize, 4usize),
        (1000, 6),
        (500, 8),
        (200, 12),
        (100, 16),
        (100, 32),
    ];
    if std::env::var_os("GRAPH_LARGE").is_some() {
        sizes.push((200, 64));
    }
    for (n, side) in sizes {
        let shapes = Shapes::default().size(side, side);
        let (train, test) = (shapes.generate(n, 1), shapes.generate(n, 2));
        let mut bcfw_seconds = f64::NAN;
        for (solver, threads) in [(K::Bcfw, 1), (K::Nslack, 1), (K::Nslack, 2)] {
            let svm = StructuredSvmParams::new(Task::Graph)
                .solver(solver)
                .threads(threads)
                .check()
                .expect("params");
            let (seconds, fit) = time(|| svm.fit_graph(&train, GraphOptions::new(), &mut ()));
            let Ok(fit) = fit else { continue };
            if solver == K::Bcfw {
                bcfw_seconds = seconds;
            }
            let t = &fit.model.model.training;
            let accuracy = accuracy(&fit.model, &test);
            let _ = writeln!(
                report,
                "| {n} | {side}×{side} | {} | {threads} | {seconds:.2} | {:.2} | {:.0} | {:.4} | {accuracy:.4} |",
                format!("{solver:?}").to_lowercase(),
                seconds / bcfw_seconds,
                t.passes,
                t.gap.unwrap_or(f64::NAN) / t.objective.abs(),
            );
        }
    }
}

fn main() {
    let mut report = String::from(
        "# Graph inference\n\nMilliseconds per loss-augmented call, medians of 9 rounds (AD3: 3), one thread.\n\n\
         | graph | nodes | edges | labels | inference | ms per call |\n|---|---|---|---|---|---|\n",
    );
    tree(&mut report);
    grid(&mut report);
    if std::env::var_os("GRAPH_RELAXED_ONLY").is_some() {
        relaxed(&mut report);
    } else if std::env::var_os("GRAPH_INFERENCE_ONLY").is_none() {
        training(&mut report);
        relaxed(&mut report);
        solvers(&mut report);
    }
    println!("{report}");
    let dir = maxmargin_benches::out_dir();
    if std::fs::create_dir_all(&dir).is_ok() {
        let _ = std::fs::write(dir.join("graph_inference.md"), &report);
    }
}
