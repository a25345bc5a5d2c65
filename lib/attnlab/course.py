"""What a chapter is: its files, declared once.

A chapter of the course is data, declared by its files and by nothing else:

* ``chapters/NN_slug.ipynb``: the file name gives the chapter's number ``NN`` and its slug;
  the notebook's first line, ``# N. Title``, gives its title (N must be the file's number).
* ``solutions/NN_slug.ipynb`` (optional): its exercises, authored with their answers;
  ``exercises/NN_slug.ipynb`` is generated from it (``tools/make_exercises.py``).
* ``attnlab.grading.chNN``: its graders, when it has exercises.

Everything else follows from these: the exercise labels ("Exercise N.k"), the learners'
banner, the score title ("Chapter N exercises"), the table of contents
(``tools/make_toc.py``) and the tests that run over every chapter. They all read the rule
from here: :func:`chapters` lists the course, :func:`number` reads a chapter's number from
one of its notebooks' names, :func:`grading_number` from its grading module's name.

Taught in: every chapter (the course's table of contents)
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Chapter",
    "ChapterError",
    "chapters",
    "first_heading",
    "grading_module",
    "grading_number",
    "number",
]

FILE_NAME = re.compile(r"^(?P<number>\d{2})_(?P<slug>[a-z0-9_]+)\.ipynb$")
"""A chapter's notebooks (chapter, solutions, exercises): ``NN_slug.ipynb``."""
TITLE = re.compile(r"^#\s+(?P<number>\d+)\.\s+(?P<title>.+?)\s*$")
"""A chapter notebook's first line: ``# N. Title``."""
GRADING_MODULE = re.compile(r"(?:^|\.)ch(?P<number>\d{2})$")
"""A chapter's grading module: ``attnlab.grading.chNN``."""


class ChapterError(ValueError):
    """A chapter file or module whose name or title does not follow the rule above."""


@dataclass(frozen=True)
class Chapter:
    """One chapter of the course, as its files declare it."""

    number: int
    slug: str
    title: str
    root: Path

    @property
    def stem(self) -> str:
        """``"02_similarity"``: the file name shared by the chapter, exercises and solutions."""
        return f"{self.number:02d}_{self.slug}"

    @property
    def notebook(self) -> Path:
        return self.root / "chapters" / f"{self.stem}.ipynb"

    @property
    def solutions(self) -> Path:
        return self.root / "solutions" / f"{self.stem}.ipynb"

    @property
    def exercises(self) -> Path:
        return self.root / "exercises" / f"{self.stem}.ipynb"

    @property
    def has_exercises(self) -> bool:
        return self.solutions.exists()

    @property
    def grading_module(self) -> str:
        """The module with this chapter's graders: ``"attnlab.grading.ch02"``."""
        return grading_module(self.number)


def number(name: str | Path) -> int:
    """The chapter number of a chapter's notebook, from its name: ``"02_similarity.ipynb"`` -> 2.

    Raises:
        ChapterError: a name that is not ``NN_slug.ipynb``.
    """
    match = FILE_NAME.match(Path(name).name)
    if match is None:
        raise ChapterError(f"{Path(name).name}: a chapter's notebook is named NN_slug.ipynb")
    return int(match["number"])


def grading_module(chapter: int) -> str:
    """The name of chapter ``chapter``'s grading module: ``3`` -> ``"attnlab.grading.ch03"``."""
    return f"attnlab.grading.ch{chapter:02d}"


def grading_number(module: str) -> int:
    """The chapter number of a grading module, from its name: ``"attnlab.grading.ch03"`` -> 3.

    Raises:
        ChapterError: a module not named ``chNN``.
    """
    match = GRADING_MODULE.search(module)
    if match is None:
        raise ChapterError(
            f"a chapter's graders live in a module named chNN (e.g. attnlab.grading.ch03), "
            f"got {module!r}"
        )
    return int(match["number"])


def first_heading(path: Path) -> str:
    """The first line of a notebook's first Markdown cell."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            source = "".join(cell["source"]).strip()
            return source.split("\n", 1)[0]
    return ""


def chapters(root: Path) -> list[Chapter]:
    """Every chapter of the course whose repository is ``root``, by number.

    Raises:
        ChapterError: a chapter notebook's name is not ``NN_slug.ipynb``, its first line is
            not ``# N. Title`` with the file's number, or two chapters share a number.
    """
    found: dict[int, Chapter] = {}
    for path in sorted((Path(root) / "chapters").glob("*.ipynb")):
        match = FILE_NAME.match(path.name)
        if match is None:
            raise ChapterError(f"{path.name}: a chapter notebook is named NN_slug.ipynb")
        n = int(match["number"])
        heading = first_heading(path)
        title = TITLE.match(heading)
        if title is None or int(title["number"]) != n:
            raise ChapterError(
                f"{path.name}: the first line must be '# {n}. Title', found {heading!r}"
            )
        if n in found:
            raise ChapterError(f"{path.name}: chapter {n} is also {found[n].stem}")
        found[n] = Chapter(n, match["slug"], title["title"], Path(root))
    return [found[n] for n in sorted(found)]
