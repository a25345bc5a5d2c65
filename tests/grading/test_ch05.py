"""Chapter 5's graders: right answers pass, stubs and planted bugs get the expected report.

The "learner" answers below are written here, independently of the planted mistakes in
``attnlab.grading.ch05``, the way a learner would write them: loops, broadcasting, complex
numbers, torch. Every planted mistake must be recognised with its own diagnosis, and every
prediction question must accept its answer and diagnose each listed wrong answer.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

import attnlab
from attnlab.grading.ch05 import (
    GRADERS,
    OFFSET,
    PERMUTATION,
    POSITIONAL_ENCODING,
    ROPE,
    ROPE_SCORES,
    SELF_DOT,
    SIGN_OF_OFFSET,
    SINUSOIDAL,
    check_offset_matrix,
    check_permutation_gap,
    check_positional_encoding,
    check_rope,
    check_rope_scores,
    check_self_dot,
    check_sign_of_offset,
    check_sinusoidal_encoding,
    summary,
)

# ------------------------------------------------------------------ correct answers


def sinusoidal_loops(length, d_model):
    pe = np.zeros((length, d_model))
    for p in range(length):
        for j in range(d_model):
            angle = p / 10000 ** ((j - j % 2) / d_model)
            pe[p, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return pe


def sinusoidal_interleave(length, d_model):
    """Sines and cosines stacked as pairs, then the extra cosine of an odd D cut off."""
    half = (d_model + 1) // 2
    omega = np.exp(-np.log(10000.0) * 2 * np.arange(half) / d_model)  # (half,)
    angles = np.outer(np.arange(length), omega)  # (T, half)
    pairs = np.stack([np.sin(angles), np.cos(angles)], axis=-1)  # (T, half, 2)
    return pairs.reshape(length, 2 * half)[:, :d_model]


def sinusoidal_torch_then_numpy(length, d_model):
    pos = torch.arange(length, dtype=torch.float64)[:, None]
    j = torch.arange(d_model)
    angles = pos / 10000.0 ** ((j - j % 2) / d_model)
    return torch.where(j % 2 == 0, torch.sin(angles), torch.cos(angles)).numpy()


def offset_loops(k, d_model):
    m = np.zeros((d_model, d_model))
    for i in range(d_model // 2):
        b = k / 10000 ** (2 * i / d_model)
        m[2 * i, 2 * i], m[2 * i, 2 * i + 1] = math.cos(b), math.sin(b)
        m[2 * i + 1, 2 * i], m[2 * i + 1, 2 * i + 1] = -math.sin(b), math.cos(b)
    return m


def offset_kron(k, d_model):
    """Sum over pairs of kron(one-hot diagonal entry, 2x2 rotation): no index slicing."""
    m = np.zeros((d_model, d_model))
    for i in range(d_model // 2):
        b = k * np.exp(-2 * i / d_model * np.log(10000.0))
        corner = np.zeros((d_model // 2, d_model // 2))
        corner[i, i] = 1.0
        m += np.kron(corner, np.array([[np.cos(b), np.sin(b)], [-np.sin(b), np.cos(b)]]))
    return m


def offset_torch_then_numpy(k, d_model):
    omega = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    c, s = torch.cos(k * omega), torch.sin(k * omega)
    blocks = [
        torch.stack([torch.stack([ci, si]), torch.stack([-si, ci])])
        for ci, si in zip(c, s, strict=True)
    ]
    return torch.block_diag(*blocks).numpy()


def gap_numpy(fn, x, perm):
    return float(np.abs(fn(x[..., perm, :]) - fn(x)[..., perm, :]).max())


def gap_take(fn, x, perm):
    a = fn(np.take(x, perm, axis=-2))
    b = np.take(fn(x), perm, axis=-2)
    return np.max(np.abs(a - b))  # a NumPy float: accepted


def gap_loop(fn, x, perm):
    out, out_p = fn(x), fn(x[..., perm, :])
    return max(float(np.max(np.abs(out_p[..., j, :] - out[..., p, :]))) for j, p in enumerate(perm))


def rope_complex(x, positions):
    d = x.shape[-1]
    z = x[..., 0::2] + 1j * x[..., 1::2]
    omega = 10000.0 ** (-np.arange(0, d, 2) / d)
    z = z * np.exp(1j * np.outer(positions, omega))
    return np.stack([z.real, z.imag], axis=-1).reshape(x.shape)


def rope_matrices(x, positions):
    """One 2x2 rotation per pair and position, applied with einsum."""
    d = x.shape[-1]
    theta = np.outer(positions, 10000.0 ** (-np.arange(0, d, 2) / d))  # (T, d/2)
    c, s = np.cos(theta), np.sin(theta)
    rot = np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)  # (T, d/2, 2, 2)
    pairs = x.reshape(*x.shape[:-1], d // 2, 2)  # (..., T, d/2, 2)
    return np.einsum("tiab,...tib->...tia", rot, pairs).reshape(x.shape)


def rope_torch_then_numpy(x, positions):
    return attnlab.apply_rope(torch.from_numpy(x), torch.as_tensor(positions)).numpy()


def scores_with_lib(q, k):
    pos = np.arange(len(q))
    return attnlab.apply_rope(q, pos) @ attnlab.apply_rope(k, pos).T / math.sqrt(q.shape[-1])


def scores_relative(q, k):
    """Rotate the keys only, by the offset s - t of each pair: same scores, another route."""
    T, d = q.shape
    s = np.empty((T, T))
    for t in range(T):
        k_rel = rope_complex(k, np.arange(T) - t)  # key s turned by (s - t) ω
        s[t] = k_rel @ q[t] / math.sqrt(d)
    return s


class LayerNumpyBuffer(nn.Module):
    def __init__(self, d_model, max_len):
        super().__init__()
        self.register_buffer("pe", torch.from_numpy(sinusoidal_loops(max_len, d_model)))

    def forward(self, x):
        return x + self.pe[: x.shape[1]].to(x.dtype)


class LayerTorchTable(nn.Module):
    """Builds the table in torch, keeps it in float64, and adds it in x's dtype (a float32
    table, as many tutorials build it, loses a float64 x's precision: not a right answer)."""

    def __init__(self, d_model, max_len):
        super().__init__()
        pos = torch.arange(max_len, dtype=torch.float64)[:, None]
        j = torch.arange(d_model)
        angles = pos * torch.exp(-math.log(10000.0) * (j - j % 2) / d_model)
        pe = torch.where(j % 2 == 0, torch.sin(angles), torch.cos(angles))
        self.register_buffer("pe", pe.unsqueeze(0), persistent=False)  # (1, L, D)

    def forward(self, x):
        return x + self.pe[:, : x.size(1)].to(x.dtype)


CORRECT = {
    "sinusoidal_encoding": (
        check_sinusoidal_encoding,
        [
            attnlab.sinusoidal_encoding,
            sinusoidal_loops,
            sinusoidal_interleave,
            sinusoidal_torch_then_numpy,
        ],
    ),
    "offset_matrix": (
        check_offset_matrix,
        [attnlab.offset_matrix, offset_loops, offset_kron, offset_torch_then_numpy],
    ),
    "permutation_gap": (
        check_permutation_gap,
        [attnlab.permutation_gap, gap_numpy, gap_take, gap_loop],
    ),
    "rope": (check_rope, [attnlab.apply_rope, rope_complex, rope_matrices, rope_torch_then_numpy]),
    "rope_scores": (check_rope_scores, [scores_with_lib, scores_relative]),
    "positional_encoding": (
        check_positional_encoding,
        [attnlab.SinusoidalPositionalEncoding, LayerNumpyBuffer, LayerTorchTable],
    ),
}


# Every right answer, graded by tests/grading/test_correct_answers.py (one test for all chapters).
CORRECT_ANSWERS = [(name, a) for name, (_, answers) in CORRECT.items() for a in answers]


def test_every_function_exercise_has_at_least_four_cases():
    for grader in (SINUSOIDAL, OFFSET, PERMUTATION, ROPE, ROPE_SCORES):
        assert len(grader.cases) >= 4, grader.name
    assert len(POSITIONAL_ENCODING.values.cases) >= 4


def test_the_order_of_the_exercises_is_the_notebooks():
    assert GRADERS.names == (
        "sinusoidal_encoding",
        "offset_matrix",
        "self_dot",
        "sign_of_offset",
        "permutation_gap",
        "rope",
        "rope_scores",
        "positional_encoding",
    )
    assert GRADERS.chapter == 5


# ------------------------------------------------------------------ stubs


def stub(*args, **kwargs):
    raise NotImplementedError("Exercise 5.1")


@pytest.mark.parametrize("name", [n for n in CORRECT if n != "positional_encoding"])
def test_stub_is_not_attempted(name):
    check, _ = CORRECT[name]
    result = check(stub)
    assert result.status == "not attempted", result.text
    assert not result.passed


class StubLayer(nn.Module):
    def __init__(self, d_model, max_len):
        super().__init__()
        raise NotImplementedError("Exercise 5.8")

    def forward(self, x):
        raise NotImplementedError("Exercise 5.9")


class HalfStubLayer(nn.Module):
    """__init__ done, forward still a stub."""

    def __init__(self, d_model, max_len):
        super().__init__()
        self.register_buffer("pe", torch.zeros(max_len, d_model))

    def forward(self, x):
        raise NotImplementedError("Exercise 5.9")


@pytest.mark.parametrize("layer", [StubLayer, HalfStubLayer])
def test_layer_stubs_are_not_attempted(layer):
    result = check_positional_encoding(layer)
    assert result.status == "not attempted", result.text
    assert "__init__ and forward" in result.message


# ------------------------------------------------------------------ planted mistakes


# Each planted mistake is told apart from the others: tests/grading/test_chapters.py


def test_each_grader_has_at_least_three_planted_mistakes():
    for grader in (SINUSOIDAL, OFFSET, PERMUTATION, ROPE, ROPE_SCORES, POSITIONAL_ENCODING.values):
        assert len(grader.mistakes) >= 3, grader.name


# Learner-written bugs (not the planted functions themselves) get the planted diagnosis.


def sinusoidal_own_frequency(length, d_model):
    pos = np.arange(length)[:, None]
    j = np.arange(d_model)
    angles = pos / 10000 ** (j / d_model)  # bug: j instead of 2i
    return np.where(j % 2 == 0, np.sin(angles), np.cos(angles))


def sinusoidal_from_one(length, d_model):
    return attnlab.sinusoidal_encoding(length + 1, d_model)[1:]


def offset_transposed(k, d_model):
    return offset_loops(k, d_model).T


def gap_inverse(fn, x, perm):
    inverse = np.argsort(perm)
    return float(np.max(np.abs(fn(x[..., perm, :]) - fn(x)[..., inverse, :])))


def rope_backwards(x, positions):
    return rope_complex(x, -np.asarray(positions))


def rope_rotate_half(x, positions):
    d = x.shape[-1]
    theta = np.outer(positions, 10000.0 ** (-np.arange(0, d, 2) / d))
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    rotated = np.concatenate([-x2, x1], axis=-1)
    return x * np.concatenate([np.cos(theta)] * 2, -1) + rotated * np.concatenate(
        [np.sin(theta)] * 2, -1
    )


def scores_queries_only(q, k):
    return rope_complex(q, np.arange(len(q))) @ k.T / math.sqrt(q.shape[-1])


@pytest.mark.parametrize(
    ("check", "bug", "words"),
    [
        (check_sinusoidal_encoding, sinusoidal_own_frequency, "share one"),
        (check_sinusoidal_encoding, sinusoidal_from_one, "start at 1"),
        (check_offset_matrix, offset_transposed, "backwards"),
        (check_permutation_gap, gap_inverse, "inverse permutation"),
        (check_rope, rope_backwards, "wrong way"),
        (check_rope, rope_rotate_half, "rotate half"),
        (check_rope_scores, scores_queries_only, "queries only"),
    ],
)
def test_learner_written_bugs_are_diagnosed(check, bug, words):
    result = check(bug)
    assert not result.passed
    assert words in (result.diagnosis or ""), result.text


def test_odd_d_model_broadcast_error_gets_the_hint():
    def no_odd(length, d_model):
        pos = np.arange(length)[:, None]
        angles = pos * 10000.0 ** (-np.arange(0, d_model, 2) / d_model)
        pe = np.zeros((length, d_model))
        pe[:, 0::2] = np.sin(angles)
        pe[:, 1::2] = np.cos(angles)  # one column too many when D is odd
        return pe

    result = check_sinusoidal_encoding(no_odd)
    assert result.status == "raised an exception"
    assert "odd D" in result.diagnosis and "floor(D/2)" in result.diagnosis


def test_permuting_the_batch_axis_gets_the_token_axis_hint():
    result = check_permutation_gap(
        lambda fn, x, perm: gap_numpy(fn, x[perm], list(range(len(perm))))
    )
    assert result.status == "raised an exception"
    assert "axis -2" in result.diagnosis


def test_grader_messages_name_the_functions_not_their_addresses():
    result = check_permutation_gap(lambda fn, x, perm: 1.0)
    assert "fn=attention without positions" in result.message
    assert "0x" not in result.message


# ------------------------------------------------------------------ the layer (nn.Module)


class LayerParameter(nn.Module):
    def __init__(self, d_model, max_len):
        super().__init__()
        self.pe = nn.Parameter(torch.from_numpy(sinusoidal_loops(max_len, d_model)))

    def forward(self, x):
        return x + self.pe[: x.shape[1]].to(x.dtype)


class LayerPlainAttribute(nn.Module):
    def __init__(self, d_model, max_len):
        super().__init__()
        self.pe = torch.from_numpy(sinusoidal_loops(max_len, d_model))

    def forward(self, x):
        return x + self.pe[: x.shape[1]].to(x.dtype)


class LayerNoSlice(LayerNumpyBuffer):
    def forward(self, x):
        return x + self.pe.to(x.dtype)


class LayerFloat64(LayerNumpyBuffer):
    def forward(self, x):
        return x + self.pe[: x.shape[1]]


class LayerInPlace(LayerNumpyBuffer):
    def forward(self, x):
        x += self.pe[: x.shape[1]].to(x.dtype)
        return x


class LayerTableOnly(LayerNumpyBuffer):
    def forward(self, x):
        return self.pe[: x.shape[1]].to(x.dtype)


class LayerTimes(LayerNumpyBuffer):
    def forward(self, x):
        return x * self.pe[: x.shape[1]].to(x.dtype)


class LayerFromOne(nn.Module):
    def __init__(self, d_model, max_len):
        super().__init__()
        self.register_buffer("pe", torch.from_numpy(sinusoidal_loops(max_len + 1, d_model)[1:]))

    def forward(self, x):
        return x + self.pe[: x.shape[1]].to(x.dtype)


class LayerBadSignature(nn.Module):
    def __init__(self, max_len):
        super().__init__()


@pytest.mark.parametrize(
    ("layer", "status", "words"),
    [
        (LayerParameter, "wrong type", "register_buffer"),
        (LayerPlainAttribute, "wrong type", "register_buffer"),
        (LayerNoSlice, "raised an exception", "were not cut to x's length"),
        (LayerFloat64, "wrong type", "keep the input's precision"),
        (LayerInPlace, "modified its input", "in place"),
        (LayerTableOnly, "wrong shape", "returned the table alone"),
        (LayerTimes, "wrong values", "multiplied"),
        (LayerFromOne, "wrong values", "starts at position 1"),
        (LayerBadSignature, "raised an exception", "PositionalEncoding(d_model, max_len)"),
    ],
)
def test_layer_mistakes_are_diagnosed(layer, status, words):
    result = check_positional_encoding(layer)
    assert result.status == status, result.text
    assert words in (result.diagnosis or "") + result.message, result.text


@pytest.mark.parametrize(
    "not_a_class", [attnlab.SinusoidalPositionalEncoding(4, 16), "layer", None]
)
def test_layer_check_wants_the_class(not_a_class):
    result = check_positional_encoding(not_a_class)
    assert result.status == "wrong type"
    assert "pass the class itself" in result.diagnosis


# ------------------------------------------------------------------ prediction questions


# Each listed wrong answer (and the exact answer, and none): tests/grading/test_chapters.py


@pytest.mark.parametrize(
    ("check", "right"),
    [
        (check_self_dot, [32, 32.0, np.float64(32.0), torch.tensor(32.0)]),
        (check_sign_of_offset, ["equal", "Equal", " EQUAL "]),
    ],
)
def test_questions_accept_the_answer_however_written(check, right):
    for answer in right:
        result = check(answer)
        assert result.passed, result.text


def test_the_predictions_are_what_the_code_computes():
    pe = attnlab.sinusoidal_encoding(20, 64)
    assert pe[5] @ pe[5] == pytest.approx(SELF_DOT.answer, abs=1e-9)
    assert pe[10] @ pe[13] == pytest.approx(pe[10] @ pe[7], abs=1e-12)
    assert SIGN_OF_OFFSET.answer == "equal"


def test_questions_unanswered_and_wrong_types():
    assert check_self_dot(...).status == "not attempted"
    assert check_self_dot("32").status == "wrong type"
    assert check_sign_of_offset("later").status == "wrong type"


def test_summary_lists_every_exercise_in_order():
    check_self_dot(32)
    table = summary()
    assert table.title == "Chapter 5 exercises"
    assert [name for name, _ in table.rows] == list(GRADERS.names)


def test_a_module_the_course_lacks_is_named_not_blamed_on_the_learner():
    """A right answer through a library the course does not install (scipy's block_diag):
    the diagnosis says the module is missing from the environment, not what to fix."""

    def offset_through_a_missing_module(k, d_model):
        import attnlab_no_such_module  # noqa: F401  (stands for scipy, not installed)

        return np.eye(d_model)

    result = check_offset_matrix(offset_through_a_missing_module)
    assert not result.passed and result.diagnosed
    assert "`attnlab_no_such_module` is not part of the course's environment" in result.diagnosis
