//! Multiclass training over ranks: the Crammer–Singer dual on every rank's shard (see
//! [`crate::distributed`] and [`maxmargin_optim::CrammerSinger::train_distributed`]).

use super::*;
use crate::distributed::{DEFAULT_EVAL_EVERY, Whole, file_line, refuse};
use maxmargin_io::shard::Shard;
use maxmargin_optim::{Collective, Rounds};

impl StructuredSvm {
    /// The settings no solver over ranks takes yet.
    fn refuse_over_ranks(&self) -> Result<(), Error> {
        let p = &self.params;
        if p.scale != Scaling::None {
            let reason = "needs statistics of every shard and is not built over ranks yet; scale the file first";
            return Err(refuse(
                "scale",
                format!("{:?}", p.scale).to_lowercase(),
                reason,
            ));
        }
        if p.max_seconds.is_some() || p.tolerance.is_some() || p.keep_best {
            let reason =
                "do not apply over ranks, which stop on passes or the certified gap (--gap)";
            return Err(refuse(
                "seconds, tolerance and keep-best",
                String::new(),
                reason,
            ));
        }
        if self.sample_weights.is_some() || self.warm.is_some() {
            let reason = "are not built over ranks yet";
            return Err(refuse(
                "sample weights and warm starts",
                String::new(),
                reason,
            ));
        }
        let resumable = [
            StructSolverKind::Dcd,
            StructSolverKind::Ssg,
            StructSolverKind::Bcfw,
        ];
        if !self.plan.is_empty() && !resumable.contains(&p.solver) {
            let reason = "are built over ranks for every solver there but oneslack, so far";
            return Err(refuse("checkpoints", String::new(), reason));
        }
        self.plan.check()
    }

    /// This rank's checkpoint files for a run over `(n, dim, λ)` with `n_local` examples here.
    fn rank_files(
        &self,
        comm: &dyn Collective,
        (n_samples, dim, lambda): (usize, usize, f64),
        n_local: usize,
    ) -> crate::distributed::checkpoint::RankFiles<'_, StructuredSvmParams> {
        let made = crate::checkpoint::Made {
            n_samples,
            dim,
            lambda,
        };
        let kind = format!("checkpoint-ranks-{}", self.checkpoint_kind());
        crate::distributed::checkpoint::RankFiles::new(
            &self.plan,
            kind,
            made,
            &self.params,
            comm,
            n_local,
        )
    }

    /// The limits of a run over ranks.
    fn rounds(&self) -> Rounds {
        let p = &self.params;
        Rounds {
            max_epochs: p.max_passes.unwrap_or(f64::INFINITY),
            max_rounds: u64::MAX,
            gap_tolerance: self.gap_target(),
            eval_every: p
                .eval_every
                .map_or(DEFAULT_EVAL_EVERY, |e| e.ceil().max(1.0) as u64),
        }
    }

    /// As [`StructuredSvm::finish`], from a run over ranks.
    fn finish_rounds(
        &self,
        fit: maxmargin_optim::DistributedFit<Vec<f64>>,
        lambda: f64,
        shape: (usize, usize, usize),
        parts: ReportParts,
    ) -> Result<StructFitReport, Error> {
        let fit = maxmargin_optim::Fit {
            output: fit.output,
            objective: fit.objective,
            trace: fit.trace,
            stop: fit.stop,
            progress: maxmargin_optim::Progress {
                iteration: fit.rounds,
                epoch: fit.epochs,
            },
        };
        self.finish(fit, lambda, shape, parts)
    }

    /// Trains a chain model by BCFW (the default; synchronous mini-batch steps with one line search) or 1-slack
    /// cutting planes (`--solver oneslack`; rank 0 solves the QP and broadcasts `w`) on this rank's `shard` of a
    /// sequence file split among `comm.size()` ranks at sequence starts; every rank calls it with the same
    /// parameters and gets the same model.
    ///
    /// # Errors
    /// Another task or solver, or a flag that cannot apply over ranks, an empty shard, or
    /// [`OptimError::Collective`] when another rank failed.
    pub fn fit_chain_shard(
        &self,
        comm: &dyn Collective,
        shard: maxmargin_io::shard::SequenceShard,
    ) -> Result<StructFitReport, Error> {
        let p = &self.params;
        let bcfw = p.solver == StructSolverKind::Bcfw;
        let over_ranks = [
            StructSolverKind::Bcfw,
            StructSolverKind::Oneslack,
            StructSolverKind::Ssg,
        ];
        if p.task != Task::Chain || !over_ranks.contains(&p.solver) {
            let value = format!("{} with {:?}", p.task.kind(), p.solver).to_lowercase();
            let reason = "cannot train over several ranks yet; chains with bcfw (the default), oneslack or ssg can";
            return Err(refuse("task and solver", value, reason));
        }
        self.refuse_over_ranks()?;
        let data = shard.data;
        let (rank, size) = (comm.rank(), comm.size());
        if data.sequences.is_empty() {
            return Err(IoError::Unsplittable {
                path: data.source.clone(),
                message: format!(
                    "rank {rank} of {size} has no sequences (its share starts at byte {}): use fewer ranks",
                    shard.start
                ),
            }
            .into());
        }
        let nnz: usize = data
            .sequences
            .iter()
            .flatten()
            .map(|v| v.as_row().nnz())
            .sum();
        let mut sums = [data.sequences.len() as f64, nnz as f64];
        comm.allreduce_sum(&mut sums)?;
        let max_abs = (data.sequences.iter().flatten())
            .flat_map(|v| v.as_row().values().iter().map(|v| v.abs()))
            .fold(0.0, f64::max);
        let mut widths = [data.n_features as f64, data.n_labels.max(1) as f64, max_abs];
        comm.allreduce_max(&mut widths)?;
        let (n, d, l) = (sums[0] as usize, widths[0] as usize, widths[1] as usize);
        crate::limits::check_features(&data.source, d, sums[1] as usize)?;
        crate::limits::check_labels(&data.source, "tag number", l, &data.labels)?;
        let x = sequences_with_bias(&data.sequences, d, p.bias, None);
        let space = ChainSpace::new(self.width(d), l)?;
        let lambda = p.regularization.lambda(n)?;
        let problem = StructProblem::new(&space, &x, &data.labels, lambda)?;
        let fit = if p.solver == StructSolverKind::Ssg {
            let mut files =
                self.rank_files(comm, (n, space.dim(), lambda.get()), problem.n_samples());
            (p.ssg().check()?).train_distributed_with(
                comm,
                &problem,
                n,
                self.rounds(),
                &mut files,
            )?
        } else if bcfw {
            // BCFW's ε is its relative gap, as in one process.
            let limits = Rounds {
                gap_tolerance: p.gap.unwrap_or(p.epsilon),
                ..self.rounds()
            };
            let mut files =
                self.rank_files(comm, (n, space.dim(), lambda.get()), problem.n_samples());
            (p.bcfw().check()?).train_distributed_with(comm, &problem, n, limits, &mut files)?
        } else {
            p.one_slack()
                .check()?
                .train_distributed(comm, &problem, n, self.rounds())?
        };
        let parts = ReportParts {
            classes: Vec::new(),
            scaler: None,
            warnings: Vec::new(),
            max_abs: widths[2],
        };
        self.finish_rounds(fit, lambda.get(), (n, d, l), parts)
    }

    /// Trains a multiclass model by the Crammer–Singer dual (`dcd`, the multiclass default) on this rank's
    /// `shard` of a dataset split among `comm.size()` ranks; every rank calls it with the same parameters and
    /// gets the same model, certified as one process's.
    ///
    /// # Errors
    /// Another task or solver, or a flag that cannot apply over ranks ([`Error::Optim`] naming why), an
    /// empty shard, bad labels, or [`OptimError::Collective`] when another rank failed.
    pub fn fit_multiclass_shard(
        &self,
        comm: &dyn Collective,
        shard: Shard,
    ) -> Result<StructFitReport, Error> {
        let p = &self.params;
        let ssg = p.solver == StructSolverKind::Ssg;
        if p.task != Task::Multiclass || !(ssg || p.solver == StructSolverKind::Dcd) {
            let value = format!("{} with {:?}", p.task.kind(), p.solver).to_lowercase();
            let reason =
                "cannot train over several ranks yet; multiclass with dcd (the default) or ssg can";
            return Err(refuse("task and solver", value, reason));
        }
        self.refuse_over_ranks()?;
        let Shard { data, start } = shard;
        let whole = Whole::agree(comm, &data, start)?;
        let classes = ClassLabels {
            classes: Whole::classes(comm, &data, whole.n)?,
        };
        let y = classes.indices(&data).map_err(|e| file_line(e, start))?;
        let weights = self.class_weight_vector(&classes)?;
        let mut max_abs = [crate::convergence::max_abs(&data.x)];
        comm.allreduce_max(&mut max_abs)?;
        let x = rows_to_vecs(&data.x, whole.d, p.bias);
        drop(data);
        let k = classes.len();
        let space = MulticlassSpace::new(self.width(whole.d), k)?;
        let lambda = p.regularization.lambda(whole.n)?;
        let problem = StructProblem::new(&space, &x, &y, lambda)?;
        let mut files = self.rank_files(
            comm,
            (whole.n, space.dim(), lambda.get()),
            problem.n_samples(),
        );
        let fit = if ssg {
            (p.ssg().check()?).train_distributed_with(
                comm,
                &problem,
                whole.n,
                self.rounds(),
                &mut files,
            )?
        } else {
            let cs = p.cs().check()?.with_class_weights(weights)?;
            cs.train_distributed_with(comm, &problem, whole.n, self.rounds(), &mut files)?
        };
        let parts = ReportParts {
            classes: classes.classes,
            scaler: None,
            warnings: Vec::new(),
            max_abs: max_abs[0],
        };
        self.finish_rounds(fit, lambda.get(), (whole.n, whole.d, k), parts)
    }
}
