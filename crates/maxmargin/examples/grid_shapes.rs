//! Segmenting noisy pictures with a grid CRF trained as a structural SVM, against a per-pixel model.
//!
//! [`Shapes`] paints one to three rectangles or discs per picture and blurs every pixel's one-hot label
//! code with Gaussian noise. Two models are trained on the same pictures with BCFW: one on the 4-connected
//! grid (a shared symmetric pairwise table, the default inference: TRW-S), one on the same pixels without
//! edges (each pixel on its own: exact inference, the per-pixel linear model); the grid is trained again
//! with loopy max-product, with AD3 (every answer certified by its dual bound) and with graph cuts. The grid
//! models' advantage is what neighbours' agreement is worth. Arguments: `[pictures] [size] [noise]`
//! (default 40 pictures of 12 × 12 pixels, noise 1).
//!
//! Run it with `cargo run --release -p maxmargin --example grid_shapes` (`cargo test` builds it). With
//! `GRID_PICTURE=FILE.svg` it also draws three test pictures, one per row: the noisy input read pixel by
//! pixel (each pixel's strongest feature), the per-pixel model's labels, the grid model's, and the truth
//! (the guide's `graphs-shapes.svg`); with `GRID_ONLY=1` it trains the grid with the default inference only
//! (issue #27's 200 pictures of 64 × 64: `GRID_ONLY=1 cargo run --release -p maxmargin --example grid_shapes
//! 200 64 1`), and with `GRID_BCFW=1` trains with BCFW on one thread instead of the default solver.

use maxmargin::datasets::Shapes;
use maxmargin::io::graphs::GraphData;
use maxmargin::structured::Inference;
use maxmargin::structured_svm::{GraphModel, GraphOptions};
use maxmargin::{StructSolverKind, StructuredSvmParams, Task};

fn without_edges(d: &GraphData) -> GraphData {
    let mut out = d.clone();
    for g in &mut out.graphs {
        g.edges.clear();
    }
    out
}

/// Draws `rows` of label pictures (`side × side`, row-major), each row's panels side by side.
fn draw(path: &str, side: usize, rows: &[Vec<Vec<u32>>]) -> Result<(), Box<dyn std::error::Error>> {
    use plotters::prelude::*;
    const CELL: usize = 8;
    const GAP: usize = 12;
    let colours = [
        RGBColor(235, 235, 225),
        RGBColor(40, 110, 190),
        RGBColor(215, 90, 40),
    ];
    let panels = rows.first().map_or(0, Vec::len);
    let size = |n: usize| (n * (side * CELL + GAP) + GAP) as u32;
    let root = SVGBackend::new(path, (size(panels), size(rows.len()))).into_drawing_area();
    root.fill(&WHITE)?;
    for (r, row) in rows.iter().enumerate() {
        for (c, labels) in row.iter().enumerate() {
            let (x0, y0) = (GAP + c * (side * CELL + GAP), GAP + r * (side * CELL + GAP));
            for (i, &l) in labels.iter().enumerate() {
                let (x, y) = (
                    (x0 + (i % side) * CELL) as i32,
                    (y0 + (i / side) * CELL) as i32,
                );
                let colour = colours[l as usize % colours.len()];
                root.draw(&Rectangle::new(
                    [(x, y), (x + CELL as i32, y + CELL as i32)],
                    colour.filled(),
                ))?;
            }
        }
    }
    root.present()?;
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arg = |i: usize, default: f64| -> f64 {
        std::env::args()
            .nth(i)
            .and_then(|a| a.parse().ok())
            .unwrap_or(default)
    };
    let (n, size, noise) = (arg(1, 40.0) as usize, arg(2, 12.0) as usize, arg(3, 1.0));
    let shapes = Shapes::default().size(size, size).noise(noise);
    let (train, test) = (shapes.generate(n, 1), shapes.generate(n, 2));
    // GRID_BCFW=1: BCFW on one thread (#27's target) instead of the default solver (n-slack, all cores).
    let svm = if std::env::var_os("GRID_BCFW").is_some() {
        StructuredSvmParams::new(Task::Graph)
            .solver(StructSolverKind::Bcfw)
            .threads(1)
    } else {
        StructuredSvmParams::new(Task::Graph)
    }
    .check()?;
    let started = std::time::Instant::now();
    let grid = svm.fit_graph(&train, GraphOptions::new(), &mut ())?;
    let grid_time = started.elapsed();
    let pixels = svm.fit_graph(&without_edges(&train), GraphOptions::new(), &mut ())?;
    let accuracy = |m: &GraphModel, d: &GraphData| -> Result<f64, maxmargin::Error> {
        Ok(m.evaluate(d, None)?.accuracy.unwrap_or(0.0))
    };
    let (a_grid, a_pixels) = (
        accuracy(&grid.model, &test)?,
        accuracy(&pixels.model, &without_edges(&test))?,
    );
    println!(
        "{n} pictures of {size}x{size}, noise {noise}: test pixel accuracy {a_grid:.4} on the grid \
         ({:.2} s, {:.0} passes, converged: {}, {} of {} answers not certified exact), {a_pixels:.4} per pixel",
        grid_time.as_secs_f64(),
        grid.model.model.training.passes,
        grid.model.model.training.converged,
        grid.inference_calls.1,
        grid.inference_calls.0
    );
    // The same grid trained with the other inference methods for graphs with cycles (the default is trws),
    // unless GRID_ONLY is set (large pictures, where each method takes minutes).
    let others = if std::env::var_os("GRID_ONLY").is_some() {
        Vec::new()
    } else {
        vec![Inference::MAX_PRODUCT, Inference::AD3, Inference::Qpbo]
    };
    for inference in others {
        let started = std::time::Instant::now();
        let fit = svm.fit_graph(&train, GraphOptions::new().inference(inference), &mut ())?;
        let seconds = started.elapsed().as_secs_f64();
        println!(
            "  with {}: test pixel accuracy {:.4} ({seconds:.2} s, {:.0} passes, converged: {})",
            inference.name(),
            accuracy(&fit.model, &test)?,
            fit.model.model.training.passes,
            fit.model.model.training.converged
        );
        if inference == Inference::AD3 {
            for w in &fit.warnings {
                println!("  {} model: {w}", inference.name());
            }
        }
    }
    for w in &grid.warnings {
        println!("  grid model: {w}");
    }
    for w in &pixels.warnings {
        println!("  per-pixel model: {w}");
    }
    if let Ok(path) = std::env::var("GRID_PICTURE") {
        let (on_grid, alone) = (
            grid.model.predict(&test)?,
            pixels.model.predict(&without_edges(&test))?,
        );
        let rows: Vec<Vec<Vec<u32>>> = (0..3.min(n))
            .map(|i| {
                let g = &test.graphs[i];
                let read: Vec<u32> = g
                    .nodes
                    .iter()
                    .map(|v| {
                        let dense = v.as_row().to_dense(test.n_features);
                        (0..dense.len()).fold(0, |b, k| if dense[k] > dense[b] { k } else { b })
                            as u32
                    })
                    .collect();
                let truth = g.labels.clone().unwrap_or_default();
                vec![read, alone[i].clone(), on_grid[i].clone(), truth]
            })
            .collect();
        draw(&path, size, &rows)?;
        println!("drew {path}");
    }
    // A model file round trip.
    let dir = std::env::temp_dir().join(format!("grid-shapes-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("grid.model");
    grid.model.save(&path)?;
    // (The thread count is not stored: results do not depend on it.)
    let mut saved = grid.model.clone();
    saved.model.params.threads = None;
    assert_eq!(GraphModel::load(&path)?, saved);
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
