//! The data each measurement runs on: the seeded split, scaling, the rows with the bias feature, the
//! accuracies of a model and the objective of any weights, and the cached optimum the targets are measured
//! from.

use super::*;

/// Seeded 80/20 split of `data`.
pub(super) fn split(data: &LabeledData) -> (LabeledData, LabeledData) {
    let n = data.n_samples();
    let order = maxmargin::optim::random::permutation(n, 2026);
    let cut = n * 4 / 5;
    let mut train: Vec<usize> = order[..cut].to_vec();
    let mut test: Vec<usize> = order[cut..].to_vec();
    train.sort_unstable();
    test.sort_unstable();
    let subset = |rows: &[usize]| {
        let mut d = data.select(rows);
        d.qids = vec![None; rows.len()];
        d.lines = rows.iter().map(|&i| i + 1).collect();
        d
    };
    (subset(&train), subset(&test))
}

pub(super) fn scaled(data: LabeledData, s: f64) -> LabeledData {
    if s == 1.0 {
        return data;
    }
    let mut x = SparseRows::new();
    for r in data.x.rows() {
        let v: Vec<f64> = r.values().iter().map(|v| v * s).collect();
        // Same indices, increasing as before: cannot fail.
        let _ = x.push_row(r.indices(), &v);
    }
    x.set_n_features_at_least(data.x.n_features());
    LabeledData { x, ..data }
}

/// Fraction of `y` (±1) predicted right by `sign(⟨w, x⟩ + b)`.
pub(super) fn binary_accuracy(x: &SparseRows, y: &[f64], w: &LinearWeights) -> f64 {
    let right = x
        .rows()
        .zip(y)
        .filter(|(r, y)| {
            let f: f64 = r
                .iter()
                .filter(|(j, _)| *j < w.w.len())
                .map(|(j, v)| v * w.w[j])
                .sum::<f64>()
                + w.b;
            (f > 0.0) == (**y > 0.0)
        })
        .count();
    right as f64 / y.len().max(1) as f64
}

/// The rows with the constant feature appended at `d`, features at or beyond `d` dropped.
pub(super) fn with_bias(x: &SparseRows, d: usize) -> Vec<SparseVec> {
    x.rows()
        .map(|r| {
            let (mut idx, mut val): (Vec<u32>, Vec<f64>) = r
                .iter()
                .filter(|(j, _)| *j < d)
                .map(|(j, v)| (j as u32, v))
                .unzip();
            idx.push(d as u32);
            val.push(1.0);
            SparseVec::new(idx, val).unwrap_or_default()
        })
        .collect()
}

/// Fraction of classes right by `argmax_m ⟨w_m, x⟩` (label-major weights over `width` inputs).
pub(super) fn multiclass_accuracy(x: &[SparseVec], y: &[u32], w: &[f64], k: usize) -> f64 {
    let width = w.len() / k;
    let right = x
        .iter()
        .zip(y)
        .filter(|(x, y)| {
            let mut best = (0, f64::NEG_INFINITY);
            for m in 0..k {
                let s = x.as_row().dot(&w[m * width..(m + 1) * width]);
                if s > best.1 {
                    best = (m, s);
                }
            }
            best.0 == **y as usize
        })
        .count();
    right as f64 / y.len().max(1) as f64
}

/// Objective of a binary problem given by `(x, y)` for any weights.
pub(super) fn binary_objective(
    x: &SparseRows,
    y: &[f64],
    lambda: Lambda,
    w: &LinearWeights,
) -> f64 {
    BinaryProblem::new(x, y, lambda, Bias::Feature).map_or(f64::NAN, |p| p.objective(w))
}

/// The cached optimum of `key`, or `compute()` stored under it.
pub(super) fn cached(
    key: &str,
    compute: impl FnOnce() -> Option<(f64, f64)>,
) -> Option<(f64, f64)> {
    let path = out_dir().join("optimum.json");
    let mut cache: BTreeMap<String, Optimum> = std::fs::read_to_string(&path)
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default();
    if let Some(v) = cache.get(key) {
        return Some((v.objective, v.gap.unwrap_or(f64::NAN)));
    }
    let v = compute()?;
    cache.insert(
        key.into(),
        Optimum {
            objective: v.0,
            gap: v.1.is_finite().then_some(v.1),
        },
    );
    let _ = std::fs::create_dir_all(out_dir());
    if let Ok(s) = serde_json::to_string_pretty(&cache) {
        let _ = std::fs::write(&path, s);
    }
    Some(v)
}
