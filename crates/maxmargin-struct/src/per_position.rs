//! Sequences scored position by position (unary terms only), with a per-position loss.
//!
//! `ψ(x, y) = Σ_t e_{y_t} ⊗ x_t` and `Δ(y, y′) = Σ_t C[y_t][y′_t]`: score and loss are sums of per-position
//! terms, so by the factorization theorem the per-position maximizers together form a global maximizer;
//! both oracles decide position by position. Each position may restrict its labels. Weights are stored
//! feature-major (`w[j·L + l]`), so one feature's weights for all labels are contiguous.

use crate::cost::CostMatrix;
use crate::error::{StructError, check_call, check_features, check_labelled_call};
use crate::oracle::{Enumerable, OutputSpace, Violation};
use crate::sequence::{Sequence, add_unary, product, unary_score, visit_unary};

/// A sequence whose positions may each allow only some labels.
#[derive(Debug, Clone, PartialEq)]
pub struct PositionInput {
    /// One feature vector per position.
    pub features: Sequence,
    /// For each position, the allowed labels in increasing order; `None` allows every label everywhere.
    pub allowed: Option<Vec<Vec<u32>>>,
}

/// Unary-only sequences over `L` labels and `d` features.
#[derive(Debug, Clone, PartialEq)]
pub struct PerPositionSpace {
    n_features: usize,
    cost: CostMatrix,
}

impl PerPositionSpace {
    /// `n_labels` labels with the Hamming loss (each wrong position costs 1).
    ///
    /// # Errors
    /// [`StructError::Empty`].
    pub fn new(n_features: usize, n_labels: usize) -> Result<Self, StructError> {
        Self::with_costs(n_features, CostMatrix::zero_one(n_labels)?)
    }

    /// Labels with a per-position cost matrix.
    ///
    /// # Errors
    /// [`StructError::Empty`] for no features.
    pub fn with_costs(n_features: usize, cost: CostMatrix) -> Result<Self, StructError> {
        crate::error::at_least_one(n_features, "number of features")?;
        Ok(Self { n_features, cost })
    }

    /// Number of labels `L`.
    pub fn n_labels(&self) -> usize {
        self.cost.n_labels()
    }

    fn unary_len(&self) -> usize {
        self.n_features * self.n_labels()
    }

    /// Per position, the allowed label maximizing unary score plus `extra(t, l)`; the lowest on ties.
    fn best_per_position(
        &self,
        w: &[f64],
        x: &PositionInput,
        extra: impl Fn(usize, usize) -> f64,
    ) -> (Vec<u32>, f64) {
        let n_labels = self.n_labels();
        let mut u = vec![0.0; n_labels];
        let mut total = 0.0;
        let out = x
            .features
            .iter()
            .enumerate()
            .map(|(t, xt)| {
                u.iter_mut().for_each(|v| *v = 0.0);
                add_unary(&w[..self.unary_len()], xt, n_labels, &mut u);
                let mut best = (0u32, f64::NEG_INFINITY);
                let mut consider = |l: usize| {
                    let v = u[l] + extra(t, l);
                    if v > best.1 {
                        best = (l as u32, v);
                    }
                };
                match &x.allowed {
                    Some(allowed) => allowed[t].iter().for_each(|&l| consider(l as usize)),
                    None => (0..n_labels).for_each(consider),
                }
                total += best.1;
                best.0
            })
            .collect();
        (out, total)
    }
}

impl OutputSpace for PerPositionSpace {
    type Input = PositionInput;
    type Output = Vec<u32>;

    fn dim(&self) -> usize {
        self.unary_len()
    }

    fn check_input(&self, x: &PositionInput) -> Result<(), StructError> {
        if x.features.is_empty() {
            return Err(StructError::EmptySequence);
        }
        for (t, xt) in x.features.iter().enumerate() {
            check_features(xt, t, self.n_features)?;
        }
        if let Some(allowed) = &x.allowed {
            if allowed.len() != x.features.len() {
                return Err(StructError::LengthMismatch {
                    what: "allowed label sets",
                    expected: x.features.len(),
                    got: allowed.len(),
                });
            }
            for (t, a) in allowed.iter().enumerate() {
                crate::error::at_least_one(a.len(), "allowed labels at a position")?;
                for pair in a.windows(2) {
                    if pair[1] <= pair[0] {
                        return Err(StructError::LabelNotAllowed {
                            position: t,
                            label: pair[1],
                        });
                    }
                }
                if let Some(&l) = a.iter().find(|&&l| l as usize >= self.n_labels()) {
                    return Err(StructError::LabelOutOfRange {
                        position: t,
                        label: l,
                        n_labels: self.n_labels(),
                    });
                }
            }
        }
        Ok(())
    }

    fn check_output(&self, x: &PositionInput, y: &Vec<u32>) -> Result<(), StructError> {
        if y.len() != x.features.len() {
            return Err(StructError::LengthMismatch {
                what: "labels",
                expected: x.features.len(),
                got: y.len(),
            });
        }
        for (t, &l) in y.iter().enumerate() {
            if l as usize >= self.n_labels() {
                return Err(StructError::LabelOutOfRange {
                    position: t,
                    label: l,
                    n_labels: self.n_labels(),
                });
            }
            if let Some(allowed) = &x.allowed
                && allowed.get(t).is_some_and(|a| a.binary_search(&l).is_err())
            {
                return Err(StructError::LabelNotAllowed {
                    position: t,
                    label: l,
                });
            }
        }
        Ok(())
    }

    fn for_each_feature(&self, x: &PositionInput, y: &Vec<u32>, visit: &mut dyn FnMut(usize, f64)) {
        visit_unary(&x.features, y, self.n_features, self.n_labels(), visit);
    }

    fn score(&self, w: &[f64], x: &PositionInput, y: &Vec<u32>) -> f64 {
        unary_score(w, &x.features, y, self.n_features, self.n_labels())
    }

    fn loss(&self, y: &Vec<u32>, y_hat: &Vec<u32>) -> f64 {
        self.cost.sequence_loss(y, y_hat)
    }

    /// Per position, the allowed label with the highest unary score; the lowest label on ties.
    fn decode(&self, w: &[f64], x: &PositionInput) -> Result<Vec<u32>, StructError> {
        check_call(self, w, x)?;
        Ok(self.best_per_position(w, x, |_, _| 0.0).0)
    }

    /// Per position, the allowed label maximizing unary score `+ C[y_t][l]`; the lowest label on ties.
    fn loss_augmented(
        &self,
        w: &[f64],
        x: &PositionInput,
        y: &Vec<u32>,
    ) -> Result<Violation<Vec<u32>>, StructError> {
        check_labelled_call(self, w, x, y)?;
        let (out, value) = self.best_per_position(w, x, |t, l| self.cost.cost(y[t] as usize, l));
        let loss = self.loss(y, &out);
        Ok(Violation::of_value(out, loss, value, self.score(w, x, y)))
    }
}

impl Enumerable for PerPositionSpace {
    fn enumerate(&self, x: &PositionInput) -> Result<Vec<Vec<u32>>, StructError> {
        let all: Vec<u32> = (0..self.n_labels() as u32).collect();
        let sets: Vec<&[u32]> = (0..x.features.len())
            .map(|t| {
                x.allowed
                    .as_ref()
                    .map_or(all.as_slice(), |a| a[t].as_slice())
            })
            .collect();
        product(&sets)
    }
}
