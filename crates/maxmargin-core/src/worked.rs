//! The worked examples' data: the Pegasos hand table's two points and the linear-classifier lesson's six
//! points on a line, which the guide, the demo and the tests compute by hand.

use crate::vector::SparseRows;

fn fixed(rows: &[(&[f64], f64)]) -> (SparseRows, Vec<f64>) {
    let dense: Vec<&[f64]> = rows.iter().map(|r| r.0).collect();
    // ok: the fixed, finite rows below.
    let x = SparseRows::from_dense_rows(&dense).expect("the worked examples' rows are finite");
    (x, rows.iter().map(|r| r.1).collect())
}

/// The Pegasos hand table's two points: A = (2, 1) with +1 and B = (−1, −2) with −1.
///
/// # Examples
/// ```
/// let (x, y) = maxmargin_core::worked::two_points();
/// assert_eq!((x.n_rows(), y), (2, vec![1.0, -1.0]));
/// ```
pub fn two_points() -> (SparseRows, Vec<f64>) {
    fixed(&[(&[2.0, 1.0], 1.0), (&[-1.0, -2.0], -1.0)])
}

/// The linear-classifier lesson's six points on a line: (−2.0, −1), (−1.3, −1), (−0.8, −1), (0.6, 1),
/// (1.1, 1), (1.8, 1).
pub fn lesson_rows() -> (SparseRows, Vec<f64>) {
    fixed(&[
        (&[-2.0], -1.0),
        (&[-1.3], -1.0),
        (&[-0.8], -1.0),
        (&[0.6], 1.0),
        (&[1.1], 1.0),
        (&[1.8], 1.0),
    ])
}
