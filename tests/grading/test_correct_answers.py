"""Every right answer of every chapter passes its grader: one test, driven by each chapter's table.

Each ``tests/grading/test_chNN.py`` lists its chapter's right answers as ``CORRECT_ANSWERS``,
``(exercise name, answer)`` pairs (several answers per exercise, written differently), and
optionally ``MAX_ERROR``: the largest error a right answer may show, one number for the
chapter or one per exercise. The grader is the chapter's ``check_<name>``.
"""

from __future__ import annotations

import importlib
import warnings
from pathlib import Path

import pytest

from attnlab.course import chapters

ROOT = Path(__file__).resolve().parents[2]


def _tables():
    for chapter in chapters(ROOT):
        try:
            tests = importlib.import_module(f"test_ch{chapter.number:02d}")
        except ModuleNotFoundError:
            continue
        if not hasattr(tests, "CORRECT_ANSWERS"):
            continue
        yield chapter, tests


CASES = [
    pytest.param(chapter, tests, name, answer, id=f"ch{chapter.number:02d}-{name}-{i}")
    for chapter, tests in _tables()
    for i, (name, answer) in enumerate(tests.CORRECT_ANSWERS)
]


def test_every_chapter_with_exercises_has_a_table() -> None:
    with_tables = {chapter.number for chapter, _ in _tables()}
    assert with_tables >= set(range(2, 9)), sorted(with_tables)


@pytest.mark.parametrize(("chapter", "tests", "name", "answer"), CASES)
def test_correct_answers_pass(chapter, tests, name, answer) -> None:
    check = getattr(importlib.import_module(chapter.grading_module), f"check_{name}")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a right answer must not warn either
        result = check(answer)
    assert result.passed, result.text
    assert result.status == "passed"
    assert result.diagnosis is None, result.text
    limit = getattr(tests, "MAX_ERROR", None)
    limit = limit.get(name) if isinstance(limit, dict) else limit
    if limit is not None:
        assert result.max_error is not None and result.max_error < limit, result.max_error
