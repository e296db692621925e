//! The costs a chain or graph trains with: the Hamming loss, or the class-weighted one, and the refusal of
//! weights that leave no loss at all.

use super::*;

/// The chain space of `width` unary features over `l` tags, shaped by `shape`: the Hamming loss, or with
/// class weights (tag numbers 1-based, as in svm_hmm files) the weighted Hamming loss, where a mistake at a
/// token whose true tag is `k` costs `k`'s weight (1 for the tags not named).
pub(super) fn chain_space(
    class_weights: &[(f64, f64)],
    width: usize,
    l: usize,
    shape: ChainShape,
) -> Result<ChainSpace, Error> {
    let shaped = |space: ChainSpace| {
        let space = space.with_edge_features(shape.edge_features);
        if shape.second_order {
            space.with_second_order()
        } else {
            space
        }
    };
    Ok(shaped(ChainSpace::with_costs(
        width,
        tag_costs(class_weights, l)?,
        true,
    )?))
}

/// The per-token cost matrix of `l` tags: 0-1, or with class weights (tag numbers 1-based) a mistake at a
/// token whose true tag is `k` costing `k`'s weight (1 for the tags not named).
pub(super) fn tag_costs(
    class_weights: &[(f64, f64)],
    l: usize,
) -> Result<maxmargin_struct::CostMatrix, Error> {
    weighted_costs(class_weights, l, 1)
}

/// The per-node cost matrix of `l` labels numbered from `first` (1 for svm_hmm tags, 0 for graph labels):
/// 0-1, or with class weights a mistake where the truth is `k` costing `k`'s weight (1 for those not named).
pub(super) fn weighted_costs(
    class_weights: &[(f64, f64)],
    l: usize,
    first: usize,
) -> Result<maxmargin_struct::CostMatrix, Error> {
    if class_weights.is_empty() {
        return Ok(maxmargin_struct::CostMatrix::zero_one(l)?);
    }
    let mut weights = vec![1.0; l];
    for &(tag, weight) in class_weights {
        let k = tag - first as f64;
        if !(k.fract() == 0.0 && k >= 0.0 && k < l as f64) {
            let (what, reason) = if first == 0 {
                ("labels", "names a label the training data does not have")
            } else {
                ("tags", "names a tag the training data does not have")
            };
            return Err(OptimError::InvalidParam {
                name: "class weight",
                value: format!(
                    "{tag} (the {what} are numbered {first} to {})",
                    l - 1 + first
                ),
                reason,
            }
            .into());
        }
        weights[k as usize] = weight;
    }
    Ok(maxmargin_struct::CostMatrix::from_fn(l, |a, b| {
        if a == b { 0.0 } else { weights[a] }
    })?)
}

/// Refuses weights that leave no loss: every labelled part (a token's tag, a node's label numbered from
/// `first`, each with its node weight where the data gives one) weighted 0 by `class_weights` (1 for a label
/// not named) times its own weight, as multiclass class weights of 0 for every class are refused: the model
/// would be w = 0, and would say "converged" (a user's probe). Over ranks, `agree` turns this process's
/// `[parts, parts weighted above 0]` into every rank's sums.
pub(super) fn some_part_weighted(
    class_weights: &[(f64, f64)],
    parts: impl IntoIterator<Item = (u32, f64)>,
    first: u32,
    agree: impl FnOnce(&mut [f64; 2]) -> Result<(), Error>,
) -> Result<(), Error> {
    let weight = |label: u32| {
        (class_weights.iter())
            .find(|(t, _)| *t == f64::from(label) + f64::from(first))
            .map_or(1.0, |(_, w)| *w)
    };
    let mut counts = [0.0; 2];
    for (label, own) in parts {
        counts[0] += 1.0;
        counts[1] += f64::from(u8::from(weight(label) * own > 0.0));
    }
    agree(&mut counts)?;
    if counts[0] == 0.0 || counts[1] > 0.0 {
        return Ok(());
    }
    Err(OptimError::InvalidParam {
        name: "class weights",
        value: format!(
            "0 for every one of the {} tokens or nodes (times their node weights where the graphs give them)",
            counts[0]
        ),
        reason: "must give some token or node a weight above 0 (with none, the model would be w = 0)",
    }
    .into())
}

/// [`some_part_weighted`]'s agreement for one process.
pub(super) fn alone(_: &mut [f64; 2]) -> Result<(), Error> {
    Ok(())
}
