//! Criterion micro-benchmarks of the hot loops: sparse dot and axpy over a dataset, one Pegasos epoch, one
//! DCD pass, loss-augmented Viterbi. Data is built outside the timed part; ids name the sizes.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use maxmargin::core::objective::Lambda;
use maxmargin::core::vector::SparseVec;
use maxmargin::io::libsvm::{BinaryLabels, LabeledData};
use maxmargin::optim::{Bias, BinaryProblem, DcdParams, PegasosParams, Solver};
use maxmargin::structured::{ChainSpace, OutputSpace};
use maxmargin_benches::{binary_sets, thousands};
use std::hint::black_box;

/// The data's two classes as ±1 targets.
fn targets(data: &LabeledData) -> Option<Vec<f64>> {
    BinaryLabels::from_labels(&data.source, &data.labels)
        .ok()?
        .targets(data)
        .ok()
}

/// The binary problem at `lambda` with the bias as a feature.
fn problem<'a>(data: &'a LabeledData, y: &'a [f64], lambda: f64) -> Option<BinaryProblem<'a>> {
    BinaryProblem::new(&data.x, y, Lambda::new(lambda).ok()?, Bias::Feature).ok()
}

fn sparse_pass(c: &mut Criterion) {
    let mut group = c.benchmark_group("sparse_pass");
    for (name, data) in binary_sets() {
        let id = format!(
            "{name}/{}feat-{}rows",
            data.x.n_features(),
            thousands(data.n_samples())
        );
        let w: Vec<f64> = (0..data.x.n_features())
            .map(|j| (j % 7) as f64 * 0.1 - 0.3)
            .collect();
        group.throughput(Throughput::Elements(data.x.nnz() as u64));
        group.bench_with_input(BenchmarkId::new("dot", &id), &data, |b, d| {
            b.iter(|| d.x.rows().map(|r| r.dot(black_box(&w))).sum::<f64>())
        });
        let mut acc = vec![0.0; data.x.n_features()];
        group.bench_with_input(BenchmarkId::new("axpy", &id), &data, |b, d| {
            b.iter(|| {
                for r in d.x.rows() {
                    r.axpy(black_box(1e-3), &mut acc);
                }
            })
        });
    }
    group.finish();
}

fn pegasos_epoch(c: &mut Criterion) {
    let mut group = c.benchmark_group("pegasos_epoch");
    group.sample_size(20);
    for (name, data) in binary_sets() {
        let Some(y) = targets(&data) else {
            continue;
        };
        let n = data.n_samples();
        let Some(problem) = problem(&data, &y, 1e-4) else {
            continue;
        };
        let id = format!("{name}/{}feat-{}rows", data.x.n_features(), thousands(n));
        group.throughput(Throughput::Elements(data.x.nnz() as u64));
        for average in [false, true] {
            let label = if average { "averaged" } else { "last" };
            let Ok(solver) = PegasosParams::new().average(average).seed(1).check() else {
                continue;
            };
            group.bench_function(BenchmarkId::new(label, &id), |b| {
                b.iter_batched(
                    || (solver, solver.clone().init(&problem)),
                    |(mut solver, state)| {
                        let mut state = state.ok()?;
                        for _ in 0..n {
                            solver.step(&problem, &mut state).ok()?;
                        }
                        Some(state)
                    },
                    criterion::BatchSize::LargeInput,
                )
            });
        }
    }
    group.finish();
}

/// One full DCD pass from `α = 0` (shrinking off, so every example is visited), C = 1.
fn dcd_pass(c: &mut Criterion) {
    let mut group = c.benchmark_group("dcd_pass");
    group.sample_size(20);
    for (name, data) in binary_sets() {
        let Some(y) = targets(&data) else {
            continue;
        };
        let n = data.n_samples();
        let Some(problem) = problem(&data, &y, 1.0 / n as f64) else {
            continue;
        };
        let Ok(solver) = DcdParams::new().shrinking(false).seed(1).check() else {
            continue;
        };
        let id = format!("{name}/{}feat-{}rows", data.x.n_features(), thousands(n));
        group.throughput(Throughput::Elements(data.x.nnz() as u64));
        group.bench_function(BenchmarkId::new("hinge", &id), |b| {
            b.iter_batched(
                || (solver, solver.clone().init(&problem)),
                |(mut solver, state)| {
                    let mut state = state.ok()?;
                    solver.step(&problem, &mut state).ok()?;
                    Some(state)
                },
                criterion::BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

/// Loss-augmented Viterbi on synthetic chains: T positions, L labels, d features with 20 non-zeros each.
fn viterbi(c: &mut Criterion) {
    let mut group = c.benchmark_group("loss_augmented_viterbi");
    for (t, l, d) in [(10, 26, 128), (25, 22, 10_000)] {
        let Ok(space) = ChainSpace::new(d, l) else {
            continue;
        };
        let mut state = 7u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as usize
        };
        let x: Vec<SparseVec> = (0..t)
            .map(|_| {
                let mut idx: Vec<u32> = (0..20).map(|_| (next() % d) as u32).collect();
                idx.sort_unstable();
                idx.dedup();
                let val = vec![1.0; idx.len()];
                SparseVec::new(idx, val).unwrap_or_default()
            })
            .collect();
        let y: Vec<u32> = (0..t).map(|_| (next() % l) as u32).collect();
        let w: Vec<f64> = (0..space.dim())
            .map(|_| (next() % 2001) as f64 / 1000.0 - 1.0)
            .collect();
        let id = format!("T{t}-L{l}-d{}", thousands(d));
        group.throughput(Throughput::Elements((t * l * l) as u64));
        group.bench_function(BenchmarkId::new("chain", &id), |b| {
            b.iter(|| space.loss_augmented(black_box(&w), &x, &y))
        });
    }
    group.finish();
}

criterion_group!(benches, sparse_pass, pegasos_epoch, dcd_pass, viterbi);
criterion_main!(benches);
