//! The binary squared-hinge and logistic losses in the primal, by truncated Newton ([`crate::newton`]): what
//! LIBLINEAR's `-s 2` and `-s 0` solve (Lin, Weng & Keerthi, JMLR 2008; the squared hinge's generalized
//! Hessian as Keerthi & DeCoste, JMLR 2005). On rows ≫ features a pass of Newton's conjugate gradients does
//! the work of many dual passes: dual coordinate descent's cost grows with the condition of the rows' Gram
//! matrix, Newton's with the Hessian's, which is `d × d`.
//!
//! The variables are `w`, then `b` unless the problem has no bias; `b` is regularized only when it is a
//! feature. The certificate is exact: the duals `α_i = −ℓ'(m_i)` the margins make (optimal at the optimum)
//! give `w(α) = v − ∇P(v)/λ` when the bias is regularized or absent; with an unregularized bias the heavier
//! class's duals are first scaled down to meet `Σ c_i α_i y_i = 0`, and `w(α)` costs a pass.

use super::problem::{Bias, BinaryLoss, BinaryProblem, LinearWeights};
use crate::error::{OptimError, invalid};
use crate::newton::Smooth;
use crate::trainer::Certificate;
use maxmargin_core::hinge::sigmoid;
use maxmargin_core::vector::norm_sq;
use rayon::prelude::*;

/// Rows per chunk of [`Primal::add_rows`] at least, chunks at most, and the floats all chunks may hold.
const ROWS_PER_CHUNK: usize = 2048;
const MAX_CHUNKS: usize = 8;
const CHUNK_FLOATS: usize = 1 << 22;

/// A binary problem with a differentiable loss, as [`crate::newton::Newton`] minimizes it.
#[derive(Debug, Clone, Copy)]
pub struct Primal<'a> {
    problem: BinaryProblem<'a>,
    d: usize,
    /// Whether `b` is a variable (the bias is a feature or unregularized).
    bias: bool,
}

impl<'a> Primal<'a> {
    /// The problem in the primal.
    ///
    /// # Errors
    /// [`OptimError::InvalidParam`] for the hinge, which is not differentiable at 1.
    pub fn new(problem: BinaryProblem<'a>) -> Result<Self, OptimError> {
        if problem.loss() == BinaryLoss::Hinge {
            return Err(invalid(
                "newton",
                "hinge",
                "needs a differentiable loss (squared-hinge or logistic); the hinge is trained by dcd",
            ));
        }
        if problem.bias() == Bias::Unregularized {
            let weight_of = |class: f64| -> f64 {
                (0..problem.n_samples())
                    .filter(|&i| problem.y()[i] == class)
                    .map(|i| problem.weight(i))
                    .sum()
            };
            if weight_of(1.0) == 0.0 || weight_of(-1.0) == 0.0 {
                return Err(invalid(
                    "bias",
                    "unregularized",
                    "has no optimum when one class weighs nothing (the intercept runs off): give both \
                     classes weight, or bias feature or none",
                ));
            }
        }
        Ok(Self {
            problem,
            d: problem.n_features(),
            bias: problem.bias() != Bias::None,
        })
    }

    fn weights(&self, v: &[f64]) -> LinearWeights {
        LinearWeights {
            w: v[..self.d].to_vec(),
            b: if self.bias { v[self.d] } else { 0.0 },
        }
    }

    /// `λ v` on the regularized variables (all but an unregularized `b`).
    fn regularized(&self, v: &[f64]) -> Vec<f64> {
        let lambda = self.problem.lambda();
        let mut out: Vec<f64> = v.iter().map(|t| lambda * t).collect();
        if self.problem.bias() == Bias::Unregularized {
            out[self.d] = 0.0;
        }
        out
    }

    /// `Σ_i coef_i x̃_i` added to `out` (`x̃_i` with its constant 1 when `b` is a variable). The rows are cut
    /// into chunks by their count and the width alone (never by the threads): each chunk is summed into its
    /// own vector, in parallel, and the chunks are added in order, so the bits do not depend on the thread
    /// count. Narrow problems of many rows gain most; wide ones keep one chunk (a vector per chunk).
    fn add_rows(&self, coef: &[f64], out: &mut [f64]) {
        let (n, width) = (coef.len(), out.len());
        let chunks = (n / ROWS_PER_CHUNK)
            .min(MAX_CHUNKS)
            .min(CHUNK_FLOATS / width.max(1))
            .max(1);
        let size = n.div_ceil(chunks);
        let sum_into = |range: std::ops::Range<usize>, into: &mut [f64]| {
            let d = self.d;
            for i in range {
                let a = coef[i];
                if a != 0.0 {
                    self.problem.x().row(i).axpy(a, &mut into[..d]);
                    if self.bias {
                        into[d] += a;
                    }
                }
            }
        };
        if chunks == 1 {
            sum_into(0..n, out);
            return;
        }
        let parts: Vec<Vec<f64>> = (0..chunks)
            .into_par_iter()
            .map(|c| {
                let mut part = vec![0.0; width];
                sum_into(c * size..((c + 1) * size).min(n), &mut part);
                part
            })
            .collect();
        for part in parts {
            out.iter_mut().zip(&part).for_each(|(o, p)| *o += p);
        }
    }

    /// `ℓ'(m)` and `ℓ''(m)` (the squared hinge's generalized second derivative).
    fn derivatives(&self, m: f64) -> (f64, f64) {
        match self.problem.loss() {
            BinaryLoss::SquaredHinge if m < 1.0 => (-2.0 * (1.0 - m), 2.0),
            BinaryLoss::Logistic => {
                let p = sigmoid(-m);
                (-p, p * (1.0 - p))
            }
            _ => (0.0, 0.0),
        }
    }

    /// `−ℓ*(−α)`, the dual's per-example term at `α ≥ 0`.
    fn conjugate(&self, a: f64) -> f64 {
        match self.problem.loss() {
            BinaryLoss::Logistic => {
                let h = |q: f64| if q > 0.0 { -q * q.ln() } else { 0.0 };
                h(a) - if a < 1.0 {
                    (1.0 - a) * (-a).ln_1p()
                } else {
                    0.0
                }
            }
            _ => a - 0.25 * a * a,
        }
    }

    /// The duals the margins make, `α_i = −ℓ'(m_i)`, with an unregularized bias balanced over the classes.
    fn duals(&self, margins: &[f64]) -> Vec<f64> {
        let mut alpha: Vec<f64> = margins.iter().map(|&m| -self.derivatives(m).0).collect();
        if self.problem.bias() == Bias::Unregularized {
            let y = self.problem.y();
            let (mut pos, mut neg) = (0.0, 0.0);
            for (i, a) in alpha.iter().enumerate() {
                let c = self.problem.weight(i) * a;
                if y[i] > 0.0 { pos += c } else { neg += c }
            }
            let (heavy, scale) = if pos > neg {
                (1.0, if pos > 0.0 { neg / pos } else { 0.0 })
            } else {
                (-1.0, if neg > 0.0 { pos / neg } else { 0.0 })
            };
            for (a, &yi) in alpha.iter_mut().zip(y) {
                if yi == heavy {
                    *a *= scale;
                }
            }
        }
        alpha
    }
}

impl Smooth for Primal<'_> {
    /// The margins `y_i(⟨w, x_i⟩ + b)`.
    type Point = Vec<f64>;
    type Output = LinearWeights;

    fn dim(&self) -> usize {
        self.d + usize::from(self.bias)
    }

    fn evaluate(&self, v: &[f64]) -> (f64, Vec<f64>) {
        let weights = self.weights(v);
        let (x, y) = (self.problem.x(), self.problem.y());
        let margins: Vec<f64> = (0..y.len())
            .into_par_iter()
            .map(|i| y[i] * (x.row(i).dot(&weights.w) + weights.b))
            .collect();
        let loss = self.problem.loss();
        let sum: f64 = margins
            .iter()
            .enumerate()
            .map(|(i, &m)| self.problem.weight(i) * loss.value(m))
            .sum();
        let n = y.len() as f64;
        let f = 0.5 * self.problem.lambda() * self.problem.reg_norm_sq(&weights) + sum / n;
        (f, margins)
    }

    fn gradient(&self, v: &[f64], margins: &Vec<f64>) -> Vec<f64> {
        let (y, n) = (self.problem.y(), self.problem.n_samples() as f64);
        let coef: Vec<f64> = margins
            .iter()
            .enumerate()
            .map(|(i, &m)| self.problem.weight(i) * self.derivatives(m).0 * y[i] / n)
            .collect();
        let mut g = self.regularized(v);
        self.add_rows(&coef, &mut g);
        g
    }

    fn hessian_times(&self, margins: &Vec<f64>, v: &[f64]) -> Vec<f64> {
        let (x, n, d) = (self.problem.x(), self.problem.n_samples() as f64, self.d);
        let b = if self.bias { v[d] } else { 0.0 };
        let coef: Vec<f64> = margins
            .par_iter()
            .enumerate()
            .map(|(i, &m)| {
                let h = self.problem.weight(i) * self.derivatives(m).1;
                if h == 0.0 {
                    0.0
                } else {
                    h * (x.row(i).dot(&v[..d]) + b) / n
                }
            })
            .collect();
        let mut out = self.regularized(v);
        self.add_rows(&coef, &mut out);
        out
    }

    fn hessian_diagonal(&self, margins: &Vec<f64>) -> Vec<f64> {
        let (x, n, d) = (self.problem.x(), self.problem.n_samples() as f64, self.d);
        let mut diag = self.regularized(&vec![1.0; self.dim()]);
        for (i, &m) in margins.iter().enumerate() {
            let h = self.problem.weight(i) * self.derivatives(m).1 / n;
            if h != 0.0 {
                for (j, t) in x.row(i).iter() {
                    diag[j] += h * t * t;
                }
                if self.bias {
                    diag[d] += h;
                }
            }
        }
        // An unregularized bias with no curvature (every margin past the squared hinge's corner).
        for t in &mut diag {
            if *t <= 0.0 {
                *t = 1.0;
            }
        }
        diag
    }

    fn certificate(&self, v: &[f64], margins: &Vec<f64>, g: &[f64], objective: f64) -> Certificate {
        let (y, n, lambda) = (
            self.problem.y(),
            self.problem.n_samples() as f64,
            self.problem.lambda(),
        );
        let alpha = self.duals(margins);
        let w_alpha = if self.problem.bias() == Bias::Unregularized {
            // The balanced duals' weights, a pass: (1/(λn)) Σ c_i α_i y_i x_i.
            let coef: Vec<f64> = alpha
                .iter()
                .enumerate()
                .map(|(i, a)| self.problem.weight(i) * a * y[i] / (lambda * n))
                .collect();
            let mut w = vec![0.0; self.dim()];
            self.add_rows(&coef, &mut w);
            w.truncate(self.d);
            w
        } else {
            v.iter().zip(g).map(|(a, b)| a - b / lambda).collect()
        };
        let terms: f64 = alpha
            .iter()
            .enumerate()
            .map(|(i, &a)| self.problem.weight(i) * self.conjugate(a))
            .sum();
        let dual = terms / n - 0.5 * lambda * norm_sq(&w_alpha);
        Certificate::of_dual(objective, dual)
    }

    fn output(&self, v: &[f64]) -> LinearWeights {
        self.weights(v)
    }

    fn detail(&self, v: &[f64]) -> Option<crate::trainer::StepDetail> {
        Some(super::problem::detail(
            &self.problem,
            self.weights(v),
            Vec::new(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::newton::Newton;
    use crate::trainer::{Budget, StopReason, Trainer};
    use maxmargin_core::objective::Lambda;
    use maxmargin_core::vector::SparseRows;

    fn rows() -> (SparseRows, Vec<f64>) {
        let pts: [([f64; 2], f64); 8] = [
            ([0.0, 0.2], -1.0),
            ([0.3, 0.0], -1.0),
            ([1.0, 1.1], 1.0),
            ([1.2, 0.8], 1.0),
            ([0.4, 1.0], 1.0),
            ([0.2, 1.3], -1.0),
            ([0.9, 0.1], -1.0),
            ([1.5, 0.4], 1.0),
        ];
        let dense: Vec<&[f64]> = pts.iter().map(|(v, _)| &v[..]).collect();
        let x = SparseRows::from_dense_rows(&dense).unwrap();
        (x, pts.iter().map(|(_, y)| *y).collect())
    }

    /// Newton reaches DCD's optimum for both losses and every bias mode, and its gap certifies it.
    #[test]
    fn newton_meets_dcd_at_the_certified_optimum() {
        let (x, y) = rows();
        for loss in [BinaryLoss::SquaredHinge, BinaryLoss::Logistic] {
            for bias in [Bias::None, Bias::Feature, Bias::Unregularized] {
                let p = BinaryProblem::new(&x, &y, Lambda::new(0.05).unwrap(), bias)
                    .unwrap()
                    .with_loss(loss);
                let mut newton = Newton {
                    gap_target: 1e-12,
                    ..Newton::default()
                };
                let fit = Trainer::new(Budget::epochs(2000.0))
                    .unwrap()
                    .run(&mut newton, &Primal::new(p).unwrap(), &mut ())
                    .unwrap();
                assert_eq!(fit.stop, StopReason::Converged, "{loss:?} {bias:?}");
                let gap = fit.trace.last().and_then(|r| r.gap).unwrap();
                assert!((-1e-12..1e-10).contains(&gap), "{loss:?} {bias:?}: {gap}");
                let a = p.objective(&fit.output);
                // DCD's reference where it solves the problem (not the logistic loss with an
                // unregularized bias).
                if !(bias == Bias::Unregularized && loss == BinaryLoss::Logistic) {
                    let mut dcd = crate::dcd::DcdParams::new().epsilon(1e-9).check().unwrap();
                    let reference = Trainer::new(Budget::epochs(100_000.0))
                        .unwrap()
                        .run(&mut dcd, &p, &mut ())
                        .unwrap();
                    let b = p.objective(&reference.output);
                    assert!((a - b).abs() < 1e-8, "{loss:?} {bias:?}: {a} {b}");
                }
                // No nearby point is lower.
                for k in 0..3_u32 {
                    let mut near = fit.output.clone();
                    let t = 1e-3 * f64::from(k + 1);
                    near.w[(k % 2) as usize] += t;
                    near.b -= if bias == Bias::None { 0.0 } else { t };
                    assert!(p.objective(&near) >= a, "{loss:?} {bias:?}");
                }
                // The dual bounds every other point from below.
                let dual = fit.trace.last().and_then(|r| r.dual).unwrap();
                let other = LinearWeights {
                    w: vec![0.3, -0.2],
                    b: 0.1 * f64::from(u8::from(bias != Bias::None)),
                };
                assert!(p.objective(&other) >= dual);
            }
        }
    }

    #[test]
    fn the_hinge_is_refused_by_name() {
        let (x, y) = rows();
        let p = BinaryProblem::new(&x, &y, Lambda::new(0.05).unwrap(), Bias::None).unwrap();
        let e = Primal::new(p).unwrap_err().to_string();
        assert!(e.contains("differentiable"), "{e}");
    }
}
