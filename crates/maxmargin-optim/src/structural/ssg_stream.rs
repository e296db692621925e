//! The stochastic subgradient method on structural examples read pass by pass (data larger than memory):
//! the source is a problem ([`ExampleStream`]) that [`Streamed<Ssg>`](Streamed) trains under the
//! [`Trainer`](crate::Trainer). The step is [`Ssg`]'s own over a pass, the examples come in the order the
//! source chooses, and every certificate is [`StructProblem::dual_bound`](super::StructProblem::dual_bound)'s
//! construction in one pass of oracle calls, which also gives the primal objective. Memory is that of `w`
//! (and its average), not of the examples.

use super::problem::{bound_point, scaled_bound};
use super::{Ssg, SsgState};
use crate::binary::stream::{
    Carried, Placed, Resumable, StreamPlace, Streamed, certifying, streamed_reports,
};
use crate::error::OptimError;
use crate::trainer::{Budget, Certificate, Progress, Solver};
use maxmargin_core::vector::norm_sq;
use maxmargin_struct::OutputSpace;
use std::cell::{Cell, RefCell};
use std::time::Instant;

/// What a pass hands each example to.
pub type ExampleVisit<'a, S> = dyn FnMut(&<S as OutputSpace>::Input, &<S as OutputSpace>::Output) -> Result<(), OptimError>
    + 'a;

/// Structural examples read pass by pass.
pub trait ExamplePasses<S: OutputSpace>: Resumable {
    /// Examples `n`.
    fn n_examples(&self) -> usize;
    /// Hands every example to `example`, in the order the source chooses.
    ///
    /// # Errors
    /// A read error of the source, or what `example` returns.
    fn pass(&mut self, example: &mut ExampleVisit<'_, S>) -> Result<(), OptimError>;
}

/// Examples read pass by pass in `space` at `λ` as a problem: `λ/2‖w‖² + (1/n)Σ H_i(w)`.
pub struct ExampleStream<'a, S: OutputSpace> {
    source: RefCell<&'a mut dyn ExamplePasses<S>>,
    space: &'a S,
    lambda: f64,
    n: usize,
    pub(crate) carried: RefCell<Carried>,
    passes: Cell<u64>,
}

impl<'a, S: OutputSpace> ExampleStream<'a, S> {
    /// The problem over `source`.
    ///
    /// # Errors
    /// [`OptimError::NoExamples`] for no examples; an invalid `λ`.
    pub fn new(
        source: &'a mut dyn ExamplePasses<S>,
        space: &'a S,
        lambda: f64,
    ) -> Result<Self, OptimError> {
        let n = source.n_examples();
        if n == 0 {
            return Err(OptimError::NoExamples);
        }
        if !(lambda.is_finite() && lambda > 0.0) {
            return Err(crate::error::invalid(
                "lambda",
                lambda,
                "must be finite and > 0",
            ));
        }
        Ok(Self {
            source: RefCell::new(source),
            space,
            lambda,
            n,
            carried: RefCell::new(Carried::new()),
            passes: Cell::new(0),
        })
    }

    /// Passes over the source so far, the certificates' included.
    pub fn passes(&self) -> u64 {
        self.passes.get()
    }

    fn pass(&self, example: &mut ExampleVisit<'_, S>) -> Result<(), OptimError> {
        self.passes.set(self.passes.get() + 1);
        self.source.borrow_mut().pass(example)
    }

    /// The primal objective at `w` (at `p`) and the dual bound of
    /// [`super::StructProblem::dual_bound`], in one pass (none when asked again at the same `p`).
    fn certify(&self, p: Progress, w: impl FnOnce() -> Vec<f64>) -> Result<f64, OptimError> {
        if let Some(objective) = self.carried.borrow().at(p) {
            return Ok(objective);
        }
        certifying(&self.source, || self.certify_at(p, &w()))
    }

    fn certify_at(&self, p: Progress, w: &[f64]) -> Result<f64, OptimError> {
        let (space, lambda, n) = (self.space, self.lambda, self.n);
        let mut ws = vec![0.0; space.dim()];
        let (mut hinge, mut ell) = (0.0, 0.0);
        self.pass(&mut |x, y| {
            let v = space.loss_augmented(w, x, y)?;
            hinge += v.upper();
            bound_point(space, (x, y, &v), (lambda, n), &mut ws, &mut ell);
            Ok(())
        })?;
        let objective = 0.5 * lambda * norm_sq(w) + hinge / n as f64;
        let bound = scaled_bound(lambda, &ws, ell);
        self.carried.borrow_mut().keep(p, objective, bound);
        Ok(objective)
    }
}

impl<S: OutputSpace> Placed for ExampleStream<'_, S> {
    fn place(&self) -> Result<StreamPlace, OptimError> {
        StreamPlace::of(&self.passes, &self.carried, &self.source)
    }

    fn restore(&self, place: StreamPlace) -> Result<(), OptimError> {
        place.restore(
            (self.space.dim(), None),
            &self.passes,
            &self.carried,
            &self.source,
        )
    }
}

impl<'a, S: OutputSpace> Solver<ExampleStream<'a, S>> for Streamed<Ssg> {
    type State = SsgState;
    type Output = Vec<f64>;

    fn init(&mut self, problem: &ExampleStream<'a, S>) -> Result<SsgState, OptimError> {
        Ok(self.solver().init_streamed(problem.space.dim(), problem.n))
    }

    fn check_state(&self, problem: &ExampleStream<'a, S>, st: &SsgState) -> Result<(), OptimError> {
        st.check(problem.space.dim(), problem.n)
    }

    fn step(
        &mut self,
        problem: &ExampleStream<'a, S>,
        st: &mut SsgState,
    ) -> Result<(), OptimError> {
        let (ssg, space, lambda, limits) =
            (self.solver(), problem.space, problem.lambda, self.limits);
        let mut stopped = false;
        problem.pass(&mut |x, y| {
            if stopped {
                return Ok(());
            }
            st.sampler.next_index();
            let v = space.loss_augmented(Ssg::current(st), x, y)?;
            ssg.apply(st, space, (x, y, &v), lambda);
            stopped = limits.reached(st.t, st.sampler.epochs());
            Ok(())
        })
    }

    fn progress(&self, _problem: &ExampleStream<'a, S>, st: &SsgState) -> Progress {
        Progress {
            iteration: st.t,
            epoch: st.sampler.epochs(),
        }
    }

    fn output(&self, _problem: &ExampleStream<'a, S>, st: &SsgState) -> Vec<f64> {
        Ssg::weights(st)
    }

    streamed_reports!(ExampleStream<'a, S>);
}
