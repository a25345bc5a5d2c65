"""Chapter 8's graders against wrong answers written as learners write them.

Wrong answers to exercises 8.1-8.7 and the predictions 8.8-8.9, written here without
looking at the graders' planted or generated mistakes: one maximum for every row, a
forgotten rescale, blocks that miss the short last one, a torch answer to a NumPy
exercise, ``torch.cat`` and ``repeat_interleave`` on the wrong axis, a layer that returns
``out`` alone or computes through NumPy, each with words its diagnosis must contain
(classes: see ``corpus.py``). The right answers written two ways or more are in
``test_ch08.py``.
"""

from __future__ import annotations

import importlib.util
import math
import warnings

import numpy as np
import pytest
import torch
from corpus import chapter_tests, classify
from learner_ch08 import LEARNER
from torch import nn

from attnlab.grading.ch08 import (
    check_cache_memory,
    check_causal_tiles,
    check_gqa,
    check_gqa_module,
    check_kv_step,
    check_online_softmax,
    check_online_update,
    check_tile_update,
)

CHECKS = {
    "online_update": check_online_update,
    "online_softmax": check_online_softmax,
    "tile_update": check_tile_update,
    "kv_step": check_kv_step,
    "gqa": check_gqa,
    "gqa_module": check_gqa_module,
    "cache_memory": check_cache_memory,
    "causal_tiles": check_causal_tiles,
}


# ------------------------------------------------------------------ 8.1 one update


def upd_no_rescale(m, total, block):
    m_new = np.maximum(m, block.max(axis=-1))
    return m_new, total + np.exp(block - m_new[..., None]).sum(axis=-1)


def upd_inverted_factor(m, total, block):
    m_new = np.maximum(m, block.max(axis=-1))
    return m_new, total * np.exp(m_new - m) + np.exp(block - m_new[..., None]).sum(axis=-1)


def upd_one_max(m, total, block):
    m_new = np.maximum(m, np.max(block))
    return m_new, total * np.exp(m - m_new) + np.sum(np.exp(block - m_new[..., None]), axis=-1)


def upd_block_max_only(m, total, block):
    m_new = block.max(axis=-1)
    return m_new, total * np.exp(m - m_new) + np.exp(block - m_new[..., None]).sum(axis=-1)


def upd_np_max(m, total, block):
    m_new = np.max(m, block.max(axis=-1))  # meant np.maximum
    return m_new, total * np.exp(m - m_new) + np.exp(block - m_new[..., None]).sum(axis=-1)


def upd_in_place(m, total, block):
    m_new = np.maximum(m, block.max(axis=-1))
    total *= np.exp(m - m_new)
    total += np.exp(block - m_new[..., None]).sum(axis=-1)
    return m_new, total


def upd_torch(m, total, block):
    m, total, block = (torch.as_tensor(a) for a in (m, total, block))
    m_new = torch.maximum(m, block.amax(dim=-1))
    return m_new, total * torch.exp(m - m_new) + torch.exp(block - m_new[..., None]).sum(-1)


def upd_no_max_in_exp(m, total, block):
    m_new = np.maximum(m, block.max(axis=-1))
    return m_new, total * np.exp(m - m_new) + np.exp(block).sum(axis=-1)


# ------------------------------------------------------------------ 8.2 online softmax


def osm_one_max(x, block_size):
    m, total = -np.inf, np.zeros(x.shape[:-1])
    for s in range(0, x.shape[-1], block_size):
        b = x[..., s : s + block_size]
        m_new = max(m, b.max())
        ref = 0.0 if m_new == -np.inf else m_new
        total = total * np.exp(m - ref) + np.exp(b - ref).sum(-1)
        m = m_new
    ref = 0.0 if m == -np.inf else m
    out = np.zeros_like(x)
    ok = total > 0
    out[ok] = np.exp(x[ok] - ref) / total[ok][..., None]
    return out


def osm_no_guard(x, block_size):
    m = np.full(x.shape[:-1], -np.inf)
    total = np.zeros(x.shape[:-1])
    for s in range(0, x.shape[-1], block_size):
        b = x[..., s : s + block_size]
        m_new = np.maximum(m, b.max(-1))
        total = total * np.exp(m - m_new) + np.exp(b - m_new[..., None]).sum(-1)
        m = m_new
    return np.exp(x - m[..., None]) / total[..., None]


def osm_full_blocks_only(x, block_size):
    n = x.shape[-1] // block_size
    m = np.full(x.shape[:-1], -np.inf)
    total = np.zeros(x.shape[:-1])
    for i in range(n):
        b = x[..., i * block_size : (i + 1) * block_size]
        m_new = np.maximum(m, b.max(-1))
        safe = np.where(np.isneginf(m_new), 0.0, m_new)
        total = total * np.exp(m - safe) + np.exp(b - safe[..., None]).sum(-1)
        m = m_new
    safe = np.where(np.isneginf(m), 0.0, m)[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.exp(x - safe) / total[..., None]
    return np.where(total[..., None] > 0, w, 0.0)


def osm_minus_1e4(x, block_size):
    x = np.where(np.isneginf(x), -1e4, x)
    m = np.full(x.shape[:-1], -np.inf)
    total = np.zeros(x.shape[:-1])
    for s in range(0, x.shape[-1], block_size):
        b = x[..., s : s + block_size]
        m_new = np.maximum(m, b.max(-1))
        total = total * np.exp(m - m_new) + np.exp(b - m_new[..., None]).sum(-1)
        m = m_new
    return np.exp(x - m[..., None]) / total[..., None]


def osm_no_alpha(x, block_size):
    m = np.full(x.shape[:-1], -np.inf)
    total = np.zeros(x.shape[:-1])
    for s in range(0, x.shape[-1], block_size):
        b = x[..., s : s + block_size]
        m_new = np.maximum(m, b.max(-1))
        safe = np.where(np.isneginf(m_new), 0.0, m_new)
        total = total + np.exp(b - safe[..., None]).sum(-1)
        m = m_new
    safe = np.where(np.isneginf(m), 0.0, m)[..., None]
    denom = np.where(total > 0, total, 1.0)[..., None]
    return np.where(total[..., None] > 0, np.exp(x - safe) / denom, 0.0)


def osm_stop_short(x, block_size):
    m = np.full(x.shape[:-1], -np.inf)
    total = np.zeros(x.shape[:-1])
    for s in range(0, x.shape[-1] - block_size, block_size):
        b = x[..., s : s + block_size]
        m_new = np.maximum(m, b.max(-1))
        safe = np.where(np.isneginf(m_new), 0.0, m_new)
        total = total * np.exp(m - safe) + np.exp(b - safe[..., None]).sum(-1)
        m = m_new
    safe = np.where(np.isneginf(m), 0.0, m)[..., None]
    denom = np.where(total > 0, total, 1.0)[..., None]
    return np.where(total[..., None] > 0, np.exp(x - safe) / denom, 0.0)


def osm_nan_rows_to_uniform(x, block_size):
    m = np.full(x.shape[:-1], -np.inf)
    total = np.zeros(x.shape[:-1])
    for s in range(0, x.shape[-1], block_size):
        b = x[..., s : s + block_size]
        m_new = np.maximum(m, b.max(-1))
        safe = np.where(np.isneginf(m_new), 0.0, m_new)
        total = total * np.exp(m - safe) + np.exp(b - safe[..., None]).sum(-1)
        m = m_new
    safe = np.where(np.isneginf(m), 0.0, m)[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.exp(x - safe) / total[..., None]
    return np.nan_to_num(w, nan=1.0 / x.shape[-1])


# ------------------------------------------------------------------ 8.3 tile update


def tile_acc_not_rescaled(m, total, acc, scores, v):
    m_new = np.maximum(m, scores.max(-1))
    alpha = np.exp(m - m_new)
    p = np.exp(scores - m_new[..., None])
    return m_new, alpha * total + p.sum(-1), acc + p @ v


def tile_torch(m, total, acc, scores, v):
    m_new = torch.maximum(m, scores.max(dim=-1).values)
    alpha = torch.exp(m - m_new)
    p = torch.exp(scores - m_new[..., None])
    return m_new, alpha * total + p.sum(-1), alpha[..., None] * acc + p @ v


def tile_alpha_no_axis(m, total, acc, scores, v):
    m_new = np.maximum(m, scores.max(-1))
    alpha = np.exp(m - m_new)
    p = np.exp(scores - m_new[..., None])
    return m_new, alpha * total + p.sum(-1), alpha * acc + p @ v


def tile_old_max(m, total, acc, scores, v):
    m_new = np.maximum(m, scores.max(-1))
    alpha = np.exp(m - m_new)
    p = np.exp(scores - m[..., None])
    return m_new, alpha * total + p.sum(-1), alpha[..., None] * acc + p @ v


def tile_normalised(m, total, acc, scores, v):
    m_new = np.maximum(m, scores.max(-1))
    alpha = np.exp(m - m_new)
    p = np.exp(scores - m_new[..., None])
    total_new = alpha * total + p.sum(-1)
    return m_new, total_new, (alpha[..., None] * acc + p @ v) / total_new[..., None]


def tile_global_max(m, total, acc, scores, v):
    m_new = np.maximum(m, scores.max())
    alpha = np.exp(m - m_new)
    p = np.exp(scores - m_new[..., None])
    return m_new, alpha * total + p.sum(-1), alpha[..., None] * acc + p @ v


def tile_query_axis(m, total, acc, scores, v):
    m_new = np.maximum(m, scores.max(-1))
    alpha = np.exp(m - m_new)
    p = np.exp(scores - m_new[..., None])
    return m_new, alpha * total + p.sum(-2), alpha[..., None] * acc + p @ v


# ------------------------------------------------------------------ 8.4 KV cache


def kv_cat_last_axis(q, k, v, k_cache, v_cache):
    k_cache = torch.cat([k_cache, k], dim=-1)
    v_cache = torch.cat([v_cache, v], dim=-1)
    w = torch.softmax(q @ k_cache.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return w @ v_cache, k_cache, v_cache


def kv_cat_no_dim(q, k, v, k_cache, v_cache):
    k_cache = torch.cat([k_cache, k])
    v_cache = torch.cat([v_cache, v])
    w = torch.softmax(q @ k_cache.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return w @ v_cache, k_cache, v_cache


def kv_prepend(q, k, v, k_cache, v_cache):
    k_all, v_all = torch.cat([k, k_cache], 2), torch.cat([v, v_cache], 2)
    w = torch.softmax(q @ k_all.transpose(2, 3) / q.shape[-1] ** 0.5, dim=-1)
    return w @ v_all, k_all, v_all


def kv_scale_by_length(q, k, v, k_cache, v_cache):
    k_all, v_all = torch.cat([k_cache, k], -2), torch.cat([v_cache, v], -2)
    w = torch.softmax(q @ k_all.transpose(-2, -1) / math.sqrt(k_all.shape[-2]), dim=-1)
    return w @ v_all, k_all, v_all


def kv_softmax_queries(q, k, v, k_cache, v_cache):
    k_all, v_all = torch.cat([k_cache, k], -2), torch.cat([v_cache, v], -2)
    w = torch.softmax(q @ k_all.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-2)
    return w @ v_all, k_all, v_all


def kv_numpy(q, k, v, k_cache, v_cache):
    k_all = np.concatenate([k_cache.numpy(), k.numpy()], axis=-2)
    v_all = np.concatenate([v_cache.numpy(), v.numpy()], axis=-2)
    s = q.numpy() @ np.swapaxes(k_all, -1, -2) / np.sqrt(q.shape[-1])
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    return w @ v_all, k_all, v_all


def kv_values_from_keys(q, k, v, k_cache, v_cache):
    k_all, v_all = torch.cat([k_cache, k], -2), torch.cat([v_cache, v], -2)
    w = torch.softmax(q @ k_all.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return w @ k_all, k_all, v_all


def kv_unstable(q, k, v, k_cache, v_cache):
    k_all, v_all = torch.cat([k_cache, k], -2), torch.cat([v_cache, v], -2)
    e = torch.exp(q @ k_all.transpose(-2, -1) / math.sqrt(q.shape[-1]))
    return (e / e.sum(-1, keepdim=True)) @ v_all, k_all, v_all


# ------------------------------------------------------------------ 8.5 GQA


def _attend(q, k, v):
    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1) @ v


def gqa_tiled(q, k, v):
    n = q.shape[1] // k.shape[1]
    return _attend(q, k.repeat(1, n, 1, 1), v.repeat(1, n, 1, 1))


def gqa_no_dim(q, k, v):
    n = q.shape[1] // k.shape[1]
    return _attend(q, k.repeat_interleave(n), v.repeat_interleave(n))


def gqa_wrong_axis(q, k, v):
    n = q.shape[1] // k.shape[1]
    return _attend(q, k.repeat_interleave(n, dim=2), v.repeat_interleave(n, dim=2))


def gqa_no_repeat(q, k, v):
    return _attend(q, k, v)


def gqa_loop_modulo(q, k, v):
    H, G = q.shape[1], k.shape[1]
    heads = [_attend(q[:, h], k[:, h % G], v[:, h % G]) for h in range(H)]
    return torch.stack(heads, dim=1)


def gqa_no_scale(q, k, v):
    n = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(n, 1), v.repeat_interleave(n, 1)
    return torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ v


def gqa_expand(q, k, v):
    B, H, _T, _d = q.shape
    return _attend(q, k.expand(B, H, -1, -1), v.expand(B, H, -1, -1))


def gqa_unstable(q, k, v):
    n = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(n, 1), v.repeat_interleave(n, 1)
    e = torch.exp(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]))
    return e / e.sum(-1, keepdim=True) @ v


# ------------------------------------------------------------------ 8.6-8.7 the layer


class GQABase(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__()
        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_o = nn.Linear(d_model, d_model)

    def heads(self, x):
        B, T, _D = x.shape
        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)
        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)
        n = self.H // self.G
        return q, k.repeat_interleave(n, dim=1), v.repeat_interleave(n, dim=1)

    def finish(self, w, v, x):
        B, T, D = x.shape
        return self.W_o((w @ v).transpose(1, 2).reshape(B, T, D)), w


class GQAFullSizeKV(GQABase):
    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__(d_model, n_heads, n_kv_heads)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)


class GQAOutOnly(GQABase):
    def forward(self, x, mask=None):
        q, k, v = self.heads(x)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        return self.finish(s.softmax(-1), v, x)[0]


class GQAInvertedMask(GQABase):
    def forward(self, x, mask=None):
        q, k, v = self.heads(x)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        if mask is not None:
            s = s.masked_fill(mask, float("-inf"))
        return self.finish(torch.nan_to_num(s.softmax(-1)), v, x)


class GQAThroughNumpy(GQABase):
    def forward(self, x, mask=None):
        q, k, v = (t.detach().numpy() for t in self.heads(x))
        s = q @ np.swapaxes(k, -1, -2) / math.sqrt(self.d)
        if mask is not None:
            s = np.where(mask.numpy(), s, -np.inf)
        w = np.exp(s - s.max(-1, keepdims=True))
        w = w / w.sum(-1, keepdims=True)
        return self.finish(torch.from_numpy(w), torch.from_numpy(v), x)


class GQATiled(GQABase):
    def forward(self, x, mask=None):
        B, T, _D = x.shape
        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2).repeat(1, self.H // self.G, 1, 1)
        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2).repeat(1, self.H // self.G, 1, 1)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        return self.finish(s.softmax(-1), v, x)


class GQAScaleByModel(GQABase):
    def forward(self, x, mask=None):
        q, k, v = self.heads(x)
        s = q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1])
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        return self.finish(s.softmax(-1), v, x)


class GQANoTransposeMerge(GQABase):
    def forward(self, x, mask=None):
        B, T, D = x.shape
        q, k, v = self.heads(x)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = s.softmax(-1)
        return self.W_o((w @ v).reshape(B, T, D)), w


class GQANoBias(GQABase):
    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__(d_model, n_heads, n_kv_heads)
        for name in ("W_q", "W_k", "W_v", "W_o"):
            old = getattr(self, name)
            setattr(self, name, nn.Linear(old.in_features, old.out_features, bias=False))

    def forward(self, x, mask=None):
        q, k, v = self.heads(x)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        return self.finish(s.softmax(-1), v, x)


class GQAViewNoTranspose(GQABase):
    def forward(self, x, mask=None):
        B, T, _D = x.shape
        q = self.W_q(x).view(B, self.H, T, self.d)
        k = self.W_k(x).view(B, self.G, T, self.d).repeat_interleave(self.H // self.G, 1)
        v = self.W_v(x).view(B, self.G, T, self.d).repeat_interleave(self.H // self.G, 1)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        return self.finish(s.softmax(-1), v, x)


class GQAMaskAfterSoftmax(GQABase):
    def forward(self, x, mask=None):
        q, k, v = self.heads(x)
        w = (q @ k.transpose(-2, -1) / math.sqrt(self.d)).softmax(-1)
        if mask is not None:
            w = w * mask
        return self.finish(w, v, x)


# ------------------------------------------------------------------ the corpus


CORPUS = [
    ("online_update", "no rescale of the old sum", upd_no_rescale, "rescale"),
    ("online_update", "factor e^(m' - m)", upd_inverted_factor, "the wrong way round"),
    ("online_update", "one max over all rows", upd_one_max, "without an axis"),
    ("online_update", "forgot the old max", upd_block_max_only, "max alone"),
    ("online_update", "np.max for np.maximum", upd_np_max, "np.maximum"),
    ("online_update", "total *= in place", upd_in_place, "in place"),
    ("online_update", "torch in a NumPy exercise", upd_torch, "NumPy"),
    ("online_update", "block terms without the max", upd_no_max_in_exp, "subtract"),
    ("online_softmax", "one max for all rows", osm_one_max, "each row needs its own"),
    ("online_softmax", "no guard for -inf rows", osm_no_guard, "-inf"),
    ("online_softmax", "only the full blocks", osm_full_blocks_only, "last"),
    ("online_softmax", "-inf replaced by -1e4", osm_minus_1e4, "masked"),
    ("online_softmax", "old sum not rescaled", osm_no_alpha, "rescale"),
    ("online_softmax", "range stops a block early", osm_stop_short, "last"),
    ("online_softmax", "empty rows made uniform", osm_nan_rows_to_uniform, "all-zero"),
    ("tile_update", "acc not rescaled", tile_acc_not_rescaled, "acc"),
    ("tile_update", "written in torch", tile_torch, "NumPy"),
    ("tile_update", "alpha without [..., None]", tile_alpha_no_axis, "alpha[..., None]"),
    ("tile_update", "p against the old max", tile_old_max, "old max"),
    ("tile_update", "acc divided by total", tile_normalised, "divide"),
    ("tile_update", "one max for the tile", tile_global_max, "without axis"),
    ("tile_update", "total summed over queries", tile_query_axis, "axis"),
    ("kv_step", "cat on the last axis", kv_cat_last_axis, "wrong axis"),
    ("kv_step", "cat without dim", kv_cat_no_dim, "wrong axis"),
    ("kv_step", "new token first", kv_prepend, "end of the cache"),
    ("kv_step", "scaled by the cache length", kv_scale_by_length, "number of keys"),
    ("kv_step", "softmax over the query axis", kv_softmax_queries, "query axis"),
    ("kv_step", "through NumPy", kv_numpy, "torch"),
    ("kv_step", "keys as values", kv_values_from_keys, "values"),
    ("kv_step", "exp without the max", kv_unstable, "overflow"),
    ("gqa", ".repeat tiles the heads", gqa_tiled, "in place"),
    ("gqa", "repeat_interleave without dim", gqa_no_dim, "dim="),
    ("gqa", "repeat_interleave on the token axis", gqa_wrong_axis, "dim=1"),
    ("gqa", "no repeat at all", gqa_no_repeat, "head axis"),
    ("gqa", "head h uses h % G", gqa_loop_modulo, "h // (H / G)"),
    ("gqa", "no scale", gqa_no_scale, "scale"),
    ("gqa", "expand the heads", gqa_expand, "H/G"),
    ("gqa", "exp without the max", gqa_unstable, "overflow"),
    ("gqa_module", "W_k and W_v of full size", GQAFullSizeKV, "n_kv_heads"),
    ("gqa_module", "returns out only", GQAOutOnly, "return all 2"),
    ("gqa_module", "mask inverted", GQAInvertedMask, "True means may attend"),
    ("gqa_module", "through NumPy", GQAThroughNumpy, "gradient"),
    ("gqa_module", ".repeat tiles the heads", GQATiled, "in place"),
    ("gqa_module", "scaled by sqrt(d_model)", GQAScaleByModel, "size of one head"),
    ("gqa_module", "merge without transpose", GQANoTransposeMerge, "transpose(1, 2)"),
    ("gqa_module", "no bias", GQANoBias, "bias"),
    ("gqa_module", "view without transpose", GQAViewNoTranspose, "transpose(1, 2)"),
    ("gqa_module", "mask applied after the softmax", GQAMaskAfterSoftmax, "before the softmax"),
    ("cache_memory", "16 heads cached", 192.0, "key-value heads"),
    ("cache_memory", "4 bytes a number", 96.0, "2 bytes"),
    ("cache_memory", "keys only", 24.0, "keys or the values alone"),
    ("cache_memory", "MB, not MiB", 50.331648, "2**20"),
    ("cache_memory", "one layer", 2.0, "24 layers"),
    ("cache_memory", "KiB", 49152.0, "MiB"),
    ("causal_tiles", "below the diagonal", 28, "diagonal"),
    ("causal_tiles", "all of them", 64, "skipped"),
    ("causal_tiles", "half", 32, "diagonal"),
    ("causal_tiles", "the diagonal only", 8, "below"),
    ("causal_tiles", "all but the diagonal", 56, "future"),
]  # fmt: skip


# The corpus's tests (tests/grading/corpus.py): every exercise covered, no wrong answer
# accepted or misled, at least 9 in 10 specific (the right answers are in test_chNN.py).
(
    test_the_corpus_covers_every_exercise_and_is_large,
    test_no_wrong_answer_passes_or_is_misled,
    _,
    test_at_least_nine_in_ten_get_a_specific_diagnosis,
) = chapter_tests(CHECKS, CORPUS)


# ------------------------------------------------------------------ the learner's corpus

_HEADER = (
    "import math\n\nimport numpy as np\nimport torch\nimport torch.nn.functional as F\n"
    "from torch import nn\n\n"
)
_NAMES = {
    "gqa_module": "MyGroupedQueryAttention",
    "cache_memory": "answer",
    "causal_tiles": "answer",
}


def _learner_answer(tmp_path_factory, name, exercise, code):
    """The learner's answer, loaded from a file so that the grader can show its lines."""
    path = tmp_path_factory.mktemp("learner") / f"attempt_{name.replace('.', '_')}.py"
    path.write_text(_HEADER + code)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, _NAMES.get(exercise, exercise))


@pytest.mark.parametrize(
    ("name", "exercise", "code", "words"), LEARNER, ids=[n for n, *_ in LEARNER]
)
def test_the_learners_wrong_answers(tmp_path_factory, name, exercise, code, words):
    answer = _learner_answer(tmp_path_factory, name, exercise, code)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the grader prints no warning of its own
        kind, result = classify(CHECKS[exercise], answer, words or "\0")
    expected = "specific" if words else "generic"
    assert kind == expected, f"{name}: expected {words!r}\n{result.text}"


def test_the_learners_corpus_is_nine_in_ten_specific():
    assert len(LEARNER) == 293
    specific = sum(words is not None for *_, words in LEARNER)
    assert specific >= 0.9 * len(LEARNER), specific
