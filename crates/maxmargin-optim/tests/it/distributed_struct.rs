//! Structural solvers over ranks (threads as ranks, the protocol MPI runs): BCFW, the cutting planes and SSG
//! reach the one-process optimum from any number of shards, certify where one process would, and resume
//! from their rank states with the bits of a run never stopped.

use maxmargin_optim::{Budget, StopReason, ThreadRanks, Trainer};

#[test]
fn one_slack_and_bcfw_over_ranks_reach_the_one_process_optimum_on_chains() {
    use maxmargin_core::objective::Lambda;
    use maxmargin_optim::{BcfwParams, OneSlackParams, StructProblem};
    let (space, x, y) = crate::structural::small_chain();
    let lambda = Lambda::new(0.05).unwrap();
    let n = x.len();
    let whole = StructProblem::new(&space, &x, &y, lambda).unwrap();
    let mut one = OneSlackParams {
        epsilon: 1e-7,
        ..OneSlackParams::default()
    }
    .check()
    .unwrap();
    let best = Trainer::new(Budget::epochs(100_000.0).with_gap(1e-9))
        .unwrap()
        .run(&mut one, &whole, &mut ())
        .unwrap()
        .objective;
    for (p, bcfw) in [
        (1, false),
        (2, false),
        (3, false),
        (1, true),
        (2, true),
        (3, true),
    ] {
        let ranks = ThreadRanks::run(p, |comm| {
            use maxmargin_optim::Collective;
            let (a, b) = (n * comm.rank() / p, n * (comm.rank() + 1) / p);
            let shard = StructProblem::new(&space, &x[a..b], &y[a..b], lambda)?;
            let gap = if bcfw { 1e-4 } else { 1e-7 };
            let trainer = Trainer::new(Budget::epochs(10_000.0).with_gap(gap))?;
            if bcfw {
                let params = BcfwParams {
                    seed: 3,
                    gap_every: 1.0,
                    gap_tolerance: Some(gap),
                    ..BcfwParams::default()
                };
                let mut ranked = params.check()?.over_ranks(comm, n);
                return trainer.run_over(comm, &mut ranked, &shard, &mut ());
            }
            let params = OneSlackParams {
                epsilon: 1e-4,
                ..OneSlackParams::default()
            };
            let one_slack = params.check()?.with_gap_target(Some(gap));
            trainer.run_over(comm, &mut one_slack.over_ranks(comm, n), &shard, &mut ())
        });
        let fits: Vec<_> = ranks.into_iter().map(Result::unwrap).collect();
        let f = &fits[0];
        assert!(
            matches!(f.stop, StopReason::Converged | StopReason::Gap),
            "{p} ranks, bcfw {bcfw}: {:?} {:?}",
            f.stop,
            f.trace.last()
        );
        assert!(
            (f.objective - best).abs() <= (if bcfw { 1e-4 } else { 1e-5 }) * best,
            "{p} ranks, bcfw {bcfw}: {} vs {best}",
            f.objective
        );
        for other in &fits[1..] {
            assert_eq!(other.output, f.output, "{p} ranks");
        }
    }
}

#[test]
fn ssg_over_ranks_averages_to_near_the_crammer_singer_optimum_with_a_true_bound() {
    use maxmargin_core::objective::Lambda;
    use maxmargin_optim::{Collective, CrammerSingerParams, SsgParams, StructProblem};
    use maxmargin_struct::MulticlassSpace;
    let (x, y) = crate::dual::multiclass(240, 4, 3.0);
    let space = MulticlassSpace::new(5, 4).unwrap();
    let lambda = Lambda::new(0.02).unwrap();
    let whole = StructProblem::new(&space, &x, &y, lambda).unwrap();
    let mut exact = CrammerSingerParams {
        epsilon: 1e-8,
        shrinking: true,
        seed: 2,
    }
    .check()
    .unwrap();
    let best = Trainer::new(Budget::epochs(100_000.0).with_gap(1e-10))
        .unwrap()
        .run(&mut exact, &whole, &mut ())
        .unwrap()
        .objective;
    for p in [1, 2, 3] {
        let run = || {
            ThreadRanks::run(p, |comm| {
                let (a, b) = (240 * comm.rank() / p, 240 * (comm.rank() + 1) / p);
                let shard = StructProblem::new(&space, &x[a..b], &y[a..b], lambda)?;
                let budget = Budget::epochs(60.0).evaluating_every(20.0);
                let mut ranked = SsgParams::default().check()?.over_ranks(comm, 240);
                Trainer::new(budget)?.run_over(comm, &mut ranked, &shard, &mut ())
            })
            .into_iter()
            .map(Result::unwrap)
            .collect::<Vec<_>>()
        };
        let fits = run();
        let f = &fits[0];
        let dual = f.trace.last().and_then(|r| r.dual).unwrap();
        assert_eq!(
            (f.progress.iteration, f.stop),
            (60, StopReason::MaxEpochs),
            "{p} ranks"
        );
        // A true bound (one oracle pass's, loose for SSG as in one process).
        assert!(
            dual <= best * (1.0 + 1e-12) && dual > 0.0,
            "{p} ranks: bound {dual} vs {best}"
        );
        assert!(f.objective >= best * (1.0 - 1e-12), "{p} ranks");
        // Averaging after local epochs acts like mini-batches of P: about P times the passes of one process.
        assert!(
            f.objective <= 1.05 * best,
            "{p} ranks: {} vs {best}",
            f.objective
        );
        for other in &fits[1..] {
            assert_eq!(other.output, f.output, "{p} ranks");
        }
        assert_eq!(run()[0].output, f.output, "{p} ranks: the same bits again");
    }
}

#[test]
fn bcfw_over_ranks_resumed_from_its_run_ends_with_the_same_bits() {
    use maxmargin_core::objective::Lambda;
    use maxmargin_optim::bcfw::BcfwRankState;
    use maxmargin_optim::{BcfwParams, Collective, Run, Solver, StructProblem};
    let (space, x, y) = crate::structural::small_chain();
    let lambda = Lambda::new(0.05).unwrap();
    let n = x.len();
    let p = 2;
    type Kept = Run<BcfwRankState, Vec<f64>>;
    let run = |max_epochs: f64, from: Vec<Option<Kept>>| {
        ThreadRanks::run(p, |comm| {
            let (a, b) = (n * comm.rank() / p, n * (comm.rank() + 1) / p);
            let shard = StructProblem::new(&space, &x[a..b], &y[a..b], lambda)?;
            let params = BcfwParams {
                gap_every: 1.0,
                gap_tolerance: Some(1e-5),
                ..BcfwParams::default()
            };
            let mut ranked = params.check()?.over_ranks(comm, n);
            let trainer = Trainer::new(Budget::epochs(max_epochs))?;
            let start = match from[comm.rank()].clone() {
                Some(run) => run,
                None => {
                    let state = ranked.init(&shard)?;
                    trainer.start(&ranked, &shard, state)
                }
            };
            let (fit, end) =
                trainer.resume_over(comm, &mut ranked, &shard, start, &mut (), None)?;
            Ok((fit.output, fit.progress.iteration, end))
        })
        .into_iter()
        .map(Result::unwrap)
        .collect::<Vec<_>>()
    };
    let whole = run(10_000.0, vec![None; p]);
    assert!(whole[0].1 > 6, "{} rounds", whole[0].1);
    // Stopped after 5 passes, many rounds in (a round is a share of a pass).
    let stopped = run(5.0, vec![None; p]);
    assert!(
        (5..whole[0].1).contains(&stopped[0].1),
        "{} rounds of {}",
        stopped[0].1,
        whole[0].1
    );
    let states: Vec<_> = stopped.into_iter().map(|r| Some(r.2)).collect();
    let resumed = run(10_000.0, states);
    assert_eq!(resumed[0].0, whole[0].0);
    assert_eq!(resumed[0].1, whole[0].1);
}

/// Over ranks as in one process: the blocks' gaps, summed over the ranks, skip scheduled certifications far
/// above the target and call one at a pass's end when within it.
#[test]
fn bcfw_over_ranks_certifies_where_the_blocks_gaps_say_it_may_stop() {
    use maxmargin_core::objective::Lambda;
    use maxmargin_optim::{BcfwParams, Collective, StructProblem};
    let (space, x, y) = crate::structural::small_chain();
    let lambda = Lambda::new(0.05).unwrap();
    let (n, p) = (x.len(), 2);
    let run = |gap_tolerance: Option<f64>, gap_every: f64, passes: f64| {
        let fits = ThreadRanks::run(p, |comm| {
            let (a, b) = (n * comm.rank() / p, n * (comm.rank() + 1) / p);
            let shard = StructProblem::new(&space, &x[a..b], &y[a..b], lambda)?;
            let params = BcfwParams {
                gap_tolerance,
                gap_every,
                ..BcfwParams::default()
            };
            let mut ranked = params.check()?.over_ranks(comm, n);
            // The trainer evaluates at the end only: the certifications counted are the solver's.
            let budget = Budget::epochs(passes).evaluating_every(f64::INFINITY);
            let fit = Trainer::new(budget)?.run_over(comm, &mut ranked, &shard, &mut ())?;
            Ok((shard.oracle_calls() as usize, b - a, fit))
        });
        fits.into_iter().next().unwrap().unwrap()
    };
    // Ten passes of steps, the first schedule's certification (which scales the estimate) and the end's.
    let (skipping, shard, _) = run(Some(1e-15), 1.0, 10.0);
    assert!(skipping <= 13 * shard, "{skipping} oracle calls");
    // Every pass's: a rank's share of the oracle steps is about half (the cache takes some of them).
    let (every, shard, _) = run(None, 1.0, 10.0);
    assert!(every >= 18 * shard, "{every} oracle calls");
    assert!(
        every >= skipping + 6 * shard,
        "{every} against {skipping} oracle calls"
    );
    // To 1%, scheduled every 50 passes: the first schedule's certification is above the target here, and
    // the run stops certified at a pass's end before the next schedule.
    let (_, _, fit) = run(Some(0.01), 50.0, 500.0);
    let gap = fit.trace.last().unwrap().gap.unwrap() / fit.objective;
    assert_eq!(fit.stop, StopReason::Converged, "gap {gap}");
    assert!(gap <= 0.01);
    assert!(
        fit.progress.epoch % 50.0 > 1e-9,
        "stopped at {} passes",
        fit.progress.epoch
    );
}

/// Over ranks as in one process, pairwise steps try a block's active corners before the oracle: to the
/// same certified gap in fewer oracle calls than without the cache, at the same optimum.
#[test]
fn bcfw_over_ranks_steps_between_cached_corners_before_calling_the_oracle() {
    use maxmargin_core::objective::Lambda;
    use maxmargin_optim::{BcfwParams, Collective, StructProblem};
    let (space, x, y) = crate::structural::small_chain();
    let lambda = Lambda::new(0.05).unwrap();
    let (n, p) = (x.len(), 2);
    let run = |cache: bool| {
        let fits = ThreadRanks::run(p, |comm| {
            let (a, b) = (n * comm.rank() / p, n * (comm.rank() + 1) / p);
            let shard = StructProblem::new(&space, &x[a..b], &y[a..b], lambda)?;
            let params = BcfwParams {
                cache,
                gap_tolerance: Some(1e-4),
                ..BcfwParams::pairwise()
            };
            let mut ranked = params.check()?.over_ranks(comm, n);
            let budget = Budget::epochs(10_000.0).evaluating_every(f64::INFINITY);
            let fit = Trainer::new(budget)?.run_over(comm, &mut ranked, &shard, &mut ())?;
            Ok((shard.oracle_calls(), fit))
        });
        let mut fits = fits.into_iter().map(Result::unwrap);
        let (calls, fit) = fits.next().unwrap();
        let other = fits.next().unwrap();
        assert_eq!(other.1.output, fit.output, "cache {cache}: the ranks agree");
        assert_eq!(fit.stop, StopReason::Converged, "cache {cache}");
        (calls + other.0, fit.objective)
    };
    let (with, best_with) = run(true);
    let (without, best_without) = run(false);
    assert!(
        with < without,
        "{with} oracle calls with the cache, {without} without"
    );
    assert!((best_with - best_without).abs() <= 2e-4 * best_without);
}

#[test]
fn n_slack_over_any_number_of_ranks_trains_one_process_weights() {
    use maxmargin_core::objective::Lambda;
    use maxmargin_optim::{Collective, NSlackParams, StructProblem};
    let (space, x, y) = crate::structural::small_chain();
    let lambda = Lambda::new(0.05).unwrap();
    let n = x.len();
    let params = NSlackParams {
        epsilon: 1e-4,
        ..NSlackParams::default()
    };
    let budget = Budget::epochs(10_000.0).with_gap(1e-6);
    let whole = StructProblem::new(&space, &x, &y, lambda).unwrap();
    let one = Trainer::new(budget)
        .unwrap()
        .run(&mut params.check().unwrap(), &whole, &mut ())
        .unwrap();
    assert!(matches!(one.stop, StopReason::Converged | StopReason::Gap));
    assert!(
        one.progress.iteration > 3,
        "{} passes",
        one.progress.iteration
    );
    for p in [1, 2, 3] {
        let fits = ThreadRanks::run(p, |comm| {
            let (a, b) = (n * comm.rank() / p, n * (comm.rank() + 1) / p);
            let shard = StructProblem::new(&space, &x[a..b], &y[a..b], lambda)?;
            let mut ranked = params.check()?.over_ranks(comm, n);
            Trainer::new(budget)?.run_over(comm, &mut ranked, &shard, &mut ())
        });
        for f in fits {
            let f = f.unwrap();
            assert_eq!(f.output, one.output, "{p} ranks");
            assert_eq!(f.progress.iteration, one.progress.iteration, "{p} ranks");
            assert_eq!(f.stop, one.stop, "{p} ranks");
        }
    }
}

/// A cutting-plane solver over two thread ranks on the small chain (`$solver`: its parameters at ε = 1e-5,
/// whose `over_ranks` gives rank states `$state`), stopped after three rounds and resumed from its states, ends
/// with the bits and rounds of a run never stopped.
macro_rules! resumes_over_two_ranks {
    ($params:ty, $state:ty) => {{
        use maxmargin_core::objective::Lambda;
        use maxmargin_optim::{Collective, Run, Solver, StructProblem};
        let (space, x, y) = crate::structural::small_chain();
        let lambda = Lambda::new(0.05).unwrap();
        let n = x.len();
        let p = 2;
        type Kept = Run<$state, Vec<f64>>;
        let run = |max_epochs: f64, from: Vec<Option<Kept>>| {
            ThreadRanks::run(p, |comm| {
                let (a, b) = (n * comm.rank() / p, n * (comm.rank() + 1) / p);
                let shard = StructProblem::new(&space, &x[a..b], &y[a..b], lambda)?;
                let mut params = <$params>::default();
                params.epsilon = 1e-5;
                let mut ranked = params.check()?.over_ranks(comm, n);
                let trainer = Trainer::new(Budget::epochs(max_epochs))?;
                let start = match from[comm.rank()].clone() {
                    Some(run) => run,
                    None => {
                        let state = ranked.init(&shard)?;
                        trainer.start(&ranked, &shard, state)
                    }
                };
                let (fit, end) =
                    trainer.resume_over(comm, &mut ranked, &shard, start, &mut (), None)?;
                Ok((fit.output, fit.progress.iteration, end))
            })
            .into_iter()
            .map(Result::unwrap)
            .collect::<Vec<_>>()
        };
        let whole = run(10_000.0, vec![None; p]);
        assert!(whole[0].1 > 4, "{} rounds", whole[0].1);
        let stopped = run(3.0, vec![None; p]);
        assert_eq!(stopped[0].1, 3);
        let states: Vec<_> = stopped.into_iter().map(|r| Some(r.2)).collect();
        let resumed = run(10_000.0, states);
        assert_eq!(resumed[0].0, whole[0].0);
        assert_eq!(resumed[0].1, whole[0].1);
    }};
}

#[test]
fn one_slack_over_ranks_resumed_from_its_run_ends_with_the_same_bits() {
    resumes_over_two_ranks!(
        maxmargin_optim::OneSlackParams,
        maxmargin_optim::cutting_plane::OneSlackRankState
    );
}

#[test]
fn n_slack_over_ranks_resumed_from_its_run_ends_with_the_same_bits() {
    resumes_over_two_ranks!(
        maxmargin_optim::NSlackParams,
        maxmargin_optim::cutting_plane::NSlackRankState<Vec<u32>>
    );
}
