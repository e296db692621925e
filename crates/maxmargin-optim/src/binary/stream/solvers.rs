//! Pegasos and the batch subgradient method on a [`RowStream`]: a step is a pass of the solver's own steps.

use super::{RowStream, Streamed, streamed_reports};
use crate::binary::pegasos::{Geometry, PegasosState};
use crate::error::{OptimError, all_finite, fits};
use crate::problem::LinearWeights;
use crate::subgradient::{PassSums, SubgradientState};
use crate::trainer::{Budget, Certificate, Progress, Solver};
use crate::{Pegasos, Subgradient};
use maxmargin_core::vector::SparseRows;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Pegasos between two passes: its state and the batch being drawn (a batch may span two passes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamedPegasos {
    state: PegasosState,
    batch: SparseRows,
    ys: Vec<f64>,
    cs: Vec<f64>,
}

impl StreamedPegasos {
    /// Pegasos' state.
    pub fn state(&self) -> &PegasosState {
        &self.state
    }
}

impl<'a> Solver<RowStream<'a>> for Streamed<Pegasos> {
    type State = StreamedPegasos;
    type Output = LinearWeights;

    fn init(&mut self, problem: &RowStream<'a>) -> Result<StreamedPegasos, OptimError> {
        problem.require_hinge("pegasos")?;
        self.solver.params().check_batch(problem.n)?;
        let k = self.solver.params().batch_size;
        Ok(StreamedPegasos {
            state: self
                .solver
                .init_streamed(problem.n, problem.d, problem.bias),
            batch: SparseRows::new(),
            ys: Vec::with_capacity(k),
            cs: Vec::with_capacity(k),
        })
    }

    /// Pegasos' own checks, and a batch of fewer rows than its size with their targets and weights.
    fn check_state(&self, problem: &RowStream<'a>, s: &StreamedPegasos) -> Result<(), OptimError> {
        let (n, d) = (problem.n, problem.d);
        s.state.check(n, d, problem.bias)?;
        fits(s.batch.is_valid(), "the batch being drawn")?;
        let rows = s.batch.n_rows();
        fits(
            rows < self.solver.params().batch_size
                && rows == s.ys.len()
                && rows == s.cs.len()
                && rows == s.state.last.len()
                && s.batch
                    .rows()
                    .all(|x| x.indices().iter().all(|&j| (j as usize) < d))
                && s.batch.rows().all(|x| all_finite(x.values()))
                && s.ys.iter().all(|&y| y == 1.0 || y == -1.0)
                && s.cs.iter().all(|&c| c.is_finite() && c >= 0.0),
            "the batch being drawn",
        )
    }

    fn step(&mut self, problem: &RowStream<'a>, s: &mut StreamedPegasos) -> Result<(), OptimError> {
        let k = self.solver.params().batch_size;
        let at = Geometry {
            lambda: problem.lambda,
            bias: problem.bias,
            n: problem.n,
            d: problem.d,
        };
        let (pegasos, limits) = (&self.solver, self.limits);
        let mut stopped = false;
        problem.pass(&mut |x, y, c| {
            if stopped {
                return Ok(());
            }
            let StreamedPegasos {
                state,
                batch,
                ys,
                cs,
            } = &mut *s;
            batch
                .push_row(x.indices(), x.values())
                .map_err(OptimError::Core)?;
            ys.push(y);
            cs.push(c);
            let i = state.sampler.next_index();
            state.last.push((i, 0.0));
            if ys.len() < k {
                return Ok(());
            }
            pegasos.advance(state, at, |m, _| (batch.row(m), ys[m], cs[m]));
            batch.clear();
            ys.clear();
            cs.clear();
            state.last.clear();
            stopped = limits.reached(state.t, state.sampler.epochs());
            Ok(())
        })
    }

    fn progress(&self, _problem: &RowStream<'a>, s: &StreamedPegasos) -> Progress {
        Progress {
            iteration: s.state.t,
            epoch: s.state.sampler.epochs(),
        }
    }

    fn output(&self, problem: &RowStream<'a>, s: &StreamedPegasos) -> LinearWeights {
        self.solver.weights(&s.state, problem.d, problem.bias)
    }

    streamed_reports!(RowStream<'a>);
}

impl<'a> Solver<RowStream<'a>> for Streamed<Subgradient> {
    type State = SubgradientState;
    type Output = LinearWeights;

    /// The first pass evaluates `w = 0` and keeps it as the best so far, as in memory.
    fn init(&mut self, problem: &RowStream<'a>) -> Result<SubgradientState, OptimError> {
        problem.require_hinge("subgradient")?;
        Ok(Subgradient::fresh(problem.d, f64::INFINITY))
    }

    fn check_state(&self, problem: &RowStream<'a>, s: &SubgradientState) -> Result<(), OptimError> {
        s.check(problem.d)
    }

    fn step(
        &mut self,
        problem: &RowStream<'a>,
        s: &mut SubgradientState,
    ) -> Result<(), OptimError> {
        let (lambda, bias) = (problem.lambda, problem.bias);
        let mut grad = std::mem::take(&mut s.grad);
        let mut sums = PassSums::begin(&s.current, lambda, bias, problem.n, &mut grad);
        let current = &s.current;
        let read = problem.pass(&mut |x, y, c| {
            let z = y * (x.dot(&current.w) + current.b);
            sums.add(x, y, c, z, &mut grad);
            Ok(())
        });
        s.grad = grad;
        read?;
        self.solver
            .advance(s, sums.end(&s.current, lambda, bias), lambda, bias);
        Ok(())
    }

    fn progress(&self, _problem: &RowStream<'a>, s: &SubgradientState) -> Progress {
        Progress {
            iteration: s.k,
            epoch: s.k as f64,
        }
    }

    /// The best iterate evaluated by the steps' passes.
    fn output(&self, _problem: &RowStream<'a>, s: &SubgradientState) -> LinearWeights {
        s.best.clone()
    }

    streamed_reports!(RowStream<'a>);
}
