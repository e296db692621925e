//! Cross-validation and the warm-started regularization path, on stratified seeded folds.

use super::*;

/// The result of k-fold cross-validation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrossValidation {
    /// Test accuracy of each fold, in fold order.
    pub fold_accuracy: Vec<f64>,
    /// Their mean.
    pub accuracy: f64,
    /// Their standard deviation.
    pub std: f64,
    /// Every measure of each fold's test rows, in fold order.
    #[serde(default)]
    pub folds: Vec<FoldMetrics>,
    /// Whether every fold's model converged.
    #[serde(default)]
    pub converged: bool,
}

/// A fold's test measures: the decision at the model's threshold (accuracy, F1) and the ranking (ROC AUC,
/// average precision; none when the fold's test rows have one class).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FoldMetrics {
    /// The fraction of test rows right.
    pub accuracy: f64,
    /// F1 of the positive class (none when nothing is predicted or present positive).
    pub f1: Option<f64>,
    /// Area under the ROC curve.
    pub roc_auc: Option<f64>,
    /// Average precision.
    pub average_precision: Option<f64>,
    /// Whether the fold's model reached the certified gap it was asked for (its measures are of an
    /// unconverged model otherwise).
    #[serde(default)]
    pub converged: bool,
}

/// The measure cross-validation chooses `C` by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// The fraction of test rows right.
    #[default]
    Accuracy,
    /// Area under the ROC curve (the ranking, no threshold).
    RocAuc,
    /// F1 of the positive class.
    F1,
    /// Average precision (the ranking, no threshold).
    AveragePrecision,
}

impl Metric {
    /// Its name, as in `eval --json`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Accuracy => "accuracy",
            Self::RocAuc => "roc_auc",
            Self::F1 => "f1",
            Self::AveragePrecision => "average_precision",
        }
    }

    fn of(self, m: &FoldMetrics) -> Option<f64> {
        match self {
            Self::Accuracy => Some(m.accuracy),
            Self::RocAuc => m.roc_auc,
            Self::F1 => m.f1,
            Self::AveragePrecision => m.average_precision,
        }
    }
}

impl FoldMetrics {
    fn of(e: &super::Evaluation, converged: bool) -> Self {
        Self {
            accuracy: e.accuracy,
            f1: e.f1,
            roc_auc: e.roc_auc,
            average_precision: e.average_precision,
            converged,
        }
    }
}

/// The `C` of a path with the best mean of `metric` over the folds (the smallest such `C`, the most
/// regularized, on a tie), with that mean; `None` when no `C` has the metric on any fold.
///
/// # Examples
/// ```
/// # fn main() -> Result<(), maxmargin::Error> {
/// use maxmargin::linear::{Metric, best_c, regularization_path};
/// let data = maxmargin::datasets::heart_scale()?;
/// let path = regularization_path(&maxmargin::LinearSvmParams::new(), &data, &[0.01, 1.0], 5, 1)?;
/// let (c, auc) = best_c(&path, Metric::RocAuc).unwrap();
/// assert!([0.01, 1.0].contains(&c) && auc > 0.8);
/// # Ok(()) }
/// ```
pub fn best_c(path: &[PathPoint], metric: Metric) -> Option<(f64, f64)> {
    let mut best: Option<(f64, f64)> = None;
    for p in path {
        if let Some((mean, _)) = p.cv.mean(metric)
            && best.is_none_or(|(_, b)| mean > b)
        {
            best = Some((p.c, mean));
        }
    }
    best
}

/// Stratified, seeded k-fold cross-validation of a linear SVM: each class's examples are permuted with `seed`
/// and dealt round-robin into `k` folds; each fold is tested on a model trained on the other `k − 1`. Folds
/// train in parallel and the result does not depend on the number of threads.
///
/// # Errors
/// [`Error::Optim`] for `k < 2` or `k` above the number of examples; what training returns.
///
/// # Examples
/// ```
/// # fn main() -> Result<(), maxmargin::Error> {
/// let data = maxmargin::datasets::heart_scale()?;
/// let svm = maxmargin::LinearSvmParams::new().lambda(0.01).epochs(5.0).check()?;
/// let cv = maxmargin::linear::cross_validate(&svm, &data, 5, 1)?;
/// assert_eq!(cv.fold_accuracy.len(), 5);
/// assert!(cv.accuracy > 0.75);
/// # Ok(()) }
/// ```
pub fn cross_validate(
    svm: &LinearSvm,
    data: &LabeledData,
    k: usize,
    seed: u64,
) -> Result<CrossValidation, Error> {
    cross_validate_folds(svm, data, &stratified_folds(data, k, seed)?)
}

/// [`cross_validate`] over given folds: `fold_of[i]` is example `i`'s fold, `0..k` (from
/// [`group_folds`], say, so that rows of one group are never split between training and test).
///
/// # Errors
/// [`Error::Optim`] when `fold_of` has not one fold per example or leaves a fold empty; what training
/// returns.
pub fn cross_validate_folds(
    svm: &LinearSvm,
    data: &LabeledData,
    fold_of: &[usize],
) -> Result<CrossValidation, Error> {
    use rayon::prelude::*;
    let k = check_folds(fold_of, data.n_samples())?;
    both_classes_outside_each_fold(data, fold_of, k)?;
    let fold_accuracy = (0..k)
        .into_par_iter()
        .map(|f| {
            let (train, test) = split(data, fold_of, f);
            let model = svm.fit(&train)?;
            Ok(FoldMetrics::of(
                &model.evaluate(&test, None)?,
                model.training.converged,
            ))
        })
        .collect::<Result<Vec<FoldMetrics>, Error>>()?;
    Ok(CrossValidation::from_folds(fold_accuracy))
}

/// Refuses folds whose training rows (every row outside the fold) hold one class only, naming the fold:
/// the file has both, but training on such a fold was refused as if the file had one (folds of whole
/// groups can hold out a class).
fn both_classes_outside_each_fold(
    data: &LabeledData,
    fold_of: &[usize],
    k: usize,
) -> Result<(), Error> {
    for f in 0..k {
        let mut outside = (data.labels.iter().zip(fold_of)).filter(|(_, g)| **g != f);
        let Some((&first, _)) = outside.next() else {
            continue;
        };
        if outside.all(|(&l, _)| l == first) {
            return Err(maxmargin_io::IoError::Mismatch {
                path: data.source.clone(),
                message: format!(
                    "fold {} of {k} leaves rows of class {first} only to train on (the fold holds every row \
                     of the other class): give fewer folds (-k), or groups that mix the classes",
                    f + 1
                ),
            }
            .into());
        }
    }
    Ok(())
}

/// `k` folds of `n` examples: at least 2, at most `n`.
pub(crate) fn check_fold_count(k: usize, n: usize) -> Result<(), Error> {
    if k < 2 || k > n {
        return Err(OptimError::InvalidParam {
            name: "folds",
            value: format!("{k} for {n} examples"),
            reason: "must be at least 2 and at most the number of examples (-k)",
        }
        .into());
    }
    Ok(())
}

/// The number of folds of an assignment, checked: one fold per example, each of `0..k` non-empty, `k ≥ 2`.
pub(crate) fn check_folds(fold_of: &[usize], n: usize) -> Result<usize, Error> {
    let k = fold_of.iter().max().map_or(0, |m| m + 1);
    let mut sizes = vec![0usize; k];
    fold_of.iter().for_each(|&f| sizes[f] += 1);
    if fold_of.len() != n || k < 2 || sizes.contains(&0) {
        return Err(OptimError::InvalidParam {
            name: "folds",
            value: format!("{k} folds of {} examples for {n}", fold_of.len()),
            reason: "must give every example one of at least 2 folds, none empty",
        }
        .into());
    }
    Ok(k)
}

/// Folds that keep each group whole (scikit-learn's `GroupKFold`): groups, largest first, each go to the
/// fold with the fewest examples so far (the first on a tie), so fold sizes stay close; no seed is needed.
/// `names[i]` is example `i`'s group.
///
/// # Errors
/// [`Error::Optim`] for fewer distinct groups than `k`, or `k < 2`.
///
/// # Examples
/// ```
/// let names: Vec<String> = ["a", "b", "a", "c", "b", "a"].iter().map(|s| s.to_string()).collect();
/// let folds = maxmargin::linear::group_folds(&names, 2).unwrap();
/// assert_eq!(folds, [0, 1, 0, 1, 1, 0]);
/// assert!(maxmargin::linear::group_folds(&names, 4).is_err());
/// ```
pub fn group_folds(names: &[String], k: usize) -> Result<Vec<usize>, Error> {
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    for (i, n) in names.iter().enumerate() {
        let g = *index.entry(n.as_str()).or_insert_with(|| {
            members.push(Vec::new());
            members.len() - 1
        });
        members[g].push(i);
    }
    if k < 2 || members.len() < k {
        return Err(OptimError::InvalidParam {
            name: "folds",
            value: format!(
                "{k} over {} group{}",
                members.len(),
                if members.len() == 1 { "" } else { "s" }
            ),
            reason: "must be at least 2 and at most the number of groups (each fold holds whole groups)",
        }
        .into());
    }
    // Largest groups first; equal sizes in order of first appearance.
    let mut order: Vec<usize> = (0..members.len()).collect();
    order.sort_by_key(|&g| std::cmp::Reverse(members[g].len()));
    let mut sizes = vec![0usize; k];
    let mut fold_of = vec![0usize; names.len()];
    for g in order {
        let f = (0..k).min_by_key(|&f| sizes[f]).unwrap_or(0);
        sizes[f] += members[g].len();
        members[g].iter().for_each(|&i| fold_of[i] = f);
    }
    Ok(fold_of)
}

/// The mean and standard deviation of some values (`None` for none).
fn mean_sd(values: &[f64]) -> Option<(f64, f64)> {
    if values.is_empty() {
        return None;
    }
    let k = values.len() as f64;
    let mean = values.iter().sum::<f64>() / k;
    let var = values.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / k;
    Some((mean, var.sqrt()))
}

impl CrossValidation {
    fn from_folds(folds: Vec<FoldMetrics>) -> Self {
        let fold_accuracy: Vec<f64> = folds.iter().map(|f| f.accuracy).collect();
        let (accuracy, std) = mean_sd(&fold_accuracy).unwrap_or((0.0, 0.0));
        Self {
            converged: folds.iter().all(|f| f.converged),
            fold_accuracy,
            accuracy,
            std,
            folds,
        }
    }

    /// Folds whose model stopped short of its certified gap.
    pub fn unconverged(&self) -> usize {
        self.folds.iter().filter(|f| !f.converged).count()
    }

    /// The folds (numbered from 1) that have no `metric`: a ranking measure, or F1, is undefined where a
    /// fold's test rows hold one class (or nothing is flagged), and [`CrossValidation::mean`] leaves them
    /// out.
    pub fn folds_without(&self, metric: Metric) -> Vec<usize> {
        (self.folds.iter().enumerate())
            .filter(|(_, f)| metric.of(f).is_none())
            .map(|(i, _)| i + 1)
            .collect()
    }

    /// The mean and standard deviation of `metric` over the folds that have it (ranking measures need both
    /// classes in a fold's test rows).
    pub fn mean(&self, metric: Metric) -> Option<(f64, f64)> {
        let values: Vec<f64> = self.folds.iter().filter_map(|f| metric.of(f)).collect();
        mean_sd(&values)
    }
}

/// The fold (0..k) of every example: each class's examples are permuted with `seed` and dealt round-robin.
pub(crate) fn stratified_folds(
    data: &LabeledData,
    k: usize,
    seed: u64,
) -> Result<Vec<usize>, Error> {
    check_fold_count(k, data.n_samples())?;
    // The binary check first: a file with other than two classes is refused as before.
    BinaryLabels::from_labels(&data.source, &data.labels)?;
    stratified_classes(data, k, seed)
}

/// The fold (0..k) of every example of any number of classes: each class's examples, classes in increasing
/// order, are permuted with `seed` plus the class's index and dealt round-robin, continuing from the previous
/// class; every class needs two examples (else its test fold would train without it).
pub(crate) fn stratified_classes(
    data: &LabeledData,
    k: usize,
    seed: u64,
) -> Result<Vec<usize>, Error> {
    let n = data.n_samples();
    let classes = maxmargin_io::libsvm::ClassLabels::from_labels(&data.source, &data.labels)?;
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); classes.len()];
    for (i, y) in classes.indices(data)?.into_iter().enumerate() {
        members[y as usize].push(i);
    }
    let mut fold_of = vec![0usize; n];
    let mut next = 0;
    for (c, rows) in members.iter().enumerate() {
        // Stratified, every fold's training rows hold every class as soon as each has two rows.
        if rows.len() < 2 {
            return Err(IoError::Mismatch {
                path: data.source.clone(),
                message: format!(
                    "class {} has {} row: the fold that tests it would train without it; \
                     cross-validation needs at least 2 rows of each class",
                    classes.classes[c],
                    rows.len()
                ),
            }
            .into());
        }
        for &j in &maxmargin_optim::random::permutation(rows.len(), seed.wrapping_add(c as u64)) {
            fold_of[rows[j]] = next % k;
            next += 1;
        }
    }
    Ok(fold_of)
}

/// The examples of `data` outside fold `f` (training) and inside it (test), each in file order.
pub(crate) fn split(data: &LabeledData, fold_of: &[usize], f: usize) -> (LabeledData, LabeledData) {
    let n = fold_of.len();
    let train: Vec<usize> = (0..n).filter(|&i| fold_of[i] != f).collect();
    let test: Vec<usize> = (0..n).filter(|&i| fold_of[i] == f).collect();
    (data.select(&train), data.select(&test))
}

/// One `C` of a regularization path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PathPoint {
    /// LIBLINEAR's `C` (`λ = 1/(C n)`, with `n` the training examples of each fold).
    pub c: f64,
    /// Cross-validated accuracy at this `C`.
    pub cv: CrossValidation,
    /// Passes over the data at this `C`, averaged over the folds (warm starts make them fewer).
    pub passes: f64,
    /// The final objective of each fold's model (λ-form).
    pub objective: Vec<f64>,
}

/// A regularization path: for each `C` of `cs` (in any order; run from the smallest), k-fold cross-validated accuracy, where each
/// fold's model at a `C` starts from that fold's dual solution at the previous `C`, scaled by `C_new/C_old`
/// (DCD; the other solvers start from scratch). The folds are those of [`cross_validate`] and run in parallel; the result does not
/// depend on the number of threads.
///
/// # Errors
/// [`Error::Optim`] for an empty `cs`, one with a repeated or non-positive value, bad folds, or what training returns.
///
/// # Examples
/// ```
/// # fn main() -> Result<(), maxmargin::Error> {
/// let data = maxmargin::datasets::heart_scale()?;
/// let params = maxmargin::LinearSvmParams::new().solver(maxmargin::SolverKind::Dcd);
/// let path = maxmargin::linear::regularization_path(&params, &data, &[0.01, 0.1, 1.0], 5, 1)?;
/// assert_eq!(path.len(), 3);
/// assert!(path.iter().all(|p| p.cv.accuracy > 0.7));
/// # Ok(()) }
/// ```
pub fn regularization_path(
    params: &LinearSvmParams,
    data: &LabeledData,
    cs: &[f64],
    k: usize,
    seed: u64,
) -> Result<Vec<PathPoint>, Error> {
    regularization_path_folds(params, data, cs, &stratified_folds(data, k, seed)?)
}

/// [`regularization_path`] over given folds (see [`cross_validate_folds`]).
///
/// # Errors
/// As [`regularization_path`], and for folds that are not an assignment of every example.
pub fn regularization_path_folds(
    params: &LinearSvmParams,
    data: &LabeledData,
    cs: &[f64],
    fold_of: &[usize],
) -> Result<Vec<PathPoint>, Error> {
    use rayon::prelude::*;
    both_classes_outside_each_fold(data, fold_of, check_folds(fold_of, data.n_samples())?)?;
    // Given in any order, the path runs from the smallest C (each warm start then comes from a smaller C).
    let mut sorted = cs.to_vec();
    sorted.sort_by(f64::total_cmp);
    let cs = sorted.as_slice();
    if cs.is_empty()
        || cs
            .windows(2)
            .any(|p| p[0].partial_cmp(&p[1]) != Some(std::cmp::Ordering::Less))
    {
        return Err(OptimError::InvalidParam {
            name: "c path",
            value: format!("{cs:?}"),
            reason: "must be a non-empty list of distinct values",
        }
        .into());
    }
    let k = check_folds(fold_of, data.n_samples())?;
    let svms = cs
        .iter()
        .map(|&c| params.clone().c(c).check())
        .collect::<Result<Vec<_>, _>>()?;
    let run = || {
        (0..k)
            .into_par_iter()
            .map(|f| {
                let (train, test) = split(data, fold_of, f);
                // The previous C's duals and λ; scaled by C_new/C_old before use (see `DualFile::alpha_for`).
                let mut previous: Option<(Vec<f64>, f64)> = None;
                svms.iter()
                    .map(|svm| {
                        let lambda = svm.params.regularization.lambda(train.n_samples())?.get();
                        let alpha = previous.take().map(|(a, old)| {
                            a.iter().map(|v| v * (old / lambda)).collect::<Vec<f64>>()
                        });
                        let (report, dual) = svm.fit_in_pool(&train, alpha.as_deref(), &mut ())?;
                        previous = dual.map(|d| (d, lambda));
                        let t = &report.model.training;
                        let metrics =
                            FoldMetrics::of(&report.model.evaluate(&test, None)?, t.converged);
                        Ok((metrics, t.epochs, t.objective))
                    })
                    .collect::<Result<Vec<_>, Error>>()
            })
            .collect::<Result<Vec<_>, Error>>()
    };
    let per_fold = crate::parallel::with_threads(params.threads, run)?;
    Ok(cs
        .iter()
        .enumerate()
        .map(|(j, &c)| PathPoint {
            c,
            cv: CrossValidation::from_folds(per_fold.iter().map(|f| f[j].0).collect()),
            passes: per_fold.iter().map(|f| f[j].1).sum::<f64>() / k as f64,
            objective: per_fold.iter().map(|f| f[j].2).collect(),
        })
        .collect())
}
