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

/// The most worker threads a run may ask for: 4 per core, and at least 64.
pub fn max_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .saturating_mul(4)
        .max(64)
}

/// Checks a thread count: at least 1 and at most [`max_threads`].
///
/// # Errors
/// [`Error::Optim`] naming the count.
pub fn check_threads(threads: Option<usize>) -> Result<(), Error> {
    let limit = max_threads();
    match threads {
        Some(0) => Err(OptimError::InvalidParam {
            name: "threads",
            value: "0".into(),
            reason: "must be at least 1",
        }
        .into()),
        Some(t) if t > limit => Err(OptimError::InvalidParam {
            name: "threads",
            value: t.to_string(),
            reason: "is more than 4 threads per core (at least 64 allowed); more only costs time",
        }
        .into()),
        _ => Ok(()),
    }
}
