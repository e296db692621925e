//! Training over ranks: each process holds a shard of the data (see [`maxmargin_io::shard`]) and the ranks
//! meet through a [`Collective`] (MPI with the `mpi` feature, threads in tests, one process otherwise). The
//! model is the same kind of file as one process's; every rank ends with it, rank 0 writes it.
//!
//! Every solver over ranks is an ordinary solver whose steps are rounds, run by the trainer over the ranks
//! (`Trainer::resume_over`) with one process's budget, evaluations and checkpoints: binary DCD (CoCoA with an
//! exact line search, [`maxmargin_optim::Dcd::over_ranks`]) and Pegasos (a local epoch, then the average:
//! [`maxmargin_optim::Pegasos::over_ranks`]), the
//! multiclass Crammer–Singer dual or SSG (`StructuredSvm::fit_multiclass_shard`) and chains and graphs by BCFW,
//! n-slack or 1-slack cutting planes or SSG (`StructuredSvm::fit_chain_shard`, `fit_graph_shard`). Averaging (Pegasos, SSG) works like mini-batches of
//! P examples, so it needs more passes than one process, and it drifts when shards hold different classes (a
//! file sorted by class): shuffle such a file first. The other solvers refuse to run over several ranks, naming
//! why.

use crate::Error;
use crate::linear::{FitReport, LinearSolver, LinearSvm};
use maxmargin_io::IoError;
use maxmargin_io::libsvm::BinaryLabels;
use maxmargin_io::shard::Shard;
use maxmargin_optim::{BinaryProblem, Collective, Solver, Trainer};

pub mod checkpoint;
#[cfg(feature = "mpi")]
pub mod mpi;

impl LinearSvm {
    /// Trains on this rank's `shard` of a dataset split among `comm.size()` ranks; every rank calls it with
    /// the same parameters and gets the same model. Stops on the same certified relative gap as one process.
    ///
    /// # Errors
    /// A solver, a flag or data that cannot be trained over ranks ([`Error::Optim`] naming why), labels that
    /// are not two classes over all shards, an empty shard, or [`OptimError::Collective`](maxmargin_optim::OptimError::Collective) when another rank
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
        if matches!(p.solver, LinearSolver::Pegasos(_)) && p.budget.max_iterations.is_some() {
            let reason =
                "counts each rank's own steps over ranks; give --epochs (one local epoch a round)";
            return Err(refuse("iterations", String::new(), reason));
        }
        if let Some(a) = &p.approx {
            let reason = "is fitted on the training rows (landmarks, gamma) and is not built over ranks yet; \
                          train in one process";
            return Err(refuse("approx", a.method, reason));
        }
        if p.scale != maxmargin_core::scale::Scaling::None {
            let reason = "needs statistics of every shard and is not built over ranks yet; scale the file first";
            return Err(refuse(
                "scale",
                format!("{:?}", p.scale).to_lowercase(),
                reason,
            ));
        }
        if self.sample_weights.is_some() {
            let reason = "are not built over ranks yet";
            return Err(refuse("sample weights", String::new(), reason));
        }
        self.plan.check()?;
        let Shard { mut data, start } = shard;
        let source = data.source.clone();
        let whole = Whole::agree(comm, &data, start)?;
        let (n, d) = (whole.n, whole.d);
        let (lo, hi) = data
            .labels
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &l| {
                (a.min(l), b.max(l))
            });
        let mut extremes = [hi, -lo];
        comm.allreduce_max(&mut extremes)?;
        let (lo, hi) = (-extremes[1], extremes[0]);
        // A label between the smallest and the largest is a third class, refused as one process refuses it
        // (the two alone were taken for the classes, and a valid row of the third was blamed): every rank
        // agrees on the smallest such label.
        let third = data.labels.iter().copied().find(|&l| l != lo && l != hi);
        if let Some([mid]) = first_over_ranks(comm, third.map(|l| (l, [l])))? {
            let labels = [lo, mid, hi].map(|l| l.to_string()).join(", ");
            let path = source;
            return Err(IoError::NotBinary {
                path,
                found: 3,
                at_least: true,
                labels,
            }
            .into());
        }
        if lo == hi {
            return Err(IoError::NotBinary {
                path: source,
                found: 1,
                at_least: false,
                labels: lo.to_string(),
            }
            .into());
        }
        let labels = BinaryLabels {
            negative: lo,
            positive: hi,
        };
        let labels = labels.with_positive(&source, p.positive)?;
        let y = labels.targets(&data).map_err(|e| file_line(e, start))?;
        // What one process records of its rows: the ranks' sketches, merged.
        let sketch = crate::inputs::RowSketch::of(&data).over_ranks(comm)?;
        data.x.set_n_features_at_least(d);
        let lambda = p.regularization.lambda(n)?;
        let mut problem = BinaryProblem::new(&data.x, &y, lambda, p.bias)?.with_loss(p.loss);
        let weights = self.row_weights(&labels, &data)?;
        if let Some(weights) = &weights {
            problem = problem.with_example_weights(weights)?;
        }
        let made = crate::checkpoint::Made {
            n_samples: n,
            dim: d,
            lambda: lambda.get(),
            rows: crate::inputs::examples_digest(data.x.rows(), &y, weights.as_deref()),
        };
        let trainer = Trainer::new(p.run_budget())?
            .stopping_every(p.watched_only().then_some(f64::INFINITY))?;
        let kind = self.checkpoint_kind();
        let tag = (kind.as_str(), made, p);
        let plan = (&self.plan, problem.n_samples());
        let (fit, advice) = match p.solver {
            LinearSolver::Pegasos(pegasos) => {
                let solver = pegasos.check()?.over_ranks(comm, n);
                (
                    ranked(comm, &trainer, solver, &problem, tag, plan)?,
                    "more rounds (--epochs), or dcd (the default), which certifies over ranks",
                )
            }
            LinearSolver::Dcd(dcd) => {
                let target = p.budget.gap_tolerance;
                let target = target.unwrap_or(crate::convergence::DEFAULT_GAP);
                let dcd = dcd.check()?.with_gap_target(Some(target));
                let solver = dcd.over_ranks(comm, n);
                (
                    ranked(comm, &trainer, solver, &problem, tag, plan)?,
                    "a smaller --epsilon, or more rounds (--epochs)",
                )
            }
            LinearSolver::Subgradient(_) | LinearSolver::Smo { .. } | LinearSolver::Newton(_) => {
                return Err(refuse(
                    "solver",
                    p.solver.to_string(),
                    "cannot train over several ranks yet; dcd (the default) and pegasos can",
                ));
            }
        };
        let mut warnings = Vec::new();
        let end = crate::linear::Finished::of(&fit);
        let on = crate::linear::TrainedOn {
            labels,
            lambda: lambda.get(),
            n_samples: n,
        };
        let mut model = self.model(fit.output, on, end, None, advice, &mut warnings)?;
        model.inputs = Some(Box::new(crate::inputs::Inputs {
            rows: Some(sketch),
            ..Default::default()
        }));
        Ok(FitReport {
            model,
            trace: fit.trace,
            warnings,
        })
    }
}

pub(crate) use crate::error::refuse;

/// Trains a binary `solver` over the ranks of `comm` from this rank's checkpoint or from scratch, as the plan
/// asks (see [`checkpoint::train_over`]).
fn ranked<'p, S>(
    comm: &dyn Collective,
    trainer: &Trainer,
    mut solver: S,
    problem: &BinaryProblem<'p>,
    tag: (&str, crate::checkpoint::Made, &crate::LinearSvmParams),
    plan: (&crate::checkpoint::CheckpointPlan, usize),
) -> Result<maxmargin_optim::Fit<maxmargin_optim::LinearWeights>, Error>
where
    S: Solver<BinaryProblem<'p>, Output = maxmargin_optim::LinearWeights>,
    S::State: serde::Serialize + serde::de::DeserializeOwned,
{
    let init = |s: &mut S| Ok(s.init(problem)?);
    let (fit, _) = checkpoint::train_over(
        comm,
        trainer,
        &mut solver,
        problem,
        init,
        tag,
        plan,
        &mut crate::checkpoint::Heard::Printed,
    )?;
    Ok(fit)
}

/// The whole problem's size and width, agreed by the ranks.
pub(crate) struct Whole {
    /// Examples over all ranks.
    pub(crate) n: usize,
    /// Features: the widest shard's.
    pub(crate) d: usize,
}

impl Whole {
    /// Sums the rows and non-zeros and takes the widest shard, refusing an empty shard and a width the
    /// non-zeros do not justify (as one process's `limits::check_features`).
    pub(crate) fn agree(
        comm: &dyn Collective,
        data: &maxmargin_io::libsvm::LabeledData,
        start: u64,
    ) -> Result<Self, Error> {
        let (rank, size) = (comm.rank(), comm.size());
        if data.n_samples() == 0 {
            return Err(IoError::Unsplittable {
                path: data.source.clone(),
                message: format!(
                    "rank {rank} of {size} has no rows (its share starts at byte {start}): use fewer ranks"
                ),
            }
            .into());
        }
        let mut sums = [data.n_samples() as f64, data.x.nnz() as f64];
        comm.allreduce_sum(&mut sums)?;
        let mut width = [data.x.n_features() as f64];
        comm.allreduce_max(&mut width)?;
        let (n, nnz, d) = (sums[0] as usize, sums[1] as usize, width[0] as usize);
        crate::limits::check_features(&data.source, d, nnz)?;
        Self::check_row_norms(comm, data, start)?;
        Ok(Self { n, d })
    }

    /// One process's `limits::check_row_norms` over the ranks: every rank refuses, naming the file's first
    /// line (over all shards) whose row's squared norm overflows, so none is left waiting for the others.
    fn check_row_norms(
        comm: &dyn Collective,
        data: &maxmargin_io::libsvm::LabeledData,
        start: u64,
    ) -> Result<(), Error> {
        let mine = crate::limits::first_overflowing(data.x.rows()).map(|(i, largest)| {
            // The file's line (reading the bytes before the shard; its own line, should that fail), so that
            // every rank reaches the collectives below whatever happens here.
            let local = data.lines.get(i).copied().unwrap_or(i + 1);
            let line =
                maxmargin_io::shard::file_line(&data.source, start, local).unwrap_or(local) as f64;
            // Shards hold the file's lines in order: the smallest line is the first.
            (line, [line, largest])
        });
        match first_over_ranks(comm, mine)? {
            Some([line, largest]) => Err(crate::limits::overflowing_row(
                largest,
                &format!("line {line} of {}", data.source.display()),
            )),
            None => Ok(()),
        }
    }

    /// The distinct labels of every shard, sorted: each rank's set laid in its own row of a table that one
    /// allreduce sums (the set sizes checked first, so the table follows the data).
    pub(crate) fn classes(
        comm: &dyn Collective,
        data: &maxmargin_io::libsvm::LabeledData,
        n: usize,
    ) -> Result<Vec<f64>, Error> {
        let mut mine = data.labels.clone();
        mine.sort_by(f64::total_cmp);
        mine.dedup();
        crate::limits::check_class_count(&data.source, &mine, n)?;
        let mut widest = [mine.len() as f64];
        comm.allreduce_max(&mut widest)?;
        let (width, rank) = (widest[0] as usize, comm.rank());
        let mut table = vec![0.0; 2 * width * comm.size()];
        for (j, &c) in mine.iter().enumerate() {
            table[2 * (rank * width + j)] = c;
            table[2 * (rank * width + j) + 1] = 1.0;
        }
        comm.allreduce_sum(&mut table)?;
        let mut all: Vec<f64> = table
            .chunks(2)
            .filter(|p| p[1] == 1.0)
            .map(|p| p[0])
            .collect();
        all.sort_by(f64::total_cmp);
        all.dedup();
        crate::limits::check_classes(&data.source, &all, n)?;
        crate::limits::check_two_classes(&data.source, &all)?;
        Ok(all)
    }
}

/// A label error of a shard, with the file's line number.
pub(crate) fn file_line(e: IoError, start: u64) -> Error {
    maxmargin_io::shard::in_file(e, start).into()
}

/// The first of the ranks' findings (a fault each may have found in its share), agreed by every rank: each
/// gives `(key, numbers)` or `None`; all get the numbers of the smallest key (ties to the lowest rank), or
/// `None` when no rank found one. One allreduce, and two more when something was found, so that every rank
/// can refuse the same input in the same words and none is left waiting.
///
/// # Errors
/// What the collective reports.
pub(crate) fn first_over_ranks<const N: usize>(
    comm: &dyn Collective,
    mine: Option<(f64, [f64; N])>,
) -> Result<Option<[f64; N]>, Error> {
    // The smallest (key, rank), as the largest of their negatives.
    let mut first = [mine.map_or(f64::NEG_INFINITY, |m| -m.0), f64::NEG_INFINITY];
    comm.allreduce_max(&mut first[..1])?;
    if first[0] == f64::NEG_INFINITY {
        return Ok(None);
    }
    let holds = mine.is_some_and(|m| -m.0 == first[0]);
    first[1] = if holds {
        -(comm.rank() as f64)
    } else {
        f64::NEG_INFINITY
    };
    comm.allreduce_max(&mut first[1..])?;
    let mut numbers = match mine {
        Some((_, n)) if holds && -(comm.rank() as f64) == first[1] => n,
        _ => [0.0; N],
    };
    comm.allreduce_sum(&mut numbers)?;
    Ok(Some(numbers))
}
