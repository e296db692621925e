//! Running work on a thread pool of a requested size. Results never depend on the size: every parallel
//! computation in maxmargin combines its parts in a fixed order.

use crate::Error;
use maxmargin_optim::OptimError;

/// Runs `f` on a pool of `threads` threads, or on rayon's global pool (all cores) for `None`.
///
/// # Errors
/// [`Error::Optim`] when the pool cannot be started, or what `f` returns.
pub(crate) fn with_threads<T: Send>(
    threads: Option<usize>,
    f: impl FnOnce() -> Result<T, Error> + Send,
) -> Result<T, Error> {
    match threads {
        // Already on a pool of that size (the command sizes the global pool): no second pool.
        Some(t) if rayon::current_num_threads() == t => f(),
        Some(t) => rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .map_err(|_| OptimError::InvalidParam {
                name: "threads",
                value: t.to_string(),
                reason: "could not start a thread pool of that size",
            })?
            .install(f),
        None => f(),
    }
}

/// `threads` must be at least 1 when given.
///
/// # Errors
/// [`Error::Optim`] for zero.
pub(crate) fn check_threads(threads: Option<usize>) -> Result<(), Error> {
    if threads == Some(0) {
        return Err(OptimError::InvalidParam {
            name: "threads",
            value: "0".into(),
            reason: "must be at least 1",
        }
        .into());
    }
    Ok(())
}
