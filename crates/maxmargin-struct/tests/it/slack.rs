//! Slack rescaling: each space's exact oracle reaches the brute-force optimum of `Δ·(1 + s(ŷ) − s(y))`
//! (exact ties included, from small integer weights), returns an output that attains it, and its hinge is a
//! convex upper bound on the loss of the decoded output with `Δ·(ψ(ŷ) − ψ(y))` as a subgradient.

use crate::brute_force::{cost, ints, sparse};
use maxmargin_struct::{
    BruteForce, ChainSpace, Enumerable, MulticlassSpace, MultilabelSpace, OutputSpace, StructError,
    slack_brute_force, slack_value,
};
use proptest::prelude::*;

fn check<S: Enumerable>(
    space: &S,
    w: &[f64],
    x: &S::Input,
    y: &S::Output,
    z: &[f64],
) -> Result<(), TestCaseError> {
    prop_assert!(space.has_slack_rescaling());
    let reference = slack_brute_force(space, w, x, y).unwrap();
    let v = space.slack_rescaled(w, x, y).unwrap();
    prop_assert!(
        (v.hinge - reference.hinge).abs() < 1e-9,
        "hinge {} vs brute force {} ({:?} vs {:?})",
        v.hinge,
        reference.hinge,
        v.output,
        reference.output
    );
    // The output attains the value it reports.
    let truth = space.score(w, x, y);
    let attained = slack_value(
        space.loss(y, &v.output),
        space.score(w, x, &v.output),
        truth,
    );
    prop_assert!((attained.max(0.0) - v.hinge).abs() < 1e-9);
    prop_assert!((v.loss - space.loss(y, &v.output)).abs() < 1e-12);
    // A bound on the decoded output's loss: Δ(y, d) ≤ Δ·(1 + s(d) − s(y)) since s(d) ≥ s(y).
    let d = space.decode(w, x).unwrap();
    prop_assert!(space.loss(y, &d) <= v.hinge + 1e-9);
    // Δ·(ψ(ŷ) − ψ(y)) is a subgradient: H(z) ≥ H(w) + Δ⟨ψ(ŷ) − ψ(y), z − w⟩.
    let mut g = vec![0.0; space.dim()];
    space.add_joint_feature(x, &v.output, v.loss, &mut g);
    space.add_joint_feature(x, y, -v.loss, &mut g);
    let hz = slack_brute_force(space, z, x, y).unwrap().hinge;
    let lin: f64 = g
        .iter()
        .zip(z.iter().zip(w))
        .map(|(g, (z, w))| g * (z - w))
        .sum();
    prop_assert!(hz >= v.hinge + lin - 1e-9);
    Ok(())
}

/// K ≤ 5 classes over d ≤ 3 features with a random cost matrix: the space, weights, input, truth, a second
/// point.
fn multiclass_case() -> impl Strategy<
    Value = (
        MulticlassSpace,
        Vec<f64>,
        maxmargin_core::vector::SparseVec,
        u32,
        Vec<f64>,
    ),
> {
    (2..=5usize, 1..=3usize).prop_flat_map(|(k, d)| {
        (
            cost(k),
            ints(k * d, -2, 2),
            ints(k * d, -2, 2),
            sparse(d),
            0..k as u32,
        )
            .prop_map(move |(c, w, z, x, y)| {
                (MulticlassSpace::with_costs(d, c).unwrap(), w, x, y, z)
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn multiclass_with_costs((space, w, x, y, z) in multiclass_case()) {
        check(&space, &w, &x, &y, &z)?;
    }

    #[test]
    fn multilabel_with_equal_or_mixed_weights(
        (l, d) in (1..=7usize, 1..=3usize),
        weights in prop::collection::vec(0..=3i32, 7),
        distinct in 1..=3usize,
        truth in prop::collection::vec(any::<bool>(), 7),
        w in ints(21, -3, 3),
        z in ints(21, -3, 3),
        x in sparse(3),
    ) {
        // 1, 2 or 3 distinct weights (zero included), repeated over the labels.
        let c: Vec<f64> = (0..l).map(|i| f64::from(weights[i % distinct])).collect();
        let space = MultilabelSpace::weighted(d, c).unwrap();
        let x = maxmargin_core::vector::SparseVec::from_dense(&x.as_row().to_dense(3)[..d]).unwrap();
        let y = truth[..l].to_vec();
        check(&space, &w[..l * d], &x, &y, &z[..l * d])?;
    }

    /// Any enumerable space through `BruteForce`: a chain, whose own oracle has no slack rescaling.
    #[test]
    fn small_spaces_through_brute_force(t in 1..=4usize, w in ints(12, -2, 2), z in ints(12, -2, 2), tags in prop::collection::vec(0..2u32, 4)) {
        let chain = ChainSpace::new(2, 2).unwrap();
        prop_assert_eq!(chain.dim(), 12);
        prop_assert!(!chain.has_slack_rescaling());
        let x: Vec<_> = (0..t)
            .map(|i| maxmargin_core::vector::SparseVec::new(vec![(i % 2) as u32], vec![1.0]).unwrap())
            .collect();
        let y = tags[..t].to_vec();
        let refused = chain.slack_rescaled(&w, &x, &y);
        prop_assert!(matches!(refused, Err(StructError::Unsupported { .. })), "{:?}", refused);
        check(&BruteForce(chain), &w, &x, &y, &z)?;
    }
}

/// Many labels with unit weights are exact and cheap (`L + 1` count vectors); many distinct weights are
/// refused by name rather than enumerated.
#[test]
fn many_labels() {
    let l = 200;
    let space = MultilabelSpace::new(1, l).unwrap();
    let x = maxmargin_core::vector::SparseVec::new(vec![0], vec![1.0]).unwrap();
    let w: Vec<f64> = (0..l).map(|i| (i as f64 - 100.0) / 50.0).collect();
    let y: Vec<bool> = (0..l).map(|i| i % 3 == 0).collect();
    let v = space.slack_rescaled(&w, &x, &y).unwrap();
    assert!(v.hinge > 0.0 && v.loss > 0.0);
    let distinct = MultilabelSpace::weighted(1, (0..l).map(|i| 1.0 + i as f64).collect()).unwrap();
    let err = distinct.slack_rescaled(&w, &x, &y).unwrap_err().to_string();
    assert!(
        err.contains("distinct label weights") || err.contains("different loss weights"),
        "{err}"
    );
}
