//! Multinomial (softmax) logistic regression, `min_W λ/2‖W‖² + (1/n)Σ c_i [log Σ_k e^{⟨w_k, x_i⟩} − ⟨w_{y_i},
//! x_i⟩]`, by truncated Newton ([`crate::newton`]; the primal is smooth and λ-strongly convex, so each step
//! decreases it and the last steps converge quadratically).
//!
//! The certificate is exact. With `q_i ∈ Δ_K` the dual is `D(q) = (1/n)Σ c_i H(q_i) − λ/2‖W(q)‖²`, `H` the
//! entropy and `W(q) = (1/(λn))Σ c_i (e_{y_i} − q_i) x_iᵀ`; taking `q_i` the model's own probabilities
//! `softmax(W x_i)` gives `W(q) = W − ∇P(W)/λ`, so the gap `P(W) − D(q(W))` costs the gradient's pass and
//! vanishes at the optimum. The run stops when the gap is within the target, relative to the objective.
//!
//! Weights are laid out class-major, `w[k·d + j]` (the multiclass model's layout). Rows' scores are computed in
//! parallel and their contributions summed in row order, so the result does not depend on the thread count.

use crate::error::{OptimError, invalid};
use crate::newton::Smooth;
use crate::trainer::Certificate;
use maxmargin_core::objective::Lambda;
use maxmargin_core::vector::SparseVec;

/// A softmax problem: rows (any constant feature already appended), class indices, the classes, λ and
/// per-example weights.
#[derive(Debug, Clone)]
pub struct SoftmaxProblem<'a> {
    x: &'a [SparseVec],
    y: &'a [u32],
    k: usize,
    d: usize,
    lambda: f64,
    weights: Option<&'a [f64]>,
}

impl<'a> SoftmaxProblem<'a> {
    /// Checks and bundles a problem of `k` classes over rows of `d` features.
    ///
    /// # Errors
    /// [`OptimError::LengthMismatch`] or [`OptimError::InvalidParam`] for rows and classes that do not fit.
    pub fn new(
        x: &'a [SparseVec],
        y: &'a [u32],
        k: usize,
        d: usize,
        lambda: Lambda,
    ) -> Result<Self, OptimError> {
        crate::error::same_length(x.len(), y.len())?;
        if x.is_empty() {
            return Err(invalid("rows", 0, "must not be empty"));
        }
        if k < 2 {
            return Err(invalid("classes", k, "must be at least 2"));
        }
        if let Some(&c) = y.iter().find(|&&c| c as usize >= k) {
            return Err(invalid(
                "class index",
                c,
                "must be below the number of classes",
            ));
        }
        if x.iter().any(|r| !r.fits(d)) {
            return Err(invalid(
                "feature index",
                d,
                "rows must fit the feature count",
            ));
        }
        Ok(Self {
            x,
            y,
            k,
            d,
            lambda: lambda.get(),
            weights: None,
        })
    }

    /// Weighs each example's loss (`c_i ≥ 0`, one per row).
    ///
    /// # Errors
    /// [`OptimError::LengthMismatch`] or [`OptimError::InvalidParam`] for weights that do not fit.
    pub fn with_example_weights(mut self, c: &'a [f64]) -> Result<Self, OptimError> {
        crate::error::same_length(self.x.len(), c.len())?;
        if !c.iter().all(|v| v.is_finite() && *v >= 0.0) {
            return Err(invalid(
                "example weight",
                f64::NAN,
                "must be finite and >= 0",
            ));
        }
        self.weights = Some(c);
        Ok(self)
    }

    fn weight(&self, i: usize) -> f64 {
        self.weights.map_or(1.0, |c| c[i])
    }

    /// `W x_i` for every row, then each row's softmax: `(loss_i, p_i)`, rows in parallel.
    fn probabilities(&self, w: &[f64]) -> (Vec<f64>, Vec<f64>) {
        use rayon::prelude::*;
        let (k, d) = (self.k, self.d);
        let per_row: Vec<(f64, Vec<f64>)> = self
            .x
            .par_iter()
            .zip(self.y.par_iter())
            .map(|(x, &y)| {
                let z: Vec<f64> = (0..k)
                    .map(|c| x.as_row().dot(&w[c * d..(c + 1) * d]))
                    .collect();
                let max = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let e: Vec<f64> = z.iter().map(|v| (v - max).exp()).collect();
                let sum: f64 = e.iter().sum();
                let loss = max + sum.ln() - z[y as usize];
                (loss, e.iter().map(|v| v / sum).collect())
            })
            .collect();
        let mut loss = Vec::with_capacity(per_row.len());
        let mut p = Vec::with_capacity(per_row.len() * k);
        for (l, row) in per_row {
            loss.push(l);
            p.extend(row);
        }
        (loss, p)
    }

    /// `P(w)`.
    pub fn objective(&self, w: &[f64]) -> f64 {
        let (loss, _) = self.probabilities(w);
        self.objective_from(w, &loss)
    }

    fn objective_from(&self, w: &[f64], loss: &[f64]) -> f64 {
        let n = self.x.len() as f64;
        let data: f64 = loss
            .iter()
            .enumerate()
            .map(|(i, l)| self.weight(i) * l)
            .sum();
        0.5 * self.lambda * maxmargin_core::vector::norm_sq(w) + data / n
    }

    /// `∇P(w) = λw + (1/n)Σ c_i x_i ⊗ (p_i − e_{y_i})`.
    fn gradient(&self, w: &[f64], p: &[f64]) -> Vec<f64> {
        let (k, d, n) = (self.k, self.d, self.x.len() as f64);
        let mut g: Vec<f64> = w.iter().map(|v| self.lambda * v).collect();
        for (i, x) in self.x.iter().enumerate() {
            let c = self.weight(i) / n;
            for cls in 0..k {
                let r = c * (p[i * k + cls] - f64::from(u8::from(self.y[i] as usize == cls)));
                if r != 0.0 {
                    x.as_row().axpy(r, &mut g[cls * d..(cls + 1) * d]);
                }
            }
        }
        g
    }

    /// `H v = λv + (1/n)Σ c_i x_i ⊗ (diag(p_i) − p_i p_iᵀ)(V x_i)`.
    fn hessian_times(&self, p: &[f64], v: &[f64]) -> Vec<f64> {
        use rayon::prelude::*;
        let (k, d, n) = (self.k, self.d, self.x.len() as f64);
        let coef: Vec<Vec<f64>> = self
            .x
            .par_iter()
            .enumerate()
            .map(|(i, x)| {
                let u: Vec<f64> = (0..k)
                    .map(|c| x.as_row().dot(&v[c * d..(c + 1) * d]))
                    .collect();
                let pi = &p[i * k..(i + 1) * k];
                let pu: f64 = pi.iter().zip(&u).map(|(a, b)| a * b).sum();
                let c = self.weight(i) / n;
                pi.iter().zip(&u).map(|(a, b)| c * a * (b - pu)).collect()
            })
            .collect();
        let mut h: Vec<f64> = v.iter().map(|t| self.lambda * t).collect();
        for (x, r) in self.x.iter().zip(&coef) {
            for (cls, &r) in r.iter().enumerate() {
                if r != 0.0 {
                    x.as_row().axpy(r, &mut h[cls * d..(cls + 1) * d]);
                }
            }
        }
        h
    }

    /// The Hessian's diagonal, `λ + (1/n)Σ c_i x_ij² p_ik(1 − p_ik)`: the conjugate gradients' preconditioner.
    fn hessian_diagonal(&self, p: &[f64]) -> Vec<f64> {
        let (k, d, n) = (self.k, self.d, self.x.len() as f64);
        let mut diag = vec![self.lambda; k * d];
        for (i, x) in self.x.iter().enumerate() {
            let c = self.weight(i) / n;
            for cls in 0..k {
                let q = p[i * k + cls];
                let h = c * q * (1.0 - q);
                if h != 0.0 {
                    for (j, v) in x.as_row().iter() {
                        diag[cls * d + j] += h * v * v;
                    }
                }
            }
        }
        diag
    }

    /// The dual of the model's own probabilities `p` and its gap to `objective`, from the gradient `g`.
    fn certificate_from(&self, w: &[f64], p: &[f64], g: &[f64], objective: f64) -> Certificate {
        let (k, n) = (self.k, self.x.len() as f64);
        let entropy: f64 = (0..self.x.len())
            .map(|i| {
                let h: f64 = p[i * k..(i + 1) * k]
                    .iter()
                    .filter(|&&q| q > 0.0)
                    .map(|&q| -q * q.ln())
                    .sum();
                self.weight(i) * h
            })
            .sum();
        let wq: f64 = w
            .iter()
            .zip(g)
            .map(|(a, b)| {
                let v = a - b / self.lambda;
                v * v
            })
            .sum();
        let dual = entropy / n - 0.5 * self.lambda * wq;
        Certificate::of_dual(objective, dual)
    }
}

/// Newton's method on a softmax problem ([`crate::newton::Newton`], whose settings these are).
pub type Softmax = crate::newton::Newton;

/// Newton's state on a softmax problem: the weights, class-major.
pub type SoftmaxState = crate::newton::NewtonState;

impl Smooth for SoftmaxProblem<'_> {
    type Point = Vec<f64>;
    type Output = Vec<f64>;

    fn dim(&self) -> usize {
        self.k * self.d
    }

    fn evaluate(&self, w: &[f64]) -> (f64, Vec<f64>) {
        let (loss, prob) = self.probabilities(w);
        (self.objective_from(w, &loss), prob)
    }

    fn gradient(&self, w: &[f64], p: &Vec<f64>) -> Vec<f64> {
        SoftmaxProblem::gradient(self, w, p)
    }

    fn hessian_times(&self, p: &Vec<f64>, v: &[f64]) -> Vec<f64> {
        SoftmaxProblem::hessian_times(self, p, v)
    }

    fn hessian_diagonal(&self, p: &Vec<f64>) -> Vec<f64> {
        SoftmaxProblem::hessian_diagonal(self, p)
    }

    fn certificate(&self, w: &[f64], p: &Vec<f64>, g: &[f64], objective: f64) -> Certificate {
        self.certificate_from(w, p, g, objective)
    }

    fn output(&self, w: &[f64]) -> Vec<f64> {
        w.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trainer::{Budget, StopReason, Trainer};

    fn rows() -> (Vec<SparseVec>, Vec<u32>) {
        let pts = [
            ([0.0, 0.2], 0),
            ([0.3, 0.0], 0),
            ([1.0, 1.1], 1),
            ([1.2, 0.8], 1),
            ([0.0, 1.0], 2),
            ([0.2, 1.3], 2),
            ([0.9, 0.1], 0),
        ];
        let x = pts
            .iter()
            .map(|(v, _)| SparseVec::new(vec![0, 1, 2], vec![v[0], v[1], 1.0]).unwrap())
            .collect();
        (x, pts.iter().map(|(_, c)| *c).collect())
    }

    #[test]
    fn newton_reaches_the_certified_optimum_where_the_gradient_vanishes() {
        let (x, y) = rows();
        let p = SoftmaxProblem::new(&x, &y, 3, 3, Lambda::new(0.05).unwrap()).unwrap();
        let mut s = Softmax {
            gap_target: 1e-10,
            ..Softmax::default()
        }
        .check()
        .unwrap();
        let fit = Trainer::new(Budget::epochs(1000.0))
            .unwrap()
            .run(&mut s, &p, &mut ())
            .unwrap();
        assert_eq!(fit.stop, StopReason::Converged);
        let (_, prob) = p.probabilities(&fit.output);
        let g = p.gradient(&fit.output, &prob);
        assert!(maxmargin_core::vector::norm_sq(&g).sqrt() < 1e-4);
        let gap = fit.trace.last().and_then(|r| r.gap).unwrap();
        assert!((0.0..1e-8).contains(&gap), "{gap}");
        // The certificate is a bound: any other point's objective is above the dual.
        let dual = fit.trace.last().and_then(|r| r.dual).unwrap();
        assert!(p.objective(&[0.1; 9]) >= dual);
        // Row weights of 2 on every row are λ/2 on the plain problem: the same optimum.
        let c = vec![2.0; x.len()];
        let weighted = SoftmaxProblem::new(&x, &y, 3, 3, Lambda::new(0.1).unwrap())
            .unwrap()
            .with_example_weights(&c)
            .unwrap();
        let fit2 = Trainer::new(Budget::epochs(1000.0))
            .unwrap()
            .run(&mut s, &weighted, &mut ())
            .unwrap();
        for (a, b) in fit.output.iter().zip(&fit2.output) {
            assert!((a - b).abs() < 1e-5, "{a} {b}");
        }
    }
}
