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
    /// No longer read (the active set is rebuilt from every example at each shrinking); kept so that
    /// checkpoints keep their layout.
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
    /// Shrinking (see the module's notes): the active examples are rebuilt from every example, leaving out
    /// those at a bound that will stay there judged against the extremes over every example.
    ///
    /// LIBSVM judges only the active examples and lets shrunk ones back once, when the active violation is
    /// first within 10ε. On a flat face (a linear kernel of low rank with a large `C`) the shrunk problem can
    /// crawl for millions of iterations far from that threshold while a shrunk example violates the
    /// optimality conditions by orders of magnitude more (a property test found such a case: violation
    /// 5·10⁻⁴ on five active examples, 2.9 over all of them, 3.6 million iterations). Rebuilding from every
    /// example costs one `O(n)` scan per shrinking, against the `O(n)` gradient update of every iteration.
    pub(super) fn shrink_active(&self, problem: &KernelProblem<'_>, st: &mut SmoState) {
        let y = problem.data.y();
        let n = problem.data.n_samples();
        let SmoState {
            alpha,
            grad,
            upper,
            shrink,
            ..
        } = st;
        let (mut up, mut low) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
        for t in 0..n {
            let (u, l) = Self::sets(y[t], alpha[t], upper[t]);
            let v = -y[t] * grad[t];
            if u {
                up = up.max(v);
            }
            if l {
                low = low.max(-v);
            }
        }
        // LIBSVM's be_shrunk in −y G terms: an example outside I_up can only be a pair's j, which needs
        // −y G below I_up's largest (`up`); one outside I_low only its i, which needs −y G above I_low's
        // smallest (`−low`). Beyond those it leaves the scans.
        shrink.active.clear();
        shrink.active.extend((0..n).filter(|&t| {
            let (u, l) = Self::sets(y[t], alpha[t], upper[t]);
            let v = -y[t] * grad[t];
            let out = (!u && v > up) || (!l && v < -low);
            !out
        }));
    }
}
