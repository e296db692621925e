//! Latent structural SVMs from Python: multiclass models with latent subclasses and chains with latent
//! states, trained by the facade's CCCP rounds around any structural solver, kept whole as a
//! [`LatentModel`] that predicts and saves the model files the `maxmargin` command reads.

use super::structured::{Data, data, flat, task, unlabelled};
use super::*;
use crate::persist::{Persisted, persisted};
use maxmargin::structured_svm::{
    LATENT_CHAIN_KIND, LATENT_KIND, LatentChainModel, LatentMulticlassModel, Prediction,
};
use std::borrow::Cow;
use std::path::Path;

/// The latent model of either task.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(crate) enum Latent {
    Multiclass(LatentMulticlassModel),
    Chain(LatentChainModel),
}

/// A trained latent model: its predictions, its rounds, and its model file.
#[pyclass(module = "maxmargin._core", frozen)]
pub(crate) struct LatentModel {
    model: Latent,
}

impl LatentModel {
    fn joint(&self) -> &StructuredModel {
        match &self.model {
            Latent::Multiclass(m) => &m.model,
            Latent::Chain(m) => &m.model,
        }
    }
}

#[pymethods]
impl LatentModel {
    /// Predictions for CSR rows, flat: a class index per row (multiclass) or a 0-based tag per position
    /// (chain, rows split by `lengths`).
    #[pyo3(signature = (x, lengths=None))]
    fn predict<'py>(
        &self,
        py: Python<'py>,
        x: Csr<'py>,
        lengths: Option<PyReadonlyArray1<'py, i64>>,
    ) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let (task, labels) = match &self.model {
            Latent::Multiclass(m) => (Task::Multiclass, m.classes.len()),
            Latent::Chain(m) => (Task::Chain, m.tags),
        };
        let data = unlabelled(task, x, lengths, labels, None)?;
        let predictions = py
            .detach(|| match (&self.model, &data) {
                (Latent::Multiclass(m), Data::Multiclass(d)) => {
                    Ok(m.predict(d)?.into_iter().map(Prediction::Class).collect())
                }
                (Latent::Chain(m), Data::Chain(d)) => m.predict(d),
                _ => Ok(Vec::new()),
            })
            .map_err(value_error)?;
        Ok(PyArray1::from_vec(py, flat(predictions, labels)))
    }

    /// The task: `multiclass` or `chain`.
    #[getter]
    fn task(&self) -> &'static str {
        self.joint().task.kind()
    }

    /// Latent subclasses per class, or states per tag.
    #[getter]
    fn n_latent(&self) -> usize {
        match &self.model {
            Latent::Multiclass(m) => m.subclasses,
            Latent::Chain(m) => m.states,
        }
    }

    /// The joint model's weight vector `w` (blocks over the joint labels `label·K + latent`).
    #[getter]
    fn w<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_vec(py, self.joint().w.clone())
    }

    /// The latent objective at the model's weights (λ-form).
    #[getter]
    fn latent_objective(&self) -> f64 {
        match &self.model {
            Latent::Multiclass(m) => m.objective,
            Latent::Chain(m) => m.objective,
        }
    }

    /// Every outer round as a dict: `objective`, `inner_objective`, `inner_gap`, `inner_passes`, `changed`.
    #[getter]
    fn rounds<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let rounds = match &self.model {
            Latent::Multiclass(m) => &m.rounds,
            Latent::Chain(m) => &m.rounds,
        };
        rounds.iter().map(|r| dict(py, r)).collect()
    }

    /// Why the rounds stopped: `converged`, `rose` or `rounds`.
    #[getter]
    fn latent_stop(&self) -> String {
        let stop = match &self.model {
            Latent::Multiclass(m) => m.stop,
            Latent::Chain(m) => m.stop,
        };
        format!("{stop:?}").to_lowercase()
    }
}

impl Persisted for LatentModel {
    type Stored = Latent;
    const WHAT: &'static str = "latent model";

    fn save_to(&self, path: &Path) -> Result<(), maxmargin::Error> {
        match &self.model {
            Latent::Multiclass(m) => m.save(path),
            Latent::Chain(m) => m.save(path),
        }
    }

    fn load_from(path: &Path) -> PyResult<Self> {
        let kind = maxmargin::io::model_file::read_header(path)
            .map_err(value_error)?
            .kind;
        let model = match kind.as_str() {
            k if k == LATENT_KIND => {
                Latent::Multiclass(LatentMulticlassModel::load(path).map_err(value_error)?)
            }
            k if k == LATENT_CHAIN_KIND => {
                Latent::Chain(LatentChainModel::load(path).map_err(value_error)?)
            }
            other => {
                return Err(value_error(format!(
                    "{}: a {other} model, not a latent one ({LATENT_KIND} or {LATENT_CHAIN_KIND})",
                    path.display()
                )));
            }
        };
        Ok(Self { model })
    }

    fn stored(&self) -> Cow<'_, Latent> {
        Cow::Borrowed(&self.model)
    }

    fn validated(model: Latent, source: &Path) -> Result<Latent, maxmargin::Error> {
        Ok(match model {
            Latent::Multiclass(m) => Latent::Multiclass(m.validated(source)?),
            Latent::Chain(m) => Latent::Chain(m.validated(source)?),
        })
    }

    fn of_stored(model: Latent) -> Self {
        Self { model }
    }
}

persisted!(LatentModel);

/// Trains a latent model of `task` (`multiclass`: `latent` subclasses per class; `chain`: `latent` states
/// per tag) on CSR rows (as `fit_structured` takes them) by CCCP rounds whose convex problems the settings
/// of `learning` solve ([`Learning`]); returns the model and the certificate of its last convex solve.
#[pyfunction]
#[pyo3(signature = (task, x, y, lengths, n_labels, learning, *, latent=2))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn fit_latent<'py>(
    py: Python<'py>,
    task: &str,
    x: Csr<'py>,
    y: PyReadonlyArray1<'py, i64>,
    lengths: Option<PyReadonlyArray1<'py, i64>>,
    n_labels: usize,
    learning: Learning,
    latent: usize,
) -> PyResult<(LatentModel, Bound<'py, PyDict>)> {
    let task = self::task(task)?;
    let x = x.rows()?;
    let lengths = lengths.as_ref().map(|l| l.as_slice()).transpose()?;
    let data = self::data(task, x, y.as_slice()?, lengths, n_labels)?;
    let svm = learning.params(task)?.check().map_err(value_error)?;
    let (report, interrupted) = interruptible(py, learning.verbose, |watch| match &data {
        Data::Multiclass(d) => svm
            .fit_latent_multiclass(d, latent, watch)
            .map(|r| (Latent::Multiclass(r.model), r.warnings)),
        Data::Chain(d) => svm
            .fit_latent_chain(d, latent, watch)
            .map(|r| (Latent::Chain(r.model), r.warnings)),
        Data::Multilabel(_) => Err(refused(
            "task",
            "multilabel",
            "latent models are multiclass (subclasses) or chains (states)",
        )),
    });
    let (model, warnings) = kept(report, interrupted)?;
    let model = LatentModel { model };
    let fitted = Fitted::of_structured(model.joint(), warnings);
    Ok((model, fitted.report(py)?))
}
