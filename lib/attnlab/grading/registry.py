"""A chapter's exercises, in order: declared once, scored together.

Each chapter's grading module starts with ``GRADERS = ChapterGraders(__name__)``: the
chapter number comes from the module's name (``attnlab.grading.ch03`` is chapter 3), so it
is typed nowhere else. ``GRADERS.add(...)`` registers each :class:`~.pipeline.Grader` or
:class:`~.questions.Question` in the order the notebook meets them, and
``summary = GRADERS.summary`` gives the notebook its score table.

Taught in: every chapter's exercises (first in exercises/02_similarity.ipynb)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Protocol, TypeVar

from ..course import grading_number
from .results import CheckResult, Summary
from .results import summary as _summary

__all__ = ["ChapterGraders", "Exercise"]


class Exercise(Protocol):
    """What a chapter registers: a name and a ``check`` that returns a result."""

    @property
    def name(self) -> str: ...

    def check(self, answer: object, /) -> CheckResult: ...


E = TypeVar("E", bound=Exercise)


class ChapterGraders:
    """The exercises of one chapter, in the order of its notebook.

    Args:
        module: the grading module's ``__name__``, ``"attnlab.grading.chNN"``.
        mutants_reviewed: every generated mistake of every exercise (:mod:`.mutants`) has
            been looked at: it fails with a diagnosis, or is recorded as equivalent in its
            grader's ``equivalent`` (tests/grading/test_mutants.py holds the chapter to it).

    Raises:
        ValueError: if the module is not named ``chNN``.
    """

    def __init__(self, module: str, *, mutants_reviewed: bool = False) -> None:
        self.chapter = grading_number(module)  # ValueError unless named chNN
        self.module = module
        self.mutants_reviewed = mutants_reviewed
        self._exercises: dict[str, Exercise] = {}

    @property
    def title(self) -> str:
        """``"Chapter 3 exercises"``: the first line of the score table."""
        return f"Chapter {self.chapter} exercises"

    def add(self, exercise: E) -> E:
        """Register ``exercise`` (after those added before) and return it.

        A :class:`~.pipeline.Grader` (also a module exercise's) comes back as a copy that
        knows its chapter: use the returned object.

        Raises:
            ValueError: if the chapter already has an exercise of that name.
        """
        if exercise.name in self._exercises:
            raise ValueError(f"chapter {self.chapter} already has an exercise {exercise.name!r}")
        exercise = self._numbered(exercise)
        self._exercises[exercise.name] = exercise
        return exercise

    def _numbered(self, exercise: E) -> E:
        """``exercise`` with its grader told the chapter (whose worked solution it mutates)."""
        grader = getattr(exercise, "values", exercise)  # a ModuleExercise's grader
        if not dataclasses.is_dataclass(grader) or not hasattr(grader, "chapter"):
            return exercise
        numbered = dataclasses.replace(grader, chapter=self.chapter)
        if grader is exercise:
            return numbered  # type: ignore[return-value]
        return dataclasses.replace(exercise, values=numbered)  # type: ignore[type-var]

    @property
    def names(self) -> tuple[str, ...]:
        """The exercises' names, in order."""
        return tuple(self._exercises)

    def __getitem__(self, name: str) -> Exercise:
        return self._exercises[name]

    def __iter__(self) -> Iterator[Exercise]:
        return iter(self._exercises.values())

    def __len__(self) -> int:
        return len(self._exercises)

    def summary(self) -> Summary:
        """The chapter's score table: every exercise, checked or not, with its latest status."""
        return _summary(self.title, self.names)

    def __repr__(self) -> str:
        return f"ChapterGraders(chapter={self.chapter}, exercises={list(self.names)})"
