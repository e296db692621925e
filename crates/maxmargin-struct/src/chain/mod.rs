//! First-order chains: unary scores per position, transition scores between neighbours, and optional start
//! and end scores, decoded by Viterbi in `O(T·L²)` (plus `O(nnz·L)` for the unary scores).
//!
//! `s(y) = Σ_t ⟨W_{·, y_t}, x_t⟩ + Σ_{t≥1} A[y_{t−1}, y_t] + start[y_0] + end[y_{T−1}]`, and
//! `Δ(y, y′) = Σ_t C[y_t][y′_t]` (Hamming with the 0-1 cost matrix, weighted Hamming with any other).
//! Because `Δ` decomposes over positions, loss-augmented inference is Viterbi with `C[y_t][·]` added to
//! the unary scores. Weight layout: `W` feature-major (`w[j·L + l]`), then `A` (`from·L + to`), then
//! `start` and `end` when enabled. Ties go to the lowest label (in the forward pass and at the end).
//!
//! Observation-dependent transitions (CRF++'s `B` templates with macros) are edge features: with
//! [`ChainSpace::with_edge_features`]`(E)`, a position's feature indices `d..d+E` score the transition into
//! it, `A_t[k, l] = A[k, l] + Σ_e x_{t,d+e} V[e, k, l]` (ignored at the first position, which has no
//! transition); `V` (`e·L² + from·L + to`) follows the rest of the weights.
//!
//! Second-order transitions ([`ChainSpace::with_second_order`]) add a score for every tag triple,
//! `Σ_{t≥2} B[y_{t−2}, y_{t−1}, y_t]` (`B` at `from2·L² + from·L + to`, after every other weight), decoded
//! by Viterbi over pairs of tags in `O(T·L³)`.
//! The dynamic-programming tables live in a per-thread scratch buffer, reused across calls.

use crate::cost::CostMatrix;
use crate::error::{StructError, check_call, check_features};
use crate::oracle::{Enumerable, OutputSpace, Violation};
use crate::sequence::{
    Sequence, add_unary, check_labels, product, unary_score, visit_unary, visit_unary_difference,
};
use maxmargin_core::vector::SparseVec;
use std::cell::RefCell;

mod second_order;

/// A linear-chain space over `L` labels and `d` features.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainSpace {
    n_features: usize,
    cost: CostMatrix,
    start_end: bool,
    n_edge: usize,
    second_order: bool,
}

#[derive(Default)]
struct Scratch {
    unary: Vec<f64>,
    delta: Vec<f64>,
    next: Vec<f64>,
    back: Vec<u32>,
    pair: Vec<f64>,
    best: Vec<f64>,
    arg: Vec<u32>,
}

/// Scratch entries a thread keeps between calls (about 32 MB); larger tables are freed after their call.
const SCRATCH_KEPT: usize = 1 << 22;

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

impl ChainSpace {
    /// A chain with the Hamming loss and start/end scores.
    ///
    /// # Errors
    /// [`StructError::Empty`].
    pub fn new(n_features: usize, n_labels: usize) -> Result<Self, StructError> {
        Self::with_costs(n_features, CostMatrix::zero_one(n_labels)?, true)
    }

    /// A chain with a per-position cost matrix, with or without start/end scores.
    ///
    /// # Errors
    /// [`StructError::Empty`] for no features.
    pub fn with_costs(
        n_features: usize,
        cost: CostMatrix,
        start_end: bool,
    ) -> Result<Self, StructError> {
        crate::error::at_least_one(n_features, "number of features")?;
        Ok(Self {
            n_features,
            cost,
            start_end,
            n_edge: 0,
            second_order: false,
        })
    }

    /// The same chain with `n_edge` edge features: feature indices `d..d + n_edge` of a position (`d` the
    /// number of features) score the transition into it, one `L × L` block of weights each.
    ///
    /// # Examples
    /// ```
    /// use maxmargin_core::vector::SparseVec;
    /// use maxmargin_struct::{ChainSpace, OutputSpace};
    /// // Two unary features and one edge feature (index 2) over two labels.
    /// let space = ChainSpace::new(2, 2)?.with_edge_features(1);
    /// assert_eq!(space.dim(), 2 * 2 + 2 * 2 + 2 * 2 + 2 * 2);
    /// let x = vec![
    ///     SparseVec::new(vec![0], vec![1.0])?,
    ///     SparseVec::new(vec![1, 2], vec![1.0, 1.0])?,
    /// ];
    /// // Unary weights favour label 0 at both positions, but the edge feature of position 1 rewards 0 → 1.
    /// let mut w = vec![0.0; space.dim()];
    /// w[0] = 1.0; // feature 0, label 0
    /// w[2] = 0.5; // feature 1, label 0
    /// w[space.dim() - 4 + 1] = 2.0; // edge feature 0, from 0 to 1
    /// assert_eq!(space.decode(&w, &x)?, vec![0, 1]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_edge_features(mut self, n_edge: usize) -> Self {
        self.n_edge = n_edge;
        self
    }

    /// The same chain with second-order transitions: a weight for every triple of tags
    /// `(y_{t−2}, y_{t−1}, y_t)`, `L³` of them after every other weight; decoding and loss-augmented inference
    /// are Viterbi over pairs of tags, `O(T·L³)`.
    ///
    /// # Examples
    /// ```
    /// use maxmargin_core::vector::SparseVec;
    /// use maxmargin_struct::{ChainSpace, OutputSpace};
    /// // One constant feature, two labels: the unary weights prefer label 0 everywhere...
    /// let space = ChainSpace::new(1, 2)?.with_second_order();
    /// assert_eq!(space.dim(), 2 + 4 + 4 + 8);
    /// let x = vec![SparseVec::new(vec![0], vec![1.0])?; 3];
    /// let mut w = vec![0.0; space.dim()];
    /// w[0] = 1.0;
    /// assert_eq!(space.decode(&w, &x)?, vec![0, 0, 0]);
    /// // ...but the triple (0, 0, 1) is rewarded, which no first-order chain can say.
    /// w[space.dim() - 8 + 1] = 2.0;
    /// assert_eq!(space.decode(&w, &x)?, vec![0, 0, 1]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_second_order(mut self) -> Self {
        self.second_order = true;
        self
    }

    /// Whether the chain scores triples of tags.
    pub fn is_second_order(&self) -> bool {
        self.second_order
    }

    /// Number of edge features.
    pub fn n_edge_features(&self) -> usize {
        self.n_edge
    }

    /// Number of labels `L`.
    pub fn n_labels(&self) -> usize {
        self.cost.n_labels()
    }

    /// Number of features `d`.
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    fn unary_len(&self) -> usize {
        self.n_features * self.n_labels()
    }

    fn trans(&self) -> usize {
        self.unary_len()
    }

    fn start(&self) -> Option<usize> {
        self.start_end
            .then(|| self.unary_len() + self.n_labels() * self.n_labels())
    }

    /// Where the edge-feature blocks begin.
    fn edge(&self) -> usize {
        let l = self.n_labels();
        self.unary_len() + l * l + if self.start_end { 2 * l } else { 0 }
    }

    /// Where the second-order block begins (when there is one).
    fn second(&self) -> usize {
        let l = self.n_labels();
        self.edge() + self.n_edge * l * l
    }

    /// Calls `visit(k, v)` for the weight index `k` of every edge feature `(e, v)` of the transition
    /// `from → to` into position vector `xt`.
    fn visit_edge(&self, xt: &SparseVec, from: u32, to: u32, visit: &mut dyn FnMut(usize, f64)) {
        if self.n_edge == 0 {
            return;
        }
        let l = self.n_labels();
        let pair = from as usize * l + to as usize;
        for (j, v) in xt.as_row().iter() {
            if j >= self.n_features {
                visit(self.edge() + (j - self.n_features) * l * l + pair, v);
            }
        }
    }

    /// The best labelling whose label at every position `t` is one `allowed(t, label)` accepts (ties to
    /// the lowest label): constrained Viterbi, as a latent completion needs.
    ///
    /// # Errors
    /// Bad weights or input, or a position where no label is allowed.
    pub fn decode_within(
        &self,
        w: &[f64],
        x: &Sequence,
        allowed: &dyn Fn(usize, usize) -> bool,
    ) -> Result<Vec<u32>, StructError> {
        check_call(self, w, x)?;
        if (0..x.len()).any(|t| !(0..self.n_labels()).any(|l| allowed(t, l))) {
            return Err(StructError::Unsupported {
                what: "constrained decoding",
                why: "a position allows no label",
            });
        }
        let (out, total) = self.viterbi_within(w, x, None, Some(allowed))?;
        finite_decoding(x.len(), total)?;
        // Non-finite scores (NaN weights, overflow) can leave a forbidden label in place.
        match out
            .iter()
            .enumerate()
            .find(|(t, l)| !allowed(*t, **l as usize))
        {
            Some((position, &label)) => Err(StructError::LabelNotAllowed { position, label }),
            None => Ok(out),
        }
    }

    /// Viterbi: the best labelling under unary + `cost_row(t)` scores, and its total value.
    fn viterbi(
        &self,
        w: &[f64],
        x: &Sequence,
        truth: Option<&[u32]>,
    ) -> Result<(Vec<u32>, f64), StructError> {
        self.viterbi_within(w, x, truth, None)
    }

    /// Viterbi over the labels `allowed` accepts (all, with `None`).
    fn viterbi_within(
        &self,
        w: &[f64],
        x: &Sequence,
        truth: Option<&[u32]>,
        allowed: Option<&dyn Fn(usize, usize) -> bool>,
    ) -> Result<(Vec<u32>, f64), StructError> {
        SCRATCH.with(|cell| {
            let mut guard = cell.borrow_mut();
            let s = &mut *guard;
            self.fill_unary(w, x, truth, allowed, s);
            // Viterbi's comparisons pass over NaN, so a position whose scores overflow would quietly lose its
            // NaN labels and decode among the rest: it is refused instead.
            if let Some(at) = s
                .unary
                .iter()
                .position(|v| v.is_nan() || *v == f64::INFINITY)
            {
                return Err(StructError::NonFiniteScore {
                    position: at / self.n_labels().max(1),
                });
            }
            let out = if self.second_order {
                self.viterbi2(w, x, s)
            } else {
                self.viterbi1(w, x, s)
            };
            // A long sequence's tables (`T·L²` back-pointers with second order) are not kept for the
            // thread's lifetime.
            if s.back.capacity() + s.unary.capacity() > SCRATCH_KEPT {
                *s = Scratch::default();
            }
            Ok(out)
        })
    }

    /// The unary scores of every position into `s.unary` (`t·L + l`), with `C[y_t][·]` added for a truth
    /// and `−∞` where `allowed` refuses a label.
    fn fill_unary(
        &self,
        w: &[f64],
        x: &Sequence,
        truth: Option<&[u32]>,
        allowed: Option<&dyn Fn(usize, usize) -> bool>,
        s: &mut Scratch,
    ) {
        let n_labels = self.n_labels();
        s.unary.clear();
        s.unary.resize(x.len() * n_labels, 0.0);
        for (t, xt) in x.iter().enumerate() {
            let u = &mut s.unary[t * n_labels..(t + 1) * n_labels];
            add_unary(&w[..self.unary_len()], xt, n_labels, u);
            if let Some(y) = truth {
                self.cost.add_row(y[t] as usize, u);
            }
            if let Some(allowed) = allowed {
                for (l, ul) in u.iter_mut().enumerate() {
                    if !allowed(t, l) {
                        *ul = f64::NEG_INFINITY;
                    }
                }
            }
        }
    }

    /// The first-order transition scores into position `xt` (`from·L + to`): `A` itself, or in `pair`
    /// `A` plus the blocks of `xt`'s edge features when it has any (the returned flag says which).
    fn fill_transitions(&self, w: &[f64], xt: &SparseVec, pair: &mut Vec<f64>) -> bool {
        let n_labels = self.n_labels();
        let mut edges = xt
            .as_row()
            .iter()
            .filter(|(j, _)| *j >= self.n_features)
            .peekable();
        if self.n_edge == 0 || edges.peek().is_none() {
            return false;
        }
        let trans = &w[self.trans()..self.trans() + n_labels * n_labels];
        pair.clear();
        pair.extend_from_slice(trans);
        let edge = self.edge();
        for (j, v) in edges {
            let at = edge + (j - self.n_features) * n_labels * n_labels;
            for (p, wv) in pair.iter_mut().zip(&w[at..at + n_labels * n_labels]) {
                *p += v * wv;
            }
        }
        true
    }

    /// First-order Viterbi over the unary scores in `s.unary`.
    fn viterbi1(&self, w: &[f64], x: &Sequence, s: &mut Scratch) -> (Vec<u32>, f64) {
        let n_labels = self.n_labels();
        let t_len = x.len();
        let trans = &w[self.trans()..self.trans() + n_labels * n_labels];
        s.back.clear();
        s.back.resize(t_len * n_labels, 0);
        s.delta.clear();
        s.delta.extend_from_slice(&s.unary[..n_labels]);
        s.next.clear();
        s.next.resize(n_labels, 0.0);
        self.add_start(w, &mut s.delta);
        for (t, xt) in x.iter().enumerate().skip(1) {
            let trans: &[f64] = if self.fill_transitions(w, xt, &mut s.pair) {
                &s.pair
            } else {
                trans
            };
            for l in 0..n_labels {
                let mut best = (0u32, f64::NEG_INFINITY);
                for (k, dk) in s.delta.iter().enumerate() {
                    let v = dk + trans[k * n_labels + l];
                    if v > best.1 {
                        best = (k as u32, v);
                    }
                }
                s.next[l] = best.1 + s.unary[t * n_labels + l];
                s.back[t * n_labels + l] = best.0;
            }
            std::mem::swap(&mut s.delta, &mut s.next);
        }
        if let Some(start) = self.start() {
            let end = &w[start + n_labels..start + 2 * n_labels];
            for (d, e) in s.delta.iter_mut().zip(end) {
                *d += e;
            }
        }
        let last = argmax(&s.delta);
        let mut out = vec![0u32; t_len];
        out[t_len - 1] = last.0;
        for t in (1..t_len).rev() {
            out[t - 1] = s.back[t * n_labels + out[t] as usize];
        }
        (out, last.1)
    }

    /// Adds the start scores (when the chain has them) to the first position's `delta`.
    fn add_start(&self, w: &[f64], delta: &mut [f64]) {
        if let Some(start) = self.start() {
            for (d, st) in delta.iter_mut().zip(&w[start..start + self.n_labels()]) {
                *d += st;
            }
        }
    }
}

/// Refuses a decoding whose best total is not finite (overflow along the way, or every label of a position
/// at −∞).
fn finite_decoding(len: usize, total: f64) -> Result<(), StructError> {
    if total.is_finite() {
        Ok(())
    } else {
        Err(StructError::NonFiniteScore {
            position: len.saturating_sub(1),
        })
    }
}

/// The first index of the largest value (`NEG_INFINITY` and index 0 for none above it).
fn argmax(values: &[f64]) -> (u32, f64) {
    let mut best = (0u32, f64::NEG_INFINITY);
    for (l, &v) in values.iter().enumerate() {
        if v > best.1 {
            best = (l as u32, v);
        }
    }
    best
}

impl OutputSpace for ChainSpace {
    type Input = Sequence;
    type Output = Vec<u32>;

    fn dim(&self) -> usize {
        let l = self.n_labels();
        self.second() + if self.second_order { l * l * l } else { 0 }
    }

    fn check_input(&self, x: &Sequence) -> Result<(), StructError> {
        if x.is_empty() {
            return Err(StructError::EmptySequence);
        }
        for (t, xt) in x.iter().enumerate() {
            check_features(xt, t, self.n_features + self.n_edge)?;
        }
        Ok(())
    }

    fn check_output(&self, x: &Sequence, y: &Vec<u32>) -> Result<(), StructError> {
        check_labels(y, x.len(), self.n_labels())
    }

    fn for_each_feature(&self, x: &Sequence, y: &Vec<u32>, visit: &mut dyn FnMut(usize, f64)) {
        let n_labels = self.n_labels();
        visit_unary(x, y, self.n_features, n_labels, visit);
        for (t, pair) in y.windows(2).enumerate() {
            visit(
                self.trans() + pair[0] as usize * n_labels + pair[1] as usize,
                1.0,
            );
            self.visit_edge(&x[t + 1], pair[0], pair[1], visit);
        }
        if self.second_order {
            for triple in y.windows(3) {
                visit(self.triple(triple), 1.0);
            }
        }
        if let (Some(start), Some(first), Some(last)) = (self.start(), y.first(), y.last()) {
            visit(start + *first as usize, 1.0);
            visit(start + n_labels + *last as usize, 1.0);
        }
    }

    fn has_feature_difference(&self) -> bool {
        true
    }

    /// Only the tokens, pairs and triples of tags on which `y` and `ŷ` differ (the rest cancel): near the
    /// optimum most of a sequence is tagged right, and its direction is a few tokens' features.
    fn for_each_feature_difference(
        &self,
        x: &Sequence,
        y: &Vec<u32>,
        y_hat: &Vec<u32>,
        visit: &mut dyn FnMut(usize, f64),
    ) {
        if y.len() != y_hat.len() || y.len() != x.len() {
            return crate::oracle::whole_difference(self, x, y, y_hat, visit);
        }
        let l = self.n_labels();
        visit_unary_difference(x, (y, y_hat), self.n_features, l, visit);
        for (t, (p, q)) in y.windows(2).zip(y_hat.windows(2)).enumerate() {
            if p != q {
                visit(self.trans() + p[0] as usize * l + p[1] as usize, 1.0);
                visit(self.trans() + q[0] as usize * l + q[1] as usize, -1.0);
                self.visit_edge(&x[t + 1], p[0], p[1], visit);
                self.visit_edge(&x[t + 1], q[0], q[1], &mut |k, v| visit(k, -v));
            }
        }
        if self.second_order {
            for (p, q) in y.windows(3).zip(y_hat.windows(3)) {
                if p != q {
                    visit(self.triple(p), 1.0);
                    visit(self.triple(q), -1.0);
                }
            }
        }
        if let (Some(start), Some(first), Some(last)) = (self.start(), y.first(), y.last()) {
            let (first_hat, last_hat) = (y_hat[0], y_hat[y_hat.len() - 1]);
            if *first != first_hat {
                visit(start + *first as usize, 1.0);
                visit(start + first_hat as usize, -1.0);
            }
            if *last != last_hat {
                visit(start + l + *last as usize, 1.0);
                visit(start + l + last_hat as usize, -1.0);
            }
        }
    }

    fn score(&self, w: &[f64], x: &Sequence, y: &Vec<u32>) -> f64 {
        let n_labels = self.n_labels();
        let mut s = unary_score(w, x, y, self.n_features, n_labels);
        for (t, pair) in y.windows(2).enumerate() {
            s += w[self.trans() + pair[0] as usize * n_labels + pair[1] as usize];
            self.visit_edge(&x[t + 1], pair[0], pair[1], &mut |k, v| s += v * w[k]);
        }
        if self.second_order {
            s += y.windows(3).map(|t| w[self.triple(t)]).sum::<f64>();
        }
        if let (Some(start), Some(first), Some(last)) = (self.start(), y.first(), y.last()) {
            s += w[start + *first as usize] + w[start + n_labels + *last as usize];
        }
        s
    }

    fn loss(&self, y: &Vec<u32>, y_hat: &Vec<u32>) -> f64 {
        self.cost.sequence_loss(y, y_hat)
    }

    /// Viterbi decoding; the lowest label on ties.
    fn decode(&self, w: &[f64], x: &Sequence) -> Result<Vec<u32>, StructError> {
        check_call(self, w, x)?;
        if x.is_empty() {
            return Err(StructError::EmptySequence);
        }
        let (out, total) = self.viterbi(w, x, None)?;
        finite_decoding(x.len(), total)?;
        Ok(out)
    }

    /// Loss-augmented Viterbi (`C[y_t][·]` added to the unary scores); the lowest label on ties.
    fn loss_augmented(
        &self,
        w: &[f64],
        x: &Sequence,
        y: &Vec<u32>,
    ) -> Result<Violation<Vec<u32>>, StructError> {
        check_call(self, w, x)?;
        if x.is_empty() {
            return Err(StructError::EmptySequence);
        }
        self.check_output(x, y)?;
        let (out, value) = self.viterbi(w, x, Some(y))?;
        let loss = self.loss(y, &out);
        Ok(Violation::of_value(out, loss, value, self.score(w, x, y)))
    }
}

impl Enumerable for ChainSpace {
    fn enumerate(&self, x: &Sequence) -> Result<Vec<Vec<u32>>, StructError> {
        let all: Vec<u32> = (0..self.n_labels() as u32).collect();
        product(&vec![all.as_slice(); x.len()])
    }
}
