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
//!
//! [`cccp_from`] also starts from a [`CccpState`] (where the rounds stood after a round) and hands one to
//! the caller after every round: checkpoints across rounds, which resume to the same bits as a run never
//! stopped (the rounds are deterministic given the completions and the kept weights).

use crate::error::OptimError;
use crate::structural::problem::StructProblem;
use crate::trainer::{Fit, StopReason};
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
    /// A round lowered the objective by at most the tolerance, or raised it by at most the certified gap
    /// its convex solve stopped at (descent cannot be told apart from the solve's inexactness; the round
    /// before is kept), or no completion changed.
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

/// Where the rounds stand after a round: the completions the next round trains on, every round so far,
/// the best round so far, and why the rounds stopped once they have. A checkpoint across rounds keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CccpState<O> {
    /// The completions the next round trains on.
    pub completions: Vec<O>,
    /// Every round so far.
    pub rounds: Vec<CccpRound>,
    /// Why the rounds stopped (`None` while they go on).
    pub stop: Option<CccpStop>,
    kept: Option<Kept<O>>,
}

impl<O> CccpState<O> {
    /// The kept round's weights (`None` before the first round).
    pub fn weights(&self) -> Option<&[f64]> {
        self.kept.as_ref().map(|k| k.w.as_slice())
    }

    /// Checks that the state was made for the examples `x` of `space`: as many completions (each an output
    /// of its example), a kept round with weights of the space's dimension whenever a round was run.
    ///
    /// # Errors
    /// [`OptimError::InvalidParam`] or [`OptimError::Example`] naming what does not fit.
    pub fn check_fits<S: LatentSpace<Output = O>>(
        &self,
        space: &S,
        x: &[S::Input],
    ) -> Result<(), OptimError> {
        let fits = self.completions.len() == x.len()
            && self.kept.as_ref().is_none_or(|k| {
                k.w.len() == space.dim()
                    && k.completions.len() == x.len()
                    && k.w.iter().all(|v| v.is_finite())
                    && k.objective.is_finite()
            })
            && (self.kept.is_some() || (self.rounds.is_empty() && self.stop.is_none()));
        if !fits {
            return Err(crate::error::invalid(
                "latent rounds' state",
                format!(
                    "{} completions, {} rounds",
                    self.completions.len(),
                    self.rounds.len()
                ),
                "was made for other examples or another space",
            ));
        }
        let kept = self.kept.iter().flat_map(|k| &k.completions);
        for (index, (xi, hi)) in x
            .iter()
            .cycle()
            .zip(self.completions.iter().chain(kept))
            .enumerate()
        {
            space
                .check_output(xi, hi)
                .map_err(|source| OptimError::Example {
                    index: index % x.len().max(1),
                    source,
                })?;
        }
        Ok(())
    }
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
    inner: F,
) -> Result<LatentFit<S::Output>, E>
where
    S: LatentSpace<Output: Sync>,
    F: FnMut(&StructProblem<'_, S>, Option<&[f64]>) -> Result<Fit<Vec<f64>>, E>,
    E: From<OptimError>,
{
    cccp_from(space, (x, y), lambda, params, None, |_| Ok(()), inner)
}

/// As [`cccp`], from `start` (a state `after_round` was given, for the same examples, λ and settings) or
/// from the seeded completions with `None`; `after_round` gets the state after every round, the last one
/// included (with its `stop`). A state whose rounds had stopped gives the fit it stopped with at once.
///
/// # Errors
/// As [`cccp`]; [`OptimError::InvalidParam`] for a start that does not fit the examples or the space;
/// what `after_round` returns.
pub fn cccp_from<S, F, E>(
    space: &S,
    (x, y): (&[S::Input], &[S::Label]),
    lambda: Lambda,
    params: CccpParams,
    start: Option<CccpState<S::Output>>,
    mut after_round: impl FnMut(&CccpState<S::Output>) -> Result<(), E>,
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
    let (mut h, mut rounds, mut kept, stopped) = match start {
        Some(state) => {
            state.check_fits(space, x)?;
            // Rounds already at the limit stop there.
            let stop = (state.stop)
                .or((state.rounds.len() >= params.max_rounds).then_some(CccpStop::Rounds));
            (state.completions, state.rounds, state.kept, stop)
        }
        None => (
            x.iter()
                .zip(y)
                .enumerate()
                .map(|(i, (xi, yi))| space.initial(xi, yi, params.seed).map_err(example(i)))
                .collect::<Result<_, _>>()?,
            Vec::new(),
            None,
            None,
        ),
    };
    let stop = loop {
        if let Some(stop) = stopped {
            break stop;
        }
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
        // CCCP's descent holds up to the inner solve's certified gap: F(w_t+1) ≤ its convex objective at
        // w_t+1 ≤ that problem's optimum + gap ≤ F(w_t) + gap. A rise within the gap is the inexact solve's,
        // and says the rounds cannot descend further at this precision: they have converged (the kept
        // round stays). A larger rise is a solve that stopped short.
        // Only a solve that stopped on its certificate says so: one cut short by a budget (a large gap) can
        // hide a real rise, which its warning's advice is for.
        let certified = matches!(fit.stop, StopReason::Converged | StopReason::Gap);
        let noise = fit.trace.last().and_then(|t| t.gap).unwrap_or(0.0).max(0.0);
        let stop = if objective > before {
            Some(if certified && objective - before <= noise {
                CccpStop::Converged
            } else {
                CccpStop::Rose
            })
        } else {
            kept = Some(Kept {
                w,
                objective,
                completions: completed.clone(),
                inner: fit,
            });
            h = completed;
            if changed == 0 || before - objective <= params.tolerance * objective.abs() {
                Some(CccpStop::Converged)
            } else {
                (rounds.len() >= params.max_rounds).then_some(CccpStop::Rounds)
            }
        };
        let state = CccpState {
            completions: h,
            rounds,
            stop,
            kept,
        };
        after_round(&state)?;
        CccpState {
            completions: h,
            rounds,
            kept,
            ..
        } = state;
        if let Some(stop) = stop {
            break stop;
        }
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Kept<O> {
    w: Vec<f64>,
    objective: f64,
    completions: Vec<O>,
    inner: Fit<()>,
}
