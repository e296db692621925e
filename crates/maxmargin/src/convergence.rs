//! How far a run stopped from its optimum, and what to tell the user about it.
//!
//! Every run ends with a certificate: a duality gap `primal − dual` with a dual-feasible point (the
//! solver's own, or one built from its weights for Pegasos, the subgradient method and SSG). A run is
//! *converged* when its final relative gap is within the tolerance (the solver's own stopping test alone is
//! not enough: on badly scaled data a small projected gradient can leave a gap of a few per cent). A run that
//! is not gets a one-line warning saying how far it is and what to try.

use crate::Error;
use maxmargin_core::scale::{Scaler, Scaling, scaling_advice};
use maxmargin_core::vector::{SparseRow, SparseRows};
use maxmargin_optim::{OptimError, StopReason};

/// The relative duality gap a run must reach, when no `gap` is given, to count as converged.
pub const DEFAULT_GAP: f64 = 1e-2;

/// Whether a run reached its optimum: a certified relative gap within `tolerance`, whatever stopped it (a
/// solver's own test on gradients can stop short on badly scaled data); without a certificate, the solver's
/// own certified stop.
pub fn converged(stop: StopReason, objective: f64, gap: Option<f64>, tolerance: f64) -> bool {
    match gap {
        Some(g) => g <= tolerance * objective.abs(),
        None => matches!(stop, StopReason::Converged | StopReason::Gap),
    }
}

/// How a run that did not converge stopped.
#[derive(Debug, Clone)]
pub struct Stopped {
    /// The solver's name, as on the command line.
    pub solver: String,
    /// Why it stopped.
    pub stop: StopReason,
    /// Passes over the data.
    pub passes: f64,
    /// The final primal objective.
    pub objective: f64,
    /// The final certified gap.
    pub gap: Option<f64>,
    /// The relative gap it was to reach.
    pub tolerance: f64,
}

/// `v` with `decimals` places (and its sign when `sign`), or in exponent form from 1e9 on, so a weight or an
/// objective near 1e308 is a few characters, not three hundred digits.
pub fn short(v: f64, decimals: usize, sign: bool) -> String {
    match (v.abs() >= 1e9, sign) {
        (true, true) => format!("{v:+.3e}"),
        (true, false) => format!("{v:.3e}"),
        (false, true) => format!("{v:+.decimals$}"),
        (false, false) => format!("{v:.decimals$}"),
    }
}

/// One line (without the `warning:` prefix) for a run that did not converge.
pub fn warning(s: &Stopped, advice: &str) -> String {
    let how = match s.gap {
        Some(g) => {
            let rel = g / s.objective.abs().max(f64::MIN_POSITIVE);
            format!(
                "its objective {} is certified within {:.3e} of the optimum (relative gap {:.2e}, \
                 tolerance {:.0e})",
                short(s.objective, 6, false),
                g,
                rel,
                s.tolerance
            )
        }
        None => format!(
            "its objective {} has no certificate",
            short(s.objective, 6, false)
        ),
    };
    // A run its budget stopped was not stopped by ε: the advice is the budget, not a smaller ε.
    let advice = if matches!(
        s.stop,
        StopReason::MaxEpochs | StopReason::MaxIterations | StopReason::Time
    ) {
        advice
            .replace("a smaller --epsilon, or ", "")
            .replace(" or a smaller --epsilon", "")
    } else {
        advice.to_string()
    };
    format!(
        "{} stopped {} after {:.1} passes, not converged: {how}; try {advice}",
        s.solver,
        stopped_on(s.stop),
        s.passes
    )
}

pub(crate) fn stopped_on(stop: StopReason) -> &'static str {
    match stop {
        StopReason::MaxIterations => "on its iteration budget",
        StopReason::MaxEpochs => "on its pass budget",
        StopReason::Time => "on its time budget",
        StopReason::Tolerance => "when the objective stopped improving (--tolerance)",
        StopReason::Converged => "on its own test (--epsilon)",
        StopReason::Gap => "on its gap test",
        StopReason::Imported => "before it came here (imported, no certificate)",
        StopReason::Interrupted => "when interrupted",
        _ => "by a rule this summary does not name",
    }
}

/// What to try when a binary run does not converge.
pub(crate) fn binary_advice(
    (solver, loss): (crate::SolverKind, maxmargin_optim::BinaryLoss),
    scale: Scaling,
    x: &SparseRows,
) -> String {
    let mut tips = Vec::new();
    if scale == Scaling::None && max_abs(x) > 1.0 {
        tips.push("--scale maxabs");
    }
    let smooth = loss != maxmargin_optim::BinaryLoss::Hinge;
    match solver {
        crate::SolverKind::Dcd => tips.push("a smaller --epsilon, or more passes (--epochs)"),
        crate::SolverKind::Newton => tips.push("more passes (--epochs)"),
        _ if smooth => {
            tips.push("--solver newton (certified and fastest here), or more passes (--epochs)")
        }
        _ => tips.push("--solver dcd (certified and fastest), or more passes (--epochs)"),
    }
    if smooth && solver == crate::SolverKind::Dcd {
        tips.push(PRIMAL_TIP);
    }
    tips.join(", ")
}

/// DCD on a smooth loss crawls where the rows' Gram matrix is badly conditioned (8000 dense rows of 1000
/// features: 1000 passes, uncertified, in 22 s); Newton's method in the primal certifies the same problem in
/// 10 steps (1.4 s).
pub(crate) const PRIMAL_TIP: &str = "or --solver newton (Newton's method in the primal, which badly \
                                     conditioned rows do not slow)";

/// Logistic regression's dual coordinate descent crawls on badly scaled rows (unscaled covtype-shaped data:
/// objective 3.6 after 1000 passes, above w = 0's ln 2); Newton's method on the multinomial model does not
/// mind the scale (0.127, certified, in 0.5 s; two classes give the binary model at twice the λ).
pub(crate) const NEWTON_TIP: &str = "or --task multiclass --loss softmax (logistic regression by Newton's \
                                     method, which badly scaled rows do not slow)";

/// Fewer examples than this make each of BCFW's and SSG's blocks a large part of the problem.
const FEW_EXAMPLES: usize = 50;

/// What to try when a structural run of `n` examples does not converge: the task's default solver among the
/// tips when another one ran (it is the one measured fastest to a certified gap on the task's data), and
/// the 1-slack cutting planes when BCFW or SSG ran on few examples (three sequences of 3,000 tokens were at
/// a 54% gap after 40,000 BCFW passes, each block's dual wanting more corners than it keeps; 1-slack
/// converges there in tens of rounds).
pub(crate) fn structured_advice(
    (scale, over_ranks): (Scaling, bool),
    max_abs_value: f64,
    (task, n): (crate::Task, usize),
    (solver, loss): (crate::StructSolverKind, maxmargin_optim::BinaryLoss),
) -> String {
    use crate::StructSolverKind::{Bcfw, Oneslack, Ssg};
    let mut tips = Vec::new();
    if scale == Scaling::None && max_abs_value > 1.0 {
        tips.push(if over_ranks {
            // Over ranks `--scale` is refused (it needs every shard's statistics).
            "features scaled to [-1, 1] in the file (--scale does not apply over ranks)".to_string()
        } else {
            "--scale maxabs".to_string()
        });
    }
    tips.push("more passes (--max-passes) or a smaller --epsilon".to_string());
    if matches!(solver, Bcfw | Ssg) && n < FEW_EXAMPLES {
        tips.push(format!(
            "--solver {} (with {n} examples each block is large; the cutting planes take them whole)",
            format!("{Oneslack:?}").to_lowercase()
        ));
    }
    // One-vs-rest, one-vs-one and softmax train other models than the default's: not a faster way there.
    let best = task.default_solver();
    let same_model = !matches!(
        solver,
        crate::StructSolverKind::Ovr
            | crate::StructSolverKind::Ovo
            | crate::StructSolverKind::Softmax
    );
    if solver != best && same_model {
        tips.push(format!("--solver {}", format!("{best:?}").to_lowercase()));
    }
    if loss == maxmargin_optim::BinaryLoss::Logistic {
        tips.push(NEWTON_TIP.to_string());
    }
    tips.join(", ")
}

/// The largest absolute value in a matrix.
pub(crate) fn max_abs(x: &SparseRows) -> f64 {
    x.rows()
        .flat_map(|r| r.values().iter().map(|v| v.abs()))
        .fold(0.0, f64::max)
}

/// Fits the scaler `scale` asks for on the training rows, or, without one, notes in `warnings` when the
/// features look badly scaled for the solvers.
///
/// # Errors
/// What [`Scaler::fit`] returns.
pub(crate) fn fit_scaler(
    scale: Scaling,
    x: &SparseRows,
    warnings: &mut Vec<String>,
) -> Result<Option<Scaler>, Error> {
    fit_scaler_on(scale, || x.rows(), x.n_rows(), x.n_features(), warnings)
}

/// As [`fit_scaler`], without the note for a kernel other than the linear one (`kernel`): its note says
/// linear solvers converge slowly on such rows, which does not hold of SMO on a normalized kernel (an RBF at
/// γ = scale converged in 0.02 s on 0–255 pixels under that note).
///
/// # Errors
/// What [`Scaler::fit`] returns.
pub(crate) fn fit_scaler_for(
    scale: Scaling,
    x: &SparseRows,
    kernel: Option<crate::linear::KernelKind>,
    warnings: &mut Vec<String>,
) -> Result<Option<Scaler>, Error> {
    let mut notes = Vec::new();
    let scaler = fit_scaler(scale, x, &mut notes)?;
    if kernel.is_none_or(|k| k == crate::linear::KernelKind::Linear) {
        warnings.extend(notes);
    }
    Ok(scaler)
}

/// As [`fit_scaler`], for rows given by a function that walks them (each call from the start).
///
/// # Errors
/// What [`Scaler::fit`] returns.
pub(crate) fn fit_scaler_on<'a, I: Iterator<Item = SparseRow<'a>>>(
    scale: Scaling,
    rows: impl Fn() -> I,
    n_rows: usize,
    n_features: usize,
    warnings: &mut Vec<String>,
) -> Result<Option<Scaler>, Error> {
    if scale == Scaling::None {
        if let Some(note) = scaling_advice(rows(), n_features) {
            warnings.push(note);
        }
        return Ok(None);
    }
    Ok(Some(Scaler::fit(scale, rows(), n_rows, n_features)?))
}

/// As [`fit_scaler`], for rows on disk: one pass over them (the statistics are per feature, not per row).
///
/// # Errors
/// A read error of the row file, or what [`Scaler::fit`] returns.
pub(crate) fn fit_scaler_streamed(
    scale: Scaling,
    rows: &maxmargin_io::stream::RowFile,
    warnings: &mut Vec<String>,
) -> Result<Option<Scaler>, Error> {
    let summary = rows.summary();
    let mut fit = maxmargin_core::scale::ScalerFit::new(scale, summary.n_features);
    rows.pass(|r| {
        fit.add(r.x);
        Ok::<_, maxmargin_io::IoError>(())
    })?;
    if scale == Scaling::None {
        warnings.extend(fit.advice());
        return Ok(None);
    }
    Ok(Some(fit.finish(summary.n_rows)?))
}

/// Refuses a non-finite result: no such model is ever written.
///
/// # Errors
/// [`OptimError::InvalidParam`] naming what was not finite.
pub(crate) fn check_finite(w: &[f64], b: f64, objective: f64) -> Result<(), Error> {
    if let Some(j) = w.iter().position(|v| !v.is_finite()) {
        return Err(OptimError::InvalidParam {
            name: "training",
            value: format!("w[{j}] = {}", w[j]),
            reason: "produced a non-finite weight (values or parameters too large): nothing was saved; scale \
                     the data (--scale) or use another step or C",
        }
        .into());
    }
    if !b.is_finite() || !objective.is_finite() {
        return Err(OptimError::InvalidParam {
            name: "training",
            value: format!("b = {b}, objective = {objective}"),
            reason: "produced a non-finite value (values or parameters too large): nothing was saved; scale \
                     the data (--scale) or use another step or C",
        }
        .into());
    }
    Ok(())
}
