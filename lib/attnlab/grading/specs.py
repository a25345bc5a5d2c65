"""What a grader is made of: the cases it runs and the planted mistakes it knows.

Taught in: every chapter's exercises (first in exercises/02_similarity.ipynb)
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from array_api_compat import is_torch_array

__all__ = ["Case", "Mistake", "Property", "fresh_copy"]


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


@dataclass(frozen=True)
class Mistake:
    """A planted wrong implementation, called like the learner's, and what it means."""

    diagnosis: str
    fn: Callable[..., Any]


@dataclass(frozen=True)
class Property:
    """What every right output has (e.g. rows of weights summing to 1), and its diagnosis.

    ``violated(outputs, case)`` gets the learner's outputs on one case, as a dict from output
    name to NumPy array, and returns what is wrong when the property fails (a diagnosis
    that must hold whatever code produced the output), or ``None``.
    """

    violated: Callable[[Mapping[str, Any], Case], str | None]
