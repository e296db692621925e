//! Graph models over ranks (threads as ranks, the protocol MPI runs): every rank reads its share of the file
//! and gets the same model, certified as one process's and at the same optimum within the certified gaps;
//! shares that disagree on the file's widths are refused by line, as one process reading the file is.

use maxmargin::datasets::Shapes;
use maxmargin::io::graphs;
use maxmargin::io::shard::read_graph_shard;
use maxmargin::optim::{Collective, OptimError, ThreadRanks};
use maxmargin::structured::Inference;
use maxmargin::structured_svm::{GraphFitReport, GraphOptions, StructuredSvm};
use maxmargin::{StructSolverKind, StructuredSvmParams, Task};
use std::path::Path;

/// Trains `svm` over `p` thread ranks, each reading its share of `path`.
fn over_ranks(
    p: usize,
    svm: &StructuredSvm,
    path: &Path,
    options: GraphOptions,
) -> Vec<Result<GraphFitReport, OptimError>> {
    ThreadRanks::run(p, |comm| {
        let shard =
            read_graph_shard(path, comm.rank(), p).map_err(|e| OptimError::Qp(e.to_string()))?;
        svm.fit_graph_shard(comm, shard, options)
            .map_err(|e| OptimError::Qp(e.to_string()))
    })
}

#[test]
fn graphs_train_over_ranks_to_one_process_optimum_with_a_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shapes.jsonl");
    let mut data = Shapes::default().size(8, 8).noise(1.0).generate(16, 5);
    data.source = path.clone();
    graphs::write(&path, &data).unwrap();
    for solver in [
        StructSolverKind::Nslack,
        StructSolverKind::Bcfw,
        StructSolverKind::Oneslack,
    ] {
        let svm = StructuredSvmParams::new(Task::Graph)
            .solver(solver)
            .check()
            .unwrap();
        let one = svm
            .fit_graph(&graphs::read(&path).unwrap(), GraphOptions::new(), &mut ())
            .unwrap();
        let ranks = over_ranks(3, &svm, &path, GraphOptions::new());
        let first = ranks[0].as_ref().unwrap();
        for r in &ranks {
            assert_eq!(r.as_ref().unwrap().model.model.w, first.model.model.w);
        }
        // Grids: TRW-S by default, whose bounds keep the gap a certificate over ranks too.
        assert_eq!(first.model.space.inference(), Inference::TRWS);
        assert!(first.certified, "{solver:?}: {:?}", first.warnings);
        let (t1, tr) = (&one.model.model.training, &first.model.model.training);
        assert!(tr.converged, "{solver:?}: {:?}", first.warnings);
        assert_eq!(tr.n_samples, 16);
        // Both objectives are upper bounds on one optimum, each within its gap of it.
        let (g1, gr) = (t1.gap.unwrap(), tr.gap.unwrap());
        assert!(tr.objective >= t1.objective - g1 - 1e-9, "{t1:?} {tr:?}");
        assert!(t1.objective >= tr.objective - gr - 1e-9, "{t1:?} {tr:?}");
        assert!(first.inference_calls.0 >= 16, "{:?}", first.inference_calls);
        // n-slack (the default): rank 0 solves the working set of every rank's answers in one process's
        // order, so the ranks train one process's weights.
        if solver == StructSolverKind::Nslack {
            assert_eq!(first.model.model.w, one.model.model.w);
            assert_eq!(tr.iterations, t1.iterations);
        }
    }
}

/// Over the LP relaxation (`relaxed`, ad3) n-slack over ranks trains one process's weights, certified for
/// the relaxed problem, with the fractional answers of every rank counted.
#[test]
fn relaxed_graphs_over_ranks_train_one_process_weights() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dense.jsonl");
    super::graph::write_frustrated_graphs(&path, 24);
    let svm = StructuredSvmParams::new(Task::Graph).check().unwrap();
    let options = GraphOptions::new().inference(Inference::AD3).relaxed(true);
    let one = svm
        .fit_graph(&graphs::read(&path).unwrap(), options, &mut ())
        .unwrap();
    let ranks = over_ranks(2, &svm, &path, options);
    for r in &ranks {
        let r = r.as_ref().unwrap();
        assert_eq!(r.model.model.w, one.model.model.w);
        assert!(r.relaxed && r.certified, "{:?}", r.warnings);
        assert_eq!(r.fractional_answers, one.fractional_answers);
    }
    assert!(one.fractional_answers > 0);
}

#[test]
fn forests_over_ranks_infer_exactly_and_bad_shares_name_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rows.jsonl");
    let mut data = Shapes::default().size(6, 6).generate(8, 2);
    for g in &mut data.graphs {
        g.edges.retain(|e| e[1] == e[0] + 1);
    }
    graphs::write(&path, &data).unwrap();
    let svm = StructuredSvmParams::new(Task::Graph).check().unwrap();
    let ranks = over_ranks(2, &svm, &path, GraphOptions::new().n_labels(4));
    let first = ranks[0].as_ref().unwrap();
    assert_eq!(first.model.space.inference(), Inference::ExactTree);
    assert_eq!(first.model.space.n_labels(), 4);
    assert_eq!(first.inference_calls.1, 0);

    // The last graph's rows are one feature short: one process refuses the file at its line, and so do the
    // ranks, whichever share holds it.
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let last = lines.len() - 1;
    let narrow = graphs::GraphData {
        graphs: vec![graphs::GraphRecord {
            nodes: data.graphs[0]
                .nodes
                .iter()
                .map(|v| {
                    let d = v.as_row().to_dense(data.n_features - 1);
                    maxmargin::core::vector::SparseVec::from_dense(&d).unwrap()
                })
                .collect(),
            ..data.graphs[0].clone()
        }],
        n_features: data.n_features - 1,
        ..data.clone()
    };
    let one_line = dir.path().join("one.jsonl");
    graphs::write(&one_line, &narrow).unwrap();
    lines[last] = std::fs::read_to_string(&one_line)
        .unwrap()
        .trim()
        .to_string();
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    let e = graphs::read(&bad).unwrap_err().to_string();
    assert!(e.contains(&format!(":{}:", last + 1)), "{e}");
    // Rank 1 reads the last four lines: its error names the file's lines, not its share's.
    let e = over_ranks(2, &svm, &bad, GraphOptions::new())[1]
        .as_ref()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!(":{}:", last + 1)) && e.contains("where line 5 has"),
        "{e}"
    );
    // A share of that line alone learns the other share's width from the ranks.
    let two = dir.path().join("two.jsonl");
    std::fs::write(&two, format!("{}\n{}\n", lines[0], lines[last])).unwrap();
    let e = over_ranks(2, &svm, &two, GraphOptions::new())[1]
        .as_ref()
        .unwrap_err()
        .to_string();
    assert!(e.contains(":2:") && e.contains("another rank"), "{e}");

    // More ranks than graphs, and a solver not built over ranks, are refused by name.
    let e = over_ranks(9, &svm, &path, GraphOptions::new())[8]
        .as_ref()
        .unwrap_err()
        .to_string();
    assert!(e.contains("no graphs") && e.contains("fewer ranks"), "{e}");
    let perceptron = StructuredSvmParams::new(Task::Graph)
        .solver(StructSolverKind::Perceptron)
        .check()
        .unwrap();
    let e = over_ranks(2, &perceptron, &path, GraphOptions::new())[0]
        .as_ref()
        .unwrap_err()
        .to_string();
    assert!(e.contains("graphs with bcfw, nslack"), "{e}");
}

/// A graph run over ranks stopped at a pass budget and resumed from its rank checkpoints ends with the bits
/// of a run never stopped.
#[test]
fn graphs_over_ranks_resume_from_their_checkpoints_to_the_same_bits() {
    use maxmargin::checkpoint::CheckpointPlan;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pictures.jsonl");
    let ckpt = dir.path().join("run.ckpt");
    graphs::write(&path, &Shapes::default().size(6, 6).generate(10, 9)).unwrap();
    let run = |passes: f64, plan: CheckpointPlan| {
        let mut params = StructuredSvmParams::new(Task::Graph);
        params.gap = Some(1e-4);
        params.max_passes = Some(passes);
        let svm = params.check().unwrap().checkpoints(plan);
        over_ranks(2, &svm, &path, GraphOptions::new())
            .into_iter()
            .map(|r| r.unwrap().model.model)
            .collect::<Vec<_>>()
    };
    let whole = run(1000.0, CheckpointPlan::new());
    assert!(whole[0].training.passes > 4.0, "{:?}", whole[0].training);
    let stopped = run(4.0, CheckpointPlan::new().save_to(&ckpt));
    assert_eq!(stopped[0].training.passes, 4.0);
    let resumed = run(1000.0, CheckpointPlan::new().resume_from(&ckpt));
    for model in &resumed {
        assert_eq!(model.w, whole[0].w);
        assert_eq!(model.training.iterations, whole[0].training.iterations);
    }
}
