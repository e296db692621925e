//! Issue 23's crafted files and sizes: LIBLINEAR headers, templates and side files, edited checkpoints,
//! figures of values too large to draw, tables out of proportion to the data (see docs/BAD_INPUT.md).

use super::{fails, ok, s};
use std::path::Path;

#[test]
fn issue_23_crafted_liblinear_headers_are_refused_naming_the_field() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o.model");
    let huge = "18446744073709551615";
    for (name, header, rest, expected) in [
        (
            "wrap2",
            format!("nr_class 2\nlabel 1 -1\nnr_feature {huge}\nbias 1"),
            "",
            "nr_feature",
        ),
        (
            "wrap3",
            format!("nr_class 3\nlabel 1 -1 2\nnr_feature {huge}\nbias 1"),
            "",
            "nr_feature",
        ),
        (
            "near",
            "nr_class 2\nlabel 1 -1\nnr_feature 18446744073709551614\nbias 1".into(),
            "",
            "weight rows",
        ),
        (
            "inf",
            "nr_class 2\nlabel 1 -1\nnr_feature 1\nbias inf".into(),
            "1 \n2 \n",
            "bias: bias inf must be finite",
        ),
        (
            "nanlabel",
            "nr_class 2\nlabel nan nan\nnr_feature 1\nbias -1".into(),
            "1 \n",
            "label: NaN is not a finite label",
        ),
        (
            "nan3",
            "nr_class 3\nlabel nan nan nan\nnr_feature 1\nbias -1".into(),
            "1 2 3 \n",
            "label: NaN",
        ),
        (
            "over",
            "nr_class 2\nlabel 1 -1\nnr_feature 1\nbias 1e308".into(),
            "1 \n1e10 \n",
            "bias: 1e308 times the bias weight 1e10 is not finite",
        ),
        (
            "twice",
            "nr_class 3\nlabel 1 1 2\nnr_feature 1\nbias -1".into(),
            "1 2 3 \n",
            "twice.txt:3:1: label: label 1 is given twice",
        ),
    ] {
        let path = tmp.path().join(format!("{name}.txt"));
        let text = format!("solver_type L2R_L1LOSS_SVC_DUAL\n{header}\nw\n{rest}");
        std::fs::write(&path, text).unwrap();
        let err = fails(&["convert", s(&path), "-o", s(&out)], 1);
        assert!(
            err.contains(&format!("{name}.txt")) && err.contains(expected),
            "{name}: {err}"
        );
        assert!(!err.contains("panicked"), "{name}: {err}");
        assert!(!out.exists(), "{name}: a model was written");
    }
}

/// Issue 23, item 6: the Crammer–Singer dual's dense examples × classes table is refused before it is
/// allocated when it is far beyond what the data needs (20,000 classes × 3 rows asked for 9.6 GB).
#[test]
fn issue_23_a_crammer_singer_table_out_of_proportion_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("many.svm");
    let mut text = String::new();
    for c in 0..4000 {
        for r in 0..3 {
            text.push_str(&format!("{c} 1:{}\n", r + 1));
        }
    }
    std::fs::write(&data, text).unwrap();
    let out = tmp.path().join("m.model");
    let err = fails(
        &["train", "--task", "multiclass", s(&data), "-o", s(&out)],
        1,
    );
    assert!(
        err.contains("12000 × 4000 = 48000000 in") && err.contains("use --solver bcfw or ssg"),
        "{err}"
    );
    assert!(!out.exists());
}

/// Issue 23, items 7 and 8: templates are bounded (macros per line, lines per file, bytes, offsets without
/// wrapping), and every side file a command reads is read with the data reader's line cap or refused by
/// its first bytes (each of these took 4 to 8.6 GB on `/dev/zero`).
#[test]
fn issue_23_templates_and_side_files_are_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    let p = |n: &str| tmp.path().join(n);
    let conll = p("c.txt");
    std::fs::write(&conll, "Confidence NN B-NP\nin IN O\n\n").unwrap();
    let out = p("x.model");
    let figure = p("x.svg");
    let macros = vec!["%x[0,0]"; 20_000].join("/");
    for (name, text, expected) in [
        (
            "wide",
            format!("U00:{macros}\n"),
            "20000 macros on one template line; at most 16",
        ),
        ("wrap", "U00:%x[-2147483648,0]\n".to_string(), "|row| <= 64"),
        (
            "many",
            "U:%x[0,0]\nB:%x[0,0]\n".repeat(2500),
            "more than 4096 template lines",
        ),
    ] {
        let t = p(name);
        std::fs::write(&t, text).unwrap();
        let err = fails(
            &[
                "train",
                "--task",
                "chain",
                "--format",
                "conll",
                s(&conll),
                "-o",
                s(&out),
                "--template",
                s(&t),
            ],
            1,
        );
        assert!(
            err.contains(name) && err.contains(expected),
            "{name}: {err}"
        );
    }
    if !std::path::Path::new("/dev/zero").exists() {
        return;
    }
    let heart = super::heart(tmp.path());
    let model = p("h.model");
    ok(&["train", s(&heart), "-o", s(&model), "-q"]);
    let (h, m, o) = (s(&heart), s(&model), s(&out));
    let z = "/dev/zero";
    for (args, expected) in [
        (
            &["train", h, "-o", o, "--sample-weights", z][..],
            "/dev/zero:1:1: line: longer than 64 MiB",
        ),
        (
            &["eval", m, h, "--groups", z][..],
            "/dev/zero:1:1: line: longer than 64 MiB",
        ),
        (
            &["plot", z, "-o", s(&figure)][..],
            "/dev/zero:1:1: line: longer than 64 MiB",
        ),
        (
            &["predict", z, h][..],
            "/dev/zero: not a maxmargin model file",
        ),
        (
            &["train", h, "-o", o, "--resume", z][..],
            "/dev/zero: not a maxmargin model file",
        ),
        (
            &["train", h, "-o", o, "--warm-start", z][..],
            "/dev/zero: not a maxmargin model file",
        ),
        (
            &[
                "train",
                "--task",
                "chain",
                "--format",
                "conll",
                s(&conll),
                "-o",
                o,
                "--template",
                z,
            ][..],
            "/dev/zero:1:1: template: longer than 1024 KiB",
        ),
    ] {
        let err = fails(args, 1);
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    assert!(!out.exists() && !figure.exists());
}

/// Issue 23, item 9: values a figure cannot draw are refused naming the record or the row (a trace with an
/// objective of 1.7e308 beside 0, and `plot-boundary` on a row `1 1:1.7e308 2:0`, hung at 100% CPU).
#[test]
fn issue_23_figures_of_values_too_large_to_draw_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let p = |n: &str| tmp.path().join(n);
    std::fs::write(
        p("t.jsonl"),
        "{\"iteration\":1,\"epoch\":1.0,\"seconds\":0.1,\"objective\":1.7e308}\n\
         {\"iteration\":2,\"epoch\":2.0,\"seconds\":0.2,\"objective\":0}\n{\"stop\":\"gap\"}\n",
    )
    .unwrap();
    let (trace, svg) = (p("t.jsonl"), p("t.svg"));
    let err = fails(&["plot", s(&trace), "-o", s(&svg), "--y", "primal"], 1);
    assert!(
        err.contains("t.jsonl:1:1: record: (1e0, 1.7e308) cannot be drawn"),
        "{err}"
    );
    std::fs::write(p("b.svm"), "1 1:1.7e308 2:0\n-1 1:0 2:0\n").unwrap();
    std::fs::write(p("ok.svm"), "1 1:1 2:0\n-1 1:0 2:0\n").unwrap();
    let (data, fine, model) = (p("b.svm"), p("ok.svm"), p("b.model"));
    ok(&["train", s(&fine), "-o", s(&model), "-q"]);
    let err = fails(&["plot-boundary", s(&model), s(&data), "-o", s(&svg)], 1);
    assert!(
        err.contains("b.svm:1:1: features: (1.7e308, 0e0) cannot be drawn"),
        "{err}"
    );
    assert!(!svg.exists());
}

/// Issue 23, item 10: a checkpoint whose payload was edited and whose CRC was recomputed is an error or a
/// run, never a panic (an index out of bounds in the vector code, and in Crammer–Singer's and BCFW's state).
#[test]
fn issue_23_edited_checkpoints_with_a_forged_checksum_never_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let heart = super::heart(tmp.path());
    let iris = tmp.path().join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    let ck = tmp.path().join("c.ck");
    let out = tmp.path().join("m.model");
    let runs: [(&std::path::Path, &str, &[&str]); 7] = [
        (&heart, "--epochs", &[]),
        (&heart, "--epochs", &["--solver", "pegasos"]),
        (&iris, "--max-passes", &["--task", "multiclass"]),
        (
            &iris,
            "--max-passes",
            &["--task", "multiclass", "--solver", "bcfw"],
        ),
        // Streamed (issue 30): the stream's place (its column, held rows) is in the checkpoint too.
        (&heart, "--epochs", &["--stream"]),
        (&heart, "--epochs", &["--stream", "--loss", "logistic"]),
        (
            &iris,
            "--max-passes",
            &["--stream", "--task", "multiclass", "--solver", "ssg"],
        ),
    ];
    for (data, budget, flags) in runs {
        let mut first = vec!["train", s(data), "-o", s(&out), "-q", budget, "2"];
        first.extend_from_slice(flags);
        first.extend_from_slice(&["--checkpoint", s(&ck)]);
        ok(&first);
        let good = std::fs::read(&ck).unwrap();
        // The payload sits between the header (ending in its 8-byte length) and the 4-byte CRC at the end.
        let end = good.len() - 4;
        let start = (8..200)
            .find(|&p| {
                let len = u64::from_le_bytes(good[p - 8..p].try_into().unwrap());
                len == (end - p) as u64
            })
            .expect("a bincode checkpoint");
        let mut lcg = maxmargin::core::testing::Lcg::new(7);
        for _ in 0..60 {
            let mut bad = good.clone();
            for _ in 0..3 {
                let at = start + (lcg.unit() * (end - start) as f64) as usize % (end - start);
                bad[at] = [0xff, 0x00, 0x7f, 0x80][(lcg.unit() * 4.0) as usize % 4];
            }
            let crc = crc32fast::hash(&bad[start..end]);
            bad[end..].copy_from_slice(&crc.to_le_bytes());
            std::fs::write(&ck, &bad).unwrap();
            let mut args = vec!["train", s(data), "-o", s(&out), "-q", budget, "4"];
            args.extend_from_slice(flags);
            args.extend_from_slice(&["--resume", s(&ck)]);
            let o = super::maxmargin(&args);
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                !err.contains("panicked") && o.status.code().is_some_and(|c| c <= 1),
                "{flags:?}: {err}"
            );
        }
    }
}

/// Trains a model with `flags` on `data`, then edits 150 copies of its payload (the checksum forged) and
/// predicts with each: refused or predicted, never a panic; at least one refused.
fn edited_models_never_panic(data: &Path, flags: &[&str], dir: &Path) {
    let model = dir.join("k.model");
    let mut args = vec!["train", s(data), "-o", s(&model), "-q"];
    args.extend_from_slice(flags);
    ok(&args);
    let good = std::fs::read(&model).unwrap();
    let end = good.len() - 4;
    let start = (8..200)
        .find(|&p| u64::from_le_bytes(good[p - 8..p].try_into().unwrap()) == (end - p) as u64)
        .expect("a bincode model");
    let mut lcg = maxmargin::core::testing::Lcg::new(11);
    let bad_model = dir.join("bad.model");
    let mut refused = 0;
    for _ in 0..150 {
        let mut bad = good.clone();
        for _ in 0..2 {
            // Most of the payload is the support vectors (or frequencies), at its end.
            let at = start + (lcg.unit() * (end - start) as f64) as usize % (end - start);
            bad[at] = [0xff, 0x00, 0x7f, 0x80, 0x01][(lcg.unit() * 5.0) as usize % 5];
        }
        let crc = crc32fast::hash(&bad[start..end]);
        bad[end..].copy_from_slice(&crc.to_le_bytes());
        std::fs::write(&bad_model, &bad).unwrap();
        let o = super::maxmargin(&["predict", s(&bad_model), s(data), "--scores"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !err.contains("panicked") && o.status.code().is_some_and(|c| c <= 1),
            "{flags:?}: {err}"
        );
        refused += usize::from(!o.status.success());
    }
    assert!(refused > 0, "{flags:?}: no edit was refused");
}

/// Issue 24: a kernel model's support vectors are read from the file; an edited one (the checksum forged) is
/// refused or predicts, and never panics (offsets past the rows, unsorted or huge indices, bad kernel
/// parameters).
#[test]
fn issue_24_edited_kernel_models_with_a_forged_checksum_never_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let heart = super::heart(tmp.path());
    edited_models_never_panic(&heart, &["--kernel", "poly"], tmp.path());
}

/// Issue 24: the same for random Fourier features (frequencies, phases, their sizes) and for multiclass
/// kernel machines (classes, rows into the support vectors, their coefficients).
#[test]
fn issue_24_edited_approximated_and_multiclass_kernel_models_never_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let heart = super::heart(tmp.path());
    edited_models_never_panic(
        &heart,
        &["--approx", "rff", "--components", "20"],
        tmp.path(),
    );
    let iris = tmp.path().join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    for flags in [
        &["--task", "multiclass", "--kernel", "rbf"][..],
        &[
            "--task",
            "multiclass",
            "--approx",
            "nystroem",
            "--components",
            "20",
        ][..],
        &[
            "--task",
            "multiclass",
            "--approx",
            "rff",
            "--components",
            "20",
        ][..],
    ] {
        edited_models_never_panic(&iris, flags, tmp.path());
    }
}
