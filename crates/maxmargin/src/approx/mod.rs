//! Approximated kernels: an explicit map `z(x)` of `K` components with `⟨z(x), z(x′)⟩ ≈ K(x, x′)`, fitted on
//! the training rows (after scaling) from the run's seed, so that the linear solvers (DCD, Pegasos, logistic
//! DCD) learn a nonlinear boundary at linear cost.
//!
//! - **Random Fourier features** (Rahimi & Recht 2007), for the RBF kernel: `z_k(x) = √(2/K) cos(⟨ω_k, x⟩ +
//!   φ_k)` with `ω_k ~ N(0, 2γ I)` and `φ_k ~ U[0, 2π)`. The model keeps the frequencies and phases
//!   ([`FourierFeatures`]); scoring a row costs `K` sparse dot products and `K` cosines.
//! - **Nyström** (Williams & Seeger 2001), for any kernel: `K` landmarks drawn from the training rows without
//!   replacement, and `z(x) = K_mm^{−1/2} k(x)` with `k(x)_j = K(l_j, x)` (eigenvalues below `1e-12` clipped,
//!   as scikit-learn's `Nystroem`). A linear model `⟨w, z(x)⟩` is then `Σ_j c_j K(l_j, x)` with `c =
//!   K_mm^{−1/2} w`: the trained model is kept as that kernel expansion over the landmarks, so serving it
//!   costs `K` kernel values and no matrix product.

use crate::Error;
use crate::linear::KernelChoice;
use maxmargin_core::kernel::Kernel;
use maxmargin_core::vector::{SparseRow, SparseRows};
use maxmargin_optim::OptimError;
use nalgebra::DMatrix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Most components a map may have.
pub const MAX_COMPONENTS: usize = 100_000;
/// Most bytes the random Fourier features' frequencies may take (`features × components × 8`).
pub const FOURIER_LIMIT_BYTES: usize = 1 << 30;
/// Most bytes the Nyström landmarks' kernel matrix and its decomposition may take (a few `K × K` matrices).
pub const NYSTROEM_LIMIT_BYTES: usize = 1 << 32;
/// Rows transformed per block (the blocks run in parallel; each row's values depend only on the row).
const BLOCK: usize = 256;

/// How a kernel is approximated, as `--approx` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApproxMethod {
    /// Random Fourier features (RBF only).
    Rff,
    /// Nyström features on landmarks drawn from the training rows.
    Nystroem,
}

impl std::str::FromStr for ApproxMethod {
    type Err = OptimError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "rff" => Ok(Self::Rff),
            "nystroem" | "nystrom" => Ok(Self::Nystroem),
            _ => Err(OptimError::InvalidParam {
                name: "approx",
                value: s.into(),
                reason: "must be rff or nystroem",
            }),
        }
    }
}

impl std::fmt::Display for ApproxMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Rff => "rff",
            Self::Nystroem => "nystroem",
        })
    }
}

/// An approximated kernel as a run asks for it: the method, the number of components and the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Approximation {
    /// Random Fourier or Nyström features.
    pub method: ApproxMethod,
    /// `K`: the map's dimension (Nyström: the landmarks, at most the training rows).
    pub components: usize,
    /// The kernel approximated (`γ` `None`: scikit-learn's `scale` on the scaled training rows).
    pub kernel: KernelChoice,
}

impl Approximation {
    /// `K` components of `method` for the RBF kernel with `γ` = `scale`.
    pub fn new(method: ApproxMethod, components: usize) -> Self {
        Self {
            method,
            components,
            kernel: KernelChoice::default(),
        }
    }

    /// Checks the components (1 to [`MAX_COMPONENTS`]), the kernel's parameters, and that random Fourier
    /// features are asked of the RBF kernel.
    ///
    /// # Errors
    /// [`OptimError::InvalidParam`] naming the parameter.
    pub fn check(&self) -> Result<(), OptimError> {
        if !(1..=MAX_COMPONENTS).contains(&self.components) {
            return Err(OptimError::InvalidParam {
                name: "components",
                value: self.components.to_string(),
                reason: "must be from 1 to 100000",
            });
        }
        self.kernel.check()?;
        if self.method == ApproxMethod::Rff && self.kernel.kind != crate::linear::KernelKind::Rbf {
            return Err(OptimError::InvalidParam {
                name: "kernel",
                value: format!("{:?}", self.kernel.kind).to_lowercase(),
                reason: "cannot be approximated by random Fourier features, which sample the RBF \
                         kernel's spectrum: give --kernel rbf, or --approx nystroem",
            });
        }
        Ok(())
    }

    /// The map's dimension on `n_rows` training rows (Nyström has at most one landmark per row).
    pub fn dimension(&self, n_rows: usize) -> usize {
        match self.method {
            ApproxMethod::Rff => self.components,
            ApproxMethod::Nystroem => self.components.min(n_rows.max(1)),
        }
    }

    /// Fits the map on the (scaled) training rows `x` from `seed`.
    ///
    /// # Errors
    /// [`OptimError::InvalidParam`] when the map would take more memory than its limit, or the data has no
    /// rows.
    pub fn fit(&self, x: &SparseRows, seed: u64) -> Result<FittedMap, Error> {
        self.check()?;
        let kernel = self.kernel.resolve(x);
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x6b65_726e_656c_5f61);
        match self.method {
            ApproxMethod::Rff => {
                let Kernel::Rbf { gamma } = kernel else {
                    unreachable!("checked: random Fourier features are for the RBF kernel")
                };
                let d = x.n_features();
                let k = self.components;
                if d.saturating_mul(k).saturating_mul(8) > FOURIER_LIMIT_BYTES {
                    return Err(crate::error::refuse(
                        "components",
                        k,
                        "times the features would take more than 1 GiB of random Fourier frequencies: \
                         give fewer components, or --approx nystroem, whose size does not grow with \
                         the features",
                    ));
                }
                Ok(FittedMap::Fourier(FourierFeatures::draw(
                    gamma, d, k, &mut rng,
                )))
            }
            ApproxMethod::Nystroem => {
                let n = x.n_rows();
                if n == 0 {
                    return Err(crate::error::refuse(
                        "approx",
                        "nystroem",
                        "needs training rows to draw landmarks from",
                    ));
                }
                let m = self.components.min(n);
                if m.saturating_mul(m).saturating_mul(8 * 4) > NYSTROEM_LIMIT_BYTES {
                    return Err(crate::error::refuse(
                        "components",
                        m,
                        "landmarks would take more than 4 GiB of kernel matrices: give fewer components",
                    ));
                }
                let mut picked = rand::seq::index::sample(&mut rng, n, m).into_vec();
                picked.sort_unstable();
                Ok(FittedMap::Nystroem(Nystroem::fit(
                    kernel,
                    x.select(&picked),
                )))
            }
        }
    }
}

/// A fitted map: what the linear solver trains on.
#[derive(Debug)]
pub enum FittedMap {
    /// Random Fourier features (kept in the model).
    Fourier(FourierFeatures),
    /// Nyström features (folded into a kernel expansion over the landmarks at the end).
    Nystroem(Nystroem),
}

impl FittedMap {
    /// The map's dimension.
    pub fn components(&self) -> usize {
        match self {
            Self::Fourier(f) => f.components(),
            Self::Nystroem(n) => n.landmarks.n_rows(),
        }
    }

    /// `z(x_i)` of every row, as dense rows of [`FittedMap::components`] values.
    pub fn transform(&self, x: &SparseRows) -> Result<SparseRows, OptimError> {
        match self {
            Self::Fourier(f) => f.transform(x),
            Self::Nystroem(n) => n.transform(x),
        }
    }
}

/// A feature map a model keeps and applies to every row before its weights (after its scaler).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FeatureMap {
    /// Random Fourier features.
    Fourier(FourierFeatures),
}

impl FeatureMap {
    /// `⟨w, z(x)⟩`.
    pub fn score(&self, x: SparseRow<'_>, w: &[f64]) -> f64 {
        match self {
            Self::Fourier(f) => f.score(x, w),
        }
    }

    /// The map's dimension (the weights' length).
    pub fn components(&self) -> usize {
        match self {
            Self::Fourier(f) => f.components(),
        }
    }

    /// `z(x_i)` of every row, dense.
    pub fn transform(&self, x: &SparseRows) -> Result<SparseRows, OptimError> {
        match self {
            Self::Fourier(f) => f.transform(x),
        }
    }

    /// The input features the map reads.
    pub fn n_input(&self) -> usize {
        match self {
            Self::Fourier(f) => f.n_input,
        }
    }

    /// The input features of a model whose weights have `n_features` features and that reads its rows
    /// through `map`, when it has one.
    pub(crate) fn n_input_of(map: Option<&Self>, n_features: usize) -> usize {
        map.map_or(n_features, Self::n_input)
    }

    /// The bytes the map holds.
    pub fn memory_bytes(&self) -> usize {
        match self {
            Self::Fourier(f) => f.memory_bytes(),
        }
    }

    /// The method's name, as `--approx` gives it.
    pub fn method(&self) -> ApproxMethod {
        match self {
            Self::Fourier(_) => ApproxMethod::Rff,
        }
    }

    /// Why the map cannot be a model's over `n_weights` weights, if it cannot.
    pub fn invalid(&self, n_weights: usize) -> Option<String> {
        match self {
            Self::Fourier(f) => f.invalid(n_weights),
        }
    }
}

/// Random Fourier features `z_k(x) = √(2/K) cos(⟨ω_k, x⟩ + φ_k)`: what a model keeps to map a row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FourierFeatures {
    /// The RBF kernel's `γ` the frequencies were drawn for (`ω ~ N(0, 2γ I)`).
    pub gamma: f64,
    /// The input features the frequencies cover; features beyond contribute nothing.
    pub n_input: usize,
    /// `ω`, feature-major: `omega[j·K + k]` is component `k`'s frequency on feature `j`.
    pub omega: Vec<f64>,
    /// `φ_k`, one per component.
    pub phase: Vec<f64>,
}

impl FourierFeatures {
    /// Draws `k` components on `d` features for the RBF kernel of `gamma`.
    pub(crate) fn draw(gamma: f64, d: usize, k: usize, rng: &mut ChaCha8Rng) -> Self {
        let sd = (2.0 * gamma).sqrt();
        let omega = (0..d * k)
            .map(|_| sd * rng.sample::<f64, _>(rand_distr::StandardNormal))
            .collect();
        let phase = (0..k)
            .map(|_| std::f64::consts::TAU * rng.random::<f64>())
            .collect();
        Self {
            gamma,
            n_input: d,
            omega,
            phase,
        }
    }

    /// `K`.
    pub fn components(&self) -> usize {
        self.phase.len()
    }

    /// Writes `z(x)` into `out` (`K` values).
    pub fn map_into(&self, x: SparseRow<'_>, out: &mut [f64]) {
        let k = self.components();
        out.copy_from_slice(&self.phase);
        for (j, v) in x.iter() {
            if j < self.n_input {
                let freq = &self.omega[j * k..(j + 1) * k];
                out.iter_mut().zip(freq).for_each(|(o, f)| *o += v * f);
            }
        }
        let scale = (2.0 / k as f64).sqrt();
        out.iter_mut().for_each(|o| *o = scale * o.cos());
    }

    /// `⟨w, z(x)⟩`.
    pub fn score(&self, x: SparseRow<'_>, w: &[f64]) -> f64 {
        let mut z = vec![0.0; self.components()];
        self.map_into(x, &mut z);
        maxmargin_core::vector::dot(&z, w).unwrap_or(f64::NAN)
    }

    /// `z(x_i)` of every row, dense.
    pub fn transform(&self, x: &SparseRows) -> Result<SparseRows, OptimError> {
        dense_blocks(x, self.components(), |rows, out| {
            for (r, o) in rows.zip(out.chunks_mut(self.components())) {
                self.map_into(r, o);
            }
        })
    }

    /// The bytes the frequencies and phases hold.
    pub fn memory_bytes(&self) -> usize {
        (self.omega.len() + self.phase.len()) * std::mem::size_of::<f64>()
    }

    /// Why the map cannot be a model's over `n_weights` weights, if it cannot.
    pub fn invalid(&self, n_weights: usize) -> Option<String> {
        if !(self.gamma.is_finite() && self.gamma > 0.0) {
            return Some(format!(
                "the random Fourier features' gamma {} is not finite and > 0",
                self.gamma
            ));
        }
        if self.components() != n_weights {
            return Some(format!(
                "{} random Fourier components for {n_weights} weights",
                self.components()
            ));
        }
        if self.n_input.checked_mul(self.components()) != Some(self.omega.len()) {
            return Some(format!(
                "{} random Fourier frequencies for {} features and {} components",
                self.omega.len(),
                self.n_input,
                self.components()
            ));
        }
        if !self.omega.iter().chain(&self.phase).all(|v| v.is_finite()) {
            return Some("a random Fourier frequency or phase is not finite".into());
        }
        None
    }
}

/// Nyström features over landmarks: `z(x) = N k(x)`, `N = K_mm^{−1/2}` (symmetric).
#[derive(Debug)]
pub struct Nystroem {
    /// The kernel, `γ` resolved.
    pub kernel: Kernel,
    /// The landmarks, as the solver saw them (scaled when the model scales).
    pub landmarks: SparseRows,
    /// `K_mm^{−1/2}`, `m × m`.
    normalization: DMatrix<f64>,
    norms: Vec<f64>,
}

impl Nystroem {
    /// Decomposes the landmarks' kernel matrix.
    fn fit(kernel: Kernel, landmarks: SparseRows) -> Self {
        let norms: Vec<f64> = landmarks.rows().map(|r| r.norm_sq()).collect();
        let m = landmarks.n_rows();
        let kmm = DMatrix::from_fn(m, m, |i, j| {
            let dot = landmarks.row(i).dot_sparse(&landmarks.row(j));
            kernel.from_dot(dot, norms[i], norms[j])
        });
        // Symmetrize exactly (the kernel of (i, j) and (j, i) can differ in the last bit).
        let kmm = (&kmm + kmm.transpose()) * 0.5;
        let eig = kmm.symmetric_eigen();
        let inv_sqrt = eig.eigenvalues.map(|s| 1.0 / s.max(1e-12).sqrt());
        let u = &eig.eigenvectors;
        let normalization = u * DMatrix::from_diagonal(&inv_sqrt) * u.transpose();
        Self {
            kernel,
            landmarks,
            normalization,
            norms,
        }
    }

    /// `z(x_i)` of every row, dense: the kernel values of a block of rows times `N`.
    pub fn transform(&self, x: &SparseRows) -> Result<SparseRows, OptimError> {
        let m = self.landmarks.n_rows();
        let d = self.landmarks.n_features();
        dense_blocks(x, m, |rows, out| {
            let mut dense = crate::linear::kernel::scratch(d);
            let rows: Vec<SparseRow<'_>> = rows.collect();
            // Row-major block of kernel values, read by nalgebra as its (column-major) transpose.
            let mut kb = vec![0.0; rows.len() * m];
            for (r, o) in rows.iter().zip(kb.chunks_mut(m)) {
                let (l, n) = (&self.landmarks, &self.norms);
                crate::linear::kernel::kernel_values(&self.kernel, l, n, *r, &mut dense, o);
            }
            let kt = DMatrix::from_vec(m, rows.len(), kb);
            let z = &self.normalization * kt;
            out.copy_from_slice(z.as_slice());
        })
    }

    /// The coefficients `c = N w` of the kernel expansion equal to `⟨w, z(x)⟩`.
    pub fn fold(&self, w: &[f64]) -> Vec<f64> {
        let w = nalgebra::DVector::from_column_slice(w);
        (&self.normalization * w).as_slice().to_vec()
    }
}

/// Dense rows of `width` values for every row of `x`, blocks of [`BLOCK`] rows filled by `fill` in parallel
/// (each row's values depend only on the row, so the result does not depend on the thread count).
///
/// # Errors
/// [`OptimError::InvalidParam`] naming the first row whose mapped values are not finite (its values times
/// the map's overflow).
fn dense_blocks(
    x: &SparseRows,
    width: usize,
    fill: impl Fn(&mut dyn Iterator<Item = SparseRow<'_>>, &mut [f64]) + Sync,
) -> Result<SparseRows, OptimError> {
    use rayon::prelude::*;
    let n = x.n_rows();
    let blocks: Vec<Vec<f64>> = (0..n.div_ceil(BLOCK))
        .into_par_iter()
        .map(|b| {
            let range = b * BLOCK..((b + 1) * BLOCK).min(n);
            let mut out = vec![0.0; range.len() * width];
            let mut rows = range.map(|i| x.row(i));
            fill(&mut rows, &mut out);
            out
        })
        .collect();
    let idx: Vec<u32> = (0..width as u32).collect();
    let mut z = SparseRows::new();
    z.reserve(n * width);
    z.set_n_features_at_least(width);
    for (i, row) in blocks
        .iter()
        .flat_map(|b| b.chunks(width.max(1)))
        .enumerate()
    {
        z.push_row(&idx, row).map_err(|_| {
            invalid_row(
                i,
                "maps to a value that is not finite (its features times the approximation overflow)",
            )
        })?;
    }
    Ok(z)
}

fn invalid_row(i: usize, reason: &'static str) -> OptimError {
    OptimError::InvalidParam {
        name: "row",
        value: (i + 1).to_string(),
        reason,
    }
}

#[cfg(test)]
mod tests;
