//! The facade's error: the layers' errors, passed through with their messages.

/// Anything that can go wrong between a file and a trained model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing a file.
    #[error(transparent)]
    Io(#[from] maxmargin_io::IoError),
    /// A solver's parameters or problem.
    #[error(transparent)]
    Optim(#[from] maxmargin_optim::OptimError),
    /// An output space.
    #[error(transparent)]
    Struct(#[from] maxmargin_struct::StructError),
    /// The math core.
    #[error(transparent)]
    Core(#[from] maxmargin_core::CoreError),
}

/// A parameter that cannot apply, as [`maxmargin_optim::OptimError::InvalidParam`] naming it, its value (may be
/// empty) and why.
pub(crate) fn refuse(name: &'static str, value: impl ToString, reason: &'static str) -> Error {
    maxmargin_optim::OptimError::InvalidParam {
        name,
        value: value.to_string(),
        reason,
    }
    .into()
}
