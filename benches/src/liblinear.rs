//! LIBLINEAR's model files, read so that our own evaluator computes the objective of its models (LIBLINEAR's
//! printed objective is its dual, in its own scaling). This reads the format, not LIBLINEAR's code.
//!
//! The text format: header lines (`solver_type`, `nr_class`, `label ...`, `nr_feature`, `bias`), then `w` and
//! one line per feature (and one for the bias feature when `bias > 0`) with one weight per class (one column
//! for two classes, except Crammer–Singer, which always has `nr_class` columns).

use std::path::Path;

/// A LIBLINEAR model: weights per class, by feature.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// The solver line (`L2R_L1LOSS_SVC_DUAL`, `MCSVM_CS`, ...).
    pub solver: String,
    /// Class labels in LIBLINEAR's order.
    pub labels: Vec<f64>,
    /// The bias value (`-1` for none).
    pub bias: f64,
    /// Features (without the bias feature).
    pub n_features: usize,
    /// Weight columns per row.
    pub columns: usize,
    /// Row-major: `w[j * columns + m]`, rows `0..n_features`, then the bias row when `bias > 0`.
    pub w: Vec<f64>,
}

impl Model {
    /// Reads a model file, or `None` when it is not one.
    pub fn read(path: &Path) -> Option<Self> {
        let text = std::fs::read_to_string(path).ok()?;
        let mut lines = text.lines();
        let (mut solver, mut labels, mut bias, mut n_features, mut n_class) =
            (String::new(), Vec::new(), -1.0, 0, 0);
        for line in lines.by_ref() {
            let mut parts = line.split_whitespace();
            match parts.next()? {
                "solver_type" => solver = parts.next()?.to_string(),
                "nr_class" => n_class = parts.next()?.parse().ok()?,
                "label" => labels = parts.filter_map(|v| v.parse().ok()).collect(),
                "nr_feature" => n_features = parts.next()?.parse().ok()?,
                "bias" => bias = parts.next()?.parse().ok()?,
                "w" => break,
                _ => {}
            }
        }
        let columns = if n_class == 2 && solver != "MCSVM_CS" {
            1
        } else {
            n_class
        };
        let w: Vec<f64> = lines
            .flat_map(|l| l.split_whitespace().filter_map(|v| v.parse().ok()))
            .collect();
        let rows = n_features + usize::from(bias > 0.0);
        (w.len() == rows * columns).then_some(Self {
            solver,
            labels,
            bias,
            n_features,
            columns,
            w,
        })
    }

    /// Column `m` as our weights `(w over n_features, b)` (the bias weight times the bias value).
    pub fn column(&self, m: usize, n_features: usize) -> (Vec<f64>, f64) {
        let mut w = vec![0.0; n_features];
        for (j, v) in w.iter_mut().enumerate().take(self.n_features) {
            *v = self.w[j * self.columns + m];
        }
        let b = if self.bias > 0.0 {
            self.w[self.n_features * self.columns + m] * self.bias
        } else {
            0.0
        };
        (w, b)
    }
}
