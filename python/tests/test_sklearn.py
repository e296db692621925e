"""maxmargin.sklearn.MaxMarginClassifier as scikit-learn users know estimators: scikit-learn's own estimator
checks, LinearSVC's optimum, probabilities only where the model has them, and the certificate of every run."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.calibration import CalibratedClassifierCV
from sklearn.model_selection import FixedThresholdClassifier
from sklearn.datasets import load_breast_cancer, load_iris, make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC
from sklearn.utils.estimator_checks import check_estimator

from maxmargin import MaxMarginClassifier, MaxMarginSVC
from maxmargin.sklearn import expected_failed_checks

@pytest.mark.parametrize("estimator", [MaxMarginClassifier(), MaxMarginSVC()], ids=type)
def test_scikit_learns_estimator_checks_pass(estimator):
    # The package declares what scikit-learn's own LinearSVC and SVC fail too (python/README.md).
    expected = expected_failed_checks(estimator)
    assert set(expected) == {
        "check_sample_weight_equivalence_on_dense_data", "check_sample_weight_equivalence_on_sparse_data"
    }
    results = check_estimator(estimator, expected_failed_checks=expected, on_fail=None)
    failed = [r["check_name"] for r in results if r["status"] == "failed"]
    assert not failed, failed
    assert {r["check_name"] for r in results if r["status"] == "xfail"} <= set(expected)


def test_messages_name_the_argument():
    X, y = make_classification(n_samples=80, n_features=6, random_state=0)
    with pytest.raises(ValueError, match=r"class_weight\[0\]=-1"):
        MaxMarginClassifier(class_weight={0: -1, 1: 1}).fit(X, y)
    clf = MaxMarginClassifier().fit(X, y)
    with pytest.raises(ValueError, match=r"max_flag_rate=2: give a fraction in \[0, 1\]"):
        clf.threshold(X, y, max_flag_rate=2)
    with pytest.raises(ValueError, match=r"min_recall=-0.5"):
        clf.threshold(X, y, min_recall=-0.5)
    for method in (42, None, "no-such-method"):
        with pytest.raises(ValueError, match=r"method=.*'platt'.*'isotonic'"):
            clf.calibrate(X, y, method=method)
    # The names that mean a method are still taken.
    assert clf.calibrate(X, y, method="sigmoid").predict_proba(X[:2]).shape == (2, 2)


def hinge_objective(clf, X, y, C):
    """`½‖w‖² + ½b² + C Σ max(0, 1 − y f(x))`: LIBLINEAR's primal with the intercept a regularized feature."""
    margins = np.where(y == clf.classes_[1], 1.0, -1.0) * clf.decision_function(X)
    w = np.append(clf.coef_.ravel(), clf.intercept_)
    return 0.5 * w @ w + C * np.maximum(0.0, 1.0 - margins).sum()


def test_binary_dcd_reaches_linear_svcs_optimum_and_certifies_it():
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    ours = MaxMarginClassifier(C=1.0, gap=1e-8).fit(X, y)
    assert ours.converged_ and ours.duality_gap_ >= 0.0
    assert ours.duality_gap_ <= 1e-8 * ours.objective_ * 1.0001
    # objective_ is LIBLINEAR's primal, in C's units.
    assert abs(ours.objective_ - hinge_objective(ours, X, y, 1.0)) <= 1e-9 * ours.objective_
    theirs = LinearSVC(C=1.0, loss="hinge", dual=True, tol=1e-10, max_iter=1_000_000).fit(X, y)
    a, b = hinge_objective(ours, X, y, 1.0), hinge_objective(theirs, X, y, 1.0)
    # At least as low as LIBLINEAR's, and the two agree to what both certify.
    assert a <= b * (1 + 1e-6)
    assert abs(a - b) <= 1e-5 * b
    assert np.mean(ours.predict(X) == theirs.predict(X)) > 0.99


def test_newton_reaches_liblinears_primal_optimum_on_rows_beyond_features():
    # More rows than features, dense and unscaled: solver="auto" trains the smooth losses by Newton's method
    # in the primal (LinearSVC's dual="auto" makes the same choice), certified, at LIBLINEAR's optimum.
    X, y = make_classification(n_samples=3000, n_features=60, n_informative=10, flip_y=0.05, random_state=3)
    X = X * 20.0
    for loss, theirs in [
        ("squared_hinge", LinearSVC(C=1.0, dual=False, tol=1e-10, max_iter=100_000)),
        ("logistic", LogisticRegression(C=1.0, tol=1e-10, max_iter=100_000)),
    ]:
        ours = MaxMarginClassifier(C=1.0, loss=loss, fit_intercept=False, gap=1e-9).fit(X, y)
        assert ours.converged_, loss
        assert ours.get_params()["solver"] == "auto"
        theirs.set_params(fit_intercept=False).fit(X, y)
        a = smooth_objective(ours, X, y, loss)
        b = smooth_objective(theirs, X, y, loss)
        assert a <= b * (1 + 1e-7), (loss, a, b)
        assert abs(a - b) <= 1e-6 * b, (loss, a, b)
        assert abs(ours.objective_ - a) <= 1e-9 * a, (loss, ours.objective_, a)
        # tol is dcd's stopping rule, refused with newton.
        with pytest.raises(ValueError, match="tol"):
            MaxMarginClassifier(loss=loss, solver="newton", tol=0.1).fit(X, y)
    with pytest.raises(ValueError, match="differentiable"):
        MaxMarginClassifier(loss="hinge", solver="newton").fit(X, y)


def smooth_objective(model, X, y, loss):
    """½‖w‖² + C Σ ℓ (C = 1, no intercept) of a fitted linear model."""
    w = np.ravel(model.coef_)
    z = np.where(y == 1, 1.0, -1.0) * (X @ w)
    if loss == "logistic":
        data = np.sum(np.logaddexp(0.0, -z))
    else:
        data = np.sum(np.maximum(0.0, 1.0 - z) ** 2)
    return 0.5 * w @ w + data


def test_multiclass_crammer_singer_and_one_vs_rest_fit_iris():
    X, y = load_iris(return_X_y=True)
    for multi_class in ["ovr", "crammer_singer"]:
        clf = MaxMarginClassifier(C=10.0, multi_class=multi_class, scale="maxabs").fit(X, y)
        assert clf.coef_.shape == (3, 4) and clf.intercept_.shape == (3,)
        assert clf.converged_, (multi_class, clf.stop_)
        assert clf.score(X, y) > 0.9
        # The scaling is folded into coef_ and intercept_: they act on the rows as given.
        scores = X @ clf.coef_.T + clf.intercept_
        np.testing.assert_allclose(clf.decision_function(X), scores)


def test_string_labels_sparse_rows_and_pickles():
    X, y = make_classification(n_samples=200, n_features=20, random_state=0)
    labels = np.array(["no", "yes"])[y]
    dense = MaxMarginClassifier(random_state=3).fit(X, labels)
    sparse = MaxMarginClassifier(random_state=3).fit(sp.csr_matrix(X), labels)
    np.testing.assert_array_equal(dense.coef_, sparse.coef_)
    assert set(dense.predict(X)) <= {"no", "yes"}
    again = pickle.loads(pickle.dumps(dense))
    np.testing.assert_array_equal(again.decision_function(X), dense.decision_function(X))


def test_the_same_seed_gives_the_same_bits():
    X, y = make_classification(n_samples=300, n_features=10, random_state=1)
    a = MaxMarginClassifier(solver="pegasos", max_iter=5, random_state=7).fit(X, y)
    b = MaxMarginClassifier(solver="pegasos", max_iter=5, random_state=7).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_probabilities_only_where_the_model_has_them():
    X, y = load_iris(return_X_y=True)
    margin = MaxMarginClassifier().fit(X, y)
    assert not hasattr(margin, "predict_proba")
    with pytest.raises(AttributeError, match="loss='logistic', or calibrate it"):
        margin.predict_proba(X)
    logistic = MaxMarginClassifier(loss="logistic", scale="maxabs").fit(X, y)
    p = logistic.predict_proba(X)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert np.mean(logistic.classes_[p.argmax(axis=1)] == logistic.predict(X)) == 1.0
    # Calibration wraps a margin model as scikit-learn users know it.
    calibrated = CalibratedClassifierCV(MaxMarginClassifier(), cv=3).fit(X, y)
    np.testing.assert_allclose(calibrated.predict_proba(X).sum(axis=1), 1.0)
    # So does a fixed cut-off on the decision function (two classes).
    Xb, yb = load_breast_cancer(return_X_y=True)
    model = make_pipeline(StandardScaler(), MaxMarginClassifier())
    strict = FixedThresholdClassifier(model, threshold=1.0, response_method="decision_function")
    loose = FixedThresholdClassifier(model, threshold=-1.0, response_method="decision_function")
    assert strict.fit(Xb, yb).predict(Xb).sum() < loose.fit(Xb, yb).predict(Xb).sum()


def test_a_run_stopped_by_its_budget_warns_and_says_so():
    X, y = make_classification(n_samples=500, n_features=30, random_state=2)
    with pytest.warns(ConvergenceWarning) as caught:
        clf = MaxMarginClassifier(solver="pegasos", max_iter=1, gap=1e-6).fit(X * 100, y)
    # The warning gives the relative gap, not the library's λ-form numbers beside the C-form attributes.
    said = " ".join(str(w.message) for w in caught)
    assert "certified within a relative gap of" in said and "its objective" not in said, said
    assert not clf.converged_
    assert clf.duality_gap_ is not None and clf.duality_gap_ > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        MaxMarginClassifier().fit(X, y)


def test_settings_that_cannot_apply_are_refused_naming_why():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="crammer_singer"):
        MaxMarginClassifier(loss="squared_hinge", multi_class="crammer_singer").fit(X, y)
    with pytest.raises(ValueError, match="'loss' parameter"):
        MaxMarginClassifier(loss="log").fit(X, y)
    with pytest.raises(ValueError, match="multinomial"):
        MaxMarginClassifier(loss="hinge", multi_class="multinomial").fit(X, y)
    # The squared hinge with the logistic loss's model names the model, not the solver it was given.
    with pytest.raises(ValueError, match="logistic loss.s model.*loss=logistic"):
        MaxMarginClassifier(loss="squared_hinge", multi_class="multinomial").fit(X, y)
    # Errors name this estimator's parameters, not the command's flags.
    with pytest.raises(ValueError, match="kernel='rbf', or approximation='nystroem'") as seen:
        MaxMarginSVC(kernel="poly", approximation="rff").fit(X, y)
    assert "--" not in str(seen.value)
    with pytest.raises(ValueError, match="tol"):
        MaxMarginClassifier(solver="pegasos", tol=0.1).fit(X[y < 2], y[y < 2])
    with pytest.raises(ValueError, match="one class"):
        MaxMarginClassifier().fit(X[:10], y[:10])


def test_in_pipelines_and_cross_validation():
    X, y = load_breast_cancer(return_X_y=True)
    pipe = make_pipeline(StandardScaler(), MaxMarginClassifier(class_weight="balanced"))
    assert cross_val_score(pipe, X, y, cv=3).mean() > 0.95


def test_the_kernel_svm_matches_svc_and_pickles():
    from sklearn.svm import SVC

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    ours = MaxMarginSVC(C=1.0, gap=1e-6, tol=1e-6).fit(X, y)
    theirs = SVC(C=1.0, tol=1e-6).fit(X, y)
    assert ours.converged_ and ours.duality_gap_ >= 0.0
    assert ours.n_support_ == theirs.n_support_.sum()
    np.testing.assert_allclose(ours.decision_function(X), theirs.decision_function(X), atol=1e-3)
    Xi, yi = load_iris(return_X_y=True)
    multi = MaxMarginSVC().fit(Xi, yi)
    assert multi.decision_function(Xi).shape == (150, 3)
    assert multi.score(Xi, yi) == pytest.approx(SVC().fit(Xi, yi).score(Xi, yi), abs=0.02)
    again = pickle.loads(pickle.dumps(multi))
    np.testing.assert_array_equal(again.decision_function(Xi), multi.decision_function(Xi))
    assert not hasattr(multi, "predict_proba")


def test_every_loss_trains_more_than_two_classes_and_logistic_gives_probabilities():
    X, y = load_iris(return_X_y=True)
    for loss, multi_class in [
        ("squared_hinge", "auto"),
        ("logistic", "ovr"),
        ("logistic", "multinomial"),
    ]:
        clf = MaxMarginClassifier(loss=loss, multi_class=multi_class, scale="standard").fit(X, y)
        assert clf.coef_.shape == (3, 4) and clf.score(X, y) > 0.9, (loss, multi_class)
        if loss == "logistic":
            np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)


def test_hashed_text_of_millions_of_columns_trains():
    rng = np.random.RandomState(0)
    rows, cols = 60, 2**22
    # 20 hashed columns a row (built directly: scipy's sparse.random draws over every cell).
    indices = np.sort(rng.choice(cols, size=(rows, 20)), axis=1)
    X = sp.csr_matrix(
        (rng.rand(rows * 20), indices.ravel(), np.arange(0, rows * 20 + 1, 20)), shape=(rows, cols)
    )
    y = (np.asarray(X.sum(axis=1)).ravel() > np.median(np.asarray(X.sum(axis=1)))).astype(int)
    clf = MaxMarginClassifier().fit(X, y)
    assert clf.coef_.shape == (1, cols)
    unused = np.asarray(X.sum(axis=0)).ravel() == 0
    assert np.all(clf.coef_[0, unused] == 0.0)
    assert clf.score(X, y) > 0.9


def test_ctrl_c_raises_keyboard_interrupt_within_a_second_and_leaves_the_estimator_unfitted():
    import os
    import signal
    import threading
    import time

    X, y = make_classification(n_samples=3000, n_features=40, random_state=0)
    clf = MaxMarginClassifier(solver="subgradient", max_iter=1e9, gap=1e-15)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    start = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            clf.fit(X, y)
    finally:
        timer.cancel()
    assert time.perf_counter() - start < 1.5 + 0.5
    assert not hasattr(clf, "coef_")


def test_verbose_prints_the_commands_progress_lines_on_sys_stderr(capsys):
    X, y = make_classification(n_samples=300, n_features=10, random_state=0)
    # A gap target makes the run evaluate every pass; verbose=2 prints each evaluation.
    quiet = MaxMarginClassifier(solver="pegasos", max_iter=30, gap=1e-9).fit(X, y)
    assert "progress:" not in capsys.readouterr().err
    loud = MaxMarginClassifier(solver="pegasos", max_iter=30, gap=1e-9, verbose=2).fit(X, y)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("progress: ")]
    assert len(lines) >= 30 and all("pass" in line for line in lines)
    assert "primal" in lines[-1] and "gap" in lines[-1]
    # Printing does not change the run.
    assert np.array_equal(loud.coef_, quiet.coef_)
    MaxMarginClassifier(solver="pegasos", max_iter=30, gap=1e-9, verbose=1).fit(X, y)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("progress: ")]
    assert 1 <= len(lines) <= 3
