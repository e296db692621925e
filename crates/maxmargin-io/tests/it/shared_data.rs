//! Every binary dataset of the shared data directory loads, with the counts its SOURCE.md states.
//!
//! The directory is `MAXMARGIN_DATA` or `../shared/data` beside the repository. Where neither exists (a
//! fresh machine without the shared folder) the test says so and passes, except under `CI`, where the data
//! is always laid out and its absence is a failure.

use maxmargin_io::libsvm::{BinaryLabels, read};
use std::path::PathBuf;

fn data_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("MAXMARGIN_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"));
    if dir.is_dir() {
        Some(dir)
    } else {
        assert!(
            std::env::var_os("CI").is_none(),
            "shared data not found at {}",
            dir.display()
        );
        eprintln!("shared data not found at {}; skipping", dir.display());
        None
    }
}

#[test]
fn binary_datasets_load_with_their_counts() {
    let Some(dir) = data_dir() else { return };
    let cases = [
        ("a9a/a9a.gz", 32_561, 123),
        ("a9a/a9a.t.gz", 16_281, 123),
        ("mushrooms/mushrooms", 8_124, 112),
        ("phishing/phishing.gz", 11_055, 68),
        ("heart_scale/heart_scale", 270, 13),
        ("breast-cancer_scale/breast-cancer_scale", 683, 10),
        ("reuters_lasvm/reuters.trn.gz", 7_770, 8_315),
        ("reuters_lasvm/reuters.tst.gz", 3_299, 8_315),
    ];
    for (file, n, max_features) in cases {
        let path = dir.join(file);
        let d = read(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.n_samples(), n, "{file}");
        assert!(
            d.x.n_features() <= max_features && d.x.n_features() > 0,
            "{file}: {}",
            d.x.n_features()
        );
        let m = BinaryLabels::from_labels(&path, &d.labels).unwrap_or_else(|e| panic!("{e}"));
        assert!(m.negative < m.positive);
        assert_eq!(m.targets(&d).unwrap().len(), n);
    }
}
