"""The worked solutions' code, as the graders read it.

Exercises are written once, in ``solutions/NN_*.ipynb``. ``tools/make_exercises.py`` copies
what the graders need into ``solution_code.json`` next to this module (``make exercises``
writes it, ``make test`` fails when it is stale): for each chapter, the notebook's imports
(not the graders'), the source of every function and class its code cells define, with the
``### BEGIN SOLUTION`` / ``### END SOLUTION`` markers kept (the lines between them are the
answer), and the answer of every prediction, by the name of the question its cell checks.

The graders use it to generate the mistakes they diagnose (:mod:`.mutants`): the answer's
lines, changed one way at a time, run like the learner's code. The tests use it to check
that no hint hands the answer over.

Taught in: every chapter's exercises (first in exercises/01_why_attention.ipynb)
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

__all__ = ["ChapterCode", "answer_lines", "chapter_code", "namespace"]

MARKER = re.compile(r"^[ \t]*### (?P<which>BEGIN|END) SOLUTION[ \t]*$")


@dataclass(frozen=True)
class ChapterCode:
    """One chapter's worked solutions.

    Attributes:
        chapter: its number.
        notebook: the solution notebook, relative to the repository.
        imports: the notebook's import statements, in order (not ``attnlab.grading``'s).
        definitions: name -> source of each function or class the notebook defines.
        answers: question name -> the lines of its predicted answer (``answer = 0.9**20``).
    """

    chapter: int
    notebook: str
    imports: tuple[str, ...]
    definitions: dict[str, str]
    answers: dict[str, str]


@functools.cache
def _document() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("solution_code.json").read_text("utf-8")
    return json.loads(text)


def chapter_code(chapter: int) -> ChapterCode | None:
    """The worked solutions of ``chapter``, or ``None`` if it has no solution notebook."""
    found = _document()["chapters"].get(str(chapter))
    if found is None:
        return None
    return ChapterCode(
        chapter=chapter,
        notebook=found["notebook"],
        imports=tuple(found["imports"]),
        definitions=dict(found["definitions"]),
        answers=dict(found["answers"]),
    )


def answer_lines(source: str) -> list[tuple[int, int]]:
    """The 1-based line ranges ``(first, last)`` strictly between each pair of markers."""
    ranges, start = [], None
    for number, line in enumerate(source.split("\n"), start=1):
        found = MARKER.match(line)
        if found is None:
            continue
        if found["which"] == "BEGIN":
            start = number
        elif start is not None:
            ranges.append((start + 1, number - 1))
            start = None
    return ranges


@functools.cache
def _base(chapter: int) -> dict[str, Any]:
    code = chapter_code(chapter)
    if code is None:
        raise KeyError(f"chapter {chapter} has no worked solutions")
    names: dict[str, Any] = {"__name__": f"attnlab.grading.worked.ch{chapter:02d}"}
    exec("import math\nimport numpy as np\nimport torch\nfrom torch import nn", names)
    for line in code.imports:
        exec(line, names)
    for name, source in code.definitions.items():
        exec(compile(source, f"<worked solution: {name}>", "exec"), names)
    return names


def namespace(chapter: int) -> dict[str, Any]:
    """A fresh copy of the namespace the chapter's solutions run in (imports, definitions).

    ``math``, ``np``, ``torch`` and ``nn`` are always there, so that code changed from one
    library to the other still runs. Each call gives a new dictionary: definitions executed
    in it replace the worked ones there only.
    """
    return dict(_base(chapter))
