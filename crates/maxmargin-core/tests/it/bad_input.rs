//! Bad input gives a typed error, never a panic.

use maxmargin_core::CoreError;
use maxmargin_core::affine::AffineMax;
use maxmargin_core::objective::{Lambda, Regularization};
use maxmargin_core::structured::{decode, structured_hinge};
use maxmargin_core::vector::{SparseRows, SparseVec, dot};

fn check<T: std::fmt::Debug>(got: Result<T, CoreError>, expected: CoreError) {
    match got {
        Err(e) => {
            assert_eq!(e, expected);
            let msg = e.to_string();
            assert!(!msg.ends_with('.'), "message ends with a period: {msg}");
        }
        Ok(v) => panic!("expected {expected:?}, got Ok({v:?})"),
    }
}

#[test]
fn errors_are_typed() {
    // NaN compares unequal, so match its variant separately.
    assert!(matches!(
        structured_hinge(&[0.0, f64::NAN], &[0.0, 1.0], 0, 0.0),
        Err(CoreError::NonFinite {
            what: "score",
            index: 1,
            ..
        })
    ));
    check(
        structured_hinge(&[0.0, f64::INFINITY], &[0.0, 1.0], 0, 0.0),
        CoreError::NonFinite {
            what: "score",
            index: 1,
            value: f64::INFINITY,
        },
    );
    check(
        structured_hinge(&[0.0, 1.0], &[0.0, -1.0], 0, 0.0),
        CoreError::NegativeLoss {
            index: 1,
            value: -1.0,
        },
    );
    check(
        structured_hinge(&[0.0, 1.0], &[0.0, 1.0], 2, 0.0),
        CoreError::TruthOutOfRange { truth: 2, len: 2 },
    );
    check(
        structured_hinge(&[0.0, 1.0], &[0.0], 0, 0.0),
        CoreError::LengthMismatch {
            what: "losses",
            expected: 2,
            got: 1,
        },
    );
    check(
        structured_hinge(&[0.0, 1.0], &[0.5, 1.0], 0, 0.0),
        CoreError::NonzeroTruthLoss(0.5),
    );
    check(structured_hinge(&[], &[], 0, 0.0), CoreError::EmptyFamily);
    check(
        structured_hinge(&[0.0], &[0.0], 0, -1.0),
        CoreError::InvalidTolerance(-1.0),
    );
    check(decode(&[], 0.0), CoreError::EmptyFamily);
    check(
        AffineMax::new(vec![(0.0, vec![1.0]), (0.0, vec![1.0, 2.0])]),
        CoreError::LengthMismatch {
            what: "slope",
            expected: 1,
            got: 2,
        },
    );
    let f = AffineMax::new(vec![(0.0, vec![1.0])]).unwrap();
    check(
        f.value(&[1.0, 2.0]),
        CoreError::LengthMismatch {
            what: "point",
            expected: 1,
            got: 2,
        },
    );
    check(
        dot(&[1.0], &[1.0, 2.0]),
        CoreError::LengthMismatch {
            what: "dot operand",
            expected: 1,
            got: 2,
        },
    );
    check(
        SparseVec::new(vec![2, 1], vec![1.0, 1.0]),
        CoreError::UnsortedIndex {
            index: 1,
            previous: 2,
        },
    );
    check(
        SparseVec::new(vec![1, 1], vec![1.0, 1.0]),
        CoreError::UnsortedIndex {
            index: 1,
            previous: 1,
        },
    );
    check(
        SparseRows::new().push_row(&[0], &[]),
        CoreError::LengthMismatch {
            what: "sparse values",
            expected: 1,
            got: 0,
        },
    );
    check(
        Lambda::new(-1.0),
        CoreError::InvalidRegularization {
            name: "lambda",
            value: -1.0,
        },
    );
    check(
        Regularization::CSum(0.0).lambda(5),
        CoreError::InvalidRegularization {
            name: "C",
            value: 0.0,
        },
    );
    check(Regularization::CSum(1.0).lambda(0), CoreError::NoExamples);
}
