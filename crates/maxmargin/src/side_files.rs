//! Files a command reads beside its data: per-row weights (`train --sample-weights`), per-row group names
//! (`eval --groups`) and training traces (`plot`). Each is read by the bounded line reader every data file
//! uses, so a line longer than the limit, invalid UTF-8, or more lines than the data has rows is an error
//! naming the file and line, after reading no more than the data justifies.

use maxmargin_io::{IoError, Lines, open_maybe_gz};
use maxmargin_optim::TraceRecord;
use std::path::Path;

fn parse_error(path: &Path, line: usize, field: &'static str, message: String) -> IoError {
    IoError::Parse {
        path: path.to_path_buf(),
        line,
        column: 1,
        field,
        message,
    }
}

fn count_error(path: &Path, what: &str, found: usize, rows: usize, data: &Path) -> IoError {
    IoError::Mismatch {
        path: path.to_path_buf(),
        message: format!(
            "{found} {what} for the {rows} rows of {} (one per row)",
            data.display()
        ),
    }
}

/// One value per line of `path`, exactly `rows` of them, each parsed by `parse`.
fn per_row<T>(
    path: &Path,
    rows: usize,
    data: &Path,
    what: &str,
    mut parse: impl FnMut(&str, usize) -> Result<T, IoError>,
) -> Result<Vec<T>, IoError> {
    let mut lines = Lines::new(open_maybe_gz(path)?, path);
    let mut out = Vec::with_capacity(rows.min(1 << 24));
    // Blank lines at the end of the file are an editor's, not rows: a run of them (its first line and
    // length) is held back until a line with text follows it, and then its lines are rows like any other.
    let mut blanks = (0, 0);
    while let Some((no, line)) = lines.next_line()? {
        let text = line.trim();
        if text.is_empty() {
            blanks = (if blanks.1 == 0 { no } else { blanks.0 }, blanks.1 + 1);
            continue;
        }
        let held = (blanks.0..blanks.0 + blanks.1).map(|b| (b, ""));
        blanks = (0, 0);
        for (no, text) in held.chain([(no, text)]) {
            if out.len() == rows {
                return Err(IoError::Mismatch {
                    path: path.to_path_buf(),
                    message: format!(
                        "more {what} than the {rows} rows of {} (line {no})",
                        data.display()
                    ),
                });
            }
            out.push(parse(text, no)?);
        }
    }
    if out.len() != rows {
        return Err(count_error(path, what, out.len(), rows, data));
    }
    Ok(out)
}

/// Reads `--sample-weights FILE`: one finite non-negative number per line, one per row of `data`; blank
/// lines at the end of the file are not rows.
///
/// # Errors
/// [`IoError::Parse`] naming the line of a value that is not such a number; [`IoError::Mismatch`] for
/// another count than `rows`.
///
/// # Examples
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let p = dir.path().join("w.txt");
/// std::fs::write(&p, "1\n0.5\n")?;
/// let w = maxmargin::side_files::read_weights(&p, 2, "d.svm".as_ref())?;
/// assert_eq!(w, [1.0, 0.5]);
/// assert!(maxmargin::side_files::read_weights(&p, 3, "d.svm".as_ref()).is_err());
/// # Ok(()) }
/// ```
pub fn read_weights(path: &Path, rows: usize, data: &Path) -> Result<Vec<f64>, IoError> {
    per_row(path, rows, data, "weights", |text, line| {
        let w: f64 = text.parse().map_err(|_| {
            let shown: String = text.chars().take(40).collect();
            parse_error(path, line, "weight", format!("{shown:?} is not a number"))
        })?;
        if !(w.is_finite() && w >= 0.0) {
            return Err(parse_error(
                path,
                line,
                "weight",
                format!("{w} must be finite and >= 0"),
            ));
        }
        Ok(w)
    })
}

/// Reads `--groups FILE`: one non-empty group name per line, one per row of `data`; blank lines at the
/// end of the file are not rows (as in [`read_weights`]).
///
/// # Errors
/// [`IoError::Parse`] naming the line of an empty name; [`IoError::Mismatch`] for another count than
/// `rows`.
///
/// # Examples
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let p = dir.path().join("groups.txt");
/// std::fs::write(&p, "north\nsouth\n\n\n")?;
/// let g = maxmargin::side_files::read_group_names(&p, 2, "d.svm".as_ref())?;
/// assert_eq!(g, ["north", "south"]);
/// // A blank line between names is a row with an empty name, refused by its line.
/// std::fs::write(&p, "north\n\nsouth\n")?;
/// let e = maxmargin::side_files::read_group_names(&p, 3, "d.svm".as_ref()).unwrap_err();
/// assert!(e.to_string().contains(":2"), "{e}");
/// # Ok(()) }
/// ```
pub fn read_group_names(path: &Path, rows: usize, data: &Path) -> Result<Vec<String>, IoError> {
    per_row(path, rows, data, "group names", |text, line| {
        if text.is_empty() {
            return Err(parse_error(
                path,
                line,
                "group",
                "an empty group name".into(),
            ));
        }
        Ok(text.to_string())
    })
}

/// A `train --trace` file: its evaluations and what its summary line says.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceFile {
    /// Every evaluation, in order.
    pub records: Vec<TraceRecord>,
    /// The relative gap the run headed for, when the summary has it.
    pub tolerance: Option<f64>,
    /// What ran (`dcd on 270 examples x 13 features`), when the summary has it.
    pub run: Option<String>,
    /// The 1-based line of each record (empty for records that were not read from a file).
    pub lines: Vec<usize>,
}

/// Reads a `train --trace` file: one JSON record per evaluation, then a summary line (the one with `stop`).
///
/// # Errors
/// [`IoError::Parse`] naming the line that is not a trace record; [`IoError::Mismatch`] for no records.
pub fn read_trace(path: &Path) -> Result<TraceFile, IoError> {
    let mut trace = TraceFile {
        records: Vec::new(),
        tolerance: None,
        run: None,
        lines: Vec::new(),
    };
    let mut lines = Lines::new(open_maybe_gz(path)?, path);
    while let Some((no, line)) = lines.next_line()? {
        if line.trim().is_empty() {
            continue;
        }
        let value: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| parse_error(path, no, "trace", format!("not a trace line ({e})")))?;
        if value.get("stop").is_some() {
            trace.tolerance = value.get("tolerance").and_then(serde_json::Value::as_f64);
            trace.run = value
                .get("run")
                .and_then(|v| v.as_str().map(str::to_string));
        } else {
            let record = serde_json::from_value(value)
                .map_err(|e| parse_error(path, no, "trace", format!("not a trace record ({e})")))?;
            trace.records.push(record);
            trace.lines.push(no);
        }
    }
    if trace.records.is_empty() {
        return Err(IoError::Mismatch {
            path: path.to_path_buf(),
            message: "no trace records (write one with train --trace FILE)".into(),
        });
    }
    Ok(trace)
}
