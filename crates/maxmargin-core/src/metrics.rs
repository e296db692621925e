//! Evaluation measures, ranking and decision apart: how well scores order the examples (ROC AUC, average
//! precision: no threshold involved), and how good the decisions taken at a threshold are (precision,
//! recall, F1, confusion counts). Ties in scores are handled exactly (mid-ranks; one step per distinct
//! score), so the values do not depend on the order of tied examples.

use serde::{Deserialize, Serialize};

/// Scores sorted descending with their labels, grouped by distinct score: `(positives, negatives)` per group.
fn groups(scores: &[f64], positive: &[bool]) -> Vec<(usize, usize)> {
    let mut order: Vec<usize> = (0..scores.len().min(positive.len())).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut last = None;
    for i in order {
        if last != Some(scores[i].to_bits()) {
            out.push((0, 0));
            last = Some(scores[i].to_bits());
        }
        if let Some(g) = out.last_mut() {
            if positive[i] {
                g.0 += 1;
            } else {
                g.1 += 1;
            }
        }
    }
    out
}

/// The area under the ROC curve: the probability that a random positive scores above a random negative,
/// ties counting one half (Mann–Whitney). `None` without both classes.
///
/// # Examples
/// ```
/// use maxmargin_core::metrics::roc_auc;
/// // 0.8 is tied between a positive and a negative: that pair counts 1/2.
/// let auc = roc_auc(&[0.9, 0.8, 0.8, 0.3], &[true, false, true, false]).unwrap();
/// assert!((auc - 0.875).abs() < 1e-12);
/// assert_eq!(roc_auc(&[1.0, 2.0], &[true, true]), None);
/// ```
pub fn roc_auc(scores: &[f64], positive: &[bool]) -> Option<f64> {
    let g = groups(scores, positive);
    let (p, n): (usize, usize) = g.iter().fold((0, 0), |(p, n), g| (p + g.0, n + g.1));
    if p == 0 || n == 0 {
        return None;
    }
    // Walking down the scores: each positive beats the negatives below it, and half of its tied ones.
    let (mut wins, mut negatives_below) = (0.0, n as f64);
    for &(gp, gn) in &g {
        negatives_below -= gn as f64;
        wins += gp as f64 * (negatives_below + 0.5 * gn as f64);
    }
    Some(wins / (p as f64 * n as f64))
}

/// Average precision: `Σ (R_k − R_{k−1}) P_k` over the distinct scores from the highest down, a tied group
/// taken at once (as scikit-learn computes it). `None` without positives.
///
/// # Examples
/// ```
/// use maxmargin_core::metrics::average_precision;
/// let ap = average_precision(&[0.9, 0.8, 0.8, 0.3], &[true, false, true, false]).unwrap();
/// assert!((ap - (0.5 * 1.0 + 0.5 * 2.0 / 3.0)).abs() < 1e-12);
/// ```
pub fn average_precision(scores: &[f64], positive: &[bool]) -> Option<f64> {
    let g = groups(scores, positive);
    let p: usize = g.iter().map(|g| g.0).sum();
    if p == 0 {
        return None;
    }
    // Σ (positives of a tie group) × (precision there), divided by the positives once at the end: with every
    // precision 1 that is exactly 1 (the terms of p share each could sum to 1 + 1e-15), and never above.
    let (mut tp, mut fp, mut sum) = (0usize, 0usize, 0.0);
    for &(gp, gn) in &g {
        tp += gp;
        fp += gn;
        sum += gp as f64 * (tp as f64 / (tp + fp) as f64);
    }
    Some((sum / p as f64).min(1.0))
}

/// Precision, recall and F1 of one class's decisions from its counts; each `None` where it divides by zero.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Decisions {
    /// `tp / (tp + fp)`: of the rows flagged, the share that were right.
    pub precision: Option<f64>,
    /// `tp / (tp + fn)`: of the class's rows, the share flagged.
    pub recall: Option<f64>,
    /// The harmonic mean of the two.
    pub f1: Option<f64>,
}

impl Decisions {
    /// From true positives, false positives and false negatives.
    ///
    /// # Examples
    /// ```
    /// use maxmargin_core::metrics::Decisions;
    /// let d = Decisions::from_counts(3, 1, 2);
    /// assert_eq!((d.precision, d.recall), (Some(0.75), Some(0.6)));
    /// assert!((d.f1.unwrap() - 2.0 * 0.75 * 0.6 / 1.35).abs() < 1e-12);
    /// assert_eq!(Decisions::from_counts(0, 0, 4).precision, None);
    /// ```
    pub fn from_counts(tp: usize, fp: usize, fn_: usize) -> Self {
        let ratio = |a: usize, b: usize| (b > 0).then(|| a as f64 / b as f64);
        let precision = ratio(tp, tp + fp);
        let recall = ratio(tp, tp + fn_);
        let f1 = ratio(2 * tp, 2 * tp + fp + fn_);
        Self {
            precision,
            recall,
            f1,
        }
    }
}

/// A confusion table kept sparse (only the pairs that occur), so it stays linear in the rows whatever the
/// number of classes; rows are actual labels, columns predicted ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Confusion {
    /// The labels, in the model's order.
    pub labels: Vec<f64>,
    /// `(actual, predicted, count)` for every pair that occurs, by actual then predicted label index.
    pub entries: Vec<(usize, usize, usize)>,
}

impl Confusion {
    /// Counts `(actual, predicted)` label-index pairs.
    pub fn count(labels: Vec<f64>, pairs: impl IntoIterator<Item = (usize, usize)>) -> Self {
        let mut all: Vec<(usize, usize)> = pairs.into_iter().collect();
        all.sort_unstable();
        let mut entries: Vec<(usize, usize, usize)> = Vec::new();
        for (a, p) in all {
            match entries.last_mut() {
                Some(e) if (e.0, e.1) == (a, p) => e.2 += 1,
                _ => entries.push((a, p, 1)),
            }
        }
        Self { labels, entries }
    }

    /// The count of `(actual, predicted)`.
    pub fn get(&self, actual: usize, predicted: usize) -> usize {
        self.entries
            .binary_search_by(|e| (e.0, e.1).cmp(&(actual, predicted)))
            .map_or(0, |i| self.entries[i].2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auc_and_ap_of_perfect_reversed_and_tied_rankings() {
        let y = [true, true, false, false];
        assert_eq!(roc_auc(&[4.0, 3.0, 2.0, 1.0], &y), Some(1.0));
        assert_eq!(roc_auc(&[1.0, 2.0, 3.0, 4.0], &y), Some(0.0));
        assert_eq!(roc_auc(&[1.0; 4], &y), Some(0.5));
        assert_eq!(average_precision(&[4.0, 3.0, 2.0, 1.0], &y), Some(1.0));
        // All tied: one step at the prevalence.
        assert_eq!(average_precision(&[1.0; 4], &y), Some(0.5));
        // The order of tied rows does not matter.
        let a = roc_auc(&[0.5, 0.5, 0.1, 0.9], &[true, false, true, false]);
        let b = roc_auc(&[0.5, 0.5, 0.1, 0.9], &[false, true, true, false]);
        assert_eq!(a, b);
        // Every row positive, 60 distinct scores: exactly 1 (the shares 1/60 summed to 1 + 1e-15 before).
        let scores: Vec<f64> = (0..60).map(f64::from).collect();
        assert_eq!(average_precision(&scores, &[true; 60]), Some(1.0));
        for n in 1..200 {
            let scores: Vec<f64> = (0..n).map(|i| f64::from(i % 7)).collect();
            let y: Vec<bool> = (0..n).map(|i| i % 3 != 0).collect();
            assert!(average_precision(&scores, &y).is_none_or(|ap| ap <= 1.0));
        }
    }

    #[test]
    fn confusion_is_sparse_and_counts() {
        let c = Confusion::count(vec![1.0, 2.0, 3.0], [(0, 0), (2, 1), (0, 0), (1, 1)]);
        assert_eq!(c.entries, vec![(0, 0, 2), (1, 1, 1), (2, 1, 1)]);
        assert_eq!((c.get(0, 0), c.get(2, 1), c.get(2, 2)), (2, 1, 0));
    }
}
