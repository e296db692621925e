//! The one error type of `maxmargin-struct`.

/// What can be wrong with an example, an output or a space's definition.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum StructError {
    /// A label outside the space's label set.
    #[error("label {label} at position {position} is outside the label set 0..{n_labels}")]
    LabelOutOfRange {
        /// The position (0 for unstructured outputs).
        position: usize,
        /// The label.
        label: u32,
        /// The number of labels.
        n_labels: usize,
    },
    /// A label the space forbids at that position.
    #[error("label {label} is not allowed at position {position}")]
    LabelNotAllowed {
        /// The position.
        position: usize,
        /// The label.
        label: u32,
    },
    /// A feature index the model has no weight for.
    #[error(
        "feature index {index} at position {position} is beyond the model's {n_features} features"
    )]
    FeatureOutOfRange {
        /// The position (0 for unstructured inputs).
        position: usize,
        /// The index (0-based).
        index: usize,
        /// The model's number of features.
        n_features: usize,
    },
    /// A sequence with no positions.
    #[error("empty sequence: a sequence needs at least one position")]
    EmptySequence,
    /// Two things that must match in length do not.
    #[error("{what}: expected length {expected}, got {got}")]
    LengthMismatch {
        /// What.
        what: &'static str,
        /// Expected length.
        expected: usize,
        /// Actual length.
        got: usize,
    },
    /// A cost that is negative, not finite, or nonzero on the diagonal.
    #[error("cost[{row}][{col}] must be finite and >= 0 (0 on the diagonal), got {value}")]
    InvalidCost {
        /// True label.
        row: usize,
        /// Predicted label.
        col: usize,
        /// The cost.
        value: f64,
    },
    /// A space with no labels or no features.
    #[error("{what} must be at least 1")]
    Empty {
        /// What is empty.
        what: &'static str,
    },
    /// Too many outputs to enumerate.
    #[error("the output space has more than {max} outputs; enumerate smaller instances")]
    TooLarge {
        /// The limit.
        max: usize,
    },
    /// A graph whose edges are not a simple graph over its nodes, or whose edge features are unusable.
    #[error("edge {edge}: {why}")]
    InvalidGraph {
        /// The edge's position in the graph's edge list (0-based).
        edge: usize,
        /// What is wrong with it.
        why: String,
    },
    /// A node weight of the loss that is negative or not finite.
    #[error("node {node}: weight {value} is not a finite number ≥ 0")]
    InvalidNodeWeight {
        /// The node (0-based).
        node: usize,
        /// The weight given.
        value: f64,
    },
    /// Exact tree inference on a graph with a cycle.
    #[error(
        "edge {edge} closes a cycle: exact-tree inference needs a forest (use trws or ad3, or brute-force on small graphs; predict and eval take --inference)"
    )]
    NotAForest {
        /// The edge that closes the cycle (0-based).
        edge: usize,
    },
    /// Something the space does not offer.
    #[error("{what}: {why}")]
    Unsupported {
        /// What was asked.
        what: &'static str,
        /// Why it is not available.
        why: &'static str,
    },
    /// A score decoding compares is NaN or infinite: weights times features beyond `f64::MAX` (a model with
    /// weights near 1e308, or huge feature values). No labelling can be read from such scores.
    #[error(
        "the scores at position {position} are not finite numbers (the weights times its features overflow a \
         64-bit float); no labelling can be read from them"
    )]
    NonFiniteScore {
        /// The first position (0-based) whose scores overflow, or the last when only the total does.
        position: usize,
    },
    /// An error from the math core.
    #[error(transparent)]
    Core(#[from] maxmargin_core::CoreError),
    /// An error of a user's own output space, in its own words.
    #[error("{0}")]
    Custom(String),
}

/// Checks `w` against a space's dimension.
pub(crate) fn check_weights(w: &[f64], dim: usize) -> Result<(), StructError> {
    if w.len() == dim {
        Ok(())
    } else {
        Err(StructError::LengthMismatch {
            what: "weights",
            expected: dim,
            got: w.len(),
        })
    }
}

/// What an oracle call checks first: `w`'s length against the space's dimension, then the input.
pub(crate) fn check_call<S: crate::OutputSpace + ?Sized>(
    space: &S,
    w: &[f64],
    x: &S::Input,
) -> Result<(), StructError> {
    check_weights(w, space.dim())?;
    space.check_input(x)
}

/// [`check_call`], then the truth `y` against `x`: what a loss-augmented call checks first.
pub(crate) fn check_labelled_call<S: crate::OutputSpace + ?Sized>(
    space: &S,
    w: &[f64],
    x: &S::Input,
    y: &S::Output,
) -> Result<(), StructError> {
    check_call(space, w, x)?;
    space.check_output(x, y)
}

/// Checks every feature index of `x` against `n_features`.
pub(crate) fn check_features(
    x: &maxmargin_core::vector::SparseVec,
    position: usize,
    n_features: usize,
) -> Result<(), StructError> {
    match x.as_row().indices().last() {
        Some(&j) if j as usize >= n_features => Err(StructError::FeatureOutOfRange {
            position,
            index: j as usize,
            n_features,
        }),
        _ => Ok(()),
    }
}

/// [`StructError::Empty`] naming `what` when its count `n` is 0.
pub(crate) fn at_least_one(n: usize, what: &'static str) -> Result<(), StructError> {
    if n == 0 {
        return Err(StructError::Empty { what });
    }
    Ok(())
}
