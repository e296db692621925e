//! SMO's face step: where pair updates crawl, conjugate gradients over the free examples.
//!
//! On a flat face of the dual (a kernel of low rank, a large `C`) pair updates can zigzag along a valley of
//! the free examples for millions of iterations: property tests drew a linear kernel on three features with
//! `C ≈ 55` where SMO needed more than 4.4 million iterations on 22 examples (LIBSVM crawls alike on such
//! cases: 244,666 iterations on eight rows). The face step solves the dual restricted to the free examples
//! `F = {t : 0 < α_t < U_t}`, the others held at their bounds,
//!
//! `min_Δ g_Fᵀ Δ + ½ Δᵀ Q_FF Δ` subject to `y_Fᵀ Δ = 0` and `0 ≤ α_F + Δ ≤ U_F`,
//!
//! by conjugate gradients on the hyperplane `y_Fᵀ Δ = 0` (the projection `P = I − y yᵀ/m`, `y_t = ±1`),
//! stopping where a free example reaches its bound, or moving to the box's edge along a direction of no
//! curvature, where the objective falls linearly (Moré & Toraldo, SIAM J. Optim. 1991, use CG on a face in
//! this way). Pair updates then go on from the new point; it is a descent step, so what the run converges to
//! is unchanged.
//!
//! It is tried at each shrinking once the run has taken [`FACE_AFTER_PASSES`] iterations per example (RBF
//! runs on heart_scale and breast-cancer take 0.2 to 6.4 at C from 1 to 10⁴, so they keep their bits; linear
//! kernels at C = 100 take 111 to 433 without it), and only on at most [`MAX_FREE`] free examples (its cost
//! is `m` kernel rows, against the `min(n/4, 1000)` iterations of pair updates between shrinkings). It reads
//! only the state (`α`, the gradient, the iteration), so a resumed run takes the same steps.

use super::{KernelProblem, Smo, SmoState};

/// Iterations per example after which each shrinking also tries a face step.
pub(super) const FACE_AFTER_PASSES: u64 = 50;

/// Most free examples a face step takes.
pub(super) const MAX_FREE: usize = 200;

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Removes `v`'s component along `y` (entries ±1).
fn project(v: &mut [f64], y: &[f64]) {
    let s = dot(v, y) / y.len() as f64;
    for (a, b) in v.iter_mut().zip(y) {
        *a -= s * b;
    }
}

/// A step `Δ` on the face: `q` is `Q_FF` (row-major, `m × m`), `g` the gradient over `F`, `down` and `up`
/// how far each free `α` can fall and rise. Returns `Δ` and, when a bound stopped it, the example (in `F`'s
/// order) that reached it; `None` when no step lowers the objective.
pub(super) fn face_direction(
    q: &[f64],
    y: &[f64],
    g: &[f64],
    down: &[f64],
    up: &[f64],
) -> Option<(Vec<f64>, Option<usize>)> {
    let m = y.len();
    let mut r = g.to_vec();
    project(&mut r, y);
    let mut rr = dot(&r, &r);
    let start = rr;
    if !rr.is_finite() || rr == 0.0 {
        return None;
    }
    let diag = (0..m).map(|a| q[a * m + a]).fold(0.0, f64::max);
    let mut x = vec![0.0; m];
    let mut p: Vec<f64> = r.iter().map(|v| -v).collect();
    let mut qp = vec![0.0; m];
    let mut blocked = None;
    for _ in 0..m {
        for (a, out) in qp.iter_mut().enumerate() {
            *out = dot(&q[a * m..(a + 1) * m], &p);
        }
        project(&mut qp, y);
        let curv = dot(&p, &qp);
        // The longest step along p that keeps every free α in its box.
        let (mut t_box, mut at) = (f64::INFINITY, usize::MAX);
        for a in 0..m {
            let room = if p[a] > 0.0 {
                (up[a] - x[a]) / p[a]
            } else if p[a] < 0.0 {
                (down[a] + x[a]) / -p[a]
            } else {
                continue;
            };
            if room < t_box {
                (t_box, at) = (room, a);
            }
        }
        if at == usize::MAX {
            break;
        }
        let t_cg = if curv > 1e-12 * diag * dot(&p, &p) {
            rr / curv
        } else {
            f64::INFINITY
        };
        if t_cg >= t_box {
            for (xa, pa) in x.iter_mut().zip(&p) {
                *xa += t_box * pa;
            }
            blocked = Some(at);
            break;
        }
        for ((xa, ra), (pa, qa)) in x.iter_mut().zip(r.iter_mut()).zip(p.iter().zip(&qp)) {
            *xa += t_cg * pa;
            *ra += t_cg * qa;
        }
        let next = dot(&r, &r);
        if next <= 1e-24 * start {
            break;
        }
        let beta = next / rr;
        rr = next;
        for (pa, ra) in p.iter_mut().zip(&r) {
            *pa = beta * *pa - ra;
        }
        // Kept on the hyperplane: near a direction of no curvature the steps are long and rounding grows.
        project(&mut p, y);
    }
    // Rounding kept out of the equality constraint; a step the projection left just outside a box is
    // shortened (scaling keeps the constraint), and the example that stopped it is put on its bound when
    // within rounding of it.
    project(&mut x, y);
    let mut fits = 1.0f64;
    for a in 0..m {
        if x[a] > up[a] {
            fits = fits.min(up[a] / x[a]);
        } else if x[a] < -down[a] {
            fits = fits.min(down[a] / -x[a]);
        }
    }
    for xa in &mut x {
        *xa *= fits;
    }
    let blocked = blocked.filter(|&a| {
        let bound = if x[a] > 0.0 { up[a] } else { -down[a] };
        let on = (x[a] - bound).abs() <= 1e-12 * (up[a] + down[a]);
        if on {
            x[a] = bound;
        }
        on
    });
    let mut qx = vec![0.0; m];
    for (a, out) in qx.iter_mut().enumerate() {
        *out = dot(&q[a * m..(a + 1) * m], &x);
    }
    let change = dot(g, &x) + 0.5 * dot(&x, &qx);
    (change < 0.0).then_some((x, blocked))
}

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
        let Some((x, blocked)) = face_direction(&q, &yf, &g, &down, &up) else {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A face with no curvature along the constraint: two free examples of the same class and equal rows
    /// (`Q = [[1, 1], [1, 1]]`), so moving one up and the other down changes only the linear term, and the
    /// step goes to the box's edge.
    #[test]
    fn a_direction_without_curvature_goes_to_the_boxs_edge() {
        let q = [1.0, 1.0, 1.0, 1.0];
        let (x, blocked) =
            face_direction(&q, &[1.0, 1.0], &[-1.0, 0.0], &[0.5, 0.25], &[0.5, 0.75]).unwrap();
        assert_eq!(blocked, Some(1));
        assert_eq!(x, vec![0.25, -0.25]);
    }

    /// A strictly convex face: the step is the constrained minimizer, `Q = 2I`, `g = (−2, 0)`, `y = (1, 1)`:
    /// the minimum of `−2Δ₀ + Δ₀² + Δ₁²` with `Δ₀ + Δ₁ = 0` is `Δ = (½, −½)`.
    #[test]
    fn a_curved_face_takes_the_constrained_minimizer() {
        let q = [2.0, 0.0, 0.0, 2.0];
        let (x, blocked) =
            face_direction(&q, &[1.0, 1.0], &[-2.0, 0.0], &[10.0, 10.0], &[10.0, 10.0]).unwrap();
        assert_eq!(blocked, None);
        assert!(
            (x[0] - 0.5).abs() < 1e-15 && (x[1] + 0.5).abs() < 1e-15,
            "{x:?}"
        );
    }

    /// At the face's optimum (the projected gradient zero) there is no step.
    #[test]
    fn no_step_at_the_faces_optimum() {
        let q = [2.0, 0.0, 0.0, 2.0];
        assert!(face_direction(&q, &[1.0, -1.0], &[1.0, -1.0], &[1.0; 2], &[1.0; 2]).is_none());
    }
}
