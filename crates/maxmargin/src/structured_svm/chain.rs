//! Chain models (svm_hmm sequences, and a tagger's chain): their spaces by shape, prediction and evaluation.

use super::model::nonempty;
use super::*;

impl StructuredModel {
    fn chain_space(&self, shape: ChainShape) -> Result<ChainSpace, Error> {
        chain_space(
            &self.params.class_weights,
            self.width(),
            self.n_labels,
            shape,
        )
    }

    /// The number of weights of a first-order chain model with `n_edge` edge features (`None` on overflow).
    pub(super) fn first_order_len(&self, n_edge: usize) -> Option<usize> {
        let l = self.n_labels;
        let d = self.n_features.checked_add(usize::from(self.params.bias))?;
        d.max(1)
            .checked_mul(l)
            .and_then(|u| l.checked_mul(l).and_then(|t| u.checked_add(t)))
            .and_then(|v| v.checked_add(l.checked_mul(2)?))
            .and_then(|v| v.checked_add(n_edge.checked_mul(l.checked_mul(l)?)?))
    }

    /// Whether this is a chain model with second-order transitions ([`StructuredSvm::fit_chain_with_edges`]
    /// with [`ChainShape::with_second_order`]). Training records the shape; a chain model's file has no
    /// edge features (those are saved in a tagger, whose template says its shape), so there the weights say
    /// it: `L³` more than a first-order chain's, one per triple of tags.
    pub fn is_second_order(&self) -> bool {
        self.task == Task::Chain
            && (self.shape.second_order
                || (self.shape.edge_features == 0 && self.weights_say_second_order()))
    }

    fn weights_say_second_order(&self) -> bool {
        let cube = self.n_labels.checked_pow(3);
        self.first_order_len(0)
            .zip(cube)
            .and_then(|(a, b)| a.checked_add(b))
            == Some(self.w.len())
    }

    /// The shape the model was trained with (or, loaded from a chain model's file, its weights say).
    pub(super) fn plain_shape(&self) -> ChainShape {
        ChainShape::edges(self.shape.edge_features).with_second_order(self.is_second_order())
    }

    /// Predicts every sequence (tags 1-based, as in svm_hmm files).
    ///
    /// # Errors
    /// When the model is not a chain model, or for an empty sequence.
    pub fn predict_chain(&self, data: &SequenceData) -> Result<Vec<Prediction>, Error> {
        self.predict_chain_with_edges(data, self.plain_shape())
    }

    /// As [`predict_chain`](Self::predict_chain), for a model trained with the given [`ChainShape`] (a
    /// number of edge features converts; [`StructuredSvm::fit_chain_with_edges`]).
    ///
    /// # Errors
    /// As [`predict_chain`](Self::predict_chain), and weights that do not fit the shape.
    pub fn predict_chain_with_edges(
        &self,
        data: &SequenceData,
        shape: impl Into<ChainShape>,
    ) -> Result<Vec<Prediction>, Error> {
        if self.task != Task::Chain {
            return Err(self.wrong_task(Task::Chain));
        }
        let shape = shape.into();
        let space = self.chain_space(shape)?;
        self.sequences(&data.sequences, shape.edge_features)
            .iter()
            .enumerate()
            .map(|(i, x)| {
                Ok(Prediction::Tags(
                    self.decoded(&space, x, data, i)?
                        .into_iter()
                        .map(|t| t + 1)
                        .collect(),
                ))
            })
            .collect()
    }

    /// Sequence `i`'s decoding; scores that overflow name the file and the sequence.
    pub(super) fn decoded<S>(
        &self,
        space: &S,
        x: &maxmargin_struct::Sequence,
        data: &SequenceData,
        i: usize,
    ) -> Result<S::Output, Error>
    where
        S: OutputSpace<Input = maxmargin_struct::Sequence>,
    {
        space.decode(&self.w, x).map_err(|e| match e {
            maxmargin_struct::StructError::NonFiniteScore { position } => at_token(
                data,
                (i, position),
                "the model's scores there are not finite numbers (the weights times its features overflow a \
                 64-bit float); no tags can be read from them"
                    .into(),
            ),
            e => e.into(),
        })
    }

    /// Per-token error and per-sequence accuracy (and the objective) on sequences. A tag training never saw
    /// counts as an error (in `unknown_labels`), and the objective is then not given.
    ///
    /// # Errors
    /// The wrong task, or an empty dataset.
    pub fn evaluate_chain(
        &self,
        data: &SequenceData,
        lambda: Option<f64>,
    ) -> Result<StructEvaluation, Error> {
        self.evaluate_chain_with_edges(data, self.plain_shape(), lambda)
    }

    /// As [`evaluate_chain`](Self::evaluate_chain), for a model trained with the given [`ChainShape`].
    ///
    /// # Errors
    /// As [`evaluate_chain`](Self::evaluate_chain).
    pub fn evaluate_chain_with_edges(
        &self,
        data: &SequenceData,
        shape: impl Into<ChainShape>,
        lambda: Option<f64>,
    ) -> Result<StructEvaluation, Error> {
        if self.task != Task::Chain {
            return Err(self.wrong_task(Task::Chain));
        }
        let shape = shape.into();
        let space = self.chain_space(shape)?;
        let n = nonempty(data.n_sequences(), &data.source)?;
        let seqs = self.sequences(&data.sequences, shape.edge_features);
        let mut counts = TagCounts::default();
        // A tag training never saw is counted as an error (no decoding can give it), not refused.
        let n_labels = self.n_labels as u32;
        let unknown = super::UnknownLabels::of_tags(&data.labels, self.n_labels);
        for (i, (x, y)) in seqs.iter().zip(&data.labels).enumerate() {
            let known: Vec<u32> = y
                .iter()
                .map(|&t| if t < n_labels { t } else { 0 })
                .collect();
            space.check_output(x, &known).map_err(|e| match e {
                maxmargin_struct::StructError::LabelOutOfRange {
                    position,
                    label,
                    n_labels,
                } => at_token(
                    data,
                    (i, position),
                    format!(
                        "tag {} is not one of the model's tags 1..{n_labels}",
                        u64::from(label) + 1
                    ),
                ),
                source => Error::from(OptimError::Example { index: i, source }),
            })?;
            counts.add(&self.decoded(&space, x, data, i)?, y);
        }
        Ok(StructEvaluation {
            lambda,
            // An unknown tag has no hinge term: the objective is given only when every tag is known.
            objective: match unknown {
                None => self.objective(&space, &seqs, &data.labels, lambda)?,
                Some(_) => None,
            },
            converged: self.training.converged,
            unknown_labels: unknown,
            ..counts.evaluation(n)
        })
    }
}

/// Token errors and wholly right sequences of predicted tags against the truth, as chain evaluations report
/// them.
#[derive(Default)]
pub(super) struct TagCounts {
    wrong: usize,
    tokens: usize,
    right: usize,
}

impl TagCounts {
    /// Counts one sequence.
    pub(super) fn add(&mut self, predicted: &[u32], truth: &[u32]) {
        let wrong = predicted.iter().zip(truth).filter(|(a, b)| a != b).count();
        self.wrong += wrong;
        self.tokens += truth.len();
        self.right += usize::from(wrong == 0);
    }

    /// The per-token error and per-sequence accuracy over `n` sequences.
    pub(super) fn evaluation(&self, n: usize) -> StructEvaluation {
        StructEvaluation {
            n,
            token_error: Some(self.wrong as f64 / self.tokens.max(1) as f64),
            sequence_accuracy: Some(self.right as f64 / n.max(1) as f64),
            ..StructEvaluation::default()
        }
    }
}

/// An error about token `position` (0-based) of sequence `i` of `data`, named as a user reads the file
/// (1-based, with the sequence's qid).
fn at_token(data: &SequenceData, (i, position): (usize, usize), message: String) -> Error {
    IoError::Mismatch {
        path: data.source.clone(),
        message: format!(
            "sequence {} (qid {}), token {}: {message}",
            i + 1,
            data.qids.get(i).copied().unwrap_or(0),
            position + 1
        ),
    }
    .into()
}
