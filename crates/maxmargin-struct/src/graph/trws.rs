//! TRW-S: sequential tree-reweighted max-product (Kolmogorov, "Convergent tree-reweighted message passing
//! for energy minimization", IEEE TPAMI 2006), written from the paper, in the max-sum form.
//!
//! The nodes are taken in index order. A node `i` with `a` neighbours before it and `b` after it lies on
//! `n_i = max(a, b)` monotonic chains, each holding `γ_i = 1/n_i` of its reparametrized unary scores
//! `θ̂_i = θ_i + Σ_j M_{j→i}`; every edge lies on one chain, holding `P_{ij}(a, b) − M_{j→i}(a) − M_{i→j}(b)`.
//! The chains' scores add up to the graph's for every labelling, so the sum of the chains' maxima
//! (each chain solved by dynamic programming) bounds the MAP value from above at any messages. An
//! iteration is a forward pass over the nodes, sending `M_{i→j}(b) = max_a [γ_i θ̂_i(a) − M_{j→i}(a) +
//! P_{ij}(a, b)]` to each later neighbour, then the same backward; this never raises the bound. A labelling
//! is decoded in index order, each node taking its best label given its earlier neighbours' labels and its
//! later neighbours' messages, then improved by local search. When the labelling's value meets the bound it
//! is a certified optimum (always on chains and forests once the messages have settled, and wherever the
//! LP relaxation is tight and the messages reach it).

use super::infer::{Adjacency, Potentials, Tolerance, argmax, improve_locally, oriented, send};

/// How little the bound may fall between checks, relative to its magnitude, for TRW-S to stop.
const SETTLED: f64 = 1e-6;

/// TRW-S's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TrwsSettings {
    /// Most iterations (a forward and a backward pass each).
    pub max_iter: usize,
    /// How far below its bound a labelling may be and count as certified.
    pub certify: Tolerance,
}

/// What TRW-S found: the best labelling decoded, its value, the smallest bound, whether they meet.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TrwsResult {
    pub labels: Vec<u32>,
    pub value: f64,
    pub bound: f64,
    pub certified: bool,
    /// Iterations run.
    pub iterations: usize,
    /// The messages at the end (`(2e + d)·L`: `d = 0` into edge `e`'s second end, `d = 1` into its first).
    pub messages: Vec<f64>,
}

/// Iterations between checks (a labelling decoded and the bound evaluated, about the cost of one
/// iteration together).
const CHECK_EVERY: usize = 4;

struct Trws<'a> {
    p: &'a Potentials,
    edges: &'a [[u32; 2]],
    adj: Adjacency,
    /// `1/n_i` (0 for a node without neighbours).
    gamma: Vec<f64>,
    /// `(2e + d)·L`: `d = 0` carries edge `e`'s first end to its second, `d = 1` the reverse.
    msgs: Vec<f64>,
    /// `θ̂_i`, each node's unary scores plus the messages into it (`n × L`), kept up to date as messages
    /// change (a pass reads every node's, and summing its messages afresh was a quarter of the time on
    /// the graph bench's grid), and summed afresh at each check so that rounding does not pile up.
    incoming: Vec<f64>,
    /// Scratch of `L` values each.
    belief: Vec<f64>,
    held: Vec<f64>,
    sent: Vec<f64>,
}

/// The slot of the message into a node along edge `e`, the node being the edge's first end or not.
#[inline]
fn into(e: u32, first: bool) -> usize {
    2 * e as usize + usize::from(first)
}

impl<'a> Trws<'a> {
    fn new(p: &'a Potentials, edges: &'a [[u32; 2]]) -> Self {
        let (n, l) = (p.n_nodes(), p.n_labels);
        let adj = Adjacency::new(n, edges);
        let gamma = (0..n)
            .map(|i| {
                let before = adj
                    .of(i)
                    .iter()
                    .filter(|&&(j, ..)| (j as usize) < i)
                    .count();
                let after = adj.of(i).len() - before;
                match before.max(after) {
                    0 => 0.0,
                    k => 1.0 / k as f64,
                }
            })
            .collect();
        Self {
            p,
            edges,
            adj,
            gamma,
            msgs: vec![0.0; 2 * edges.len() * l],
            incoming: p.unary.clone(),
            belief: vec![0.0; l],
            held: vec![0.0; l],
            sent: vec![0.0; l],
        }
    }

    /// Sums every node's `θ̂_i` afresh from its unary scores and messages.
    fn resum(&mut self) {
        let l = self.p.n_labels;
        for i in 0..self.p.n_nodes() {
            let belief = &mut self.incoming[i * l..][..l];
            belief.copy_from_slice(self.p.node(i));
            for &(_, e, first) in self.adj.of(i) {
                let m = &self.msgs[into(e, first) * l..][..l];
                for (b, &v) in belief.iter_mut().zip(m) {
                    *b += v;
                }
            }
        }
    }

    /// `θ̂_i` into `self.belief`.
    fn reparametrized(&mut self, i: usize) {
        let l = self.p.n_labels;
        self.belief.copy_from_slice(&self.incoming[i * l..][..l]);
    }

    /// One pass over the nodes, forward (each node sends to its later neighbours) or backward. The
    /// sender's `θ̂_i` is read in place and each message is computed into scratch before it replaces the
    /// old one (copying `L` values per edge went through `memmove`, 7% of the time on #27's grid).
    fn pass(&mut self, forward: bool) {
        let (n, l) = (self.p.n_nodes(), self.p.n_labels);
        for step in 0..n {
            let i = if forward { step } else { n - 1 - step };
            let g = self.gamma[i];
            for k in 0..self.adj.of(i).len() {
                let (j, e, first) = self.adj.of(i)[k];
                if ((j as usize) > i) != forward {
                    continue;
                }
                let back = into(e, first) * l;
                let mine = &self.incoming[i * l..][..l];
                for (h, (&b, &m)) in self
                    .held
                    .iter_mut()
                    .zip(mine.iter().zip(&self.msgs[back..back + l]))
                {
                    *h = g * b - m;
                }
                send(&self.held, self.p.table(e as usize), first, &mut self.sent);
                // Plain comparisons (the values are finite): f64::max's NaN handling is slower.
                let mut top = f64::NEG_INFINITY;
                for &m in self.sent.iter() {
                    if m > top {
                        top = m;
                    }
                }
                let slot = into(e, !first) * l;
                let out = &mut self.msgs[slot..slot + l];
                let target = &mut self.incoming[j as usize * l..][..l];
                for ((m, t), &fresh) in out.iter_mut().zip(target).zip(&self.sent) {
                    let fresh = fresh - top;
                    *t += fresh - *m;
                    *m = fresh;
                }
            }
        }
    }

    /// The sum of the chains' maxima at the current messages: each node's incoming chains (from earlier
    /// neighbours, in adjacency order) continue along its outgoing edges in the same order; chains start
    /// where a node has more outgoing edges than incoming ones and end where it has fewer.
    fn bound(&mut self) -> f64 {
        let (n, l) = (self.p.n_nodes(), self.p.n_labels);
        // Per edge, the value of the chain arriving at its later end, by that end's label.
        let mut arrive = vec![0.0; self.edges.len() * l];
        let mut chain = vec![0.0; l];
        let (mut ins, mut outs) = (Vec::new(), Vec::new());
        let mut total = 0.0;
        for i in 0..n {
            self.reparametrized(i);
            let g = self.gamma[i];
            ins.clear();
            outs.clear();
            for &(j, e, first) in self.adj.of(i) {
                if (j as usize) < i {
                    ins.push(e);
                } else {
                    outs.push((e, first));
                }
            }
            if ins.is_empty() && outs.is_empty() {
                total += argmax(&self.belief).1;
                continue;
            }
            for k in 0..ins.len().max(outs.len()) {
                for (c, &b) in chain.iter_mut().zip(&self.belief) {
                    *c = g * b;
                }
                if let Some(&e) = ins.get(k) {
                    for (c, &a) in chain.iter_mut().zip(&arrive[e as usize * l..][..l]) {
                        *c += a;
                    }
                }
                let Some(&(e, first)) = outs.get(k) else {
                    total += argmax(&chain).1;
                    continue;
                };
                let (back, fore) = (into(e, first) * l, into(e, !first) * l);
                for (h, (&c, &m)) in self
                    .held
                    .iter_mut()
                    .zip(chain.iter().zip(&self.msgs[back..back + l]))
                {
                    *h = c - m;
                }
                let out = &mut arrive[e as usize * l..][..l];
                send(&self.held, self.p.table(e as usize), first, out);
                for (a, &m) in out.iter_mut().zip(&self.msgs[fore..fore + l]) {
                    *a -= m;
                }
            }
        }
        total
    }

    /// A labelling in index order (`forward`, as the paper decodes): each node's unary scores, its
    /// earlier neighbours' pairwise scores at their labels and the messages its later neighbours sent in
    /// the last (backward) pass; or the same in reverse order. Then local search.
    fn decode(&mut self, forward: bool) -> Vec<u32> {
        let (n, l) = (self.p.n_nodes(), self.p.n_labels);
        let mut y = vec![0u32; n];
        for step in 0..n {
            let i = if forward { step } else { n - 1 - step };
            self.belief.copy_from_slice(self.p.node(i));
            for &(j, e, first) in self.adj.of(i) {
                if ((j as usize) < i) == forward {
                    let table = self.p.table(e as usize);
                    for (a, b) in self.belief.iter_mut().enumerate() {
                        *b += oriented(table, l, first, a, y[j as usize] as usize);
                    }
                } else {
                    let m = &self.msgs[into(e, first) * l..][..l];
                    for (b, &v) in self.belief.iter_mut().zip(m) {
                        *b += v;
                    }
                }
            }
            y[i] = argmax(&self.belief).0 as u32;
        }
        improve_locally(self.p, &self.adj, &mut y);
        y
    }
}

/// TRW-S on the potentials: the best labelling decoded at any check, its value, the smallest bound seen
/// and whether they meet. Stops when they meet, when the bound has settled (fallen by less than 1e-6 of its
/// magnitude since the last check), or after `max_iter` iterations.
///
/// Each check decodes in index order; a run about to stop uncertified also decodes in reverse order and
/// keeps the better labelling. (Both at every check found the optimum of 949 of the 1,000 small graphs
/// below, forward only 877, forward with the reverse at an uncertified end 912, alternating 923; on #27's
/// grids, where most runs certify, the second decode at every check was a fifth of the time.)
pub(crate) fn trws(p: &Potentials, edges: &[[u32; 2]], s: TrwsSettings) -> TrwsResult {
    let mut t = Trws::new(p, edges);
    let mut best: Option<(Vec<u32>, f64)> = None;
    let keep = |y: Vec<u32>, best: &mut Option<(Vec<u32>, f64)>| {
        let v = p.value(edges, &y);
        if best.as_ref().is_none_or(|b| v > b.1) {
            *best = Some((y, v));
        }
        best.as_ref().map_or(f64::NEG_INFINITY, |b| b.1)
    };
    let mut bound = f64::INFINITY;
    let mut iterations = 0;
    let mut certified = false;
    while iterations < s.max_iter.max(1) {
        t.pass(true);
        t.pass(false);
        iterations += 1;
        let last = iterations >= s.max_iter;
        if iterations % CHECK_EVERY != 0 && !last && iterations > 1 {
            continue;
        }
        t.resum();
        let mut value = keep(t.decode(true), &mut best);
        let fresh = t.bound();
        // Settled: the bound fell by less than 1e-6 of its magnitude since the last check (whatever the
        // certificate's tolerance: stopping on a looser one left worse labellings and bounds, 0.7 lower on
        // the graph bench's grid).
        let settled = bound - fresh <= SETTLED * fresh.abs().max(1.0);
        bound = bound.min(fresh);
        certified = bound - value <= s.certify.slack(bound);
        if !certified && (settled || last) {
            value = keep(t.decode(false), &mut best);
            certified = bound - value <= s.certify.slack(bound);
        }
        if certified || settled {
            break;
        }
    }
    let (labels, value) = best.unwrap_or_default();
    TrwsResult {
        labels,
        value,
        bound,
        certified,
        iterations,
        messages: t.msgs,
    }
}

/// How many TRW-S iterations `ad3` starts with: an answer they certify is returned without AD3.
const AD3_PRESOLVE: usize = 100;

/// AD3 as the `ad3` method runs it: TRW-S first (`AD3_PRESOLVE` iterations), whose labelling is returned
/// when its bound meets it (most calls on ordinary grids: certified at a fraction of AD3's cost, to the same
/// tolerance), else AD3 from its messages with at most `branches` relaxations.
pub(super) fn ad3_after_trws(
    p: &Potentials,
    edges: &[[u32; 2]],
    s: super::ad3::Ad3Settings,
    branches: usize,
) -> super::ad3::Ad3Result {
    let presolve = TrwsSettings {
        max_iter: AD3_PRESOLVE,
        certify: s.certify,
    };
    let quick = trws(p, edges, presolve);
    if quick.certified {
        return super::ad3::Ad3Result {
            labels: quick.labels,
            value: quick.value,
            bound: quick.bound,
            certified: true,
            marginals: Vec::new(),
            fractional: None,
        };
    }
    super::ad3::ad3_branch_from(p, edges, s, branches, Some(&quick))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::infer::{brute_force, exact_tree};
    use crate::graph::testing::{Answer, case, cases, check_answer, count_optima, forest_of};
    use proptest::prelude::*;

    const SETTINGS: TrwsSettings = TrwsSettings {
        max_iter: 200,
        certify: Tolerance::of_value(1e-6),
    };

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(if cfg!(debug_assertions) { 60 } else { 400 }))]

        /// The bound is never below the optimum, the labelling never above it, and a certified answer is
        /// an optimum.
        #[test]
        fn the_bound_holds_and_certified_answers_are_optimal((p, edges) in case()) {
            let (_, best) = brute_force(&p, &edges).unwrap();
            let r = trws(&p, &edges, SETTINGS);
            let answer = Answer { labels: &r.labels, value: r.value, bound: r.bound, certified: r.certified };
            check_answer(&p, &edges, best, &answer)?;
        }
    }

    /// How often TRW-S finds and certifies the optimum of the random small graphs AD3's target is measured
    /// on (`cargo test --release -p maxmargin-struct --lib trws -- --nocapture` prints the counts over
    /// 1,000 graphs: 912 found, 592 certified, where loopy max-product finds 823 and AD3's first relaxation,
    /// without branch and bound, certifies 593). These graphs mix attractive and repulsive edges, where the
    /// relaxation is often not tight and TRW-S has no branch and bound: it is the fast option, not the
    /// exact one.
    #[test]
    fn trws_finds_the_optimum_on_most_small_graphs() {
        let (found, certified, total) = count_optima("trws", |p, edges| {
            let r = trws(p, edges, SETTINGS);
            (r.labels, r.value, r.bound, r.certified)
        });
        assert!(
            found * 100 >= total * 90 && certified * 2 >= total,
            "optimum on {found} of {total} ({certified} certified)"
        );
    }

    /// On forests (whatever the node order) the messages settle on the optimum and certify it.
    #[test]
    fn trws_is_certified_on_forests() {
        for (p, edges) in cases(if cfg!(debug_assertions) { 40 } else { 200 }) {
            let (q, forest) = forest_of(&p, &edges);
            let (_, best) = exact_tree(&q, &forest).unwrap();
            let r = trws(&q, &forest, SETTINGS);
            assert!(
                r.certified,
                "bound {} value {} best {best}",
                r.bound, r.value
            );
            assert!((r.value - best).abs() < 1e-6);
        }
    }

    /// Every edge given from its later end to its earlier one (tables transposed) is the same problem: the
    /// bound, the value and the certificate come out the same (the chains then read each table from its
    /// second end, the messages go the other way round in their slots).
    #[test]
    fn the_orientation_of_the_edges_changes_nothing() {
        for (p, edges) in cases(if cfg!(debug_assertions) { 60 } else { 300 }) {
            let l = p.n_labels;
            let flipped: Vec<[u32; 2]> = edges.iter().map(|&[i, j]| [j, i]).collect();
            let mut pair = Vec::with_capacity(p.pair.len());
            for e in 0..edges.len() {
                let t = p.table(e);
                for a in 0..l {
                    pair.extend((0..l).map(|b| t[b * l + a]));
                }
            }
            let q = Potentials { pair, ..p.clone() };
            let (r, f) = (trws(&p, &edges, SETTINGS), trws(&q, &flipped, SETTINGS));
            let (_, best) = brute_force(&q, &flipped).unwrap();
            let answer = Answer {
                labels: &f.labels,
                value: f.value,
                bound: f.bound,
                certified: f.certified,
            };
            check_answer(&q, &flipped, best, &answer).unwrap();
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(1.0);
            assert!(
                close(r.bound, f.bound) && close(r.value, f.value),
                "{r:?} {f:?}"
            );
            assert_eq!(r.certified, f.certified);
        }
    }

    /// A chain numbered along its length is one monotonic chain: one iteration is the forward and backward
    /// dynamic program, so the first check certifies Viterbi's score.
    #[test]
    fn a_chain_in_order_is_solved_in_one_iteration() {
        let n = 30usize;
        let l = 4usize;
        let unary: Vec<f64> = (0..n * l)
            .map(|k| ((k * 37 % 11) as f64) * 0.1 - 0.5)
            .collect();
        let pair: Vec<f64> = (0..l * l)
            .map(|k| ((k * 5 % 7) as f64) * 0.2 - 0.6)
            .collect();
        let edges: Vec<[u32; 2]> = (1..n as u32).map(|j| [j - 1, j]).collect();
        let p = Potentials {
            n_labels: l,
            unary,
            pair,
            shared: true,
        };
        let (_, best) = exact_tree(&p, &edges).unwrap();
        let r = trws(&p, &edges, SETTINGS);
        assert_eq!(r.iterations, 1);
        assert!(r.certified && (r.value - best).abs() < 1e-9, "{r:?} {best}");
    }

    /// An odd cycle of repulsive edges with two labels: the relaxation is not tight, so the bound stays
    /// above the optimum and the answer is not certified, however many iterations.
    #[test]
    fn a_frustrated_cycle_is_not_certified() {
        let n = 7u32;
        let edges: Vec<[u32; 2]> = (0..n).map(|i| [i, (i + 1) % n]).collect();
        let p = Potentials {
            n_labels: 2,
            unary: (0..n as usize * 2)
                .map(|k| 0.01 * ((k * 7 % 5) as f64))
                .collect(),
            pair: vec![0.0, 1.0, 1.0, 0.0],
            shared: true,
        };
        let (_, best) = brute_force(&p, &edges).unwrap();
        let r = trws(&p, &edges, SETTINGS);
        assert!(!r.certified && r.bound > best + 0.5, "{r:?} {best}");
        assert!((r.value - best).abs() < 1e-9, "{r:?} {best}");
    }

    /// Isolated nodes and a graph without edges: each node its best label, certified at once.
    #[test]
    fn nodes_without_edges_take_their_best_labels() {
        let p = Potentials {
            n_labels: 3,
            unary: vec![0.1, 0.5, -1.0, 2.0, 0.0, 1.0],
            pair: vec![0.0; 9],
            shared: true,
        };
        let r = trws(&p, &[], SETTINGS);
        assert_eq!(r.labels, vec![1, 0]);
        assert!(r.certified && (r.value - 2.5).abs() < 1e-12 && (r.bound - 2.5).abs() < 1e-12);
    }
}
