//! Training over ranks: each process holds a shard of the data (see [`maxmargin_io::shard`]) and the ranks
//! meet through a [`Collective`] (MPI with the `mpi` feature, threads in tests, one process otherwise). The
//! model is the same kind of file as one process's; every rank ends with it, rank 0 writes it.
//!
//! Built so far: binary DCD (CoCoA with an exact line search, [`maxmargin_optim::Dcd::train_distributed`]).
//! The other solvers refuse to run over several ranks, naming why.

use crate::Error;
use crate::linear::{FitReport, LinearSolver, LinearSvm};
use maxmargin_io::IoError;
use maxmargin_io::libsvm::BinaryLabels;
use maxmargin_io::shard::Shard;
use maxmargin_optim::dcd::Rounds;
use maxmargin_optim::{BinaryProblem, Collective, OptimError};

#[cfg(feature = "mpi")]
pub mod mpi;

/// Evaluations (certificates) every this many rounds when the budget does not say.
pub const DEFAULT_EVAL_EVERY: u64 = 5;

impl LinearSvm {
    /// Trains on this rank's `shard` of a dataset split among `comm.size()` ranks; every rank calls it with
    /// the same parameters and gets the same model. Stops on the same certified relative gap as one process.
    ///
    /// # Errors
    /// A solver, a flag or data that cannot be trained over ranks ([`Error::Optim`] naming why), labels that
    /// are not two classes over all shards, an empty shard, or [`OptimError::Collective`] when another rank
    /// failed.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), maxmargin::Error> {
    /// use maxmargin::io::shard::Shard;
    /// use maxmargin::optim::{Single, ThreadRanks};
    /// let data = maxmargin::datasets::heart_scale()?;
    /// let svm = maxmargin::LinearSvmParams::new().check()?;
    /// let one = svm.fit_shard(&Single, Shard { data: data.clone(), start: 0 })?.model;
    /// // Two ranks over threads, each with half the rows.
    /// let halves = ThreadRanks::run(2, |comm| {
    ///     use maxmargin::optim::Collective;
    ///     let rows: Vec<usize> = (0..270).filter(|i| i % 2 == comm.rank()).collect();
    ///     let shard = Shard { data: data.select(&rows), start: 0 };
    ///     svm.fit_shard(comm, shard).map(|r| r.model).map_err(|e| maxmargin::optim::OptimError::Qp(e.to_string()))
    /// });
    /// let two = halves[0].as_ref().unwrap();
    /// assert!((two.training.objective - one.training.objective).abs() < 1e-3 * one.training.objective);
    /// # Ok(()) }
    /// ```
    pub fn fit_shard(&self, comm: &dyn Collective, shard: Shard) -> Result<FitReport, Error> {
        let p = self.params();
        let refuse = |name: &'static str, value: String, reason: &'static str| -> Error {
            OptimError::InvalidParam {
                name,
                value,
                reason,
            }
            .into()
        };
        let LinearSolver::Dcd(dcd) = p.solver else {
            return Err(refuse(
                "solver",
                p.solver.to_string(),
                "cannot train over several ranks yet; dcd (the default) can",
            ));
        };
        if p.scale != maxmargin_core::scale::Scaling::None {
            let reason = "needs statistics of every shard and is not built over ranks yet; scale the file first";
            return Err(refuse(
                "scale",
                format!("{:?}", p.scale).to_lowercase(),
                reason,
            ));
        }
        if p.budget.max_seconds.is_some() {
            let reason = "would stop the ranks at different rounds; give --epochs";
            return Err(refuse("seconds", String::new(), reason));
        }
        if p.budget.tolerance.is_some() || p.budget.keep_best {
            let reason = "do not apply over ranks, which stop on the certified gap (--gap)";
            return Err(refuse("tolerance and keep-best", String::new(), reason));
        }
        if self.sample_weights.is_some()
            || self.plan != crate::checkpoint::CheckpointPlan::default()
        {
            let reason = "are not built over ranks yet";
            return Err(refuse(
                "sample weights and checkpoints",
                String::new(),
                reason,
            ));
        }
        let Shard { mut data, start } = shard;
        let source = data.source.clone();
        let (rank, size) = (comm.rank(), comm.size());
        if data.n_samples() == 0 {
            return Err(IoError::Unsplittable {
                path: source,
                message: format!("rank {rank} of {size} has no rows (its share starts at byte {start}): use fewer ranks"),
            }
            .into());
        }
        // The whole problem's size, width and classes.
        let mut sums = [data.n_samples() as f64, data.x.nnz() as f64];
        comm.allreduce_sum(&mut sums)?;
        let (n, nnz) = (sums[0] as usize, sums[1] as usize);
        let (lo, hi) = data
            .labels
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &l| {
                (a.min(l), b.max(l))
            });
        let mut extremes = [data.x.n_features() as f64, hi, -lo];
        comm.allreduce_max(&mut extremes)?;
        let d = extremes[0] as usize;
        crate::limits::check_features(&source, d, nnz)?;
        let labels = BinaryLabels {
            negative: -extremes[2],
            positive: extremes[1],
        };
        if labels.negative == labels.positive {
            return Err(IoError::NotBinary {
                path: source,
                found: 1,
                labels: labels.negative.to_string(),
            }
            .into());
        }
        let y = labels.targets(&data).map_err(|e| shard_line(e, start))?;
        data.x.set_n_features_at_least(d);
        let lambda = p.regularization.lambda(n)?;
        let mut problem = BinaryProblem::new(&data.x, &y, lambda, p.bias)?.with_loss(p.loss);
        let weights = self.row_weights(&labels, &data)?;
        if let Some(weights) = &weights {
            problem = problem.with_example_weights(weights)?;
        }
        let limits = Rounds {
            max_epochs: p.budget.max_epochs.unwrap_or(f64::INFINITY),
            max_rounds: p.budget.max_iterations.unwrap_or(u64::MAX),
            gap_tolerance: p
                .budget
                .gap_tolerance
                .unwrap_or(crate::convergence::DEFAULT_GAP),
            eval_every: if p.budget.eval_every_epochs.is_finite() {
                p.budget.eval_every_epochs.ceil().max(1.0) as u64
            } else {
                DEFAULT_EVAL_EVERY
            },
        };
        let fit = dcd.check()?.train_distributed(comm, &problem, n, limits)?;
        let mut warnings = Vec::new();
        let end = crate::linear::Finished {
            stop: fit.stop,
            objective: fit.objective,
            gap: fit.trace.last().and_then(|r| r.gap),
            progress: maxmargin_optim::Progress {
                iteration: fit.rounds,
                epoch: fit.rounds as f64,
            },
        };
        let advice = "a smaller --epsilon, or more rounds (--epochs)";
        let model = self.model(
            fit.weights,
            &labels,
            lambda.get(),
            n,
            end,
            None,
            advice,
            &mut warnings,
        )?;
        Ok(FitReport {
            model,
            trace: fit.trace,
            warnings,
        })
    }
}

/// A label error of a shard, with the file's line number.
fn shard_line(e: IoError, start: u64) -> Error {
    match e {
        IoError::Parse {
            path,
            line,
            column,
            field,
            message,
        } => match maxmargin_io::shard::file_line(&path, start, line) {
            Ok(line) => IoError::Parse {
                path,
                line,
                column,
                field,
                message,
            }
            .into(),
            Err(e) => e.into(),
        },
        other => other.into(),
    }
}
