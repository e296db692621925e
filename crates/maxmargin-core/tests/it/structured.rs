//! The structured hinge over a finite candidate set: value, ties, slack form, bound, subgradient.

use maxmargin_core::structured::{
    decode, feature_difference, slack_is_feasible, structured_hinge, structured_hinge_as_affine_max,
};
use proptest::prelude::*;

/// Scores and losses on a grid of halves (so exact ties are common), the truth with Δ = 0, and joint
/// features for the subgradient.
/// Scores, losses, truth, joint features, weights.
type Instance = (Vec<f64>, Vec<f64>, usize, Vec<Vec<f64>>, Vec<f64>);

fn instance() -> impl Strategy<Value = Instance> {
    (1..7usize).prop_flat_map(|k| {
        (
            prop::collection::vec(0..6i32, k),
            prop::collection::vec(0..5i32, k),
            0..k,
            prop::collection::vec(prop::collection::vec(-2..3i32, 3), k),
            prop::collection::vec(-1..2i32, 3),
        )
            .prop_map(|(_, losses, truth, psi, w)| {
                let psi: Vec<Vec<f64>> = psi
                    .into_iter()
                    .map(|p| p.into_iter().map(|v| f64::from(v) / 2.0).collect())
                    .collect();
                let w: Vec<f64> = w.into_iter().map(f64::from).collect();
                let scores = psi
                    .iter()
                    .map(|p| p.iter().zip(&w).map(|(a, b)| a * b).sum())
                    .collect();
                let mut losses: Vec<f64> = losses.into_iter().map(|l| f64::from(l) / 2.0).collect();
                losses[truth] = 0.0;
                (scores, losses, truth, psi, w)
            })
    })
}

#[test]
fn every_maximizer_is_reported_on_a_tie() {
    let h = structured_hinge(&[0.0, 1.0, 0.5], &[0.0, 1.0, 1.5], 0, 0.0).unwrap();
    assert_eq!((h.value, h.maximizers.clone()), (2.0, vec![1, 2]));
    assert_eq!(h.argmax(), 1);
}

#[test]
fn asymmetric_loss_is_accepted() {
    // Δ(0, 1) = 2 but nothing says Δ(1, 0): only Δ(y, y) = 0 and Δ ≥ 0 are required.
    let h = structured_hinge(&[0.0, 0.0], &[0.0, 2.0], 0, 0.0).unwrap();
    assert_eq!(h.value, 2.0);
}

proptest! {
    #[test]
    fn hinge_is_smallest_feasible_slack((scores, losses, truth, _psi, _w) in instance()) {
        let h = structured_hinge(&scores, &losses, truth, 0.0).unwrap();
        prop_assert!(h.value >= 0.0);
        prop_assert!(slack_is_feasible(&scores, &losses, truth, h.value, 0.0).unwrap());
        // Brute force: every slack below the hinge (on a fine grid, and just below) is infeasible.
        for step in 1..=40 {
            let xi = h.value - f64::from(step) * 0.125;
            if xi < 0.0 { break; }
            prop_assert!(!slack_is_feasible(&scores, &losses, truth, xi, 0.0).unwrap());
        }
        if h.value > 0.0 {
            prop_assert!(!slack_is_feasible(&scores, &losses, truth, h.value - 1e-9, 0.0).unwrap());
        }
    }

    #[test]
    fn decoded_loss_is_bounded_by_the_hinge((scores, losses, truth, _psi, _w) in instance()) {
        let h = structured_hinge(&scores, &losses, truth, 0.0).unwrap();
        for y_hat in decode(&scores, 0.0).unwrap() {
            prop_assert!(losses[y_hat] <= h.value);
        }
    }

    #[test]
    fn value_does_not_depend_on_which_maximizer((scores, losses, truth, _psi, _w) in instance()) {
        let h = structured_hinge(&scores, &losses, truth, 0.0).unwrap();
        for &k in &h.maximizers {
            prop_assert_eq!(losses[k] + scores[k] - scores[truth], h.value);
        }
    }

    #[test]
    fn feature_difference_is_a_subgradient(
        (scores, losses, truth, psi, w) in instance(),
        z in prop::collection::vec(-2.0..2.0f64, 3),
    ) {
        let h = structured_hinge(&scores, &losses, truth, 0.0).unwrap();
        let f = structured_hinge_as_affine_max(&psi, &losses, truth).unwrap();
        prop_assert!((f.value(&w).unwrap() - h.value).abs() < 1e-12);
        for &k in &h.maximizers {
            let g = feature_difference(&psi, truth, k).unwrap();
            prop_assert!(f.subgradient_inequality(&w, &g, &z, 1e-9).unwrap());
        }
    }
}
