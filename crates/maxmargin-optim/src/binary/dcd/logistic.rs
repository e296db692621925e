//! The logistic loss in DCD (Yu, Huang & Lin 2011): its coordinate (Newton's method on the smaller of a dual
//! and its complement), its start, the checks of a decoded state, its dual's entropy, the repair of a running
//! sum that cancelled, and what it does not run in yet. The sequential pass calls these; the hinges never do.

use super::coordinate::{Coordinate, Layout, Visit, dot};
use super::*;

/// The logistic loss's coordinate (Yu, Huang & Lin 2011). The C-form dual is
/// `min_α ½αᵀQα + Σ_i [α_i log α_i + (U_i − α_i) log(U_i − α_i)]` over `0 < α_i < U_i`, with
/// `w = Σ α_i y_i x̃_i`; along coordinate `i` its derivative is `G_i = y_i(⟨w, x̃_i⟩ + b) + log(α_i/(U_i − α_i))`,
/// returned as the "projected" gradient (the duals never reach a bound, so nothing shrinks).
///
/// Both `α_i = a` and its complement `U_i − α_i = r` are kept, each exact, since an example far on the wrong
/// side has `r ≈ U_i e^{−|margin|}`, which `U_i − α_i` cannot resolve. The one-variable problem is solved by
/// Newton's method in whichever of the two is below `U_i/2` at the optimum (read from the sign of the
/// derivative at the middle of the box): `h(z) = Q_ii(z − z₀) ± y_i⟨w, x̃_i⟩ + log(z/(U_i − z))`. On
/// `(0, U_i/2]` `h` is increasing and concave, so from the left of its root Newton's iterates rise to it
/// monotonically; a step from the right that would leave the box multiplies `z` by 0.1 instead (the paper's
/// safeguard). It stops when `|h| ≤ inner`, `inner = clamp(0.1·previous, 10⁻¹², 10⁻²)` with `previous` the
/// last pass's largest `|G_i|` (∞ at first): loose early, tight near the end, as the paper's adaptive inner
/// tolerance. Returns the visit and the new complement.
#[inline]
pub(super) fn visit(
    w: &mut [f64],
    (d, feature, b): Layout,
    c: Coordinate<'_>,
    (a, r): (f64, f64),
    previous: f64,
) -> (Visit, f64) {
    let u = c.upper;
    let margin = c.y * (dot(w, c.x, d, feature) + b);
    let g = margin + a.ln() - r.ln();
    let inner = (0.1 * previous).clamp(1e-12, 1e-2);
    if g.abs() <= inner {
        let kept = Visit::Kept {
            pg: g,
            new: a,
            stepped: false,
        };
        return (kept, r);
    }
    let q = c.qd;
    // The optimum is above the middle when the derivative there is negative: work on the complement.
    let upper_half = q * (0.5 * u - a) + margin < 0.0;
    let (s, z0) = if upper_half { (-1.0, r) } else { (1.0, a) };
    let h = |z: f64| q * (z - z0) + s * margin + (z / (u - z)).ln();
    let mut z = z0.min(0.5 * u);
    let mut hz = h(z);
    for _ in 0..LOGISTIC_NEWTON_STEPS {
        if hz.abs() <= inner {
            break;
        }
        let next = z - hz / (q + u / (z * (u - z)));
        z = if next > 0.0 { next } else { 0.1 * z };
        z = z.max(f64::MIN_POSITIVE);
        hz = h(z);
    }
    // α moves by z − a, or by r − z when z is the complement: each difference of exact numbers.
    let (new, rest, step) = if upper_half {
        (u - z, z, r - z)
    } else {
        (z, u - z, z - a)
    };
    let delta = step * c.y;
    if delta != 0.0 {
        c.x.axpy(delta, &mut w[..d]);
        if feature {
            w[d] += delta;
        }
    }
    let kept = Visit::Kept {
        pg: g,
        new,
        stepped: delta != 0.0,
    };
    (kept, rest)
}

/// The most Newton steps of one logistic coordinate (each is a logarithm; they converge quadratically).
const LOGISTIC_NEWTON_STEPS: usize = 100;

/// The logistic duals' start `min(10⁻³ U_i, 10⁻⁸)`: inside the box, where the entropy's slope is finite, and
/// small, as a start from `w ≈ 0` (Yu, Huang & Lin's choice).
pub(super) fn start_of(upper: f64) -> f64 {
    (1e-3 * upper).min(1e-8)
}

/// The logistic duals' start for boxes `upper`: `α_i = min(10⁻³ U_i, 10⁻⁸)`, and their complements.
pub(super) fn start(upper: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let alpha: Vec<f64> = upper
        .iter()
        .map(|&u| if u > 0.0 { start_of(u) } else { 0.0 })
        .collect();
    let rest = upper.iter().zip(&alpha).map(|(u, a)| u - a).collect();
    (alpha, rest)
}

/// `Σ_i U_i H(α_i/U_i) = Σ_i [−α_i log(α_i/U_i) − r_i log(r_i/U_i)]`, the entropy part of the logistic dual
/// over every example (dual `α_i`, complement `r_i = U_i − α_i`, box `U_i`; 0 for `U_i = 0`).
pub(super) fn entropy(alpha: &[f64], rest: &[f64], upper: &[f64]) -> f64 {
    (0..alpha.len())
        .map(|i| entropy_of(alpha[i], rest[i], upper[i]))
        .sum()
}

/// One example's `U H(α/U)`, from its dual `a` and complement `r` (0 for `U = 0`).
pub(super) fn entropy_of(a: f64, r: f64, u: f64) -> f64 {
    let term = |t: f64| if t > 0.0 { -t * (t / u).ln() } else { 0.0 };
    if u <= 0.0 { 0.0 } else { term(a) + term(r) }
}

/// A decoded logistic state: the duals and their complements inside their boxes and adding up to them, and
/// every example active (nothing shrinks).
pub(super) fn check(st: &DcdState, n: usize) -> Result<(), OptimError> {
    fits(
        st.rest.len() == n
            && (0..n).all(|i| {
                let (a, r, u) = (st.alpha[i], st.rest[i], st.upper[i]);
                if u > 0.0 {
                    a > 0.0 && r > 0.0 && (a + r - u).abs() <= 1e-9 * u
                } else {
                    a == 0.0
                }
            }),
        "alpha (the logistic duals and their complements, inside their boxes)",
    )?;
    fits(
        st.active.len() == n,
        "the active set (logistic runs shrink nothing)",
    )
}

/// `w` is moved step by step; when one step moved a weight by far more than the weights now are (a
/// logistic dual that fell by many orders of magnitude, on rows of huge values), the sum has cancelled
/// away the digits it has left, and `w` is summed again from the duals, `Σ α_i y_i x̃_i`.
pub(super) fn rebuild_after_cancellation(
    problem: &BinaryProblem<'_>,
    st: &mut DcdState,
    moved: f64,
) {
    if cancelled(&st.w, moved) {
        sum_weights(problem, &st.alpha, &mut st.w);
    }
}

/// Whether a step that moved a weight by `moved` has cancelled away the digits of the running sum `w`.
pub(super) fn cancelled(w: &[f64], moved: f64) -> bool {
    let now = w.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    moved > CANCELLATION * now
}

/// Moves a row's dual from 0 to `a`: `w += a y_i x̃_i` (a streamed row's start inside its box).
pub(super) fn add_row(w: &mut [f64], (d, feature, _): Layout, c: Coordinate<'_>, a: f64) {
    c.x.axpy(a * c.y, &mut w[..d]);
    if feature {
        w[d] += a * c.y;
    }
}

/// LIBLINEAR's `-s 7` test value from a pass's extremes of `G_i`: the largest `|G_i|` (0 when nothing was
/// visited: every weight zero, nothing to move).
pub(super) fn largest(pg_max: f64, pg_min: f64) -> f64 {
    if pg_max < pg_min {
        0.0
    } else {
        pg_max.abs().max(pg_min.abs())
    }
}

/// How much larger than the weights one step's move may be before `w` is summed again from the duals
/// (10⁸: about half of a double's digits lost to cancellation).
const CANCELLATION: f64 = 1e8;

impl Dcd {
    /// What the logistic loss does not run in yet, refused by name.
    pub(super) fn refuse_logistic(&self, problem: &BinaryProblem<'_>) -> Result<(), OptimError> {
        if problem.bias() == Bias::Unregularized {
            return Err(invalid(
                "bias",
                "unregularized",
                "is not supported by dcd with the logistic loss; use feature (a regularized constant \
                 feature, as LIBLINEAR's -B 1) or none, or train by newton",
            ));
        }
        if self.params.blocks > 1 {
            return Err(invalid(
                "loss",
                "logistic",
                "runs one sequential pass at a time for now: use one block and one process",
            ));
        }
        Ok(())
    }
}
