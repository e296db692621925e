//! Cutting-plane training of structural SVMs: n-slack (Tsochantaridis, Joachims, Hofmann, Altun 2005) and
//! 1-slack (Joachims, Finley, Yu 2009), in λ-form.
//!
//! Both keep a working set of linear constraints `⟨w, a_j⟩ ≥ b_j − ξ_g` and solve the dual QP
//! `max_α Σ α_j b_j − (1/(2λ))‖Σ α_j a_j‖²`, `α ≥ 0`, `Σ_{j∈g} α_j ≤ cap_g` with clarabel, so that
//! `w = (1/λ)Σ α_j a_j`; the dual value certifies a gap against the primal. n-slack has one group per example
//! (`a = ψ(x_i, y_i) − ψ(x_i, ȳ)`, `b = Δ(y_i, ȳ)`, cap `1/n`) and adds, after each pass, every output whose
//! violation exceeds the example's slack by more than ε. 1-slack has one group (cap 1) of joint constraints
//! `a = (1/n)Σ_i (ψ(x_i, y_i) − ψ(x_i, ȳ_i))`, `b = (1/n)Σ_i Δ(y_i, ȳ_i)`; it first tries the most violated
//! joint constraint from a per-example cache of past outputs (no oracle calls) and calls the oracle on every
//! example only when the cache has nothing violated by more than ε; it stops when the oracle's constraint is
//! violated by at most ε. Its constraints inactive (α = 0) for `inactive_limit` solves are dropped; n-slack
//! keeps every constraint it adds.
//!
//! The QP grows with the working set (a dense Gram matrix): right for 1-slack, whose working set stays
//! small, and for n-slack on small and medium problems.

use crate::error::{OptimError, check_epsilon};
use crate::qp::{solve_dual, solve_dual_smo_capped};
use crate::structural::problem::StructProblem;
use crate::trainer::{Certificate, Progress, Solver, StopReason};
use maxmargin_core::vector::{SparseVec, norm_sq};
use maxmargin_struct::OutputSpace;
use serde::{Deserialize, Serialize};

/// Sweeps of warm-started SMO before the working-set QP is handed to the interior-point solver.
const SMO_SWEEPS: usize = 50;

/// Sweeps over n-slack's example blocks per pass. The outer loop needs the working-set QP only roughly
/// solved: its next pass of oracle calls adds planes and certifies the gap either way. Solving it to its
/// tolerance took up to 1,000 sweeps (OCR: 3.5 s a pass, 19% gap after 60 s). Measured to a certified gap
/// within ε (OCR / yeast): 10 sweeps 22.7 s / 2.7 s, 20 sweeps 13.5 s / 3.7 s, 30 sweeps 11.1 s / 5.4 s,
/// 40 sweeps 11.5 s / 6.9 s; sweeps until the KKT test meets a tolerance tied to the gap: 22.4 s / 11.2 s.
const BLOCK_SWEEPS: usize = 30;

/// How the cutting-plane duals are solved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QpSolver {
    /// Pairwise coordinate ascent, warm-started from the previous solution (fast; the default).
    #[default]
    Smo,
    /// clarabel's interior-point method, from scratch each time (the reference).
    Clarabel,
}

impl QpSolver {
    /// Refuses the interior-point solver in a build without it (the feature `clarabel`), at the parameters'
    /// check rather than at the first working-set solve.
    pub(crate) fn check(self) -> Result<(), OptimError> {
        if self == Self::Clarabel && !crate::qp::HAS_INTERIOR_POINT {
            return Err(crate::error::invalid(
                "qp",
                "clarabel",
                "needs maxmargin-optim's feature `clarabel` (the maxmargin facade turns it on); use smo",
            ));
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Plane {
    a: SparseVec,
    b: f64,
    group: usize,
    idle: usize,
}

/// Constraints, their Gram matrix (kept only where a solver needs it) and their dual variables.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
struct WorkingSet {
    planes: Vec<Plane>,
    gram: Vec<Vec<f64>>,
    alpha: Vec<f64>,
    without_gram: bool,
    /// SMO hit its sweep cap once: solve by the interior-point method from then on.
    #[serde(default)]
    interior: bool,
    /// n-slack: each block's members and their Gram matrix, extended as planes are added (a cache: not
    /// saved, rebuilt on the first solve after a resume, with the same values).
    #[serde(skip)]
    block_grams: Vec<(Vec<usize>, Vec<f64>)>,
}

impl WorkingSet {
    /// Whether a decoded working set is planes in `dim` dimensions with a dual (and a Gram matrix where
    /// kept) of their number.
    fn fits(&self, dim: usize, groups: usize) -> bool {
        let m = self.planes.len();
        self.planes
            .iter()
            .all(|p| p.a.fits(dim) && p.b.is_finite() && p.group < groups)
            && self.alpha.len() == m
            && self.alpha.iter().all(|a| a.is_finite() && *a >= 0.0)
            && (self.gram.is_empty() || self.gram.len() == m)
            && self
                .gram
                .iter()
                .all(|r| r.len() == m && r.iter().all(|v| v.is_finite()))
    }

    fn add(&mut self, a: SparseVec, b: f64, group: usize) {
        if self.without_gram {
            self.planes.push(Plane {
                a,
                b,
                group,
                idle: 0,
            });
            self.alpha.push(0.0);
            return;
        }
        let row: Vec<f64> = self
            .planes
            .iter()
            .map(|p| p.a.as_row().dot_sparse(&a.as_row()))
            .collect();
        let diag = a.as_row().norm_sq();
        for (g, r) in self.gram.iter_mut().zip(&row) {
            g.push(*r);
        }
        let mut new_row = row;
        new_row.push(diag);
        self.gram.push(new_row);
        self.planes.push(Plane {
            a,
            b,
            group,
            idle: 0,
        });
        self.alpha.push(0.0);
    }

    /// Solves the dual (warm-started SMO, or clarabel) and rebuilds `w = (1/λ)Σ α_j a_j`.
    fn solve(
        &mut self,
        lambda: f64,
        caps: &[f64],
        w: &mut [f64],
        qp: QpSolver,
    ) -> Result<(), OptimError> {
        let b: Vec<f64> = self.planes.iter().map(|p| p.b).collect();
        let group: Vec<usize> = self.planes.iter().map(|p| p.group).collect();
        self.alpha = match qp {
            QpSolver::Smo => {
                let scale = b.iter().fold(1.0f64, |m, v| m.max(v.abs()));
                let (alpha, solved) = solve_dual_smo_capped(
                    &self.gram,
                    &b,
                    lambda,
                    &group,
                    caps,
                    &self.alpha,
                    1e-10 * scale,
                    if self.interior { 0 } else { SMO_SWEEPS },
                );
                // SMO crawls on ill-conditioned planes (unscaled features: 100 1-slack iterations took 94 s
                // on a 6-label set, against 0.3 s by the interior-point solver). Past its sweep cap the
                // interior-point solution is taken (or SMO's, if that fails), and for the rest of the run,
                // since adding planes does not make them better conditioned. On OCR SMO always converges
                // within the cap, and stays (6 s to a 1% gap, against 44 s by the interior point).
                if solved || !crate::qp::HAS_INTERIOR_POINT {
                    // Without the interior-point solver SMO keeps its sweeps (and the certificate, computed
                    // from oracle calls, stays honest either way).
                    alpha
                } else {
                    self.interior = true;
                    solve_dual(&self.gram, &b, lambda, &group, caps).unwrap_or(alpha)
                }
            }
            QpSolver::Clarabel => solve_dual(&self.gram, &b, lambda, &group, caps)?,
        };
        w.iter_mut().for_each(|v| *v = 0.0);
        for (p, &a) in self.planes.iter().zip(&self.alpha) {
            if a > 0.0 {
                p.a.as_row().axpy(a / lambda, w);
            }
        }
        Ok(())
    }

    /// n-slack's dual by blocks: pairwise coordinate ascent within each example's constraints (plus its
    /// slack). Each visit of a block reads its gradients `b_c − ⟨a_c, w⟩` from `w` once (`O(|W_i| · nnz(a))`)
    /// and then keeps them up to date through the block's Gram matrix, built once per solve: a pair step costs
    /// `O(|W_i|)` plus the sparse update of `w`, not `|W_i|` sparse dot products (OCR: 3.5 s a pass, nearly
    /// all of it re-reading gradients). Independent of the total number of constraints; no global Gram.
    /// Returns whether the KKT conditions hold to `tol` (false when the sweep limit stopped it first).
    fn solve_blocks(
        &mut self,
        lambda: f64,
        cap: f64,
        n_groups: usize,
        w: &mut [f64],
        (tol, deadline): (f64, Option<std::time::Instant>),
    ) -> bool {
        let mut members = vec![Vec::new(); n_groups];
        for (j, p) in self.planes.iter().enumerate() {
            members[p.group].push(j);
        }
        self.update_block_grams(&members);
        let grams = &self.block_grams;
        let mut grad = Vec::new();
        for _sweep in 0..BLOCK_SWEEPS {
            let mut worst = 0.0f64;
            for (g, idx) in members.iter().enumerate().filter(|(_, m)| !m.is_empty()) {
                // A time budget is checked inside the sweeps (one took 5 s on yeast): the duals stay
                // feasible, and the QP counts as unsolved.
                if g % 64 == 0 && deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                    return false;
                }
                let (m, gram) = (idx.len(), &grams[g].1);
                grad.clear();
                grad.extend(
                    idx.iter()
                        .map(|&j| self.planes[j].b - self.planes[j].a.as_row().dot(w)),
                );
                let mut slack = cap - idx.iter().map(|&j| self.alpha[j]).sum::<f64>();
                // `None` is the slack variable: gradient 0, no features.
                for _ in 0..(20 * m) {
                    let (mut up, mut down): ((Option<usize>, f64), (Option<usize>, f64)) = (
                        (None, 0.0),
                        (None, if slack > 0.0 { 0.0 } else { f64::INFINITY }),
                    );
                    for (r, &gr) in grad.iter().enumerate() {
                        if gr > up.1 {
                            up = (Some(r), gr);
                        }
                        if self.alpha[idx[r]] > 0.0 && gr < down.1 {
                            down = (Some(r), gr);
                        }
                    }
                    let violation = up.1 - down.1;
                    if violation <= tol || violation.is_nan() || up.0 == down.0 {
                        break;
                    }
                    worst = worst.max(violation);
                    let entry = |a: Option<usize>, b: Option<usize>| match (a, b) {
                        (Some(a), Some(b)) => gram[a * m + b],
                        _ => 0.0,
                    };
                    let (i, j) = (up.0, down.0);
                    let curvature = (entry(i, i) + entry(j, j) - 2.0 * entry(i, j)) / lambda;
                    let available = match j {
                        None => slack,
                        Some(j) => self.alpha[idx[j]],
                    };
                    let t = crate::structural::qp::step_length(violation, curvature, available);
                    if t <= 0.0 {
                        break;
                    }
                    match i {
                        None => slack += t,
                        Some(i) => {
                            self.alpha[idx[i]] += t;
                            self.planes[idx[i]].a.as_row().axpy(t / lambda, w);
                        }
                    }
                    match j {
                        None => slack -= t,
                        Some(j) => {
                            self.alpha[idx[j]] -= t;
                            self.planes[idx[j]].a.as_row().axpy(-t / lambda, w);
                        }
                    }
                    // w moved by (t/λ)(a_i − a_j): every gradient of the block moves by the Gram's column.
                    for (r, gr) in grad.iter_mut().enumerate() {
                        *gr -= t / lambda * (entry(Some(r), i) - entry(Some(r), j));
                    }
                }
            }
            if worst <= tol {
                return true;
            }
        }
        false
    }

    /// Brings each block's Gram matrix (row-major over its members) up to date: planes are only appended
    /// to a block, so the entries already computed are kept and only the new rows are computed
    /// (`O(new · |W_i| · nnz)` per solve instead of `O(|W_i|² · nnz)`). A block whose members changed
    /// otherwise is rebuilt.
    fn update_block_grams(&mut self, members: &[Vec<usize>]) {
        self.block_grams
            .resize_with(members.len(), Default::default);
        for (idx, (cached, gram)) in members.iter().zip(self.block_grams.iter_mut()) {
            let old = if idx.starts_with(cached) {
                cached.len()
            } else {
                0
            };
            if old == idx.len() && cached.len() == idx.len() {
                continue;
            }
            let m = idx.len();
            let mut g = vec![0.0; m * m];
            for r in 0..old {
                g[r * m..r * m + old].copy_from_slice(&gram[r * old..(r + 1) * old]);
            }
            for r in old..m {
                for c in 0..=r {
                    let v = self.planes[idx[r]]
                        .a
                        .as_row()
                        .dot_sparse(&self.planes[idx[c]].a.as_row());
                    g[r * m + c] = v;
                    g[c * m + r] = v;
                }
            }
            *cached = idx.clone();
            *gram = g;
        }
    }

    /// Ages constraints with `α_j ≤ 1e-10 · max α` (1e-7 once the interior-point method solves, whose zeros
    /// are only that small) and drops those idle for more than `limit` solves.
    fn drop_idle(&mut self, limit: usize) {
        let top = self.alpha.iter().copied().fold(0.0, f64::max);
        let zero = if self.interior { 1e-7 } else { 1e-10 } * top;
        for (p, &a) in self.planes.iter_mut().zip(&self.alpha) {
            p.idle = if a > zero { 0 } else { p.idle + 1 };
        }
        let keep: Vec<bool> = self.planes.iter().map(|p| p.idle <= limit).collect();
        if keep.iter().all(|&k| k) {
            return;
        }
        let filter = |v: &mut Vec<f64>| {
            let mut it = keep.iter();
            v.retain(|_| *it.next().unwrap_or(&true));
        };
        for row in &mut self.gram {
            filter(row);
        }
        let mut it = keep.iter();
        self.gram.retain(|_| *it.next().unwrap_or(&true));
        filter(&mut self.alpha);
        let mut it = keep.iter();
        self.planes.retain(|_| *it.next().unwrap_or(&true));
    }

    /// `D(α) = Σ α_j b_j − λ/2‖w‖²` for the current `w`.
    fn dual(&self, lambda: f64, w: &[f64]) -> f64 {
        self.planes
            .iter()
            .zip(&self.alpha)
            .map(|(p, a)| a * p.b)
            .sum::<f64>()
            - 0.5 * lambda * norm_sq(w)
    }

    /// The certificate of `w = (1/λ)Σ α_j a_j` against the primal `objective`: dual, gap, working-set size.
    fn certificate<S: OutputSpace>(
        &self,
        problem: &StructProblem<'_, S>,
        w: &[f64],
        objective: f64,
    ) -> Certificate {
        let dual = self.dual(problem.lambda(), w);
        Certificate {
            active_constraints: Some(self.planes.len()),
            oracle_calls: Some(problem.oracle_calls()),
            ..Certificate::of_dual(objective, dual)
        }
    }

    /// The slacks of groups `0..n` (each `max(0, max_{j∈g} b_j − ⟨w, a_j⟩)`), in one pass over the planes.
    fn slacks(&self, n: usize, w: &[f64]) -> Vec<f64> {
        let mut slacks = vec![0.0f64; n];
        for p in &self.planes {
            slacks[p.group] = slacks[p.group].max(p.b - p.a.as_row().dot(w));
        }
        slacks
    }

    /// The slack of group `g`: `max(0, max_{j∈g} b_j − ⟨w, a_j⟩)`.
    fn slack(&self, g: usize, w: &[f64]) -> f64 {
        self.planes
            .iter()
            .filter(|p| p.group == g)
            .map(|p| p.b - p.a.as_row().dot(w))
            .fold(0.0, f64::max)
    }
}

/// What the holder of the working set decided after a pass or round (one process, or rank 0 over ranks,
/// which broadcasts it after `w` as [`Decision::code`]).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Decision {
    Go,
    Converged,
    /// The ε test passed short of the gap target: ε is divided by 10.
    Tighten,
}

impl Decision {
    /// The decision as the number sent after `w`.
    fn code(self) -> f64 {
        match self {
            Self::Go => 0.0,
            Self::Converged => 1.0,
            Self::Tighten => 2.0,
        }
    }

    /// Applies it to a state's `converged` and its count of ε's divisions.
    fn apply(self, converged: &mut bool, tightened: &mut u32) {
        match self {
            Self::Converged => *converged = true,
            Self::Tighten => *tightened += 1,
            Self::Go => {}
        }
    }

    /// On every rank: rank 0's broadcast `[w, code]` taken into the state's `w`, `converged` and
    /// `tightened`; whether it said converged.
    fn receive(out: &[f64], w: &mut [f64], converged: &mut bool, tightened: &mut u32) -> bool {
        let dim = w.len();
        w.copy_from_slice(&out[..dim]);
        let decision = if out[dim] == Self::Converged.code() {
            Self::Converged
        } else if out[dim] == Self::Tighten.code() {
            Self::Tighten
        } else {
            Self::Go
        };
        decision.apply(converged, tightened);
        decision == Self::Converged
    }
}

/// Whether a stopping test that passed at `epsilon` may end the run ([`crate::gap_target::accepts`] with
/// the working set's dual, which both cutting-plane methods know at every round).
fn gap_accepts(target: Option<f64>, epsilon: f64, primal: f64, dual: f64) -> bool {
    let certified = || Ok::<_, std::convert::Infallible>((primal, primal - dual));
    let Ok(done) = crate::gap_target::accepts(target, epsilon, certified);
    done
}

/// What both cutting-plane solvers report from a state with `w`, its working set `set` and `converged`: the
/// output `w`, its primal, the working set's dual as the certificate, and the converged stop.
macro_rules! planes_report {
    ($space:ident, $groups:expr) => {
        fn output(&self, _problem: &StructProblem<'a, $space>, st: &Self::State) -> Vec<f64> {
            st.w.clone()
        }

        fn objective(
            &self,
            problem: &StructProblem<'a, $space>,
            st: &Self::State,
        ) -> Result<f64, OptimError> {
            problem.primal(&st.w)
        }

        fn certificate(
            &self,
            problem: &StructProblem<'a, $space>,
            st: &Self::State,
            objective: f64,
        ) -> Result<Certificate, OptimError> {
            Ok(st.set.certificate(problem, &st.w, objective))
        }

        fn stop(&self, st: &Self::State) -> Option<StopReason> {
            st.converged.then_some(StopReason::Converged)
        }

        /// Lengths and values of `w`, the working set (its planes' groups below `$groups(n)`) and the true outputs' features (the cached outputs
        /// are the space's to check when they are used).
        fn check_state(
            &self,
            problem: &StructProblem<'a, $space>,
            st: &Self::State,
        ) -> Result<(), OptimError> {
            let dim = problem.dim();
            crate::error::fits(st.w.len() == dim && crate::error::all_finite(&st.w), "w")?;
            let groups: fn(usize) -> usize = $groups;
            crate::error::fits(
                st.set.fits(dim, groups(problem.n_samples())),
                "the working set",
            )?;
            crate::error::fits(
                st.psi_truth == problem.truth_features(),
                "the true outputs' features (a checkpoint of other data?)",
            )
        }
    };
}

mod n_slack;
mod one_slack;

pub use n_slack::{NSlack, NSlackParams, NSlackRankState, NSlackRanks, NSlackState};
pub use one_slack::{OneSlack, OneSlackParams, OneSlackRankState, OneSlackRanks, OneSlackState};
