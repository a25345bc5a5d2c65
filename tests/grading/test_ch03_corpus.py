"""Chapter 3's graders against wrong answers written as learners write them.

Wrong answers to exercises 3.1-3.6 and the predictions 3.7-3.9, written here without
looking at the graders' planted or generated mistakes (loops, einsum, boolean indexing,
``masked_fill`` the wrong way, ``F.softmax`` on the wrong dim, NumPy detours in torch,
modules that return one value or keep a bias), each with words its diagnosis must contain
(classes: see ``corpus.py``).
"""

from __future__ import annotations

import linecache
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from corpus import classify, tally
from torch import nn

from attnlab.grading.ch03 import (
    check_additive_scores,
    check_attention,
    check_attention_torch,
    check_cross_columns,
    check_raw_spread,
    check_self_attention_module,
    check_slide_keys,
    check_unscaled_weight,
)

CHECKS = {
    "slide_keys": check_slide_keys,
    "attention": check_attention,
    "attention_torch": check_attention_torch,
    "additive_scores": check_additive_scores,
    "self_attention_module": check_self_attention_module,
    "unscaled_weight": check_unscaled_weight,
    "raw_spread": check_raw_spread,
    "cross_columns": check_cross_columns,
}


# ------------------------------------------------------------------ 3.1 slide the keys


def slide_norm(q, k, targets):
    c = (targets - k @ q) / np.linalg.norm(q)
    return k + c[:, None] * q


def slide_in_place(q, k, targets):
    c = (targets - k @ q) / (q @ q)
    k += c[:, None] * q
    return k


def slide_no_axis(q, k, targets):
    c = (targets - k @ q) / (q @ q)
    return k + c * q


def slide_loop_target_only(q, k, targets):
    out = k.copy()
    for j in range(len(k)):
        out[j] = k[j] + targets[j] / np.dot(q, q) * q
    return out


def slide_sign(q, k, targets):
    return k - ((targets - k @ q) / (q @ q))[:, None] * q


def slide_outer(q, k, targets):
    return k + np.outer((targets - k @ q), q) / np.sum(q**2) ** 0.5


# ------------------------------------------------------------------ 3.2 attention, NumPy


def softmax_rows(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def att_kT(q, k, v, mask=None):
    s = q @ k.T / np.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    w = np.nan_to_num(softmax_rows(s))
    return w @ v, w


def att_inverted(q, k, v, mask=None):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(mask, -np.inf, s)
    with np.errstate(invalid="ignore"):
        w = np.nan_to_num(softmax_rows(s))
    return w @ v, w


def att_minus_1e9(q, k, v, mask=None):
    s = np.matmul(q, np.swapaxes(k, -2, -1)) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -1e9)
    w = softmax_rows(s)
    return w @ v, w


def att_no_empty_rows(q, k, v, mask=None):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    w = softmax_rows(s)
    return w @ v, w


def att_mask_times_weights(q, k, v, mask=None):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    w = softmax_rows(s)
    if mask is not None:
        w = w * mask
    return w @ v, w


def att_global_max(q, k, v, mask=None):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    top = s[np.isfinite(s)].max() if np.isfinite(s).any() else 0.0
    e = np.exp(s - top)
    total = e.sum(-1, keepdims=True)
    w = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    return w @ v, w


def att_no_scale(q, k, v, mask=None):
    s = np.einsum("...td,...sd->...ts", q, k)
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    with np.errstate(invalid="ignore"):
        w = np.nan_to_num(softmax_rows(s))
    return w @ v, w


def att_columns(q, k, v, mask=None):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    e = np.exp(s - s.max(axis=-2, keepdims=True))
    with np.errstate(invalid="ignore"):
        w = np.nan_to_num(e / e.sum(axis=-2, keepdims=True))
    return w @ v, w


def att_weights_only(q, k, v, mask=None):
    return att_no_empty_rows(q, k, v, mask)[1]


def att_bool_index(q, k, v, mask=None):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        s[~mask] = -np.inf
    with np.errstate(invalid="ignore"):
        w = np.nan_to_num(softmax_rows(s))
    return w @ v, w


def att_sqrt_of_keys(q, k, v, mask=None):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(k.shape[-2])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    with np.errstate(invalid="ignore"):
        w = np.nan_to_num(softmax_rows(s))
    return w @ v, w


def att_unstable(q, k, v, mask=None):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    e = np.exp(s)
    total = e.sum(-1, keepdims=True)
    w = np.where(total > 0, e / np.where(total > 0, total, 1), 0)
    return w @ v, w


# ------------------------------------------------------------------ 3.3 attention, torch


def tatt(q, k, v, mask=None, *, fill=float("-inf"), invert=False, dim=-1, nan=True, scale=True):
    s = q @ k.transpose(-2, -1)
    if scale:
        s = s / math.sqrt(q.shape[-1])
    if mask is not None:
        s = s.masked_fill(mask if invert else ~mask, fill)
    w = F.softmax(s, dim=dim)
    if nan:
        w = torch.nan_to_num(w)
    return w @ v, w


def tatt_numpy(q, k, v, mask=None):
    out, w = att_no_empty_rows(
        q.numpy(), k.numpy(), v.numpy(), None if mask is None else mask.numpy()
    )
    return torch.from_numpy(np.nan_to_num(out)), torch.from_numpy(np.nan_to_num(w))


def tatt_transpose_all(q, k, v, mask=None):
    s = q @ k.T / math.sqrt(q.shape[-1])
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    w = torch.softmax(s, -1).nan_to_num()
    return w @ v, w


def tatt_where_zero(q, k, v, mask=None):
    s = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    if mask is not None:
        s = torch.where(mask, s, torch.zeros_like(s))
    w = torch.softmax(s, -1)
    return w @ v, w


def tatt_detached(q, k, v, mask=None):
    out, w = tatt(q, k, v, mask)
    return out.detach(), w.detach()


# ------------------------------------------------------------------ 3.4 additive scores


def add_no_tanh(q, k, W_a, U_a, v_a):
    return ((q @ W_a)[..., :, None, :] + (k @ U_a)[..., None, :, :]) @ v_a


def add_swapped_weights(q, k, W_a, U_a, v_a):
    return np.tanh((q @ U_a)[..., :, None, :] + (k @ W_a)[..., None, :, :]) @ v_a


def add_transposed(q, k, W_a, U_a, v_a):
    return np.tanh((q @ W_a)[..., None, :, :] + (k @ U_a)[..., :, None, :]) @ v_a


def add_loop_sum(q, k, W_a, U_a, v_a):
    hq, hk = q @ W_a, k @ U_a
    return np.tanh(hq[..., :, None, :] + hk[..., None, :, :]).sum(-1)


def add_no_broadcast(q, k, W_a, U_a, v_a):
    return np.tanh(q @ W_a + k @ U_a) @ v_a


def add_tanh_outside(q, k, W_a, U_a, v_a):
    return np.tanh(
        np.einsum("...tsh,h->...ts", (q @ W_a)[..., :, None, :] + (k @ U_a)[..., None, :, :], v_a)
    )


def add_dot(q, k, W_a, U_a, v_a):
    return (q @ W_a) @ np.swapaxes(k @ U_a, -1, -2)


# ------------------------------------------------------------------ 3.5 the module


class KeysFromQueries(nn.Module):
    def __init__(self, d_model, d_head):
        super().__init__()
        self.W_q = nn.Linear(d_model, d_head, bias=False)
        self.W_k = nn.Linear(d_model, d_head, bias=False)
        self.W_v = nn.Linear(d_model, d_head, bias=False)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_q(x), self.W_v(x)
        return tatt(q, k, v, mask)


class ReturnsOut(KeysFromQueries):
    def forward(self, x, mask=None):
        return tatt(self.W_q(x), self.W_k(x), self.W_v(x), mask)[0]


class WithBias(KeysFromQueries):
    def __init__(self, d_model, d_head):
        super().__init__(d_model, d_head)
        self.W_q = nn.Linear(d_model, d_head)
        self.W_k = nn.Linear(d_model, d_head)
        self.W_v = nn.Linear(d_model, d_head)

    def forward(self, x, mask=None):
        return tatt(self.W_q(x), self.W_k(x), self.W_v(x), mask)


class ScaleByModel(KeysFromQueries):
    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        s = q @ k.transpose(1, 2) / math.sqrt(x.shape[-1])
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = s.softmax(-1)
        return w @ v, w


class IgnoresMask(KeysFromQueries):
    def forward(self, x, mask=None):
        return tatt(self.W_q(x), self.W_k(x), self.W_v(x))


class ThroughNumpy(KeysFromQueries):
    def forward(self, x, mask=None):
        q, k, v = (t.detach().numpy() for t in (self.W_q(x), self.W_k(x), self.W_v(x)))
        m = None if mask is None else mask.numpy()
        out, w = att_no_empty_rows(q, k, v, m)
        return torch.from_numpy(out), torch.from_numpy(w)


class NamedDifferently(nn.Module):
    def __init__(self, d_model, d_head):
        super().__init__()
        self.query = nn.Linear(d_model, d_head, bias=False)
        self.key = nn.Linear(d_model, d_head, bias=False)
        self.value = nn.Linear(d_model, d_head, bias=False)

    def forward(self, x, mask=None):
        return tatt(self.query(x), self.key(x), self.value(x), mask)


class MatricesByHand(nn.Module):
    def __init__(self, d_model, d_head):
        super().__init__()
        self.W_q = nn.Linear(d_model, d_head, bias=False)
        self.W_k = nn.Linear(d_model, d_head, bias=False)
        self.W_v = nn.Linear(d_model, d_head, bias=False)

    def forward(self, x, mask=None):
        q = x @ self.W_q.weight  # the weight is (d_head, d_model)
        k = x @ self.W_k.weight
        v = x @ self.W_v.weight
        return tatt(q, k, v, mask)


class ValuesAreX(KeysFromQueries):
    def forward(self, x, mask=None):
        return tatt(self.W_q(x), self.W_k(x), x, mask)


class SwappedSizes(nn.Module):
    def __init__(self, d_model, d_head):
        super().__init__()
        self.W_q = nn.Linear(d_head, d_model, bias=False)
        self.W_k = nn.Linear(d_head, d_model, bias=False)
        self.W_v = nn.Linear(d_head, d_model, bias=False)

    def forward(self, x, mask=None):
        return tatt(self.W_q(x), self.W_k(x), self.W_v(x), mask)


# ------------------------------------------------------------------ an independent learner's attempts
# Written by someone who took chapter 3 in a real kernel without reading the graders; each
# was accepted, misled, wrongly refused or got a generic result before the graders changed.


def l_slide_rescale(q, k, targets):
    return k * (targets / (k @ q))[:, None]


def l_slide_divide_by_d(q, k, targets):
    c = (targets - k @ q) / len(q)
    return k + c[:, None] * q


def l_slide_return_c(q, k, targets):
    return (targets - k @ q) / (q @ q)


def l_slide_no_axis_sum(q, k, targets):
    c = (targets - np.sum(k * q)) / (q @ q)
    return k + c[:, None] * q


def l_att_swapped_kv(q, k, v, mask=None):
    s = q @ np.swapaxes(v, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    w = softmax_rows(s)
    return w @ k, w


def l_att_mask_transposed(q, k, v, mask=None):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(np.swapaxes(mask, -1, -2), s, -np.inf)
    w = softmax_rows(s)
    return w @ v, w


def l_tatt_unstable(q, k, v, mask=None):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    e = torch.exp(s)
    w = torch.nan_to_num(e / e.sum(-1, keepdim=True))
    return w @ v, w


def l_tatt_sdpa(q, k, v, mask=None):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask), None


def l_tatt_len_shape(q, k, v, mask=None):
    d = len(q.shape)
    s = q @ k.transpose(-2, -1) / math.sqrt(d)
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    w = torch.nan_to_num(torch.softmax(s, -1))
    return w @ v, w


def l_tatt_additive_mask(q, k, v, mask=None):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = s + mask
    w = torch.softmax(s, -1)
    return w @ v, w


def l_tatt_tilde_none(q, k, v, mask=None):
    s = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~mask, float("-inf"))
    w = torch.nan_to_num(torch.softmax(s, -1))
    return w @ v, w


def l_tatt_sqrt_int(q, k, v, mask=None):
    s = q @ k.transpose(-2, -1) / torch.sqrt(q.shape[-1])
    w = torch.softmax(s, -1)
    return w @ v, w


def l_add_loop_keys(q, k, W_a, U_a, v_a):
    hq, hk = q @ W_a, k @ U_a
    S = k.shape[-2]
    return np.stack([np.tanh(hq + hk[..., j : j + 1, :]) @ v_a for j in range(S)], -1)


def l_add_tanh_each(q, k, W_a, U_a, v_a):
    hq, hk = q @ W_a, k @ U_a
    return (np.tanh(hq)[..., :, None, :] + np.tanh(hk)[..., None, :, :]) @ v_a


def l_add_no_batch(q, k, W_a, U_a, v_a):
    hq, hk = q @ W_a, k @ U_a
    return np.tanh(hq[:, None, :] + hk[None, :, :]) @ v_a


def l_add_softmax(q, k, W_a, U_a, v_a):
    hq, hk = q @ W_a, k @ U_a
    return softmax_rows(np.tanh(hq[..., :, None, :] + hk[..., None, :, :]) @ v_a)


def l_add_einsum_product(q, k, W_a, U_a, v_a):
    hq, hk = q @ W_a, k @ U_a
    return np.einsum("...th,...sh,h->...ts", np.tanh(hq), np.tanh(hk), v_a)


class LSharedKeys(KeysFromQueries):
    def __init__(self, d_model, d_head):
        nn.Module.__init__(self)
        self.W_q = nn.Linear(d_model, d_head, bias=False)
        self.W_k = self.W_q
        self.W_v = nn.Linear(d_model, d_head, bias=False)

    def forward(self, x, mask=None):
        return tatt(self.W_q(x), self.W_k(x), self.W_v(x), mask)


class LRight(KeysFromQueries):
    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        return tatt(q, k, v, mask)


class LKT(LRight):
    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        w = torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), -1)
        return w @ v, w


class LDetached(LRight):
    def forward(self, x, mask=None):
        _, w = tatt(self.W_q(x), self.W_k(x), self.W_v(x), mask)
        w = w.detach()
        return w @ self.W_v(x), w


class LHalfPower(LRight):
    def __init__(self, d_model, d_head):
        super().__init__(d_model, d_head)
        self.scale = d_head**1 / 2

    def forward(self, x, mask=None):
        s = self.W_q(x) @ self.W_k(x).transpose(-2, -1) / self.scale
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = torch.nan_to_num(torch.softmax(s, -1))
        return w @ self.W_v(x), w


class LInvertedMask(LRight):
    def forward(self, x, mask=None):
        return tatt(self.W_q(x), self.W_k(x), self.W_v(x), mask, invert=True)


class LNoEmptyRows(LRight):
    def forward(self, x, mask=None):
        return tatt(self.W_q(x), self.W_k(x), self.W_v(x), mask, nan=False)


class LFloat32Scale(LRight):
    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        s = q @ k.transpose(-2, -1) / torch.sqrt(torch.tensor(q.shape[-1], dtype=torch.float32))
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = torch.nan_to_num(torch.softmax(s, -1))
        return w @ v, w


class LScaleBuffer(LRight):
    def __init__(self, d_model, d_head):
        super().__init__(d_model, d_head)
        self.register_buffer("scale", torch.tensor(1 / math.sqrt(d_head)))

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        s = q @ k.transpose(-2, -1) * self.scale
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = torch.nan_to_num(torch.softmax(s, -1))
        return w @ v, w


# ------------------------------------------------------------------ round 4: the learner's round 3


def r4_add_squeeze(q, k, W_a, U_a, v_a):
    hq, hk = q @ W_a, k @ U_a
    return np.squeeze(np.tanh(hq[..., :, None, :] + hk[..., None, :, :]) @ v_a[:, None])


def r4_tatt_softmax_no_dim(q, k, v, mask=None):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    w = torch.softmax(s)
    return w @ v, torch.where(torch.isnan(w), torch.zeros_like(w), w)


def r4_tatt_bmm(q, k, v, mask=None):
    s = torch.bmm(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    w = torch.nan_to_num(torch.softmax(s, dim=-1))
    return torch.bmm(w, v), w


class R4InPlaceNan(nn.Module):
    def __init__(self, d_model, d_head):
        super().__init__()
        self.W_q = nn.Linear(d_model, d_head, bias=False)
        self.W_k = nn.Linear(d_model, d_head, bias=False)
        self.W_v = nn.Linear(d_model, d_head, bias=False)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = torch.softmax(s, dim=-1)
        w[w != w] = 0.0
        return w @ v, w


def r4_add_loop_hidden(q, k, W_a, U_a, v_a):
    a = (q @ W_a)[..., :, None, :]
    b = (k @ U_a)[..., None, :, :]
    return sum(v_a[i] * np.tanh(a[..., i] + b[..., i]) for i in range(v_a.shape[0]))


def r4_slide_elementwise_qq(q, k, targets):
    c = (targets - k @ q)[:, None] / (q * q)
    return k + c * q


def r4_tatt_transpose_0_1(q, k, v, mask=None):
    s = q @ k.transpose(0, 1) / math.sqrt(q.size(-1))
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    w = torch.nan_to_num(torch.softmax(s, dim=-1))
    return w @ v, w


def r4_tatt_mask_times_inf(q, k, v, mask=None):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        s = s + (1 - mask.to(s.dtype)) * float("-inf")
    w = torch.softmax(s, dim=-1)
    return w @ v, torch.where(torch.isnan(w), torch.zeros_like(w), w)


def r4_tatt_where_swapped(q, k, v, mask=None):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    w = torch.softmax(s, dim=-1)
    w = torch.where(torch.isnan(w), w, torch.zeros_like(w))
    return w @ v, w


def r4_add_W_transposed(q, k, W_a, U_a, v_a):
    a = (q @ W_a.T)[..., :, None, :]
    b = (k @ U_a.T)[..., None, :, :]
    return np.tanh(a + b) @ v_a


class R4ScaleValues(nn.Module):
    def __init__(self, d_model, d_head):
        super().__init__()
        self.W_q = nn.Linear(d_model, d_head, bias=False)
        self.W_k = nn.Linear(d_model, d_head, bias=False)
        self.W_v = nn.Linear(d_model, d_head, bias=False)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        s = q @ k.transpose(-2, -1)
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = torch.nan_to_num(torch.softmax(s, dim=-1), nan=0.0)
        return w @ (v / math.sqrt(q.size(-1))), w


class R4MaskAdded(nn.Module):
    def __init__(self, d_model, d_head):
        super().__init__()
        self.W_q = nn.Linear(d_model, d_head, bias=False)
        self.W_k = nn.Linear(d_model, d_head, bias=False)
        self.W_v = nn.Linear(d_model, d_head, bias=False)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        if mask is not None:
            s = s + mask
        w = torch.nan_to_num(torch.softmax(s, dim=-1), nan=0.0)
        return w @ v, w


# ------------------------------------------------------------------ the learner's round 4 (2)


def r4b_slide_loop_unit_q(q, k, targets):
    out = k.copy()
    for j in range(len(k)):
        out[j] = k[j] + (targets[j] - q @ k[j]) * q
    return out


def r4b_add_dot_in_hidden(q, k, W_a, U_a, v_a):
    # project both into the hidden space and compare
    return np.tanh((q @ W_a) @ np.swapaxes(k @ U_a, -1, -2))


def r4b_add_dot_no_tanh(q, k, W_a, U_a, v_a):
    return (q @ W_a) @ np.swapaxes(k @ U_a, -1, -2)


# ------------------------------------------------------------------ the learner's round 5


def r5_slide_extra_len(q, k, targets):
    c = (targets - k @ q) / np.sum(q * q, keepdims=True)
    return k + c[:, None] * q / len(q)


def r5_slide_elementwise_qq(q, k, targets):
    c = (targets - k @ q) / (q * q)
    return k + c[:, None] * q


def r5_slide_two_keys(q, k, targets):
    c = (targets - k @ q) / (q @ q)
    return k + c.reshape(2, 1) * q


def r5_slide_one_shift(q, k, targets):
    c = (targets.mean() - (k @ q).mean()) / (q @ q)
    return k + c * q


def _r5_weights(q, k, mask):
    scores = q @ np.swapaxes(k, -1, -2)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    m = scores.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(scores - m)
    s = e.sum(axis=-1, keepdims=True)
    return np.where(s > 0, e / np.where(s > 0, s, 1.0), 0.0)


def r5_att_scale_after_softmax(q, k, v, mask=None):
    w = _r5_weights(q, k, mask)
    w = w / np.sqrt(q.shape[-1])
    return w @ v, w


def r5_att_scale_on_output(q, k, v, mask=None):
    w = _r5_weights(q, k, mask)
    return (w @ v) / np.sqrt(q.shape[-1]), w


def r5_tatt_scale_after_softmax(q, k, v, mask=None):
    s = q @ k.transpose(-2, -1)
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    w = torch.nan_to_num(torch.softmax(s, dim=-1)) / math.sqrt(q.size(-1))
    return w @ v, w


class R5MaskMultiplied(nn.Module):
    def __init__(self, d_model, d_head):
        super().__init__()
        self.W_q = nn.Linear(d_model, d_head, bias=False)
        self.W_k = nn.Linear(d_model, d_head, bias=False)
        self.W_v = nn.Linear(d_model, d_head, bias=False)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        if mask is not None:
            s = s * mask
        w = torch.softmax(s, -1)
        return w @ v, w


class R5ScaleOnOutput(nn.Module):
    def __init__(self, d_model, d_head):
        super().__init__()
        self.W_q = nn.Linear(d_model, d_head, bias=False)
        self.W_k = nn.Linear(d_model, d_head, bias=False)
        self.W_v = nn.Linear(d_model, d_head, bias=False)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        s = q @ k.transpose(-2, -1)
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = torch.nan_to_num(torch.softmax(s, -1))
        return (w @ v) / math.sqrt(q.size(-1)), w


_R5_NOTEBOOK = """\
def attention_torch(q, k, v, mask=None):  # an earlier, wrong attempt at 3.3
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    scores = scores.masked_fill(~mask, float("-inf"))
    w = torch.softmax(scores, dim=1)
    return w @ v, w


class SelfAttention(nn.Module):  # never calls attention_torch
    def __init__(self, d_model, d_head):
        super().__init__()
        self.W_q = nn.Linear(d_model, d_head, bias=False)
        self.W_k = nn.Linear(d_model, d_head, bias=False)
        self.W_v = nn.Linear(d_model, d_head, bias=False)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        s = s.masked_fill(~mask, float("-inf"))
        w = torch.nan_to_num(torch.softmax(s, -1))
        return w @ v, w
"""


def _r5_notebook_class():
    """The learner's class, defined in a notebook whose `attention_torch` is wrong."""
    filename = "<round 5 notebook>"
    linecache.cache[filename] = (len(_R5_NOTEBOOK), None, _R5_NOTEBOOK.splitlines(True), filename)
    scope = {"__name__": "round5_notebook", "math": math, "torch": torch, "nn": nn}
    exec(compile(_R5_NOTEBOOK, filename, "exec"), scope)
    return scope["SelfAttention"]


R5UnguardedBesideWrongFunction = _r5_notebook_class()


# ------------------------------------------------------------------ round six (issue 28)
# The sixth learner round: what its learner tried that got a generic message or a bare
# exception.


def r6_slide_outer_reshaped(q, k, targets):
    c = (targets - k @ q) / (q @ q)
    return k + np.outer(q, c).reshape(k.shape)


def r6_slide_axis_on_q(q, k, targets):
    c = (targets - k @ q) / (q @ q)
    return k + c * q[:, None]


def r6_tatt_float_scores(q, k, v, mask=None):
    s = (q @ k.transpose(-2, -1)).float() / math.sqrt(q.size(-1))
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    w = torch.softmax(s, dim=-1)
    w = torch.where(torch.isnan(w), torch.zeros_like(w), w)
    return w @ v, w


def r6_tatt_float_mask(q, k, v, mask=None):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        s = s.masked_fill(1 - mask.float(), float("-inf"))
    w = torch.softmax(s, dim=-1)
    w = torch.where(torch.isnan(w), torch.zeros_like(w), w)
    return w @ v, w


class R6MaskUnsqueezed(nn.Module):
    def __init__(self, d_model, d_head):
        super().__init__()
        self.W_q = nn.Linear(d_model, d_head, bias=False)
        self.W_k = nn.Linear(d_model, d_head, bias=False)
        self.W_v = nn.Linear(d_model, d_head, bias=False)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        if mask is not None:
            s = s.masked_fill(~mask.unsqueeze(1), float("-inf"))
        w = torch.softmax(s, dim=-1)
        w = torch.where(torch.isnan(w), torch.zeros_like(w), w)
        return w @ v, w


_R6_NOTEBOOK = """\
def attention(q, k, v, mask=None):  # exercise 3.2, NumPy, passed
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    m = np.max(s, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    t = e.sum(axis=-1, keepdims=True)
    w = np.divide(e, t, out=np.zeros_like(e), where=t > 0)
    return w @ v, w


class SelfAttention(nn.Module):  # calls the NumPy attention on tensors
    def __init__(self, d_model, d_head):
        super().__init__()
        self.W_q = nn.Linear(d_model, d_head, bias=False)
        self.W_k = nn.Linear(d_model, d_head, bias=False)
        self.W_v = nn.Linear(d_model, d_head, bias=False)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        return attention(q, k, v, mask)
"""


def _r6_notebook_class():
    """The learner's class, defined in a notebook whose `attention` is 3.2's NumPy one."""
    filename = "<round 6 notebook>"
    linecache.cache[filename] = (len(_R6_NOTEBOOK), None, _R6_NOTEBOOK.splitlines(True), filename)
    scope = {"__name__": "round6_notebook", "math": math, "np": np, "torch": torch, "nn": nn}
    exec(compile(_R6_NOTEBOOK, filename, "exec"), scope)
    return scope["SelfAttention"]


R6NumpyAttentionOnTensors = _r6_notebook_class()

ROUND_SIX = [
    ("slide_keys", "round 6: np.outer(q, c).reshape(k.shape)", r6_slide_outer_reshaped, "np.outer"),
    ("slide_keys", "round 6: c * q[:, None]", r6_slide_axis_on_q, "on q"),
    ("attention_torch", "round 6: .float() on the scores", r6_tatt_float_scores, ".float()"),
    ("attention_torch", "round 6: 1 - mask.float() to masked_fill", r6_tatt_float_mask, "boolean"),
    ("self_attention_module", "round 6: mask.unsqueeze(1)", R6MaskUnsqueezed, "as it is"),
    ("self_attention_module", "round 6: the NumPy attention on tensors", R6NumpyAttentionOnTensors, "NumPy"),
]  # fmt: skip


CORPUS = [
    ("slide_keys", "divided by the norm", slide_norm, "divided by the length"),
    ("slide_keys", "k += ...", slide_in_place, "in place"),
    ("slide_keys", "c without [:, None]", slide_no_axis, "broadcast"),
    ("slide_keys", "loop, target only", slide_loop_target_only, "subtract the keys' current scores"),
    ("slide_keys", "wrong sign", slide_sign, "wrong sign"),
    ("slide_keys", "outer / sqrt(sum q²)", slide_outer, "divided by the length"),
    ("attention", "k.T on a batch", att_kT, "LAST two axes"),
    ("attention", "mask inverted", att_inverted, "inverted"),
    ("attention", "-1e9 fill", att_minus_1e9, "uniform weights"),
    ("attention", "no empty-row care", att_no_empty_rows, "0/0 = NaN"),
    ("attention", "weights * mask after softmax", att_mask_times_weights, "after the softmax"),
    ("attention", "one max for everything", att_global_max, "without an axis"),
    ("attention", "einsum, no scale", att_no_scale, "forgot to scale"),
    ("attention", "softmax over the queries", att_columns, "wrong axis"),
    ("attention", "returns weights only", att_weights_only, "return both"),
    ("attention", "boolean index s[~mask]", att_bool_index, "boolean index must have the shape"),
    ("attention", "sqrt of the number of keys", att_sqrt_of_keys, "number of keys"),
    ("attention", "no max subtracted", att_unstable, "is not subtracted"),
    ("attention_torch", "masked_fill(mask, -inf)", lambda q, k, v, mask=None: tatt(q, k, v, mask, invert=True), "inverted"),
    ("attention_torch", "softmax dim=1", lambda q, k, v, mask=None: tatt(q, k, v, mask, dim=1), "axis"),
    ("attention_torch", "no nan_to_num", lambda q, k, v, mask=None: tatt(q, k, v, mask, nan=False), "0/0 = NaN"),
    ("attention_torch", "fill -1e9", lambda q, k, v, mask=None: tatt(q, k, v, mask, fill=-1e9), "uniform weights"),
    ("attention_torch", "no scale", lambda q, k, v, mask=None: tatt(q, k, v, mask, scale=False), "scale"),
    ("attention_torch", "through NumPy", tatt_numpy, "NumPy"),
    ("attention_torch", "k.T", tatt_transpose_all, "transpos"),
    ("attention_torch", "torch.where(mask, s, 0)", tatt_where_zero, "exp(0) = 1"),
    ("attention_torch", "detached outputs", tatt_detached, "detach"),
    ("additive_scores", "no tanh", add_no_tanh, "tanh"),
    ("additive_scores", "W_a and U_a swapped", add_swapped_weights, "U_a"),
    ("additive_scores", "(S, T) scores", add_transposed, "transposed"),
    ("additive_scores", "summed hidden units", add_loop_sum, "v_a"),
    ("additive_scores", "no pairing axes", add_no_broadcast, "every query meets every key"),
    ("additive_scores", "tanh after v_a", add_tanh_outside, "inside"),
    ("additive_scores", "a dot product of projections", add_dot, "additive attention adds them"),
    ("self_attention_module", "W_q for the keys", KeysFromQueries, "W_q"),
    ("self_attention_module", "returns out only", ReturnsOut, "return all 2"),
    ("self_attention_module", "projections with bias", WithBias, "bias"),
    ("self_attention_module", "scaled by d_model", ScaleByModel, "sqrt(d_model)"),
    ("self_attention_module", "mask ignored", IgnoresMask, "mask"),
    ("self_attention_module", "through NumPy", ThroughNumpy, "NumPy"),
    ("self_attention_module", "other names", NamedDifferently, "self.W_q"),
    ("self_attention_module", "x @ weight", MatricesByHand, "transpos"),
    ("self_attention_module", "values are x", ValuesAreX, "values"),
    ("self_attention_module", "Linear(d_head, d_model)", SwappedSizes, "in_features"),
    ("self_attention_module", "an instance", KeysFromQueries(8, 4), "instance"),
    ("unscaled_weight", "0.88 (scaled)", 0.88, "with* the division"),
    ("unscaled_weight", "0.9997 (e^-8)", 0.9997, "difference of 8"),
    ("raw_spread", "64", 64.0, "variance"),
    ("raw_spread", "1", 1.0, "after"),
    ("cross_columns", "7", 7, "queries"),
    ("cross_columns", "64", 64, "d_k"),
    # The independent learner's attempts (see the section above).
    ("slide_keys", "learner: k + c * q", slide_no_axis, "second axis"),
    ("slide_keys", "learner: rescaled the keys", l_slide_rescale, "multiple of `q`"),
    ("slide_keys", "learner: divided by d", l_slide_divide_by_d, "q·q"),
    ("slide_keys", "learner: returned c", l_slide_return_c, "coefficients"),
    ("slide_keys", "learner: np.sum(k * q) without an axis", l_slide_no_axis_sum, "one total"),
    ("attention_torch", "learner: F.scaled_dot_product_attention", l_tatt_sdpa, "doesn't return the weights"),
    ("additive_scores", "learner: loop over the keys", l_add_loop_keys, "loop"),
    ("self_attention_module", "learner: W_k = W_q", LSharedKeys, "same layer"),
    ("self_attention_module", "learner: no rule for rows with no visible key", LNoEmptyRows, "no visible key"),
    ("attention", "learner: keys and values swapped", l_att_swapped_kv, "against `v`"),
    ("attention", "learner: mask transposed", l_att_mask_transposed, "don't transpose it"),
    ("attention_torch", "learner: exp without the max", l_tatt_unstable, "overflow"),
    ("attention_torch", "learner: d = len(q.shape)", l_tatt_len_shape, "q.shape[-1]"),
    ("attention_torch", "learner: scores + mask", l_tatt_additive_mask, "boolean"),
    ("attention_torch", "learner: ~mask with mask None", l_tatt_tilde_none, "mask=None"),
    ("attention_torch", "learner: torch.sqrt of an int", l_tatt_sqrt_int, "math.sqrt"),
    ("additive_scores", "learner: tanh on each projection", l_add_tanh_each, "tanh goes around the sum"),
    ("additive_scores", "learner: [:, None] breaks on a batch", l_add_no_batch, "from the end"),
    ("additive_scores", "learner: softmax of the scores", l_add_softmax, "no softmax"),
    ("additive_scores", "learner: einsum of the tanh'd projections", l_add_einsum_product, "tanh of their sum"),
    ("self_attention_module", "learner: k.T on a batch", LKT, "transpose(-2, -1)"),
    ("self_attention_module", "learner: weights detached", LDetached, "detach"),
    ("self_attention_module", "learner: d_head ** 1/2", LHalfPower, "** 1/2"),
    ("self_attention_module", "learner: masked_fill(mask, -inf)", LInvertedMask, "inverted"),
    ("unscaled_weight", "learner: 0.8808", 0.8808, "with* the division"),
    ("unscaled_weight", "learner: 0", 0, "key 2"),
    ("unscaled_weight", "learner: e^16", 8886110, "ratio"),
    ("unscaled_weight", "learner: 100", 100, "percentage"),
    ("unscaled_weight", "round 2: 0.9999 (truncated)", 0.9999, "round (not truncate)"),
    ("raw_spread", "learner: 0.125", 0.125, "scaling factor"),
    ("raw_spread", "learner: 2.83", 2.83, "a root taken twice"),
    ("raw_spread", "learner: 64 ** 0.25", 64**0.25, "a root taken twice"),
    ("cross_columns", "learner: 19", 19, "keys only"),
    ("cross_columns", "learner: 84", 84, "entries"),
]  # fmt: skip


def r2_tatt_nan_zeroed_in_place(q, k, v, mask=None):
    """Round 2: softmax's output edited in place (autograd needs it for backward)."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    weights[weights != weights] = 0.0
    return weights @ v, weights


def r2_tatt_to_cuda(q, k, v, mask=None):
    """Round 2: moves the tensors to a GPU."""
    q, k, v = q.to("cuda"), k.to("cuda"), v.to("cuda")
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask.to("cuda"), float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v, weights


def r2_tatt_nan_left_in_weights(q, k, v, mask=None):
    """Round 2: nan_to_num on the output only; the weights keep their NaN."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return (weights @ v).nan_to_num(0.0), weights


def r2_slide_precedence(q, k, targets):
    """Round 2: `/ q @ q` without parentheses divides by the vector q first."""
    c = (targets - k @ q) / q @ q
    return k + c[:, None] * q


def r2_slide_hard_coded_targets(q, k, targets):
    """Round 2: the chapter's targets typed in instead of the argument."""
    target = np.array([112.0, 96.0])
    return k + ((target - k @ q) / (q @ q))[:, None] * q


def r2_add_v_a_on_the_left(q, k, W_a, U_a, v_a):
    """Round 2: v_a @ tanh(...) contracts the key axis, not h."""
    hq = q @ W_a
    hk = k @ U_a
    return v_a @ np.tanh(hq[..., :, None, :] + hk[..., None, :, :])


class R2ParameterMatrices(torch.nn.Module):
    """Round 2: nn.Parameter matrices named W_q, W_k, W_v instead of nn.Linear layers."""

    def __init__(self, d_model, d_head):
        super().__init__()
        self.W_q = torch.nn.Parameter(torch.randn(d_model, d_head) / math.sqrt(d_model))
        self.W_k = torch.nn.Parameter(torch.randn(d_model, d_head) / math.sqrt(d_model))
        self.W_v = torch.nn.Parameter(torch.randn(d_model, d_head) / math.sqrt(d_model))

    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ v, weights


def r2_slide_list_of_rows(q, k, targets):
    """Round 2: a Python list of moved keys, not one array."""
    return [k[j] + (targets[j] - k[j] @ q) / (q @ q) * q for j in range(len(k))]


CORPUS += [
    ("slide_keys", "round 2: a list of rows", r2_slide_list_of_rows, "list of rows"),
    ("self_attention_module", "round 2: nn.Parameter matrices", R2ParameterMatrices, "not a layer"),
    ("additive_scores", "round 2: v_a @ tanh(...)", r2_add_v_a_on_the_left, "read-out contracts h"),
    ("slide_keys", "round 2: / q @ q precedence", r2_slide_precedence, "left to right"),
    ("slide_keys", "round 2: hard-coded targets", r2_slide_hard_coded_targets, "typed in"),
    ("attention_torch", "round 2: NaN zeroed in place", r2_tatt_nan_zeroed_in_place, "in place"),
    ("attention_torch", "round 2: .to('cuda')", r2_tatt_to_cuda, "GPU"),
    ("attention_torch", "round 2: NaN left in the weights", r2_tatt_nan_left_in_weights, "hides every key"),
]  # fmt: skip


# ------------------------------------------------------------------ round 3
# The second independent learner's non-specific cases, and more of the same families.


def r3_slide_view_copy(q, k, targets):
    out = k[:]
    for j in range(len(out)):
        out[j] += (targets[j] - out[j] @ q) / (q @ q) * q
    return out


def r3_slide_sum_of_q(q, k, targets):
    c = (targets - k @ q) / q.sum()
    return k + c[:, None] * q


def r3_slide_unit_vector(q, k, targets):
    qn = q / np.linalg.norm(q)
    c = targets - k @ qn
    return k + c[:, None] * qn


def r3_slide_norm_of_squares(q, k, targets):
    c = (targets - k @ q) / np.linalg.norm(q**2)
    return k + c[:, None] * q


def r3_slide_precedence_one_line(q, k, targets):
    return k + ((targets - k @ q) / q @ q)[:, None] * q


def r3_slide_typed_targets_loop(q, k, targets):
    out = k.copy()
    for j, t in enumerate([112.0, 96.0]):
        out[j] = k[j] + (t - k[j] @ q) / (q @ q) * q
    return out


def _r3_np_attention(
    q, k, v, mask=None, *, scale=None, empty=np.any, apply_none=False, whole=False
):
    d = q.shape[-1]
    scores = q @ np.swapaxes(k, -1, -2) / (np.sqrt(d) if scale is None else scale)
    if mask is not None or apply_none:
        scores = np.where(mask, scores, -1e30)
    if whole:
        e = np.exp(scores - scores.max())
        weights = e / e.sum()
    else:
        e = np.exp(scores - scores.max(-1, keepdims=True))
        weights = e / e.sum(-1, keepdims=True)
    if mask is not None or apply_none:
        weights = np.where(empty(mask, axis=-1, keepdims=True), weights, 0.0)
    return weights @ v, weights


def r3_att_scale_8(q, k, v, mask=None):
    return _r3_np_attention(q, k, v, mask, scale=8)


def r3_att_whole_array(q, k, v, mask=None):
    return _r3_np_attention(q, k, v, mask, whole=True)


def r3_att_mask_none_applied(q, k, v, mask=None):
    return _r3_np_attention(q, k, v, mask, apply_none=True)


def r3_att_all_for_empty_rows(q, k, v, mask=None):
    return _r3_np_attention(q, k, v, mask, empty=np.all)


def r3_tatt_scale_8(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / 8.0
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v, weights


def r3_tatt_softmax_no_dim(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = F.softmax(scores).nan_to_num(0.0)
    return weights @ v, weights


def r3_tatt_whole_tensor(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    e = torch.exp(scores - scores.max())
    weights = (e / e.sum()).nan_to_num(0.0)
    return weights @ v, weights


def r3_add_relu(q, k, W_a, U_a, v_a):
    hq, hk = q @ W_a, k @ U_a
    return np.maximum(0, hq[..., :, None, :] + hk[..., None, :, :]) @ v_a


def r3_add_sigmoid(q, k, W_a, U_a, v_a):
    hq, hk = q @ W_a, k @ U_a
    return 1 / (1 + np.exp(-(hq[..., :, None, :] + hk[..., None, :, :]))) @ v_a


def r3_add_sum_over_keys(q, k, W_a, U_a, v_a):
    hq, hk = q @ W_a, k @ U_a
    return (np.tanh(hq[..., :, None, :] + hk[..., None, :, :]) * v_a).sum(axis=-2)


class R3ScaleMultiplied(LRight):
    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        s = q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1])
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = torch.softmax(s, dim=-1).nan_to_num(0.0)
        return w @ v, w


class R3ScaleFixed(LRight):
    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        s = q @ k.transpose(-2, -1) / 8
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = torch.softmax(s, dim=-1).nan_to_num(0.0)
        return w @ v, w


class R3MaskTransposed(LRight):
    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            s = s.masked_fill(~mask.transpose(-2, -1), float("-inf"))
        w = torch.softmax(s, dim=-1).nan_to_num(0.0)
        return w @ v, w


class R3Dropout(LRight):
    def __init__(self, d_model, d_head):
        super().__init__(d_model, d_head)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x, mask=None):
        _, w = tatt(self.W_q(x), self.W_k(x), self.W_v(x), mask)
        w = self.dropout(w)
        return w @ self.W_v(x), w


class R3SoftmaxNoDim(LRight):
    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = nn.Softmax()(s).nan_to_num(0.0)
        return w @ v, w


CORPUS += [
    ("slide_keys", "round 3: out = k[:] (a view), then +=", r3_slide_view_copy, "view"),
    ("slide_keys", "round 3: divided by q.sum()", r3_slide_sum_of_q, "sum of q's entries"),
    ("slide_keys", "round 3: slid along q/|q|", r3_slide_unit_vector, "unit vector"),
    ("slide_keys", "round 3: np.linalg.norm(q ** 2)", r3_slide_norm_of_squares, "vector of squares"),
    ("slide_keys", "round 3: / q @ q in one line", r3_slide_precedence_one_line, "left to right"),
    ("slide_keys", "round 3: typed-in targets in a loop", r3_slide_typed_targets_loop, "typed in"),
    ("attention", "round 3: / 8", r3_att_scale_8, "fixed 8"),
    ("attention", "round 3: one softmax over the whole array", r3_att_whole_array, "whole array"),
    ("attention", "round 3: np.where(None, ...)", r3_att_mask_none_applied, "mask is not None"),
    ("attention", "round 3: mask.all for empty rows", r3_att_all_for_empty_rows, "`all`"),
    ("attention_torch", "round 3: / 8.0", r3_tatt_scale_8, "fixed 8"),
    ("attention_torch", "round 3: F.softmax without dim", r3_tatt_softmax_no_dim, "without `dim`"),
    ("attention_torch", "round 3: one softmax over the whole tensor", r3_tatt_whole_tensor, "whole array"),
    ("additive_scores", "round 3: ReLU for tanh", r3_add_relu, "ReLU"),
    ("additive_scores", "round 3: sigmoid for tanh", r3_add_sigmoid, "sigmoid"),
    ("additive_scores", "round 3: summed over the keys", r3_add_sum_over_keys, "keys axis"),
    ("self_attention_module", "round 3: scores times sqrt(d_head)", R3ScaleMultiplied, "multiplied"),
    ("self_attention_module", "round 3: / 8", R3ScaleFixed, "fixed 8"),
    ("self_attention_module", "round 3: mask transposed", R3MaskTransposed, "transposed the mask"),
    ("self_attention_module", "round 3: dropout on the weights", R3Dropout, "random"),
    ("self_attention_module", "round 3: nn.Softmax() without dim", R3SoftmaxNoDim, "without `dim`"),
    ("unscaled_weight", "round 3: 0.12 (key 2, scaled)", 0.12, "key 2"),
    ("unscaled_weight", "round 3: 16 (the difference)", 16, "difference"),
    ("unscaled_weight", "round 3: 2 (the scaled difference)", 2, "difference"),
    ("unscaled_weight", "round 3: 0.99", 0.99, "closer to 1"),
    ("raw_spread", "round 3: 4096", 4096, "64²"),
    ("raw_spread", "round 3: 32", 32, "64 / 2"),
    ("raw_spread", "round 3: 16", 16, "64 / 4"),
    ("slide_keys", "round 3 family: divided by k_j · k_j", lambda q, k, targets: k + ((targets - k @ q) / (k * k).sum(-1))[:, None] * q, "each key's squared length"),
    ("slide_keys", "round 3 family: divided by (q · q)²", lambda q, k, targets: k + ((targets - k @ q) / (q @ q) ** 2)[:, None] * q, "fourth power"),
    ("slide_keys", "round 3 family: k + targets q", lambda q, k, targets: k + np.outer(targets, q), "make up the difference"),
    ("raw_spread", "round 3 family: 7.9 (a simulation's number)", 7.9, "follows exactly"),
    ("raw_spread", "round 3 family: 512 (d_model)", 512, "d_model"),
    ("cross_columns", "round 3 family: 1", 1, "every encoder position"),
    ("cross_columns", "round 3: 5 (the chapter's example)", 5, "chapter's example"),
    ("cross_columns", "round 3: 3 (the chapter's example)", 3, "chapter's example"),
    ("additive_scores", "round 4: np.squeeze after @ v_a[:, None]", r4_add_squeeze, "one query"),
    ("attention_torch", "round 4: torch.softmax without dim", r4_tatt_softmax_no_dim, "without `dim`"),
    ("attention_torch", "round 4: torch.bmm on unbatched input", r4_tatt_bmm, "3-D"),
    ("self_attention_module", "round 4: w[w != w] = 0 on softmax's output", R4InPlaceNan, "in place"),
    ("additive_scores", "round 4: a loop over the hidden units", r4_add_loop_hidden, "hidden units"),
    ("slide_keys", "round 4: divided by q * q", r4_slide_elementwise_qq, "q * q"),
    ("attention_torch", "round 4: k.transpose(0, 1)", r4_tatt_transpose_0_1, "transpose(0, 1)"),
    ("attention_torch", "round 4: (1 - mask) * -inf added", r4_tatt_mask_times_inf, "0 · (-inf)"),
    ("attention_torch", "round 4: torch.where branches swapped", r4_tatt_where_swapped, "swapped"),
    ("additive_scores", "round 4: W_a.T and U_a.T", r4_add_W_transposed, "transpose"),
    ("self_attention_module", "round 4: v divided by sqrt(d_head)", R4ScaleValues, "values v"),
    ("self_attention_module", "round 4: boolean mask added", R4MaskAdded, "adding it"),
    ("unscaled_weight", "round 4: 0.6225 (divided by 64)", 0.6225, "differ by 0.5"),
    ("unscaled_weight", "round 4: 1.5 (no share)", 1.5, "not a weight"),
    ("raw_spread", "round 4: sqrt(2 * 64)", math.sqrt(128), "variance of 128"),
    ("raw_spread", "round 4: 6.9 (a simulation)", 6.9, "variance of 47.61"),
    ("cross_columns", "round 4: 13 (an end token)", 13, "one more than the length of the encoder's sentence"),
    ("cross_columns", "round 4: 11 (a token dropped)", 11, "one less than the length of the encoder's sentence"),
    ("cross_columns", "round 4: 8 (decoder length plus one)", 8, "the rows, the queries"),
    ("slide_keys", "round 4 (2): loop without / q·q", r4b_slide_loop_unit_q, "division by q·q"),
    ("additive_scores", "round 4 (2): dot product in the hidden space", r4b_add_dot_in_hidden, "dot product"),
    ("additive_scores", "round 4 (2): dot product, no tanh", r4b_add_dot_no_tanh, "additive attention adds them"),
    ("cross_columns", "round 4: 6144", 6144, "none of the lengths"),
]  # fmt: skip

# The learner's round 5: a generic hint, a misleading diagnosis or a bare exception before.
CORPUS += [
    ("slide_keys", "round 5: / len(q) on top of q·q", r5_slide_extra_len, "len(q) on top of q·q"),
    ("slide_keys", "round 5: / (q * q) unbroadcast", r5_slide_elementwise_qq, "`q * q` is the vector"),
    ("slide_keys", "round 5: c.reshape(2, 1)", r5_slide_two_keys, "a size is written into your code: the 2"),
    ("slide_keys", "round 5: one shift from the mean", r5_slide_one_shift, "same amount"),
    ("attention", "round 5: scaled after the softmax", r5_att_scale_after_softmax, "after the softmax"),
    ("attention", "round 5: scaled the output", r5_att_scale_on_output, "output instead of the scores"),
    ("attention_torch", "round 5: scaled after the softmax", r5_tatt_scale_after_softmax, "after the softmax"),
    ("self_attention_module", "round 5: scores * mask", R5MaskMultiplied, "multiplied the scores by the mask"),
    ("self_attention_module", "round 5: scaled the output", R5ScaleOnOutput, "or the output, the same numbers"),
    ("self_attention_module", "round 5: ~None, beside a wrong attention_torch", R5UnguardedBesideWrongFunction, "is None"),
    ("raw_spread", "round 5: sqrt(64) - 1", 7, "no -1"),
    ("cross_columns", "round 5: 64 meant as d_v", 64, "d_v counts the columns of the output"),
]  # fmt: skip

CORPUS += ROUND_SIX


# ------------------------------------------------------------------ round 7


def r7_slide_scores_axis_0(q, k, targets):
    scores = (k * q).sum(axis=0)
    c = (targets - scores) / (q @ q)
    return k + c[:, None] * q


class R7WeightAsStored(LRight):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q.weight, x @ self.W_k.weight, x @ self.W_v.weight
        s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = torch.nan_to_num(torch.softmax(s, -1), nan=0.0)
        return w @ v, w


class R7InPlaceNanZeroing(LRight):
    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = torch.softmax(s, -1)
        w[w != w] = 0.0
        return w @ v, w


# The learner's round 7: misleading or generic before (the scores summed over the keys got
# "give the coefficients a second axis" though the code has one; a weight of 2.4e-36 was
# called key 2's weight).
ROUND_SEVEN = [
    ("slide_keys", "round 7: scores summed over axis 0, c[:, None] present", r7_slide_scores_axis_0, "summed over axis 0"),
    ("self_attention_module", "round 7: x @ self.W_q.weight", R7WeightAsStored, "(d_out, d_in)"),
    ("self_attention_module", "round 7: w[w != w] = 0 after the softmax", R7InPlaceNanZeroing, "in place"),
    ("unscaled_weight", "round 7: /8 on one score only", 1 / (1 + math.exp(-(112 / 8 - 96))), "82 below"),
    ("unscaled_weight", "round 7: key 2's weight", 1 / (1 + math.exp(16)), "key 2's weight"),
    ("raw_spread", "round 7: 128", 128, "2 × 64"),
]  # fmt: skip

CORPUS += ROUND_SEVEN


CORRECT = [
    # (exercise, what the learner did, a right answer): each must pass.
    ("self_attention_module", "learner: float32 sqrt as the scale", LFloat32Scale),
    ("self_attention_module", "learner: a float32 scale buffer", LScaleBuffer),
    ("self_attention_module", "plain", LRight),
]


@pytest.mark.parametrize(("exercise", "what", "answer"), CORRECT, ids=[w for _, w, _ in CORRECT])
def test_right_answers_written_otherwise_pass(exercise, what, answer):
    result = CHECKS[exercise](answer)
    assert result.passed, result.text


def test_the_corpus_covers_every_exercise_and_is_large():
    assert {e for e, *_ in CORPUS} == set(CHECKS)
    assert len(CORPUS) >= 45
    labels = [(e, what) for e, what, _, _ in CORPUS]
    assert len(labels) == len(set(labels))


@pytest.mark.parametrize(
    ("exercise", "what", "answer", "words"), CORPUS, ids=[f"{e}: {w}" for e, w, _, _ in CORPUS]
)
def test_no_wrong_answer_passes_or_is_misled(exercise, what, answer, words):
    kind, result = classify(CHECKS[exercise], answer, words)
    assert kind != "accepted", f"{what}: a wrong answer passed"
    assert kind != "crash", f"{what}: the grader failed\n{result.text}"
    assert kind != "misleading", f"{what}: expected {words!r}\n{result.text}"


def test_at_least_nine_in_ten_get_a_specific_diagnosis():
    counts = tally(CHECKS, CORPUS)
    assert counts["misleading"] == 0 and counts["accepted"] == 0, counts
    assert counts["specific"] >= 0.9 * len(CORPUS), counts


@pytest.mark.parametrize(
    ("exercise", "answer", "wrong_words"),
    [
        ("slide_keys", r7_slide_scores_axis_0, "second axis"),  # its c[:, None] is there
        ("unscaled_weight", 1 / (1 + math.exp(-(112 / 8 - 96))), "key 2's weight"),  # 2.4e-36
    ],
)
def test_round_seven_misleading_diagnoses_are_gone(exercise, answer, wrong_words):
    result = CHECKS[exercise](answer)
    assert not result.passed
    assert wrong_words not in f"{result.message}\n{result.diagnosis}", result.text
