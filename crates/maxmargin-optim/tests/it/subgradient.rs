//! The batch subgradient method: the lesson's worked example, and the best iterate.

use crate::{data, lambda};
use maxmargin_optim::{
    Bias, BinaryProblem, Budget, StepRule, StopReason, SubgradientParams, Trainer,
};

/// The linear-classifier lesson: six points on a line, λ = 0.04, constant step 0.12, unregularized
/// intercept, 500 full-batch iterations from w = b = 0.
#[test]
fn lesson_example() {
    let (x, y) = maxmargin_core::testing::lesson_rows();
    let problem = BinaryProblem::new(&x, &y, lambda(0.04), Bias::Unregularized).unwrap();
    let mut solver = SubgradientParams::new()
        .step(StepRule::Constant(0.12))
        .check()
        .unwrap();
    let fit = Trainer::new(Budget::iterations(500))
        .unwrap()
        .run(&mut solver, &problem, &mut ())
        .unwrap();
    assert_eq!(fit.stop, StopReason::MaxIterations);
    assert_eq!(fit.progress.iteration, 500);
    assert_eq!(
        fit.trace[0].objective.min(1.0),
        1.0,
        "the start w = b = 0 has objective 1"
    );
    assert!(fit.objective < 1.0);
    let (w, b) = (fit.output.w[0], fit.output.b);
    for (row, &yi) in x.rows().zip(&y) {
        assert!(
            yi * (row.dot(&fit.output.w) + b) > 0.0,
            "a row is on the wrong side"
        );
    }
    // The best iterate is no worse than any evaluated one.
    assert!(fit.trace.iter().all(|r| r.objective >= fit.objective));
    // The margins reached: every row at least at the margin boundary, w positive.
    assert!(w > 0.0);
}

#[test]
fn best_iterate_is_kept_when_steps_are_too_large() {
    let (x, y) = data(&[(&[1.0, 0.0], 1.0), (&[0.0, 1.0], -1.0), (&[1.0, 1.0], 1.0)]);
    let problem = BinaryProblem::new(&x, &y, lambda(0.5), Bias::None).unwrap();
    let mut solver = SubgradientParams::new()
        .step(StepRule::Constant(3.0))
        .check()
        .unwrap();
    let fit = Trainer::new(Budget::iterations(50))
        .unwrap()
        .run(&mut solver, &problem, &mut ())
        .unwrap();
    assert!((problem.objective(&fit.output) - fit.objective).abs() < 1e-12);
    // Oscillation: the objective returned is the smallest seen, not the last.
    assert!(fit.objective <= 1.0);
}
