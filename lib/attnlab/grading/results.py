"""What a check found (:class:`CheckResult`), the latest result per exercise, the score.

The only state of the grading package is here: :data:`_LATEST`, the latest result of each
exercise checked in this kernel, which :func:`summary` turns into a score table.
:func:`record` is called by every check; :func:`reset` forgets everything.

Taught in: every chapter's exercises (first in exercises/02_similarity.ipynb)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from . import display
from .status import GRADER_ERROR, NOT_CHECKED, PASSED

__all__ = [
    "CheckResult",
    "Summary",
    "graded",
    "latest",
    "make_result",
    "record",
    "reset",
    "summary",
]


@dataclass(frozen=True)
class CheckResult:
    """What a grader found, displayed by the check cell (plain text and a coloured box).

    Attributes:
        name: the exercise, e.g. ``"softmax"``.
        status: one of :mod:`attnlab.grading.status`: ``"passed"``, ``"not attempted"``,
            ``"raised an exception"``, ``"wrong type"``, ``"modified its input"``,
            ``"wrong shape"``, ``"NaN or inf"``, ``"wrong values"``, ``"wrong answer"``
            (or ``"grader error"`` if the grader itself failed).
        passed: ``status == "passed"``.
        message: one line saying what happened, on which case.
        diagnosis: the likely mistake (or a generic hint), or ``None``.
        max_error: largest absolute difference from the reference, when it was measured.
        diagnosed: ``True`` when ``diagnosis`` names a recognised mistake, ``False`` when it
            is the exercise's generic hint.
        explanation: why the right answer is right (prediction questions), or ``None``.
    """

    name: str
    status: str
    passed: bool
    message: str
    diagnosis: str | None = None
    max_error: float | None = None
    diagnosed: bool = False
    explanation: str | None = None

    @property
    def text(self) -> str:
        """The result as plain text: a symbol, the exercise, the message, the diagnosis."""
        lines = [f"{display.symbol(self.status)} {self.name}: {self.message}"]
        if self.diagnosis:
            label = "Diagnosis" if self.diagnosed else "Hint"
            lines.append(f"  {label}: {self.diagnosis}")
        if self.explanation:
            lines.append(f"  Why: {self.explanation}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        return display.result_box(self.text, self.status)


@dataclass(frozen=True)
class Summary:
    """A score table over a chapter's exercises (see :func:`summary`)."""

    title: str
    rows: tuple[tuple[str, str], ...]  # (exercise, status)

    @property
    def score(self) -> int:
        return sum(status == PASSED for _, status in self.rows)

    @property
    def total(self) -> int:
        return len(self.rows)

    @property
    def text(self) -> str:
        lines = [self.title]
        if not self.rows:
            lines.append("  (no exercise checked yet)")
        width = max((len(name) for name, _ in self.rows), default=0)
        for name, status in self.rows:
            lines.append(f"  {display.symbol(status)} {name:<{width}}  {status}")
        lines.append(f"Score: {self.score}/{self.total}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        return display.score_table(self.title, self.rows, self.score, self.total)


_LATEST: dict[str, CheckResult] = {}
"""The latest result per exercise, in the order the exercises were first checked."""


def record(result: CheckResult) -> CheckResult:
    """Remember ``result`` as the latest of its exercise, and return it."""
    _LATEST[result.name] = result
    return result


def make_result(
    name: str, status: str, message: str, diagnosis: str | None = None, **details: Any
) -> CheckResult:
    """A :class:`CheckResult` of exercise ``name``: passed exactly when ``status`` is passed.

    ``details``: the other fields (``max_error``, ``diagnosed``, ``explanation``).
    """
    return CheckResult(
        name=name,
        status=status,
        passed=status == PASSED,
        message=message,
        diagnosis=diagnosis,
        **details,
    )


def graded(name: str, grade: Callable[[Any], CheckResult], answer: Any) -> CheckResult:
    """``grade(answer)``, recorded for the score and returned. Never raises.

    Every exercise's ``check`` goes through here: a bug of the grader itself becomes a
    ``"grader error"`` result instead of crashing the learner's notebook.
    """
    try:
        result = grade(answer)
    except Exception as err:
        result = make_result(
            name,
            GRADER_ERROR,
            f"the grader itself failed ({type(err).__name__}: {err}); please report this",
        )
    return record(result)


def latest(name: str) -> CheckResult | None:
    """The latest recorded result of exercise ``name``, or ``None`` if never checked."""
    return _LATEST.get(name)


def summary(title: str = "Exercises", exercises: Iterable[str] | None = None) -> Summary:
    """The score table: every listed exercise with its latest status, and ``Score: k/n``.

    Args:
        title: first line of the table (e.g. ``"Chapter 2 exercises"``).
        exercises: the exercises to list, by name (``"softmax"``), in this order; those never
            checked count as ``"not checked"``. Default: those checked so far. Each
            chapter's ``summary()`` (:class:`~attnlab.grading.registry.ChapterGraders`)
            passes its whole list, so that the score counts the exercises not checked yet.

    Returns:
        A :class:`Summary`, displayed as a table by Jupyter.
    """
    names = list(_LATEST) if exercises is None else list(exercises)
    rows = tuple((n, _LATEST[n].status if n in _LATEST else NOT_CHECKED) for n in names)
    return Summary(title=title, rows=rows)


def reset() -> None:
    """Forget every recorded result (the next :func:`summary` starts from zero)."""
    _LATEST.clear()
