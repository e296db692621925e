//! CSV data with a header row (`--format csv`, or a `.csv` / `.csv.gz` file): one column holds the label
//! (`--label-column NAME`, by default `label`), every other column is a feature named by its header, read
//! by the `csv` crate (quoting, CRLF, gzip as every reader here). The names are kept in the dataset and
//! so in the model; rows given to a model that has names are matched to its features by name, in any
//! column order.
//!
//! Every value must be a finite number (an empty feature cell, `nan` or `inf` is an error naming the file,
//! line and column); zeros are not stored, so the rows are sparse. Rows to predict may leave the label cell
//! empty, write `?`, or have no label column at all. A record (a line, or several when a quoted field holds
//! line breaks) longer than [`crate::libsvm::MAX_LINE_BYTES`] is an error, as in every reader.

use crate::IoError;
use crate::dataset::LabeledData;
use crate::lines::MAX_LINE_BYTES;
use maxmargin_core::vector::SparseRows;
use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

/// The label column read when none is named.
pub const DEFAULT_LABEL_COLUMN: &str = "label";

/// How to read a CSV file.
#[derive(Debug, Clone, Copy, Default)]
pub struct CsvOptions<'a> {
    /// The label column's name ([`DEFAULT_LABEL_COLUMN`] when `None`).
    pub label_column: Option<&'a str>,
    /// Rows may have no label (an empty cell, `?`, or no label column): read as NaN.
    pub unlabelled: bool,
    /// A model's feature names: columns are matched to them by name (a column the model lacks is skipped
    /// and counted in [`CsvRead::skipped`]; a name the file lacks is an error). `None`: every column but the
    /// label is a feature, in file order.
    pub features: Option<&'a [String]>,
}

/// A CSV file read.
#[derive(Debug)]
pub struct CsvRead {
    /// The rows, with their feature names and label column.
    pub data: LabeledData,
    /// Columns skipped because the model has no feature of their name.
    pub skipped: Vec<String>,
}

/// Whether `path` names a CSV file by its extension (`.csv`, `.csv.gz`, or tab-separated `.tsv`, `.tsv.gz`).
pub fn is_csv_name(path: &Path) -> bool {
    let name = path.to_string_lossy().to_ascii_lowercase();
    name.ends_with(".csv") || name.ends_with(".csv.gz") || is_tsv_name(path)
}

/// Whether `path`'s name says tab-separated values (`.tsv`, `.tsv.gz`): such files are split on tabs, others
/// on commas.
pub fn is_tsv_name(path: &Path) -> bool {
    let name = path.to_string_lossy().to_ascii_lowercase();
    name.ends_with(".tsv") || name.ends_with(".tsv.gz")
}

/// Counts the bytes of the current record, failing when one grows past the line limit.
struct Capped<R> {
    inner: R,
    since_newline: usize,
    line: usize,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        for &b in &buf[..n] {
            if b == b'\n' {
                self.since_newline = 0;
                self.line += 1;
            } else {
                self.since_newline += 1;
            }
        }
        if self.since_newline > MAX_LINE_BYTES {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                LineTooLong(self.line + 1),
            ));
        }
        Ok(n)
    }
}

#[derive(Debug)]
struct LineTooLong(usize);

impl std::fmt::Display for LineTooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {} longer than {} MiB",
            self.0,
            MAX_LINE_BYTES >> 20
        )
    }
}

impl std::error::Error for LineTooLong {}

fn parse_error(
    path: &Path,
    line: usize,
    column: usize,
    field: &'static str,
    message: String,
) -> IoError {
    IoError::Parse {
        path: path.to_path_buf(),
        line,
        column,
        field,
        message,
    }
}

/// The error of the `csv` crate as one naming the file and line.
fn csv_error(path: &Path, e: &csv::Error) -> IoError {
    let line = e.position().map_or(1, |p| p.line() as usize);
    match e.kind() {
        csv::ErrorKind::Io(io) => {
            if let Some(long) = io.get_ref().and_then(|i| i.downcast_ref::<LineTooLong>()) {
                return parse_error(
                    path,
                    long.0,
                    1,
                    "line",
                    format!("longer than {} MiB", MAX_LINE_BYTES >> 20),
                );
            }
            IoError::io(path, std::io::Error::new(io.kind(), io.to_string()))
        }
        csv::ErrorKind::Utf8 { pos, err } => parse_error(
            path,
            pos.as_ref().map_or(line, |p| p.line() as usize),
            err.valid_up_to() + 1,
            "text",
            "invalid UTF-8".into(),
        ),
        csv::ErrorKind::UnequalLengths {
            pos,
            expected_len,
            len,
        } => parse_error(
            path,
            pos.as_ref().map_or(line, |p| p.line() as usize),
            1,
            "columns",
            format!("{len} fields where the header has {expected_len}"),
        ),
        _ => parse_error(path, line, 1, "text", e.to_string()),
    }
}

/// Reads a CSV file with a header row (plain or gzip; `-` is standard input).
///
/// # Errors
/// [`IoError::Parse`] naming the line, column and field of the first bad cell, a header without the
/// label column (listing the columns), a repeated column name, a record of another length than the header;
/// [`IoError::Mismatch`] when a model's feature is not a column; [`IoError::Empty`] for no rows.
///
/// # Examples
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use maxmargin_io::csv_file::{read, CsvOptions};
/// let dir = tempfile::tempdir()?;
/// let p = dir.path().join("d.csv");
/// std::fs::write(&p, "age,label,income\n31,1,0\n45,-1,2.5\n")?;
/// let d = read(&p, CsvOptions::default())?.data;
/// assert_eq!(d.feature_names, ["age", "income"]);
/// assert_eq!(d.labels, [1.0, -1.0]);
/// assert_eq!(d.x.row(1).indices(), &[0, 1]);
/// # Ok(()) }
/// ```
pub fn read(path: &Path, options: CsvOptions<'_>) -> Result<CsvRead, IoError> {
    let source = crate::open_maybe_gz(path)?;
    let capped = Capped {
        inner: source,
        since_newline: 0,
        line: 0,
    };
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(if is_tsv_name(path) { b'\t' } else { b',' })
        .has_headers(true)
        .flexible(false)
        .trim(csv::Trim::All)
        .from_reader(capped);
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| csv_error(path, &e))?
        .iter()
        .map(str::to_string)
        .collect();
    if header.iter().all(String::is_empty) {
        return Err(IoError::Empty {
            path: path.to_path_buf(),
        });
    }
    // A quote opened in the header and never closed takes the lines after it into one column name.
    if let Some(c) = header.iter().position(|h| h.contains(['\n', '\r'])) {
        return Err(parse_error(
            path,
            1,
            c + 1,
            "header",
            "a quote opened in column name and not closed before the line ends: the lines after it were \
             read into the name"
                .to_string(),
        ));
    }
    let mut seen = HashMap::new();
    for (c, name) in header.iter().enumerate() {
        if let Some(first) = seen.insert(name.as_str(), c) {
            return Err(parse_error(
                path,
                1,
                c + 1,
                "header",
                format!(
                    "column {name:?} appears twice (columns {} and {})",
                    first + 1,
                    c + 1
                ),
            ));
        }
    }
    let label_name = options.label_column.unwrap_or(DEFAULT_LABEL_COLUMN);
    let label_at = header.iter().position(|h| h == label_name);
    if label_at.is_none() && !options.unlabelled {
        let shown: Vec<&str> = header.iter().take(20).map(String::as_str).collect();
        let more = if header.len() > 20 { ", ..." } else { "" };
        return Err(parse_error(
            path,
            1,
            1,
            "header",
            format!(
                "no column named {label_name:?} (the columns: {}{more}); name the label column with --label-column",
                shown.join(", ")
            ),
        ));
    }
    // Each column's feature index, or None for the label and skipped columns.
    let (slots, names, skipped) = match options.features {
        None => {
            let mut names = Vec::new();
            let slots: Vec<Option<u32>> = (0..header.len())
                .map(|c| {
                    (Some(c) != label_at).then(|| {
                        names.push(header[c].clone());
                        (names.len() - 1) as u32
                    })
                })
                .collect();
            (slots, names, Vec::new())
        }
        Some(model) => {
            let index: HashMap<&str, u32> = model
                .iter()
                .enumerate()
                .map(|(j, n)| (n.as_str(), j as u32))
                .collect();
            // The label column read as a label would leave one of the model's features at 0 unsaid.
            if let Some(at) = label_at
                && index.contains_key(header[at].as_str())
            {
                return Err(IoError::Mismatch {
                    path: path.to_path_buf(),
                    message: format!(
                        "the label column {label_name:?} is a feature of the model; name the column that \
                         holds the labels with --label-column"
                    ),
                });
            }
            if let Some(missing) = model.iter().find(|n| !seen.contains_key(n.as_str())) {
                return Err(IoError::Mismatch {
                    path: path.to_path_buf(),
                    message: format!(
                        "no column {missing:?}, a feature of the model ({} features named in it)",
                        model.len()
                    ),
                });
            }
            let mut skipped = Vec::new();
            let slots = (0..header.len())
                .map(|c| {
                    if Some(c) == label_at {
                        return None;
                    }
                    let j = index.get(header[c].as_str()).copied();
                    if j.is_none() {
                        skipped.push(header[c].clone());
                    }
                    j
                })
                .collect();
            (slots, model.to_vec(), skipped)
        }
    };
    let mut x = SparseRows::new();
    let (mut labels, mut lines) = (Vec::new(), Vec::new());
    let mut record = csv::StringRecord::new();
    let (mut idx, mut val): (Vec<(u32, f64)>, Vec<f64>) = (Vec::new(), Vec::new());
    loop {
        match reader.read_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => return Err(csv_error(path, &e)),
        }
        let line = record
            .position()
            .map_or(labels.len() + 2, |p| p.line() as usize);
        idx.clear();
        val.clear();
        let mut label = f64::NAN;
        for (c, cell) in record.iter().enumerate() {
            if Some(c) == label_at {
                label = if options.unlabelled && (cell.is_empty() || cell == "?") {
                    f64::NAN
                } else {
                    crate::libsvm::parse_real_label(cell).map_err(|m| {
                        parse_error(
                            path,
                            line,
                            c + 1,
                            "label",
                            format!("column {label_name:?}: {m}"),
                        )
                    })?
                };
                continue;
            }
            let Some(j) = slots[c] else { continue };
            let v: f64 = match cell.parse::<f64>() {
                Ok(v) if v.is_finite() => v,
                _ => {
                    let shown: String = cell.chars().take(40).collect();
                    return Err(parse_error(
                        path,
                        line,
                        c + 1,
                        "feature value",
                        format!("column {:?}: {shown:?} is not a finite number", header[c]),
                    ));
                }
            };
            if v != 0.0 {
                idx.push((j, v));
            }
        }
        idx.sort_unstable_by_key(|p| p.0);
        let indices: Vec<u32> = idx.iter().map(|p| p.0).collect();
        val.extend(idx.iter().map(|p| p.1));
        x.push_row(&indices, &val)
            .map_err(|e| parse_error(path, line, 1, "feature", e.to_string()))?;
        labels.push(label);
        lines.push(line);
    }
    if labels.is_empty() {
        return Err(IoError::Empty {
            path: path.to_path_buf(),
        });
    }
    x.set_n_features_at_least(names.len());
    let mut data = LabeledData::new(path.to_path_buf(), x, labels, lines);
    data.feature_names = names;
    data.label_column = Some(label_name.to_string());
    Ok(CsvRead { data, skipped })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> std::io::Result<(tempfile::TempDir, std::path::PathBuf)> {
        let dir = tempfile::tempdir()?;
        let p = dir.path().join("d.csv");
        std::fs::write(&p, text)?;
        Ok((dir, p))
    }

    #[test]
    fn columns_are_matched_to_a_models_names_in_any_order() -> Result<(), Box<dyn std::error::Error>>
    {
        let (_d, p) = write("b,extra,a,label\n2,9,1,1\n0,9,3,\n")?;
        let names = ["a".to_string(), "b".to_string()];
        let r = read(
            &p,
            CsvOptions {
                features: Some(&names),
                unlabelled: true,
                ..Default::default()
            },
        )?;
        assert_eq!(r.skipped, ["extra"]);
        assert_eq!(r.data.x.row(0).indices(), &[0, 1]);
        assert_eq!(r.data.x.row(0).values(), &[1.0, 2.0]);
        assert!(r.data.labels[1].is_nan());
        let missing = ["a".to_string(), "z".to_string()];
        let e = read(
            &p,
            CsvOptions {
                features: Some(&missing),
                unlabelled: true,
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("no column \"z\""), "{e}");
        Ok(())
    }

    #[test]
    fn bad_cells_name_their_line_and_column() -> std::io::Result<()> {
        for (text, want) in [
            (
                "x,label\n1,1\nnan,1\n",
                "d.csv:3:1: feature value: column \"x\"",
            ),
            ("x,label\n1,yes\n", "d.csv:2:2: label"),
            ("x,y\n1,1\n", "d.csv:1:1: header: no column named \"label\""),
            ("x,x,label\n1,1,1\n", "header: column \"x\" appears twice"),
            (
                "x,label\n1,1,3\n",
                "d.csv:2:1: columns: 3 fields where the header has 2",
            ),
            ("x,label\n", "no examples"),
            ("x,label\n,1\n", "feature value"),
        ] {
            let (_d, p) = write(text)?;
            let e = read(&p, CsvOptions::default()).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
        Ok(())
    }
}
