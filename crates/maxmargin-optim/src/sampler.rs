//! Which example a stochastic solver visits next: uniformly with replacement, by a fresh permutation each
//! epoch, or cyclically, from the seeded RNG the sampler carries.

use crate::error::{OptimError, invalid};
use rand::Rng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// How examples are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Sampling {
    /// Uniformly with replacement (the analysed Pegasos).
    Uniform,
    /// A fresh random permutation each epoch.
    #[default]
    Permutation,
    /// In file order, cycling (deterministic without randomness; for worked examples).
    Cyclic,
}

impl std::str::FromStr for Sampling {
    type Err = OptimError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "uniform" => Ok(Self::Uniform),
            "permutation" => Ok(Self::Permutation),
            "cyclic" => Ok(Self::Cyclic),
            _ => Err(invalid(
                "sampling",
                s,
                "must be uniform, permutation or cyclic",
            )),
        }
    }
}

/// A seeded stream of example indices in `0..n`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sampler {
    sampling: Sampling,
    n: usize,
    rng: ChaCha8Rng,
    order: Vec<usize>,
    pos: usize,
    /// Examples drawn so far.
    pub drawn: u64,
}

impl Sampler {
    /// A sampler over `n` examples.
    pub fn new(sampling: Sampling, n: usize, seed: u64) -> Self {
        let permute = sampling == Sampling::Permutation;
        Self {
            sampling,
            n,
            rng: crate::random::rng(seed),
            order: if permute {
                (0..n).collect()
            } else {
                Vec::new()
            },
            pos: if permute { n } else { 0 },
            drawn: 0,
        }
    }

    /// The next example.
    pub fn next_index(&mut self) -> usize {
        let i = match self.sampling {
            Sampling::Uniform => self.rng.random_range(0..self.n),
            Sampling::Cyclic => (self.drawn % self.n as u64) as usize,
            Sampling::Permutation => {
                if self.pos == self.order.len() {
                    self.order.shuffle(&mut self.rng);
                    self.pos = 0;
                }
                self.pos += 1;
                self.order[self.pos - 1]
            }
        };
        self.drawn += 1;
        i
    }

    /// Whether a decoded sampler draws from `n` examples and its order is a permutation of them.
    pub(crate) fn fits(&self, n: usize) -> bool {
        self.n == n
            && n > 0
            && (self.order.is_empty() || self.order.len() == n)
            && self.pos <= self.order.len()
            && crate::error::distinct_below(&self.order, n)
            && (self.sampling == Sampling::Permutation) != self.order.is_empty()
    }

    /// Passes over the data so far: `drawn / n`.
    pub fn epochs(&self) -> f64 {
        self.drawn as f64 / self.n as f64
    }
}
