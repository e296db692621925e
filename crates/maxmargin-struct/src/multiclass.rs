//! Multiclass outputs (Crammer–Singer): `y ∈ {0, ..., K−1}`, `ψ(x, y) = e_y ⊗ x` (so `w` is `K` blocks of `d`
//! weights and `s(y) = ⟨w_y, x⟩`), with the 0-1 loss or any cost matrix. A space laid out feature-major
//! ([`MulticlassSpace::feature_major`], `ψ(x, y) = x ⊗ e_y`, weight `w[j K + k]`) scores the `K` classes in
//! one walk over `w`, for the solvers that train on the space (the model's layout is the class-major one).

use crate::cost::CostMatrix;
use crate::error::{StructError, check_call, check_features, check_labelled_call};
use crate::oracle::{Enumerable, OutputSpace, Violation};
use maxmargin_core::vector::SparseVec;

/// `K` classes over `d` features.
#[derive(Debug, Clone, PartialEq)]
pub struct MulticlassSpace {
    n_features: usize,
    cost: CostMatrix,
    /// Weight `(k, j)` at `j K + k` instead of `k d + j`.
    feature_major: bool,
}

impl MulticlassSpace {
    /// `n_classes` classes with the 0-1 loss.
    ///
    /// # Errors
    /// [`StructError::Empty`].
    pub fn new(n_features: usize, n_classes: usize) -> Result<Self, StructError> {
        Self::with_costs(n_features, CostMatrix::zero_one(n_classes)?)
    }

    /// Classes with a cost matrix `Δ(y, y′) = cost[y][y′]` (need not be symmetric).
    ///
    /// # Errors
    /// [`StructError::Empty`] for no features.
    pub fn with_costs(n_features: usize, cost: CostMatrix) -> Result<Self, StructError> {
        crate::error::at_least_one(n_features, "number of features")?;
        Ok(Self {
            n_features,
            cost,
            feature_major: false,
        })
    }

    /// The same space laid out feature-major: class `k`'s weight of feature `j` at `j K + k`, so that an
    /// example's `K` scores take one walk over `w` (its features' rows of `K` weights) instead of `K` walks
    /// through blocks of `d`: an example's features' weights for all classes sit in a few cache lines
    /// instead of one line per class and feature. [`MulticlassSpace::class_major`] turns such weights back.
    pub fn feature_major(self) -> Self {
        Self {
            feature_major: true,
            ..self
        }
    }

    /// Weights `w` of this space in the class-major layout (the model's, `k d + j`).
    pub fn class_major(&self, w: &[f64]) -> Vec<f64> {
        self.relaid(w, self.feature_major, false)
    }

    /// Class-major weights (a model's) in this space's layout.
    pub fn from_class_major(&self, w: &[f64]) -> Vec<f64> {
        self.relaid(w, false, self.feature_major)
    }

    /// Feature-major weights (`j K + k`, as the Crammer–Singer dual keeps them) in this space's layout.
    pub fn from_feature_major(&self, w: &[f64]) -> Vec<f64> {
        self.relaid(w, true, self.feature_major)
    }

    /// `w`, laid out feature-major when `from` (else class-major), laid out feature-major when `to`.
    fn relaid(&self, w: &[f64], from: bool, to: bool) -> Vec<f64> {
        let (d, k) = (self.n_features, self.n_classes());
        match (from, to) {
            (true, false) => transposed(w, d, k),
            (false, true) => transposed(w, k, d),
            _ => w.to_vec(),
        }
    }

    /// Where class `k`'s weight of feature `j` is.
    fn at(&self, k: usize, j: usize) -> usize {
        if self.feature_major {
            j * self.n_classes() + k
        } else {
            k * self.n_features + j
        }
    }

    /// Number of classes `K`.
    pub fn n_classes(&self) -> usize {
        self.cost.n_labels()
    }

    /// The cost matrix `Δ(y, y′)`.
    pub fn costs(&self) -> &CostMatrix {
        &self.cost
    }

    fn class_score(&self, w: &[f64], x: &SparseVec, k: usize) -> f64 {
        if self.feature_major {
            let row = x.as_row();
            return (row.indices().iter().zip(row.values()))
                .map(|(&j, v)| v * w[self.at(k, j as usize)])
                .sum();
        }
        let d = self.n_features;
        x.as_row().dot(&w[k * d..(k + 1) * d])
    }

    /// `argmax_k ⟨w_k, x⟩ + extra(k)`, the lowest class on ties.
    fn argmax(&self, w: &[f64], x: &SparseVec, extra: impl Fn(usize) -> f64) -> (usize, f64) {
        let scores = self.feature_major.then(|| {
            // One walk over the example's features' rows of K weights.
            let k = self.n_classes();
            let mut s = vec![0.0; k];
            for (j, v) in x.as_row().iter() {
                for (sk, wk) in s.iter_mut().zip(&w[j * k..(j + 1) * k]) {
                    *sk += v * wk;
                }
            }
            s
        });
        let mut best = (0, f64::NEG_INFINITY);
        for k in 0..self.n_classes() {
            let s = match &scores {
                Some(s) => s[k],
                None => self.class_score(w, x, k),
            };
            let v = s + extra(k);
            if v > best.1 {
                best = (k, v);
            }
        }
        best
    }
}

/// `w`, a `rows × cols` matrix stored row by row, stored column by column (the other layout of the same
/// weights).
fn transposed(w: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    let mut out = vec![0.0; w.len()];
    for (r, row) in w.chunks_exact(cols.max(1)).take(rows).enumerate() {
        for (c, &v) in row.iter().enumerate() {
            out[c * rows + r] = v;
        }
    }
    out
}

impl OutputSpace for MulticlassSpace {
    type Input = SparseVec;
    type Output = u32;

    fn dim(&self) -> usize {
        self.n_features * self.n_classes()
    }

    fn check_input(&self, x: &SparseVec) -> Result<(), StructError> {
        check_features(x, 0, self.n_features)
    }

    fn check_output(&self, _x: &SparseVec, y: &u32) -> Result<(), StructError> {
        if (*y as usize) < self.n_classes() {
            Ok(())
        } else {
            Err(StructError::LabelOutOfRange {
                position: 0,
                label: *y,
                n_labels: self.n_classes(),
            })
        }
    }

    fn for_each_feature(&self, x: &SparseVec, y: &u32, visit: &mut dyn FnMut(usize, f64)) {
        // Increasing in `j` in either layout.
        let k = *y as usize;
        x.as_row().iter().for_each(|(j, v)| visit(self.at(k, j), v));
    }

    fn has_feature_difference(&self) -> bool {
        true
    }

    /// Nothing for `y = ŷ`; else `x` at `y` and `−x` at `ŷ`, in increasing index order in either layout
    /// (feature by feature, the lower class first, when feature-major; class block by class block else).
    fn for_each_feature_difference(
        &self,
        x: &SparseVec,
        y: &u32,
        y_hat: &u32,
        visit: &mut dyn FnMut(usize, f64),
    ) {
        let (a, b) = (*y as usize, *y_hat as usize);
        if a == b {
            return;
        }
        let (lo, hi, sign) = if a < b { (a, b, 1.0) } else { (b, a, -1.0) };
        if self.feature_major {
            for (j, v) in x.as_row().iter() {
                visit(self.at(lo, j), sign * v);
                visit(self.at(hi, j), -sign * v);
            }
        } else {
            (x.as_row().iter()).for_each(|(j, v)| visit(self.at(lo, j), sign * v));
            (x.as_row().iter()).for_each(|(j, v)| visit(self.at(hi, j), -sign * v));
        }
    }

    fn add_joint_feature(&self, x: &SparseVec, y: &u32, scale: f64, into: &mut [f64]) {
        let d = self.n_features;
        let k = *y as usize;
        if self.feature_major {
            x.as_row()
                .iter()
                .for_each(|(j, v)| into[self.at(k, j)] += scale * v);
            return;
        }
        x.as_row().axpy(scale, &mut into[k * d..(k + 1) * d]);
    }

    fn score(&self, w: &[f64], x: &SparseVec, y: &u32) -> f64 {
        self.class_score(w, x, *y as usize)
    }

    fn loss(&self, y: &u32, y_hat: &u32) -> f64 {
        self.cost.cost(*y as usize, *y_hat as usize)
    }

    /// The class with the highest score; the lowest index on ties.
    fn decode(&self, w: &[f64], x: &SparseVec) -> Result<u32, StructError> {
        check_call(self, w, x)?;
        Ok(self.argmax(w, x, |_| 0.0).0 as u32)
    }

    /// `argmax_k ⟨w_k, x⟩ + Δ(y, k)`; the lowest index on ties.
    fn loss_augmented(
        &self,
        w: &[f64],
        x: &SparseVec,
        y: &u32,
    ) -> Result<Violation<u32>, StructError> {
        check_labelled_call(self, w, x, y)?;
        let y = *y as usize;
        let (k, v) = self.argmax(w, x, |k| self.cost.cost(y, k));
        let truth = self.class_score(w, x, y);
        Ok(Violation::of_value(
            k as u32,
            self.cost.cost(y, k),
            v,
            truth,
        ))
    }

    fn has_slack_rescaling(&self) -> bool {
        true
    }

    /// Exact, by one pass over the classes (see [`crate::Rescaling`]).
    fn slack_rescaled(
        &self,
        w: &[f64],
        x: &SparseVec,
        y: &u32,
    ) -> Result<Violation<u32>, StructError> {
        check_labelled_call(self, w, x, y)?;
        Ok(self.slack_argmax(w, x, *y as usize))
    }
}

impl MulticlassSpace {
    /// Slack-rescaled inference over the classes: `argmax_k Δ(y, k)·(1 + s_k − s_y)`, the truth (value 0)
    /// unless another class is strictly above it, the lowest class among equal others.
    fn slack_argmax(&self, w: &[f64], x: &SparseVec, y: usize) -> Violation<u32> {
        let truth = self.class_score(w, x, y);
        let (mut best, mut best_value) = (y, 0.0);
        for k in (0..self.n_classes()).filter(|&k| k != y) {
            let value = crate::rescaling::slack_value(
                self.cost.cost(y, k),
                self.class_score(w, x, k),
                truth,
            );
            if value > best_value {
                (best, best_value) = (k, value);
            }
        }
        crate::rescaling::slack_violation(
            best as u32,
            self.cost.cost(y, best),
            self.class_score(w, x, best),
            truth,
        )
    }
}

impl Enumerable for MulticlassSpace {
    fn enumerate(&self, _x: &SparseVec) -> Result<Vec<u32>, StructError> {
        Ok((0..self.n_classes() as u32).collect())
    }
}
