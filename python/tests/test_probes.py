"""What a new user's probe of the package found, kept fixed: a fitted model's probabilities follow what was
fitted, not parameters set since; integer labels beyond 2**53 train; the structured learners are scikit-learn
estimators; a tagger refuses tokens of another shape at predict as at fit, and evaluates to the same keys."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score

from maxmargin import MaxMarginClassifier, Tagger
from maxmargin.learners import FrankWolfeSSVM
from maxmargin.models import MultiClassClf

X = np.random.RandomState(0).randn(200, 4)
Y3 = np.digitize(X[:, 0], [-0.5, 0.5])


def test_probabilities_follow_the_fitted_model_not_later_parameters():
    y = (X[:, 0] > 0).astype(int)
    hinge = MaxMarginClassifier().fit(X, y)
    hinge.set_params(loss="logistic")
    assert not hasattr(hinge, "predict_proba")
    ovr = MaxMarginClassifier(loss="logistic", multi_class="ovr").fit(X, Y3)
    before = ovr.predict_proba(X[:3])
    ovr.set_params(multi_class="auto")
    np.testing.assert_array_equal(ovr.predict_proba(X[:3]), before)
    ovr.set_params(loss="hinge")
    assert hasattr(ovr, "predict_proba")


def test_integer_labels_beyond_a_floats_precision_train_as_classes():
    y = np.array([2**60, 2**60 + 1])[(X[:, 0] > 0).astype(int)]
    m = MaxMarginClassifier().fit(X, y)
    assert list(m.classes_) == [2**60, 2**60 + 1]
    assert m.score(X, y) > 0.9


def test_a_tiny_c_says_to_give_a_larger_one():
    with pytest.raises(ValueError, match="too small.*larger C"):
        MaxMarginClassifier(C=1e-320).fit(X, (X[:, 0] > 0).astype(int))


def test_structured_learners_are_scikit_learn_estimators():
    svm = FrankWolfeSSVM(MultiClassClf(n_classes=3), C=10.0)
    assert clone(svm).get_params()["C"] == 10.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = cross_val_score(svm, X, Y3, cv=3)
        search = GridSearchCV(svm, {"C": [1.0, 10.0]}, cv=3).fit(X, Y3)
    assert len(scores) == 3 and scores.mean() > 0.8
    assert search.best_params_["C"] in (1.0, 10.0)
    svm.foo = 1
    assert "foo" not in svm.get_params()


def test_a_tagger_refuses_tokens_of_another_shape_and_evaluates_to_the_same_keys():
    sentences = [[("a", "DT"), ("x", "NN"), ("y", "VB")]] * 10
    tags = [["B-NP", "I-NP", "B-VP"]] * 10
    tagger = Tagger(max_iter=50).fit(sentences, tags)
    with pytest.raises(ValueError, match="sentence 0, token 0: 1 column"):
        tagger.predict([["the", "x", "y"]])
    plain = tagger.evaluate(sentences[:1], [["B-NP", "X", "B-VP"]])
    chunks = tagger.evaluate(sentences[:1], tags[:1])
    assert {"chunk_precision", "chunk_recall", "chunk_f1"} <= set(plain)
    assert plain["chunk_f1"] is None and chunks["chunk_f1"] == 1.0


def test_a_chain_of_one_tag_names_it_by_its_python_label():
    from maxmargin.models import ChainCRF

    rng = np.random.RandomState(0)
    Xs = [rng.randn(4, 3) for _ in range(5)]
    with pytest.warns(UserWarning, match=r"every tag in <array> is the same \(2\)"):
        FrankWolfeSSVM(ChainCRF(), max_iter=5).fit(Xs, [np.full(4, 2)] * 5)


def test_loading_a_missing_file_is_a_file_not_found_error(tmp_path):
    import maxmargin
    from maxmargin import learners

    for load in (maxmargin.load, learners.load):
        with pytest.raises(FileNotFoundError):
            load(tmp_path / "missing.model")


def test_calibration_errors_name_the_class_by_its_label():
    y = np.array(["fraud", "ok"])[(X[:, 0] > 0).astype(int)]
    m = MaxMarginClassifier().fit(X, y)
    only_ok = y == "ok"
    with pytest.raises(ValueError, match="no row of class 'fraud'"):
        m.calibrate(X[only_ok], y[only_ok])


def test_a_tagger_reads_tokens_with_a_trailing_tag_column():
    sentences = [[("a", "DT"), ("x", "NN"), ("y", "VB")]] * 10
    tags = [["B-NP", "I-NP", "B-VP"]] * 10
    tagger = Tagger(max_iter=50).fit(sentences, tags)
    tagged = [[(w, p, t) for (w, p), t in zip(sentences[0], tags[0])]]
    assert tagger.predict(tagged) == tagger.predict(sentences[:1])


def test_a_tagger_of_words_alone_takes_the_ner_template_and_gives_tags_back_as_given():
    # Words alone (no POS column): the default template chooses as the command does, not "chunking", which
    # reads two columns. Integer tags predict as integers; tags that a tagger file cannot hold are refused.
    sentences = [["the", "cat", "sat"], ["a", "dog", "ran"], ["the", "dog", "sat"]] * 4
    tags = [[1, 2, 3]] * 12
    tagger = Tagger(max_iter=30).fit(sentences, tags)
    assert tagger.predict([["the", "cat", "sat"]]) == [[1, 2, 3]]
    assert tagger.tags_ == [1, 2, 3]
    for bad in ([["B X", "O", "O"]] + [["O"] * 3] * 11, [["", "O", "O"]] + [["O"] * 3] * 11):
        with pytest.raises(ValueError, match="without whitespace"):
            Tagger(max_iter=5).fit(sentences, bad)
    with pytest.raises(ValueError, match="one tag as text"):
        Tagger(max_iter=5).fit(sentences, [[1, "1", 2]] + [[1, 2, 3]] * 11)


def test_messages_name_rows_of_x_from_0_and_tags_of_one_value_in_two_types_are_one():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4))
    y = (X[:, 0] > 0).astype(int)
    X[5, 3] = 1e200
    with pytest.raises(ValueError, match="row 5 of X") as e:
        MaxMarginClassifier().fit(X, y)
    assert "--" not in str(e.value) and "line" not in str(e.value)
    sentences = [["the", "cat", "sat"]] * 6
    tags = [[np.int64(1), 2, 3]] + [[1, 2, 3]] * 5
    assert Tagger(max_iter=5).fit(sentences, tags).tags_ == [1, 2, 3]


def test_one_row_sparse_labels_and_zero_weighted_classes_are_handled_as_scikit_learn_does():
    import scipy.sparse as sp
    from maxmargin.models import MultiLabelClf
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 5))
    y = (X[:, 0] > 0).astype(int)
    svm = FrankWolfeSSVM(MultiClassClf(), max_iter=20).fit(X, y)
    with pytest.raises(ValueError, match="2D"):
        svm.predict(X[0])
    Y = np.stack([y, (X[:, 1] > 0).astype(int)], axis=1)
    multi = FrankWolfeSSVM(MultiLabelClf(), max_iter=20).fit(X, sp.csr_matrix(Y))
    assert multi.score(X, sp.csr_matrix(Y)) == multi.score(X, Y)
    weights = np.where(y == 1, 0.0, 1.0)
    with pytest.raises(ValueError, match="fewer than two classes"):
        MaxMarginClassifier().fit(X, y, sample_weight=weights)
