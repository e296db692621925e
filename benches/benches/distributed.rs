//! Binary DCD over MPI ranks on one machine: for P = 1 (one process, the reference), 2 and 4 ranks
//! (`mpirun --oversubscribe`), the rounds, the payload bytes a rank sends per round, the training time per
//! round and to a certified 1e-3 relative gap, on a9a (123 dense-ish features: every example touches the same
//! weights) and Reuters (8,315 sparse tf-idf features). Then a model of P = 8–64 ranks on 10 GbE from the
//! per-round bytes, the latency given in the issue (12 µs a message on loopback, taken as 10 GbE's) and the
//! compute per round measured here.
//!
//! Two cores cannot show speed-up beyond 2 ranks (4 ranks share 2 cores); what they show is the rounds the
//! protocol needs as P grows, which is a property of the algorithm, not of the machine.
//!
//! Needs the release command built with `--features mpi` (`cargo xtask bench --bench distributed` builds it)
//! and `mpirun`; reads `MAXMARGIN_DATA`. Output: `target/bench-report/distributed.{md,json}`.

use maxmargin_benches::{command, data_dir, out_dir, s};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

#[derive(Debug, Serialize)]
struct Row {
    data: String,
    ranks: usize,
    rounds: u64,
    epochs: f64,
    train_seconds: f64,
    wall_seconds: f64,
    seconds_per_round: f64,
    bytes_per_round: usize,
    relative_gap: f64,
    objective: f64,
}

/// Bytes a rank sends per round: the reduce and broadcast of `d + 1 + 3` doubles (the weight change with
/// the bias, the line search's two sums, the visited count) and the allreduce of three maxima.
fn bytes_per_round(d: usize) -> usize {
    8 * (2 * (d + 4) + 2 * 3)
}

fn train(ranks: usize, data: &Path, dir: &Path) -> Option<Row> {
    let model = dir.join(format!("p{ranks}.json"));
    let trace = dir.join(format!("p{ranks}.jsonl"));
    let args = [
        "train",
        &s(data),
        "-o",
        &s(&model),
        "-q",
        "--gap",
        "1e-3",
        "--trace",
        &s(&trace),
    ];
    let start = std::time::Instant::now();
    let out = if ranks == 1 {
        Command::new(command()).args(args).output().ok()?
    } else {
        Command::new("mpirun")
            .args([
                "--oversubscribe",
                "--allow-run-as-root",
                "-np",
                &ranks.to_string(),
            ])
            .arg(command())
            .args(args)
            .output()
            .ok()?
    };
    let wall = start.elapsed().as_secs_f64();
    if !out.status.success() {
        eprintln!(
            "distributed: {ranks} ranks failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    }
    let m: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&model).ok()?).ok()?;
    let t = &m["training"];
    let text = std::fs::read_to_string(&trace).ok()?;
    let last_record = text.lines().rev().nth(1)?;
    let record: serde_json::Value = serde_json::from_str(last_record).ok()?;
    let rounds = t["iterations"].as_u64()?;
    let seconds = record["seconds"].as_f64()?;
    let objective = t["objective"].as_f64()?;
    Some(Row {
        data: String::new(),
        ranks,
        rounds,
        epochs: t["epochs"].as_f64()?,
        train_seconds: seconds,
        wall_seconds: wall,
        seconds_per_round: seconds / rounds as f64,
        bytes_per_round: bytes_per_round(m["n_features"].as_u64()? as usize),
        relative_gap: t["gap"].as_f64()? / objective,
        objective,
    })
}

fn main() {
    let Some(dir_in) = data_dir() else {
        eprintln!("distributed: MAXMARGIN_DATA is not set; skipped");
        return;
    };
    let probe = Command::new("mpirun").arg("--version").output();
    if probe.map_or(true, |o| !o.status.success()) {
        eprintln!("distributed: no mpirun (apt-get install openmpi-bin libopenmpi-dev); skipped");
        return;
    }
    let dir = out_dir().join("distributed");
    let _ = std::fs::create_dir_all(&dir);
    let mut rows = Vec::new();
    for (name, rel) in [
        ("a9a", "a9a/a9a.gz"),
        ("reuters", "reuters_lasvm/reuters.trn.gz"),
    ] {
        // Plain text: a rank reads a byte range, which gzip does not have.
        let Ok(data) = maxmargin::io::libsvm::read(&dir_in.join(rel)) else {
            eprintln!("distributed: {rel} not found; skipped");
            continue;
        };
        let plain = dir.join(format!("{name}.svm"));
        maxmargin::io::libsvm::write(&plain, &data).expect("writes the plain copy");
        for ranks in [1, 2, 4] {
            match train(ranks, &plain, &dir) {
                Some(mut r) => {
                    r.data = name.into();
                    rows.push(r);
                }
                None => {
                    eprintln!(
                        "distributed: is the command built with --features mpi? (cargo xtask bench --bench distributed)"
                    );
                    return;
                }
            }
        }
    }
    let mut md = String::from(
        "| data | ranks | rounds | passes | train s | wall s | ms / round | bytes / round / rank | relative gap |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in &rows {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {:.1} | {:.3} | {:.2} | {:.3} | {} | {:.1e} |",
            r.data,
            r.ranks,
            r.rounds,
            r.epochs,
            r.train_seconds,
            r.wall_seconds,
            1e3 * r.seconds_per_round,
            r.bytes_per_round,
            r.relative_gap
        );
    }
    // The model: a round is the local pass (compute at P ranks = the 2-rank compute × 2/P) plus a reduce and
    // a broadcast over a binary tree (2⌈log₂P⌉ hops of latency and bytes at 10 Gb/s) and the max allreduce.
    let _ = writeln!(
        md,
        "\nModel for P ranks on 10 GbE (12 µs a hop, 1.25 GB/s), per round: compute(2 ranks) × 2/P + 4⌈log₂P⌉ × 12 µs + 2⌈log₂P⌉ × bytes / 1.25 GB/s.\n\n| data | P | compute ms | communication ms | ms / round |\n|---|---|---|---|---|"
    );
    for data in ["a9a", "reuters"] {
        let Some(two) = rows.iter().find(|r| r.data == data && r.ranks == 2) else {
            continue;
        };
        for p in [8usize, 16, 32, 64] {
            let hops = (p as f64).log2().ceil();
            let compute = 1e3 * two.seconds_per_round * 2.0 / p as f64;
            let comm =
                1e3 * (4.0 * hops * 12e-6 + 2.0 * hops * two.bytes_per_round as f64 / 2.0 / 1.25e9);
            let _ = writeln!(
                md,
                "| {data} | {p} | {compute:.3} | {comm:.3} | {:.3} |",
                compute + comm
            );
        }
    }
    print!("{md}");
    let out = out_dir();
    std::fs::write(out.join("distributed.md"), &md).expect("writes the report");
    std::fs::write(
        out.join("distributed.json"),
        serde_json::to_string_pretty(&rows).expect("serializes"),
    )
    .expect("writes the report");
}
