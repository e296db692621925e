//! The values the command line's flags take (clap value enums), and what each means to the library.

use super::*;

/// What `convert --to` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ConvertTo {
    /// LIBLINEAR's text model format.
    Liblinear,
    /// A maxmargin model, JSON.
    Json,
    /// A maxmargin model, binary (bincode).
    Bin,
}

/// What `calibrate --method` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum MethodArg {
    /// Platt's sigmoid.
    Platt,
    /// Isotonic regression.
    Isotonic,
}

/// What `train --format` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum FormatArg {
    /// LIBSVM / SVMlight (binary and multiclass).
    Libsvm,
    /// LIBSVM multilabel (comma-separated labels).
    Multilabel,
    /// Joachims' svm_hmm (chains).
    SvmHmm,
    /// CoNLL column files (chains, with feature templates).
    Conll,
}

impl FormatArg {
    /// The format a task reads by default.
    pub(crate) fn of(task: TaskArg) -> Self {
        match task {
            TaskArg::Binary | TaskArg::Multiclass => Self::Libsvm,
            TaskArg::Multilabel => Self::Multilabel,
            TaskArg::Chain => Self::SvmHmm,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Libsvm => "libsvm",
            Self::Multilabel => "multilabel",
            Self::SvmHmm => "svm-hmm",
            Self::Conll => "conll",
        }
    }
}

/// What `train --task` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum TaskArg {
    /// Two classes.
    Binary,
    /// One class of many (LIBSVM).
    Multiclass,
    /// A set of labels (LIBSVM multilabel).
    Multilabel,
    /// A tag per token (svm_hmm).
    Chain,
}

/// What `train --solver` accepts (which task takes which is checked after parsing, with a message naming
/// the task).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SolverArg {
    /// Dual coordinate descent: binary (LIBLINEAR's -s 3) or multiclass Crammer–Singer (-s 4).
    #[value(alias = "cs")]
    Dcd,
    /// Pegasos (binary).
    Pegasos,
    /// The batch subgradient method (binary).
    Subgradient,
    /// One-vs-rest DCD (multiclass).
    Ovr,
    /// Block-coordinate Frank–Wolfe (structured).
    Bcfw,
    /// 1-slack cutting planes (structured).
    Oneslack,
    /// n-slack cutting planes (structured).
    Nslack,
    /// Stochastic subgradient, structured Pegasos (structured).
    Ssg,
}

impl SolverArg {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Dcd => "dcd",
            Self::Pegasos => "pegasos",
            Self::Subgradient => "subgradient",
            Self::Ovr => "ovr",
            Self::Bcfw => "bcfw",
            Self::Oneslack => "oneslack",
            Self::Nslack => "nslack",
            Self::Ssg => "ssg",
        }
    }
}

/// What `--scale` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ScaleArg {
    /// The features as they are.
    None,
    /// Divide each feature by its largest absolute value (sparse data stays sparse).
    Maxabs,
    /// Map each feature's [min, max] to [0, 1] (sparse data stays sparse for non-negative features).
    Minmax,
    /// Divide by the standard deviation; centred only on dense data (sparse data stays sparse).
    Standard,
}

impl From<ScaleArg> for Scaling {
    fn from(s: ScaleArg) -> Self {
        match s {
            ScaleArg::None => Self::None,
            ScaleArg::Maxabs => Self::MaxAbs,
            ScaleArg::Minmax => Self::MinMax,
            ScaleArg::Standard => Self::Standard,
        }
    }
}

/// What `cv --metric` accepts (the names of `eval --json`'s keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum MetricArg {
    /// The fraction of test rows right.
    Accuracy,
    /// Area under the ROC curve.
    #[value(name = "roc_auc")]
    RocAuc,
    /// F1 of the positive class.
    F1,
    /// Average precision.
    #[value(name = "average_precision")]
    AveragePrecision,
}

impl From<MetricArg> for maxmargin::linear::Metric {
    fn from(m: MetricArg) -> Self {
        match m {
            MetricArg::Accuracy => Self::Accuracy,
            MetricArg::RocAuc => Self::RocAuc,
            MetricArg::F1 => Self::F1,
            MetricArg::AveragePrecision => Self::AveragePrecision,
        }
    }
}
