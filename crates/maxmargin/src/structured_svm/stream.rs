//! Multiclass training on a file larger than memory (`train --stream --task multiclass --solver ssg`): the
//! file is parsed once into rows on disk ([`maxmargin_io::stream`]) and the stochastic subgradient method
//! reads them pass by pass ([`maxmargin_optim::ExampleStream`]); the model is the same kind of file as an
//! in-memory fit's.

use super::*;
use crate::linear::PassError;
use maxmargin_io::stream::RowFile;
use maxmargin_optim::structural::ssg_stream::ExampleVisit;
use maxmargin_optim::{
    ExamplePasses, ExampleStream, Resumable, Solver, SourcePlace, Streamed, Trainer,
};

/// Passes between certificates when `eval_every` is not given (each certificate is one more pass).
pub const STREAM_EVAL_EVERY: u64 = 5;

impl StructuredSvm {
    /// Trains a multiclass model by the stochastic subgradient method (`solver` = ssg) on the LIBSVM file
    /// `path` (plain, gzip, or `-` for standard input) without holding it in memory: it is parsed once into
    /// rows in `temp_dir` (removed when training ends, even on a crash), and every pass reads them in a new
    /// order drawn from the seed. Memory is that of the weights, not of the rows; each certificate costs one
    /// pass.
    ///
    /// # Errors
    /// Another task or solver, or settings that need the rows in memory (class or sample weights, warm
    /// starts), refused naming why; then as [`StructuredSvm::fit_multiclass`], with errors naming the file and
    /// line. Checkpoints work as in memory (kind `checkpoint-multiclass-ssg-stream`, made for these rows and
    /// this seed's order; a run resumed from one ends with the bits of one never stopped).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use maxmargin::structured_svm::{StructSolverKind, StructuredSvmParams, Task};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("iris.svm");
    /// std::fs::write(&path, maxmargin::datasets::IRIS)?;
    /// let mut p = StructuredSvmParams::new(Task::Multiclass);
    /// p.solver = StructSolverKind::Ssg;
    /// p.max_passes = Some(20.0);
    /// let report = p.check()?.fit_multiclass_stream(&path, dir.path())?;
    /// assert_eq!((report.model.classes.len(), report.model.training.n_samples), (3, 150));
    /// # Ok(()) }
    /// ```
    pub fn fit_multiclass_stream(
        &self,
        path: &Path,
        temp_dir: &Path,
    ) -> Result<StructFitReport, Error> {
        let p = &self.params;
        if p.kernel.is_some() || p.approx.is_some() {
            let reason =
                "cannot stream: kernels and their approximations are fitted on rows in memory";
            return Err(crate::error::refuse("kernel", "with --stream", reason));
        }
        if p.task != Task::Multiclass || p.solver != StructSolverKind::Ssg {
            let value = format!("{} with {:?}", p.task.kind(), p.solver).to_lowercase();
            let reason = "cannot stream; multiclass with ssg can (the other multiclass solvers keep a dual per \
                          example and class in memory)";
            return Err(crate::error::refuse("task and solver", value, reason));
        }
        if !p.class_weights.is_empty() || self.sample_weights.is_some() || self.warm.is_some() {
            let reason = "are not built for streaming";
            return Err(crate::error::refuse(
                "class or sample weights and warm starts",
                String::new(),
                reason,
            ));
        }
        let mut sketch = crate::inputs::SketchBuilder::default();
        let rows = RowFile::prepare_observed(path, temp_dir, p.seed, &mut |l, x| sketch.add(l, x))?;
        let summary = rows.summary().clone();
        let mut warnings = Vec::new();
        let (n, d) = (summary.n_rows, summary.n_features);
        // The limits before the first allocation that follows the features (the scaler's statistics).
        let scaled = p.scale != maxmargin_core::scale::Scaling::None;
        crate::limits::check_streamed(path, &summary, scaled)?;
        let scaler = crate::convergence::fit_scaler_streamed(p.scale, &rows, &mut warnings)?;
        let distinct: Vec<f64> = summary.labels.iter().map(|l| l.0).collect();
        let classes = ClassLabels::from_labels(path, &distinct)?;
        crate::limits::check_classes(path, &classes.classes, n)?;
        crate::limits::check_two_classes(path, &classes.classes)?;
        let k = classes.len();
        crate::limits::check_weights(path, d, k, summary.nnz as usize)?;
        let space = MulticlassSpace::new(self.width(d), k)?;
        let lambda = p.regularization.lambda(n)?;
        let budget = p.budget().with_gap(self.gap_target()).evaluating_every(
            p.eval_every
                .map_or(STREAM_EVAL_EVERY as f64, |e| e.ceil().max(1.0)),
        );
        let trainer = Trainer::new(budget)?;
        let mut source = Examples {
            rows: &rows,
            classes: &classes,
            d,
            bias: p.bias,
            scaler: scaler.as_ref(),
            failed: None,
        };
        let mut ssg = Streamed::new(p.ssg().check()?);
        // A checkpoint is made for these rows (their sketch's sum: any order), in the seed's order.
        let made = crate::checkpoint::Made {
            n_samples: n,
            dim: space.dim(),
            lambda: lambda.get(),
            rows: sketch.sum(),
        };
        let kind = self.checkpoint_kind();
        let tag = (kind.as_str(), made, p, p.seed);
        let fit = ExampleStream::new(&mut source, &space, lambda.get())
            .map_err(Error::from)
            .and_then(|problem| {
                let init = |s: &mut Streamed<_>| Ok(s.init(&problem)?);
                let train = crate::checkpoint::train_stream;
                let mut heard = crate::checkpoint::Heard::Kept(Vec::new());
                let fit = train(
                    &trainer, &mut ssg, &problem, init, tag, &self.plan, &mut heard,
                );
                if let crate::checkpoint::Heard::Kept(w) = heard {
                    warnings.extend(w);
                }
                fit.map(|f| f.0)
            })
            .map_err(|e| match source.failed.take() {
                Some(io) => Error::from(io),
                None => e,
            })?;
        let max_abs = if scaler.is_some() {
            1.0
        } else {
            summary.max_abs
        };
        let parts = ReportParts {
            classes: classes.classes,
            scaler,
            warnings,
            max_abs,
            over_ranks: false,
        };
        let mut report = self.finish(fit, lambda.get(), (n, d, k), parts)?;
        // What an in-memory run records of its rows, taken as the stream parsed them.
        report.model.inputs = Some(Box::new(crate::inputs::Inputs {
            rows: Some(sketch.finish()),
            ..Default::default()
        }));
        Ok(report)
    }
}

/// The row file as multiclass examples: the class index of each label, the bias feature appended. A read
/// error is kept whole here (the optimizer sees [`OptimError::Source`]).
struct Examples<'a> {
    rows: &'a RowFile,
    classes: &'a ClassLabels,
    d: usize,
    bias: bool,
    scaler: Option<&'a Scaler>,
    failed: Option<IoError>,
}

impl Resumable for Examples<'_> {
    fn passes(&self) -> u64 {
        self.rows.passes()
    }

    fn set_passes(&mut self, passes: u64) {
        self.rows.set_passes(passes);
    }

    /// The passes made: SSG keeps no column.
    fn place(&mut self) -> Result<SourcePlace, OptimError> {
        Ok(SourcePlace {
            passes: self.rows.passes(),
            column: None,
        })
    }

    fn set_place(&mut self, place: SourcePlace) -> Result<(), OptimError> {
        self.rows.set_passes(place.passes);
        Ok(())
    }
}

impl ExamplePasses<MulticlassSpace> for Examples<'_> {
    fn n_examples(&self) -> usize {
        self.rows.summary().n_rows
    }

    fn pass(&mut self, example: &mut ExampleVisit<'_, MulticlassSpace>) -> Result<(), OptimError> {
        let (rows, classes, d, bias, scaler) =
            (self.rows, self.classes, self.d, self.bias, self.scaler);
        let r = rows.pass(|r| {
            let Some(y) = classes.index_of(r.label) else {
                return Err(PassError::Io(IoError::Parse {
                    path: rows.source().to_path_buf(),
                    line: r.line,
                    column: 1,
                    field: "label",
                    message: format!(
                        "label {} is not one of the {} classes",
                        r.label,
                        classes.len()
                    ),
                }));
            };
            let x = match scaler {
                Some(sc) => with_bias(sc.transform_row(r.x).as_row(), d, bias),
                None => with_bias(r.x, d, bias),
            };
            example(&x, &y).map_err(PassError::Optim)
        });
        PassError::settle(r, &mut self.failed)
    }
}
