"""``maxmargin.load``: a model file written by the command or by an estimator's ``save``, as the estimator
that predicts with it."""

import numpy as np

from . import _core

_STRUCTURED = ("multilabel", "chain", "graph")


def load(path):
    """The estimator of a model file: :class:`~maxmargin.MaxMarginClassifier` for a linear binary or
    multiclass model, :class:`~maxmargin.MaxMarginSVC` for a kernel (or approximated-kernel) one, a
    :mod:`maxmargin.learners` learner for a multilabel, chain or graph model, :class:`~maxmargin.Tagger` for a
    CoNLL tagger. It predicts as the command does; ``converged_``, ``duality_gap_`` and ``objective_`` come
    from the file, its hyperparameters are the estimator's defaults. Files from older versions of the
    command are read as the command reads them."""
    from .learners import load as load_structured
    from .sklearn import MaxMarginClassifier, MaxMarginSVC, _record_run
    from .tagger import Tagger

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
