"""``maxmargin.load``: a model file written by the command or by an estimator's ``save``, as the estimator
that predicts with it."""

import numpy as np

import json

from . import _core

_STRUCTURED = ("multilabel", "chain", "graph")


def _exists(path):
    """Raises ``FileNotFoundError`` for a path that is not there, as ``open`` does (the extension's error for
    it is a ``ValueError``, which a caller catching ``OSError`` would not see)."""
    import os

    if not os.path.exists(path):
        raise FileNotFoundError(2, "No such file or directory", str(path))


def load(path):
    """The estimator of a model file: :class:`~maxmargin.MaxMarginClassifier` for a linear binary or
    multiclass model, :class:`~maxmargin.MaxMarginSVC` for a kernel (or approximated-kernel) one, a
    :mod:`maxmargin.learners` learner for a multilabel, chain or graph model, :class:`~maxmargin.Tagger` for a
    CoNLL tagger. It predicts as the command does; ``converged_``, ``duality_gap_`` and ``objective_`` come
    from the file, and so do the hyperparameters the file records (``C``, the loss, the kernel, the scaling,
    the seed, ...: ``clone(load(path)).fit(X, y)`` trains as the file's run did). Files from older versions of the
    command are read as the command reads them."""
    from .learners import load as load_structured
    from .sklearn import MaxMarginClassifier, MaxMarginSVC, _record_run
    from .tagger import Tagger

    _exists(path)
    kind = _core.model_kind(str(path))
    if kind == "chain-conll":
        return Tagger.load(path)
    if kind == "chain-conll-latent":
        raise ValueError(
            f"{path}: a tagger with latent states (chain-conll-latent) is read by the command (maxmargin predict "
            "and eval); maxmargin.Tagger reads chain-conll taggers"
        )
    if kind in _STRUCTURED:
        return load_structured(path)
    model = _core.Model.load(str(path))
    parts = model.parts()
    estimator = MaxMarginSVC() if model.is_kernel else MaxMarginClassifier()
    estimator.set_params(**_hyperparameters(model, estimator.get_params()))
    # What the file's model is, as fit records it: predict_proba reads these, whatever set_params sets after.
    params = estimator.get_params()
    estimator._trained_loss = params.get("loss")
    estimator._trained_multi_class = params.get("multi_class")
    estimator.classes_ = np.asarray(parts["classes"])
    estimator.n_features_in_ = int(parts["n_features"])
    estimator._model = model
    if model.is_kernel:
        estimator.n_support_ = model.n_support
    else:
        estimator.coef_ = parts["coef"]
        estimator.intercept_ = parts["intercept"]
    if model.threshold is not None:
        estimator.threshold_ = model.threshold[0]
    _record_run(estimator, parts)
    return estimator


def _hyperparameters(model, defaults):
    """The estimator's parameters a model file records (its run's C, loss, kernel, scaling, seed, ...), so that
    a loaded estimator refitted (or cloned) trains as the file's run did; what the file does not say keeps the
    estimator's default."""
    ((kind, m),) = json.loads(bytes(model.to_bytes())).items()
    if kind == "Decision":
        m = m["model"]
    p = m["params"]
    n = m["training"]["n_samples"]
    out = {"random_state": p["seed"], "scale": str(p["scale"]).replace("_", ""), "gap": p["gap"]}
    regularization = p["regularization"]
    if isinstance(regularization, dict) and "c_sum" in regularization:
        out["C"] = regularization["c_sum"]
    elif m["lambda"] > 0 and n > 0:
        out["C"] = 1.0 / (m["lambda"] * n)
    kernel = p.get("kernel") or (p.get("approx") or {}).get("kernel")
    if kernel is not None and "kernel" in defaults:
        gamma = kernel["gamma"]
        out.update(kernel=kernel["kind"], gamma="scale" if gamma is None else gamma,
                   degree=kernel["degree"], coef0=kernel["coef0"])
    if p.get("approx") is not None:
        out.update(approximation=p["approx"]["method"], n_components=p["approx"]["components"])
    solver = p["solver"]
    if kind == "Multiclass":
        out["fit_intercept"] = bool(p["bias"])
        multi = {"dcd": "crammer_singer", "ssg": "crammer_singer", "ovr": "ovr", "ovo": "ovo",
                 "softmax": "multinomial"}.get(solver)
        if multi is not None:
            out["multi_class"] = multi
        out["loss"] = "logistic" if solver == "softmax" else p["loss"]
    else:
        out["fit_intercept"] = p["bias"] != "none"
        out["loss"] = p["loss"]
        # Newton is what solver="auto" chooses for two classes of a smooth loss on more rows than columns.
        if solver in ("dcd", "newton", "pegasos", "subgradient"):
            out["solver"] = "auto" if solver == "newton" else solver
    return {key: value for key, value in out.items() if key in defaults}

