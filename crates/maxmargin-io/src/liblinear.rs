//! LIBLINEAR's model files, read and written by their documented text format (not LIBLINEAR's code).
//!
//! Header lines — `solver_type NAME`, `nr_class K`, `label l_1 ... l_K`, `nr_feature d`, `bias B` (`-1` for
//! none) — then a line `w` and one line per feature (and one more for the bias feature when `B ≥ 0`), each
//! with one weight per column: one column for two classes (the decision `⟨w, x⟩ + w_bias·B > 0` means the
//! *first* label), else one per class (the prediction is the class of the largest score), and always one per
//! class for Crammer–Singer (`MCSVM_CS`).

use crate::IoError;
use crate::atomic::write_atomic;
use std::fmt::Write as _;
use std::path::Path;

/// A LIBLINEAR model.
#[derive(Debug, Clone, PartialEq)]
pub struct LiblinearModel {
    /// The solver line (`L2R_L1LOSS_SVC_DUAL`, `MCSVM_CS`, ...).
    pub solver: String,
    /// Class labels in LIBLINEAR's order.
    pub labels: Vec<f64>,
    /// The bias feature's value (`-1` for none).
    pub bias: f64,
    /// Features (without the bias feature).
    pub n_features: usize,
    /// Weight columns per row: 1 for a two-class model (not Crammer–Singer), else the number of classes.
    pub columns: usize,
    /// Row-major: `w[j · columns + m]`, rows `0..n_features`, then the bias row when `bias ≥ 0`.
    pub w: Vec<f64>,
}

/// LIBLINEAR's classifiers (`linear.cpp`'s `solver_type_table`), whose weights this module reads.
const CLASSIFIERS: [&str; 8] = [
    "L2R_LR",
    "L2R_L2LOSS_SVC_DUAL",
    "L2R_L2LOSS_SVC",
    "L2R_L1LOSS_SVC_DUAL",
    "MCSVM_CS",
    "L1R_L2LOSS_SVC",
    "L1R_LR",
    "L2R_LR_DUAL",
];

/// Solvers whose models are not classifiers (regression, one-class): refused.
const NOT_CLASSIFIERS: [&str; 4] = [
    "L2R_L2LOSS_SVR",
    "L2R_L2LOSS_SVR_DUAL",
    "L2R_L1LOSS_SVR_DUAL",
    "ONECLASS_SVM",
];

impl LiblinearModel {
    /// Rows of weights: the features, and the bias feature when there is one.
    pub fn rows(&self) -> usize {
        self.n_features
            .saturating_add(usize::from(self.bias >= 0.0))
    }

    /// The weight of row `j` in column `m`.
    pub fn weight(&self, j: usize, m: usize) -> f64 {
        self.w[j * self.columns + m]
    }

    /// Reads a LIBLINEAR model file.
    ///
    /// # Errors
    /// [`IoError::Parse`] naming the line of a bad header or weight, a missing header, a regression or
    /// one-class model, or a weight count that does not fit the header; [`IoError::Io`].
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let dir = tempfile::tempdir()?;
    /// let p = dir.path().join("m.txt");
    /// std::fs::write(&p, "solver_type L2R_L1LOSS_SVC_DUAL\nnr_class 2\nlabel 1 -1\nnr_feature 2\nbias -1\nw\n0.5 \n-1 \n")?;
    /// let m = maxmargin_io::liblinear::LiblinearModel::read(&p)?;
    /// assert_eq!((m.labels.as_slice(), m.columns, m.w.as_slice()), (&[1.0, -1.0][..], 1, &[0.5, -1.0][..]));
    /// # Ok(()) }
    /// ```
    pub fn read(path: &Path) -> Result<Self, IoError> {
        let reader = crate::open_maybe_gz(path)?;
        let mut lines = crate::lines::Lines::new(reader, path);
        let bad = |line: usize, field: &'static str, message: String| IoError::Parse {
            path: path.to_path_buf(),
            line,
            column: 1,
            field,
            message,
        };
        let (mut solver, mut labels, mut bias, mut n_features, mut n_class) =
            (None, None, None, None, None::<usize>);
        let mut at_w = 0;
        // The line each header field came from, for errors found once the header is complete.
        let (mut solver_at, mut label_at, mut features_at) = (1, 1, 1);
        let mut seen: Vec<(String, usize)> = Vec::new();
        while let Some((no, line)) = lines.next_line()? {
            let mut parts = line.split_whitespace();
            let Some(key) = parts.next() else { continue };
            fn value(v: Option<&str>, bad: impl Fn() -> IoError) -> Result<&str, IoError> {
                v.ok_or_else(bad)
            }
            let none = || bad(no, "header", format!("{key} has no value"));
            if let Some(&(_, first)) = seen.iter().find(|(k, _)| k == key) {
                let why = format!(
                    "{key} is given twice (first on line {first}): which one holds is unknown"
                );
                return Err(bad(no, "header", why));
            }
            seen.push((key.to_string(), no));
            match key {
                "solver_type" => {
                    solver = Some(value(parts.next(), none)?.to_string());
                    solver_at = no;
                }
                "nr_class" => {
                    n_class = Some(value(parts.next(), none)?.parse().map_err(|_| {
                        bad(no, "nr_class", "not a whole number of 0 or more".into())
                    })?);
                }
                "label" => {
                    label_at = no;
                    labels = Some(
                        parts
                            .map(|v| {
                                v.parse::<f64>().map_err(|_| {
                                    bad(
                                        no,
                                        "label",
                                        format!("{} is not a number", crate::libsvm::quote(v)),
                                    )
                                })
                            })
                            .collect::<Result<Vec<f64>, _>>()?,
                    );
                    let all = labels.as_deref().unwrap_or_default();
                    if let Some(l) = all.iter().find(|l| !l.is_finite()) {
                        return Err(bad(no, "label", format!("{l} is not a finite label")));
                    }
                    if let Some((k, l)) =
                        all.iter().enumerate().find(|&(k, l)| all[..k].contains(l))
                    {
                        return Err(bad(
                            no,
                            "label",
                            format!(
                                "label {l} is given twice (item {} of the list repeats one before it)",
                                k + 1
                            ),
                        ));
                    }
                }
                "nr_feature" => {
                    features_at = no;
                    n_features = Some(value(parts.next(), none)?.parse().map_err(|_| {
                        bad(no, "nr_feature", "not a whole number of 0 or more".into())
                    })?);
                }
                "bias" => {
                    bias = Some(
                        value(parts.next(), none)?
                            .parse::<f64>()
                            .map_err(|_| bad(no, "bias", "not a number".into()))?,
                    );
                    if bias.is_some_and(|b: f64| !b.is_finite()) {
                        let why = "must be finite (below 0: no bias feature)";
                        return Err(bad(no, "bias", format!("{} {why}", line.trim())));
                    }
                }
                "rho" => {
                    return Err(bad(
                        no,
                        "rho",
                        "a one-class model is not a classifier".into(),
                    ));
                }
                "w" => {
                    at_w = no;
                    break;
                }
                "svm_type" => {
                    return Err(bad(
                        no,
                        "header",
                        "svm_type opens a LIBSVM model, which maxmargin does not read (LIBLINEAR models \
                         only); train a kernel SVM with `maxmargin train --kernel` instead"
                            .into(),
                    ));
                }
                other => {
                    return Err(bad(
                        no,
                        "header",
                        format!(
                            "{} is not a LIBLINEAR model header",
                            crate::libsvm::quote(other)
                        ),
                    ));
                }
            }
        }
        let missing = |what: &str| bad(at_w.max(1), "header", format!("no {what} line before w"));
        let solver = solver.ok_or_else(|| missing("solver_type"))?;
        // What the solver is decides first: a regression model has no label line to miss.
        if !CLASSIFIERS.contains(&solver.as_str()) && !NOT_CLASSIFIERS.contains(&solver.as_str()) {
            return Err(bad(
                solver_at,
                "solver_type",
                format!(
                    "{} is not a LIBLINEAR solver (its classifiers: {})",
                    crate::libsvm::quote(&solver),
                    CLASSIFIERS.join(", ")
                ),
            ));
        }
        if NOT_CLASSIFIERS.contains(&solver.as_str()) {
            return Err(bad(
                solver_at,
                "solver_type",
                format!("{solver} is a regression or one-class model, not a classifier"),
            ));
        }
        let n_class = n_class.ok_or_else(|| missing("nr_class"))?;
        let labels = labels.ok_or_else(|| missing("label"))?;
        let n_features = n_features.ok_or_else(|| missing("nr_feature"))?;
        let bias = bias.ok_or_else(|| missing("bias"))?;
        if at_w == 0 {
            return Err(missing("w"));
        }
        if labels.len() != n_class || n_class < 2 {
            return Err(bad(
                label_at,
                "label",
                format!(
                    "{} labels for nr_class {n_class} (a classifier has at least 2)",
                    labels.len()
                ),
            ));
        }
        if n_features == usize::MAX {
            return Err(bad(
                features_at,
                "nr_feature",
                format!("{n_features} is more features than a model can hold"),
            ));
        }
        let columns = if n_class == 2 && solver != "MCSVM_CS" {
            1
        } else {
            n_class
        };
        // The weights are read as they come; the header's sizes are checked against them, never trusted to
        // allocate.
        let mut w = Vec::new();
        let mut rows = 0usize;
        while let Some((no, line)) = lines.next_line()? {
            let before = w.len();
            for v in line.split_whitespace() {
                let x = v.parse::<f64>().map_err(|_| {
                    bad(
                        no,
                        "weight",
                        format!("{} is not a number", crate::libsvm::quote(v)),
                    )
                })?;
                if !x.is_finite() {
                    return Err(bad(no, "weight", format!("{x} is not a finite number")));
                }
                w.push(x);
            }
            match w.len() - before {
                0 => continue,
                k if k == columns => rows += 1,
                k => {
                    return Err(bad(
                        no,
                        "weight",
                        format!("{k} weights on the line, expected {columns}"),
                    ));
                }
            }
        }
        let model = Self {
            solver,
            labels,
            bias,
            n_features,
            columns,
            w,
        };
        if rows != model.rows() || !model.w.iter().all(|v| v.is_finite()) {
            return Err(bad(
                at_w,
                "w",
                format!(
                    "{rows} weight rows, expected {} (nr_feature {n_features}{}), all finite",
                    model.rows(),
                    if bias >= 0.0 { " and the bias" } else { "" }
                ),
            ));
        }
        Ok(model)
    }

    /// Writes the model in LIBLINEAR's format (17 significant digits, so weights read back exactly),
    /// atomically.
    ///
    /// # Errors
    /// [`IoError::Io`] naming the file.
    pub fn write(&self, path: &Path) -> Result<(), IoError> {
        let mut text = String::new();
        let labels: Vec<String> = self.labels.iter().map(ToString::to_string).collect();
        let _ = write!(
            text,
            "solver_type {}\nnr_class {}\nlabel {}\nnr_feature {}\nbias {}\nw\n",
            self.solver,
            self.labels.len(),
            labels.join(" "),
            self.n_features,
            self.bias
        );
        for row in self.w.chunks(self.columns.max(1)) {
            for v in row {
                // Shortest representation that reads back to the same f64.
                let _ = write!(text, "{v:?} ");
            }
            text.push('\n');
        }
        write_atomic(path, |f| std::io::Write::write_all(f, text.as_bytes()))
    }
}
