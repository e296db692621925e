//! Classes that are each two clusters on opposite sides of the origin (`datasets::opposite_clusters`): a
//! plain multiclass SVM (one linear template per class, Crammer–Singer) against a latent one with two
//! templates per class, trained by CCCP rounds. Prints both test accuracies and the rounds' objectives.
//!
//! Run with `cargo run --release -p maxmargin --example latent_clusters [SEED]`.

use maxmargin::{StructuredSvmParams, Task};

mod common;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seed = common::seed()?;
    let read = |text: String, name: &str| {
        maxmargin::io::libsvm::read_from(
            text.as_bytes(),
            name.as_ref(),
            maxmargin::io::libsvm::parse_real_label,
        )
    };
    let (train, test) = common::train_test(
        seed,
        (300, 900),
        |n, seed| maxmargin::datasets::opposite_clusters(n, 3, 1.0, seed),
        read,
    )?;
    let svm = StructuredSvmParams::new(Task::Multiclass)
        .lambda(0.01)
        .seed(seed)
        .check()?;
    let plain = svm.fit_multiclass(&train, &mut ())?.model;
    let plain_accuracy = plain
        .evaluate_multiclass(&test, None)?
        .accuracy
        .unwrap_or(f64::NAN);
    let latent = svm.fit_latent_multiclass(&train, 2, &mut ())?.model;
    let latent_accuracy = latent.evaluate(&test, None)?.accuracy.unwrap_or(f64::NAN);
    println!("test accuracy: one template per class {plain_accuracy:.3}, two {latent_accuracy:.3}");
    common::print_rounds(&latent.rounds, latent.stop);
    Ok(())
}
