//! The scaling note: silent where the solvers do not slow down (unit-length tf-idf rows, whose rare words have
//! small values), given where they do (large values; common features of very different magnitudes).

use maxmargin_core::scale::{ScalerFit, Scaling, scaling_advice};
use maxmargin_core::vector::SparseRows;

/// Documents over a Zipf-like vocabulary, weighted by tf-idf and normalized to unit length.
fn tf_idf(n_docs: usize, vocabulary: usize) -> SparseRows {
    let mut state = 2026u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let docs: Vec<Vec<u32>> = (0..n_docs)
        .map(|_| {
            // Lengths from 20 to 200,000 words: in the long documents a word seen once has a tiny weight.
            let length = (20.0 * 10_000f64.powf(next().powi(4))) as usize;
            let mut words: Vec<u32> = (0..length)
                .map(|_| ((vocabulary as f64).powf(next()) as u32).min(vocabulary as u32 - 1))
                .collect();
            words.sort_unstable();
            words
        })
        .collect();
    let mut df = vec![0usize; vocabulary];
    for d in &docs {
        let mut seen = d.clone();
        seen.dedup();
        seen.iter().for_each(|&w| df[w as usize] += 1);
    }
    let mut x = SparseRows::new();
    for d in &docs {
        let (mut idx, mut val) = (Vec::new(), Vec::<f64>::new());
        for &w in d {
            if idx.last() == Some(&w) {
                *val.last_mut().unwrap() += 1.0;
            } else {
                idx.push(w);
                val.push(1.0);
            }
        }
        for (v, &w) in val.iter_mut().zip(&idx) {
            *v *= (n_docs as f64 / df[w as usize] as f64).ln() + 1.0;
        }
        let norm = val.iter().map(|v| v * v).sum::<f64>().sqrt();
        val.iter_mut().for_each(|v| *v /= norm);
        x.push_row(&idx, &val).unwrap();
    }
    x
}

#[test]
fn unit_length_tf_idf_rows_get_no_note() {
    let x = tf_idf(1000, 200_000);
    // Rare words have small values: the per-feature maxima span far more than 1e3.
    let mut maxabs = vec![0.0f64; x.n_features()];
    for r in x.rows() {
        for (j, v) in r.iter() {
            maxabs[j] = maxabs[j].max(v.abs());
        }
    }
    let used: Vec<f64> = maxabs.into_iter().filter(|m| *m > 0.0).collect();
    let (lo, hi) = used
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), &m| (a.min(m), b.max(m)));
    assert!(hi > 1e3 * lo, "{lo} {hi}");
    assert_eq!(scaling_advice(x.rows(), x.n_features()), None);
    let mut fit = ScalerFit::new(Scaling::None, x.n_features());
    x.rows().for_each(|r| fit.add(r));
    assert_eq!(fit.advice(), None);
}

#[test]
fn large_values_and_common_features_of_other_magnitudes_get_a_note() {
    let mut mixed = SparseRows::new();
    let mut large = SparseRows::new();
    for i in 0..200 {
        let t = f64::from(i) / 200.0 + 0.5;
        mixed.push_row(&[0, 1], &[1e-4 * t, 10.0 * t]).unwrap();
        large.push_row(&[0, 1], &[5000.0 * t, t]).unwrap();
    }
    let note = scaling_advice(mixed.rows(), 2).unwrap();
    assert!(note.contains("present in 5% of the rows"), "{note}");
    let note = scaling_advice(large.rows(), 2).unwrap();
    assert!(note.contains("reach 7.475e3"), "{note}");
    // A feature in one row of 200 with a small value is rare: no note.
    let mut rare = SparseRows::new();
    for i in 0..200 {
        if i == 0 {
            rare.push_row(&[0, 1], &[1.0, 1e-6]).unwrap();
        } else {
            rare.push_row(&[0], &[1.0]).unwrap();
        }
    }
    assert_eq!(scaling_advice(rare.rows(), 2), None);
    // Values to 100 over 16 features (pendigits' shape): no single value is large, but the rows' squared
    // norms are (≈ 1e5), and so is what the dual steps must cover at C = 1; unit values over as many
    // features are not.
    let mut wide = SparseRows::new();
    let mut unit = SparseRows::new();
    let cols: Vec<u32> = (0..16).collect();
    for i in 0..100 {
        let v: Vec<f64> = (0..16).map(|j| f64::from((i * 7 + j * 13) % 101)).collect();
        wide.push_row(&cols, &v).unwrap();
        let u: Vec<f64> = v.iter().map(|x| x / 100.0).collect();
        unit.push_row(&cols, &u).unwrap();
    }
    let note = scaling_advice(wide.rows(), 16).unwrap();
    assert!(note.contains("rows' squared norms reach"), "{note}");
    let mut fit = ScalerFit::new(Scaling::None, 16);
    wide.rows().for_each(|r| fit.add(r));
    assert_eq!(fit.advice(), Some(note));
    assert_eq!(scaling_advice(unit.rows(), 16), None);
}

/// Extreme values never give a non-finite or a zero factor where the feature varies: a subnormal largest
/// value or range is left as it is, and sums that overflow (standard scaling of values near 1e200) fall back
/// to the largest magnitude, so a model trained on them still sees the feature.
#[test]
fn extreme_values_keep_finite_nonzero_factors() {
    use maxmargin_core::scale::{Scaler, Scaling};
    use maxmargin_core::vector::SparseRows;
    for column in [
        [5e-324, -5e-324],
        [1e200, -1e200],
        [1e308, -1e308],
        [3.0, 3.0 + 1e-320],
    ] {
        let x = SparseRows::from_dense_rows(&[&[column[0]], &[column[1]]]).unwrap();
        for kind in [Scaling::MaxAbs, Scaling::MinMax, Scaling::Standard] {
            let s = Scaler::fit(kind, x.rows(), 2, 1).unwrap();
            let t = s.transform(&x);
            let values: Vec<f64> = t.rows().flat_map(|r| r.values().to_vec()).collect();
            assert!(
                values.iter().all(|v| v.is_finite()),
                "{kind:?} {column:?}: {values:?}"
            );
            if column[0] != column[1] && kind != Scaling::MinMax {
                assert!(s.factor[0] > 0.0, "{kind:?} {column:?}: {:?}", s.factor);
            }
        }
    }
    // A constant feature still maps to 0 under standard scaling (centred).
    let x = SparseRows::from_dense_rows(&[&[2.0], &[2.0]]).unwrap();
    let s = Scaler::fit(Scaling::Standard, x.rows(), 2, 1).unwrap();
    let t = s.transform(&x);
    assert!(t.rows().all(|r| r.values().iter().all(|&v| v == 0.0)));
}
