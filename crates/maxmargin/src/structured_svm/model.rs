//! The trained structural model: predictions, task measures, save and load.

use super::*;

/// A prediction of a structured model, in the data's own terms.
#[derive(Debug, Clone, PartialEq)]
pub enum Prediction {
    /// A class value.
    Class(f64),
    /// A label set (0-based labels, increasing); displayed as `1,3`, or
    /// [`EMPTY_SET`](maxmargin_io::multilabel::EMPTY_SET) when empty.
    Labels(Vec<u32>),
    /// One tag per position (1-based, as in svm_hmm files).
    Tags(Vec<u32>),
}

impl std::fmt::Display for Prediction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let join = |v: &[u32], sep: &str| {
            v.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(sep)
        };
        match self {
            Self::Class(c) => f.write_str(&maxmargin_io::libsvm::format_number(*c)),
            Self::Labels(l) if l.is_empty() => f.write_str(maxmargin_io::multilabel::EMPTY_SET),
            Self::Labels(l) => f.write_str(&join(l, ",")),
            Self::Tags(t) => f.write_str(&join(t, " ")),
        }
    }
}

impl StructuredModel {
    pub(super) fn width(&self) -> usize {
        (self.n_features + usize::from(self.params.bias)).max(1)
    }

    fn multiclass_space(&self) -> Result<MulticlassSpace, Error> {
        Ok(MulticlassSpace::new(self.width(), self.n_labels)?)
    }

    pub(super) fn multilabel_space(&self) -> Result<MultilabelSpace, Error> {
        Ok(MultilabelSpace::new(self.width(), self.n_labels)?)
    }

    pub(super) fn inputs(
        &self,
        x: &maxmargin_core::vector::SparseRows,
    ) -> Result<Vec<SparseVec>, Error> {
        let scaled = self.scaler.as_ref().map(|s| s.transform(x));
        let x = scaled.as_ref().unwrap_or(x);
        Ok(match &self.features {
            Some(map) => {
                crate::limits::check_mapped_rows(x.n_rows(), map.components())?;
                rows_to_vecs(&map.transform(x)?, self.n_features, self.params.bias)
            }
            None => rows_to_vecs(x, self.n_features, self.params.bias),
        })
    }

    pub(super) fn sequences(&self, seqs: &[Vec<SparseVec>], n_edge: usize) -> Vec<Vec<SparseVec>> {
        sequences_with_edges(
            seqs,
            (self.n_features, n_edge),
            self.params.bias,
            self.scaler.as_ref(),
        )
    }

    pub(super) fn wrong_task(&self, expected: Task) -> Error {
        Error::Optim(OptimError::InvalidParam {
            name: "task",
            value: self.task.kind().into(),
            reason: match expected {
                Task::Multiclass => "the data is multiclass",
                Task::Multilabel => "the data is multilabel",
                Task::Chain => "the data is sequences",
                Task::Custom => "the data is for a custom space (use CustomModel)",
                Task::Graph => "the data is graphs (use GraphModel)",
            },
        })
    }

    /// Predicts every row of multiclass data: the class of the highest score, the lowest on ties (the
    /// space's decoding).
    ///
    /// # Errors
    /// When the model is not a multiclass model, or a row's scores are not finite
    /// ([`crate::limits::check_scores`]).
    pub fn predict_multiclass(&self, data: &LabeledData) -> Result<Vec<Prediction>, Error> {
        let class = |k: usize| Prediction::Class(self.classes.get(k).copied().unwrap_or(k as f64));
        Ok(self
            .multiclass_scores(data)?
            .iter()
            .map(|s| class(super::kernel::argmax(s)))
            .collect())
    }

    /// The decision value of every class for every row of multiclass data, classes in the model's order
    /// ([`StructuredModel::classes`]): `⟨w_c, x⟩` (with the bias weight), the values the prediction maximizes.
    ///
    /// # Errors
    /// When the model is not a multiclass model, or a row's scores are not finite (weights times features
    /// beyond `f64::MAX`), naming its line.
    pub fn multiclass_scores(&self, data: &LabeledData) -> Result<Vec<Vec<f64>>, Error> {
        if self.task != Task::Multiclass {
            return Err(self.wrong_task(Task::Multiclass));
        }
        let scores = match self.kernel_scores(&data.x) {
            Some(scores) => scores,
            None => {
                let space = self.multiclass_space()?;
                self.inputs(&data.x)?
                    .iter()
                    .map(|x| {
                        (0..self.n_labels as u32)
                            .map(|c| space.score(&self.w, x, &c))
                            .collect()
                    })
                    .collect()
            }
        };
        crate::limits::check_scores(data, &scores, "no class can be read from it")?;
        Ok(scores)
    }

    /// Predicts every row of multilabel data: the labels whose scores are positive.
    ///
    /// # Errors
    /// When the model is not a multilabel model, or a row's scores are not finite.
    pub fn predict_multilabel(&self, data: &MultilabelData) -> Result<Vec<Prediction>, Error> {
        Ok(self
            .multilabel_scores(data)?
            .iter()
            .map(|s| {
                Prediction::Labels(
                    (0..s.len() as u32)
                        .filter(|&l| s[l as usize] > 0.0)
                        .collect(),
                )
            })
            .collect())
    }

    pub(super) fn objective<S: OutputSpace>(
        &self,
        space: &S,
        x: &[S::Input],
        y: &[S::Output],
        lambda: Option<f64>,
    ) -> Result<Option<f64>, Error>
    where
        S::Output: Sync,
    {
        let Some(l) = lambda else { return Ok(None) };
        let lambda = Lambda::new(l)?;
        let problem =
            StructProblem::new(space, x, y, lambda)?.with_rescaling(self.params.rescaling)?;
        Ok(Some(
            0.5 * l * norm_sq(&self.w) + problem.mean_hinge(&self.w)?,
        ))
    }

    /// Accuracy (and the objective with `lambda`) on multiclass data.
    ///
    /// A label training never saw counts as an error (in `unknown_labels`, and as a class of its own in the
    /// table), and the objective is then not given.
    ///
    /// # Errors
    /// The wrong task, or an empty dataset.
    pub fn evaluate_multiclass(
        &self,
        data: &LabeledData,
        lambda: Option<f64>,
    ) -> Result<StructEvaluation, Error> {
        if self.task != Task::Multiclass {
            return Err(self.wrong_task(Task::Multiclass));
        }
        // A label training never saw takes an index past the model's classes: never predicted, an error.
        let (y, classes, unknown) = class_indices_with_unknown(&self.classes, data);
        let n = nonempty(data.n_samples(), &data.source)?;
        let space = self.multiclass_space()?;
        if lambda.is_some() && self.params.solver == super::StructSolverKind::Softmax {
            return Err(crate::error::refuse(
                "lambda",
                "for a softmax model",
                "cannot give the objective with the hinge of a softmax model; its training objective (the \
                 softmax loss) is in the model",
            ));
        }
        let predicted: Vec<u32> = self
            .multiclass_scores(data)?
            .iter()
            .map(|s| super::kernel::argmax(s) as u32)
            .collect();
        let x: Vec<SparseVec> = match &self.kernel {
            Some(_) => {
                if lambda.is_some() {
                    return Err(crate::error::refuse(
                        "lambda",
                        "for a kernel model",
                        "cannot give the objective of a multiclass kernel model, whose machines each \
                         have their own (the model's training objective is their sum)",
                    ));
                }
                Vec::new()
            }
            None => self.inputs(&data.x)?,
        };
        // A probabilistic model (softmax, one-vs-rest logistic) is judged on its own probabilities too.
        let (brier, log_loss) = if self.is_probabilistic() {
            let (b, l) = super::calibrated::brier_and_log_loss(&self.own_probabilities(data)?, &y);
            (Some(b), Some(l))
        } else {
            (None, None)
        };
        Ok(StructEvaluation {
            brier,
            log_loss,
            n,
            lambda,
            // An unknown label has no hinge term: the objective is given only when every label is known.
            objective: match unknown {
                None => self.objective(&space, &x, &y, lambda)?,
                Some(_) => None,
            },
            converged: self.training.converged,
            unknown_labels: unknown,
            ..super::multilabel::classified(&classes, &y, &predicted)
        })
    }

    /// Saves the model atomically (JSON for `.json` paths).
    ///
    /// # Errors
    /// [`Error::Io`] naming the file.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        if self.shape.edge_features > 0 {
            return Err(IoError::BadModel {
                path: path.to_path_buf(),
                message: format!(
                    "a chain model with {} edge features is saved inside a tagger (Tagger::save), whose \
                     dictionary says where they are",
                    self.shape.edge_features
                ),
            }
            .into());
        }
        self.check_consistent(path)?;
        Ok(model_file::save(path, self.task.kind(), self)?)
    }

    /// Loads a structural model of any task, checking it is whole and consistent (a calibrated multiclass
    /// file gives its model).
    ///
    /// # Errors
    /// [`Error::Io`] for a missing, foreign, truncated, corrupt or inconsistent file.
    pub fn load(path: &Path) -> Result<Self, Error> {
        let header = model_file::read_header(path)?;
        if header.kind == super::MULTICLASS_DECISION_KIND {
            return Ok(super::CalibratedMulticlass::load(path)?.model);
        }
        let task = match header.kind.as_str() {
            "multiclass" => Task::Multiclass,
            "multilabel" => Task::Multilabel,
            "chain" => Task::Chain,
            other => {
                return Err(IoError::WrongKind {
                    path: path.to_path_buf(),
                    expected: "multiclass, multilabel or chain".into(),
                    found: other.into(),
                }
                .into());
            }
        };
        let model: Self = if header.format_version < 2 {
            let (_, old): (_, crate::compat::v1::StructuredModelV1) =
                model_file::load(path, task.kind())?;
            old.into()
        } else if header.format_version < 4 {
            let (_, old): (_, crate::compat::StructuredModelV3) =
                model_file::load(path, task.kind())?;
            old.into()
        } else if header.format_version < 5 {
            let (_, old): (_, crate::compat::StructuredModelV4) =
                model_file::load(path, task.kind())?;
            old.into()
        } else if header.format_version < 6 {
            let (_, old): (_, crate::compat::StructuredModelV5) =
                model_file::load(path, task.kind())?;
            old.into()
        } else if header.format_version < 7 {
            let (_, old): (_, crate::compat::StructuredModelV6) =
                model_file::load(path, task.kind())?;
            old.into()
        } else {
            model_file::load(path, task.kind())?.1
        };
        if model.task != task {
            return Err(IoError::BadModel {
                path: path.to_path_buf(),
                message: format!("a {} file holds a {} model", task.kind(), model.task.kind()),
            }
            .into());
        }
        model.validated(path)
    }

    /// A model decoded by other means than [`StructuredModel::load`] (a Python pickle) as `load` makes it:
    /// its sizes and values checked (errors name `source`), a chain's order read from its weights.
    ///
    /// # Errors
    /// [`Error::Io`] ([`IoError::BadModel`]) naming `source` and what disagrees.
    pub fn validated(mut self, source: &Path) -> Result<Self, Error> {
        // Graph and custom models are whole only with their spaces (`GraphModel`, `CustomModel`).
        if !matches!(self.task, Task::Multiclass | Task::Multilabel | Task::Chain) {
            return Err(IoError::BadModel {
                path: source.to_path_buf(),
                message: format!(
                    "a {} model without its space (a multiclass, multilabel or chain model was expected)",
                    self.task.kind()
                ),
            }
            .into());
        }
        self.check_consistent(source)?;
        self.shape = self.plain_shape();
        Ok(self)
    }
}

impl StructuredModel {
    /// Checks that the sizes and values read from `path` agree (weights for the features and labels, class
    /// values, a finite scaler and finite weights).
    ///
    /// # Errors
    /// [`IoError::BadModel`] naming the file.
    pub(crate) fn check_consistent(&self, path: &Path) -> Result<(), Error> {
        self.check_consistent_with_edges(path, self.plain_shape())
    }

    /// As `check_consistent`, for a chain model of the given shape (a tagger's bigram templates and order).
    pub(crate) fn check_consistent_with_edges(
        &self,
        path: &Path,
        shape: ChainShape,
    ) -> Result<(), Error> {
        let n_edge = shape.edge_features;
        // Sizes from the file are checked with overflow-free arithmetic against the weights actually read
        // (a crafted `"n_labels": 9223372036854775808` wrapped around and later asked for every byte there is).
        let d = self.n_features.checked_add(usize::from(self.params.bias));
        let l = self.n_labels;
        let bad = |message: String| -> Error {
            IoError::BadModel {
                path: path.to_path_buf(),
                message,
            }
            .into()
        };
        if let Some(why) = self
            .inputs
            .as_ref()
            .and_then(|i| i.invalid(self.n_input_features()))
        {
            return Err(bad(why));
        }
        if !(self.lambda.is_finite() && self.lambda > 0.0) {
            return Err(bad(format!(
                "lambda is {}, not positive and finite",
                self.lambda
            )));
        }
        if self.is_nonlinear() && self.task != Task::Multiclass {
            return Err(bad(format!(
                "a {} model with kernel machines or features",
                self.task.kind()
            )));
        }
        if let Some(why) = self
            .kernel
            .as_ref()
            .and_then(|k| k.invalid(l, self.n_features))
        {
            return Err(bad(why));
        }
        if let Some(why) = self
            .features
            .as_ref()
            .and_then(|m| m.invalid(self.n_features))
        {
            return Err(bad(why));
        }
        let expected = d.and_then(|d| match self.task {
            _ if self.kernel.is_some() => Some(0),
            Task::Multiclass | Task::Multilabel | Task::Custom => d.max(1).checked_mul(l),
            // A graph model's weights are checked against its space by `GraphModel`.
            Task::Graph => Some(self.w.len()),
            Task::Chain => self
                .first_order_len(n_edge)
                .and_then(|v| match shape.second_order {
                    true => v.checked_add(l.checked_pow(3)?),
                    false => Some(v),
                }),
        });
        let classes_ok = self.task != Task::Multiclass || self.classes.len() == l;
        let scaler_ok = self.scaler.as_ref().is_none_or(|s| {
            s.factor.len() <= self.n_input_features()
                && s.factor.iter().all(|v| v.is_finite() && *v >= 0.0)
                && s.offsets
                    .iter()
                    .all(|(j, o)| (*j as usize) < s.factor.len() && o.is_finite())
        });
        let mut sorted = self.classes.clone();
        sorted.sort_by(f64::total_cmp);
        if let Some(c) = sorted.iter().find(|c| !c.is_finite()) {
            return Err(IoError::BadModel {
                path: path.to_path_buf(),
                message: format!("the class value {c} is not finite"),
            }
            .into());
        }
        if let Some(p) = sorted.windows(2).find(|p| p[0] == p[1]) {
            return Err(IoError::BadModel {
                path: path.to_path_buf(),
                message: format!("the class value {} repeats", p[0]),
            }
            .into());
        }
        // A chain's class weights are tag numbers (1-based), a graph's labels (0-based), with finite weights
        // >= 0.
        let first = f64::from(u8::from(self.task == Task::Chain));
        let tag_weights_ok = !matches!(self.task, Task::Chain | Task::Graph)
            || self.params.class_weights.iter().all(|&(tag, w)| {
                tag.fract() == 0.0
                    && tag >= first
                    && tag < l as f64 + first
                    && w.is_finite()
                    && w >= 0.0
            });
        if !tag_weights_ok {
            return Err(IoError::BadModel {
                path: path.to_path_buf(),
                message: format!(
                    "the {} model's class weights {:?} name labels outside {first}..{} or are not finite and \
                     >= 0",
                    self.task.kind(),
                    self.params.class_weights,
                    l as f64 + first
                ),
            }
            .into());
        }
        if expected != Some(self.w.len())
            || !classes_ok
            || !scaler_ok
            || !self.w.iter().all(|v| v.is_finite())
        {
            return Err(IoError::BadModel {
                path: path.to_path_buf(),
                message: format!(
                    "inconsistent {} model: {} weights for {} features{} and {} labels, {} class values",
                    self.task.kind(),
                    self.w.len(),
                    self.n_features,
                    match (n_edge, shape.second_order) {
                        (0, false) => String::new(),
                        (0, true) => " (second order)".into(),
                        (e, false) => format!(" and {e} bigram features"),
                        (e, true) => format!(" and {e} bigram features (second order)"),
                    },
                    self.n_labels,
                    self.classes.len()
                ),
            }
            .into());
        }
        Ok(())
    }
}

/// The class index of each of `data`'s labels among `classes`; a label outside them is an error naming its
/// line.
pub(super) fn class_indices(classes: &[f64], data: &LabeledData) -> Result<Vec<u32>, Error> {
    let classes = ClassLabels {
        classes: classes.to_vec(),
    };
    Ok(classes.indices(data)?)
}

/// The class indices of `data`'s labels where a label the model never saw takes an index past `classes`
/// (`classes.len()` plus its place among those labels, in increasing order), the classes extended by those
/// labels, and how many rows have one.
pub(super) fn class_indices_with_unknown(
    classes: &[f64],
    data: &LabeledData,
) -> (Vec<u32>, Vec<f64>, Option<super::UnknownLabels>) {
    let known = ClassLabels {
        classes: classes.to_vec(),
    };
    let found: Vec<Option<u32>> = data.labels.iter().map(|&l| known.index_of(l)).collect();
    let unknown_rows = found.iter().filter(|k| k.is_none()).count();
    let unseen: Vec<f64> = (data.labels.iter().zip(&found))
        .filter(|(_, k)| k.is_none())
        .map(|(&l, _)| l)
        .collect();
    let Some(unknown) = super::UnknownLabels::of(unknown_rows, unseen) else {
        let y = found.into_iter().map(Option::unwrap_or_default).collect();
        return (y, classes.to_vec(), None);
    };
    let extra = ClassLabels {
        classes: unknown.labels.clone(),
    };
    let y = (data.labels.iter().zip(found))
        .map(|(&l, k)| {
            k.or_else(|| extra.index_of(l).map(|e| classes.len() as u32 + e))
                .unwrap_or_default()
        })
        .collect();
    let all = [classes, &unknown.labels[..]].concat();
    (y, all, Some(unknown))
}

pub(super) fn nonempty(n: usize, source: &Path) -> Result<usize, Error> {
    if n == 0 {
        Err(IoError::Empty {
            path: source.to_path_buf(),
        }
        .into())
    } else {
        Ok(n)
    }
}
