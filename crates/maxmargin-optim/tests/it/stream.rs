//! Streamed DCD: rows handed out pass by pass in a new order each pass, the duals in the source's column.
//! It reaches the in-memory optimum whether the rows it still works on are held in memory or read every
//! pass, shrinking sets rows aside (fewer coordinate steps than rows read), and it needs about as many
//! passes as the in-memory method to the same certified gap.

use crate::lambda;
use maxmargin_core::testing::Lcg;
use maxmargin_core::vector::SparseRows;
use maxmargin_optim::stream::{ColumnVisit, RowVisit};
use maxmargin_optim::{
    Bias, BinaryLoss, BinaryProblem, Budget, DcdParams, Fit, OptimError, RowPasses, RowStream,
    StopReason, Streamed, Trainer,
};
use rand::SeedableRng;
use rand::seq::SliceRandom;

/// Rows in memory handed out as a stream would: every pass in a new seeded order, one number per row kept.
struct Shuffled<'a> {
    x: &'a SparseRows,
    y: &'a [f64],
    column: Vec<f64>,
    rng: rand_chacha::ChaCha8Rng,
    /// Rows handed to a visit, over all passes.
    handed: u64,
}

impl<'a> Shuffled<'a> {
    fn new(x: &'a SparseRows, y: &'a [f64]) -> Self {
        Self {
            x,
            y,
            column: vec![0.0; y.len()],
            rng: rand_chacha::ChaCha8Rng::seed_from_u64(5),
            handed: 0,
        }
    }

    fn order(&mut self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.y.len()).collect();
        order.shuffle(&mut self.rng);
        order
    }
}

/// Its order changes with no counter it could be set to: the defaults.
impl maxmargin_optim::Resumable for Shuffled<'_> {}

impl RowPasses for Shuffled<'_> {
    fn n_rows(&self) -> usize {
        self.y.len()
    }

    fn n_features(&self) -> usize {
        self.x.n_features()
    }

    fn pass(&mut self, row: &mut RowVisit<'_>) -> Result<(), OptimError> {
        for i in self.order() {
            self.handed += 1;
            row(self.x.row(i), self.y[i], 1.0)?;
        }
        Ok(())
    }

    fn pass_with_column(
        &mut self,
        reset: bool,
        row: &mut ColumnVisit<'_>,
    ) -> Result<(), OptimError> {
        self.pass_with_column_where(reset, &|_| true, row)
    }

    fn pass_with_column_where(
        &mut self,
        reset: bool,
        keep: &dyn Fn(f64) -> bool,
        row: &mut ColumnVisit<'_>,
    ) -> Result<(), OptimError> {
        if reset {
            self.column.fill(0.0);
        }
        for i in self.order() {
            if keep(self.column[i]) {
                self.handed += 1;
                row(self.x.row(i), self.y[i], 1.0, &mut self.column[i])?;
            }
        }
        Ok(())
    }
}

/// `n` noisy sparse rows over 30 features, labels from a hidden direction with 10% flipped.
fn data(n: usize) -> (SparseRows, Vec<f64>) {
    let mut lcg = Lcg::new(17);
    let hidden: Vec<f64> = (0..30).map(|_| lcg.unit() * 2.0 - 1.0).collect();
    let (mut rows, mut y) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let row: Vec<f64> = (0..30)
            .map(|_| {
                if lcg.unit() < 0.3 {
                    lcg.unit() * 2.0 - 1.0
                } else {
                    0.0
                }
            })
            .collect();
        let s: f64 = row.iter().zip(&hidden).map(|(a, b)| a * b).sum();
        y.push(if (s > 0.0) != (lcg.unit() < 0.1) {
            1.0
        } else {
            -1.0
        });
        rows.push(row);
    }
    let refs: Vec<&[f64]> = rows.iter().map(Vec::as_slice).collect();
    let mut x = SparseRows::from_dense_rows(&refs).unwrap();
    x.set_n_features_at_least(30);
    (x, y)
}

const LAMBDA: f64 = 1e-3;

/// The in-memory run to a relative gap of `gap`: its objective and its passes.
fn in_memory(x: &SparseRows, y: &[f64], (bias, loss): (Bias, BinaryLoss), gap: f64) -> (f64, f64) {
    let problem = BinaryProblem::new(x, y, lambda(LAMBDA), bias)
        .unwrap()
        .with_loss(loss);
    // ε at its default: the gap target tightens it (a tiny ε from the start can stall LIBLINEAR's
    // shrinking on rows set aside too early).
    let mut dcd = DcdParams::new().check().unwrap().with_gap_target(Some(gap));
    let fit = Trainer::new(Budget::epochs(1e5).with_gap(gap))
        .unwrap()
        .run(&mut dcd, &problem, &mut ())
        .unwrap();
    (fit.objective, fit.progress.epoch)
}

/// What a streamed run ends with: the fit, its certified gap and bound, and the source's reads.
struct StreamedFit {
    fit: Fit<maxmargin_optim::LinearWeights>,
    gap: f64,
    dual: f64,
    passes: u64,
}

fn streamed(
    rows: &mut Shuffled<'_>,
    (bias, loss): (Bias, BinaryLoss),
    gap: f64,
    hold_bytes: u64,
) -> StreamedFit {
    let dcd = DcdParams::new().check().unwrap().with_gap_target(Some(gap));
    let problem = RowStream::new(rows, LAMBDA, bias, loss)
        .unwrap()
        .with_hold_bytes(hold_bytes);
    let fit = Trainer::new(Budget::epochs(1e4).with_gap(gap))
        .unwrap()
        .run(&mut Streamed::new(dcd), &problem, &mut ())
        .unwrap();
    let last = fit.trace.last().unwrap();
    StreamedFit {
        gap: last.gap.unwrap(),
        dual: last.dual.unwrap(),
        passes: problem.passes(),
        fit,
    }
}

#[test]
fn streamed_dcd_reaches_the_optimum_held_or_read_and_shrinking_sets_rows_aside() {
    let (x, y) = data(2000);
    for shape in [
        (Bias::Feature, BinaryLoss::Hinge),
        (Bias::None, BinaryLoss::SquaredHinge),
        (Bias::Feature, BinaryLoss::Logistic),
    ] {
        let (best, _) = in_memory(&x, &y, shape, 1e-10);
        for hold in [0, u64::MAX] {
            let mut rows = Shuffled::new(&x, &y);
            let run = streamed(&mut rows, shape, 1e-6, hold);
            let fit = &run.fit;
            assert!(
                matches!(fit.stop, StopReason::Gap | StopReason::Converged),
                "{shape:?} hold {hold}: {:?}",
                fit.stop
            );
            assert!(run.gap <= 1e-6 * fit.objective, "{shape:?}: {}", run.gap);
            assert!(
                run.dual <= best * (1.0 + 1e-12),
                "{shape:?}: bound {}",
                run.dual
            );
            assert!(
                (fit.objective - best).abs() <= 1e-6 * best,
                "{shape:?} hold {hold}: {} vs {best}",
                fit.objective
            );
            if hold == 0 && shape.1 == BinaryLoss::Hinge {
                // Every pass reads the file, but shrinking hands out fewer rows than a pass holds (the
                // hinge's duals sit at both bounds; the squared hinge's box has no top).
                let read = run.passes * y.len() as u64;
                assert!(
                    (rows.handed as f64) < 0.7 * read as f64,
                    "{shape:?}: {} rows handed of {read}",
                    rows.handed
                );
            } else if shape.1 == BinaryLoss::Hinge {
                // Held, most passes read nothing: far fewer reads than passes of steps.
                assert!(
                    run.passes * 2 < fit.progress.iteration,
                    "{shape:?}: {} reads for {} passes",
                    run.passes,
                    fit.progress.iteration
                );
            }
        }
    }
}

#[test]
fn streamed_dcd_takes_about_the_in_memory_passes_to_the_same_gap() {
    let (x, y) = data(4000);
    for loss in [BinaryLoss::Hinge, BinaryLoss::Logistic] {
        let shape = (Bias::Feature, loss);
        let (_, memory) = in_memory(&x, &y, shape, 1e-4);
        for hold in [0, u64::MAX] {
            let fit = streamed(&mut Shuffled::new(&x, &y), shape, 1e-4, hold).fit;
            if hold == 0 && loss == BinaryLoss::Hinge {
                continue; // Read every pass, shrinking's bounds come from passes over the file.
            }
            assert!(
                fit.progress.epoch <= 1.5 * memory,
                "{loss:?} hold {hold}: {} passes streamed, {memory} in memory",
                fit.progress.epoch
            );
        }
    }
}
