//! Every binary dataset of the shared data directory loads, with the counts its SOURCE.md states.
//!
//! The directory is `MAXMARGIN_DATA` or `../shared/data` beside the repository. Where neither exists (a
//! fresh machine without the shared folder) the test says so and passes, except under `CI`, where the data
//! is always laid out and its absence is a failure.

use maxmargin_io::libsvm::{BinaryLabels, read};
use std::path::PathBuf;

fn data_dir() -> Option<PathBuf> {
    maxmargin_core::testing::shared_data(env!("CARGO_MANIFEST_DIR"))
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

#[test]
fn structured_datasets_load_with_their_counts() {
    let Some(dir) = data_dir() else { return };
    // Multiclass LIBSVM.
    for (file, n, d, k) in [
        ("letter/letter.scale.gz", 15_000, 16, 26),
        ("letter/letter.scale.t.gz", 5_000, 16, 26),
        ("pendigits/pendigits", 7_494, 16, 10),
        ("pendigits/pendigits.t", 3_498, 16, 10),
    ] {
        let data = read(&dir.join(file)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(data.n_samples(), n, "{file}");
        assert!(data.x.n_features() <= d, "{file}");
        let mut classes: Vec<i64> = data.labels.iter().map(|&l| l as i64).collect();
        classes.sort_unstable();
        classes.dedup();
        assert_eq!(classes.len(), k, "{file}");
    }
    // Multilabel.
    for (file, n, d, l) in [
        ("yeast/yeast.train.libsvm.gz", 1_500, 103, 14),
        ("yeast/yeast.test.libsvm.gz", 917, 103, 14),
        ("scene/scene.train.libsvm.gz", 1_211, 294, 6),
        ("scene/scene.test.libsvm.gz", 1_196, 294, 6),
    ] {
        let data =
            maxmargin_io::multilabel::read(&dir.join(file)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(data.n_samples(), n, "{file}");
        assert!(data.x.n_features() <= d, "{file}");
        assert_eq!(maxmargin_io::multilabel::n_labels(&data), l, "{file}");
    }
    // svm_hmm sequences: OCR fold 0 and folds 1-9.
    for (file, words, letters) in [
        ("ocr_letters/ocr.fold0.svmhmm.gz", 626, None),
        ("ocr_letters/ocr.folds1-9.svmhmm.gz", 6_251, None),
    ] {
        let data = maxmargin_io::svm_hmm::read(&dir.join(file)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(data.n_sequences(), words, "{file}");
        assert!(data.n_features <= 128 && data.n_labels <= 26, "{file}");
        let _: Option<usize> = letters;
    }
    let total = [
        "ocr_letters/ocr.fold0.svmhmm.gz",
        "ocr_letters/ocr.folds1-9.svmhmm.gz",
    ]
    .iter()
    .map(|f| {
        maxmargin_io::svm_hmm::read(&dir.join(f))
            .map(|d| d.n_tokens())
            .unwrap_or(0)
    })
    .sum::<usize>();
    assert_eq!(total, 52_152, "letters in all folds");
    // CoNLL-2000 chunking.
    let train = maxmargin_io::conll::read(&dir.join("conll2000/train.txt.gz"))
        .unwrap_or_else(|e| panic!("{e}"));
    let test = maxmargin_io::conll::read(&dir.join("conll2000/test.txt.gz"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((train.len(), test.len()), (8_936, 2_012));
    assert_eq!(train.iter().map(|s| s.len()).sum::<usize>(), 211_727);
    assert_eq!(test.iter().map(|s| s.len()).sum::<usize>(), 47_377);
    let map = maxmargin_io::conll::FeatureMap::fit(&train);
    assert_eq!(map.n_tags(), 22);
    let x = map.features(&test[0]);
    assert_eq!(x.len(), test[0].len());
    assert!(x.iter().all(|v| v.as_row().nnz() > 10));
}
