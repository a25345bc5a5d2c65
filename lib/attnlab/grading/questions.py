"""Prediction questions: the learner predicts a value before running the code, then checks it.

A question is answered by one assignment in the check cell::

    # Predict: the weight of "he" on itself when τ → 0 (a number).
    answer = 1.0
    check_he_limit(answer)

The answer is a number (compared with a tolerance), ``True``/``False``, or one of a fixed
set of words (``choices``, compared case-insensitively). Likely wrong answers carry their
own diagnosis; a right answer shows why it is right. Like a :class:`~.pipeline.Grader`, a
question never raises and records its result for the chapter's score.

Taught in: every chapter's exercises (first in exercises/02_similarity.ipynb)
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
from array_api_compat import is_torch_array

from .results import CheckResult, graded, make_result
from .status import NOT_ATTEMPTED, PASSED, WRONG_ANSWER, WRONG_TYPE

__all__ = ["Question"]


def _is_number(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_))


def _kind(x: Any) -> str:
    if isinstance(x, (bool, np.bool_)):
        return "bool"
    if _is_number(x):
        return "number"
    if isinstance(x, str):
        return "choice"
    raise TypeError(f"an answer is a number, a bool or a str, got {type(x).__name__}")


def _fmt(x: Any) -> str:
    if isinstance(x, str):
        return repr(x)
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    return f"{float(x):.4g}"


@dataclass(frozen=True)
class Question:
    """A question whose answer is a value the code will confirm.

    Args:
        name: the exercise's name, used in messages and the score table.
        answer: the right answer: a number, a bool, or a str among ``choices``.
        explanation: why it is right, shown with a right answer.
        wrong: ``(value, diagnosis)`` pairs: likely wrong answers and what each reveals.
        hint: shown for a wrong answer not in ``wrong`` (never the answer itself).
        atol, rtol: the tolerance of a numerical answer: right when
            ``|given - answer| <= atol + rtol * |answer|``.
        choices: the allowed words of a str answer.
        equivalent: ``(expression, reason)`` for each variant of the worked answer's
            expression (one number changed, see tests/grading/test_questions.py) that the
            tolerance accepts, with the reason that is right (it differs from the answer
            below the precision the question asks for); every other variant is refused.

    Raises:
        ValueError: if the question is inconsistent (a str answer outside ``choices``, a
            ``wrong`` value of another kind than the answer, or one the tolerance accepts,
            or a tolerance as wide as half the gap to a listed wrong answer).
    """

    name: str
    answer: float | int | bool | str
    explanation: str = ""
    wrong: tuple[tuple[Any, str], ...] = ()
    hint: str = ""
    atol: float = 0.0
    rtol: float = 1e-9
    choices: tuple[str, ...] | None = None
    equivalent: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        kind = _kind(self.answer)
        if kind == "choice":
            if not self.choices:
                raise ValueError(f"question {self.name!r}: a str answer needs `choices`")
            if self._normal(self.answer) not in {self._normal(c) for c in self.choices}:
                raise ValueError(
                    f"question {self.name!r}: the answer {self.answer!r} is not among the "
                    f"choices {self.choices}"
                )
        for value, _ in self.wrong:
            if _kind(value) != kind:
                raise ValueError(
                    f"question {self.name!r}: wrong answer {value!r} is not a {kind} "
                    f"like the answer {self.answer!r}"
                )
            if self._matches(value, self.answer):
                raise ValueError(f"question {self.name!r}: wrong answer {value!r} counts as right")
            if kind == "number":
                gap = abs(float(value) - float(self.answer))
                if self.atol + self.rtol * abs(float(self.answer)) >= gap / 2:
                    raise ValueError(
                        f"question {self.name!r}: the tolerance is not below half the gap "
                        f"({gap:.3g}) to the wrong answer {value!r}"
                    )

    @property
    def kind(self) -> str:
        """``"number"``, ``"bool"`` or ``"choice"``."""
        return _kind(self.answer)

    @staticmethod
    def _normal(word: str) -> str:
        return " ".join(word.strip().lower().split())

    def _matches(self, given: Any, target: Any) -> bool:
        kind = _kind(target)
        if kind == "number":
            tolerance = self.atol + self.rtol * abs(float(target))
            return abs(float(given) - float(target)) <= tolerance
        if kind == "bool":
            return bool(given) == bool(target)
        return self._normal(given) == self._normal(target)

    def _result(self, status: str, message: str, diagnosis: str | None = None, **kw: Any):
        return make_result(self.name, status, message, diagnosis, **kw)

    def check(self, answer: Any) -> CheckResult:
        """Check ``answer``, record the result for the score, and return it. Never raises."""
        return graded(self.name, self._check, answer)

    def _as_value(self, given: Any) -> tuple[Any, str | None, str | None]:
        """``given`` as a value of the question's kind, or ``(None, problem, hint)``."""
        if is_torch_array(given) or isinstance(given, np.ndarray):
            if tuple(given.shape) != ():
                return None, f"got an array of shape {tuple(given.shape)}", "answer one value"
            given = given.item()
        if isinstance(given, np.generic):
            given = given.item()
        kind = self.kind
        if kind == "number":
            if _is_number(given):
                if not math.isfinite(float(given)):
                    return None, f"got {given}", "the answer is a finite number"
                return given, None, None
            hint = "write the number without quotes" if isinstance(given, str) else None
            return None, f"expected a number, got {given!r}", hint
        if kind == "bool":
            if isinstance(given, bool):
                return given, None, None
            hint = "write True or False, without quotes" if isinstance(given, str) else None
            return None, f"expected True or False, got {given!r}", hint
        if not isinstance(given, str):
            return None, f"expected a word, got {given!r}", self._choices_text()
        if self._normal(given) not in {self._normal(c) for c in self.choices or ()}:
            return None, f"{given!r} is not one of the choices", self._choices_text()
        return given, None, None

    def _choices_text(self) -> str:
        return "answer one of: " + ", ".join(repr(c) for c in self.choices or ())

    def _check(self, given: Any) -> CheckResult:
        if given is Ellipsis or given is NotImplemented:
            return self._result(
                NOT_ATTEMPTED,
                "not attempted yet: replace the `...` with your prediction, then run this cell",
            )
        if given is None:
            return self._result(
                WRONG_TYPE, "the answer is None", "assign your prediction: answer = ..."
            )
        value, problem, hint = self._as_value(given)
        if problem is not None:
            return self._result(WRONG_TYPE, problem, hint, diagnosed=hint is not None)
        if self._matches(value, self.answer):
            return self._result(
                PASSED, f"right: {_fmt(value)}", explanation=self.explanation or None
            )
        for wrong, diagnosis in self.wrong:
            if self._matches(value, wrong):
                return self._result(
                    WRONG_ANSWER, f"{_fmt(value)} is not right", diagnosis, diagnosed=True
                )
        return self._result(
            WRONG_ANSWER,
            f"{_fmt(value)} is not right",
            self.hint or "not this: the hints under the question lead to the answer step by step",
        )
