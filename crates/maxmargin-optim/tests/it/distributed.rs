//! DCD, Crammer–Singer and Pegasos over ranks (threads as ranks, the protocol MPI runs): the one-process
//! optimum from any number of shards, the same bits for the same number of ranks, one process's bits at
//! P = 1, and a failed rank ends the run with an error. The structural solvers: `distributed_struct.rs`.

use crate::lambda;
use maxmargin_core::testing::Lcg;
use maxmargin_core::vector::SparseRows;
use maxmargin_optim::{
    Bias, BinaryLoss, BinaryProblem, Budget, DcdParams, OptimError, StopReason, ThreadRanks,
    Trainer,
};

/// `n` noisy rows over 20 sparse features, labels from a hidden direction, 10% flipped.
fn data(n: usize) -> (Vec<Vec<f64>>, Vec<f64>) {
    let mut lcg = Lcg::new(9);
    let hidden: Vec<f64> = (0..20).map(|_| lcg.unit() * 2.0 - 1.0).collect();
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let row: Vec<f64> = (0..20)
            .map(|_| {
                if lcg.unit() < 0.3 {
                    lcg.unit() * 2.0 - 1.0
                } else {
                    0.0
                }
            })
            .collect();
        let s: f64 = row.iter().zip(&hidden).map(|(a, b)| a * b).sum();
        let flip = lcg.unit() < 0.1;
        y.push(if (s > 0.0) != flip { 1.0 } else { -1.0 });
        x.push(row);
    }
    (x, y)
}

fn rows(x: &[Vec<f64>]) -> SparseRows {
    let refs: Vec<&[f64]> = x.iter().map(Vec::as_slice).collect();
    let mut m = SparseRows::from_dense_rows(&refs).unwrap();
    m.set_n_features_at_least(20);
    m
}

/// The one-process optimum, to a 1e-10 relative gap.
fn reference(x: &[Vec<f64>], y: &[f64], loss: BinaryLoss, bias: Bias) -> f64 {
    let m = rows(x);
    let problem = BinaryProblem::new(&m, y, lambda(0.01), bias)
        .unwrap()
        .with_loss(loss);
    let mut dcd = DcdParams::new().epsilon(1e-9).check().unwrap();
    let fit = Trainer::new(Budget::epochs(100_000.0).with_gap(1e-10))
        .unwrap()
        .run(&mut dcd, &problem, &mut ())
        .unwrap();
    fit.objective
}

/// Trains over `p` thread ranks, rank `r` holding the `r`-th contiguous share of the rows.
fn distributed(
    x: &[Vec<f64>],
    y: &[f64],
    p: usize,
    loss: BinaryLoss,
    bias: Bias,
    seed: u64,
) -> Vec<(Vec<f64>, f64, f64, StopReason)> {
    let n = x.len();
    ThreadRanks::run(p, |comm| {
        use maxmargin_optim::Collective;
        let (a, b) = (n * comm.rank() / p, n * (comm.rank() + 1) / p);
        let m = rows(&x[a..b]);
        let problem = BinaryProblem::new(&m, &y[a..b], lambda(0.01), bias)?.with_loss(loss);
        let dcd = DcdParams::new().epsilon(1e-3).seed(seed).check()?;
        let mut ranked = dcd.with_gap_target(Some(1e-6)).over_ranks(comm, n);
        let budget = Budget::epochs(5000.0).with_gap(1e-6).evaluating_every(5.0);
        let fit = Trainer::new(budget)?.run_over(comm, &mut ranked, &problem, &mut ())?;
        let gap = fit
            .trace
            .last()
            .and_then(|r| r.gap)
            .unwrap_or(f64::INFINITY);
        Ok((fit.output.w, fit.objective, gap, fit.stop))
    })
    .into_iter()
    .map(Result::unwrap)
    .collect()
}

#[test]
fn any_number_of_ranks_reaches_the_one_process_optimum() {
    let (x, y) = data(600);
    for (loss, bias) in [
        (BinaryLoss::Hinge, Bias::Feature),
        (BinaryLoss::SquaredHinge, Bias::None),
    ] {
        let best = reference(&x, &y, loss, bias);
        for p in [1, 2, 3, 4] {
            let ranks = distributed(&x, &y, p, loss, bias, 1);
            let (w0, objective, gap, stop) = &ranks[0];
            assert!(
                matches!(stop, StopReason::Converged | StopReason::Gap),
                "{p} ranks: {stop:?}"
            );
            assert!(*gap <= 1e-6 * objective, "{p} ranks: gap {gap}");
            assert!(
                (objective - best).abs() <= 1e-4 * best,
                "{p} ranks: {objective} vs {best}"
            );
            // Every rank holds the same weights, bit for bit.
            for r in &ranks[1..] {
                assert_eq!(&r.0, w0, "{p} ranks");
            }
        }
    }
}

/// Issue 30: one process is P = 1. DCD over one rank runs the sequential method's own pass, so it trains
/// the in-memory run's bits: weights, objective, certified gap, iterations and trace, for either hinge and
/// either bias, shrinking and the gap target's tightening included.
#[test]
fn issue_30_dcd_over_one_rank_trains_the_in_memory_bits() {
    let (x, y) = data(400);
    let m = rows(&x);
    for (loss, bias) in [
        (BinaryLoss::Hinge, Bias::Feature),
        (BinaryLoss::SquaredHinge, Bias::None),
    ] {
        let problem = BinaryProblem::new(&m, &y, lambda(0.001), bias)
            .unwrap()
            .with_loss(loss);
        // ε = 0.5 with a 1e-6 target: the stopping test passes early and ε is divided by 10 several times.
        let dcd = || {
            let d = DcdParams::new().epsilon(0.5).seed(3).check().unwrap();
            d.with_gap_target(Some(1e-6))
        };
        // Evaluations far apart: the solver's own rule (with its tightenings) ends the run.
        let budget = Budget::epochs(5000.0)
            .with_gap(1e-6)
            .evaluating_every(2000.0);
        let trainer = Trainer::new(budget).unwrap();
        let one = trainer.run(&mut dcd(), &problem, &mut ()).unwrap();
        assert!(one.progress.epoch > 5.0, "{:?}", one.progress);
        let ranked = ThreadRanks::run(1, |comm| {
            let mut ranked = dcd().over_ranks(comm, x.len());
            trainer.run_over(comm, &mut ranked, &problem, &mut ())
        })
        .remove(0)
        .unwrap();
        let bits = |f: &maxmargin_optim::Fit<maxmargin_optim::LinearWeights>| {
            let w: Vec<u64> = f.output.w.iter().map(|v| v.to_bits()).collect();
            let trace: Vec<(u64, u64, Option<u64>)> = (f.trace.iter())
                .map(|r| (r.iteration, r.objective.to_bits(), r.gap.map(f64::to_bits)))
                .collect();
            (
                w,
                f.output.b.to_bits(),
                f.objective.to_bits(),
                f.stop,
                trace,
            )
        };
        assert_eq!(bits(&ranked), bits(&one), "{loss:?}, {bias:?}");
        assert_eq!(one.stop, StopReason::Converged, "{loss:?}, {bias:?}");
    }
}

#[test]
fn the_same_ranks_and_seed_give_the_same_bits() {
    let (x, y) = data(300);
    let run = |seed| {
        distributed(&x, &y, 3, BinaryLoss::Hinge, Bias::Feature, seed)[0]
            .0
            .clone()
    };
    assert_eq!(run(4), run(4));
    assert_ne!(run(4), run(5));
}

#[test]
fn a_failing_rank_ends_every_rank_with_an_error() {
    let (x, y) = data(90);
    let out = ThreadRanks::run(3, |comm| {
        use maxmargin_optim::Collective;
        let (a, b) = (30 * comm.rank(), 30 * (comm.rank() + 1));
        let m = rows(&x[a..b]);
        // Rank 2's shard is refused (an unregularized bias), the others wait for it in vain.
        let bias = if comm.rank() == 2 {
            Bias::Unregularized
        } else {
            Bias::Feature
        };
        let problem = BinaryProblem::new(&m, &y[a..b], lambda(0.01), bias)?;
        let mut ranked = DcdParams::new().check()?.over_ranks(comm, 90);
        Trainer::new(Budget::epochs(100.0))?.run_over(comm, &mut ranked, &problem, &mut ())
    });
    assert!(matches!(
        out[2],
        Err(OptimError::InvalidParam { name: "bias", .. })
    ));
    for r in [0, 1] {
        assert!(
            matches!(&out[r], Err(OptimError::Collective { message, .. }) if message == "rank 2 failed"),
            "{:?}",
            out[r]
        );
    }
}

/// Issue 30: Crammer–Singer over one rank is the in-memory method (its steps, shrinking and gap target):
/// the same weights, objective, trace and stop, bit for bit.
#[test]
fn issue_30_crammer_singer_over_one_rank_trains_the_in_memory_bits() {
    use maxmargin_core::objective::Lambda;
    use maxmargin_optim::{CrammerSingerParams, StructProblem};
    use maxmargin_struct::MulticlassSpace;
    let (x, y) = crate::dual::multiclass(240, 4, 3.0);
    let space = MulticlassSpace::new(5, 4).unwrap();
    let problem = StructProblem::new(&space, &x, &y, Lambda::new(0.002).unwrap()).unwrap();
    let cs = || {
        let params = CrammerSingerParams {
            epsilon: 0.5,
            shrinking: true,
            seed: 2,
        };
        params.check().unwrap().with_gap_target(Some(1e-6))
    };
    let budget = Budget::epochs(20_000.0)
        .with_gap(1e-6)
        .evaluating_every(1000.0);
    let trainer = Trainer::new(budget).unwrap();
    let one = trainer.run(&mut cs(), &problem, &mut ()).unwrap();
    let ranked = ThreadRanks::run(1, |comm| {
        trainer.run_over(comm, &mut cs().over_ranks(comm, 240), &problem, &mut ())
    })
    .remove(0)
    .unwrap();
    let bits = |f: &maxmargin_optim::Fit<Vec<f64>>| {
        let w: Vec<u64> = f.output.iter().map(|v| v.to_bits()).collect();
        let trace: Vec<(u64, u64, Option<u64>)> = (f.trace.iter())
            .map(|r| (r.iteration, r.objective.to_bits(), r.gap.map(f64::to_bits)))
            .collect();
        (w, f.objective.to_bits(), f.stop, trace)
    };
    assert_eq!(bits(&ranked), bits(&one));
    assert_eq!(one.stop, StopReason::Converged);
}

#[test]
fn crammer_singer_over_ranks_reaches_the_one_process_optimum() {
    use maxmargin_core::objective::Lambda;
    use maxmargin_optim::{CrammerSingerParams, StructProblem};
    use maxmargin_struct::MulticlassSpace;
    let (x, y) = crate::dual::multiclass(240, 4, 3.0);
    let space = MulticlassSpace::new(5, 4).unwrap();
    let lambda = Lambda::new(0.02).unwrap();
    let whole = StructProblem::new(&space, &x, &y, lambda).unwrap();
    let params = CrammerSingerParams {
        epsilon: 1e-3,
        shrinking: true,
        seed: 2,
    };
    let mut one = CrammerSingerParams {
        epsilon: 1e-8,
        ..params
    }
    .check()
    .unwrap();
    let best = Trainer::new(Budget::epochs(100_000.0).with_gap(1e-10))
        .unwrap()
        .run(&mut one, &whole, &mut ())
        .unwrap()
        .objective;
    for p in [1, 2, 3] {
        let ranks = ThreadRanks::run(p, |comm| {
            use maxmargin_optim::Collective;
            let (a, b) = (240 * comm.rank() / p, 240 * (comm.rank() + 1) / p);
            let shard = StructProblem::new(&space, &x[a..b], &y[a..b], lambda)?;
            let cs = params.check()?.with_gap_target(Some(1e-7));
            let budget = Budget::epochs(20_000.0)
                .with_gap(1e-7)
                .evaluating_every(5.0);
            Trainer::new(budget)?.run_over(comm, &mut cs.over_ranks(comm, 240), &shard, &mut ())
        });
        let fits: Vec<_> = ranks.into_iter().map(Result::unwrap).collect();
        let f = &fits[0];
        assert!(
            matches!(f.stop, StopReason::Converged | StopReason::Gap),
            "{p} ranks: {:?}",
            f.stop
        );
        assert!(
            (f.objective - best).abs() <= 1e-5 * best,
            "{p} ranks: {} vs {best}",
            f.objective
        );
        for other in &fits[1..] {
            assert_eq!(other.output, f.output, "{p} ranks");
        }
    }
}

#[test]
fn pegasos_over_ranks_averages_to_near_the_optimum_with_a_true_bound() {
    use maxmargin_optim::{Collective, PegasosParams};
    let (x, y) = data(600);
    let n = x.len();
    for bias in [Bias::Feature, Bias::Unregularized, Bias::None] {
        let best = reference(&x, &y, BinaryLoss::Hinge, bias);
        for p in [1, 2, 3] {
            let run = |seed: u64| {
                ThreadRanks::run(p, |comm| {
                    let (a, b) = (n * comm.rank() / p, n * (comm.rank() + 1) / p);
                    let m = rows(&x[a..b]);
                    let problem = BinaryProblem::new(&m, &y[a..b], lambda(0.01), bias)?;
                    let pegasos = PegasosParams::new().average(true).seed(seed).check()?;
                    let budget = Budget::epochs(40.0).evaluating_every(10.0);
                    let mut ranked = pegasos.over_ranks(comm, n);
                    Trainer::new(budget)?.run_over(comm, &mut ranked, &problem, &mut ())
                })
                .into_iter()
                .map(Result::unwrap)
                .collect::<Vec<_>>()
            };
            let ranks = run(2);
            let fit = &ranks[0];
            let last = fit.trace.last().unwrap();
            let dual = last.dual.unwrap();
            assert_eq!(
                (fit.progress.iteration, fit.progress.epoch, fit.stop),
                (40, 40.0, StopReason::MaxEpochs)
            );
            assert!(
                dual <= best * (1.0 + 1e-12),
                "{bias:?} {p}: bound {dual} > {best}"
            );
            assert!(dual > 0.5 * best, "{bias:?} {p}: bound {dual} vs {best}");
            assert!(fit.objective >= best * (1.0 - 1e-12), "{bias:?} {p}");
            assert!(
                fit.objective <= 1.02 * best,
                "{bias:?} {p}: {} vs {best}",
                fit.objective
            );
            for r in &ranks[1..] {
                assert_eq!(r.output, fit.output, "{p} ranks hold the same weights");
            }
            assert_eq!(
                run(2)[0].output,
                fit.output,
                "the same seed repeats the bits"
            );
        }
    }
}
