//! The command line: subcommands and their flags (clap). Flags with defaults are `Option`s where the
//! command must know whether they were given, so that a flag that cannot apply is refused, never ignored.

use super::*;
use clap::{Args, Parser, Subcommand};

mod train_args;
mod values;
pub(crate) use train_args::*;
pub(crate) use values::*;

// The help's sections of train's flags.
const COMMON: &str = "Common (every task)";
const BINARY: &str = "Binary training (--task binary)";
const STRUCTURED: &str = "Structured training (--task multiclass|multilabel|chain|graph)";
const KERNEL: &str = "Kernel SVMs (--kernel, binary)";
const RUNS: &str = "Runs: checkpoints, traces, output";
const GRAPHS: &str = "Graphs (--task graph)";

/// Max-margin learning: train, evaluate and apply linear SVMs on LIBSVM / SVMlight files.
#[derive(Debug, Parser)]
#[command(name = "maxmargin", version, about)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
    /// CSV data (--format csv, or a .csv / .csv.gz file, or tab-separated .tsv / .tsv.gz): the name of the label column [default: label].
    #[arg(long, global = true, value_name = "NAME")]
    pub(crate) label_column: Option<String>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Train a binary linear SVM (or, with --task, a multiclass, multilabel, chain or graph SVM) and save
    /// the model.
    #[command(
        after_help = "Examples:\n  $ maxmargin train heart.svm -o heart.model\n  $ maxmargin train heart.svm -o heart.model --scale maxabs -c 10 --pos-label -1\n  $ maxmargin train heart.csv --label-column target -o heart.model\n  $ maxmargin train iris.svm --task multiclass -o iris.model\n  $ maxmargin train heart.svm --kernel rbf -o heart.rbf.model\n  $ maxmargin train heart.svm -o heart.model --trace heart.trace"
    )]
    Train(Box<TrainCmd>),
    /// Predict one label per line (in the data's own label values).
    #[command(
        after_help = "Examples:\n  $ maxmargin predict heart.model dev.svm --scores\n  $ maxmargin predict iris.model iris.svm --json"
    )]
    Predict {
        /// The model file.
        model: PathBuf,
        /// The data, in the model's format (plain or .gz). Binary and multiclass rows need no label (a row
        /// may start with its features, or with `?`); multilabel and svm_hmm rows give theirs (a CoNLL
        /// tagger's tokens may leave out the tag column).
        data: PathBuf,
        /// Write predictions here (atomically) instead of standard output (`-`: standard output).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Also the decision values: binary, one column (the positive label's); multiclass, one per class in
        /// the model's class order, named by a `#` header line; multilabel, one per label (a label is on when
        /// its value is positive). Decision values are margins (log-odds for a logistic model), not
        /// probabilities.
        #[arg(long)]
        scores: bool,
        /// One JSON object per row: {"label": L} (with --scores also "score", or "scores" by class or label, with
        /// --probability "probability").
        #[arg(long)]
        json: bool,
        /// Also the probability of the positive label, for a calibrated binary model (see calibrate) or a
        /// logistic one (its own).
        #[arg(long)]
        probability: bool,
        /// The data's format, as train took it (libsvm, csv, multilabel, svm-hmm, conll); it must be the one
        /// the model reads, which is also what is read when it is not given (for a model trained on CSV, a
        /// file opening with a CSV header).
        #[arg(long, value_enum)]
        format: Option<FormatArg>,
        /// Graph models: infer with this method instead of the one the model was trained with (ad3 or
        /// brute-force to predict exactly with a model trained by max-product, say).
        #[arg(long, value_enum)]
        inference: Option<InferenceArg>,
    },
    /// Accuracy, counts, and with --lambda the primal objective, of a model on labelled data.
    #[command(
        after_help = "Examples:\n  $ maxmargin eval heart.model dev.svm\n  $ maxmargin eval heart.model dev.svm --pos-label -1 --json"
    )]
    Eval {
        /// The model file.
        model: PathBuf,
        /// LIBSVM data (plain or .gz).
        data: PathBuf,
        /// Also report λ/2‖w‖² + mean hinge for this λ.
        #[arg(long)]
        lambda: Option<f64>,
        /// Print one JSON object instead of a table.
        #[arg(long)]
        json: bool,
        /// The same measures per group of rows, beside the overall ones: `qid` groups by the rows' qid:
        /// (a site, a month). Groups with fewer than 30 rows or fewer than 5 of a class present in them (binary:
        /// of either class) are marked.
        #[arg(long, value_enum, conflicts_with = "groups")]
        group_by: Option<crate::groups::GroupByArg>,
        /// A file with one group name per row of the data, for the same per-group measures.
        #[arg(long)]
        groups: Option<PathBuf>,
        /// The data's format, as train took it (libsvm, csv, multilabel, svm-hmm, conll); it must be the one
        /// the model reads, which is also what is read when it is not given (for a model trained on CSV, a
        /// file opening with a CSV header).
        #[arg(long, value_enum)]
        format: Option<FormatArg>,
        /// The label to treat as the positive class (binary models): precision, recall, the ranking measures
        /// and probabilities are this label's [default: the label the model was trained as positive, the
        /// larger unless train --pos-label chose another].
        #[arg(long, value_name = "L", allow_negative_numbers = true)]
        pos_label: Option<f64>,
        /// Graph models: infer with this method instead of the one the model was trained with.
        #[arg(long, value_enum)]
        inference: Option<InferenceArg>,
    },
    /// Stratified, seeded k-fold cross-validation of a binary linear SVM (any of train's flags): accuracy per
    /// fold and their mean, or with --c-path, per C along a warm-started regularization path.
    #[command(
        after_help = "Examples:\n  $ maxmargin cv heart.svm -k 5 --c-path 0.01,0.1,1,10 --metric roc_auc\n  $ maxmargin cv iris.svm --task multiclass -k 3",
        // train's flags that cv refuses (cv_binary::cv) are not offered in its help.
        mut_arg("trace", |a| a.hide(true)),
        mut_arg("trace_weights", |a| a.hide(true)),
        mut_arg("sample_weights", |a| a.hide(true)),
        mut_arg("max_passes", |a| a.hide(true)),
        mut_arg("checkpoint", |a| a.hide(true)),
        mut_arg("checkpoint_every", |a| a.hide(true)),
        mut_arg("resume", |a| a.hide(true)),
        mut_arg("warm_start", |a| a.hide(true))
    )]
    Cv(Box<CvCmd>),
    /// Run the worked examples and train, save, load and evaluate models on embedded data; write the
    /// pictures (training curves, a soft-margin boundary, the losses) into a folder.
    Demo {
        /// The folder for the pictures (created when missing).
        #[arg(long, default_value = "maxmargin-demo")]
        out: PathBuf,
    },
    /// Draw training curves from trace files (train --trace FILE.jsonl), several runs in one figure, log
    /// scales, the tolerance line where the trace names it. SVG, or PNG for a FILE.png.
    #[command(after_help = "Examples:\n  $ maxmargin plot heart.trace -o curve.svg")]
    Plot {
        /// Trace files, one curve each (named by the file's stem).
        #[arg(required = true)]
        traces: Vec<PathBuf>,
        /// The figure (.svg, or .png).
        #[arg(short, long)]
        output: PathBuf,
        /// The horizontal axis.
        #[arg(long, value_enum, default_value_t = crate::figures::XArg::Passes)]
        x: crate::figures::XArg,
        /// The vertical axis: the relative duality gap, or the primal objective.
        #[arg(long, value_enum, default_value_t = crate::figures::YArg::Gap)]
        y: crate::figures::YArg,
        /// The figure's title.
        #[arg(long)]
        title: Option<String>,
    },
    /// Write a binary cache of LIBSVM data (the parsed matrix, labels, qids and line numbers), which every
    /// command reads where it reads LIBSVM text (binary and multiclass), without parsing.
    #[command(after_help = "Examples:\n  $ maxmargin cache heart.svm -o heart.mmc")]
    Cache {
        /// LIBSVM data (plain or .gz).
        data: PathBuf,
        /// The cache file (conventionally DATA.mmc).
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Convert a model between maxmargin and LIBLINEAR (binary and multiclass, with or without bias), or
    /// between maxmargin's two encodings. The output's format is --to's, else OUT's extension: a .json OUT is
    /// a maxmargin JSON model, whatever IN is; any other OUT is LIBLINEAR text for a maxmargin IN and a
    /// maxmargin (binary-encoded) model for a LIBLINEAR IN.
    #[command(
        after_help = "Examples:\n  $ maxmargin convert heart.model --to liblinear -o heart.liblinear"
    )]
    Convert {
        /// A maxmargin model or a LIBLINEAR model file.
        input: PathBuf,
        /// The converted model.
        #[arg(short, long)]
        output: PathBuf,
        /// The output format: liblinear (text), json or bin (maxmargin's encodings; json needs a .json OUT,
        /// bin any other name).
        #[arg(long, value_enum)]
        to: Option<ConvertTo>,
    },
    /// Look at a binary model's boundary through labelled rows: how many are beyond the margin, on it, inside
    /// it and misclassified; the rows nearest the boundary and the margin violators (line numbers, scores,
    /// largest-contributing features); the heaviest features.
    #[command(after_help = "Examples:\n  $ maxmargin inspect heart.model dev.svm --nearest 5")]
    Inspect {
        /// The binary model.
        model: PathBuf,
        /// Labelled LIBSVM data.
        data: PathBuf,
        /// How many rows to list nearest the boundary, and how many violators.
        #[arg(long, default_value_t = 10)]
        nearest: usize,
        /// How many of the model's heaviest features to list.
        #[arg(long, default_value_t = 10)]
        top_features: usize,
        /// Print one JSON object instead of tables.
        #[arg(long)]
        json: bool,
    },
    /// What a binary model costs to serve, measured here: batch rows per second, the latency of one row in
    /// process (p50, p99, max, after a warm-up), its bytes on disk and in memory, and a kernel model's support
    /// vectors. Labels in DATA are not needed.
    #[command(after_help = "Examples:\n  $ maxmargin bench-predict heart.model dev.svm")]
    BenchPredict {
        /// The binary model (linear, logistic or kernel).
        model: PathBuf,
        /// Rows to score (LIBSVM).
        data: PathBuf,
        /// Print one JSON object (rows_per_second, p50_us, p99_us, max_us, model_bytes, memory_bytes, ...).
        #[arg(long)]
        json: bool,
    },
    /// Choose a model family: fit each family (linear SVM, logistic regression, RBF kernel SVM, its Nyström or
    /// random-Fourier approximation) on TRAIN, C and gamma chosen by cross-validation on TRAIN only and
    /// scaling fitted on TRAIN; then on DEV (half calibrates each model, half measures) report ROC AUC,
    /// average precision, the calibrated Brier score, fit seconds, p99 latency and model bytes, and which
    /// family wins on what. No test file is read: keep it sealed until the family is chosen.
    #[command(
        after_help = "Examples:\n  $ maxmargin compare heart.svm dev.svm --families linear,logistic"
    )]
    Compare(Box<CompareCmd>),
    /// Draw a binary model trained on two features over labelled data: the points by class, the boundary
    /// <w,x> + b = 0, the margins = ±1, and the margin violators ringed. SVG, or PNG for a FILE.png.
    #[command(
        after_help = "Examples:\n  $ maxmargin train two.svm -o two.model\n  $ maxmargin plot-boundary two.model two.svm -o boundary.svg"
    )]
    PlotBoundary {
        /// The binary model (two features).
        model: PathBuf,
        /// LIBSVM data with two features.
        data: PathBuf,
        /// The figure (.svg, or .png).
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Fit a calibration (scores to probabilities) of a binary model (Platt or isotonic) or a multiclass
    /// model (one-vs-rest Platt) on development data, never the training data, and save the calibrated model
    /// (then `predict --probability` applies).
    #[command(
        after_help = "Examples:\n  $ maxmargin calibrate heart.model dev.svm -o heart.cal.model"
    )]
    Calibrate {
        /// The binary or multiclass model.
        model: PathBuf,
        /// Labelled development data, disjoint from the training data.
        data: PathBuf,
        /// Where to save the calibrated model.
        #[arg(short, long)]
        output: PathBuf,
        /// platt (a sigmoid, Lin, Lin and Weng's method) or isotonic (a monotone step map).
        #[arg(long, value_enum, default_value_t = MethodArg::Platt)]
        method: MethodArg,
        /// The label to treat as the positive class (binary models): precision, recall, the ranking measures
        /// and probabilities are this label's [default: the label the model was trained as positive, the
        /// larger unless train --pos-label chose another].
        #[arg(long, value_name = "L", allow_negative_numbers = true)]
        pos_label: Option<f64>,
    },
    /// Choose a binary model's score cut-off on development data, by expected cost, review capacity or
    /// recall, or set it by hand (--at P on a calibrated model's probability, --at-score S); it is stored in
    /// the model and used by predict and eval, and printed as a score and, when calibrated, a probability.
    #[command(
        after_help = "Examples:\n  $ maxmargin threshold heart.cal.model dev.svm --max-flag-rate 0.2 -o heart.cut.model\n  $ maxmargin threshold heart.cal.model dev.svm --at 0.7 -o heart.cut.model"
    )]
    Threshold {
        /// The binary (or calibrated) model.
        model: PathBuf,
        /// Labelled development data, disjoint from the training data and the final test.
        data: PathBuf,
        /// Where to save the model with its threshold.
        #[arg(short, long)]
        output: PathBuf,
        /// Cost of a missed positive (with --cost-fp).
        #[arg(long, requires = "cost_fp", conflicts_with_all = ["max_flag_rate", "min_recall", "at", "at_score"])]
        cost_fn: Option<f64>,
        /// Cost of a false alarm (with --cost-fn).
        #[arg(long, requires = "cost_fn")]
        cost_fp: Option<f64>,
        /// Flag at most this fraction of the rows (review capacity).
        #[arg(long, conflicts_with_all = ["min_recall", "at", "at_score"], value_parser = parse_fraction)]
        max_flag_rate: Option<f64>,
        /// Catch at least this fraction of the positives, with as few flags as that allows.
        #[arg(long, conflicts_with_all = ["at", "at_score"], value_parser = parse_fraction)]
        min_recall: Option<f64>,
        /// Set the cut-off by hand on the calibrated probability: flag rows whose probability is at least P
        /// (a calibrated model).
        #[arg(long, value_name = "P", conflicts_with = "at_score", value_parser = parse_fraction)]
        at: Option<f64>,
        /// Set the cut-off by hand on the score: flag rows scoring above S.
        #[arg(long, value_name = "S", value_parser = parse_finite, allow_negative_numbers = true)]
        at_score: Option<f64>,
        /// The label to treat as the positive class (binary models): precision, recall, the ranking measures
        /// and probabilities are this label's [default: the label the model was trained as positive, the
        /// larger unless train --pos-label chose another].
        #[arg(long, value_name = "L", allow_negative_numbers = true)]
        pos_label: Option<f64>,
    },
}

#[derive(Debug, Args)]
pub(crate) struct TrainCmd {
    /// LIBSVM data (plain or .gz); labels may be any two numbers (+1/-1, 0/1, 1/2, ...).
    pub(crate) data: PathBuf,
    /// Where to save the model (JSON when the name ends in .json).
    #[arg(short, long)]
    pub(crate) output: PathBuf,
    /// binary, multiclass, multilabel, chain or graph (data: LIBSVM, LIBSVM, LIBSVM multilabel, svm_hmm,
    /// graph JSON lines).
    #[arg(long, value_enum, default_value_t = TaskArg::Binary)]
    pub(crate) task: TaskArg,
    /// Exit with status 3 when the run stops short of its optimum (the model is still written, and the
    /// warning printed).
    #[arg(long)]
    pub(crate) require_convergence: bool,
    /// The data's format: libsvm (binary, multiclass), multilabel, svm-hmm (chain) or conll (chain: CoNLL
    /// column files, `word [POS ...] tag`, with the feature templates of --template). Default: the task's.
    #[arg(long, value_enum)]
    pub(crate) format: Option<FormatArg>,
    /// With --format conll: the feature templates, `chunking` (word and POS windows), `ner` (word windows,
    /// shapes, affixes and any further columns) or a CRF++-style template FILE. Default: chunking when the
    /// file has a POS column, else ner.
    #[arg(long, value_name = "chunking|ner|FILE")]
    pub(crate) template: Option<String>,
    /// Read the data from disk pass by pass instead of into memory (--task binary with --solver dcd, the
    /// default, pegasos or subgradient; plain or gzip text): the file is parsed once into shuffled rows in
    /// --stream-dir, so memory does not grow with the number of rows.
    #[arg(long)]
    pub(crate) stream: bool,
    /// Where --stream keeps its temporary row files (removed when training ends). Default: the directory
    /// of the model file.
    #[arg(long, value_name = "DIR")]
    pub(crate) stream_dir: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) graph: GraphArgs,
    #[command(flatten)]
    pub(crate) opts: TrainArgs,
}

#[derive(Debug, Args)]
pub(crate) struct CompareCmd {
    /// Training rows (LIBSVM, two classes): every family is fitted and tuned on them only.
    pub(crate) train: PathBuf,
    /// Development rows (LIBSVM, the same two classes): half (by class, --seed) calibrates, half measures.
    pub(crate) dev: PathBuf,
    /// The families, comma-separated: linear, logistic, rbf (exact, by smo), nystroem, rff.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "linear,logistic,rbf,nystroem"
    )]
    pub(crate) families: Vec<String>,
    /// The C values cross-validation chooses from, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "0.1,1,10")]
    pub(crate) c_grid: Vec<f64>,
    /// The kernel widths it chooses from, as multiples of gamma = scale (1/(d·Var X) on the scaled training
    /// rows), comma-separated [default: 0.1,1,10]. For the rbf, nystroem and rff families only.
    #[arg(long, value_delimiter = ',')]
    pub(crate) gamma_grid: Option<Vec<f64>>,
    /// Folds of the cross-validation on TRAIN.
    #[arg(short = 'k', long, default_value_t = 3)]
    pub(crate) folds: usize,
    /// Components of the approximated kernels (nystroem: landmarks; rff: frequencies) [default: 300]. For
    /// the nystroem and rff families only.
    #[arg(long)]
    pub(crate) components: Option<usize>,
    /// Feature scaling fitted on TRAIN: none, maxabs, minmax, standard.
    #[arg(long, value_enum, default_value_t = ScaleArg::Maxabs)]
    pub(crate) scale: ScaleArg,
    /// Seed of the folds, the development split and the approximations.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub(crate) threads: Option<usize>,
    /// Print one JSON object (train_rows, calibration_rows, evaluation_rows, gamma_scale, families: [{family,
    /// c, gamma, roc_auc, average_precision, brier, fit_seconds, speed: {p99_us, ...}, model_bytes, ...}],
    /// wins).
    #[arg(long)]
    pub(crate) json: bool,
    /// Draw ROC AUC against p99 latency, one point per family (SVG, or PNG for a FILE.png).
    #[arg(long, value_name = "FILE")]
    pub(crate) plot: Option<PathBuf>,
    /// Save each family's calibrated model here as FAMILY.model.
    #[arg(long, value_name = "DIR")]
    pub(crate) out_dir: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct CvCmd {
    /// The data (plain or .gz): LIBSVM (or CSV) with two classes; with --task, the task's format.
    pub(crate) data: PathBuf,
    /// Number of folds.
    #[arg(short = 'k', long, default_value_t = 5)]
    pub(crate) folds: usize,
    /// binary (default), or multiclass (measured by accuracy), multilabel (micro-averaged F1) or chain (token
    /// accuracy), each with that task's solvers and defaults.
    #[arg(long, value_enum, default_value_t = TaskArg::Binary)]
    pub(crate) task: TaskArg,
    /// The data's format, as train takes it: libsvm or csv (binary, multiclass), multilabel, svm-hmm
    /// (chain). Default: the task's, CSV for a .csv / .tsv file. CoNLL text (conll) is not cross-validated:
    /// train a tagger on one file and eval it on another.
    #[arg(long, value_enum)]
    pub(crate) format: Option<FormatArg>,
    /// One group name per example (row; sequence for chains): folds keep each group whole (scikit-learn's
    /// GroupKFold), so a model is never tested on a group it trained on; needs at least -k groups.
    #[arg(long)]
    pub(crate) groups: Option<PathBuf>,
    /// A regularization path: C values, comma-separated, in any order (run from the smallest) (e.g. 0.01,0.1,1,10); each fold's model
    /// at a C starts from its dual solution at the previous C (dcd).
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["c", "lambda"])]
    pub(crate) c_path: Vec<f64>,
    /// Print one JSON object (`fold_accuracy`, `accuracy`, `std`, `folds`), or with --c-path a JSON array of
    /// (`c`, `cv`, `passes`, `objective`, `metric`, `score`: the metric's mean, `best`: the chosen C).
    #[arg(long)]
    pub(crate) json: bool,
    /// The measure to choose C by on the path (and to report): accuracy, roc_auc, f1 or average_precision,
    /// each the mean over the folds' test rows.
    #[arg(long, value_enum, default_value_t = MetricArg::Accuracy)]
    pub(crate) metric: MetricArg,
    /// Train the final model on all the training data at the chosen C (the best on --c-path, else the C
    /// given) and save it to -o.
    #[arg(long, requires = "output")]
    pub(crate) refit: bool,
    /// Where --refit saves the model.
    #[arg(short, long, requires = "refit")]
    pub(crate) output: Option<PathBuf>,
    /// Exit with status 3 when a fold's model (or the refit) stops short of its optimum (the measures are
    /// still printed, with the warning).
    #[arg(long)]
    pub(crate) require_convergence: bool,
    #[command(flatten)]
    pub(crate) opts: TrainArgs,
}
