//! Decisions taken after training: a threshold set at a probability follows a new calibration, the
//! probability printed beside a cut-off is the lowest a flagged row has, and measures stay in their ranges.

use super::*;

/// heart cut into training, development and test files.
fn split(dir: &Path) -> [PathBuf; 3] {
    let lines: Vec<&str> = maxmargin::datasets::HEART_SCALE.lines().collect();
    let parts = [&lines[..150], &lines[150..210], &lines[210..]];
    let names = ["train.svm", "dev.svm", "test.svm"];
    names
        .map(|name| dir.join(name))
        .into_iter()
        .zip(parts)
        .for_each(|(p, rows)| {
            std::fs::write(&p, rows.join("\n") + "\n").unwrap();
        });
    names.map(|name| dir.join(name))
}

/// Rows `predict --probability` calls negative although their probability reaches `p`.
fn negatives_at_or_above(model: &Path, data: &Path, p: f64) -> usize {
    let out = ok(&["predict", s(model), s(data), "--probability"]);
    out.lines()
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            // `label probability-of-each-label...`: the positive label's comes last.
            f[0] == "-1" && f.last().unwrap().parse::<f64>().unwrap() >= p
        })
        .count()
}

#[test]
fn a_threshold_at_a_probability_follows_a_new_calibration() {
    let tmp = tempfile::tempdir().unwrap();
    let [train, dev, test] = split(tmp.path());
    let p = |name: &str| tmp.path().join(name);
    let (re, cut) = (p("re"), p("cut"));
    ok(&["train", s(&train), "-o", s(&p("m")), "-q"]);
    ok(&["calibrate", s(&p("m")), s(&dev), "-o", s(&p("platt"))]);
    ok(&[
        "threshold",
        s(&p("platt")),
        s(&dev),
        "--at",
        "0.7",
        "-o",
        s(&cut),
    ]);
    let args = [
        "calibrate",
        s(&cut),
        s(&dev),
        "--method",
        "isotonic",
        "-o",
        s(&re),
    ];
    let err = ok_stderr(&args);
    assert!(
        err.contains("the threshold at probability 0.7 moves with the calibration"),
        "{err}"
    );
    assert_eq!(negatives_at_or_above(&re, &test, 0.7), 0);
    // The probability printed beside an isotonic cut-off is the lowest a flagged row has: at least the one
    // asked for (it printed the step below the cut, 0.5 for --at 0.6).
    for at in ["0.3", "0.6", "0.9"] {
        let out = ok(&["threshold", s(&re), s(&dev), "--at", at, "-o", s(&p("x"))]);
        let printed: f64 = out.split("probability ").nth(1).unwrap()[..6]
            .parse()
            .unwrap();
        assert!(printed >= at.parse::<f64>().unwrap(), "--at {at}: {out}");
    }
    let out = ok(&["threshold", s(&re), s(&dev), "--at", "0", "-o", s(&p("x"))]);
    assert!(
        out.starts_with("threshold none: every row is flagged"),
        "{out}"
    );
}

#[test]
fn eval_measures_stay_finite_and_in_range() {
    let tmp = tempfile::tempdir().unwrap();
    let [train, _, _] = split(tmp.path());
    // Rows scored -1e307 each: every hinge is finite, their sum was not (mean hinge `null`).
    let lib = tmp.path().join("one.liblinear");
    let head = "solver_type L2R_L1LOSS_SVC_DUAL\nnr_class 2\nlabel 1 -1\nnr_feature 1\nbias 1\nw\n";
    std::fs::write(&lib, format!("{head}1\n0\n")).unwrap();
    let model = tmp.path().join("one.model");
    ok(&["convert", s(&lib), "-o", s(&model)]);
    let far = tmp.path().join("far.svm");
    std::fs::write(&far, "+1 1:-1e307\n".repeat(100)).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["eval", s(&model), s(&far), "--json"])).unwrap();
    let hinge = json["mean_hinge"].as_f64();
    assert!(
        hinge.is_some_and(|h| (h / 1e307 - 1.0).abs() < 1e-12),
        "{json}"
    );
    // An objective beyond a float is refused by name, not printed `inf` (JSON `null`).
    std::fs::write(&lib, format!("{head}1e300\n0\n")).unwrap();
    ok(&["convert", s(&lib), "-o", s(&model)]);
    let near = tmp.path().join("near.svm");
    std::fs::write(&near, "+1 1:1\n-1 1:-1\n").unwrap();
    let err = fails(&["eval", s(&model), s(&near), "--lambda", "0.1"], 1);
    assert!(
        err.contains("gives an objective beyond a 64-bit float"),
        "{err}"
    );
    // Average precision of rows that are all positive is exactly 1 (it was 1.0000000000000013).
    let positives: String = maxmargin::datasets::HEART_SCALE
        .lines()
        .filter(|l| l.starts_with("+1"))
        .take(60)
        .map(|l| format!("{l}\n"))
        .collect();
    let pos = tmp.path().join("pos.svm");
    std::fs::write(&pos, positives).unwrap();
    ok(&["train", s(&train), "-o", s(&model), "-q"]);
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["eval", s(&model), s(&pos), "--json"])).unwrap();
    assert_eq!(json["average_precision"].as_f64(), Some(1.0), "{json}");
}
