//! Runs 30 Pegasos epochs on a LIBSVM file given as the first argument (for profiling).
use maxmargin::prelude::*;
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: epoch_profile DATA")?;
    let data = maxmargin::io::libsvm::read(path.as_ref())?;
    let start = std::time::Instant::now();
    let model = LinearSvmParams::new()
        .epochs(30.0)
        .eval_every(1000.0)
        .check()?
        .fit(&data)?;
    println!(
        "{:.3}s objective {}",
        start.elapsed().as_secs_f64(),
        model.training.objective
    );
    Ok(())
}
