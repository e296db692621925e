//! Train a linear SVM on the embedded heart_scale data, save it, load it back and predict.
//!
//! Run with `cargo run --release -p maxmargin --example train_heart`.

use maxmargin::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let data = maxmargin::datasets::heart_scale()?;
    let svm = LinearSvmParams::new()
        .c(1.0)
        .epochs(30.0)
        .seed(42)
        .check()?;
    let model = svm.fit(&data)?;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("heart.json");
    model.save(&path)?;
    let loaded = LinearModel::load(&path)?;
    let report = loaded.evaluate(&data, Some(model.lambda))?;
    println!(
        "lambda {:.5} (C = 1, n = {}): objective {:.5}, training accuracy {:.3}",
        model.lambda,
        data.n_samples(),
        report.objective.unwrap_or(f64::NAN),
        report.accuracy
    );
    println!(
        "first five predictions: {:?}",
        &loaded.predict_rows(&data.x)[..5]
    );
    Ok(())
}
