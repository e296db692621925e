//! Memory follows the data: sizes that training would allocate densely are checked against what the data
//! has shown before anything is allocated, so one large index, label or tag in a file is a clear error instead
//! of tens of gigabytes.

use crate::Error;
use maxmargin_optim::OptimError;
use std::path::Path;

/// Features beyond `64 × nnz + 2²⁰` are refused: the weights are dense, and such a width means most indices
/// are unused (one `1000000000:1` would ask for 8 GB per weight vector).
pub fn check_features(source: &Path, n_features: usize, nnz: usize) -> Result<(), Error> {
    check_features_at(n_features, nnz, || source.display().to_string())
}

/// [`check_features`] for rows read from a file, naming the line whose index asks for the width.
pub fn check_data_features<L>(data: &maxmargin_io::libsvm::Dataset<L>) -> Result<(), Error> {
    let n_features = data.x.n_features();
    check_features_at(n_features, data.x.nnz(), || {
        let largest = u32::try_from(n_features.saturating_sub(1)).ok();
        let row = (data.x.rows()).position(|r| r.indices().last().copied() == largest);
        match row.and_then(|r| data.lines.get(r)) {
            Some(line) => format!("line {line} of {}", data.source.display()),
            None => data.source.display().to_string(),
        }
    })
}

/// Refuses rows whose squared norm overflows a 64-bit float (values of about 1e154 and beyond): the dual
/// coordinate steps divide by it and stall at `w = 0`, the others overflow. `x` is `data`'s rows as trained
/// (scaled, when asked: scaling brings such values back, so the advice names it); the error names the line.
///
/// # Errors
/// [`OptimError::InvalidParam`] naming the first such row's line and its largest value.
pub fn check_row_norms<L>(
    data: &maxmargin_io::libsvm::Dataset<L>,
    x: &maxmargin_core::vector::SparseRows,
) -> Result<(), Error> {
    let Some((r, largest)) = first_overflowing(x.rows()) else {
        return Ok(());
    };
    let at = match data.lines.get(r) {
        Some(line) => format!("line {line} of {}", data.source.display()),
        None => format!("row {} of {}", r + 1, data.source.display()),
    };
    Err(overflowing_row(largest, &at))
}

/// [`check_row_norms`] for structured inputs made of parts (a sequence's positions, a graph's nodes), as
/// trained (scaled when asked, with the bias placed): `at(group, part)` names the first whose squared norm
/// overflows (`position 3 of sequence qid:7 of FILE`, `node 2 of the graph on line 5 of FILE`).
///
/// # Errors
/// [`OptimError::InvalidParam`] naming that part and its largest value.
pub(crate) fn check_part_norms<'a, G>(
    groups: impl IntoIterator<Item = G>,
    at: impl FnOnce(usize, usize) -> String,
) -> Result<(), Error>
where
    G: IntoIterator<Item = &'a maxmargin_core::vector::SparseVec>,
{
    match overflowing_part(groups) {
        Some((g, p, largest)) => Err(overflowing_row(largest, &at(g, p))),
        None => Ok(()),
    }
}

/// The first part (group, part, largest `|x|`) whose squared norm overflows, for [`check_part_norms`] and
/// its form over ranks.
pub(crate) fn overflowing_part<'a, G>(
    groups: impl IntoIterator<Item = G>,
) -> Option<(usize, usize, f64)>
where
    G: IntoIterator<Item = &'a maxmargin_core::vector::SparseVec>,
{
    groups.into_iter().enumerate().find_map(|(g, parts)| {
        let (p, largest) = first_overflowing(parts.into_iter().map(|v| v.as_row()))?;
        Some((g, p, largest))
    })
}

/// The first row whose squared norm overflows a 64-bit float, and its largest `|x|`: what every overflow
/// refusal names (rows in memory, the parts of sequences and graphs, a rank's share).
pub(crate) fn first_overflowing<'a>(
    rows: impl IntoIterator<Item = maxmargin_core::vector::SparseRow<'a>>,
) -> Option<(usize, f64)> {
    let (i, row) = (rows.into_iter().enumerate()).find(|(_, r)| !r.norm_sq().is_finite())?;
    Some((i, row.values().iter().fold(0.0f64, |m, v| m.max(v.abs()))))
}

/// What [`check_row_norms`] and [`check_streamed`] say of a row whose squared norm overflows.
pub(crate) fn overflowing_row(largest: f64, at: &str) -> Error {
    OptimError::InvalidParam {
        name: "feature values",
        value: format!("|x| up to {largest:.3e} at {at}"),
        reason: "overflow a 64-bit float when squared and summed over a row (the solvers' steps divide by \
                 that norm, and would stall at w = 0 or turn to NaN): scale the features (--scale maxabs or \
                 minmax)",
    }
    .into()
}

/// The limits of rows streamed from `path` (`--stream`), as [`check_features`] and [`check_row_norms`]
/// check rows in memory, naming the line that breaks them; the norms only when the rows are trained
/// unscaled (`scaled` false), since scaling brings such values back.
///
/// # Errors
/// As [`check_features`] and [`check_row_norms`].
pub fn check_streamed(
    path: &Path,
    summary: &maxmargin_io::stream::Summary,
    scaled: bool,
) -> Result<(), Error> {
    let at = |line: usize| format!("line {line} of {}", path.display());
    check_features_at(summary.n_features, summary.nnz as usize, || {
        at(summary.widest_line)
    })?;
    match summary.overflow {
        Some((line, largest)) if !scaled => Err(overflowing_row(largest, &at(line))),
        _ => Ok(()),
    }
}

fn check_features_at(
    n_features: usize,
    nnz: usize,
    at: impl FnOnce() -> String,
) -> Result<(), Error> {
    let limit = nnz.saturating_mul(64).saturating_add(1 << 20);
    if n_features > limit {
        return Err(OptimError::InvalidParam {
            name: "feature index",
            value: format!("{n_features} features (as the largest index in {} asks)", at()),
            reason: "is far beyond what the data's nonzeros need (dense weights are allocated for at most 64 \
                     features per nonzero plus 1,048,576); renumber the features consecutively (from 1 in \
                     LIBSVM and svm_hmm files, from 0 in graph JSON)",
        }
        .into());
    }
    Ok(())
}

/// A model of `n_labels` classes, labels or tags over `n_features` features holds `n_features × n_labels`
/// dense weights (and its solvers a few such vectors): refused beyond `64 × nnz + 2²⁴` (16.8 million weights,
/// 134 MB a vector), so a small file with many labels and one large index is a clear error, not an
/// allocation of gigabytes (300 labels over feature 1,000,000 asked for 2.4 GB from 5 KB of text).
pub fn check_weights(
    source: &Path,
    n_features: usize,
    n_labels: usize,
    nnz: usize,
) -> Result<(), Error> {
    let weights = n_features.saturating_mul(n_labels);
    let limit = nnz.saturating_mul(64).saturating_add(1 << 24);
    if weights > limit {
        return Err(OptimError::InvalidParam {
            name: "features × labels",
            value: format!(
                "{n_features} × {n_labels} = {weights} weights in {} (about {:.1} GB a weight vector)",
                source.display(),
                weights as f64 * 8.0 / 1e9
            ),
            reason: "is far beyond what the data's nonzeros need (a model keeps a dense weight per feature \
                     and label, allocated for at most 64 per nonzero plus 16,777,216): renumber the features \
                     and labels consecutively where the file skips numbers, else keep fewer features (hash \
                     them into fewer columns, or keep the frequent ones) or fewer labels",
        }
        .into());
    }
    Ok(())
}

/// The Crammer–Singer dual keeps one number per example and class (`n × k`, dense, plus as many for its
/// bounds): refused when that is far beyond what the data's nonzeros need (20,000 classes of 3 rows each
/// asked for 9.6 GB from 1 MB of text), naming the numbers and the solvers that keep no such table.
pub fn check_dual_table(
    source: &Path,
    n_samples: usize,
    n_classes: usize,
    nnz: usize,
) -> Result<(), Error> {
    let cells = n_samples.saturating_mul(n_classes);
    let limit = nnz.saturating_mul(64).saturating_add(1 << 25);
    if cells > limit {
        return Err(OptimError::InvalidParam {
            name: "examples × classes",
            value: format!(
                "{n_samples} × {n_classes} = {cells} in {} (about {:.1} GB of duals)",
                source.display(),
                cells as f64 * 16.0 / 1e9
            ),
            reason: "is far beyond what the data's nonzeros need for the Crammer–Singer dual's dense \
                     table; use --solver bcfw or ssg, whose memory follows the nonzeros",
        }
        .into());
    }
    Ok(())
}

/// An approximated kernel's rows are dense, `K` values each: refused beyond 2³⁰ values (about 13 GB), naming
/// the numbers.
pub fn check_mapped_rows(n_samples: usize, components: usize) -> Result<(), Error> {
    let cells = n_samples.saturating_mul(components);
    if cells > 1 << 30 {
        return Err(OptimError::InvalidParam {
            name: "components",
            value: format!(
                "{components} for {n_samples} rows (about {:.1} GB of mapped rows)",
                cells as f64 * 12.0 / 1e9
            ),
            reason: "make more dense feature values than this build keeps in memory (2^30): give fewer \
                     components, or train on a sample of the rows",
        }
        .into());
    }
    Ok(())
}

/// Classes beyond half the examples (and more than 50) are refused when some label has a fraction, and so
/// are more than 20 classes of fewer than 10 rows each on average when half of them have fractions: the
/// labels look like regression targets. Whole-number labels are classes however many there are (few-shot
/// data of a thousand classes, or a Python caller's class indices): the models' sizes are checked by
/// [`check_weights`] and [`check_dual_table`].
pub fn check_classes(source: &Path, classes: &[f64], n_samples: usize) -> Result<(), Error> {
    let n_classes = classes.len();
    let fractional = classes.iter().filter(|c| c.fract() != 0.0).count();
    // Many classes, most of them with fractions, few rows each (a housing-style target of 211 prices in
    // tenths over 506 rows had trained 211 classes silently).
    let mostly_fractional =
        n_classes > 20 && n_samples < 10 * n_classes && 2 * fractional >= n_classes;
    if mostly_fractional {
        return Err(regression(source, n_classes, n_samples));
    }
    check_class_count(source, classes, n_samples)
}

/// The part of [`check_classes`] that a share of the classes cannot pass when the whole does (a rank's own
/// classes against the whole file's rows): more than 50 classes, beyond half the rows, one with a fraction.
pub fn check_class_count(source: &Path, classes: &[f64], n_samples: usize) -> Result<(), Error> {
    let n_classes = classes.len();
    if n_classes > 50 && n_classes > n_samples / 2 && classes.iter().any(|c| c.fract() != 0.0) {
        return Err(regression(source, n_classes, n_samples));
    }
    Ok(())
}

fn regression(source: &Path, n_classes: usize, n_samples: usize) -> Error {
    OptimError::InvalidParam {
        name: "class labels",
        value: format!("{n_classes} distinct in {n_samples} rows of {}", source.display()),
        reason: "look like regression targets, not classes (they have fractions, and a multiclass model \
                 needs several examples per class); number the classes as whole numbers if they are classes",
    }
    .into()
}

/// A multiclass model needs rows of two classes at least: one class alone trains a model that predicts it
/// everywhere and says "converged" at an objective of 0, as binary training refuses.
pub fn check_two_classes(source: &Path, classes: &[f64]) -> Result<(), Error> {
    match classes {
        [only] => Err(maxmargin_io::IoError::Mismatch {
            path: source.to_path_buf(),
            message: format!(
                "every row is of class {only}: a multiclass model needs rows of at least two classes"
            ),
        }
        .into()),
        _ => Ok(()),
    }
}

/// Labels (multilabel) or tags (chains) numbered beyond `64 × (the distinct ones in `sets`) + 1024` are
/// refused: the model holds weights for every number up to the largest (and chains a `L × L` transition table).
pub fn check_labels(
    source: &Path,
    what: &'static str,
    largest: usize,
    sets: &[Vec<u32>],
) -> Result<(), Error> {
    let value = format!("{largest} (the largest in {})", source.display());
    let reason =
        "is far beyond the number of distinct ones the data uses; renumber them consecutively";
    labels_within(what, (largest, value), reason, sets)
}

/// As [`check_labels`], for a number of labels the caller asked for (`--labels`, `GraphOptions::n_labels`)
/// rather than one the file shows.
pub fn check_labels_asked(
    what: &'static str,
    asked: usize,
    sets: &[Vec<u32>],
) -> Result<(), Error> {
    let reason = "is far beyond the labels the data uses (a model holds weights for every one): give at most \
                  64 per distinct label the data has, plus 1024";
    labels_within(what, (asked, format!("{asked} (asked for)")), reason, sets)
}

fn labels_within(
    what: &'static str,
    (largest, value): (usize, String),
    reason: &'static str,
    sets: &[Vec<u32>],
) -> Result<(), Error> {
    let mut distinct: Vec<u32> = sets.iter().flatten().copied().collect();
    distinct.sort_unstable();
    distinct.dedup();
    let limit = distinct.len().saturating_mul(64).saturating_add(1024);
    if largest > limit {
        return Err(OptimError::InvalidParam {
            name: what,
            value,
            reason,
        }
        .into());
    }
    Ok(())
}

/// Edge features (observation-dependent transitions) hold `L × L` weights each: refused when that is far
/// beyond what their nonzeros need (8 weights per nonzero plus 4,194,304), naming the way to fewer.
pub fn check_edge_weights(
    source: &Path,
    n_edge: usize,
    n_labels: usize,
    nnz: usize,
) -> Result<(), Error> {
    let weights = n_edge.saturating_mul(n_labels.saturating_mul(n_labels));
    let limit = nnz.saturating_mul(8).saturating_add(1 << 22);
    if weights > limit {
        return Err(OptimError::InvalidParam {
            name: "bigram features",
            value: format!(
                "{n_edge} over {n_labels} tags ({weights} weights, from {})",
                source.display()
            ),
            reason: "are far more transition weights than the data's nonzeros need; keep bigram (B) \
                     templates to small vocabularies (POS tags, shapes) or prune with --min-count",
        }
        .into());
    }
    Ok(())
}

/// Second-order transitions hold `L³` weights: refused when that is far beyond what the data's nonzeros
/// need (the same bound as [`check_edge_weights`]).
pub fn check_second_order(source: &Path, n_labels: usize, nnz: usize) -> Result<(), Error> {
    let weights = n_labels.saturating_mul(n_labels.saturating_mul(n_labels));
    let limit = nnz.saturating_mul(8).saturating_add(1 << 22);
    if weights > limit {
        return Err(OptimError::InvalidParam {
            name: "second-order transitions",
            value: format!(
                "over {n_labels} tags ({weights} weights, from {})",
                source.display()
            ),
            reason: "are far more weights than the data's nonzeros need; train first-order chains for \
                     this many tags",
        }
        .into());
    }
    Ok(())
}

/// Checks user-given row weights: every one finite and non-negative, and not all zero.
///
/// # Errors
/// [`Error::Optim`] naming the first bad weight, or saying that all are zero.
pub(crate) fn check_sample_weights(weights: &[f64]) -> Result<(), Error> {
    match weights.iter().find(|v| !(v.is_finite() && **v >= 0.0)) {
        Some(bad) => Err(maxmargin_optim::OptimError::InvalidParam {
            name: "sample weight",
            value: bad.to_string(),
            reason: "must be finite and >= 0",
        }
        .into()),
        None => some_weight_above_zero(weights, "sample weights", "row weights"),
    }
}

/// Refuses weights (`unit`: of rows, or of every class the data has) that are all zero: they leave no loss
/// to minimize, and the model would be w = 0, which would say "converged".
///
/// # Errors
/// [`Error::Optim`] naming `what`.
pub(crate) fn some_weight_above_zero(
    weights: &[f64],
    what: &'static str,
    unit: &str,
) -> Result<(), Error> {
    if !weights.is_empty() && weights.iter().all(|v| *v == 0.0) {
        return Err(maxmargin_optim::OptimError::InvalidParam {
            name: what,
            value: format!("all {} {unit} zero", weights.len()),
            reason: "must give some row a weight above 0 (with none, the model would be w = 0)",
        }
        .into());
    }
    Ok(())
}

/// Refuses the first row of `data` whose scores (one per class, or one for a binary model) are not all
/// finite, naming its file and line: a product of weights and features beyond `f64::MAX` (a model with
/// weights near 1e308, or rows of huge values) makes NaN or ±∞, from which no label, margin or probability
/// can be read, so it is an error rather than a label chosen by how NaN compares. `needs` ends the message
/// with what the scores were for. A binary model's scores are rows of one (`scores.chunks(1)`).
pub fn check_scores<L>(
    data: &maxmargin_io::libsvm::Dataset<L>,
    scores: impl IntoIterator<Item = impl AsRef<[f64]>>,
    needs: &str,
) -> Result<(), Error> {
    for (i, row) in scores.into_iter().enumerate() {
        if let Some(s) = row.as_ref().iter().find(|s| !s.is_finite()) {
            return Err(maxmargin_io::IoError::Parse {
                path: data.source.clone(),
                line: data.lines.get(i).copied().unwrap_or(i + 1),
                column: 1,
                field: "features",
                message: format!(
                    "the model scores this row {s}, not a finite number (its weights times these features \
                     overflow a 64-bit float); {needs}"
                ),
            }
            .into());
        }
    }
    Ok(())
}
