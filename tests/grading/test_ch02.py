"""Chapter 2's graders: right answers pass, stubs and planted bugs get the expected report.

The "learner" functions below are written here, independently of the planted mistakes in
``attnlab.grading.ch02``, the way a learner would write them. Many of these tests also pin
down the check pipeline's behaviour on real exercises (exceptions, types, in-place edits);
the machinery's own tests, on graders made up for them, are in ``test_machinery.py``.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import torch

import attnlab
from attnlab import grading
from attnlab.grading.ch02 import (
    GRADERS,
    SOFTMAX,
    check_cosine_flip,
    check_cosine_similarity,
    check_dot,
    check_embed,
    check_equal_rows,
    check_score_spread,
    check_self_attention,
    check_shifted_softmax,
    check_softmax,
    check_wordpiece,
    summary,
)

# ------------------------------------------------------------------ correct answers


def np_dot(a, b):
    return np.sum(a * b, axis=-1)


def np_cosine(a, b):
    return np.sum(a * b, axis=-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))


def np_softmax(x, axis=-1, temperature=1.0):
    z = x / temperature
    e = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def np_self_attention(x):
    scores = x @ x.T / np.sqrt(x.shape[-1])  # (T, D) @ (D, T) -> (T, T)
    weights = np_softmax(scores, axis=-1)
    return weights @ x, weights  # (T, T) @ (T, D) -> (T, D)


CHECKS = {
    "dot": check_dot,
    "cosine_similarity": check_cosine_similarity,
    "softmax": check_softmax,
    "self_attention": check_self_attention,
}
LIBRARY = {
    "dot": attnlab.dot,
    "cosine_similarity": attnlab.cosine_similarity,
    "softmax": lambda x, axis=-1, temperature=1.0: attnlab.softmax(
        x, axis, temperature=temperature
    ),
    "self_attention": lambda x: attnlab.scaled_dot_product_attention(x, x, x),
}
NUMPY = {
    "dot": np_dot,
    "cosine_similarity": np_cosine,
    "softmax": np_softmax,
    "self_attention": np_self_attention,
}


# Every right answer, graded by tests/grading/test_correct_answers.py (one test for all chapters).
CORRECT_ANSWERS = [(name, answers[name]) for answers in (LIBRARY, NUMPY) for name in CHECKS]
MAX_ERROR = 1e-12


@pytest.mark.parametrize("name", CHECKS)
def test_a_pass_says_its_cases_and_tolerance(name):
    result = CHECKS[name](LIBRARY[name])
    n = len(GRADERS[name].cases)
    assert n >= 5
    rtol = GRADERS[name].rtol
    assert repr(result) == (
        f"✓ {name}: {n} cases passed, every value within {rtol:.0e} (relative) of the reference"
    )


def test_success_line_states_the_tolerance_not_the_error():
    # The error's last digits differ between CPUs (2.2e-16 on one, 3.3e-16 on another);
    # the committed notebooks print this line, so it must read the same on every machine.
    result = check_softmax(np_softmax)
    n = len(SOFTMAX.cases)
    assert result.max_error is not None and 0 <= result.max_error < 1e-15
    assert repr(result) == (
        f"✓ softmax: {n} cases passed, every value within 1e-06 (relative) of the reference"
    )
    assert "e-16" not in repr(result) and "max error" not in repr(result)


def test_scalar_results_of_plain_vectors_are_accepted():
    # Summing a 1-D product gives a NumPy scalar, not a 0-d array: that is a right answer.
    assert np.ndim(np.sum(np.ones(3))) == 0
    assert check_dot(lambda a, b: (a * b).sum(axis=-1)).passed


# ------------------------------------------------------------------ the report order


def stub(*args, **kwargs):
    raise NotImplementedError("Exercise 2.1")


@pytest.mark.parametrize("name", CHECKS)
def test_stub_is_not_attempted(name):
    result = CHECKS[name](stub)
    assert result.status == "not attempted"
    assert not result.passed
    assert repr(result).startswith(f"○ {name}: not attempted yet")


def test_calling_another_unfinished_exercise_is_not_not_attempted():
    # The learner wrote self_attention, reusing their softmax, whose stub still raises.
    def softmax(x, axis=-1, temperature=1.0):
        raise NotImplementedError("Exercise 2.3")

    def self_attention(x):
        scores = x @ x.T / np.sqrt(x.shape[-1])  # (T, D) @ (D, T) -> (T, T)
        weights = softmax(scores, axis=-1)
        return weights @ x, weights  # (T, T) @ (T, D) -> (T, D)

    result = check_self_attention(self_attention)
    assert result.status == "raised an exception", result.text
    assert result.diagnosed
    assert result.diagnosis == (
        'your code calls `softmax`, which still raises NotImplementedError("Exercise 2.3"): '
        "finish that exercise first (or write the softmax step inline)"
    )
    assert "at softmax, line" in result.message


def test_an_unfinished_helper_is_named_by_its_frame_and_message():
    def normalise(v):
        raise NotImplementedError

    result = check_dot(lambda a, b: np_dot(normalise(a), b))
    assert result.status == "raised an exception"
    assert result.diagnosis.startswith(
        "your code calls `normalise`, which still raises NotImplementedError: finish"
    )


def test_a_library_raising_not_implemented_is_an_ordinary_exception():
    import asyncio

    def dot(a, b):
        asyncio.AbstractEventLoop().time()  # the standard library raises NotImplementedError
        return np_dot(a, b)

    result = check_dot(dot)
    assert result.status == "raised an exception"
    assert result.message.startswith("raised NotImplementedError on case")
    assert result.diagnosis is None


@pytest.mark.parametrize("error", [ZeroDivisionError, ValueError, RuntimeError, AssertionError])
@pytest.mark.parametrize("name", CHECKS)
def test_exceptions_are_reported_with_the_case_and_line(name, error):
    def broken(*args, **kwargs):
        raise error("something broke")

    result = CHECKS[name](broken)
    assert result.status == "raised an exception"
    assert f"raised {error.__name__}: something broke on case" in result.message
    assert "shape (" in result.message  # the offending case's input shapes
    assert (
        "at broken, line" in result.message and 'raise error("something broke")' in result.message
    )


def test_an_exception_on_a_late_case_is_still_found():
    def softmax_rows_only(x, axis=-1, temperature=1.0):
        if axis != -1:
            raise ValueError("only rows")
        return np_softmax(x, axis, temperature)

    result = check_softmax(softmax_rows_only)
    assert result.status == "raised an exception"
    assert 'on case "columns" (x: shape (4, 3), axis=0)' in result.message


def test_missing_keepdims_gets_a_broadcasting_hint_with_the_shapes():
    def softmax(x, axis=-1, temperature=1.0):
        z = x / temperature
        e = np.exp(z - np.max(z, axis=axis))
        return e / np.sum(e, axis=axis)

    result = check_softmax(softmax)
    assert result.status == "raised an exception"
    assert "with shapes (3,6) (3,)" in result.message
    # the generated mistake "max without keepdims" raises the same error on the same case
    assert result.diagnosis.startswith("`max` without `keepdims=True` drops the axis")


def test_a_wrong_axis_gets_the_broadcasting_hint_without_blaming_keepdims():
    def softmax(x, axis=-1, temperature=1.0):
        z = x / temperature
        z = z - np.max(z, axis=0, keepdims=True).T  # the max over the wrong axis
        return np.exp(z) / np.sum(np.exp(z), axis=axis, keepdims=True)

    result = check_softmax(softmax)
    assert result.status == "raised an exception"
    assert result.diagnosis.startswith(
        "the shapes (3, 6) and (6, 1) do not broadcast together: one operand has an axis too "
        "many or too few, or its axes in another order"
    )
    assert "keepdims" not in result.diagnosis


def test_a_different_signature_gets_the_expected_one():
    result = check_softmax(lambda x, dim=-1: np_softmax(x, dim))
    assert result.status == "raised an exception"
    assert "unexpected keyword argument" in result.message
    assert "softmax(x, axis=-1, temperature=1.0)" in result.diagnosis


def test_matrix_product_of_vector_batches_gets_a_hint():
    result = check_dot(lambda a, b: a @ b)
    assert result.status == "raised an exception"
    assert result.diagnosis.startswith("you used a matrix product (@, np.dot or np.matmul)")
    assert "np.sum" not in result.diagnosis  # says what is wrong, not the fix
    assert check_dot(lambda a, b: np.dot(a, b)).diagnosis == result.diagnosis
    assert "np.sum" not in result.diagnosis  # says what is wrong, not the fix


def test_keyboard_interrupt_is_not_swallowed():
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        check_dot(interrupted)


WRONG_TYPES = {
    "None": (lambda out: None, "None"),
    "list": (lambda out: out.tolist() if out.ndim else [float(out)], "list"),
    "tensor": (lambda out: torch.as_tensor(out), "torch.Tensor"),
    "tuple": (lambda out: (out, out), "tuple"),
    "string": (lambda out: "0.5", "str"),
    "float32": (lambda out: out.astype(np.float32), "float32"),
    "integers": (lambda out: np.round(out).astype(np.int64), "int64"),
}


@pytest.mark.parametrize("kind", WRONG_TYPES)
@pytest.mark.parametrize("name", ["dot", "cosine_similarity", "softmax"])
def test_wrong_types_are_reported(name, kind):
    convert, shown = WRONG_TYPES[kind]
    correct = NUMPY[name]
    result = CHECKS[name](lambda *a, **k: convert(np.asarray(correct(*a, **k))))
    assert result.status == "wrong type", result.text
    assert shown in result.message


@pytest.mark.parametrize(
    ("returned", "shown"),
    [
        (lambda x: None, "None"),
        (lambda x: np_self_attention(x)[0], "expected a tuple (out, weights), got a NumPy array"),
        (lambda x: (*np_self_attention(x), x), "expected a tuple of 2 (out, weights), got 3 items"),
        (lambda x: np_self_attention(x)[:1], "got 1 item"),
        (lambda x: [torch.as_tensor(a) for a in np_self_attention(x)], "`out` is a torch.Tensor"),
        (lambda x: (np_self_attention(x)[0], None), "`weights` is None"),
        (lambda x: (np_self_attention(x)[0].tolist(), np_self_attention(x)[1]), "`out` is a list"),
    ],
)
def test_self_attention_wrong_types(returned, shown):
    result = check_self_attention(returned)
    assert result.status == "wrong type", result.text
    assert shown in result.message


@pytest.mark.parametrize(
    "returned",
    [lambda x: np_self_attention(x)[0], lambda x: np_self_attention(x)[1], lambda x: np_self_attention(x)[:1]],
    ids=["out", "weights", "a 1-tuple"],
)  # fmt: skip
def test_self_attention_returning_one_array_is_told_to_return_both(returned):
    result = check_self_attention(returned)
    assert result.status == "wrong type", result.text
    assert result.diagnosis == "return both: `return out, weights`"


def test_a_list_of_two_arrays_is_accepted_for_a_pair():
    assert check_self_attention(lambda x: list(np_self_attention(x))).passed


def test_none_suggests_a_missing_return():
    def softmax(x, axis=-1, temperature=1.0):
        np_softmax(x, axis, temperature)

    result = check_softmax(softmax)
    assert result.status == "wrong type"
    assert "forget `return`" in result.diagnosis


@pytest.mark.parametrize(
    ("name", "fn", "expected", "got"),
    [
        ("softmax", lambda x, axis=-1, temperature=1.0: np_softmax(x, axis, temperature)[..., :-1], "(5,)", "(4,)"),
        ("dot", lambda a, b: np.sum(a * b, axis=-1, keepdims=True), "()", "(1,)"),
        ("cosine_similarity", lambda a, b: np_cosine(a, b)[None], "()", "(1,)"),
        ("self_attention", lambda x: (np_self_attention(x)[0].T, np_self_attention(x)[1]), "(4, 3)", "(3, 4)"),
    ],
)  # fmt: skip
def test_wrong_shapes_are_reported(name, fn, expected, got):
    result = CHECKS[name](fn)
    assert result.status == "wrong shape", result.text
    assert f"expected {expected}" in result.message and f"got {got}" in result.message


@pytest.mark.parametrize("name", ["dot", "cosine_similarity", "softmax"])
def test_nan_is_reported(name):
    result = CHECKS[name](lambda *a, **k: NUMPY[name](*a, **k) * np.nan)
    assert result.status == "NaN or inf"
    assert "NaN in the output" in result.message
    assert result.diagnosis  # a generic hint at least


def test_wrong_values_without_a_known_mistake_get_the_generic_hint():
    result = check_softmax(
        lambda x, axis=-1, temperature=1.0: np_softmax(x, axis, temperature) + 0.01 * np.cos(x)
    )
    assert result.status == "wrong values"
    assert not result.diagnosed, result.text
    assert result.diagnosis == SOFTMAX.hint
    assert f"Hint: {SOFTMAX.hint}" in repr(result)
    assert "max error " in result.message
    assert "expected" in result.message and "got" in result.message


@pytest.mark.parametrize("name", ["dot", "cosine_similarity", "softmax"])
@pytest.mark.parametrize(
    "to_int",
    [lambda out: np.asarray(out).astype(int), lambda out: int(out) if np.ndim(out) == 0 else out.astype(np.int32)],
    ids=["astype(int)", "int()"],
)  # fmt: skip
def test_integer_results_are_told_that_int_truncates(name, to_int):
    result = CHECKS[name](lambda *a, **k: to_int(NUMPY[name](*a, **k)))
    assert result.status == "wrong type", result.text
    assert result.diagnosis == "converting to int truncates; keep floats"


def test_not_a_function():
    result = check_softmax(np.zeros(3))
    assert result.status == "wrong type"
    assert "check_softmax(softmax)" in result.diagnosis


# ------------------------------------------------------------------ planted bugs


def softmax_no_max(x, axis=-1, temperature=1.0):
    e = np.exp(x / temperature)
    return e / e.sum(axis=axis, keepdims=True)


def softmax_global_max(x, axis=-1, temperature=1.0):
    z = x / temperature
    e = np.exp(z - z.max())
    return e / e.sum(axis=axis, keepdims=True)


def softmax_minus_min(x, axis=-1, temperature=1.0):
    z = x / temperature
    e = np.exp(z - z.min(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def softmax_minus_mean(x, axis=-1, temperature=1.0):
    z = x / temperature
    e = np.exp(z - z.mean(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def softmax_max_before_temperature(x, axis=-1, temperature=1.0):
    e = np.exp(x / temperature - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def softmax_in_place(x, axis=-1, temperature=1.0):
    x /= temperature
    x -= x.max(axis=axis, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=axis, keepdims=True)
    return x


def self_attention_with(scale=None, axis=-1, returns="weights"):
    def self_attention(x):
        scores = x @ x.T / (np.sqrt(x.shape[1]) if scale is None else scale(x))
        weights = np_softmax(scores, axis=axis)
        if returns == "scores":
            return weights @ x, scores
        if returns == "transposed":
            return weights.T @ x, weights
        if returns == "swapped":
            return weights, weights @ x
        return weights @ x, weights

    return self_attention


def self_attention_overflowing(x):
    e = np.exp(x @ x.T / np.sqrt(x.shape[1]))
    weights = e / e.sum(axis=1, keepdims=True)
    return weights @ x, weights


PLANTED = [
    # (exercise, learner's bug, status, words expected in the diagnosis)
    ("dot", lambda a, b: a * b, "wrong shape", "did not sum"),
    ("dot", lambda a, b: (a * b).sum(axis=0), "wrong shape", "first axis"),
    ("dot", lambda a, b: (a * b).sum(), "wrong shape", "every axis"),
    ("dot", lambda a, b: sum(a * b), "wrong shape", "first axis"),
    ("dot", lambda a, b: (a + b).sum(axis=-1), "wrong values", "a + b"),
    ("dot", lambda a, b: (a * b).sum(-1, keepdims=True), "wrong shape", "you kept the summed axis (keepdims=True): the result should have shape (...), one number per pair"),
    ("cosine_similarity", lambda a, b: np_dot(a, b)[..., None] / (np.linalg.norm(a, axis=-1, keepdims=True) * np.linalg.norm(b, axis=-1, keepdims=True)), "wrong shape", "you kept the summed axis (keepdims=True)"),
    ("cosine_similarity", lambda a, b: np_dot(a, b) / np.linalg.norm(a, axis=-1), "wrong values", "length of `a` only"),
    ("cosine_similarity", lambda a, b: np_dot(a, b) / np.linalg.norm(b, axis=-1), "wrong values", "length of `b` only"),
    ("cosine_similarity", lambda a, b: np_dot(a, b) / (np_dot(a, a) * np_dot(b, b)), "wrong values", "squared lengths"),
    ("cosine_similarity", np_dot, "wrong values", "returned the dot product"),
    ("cosine_similarity", lambda a, b: np_dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)), "wrong values", "norm of the whole array"),
    ("softmax", softmax_no_max, "NaN or inf", "overflowed at logits of 1000: e^1000 = inf"),
    ("softmax", softmax_global_max, "NaN or inf", "one max for the whole array"),
    ("softmax", softmax_minus_min, "NaN or inf", "you subtracted the min instead of the max"),
    ("softmax", softmax_minus_mean, "NaN or inf", "you subtracted the mean instead of the max"),
    ("softmax", softmax_max_before_temperature, "NaN or inf", "subtracted the max of x, but exponentiated x/τ"),
    ("softmax", lambda x, axis=-1, temperature=1.0: np_softmax(x, 0, temperature), "wrong values", "wrong axis"),
    ("softmax", lambda x, axis=-1, temperature=1.0: np_softmax(x, -1, temperature), "wrong values", "ignored the `axis` argument"),
    ("softmax", lambda x, axis=-1, temperature=1.0: np_softmax(x * temperature, axis), "wrong values", "multiplied the logits by the temperature"),
    ("softmax", lambda x, axis=-1, temperature=1.0: np_softmax(x, axis), "wrong values", "temperature had no effect"),
    ("softmax", lambda x, axis=-1, temperature=1.0: np.exp(x / temperature - np.max(x / temperature, axis, keepdims=True)), "wrong values", "forgot to normalise"),
    ("softmax", softmax_in_place, "modified its input", "in-place update"),
    ("self_attention", self_attention_with(scale=lambda x: 1.0), "wrong values", "forgot to scale"),
    ("self_attention", self_attention_with(scale=lambda x: x.shape[1]), "wrong values", "divided the scores by D"),
    ("self_attention", self_attention_with(scale=lambda x: np.sqrt(x.shape[0])), "wrong values", "sqrt(T)"),
    ("self_attention", self_attention_with(axis=0), "wrong values", "wrong axis"),
    ("self_attention", self_attention_with(returns="scores"), "wrong values", "returned the scores"),
    ("self_attention", self_attention_with(returns="transposed"), "wrong values", "transposed weights"),
    ("self_attention", self_attention_with(returns="swapped"), "wrong shape", "the order is (out, weights)"),
    ("self_attention", lambda x: (x, np_self_attention(x)[1]), "wrong values", "returned x unchanged"),
    ("self_attention", self_attention_overflowing, "NaN or inf", "without subtracting each row's max"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "bug", "status", "words"), PLANTED)
def test_planted_bugs_get_the_expected_diagnosis(name, bug, status, words):
    result = CHECKS[name](bug)
    assert result.status == status, result.text
    assert result.diagnosed, result.text
    assert words in result.diagnosis, result.text
    assert "Diagnosis: " in repr(result)


def test_every_exercise_has_at_least_three_planted_bugs_tested():
    counts = {name: sum(p[0] == name for p in PLANTED) for name in CHECKS}
    assert min(counts.values()) >= 3, counts


# Each planted mistake is told apart from the others: tests/grading/test_chapters.py


def test_overflow_diagnosis_shows_the_case_and_no_warning_escapes():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow warning would raise here
        result = check_softmax(softmax_no_max)
    assert 'on case "logits of 1000"' in result.message
    assert (
        repr(result)
        .splitlines()[1]
        .startswith("  Diagnosis: overflowed at logits of 1000: e^1000 = inf and inf/inf = NaN")
    )


def test_in_place_edits_do_not_corrupt_the_cases():
    before = [np.array(x, copy=True) for c in SOFTMAX.cases for x in c.inputs.values()]
    check_softmax(softmax_in_place)
    after = [x for c in SOFTMAX.cases for x in c.inputs.values()]
    for b, a in zip(before, after, strict=True):
        np.testing.assert_array_equal(a, b)
    assert check_softmax(np_softmax).passed


def test_in_place_edits_are_reported_even_when_the_values_are_wrong_too():
    def wrong_and_in_place(x, axis=-1, temperature=1.0):
        x /= temperature
        return np_softmax(x, axis, temperature)  # divides by the temperature twice

    result = check_softmax(wrong_and_in_place)
    assert result.status == "modified its input", result.text
    assert "modified its input `x` in place" in result.message
    assert "`x /= ...`" in result.diagnosis

    def self_attention(x):
        x /= np.sqrt(x.shape[-1])  # scales the caller's x, and the output with it
        weights = np_softmax(x @ x.T, axis=-1)  # (T, D) @ (D, T) -> (T, T)
        return weights @ x, weights

    assert check_self_attention(self_attention).status == "modified its input"


# ------------------------------------------------------------------ a diagnosis explains the failure


def test_a_sigmoid_submitted_as_softmax_is_not_told_wrong_axis():
    result = check_softmax(lambda x, axis=-1, temperature=1.0: 1 / (1 + np.exp(-x / temperature)))
    assert result.status == "wrong values"
    assert 'on case "a vector"' in result.message  # 1-D: the axis cannot be the problem
    assert not result.diagnosed, result.text
    assert result.diagnosis == SOFTMAX.hint


# ------------------------------------------------------------------ display and summary


def test_result_display_is_deterministic_plain_text_and_html():
    first = check_softmax(softmax_no_max)
    second = check_softmax(softmax_no_max)
    assert repr(first) == repr(second) == first.text
    assert first._repr_html_() == second._repr_html_()
    assert "0x" not in repr(first)
    assert repr(first).startswith("✗ softmax: NaN in the output")
    # The box shows the same text, escaped, in red; a pass is green.
    assert first.text.replace('"', "&quot;") in first._repr_html_()
    assert "#c62828" in first._repr_html_()
    assert "#2e7d32" in check_softmax(np_softmax)._repr_html_()


def test_summary_table_cells_are_padded():
    check_dot(np_dot)
    check_softmax(stub)
    html_table = summary()._repr_html_()
    cells = re.findall(r"<td[^>]*>", html_table)
    assert len(cells) == 3 * len(GRADERS)
    assert all("padding" in cell for cell in cells), cells


def test_chapter_list_gives_an_honest_score_before_any_check():
    assert GRADERS.names == (
        "wordpiece",
        "embed",
        "dot",
        "cosine_similarity",
        "cosine_flip",
        "softmax",
        "shifted_softmax",
        "score_spread",
        "self_attention",
        "equal_rows",
    )
    assert GRADERS.chapter == 2
    table = summary()
    assert (table.score, table.total) == (0, 10)
    assert table.text.endswith("Score: 0/10")
    assert [name for name, _ in table.rows] == list(GRADERS.names)


def test_summary_counts_the_latest_result_per_exercise():
    check_dot(np_dot)
    check_cosine_similarity(np_dot)
    check_softmax(stub)
    table = grading.summary(title="Chapter 2 exercises")
    assert (table.score, table.total) == (1, 3)
    assert table.text.splitlines() == [
        "Chapter 2 exercises",
        "  ✓ dot                passed",
        "  ✗ cosine_similarity  wrong values",
        "  ○ softmax            not attempted",
        "Score: 1/3",
    ]
    assert repr(table) == table.text
    assert "Score: 1/3" in table._repr_html_()

    check_cosine_similarity(np_cosine)  # fixed: the latest result counts, in the same row
    check_softmax(np_softmax)
    table = grading.summary(exercises=list(CHECKS))
    assert (table.score, table.total) == (3, 4)
    assert table.rows[1] == ("cosine_similarity", "passed")
    assert table.rows[3] == ("self_attention", "not checked")
    assert table.text.endswith("Score: 3/4")


# ------------------------------------------------------------------ the newer exercises


def wordpiece_loop(word, vocab):
    ids, start = [], 0
    while start < len(word):
        end = len(word)
        while end > start:
            piece = ("##" if start else "") + word[start:end]
            if piece in vocab:
                break
            end -= 1
        if end == start:
            return [vocab["<unk>"]]
        ids.append(vocab[piece])
        start = end
    return ids


def wordpiece_recursive(word, vocab, first=True):
    if not word:
        return []
    for end in range(len(word), 0, -1):
        piece = word[:end] if first else "##" + word[:end]
        if piece in vocab:
            rest = wordpiece_recursive(word[end:], vocab, first=False)
            if rest == [vocab["<unk>"]]:
                return rest
            return [vocab[piece], *rest]
    return [vocab["<unk>"]]


def wordpiece_array(word, vocab):
    return np.array(wordpiece_loop(word, vocab))


def embed_one_hot(ids, E):
    one_hot = (ids[..., None] == np.arange(E.shape[0])).astype(E.dtype)  # (..., n_vocab)
    return one_hot @ E  # (..., n_vocab) @ (n_vocab, D) -> (..., D)


def embed_eye(ids, E):
    return np.eye(len(E))[ids] @ E


def embed_take(ids, E):
    return np.take(E, ids, axis=0)


def embed_torch(ids, E):
    one_hot = torch.nn.functional.one_hot(torch.from_numpy(ids), len(E)).double()
    return (one_hot @ torch.from_numpy(E)).numpy()


def spread_canonical(d, n, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, d))
    k = rng.standard_normal((n, d))
    s = np.sum(q * k, axis=-1)
    return s.std(), (s / np.sqrt(d)).std()


def spread_einsum_other_order(d, n, seed):
    rng = np.random.default_rng(seed)
    k, q = rng.normal(size=(d, n)), rng.normal(size=(d, n))  # other shapes, other order
    s = np.einsum("dn,dn->n", q, k)
    return float(np.std(s)), float(np.std(s) / d**0.5)


def spread_torch(d, n, seed):
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(n, d, generator=g), torch.randn(n, d, generator=g)
    s = (q * k).sum(-1).double()
    return s.std().item(), (s / d**0.5).std().item()


NEW_CORRECT = {
    "wordpiece": (check_wordpiece, [wordpiece_loop, wordpiece_recursive, wordpiece_array]),
    "embed": (check_embed, [embed_one_hot, embed_eye, embed_take, embed_torch]),
    "score_spread": (
        check_score_spread,
        [spread_canonical, spread_einsum_other_order, spread_torch],
    ),
}


@pytest.mark.parametrize(
    ("name", "index"), [(n, i) for n, (_, fns) in NEW_CORRECT.items() for i in range(len(fns))]
)
def test_differently_written_correct_answers_pass(name, index):
    check, answers = NEW_CORRECT[name]
    result = check(answers[index])
    assert result.passed, result.text


@pytest.mark.parametrize("name", NEW_CORRECT)
def test_new_stubs_are_not_attempted(name):
    check, _ = NEW_CORRECT[name]
    assert check(stub).status == "not attempted"


def test_wordpiece_tokens_instead_of_ids_are_told_so():
    def pieces(word, vocab):
        return ["<unk>"] if word == "quiz" else [word]

    result = check_wordpiece(pieces)
    assert result.status == "wrong type"
    assert result.diagnosis == "the items are strings; the exercise asks for numbers"


def test_wordpiece_messages_do_not_print_the_whole_vocabulary():
    result = check_wordpiece(lambda word, vocab: [0, 0, 0, 0, 0, 0, 0, 0])
    assert "vocab: a dict of" in result.message
    assert "'##ing'" not in result.message


@pytest.mark.parametrize(
    ("check", "answer", "words"),
    [
        (check_cosine_flip, -1.0, "opposite"),
        (check_cosine_flip, -1, "opposite"),
        (check_shifted_softmax, 0.665, "cancels"),
        (check_shifted_softmax, 0.6652, "cancels"),
        (check_equal_rows, 0.25, "evenly"),
        (check_equal_rows, 1 / 4, "evenly"),
    ],
)
def test_prediction_right_answers_pass_with_their_explanation(check, answer, words):
    result = check(answer)
    assert result.passed, result.text
    assert words in result.explanation


@pytest.mark.parametrize(
    ("check", "answer", "words"),
    [
        (check_cosine_flip, -3.0, "divides out lengths"),
        (check_cosine_flip, 1.0, "point the same way"),
        (check_cosine_flip, 0.0, "perpendicular"),
        (check_shifted_softmax, 1.0, "differences matter"),
        (check_shifted_softmax, 1 / 3, "equal weights"),
        (check_equal_rows, 1.0, "all four scores of a row are equal"),
        (check_equal_rows, 0.5, "count how many are equal"),
    ],
)
def test_prediction_wrong_answers_get_their_diagnosis(check, answer, words):
    result = check(answer)
    assert result.status == "wrong answer", result.text
    assert result.diagnosed and words in result.diagnosis


def test_prediction_answers_match_the_library():
    a = np.array([0.3, -1.2, 2.0])
    assert check_cosine_flip(float(attnlab.cosine_similarity(a, -3 * a))).passed
    assert check_shifted_softmax(float(attnlab.softmax(np.array([101.0, 102, 103])).max())).passed
    x = np.tile(np.array([[1.0, 2.0, -0.5]]), (4, 1))
    _, weights = attnlab.scaled_dot_product_attention(x, x, x)
    assert check_equal_rows(float(weights[0, 0])).passed


def test_the_global_generator_is_refused_and_left_as_it_was():
    def legacy(d, n, seed):
        np.random.seed(seed)  # noqa: NPY002
        s = (np.random.randn(n, d) * np.random.randn(n, d)).sum(-1)  # noqa: NPY002
        return float(s.std()), float(s.std() / np.sqrt(d))

    def own(d, n, seed):
        rng = np.random.default_rng(seed)
        s = (rng.standard_normal((n, d)) * rng.standard_normal((n, d))).sum(-1)
        return float(s.std()), float(s.std() / np.sqrt(d))

    np.random.seed(7)  # noqa: NPY002
    first = np.random.rand()  # noqa: NPY002
    np.random.seed(7)  # noqa: NPY002
    result = check_score_spread(legacy)
    assert not result.passed and "default_rng(seed)" in result.diagnosis
    assert np.random.rand() == first  # noqa: NPY002  (the grader put the state back)
    assert check_score_spread(own).passed
