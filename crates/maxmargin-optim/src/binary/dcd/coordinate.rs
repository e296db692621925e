//! DCD's step on one coordinate, written once: the sequential pass, the blocks, the ranks, the streamed pass
//! and the certificates' polish all call [`visit`]. It is not a pass: which coordinates are visited, in
//! which order and against which copy of `w` is the caller's.

use crate::problem::BinaryLoss;
use maxmargin_core::vector::SparseRow;

/// No shrinking bounds yet: every example is visited (LIBLINEAR's `PGmax_old = ∞`, `PGmin_old = −∞`).
pub(crate) const OPEN: (f64, f64) = (f64::INFINITY, f64::NEG_INFINITY);

/// One coordinate as a pass sees it: the row, its target, its box `U_i`, its diagonal `D_ii` and
/// `Q_ii = ‖x̃_i‖² + D_ii` (with the bias feature's 1 when there is one).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Coordinate<'r> {
    pub(crate) x: SparseRow<'r>,
    pub(crate) y: f64,
    pub(crate) upper: f64,
    pub(crate) diag: f64,
    pub(crate) qd: f64,
}

impl<'r> Coordinate<'r> {
    /// The coordinate of row `x` (target `y`) whose loss weighs `c` times the problem's `C` (`c_box`), with
    /// the bias feature when `feature`.
    pub(crate) fn of(x: SparseRow<'r>, y: f64, c: f64, (loss, c_box, feature): Shape) -> Self {
        let (upper, diag) = box_and_diag(loss, c_box * c);
        Self {
            x,
            y,
            upper,
            diag,
            qd: x.norm_sq() + if feature { 1.0 } else { 0.0 } + diag,
        }
    }
}

/// What every coordinate of a problem shares: the loss, `C = 1/(λn)` and whether the bias is a feature.
pub(crate) type Shape = (BinaryLoss, f64, bool);

/// What a visit found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Visit {
    /// At a bound, with a gradient beyond the previous pass's extremes: shrinking drops it.
    Shrunk,
    /// Kept: its projected gradient, its new dual, and whether a step was taken (`|PG| > 10⁻¹²`).
    Kept { pg: f64, new: f64, stepped: bool },
}

/// Where `w` lives in a visit: the features `d`, whether `w[d]` is the bias feature's weight, and an
/// intercept `b` added to every margin (the unregularized bias's outer search; 0 otherwise).
pub(crate) type Layout = (usize, bool, f64);

/// Visits coordinate `c` at `α_i = a`: the gradient `G_i = y_i(⟨w, x̃_i⟩ + b) − 1 + D_ii α_i`, LIBLINEAR's
/// shrinking test against `bounds` when `shrinking`, and the exact step `clip(α_i − G_i/Q_ii, 0, U_i)`,
/// moving `w` by `(α_new − α_i) y_i x̃_i`. (A logistic coordinate is [`visit_logistic`]'s.)
#[inline]
pub(crate) fn visit(
    w: &mut [f64],
    (d, feature, b): Layout,
    c: Coordinate<'_>,
    a: f64,
    (shrinking, bounds): (bool, (f64, f64)),
) -> Visit {
    let g = c.y * (dot(w, c.x, d, feature) + b) - 1.0 + c.diag * a;
    let Some(pg) = projected_gradient(g, a, c.upper, shrinking, bounds) else {
        return Visit::Shrunk;
    };
    if pg.abs() <= 1e-12 {
        return Visit::Kept {
            pg,
            new: a,
            stepped: false,
        };
    }
    let new = coordinate_step(a, g, c.qd, c.upper);
    let delta = (new - a) * c.y;
    c.x.axpy(delta, &mut w[..d]);
    if feature {
        w[d] += delta;
    }
    Visit::Kept {
        pg,
        new,
        stepped: true,
    }
}

/// The projected gradient of a coordinate at `α_i = a` in `[0, upper]` with gradient `g`, or `None` when
/// shrinking drops it: at a bound, with a gradient beyond the previous pass's extreme `(pg_max_old,
/// pg_min_old)`, it will stay there (LIBLINEAR's rule).
#[inline]
fn projected_gradient(
    g: f64,
    a: f64,
    upper: f64,
    shrinking: bool,
    (pg_max_old, pg_min_old): (f64, f64),
) -> Option<f64> {
    if a == 0.0 {
        if shrinking && g > pg_max_old {
            return None;
        }
        Some(g.min(0.0))
    } else if a == upper {
        if shrinking && g < pg_min_old {
            return None;
        }
        Some(g.max(0.0))
    } else {
        Some(g)
    }
}

/// The exact minimizer of the dual along coordinate `i`: `clip(α_i − G_i/Q_ii, 0, U_i)`. An example with
/// `Q_ii = 0` (no feature and no bias feature) has a linear dual in `α_i`: its optimum is the box's end that
/// the gradient points to (LIBLINEAR's `α − G/Q_ii` with `Q_ii = 0` goes there too), and `w` does not move.
#[inline]
fn coordinate_step(a: f64, g: f64, qd: f64, upper: f64) -> f64 {
    if qd > 0.0 {
        (a - g / qd).clamp(0.0, upper)
    } else if g < 0.0 {
        upper
    } else if g > 0.0 {
        0.0
    } else {
        a
    }
}

/// `⟨w, x_i⟩` with the constant feature at index `d` when the bias is a feature.
#[inline]
pub(crate) fn dot(w: &[f64], x: SparseRow<'_>, d: usize, feature: bool) -> f64 {
    let s = x.dot(&w[..d]);
    if feature { s + w[d] } else { s }
}

/// The box and the diagonal of an example whose loss weighs `c` (C-form): `(c, 0)` for the hinge and the
/// logistic loss,
/// `(∞, 1/(2c))` for the squared hinge; a zero weight gives `(0, 0)`, the example left out.
pub(crate) fn box_and_diag(loss: BinaryLoss, c: f64) -> (f64, f64) {
    if c == 0.0 {
        return (0.0, 0.0);
    }
    match loss {
        BinaryLoss::Hinge | BinaryLoss::Logistic => (c, 0.0),
        BinaryLoss::SquaredHinge => (f64::INFINITY, 0.5 / c),
    }
}
