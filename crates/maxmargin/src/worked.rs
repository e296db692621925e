//! The worked examples of the lessons, computed by the library and rendered as fixed-digit tables.
//!
//! `maxmargin demo` prints them and the facade's tests snapshot them, so what users see is what is
//! tested. Each table is computed by the real code (the hinge functions, Pegasos, the batch subgradient
//! method), never typed in.

use crate::Error;
use maxmargin_core::hinge::{MarginLoss, ZeroAtBoundary, hinge, hinge_subdifferential};
use maxmargin_core::objective::Lambda;
use maxmargin_core::worked::{lesson_rows, two_points};
use maxmargin_optim::{
    Bias, BinaryProblem, Budget, PegasosParams, Sampling, Solver, StepRule, SubgradientParams,
    Trainer,
};
use std::fmt::Write;

/// Formats a number as an exact fraction with a denominator up to 12 when it is one, else to 3 decimals.
///
/// # Examples
/// ```
/// assert_eq!(maxmargin::worked::fraction(2.0 / 3.0), "2/3");
/// assert_eq!(maxmargin::worked::fraction(0.1234), "0.123");
/// ```
pub fn fraction(v: f64) -> String {
    for den in 1..=12u32 {
        let num = v * f64::from(den);
        if (num - num.round()).abs() < 1e-9 {
            let num = num.round() as i64;
            return if den == 1 {
                format!("{num}")
            } else {
                format!("{num}/{den}")
            };
        }
    }
    format!("{v:.3}")
}

/// The hinge `max(0, 1 − z)` against the 0-1 loss (a tie `z = 0` counted as a mistake), with `∂_z hinge`.
///
/// # Examples
/// ```
/// assert!(maxmargin::worked::hinge_table().contains("1.0     0.0    0    [-1, 0]"));
/// ```
pub fn hinge_table() -> String {
    let zero_one = MarginLoss::ZeroOne(ZeroAtBoundary::Mistake);
    let mut out = String::from("z       hinge  0-1  dhinge/dz\n");
    for z in [-2.0, -1.0, 0.0, 0.5, 1.0, 2.0] {
        let d = hinge_subdifferential(z);
        let sub = if d.is_point() {
            format!("{{{}}}", d.lo)
        } else {
            format!("[{}, {}]", d.lo, d.hi)
        };
        let _ = writeln!(
            out,
            "{z:<6.1}  {:<5.1}  {:<3}  {sub}",
            hinge(z),
            zero_one.value(z)
        );
    }
    out
}

/// One row of the Pegasos hand table.
#[derive(Debug, Clone, PartialEq)]
pub struct HandRow {
    /// Step `t`.
    pub t: u64,
    /// `η_t = 1/t`.
    pub eta: f64,
    /// 0 for A, 1 for B.
    pub example: usize,
    /// `y⟨w_t, x⟩` before the step.
    pub margin: f64,
    /// `w_{t+1}`.
    pub w: [f64; 2],
}

/// The Pegasos hand table: A = (2, 1), +1 and B = (−1, −2), −1; C = 1 (so `λ = 1/C = 1` and
/// `η_t = 1/(λt) = 1/t`); no bias; A and B alternating; `w₁ = 0`; six steps, run by the real solver.
///
/// # Errors
/// None in practice (fixed data); the types are the solver's.
///
/// # Examples
/// ```
/// # fn main() -> Result<(), maxmargin::Error> {
/// let rows = maxmargin::worked::pegasos_hand_rows()?;
/// assert_eq!(rows[5].w, [0.5, 0.5]);
/// # Ok(()) }
/// ```
pub fn pegasos_hand_rows() -> Result<Vec<HandRow>, Error> {
    let (x, y) = two_points();
    let problem = BinaryProblem::new(&x, &y, Lambda::new(1.0)?, Bias::None)?;
    let mut solver = PegasosParams::new().sampling(Sampling::Cyclic).check()?;
    let mut state = solver.init(&problem)?;
    let mut rows = Vec::new();
    for _ in 0..6 {
        solver.step(&problem, &mut state)?;
        let (example, margin) = state.last[0];
        let w = solver.output(&problem, &state).w;
        rows.push(HandRow {
            t: state.t,
            eta: 1.0 / state.t as f64,
            example,
            margin,
            w: [w[0], w[1]],
        });
    }
    Ok(rows)
}

/// [`pegasos_hand_rows`] as a table: `t, η_t, example, margin, case, w_{t+1}` in fractions and decimals.
///
/// # Errors
/// As [`pegasos_hand_rows`].
pub fn pegasos_hand_table() -> Result<String, Error> {
    let mut out = String::from("t  eta_t  x  margin  case      w_{t+1}\n");
    for r in pegasos_hand_rows()? {
        let case = if r.margin < 1.0 { "violated" } else { "else" };
        let exact = format!("({}, {})", fraction(r.w[0]), fraction(r.w[1]));
        let _ = writeln!(
            out,
            "{}  {:<5}  {}  {:<6}  {:<8}  {exact:<11} = ({:.3}, {:.3})",
            r.t,
            fraction(r.eta),
            ["A", "B"][r.example],
            fraction(r.margin),
            case,
            r.w[0],
            r.w[1]
        );
    }
    Ok(out)
}

/// The linear-classifier lesson: six points on a line, `λ = 0.04`, constant step 0.12, unregularized
/// intercept, 500 full-batch subgradient iterations from `w = b = 0`. The method is no descent method: its
/// last iterate and its best evaluated iterate differ, and the solver returns the best; both are shown,
/// labelled, with every row's margin under the best.
///
/// # Errors
/// None in practice (fixed data); the types are the solver's.
pub fn lesson_example() -> Result<String, Error> {
    let (x, y) = lesson_rows();
    let problem = BinaryProblem::new(&x, &y, Lambda::new(0.04)?, Bias::Unregularized)?;
    let mut solver = SubgradientParams::new()
        .step(StepRule::Constant(0.12))
        .check()?;
    let state = solver.init(&problem)?;
    let (fit, state) =
        Trainer::new(Budget::iterations(500))?.run_from(&mut solver, &problem, state, &mut ())?;
    let start = problem.objective(&maxmargin_optim::LinearWeights {
        w: vec![0.0],
        b: 0.0,
    });
    let last = &state.current;
    let mut out = format!(
        "iterations = {}\n\
         last iterate: w = {:.6}, b = {:.6}, objective = {:.6}\n\
         best iterate: w = {:.6}, b = {:.6}, objective = {:.6} (returned)\n\
         at w = b = 0: objective = {start:.6}\n",
        fit.progress.iteration,
        last.w[0],
        last.b,
        problem.objective(last),
        fit.output.w[0],
        fit.output.b,
        fit.objective
    );
    out.push_str("x       y   margin (best)  side\n");
    for (row, &yi) in x.rows().zip(&y) {
        let m = yi * (row.dot(&fit.output.w) + fit.output.b);
        let side = if m > 0.0 { "correct" } else { "WRONG" };
        let _ = writeln!(out, "{:<6.1}  {:+}  {m:<13.4}  {side}", row.values()[0], yi);
    }
    Ok(out)
}

/// Plain decoding is not loss-augmented inference: a three-word chain (`dogs run fast`, tags N and V, one
/// indicator feature per word, no transition scores) whose plain decoding is the true tagging, while the
/// structured hinge is positive. Every tagging is listed with its score `s`, Hamming loss `Δ` and `s + Δ`;
/// the most violating tagging (Viterbi with the loss added, checked against brute force) is not the decoded
/// one, and only it gives a nonzero subgradient.
///
/// # Errors
/// None in practice (fixed weights); the types are the space's.
///
/// # Examples
/// ```
/// let text = maxmargin::worked::decoding_is_not_inference().unwrap();
/// assert!(text.contains("hinge = 1.1"));
/// ```
pub fn decoding_is_not_inference() -> Result<String, Error> {
    use maxmargin_core::vector::SparseVec;
    use maxmargin_struct::{ChainSpace, Enumerable, OutputSpace, brute_force};
    let space = ChainSpace::new(3, 2)?;
    // Unary weights, feature-major (w[j·L + l]): dogs → N 2.0; run → N 0.5, V 1.0; fast → N 0.4.
    let mut w = vec![0.0; space.dim()];
    for (j, l, v) in [(0, 0, 2.0), (1, 0, 0.5), (1, 1, 1.0), (2, 0, 0.4)] {
        w[j * 2 + l] = v;
    }
    let x: Vec<SparseVec> = (0..3u32)
        .map(|j| SparseVec::new(vec![j], vec![1.0]))
        .collect::<Result<_, _>>()?;
    let y = vec![0u32, 1, 0];
    let name = |t: &[u32]| {
        t.iter()
            .map(|&l| ["N", "V"][l as usize])
            .collect::<Vec<_>>()
            .join(" ")
    };
    let decoded = space.decode(&w, &x)?;
    let augmented = space.loss_augmented(&w, &x, &y)?;
    let (reference, _, _) = brute_force(&space, &w, &x, &y, 0.0)?;
    let s_true = space.score(&w, &x, &y);
    let mut out = format!(
        "dogs run fast, true tags {}; scores: dogs N 2.0, run N 0.5 / V 1.0, fast N 0.4\n\
         tagging  s(y')  Delta  s(y') + Delta\n",
        name(&y)
    );
    for t in space.enumerate(&x)? {
        let (score, loss) = (space.score(&w, &x, &t), space.loss(&y, &t));
        let mut mark = String::new();
        if t == decoded {
            mark.push_str("  <- plain decoding (the truth)");
        }
        if t == augmented.output {
            mark.push_str("  <- loss-augmented inference");
        }
        let line = format!(
            "{:<7}  {score:<5.1}  {loss:<5}  {:<13.1}{mark}",
            name(&t),
            score + loss
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
    let _ = writeln!(
        out,
        "hinge = {:.1} = {:.1} - s(y) {s_true:.1} (brute force: {:.1}); plain decoding would report no violation",
        augmented.hinge,
        augmented.hinge + s_true,
        reference.value
    );
    Ok(out)
}
