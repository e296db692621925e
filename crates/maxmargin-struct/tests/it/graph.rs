//! Graph spaces: exact tree inference and enumeration against brute force on random forests and graphs
//! (shared, edge-feature, directed and symmetric tables), chains against Viterbi, loopy max-product never
//! above the optimum and exact on trees, and bad graphs refused by name.

use crate::brute_force::{check, cost, ints, sparse};
use maxmargin_core::vector::SparseVec;
use maxmargin_struct::{
    BruteForce, ChainSpace, CostMatrix, Graph, GraphSpace, Inference, Marginals, OutputSpace,
    RelaxedGraphSpace, StructError,
};
use proptest::prelude::*;

/// A random graph on `n` nodes: a forest (each node joined to one earlier node or to none) or any set of
/// pairs, each edge in a random orientation.
fn edges(n: usize, forest: bool) -> impl Strategy<Value = Vec<[u32; 2]>> {
    let pairs: Vec<(u32, u32)> = (0..n as u32)
        .flat_map(|j| (0..j).map(move |i| (i, j)))
        .collect();
    let n_pairs = pairs.len();
    (
        prop::collection::vec(0..=n as u32, n),
        prop::collection::vec(any::<bool>(), n_pairs.max(1)),
        prop::collection::vec(any::<bool>(), n_pairs.max(1)),
    )
        .prop_map(move |(parents, keep, flip)| {
            let mut out = Vec::new();
            if forest {
                for (j, &p) in parents.iter().enumerate().skip(1) {
                    if (p as usize) < j {
                        out.push([p, j as u32]);
                    }
                }
            } else {
                for (k, &(i, j)) in pairs.iter().enumerate() {
                    if keep[k] {
                        out.push([i, j]);
                    }
                }
            }
            for (k, e) in out.iter_mut().enumerate() {
                if flip[k % flip.len()] {
                    e.swap(0, 1);
                }
            }
            out
        })
}

type Case = (GraphSpace, Vec<f64>, Graph, Vec<u32>, Vec<f64>);

/// A graph space (L ≤ 3, d ≤ 2, 0–2 edge features, directed or not), weights, a graph (with node weights
/// of the loss in {0, ½, 1, 2} or without), a truth and a second point, with integer weights so that ties
/// happen.
fn graph_case(forest: bool, inference: Inference) -> impl Strategy<Value = Case> {
    (
        1..=3usize,
        1..=2usize,
        1..=6usize,
        0..=2usize,
        any::<bool>(),
    )
        .prop_flat_map(move |(l, d, n, k, directed)| {
            let table = if directed { l * l } else { l * (l + 1) / 2 };
            let dim = d * l + k.max(1) * table;
            (
                cost(l),
                prop::collection::vec(sparse(d), n),
                edges(n, forest),
                prop::collection::vec(ints(k.max(1), -1, 2), n * n),
                prop::collection::vec(0..l as u32, n),
                ints(dim, -2, 2),
                ints(dim, -3, 3),
                prop::option::of(prop::collection::vec(0..4u8, n)),
            )
                .prop_map(move |(c, x, e, f, y, w, z, v)| {
                    let space = GraphSpace::with_costs(d, k, c, directed, inference).unwrap();
                    let mut g = Graph::new(x, e).unwrap();
                    if k > 0 {
                        let rows = f[..g.edges().len()]
                            .iter()
                            .map(|r| r[..k].to_vec())
                            .collect();
                        g = g.with_edge_features(rows).unwrap();
                    }
                    if let Some(v) = v {
                        let v = v
                            .iter()
                            .map(|&k| [0.0, 0.5, 1.0, 2.0][k as usize])
                            .collect();
                        g = g.with_node_weights(v).unwrap();
                    }
                    (space, w, g, y, z)
                })
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn exact_tree_matches_brute_force((space, w, x, y, z) in graph_case(true, Inference::ExactTree)) {
        check(&space, &w, &x, &y, &z)?;
    }

    #[test]
    fn brute_force_inference_matches_brute_force((space, w, x, y, z) in graph_case(false, Inference::BruteForce)) {
        check(&space, &w, &x, &y, &z)?;
    }

    #[test]
    fn max_product_is_never_above_the_optimum((space, w, x, y, _z) in graph_case(false, Inference::MAX_PRODUCT)) {
        let exact = BruteForce(space.with_inference(Inference::BruteForce));
        let found = space.loss_augmented(&w, &x, &y).unwrap();
        let best = exact.loss_augmented(&w, &x, &y).unwrap();
        prop_assert!(found.hinge <= best.hinge + 1e-9, "{} above {}", found.hinge, best.hinge);
        prop_assert!(found.hinge >= 0.0);
        // The reported hinge is that of the reported output.
        let again = space.violation(&w, &x, &y, found.output.clone());
        prop_assert!((again.hinge - found.hinge).abs() < 1e-9);
        let d = space.decode(&w, &x).unwrap();
        prop_assert!(space.score(&w, &x, &d) <= space.score(&w, &x, &exact.decode(&w, &x).unwrap()) + 1e-9);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// TRW-S through the space: never above the optimum, the reported hinge that of the reported output,
    /// and a call counted certified only when it found the optimum.
    #[test]
    fn trws_is_never_above_the_optimum_and_certifies_only_optima((space, w, x, y, _z) in graph_case(false, Inference::TRWS)) {
        certified_only_at_optima(&space, &w, &x, &y)?;
    }

    /// The same of AD3 through the space, which starts from TRW-S and runs AD3 where TRW-S does not
    /// certify.
    #[test]
    fn ad3_is_never_above_the_optimum_and_certifies_only_optima((space, w, x, y, _z) in graph_case(false, Inference::AD3)) {
        certified_only_at_optima(&space, &w, &x, &y)?;
    }

    #[test]
    fn graph_cuts_are_never_above_the_optimum((space, w, x, y, _z) in graph_case(false, Inference::Qpbo)) {
        let exact = BruteForce(space.with_inference(Inference::BruteForce));
        let found = space.loss_augmented(&w, &x, &y).unwrap();
        let best = exact.loss_augmented(&w, &x, &y).unwrap();
        prop_assert!(found.hinge <= best.hinge + 1e-9, "{} above {}", found.hinge, best.hinge);
        let again = space.violation(&w, &x, &y, found.output.clone());
        prop_assert!((again.hinge - found.hinge).abs() < 1e-9);
    }

    /// Two labels and an attractive shared table (`P(0,0) + P(1,1) ≥ 2 P(0,1)`): one cut is the exact
    /// maximizer, decoded and loss-augmented, and no call is counted uncertified.
    #[test]
    fn one_cut_is_exact_on_two_labels_with_an_attractive_table(
        (_, w, x, y, _z) in graph_case(false, Inference::Qpbo),
        table in ints(3, -3, 3),
    ) {
        let d = 2;
        let space = GraphSpace::with_costs(d, 0, CostMatrix::zero_one(2).unwrap(), false, Inference::Qpbo)
            .unwrap();
        prop_assume!(table[0] + table[2] >= 2.0 * table[1]);
        let mut weights: Vec<f64> = w.iter().copied().cycle().take(d * 2).collect();
        weights.extend(&table);
        let nodes = x.nodes().iter().map(|v| SparseVec::from_dense(&v.as_row().to_dense(d)).unwrap()).collect();
        let g = Graph::new(nodes, x.edges().to_vec()).unwrap();
        let y: Vec<u32> = y.iter().map(|&v| v % 2).collect();
        let exact = BruteForce(space.with_inference(Inference::BruteForce));
        let found = space.loss_augmented(&weights, &g, &y).unwrap();
        let best = exact.loss_augmented(&weights, &g, &y).unwrap();
        prop_assert!((found.hinge - best.hinge).abs() <= 1e-9, "{} against {}", found.hinge, best.hinge);
        let d1 = space.decode(&weights, &g).unwrap();
        let d2 = exact.decode(&weights, &g).unwrap();
        prop_assert!((space.score(&weights, &g, &d1) - space.score(&weights, &g, &d2)).abs() <= 1e-9);
        prop_assert_eq!(space.uncertified_calls(), 0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Over the LP relaxation: the answer is a feasible point of the local polytope, its reported hinge is
    /// that of the point, its bound is never below the optimum's hinge, and a certified answer is at least
    /// the optimum (the polytope holds every labelling).
    #[test]
    fn relaxed_answers_are_feasible_points_at_least_the_optimum((space, w, x, y, _z) in graph_case(false, Inference::AD3)) {
        let relaxed = RelaxedGraphSpace::new(space.clone()).unwrap();
        let exact = BruteForce(space.with_inference(Inference::BruteForce));
        let truth = Marginals::from(y.clone());
        let before = space.uncertified_calls();
        let found = relaxed.loss_augmented(&w, &x, &truth).unwrap();
        let best = exact.loss_augmented(&w, &x, &y).unwrap();
        feasible(&x, space.n_labels(), &found.output)?;
        let again = relaxed.violation(&w, &x, &truth, found.output.clone());
        prop_assert!((again.hinge - found.hinge).abs() < 1e-9, "{} against {}", again.hinge, found.hinge);
        prop_assert!(found.hinge >= 0.0 && found.upper() >= found.hinge);
        let tol = 1e-5 * best.hinge.abs().max(1.0);
        prop_assert!(found.upper() >= best.hinge - tol, "bound {} below {}", found.upper(), best.hinge);
        if space.uncertified_calls() == before {
            prop_assert!(found.hinge >= best.hinge - tol, "{} below {}", found.hinge, best.hinge);
        }
    }
}

/// Checks that `m` is a point of `x`'s local polytope with `l` labels: node marginals on the simplex, edge
/// marginals non-negative with their ends' marginals as sums, and only edges at a fractional node stored.
fn feasible(x: &Graph, l: usize, m: &Marginals) -> Result<(), TestCaseError> {
    let mut nodes = vec![0.0; x.n_nodes() * l];
    for (i, &a) in m.labels.iter().enumerate() {
        nodes[i * l + a as usize] = 1.0;
    }
    for (i, row) in &m.nodes {
        nodes[*i as usize * l..][..l].copy_from_slice(row);
    }
    for row in nodes.chunks_exact(l) {
        prop_assert!(row.iter().all(|&v| v >= 0.0));
        prop_assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{row:?}");
    }
    let mut tables = vec![0.0; x.edges().len() * l * l];
    for (e, &[i, j]) in x.edges().iter().enumerate() {
        tables[e * l * l + m.labels[i as usize] as usize * l + m.labels[j as usize] as usize] = 1.0;
    }
    for (e, t) in &m.edges {
        tables[*e as usize * l * l..][..l * l].copy_from_slice(t);
    }
    // Only what is fractional is stored: an edge between two labelled nodes is their indicator.
    let fractional: Vec<u32> = m.nodes.iter().map(|(i, _)| *i).collect();
    for (e, _) in &m.edges {
        let [i, j] = x.edges()[*e as usize];
        prop_assert!(
            fractional.contains(&i) || fractional.contains(&j),
            "edge {e} stored"
        );
    }
    for (t, &[i, j]) in tables.chunks_exact(l * l).zip(x.edges()) {
        prop_assert!(t.iter().all(|&v| v >= 0.0));
        for a in 0..l {
            let row: f64 = t[a * l..(a + 1) * l].iter().sum();
            let col: f64 = (0..l).map(|b| t[b * l + a]).sum();
            prop_assert!((row - nodes[i as usize * l + a]).abs() < 1e-9, "{t:?}");
            prop_assert!((col - nodes[j as usize * l + a]).abs() < 1e-9, "{t:?}");
        }
    }
    Ok(())
}

/// An odd cycle of repulsive edges with two labels and the truth all 0: the relaxation is not tight (halves
/// everywhere earn every edge and half of every node's loss: 7 + 3.5 = 10.5 against the best labelling's
/// 10), so the relaxed answer is fractional, its hinge is the relaxation's 10.5, and AD3 certifies it.
#[test]
fn the_relaxed_answer_on_a_frustrated_cycle_is_fractional_and_certified() {
    let n = 7u32;
    let edges: Vec<[u32; 2]> = (0..n).map(|i| [i, (i + 1) % n]).collect();
    let nodes = vec![SparseVec::from_dense(&[1.0]).unwrap(); n as usize];
    let x = Graph::new(nodes, edges).unwrap();
    let space = GraphSpace::new(1, 2, Inference::AD3).unwrap();
    // Unary weights 0; the symmetric table's (0, 0), (0, 1), (1, 1).
    let w = [0.0, 0.0, 0.0, 1.0, 0.0];
    let relaxed = RelaxedGraphSpace::new(space.clone()).unwrap();
    let truth = Marginals::from(vec![0; n as usize]);
    let found = relaxed.loss_augmented(&w, &x, &truth).unwrap();
    assert!(!found.output.is_integral(), "{found:?}");
    assert!((found.hinge - 10.5).abs() < 1e-3, "{found:?}");
    assert!(
        found.upper() >= 10.5 - 1e-9 && found.upper() - found.hinge < 1e-3,
        "{found:?}"
    );
    assert_eq!(space.uncertified_calls(), 0);
    let exact = BruteForce(space.with_inference(Inference::BruteForce));
    let best = exact.loss_augmented(&w, &x, &vec![0; n as usize]).unwrap();
    assert!((best.hinge - 10.0).abs() < 1e-12);
    // A fractional point is no truth, and a point naming a node twice is refused.
    assert!(relaxed.loss_augmented(&w, &x, &found.output).is_err());
    let mut twice = found.output.clone();
    twice.nodes.push(twice.nodes[0].clone());
    assert!(relaxed.check_output(&x, &twice).is_err());
    assert!(relaxed.check_output(&x, &found.output).is_ok());
    // Only ad3 gives the relaxation's points.
    assert!(RelaxedGraphSpace::new(space.with_inference(Inference::TRWS)).is_err());
}

/// A seeded stream of numbers in [-1, 1) without ties (a linear congruential generator is enough here).
fn uniform(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed;
    move || {
        s = s
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (s >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

#[test]
fn a_chain_as_a_graph_gives_viterbis_outputs_and_scores_to_the_bit() {
    let mut r = uniform(7);
    let (l, d, t) = (4, 3, 30);
    let chain = ChainSpace::with_costs(d, CostMatrix::zero_one(l).unwrap(), false).unwrap();
    let graph = GraphSpace::with_costs(
        d,
        0,
        CostMatrix::zero_one(l).unwrap(),
        true,
        Inference::ExactTree,
    )
    .unwrap();
    assert_eq!(chain.dim(), graph.dim());
    for _ in 0..20 {
        let w: Vec<f64> = (0..chain.dim()).map(|_| r()).collect();
        let x: Vec<SparseVec> = (0..t)
            .map(|_| SparseVec::from_dense(&(0..d).map(|_| r()).collect::<Vec<_>>()).unwrap())
            .collect();
        let y: Vec<u32> = (0..t)
            .map(|_| ((r() + 1.0) * 2.0) as u32 % l as u32)
            .collect();
        let g = Graph::new(x.clone(), (0..t as u32 - 1).map(|i| [i, i + 1]).collect()).unwrap();
        let (a, b) = (chain.decode(&w, &x).unwrap(), graph.decode(&w, &g).unwrap());
        assert_eq!(a, b);
        assert_eq!(
            chain.score(&w, &x, &a).to_bits(),
            graph.score(&w, &g, &b).to_bits()
        );
        let (va, vb) = (
            chain.loss_augmented(&w, &x, &y).unwrap(),
            graph.loss_augmented(&w, &g, &y).unwrap(),
        );
        assert_eq!(va.output, vb.output);
        assert!((va.hinge - vb.hinge).abs() <= 1e-12 * va.hinge.abs().max(1.0));
        // Max-product on a tree reaches the same labelling.
        let loopy = graph.with_inference(Inference::MAX_PRODUCT);
        assert_eq!(loopy.loss_augmented(&w, &g, &y).unwrap().output, vb.output);
        // So does TRW-S, certified (a chain in order is solved by its first iteration).
        let trws = graph.with_inference(Inference::TRWS);
        assert_eq!(trws.loss_augmented(&w, &g, &y).unwrap().output, vb.output);
        assert_eq!(trws.uncertified_calls(), 0);
    }
}

/// Max-product on a forest is exact and counted certified, however long its chains and in whatever order
/// its edges come (flooding 50 damped sweeps over a 400-node chain listed from its far end does not settle);
/// every call is counted in `inference_calls`.
#[test]
fn max_product_on_a_forest_is_exact_and_certified() {
    let mut r = uniform(11);
    let (l, d, t) = (3, 2, 400);
    let space = GraphSpace::with_costs(
        d,
        0,
        CostMatrix::zero_one(l).unwrap(),
        false,
        Inference::MAX_PRODUCT,
    )
    .unwrap();
    let exact = space.with_inference(Inference::ExactTree);
    let w: Vec<f64> = (0..space.dim()).map(|_| r()).collect();
    let x: Vec<SparseVec> = (0..t)
        .map(|_| SparseVec::from_dense(&(0..d).map(|_| r()).collect::<Vec<_>>()).unwrap())
        .collect();
    let y: Vec<u32> = (0..t).map(|i| (i % l) as u32).collect();
    // Two chains, each listed from its far end.
    let half = t as u32 / 2;
    let mut edges: Vec<[u32; 2]> = (0..half - 1).rev().map(|i| [i + 1, i]).collect();
    edges.extend((half..t as u32 - 1).rev().map(|i| [i, i + 1]));
    let g = Graph::new(x, edges).unwrap();
    let (found, best) = (
        space.loss_augmented(&w, &g, &y).unwrap(),
        exact.loss_augmented(&w, &g, &y).unwrap(),
    );
    assert_eq!(found.output, best.output);
    assert_eq!(found.hinge.to_bits(), best.hinge.to_bits());
    assert_eq!(space.decode(&w, &g).unwrap(), exact.decode(&w, &g).unwrap());
    assert_eq!((space.inference_calls(), space.uncertified_calls()), (2, 0));
    assert_eq!(space.with_inference(Inference::TRWS).inference_calls(), 0);
}

/// A method that bounds its answers (trws, ad3): never above the optimum, the reported hinge that of the
/// reported output, a call counted certified only when it found the optimum, and a bound on the hinge (on a
/// graph with a cycle) never below the optimum's, so that a primal summed from the bounds is an upper bound.
fn certified_only_at_optima(
    space: &GraphSpace,
    w: &[f64],
    x: &Graph,
    y: &Vec<u32>,
) -> Result<(), TestCaseError> {
    let exact = BruteForce(space.with_inference(Inference::BruteForce));
    let before = space.uncertified_calls();
    let found = space.loss_augmented(w, x, y).unwrap();
    let best = exact.loss_augmented(w, x, y).unwrap();
    prop_assert!(
        found.hinge <= best.hinge + 1e-9,
        "{} above {}",
        found.hinge,
        best.hinge
    );
    prop_assert!(found.hinge >= 0.0);
    let again = space.violation(w, x, y, found.output.clone());
    prop_assert!((again.hinge - found.hinge).abs() < 1e-9);
    if space.uncertified_calls() == before {
        prop_assert!(found.hinge >= best.hinge - 1e-5 * best.hinge.abs().max(1.0));
    }
    prop_assert!(found.bound.is_some() || x.is_forest());
    prop_assert!(found.upper() >= found.hinge);
    prop_assert!(
        found.upper() >= best.hinge - 1e-9 * best.hinge.abs().max(1.0),
        "bound {} below the optimum's hinge {}",
        found.upper(),
        best.hinge
    );
    prop_assert_eq!(best.bound, None);
    Ok(())
}

#[test]
fn grids_have_the_edges_and_directions_asked_for() {
    let px = |n: usize| vec![SparseVec::from_dense(&[1.0]).unwrap(); n];
    let four = Graph::grid(3, 4, px(12), false, false).unwrap();
    assert_eq!(four.edges().len(), 3 * 3 + 2 * 4);
    assert_eq!(four.n_edge_features(), 0);
    let eight = Graph::grid(3, 4, px(12), true, true).unwrap();
    assert_eq!(eight.edges().len(), 3 * 3 + 2 * 4 + 2 * 2 * 3);
    assert_eq!(eight.n_edge_features(), 4);
    assert_eq!(eight.edge_features(0), &[1.0, 0.0, 0.0, 0.0]);
    assert!(Graph::grid(3, 4, px(11), false, false).is_err());
    // Loopy inference on a grid never does worse than the truth it is given.
    let space = GraphSpace::with_costs(
        1,
        4,
        CostMatrix::zero_one(3).unwrap(),
        false,
        Inference::MAX_PRODUCT,
    )
    .unwrap();
    let mut r = uniform(3);
    let w: Vec<f64> = (0..space.dim()).map(|_| r()).collect();
    let y = vec![1u32; 12];
    let v = space.loss_augmented(&w, &eight, &y).unwrap();
    assert!(v.hinge >= 0.0 && v.loss <= 12.0);
}

/// A node of weight 0 is out of the loss: loss-augmented inference labels it as plain decoding would, and
/// a weight of 2 counts its mistakes twice.
#[test]
fn node_weights_scale_each_node_term_of_the_loss() {
    let one = SparseVec::from_dense(&[1.0]).unwrap();
    let x = Graph::new(vec![one; 3], vec![[0, 1], [1, 2]]).unwrap();
    let space = GraphSpace::new(1, 2, Inference::ExactTree).unwrap();
    // Unary scores favour label 0 by 0.5; no pairwise preference.
    let w = vec![0.5, 0.0, 0.0, 0.0, 0.0];
    let y = vec![1, 1, 1];
    let plain = space.loss_augmented(&w, &x, &y).unwrap();
    assert_eq!((plain.output.clone(), plain.loss), (vec![0, 0, 0], 3.0));
    let weighted = x.clone().with_node_weights(vec![0.0, 2.0, 0.25]).unwrap();
    let v = space.loss_augmented(&w, &weighted, &y).unwrap();
    // Node 2: 0.5 of score against 0.25 of loss still flips it; node 0 flips for its score alone.
    assert_eq!((v.output.clone(), v.loss), (vec![0, 0, 0], 2.25));
    assert_eq!(space.loss_for(&weighted, &y, &vec![1, 0, 1]), 2.0);
    assert_eq!(space.loss(&y, &vec![1, 0, 1]), 1.0);
    let w2 = vec![-0.5, 0.0, 0.0, 0.0, 0.0];
    let v = space.loss_augmented(&w2, &weighted, &y).unwrap();
    // Against a score 0.5 below the truth's, only node 1's loss of 2 pays for a mistake.
    assert_eq!((v.output, v.loss), (vec![1, 0, 1], 2.0));
    assert!((v.hinge - 1.5).abs() < 1e-12);
}

#[test]
fn bad_graphs_are_refused_by_name() {
    let nodes = |n: usize| vec![SparseVec::from_dense(&[1.0]).unwrap(); n];
    let err = |r: Result<Graph, StructError>| r.unwrap_err().to_string();
    assert!(err(Graph::new(nodes(3), vec![[0, 3]])).contains("does not exist"));
    assert!(err(Graph::new(nodes(3), vec![[1, 1]])).contains("self-loop"));
    assert!(err(Graph::new(nodes(3), vec![[0, 1], [1, 0]])).contains("already joined by edge 0"));
    assert!(err(Graph::new(nodes(0), vec![])).contains("nodes"));
    let g = Graph::new(nodes(3), vec![[0, 1], [1, 2]]).unwrap();
    assert!(err(g.clone().with_edge_features(vec![vec![1.0]])).contains("edge feature rows"));
    assert!(
        err(g
            .clone()
            .with_edge_features(vec![vec![1.0], vec![f64::NAN]]))
        .contains("finite")
    );
    assert!(
        err(g
            .clone()
            .with_edge_features(vec![vec![1.0], vec![1.0, 2.0]]))
        .contains("edge 0 has 1")
    );
    assert!(err(g.clone().with_node_weights(vec![1.0; 2])).contains("node weights"));
    assert!(err(g.clone().with_node_weights(vec![1.0, -1.0, 0.0])).contains("node 1: weight -1"));
    assert!(err(g.clone().with_node_weights(vec![1.0, 0.0, f64::INFINITY])).contains("node 2"));
    let tree = GraphSpace::new(1, 2, Inference::ExactTree).unwrap();
    let cycle = Graph::new(nodes(3), vec![[0, 1], [1, 2], [2, 0]]).unwrap();
    let w = vec![0.0; tree.dim()];
    let e = tree.decode(&w, &cycle).unwrap_err().to_string();
    assert!(e.contains("edge 2 closes a cycle"), "{e}");
    assert!(tree.decode(&w, &g).is_ok());
    // A graph with edge features given to a space without them, and the reverse.
    let featured = g
        .clone()
        .with_edge_features(vec![vec![1.0], vec![2.0]])
        .unwrap();
    assert!(
        tree.decode(&w, &featured)
            .unwrap_err()
            .to_string()
            .contains("edge features")
    );
    let big = GraphSpace::new(1, 2, Inference::BruteForce).unwrap();
    assert!(
        big.decode(&w, &Graph::new(nodes(40), vec![]).unwrap())
            .is_err()
    );
    assert!(
        GraphSpace::with_costs(
            1,
            0,
            CostMatrix::zero_one(2).unwrap(),
            false,
            Inference::MaxProduct {
                max_iter: 5,
                damping: 1.0
            }
        )
        .is_err()
    );
}

#[test]
fn ad3_reports_its_relaxation_bound_and_whether_it_is_tight() {
    let mut r = uniform(11);
    let space = GraphSpace::with_costs(
        2,
        0,
        CostMatrix::zero_one(3).unwrap(),
        false,
        Inference::AD3,
    )
    .unwrap();
    let nodes: Vec<SparseVec> = (0..6)
        .map(|_| SparseVec::from_dense(&[r(), r()]).unwrap())
        .collect();
    // A 6-cycle and, from the same nodes, a path.
    let cycle = Graph::new(nodes.clone(), (0..6u32).map(|i| [i, (i + 1) % 6]).collect()).unwrap();
    let path = Graph::new(nodes, (0..5u32).map(|i| [i, i + 1]).collect()).unwrap();
    let exact = BruteForce(space.with_inference(Inference::BruteForce));
    for _ in 0..20 {
        let w: Vec<f64> = (0..space.dim()).map(|_| 2.0 * r()).collect();
        let y = vec![0u32, 1, 2, 0, 1, 2];
        for g in [&cycle, &path] {
            let rel = space.relaxation(&w, g, Some(&y), (1000, 32)).unwrap();
            let best = exact.loss_augmented(&w, g, &y).unwrap();
            let optimum = best.hinge + space.score(&w, g, &y);
            assert!(rel.bound >= optimum - 1e-9 && rel.value <= optimum + 1e-9);
            assert!(
                rel.marginals
                    .chunks(3)
                    .all(|m| (m.iter().sum::<f64>() - 1.0).abs() < 1e-6)
            );
            if rel.certified {
                assert!((rel.value - optimum).abs() <= 1e-5 * optimum.abs().max(1.0));
            }
            if std::ptr::eq(g, &path) {
                assert!(rel.certified, "a path's relaxation is tight");
            }
        }
    }
}

/// Two labels on a 3 × 4 grid (bipartite) with any shared table, attractive or repulsive, directed or not:
/// one cut after swapping one colour class's labels where the table is repulsive is the exact maximizer.
/// Three labels: α-expansion is approximate and counted so.
#[test]
fn graph_cuts_are_exact_on_a_binary_grid_whatever_its_table() {
    let mut r = uniform(5);
    let (h, wd, d) = (3, 4, 2);
    let pixels = |r: &mut dyn FnMut() -> f64| -> Vec<SparseVec> {
        (0..h * wd)
            .map(|_| SparseVec::from_dense(&[r(), r()]).unwrap())
            .collect()
    };
    for directed in [false, true] {
        let space = GraphSpace::with_costs(
            d,
            0,
            CostMatrix::zero_one(2).unwrap(),
            directed,
            Inference::Qpbo,
        )
        .unwrap();
        let exact = BruteForce(space.with_inference(Inference::BruteForce));
        for _ in 0..50 {
            let g = Graph::grid(h, wd, pixels(&mut r), false, false).unwrap();
            let w: Vec<f64> = (0..space.dim()).map(|_| 3.0 * r()).collect();
            let y: Vec<u32> = (0..h * wd).map(|_| u32::from(r() > 0.0)).collect();
            let (found, best) = (
                space.loss_augmented(&w, &g, &y).unwrap(),
                exact.loss_augmented(&w, &g, &y).unwrap(),
            );
            assert!(
                (found.hinge - best.hinge).abs() <= 1e-9,
                "{} against {}",
                found.hinge,
                best.hinge
            );
        }
        assert_eq!(space.uncertified_calls(), 0);
    }
    let three = GraphSpace::new(d, 3, Inference::Qpbo).unwrap();
    let exact = BruteForce(three.with_inference(Inference::BruteForce));
    let g = Graph::grid(2, 3, pixels(&mut r)[..6].to_vec(), false, false).unwrap();
    let w: Vec<f64> = (0..three.dim()).map(|_| 3.0 * r()).collect();
    let y = vec![0u32, 1, 2, 0, 1, 2];
    let (found, best) = (
        three.loss_augmented(&w, &g, &y).unwrap(),
        exact.loss_augmented(&w, &g, &y).unwrap(),
    );
    assert!(found.hinge <= best.hinge + 1e-9);
    assert_eq!(three.uncertified_calls(), 1);
}
