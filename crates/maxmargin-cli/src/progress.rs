//! Training progress on stderr, unless `--quiet`: on a terminal a bar once the run has taken a second; off a
//! terminal (a log file, a batch job) one line every 10 seconds (`MAXMARGIN_PROGRESS_SECONDS` changes the
//! period) with the time, the passes and the last evaluated primal and gap.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use maxmargin::optim::{Observer, Progress, TraceRecord};
use std::io::{IsTerminal, Write};
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
    gap: Option<f64>,
    target: f64,
    /// Steps between looks at the clock, adapted so that looks are about 5 to 50 ms apart whether a step
    /// takes a microsecond (Pegasos) or seconds (a cutting-plane pass).
    stride: u64,
    last_look: Instant,
    /// Off a terminal: the period of progress lines, and when the last one was written.
    lines: Option<(Duration, Instant)>,
}

impl TrainingProgress {
    /// A bar sized by a budget in passes or iterations; inactive when quiet or stderr is not a terminal.
    /// `target` is the relative gap the run heads for, which the bar shows beside the current one.
    pub fn new(
        total_epochs: Option<f64>,
        total_iterations: Option<u64>,
        target: f64,
        quiet: bool,
    ) -> Self {
        let terminal = std::io::stderr().is_terminal();
        let active = !quiet && terminal;
        let period = std::env::var("MAXMARGIN_PROGRESS_SECONDS")
            .ok()
            .and_then(|v| v.parse::<f64>().ok())
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .unwrap_or(Duration::from_secs(10));
        let lines = (!quiet && !terminal).then(|| (period, Instant::now()));
        let bar = active.then(|| {
            let bar = ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::hidden());
            bar.set_style(
                ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}")
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
            gap: None,
            target,
            stride: 1,
            last_look: Instant::now(),
            lines,
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
        if !self.steps.is_multiple_of(self.stride) {
            return;
        }
        let now = Instant::now();
        let since = now - self.last_look;
        self.last_look = now;
        if since < Duration::from_millis(5) {
            self.stride = self.stride.saturating_mul(2);
        } else if since > Duration::from_millis(50) && self.stride > 1 {
            self.stride /= 2;
        }
        if let Some((period, last)) = &mut self.lines
            && now - *last >= *period
        {
            *last = now;
            let mut line = format!(
                "progress: {:.0} s, pass {:.1}",
                self.start.elapsed().as_secs_f64(),
                p.epoch
            );
            if let Some(o) = self.objective {
                line.push_str(&format!(", primal {o:.6}"));
            }
            if self.gap.is_some() {
                line.push_str(&format!(", gap {}", crate::report::gap_text(self.gap)));
            }
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err, "{line}");
        }
        let fraction = self.fraction(p);
        let Some(bar) = &self.bar else { return };
        if !self.shown && self.start.elapsed() > Duration::from_secs(1) {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            self.shown = true;
        }
        bar.set_position((fraction.clamp(0.0, 1.0) * 1000.0) as u64);
        // The gap and where it is heading, not a share of the pass budget (most runs stop on the gap).
        let mut msg = format!("pass {:.1}", p.epoch);
        if let Some(o) = self.objective {
            msg.push_str(&format!("  primal {o:.6}"));
            if let Some(g) = self.gap {
                let relative = g / o.abs().max(f64::MIN_POSITIVE);
                msg.push_str(&format!("  gap {relative:.2e} -> {:.0e}", self.target));
            }
        }
        bar.set_message(msg);
    }

    fn on_warning(&mut self, message: &str) {
        if let Some(bar) = &self.bar {
            bar.suspend(|| eprintln!("warning: {message}"));
        } else {
            eprintln!("warning: {message}");
        }
    }

    fn on_eval(&mut self, record: &TraceRecord) {
        self.objective = Some(record.objective);
        self.gap = record.gap;
    }
}
