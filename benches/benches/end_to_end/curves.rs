//! Solver curves in process: each solver stepped with the clock running only inside `step`, the objective
//! evaluated after every pass off the clock, until the target precision.

use super::*;

/// The problem every solver of a dataset runs on, and how a solver's output is judged: its training
/// objective, its test accuracy, and the objective to reach.
pub(super) struct Judge<'a, P, O> {
    pub(super) problem: &'a P,
    pub(super) objective: &'a dyn Fn(&O) -> f64,
    pub(super) accuracy: &'a dyn Fn(&O) -> f64,
    pub(super) target: f64,
}

impl<P, O> Judge<'_, P, O> {
    /// Drives a solver pass by pass, the clock running only inside `step`, the objective evaluated after
    /// every pass off the clock, until the target, the solver's own stop, or the caps.
    pub(super) fn curve<S: Solver<P, Output = O>>(
        &self,
        name: &str,
        mut solver: S,
        max_passes: f64,
    ) -> Option<Curve> {
        let (problem, objective, accuracy, target) =
            (self.problem, self.objective, self.accuracy, self.target);
        let every = 1.0;
        let mut state = solver.init(problem).ok()?;
        let mut points = Vec::new();
        let mut seconds = 0.0;
        let mut next = every;
        let mut reached = None;
        let mut last = None;
        loop {
            let start = Instant::now();
            solver.step(problem, &mut state).ok()?;
            seconds += start.elapsed().as_secs_f64();
            let passes = solver.progress(problem, &state).epoch;
            let done =
                solver.stop(&state).is_some() || seconds > CURVE_SECONDS || passes >= max_passes;
            if passes + 1e-12 >= next || done {
                while next <= passes + 1e-12 {
                    next += every;
                }
                let out = solver.output(problem, &state);
                let o = objective(&out);
                points.push(Point {
                    seconds,
                    passes,
                    objective: o,
                });
                if o <= target {
                    reached = Some((seconds, passes));
                    last = Some(out);
                    break;
                }
                last = Some(out);
            }
            if done {
                break;
            }
        }
        Some(Curve {
            solver: name.into(),
            points,
            reached,
            test_accuracy: last.map_or(f64::NAN, |o| accuracy(&o)),
        })
    }
}
