//! The training progress bar: on stderr, only when it is a terminal, not `--quiet`, and the run lasts
//! longer than about a second.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use maxmargin::optim::{Observer, Progress, TraceRecord};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// An observer that draws a bar of epochs (or iterations) once a run has taken a second.
pub struct TrainingProgress {
    bar: Option<ProgressBar>,
    start: Instant,
    total_epochs: Option<f64>,
    total_iterations: Option<u64>,
    shown: bool,
    steps: u64,
    objective: Option<f64>,
}

impl TrainingProgress {
    /// A bar sized by a budget in passes or iterations; inactive when quiet or stderr is not a terminal.
    pub fn new(total_epochs: Option<f64>, total_iterations: Option<u64>, quiet: bool) -> Self {
        let active = !quiet && std::io::stderr().is_terminal();
        let bar = active.then(|| {
            let bar = ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::hidden());
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {wide_bar} {percent:>3}% {msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar
        });
        Self {
            bar,
            start: Instant::now(),
            total_epochs,
            total_iterations,
            shown: false,
            steps: 0,
            objective: None,
        }
    }

    fn fraction(&self, p: Progress) -> f64 {
        match (self.total_iterations, self.total_epochs) {
            (Some(it), _) => p.iteration as f64 / it as f64,
            (None, Some(ep)) => p.epoch / ep,
            (None, None) => 0.0,
        }
    }

    /// Clears the bar.
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Observer for TrainingProgress {
    fn on_step(&mut self, p: Progress) {
        self.steps += 1;
        // Checking the clock every step would cost more than a sparse Pegasos step.
        if !self.steps.is_multiple_of(256) {
            return;
        }
        let fraction = self.fraction(p);
        let Some(bar) = &self.bar else { return };
        if !self.shown && self.start.elapsed() > Duration::from_secs(1) {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            self.shown = true;
        }
        bar.set_position((fraction.clamp(0.0, 1.0) * 1000.0) as u64);
        if let Some(o) = self.objective {
            bar.set_message(format!("epoch {:.1}  objective {o:.6}", p.epoch));
        }
    }

    fn on_eval(&mut self, record: &TraceRecord) {
        self.objective = Some(record.objective);
    }
}
