//! The trainer's budgets, tolerance and observers.

use crate::{data, lambda};
use maxmargin_optim::{
    Bias, BinaryProblem, Budget, Observer, OptimError, PegasosParams, Progress, StopReason,
    TraceRecord, Trainer,
};

struct Count {
    steps: u64,
    evals: Vec<TraceRecord>,
}

impl Observer for Count {
    fn on_step(&mut self, _p: Progress) {
        self.steps += 1;
    }
    fn on_eval(&mut self, r: &TraceRecord) {
        self.evals.push(r.clone());
    }
}

fn problem_data() -> (maxmargin_core::vector::SparseRows, Vec<f64>) {
    let rows: Vec<Vec<f64>> = (0..10).map(|i| vec![f64::from(i) - 4.5, 1.0]).collect();
    let dense: Vec<(&[f64], f64)> = rows.iter().map(|r| (r.as_slice(), r[0].signum())).collect();
    data(&dense)
}

#[test]
fn epochs_budget_and_one_eval_per_epoch() {
    let (x, y) = problem_data();
    let problem = BinaryProblem::new(&x, &y, lambda(0.1), Bias::None).unwrap();
    let mut s = PegasosParams::new().batch_size(2).check().unwrap();
    let mut obs = Count {
        steps: 0,
        evals: Vec::new(),
    };
    let fit = Trainer::new(Budget::epochs(3.0))
        .unwrap()
        .run(&mut s, &problem, &mut obs)
        .unwrap();
    assert_eq!(fit.stop, StopReason::MaxEpochs);
    assert_eq!(obs.steps, 15);
    assert_eq!(fit.trace.len(), 3);
    assert_eq!(obs.evals, fit.trace);
    assert_eq!(fit.trace.last().unwrap().objective, fit.objective);
    assert_eq!(
        fit.trace.iter().map(|r| r.epoch).collect::<Vec<_>>(),
        vec![1.0, 2.0, 3.0]
    );
}

#[test]
fn tolerance_stops_early() {
    let (x, y) = problem_data();
    let problem = BinaryProblem::new(&x, &y, lambda(0.1), Bias::None).unwrap();
    let mut s = PegasosParams::new().average(true).check().unwrap();
    let budget = Budget::epochs(10_000.0).with_tolerance(1e-2);
    let fit = Trainer::new(budget)
        .unwrap()
        .run(&mut s, &problem, &mut ())
        .unwrap();
    assert_eq!(fit.stop, StopReason::Tolerance);
    assert!(fit.progress.epoch < 10_000.0);
}

#[test]
fn bad_budgets_and_problems_are_errors() {
    let mut none = Budget::epochs(1.0);
    none.max_epochs = None;
    assert_eq!(Trainer::new(none).unwrap_err(), OptimError::Unbounded);
    assert!(matches!(
        Trainer::new(Budget::epochs(f64::NAN)),
        Err(OptimError::InvalidParam { .. })
    ));
    let (x, _) = problem_data();
    let y = vec![1.0; 9];
    assert!(matches!(
        BinaryProblem::new(&x, &y, lambda(0.1), Bias::None),
        Err(OptimError::LengthMismatch {
            rows: 10,
            targets: 9
        })
    ));
    let mut y = vec![1.0; 10];
    y[3] = 0.0;
    assert!(matches!(
        BinaryProblem::new(&x, &y, lambda(0.1), Bias::None),
        Err(OptimError::BadTarget { index: 3, .. })
    ));
}

#[test]
fn resuming_continues_exactly() {
    let (x, y) = problem_data();
    let problem = BinaryProblem::new(&x, &y, lambda(0.1), Bias::Feature).unwrap();
    let params = PegasosParams::new()
        .average(true)
        .batch_size(3)
        .sampling(maxmargin_optim::Sampling::Uniform)
        .seed(4);
    let straight = Trainer::new(Budget::epochs(10.0))
        .unwrap()
        .run(&mut params.check().unwrap(), &problem, &mut ())
        .unwrap();
    let mut s = params.check().unwrap();
    let state = maxmargin_optim::Solver::init(&mut s, &problem).unwrap();
    let (half, state) = Trainer::new(Budget::epochs(5.0))
        .unwrap()
        .run_from(&mut s, &problem, state, &mut ())
        .unwrap();
    assert!(half.progress.epoch < 6.0);
    let (rest, _) = Trainer::new(Budget::epochs(10.0))
        .unwrap()
        .run_from(&mut s, &problem, state, &mut ())
        .unwrap();
    let bits = |w: &[f64]| w.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&rest.output.w), bits(&straight.output.w));
    assert_eq!(rest.output.b.to_bits(), straight.output.b.to_bits());
    assert_eq!(rest.progress, straight.progress);
}

#[test]
fn keep_best_returns_the_lowest_evaluated_objective() {
    // Pegasos' last iterate with a large constant step oscillates; the kept best is the lowest evaluation.
    let (x, y) = problem_data();
    let problem = BinaryProblem::new(&x, &y, lambda(0.1), Bias::None).unwrap();
    let params = PegasosParams::new()
        .step(maxmargin_optim::StepRule::Constant(2.0))
        .seed(1);
    let budget = Budget::epochs(30.0).keeping_best();
    let fit = Trainer::new(budget)
        .unwrap()
        .run(&mut params.check().unwrap(), &problem, &mut ())
        .unwrap();
    let lowest = fit
        .trace
        .iter()
        .map(|r| r.objective)
        .fold(f64::INFINITY, f64::min);
    assert_eq!(fit.objective, lowest);
    assert!((problem.objective(&fit.output) - lowest).abs() < 1e-12);
    let last = Trainer::new(Budget::epochs(30.0))
        .unwrap()
        .run(&mut params.check().unwrap(), &problem, &mut ())
        .unwrap();
    assert!(fit.objective <= last.objective);
}

/// Asks the run to stop after `after` steps (as the Python bindings do on Ctrl-C).
struct StopAfter {
    after: u64,
    steps: u64,
}

impl Observer for StopAfter {
    fn on_step(&mut self, _p: Progress) {
        self.steps += 1;
    }
    fn stop_requested(&mut self) -> bool {
        self.steps >= self.after
    }
}

#[test]
fn a_stop_asked_by_the_observer_ends_the_run_at_that_step_evaluated_and_certified() {
    let (x, y) = problem_data();
    let problem = BinaryProblem::new(&x, &y, lambda(0.1), Bias::None).unwrap();
    let mut dcd = maxmargin_optim::DcdParams::new()
        .epsilon(1e-12)
        .check()
        .unwrap();
    let mut obs = StopAfter { after: 3, steps: 0 };
    let fit = Trainer::new(Budget::epochs(1e6))
        .unwrap()
        .run(&mut dcd, &problem, &mut obs)
        .unwrap();
    assert_eq!(fit.stop, StopReason::Interrupted);
    assert_eq!(fit.progress.iteration, 3);
    assert_eq!(fit.stop.to_string(), "interrupted");
    // The last record is the stopped weights' objective with its certificate.
    let last = fit.trace.last().unwrap();
    assert_eq!(last.objective, fit.objective);
    assert!(last.gap.unwrap() >= -1e-12);
}

/// A solver whose objective at step `t` is `OBJECTIVES[t - 1]` (one step a pass), its output the step.
struct Scripted;

const OBJECTIVES: [f64; 6] = [3.0, 1.0, 2.0, 5.0, 1.5, 6.0];

impl maxmargin_optim::Solver<()> for Scripted {
    type State = u64;
    type Output = u64;
    fn init(&mut self, _: &()) -> Result<u64, maxmargin_optim::OptimError> {
        Ok(0)
    }
    fn step(&mut self, _: &(), t: &mut u64) -> Result<(), maxmargin_optim::OptimError> {
        *t += 1;
        Ok(())
    }
    fn progress(&self, _: &(), t: &u64) -> maxmargin_optim::Progress {
        maxmargin_optim::Progress {
            iteration: *t,
            epoch: *t as f64,
        }
    }
    fn output(&self, _: &(), t: &u64) -> u64 {
        *t
    }
    fn objective(&self, _: &(), t: &u64) -> Result<f64, maxmargin_optim::OptimError> {
        Ok(OBJECTIVES[(*t as usize).clamp(1, OBJECTIVES.len()) - 1])
    }
}

/// A run that ends on its budget above an evaluated objective it had reached after the objective first
/// rose returns that output (step 5, objective 1.5, not the last step's 6); what came before the first
/// rise is not copied (step 2's 1.0 is what keep_best finds).
#[test]
fn a_run_cut_short_above_its_best_evaluation_since_a_rise_returns_that_one() {
    let run = |budget: Budget| {
        Trainer::new(budget.evaluating_every(1.0))
            .unwrap()
            .run(&mut Scripted, &(), &mut ())
            .unwrap()
    };
    let fit = run(Budget::epochs(6.0));
    assert_eq!((fit.output, fit.objective), (5, 1.5));
    assert_eq!(fit.stop, StopReason::MaxEpochs);
    let kept = run(Budget::epochs(6.0).keeping_best());
    assert_eq!((kept.output, kept.objective), (2, 1.0));
    // Cut at step 4 (objective 5): step 3's 2.0 is the best since the rise.
    let early = run(Budget::epochs(4.0));
    assert_eq!((early.output, early.objective), (3, 2.0));
}

/// The best since a rise is a function of the unwatched run: resumed from the checkpoint of a run cut at
/// any step it is what the uninterrupted run returns; evaluations made only for a watcher (stops tested at
/// none of them) keep nothing; a trainer keeping the last output keeps it.
#[test]
fn the_best_since_a_rise_resumes_exactly_and_ignores_watchers() {
    let trainer = |epochs: f64| Trainer::new(Budget::epochs(epochs).evaluating_every(1.0)).unwrap();
    let whole = trainer(6.0).run(&mut Scripted, &(), &mut ()).unwrap();
    for cut in 1..6 {
        let first = trainer(f64::from(cut));
        let run = first.start(&Scripted, &(), 0);
        let (_, run) = first
            .resume(&mut Scripted, &(), run, &mut (), None)
            .unwrap();
        let (fit, _) = trainer(6.0)
            .resume(&mut Scripted, &(), run, &mut (), None)
            .unwrap();
        assert_eq!(
            (fit.output, fit.objective),
            (whole.output, whole.objective),
            "cut at {cut}"
        );
    }
    let watched = trainer(6.0).stopping_every(Some(f64::INFINITY)).unwrap();
    let fit = watched.run(&mut Scripted, &(), &mut ()).unwrap();
    assert_eq!((fit.output, fit.objective), (6, 6.0));
    let last = trainer(6.0)
        .keeping_the_last()
        .run(&mut Scripted, &(), &mut ())
        .unwrap();
    assert_eq!((last.output, last.objective), (6, 6.0));
}
