//! `predict --scores` and `--json`: the decision values beside the labels, as the prediction uses them.

use super::{fails, ok, s};
use std::path::{Path, PathBuf};

/// heart_scale and iris in `dir`, and a binary and a multiclass model trained on them.
fn two_models(dir: &Path) -> [PathBuf; 4] {
    let heart = super::heart(dir);
    let iris = dir.join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    let (bm, mm) = (dir.join("b.model"), dir.join("m.model"));
    ok(&["train", s(&heart), "-o", s(&bm), "-q"]);
    ok(&[
        "train",
        s(&iris),
        "--task",
        "multiclass",
        "-o",
        s(&mm),
        "-q",
    ]);
    [heart, iris, bm, mm]
}

#[test]
fn binary_and_multiclass_scores_agree_with_the_labels() {
    let tmp = tempfile::tempdir().unwrap();
    let [heart, iris, bm, mm] = two_models(tmp.path());
    // Binary: one column, positive exactly when the label is the positive one (+1 here).
    let text = ok(&["predict", s(&bm), s(&heart), "--scores"]);
    let plain = ok(&["predict", s(&bm), s(&heart)]);
    assert_eq!(text.lines().count(), 270);
    for (line, label) in text.lines().zip(plain.lines()) {
        let (l, v) = line.split_once(' ').unwrap();
        assert_eq!(l, label);
        let v: f64 = v.parse().unwrap();
        assert_eq!(v > 0.0, l == "1", "{line}");
    }
    for line in ok(&["predict", s(&bm), s(&heart), "--scores", "--json"]).lines() {
        let j: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(j["label"].is_number() && j["score"].is_number(), "{line}");
    }
    // Multiclass: a header names the classes; the label is the class of the largest score.
    let text = ok(&["predict", s(&mm), s(&iris), "--scores"]);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("# label score(0) score(1) score(2)"));
    for line in lines {
        let cols: Vec<f64> = line.split(' ').map(|v| v.parse().unwrap()).collect();
        let best = (1..4).max_by(|&a, &b| cols[a].total_cmp(&cols[b])).unwrap();
        assert_eq!(cols[0], (best - 1) as f64, "{line}");
    }
    let json = ok(&["predict", s(&mm), s(&iris), "--scores", "--json"]);
    let first: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert_eq!(first["scores"].as_object().unwrap().len(), 3);
    // Other models have no scores to give.
    let ocr = tmp.path().join("c.dat");
    std::fs::write(&ocr, "1 qid:1 1:1\n2 qid:1 2:1\n1 qid:2 1:1\n").unwrap();
    let cm = tmp.path().join("c.model");
    ok(&["train", s(&ocr), "--task", "chain", "-o", s(&cm), "-q"]);
    let err = fails(&["predict", s(&cm), s(&ocr), "--scores"], 1);
    assert!(
        err.contains("--scores applies to binary, multiclass and multilabel models"),
        "{err}"
    );
}

/// `eval` reports ranking and decision measures apart, with the documented JSON keys; the counts add up.
#[test]
fn eval_reports_ranking_and_decision_measures() {
    let tmp = tempfile::tempdir().unwrap();
    let [heart, iris, bm, mm] = two_models(tmp.path());
    let e: serde_json::Value =
        serde_json::from_str(&ok(&["eval", s(&bm), s(&heart), "--json"])).unwrap();
    for k in [
        "roc_auc",
        "average_precision",
        "precision",
        "recall",
        "f1",
        "prevalence",
        "accuracy",
    ] {
        let v = e[k].as_f64().unwrap_or_else(|| panic!("{k} in {e}"));
        assert!((0.0..=1.0).contains(&v), "{k} = {v}");
    }
    let total: u64 = e["confusion"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t[2].as_u64().unwrap())
        .sum();
    assert_eq!(total, 270);
    assert_eq!(e["confusion"]["labels"], serde_json::json!([-1.0, 1.0]));
    let text = ok(&["eval", s(&bm), s(&heart)]);
    assert!(
        text.contains("ranking (the scores' order, no threshold)"),
        "{text}"
    );
    assert!(
        text.contains("predicted 1") && text.contains("actual -1"),
        "{text}"
    );
    let m: serde_json::Value =
        serde_json::from_str(&ok(&["eval", s(&mm), s(&iris), "--json"])).unwrap();
    let per_class = m["per_class"].as_array().unwrap();
    assert_eq!(per_class.len(), 3);
    let support: u64 = per_class
        .iter()
        .map(|c| c["support"].as_u64().unwrap())
        .sum();
    assert_eq!(support, 150);
    let diagonal: u64 = m["confusion"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t[0] == t[1])
        .map(|t| t[2].as_u64().unwrap())
        .sum();
    assert!((diagonal as f64 / 150.0 - m["accuracy"].as_f64().unwrap()).abs() < 1e-12);
    assert!(m["macro_f1"].as_f64().is_some());
}

/// The decision workflow on a9a: train, calibrate on one part of a9a.t, choose a cut-off by capacity on
/// it, evaluate once on the rest. Calibration beats a raw sigmoid of the margin on the held-out rows; the
/// capacity holds on the development rows; an uncalibrated model gives no probabilities.
#[test]
fn calibrate_and_threshold_on_development_data_only() {
    let Some(data) = super::shared_data() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let test_text = {
        use std::io::Read;
        let mut s = String::new();
        flate2::read::GzDecoder::new(std::fs::File::open(data.join("a9a/a9a.t.gz")).unwrap())
            .read_to_string(&mut s)
            .unwrap();
        s
    };
    let lines: Vec<&str> = test_text.lines().collect();
    let (dev, test) = (tmp.path().join("dev.svm"), tmp.path().join("test.svm"));
    std::fs::write(&dev, lines[..8000].join("\n") + "\n").unwrap();
    std::fs::write(&test, lines[8000..].join("\n") + "\n").unwrap();
    let m = |n: &str| tmp.path().join(n);
    let a9a = data.join("a9a/a9a.gz");
    ok(&["train", s(&a9a), "-o", s(&m("a.model")), "-q"]);
    let err = fails(&["predict", s(&m("a.model")), s(&test), "--probability"], 1);
    assert!(err.contains("a margin is not a confidence"), "{err}");
    ok(&[
        "calibrate",
        s(&m("a.model")),
        s(&dev),
        "-o",
        s(&m("c.model")),
    ]);
    let truth: Vec<f64> = lines[8000..]
        .iter()
        .map(|l| f64::from(u8::from(l.starts_with("+1"))))
        .collect();
    let brier = |p: &[f64]| {
        p.iter()
            .zip(&truth)
            .map(|(p, t)| (p - t) * (p - t))
            .sum::<f64>()
            / p.len() as f64
    };
    let out = ok(&[
        "predict",
        s(&m("c.model")),
        s(&test),
        "--scores",
        "--probability",
    ]);
    let (raw, calibrated): (Vec<f64>, Vec<f64>) = out
        .lines()
        .map(|l| {
            let v: Vec<f64> = l.split(' ').map(|x| x.parse().unwrap()).collect();
            (1.0 / (1.0 + (-v[1]).exp()), v[2])
        })
        .unzip();
    assert!(
        brier(&calibrated) < brier(&raw),
        "{} vs {}",
        brier(&calibrated),
        brier(&raw)
    );
    let e: serde_json::Value =
        serde_json::from_str(&ok(&["eval", s(&m("c.model")), s(&test), "--json"])).unwrap();
    assert!(e["brier"].as_f64().unwrap() < 0.2 && e["log_loss"].as_f64().is_some());
    // At most 10% of the development rows flagged; the cut-off is used by predict.
    let said = ok(&[
        "threshold",
        s(&m("c.model")),
        s(&dev),
        "--max-flag-rate",
        "0.1",
        "-o",
        s(&m("t.model")),
    ]);
    assert!(said.contains("flag rate"), "{said}");
    let flagged = ok(&["predict", s(&m("t.model")), s(&dev)])
        .lines()
        .filter(|l| *l == "1")
        .count();
    assert!(flagged <= 800 && flagged > 600, "{flagged}");
    let err = fails(
        &[
            "threshold",
            s(&m("c.model")),
            s(&dev),
            "--max-flag-rate",
            "1.5",
            "-o",
            s(&m("x.model")),
        ],
        2,
    );
    // Refused as a usage error naming the flag (it was "threshold rule must be a fraction").
    assert!(
        err.contains("'--max-flag-rate <MAX_FLAG_RATE>': a number from 0 to 1"),
        "{err}"
    );
}

#[test]
fn multiclass_calibration_gives_probabilities_that_beat_raw_margins() {
    let tmp = tempfile::tempdir().unwrap();
    let part = |name: &str, r: usize| {
        let p = tmp.path().join(name);
        let text: String = maxmargin::datasets::IRIS
            .lines()
            .enumerate()
            .filter(|(i, _)| i % 3 == r)
            .map(|(_, l)| format!("{l}\n"))
            .collect();
        std::fs::write(&p, text).unwrap();
        p
    };
    let (train, dev, test) = (
        part("train.svm", 0),
        part("dev.svm", 1),
        part("test.svm", 2),
    );
    let (model, cal) = (tmp.path().join("m.model"), tmp.path().join("m.cal"));
    ok(&[
        "train",
        "--task",
        "multiclass",
        s(&train),
        "-o",
        s(&model),
        "-q",
    ]);
    let err = fails(&["predict", s(&model), s(&test), "--probability"], 1);
    assert!(err.contains("a margin is not a confidence"), "{err}");
    let err = fails(
        &[
            "calibrate",
            s(&model),
            s(&dev),
            "-o",
            s(&cal),
            "--method",
            "isotonic",
        ],
        1,
    );
    assert!(err.contains("one-vs-rest by Platt"), "{err}");
    ok(&["calibrate", s(&model), s(&dev), "-o", s(&cal)]);
    // Probabilities by class sum to 1; the label is the one predicted without them.
    let text = ok(&["predict", s(&cal), s(&test), "--probability", "--scores"]);
    let plain = ok(&["predict", s(&model), s(&test)]);
    let truth: Vec<usize> = std::fs::read_to_string(&test)
        .unwrap()
        .lines()
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect();
    let (mut brier_cal, mut brier_raw) = (0.0, 0.0);
    for ((line, label), &y) in text.lines().skip(1).zip(plain.lines()).zip(&truth) {
        let v: Vec<f64> = line.split(' ').map(|x| x.parse().unwrap()).collect();
        assert_eq!(v[0], label.parse::<f64>().unwrap());
        let (scores, p) = (&v[1..4], &v[4..7]);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        // The margins read as probabilities: a sigmoid of each class's score, normalized.
        let raw: Vec<f64> = scores.iter().map(|s| 1.0 / (1.0 + (-s).exp())).collect();
        let total: f64 = raw.iter().sum();
        for c in 0..3 {
            let t = f64::from(u8::from(c == y));
            brier_cal += (p[c] - t).powi(2);
            brier_raw += (raw[c] / total - t).powi(2);
        }
    }
    assert!(
        brier_cal < brier_raw,
        "calibrated {brier_cal} vs raw {brier_raw}"
    );
    // eval reports the Brier score and log loss of a calibrated model; threshold stays binary.
    let e: serde_json::Value =
        serde_json::from_str(&ok(&["eval", s(&cal), s(&test), "--json"])).unwrap();
    assert!((e["brier"].as_f64().unwrap() - brier_cal / 50.0).abs() < 1e-9);
    assert!(e["log_loss"].as_f64().unwrap() > 0.0);
    let err = fails(
        &[
            "threshold",
            s(&cal),
            s(&dev),
            "-o",
            s(&cal.with_extension("thr")),
            "--max-flag-rate",
            "0.1",
        ],
        1,
    );
    assert!(err.contains("threshold binary ones"), "{err}");
}

/// Issue 23, a first workflow: a cut-off set by hand, on the calibrated probability (`--at P`, both maps) or
/// on the score (`--at-score S`), flags exactly the rows at or above it; both the score and the probability
/// are printed; `--at` on an uncalibrated model says why it cannot apply.
#[test]
fn issue_23_a_threshold_set_by_hand_flags_the_rows_above_it() {
    let tmp = tempfile::tempdir().unwrap();
    let data = super::heart(tmp.path());
    let m = |n: &str| tmp.path().join(n);
    ok(&["train", s(&data), "-o", s(&m("h.model")), "-q"]);
    for method in ["platt", "isotonic"] {
        let cal = m(&format!("{method}.model"));
        ok(&[
            "calibrate",
            s(&m("h.model")),
            s(&data),
            "--method",
            method,
            "-o",
            s(&cal),
        ]);
        let at = m("at.model");
        let said = ok(&["threshold", s(&cal), s(&data), "--at", "0.5", "-o", s(&at)]);
        assert!(said.contains(", probability "), "{said}");
        let flagged = ok(&["predict", s(&at), s(&data)])
            .lines()
            .filter(|l| *l == "1")
            .count();
        let sure = ok(&["predict", s(&cal), s(&data), "--probability"])
            .lines()
            .filter(|l| {
                l.split_whitespace()
                    .nth(1)
                    .is_some_and(|p| p.parse::<f64>().unwrap() >= 0.5)
            })
            .count();
        assert_eq!(flagged, sure, "{method}: {said}");
    }
    let at = m("score.model");
    ok(&[
        "threshold",
        s(&m("h.model")),
        s(&data),
        "--at-score",
        "0.3",
        "-o",
        s(&at),
    ]);
    let flagged = ok(&["predict", s(&at), s(&data)])
        .lines()
        .filter(|l| *l == "1")
        .count();
    let above = ok(&["predict", s(&m("h.model")), s(&data), "--scores"])
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .nth(1)
                .is_some_and(|v| v.parse::<f64>().unwrap() > 0.3)
        })
        .count();
    assert_eq!(flagged, above);
    let err = fails(
        &[
            "threshold",
            s(&m("h.model")),
            s(&data),
            "--at",
            "0.5",
            "-o",
            s(&at),
        ],
        1,
    );
    assert!(err.contains("--at P needs a calibrated model"), "{err}");
}

/// Multilabel: `predict --scores` gives one decision value per label, the label set being those with a
/// positive value; `eval` reports subset accuracy, micro and macro averages and a row per label, each
/// recomputed here from the predictions.
#[test]
fn multilabel_scores_and_the_measures_papers_report() {
    let tmp = tempfile::tempdir().unwrap();
    let mut lcg = maxmargin::testing::Lcg::new(11);
    let (mut train, mut dev, mut truth) = (String::new(), String::new(), Vec::new());
    for _ in 0..160 {
        // Each label follows its feature.
        let x: Vec<f64> = (0..4).map(|_| lcg.unit()).collect();
        let on: Vec<usize> = (0..4).filter(|&l| x[l] > 0.5).collect();
        let set = if on.is_empty() {
            maxmargin::io::multilabel::EMPTY_SET.to_string()
        } else {
            on.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(",")
        };
        let line = format!("{set} 1:{} 2:{} 3:{} 4:{}\n", x[0], x[1], x[2], x[3]);
        train.push_str(&line);
        // The development rows lack label 3: no support, so out of the macro means.
        if !on.contains(&3) {
            dev.push_str(&line);
            truth.push(on);
        }
    }
    let (data, dev_path) = (tmp.path().join("ml.svm"), tmp.path().join("dev.svm"));
    std::fs::write(&data, &train).unwrap();
    std::fs::write(&dev_path, &dev).unwrap();
    let model = tmp.path().join("ml.model");
    ok(&[
        "train",
        s(&data),
        "--task",
        "multilabel",
        "-o",
        s(&model),
        "-q",
    ]);
    let out = ok(&["predict", s(&model), s(&dev_path), "--scores"]);
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some("# labels score(0) score(1) score(2) score(3)")
    );
    let mut predicted = Vec::new();
    for line in lines {
        let cols: Vec<&str> = line.split(' ').collect();
        assert_eq!(cols.len(), 5, "{line}");
        let values: Vec<f64> = cols[1..].iter().map(|v| v.parse().unwrap()).collect();
        let on: Vec<usize> = (0..4).filter(|&l| values[l] > 0.0).collect();
        let set = maxmargin::io::multilabel::parse_label_set(cols[0]).unwrap();
        assert_eq!(
            set.iter().map(|&l| l as usize).collect::<Vec<_>>(),
            on,
            "{line}"
        );
        predicted.push(on);
    }
    let n = truth.len();
    assert_eq!(predicted.len(), n);
    let json = ok(&["predict", s(&model), s(&dev_path), "--scores", "--json"]);
    let first: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert_eq!(first["scores"].as_object().unwrap().len(), 4, "{first}");
    // The measures, from counts per label: [true positives, false positives, false negatives].
    let e: serde_json::Value =
        serde_json::from_str(&ok(&["eval", s(&model), s(&dev_path), "--json"])).unwrap();
    let mut counts = [[0usize; 3]; 4];
    let mut exact = 0;
    for (t, p) in truth.iter().zip(&predicted) {
        exact += usize::from(t == p);
        for (l, c) in counts.iter_mut().enumerate() {
            match (p.contains(&l), t.contains(&l)) {
                (true, true) => c[0] += 1,
                (true, false) => c[1] += 1,
                (false, true) => c[2] += 1,
                _ => {}
            }
        }
    }
    assert_eq!(e["subset_accuracy"].as_f64(), Some(exact as f64 / n as f64));
    assert_eq!(e["subset_accuracy"], e["exact_match"]);
    let total = |i: usize| counts.iter().map(|c| c[i]).sum::<usize>();
    assert_eq!(
        e["micro_precision"].as_f64(),
        Some(total(0) as f64 / (total(0) + total(1)) as f64)
    );
    let rows = e["per_class"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    let mut f1s = Vec::new();
    for (l, (row, c)) in rows.iter().zip(&counts).enumerate() {
        assert_eq!(row["class"].as_f64(), Some(l as f64));
        assert_eq!(row["support"].as_u64(), Some((c[0] + c[2]) as u64), "{row}");
        if c[0] + c[2] > 0 {
            f1s.push(row["f1"].as_f64().unwrap_or(0.0));
        }
    }
    assert_eq!(rows[3]["support"].as_u64(), Some(0));
    assert_eq!(f1s.len(), 3, "labels 0..2 occur");
    let macro_f1 = e["macro_f1"].as_f64().unwrap();
    assert!(
        (macro_f1 - f1s.iter().sum::<f64>() / 3.0).abs() < 1e-15,
        "{e}"
    );
    // Each label follows one feature: a linear model gets most decisions right.
    assert!(e["micro_f1"].as_f64().unwrap() > 0.8, "{e}");
    let table = ok(&["eval", s(&model), s(&dev_path)]);
    assert!(
        table.contains("subset accuracy") && table.contains("label "),
        "{table}"
    );
}
