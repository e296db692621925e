"""scikit-learn estimators over maxmargin's solvers.

:class:`MaxMarginClassifier` is a linear classifier in the place of scikit-learn's ``LinearSVC`` (and of
``LogisticRegression`` with ``loss="logistic"``): dual coordinate descent (LIBLINEAR's method) for two
classes, Crammer and Singer's multiclass dual or one-vs-rest for more, each run certified by a duality gap.
"""

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.extmath import softmax
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from . import _core

__all__ = ["MaxMarginClassifier"]


def _seed(random_state):
    """A run's seed: the integer given, 0 for ``None`` (runs are deterministic), or one drawn from a
    ``RandomState``."""
    if random_state is None:
        return 0
    if isinstance(random_state, numbers.Integral):
        if random_state < 0:
            raise ValueError(f"random_state={random_state}: give a non-negative integer")
        return int(random_state)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int32).max))
    raise ValueError(f"random_state={random_state!r}: give None, an integer or a RandomState")


# The library's advice names the command's flags; here they are this estimator's parameters.
_FLAGS = [
    ("--scale maxabs", "scale='maxabs'"),
    ("--solver dcd", "solver='dcd'"),
    ("more passes (--epochs, --iterations)", "a larger max_iter"),
    ("more passes (--epochs)", "a larger max_iter"),
    ("--epochs", "max_iter"),
    ("--iterations", "max_iter"),
    ("--epsilon", "tol"),
    ("--gap", "gap"),
    ("--lambda", "C"),
]


def _in_python_terms(message):
    for flag, parameter in _FLAGS:
        message = message.replace(flag, parameter)
    return message


def _is_logistic(estimator):
    """Whether the model is probabilistic: ``predict_proba`` exists only then."""
    if getattr(estimator, "loss", None) != "logistic":
        raise AttributeError(
            "predict_proba needs a probabilistic model: this one is trained with "
            f"loss={estimator.loss!r}, whose scores are margins, not probabilities; train with "
            "loss='logistic', or calibrate it (sklearn.calibration.CalibratedClassifierCV)"
        )
    return True


class MaxMarginClassifier(LinearClassifierMixin, BaseEstimator):
    """A linear max-margin classifier trained to a certified duality gap.

    Minimizes ``½‖w‖² + C Σ_i s_i ℓ(y_i, ⟨w, x_i⟩ + b)`` (LIBLINEAR's and ``LinearSVC``'s convention for
    ``C``; ``s_i`` the sample weights times the class weights) with ``ℓ`` the hinge (the default), the
    squared hinge or the logistic loss.

    Parameters
    ----------
    C : float, default=1.0
        Inverse regularization strength, as in ``LinearSVC``.
    loss : {"hinge", "squared_hinge", "logistic"}, default="hinge"
        The loss. ``"logistic"`` makes the model probabilistic (``predict_proba``); with more than two
        classes it is the multinomial (softmax) loss.
    multi_class : {"ovr", "crammer_singer"}, default="ovr"
        More than two classes: one binary model per class, or Crammer and Singer's joint multiclass SVM.
    solver : {"dcd", "pegasos", "subgradient"}, default="dcd"
        Dual coordinate descent (the default, certified and fastest), Pegasos, or the batch subgradient
        method (two classes; with more, ``multi_class="crammer_singer"`` takes the stochastic subgradient
        method).
    tol : float, default=None
        Dual coordinate descent's stopping tolerance (LIBLINEAR's ε; ``None``: 0.1 for two classes, 0.01 for
        more).
    gap : float, default=None
        The relative duality gap at which the run stops certified (``None``: 1%).
    max_iter : float, default=None
        The budget in passes over the data (``None``: the solver's default).
    class_weight : dict or "balanced", default=None
        Weights of the classes' losses.
    fit_intercept : bool, default=True
        Learn an intercept (as a regularized constant feature, as LIBLINEAR does).
    random_state : int, RandomState or None, default=None
        The seed of the solvers' orders; ``None`` is seed 0 (runs are deterministic either way).
    scale : {"none", "maxabs", "minmax", "standard"}, default="none"
        Scaling fitted on the training rows; ``coef_`` and ``intercept_`` act on unscaled rows.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined only when ``X`` has feature names that are all strings.
    converged_ : bool
        Whether the run ended certified within its target.
    duality_gap_ : float or None
        The certified gap between the objective and its dual bound (absolute).
    objective_ : float
        The objective at the weights returned.
    n_iter_ : int
        The solver's iterations (passes, for dual coordinate descent).
    stop_ : str
        Why the run stopped (``converged``, ``gap``, ``max_epochs``, ...).
    """

    def __init__(
        self,
        C=1.0,
        loss="hinge",
        multi_class="ovr",
        solver="dcd",
        tol=None,
        gap=None,
        max_iter=None,
        class_weight=None,
        fit_intercept=True,
        random_state=None,
        scale="none",
    ):
        self.C = C
        self.loss = loss
        self.multi_class = multi_class
        self.solver = solver
        self.tol = tol
        self.gap = gap
        self.max_iter = max_iter
        self.class_weight = class_weight
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.scale = scale

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def fit(self, X, y, sample_weight=None):
        """Trains on ``X`` (dense or sparse) with labels ``y`` and optional per-sample weights."""
        X, y = validate_data(
            self, X, y, accept_sparse="csr", dtype=np.float64, order="C", accept_large_sparse=True
        )
        check_classification_targets(y)
        self.classes_, y_index = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(
                f"the data has one class ({self.classes_[0]!r}): a classifier needs at least two classes"
            )
        if not (isinstance(self.C, numbers.Real) and np.isfinite(self.C) and self.C > 0):
            raise ValueError(f"C={self.C!r}: give a positive finite number")
        weights = None
        if sample_weight is not None:
            weights = _check_sample_weight(sample_weight, X, dtype=np.float64)
            if np.all(weights == 1.0):
                weights = None
        X = sp.csr_matrix(X, dtype=np.float64, copy=True)
        X.sum_duplicates()
        X.sort_indices()
        class_weight = []
        if self.class_weight is not None:
            factors = compute_class_weight(self.class_weight, classes=self.classes_, y=y)
            class_weight = [(float(i), float(f)) for i, f in enumerate(factors)]
        result = _core.fit_linear(
            X.indptr.astype(np.int64),
            X.indices.astype(np.int64),
            X.data,
            X.shape[1],
            y_index.astype(np.float64),
            weights,
            c=float(self.C),
            loss=self.loss,
            multi_class=self.multi_class,
            solver=self.solver,
            tol=None if self.tol is None else float(self.tol),
            gap=None if self.gap is None else float(self.gap),
            max_iter=None if self.max_iter is None else float(self.max_iter),
            class_weight=class_weight,
            fit_intercept=bool(self.fit_intercept),
            random_state=_seed(self.random_state),
            scale=self.scale,
        )
        self.coef_ = result["coef"]
        self.intercept_ = result["intercept"]
        self.objective_ = result["objective"]
        self.duality_gap_ = result["duality_gap"]
        self.n_iter_ = max(int(result["n_iter"]), 1)
        self.converged_ = bool(result["converged"])
        self.stop_ = result["stop"]
        for message in result["warnings"]:
            category = ConvergenceWarning if not self.converged_ else UserWarning
            warnings.warn(_in_python_terms(message), category, stacklevel=2)
        if not self.converged_ and not result["warnings"]:
            warnings.warn(
                f"not converged (stop: {self.stop_}, duality gap {self.duality_gap_}): raise max_iter, "
                "or scale the data (scale='maxabs')",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    @property
    def predict_proba(self):
        """Class probabilities of a logistic model (``loss="logistic"``); a margin model has none (an
        ``AttributeError`` says why, so ``hasattr`` is false and calibration wrappers know to calibrate)."""
        _is_logistic(self)
        return self._predict_proba

    @property
    def predict_log_proba(self):
        """The logarithms of :meth:`predict_proba`."""
        _is_logistic(self)
        return self._predict_log_proba

    def _predict_proba(self, X):
        check_is_fitted(self)
        scores = self.decision_function(X)
        if scores.ndim == 1:
            p = 1.0 / (1.0 + np.exp(-scores))
            return np.column_stack([1.0 - p, p])
        return softmax(scores)

    def _predict_log_proba(self, X):
        return np.log(self._predict_proba(X))
