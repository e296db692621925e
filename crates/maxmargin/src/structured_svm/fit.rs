//! Fitting each task: checking and scaling the data, building the examples, training, and the model.

use super::*;

/// Sequences as a chain space reads them, with their tags.
pub(super) type ChainExamples = Examples<Vec<SparseVec>, Vec<u32>>;

impl StructuredSvm {
    /// Class weights by class index, from the `(class value, weight)` pairs of the parameters.
    pub(super) fn class_weight_vector(&self, classes: &ClassLabels) -> Result<Vec<f64>, Error> {
        if self.params.class_weights.is_empty() {
            return Ok(Vec::new());
        }
        let mut out = vec![1.0; classes.len()];
        for &(label, weight) in &self.params.class_weights {
            let Some(m) = classes.classes.iter().position(|&c| c == label) else {
                return Err(OptimError::InvalidParam {
                    name: "class weight",
                    value: label.to_string(),
                    reason: "names a class the training data does not have",
                }
                .into());
            };
            out[m] = weight;
        }
        crate::limits::some_weight_above_zero(&out, "class weights", "class weights")?;
        Ok(out)
    }

    /// The scaler for `x` (or the note that it looks badly scaled) and the scaled copy, when asked for.
    fn scaled(
        &self,
        x: &maxmargin_core::vector::SparseRows,
        warnings: &mut Vec<String>,
    ) -> Result<(Option<Scaler>, Option<maxmargin_core::vector::SparseRows>), Error> {
        let kernel = self.params.kernel.map(|k| k.kind);
        let scaler = crate::convergence::fit_scaler_for(self.params.scale, x, kernel, warnings)?;
        let scaled = scaler.as_ref().map(|s| s.transform(x));
        Ok((scaler, scaled))
    }

    /// What multiclass training needs from the data before the examples are built: checked sizes, the
    /// class map and targets, class weights, the scaler (and the scaled rows), the warnings so far.
    pub(super) fn prepare_multiclass(
        &self,
        data: &LabeledData,
    ) -> Result<(MulticlassParts, Vec<u32>, Option<SparseRows>), Error> {
        crate::limits::check_data_features(data)?;
        let classes = ClassLabels::from_labels(&data.source, &data.labels)?;
        crate::limits::check_classes(&data.source, &classes.classes, data.n_samples())?;
        crate::limits::check_two_classes(&data.source, &classes.classes)?;
        let (d, nnz) = (data.x.n_features(), data.x.nnz());
        crate::limits::check_weights(&data.source, d, classes.len(), nnz)?;
        if self.params.solver == StructSolverKind::Dcd {
            let (n, k, nnz) = (data.n_samples(), classes.len(), data.x.nnz());
            crate::limits::check_dual_table(&data.source, n, k, nnz)?;
        }
        let y = classes.indices(data)?;
        let weights = self.class_weight_vector(&classes)?;
        let mut warnings = Vec::new();
        let (scaler, scaled) = self.scaled(&data.x, &mut warnings)?;
        let trained = scaled.as_ref().unwrap_or(&data.x);
        crate::limits::check_row_norms(data, trained)?;
        let max_abs = crate::convergence::max_abs(trained);
        let parts = MulticlassParts {
            d: data.x.n_features(),
            classes,
            weights,
            scaler,
            warnings,
            max_abs,
        };
        Ok((parts, y, scaled))
    }

    /// Trains a multiclass model on LIBSVM data (any class values).
    ///
    /// # Errors
    /// [`Error::Io`] for data without classes, [`Error::Optim`] for bad parameters.
    pub fn fit_multiclass(
        &self,
        data: &LabeledData,
        observer: &mut (dyn Observer + Send),
    ) -> Result<StructFitReport, Error> {
        let mut report = self.fit_multiclass_rows(data, observer)?;
        report.model.inputs = Some(Box::new(crate::inputs::Inputs::of(data)));
        Ok(report)
    }

    fn fit_multiclass_rows(
        &self,
        data: &LabeledData,
        observer: &mut (dyn Observer + Send),
    ) -> Result<StructFitReport, Error> {
        self.check_sample_weights(Task::Multiclass)?;
        let (mut parts, y, scaled) = self.prepare_multiclass(data)?;
        let x = scaled.as_ref().unwrap_or(&data.x);
        if let Some(kernel) = self.params.kernel {
            return self.fit_kernel_multiclass(x, &y, parts, kernel);
        }
        let map = match &self.params.approx {
            Some(a) => {
                let n = x.n_rows();
                crate::limits::check_mapped_rows(n, a.dimension(n))?;
                Some(a.fit(x, self.params.seed)?)
            }
            None => None,
        };
        let mapped = map.as_ref().map(|m| m.transform(x)).transpose()?;
        let x = mapped.as_ref().unwrap_or(x);
        let d_input = parts.d;
        if let Some(m) = &map {
            parts.d = m.components();
        }
        if let Some(map) = map {
            let k = parts.classes.len();
            let report = if self.params.solver == StructSolverKind::Ovr {
                let (fit, lambda) = self.run_ovr(x, &y, k, &parts.weights)?;
                self.finish(fit, lambda, (y.len(), parts.d, k), parts.into_report())?
            } else {
                let x = rows_to_vecs(x, parts.d, self.params.bias);
                self.multiclass_examples(Examples { x, y }, parts, observer)?
            };
            return Ok(self.fold_map(report, map, d_input));
        }
        if self.params.solver == StructSolverKind::Ovr {
            let k = parts.classes.len();
            let (fit, lambda) = self.run_ovr(x, &y, k, &parts.weights)?;
            return self.finish(fit, lambda, (y.len(), parts.d, k), parts.into_report());
        }
        let x = rows_to_vecs(x, parts.d, self.params.bias);
        drop(scaled);
        self.multiclass_examples(Examples { x, y }, parts, observer)
    }

    /// As [`StructuredSvm::fit_multiclass`], but takes the data and frees its matrix once the examples are
    /// built, so the data is held once while training instead of twice (what the command does).
    ///
    /// # Errors
    /// As [`StructuredSvm::fit_multiclass`].
    pub fn fit_multiclass_owned(
        &self,
        data: LabeledData,
        observer: &mut (dyn Observer + Send),
    ) -> Result<StructFitReport, Error> {
        if self.params.solver == StructSolverKind::Ovr
            || self.params.kernel.is_some()
            || self.params.approx.is_some()
        {
            return self.fit_multiclass(&data, observer);
        }
        self.check_sample_weights(Task::Multiclass)?;
        let (parts, y, scaled) = self.prepare_multiclass(&data)?;
        let x = rows_to_vecs(
            scaled.as_ref().unwrap_or(&data.x),
            parts.d,
            self.params.bias,
        );
        drop(scaled);
        let inputs = crate::inputs::Inputs::of(&data);
        drop(data);
        let mut report = self.multiclass_examples(Examples { x, y }, parts, observer)?;
        report.model.inputs = Some(Box::new(inputs));
        Ok(report)
    }

    fn multiclass_examples(
        &self,
        ex: Examples<SparseVec, u32>,
        parts: MulticlassParts,
        observer: &mut (dyn Observer + Send),
    ) -> Result<StructFitReport, Error> {
        let k = parts.classes.len();
        let space = MulticlassSpace::new(self.width(parts.d), k)?;
        let (fit, lambda) = match self.params.solver {
            StructSolverKind::Dcd => {
                self.run_cs(&space, (&ex.x, &ex.y), parts.weights.clone(), observer)?
            }
            StructSolverKind::Softmax => self.run_softmax(&space, &ex, &parts.weights, observer)?,
            // The structural solvers train on the feature-major space (an example's scores in one walk
            // over `w`; the 100-class set's BCFW run in 0.62× the time), from a warm start's weights turned
            // to it, and the model keeps the class-major weights. Their checkpoints' kind says so, so one
            // from before (class-major) is refused by name.
            _ => {
                let major = space.clone().feature_major();
                let svm = Self {
                    warm: self.warm.as_deref().map(|w| major.from_class_major(w)),
                    ..self.inferring_with("by-feature")
                };
                let (mut fit, lambda) = svm.run(&major, (&ex.x, &ex.y), observer)?;
                fit.output = major.class_major(&fit.output);
                (fit, lambda)
            }
        };
        let shape = (ex.x.len(), parts.d, k);
        drop(ex);
        self.finish(fit, lambda, shape, parts.into_report())
    }

    /// Trains a multilabel model over the labels the data holds (one past the largest).
    ///
    /// # Errors
    /// As [`StructuredSvm::fit_multiclass`].
    pub fn fit_multilabel(
        &self,
        data: &MultilabelData,
        observer: &mut (dyn Observer + Send),
    ) -> Result<StructFitReport, Error> {
        self.fit_multilabel_with_labels(data, 0, observer)
    }

    /// Trains a multilabel model over at least `n_labels` labels: `max(n_labels, 1 + largest label held)`.
    ///
    /// A label no row holds (an indicator column that is never on) still has its weights, trained to keep
    /// it off, so the model and its file score as many labels as the data declared.
    ///
    /// # Errors
    /// As [`StructuredSvm::fit_multiclass`].
    pub fn fit_multilabel_with_labels(
        &self,
        data: &MultilabelData,
        n_labels: usize,
        observer: &mut (dyn Observer + Send),
    ) -> Result<StructFitReport, Error> {
        self.check_sample_weights(Task::Multilabel)?;
        super::model::nonempty(data.labels.len(), &data.source)?;
        crate::limits::check_data_features(data)?;
        let held = maxmargin_io::multilabel::n_labels(data).max(1);
        // Multilabel labels count from 0: the largest is one below their number.
        crate::limits::check_labels(&data.source, "label number", held - 1, &data.labels)?;
        // Labels asked for beyond the data's cost weights only, which `check_weights` bounds.
        let l = held.max(n_labels);
        let d = data.x.n_features();
        crate::limits::check_weights(&data.source, d, l, data.x.nnz())?;
        let mut warnings = Vec::new();
        warnings.extend(one_output(
            data.labels.iter(),
            &data.source,
            "label set",
            |set: &&Vec<u32>| {
                let names: Vec<String> = set.iter().map(u32::to_string).collect();
                format!("{{{}}}", names.join(","))
            },
        ));
        let (scaler, scaled) = self.scaled(&data.x, &mut warnings)?;
        let x = scaled.as_ref().unwrap_or(&data.x);
        crate::limits::check_row_norms(data, x)?;
        let max_abs = crate::convergence::max_abs(x);
        let ex = Examples {
            x: rows_to_vecs(x, d, self.params.bias),
            y: indicators(&data.labels, l),
        };
        drop(scaled);
        let space = MultilabelSpace::new(self.width(d), l)?;
        let (fit, lambda) = self.run(&space, (&ex.x, &ex.y), observer)?;
        let shape = (ex.x.len(), d, l);
        let report = ReportParts {
            classes: Vec::new(),
            scaler,
            warnings,
            max_abs,
            over_ranks: false,
        };
        self.finish(fit, lambda, shape, report)
    }

    /// Trains a chain model on svm_hmm sequences.
    ///
    /// # Errors
    /// As [`StructuredSvm::fit_multiclass`].
    pub fn fit_chain(
        &self,
        data: &SequenceData,
        observer: &mut (dyn Observer + Send),
    ) -> Result<StructFitReport, Error> {
        self.fit_chain_with_edges(data, self.shape, observer)
    }

    /// Trains a chain model of the given [`ChainShape`]: with `n` edge features (observation-dependent
    /// transitions, [`ChainSpace::with_edge_features`]; a plain `n` converts) feature indices
    /// `n_features..n_features + n` of a position score the transition into it, and scaling applies to
    /// the others; with second-order transitions a weight scores every triple of tags
    /// ([`ChainSpace::with_second_order`]; the model's weights say so, [`StructuredModel::is_second_order`]).
    /// Predict and evaluate with the same number of edge features
    /// ([`StructuredModel::predict_chain_with_edges`]).
    ///
    /// # Errors
    /// As [`StructuredSvm::fit_multiclass`], and edge or second-order weights far beyond the data's size.
    pub fn fit_chain_with_edges(
        &self,
        data: &SequenceData,
        shape: impl Into<ChainShape>,
        observer: &mut (dyn Observer + Send),
    ) -> Result<StructFitReport, Error> {
        let shape = shape.into();
        let n_edge = shape.edge_features;
        let (ex, report) = self.prepare_chain(data, n_edge)?;
        let (d, l) = (data.n_features, data.n_labels.max(1));
        if shape.second_order {
            let nnz = ex.x.iter().flatten().map(|v| v.as_row().nnz()).sum();
            crate::limits::check_second_order(&data.source, l, nnz)?;
        }
        let space = chain_space(&self.params.class_weights, self.width(d), l, shape)?;
        if let Some(w) = self.warm.as_ref().filter(|w| w.len() != space.dim()) {
            let order = ["first", "second"][usize::from(shape.second_order)];
            return Err(OptimError::InvalidParam {
                name: "warm start",
                value: format!(
                    "a chain model of {} weights, for this {order} order chain of {}",
                    w.len(),
                    space.dim()
                ),
                reason: "does not fit: its order, tags, features or edge features differ from this run's",
            }
            .into());
        }
        let (fit, lambda) = self.run(&space, (&ex.x, &ex.y), observer)?;
        let mut r = self.finish(fit, lambda, (ex.x.len(), d, l), report)?;
        r.model.shape = shape;
        Ok(r)
    }

    /// What chain training needs from the data: checked sizes, the scaler, the positions as the chain
    /// space reads them (bias and edge features placed), the warnings so far.
    pub(super) fn prepare_chain(
        &self,
        data: &SequenceData,
        n_edge: usize,
    ) -> Result<(ChainExamples, ReportParts), Error> {
        self.check_sample_weights(Task::Chain)?;
        super::model::nonempty(data.sequences.len(), &data.source)?;
        let (d, l) = (data.n_features, data.n_labels.max(1));
        let nnz = data
            .sequences
            .iter()
            .flatten()
            .map(|v| v.as_row().nnz())
            .sum();
        crate::limits::check_features(&data.source, d.saturating_add(n_edge), nnz)?;
        // Indices past the features would be dropped: a tagger's bigram features given to `fit_chain`.
        if let Some((i, j)) = data.sequences.iter().enumerate().find_map(|(i, s)| {
            let last = s.iter().filter_map(|x| x.as_row().indices().last()).max()?;
            (*last as usize >= d + n_edge).then_some((i, *last))
        }) {
            return Err(OptimError::InvalidParam {
                name: "feature index",
                value: format!("{j} in sequence {i}, with {d} features and {n_edge} edge features"),
                reason: "is beyond the data's features; edge features (a tagger's bigram templates) are \
                         trained by fit_chain_with_edges",
            }
            .into());
        }
        crate::limits::check_edge_weights(&data.source, n_edge, l, nnz)?;
        crate::limits::check_labels(&data.source, "tag number", l, &data.labels)?;
        let tags = data.labels.iter().flatten().map(|&t| (t, 1.0));
        super::some_part_weighted(&self.params.class_weights, tags, 1, super::alone)?;
        // Unary weights per tag, and the L × L transitions.
        crate::limits::check_weights(&data.source, d.saturating_add(l), l, nnz)?;
        let mut warnings = Vec::new();
        let tags = data.labels.iter().flatten();
        warnings.extend(one_output(tags, &data.source, "tag", |t| {
            (**t + 1).to_string()
        }));
        let tokens = || data.sequences.iter().flatten().map(SparseVec::as_row);
        let n_tokens = data.sequences.iter().map(Vec::len).sum();
        let scaler = crate::convergence::fit_scaler_on(
            self.params.scale,
            tokens,
            n_tokens,
            d,
            &mut warnings,
        )?;
        let ex = Examples {
            x: sequences_with_edges(
                &data.sequences,
                (d, n_edge),
                self.params.bias,
                scaler.as_ref(),
            ),
            y: data.labels.clone(),
        };
        crate::limits::check_part_norms(&ex.x, |g, p| {
            let qid = data
                .qids
                .get(g)
                .map_or(String::new(), |q| format!(" qid:{q}"));
            format!(
                "position {} of sequence{qid} of {}",
                p + 1,
                data.source.display()
            )
        })?;
        let max_abs =
            ex.x.iter()
                .flatten()
                .flat_map(|v| v.as_row().values().iter().map(|v| v.abs()))
                .fold(0.0, f64::max);
        let report = ReportParts {
            classes: Vec::new(),
            scaler,
            warnings,
            max_abs,
            over_ranks: false,
        };
        Ok((ex, report))
    }

    /// Trains a multiclass kernel SVM: one SMO machine per pair of classes (`ovo`) or per class (`ovr`).
    fn fit_kernel_multiclass(
        &self,
        x: &SparseRows,
        y: &[u32],
        parts: MulticlassParts,
        kernel: crate::linear::KernelChoice,
    ) -> Result<StructFitReport, Error> {
        use maxmargin_optim::smo::multiclass::{KernelMulticlass, Scheme};
        if !self.plan.is_empty() {
            return Err(crate::error::refuse(
                "checkpoint",
                "kernel",
                "cannot apply: a multiclass kernel SVM trains its machines one after another and keeps \
                 no resumable state",
            ));
        }
        let k = parts.classes.len();
        let resolved = kernel.resolve(x);
        let trainer = KernelMulticlass {
            scheme: if self.params.solver == StructSolverKind::Ovr {
                Scheme::OneVsRest
            } else {
                Scheme::OneVsOne
            },
            regularization: self.params.regularization,
            kernel: resolved,
            smo: maxmargin_optim::SmoParams {
                epsilon: self.params.epsilon,
                cache_mb: self.params.cache_mb,
            },
            budget: self.params.untraced_budget(),
            gap_target: Some(self.gap_target()),
        };
        let fit = crate::parallel::with_threads(self.params.threads, || {
            let samples = self.sample_weights.as_deref().unwrap_or_default();
            Ok::<_, Error>(trainer.fit(x, y, k, (&parts.weights, samples))?)
        })?;
        let lambda = self.params.regularization.lambda(y.len())?.get();
        let (machines, linear) = fit.replace_output(Vec::new());
        let expansion = MulticlassKernel::from_machines(resolved, trainer.scheme, x, machines);
        let mut report = self.finish(linear, lambda, (y.len(), parts.d, k), parts.into_report())?;
        report.model.kernel = Some(Box::new(expansion));
        Ok(report)
    }

    /// A model trained on an approximated kernel's features, made to score rows: random Fourier features
    /// are kept; a Nyström model is folded into per-class expansions over its landmarks (`c = N w_c`, the
    /// bias weight the intercept), and reads the `d_input` features again.
    fn fold_map(
        &self,
        mut report: StructFitReport,
        map: crate::approx::FittedMap,
        d_input: usize,
    ) -> StructFitReport {
        let m = &mut report.model;
        match map {
            crate::approx::FittedMap::Fourier(f) => {
                m.features = Some(Box::new(crate::approx::FeatureMap::Fourier(f)));
            }
            crate::approx::FittedMap::Nystroem(ny) => {
                let kc = m.n_features;
                let width = kc + usize::from(self.params.bias);
                let (coef, b): (Vec<Vec<f64>>, Vec<f64>) =
                    m.w.chunks(width.max(1))
                        .map(|block| {
                            let b = if self.params.bias { block[kc] } else { 0.0 };
                            (ny.fold(&block[..kc]), b)
                        })
                        .unzip();
                m.kernel = Some(Box::new(MulticlassKernel::per_class(
                    ny.kernel,
                    ny.landmarks,
                    coef,
                    &b,
                )));
                m.w = Vec::new();
                m.n_features = d_input;
            }
        }
        report
    }
}

/// The warning for training data whose outputs (label sets, tags) are all one: the model can only learn to
/// predict it everywhere (a multiclass model of one class is refused; these train, and say so).
fn one_output<T: PartialEq>(
    mut outputs: impl Iterator<Item = T>,
    source: &std::path::Path,
    what: &str,
    name: impl Fn(&T) -> String,
) -> Option<String> {
    let first = outputs.next()?;
    outputs.all(|o| o == first).then(|| {
        format!(
            "every {what} in {} is the same ({}): the model has nothing to tell apart and predicts it \
             everywhere",
            source.display(),
            name(&first)
        )
    })
}
