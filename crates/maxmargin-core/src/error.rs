//! The one error type of `maxmargin-core`; a tie at a kink is never an error.

/// Everything that can be wrong with the input of a core computation.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CoreError {
    /// A maximum over an empty family has no value.
    #[error("the family of affine functions is empty")]
    EmptyFamily,
    /// A number that must be finite was NaN or infinite.
    #[error("{what}[{index}] must be finite, got {value}")]
    NonFinite {
        /// Which input held it.
        what: &'static str,
        /// Its position.
        index: usize,
        /// The value.
        value: f64,
    },
    /// Two inputs that must have the same length do not.
    #[error("{what}: expected length {expected}, got {got}")]
    LengthMismatch {
        /// Which input.
        what: &'static str,
        /// The length it must have.
        expected: usize,
        /// The length it has.
        got: usize,
    },
    /// A task loss Δ(y, y′) was negative.
    #[error("task loss must be >= 0, got {value} at candidate {index}")]
    NegativeLoss {
        /// The candidate.
        index: usize,
        /// The loss.
        value: f64,
    },
    /// Δ(y, y) must be zero.
    #[error("task loss of the true output must be 0, got {0}")]
    NonzeroTruthLoss(f64),
    /// The true output is not one of the candidates.
    #[error("true output index {truth} is outside the candidate set of size {len}")]
    TruthOutOfRange {
        /// The index given.
        truth: usize,
        /// The number of candidates.
        len: usize,
    },
    /// A tolerance was negative or not finite.
    #[error("tolerance must be finite and >= 0, got {0}")]
    InvalidTolerance(f64),
    /// A row of a matrix read in place is not a valid sparse row.
    #[error("row {row}: {reason}")]
    InvalidRow {
        /// The row, from 0.
        row: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// Sparse indices must increase strictly.
    #[error("sparse indices must increase strictly: index {index} follows {previous}")]
    UnsortedIndex {
        /// The index that broke the order.
        index: u32,
        /// The index before it.
        previous: u32,
    },
    /// A regularization constant was not positive and finite.
    #[error("{name} must be positive and finite, got {value}")]
    InvalidRegularization {
        /// `lambda` or `C`.
        name: &'static str,
        /// The value given.
        value: f64,
    },
    /// The number of examples must be positive to convert between objective forms.
    #[error("number of examples must be positive, got 0")]
    NoExamples,
    /// A weight θ outside the range that makes `θ(−y x)` a subgradient at this margin.
    #[error("theta {theta} is outside [{lo}, {hi}], the subdifferential at this margin")]
    ThetaOutOfRange {
        /// The θ given.
        theta: f64,
        /// Smallest valid θ.
        lo: f64,
        /// Largest valid θ.
        hi: f64,
    },
    /// A parameter that cannot apply to this input.
    #[error("{name}: {reason}")]
    InvalidParam {
        /// The parameter.
        name: &'static str,
        /// Why.
        reason: &'static str,
    },
    /// Exact convex-hull membership is only offered for small sets.
    #[error("convex-hull membership is exact for at most {max} slopes, got {got}")]
    TooManySlopes {
        /// The largest set handled.
        max: usize,
        /// The set size given.
        got: usize,
    },
}

/// Returns an error naming the first non-finite entry of `values`.
pub(crate) fn check_finite(what: &'static str, values: &[f64]) -> Result<(), CoreError> {
    match values.iter().position(|v| !v.is_finite()) {
        Some(index) => Err(CoreError::NonFinite {
            what,
            index,
            value: values[index],
        }),
        None => Ok(()),
    }
}

/// Checks a tie tolerance.
pub(crate) fn check_tol(tol: f64) -> Result<(), CoreError> {
    if tol.is_finite() && tol >= 0.0 {
        Ok(())
    } else {
        Err(CoreError::InvalidTolerance(tol))
    }
}
