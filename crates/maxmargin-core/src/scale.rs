//! Feature scaling as a fitted, stored transformation: `x′_j = f_j x_j + o_j`.
//!
//! Statistics are fitted once, on training rows, and kept with a model so that new rows are scaled the same
//! way, never refitted. Every statistic counts the implicit zeros of sparse rows.
//!
//! - `maxabs`: `x_j / max_i |x_ij|`, into `[−1, 1]`. Zeros stay zeros, so sparse data stays sparse.
//! - `minmax`: `(x_j − min_j) / (max_j − min_j)`, into `[0, 1]`. Zeros stay zeros for features whose minimum is
//!   0 (non-negative features, the usual case); a feature with negative values gets an offset, which every row
//!   then holds explicitly (refused when that would make sparse data dense: use `maxabs` there).
//! - `standard`: `(x_j − μ_j) / σ_j`. Centring makes every row dense, so it is done only when the data is
//!   already at least half full (`nnz ≥ n·d/2`); on sparse data it is `x_j / σ_j` (σ around the mean still).
//!
//! A feature with no spread (constant or all zero) keeps a factor that maps it to a constant: `maxabs` and
//! `standard` leave an all-zero feature alone, `minmax` maps a constant feature to 0.

use crate::error::CoreError;
use crate::vector::{SparseRow, SparseRows, SparseVec};
use serde::{Deserialize, Serialize};

/// Which scaling a model applies to its inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scaling {
    /// The features as they are.
    #[default]
    None,
    /// Divide by the largest absolute value (sparse stays sparse).
    MaxAbs,
    /// Map `[min, max]` to `[0, 1]`.
    MinMax,
    /// Subtract the mean (dense data only) and divide by the standard deviation.
    Standard,
}

impl std::str::FromStr for Scaling {
    type Err = CoreError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "none" => Ok(Self::None),
            "maxabs" => Ok(Self::MaxAbs),
            "minmax" => Ok(Self::MinMax),
            "standard" => Ok(Self::Standard),
            _ => Err(CoreError::InvalidParam {
                name: "scale",
                reason: "must be none, maxabs, minmax or standard",
            }),
        }
    }
}

impl std::fmt::Display for Scaling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::None => "none",
            Self::MaxAbs => "maxabs",
            Self::MinMax => "minmax",
            Self::Standard => "standard",
        })
    }
}

/// A fitted scaling: `x′_j = factor[j]·x_j + offset_j`, with the non-zero offsets listed by feature.
/// Features at or beyond `factor.len()` (unseen when fitting) pass through unchanged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scaler {
    /// The method.
    pub kind: Scaling,
    /// One factor per feature.
    pub factor: Vec<f64>,
    /// `(feature, offset)` for the features whose offset is not zero, by increasing feature.
    pub offsets: Vec<(u32, f64)>,
}

/// Per-feature running statistics over rows (implicit zeros counted at the end).
#[derive(Debug)]
struct Stats {
    count: Vec<usize>,
    min: Vec<f64>,
    max: Vec<f64>,
    sum: Vec<f64>,
    sum_sq: Vec<f64>,
}

impl Scaler {
    /// Fits `kind` on `rows` (`n_features` wide; larger indices are ignored).
    ///
    /// # Errors
    /// [`CoreError::InvalidParam`] when `minmax` would make sparse data dense.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), maxmargin_core::CoreError> {
    /// use maxmargin_core::scale::{Scaler, Scaling};
    /// use maxmargin_core::vector::SparseRows;
    /// let x = SparseRows::from_dense_rows(&[&[2.0, -4.0], &[1.0, 2.0]])?;
    /// let s = Scaler::fit(Scaling::MaxAbs, x.rows(), x.n_rows(), x.n_features())?;
    /// assert_eq!(s.transform(&x).row(0).values(), &[1.0, -1.0]);
    /// # Ok(()) }
    /// ```
    pub fn fit<'a>(
        kind: Scaling,
        rows: impl Iterator<Item = SparseRow<'a>>,
        n_rows: usize,
        n_features: usize,
    ) -> Result<Self, CoreError> {
        let mut fit = ScalerFit::new(kind, n_features);
        rows.for_each(|row| fit.add(row));
        fit.finish(n_rows)
    }
    /// The scaled copy of one row (its features beyond the fitted ones unchanged).
    pub fn transform_row(&self, row: SparseRow<'_>) -> SparseVec {
        let (mut idx, mut val) = (
            Vec::with_capacity(row.nnz() + self.offsets.len()),
            Vec::with_capacity(row.nnz() + self.offsets.len()),
        );
        let mut offsets = self.offsets.iter().peekable();
        for (j, v) in row.iter() {
            while let Some(&&(k, o)) = offsets.peek() {
                if (k as usize) < j {
                    push(&mut idx, &mut val, k, o);
                    offsets.next();
                } else {
                    break;
                }
            }
            let scaled = match self.factor.get(j) {
                Some(f) => f * v,
                None => v,
            };
            let off = match offsets.peek() {
                Some(&&(k, o)) if k as usize == j => {
                    offsets.next();
                    o
                }
                _ => 0.0,
            };
            push(&mut idx, &mut val, j as u32, scaled + off);
        }
        for &(k, o) in offsets {
            push(&mut idx, &mut val, k, o);
        }
        SparseVec::new(idx, val).unwrap_or_default()
    }

    /// The scaled copy of a matrix (same rows, same width).
    pub fn transform(&self, x: &SparseRows) -> SparseRows {
        let mut out = SparseRows::new();
        out.reserve(x.nnz() + self.offsets.len() * x.n_rows());
        for row in x.rows() {
            let s = self.transform_row(row);
            let r = s.as_row();
            // Indices stay increasing and values finite: the row was valid and offsets are merged in order.
            let _ = out.push_row(r.indices(), r.values());
        }
        out.set_n_features_at_least(x.n_features());
        out
    }

    /// Folds the scaling into linear weights: `⟨w, f∘x + o⟩ + b = ⟨w∘f, x⟩ + (b + ⟨w, o⟩)`. Returns the
    /// weights and intercept that act on unscaled rows.
    pub fn fold_linear(&self, w: &[f64], b: f64) -> (Vec<f64>, f64) {
        let folded = w
            .iter()
            .enumerate()
            .map(|(j, wj)| wj * self.factor.get(j).copied().unwrap_or(1.0))
            .collect();
        let shift: f64 = self
            .offsets
            .iter()
            .map(|&(k, o)| w.get(k as usize).copied().unwrap_or(0.0) * o)
            .sum();
        (folded, b + shift)
    }
}

/// Appends `(j, v)` unless `v` is zero (scaled zeros stay implicit).
fn push(idx: &mut Vec<u32>, val: &mut Vec<f64>, j: u32, v: f64) {
    if v != 0.0 {
        idx.push(j);
        val.push(v);
    }
}

/// When features are scaled so that the solvers slow down, a one-line note saying so; `None` otherwise.
///
/// What slows them is large values, which make `XᵀX` large against the regularizer (some feature's largest
/// absolute value above `1e3`), and features of very different magnitudes that both shape many rows (among
/// the features present in at least 5% of the rows, the largest per-feature maximum more than `1e3` times the
/// smallest). A rare feature with small values does not: its weight is held near zero by the regularizer
/// and it touches few rows, so unit-length tf-idf rows, whose rare words have small values, get no note.
pub fn scaling_advice<'a>(
    rows: impl Iterator<Item = SparseRow<'a>>,
    n_features: usize,
) -> Option<String> {
    // One count of the statistics for rows in memory and rows streamed from disk.
    let mut fit = ScalerFit::new(Scaling::None, n_features);
    rows.for_each(|r| fit.add(r));
    fit.advice()
}

/// Rows whose squared norm reaches this, with values above 1, get a note: at `C = 1` (the default) the dual
/// coordinate methods' steps are `1/‖x_i‖²` against a box of width `C`, and they take many passes (unscaled
/// pendigits, values to 100 and `‖x‖² ≈ 1e5`, stops on its pass budget at a 99% gap; scaled to `[0, 1]` it
/// converges).
const NORM_NOTE: f64 = 1e4;

/// [`scaling_advice`] from the largest absolute value of each feature, the rows it is present in and the
/// largest squared row norm.
fn advice_from(maxabs: &[f64], count: &[usize], n_rows: usize, norm: f64) -> Option<String> {
    let hi = maxabs.iter().copied().fold(0.0f64, f64::max);
    if hi == 0.0 {
        return None;
    }
    let common = (n_rows / 20).max(1);
    let (lo_c, hi_c) = maxabs
        .iter()
        .zip(count)
        .filter(|(m, c)| **m > 0.0 && **c >= common)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), (&m, _)| {
            (lo.min(m), hi.max(m))
        });
    if hi > 1e3 {
        return Some(format!(
            "feature values reach {hi:.3e} in absolute value; solvers converge slowly on such data: consider \
             --scale maxabs (sparse data) or --scale minmax"
        ));
    }
    if norm >= NORM_NOTE && hi > 1.0 {
        return Some(format!(
            "rows' squared norms reach {norm:.3e} (feature values to {hi:.3e}); unless C is well below 1, solvers \
             converge slowly on such data: consider --scale maxabs (sparse data) or --scale minmax"
        ));
    }
    (hi_c > 1e3 * lo_c).then(|| {
        format!(
            "the features present in 5% of the rows or more range in magnitude from {lo_c:.3e} to {hi_c:.3e} \
             (max |x_j| per feature); solvers converge slowly on such data: consider --scale maxabs (sparse \
             data) or --scale minmax"
        )
    })
}

/// [`Scaler::fit`] one row at a time (rows read pass by pass from disk): the statistics are `O(features)`.
#[derive(Debug)]
pub struct ScalerFit {
    kind: Scaling,
    n_features: usize,
    s: Stats,
    nnz: usize,
    rows: usize,
    /// The largest squared norm of a row.
    norm: f64,
}

impl ScalerFit {
    /// No rows seen yet; indices at or beyond `n_features` will be ignored.
    pub fn new(kind: Scaling, n_features: usize) -> Self {
        Self {
            kind,
            n_features,
            s: Stats {
                count: vec![0; n_features],
                min: vec![f64::INFINITY; n_features],
                max: vec![f64::NEG_INFINITY; n_features],
                sum: vec![0.0; n_features],
                sum_sq: vec![0.0; n_features],
            },
            nnz: 0,
            rows: 0,
            norm: 0.0,
        }
    }

    /// Counts one row.
    pub fn add(&mut self, row: SparseRow<'_>) {
        self.rows += 1;
        let s = &mut self.s;
        let mut sq = 0.0;
        for (j, v) in row.iter() {
            if j >= self.n_features {
                continue;
            }
            sq += v * v;
            self.nnz += 1;
            s.count[j] += 1;
            s.min[j] = s.min[j].min(v);
            s.max[j] = s.max[j].max(v);
            s.sum[j] += v;
            s.sum_sq[j] += v * v;
        }
        self.norm = self.norm.max(sq);
    }

    /// [`scaling_advice`] for the rows counted.
    pub fn advice(&self) -> Option<String> {
        let s = &self.s;
        let maxabs: Vec<f64> = (0..self.n_features)
            .map(|j| {
                if s.count[j] == 0 {
                    0.0
                } else {
                    s.min[j].abs().max(s.max[j].abs())
                }
            })
            .collect();
        advice_from(&maxabs, &s.count, self.rows, self.norm)
    }

    /// The scaler of the `n_rows` rows counted.
    ///
    /// # Errors
    /// As [`Scaler::fit`].
    pub fn finish(self, n_rows: usize) -> Result<Scaler, CoreError> {
        let Self {
            kind,
            n_features,
            s,
            nnz,
            rows: _,
            norm: _,
        } = self;
        let n = n_rows.max(1) as f64;
        let mut factor = vec![1.0; n_features];
        let mut offsets = Vec::new();
        // Implicit zeros take part in the minimum and maximum.
        let range = |j: usize| {
            let (mut lo, mut hi) = (s.min[j], s.max[j]);
            if s.count[j] < n_rows || s.count[j] == 0 {
                lo = lo.min(0.0);
                hi = hi.max(0.0);
            }
            (lo, hi)
        };
        match kind {
            Scaling::None => {}
            Scaling::MaxAbs => {
                for (j, f) in factor.iter_mut().enumerate() {
                    let (lo, hi) = range(j);
                    let m = lo.abs().max(hi.abs());
                    // A subnormal largest value has no finite reciprocal: left as it is.
                    if m > 0.0 && (1.0 / m).is_finite() {
                        *f = 1.0 / m;
                    }
                }
            }
            Scaling::MinMax => {
                for (j, f) in factor.iter_mut().enumerate() {
                    let (lo, hi) = range(j);
                    let scalable = (1.0 / (hi - lo)).is_normal() && (-lo / (hi - lo)).is_finite();
                    if hi > lo && scalable {
                        *f = 1.0 / (hi - lo);
                        if lo != 0.0 {
                            offsets.push((j as u32, -lo / (hi - lo)));
                        }
                    } else if hi > lo {
                        // A range that overflows or underflows its reciprocal: left as it is.
                    } else {
                        // A constant feature carries nothing: it maps to 0.
                        *f = 0.0;
                    }
                }
                let added = offsets.len().saturating_mul(n_rows);
                if added > (4 * nnz).max(1 << 20) {
                    return Err(CoreError::InvalidParam {
                        name: "scale",
                        reason: "minmax would make this sparse data dense (features with negative \
                                 values get an offset in every row); use maxabs",
                    });
                }
            }
            Scaling::Standard => {
                let centre = 2 * nnz >= n_rows.saturating_mul(n_features);
                for (j, f) in factor.iter_mut().enumerate() {
                    let mean = s.sum[j] / n;
                    let var = (s.sum_sq[j] / n - mean * mean).max(0.0);
                    let sd = var.sqrt();
                    let overflow = !(mean.is_finite() && s.sum_sq[j].is_finite());
                    if overflow || (sd > 0.0 && !(1.0 / sd).is_finite()) {
                        // Sums that overflow (values near 1e154 and beyond) or a subnormal spread: the
                        // feature is divided by its largest magnitude instead, uncentred.
                        let (lo, hi) = range(j);
                        let m = lo.abs().max(hi.abs());
                        if m > 0.0 && (1.0 / m).is_finite() {
                            *f = 1.0 / m;
                        }
                        continue;
                    }
                    if sd > 1e-12 * mean.abs().max(f64::MIN_POSITIVE) && sd > 0.0 {
                        *f = 1.0 / sd;
                    }
                    if centre && mean != 0.0 {
                        offsets.push((j as u32, -mean * *f));
                    }
                }
            }
        }
        Ok(Scaler {
            kind,
            factor,
            offsets,
        })
    }
}
