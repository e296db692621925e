//! Sequences and what the per-position and chain spaces share: the unary scores and features of a
//! sequence, and the enumeration of label sequences for brute force.

use crate::error::StructError;
use crate::oracle::MAX_ENUMERATED;
use maxmargin_core::vector::SparseVec;

/// A sequence input: one sparse feature vector per position.
pub type Sequence = Vec<SparseVec>;

/// Checks a labelling of `positions` positions (a sequence's tokens, a graph's nodes): one label each, all
/// below `n_labels`.
pub(crate) fn check_labels(
    y: &[u32],
    positions: usize,
    n_labels: usize,
) -> Result<(), StructError> {
    if y.len() != positions {
        return Err(StructError::LengthMismatch {
            what: "labels",
            expected: positions,
            got: y.len(),
        });
    }
    match y.iter().enumerate().find(|(_, l)| **l as usize >= n_labels) {
        Some((position, &label)) => Err(StructError::LabelOutOfRange {
            position,
            label,
            n_labels,
        }),
        None => Ok(()),
    }
}

/// `u[l] += Σ_j x_j w[j·L + l]` for every label `l`: the unary scores of one position.
pub(crate) fn add_unary(
    w: &[f64],
    x: &maxmargin_core::vector::SparseVec,
    n_labels: usize,
    u: &mut [f64],
) {
    let n_features = w.len() / n_labels;
    for (j, v) in x.as_row().iter() {
        if j < n_features {
            for (ul, wl) in u.iter_mut().zip(&w[j * n_labels..(j + 1) * n_labels]) {
                *ul += v * wl;
            }
        }
    }
}

/// Calls `visit(j·L + y_t, v)` for every feature `(j, v)` of every position `t` (features `>= n_features`
/// dropped): the unary part of `ψ(x, y)`, shared by the per-position and chain spaces.
pub(crate) fn visit_unary(
    x: &[maxmargin_core::vector::SparseVec],
    y: &[u32],
    n_features: usize,
    n_labels: usize,
    visit: &mut dyn FnMut(usize, f64),
) {
    for (xt, &l) in x.iter().zip(y) {
        for (j, v) in xt.as_row().iter() {
            if j < n_features {
                visit(j * n_labels + l as usize, v);
            }
        }
    }
}

/// The unary part of `ψ(x, y) − ψ(x, ŷ)`: `±x_t` at the positions whose labels differ (the rest cancel), as
/// [`visit_unary`] lays the entries out.
pub(crate) fn visit_unary_difference(
    x: &[maxmargin_core::vector::SparseVec],
    (y, y_hat): (&[u32], &[u32]),
    n_features: usize,
    n_labels: usize,
    visit: &mut dyn FnMut(usize, f64),
) {
    for ((xt, &a), &b) in x.iter().zip(y).zip(y_hat) {
        if a != b {
            for (j, v) in xt.as_row().iter().filter(|&(j, _)| j < n_features) {
                visit(j * n_labels + a as usize, v);
                visit(j * n_labels + b as usize, -v);
            }
        }
    }
}

/// `Σ_t ⟨W_{·, y_t}, x_t⟩`, the unary part of the score, for feature-major unary weights `w[j·L + l]`.
pub(crate) fn unary_score(
    w: &[f64],
    x: &[maxmargin_core::vector::SparseVec],
    y: &[u32],
    n_features: usize,
    n_labels: usize,
) -> f64 {
    let mut s = 0.0;
    visit_unary(x, y, n_features, n_labels, &mut |k, v| s += v * w[k]);
    s
}

/// Every sequence with position `t` taken from `sets[t]`, in lexicographic order.
pub(crate) fn product(sets: &[&[u32]]) -> Result<Vec<Vec<u32>>, StructError> {
    let count = sets.iter().try_fold(1usize, |acc, s| {
        acc.checked_mul(s.len()).filter(|&c| c <= MAX_ENUMERATED)
    });
    let Some(count) = count else {
        return Err(StructError::TooLarge {
            max: MAX_ENUMERATED,
        });
    };
    let mut out = Vec::with_capacity(count);
    let mut idx = vec![0usize; sets.len()];
    for _ in 0..count {
        out.push(idx.iter().zip(sets).map(|(&i, s)| s[i]).collect());
        for t in (0..sets.len()).rev() {
            idx[t] += 1;
            if idx[t] < sets[t].len() {
                break;
            }
            idx[t] = 0;
        }
    }
    Ok(out)
}
