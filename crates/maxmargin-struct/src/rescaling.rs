//! Margin and slack rescaling (Tsochantaridis, Joachims, Hofmann & Altun, JMLR 2005).
//!
//! With margin rescaling the structured hinge is `max_y′ [Δ(y, y′) + s(y′) − s(y)]`: the loss is added to
//! the score. With slack rescaling it is `max_y′ Δ(y, y′)·(1 + s(y′) − s(y))`: the loss scales the violation
//! of a unit margin, so an output with a small loss needs only a small push and a score far above the truth
//! costs no more than its loss allows. Both are 0 at the truth and convex in `w` (a maximum of affine
//! functions), and both bound `Δ(y, decode(w))`. In the cutting-plane constraints the output `ȳ` of
//! example `i` becomes `⟨w, Δ·(ψ(x, y) − ψ(x, ȳ))⟩ ≥ Δ − ξ_i` instead of `⟨w, ψ(x, y) − ψ(x, ȳ)⟩ ≥ Δ − ξ_i`.
//!
//! Slack-rescaled inference is not loss-augmented decoding with another loss: `Δ` multiplies the score
//! difference, so the maximization does not decompose as margin rescaling's does. A space offers it through
//! [`OutputSpace::slack_rescaled`](crate::OutputSpace::slack_rescaled) where it has an exact method; [`slack_brute_force`] is the reference.

use crate::error::{StructError, check_weights};
use crate::oracle::{Enumerable, Violation};
use serde::{Deserialize, Serialize};

/// How the task loss enters the structured hinge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Rescaling {
    /// `max_y′ [Δ(y, y′) + s(y′) − s(y)]` (the default; every solver).
    #[default]
    Margin,
    /// `max_y′ Δ(y, y′)·(1 + s(y′) − s(y))`, for spaces with [`OutputSpace::slack_rescaled`](crate::OutputSpace::slack_rescaled).
    Slack,
}

impl Rescaling {
    /// The name used on the command line and in files: `margin` or `slack`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Margin => "margin",
            Self::Slack => "slack",
        }
    }
}

impl std::str::FromStr for Rescaling {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "margin" => Ok(Self::Margin),
            "slack" => Ok(Self::Slack),
            other => Err(format!("unknown rescaling {other:?}: margin or slack")),
        }
    }
}

/// The slack-rescaled value of an output with loss `loss` and score `score` against the truth's score
/// `truth`: `Δ·(1 + s(ŷ) − s(y))`.
pub fn slack_value(loss: f64, score: f64, truth: f64) -> f64 {
    loss * (1.0 + score - truth)
}

/// A [`Violation`] under slack rescaling: `hinge = max(0, Δ·(1 + s(ŷ) − s(y)))`.
pub(crate) fn slack_violation<O>(output: O, loss: f64, score: f64, truth: f64) -> Violation<O> {
    Violation {
        output,
        loss,
        hinge: slack_value(loss, score, truth).max(0.0),
        bound: None,
    }
}

/// Slack-rescaled inference by enumeration: `argmax_y′ Δ(y, y′)·(1 + s(y′) − s(y))` over every output of
/// `x`, the first in enumeration order on ties (the truth, whose value is 0, wins a tie at 0 only when it
/// comes first). The reference the spaces' exact methods are tested against, and a working oracle for small
/// spaces of your own.
///
/// # Errors
/// Bad weights, input or output; [`StructError::TooLarge`].
///
/// # Examples
/// ```
/// use maxmargin_struct::{MulticlassSpace, OutputSpace, slack_brute_force};
/// use maxmargin_struct::core::vector::SparseVec;
/// let space = MulticlassSpace::new(1, 3)?;
/// let x = SparseVec::new(vec![0], vec![1.0])?;
/// let w = [0.5, 0.0, 0.25]; // class scores 0.5, 0, 0.25
/// // Class 0 is true: class 1 has value 1·(1 + 0 − 0.5) = 0.5, class 2 has 1·(1 + 0.25 − 0.5) = 0.75.
/// let v = slack_brute_force(&space, &w, &x, &0)?;
/// assert_eq!((v.output, v.hinge), (2, 0.75));
/// assert_eq!(space.slack_rescaled(&w, &x, &0)?, v);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn slack_brute_force<S: Enumerable>(
    space: &S,
    w: &[f64],
    x: &S::Input,
    y: &S::Output,
) -> Result<Violation<S::Output>, StructError> {
    check_weights(w, space.dim())?;
    space.check_input(x)?;
    space.check_output(x, y)?;
    let truth = space.score(w, x, y);
    let mut best: Option<(S::Output, f64, f64)> = None;
    for o in space.enumerate(x)? {
        let loss = space.loss_for(x, y, &o);
        let value = slack_value(loss, space.score(w, x, &o), truth);
        if best.as_ref().is_none_or(|b| value > b.2) {
            best = Some((o, loss, value));
        }
    }
    let (output, loss, value) = best.ok_or(StructError::Empty { what: "outputs" })?;
    Ok(Violation {
        output,
        loss,
        hinge: value.max(0.0),
        bound: None,
    })
}
