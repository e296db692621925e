//! What `predict`, `eval` and the structured commands read beside the command line: a structured model file
//! of any kind, and data checked to fit the model it is given to. It calls no command.

use super::*;
use maxmargin::StructuredModel;

/// Refuses a `--format` other than the one the model at `path` reads (the flag `train` took, accepted by
/// `predict` and `eval` where it means the same).
pub(crate) fn check_format(path: &Path, format: Option<FormatArg>) -> Result<()> {
    let Some(given) = format else {
        return Ok(());
    };
    let kind = maxmargin::io::model_file::read_header(path)?.kind;
    let reads = match kind.as_str() {
        "multilabel" => FormatArg::Multilabel,
        "chain" => FormatArg::SvmHmm,
        k if k == maxmargin::structured_svm::LATENT_CHAIN_KIND => FormatArg::SvmHmm,
        k if k == maxmargin::structured_svm::LATENT_KIND => FormatArg::Libsvm,
        "graph" => FormatArg::Graph,
        k if maxmargin::tagger::is_tagger_kind(k) => FormatArg::Conll,
        _ => FormatArg::Libsvm,
    };
    // Binary and multiclass models read CSV as well as LIBSVM.
    if given != reads && !(given == FormatArg::Csv && reads == FormatArg::Libsvm) {
        bail!(
            "{}: a {kind} model reads {} data, not --format {}",
            path.display(),
            reads.name(),
            given.name()
        );
    }
    Ok(())
}

/// A structured model file, read once: a calibrated multiclass file (kind `multiclass-decision`) as the
/// calibrated model, any other as its model.
pub(crate) enum Loaded {
    /// One-vs-rest Platt maps over a multiclass model.
    Calibrated(maxmargin::structured_svm::CalibratedMulticlass),
    /// A structured model.
    Plain(StructuredModel),
}

impl Loaded {
    pub(crate) fn load(path: &Path) -> Result<Self> {
        let kind = maxmargin::io::model_file::read_header(path)?.kind;
        Ok(
            if kind == maxmargin::structured_svm::MULTICLASS_DECISION_KIND {
                Self::Calibrated(maxmargin::structured_svm::CalibratedMulticlass::load(path)?)
            } else {
                Self::Plain(StructuredModel::load(path)?)
            },
        )
    }

    pub(crate) fn model(&self) -> &StructuredModel {
        match self {
            Self::Calibrated(c) => &c.model,
            Self::Plain(m) => m,
        }
    }

    pub(crate) fn calibrated(&self) -> Option<&maxmargin::structured_svm::CalibratedMulticlass> {
        match self {
            Self::Calibrated(c) => Some(c),
            Self::Plain(_) => None,
        }
    }
}

/// How data files are told apart: CSV by `--format csv` or by a `.csv` / `.csv.gz` name, with the label
/// column `--label-column` names; every other file is LIBSVM, except that data for a model trained on CSV
/// (one with feature names) whose first line is a CSV header is CSV when `--format` is not given. Set once,
/// before any command reads data.
#[derive(Debug, Default)]
struct CsvChoice {
    forced: bool,
    format_given: bool,
    label_column: Option<String>,
}

static CSV: std::sync::OnceLock<CsvChoice> = std::sync::OnceLock::new();

/// Records the command's CSV flags (`--format csv`, whether any `--format` was given, `--label-column`).
pub(crate) fn choose_csv(forced: bool, format_given: bool, label_column: Option<String>) {
    let _ = CSV.set(CsvChoice {
        forced,
        format_given,
        label_column,
    });
}

/// Whether `path` is read as CSV.
pub(crate) fn is_csv(path: &Path) -> bool {
    CSV.get().is_some_and(|c| c.forced) || maxmargin::io::csv_file::is_csv_name(path)
}

/// Whether `path` is read as CSV for a model with feature names `names`: as [`is_csv`], or when the model
/// was trained on CSV (it has names), no `--format` says otherwise and the file opens with a CSV header
/// (LIBSVM lines given to such a model are read as LIBSVM, with a warning).
fn is_csv_for(path: &Path, names: &[String]) -> bool {
    is_csv(path)
        || (!names.is_empty()
            && !CSV.get().is_some_and(|c| c.format_given)
            && opens_with_csv_header(path))
}

/// Whether the first line of a regular file (plain or gzip) has commas and no `:` (a CSV header, not
/// LIBSVM's `index:value`); a pipe is never peeked at, as its bytes would be lost.
fn opens_with_csv_header(path: &Path) -> bool {
    use std::io::{BufRead, Read};
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let Ok(file) = maxmargin::io::open_maybe_gz(path) else {
        return false;
    };
    // The first line that is not a `#` comment (LIBSVM files may open with one).
    let mut file = file.take(1 << 16);
    let mut line = Vec::new();
    loop {
        line.clear();
        match file.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return false,
            Ok(_) if line.trim_ascii_start().starts_with(b"#") => continue,
            Ok(_) => break,
        }
    }
    line.contains(&b',') && !line.contains(&b':')
}

/// A LIBSVM read that failed on a first line that looks like a CSV header (a label token with commas)
/// says to pass `--format csv`.
fn csv_hint(e: maxmargin::io::IoError) -> anyhow::Error {
    match &e {
        maxmargin::io::IoError::Parse {
            line: 1,
            field: "label",
            message,
            ..
        } if message.contains(',') && !message.contains(':') => {
            anyhow::anyhow!("{e} (the first line looks like a CSV header: pass --format csv)")
        }
        _ => e.into(),
    }
}

/// `path`, after refusing `--label-column` for it: data of a kind that is never CSV (`what`: multilabel
/// LIBSVM, svm_hmm, CoNLL, graph JSON lines), where the flag would be silently ignored.
pub(crate) fn not_csv<'p>(path: &'p Path, what: &str) -> Result<&'p Path> {
    if CSV.get().is_some_and(|c| c.label_column.is_some()) {
        bail!(
            "{}: --label-column applies to CSV data (binary and multiclass), not to {what} data",
            path.display()
        );
    }
    Ok(path)
}

/// Reads a data file, CSV or LIBSVM (see [`is_csv`]); `unlabelled` rows may lack labels, `names` are a
/// model's feature names to match CSV columns to, `trained_label` the label column it was trained with.
fn read_data(
    path: &Path,
    unlabelled: bool,
    (names, trained_label): (&[String], Option<&str>),
) -> Result<maxmargin::io::libsvm::LabeledData> {
    let asked = CSV.get().and_then(|c| c.label_column.as_deref());
    // The model's own label column, unless --label-column names another.
    let label_column = asked.or(trained_label);
    if !is_csv_for(path, names) {
        if asked.is_some() {
            bail!(
                "{}: --label-column applies to CSV data (--format csv, or a .csv file)",
                path.display()
            );
        }
        let read = if unlabelled {
            libsvm::read_unlabelled(path)
        } else {
            libsvm::read(path)
        };
        return read.map_err(csv_hint);
    }
    let read = maxmargin::io::csv_file::read(
        path,
        maxmargin::io::csv_file::CsvOptions {
            label_column,
            unlabelled,
            features: (!names.is_empty()).then_some(names),
        },
    )?;
    if !read.skipped.is_empty() {
        let shown: Vec<&str> = read.skipped.iter().take(5).map(String::as_str).collect();
        note!(
            "warning: {}: {} columns are not features of the model and are ignored ({}{})",
            path.display(),
            read.skipped.len(),
            shown.join(", "),
            if read.skipped.len() > 5 { ", ..." } else { "" }
        );
    }
    Ok(read.data)
}

/// Reads labelled rows to train or choose on (CSV or LIBSVM).
pub(crate) fn read_labelled(path: &Path) -> Result<maxmargin::io::libsvm::LabeledData> {
    read_data(path, false, (&[], None))
}

/// What data for a model must fit: its classes, its input features and their names (empty for none).
#[derive(Clone, Copy)]
pub(crate) struct ModelShape<'a> {
    pub(crate) classes: &'a [f64],
    pub(crate) n_features: usize,
    pub(crate) names: &'a [String],
    /// The label column of the CSV data it was trained on.
    pub(crate) label_column: Option<&'a str>,
    /// Whether its evaluation counts a label it never saw as an error (multiclass models), so that such a
    /// label is refused as another task's only when most rows have one.
    pub(crate) counts_unknown: bool,
}

impl<'a> ModelShape<'a> {
    pub(crate) fn binary(m: &'a maxmargin::LinearModel) -> Self {
        Self {
            classes: &m.labels,
            n_features: m.n_input_features(),
            names: m.feature_names(),
            label_column: m.label_column(),
            counts_unknown: false,
        }
    }

    pub(crate) fn structured(m: &'a StructuredModel) -> Self {
        Self {
            classes: &m.classes,
            n_features: m.n_input_features(),
            names: m.feature_names(),
            label_column: m.label_column(),
            counts_unknown: true,
        }
    }
}

/// [`read_for_model`] for a binary model.
pub(crate) fn read_for_binary(
    data_path: &Path,
    model_path: &Path,
    model: &maxmargin::LinearModel,
) -> Result<maxmargin::io::libsvm::LabeledData> {
    read_for_model(data_path, model_path, ModelShape::binary(model))
}

/// Reads data (CSV or LIBSVM) for a model: data with more distinct labels than the model has classes is
/// another task's (an a9a model on letter data) and is refused, saying what the model expects; features
/// beyond the model's are ignored by the prediction and counted in one `warning:` line; CSV columns are
/// matched to a model's feature names.
pub(crate) fn read_for_model(
    data_path: &Path,
    model_path: &Path,
    shape: ModelShape<'_>,
) -> Result<maxmargin::io::libsvm::LabeledData> {
    let data = read_data(data_path, false, (shape.names, shape.label_column))?;
    warn_unnamed(data_path, model_path, shape.names);
    fits_model(data, data_path, model_path, shape)
}

/// Reads rows to predict for a model, as [`read_for_model`]: a row may have no label (it starts with its
/// features, or has the placeholder `?`; in CSV an empty label cell or no label column).
pub(crate) fn read_to_predict(
    data_path: &Path,
    model_path: &Path,
    shape: ModelShape<'_>,
) -> Result<maxmargin::io::libsvm::LabeledData> {
    let data = read_data(data_path, true, (shape.names, shape.label_column))?;
    warn_unnamed(data_path, model_path, shape.names);
    fits_model(data, data_path, model_path, shape)
}

/// Data and model that cannot be matched by name (a model trained on LIBSVM data, whose features have
/// numbers, on CSV columns, or one trained on CSV columns on LIBSVM data) are matched by position, and
/// a `warning:` line says so.
fn warn_unnamed(data_path: &Path, model_path: &Path, names: &[String]) {
    let (data, model) = (data_path.display(), model_path.display());
    match (is_csv_for(data_path, names), names.is_empty()) {
        (true, true) => note!(
            "warning: {data}: {model} was trained on data without feature names (LIBSVM): the CSV's \
             feature columns are taken in order as its features 1, 2, ..."
        ),
        (false, false) => note!(
            "warning: {data}: {model} was trained on named CSV columns ({}, ...): the LIBSVM features 1, 2, \
             ... are taken as those columns in order",
            names[0]
        ),
        _ => {}
    }
}

fn fits_model(
    data: maxmargin::io::libsvm::LabeledData,
    data_path: &Path,
    model_path: &Path,
    shape: ModelShape<'_>,
) -> Result<maxmargin::io::libsvm::LabeledData> {
    let classes = shape.classes;
    // Bits of the label with -0 taken as 0 (one class).
    let key = |l: f64| (l + 0.0).to_bits();
    let known: std::collections::HashSet<u64> = classes.iter().map(|&c| key(c)).collect();
    let mut seen = std::collections::HashSet::new();
    // The first label past the model's class count, with its row, and the labelled rows the model never saw.
    let (mut first_beyond, mut unknown_rows, mut labelled) = (None, 0usize, 0usize);
    for (i, &l) in data.labels.iter().enumerate() {
        if l.is_nan() {
            continue;
        }
        labelled += 1;
        unknown_rows += usize::from(!known.contains(&key(l)));
        if seen.insert(key(l)) && seen.len() > classes.len() && first_beyond.is_none() {
            first_beyond = Some((i, l, seen.len()));
            if !shape.counts_unknown {
                break;
            }
        }
    }
    // A model that counts an unseen label as an error takes a rare class only the test rows have; data whose
    // rows mostly have labels it never saw is another task's all the same, however few its labels (±1 rows
    // given to a ten-class model).
    let another_task = !shape.counts_unknown || 2 * unknown_rows > labelled;
    if shape.counts_unknown && another_task && first_beyond.is_none() {
        let at = data
            .labels
            .iter()
            .position(|&l| !l.is_nan() && !known.contains(&key(l)));
        if let Some(i) = at {
            let names: Vec<String> = classes.iter().map(ToString::to_string).collect();
            bail!(
                "{}:{}: label {}: {unknown_rows} of its {labelled} rows have labels the {} classes of {} \
                 ({}) never saw: the data is for another task or model",
                data_path.display(),
                data.lines.get(i).copied().unwrap_or(i + 1),
                data.labels[i],
                classes.len(),
                model_path.display(),
                names.join(", ")
            );
        }
    }
    if let (Some((beyond, _, distinct)), true) = (first_beyond, another_task) {
        let names: Vec<String> = classes.iter().map(ToString::to_string).collect();
        // The row to blame is the first whose label is none of the model's classes (the label that makes one
        // too many may be a class of the model's, met after a foreign one).
        let i = data
            .labels
            .iter()
            .position(|&l| !l.is_nan() && !known.contains(&key(l)))
            .unwrap_or(beyond);
        let l = data.labels[i];
        let most = if shape.counts_unknown {
            format!(", and {unknown_rows} of its {labelled} rows have labels the model never saw")
        } else {
            String::new()
        };
        bail!(
            "{}:{}:1: label: {l} is none of the {} classes of {} ({}), and the file has {distinct} distinct \
             labels or more{most}: the data is for another task or model",
            data_path.display(),
            data.lines.get(i).copied().unwrap_or(i + 1),
            classes.len(),
            model_path.display(),
            names.join(", ")
        );
    }
    warn_beyond(
        data.x.rows().map(|r| r.indices()),
        shape.n_features,
        data_path,
    );
    Ok(data)
}

/// Counts the feature values of `rows` (their indices) beyond a model's `n_features` in one `warning:` line:
/// the prediction ignores them.
pub(crate) fn warn_beyond<'r>(
    rows: impl Iterator<Item = &'r [u32]>,
    n_features: usize,
    data_path: &Path,
) {
    let (mut beyond, mut count_rows, mut widest) = (0usize, 0usize, 0usize);
    for indices in rows {
        let outside = indices.iter().filter(|&&j| j as usize >= n_features);
        let (count, top) = outside.fold((0, 0), |(c, m), &j| (c + 1, m.max(j as usize + 1)));
        if count > 0 {
            beyond += count;
            count_rows += 1;
            widest = widest.max(top);
        }
    }
    if beyond > 0 {
        note!(
            "warning: {}: {beyond} feature values in {count_rows} rows have indices beyond the model's \
             {n_features} features (up to {widest}) and are ignored",
            data_path.display()
        );
    }
}

/// Reads multilabel data for `model` (not CSV), warning of features beyond the model's as
/// [`read_for_model`] does.
pub(crate) fn read_multilabel_for(
    data_path: &Path,
    model: &StructuredModel,
) -> Result<maxmargin::io::multilabel::MultilabelData> {
    let data = maxmargin::io::multilabel::read(not_csv(data_path, "multilabel")?)?;
    warn_beyond(
        data.x.rows().map(|r| r.indices()),
        model.n_features,
        data_path,
    );
    Ok(data)
}

/// Reads svm_hmm sequences for a model of `n_features` features (not CSV), warning of features beyond
/// them as [`read_for_model`] does (a token is a row).
pub(crate) fn read_sequences_for(
    data_path: &Path,
    n_features: usize,
) -> Result<maxmargin::io::svm_hmm::SequenceData> {
    let data = maxmargin::io::svm_hmm::read(not_csv(data_path, "svm_hmm")?)?;
    let tokens = data.sequences.iter().flatten();
    warn_beyond(tokens.map(|t| t.as_row().indices()), n_features, data_path);
    Ok(data)
}
