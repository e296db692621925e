//! The one error type of `maxmargin-optim`.

/// Everything that can be wrong with a solver's parameters or problem.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum OptimError {
    /// A parameter outside its domain.
    #[error("{name} {reason}{}", if value.is_empty() { String::new() } else { format!(", got {value}") })]
    InvalidParam {
        /// The parameter.
        name: &'static str,
        /// Its value, as text.
        value: String,
        /// What it must be.
        reason: &'static str,
    },
    /// Binary targets must be −1 or +1.
    #[error("binary target at row {index} must be -1 or +1, got {value}")]
    BadTarget {
        /// The row.
        index: usize,
        /// The target.
        value: f64,
    },
    /// Rows and targets differ in number.
    #[error("{rows} rows but {targets} targets")]
    LengthMismatch {
        /// Number of rows.
        rows: usize,
        /// Number of targets.
        targets: usize,
    },
    /// A problem with no examples.
    #[error("the training set has no examples")]
    NoExamples,
    /// Weights of the wrong length for a warm start.
    #[error(
        "the warm start's weights number {got}, where this problem has {expected} (a model of other features \
         or labels?)"
    )]
    WarmStartLength {
        /// Number of features.
        expected: usize,
        /// Length given.
        got: usize,
    },
    /// Training produced a non-finite objective (values or parameters too large for `f64`).
    #[error(
        "training produced a non-finite objective ({value}) by step {iteration} (pass {epoch:.2}): values or \
         parameters too large; nothing was saved: scale the features (--scale), or use a larger lambda, a \
         smaller C or a smaller step"
    )]
    NonFinite {
        /// Steps taken when it was seen.
        iteration: u64,
        /// Passes taken when it was seen.
        epoch: f64,
        /// The value.
        value: f64,
    },
    /// A checkpoint could not be written (the message names the file and the cause).
    #[error("checkpoint: {message}")]
    Checkpoint {
        /// What went wrong.
        message: String,
    },
    /// A budget that never stops.
    #[error("no budget set: give at least one of iterations, epochs or seconds")]
    Unbounded,
    /// A training example that does not fit the output space.
    #[error("example {index}: {source}")]
    Example {
        /// The example (0-based).
        index: usize,
        /// What is wrong with it.
        source: maxmargin_struct::StructError,
    },
    /// An output-space error.
    #[error(transparent)]
    Struct(#[from] maxmargin_struct::StructError),
    /// The QP of a cutting-plane method could not be solved.
    #[error("the cutting-plane QP failed: {0}")]
    Qp(String),
    /// A collective operation could not complete: another rank failed, or the transport did.
    #[error("rank {rank}: {message}")]
    Collective {
        /// The rank that saw it.
        rank: usize,
        /// What happened.
        message: String,
    },
    /// The rows of a streamed source could not be read (the source keeps the full error).
    #[error("reading the rows: {0}")]
    Source(String),
    /// An error from the math core.
    #[error(transparent)]
    Core(#[from] maxmargin_core::CoreError),
}

/// An [`OptimError::InvalidParam`] with the value shown.
pub(crate) fn invalid(
    name: &'static str,
    value: impl std::fmt::Display,
    reason: &'static str,
) -> OptimError {
    OptimError::InvalidParam {
        name,
        value: value.to_string(),
        reason,
    }
}

/// [`OptimError::LengthMismatch`] unless there are as many targets (labels, weights, ...) as rows.
pub(crate) fn same_length(rows: usize, targets: usize) -> Result<(), OptimError> {
    if rows == targets {
        Ok(())
    } else {
        Err(OptimError::LengthMismatch { rows, targets })
    }
}

/// A stopping tolerance ε must be positive and finite (every solver that takes one checks it here).
pub(crate) fn check_epsilon(e: f64) -> Result<(), OptimError> {
    if e.is_finite() && e > 0.0 {
        Ok(())
    } else {
        Err(invalid("epsilon", e, "must be positive and finite"))
    }
}

/// The error for a decoded solver state whose part `what` does not fit the problem, when `ok` is false.
pub(crate) fn fits(ok: bool, what: &'static str) -> Result<(), OptimError> {
    if ok {
        Ok(())
    } else {
        Err(OptimError::InvalidParam {
            name: "checkpoint state",
            value: what.into(),
            reason: "does not fit this problem (lengths, indices or values)",
        })
    }
}

/// `n` duals, each finite and in its box `[0, u_i]` up to `slack` (relative to `max(u_i, 1)` above).
pub(crate) fn in_boxes(alpha: &[f64], upper: &[f64], n: usize, slack: f64) -> bool {
    alpha.len() == n
        && alpha
            .iter()
            .zip(upper)
            .all(|(&a, &u)| a.is_finite() && a >= -slack && a <= u + slack * u.max(1.0))
}

/// Every value finite.
pub(crate) fn all_finite(v: &[f64]) -> bool {
    v.iter().all(|x| x.is_finite())
}

/// Every index below `n` and none twice (an active set, a permutation's part).
pub(crate) fn distinct_below(indices: &[usize], n: usize) -> bool {
    let mut seen = vec![false; n];
    indices
        .iter()
        .all(|&i| i < n && !std::mem::replace(&mut seen[i], true))
}
