"""Cells that use the learner's code outside a check, while an exercise is still a stub.

An exercise notebook must run top to bottom untouched: Jupyter's and Colab's Run All stop
at the first error. A check cell never raises (it reports "not attempted yet"), but a cell
that *uses* the learner's function, to show what it does, would stop on the stub's
``NotImplementedError``. Such a cell puts that code under :func:`skip_if_unfinished`::

    with skip_if_unfinished():
        shifted = pe[:-3] @ offset_matrix(3, 8).T
        print("M_3 PE(p) = PE(p + 3):", np.allclose(shifted, pe[3:]))

Once every exercise it uses is done, the block runs as if the ``with`` were not there.

A cell right after a check, which compares the learner's answer with something else, names
that exercise: ``with skip_if_unfinished(after="future_change"):``. While its latest check
has not passed, an error in the block is said in one line (the check above says what is
wrong) instead of a traceback; once it passes, errors are raised as usual. A block that
runs to its end on code whose check did not pass ends with one line that says so, for what
it printed may look right (an in-place edit of the input, say, makes a test print zeros).

Taught in: every chapter's exercises (first in exercises/04_multihead.ipynb)
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

from . import display
from .results import latest
from .status import NOT_ATTEMPTED, WRONG_VALUES

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
def skip_if_unfinished(after: str | None = None) -> Iterator[None]:
    """Run the block; if an exercise's stub raises in it, say so and skip the rest of it.

    Only a stub's ``NotImplementedError("Exercise N.k")`` is caught: any other error of the
    learner's code (or of the library) is raised as usual, so a real bug is never hidden;
    except, with ``after`` (the name of the exercise whose check the cell follows), while
    that exercise's latest check has not passed: the check already said what is wrong, and
    the error is said in one line.

    Prints, when a stub raised: ``○ not done yet: this cell uses exercise N.k, ...``; when
    the block failed after a check that did not pass: ``✗ this cell uses your <after>,
    whose check has not passed yet (...)``.
    """
    try:
        yield
    except NotImplementedError as err:
        number = stub_label(err)
        if number is None:
            if _not_passed(after):
                _say_not_passed(after, err)
                return
            raise
        print(
            f"{display.symbol(NOT_ATTEMPTED)} not done yet: this cell uses exercise "
            f"{number}, which still raises NotImplementedError; run the cell again once "
            "its check passes"
        )
    except Exception as err:
        if not _not_passed(after):
            raise
        _say_not_passed(after, err)
    else:
        if _not_passed(after) and latest(after).status != NOT_ATTEMPTED:
            # The block ran, on code its check rejected: what it printed may look right.
            print(
                f"{display.symbol(WRONG_VALUES)} the lines above come from your {after}, "
                "whose latest check did not pass: they show what your code does, not what "
                "the cell is meant to show; fix it with the check's message, then run the "
                "check and this cell again"
            )


def _not_passed(after: str | None) -> bool:
    if after is None:
        return False
    result = latest(after)
    return result is not None and not result.passed


def _say_not_passed(after: str | None, err: BaseException) -> None:
    text = str(err).strip().splitlines()
    first = display.clipped(text[0] if text else "", 120)
    print(
        f"{display.symbol(WRONG_VALUES)} this cell uses your {after}, whose check has not "
        f"passed yet ({type(err).__name__}{': ' + first if first else ''}): fix it with "
        "the check's message, then run this cell again"
    )
