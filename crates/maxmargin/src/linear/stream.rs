//! Training on a file larger than memory (`train --stream`): the file is parsed once into shuffled rows on
//! disk ([`maxmargin_io::stream`]) and DCD (its duals in a column on disk beside the rows), Pegasos or the
//! batch subgradient method reads them pass by pass ([`maxmargin_optim::stream`]); the model is the same
//! kind of file as an in-memory fit's.

use super::{Finished, FitReport, LinearSolver, LinearSvm};
use crate::Error;
use crate::error::refuse;
use maxmargin_core::scale::{Scaler, Scaling};
use maxmargin_io::IoError;
use maxmargin_io::libsvm::BinaryLabels;
use maxmargin_io::stream::{Column, RowFile};
use maxmargin_optim::stream::{ColumnVisit, RowVisit};
use maxmargin_optim::{
    Observer, OptimError, Resumable, RowPasses, RowStream, Solver, SourcePlace, Streamed, Trainer,
};
use std::path::Path;

/// Training passes between certificates when the budget does not say (each certificate reads the file
/// `1 + STREAM_POLISH` times).
pub const STREAM_EVAL_EVERY: u64 = 5;
/// Dual coordinate descent passes that tighten each certificate (as in memory).
pub const STREAM_POLISH: usize = 5;

impl LinearSvm {
    /// Trains DCD, Pegasos or the batch subgradient method on the LIBSVM file `path` (plain, gzip, or `-` for
    /// standard input) without holding it in memory: it is parsed once into shuffled rows in `temp_dir`
    /// (removed when training ends, even on a crash), in the order the seed chooses, then read pass by pass.
    /// Memory is that of the weights, not of the rows; the run is certified by a dual bound computed in
    /// passes, and stops on the same relative gap as in memory.
    ///
    /// # Errors
    /// Parameters that need the rows in memory (per-row weights, DCD's blocks, DCD with an unregularized
    /// intercept) are refused naming why; then as [`LinearSvm::fit`], with errors naming the file and line.
    /// Checkpoints work as in memory (kind `checkpoint-binary-SOLVER-stream`, made for these rows and this
    /// seed's order): they also keep where the stream stands, its per-row column included (8 bytes a row),
    /// and a run resumed from one ends with the weights of one never stopped.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use maxmargin::prelude::*;
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("heart.svm");
    /// maxmargin::io::libsvm::write(&path, &maxmargin::datasets::heart_scale()?)?;
    /// let svm = LinearSvmParams::new().solver(SolverKind::Pegasos).epochs(20.0).check()?;
    /// let report = svm.fit_stream(&path, dir.path())?;
    /// let t = &report.model.training;
    /// assert!(t.gap.is_some_and(|g| g >= 0.0) && t.epochs == 20.0);
    /// # Ok(()) }
    /// ```
    pub fn fit_stream(&self, path: &Path, temp_dir: &Path) -> Result<FitReport, Error> {
        self.fit_stream_observed(path, temp_dir, &mut ())
    }

    /// [`LinearSvm::fit_stream`], telling `observer` about every step (a pass) and evaluation.
    ///
    /// # Errors
    /// As [`LinearSvm::fit_stream`].
    pub fn fit_stream_observed(
        &self,
        path: &Path,
        temp_dir: &Path,
        observer: &mut dyn Observer,
    ) -> Result<FitReport, Error> {
        let p = self.params();
        if let LinearSolver::Smo { .. } = p.solver {
            let why =
                "cannot be streamed: a kernel SVM reads every row's kernel values at every step";
            return Err(refuse("solver", "smo", why));
        }
        if let LinearSolver::Newton(_) = p.solver {
            let why = "cannot be streamed yet: its conjugate gradients read every row at every step; \
                       dcd (the default) streams";
            return Err(refuse("solver", "newton", why));
        }
        if let Some(a) = &p.approx {
            let why =
                "is not streamed yet: its map is fitted on rows in memory; train without --stream";
            return Err(refuse("approx", a.method, why));
        }
        if let LinearSolver::Dcd(d) = p.solver
            && d.blocks != maxmargin_optim::DcdParams::default().blocks
        {
            let why = "do not apply to streamed dcd, whose passes read one bucket at a time";
            return Err(refuse("blocks", d.blocks.to_string(), why));
        }
        if self.sample_weights.is_some() {
            let why = "are not built for streaming (give class weights, or train in memory)";
            return Err(refuse("sample weights", "", why));
        }
        let mut sketch = crate::inputs::SketchBuilder::default();
        let rows = RowFile::prepare_observed(path, temp_dir, p.seed, &mut |l, x| sketch.add(l, x))?;
        let summary = rows.summary().clone();
        let mut warnings = Vec::new();
        // The limits before the first allocation that follows the features (the scaler's statistics).
        let scaled = p.scale != maxmargin_core::scale::Scaling::None;
        crate::limits::check_streamed(path, &summary, scaled)?;
        let scaler = crate::convergence::fit_scaler_streamed(p.scale, &rows, &mut warnings)?;
        let distinct: Vec<f64> = summary.labels.iter().map(|l| l.0).collect();
        let labels = BinaryLabels::from_labels(path, &distinct)?.with_positive(path, p.positive)?;
        let mut class_weight = [1.0, 1.0];
        for &(label, w) in &p.class_weights {
            match labels.to_sign(label) {
                Some(s) => class_weight[usize::from(s > 0.0)] = w,
                None => {
                    return Err(refuse(
                        "class weight",
                        label.to_string(),
                        "names a label the training data does not have",
                    ));
                }
            }
        }
        let n = summary.n_rows;
        let lambda = p.regularization.lambda(n)?;
        // An --epsilon tighter than DCD's default asks for more than the default gap, which (checked every
        // epoch) stopped the run first and made the flag do nothing: without --gap, the ε test then stops
        // the run, as in memory. Otherwise the certified gap does.
        let epsilon_asked = matches!(p.solver, LinearSolver::Dcd(d)
            if d.epsilon < maxmargin_optim::DcdParams::default().epsilon);
        // (The solver keeps the default target, which it checks once its ε test passes, as in memory.)
        use crate::convergence::DEFAULT_GAP;
        let target = match p.budget.gap_tolerance {
            Some(gap) => Some(gap),
            None if epsilon_asked => None,
            None => Some(DEFAULT_GAP),
        };
        let is_dcd = matches!(p.solver, LinearSolver::Dcd(_));
        // DCD certifies once per epoch of coordinate steps (a read of the file, about what the epoch's passes
        // cost) besides where its stopping test calls for it, and stops at the certified gap: on a9a x10 the ε
        // test alone took 224 epochs where the 1% gap came at 49. The primal solvers have no other stop.
        let gapped = match target {
            Some(t) => p.budget.with_gap(t),
            None => p.budget,
        };
        let budget = gapped.evaluating_every(if p.budget.eval_every_epochs.is_finite() {
            p.budget.eval_every_epochs.ceil().max(1.0)
        } else if is_dcd {
            1.0
        } else {
            STREAM_EVAL_EVERY as f64
        });
        let trainer = Trainer::new(budget)?;
        let mut source = Passes {
            rows: &rows,
            column: Column::new(temp_dir)?,
            labels,
            class_weight,
            scaler: scaler.clone(),
            failed: None,
        };
        // A checkpoint is made for these rows (their sketch's sum: any order), in the seed's order.
        let made = crate::checkpoint::Made {
            n_samples: n,
            dim: summary.n_features,
            lambda: lambda.get(),
            rows: sketch.sum(),
        };
        let kind = self.checkpoint_kind();
        let tag = (kind.as_str(), made, p, p.seed);
        let fit = {
            let problem = RowStream::new(&mut source, lambda.get(), p.bias, p.loss)
                .map_err(Error::from)?
                .with_polish(STREAM_POLISH)
                .with_hold_bytes(rows.bucket_bytes());
            let plan = &self.plan;
            match p.solver {
                LinearSolver::Pegasos(s) => {
                    let mut s = Streamed::new(s.check()?);
                    let init = |s: &mut Streamed<_>| Ok(s.init(&problem)?);
                    crate::checkpoint::train_stream(
                        &trainer, &mut s, &problem, init, tag, plan, observer,
                    )
                    .map(|f| f.0)
                }
                LinearSolver::Subgradient(s) => {
                    let mut s = Streamed::new(s.check()?);
                    let init = |s: &mut Streamed<_>| Ok(s.init(&problem)?);
                    crate::checkpoint::train_stream(
                        &trainer, &mut s, &problem, init, tag, plan, observer,
                    )
                    .map(|f| f.0)
                }
                LinearSolver::Dcd(d) => {
                    let mut s = Streamed::new(
                        d.check()?
                            .with_gap_target(Some(target.unwrap_or(DEFAULT_GAP))),
                    );
                    let init = |s: &mut Streamed<_>| Ok(s.init(&problem)?);
                    crate::checkpoint::train_stream(
                        &trainer, &mut s, &problem, init, tag, plan, observer,
                    )
                    .map(|f| f.0)
                }
                LinearSolver::Smo { .. } | LinearSolver::Newton(_) => unreachable!("refused above"),
            }
        }
        .map_err(|e| match (e, source.failed.take()) {
            (_, Some(io)) => Error::from(io),
            (e, None) => e,
        })?;
        let end = Finished::of(&fit);
        let unscaled = p.scale == Scaling::None && summary.max_abs > 1.0;
        let advice = match (is_dcd, unscaled) {
            (true, true) => "--scale maxabs, or more passes (--epochs, --iterations)",
            (true, false) => "more passes (--epochs, --iterations)",
            (false, true) => "--scale maxabs, more passes (--epochs), or --solver dcd",
            (false, false) => "more passes (--epochs), or --solver dcd",
        };
        let (output, trace) = (fit.output, fit.trace);
        let on = crate::linear::TrainedOn {
            labels,
            lambda: lambda.get(),
            n_samples: n,
        };
        let mut model = self.model(output, on, end, scaler, advice, &mut warnings)?;
        // What an in-memory run records of its rows, taken as the stream parsed them.
        model.inputs = Some(Box::new(crate::inputs::Inputs {
            rows: Some(sketch.finish()),
            ..Default::default()
        }));
        Ok(FitReport {
            model,
            trace,
            warnings,
        })
    }
}

/// The row file as the optimizer's source: labels mapped to ±1, class weights attached, the certificate's
/// column on disk. A read error is kept whole here (the optimizer sees [`OptimError::Source`]).
struct Passes<'a> {
    rows: &'a RowFile,
    column: Column,
    labels: BinaryLabels,
    class_weight: [f64; 2],
    scaler: Option<Scaler>,
    failed: Option<IoError>,
}

/// An error inside a pass: the file's or the optimizer's.
pub(crate) enum PassError {
    Io(IoError),
    Optim(OptimError),
}

impl PassError {
    /// The optimizer's view of a pass's result: a file error is kept whole in `failed` (returned to the user
    /// in place of [`OptimError::Source`]).
    pub(crate) fn settle(
        r: Result<(), Self>,
        failed: &mut Option<IoError>,
    ) -> Result<(), OptimError> {
        match r {
            Ok(()) => Ok(()),
            Err(Self::Optim(e)) => Err(e),
            Err(Self::Io(e)) => {
                let message = e.to_string();
                *failed = Some(e);
                Err(OptimError::Source(message))
            }
        }
    }
}

impl From<IoError> for PassError {
    fn from(e: IoError) -> Self {
        Self::Io(e)
    }
}

impl Passes<'_> {
    /// `(y, c)` of a row's label.
    fn target(
        labels: &BinaryLabels,
        class_weight: &[f64; 2],
        source: &Path,
        line: usize,
        label: f64,
    ) -> Result<(f64, f64), PassError> {
        match labels.to_sign(label) {
            Some(y) => Ok((y, class_weight[usize::from(y > 0.0)])),
            None => Err(PassError::Io(IoError::NotBinary {
                path: source.to_path_buf(),
                found: 3,
                at_least: false,
                labels: format!(
                    "{}, {} and {label} at line {line}",
                    labels.negative, labels.positive
                ),
            })),
        }
    }
}

impl Resumable for Passes<'_> {
    fn passes(&self) -> u64 {
        self.rows.passes()
    }

    fn set_passes(&mut self, passes: u64) {
        self.rows.set_passes(passes);
    }

    fn place(&mut self) -> Result<SourcePlace, OptimError> {
        let column = self.column.values(self.rows).map_err(|e| {
            let message = e.to_string();
            self.failed = Some(e);
            OptimError::Source(message)
        })?;
        Ok(SourcePlace {
            passes: self.rows.passes(),
            column,
        })
    }

    fn set_place(&mut self, place: SourcePlace) -> Result<(), OptimError> {
        if let Some(values) = &place.column {
            self.column.set_values(self.rows, values).map_err(|e| {
                let message = e.to_string();
                self.failed = Some(e);
                OptimError::Source(message)
            })?;
        }
        self.rows.set_passes(place.passes);
        Ok(())
    }
}

impl RowPasses for Passes<'_> {
    fn n_rows(&self) -> usize {
        self.rows.summary().n_rows
    }

    fn n_features(&self) -> usize {
        self.rows.summary().n_features
    }

    fn pass(&mut self, row: &mut RowVisit<'_>) -> Result<(), OptimError> {
        let (rows, labels, weights) = (self.rows, self.labels, self.class_weight);
        let scaler = self.scaler.as_ref();
        let r = rows.pass(|r| {
            let (y, c) = Self::target(&labels, &weights, rows.source(), r.line, r.label)?;
            match scaler {
                Some(sc) => row(sc.transform_row(r.x).as_row(), y, c),
                None => row(r.x, y, c),
            }
            .map_err(PassError::Optim)
        });
        PassError::settle(r, &mut self.failed)
    }

    fn pass_with_column(
        &mut self,
        reset: bool,
        row: &mut ColumnVisit<'_>,
    ) -> Result<(), OptimError> {
        self.pass_with_column_where(reset, &|_| true, row)
    }

    fn pass_with_column_where(
        &mut self,
        reset: bool,
        keep: &dyn Fn(f64) -> bool,
        row: &mut ColumnVisit<'_>,
    ) -> Result<(), OptimError> {
        let (rows, labels, weights) = (self.rows, self.labels, self.class_weight);
        let scaler = self.scaler.as_ref();
        let r = rows.pass_with_column_where(&mut self.column, reset, keep, |r, v| {
            let (y, c) = Self::target(&labels, &weights, rows.source(), r.line, r.label)?;
            match scaler {
                Some(sc) => row(sc.transform_row(r.x).as_row(), y, c, v),
                None => row(r.x, y, c, v),
            }
            .map_err(PassError::Optim)
        });
        PassError::settle(r, &mut self.failed)
    }
}
