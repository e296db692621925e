//! Structural SVM problems over any output space.
//!
//! The objective is `F(w) = λ/2‖w‖² + (1/n)Σ_i H_i(w)` with `H_i(w) = max_y [Δ(y_i, y) + ⟨w, ψ(x_i, y)⟩ −
//! ⟨w, ψ(x_i, y_i)⟩]`, the structured hinge computed by the space's loss-augmented oracle. A full pass of
//! oracle calls (for the primal objective, a duality gap, or a cutting plane) runs in parallel with rayon;
//! its results are collected in example order and summed in that order, so they do not depend on the
//! number of threads.

use crate::error::OptimError;
use maxmargin_core::objective::Lambda;
use maxmargin_core::vector::{SparseVec, norm_sq};
use maxmargin_struct::{OutputSpace, Rescaling, Violation};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// A structural SVM problem: a space, examples, and λ. It counts oracle calls.
#[derive(Debug)]
pub struct StructProblem<'a, S: OutputSpace> {
    space: &'a S,
    x: &'a [S::Input],
    y: &'a [S::Output],
    lambda: Lambda,
    rescaling: Rescaling,
    calls: AtomicU64,
}

impl<'a, S: OutputSpace> StructProblem<'a, S> {
    /// Checks every example against the space and bundles the problem.
    ///
    /// # Errors
    /// [`OptimError::LengthMismatch`], [`OptimError::NoExamples`], or [`OptimError::Example`] naming the
    /// first example that does not fit.
    pub fn new(
        space: &'a S,
        x: &'a [S::Input],
        y: &'a [S::Output],
        lambda: Lambda,
    ) -> Result<Self, OptimError> {
        crate::error::same_length(x.len(), y.len())?;
        if x.is_empty() {
            return Err(OptimError::NoExamples);
        }
        for (index, (xi, yi)) in x.iter().zip(y).enumerate() {
            space
                .check_input(xi)
                .and_then(|()| space.check_output(xi, yi))
                .map_err(|source| OptimError::Example { index, source })?;
        }
        Ok(Self {
            space,
            x,
            y,
            lambda,
            rescaling: Rescaling::Margin,
            calls: AtomicU64::new(0),
        })
    }

    /// The same problem with the hinge rescaled as `rescaling` says (margin rescaling unless this is
    /// called). Slack rescaling trains with the cutting planes (n-slack, 1-slack); the other solvers refuse
    /// it when they start.
    ///
    /// # Errors
    /// [`OptimError::InvalidParam`] when the space has no slack-rescaled oracle.
    pub fn with_rescaling(mut self, rescaling: Rescaling) -> Result<Self, OptimError> {
        if rescaling == Rescaling::Slack && !self.space.has_slack_rescaling() {
            return Err(OptimError::InvalidParam {
                name: "rescaling",
                value: rescaling.name().into(),
                reason: "needs a space with an exact slack-rescaled oracle (multiclass, multilabel, or one \
                         implementing OutputSpace::slack_rescaled)",
            });
        }
        self.rescaling = rescaling;
        Ok(self)
    }

    /// The examples `range` of this (checked) problem as a problem of their own, with this one's λ and
    /// rescaling and an oracle count of its own: a block of the examples that a solver trains on beside
    /// the others in one process.
    pub(crate) fn shard(&self, range: std::ops::Range<usize>) -> Self {
        Self {
            space: self.space,
            x: &self.x[range.clone()],
            y: &self.y[range],
            lambda: self.lambda,
            rescaling: self.rescaling,
            calls: AtomicU64::new(0),
        }
    }

    /// How the hinge is rescaled.
    pub fn rescaling(&self) -> Rescaling {
        self.rescaling
    }

    /// Refuses slack rescaling for `solver`, which trains only the margin-rescaled problem.
    pub(crate) fn require_margin(&self, solver: &'static str) -> Result<(), OptimError> {
        if self.rescaling == Rescaling::Margin {
            Ok(())
        } else {
            Err(OptimError::InvalidParam {
                name: "rescaling",
                value: format!("{} with {solver}", self.rescaling.name()),
                reason: "slack rescaling trains with the cutting planes (nslack, oneslack) only",
            })
        }
    }

    /// The factor on `ψ(x_i, y_i) − ψ(x_i, ŷ)` in the cutting plane of an output with loss `loss`: 1 under
    /// margin rescaling, `Δ` under slack rescaling (the plane's offset is `Δ` either way).
    pub fn plane_scale(&self, loss: f64) -> f64 {
        match self.rescaling {
            Rescaling::Slack => loss,
            _ => 1.0,
        }
    }

    /// The output space.
    pub fn space(&self) -> &'a S {
        self.space
    }

    /// The inputs.
    pub fn x(&self) -> &'a [S::Input] {
        self.x
    }

    /// The true outputs.
    pub fn y(&self) -> &'a [S::Output] {
        self.y
    }

    /// λ.
    pub fn lambda(&self) -> f64 {
        self.lambda.get()
    }

    /// Number of examples `n`.
    pub fn n_samples(&self) -> usize {
        self.x.len()
    }

    /// Length of `w`.
    pub fn dim(&self) -> usize {
        self.space.dim()
    }

    /// `ψ(x_i, y_i)` of every example, as sparse vectors (what the dual methods subtract from), in
    /// parallel, in example order.
    pub fn truth_features(&self) -> Vec<SparseVec>
    where
        S::Output: Sync,
    {
        (self.x.par_iter().zip(self.y))
            .map(|(x, y)| self.space.joint_feature(x, y))
            .collect()
    }

    /// Loss-augmented inference on example `i` (counted); under slack rescaling, slack-rescaled inference
    /// (its `hinge` is then `max(0, Δ·(1 + s(ŷ) − s(y)))`).
    ///
    /// # Errors
    /// What the oracle returns (not expected for checked examples and `w.len() == dim()`).
    pub fn oracle(&self, w: &[f64], i: usize) -> Result<Violation<S::Output>, OptimError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let (x, y) = (&self.x[i], &self.y[i]);
        Ok(match self.rescaling {
            Rescaling::Slack => self.space.slack_rescaled(w, x, y)?,
            _ => self.space.loss_augmented(w, x, y)?,
        })
    }

    /// Loss-augmented inference on every example, in parallel, in example order.
    ///
    /// # Errors
    /// As [`StructProblem::oracle`].
    pub fn oracle_all(&self, w: &[f64]) -> Result<Vec<Violation<S::Output>>, OptimError>
    where
        S::Input: Sync,
        S::Output: Sync,
    {
        (0..self.n_samples())
            .into_par_iter()
            .map(|i| self.oracle(w, i))
            .collect()
    }

    /// `(1/n)Σ H_i(w)`, summed in example order; where the oracle only bounds a maximum (its
    /// [`Violation::bound`](maxmargin_struct::Violation::bound)), that bound, so that the mean is never below
    /// the true one and a gap from it stays a certificate.
    ///
    /// # Errors
    /// As [`StructProblem::oracle`].
    pub fn mean_hinge(&self, w: &[f64]) -> Result<f64, OptimError>
    where
        S::Output: Sync,
    {
        let v = self.oracle_all(w)?;
        Ok(v.iter().map(|v| v.upper()).sum::<f64>() / self.n_samples() as f64)
    }

    /// The primal objective `λ/2‖w‖² + (1/n)Σ H_i(w)`.
    ///
    /// # Errors
    /// As [`StructProblem::oracle`].
    pub fn primal(&self, w: &[f64]) -> Result<f64, OptimError>
    where
        S::Output: Sync,
    {
        Ok(0.5 * self.lambda() * norm_sq(w) + self.mean_hinge(w)?)
    }

    /// A certified lower bound on the optimum (the λ-form dual value of a feasible point) from any `w`, with
    /// one pass of oracle calls: every example puts the same weight `t` on its most violating output `ŷ_i`
    /// at `w` (the rest on its true output), so the dual point has `w_s = (1/(λn)) Σ_i [ψ(x_i, y_i) −
    /// ψ(x_i, ŷ_i)]` and loss `ℓ_s = (1/n) Σ_i Δ(y_i, ŷ_i)`, and `D(t) = t ℓ_s − (λ/2) t² ‖w_s‖²` is maximized
    /// over `t ∈ [0, 1]`. This is what solvers without a dual (SSG) report as their certificate.
    ///
    /// # Errors
    /// As [`StructProblem::oracle`].
    pub fn dual_bound(&self, w: &[f64]) -> Result<f64, OptimError>
    where
        S::Input: Sync,
        S::Output: Sync,
    {
        let violations = self.oracle_all(w)?;
        let (lambda, n) = (self.lambda(), self.n_samples());
        let mut ws = vec![0.0; self.dim()];
        let mut ell = 0.0;
        for ((x, y), v) in self.x.iter().zip(self.y).zip(&violations) {
            // Under slack rescaling the plane of ŷ is Δ·(ψ(y) − ψ(ŷ)) with offset Δ: the same point with
            // λ scaled down by Δ on the features.
            let scale = self.plane_scale(v.loss);
            bound_point(
                self.space,
                (x, y, v),
                (lambda / scale.max(f64::MIN_POSITIVE), n),
                &mut ws,
                &mut ell,
            );
        }
        Ok(scaled_bound(lambda, &ws, ell))
    }

    /// Oracle calls so far.
    pub fn oracle_calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }
}

/// Adds example `(x, y)` with its violation `v` to [`StructProblem::dual_bound`]'s point over `n` examples at
/// `λ`: `w_s += (1/(λn)) [ψ(x, y) − ψ(x, ŷ)]`, `ℓ_s += Δ(y, ŷ)/n` when the loss is positive.
pub(crate) fn bound_point<S: OutputSpace>(
    space: &S,
    (x, y, v): (&S::Input, &S::Output, &Violation<S::Output>),
    (lambda, n): (f64, usize),
    ws: &mut [f64],
    ell: &mut f64,
) {
    if v.loss > 0.0 {
        let scale = 1.0 / (lambda * n as f64);
        space.add_joint_feature(x, y, scale, ws);
        space.add_joint_feature(x, &v.output, -scale, ws);
        *ell += v.loss / n as f64;
    }
}

/// The value of [`StructProblem::dual_bound`]'s point: `max_{t ∈ [0, 1]} t ℓ_s − (λ/2) t² ‖w_s‖²`.
pub(crate) fn scaled_bound(lambda: f64, ws: &[f64], ell: f64) -> f64 {
    let curvature = lambda * norm_sq(ws);
    let t = if curvature > 0.0 {
        (ell / curvature).clamp(0.0, 1.0)
    } else {
        1.0
    };
    (t * ell - 0.5 * curvature * t * t).max(0.0)
}
