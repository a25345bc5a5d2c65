"""Prediction tolerances are tighter than the gap to the nearest plausible wrong answer.

For every numerical prediction of every chapter, the worked answer's expression (from the
solution notebook: ``answer = 0.9**20``) is changed one number at a time, as a learner's
slip would change it: an integer one up or one down (an exponent, a count, a size), a
number doubled or halved, ten times too large or too small, a sign flipped. Each changed
value must be refused by the question, unless the question records it in ``equivalent``
with the reason it is the same answer at the precision asked (``exp(-15)`` for
``exp(-16)``, seven decimals down). 0.9¹⁹ is not 0.9²⁰.
"""

from __future__ import annotations

import ast
import copy
import importlib
import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from attnlab.course import chapters
from attnlab.grading import worked
from attnlab.grading.questions import Question

ROOT = Path(__file__).resolve().parents[2]


CHAPTERS = [c for c in chapters(ROOT) if c.has_exercises]


def _questions():
    for chapter in CHAPTERS:
        module = importlib.import_module(chapter.grading_module)
        code = worked.chapter_code(chapter.number)
        for exercise in module.GRADERS:
            if isinstance(exercise, Question) and exercise.kind == "number":
                yield pytest.param(
                    exercise,
                    code.answers[exercise.name],
                    id=f"ch{chapter.number:02d}-{exercise.name}",
                )


QUESTIONS = list(_questions())


def _value(tree: ast.Module) -> float:
    names = {"math": math, "np": np}
    exec(compile(tree, "<answer>", "exec"), names)
    return float(names["answer"])


def variants(answer: str) -> list[tuple[str, float]]:
    """``(changed statement, value)`` for every one-number change of the worked answer."""
    tree = ast.parse(answer)
    nodes = list(ast.walk(tree))
    found = []
    for index, node in enumerate(nodes):
        if not isinstance(node, ast.Constant) or isinstance(node.value, bool):
            continue
        if not isinstance(node.value, (int, float)):
            continue
        c = node.value
        changes = [c - 1, c + 1] if isinstance(c, int) else []
        changes += [c * 2, c / 2, c * 10, c / 10, -c]
        for new in changes:
            changed = copy.deepcopy(tree)
            target = list(ast.walk(changed))[index]
            target.value = new
            statement = next(s for s in changed.body if any(n is target for n in ast.walk(s)))
            try:
                value = _value(changed)
            except (ArithmeticError, ValueError):
                continue
            found.append((ast.unparse(statement), value))
    return found


def test_variants_change_one_number_at_a_time():
    changed = dict(variants("answer = 0.9**20"))
    assert math.isclose(changed["answer = 0.9 ** 19"], 0.9**19)
    assert math.isclose(changed["answer = 0.9 ** 21"], 0.9**21)
    assert "answer = 0.45 ** 20" in changed


def test_every_numerical_prediction_is_checked():
    assert len(QUESTIONS) >= 10


@pytest.mark.parametrize(("question", "answer"), QUESTIONS)
def test_each_slip_of_the_answer_is_refused_or_recorded(question, answer):
    right = question.answer
    equivalent = dict(question.equivalent)
    seen = set()
    problems = []
    for statement, value in variants(answer):
        seen.add(statement)
        if not math.isfinite(value) or math.isclose(value, right, rel_tol=1e-12):
            continue
        accepted = question.check(value).passed
        if accepted and statement not in equivalent:
            problems.append(f"accepted: {statement} (= {value:.6g}, answer {right:.6g})")
        if not accepted and statement in equivalent:
            problems.append(f"recorded as equivalent, but refused: {statement}")
    stale = sorted(set(equivalent) - seen)
    assert not stale, f"recorded, but no longer a variant: {stale}"
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("question", "answer"), QUESTIONS)
def test_the_worked_answer_itself_passes(question, answer):
    assert question.check(_value(ast.parse(answer))).passed
