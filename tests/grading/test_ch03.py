"""Chapter 3's graders: right answers pass, stubs and planted bugs get the expected report.

The "learner" answers below are written here, independently of the planted mistakes in
``attnlab.grading.ch03``, in several styles (NumPy, torch, loops, einsum), the way learners
write them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from attnlab.grading.ch03 import (
    ADDITIVE,
    CROSS_COLUMNS,
    GRADERS,
    RAW_SPREAD,
    UNSCALED_WEIGHT,
    check_additive_scores,
    check_attention,
    check_attention_torch,
    check_cross_columns,
    check_raw_spread,
    check_self_attention_module,
    check_slide_keys,
    check_unscaled_weight,
    summary,
)
from attnlab.grading.status import (
    EXCEPTION,
    IN_PLACE,
    NOT_ATTEMPTED,
    NOT_FINITE,
    PASSED,
    WRONG_SHAPE,
    WRONG_TYPE,
    WRONG_VALUES,
)

# ------------------------------------------------------------------ correct answers


def slide_vectorised(q, k, targets):
    return k + ((targets - k @ q) / (q @ q))[:, None] * q


def slide_loop(q, k, targets):
    new = k.copy()
    for j in range(k.shape[0]):
        c = (targets[j] - np.dot(q, k[j])) / np.dot(q, q)
        new[j] = k[j] + c * q
    return new


def slide_outer(q, k, targets):
    unit = q / np.linalg.norm(q)
    return k + np.outer((targets - k @ q) / np.linalg.norm(q), unit)


def _np_softmax_rows(scores):
    m = np.max(scores, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(scores - m)
    total = e.sum(axis=-1, keepdims=True)
    return np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)


def attention_where(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])  # (..., T, S)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = _np_softmax_rows(scores)
    return weights @ v, weights


def attention_einsum(q, k, v, mask=None):
    scores = np.einsum("...td,...sd->...ts", q, k) / math.sqrt(q.shape[-1])
    if mask is None:
        mask = np.ones(scores.shape, dtype=bool)
    mask = np.broadcast_to(mask, scores.shape)
    scores = np.where(mask, scores, -np.inf)
    with np.errstate(invalid="ignore"):
        e = np.exp(scores - scores.max(-1, keepdims=True))
        weights = e / e.sum(-1, keepdims=True)
    weights = np.nan_to_num(weights, nan=0.0)
    return np.einsum("...ts,...sd->...td", weights, v), weights


def attention_scale_queries(q, k, v, mask=None):
    q = q / math.sqrt(q.shape[-1])  # scaling q first is the same
    scores = q @ k.swapaxes(-1, -2)
    visible = np.ones(scores.shape, bool) if mask is None else np.broadcast_to(mask, scores.shape)
    scores = np.where(visible, scores, -np.inf)
    weights = np.zeros_like(scores)
    rows = visible.any(-1)
    s = scores[rows]
    e = np.exp(s - s.max(-1, keepdims=True))
    weights[rows] = e / e.sum(-1, keepdims=True)
    return weights @ v, weights


def torch_masked_fill(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v, weights


def torch_where(q, k, v, mask=None):
    scores = torch.einsum("...td,...sd->...ts", q, k) * q.shape[-1] ** -0.5
    if mask is None:
        return torch.softmax(scores, -1) @ v, torch.softmax(scores, -1)
    scores = torch.where(mask, scores, torch.tensor(-math.inf, dtype=scores.dtype))
    weights = torch.softmax(scores, -1)
    weights = torch.where(mask.any(-1, keepdim=True), weights, torch.zeros_like(weights))
    return weights @ v, weights


def additive_broadcast(q, k, W_a, U_a, v_a):
    return np.tanh((q @ W_a)[..., :, None, :] + (k @ U_a)[..., None, :, :]) @ v_a


def additive_einsum(q, k, W_a, U_a, v_a):
    hq = np.einsum("...td,dh->...th", q, W_a)
    hk = np.einsum("...sd,dh->...sh", k, U_a)
    return np.einsum("...tsh,h->...ts", np.tanh(hq[..., :, None, :] + hk[..., None, :, :]), v_a)


def additive_loops(q, k, W_a, U_a, v_a):
    lead = np.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    q, k = np.broadcast_to(q, (*lead, *q.shape[-2:])), np.broadcast_to(k, (*lead, *k.shape[-2:]))
    out = np.zeros((*lead, q.shape[-2], k.shape[-2]))
    for idx in np.ndindex(*lead):
        for i in range(q.shape[-2]):
            for j in range(k.shape[-2]):
                out[(*idx, i, j)] = v_a @ np.tanh(q[(*idx, i)] @ W_a + k[(*idx, j)] @ U_a)
    return out


class ModuleLinear(nn.Module):
    def __init__(self, d_model, d_head):
        super().__init__()
        self.W_q = nn.Linear(d_model, d_head, bias=False)
        self.W_k = nn.Linear(d_model, d_head, bias=False)
        self.W_v = nn.Linear(d_model, d_head, bias=False)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)  # (B, T, d)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)  # a row that sees no key: 0
        return weights @ v, weights


class ModuleEinsum(ModuleLinear):
    def forward(self, x, mask=None):
        q = torch.einsum("btd,hd->bth", x, self.W_q.weight)
        k = torch.einsum("btd,hd->bth", x, self.W_k.weight)
        v = torch.einsum("btd,hd->bth", x, self.W_v.weight)
        scores = torch.einsum("bth,bsh->bts", q, k) / q.shape[-1] ** 0.5
        if mask is not None:
            scores = torch.where(mask, scores, -torch.inf)
        weights = torch.where(torch.isinf(scores).all(-1, keepdim=True), 0.0, scores.softmax(-1))
        return torch.einsum("bts,bsh->bth", weights, v), weights


class ModuleSdpa(ModuleLinear):
    """The weights by hand, the output from PyTorch's own function."""

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = q @ k.mT / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, -math.inf)
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return out.nan_to_num(0.0), scores.softmax(-1).nan_to_num(0.0)


CORRECT = {
    "slide_keys": (check_slide_keys, [slide_vectorised, slide_loop, slide_outer]),
    "attention": (check_attention, [attention_where, attention_einsum, attention_scale_queries]),
    "attention_torch": (check_attention_torch, [torch_masked_fill, torch_where]),
    "additive_scores": (
        check_additive_scores,
        [additive_broadcast, additive_einsum],
    ),
    "self_attention_module": (
        check_self_attention_module,
        [ModuleLinear, ModuleEinsum, ModuleSdpa],
    ),
}


# Every right answer, graded by tests/grading/test_correct_answers.py (one test for all chapters).
CORRECT_ANSWERS = [(name, a) for name, (_, answers) in CORRECT.items() for a in answers]


def test_every_graded_exercise_has_several_correct_answers_tested():
    graded = [n for n in GRADERS.names if n in CORRECT]
    assert graded == [n for n in GRADERS.names if n not in QUESTIONS]
    assert all(len(CORRECT[n][1]) >= 2 for n in graded)


# ------------------------------------------------------------------ stubs


def _stub(*args, **kwargs):
    raise NotImplementedError("Exercise 3.1")


class ModuleStub(nn.Module):
    def __init__(self, d_model, d_head):
        super().__init__()
        raise NotImplementedError("Exercise 3.5")

    def forward(self, x, mask=None):
        raise NotImplementedError("Exercise 3.6")


class ForwardStub(ModuleLinear):
    def forward(self, x, mask=None):
        raise NotImplementedError("Exercise 3.6")


@pytest.mark.parametrize(
    ("check", "stub"),
    [
        (check_slide_keys, _stub),
        (check_attention, _stub),
        (check_attention_torch, _stub),
        (check_additive_scores, _stub),
        (check_self_attention_module, ModuleStub),
        (check_self_attention_module, ForwardStub),
    ],
)
def test_stub_is_not_attempted(check, stub):
    assert check(stub).status == NOT_ATTEMPTED


# An unanswered question is "not attempted": tests/grading/test_chapters.py


# ------------------------------------------------------------------ planted mistakes

# Each planted mistake is told apart from the others: tests/grading/test_chapters.py


def slide_divided_by_norm(q, k, targets):
    return k + np.outer((targets - k @ q) / np.sqrt(np.sum(q**2)), q)


def slide_in_place(q, k, targets):
    k += ((targets - k @ q) / (q @ q))[:, None] * q
    return k


def attention_unscaled(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = _np_softmax_rows(scores)
    return weights @ v, weights


def attention_minus_1e9(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    weights = _np_softmax_rows(scores)
    return weights @ v, weights


def attention_nan_rows(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    e = np.exp(scores - scores.max(-1, keepdims=True))
    weights = e / e.sum(-1, keepdims=True)
    return weights @ v, weights


def attention_mask_after(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    weights = _np_softmax_rows(scores)
    if mask is not None:
        weights = weights * mask
    return weights @ v, weights


def attention_k_dot_T(q, k, v, mask=None):
    weights = _np_softmax_rows(q @ k.T / np.sqrt(q.shape[-1]))
    return weights @ v, weights


def torch_mask_not_inverted(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))  # fills where True: the visible keys
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v, weights


def torch_numpy_output(q, k, v, mask=None):
    out, weights = torch_masked_fill(q, k, v, mask)
    return out.numpy(), weights.numpy()


def additive_no_tanh(q, k, W_a, U_a, v_a):
    return ((q @ W_a)[..., :, None, :] + (k @ U_a)[..., None, :, :]) @ v_a


def additive_rowwise(q, k, W_a, U_a, v_a):
    return np.tanh(q @ W_a + k @ U_a) @ v_a


def additive_swapped(q, k, W_a, U_a, v_a):
    return np.tanh((q @ U_a)[..., :, None, :] + (k @ W_a)[..., None, :, :]) @ v_a


class ModuleUnscaled(ModuleLinear):
    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = q @ k.transpose(-2, -1)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
        return weights @ v, weights


class ModuleKeysFromWq(ModuleLinear):
    def forward(self, x, mask=None):
        q, v = self.W_q(x), self.W_v(x)
        scores = q @ q.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
        return weights @ v, weights


class ModuleWithBias(ModuleLinear):
    def __init__(self, d_model, d_head):
        super().__init__(d_model, d_head)
        self.W_q = nn.Linear(d_model, d_head)


class ModuleValuesAreX(ModuleLinear):
    def forward(self, x, mask=None):
        q, k = self.W_q(x), self.W_k(x)
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ x, weights


class ModuleOtherNames(nn.Module):
    def __init__(self, d_model, d_head):
        super().__init__()
        self.query = nn.Linear(d_model, d_head, bias=False)

    def forward(self, x, mask=None):
        return x, x


class ModuleSwappedSizes(ModuleLinear):
    def __init__(self, d_model, d_head):
        super().__init__(d_model, d_head)
        self.W_q = nn.Linear(d_head, d_model, bias=False)


class ModuleNoMask(ModuleLinear):
    def forward(self, x, mask=None):
        return super().forward(x)


BUGS = [
    (check_slide_keys, slide_divided_by_norm, WRONG_VALUES, "divide by q·q"),
    (check_slide_keys, slide_in_place, IN_PLACE, "in-place"),
    (check_attention, attention_unscaled, WRONG_VALUES, "forgot to scale"),
    (check_attention, attention_minus_1e9, WRONG_VALUES, "uniform weights"),
    (check_attention, attention_nan_rows, NOT_FINITE, "0/0 = NaN"),
    (check_attention, attention_mask_after, WRONG_VALUES, "masked after the softmax"),
    (check_attention, attention_k_dot_T, EXCEPTION, "LAST two axes"),
    (check_attention_torch, torch_mask_not_inverted, WRONG_VALUES, "True means *may attend*"),
    (check_attention_torch, torch_numpy_output, WRONG_TYPE, "torch"),
    (check_additive_scores, additive_no_tanh, WRONG_VALUES, "left out the tanh"),
    (check_additive_scores, additive_rowwise, EXCEPTION, "every query meets every key"),
    (check_additive_scores, additive_swapped, EXCEPTION, "W_a (d_q, h) for the queries"),
    (check_self_attention_module, ModuleUnscaled, WRONG_VALUES, "forgot to scale"),
    (check_self_attention_module, ModuleKeysFromWq, WRONG_VALUES, "W_q for the keys"),
    (check_self_attention_module, ModuleWithBias, EXCEPTION, "bias=False"),
    (check_self_attention_module, ModuleValuesAreX, WRONG_SHAPE, "project them too"),
    (check_self_attention_module, ModuleOtherNames, EXCEPTION, "name the projections"),
    (
        check_self_attention_module,
        ModuleSwappedSizes,
        EXCEPTION,
        "(out_features, in_features) weight",
    ),
    (check_self_attention_module, ModuleNoMask, WRONG_VALUES, "mask had no effect"),
    (check_self_attention_module, ModuleLinear(4, 2), WRONG_TYPE, "not an instance"),
]


@pytest.mark.parametrize(
    ("check", "bug", "status", "words"),
    BUGS,
    ids=lambda x: getattr(x, "__name__", type(x).__name__) if callable(x) else None,
)
def test_learner_bugs_get_the_expected_diagnosis(check, bug, status, words):
    result = check(bug)
    assert result.status == status, (result.message, result.diagnosis)
    assert words in (result.diagnosis or ""), (result.message, result.diagnosis)


def test_the_module_grader_compares_gradients():
    """A layer that gets out and weights right but blocks the gradient of W_k fails."""

    class Detached(ModuleLinear):
        def forward(self, x, mask=None):
            q, k, v = self.W_q(x), self.W_k(x).detach() + 0 * self.W_k(x), self.W_v(x)
            scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
            if mask is not None:
                scores = scores.masked_fill(~mask, float("-inf"))
            weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
            return weights @ v, weights

    result = check_self_attention_module(Detached)
    assert result.status == WRONG_VALUES
    assert "W_k.weight.grad" in result.message


# ------------------------------------------------------------------ questions

QUESTIONS = {
    "unscaled_weight": (UNSCALED_WEIGHT, check_unscaled_weight, 0.9999999),
    "raw_spread": (RAW_SPREAD, check_raw_spread, 8),
    "cross_columns": (CROSS_COLUMNS, check_cross_columns, 12),
}


@pytest.mark.parametrize("name", list(QUESTIONS))
def test_right_answers_pass_with_their_explanation(name):
    question, check, right = QUESTIONS[name]
    result = check(right)
    assert result.status == PASSED and result.explanation == question.explanation


# Each listed wrong answer (and the exact answer, and none): tests/grading/test_chapters.py


def test_the_unscaled_weight_matches_the_softmax():
    weights = torch.softmax(torch.tensor([112.0, 96.0], dtype=torch.float64), dim=0)
    assert check_unscaled_weight(weights[0]).passed
    assert check_raw_spread(float(np.sqrt(64))).passed


def test_summary_lists_every_exercise_in_order():
    check_slide_keys(slide_vectorised)
    table = summary()
    assert [name for name, _ in table.rows] == list(GRADERS.names)
    assert GRADERS.chapter == 3 and len(GRADERS) == 8


def test_wrong_shapes_are_reported_for_transposed_scores():
    result = check_additive_scores(ADDITIVE.mistakes[-1].fn)
    assert result.status == WRONG_SHAPE


def test_a_loop_is_refused_where_the_statement_forbids_it():
    """3.4 says "no Python loops (not even over the hidden units)": loops fail."""
    result = check_additive_scores(additive_loops)
    assert not result.passed
    assert "Python loop" in result.message and "broadcasting" in result.diagnosis
