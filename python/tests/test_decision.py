"""Decisions as the command makes them: a calibration fitted and a cut-off chosen on development rows
(``calibrate``, ``threshold``: the same numbers as ``maxmargin calibrate`` and ``maxmargin threshold``, in the
same model files), and kernels approximated by features (``MaxMarginSVC(approximation=...)``)."""

import pickle
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file, load_iris, load_svmlight_file
from sklearn.utils.estimator_checks import check_estimator

import maxmargin
from maxmargin import MaxMarginClassifier, MaxMarginSVC

DATA = Path(__file__).resolve().parents[2] / "crates/maxmargin/data"
COMMAND = shutil.which("maxmargin")
needs_command = pytest.mark.skipif(COMMAND is None, reason="the maxmargin command is not on PATH")


def heart_split():
    """heart_scale's first 170 rows to train on, the last 100 as development rows."""
    X, y = load_svmlight_file(str(DATA / "heart_scale"), n_features=13)
    return (X[:170], y[:170]), (X[170:], y[170:])


def run(*args):
    out = subprocess.run([COMMAND, *map(str, args)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_predict_proba_appears_with_a_calibration_and_predict_follows_the_cut_off():
    (X, y), (Xd, yd) = heart_split()
    clf = MaxMarginClassifier().fit(X, y)
    assert not hasattr(clf, "predict_proba")
    assert clf.calibrate(Xd, yd) is clf
    p = clf.predict_proba(Xd)
    assert p.shape == (100, 2) and np.allclose(p.sum(axis=1), 1.0) and np.all((p > 0) & (p < 1))
    # Platt's map increases with the score.
    order = np.argsort(clf.decision_function(Xd))
    assert np.all(np.diff(p[order, 1]) >= -1e-12)
    clf.threshold(Xd, yd, max_flag_rate=0.2)
    scores = clf.decision_function(Xd)
    assert np.mean(scores > clf.threshold_) <= 0.2
    assert clf.threshold_report_["flag_rate"] == pytest.approx(np.mean(scores > clf.threshold_))
    assert np.array_equal(clf.predict(Xd), clf.classes_[(scores > clf.threshold_).astype(int)])
    by_cost = clf.threshold(Xd, yd, cost=(5.0, 1.0)).threshold_
    assert by_cost < clf.threshold(Xd, yd, cost=(1.0, 5.0)).threshold_
    # A new fit forgets the calibration and the cut-off.
    clf.fit(X, y)
    assert not hasattr(clf, "threshold_") and not hasattr(clf, "predict_proba")
    again = pickle.loads(pickle.dumps(clf.calibrate(Xd, yd).threshold(Xd, yd, min_recall=0.9)))
    assert again.threshold_ == clf.threshold_
    assert np.array_equal(again.predict(Xd), clf.predict(Xd))
    assert np.array_equal(again.predict_proba(Xd), clf.predict_proba(Xd))


def test_a_rule_is_one_rule_on_two_known_classes():
    (X, y), (Xd, yd) = heart_split()
    clf = MaxMarginClassifier().fit(X, y)
    with pytest.raises(ValueError, match="exactly one of"):
        clf.threshold(Xd, yd)
    with pytest.raises(ValueError, match="exactly one of"):
        clf.threshold(Xd, yd, max_flag_rate=0.1, min_recall=0.5)
    with pytest.raises(ValueError, match="cost="):
        clf.threshold(Xd, yd, cost=3.0)
    with pytest.raises(ValueError, match="fraction"):
        clf.threshold(Xd, yd, max_flag_rate=1.5)
    with pytest.raises(ValueError, match="calibrated"):
        clf.threshold(Xd, yd, probability=0.7)
    with pytest.raises(ValueError, match=r"y\[0\] = 7.0 is not one of the model's classes"):
        clf.calibrate(Xd, np.full(100, 7.0))
    with pytest.raises(ValueError, match="both classes"):
        clf.calibrate(Xd, np.ones(100))
    X3, y3 = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="two classes"):
        MaxMarginClassifier().fit(X3, y3).calibrate(X3, y3)


@needs_command
def test_the_cut_off_and_calibration_are_the_commands(tmp_path):
    (X, y), (Xd, yd) = heart_split()
    dev = tmp_path / "dev.svm"
    dump_svmlight_file(Xd, yd, str(dev), zero_based=False)
    clf = MaxMarginClassifier().fit(X, y)
    clf.save(tmp_path / "plain.model")
    run("calibrate", tmp_path / "plain.model", dev, "-o", tmp_path / "cal.model")
    run("threshold", tmp_path / "cal.model", dev, "--max-flag-rate", "0.2", "-o", tmp_path / "cut.model")
    clf.calibrate(Xd, yd).threshold(Xd, yd, max_flag_rate=0.2)
    command = maxmargin.load(tmp_path / "cut.model")
    assert command.threshold_ == clf.threshold_
    assert np.array_equal(command.predict_proba(Xd), clf.predict_proba(Xd))
    # And the other way: the command predicts with the file Python wrote.
    clf.save(tmp_path / "python.model")
    labels = [float(line.split()[0]) for line in run("predict", tmp_path / "python.model", dev).splitlines()]
    assert np.array_equal(labels, clf.predict(Xd))


@pytest.mark.parametrize("approximation", ["nystroem", "rff"])
def test_an_approximated_kernel_learns_what_the_exact_one_does(tmp_path, approximation):
    X, y = load_iris(return_X_y=True)
    svc = MaxMarginSVC(approximation=approximation, n_components=60, scale="standard", random_state=0)
    svc.fit(X, y)
    assert svc.converged_ and svc.score(X, y) >= 0.93
    exact = MaxMarginSVC(scale="standard").fit(X, y)
    assert np.mean(svc.predict(X) == exact.predict(X)) >= 0.93
    svc.save(tmp_path / "m")
    loaded = maxmargin.load(tmp_path / "m")
    assert np.allclose(loaded.decision_function(X), svc.decision_function(X), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="multi_class='ovo'|ovo"):
        MaxMarginSVC(approximation=approximation, multi_class="ovo").fit(X, y)


def test_an_approximated_kernel_passes_scikit_learns_checks():
    svc = MaxMarginSVC(approximation="nystroem", n_components=20)
    check_estimator(svc, expected_failed_checks=maxmargin.sklearn.expected_failed_checks(svc))


def test_a_binary_approximated_kernel_calibrates_and_cuts_too():
    (X, y), (Xd, yd) = heart_split()
    svc = MaxMarginSVC(approximation="nystroem", n_components=40, random_state=1).fit(X, y)
    assert not hasattr(svc, "predict_proba")
    svc.calibrate(Xd, yd, method="isotonic").threshold(Xd, yd, probability=0.5)
    p = svc.predict_proba(Xd)[:, 1]
    # A cut-off at probability 0.5 flags exactly the rows whose calibrated probability reaches it.
    assert np.array_equal(svc.predict(Xd) == svc.classes_[1], p >= 0.5)
    assert svc.threshold_report_["flag_rate"] == pytest.approx(np.mean(p >= 0.5))


def test_a_fit_keeps_no_reference_to_the_rows_it_read_in_place():
    import sys

    import scipy.sparse as sp

    (X, y), (Xd, yd) = heart_split()
    X = sp.csr_matrix(X)
    arrays = (X.data, X.indices, X.indptr)
    before = [sys.getrefcount(a) for a in arrays]
    clf = MaxMarginClassifier().fit(X, y).calibrate(X, y).threshold(X, y, min_recall=0.5)
    clf.predict(X)
    assert [sys.getrefcount(a) for a in arrays] == before
    # And the arrays are writeable again after the fit marked them read-only while it read them.
    assert all(a.flags.writeable for a in arrays)
