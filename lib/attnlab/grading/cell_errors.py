"""A "Hint:" line under the traceback of an error raised in a learner's own cell.

A prediction such as ``answer = 0.9 ^ 20`` fails in the learner's cell, before any check
runs, with Python's own message (``unsupported operand type(s) for ^``), which says what
failed but not why. :func:`explain_errors` asks IPython (Jupyter, Colab, nbval's kernel) to
show every such traceback as it always does and, for the errors :func:`explain` knows, to
print one line under it that names the likely cause. The traceback is never hidden or
changed, the cell still fails, and an error this module does not know looks exactly as
before.

A chapter enables it by calling ``explain_errors()`` in its exercise notebook's setup cell.

Taught in: exercises/01_why_attention.ipynb (every exercise notebook may use it)
"""

from __future__ import annotations

import re
import sys
from typing import Any

__all__ = ["explain", "explain_errors"]

_RULES: tuple[tuple[str, str], ...] = (
    (
        # Python: 0.9 ^ 20; torch: a float tensor ^ 20 ("bitwise_xor_cpu" not implemented)
        r"unsupported operand type\(s\) for \^=?: '(float|int)' and '(float|int)'"
        r"|bitwise_xor.* not implemented for '(Float|Double|Half|BFloat16)'",
        "in Python `^` is bitwise XOR (on whole numbers only), not a power: a power is "
        "written with `**`",
    ),
)

_HANDLED = (TypeError, RuntimeError)
"""The exception classes IPython hands to the handler (the others are shown as usual)."""


def explain(error: BaseException) -> str | None:
    """One sentence on the likely cause of ``error``, or ``None`` if it is not a known one."""
    text = str(error)
    for pattern, hint in _RULES:
        if re.search(pattern, text):
            return hint
    return None


def _show_with_hint(shell: Any, etype: type, value: BaseException, tb: Any, tb_offset=None):
    """IPython's custom exception handler: the usual traceback, then a hint if one is known."""
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
    try:
        hint = explain(value)
    except Exception:  # a hint is a courtesy: never let it replace the learner's error
        hint = None
    if hint is not None:
        print(f"Hint: {hint}", file=sys.stdout, flush=True)
    return None  # already shown


def explain_errors(shell: Any = None) -> None:
    """Install the hints in ``shell`` (the running IPython, if any; nothing happens outside
    IPython, or where another custom handler is already installed)."""
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return
        shell = get_ipython()
    if shell is None or not hasattr(shell, "set_custom_exc"):
        return
    installed = getattr(shell, "custom_exceptions", ())
    if installed and installed != _HANDLED:
        return  # somebody else's handler: leave it alone
    shell.set_custom_exc(_HANDLED, _show_with_hint)
