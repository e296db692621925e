//! Structured training over ranks: multiclass by the Crammer–Singer dual or SSG, chains and graphs by BCFW,
//! n-slack, 1-slack or SSG on every rank's shard (see [`crate::distributed`]), each a solver the trainer runs over the ranks with
//! one process's budget and checkpoints.

use super::*;
use crate::distributed::{Whole, file_line, refuse};
use maxmargin_io::graphs::GraphData;
use maxmargin_io::shard::Shard;
use maxmargin_optim::Collective;
use maxmargin_struct::{Graph, Inference, Marginals};

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
        if p.blocks > 1 {
            let reason =
                "cannot apply over ranks, whose shards are the blocks; use one block per rank";
            return Err(refuse("blocks", p.blocks.to_string(), reason));
        }
        if self.sample_weights.is_some() || self.warm.is_some() {
            let reason = "are not built over ranks yet";
            return Err(refuse(
                "sample weights and warm starts",
                String::new(),
                reason,
            ));
        }
        self.plan.check()
    }

    /// Refuses a task other than `task`, or a solver that does not train structures over ranks.
    fn refuse_solver_over_ranks(&self, task: Task) -> Result<(), Error> {
        let p = &self.params;
        let over_ranks = [
            StructSolverKind::Bcfw,
            StructSolverKind::Nslack,
            StructSolverKind::Oneslack,
            StructSolverKind::Ssg,
        ];
        if p.task != task || !over_ranks.contains(&p.solver) {
            let value = format!("{} with {:?}", p.task.kind(), p.solver).to_lowercase();
            let reason = "cannot train over several ranks yet; chains and graphs with bcfw, nslack, \
                          oneslack or ssg can";
            return Err(refuse("task and solver", value, reason));
        }
        self.refuse_over_ranks()
    }

    /// Trains `problem`, this rank's share, by the structural solver over ranks the parameters name (BCFW,
    /// n-slack, 1-slack or SSG; see [`StructuredSvm::refuse_solver_over_ranks`]).
    fn solve_over<S>(
        &self,
        comm: &dyn Collective,
        problem: &StructProblem<'_, S>,
        meta: (usize, usize, f64, u64),
    ) -> Result<maxmargin_optim::Fit<Vec<f64>>, Error>
    where
        S: OutputSpace,
        S::Output: Sync + Serialize + serde::de::DeserializeOwned,
    {
        let (p, n, here) = (&self.params, meta.0, problem.n_samples());
        match p.solver {
            StructSolverKind::Ssg => {
                let ssg = p.ssg().check()?.over_ranks(comm, n);
                self.with_over(comm, ssg, problem, meta, here)
            }
            StructSolverKind::Bcfw => {
                let bcfw = p.bcfw().check()?.over_ranks(comm, n);
                self.with_over(comm, bcfw, problem, meta, here)
            }
            StructSolverKind::Nslack => {
                let n_slack = self.n_slack()?;
                self.with_over(comm, n_slack.over_ranks(comm, n), problem, meta, here)
            }
            _ => {
                let one_slack = p
                    .one_slack()
                    .check()?
                    .with_gap_target(Some(self.gap_target()));
                self.with_over(comm, one_slack.over_ranks(comm, n), problem, meta, here)
            }
        }
    }

    /// Runs solver `s` over the ranks of `comm` from scratch or from this rank's checkpoint, writing this
    /// rank's checkpoints when asked (as [`StructuredSvm::with`] for one process).
    fn with_over<P, T>(
        &self,
        comm: &dyn Collective,
        mut s: T,
        p: &P,
        (n_samples, dim, lambda, rows): (usize, usize, f64, u64),
        n_local: usize,
    ) -> Result<maxmargin_optim::Fit<Vec<f64>>, Error>
    where
        T: Solver<P, Output = Vec<f64>>,
        T::State: Serialize + serde::de::DeserializeOwned,
    {
        let made = crate::checkpoint::Made {
            n_samples,
            dim,
            lambda,
            rows,
        };
        let trainer = self.params.trainer()?;
        let kind = self.checkpoint_kind();
        let (fit, _) = crate::distributed::checkpoint::train_over(
            comm,
            &trainer,
            &mut s,
            p,
            |s| Ok(s.init(p)?),
            (&kind, made, &self.params),
            (&self.plan, n_local),
            &mut crate::checkpoint::Heard::Printed,
        )?;
        Ok(fit)
    }

    /// Trains a chain model by BCFW (the default; synchronous mini-batch steps with one line search), n-slack
    /// or 1-slack cutting planes (`--solver nslack|oneslack`; rank 0 solves the QP and broadcasts `w`), or SSG
    /// on this rank's `shard` of a
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
        self.refuse_solver_over_ranks(Task::Chain)?;
        if self.shape != ChainShape::default() {
            return Err(refuse(
                "chain shape",
                format!("{:?}", self.shape),
                "second-order transitions and edge features are not built over ranks; train as one process",
            ));
        }
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
        let tags = data.labels.iter().flatten().map(|&t| (t, 1.0));
        super::some_part_weighted(&p.class_weights, tags, 1, |c| Ok(comm.allreduce_sum(c)?))?;
        crate::limits::check_weights(&data.source, d.saturating_add(l), l, sums[1] as usize)?;
        let x = sequences_with_bias(&data.sequences, d, p.bias, None);
        // As one process refuses them: the first position over the ranks (sequences in file order).
        let mine = crate::limits::overflowing_part(&x).map(|(g, p, largest)| {
            let key = (rank as f64) * 2f64.powi(40) + g as f64;
            (
                key,
                [
                    data.qids.get(g).map_or(0.0, |&q| q as f64),
                    p as f64,
                    largest,
                ],
            )
        });
        if let Some([qid, p, largest]) = crate::distributed::first_over_ranks(comm, mine)? {
            let at = format!(
                "position {} of sequence qid:{qid} of {}",
                p + 1.0,
                data.source.display()
            );
            return Err(crate::limits::overflowing_row(largest, &at));
        }
        let space = super::chain_space(&p.class_weights, self.width(d), l, ChainShape::default())?;
        let lambda = p.regularization.lambda(n)?;
        let problem = StructProblem::new(&space, &x, &data.labels, lambda)?;
        let rows = crate::inputs::space_digest(&space, &x, &data.labels, None);
        let meta = (n, space.dim(), lambda.get(), rows);
        let fit = self.solve_over(comm, &problem, meta)?;
        let parts = ReportParts {
            classes: Vec::new(),
            scaler: None,
            warnings: Vec::new(),
            max_abs: widths[2],
            over_ranks: true,
        };
        self.finish(fit, lambda.get(), (n, d, l), parts)
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
        if p.kernel.is_some() || p.approx.is_some() {
            let reason = "cannot train over several ranks yet: train in one process";
            return Err(refuse("kernel", "over ranks", reason));
        }
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
        let mut nnz = [data.x.nnz() as f64];
        comm.allreduce_sum(&mut nnz)?;
        crate::limits::check_weights(&data.source, whole.d, classes.len(), nnz[0] as usize)?;
        let y = classes.indices(&data).map_err(|e| file_line(e, start))?;
        // What one process records of its rows: the ranks' sketches, merged.
        let sketch = crate::inputs::RowSketch::of(&data).over_ranks(comm)?;
        let weights = self.class_weight_vector(&classes)?;
        let mut max_abs = [crate::convergence::max_abs(&data.x)];
        comm.allreduce_max(&mut max_abs)?;
        let x = rows_to_vecs(&data.x, whole.d, p.bias);
        drop(data);
        let k = classes.len();
        let space = MulticlassSpace::new(self.width(whole.d), k)?;
        let lambda = p.regularization.lambda(whole.n)?;
        let problem = StructProblem::new(&space, &x, &y, lambda)?.with_rescaling(p.rescaling)?;
        let rows = crate::inputs::space_digest(&space, &x, &y, None);
        let meta = (whole.n, space.dim(), lambda.get(), rows);
        let here = problem.n_samples();
        let fit = if ssg {
            self.with_over(
                comm,
                p.ssg().check()?.over_ranks(comm, whole.n),
                &problem,
                meta,
                here,
            )?
        } else {
            let cs = p.cs().check()?.with_class_weights(weights)?;
            let cs = cs.with_gap_target(Some(self.gap_target()));
            self.with_over(comm, cs.over_ranks(comm, whole.n), &problem, meta, here)?
        };
        let parts = ReportParts {
            classes: classes.classes,
            scaler: None,
            warnings: Vec::new(),
            max_abs: max_abs[0],
            over_ranks: true,
        };
        let mut report = self.finish(fit, lambda.get(), (whole.n, whole.d, k), parts)?;
        report.model.inputs = Some(Box::new(crate::inputs::Inputs {
            rows: Some(sketch),
            ..Default::default()
        }));
        Ok(report)
    }

    /// Trains a graph model on this rank's `shard` of a graph file split among `comm.size()` ranks (n-slack by
    /// default, BCFW, 1-slack or SSG), as [`StructuredSvm::fit_graph`] does in one process: the ranks agree on the
    /// node and edge feature counts, the labels and the inference method (`exact-tree` only when every
    /// rank's graphs are forests), and every rank gets the same model, its certificate qualified by the
    /// inference calls of all of them.
    ///
    /// # Errors
    /// As [`StructuredSvm::fit_graph`]; another solver, scaling, sample weights or a warm start (not built
    /// over ranks); shares that disagree on the dense row length or the edge feature count (naming this
    /// share's line); [`OptimError::Collective`] when another rank failed.
    pub fn fit_graph_shard(
        &self,
        comm: &dyn Collective,
        shard: maxmargin_io::shard::GraphShard,
        options: GraphOptions,
    ) -> Result<GraphFitReport, Error> {
        self.refuse_solver_over_ranks(Task::Graph)?;
        let data = shard.data;
        let src = &data.source;
        let nnz: usize = (data.graphs.iter().flat_map(|g| &g.nodes))
            .map(|v| v.as_row().nnz())
            .sum();
        let mut sums = [data.n_graphs() as f64, nnz as f64];
        comm.allreduce_sum(&mut sums)?;
        let dense = data.dense_width.map_or(0, |w| w.1);
        let mut widths = [
            data.n_features as f64,
            data.n_labels as f64,
            data.n_edge_features as f64,
            dense as f64,
        ];
        comm.allreduce_max(&mut widths)?;
        let (n, d, seen, n_edge) = (
            sums[0] as usize,
            widths[0] as usize,
            widths[1] as usize,
            widths[2] as usize,
        );
        agree_on_widths(&data, widths[3] as usize, n_edge)?;
        let l = super::graph::label_count(&data, &options, seen)?;
        crate::limits::check_features(src, d, sums[1] as usize)?;
        let labels = super::graph::all_labels(&data)?;
        match options.n_labels {
            Some(asked) => crate::limits::check_labels_asked("number of labels", asked, &labels)?,
            None => crate::limits::check_labels(src, "node label", l.saturating_sub(1), &labels)?,
        }
        let nodes = super::graph::weighted_nodes(&data, &labels);
        let agree = |c: &mut [f64; 2]| Ok(comm.allreduce_sum(c)?);
        super::some_part_weighted(&self.params.class_weights, nodes, 0, agree)?;
        crate::limits::check_weights(src, d.saturating_add(l), l, sums[1] as usize)?;
        let warnings = super::graph::one_label(l, src).into_iter().collect();
        let graphs = super::graph::built(&data, (d, self.params.bias, None))?;
        // As one process refuses them: the first node over the ranks, by its graph's line in the file.
        let mine =
            crate::limits::overflowing_part(graphs.iter().map(Graph::nodes)).map(|(g, p, big)| {
                let line = data.graphs.get(g).map_or(0, |r| r.line) as f64;
                (line, [line, p as f64, big])
            });
        if let Some([line, p, largest]) = crate::distributed::first_over_ranks(comm, mine)? {
            let at = format!("node {p} of the graph on line {line} of {}", src.display());
            return Err(crate::limits::overflowing_row(largest, &at));
        }
        let mut cycles = [f64::from(u8::from(!graphs.iter().all(Graph::is_forest)))];
        comm.allreduce_max(&mut cycles)?;
        let forests = cycles[0] == 0.0;
        let inference = options.inference.unwrap_or(if forests {
            Inference::ExactTree
        } else {
            Inference::TRWS
        });
        let space = self.graph_space(&options, (d, n_edge, l), inference)?;
        super::graph::checked(&space, &graphs, &data)?;
        let mut max_abs = [super::graph::max_abs(&graphs)];
        comm.allreduce_max(&mut max_abs)?;
        let lambda = self.params.regularization.lambda(n)?;
        let mut fractional = 0.0;
        let fit = if options.relaxed {
            let relaxed = super::graph::relaxed_space(&space)?;
            let labels: Vec<Marginals> = labels.into_iter().map(Marginals::from).collect();
            let problem = StructProblem::new(&relaxed, &graphs, &labels, lambda)?
                .with_rescaling(self.params.rescaling)?;
            let rows = crate::inputs::space_digest(&relaxed, &graphs, &labels, None);
            let svm = self.inferring_with(super::graph::RELAXED_METHOD);
            let fit = svm.solve_over(comm, &problem, (n, space.dim(), lambda.get(), rows))?;
            fractional = relaxed.fractional_calls() as f64;
            fit
        } else {
            let problem = StructProblem::new(&space, &graphs, &labels, lambda)?
                .with_rescaling(self.params.rescaling)?;
            let rows = crate::inputs::space_digest(&space, &graphs, &labels, None);
            let svm = self.inferring_with(inference.name());
            svm.solve_over(comm, &problem, (n, space.dim(), lambda.get(), rows))?
        };
        let mut calls = [
            space.inference_calls() as f64,
            space.uncertified_calls() as f64,
            fractional,
        ];
        comm.allreduce_sum(&mut calls)?;
        let fractional = calls[2] as usize;
        let calls = (calls[0] as usize, calls[1] as usize);
        let parts = ReportParts {
            classes: Vec::new(),
            scaler: None,
            warnings,
            max_abs: max_abs[0],
            over_ranks: true,
        };
        let report = self.finish(fit, lambda.get(), (n, d, l), parts)?;
        let mut report = super::graph::graph_report(report, &space, (inference, forests), calls);
        report.relaxed = options.relaxed;
        report.fractional_answers = fractional;
        Ok(report)
    }
}

/// Refuses a share whose dense rows are shorter than another share's (`widest`), or whose graphs with edges lack the edge features another share gives (`n_edge` per edge),
/// naming this share's line: one process reading the whole file refuses both.
fn agree_on_widths(data: &GraphData, widest: usize, n_edge: usize) -> Result<(), Error> {
    let at = |line: usize, field: &'static str, message: String| -> Error {
        IoError::Parse {
            path: data.source.clone(),
            line,
            column: 1,
            field,
            message,
        }
        .into()
    };
    if let Some((line, width)) = data.dense_width
        && width < widest
    {
        return Err(at(
            line,
            "features",
            format!("{width} features a node, where another rank's share of the file has {widest}"),
        ));
    }
    if n_edge > data.n_edge_features
        && let Some(g) = data.graphs.iter().find(|g| !g.edges.is_empty())
    {
        let message = if data.n_edge_features == 0 {
            format!("missing, where another rank's share of the file gives {n_edge} per edge")
        } else {
            format!(
                "{} features an edge, where another rank's share of the file has {n_edge}",
                data.n_edge_features
            )
        };
        return Err(at(g.line, "edge_features", message));
    }
    Ok(())
}
