//! The lessons' worked examples, reproduced from the command line as the guide shows them.

use super::{fails, ok, s};

/// The guide's command for the Pegasos hand table: A = (2,1) +1, B = (−1,−2) −1, the lecture's C = 1 (λ = 1
/// in the λ-form, so η_t = 1/t), no bias, A and B alternating, the last iterate, six steps.
pub const PEGASOS_HAND: &[&str] = &[
    "--solver",
    "pegasos",
    "--lambda",
    "1",
    "--sampling",
    "cyclic",
    "--last",
    "--bias",
    "none",
    "--iterations",
    "6",
];

#[test]
fn the_pegasos_hand_table_from_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("ab.svm");
    std::fs::write(&data, "+1 1:2 2:1\n-1 1:-1 2:-2\n").unwrap();
    let (model, trace) = (tmp.path().join("hand.model"), tmp.path().join("hand.jsonl"));
    let mut args = vec!["train", s(&data), "-o", s(&model), "-q"];
    args.extend_from_slice(PEGASOS_HAND);
    args.extend_from_slice(&["--trace", s(&trace), "--trace-weights"]);
    ok(&args);
    let text = std::fs::read_to_string(&trace).unwrap();
    let steps: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v.get("step").is_some())
        .collect();
    let w = [
        (2.0, 1.0),
        (1.0, 0.5),
        (2.0 / 3.0, 1.0 / 3.0),
        (0.5, 0.25),
        (0.4, 0.2),
        (0.5, 0.5),
    ];
    let margins = [0.0, 4.0, 2.5, 4.0 / 3.0, 1.25, 0.8];
    assert_eq!(steps.len(), 6);
    for (t, step) in steps.iter().enumerate() {
        let d = &step["step"];
        let (w0, w1) = (
            d["weights"][0].as_f64().unwrap(),
            d["weights"][1].as_f64().unwrap(),
        );
        assert!(
            (w0 - w[t].0).abs() < 1e-12 && (w1 - w[t].1).abs() < 1e-12,
            "w at step {}",
            t + 1
        );
        let e = &d["examples"][0];
        assert_eq!(
            e["example"].as_u64(),
            Some((t % 2) as u64),
            "A and B alternate"
        );
        assert!((e["margin"].as_f64().unwrap() - margins[t]).abs() < 1e-12);
        let case = if margins[t] < 1.0 { "violated" } else { "else" };
        assert_eq!(e["case"], case);
        assert!(d.get("bias").is_none(), "no bias");
    }
}

#[test]
fn trace_weights_is_for_small_binary_problems_with_a_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let data = super::heart(tmp.path());
    let (model, trace) = (tmp.path().join("m.model"), tmp.path().join("t.jsonl"));
    // 13 features: every record carries w (and b, the bias feature's weight by default).
    ok(&[
        "train",
        s(&data),
        "-o",
        s(&model),
        "--trace",
        s(&trace),
        "--trace-weights",
        "-q",
        "--solver",
        "pegasos",
        "--epochs",
        "1",
    ]);
    let first: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&trace)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(first["step"]["weights"].as_array().unwrap().len(), 13);
    assert_eq!(
        first["iteration"].as_u64(),
        Some(1),
        "a record after every step"
    );
    fails(&["train", s(&data), "-o", s(&model), "--trace-weights"], 2);
    let wide = tmp.path().join("wide.svm");
    std::fs::write(&wide, "+1 1:1 21:1\n-1 2:1\n").unwrap();
    let err = fails(
        &[
            "train",
            s(&wide),
            "-o",
            s(&model),
            "--trace",
            s(&trace),
            "--trace-weights",
        ],
        1,
    );
    assert!(
        err.contains("at most 20 features") && err.contains("has 21"),
        "{err}"
    );
    let iris = tmp.path().join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    let err = fails(
        &[
            "train",
            "--task",
            "multiclass",
            s(&iris),
            "-o",
            s(&model),
            "--trace",
            s(&trace),
            "--trace-weights",
        ],
        1,
    );
    assert!(
        err.contains("--trace-weights applies to binary training"),
        "{err}"
    );
}
