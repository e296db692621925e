//! Kernel SVMs in the binary model: which kernel a run asks for ([`KernelChoice`], with scikit-learn's
//! `gamma="scale"` by default), and what a trained model keeps to score a row ([`KernelExpansion`]: the
//! support vectors, scaled as in training, and their coefficients `α_i y_i`).

use maxmargin_core::kernel::Kernel;
use maxmargin_core::vector::{SparseRow, SparseRows};
use serde::{Deserialize, Serialize};

/// At most this many features are scattered into a dense buffer to score a row.
pub(crate) const DENSE_LIMIT: usize = 1 << 16;

/// A zeroed scratch row for [`kernel_values`] over rows of `d` features (empty beyond [`DENSE_LIMIT`]: the
/// dot products then merge sparse rows).
pub(crate) fn scratch(d: usize) -> Vec<f64> {
    if d <= DENSE_LIMIT {
        vec![0.0; d]
    } else {
        Vec::new()
    }
}

/// `K(s_k, x)` of every row `s_k` of `support` (squared norms `norms`) into `out`. The row is scattered into
/// `dense` (from [`scratch`]) once, so each dot product is a gather instead of a merge; `dense` is left zeroed
/// for the next row.
pub(crate) fn kernel_values(
    kernel: &Kernel,
    support: &SparseRows,
    norms: &[f64],
    x: SparseRow<'_>,
    dense: &mut [f64],
    out: &mut [f64],
) {
    let x_sq = x.norm_sq();
    for (&j, &v) in x.indices().iter().zip(x.values()) {
        if let Some(slot) = dense.get_mut(j as usize) {
            *slot = v;
        }
    }
    for ((o, s), &s_sq) in out.iter_mut().zip(support.rows()).zip(norms) {
        let dot = if dense.is_empty() {
            s.dot_sparse(&x)
        } else {
            s.dot(dense)
        };
        *o = kernel.from_dot(dot, s_sq, x_sq);
    }
    for &j in x.indices() {
        if let Some(slot) = dense.get_mut(j as usize) {
            *slot = 0.0;
        }
    }
}

/// [`kernel_values`] of one row, with its own scratch row.
pub(crate) fn kernel_row(
    kernel: &Kernel,
    support: &SparseRows,
    norms: &[f64],
    x: SparseRow<'_>,
) -> Vec<f64> {
    let mut out = vec![0.0; support.n_rows()];
    let mut dense = scratch(support.n_features());
    kernel_values(kernel, support, norms, x, &mut dense, &mut out);
    out
}

/// The kernel's family, as `--kernel` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KernelKind {
    /// `⟨x, z⟩`.
    Linear,
    /// `exp(−γ‖x − z‖²)` (the default, as LIBSVM's and scikit-learn's).
    #[default]
    Rbf,
    /// `(γ⟨x, z⟩ + coef0)^degree`.
    Poly,
    /// `tanh(γ⟨x, z⟩ + coef0)`.
    Sigmoid,
}

impl std::str::FromStr for KernelKind {
    type Err = maxmargin_optim::OptimError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "linear" => Ok(Self::Linear),
            "rbf" => Ok(Self::Rbf),
            "poly" => Ok(Self::Poly),
            "sigmoid" => Ok(Self::Sigmoid),
            _ => Err(maxmargin_optim::OptimError::InvalidParam {
                name: "kernel",
                value: s.into(),
                reason: "must be linear, rbf, poly or sigmoid",
            }),
        }
    }
}

/// A kernel as a run asks for it: the family, `γ` (`None`: scikit-learn's `scale`, `1/(d·Var(X))` on the
/// training rows after scaling), the degree (3) and `coef0` (0), as LIBSVM's `-t -g -d -r`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct KernelChoice {
    /// The family.
    pub kind: KernelKind,
    /// `γ`, or `None` for `scale`.
    pub gamma: Option<f64>,
    /// The polynomial's degree.
    pub degree: u32,
    /// The constant of the polynomial and sigmoid kernels.
    pub coef0: f64,
}

impl Default for KernelChoice {
    fn default() -> Self {
        Self {
            kind: KernelKind::Rbf,
            gamma: None,
            degree: 3,
            coef0: 0.0,
        }
    }
}

impl KernelChoice {
    /// Checks `γ` (finite and `> 0` when given), `coef0` (finite) and the degree (1 to 100).
    ///
    /// # Errors
    /// [`maxmargin_optim::OptimError::InvalidParam`] naming the first bad one.
    pub fn check(&self) -> Result<(), maxmargin_optim::OptimError> {
        let refuse = |name: &'static str, value: String, reason: &'static str| {
            Err(maxmargin_optim::OptimError::InvalidParam {
                name,
                value,
                reason,
            })
        };
        if let Some(g) = self.gamma
            && !(g.is_finite() && g > 0.0)
        {
            return refuse("gamma", g.to_string(), "must be finite and > 0");
        }
        if !self.coef0.is_finite() {
            return refuse("coef0", self.coef0.to_string(), "must be finite");
        }
        if !(1..=100).contains(&self.degree) {
            return refuse("degree", self.degree.to_string(), "must be from 1 to 100");
        }
        Ok(())
    }

    /// The kernel on these (scaled) training rows: `γ` resolved.
    pub fn resolve(&self, x: &SparseRows) -> Kernel {
        let gamma = self
            .gamma
            .unwrap_or_else(|| maxmargin_core::kernel::gamma_scale(x));
        match self.kind {
            KernelKind::Linear => Kernel::Linear,
            KernelKind::Rbf => Kernel::Rbf { gamma },
            KernelKind::Poly => Kernel::Poly {
                gamma,
                coef0: self.coef0,
                degree: self.degree,
            },
            KernelKind::Sigmoid => Kernel::Sigmoid {
                gamma,
                coef0: self.coef0,
            },
        }
    }
}

/// What a kernel model scores with: `f(x) = Σ_k coef_k K(s_k, x) + b` over its support vectors `s_k`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelExpansion {
    /// The kernel, `γ` resolved.
    pub kernel: Kernel,
    /// The support vectors, as the solver saw them (scaled when the model scales).
    pub support: SparseRows,
    /// `α_k y_k` of each support vector.
    pub coef: Vec<f64>,
    /// The support vectors' squared norms, computed on first use (not stored).
    #[serde(skip)]
    norms: Norms,
}

/// A lazily computed vector that every model compares equal on (it is derived from the stored fields).
#[derive(Debug, Clone, Default)]
pub(crate) struct Norms(pub(crate) std::sync::OnceLock<Vec<f64>>);

impl PartialEq for Norms {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// Training rows whose kernel values `K(x, x)` (those above 0) span more than this ratio have the saved
/// model's objective recomputed from its support vectors ([`recomputed_objective`]).
const SPAN: f64 = 1e12;

/// The primal objective `λ/2‖w‖² + (1/n) Σ c_i max(0, 1 − y_i f(x_i))` of `expansion` with intercept `b` on
/// its training rows `x`, and the dual `λ(Σ α_i − ½‖w‖²)` at its duals, recomputed from its support vectors,
/// with a note saying why, when the rows'
/// `K(x, x)` span more than [`SPAN`] and the solver's running value `objective` is off by more than 1e-6
/// relative. A polynomial kernel of high degree spans hundreds of orders of magnitude: the running gradient
/// then loses the rows of small values (a user's run certified an objective of 1e-10 for a model whose
/// objective is 5.4e7). `None` otherwise; the check costs `n × support vectors` kernel values, so it runs
/// only over such a span.
pub(crate) fn recomputed_objective(
    expansion: &KernelExpansion,
    x: &SparseRows,
    (y, weights): (&[f64], Option<&[f64]>),
    (lambda, b): (f64, f64),
    objective: f64,
) -> Option<(f64, f64, String)> {
    let kernel = &expansion.kernel;
    let (lo, hi) = (x.rows())
        .map(|r| kernel.self_value(r.norm_sq()))
        .filter(|k| *k > 0.0 || k.is_nan())
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), k| {
            (lo.min(k), hi.max(k))
        });
    if hi <= SPAN * lo {
        return None;
    }
    let f = expansion.values(x);
    let hinge = |(i, (fi, yi)): (usize, (&f64, &f64))| {
        weights.map_or(1.0, |w| w[i]) * (1.0 - yi * (fi + b)).max(0.0)
    };
    let loss = f.iter().zip(y).enumerate().map(hinge).sum::<f64>() / y.len() as f64;
    let quad = expansion.norm_sq();
    let p = 0.5 * lambda * quad + loss;
    if (p - objective).abs() <= 1e-6 * p.abs().max(objective.abs()) {
        return None;
    }
    // The dual at the same duals (|coef| = α), valued anew too: the solver's came from the same gradient.
    let d = lambda * (expansion.coef.iter().map(|c| c.abs()).sum::<f64>() - 0.5 * quad);
    let short = |v: f64| crate::convergence::short(v, 6, false);
    Some((
        p,
        d,
        format!(
            "the model's objective recomputed from its support vectors is {}, where the solver's running \
             value was {}: the kernel's values K(x, x) on the training rows span {lo:.1e} to {hi:.1e}, more \
             than 64-bit arithmetic resolves in one problem; scale the features (--scale), or lower --degree \
             or --gamma",
            short(p),
            short(objective)
        ),
    ))
}

impl KernelExpansion {
    /// The support vectors of a solution: the rows of `x` whose coefficient is not zero.
    pub fn from_solution(kernel: Kernel, x: &SparseRows, coef: &[f64]) -> Self {
        let mut support = SparseRows::new();
        support.set_n_features_at_least(x.n_features());
        let mut kept = Vec::new();
        for (i, &c) in coef.iter().enumerate() {
            if c != 0.0 {
                let r = x.row(i);
                support
                    .push_row(r.indices(), r.values())
                    .expect("a training row is a valid row");
                kept.push(c);
            }
        }
        Self {
            kernel,
            support,
            coef: kept,
            norms: Norms::default(),
        }
    }

    /// The expansion `Σ_k coef_k K(s_k, ·)` of these rows and coefficients (one per row).
    pub fn from_parts(kernel: Kernel, support: SparseRows, coef: Vec<f64>) -> Self {
        debug_assert_eq!(support.n_rows(), coef.len());
        Self {
            kernel,
            support,
            coef,
            norms: Norms::default(),
        }
    }

    /// The support vectors' squared norms.
    fn norms(&self) -> &[f64] {
        self.norms
            .0
            .get_or_init(|| self.support.rows().map(|s| s.norm_sq()).collect())
    }

    /// `Σ_k coef_k K(s_k, x)` (without the intercept). The row is scattered into a dense buffer once when the
    /// features are few enough, so each support vector's dot product is a gather instead of a merge.
    pub fn value(&self, x: SparseRow<'_>) -> f64 {
        let k = kernel_row(&self.kernel, &self.support, self.norms(), x);
        k.iter().zip(&self.coef).map(|(k, c)| c * k).sum()
    }

    /// [`KernelExpansion::value`] of every row, in parallel (each row its own sum: the values do not depend on
    /// the thread count).
    pub fn values(&self, x: &SparseRows) -> Vec<f64> {
        use rayon::prelude::*;
        self.norms();
        (0..x.n_rows())
            .into_par_iter()
            .map(|i| self.value(x.row(i)))
            .collect()
    }

    /// `‖w‖²` in the kernel's feature space: `Σ_jk coef_j coef_k K(s_j, s_k)`.
    pub fn norm_sq(&self) -> f64 {
        // The values in parallel, their sum in order: the same bits on any number of threads.
        let v = self.values(&self.support);
        v.iter().zip(&self.coef).map(|(v, c)| v * c).sum()
    }

    /// Support vectors.
    pub fn n_support(&self) -> usize {
        self.coef.len()
    }

    /// Why the expansion cannot be a model's of `n_features` features, if it cannot: the kernel's
    /// parameters, the rows' layout, finite values.
    pub fn invalid(&self, n_features: usize) -> Option<String> {
        if let Err((name, value, reason)) = self.kernel.check() {
            return Some(format!("the kernel's {name} {value} {reason}"));
        }
        if !self.support.is_valid() || self.support.n_features() > n_features.max(1) {
            return Some("the support vectors are not valid rows of the model's features".into());
        }
        if self.support.n_rows() != self.coef.len() {
            return Some(format!(
                "{} support vectors for {} coefficients",
                self.support.n_rows(),
                self.coef.len()
            ));
        }
        if !self.coef.iter().all(|c| c.is_finite()) {
            return Some("a support vector's coefficient is not finite".into());
        }
        None
    }
}
