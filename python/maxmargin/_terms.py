"""The library's messages in Python's terms: its advice and errors name the command's flags (``--scale
maxabs``, ``--inference ad3``), which each Python module maps to its own parameters."""

import contextlib


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
            e.args = (translated(e.args[0], flags),)
        raise
