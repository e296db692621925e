//! Criterion micro-benchmarks of the hot loops: sparse dot and axpy over a dataset, one Pegasos epoch.
//! Data is built outside the timed part; ids name the sizes.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use maxmargin::core::objective::Lambda;
use maxmargin::io::libsvm::BinaryLabels;
use maxmargin::optim::{Bias, BinaryProblem, PegasosParams, Solver};
use maxmargin_benches::{binary_sets, thousands};
use std::hint::black_box;

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
        let Ok(labels) = BinaryLabels::from_labels(&data.source, &data.labels) else {
            continue;
        };
        let Ok(y) = labels.targets(&data) else {
            continue;
        };
        let Ok(lambda) = Lambda::new(1e-4) else {
            continue;
        };
        let Ok(problem) = BinaryProblem::new(&data.x, &y, lambda, Bias::Feature) else {
            continue;
        };
        let n = data.n_samples();
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

criterion_group!(benches, sparse_pass, pegasos_epoch);
criterion_main!(benches);
