//! Kernel SVMs by SMO, kept whole as a [`Model`] whose decisions Python asks for.

use super::*;
use maxmargin::approx::Approximation;
use maxmargin::linear::DecisionModel;

/// A trained model kept whole (a kernel machine's support vectors with it), for the estimators whose
/// decisions are no dot product with `coef_`: decisions of new rows, and bytes to pickle it by.
#[pyclass(module = "maxmargin._core", frozen)]
pub(crate) struct Model {
    pub(crate) trained: Trained,
}

impl Model {
    pub(crate) fn of(trained: Trained) -> Self {
        Self { trained }
    }
}

pub(crate) enum Trained {
    /// A binary model with the calibration and cut-off chosen on development rows, if any (`maxmargin
    /// calibrate` and `maxmargin threshold`, [`crate::decision`]).
    Binary(Box<DecisionModel>),
    Multiclass(Box<StructuredModel>),
}

impl Trained {
    /// A freshly trained binary model: no calibration, the cut-off at 0.
    pub(crate) fn binary(m: LinearModel) -> Self {
        Self::Binary(Box::new(DecisionModel::new(m)))
    }
}

/// Whether a decision model has anything beside its model (a calibration or a cut-off).
fn decides(d: &DecisionModel) -> bool {
    d.calibration.is_some() || d.threshold.is_some()
}

/// What a pickled [`Model`] holds: the model as its model file's JSON would.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(crate) enum Stored {
    Binary(Box<LinearModel>),
    Multiclass(Box<StructuredModel>),
    /// A binary model with its calibration or cut-off.
    Decision(Box<maxmargin::linear::DecisionModel>),
}

#[pymethods]
impl Model {
    /// The decision values of CSR rows: `n × 1` (two classes: positive for class 1) or `n × k`.
    fn decision<'py>(&self, py: Python<'py>, x: Csr<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = x.rows()?;
        let n = x.n_rows();
        let (values, width) = match &self.trained {
            Trained::Binary(d) => {
                // Scores that overflow are an error naming the row, as for multiclass models.
                let data = dataset(x, vec![0.0; n]);
                let scores = py.detach(|| d.model.scores(&data)).map_err(value_error)?;
                (scores, 1)
            }
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
            Trained::Binary(d) => d.model.kernel.as_ref().map_or(0, |k| k.n_support()),
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
            Trained::Binary(d) => d.model.kernel.is_some() || d.model.features.is_some(),
            Trained::Multiclass(m) => m.kernel.is_some() || m.features.is_some(),
        }
    }

    /// What an estimator made from the model reads: `classes`, `n_features`, the run's certificate and,
    /// for a linear model, `coef` and `intercept`.
    fn parts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (classes, n_features) = match &self.trained {
            Trained::Binary(d) => (d.model.labels.to_vec(), d.model.n_input_features()),
            // An approximated kernel's weights are over its features; the rows given are its input's.
            Trained::Multiclass(m) => {
                let d = m.features.as_ref().map_or(m.n_features, |f| f.n_input());
                (m.classes.clone(), d)
            }
        };
        let out = Fitted::of_trained(&self.trained, n_features, Vec::new())
            .map_err(value_error)?
            .report(py)?;
        out.set_item("classes", classes)?;
        out.set_item("n_features", n_features)?;
        Ok(out)
    }

    /// A copy with a calibration fitted on development rows with class indices `y` (0 or 1), as
    /// `maxmargin calibrate` fits one (`platt` or `isotonic`).
    fn calibrated(&self, x: Csr<'_>, y: PyReadonlyArray1<'_, f64>, method: &str) -> PyResult<Self> {
        let x = x.rows()?;
        crate::decision::calibrated(self, x, y.as_slice()?, method)
    }

    /// A copy with the cut-off chosen on development rows with class indices `y` by `rule` (as
    /// `maxmargin threshold` chooses one), and what the cut-off does there (`threshold`, `precision`,
    /// `recall`, `flag_rate`).
    #[allow(clippy::too_many_arguments)]
    fn thresholded<'py>(
        &self,
        py: Python<'py>,
        x: Csr<'py>,
        y: PyReadonlyArray1<'py, f64>,
        rule: &str,
        value: f64,
        false_positive: f64,
    ) -> PyResult<(Self, Bound<'py, PyDict>)> {
        let x = x.rows()?;
        let (model, at) =
            crate::decision::thresholded(self, x, y.as_slice()?, (rule, value, false_positive))?;
        Ok((model, dict(py, &at)?))
    }

    /// The positive class's probability for each row: calibrated, or a logistic model's own.
    fn probabilities<'py>(
        &self,
        py: Python<'py>,
        x: Csr<'py>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let Trained::Binary(m) = &self.trained else {
            return Err(value_error(
                "probabilities of one score apply to two classes",
            ));
        };
        let x = x.rows()?;
        let p = py.detach(|| m.probabilities(&x)).map_err(value_error)?;
        Ok(PyArray1::from_vec(py, p))
    }

    /// The calibration's method (`platt` or `isotonic`), if the model is calibrated.
    #[getter]
    fn calibration(&self) -> Option<&'static str> {
        let Trained::Binary(d) = &self.trained else {
            return None;
        };
        d.calibration.as_ref().map(|c| match c.map {
            maxmargin::linear::CalibrationMap::Platt(_) => "platt",
            maxmargin::linear::CalibrationMap::Isotonic(_) => "isotonic",
        })
    }

    /// The chosen cut-off on the score and its rule, if one was chosen.
    #[getter]
    fn threshold(&self) -> Option<(f64, String)> {
        let Trained::Binary(d) = &self.trained else {
            return None;
        };
        (d.threshold.as_ref()).map(|t| (t.score, t.rule.clone()))
    }
}

impl crate::persist::Persisted for Model {
    type Stored = Stored;
    const WHAT: &'static str = "model";

    fn save_to(&self, path: &std::path::Path) -> Result<(), maxmargin::Error> {
        match &self.trained {
            // A model without a calibration or cut-off is the command's plain model file.
            Trained::Binary(d) if decides(d) => d.save(path),
            Trained::Binary(d) => d.model.save(path),
            Trained::Multiclass(m) => m.save(path),
        }
    }

    /// A binary or multiclass model file.
    fn load_from(path: &std::path::Path) -> PyResult<Self> {
        let header = maxmargin::io::model_file::read_header(path).map_err(value_error)?;
        let trained = match header.kind.as_str() {
            // A calibrated or thresholded file keeps its calibration and cut-off.
            maxmargin::linear::MODEL_KIND | maxmargin::linear::DECISION_KIND => {
                Trained::Binary(Box::new(DecisionModel::load(path).map_err(value_error)?))
            }
            // A calibrated multiclass file gives its model (its probabilities are the command's).
            "multiclass" | maxmargin::structured_svm::MULTICLASS_DECISION_KIND => {
                let m = StructuredModel::load(path).map_err(value_error)?;
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

    fn stored(&self) -> std::borrow::Cow<'_, Stored> {
        std::borrow::Cow::Owned(match &self.trained {
            Trained::Binary(d) if decides(d) => Stored::Decision(d.clone()),
            Trained::Binary(d) => Stored::Binary(Box::new(d.model.clone())),
            Trained::Multiclass(m) => Stored::Multiclass(m.clone()),
        })
    }

    fn validated(stored: Stored, source: &std::path::Path) -> Result<Stored, maxmargin::Error> {
        Ok(match stored {
            Stored::Binary(m) => Stored::Binary(Box::new((*m).validated(source)?)),
            Stored::Multiclass(m) if m.task == maxmargin::Task::Multiclass => {
                Stored::Multiclass(Box::new((*m).validated(source)?))
            }
            Stored::Multiclass(m) => {
                return Err(maxmargin::io::IoError::BadModel {
                    path: source.to_path_buf(),
                    message: format!("a {} model, not a classifier", m.task.kind()),
                }
                .into());
            }
            Stored::Decision(d) => Stored::Decision(Box::new((*d).validated(source)?)),
        })
    }

    fn of_stored(stored: Stored) -> Self {
        Self::of(match stored {
            Stored::Binary(m) => Trained::binary(*m),
            Stored::Multiclass(m) => Trained::Multiclass(m),
            Stored::Decision(d) => Trained::Binary(d),
        })
    }
}

crate::persist::persisted!(Model);

/// Trains a kernel SVM by SMO (LIBSVM's method; one machine for two classes, one-vs-one or one-vs-rest
/// machines for more) on CSR rows with class indices `y`, and returns the model and a dict of the run's
/// certificate (`objective`, `duality_gap`, `n_iter`, `converged`, `stop`, `warnings`). With `approximation`
/// (`nystroem` or `rff`) the kernel is approximated by `n_components` features instead and a linear SVM is
/// trained on them by dual coordinate descent (Crammer–Singer's dual or one-vs-rest for more classes), as
/// `maxmargin train --approx` does.
#[pyfunction]
#[pyo3(signature = (
    x, y, sample_weight=None, *, c=1.0, kernel="rbf", gamma=None,
    degree=3, coef0=0.0, tol=None, gap=None, max_iter=None, class_weight=Vec::new(), multi_class="auto",
    random_state=0, scale="none", classes=None, verbose=0, approximation=None, n_components=100
))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn fit_kernel<'py>(
    py: Python<'py>,
    x: Csr<'py>,
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
    approximation: Option<&str>,
    n_components: usize,
) -> PyResult<(Model, Bound<'py, PyDict>)> {
    let x = x.rows()?;
    let (x, y, weights, k) = examples(x, y.as_slice()?, sample_weight.as_ref())?;
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
    let approx = match approximation {
        None => None,
        Some(m) => Some(Approximation {
            method: m
                .parse()
                .map_err(|_| value_error(format!("approximation={m:?}: give nystroem or rff")))?,
            components: n_components,
            kernel: choice,
        }),
    };
    let multi = match (multi_class, approx.is_some()) {
        ("auto" | "ovo", false) => StructSolverKind::Ovo,
        ("auto" | "crammer_singer", true) => StructSolverKind::Dcd,
        ("ovr", _) => StructSolverKind::Ovr,
        ("ovo", true) => {
            let why = "trains exact kernel machines, one per pair of classes: an approximated kernel \
                       trains auto (Crammer-Singer) or ovr";
            return Err(value_error(refused("multi_class", "ovo", why)));
        }
        ("crammer_singer", false) => {
            let why = "trains over an approximated kernel (approximation=nystroem or rff): exact \
                       kernel machines are ovo or ovr";
            return Err(value_error(refused("multi_class", "crammer_singer", why)));
        }
        (other, _) => {
            return Err(value_error(format!(
                "multi_class={other:?}: give auto, ovo, ovr or crammer_singer"
            )));
        }
    };
    let fit = |watch: &mut Watch<'_>| -> Result<(Trained, Fitted), maxmargin::Error> {
        if k <= 2 {
            let mut p = match approx {
                // A linear SVM on the kernel's features, its intercept a regularized feature (LIBLINEAR's).
                Some(a) => LinearSvmParams::new()
                    .solver(LinearSolver::Dcd(match tol {
                        Some(tol) => DcdParams::new().epsilon(tol),
                        None => DcdParams::new(),
                    }))
                    .bias(Bias::Feature)
                    .approx(a),
                None => LinearSvmParams::new()
                    .solver(LinearSolver::Smo {
                        smo: SmoParams {
                            epsilon: tol.unwrap_or(SmoParams::default().epsilon),
                            ..SmoParams::default()
                        },
                        kernel: choice,
                    })
                    .bias(Bias::Unregularized),
            }
            .regularization(Regularization::CSum(c))
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
            Ok((Trained::binary(report.model), fitted))
        } else {
            let mut p = StructuredSvmParams::new(Task::Multiclass).solver(multi);
            p = match approx {
                Some(a) => p.approx(a),
                None => p.kernel(choice),
            };
            let mut p = p.c(c).scale(scale).class_weights(class_weight);
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
    Ok((Model::of(trained), fitted.report(py)?))
}
