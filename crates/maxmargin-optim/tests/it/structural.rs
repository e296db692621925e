//! Structural solvers: the four methods agree on the optimum of a small problem, certificates hold.

use maxmargin_core::objective::Lambda;
use maxmargin_core::vector::SparseVec;
use maxmargin_optim::{
    BcfwParams, Budget, NSlackParams, OneSlackParams, Solver, SsgParams, StopReason, StructProblem,
    Trainer,
};
use maxmargin_struct::{ChainSpace, CostMatrix, OutputSpace};

/// Twenty short sequences over 3 labels and 4 features, generated deterministically, with labels that
/// depend on the features (so the problem is not trivial) and some noise.
pub fn small_chain() -> (ChainSpace, Vec<Vec<SparseVec>>, Vec<Vec<u32>>) {
    chain_of(20)
}

/// [`small_chain`]'s kind of data with `n` sequences (its first 20 are `small_chain`'s).
pub fn chain_of(n: usize) -> (ChainSpace, Vec<Vec<SparseVec>>, Vec<Vec<u32>>) {
    let mut x = Vec::new();
    let mut y = Vec::new();
    let mut lcg = maxmargin_core::testing::Lcg::new(17);
    let mut next = || lcg.unit31();
    for s in 0..n {
        let t = 3 + s % 3;
        let mut xs = Vec::new();
        let mut ys = Vec::new();
        for _ in 0..t {
            let f: Vec<f64> = (0..4).map(|_| (next() * 4.0).floor() - 1.0).collect();
            let label = if next() < 0.15 {
                (next() * 3.0) as u32 % 3
            } else {
                u32::from(f[0] > 0.5) + u32::from(f[1] > 1.5)
            };
            xs.push(SparseVec::from_dense(&f).unwrap());
            ys.push(label);
        }
        x.push(xs);
        y.push(ys);
    }
    (
        ChainSpace::with_costs(4, CostMatrix::zero_one(3).unwrap(), true).unwrap(),
        x,
        y,
    )
}

/// `solver` run on `problem` within `budget`, without an observer.
pub fn run<'a, Sp: OutputSpace, S: Solver<StructProblem<'a, Sp>, Output = Vec<f64>>>(
    solver: &mut S,
    problem: &StructProblem<'a, Sp>,
    budget: Budget,
) -> maxmargin_optim::Fit<Vec<f64>> {
    Trainer::new(budget)
        .unwrap()
        .run(solver, problem, &mut ())
        .unwrap()
}

#[test]
fn four_solvers_agree_on_a_small_problem() {
    let (space, x, y) = small_chain();
    let (space, x, y): (
        &'static ChainSpace,
        &'static [Vec<SparseVec>],
        &'static [Vec<u32>],
    ) = (
        Box::leak(Box::new(space)),
        Box::leak(x.into_boxed_slice()),
        Box::leak(y.into_boxed_slice()),
    );
    let lambda = Lambda::new(0.1).unwrap();
    let problem = StructProblem::new(space, x, y, lambda).unwrap();

    let budget = |epochs: f64| Budget::epochs(epochs).evaluating_every(50.0);
    let mut bcfw = BcfwParams {
        gap_tolerance: Some(2e-5),
        gap_every: 10.0,
        ..BcfwParams::frank_wolfe()
    }
    .check()
    .unwrap();
    let b = run(&mut bcfw, &problem, budget(20_000.0));
    assert_eq!(b.stop, StopReason::Converged, "{:?}", b.trace.last());
    let mut pairwise = BcfwParams {
        gap_tolerance: Some(2e-5),
        gap_every: 10.0,
        ..BcfwParams::pairwise()
    }
    .check()
    .unwrap();
    let p = run(&mut pairwise, &problem, budget(20_000.0));
    assert_eq!(p.stop, StopReason::Converged, "{:?}", p.trace.last());
    // Pairwise steps empty wrong corners instead of shrinking them: fewer passes to the same gap.
    assert!(
        p.progress.epoch < b.progress.epoch,
        "pairwise {} passes, frank-wolfe {}",
        p.progress.epoch,
        b.progress.epoch
    );
    let mut one = OneSlackParams {
        epsilon: 1e-9,
        ..OneSlackParams::default()
    }
    .check()
    .unwrap();
    let o = run(&mut one, &problem, Budget::iterations(5_000));
    assert_eq!(o.stop, StopReason::Converged);
    let mut nslack = NSlackParams {
        epsilon: 1e-9,
        ..NSlackParams::default()
    }
    .check()
    .unwrap();
    let n = run(&mut nslack, &problem, Budget::iterations(500));
    assert_eq!(n.stop, StopReason::Converged);
    let mut ssg = SsgParams {
        seed: 3,
        ..SsgParams::default()
    }
    .check()
    .unwrap();
    let s = run(&mut ssg, &problem, budget(20_000.0));

    eprintln!(
        "bcfw {} ({} passes), 1-slack {}, n-slack {}, ssg {}",
        b.objective, b.progress.epoch, o.objective, n.objective, s.objective
    );
    let reference = o.objective;
    for (name, f) in [("bcfw", &b), ("pairwise", &p), ("n-slack", &n), ("ssg", &s)] {
        let rel = (f.objective - reference).abs() / reference;
        assert!(
            rel < 1e-4,
            "{name}: {} vs bcfw {reference} (relative {rel:e})",
            f.objective
        );
    }
    // Certificates: every dual is below every primal (weak duality), and the gaps are small.
    for f in [&b, &p, &o, &n] {
        let last = f.trace.last().unwrap();
        let (dual, gap) = (last.dual.unwrap(), last.gap.unwrap());
        assert!(
            dual <= reference * (1.0 + 1e-9) + 1e-12,
            "dual {dual} above primal {reference}"
        );
        assert!(gap <= 1e-4 * reference, "gap {gap}");
    }
}

#[test]
fn structural_training_is_deterministic_and_checks_examples() {
    let (space, x, mut y) = small_chain();
    let lambda = Lambda::new(0.1).unwrap();
    let problem = StructProblem::new(&space, &x, &y, lambda).unwrap();
    let run_bcfw = || {
        let mut s = BcfwParams {
            seed: 5,
            gap_tolerance: None,
            ..BcfwParams::default()
        }
        .check()
        .unwrap();
        Trainer::new(Budget::epochs(20.0))
            .unwrap()
            .run(&mut s, &problem, &mut ())
            .unwrap()
            .output
    };
    let bits = |w: Vec<f64>| w.into_iter().map(f64::to_bits).collect::<Vec<_>>();
    assert_eq!(bits(run_bcfw()), bits(run_bcfw()));
    // The same result on one thread and on two.
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| problem.primal(&run_bcfw()).unwrap());
    let two = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap()
        .install(|| problem.primal(&run_bcfw()).unwrap());
    assert_eq!(one.to_bits(), two.to_bits());

    y[3][1] = 7;
    let e = StructProblem::new(&space, &x, &y, lambda).unwrap_err();
    assert_eq!(
        e.to_string(),
        "example 3: label 7 at position 1 is outside the label set 0..3"
    );
}

#[test]
fn bcfw_resumes_exactly() {
    let gap_sampled = BcfwParams {
        gap_sampling: true,
        cache: false,
        ..BcfwParams::default()
    };
    let cached = BcfwParams {
        gap_sampling: true,
        cache: true,
        ..BcfwParams::default()
    };
    for steps in [
        BcfwParams::frank_wolfe(),
        BcfwParams::pairwise(),
        gap_sampled,
        cached,
    ] {
        bcfw_resumes_exactly_with(steps);
    }
}

fn bcfw_resumes_exactly_with(steps: BcfwParams) {
    let (space, x, y) = small_chain();
    let problem = StructProblem::new(&space, &x, &y, Lambda::new(0.1).unwrap()).unwrap();
    let params = BcfwParams {
        seed: 2,
        gap_tolerance: None,
        gap_every: 4.0,
        ..steps
    };
    let straight = Trainer::new(Budget::epochs(20.0))
        .unwrap()
        .run(&mut params.check().unwrap(), &problem, &mut ())
        .unwrap();
    let mut s = params.check().unwrap();
    let state = s.init(&problem).unwrap();
    // 6 passes: not a certification of `gap_every`, so the run's end certifies on its own.
    let (_, state) = Trainer::new(Budget::epochs(6.0))
        .unwrap()
        .run_from(&mut s, &problem, state, &mut ())
        .unwrap();
    let (rest, _) = Trainer::new(Budget::epochs(20.0))
        .unwrap()
        .run_from(&mut s, &problem, state, &mut ())
        .unwrap();
    let bits = |w: &[f64]| w.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&rest.output), bits(&straight.output));
    assert_eq!(rest.progress, straight.progress);
}

/// A time budget reaches inside n-slack's working-set QP (one step of sweeps took 5 s on yeast under
/// `--seconds 5`): with the deadline already passed, a step adds its planes but leaves `w` where it was;
/// without one, the same step moves it.
#[test]
fn n_slack_checks_the_deadline_inside_its_qp() {
    let (space, x, y) = small_chain();
    let problem = StructProblem::new(&space, &x, &y, Lambda::new(0.1).unwrap()).unwrap();
    let step_once = |deadline: Option<std::time::Instant>| {
        let mut s = NSlackParams::default().check().unwrap();
        Solver::<StructProblem<ChainSpace>>::set_deadline(&mut s, deadline);
        let mut st = s.init(&problem).unwrap();
        s.step(&problem, &mut st).unwrap();
        s.output(&problem, &st)
    };
    let moved = step_once(None);
    assert!(moved.iter().any(|v| *v != 0.0));
    let stopped = step_once(Some(std::time::Instant::now()));
    assert!(stopped.iter().all(|v| *v == 0.0), "{stopped:?}");
}

/// Pairwise steps with the average kept take the same steps and certify the better point: a primal no
/// higher and a dual no lower than the last iterate's alone. (Without the cache: its test reads the last
/// certificate, which the average changes, so the steps would differ.)
#[test]
fn pairwise_steps_with_the_average_certify_the_better_point() {
    let (space, x, y) = small_chain();
    let problem = StructProblem::new(&space, &x, &y, Lambda::new(0.01).unwrap()).unwrap();
    let fit = |average: bool| {
        let mut s = BcfwParams {
            average,
            cache: false,
            gap_tolerance: None,
            gap_every: 1.0,
            ..BcfwParams::pairwise()
        }
        .check()
        .unwrap();
        Trainer::new(Budget::epochs(6.0))
            .unwrap()
            .run(&mut s, &problem, &mut ())
            .unwrap()
    };
    let (last, both) = (fit(false), fit(true));
    let (a, b) = (last.trace.last().unwrap(), both.trace.last().unwrap());
    assert!(b.objective <= a.objective, "{b:?} vs {a:?}");
    assert!(b.dual.unwrap() >= a.dual.unwrap(), "{b:?} vs {a:?}");
    assert!(b.gap.unwrap() >= 0.0);
}

/// 40 classes over 400 sparse features, each class with its own typical features: 400 examples.
fn many_classes() -> (maxmargin_struct::MulticlassSpace, Vec<SparseVec>, Vec<u32>) {
    let (classes, d, n) = (40u32, 400usize, 400usize);
    let mut lcg = maxmargin_core::testing::Lcg::new(7);
    let mut next = move || lcg.unit();
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let c = (next() * f64::from(classes)) as u32;
        let mut row: Vec<(u32, f64)> = Vec::new();
        for _ in 0..8 {
            let j = c as usize * 10 + (next() * 10.0) as usize;
            row.push((j as u32, 0.5 + next()));
        }
        for _ in 0..4 {
            let j = (next() * d as f64) as u32;
            row.push((j, next()));
        }
        row.sort_by_key(|p| p.0);
        row.dedup_by_key(|p| p.0);
        let (idx, val) = row.into_iter().unzip();
        x.push(SparseVec::new(idx, val).unwrap());
        y.push(c);
    }
    let space = maxmargin_struct::MulticlassSpace::new(d, classes as usize).unwrap();
    (space, x, y)
}

/// Many classes (the shape where Frank–Wolfe steps crawl: 2% gap after 60 s on a 100-class set): 40 classes
/// over 400 sparse features, each class with its own typical features, small λ. Pairwise steps reach a
/// certified 1% gap within a budget in which Frank–Wolfe steps do not, to the same optimum.
#[test]
fn pairwise_steps_certify_many_classes_where_frank_wolfe_crawls() {
    let (space, x, y) = many_classes();
    let problem = StructProblem::new(&space, &x, &y, Lambda::new(1e-3).unwrap()).unwrap();
    let fit = |params: BcfwParams| {
        let mut s = BcfwParams {
            gap_tolerance: Some(0.01),
            ..params
        }
        .check()
        .unwrap();
        Trainer::new(Budget::epochs(60.0))
            .unwrap()
            .run(&mut s, &problem, &mut ())
            .unwrap()
    };
    let (fw, pw) = (fit(BcfwParams::frank_wolfe()), fit(BcfwParams::pairwise()));
    let gap =
        |f: &maxmargin_optim::Fit<Vec<f64>>| f.trace.last().unwrap().gap.unwrap() / f.objective;
    assert_eq!(pw.stop, StopReason::Converged, "pairwise gap {}", gap(&pw));
    assert!(gap(&pw) <= 0.01);
    assert_ne!(
        fw.stop,
        StopReason::Converged,
        "frank-wolfe gap {}",
        gap(&fw)
    );
    // Both bound the same optimum: each primal is above the other's dual.
    let dual = |f: &maxmargin_optim::Fit<Vec<f64>>| f.trace.last().unwrap().dual.unwrap();
    assert!(dual(&fw) <= pw.objective && dual(&pw) <= fw.objective);
    // Auto picks pairwise steps here (the atoms are small) and keeps the average: the same steps, a
    // certificate at least as good, so it stops no later.
    let auto = fit(BcfwParams::default());
    assert_eq!(auto.stop, StopReason::Converged);
    assert!(auto.progress.epoch <= pw.progress.epoch);
    // Gap sampling (Osokin et al. 2016) draws the blocks still far from their optimum: certified at 1% in
    // fewer passes, with the same seed the same bits, and bounds on the same optimum.
    // Certified every pass, so that the passes compare to one; no cache, to see the sampling alone.
    let each_pass = |gap_sampling| {
        fit(BcfwParams {
            gap_sampling,
            cache: false,
            gap_every: 1.0,
            ..BcfwParams::default()
        })
    };
    // The problem counts oracle calls over every run: a run's are the difference.
    let counted = |run: &dyn Fn() -> maxmargin_optim::Fit<Vec<f64>>| {
        let before = problem.oracle_calls();
        let f = run();
        (problem.oracle_calls() - before, f)
    };
    let auto = each_pass(false);
    let (gs_calls, gs) = counted(&|| each_pass(true));
    let again = each_pass(true);
    assert_eq!(gs.stop, StopReason::Converged, "gap {}", gap(&gs));
    assert!(
        gs.progress.epoch < auto.progress.epoch,
        "gap sampling {} passes, permutation {}",
        gs.progress.epoch,
        auto.progress.epoch
    );
    assert_eq!(gs.output, again.output);
    assert!(dual(&gs) <= auto.objective && dual(&auto) <= gs.objective);
    // The cache of active corners takes steps without the oracle: with gap sampling, the same certified
    // target with fewer oracle calls, the same optimum.
    let (cached_calls, cached) = counted(&|| {
        fit(BcfwParams {
            gap_every: 1.0,
            gap_sampling: true,
            ..BcfwParams::default()
        })
    });
    assert_eq!(cached.stop, StopReason::Converged, "gap {}", gap(&cached));
    assert!(
        cached_calls < gs_calls,
        "cache {cached_calls} oracle calls ({} passes), none {gs_calls} ({} passes)",
        cached.progress.epoch,
        gs.progress.epoch
    );
    assert!(dual(&cached) <= auto.objective && dual(&auto) <= cached.objective);
}

/// n-slack knows its exact gap at every pass (the pass of oracle calls gives the primal, the working set the
/// dual), so with a gap target it stops as soon as the gap is certified, without solving every working-set
/// QP to its own tolerance (OCR: 16 passes in 60 s at a 19% gap before; now 1% in about 11 s). Its QP's
/// block Gram matrices are a cache rebuilt after a resume: a run split in two gives the same bits.
#[test]
fn n_slack_stops_on_its_certified_gap_and_resumes_exactly() {
    let (space, x, y) = small_chain();
    let problem = StructProblem::new(&space, &x, &y, Lambda::new(0.01).unwrap()).unwrap();
    let solver = || {
        NSlackParams::default()
            .check()
            .unwrap()
            .with_gap_target(Some(0.01))
    };
    let fit = Trainer::new(Budget::epochs(500.0))
        .unwrap()
        .run(&mut solver(), &problem, &mut ())
        .unwrap();
    assert_eq!(fit.stop, StopReason::Converged);
    let last = fit.trace.last().unwrap();
    assert!(last.gap.unwrap() <= 0.01 * fit.objective, "{last:?}");

    let straight = Trainer::new(Budget::epochs(12.0))
        .unwrap()
        .run(
            &mut NSlackParams::default().check().unwrap(),
            &problem,
            &mut (),
        )
        .unwrap();
    let mut s = NSlackParams::default().check().unwrap();
    let state = s.init(&problem).unwrap();
    let (_, state) = Trainer::new(Budget::epochs(5.0))
        .unwrap()
        .run_from(&mut s, &problem, state, &mut ())
        .unwrap();
    // Through a checkpoint's encoding: the cache is not saved.
    let state = serde_json::from_str(&serde_json::to_string(&state).unwrap()).unwrap();
    let (rest, _) = Trainer::new(Budget::epochs(12.0))
        .unwrap()
        .run_from(&mut s, &problem, state, &mut ())
        .unwrap();
    let bits = |w: &[f64]| w.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&rest.output), bits(&straight.output));
}

/// Sequences whose labels are bins of their first feature, with a constant feature for the bias: separable
/// by the unary weights alone (each class's score is linear in that feature).
fn separable_chain() -> (ChainSpace, Vec<Vec<SparseVec>>, Vec<Vec<u32>>) {
    let (_, x, _) = small_chain();
    let x: Vec<Vec<SparseVec>> = x
        .iter()
        .map(|s| {
            s.iter()
                .map(|v| {
                    let mut f = v.as_row().to_dense(4);
                    f.push(1.0);
                    SparseVec::from_dense(&f).unwrap()
                })
                .collect()
        })
        .collect();
    let y = x
        .iter()
        .map(|s| {
            s.iter()
                .map(|v| {
                    let f = v.as_row().to_dense(5);
                    u32::from(f[0] > 0.5) + u32::from(f[0] > 1.5)
                })
                .collect()
        })
        .collect();
    let space = ChainSpace::with_costs(5, CostMatrix::zero_one(3).unwrap(), true).unwrap();
    (space, x, y)
}

#[test]
fn the_perceptron_stops_at_a_pass_without_mistakes_on_separable_data_and_averages_its_iterates() {
    use maxmargin_optim::PerceptronParams;
    use maxmargin_struct::OutputSpace;
    let (space, x, y) = separable_chain();
    let problem = StructProblem::new(&space, &x, &y, Lambda::new(0.1).unwrap()).unwrap();
    for average in [true, false] {
        let mut p = PerceptronParams::new()
            .average(average)
            .seed(3)
            .check()
            .unwrap();
        let fit = Trainer::new(Budget::epochs(200.0))
            .unwrap()
            .run(&mut p, &problem, &mut ())
            .unwrap();
        assert_eq!(fit.stop, StopReason::Converged, "average {average}");
        // No certificate of its own, and the SVM primal of its output for comparison.
        let last = fit.trace.last().unwrap();
        assert!(last.gap.is_none() && last.dual.is_none());
        assert_eq!(fit.objective, problem.primal(&fit.output).unwrap());
        if !average {
            // The last iterate made no mistake in a whole pass: it labels every training sequence right.
            for (xi, yi) in x.iter().zip(&y) {
                assert_eq!(&space.decode(&fit.output, xi).unwrap(), yi);
            }
        }
    }
    // The same seed gives the same bits.
    let once = |seed| {
        let mut p = PerceptronParams::new().seed(seed).check().unwrap();
        Trainer::new(Budget::epochs(3.0))
            .unwrap()
            .run(&mut p, &problem, &mut ())
            .unwrap()
            .output
    };
    assert_eq!(once(5), once(5));
}

/// Under `Steps::Auto`, pairwise atoms that outgrow their memory become Frank–Wolfe shares of the same dual
/// point between passes: the run goes on to the optimum pairwise steps reach (within the two certified
/// gaps), reports no atoms after the change, and a run stopped and resumed across it gives the same bits.
#[test]
fn bcfw_atoms_past_their_budget_become_frank_wolfe_shares() {
    let (space, x, y) = small_chain();
    let problem = StructProblem::new(&space, &x, &y, Lambda::new(0.1).unwrap()).unwrap();
    let nnz: usize = (problem.truth_features().iter())
        .map(|p| p.as_row().nnz())
        .sum();
    let params = BcfwParams {
        gap_tolerance: Some(1e-3),
        gap_every: 2.0,
        ..BcfwParams::default()
    };
    // One full-size atom per example fits (so Auto takes pairwise steps), three do; the blocks hold more
    // after the second pass.
    let budget = 3 * 12 * nnz;
    let solver = || params.check().unwrap().with_atoms_budget(budget);
    let fit = |mut s: maxmargin_optim::Bcfw| run(&mut s, &problem, Budget::epochs(2000.0));
    let (kept, changed) = (fit(params.check().unwrap()), fit(solver()));
    let last = |f: &maxmargin_optim::Fit<Vec<f64>>| f.trace.last().unwrap().clone();
    assert!(
        last(&kept).active_constraints.is_some(),
        "pairwise throughout"
    );
    assert_eq!(
        last(&changed).active_constraints,
        None,
        "Frank–Wolfe at the end"
    );
    assert_eq!(changed.stop, StopReason::Converged);
    let gaps = last(&kept).gap.unwrap() + last(&changed).gap.unwrap();
    assert!(
        (kept.objective - changed.objective).abs() <= gaps,
        "{} against {} (gaps {gaps})",
        kept.objective,
        changed.objective
    );
    // Stopped after 3 passes (atoms still) and resumed to 30 passes (the change made on the way).
    let budget30 = |b: Budget| Trainer::new(b).unwrap();
    let params = BcfwParams {
        gap_tolerance: None,
        ..params
    };
    let solver = || params.check().unwrap().with_atoms_budget(budget);
    let straight = budget30(Budget::epochs(30.0))
        .run(&mut solver(), &problem, &mut ())
        .unwrap();
    let mut s = solver();
    let state = s.init(&problem).unwrap();
    let (_, state) = budget30(Budget::epochs(3.0))
        .run_from(&mut s, &problem, state, &mut ())
        .unwrap();
    let (rest, _) = budget30(Budget::epochs(30.0))
        .run_from(&mut s, &problem, state, &mut ())
        .unwrap();
    assert_eq!(last(&straight).active_constraints, None);
    let bits = |w: &[f64]| w.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&rest.output), bits(&straight.output));
}

/// BCFW's certifications cost an oracle pass each, so it takes them where they may stop the run: after the
/// first, a scheduled one is skipped while the blocks' last gaps, scaled as the last certification found
/// them, sum to more than `SKIP_ABOVE_TARGET` times the target (an unreachable target: only the first and
/// the run's end certify; no target: every schedule does), and a pass's end in between is certified when
/// that scaled sum is within the target. Either way the run stops certified within it, and a run split in two gives the same bits.
#[test]
fn bcfw_certifies_where_its_blocks_gaps_say_it_may_stop() {
    let (space, x, y) = many_classes();
    let n = x.len() as u64;
    let problem = StructProblem::new(&space, &x, &y, Lambda::new(1e-3).unwrap()).unwrap();
    let calls = |gap_tolerance: Option<f64>, gap_every: f64, passes: f64| {
        let mut s = BcfwParams {
            gap_tolerance,
            gap_every,
            ..BcfwParams::default()
        }
        .check()
        .unwrap();
        let before = problem.oracle_calls();
        // The trainer evaluates at the end only: the certifications counted are the solver's.
        let budget = Budget::epochs(passes).evaluating_every(f64::INFINITY);
        let fit = run(&mut s, &problem, budget);
        (problem.oracle_calls() - before, fit)
    };
    // Ten passes of oracle steps (the cache's steps come on top), the first schedule's certification (which
    // scales the estimate) and the end's: one or two passes each (the average and the last iterate).
    let (skipping, _) = calls(Some(1e-15), 1.0, 10.0);
    assert!(skipping <= 14 * n, "{skipping} oracle calls");
    let (every, _) = calls(None, 1.0, 10.0);
    assert!(every >= 20 * n, "{every} oracle calls");
    // To 1%, scheduled every 5 passes.
    let (_, fit) = calls(Some(0.01), 5.0, 200.0);
    let gap = fit.trace.last().unwrap().gap.unwrap() / fit.objective;
    assert_eq!(fit.stop, StopReason::Converged, "gap {gap}");
    assert!(gap <= 0.01);
    // Here a pass after a schedule's certification that failed, before the next schedule.
    assert!(
        fit.progress.epoch % 5.0 != 0.0,
        "stopped at {} passes",
        fit.progress.epoch
    );
    // Stopped after 7 passes and resumed: the same checks, steps and bits.
    let params = BcfwParams::default();
    let mut s = params.check().unwrap();
    let state = s.init(&problem).unwrap();
    let (_, state) = Trainer::new(Budget::epochs(7.0))
        .unwrap()
        .run_from(&mut s, &problem, state, &mut ())
        .unwrap();
    let (rest, _) = Trainer::new(Budget::epochs(200.0).evaluating_every(f64::INFINITY))
        .unwrap()
        .run_from(&mut s, &problem, state, &mut ())
        .unwrap();
    let bits = |w: &[f64]| w.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&rest.output), bits(&fit.output));
    assert_eq!(rest.progress, fit.progress);
}
