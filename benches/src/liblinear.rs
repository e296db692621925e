//! LIBLINEAR's model files for the benches, read by `maxmargin::io::liblinear` (the format, not LIBLINEAR's
//! code), so that our own evaluator computes the objective of its models (LIBLINEAR's printed objective is its
//! dual, in its own scaling).

use maxmargin::io::liblinear::LiblinearModel;
use std::path::Path;

/// A LIBLINEAR model, with its columns as our weights.
#[derive(Debug, Clone, PartialEq)]
pub struct Model(pub LiblinearModel);

impl std::ops::Deref for Model {
    type Target = LiblinearModel;

    fn deref(&self) -> &LiblinearModel {
        &self.0
    }
}

impl Model {
    /// Reads a model file, or `None` when it is not one.
    pub fn read(path: &Path) -> Option<Self> {
        LiblinearModel::read(path).ok().map(Self)
    }

    /// Column `m` as our weights `(w over n_features, b)` (the bias weight times the bias value).
    pub fn column(&self, m: usize, n_features: usize) -> (Vec<f64>, f64) {
        let mut w = vec![0.0; n_features];
        for (j, v) in w.iter_mut().enumerate().take(self.n_features) {
            *v = self.weight(j, m);
        }
        let b = if self.bias >= 0.0 {
            self.weight(self.n_features, m) * self.bias
        } else {
            0.0
        };
        (w, b)
    }
}
