//! Choosing a model family: each family is fitted on the training rows (C, and γ for the kernel families,
//! chosen by cross-validation on those rows only; scaling fitted on them), then measured on development rows
//! split in two by class: one half calibrates each model (Platt), the other measures ranking (ROC AUC,
//! average precision), the calibrated Brier score and accuracy. Beside those: seconds to select and to fit,
//! the latency of one row in process, and the model's bytes. No test file is read.

use crate::Error;
use crate::approx::{ApproxMethod, Approximation};
use crate::linear::serving::{ServingBudget, ServingSpeed, measure};
use crate::linear::{
    CalibrationMethod, DecisionModel, KernelChoice, KernelKind, LinearSolver, LinearSvmParams,
    Metric, SolverKind, best_c, regularization_path,
};
use maxmargin_core::scale::Scaling;
use maxmargin_io::IoError;
use maxmargin_io::libsvm::LabeledData;
use maxmargin_optim::{Bias, BinaryLoss, OptimError};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// A model family, as `compare --families` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// The hinge-loss linear SVM (dual coordinate descent).
    Linear,
    /// Logistic regression (dual coordinate descent).
    Logistic,
    /// The exact RBF kernel SVM (SMO).
    Rbf,
    /// A linear SVM on Nyström features of the RBF kernel.
    Nystroem,
    /// A linear SVM on random Fourier features of the RBF kernel.
    Rff,
}

impl Family {
    /// Every family, in the order they are reported.
    pub const ALL: [Family; 5] = [
        Self::Linear,
        Self::Logistic,
        Self::Rbf,
        Self::Nystroem,
        Self::Rff,
    ];

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Linear => "linear",
            Self::Logistic => "logistic",
            Self::Rbf => "rbf",
            Self::Nystroem => "nystroem",
            Self::Rff => "rff",
        }
    }

    /// Whether the family has a kernel width to choose.
    pub fn has_gamma(self) -> bool {
        matches!(self, Self::Rbf | Self::Nystroem | Self::Rff)
    }

    /// Its training parameters at `c` and `gamma`, from `base` (scaling, seed, threads).
    pub fn params(
        self,
        base: &LinearSvmParams,
        c: f64,
        gamma: Option<f64>,
        components: usize,
    ) -> LinearSvmParams {
        let kernel = KernelChoice {
            kind: KernelKind::Rbf,
            gamma,
            ..KernelChoice::default()
        };
        let p = base.clone().c(c);
        match self {
            Self::Linear => p.solver(SolverKind::Dcd),
            Self::Logistic => p.solver(SolverKind::Dcd).loss(BinaryLoss::Logistic),
            Self::Rbf => p
                .solver(LinearSolver::from(kernel))
                .bias(Bias::Unregularized),
            Self::Nystroem | Self::Rff => p.solver(SolverKind::Dcd).approx(Approximation {
                method: if self == Self::Rff {
                    ApproxMethod::Rff
                } else {
                    ApproxMethod::Nystroem
                },
                components,
                kernel,
            }),
        }
    }
}

impl std::str::FromStr for Family {
    type Err = OptimError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|f| f.name() == s || (s == "nystrom" && *f == Self::Nystroem))
            .ok_or_else(|| OptimError::InvalidParam {
                name: "families",
                value: s.into(),
                reason: "must name linear, logistic, rbf, nystroem or rff",
            })
    }
}

impl std::fmt::Display for Family {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What `compare` does.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareParams {
    /// The families, in this order.
    pub families: Vec<Family>,
    /// The C values cross-validation chooses from.
    pub cs: Vec<f64>,
    /// The kernel widths it chooses from, as multiples of scikit-learn's `scale` (`1/(d·Var X)` on the
    /// scaled training rows).
    pub gamma_factors: Vec<f64>,
    /// Folds of the cross-validation.
    pub folds: usize,
    /// Components of the approximated kernels.
    pub components: usize,
    /// Scaling fitted on the training rows (each fold's, then all of them).
    pub scale: Scaling,
    /// The seed of the folds, the development split and the approximations.
    pub seed: u64,
    /// Worker threads (`None`: all cores).
    pub threads: Option<usize>,
    /// How long the latency of each model is measured.
    pub serving: ServingBudget,
}

impl Default for CompareParams {
    fn default() -> Self {
        Self {
            families: vec![
                Family::Linear,
                Family::Logistic,
                Family::Rbf,
                Family::Nystroem,
            ],
            cs: vec![0.1, 1.0, 10.0],
            gamma_factors: vec![0.1, 1.0, 10.0],
            folds: 3,
            components: 300,
            scale: Scaling::MaxAbs,
            seed: 0,
            threads: None,
            serving: ServingBudget {
                batch_seconds: 0.2,
                warm_up: 100,
                timed_rows: 2000,
                timed_seconds: 0.5,
                min_timed: 100,
            },
        }
    }
}

/// One family's row of the comparison.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FamilyResult {
    /// The family.
    pub family: Family,
    /// The C chosen by cross-validation.
    pub c: f64,
    /// The kernel width chosen (kernel families).
    pub gamma: Option<f64>,
    /// The chosen setting's mean cross-validated ROC AUC on the training rows.
    pub cv_roc_auc: f64,
    /// Settings tried.
    pub settings: usize,
    /// Seconds of the cross-validation.
    pub select_seconds: f64,
    /// Seconds of the final fit on every training row.
    pub fit_seconds: f64,
    /// Whether the final fit converged (its certificate within the target).
    pub converged: bool,
    /// Ranking on the evaluation half of the development rows.
    pub roc_auc: Option<f64>,
    /// Average precision there.
    pub average_precision: Option<f64>,
    /// The Brier score there of the probabilities calibrated on the other half.
    pub brier: Option<f64>,
    /// Logistic regression's own (uncalibrated) Brier score there.
    pub own_brier: Option<f64>,
    /// Accuracy there at the model's own cut-off (the score's sign).
    pub accuracy: f64,
    /// Serving speed on the development rows.
    pub speed: ServingSpeed,
    /// The model's bytes in a binary model file (calibration included).
    pub model_bytes: u64,
    /// The bytes its vectors hold in memory.
    pub memory_bytes: usize,
    /// A kernel model's support vectors (Nyström: landmarks).
    pub support_vectors: Option<usize>,
    /// The calibrated model.
    #[serde(skip)]
    pub model: Option<DecisionModel>,
}

/// Which family wins a measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Win {
    /// The measure: `roc_auc`, `average_precision`, `brier`, `p99_us`, `model_bytes` or `fit_seconds`.
    pub measure: String,
    /// The family that does best on it.
    pub family: Family,
    /// Its value.
    pub value: f64,
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Comparison {
    /// Training rows.
    pub train_rows: usize,
    /// Development rows that calibrate.
    pub calibration_rows: usize,
    /// Development rows that measure.
    pub evaluation_rows: usize,
    /// `scale`'s γ on the scaled training rows (the kernel widths are multiples of it).
    pub gamma_scale: f64,
    /// One row per family.
    pub families: Vec<FamilyResult>,
    /// The best family on each measure.
    pub wins: Vec<Win>,
}

impl CompareParams {
    /// Checks the lists and counts.
    ///
    /// # Errors
    /// [`OptimError::InvalidParam`] naming the bad one.
    pub fn check(&self) -> Result<(), Error> {
        let bad = |name: &'static str, value: String, reason: &'static str| {
            Err(crate::error::refuse(name, value, reason))
        };
        if self.families.is_empty() {
            return bad("families", String::new(), "must name at least one family");
        }
        let mut seen = self.families.clone();
        seen.sort_by_key(|f| *f as u8);
        seen.dedup();
        if seen.len() != self.families.len() {
            return bad(
                "families",
                format!("{:?}", self.families),
                "must not repeat a family",
            );
        }
        let mut cs = self.cs.clone();
        cs.sort_by(f64::total_cmp);
        if cs.is_empty()
            || !cs.iter().all(|c| c.is_finite() && *c > 0.0)
            || cs.windows(2).any(|p| p[0] == p[1])
        {
            return bad(
                "c grid",
                format!("{:?}", self.cs),
                "must be distinct values finite and > 0",
            );
        }
        if self.gamma_factors.is_empty()
            || !self.gamma_factors.iter().all(|g| g.is_finite() && *g > 0.0)
        {
            return bad(
                "gamma grid",
                format!("{:?}", self.gamma_factors),
                "must be factors finite and > 0",
            );
        }
        if self.folds < 2 {
            return bad("folds", self.folds.to_string(), "must be at least 2");
        }
        Ok(())
    }
}

/// Fits every family on `train` and measures it on `dev`.
///
/// # Errors
/// Bad parameters, data that is not binary, a development set without two rows of each class, or a fit that
/// fails.
///
/// # Examples
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use maxmargin::compare::{CompareParams, Family, compare};
/// let data = maxmargin::datasets::heart_scale()?;
/// let train = data.select(&(0..180).collect::<Vec<_>>());
/// let dev = data.select(&(180..270).collect::<Vec<_>>());
/// let params = CompareParams {
///     families: vec![Family::Linear, Family::Logistic],
///     cs: vec![1.0],
///     ..CompareParams::default()
/// };
/// let c = compare(&train, &dev, &params)?;
/// assert_eq!(c.families.len(), 2);
/// assert!(c.families.iter().all(|f| f.roc_auc.unwrap() > 0.8));
/// # Ok(()) }
/// ```
pub fn compare(
    train: &LabeledData,
    dev: &LabeledData,
    params: &CompareParams,
) -> Result<Comparison, Error> {
    params.check()?;
    check_dev(train, dev)?;
    let halves = crate::linear::stratified_folds(dev, 2, params.seed)?;
    let (evaluation, calibration) = crate::linear::split(dev, &halves, 1);
    let mut warnings = Vec::new();
    let scaler = crate::convergence::fit_scaler(params.scale, &train.x, &mut warnings)?;
    let gamma_scale = match &scaler {
        Some(s) => maxmargin_core::kernel::gamma_scale(&s.transform(&train.x)),
        None => maxmargin_core::kernel::gamma_scale(&train.x),
    };
    let mut base = LinearSvmParams::new().scale(params.scale).seed(params.seed);
    base.threads = params.threads;
    // Every step (selection, fits, calibration, the latency's batch scoring) on `threads` workers.
    let families = crate::parallel::with_threads(params.threads, || {
        params
            .families
            .iter()
            .map(|&f| {
                one_family(
                    f,
                    train,
                    &calibration,
                    &evaluation,
                    params,
                    &base,
                    gamma_scale,
                )
            })
            .collect::<Result<Vec<_>, Error>>()
    })?;
    let wins = wins(&families);
    Ok(Comparison {
        train_rows: train.n_samples(),
        calibration_rows: calibration.n_samples(),
        evaluation_rows: evaluation.n_samples(),
        gamma_scale,
        families,
        wins,
    })
}

/// Checks that `dev` can be cut in the two halves compare calibrates and evaluates on: rows of `train`'s
/// two classes only, at least two of each (one for each half).
fn check_dev(train: &LabeledData, dev: &LabeledData) -> Result<(), Error> {
    use maxmargin_io::libsvm::format_number;
    let classes = maxmargin_io::labels::BinaryLabels::from_labels(&train.source, &train.labels)?;
    if dev.n_samples() == 0 {
        return Err(IoError::Empty {
            path: dev.source.clone(),
        }
        .into());
    }
    let both = [classes.negative, classes.positive];
    let names = format!("{} and {}", format_number(both[0]), format_number(both[1]));
    if let Some(i) = dev.labels.iter().position(|y| !both.contains(y)) {
        return Err(IoError::Parse {
            path: dev.source.clone(),
            line: dev.lines.get(i).copied().unwrap_or(i + 1),
            column: 1,
            field: "label",
            message: format!(
                "{} is not one of the classes of {} ({names})",
                format_number(dev.labels[i]),
                train.source.display()
            ),
        }
        .into());
    }
    for class in both {
        let rows = dev.labels.iter().filter(|&&y| y == class).count();
        if rows < 2 {
            return Err(IoError::Mismatch {
                path: dev.source.clone(),
                message: format!(
                    "class {} has {rows} development row{}: compare cuts the development rows in two \
                     halves, one to calibrate the scores and one to evaluate them, and each half needs \
                     both classes ({names}); give at least 2 rows of each",
                    format_number(class),
                    if rows == 1 { "" } else { "s" }
                ),
            }
            .into());
        }
    }
    Ok(())
}

fn one_family(
    family: Family,
    train: &LabeledData,
    calibration: &LabeledData,
    evaluation: &LabeledData,
    params: &CompareParams,
    base: &LinearSvmParams,
    gamma_scale: f64,
) -> Result<FamilyResult, Error> {
    let gammas: Vec<Option<f64>> = if family.has_gamma() {
        params
            .gamma_factors
            .iter()
            .map(|f| Some(f * gamma_scale))
            .collect()
    } else {
        vec![None]
    };
    let started = Instant::now();
    let mut best: Option<(f64, Option<f64>, f64)> = None;
    // Logistic regression on more rows than features is trained as `train` trains it by default: by Newton's
    // method in the primal, which badly conditioned rows do not slow.
    let shaped = |mut p: LinearSvmParams| {
        if family == Family::Logistic && p.primal_suits(train.n_samples(), train.x.n_features()) {
            p.solver = LinearSolver::Newton(maxmargin_optim::Newton::default());
        }
        p
    };
    for &gamma in &gammas {
        let p = shaped(family.params(base, 1.0, gamma, params.components));
        let path = regularization_path(&p, train, &params.cs, params.folds, params.seed)?;
        if let Some((c, auc)) = best_c(&path, Metric::RocAuc)
            && best.is_none_or(|(_, _, b)| auc > b)
        {
            best = Some((c, gamma, auc));
        }
    }
    let select_seconds = started.elapsed().as_secs_f64();
    let (c, gamma, cv_roc_auc) = best.unwrap_or((params.cs[0], gammas[0], f64::NAN));
    let started = Instant::now();
    let model = shaped(family.params(base, c, gamma, params.components))
        .check()?
        .fit(train)?;
    let fit_seconds = started.elapsed().as_secs_f64();
    let converged = model.training.converged;
    let own = DecisionModel::new(model.clone());
    let own_brier = if model.is_probabilistic() {
        own.evaluate(evaluation, None)?.brier
    } else {
        None
    };
    let calibrated = own.calibrate(calibration, CalibrationMethod::Platt)?;
    let e = calibrated.evaluate(evaluation, None)?;
    let speed = measure(&calibrated, &evaluation.x, params.serving);
    let model_bytes = maxmargin_io::model_file::binary_size(
        std::path::Path::new(family.name()),
        crate::linear::DECISION_KIND,
        &calibrated,
    )?;
    Ok(FamilyResult {
        family,
        c,
        gamma,
        cv_roc_auc,
        settings: gammas.len() * params.cs.len(),
        select_seconds,
        fit_seconds,
        converged,
        roc_auc: e.roc_auc,
        average_precision: e.average_precision,
        brier: e.brier,
        own_brier,
        accuracy: e.accuracy,
        speed,
        model_bytes,
        memory_bytes: calibrated.model.memory_bytes(),
        support_vectors: calibrated.model.kernel.as_ref().map(|k| k.n_support()),
        model: Some(calibrated),
    })
}

/// A measure of a family's row.
type Measure = fn(&FamilyResult) -> Option<f64>;

/// The best family on each measure (the first listed on a tie).
fn wins(rows: &[FamilyResult]) -> Vec<Win> {
    let measures: [(&str, bool, Measure); 6] = [
        ("roc_auc", true, |r| r.roc_auc),
        ("average_precision", true, |r| r.average_precision),
        ("brier", false, |r| r.brier),
        ("p99_us", false, |r| Some(r.speed.p99_us)),
        ("model_bytes", false, |r| Some(r.model_bytes as f64)),
        ("fit_seconds", false, |r| Some(r.fit_seconds)),
    ];
    measures
        .iter()
        .filter_map(|&(name, higher, value)| {
            let mut best: Option<(Family, f64)> = None;
            for r in rows {
                let Some(v) = value(r).filter(|v| v.is_finite()) else {
                    continue;
                };
                let better = match best {
                    None => true,
                    Some((_, b)) if higher => v > b,
                    Some((_, b)) => v < b,
                };
                if better {
                    best = Some((r.family, v));
                }
            }
            best.map(|(family, value)| Win {
                measure: name.into(),
                family,
                value,
            })
        })
        .collect()
}
