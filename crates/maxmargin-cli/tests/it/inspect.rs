//! `inspect`: the margin geometry of a binary model on labelled rows, checked against `predict --scores`.

use super::{fails, heart, ok, s};

#[test]
fn inspect_counts_the_geometry_and_lists_the_rows_that_matter() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let model = tmp.path().join("h.json");
    ok(&[
        "train",
        s(&data),
        "-o",
        s(&model),
        "-q",
        "--scale",
        "maxabs",
    ]);
    let v: serde_json::Value = serde_json::from_str(&ok(&[
        "inspect",
        s(&model),
        s(&data),
        "--json",
        "--nearest",
        "5",
        "--top-features",
        "3",
    ]))
    .unwrap();
    // The margins y·f(x), from predict's scores (heart's labels are +1 and -1).
    let scores: Vec<f64> = ok(&["predict", s(&model), s(&data), "--scores"])
        .lines()
        .map(|l| l.split(' ').nth(1).unwrap().parse().unwrap())
        .collect();
    let labels: Vec<f64> = maxmargin::datasets::HEART_SCALE
        .lines()
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect();
    let margins: Vec<f64> = scores.iter().zip(&labels).map(|(f, y)| f * y).collect();
    let count = |f: &dyn Fn(f64) -> bool| margins.iter().filter(|&&m| f(m)).count() as u64;
    let n = |k: &str| v[k].as_u64().unwrap();
    assert_eq!(n("n"), 270);
    assert_eq!(
        n("beyond") + n("on") + n("inside") + n("misclassified"),
        270
    );
    assert_eq!(n("misclassified"), count(&|m| m <= 0.0));
    assert_eq!(n("violators_total"), count(&|m| m < 1.0 - 1e-9));
    // Nearest rows by |f|, violators by margin, each with its line and score as predict gives them.
    let nearest = v["nearest"].as_array().unwrap();
    assert_eq!(nearest.len(), 5);
    let closest = scores.iter().map(|f| f.abs()).fold(f64::INFINITY, f64::min);
    assert!((nearest[0]["score"].as_f64().unwrap().abs() - closest).abs() < 1e-12);
    for row in nearest.iter().chain(v["violators"].as_array().unwrap()) {
        let line = row["line"].as_u64().unwrap() as usize;
        assert!((row["score"].as_f64().unwrap() - scores[line - 1]).abs() < 1e-9);
        assert!(row["features"].as_array().unwrap().len() <= 3);
    }
    let worst = v["violators"][0]["margin"].as_f64().unwrap();
    assert!((worst - margins.iter().copied().fold(f64::INFINITY, f64::min)).abs() < 1e-9);
    // The heaviest features are the largest |w| of the model file.
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    let w: Vec<f64> = saved["w"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert_eq!(w.len(), 13);
    let max = w.iter().map(|x| x.abs()).fold(0.0, f64::max);
    assert!((v["heaviest"][0]["weight"].as_f64().unwrap().abs() - max).abs() < 1e-12);
    assert_eq!(v["heaviest"].as_array().unwrap().len(), 3);
    let table = ok(&["inspect", s(&model), s(&data)]);
    assert!(
        table.contains("inside the margin") && table.contains("heaviest features"),
        "{table}"
    );
    // A multiclass model has no single margin.
    let (iris, multi) = super::iris_model(tmp.path(), "m.model");
    let err = fails(&["inspect", s(&multi), s(&iris)], 1);
    assert!(err.contains("inspect reads binary models"), "{err}");
}

/// Empty data gives nothing to look at the boundary through: refused as eval refuses it (it printed a
/// report of zero rows).
#[test]
fn inspect_refuses_empty_data() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, model) = (heart(tmp.path()), tmp.path().join("h.model"));
    ok(&["train", s(&data), "-o", s(&model), "-q"]);
    let empty = tmp.path().join("empty.svm");
    std::fs::write(&empty, "").unwrap();
    let err = fails(&["inspect", s(&model), s(&empty)], 1);
    assert!(err.contains("empty.svm: no examples"), "{err}");
}

/// On a model with a chosen cut-off, inspect also counts the rows its decisions get wrong there, as eval
/// does (it counted only those at 0: 4 where eval found 12).
#[test]
fn a_thresholded_model_is_inspected_at_its_own_cut_off_too() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let (model, cut) = (tmp.path().join("m.model"), tmp.path().join("cut.model"));
    ok(&["train", s(&data), "-o", s(&model), "-q"]);
    ok(&[
        "threshold",
        s(&model),
        s(&data),
        "--at-score",
        "0.5",
        "-o",
        s(&cut),
    ]);
    let inspect: serde_json::Value =
        serde_json::from_str(&ok(&["inspect", s(&cut), s(&data), "--json"])).unwrap();
    let eval: serde_json::Value =
        serde_json::from_str(&ok(&["eval", s(&cut), s(&data), "--json"])).unwrap();
    let wrong = eval["n"].as_u64().unwrap() - eval["correct"].as_u64().unwrap();
    assert_eq!(
        inspect["misclassified_at_threshold"].as_u64(),
        Some(wrong),
        "{inspect}"
    );
    assert_ne!(inspect["misclassified"].as_u64(), Some(wrong));
    let plain: serde_json::Value =
        serde_json::from_str(&ok(&["inspect", s(&model), s(&data), "--json"])).unwrap();
    assert!(plain.get("misclassified_at_threshold").is_none());
}
