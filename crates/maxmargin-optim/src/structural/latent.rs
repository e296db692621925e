//! Latent structural SVMs by the concave-convex procedure (Yu & Joachims, ICML 2009).
//!
//! The objective `F(w) = λ/2‖w‖² + (1/n)Σ_i [max_{(y, h)} (Δ(y_i, y) + ⟨w, ψ(x_i, y, h)⟩) − max_h ⟨w, ψ(x_i, y_i,
//! h)⟩]` is a difference of convex functions. Each round fixes the second maximum at the current completions
//! `h_i` (a linear lower bound of it, so the fixed objective is a convex upper bound of `F` touching it at
//! the current `w`), minimizes that structural SVM with any solver here (warm-started where the solver
//! takes a start), and completes every example again at the new `w` (`LatentSpace::complete`). With the
//! inner problem solved, `F` cannot increase from round to round; the rounds stop when it decreases by at
//! most `tolerance·|F|`, or rose (an inner solve short of its optimum: the previous round's weights are
//! kept), or after `max_rounds`.

use crate::error::OptimError;
use crate::structural::problem::StructProblem;
use crate::trainer::Fit;
use maxmargin_core::objective::Lambda;
use maxmargin_struct::LatentSpace;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// The outer loop's settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CccpParams {
    /// Rounds of completion and convex training at most.
    pub max_rounds: usize,
    /// Stop when a round lowers the objective by at most this fraction of it.
    pub tolerance: f64,
    /// The seed of the first completions ([`LatentSpace::initial`]).
    pub seed: u64,
}

impl Default for CccpParams {
    fn default() -> Self {
        Self {
            max_rounds: 30,
            tolerance: 1e-4,
            seed: 0,
        }
    }
}

/// One round of the outer loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CccpRound {
    /// The latent objective `F` at the round's weights.
    pub objective: f64,
    /// The convex problem's objective at the round's weights (with the completions it was trained on;
    /// `≥ objective`).
    pub inner_objective: f64,
    /// The convex problem's certified duality gap, where its solver has one.
    pub inner_gap: Option<f64>,
    /// The convex solver's passes.
    pub inner_passes: f64,
    /// Examples whose completion changed after the round.
    pub changed: usize,
}

/// Why the outer loop stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CccpStop {
    /// A round lowered the objective by at most the tolerance (or no completion changed).
    Converged,
    /// A round raised the objective (its convex solve stopped short): the previous weights are kept.
    Rose,
    /// `max_rounds` rounds.
    Rounds,
}

/// A trained latent model.
#[derive(Debug, Clone, PartialEq)]
pub struct LatentFit<O> {
    /// The weights.
    pub w: Vec<f64>,
    /// The latent objective `F(w)`.
    pub objective: f64,
    /// The completions at `w`.
    pub completions: Vec<O>,
    /// Every round, in order (a round whose weights were not kept included).
    pub rounds: Vec<CccpRound>,
    /// Why the rounds stopped.
    pub stop: CccpStop,
    /// The convex solve of the kept round (its trace, stop reason and passes; its output is `w`).
    pub inner: Fit<()>,
}

/// Trains a latent structural SVM: `inner` minimizes the convex structural SVM of each round (given the
/// previous round's weights to start from, `None` in the first round) and returns its fit, or an error of
/// the caller's own type.
///
/// # Errors
/// [`OptimError::InvalidParam`] for a bad tolerance or no rounds; what the examples' checks, the
/// completions and `inner` return.
pub fn cccp<S, F, E>(
    space: &S,
    x: &[S::Input],
    y: &[S::Label],
    lambda: Lambda,
    params: CccpParams,
    mut inner: F,
) -> Result<LatentFit<S::Output>, E>
where
    S: LatentSpace<Output: Sync>,
    F: FnMut(&StructProblem<'_, S>, Option<&[f64]>) -> Result<Fit<Vec<f64>>, E>,
    E: From<OptimError>,
{
    if !(params.tolerance.is_finite() && params.tolerance >= 0.0) {
        return Err(crate::error::invalid(
            "tolerance",
            params.tolerance,
            "must be finite and >= 0",
        )
        .into());
    }
    if params.max_rounds == 0 {
        return Err(crate::error::invalid("max_rounds", 0, "must be at least 1").into());
    }
    if x.len() != y.len() {
        return Err(OptimError::LengthMismatch {
            rows: x.len(),
            targets: y.len(),
        }
        .into());
    }
    let example = |index| move |source| E::from(OptimError::Example { index, source });
    let mut h: Vec<S::Output> = x
        .iter()
        .zip(y)
        .enumerate()
        .map(|(i, (xi, yi))| space.initial(xi, yi, params.seed).map_err(example(i)))
        .collect::<Result<_, _>>()?;
    let mut rounds = Vec::new();
    let mut kept: Option<Kept<S::Output>> = None;
    let stop = loop {
        let problem = StructProblem::new(space, x, &h, lambda)?;
        let (w, fit) = inner(&problem, kept.as_ref().map(|k| k.w.as_slice()))?.replace_output(());
        let completed: Vec<S::Output> = x
            .par_iter()
            .zip(y)
            .enumerate()
            .map(|(index, (xi, yi))| {
                space
                    .complete(&w, xi, yi)
                    .map_err(|source| OptimError::Example { index, source })
            })
            .collect::<Result<_, OptimError>>()?;
        let changed = completed.iter().zip(&h).filter(|(a, b)| a != b).count();
        let objective = StructProblem::new(space, x, &completed, lambda)?.primal(&w)?;
        rounds.push(CccpRound {
            objective,
            inner_objective: fit.objective,
            inner_gap: fit.trace.last().and_then(|t| t.gap),
            inner_passes: fit.progress.epoch,
            changed,
        });
        let before = kept.as_ref().map_or(f64::INFINITY, |k| k.objective);
        if objective > before {
            break CccpStop::Rose;
        }
        kept = Some(Kept {
            w,
            objective,
            completions: completed.clone(),
            inner: fit,
        });
        if changed == 0 || before - objective <= params.tolerance * objective.abs() {
            break CccpStop::Converged;
        }
        if rounds.len() == params.max_rounds {
            break CccpStop::Rounds;
        }
        h = completed;
    };
    let k = kept.ok_or(OptimError::NoExamples)?;
    Ok(LatentFit {
        w: k.w,
        objective: k.objective,
        completions: k.completions,
        rounds,
        stop,
        inner: k.inner,
    })
}

/// The best round so far: its weights, objective, completions and convex fit.
struct Kept<O> {
    w: Vec<f64>,
    objective: f64,
    completions: Vec<O>,
    inner: Fit<()>,
}
