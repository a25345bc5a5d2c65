"""The grading machinery, on graders made up for the tests: generic, stateless, never raising.

Chapter graders and their planted bugs are tested next to each other (``test_chNN.py``).
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
import torch

from attnlab import grading
from attnlab.grading import Case, Grader, Mistake

# ------------------------------------------------------------------ the machinery is generic


def test_a_new_grader_takes_a_few_lines():
    rng = np.random.default_rng(0)
    square = Grader(
        name="square",
        signature="square(x) -> x²",
        reference=lambda x: x * x,
        cases=(Case("a vector", {"x": rng.standard_normal(4)}),),
        mistakes=(Mistake("you doubled x; square it", lambda x: 2 * x),),
    )
    assert square.check(lambda x: x**2).passed
    result = square.check(lambda x: x + x)
    assert (result.status, result.diagnosis) == ("wrong values", "you doubled x; square it")
    assert grading.summary().rows == (("square", "wrong values"),)


def test_a_broken_grader_reports_instead_of_raising():
    broken = Grader(
        name="broken",
        signature="broken(x)",
        reference=lambda x: 1 / 0,
        cases=(Case("a vector", {"x": np.ones(3)}),),
    )
    result = broken.check(lambda x: x)
    assert result.status == "grader error"
    assert "ZeroDivisionError" in result.message


def test_a_grader_of_torch_functions_expects_tensors_back():
    x = torch.linspace(-2.0, 2.0, 6).reshape(2, 3)
    x_before = x.clone()
    relu = Grader(
        name="relu",
        signature="relu(x) -> tensor of the shape of x",
        reference=torch.relu,
        cases=(Case("a matrix", {"x": x}),),
        mistakes=(Mistake("you returned max(x, 1); the floor is 0", lambda x: x.clamp(min=1)),),
    )
    assert relu.check(lambda x: x.clamp(min=0)).passed
    numpy_result = relu.check(lambda x: np.maximum(x.numpy(), 0))
    assert numpy_result.status == "wrong type"
    assert "expected a torch.Tensor" in numpy_result.message
    assert (
        relu.check(lambda x: x.clamp(min=1)).diagnosis == "you returned max(x, 1); the floor is 0"
    )
    assert relu.check(lambda x: x.clamp_(min=0)).status == "modified its input"
    torch.testing.assert_close(relu.cases[0].inputs["x"], x_before, rtol=0, atol=0)


def test_a_grader_of_boolean_outputs_reports_values_and_dtype():
    positive = Grader(
        name="positive",
        signature="positive(x) -> boolean mask",
        reference=lambda x: x > 0,
        cases=(Case("a vector", {"x": np.arange(-2.0, 3.0)}),),
        mistakes=(Mistake("use > 0: zero is not positive", lambda x: x >= 0),),
    )
    assert positive.check(lambda x: np.greater(x, 0)).passed
    result = positive.check(lambda x: x >= 0)
    assert result.diagnosis == "use > 0: zero is not positive"
    assert "at index (2,): expected False, got True" in result.message
    result = positive.check(lambda x: (x > 0).astype(np.int64))
    assert result.status == "wrong type"
    assert "1s and 0s as int64 numbers" in result.diagnosis and "dtype bool" in result.diagnosis
    result = positive.check(lambda x: np.where(x > 0, 0.0, -np.inf))
    assert "additive" in result.diagnosis, result.text
    result = dataclasses.replace(positive, signature="positive(x) -> booleans").check(
        lambda x: (x > 0).astype(np.int64)
    )
    assert (result.status, result.diagnosis) == ("wrong type", "return bool values")


# ------------------------------------------------------------------ diagnoses and results


def _square_grader(*mistakes):
    return Grader(
        name="square",
        signature="square(x) -> x²",
        reference=lambda x: x * x,
        cases=(Case("two", {"x": np.array([2.0])}), Case("three", {"x": np.array([3.0])})),
        mistakes=mistakes,
    )


def test_a_mistake_that_does_not_reproduce_the_failing_case_is_not_named():
    # x + 1 fails on "two" (3, not 4); the planted "returned 4" matches it only on "three".
    grader = _square_grader(Mistake("you returned 4", lambda x: 0 * x + 4.0))
    result = grader.check(lambda x: x + 1)
    assert 'on case "two"' in result.message
    assert not result.diagnosed, result.text


def test_a_mistake_contradicted_by_a_passing_case_is_not_named():
    # x + x is right on "two" and gives 6 on "three": a mistake giving 6 on "three" but
    # 0 on "two" reproduces the failure, yet the learner's right answer on "two" rules it out.
    wrong_on_two = Mistake("you returned 6 or 0", lambda x: np.where(x == 3.0, 6.0, 0.0))
    doubled = Mistake("you doubled x; square it", lambda x: 2 * x)
    assert not _square_grader(wrong_on_two).check(lambda x: x + x).diagnosed
    result = _square_grader(wrong_on_two, doubled).check(lambda x: x + x)
    assert result.diagnosis == "you doubled x; square it"


def test_reset_clears_the_summary():
    Grader("id", "id(x)", lambda x: x, (Case("a vector", {"x": np.ones(2)}),)).check(lambda x: x)
    grading.reset()
    table = grading.summary()
    assert (table.score, table.total) == (0, 0)
    assert "no exercise checked yet" in table.text


# ------------------------------------------------------------------ no hidden state


def test_a_grader_holds_no_mutable_state():
    grader = _square_grader(Mistake("you doubled x; square it", lambda x: 2 * x))
    before = dataclasses.astuple(grader)
    for _ in range(2):  # the same diagnosis twice: nothing was cached in between
        assert grader.check(lambda x: x + x).diagnosis == "you doubled x; square it"
    assert dataclasses.astuple(grader) == before
    mutable = [
        f.name
        for f in dataclasses.fields(grader)
        if isinstance(getattr(grader, f.name), (dict, list, set))
    ]
    assert not mutable, f"mutable fields in a frozen Grader: {mutable}"
    with pytest.raises(dataclasses.FrozenInstanceError):
        grader.name = "other"  # type: ignore[misc]


def test_a_mistake_is_run_only_when_a_failure_needs_a_diagnosis():
    calls = []

    def doubled(x):
        calls.append(1)
        return 2 * x

    grader = _square_grader(Mistake("you doubled x; square it", doubled))
    assert grader.check(lambda x: x * x).passed
    assert calls == []
    grader.check(lambda x: x + x)
    assert len(calls) == len(grader.cases)


# ------------------------------------------------------------------ a chapter's exercises


def test_chapter_graders_take_the_number_from_the_module_name():
    graders = grading.ChapterGraders("attnlab.grading.ch05")
    assert (graders.chapter, graders.title) == (5, "Chapter 5 exercises")
    square = graders.add(_square_grader())
    question = graders.add(grading.Question(name="guess", answer=4))
    assert graders.names == ("square", "guess")
    assert list(graders) == [square, question]
    assert graders["guess"] is question and len(graders) == 2
    assert graders.summary().text.splitlines() == [
        "Chapter 5 exercises",
        "  ○ square  not checked",
        "  ○ guess   not checked",
        "Score: 0/2",
    ]
    question.check(4)
    square.check(lambda x: x + 1)
    assert graders.summary().rows == (("square", "wrong values"), ("guess", "passed"))


@pytest.mark.parametrize("module", ["attnlab.grading.core", "ch5", "attnlab.grading.ch005"])
def test_chapter_graders_need_a_chNN_module(module):
    with pytest.raises(ValueError, match="chNN"):
        grading.ChapterGraders(module)


def test_an_exercise_name_is_used_once_per_chapter():
    graders = grading.ChapterGraders("ch01")
    graders.add(_square_grader())
    with pytest.raises(ValueError, match="already has an exercise 'square'"):
        graders.add(_square_grader())


# ------------------------------------------------------------------ prediction questions

NUMBER = grading.Question(
    name="weight",
    answer=0.88,
    atol=0.01,
    explanation="e^14 / (e^14 + e^12) = 1 / (1 + e^-2)",
    wrong=((0.54, "you took the softmax of 112 and 96 without dividing by 8"),),
    hint="divide the scores by sqrt(64) first",
)
NAN_TOLD = grading.Question(
    name="blind",
    answer=0.25,
    atol=0.01,
    not_finite_hint="NaN comes from -inf; this fill is finite",
)
FLAG = grading.Question(name="leaks", answer=False, wrong=((True, "the mask is applied first"),))
WORD = grading.Question(
    name="axis",
    answer="rows",
    choices=("rows", "columns", "all"),
    wrong=(("columns", "each query is a row: its weights sum to 1"),),
)
SAME = grading.Question(
    name="larger",
    answer="equal",
    choices=("first", "second", "equal"),
    synonyms=(("same", "equal"), ("neither", "equal")),
)


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        (NUMBER, 0.88),
        (NUMBER, 0.8808),
        (NUMBER, np.float32(0.88)),
        (NUMBER, torch.tensor(0.879)),
        (NUMBER, np.array(0.881)),
        (FLAG, False),
        (FLAG, np.bool_(False)),
        (WORD, "rows"),
        (WORD, "  Rows "),
        (SAME, "same"),
        (SAME, "the Same."),
        (SAME, "neither"),
    ],
)
def test_right_answers_pass_in_any_spelling(question, answer):
    result = question.check(answer)
    assert result.passed, result.text
    assert result.text.startswith(f"✓ {question.name}: right")
    if question.explanation:
        assert f"Why: {question.explanation}" in result.text


@pytest.mark.parametrize(
    ("question", "answer", "status", "words"),
    [
        (NUMBER, 0.54, "wrong answer", "without dividing by 8"),
        (NUMBER, 0.5, "wrong answer", "divide the scores by sqrt(64)"),
        (NUMBER, "0.88", "wrong type", "without quotes"),
        (NUMBER, True, "wrong type", "expected a number"),
        (NUMBER, np.ones(2), "wrong type", "one value"),
        (NUMBER, float("nan"), "wrong type", "finite"),
        (NUMBER, [0.88, 0.12], "wrong type", "one number, not a list"),
        (NAN_TOLD, float("nan"), "wrong type", "NaN comes from -inf"),
        (NAN_TOLD, float("inf"), "wrong type", "NaN comes from -inf"),
        (NUMBER, None, "wrong type", "answer = ..."),
        (NUMBER, ..., "not attempted", "not attempted yet: replace the `...`"),
        (FLAG, True, "wrong answer", "the mask is applied first"),
        (FLAG, "False", "wrong type", "without quotes"),
        (FLAG, 0, "wrong type", "True or False"),
        (WORD, "columns", "wrong answer", "each query is a row"),
        (WORD, "diagonal", "wrong type", "'rows', 'columns', 'all'"),
        (WORD, 3, "wrong type", "answer one of"),
        (SAME, "not the same", "wrong type", "answer one of"),
    ],
)
def test_wrong_answers_get_their_diagnosis(question, answer, status, words):
    result = question.check(answer)
    assert result.status == status, result.text
    assert words in result.text
    assert not result.passed
    assert "0.88" not in (result.diagnosis or ""), "a diagnosis must not give the answer away"


def test_a_small_listed_wrong_answer_matches_only_near_itself():
    """A listed value inside the tolerance (0.047 when 48 is taken within 0.5) would take in
    every small number, half or twice it too; a listed 0 keeps the tolerance ("about 0")."""

    def question(*wrong: tuple[float, str]) -> grading.Question:
        return grading.Question(name="size", answer=48.0, atol=0.5, wrong=wrong, hint="bytes")

    gib = question((0.046875, "the size in GiB"))
    assert "the size in GiB" in gib.check(0.0469).text
    assert "the size in GiB" not in gib.check(0.0234).text
    assert "about nothing" in question((0.0, "about nothing")).check(2e-5).text


def test_questions_are_recorded_for_the_score():
    NUMBER.check(0.5)
    NUMBER.check(0.88)
    assert grading.summary().rows == (("weight", "passed"),)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"answer": "rows"}, "needs `choices`"),
        ({"answer": "rows", "choices": ("columns",)}, "not among the choices"),
        ({"answer": 1.0, "wrong": (("1", "x"),)}, "is not a number"),
        (
            {"answer": "rows", "choices": ("rows",), "synonyms": (("lines", "row"),)},
            "stands for 'row'",
        ),
        ({"answer": 1.0, "atol": 0.1, "wrong": ((1.05, "x"),)}, "counts as right"),
    ],
)
def test_an_inconsistent_question_is_refused_when_written(kwargs, words):
    with pytest.raises(ValueError, match=words):
        grading.Question(name="q", **kwargs)


# ------------------------------------------------------------------ general diagnoses


def test_a_near_miss_shows_the_digits_that_differ_and_is_told_precision():
    grader = dataclasses.replace(
        _square_grader(), cases=(Case("a vector", {"x": np.array([0.123456, -0.987654])}),)
    )
    result = grader.check(lambda x: np.round(x * x, 4))
    assert result.status == "wrong values"
    assert result.diagnosed and result.diagnosis.startswith("a precision problem")
    expected, got = re.search(r"expected (\S+), got (\S+)", result.message).groups()
    assert expected != got  # enough digits to see the difference
    assert float(got) == pytest.approx(float(expected), abs=1e-4)
    # A far miss is not a precision problem.
    assert not grader.check(lambda x: x * x + 0.5).diagnosed


def test_a_value_passed_instead_of_a_function_says_so_and_keeps_an_earlier_pass():
    grader = _square_grader()
    first = grader.check(np.ones(3))
    assert first.status == "wrong type" and "you passed a value, not a function" in first.message
    assert "NumPy array of shape (3,)" in first.message
    assert "check_square(square)" in first.diagnosis
    assert grader.check(lambda x: x * x).passed
    again = grader.check(np.float64(4.0))
    assert "earlier result, passed, still counts" in again.message
    assert grading.summary().rows == (("square", "passed"),)


def test_a_number_where_an_array_is_expected_is_a_shape_problem():
    grader = _square_grader(Mistake("you summed the squares", lambda x: np.sum(x * x)))
    result = grader.check(lambda x: float(np.sum(x * x)))
    assert result.status == "wrong shape", result.text
    assert result.diagnosis == "you summed the squares"


def test_a_broken_property_gives_the_diagnosis_when_no_mistake_does():
    def positive(outputs, case):
        return "a square is never negative" if np.any(outputs["output"] < 0) else None

    grader = dataclasses.replace(_square_grader(), properties=(grading.Property(positive),))
    result = grader.check(lambda x: -x * x)
    assert (result.diagnosed, result.diagnosis) == (True, "a square is never negative")
    assert not grader.check(lambda x: x * x + 1).diagnosed  # positive, wrong: generic hint


def test_error_hints_may_read_the_message_and_name_the_exception_type():
    def hint(message):
        return "read: " + message if "(2,) (3,)" in message else None

    grader = dataclasses.replace(
        _square_grader(), error_hints=(("broadcast", hint), ("KeyError", "a missing key"))
    )
    result = grader.check(lambda x: x * np.ones(2) * np.ones(3))
    assert result.diagnosis.startswith("read: ValueError: operands could not be broadcast")
    result = grader.check(lambda x: {}["k"])
    assert result.diagnosis == "a missing key"


@pytest.mark.parametrize(
    ("fn", "words"),
    [
        (lambda x: np.einsum("ij,ij->i", x, x), "einsum subscripts"),
        (lambda x: np.sum(x, axis=3), "axis 3 does not exist in an array with 1 axes"),
        (lambda x: x[:, None, None, 0][0, 0, 0, 0], "indexed more axes"),
        (lambda x: np.dot(np.ones((2, 3)), np.ones((2, 3))), "np.dot of the shapes (2,3)"),
        (lambda x: np.ones((2, 3)) @ np.ones((2, 3)), "@ is a matrix product"),
        (lambda x: np.array([a @ a for a in x]), "single numbers"),
    ],
)
def test_numpy_errors_get_a_general_explanation(fn, words):
    result = _square_grader().check(fn)
    assert result.status == "raised an exception"
    assert words in result.diagnosis, result.text
    assert "np.sum(a * b" not in result.diagnosis  # explains, does not hand over a fix


def test_adapt_turns_a_natural_answer_into_an_array():
    ids = Grader(
        name="ids",
        signature="ids(n) -> list of ints",
        reference=lambda n: np.arange(n),
        cases=(Case("three", {"n": 3}),),
        adapt=lambda v: np.array(v) if isinstance(v, list) else v,
    )
    assert ids.check(lambda n: list(range(n))).passed
    result = ids.check(lambda n: ["a", "b", "c"])
    assert result.status == "wrong type"


def test_seed_cpu_gives_the_weights_torch_manual_seed_gives():
    from torch import nn

    from attnlab.grading.modules import seed_cpu

    torch.manual_seed(3)
    theirs = nn.Linear(5, 4)
    seed_cpu(3)
    ours = nn.Linear(5, 4)
    assert torch.equal(ours.weight, theirs.weight) and torch.equal(ours.bias, theirs.bias)
    seed_cpu(4)
    assert not torch.equal(nn.Linear(5, 4).weight, theirs.weight)


# ------------------------------------------------------------------ generated diagnoses


def _ffn_biases_swapped(x, W_1, b_1, W_2, b_2):
    return torch.relu(x @ W_1 + b_2) @ W_2 + b_1


def _ffn_x_for_b_1(x, W_1, b_1, W_2, b_2):
    return torch.relu(x @ W_1 + x) @ W_2 + b_2


def test_a_name_swap_the_learners_code_does_not_have_is_refuted():
    """ "you used `x` where `b_1` belongs" fits the exception of swapped biases too; a learner
    who uses `x` and `b_1` as often as the worked solution did not make that swap."""
    from attnlab.grading.pipeline import _refuted_by_source

    worked = "def feed_forward(x, W_1, b_1, W_2, b_2):\n    return torch.relu(x @ W_1 + b_1) @ W_2 + b_2\n"
    diagnosis = "you used `x` where `b_1` belongs"
    assert _refuted_by_source(diagnosis, _ffn_biases_swapped, worked)
    assert not _refuted_by_source(diagnosis, _ffn_x_for_b_1, worked)


def _rope_over_omega(x, positions):
    d = x.shape[-1]
    w = 10000.0 ** (-np.arange(0, d, 2) / d)
    ang = np.asarray(positions)[:, None] / w  # the minus sign is there; the division flips it
    out = np.empty_like(x)
    out[..., 0::2] = x[..., 0::2] * np.cos(ang) - x[..., 1::2] * np.sin(ang)
    out[..., 1::2] = x[..., 0::2] * np.sin(ang) + x[..., 1::2] * np.cos(ang)
    return out


def _rope_without_minus(x, positions):
    d = x.shape[-1]
    w = 10000.0 ** (np.arange(0, d, 2) / d)
    ang = np.asarray(positions)[:, None] * w
    out = np.empty_like(x)
    out[..., 0::2] = x[..., 0::2] * np.cos(ang) - x[..., 1::2] * np.sin(ang)
    out[..., 1::2] = x[..., 0::2] * np.sin(ang) + x[..., 1::2] * np.cos(ang)
    return out


def test_a_generated_missing_minus_is_not_named_for_code_that_has_it():
    """The generated "a minus sign is missing: `e`" gives the numbers of `/ w` too; for code
    that has `-e` it would send the learner to a line that is right."""
    from attnlab.grading.ch05 import ROPE

    without_planted = dataclasses.replace(
        ROPE, mistakes=tuple(m for m in ROPE.mistakes if "grow with" not in m.diagnosis)
    )
    missing = "a minus sign is missing"
    grading.reset()
    assert missing in (without_planted.check(_rope_without_minus).diagnosis or "")
    grading.reset()
    over_omega = without_planted.check(_rope_over_omega)
    assert not over_omega.passed
    assert missing not in (over_omega.diagnosis or ""), over_omega.text
