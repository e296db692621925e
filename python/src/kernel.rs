//! Kernel SVMs by SMO, kept whole as a [`Model`] whose decisions Python asks for.

use super::*;

/// A trained model kept whole (a kernel machine's support vectors with it), for the estimators whose
/// decisions are no dot product with `coef_`: decisions of new rows, and bytes to pickle it by.
#[pyclass(module = "maxmargin._core", frozen)]
pub(crate) struct Model {
    trained: Trained,
}

impl Model {
    pub(crate) fn of(trained: Trained) -> Self {
        Self { trained }
    }
}

pub(crate) enum Trained {
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
        let x = csr_rows(&indptr, &indices, &data, n_features)?;
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

    /// `binary` or `multiclass`.
    #[getter]
    fn kind(&self) -> &'static str {
        match &self.trained {
            Trained::Binary(_) => "binary",
            Trained::Multiclass(_) => "multiclass",
        }
    }

    /// Whether decisions come from support vectors or a feature map rather than `coef`.
    #[getter]
    fn is_kernel(&self) -> bool {
        match &self.trained {
            Trained::Binary(m) => m.kernel.is_some() || m.features.is_some(),
            Trained::Multiclass(m) => m.kernel.is_some() || m.features.is_some(),
        }
    }

    /// What an estimator made from the model reads: `classes`, `n_features`, the run's certificate and,
    /// for a linear model, `coef` and `intercept`.
    fn parts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (classes, n_features) = match &self.trained {
            Trained::Binary(m) => (m.labels.to_vec(), m.n_input_features()),
            Trained::Multiclass(m) => (m.classes.clone(), m.n_features),
        };
        let out = Fitted::of_trained(&self.trained, n_features, Vec::new())
            .map_err(value_error)?
            .report(py)?;
        out.set_item("classes", classes)?;
        out.set_item("n_features", n_features)?;
        Ok(out)
    }

    /// Saves the model as the command's model file (`maxmargin predict` reads it; JSON for a `.json` path),
    /// atomically.
    fn save(&self, path: std::path::PathBuf) -> PyResult<()> {
        match &self.trained {
            Trained::Binary(m) => m.save(&path),
            Trained::Multiclass(m) => m.save(&path),
        }
        .map_err(value_error)
    }

    /// A binary or multiclass model file written by [`Model::save`] or by `maxmargin train`.
    #[staticmethod]
    fn load(path: std::path::PathBuf) -> PyResult<Self> {
        let header = maxmargin::io::model_file::read_header(&path).map_err(value_error)?;
        let trained = match header.kind.as_str() {
            // A calibrated or thresholded file gives its model (its decision rule is the command's).
            maxmargin::linear::MODEL_KIND | maxmargin::linear::DECISION_KIND => {
                let decision =
                    maxmargin::linear::DecisionModel::load(&path).map_err(value_error)?;
                Trained::Binary(Box::new(decision.model))
            }
            "multiclass" | maxmargin::structured_svm::MULTICLASS_DECISION_KIND => {
                let m = StructuredModel::load(&path).map_err(value_error)?;
                Trained::Multiclass(Box::new(m))
            }
            other => {
                return Err(value_error(format!(
                    "{}: a {other} model, not a binary or multiclass classifier",
                    path.display()
                )));
            }
        };
        Ok(Self { trained })
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
    random_state=0, scale="none", classes=None, verbose=0
))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn fit_kernel<'py>(
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
    classes: Option<Vec<f64>>,
    verbose: u8,
) -> PyResult<(Model, Bound<'py, PyDict>)> {
    let csr = (indptr.as_slice()?, indices.as_slice()?, data.as_slice()?);
    let (x, y, weights, k) = examples(csr, n_features, y.as_slice()?, sample_weight.as_ref())?;
    let (y, class_weight, positive) = labelled(y, k, classes.as_deref(), class_weight)?;
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
    let fit = |watch: &mut Watch<'_>| -> Result<(Trained, Fitted), maxmargin::Error> {
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
            p.positive = Some(positive);
            let mut svm = p.check()?;
            if let Some(w) = weights {
                svm = svm.sample_weights(w)?;
            }
            let report = svm.fit_observed(&dataset, watch)?;
            let fitted = Fitted::of_binary(&report.model, report.warnings);
            Ok((Trained::Binary(Box::new(report.model)), fitted))
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
            let report = svm.fit_multiclass(&dataset, watch)?;
            let fitted = Fitted::of_structured(&report.model, report.warnings);
            Ok((Trained::Multiclass(Box::new(report.model)), fitted))
        }
    };
    let (fitted, interrupted) = interruptible(py, verbose, fit);
    if let Some(e) = interrupted {
        return Err(e);
    }
    let (trained, fitted) = fitted.map_err(value_error)?;
    Ok((Model { trained }, fitted.report(py)?))
}
