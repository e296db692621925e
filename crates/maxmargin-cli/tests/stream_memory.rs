//! `train --stream`'s promise, measured: memory does not grow with the number of rows. A file ten times
//! larger adds less than 10% to the peak resident memory of `maxmargin train --stream` (the children's peak
//! from `getrusage`, in KiB on Linux; this binary holds this one test only, so no other child counts).
#![cfg(target_os = "linux")]

use std::io::Write;
use std::path::Path;
use std::process::Command;

/// Writes `n` rows of 30 features out of about 2,000 with a noisy linear rule, from the seeded generator.
fn write_rows(path: &Path, n: usize) {
    let mut rng = maxmargin::testing::Lcg::new(11);
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for _ in 0..n {
        let (mut j, mut score, mut line) = (0, 0.0, String::new());
        for _ in 0..30 {
            j += 1 + (rng.next_u64() % 130) as usize;
            let v = rng.unit();
            score += if j % 2 == 0 { v } else { -v };
            line.push_str(&format!(" {j}:{v:.4}"));
        }
        let label = if score + 0.3 * (rng.unit() - 0.5) > 0.0 {
            1
        } else {
            -1
        };
        writeln!(out, "{label}{line}").unwrap();
    }
}

/// The largest peak resident memory (KiB) of the children waited for so far.
fn children_peak_kib() -> i64 {
    let usage =
        nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).unwrap();
    usage.max_rss()
}

fn train(data: &Path, dir: &Path, solver: &str) {
    let out = Command::new(env!("CARGO_BIN_EXE_maxmargin"))
        .args([
            "train", "--stream", "--epochs", "3", "--solver", solver, "-o",
        ])
        .arg(dir.join("m.model"))
        .arg(data)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_file_ten_times_larger_adds_less_than_a_tenth_to_peak_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (small, large) = (dir.path().join("small.svm"), dir.path().join("large.svm"));
    // 15,000 rows fill about six buckets of parsed rows (1 MiB each); 150,000 fill sixty.
    write_rows(&small, 15_000);
    write_rows(&large, 150_000);
    let text = std::fs::metadata(&large).unwrap().len() as i64;
    // The small file first, both solvers: the peak so far; then the large one may raise it.
    train(&small, dir.path(), "dcd");
    train(&small, dir.path(), "pegasos");
    let a = children_peak_kib();
    train(&large, dir.path(), "dcd");
    train(&large, dir.path(), "pegasos");
    let b = children_peak_kib();
    eprintln!("peak RSS {a} KiB for 15,000 rows, {b} KiB with 150,000 ({text} bytes of text)");
    assert!((b as f64) < 1.1 * a as f64, "{a} -> {b} KiB");
    assert!(b * 1024 < text / 2, "{b} KiB for a file of {text} bytes");
}
