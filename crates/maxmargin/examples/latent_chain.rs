//! Tags that run in a period of four (`datasets::periodic_tags`): a plain first-order chain, whose
//! transitions cannot tell where in the period a token is, against one with two latent states per tag,
//! trained by CCCP rounds, and a second-order chain, whose triples of tags see the period. Prints the three
//! test token accuracies and the latent rounds' objectives.
//!
//! Run with `cargo run --release -p maxmargin --example latent_chain [SEED]`.

use maxmargin::structured_svm::ChainShape;
use maxmargin::{StructuredSvmParams, Task};

mod common;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seed = common::seed()?;
    let read = |text: String, name: &str| {
        maxmargin::io::svm_hmm::read_from(text.as_bytes(), name.as_ref())
    };
    let (train, test) = common::train_test(
        seed,
        (200, 500),
        |n, seed| maxmargin::datasets::periodic_tags(n, 20, 0.3, seed),
        read,
    )?;
    let svm = StructuredSvmParams::new(Task::Chain)
        .lambda(0.01)
        .seed(seed)
        .check()?;
    let plain = svm.fit_chain(&train, &mut ())?.model;
    let plain_accuracy = 1.0
        - plain
            .evaluate_chain(&test, None)?
            .token_error
            .unwrap_or(f64::NAN);
    let latent = svm.fit_latent_chain(&train, 2, &mut ())?.model;
    let latent_accuracy = 1.0
        - latent
            .evaluate(&test, None)?
            .token_error
            .unwrap_or(f64::NAN);
    let second = svm
        .fit_chain_with_edges(
            &train,
            ChainShape::edges(0).with_second_order(true),
            &mut (),
        )?
        .model;
    let second_accuracy = 1.0
        - second
            .evaluate_chain(&test, None)?
            .token_error
            .unwrap_or(f64::NAN);
    println!(
        "test token accuracy: plain chain {plain_accuracy:.3}, two latent states per tag {latent_accuracy:.3}, \
         second order {second_accuracy:.3}"
    );
    common::print_rounds(&latent.rounds, latent.stop);
    Ok(())
}
