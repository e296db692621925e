//! `train --sample-weights FILE`: a row of weight 0 is a row removed, a row of weight 2 a row counted
//! twice (in LIBLINEAR's C-form, where duplicating a row doubles its term), for every binary solver's
//! objective and the Crammer–Singer dual.

use super::{fails, heart, ok, s};

fn weights_of(model: &std::path::Path) -> Vec<f64> {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(model).unwrap()).unwrap();
    v["w"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn close(a: &[f64], b: &[f64]) -> bool {
    let scale = a.iter().map(|x| x.abs()).fold(1e-12, f64::max);
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-4 * scale)
}

#[test]
fn zero_removes_a_row_and_two_counts_it_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let text = std::fs::read_to_string(&data).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let write = |name: &str, body: String| {
        let p = tmp.path().join(name);
        std::fs::write(&p, body).unwrap();
        p
    };
    // Weights: row 1 counts twice, row 2 not at all, the rest once.
    let weights = write(
        "w.txt",
        (0..lines.len())
            .map(|i| match i {
                0 => "2\n",
                1 => "0\n",
                _ => "1\n",
            })
            .collect(),
    );
    let mut edited: Vec<&str> = vec![lines[0]];
    edited.extend(
        lines
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != 1)
            .map(|(_, l)| *l),
    );
    let edited = write(
        "edited.svm",
        edited.iter().map(|l| format!("{l}\n")).collect(),
    );
    let tight = ["-c", "1", "--gap", "1e-9", "--epsilon", "1e-9", "-q"];
    let (weighted, duplicated) = (tmp.path().join("w.json"), tmp.path().join("d.json"));
    let mut args = vec![
        "train",
        s(&data),
        "-o",
        s(&weighted),
        "--sample-weights",
        s(&weights),
    ];
    args.extend(tight);
    ok(&args);
    let mut args = vec!["train", s(&edited), "-o", s(&duplicated)];
    args.extend(tight);
    ok(&args);
    assert!(close(&weights_of(&weighted), &weights_of(&duplicated)));
    // All ones: the same model bytes as no weights.
    let ones = write("ones.txt", "1\n".repeat(lines.len()));
    let (a, b) = (tmp.path().join("a.model"), tmp.path().join("b.model"));
    ok(&[
        "train",
        s(&data),
        "-o",
        s(&a),
        "-q",
        "--sample-weights",
        s(&ones),
    ]);
    ok(&["train", s(&data), "-o", s(&b), "-q"]);
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    // Pegasos and the subgradient method take them too (a weight-0 row changes nothing there either).
    for solver in ["pegasos", "subgradient"] {
        ok(&[
            "train",
            s(&data),
            "-o",
            s(&a),
            "-q",
            "--solver",
            solver,
            "--sample-weights",
            s(&weights),
        ]);
    }
}

#[test]
fn crammer_singer_takes_sample_weights() {
    let tmp = tempfile::tempdir().unwrap();
    let iris = tmp.path().join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    // Every third row dropped by weight, against the file without them.
    let weights = tmp.path().join("w.txt");
    std::fs::write(
        &weights,
        (0..150)
            .map(|i| if i % 3 == 0 { "0\n" } else { "1\n" })
            .collect::<String>(),
    )
    .unwrap();
    let kept: String = maxmargin::datasets::IRIS
        .lines()
        .enumerate()
        .filter(|(i, _)| i % 3 != 0)
        .map(|(_, l)| format!("{l}\n"))
        .collect();
    let kept_path = tmp.path().join("kept.svm");
    std::fs::write(&kept_path, kept).unwrap();
    let (a, b) = (tmp.path().join("a.json"), tmp.path().join("b.json"));
    let common = [
        "--task",
        "multiclass",
        "-c",
        "1",
        "--epsilon",
        "1e-6",
        "--gap",
        "1e-9",
        "-q",
    ];
    let mut args = vec![
        "train",
        s(&iris),
        "-o",
        s(&a),
        "--sample-weights",
        s(&weights),
    ];
    args.extend(common);
    ok(&args);
    let mut args = vec!["train", s(&kept_path), "-o", s(&b)];
    args.extend(common);
    ok(&args);
    assert!(close(&weights_of(&a), &weights_of(&b)));
}

#[test]
fn sample_weight_mistakes_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let out = tmp.path().join("m.model");
    let w = |name: &str, body: &str| {
        let p = tmp.path().join(name);
        std::fs::write(&p, body).unwrap();
        p
    };
    let short = w("short.txt", "1\n2\n");
    for (file, body, needle) in [
        (
            "short.txt",
            "1\n2\n",
            "short.txt: 2 weights for the 270 rows",
        ),
        (
            "neg.txt",
            "1\n-1\n",
            "neg.txt:2:1: weight: -1 must be finite and >= 0",
        ),
        (
            "word.txt",
            "1\nheavy\n",
            "word.txt:2:1: weight: \"heavy\" is not a number",
        ),
    ] {
        let weights = w(file, body);
        let err = fails(
            &[
                "train",
                s(&data),
                "-o",
                s(&out),
                "--sample-weights",
                s(&weights),
            ],
            1,
        );
        assert!(err.contains(needle), "{err}");
    }
    let err = fails(&["cv", s(&data), "--sample-weights", s(&short)], 1);
    assert!(
        err.contains("--sample-weights does not apply to cv"),
        "{err}"
    );
    let iris = tmp.path().join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    let err = fails(
        &[
            "train",
            "--task",
            "multiclass",
            "--solver",
            "bcfw",
            s(&iris),
            "-o",
            s(&out),
            "--sample-weights",
            s(&short),
        ],
        1,
    );
    assert!(
        err.contains(
            "--sample-weights applies to binary training and to --task multiclass with --solver dcd"
        ),
        "{err}"
    );
}
