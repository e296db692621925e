//! Pegasos: the hand table, and agreement with a naive dense implementation in every mode.

use crate::{data, lambda};
use maxmargin_core::vector::SparseRows;
use maxmargin_optim::pegasos::PegasosState;
use maxmargin_optim::{
    Bias, BinaryProblem, Budget, Pegasos, PegasosParams, Sampling, Solver, StepRule, Trainer,
};
use proptest::prelude::*;

/// The lecture's hand table: A = (2,1), +1; B = (−1,−2), −1; C = 1 (λ = 1/C); no bias; alternating;
/// η_t = 1/t; w₁ = 0. The rendered table is snapshotted by the facade (`maxmargin::worked`).
#[test]
fn pegasos_hand_table() {
    let (x, y) = data(&[(&[2.0, 1.0], 1.0), (&[-1.0, -2.0], -1.0)]);
    let problem = BinaryProblem::new(&x, &y, lambda(1.0), Bias::None).unwrap();
    let mut solver = PegasosParams::new()
        .sampling(Sampling::Cyclic)
        .check()
        .unwrap();
    let mut state = solver.init(&problem).unwrap();
    let expect_w = [
        (2.0, 1.0),
        (1.0, 0.5),
        (2.0 / 3.0, 1.0 / 3.0),
        (0.5, 0.25),
        (0.4, 0.2),
        (0.5, 0.5),
    ];
    let expect_z = [0.0, 4.0, 2.5, 4.0 / 3.0, 1.25, 0.8];
    for t in 0..6 {
        solver.step(&problem, &mut state).unwrap();
        let (i, z) = state.last[0];
        let w = solver.output(&problem, &state).w;
        assert_eq!(i, t % 2, "alternating A, B");
        assert!(
            (w[0] - expect_w[t].0).abs() < 1e-12 && (w[1] - expect_w[t].1).abs() < 1e-12,
            "t={t}: {w:?}"
        );
        assert!((z - expect_z[t]).abs() < 1e-12, "t={t}: margin {z}");
    }
}

/// A naive dense Pegasos with O(d) steps, the reference for the `w = s·v` implementation.
#[allow(clippy::too_many_arguments)]
fn naive(
    x: &SparseRows,
    y: &[f64],
    lam: f64,
    bias: Bias,
    projection: bool,
    average: Option<f64>,
    k: usize,
    batches: &[Vec<usize>],
) -> (Vec<f64>, f64) {
    let n = x.n_rows();
    let mut count = 0.0;
    let d = x.n_features();
    let (mut w, mut b) = (vec![0.0; d], 0.0);
    let (mut sw, mut sb) = (vec![0.0; d], 0.0);
    for (t0, batch) in batches.iter().enumerate() {
        let t = (t0 + 1) as f64;
        let eta = 1.0 / (lam * t);
        let z: Vec<f64> = batch
            .iter()
            .map(|&i| y[i] * (x.row(i).dot(&w) + b))
            .collect();
        let shrink = 1.0 - 1.0 / t;
        w.iter_mut().for_each(|v| *v *= shrink);
        if bias == Bias::Feature {
            b *= shrink;
        }
        for (m, &i) in batch.iter().enumerate() {
            if z[m] < 1.0 {
                x.row(i).axpy(eta * y[i] / k as f64, &mut w);
                if bias != Bias::None {
                    b += eta * y[i] / k as f64;
                }
            }
        }
        if projection {
            let extra = if bias == Bias::Feature { b * b } else { 0.0 };
            let norm = (w.iter().map(|v| v * v).sum::<f64>() + extra).sqrt();
            let r = 1.0 / lam.sqrt();
            if norm > r {
                w.iter_mut().for_each(|v| *v *= r / norm);
                if bias == Bias::Feature {
                    b *= r / norm;
                }
            }
        }
        if average.is_some_and(|from| (t0 + 1) as f64 * k as f64 >= from * n as f64) {
            sw.iter_mut().zip(&w).for_each(|(s, v)| *s += v);
            sb += b;
            count += 1.0;
        }
    }
    if count > 0.0 {
        (sw.iter().map(|s| s / count).collect(), sb / count)
    } else {
        (w, b)
    }
}

fn bias_mode() -> impl Strategy<Value = Bias> {
    prop_oneof![
        Just(Bias::None),
        Just(Bias::Unregularized),
        Just(Bias::Feature)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn scaled_representation_matches_naive_dense_updates(
        rows in prop::collection::vec((prop::collection::vec(-2.0..2.0f64, 4), any::<bool>()), 2..12),
        lam in prop_oneof![Just(1e-6), 1e-3..2.0f64],
        bias in bias_mode(),
        projection in any::<bool>(),
        average in prop_oneof![Just(None), Just(Some(0.0)), Just(Some(1.0)), Just(Some(2.5))],
        k in 1..4usize,
        sampling in prop_oneof![Just(Sampling::Uniform), Just(Sampling::Permutation), Just(Sampling::Cyclic)],
        steps in 1..60u64,
        seed in any::<u64>(),
    ) {
        let dense: Vec<(&[f64], f64)> = rows.iter().map(|(r, p)| (r.as_slice(), if *p { 1.0 } else { -1.0 })).collect();
        let (x, y) = data(&dense);
        // A batch is at most the rows (PegasosParams refuses more).
        let k = k.min(rows.len());
        let problem = BinaryProblem::new(&x, &y, lambda(lam), bias).unwrap();
        let mut solver = PegasosParams::new()
            .batch_size(k).projection(projection).average(average.is_some())
            .average_from_epoch(average.unwrap_or(0.0)).sampling(sampling).seed(seed)
            .check().unwrap();
        let mut st: PegasosState = solver.init(&problem).unwrap();
        let mut batches = Vec::new();
        for _ in 0..steps {
            solver.step(&problem, &mut st).unwrap();
            batches.push(st.last.iter().map(|&(i, _)| i).collect::<Vec<_>>());
        }
        let got = solver.output(&problem, &st);
        let (w, b) = naive(&x, &y, lam, bias, projection, average, k, &batches);
        let scale = 1.0 + w.iter().fold(b.abs(), |m, v| m.max(v.abs()));
        for (g, e) in got.w.iter().zip(&w) {
            prop_assert!((g - e).abs() <= 1e-9 * scale, "w: {:?} vs {:?}", got.w, w);
        }
        prop_assert!((got.b - b).abs() <= 1e-9 * scale, "b: {} vs {}", got.b, b);
    }
}

#[test]
fn permutation_touches_every_example_once_per_epoch() {
    let rows: Vec<Vec<f64>> = (0..7).map(|i| vec![f64::from(i) + 1.0]).collect();
    let dense: Vec<(&[f64], f64)> = rows.iter().map(|r| (r.as_slice(), 1.0)).collect();
    let (x, y) = data(&dense);
    let problem = BinaryProblem::new(&x, &y, lambda(0.1), Bias::None).unwrap();
    let mut solver = PegasosParams::new().seed(3).check().unwrap();
    let mut st = solver.init(&problem).unwrap();
    for _epoch in 0..3 {
        let mut seen = Vec::new();
        for _ in 0..7 {
            solver.step(&problem, &mut st).unwrap();
            seen.push(st.last[0].0);
        }
        seen.sort_unstable();
        assert_eq!(seen, (0..7).collect::<Vec<_>>());
    }
}

#[test]
fn same_seed_same_bits_other_seed_other_weights() {
    let rows: Vec<Vec<f64>> = (0..40)
        .map(|i| vec![f64::from(i % 7) - 3.0, f64::from(i % 5) - 2.0, 1.0])
        .collect();
    let dense: Vec<(&[f64], f64)> = rows
        .iter()
        .map(|r| {
            (
                r.as_slice(),
                if r[0] + 0.5 * r[1] > 0.0 { 1.0 } else { -1.0 },
            )
        })
        .collect();
    let (x, y) = data(&dense);
    let problem = BinaryProblem::new(&x, &y, lambda(0.01), Bias::Unregularized).unwrap();
    let run = |seed| {
        let mut s: Pegasos = PegasosParams::new()
            .sampling(Sampling::Uniform)
            .average(true)
            .seed(seed)
            .check()
            .unwrap();
        Trainer::new(Budget::epochs(5.0))
            .unwrap()
            .run(&mut s, &problem, &mut ())
            .unwrap()
    };
    let bits = |w: &[f64]| w.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    let (a, b, c) = (run(7), run(7), run(8));
    assert_eq!(bits(&a.output.w), bits(&b.output.w));
    assert_eq!(a.output.b.to_bits(), b.output.b.to_bits());
    assert_ne!(bits(&a.output.w), bits(&c.output.w));
}

#[test]
fn pegasos_approaches_the_optimum_of_a_separable_problem() {
    // Two clusters; the batch subgradient method with many iterations gives a reference objective.
    let rows: Vec<Vec<f64>> = (0..60)
        .map(|i| {
            let s = if i % 2 == 0 { 1.0 } else { -1.0 };
            vec![
                s * (1.0 + f64::from(i % 5) * 0.1),
                s * 0.5 + f64::from(i % 3) * 0.2 - 0.2,
            ]
        })
        .collect();
    let dense: Vec<(&[f64], f64)> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| (r.as_slice(), if i % 2 == 0 { 1.0 } else { -1.0 }))
        .collect();
    let (x, y) = data(&dense);
    let problem = BinaryProblem::new(&x, &y, lambda(0.1), Bias::None).unwrap();
    let mut reference = maxmargin_optim::SubgradientParams::new().check().unwrap();
    let long = Trainer::new(Budget::iterations(20_000))
        .unwrap()
        .run(&mut reference, &problem, &mut ())
        .unwrap();
    let mut p = PegasosParams::new().average(true).seed(1).check().unwrap();
    let fit = Trainer::new(Budget::epochs(200.0))
        .unwrap()
        .run(&mut p, &problem, &mut ())
        .unwrap();
    assert!(
        fit.objective <= long.objective * 1.01 + 1e-6,
        "{} vs {}",
        fit.objective,
        long.objective
    );
    let _ = StepRule::Pegasos;
}
