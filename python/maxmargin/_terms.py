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
    """Re-raises a ``ValueError`` whose message names a flag of ``flags`` with the Python names instead."""
    try:
        yield
    except ValueError as e:
        message = translated(str(e), flags)
        if message == str(e):
            raise
        raise ValueError(message) from None
