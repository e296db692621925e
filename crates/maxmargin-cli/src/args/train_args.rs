//! The training flags `train` and `cv` share (`TrainArgs`), and what they ask of the library.

use super::*;
use clap::Args;

/// Training flags shared by `train` and `cv`.
#[derive(Debug, Args)]
pub(crate) struct TrainArgs {
    /// binary: dcd (default; LIBLINEAR's -s 3), pegasos, subgradient or smo (a kernel SVM, with --kernel);
    /// multiclass: dcd (default;
    /// Crammer–Singer, as LIBLINEAR's -s 4), ovr (one-vs-rest DCD), bcfw, oneslack, nslack, ssg or perceptron;
    /// multilabel and chain: bcfw (default), oneslack, nslack, ssg or perceptron (the averaged structured
    /// perceptron: the fast baseline, without a certificate); graph: nslack (default), bcfw, oneslack, ssg or
    /// perceptron.
    #[arg(long, value_enum, help_heading = COMMON)]
    pub(crate) solver: Option<SolverArg>,
    /// Scale the features: statistics fitted on the training rows only, stored in the model and applied by
    /// predict and eval. none (default), maxabs (sparse stays sparse), minmax (to [0, 1]; sparse stays sparse
    /// for non-negative features), standard (centred on dense data only).
    #[arg(long, value_enum, help_heading = COMMON)]
    pub(crate) scale: Option<ScaleArg>,
    /// dcd: projected-gradient tolerance [0.1]; smo: LIBSVM's -e [0.001]; structured: cutting-plane violation, or BCFW's relative gap [0.01].
    #[arg(long, help_heading = COMMON)]
    pub(crate) epsilon: Option<f64>,
    /// Structured: budget in passes over the data (oracle calls / n) [default: 1000].
    #[arg(long, help_heading = STRUCTURED, value_parser = values::parse_budget)]
    pub(crate) max_passes: Option<f64>,
    /// Worker threads [default: all cores]; the model does not depend on it.
    #[arg(long, help_heading = COMMON)]
    pub(crate) threads: Option<usize>,
    /// Binary dcd and structured bcfw: blocks of examples stepped at once on every core, combined by an exact
    /// line search (1: sequential, as LIBLINEAR and one process's BCFW); the model depends on the blocks and
    /// the seed, not on --threads.
    #[arg(long, help_heading = COMMON)]
    pub(crate) blocks: Option<usize>,
    #[command(flatten)]
    pub(crate) kernel: KernelFlags,
    #[command(flatten)]
    pub(crate) structural: StructFlags,
    /// Stop once the duality gap is at most this fraction of the objective (dcd, newton, and structured
    /// solvers with a gap), checked every --eval-every passes (newton: every step).
    #[arg(long, help_heading = COMMON, value_parser = values::parse_gap)]
    pub(crate) gap: Option<f64>,
    /// Write the run's whole state here at the end (and every --checkpoint-every seconds), atomically, to
    /// continue later with --resume; a binary dcd checkpoint also warm-starts another C (--warm-start).
    #[arg(long, help_heading = RUNS)]
    pub(crate) checkpoint: Option<PathBuf>,
    /// Also write the --checkpoint file every this many seconds during training, so a killed run can
    /// --resume from the last one (to the same bits as a run that was never stopped); stretched when one
    /// write takes over a tenth of it, so checkpoints cost at most about a tenth of the time.
    #[arg(long, value_name = "SECONDS", requires = "checkpoint", help_heading = RUNS)]
    pub(crate) checkpoint_every: Option<f64>,
    /// Continue from a --checkpoint file (same data, task, solver and λ); the budgets (--epochs,
    /// --max-passes, --iterations) are totals counted from the start of the run it saved, not more work on
    /// top of it.
    #[arg(long, help_heading = RUNS)]
    pub(crate) resume: Option<PathBuf>,
    /// Structured, ssg: start from this model's weights. Binary dcd: start from the duals of a --checkpoint
    /// file (or an older dual file) made on the same examples at any C, or from a binary model (α_i = C
    /// inside its margin, else 0).
    #[arg(long, help_heading = RUNS)]
    pub(crate) warm_start: Option<PathBuf>,
    /// Binary: the label to train as the positive class (+1: predicted when the score is above the
    /// cut-off; precision, recall and probabilities are its) [default: the larger label].
    #[arg(long, value_name = "L", allow_negative_numbers = true, help_heading = BINARY)]
    pub(crate) pos_label: Option<f64>,
    /// λ in λ/2‖w‖² + (1/n)Σ hinge [binary, multiclass and multilabel default: C = 1, as LIBLINEAR, LIBSVM
    /// and scikit-learn; chain: λ = 0.01; graph: λ = 1, as a graph's loss adds up over all its nodes].
    #[arg(long, conflicts_with = "c", help_heading = COMMON)]
    pub(crate) lambda: Option<f64>,
    /// C in LIBLINEAR's ½‖w‖² + CΣ hinge; converted to λ = 1/(C n) [binary, multiclass and multilabel
    /// default: 1].
    #[arg(short = 'c', long = "cost", help_heading = COMMON)]
    pub(crate) c: Option<f64>,
    /// Passes over the data [default: 1000 for dcd, which stops on its own test first; 10 for pegasos; for
    /// subgradient, 500 iterations]. smo (--kernel) checks its budgets between rounds of min(n, 1000) pair
    /// steps, so a run may pass a budget by up to one round.
    #[arg(long, conflicts_with = "iterations", help_heading = BINARY)]
    pub(crate) epochs: Option<f64>,
    /// Steps (pegasos), full-batch iterations (subgradient) or pair steps (smo, checked between rounds of
    /// min(n, 1000), as --epochs).
    #[arg(long, help_heading = BINARY)]
    pub(crate) iterations: Option<u64>,
    /// Stop after this many seconds (the model then depends on the machine's speed).
    #[arg(long, help_heading = COMMON)]
    pub(crate) seconds: Option<f64>,
    /// Stop when the objective improves by less than this, relative, over the last 5 evaluations.
    #[arg(long, help_heading = COMMON)]
    pub(crate) tolerance: Option<f64>,
    /// Examples per Pegasos step [1].
    #[arg(long, help_heading = BINARY)]
    pub(crate) batch_size: Option<usize>,
    /// constant:ETA, inverse:ETA0 (ETA0/t) or pegasos (1/(λt)).
    #[arg(long, help_heading = BINARY)]
    pub(crate) step: Option<StepRule>,
    /// none, unregularized or feature (a regularized constant feature, as LIBLINEAR's -B 1) [feature];
    /// structured tasks: none or feature.
    #[arg(long, help_heading = COMMON)]
    pub(crate) bias: Option<Bias>,
    /// Project onto the ball of radius 1/√λ after each Pegasos step.
    #[arg(long, help_heading = BINARY)]
    pub(crate) projection: bool,
    /// Return the average of the Pegasos iterates (the default; see --last).
    #[arg(long, conflicts_with = "last", help_heading = BINARY)]
    pub(crate) average: bool,
    /// Return the last Pegasos iterate instead of the average.
    #[arg(long, help_heading = BINARY)]
    pub(crate) last: bool,
    /// With --average, average only the iterates after this many passes [1].
    #[arg(long, help_heading = BINARY)]
    pub(crate) average_from: Option<f64>,
    /// Pegasos: permutation (per epoch, the default), uniform (with replacement) or cyclic.
    #[arg(long, help_heading = BINARY)]
    pub(crate) sampling: Option<Sampling>,
    /// Seed of all randomness.
    #[arg(long, default_value_t = 0, help_heading = COMMON)]
    pub(crate) seed: u64,
    /// Evaluate the objective and its certificate every this many passes (for the trace) [with --trace:
    /// 1 for binary, 5 for structured; otherwise only when a stop needs it, and at the end].
    #[arg(long, help_heading = RUNS, value_parser = values::parse_positive)]
    pub(crate) eval_every: Option<f64>,
    /// Class weight LABEL=WEIGHT (repeatable): that class's losses count WEIGHT times, as LIBLINEAR's -wi;
    /// for chains a tag (its number, or its name with --format conll) whose mistakes cost WEIGHT; for graphs a
    /// node label (0-based, as in the file).
    #[arg(short = 'w', long = "weight", value_parser = values::parse_class_weight, allow_hyphen_values = true, help_heading = COMMON)]
    pub(crate) class_weights: Vec<ClassWeight>,
    /// hinge (default), squared-hinge, or logistic (logistic regression: its scores are log-odds and
    /// predict --probability gives its own probabilities), the last two with --solver dcd or newton (newton
    /// by default when the rows outnumber the features); softmax for
    /// --task multiclass (multinomial logistic regression, by Newton's method).
    #[arg(long, value_enum, help_heading = BINARY)]
    pub(crate) loss: Option<LossArg>,
    /// Return the evaluated model with the lowest objective instead of the final one.
    #[arg(long, help_heading = COMMON)]
    pub(crate) keep_best: bool,
    /// Write the trace (one JSON object per evaluation, then a summary line) to this file.
    #[arg(long, help_heading = RUNS)]
    pub(crate) trace: Option<PathBuf>,
    /// Per-row weights: a file with one non-negative number per training row (in file order); a row's loss
    /// counts that many times (times its class weight). Binary training (every solver) and --task multiclass
    /// with --solver dcd.
    #[arg(long, value_name = "FILE", help_heading = COMMON)]
    pub(crate) sample_weights: Option<PathBuf>,
    /// With --trace: evaluate after every step and add to each record the weights, and the step's examples
    /// with their margins and cases (`violated` when the margin is below 1); binary problems of at most 20
    /// features, to follow a solver by hand.
    #[arg(long, requires = "trace", help_heading = BINARY)]
    pub(crate) trace_weights: bool,
    /// No progress bar and no summary (warnings are still printed).
    #[arg(short, long, help_heading = RUNS)]
    pub(crate) quiet: bool,
}

impl TrainArgs {
    /// The `-w` weights with numeric labels (class values, or svm_hmm tag numbers).
    pub(crate) fn numeric_class_weights(&self) -> anyhow::Result<Vec<(f64, f64)>> {
        let weights: Vec<(f64, f64)> = self
            .class_weights
            .iter()
            .map(ClassWeight::numeric)
            .collect::<anyhow::Result<_>>()?;
        // `-w 1=2 -w 1.0=3` names one label twice.
        if let Some(((label, first), (_, weight))) = repeated(&weights, |a, b| a.0 == b.0) {
            anyhow::bail!(
                "-w names the label {label} twice ({first} and {weight}): give each label one weight"
            );
        }
        Ok(weights)
    }

    /// The regularization the flags ask for (`--lambda` or `-c`, which clap keeps exclusive), converted by
    /// core's `Regularization` at fit time, for every task.
    pub(crate) fn regularization(&self) -> Option<maxmargin::core::objective::Regularization> {
        use maxmargin::core::objective::Regularization;
        self.lambda
            .map(Regularization::Lambda)
            .or(self.c.map(Regularization::CSum))
    }

    /// The checkpoints the flags ask for.
    pub(crate) fn checkpoints(&self) -> maxmargin::checkpoint::CheckpointPlan {
        maxmargin::checkpoint::CheckpointPlan {
            resume: self.resume.clone(),
            save_to: self.checkpoint.clone(),
            every_seconds: self.checkpoint_every,
        }
    }
}
