//! Fixtures of the worked examples, for tests, doctests and the demo.

use maxmargin_core::vector::SparseRows;

/// The Pegasos hand table's two points: A = (2, 1) with +1 and B = (−1, −2) with −1.
///
/// # Examples
/// ```
/// let (x, y) = maxmargin::testing::two_points();
/// assert_eq!((x.n_rows(), y), (2, vec![1.0, -1.0]));
/// ```
pub fn two_points() -> (SparseRows, Vec<f64>) {
    dense(&[(&[2.0, 1.0], 1.0), (&[-1.0, -2.0], -1.0)])
}

/// The linear-classifier lesson's six points on a line: (−2.0, −1), (−1.3, −1), (−0.8, −1), (0.6, 1),
/// (1.1, 1), (1.8, 1).
pub fn lesson_rows() -> (SparseRows, Vec<f64>) {
    dense(&[
        (&[-2.0], -1.0),
        (&[-1.3], -1.0),
        (&[-0.8], -1.0),
        (&[0.6], 1.0),
        (&[1.1], 1.0),
        (&[1.8], 1.0),
    ])
}

fn dense(rows: &[(&[f64], f64)]) -> (SparseRows, Vec<f64>) {
    let mut x = SparseRows::new();
    for (r, _) in rows {
        let idx: Vec<u32> = (0..r.len() as u32)
            .filter(|&j| r[j as usize] != 0.0)
            .collect();
        let val: Vec<f64> = idx.iter().map(|&j| r[j as usize]).collect();
        // ok: fixed, finite, sorted data.
        x.push_row(&idx, &val).expect("fixture rows are valid");
        x.set_n_features_at_least(r.len());
    }
    (x, rows.iter().map(|r| r.1).collect())
}

/// The folder of the shared datasets for tests: `MAXMARGIN_DATA`, else `shared/data` beside the checkout of
/// the crate whose `CARGO_MANIFEST_DIR` is `manifest_dir` (a crate under `crates/`). `None` when it is not
/// there, so a test can skip; under `CI` a missing folder is a failure instead.
///
/// # Panics
/// When `CI` is set and the folder is missing.
pub fn shared_data(manifest_dir: &str) -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("MAXMARGIN_DATA")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(manifest_dir).join("../../../shared/data"));
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "shared data not found at {}",
        dir.display()
    );
    eprintln!("shared data not found at {}; skipping", dir.display());
    None
}

pub mod fuzz;
