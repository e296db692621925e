//! Latent structural SVMs by CCCP: on classes that are each two clusters on opposite sides of the origin (no
//! linear template scores both), a mixture of two templates per class is far more accurate than one, and the
//! rounds never raise the objective.

use maxmargin_core::objective::Lambda;
use maxmargin_core::vector::SparseVec;
use maxmargin_optim::latent::{CccpParams, CccpStop, cccp};
use maxmargin_optim::{BcfwParams, Budget, OptimError, StructProblem, Trainer};
use maxmargin_struct::{
    LatentMulticlassSpace, LatentSpace, MulticlassSpace, OutputSpace, StructError, Violation,
};

/// `n` points of 3 classes: six clusters at angles k·60° on a circle of radius 3, cluster k of class k mod 3
/// (so each class is two opposite clusters), spread ±1; features (x, y, 1).
fn opposite_clusters(n: usize, seed: u64) -> (Vec<SparseVec>, Vec<u32>) {
    let mut lcg = maxmargin_core::testing::Lcg::new(seed);
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for i in 0..n {
        let k = i % 6;
        let angle = k as f64 * std::f64::consts::PI / 3.0;
        let (dx, dy) = (2.0 * (lcg.unit() - 0.5), 2.0 * (lcg.unit() - 0.5));
        let p = [3.0 * angle.cos() + dx, 3.0 * angle.sin() + dy, 1.0];
        x.push(SparseVec::from_dense(&p).unwrap());
        y.push((k % 3) as u32);
    }
    (x, y)
}

fn bcfw<S: OutputSpace<Output: Sync>>(
    problem: &StructProblem<'_, S>,
) -> maxmargin_optim::Fit<Vec<f64>> {
    let mut s = BcfwParams {
        gap_tolerance: Some(1e-3),
        ..BcfwParams::default()
    }
    .check()
    .unwrap();
    Trainer::new(Budget::epochs(2_000.0))
        .unwrap()
        .run(&mut s, problem, &mut ())
        .unwrap()
}

#[test]
fn two_templates_per_class_beat_one_and_the_rounds_descend() {
    let (x, y) = opposite_clusters(240, 1);
    let (tx, ty) = opposite_clusters(600, 2);
    let lambda = Lambda::new(0.01).unwrap();
    // One template per class: the plain multiclass SVM.
    let plain = MulticlassSpace::new(3, 3).unwrap();
    let w = bcfw(&StructProblem::new(&plain, &x, &y, lambda).unwrap()).output;
    let accuracy = |predict: &dyn Fn(&SparseVec) -> u32| {
        tx.iter()
            .zip(&ty)
            .filter(|(x, y)| predict(x) == **y)
            .count() as f64
            / tx.len() as f64
    };
    let plain_accuracy = accuracy(&|x| plain.decode(&w, x).unwrap());
    // Two templates per class, by CCCP.
    let space = LatentMulticlassSpace::new(3, 3, 2).unwrap();
    let fit = cccp(
        &space,
        &x,
        &y,
        lambda,
        CccpParams {
            seed: 7,
            ..CccpParams::default()
        },
        |p, _| Ok::<_, OptimError>(bcfw(p)),
    )
    .unwrap();
    let latent_accuracy = accuracy(&|x| space.label(&space.decode(&fit.w, x).unwrap()));
    eprintln!(
        "plain {plain_accuracy:.3}, latent {latent_accuracy:.3} after {} rounds ({:?}): {:?}",
        fit.rounds.len(),
        fit.stop,
        fit.rounds.iter().map(|r| r.objective).collect::<Vec<_>>()
    );
    assert!(
        latent_accuracy >= plain_accuracy + 0.10,
        "{latent_accuracy} vs {plain_accuracy}"
    );
    assert!(latent_accuracy > 0.95, "{latent_accuracy}");
    assert_eq!(fit.stop, CccpStop::Converged);
    // Each round's convex problem bounds the latent objective from above at its weights, and the kept
    // rounds descend.
    for r in &fit.rounds {
        assert!(r.objective <= r.inner_objective + 1e-9, "{r:?}");
    }
    let kept = &fit.rounds[..fit.rounds.len()];
    for pair in kept.windows(2) {
        assert!(
            pair[1].objective <= pair[0].objective + 1e-12,
            "{:?}",
            fit.rounds
        );
    }
    // The completions are each example's best template of its own class at the final weights.
    for ((xi, yi), h) in x.iter().zip(&y).zip(&fit.completions) {
        assert_eq!(space.label(h), *yi);
        assert_eq!(*h, space.complete(&fit.w, xi, yi).unwrap());
    }
    // The same seed, the same model.
    let again = cccp(
        &space,
        &x,
        &y,
        lambda,
        CccpParams {
            seed: 7,
            ..CccpParams::default()
        },
        |p, _| Ok::<_, OptimError>(bcfw(p)),
    )
    .unwrap();
    assert_eq!(again.w, fit.w);
}

/// The shipped space with a worse start: each example's template drawn by a coin (from its features and the
/// seed), so that the rounds have to untangle the clusters themselves.
struct CoinStart(LatentMulticlassSpace);

impl OutputSpace for CoinStart {
    type Input = SparseVec;
    type Output = u32;
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn check_input(&self, x: &SparseVec) -> Result<(), StructError> {
        self.0.check_input(x)
    }
    fn check_output(&self, x: &SparseVec, y: &u32) -> Result<(), StructError> {
        self.0.check_output(x, y)
    }
    fn for_each_feature(&self, x: &SparseVec, y: &u32, visit: &mut dyn FnMut(usize, f64)) {
        self.0.for_each_feature(x, y, visit);
    }
    fn loss(&self, y: &u32, y_hat: &u32) -> f64 {
        self.0.loss(y, y_hat)
    }
    fn decode(&self, w: &[f64], x: &SparseVec) -> Result<u32, StructError> {
        self.0.decode(w, x)
    }
    fn loss_augmented(
        &self,
        w: &[f64],
        x: &SparseVec,
        y: &u32,
    ) -> Result<Violation<u32>, StructError> {
        self.0.loss_augmented(w, x, y)
    }
}

impl LatentSpace for CoinStart {
    type Label = u32;
    fn label(&self, joint: &u32) -> u32 {
        self.0.label(joint)
    }
    fn complete(&self, w: &[f64], x: &SparseVec, y: &u32) -> Result<u32, StructError> {
        self.0.complete(w, x, y)
    }
    fn initial(&self, x: &SparseVec, y: &u32, seed: u64) -> Result<u32, StructError> {
        let bits = x
            .as_row()
            .values()
            .iter()
            .fold(seed, |h, v| h.rotate_left(7) ^ v.to_bits());
        Ok(y * 2 + u32::from(bits.count_ones() % 2 == 1))
    }
}

#[test]
fn from_a_coin_toss_start_the_rounds_find_the_clusters() {
    let (x, y) = opposite_clusters(240, 1);
    let (tx, ty) = opposite_clusters(600, 2);
    let space = CoinStart(LatentMulticlassSpace::new(3, 3, 2).unwrap());
    let fit = cccp(
        &space,
        &x,
        &y,
        Lambda::new(0.01).unwrap(),
        CccpParams::default(),
        |p, _| Ok::<_, OptimError>(bcfw(p)),
    )
    .unwrap();
    let objectives: Vec<f64> = fit.rounds.iter().map(|r| r.objective).collect();
    let right = tx
        .iter()
        .zip(&ty)
        .filter(|(x, y)| space.label(&space.decode(&fit.w, x).unwrap()) == **y);
    let accuracy = right.count() as f64 / tx.len() as f64;
    eprintln!(
        "coin start: {accuracy:.3} after {} rounds ({:?}): {objectives:?}",
        fit.rounds.len(),
        fit.stop
    );
    // The coin's templates are useless (the first round's objective is near that of w = 0); the first
    // completions move about half the examples, and the next round finds the clusters.
    assert!(
        fit.rounds.len() >= 2 && fit.rounds[0].changed > 0,
        "{:?}",
        fit.rounds
    );
    assert_eq!(fit.stop, CccpStop::Converged);
    for pair in objectives.windows(2) {
        assert!(pair[1] <= pair[0], "{objectives:?}");
    }
    assert!(fit.objective < 0.5 * objectives[0], "{objectives:?}");
    assert!(accuracy > 0.9, "{accuracy}");
}

#[test]
fn bad_settings_and_labels_are_refused() {
    let (x, y) = opposite_clusters(12, 1);
    let space = LatentMulticlassSpace::new(3, 3, 2).unwrap();
    let lambda = Lambda::new(0.1).unwrap();
    let run = |params: CccpParams, y: &[u32]| {
        cccp(&space, &x, y, lambda, params, |p, _| {
            Ok::<_, OptimError>(bcfw(p))
        })
        .map(|_| ())
        .unwrap_err()
        .to_string()
    };
    assert!(
        run(
            CccpParams {
                max_rounds: 0,
                ..CccpParams::default()
            },
            &y
        )
        .contains("max_rounds")
    );
    assert!(
        run(
            CccpParams {
                tolerance: f64::NAN,
                ..CccpParams::default()
            },
            &y
        )
        .contains("tolerance")
    );
    let mut wrong = y.clone();
    wrong[4] = 3;
    let err = run(CccpParams::default(), &wrong);
    assert!(err.contains("example 4") || err.contains("4"), "{err}");
    assert!(LatentMulticlassSpace::new(3, 3, 0).is_err());
}

/// Checkpoints across rounds: the state after any round, resumed, ends with the bits of the run that was
/// never stopped (rounds, completions, weights); a finished state gives its fit at once; a state for other
/// examples is refused.
#[test]
fn rounds_resume_from_any_round_to_the_same_bits() {
    use maxmargin_optim::latent::{CccpState, cccp_from};
    let (x, y) = opposite_clusters(120, 3);
    let lambda = Lambda::new(0.01).unwrap();
    let space = LatentMulticlassSpace::new(3, 3, 2).unwrap();
    let params = CccpParams {
        seed: 5,
        ..CccpParams::default()
    };
    let mut states: Vec<CccpState<u32>> = Vec::new();
    let whole = cccp_from(
        &space,
        (&x, &y),
        lambda,
        params,
        None,
        |s| {
            states.push(s.clone());
            Ok::<_, OptimError>(())
        },
        |p, _| Ok::<_, OptimError>(bcfw(p)),
    )
    .unwrap();
    assert_eq!(states.len(), whole.rounds.len());
    assert!(states.len() >= 2, "{:?}", whole.rounds);
    assert_eq!(states.last().unwrap().stop, Some(whole.stop));
    assert!(states[..states.len() - 1].iter().all(|s| s.stop.is_none()));
    for state in &states {
        let mut calls = 0;
        let resumed = cccp_from(
            &space,
            (&x, &y),
            lambda,
            params,
            Some(state.clone()),
            |_| Ok::<_, OptimError>(()),
            |p, _| {
                calls += 1;
                Ok::<_, OptimError>(bcfw(p))
            },
        )
        .unwrap();
        assert_eq!(calls, whole.rounds.len() - state.rounds.len());
        assert_eq!(resumed.w, whole.w);
        assert_eq!(resumed.rounds, whole.rounds);
        assert_eq!(resumed.completions, whole.completions);
        assert_eq!(resumed.stop, whole.stop);
    }
    let err = cccp_from(
        &space,
        (&x[..60], &y[..60]),
        lambda,
        params,
        Some(states[0].clone()),
        |_| Ok::<_, OptimError>(()),
        |p, _| Ok::<_, OptimError>(bcfw(p)),
    )
    .unwrap_err();
    assert!(err.to_string().contains("other examples"), "{err}");
}
