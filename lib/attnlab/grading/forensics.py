"""Running the learner's code, and reading what went wrong from its traceback.

A check calls the learner's function through :func:`call_quietly` (fresh copies of the
inputs, NumPy's floating-point warnings silenced: the grader reports overflow itself). When
the call raises, the traceback says where: :func:`where` finds the innermost line of the
learner's own code, :func:`raised_directly` tells a stub's ``NotImplementedError`` from one
raised by another unfinished exercise it calls (:func:`unfinished_callee`), and
:func:`error_hints` turns NumPy's messages (broadcasting, matrix products) into advice.

Taught in: every chapter's exercises (first in exercises/02_similarity.ipynb)
"""

from __future__ import annotations

import contextlib
import re
import sysconfig
import traceback
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np

from .specs import Case

__all__ = [
    "call_quietly",
    "error_hints",
    "quiet",
    "raised_directly",
    "unfinished_callee",
    "where",
]


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """No NumPy floating-point warnings: overflow and 0/0 are reported by the grader."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def call_quietly(fn: Callable[..., Any], case: Case) -> tuple[Any, tuple[Any, ...]]:
    """``fn`` on fresh copies of the case's inputs: ``(returned value, the arguments)``."""
    args = case.arguments()
    with quiet():
        return fn(*args, **case.options), args


def _broadcast_hint(message: str) -> str:
    """The hint for a broadcasting error, naming the shapes NumPy's message gives."""
    shapes: list[str] = []
    for found in re.findall(r"\(([\d,\s]*)\)", message):
        shape = str(tuple(int(n) for n in found.replace(",", " ").split()))
        if shape not in shapes:
            shapes.append(shape)
    which = (
        f"the shapes {', '.join(shapes[:-1])} and {shapes[-1]} do not broadcast together"
        if len(shapes) >= 2
        else "the shapes did not line up"
    )
    return (
        f"{which}: check each reduction's `axis` and `keepdims` (with keepdims=True a sum or "
        "max keeps the reduced axis with size 1, so that it lines up with its input)"
    )


def _fixed(hint: str) -> Callable[[str], str]:
    return lambda message: hint


_ERROR_HINTS: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("broadcast", _broadcast_hint),
    (
        "not aligned",
        _fixed(
            "np.dot and @ multiply matrices; for vectors stored in rows, multiply elementwise "
            "and sum over the last axis"
        ),
    ),
    (
        "mismatch in its core dimension",
        _fixed("@ multiplies matrices: check the shapes (and transpose the right operand)"),
    ),
)
"""``(substring, hint)``: an exception whose message contains the substring gets
``hint(message)``, after the grader's own hints."""


def error_hints(message: str) -> list[str]:
    """The general hints for an exception message (broadcasting, matrix products)."""
    return [hint(message) for s, hint in _ERROR_HINTS if s in message]


_LIBRARY_DIRS = tuple(
    str(p)
    for p in {
        Path(__file__).resolve().parents[1],  # the attnlab package
        Path(sysconfig.get_paths()["stdlib"]).resolve(),
        Path(sysconfig.get_paths()["purelib"]).resolve(),
        Path(sysconfig.get_paths()["platlib"]).resolve(),
    }
)


def _is_library(filename: str) -> bool:
    """Is ``filename`` attnlab's, the standard library's or an installed package's?"""
    path = str(Path(filename).resolve()) if filename else ""
    return path.startswith(_LIBRARY_DIRS) or "-packages" in path


def where(err: BaseException) -> str | None:
    """``'softmax, line 3: return e / e.sum()'``: the innermost frame in the learner's code."""
    for frame in reversed(traceback.extract_tb(err.__traceback__)):
        if _is_library(frame.filename):
            continue
        line = f": {frame.line.strip()}" if frame.line else ""
        return f"{frame.name}, line {frame.lineno}{line}"
    return None


def _called_frames(err: BaseException) -> list[FrameType]:
    """The traceback's frames from the function under test inwards.

    The first is the function the grader called (the frame after :func:`call_quietly`), the
    last the one that raised.
    """
    frames = [frame for frame, _ in traceback.walk_tb(err.__traceback__)]
    for i, frame in enumerate(frames):
        if frame.f_code is call_quietly.__code__:
            return frames[i + 1 :]
    return frames


def raised_directly(err: BaseException) -> bool:
    """Was ``err`` raised in the function under test's own frame (e.g. by its stub)?"""
    return len(_called_frames(err)) <= 1


def unfinished_callee(err: BaseException) -> str | None:
    """The learner's function, called by the one under test, that raised ``err``.

    ``None`` when ``err`` was raised directly or inside a library (an ordinary exception).
    """
    called = [f for f in _called_frames(err)[1:] if not _is_library(f.f_code.co_filename)]
    return called[-1].f_code.co_name if called else None
