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
import importlib
import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from attnlab.course import chapters
from attnlab.grading import worked
from attnlab.grading.mutants import _clone as clone_tree  # a tree's fields only (see there)
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
            changed = clone_tree(tree)
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


# ------------------------------------------------------------------ plausible wrong answers
#
# The one-number slips above are mechanical. A learner's wrong prediction is more often a
# wrong idea: the scale applied where the question removes it, a variance for a standard
# deviation, d_model for the pairs, the keys counted from 1. Each numerical prediction of
# chapters 3 to 5 lists those here, each with the slip it stands for; the tolerance must be
# smaller than the gap to every one of them, and the question must refuse it.

_E16 = 1 / (1 + math.exp(-16))

PLAUSIBLE: dict[str, tuple[tuple[str, float], ...]] = {
    # 3.7: softmax(112, 96), key 1's weight, no division by sqrt(d_k) = 8
    "unscaled_weight": (
        ("divided by sqrt(d_k) after all: a difference of 2", 1 / (1 + math.exp(-2))),
        ("divided by d_k = 64, the variance: a difference of 0.25", 1 / (1 + math.exp(-0.25))),
        ("half the difference (8)", 1 / (1 + math.exp(-8))),
        ("divided by sqrt(d_k) twice: a difference of 0.25", 1 / (1 + math.exp(-0.25))),
        ("key 2's weight (sign of the difference flipped)", 1 / (1 + math.exp(16))),
        ("the ratio of the weights, e^16", math.exp(16)),
        ("the scores' share of their sum, 112 / 208", 112 / 208),
        ("equal weights", 0.5),
        ("the weight truncated to four decimals, 0.9999", 0.9999),
    ),
    # 3.8: the standard deviation of q·k for d_k = 64 unit-variance products
    "raw_spread": (
        ("the variance, 64", 64.0),
        ("after the division by sqrt(d_k)", 1.0),
        ("the scale factor 1/8", 0.125),
        ("a root taken twice, sqrt(8)", math.sqrt(8)),
        ("one product too few, sqrt(63)", math.sqrt(63)),
        ("one product too many, sqrt(65)", math.sqrt(65)),
        ("variances multiplied, 64²", 4096.0),
        ("d_k / 2", 32.0),
        ("2 sqrt(d_k): the spread of q plus that of k", 16.0),
    ),
    # 3.9: columns of a cross-attention weight matrix, 7 decoder and 12 encoder positions
    "cross_columns": (
        ("the queries", 7),
        ("queries + keys", 19),
        ("the entries, 7 x 12", 84),
        ("one key too few", 11),
        ("one key too many (a start token)", 13),
        ("d_k", 64),
        ("d_model", 512),
    ),
    # 4.4: BERT-base attention layer, D = 768, 12 heads, with biases
    "bert_parameters": (
        ("no biases", 4 * 768**2),
        ("the output projection's bias forgotten", 4 * 768**2 + 3 * 768),
        ("one bias vector", 4 * 768**2 + 768),
        ("biases of a head's size, 64", 4 * 768**2 + 4 * 64),
        ("no output projection", 3 * 768**2 + 3 * 768),
        ("matrices of every head, 12 x", 12 * (4 * 768**2 + 4 * 768)),
        ("one head's W_q, W_k, W_v", 3 * 768 * 64 + 768**2 + 4 * 768),
        ("in millions", 2.362368),
        ("rounded to thousands", 2_362_000),
        ("one off", 4 * 768**2 + 4 * 768 + 1),
    ),
    # 4.7: one head for two relations; 'dog' and 'cat' score the same, five others 0
    "blend_weight": (
        ("all the weight on 'dog'", 1.0),
        ("none on 'dog'", 0.0),
        ("the row shared by four keys", 0.25),
        ("shared by three keys", 1 / 3),
        ("uniform over the seven words", 1 / 7),
        ("'dog' scores twice as high as 'cat' (e^1 : 1)", 1 / (1 + math.exp(-1))),
    ),
    # 4.8: which key head 1 reads at query 5 (positions from 0)
    "which_key": (
        ("counted from 1", 1),
        ("the previous token, head 0's pattern", 4),
        ("the query's own position", 5),
        ("the next position", 6),
    ),
    # 5.3: PE(5)·PE(5) for D = 64 (sin² + cos² = 1 per pair, whatever the angle: degrees or
    # radians make no difference here)
    "self_dot": (
        ("D, one per feature", 64.0),
        ("one pair too few", 31.0),
        ("one pair too many", 33.0),
        ("the length, sqrt(32)", math.sqrt(32)),
        ("a unit vector", 1.0),
        ("orthogonal to itself", 0.0),
        ("half the pairs", 16.0),
        ("the position", 5.0),
        ("the position squared", 25.0),
    ),
}


def _chapter_questions(numbers: tuple[int, ...]):
    for param in QUESTIONS:
        if int(param.id[2:4]) in numbers:
            yield param.values[0]


def test_every_numerical_prediction_of_chapters_3_to_5_lists_its_plausible_wrong_answers():
    names = {q.name for q in _chapter_questions((3, 4, 5))}
    assert names == set(PLAUSIBLE)


@pytest.mark.parametrize(
    "question", [pytest.param(q, id=q.name) for q in _chapter_questions((3, 4, 5))]
)
def test_the_tolerance_is_smaller_than_the_gap_to_each_plausible_wrong_answer(question):
    right = float(question.answer)
    tolerance = question.atol + question.rtol * abs(right)
    problems = []
    for slip, value in PLAUSIBLE[question.name]:
        gap = abs(float(value) - right)
        if not tolerance < gap:
            problems.append(f"{slip}: {value!r} is {gap:.3g} away, tolerance {tolerance:.3g}")
        elif question.check(value).passed:
            problems.append(f"{slip}: {value!r} is accepted")
    assert not problems, "\n".join(problems)


def test_a_near_hint_about_rounding_reaches_roundings_only():
    """4.4's "close, but rounded" goes to the count rounded or cut, never to a near count
    that is a counting mistake (a bias vector short is no rounding); quoted counts are text."""
    from attnlab.grading.ch04 import BERT_PARAMETERS
    from attnlab.grading.questions import Question

    question = Question(
        "count", answer=2_362_368, atol=0.5, near=0.03, near_rounding=True, near_hint="rounded"
    )
    for rounded in (2_362_000, 2_360_000, 2_400_000, 2_362_300):
        assert question.check(rounded).diagnosis == "rounded", rounded
    for near in (2_361_600, 2_362_369 + 700):
        assert question.check(near).diagnosis != "rounded", near
    assert "without quotes" in BERT_PARAMETERS.check("2,362,368").diagnosis
    assert not BERT_PARAMETERS.check("2,362,368").passed
