//! From a binary model's margins to decisions: a calibration fitted on development rows (so a score becomes
//! a probability) and a cut-off chosen on them (by cost, review capacity or recall), kept with the model in
//! one file of kind [`DECISION_KIND`]. A margin is not a confidence: probabilities come only from a
//! calibration, fitted on rows the model was not trained on.

use super::*;
use maxmargin_core::calibration::{Isotonic, Platt, brier_and_log_loss};

/// The kind of a model file with a calibration or a threshold.
pub const DECISION_KIND: &str = "binary-decision";

/// How scores map to probabilities.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CalibrationMap {
    /// Platt's sigmoid (Lin, Lin and Weng's Newton method, smoothed targets).
    Platt(Platt),
    /// A monotone step map (pool-adjacent-violators).
    Isotonic(Isotonic),
}

/// A calibration and what it was fitted on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// The map.
    pub map: CalibrationMap,
    /// Development rows it was fitted on.
    pub rows: usize,
    /// The development file.
    pub source: String,
}

/// How the cut-off was chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Threshold {
    /// Rows count positive when their score is above this.
    pub score: f64,
    /// The rule: `cost fn=A fp=B`, `max flag rate R` or `min recall R`.
    pub rule: String,
    /// Development rows it was chosen on.
    pub rows: usize,
    /// The development file.
    pub source: String,
}

/// A binary model with what turns its scores into decisions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecisionModel {
    /// The trained model.
    pub model: LinearModel,
    /// Scores to probabilities, when calibrated.
    pub calibration: Option<Calibration>,
    /// The cut-off, when one was chosen (else `score > 0`).
    pub threshold: Option<Threshold>,
}

/// How `calibrate` maps scores to probabilities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CalibrationMethod {
    /// Platt's sigmoid.
    #[default]
    Platt,
    /// Isotonic regression.
    Isotonic,
}

/// The rule a threshold is chosen by, on development rows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ThresholdRule {
    /// The least expected cost, a missed positive costing `false_negative` and a false alarm `false_positive`.
    Cost {
        /// Cost of a missed positive.
        false_negative: f64,
        /// Cost of a false alarm.
        false_positive: f64,
    },
    /// Flag at most this fraction of the rows (review capacity), as many as allowed.
    MaxFlagRate(f64),
    /// The highest cut-off that still catches at least this fraction of the positives.
    MinRecall(f64),
    /// A cut-off set by hand on the score: rows scoring above it are flagged.
    AtScore(f64),
    /// A cut-off set by hand on the calibrated probability: rows whose probability is at least this are
    /// flagged (the model must be calibrated).
    AtProbability(f64),
}

impl CalibrationMap {
    /// The score cut-off `s` such that a row is flagged (`score > s`) exactly when its probability is at
    /// least `p` (both maps are monotone): `f64::MIN` when every score reaches `p`, `f64::MAX` when none does.
    pub fn score_at(&self, p: f64) -> f64 {
        match self {
            Self::Platt(m) => {
                // P(s) = 1 / (1 + exp(a s + b)), increasing in s when a < 0.
                let s = ((1.0 / p - 1.0).ln() - m.b) / m.a;
                if s.is_finite() {
                    // Flag where P(score) ≥ p: the largest score below the crossing.
                    s.next_down()
                } else if (m.a < 0.0) == (s > 0.0) {
                    f64::MAX
                } else {
                    f64::MIN
                }
            }
            Self::Isotonic(m) => match m.values.iter().position(|&v| v >= p) {
                // Scores above block k − 1's upper end fall in block k or later.
                Some(0) => f64::MIN,
                Some(k) => m.upper[k - 1],
                None => f64::MAX,
            },
        }
    }

    /// The probability of a score.
    pub fn probability(&self, score: f64) -> f64 {
        match self {
            Self::Platt(m) => m.probability(score),
            Self::Isotonic(m) => m.probability(score),
        }
    }
}

/// What the chosen cut-off does on the development rows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AtThreshold {
    /// The cut-off.
    pub threshold: f64,
    /// Precision there (`None` when nothing is flagged).
    pub precision: Option<f64>,
    /// Recall there.
    pub recall: Option<f64>,
    /// The fraction of rows flagged.
    pub flag_rate: f64,
}

impl DecisionModel {
    /// A binary model with no calibration and the cut-off at 0.
    pub fn new(model: LinearModel) -> Self {
        Self {
            model,
            calibration: None,
            threshold: None,
        }
    }

    /// A binary model or a decision model, whichever the file holds.
    ///
    /// # Errors
    /// [`Error::Io`] for a missing, foreign or corrupt file.
    pub fn load(path: &Path) -> Result<Self, Error> {
        if model_file::read_header(path)?.kind == MODEL_KIND {
            return Ok(Self::new(LinearModel::load(path)?));
        }
        let version = model_file::read_header(path)?.format_version;
        let m: Self = if version < 4 {
            let (_, old): (_, crate::compat::DecisionModelV3) =
                model_file::load(path, DECISION_KIND)?;
            old.into()
        } else if version < 5 {
            let (_, old): (_, crate::compat::DecisionModelV4) =
                model_file::load(path, DECISION_KIND)?;
            old.into()
        } else if version < 6 {
            let (_, old): (_, crate::compat::DecisionModelV5) =
                model_file::load(path, DECISION_KIND)?;
            old.into()
        } else {
            model_file::load(path, DECISION_KIND)?.1
        };
        m.validated(path)
    }

    /// A model decoded by other means than [`DecisionModel::load`] (a Python pickle), checked as `load`
    /// checks it.
    ///
    /// # Errors
    /// [`Error::Io`] ([`IoError::BadModel`]) naming `source` and the field.
    pub fn validated(self, source: &Path) -> Result<Self, Error> {
        self.check_consistent(source)?;
        Ok(self)
    }

    /// Writes the model with its calibration and threshold, atomically.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        self.check_consistent(path)?;
        Ok(model_file::save(path, DECISION_KIND, self)?)
    }

    /// What [`DecisionModel::load`] and [`DecisionModel::save`] check: the model's own consistency, a
    /// finite threshold, a map that a calibration can make.
    fn check_consistent(&self, path: &Path) -> Result<(), Error> {
        let bad = |message: &str| -> Error {
            IoError::BadModel {
                path: path.to_path_buf(),
                message: message.into(),
            }
            .into()
        };
        self.model.check_consistent(path)?;
        if self
            .threshold
            .as_ref()
            .is_some_and(|t| !t.score.is_finite())
        {
            return Err(bad("the threshold must be finite"));
        }
        match self.calibration.as_ref().map(|c| &c.map) {
            Some(CalibrationMap::Platt(p)) if !(p.a.is_finite() && p.b.is_finite()) => {
                return Err(bad("the Platt map's slope and offset must be finite"));
            }
            Some(CalibrationMap::Isotonic(i)) if !i.is_valid() => {
                return Err(bad(
                    "the isotonic map needs increasing scores and non-decreasing probabilities in [0, 1], \
                     as many of each",
                ));
            }
            _ => {}
        }
        Ok(())
    }

    /// Fits a calibration on development rows (never the training rows: their margins are optimistic).
    ///
    /// # Errors
    /// [`Error::Io`] for data without the model's two labels or with no rows.
    pub fn calibrate(
        mut self,
        dev: &LabeledData,
        method: CalibrationMethod,
    ) -> Result<Self, Error> {
        let (scores, positive) = self.scored(dev)?;
        let map = match method {
            CalibrationMethod::Platt => Platt::fit(&scores, &positive).map(CalibrationMap::Platt),
            CalibrationMethod::Isotonic => {
                Isotonic::fit(&scores, &positive).map(CalibrationMap::Isotonic)
            }
        };
        let map = map.ok_or_else(|| IoError::Empty {
            path: dev.source.clone(),
        })?;
        // A cut-off set at a probability follows the new map (the other rules chose a score on their own
        // rows, which the calibration does not change); a map that does not increase with the score has no
        // such cut-off, and the threshold is dropped (see `threshold_at_probability`).
        if let Some(p) = self.threshold_at_probability() {
            match &map {
                CalibrationMap::Platt(m) if m.a >= 0.0 => self.threshold = None,
                _ => {
                    if let Some(t) = &mut self.threshold {
                        t.score = map.score_at(p);
                    }
                }
            }
        }
        self.calibration = Some(Calibration {
            map,
            rows: scores.len(),
            source: dev.source.display().to_string(),
        });
        Ok(self)
    }

    /// The probability the threshold was set at (`threshold --at P`), when it was:
    /// [`DecisionModel::calibrate`] moves such a cut-off to the new map's score for `P`, or drops it where the
    /// map cannot place it.
    pub fn threshold_at_probability(&self) -> Option<f64> {
        let rule = &self.threshold.as_ref()?.rule;
        rule.strip_prefix("at probability ")?.parse().ok()
    }

    /// Chooses the cut-off on development rows by `rule`, and says what it does there.
    ///
    /// # Errors
    /// [`Error::Optim`] for a rule out of range, [`Error::Io`] for unusable data.
    pub fn choose_threshold(
        mut self,
        dev: &LabeledData,
        rule: ThresholdRule,
    ) -> Result<(Self, AtThreshold), Error> {
        let bad = |value: f64, reason: &'static str| -> Error {
            OptimError::InvalidParam {
                name: "threshold rule",
                value: value.to_string(),
                reason,
            }
            .into()
        };
        match rule {
            ThresholdRule::Cost {
                false_negative,
                false_positive,
            } => {
                for c in [false_negative, false_positive] {
                    if !(c.is_finite() && c >= 0.0) {
                        return Err(bad(c, "costs must be finite and >= 0"));
                    }
                }
            }
            ThresholdRule::MaxFlagRate(r)
            | ThresholdRule::MinRecall(r)
            | ThresholdRule::AtProbability(r) => {
                if !(0.0..=1.0).contains(&r) {
                    return Err(bad(r, "must be a fraction in [0, 1]"));
                }
            }
            ThresholdRule::AtScore(s) => {
                if !s.is_finite() {
                    return Err(bad(s, "a score cut-off must be finite"));
                }
            }
        }
        let by_hand = match (rule, &self.calibration) {
            (ThresholdRule::AtScore(s), _) => Some(s),
            (ThresholdRule::AtProbability(p), Some(c)) => {
                if matches!(&c.map, CalibrationMap::Platt(m) if m.a >= 0.0) {
                    return Err(bad(
                        p,
                        "cannot be a score cut-off: this model's Platt map does not increase with the score",
                    ));
                }
                Some(c.map.score_at(p))
            }
            (ThresholdRule::AtProbability(p), None) if self.model.is_probabilistic() => {
                // A logistic model's own probability σ(s) reaches p from s = log(p / (1 − p)) on.
                let s = (p / (1.0 - p)).ln();
                Some(if s == f64::NEG_INFINITY {
                    f64::MIN
                } else if s == f64::INFINITY {
                    f64::MAX
                } else {
                    s.next_down()
                })
            }
            (ThresholdRule::AtProbability(p), None) => {
                return Err(bad(
                    p,
                    "--at P needs a calibrated model (run maxmargin calibrate first), or set the cut-off \
                     on the score with --at-score",
                ));
            }
            _ => None,
        };
        let (scores, positive) = self.scored(dev)?;
        let n = scores.len();
        let n_pos = positive.iter().filter(|&&p| p).count();
        // Candidate cut-offs: flag the top k rows for every k, cutting between distinct scores.
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
        // (k flagged, true positives among them, the cut-off that flags exactly them)
        let mut candidates = vec![(0usize, 0usize, scores[order[0]])];
        let (mut k, mut tp) = (0, 0);
        while k < n {
            let s = scores[order[k]];
            while k < n && scores[order[k]] == s {
                tp += usize::from(positive[order[k]]);
                k += 1;
            }
            let cut = if k < n {
                0.5 * (s + scores[order[k]])
            } else {
                s - 1.0f64.max(s.abs()) * 1e-9 - f64::MIN_POSITIVE
            };
            candidates.push((k, tp, cut));
        }
        let pick = match rule {
            ThresholdRule::Cost {
                false_negative,
                false_positive,
            } => candidates
                .iter()
                .min_by(|a, b| {
                    let cost = |c: &(usize, usize, f64)| {
                        false_negative * (n_pos - c.1) as f64 + false_positive * (c.0 - c.1) as f64
                    };
                    cost(a).total_cmp(&cost(b))
                })
                .copied(),
            ThresholdRule::MaxFlagRate(r) => candidates
                .iter()
                .rfind(|c| c.0 as f64 <= r * n as f64 + 1e-9)
                .copied(),
            ThresholdRule::MinRecall(r) => candidates
                .iter()
                .find(|c| c.1 as f64 >= r * n_pos as f64 - 1e-9)
                .copied(),
            ThresholdRule::AtScore(_) | ThresholdRule::AtProbability(_) => None,
        };
        let (flagged, tp, cut) = match by_hand {
            Some(cut) => {
                let flags = || (0..n).filter(|&i| scores[i] > cut);
                (
                    flags().count(),
                    flags().filter(|&i| positive[i]).count(),
                    cut,
                )
            }
            None => pick.unwrap_or(candidates[0]),
        };
        let rule_text = match rule {
            ThresholdRule::Cost {
                false_negative,
                false_positive,
            } => format!("cost fn={false_negative} fp={false_positive}"),
            ThresholdRule::MaxFlagRate(r) => format!("max flag rate {r}"),
            ThresholdRule::MinRecall(r) => format!("min recall {r}"),
            ThresholdRule::AtScore(s) => format!("at score {s}"),
            ThresholdRule::AtProbability(p) => format!("at probability {p}"),
        };
        self.threshold = Some(Threshold {
            score: cut,
            rule: rule_text,
            rows: n,
            source: dev.source.display().to_string(),
        });
        let d = maxmargin_core::metrics::Decisions::from_counts(tp, flagged - tp, n_pos - tp);
        Ok((
            self,
            AtThreshold {
                threshold: cut,
                precision: d.precision,
                recall: d.recall,
                flag_rate: flagged as f64 / n as f64,
            },
        ))
    }

    /// The cut-off decisions use: the chosen one, else 0.
    pub fn cut(&self) -> f64 {
        self.threshold.as_ref().map_or(0.0, |t| t.score)
    }

    /// The label of score `f` at the model's cut-off: the positive one above it.
    pub fn label_at(&self, f: f64) -> f64 {
        let [neg, pos] = self.model.labels;
        if f > self.cut() { pos } else { neg }
    }

    /// The predicted labels, at the model's cut-off.
    pub fn predict_rows(&self, x: &SparseRows) -> Vec<f64> {
        self.model
            .decision_rows(x)
            .into_iter()
            .map(|f| self.label_at(f))
            .collect()
    }

    /// The probability of the positive label at score `s`: the calibration's when there is one, else a
    /// logistic model's own `σ(s)`; `None` for an uncalibrated margin model.
    pub fn probability_at(&self, s: f64) -> Option<f64> {
        match &self.calibration {
            Some(c) => Some(c.map.probability(s)),
            None if self.model.is_probabilistic() => Some(maxmargin_core::hinge::sigmoid(s)),
            None => None,
        }
    }

    /// Whether [`DecisionModel::probabilities`] applies: a calibrated model, or a logistic one.
    pub fn has_probabilities(&self) -> bool {
        self.calibration.is_some() || self.model.is_probabilistic()
    }

    /// `P(positive label | x)` for every row: calibrated, or a logistic model's own.
    ///
    /// # Errors
    /// [`Error::Optim`] for an uncalibrated margin model: a margin is not a probability.
    pub fn probabilities(&self, x: &SparseRows) -> Result<Vec<f64>, Error> {
        if !self.has_probabilities() {
            return Err(OptimError::InvalidParam {
                name: "probability",
                value: "an uncalibrated model".into(),
                reason: "needs a calibrated model: a margin is not a confidence; fit one on development rows \
                         with `maxmargin calibrate MODEL DEV_DATA -o MODEL2` (or train logistic regression, \
                         --loss logistic, whose scores are log-odds)",
            }
            .into());
        }
        Ok(self
            .model
            .decision_rows(x)
            .into_iter()
            .filter_map(|f| self.probability_at(f))
            .collect())
    }

    /// [`LinearModel::evaluate_at`] the model's cut-off, with the Brier score and log loss when the model
    /// has probabilities (calibrated, or logistic).
    ///
    /// # Errors
    /// As [`LinearModel::evaluate`].
    pub fn evaluate(&self, data: &LabeledData, lambda: Option<f64>) -> Result<Evaluation, Error> {
        let mut e = self.model.evaluate_at(data, lambda, self.cut())?;
        if self.has_probabilities() {
            let p = self.probabilities(&data.x)?;
            let y = self.model.label_map().targets(data)?;
            let positive: Vec<bool> = y.iter().map(|&v| v > 0.0).collect();
            if let Some((brier, log)) = brier_and_log_loss(&p, &positive) {
                e.brier = Some(brier);
                e.log_loss = Some(log);
            }
        }
        Ok(e)
    }

    fn scored(&self, dev: &LabeledData) -> Result<(Vec<f64>, Vec<bool>), Error> {
        if dev.n_samples() == 0 {
            return Err(IoError::Empty {
                path: dev.source.clone(),
            }
            .into());
        }
        let y = self.model.label_map().targets(dev)?;
        let scores = self.model.decision_rows(&dev.x);
        // A cut-off among scores or a calibration map needs every score finite (one NaN row stalled the
        // cut-offs and turned Platt's map into 0.5 everywhere).
        crate::limits::check_scores(dev, scores.chunks(1), DEV_NEEDS)?;
        let positive: Vec<bool> = y.iter().map(|&v| v > 0.0).collect();
        for (class, label) in [(false, self.model.labels[0]), (true, self.model.labels[1])] {
            if !positive.contains(&class) {
                return Err(missing_class(dev, label, "both classes"));
            }
        }
        Ok((scores, positive))
    }
}

/// How a non-finite score on development rows is refused.
const DEV_NEEDS: &str = "development rows need finite scores";

/// The error for development rows that have no row of class `label` (a map or a cut-off fitted without one
/// class says nothing about it).
pub(crate) fn missing_class(dev: &LabeledData, label: f64, needs: &str) -> Error {
    IoError::Mismatch {
        path: dev.source.clone(),
        message: format!(
            "no row of class {label}: calibration and thresholds need development rows of {needs}"
        ),
    }
    .into()
}
