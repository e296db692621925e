//! AD3: alternating directions dual decomposition on the LP relaxation of pairwise MAP (Martins,
//! Figueiredo, Aguiar, Smith & Xing, JMLR 2015), written from the paper.
//!
//! Every edge is a factor with its own copies `q_{f,i}` of its two nodes' marginals; ADMM drives the copies
//! to agree with global marginals `p_i`. A factor's step is the quadratic program
//! `max_{μ_f ∈ M_f} θ_f·μ_f + Σ_i u_i·q_{f,i} − (η/2) Σ_i ‖q_{f,i} − p_i‖²` over its local marginal
//! polytope, solved by an active set over the factor's configurations ([`qp`]). At any multipliers `λ`
//! (which sum to zero at each node) the dual
//! `Σ_f max_{a,b} [θ_f(a, b) + θ_i(a)/deg_i + λ_{f,i}(a) + θ_j(b)/deg_j + λ_{f,j}(b)]` bounds the MAP value
//! from above. Every tenth iteration two labellings are read, each improved by local search: the
//! marginals rounded node by node, and the labelling the multipliers give node by node (`decode.rs`);
//! they bound the optimum from below. When bound and labelling meet the labelling is a certified optimum.
//!
//! Where the relaxation is not tight, branch and bound fixes fractional nodes; each branch's relaxation
//! starts from its parent's state (multipliers, marginals, factors' active sets, η), stops as soon as its
//! bound falls to the best labelling found anywhere, and a relaxation whose bound stalls above its labelling
//! hands over to its branches rather than running out its iterations.

mod branch;
mod decode;
mod feasible;
mod qp;

pub(crate) use branch::{ad3_branch, ad3_branch_from};
pub(crate) use feasible::Fractional;

use super::infer::{Adjacency, Potentials, Tolerance, argmax, improve_locally};
use qp::FactorQp;

/// AD3's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Ad3Settings {
    pub max_iter: usize,
    /// How far below its bound a labelling may be and count as certified.
    pub certify: Tolerance,
    /// Whether a fractional point of the relaxation may be the answer ([`Ad3Result::fractional`]): the
    /// relaxation then stops once its best feasible point meets the bound.
    pub fractional: bool,
}

/// What AD3 found: the best labelling, its value, the smallest dual bound, whether they meet.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ad3Result {
    pub labels: Vec<u32>,
    pub value: f64,
    pub bound: f64,
    pub certified: bool,
    /// The node marginals of the relaxation (`n × L`).
    pub marginals: Vec<f64>,
    /// With [`Ad3Settings::fractional`], the best feasible point of the relaxation found (its value may be
    /// above `value`, the best labelling's; `certified` then says whether the better of the two meets the
    /// bound).
    pub fractional: Option<Fractional>,
}

/// A relaxation that may branch hands over when its bound moved less over the last `STALL_CHECKS` checks
/// (ten iterations each) than `STALL_SHARE` of its distance to its labelling: its branches, which start
/// from its state, then go on with a sharper relaxation (chosen on the 64 × 64 grid of the graph bench,
/// where five checks took 0.7× the time of ten to the same certified answer).
const STALL_CHECKS: usize = 5;
const STALL_SHARE: f64 = 0.05;

/// ADMM's state, handed from a relaxation to its branches.
#[derive(Debug, Clone)]
struct Admm {
    /// Per factor and end (`2e` for the first end, `2e + 1` for the second), `L` multipliers each.
    lambda: Vec<f64>,
    /// The global marginals `p` (`n × L`).
    marg: Vec<f64>,
    /// Each factor's active set and weights.
    warm: Vec<(Vec<usize>, Vec<f64>)>,
    eta: f64,
}

impl Admm {
    /// The cold start: multipliers at zero, marginals uniform over the allowed labels.
    fn new(problem: &Problem<'_>, allowed: &[bool]) -> Self {
        let (n, l, m) = (problem.p.n_nodes(), problem.p.n_labels, problem.edges.len());
        let mut state = Self {
            lambda: vec![0.0; 2 * m * l],
            marg: vec![0.0; n * l],
            warm: vec![(Vec::new(), Vec::new()); m],
            eta: 0.1,
        };
        state.restrict(problem, allowed);
        state
    }

    /// A start from message passing's messages (as [`crate::graph::trws`] leaves them): each factor's
    /// multipliers give it the node's reparametrized scores `θ̂_i/deg_i` less the message the factor's
    /// other end sent, so they sum to zero at each node and the first dual is an upper bound of the
    /// messages' reparametrization split over the edges (a looser split than TRW-S's chains unless every
    /// node has as many neighbours before it as after). Marginals uniform over the allowed labels, as in
    /// the cold start.
    fn from_messages(problem: &Problem<'_>, messages: &[f64], allowed: &[bool]) -> Self {
        let (n, l, m) = (problem.p.n_nodes(), problem.p.n_labels, problem.edges.len());
        let mut incoming = vec![0.0; n * l];
        for (e, &[i, j]) in problem.edges.iter().enumerate() {
            for (node, d) in [(j as usize, 0), (i as usize, 1)] {
                for a in 0..l {
                    incoming[node * l + a] += messages[(2 * e + d) * l + a];
                }
            }
        }
        let mut lambda = vec![0.0; 2 * m * l];
        for (e, &[i, j]) in problem.edges.iter().enumerate() {
            // End 0 (node i) received slot 2e + 1; end 1 (node j) slot 2e.
            for (end, node, d) in [(0, i as usize, 1), (1, j as usize, 0)] {
                for a in 0..l {
                    lambda[(2 * e + end) * l + a] = incoming[node * l + a] / problem.degree[node]
                        - messages[(2 * e + d) * l + a];
                }
            }
        }
        Self {
            lambda,
            ..Self::new(problem, allowed)
        }
    }

    /// Fits the state to a (narrower) restriction: marginals of forbidden labels go to the node's allowed
    /// ones (uniform where none is left), and forbidden configurations leave the factors' active sets. The
    /// multipliers still sum to zero at each node, so the dual stays a bound.
    fn restrict(&mut self, problem: &Problem<'_>, allowed: &[bool]) {
        let l = problem.p.n_labels;
        for (row, ok) in self.marg.chunks_exact_mut(l).zip(allowed.chunks_exact(l)) {
            for (m, &a) in row.iter_mut().zip(ok) {
                if !a {
                    *m = 0.0;
                }
            }
            let total: f64 = row.iter().sum();
            if total > 0.0 {
                row.iter_mut().for_each(|m| *m /= total);
            } else {
                let count = ok.iter().filter(|&&a| a).count().max(1) as f64;
                for (m, &a) in row.iter_mut().zip(ok) {
                    *m = if a { 1.0 / count } else { 0.0 };
                }
            }
        }
        for ((set, weights), &[i, j]) in self.warm.iter_mut().zip(problem.edges) {
            let (i, j) = (i as usize, j as usize);
            let mut k = 0;
            while k < set.len() {
                if allowed[i * l + set[k] / l] && allowed[j * l + set[k] % l] {
                    k += 1;
                } else {
                    set.swap_remove(k);
                    weights.swap_remove(k);
                }
            }
            let total: f64 = weights.iter().sum();
            if total > 0.0 {
                weights.iter_mut().for_each(|w| *w /= total);
            } else {
                set.clear();
                weights.clear();
            }
        }
    }
}

/// What every relaxation of one problem shares.
struct Problem<'a> {
    p: &'a Potentials,
    edges: &'a [[u32; 2]],
    adj: Adjacency,
    degree: Vec<f64>,
    /// `θ_i(a)/deg_i`: the share of each node's potential given to each of its factors (`n × L`; isolated
    /// nodes are solved alone).
    shares: Vec<f64>,
    s: Ad3Settings,
}

/// Runs AD3 from a cold start on the potentials, each node restricted to the labels `allowed` marks
/// (`n × L`, at least one per node); the labelling found may leave the restriction (it is a candidate for
/// the whole problem).
#[cfg(test)]
pub(crate) fn ad3(
    p: &Potentials,
    edges: &[[u32; 2]],
    s: Ad3Settings,
    allowed: &[bool],
) -> Ad3Result {
    let problem = Problem::new(p, edges, s);
    let mut state = Admm::new(&problem, allowed);
    problem.relax(allowed, &mut state, f64::NEG_INFINITY, false)
}

impl<'a> Problem<'a> {
    fn new(p: &'a Potentials, edges: &'a [[u32; 2]], s: Ad3Settings) -> Self {
        let adj = Adjacency::new(p.n_nodes(), edges);
        let degree: Vec<f64> = (0..p.n_nodes()).map(|i| adj.of(i).len() as f64).collect();
        let shares = p
            .unary
            .chunks_exact(p.n_labels.max(1))
            .zip(&degree)
            .flat_map(|(row, &d)| row.iter().map(move |&t| if d > 0.0 { t / d } else { 0.0 }))
            .collect();
        Self {
            p,
            edges,
            adj,
            degree,
            shares,
            s,
        }
    }

    /// The labelling `y` improved by local search, kept in `best` when it is better.
    fn offer(&self, mut y: Vec<u32>, best: &mut (Vec<u32>, f64)) {
        improve_locally(self.p, &self.adj, &mut y);
        let value = self.p.value(self.edges, &y);
        if value > best.1 {
            *best = (y, value);
        }
    }

    /// One relaxation under `allowed`, continuing from `state` (left at the end of the run). It stops when
    /// the labelling meets the bound, when the bound falls to `incumbent` (nothing better is in this
    /// relaxation), when ADMM has converged, after `max_iter` iterations, and, when `branching`, when the
    /// bound has stalled above the labelling (`STALL_CHECKS`).
    fn relax(
        &self,
        allowed: &[bool],
        state: &mut Admm,
        incumbent: f64,
        branching: bool,
    ) -> Ad3Result {
        let (p, edges, s) = (self.p, self.edges, self.s);
        let (n, l) = (p.n_nodes(), p.n_labels);
        let degree = &self.degree;
        let share = |i: usize, a: usize| self.shares[i * l + a];
        let mut isolated = 0.0;
        for i in (0..n).filter(|&i| degree[i] == 0.0) {
            let ok = &allowed[i * l..(i + 1) * l];
            let mut top = (0, f64::NEG_INFINITY);
            for (a, &x) in p.node(i).iter().enumerate() {
                if ok[a] && x > top.1 {
                    top = (a, x);
                }
            }
            let row = &mut state.marg[i * l..(i + 1) * l];
            row.fill(0.0);
            row[top.0] = 1.0;
            isolated += top.1;
        }
        let Admm {
            lambda,
            marg,
            warm,
            eta,
        } = state;
        let mut copies = vec![0.0; 2 * edges.len() * l];
        let mut qp = FactorQp::new(l);
        let mut best: (Vec<u32>, f64) = (vec![0; n], f64::NEG_INFINITY);
        let mut bound = f64::INFINITY;
        let mut history: Vec<f64> = Vec::new();
        let mut u = vec![0.0; 2 * l];
        let mut v = vec![0.0; 2 * l];
        // `u`, with forbidden labels at −∞.
        let mut masked = vec![0.0; 2 * l];
        let mut sums = vec![0.0; n * l];
        let within = |bound: f64, value: f64| bound - value <= s.certify.slack(bound);
        let mut fractional: Option<Fractional> = None;
        let keep = |f: Fractional, fractional: &mut Option<Fractional>| {
            if fractional.as_ref().is_none_or(|b| f.value > b.value) {
                *fractional = Some(f);
            }
        };
        let top = |best: f64, fractional: &Option<Fractional>| {
            fractional.as_ref().map_or(best, |f| f.value.max(best))
        };
        for iter in 0..s.max_iter {
            // The dual at the current multipliers, and the factors' steps.
            let mut dual = isolated;
            let inv_eta = 1.0 / *eta;
            for (e, &[i, j]) in edges.iter().enumerate() {
                let (i, j) = (i as usize, j as usize);
                let (ai, aj) = (&allowed[i * l..(i + 1) * l], &allowed[j * l..(j + 1) * l]);
                for a in 0..l {
                    u[a] = share(i, a) + lambda[2 * e * l + a];
                    u[l + a] = share(j, a) + lambda[(2 * e + 1) * l + a];
                    v[a] = marg[i * l + a] + u[a] * inv_eta;
                    v[l + a] = marg[j * l + a] + u[l + a] * inv_eta;
                    masked[a] = if ai[a] { u[a] } else { f64::NEG_INFINITY };
                    masked[l + a] = if aj[a] { u[l + a] } else { f64::NEG_INFINITY };
                }
                let table = p.table(e);
                let mut top = f64::NEG_INFINITY;
                for (row, &ua) in table.chunks_exact(l).zip(&masked[..l]) {
                    for (&t, &ub) in row.iter().zip(&masked[l..]) {
                        top = top.max(t + ua + ub);
                    }
                }
                dual += top;
                qp.solve(table, *eta, &v, (ai, aj), &mut warm[e]);
                copies[2 * e * l..(2 * e + 2) * l].copy_from_slice(&qp.q);
            }
            bound = bound.min(dual);
            if edges.is_empty() {
                break;
            }
            // The global marginals: the mean of the copies.
            sums.fill(0.0);
            for (e, &[i, j]) in edges.iter().enumerate() {
                for (end, node) in [(0, i as usize), (1, j as usize)] {
                    let from = (2 * e + end) * l;
                    for a in 0..l {
                        sums[node * l + a] += copies[from + a];
                    }
                }
            }
            let mut moved: f64 = 0.0;
            for i in (0..n).filter(|&i| degree[i] > 0.0) {
                for a in 0..l {
                    let new = sums[i * l + a] / degree[i];
                    moved += (new - marg[i * l + a]).powi(2);
                    marg[i * l + a] = new;
                }
            }
            // Multipliers step by the disagreement of the copies with the marginals.
            let mut disagree: f64 = 0.0;
            for (e, &[i, j]) in edges.iter().enumerate() {
                for (end, node) in [(0, i as usize), (1, j as usize)] {
                    let from = (2 * e + end) * l;
                    for a in 0..l {
                        let r = copies[from + a] - marg[node * l + a];
                        disagree += r * r;
                        lambda[from + a] -= *eta * r;
                    }
                }
            }
            let scheduled = iter % 10 == 9;
            if scheduled || iter + 1 == s.max_iter {
                self.offer(
                    (0..n)
                        .map(|i| argmax(&marg[i * l..(i + 1) * l]).0 as u32)
                        .collect(),
                    &mut best,
                );
                self.offer(self.decode(lambda, allowed), &mut best);
                if s.fractional {
                    keep(self.feasible(marg, warm), &mut fractional);
                }
                if within(bound, top(best.1, &fractional)) || within(bound, incumbent) {
                    break;
                }
                // The relaxation has converged without meeting the labelling: it is not tight here.
                if disagree.sqrt() < 1e-7 && (*eta * *eta * moved).sqrt() < 1e-7 {
                    break;
                }
                if scheduled {
                    history.push(bound);
                    let since = history
                        .len()
                        .checked_sub(STALL_CHECKS + 1)
                        .map(|k| history[k]);
                    // A relaxation that may branch hands over to its branches; a fractional one returns its
                    // best point with its bound, which a solver's primal adds up (ADMM's last digits cost
                    // far more iterations than its first).
                    let found = top(best.1, &fractional);
                    if (branching || s.fractional)
                        && since.is_some_and(|b| b - bound < STALL_SHARE * (bound - found))
                    {
                        break;
                    }
                }
            }
            // Residual balancing (Boyd et al. 2011, Section 3.4.1).
            let (primal, dual_res) = (disagree.sqrt(), *eta * moved.sqrt());
            if primal > 10.0 * dual_res {
                *eta = (*eta * 2.0).min(1e4);
            } else if dual_res > 10.0 * primal {
                *eta = (*eta / 2.0).max(1e-4);
            }
        }
        if best.1 == f64::NEG_INFINITY {
            self.offer(
                (0..n)
                    .map(|i| argmax(&marg[i * l..(i + 1) * l]).0 as u32)
                    .collect(),
                &mut best,
            );
        }
        if s.fractional {
            keep(self.feasible(marg, warm), &mut fractional);
        }
        Ad3Result {
            certified: within(bound, top(best.1, &fractional)),
            labels: best.0,
            value: best.1,
            bound,
            marginals: marg.clone(),
            fractional,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::infer::{brute_force, exact_tree};
    use crate::graph::testing::{Answer, case, cases, check_answer, count_optima, forest_of};
    use proptest::prelude::*;

    const SETTINGS: Ad3Settings = Ad3Settings {
        max_iter: 1000,
        certify: Tolerance::of_value(1e-6),
        fractional: false,
    };

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(if cfg!(debug_assertions) { 60 } else { 400 }))]

        /// The dual bound is never below the optimum, the labelling never above it, and a certified answer
        /// is an optimum.
        #[test]
        fn the_bound_holds_and_certified_answers_are_optimal((p, edges) in case()) {
            let (_, best) = brute_force(&p, &edges).unwrap();
            let r = ad3_branch(&p, &edges, SETTINGS, 32);
            check_answer(&p, &edges, best, &answer(&r))?;
        }
    }

    fn answer(r: &Ad3Result) -> Answer<'_> {
        Answer {
            labels: &r.labels,
            value: r.value,
            bound: r.bound,
            certified: r.certified,
        }
    }

    /// The target: the brute-force optimum on at least 99% of random 3-label graphs of up to 10
    /// nodes with mixed attractive and repulsive potentials (seeded; counted, not sampled by proptest;
    /// `cargo test --release -p maxmargin-struct --lib ad3 -- --nocapture` prints the counts).
    #[test]
    fn ad3_finds_the_optimum_on_nearly_every_small_graph() {
        let (found, _, total) = count_optima("ad3", |p, edges| {
            let r = ad3_branch(p, edges, SETTINGS, 32);
            (r.labels, r.value, r.bound, r.certified)
        });
        assert!(found * 100 >= total * 99, "optimum on {found} of {total}");
    }

    /// Started from TRW-S (as the space's `ad3` is where TRW-S does not certify), AD3 keeps its guarantees:
    /// the bound never below the optimum, certified answers optimal, the optimum on at least 99% of the
    /// random small graphs, and never a worse labelling than TRW-S's.
    #[test]
    fn ad3_from_trws_messages_keeps_its_guarantees() {
        use crate::graph::trws::{TrwsSettings, trws};
        let settings = TrwsSettings {
            max_iter: 100,
            certify: Tolerance::of_value(1e-6),
        };
        let (found, _, total) = count_optima("ad3 from trws", |p, edges| {
            let start = trws(p, edges, settings);
            let r = ad3_branch_from(p, edges, SETTINGS, 32, Some(&start));
            assert!(r.value >= start.value);
            (r.labels, r.value, r.bound, r.certified)
        });
        assert!(found * 100 >= total * 99, "optimum on {found} of {total}");
    }

    /// An odd cycle of repulsive edges with two labels: the relaxation is not tight (halves everywhere earn
    /// every edge), so the root stays uncertified above the optimum and branch and bound, each branch
    /// starting from its parent's state, must find and certify the optimum.
    #[test]
    fn branches_from_their_parents_state_certify_a_frustrated_cycle() {
        let n = 7u32;
        let edges: Vec<[u32; 2]> = (0..n).map(|i| [i, (i + 1) % n]).collect();
        let unary: Vec<f64> = (0..n as usize * 2)
            .map(|k| 0.01 * ((k * 7 % 5) as f64))
            .collect();
        let p = Potentials {
            n_labels: 2,
            unary,
            pair: vec![0.0, 1.0, 1.0, 0.0],
            shared: true,
        };
        let (_, best) = brute_force(&p, &edges).unwrap();
        let root = ad3_branch(&p, &edges, SETTINGS, 1);
        assert!(
            !root.certified && root.bound > best + 0.5,
            "{root:?} {best}"
        );
        let r = ad3_branch(&p, &edges, SETTINGS, 32);
        assert!(r.certified, "{r:?}");
        assert!((r.value - best).abs() < 1e-9 && r.bound >= best - 1e-9);
    }

    /// Narrowing a state keeps it a state of the narrower problem: marginals on allowed labels summing to
    /// one, active sets of allowed configurations with weights summing to one, multipliers untouched.
    #[test]
    fn restricting_a_state_leaves_only_allowed_labels() {
        let (p, edges) = cases(1).remove(0);
        let problem = Problem::new(&p, &edges, SETTINGS);
        let l = p.n_labels;
        let mut allowed = vec![true; p.unary.len()];
        let mut state = Admm::new(&problem, &allowed);
        let _ = problem.relax(&allowed, &mut state, f64::NEG_INFINITY, false);
        let lambda = state.lambda.clone();
        for i in 0..p.n_nodes() {
            allowed[i * l + i % l] = false;
        }
        state.restrict(&problem, &allowed);
        assert_eq!(state.lambda, lambda);
        for (row, ok) in state.marg.chunks_exact(l).zip(allowed.chunks_exact(l)) {
            assert!(row.iter().zip(ok).all(|(&m, &a)| a || m == 0.0));
            assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
        for ((set, weights), &[i, j]) in state.warm.iter().zip(&edges) {
            let (i, j) = (i as usize, j as usize);
            assert!(
                set.iter()
                    .all(|&c| allowed[i * l + c / l] && allowed[j * l + c % l])
            );
            assert!(set.is_empty() || (weights.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn ad3_is_certified_on_trees() {
        for (p, edges) in cases(if cfg!(debug_assertions) { 40 } else { 200 }) {
            let (q, forest) = forest_of(&p, &edges);
            let (_, best) = exact_tree(&q, &forest).unwrap();
            let r = ad3(&q, &forest, SETTINGS, &vec![true; q.unary.len()]);
            assert!(
                r.certified,
                "bound {} value {} best {best}",
                r.bound, r.value
            );
            assert!((r.value - best).abs() < 1e-6);
        }
    }
}
