//! Property tests: each space's `decode` and `loss_augmented` reach the brute-force optimum (including
//! exact ties, from small integer weights), the output is one of the brute-force maximizers, the hinge
//! bounds the loss of the decoded output, `ψ(ŷ) − ψ(y)` is a subgradient, and a space's
//! `for_each_feature_difference` is `ψ(y) − ψ(ŷ)`.

use maxmargin_core::vector::SparseVec;
use maxmargin_struct::{
    BinarySpace, ChainSpace, CostMatrix, Enumerable, MulticlassSpace, MultilabelSpace, OutputSpace,
    PerPositionSpace, PositionInput, add_subgradient, brute_force,
};
use proptest::prelude::*;

/// Checks a space on one example against brute force.
pub(crate) fn check<S: Enumerable>(
    space: &S,
    w: &[f64],
    x: &S::Input,
    y: &S::Output,
    z: &[f64],
) -> Result<(), TestCaseError> {
    let (h, augmented, decoded) = brute_force(space, w, x, y, 1e-9).unwrap();
    // ψ three ways agree: sparse, dense accumulation, and the score.
    let psi = space.joint_feature(x, y);
    let mut dense = vec![0.0; space.dim()];
    space.add_joint_feature(x, y, 1.0, &mut dense);
    prop_assert_eq!(&psi.as_row().to_dense(space.dim()), &dense);
    prop_assert!((psi.as_row().dot(w) - space.score(w, x, y)).abs() < 1e-9);
    let v = space.loss_augmented(w, x, y).unwrap();
    prop_assert!(
        (v.hinge - h.value).abs() < 1e-9,
        "hinge {} vs brute force {}",
        v.hinge,
        h.value
    );
    prop_assert!(
        augmented.contains(&v.output),
        "{:?} not among {:?}",
        v.output,
        augmented
    );
    prop_assert!((v.loss - space.loss_for(x, y, &v.output)).abs() < 1e-12);
    // ψ(y) − ψ(ŷ) by the space's difference (a chain skips the tokens where they agree) is the difference of
    // the two ψ.
    let mut diff = vec![0.0; space.dim()];
    space.for_each_feature_difference(x, y, &v.output, &mut |j, a| diff[j] += a);
    let mut both = dense.clone();
    space.add_joint_feature(x, &v.output, -1.0, &mut both);
    for (j, (a, b)) in diff.iter().zip(&both).enumerate() {
        prop_assert!((a - b).abs() < 1e-12, "entry {}: {} vs {}", j, a, b);
    }
    let d = space.decode(w, x).unwrap();
    prop_assert!(
        decoded.contains(&d),
        "decoded {:?} not among {:?}",
        d,
        decoded
    );
    // Δ(y, decode(x)) ≤ hinge.
    prop_assert!(space.loss_for(x, y, &d) <= v.hinge + 1e-9);
    // ψ(ŷ) − ψ(y) is a subgradient of the hinge: H(z) ≥ H(w) + ⟨g, z − w⟩.
    let mut g = vec![0.0; space.dim()];
    add_subgradient(space, x, y, &v.output, 1.0, &mut g);
    let hz = brute_force(space, z, x, y, 0.0).unwrap().0.value;
    let lin: f64 = g
        .iter()
        .zip(z.iter().zip(w))
        .map(|(g, (z, w))| g * (z - w))
        .sum();
    prop_assert!(hz >= h.value + lin - 1e-9);
    Ok(())
}

pub(crate) fn ints(len: usize, lo: i32, hi: i32) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(lo..=hi, len).prop_map(|v| v.into_iter().map(f64::from).collect())
}

pub(crate) fn sparse(d: usize) -> impl Strategy<Value = SparseVec> {
    ints(d, -2, 2).prop_map(|v| SparseVec::from_dense(&v).unwrap())
}

pub(crate) fn cost(l: usize) -> impl Strategy<Value = CostMatrix> {
    ints(l * l, 0, 3).prop_map(move |c| {
        CostMatrix::from_fn(l, |a, b| if a == b { 0.0 } else { c[a * l + b] }).unwrap()
    })
}

/// A chain (T ≤ 6, L ≤ 4, d ≤ 3 unary and e ≤ 2 edge features, with or without start/end, first or second
/// order), weights, input,
/// truth, and a second point.
fn chain_case() -> impl Strategy<Value = (ChainSpace, Vec<f64>, Vec<SparseVec>, Vec<u32>, Vec<f64>)>
{
    (
        1..=4usize,
        1..=3usize,
        0..=2usize,
        1..=6usize,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_flat_map(|(l, d, e, t, start_end, second)| {
            let dim = d * l
                + l * l
                + if start_end { 2 * l } else { 0 }
                + e * l * l
                + if second { l * l * l } else { 0 };
            (
                cost(l),
                prop::collection::vec(sparse(d + e), t),
                prop::collection::vec(0..l as u32, t),
                ints(dim, -2, 2),
                ints(dim, -3, 3),
            )
                .prop_map(move |(c, x, y, w, z)| {
                    let space = ChainSpace::with_costs(d, c, start_end)
                        .unwrap()
                        .with_edge_features(e);
                    let space = if second {
                        space.with_second_order()
                    } else {
                        space
                    };
                    (space, w, x, y, z)
                })
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn chain_matches_brute_force((space, w, x, y, z) in chain_case()) {
        check(&space, &w, &x, &y, &z)?;
    }

    #[test]
    fn multiclass_matches_brute_force(
        (k, d) in (1..=6usize, 1..=4usize),
        c in (1..=6usize).prop_flat_map(cost),
        x in sparse(4),
        seed_w in ints(24, -2, 2),
        z in ints(24, -3, 3),
        y in 0..6u32,
    ) {
        let k = k.min(c.n_labels());
        let c = CostMatrix::from_fn(k, |a, b| c.cost(a, b)).unwrap();
        let x = SparseVec::new(
            x.as_row().indices().iter().copied().filter(|&j| (j as usize) < d).collect(),
            x.as_row().iter().filter(|(j, _)| *j < d).map(|(_, v)| v).collect(),
        ).unwrap();
        let space = MulticlassSpace::with_costs(d, c).unwrap();
        let y = y % k as u32;
        let w = &seed_w[..space.dim()];
        check(&space, w, &x, &y, &z[..space.dim()])?;
        // Laid out feature-major: the same answers for the same weights, turned back by class_major.
        let major = space.clone().feature_major();
        check(&major, w, &x, &y, &z[..space.dim()])?;
        let back = major.class_major(w);
        let (a, b) = (major.loss_augmented(w, &x, &y).unwrap(), space.loss_augmented(&back, &x, &y).unwrap());
        prop_assert_eq!(a.output, b.output);
        prop_assert!((a.hinge - b.hinge).abs() < 1e-12);
        prop_assert_eq!(major.decode(w, &x).unwrap(), space.decode(&back, &x).unwrap());
    }

    #[test]
    fn multilabel_matches_brute_force(
        l in 1..=8usize,
        weights in ints(8, 0, 2),
        x in sparse(2),
        w in ints(16, -2, 2),
        z in ints(16, -2, 2),
        y in prop::collection::vec(any::<bool>(), 8),
    ) {
        let space = MultilabelSpace::weighted(2, weights[..l].to_vec()).unwrap();
        check(&space, &w[..2 * l], &x, &y[..l].to_vec(), &z[..2 * l])?;
    }

    #[test]
    fn per_position_matches_brute_force(
        (l, t) in (1..=4usize, 1..=5usize),
        c in cost(4),
        x in prop::collection::vec(sparse(2), 5),
        w in ints(8, -2, 2),
        z in ints(8, -2, 2),
        masks in prop::collection::vec(1..16u32, 5),
        y in prop::collection::vec(0..4u32, 5),
    ) {
        // Allowed sets from masks over l labels (never empty); the truth is moved into its set.
        let allowed: Vec<Vec<u32>> = masks[..t].iter().map(|m| {
            let set: Vec<u32> = (0..l as u32).filter(|k| m & (1 << k) != 0).collect();
            if set.is_empty() { vec![0] } else { set }
        }).collect();
        let y: Vec<u32> = (0..t).map(|p| allowed[p][y[p] as usize % allowed[p].len()]).collect();
        let c = CostMatrix::from_fn(l, |a, b| c.cost(a, b)).unwrap();
        let space = PerPositionSpace::with_costs(2, c).unwrap();
        let input = PositionInput { features: x[..t].to_vec(), allowed: Some(allowed) };
        check(&space, &w[..2 * l], &input, &y, &z[..2 * l])?;
        let free = PositionInput { features: x[..t].to_vec(), allowed: None };
        check(&space, &w[..2 * l], &free, &y, &z[..2 * l])?;
    }

    #[test]
    fn binary_agrees_with_the_binary_hinge(x in sparse(3), w in ints(3, -2, 2), z in ints(3, -2, 2), pos in any::<bool>()) {
        let space = BinarySpace::new(3).unwrap();
        let y: i8 = if pos { 1 } else { -1 };
        check(&space, &w, &x, &y, &z)?;
        let v = space.loss_augmented(&w, &x, &y).unwrap();
        let margin = f64::from(y) * x.as_row().dot(&w);
        prop_assert_eq!(v.hinge, maxmargin_core::hinge::hinge(margin));
    }
}

#[test]
fn chain_decodes_a_known_sequence() {
    // Two labels, one feature; transitions favour staying. Unary evidence flips in the middle only weakly.
    let space = ChainSpace::with_costs(1, CostMatrix::zero_one(2).unwrap(), false).unwrap();
    // w layout: W (feature 0: label 0, label 1), then A (00, 01, 10, 11).
    let w = [-1.0, 1.0, 2.0, 0.0, 0.0, 2.0];
    let x: Vec<SparseVec> = [1.0, 1.0, -0.5, 1.0]
        .iter()
        .map(|&v| SparseVec::from_dense(&[v]).unwrap())
        .collect();
    assert_eq!(space.decode(&w, &x).unwrap(), vec![1, 1, 1, 1]);
    let v = space.loss_augmented(&w, &x, &vec![1, 1, 1, 1]).unwrap();
    assert!(v.hinge >= 0.0 && v.loss <= v.hinge + 1e-12);
}

/// The 0-1 loss keeps no `K × K` table: a million classes cost nothing until weights exist (it took 8 TB).
#[test]
fn zero_one_costs_take_no_table() {
    let c = maxmargin_struct::CostMatrix::zero_one(1_000_000).unwrap();
    assert!(c.is_zero_one());
    assert_eq!(
        (c.cost(3, 3), c.cost(3, 4), c.n_labels()),
        (0.0, 1.0, 1_000_000)
    );
    let mut scores = vec![0.5; 4];
    maxmargin_struct::CostMatrix::zero_one(4)
        .unwrap()
        .add_row(2, &mut scores);
    assert_eq!(scores, vec![1.5, 1.5, 0.5, 1.5]);
    let space = maxmargin_struct::MulticlassSpace::new(3, 1_000_000).unwrap();
    assert!(space.costs().is_zero_one());
}
