//! The duals a primal point suggests, summed in one pass: `α_i = U_i` for examples inside the margin, 0
//! outside (the start of [`crate::dcd::dual_bound`]), then balanced between the classes for an
//! unregularized intercept and scaled by the best `t ∈ [0, 1]`. Any such point is dual feasible, so its
//! value bounds the optimum from below. The sums are plain vectors, so rows read from disk or held by other
//! ranks add up the same way (an allreduce of [`MarginDuals::as_mut_slice`]).

use crate::problem::{Bias, LinearWeights};
use maxmargin_core::hinge::hinge;
use maxmargin_core::vector::{SparseRow, norm_sq};

/// Per class (−1, +1): `Σ α_i y_i x̃_i`, then `Σ α_i` for each class and the weighted hinge sum.
#[derive(Debug, Clone)]
pub(crate) struct MarginDuals {
    /// `[v₋ | v₊ | Σα₋, Σα₊, Σ c_i ℓ_i]`, each `v` of length `d` (+1 for a bias feature).
    buf: Vec<f64>,
    len: usize,
    d: usize,
    feature: bool,
    c_box: f64,
}

/// What the margins' duals certify.
#[derive(Debug, Clone)]
pub(crate) struct Guess {
    /// The C-form dual value `t·S − t²/2·‖w(α)‖²`.
    pub(crate) dual_c: f64,
    /// `w(α)` with the balancing and `t` applied.
    pub(crate) wa: Vec<f64>,
    /// The factor each class's stored `α_i` still needs (balance times `t`).
    pub(crate) factor: [f64; 2],
    /// `Σ c_i ℓ_i` at the primal point.
    pub(crate) loss: f64,
}

impl MarginDuals {
    /// Empty sums for `d` features at `λ` over `n` examples (the whole problem's) with intercept `bias`.
    pub(crate) fn new(lambda: f64, n: usize, d: usize, bias: Bias) -> Self {
        let feature = bias == Bias::Feature;
        let len = d + usize::from(feature);
        Self {
            buf: vec![0.0; 2 * len + 3],
            len,
            d,
            feature,
            c_box: maxmargin_core::objective::c_sum(lambda, n),
        }
    }

    /// Adds row `x` (target `y`, loss weight `c`) at `w`; returns its `α_i`.
    #[inline]
    pub(crate) fn add(&mut self, x: SparseRow<'_>, y: f64, c: f64, w: &LinearWeights) -> f64 {
        let z = y * (x.dot(&w.w) + w.b);
        let (len, d) = (self.len, self.d);
        self.buf[2 * len + 2] += c * hinge(z);
        let alpha = if z < 1.0 { self.c_box * c } else { 0.0 };
        if alpha != 0.0 {
            let class = usize::from(y > 0.0);
            let v = &mut self.buf[class * len..(class + 1) * len];
            x.axpy(alpha * y, &mut v[..d]);
            if self.feature {
                v[d] += alpha * y;
            }
            self.buf[2 * len + class] += alpha;
        }
        alpha
    }

    /// The sums, to be added up with other ranks' (same length everywhere).
    pub(crate) fn as_mut_slice(&mut self) -> &mut [f64] {
        &mut self.buf
    }

    /// Balances (unregularized intercept), scales by the best `t`, and values the result.
    pub(crate) fn finish(self, bias: Bias) -> Guess {
        let len = self.len;
        let (v0, rest) = self.buf.split_at(len);
        let (v1, tail) = rest.split_at(len);
        let sum = [tail[0], tail[1]];
        let mut factor = [1.0, 1.0];
        if bias == Bias::Unregularized {
            let (lo, hi) = (sum[0].min(sum[1]), sum[0].max(sum[1]));
            let heavier = usize::from(sum[1] > sum[0]);
            factor[heavier] = if hi > 0.0 { lo / hi } else { 1.0 };
        }
        let mut wa: Vec<f64> = (0..len)
            .map(|j| factor[0] * v0[j] + factor[1] * v1[j])
            .collect();
        let s = factor[0] * sum[0] + factor[1] * sum[1];
        let q = norm_sq(&wa);
        let t = if q > 0.0 {
            (s / q).clamp(0.0, 1.0)
        } else {
            1.0
        };
        wa.iter_mut().for_each(|x| *x *= t);
        Guess {
            dual_c: t * s - 0.5 * t * t * q,
            wa,
            factor: [t * factor[0], t * factor[1]],
            loss: tail[2],
        }
    }
}
