"""Cells that use the learner's code outside a check, while an exercise is still a stub.

An exercise notebook must run top to bottom untouched: Jupyter's and Colab's Run All stop
at the first error. A check cell never raises (it reports "not attempted yet"), but a cell
that *uses* the learner's function, to show what it does, would stop on the stub's
``NotImplementedError``. Such a cell puts that code under :func:`skip_if_unfinished`::

    with skip_if_unfinished():
        shifted = pe[:-3] @ offset_matrix(3, 8).T
        print("M_3 PE(p) = PE(p + 3):", np.allclose(shifted, pe[3:]))

Once every exercise it uses is done, the block runs as if the ``with`` were not there.

Taught in: every chapter's exercises (first in exercises/04_multihead.ipynb)
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

from . import display
from .status import NOT_ATTEMPTED

__all__ = ["skip_if_unfinished", "stub_label"]

STUB_LABEL = re.compile(r"Exercise (?P<number>\d+\.\d+)")
"""The message of a stub's ``NotImplementedError`` (``tools/make_exercises.py`` writes it)."""


def stub_label(err: BaseException) -> str | None:
    """``"5.2"`` for ``NotImplementedError("Exercise 5.2")``, a stub's error; else ``None``."""
    if not isinstance(err, NotImplementedError) or len(err.args) != 1:
        return None
    found = STUB_LABEL.fullmatch(str(err.args[0]))
    return found["number"] if found else None


@contextlib.contextmanager
def skip_if_unfinished() -> Iterator[None]:
    """Run the block; if an exercise's stub raises in it, say so and skip the rest of it.

    Only a stub's ``NotImplementedError("Exercise N.k")`` is caught: any other error of the
    learner's code (or of the library) is raised as usual, so a real bug is never hidden.

    Prints, when a stub raised: ``○ not done yet: this cell uses exercise N.k, ...``.
    """
    try:
        yield
    except NotImplementedError as err:
        number = stub_label(err)
        if number is None:
            raise
        print(
            f"{display.symbol(NOT_ATTEMPTED)} not done yet: this cell uses exercise "
            f"{number}, which still raises NotImplementedError; run the cell again once "
            "its check passes"
        )
