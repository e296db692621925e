//! Graph and grid models: a label per node of any pairwise graph, trained by any structural solver through
//! [`GraphSpace`], with the inference method chosen per model and the certificate qualified when that
//! method is approximate. Saved under the kind `graph`: the weights and training summary of a
//! [`StructuredModel`] (task [`Task::Graph`]) beside the space they were trained in.

use super::*;
use maxmargin_io::graphs::{GraphData, GraphRecord};
use maxmargin_struct::{Graph, GraphSpace, Inference, Marginals, RelaxedGraphSpace};

/// The model kind of graph model files.
pub const GRAPH_KIND: &str = "graph";

/// How a graph model is built besides the solver: the inference method and the pairwise tables.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[non_exhaustive]
pub struct GraphOptions {
    /// The inference method; `None` chooses `exact-tree` when every training graph is a forest and `trws`
    /// otherwise (certified wherever the relaxation is tight, at a cost near max-product's).
    pub inference: Option<Inference>,
    /// Directed pairwise tables (read from an edge's first end to its second) instead of symmetric ones.
    pub directed: bool,
    /// The number of node labels; `None` takes one past the largest label in the training graphs (give it
    /// when some label does not occur there, so that the model can predict it and evaluate data with it).
    pub n_labels: Option<usize>,
    /// Train over the LP relaxation (`ad3` only; Finley & Joachims 2008): loss-augmented inference returns
    /// AD3's best point of the local polytope, fractional where the relaxation is not tight, with AD3's dual
    /// bound (an over-generating oracle, no branch and bound), and the certified gap is the relaxed
    /// problem's ([`GraphFitReport::relaxed`]). Prediction still returns labellings.
    pub relaxed: bool,
}

impl GraphOptions {
    /// Automatic inference, symmetric tables.
    pub fn new() -> Self {
        Self::default()
    }

    /// The inference method.
    pub fn inference(mut self, inference: Inference) -> Self {
        self.inference = Some(inference);
        self
    }

    /// Directed pairwise tables.
    pub fn directed(mut self, directed: bool) -> Self {
        self.directed = directed;
        self
    }

    /// Train over the LP relaxation (see [`GraphOptions::relaxed`](#structfield.relaxed)).
    pub fn relaxed(mut self, relaxed: bool) -> Self {
        self.relaxed = relaxed;
        self
    }

    /// The number of node labels (labels `0..n_labels`), instead of those the training graphs show.
    pub fn n_labels(mut self, n_labels: usize) -> Self {
        self.n_labels = Some(n_labels);
        self
    }
}

/// A trained graph model: the weights and training summary, and the space they score in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphModel {
    /// Weights, feature count (without the bias feature), labels, scaler, parameters and training summary.
    pub model: StructuredModel,
    /// The output space: node features (with the bias feature), edge features, tables, loss, inference.
    pub space: GraphSpace,
}

/// A graph model with its training trace and warnings.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphFitReport {
    /// The model.
    pub model: GraphModel,
    /// Every evaluation.
    pub trace: Vec<TraceRecord>,
    /// What a user should know about the run, one line each without the `warning:` prefix.
    pub warnings: Vec<String>,
    /// Whether the final duality gap is a certificate: every inference call was exact, certified its answer,
    /// or bounded the maximum it may have missed (trws, ad3), which the primal then adds up. When not, the
    /// gap was measured with an approximate oracle and the model is not marked converged, even where the gap
    /// is within the target; a run without a gap (the perceptron) is not certified either.
    pub certified: bool,
    /// Inference calls made in training, and how many of them could not certify their answer.
    pub inference_calls: (usize, usize),
    /// Whether training ran over the LP relaxation ([`GraphOptions::relaxed`]): the certificate, if any, is
    /// then the relaxed problem's, whose hinges (maxima over the local polytope) are at least the true ones.
    pub relaxed: bool,
    /// Over the relaxation, how many loss-augmented answers were fractional points (0 otherwise).
    pub fractional_answers: usize,
}

/// The parse error for graph `rec` of `source` in `field`.
pub(super) fn at_line(
    source: &Path,
    rec: &GraphRecord,
    field: &'static str,
    message: String,
) -> Error {
    IoError::Parse {
        path: source.to_path_buf(),
        line: rec.line,
        column: 1,
        field,
        message,
    }
    .into()
}

/// Graph `rec` with its node features scaled and widened by the constant feature, checked as a graph.
fn graph_of(
    source: &Path,
    rec: &GraphRecord,
    (n_features, bias, scaler): (usize, bool, Option<&Scaler>),
) -> Result<Graph, Error> {
    let nodes = sequences_with_bias(std::slice::from_ref(&rec.nodes), n_features, bias, scaler)
        .pop()
        .unwrap_or_default();
    let mut g = Graph::new(nodes, rec.edges.clone())
        .map_err(|e| at_line(source, rec, "edges", e.to_string()))?;
    if let Some(v) = &rec.node_weights {
        g = g
            .with_node_weights(v.clone())
            .map_err(|e| at_line(source, rec, "node_weights", e.to_string()))?;
    }
    match &rec.edge_features {
        Some(rows) => g
            .with_edge_features(rows.clone())
            .map_err(|e| at_line(source, rec, "edge_features", e.to_string())),
        None => Ok(g),
    }
}

/// Every node's label and its own weight (1 where the graph gives none), for `some_part_weighted`.
pub(super) fn weighted_nodes<'a>(
    data: &'a GraphData,
    labels: &'a [Vec<u32>],
) -> impl Iterator<Item = (u32, f64)> + 'a {
    data.graphs.iter().zip(labels).flat_map(|(g, y)| {
        let own = move |i: usize| {
            (g.node_weights.as_ref()).map_or(1.0, |w| w.get(i).copied().unwrap_or(1.0))
        };
        y.iter().enumerate().map(move |(i, &label)| (label, own(i)))
    })
}

/// The labels of `rec`, which training and evaluation need.
pub(super) fn labels_of<'a>(source: &Path, rec: &'a GraphRecord) -> Result<&'a Vec<u32>, Error> {
    rec.labels.as_ref().ok_or_else(|| {
        at_line(
            source,
            rec,
            "labels",
            "missing: training and evaluation need a label per node".into(),
        )
    })
}

impl StructuredSvm {
    /// Trains a graph model on graphs read by [`maxmargin_io::graphs`].
    ///
    /// # Errors
    /// Parameters made for another task, a graph without labels, a bad graph (naming its line), a graph
    /// the inference method cannot take (a cycle for `exact-tree`), or what the solver reports.
    pub fn fit_graph(
        &self,
        data: &GraphData,
        options: GraphOptions,
        observer: &mut (dyn Observer + Send),
    ) -> Result<GraphFitReport, Error> {
        if self.params.task != Task::Graph {
            return Err(crate::error::refuse(
                "task",
                self.params.task.kind(),
                "fit_graph takes parameters made with StructuredSvmParams::new(Task::Graph)",
            ));
        }
        self.check_sample_weights(Task::Graph)?;
        let src = &data.source;
        super::model::nonempty(data.n_graphs(), src)?;
        let d = data.n_features;
        let l = label_count(data, &options, data.n_labels)?;
        let nnz = data
            .graphs
            .iter()
            .flat_map(|g| &g.nodes)
            .map(|v| v.as_row().nnz())
            .sum();
        crate::limits::check_features(src, d, nnz)?;
        let labels = all_labels(data)?;
        match options.n_labels {
            Some(asked) => crate::limits::check_labels_asked("number of labels", asked, &labels)?,
            None => crate::limits::check_labels(src, "node label", l.saturating_sub(1), &labels)?,
        }
        let nodes = weighted_nodes(data, &labels);
        super::some_part_weighted(&self.params.class_weights, nodes, 0, super::alone)?;
        // Unary weights per label, and the L × L pairwise table.
        crate::limits::check_weights(src, d.saturating_add(l), l, nnz)?;
        let mut warnings = Vec::new();
        warnings.extend(one_label(l, src));
        let nodes = || {
            data.graphs
                .iter()
                .flat_map(|g| &g.nodes)
                .map(SparseVec::as_row)
        };
        let scaler = crate::convergence::fit_scaler_on(
            self.params.scale,
            nodes,
            data.n_nodes(),
            d,
            &mut warnings,
        )?;
        let graphs = built(data, (d, self.params.bias, scaler.as_ref()))?;
        node_norms(&graphs, data)?;
        let forests = graphs.iter().all(Graph::is_forest);
        let inference = options.inference.unwrap_or(if forests {
            Inference::ExactTree
        } else {
            Inference::TRWS
        });
        let space = self.graph_space(&options, (d, data.n_edge_features, l), inference)?;
        checked(&space, &graphs, data)?;
        let max_abs = max_abs(&graphs);
        let ex = Examples {
            x: graphs,
            y: labels,
        };
        let mut fractional = 0;
        let (fit, lambda) = if options.relaxed {
            let relaxed = relaxed_space(&space)?;
            let y: Vec<Marginals> = ex.y.iter().cloned().map(Marginals::from).collect();
            let svm = self.inferring_with(RELAXED_METHOD);
            let fit = svm.run(&relaxed, (&ex.x, &y), observer)?;
            fractional = relaxed.fractional_calls();
            fit
        } else {
            let svm = self.inferring_with(inference.name());
            svm.run(&space, (&ex.x, &ex.y), observer)?
        };
        let report = ReportParts {
            classes: Vec::new(),
            scaler,
            warnings,
            max_abs,
            over_ranks: false,
        };
        let report = self.finish(fit, lambda, (ex.x.len(), d, l), report)?;
        let calls = (space.inference_calls(), space.uncertified_calls());
        let mut report = graph_report(report, &space, (inference, forests), calls);
        report.relaxed = options.relaxed;
        report.fractional_answers = fractional;
        Ok(report)
    }
}

/// How a run over the LP relaxation is named in its checkpoints' kind (their outputs are marginals).
pub(super) const RELAXED_METHOD: &str = "ad3-relaxed";

/// The relaxation of `space` for [`GraphOptions::relaxed`], refused for a method other than ad3.
pub(super) fn relaxed_space(space: &GraphSpace) -> Result<RelaxedGraphSpace, Error> {
    RelaxedGraphSpace::new(space.clone()).map_err(|_| {
        crate::error::refuse(
            "relaxed",
            space.inference().name(),
            "trains over the LP relaxation, whose fractional points and dual bound ad3 gives: use it with \
             --inference ad3",
        )
    })
}

/// The graph model and report of a finished run in `space`, its certificate qualified by the inference it
/// trained with (see [`qualify`]).
pub(super) fn graph_report(
    mut report: StructFitReport,
    space: &GraphSpace,
    (inference, forests): (Inference, bool),
    calls: (usize, usize),
) -> GraphFitReport {
    let certified = qualify(&mut report, inference, forests, calls);
    GraphFitReport {
        model: GraphModel {
            model: report.model,
            space: space.with_inference(inference),
        },
        trace: report.trace,
        warnings: report.warnings,
        certified,
        inference_calls: calls,
        relaxed: false,
        fractional_answers: 0,
    }
}

impl StructuredSvm {
    /// The space graphs of `d` node features and `n_edge` edge features with `l` labels are trained in.
    pub(super) fn graph_space(
        &self,
        options: &GraphOptions,
        (d, n_edge, l): (usize, usize, usize),
        inference: Inference,
    ) -> Result<GraphSpace, Error> {
        Ok(GraphSpace::with_costs(
            self.width(d),
            n_edge,
            super::weighted_costs(&self.params.class_weights, l, 0)?,
            options.directed,
            inference,
        )?)
    }
}

/// The graphs of `data` with their node features scaled and widened by the constant feature.
pub(super) fn built(
    data: &GraphData,
    shape: (usize, bool, Option<&Scaler>),
) -> Result<Vec<Graph>, Error> {
    data.graphs
        .iter()
        .map(|g| graph_of(&data.source, g, shape))
        .collect()
}

/// Checks that `space` takes every graph of `data` (`graphs`, built from it), naming the line of one it
/// does not (a cycle for `exact-tree`, too few edge features).
pub(super) fn checked(space: &GraphSpace, graphs: &[Graph], data: &GraphData) -> Result<(), Error> {
    for (g, rec) in graphs.iter().zip(&data.graphs) {
        space
            .check_input(g)
            .map_err(|e| at_line(&data.source, rec, "edges", e.to_string()))?;
    }
    Ok(())
}

/// Refuses the first node whose features, as trained, overflow when squared and summed (by its graph's
/// line), as rows in memory are refused.
pub(super) fn node_norms(graphs: &[Graph], data: &GraphData) -> Result<(), Error> {
    crate::limits::check_part_norms(graphs.iter().map(Graph::nodes), |g, p| {
        let line = data.graphs.get(g).map_or(0, |r| r.line);
        format!(
            "node {p} of the graph on line {line} of {}",
            data.source.display()
        )
    })
}

/// The largest absolute node feature value.
pub(super) fn max_abs(graphs: &[Graph]) -> f64 {
    graphs
        .iter()
        .flat_map(Graph::nodes)
        .flat_map(|v| v.as_row().values().iter().map(|v| v.abs()))
        .fold(0.0, f64::max)
}

/// The labels of every graph of `data`, which training needs.
pub(super) fn all_labels(data: &GraphData) -> Result<Vec<Vec<u32>>, Error> {
    data.graphs
        .iter()
        .map(|g| labels_of(&data.source, g).cloned())
        .collect()
}

/// The number of node labels: `options.n_labels` (every label of `data` below it, else refused by line), or
/// `seen`, one past the largest label of the training graphs (of every rank's share over ranks).
pub(super) fn label_count(
    data: &GraphData,
    options: &GraphOptions,
    seen: usize,
) -> Result<usize, Error> {
    match options.n_labels {
        None => Ok(seen.max(1)),
        Some(0) => Err(crate::error::refuse(
            "n_labels",
            "0",
            "a graph model needs at least one label",
        )),
        Some(k) => {
            if let Some(rec) = data.graphs.iter().find(|g| {
                g.labels
                    .as_ref()
                    .is_some_and(|y| y.iter().any(|&v| v as usize >= k))
            }) {
                let top = rec.labels.iter().flatten().max().copied().unwrap_or(0);
                return Err(at_line(
                    &data.source,
                    rec,
                    "labels",
                    format!("label {top} is outside the {k} labels asked for (0..{k})"),
                ));
            }
            Ok(k)
        }
    }
}

/// The warning for a model of one label, which predicts it everywhere.
pub(super) fn one_label(l: usize, source: &Path) -> Option<String> {
    (l == 1).then(|| {
        format!(
            "every node label in {} is 0: the model has one label and predicts it everywhere (give the \
             number of labels, --labels or GraphOptions::n_labels, when the training data lacks some)",
            source.display()
        )
    })
}

/// Qualifies `report`'s certificate by the inference it was trained with, given whether every training
/// graph is a forest and its inference `(calls, uncertified)` answers; returns whether the gap is a
/// certificate. TRW-S's and AD3's answers come with bounds on the maxima, which the solvers' primal
/// objectives add up where the answer was not certified: their gaps are certificates whatever they
/// certified. Where the gap is not one, the model is not marked converged and a warning says why.
fn qualify(
    report: &mut StructFitReport,
    inference: Inference,
    forests: bool,
    (calls, uncertified): (usize, usize),
) -> bool {
    let exact = match inference {
        Inference::ExactTree
        | Inference::BruteForce
        | Inference::Trws { .. }
        | Inference::Ad3 { .. } => true,
        Inference::MaxProduct { .. } => forests,
        // Every answer exact, counted in this process: a run resumed with no call left to make would count
        // none and carry the primal its earlier answers gave.
        _ => calls > 0 && uncertified == 0,
    };
    let training = &mut report.model.training;
    let has_gap = training.gap.is_some();
    if !exact {
        let gap = training.gap.map_or("none".into(), |g| format!("{g:.3e}"));
        let why = if matches!(inference, Inference::Qpbo) {
            format!("{uncertified} of its {calls} answers were not certified exact")
        } else {
            "it is approximate on graphs with cycles".to_string()
        };
        report.warnings.push(format!(
            "inference is {}, and {why}: the duality gap ({gap}) was measured with an approximate oracle \
             and is not a certificate; the model is not marked converged (exact-tree is exact on forests, \
             trws and ad3 bound every answer, qpbo is exact on two labels with attractive tables, \
             brute-force on small graphs); --inference trws certifies the gap at about max-product's cost",
            inference.name(),
        ));
        training.converged = false;
    } else if uncertified > 0 && has_gap && !training.converged {
        report.warnings.push(format!(
            "inference is {}, and {uncertified} of its {calls} answers were not certified exact: the gap \
             counts how far their bounds lie above them (the LP relaxation is not tight there), which more \
             passes do not close{}",
            inference.name(),
            if matches!(inference, Inference::Trws { .. }) {
                "; --inference ad3 closes more of it by branch and bound, at a higher cost"
            } else {
                ""
            }
        ));
    }
    if uncertified > 0 && matches!(inference, Inference::MaxProduct { .. }) {
        report.warnings.push(format!(
            "max-product's messages had not settled in {uncertified} of its {calls} calls (the labelling \
             returned is still the best one found)"
        ));
    }
    exact && has_gap
}

impl GraphModel {
    /// The same model, inferring with `inference` from now on (for example exact inference to evaluate a
    /// model trained approximately).
    pub fn with_inference(mut self, inference: Inference) -> Self {
        self.space = self.space.with_inference(inference);
        self
    }

    /// The graphs of `data` as the model scores them (checked, naming lines).
    pub(super) fn graphs(&self, data: &GraphData) -> Result<Vec<Graph>, Error> {
        let m = &self.model;
        let shape = (m.n_features, m.params.bias, m.scaler.as_ref());
        data.graphs
            .iter()
            .map(|rec| {
                let g = graph_of(&data.source, rec, shape)?;
                self.space
                    .check_input(&g)
                    .map_err(|e| at_line(&data.source, rec, "edges", e.to_string()))?;
                Ok(g)
            })
            .collect()
    }

    /// One labelling (0-based labels) per graph.
    ///
    /// # Errors
    /// A bad graph (naming its line) or one the inference method cannot take.
    pub fn predict(&self, data: &GraphData) -> Result<Vec<Vec<u32>>, Error> {
        self.decode_all(&self.graphs(data)?, data)
    }

    /// The labelling of each checked graph of `data`, in parallel (the result does not depend on the
    /// threads); scores that overflow name the graph's line and node.
    pub(super) fn decode_all(
        &self,
        graphs: &[Graph],
        data: &GraphData,
    ) -> Result<Vec<Vec<u32>>, Error> {
        let out = crate::parallel::with_threads(self.model.params.threads, || {
            use rayon::prelude::*;
            graphs
                .par_iter()
                .zip(&data.graphs)
                .map(|(g, rec)| {
                    self.space.decode(&self.model.w, g).map_err(|e| match e {
                        maxmargin_struct::StructError::NonFiniteScore { position } => at_line(
                            &data.source,
                            rec,
                            "features",
                            format!(
                                "node {position}: the model's scores there are not finite numbers (the \
                                 weights times its features overflow a 64-bit float); no labels can be read \
                                 from them"
                            ),
                        ),
                        e => e.into(),
                    })
                })
                .collect::<Result<Vec<_>, _>>()
        })?;
        Ok(out)
    }

    /// Saves the model atomically (JSON for `.json` paths).
    ///
    /// # Errors
    /// [`Error::Io`] naming the file.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        self.check(path)?;
        Ok(model_file::save(path, GRAPH_KIND, self)?)
    }

    /// Loads a graph model, checking that the space is sound and the weights fit it.
    ///
    /// # Errors
    /// [`Error::Io`] for a missing, foreign, truncated, corrupt or inconsistent file.
    pub fn load(path: &Path) -> Result<Self, Error> {
        let model: Self = if model_file::read_header(path)?.format_version < 7 {
            let (_, old): (_, crate::compat::GraphModelV6) = model_file::load(path, GRAPH_KIND)?;
            old.into()
        } else {
            model_file::load(path, GRAPH_KIND)?.1
        };
        model.validated(path)
    }

    /// A model decoded by other means than [`GraphModel::load`] (a Python pickle), its space, weights and
    /// sizes checked as `load` checks them.
    ///
    /// # Errors
    /// [`Error::Io`] ([`IoError::BadModel`]) naming `source` and what disagrees.
    pub fn validated(self, source: &Path) -> Result<Self, Error> {
        self.check(source)?;
        Ok(self)
    }

    fn check(&self, path: &Path) -> Result<(), Error> {
        let bad = |message: String| -> Error {
            IoError::BadModel {
                path: path.to_path_buf(),
                message,
            }
            .into()
        };
        let m = &self.model;
        self.space.validate().map_err(|e| bad(e.to_string()))?;
        let width = m.n_features.checked_add(usize::from(m.params.bias));
        if m.task != Task::Graph
            || width.map(|w| w.max(1)) != Some(self.space.n_features())
            || m.n_labels != self.space.n_labels()
            || m.w.len() != self.space.dim()
        {
            return Err(bad(format!(
                "inconsistent graph model: a {} model of {} weights for {} features and {} labels, in a \
                 space of {} weights for {} features and {} labels",
                m.task.kind(),
                m.w.len(),
                m.n_features,
                m.n_labels,
                self.space.dim(),
                self.space.n_features(),
                self.space.n_labels()
            )));
        }
        m.check_consistent(path)
    }
}
