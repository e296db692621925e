//! `maxmargin._core`: the Python extension module behind `maxmargin.sklearn`. A thin layer over the facade:
//! it turns CSR arrays into a dataset, the keyword arguments into the facade's parameters, and the trained
//! model into arrays a linear classifier is made of (`coef`, `intercept`, in the units of the rows given, any
//! scaling folded in) with the run's certificate. No algorithm lives here.

use maxmargin::core::objective::Regularization;
use maxmargin::core::scale::{Scaler, Scaling};
use maxmargin::core::vector::SparseRows;
use maxmargin::io::libsvm::LabeledData;
use maxmargin::linear::KernelChoice;
use maxmargin::optim::SmoParams;
use maxmargin::optim::{Bias, BinaryLoss, DcdParams};
use maxmargin::structured_svm::{StructSolverKind, StructuredSvmParams, Task};
use maxmargin::{LinearModel, LinearSolver, LinearSvmParams, SolverKind, StructuredModel};
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

/// Any error of the library, as Python's `ValueError` with the library's message.
fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The rows of a CSR matrix (`indptr`, `indices`, `data`) with `n_features` columns, column indices
/// increasing within each row (scipy's `sort_indices`).
fn rows(indptr: &[i64], indices: &[i64], data: &[f64], n_features: usize) -> PyResult<SparseRows> {
    let mut x = SparseRows::new();
    let mut idx = Vec::new();
    for (i, w) in indptr.windows(2).enumerate() {
        let (a, b) = (usize::try_from(w[0]), usize::try_from(w[1]));
        let (Ok(a), Ok(b)) = (a, b) else {
            return Err(value_error(format!("row {i}: a negative offset in indptr")));
        };
        if a > b || b > indices.len() || b > data.len() {
            return Err(value_error(format!(
                "row {i}: indptr [{a}, {b}) outside the {} stored values",
                indices.len().min(data.len())
            )));
        }
        idx.clear();
        for &j in &indices[a..b] {
            match u32::try_from(j) {
                Ok(j) if (j as usize) < n_features => idx.push(j),
                _ => {
                    return Err(value_error(format!(
                        "row {i}: column {j} outside 0..{n_features}"
                    )));
                }
            }
        }
        x.push_row(&idx, &data[a..b])
            .map_err(|e| value_error(format!("row {i}: {e}")))?;
    }
    x.set_n_features_at_least(n_features);
    Ok(x)
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

/// Weights over the used columns scattered back to `n_features` (zeros elsewhere).
fn scattered(w: Vec<f64>, columns: Option<&[u32]>, n_features: usize) -> Vec<f64> {
    match columns {
        None => w,
        Some(cols) => {
            let mut full = vec![0.0; n_features];
            for (&j, v) in cols.iter().zip(w) {
                full[j as usize] = v;
            }
            full
        }
    }
}

/// The training examples of a fit: CSR rows `n_features` wide, class indices `y` (`0..k` as floats), sample
/// weights; returns the rows, the labels, the weights and `k`.
type Examples = (SparseRows, Vec<f64>, Option<Vec<f64>>, usize);

fn examples(
    (indptr, indices, data): (&[i64], &[i64], &[f64]),
    n_features: usize,
    y: &[f64],
    sample_weight: Option<&PyReadonlyArray1<'_, f64>>,
) -> PyResult<Examples> {
    let x = rows(indptr, indices, data, n_features)?;
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

/// What a fit returns to Python (a kernel fit: no `coef`).
struct Fitted {
    /// λ of the objective `λ/2‖w‖² + (1/n)Σ s_i ℓ_i` the run minimized (`1/(Cn)` for `C`).
    lambda: f64,
    coef: Vec<f64>,
    rows: usize,
    intercept: Vec<f64>,
    objective: f64,
    gap: Option<f64>,
    n_iter: u64,
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
            converged,
            stop: stop.to_string(),
            warnings: Vec::new(),
        }
    }

    fn with(mut self, warnings: Vec<String>) -> Self {
        self.warnings = warnings;
        self
    }

    /// The dict Python reads: `coef` and `intercept` only when there are weights.
    fn report<'py>(self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        if let Some(n_features) = self.coef.len().checked_div(self.rows) {
            let coef = PyArray1::from_vec(py, self.coef).reshape([self.rows, n_features])?;
            out.set_item("coef", coef)?;
            out.set_item("intercept", PyArray1::from_vec(py, self.intercept))?;
        }
        out.set_item("lambda", self.lambda)?;
        out.set_item("objective", self.objective)?;
        out.set_item("duality_gap", self.gap)?;
        out.set_item("n_iter", self.n_iter)?;
        out.set_item("converged", self.converged)?;
        out.set_item("stop", self.stop)?;
        out.set_item("warnings", self.warnings)?;
        Ok(out)
    }
}

/// Trains a linear classifier on CSR rows with class indices `y` (`0..k`, as floats; `k = 2` trains one
/// binary model whose positive class is 1) and returns a dict: `coef` (`rows × n_features`, one row for two
/// classes), `intercept`, `objective`, `duality_gap` (`None` when the solver certifies none), `n_iter`,
/// `converged`, `stop`, `warnings`.
#[pyfunction]
#[pyo3(signature = (
    indptr, indices, data, n_features, y, sample_weight=None, *, c=1.0, loss="hinge",
    multi_class="auto", solver="dcd", tol=None, gap=None, max_iter=None, class_weight=Vec::new(),
    fit_intercept=true, random_state=0, scale="none"
))]
#[allow(clippy::too_many_arguments)]
fn fit_linear<'py>(
    py: Python<'py>,
    indptr: PyReadonlyArray1<'py, i64>,
    indices: PyReadonlyArray1<'py, i64>,
    data: PyReadonlyArray1<'py, f64>,
    n_features: usize,
    y: PyReadonlyArray1<'py, f64>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    c: f64,
    loss: &str,
    multi_class: &str,
    solver: &str,
    tol: Option<f64>,
    gap: Option<f64>,
    max_iter: Option<f64>,
    class_weight: Vec<(f64, f64)>,
    fit_intercept: bool,
    random_state: u64,
    scale: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let csr = (indptr.as_slice()?, indices.as_slice()?, data.as_slice()?);
    let (x, y, weights, k) = examples(csr, n_features, y.as_slice()?, sample_weight.as_ref())?;
    let (x, columns) = compacted(x, n_features)?;
    let width = columns.as_ref().map_or(n_features, Vec::len);
    let dataset = dataset(x, y);
    let scale = scaling(scale)?;
    let loss = match loss {
        "hinge" => BinaryLoss::Hinge,
        "squared_hinge" => BinaryLoss::SquaredHinge,
        "logistic" => BinaryLoss::Logistic,
        other => {
            return Err(value_error(format!(
                "loss={other:?}: give hinge, squared_hinge or logistic"
            )));
        }
    };
    let settings = Settings {
        c,
        loss,
        multi_class,
        solver,
        tol,
        gap,
        max_iter,
        class_weight,
        fit_intercept,
        seed: random_state,
        scale,
    };
    let fit = || {
        if k <= 2 {
            fit_binary(&dataset, weights, settings, width)
        } else {
            fit_multiclass(&dataset, weights, settings, width)
        }
    };
    let mut fitted = py.detach(fit).map_err(value_error)?;
    if let Some(cols) = &columns {
        let rows: Vec<Vec<f64>> = fitted
            .coef
            .chunks(width.max(1))
            .map(<[f64]>::to_vec)
            .collect();
        fitted.coef = rows
            .into_iter()
            .flat_map(|w| scattered(w, Some(cols), n_features))
            .collect();
    }
    fitted.report(py)
}

/// The keyword arguments of a fit.
struct Settings<'a> {
    c: f64,
    loss: BinaryLoss,
    multi_class: &'a str,
    solver: &'a str,
    tol: Option<f64>,
    gap: Option<f64>,
    max_iter: Option<f64>,
    class_weight: Vec<(f64, f64)>,
    fit_intercept: bool,
    seed: u64,
    scale: Scaling,
}

/// Two classes: the binary estimator (dual coordinate descent, Pegasos or the subgradient method), class 1
/// positive.
fn fit_binary(
    data: &LabeledData,
    weights: Option<Vec<f64>>,
    s: Settings<'_>,
    n_features: usize,
) -> Result<Fitted, maxmargin::Error> {
    let solver = match s.solver {
        "dcd" => LinearSolver::Dcd(DcdParams {
            epsilon: s.tol.unwrap_or(DcdParams::default().epsilon),
            ..DcdParams::default()
        }),
        "pegasos" => LinearSolver::from(SolverKind::Pegasos),
        "subgradient" => LinearSolver::from(SolverKind::Subgradient),
        other => return Err(refused("solver", other, "give dcd, pegasos or subgradient")),
    };
    if s.tol.is_some() && !matches!(solver, LinearSolver::Dcd(_)) {
        let why = "is dcd's stopping tolerance; pegasos and subgradient stop on max_iter or gap";
        return Err(refused("tol", "set", why));
    }
    let mut p = LinearSvmParams::new()
        .solver(solver)
        .regularization(Regularization::CSum(s.c))
        .loss(s.loss)
        .bias(if s.fit_intercept {
            Bias::Feature
        } else {
            Bias::None
        })
        .seed(s.seed)
        .scale(s.scale);
    if let Some(g) = s.gap {
        p = p.gap(g);
    }
    if let Some(m) = s.max_iter {
        p = p.epochs(m);
    }
    p.class_weights = s.class_weight;
    // The positive class is index 1 (scikit-learn's `classes_[1]`).
    p.positive = Some(1.0);
    let mut svm = p.check()?;
    if let Some(w) = weights {
        svm = svm.sample_weights(w)?;
    }
    let report = svm.fit_observed(data, &mut ())?;
    let m = &report.model;
    let mut w = m.w.clone();
    w.resize(n_features, 0.0);
    let (coef, b) = match &m.scaler {
        Some(sc) => sc.fold_linear(&w, m.b),
        None => (w, m.b),
    };
    let t = &m.training;
    let run = Fitted::of_run(
        (m.lambda, t.objective, t.gap, t.iterations),
        t.converged,
        t.stop,
    );
    Ok(Fitted {
        coef,
        rows: 1,
        intercept: vec![b],
        ..run.with(report.warnings)
    })
}

/// More classes: Crammer–Singer's dual or one-vs-rest for the hinge, the softmax (multinomial logistic) dual
/// for the logistic loss, SSG for the primal solvers; one row of `coef` per class.
fn fit_multiclass(
    data: &LabeledData,
    weights: Option<Vec<f64>>,
    s: Settings<'_>,
    n_features: usize,
) -> Result<Fitted, maxmargin::Error> {
    let kind = match (s.loss, s.multi_class, s.solver) {
        (BinaryLoss::Logistic, "auto" | "multinomial", "dcd") => StructSolverKind::Softmax,
        (_, "ovr", "dcd") | (BinaryLoss::Hinge | BinaryLoss::SquaredHinge, "auto", "dcd") => {
            StructSolverKind::Ovr
        }
        (BinaryLoss::Hinge, "crammer_singer", "dcd") => StructSolverKind::Dcd,
        (BinaryLoss::Hinge, "crammer_singer" | "auto", "subgradient" | "pegasos") => {
            StructSolverKind::Ssg
        }
        (_, "crammer_singer", _) => {
            let why = "is the hinge's multiclass SVM: give ovr (or auto) for this loss";
            return Err(refused("multi_class", "crammer_singer", why));
        }
        (BinaryLoss::Hinge, "multinomial", _) => {
            let why =
                "is the logistic loss's model: give auto, ovr or crammer_singer for the hinge";
            return Err(refused("multi_class", "multinomial", why));
        }
        (BinaryLoss::Logistic | BinaryLoss::SquaredHinge, _, solver) => {
            return Err(refused("solver", solver, "trains this loss by dcd only"));
        }
        (_, "ovr", "subgradient" | "pegasos") => {
            let why = "trains the Crammer-Singer objective with more than two classes: give \
                       multi_class=auto or crammer_singer, or solver=dcd for one-vs-rest";
            return Err(refused("solver", s.solver, why));
        }
        (_, "auto" | "multinomial", solver) => {
            return Err(refused(
                "solver",
                solver,
                "give dcd, pegasos or subgradient",
            ));
        }
        (_, m, _) => {
            let why = "give auto, ovr, crammer_singer (hinge) or multinomial (logistic)";
            return Err(refused("multi_class", m, why));
        }
    };
    let mut p = StructuredSvmParams::new(Task::Multiclass)
        .solver(kind)
        .c(s.c)
        .bias(s.fit_intercept)
        .scale(s.scale)
        .class_weights(s.class_weight);
    if let Some(e) = s.tol {
        p = p.epsilon(e);
    }
    if let Some(m) = s.max_iter {
        p = p.max_passes(m);
    }
    p.gap = s.gap;
    p.seed = s.seed;
    if kind == StructSolverKind::Ovr {
        p.loss = s.loss;
    }
    let mut svm = p.check()?;
    if let Some(w) = weights {
        svm = svm.sample_weights(w)?;
    }
    let report = svm.fit_multiclass(data, &mut ())?;
    let m = &report.model;
    let width = n_features + usize::from(s.fit_intercept);
    if m.w.len() != m.n_labels * width {
        let why = "the model's weights are not one block per class over these features";
        return Err(refused("model", &m.w.len().to_string(), why));
    }
    let (mut coef, mut intercept) = (Vec::new(), Vec::new());
    for class in 0..m.n_labels {
        let block = &m.w[class * width..(class + 1) * width];
        let (w, b) = unscaled(block, n_features, s.fit_intercept, m.scaler.as_ref());
        coef.extend(w);
        intercept.push(b);
    }
    let t = &m.training;
    let run = Fitted::of_run(
        (m.lambda, t.objective, t.gap, t.iterations),
        t.converged,
        t.stop,
    );
    Ok(Fitted {
        coef,
        rows: m.n_labels,
        intercept,
        ..run.with(report.warnings)
    })
}

/// A trained model kept whole (a kernel machine's support vectors with it), for the estimators whose
/// decisions are no dot product with `coef_`: decisions of new rows, and bytes to pickle it by.
#[pyclass(module = "maxmargin._core", frozen)]
struct Model {
    trained: Trained,
}

enum Trained {
    Binary(Box<LinearModel>),
    Multiclass(Box<StructuredModel>),
}

/// What a pickled [`Model`] holds: the model as its model file's JSON would.
#[derive(serde::Serialize, serde::Deserialize)]
enum Stored {
    Binary(Box<LinearModel>),
    Multiclass(Box<StructuredModel>),
}

#[pymethods]
impl Model {
    /// The decision values of CSR rows: `n × 1` (two classes: positive for class 1) or `n × k`.
    fn decision<'py>(
        &self,
        py: Python<'py>,
        indptr: PyReadonlyArray1<'py, i64>,
        indices: PyReadonlyArray1<'py, i64>,
        data: PyReadonlyArray1<'py, f64>,
        n_features: usize,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = rows(
            indptr.as_slice()?,
            indices.as_slice()?,
            data.as_slice()?,
            n_features,
        )?;
        let n = x.n_rows();
        let (values, width) = match &self.trained {
            Trained::Binary(m) => (py.detach(|| m.decision_rows(&x)), 1),
            Trained::Multiclass(m) => {
                let k = m.n_labels;
                let data = dataset(x, vec![0.0; n]);
                let scores = py
                    .detach(|| m.multiclass_scores(&data))
                    .map_err(value_error)?;
                (scores.into_iter().flatten().collect(), k)
            }
        };
        PyArray1::from_vec(py, values).reshape([n, width])
    }

    /// Support vectors the decisions sum over.
    #[getter]
    fn n_support(&self) -> usize {
        match &self.trained {
            Trained::Binary(m) => m.kernel.as_ref().map_or(0, |k| k.n_support()),
            Trained::Multiclass(m) => m.kernel.as_ref().map_or(0, |k| k.n_support()),
        }
    }

    /// The model as bytes ([`Model::from_bytes`] reads them back).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let stored = match &self.trained {
            Trained::Binary(m) => Stored::Binary(m.clone()),
            Trained::Multiclass(m) => Stored::Multiclass(m.clone()),
        };
        let bytes = serde_json::to_vec(&stored).map_err(value_error)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// A model from [`Model::to_bytes`].
    #[staticmethod]
    fn from_bytes(bytes: &[u8]) -> PyResult<Self> {
        let stored: Stored = serde_json::from_slice(bytes)
            .map_err(|e| value_error(format!("not a pickled maxmargin model: {e}")))?;
        Ok(Self {
            trained: match stored {
                Stored::Binary(m) => Trained::Binary(m),
                Stored::Multiclass(m) => Trained::Multiclass(m),
            },
        })
    }
}

/// Trains a kernel SVM by SMO (LIBSVM's method; one machine for two classes, one-vs-one or one-vs-rest
/// machines for more) on CSR rows with class indices `y`, and returns the model and a dict of the run's
/// certificate (`objective`, `duality_gap`, `n_iter`, `converged`, `stop`, `warnings`).
#[pyfunction]
#[pyo3(signature = (
    indptr, indices, data, n_features, y, sample_weight=None, *, c=1.0, kernel="rbf", gamma=None,
    degree=3, coef0=0.0, tol=None, gap=None, max_iter=None, class_weight=Vec::new(), multi_class="ovo",
    random_state=0, scale="none"
))]
#[allow(clippy::too_many_arguments)]
fn fit_kernel<'py>(
    py: Python<'py>,
    indptr: PyReadonlyArray1<'py, i64>,
    indices: PyReadonlyArray1<'py, i64>,
    data: PyReadonlyArray1<'py, f64>,
    n_features: usize,
    y: PyReadonlyArray1<'py, f64>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    c: f64,
    kernel: &str,
    gamma: Option<f64>,
    degree: u32,
    coef0: f64,
    tol: Option<f64>,
    gap: Option<f64>,
    max_iter: Option<f64>,
    class_weight: Vec<(f64, f64)>,
    multi_class: &str,
    random_state: u64,
    scale: &str,
) -> PyResult<(Model, Bound<'py, PyDict>)> {
    let csr = (indptr.as_slice()?, indices.as_slice()?, data.as_slice()?);
    let (x, y, weights, k) = examples(csr, n_features, y.as_slice()?, sample_weight.as_ref())?;
    let dataset = dataset(x, y);
    let choice = KernelChoice {
        kind: kernel.parse().map_err(|_| {
            value_error(format!(
                "kernel={kernel:?}: give linear, poly, rbf or sigmoid"
            ))
        })?,
        gamma,
        degree,
        coef0,
    };
    let scale = scaling(scale)?;
    let multi = match multi_class {
        "ovo" => StructSolverKind::Ovo,
        "ovr" => StructSolverKind::Ovr,
        other => {
            return Err(value_error(format!(
                "multi_class={other:?}: give ovo or ovr"
            )));
        }
    };
    let fit = || -> Result<(Trained, Fitted), maxmargin::Error> {
        if k <= 2 {
            let smo = SmoParams {
                epsilon: tol.unwrap_or(SmoParams::default().epsilon),
                ..SmoParams::default()
            };
            let mut p = LinearSvmParams::new()
                .solver(LinearSolver::Smo {
                    smo,
                    kernel: choice,
                })
                .regularization(Regularization::CSum(c))
                .bias(Bias::Unregularized)
                .seed(random_state)
                .scale(scale);
            if let Some(g) = gap {
                p = p.gap(g);
            }
            if let Some(m) = max_iter {
                p = p.epochs(m);
            }
            p.class_weights = class_weight;
            p.positive = Some(1.0);
            let mut svm = p.check()?;
            if let Some(w) = weights {
                svm = svm.sample_weights(w)?;
            }
            let report = svm.fit_observed(&dataset, &mut ())?;
            let t = &report.model.training;
            let fitted = Fitted::of_run(
                (report.model.lambda, t.objective, t.gap, t.iterations),
                t.converged,
                t.stop,
            );
            Ok((
                Trained::Binary(Box::new(report.model)),
                fitted.with(report.warnings),
            ))
        } else {
            let mut p = StructuredSvmParams::new(Task::Multiclass)
                .solver(multi)
                .kernel(choice)
                .c(c)
                .scale(scale)
                .class_weights(class_weight);
            if let Some(e) = tol {
                p = p.epsilon(e);
            }
            if let Some(m) = max_iter {
                p = p.max_passes(m);
            }
            p.gap = gap;
            p.seed = random_state;
            let mut svm = p.check()?;
            if let Some(w) = weights {
                svm = svm.sample_weights(w)?;
            }
            let report = svm.fit_multiclass(&dataset, &mut ())?;
            let t = &report.model.training;
            let fitted = Fitted::of_run(
                (report.model.lambda, t.objective, t.gap, t.iterations),
                t.converged,
                t.stop,
            );
            Ok((
                Trained::Multiclass(Box::new(report.model)),
                fitted.with(report.warnings),
            ))
        }
    };
    let (trained, fitted) = py.detach(fit).map_err(value_error)?;
    Ok((Model { trained }, fitted.report(py)?))
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

/// The module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fit_linear, m)?)?;
    m.add_function(wrap_pyfunction!(fit_kernel, m)?)?;
    m.add_class::<Model>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
