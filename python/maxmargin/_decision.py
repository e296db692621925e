"""A binary model's decisions from Python, as ``maxmargin calibrate`` and ``maxmargin threshold`` make them: a
calibration fitted on development rows and a cut-off chosen on them, kept with the model and saved in its file."""

import contextlib
import numbers
import re

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted, validate_data

from ._terms import errors_in

# The command's flags in `threshold`'s errors, as its keyword arguments.
_THRESHOLD_FLAGS = [
    ("--at P needs a calibrated model (run maxmargin calibrate first)",
     "probability= needs a calibrated model (calibrate(X_dev, y_dev) first)"),
    ("--at-score", "score="),
]


def _csr(X):
    """``(indptr, indices, data)`` of ``X`` as CSR in canonical form (sorted column indices, no duplicates).

    A float64 CSR matrix already in that form is passed as it is: the extension reads its ``data`` and, when
    they are int32, its ``indices`` in place, without a copy (int64 indices are converted once to 32 bits).
    Anything else (a dense array, another sparse format, unsorted or repeated indices) is converted once here,
    leaving the caller's matrix untouched; so are arrays the extension cannot read where they are (not
    contiguous, not aligned, not in this machine's byte order)."""
    if not (sp.issparse(X) and X.format == "csr" and X.dtype == np.float64 and X.has_canonical_format):
        X = sp.csr_matrix(X, dtype=np.float64, copy=True)
        X.sum_duplicates()
    return tuple(
        np.require(a, a.dtype.newbyteorder("="), ("C_CONTIGUOUS", "ALIGNED")) for a in (X.indptr, X.indices, X.data)
    )


@contextlib.contextmanager
def _reading(arrays):
    """Marks ``arrays`` read-only while the extension reads them in place with the GIL released, so that Python
    code writing them meanwhile (another thread, a signal handler) raises instead of racing with the reads;
    their flags are restored after."""
    writeable = [a.flags.writeable for a in arrays]
    try:
        for a in arrays:
            a.flags.writeable = False
        yield arrays
    finally:
        for a, w in zip(arrays, writeable):
            if w:
                a.flags.writeable = True



class _Decisions:
    """``calibrate`` and ``threshold`` for an estimator that keeps its model whole (``_model``)."""

    def calibrate(self, X, y, method="platt"):
        """Fits a map from scores to probabilities on development rows, as ``maxmargin calibrate`` does.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Rows the model was not trained on: training rows' margins are optimistic.
        y : array-like of shape (n_samples,)
            Their classes (both of the model's two classes must occur).
        method : {"platt", "isotonic"}, default="platt"
            Platt's sigmoid or isotonic regression.

        Returns
        -------
        self
            ``predict_proba`` now gives the calibrated probabilities, and :meth:`save` writes the calibration
            into the model file (``maxmargin predict`` reports them).
        """
        if not isinstance(method, str) or method not in ("platt", "sigmoid", "isotonic"):
            raise ValueError(f"method={method!r}: give 'platt' (or its other name 'sigmoid') or 'isotonic'")
        model, X, y_index = self._development(X, y)
        with _reading(_csr(X)) as csr, _classes_named(self.classes_):
            self._model = model.calibrated((*csr, X.shape[1]), y_index, method)
        return self

    def threshold(self, X, y, *, cost=None, max_flag_rate=None, min_recall=None, score=None, probability=None):
        """Chooses the cut-off on development rows, as ``maxmargin threshold`` does: give exactly one rule.

        Parameters
        ----------
        X, y : development rows and their classes, as in :meth:`calibrate`.
        cost : (float, float), optional
            ``(missed positive, false alarm)``: the cut-off of least total cost on these rows.
        max_flag_rate : float in [0, 1], optional
            Review capacity: flag at most this fraction of the rows, as many as allowed.
        min_recall : float in [0, 1], optional
            The highest cut-off that still catches this fraction of the positives.
        score : float, optional
            A cut-off set by hand on the score.
        probability : float in [0, 1], optional
            A cut-off set by hand on the probability (a calibrated or logistic model).

        Returns
        -------
        self
            ``predict`` flags a row as ``classes_[1]`` when its score is above ``threshold_``;
            ``threshold_report_`` holds the cut-off's ``precision``, ``recall`` and ``flag_rate`` on these
            rows; :meth:`save` writes the cut-off into the model file.
        """
        rules = {
            name: value
            for name, value in [
                ("cost", cost),
                ("max_flag_rate", max_flag_rate),
                ("min_recall", min_recall),
                ("score", score),
                ("probability", probability),
            ]
            if value is not None
        }
        if len(rules) != 1:
            raise ValueError(
                "threshold: give exactly one of cost=(missed positive, false alarm), max_flag_rate, min_recall, "
                f"score or probability (got {sorted(rules) or 'none'})"
            )
        ((rule, value),) = rules.items()
        if rule == "cost":
            if np.ndim(value) != 1 or len(value) != 2:
                raise ValueError(f"cost={value!r}: give (cost of a missed positive, cost of a false alarm)")
            value, false_positive = (float(v) for v in value)
        else:
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) \
                    or not np.isfinite(value):
                raise ValueError(f"{rule}={value!r}: give a finite number")
            if rule in ("max_flag_rate", "min_recall", "probability") and not 0 <= value <= 1:
                raise ValueError(f"{rule}={value!r}: give a fraction in [0, 1]")
            value, false_positive = float(value), 0.0
        model, X, y_index = self._development(X, y)
        with _reading(_csr(X)) as csr, errors_in(_THRESHOLD_FLAGS), _classes_named(self.classes_):
            self._model, report = model.thresholded((*csr, X.shape[1]), y_index, rule, value, false_positive)
        self.threshold_ = report["threshold"]
        self.threshold_report_ = {key: report[key] for key in ("precision", "recall", "flag_rate")}
        return self

    def _development(self, X, y):
        """The kept model, development rows ``X`` and their class indices (0 or 1) for a binary decision."""
        check_is_fitted(self)
        model = getattr(self, "_model", None)
        if model is None:
            raise ValueError(
                "this model was trained on the used columns of a very wide sparse matrix only, so it has no "
                "model to calibrate or cut; use sklearn.calibration.CalibratedClassifierCV"
            )
        if len(self.classes_) != 2:
            raise ValueError(
                f"calibrate and threshold apply to two classes (a cut-off on one score), not "
                f"{len(self.classes_)}: calibrate more classes with sklearn.calibration.CalibratedClassifierCV"
            )
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        y = np.asarray(y)
        if y.shape != (X.shape[0],):
            raise ValueError(f"y must have one class per row of X ({X.shape[0]}), got shape {y.shape}")
        try:
            y_index = np.searchsorted(self.classes_, y)
            known = (y_index < 2) & (self.classes_[np.minimum(y_index, 1)] == y)
        except TypeError as e:
            raise ValueError(f"y: classes of another type than the model's {self.classes_.tolist()}: {e}") from None
        if not np.all(known):
            first = int(np.argmin(known))
            raise ValueError(
                f"y[{first}] = {y[first].tolist()!r} is not one of the model's classes {self.classes_.tolist()}"
            )
        return model, X, y_index.astype(np.float64)

    def _cut(self):
        """The chosen cut-off on the score, else ``None``."""
        model = getattr(self, "_model", None)
        threshold = None if model is None else model.threshold
        return None if threshold is None else threshold[0]

    def _forget_decisions(self):
        """After a new fit: no cut-off and no report of one."""
        for name in ("threshold_", "threshold_report_"):
            self.__dict__.pop(name, None)

    def _scores(self, X):
        """The kept model's decision values of ``X`` (the numbers a cut-off was chosen on: the command's)."""
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        with _reading(_csr(X)) as csr:
            scores = self._model.decision((*csr, X.shape[1]))
        return scores[:, 0] if scores.shape[1] == 1 else scores


@contextlib.contextmanager
def _classes_named(classes):
    """Re-raises the extension's "no row of class I" with the class's label, for classes the model file
    numbers (strings, bools): it named the index (``class 0`` for ``'fraud'``)."""
    try:
        yield
    except ValueError as e:
        from .sklearn import _numeric_classes

        if _numeric_classes(classes) is None and len(e.args) == 1 and isinstance(e.args[0], str):
            e.args = (re.sub(r"no row of class (\d+)",
                             lambda m: f"no row of class {np.asarray(classes).tolist()[int(m.group(1))]!r}"
                             if int(m.group(1)) < len(classes) else m.group(0), e.args[0]),)
        raise
