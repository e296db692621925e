//! `maxmargin._core`: the Python extension module behind `maxmargin.sklearn`. A thin layer over the facade:
//! it turns CSR arrays into a dataset, the keyword arguments into the facade's parameters, and the trained
//! model into arrays a linear classifier is made of (`coef`, `intercept`, in the units of the rows given, any
//! scaling folded in) with the run's certificate. No algorithm lives here.

use maxmargin::core::objective::Regularization;
use maxmargin::core::scale::{Scaler, Scaling};
use maxmargin::core::vector::{SharedSlice, SparseRows};
use maxmargin::io::libsvm::LabeledData;
use maxmargin::linear::KernelChoice;
use maxmargin::optim::SmoParams;
use maxmargin::optim::{Bias, BinaryLoss, DcdParams, Newton};
use maxmargin::structured_svm::{
    StructSolverKind, StructTrainingSummary, StructuredSvmParams, Task,
};
use maxmargin::{LinearModel, LinearSolver, LinearSvmParams, SolverKind, StructuredModel};
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Any error of the library, as Python's `ValueError` with the library's message.
fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Integer arrays as numpy gives them: scipy's CSR offsets and column indices are int32 for most matrices and
/// int64 for very large ones.
#[derive(FromPyObject)]
pub(crate) enum Index<'py> {
    I32(PyReadonlyArray1<'py, i32>),
    I64(PyReadonlyArray1<'py, i64>),
}

/// A numpy array's elements read in place.
///
/// Safety: built only from a contiguous array ([`PyReadonlyArray1::as_slice`] succeeded) whose object `owner`
/// keeps alive, of the element type `T` or one of the same size and alignment that every bit pattern
/// inhabits (`i32` read as `u32`). The extension never writes these arrays; Python code must not write them
/// while a fit reads them, as with any array an extension reads with the GIL released.
struct InPlace<T> {
    ptr: *const T,
    len: usize,
    /// Only kept, never used: nothing of it is observed across an unwind.
    _owner: std::panic::AssertUnwindSafe<Py<PyAny>>,
}

// SAFETY: the elements are only read, and the owner (a `Py`, itself `Send + Sync`) keeps them alive.
unsafe impl<T: Sync> Send for InPlace<T> {}
// SAFETY: as for `Send`: shared reads of memory nobody writes.
unsafe impl<T: Sync> Sync for InPlace<T> {}

impl<T: Sync + std::panic::RefUnwindSafe> SharedSlice<T> for InPlace<T> {
    fn as_slice(&self) -> &[T] {
        // SAFETY: see the type's docs: `ptr..ptr + len` is a live, contiguous, unwritten array of `T`s.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// Column indices read in place (int32, whose non-negative values are the same bits as `u32`) or converted
/// once (int64); a negative or too large one is refused naming its row (`offsets` are the rows').
fn column_indices(indices: &Index<'_>, offsets: &[usize]) -> PyResult<Arc<dyn SharedSlice<u32>>> {
    let refused = |k: usize, j: i64| {
        let row = offsets.partition_point(|&o| o <= k).saturating_sub(1);
        value_error(format!("row {row}: column {j} is not a column index"))
    };
    match indices {
        Index::I32(a) => {
            let s = a.as_slice()?;
            if let Some(k) = s.iter().position(|&j| j < 0) {
                return Err(refused(k, s[k].into()));
            }
            Ok(Arc::new(InPlace {
                ptr: s.as_ptr().cast::<u32>(),
                len: s.len(),
                _owner: std::panic::AssertUnwindSafe(a.as_any().clone().unbind()),
            }))
        }
        Index::I64(a) => {
            let s = a.as_slice()?;
            let mut out = Vec::with_capacity(s.len());
            for (k, &j) in s.iter().enumerate() {
                out.push(u32::try_from(j).map_err(|_| refused(k, j))?);
            }
            Ok(Arc::new(out))
        }
    }
}

/// Row offsets as `usize` (`n + 1` numbers: converted, they are small beside the matrix).
fn offsets(indptr: &Index<'_>) -> PyResult<Vec<usize>> {
    let one = |i: usize, v: i64| {
        usize::try_from(v).map_err(|_| value_error(format!("row {i}: a negative offset in indptr")))
    };
    match indptr {
        Index::I32(a) => (a.as_slice()?.iter().enumerate())
            .map(|(i, &v)| one(i, v.into()))
            .collect(),
        Index::I64(a) => (a.as_slice()?.iter().enumerate())
            .map(|(i, &v)| one(i, v))
            .collect(),
    }
}

/// A CSR matrix as Python hands it over: the tuple `(indptr, indices, data, n_features)`.
#[derive(FromPyObject)]
pub(crate) struct Csr<'py>(Index<'py>, Index<'py>, PyReadonlyArray1<'py, f64>, usize);

impl Csr<'_> {
    /// Its rows, read in place where they can be (see [`csr_rows`]).
    pub(crate) fn rows(&self) -> PyResult<SparseRows> {
        csr_rows(&self.0, &self.1, &self.2, self.3)
    }
}

/// The rows of a CSR matrix (`indptr`, `indices`, `data`) with `n_features` columns, column indices
/// increasing within each row (scipy's canonical format). Float64 values and int32 indices are read in place,
/// not copied (int64 indices are converted once to 32 bits); the rows are checked as the library checks a
/// file's, and an error names the first bad row.
fn csr_rows(
    indptr: &Index<'_>,
    indices: &Index<'_>,
    data: &PyReadonlyArray1<'_, f64>,
    n_features: usize,
) -> PyResult<SparseRows> {
    let values = data.as_slice()?;
    let values: Arc<dyn SharedSlice<f64>> = Arc::new(InPlace {
        ptr: values.as_ptr(),
        len: values.len(),
        _owner: std::panic::AssertUnwindSafe(data.as_any().clone().unbind()),
    });
    let offsets = offsets(indptr)?;
    let indices = column_indices(indices, &offsets)?;
    let x = SparseRows::from_shared(offsets, indices, values, n_features);
    x.map_err(value_error)
}

/// Rows as wide as the matrix, or, when that width is far beyond what their nonzeros need (the facade
/// refuses dense weights of more than `64 × nnz + 2²⁰` features: a hashed text matrix of 2²¹ columns and a
/// few documents), the rows over their used columns only, with those columns (sorted). A feature no row
/// uses gets weight 0 at the optimum (its gradient is the regularizer's alone), so the weights are scattered
/// back with zeros.
fn compacted(x: SparseRows, n_features: usize) -> PyResult<(SparseRows, Option<Vec<u32>>)> {
    let nnz: usize = x.rows().map(|r| r.nnz()).sum();
    if n_features <= nnz.saturating_mul(64).saturating_add(1 << 20) {
        return Ok((x, None));
    }
    let mut used: Vec<u32> = x.rows().flat_map(|r| r.indices().to_vec()).collect();
    used.sort_unstable();
    used.dedup();
    let mut out = SparseRows::new();
    let mut idx = Vec::new();
    for (i, r) in x.rows().enumerate() {
        idx.clear();
        // Each used column's place among the used ones (the row's indices are increasing, so are these).
        idx.extend(
            r.indices()
                .iter()
                .map(|j| used.partition_point(|u| u < j) as u32),
        );
        out.push_row(&idx, r.values())
            .map_err(|e| value_error(format!("row {i}: {e}")))?;
    }
    out.set_n_features_at_least(used.len());
    Ok((out, Some(used)))
}

/// Rows of weights over the used `columns` (`width` each) scattered back to `n_features` each (zeros
/// elsewhere), in one allocation.
fn scattered(coef: &[f64], width: usize, columns: &[u32], n_features: usize) -> PyResult<Vec<f64>> {
    let rows = coef.len() / width.max(1);
    let mut full = zeros(rows.saturating_mul(n_features), "coef_")?;
    for (row, w) in full
        .chunks_mut(n_features.max(1))
        .zip(coef.chunks(width.max(1)))
    {
        for (&j, &v) in columns.iter().zip(w) {
            row[j as usize] = v;
        }
    }
    Ok(full)
}

/// Room for `n` values (none written yet), or a `MemoryError` naming `what` where the allocation fails (an
/// abort would take the interpreter down).
fn reserve(n: usize, what: &str) -> PyResult<Vec<f64>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        pyo3::exceptions::PyMemoryError::new_err(format!(
            "{what}: {n} values ({:.1} GB) cannot be allocated",
            n as f64 * 8e-9
        ))
    })?;
    Ok(v)
}

/// `n` zeros, or a `MemoryError` as [`reserve`].
fn zeros(n: usize, what: &str) -> PyResult<Vec<f64>> {
    let mut v = reserve(n, what)?;
    v.resize(n, 0.0);
    Ok(v)
}

/// The training examples of a fit: CSR rows `n_features` wide, class indices `y` (`0..k` as floats), sample
/// weights; returns the rows, the labels, the weights and `k`.
type Examples = (SparseRows, Vec<f64>, Option<Vec<f64>>, usize);

fn examples(
    x: SparseRows,
    y: &[f64],
    sample_weight: Option<&PyReadonlyArray1<'_, f64>>,
) -> PyResult<Examples> {
    let n = x.n_rows();
    if y.len() != n {
        return Err(value_error(format!("{} labels for {n} rows", y.len())));
    }
    let weights = match sample_weight {
        Some(w) => Some(w.as_slice()?.to_vec()),
        None => None,
    };
    let k = y.iter().fold(0.0f64, |m, &v| m.max(v)) as usize + 1;
    Ok((x, y.to_vec(), weights, k))
}

/// Class indices `y` as the labels a model keeps: the class values `classes` when the classes are numbers
/// (so that the model file, read by the command, speaks the data's labels), else the indices; the class
/// weights `(index, factor)` likewise. Returns the labels, the weights and the positive class (the second).
type Labelled = (Vec<f64>, Vec<(f64, f64)>, f64);

fn labelled(
    y: Vec<f64>,
    k: usize,
    classes: Option<&[f64]>,
    class_weight: Vec<(f64, f64)>,
) -> PyResult<Labelled> {
    let Some(classes) = classes else {
        return Ok((y, class_weight, 1.0));
    };
    if classes.len() < k
        || !classes.iter().all(|c| c.is_finite())
        || classes.windows(2).any(|p| p[0] >= p[1])
    {
        return Err(value_error(format!(
            "classes: {} increasing finite values are needed for {k} class indices",
            classes.len()
        )));
    }
    let value = |i: f64| {
        let place = (i >= 0.0 && i.fract() == 0.0).then_some(i as usize);
        place.and_then(|p| classes.get(p)).copied().ok_or_else(|| {
            value_error(format!(
                "class index {i} is not one of the {} classes",
                classes.len()
            ))
        })
    };
    let y = y.into_iter().map(value).collect::<PyResult<_>>()?;
    let weights = class_weight
        .into_iter()
        .map(|(i, f)| Ok((value(i)?, f)))
        .collect::<PyResult<_>>()?;
    Ok((y, weights, classes.get(1).copied().unwrap_or(1.0)))
}

/// A dataset of these rows and labels (lines numbered from 1 for messages about a row).
fn dataset(x: SparseRows, y: Vec<f64>) -> LabeledData {
    let n = x.n_rows();
    LabeledData::new("<array>".into(), x, y, (1..=n).collect())
}

/// The scaling named `scale`.
fn scaling(scale: &str) -> PyResult<Scaling> {
    scale.parse().map_err(|_| {
        value_error(format!(
            "scale={scale:?}: give none, maxabs, minmax or standard"
        ))
    })
}

/// `(coef row, intercept)` of weights `w` over `d` features (and the bias feature after them when `bias`), in
/// the units of the rows given: the scaling folded in.
fn unscaled(w: &[f64], d: usize, bias: bool, scaler: Option<&Scaler>) -> (Vec<f64>, f64) {
    let b = if bias {
        w.get(d).copied().unwrap_or(0.0)
    } else {
        0.0
    };
    match scaler {
        Some(s) => s.fold_linear(&w[..d], b),
        None => (w[..d].to_vec(), b),
    }
}

/// What a fit returns to Python (a kernel fit: no `coef`); the dict is its serde form, with `coef` and
/// `intercept` added as arrays.
#[derive(serde::Serialize)]
struct Fitted {
    /// λ of the objective `λ/2‖w‖² + (1/n)Σ s_i ℓ_i` the run minimized (`1/(Cn)` for `C`).
    lambda: f64,
    #[serde(skip)]
    coef: Vec<f64>,
    #[serde(skip)]
    rows: usize,
    #[serde(skip)]
    intercept: Vec<f64>,
    objective: f64,
    #[serde(rename = "duality_gap")]
    gap: Option<f64>,
    n_iter: u64,
    /// Passes over the data (fractional for sampled steps).
    passes: f64,
    converged: bool,
    stop: String,
    warnings: Vec<String>,
}

impl Fitted {
    /// A run's certificate `(objective, gap, iterations)`, without weights.
    fn of_run(
        (lambda, objective, gap, n_iter): (f64, f64, Option<f64>, u64),
        converged: bool,
        stop: maxmargin::optim::StopReason,
    ) -> Self {
        Self {
            lambda,
            coef: Vec::new(),
            rows: 0,
            intercept: Vec::new(),
            objective,
            gap,
            n_iter,
            passes: 0.0,
            converged,
            stop: stop.to_string(),
            warnings: Vec::new(),
        }
    }

    fn with(mut self, warnings: Vec<String>) -> Self {
        self.warnings = warnings;
        self
    }

    fn passes(mut self, passes: f64) -> Self {
        self.passes = passes;
        self
    }

    /// The certificate of a binary model's run, with its warnings.
    fn of_binary(m: &LinearModel, warnings: Vec<String>) -> Self {
        let t = &m.training;
        let run = (m.lambda, t.objective, t.gap, t.iterations);
        Self::of_run(run, t.converged, t.stop)
            .with(warnings)
            .passes(t.epochs)
    }

    /// The certificate of a structured (multiclass, multilabel, chain) model's run, with its warnings.
    fn of_structured(m: &StructuredModel, warnings: Vec<String>) -> Self {
        Self::of_struct_run(m.lambda, &m.training, warnings)
    }

    /// The certificate of a structured run at `lambda` (any structured model's, a custom space's too), with
    /// its warnings.
    fn of_struct_run(lambda: f64, t: &StructTrainingSummary, warnings: Vec<String>) -> Self {
        let run = (lambda, t.objective, t.gap, t.iterations);
        Self::of_run(run, t.converged, t.stop)
            .with(warnings)
            .passes(t.passes)
    }

    /// The certificate of a trained model's run with, for a linear model, `coef` (one row for two classes,
    /// else one per class) and `intercept` over `n_features` features in the units of the rows given (any
    /// scaling folded in); a kernel model or a feature map has no `coef`.
    fn of_trained(
        trained: &kernel::Trained,
        n_features: usize,
        warnings: Vec<String>,
    ) -> Result<Self, maxmargin::Error> {
        match trained {
            kernel::Trained::Binary(d) => {
                let m = &d.model;
                let run = Self::of_binary(m, warnings);
                if m.kernel.is_some() || m.features.is_some() {
                    return Ok(run);
                }
                let mut w = m.w.clone();
                w.resize(n_features.max(m.w.len()), 0.0);
                let (coef, b) = match &m.scaler {
                    Some(sc) => sc.fold_linear(&w, m.b),
                    None => (w, m.b),
                };
                Ok(Self {
                    coef,
                    rows: 1,
                    intercept: vec![b],
                    ..run
                })
            }
            kernel::Trained::Multiclass(m) => {
                let run = Self::of_structured(m, warnings);
                if m.kernel.is_some() || m.features.is_some() {
                    return Ok(run);
                }
                let bias = m.params.bias;
                let width = m.n_features + usize::from(bias);
                if m.w.len() != m.n_labels * width || n_features < m.n_features {
                    let why = "the model's weights are not one block per class over these features";
                    return Err(refused("model", &m.w.len().to_string(), why));
                }
                let (mut coef, mut intercept) = (Vec::new(), Vec::new());
                for class in 0..m.n_labels {
                    let block = &m.w[class * width..(class + 1) * width];
                    let (mut w, b) = unscaled(block, m.n_features, bias, m.scaler.as_ref());
                    w.resize(n_features, 0.0);
                    coef.extend(w);
                    intercept.push(b);
                }
                Ok(Self {
                    coef,
                    rows: m.n_labels,
                    intercept,
                    ..run
                })
            }
        }
    }

    /// The dict Python reads: `coef` and `intercept` only when there are weights.
    fn report<'py>(self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = dict(py, &self)?;
        if let Some(n_features) = self.coef.len().checked_div(self.rows) {
            let coef = PyArray1::from_vec(py, self.coef).reshape([self.rows, n_features])?;
            out.set_item("coef", coef)?;
            out.set_item("intercept", PyArray1::from_vec(py, self.intercept))?;
        }
        Ok(out)
    }
}

/// A Rust value as the Python dict of its serde form (field names as keys, `None` for absent options).
fn dict<'py, T: serde::Serialize>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyDict>> {
    Ok(pythonize::pythonize(py, value)?.cast_into::<PyDict>()?)
}

/// A parameter refused, naming why.
fn refused(name: &'static str, value: &str, reason: &'static str) -> maxmargin::Error {
    maxmargin::optim::OptimError::InvalidParam {
        name,
        value: value.to_string(),
        reason,
    }
    .into()
}

mod custom;
mod decision;
mod graph;
mod interrupt;
mod kernel;
mod latent;
mod linear;
mod persist;
mod structured;
mod tagger;
use custom::fit_custom;
use graph::{PyGraphModel, fit_graph};
pub(crate) use interrupt::*;
use kernel::{Model, fit_kernel};
use latent::{LatentModel, fit_latent};
use linear::fit_linear;
use persist::persisted;
use structured::{StructModel, fit_structured};
use tagger::{PyTagger, fit_tagger};

/// The kind a model file's header names (`binary`, `multiclass`, `chain`, `chain-conll`, ...), checking the
/// header only.
#[pyfunction]
fn model_kind(path: std::path::PathBuf) -> PyResult<String> {
    let header = maxmargin::io::model_file::read_header(&path).map_err(value_error)?;
    Ok(header.kind)
}

/// The module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fit_linear, m)?)?;
    m.add_function(wrap_pyfunction!(model_kind, m)?)?;
    m.add_function(wrap_pyfunction!(fit_kernel, m)?)?;
    m.add_class::<Model>()?;
    m.add_function(wrap_pyfunction!(fit_structured, m)?)?;
    m.add_class::<StructModel>()?;
    m.add_function(wrap_pyfunction!(fit_latent, m)?)?;
    m.add_class::<LatentModel>()?;
    m.add_function(wrap_pyfunction!(fit_custom, m)?)?;
    m.add_function(wrap_pyfunction!(fit_graph, m)?)?;
    m.add_class::<PyGraphModel>()?;
    m.add_function(wrap_pyfunction!(fit_tagger, m)?)?;
    m.add_class::<PyTagger>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
