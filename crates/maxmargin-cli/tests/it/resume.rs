//! Runs killed with SIGKILL during training, several times, resume from their last periodic checkpoint to
//! the same model bytes as a run that was never stopped.

use super::{fails, heart, iris_model, ok, s, shared_data};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Trains with `args` plus periodic checkpoints, killing the process (SIGKILL) after `kill_after` each time
/// until it has been killed `kills` times or finishes; then resumes to the end. Returns how many times it
/// was really killed mid-run.
fn train_with_kills(args: &[&str], ck: &Path, kill_after: Duration, kills: usize) -> usize {
    let mut killed = 0;
    for _ in 0..kills {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_maxmargin"));
        cmd.args(args)
            .args([
                "--checkpoint",
                s(ck),
                "--checkpoint-every",
                "0.02",
                "--quiet",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if ck.exists() {
            cmd.args(["--resume", s(ck)]);
        }
        let mut child = cmd.spawn().expect("the binary starts");
        let start = Instant::now();
        loop {
            if child.try_wait().expect("wait").is_some() {
                return killed;
            }
            if start.elapsed() >= kill_after {
                child.kill().expect("SIGKILL");
                child.wait().expect("reap");
                killed += 1;
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    let mut last: Vec<&str> = args.to_vec();
    last.extend(["--checkpoint", s(ck), "--quiet"]);
    if ck.exists() {
        last.extend(["--resume", s(ck)]);
    }
    ok(&last);
    killed
}

fn same_bits_after_kills(train: &[&str], kill_after: Duration) {
    let tmp = tempfile::tempdir().unwrap();
    let (straight, resumed, ck) = (
        tmp.path().join("straight.model"),
        tmp.path().join("resumed.model"),
        tmp.path().join("run.ck"),
    );
    let mut args = train.to_vec();
    args.extend(["-o", s(&straight), "--quiet"]);
    let begun = Instant::now();
    ok(&args);
    let took = begun.elapsed();
    let mut args = train.to_vec();
    args.extend(["-o", s(&resumed)]);
    let killed = train_with_kills(&args, &ck, kill_after, 4);
    assert!(
        killed >= 2,
        "the run ({took:?} uninterrupted) ended before it was killed twice: make it longer"
    );
    assert_eq!(
        std::fs::read(&straight).unwrap(),
        std::fs::read(&resumed).unwrap(),
        "{train:?}: a run killed {killed} times and resumed differs from one never stopped"
    );
}

#[test]
fn binary_pegasos_killed_and_resumed_gives_the_same_bits() {
    let Some(data) = shared_data() else { return };
    let a9a = data.join("a9a/a9a.gz");
    same_bits_after_kills(
        &["train", s(&a9a), "--solver", "pegasos", "--epochs", "600"],
        Duration::from_millis(450),
    );
}

#[test]
fn binary_dcd_killed_and_resumed_gives_the_same_bits() {
    let Some(data) = shared_data() else { return };
    let a9a = data.join("a9a/a9a.gz");
    // At C = 100 with a tight ε DCD is busy for seconds; the gap is evaluated every pass, into the trace
    // that resumes.
    same_bits_after_kills(
        &[
            "train",
            s(&a9a),
            "-c",
            "100",
            "--epsilon",
            "1e-9",
            "--gap",
            "1e-12",
            "--epochs",
            "1000",
            "--eval-every",
            "1",
        ],
        Duration::from_millis(450),
    );
}

#[test]
fn binary_logistic_killed_and_resumed_gives_the_same_bits() {
    let Some(data) = shared_data() else { return };
    let a9a = data.join("a9a/a9a.gz");
    // Logistic regression's state carries the complements of its duals: they resume exactly too.
    same_bits_after_kills(
        &[
            "train",
            s(&a9a),
            "--loss",
            "logistic",
            "-c",
            "100",
            "--epsilon",
            "1e-13",
            "--gap",
            "1e-15",
            "--epochs",
            "250",
            "--eval-every",
            "1",
        ],
        Duration::from_millis(450),
    );
}

#[test]
fn chain_bcfw_killed_and_resumed_gives_the_same_bits() {
    let Some(data) = shared_data() else { return };
    let ocr = data.join("ocr_letters/ocr.fold0.svmhmm.gz");
    same_bits_after_kills(
        &[
            "train",
            s(&ocr),
            "--task",
            "chain",
            "--solver",
            "bcfw",
            "--max-passes",
            "80",
            // All 80 passes, not a stop at the default 1% gap: the run outlasts two kills however fast
            // BCFW gets (at 31 passes it once took 0.84 s, too short for kills 0.6 s apart).
            "--gap",
            "1e-9",
        ],
        Duration::from_millis(600),
    );
}

#[test]
fn sigterm_and_sigint_leave_no_temporary_file() {
    let Some(data) = shared_data() else { return };
    let ocr = data.join("ocr_letters/ocr.fold0.svmhmm.gz");
    let tmp = tempfile::tempdir().unwrap();
    let (model, ck) = (tmp.path().join("m.model"), tmp.path().join("run.ck"));
    let mut interrupted = 0;
    // BCFW's 20 MB checkpoints, written as often as allowed: signals land in and out of writes.
    for (i, delay) in [150u64, 230, 310, 390, 470, 550].into_iter().enumerate() {
        let child = Command::new(env!("CARGO_BIN_EXE_maxmargin"))
            .args([
                "train",
                s(&ocr),
                "--task",
                "chain",
                "--max-passes",
                "60",
                "--gap",
                "1e-9",
            ])
            .args(["-o", s(&model), "--checkpoint", s(&ck)])
            .args(["--checkpoint-every", "0.001", "--quiet"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay));
        let signal = if i % 2 == 0 { "TERM" } else { "INT" };
        let sent = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let out = child.wait_with_output().unwrap();
        match out.status.code() {
            Some(143) | Some(130) => {
                interrupted += 1;
                let err = String::from_utf8_lossy(&out.stderr);
                assert!(err.contains("interrupted by signal"), "{err}");
            }
            Some(0) => {}
            other => panic!("exit {other:?}: {}", String::from_utf8_lossy(&out.stderr)),
        }
        let debris: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(
            debris.is_empty(),
            "after SIG{signal} at {delay} ms: {debris:?}"
        );
    }
    assert!(interrupted >= 3, "only {interrupted} runs were interrupted");
}

#[test]
fn a_checkpoint_resumes_only_with_the_problem_it_was_made_for() {
    // Resuming a run trained with an unregularized bias under the default bias once panicked (the state's
    // weights had one entry fewer than the problem's); every problem-shaping flag is now compared.
    let tmp = tempfile::tempdir().unwrap();
    let (ck, out) = (tmp.path().join("run.ck"), tmp.path().join("m.model"));
    let data = heart(tmp.path());
    let made = ["-w", "1=2", "--bias", "unregularized"];
    let mut first = vec![
        "train",
        s(&data),
        "-o",
        s(&out),
        "-q",
        "--checkpoint",
        s(&ck),
    ];
    first.extend(made);
    ok(&first);
    let resume = ["train", s(&data), "-o", s(&out), "-q", "--resume", s(&ck)];
    for (other, named) in [
        (
            &["-w", "1=2"][..],
            "bias unregularized; this run has feature",
        ),
        (
            &["--bias", "unregularized"][..],
            "class weights 1=2; this run has none",
        ),
        (
            &["-w", "1=2", "--bias", "unregularized", "--scale", "maxabs"][..],
            "scaling",
        ),
        (
            &[
                "-w",
                "1=2",
                "--bias",
                "unregularized",
                "--loss",
                "squared-hinge",
                "--solver",
                "dcd",
            ][..],
            "loss hinge; this run has squared-hinge",
        ),
        (
            &["-w", "1=2", "--bias", "unregularized", "--pos-label", "-1"][..],
            "positive label the larger label (the default); this run has -1",
        ),
        // The model depends on the seed (and DCD's blocks): a run resumed with another matched neither.
        (
            &["-w", "1=2", "--bias", "unregularized", "--seed", "5"][..],
            "seed 0; this run has 5",
        ),
    ] {
        let mut args = resume.to_vec();
        args.extend(other);
        let err = fails(&args, 1);
        assert!(
            err.contains("checkpoint made with") && err.contains(named),
            "{other:?}: {err}"
        );
    }
    // The same problem with a longer budget continues.
    let mut args = resume.to_vec();
    args.extend(made);
    args.extend(["--epochs", "2000"]);
    ok(&args);
    let plain = tmp.path().join("plain.ck");
    ok(&[
        "train",
        s(&data),
        "-o",
        s(&out),
        "-q",
        "--checkpoint",
        s(&plain),
    ]);
    let err = fails(
        &[
            "train",
            s(&data),
            "-o",
            s(&out),
            "--resume",
            s(&plain),
            "--blocks",
            "2",
        ],
        1,
    );
    assert!(
        err.contains("checkpoint made with blocks 1; this run has 2"),
        "{err}"
    );
    // Structured: a multiclass BCFW run resumed with another scaling.
    let (iris, _) = iris_model(tmp.path(), "iris.model");
    let train = [
        "train",
        s(&iris),
        "--task",
        "multiclass",
        "--solver",
        "bcfw",
        "-o",
        s(&out),
        "-q",
    ];
    let mut args = train.to_vec();
    args.extend(["--checkpoint", s(&ck)]);
    ok(&args);
    let mut args = train.to_vec();
    args.extend(["--resume", s(&ck), "--scale", "maxabs"]);
    let err = fails(&args, 1);
    assert!(err.contains("checkpoint made with scaling none"), "{err}");
}

/// A checkpoint of the other mode says which mode made it: a --stream run's given to a run in memory (it
/// said "not a model", though --resume was given one), and a run over ranks' files given to one process (it
/// said "no such file").
#[test]
fn a_checkpoint_of_another_mode_says_which_mode_made_it() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let (model, streamed, memory) = (
        tmp.path().join("m.model"),
        tmp.path().join("s.ck"),
        tmp.path().join("m.ck"),
    );
    let train = |extra: &[&str]| -> Vec<String> {
        let base = ["train", s(&data), "-o", s(&model), "-q"];
        base.iter().chain(extra).map(|a| a.to_string()).collect()
    };
    let ok = |args: Vec<String>| ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let fails = |args: Vec<String>| fails(&args.iter().map(String::as_str).collect::<Vec<_>>(), 1);
    ok(train(&["--stream", "--checkpoint", s(&streamed)]));
    ok(train(&["--checkpoint", s(&memory)]));
    let err = fails(train(&["--resume", s(&streamed)]));
    assert!(
        err.contains("made by a --stream run; resume it with --stream"),
        "{err}"
    );
    let err = fails(train(&["--stream", "--resume", s(&memory)]));
    assert!(
        err.contains("made by a run in memory; resume it without --stream"),
        "{err}"
    );
    let ranks = tmp.path().join("r.ck");
    std::fs::copy(&memory, tmp.path().join("r.ck.rank0")).unwrap();
    let err = fails(train(&["--resume", s(&ranks)]));
    assert!(err.contains("a run over MPI ranks made it"), "{err}");
}
