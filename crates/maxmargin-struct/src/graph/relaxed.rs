//! Training over the LP relaxation (Finley & Joachims 2008, "Training structural SVMs when exact inference is
//! intractable"): outputs are points of the local marginal polytope, loss-augmented inference returns AD3's
//! best feasible point (fractional where the relaxation is not tight) with AD3's dual bound, and a solver's
//! certified gap is then a gap of the relaxed problem, whose hinge is the maximum over the polytope (at
//! least the true one): an over-generating oracle.

use super::ad3::{self, Fractional};
use super::infer::{Potentials, Tolerance};
use super::trws::ad3_after_trws;
use super::{Graph, GraphSpace, HINGE_TOL, Inference};
use crate::error::{StructError, check_call, check_labelled_call};
use crate::oracle::{OutputSpace, Violation};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A point of a graph's local marginal polytope: node marginals on the simplex and edge marginals whose sums
/// are their ends' marginals, stored as the labelling they round to and the nodes and edges whose marginals
/// are not that labelling's indicators. A labelling is the point with no such nodes or edges.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Marginals {
    /// Each node's likeliest label (the lowest on ties).
    pub labels: Vec<u32>,
    /// The nodes whose marginal is not one-hot at their label: `(node, L marginals)`.
    pub nodes: Vec<(u32, Vec<f64>)>,
    /// The edges whose marginal is not one-hot at their ends' labels: `(edge, L × L marginals)`, the
    /// first end's label by rows.
    pub edges: Vec<(u32, Vec<f64>)>,
}

impl From<Vec<u32>> for Marginals {
    fn from(labels: Vec<u32>) -> Self {
        Self {
            labels,
            nodes: Vec::new(),
            edges: Vec::new(),
        }
    }
}

impl Marginals {
    /// Whether the point is a labelling (every marginal an indicator).
    pub fn is_integral(&self) -> bool {
        self.nodes.is_empty() && self.edges.is_empty()
    }

    /// The point of `f` (`l` labels), stored sparsely.
    fn of(f: &Fractional, edges: &[[u32; 2]], l: usize) -> Self {
        let labels: Vec<u32> = f
            .nodes
            .chunks_exact(l)
            .map(|row| super::infer::argmax(row).0 as u32)
            .collect();
        let one_hot = |row: &[f64], at: usize| {
            row.iter()
                .enumerate()
                .all(|(a, &m)| m == if a == at { 1.0 } else { 0.0 })
        };
        let nodes = (f.nodes.chunks_exact(l).enumerate())
            .filter(|(i, row)| !one_hot(row, labels[*i] as usize))
            .map(|(i, row)| (i as u32, row.to_vec()))
            .collect();
        let edges = (f.edges.chunks_exact(l * l).zip(edges).enumerate())
            .filter(|(_, (t, [i, j]))| {
                !one_hot(
                    t,
                    labels[*i as usize] as usize * l + labels[*j as usize] as usize,
                )
            })
            .map(|(e, (t, _))| (e as u32, t.to_vec()))
            .collect();
        Self {
            labels,
            nodes,
            edges,
        }
    }
}

/// A [`GraphSpace`] trained over its LP relaxation (see the module docs): the same weights and joint
/// features, outputs [`Marginals`], and loss-augmented inference by TRW-S, then AD3 without branch and bound
/// where TRW-S does not certify a labelling, whose best feasible point (fractional or not) is the answer.
/// Its certificate is for the relaxed problem; the weights are a [`GraphSpace`]'s, which predicts with them.
///
/// Clones share the inner space's counts of calls and a count of fractional answers.
#[derive(Debug, Clone)]
pub struct RelaxedGraphSpace {
    inner: GraphSpace,
    /// AD3's iterations.
    max_iter: usize,
    fractional: Arc<AtomicUsize>,
}

impl RelaxedGraphSpace {
    /// The relaxation of `space`, which must use `ad3` (the method whose fractional points and bound are the
    /// relaxation's).
    ///
    /// # Errors
    /// [`StructError::Custom`] for another inference method.
    pub fn new(space: GraphSpace) -> Result<Self, StructError> {
        match space.inference {
            Inference::Ad3 { max_iter, .. } => Ok(Self {
                inner: space,
                max_iter: max_iter.max(1),
                fractional: Arc::new(AtomicUsize::new(0)),
            }),
            other => Err(StructError::Custom(format!(
                "training over the LP relaxation needs --inference ad3 (its fractional points and dual \
                 bound are the relaxation's), not {}",
                other.name()
            ))),
        }
    }

    /// The graph space the weights are for.
    pub fn space(&self) -> &GraphSpace {
        &self.inner
    }

    /// How many loss-augmented answers so far were fractional points (the relaxation not tight there and
    /// its point above every labelling found).
    pub fn fractional_calls(&self) -> usize {
        self.fractional.load(Ordering::Relaxed)
    }

    /// `visit(j, c·v)` for the features of node `i` of `x` at label `a`.
    fn visit_node(&self, x: &Graph, i: usize, a: usize, c: f64, visit: &mut dyn FnMut(usize, f64)) {
        let (d, l) = (self.inner.n_features, self.inner.n_labels());
        for (j, v) in x.nodes()[i].as_row().iter() {
            if j < d {
                visit(j * l + a, c * v);
            }
        }
    }

    /// `visit(j, c·v)` for the pairwise features of edge `e` of `x` at labels `(a, b)`.
    fn visit_edge(
        &self,
        x: &Graph,
        e: usize,
        (a, b): (usize, usize),
        c: f64,
        visit: &mut dyn FnMut(usize, f64),
    ) {
        let s = &self.inner;
        let at = s.unary_len() + s.pair_index(a, b);
        if s.n_edge_features == 0 {
            visit(at, c);
        } else {
            for (k, &f) in x.edge_features(e).iter().enumerate() {
                if f != 0.0 {
                    visit(at + k * s.table_len(), c * f);
                }
            }
        }
    }

    /// The loss-augmented answer on potentials `p`: TRW-S's labelling where it certifies it, else AD3's best
    /// feasible point without branch and bound (fractional or not), with the smaller of the two bounds.
    fn relax(&self, p: &Potentials, x: &Graph, certify: Tolerance) -> (Marginals, f64, f64, bool) {
        let settings = ad3::Ad3Settings {
            max_iter: self.max_iter,
            certify,
            fractional: true,
        };
        let r = ad3_after_trws(p, x.edges(), settings, 1);
        match r.fractional {
            Some(f) if f.value > r.value => (
                Marginals::of(&f, x.edges(), self.inner.n_labels()),
                f.value,
                r.bound,
                r.certified,
            ),
            _ => (r.labels.into(), r.value, r.bound, r.certified),
        }
    }
}

impl OutputSpace for RelaxedGraphSpace {
    type Input = Graph;
    type Output = Marginals;

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn check_input(&self, x: &Graph) -> Result<(), StructError> {
        self.inner.check_input(x)
    }

    /// Also checks the fractional parts: nodes and edges in range and in increasing order, `L` or `L²`
    /// finite, non-negative values each.
    fn check_output(&self, x: &Graph, y: &Marginals) -> Result<(), StructError> {
        self.inner.check_output(x, &y.labels)?;
        let l = self.inner.n_labels();
        let bad = |what: &str, at: u32| {
            StructError::Custom(format!("marginals of {what} {at} are not valid"))
        };
        let fine =
            |m: &[f64], len: usize| m.len() == len && m.iter().all(|v| v.is_finite() && *v >= 0.0);
        // Indices strictly increasing (as answers store them): each node and edge once.
        let mut last = None;
        for (i, m) in &y.nodes {
            if *i as usize >= x.n_nodes() || last.is_some_and(|k| k >= *i) || !fine(m, l) {
                return Err(bad("node", *i));
            }
            last = Some(*i);
        }
        let mut last = None;
        for (e, m) in &y.edges {
            if *e as usize >= x.edges().len() || last.is_some_and(|k| k >= *e) || !fine(m, l * l) {
                return Err(bad("edge", *e));
            }
            last = Some(*e);
        }
        Ok(())
    }

    /// The labelling's features, then each fractional node's and edge's marginals less their indicator.
    fn for_each_feature(&self, x: &Graph, y: &Marginals, visit: &mut dyn FnMut(usize, f64)) {
        self.inner.for_each_feature(x, &y.labels, visit);
        self.for_each_correction(x, y, visit);
    }

    /// The labelling's score, then the fractional parts' (without building `ψ`).
    fn score(&self, w: &[f64], x: &Graph, y: &Marginals) -> f64 {
        let mut s = self.inner.score(w, x, &y.labels);
        self.for_each_correction(x, y, &mut |j, v| s += w[j] * v);
        s
    }

    /// The loss with every node weighing 1 (see [`OutputSpace::loss_for`]); the truth `y` is a labelling
    /// (its own fractional parts, which no solver passes, are not read).
    fn loss(&self, y: &Marginals, y_hat: &Marginals) -> f64 {
        self.loss_weighted(y, y_hat, |_| 1.0)
    }

    fn loss_for(&self, x: &Graph, y: &Marginals, y_hat: &Marginals) -> f64 {
        self.loss_weighted(y, y_hat, |i| x.node_weight(i))
    }

    fn decode(&self, w: &[f64], x: &Graph) -> Result<Marginals, StructError> {
        self.inner.decode(w, x).map(Marginals::from)
    }

    /// The best point of the local polytope under the loss-augmented potentials that TRW-S certifies, or
    /// else AD3 (without branch and bound) finds, with their dual bound; the truth (hinge 0) when nothing
    /// better was found. Forests are solved exactly (their polytope's vertices are labellings).
    fn loss_augmented(
        &self,
        w: &[f64],
        x: &Graph,
        y: &Marginals,
    ) -> Result<Violation<Marginals>, StructError> {
        if !y.is_integral() {
            return Err(StructError::Custom(
                "the truth of loss-augmented inference must be a labelling, not fractional marginals".into(),
            ));
        }
        if x.is_forest() {
            check_labelled_call(self, w, x, y)?;
            let v = self.inner.loss_augmented(w, x, &y.labels)?;
            return Ok(Violation {
                output: v.output.into(),
                loss: v.loss,
                hinge: v.hinge,
                bound: v.bound,
            });
        }
        check_call(self, w, x)?;
        self.check_output(x, y)?;
        let p = self.inner.potentials(w, x, Some(&y.labels));
        p.check_finite(x.edges())?;
        self.inner.calls.fetch_add(1, Ordering::Relaxed);
        let truth = self.inner.score(w, x, &y.labels);
        let certify = Tolerance {
            tol: HINGE_TOL,
            offset: truth,
        };
        let (out, value, bound, certified) = self.relax(&p, x, certify);
        if !certified {
            self.inner.unconverged.fetch_add(1, Ordering::Relaxed);
        }
        if value <= truth {
            return Ok(Violation::of_value(y.clone(), 0.0, truth, truth).bounded_by(bound, truth));
        }
        if !out.is_integral() {
            self.fractional.fetch_add(1, Ordering::Relaxed);
        }
        let loss = self.loss_for(x, y, &out);
        Ok(Violation::of_value(out, loss, value, truth).bounded_by(bound, truth))
    }
}

impl RelaxedGraphSpace {
    /// `visit(j, v)` for each fractional node's and edge's marginals less their indicator at `y`'s
    /// labelling: what `ψ(y)` adds to the labelling's.
    fn for_each_correction(&self, x: &Graph, y: &Marginals, visit: &mut dyn FnMut(usize, f64)) {
        let l = self.inner.n_labels();
        for (i, m) in &y.nodes {
            let (i, at) = (*i as usize, y.labels[*i as usize] as usize);
            for (a, &v) in m.iter().enumerate() {
                let c = v - f64::from(u8::from(a == at));
                if c != 0.0 {
                    self.visit_node(x, i, a, c, visit);
                }
            }
        }
        for (e, m) in &y.edges {
            let e = *e as usize;
            let [i, j] = x.edges()[e];
            let at = y.labels[i as usize] as usize * l + y.labels[j as usize] as usize;
            for (ab, &v) in m.iter().enumerate() {
                let c = v - f64::from(u8::from(ab == at));
                if c != 0.0 {
                    self.visit_edge(x, e, (ab / l, ab % l), c, visit);
                }
            }
        }
    }

    /// `Σ_i v_i Σ_a μ_i(a) C[y_i][a]` for the labelling `y` and the point `y_hat`, node `i` weighing `v(i)`.
    fn loss_weighted(&self, y: &Marginals, y_hat: &Marginals, v: impl Fn(usize) -> f64) -> f64 {
        let cost = &self.inner.cost;
        let mut loss: f64 = (y.labels.iter().zip(&y_hat.labels).enumerate())
            .map(|(i, (&a, &b))| v(i) * cost.cost(a as usize, b as usize))
            .sum();
        for (i, m) in &y_hat.nodes {
            let i = *i as usize;
            let (Some(&truth), Some(&at)) = (y.labels.get(i), y_hat.labels.get(i)) else {
                continue;
            };
            let (truth, at) = (truth as usize, at as usize);
            let spread: f64 = (m.iter().enumerate())
                .map(|(a, &mu)| (mu - f64::from(u8::from(a == at))) * cost.cost(truth, a))
                .sum();
            loss += v(i) * spread;
        }
        loss
    }
}
