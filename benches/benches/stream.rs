//! `train --stream` against training in memory and against LIBLINEAR, side by side in one run: wall time
//! and peak resident memory (`/usr/bin/time -f "%e %M"`) of whole commands on a9a and on a9a repeated ten
//! times (the same rows, so the same kind of work; the file ten times larger), with a plain pass over the
//! text (`cat`) as the floor. Streamed DCD stops on the default 1% certified gap, as in memory; LIBLINEAR
//! (`-s 3 -c 1 -B 1`, its default ε 0.1) stops on its own test. Times are ratios to LIBLINEAR's in the same
//! run; memory in MiB.
//!
//! Reads `MAXMARGIN_DATA`; needs `/usr/bin/time` and, for the reference, `liblinear-train`. Output:
//! `target/bench-report/stream.{md,json}`.

use maxmargin_benches::{command, data_dir, out_dir, s};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

#[derive(Debug, Serialize)]
struct Row {
    data: String,
    text_mib: f64,
    run: String,
    seconds: f64,
    peak_mib: f64,
    /// Seconds over LIBLINEAR's in the same run.
    time_ratio: Option<f64>,
    passes: Option<f64>,
    relative_gap: Option<f64>,
}

/// Runs `program args` under `/usr/bin/time`; returns (seconds, peak KiB).
fn measured(program: &str, args: &[String]) -> Option<(f64, f64)> {
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%e %M", program])
        .args(args)
        .stdout(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!(
            "stream: {program} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let last = err.lines().last()?;
    let mut it = last.split_whitespace();
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

fn training(model: &Path) -> (Option<f64>, Option<f64>) {
    let Some(m) = std::fs::read_to_string(model)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
    else {
        return (None, None);
    };
    let t = &m["training"];
    let gap = t["gap"]
        .as_f64()
        .zip(t["objective"].as_f64())
        .map(|(g, o)| g / o);
    (t["epochs"].as_f64(), gap)
}

fn main() {
    let Some(dir_in) = data_dir() else {
        eprintln!("stream: MAXMARGIN_DATA is not set; skipped");
        return;
    };
    let Ok(data) = maxmargin::io::libsvm::read(&dir_in.join("a9a/a9a.gz")) else {
        eprintln!("stream: a9a/a9a.gz not found; skipped");
        return;
    };
    let dir = out_dir().join("stream");
    let _ = std::fs::create_dir_all(&dir);
    let one = dir.join("a9a.svm");
    maxmargin::io::libsvm::write(&one, &data).expect("writes a9a");
    let text = std::fs::read(&one).expect("reads it back");
    let ten = dir.join("a9a-x10.svm");
    std::fs::write(&ten, text.repeat(10)).expect("writes a9a x10");
    let have_liblinear = Command::new("liblinear-train").output().is_ok();
    let ours = s(&command());
    let mut rows = Vec::new();
    for (name, file) in [("a9a", &one), ("a9a x10", &ten)] {
        let text_mib = std::fs::metadata(file).map_or(0.0, |m| m.len() as f64) / (1 << 20) as f64;
        let model = dir.join("m.json");
        let f = s(file);
        let mut runs: Vec<(String, String, Vec<String>, bool)> = vec![(
            "cat (a plain pass)".into(),
            "cat".into(),
            vec![f.clone()],
            false,
        )];
        if have_liblinear {
            let m = s(&dir.join("liblinear.model"));
            let args = ["-q", "-s", "3", "-c", "1", "-B", "1", &f, &m];
            runs.push((
                "liblinear-train -s 3".into(),
                "liblinear-train".into(),
                args.map(String::from).to_vec(),
                false,
            ));
        }
        let train = |extra: &[&str]| {
            let mut a: Vec<String> = ["train", &f, "-o", &s(&model), "-q"]
                .map(String::from)
                .to_vec();
            a.extend(extra.iter().map(|x| x.to_string()));
            a
        };
        runs.push((
            "maxmargin dcd, in memory".into(),
            ours.clone(),
            train(&["--threads", "1"]),
            true,
        ));
        runs.push((
            "maxmargin dcd --stream".into(),
            ours.clone(),
            train(&["--stream"]),
            true,
        ));
        // The same certified precision in memory and streamed: shrinking and the held working set make the
        // streamed passes (coordinate steps / n) about the in-memory ones.
        runs.push((
            "maxmargin dcd, in memory, --gap 1e-4".into(),
            ours.clone(),
            train(&["--threads", "1", "--gap", "1e-4"]),
            true,
        ));
        runs.push((
            "maxmargin dcd --stream --gap 1e-4".into(),
            ours.clone(),
            train(&["--stream", "--gap", "1e-4"]),
            true,
        ));
        runs.push((
            "maxmargin pegasos --stream".into(),
            ours.clone(),
            train(&["--stream", "--solver", "pegasos"]),
            true,
        ));
        let mut reference = None;
        for (label, program, args, ours_run) in runs {
            let Some((seconds, kib)) = measured(&program, &args) else {
                continue;
            };
            if label.starts_with("liblinear") {
                reference = Some(seconds);
            }
            let (passes, relative_gap) = if ours_run {
                training(&model)
            } else {
                (None, None)
            };
            rows.push(Row {
                data: name.into(),
                text_mib,
                run: label,
                seconds,
                peak_mib: kib / 1024.0,
                time_ratio: None,
                passes,
                relative_gap,
            });
        }
        for r in rows.iter_mut().filter(|r| r.data == name) {
            r.time_ratio = reference.map(|t| r.seconds / t.max(1e-3));
        }
    }
    let mut md = String::from(
        "| data | text MiB | run | seconds | × LIBLINEAR | peak MiB | passes | relative gap |\n|---|---|---|---|---|---|---|---|\n",
    );
    let opt = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or("-".into(), f);
    for r in &rows {
        let _ = writeln!(
            md,
            "| {} | {:.1} | {} | {:.2} | {} | {:.1} | {} | {} |",
            r.data,
            r.text_mib,
            r.run,
            r.seconds,
            opt(r.time_ratio, &|x| format!("{x:.2}")),
            r.peak_mib,
            opt(r.passes, &|x| format!("{x:.0}")),
            opt(r.relative_gap, &|x| format!("{x:.1e}")),
        );
    }
    print!("{md}");
    let out = out_dir();
    std::fs::write(out.join("stream.md"), &md).expect("writes the report");
    std::fs::write(
        out.join("stream.json"),
        serde_json::to_string_pretty(&rows).expect("serializes"),
    )
    .expect("writes the report");
}
