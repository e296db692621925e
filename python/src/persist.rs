//! What every model class does with its model file and its pickle, written once: `save`, `load`,
//! `to_bytes` and `from_bytes` are [`Persisted`]'s, and [`persisted!`] gives a class those four Python
//! methods (a second `#[pymethods]` block: pyo3's `multiple-pymethods`).

use super::*;
use std::borrow::Cow;
use std::path::Path;

/// A Python class that keeps one Rust model whole: its file and its pickle.
pub(crate) trait Persisted: Sized {
    /// What a pickle holds (the model, as its JSON model file would).
    type Stored: serde::Serialize + serde::de::DeserializeOwned + Clone;
    /// The model, in a pickle's error (`graph model`).
    const WHAT: &'static str;

    /// Writes the command's model file (JSON for a `.json` path), atomically.
    fn save_to(&self, path: &Path) -> Result<(), maxmargin::Error>;
    /// Reads a model file written by [`Persisted::save_to`] or by `maxmargin train`.
    fn load_from(path: &Path) -> PyResult<Self>;
    /// What [`Persisted::to_bytes`] pickles.
    fn stored(&self) -> Cow<'_, Self::Stored>;
    /// The class around an unpickled model.
    fn of_stored(stored: Self::Stored) -> Self;
    /// An unpickled model checked and completed as the facade's `load` makes it (`validated`), errors
    /// naming `source`.
    fn validated(stored: Self::Stored, source: &Path) -> Result<Self::Stored, maxmargin::Error>;

    /// The model as bytes ([`Persisted::from_bytes`] reads them back): its JSON.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = serde_json::to_vec(&*self.stored()).map_err(value_error)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// A model from [`Persisted::to_bytes`], refused where a model file of it would be (bytes are as
    /// untrusted as a file: sizes that disagree would panic in `predict`).
    fn from_bytes(bytes: &[u8]) -> PyResult<Self> {
        let source = format!("pickled maxmargin {}", Self::WHAT);
        let stored = serde_json::from_slice(bytes)
            .map_err(|e| value_error(format!("not a {source}: {e}")))?;
        let stored = Self::validated(stored, Path::new(&source)).map_err(value_error)?;
        Ok(Self::of_stored(stored))
    }
}

/// Gives `$class` (a [`Persisted`]) the Python methods `save`, `load`, `to_bytes` and `from_bytes`; with a
/// field and its model type, also the [`Persisted`] of a class that holds that model alone.
macro_rules! persisted {
    ($class:ident { $field:ident: $model:ty }, $what:literal) => {
        impl $crate::persist::Persisted for $class {
            type Stored = $model;
            const WHAT: &'static str = $what;

            fn save_to(&self, path: &std::path::Path) -> Result<(), maxmargin::Error> {
                self.$field.save(path)
            }

            fn load_from(path: &std::path::Path) -> PyResult<Self> {
                let $field = <$model>::load(path).map_err(value_error)?;
                Ok(Self { $field })
            }

            fn stored(&self) -> std::borrow::Cow<'_, $model> {
                std::borrow::Cow::Borrowed(&self.$field)
            }

            fn of_stored($field: $model) -> Self {
                Self { $field }
            }

            fn validated(
                stored: $model,
                source: &std::path::Path,
            ) -> Result<$model, maxmargin::Error> {
                stored.validated(source)
            }
        }
        $crate::persist::persisted!($class);
    };
    ($class:ident) => {
        #[pymethods]
        impl $class {
            /// Saves the model as the file `maxmargin predict` reads (JSON for a `.json` path), atomically.
            fn save(&self, path: std::path::PathBuf) -> PyResult<()> {
                $crate::persist::Persisted::save_to(self, &path).map_err(value_error)
            }

            /// A model file written by `save` or by `maxmargin train`.
            #[staticmethod]
            fn load(path: std::path::PathBuf) -> PyResult<Self> {
                <Self as $crate::persist::Persisted>::load_from(&path)
            }

            /// The model as bytes (`from_bytes` reads them back).
            fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
                $crate::persist::Persisted::to_bytes(self, py)
            }

            /// A model from `to_bytes`.
            #[staticmethod]
            fn from_bytes(bytes: &[u8]) -> PyResult<Self> {
                <Self as $crate::persist::Persisted>::from_bytes(bytes)
            }
        }
    };
}
pub(crate) use persisted;
