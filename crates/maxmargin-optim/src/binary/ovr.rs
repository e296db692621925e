//! One-vs-rest multiclass training from the binary solver: class `m` against the others, one binary DCD
//! problem per class, the classes in parallel. Predicting takes `argmax_m ⟨w_m, x⟩ + b_m`.
//!
//! Each class is trained exactly as a binary problem would be (same λ, bias, loss, seed), and the results are
//! returned in class order, so they do not depend on the number of threads.

use crate::dcd::DcdParams;
use crate::error::OptimError;
use crate::problem::{Bias, BinaryLoss, BinaryProblem, LinearWeights};
use crate::trainer::{Budget, Fit, Trainer};
use maxmargin_core::objective::Lambda;
use maxmargin_core::vector::SparseRows;

/// How every class's binary problem is set up and solved.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OneVsRest {
    /// λ of every binary problem.
    pub lambda: Lambda,
    /// The bias mode.
    pub bias: Bias,
    /// The loss.
    pub loss: BinaryLoss,
    /// The solver's parameters.
    pub dcd: DcdParams,
    /// The budget of each class.
    pub budget: Budget,
    /// Each class's relative duality gap target (see [`crate::Dcd::with_gap_target`]).
    pub gap_target: Option<f64>,
}

impl OneVsRest {
    /// Trains `n_classes` binary DCD problems, class `m` (targets `+1` where `classes[i] == m`) against the
    /// rest, and returns their fits in class order.
    ///
    /// # Errors
    /// [`OptimError::LengthMismatch`] when `classes` has not one entry per row, [`OptimError::InvalidParam`]
    /// for a class index out of range or bad parameters, or what a binary fit returns.
    pub fn fit(
        &self,
        x: &SparseRows,
        classes: &[usize],
        n_classes: usize,
    ) -> Result<Vec<Fit<LinearWeights>>, OptimError> {
        self.fit_weighted(x, classes, n_classes, &[], &[])
    }

    /// As [`OneVsRest::fit`], with class weights (one per class, or empty for none): in the problem of class
    /// `m` its own examples' losses count `class_weights[m]` times and the rest once (LIBLINEAR's `-wi` for
    /// one-vs-rest), each also `sample_weights[i]` times (one per example, or empty for none).
    ///
    /// # Errors
    /// As [`OneVsRest::fit`], and [`OptimError::LengthMismatch`] for weights not one per class or example.
    pub fn fit_weighted(
        &self,
        x: &SparseRows,
        classes: &[usize],
        n_classes: usize,
        class_weights: &[f64],
        sample_weights: &[f64],
    ) -> Result<Vec<Fit<LinearWeights>>, OptimError> {
        use rayon::prelude::*;
        if !class_weights.is_empty() && class_weights.len() != n_classes {
            return Err(OptimError::LengthMismatch {
                rows: n_classes,
                targets: class_weights.len(),
            });
        }
        if !sample_weights.is_empty() && sample_weights.len() != x.n_rows() {
            return Err(OptimError::LengthMismatch {
                rows: x.n_rows(),
                targets: sample_weights.len(),
            });
        }
        crate::error::same_length(x.n_rows(), classes.len())?;
        if let Some(&bad) = classes.iter().find(|&&c| c >= n_classes) {
            return Err(crate::error::invalid(
                "class index",
                bad,
                "must be below the number of classes",
            ));
        }
        let trainer = Trainer::new(self.budget)?;
        self.dcd.check()?;
        (0..n_classes)
            .into_par_iter()
            .map(|m| {
                let y: Vec<f64> = classes
                    .iter()
                    .map(|&c| if c == m { 1.0 } else { -1.0 })
                    .collect();
                let weights: Vec<f64> = if class_weights.is_empty() && sample_weights.is_empty() {
                    Vec::new()
                } else {
                    let own = class_weights.get(m).copied().unwrap_or(1.0);
                    let sample = |i: usize| sample_weights.get(i).copied().unwrap_or(1.0);
                    classes
                        .iter()
                        .enumerate()
                        .map(|(i, &c)| if c == m { own * sample(i) } else { sample(i) })
                        .collect()
                };
                let mut problem =
                    BinaryProblem::new(x, &y, self.lambda, self.bias)?.with_loss(self.loss);
                if !weights.is_empty() {
                    problem = problem.with_example_weights(&weights)?;
                }
                trainer.run(
                    &mut self.dcd.check()?.with_gap_target(self.gap_target),
                    &problem,
                    &mut (),
                )
            })
            .collect()
    }

    /// As [`OneVsRest::fit_weighted`], assembled into one multiclass fit: the weights in class-major blocks of
    /// `d + 1` (the bias weight last in each block, as `MulticlassSpace` lays them out with a constant
    /// feature) or `d` without a bias; the objective, gap, steps and passes summed over the classes, in one
    /// trace record; converged when every class converged, else the first other stop.
    ///
    /// # Errors
    /// As [`OneVsRest::fit_weighted`].
    pub fn fit_multiclass(
        &self,
        x: &SparseRows,
        classes: &[usize],
        n_classes: usize,
        (class_weights, sample_weights): (&[f64], &[f64]),
    ) -> Result<Fit<Vec<f64>>, OptimError> {
        let start = std::time::Instant::now();
        let fits = self.fit_weighted(x, classes, n_classes, class_weights, sample_weights)?;
        let d = x.n_features();
        let with_bias = self.bias != Bias::None;
        let width = (d + usize::from(with_bias)).max(1);
        let mut w = vec![0.0; width * n_classes];
        for (m, fit) in fits.iter().enumerate() {
            w[m * width..m * width + d].copy_from_slice(&fit.output.w);
            if with_bias {
                w[m * width + d] = fit.output.b;
            }
        }
        let fit = Fit::combined(fits, start.elapsed().as_secs_f64());
        Ok(Fit {
            output: w,
            objective: fit.objective,
            trace: fit.trace,
            stop: fit.stop,
            progress: fit.progress,
        })
    }
}
