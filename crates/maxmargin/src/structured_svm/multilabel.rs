//! Multilabel models: decision values per label, and the measures papers report (Hamming loss, subset
//! accuracy, micro- and macro-averaged F1, precision, recall and F1 per label).

use super::*;

/// Precision, recall and F1 per class (or label) from counts, and their macro averages over the classes
/// present in the data (a class with no examples has no recall and is left out of the means, as a class
/// never predicted counts 0 in them).
pub(super) struct ClassTable {
    pub(super) classes: Vec<ClassMetrics>,
    pub(super) macro_precision: Option<f64>,
    pub(super) macro_recall: Option<f64>,
    pub(super) macro_f1: Option<f64>,
}

impl ClassTable {
    /// `counts[c] = [true positives, false positives, false negatives]` of class `names[c]`.
    pub(super) fn new(names: &[f64], counts: &[[usize; 3]]) -> Self {
        let classes: Vec<ClassMetrics> = names
            .iter()
            .zip(counts)
            .map(|(&class, &[tp, fp, fn_])| {
                let d = maxmargin_core::metrics::Decisions::from_counts(tp, fp, fn_);
                ClassMetrics {
                    class,
                    support: tp + fn_,
                    precision: d.precision,
                    recall: d.recall,
                    f1: d.f1,
                }
            })
            .collect();
        let present: Vec<&ClassMetrics> = classes.iter().filter(|c| c.support > 0).collect();
        let mean = |f: fn(&ClassMetrics) -> Option<f64>| {
            (!present.is_empty()).then(|| {
                present.iter().map(|c| f(c).unwrap_or(0.0)).sum::<f64>() / present.len() as f64
            })
        };
        Self {
            macro_precision: mean(|c| c.precision),
            macro_recall: mean(|c| c.recall),
            macro_f1: mean(|c| c.f1),
            classes,
        }
    }
}

/// The measures of one class per row: accuracy (which is micro precision, recall and F1 here), precision,
/// recall and F1 by class with their macro averages, and the confusion pairs, from class indices (a
/// prediction beyond the classes counts against the last one).
pub(super) fn classified(classes: &[f64], truth: &[u32], predicted: &[u32]) -> StructEvaluation {
    // Counts kept per class: linear in the rows and the classes, never their product.
    let k = classes.len();
    let mut counts = vec![[0usize; 3]; k];
    for (&p, &t) in predicted.iter().zip(truth) {
        let (p, t) = (p as usize, t as usize);
        if p == t {
            counts[t][0] += 1;
        } else {
            counts[p.min(k - 1)][1] += 1;
            counts[t][2] += 1;
        }
    }
    let table = ClassTable::new(classes, &counts);
    let n = truth.len();
    let accuracy = counts.iter().map(|c| c[0]).sum::<usize>() as f64 / n as f64;
    StructEvaluation {
        n,
        accuracy: Some(accuracy),
        micro_f1: Some(accuracy),
        macro_precision: table.macro_precision,
        macro_recall: table.macro_recall,
        macro_f1: table.macro_f1,
        per_class: Some(table.classes),
        confusion: Some(maxmargin_core::metrics::Confusion::count(
            classes.to_vec(),
            truth
                .iter()
                .zip(predicted)
                .map(|(&t, &p)| (t as usize, p as usize)),
        )),
        ..StructEvaluation::default()
    }
}

impl StructuredModel {
    /// The decision value of every label for every row of multilabel data, labels in order: `⟨w_l, x⟩`
    /// (with the bias weight); a label is predicted on when its value is positive.
    ///
    /// # Errors
    /// When the model is not a multilabel model, a row does not fit it, or its scores are not finite.
    pub fn multilabel_scores(&self, data: &MultilabelData) -> Result<Vec<Vec<f64>>, Error> {
        if self.task != Task::Multilabel {
            return Err(self.wrong_task(Task::Multilabel));
        }
        let space = self.multilabel_space()?;
        let scores: Vec<Vec<f64>> = self
            .inputs(&data.x)?
            .iter()
            .map(|x| {
                (0..space.n_labels())
                    .map(|l| space.label_score(&self.w, x, l))
                    .collect()
            })
            .collect();
        crate::limits::check_scores(data, &scores, "no label set can be read from it")?;
        Ok(scores)
    }

    /// Hamming loss, subset accuracy (exact match), micro-averaged F1, precision, recall and F1 per label
    /// (`per_class`, labels 0-based) with their macro averages over the labels present in the data, and
    /// the objective.
    ///
    /// # Errors
    /// The wrong task, or an empty dataset.
    pub fn evaluate_multilabel(
        &self,
        data: &MultilabelData,
        lambda: Option<f64>,
    ) -> Result<StructEvaluation, Error> {
        if self.task != Task::Multilabel {
            return Err(self.wrong_task(Task::Multilabel));
        }
        let space = self.multilabel_space()?;
        let x = self.inputs(&data.x)?;
        let n = model::nonempty(data.n_samples(), &data.source)?;
        // Labels the model never saw in training are counted, as misses: it never predicts them (they
        // used to be dropped, and a test set of them scored perfectly). Each distinct one is a column after
        // the model's, so nothing is sized by the largest label number (4e9 asked for 96 GB).
        let k = self.n_labels;
        let mut unseen: Vec<u32> = (data.labels.iter().flatten())
            .copied()
            .filter(|&l| l as usize >= k)
            .collect();
        unseen.sort_unstable();
        unseen.dedup();
        let unknown = super::UnknownLabels::of(
            (data.labels.iter())
                .filter(|set| set.iter().any(|&l| l as usize >= k))
                .count(),
            unseen.iter().map(|&l| f64::from(l)).collect(),
        );
        let width = k + unseen.len();
        let column = |l: u32| match l as usize {
            l if l < k => l,
            _ => k + unseen.partition_point(|&u| u < l),
        };
        let truth = indicators(&data.labels, k);
        // Per label: [true positives, false positives, false negatives].
        let mut counts = vec![[0usize; 3]; width];
        let (mut wrong, mut exact) = (0usize, 0usize);
        let scores = self.multilabel_scores(data)?;
        for ((s, yi), set) in scores.iter().zip(&truth).zip(&data.labels) {
            let mut all = true;
            for (l, (&v, &b)) in s.iter().zip(yi).enumerate() {
                match (v > 0.0, b) {
                    (true, true) => counts[l][0] += 1,
                    (true, false) => counts[l][1] += 1,
                    (false, true) => counts[l][2] += 1,
                    (false, false) => {}
                }
                all &= (v > 0.0) == b;
                wrong += usize::from((v > 0.0) != b);
            }
            // An unseen label is never predicted: a miss each (a label listed twice counts once).
            let mut missed: Vec<usize> = (set.iter().copied())
                .filter(|&l| l as usize >= k)
                .map(column)
                .collect();
            missed.sort_unstable();
            missed.dedup();
            for &c in &missed {
                counts[c][2] += 1;
            }
            all &= missed.is_empty();
            wrong += missed.len();
            exact += usize::from(all);
        }
        let total = |i: usize| counts.iter().map(|c| c[i]).sum::<usize>();
        let micro = maxmargin_core::metrics::Decisions::from_counts(total(0), total(1), total(2));
        let labels: Vec<f64> = (0..k)
            .map(|l| l as f64)
            .chain(unseen.iter().map(|&l| f64::from(l)))
            .collect();
        let table = ClassTable::new(&labels, &counts);
        let subset_accuracy = exact as f64 / n as f64;
        // The objective is over the model's labels (a label it never saw has no hinge term).
        let objective = self.objective(&space, &x, &truth, lambda)?;
        Ok(StructEvaluation {
            n,
            hamming_loss: Some(wrong as f64 / (n * width) as f64),
            exact_match: Some(subset_accuracy),
            subset_accuracy: Some(subset_accuracy),
            micro_f1: Some(micro.f1.unwrap_or(0.0)),
            micro_precision: micro.precision,
            micro_recall: micro.recall,
            macro_precision: table.macro_precision,
            macro_recall: table.macro_recall,
            macro_f1: table.macro_f1,
            per_class: Some(table.classes),
            lambda,
            objective,
            converged: self.training.converged,
            unknown_labels: unknown,
            ..StructEvaluation::default()
        })
    }
}
