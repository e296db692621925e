//! `cv`: stratified folds and their report; `--metric` and `--refit`, C chosen on the training data by the
//! measure asked for and the final model trained on all of it at that C.

use super::*;

#[test]
fn cv_chooses_c_by_the_metric_and_refits_on_all_the_data() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let model = tmp.path().join("final.model");
    let path = ["cv", s(&data), "-k", "5", "--c-path", "0.001,0.1,10"];
    let json: serde_json::Value =
        serde_json::from_str(&ok(
            &[&path[..], &["--metric", "roc_auc", "--json"]].concat()
        ))
        .unwrap();
    let points = json.as_array().unwrap();
    assert_eq!(points.len(), 3);
    // The chosen point is the best mean ROC AUC over the folds, each fold's AUC kept.
    let score = |p: &serde_json::Value| p["score"].as_f64().unwrap();
    let best = points
        .iter()
        .filter(|p| p["best"] == true)
        .collect::<Vec<_>>();
    assert_eq!(best.len(), 1);
    assert!(points.iter().all(|p| score(p) <= score(best[0])));
    for p in points {
        assert_eq!(p["metric"], "roc_auc");
        let folds = p["cv"]["folds"].as_array().unwrap();
        let mean = folds
            .iter()
            .map(|f| f["roc_auc"].as_f64().unwrap())
            .sum::<f64>()
            / 5.0;
        assert!((mean - score(p)).abs() < 1e-12);
    }
    let best_c = best[0]["c"].as_f64().unwrap();
    // --refit trains on all the rows at that C: the same model as train -c at that C.
    let text = ok(&[
        &path[..],
        &["--metric", "roc_auc", "--refit", "-o", s(&model)],
    ]
    .concat());
    assert!(text.contains(&format!("best C = {best_c}")), "{text}");
    let direct = tmp.path().join("direct.model");
    ok(&[
        "train",
        s(&data),
        "-c",
        &best_c.to_string(),
        "-o",
        s(&direct),
        "-q",
    ]);
    assert_eq!(
        std::fs::read(&model).unwrap(),
        std::fs::read(&direct).unwrap()
    );
    // Without a path, --refit trains at the C given; the metric is reported per fold.
    let text = ok(&[
        "cv",
        s(&data),
        "-k",
        "3",
        "--metric",
        "f1",
        "-c",
        "0.5",
        "--refit",
        "-o",
        s(&model),
    ]);
    assert_eq!(text.matches(" f1 ").count(), 4, "{text}");
    // -o without --refit, and --refit without -o, are usage errors; a metric name outside the list too.
    fails(&["cv", s(&data), "-o", s(&model)], 2);
    fails(&["cv", s(&data), "--refit"], 2);
    fails(&["cv", s(&data), "--metric", "roc-auc"], 2);
}

#[test]
fn cv_reports_folds() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let out: serde_json::Value = serde_json::from_str(&ok(&[
        "cv",
        s(&data),
        "-k",
        "3",
        "--solver",
        "dcd",
        "-c",
        "1",
        "--json",
    ]))
    .unwrap();
    assert_eq!(out["fold_accuracy"].as_array().unwrap().len(), 3);
    assert!(out["accuracy"].as_f64().unwrap() > 0.75, "{out}");
    let err = fails(&["cv", s(&data), "-k", "1"], 1);
    assert!(err.contains("folds"), "{err}");
    // Train's flags apply to cv too, and a path reports every C.
    let path: serde_json::Value = serde_json::from_str(&ok(&[
        "cv",
        s(&data),
        "-k",
        "3",
        "--solver",
        "dcd",
        "--epsilon",
        "0.01",
        "--c-path",
        "0.01,0.1,1",
        "--threads",
        "1",
        "--json",
    ]))
    .unwrap();
    let points = path.as_array().unwrap();
    assert_eq!(points.len(), 3);
    assert_eq!(points[2]["c"], 1.0);
    assert_eq!(
        points[2]["cv"]["fold_accuracy"].as_array().unwrap().len(),
        3
    );
    // Issue 23: a path in any order runs from the smallest C; a repeated C is refused.
    let unsorted = ok(&[
        "cv",
        s(&data),
        "-k",
        "3",
        "--c-path",
        "1,0.01,0.1",
        "--json",
    ]);
    let sorted = ok(&[
        "cv",
        s(&data),
        "-k",
        "3",
        "--c-path",
        "0.01,0.1,1",
        "--json",
    ]);
    assert_eq!(unsorted, sorted);
    let err = fails(
        &["cv", s(&data), "--solver", "dcd", "--c-path", "1,0.1,1"],
        1,
    );
    assert!(err.contains("distinct"), "{err}");
    // cv --task reads the task's format: binary data is not a chain file.
    let err = fails(&["cv", s(&data), "--task", "chain"], 1);
    assert!(err.contains("is not a tag"), "{err}");
    let err = fails(&["cv", s(&data), "--resume", "x.ckpt"], 1);
    assert!(err.contains("--resume does not apply to cv"), "{err}");
}

/// Issue 23, a first workflow: folds that stop short of convergence are said (`train -c 100` warned, `cv -c
/// 100` did not), and `--json` says per fold and overall whether they converged.
#[test]
fn issue_23_cv_says_when_folds_stop_short_of_convergence() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let o = maxmargin(&["cv", s(&data), "-c", "100", "--epochs", "5"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("warning: folds stopped short of convergence (5 of 5)"),
        "{err}"
    );
    let o = maxmargin(&["cv", s(&data), "--epochs", "5", "--c-path", "0.1,100"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("at C=100"), "{err}");
    let json: serde_json::Value = serde_json::from_str(&ok(&["cv", s(&data), "--json"])).unwrap();
    assert_eq!(json["converged"], true);
    assert!(
        json["folds"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["converged"] == true)
    );
    let quiet = maxmargin(&["cv", s(&data)]);
    assert!(!String::from_utf8_lossy(&quiet.stderr).contains("warning"));
    // --require-convergence makes it a status a script can test, as train's.
    let short = [
        "cv",
        s(&data),
        "-c",
        "100",
        "--epochs",
        "5",
        "--require-convergence",
    ];
    assert_eq!(maxmargin(&short).status.code(), Some(3));
    assert_eq!(
        maxmargin(&["cv", s(&data), "--require-convergence"])
            .status
            .code(),
        Some(0)
    );
}

#[test]
fn issue_23_cv_of_every_task_by_its_own_measure() {
    let tmp = tempfile::tempdir().unwrap();
    let (iris, _) = iris_model(tmp.path(), "unused.model");
    let json: serde_json::Value = serde_json::from_str(&ok(&[
        "cv",
        s(&iris),
        "--task",
        "multiclass",
        "-k",
        "3",
        "--json",
    ]))
    .unwrap();
    assert_eq!(json["metric"], "accuracy");
    let folds = json["folds"].as_array().unwrap();
    assert_eq!(folds.len(), 3);
    let mean = folds
        .iter()
        .map(|f| f["score"].as_f64().unwrap())
        .sum::<f64>()
        / 3.0;
    assert!(
        (mean - json["mean"].as_f64().unwrap()).abs() < 1e-12 && mean > 0.85,
        "{json}"
    );
    // Each fold is a model trained on the other folds: the same as training on those rows.
    // Along a C path, with a refit at the best C (the same model as train -c at that C).
    let refit = tmp.path().join("refit.model");
    let text = ok(&[
        "cv",
        s(&iris),
        "--task",
        "multiclass",
        "-k",
        "3",
        "--c-path",
        "0.01,1",
        "--refit",
        "-o",
        s(&refit),
    ]);
    assert!(text.contains("best C = "), "{text}");
    let c: f64 = text
        .split("best C = ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let direct = tmp.path().join("direct.model");
    ok(&[
        "train",
        s(&iris),
        "--task",
        "multiclass",
        "-c",
        &c.to_string(),
        "-o",
        s(&direct),
        "-q",
    ]);
    let load = |p: &Path| maxmargin::StructuredModel::load(p).unwrap().w;
    assert_eq!(load(&refit), load(&direct));
    // Multilabel and chain, by micro-F1 and token accuracy.
    let p1 = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/p1");
    let ml = ok(&[
        "cv",
        s(&p1.join("iris-multilabel.svm")),
        "--task",
        "multilabel",
        "-k",
        "3",
    ]);
    assert!(ml.contains("mean    micro_f1 "), "{ml}");
    let chain = ok(&[
        "cv",
        s(&p1.join("iris-chain.svmhmm")),
        "--task",
        "chain",
        "-k",
        "2",
    ]);
    assert!(chain.contains("mean    token_accuracy "), "{chain}");
    // A binary-only measure is refused by name.
    let e = fails(
        &[
            "cv",
            s(&iris),
            "--task",
            "multiclass",
            "--metric",
            "roc_auc",
        ],
        1,
    );
    assert!(
        e.contains("--task multiclass is measured by accuracy"),
        "{e}"
    );
}

#[test]
fn issue_23_group_folds_keep_each_group_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    // Nine sites of 30 rows each.
    let groups = tmp.path().join("sites.txt");
    let names: String = (0..270).map(|i| format!("site{}\n", i / 30)).collect();
    std::fs::write(&groups, names).unwrap();
    let json: serde_json::Value = serde_json::from_str(&ok(&[
        "cv",
        s(&data),
        "-k",
        "3",
        "--groups",
        s(&groups),
        "--json",
    ]))
    .unwrap();
    // The folds are the library's group folds: each site whole, three sites (90 rows) a fold.
    let names: Vec<String> = (0..270).map(|i| format!("site{}", i / 30)).collect();
    let fold_of = maxmargin::linear::group_folds(&names, 3).unwrap();
    assert!((0..270).all(|i| fold_of[i] == fold_of[i - i % 30]));
    assert!((0..3).all(|f| fold_of.iter().filter(|&&g| g == f).count() == 90));
    let rows = maxmargin::datasets::heart_scale().unwrap();
    let svm = maxmargin::LinearSvmParams::new().check().unwrap();
    let cv = maxmargin::linear::cross_validate_folds(&svm, &rows, &fold_of).unwrap();
    assert_eq!(
        json["fold_accuracy"],
        serde_json::json!(cv.fold_accuracy),
        "{json}"
    );
    // Fewer groups than folds, or another count of names, are refused by name.
    let e = fails(&["cv", s(&data), "-k", "10", "--groups", s(&groups)], 1);
    assert!(e.contains("got 10 over 9 groups"), "{e}");
    let short = tmp.path().join("short.txt");
    std::fs::write(&short, "a\nb\n").unwrap();
    let e = fails(&["cv", s(&data), "--groups", s(&short)], 1);
    assert!(e.contains("2 group names for the 270 rows"), "{e}");
    // Groups that are the classes leave one class to train on in each fold: the fold is named, not the
    // file as if it had one class.
    let labels = std::fs::read_to_string(&data).unwrap();
    let by_class: String = labels.lines().map(|l| format!("{}\n", &l[..2])).collect();
    std::fs::write(&short, by_class).unwrap();
    let e = fails(&["cv", s(&data), "-k", "2", "--groups", s(&short)], 1);
    assert!(e.contains("fold 1 of 2 leaves rows of class"), "{e}");
}

/// `cv --format` as `train` takes it: CSV whatever the file's name, and the task's own format; CoNLL text,
/// which cv does not cross-validate, is refused naming the file, with or without the flag.
#[test]
fn cv_takes_format_and_names_what_it_cannot_read() {
    let tmp = tempfile::tempdir().unwrap();
    let path = |name: &str| tmp.path().join(name);
    let rows: String = (0..20)
        .map(|i| {
            let y = if i % 2 == 0 { 1 } else { -1 };
            format!("{y},{},{}\n", y * (1 + i % 3), i % 5)
        })
        .collect();
    std::fs::write(path("d.txt"), format!("label,a,b\n{rows}")).unwrap();
    let out = ok(&[
        "cv",
        s(&path("d.txt")),
        "--format",
        "csv",
        "-k",
        "2",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["fold_accuracy"].as_array().map(Vec::len), Some(2), "{v}");
    assert_eq!(v["accuracy"], 1.0, "{v}");
    // Without the flag the header is not LIBSVM, and the error says which flag reads it.
    let err = fails(&["cv", s(&path("d.txt")), "-k", "2"], 1);
    assert!(err.contains("pass --format csv"), "{err}");
    let conll = path("c.conll");
    std::fs::write(&conll, "東京 B-LOC\nに O\n\n").unwrap();
    let err = fails(&["cv", s(&conll), "--task", "chain"], 1);
    assert!(
        err.contains("c.conll:1:1: label") && err.contains("CoNLL text is not cross-validated"),
        "{err}"
    );
    let err = fails(
        &["cv", s(&conll), "--task", "chain", "--format", "conll"],
        1,
    );
    assert!(
        err.contains("c.conll: cv reads svm-hmm sequences for --task chain, not CoNLL"),
        "{err}"
    );
    let err = fails(&["cv", s(&path("d.txt")), "--format", "multilabel"], 1);
    assert!(
        err.contains("cv --task binary reads libsvm data, not --format multilabel"),
        "{err}"
    );
    let err = fails(
        &[
            "cv",
            s(&path("d.txt")),
            "--format",
            "csv",
            "--task",
            "chain",
        ],
        1,
    );
    assert!(
        err.contains("applies to --task binary or multiclass, not --task chain"),
        "{err}"
    );
}

/// An empty file is named as one, whatever the task (it was a fold count "for 0 examples"); a C grid that
/// repeats a value is refused by compare's own flag's name (it named cv's "c path").
#[test]
fn an_empty_file_and_a_repeated_c_are_named_in_the_commands_words() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty.svm");
    std::fs::write(&empty, "").unwrap();
    for task in ["binary", "multiclass", "chain"] {
        let err = fails(&["cv", "--task", task, s(&empty)], 1);
        assert!(err.contains("empty.svm: no examples"), "{task}: {err}");
    }
    let data = heart(tmp.path());
    let err = fails(&["compare", s(&data), s(&data), "--c-grid", "1,1"], 1);
    assert!(err.contains("c grid must be distinct values"), "{err}");
}

/// A fold whose test rows hold one class has no ROC AUC: the --c-path table's means leave it out, and a
/// warning now says so (the table showed the mean of two folds as if of three).
#[test]
fn a_c_path_table_names_the_folds_its_means_leave_out() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    // Group "pure" holds 30 of the positive rows and nothing else; the other rows alternate two groups.
    let mut positives = 0;
    let names: Vec<String> = maxmargin::datasets::HEART_SCALE
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if l.starts_with("+1") && positives < 30 {
                positives += 1;
                "pure".to_string()
            } else {
                format!("g{}", i % 2)
            }
        })
        .collect();
    let groups = tmp.path().join("groups.txt");
    std::fs::write(&groups, names.join("\n") + "\n").unwrap();
    let args = [
        "cv",
        s(&data),
        "-k",
        "3",
        "--groups",
        s(&groups),
        "--c-path",
        "0.1,1",
        "--metric",
    ];
    let out = maxmargin(&[&args[..], &["roc_auc"]].concat());
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("roc_auc is undefined on fold") && err.contains("of 3"),
        "{err}"
    );
}
