//! What the inference methods' tests share.

use super::infer::Potentials;
use proptest::prelude::*;

/// A random graph on up to 10 nodes with 3 labels and per-edge tables, mixing attractive (large
/// diagonal) and repulsive (large off-diagonal) edges.
pub(crate) fn case() -> impl Strategy<Value = (Potentials, Vec<[u32; 2]>)> {
    (2..=10usize).prop_flat_map(|n| {
        let pairs: Vec<[u32; 2]> = (0..n as u32)
            .flat_map(|j| (0..j).map(move |i| [i, j]))
            .collect();
        let m = pairs.len();
        (
            prop::collection::vec(-1.0..1.0f64, n * 3),
            prop::collection::vec(any::<bool>(), m),
            prop::collection::vec(-1.0..1.0f64, m * 9),
            prop::collection::vec(any::<bool>(), m),
        )
            .prop_map(move |(unary, keep, pair, attract)| {
                let mut edges = Vec::new();
                let mut tables = Vec::new();
                for (k, e) in pairs.iter().enumerate() {
                    if keep[k] {
                        edges.push(*e);
                        for a in 0..3 {
                            for b in 0..3 {
                                let bonus = if (a == b) == attract[k] { 1.0 } else { 0.0 };
                                tables.push(pair[k * 9 + a * 3 + b] * 0.5 + bonus);
                            }
                        }
                    }
                }
                let p = Potentials {
                    n_labels: 3,
                    unary,
                    pair: tables,
                    shared: false,
                };
                (p, edges)
            })
    })
}

/// The first `count` graphs of [`case`], seeded (the same graphs on every run).
pub(crate) fn cases(count: usize) -> Vec<(Potentials, Vec<[u32; 2]>)> {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = case();
    (0..count)
        .map(|_| strategy.new_tree(&mut runner).unwrap().current())
        .collect()
}

/// What a method that bounds its answer returns: the labelling, its value, the bound, whether they meet.
pub(crate) struct Answer<'a> {
    pub labels: &'a [u32],
    pub value: f64,
    pub bound: f64,
    pub certified: bool,
}

/// The bound is never below the optimum `best`, the value never above it and that of the labelling, and a
/// certified answer is an optimum.
pub(crate) fn check_answer(
    p: &Potentials,
    edges: &[[u32; 2]],
    best: f64,
    r: &Answer<'_>,
) -> Result<(), TestCaseError> {
    prop_assert!(
        r.bound >= best - 1e-9,
        "bound {} below the optimum {best}",
        r.bound
    );
    prop_assert!(r.value <= best + 1e-9);
    prop_assert!((p.value(edges, r.labels) - r.value).abs() < 1e-9);
    if r.certified {
        prop_assert!(
            r.value >= best - 1e-5 * best.abs().max(1.0),
            "certified {} < {best}",
            r.value
        );
    }
    Ok(())
}

/// Over `case()`'s first graphs (1,000 in release builds, 150 in debug ones; seeded), how many answers of
/// `solve` are the brute-force optimum and how many are certified, each answer checked by [`check_answer`];
/// printed under `name`.
pub(crate) fn count_optima(
    name: &str,
    mut solve: impl FnMut(&Potentials, &[[u32; 2]]) -> (Vec<u32>, f64, f64, bool),
) -> (usize, usize, usize) {
    let total = if cfg!(debug_assertions) { 150 } else { 1000 };
    let (mut found, mut certified) = (0, 0);
    for (p, edges) in cases(total) {
        let (_, best) = super::infer::brute_force(&p, &edges).unwrap();
        let (labels, value, bound, sure) = solve(&p, &edges);
        let answer = Answer {
            labels: &labels,
            value,
            bound,
            certified: sure,
        };
        check_answer(&p, &edges, best, &answer).unwrap();
        found += usize::from(value >= best - 1e-9);
        certified += usize::from(sure);
    }
    println!("{name}: the optimum on {found} of {total} graphs, {certified} certified");
    (found, certified, total)
}

/// The edges of `edges` (in order) that keep the graph a forest, with their tables.
pub(crate) fn forest_of(p: &Potentials, edges: &[[u32; 2]]) -> (Potentials, Vec<[u32; 2]>) {
    let mut forest = Vec::new();
    let mut table = Vec::new();
    for (e, &[i, j]) in edges.iter().enumerate() {
        let mut with = forest.clone();
        with.push([i, j]);
        if super::infer::first_cycle_edge(p.n_nodes(), &with).is_none() {
            forest = with;
            table.extend_from_slice(p.table(e));
        }
    }
    let q = Potentials {
        pair: table,
        ..p.clone()
    };
    (q, forest)
}
