//! Slack rescaling with the cutting planes: n-slack and 1-slack reach the same certified optimum of
//! `λ/2‖w‖² + (1/n)Σ_i max_y Δ(y_i, y)·(1 + s(y) − s(y_i))`, computed here by brute force; nothing nearby is
//! lower; the solvers without slack-rescaled planes refuse it.

use maxmargin_core::objective::Lambda;
use maxmargin_core::vector::{SparseVec, norm_sq};
use maxmargin_optim::{
    BcfwParams, Budget, NSlackParams, OneSlackParams, Solver, StopReason, StructProblem, Trainer,
};
use maxmargin_struct::{
    ChainSpace, CostMatrix, Enumerable, MulticlassSpace, MultilabelSpace, OutputSpace, Rescaling,
    slack_brute_force,
};

/// 40 noisy rows: 3 classes over 3 features (one a constant), or 3 labels each following a feature.
fn rows(seed: u64) -> (Vec<SparseVec>, Vec<[f64; 3]>) {
    let mut lcg = maxmargin_core::testing::Lcg::new(seed);
    let mut x = Vec::new();
    let mut raw = Vec::new();
    for _ in 0..40 {
        let f = [lcg.unit() * 2.0 - 1.0, lcg.unit() * 2.0 - 1.0, lcg.unit()];
        x.push(SparseVec::from_dense(&[f[0], f[1], 1.0]).unwrap());
        raw.push(f);
    }
    (x, raw)
}

/// The objective by brute force, at `w`.
fn primal<S: Enumerable>(
    space: &S,
    x: &[S::Input],
    y: &[S::Output],
    lambda: f64,
    w: &[f64],
) -> f64 {
    let h: f64 = x
        .iter()
        .zip(y)
        .map(|(x, y)| slack_brute_force(space, w, x, y).unwrap().hinge)
        .sum();
    0.5 * lambda * norm_sq(w) + h / x.len() as f64
}

fn train<S, T>(solver: &mut T, problem: &StructProblem<'_, S>) -> maxmargin_optim::Fit<Vec<f64>>
where
    S: OutputSpace<Output: Sync>,
    for<'a> T: Solver<StructProblem<'a, S>, Output = Vec<f64>>,
{
    Trainer::new(Budget::iterations(3_000))
        .unwrap()
        .run(solver, problem, &mut ())
        .unwrap()
}

/// Both cutting-plane solvers certify the slack-rescaled optimum, agree on it, and it is the minimum: the
/// brute-force objective at the solution is what they report, and no nearby point is lower.
fn check<S: Enumerable<Output: Sync>>(space: &S, x: &[S::Input], y: &[S::Output]) {
    let lambda = 0.05;
    let problem = StructProblem::new(space, x, y, Lambda::new(lambda).unwrap())
        .unwrap()
        .with_rescaling(Rescaling::Slack)
        .unwrap();
    let mut one = OneSlackParams {
        epsilon: 1e-9,
        ..OneSlackParams::default()
    }
    .check()
    .unwrap();
    let mut n = NSlackParams {
        epsilon: 1e-9,
        ..NSlackParams::default()
    }
    .check()
    .unwrap();
    let (a, b) = (train(&mut one, &problem), train(&mut n, &problem));
    for fit in [&a, &b] {
        assert_eq!(fit.stop, StopReason::Converged, "{:?}", fit.trace.last());
        let exact = primal(space, x, y, lambda, &fit.output);
        assert!(
            (exact - fit.objective).abs() < 1e-9,
            "{exact} vs {}",
            fit.objective
        );
        let last = fit.trace.last().unwrap();
        assert!(last.dual.unwrap() <= exact + 1e-12 && last.gap.unwrap() <= 1e-6 * exact);
    }
    assert!(
        (a.objective - b.objective).abs() < 1e-6 * a.objective,
        "{} vs {}",
        a.objective,
        b.objective
    );
    let mut lcg = maxmargin_core::testing::Lcg::new(5);
    for _ in 0..50 {
        let w: Vec<f64> = a
            .output
            .iter()
            .map(|v| v + 0.01 * (lcg.unit() - 0.5))
            .collect();
        assert!(primal(space, x, y, lambda, &w) >= a.objective - 1e-9);
    }
    // The margin-rescaled problem is another problem, with another optimum.
    let margin = StructProblem::new(space, x, y, Lambda::new(lambda).unwrap()).unwrap();
    let m = train(
        &mut OneSlackParams {
            epsilon: 1e-9,
            ..OneSlackParams::default()
        }
        .check()
        .unwrap(),
        &margin,
    );
    assert!(
        (m.objective - a.objective).abs() > 1e-6,
        "{} vs {}",
        m.objective,
        a.objective
    );
}

#[test]
fn multiclass_with_costs_reaches_the_brute_force_optimum() {
    let (x, raw) = rows(3);
    let y: Vec<u32> = raw
        .iter()
        .map(|f| {
            if f[2] < 0.15 {
                2
            } else {
                u32::from(f[0] > 0.0) + u32::from(f[1] > 0.5)
            }
        })
        .collect();
    let cost = CostMatrix::new(vec![
        vec![0.0, 1.0, 3.0],
        vec![1.0, 0.0, 1.0],
        vec![3.0, 1.0, 0.0],
    ])
    .unwrap();
    check(&MulticlassSpace::with_costs(3, cost).unwrap(), &x, &y);
}

#[test]
fn multilabel_with_weights_reaches_the_brute_force_optimum() {
    let (x, raw) = rows(4);
    let y: Vec<Vec<bool>> = raw
        .iter()
        .map(|f| vec![f[0] > 0.0, f[1] > 0.2, f[2] > 0.7])
        .collect();
    check(
        &MultilabelSpace::weighted(3, vec![1.0, 2.0, 1.0]).unwrap(),
        &x,
        &y,
    );
}

#[test]
fn spaces_and_solvers_without_it_refuse_it() {
    let (x, raw) = rows(5);
    let y: Vec<u32> = raw.iter().map(|f| u32::from(f[0] > 0.0)).collect();
    let space = MulticlassSpace::new(3, 2).unwrap();
    let problem = StructProblem::new(&space, &x, &y, Lambda::new(0.1).unwrap())
        .unwrap()
        .with_rescaling(Rescaling::Slack)
        .unwrap();
    let mut bcfw = BcfwParams::default().check().unwrap();
    let err = Trainer::new(Budget::epochs(1.0))
        .unwrap()
        .run(&mut bcfw, &problem, &mut ())
        .unwrap_err();
    assert!(err.to_string().contains("slack"), "{err}");
    let chain = ChainSpace::new(3, 2).unwrap();
    let seqs = vec![x[..3].to_vec()];
    let tags = vec![vec![0u32, 1, 0]];
    let err = StructProblem::new(&chain, &seqs, &tags, Lambda::new(0.1).unwrap())
        .unwrap()
        .with_rescaling(Rescaling::Slack)
        .unwrap_err();
    assert!(err.to_string().contains("slack-rescaled oracle"), "{err}");
}
