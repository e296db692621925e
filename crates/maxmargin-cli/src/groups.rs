//! `eval --group-by qid` and `eval --groups FILE`: the same measures per group (a site, a month) beside the
//! overall ones, so that a new group is read on its own; groups too small to trust are marked. Also the
//! per-row files of `train --sample-weights`.

use anyhow::{Result, bail};
use maxmargin::io::libsvm::LabeledData;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Fewer rows than this in a group: its measures are marked as unreliable.
pub(crate) const MIN_ROWS: usize = 30;
/// Fewer rows of a class than this in a group: likewise.
pub(crate) const MIN_PER_CLASS: usize = 5;

/// Where the groups come from.
#[derive(Debug, Clone)]
pub(crate) enum Grouping {
    /// The rows' `qid:`.
    Qid,
    /// One group name per row, in a file.
    File(PathBuf),
}

/// What `eval --group-by` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum GroupByArg {
    /// The `qid:` of each row.
    Qid,
}

/// The groups of `data` in order of first appearance: a name and its rows.
pub(crate) fn groups(data: &LabeledData, grouping: &Grouping) -> Result<Vec<(String, Vec<usize>)>> {
    let mut names: Vec<String> = Vec::with_capacity(data.n_samples());
    match grouping {
        Grouping::Qid => {
            for (i, q) in data.qids.iter().enumerate() {
                match q {
                    Some(q) => names.push(q.to_string()),
                    None => bail!(
                        "{}:{}: no qid: --group-by qid needs one on every row",
                        data.source.display(),
                        data.lines.get(i).copied().unwrap_or(i + 1)
                    ),
                }
            }
        }
        Grouping::File(path) => {
            names = maxmargin::side_files::read_group_names(path, data.n_samples(), &data.source)?;
        }
    }
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut out: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let g = *index.entry(name.as_str()).or_insert_with(|| {
            out.push((name.clone(), Vec::new()));
            out.len() - 1
        });
        out[g].1.push(i);
    }
    sort_names(&mut out);
    Ok(out)
}

/// Groups in the order of their names, as a table of them is read (not the order rows happen to come in):
/// by number when every name is one (qids 1, 2, 10), else as text.
fn sort_names(groups: &mut [(String, Vec<usize>)]) {
    let numbers: Option<Vec<f64>> = groups.iter().map(|(n, _)| n.parse::<f64>().ok()).collect();
    match numbers {
        Some(v) if v.iter().all(|x| x.is_finite()) => {
            let mut keyed: Vec<(f64, (String, Vec<usize>))> = v
                .into_iter()
                .zip(groups.iter_mut().map(std::mem::take))
                .collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.0.cmp(&b.1.0)));
            for (slot, (_, g)) in groups.iter_mut().zip(keyed) {
                *slot = g;
            }
        }
        _ => groups.sort_by(|a, b| a.0.cmp(&b.0)),
    }
}

/// Why a group's measures are unreliable, if they are: too few rows, or too few of one class.
pub(crate) fn note(rows: usize, per_class: &[usize]) -> Option<String> {
    if rows < MIN_ROWS {
        Some(format!("fewer than {MIN_ROWS} rows"))
    } else if per_class.iter().any(|&c| c < MIN_PER_CLASS) {
        Some(format!("fewer than {MIN_PER_CLASS} of a class"))
    } else {
        None
    }
}

/// The grouping the flags ask for.
pub(crate) fn from_flags(group_by: Option<GroupByArg>, file: Option<&Path>) -> Option<Grouping> {
    match (group_by, file) {
        (Some(GroupByArg::Qid), _) => Some(Grouping::Qid),
        (None, Some(f)) => Some(Grouping::File(f.to_path_buf())),
        (None, None) => None,
    }
}

/// Reads `--sample-weights FILE`: one finite non-negative number per line, as many as the data has rows.
pub(crate) fn read_sample_weights(path: &Path, rows: usize, data: &Path) -> Result<Vec<f64>> {
    Ok(maxmargin::side_files::read_weights(path, rows, data)?)
}

/// An overall evaluation as JSON with a `groups` key: each group's evaluation with its `group` name and
/// `note` (why it is unreliable, or null).
pub(crate) fn with_groups<T: serde::Serialize>(
    overall: &T,
    rows: &[(String, T, Option<String>)],
) -> Result<serde_json::Value> {
    let mut v = serde_json::to_value(overall)?;
    v["groups"] = rows
        .iter()
        .map(|(name, e, note)| {
            let mut g = serde_json::to_value(e)?;
            g["group"] = serde_json::json!(name);
            g["note"] = serde_json::json!(note);
            Ok(g)
        })
        .collect::<Result<Vec<_>>>()?
        .into();
    Ok(v)
}
