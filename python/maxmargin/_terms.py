"""The library's messages in Python's terms: its advice and errors name the command's flags (``--scale
maxabs``, ``--inference ad3``), which each Python module maps to its own parameters."""

import contextlib
import re


def translated(message, flags):
    """``message`` with every flag of ``flags`` (pairs of the flag and its Python name) replaced."""
    for flag, parameter in flags:
        message = message.replace(flag, parameter)
    return message


@contextlib.contextmanager
def errors_in(flags):
    """Re-raises a ``ValueError`` whose message names a flag of ``flags`` with the Python names instead (the
    same exception, its type and traceback kept)."""
    try:
        yield
    except ValueError as e:
        if len(e.args) == 1 and isinstance(e.args[0], str):
            e.args = (rows_numbered_from_0(translated(e.args[0], flags)),)
        raise


# The extension names an array's row as a file's line (`at line 6 of <array>`, numbered from 1).
_ARRAY_LINE = re.compile(r"\bline (\d+) of <array>")


def rows_numbered_from_0(message):
    """``message`` with the extension's array lines (from 1) as rows of ``X`` (from 0)."""
    return _ARRAY_LINE.sub(lambda m: f"row {int(m.group(1)) - 1} of X", message)


# The extension names a graph as a file's line (`X (graphs numbered from 1):2:1: edges: ...`); Python numbers
# graphs from 0, as the models' own checks do.
_GRAPH_LINE = re.compile(r"X \(graphs numbered from 1\):(\d+):\d+: ")


def unitless(message):
    """A convergence warning without the library's absolute objective and gap: they are in its λ-form
    (``λ/2‖w‖² + mean loss``), where the estimators' ``objective_`` and ``duality_gap_`` are in the C-form
    (``½‖w‖² + C Σ loss``, times ``1/λ``), so the same run showed two sets of numbers. The relative gap is
    the same in both and is kept."""
    message = re.sub(
        r"its objective \S+ is certified within \S+ of the optimum \(relative gap (\S+), tolerance (\S+)\)",
        r"it is certified within a relative gap of \1 of the optimum (tolerance \2; objective_ and "
        r"duality_gap_ give both in the C-form)",
        message,
    )
    return re.sub(r"its objective \S+ has no certificate", "it has no certificate", message)


# The extension names a chain's tags as svm_hmm numbers them, from 1 (`every tag in <array> is the same (1)`);
# Python's labels are numbered from 0.
_ONE_TAG = re.compile(r"every tag in (<array>|X) is the same \((\d+)\)")


def tags_numbered_from_0(message):
    """``message`` with a chain's tag number (from 1, as svm_hmm files number tags) as Python's label (from
    0)."""
    return _ONE_TAG.sub(lambda m: f"every tag in {m.group(1)} is the same ({int(m.group(2)) - 1})", message)


def graphs_numbered_from_0(message):
    """``message`` with the extension's graph numbers (from 1, as lines) as ``graph i`` (from 0)."""
    return _GRAPH_LINE.sub(lambda m: f"graph {int(m.group(1)) - 1}: ", message)


@contextlib.contextmanager
def graph_errors_in(flags):
    """As :func:`errors_in`, with graphs numbered from 0 (:func:`graphs_numbered_from_0`)."""
    try:
        with errors_in(flags):
            yield
    except ValueError as e:
        if len(e.args) == 1 and isinstance(e.args[0], str):
            e.args = (graphs_numbered_from_0(e.args[0]),)
        raise
