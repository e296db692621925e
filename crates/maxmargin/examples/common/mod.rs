//! What the latent examples share: the seed from the command line, the train and test sets drawn with it, and
//! the print of the CCCP rounds. Not an example itself (Cargo builds only `examples/*.rs` and
//! `examples/*/main.rs`).

use maxmargin::optim::latent::{CccpRound, CccpStop};

/// The seed, the first argument (1 without one).
///
/// # Errors
/// An argument that is not a number.
pub fn seed() -> Result<u64, String> {
    match std::env::args().nth(1) {
        Some(s) => s
            .parse()
            .map_err(|_| format!("the seed {s:?} is not a number")),
        None => Ok(1),
    }
}

/// A training set of `n_train` drawn with `seed` and a test set of `n_test` drawn with `seed + 1`, each
/// `read` from the text `draw(n, seed)` writes.
///
/// # Errors
/// `read`'s.
pub fn train_test<T, E>(
    seed: u64,
    (n_train, n_test): (usize, usize),
    draw: impl Fn(usize, u64) -> String,
    read: impl Fn(String, &str) -> Result<T, E>,
) -> Result<(T, T), E> {
    let train = read(draw(n_train, seed), "<train>")?;
    let test = read(draw(n_test, seed + 1), "<test>")?;
    Ok((train, test))
}

/// Prints how many rounds ran, why they stopped and the latent objective after each.
pub fn print_rounds(rounds: &[CccpRound], stop: CccpStop) {
    let objectives: Vec<String> = rounds
        .iter()
        .map(|r| format!("{:.6}", r.objective))
        .collect();
    println!(
        "{} latent rounds ({stop:?}), objective by round: {}",
        rounds.len(),
        objectives.join(", ")
    );
}
