//! SMO's shrinking (see the parent module's notes): the examples the working-set scans visit, and when
//! they are narrowed.

use super::{KernelProblem, Smo, SmoState};
use serde::{Deserialize, Serialize};

/// The examples the working-set scans visit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct Shrinking {
    /// In increasing order.
    pub(super) active: Vec<usize>,
    /// Iterations until the next shrinking (0 before the first step: every example active then).
    pub(super) countdown: usize,
    /// Every example came back once already (at a violation within 10ε).
    pub(super) reopened: bool,
}

impl Shrinking {
    pub(super) fn all(n: usize) -> Self {
        Self {
            active: (0..n).collect(),
            countdown: shrink_every(n),
            reopened: false,
        }
    }
}

/// Iterations between two shrinkings on `n` examples: LIBSVM's 1000, or a quarter of `n` on fewer than
/// 4,000.
pub(super) fn shrink_every(n: usize) -> usize {
    (n / 4).clamp(1, 1000)
}

impl Smo {
    /// Shrinking (see the module's notes): every example back when the violation over the active ones is
    /// first within 10ε, then the active examples that will stay at their bound leave the scans.
    pub(super) fn shrink_active(&self, problem: &KernelProblem<'_>, st: &mut SmoState) {
        let y = problem.data.y();
        let epsilon = self.epsilon(st);
        let SmoState {
            alpha,
            grad,
            upper,
            shrink,
            ..
        } = st;
        let extremes = |active: &[usize]| {
            let (mut up, mut low) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
            for &t in active {
                let (u, l) = Self::sets(y[t], alpha[t], upper[t]);
                let v = -y[t] * grad[t];
                if u {
                    up = up.max(v);
                }
                if l {
                    low = low.max(-v);
                }
            }
            (up, low)
        };
        let (mut up, mut low) = extremes(&shrink.active);
        if !shrink.reopened && up + low <= 10.0 * epsilon {
            shrink.reopened = true;
            shrink.active = (0..problem.data.n_samples()).collect();
            (up, low) = extremes(&shrink.active);
        }
        // LIBSVM's be_shrunk in −y G terms: an example outside I_up can only be a pair's j, which needs
        // −y G below I_up's largest (`up`); one outside I_low only its i, which needs −y G above I_low's
        // smallest (`−low`). Beyond those it leaves the scans.
        shrink.active.retain(|&t| {
            let (u, l) = Self::sets(y[t], alpha[t], upper[t]);
            let v = -y[t] * grad[t];
            let out = (!u && v > up) || (!l && v < -low);
            !out
        });
    }
}
