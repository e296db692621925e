//! The binary hinge, its relatives and their subdifferentials.

use maxmargin_core::hinge::{
    HingeCase, MarginLoss, ZeroAtBoundary, hinge, hinge_as_affine_max, hinge_subdifferential,
    hinge_subgradient_w,
};
use maxmargin_core::vector::SparseVec;
use proptest::prelude::*;
use std::fmt::Write;

/// The hinge versus the 0-1 loss at the margins of the lecture's table.
fn hinge_table() -> String {
    let zero_one = MarginLoss::ZeroOne(ZeroAtBoundary::Mistake);
    let mut out = String::from("z       hinge  0-1  dhinge/dz\n");
    for z in [-2.0, -1.0, 0.0, 0.5, 1.0, 2.0] {
        let d = hinge_subdifferential(z);
        let sub = if d.is_point() {
            format!("{{{}}}", d.lo)
        } else {
            format!("[{}, {}]", d.lo, d.hi)
        };
        writeln!(
            out,
            "{z:<6.1}  {:<5.1}  {:<3}  {sub}",
            hinge(z),
            zero_one.value(z)
        )
        .unwrap();
    }
    out
}

#[test]
fn hinge_vs_zero_one_table() {
    let table = hinge_table();
    insta::with_settings!({
        description => "hinge max(0, 1 - z) vs 0-1 loss (z = 0 counted as a mistake)",
        info => &"z = -2, -1, 0, 0.5, 1, 2: hinge 3, 2, 1, 0.5, 0, 0",
    }, {
        insta::assert_snapshot!(table);
    });
    let values: Vec<f64> = [-2.0, -1.0, 0.0, 0.5, 1.0, 2.0].map(hinge).to_vec();
    assert_eq!(values, vec![3.0, 2.0, 1.0, 0.5, 0.0, 0.0]);
}

#[test]
fn zero_one_convention_at_boundary() {
    assert_eq!(MarginLoss::ZeroOne(ZeroAtBoundary::Mistake).value(0.0), 1.0);
    assert_eq!(MarginLoss::ZeroOne(ZeroAtBoundary::Correct).value(0.0), 0.0);
    assert_eq!(
        MarginLoss::ZeroOne(ZeroAtBoundary::Correct).value(-1e-300),
        1.0
    );
    assert_eq!(ZeroAtBoundary::default(), ZeroAtBoundary::Mistake);
}

#[test]
fn subgradient_in_w_by_case() {
    let x = SparseVec::new(vec![0, 1], vec![2.0, 1.0]).unwrap();
    let mut g = vec![0.0; 2];
    // z = 0 < 1: only θ = 1.
    assert!(hinge_subgradient_w(&[0.0, 0.0], 0.0, x.as_row(), 1.0, 0.5, &mut g).is_err());
    // z = 1 exactly: θ = 0.5 is valid and gives half of −y x.
    let w = [0.5, 0.0];
    assert_eq!(HingeCase::of(1.0), HingeCase::Kink);
    let gb = hinge_subgradient_w(&w, 0.0, x.as_row(), 1.0, 0.5, &mut g).unwrap();
    assert_eq!((g.clone(), gb), (vec![-1.0, -0.5], -0.5));
    // z > 1: only zero.
    let gb = hinge_subgradient_w(&[5.0, 0.0], 0.0, x.as_row(), 1.0, 0.0, &mut g).unwrap();
    assert_eq!((g, gb), (vec![0.0, 0.0], 0.0));
}

fn losses() -> impl Strategy<Value = MarginLoss> {
    prop_oneof![
        Just(MarginLoss::Hinge),
        Just(MarginLoss::SquaredHinge),
        Just(MarginLoss::Perceptron)
    ]
}

/// A margin that is often exactly at a kink.
fn margin() -> impl Strategy<Value = f64> {
    prop_oneof![Just(0.0), Just(1.0), -5.0..5.0f64]
}

proptest! {
    #[test]
    fn hinge_dominates_zero_one(z in margin()) {
        for conv in [ZeroAtBoundary::Mistake, ZeroAtBoundary::Correct] {
            prop_assert!(hinge(z) >= MarginLoss::ZeroOne(conv).value(z));
        }
        prop_assert!(hinge(z) >= 0.0);
    }

    #[test]
    fn subgradient_inequality_in_z(loss in losses(), z in margin(), v in -5.0..5.0f64, t in 0.0..=1.0f64) {
        let d = loss.subdifferential(z).unwrap();
        let g = d.lo + t * (d.hi - d.lo);
        prop_assert!(loss.value(v) >= loss.value(z) + g * (v - z) - 1e-12);
    }

    #[test]
    fn hinge_in_w_matches_affine_max(
        x in prop::collection::vec(-3.0..3.0f64, 3),
        y in prop_oneof![Just(1.0), Just(-1.0)],
        w in prop::collection::vec(-2.0..2.0f64, 3),
        z in prop::collection::vec(-2.0..2.0f64, 3),
        theta in 0.0..=1.0f64,
    ) {
        let xs = SparseVec::from_dense(&x).unwrap();
        let f = hinge_as_affine_max(xs.as_row(), y, 3).unwrap();
        let m: f64 = y * x.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>();
        prop_assert!((f.value(&w).unwrap() - hinge(m)).abs() < 1e-12);
        // Every θ in the case's range gives a subgradient that satisfies the inequality everywhere.
        let range = HingeCase::of(m).theta();
        let th = range.lo + theta * (range.hi - range.lo);
        let mut g = vec![0.0; 3];
        hinge_subgradient_w(&w, 0.0, xs.as_row(), y, th, &mut g).unwrap();
        prop_assert!(f.subgradient_inequality(&w, &g, &z, 1e-9).unwrap());
    }

    #[test]
    fn subgradient_inequality_at_exact_kink(
        x in prop::collection::vec(1..4i32, 2),
        theta in 0.0..=1.0f64,
        z in prop::collection::vec(-2.0..2.0f64, 2),
    ) {
        // w chosen so that y⟨w, x⟩ = 1 exactly: w = x / ‖x‖² with small integers.
        let x: Vec<f64> = x.into_iter().map(f64::from).collect();
        let nsq = x[0] * x[0] + x[1] * x[1];
        let w = [x[0] / nsq, x[1] / nsq];
        let xs = SparseVec::from_dense(&x).unwrap();
        let f = hinge_as_affine_max(xs.as_row(), 1.0, 2).unwrap();
        let g = [-theta * x[0], -theta * x[1]];
        prop_assert!(f.subgradient_inequality(&w, &g, &z, 1e-9).unwrap());
        prop_assert!(f.is_subgradient(&w, &g, 1e-9).unwrap());
    }
}
