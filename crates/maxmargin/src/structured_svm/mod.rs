//! Structural SVMs: multiclass (Crammer–Singer), multilabel and chain models, trained by SSG, n-slack,
//! 1-slack or BCFW, with the same builder → check → fit → model shape as [`crate::linear`].
//!
//! Training minimizes `λ/2‖w‖² + (1/n)Σ_i H_i(w)` with the structured hinge of the task's output space (0-1
//! loss for multiclass, Hamming loss for multilabel and chains, counted in labels or positions). Models
//! are saved with the same versioned header as binary ones, under the kinds `multiclass`, `multilabel`
//! and `chain`; they keep their parameters and seed and no timings.

use crate::Error;
use maxmargin_core::objective::{Lambda, Regularization};
use maxmargin_core::scale::{Scaler, Scaling};
use maxmargin_core::vector::{SparseRows, SparseVec, norm_sq};
use maxmargin_io::IoError;
use maxmargin_io::libsvm::{ClassLabels, LabeledData};
use maxmargin_io::model_file;
use maxmargin_io::multilabel::{MultilabelData, indicators};
use maxmargin_io::svm_hmm::SequenceData;
use maxmargin_optim::{
    BcfwParams, BinaryLoss, Budget, CrammerSingerParams, NSlackParams, Observer, OneSlackParams,
    OptimError, Solver, SsgParams, StopReason, StructProblem, TraceRecord, Trainer,
};
use maxmargin_struct::{ChainSpace, MulticlassSpace, MultilabelSpace, OutputSpace, Rescaling};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A checked structural SVM estimator.
#[derive(Debug, Clone, PartialEq)]
pub struct StructuredSvm {
    params: StructuredSvmParams,
    plan: crate::checkpoint::CheckpointPlan,
    warm: Option<Vec<f64>>,
    sample_weights: Option<Vec<f64>>,
    shape: ChainShape,
    /// The inference method of a graph run, which its checkpoints' kind names: a run resumed with another
    /// method would carry primals the new one did not bound. (`by-feature`: a multiclass run on feature-major
    /// weights, whose checkpoints are not those of class-major runs.)
    method: Option<&'static str>,
}

/// What training did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StructTrainingSummary {
    /// Training examples.
    pub n_samples: usize,
    /// The final primal objective (λ-form).
    pub objective: f64,
    /// The final duality gap, where the solver has one.
    pub gap: Option<f64>,
    /// Solver iterations.
    pub iterations: u64,
    /// Passes over the data.
    pub passes: f64,
    /// Why training stopped.
    pub stop: StopReason,
    /// Whether the run reached its optimum: the solver's own certified stop, or a final relative gap within
    /// the tolerance (`gap`; for BCFW its ε; else [`crate::convergence::DEFAULT_GAP`]).
    #[serde(default)]
    pub converged: bool,
}

/// A trained structural model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StructuredModel {
    /// What it predicts.
    pub task: Task,
    /// The weights (layout of the task's output space).
    pub w: Vec<f64>,
    /// Input features of the data (the constant bias feature, when used, is one more, at this index).
    pub n_features: usize,
    /// Classes, labels or tags.
    pub n_labels: usize,
    /// Multiclass: the data's class values, in class-index order.
    #[serde(default)]
    pub classes: Vec<f64>,
    /// The λ trained with.
    pub lambda: f64,
    /// The seed trained with.
    pub seed: u64,
    /// All parameters trained with.
    pub params: StructuredSvmParams,
    /// What training did.
    pub training: StructTrainingSummary,
    /// The feature scaling fitted on the training rows; `w` acts on scaled inputs, and every prediction
    /// applies it first.
    #[serde(default)]
    pub scaler: Option<Scaler>,
    /// Multiclass kernel models (format 5): the machines over their support vectors that score each class
    /// (exact one-vs-one or one-vs-rest SMO, or a Nyström model folded onto its landmarks); `w` is empty.
    #[serde(default)]
    pub kernel: Option<Box<MulticlassKernel>>,
    /// Multiclass random Fourier features (format 5), applied after the scaler; `w` acts on them.
    #[serde(default)]
    pub features: Option<Box<crate::approx::FeatureMap>>,
    /// What the model knows of its inputs (format 6): feature names from a CSV header, a sketch of the
    /// training rows.
    #[serde(default)]
    pub inputs: Option<Box<crate::inputs::Inputs>>,
    /// A chain model's edge features and order as trained (not written: a chain model's file has no edge
    /// features and its weights say its order; a tagger's template says both).
    #[serde(skip)]
    pub(crate) shape: ChainShape,
}

/// A structural model with its training trace.
pub type StructFitReport = crate::linear::FitReport<StructuredModel>;

/// The measures users expect for each task, and the objective when λ was given.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct StructEvaluation {
    /// Examples (sequences for chains).
    pub n: usize,
    /// Multiclass: the fraction of correct classes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<f64>,
    /// Multilabel: the fraction of wrong label decisions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hamming_loss: Option<f64>,
    /// Multilabel: the fraction of examples with every label right.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exact_match: Option<f64>,
    /// Multilabel: subset accuracy, the name papers use for [`exact_match`](Self::exact_match) (the same
    /// value).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subset_accuracy: Option<f64>,
    /// Multilabel: of all labels predicted on, the share that are (`None` when none is predicted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub micro_precision: Option<f64>,
    /// Multilabel: of all labels on in the data, the share predicted on (`None` when none is on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub micro_recall: Option<f64>,
    /// Multilabel: micro-averaged F1 over all label decisions; multiclass: the same over the classes (which
    /// for one class per row is the accuracy).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub micro_f1: Option<f64>,
    /// Chains: the fraction of wrong positions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_error: Option<f64>,
    /// Chains: the fraction of sequences with every position right.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequence_accuracy: Option<f64>,
    /// The λ of the objective.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lambda: Option<f64>,
    /// `λ/2‖w‖² + (1/n)Σ H_i(w)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub objective: Option<f64>,
    /// Whether the model's training reached its optimum (from the model file).
    #[serde(default)]
    pub converged: bool,
    /// Multiclass: precision, recall and F1 by class, in the model's class order; multilabel: by label
    /// (`class` is the 0-based label).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_class: Option<Vec<ClassMetrics>>,
    /// Multiclass and multilabel: the mean precision over the classes (labels) present in the data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub macro_precision: Option<f64>,
    /// Multiclass and multilabel: the mean recall over the classes (labels) present in the data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub macro_recall: Option<f64>,
    /// Multiclass and multilabel: the mean F1 over the classes (labels) present in the data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub macro_f1: Option<f64>,
    /// Multiclass: counts by actual and predicted class (only the pairs that occur).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confusion: Option<maxmargin_core::metrics::Confusion>,
    /// Calibrated multiclass models: the mean over rows of `Σ_c (p_c − 1[y = c])²`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub brier: Option<f64>,
    /// Calibrated multiclass models: the mean negative log-probability of the true classes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_loss: Option<f64>,
    /// Graphs: per class, the nodes of that class in both truth and prediction over those in either
    /// (`None` for a class in neither).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_class_iou: Option<Vec<Option<f64>>>,
    /// Graphs: the mean of the per-class IoU over the classes in truth or prediction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_iou: Option<f64>,
    /// Graphs: the inference method the predictions were made with (the model's, or the one asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inference: Option<String>,
    /// Graphs: how many of the graphs' predictions the inference method could not certify exact (0 for
    /// exact methods).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncertified: Option<usize>,
    /// Multiclass, multilabel and chains: the rows (tokens for chains) whose label (tag) training never
    /// saw; each counts as an error, since no prediction can equal it (`None` when there are none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown_labels: Option<UnknownLabels>,
}

/// Labels in evaluation data that the model never saw in training.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct UnknownLabels {
    /// The rows (multiclass, multilabel) or tokens (chains) that carry one.
    pub count: usize,
    /// The distinct labels, in increasing order (chain tags 1-based, as in the file).
    pub labels: Vec<f64>,
}

impl UnknownLabels {
    /// `None` for no rows, else the count and the distinct labels sorted.
    pub(crate) fn of(count: usize, mut labels: Vec<f64>) -> Option<Self> {
        labels.sort_by(f64::total_cmp);
        labels.dedup_by(|a, b| a.total_cmp(b).is_eq());
        (count > 0).then_some(Self { count, labels })
    }

    /// The tokens of `sequences` whose tag (0-based) is `n_tags` or beyond, the tags shown 1-based as in
    /// svm_hmm files: `None` when every tag is known.
    pub(crate) fn of_tags(sequences: &[Vec<u32>], n_tags: usize) -> Option<Self> {
        let unseen: Vec<f64> = (sequences.iter().flatten())
            .filter(|&&t| t as usize >= n_tags)
            .map(|&t| f64::from(t) + 1.0)
            .collect();
        Self::of(unseen.len(), unseen)
    }
}

/// One class's decisions on labelled data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassMetrics {
    /// The class value.
    pub class: f64,
    /// Its rows in the data.
    pub support: usize,
    /// Of the rows predicted as this class, the share that are.
    pub precision: Option<f64>,
    /// Of this class's rows, the share predicted as it.
    pub recall: Option<f64>,
    /// The harmonic mean of the two.
    pub f1: Option<f64>,
}

/// What multiclass training learned from the data before building its examples.
struct MulticlassParts {
    d: usize,
    classes: ClassLabels,
    weights: Vec<f64>,
    scaler: Option<Scaler>,
    warnings: Vec<String>,
    max_abs: f64,
}

impl MulticlassParts {
    fn into_report(self) -> ReportParts {
        ReportParts {
            classes: self.classes.classes,
            scaler: self.scaler,
            warnings: self.warnings,
            max_abs: self.max_abs,
            over_ranks: false,
        }
    }
}

/// What a finished run's model and report carry besides the fit: class values, the scaler, the warnings so
/// far, and the largest input magnitude (for the advice in a warning).
struct ReportParts {
    classes: Vec<f64>,
    scaler: Option<Scaler>,
    warnings: Vec<String>,
    max_abs: f64,
    /// Trained over MPI ranks, where `--scale` does not apply (the advice says to scale the file).
    over_ranks: bool,
}

/// Inputs and outputs of a task, ready for its space.
struct Examples<I, O> {
    x: Vec<I>,
    y: Vec<O>,
}

/// The rows as sparse vectors of width `n_features`, with the constant feature appended at index
/// `n_features` when `bias` (features at or beyond `n_features`, unseen in training, are dropped).
fn rows_to_vecs(
    data: &maxmargin_core::vector::SparseRows,
    n_features: usize,
    bias: bool,
) -> Vec<SparseVec> {
    data.rows()
        .map(|r| with_bias(r, n_features, bias))
        .collect()
}

fn with_bias(r: maxmargin_core::vector::SparseRow<'_>, n_features: usize, bias: bool) -> SparseVec {
    let (mut idx, mut val): (Vec<u32>, Vec<f64>) = r
        .iter()
        .filter(|(j, _)| *j < n_features)
        .map(|(j, v)| (j as u32, v))
        .unzip();
    if bias {
        idx.push(n_features as u32);
        val.push(1.0);
    }
    SparseVec::new(idx, val).unwrap_or_default()
}

/// What a chain scores beyond its unary features and first-order transitions: edge features
/// (observation-dependent transitions, a tagger's bigram templates) and second-order transitions.
/// A number of edge features converts into one (`5.into()`).
///
/// ```
/// use maxmargin::structured_svm::ChainShape;
/// let shape = ChainShape::edges(3).with_second_order(true);
/// assert_eq!((shape.edge_features, shape.second_order), (3, true));
/// assert_eq!(ChainShape::from(0), ChainShape::default());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ChainShape {
    /// Edge features: feature indices `n_features..n_features + edge_features` of a position score the
    /// transition into it ([`ChainSpace::with_edge_features`]).
    pub edge_features: usize,
    /// A weight for every triple of tags ([`ChainSpace::with_second_order`]).
    pub second_order: bool,
}

impl ChainShape {
    /// `n` edge features, first order.
    pub fn edges(n: usize) -> Self {
        Self {
            edge_features: n,
            second_order: false,
        }
    }

    /// The same shape, second order or not.
    #[must_use]
    pub fn with_second_order(mut self, second_order: bool) -> Self {
        self.second_order = second_order;
        self
    }
}

impl From<usize> for ChainShape {
    fn from(n: usize) -> Self {
        Self::edges(n)
    }
}

fn sequences_with_bias(
    seqs: &[Vec<SparseVec>],
    n_features: usize,
    bias: bool,
    scaler: Option<&Scaler>,
) -> Vec<Vec<SparseVec>> {
    sequences_with_edges(seqs, (n_features, 0), bias, scaler)
}

/// The positions as a chain space with edge features reads them: the unary features `0..d` (scaled, and
/// the bias after them), then the edge features `d..d + e` moved to follow the bias.
fn sequences_with_edges(
    seqs: &[Vec<SparseVec>],
    (n_features, n_edge): (usize, usize),
    bias: bool,
    scaler: Option<&Scaler>,
) -> Vec<Vec<SparseVec>> {
    use rayon::prelude::*;
    let width = (n_features + usize::from(bias)).max(1);
    seqs.par_iter()
        .map(|s| {
            s.iter()
                .map(|x| {
                    let unary = match scaler {
                        Some(sc) => {
                            with_bias(sc.transform_row(x.as_row()).as_row(), n_features, bias)
                        }
                        None => with_bias(x.as_row(), n_features, bias),
                    };
                    let row = x.as_row();
                    let edges = || {
                        row.iter()
                            .filter(|(j, _)| (n_features..n_features + n_edge).contains(j))
                    };
                    if n_edge == 0 || edges().next().is_none() {
                        return unary;
                    }
                    let (mut idx, mut val) = (
                        unary.as_row().indices().to_vec(),
                        unary.as_row().values().to_vec(),
                    );
                    for (j, v) in edges() {
                        idx.push((width + j - n_features) as u32);
                        val.push(v);
                    }
                    SparseVec::new(idx, val).unwrap_or_default()
                })
                .collect()
        })
        .collect()
}

impl StructuredSvm {
    /// The checked parameters.
    pub fn params(&self) -> &StructuredSvmParams {
        &self.params
    }

    /// Checkpoints as `plan` says: resume from one, write one at the end and every so many seconds (see
    /// [`crate::checkpoint`]; a run resumed from any checkpoint ends with the same bits as one never stopped).
    pub fn checkpoints(mut self, plan: crate::checkpoint::CheckpointPlan) -> Self {
        self.plan = plan;
        self
    }

    /// Per-row weights (a row's loss counts `w_i` times, beside its class weight), for multiclass training by
    /// the Crammer–Singer dual (`dcd`); one non-negative finite number per training row, in file order.
    ///
    /// # Errors
    /// A negative or non-finite weight.
    pub fn sample_weights(mut self, weights: Vec<f64>) -> Result<Self, Error> {
        crate::limits::check_sample_weights(&weights)?;
        self.sample_weights = Some(weights);
        Ok(self)
    }

    /// Refuses sample weights where the task or solver cannot use them.
    pub(crate) fn check_sample_weights(&self, task: Task) -> Result<(), Error> {
        let weighs = match self.params.solver {
            StructSolverKind::Dcd | StructSolverKind::Softmax => self.params.kernel.is_none(),
            // One-vs-rest, linear or kernel machines, and one-vs-one kernel machines.
            StructSolverKind::Ovr => true,
            StructSolverKind::Ovo => self.params.kernel.is_some(),
            _ => false,
        };
        if self.sample_weights.is_some() && !(task == Task::Multiclass && weighs) {
            return Err(OptimError::InvalidParam {
                name: "sample weights",
                value: format!("{} with {:?}", task.kind(), self.params.solver).to_lowercase(),
                reason: "apply to binary training and to multiclass training by the Crammer-Singer dual \
                         (dcd), softmax, one-vs-rest or kernel machines",
            }
            .into());
        }
        Ok(())
    }

    /// Starts SSG from a trained model's weights (same task and shape). The other solvers carry dual
    /// variables that a model does not hold: continue them from a checkpoint ([`StructuredSvm::checkpoints`]) instead.
    ///
    /// # Errors
    /// [`Error::Optim`] when the solver is not SSG or the model's task differs.
    pub fn warm_start_from(mut self, model: &StructuredModel) -> Result<Self, Error> {
        self.check_warm(model)?;
        self.warm = Some(model.w.clone());
        Ok(self)
    }

    /// Chains trained by [`StructuredSvm::fit_chain`] (and so cross-validated and refitted) take this shape:
    /// second-order transitions, or edge features placed as [`StructuredSvm::fit_chain_with_edges`] says.
    /// The latent rounds and MPI ranks refuse a shape other than the default (first order, no edge
    /// features).
    ///
    /// ```
    /// use maxmargin::structured_svm::{ChainShape, StructuredSvmParams, Task};
    /// let svm = StructuredSvmParams::new(Task::Chain).check()?
    ///     .chain_shape(ChainShape::edges(0).with_second_order(true));
    /// assert!(svm.shape().second_order);
    /// # Ok::<(), maxmargin::Error>(())
    /// ```
    #[must_use]
    pub fn chain_shape(mut self, shape: ChainShape) -> Self {
        self.shape = shape;
        self
    }

    /// The shape [`StructuredSvm::fit_chain`] trains.
    pub fn shape(&self) -> ChainShape {
        self.shape
    }

    fn check_warm(&self, model: &StructuredModel) -> Result<(), Error> {
        if model.is_nonlinear() || self.params.approx.is_some() || self.params.kernel.is_some() {
            return Err(crate::error::refuse(
                "warm start",
                "a kernel or approximated model",
                "cannot start from weights that act on a kernel's features: train it again",
            ));
        }
        if self.params.solver != StructSolverKind::Ssg {
            return Err(OptimError::InvalidParam {
                name: "warm start",
                value: format!("{:?}", self.params.solver).to_lowercase(),
                reason: "needs the ssg solver (the others keep dual variables: use a checkpoint and resume)",
            }
            .into());
        }
        if model.task != self.params.task || model.params.bias != self.params.bias {
            return Err(OptimError::InvalidParam {
                name: "warm start",
                value: format!(
                    "a {} model with bias {:?}, for a {} run with bias {:?}",
                    model.task.kind(),
                    model.params.bias,
                    self.params.task.kind(),
                    self.params.bias
                )
                .to_lowercase(),
                reason: "needs a model of this run's task and bias (the same --task and --bias)",
            }
            .into());
        }
        Ok(())
    }
}

mod calibrated;
mod chain;
mod costs;
use costs::{alone, chain_space, some_part_weighted, tag_costs, weighted_costs};
mod custom;
mod cv;
mod fit;
mod graph;
mod graph_eval;
mod kernel;
mod latent;
mod latent_chain;
mod model;
mod multilabel;
mod params;
mod ranks;
mod rescaling;
mod solve;
mod solver_params;
mod stream;

pub use calibrated::{CalibratedMulticlass, MULTICLASS_DECISION_KIND, MulticlassCalibration};
pub use custom::{CustomEvaluation, CustomFitReport, CustomModel, CustomSpace};
pub use cv::{StructCrossValidation, StructData, StructFold};
pub use graph::{GRAPH_KIND, GraphFitReport, GraphModel, GraphOptions};
pub use kernel::MulticlassKernel;
pub use latent::{LATENT_KIND, LatentFitReport, LatentMulticlassModel, MAX_LATENT};
pub use latent_chain::{LATENT_CHAIN_KIND, LatentChainFitReport, LatentChainModel};
pub use model::Prediction;
pub use params::{StructSolverKind, StructuredSvmParams, Task};
pub use stream::STREAM_EVAL_EVERY;
