//! `AffineMax`: value, active set, subdifferential membership, subgradient inequality.

use maxmargin_core::CoreError;
use maxmargin_core::affine::{AffineMax, in_convex_hull};
use proptest::prelude::*;

#[test]
fn one_piece_is_affine() {
    let f = AffineMax::new(vec![(1.0, vec![2.0, -1.0])]).unwrap();
    let e = f.evaluate(&[1.0, 1.0], 0.0).unwrap();
    assert_eq!((e.value, e.active), (2.0, vec![0]));
    assert_eq!(f.subgradient(&[0.0, 0.0]).unwrap(), vec![2.0, -1.0]);
    assert!(f.is_subgradient(&[0.0, 0.0], &[2.0, -1.0], 0.0).unwrap());
    assert!(!f.is_subgradient(&[0.0, 0.0], &[2.0, -0.9], 1e-9).unwrap());
}

#[test]
fn empty_family_is_an_error() {
    assert_eq!(AffineMax::new(vec![]), Err(CoreError::EmptyFamily));
}

#[test]
fn absolute_value_has_interval_at_zero() {
    let f = AffineMax::new(vec![(0.0, vec![1.0]), (0.0, vec![-1.0])]).unwrap();
    assert_eq!(f.evaluate(&[0.0], 0.0).unwrap().active, vec![0, 1]);
    for g in [-1.0, -0.3, 0.0, 1.0] {
        assert!(f.is_subgradient(&[0.0], &[g], 0.0).unwrap());
    }
    assert!(!f.is_subgradient(&[0.0], &[1.01], 0.0).unwrap());
    assert!(!f.is_subgradient(&[0.5], &[0.0], 0.0).unwrap());
}

#[test]
fn tolerance_widens_the_active_set() {
    let f = AffineMax::new(vec![(0.0, vec![1.0]), (1e-10, vec![-1.0])]).unwrap();
    assert_eq!(f.evaluate(&[0.0], 0.0).unwrap().active, vec![1]);
    assert_eq!(f.evaluate(&[0.0], 1e-9).unwrap().active, vec![0, 1]);
}

#[test]
fn hull_membership_in_the_plane() {
    let s: [&[f64]; 4] = [&[0.0, 0.0], &[2.0, 0.0], &[0.0, 2.0], &[1.0, 1.0]];
    assert!(in_convex_hull(&s, &[1.0, 0.5], 1e-12).unwrap());
    assert!(in_convex_hull(&s, &[1.0, 1.0], 1e-12).unwrap());
    assert!(!in_convex_hull(&s, &[1.5, 1.5], 1e-12).unwrap());
    assert!(!in_convex_hull(&s, &[-0.1, 0.5], 1e-12).unwrap());
}

#[test]
fn too_many_slopes_is_an_error() {
    let v: Vec<Vec<f64>> = (0..20).map(|k| vec![k as f64, 0.0]).collect();
    let s: Vec<&[f64]> = v.iter().map(Vec::as_slice).collect();
    assert!(matches!(
        in_convex_hull(&s, &[1.0, 0.0], 0.0),
        Err(CoreError::TooManySlopes { .. })
    ));
}

/// Pieces with small integer data, so that exact ties happen often.
fn family() -> impl Strategy<Value = Vec<(f64, Vec<f64>)>> {
    prop::collection::vec((-2..3i32, prop::collection::vec(-2..3i32, 2)), 1..6).prop_map(|p| {
        p.into_iter()
            .map(|(a, g)| (f64::from(a), g.into_iter().map(f64::from).collect()))
            .collect()
    })
}

proptest! {
    #[test]
    fn every_convex_combination_of_active_slopes_is_a_subgradient(
        pieces in family(),
        w in prop::collection::vec(-2..3i32, 2),
        weights in prop::collection::vec(0.0..1.0f64, 6),
        z in prop::collection::vec(-3.0..3.0f64, 2),
    ) {
        let f = AffineMax::new(pieces).unwrap();
        let w: Vec<f64> = w.into_iter().map(f64::from).collect();
        let e = f.evaluate(&w, 0.0).unwrap();
        // f is the maximum, and some piece attains it.
        for k in 0..f.len() {
            let h = f.offset(k) + f.slope(k).iter().zip(&w).map(|(g, x)| g * x).sum::<f64>();
            prop_assert!(h <= e.value);
        }
        prop_assert!(!e.active.is_empty());
        // A random convex combination of the active slopes.
        let total: f64 = e.active.iter().map(|&k| weights[k] + 1e-3).sum();
        let mut g = vec![0.0; 2];
        for &k in &e.active {
            for (gj, sj) in g.iter_mut().zip(f.slope(k)) {
                *gj += (weights[k] + 1e-3) / total * sj;
            }
        }
        prop_assert!(f.subgradient_inequality(&w, &g, &z, 1e-9).unwrap());
        prop_assert!(f.is_subgradient(&w, &g, 1e-9).unwrap());
        let g0 = f.subgradient(&w).unwrap();
        prop_assert!(f.subgradient_inequality(&w, &g0, &z, 1e-12).unwrap());
    }

    #[test]
    fn a_vector_failing_the_inequality_is_not_a_subgradient(
        pieces in family(),
        w in prop::collection::vec(-2..3i32, 2),
        g in prop::collection::vec(-3.0..3.0f64, 2),
        z in prop::collection::vec(-3.0..3.0f64, 2),
    ) {
        let f = AffineMax::new(pieces).unwrap();
        let w: Vec<f64> = w.into_iter().map(f64::from).collect();
        if !f.subgradient_inequality(&w, &g, &z, 0.0).unwrap() {
            prop_assert!(!f.is_subgradient(&w, &g, 1e-12).unwrap());
        }
    }
}
