//! Issue 24: `train --kernel` trains a kernel SVM by SMO; its model keeps the support vectors, says its size,
//! and goes through predict, eval, calibrate, threshold, inspect and cv like any binary model. Flags that
//! cannot apply are refused by name.

use super::*;

#[test]
fn issue_24_a_kernel_svm_goes_through_the_whole_binary_workflow() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let model = tmp.path().join("rbf.model");
    let said = ok_stderr(&["train", s(&data), "--kernel", "rbf", "-o", s(&model)]);
    assert!(said.contains("trained smo (rbf kernel, gamma "), "{said}");
    assert!(said.contains("support vectors) on 270 examples"), "{said}");
    assert!(said.contains("stop: converged"), "{said}");
    let text = ok(&["eval", s(&model), s(&data)]);
    assert!(text.contains("  accuracy   0.8"), "{text}");
    let scores = ok(&["predict", s(&model), s(&data), "--scores"]);
    assert_eq!(scores.lines().count(), 270);
    let inspect = ok(&["inspect", s(&model), s(&data)]);
    assert!(inspect.contains("a kernel SVM: "), "{inspect}");
    let cal = tmp.path().join("rbf.cal");
    ok(&["calibrate", s(&model), s(&data), "-o", s(&cal)]);
    let p = ok(&["predict", s(&cal), s(&data), "--probability"]);
    assert_eq!(p.lines().count(), 270);
    let cut = tmp.path().join("rbf.cut");
    ok(&["threshold", s(&cal), s(&data), "--at", "0.5", "-o", s(&cut)]);
    let cv = ok(&["cv", s(&data), "--kernel", "rbf", "--folds", "3"]);
    assert!(cv.contains("accuracy"), "{cv}");
    let err = fails(
        &["convert", s(&model), "--to", "liblinear", "-o", s(&cut)],
        1,
    );
    assert!(err.contains("kernel model"), "{err}");
    // Every kernel and its parameters.
    for flags in [
        &["--kernel", "linear"][..],
        &[
            "--kernel", "poly", "--degree", "2", "--coef0", "1", "--gamma", "0.1",
        ][..],
        &["--kernel", "sigmoid", "--gamma", "0.01", "--coef0", "-0.5"][..],
        &["--solver", "smo", "--gamma", "scale", "--cache-mb", "0.01"][..],
    ] {
        let mut args = vec!["train", s(&data), "-o", s(&model), "-q"];
        args.extend_from_slice(flags);
        ok(&args);
    }
    for (flags, says) in [
        (&["--gamma", "0.1"][..], "--gamma applies to kernel SVMs"),
        (
            &["--kernel", "rbf", "--solver", "dcd"][..],
            "leave --solver out",
        ),
        (
            &["--kernel", "rbf", "--bias", "feature"][..],
            "unregularized",
        ),
        (
            &["--kernel", "rbf", "--loss", "logistic"][..],
            "--loss logistic applies to --solver dcd",
        ),
        (&["--kernel", "rbf", "--stream"][..], "cannot be streamed"),
        (
            &["--kernel", "rbf", "--blocks", "2"][..],
            "--blocks applies to --solver dcd",
        ),
        (&["--kernel", "rbf", "--cache-mb", "0"][..], "cache-mb"),
        (
            &["--kernel", "linear", "--gamma", "0.1"][..],
            "applies to rbf, poly and sigmoid",
        ),
        (
            &["--kernel", "rbf", "--degree", "2"][..],
            "--degree applies to the poly kernel, not rbf",
        ),
        (
            &["--kernel", "rbf", "--coef0", "1"][..],
            "--coef0 applies to the poly and sigmoid",
        ),
        (
            &["--kernel", "rbf", "--step", "constant:0.1"][..],
            "not smo",
        ),
    ] {
        let mut args = vec!["train", s(&data), "-o", s(&model)];
        args.extend_from_slice(flags);
        let err = fails(&args, 1);
        assert!(err.contains(says), "{flags:?}: {err}");
    }
    let err = fails(
        &[
            "train",
            s(&data),
            "--kernel",
            "rbf",
            "--gamma",
            "-1",
            "-o",
            s(&model),
        ],
        2,
    );
    assert!(err.contains("not scale or a finite number"), "{err}");
}

/// Issue 24: `bench-predict MODEL DATA` measures what each binary family costs to serve; `--json` has the keys
/// users' scripts read.
#[test]
fn issue_24_bench_predict_measures_each_family() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let mut sizes = Vec::new();
    for (name, flags) in [
        ("linear", &[][..]),
        ("logistic", &["--loss", "logistic"][..]),
        ("rbf", &["--kernel", "rbf"][..]),
    ] {
        let model = tmp.path().join(format!("{name}.model"));
        let mut args = vec!["train", s(&data), "-o", s(&model), "-q"];
        args.extend_from_slice(flags);
        ok(&args);
        let text = ok(&["bench-predict", s(&model), s(&data)]);
        assert!(text.contains("rows/s") && text.contains("p99"), "{text}");
        let json: serde_json::Value =
            serde_json::from_str(&ok(&["bench-predict", s(&model), s(&data), "--json"])).unwrap();
        for key in [
            "rows_per_second",
            "p50_us",
            "p99_us",
            "max_us",
            "model_bytes",
            "memory_bytes",
        ] {
            assert!(
                json[key].as_f64().is_some_and(|v| v > 0.0),
                "{name}: {key} in {json}"
            );
        }
        assert!(json["p50_us"].as_f64() <= json["p99_us"].as_f64());
        assert!(json["p99_us"].as_f64() <= json["max_us"].as_f64());
        assert_eq!(
            json["model_bytes"].as_u64().unwrap(),
            std::fs::metadata(&model).unwrap().len()
        );
        sizes.push((
            json["memory_bytes"].as_u64().unwrap(),
            json["support_vectors"].as_u64(),
        ));
    }
    // The kernel model keeps its support vectors: it is the largest, and says how many.
    assert!(
        sizes[2].0 > sizes[0].0 && sizes[2].1.is_some_and(|n| n > 0),
        "{sizes:?}"
    );
    let (_, iris) = iris_model(tmp.path(), "iris.model");
    let err = fails(&["bench-predict", s(&iris), s(&data)], 1);
    assert!(
        err.contains("bench-predict measures binary models"),
        "{err}"
    );
}

#[test]
fn issue_24_multiclass_kernel_svms_one_vs_one_and_one_vs_rest_and_approximated() {
    let tmp = tempfile::tempdir().unwrap();
    let iris = tmp.path().join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    for (flags, says) in [
        (
            &["--kernel", "rbf"][..],
            "multiclass ovo (rbf kernel, 3 machines, ",
        ),
        (
            &["--kernel", "rbf", "--solver", "ovr"][..],
            "multiclass ovr (rbf kernel, 3 machines, ",
        ),
        (
            &["--kernel", "poly", "--degree", "2", "-c", "10"][..],
            "(poly kernel, 3 machines",
        ),
        (
            &["--approx", "nystroem", "--components", "40"][..],
            "(nystroem approximation of the rbf, 40 landmarks)",
        ),
        (
            &["--approx", "rff", "--solver", "ovr"][..],
            "(rff approximation of the rbf, 100 components)",
        ),
    ] {
        let model = tmp.path().join("k.model");
        let mut args = vec!["train", s(&iris), "--task", "multiclass", "-o", s(&model)];
        args.extend_from_slice(flags);
        let said = ok_stderr(&args);
        assert!(said.contains(says), "{flags:?}: {said}");
        // Converged: by the solver's own test or at an evaluation certifying the gap target.
        assert!(
            (said.contains("stop: converged") || said.contains("stop: gap"))
                && !said.contains("not converged"),
            "{flags:?}: {said}"
        );
        // The same bytes on one thread.
        let again = tmp.path().join("again.model");
        let mut args = vec![
            "train",
            s(&iris),
            "--task",
            "multiclass",
            "-o",
            s(&again),
            "-q",
            "--threads",
            "1",
        ];
        args.extend_from_slice(flags);
        ok(&args);
        assert_eq!(
            std::fs::read(&model).unwrap(),
            std::fs::read(&again).unwrap(),
            "{flags:?}"
        );
        let e: serde_json::Value =
            serde_json::from_str(&ok(&["eval", s(&model), s(&iris), "--json"])).unwrap();
        assert!(e["accuracy"].as_f64().unwrap() >= 0.94, "{flags:?}: {e}");
        let scores = ok(&["predict", s(&model), s(&iris), "--scores"]);
        assert_eq!(scores.lines().count(), 151, "{flags:?}");
        let json = tmp.path().join("k.json");
        ok(&["convert", s(&model), "--to", "json", "-o", s(&json)]);
        assert_eq!(ok(&["predict", s(&json), s(&iris), "--scores"]), scores);
        let cal = tmp.path().join("k.cal");
        ok(&["calibrate", s(&model), s(&iris), "-o", s(&cal)]);
        assert_eq!(
            ok(&["predict", s(&cal), s(&iris), "--probability"])
                .lines()
                .count(),
            151
        );
        let err = fails(
            &["convert", s(&model), "--to", "liblinear", "-o", s(&cal)],
            1,
        );
        assert!(err.contains("linear weights only"), "{err}");
    }
    let model = tmp.path().join("k.model");
    for (flags, says) in [
        (
            &["--kernel", "rbf", "--solver", "bcfw"][..],
            "--solver bcfw trains a linear model",
        ),
        (
            &["--kernel", "rbf", "--bias", "feature"][..],
            "unregularized",
        ),
        (&["--solver", "ovo"][..], "give a kernel"),
        (
            &["--kernel", "rbf", "--checkpoint", "c.ckpt"][..],
            "no resumable state",
        ),
        (&["--kernel", "rbf", "--stream"][..], "stream"),
    ] {
        let mut args = vec!["train", s(&iris), "--task", "multiclass", "-o", s(&model)];
        args.extend_from_slice(flags);
        let err = fails(&args, 1);
        assert!(err.contains(says), "{flags:?}: {err}");
    }
    ok(&[
        "train",
        s(&iris),
        "--task",
        "multiclass",
        "--kernel",
        "rbf",
        "-o",
        s(&model),
        "-q",
    ]);
    let err = fails(&["eval", s(&model), s(&iris), "--lambda", "0.1"], 1);
    assert!(
        err.contains("objective of a multiclass kernel model"),
        "{err}"
    );
}

#[test]
fn issue_24_softmax_is_multinomial_logistic_regression_with_its_own_probabilities() {
    let tmp = tempfile::tempdir().unwrap();
    let iris = tmp.path().join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    let model = tmp.path().join("s.model");
    let said = ok_stderr(&[
        "train",
        s(&iris),
        "--task",
        "multiclass",
        "--loss",
        "softmax",
        "--gap",
        "1e-6",
        "-o",
        s(&model),
    ]);
    assert!(
        said.contains("trained multiclass softmax on 150 examples"),
        "{said}"
    );
    assert!(!said.contains("not converged"), "{said}");
    let e: serde_json::Value =
        serde_json::from_str(&ok(&["eval", s(&model), s(&iris), "--json"])).unwrap();
    assert!(e["accuracy"].as_f64().unwrap() > 0.95, "{e}");
    let err = fails(&["eval", s(&model), s(&iris), "--lambda", "0.1"], 1);
    assert!(err.contains("softmax model"), "{err}");
    // eval judges its own probabilities.
    assert!(
        e["brier"].as_f64().unwrap() < 0.2 && e["log_loss"].as_f64().unwrap() > 0.0,
        "{e}"
    );
    let p = ok(&["predict", s(&model), s(&iris), "--probability"]);
    for line in p.lines().skip(1) {
        let sum: f64 = line
            .split(' ')
            .skip(1)
            .map(|v| v.parse::<f64>().unwrap())
            .sum();
        assert!((sum - 1.0).abs() < 1e-12, "{line}");
    }
    // Its probabilities are the softmax of its scores.
    let scores = ok(&["predict", s(&model), s(&iris), "--scores"]);
    let first: Vec<f64> = scores
        .lines()
        .nth(1)
        .unwrap()
        .split(' ')
        .skip(1)
        .map(|v| v.parse().unwrap())
        .collect();
    let probs: Vec<f64> = p
        .lines()
        .nth(1)
        .unwrap()
        .split(' ')
        .skip(1)
        .map(|v| v.parse().unwrap())
        .collect();
    let total: f64 = first.iter().map(|v| v.exp()).sum();
    for (sc, pr) in first.iter().zip(&probs) {
        assert!((sc.exp() / total - pr).abs() < 1e-12);
    }
    // The same bytes on one thread; class weights and row weights; checkpoints resume.
    let again = tmp.path().join("again.model");
    ok(&[
        "train",
        s(&iris),
        "--task",
        "multiclass",
        "--loss",
        "softmax",
        "--gap",
        "1e-6",
        "-o",
        s(&again),
        "-q",
        "--threads",
        "1",
    ]);
    assert_eq!(
        std::fs::read(&model).unwrap(),
        std::fs::read(&again).unwrap()
    );
    ok(&[
        "train",
        s(&iris),
        "--task",
        "multiclass",
        "--loss",
        "softmax",
        "-w",
        "1=3",
        "-o",
        s(&again),
        "-q",
    ]);
    for (flags, says) in [
        (
            &[
                "--task",
                "multiclass",
                "--loss",
                "softmax",
                "--solver",
                "dcd",
            ][..],
            "leave --solver dcd out",
        ),
        (&["--loss", "softmax"][..], "applies to --task multiclass"),
        (
            &["--task", "multilabel", "--loss", "softmax"][..],
            "not to --task multilabel",
        ),
        (
            &[
                "--task",
                "multiclass",
                "--loss",
                "softmax",
                "--kernel",
                "rbf",
            ][..],
            "cannot apply to a kernel SVM",
        ),
        (
            &[
                "--task",
                "multiclass",
                "--loss",
                "softmax",
                "--epsilon",
                "0.1",
            ][..],
            "--epsilon does not apply",
        ),
    ] {
        let mut args = vec!["train", s(&iris), "-o", s(&again)];
        args.extend_from_slice(flags);
        let err = fails(&args, 1);
        assert!(err.contains(says), "{flags:?}: {err}");
    }
}

/// A polynomial kernel of degree 100 (a user's probe): `K(x, x)` spans 1e42 to 1e120 over the rows, the
/// solver's running gradient lost the rows of small values, and the run certified an objective of 1e-10 for
/// a model whose objective (as `eval` finds it) is 5e7. The saved model's objective is recomputed from its
/// support vectors, the warning says why, and `eval` agrees with it.
#[test]
fn a_kernel_of_values_beyond_float_resolution_reports_the_models_own_objective() {
    let tmp = tempfile::tempdir().unwrap();
    let mut state = 12345u64;
    let mut uniform = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64 * 5.0 - 2.5
    };
    let mut text = String::new();
    for _ in 0..100 {
        let row: Vec<f64> = (0..5).map(|_| uniform()).collect();
        let label = if row[0] > 0.0 { "+1" } else { "-1" };
        let features: Vec<String> = (row.iter().enumerate())
            .map(|(j, v)| format!("{}:{v:.4}", j + 1))
            .collect();
        text.push_str(&format!("{label} {}\n", features.join(" ")));
    }
    let data = tmp.path().join("pm1.svm");
    std::fs::write(&data, text).unwrap();
    let model = tmp.path().join("m.json");
    let args = [
        "train",
        s(&data),
        "--kernel",
        "poly",
        "--degree",
        "100",
        "--gamma",
        "1",
        "-o",
        s(&model),
    ];
    let said = ok_stderr(&args);
    assert!(
        said.contains("recomputed from its support vectors is"),
        "{said}"
    );
    assert!(said.contains("not converged"), "{said}");
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    let saved = stored["training"]["objective"].as_f64().unwrap();
    let json = ok(&["eval", s(&model), s(&data), "--lambda", "0.01", "--json"]);
    let eval: serde_json::Value = serde_json::from_str(&json).unwrap();
    let objective = eval["objective"].as_f64().unwrap();
    assert!(
        (saved - objective).abs() <= 1e-9 * objective.abs(),
        "{saved} {objective}"
    );
    // An ordinary kernel on the same rows keeps the solver's certificate and says nothing of it.
    let said = ok_stderr(&[
        "train",
        s(&data),
        "--kernel",
        "poly",
        "--degree",
        "3",
        "-o",
        s(&model),
    ]);
    assert!(
        !said.contains("recomputed") && said.contains("stop: converged"),
        "{said}"
    );
}

/// Features beyond a kernel model's are ignored, as the warning says and as a linear model's weights do: the
/// RBF distance counted them, so a row scored 0.9998 alone scored -0.22 with one more feature.
#[test]
fn features_beyond_a_kernel_models_are_ignored_as_the_warning_says() {
    let tmp = tempfile::tempdir().unwrap();
    let p = |name: &str| tmp.path().join(name);
    let binary = "+1 1:1 2:1\n-1 1:-1\n+1 1:1 2:0.5\n-1 2:-1\n";
    let multi = "1 1:1 2:1\n2 1:-1\n3 1:1 2:-0.5\n1 1:0.9 2:1\n2 1:-1 2:0.1\n3 1:1 2:-0.6\n";
    for (task, rows, row) in [
        ("binary", binary, "+1 1:1 2:1"),
        ("multiclass", multi, "1 1:0.9 2:1"),
    ] {
        std::fs::write(p("train.svm"), rows).unwrap();
        std::fs::write(p("narrow.svm"), format!("{row}\n")).unwrap();
        std::fs::write(p("wide.svm"), format!("{row} 7:4\n")).unwrap();
        let model = p("k.model");
        ok(&[
            "train",
            "--task",
            task,
            s(&p("train.svm")),
            "--kernel",
            "rbf",
            "-o",
            s(&model),
            "-q",
        ]);
        let narrow = ok(&["predict", s(&model), s(&p("narrow.svm")), "--scores"]);
        let wide = maxmargin(&["predict", s(&model), s(&p("wide.svm")), "--scores"]);
        assert!(
            String::from_utf8_lossy(&wide.stderr).contains("are ignored"),
            "{task}"
        );
        assert_eq!(String::from_utf8(wide.stdout).unwrap(), narrow, "{task}");
    }
}

/// The note on unscaled rows speaks of linear solvers' convergence: an RBF or polynomial kernel SVM does not
/// get it (pixels of 0–255 at γ = scale converged at once under it), a linear model does.
#[test]
fn unscaled_rows_are_noted_for_linear_models_not_for_kernel_svms() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("pixels.svm");
    let rows: String = (0..60)
        .map(|i| {
            let label = if i % 2 == 0 { 1 } else { -1 };
            format!(
                "{label} 1:{} 2:{}\n",
                (i * 37) % 256,
                if label > 0 { 200 } else { 30 }
            )
        })
        .collect();
    std::fs::write(&data, rows).unwrap();
    let model = tmp.path().join("m.model");
    let note = "consider --scale";
    let linear = ok_stderr(&["train", s(&data), "-o", s(&model)]);
    assert!(linear.contains(note), "{linear}");
    for kernel in ["rbf", "poly"] {
        let err = ok_stderr(&["train", s(&data), "-o", s(&model), "--kernel", kernel]);
        assert!(!err.contains(note), "{kernel}: {err}");
    }
}
