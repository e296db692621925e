//! Chain models with latent states per tag (Yu & Joachims 2009): each tag split into `K` hidden states, so
//! the transitions between states can carry what one tag's transitions cannot; trained by CCCP rounds of
//! completion (Viterbi within each position's tag) and a convex chain SVM.

use super::latent::{joint_labels, rounds_warning};
use super::*;
use maxmargin_optim::latent::{CccpParams, CccpRound, CccpStop};
use maxmargin_struct::{LatentChainSpace, LatentSpace};

/// The model kind of a chain model with latent states.
pub const LATENT_CHAIN_KIND: &str = "chain-latent";

/// A chain model whose tags each have `states` latent states: a sequence's tags are those of its best joint
/// labelling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LatentChainModel {
    /// The joint chain over the `T·K` labels `tag·K + state`; it holds the scaler, the parameters, and the
    /// training summary of the kept round's convex solve.
    pub model: StructuredModel,
    /// Number of tags `T`.
    pub tags: usize,
    /// Latent states per tag `K`.
    pub states: usize,
    /// The latent objective `F(w)` at the model's weights.
    pub objective: f64,
    /// Every outer round: the latent objective, the convex problem's objective, gap and passes, and the
    /// completions that changed.
    pub rounds: Vec<CccpRound>,
    /// Why the rounds stopped.
    pub stop: CccpStop,
}

/// A latent chain model with the trace of its kept round's convex solve and the run's warnings.
pub type LatentChainFitReport = crate::linear::FitReport<LatentChainModel>;

impl StructuredSvm {
    /// Trains a chain model with `states` latent states per tag (any chain solver trains each round; the
    /// first completions come from the seed).
    ///
    /// Class weights (tag numbers, 1-based) weight the tags' Hamming loss as in
    /// [`StructuredSvm::fit_chain`]: states of a tag cost nothing against each other, a wrong tag its true
    /// tag's weight. Checkpoints and warm starts across rounds as [`StructuredSvm::fit_latent_multiclass`]
    /// has them.
    ///
    /// # Errors
    /// What [`StructuredSvm::fit_chain`] returns; [`Error::Optim`] naming a setting that cannot apply (slack
    /// rescaling, sample weights, a warm start from a model, a checkpoint period).
    pub fn fit_latent_chain(
        &self,
        data: &SequenceData,
        states: usize,
        observer: &mut (dyn Observer + Send),
    ) -> Result<LatentChainFitReport, Error> {
        self.check_latent("latent states", states, Task::Chain)?;
        let (ex, report) = self.prepare_chain(data, 0)?;
        let (d, l, n) = (data.n_features, data.n_labels.max(1), ex.x.len());
        let nnz = ex.x.iter().flatten().map(|v| v.as_row().nnz()).sum();
        let joint = joint_labels("latent states", l, states, nnz)?;
        let costs = super::tag_costs(&self.params.class_weights, l)?;
        let space = LatentChainSpace::with_costs(self.width(d), costs, states)?;
        let lambda = self.params.regularization.lambda(n)?;
        let fit = self.latent_rounds(&space, (&ex.x, &ex.y), lambda, |svm, problem| {
            let (fit, _) = svm.run(space.joint(), (ex.x.as_slice(), problem.y()), observer)?;
            Ok(fit)
        })?;
        let (_, inner) = fit.inner.replace_output(fit.w);
        let mut r = self.finish(inner, lambda.get(), (n, d, joint), report)?;
        r.warnings.extend(rounds_warning(
            fit.stop,
            fit.rounds.len(),
            CccpParams::default().tolerance,
        ));
        Ok(LatentChainFitReport {
            model: LatentChainModel {
                model: r.model,
                tags: l,
                states,
                objective: fit.objective,
                rounds: fit.rounds,
                stop: fit.stop,
            },
            trace: r.trace,
            warnings: r.warnings,
        })
    }
}

impl LatentChainModel {
    fn space(&self) -> Result<LatentChainSpace, Error> {
        Ok(LatentChainSpace::with_costs(
            (self.model.n_features + usize::from(self.model.params.bias)).max(1),
            super::tag_costs(&self.model.params.class_weights, self.tags)?,
            self.states,
        )?)
    }

    /// The tags of every sequence (1-based, as in svm_hmm files).
    ///
    /// # Errors
    /// An empty sequence, or one the model cannot read.
    pub fn predict(&self, data: &SequenceData) -> Result<Vec<Prediction>, Error> {
        let k = self.states as u32;
        Ok(self
            .model
            .predict_chain(data)?
            .into_iter()
            .map(|p| match p {
                Prediction::Tags(joint) => {
                    Prediction::Tags(joint.iter().map(|j| (j - 1) / k + 1).collect())
                }
                other => other,
            })
            .collect())
    }

    /// Per-token error and per-sequence accuracy of the tags, and with `lambda` the latent objective. A tag
    /// training never saw counts as an error (in `unknown_labels`), and the objective is then not given.
    ///
    /// # Errors
    /// No sequences.
    pub fn evaluate(
        &self,
        data: &SequenceData,
        lambda: Option<f64>,
    ) -> Result<StructEvaluation, Error> {
        let n = model::nonempty(data.n_sequences(), &data.source)?;
        let space = self.space()?;
        let x = self.model.sequences(&data.sequences, 0);
        let mut counts = super::chain::TagCounts::default();
        // A tag training never saw is counted as an error (no decoding can give it), not refused.
        let unknown = super::UnknownLabels::of_tags(&data.labels, self.tags);
        for (i, (xi, y)) in x.iter().zip(&data.labels).enumerate() {
            counts.add(&space.label(&self.model.decoded(&space, xi, data, i)?), y);
        }
        // An unknown tag has no hinge term: the objective is given only when every tag is known.
        let objective = match lambda {
            Some(l) if unknown.is_none() => {
                let completions = x
                    .iter()
                    .zip(&data.labels)
                    .map(|(xi, yi)| space.complete(&self.model.w, xi, yi))
                    .collect::<Result<Vec<_>, _>>()?;
                let problem = StructProblem::new(&space, &x, &completions, Lambda::new(l)?)?;
                Some(problem.primal(&self.model.w)?)
            }
            _ => None,
        };
        Ok(StructEvaluation {
            lambda,
            objective,
            converged: self.model.training.converged,
            unknown_labels: unknown,
            ..counts.evaluation(n)
        })
    }

    /// Saves the model (JSON when `path` ends in `.json`).
    ///
    /// # Errors
    /// [`Error::Io`] naming the file.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        self.check(path)?;
        Ok(model_file::save(path, LATENT_CHAIN_KIND, self)?)
    }

    /// Loads a latent chain model, checking that its parts agree.
    ///
    /// # Errors
    /// [`Error::Io`] for a missing, foreign, truncated, corrupt or inconsistent file.
    pub fn load(path: &Path) -> Result<Self, Error> {
        let (_, model): (_, Self) = model_file::load(path, LATENT_CHAIN_KIND)?;
        model.validated(path)
    }

    /// A model decoded by other means than [`LatentChainModel::load`] (a Python pickle), its parts checked
    /// against each other as `load` checks them.
    ///
    /// # Errors
    /// [`Error::Io`] ([`IoError::BadModel`]) naming `source` and what disagrees.
    pub fn validated(self, source: &Path) -> Result<Self, Error> {
        self.check(source)?;
        Ok(self)
    }

    pub(crate) fn check(&self, path: &Path) -> Result<(), Error> {
        let m = &self.model;
        m.check_consistent(path)?;
        if m.task != Task::Chain
            || self.states == 0
            || self.tags == 0
            || self.tags.checked_mul(self.states) != Some(m.n_labels)
            || m.is_second_order()
            || !(m.params.class_weights.iter()).all(|&(tag, _)| tag <= self.tags as f64)
        {
            return Err(IoError::BadModel {
                path: path.to_path_buf(),
                message: format!(
                    "inconsistent latent chain model: {} tags of {} states for {} joint labels",
                    self.tags, self.states, m.n_labels
                ),
            }
            .into());
        }
        Ok(())
    }
}
