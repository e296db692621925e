//! Multiclass kernel models: binary machines over one shared set of support vectors. Each row's kernel
//! values against the support vectors are computed once, then every machine sums over its own.
//!
//! - One-vs-one (LIBSVM's): a machine per pair `a < b`, positive for `a`. A class's score is scikit-learn's
//!   `decision_function_shape="ovr"`: its votes plus `s/(3(|s| + 1))`, `s` the sum of its machines'
//!   decision values (signed for it), so the largest score is the vote's winner with ties broken by
//!   confidence.
//! - Per class (one-vs-rest SMO, and Nyström models folded into landmark expansions): a class's score is its
//!   machine's value.

use crate::linear::kernel::{Norms, kernel_row};
use maxmargin_core::kernel::Kernel;
use maxmargin_core::vector::{SparseRow, SparseRows};
use maxmargin_optim::smo::multiclass::{Machine, Scheme};
use serde::{Deserialize, Serialize};

/// A multiclass kernel model's scores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MulticlassKernel {
    /// The kernel, `γ` resolved.
    pub kernel: Kernel,
    /// How the machines make the classes' scores.
    pub scheme: Scheme,
    /// Every machine's support vectors, once (scaled as in training).
    pub support: SparseRows,
    /// The machines; their `rows` index `support`.
    pub machines: Vec<Machine>,
    #[serde(skip)]
    norms: Norms,
}

impl MulticlassKernel {
    /// The model of trained machines whose `rows` index the training rows `x`: the support vectors they use
    /// are gathered once, in row order, and the machines renumbered onto them.
    pub fn from_machines(
        kernel: Kernel,
        scheme: Scheme,
        x: &SparseRows,
        mut machines: Vec<Machine>,
    ) -> Self {
        let mut used: Vec<u32> = machines.iter().flat_map(|m| m.rows.clone()).collect();
        used.sort_unstable();
        used.dedup();
        let rows: Vec<usize> = used.iter().map(|&r| r as usize).collect();
        let mut support = x.select(&rows);
        support.set_n_features_at_least(x.n_features());
        for m in &mut machines {
            for r in &mut m.rows {
                *r = used.binary_search(r).expect("gathered above") as u32;
            }
        }
        Self {
            kernel,
            scheme,
            support,
            machines,
            norms: Norms::default(),
        }
    }

    /// Per-class machines over every row of `support` (Nyström's landmarks): class `c`'s score is
    /// `Σ_j coef[c][j] K(s_j, x) + b[c]`.
    pub fn per_class(kernel: Kernel, support: SparseRows, coef: Vec<Vec<f64>>, b: &[f64]) -> Self {
        let all: Vec<u32> = (0..support.n_rows() as u32).collect();
        let machines = coef
            .into_iter()
            .zip(b)
            .enumerate()
            .map(|(c, (coef, &b))| Machine {
                positive: c as u32,
                negative: None,
                rows: all.clone(),
                coef,
                b,
            })
            .collect();
        Self {
            kernel,
            scheme: Scheme::OneVsRest,
            support,
            machines,
            norms: Norms::default(),
        }
    }

    /// Support vectors.
    pub fn n_support(&self) -> usize {
        self.support.n_rows()
    }

    fn norms(&self) -> &[f64] {
        self.norms
            .0
            .get_or_init(|| self.support.rows().map(|s| s.norm_sq()).collect())
    }

    /// The classes' scores of one (scaled) row.
    pub fn scores(&self, x: SparseRow<'_>, n_classes: usize) -> Vec<f64> {
        let values = kernel_row(&self.kernel, &self.support, self.norms(), x);
        let value = |m: &Machine| -> f64 {
            m.rows
                .iter()
                .zip(&m.coef)
                .map(|(&r, &c)| c * values[r as usize])
                .sum::<f64>()
                + m.b
        };
        match self.scheme {
            Scheme::OneVsRest => {
                let mut out = vec![f64::NEG_INFINITY; n_classes];
                for m in &self.machines {
                    out[m.positive as usize] = value(m);
                }
                out
            }
            Scheme::OneVsOne => {
                let (mut votes, mut sum) = (vec![0.0; n_classes], vec![0.0; n_classes]);
                for m in &self.machines {
                    let (a, b) = (m.positive as usize, m.negative.unwrap_or(0) as usize);
                    let f = value(m);
                    if f > 0.0 {
                        votes[a] += 1.0;
                    } else {
                        votes[b] += 1.0;
                    }
                    sum[a] += f;
                    sum[b] -= f;
                }
                votes
                    .iter()
                    .zip(&sum)
                    .map(|(v, s)| v + s / (3.0 * (s.abs() + 1.0)))
                    .collect()
            }
        }
    }

    /// [`MulticlassKernel::scores`] of every row, rows in parallel (each row's scores depend only on it).
    pub fn scores_rows(&self, x: &SparseRows, n_classes: usize) -> Vec<Vec<f64>> {
        use rayon::prelude::*;
        self.norms();
        (0..x.n_rows())
            .into_par_iter()
            .map(|i| self.scores(x.row(i), n_classes))
            .collect()
    }

    /// Why the model cannot be one of `n_classes` classes and `n_features` features, if it cannot.
    pub fn invalid(&self, n_classes: usize, n_features: usize) -> Option<String> {
        if let Err((name, value, reason)) = self.kernel.check() {
            return Some(format!("the kernel's {name} {value} {reason}"));
        }
        if !self.support.is_valid() || self.support.n_features() > n_features.max(1) {
            return Some("the support vectors are not valid rows of the model's features".into());
        }
        let expected = match self.scheme {
            Scheme::OneVsOne => n_classes
                .checked_mul(n_classes.saturating_sub(1))
                .map(|p| p / 2),
            Scheme::OneVsRest => Some(n_classes),
        };
        if expected != Some(self.machines.len()) {
            return Some(format!(
                "{} machines for {n_classes} classes ({:?})",
                self.machines.len(),
                self.scheme
            ));
        }
        let n_sv = self.support.n_rows();
        for (i, m) in self.machines.iter().enumerate() {
            let classes_ok = (m.positive as usize) < n_classes
                && match (self.scheme, m.negative) {
                    (Scheme::OneVsOne, Some(b)) => m.positive < b && (b as usize) < n_classes,
                    (Scheme::OneVsRest, None) => true,
                    _ => false,
                };
            if !classes_ok
                || m.rows.len() != m.coef.len()
                || m.rows.iter().any(|&r| r as usize >= n_sv)
                || !m.coef.iter().all(|c| c.is_finite())
                || !m.b.is_finite()
            {
                return Some(format!(
                    "machine {} is not a machine of these classes and support vectors",
                    i + 1
                ));
            }
        }
        None
    }
}

impl super::StructuredModel {
    /// A multiclass kernel model's class scores of every row (`None` for a linear model).
    pub(super) fn kernel_scores(
        &self,
        x: &maxmargin_core::vector::SparseRows,
    ) -> Option<Vec<Vec<f64>>> {
        let k = self.kernel.as_ref()?;
        // Features beyond the model's are ignored (the kernel's distances would count them).
        let x = x.below(self.n_input_features());
        Some(match &self.scaler {
            Some(s) => k.scores_rows(&s.transform(&x), self.n_labels),
            None => k.scores_rows(&x, self.n_labels),
        })
    }

    /// Whether the model's boundaries are not linear in the features (kernel machines, or random Fourier
    /// features): it has no weight per feature.
    pub fn is_nonlinear(&self) -> bool {
        self.kernel.is_some() || self.features.is_some()
    }

    /// The input features the model reads (a feature map's own inputs when it has one).
    pub fn n_input_features(&self) -> usize {
        crate::approx::FeatureMap::n_input_of(self.features.as_deref(), self.n_features)
    }

    /// Feature `j`'s name (0-based) when the model was trained on CSV data with a header; empty otherwise.
    pub fn feature_names(&self) -> &[String] {
        crate::inputs::Inputs::names_of(self.inputs.as_deref())
    }

    /// The label column's name when the model was trained on CSV data (`predict` and `eval` read it by
    /// that name unless `--label-column` says otherwise); `None` otherwise.
    pub fn label_column(&self) -> Option<&str> {
        crate::inputs::Inputs::label_column_of(self.inputs.as_deref())
    }
}

/// The index of the largest value (the first of equal ones).
pub(super) fn argmax(v: &[f64]) -> usize {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[best] {
            best = i;
        }
    }
    best
}
