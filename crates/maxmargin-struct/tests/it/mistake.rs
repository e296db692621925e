//! The common mistake: using plain decoding where loss-augmented inference is needed.

use maxmargin_core::vector::SparseVec;
use maxmargin_struct::{CostMatrix, MulticlassSpace, OutputSpace};

/// Three classes, truth 0. Class 1 scores highest but costs little; class 2 scores a bit lower but costs
/// a lot. The plain maximizer (1) is not the most violating output (2), and a hinge computed from the
/// decoded output is too small.
#[test]
fn decoding_is_not_loss_augmented_inference() {
    let cost = CostMatrix::new(vec![
        vec![0.0, 0.1, 5.0],
        vec![1.0, 0.0, 1.0],
        vec![1.0, 1.0, 0.0],
    ])
    .unwrap();
    let space = MulticlassSpace::with_costs(1, cost).unwrap();
    let x = SparseVec::from_dense(&[1.0]).unwrap();
    let w = [0.0, 2.0, 1.0]; // scores: class 0 → 0, class 1 → 2, class 2 → 1
    let y = 0u32;
    let decoded = space.decode(&w, &x).unwrap();
    let v = space.loss_augmented(&w, &x, &y).unwrap();
    assert_eq!(decoded, 1);
    assert_eq!(v.output, 2);
    // The true hinge: Δ(0,2) + s(2) − s(0) = 5 + 1 − 0 = 6.
    assert_eq!(v.hinge, 6.0);
    // The wrong hinge from the decoded output: Δ(0,1) + s(1) − s(0) = 0.1 + 2 = 2.1 < 6.
    let wrong = space.loss(&y, &decoded) + space.score(&w, &x, &decoded) - space.score(&w, &x, &y);
    assert!(wrong < v.hinge, "{wrong} should be below {}", v.hinge);
    assert!((wrong - 2.1).abs() < 1e-12);
}
