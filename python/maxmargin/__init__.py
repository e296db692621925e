"""maxmargin: max-margin learning with certified solvers, from Python.

The estimators in :mod:`maxmargin.sklearn` follow scikit-learn's conventions (``fit``, ``predict``,
``decision_function``, ``score``, ``get_params``) and train with maxmargin's Rust solvers, each run ending with
a duality gap that certifies how far it is from the optimum (``duality_gap_``, ``converged_``).
"""

from ._core import __version__
from .sklearn import MaxMarginClassifier, MaxMarginSVC

__all__ = ["MaxMarginClassifier", "MaxMarginSVC", "__version__"]
