"""Chapter 8's graders: right answers pass, stubs and planted bugs get the expected report.

The "learner" functions below are written here, independently of the planted mistakes in
``attnlab.grading.ch08``, the way a learner would write them (loops, torch, einsum, ...).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from attnlab import grading
from attnlab.grading.ch08 import (
    CACHE_MEMORY,
    CAUSAL_TILES,
    GRADERS,
    check_cache_memory,
    check_gqa,
    check_gqa_module,
    check_kv_step,
    check_online_softmax,
    check_online_update,
    check_tile_update,
    summary,
)
from attnlab.mechanism.scale import GroupedQueryAttention, repeat_kv


@pytest.fixture(autouse=True)
def _fresh_registry():
    grading.reset()
    yield
    grading.reset()


# ------------------------------------------------------------------ correct answers


def update_numpy(m, l, block):  # noqa: E741
    m_new = np.maximum(m, block.max(axis=-1))
    return m_new, l * np.exp(m - m_new) + np.exp(block - m_new[..., None]).sum(axis=-1)


def update_loop(m, l, block):  # noqa: E741
    """One row and one score at a time, in plain Python."""
    m_out, l_out = np.array(m, dtype=float), np.array(l, dtype=float)
    for idx in np.ndindex(block.shape[:-1]):
        mi, li = float(m[idx]), float(l[idx])
        for x in block[idx]:
            new = max(mi, float(x))
            if new == -math.inf:
                continue
            li = li * math.exp(mi - new) + math.exp(float(x) - new)
            mi = new
        m_out[idx], l_out[idx] = mi, li
    return m_out, l_out


def update_torch(m, l, block):  # noqa: E741
    m, l, block = (torch.from_numpy(np.asarray(a)) for a in (m, l, block))  # noqa: E741
    m_new = torch.maximum(m, block.amax(dim=-1))
    l_new = l * torch.exp(m - m_new) + torch.exp(block - m_new[..., None]).sum(dim=-1)
    return m_new.numpy(), l_new.numpy()


def online_softmax_numpy(x, block_size):
    m, l = np.full(x.shape[:-1], -np.inf), np.zeros(x.shape[:-1])  # noqa: E741
    for start in range(0, x.shape[-1], block_size):
        block = x[..., start : start + block_size]
        m_new = np.maximum(m, block.max(axis=-1))
        safe = np.where(np.isneginf(m_new), 0.0, m_new)
        l = l * np.exp(m - safe) + np.exp(block - safe[..., None]).sum(-1)  # noqa: E741
        m = m_new
    out = np.zeros_like(x)
    seen = l > 0
    out[seen] = np.exp(x[seen] - m[seen][:, None]) / l[seen][:, None]
    return out


def online_softmax_two_maxima(x, block_size):
    """Keeps the running statistics in a list of per-block pairs, then merges them."""
    stats = []
    for start in range(0, x.shape[-1], block_size):
        block = x[..., start : start + block_size]
        bm = block.max(axis=-1)
        finite = np.isfinite(bm)
        bl = np.where(finite, np.exp(block - np.where(finite, bm, 0)[..., None]).sum(-1), 0)
        stats.append((bm, bl))
    m = np.max([s[0] for s in stats], axis=0)
    safe = np.where(np.isfinite(m), m, 0.0)
    l = sum(np.where(np.isfinite(bm), bl * np.exp(bm - safe), 0) for bm, bl in stats)  # noqa: E741
    with np.errstate(invalid="ignore", divide="ignore"):
        w = np.exp(x - safe[..., None]) / l[..., None]
    return np.nan_to_num(w, nan=0.0)


def tile_numpy(m, l, acc, scores, v):  # noqa: E741
    m_new = np.maximum(m, scores.max(-1))
    alpha = np.exp(m - m_new)
    p = np.exp(scores - m_new[..., None])
    return m_new, alpha * l + p.sum(-1), alpha[..., None] * acc + p @ v


def tile_einsum(m, l, acc, scores, v):  # noqa: E741
    m_new = np.fmax(m, np.max(scores, axis=-1))
    alpha = np.exp(m - m_new)
    p = np.exp(scores - np.expand_dims(m_new, -1))
    acc_new = np.einsum("...t,...td->...td", alpha, acc) + np.einsum("...ts,...sd->...td", p, v)
    return m_new, alpha * l + p.sum(-1), acc_new


def kv_step_torch(q, k, v, k_cache, v_cache):
    k_cache, v_cache = torch.cat([k_cache, k], -2), torch.cat([v_cache, v], -2)
    weights = torch.softmax(q @ k_cache.transpose(-1, -2) / q.shape[-1] ** 0.5, -1)
    return weights @ v_cache, k_cache, v_cache


def kv_step_sdpa(q, k, v, k_cache, v_cache):
    k_all, v_all = torch.concat((k_cache, k), dim=2), torch.concat((v_cache, v), dim=2)
    return torch.nn.functional.scaled_dot_product_attention(q, k_all, v_all), k_all, v_all


def gqa_interleave(q, k, v):
    n = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(n, 1), v.repeat_interleave(n, 1)
    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -1) @ v


def gqa_grouped_einsum(q, k, v):
    B, H, T, d = q.shape
    G = k.shape[1]
    qg = q.reshape(B, G, H // G, T, d)
    scores = torch.einsum("bgjtd,bgsd->bgjts", qg, k) / math.sqrt(d)
    out = torch.einsum("bgjts,bgsd->bgjtd", scores.softmax(-1), v)
    return out.reshape(B, H, T, d)


def gqa_loop(q, k, v):
    H, G = q.shape[1], k.shape[1]
    heads = []
    for h in range(H):
        g = h // (H // G)
        s = q[:, h] @ k[:, g].transpose(-2, -1) / math.sqrt(q.shape[-1])
        heads.append(torch.softmax(s, dim=-1) @ v[:, g])
    return torch.stack(heads, dim=1)


def gqa_sdpa(q, k, v):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)


class GQALayer(nn.Module):
    """The straightforward layer: repeat_interleave the key-value heads, masked_fill."""

    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__()
        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_o = nn.Linear(d_model, d_model)

    def heads(self, x, n):
        return x.view(x.shape[0], x.shape[1], n, self.d).transpose(1, 2)

    def attend(self, q, k, v, mask):
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.softmax(dim=-1)
        return weights @ v, weights

    def forward(self, x, mask=None):
        q = self.heads(self.W_q(x), self.H)
        k = self.heads(self.W_k(x), self.G).repeat_interleave(self.H // self.G, dim=1)
        v = self.heads(self.W_v(x), self.G).repeat_interleave(self.H // self.G, dim=1)
        out, weights = self.attend(q, k, v, mask)
        B, _, T, _ = out.shape
        return self.W_o(out.transpose(1, 2).reshape(B, T, -1)), weights


class GQAGroupedEinsum(GQALayer):
    """No copy of the keys: the queries are grouped, (B, G, H/G, T, d), and einsum does it."""

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q = self.W_q(x).reshape(B, T, self.G, self.H // self.G, self.d).permute(0, 2, 3, 1, 4)
        k = self.W_k(x).reshape(B, T, self.G, self.d).permute(0, 2, 1, 3)  # (B, G, S, d)
        v = self.W_v(x).reshape(B, T, self.G, self.d).permute(0, 2, 1, 3)
        scores = torch.einsum("bgjtd,bgsd->bgjts", q, k) * self.d**-0.5
        if mask is not None:
            mask = mask.reshape(*mask.shape[:-3], 1, *mask.shape[-3:]) if mask.ndim == 4 else mask
            scores = torch.where(mask, scores, torch.tensor(-math.inf, dtype=scores.dtype))
        weights = torch.softmax(scores, dim=-1)  # (B, G, H/G, T, S)
        out = torch.einsum("bgjts,bgsd->btgjd", weights, v).reshape(B, T, D)
        return self.W_o(out), weights.reshape(B, self.H, T, -1)


class GQALoop(GQALayer):
    """One query head at a time, each with its group's key-value head."""

    def forward(self, x, mask=None):
        q = self.heads(self.W_q(x), self.H)
        k, v = self.heads(self.W_k(x), self.G), self.heads(self.W_v(x), self.G)
        outs, all_weights = [], []
        for h in range(self.H):
            g = h // (self.H // self.G)
            m = None if mask is None else (mask if mask.ndim == 2 else mask[:, 0])
            out, weights = self.attend(q[:, h], k[:, g], v[:, g], m)
            outs.append(out)
            all_weights.append(weights)
        return self.W_o(torch.cat(outs, dim=-1)), torch.stack(all_weights, dim=1)


CORRECT = [
    ("online_update", check_online_update, update_numpy),
    ("online_update", check_online_update, update_loop),
    ("online_update", check_online_update, update_torch),
    ("online_softmax", check_online_softmax, online_softmax_numpy),
    ("online_softmax", check_online_softmax, online_softmax_two_maxima),
    ("tile_update", check_tile_update, tile_numpy),
    ("tile_update", check_tile_update, tile_einsum),
    ("kv_step", check_kv_step, kv_step_torch),
    ("kv_step", check_kv_step, kv_step_sdpa),
    ("gqa", check_gqa, gqa_interleave),
    ("gqa", check_gqa, gqa_grouped_einsum),
    ("gqa", check_gqa, gqa_loop),
    ("gqa", check_gqa, gqa_sdpa),
    ("gqa_module", check_gqa_module, GQALayer),
    ("gqa_module", check_gqa_module, GQAGroupedEinsum),
    ("gqa_module", check_gqa_module, GQALoop),
    ("gqa_module", check_gqa_module, GroupedQueryAttention),
]


# Every right answer, graded by tests/grading/test_correct_answers.py (one test for all chapters).
CORRECT_ANSWERS = [(name, fn) for name, _, fn in CORRECT]


def test_every_exercise_has_four_cases():
    assert all(len(GRADERS[name].cases) >= 4 for name, _, _ in CORRECT)


def test_the_references_pass():
    for grader in GRADERS:
        if hasattr(grader, "reference"):
            assert grader.check(grader.reference).passed, grader.name


def test_the_graders_are_in_notebook_order():
    assert GRADERS.names == (
        "online_update",
        "online_softmax",
        "tile_update",
        "kv_step",
        "gqa",
        "gqa_module",
        "cache_memory",
        "causal_tiles",
    )
    assert GRADERS.chapter == 8


# ------------------------------------------------------------------ stubs


def stub(*args, **kwargs):
    raise NotImplementedError("Exercise 8.1")


@pytest.mark.parametrize(
    "check",
    [check_online_update, check_online_softmax, check_tile_update, check_kv_step, check_gqa],
)
def test_stub_is_not_attempted(check):
    result = check(stub)
    assert result.status == "not attempted"
    assert not result.passed


class StubLayer(GQALayer):
    def forward(self, x, mask=None):
        raise NotImplementedError("Exercise 8.7")


class StubInit(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads):
        raise NotImplementedError("Exercise 8.6")


@pytest.mark.parametrize("layer", [StubLayer, StubInit])
def test_module_stub_is_not_attempted(layer):
    result = check_gqa_module(layer)
    assert result.status == "not attempted", result.text
    assert not result.passed


@pytest.mark.parametrize("not_a_class", [GQALayer(8, 4, 2), "GQALayer", None])
def test_module_check_wants_the_class(not_a_class):
    result = check_gqa_module(not_a_class)
    assert result.status == "wrong type"
    assert "check_gqa_module(MyGroupedQueryAttention)" in result.diagnosis


# ------------------------------------------------------------------ planted mistakes


def update_no_rescale(m, l, block):  # noqa: E741
    m_new = np.maximum(m, block.max(-1))
    return m_new, l + np.exp(block - m_new[..., None]).sum(-1)


def update_old_max(m, l, block):  # noqa: E741
    m_new = np.maximum(m, block.max(-1))
    return m_new, l * np.exp(m - m_new) + np.exp(block - m[..., None]).sum(-1)


def softmax_unguarded(x, block_size):
    m, l = np.full(x.shape[:-1], -np.inf), np.zeros(x.shape[:-1])  # noqa: E741
    for start in range(0, x.shape[-1], block_size):
        block = x[..., start : start + block_size]
        m_new = np.maximum(m, block.max(-1))
        l = l * np.exp(m - m_new) + np.exp(block - m_new[..., None]).sum(-1)  # noqa: E741
        m = m_new
    return np.exp(x - m[..., None]) / l[..., None]


def softmax_no_zero_rows(x, block_size):
    m, l = np.full(x.shape[:-1], -np.inf), np.zeros(x.shape[:-1])  # noqa: E741
    for start in range(0, x.shape[-1], block_size):
        block = x[..., start : start + block_size]
        m_new = np.maximum(m, block.max(-1))
        safe = np.where(np.isneginf(m_new), 0.0, m_new)
        l = l * np.exp(m - safe) + np.exp(block - safe[..., None]).sum(-1)  # noqa: E741
        m = m_new
    return np.exp(x - np.where(np.isneginf(m), 0.0, m)[..., None]) / l[..., None]


def softmax_unnormalised(x, block_size):
    m = np.max(x, axis=-1, keepdims=True)
    return np.exp(x - np.where(np.isneginf(m), 0.0, m))


def tile_no_acc_rescale(m, l, acc, scores, v):  # noqa: E741
    m_new = np.maximum(m, scores.max(-1))
    p = np.exp(scores - m_new[..., None])
    return m_new, np.exp(m - m_new) * l + p.sum(-1), acc + p @ v


def tile_no_l_rescale(m, l, acc, scores, v):  # noqa: E741
    m_new = np.maximum(m, scores.max(-1))
    alpha, p = np.exp(m - m_new), np.exp(scores - m_new[..., None])
    return m_new, l + p.sum(-1), alpha[..., None] * acc + p @ v


def tile_no_rescale(m, l, acc, scores, v):  # noqa: E741
    m_new = np.maximum(m, scores.max(-1))
    p = np.exp(scores - m_new[..., None])
    return m_new, l + p.sum(-1), acc + p @ v


def kv_cache_only(q, k, v, k_cache, v_cache):
    out = kv_step_torch(q, k_cache[..., :0, :], v_cache[..., :0, :], k_cache, v_cache)[0]
    return out, torch.cat([k_cache, k], -2), torch.cat([v_cache, v], -2)


def kv_prepend(q, k, v, k_cache, v_cache):
    return kv_step_torch(q, k_cache, v_cache, k, v)


def kv_unscaled(q, k, v, k_cache, v_cache):
    k_all, v_all = torch.cat([k_cache, k], -2), torch.cat([v_cache, v], -2)
    return torch.softmax(q @ k_all.transpose(-1, -2), -1) @ v_all, k_all, v_all


def kv_old_caches(q, k, v, k_cache, v_cache):
    out = kv_step_torch(q, k, v, k_cache, v_cache)[0]
    return out, k_cache, v_cache


def gqa_tiled_heads(q, k, v):
    n = q.shape[1] // k.shape[1]
    k, v = k.repeat(1, n, 1, 1), v.repeat(1, n, 1, 1)  # heads 0, 1, 0, 1, ...
    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -1) @ v


def gqa_unscaled(q, k, v):
    k, v = repeat_kv(k, q.shape[1] // k.shape[1]), repeat_kv(v, q.shape[1] // k.shape[1])
    return torch.softmax(q @ k.transpose(-2, -1), -1) @ v


def gqa_wrong_axis(q, k, v):
    k, v = repeat_kv(k, q.shape[1] // k.shape[1]), repeat_kv(v, q.shape[1] // k.shape[1])
    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -2) @ v


def gqa_layer_with(bug):
    """A learner's GQALayer with one bug, written independently of the planted ones."""

    class Buggy(GQALayer):
        def __init__(self, d_model, n_heads, n_kv_heads):
            super().__init__(d_model, n_heads, n_kv_heads)
            if bug == "W_k with every head":
                self.W_k = nn.Linear(d_model, d_model)
            if bug == "W_v with every head":
                self.W_v = nn.Linear(d_model, d_model)
            if bug == "W_q with the kv heads":
                self.W_q = nn.Linear(d_model, n_kv_heads * self.d)
            if bug == "other names":
                self.q_proj = self.W_q
                del self.W_q

        def attend(self, q, k, v, mask):
            scores = q @ k.transpose(-2, -1)
            if bug != "no scale":
                scores = scores / math.sqrt(self.d)
            if mask is not None and bug != "mask ignored":
                hide = mask if bug == "mask = hide" else mask.logical_not()
                scores = scores.masked_fill(hide, float("-inf"))
            weights = scores.softmax(dim=-2 if bug == "softmax over queries" else -1)
            return weights @ v, weights

        def forward(self, x, mask=None):
            W_q = self.q_proj if bug == "other names" else self.W_q
            n = self.H // self.G
            q = self.heads(W_q(x), self.H)
            k, v = self.heads(self.W_k(x), self.G), self.heads(self.W_v(x), self.G)
            if bug == "repeat":
                k, v = k.repeat(1, n, 1, 1), v.repeat(1, n, 1, 1)
            else:
                k, v = k.repeat_interleave(n, 1), v.repeat_interleave(n, 1)
            out, weights = self.attend(q, k, v, mask)
            B, _, T, _ = out.shape
            if bug == "heads merged by reshape":
                concat = out.reshape(B, T, -1)
            else:
                concat = out.transpose(1, 2).reshape(B, T, -1)
            return (concat if bug == "no W_o" else self.W_o(concat)), weights

    return Buggy


PLANTED = [
    # (check, learner's bug, status, words expected in the diagnosis)
    (check_online_update, update_no_rescale, "wrong values", "did not rescale the old sum"),
    (check_online_update, update_old_max, "NaN or inf", "against the old max m"),
    (check_online_update, lambda m, s, b: (b.max(-1), update_numpy(m, s, b)[1]), "NaN or inf", "block's max alone"),
    (check_online_softmax, softmax_unguarded, "NaN or inf", "starts with masked blocks"),
    (check_online_softmax, softmax_no_zero_rows, "NaN or inf", "no visible score gives 0/0"),
    (check_online_softmax, softmax_unnormalised, "wrong values", "forgot to normalise"),
    (check_tile_update, tile_no_acc_rescale, "wrong values", "rescaled `total` but not acc"),
    (check_tile_update, tile_no_l_rescale, "wrong values", "rescaled acc but not `total`"),
    (check_tile_update, tile_no_rescale, "wrong values", "rescaled neither"),
    (check_kv_step, kv_cache_only, "wrong values", "attended to the cache only"),
    (check_kv_step, kv_prepend, "wrong values", "put the new key and value first"),
    (check_kv_step, kv_unscaled, "wrong values", "not divided by √d"),
    (check_kv_step, kv_old_caches, "wrong shape", "returned the old caches"),
    (check_gqa, gqa_tiled_heads, "wrong values", "h % G"),
    (check_gqa, gqa_unscaled, "wrong values", "forgot to scale"),
    (check_gqa, gqa_wrong_axis, "wrong values", "wrong axis"),
    (check_gqa_module, gqa_layer_with("repeat"), "wrong values", "h % G"),
    (check_gqa_module, gqa_layer_with("no scale"), "wrong values", "did not scale"),
    (check_gqa_module, gqa_layer_with("softmax over queries"), "NaN or inf", "over the queries"),
    (check_gqa_module, gqa_layer_with("mask ignored"), "wrong values", "ignored the mask"),
    (check_gqa_module, gqa_layer_with("mask = hide"), "NaN or inf", "True means may attend"),
    (check_gqa_module, gqa_layer_with("heads merged by reshape"), "wrong values", "one reshape"),
    (check_gqa_module, gqa_layer_with("no W_o"), "wrong values", "without the output projection"),
    (check_gqa_module, gqa_layer_with("W_k with every head"), "raised an exception", "W_k and W_v project to the G"),
    (check_gqa_module, gqa_layer_with("W_v with every head"), "raised an exception", "W_k and W_v project to the G"),
    (check_gqa_module, gqa_layer_with("W_q with the kv heads"), "raised an exception", "W_q keeps all H"),
    (check_gqa_module, gqa_layer_with("other names"), "raised an exception", "name the four projections"),
]  # fmt: skip


@pytest.mark.parametrize(("check", "bug", "status", "words"), PLANTED)
def test_planted_bugs_get_the_expected_diagnosis(check, bug, status, words):
    result = check(bug)
    assert result.status == status, result.text
    assert result.diagnosed, result.text
    assert words in result.diagnosis, result.text


# ------------------------------------------------------------------ prediction questions


def test_cache_memory_answer_is_the_formula():
    from attnlab.mechanism.kvcache import kv_cache_bytes

    size = kv_cache_bytes(n_layers=24, n_kv_heads=4, d_head=64, seq_len=2048)
    assert size / 2**20 == CACHE_MEMORY.answer
    assert check_cache_memory(np.float64(48)).passed
    assert check_cache_memory("48").status == "wrong type"


def test_causal_tiles_answer_is_counted():
    i, j = np.indices((8, 8))
    assert int((j <= i).sum()) == CAUSAL_TILES.answer


def test_summary_lists_every_exercise():
    check_gqa(gqa_interleave)
    table = summary()
    assert table.title == "Chapter 8 exercises"
    assert [name for name, _ in table.rows] == list(GRADERS.names)


def _blocks_split(x, block_size):
    """Right, and block by block: np.array_split along the last axis, a loop over the pieces."""
    m, total = np.full(x.shape[:-1], -np.inf), np.zeros(x.shape[:-1])
    n = x.shape[-1]
    for block in np.array_split(x, range(block_size, n, block_size), axis=-1):
        m_new = np.maximum(m, block.max(axis=-1))
        safe = np.where(np.isneginf(m_new), 0.0, m_new)
        total = total * np.exp(m - safe) + np.exp(block - safe[..., None]).sum(axis=-1)
        m = m_new
    e = np.exp(x - np.where(np.isneginf(m), 0.0, m)[..., None])
    return np.where(total[..., None] > 0, e / np.where(total > 0, total, 1.0)[..., None], 0.0)


def _one_pass(x, block_size):
    m = x.max(axis=-1, keepdims=True)
    e = np.exp(x - np.where(np.isneginf(m), 0.0, m))
    s = e.sum(axis=-1, keepdims=True)
    return e / np.where(s == 0, 1.0, s)


def test_the_online_softmax_must_walk_the_row_in_blocks():
    grading.reset()
    assert check_online_softmax(_blocks_split).passed
    grading.reset()
    refused = check_online_softmax(_one_pass)
    assert not refused.passed and refused.diagnosed
    assert "not block by block" in refused.message and "10 scores" in refused.message


def test_an_input_is_called_unused_only_if_no_case_moves_with_it():
    """On the first tile alpha = 0, so a learner's alpha·(p v) hides `v` there: the
    forensic must see that `v` moves the result on a later tile before it says "never
    uses" (the fifth learner round was told so about code that uses `v`)."""

    def step(m, total, acc, scores, v):
        m_new = np.maximum(m, scores.max(-1))
        alpha = np.exp(np.where(np.isfinite(m), m - m_new, -np.inf))
        p = np.exp(scores - m_new[..., None])
        return m_new, alpha * total + p.sum(-1), alpha, p

    def ignores_v(m, total, acc, scores, v):
        m_new, total_new, alpha, p = step(m, total, acc, scores, v)
        return m_new, total_new, alpha[..., None] * acc + p.sum(-1, keepdims=True)

    def hides_v_on_the_first_tile(m, total, acc, scores, v):  # no planted mistake
        m_new, total_new, alpha, p = step(m, total, acc, scores, v)
        return m_new, total_new, alpha[..., None] * acc + 1.5 * (alpha**2)[..., None] * (p @ v)

    said = "never uses the `v` it is given"
    assert said in check_tile_update(ignores_v).diagnosis
    result = check_tile_update(hides_v_on_the_first_tile)
    assert not result.passed
    assert said not in (result.diagnosis or "")
