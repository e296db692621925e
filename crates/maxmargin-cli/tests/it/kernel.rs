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
    assert!(err.contains("kernel SVM"), "{err}");
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
