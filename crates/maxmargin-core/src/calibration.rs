//! From margins to probabilities, fitted on data the model was not trained on: Platt's sigmoid
//! `P(y = 1 | f) = 1 / (1 + exp(A f + B))` by the robust Newton method of Lin, Lin and Weng (2007) with Platt's
//! smoothed targets, or an isotonic (monotone, piecewise constant) map by pool-adjacent-violators.

use serde::{Deserialize, Serialize};

/// Platt's sigmoid `1 / (1 + exp(a f + b))` (a < 0 when larger scores mean the positive class).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Platt {
    /// The slope.
    pub a: f64,
    /// The offset.
    pub b: f64,
}

/// `log(1 + exp(z))` without overflow.
fn log1pexp(z: f64) -> f64 {
    if z > 0.0 {
        z + (-z).exp().ln_1p()
    } else {
        z.exp().ln_1p()
    }
}

impl Platt {
    /// Fits `(a, b)` to scores and labels by Newton's method with backtracking on the cross-entropy against
    /// Platt's targets `(N₊ + 1)/(N₊ + 2)` and `1/(N₋ + 2)`. `None` for no rows or unequal lengths.
    ///
    /// # Examples
    /// ```
    /// use maxmargin_core::calibration::Platt;
    /// let f = [-2.0, -1.0, -0.5, 0.5, 1.0, 2.0, 0.2, -0.2];
    /// let y = [false, false, false, true, true, true, false, true];
    /// let p = Platt::fit(&f, &y).unwrap();
    /// assert!(p.a < 0.0);
    /// assert!(p.probability(2.0) > 0.8 && p.probability(-2.0) < 0.2);
    /// ```
    pub fn fit(scores: &[f64], positive: &[bool]) -> Option<Self> {
        if scores.is_empty() || scores.len() != positive.len() {
            return None;
        }
        let n_pos = positive.iter().filter(|&&p| p).count() as f64;
        let n_neg = scores.len() as f64 - n_pos;
        let (hi, lo) = ((n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0));
        let t: Vec<f64> = positive.iter().map(|&p| if p { hi } else { lo }).collect();
        let objective = |a: f64, b: f64| -> f64 {
            scores
                .iter()
                .zip(&t)
                .map(|(&f, &ti)| {
                    // −[t log p + (1 − t) log(1 − p)] with p = 1/(1 + e^z), z = a f + b.
                    let z = a * f + b;
                    ti * z + log1pexp(-z)
                })
                .sum()
        };
        let (mut a, mut b) = (0.0, ((n_neg + 1.0) / (n_pos + 1.0)).ln());
        let mut value = objective(a, b);
        const SIGMA: f64 = 1e-12;
        for _ in 0..100 {
            let (mut h11, mut h22, mut h21, mut g1, mut g2) = (SIGMA, SIGMA, 0.0, 0.0, 0.0);
            for (&f, &ti) in scores.iter().zip(&t) {
                let z = a * f + b;
                // p = 1/(1 + e^z) and q = 1 − p, computed stably.
                let (p, q) = if z >= 0.0 {
                    let e = (-z).exp();
                    (e / (1.0 + e), 1.0 / (1.0 + e))
                } else {
                    let e = z.exp();
                    (1.0 / (1.0 + e), e / (1.0 + e))
                };
                let d2 = p * q;
                h11 += f * f * d2;
                h22 += d2;
                h21 += f * d2;
                let d1 = ti - p;
                g1 += f * d1;
                g2 += d1;
            }
            if g1.abs() < 1e-5 && g2.abs() < 1e-5 {
                break;
            }
            let det = h11 * h22 - h21 * h21;
            let (da, db) = (-(h22 * g1 - h21 * g2) / det, -(-h21 * g1 + h11 * g2) / det);
            let slope = g1 * da + g2 * db;
            let mut step = 1.0;
            let mut moved = false;
            while step >= 1e-10 {
                let (na, nb) = (a + step * da, b + step * db);
                let nv = objective(na, nb);
                if nv < value + 1e-4 * step * slope {
                    (a, b, value) = (na, nb, nv);
                    moved = true;
                    break;
                }
                step /= 2.0;
            }
            if !moved {
                break;
            }
        }
        Some(Self { a, b })
    }

    /// `P(y = 1 | f)`.
    pub fn probability(&self, score: f64) -> f64 {
        let z = self.a * score + self.b;
        if z >= 0.0 {
            let e = (-z).exp();
            e / (1.0 + e)
        } else {
            1.0 / (1.0 + z.exp())
        }
    }
}

/// A monotone step map from scores to probabilities: `values[k]` for scores up to `upper[k]` (the last
/// value beyond), fitted by pool-adjacent-violators.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Isotonic {
    /// The largest score of each block, increasing.
    pub upper: Vec<f64>,
    /// The block's fraction of positives, non-decreasing.
    pub values: Vec<f64>,
}

impl Isotonic {
    /// Whether the map is one [`Isotonic::fit`] can make: blocks with strictly increasing finite upper
    /// scores, and fractions in `[0, 1]` that never decrease (a decoded map is checked with it).
    pub fn is_valid(&self) -> bool {
        !self.upper.is_empty()
            && self.upper.len() == self.values.len()
            && self.upper.iter().all(|u| !u.is_nan())
            && self.upper.windows(2).all(|p| p[0] < p[1])
            && self.values.iter().all(|v| (0.0..=1.0).contains(v))
            && self.values.windows(2).all(|p| p[0] <= p[1])
    }

    /// Fits the non-decreasing map that is closest in squared error to the labels (0 or 1) in score order
    /// (adjacent blocks of equal value are pooled too, so the map is as short as it can be).
    /// `None` for no rows or unequal lengths.
    ///
    /// # Examples
    /// ```
    /// use maxmargin_core::calibration::Isotonic;
    /// let m = Isotonic::fit(&[1.0, 2.0, 3.0, 4.0], &[false, true, false, true]).unwrap();
    /// assert_eq!(m.values, vec![0.0, 0.5, 1.0]);
    /// assert_eq!((m.probability(0.0), m.probability(2.5), m.probability(9.0)), (0.0, 0.5, 1.0));
    /// ```
    pub fn fit(scores: &[f64], positive: &[bool]) -> Option<Self> {
        if scores.is_empty() || scores.len() != positive.len() {
            return None;
        }
        let mut order: Vec<usize> = (0..scores.len()).collect();
        order.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]));
        // Blocks: (sum of labels, count, largest score); tied scores start in one block.
        let mut blocks: Vec<(f64, f64, f64)> = Vec::new();
        for i in order {
            let y = f64::from(u8::from(positive[i]));
            match blocks.last_mut() {
                Some(last) if last.2 == scores[i] => {
                    last.0 += y;
                    last.1 += 1.0;
                }
                _ => blocks.push((y, 1.0, scores[i])),
            }
            while blocks.len() >= 2 {
                let (b, a) = (blocks[blocks.len() - 1], blocks[blocks.len() - 2]);
                if a.0 / a.1 < b.0 / b.1 {
                    break;
                }
                blocks.pop();
                if let Some(last) = blocks.last_mut() {
                    *last = (a.0 + b.0, a.1 + b.1, b.2);
                }
            }
        }
        Some(Self {
            upper: blocks.iter().map(|b| b.2).collect(),
            values: blocks.iter().map(|b| b.0 / b.1).collect(),
        })
    }

    /// The probability for `score`: the value of the first block whose largest score is at least it.
    pub fn probability(&self, score: f64) -> f64 {
        let k = self.upper.partition_point(|&u| u < score);
        self.values
            .get(k.min(self.values.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0.5)
    }
}

/// The Brier score `(1/n)Σ (p_i − y_i)²` and the log loss `−(1/n)Σ log P(y_i)` (probabilities clipped to
/// `[1e-15, 1 − 1e-15]`). `None` for no rows.
pub fn brier_and_log_loss(probabilities: &[f64], positive: &[bool]) -> Option<(f64, f64)> {
    if probabilities.is_empty() {
        return None;
    }
    let n = probabilities.len() as f64;
    let (mut brier, mut log) = (0.0, 0.0);
    for (&p, &y) in probabilities.iter().zip(positive) {
        let t = f64::from(u8::from(y));
        brier += (p - t) * (p - t);
        let p = p.clamp(1e-15, 1.0 - 1e-15);
        log -= if y { p.ln() } else { (1.0 - p).ln() };
    }
    Some((brier / n, log / n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platt_recovers_a_sigmoid_and_lowers_the_log_loss() {
        // Labels drawn from a known sigmoid: the fit is close, and better than the raw 1/(1 + e^{-f}).
        let mut lcg = crate::testing::Lcg::new(3);
        let mut next = || lcg.unit();
        let (a_true, b_true) = (-3.0, 0.5);
        let (mut f, mut y) = (Vec::new(), Vec::new());
        for _ in 0..4000 {
            let s = next() * 4.0 - 2.0;
            let p = 1.0 / (1.0 + (a_true * s + b_true).exp());
            f.push(s);
            y.push(next() < p);
        }
        let fit = Platt::fit(&f, &y).unwrap();
        assert!(
            (fit.a - a_true).abs() < 0.3 && (fit.b - b_true).abs() < 0.2,
            "{fit:?}"
        );
        let calibrated: Vec<f64> = f.iter().map(|&s| fit.probability(s)).collect();
        let raw: Vec<f64> = f.iter().map(|&s| 1.0 / (1.0 + (-s).exp())).collect();
        let (b1, l1) = brier_and_log_loss(&calibrated, &y).unwrap();
        let (b0, l0) = brier_and_log_loss(&raw, &y).unwrap();
        assert!(b1 < b0 && l1 < l0, "{b1} {b0} {l1} {l0}");
    }

    #[test]
    fn isotonic_is_monotone_and_pools_violators() {
        let m = Isotonic::fit(
            &[1.0, 2.0, 2.0, 3.0, 4.0],
            &[true, false, true, false, true],
        )
        .unwrap();
        assert!(m.values.windows(2).all(|w| w[0] <= w[1]), "{m:?}");
        assert!(m.values.iter().all(|v| (0.0..=1.0).contains(v)));
        // One class only: a constant.
        let c = Isotonic::fit(&[1.0, 5.0], &[true, true]).unwrap();
        assert_eq!(c.values, vec![1.0]);
    }
}
