//! `plot` and `plot-boundary`: figures drawn from real traces and models, and the mistakes they name.

use super::{fails, heart, ok, s};

#[test]
fn plot_draws_several_traces_with_their_tolerance() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let (dcd, pegasos) = (
        tmp.path().join("dcd.jsonl"),
        tmp.path().join("pegasos.jsonl"),
    );
    let model = tmp.path().join("m.model");
    ok(&["train", s(&data), "-o", s(&model), "--trace", s(&dcd), "-q"]);
    ok(&[
        "train",
        s(&data),
        "-o",
        s(&model),
        "--solver",
        "pegasos",
        "--epochs",
        "5",
        "--trace",
        s(&pegasos),
        "-q",
    ]);
    // The trace's summary names the run and the tolerance it headed for.
    let last: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&dcd)
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(last["tolerance"].as_f64(), Some(0.01));
    assert!(
        last["run"]
            .as_str()
            .unwrap()
            .starts_with("dcd on 270 examples")
    );
    let svg = tmp.path().join("fig.svg");
    ok(&["plot", s(&dcd), s(&pegasos), "-o", s(&svg)]);
    let text = std::fs::read_to_string(&svg).unwrap();
    for needle in ["dcd", "pegasos", "tolerance 1e-2", "duality gap / primal"] {
        assert!(text.contains(needle), "the figure lacks {needle}");
    }
    // Other axes; a PNG on request.
    let png = tmp.path().join("fig.png");
    ok(&[
        "plot",
        s(&dcd),
        "-o",
        s(&png),
        "--x",
        "seconds",
        "--y",
        "primal",
        "--title",
        "heart",
    ]);
    assert!(
        std::fs::read(&png)
            .unwrap()
            .starts_with(b"\x89PNG\r\n\x1a\n")
    );
    // What a trace cannot give is named.
    let err = fails(&["plot", s(&dcd), "-o", s(&svg), "--x", "oracle-calls"], 1);
    assert!(
        err.contains(&format!("{}: the trace has no oracle calls", s(&dcd))),
        "{err}"
    );
    let bad = tmp.path().join("bad.jsonl");
    std::fs::write(
        &bad,
        "{\"iteration\":1,\"epoch\":1.0,\"seconds\":0.1,\"objective\":1.0}\nnot json\n",
    )
    .unwrap();
    let err = fails(&["plot", s(&bad), "-o", s(&svg)], 1);
    assert!(
        err.contains("bad.jsonl:2:1: trace: not a trace line"),
        "{err}"
    );
    let err = fails(&["plot", s(&data), "-o", s(&svg)], 1);
    assert!(
        err.contains("heart.svm:1:1: trace: not a trace line"),
        "{err}"
    );
    fails(&["plot", "-o", s(&svg)], 2);
    // Passes of 0 cannot sit on the log x axis: the error says so (it was "nothing to draw: no points"),
    // and beside a drawable trace the curve is left out with a warning (it vanished, its legend kept).
    let zero = tmp.path().join("zero.jsonl");
    let line = |i: u32| {
        format!("{{\"iteration\":{i},\"epoch\":0,\"seconds\":0.1,\"objective\":1.0,\"gap\":0.1}}\n")
    };
    std::fs::write(&zero, line(1) + &line(2)).unwrap();
    let err = fails(&["plot", s(&zero), "-o", s(&svg)], 1);
    assert!(
        err.contains("no point of zero can be drawn") && err.contains("above 0"),
        "{err}"
    );
    let err = super::ok_stderr(&["plot", s(&zero), s(&dcd), "-o", s(&svg)]);
    assert!(
        err.contains("warning: zero: none of its 2 points can be drawn"),
        "{err}"
    );
}

#[test]
fn plot_boundary_draws_the_soft_margin_figure() {
    let tmp = tempfile::tempdir().unwrap();
    // Two overlapping classes on two features: some points violate the margin.
    let rows: String = (0..40)
        .map(|i| {
            let (x, y) = (f64::from(i % 8) * 0.5, f64::from(i / 8) * 0.7);
            let label = if x + y + f64::from(i % 3) * 0.4 > 3.0 {
                "+1"
            } else {
                "-1"
            };
            format!("{label} 1:{x} 2:{y}\n")
        })
        .collect();
    let data = tmp.path().join("two.svm");
    std::fs::write(&data, rows).unwrap();
    let model = tmp.path().join("two.model");
    ok(&["train", s(&data), "-o", s(&model), "-c", "1", "-q"]);
    let svg = tmp.path().join("b.svg");
    ok(&["plot-boundary", s(&model), s(&data), "-o", s(&svg)]);
    let text = std::fs::read_to_string(&svg).unwrap();
    for needle in [
        "class 1",
        "class -1",
        "boundary",
        "margins",
        "y·f(x) &lt; 1",
    ] {
        assert!(text.contains(needle), "the figure lacks {needle}");
    }
    // A model on more features, or not binary, is refused with the reason.
    let wide = heart(tmp.path());
    let heart_model = tmp.path().join("h.model");
    ok(&["train", s(&wide), "-o", s(&heart_model), "-q"]);
    let err = fails(
        &["plot-boundary", s(&heart_model), s(&wide), "-o", s(&svg)],
        1,
    );
    assert!(
        err.contains("two-feature data") && err.contains("13 features"),
        "{err}"
    );
    let (iris, multi) = super::iris_model(tmp.path(), "iris.model");
    let err = fails(&["plot-boundary", s(&multi), s(&iris), "-o", s(&svg)], 1);
    assert!(
        err.contains("draws binary models") && err.contains("multiclass"),
        "{err}"
    );
}
