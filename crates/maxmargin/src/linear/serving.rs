//! What a binary model costs to serve, measured on this machine: batch rows per second and the latency of
//! one row scored in process after a warm-up (`bench-predict`, `compare`).

use super::DecisionModel;
use maxmargin_core::vector::SparseRows;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// How long to measure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServingBudget {
    /// The batch is scored again until this many seconds have passed.
    pub batch_seconds: f64,
    /// Rows scored one at a time before the timed ones.
    pub warm_up: usize,
    /// Rows timed one at a time (cycling through the data), or as many as fit in `timed_seconds` (at least
    /// `min_timed`).
    pub timed_rows: usize,
    /// See `timed_rows`.
    pub timed_seconds: f64,
    /// See `timed_rows`.
    pub min_timed: usize,
}

impl Default for ServingBudget {
    fn default() -> Self {
        Self {
            batch_seconds: 0.5,
            warm_up: 200,
            timed_rows: 10_000,
            timed_seconds: 2.0,
            min_timed: 100,
        }
    }
}

/// Serving speed of a model on some rows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ServingSpeed {
    /// Rows scored per batch.
    pub rows: usize,
    /// Batches scored.
    pub batch_rounds: usize,
    /// Rows timed one at a time.
    pub timed_rows: usize,
    /// Batch throughput.
    pub rows_per_second: f64,
    /// Median latency of one row, microseconds.
    pub p50_us: f64,
    /// 99th percentile latency of one row, microseconds.
    pub p99_us: f64,
    /// Largest latency of one row, microseconds.
    pub max_us: f64,
}

/// Measures `model` on the rows of `x` (at least one): the batch as [`DecisionModel::predict_rows`] scores
/// it, then one row at a time as a server scores a request.
pub fn measure(model: &DecisionModel, x: &SparseRows, budget: ServingBudget) -> ServingSpeed {
    let n = x.n_rows().max(1);
    let (mut rounds, start) = (0usize, Instant::now());
    while rounds == 0 || start.elapsed().as_secs_f64() < budget.batch_seconds {
        std::hint::black_box(model.predict_rows(x));
        rounds += 1;
    }
    let rows_per_second = (rounds * x.n_rows()) as f64 / start.elapsed().as_secs_f64();
    let row = |i: usize| x.row(i % n);
    let score = |i: usize| std::hint::black_box(model.model.decision_function(row(i)));
    if x.n_rows() == 0 {
        return ServingSpeed {
            rows: 0,
            batch_rounds: rounds,
            timed_rows: 0,
            rows_per_second: 0.0,
            p50_us: 0.0,
            p99_us: 0.0,
            max_us: 0.0,
        };
    }
    for i in 0..budget.warm_up {
        score(i);
    }
    let begun = Instant::now();
    let mut us = Vec::with_capacity(budget.timed_rows);
    for i in 0..budget.timed_rows.max(1) {
        if i >= budget.min_timed && begun.elapsed().as_secs_f64() > budget.timed_seconds {
            break;
        }
        let t = Instant::now();
        score(i);
        us.push(t.elapsed().as_secs_f64() * 1e6);
    }
    us.sort_by(f64::total_cmp);
    let at = |q: f64| us[((q * us.len() as f64).ceil() as usize).clamp(1, us.len()) - 1];
    ServingSpeed {
        rows: x.n_rows(),
        batch_rounds: rounds,
        timed_rows: us.len(),
        rows_per_second,
        p50_us: at(0.5),
        p99_us: at(0.99),
        max_us: us[us.len() - 1],
    }
}
