//! Face steps: conjugate gradients over the free duals of a box-constrained quadratic dual, where
//! coordinate or pair updates crawl.
//!
//! On a flat face of a dual `min ½αᵀHα − eᵀα` over a box (a kernel of low rank, few features, a large `C`),
//! coordinate descent (DCD) and pair updates (SMO) can zigzag along a valley of the free duals for millions
//! of updates. A face step solves the dual restricted to the free duals `F = {i : 0 < α_i < U_i}`, the
//! others held at their bounds,
//!
//! `min_Δ g_Fᵀ Δ + ½ Δᵀ H_FF Δ` subject to `0 ≤ α_F + Δ ≤ U_F` (and `y_Fᵀ Δ = 0` where the dual has the
//! equality constraint of an unregularized intercept),
//!
//! by conjugate gradients (on the hyperplane `y_Fᵀ Δ = 0` through the projection `P = I − y yᵀ/m`, `y_i =
//! ±1`), stopping where a free dual reaches its bound, or moving to the box's edge along a direction of no
//! curvature, where the objective falls linearly (Moré & Toraldo, SIAM J. Optim. 1991, use CG on a face in
//! this way). The updates then go on from the new point. It is a descent step that keeps the duals
//! feasible, so the optimal objective a run converges to is unchanged (where the dual's optimum is not
//! unique, with a singular `H`, the duals it ends at may differ). It reads only what it is given, so a
//! resumed run takes the same steps.
//!
//! SMO takes them (`binary/smo/face.rs`). DCD does not yet: on heart_scale at C = 10⁴ they made it converge
//! in 400 epochs (not at all in 1,000 without), but where thousands of duals are free (a9a at C = 10) the
//! first bound stops CG within a few iterations and the steps cost more than they save (1.5 to 3.4 times
//! the time); a step that goes on past the bounds it meets (gradient projection) would be needed first.

/// What a face step moves: `Δ` over `F`, and the member of `F` that reached its bound, if one stopped it
/// (to be put exactly on the bound).
pub(crate) type FaceStep = (Vec<f64>, Option<usize>);

/// `⟨a, b⟩` of two slices of one length.
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Removes `v`'s component along `y` (entries ±1), when there is a constraint.
fn project(v: &mut [f64], y: Option<&[f64]>) {
    let Some(y) = y else {
        return;
    };
    let s = dot(v, y) / y.len() as f64;
    for (a, b) in v.iter_mut().zip(y) {
        *a -= s * b;
    }
}

/// A step on the face: `apply(p, out)` sets `out = H_FF p`; `y` is the equality constraint's `y_F`, if
/// any; `g` the gradient over `F`; `down` and `up` how far each free dual can fall and rise (`up` may be
/// infinite); at most `max_iter` CG iterations. `None` when no step lowers the objective.
pub(crate) fn face_direction(
    apply: &mut dyn FnMut(&[f64], &mut [f64]),
    y: Option<&[f64]>,
    g: &[f64],
    (down, up): (&[f64], &[f64]),
    max_iter: usize,
) -> Option<FaceStep> {
    let m = g.len();
    let mut r = g.to_vec();
    project(&mut r, y);
    let mut rr = dot(&r, &r);
    let start = rr;
    if !rr.is_finite() || rr == 0.0 {
        return None;
    }
    let mut x = vec![0.0; m];
    let mut p: Vec<f64> = r.iter().map(|v| -v).collect();
    let mut hp = vec![0.0; m];
    let mut blocked = None;
    for _ in 0..max_iter {
        apply(&p, &mut hp);
        project(&mut hp, y);
        let curv = dot(&p, &hp);
        // The longest step along p that keeps every free dual in its box.
        let (mut t_box, mut at) = (f64::INFINITY, None);
        for a in 0..m {
            let room = if p[a] > 0.0 {
                (up[a] - x[a]) / p[a]
            } else if p[a] < 0.0 {
                (down[a] + x[a]) / -p[a]
            } else {
                continue;
            };
            if room < t_box {
                (t_box, at) = (room, Some(a));
            }
        }
        // Curvature lost in rounding gives a step far past the box, which then bounds it; only none at all
        // is taken as a direction without end.
        let t_cg = if curv > 0.0 { rr / curv } else { f64::INFINITY };
        if t_cg >= t_box {
            for (xa, pa) in x.iter_mut().zip(&p) {
                *xa += t_box * pa;
            }
            blocked = at;
            break;
        }
        if !t_cg.is_finite() {
            // No curvature and no bound ahead (open boxes): this direction has no end; keep what came before.
            break;
        }
        for ((xa, ra), (pa, qa)) in x.iter_mut().zip(r.iter_mut()).zip(p.iter().zip(&hp)) {
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
    // shortened (scaling keeps the constraint), and the dual that stopped it is put on its bound when within
    // rounding of it.
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
        let on = (x[a] - bound).abs() <= 1e-12 * bound.abs().max(down[a]);
        if on {
            x[a] = bound;
        }
        on
    });
    apply(&x, &mut hp);
    let change = dot(g, &x) + 0.5 * dot(&x, &hp);
    (change < 0.0).then_some((x, blocked))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `H` as a row-major matrix.
    fn matrix(q: &[f64]) -> impl FnMut(&[f64], &mut [f64]) + '_ {
        move |p: &[f64], out: &mut [f64]| {
            let m = p.len();
            for (a, o) in out.iter_mut().enumerate() {
                *o = dot(&q[a * m..(a + 1) * m], p);
            }
        }
    }

    /// A face with no curvature along the constraint: two free duals of the same class and equal rows
    /// (`H = [[1, 1], [1, 1]]`), so moving one up and the other down changes only the linear term, and the
    /// step goes to the box's edge.
    #[test]
    fn a_direction_without_curvature_goes_to_the_boxs_edge() {
        let q = [1.0, 1.0, 1.0, 1.0];
        let y = [1.0, 1.0];
        let (x, blocked) = face_direction(
            &mut matrix(&q),
            Some(&y),
            &[-1.0, 0.0],
            (&[0.5, 0.25], &[0.5, 0.75]),
            10,
        )
        .unwrap();
        assert_eq!(blocked, Some(1));
        assert_eq!(x, vec![0.25, -0.25]);
    }

    /// A strictly convex face: the step is the constrained minimizer, `H = 2I`, `g = (−2, 0)`, `y = (1, 1)`:
    /// the minimum of `−2Δ₀ + Δ₀² + Δ₁²` with `Δ₀ + Δ₁ = 0` is `Δ = (½, −½)`.
    #[test]
    fn a_curved_face_takes_the_constrained_minimizer() {
        let q = [2.0, 0.0, 0.0, 2.0];
        let y = [1.0, 1.0];
        let (x, blocked) = face_direction(
            &mut matrix(&q),
            Some(&y),
            &[-2.0, 0.0],
            (&[10.0; 2], &[10.0; 2]),
            10,
        )
        .unwrap();
        assert_eq!(blocked, None);
        assert!(
            (x[0] - 0.5).abs() < 1e-15 && (x[1] + 0.5).abs() < 1e-15,
            "{x:?}"
        );
    }

    /// Without the constraint and with no upper bound (the squared hinge's box): the unconstrained
    /// minimizer, `H = [[2, 1], [1, 2]]`, `g = (−3, −3)`: `Δ = (1, 1)`.
    #[test]
    fn an_unconstrained_face_with_open_boxes_takes_the_minimizer() {
        let q = [2.0, 1.0, 1.0, 2.0];
        let open = [f64::INFINITY; 2];
        let (x, blocked) =
            face_direction(&mut matrix(&q), None, &[-3.0, -3.0], (&[0.5; 2], &open), 10).unwrap();
        assert_eq!(blocked, None);
        assert!(
            (x[0] - 1.0).abs() < 1e-15 && (x[1] - 1.0).abs() < 1e-15,
            "{x:?}"
        );
    }

    /// At the face's optimum (the projected gradient zero) there is no step.
    #[test]
    fn no_step_at_the_faces_optimum() {
        let q = [2.0, 0.0, 0.0, 2.0];
        let y = [1.0, -1.0];
        let step = face_direction(
            &mut matrix(&q),
            Some(&y),
            &[1.0, -1.0],
            (&[1.0; 2], &[1.0; 2]),
            10,
        );
        assert!(step.is_none());
    }
}
