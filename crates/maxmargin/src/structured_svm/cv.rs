//! k-fold cross-validation of the structured tasks (`cv --task multiclass|multilabel|chain`), each judged by
//! its own measure: multiclass accuracy, multilabel micro-averaged F1, chain token accuracy. Multiclass folds
//! are stratified by class; multilabel examples and chain sequences are dealt into folds after a seeded
//! permutation; or folds come from groups ([`crate::linear::group_folds`]). Folds run one after another, each
//! training with the threads the parameters allow, so the result does not depend on the thread count.

use super::*;
use crate::linear::check_folds;
use maxmargin_io::multilabel::MultilabelData;
use maxmargin_io::svm_hmm::SequenceData;

/// The data of a structured task.
#[derive(Debug, Clone, Copy)]
pub enum StructData<'a> {
    /// LIBSVM rows with one class each.
    Multiclass(&'a LabeledData),
    /// Rows with a set of labels each.
    Multilabel(&'a MultilabelData),
    /// svm_hmm sequences.
    Chain(&'a SequenceData),
}

/// One fold's model on the fold's test examples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StructFold {
    /// The task's measure on the test examples (higher is better).
    pub score: f64,
    /// Every measure of the task on them.
    pub evaluation: StructEvaluation,
    /// Whether the fold's model reached its certified gap.
    pub converged: bool,
}

/// A structured cross-validation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StructCrossValidation {
    /// The measure: `accuracy` (multiclass), `micro_f1` (multilabel) or `token_accuracy` (chain).
    pub metric: String,
    /// Each fold.
    pub folds: Vec<StructFold>,
    /// The measure's mean over the folds.
    pub mean: f64,
    /// Its standard deviation over the folds.
    pub sd: f64,
    /// Whether every fold's model converged.
    pub converged: bool,
}

impl StructData<'_> {
    /// Examples (sequences for chains).
    pub fn n(&self) -> usize {
        match self {
            Self::Multiclass(d) => d.n_samples(),
            Self::Multilabel(d) => d.n_samples(),
            Self::Chain(d) => d.sequences.len(),
        }
    }

    /// The task's measure name.
    pub fn metric(&self) -> &'static str {
        match self {
            Self::Multiclass(_) => "accuracy",
            Self::Multilabel(_) => "micro_f1",
            Self::Chain(_) => "token_accuracy",
        }
    }

    /// Seeded folds: multiclass stratified by class (every class with at least 2 examples is in every
    /// fold's training rows), the other tasks dealt round-robin after a permutation.
    ///
    /// # Errors
    /// [`Error::Optim`] for `k < 2` or above the examples; [`Error::Io`] for a class of one example.
    pub fn folds(&self, k: usize, seed: u64) -> Result<Vec<usize>, Error> {
        let n = self.n();
        crate::linear::check_fold_count(k, n)?;
        if let Self::Multiclass(d) = self {
            return crate::linear::stratified_classes(d, k, seed);
        }
        let mut fold_of = vec![0; n];
        for (j, &i) in maxmargin_optim::random::permutation(n, seed)
            .iter()
            .enumerate()
        {
            fold_of[i] = j % k;
        }
        Ok(fold_of)
    }
}

fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len().max(1) as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    (mean, var.sqrt())
}

fn select_sequences(d: &SequenceData, rows: &[usize]) -> SequenceData {
    SequenceData {
        sequences: rows.iter().map(|&i| d.sequences[i].clone()).collect(),
        labels: rows.iter().map(|&i| d.labels[i].clone()).collect(),
        qids: rows
            .iter()
            .filter_map(|&i| d.qids.get(i).copied())
            .collect(),
        n_features: d.n_features,
        n_labels: d.n_labels,
        source: d.source.clone(),
    }
}

impl StructuredSvm {
    /// Cross-validates on `data` over the folds `fold_of` (from [`StructData::folds`] or
    /// [`crate::linear::group_folds`]): each fold is tested on a model trained on the others.
    ///
    /// # Errors
    /// [`Error::Optim`] for folds that are not an assignment of every example; what training and
    /// evaluation return (a fold's test rows with a class its training rows lack, say).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), maxmargin::Error> {
    /// use maxmargin::structured_svm::{StructData, StructuredSvmParams, Task};
    /// let iris = maxmargin::datasets::iris()?;
    /// let data = StructData::Multiclass(&iris);
    /// let svm = StructuredSvmParams::new(Task::Multiclass).check()?;
    /// let cv = svm.cross_validate(data, &data.folds(5, 1)?)?;
    /// assert_eq!((cv.metric.as_str(), cv.folds.len()), ("accuracy", 5));
    /// assert!(cv.mean > 0.8);
    /// # Ok(()) }
    /// ```
    pub fn cross_validate(
        &self,
        data: StructData<'_>,
        fold_of: &[usize],
    ) -> Result<StructCrossValidation, Error> {
        self.cross_validate_latent(data, fold_of, None)
    }

    /// As [`StructuredSvm::cross_validate`], with `latent` subclasses per class (multiclass,
    /// [`StructuredSvm::fit_latent_multiclass`]) or states per tag (chains,
    /// [`StructuredSvm::fit_latent_chain`]) when given; a fold converged when both its rounds and its
    /// kept convex solve did.
    ///
    /// # Errors
    /// As [`StructuredSvm::cross_validate`]; latent multilabel models are refused.
    pub fn cross_validate_latent(
        &self,
        data: StructData<'_>,
        fold_of: &[usize],
        latent: Option<usize>,
    ) -> Result<StructCrossValidation, Error> {
        use maxmargin_optim::latent::CccpStop;
        let k = check_folds(fold_of, data.n())?;
        if !self.plan.is_empty() {
            return Err(crate::error::refuse(
                "checkpoints",
                "in cross-validation",
                "a checkpoint file holds one training run, and cross-validation trains one per fold",
            ));
        }
        if let (Some(_), StructData::Multilabel(_)) = (latent, data) {
            return Err(crate::error::refuse(
                "latent",
                "multilabel",
                "latent models are multiclass (subclasses) or chains (states)",
            ));
        }
        let mut folds = Vec::with_capacity(k);
        for f in 0..k {
            let train: Vec<usize> = (0..fold_of.len()).filter(|&i| fold_of[i] != f).collect();
            let test: Vec<usize> = (0..fold_of.len()).filter(|&i| fold_of[i] == f).collect();
            let (evaluation, converged) = match (data, latent) {
                (StructData::Multiclass(d), Some(s)) => {
                    let r = self.fit_latent_multiclass(&d.select(&train), s, &mut ())?;
                    let e = r.model.evaluate(&d.select(&test), None)?;
                    let m = &r.model;
                    (
                        e,
                        m.model.training.converged && m.stop == CccpStop::Converged,
                    )
                }
                (StructData::Chain(d), Some(k)) => {
                    let r = self.fit_latent_chain(&select_sequences(d, &train), k, &mut ())?;
                    let e = r.model.evaluate(&select_sequences(d, &test), None)?;
                    let m = &r.model;
                    (
                        e,
                        m.model.training.converged && m.stop == CccpStop::Converged,
                    )
                }
                (StructData::Multiclass(d), _) => {
                    let r = self.fit_multiclass(&d.select(&train), &mut ())?;
                    let e = r.model.evaluate_multiclass(&d.select(&test), None)?;
                    (e, r.model.training.converged)
                }
                (StructData::Multilabel(d), _) => {
                    let r = self.fit_multilabel(&d.select(&train), &mut ())?;
                    let e = r.model.evaluate_multilabel(&d.select(&test), None)?;
                    (e, r.model.training.converged)
                }
                (StructData::Chain(d), _) => {
                    let r = self.fit_chain(&select_sequences(d, &train), &mut ())?;
                    let e = r.model.evaluate_chain(&select_sequences(d, &test), None)?;
                    (e, r.model.training.converged)
                }
            };
            let score = match data {
                StructData::Multiclass(_) => evaluation.accuracy,
                StructData::Multilabel(_) => evaluation.micro_f1,
                StructData::Chain(_) => evaluation.token_error.map(|e| 1.0 - e),
            }
            .unwrap_or(f64::NAN);
            folds.push(StructFold {
                score,
                evaluation,
                converged,
            });
        }
        let scores: Vec<f64> = folds.iter().map(|f| f.score).collect();
        let (mean, sd) = mean_sd(&scores);
        Ok(StructCrossValidation {
            metric: data.metric().to_string(),
            converged: folds.iter().all(|f| f.converged),
            folds,
            mean,
            sd,
        })
    }
}
