//! Chains with latent states per tag: each tag of a first-order chain split into `K` hidden states, so the
//! transitions between states can carry what one tag's transitions cannot (a phase, a count, a sub-type).

use crate::chain::ChainSpace;
use crate::cost::CostMatrix;
use crate::error::StructError;
use crate::latent::{LatentSpace, joint_costs};
use crate::oracle::{Enumerable, OutputSpace, Violation};
use crate::sequence::Sequence;

/// A chain over `T` tags with `K` latent states each: a first-order chain over the `T·K` joint labels
/// `tag·K + state` (so `w` is a chain's over `T·K` labels), whose loss is the tags' Hamming (or weighted)
/// loss: states of the same tag cost nothing against each other. Loss-augmented inference is Viterbi over the
/// joint labels; a completion is Viterbi restricted to the states of each position's observed tag.
#[derive(Debug, Clone, PartialEq)]
pub struct LatentChainSpace {
    joint: ChainSpace,
    tags: usize,
    states: usize,
}

impl LatentChainSpace {
    /// `n_tags` tags of `states` latent states each over `n_features` features, with the Hamming loss on
    /// tags and start/end scores.
    ///
    /// # Errors
    /// [`StructError::Empty`] for no features, tags or states.
    pub fn new(n_features: usize, n_tags: usize, states: usize) -> Result<Self, StructError> {
        Self::with_costs(n_features, CostMatrix::zero_one(n_tags)?, states)
    }

    /// Tags with a per-position cost matrix between them, `states` latent states each.
    ///
    /// # Errors
    /// [`StructError::Empty`] or [`StructError::TooLarge`].
    pub fn with_costs(
        n_features: usize,
        cost: CostMatrix,
        states: usize,
    ) -> Result<Self, StructError> {
        crate::error::at_least_one(states, "number of latent states")?;
        Ok(Self {
            joint: ChainSpace::with_costs(n_features, joint_costs(&cost, states)?, true)?,
            tags: cost.n_labels(),
            states,
        })
    }

    /// Number of tags `T`.
    pub fn n_tags(&self) -> usize {
        self.tags
    }

    /// Latent states per tag `K`.
    pub fn states(&self) -> usize {
        self.states
    }

    /// The joint chain over `T·K` labels.
    pub fn joint(&self) -> &ChainSpace {
        &self.joint
    }

    fn check_tags(&self, x: &Sequence, y: &[u32]) -> Result<(), StructError> {
        if y.len() != x.len() {
            return Err(StructError::LengthMismatch {
                what: "tags",
                expected: x.len(),
                got: y.len(),
            });
        }
        match y
            .iter()
            .enumerate()
            .find(|(_, t)| **t as usize >= self.tags)
        {
            Some((position, &label)) => Err(StructError::LabelOutOfRange {
                position,
                label,
                n_labels: self.tags,
            }),
            None => Ok(()),
        }
    }
}

impl OutputSpace for LatentChainSpace {
    type Input = Sequence;
    type Output = Vec<u32>;

    fn dim(&self) -> usize {
        self.joint.dim()
    }
    fn check_input(&self, x: &Sequence) -> Result<(), StructError> {
        self.joint.check_input(x)
    }
    fn check_output(&self, x: &Sequence, y: &Vec<u32>) -> Result<(), StructError> {
        self.joint.check_output(x, y)
    }
    fn for_each_feature(&self, x: &Sequence, y: &Vec<u32>, visit: &mut dyn FnMut(usize, f64)) {
        self.joint.for_each_feature(x, y, visit);
    }
    fn has_feature_difference(&self) -> bool {
        self.joint.has_feature_difference()
    }
    fn for_each_feature_difference(
        &self,
        x: &Sequence,
        y: &Vec<u32>,
        y_hat: &Vec<u32>,
        visit: &mut dyn FnMut(usize, f64),
    ) {
        self.joint.for_each_feature_difference(x, y, y_hat, visit);
    }
    fn score(&self, w: &[f64], x: &Sequence, y: &Vec<u32>) -> f64 {
        self.joint.score(w, x, y)
    }
    fn loss(&self, y: &Vec<u32>, y_hat: &Vec<u32>) -> f64 {
        self.joint.loss(y, y_hat)
    }
    /// The best joint labelling (its tags are [`LatentSpace::label`]).
    fn decode(&self, w: &[f64], x: &Sequence) -> Result<Vec<u32>, StructError> {
        self.joint.decode(w, x)
    }
    fn loss_augmented(
        &self,
        w: &[f64],
        x: &Sequence,
        y: &Vec<u32>,
    ) -> Result<Violation<Vec<u32>>, StructError> {
        self.joint.loss_augmented(w, x, y)
    }
}

impl Enumerable for LatentChainSpace {
    fn enumerate(&self, x: &Sequence) -> Result<Vec<Vec<u32>>, StructError> {
        self.joint.enumerate(x)
    }
}

impl LatentSpace for LatentChainSpace {
    type Label = Vec<u32>;

    fn label(&self, joint: &Vec<u32>) -> Vec<u32> {
        joint.iter().map(|j| j / self.states as u32).collect()
    }

    /// Viterbi over the states of each position's tag (ties to the lowest state).
    fn complete(&self, w: &[f64], x: &Sequence, y: &Vec<u32>) -> Result<Vec<u32>, StructError> {
        self.check_tags(x, y)?;
        let k = self.states;
        self.joint
            .decode_within(w, x, &|t, l| l / k == y[t] as usize)
    }

    /// Each position's state is its place in its run of equal tags, modulo `K` (the first token of a run
    /// state 0, the next state 1, ...), the seed rotating the states: segments' beginnings and insides
    /// apart, the structure latent states most often find, as a start that the same seed repeats.
    fn initial(&self, x: &Sequence, y: &Vec<u32>, seed: u64) -> Result<Vec<u32>, StructError> {
        self.check_tags(x, y)?;
        self.joint.check_input(x)?;
        let k = self.states as u32;
        let rotation = (seed % u64::from(k)) as u32;
        let mut run = 0u32;
        Ok(y.iter()
            .enumerate()
            .map(|(t, tag)| {
                run = if t > 0 && y[t - 1] == *tag {
                    run + 1
                } else {
                    0
                };
                tag * k + (run + rotation) % k
            })
            .collect())
    }
}
