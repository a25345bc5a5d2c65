"""attnlab.course: the one rule of what a chapter is, shared by the tools, the graders and the tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from attnlab import course
from attnlab.grading.registry import ChapterGraders

ROOT = Path(__file__).resolve().parents[1]


def _notebook(path: Path, first_line: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    cell = {"cell_type": "markdown", "id": "a", "metadata": {}, "source": [first_line]}
    nb = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb), encoding="utf-8")


def test_the_course_is_its_chapter_files() -> None:
    found = course.chapters(ROOT)
    names = sorted(p.name for p in (ROOT / "chapters").glob("*.ipynb"))
    assert [f"{c.stem}.ipynb" for c in found] == names
    assert [c.number for c in found] == list(range(1, len(found) + 1))
    for chapter in found:
        assert course.first_heading(chapter.notebook) == f"# {chapter.number}. {chapter.title}"
        assert chapter.has_exercises == chapter.solutions.exists()
        assert course.grading_number(chapter.grading_module) == chapter.number


@pytest.mark.parametrize(
    ("name", "first_line", "match"),
    [
        ("1_intro.ipynb", "# 1. Intro", "NN_slug"),
        ("01_intro.ipynb", "# 2. Intro", "first line must be '# 1. Title'"),
        ("01_intro.ipynb", "Intro", "first line must be '# 1. Title'"),
    ],
)
def test_a_chapter_that_breaks_the_rule_is_named(tmp_path, name, first_line, match) -> None:
    _notebook(tmp_path / "chapters" / name, first_line)
    with pytest.raises(course.ChapterError, match=match):
        course.chapters(tmp_path)


def test_numbers_from_file_and_module_names() -> None:
    assert course.number("solutions/03_qkv.ipynb") == 3
    assert course.grading_number("attnlab.grading.ch07") == 7
    assert course.grading_module(4) == "attnlab.grading.ch04"
    with pytest.raises(course.ChapterError, match="NN_slug"):
        course.number("qkv.ipynb")
    with pytest.raises(course.ChapterError, match="chNN"):
        course.grading_number("attnlab.grading.chapter7")


def test_the_grader_registry_reads_the_same_rule() -> None:
    assert ChapterGraders("attnlab.grading.ch05").chapter == 5
    with pytest.raises(ValueError, match="chNN"):
        ChapterGraders("attnlab.grading.seven")


def test_the_tools_read_the_same_rule(tmp_path) -> None:
    """make_toc refuses a chapter the rule refuses: it has no rule of its own."""
    _notebook(tmp_path / "chapters" / "01_intro.ipynb", "# 2. Intro")
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "make_toc.py"), "--check", "--root", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert "first line must be '# 1. Title'" in done.stderr
    tools = "".join((ROOT / "tools" / t).read_text() for t in ("make_toc.py", "make_exercises.py"))
    assert "from attnlab.course import" in tools and "from attnlab import course" in tools
    assert 're.compile(r"^(?P<number>' not in tools
