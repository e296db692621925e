//! Bad input gives a typed error, never a panic.

use maxmargin_core::vector::SparseVec;
use maxmargin_struct::{
    ChainSpace, CostMatrix, MulticlassSpace, MultilabelSpace, OutputSpace, PerPositionSpace,
    PositionInput, StructError,
};

fn sv(v: &[f64]) -> SparseVec {
    SparseVec::from_dense(v).unwrap()
}

#[test]
fn chain_errors() {
    let space = ChainSpace::new(2, 3).unwrap();
    let w = vec![0.0; space.dim()];
    let x = vec![sv(&[1.0, 0.0]), sv(&[0.0, 1.0])];
    assert_eq!(
        space.loss_augmented(&w, &x, &vec![0, 3]).unwrap_err(),
        StructError::LabelOutOfRange {
            position: 1,
            label: 3,
            n_labels: 3
        }
    );
    assert_eq!(
        space.loss_augmented(&w, &x, &vec![0]).unwrap_err(),
        StructError::LengthMismatch {
            what: "labels",
            expected: 2,
            got: 1
        }
    );
    assert_eq!(
        space.decode(&w, &vec![]).unwrap_err(),
        StructError::EmptySequence
    );
    assert_eq!(
        space.check_input(&vec![]).unwrap_err(),
        StructError::EmptySequence
    );
    assert_eq!(
        space.decode(&w[1..], &x).unwrap_err(),
        StructError::LengthMismatch {
            what: "weights",
            expected: space.dim(),
            got: space.dim() - 1
        }
    );
    let too_wide = vec![sv(&[1.0, 0.0, 0.0, 1.0])];
    assert_eq!(
        space.check_input(&too_wide).unwrap_err(),
        StructError::FeatureOutOfRange {
            position: 0,
            index: 3,
            n_features: 2
        }
    );
    // Decoding refuses them too, as the trait says (issue 25): the facade drops features a model has never
    // seen before it decodes, and counts them in a warning.
    assert!(matches!(
        space.decode(&w, &too_wide),
        Err(StructError::FeatureOutOfRange { index: 3, .. })
    ));
}

#[test]
fn space_definition_errors() {
    assert!(matches!(
        ChainSpace::new(0, 2),
        Err(StructError::Empty { .. })
    ));
    assert!(matches!(
        MulticlassSpace::new(3, 0),
        Err(StructError::Empty { .. })
    ));
    assert!(matches!(
        CostMatrix::new(vec![vec![0.0, f64::NAN], vec![1.0, 0.0]]),
        Err(StructError::InvalidCost { row: 0, col: 1, .. })
    ));
    assert!(matches!(
        CostMatrix::new(vec![vec![0.0, 1.0], vec![1.0]]),
        Err(StructError::LengthMismatch { .. })
    ));
    assert!(matches!(
        MultilabelSpace::weighted(2, vec![1.0, -1.0]),
        Err(StructError::InvalidCost { .. })
    ));
}

#[test]
fn other_spaces_errors() {
    let m = MulticlassSpace::new(2, 3).unwrap();
    assert!(matches!(
        m.loss_augmented(&[0.0; 6], &sv(&[1.0]), &7),
        Err(StructError::LabelOutOfRange { label: 7, .. })
    ));
    let ml = MultilabelSpace::new(2, 3).unwrap();
    assert!(matches!(
        ml.loss_augmented(&[0.0; 6], &sv(&[1.0]), &vec![true]),
        Err(StructError::LengthMismatch { .. })
    ));
    let pp = PerPositionSpace::new(2, 3).unwrap();
    let input = PositionInput {
        features: vec![sv(&[1.0]), sv(&[1.0])],
        allowed: Some(vec![vec![0, 2], vec![1]]),
    };
    assert_eq!(
        pp.loss_augmented(&[0.0; 6], &input, &vec![1, 1])
            .unwrap_err(),
        StructError::LabelNotAllowed {
            position: 0,
            label: 1
        }
    );
    let bad_sets = PositionInput {
        features: vec![sv(&[1.0])],
        allowed: Some(vec![vec![]]),
    };
    assert!(matches!(
        pp.check_input(&bad_sets),
        Err(StructError::Empty { .. })
    ));
    let empty = PositionInput {
        features: vec![],
        allowed: None,
    };
    assert_eq!(
        pp.decode(&[0.0; 6], &empty).unwrap_err(),
        StructError::EmptySequence
    );
}

/// Issue 25: a feature index beyond a space's dimension is refused by `decode` and `loss_augmented` as by
/// `check_input` (multiclass decoding returned class 0 and loss-augmented inference a violation).
#[test]
fn features_beyond_the_dimension_are_refused_by_inference_too() {
    use maxmargin_struct::BinarySpace;
    let wide = sv(&[0.0, 0.0, 1.0]);
    let refused = |e: StructError| {
        assert!(
            matches!(
                e,
                StructError::FeatureOutOfRange {
                    index: 2,
                    n_features: 2,
                    ..
                }
            ),
            "{e:?}"
        );
    };
    let b = BinarySpace::new(2).unwrap();
    let w = vec![0.0; b.dim()];
    refused(b.decode(&w, &wide).unwrap_err());
    refused(b.loss_augmented(&w, &wide, &1).unwrap_err());
    let m = MulticlassSpace::new(2, 3).unwrap();
    let w = vec![0.0; m.dim()];
    refused(m.decode(&w, &wide).unwrap_err());
    refused(m.loss_augmented(&w, &wide, &0).unwrap_err());
    let l = MultilabelSpace::new(2, 3).unwrap();
    let w = vec![0.0; l.dim()];
    refused(l.decode(&w, &wide).unwrap_err());
    refused(
        l.loss_augmented(&w, &wide, &vec![true, false, false])
            .unwrap_err(),
    );
    let c = ChainSpace::new(2, 3).unwrap();
    let w = vec![0.0; c.dim()];
    let x = vec![sv(&[1.0]), wide.clone()];
    refused(c.decode(&w, &x).unwrap_err());
    refused(c.loss_augmented(&w, &x, &vec![0, 1]).unwrap_err());
}
