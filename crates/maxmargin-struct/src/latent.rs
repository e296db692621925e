//! Latent structural SVMs (Yu & Joachims, ICML 2009): outputs `(y, h)` whose `h` is never observed.
//!
//! The joint output space scores `(y, h)` and its loss depends on `y` alone; training alternates
//! [`LatentSpace::complete`] (the best `h` for each example's observed `y`) with a convex structural SVM over
//! the completed outputs (the concave-convex procedure: `maxmargin_optim::latent`). Prediction decodes
//! `(y, h)` jointly and keeps `y`.

use crate::cost::CostMatrix;
use crate::error::StructError;
use crate::multiclass::MulticlassSpace;
use crate::oracle::{Enumerable, OutputSpace, Violation};
use maxmargin_core::vector::SparseVec;
use std::fmt::Debug;

/// An output space over joint outputs `(y, h)` with a latent part `h`. Its [`OutputSpace::loss`] must depend
/// on the observed parts only: `Δ((y, h), (y′, h′)) = Δ(y, y′)`, so that loss-augmented inference over the
/// joint outputs is the latent SVM's.
pub trait LatentSpace: OutputSpace {
    /// The observed part `y`.
    type Label: Clone + PartialEq + Debug + Send + Sync;

    /// The observed part of a joint output.
    fn label(&self, joint: &Self::Output) -> Self::Label;

    /// The latent completion `argmax_h ⟨w, ψ(x, (y, h))⟩` of a labelled example (ties to the first `h`).
    ///
    /// # Errors
    /// Bad weights, input or label.
    fn complete(
        &self,
        w: &[f64],
        x: &Self::Input,
        y: &Self::Label,
    ) -> Result<Self::Output, StructError>;

    /// A first completion before any weights exist, drawn from `seed` (the same seed, the same
    /// completion).
    ///
    /// # Errors
    /// Bad input or label.
    fn initial(
        &self,
        x: &Self::Input,
        y: &Self::Label,
        seed: u64,
    ) -> Result<Self::Output, StructError>;
}

/// Multiclass with `S` latent subclasses per class: a mixture of `S` linear templates per class, the class's
/// score its best template's (joint output `c·S + h`, so `w` is `K·S` blocks of `d` weights). The loss is
/// the classes' cost; templates of the same class cost nothing against each other.
#[derive(Debug, Clone, PartialEq)]
pub struct LatentMulticlassSpace {
    joint: MulticlassSpace,
    classes: usize,
    subclasses: usize,
}

impl LatentMulticlassSpace {
    /// `n_classes` classes of `subclasses` templates each, with the 0-1 loss between classes.
    ///
    /// # Errors
    /// [`StructError::Empty`] for no features, classes or subclasses.
    pub fn new(
        n_features: usize,
        n_classes: usize,
        subclasses: usize,
    ) -> Result<Self, StructError> {
        Self::with_costs(n_features, CostMatrix::zero_one(n_classes)?, subclasses)
    }

    /// Classes with a cost matrix between them, `subclasses` templates each.
    ///
    /// # Errors
    /// [`StructError::Empty`].
    pub fn with_costs(
        n_features: usize,
        cost: CostMatrix,
        subclasses: usize,
    ) -> Result<Self, StructError> {
        crate::error::at_least_one(subclasses, "number of subclasses")?;
        Ok(Self {
            joint: MulticlassSpace::with_costs(n_features, joint_costs(&cost, subclasses)?)?,
            classes: cost.n_labels(),
            subclasses,
        })
    }

    /// Number of classes `K`.
    pub fn n_classes(&self) -> usize {
        self.classes
    }

    /// Templates per class `S`.
    pub fn subclasses(&self) -> usize {
        self.subclasses
    }

    /// The joint space over `K·S` templates.
    pub fn joint(&self) -> &MulticlassSpace {
        &self.joint
    }

    fn check_label(&self, y: u32) -> Result<(), StructError> {
        if (y as usize) < self.classes {
            Ok(())
        } else {
            Err(StructError::LabelOutOfRange {
                position: 0,
                label: y,
                n_labels: self.classes,
            })
        }
    }
}

impl OutputSpace for LatentMulticlassSpace {
    type Input = SparseVec;
    type Output = u32;

    fn dim(&self) -> usize {
        self.joint.dim()
    }
    fn check_input(&self, x: &SparseVec) -> Result<(), StructError> {
        self.joint.check_input(x)
    }
    fn check_output(&self, x: &SparseVec, y: &u32) -> Result<(), StructError> {
        self.joint.check_output(x, y)
    }
    fn for_each_feature(&self, x: &SparseVec, y: &u32, visit: &mut dyn FnMut(usize, f64)) {
        self.joint.for_each_feature(x, y, visit);
    }
    fn add_joint_feature(&self, x: &SparseVec, y: &u32, scale: f64, into: &mut [f64]) {
        self.joint.add_joint_feature(x, y, scale, into);
    }
    fn score(&self, w: &[f64], x: &SparseVec, y: &u32) -> f64 {
        self.joint.score(w, x, y)
    }
    fn loss(&self, y: &u32, y_hat: &u32) -> f64 {
        self.joint.loss(y, y_hat)
    }
    /// The best template over all classes (its class is [`LatentSpace::label`]).
    fn decode(&self, w: &[f64], x: &SparseVec) -> Result<u32, StructError> {
        self.joint.decode(w, x)
    }
    fn loss_augmented(
        &self,
        w: &[f64],
        x: &SparseVec,
        y: &u32,
    ) -> Result<Violation<u32>, StructError> {
        self.joint.loss_augmented(w, x, y)
    }
    fn has_slack_rescaling(&self) -> bool {
        true
    }
    fn slack_rescaled(
        &self,
        w: &[f64],
        x: &SparseVec,
        y: &u32,
    ) -> Result<Violation<u32>, StructError> {
        self.joint.slack_rescaled(w, x, y)
    }
}

impl Enumerable for LatentMulticlassSpace {
    fn enumerate(&self, x: &SparseVec) -> Result<Vec<u32>, StructError> {
        self.joint.enumerate(x)
    }
}

impl LatentSpace for LatentMulticlassSpace {
    type Label = u32;

    fn label(&self, joint: &u32) -> u32 {
        joint / self.subclasses as u32
    }

    fn complete(&self, w: &[f64], x: &SparseVec, y: &u32) -> Result<u32, StructError> {
        crate::error::check_weights(w, self.dim())?;
        self.joint.check_input(x)?;
        self.check_label(*y)?;
        let first = y * self.subclasses as u32;
        let mut best = (first, f64::NEG_INFINITY);
        for j in first..first + self.subclasses as u32 {
            let s = self.joint.score(w, x, &j);
            if s > best.1 {
                best = (j, s);
            }
        }
        Ok(best.0)
    }

    /// The template whose seeded random direction `r_h` (entries uniform in `[−1, 1]` from `seed`, shared by
    /// every example) is most aligned with `x`: a random partition of each class by projections, as a
    /// mixture's random start.
    fn initial(&self, x: &SparseVec, y: &u32, seed: u64) -> Result<u32, StructError> {
        self.check_label(*y)?;
        self.joint.check_input(x)?;
        Ok(y * self.subclasses as u32 + seeded_choice(x, self.subclasses, seed) as u32)
    }
}

/// The costs between joint labels `label·per + latent`: those of their labels (0 between the latent parts
/// of one label), so a latent space's loss reads the observed parts alone.
pub(crate) fn joint_costs(cost: &CostMatrix, per: usize) -> Result<CostMatrix, StructError> {
    let width = cost
        .n_labels()
        .checked_mul(per)
        .ok_or(StructError::TooLarge { max: usize::MAX })?;
    CostMatrix::from_fn(width, |a, b| {
        let (la, lb) = (a / per, b / per);
        if la == lb { 0.0 } else { cost.cost(la, lb) }
    })
}

/// Which of `k` seeded random directions `r_h` (entries uniform in `[−1, 1]` from `seed`) is most aligned
/// with `x` (the first on ties): a random partition of inputs by projections, the latent spaces' start.
pub(crate) fn seeded_choice(x: &SparseVec, k: usize, seed: u64) -> usize {
    let direction = |h: usize, j: u32| {
        let mut z = seed ^ (h as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(j) << 32;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    };
    let mut best = (0usize, f64::NEG_INFINITY);
    for h in 0..k {
        let s: f64 = x
            .as_row()
            .iter()
            .map(|(j, v)| v * direction(h, j as u32))
            .sum();
        if s > best.1 {
            best = (h, s);
        }
    }
    best.0
}
