//! The λ-form and C-forms of the regularized objective agree under the conversion.

use maxmargin_core::objective::{Lambda, Regularization, lambda_objective};
use proptest::prelude::*;

#[test]
fn lambda_is_one_over_c_n() {
    assert_eq!(Regularization::CSum(2.0).lambda(10).unwrap().get(), 0.05);
    assert_eq!(Regularization::CMean(2.0).lambda(10).unwrap().get(), 0.5);
    assert_eq!(Regularization::Lambda(0.3).lambda(10).unwrap().get(), 0.3);
}

proptest! {
    #[test]
    fn forms_agree_under_conversion(
        c in 1e-3..1e3f64,
        n in 1..10_000usize,
        norm_sq in 0.0..100.0f64,
        loss_sum in 0.0..1000.0f64,
    ) {
        for reg in [Regularization::CSum(c), Regularization::CMean(c)] {
            let lambda = reg.lambda(n).unwrap();
            let f_lambda = lambda_objective(lambda, norm_sq, loss_sum, n).unwrap();
            let f_c = reg.objective(norm_sq, loss_sum, n).unwrap();
            let kappa = reg.to_lambda_form_factor(n).unwrap();
            prop_assert!((f_lambda - kappa * f_c).abs() <= 1e-12 * f_lambda.abs().max(1e-300) + 1e-15);
        }
    }

    #[test]
    fn same_minimizer_on_a_one_dimensional_problem(c in 1e-2..1e2f64, n in 1..50usize) {
        // One repeated example x = 1, y = 1: F_C(w) = ½w² + C n max(0, 1 − w) is minimized at min(1, C n),
        // and F_λ(w) = λ/2 w² + max(0, 1 − w) at min(1, 1/λ): the same point when λ = 1/(C n).
        let lambda = Regularization::CSum(c).lambda(n).unwrap();
        let w_c = (c * n as f64).min(1.0);
        let w_l = (1.0 / lambda.get()).min(1.0);
        prop_assert!((w_c - w_l).abs() < 1e-12);
        prop_assert!(Lambda::new(lambda.get()).is_ok());
    }
}
