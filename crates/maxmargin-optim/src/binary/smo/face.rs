//! SMO's face steps ([`crate::face`]): where pair updates crawl along a flat face of the dual (a kernel of
//! low rank, a large `C`), conjugate gradients over the free examples on the hyperplane `y_Fᵀ Δ = 0`.
//! Property tests drew a linear kernel on three features with `C ≈ 45` where SMO needed more than 4.4
//! million iterations on 22 examples (LIBSVM crawls alike on such cases: 244,666 iterations on eight rows).
//!
//! A face step is tried every `min(n/4, 1000)` iterations (shrinking's period) once the run has taken
//! [`FACE_AFTER_PASSES`] iterations per example (RBF runs on heart_scale and breast-cancer took 0.2 to 6.4 at
//! C from 1 to 10⁴ when measured, so they keep their bits; linear kernels at C = 100 took 111 to 433 without
//! it), only on 2 to [`MAX_FREE`] free examples (more get none), and only when the free examples violate
//! the optimality conditions among themselves by more than ε. Its cost: `m` kernel rows (twice when the
//! cache holds fewer), `m²` per CG iteration and at most [`MAX_CG`] iterations, against the pair updates'
//! `O(n)` rows in the same period. It reads only the state (`α`, the gradient, the iteration), so a resumed
//! run takes the same steps.

use super::{KernelProblem, Smo, SmoState};
use crate::face::{dot, face_direction};

/// Iterations per example after which each shrinking also tries a face step.
pub(super) const FACE_AFTER_PASSES: u64 = 50;

/// Most free examples a face step takes.
pub(super) const MAX_FREE: usize = 200;

/// Most CG iterations of a face step.
pub(super) const MAX_CG: usize = 50;

impl Smo {
    /// A face step (see the module's notes) when the run is long enough and the free examples few; the
    /// gradient is updated from the rows of the examples that moved.
    pub(super) fn face_step(&mut self, problem: &KernelProblem<'_>, st: &mut SmoState) {
        let (y, n) = (problem.data.y(), problem.data.n_samples());
        if st.iteration < FACE_AFTER_PASSES.saturating_mul(n as u64) {
            return;
        }
        let free: Vec<usize> = (0..n)
            .filter(|&t| st.alpha[t] > 0.0 && st.alpha[t] < st.upper[t])
            .collect();
        let m = free.len();
        if !(2..=MAX_FREE).contains(&m) {
            return;
        }
        // On the face's optimum `−y_t G_t` is the same for every free example; within ε there is nothing
        // a step could do that the stopping test would see.
        let (lo, hi) = free
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &t| {
                let v = -y[t] * st.grad[t];
                (lo.min(v), hi.max(v))
            });
        if hi - lo <= self.epsilon(st) {
            return;
        }
        let data = (problem.data.x(), problem.norms.as_slice(), problem.kernel);
        let mut q = vec![0.0; m * m];
        for (a, &i) in free.iter().enumerate() {
            let row = self.cache.row(data, i);
            for (b, &j) in free.iter().enumerate() {
                q[a * m + b] = y[i] * y[j] * row[j];
            }
        }
        let pick = |v: &dyn Fn(usize) -> f64| free.iter().map(|&t| v(t)).collect::<Vec<f64>>();
        let yf = pick(&|t| y[t]);
        let g = pick(&|t| st.grad[t]);
        let down = pick(&|t| st.alpha[t]);
        let up = pick(&|t| st.upper[t] - st.alpha[t]);
        let mut apply = |p: &[f64], out: &mut [f64]| {
            for (a, o) in out.iter_mut().enumerate() {
                *o = dot(&q[a * m..(a + 1) * m], p);
            }
        };
        let Some((x, blocked)) =
            face_direction(&mut apply, Some(&yf), &g, (&down, &up), m.min(MAX_CG))
        else {
            return;
        };
        for (a, &i) in free.iter().enumerate() {
            let old = st.alpha[i];
            st.alpha[i] = match blocked {
                Some(b) if b == a && x[a] > 0.0 => st.upper[i],
                Some(b) if b == a => 0.0,
                _ => (old + x[a]).clamp(0.0, st.upper[i]),
            };
            let moved = st.alpha[i] - old;
            if moved == 0.0 {
                continue;
            }
            let row = self.cache.row(data, i);
            for ((gt, &yt), &k) in st.grad.iter_mut().zip(y).zip(row) {
                *gt += yt * y[i] * k * moved;
            }
        }
    }
}
