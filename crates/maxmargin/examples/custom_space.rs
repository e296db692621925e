//! Your own output space, through the facade: ordinal regression on the levels 1..=K.
//!
//! The space scores a level `y` for an input `x` as `⟨w, ψ(x, y)⟩` with `ψ(x, y) = [y·x, e_y]` (one slope
//! shared by every level, and one offset per level), and charges `Δ(y, y′) = |y − y′|`: predicting 2 for a 5
//! costs 3. Loss-augmented inference is exact: a loop over the K levels. The example trains it with BCFW and
//! with 1-slack cutting planes, saves the model, loads it back and predicts.
//!
//! Run it with `cargo run -p maxmargin --example custom_space`; `cargo test` runs it too.

use maxmargin::core::vector::SparseVec;
use maxmargin::structured::{OutputSpace, StructError, Violation};
use maxmargin::structured_svm::{CustomModel, CustomSpace};
use maxmargin::{StructSolverKind, StructuredSvmParams, Task};
use serde::{Deserialize, Serialize};

/// Ordinal regression on `1..=levels` over `features` input features.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Ordinal {
    features: usize,
    levels: u32,
}

impl Ordinal {
    fn scores(&self, w: &[f64], x: &SparseVec) -> impl Iterator<Item = (u32, f64)> {
        let slope = x.as_row().dot(&w[..self.features]);
        (1..=self.levels)
            .map(move |y| (y, f64::from(y) * slope + w[self.features + y as usize - 1]))
    }
}

impl OutputSpace for Ordinal {
    type Input = SparseVec;
    type Output = u32;

    fn dim(&self) -> usize {
        self.features + self.levels as usize
    }

    fn check_input(&self, x: &SparseVec) -> Result<(), StructError> {
        match x.as_row().iter().map(|(j, _)| j).max() {
            Some(j) if j >= self.features => Err(StructError::Custom(format!(
                "feature {} beyond the space's {} features",
                j + 1,
                self.features
            ))),
            _ => Ok(()),
        }
    }

    fn check_output(&self, _x: &SparseVec, y: &u32) -> Result<(), StructError> {
        if (1..=self.levels).contains(y) {
            Ok(())
        } else {
            Err(StructError::Custom(format!(
                "level {y} is outside 1..={}",
                self.levels
            )))
        }
    }

    fn for_each_feature(&self, x: &SparseVec, y: &u32, visit: &mut dyn FnMut(usize, f64)) {
        for (j, v) in x.as_row().iter() {
            visit(j, f64::from(*y) * v);
        }
        visit(self.features + *y as usize - 1, 1.0);
    }

    fn loss(&self, y: &u32, y_hat: &u32) -> f64 {
        f64::from(y.abs_diff(*y_hat))
    }

    fn decode(&self, w: &[f64], x: &SparseVec) -> Result<u32, StructError> {
        let best = self
            .scores(w, x)
            .fold((1, f64::NEG_INFINITY), |b, c| if c.1 > b.1 { c } else { b });
        Ok(best.0)
    }

    fn loss_augmented(
        &self,
        w: &[f64],
        x: &SparseVec,
        y: &u32,
    ) -> Result<Violation<u32>, StructError> {
        self.check_output(x, y)?;
        // The loss is added to every level's score: the exact argmax over the K levels.
        let best = self
            .scores(w, x)
            .map(|(l, s)| (l, s + self.loss(y, &l)))
            .fold((1, f64::NEG_INFINITY), |b, c| if c.1 > b.1 { c } else { b });
        Ok(self.violation(w, x, y, best.0))
    }
}

impl CustomSpace for Ordinal {
    const NAME: &'static str = "ordinal";
}

/// Ratings 1..=5 from a hidden score of two features, with noise: a deterministic stream, so the example
/// prints the same numbers every time.
fn ratings(n: usize, seed: u64) -> (Vec<SparseVec>, Vec<u32>) {
    let mut lcg = maxmargin::testing::Lcg::new(seed);
    let mut next = move || lcg.unit();
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let (a, b) = (next() * 2.0 - 1.0, next() * 2.0 - 1.0);
        let hidden = 3.0 + 1.6 * a - 0.8 * b + 0.6 * (next() - 0.5);
        y.push(hidden.round().clamp(1.0, 5.0) as u32);
        x.push(SparseVec::from_dense(&[a, b]).expect("finite features"));
    }
    (x, y)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let space = Ordinal {
        features: 2,
        levels: 5,
    };
    let (train_x, train_y) = ratings(400, 1);
    let (test_x, test_y) = ratings(200, 2);
    let dir = tempfile::tempdir()?;
    for solver in [StructSolverKind::Bcfw, StructSolverKind::Oneslack] {
        let svm = StructuredSvmParams::new(Task::Custom)
            .solver(solver)
            .lambda(0.01)
            .check()?;
        let report = svm.fit(space.clone(), train_x.clone(), train_y.clone(), &mut ())?;
        let path = dir.path().join(format!("ordinal-{solver:?}.model"));
        report.model.save(&path)?;
        let model = CustomModel::<Ordinal>::load(&path)?;
        assert_eq!(model, report.model);
        let e = model.evaluate(&test_x, &test_y)?;
        println!(
            "{solver:?}: objective {:.6} (converged: {}), test mean |y - y'| {:.3}, exact {:.3}; x = (0.9, -0.5) rates {}",
            model.training.objective,
            model.training.converged,
            e.mean_loss,
            e.exact,
            model.predict(&SparseVec::from_dense(&[0.9, -0.5])?)?,
        );
        assert!(model.training.converged, "{solver:?} did not converge");
        assert!(e.mean_loss < 0.5, "{solver:?}: mean loss {}", e.mean_loss);
    }
    Ok(())
}

#[test]
fn the_example_runs() {
    main().expect("the custom-space example");
}
