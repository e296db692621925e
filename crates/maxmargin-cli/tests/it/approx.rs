//! Issue 24: approximated kernels (`--approx rff|nystroem --components K`) train a linear solver on features
//! fitted after scaling and kept in the model, which goes through the whole binary workflow; and `compare`
//! puts the families side by side on development rows.

use super::*;

#[test]
fn issue_24_approximated_kernels_go_through_the_binary_workflow() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    for (method, says) in [
        (
            "nystroem",
            "nystroem approximation of the rbf, 40 landmarks",
        ),
        ("rff", "rff approximation of the rbf, 40 components"),
    ] {
        let model = tmp.path().join(format!("{method}.model"));
        let flags = [
            "train",
            s(&data),
            "--approx",
            method,
            "--components",
            "40",
            "--scale",
            "maxabs",
            "-o",
        ];
        let mut args = flags.to_vec();
        args.push(s(&model));
        let said = ok_stderr(&args);
        assert!(said.contains(says), "{said}");
        assert!(said.contains("stop: converged"), "{said}");
        // The same seed gives the same bytes on any number of threads; another seed another map.
        let again = tmp.path().join("again.model");
        let mut args = flags.to_vec();
        args.extend([s(&again), "--threads", "1", "-q"]);
        ok(&args);
        assert_eq!(
            std::fs::read(&model).unwrap(),
            std::fs::read(&again).unwrap()
        );
        args.extend(["--seed", "7"]);
        ok(&args);
        assert_ne!(
            std::fs::read(&model).unwrap(),
            std::fs::read(&again).unwrap()
        );
        let text = ok(&["eval", s(&model), s(&data), "--json"]);
        let e: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert!(e["accuracy"].as_f64().unwrap() > 0.8, "{text}");
        let scores = ok(&["predict", s(&model), s(&data), "--scores"]);
        assert_eq!(scores.lines().count(), 270);
        // Through JSON and back, the same scores.
        let json = tmp.path().join(format!("{method}.json"));
        ok(&["convert", s(&model), "--to", "json", "-o", s(&json)]);
        assert_eq!(ok(&["predict", s(&json), s(&data), "--scores"]), scores);
        let cal = tmp.path().join("cal.model");
        ok(&["calibrate", s(&model), s(&data), "-o", s(&cal)]);
        let p = ok(&["predict", s(&cal), s(&data), "--probability"]);
        assert_eq!(p.lines().count(), 270);
        let cut = tmp.path().join("cut.model");
        ok(&["threshold", s(&cal), s(&data), "--at", "0.5", "-o", s(&cut)]);
        ok(&["inspect", s(&model), s(&data)]);
        let bench = ok(&["bench-predict", s(&model), s(&data), "--json"]);
        let b: serde_json::Value = serde_json::from_str(&bench).unwrap();
        assert!(b["p99_us"].as_f64().unwrap() > 0.0, "{bench}");
        let err = fails(
            &["convert", s(&model), "--to", "liblinear", "-o", s(&cut)],
            1,
        );
        assert!(err.contains("kernel"), "{err}");
    }
    // Logistic regression and Pegasos on the features, and cv.
    for extra in [&["--loss", "logistic"][..], &["--solver", "pegasos"][..]] {
        let mut args = vec!["train", s(&data), "--approx", "rff", "-o"];
        let model = tmp.path().join("other.model");
        args.push(s(&model));
        args.extend_from_slice(extra);
        args.push("-q");
        ok(&args);
    }
    let cv = ok(&["cv", s(&data), "--approx", "nystroem", "--folds", "3"]);
    assert!(cv.contains("accuracy"), "{cv}");
}

#[test]
fn issue_24_flags_an_approximated_kernel_cannot_use_are_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let model = tmp.path().join("m.model");
    for (flags, says) in [
        (
            &["--components", "10"][..],
            "--components applies to an approximated kernel",
        ),
        (
            &["--approx", "rff", "--kernel", "poly"][..],
            "--approx nystroem",
        ),
        (
            &["--approx", "nystroem", "--solver", "smo"][..],
            "--solver smo is the exact",
        ),
        (
            &["--approx", "nystroem", "--cache-mb", "5"][..],
            "--cache-mb applies to the exact",
        ),
        (
            &["--approx", "nystroem", "--degree", "2"][..],
            "--degree applies to the poly kernel",
        ),
        (&["--approx", "rff", "--components", "0"][..], "components"),
        (&["--approx", "nystroem", "--stream"][..], "approx"),
        (&["--approx", "sketch"][..], "rff or nystroem"),
        (
            &["--approx", "nystroem", "--task", "multilabel"][..],
            "has no kernels yet",
        ),
    ] {
        let mut args = vec!["train", s(&data), "-o", s(&model)];
        args.extend_from_slice(flags);
        let err = fails(&args, if flags[1] == "sketch" { 2 } else { 1 });
        assert!(err.contains(says), "{flags:?}: {err}");
    }
    assert!(!model.exists());
}

#[test]
fn issue_24_compare_puts_the_families_side_by_side_on_development_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let all = maxmargin::datasets::HEART_SCALE;
    let lines: Vec<&str> = all.lines().collect();
    let (train, dev) = (tmp.path().join("train.svm"), tmp.path().join("dev.svm"));
    std::fs::write(&train, lines[..180].join("\n")).unwrap();
    std::fs::write(&dev, lines[180..].join("\n")).unwrap();
    let picture = tmp.path().join("families.svg");
    let out = tmp.path().join("models");
    std::fs::create_dir(&out).unwrap();
    let text = ok(&[
        "compare",
        s(&train),
        s(&dev),
        "--families",
        "linear,logistic,rbf,nystroem,rff",
        "--c-grid",
        "0.1,1",
        "--gamma-grid",
        "1",
        "--components",
        "50",
        "--json",
        "--plot",
        s(&picture),
        "--out-dir",
        s(&out),
    ]);
    let c: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(c["train_rows"], 180);
    assert_eq!(
        c["calibration_rows"].as_u64().unwrap() + c["evaluation_rows"].as_u64().unwrap(),
        90
    );
    let families = c["families"].as_array().unwrap();
    let names: Vec<&str> = families
        .iter()
        .map(|f| f["family"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["linear", "logistic", "rbf", "nystroem", "rff"]);
    for f in families {
        for key in [
            "roc_auc",
            "average_precision",
            "brier",
            "fit_seconds",
            "model_bytes",
        ] {
            assert!(f[key].as_f64().is_some(), "{key} of {f}");
        }
        assert!(f["speed"]["p99_us"].as_f64().unwrap() > 0.0);
        assert!(f["roc_auc"].as_f64().unwrap() > 0.8, "{f}");
        let model = out.join(format!("{}.model", f["family"].as_str().unwrap()));
        // The saved model is calibrated on the development rows' other half and predicts probabilities.
        let p = ok(&["predict", s(&model), s(&dev), "--probability"]);
        assert_eq!(p.lines().count(), 90);
        // Its size is the file's.
        assert_eq!(
            f["model_bytes"].as_u64().unwrap(),
            std::fs::metadata(&model).unwrap().len()
        );
    }
    assert!(families[0]["gamma"].is_null() && families[2]["gamma"].as_f64().is_some());
    assert!(families[1]["own_brier"].as_f64().is_some());
    let wins = c["wins"].as_array().unwrap();
    assert!(wins.iter().any(|w| w["measure"] == "roc_auc"), "{text}");
    assert!(std::fs::read_to_string(&picture).unwrap().contains("<svg"));
    // The table says which wins on what.
    let table = ok(&[
        "compare",
        s(&train),
        s(&dev),
        "--families",
        "linear,logistic",
        "--c-grid",
        "1",
    ]);
    assert!(table.contains("wins: roc_auc "), "{table}");
    assert!(table.contains("logistic's own probabilities"), "{table}");
    for (flags, says) in [
        (
            &["--families", "forest"][..],
            "linear, logistic, rbf, nystroem or rff",
        ),
        (&["--families", "linear,linear"][..], "must not repeat"),
        (&["--c-grid", "0"][..], "c grid"),
        (&["--folds", "1"][..], "folds"),
    ] {
        let mut args = vec!["compare", s(&train), s(&dev)];
        args.extend_from_slice(flags);
        let err = fails(&args, 1);
        assert!(err.contains(says), "{flags:?}: {err}");
    }
    let iris = tmp.path().join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    let err = fails(&["compare", s(&iris), s(&dev), "--families", "linear"], 1);
    assert!(err.contains("iris.svm"), "{err}");
}

/// `compare TRAIN DEV` checks DEV as development rows: labels of TRAIN's classes only, named at their line;
/// at least two rows of each class (compare halves them to calibrate and to evaluate); not empty.
#[test]
fn compare_checks_its_development_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let p = |n: &str, text: &str| {
        let path = tmp.path().join(n);
        std::fs::write(&path, text).unwrap();
        path
    };
    let train = p(
        "tr.svm",
        "+1 1:1\n-1 1:-1\n+1 1:2\n-1 1:-2\n+1 1:1.5\n-1 1:-1.5\n",
    );
    let other = p("other.svm", "+1 1:0.5\n-1 1:-0.5\n3 1:2\n");
    let err = fails(&["compare", s(&train), s(&other)], 1);
    assert!(
        err.contains("other.svm:3:1: label: 3 is not one of the classes of"),
        "{err}"
    );
    let one = p("one.svm", "+1 1:0.5\n-1 1:-0.5\n+1 1:0.7\n");
    let err = fails(&["compare", s(&train), s(&one)], 1);
    assert!(
        err.contains("one.svm: class -1 has 1 development row: compare cuts"),
        "{err}"
    );
    assert!(!err.contains("cross-validation"), "{err}");
    let empty = p("empty.svm", "");
    let err = fails(&["compare", s(&train), s(&empty)], 1);
    assert!(err.contains("empty.svm: no examples"), "{err}");
}
