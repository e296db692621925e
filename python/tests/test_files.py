"""Models are the command's files: an estimator's ``save`` writes what ``maxmargin predict`` reads, and
``maxmargin.load`` reads what ``maxmargin train`` wrote, predicting as the command does."""

import pickle
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_svmlight_file

import maxmargin
from maxmargin import MaxMarginClassifier, MaxMarginSVC

DATA = Path(__file__).resolve().parents[2] / "crates/maxmargin/data"
COMMAND = shutil.which("maxmargin")
needs_command = pytest.mark.skipif(COMMAND is None, reason="the maxmargin command is not on PATH")


def heart():
    X, y = load_svmlight_file(str(DATA / "heart_scale"), n_features=13)
    return X, y


def iris():
    X, y = load_svmlight_file(str(DATA / "iris.libsvm"))
    return X, y


def command_predictions(model, data):
    out = subprocess.run([COMMAND, "predict", str(model), str(data)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return np.array([float(line.split()[0]) for line in out.stdout.splitlines()])


@pytest.mark.parametrize(
    "estimator, data",
    [
        (MaxMarginClassifier(C=1.0), heart),
        (MaxMarginClassifier(C=1.0, scale="standard"), heart),
        (MaxMarginClassifier(multi_class="crammer_singer"), iris),
        (MaxMarginSVC(C=1.0, gamma=0.1), heart),
        (MaxMarginClassifier(C=0.3, loss="squared_hinge", fit_intercept=False, random_state=4), heart),
        (MaxMarginClassifier(C=2.0, multi_class="ovr", loss="logistic", scale="maxabs"), iris),
        (MaxMarginSVC(C=3.0, kernel="poly", degree=2, coef0=1.0, multi_class="ovr"), iris),
        (MaxMarginSVC(approximation="nystroem", n_components=30, gap=0.001, multi_class="crammer_singer"), iris),
    ],
    ids=["linear", "scaled", "multiclass", "kernel", "squared", "ovr-logistic", "kernel-ovr", "nystroem"],
)
def test_a_saved_model_is_read_back_and_predicts_the_same(tmp_path, estimator, data):
    X, y = data()
    fitted = estimator.fit(X, y)
    path = tmp_path / "model"
    fitted.save(path)
    loaded = maxmargin.load(path)
    assert type(loaded) is type(fitted)
    assert np.array_equal(loaded.classes_, fitted.classes_)
    assert np.array_equal(loaded.predict(X), fitted.predict(X))
    assert np.allclose(loaded.decision_function(X), fitted.decision_function(X), rtol=1e-12, atol=1e-12)
    assert loaded.converged_ == fitted.converged_
    assert loaded.objective_ == pytest.approx(fitted.objective_, rel=1e-12)
    # The file's hyperparameters come back (random_state None trains with seed 0).
    expected = {**fitted.get_params(), "random_state": fitted.random_state or 0}
    # solver="auto" comes back as "dcd" where it chose dcd for two classes (newton reads back as "auto").
    if expected.get("solver") == "auto" and len(fitted.classes_) == 2 and fitted.loss == "hinge":
        expected["solver"] = "dcd"
    assert loaded.get_params() == expected
    refit = clone(loaded).fit(X, y)
    assert np.array_equal(refit.decision_function(X), fitted.decision_function(X))
    again = pickle.loads(pickle.dumps(fitted))
    assert np.array_equal(again.predict(X), fitted.predict(X))
    if COMMAND is not None:
        source = DATA / ("heart_scale" if data is heart else "iris.libsvm")
        # The file speaks the data's labels: the command predicts them as Python does.
        assert np.array_equal(command_predictions(path, source), fitted.predict(X))


@needs_command
def test_a_model_the_command_trained_loads_as_the_estimator_that_predicts_as_the_command(tmp_path):
    path = tmp_path / "heart.model"
    source = DATA / "heart_scale"
    out = subprocess.run([COMMAND, "train", str(source), "-o", str(path), "-c", "1"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    model = maxmargin.load(path)
    assert isinstance(model, MaxMarginClassifier) and model.converged_
    X, _ = heart()
    assert np.array_equal(model.predict(X), command_predictions(path, source))


def test_string_classes_are_numbered_in_the_file_and_a_missing_file_is_named(tmp_path):
    X, y = heart()
    names = np.where(y > 0, "sick", "well")
    clf = MaxMarginClassifier().fit(X, names)
    clf.save(tmp_path / "m")
    loaded = maxmargin.load(tmp_path / "m")
    assert list(loaded.classes_) == [0.0, 1.0]
    assert np.array_equal(clf.classes_[loaded.predict(X).astype(int)], clf.predict(X))
    with pytest.raises(FileNotFoundError, match="No such file"):
        maxmargin.load(tmp_path / "missing")
