//! BCFW on blocks of examples in one process: the optimum of one process's BCFW, the same bits on any
//! number of threads, and a resumed run ends as one never stopped.

use maxmargin_core::objective::Lambda;
use maxmargin_optim::bcfw::BcfwBlocksState;
use maxmargin_optim::{
    BcfwParams, Budget, CrammerSingerParams, Fit, OptimError, Run, Solver, StopReason,
    StructProblem, Trainer,
};
use maxmargin_struct::{MulticlassSpace, OutputSpace};

/// BCFW on `blocks` blocks of `problem` to a relative gap of `gap` on a pool of `threads` threads.
fn in_blocks<S: OutputSpace<Output: Sync>>(
    problem: &StructProblem<'_, S>,
    blocks: usize,
    threads: usize,
    gap: f64,
) -> Fit<Vec<f64>> {
    let params = BcfwParams {
        seed: 5,
        gap_every: 1.0,
        gap_tolerance: Some(gap),
        ..BcfwParams::default()
    };
    let mut solver = params.check().unwrap().in_blocks(blocks).unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        Trainer::new(Budget::epochs(10_000.0))
            .unwrap()
            .run(&mut solver, problem, &mut ())
            .unwrap()
    })
}

#[test]
fn bcfw_in_blocks_reaches_the_optimum_with_the_same_bits_on_any_thread_count() {
    let (space, x, y) = crate::structural::chain_of(64);
    let chain = StructProblem::new(&space, &x, &y, Lambda::new(0.05).unwrap()).unwrap();
    let mut one = BcfwParams {
        gap_every: 1.0,
        gap_tolerance: Some(1e-9),
        ..BcfwParams::pairwise()
    }
    .check()
    .unwrap();
    let best = Trainer::new(Budget::epochs(100_000.0))
        .unwrap()
        .run(&mut one, &chain, &mut ())
        .unwrap()
        .objective;
    let (mx, my) = crate::dual::multiclass(240, 4, 3.0);
    let classes = MulticlassSpace::new(5, 4).unwrap();
    let multiclass = StructProblem::new(&classes, &mx, &my, Lambda::new(0.02).unwrap()).unwrap();
    let mut cs = CrammerSingerParams {
        epsilon: 1e-8,
        shrinking: true,
        seed: 2,
    }
    .check()
    .unwrap();
    let cs_best = Trainer::new(Budget::epochs(100_000.0).with_gap(1e-10))
        .unwrap()
        .run(&mut cs, &multiclass, &mut ())
        .unwrap()
        .objective;
    for blocks in [1, 2, 4] {
        let f = in_blocks(&chain, blocks, 1, 1e-5);
        assert_eq!(f.stop, StopReason::Converged, "{blocks} blocks");
        // Within the certified gap of the optimum.
        assert!(
            f.objective >= best * (1.0 - 1e-9) && f.objective <= best * (1.0 + 1e-5),
            "{blocks} blocks: {} vs {best}",
            f.objective
        );
        assert_eq!(
            in_blocks(&chain, blocks, 2, 1e-5).output,
            f.output,
            "{blocks} blocks"
        );
        let m = in_blocks(&multiclass, blocks, 1, 1e-4);
        assert_eq!(m.stop, StopReason::Converged, "{blocks} blocks");
        assert!(
            m.objective >= cs_best * (1.0 - 1e-9) && m.objective <= cs_best * (1.0 + 1e-4),
            "{blocks} blocks: {} vs {cs_best}",
            m.objective
        );
        assert_eq!(in_blocks(&multiclass, blocks, 3, 1e-4).output, m.output);
    }
    // Every block keeps at least 16 examples; 0 blocks are none.
    let refused = BcfwParams::default()
        .check()
        .unwrap()
        .in_blocks(5)
        .unwrap()
        .init(&chain);
    assert!(
        matches!(
            refused,
            Err(OptimError::InvalidParam { name: "blocks", .. })
        ),
        "64 examples in 5 blocks"
    );
    let zero = BcfwParams::default().check().unwrap().in_blocks(0);
    assert!(matches!(
        zero,
        Err(OptimError::InvalidParam { name: "blocks", .. })
    ));
}

#[test]
fn bcfw_in_blocks_resumed_from_a_serialized_state_ends_with_the_same_bits() {
    let (space, x, y) = crate::structural::chain_of(64);
    let problem = StructProblem::new(&space, &x, &y, Lambda::new(0.05).unwrap()).unwrap();
    type Kept = Run<BcfwBlocksState, Vec<f64>>;
    let run = |max_epochs: f64, from: Option<Kept>| {
        let params = BcfwParams {
            gap_every: 1.0,
            gap_tolerance: Some(1e-6),
            ..BcfwParams::default()
        };
        let mut solver = params.check().unwrap().in_blocks(3).unwrap();
        let trainer = Trainer::new(Budget::epochs(max_epochs)).unwrap();
        let start = from.unwrap_or_else(|| {
            let state = solver.init(&problem).unwrap();
            trainer.start(&solver, &problem, state)
        });
        let (fit, end) = trainer
            .resume(&mut solver, &problem, start, &mut (), None)
            .unwrap();
        (fit, end)
    };
    let (whole, _) = run(10_000.0, None);
    assert_eq!(whole.stop, StopReason::Converged);
    let (stopped, state) = run(4.0, None);
    assert_eq!(stopped.stop, StopReason::MaxEpochs);
    assert!(stopped.progress.iteration < whole.progress.iteration);
    let state: Kept = serde_json::from_str(&serde_json::to_string(&state).unwrap()).unwrap();
    let (resumed, _) = run(10_000.0, Some(state));
    assert_eq!(resumed.output, whole.output);
    assert_eq!(resumed.progress, whole.progress);
}
