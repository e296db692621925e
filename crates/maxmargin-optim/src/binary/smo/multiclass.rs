//! Multiclass kernel SVMs from the binary SMO: one-vs-one (LIBSVM's: a machine per pair of classes `a < b`
//! on their rows, `a` positive, each with `C` per example, so `λ = 1/(C·n_ab)`) or one-vs-rest (a machine
//! per class on every row). Machines are trained in parallel, each with an equal share of `cache_mb` (so the
//! caches together stay within it), and collected in order; a machine's result does not depend on its
//! share or the threads, so neither does the model.

use super::{KernelProblem, SmoParams};
use crate::error::{OptimError, invalid};
use crate::trainer::{Budget, Fit, Trainer};
use maxmargin_core::kernel::Kernel;
use maxmargin_core::objective::Regularization;
use maxmargin_core::vector::SparseRows;
use serde::{Deserialize, Serialize};

/// How the classes are split into binary machines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scheme {
    /// A machine per pair of classes; the prediction is the vote.
    OneVsOne,
    /// A machine per class against the rest; the prediction is the largest score.
    OneVsRest,
}

/// One binary machine: `f(x) = Σ_k coef_k K(x_{rows_k}, x) + b`, positive for `positive`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// The class its positive side stands for.
    pub positive: u32,
    /// One-vs-one: the class of its negative side; one-vs-rest: `None` (every other class).
    pub negative: Option<u32>,
    /// Its support vectors: indices of rows (of the training rows while training; of the model's support
    /// vectors in a model), increasing.
    pub rows: Vec<u32>,
    /// `α_k y_k` of each.
    pub coef: Vec<f64>,
    /// The intercept.
    pub b: f64,
}

/// How every machine is set up and solved.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KernelMulticlass {
    /// The split into machines.
    pub scheme: Scheme,
    /// `C` (or λ), converted with each machine's own number of rows.
    pub regularization: Regularization,
    /// The kernel.
    pub kernel: Kernel,
    /// SMO's parameters.
    pub smo: SmoParams,
    /// Each machine's budget.
    pub budget: Budget,
    /// Each machine's relative duality gap target.
    pub gap_target: Option<f64>,
}

impl KernelMulticlass {
    /// The machines' `(positive, negative)` classes, in training order.
    pub fn pairs(&self, n_classes: usize) -> Vec<(u32, Option<u32>)> {
        let k = n_classes as u32;
        match self.scheme {
            Scheme::OneVsOne => (0..k)
                .flat_map(|a| (a + 1..k).map(move |b| (a, Some(b))))
                .collect(),
            Scheme::OneVsRest => (0..k).map(|a| (a, None)).collect(),
        }
    }

    /// Trains every machine on `x` with class indices `classes` (each below `n_classes`) and optional class
    /// weights (one per class: a class's rows' losses count that many times, LIBSVM's `-wi`) and sample
    /// weights (one per row, times its class's weight in the machines that weigh its class), each empty
    /// for none, assembled into one fit ([`Fit::combined`]).
    ///
    /// # Errors
    /// [`OptimError::LengthMismatch`] for classes or weights of the wrong length,
    /// [`OptimError::InvalidParam`] for a class index out of range, a class with no rows, or bad
    /// parameters.
    pub fn fit(
        &self,
        x: &SparseRows,
        classes: &[u32],
        n_classes: usize,
        (class_weights, sample_weights): (&[f64], &[f64]),
    ) -> Result<Fit<Vec<Machine>>, OptimError> {
        crate::error::same_length(x.n_rows(), classes.len())?;
        if !sample_weights.is_empty() && sample_weights.len() != x.n_rows() {
            return Err(OptimError::LengthMismatch {
                rows: x.n_rows(),
                targets: sample_weights.len(),
            });
        }
        if !class_weights.is_empty() && class_weights.len() != n_classes {
            return Err(OptimError::LengthMismatch {
                rows: n_classes,
                targets: class_weights.len(),
            });
        }
        if let Some(&bad) = classes.iter().find(|&&c| c as usize >= n_classes) {
            return Err(invalid(
                "class index",
                bad,
                "must be below the number of classes",
            ));
        }
        if n_classes < 2 {
            return Err(invalid("classes", n_classes, "must be at least 2"));
        }
        let trainer = Trainer::new(self.budget)?;
        self.smo.check()?;
        let start = std::time::Instant::now();
        let weight = |c: u32| class_weights.get(c as usize).copied().unwrap_or(1.0);
        // Machines in parallel, each with an equal share of the cache (the cache changes only the speed:
        // a machine's result is the same with any share, so the model does not depend on the threads).
        let pairs = self.pairs(n_classes);
        let share = SmoParams {
            cache_mb: self.smo.cache_mb
                / rayon::current_num_threads().min(pairs.len()).max(1) as f64,
            ..self.smo
        };
        let machine = |(pos, neg): (u32, Option<u32>)| -> Result<Fit<Machine>, OptimError> {
            let rows: Vec<usize> = (0..x.n_rows())
                .filter(|&i| neg.is_none() || classes[i] == pos || Some(classes[i]) == neg)
                .collect();
            let sub;
            let xs = if neg.is_some() {
                sub = x.select(&rows);
                &sub
            } else {
                x
            };
            let y: Vec<f64> = rows
                .iter()
                .map(|&i| if classes[i] == pos { 1.0 } else { -1.0 })
                .collect();
            if !y.contains(&1.0) || !y.contains(&-1.0) {
                return Err(invalid(
                    "classes",
                    pos,
                    "each class needs rows of its own (a machine would see one class only)",
                ));
            }
            let sample = |i: usize| sample_weights.get(i).copied().unwrap_or(1.0);
            let weights: Vec<f64> = rows
                .iter()
                .map(|&i| {
                    if neg.is_none() && classes[i] != pos {
                        sample(i)
                    } else {
                        weight(classes[i]) * sample(i)
                    }
                })
                .collect();
            let lambda = self.regularization.lambda(rows.len())?;
            let mut problem = KernelProblem::new(xs, &y, lambda, self.kernel)?;
            if !class_weights.is_empty() || !sample_weights.is_empty() {
                problem = problem.with_example_weights(&weights)?;
            }
            let mut smo = share.check()?.with_gap_target(self.gap_target);
            let fit = trainer.run(&mut smo, &problem, &mut ())?;
            let (kept, coef): (Vec<u32>, Vec<f64>) = rows
                .iter()
                .zip(&fit.output.coef)
                .filter(|(_, c)| **c != 0.0)
                .map(|(&i, &c)| (i as u32, c))
                .unzip();
            Ok(Fit {
                output: Machine {
                    positive: pos,
                    negative: neg,
                    rows: kept,
                    coef,
                    b: fit.output.b,
                },
                objective: fit.objective,
                trace: fit.trace,
                stop: fit.stop,
                progress: fit.progress,
            })
        };
        use rayon::prelude::*;
        let fits: Vec<Fit<Machine>> = pairs
            .into_par_iter()
            .map(machine)
            .collect::<Result<_, _>>()?;
        Ok(Fit::combined(fits, start.elapsed().as_secs_f64()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trainer::StopReason;

    #[test]
    fn one_vs_one_trains_a_machine_per_pair_on_its_rows() {
        let x = SparseRows::from_dense_rows(&[
            &[0.0, 0.0],
            &[0.1, 0.0],
            &[1.0, 1.0],
            &[1.1, 1.0],
            &[0.0, 1.0],
            &[0.1, 1.1],
        ])
        .unwrap();
        let classes = [0, 0, 1, 1, 2, 2];
        let m = KernelMulticlass {
            scheme: Scheme::OneVsOne,
            regularization: Regularization::CSum(10.0),
            kernel: Kernel::Rbf { gamma: 1.0 },
            smo: SmoParams::default(),
            budget: Budget::epochs(1000.0),
            gap_target: Some(1e-6),
        };
        let fit = m.fit(&x, &classes, 3, (&[], &[])).unwrap();
        assert_eq!(fit.output.len(), 3);
        assert_eq!(fit.stop, StopReason::Converged);
        for machine in &fit.output {
            let neg = machine.negative.unwrap();
            assert!(machine.positive < neg);
            // Only rows of its two classes, and both signs.
            assert!(machine.rows.iter().all(|&r| {
                let c = classes[r as usize];
                c == machine.positive || c == neg
            }));
            let sum: f64 = machine.coef.iter().sum();
            assert!(sum.abs() < 1e-9, "sum of alpha y is {sum}");
        }
        let ovr = KernelMulticlass {
            scheme: Scheme::OneVsRest,
            ..m
        };
        let fit = ovr.fit(&x, &classes, 3, (&[], &[])).unwrap();
        assert_eq!(fit.output.len(), 3);
        assert!(fit.output.iter().all(|m| m.negative.is_none()));
        assert!(ovr.fit(&x, &classes, 4, (&[], &[])).is_err());
    }
}
