"""What a grader is made of: the cases it runs and the planted mistakes it knows.

Taught in: every chapter's exercises (first in exercises/02_similarity.ipynb)
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from array_api_compat import is_torch_array

__all__ = ["AnswerProblem", "Case", "Mistake", "Property", "fresh_copy", "returned"]


def fresh_copy(x: Any) -> Any:
    """A copy of an input that the function under test may edit without harm."""
    if is_torch_array(x):
        return x.detach().clone()
    if hasattr(x, "copy") and hasattr(x, "shape"):  # NumPy arrays
        return x.copy()
    return copy.deepcopy(x)


@dataclass(frozen=True)
class Case:
    """One input for a grader: arguments passed positionally (by name) and keyword options.

    Inputs are NumPy arrays or torch tensors (or plain values such as an int). The function
    under test always receives fresh copies, so an in-place edit can be seen; the reference
    decides the expected kind of output (NumPy in, NumPy out; tensors in, tensors out).
    """

    label: str
    inputs: Mapping[str, Any]
    options: Mapping[str, Any] = field(default_factory=dict)

    def arguments(self) -> tuple[Any, ...]:
        """Fresh copies of the inputs, in order."""
        return tuple(fresh_copy(a) for a in self.inputs.values())

    def describe(self) -> str:
        """``'"columns" (x: shape (4, 3), axis=0)'``."""
        parts = [_describe_input(n, a) for n, a in self.inputs.items()]
        parts += [f"{k}={v!r}" for k, v in self.options.items()]
        return f'"{self.label}" ({", ".join(parts)})'


def _describe_input(name: str, value: Any) -> str:
    """``'x: shape (4, 3)'``, ``"word='walking'"``, ``'vocab: a dict of 38 items'``."""
    if hasattr(value, "shape"):
        return f"{name}: shape {tuple(value.shape)}"
    text = repr(value)
    if len(text) > 40 and hasattr(value, "__len__"):
        return f"{name}: a {type(value).__name__} of {len(value)} items"
    return f"{name}={text}"


class AnswerProblem(Exception):
    """Raised by a grader's own code about the learner's answer, never by the learner's code.

    A grader that must do something with the learner's result before comparing it (unpack
    a module's ``(out, weights)``, backpropagate through ``out``) raises this when it
    cannot: the check reports ``status``, ``message`` and ``diagnosis`` as they are,
    instead of an exception that would look like the learner's.
    """

    def __init__(self, status: str, message: str, diagnosis: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.diagnosis = diagnosis


def returned(value: Any, names: tuple[str, ...], what: str) -> tuple[Any, ...]:
    """``value`` as the tuple ``names`` a grader's code expects back from the learner's.

    Raises:
        AnswerProblem: (wrong type) when ``value`` is not a tuple or list of that length.
    """
    from .status import WRONG_TYPE

    listed = ", ".join(names)
    if isinstance(value, (tuple, list)) and len(value) == len(names):
        return tuple(value)
    if value is None:
        got = "None"
        hint = f"{what} has no `return`, or returns None: return ({listed})"
    elif isinstance(value, (tuple, list)):
        got = f"a {type(value).__name__} of {len(value)} items"
        hint = f"{what} must return exactly ({listed})"
    else:
        shape = getattr(value, "shape", None)
        got = f"a {type(value).__name__}" + (
            f" of shape {tuple(shape)}" if shape is not None else ""
        )
        hint = f"{what} returned one value; return all {len(names)}: ({listed})"
    raise AnswerProblem(WRONG_TYPE, f"{what} returned {got}, expected ({listed})", hint)


@dataclass(frozen=True)
class Mistake:
    """A planted wrong implementation, called like the learner's, and what it means.

    ``needs``: a regular expression the learner's code must contain for the diagnosis to
    be named (a diagnosis that quotes an operator, such as `/` before `@`, is named only
    for code that has it); empty: any code.
    """

    diagnosis: str
    fn: Callable[..., Any]
    needs: str = ""


@dataclass(frozen=True)
class Property:
    """What every right output has (e.g. rows of weights summing to 1), and its diagnosis.

    ``violated(outputs, case)`` gets the learner's outputs on one case, as a dict from output
    name to NumPy array, and returns what is wrong when the property fails (a diagnosis
    that must hold whatever code produced the output), or ``None``.
    """

    violated: Callable[[Mapping[str, Any], Case], str | None]
