//! Multilabel outputs with independent labels: `y ∈ {0, 1}^L`, `ψ(x, y) = Σ_l y_l (e_l ⊗ x)` (so
//! `s(y) = Σ_{l: y_l = 1} ⟨w_l, x⟩`), and the weighted Hamming loss `Δ(y, y′) = Σ_l c_l 1[y_l ≠ y′_l]`.
//!
//! Score and loss are sums over labels, so both oracles decide label by label: switching label `l` on adds
//! `⟨w_l, x⟩ + c_l 1[y_l = 0]` and off adds `c_l 1[y_l = 1]`. Ties keep the true value (loss-augmented) or
//! switch the label off (decoding).

use crate::error::{StructError, check_call, check_features, check_labelled_call};
use crate::oracle::{Enumerable, OutputSpace, Violation};
use maxmargin_core::vector::SparseVec;

/// `L` independent labels over `d` features.
#[derive(Debug, Clone, PartialEq)]
pub struct MultilabelSpace {
    n_features: usize,
    weights: Vec<f64>,
}

impl MultilabelSpace {
    /// `n_labels` labels with the plain Hamming loss (every label weighs 1).
    ///
    /// # Errors
    /// [`StructError::Empty`].
    pub fn new(n_features: usize, n_labels: usize) -> Result<Self, StructError> {
        Self::weighted(n_features, vec![1.0; n_labels])
    }

    /// Labels with loss weights `c_l ≥ 0`.
    ///
    /// # Errors
    /// [`StructError::Empty`] or [`StructError::InvalidCost`] for a negative or non-finite weight.
    pub fn weighted(n_features: usize, label_weights: Vec<f64>) -> Result<Self, StructError> {
        crate::error::at_least_one(n_features, "number of features")?;
        crate::error::at_least_one(label_weights.len(), "number of labels")?;
        if let Some(l) = label_weights
            .iter()
            .position(|c| !(c.is_finite() && *c >= 0.0))
        {
            return Err(StructError::InvalidCost {
                row: l,
                col: l,
                value: label_weights[l],
            });
        }
        Ok(Self {
            n_features,
            // −0 and +0 are one weight (the slack oracle groups labels by equal weights).
            weights: label_weights.into_iter().map(|c| c + 0.0).collect(),
        })
    }

    /// Number of labels `L`.
    pub fn n_labels(&self) -> usize {
        self.weights.len()
    }

    /// Label `l`'s decision value `⟨w_l, x⟩`: the label is predicted on when it is positive.
    ///
    /// # Panics
    /// When `l` is not a label of the space or `w` is shorter than [`OutputSpace::dim`].
    pub fn label_score(&self, w: &[f64], x: &SparseVec, l: usize) -> f64 {
        let d = self.n_features;
        x.as_row().dot(&w[l * d..(l + 1) * d])
    }
}

impl OutputSpace for MultilabelSpace {
    type Input = SparseVec;
    type Output = Vec<bool>;

    fn dim(&self) -> usize {
        self.n_features * self.n_labels()
    }

    fn check_input(&self, x: &SparseVec) -> Result<(), StructError> {
        check_features(x, 0, self.n_features)
    }

    fn check_output(&self, _x: &SparseVec, y: &Vec<bool>) -> Result<(), StructError> {
        if y.len() == self.n_labels() {
            Ok(())
        } else {
            Err(StructError::LengthMismatch {
                what: "label vector",
                expected: self.n_labels(),
                got: y.len(),
            })
        }
    }

    fn for_each_feature(&self, x: &SparseVec, y: &Vec<bool>, visit: &mut dyn FnMut(usize, f64)) {
        let d = self.n_features;
        for (l, _) in y.iter().enumerate().filter(|(_, on)| **on) {
            x.as_row().iter().for_each(|(j, v)| visit(l * d + j, v));
        }
    }

    fn has_feature_difference(&self) -> bool {
        true
    }

    /// `±x` in the blocks of the labels on which `y` and `ŷ` differ (the rest cancel), in increasing index
    /// order.
    fn for_each_feature_difference(
        &self,
        x: &SparseVec,
        y: &Vec<bool>,
        y_hat: &Vec<bool>,
        visit: &mut dyn FnMut(usize, f64),
    ) {
        if y.len() != y_hat.len() {
            return crate::oracle::whole_difference(self, x, y, y_hat, visit);
        }
        let d = self.n_features;
        for (l, (&on, &on_hat)) in y.iter().zip(y_hat).enumerate() {
            if on != on_hat {
                let sign = if on { 1.0 } else { -1.0 };
                x.as_row()
                    .iter()
                    .for_each(|(j, v)| visit(l * d + j, sign * v));
            }
        }
    }

    fn add_joint_feature(&self, x: &SparseVec, y: &Vec<bool>, scale: f64, into: &mut [f64]) {
        let d = self.n_features;
        for (l, _) in y.iter().enumerate().filter(|(_, on)| **on) {
            x.as_row().axpy(scale, &mut into[l * d..(l + 1) * d]);
        }
    }

    fn score(&self, w: &[f64], x: &SparseVec, y: &Vec<bool>) -> f64 {
        y.iter()
            .enumerate()
            .filter(|(_, on)| **on)
            .map(|(l, _)| self.label_score(w, x, l))
            .sum()
    }

    fn loss(&self, y: &Vec<bool>, y_hat: &Vec<bool>) -> f64 {
        y.iter()
            .zip(y_hat)
            .zip(&self.weights)
            .filter(|((a, b), _)| a != b)
            .map(|(_, c)| c)
            .sum()
    }

    /// Label `l` is on when `⟨w_l, x⟩ > 0` (a tie is off).
    fn decode(&self, w: &[f64], x: &SparseVec) -> Result<Vec<bool>, StructError> {
        check_call(self, w, x)?;
        Ok((0..self.n_labels())
            .map(|l| self.label_score(w, x, l) > 0.0)
            .collect())
    }

    /// Per label: on iff `⟨w_l, x⟩ + c_l 1[y_l = 0] > c_l 1[y_l = 1]`, the true value on ties.
    fn loss_augmented(
        &self,
        w: &[f64],
        x: &SparseVec,
        y: &Vec<bool>,
    ) -> Result<Violation<Vec<bool>>, StructError> {
        check_labelled_call(self, w, x, y)?;
        let (mut out, mut loss, mut hinge) = (Vec::with_capacity(y.len()), 0.0, 0.0);
        for (l, &truth) in y.iter().enumerate() {
            let c = self.weights[l];
            let s = self.label_score(w, x, l);
            let on = s + if truth { 0.0 } else { c };
            let off = if truth { c } else { 0.0 };
            let pick = if on == off { truth } else { on > off };
            out.push(pick);
            if pick != truth {
                loss += c;
            }
            // Contribution to Δ + s(ŷ) − s(y) of this label.
            hinge += if pick { on } else { off } - if truth { s } else { 0.0 };
        }
        Ok(Violation {
            output: out,
            loss,
            hinge: hinge.max(0.0),
            bound: None,
        })
    }

    fn has_slack_rescaling(&self) -> bool {
        true
    }

    /// Exact slack-rescaled inference (see [`crate::Rescaling`]). Flipping label `l` away from the truth adds
    /// `c_l` to the loss and `g_l` to the score (`s_l` when it turns on, `−s_l` when it turns off), so a set
    /// `F` of flips has the value `(Σ_F c)·(1 + Σ_F g)`. Among the sets with the same number of flips in each
    /// group of labels of equal weight the loss is the same, and the best of them flips the largest gains of
    /// each group; the oracle tries every count vector, `Π (n_j + 1)` of them (`L + 1` with one weight, as
    /// with the default unit weights), and refuses beyond 2²⁰. Ties go to fewer flips, then to lower labels.
    fn slack_rescaled(
        &self,
        w: &[f64],
        x: &SparseVec,
        y: &Vec<bool>,
    ) -> Result<Violation<Vec<bool>>, StructError> {
        check_labelled_call(self, w, x, y)?;
        let gains: Vec<f64> = y
            .iter()
            .enumerate()
            .map(|(l, &on)| {
                let s = self.label_score(w, x, l);
                if on { -s } else { s }
            })
            .collect();
        let mut order: Vec<usize> = (0..y.len()).collect();
        order.sort_by(|&a, &b| {
            let (ca, cb) = (self.weights[a], self.weights[b]);
            ca.total_cmp(&cb)
                .then(gains[b].total_cmp(&gains[a]))
                .then(a.cmp(&b))
        });
        // Groups of equal weight: (weight, labels by decreasing gain, prefix sums of their gains).
        let mut groups: Vec<(f64, Vec<usize>, Vec<f64>)> = Vec::new();
        for l in order {
            match groups.last_mut() {
                Some((c, labels, prefix)) if *c == self.weights[l] => {
                    labels.push(l);
                    prefix.push(prefix.last().copied().unwrap_or(0.0) + gains[l]);
                }
                _ => groups.push((self.weights[l], vec![l], vec![0.0, gains[l]])),
            }
        }
        let combinations = groups
            .iter()
            .try_fold(1usize, |acc, g| acc.checked_mul(g.1.len() + 1))
            .filter(|&c| c <= crate::oracle::MAX_ENUMERATED)
            .ok_or_else(|| {
                StructError::Custom(format!(
                    "slack rescaling over {} labels with {} different loss weights tries every count of flips                      per weight, more than 2^20 combinations: use fewer distinct label weights, or margin                      rescaling",
                    y.len(),
                    groups.len()
                ))
            })?;
        let mut counts = vec![0usize; groups.len()];
        let (mut best, mut best_value) = (counts.clone(), 0.0);
        for _ in 1..combinations {
            // The next count vector, the first group counting fastest.
            for (k, g) in counts.iter_mut().zip(&groups) {
                *k += 1;
                if *k <= g.1.len() {
                    break;
                }
                *k = 0;
            }
            let (mut loss, mut gain) = (0.0, 0.0);
            for (&k, (c, _, prefix)) in counts.iter().zip(&groups) {
                loss += c * k as f64;
                gain += prefix[k];
            }
            let value = loss * (1.0 + gain);
            if value > best_value
                || (value == best_value && value > 0.0 && flips(&counts) < flips(&best))
            {
                (best, best_value) = (counts.clone(), value);
            }
        }
        let mut out = y.clone();
        for (&k, (_, labels, _)) in best.iter().zip(&groups) {
            for &l in &labels[..k] {
                out[l] = !out[l];
            }
        }
        let (loss, score, truth) = (
            self.loss(y, &out),
            self.score(w, x, &out),
            self.score(w, x, y),
        );
        Ok(crate::rescaling::slack_violation(out, loss, score, truth))
    }
}

fn flips(counts: &[usize]) -> usize {
    counts.iter().sum()
}

impl Enumerable for MultilabelSpace {
    fn enumerate(&self, _x: &SparseVec) -> Result<Vec<Vec<bool>>, StructError> {
        let l = self.n_labels();
        if l > 20 {
            return Err(StructError::TooLarge { max: 1 << 20 });
        }
        Ok((0u32..(1 << l))
            .map(|m| (0..l).map(|k| m & (1 << k) != 0).collect())
            .collect())
    }
}
