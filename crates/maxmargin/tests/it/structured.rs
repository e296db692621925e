//! The structural SVM estimator end to end: fit, evaluate, save, load, predict, determinism.

use maxmargin::StructuredModel;
use maxmargin::structured_svm::{StructSolverKind, StructuredSvmParams, Task};

#[test]
fn iris_multiclass_with_every_solver() {
    let data = maxmargin::datasets::iris().unwrap();
    let lambda = 0.01;
    let mut objectives = Vec::new();
    for solver in [
        StructSolverKind::Bcfw,
        StructSolverKind::Oneslack,
        StructSolverKind::Nslack,
        StructSolverKind::Ssg,
        StructSolverKind::Dcd,
    ] {
        let params = StructuredSvmParams::new(Task::Multiclass)
            .solver(solver)
            .lambda(lambda)
            .epsilon(if solver == StructSolverKind::Dcd {
                1e-3
            } else {
                1e-4
            })
            .max_passes(3000.0)
            .seed(1);
        let report = params
            .check()
            .unwrap()
            .fit_multiclass(&data, &mut ())
            .unwrap();
        let e = report
            .model
            .evaluate_multiclass(&data, Some(lambda))
            .unwrap();
        assert!(e.accuracy.unwrap() > 0.9, "{solver:?}: {e:?}");
        assert!((e.objective.unwrap() - report.model.training.objective).abs() < 1e-9);
        objectives.push((solver, e.objective.unwrap()));
    }
    let best = objectives.iter().map(|o| o.1).fold(f64::INFINITY, f64::min);
    // The certified solvers agree closely; SSG, an O(1/t) method with no certificate, loosely.
    for (solver, o) in &objectives {
        let tol = if *solver == StructSolverKind::Ssg {
            2e-2
        } else {
            2e-3
        };
        assert!((o - best) / best < tol, "{solver:?}: {o} vs best {best}");
    }
}

#[test]
fn structured_models_round_trip_and_are_deterministic() {
    let data = maxmargin::datasets::iris().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let params = StructuredSvmParams::new(Task::Multiclass)
        .lambda(0.05)
        .max_passes(50.0)
        .seed(9);
    let mut bytes = Vec::new();
    for (k, threads) in [(0, 1), (1, 2)] {
        let model = params
            .clone()
            .threads(threads)
            .check()
            .unwrap()
            .fit_multiclass(&data, &mut ())
            .unwrap()
            .model;
        let path = dir.path().join(format!("{k}.model"));
        model.save(&path).unwrap();
        bytes.push(std::fs::read(&path).unwrap());
        let json = dir.path().join(format!("{k}.json"));
        model.save(&json).unwrap();
        for p in [&path, &json] {
            let back = StructuredModel::load(p).unwrap();
            assert_eq!(back.w, model.w);
            assert_eq!(
                back.predict_multiclass(&data).unwrap(),
                model.predict_multiclass(&data).unwrap()
            );
        }
    }
    // The thread count is in the stored parameters, so compare the weights' bits, not the files.
    let a = StructuredModel::load(&dir.path().join("0.model")).unwrap();
    let b = StructuredModel::load(&dir.path().join("1.model")).unwrap();
    let bits = |w: &[f64]| w.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&a.w), bits(&b.w));
    assert!(!bytes[0].is_empty());
    // A binary model is not a structured one.
    let binary = maxmargin::LinearSvmParams::new()
        .epochs(1.0)
        .check()
        .unwrap()
        .fit(&maxmargin::datasets::heart_scale().unwrap())
        .unwrap();
    let path = dir.path().join("binary.model");
    binary.save(&path).unwrap();
    assert!(
        StructuredModel::load(&path)
            .unwrap_err()
            .to_string()
            .contains("model kind is \"binary\"")
    );
}

#[test]
fn one_vs_rest_trains_every_class_and_ignores_the_thread_count() {
    let data = maxmargin::datasets::iris().unwrap();
    let fit = |threads: usize| {
        StructuredSvmParams::new(Task::Multiclass)
            .solver(StructSolverKind::Ovr)
            .c(1.0)
            .epsilon(0.1)
            .threads(threads)
            .check()
            .unwrap()
            .fit_multiclass(&data, &mut ())
            .unwrap()
            .model
    };
    let (one, two) = (fit(1), fit(2));
    assert_eq!(one.w, two.w);
    assert_eq!(one.w.len(), 3 * (4 + 1));
    let e = one.evaluate_multiclass(&data, None).unwrap();
    assert!(e.accuracy.unwrap() > 0.85, "{e:?}");
    // Converged: by its own test, or at an evaluation certifying the default 1% gap.
    assert!(
        matches!(
            one.training.stop,
            maxmargin::optim::StopReason::Converged | maxmargin::optim::StopReason::Gap
        ) && one.training.converged,
        "{:?}",
        one.training
    );
    // The multiclass-only solvers refuse other tasks.
    for solver in [StructSolverKind::Ovr, StructSolverKind::Dcd] {
        assert!(
            StructuredSvmParams::new(Task::Chain)
                .solver(solver)
                .check()
                .is_err()
        );
    }
}

#[test]
fn owned_multiclass_fit_gives_the_borrowed_fit() {
    let data = maxmargin::datasets::iris().unwrap();
    for solver in [
        StructSolverKind::Dcd,
        StructSolverKind::Bcfw,
        StructSolverKind::Ovr,
    ] {
        let svm = StructuredSvmParams::new(Task::Multiclass)
            .solver(solver)
            .c(1.0)
            .epsilon(0.1)
            .max_passes(200.0)
            .seed(4)
            .check()
            .unwrap();
        let borrowed = svm.fit_multiclass(&data, &mut ()).unwrap().model;
        let owned = svm
            .fit_multiclass_owned(data.clone(), &mut ())
            .unwrap()
            .model;
        assert_eq!(borrowed.w, owned.w, "{solver:?}");
    }
}

/// One-vs-rest and kernel machines take sample weights (each binary problem weighs its examples by them,
/// times the class weight): a weight of 2 trains the model of the row given twice.
#[test]
fn one_vs_rest_and_kernel_machines_weigh_their_examples_as_if_repeated() {
    let data = maxmargin::datasets::iris().unwrap();
    // Versicolor's rows, near both boundaries, weigh twice.
    let twice: Vec<usize> = (0..data.n_samples()).chain(50..100).collect();
    let repeated = data.select(&twice);
    let mut weights = vec![1.0; data.n_samples()];
    weights[50..100].fill(2.0);
    // A fixed γ: `scale` would follow the repeated rows' variance.
    let rbf = maxmargin::linear::KernelChoice {
        gamma: Some(0.5),
        ..Default::default()
    };
    for (solver, kernel) in [
        (StructSolverKind::Ovr, None),
        (StructSolverKind::Ovr, Some(rbf)),
        (StructSolverKind::Ovo, Some(rbf)),
    ] {
        let fit = |data: &maxmargin::prelude::LabeledData, weights: Option<Vec<f64>>| {
            let mut p = StructuredSvmParams::new(Task::Multiclass).solver(solver);
            if let Some(k) = kernel {
                p = p.kernel(k);
            }
            let mut p = p.c(1.0).epsilon(1e-6);
            p.gap = Some(1e-9);
            let mut svm = p.check().unwrap();
            if let Some(w) = weights {
                svm = svm.sample_weights(w).unwrap();
            }
            let model = svm.fit_multiclass(data, &mut ()).unwrap().model;
            let scores = model.multiclass_scores(data).unwrap();
            scores.into_iter().flatten().collect::<Vec<f64>>()
        };
        // Scores of the original rows (the repeated set's first 150 rows are the same).
        let (weighted, plain) = (fit(&data, Some(weights.clone())), fit(&data, None));
        let repeated = fit(&repeated, None);
        let far = |a: &[f64], b: &[f64]| {
            a.iter()
                .zip(b)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0, f64::max)
        };
        // Scores of a few units: equal to what the gap certifies; the weights move them by more than 1.
        let (near, moved) = (far(&weighted, &repeated), far(&weighted, &plain));
        assert!(near < 1e-2, "{solver:?} {kernel:?}: {near}");
        assert!(
            moved > 0.1,
            "{solver:?} {kernel:?}: the weights changed nothing"
        );
    }
}

/// A chain's class weights are tag numbers (1-based): the weighted Hamming loss trains, and a model naming a
/// tag it lacks is refused when saved (and, by the same check, when loaded). Feature indices past the data's
/// features given to `fit_chain` (a tagger's bigram features) are refused, not dropped.
#[test]
fn chain_class_weights_and_edge_indices_are_checked() {
    use maxmargin::core::vector::SparseVec;
    use maxmargin::io::svm_hmm::SequenceData;
    let x = |j: u32| SparseVec::new(vec![j], vec![1.0]).unwrap();
    let data = SequenceData {
        sequences: vec![vec![x(0), x(1)], vec![x(1), x(0)]],
        labels: vec![vec![0, 1], vec![1, 0]],
        qids: vec![0, 1],
        n_features: 2,
        n_labels: 2,
        source: "memory".into(),
    };
    let svm = StructuredSvmParams::new(Task::Chain)
        .class_weights(vec![(2.0, 3.0)])
        .max_passes(5.0)
        .check()
        .unwrap();
    let mut model = svm.fit_chain(&data, &mut ()).unwrap().model;
    let tmp = tempfile::tempdir().unwrap();
    model.save(&tmp.path().join("ok.model")).unwrap();
    model.params.class_weights = vec![(3.0, 1.0)];
    let err = model
        .save(&tmp.path().join("bad.model"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("class weights"), "{err}");
    let mut wide = data.clone();
    wide.sequences[1][0] = x(5);
    let err = svm.fit_chain(&wide, &mut ()).unwrap_err().to_string();
    assert!(err.contains("fit_chain_with_edges"), "{err}");
    let fit = svm.fit_chain_with_edges(&wide, 4, &mut ()).unwrap();
    assert_eq!(fit.model.w.len(), 3 * 2 + 4 + 4 + 4 * 4);
}

/// Latent models (chains with states, multiclass with templates) are the same bits whatever the thread count:
/// the completions and the rounds' solves combine their parts in a fixed order.
#[test]
fn latent_models_do_not_depend_on_the_thread_count() {
    let seqs = maxmargin::io::svm_hmm::read_from(
        maxmargin::datasets::periodic_tags(60, 12, 0.3, 5).as_bytes(),
        "periodic".as_ref(),
    )
    .unwrap();
    let rows = maxmargin::io::libsvm::read_from(
        maxmargin::datasets::opposite_clusters(90, 3, 1.0, 5).as_bytes(),
        "clusters".as_ref(),
        maxmargin::io::libsvm::parse_real_label,
    )
    .unwrap();
    let fit = |threads: usize| {
        let chain = StructuredSvmParams::new(Task::Chain)
            .threads(threads)
            .check()
            .unwrap()
            .fit_latent_chain(&seqs, 2, &mut ())
            .unwrap()
            .model;
        let multiclass = StructuredSvmParams::new(Task::Multiclass)
            .threads(threads)
            .check()
            .unwrap()
            .fit_latent_multiclass(&rows, 2, &mut ())
            .unwrap()
            .model;
        (chain.model.w, multiclass.model.w)
    };
    let (one, two) = (fit(1), fit(2));
    let bits = |w: &[f64]| w.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&one.0), bits(&two.0));
    assert_eq!(bits(&one.1), bits(&two.1));
}

/// Second-order chains: the weights record the order (`L³` more), saved models load as second order and
/// predict the same tags, and files whose weights fit neither order are refused.
#[test]
fn second_order_chains_save_load_and_predict() {
    use maxmargin::structured_svm::ChainShape;
    let read = |n, seed| {
        maxmargin::io::svm_hmm::read_from(
            maxmargin::datasets::periodic_tags(n, 12, 0.3, seed).as_bytes(),
            "periodic".as_ref(),
        )
        .unwrap()
    };
    let (train, test) = (read(80, 3), read(40, 4));
    let svm = StructuredSvmParams::new(Task::Chain).check().unwrap();
    let first = svm.fit_chain(&train, &mut ()).unwrap().model;
    let second = svm
        .fit_chain_with_edges(
            &train,
            ChainShape::edges(0).with_second_order(true),
            &mut (),
        )
        .unwrap()
        .model;
    assert!(!first.is_second_order() && second.is_second_order());
    assert_eq!(second.w.len(), first.w.len() + 8);
    let error = |m: &StructuredModel| m.evaluate_chain(&test, None).unwrap().token_error.unwrap();
    assert!(
        error(&second) + 0.1 < error(&first),
        "{} vs {}",
        error(&second),
        error(&first)
    );
    let tmp = tempfile::tempdir().unwrap();
    for name in ["second.mm", "second.json"] {
        let path = tmp.path().join(name);
        second.save(&path).unwrap();
        let back = StructuredModel::load(&path).unwrap();
        assert!(back.is_second_order());
        assert_eq!(
            back.predict_chain(&test).unwrap(),
            second.predict_chain(&test).unwrap()
        );
    }
    let mut odd = second.clone();
    odd.w.pop();
    let path = tmp.path().join("odd.json");
    assert!(odd.save(&path).is_err() || StructuredModel::load(&path).is_err());
    // A first-order chain with as many edge features as tags has a second-order chain's weight count: it
    // knows its shape, and is saved only inside a tagger.
    let mut wide = train.clone();
    for s in &mut wide.sequences {
        s[0] = maxmargin::core::vector::SparseVec::new(vec![0, 2, 3], vec![1.0, 1.0, 1.0]).unwrap();
    }
    let edges = svm.fit_chain_with_edges(&wide, 2, &mut ()).unwrap().model;
    assert_eq!(edges.w.len(), second.w.len());
    assert!(!edges.is_second_order());
    let err = edges
        .save(&tmp.path().join("edges.mm"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("inside a tagger"), "{err}");
}

/// Checkpoints across latent rounds: a run writes one after every round, a run resumed from it ends with the
/// same model bits, and a checkpoint for another seed, data or setting is refused by name.
/// Tag weights with latent states: the rounds judge the weighted loss on tags (the model's objective is
/// `evaluate`'s at its λ), the weights survive a save and load, and a weight naming a tag beyond the
/// model's is refused on load.
#[test]
fn latent_chains_take_tag_weights() {
    let seqs = maxmargin::io::svm_hmm::read_from(
        maxmargin::datasets::periodic_tags(60, 12, 0.3, 6).as_bytes(),
        "periodic".as_ref(),
    )
    .unwrap();
    let fit = |weights: Vec<(f64, f64)>| {
        StructuredSvmParams::new(Task::Chain)
            .lambda(0.01)
            .class_weights(weights)
            .check()
            .unwrap()
            .fit_latent_chain(&seqs, 2, &mut ())
            .unwrap()
            .model
    };
    let (plain, weighted) = (fit(Vec::new()), fit(vec![(2.0, 4.0)]));
    assert!(
        weighted.objective > plain.objective,
        "{} vs {}",
        weighted.objective,
        plain.objective
    );
    let e = weighted.evaluate(&seqs, Some(0.01)).unwrap();
    assert!((e.objective.unwrap() - weighted.objective).abs() < 1e-9 * weighted.objective);
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("weighted.json");
    weighted.save(&path).unwrap();
    let back = maxmargin::structured_svm::LatentChainModel::load(&path).unwrap();
    assert_eq!(back, weighted);
    let mut bad = weighted.clone();
    bad.model.params.class_weights = vec![(3.0, 1.0)];
    assert!(bad.save(&tmp.path().join("bad.json")).is_err());
}

/// A multiclass model whose classes are not increasing (a LIBLINEAR model's, converted) evaluates its data:
/// labels are looked up whatever their order (`evaluate_multiclass` refused those whose place differed from
/// their rank), and it predicts as the same model with its classes in order.
#[test]
fn a_model_with_classes_out_of_order_evaluates_its_data() {
    let data = maxmargin::datasets::iris().unwrap();
    let params = StructuredSvmParams::new(Task::Multiclass).lambda(0.01);
    let model = params
        .check()
        .unwrap()
        .fit_multiclass(&data, &mut ())
        .unwrap()
        .model;
    // The classes reversed, each with its block of weights.
    let mut shuffled = model.clone();
    let width = model.w.len() / model.n_labels;
    shuffled.classes.reverse();
    shuffled.w = model.w.rchunks(width).flatten().copied().collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reversed.model");
    shuffled.save(&path).unwrap();
    let loaded = StructuredModel::load(&path).unwrap();
    assert_eq!(loaded.classes, shuffled.classes);
    assert_eq!(
        loaded.predict_multiclass(&data).unwrap(),
        model.predict_multiclass(&data).unwrap()
    );
    let (a, b) = (
        loaded.evaluate_multiclass(&data, Some(0.01)).unwrap(),
        model.evaluate_multiclass(&data, Some(0.01)).unwrap(),
    );
    assert_eq!(a.accuracy, b.accuracy);
    assert!((a.objective.unwrap() - b.objective.unwrap()).abs() < 1e-12);
}
