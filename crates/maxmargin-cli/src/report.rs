//! What a finished training run tells its user, the same for every task: the trace file with its summary
//! line, the `warning:` lines (also under `--quiet`), and one summary line.

use crate::TrainArgs;
use anyhow::Result;
pub(crate) use maxmargin::convergence::short;
use maxmargin::io::atomic::write_atomic;
use maxmargin::optim::{StopReason, TraceRecord};
use std::path::Path;

/// The scaling note, printed before training (a user waiting on a slow run learns why at once), and so not
/// again among the warnings at the end.
static EARLY: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Prints the scaling note for training rows that are not scaled, before training starts.
pub fn advise_before_training(x: &maxmargin::core::vector::SparseRows, scaled: bool) {
    // Only rows within the feature limits (the fit refuses the others, before anything follows the features).
    if scaled || maxmargin::limits::check_features(Path::new(""), x.n_features(), x.nnz()).is_err()
    {
        return;
    }
    if let Some(note) = maxmargin::core::scale::scaling_advice(x.rows(), x.n_features()) {
        note!("warning: {note}");
        let _ = EARLY.set(note);
    }
}

/// A kernel other than the linear one: SMO on it gets no scaling note (it speaks of linear solvers).
pub(crate) fn nonlinear_kernel(args: &crate::TrainArgs) -> bool {
    args.kernel
        .kernel
        .is_some_and(|k| k != crate::KernelArg::Linear)
}

/// A finished run, as the command reports it.
pub struct Finished<'a> {
    /// Every evaluation.
    pub trace: &'a [TraceRecord],
    /// Warnings from training (without the `warning:` prefix).
    pub warnings: &'a [String],
    /// What was trained on what, e.g. `dcd on 270 examples x 13 features`.
    pub what: String,
    /// λ trained with.
    pub lambda: f64,
    /// Why it stopped.
    pub stop: StopReason,
    /// The final objective.
    pub objective: f64,
    /// The final certified gap.
    pub gap: Option<f64>,
    /// Whether it converged.
    pub converged: bool,
    /// Whether the gap is a certificate (false when it was measured with an approximate inference oracle).
    pub certified: bool,
    /// Solver iterations, and what one is (`passes over the active rows`, `steps`, `rounds`, `iterations`):
    /// a count of 1730 beside 1000.08 epochs reads as a contradiction unless it says what it counts.
    pub iterations: (u64, &'static str),
    /// Passes over the data, and their name in the trace summary (`epoch` or `passes`) and in the line.
    pub passes: (f64, &'static str, &'static str),
    /// The relative duality gap the run headed for.
    pub tolerance: f64,
}

/// Writes the trace (when asked), prints the warnings and the summary; returns whether the run converged.
///
/// # Errors
/// When the trace file cannot be written.
pub fn report(args: &TrainArgs, output: &Path, f: &Finished<'_>) -> Result<bool> {
    let (passes, key, unit) = f.passes;
    if let Some(path) = &args.trace {
        let mut summary = serde_json::json!({
            "stop": f.stop,
            "objective": f.objective,
            "gap": f.gap,
            "converged": f.converged,
            "certified": f.certified && f.gap.is_some(),
            "iterations": f.iterations.0,
            "run": f.what,
            "lambda": f.lambda,
            "tolerance": f.tolerance,
        });
        summary[key] = serde_json::json!(passes);
        write_atomic(path, |w| {
            for r in f.trace {
                serde_json::to_writer(&mut *w, r)?;
                writeln!(w)?;
            }
            serde_json::to_writer(&mut *w, &summary)?;
            writeln!(w)
        })?;
    }
    for w in f.warnings {
        if EARLY.get() != Some(w) {
            note!("warning: {w}");
        }
    }
    if !args.quiet {
        let seconds = f.trace.last().map_or(0.0, |r| r.seconds);
        note!(
            "trained {}: lambda {:.3e}, objective {}, gap {}, {} {} ({passes:.2} {unit}) in {seconds:.2}s, stop: {}{}",
            f.what,
            f.lambda,
            short(f.objective, 6, false),
            gap_text(f.gap),
            f.iterations.0,
            f.iterations.1,
            f.stop,
            match (f.converged, f.certified, f.stop) {
                (true, _, _) => "",
                // An approximate oracle measured the gap: within the target or not, it certifies nothing.
                (false, false, maxmargin::optim::StopReason::Converged) => {
                    " by the solver's rule, but its gap was measured with approximate inference and is not a \
                     certificate (not converged)"
                }
                (false, false, _) => {
                    " (not converged; its gap was measured with approximate inference and is not a certificate)"
                }
                // The solver's own rule stopped it, but the certificate does not reach the target.
                (false, true, maxmargin::optim::StopReason::Converged) => {
                    " by the solver's rule, but the certified gap is above the target (not converged)"
                }
                (false, true, _) => " (not converged)",
            },
        );
        note!("saved {}", output.display());
    }
    Ok(f.converged)
}

/// What the summary line adds to the solver's name: a loss that is not the hinge, a kernel and the model's
/// size in support vectors.
pub(crate) fn binary_family(model: &maxmargin::LinearModel) -> String {
    let name = loss_name(model.params.loss);
    let loss = if name.is_empty() {
        String::new()
    } else {
        format!(", {name}")
    };
    if let Some(a) = &model.params.approx {
        let parts = match (&model.kernel, &model.features) {
            (Some(k), _) => format!("{}, {} landmarks", k.kernel.name(), k.n_support()),
            (None, Some(m)) => format!("rbf, {} components", m.components()),
            (None, None) => "?".into(),
        };
        return format!(" ({} approximation of the {parts}{loss})", a.method);
    }
    if let Some(k) = &model.kernel {
        let gamma = match k.kernel {
            maxmargin::core::kernel::Kernel::Linear => String::new(),
            maxmargin::core::kernel::Kernel::Rbf { gamma }
            | maxmargin::core::kernel::Kernel::Poly { gamma, .. }
            | maxmargin::core::kernel::Kernel::Sigmoid { gamma, .. } => {
                format!(", gamma {gamma:.4e}")
            }
        };
        return format!(
            " ({} kernel{gamma}, {} support vectors)",
            k.kernel.name(),
            k.n_support()
        );
    }
    if name.is_empty() {
        String::new()
    } else {
        format!(" ({name})")
    }
}

/// What a summary calls a binary loss (nothing for the hinge, the default).
fn loss_name(loss: maxmargin::optim::BinaryLoss) -> String {
    match loss {
        maxmargin::optim::BinaryLoss::Hinge => String::new(),
        maxmargin::optim::BinaryLoss::SquaredHinge => "squared hinge".into(),
        maxmargin::optim::BinaryLoss::Logistic => "logistic regression".into(),
        other => format!("{other:?}").to_lowercase(),
    }
}

/// The line `cv --refit` prints once the model refitted on all `n` rows (or examples) at the chosen C is
/// saved, binary and structured alike: `(objective, certified gap, converged)`.
pub(crate) fn refit_saved(
    (n, unit): (usize, &str),
    chosen: Option<f64>,
    (objective, gap, converged): (f64, Option<f64>, bool),
    out_path: &Path,
) {
    note!(
        "refit on all {n} {unit}{}: objective {objective:.6}, gap {}, {}; saved {}",
        chosen.map_or(String::new(), |c| format!(" at C = {c}")),
        gap_text(gap),
        if converged {
            "converged"
        } else {
            "not converged"
        },
        out_path.display()
    );
}

/// What one of a structured solver's iterations is: Crammer–Singer's and one-vs-rest's are passes over the
/// examples shrinking left active (summed over the classes for one-vs-rest), BCFW's and SSG's one example's
/// step, the cutting planes' one round of oracle calls.
pub(crate) fn iteration_unit(
    solver: maxmargin::structured_svm::StructSolverKind,
    in_memory: bool,
) -> &'static str {
    use maxmargin::structured_svm::StructSolverKind as K;
    match solver {
        K::Dcd if in_memory => "passes over the active examples",
        K::Ovr if in_memory => "passes over the active rows, summed over the classes",
        K::Bcfw | K::Ssg | K::Perceptron => "steps",
        K::Nslack | K::Oneslack => "rounds",
        _ => "iterations",
    }
}

/// The relative duality gap a run heads for (BCFW's ε is one).
pub(crate) fn tolerance(svm: &maxmargin::StructuredSvm) -> f64 {
    svm.params().gap.unwrap_or(match svm.params().solver {
        maxmargin::structured_svm::StructSolverKind::Bcfw => svm.params().epsilon,
        _ => maxmargin::convergence::DEFAULT_GAP,
    })
}

/// A structured model as trained, with its trace and warnings.
pub(crate) type TrainedRun<'a> = (
    &'a maxmargin::structured_svm::StructuredModel,
    &'a [maxmargin::optim::TraceRecord],
    &'a [String],
);

/// Reports a saved structured model's training; returns whether it converged.
pub(crate) fn finished(
    args: &TrainArgs,
    output: &Path,
    svm: &maxmargin::StructuredSvm,
    (model, trace, warnings): TrainedRun<'_>,
    ran: Ran,
) -> Result<bool> {
    finished_with(args, output, svm, (model, trace, warnings), (ran, true))
}

/// Where a structured run trained: in this process's memory, streamed from disk, or over MPI ranks (how
/// many), as its summary says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ran {
    InMemory,
    Streamed,
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    OverRanks(usize),
}

/// As [`finished`], saying with `certified` whether the gap is a certificate (false for graph models
/// trained with inference that could not certify every answer).
pub(crate) fn finished_with(
    args: &TrainArgs,
    output: &Path,
    svm: &maxmargin::StructuredSvm,
    (model, trace, warnings): TrainedRun<'_>,
    (ran, certified): (Ran, bool),
) -> Result<bool> {
    let t = &model.training;
    let over = match ran {
        Ran::OverRanks(n) => format!(" over {n} ranks"),
        Ran::InMemory | Ran::Streamed => String::new(),
    };
    crate::report::report(
        args,
        output,
        &crate::report::Finished {
            trace,
            warnings,
            what: format!(
                "{} {}{}{over} on {} examples",
                model.task.kind(),
                format!("{:?}", svm.params().solver).to_lowercase(),
                crate::structured::kernel_family(model),
                t.n_samples
            ),
            lambda: model.lambda,
            stop: t.stop,
            objective: t.objective,
            gap: t.gap,
            converged: t.converged,
            certified,
            iterations: (
                t.iterations,
                iteration_unit(svm.params().solver, ran == Ran::InMemory),
            ),
            passes: (t.passes, "passes", "full passes"),
            tolerance: tolerance(svm),
        },
    )
}

/// A certified gap as the summaries print it: a rounding error below 0 (`-4.441e-16`, primal and dual
/// equal to the last bit) is printed as 0, which is what it certifies.
pub(crate) fn gap_text(gap: Option<f64>) -> String {
    gap.map_or("-".into(), |g| format!("{:.3e}", g.max(0.0)))
}
