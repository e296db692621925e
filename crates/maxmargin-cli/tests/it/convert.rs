//! `convert`: models move between maxmargin and LIBLINEAR's text format, both ways, and predict the same.

use super::{fails, heart, ok, s};
use maxmargin::io::liblinear::LiblinearModel;

/// LIBLINEAR's decision on a dense row: the first label when the one column's score is positive, else the
/// class of the largest column.
fn liblinear_predict(m: &LiblinearModel, x: &[f64]) -> f64 {
    let score = |c: usize| {
        let mut v: f64 = (0..m.n_features)
            .map(|j| m.weight(j, c) * x.get(j).copied().unwrap_or(0.0))
            .sum();
        if m.bias >= 0.0 {
            v += m.weight(m.n_features, c) * m.bias;
        }
        v
    };
    if m.columns == 1 {
        if score(0) > 0.0 {
            m.labels[0]
        } else {
            m.labels[1]
        }
    } else {
        let best = (0..m.columns)
            .max_by(|&a, &b| score(a).total_cmp(&score(b)).then(b.cmp(&a)))
            .unwrap();
        m.labels[best]
    }
}

fn rows(text: &str, d: usize) -> Vec<Vec<f64>> {
    text.lines()
        .map(|l| {
            let mut x = vec![0.0; d];
            for t in l.split_whitespace().skip(1) {
                let (j, v) = t.split_once(':').unwrap();
                x[j.parse::<usize>().unwrap() - 1] = v.parse().unwrap();
            }
            x
        })
        .collect()
}

fn predictions(text: &str) -> Vec<f64> {
    text.lines().map(|l| l.parse().unwrap()).collect()
}

#[test]
fn liblinear_files_by_the_format_rules_become_models_that_predict_alike() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("d.svm");
    std::fs::write(
        &data,
        "2 1:1 2:0\n4 1:0 2:1\n2 1:-1 2:0.5\n4 1:0.2 2:-0.3\n",
    )
    .unwrap();
    // Binary with a bias: label 4 first, so a positive score means 4.
    let binary = tmp.path().join("b.liblinear");
    std::fs::write(&binary, "solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 2\nlabel 4 2\nnr_feature 2\nbias 1\nw\n-1.5 \n2 \n0.25 \n").unwrap();
    // Three classes, one-vs-rest columns, no bias.
    let multi = tmp.path().join("m.liblinear");
    std::fs::write(&multi, "solver_type L2R_L1LOSS_SVC_DUAL\nnr_class 3\nlabel 2 4 7\nnr_feature 2\nbias -1\nw\n1 -1 0.5 \n-1 1 0.25 \n").unwrap();
    let x = rows(&std::fs::read_to_string(&data).unwrap(), 2);
    for (file, json) in [(&binary, false), (&multi, true)] {
        let lib = LiblinearModel::read(file).unwrap();
        let out = tmp.path().join(if json { "m.json" } else { "b.model" });
        ok(&["convert", s(file), "-o", s(&out)]);
        let ours = predictions(&ok(&["predict", s(&out), s(&data)]));
        let theirs: Vec<f64> = x.iter().map(|r| liblinear_predict(&lib, r)).collect();
        assert_eq!(ours, theirs, "{}", file.display());
        // And back: the same solver type, weights and labels, to the last bit.
        let again = tmp.path().join("again.liblinear");
        ok(&["convert", s(&out), "-o", s(&again)]);
        let back = LiblinearModel::read(&again).unwrap();
        assert_eq!(
            (&back.solver, &back.labels, &back.w),
            (&lib.solver, &lib.labels, &lib.w)
        );
    }
}

/// LIBLINEAR lists labels in order of first appearance in its training file (`label 7 2 4`), and that order
/// decides its ties: the model converted from it predicts as LIBLINEAR does (ties included), `eval` knows its
/// labels (it refused every one whose place differed from its rank), and it goes back to LIBLINEAR as it was.
#[test]
fn liblinear_labels_in_any_order_are_looked_up_and_predict_alike() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("d.svm");
    // The last row has only a feature the model lacks: every score is 0, a tie LIBLINEAR gives to 7.
    let text = "7 1:1 2:0\n2 1:0 2:1\n4 1:-1 2:-1\n7 1:2 2:-0.5\n2 1:-0.3 2:2\n7 3:1\n";
    std::fs::write(&data, text).unwrap();
    let x = rows(text, 3);
    for solver in ["MCSVM_CS", "L2R_L2LOSS_SVC_DUAL"] {
        let file = tmp.path().join("m.liblinear");
        let model = format!(
            "solver_type {solver}\nnr_class 3\nlabel 7 2 4\nnr_feature 2\nbias 1\nw\n1 0 -1 \n0 1 -1 \n0 0 0 \n"
        );
        std::fs::write(&file, model).unwrap();
        let lib = LiblinearModel::read(&file).unwrap();
        let theirs: Vec<f64> = x.iter().map(|r| liblinear_predict(&lib, r)).collect();
        assert_eq!(
            theirs,
            [7.0, 2.0, 4.0, 7.0, 2.0, 7.0],
            "{solver}: the rows' own labels"
        );
        let out = tmp.path().join("m.model");
        ok(&["convert", s(&file), "-o", s(&out)]);
        assert_eq!(predictions(&ok(&["predict", s(&out), s(&data)])), theirs);
        let report = ok(&["eval", s(&out), s(&data)]);
        assert!(
            report.contains("accuracy          1.000000"),
            "{solver}: {report}"
        );
        let again = tmp.path().join("again.liblinear");
        ok(&["convert", s(&out), "-o", s(&again)]);
        let back = LiblinearModel::read(&again).unwrap();
        assert_eq!((&back.labels, &back.w), (&lib.labels, &lib.w), "{solver}");
    }
}

#[test]
fn our_models_written_for_liblinear_predict_alike() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let text = std::fs::read_to_string(&data).unwrap();
    let iris = tmp.path().join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    for (train, file, d, extra) in [
        (&data, &text, 13, vec!["--scale", "maxabs"]),
        (&data, &text, 13, vec!["--bias", "none"]),
        (
            &iris,
            &maxmargin::datasets::IRIS.to_string(),
            4,
            vec!["--task", "multiclass"],
        ),
        (
            &iris,
            &maxmargin::datasets::IRIS.to_string(),
            4,
            vec!["--task", "multiclass", "--solver", "ovr"],
        ),
    ] {
        let model = tmp.path().join("m.model");
        let mut args = vec!["train", s(train), "-o", s(&model), "-q"];
        args.extend(extra.iter().copied());
        ok(&args);
        let lib_path = tmp.path().join("m.liblinear");
        ok(&["convert", s(&model), "-o", s(&lib_path)]);
        let lib = LiblinearModel::read(&lib_path).unwrap();
        let ours = predictions(&ok(&["predict", s(&model), s(train)]));
        let theirs: Vec<f64> = rows(file, d)
            .iter()
            .map(|r| liblinear_predict(&lib, r))
            .collect();
        assert_eq!(ours, theirs, "{extra:?}");
        // LIBLINEAR's own predict agrees where it is installed (liblinear-tools).
        if let Ok(out) = std::process::Command::new("liblinear-predict")
            .args([s(train), s(&lib_path), s(&tmp.path().join("ll.out"))])
            .output()
            && out.status.success()
        {
            let ll = predictions(&std::fs::read_to_string(tmp.path().join("ll.out")).unwrap());
            assert_eq!(ours, ll, "liblinear-predict, {extra:?}");
        }
    }
}

#[test]
fn what_liblinear_cannot_hold_or_is_not_a_model_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o.model");
    let svr = tmp.path().join("svr.txt");
    std::fs::write(
        &svr,
        "solver_type L2R_L2LOSS_SVR\nnr_class 2\nlabel 1 -1\nnr_feature 1\nbias -1\nw\n1 \n",
    )
    .unwrap();
    let err = fails(&["convert", s(&svr), "-o", s(&out)], 1);
    assert!(err.contains("not a classifier"), "{err}");
    // As liblinear-train -s 11 writes it: no label line, which is not what is wrong with it.
    std::fs::write(
        &svr,
        "solver_type L2R_L2LOSS_SVR\nnr_feature 1\nbias -1\nw\n1 \n",
    )
    .unwrap();
    let err = fails(&["convert", s(&svr), "-o", s(&out)], 1);
    assert!(
        err.contains("svr.txt:1:1: solver_type: L2R_L2LOSS_SVR is a regression"),
        "{err}"
    );
    // predict names the other tools' models and what reads them.
    let err = fails(&["predict", s(&svr), s(&heart(tmp.path()))], 1);
    assert!(
        err.contains("it opens as a LIBLINEAR model, which `maxmargin convert` reads"),
        "{err}"
    );
    let libsvm = tmp.path().join("libsvm.model");
    std::fs::write(
        &libsvm,
        "svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 2\n",
    )
    .unwrap();
    let err = fails(&["convert", s(&libsvm), "-o", s(&out)], 1);
    assert!(
        err.contains("libsvm.model:1:1: header: svm_type opens a LIBSVM model"),
        "{err}"
    );
    let short = tmp.path().join("short.txt");
    std::fs::write(
        &short,
        "solver_type MCSVM_CS\nnr_class 3\nlabel 1 2 3\nnr_feature 2\nbias -1\nw\n1 2 3 \n",
    )
    .unwrap();
    let err = fails(&["convert", s(&short), "-o", s(&out)], 1);
    assert!(
        err.contains("short.txt:6:1: w: 1 weight rows, expected 2"),
        "{err}"
    );
    let wide = tmp.path().join("wide.txt");
    std::fs::write(
        &wide,
        "solver_type MCSVM_CS\nnr_class 3\nlabel 1 2 3\nnr_feature 1\nbias -1\nw\n1 2 \n",
    )
    .unwrap();
    let err = fails(&["convert", s(&wide), "-o", s(&out)], 1);
    assert!(
        err.contains("wide.txt:7:1: weight: 2 weights on the line, expected 3"),
        "{err}"
    );
    // A header line given twice is refused at the second: which one LIBLINEAR would keep is its reader's.
    let twice = tmp.path().join("twice.txt");
    std::fs::write(
        &twice,
        "solver_type MCSVM_CS\nnr_class 2\nlabel 1 2\nnr_feature 1\nnr_feature 2\nbias -1\nw\n1 2 \n",
    )
    .unwrap();
    let err = fails(&["convert", s(&twice), "-o", s(&out)], 1);
    assert!(
        err.contains("twice.txt:5:1: header: nr_feature is given twice (first on line 4)"),
        "{err}"
    );
    // A weight that is not finite is named at its line.
    let nan = tmp.path().join("nan.txt");
    let head =
        "solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 2\nlabel 1 -1\nnr_feature 2\nbias -1\nw\n";
    std::fs::write(&nan, format!("{head}0.5\nnan\n")).unwrap();
    let err = fails(&["convert", s(&nan), "-o", s(&out)], 1);
    assert!(
        err.contains("nan.txt:8:1: weight: NaN is not a finite number"),
        "{err}"
    );
    let data = heart(tmp.path());
    let err = fails(&["convert", s(&data), "-o", s(&out)], 1);
    assert!(
        err.contains("not a LIBLINEAR model header")
            && err.contains("not a maxmargin model either"),
        "{err}"
    );
    let seq = tmp.path().join("s.dat");
    std::fs::write(&seq, "1 qid:1 1:1\n2 qid:1 2:1\n").unwrap();
    let chain = tmp.path().join("c.model");
    ok(&["train", "--task", "chain", s(&seq), "-o", s(&chain), "-q"]);
    let err = fails(&["convert", s(&chain), "-o", s(&out)], 1);
    assert!(err.contains("a chain model has no LIBLINEAR form"), "{err}");
}

/// Issue 23, a first workflow: the output format follows `--to`, else the extension; `convert M -o M.json`
/// wrote LIBLINEAR text into a .json file.
#[test]
fn issue_23_the_output_format_follows_to_or_the_extension() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let p = |n: &str| tmp.path().join(n);
    ok(&["train", s(&data), "-o", s(&p("h.model")), "-q"]);
    ok(&["convert", s(&p("h.model")), "-o", s(&p("h.json"))]);
    let json = std::fs::read_to_string(p("h.json")).unwrap();
    assert!(json.trim_start().starts_with('{'), "{json}");
    ok(&["convert", s(&p("h.model")), "-o", s(&p("h.txt"))]);
    assert!(
        std::fs::read_to_string(p("h.txt"))
            .unwrap()
            .starts_with("solver_type")
    );
    ok(&["convert", s(&p("h.txt")), "-o", s(&p("back.json"))]);
    assert_eq!(
        ok(&["predict", s(&p("back.json")), s(&data)]),
        ok(&["predict", s(&p("h.model")), s(&data)])
    );
    for (args, expected) in [
        (
            vec![
                "convert",
                s(&p("h.txt")),
                "-o",
                s(&p("x.model")),
                "--to",
                "json",
            ],
            "name the output *.json",
        ),
        (
            vec![
                "convert",
                s(&p("h.model")),
                "-o",
                s(&p("x.json")),
                "--to",
                "liblinear",
            ],
            "does not write JSON",
        ),
        (
            vec![
                "convert",
                s(&p("h.txt")),
                "-o",
                s(&p("y.txt")),
                "--to",
                "liblinear",
            ],
            "not a maxmargin model",
        ),
    ] {
        let err = fails(&args, 1);
        assert!(err.contains(expected), "{args:?}: {err}");
    }
}

/// A LIBLINEAR binary model whose first label is the smaller (`label -1 1`, LIBLINEAR's order of first
/// appearance) converts to a model that loads and predicts as LIBLINEAR's rule does (it was written with its
/// labels decreasing, and no command could load it).
#[test]
fn a_liblinear_model_whose_first_label_is_the_smaller_converts() {
    let tmp = tempfile::tempdir().unwrap();
    let lib_path = tmp.path().join("ll.txt");
    let text = "solver_type L2R_L1LOSS_SVC_DUAL\nnr_class 2\nlabel -1 1\nnr_feature 2\nbias 1\nw\n0.5 \n-0.25 \n0.1 \n";
    std::fs::write(&lib_path, text).unwrap();
    let data = tmp.path().join("d.svm");
    let rows_text = "1 1:1 2:0\n-1 1:-1 2:1\n1 1:0.1 2:0.9\n-1 1:-0.4 2:-2\n";
    std::fs::write(&data, rows_text).unwrap();
    let model = tmp.path().join("m.model");
    ok(&["convert", s(&lib_path), "-o", s(&model)]);
    let lib = LiblinearModel::read(&lib_path).unwrap();
    let expected: Vec<f64> = rows(rows_text, 2)
        .iter()
        .map(|x| liblinear_predict(&lib, x))
        .collect();
    assert_eq!(
        predictions(&ok(&["predict", s(&model), s(&data)])),
        expected
    );
    // And back: LIBLINEAR's rule on the written file gives the same labels.
    let back = tmp.path().join("back.txt");
    ok(&["convert", s(&model), "-o", s(&back)]);
    let again = LiblinearModel::read(&back).unwrap();
    let back_preds: Vec<f64> = rows(rows_text, 2)
        .iter()
        .map(|x| liblinear_predict(&again, x))
        .collect();
    assert_eq!(back_preds, expected);
}
