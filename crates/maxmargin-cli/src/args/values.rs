//! The values the command line's flags take (clap value enums), and what each means to the library.

use super::*;

/// One `-w LABEL=WEIGHT`: the label as written (a class value, a tag number, or a tag name for taggers).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ClassWeight {
    pub(crate) label: String,
    pub(crate) weight: f64,
}

impl ClassWeight {
    /// The weight of a numeric label.
    pub(crate) fn numeric(&self) -> anyhow::Result<(f64, f64)> {
        match self.label.parse::<f64>() {
            Ok(label) if label.is_finite() => Ok((label, self.weight)),
            _ => anyhow::bail!(
                "-w {}={}: {:?} is not a label (a number; tag names apply to --format conll)",
                self.label,
                self.weight,
                self.label
            ),
        }
    }
}

/// The first item of `items` that repeats an earlier one by `same`, with that earlier one (`-w` naming one
/// label twice: which weight was meant is not for us to guess).
pub(crate) fn repeated<T>(items: &[T], same: impl Fn(&T, &T) -> bool) -> Option<(&T, &T)> {
    items
        .iter()
        .enumerate()
        .find_map(|(i, b)| items[..i].iter().find(|a| same(a, b)).map(|a| (a, b)))
}

/// A number of passes: above 0 (`inf`: never before the end).
pub(super) fn parse_positive(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 => Ok(v),
        _ => Err("a number above 0 (inf: only at the end)".into()),
    }
}

/// A budget in passes: a finite number above 0.
pub(super) fn parse_budget(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err("a finite number above 0".into()),
    }
}

/// A relative duality gap: at least 0 and below 1 (a gap of the whole objective certifies nothing).
pub(super) fn parse_gap(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..1.0).contains(&v) => Ok(v),
        _ => Err("a fraction of the objective, at least 0 and below 1 (1e-2 is 1%)".into()),
    }
}

/// A fraction of rows or a probability: a number in [0, 1].
pub(super) fn parse_fraction(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err("a number from 0 to 1".into()),
    }
}

/// A finite number (a score).
pub(super) fn parse_finite(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err("a finite number".into()),
    }
}

/// A count of at least 1.
pub(super) fn parse_count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(v) if v >= 1 => Ok(v),
        _ => Err("a whole number of at least 1".into()),
    }
}

/// Parses `LABEL=WEIGHT`.
pub(super) fn parse_class_weight(s: &str) -> Result<ClassWeight, String> {
    let (label, weight) = s
        .rsplit_once('=')
        .ok_or_else(|| format!("{s:?} is not LABEL=WEIGHT"))?;
    if label.is_empty() {
        return Err(format!("{s:?} names no label"));
    }
    let weight: f64 = weight
        .parse()
        .map_err(|_| format!("{weight:?} is not a weight"))?;
    if !(weight.is_finite() && weight >= 0.0) {
        return Err(format!("weight must be finite and >= 0, got {weight}"));
    }
    Ok(ClassWeight {
        label: label.to_string(),
        weight,
    })
}

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
    /// Graphs as JSON lines (--task graph).
    Graph,
    /// CSV with a header row (binary and multiclass): one label column (--label-column, default `label`),
    /// every other column a feature named by its header; also read for any `.csv` / `.csv.gz` file.
    Csv,
}

impl FormatArg {
    /// The format a task reads by default.
    pub(crate) fn of(task: TaskArg) -> Self {
        match task {
            TaskArg::Binary | TaskArg::Multiclass => Self::Libsvm,
            TaskArg::Multilabel => Self::Multilabel,
            TaskArg::Chain => Self::SvmHmm,
            TaskArg::Graph => Self::Graph,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Libsvm => "libsvm",
            Self::Multilabel => "multilabel",
            Self::SvmHmm => "svm-hmm",
            Self::Conll => "conll",
            Self::Csv => "csv",
            Self::Graph => "graph",
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
    /// A label per node of a graph or grid (JSON lines: features, edges, labels).
    Graph,
}

/// What `train --task graph` takes besides the solver's flags.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct GraphArgs {
    /// --task graph: how labellings are inferred in training and saved for predict and eval: exact-tree
    /// (exact on forests; a graph with a cycle is refused), brute-force (exact, graphs of up to about 20
    /// binary nodes), max-product (loopy belief propagation and local search: approximate on graphs with
    /// cycles, so the training gap is then not a certificate), trws (tree-reweighted max-product: fast,
    /// each answer certified by its bound where the LP relaxation is tight, no branch and bound), ad3 (the
    /// LP relaxation by dual
    /// decomposition, with branch and bound: each answer certified by its dual bound where the search ends
    /// within budget, and the run says whether every one was), qpbo (graph cuts: exact with two labels
    /// and attractive pairwise tables, α-expansion moves otherwise). Default: exact-tree when every
    /// training graph is a forest, else trws.
    #[arg(long, help_heading = GRAPHS, value_enum)]
    pub(crate) inference: Option<InferenceArg>,
    /// --task graph: one pairwise table read from each edge's first node to its second, instead of one
    /// symmetric table.
    #[arg(long, help_heading = GRAPHS)]
    pub(crate) directed: bool,
    /// --task graph: the number of node labels (labels 0..N) [default: one past the largest label in the
    /// training file]; give it when the training graphs lack some label.
    #[arg(long, help_heading = GRAPHS, value_name = "N", value_parser = parse_count)]
    pub(crate) labels: Option<usize>,
    /// --task graph with --inference ad3: train over the LP relaxation (Finley & Joachims 2008): each
    /// loss-augmented answer is AD3's best point of the local polytope, fractional where the relaxation is
    /// not tight, with its dual bound (no branch and bound), so the certified gap is the relaxed problem's.
    /// Prediction still infers labellings.
    #[arg(long, help_heading = GRAPHS)]
    pub(crate) relaxed: bool,
}

/// What `--inference` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum InferenceArg {
    /// Max-product dynamic programming on forests.
    ExactTree,
    /// Every labelling enumerated.
    BruteForce,
    /// Loopy max-product with local search.
    MaxProduct,
    /// TRW-S: tree-reweighted max-product, its bound, and a labelling decoded from the messages.
    Trws,
    /// AD3: the LP relaxation, its dual bound, rounding and branch and bound.
    Ad3,
    /// Graph cuts: one minimum cut (two labels), α-expansion moves (more).
    #[value(alias = "graph-cut")]
    Qpbo,
}

impl InferenceArg {
    pub(crate) fn method(self) -> maxmargin::structured::Inference {
        use maxmargin::structured::Inference;
        match self {
            Self::ExactTree => Inference::ExactTree,
            Self::BruteForce => Inference::BruteForce,
            Self::MaxProduct => Inference::MAX_PRODUCT,
            Self::Trws => Inference::TRWS,
            Self::Ad3 => Inference::AD3,
            Self::Qpbo => Inference::Qpbo,
        }
    }
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
    /// One-vs-rest DCD (multiclass); with --kernel, one-vs-rest SMO.
    Ovr,
    /// One-vs-one SMO: a multiclass kernel SVM's machine per pair of classes (the default with --kernel).
    Ovo,
    /// Block-coordinate Frank–Wolfe (structured).
    Bcfw,
    /// 1-slack cutting planes (structured).
    Oneslack,
    /// n-slack cutting planes (structured).
    Nslack,
    /// Stochastic subgradient, structured Pegasos (structured).
    Ssg,
    /// The averaged structured perceptron (structured): the fast baseline, without a certificate.
    Perceptron,
    /// Sequential minimal optimization: a kernel SVM (binary; --kernel, rbf by default).
    Smo,
    /// Newton's method in the primal (binary --loss squared-hinge or logistic; LIBLINEAR's -s 2, -s 0):
    /// fastest when rows far outnumber features.
    Newton,
}

impl SolverArg {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Dcd => "dcd",
            Self::Pegasos => "pegasos",
            Self::Subgradient => "subgradient",
            Self::Ovr => "ovr",
            Self::Ovo => "ovo",
            Self::Bcfw => "bcfw",
            Self::Oneslack => "oneslack",
            Self::Nslack => "nslack",
            Self::Ssg => "ssg",
            Self::Perceptron => "perceptron",
            Self::Smo => "smo",
            Self::Newton => "newton",
        }
    }
}

/// What `--loss` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum LossArg {
    /// The hinge (an SVM).
    Hinge,
    /// The squared hinge (dcd, newton).
    SquaredHinge,
    /// Logistic regression (dcd, newton; one-vs-rest for multiclass).
    Logistic,
    /// Multinomial logistic regression (--task multiclass).
    Softmax,
}

impl LossArg {
    /// The binary loss, or `None` for the multinomial one.
    pub(crate) fn binary(self) -> Option<maxmargin::optim::BinaryLoss> {
        use maxmargin::optim::BinaryLoss;
        match self {
            Self::Hinge => Some(BinaryLoss::Hinge),
            Self::SquaredHinge => Some(BinaryLoss::SquaredHinge),
            Self::Logistic => Some(BinaryLoss::Logistic),
            Self::Softmax => None,
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

/// What `--kernel` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum KernelArg {
    /// ⟨x, z⟩ (a linear SVM with LIBSVM's unregularized intercept).
    Linear,
    /// exp(−γ‖x − z‖²).
    Rbf,
    /// (γ⟨x, z⟩ + coef0)^degree.
    Poly,
    /// tanh(γ⟨x, z⟩ + coef0).
    Sigmoid,
}

impl From<KernelArg> for maxmargin::linear::KernelKind {
    fn from(k: KernelArg) -> Self {
        match k {
            KernelArg::Linear => Self::Linear,
            KernelArg::Rbf => Self::Rbf,
            KernelArg::Poly => Self::Poly,
            KernelArg::Sigmoid => Self::Sigmoid,
        }
    }
}

/// The kernel SVM's flags (binary training).
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct KernelFlags {
    /// A kernel SVM trained by SMO (LIBSVM's -s 0 -t): linear, rbf, poly or sigmoid; its intercept is
    /// unregularized and its model keeps the support vectors.
    #[arg(long, value_enum, help_heading = KERNEL)]
    pub(crate) kernel: Option<KernelArg>,
    /// γ of rbf, poly and sigmoid: a number, or scale (scikit-learn's 1/(d·Var(X)) over the training rows
    /// after --scale) [scale].
    #[arg(long, value_parser = parse_gamma, allow_hyphen_values = true, help_heading = KERNEL)]
    pub(crate) gamma: Option<Gamma>,
    /// The polynomial kernel's degree [3].
    #[arg(long, help_heading = KERNEL)]
    pub(crate) degree: Option<u32>,
    /// The constant of the poly and sigmoid kernels [0].
    #[arg(long, allow_hyphen_values = true, help_heading = KERNEL)]
    pub(crate) coef0: Option<f64>,
    /// Megabytes of kernel rows kept in memory (LIBSVM's -m) [100].
    #[arg(long, help_heading = KERNEL)]
    pub(crate) cache_mb: Option<f64>,
    /// Approximate the kernel instead: rff (random Fourier features, rbf only) or nystroem (landmarks drawn
    /// from the training rows by --seed); a linear solver (dcd by default, pegasos, logistic) trains on the
    /// features, fitted after --scale and kept in the model.
    #[arg(long, value_parser = parse_approx, help_heading = KERNEL)]
    pub(crate) approx: Option<maxmargin::approx::ApproxMethod>,
    /// The approximation's components (Nyström: landmarks) [100].
    #[arg(long, help_heading = KERNEL)]
    pub(crate) components: Option<usize>,
}

fn parse_approx(s: &str) -> Result<maxmargin::approx::ApproxMethod, String> {
    s.parse().map_err(|_| "must be rff or nystroem".to_string())
}

impl KernelFlags {
    /// The flags given, by name.
    pub(crate) fn given(&self) -> [(&'static str, bool); 7] {
        [
            ("--kernel", self.kernel.is_some()),
            ("--gamma", self.gamma.is_some()),
            ("--degree", self.degree.is_some()),
            ("--coef0", self.coef0.is_some()),
            ("--cache-mb", self.cache_mb.is_some()),
            ("--approx", self.approx.is_some()),
            ("--components", self.components.is_some()),
        ]
    }

    /// The approximated kernel the flags ask for, if `--approx` is given.
    pub(crate) fn approximation(&self) -> Option<maxmargin::approx::Approximation> {
        Some(maxmargin::approx::Approximation {
            method: self.approx?,
            components: self.components.unwrap_or(100),
            kernel: self.choice(),
        })
    }
}

impl KernelFlags {
    /// Refuses the kernel parameters the chosen kernel has no use for, by name.
    pub(crate) fn refuse_unused(&self) -> anyhow::Result<()> {
        let kind = self.kernel.unwrap_or(KernelArg::Rbf);
        let name = format!("{kind:?}").to_lowercase();
        if kind == KernelArg::Linear {
            crate::refuse(
                &[("--gamma", self.gamma.is_some())],
                "applies to rbf, poly and sigmoid kernels, not linear",
            )?;
        }
        if kind != KernelArg::Poly {
            crate::refuse(
                &[("--degree", self.degree.is_some())],
                &format!("applies to the poly kernel, not {name}"),
            )?;
        }
        if matches!(kind, KernelArg::Linear | KernelArg::Rbf) {
            crate::refuse(
                &[("--coef0", self.coef0.is_some())],
                &format!("applies to the poly and sigmoid kernels, not {name}"),
            )?;
        }
        Ok(())
    }

    /// The library's kernel SVM for these flags and `--epsilon`.
    pub(crate) fn solver(&self, epsilon: Option<f64>) -> maxmargin::LinearSolver {
        let kernel = self.choice();
        let defaults = maxmargin::optim::SmoParams::default();
        maxmargin::LinearSolver::Smo {
            smo: maxmargin::optim::SmoParams {
                epsilon: epsilon.unwrap_or(defaults.epsilon),
                cache_mb: self.cache_mb.unwrap_or(defaults.cache_mb),
            },
            kernel,
        }
    }
}

impl KernelFlags {
    /// The kernel the flags name (rbf with γ = scale by default).
    pub(crate) fn choice(&self) -> maxmargin::linear::KernelChoice {
        maxmargin::linear::KernelChoice {
            kind: self.kernel.map_or(Default::default(), Into::into),
            gamma: match self.gamma {
                Some(Gamma::Value(g)) => Some(g),
                Some(Gamma::Scale) | None => None,
            },
            degree: self.degree.unwrap_or(3),
            coef0: self.coef0.unwrap_or(0.0),
        }
    }
}

/// `--gamma`: a number, or `scale`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Gamma {
    /// scikit-learn's `scale`.
    Scale,
    /// This value.
    Value(f64),
}

fn parse_gamma(s: &str) -> Result<Gamma, String> {
    if s == "scale" {
        return Ok(Gamma::Scale);
    }
    match s.parse::<f64>() {
        Ok(g) if g.is_finite() && g > 0.0 => Ok(Gamma::Value(g)),
        _ => Err(format!("{s:?} is not scale or a finite number > 0")),
    }
}

/// Structured training's own flags beyond the budget.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct StructFlags {
    /// How the loss enters the structured hinge: margin (default; max Δ + s(y') − s(y)) or slack
    /// (max Δ·(1 + s(y') − s(y)), Tsochantaridis et al. 2005: a wrong output needs only as much margin as its
    /// loss is worth). Slack rescaling trains with --solver oneslack or nslack on multiclass and multilabel
    /// (exact oracles); stored in the model, and eval's objective uses it.
    #[arg(long, value_enum, help_heading = STRUCTURED)]
    pub(crate) rescaling: Option<RescalingArg>,
    /// --task multiclass: each class a mixture of this many linear templates (a latent structural SVM, Yu
    /// & Joachims 2009), trained by rounds that give each row its class's best template and train the
    /// multiclass SVM on them until the objective stops falling; for classes made of several clusters.
    /// --max-passes and --seconds budget each round's training (at most 64 templates).
    #[arg(long, value_name = "S", help_heading = STRUCTURED)]
    pub(crate) latent_subclasses: Option<usize>,
    /// --task chain (svm_hmm files; train also CoNLL files): each tag split into this many latent states (a latent structural SVM),
    /// trained by rounds that give each sequence its best states for its tags and train the chain on them
    /// until the objective stops falling; for tags whose transitions depend on more than the previous tag.
    /// --max-passes and --seconds budget each round's training (at most 64 states).
    #[arg(long, value_name = "K", help_heading = STRUCTURED)]
    pub(crate) latent_states: Option<usize>,
    /// --format conll: keep only the features that fire at least N times in the training tokens (CRFsuite's
    /// feature.minfreq) [default: 1, every feature]; most of a tagger's features are seen once.
    #[arg(long, value_name = "N", help_heading = STRUCTURED, value_parser = parse_count)]
    pub(crate) min_count: Option<usize>,
    /// --task chain: the order of the tag transitions [default: 1]. 2 adds a weight for every triple of
    /// tags (y[t-2], y[t-1], y[t]), as trigram taggers have, decoded by Viterbi over pairs of tags: L³
    /// weights and O(T·L³) per sequence for L tags instead of O(T·L²). On CoNLL files it adds the template
    /// line T (which a template file may also hold).
    #[arg(
        long,
        value_name = "N",
        value_parser = clap::value_parser!(u8).range(1..=2),
        help_heading = STRUCTURED
    )]
    pub(crate) order: Option<u8>,
}

impl StructFlags {
    /// Whether `--order 2` asks for second-order transitions.
    pub(crate) fn second_order(&self) -> bool {
        self.order == Some(2)
    }
}

/// What `--rescaling` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum RescalingArg {
    /// The loss added to the score (every solver).
    Margin,
    /// The loss scaling the violation of a unit margin (oneslack, nslack).
    Slack,
}

impl RescalingArg {
    pub(crate) fn rescaling(self) -> maxmargin::structured::Rescaling {
        match self {
            Self::Margin => maxmargin::structured::Rescaling::Margin,
            Self::Slack => maxmargin::structured::Rescaling::Slack,
        }
    }
}
