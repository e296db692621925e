//! Training over MPI ranks. With the `mpi` feature these run `mpirun` on localhost (Open MPI; `.ci/run`
//! installs it); without it, a process started by a launcher refuses to train rather than racing the other
//! ranks to the same file.

use super::s;
use std::process::Command;

#[cfg(not(feature = "mpi"))]
#[test]
fn a_build_without_mpi_refuses_to_run_under_a_launcher() {
    let tmp = tempfile::tempdir().unwrap();
    let data = super::heart(tmp.path());
    let model = tmp.path().join("m.model");
    let out = Command::new(env!("CARGO_BIN_EXE_maxmargin"))
        .args(["train", s(&data), "-o", s(&model)])
        .env("OMPI_COMM_WORLD_SIZE", "2")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("built without MPI") && err.contains("--features mpi"),
        "{err}"
    );
    assert!(!model.exists());
}

#[cfg(feature = "mpi")]
mod with_mpi {
    use super::super::{ok, shared_data};
    use super::*;
    use std::path::Path;
    use std::time::{Duration, Instant};

    fn mpirun(ranks: usize, args: &[&str]) -> std::process::Output {
        Command::new("mpirun")
            .args([
                "--oversubscribe",
                "--allow-run-as-root",
                "-np",
                &ranks.to_string(),
            ])
            .arg(env!("CARGO_BIN_EXE_maxmargin"))
            .args(args)
            .output()
            .expect("mpirun runs (apt-get install openmpi-bin)")
    }

    /// Trains with `args` over `ranks` ranks into `model` and returns its objective.
    fn trained_over(ranks: usize, args: &[&str], model: &Path) -> f64 {
        let out = mpirun(ranks, args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        objective(model)
    }

    fn objective(model: &Path) -> f64 {
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(model).unwrap()).unwrap();
        // Graph models keep theirs beside the space, under "model".
        let training = match &json["model"]["training"] {
            serde_json::Value::Null => &json["training"],
            graph => graph,
        };
        training["objective"].as_f64().unwrap()
    }

    /// a9a, decompressed (gzip cannot be split between ranks).
    fn a9a(dir: &Path) -> Option<std::path::PathBuf> {
        let gz = shared_data()?.join("a9a/a9a.gz");
        let data = maxmargin::io::libsvm::read(&gz).unwrap();
        let plain = dir.join("a9a.svm");
        maxmargin::io::libsvm::write(&plain, &data).unwrap();
        Some(plain)
    }

    #[test]
    fn two_and_three_ranks_reach_the_one_process_optimum_and_repeat_their_bits() {
        let tmp = tempfile::tempdir().unwrap();
        let Some(data) = a9a(tmp.path()) else { return };
        let one = tmp.path().join("one.json");
        ok(&[
            "train",
            s(&data),
            "-o",
            s(&one),
            "-q",
            "--gap",
            "1e-7",
            "--epsilon",
            "1e-6",
        ]);
        let best = objective(&one);
        for ranks in [2, 3] {
            let mut bytes = Vec::new();
            for run in 0..2 {
                let model = tmp.path().join(format!("p{ranks}-{run}.json"));
                let args = ["train", s(&data), "-o", s(&model), "-q", "--gap", "1e-5"];
                let got = trained_over(ranks, &args, &model);
                assert!(
                    (got - best).abs() <= 1e-4 * best,
                    "{ranks} ranks: {got} vs {best}"
                );
                // Passes count the coordinate steps (shrinking makes most rounds less than a pass).
                let json: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
                let t = &json["training"];
                let (rounds, passes) = (
                    t["iterations"].as_f64().unwrap(),
                    t["epochs"].as_f64().unwrap(),
                );
                assert!(
                    passes > 1.0 && passes < rounds,
                    "{ranks} ranks: {passes} passes, {rounds} rounds"
                );
                bytes.push(std::fs::read(&model).unwrap());
            }
            assert_eq!(bytes[0], bytes[1], "{ranks} ranks: two runs differ");
        }
    }

    #[test]
    fn letter_crammer_singer_over_ranks_reaches_the_one_process_optimum() {
        let tmp = tempfile::tempdir().unwrap();
        let Some(shared) = shared_data() else { return };
        let rows = maxmargin::io::libsvm::read(&shared.join("letter/letter.scale.gz")).unwrap();
        let data = tmp.path().join("letter.svm");
        maxmargin::io::libsvm::write(&data, &rows).unwrap();
        // Each run certifies a gap of 1e-7 (one process) or 1e-5 (ranks) of its objective. At λ = 0.01: at the
        // multiclass default C = 1 (λ = 6.7e-5) the ranks' Crammer–Singer (no shrinking, a line search along
        // the summed direction) stops on its 1,000-pass budget at a 1e-3 gap, where one process converges.
        let flags = ["--task", "multiclass", "--lambda", "0.01"];
        agree_with_one_process(&data, &flags, "1e-7", "1e-5");
    }

    #[test]
    fn ocr_chains_by_cutting_planes_and_bcfw_over_ranks_reach_the_one_process_optimum() {
        let tmp = tempfile::tempdir().unwrap();
        let Some(shared) = shared_data() else { return };
        // The first 120 words of OCR fold 0 (plain text: sequences are cut between ranks by bytes).
        let all =
            maxmargin::io::svm_hmm::read(&shared.join("ocr_letters/ocr.fold0.svmhmm.gz")).unwrap();
        let mut text = String::new();
        for (q, (seq, tags)) in all.sequences.iter().zip(&all.labels).take(120).enumerate() {
            for (x, t) in seq.iter().zip(tags) {
                text.push_str(&format!("{} qid:{}", t + 1, q + 1));
                for (j, v) in x.as_row().iter() {
                    text.push_str(&format!(" {}:{v}", j + 1));
                }
                text.push('\n');
            }
        }
        let data = tmp.path().join("ocr.dat");
        std::fs::write(&data, text).unwrap();
        // λ = 1: a run certifies a small gap in seconds (at λ = 0.01 these 120 words are nearly separable and
        // 1-slack needs minutes); BCFW over ranks takes plain Frank-Wolfe steps, so it gets the looser gap.
        let common = ["--task", "chain", "--lambda", "1", "--bias", "none"];
        for (solver, ranks_gap) in [("oneslack", "1e-5"), ("nslack", "1e-5"), ("bcfw", "5e-5")] {
            let mut flags = common.to_vec();
            flags.extend(["--solver", solver]);
            agree_with_one_process(&data, &flags, "1e-5", ranks_gap);
        }
    }

    /// Graphs (JSON lines) over ranks: two-label pictures on grids, TRW-S by default, certified; BCFW and
    /// 1-slack reach one process's optimum, and n-slack (the default) trains one process's weights.
    #[test]
    fn graphs_over_ranks_reach_the_one_process_optimum() {
        let tmp = tempfile::tempdir().unwrap();
        let shapes = maxmargin::datasets::Shapes::default().size(8, 8).labels(2);
        let data = tmp.path().join("pictures.jsonl");
        maxmargin::io::graphs::write(&data, &shapes.generate(12, 4)).unwrap();
        for solver in ["bcfw", "oneslack"] {
            let flags = ["--task", "graph", "--solver", solver];
            agree_with_one_process(&data, &flags, "1e-6", "2e-5");
        }
        let model = tmp.path().join("p2.json");
        let out = mpirun(2, &["train", s(&data), "--task", "graph", "-o", s(&model)]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && !err.contains("warning"), "{err}");
        assert!(
            err.contains("trained graph nslack over 2 ranks on 12 examples"),
            "{err}"
        );
        let read = |path: &Path| -> serde_json::Value {
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
        };
        let json = read(&model);
        assert_eq!(json["model"]["training"]["converged"], true, "{json}");
        let one = tmp.path().join("one-default.json");
        ok(&["train", s(&data), "--task", "graph", "-o", s(&one), "-q"]);
        assert_eq!(json["model"]["w"], read(&one)["model"]["w"]);
    }

    #[test]
    fn pegasos_and_ssg_average_over_ranks_with_a_true_bound_and_repeat_their_bits() {
        let tmp = tempfile::tempdir().unwrap();
        let heart = super::super::heart(tmp.path());
        // Iris scaled to [-1, 1] and shuffled: shards are byte ranges, and averaging drifts on shards that
        // hold different classes (the file is sorted by class), as SSG crawls on raw iris.
        let iris = tmp.path().join("iris.svm");
        let mut data = maxmargin::datasets::iris().unwrap();
        let x = &data.x;
        let scaling = maxmargin::core::scale::Scaling::MaxAbs;
        let scaler =
            maxmargin::core::scale::Scaler::fit(scaling, x.rows(), x.n_rows(), x.n_features());
        data.x = scaler.unwrap().transform(&data.x);
        let mut order: Vec<usize> = (0..data.n_samples()).collect();
        let mut lcg = maxmargin::testing::Lcg::new(5);
        for i in (1..order.len()).rev() {
            order.swap(i, (lcg.next_u64() % (i as u64 + 1)) as usize);
        }
        maxmargin::io::libsvm::write(&iris, &data.select(&order)).unwrap();
        for (data, flags, exact) in [
            (
                &heart,
                &["--solver", "pegasos", "--epochs", "100"][..],
                &[][..],
            ),
            (
                &iris,
                &[
                    "--task",
                    "multiclass",
                    "--solver",
                    "ssg",
                    "--max-passes",
                    "100",
                ][..],
                &["--task", "multiclass"][..],
            ),
        ] {
            let one = tmp.path().join("one.json");
            let mut args = vec!["train", s(data), "-o", s(&one), "-q", "--gap", "1e-8"];
            args.extend(exact);
            ok(&args);
            let best = objective(&one);
            let mut bytes = Vec::new();
            for run in 0..2 {
                let model = tmp.path().join(format!("p2-{run}.json"));
                let mut args = vec!["train", s(data), "-o", s(&model), "-q"];
                args.extend(flags);
                let got = trained_over(2, &args, &model);
                let json: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
                let gap = json["training"]["gap"].as_f64().unwrap();
                assert!(
                    got >= best * (1.0 - 1e-9) && got - gap <= best * (1.0 + 1e-9),
                    "{flags:?}: {got} (gap {gap}) vs {best}"
                );
                assert!(got <= 1.1 * best, "{flags:?}: {got} vs {best}");
                bytes.push(std::fs::read(&model).unwrap());
            }
            assert_eq!(bytes[0], bytes[1], "{flags:?}: two runs differ");
        }
    }

    #[test]
    fn a_run_over_ranks_resumes_from_its_rank_checkpoints_to_the_same_bytes() {
        let tmp = tempfile::tempdir().unwrap();
        let data = super::super::heart(tmp.path());
        let (whole, resumed) = (
            tmp.path().join("whole.model"),
            tmp.path().join("resumed.model"),
        );
        let ckpt = tmp.path().join("run.ckpt");
        let train = |model: &Path, extra: &[&str]| {
            let mut args = vec!["train", s(&data), "-o", s(model), "-q", "--gap", "1e-6"];
            args.extend(extra);
            let out = mpirun(2, &args);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        train(&whole, &[]);
        train(&resumed, &["--epochs", "2", "--checkpoint", s(&ckpt)]);
        for r in 0..2 {
            assert!(tmp.path().join(format!("run.ckpt.rank{r}")).exists());
        }
        train(&resumed, &["--resume", s(&ckpt)]);
        assert_eq!(
            std::fs::read(&whole).unwrap(),
            std::fs::read(&resumed).unwrap()
        );
        // Three ranks cannot resume what two made.
        let out = mpirun(
            3,
            &["train", s(&data), "-o", s(&resumed), "--resume", s(&ckpt)],
        );
        assert!(!out.status.success());
        assert!(String::from_utf8_lossy(&out.stderr).contains("number of ranks"));
        // Rank files of different rounds (a run killed between two ranks' writes) are refused by name
        // before any collective: a probe's such resumes segfaulted, hung or ended in MPI_ERR_TRUNCATE.
        let later = tmp.path().join("later.ckpt");
        train(&resumed, &["--epochs", "4", "--checkpoint", s(&later)]);
        let mixed = tmp.path().join("mixed.ckpt");
        std::fs::copy(
            tmp.path().join("run.ckpt.rank0"),
            tmp.path().join("mixed.ckpt.rank0"),
        )
        .unwrap();
        std::fs::copy(
            tmp.path().join("later.ckpt.rank1"),
            tmp.path().join("mixed.ckpt.rank1"),
        )
        .unwrap();
        let out = mpirun(
            2,
            &["train", s(&data), "-o", s(&resumed), "--resume", s(&mixed)],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains("written after different rounds"),
            "{err}"
        );
    }

    /// Trains `data` with `flags` as one process (to a relative gap `one_gap`) and over 2 and 3 ranks (to
    /// `ranks_gap`), and asserts the objectives agree within 1e-4, relative.
    fn agree_with_one_process(data: &Path, flags: &[&str], one_gap: &str, ranks_gap: &str) {
        let dir = data.parent().unwrap();
        let one = dir.join("one.json");
        let mut args = vec!["train", s(data), "-o", s(&one), "-q", "--gap", one_gap];
        args.extend(flags);
        ok(&args);
        let best = objective(&one);
        for ranks in [2, 3] {
            let model = dir.join(format!("p{ranks}.json"));
            let mut args = vec!["train", s(data), "-o", s(&model), "-q", "--gap", ranks_gap];
            args.extend(flags);
            let got = trained_over(ranks, &args, &model);
            assert!(
                (got - best).abs() <= 1e-4 * best,
                "{ranks} ranks: {got} vs {best}"
            );
        }
    }

    #[test]
    fn a_rank_with_bad_input_ends_the_job_naming_it_and_writes_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("bad.svm");
        let mut text = maxmargin::datasets::HEART_SCALE.to_string();
        text.push_str("+1 3:oops\n");
        std::fs::write(&data, text).unwrap();
        let model = tmp.path().join("m.model");
        let out = mpirun(2, &["train", s(&data), "-o", s(&model), "-q"]);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("error: rank 1 of 2:") && err.contains("bad.svm:271:"),
            "{err}"
        );
        assert!(!model.exists());
        // gzip input and flags that cannot apply are refused by name.
        let out = mpirun(2, &["train", s(&data), "-o", s(&model), "--threads", "2"]);
        assert!(
            String::from_utf8_lossy(&out.stderr)
                .contains("--threads does not apply over several ranks")
        );
        assert!(!out.status.success() && !model.exists());
        // A row whose squared norm overflows, in the last rank's share, is named by its file line on the
        // rank that speaks, as one process names it (binary and multiclass).
        let mut text = maxmargin::datasets::HEART_SCALE.to_string();
        text.push_str("+1 3:1e200\n");
        std::fs::write(&data, text).unwrap();
        for task in ["binary", "multiclass"] {
            let out = mpirun(2, &["train", s(&data), "-o", s(&model), "--task", task]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("error: rank 0 of 2:") && err.contains("1.000e200 at line 271 of"),
                "{task}: {err}"
            );
            assert!(!out.status.success() && !model.exists());
        }
        // A third label in one rank's share is refused as one process refuses it (the ranks took the smallest
        // and largest labels for the classes and blamed a row of the middle one).
        let mut text = maxmargin::datasets::HEART_SCALE.to_string();
        text.push_str("+3 1:1\n");
        std::fs::write(&data, text).unwrap();
        let out = mpirun(2, &["train", s(&data), "-o", s(&model)]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("exactly two classes, found at least 3: -1, 1, 3"),
            "{err}"
        );
        // Chains and graphs too: the first position or node over the ranks, as one process names it.
        let seq = tmp.path().join("big.dat");
        let mut text: String = (1..=40)
            .map(|q| format!("1 qid:{q} 1:1\n2 qid:{q} 2:1\n"))
            .collect();
        text.push_str("1 qid:41 1:1\n2 qid:41 1:1e200\n");
        std::fs::write(&seq, text).unwrap();
        let graphs = tmp.path().join("big.jsonl");
        let line = |v: &str| {
            format!("{{\"features\":[[1,0],[0,{v}]],\"edges\":[[0,1]],\"labels\":[0,1]}}\n")
        };
        let mut text: String = (0..40).map(|_| line("1")).collect();
        text.push_str(&line("1e200"));
        std::fs::write(&graphs, text).unwrap();
        for (task, data, at) in [
            ("chain", &seq, "at position 2 of sequence qid:41 of"),
            ("graph", &graphs, "at node 1 of the graph on line 41 of"),
        ] {
            let out = mpirun(2, &["train", "--task", task, s(data), "-o", s(&model)]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("error: rank 0 of 2:") && err.contains(at),
                "{task}: {err}"
            );
            assert!(!out.status.success() && !model.exists());
        }
    }

    #[test]
    fn a_killed_rank_ends_the_job_within_seconds() {
        let tmp = tempfile::tempdir().unwrap();
        let Some(data) = a9a(tmp.path()) else { return };
        let model = tmp.path().join("m.model");
        // A run far longer than the test: an unreachable gap.
        let mut job = Command::new("mpirun")
            .args(["--oversubscribe", "--allow-run-as-root", "-np", "2"])
            .arg(env!("CARGO_BIN_EXE_maxmargin"))
            .args([
                "train",
                s(&data),
                "-o",
                s(&model),
                "-q",
                "-c",
                "100",
                "--gap",
                "1e-14",
            ])
            .args(["--epsilon", "1e-9", "--epochs", "1000000000"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        // The ranks are mpirun's children; kill one.
        let children = Command::new("pgrep")
            .args(["-P", &job.id().to_string()])
            .output()
            .unwrap();
        let pids = String::from_utf8_lossy(&children.stdout).to_string();
        let rank = pids
            .split_whitespace()
            .next()
            .expect("mpirun has started its ranks");
        assert!(
            Command::new("kill")
                .args(["-9", rank])
                .status()
                .unwrap()
                .success()
        );
        let killed = Instant::now();
        let status = loop {
            if let Some(status) = job.try_wait().unwrap() {
                break status;
            }
            assert!(
                killed.elapsed() < Duration::from_secs(10),
                "the job still runs 10 s after a rank was killed"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(!status.success());
        assert!(!model.exists());
    }
}
