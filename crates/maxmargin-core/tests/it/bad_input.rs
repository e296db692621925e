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

/// A matrix read in place: the rows another owner's buffers make, checked as pushed rows are, every bad
/// row named (from 0), nothing copied until a row is added.
#[test]
fn a_matrix_read_in_place_is_the_pushed_one_and_names_its_first_bad_row() {
    use maxmargin_core::vector::SharedSlice;
    use std::sync::Arc;
    let shared =
        |idx: Vec<u32>, val: Vec<f64>| -> (Arc<dyn SharedSlice<u32>>, Arc<dyn SharedSlice<f64>>) {
            (Arc::new(idx), Arc::new(val))
        };
    let (idx, val) = shared(vec![0, 3, 1, 2], vec![1.0, -2.0, 0.5, 4.0]);
    let mut read = SparseRows::from_shared(vec![0, 2, 2, 4], idx, val, 5).unwrap();
    let mut pushed = SparseRows::new();
    pushed.push_row(&[0, 3], &[1.0, -2.0]).unwrap();
    pushed.push_row(&[], &[]).unwrap();
    pushed.push_row(&[1, 2], &[0.5, 4.0]).unwrap();
    pushed.set_n_features_at_least(5);
    assert_eq!(read, pushed);
    assert_eq!(read.clone(), pushed);
    read.push_row(&[4], &[1.0]).unwrap();
    pushed.push_row(&[4], &[1.0]).unwrap();
    assert_eq!(read, pushed);
    assert!(read.is_valid());

    let bad = |indptr: Vec<usize>, idx: Vec<u32>, val: Vec<f64>, d: usize| {
        let (i, v) = shared(idx, val);
        SparseRows::from_shared(indptr, i, v, d).map(|x| x.n_rows())
    };
    let row = |row: usize, reason: &str| CoreError::InvalidRow {
        row,
        reason: reason.into(),
    };
    check(
        bad(vec![0, 1, 3], vec![2, 1, 1], vec![1.0; 3], 3),
        row(
            1,
            "sparse indices must increase strictly: index 1 follows 1",
        ),
    );
    check(
        bad(vec![0, 2], vec![0, 7], vec![1.0; 2], 5),
        row(0, "column 7 outside 0..5"),
    );
    check(
        bad(vec![0, 1, 4], vec![0, 1, 2], vec![1.0; 3], 5),
        row(1, "offsets [1, 4) outside the 3 stored values"),
    );
    check(
        bad(vec![0, 1], vec![0, 1], vec![1.0; 2], 5),
        row(0, "the offsets end before the 2 stored values"),
    );
    check(
        bad(vec![0, 2, 1, 2], vec![0, 1], vec![1.0; 2], 5),
        row(1, "offsets [2, 1) outside the 2 stored values"),
    );
    check(
        bad(vec![1, 2], vec![0, 1], vec![1.0; 2], 5),
        row(0, "the offsets must start at 0"),
    );
    check(
        bad(vec![0, 2], vec![0, 1], vec![1.0], 5),
        row(0, "2 indices but 1 values"),
    );
    assert!(matches!(
        bad(vec![0, 1, 2], vec![0, 1], vec![1.0, f64::NAN], 5),
        Err(CoreError::InvalidRow { row: 1, .. })
    ));
}
