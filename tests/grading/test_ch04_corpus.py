"""Chapter 4's graders against answers written as learners write them.

Wrong answers to every exercise of chapter 4 (4.1-4.8), written here from the statements
alone, without looking at the graders' planted or generated mistakes: a float head size,
``np.split`` and ``np.concatenate`` along the wrong axis, names unpacked in the wrong
order, a layer that swaps keys and values, returns ``out`` alone, merges with ``.view``,
concatenates or repeats along the wrong axis, goes through NumPy; a loader that assigns
tensors to parameters or loads a state dict with the wrong names; predictions off by a
bias, a head or a step. Each comes with words its diagnosis must contain (classes: see
``corpus.py``). Right answers, two or more per exercise and written differently, must pass.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from corpus import chapter_tests
from torch import nn

from attnlab import MultiHeadAttention
from attnlab.grading.ch04 import (
    check_bert_parameters,
    check_blend_weight,
    check_load_into_torch,
    check_merge_heads,
    check_mha_parameter_count,
    check_multihead_attention,
    check_split_heads,
    check_which_key,
)

CHECKS = {
    "split_heads": check_split_heads,
    "merge_heads": check_merge_heads,
    "mha_parameter_count": check_mha_parameter_count,
    "bert_parameters": check_bert_parameters,
    "multihead_attention": check_multihead_attention,
    "load_into_torch": check_load_into_torch,
    "blend_weight": check_blend_weight,
    "which_key": check_which_key,
}


# ------------------------------------------------------------------ 4.1 split into heads


def split_float_size(x, n_heads):
    B, T, D = x.shape
    d = D / n_heads
    return x.reshape(B, T, n_heads, d).transpose(0, 2, 1, 3)


def split_torch(x, n_heads):
    t = torch.from_numpy(x)
    B, T, D = t.shape
    return t.view(B, T, n_heads, D // n_heads).transpose(1, 2)


def split_np_split(x, n_heads):
    return np.array(np.split(x, n_heads, axis=-1))  # one (B, T, d) array per head


def split_swap_1_3(x, n_heads):
    B, T, D = x.shape
    return x.reshape(B, T, n_heads, D // n_heads).swapaxes(1, 3)


def split_two_heads(x, n_heads):
    B, T, D = x.shape
    return x.reshape(B, T, 2, D // 2).transpose(0, 2, 1, 3)


def split_columns_every_h(x, n_heads):
    heads = [x[:, :, h::n_heads] for h in range(n_heads)]
    return np.stack(heads, axis=1)


def split_right_transpose(x, n_heads):
    B, T, D = x.shape
    return np.transpose(x.reshape(B, T, n_heads, D // n_heads), (0, 2, 1, 3))


def split_right_slices(x, n_heads):
    d = x.shape[-1] // n_heads
    return np.stack([x[..., h * d : (h + 1) * d] for h in range(n_heads)], axis=1)


# ------------------------------------------------------------------ 4.2 merge the heads


def merge_concat_axis_1(x):
    return np.concatenate([x[:, h] for h in range(x.shape[1])], axis=1)


def merge_names_out_of_order(x):
    B, T, H, d = x.shape  # the names in the wrong order
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * d)


def merge_to_d(x):
    B, _H, T, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, d)


def merge_torch(x):
    t = torch.from_numpy(x)
    return t.transpose(1, 2).flatten(2)


def merge_no_transpose(x):
    B, H, T, d = x.shape
    return x.reshape(B, T, H * d)


def merge_right_swapaxes(x):
    B, H, T, d = x.shape
    return np.swapaxes(x, 1, 2).reshape(B, T, H * d)


def merge_right_concat(x):
    return np.concatenate(list(np.moveaxis(x, 1, 0)), axis=-1)


# ------------------------------------------------------------------ 4.3 parameter count


def count_no_bias(d_model, n_heads, bias=True):
    return 4 * d_model * d_model


def count_bias_always(d_model, n_heads, bias=True):
    return 4 * d_model * d_model + 4 * d_model


def count_float_head(d_model, n_heads, bias=True):
    d = d_model / n_heads
    per_head = 3 * (d_model * d + (d if bias else 0))
    return n_heads * per_head + d_model * d_model + (d_model if bias else 0)


def count_three(d_model, n_heads, bias=True):
    return 3 * d_model * d_model + (3 * d_model if bias else 0)


def count_full_heads(d_model, n_heads, bias=True):
    per_head = 3 * (d_model * d_model + (d_model if bias else 0))
    return n_heads * per_head + d_model * d_model + (d_model if bias else 0)


def count_layer_per_head(d_model, n_heads, bias=True):
    return n_heads * (4 * d_model * d_model + (4 * d_model if bias else 0))


def count_right(d_model, n_heads, bias=True):
    return 4 * (d_model + 1) * d_model if bias else 4 * d_model**2


def count_right_by_heads(d_model, n_heads, bias=True):
    d = d_model // n_heads
    total = 0
    for _ in range(n_heads):
        total += 3 * d_model * d + (3 * d if bias else 0)
    return total + d_model * d_model + (d_model if bias else 0)


# ------------------------------------------------------------------ 4.5 the module


class Base(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        assert d_model % n_heads == 0
        self.n_heads, self.d_head = n_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def heads(self, t):
        B, L, _D = t.shape
        return t.view(B, L, self.n_heads, self.d_head).transpose(1, 2)

    def attend(self, q, k, v, mask):
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = s.softmax(-1)
        return w @ v, w

    def merge(self, h):
        B, H, T, d = h.shape
        return h.transpose(1, 2).reshape(B, T, H * d)


class KeyValueSwapped(Base):
    def forward(self, query, key, value, mask=None):
        q = self.heads(self.W_q(query))
        k = self.heads(self.W_k(value))
        v = self.heads(self.W_v(key))
        out, w = self.attend(q, k, v, mask)
        return self.W_o(self.merge(out)), w


class OnlyOut(Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.heads(self.W_q(query)),
            self.heads(self.W_k(key)),
            self.heads(self.W_v(value)),
        )
        out, _ = self.attend(q, k, v, mask)
        return self.W_o(self.merge(out))


class ScaleByModel(Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.heads(self.W_q(query)),
            self.heads(self.W_k(key)),
            self.heads(self.W_v(value)),
        )
        s = q @ k.transpose(-2, -1) / math.sqrt(query.shape[-1])
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = F.softmax(s, dim=-1)
        return self.W_o(self.merge(w @ v)), w


class MaskFillsVisible(Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.heads(self.W_q(query)),
            self.heads(self.W_k(key)),
            self.heads(self.W_v(value)),
        )
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            s = s.masked_fill(mask, float("-inf"))
        w = torch.softmax(s, dim=-1)
        return self.W_o(self.merge(w @ v)), w


class SoftmaxOverHeads(Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.heads(self.W_q(query)),
            self.heads(self.W_k(key)),
            self.heads(self.W_v(value)),
        )
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = torch.softmax(s, dim=1)
        return self.W_o(self.merge(w @ v)), w


class MergeWithView(Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.heads(self.W_q(query)),
            self.heads(self.W_k(key)),
            self.heads(self.W_v(value)),
        )
        out, w = self.attend(q, k, v, mask)
        B, T, D = query.shape
        return self.W_o(out.transpose(1, 2).view(B, T, D)), w


class QueryLengthForKeys(Base):
    def forward(self, query, key, value, mask=None):
        B, T, _D = query.shape
        H, d = self.n_heads, self.d_head
        q = self.W_q(query).reshape(B, T, H, d).transpose(1, 2)
        k = self.W_k(key).reshape(B, T, H, d).transpose(1, 2)
        v = self.W_v(value).reshape(B, T, H, d).transpose(1, 2)
        out, w = self.attend(q, k, v, mask)
        return self.W_o(self.merge(out)), w


class CatWrongAxis(Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.heads(self.W_q(query)),
            self.heads(self.W_k(key)),
            self.heads(self.W_v(value)),
        )
        out, w = self.attend(q, k, v, mask)
        concat = torch.cat([out[:, h] for h in range(self.n_heads)], dim=1)
        return self.W_o(concat), w


class RepeatMaskWrongAxis(Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.heads(self.W_q(query)),
            self.heads(self.W_k(key)),
            self.heads(self.W_v(value)),
        )
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            per_head = mask.unsqueeze(0).repeat_interleave(self.n_heads, dim=1)  # (1, H*T, S)
            s = s.masked_fill(~per_head, float("-inf"))
        w = torch.softmax(s, dim=-1)
        return self.W_o(self.merge(w @ v)), w


class ThroughNumpy(Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.heads(self.W_q(query)),
            self.heads(self.W_k(key)),
            self.heads(self.W_v(value)),
        )
        s = (q @ k.transpose(-2, -1)).detach().numpy() / np.sqrt(self.d_head)
        if mask is not None:
            s = np.where(mask.numpy(), s, -np.inf)
        e = np.exp(s - s.max(-1, keepdims=True))
        w = torch.from_numpy(e / e.sum(-1, keepdims=True))
        return self.W_o(self.merge(w @ v)), w


class NoOutputProjection(Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.heads(self.W_q(query)),
            self.heads(self.W_k(key)),
            self.heads(self.W_v(value)),
        )
        out, w = self.attend(q, k, v, mask)
        return self.merge(out), w


class DirectSplit(Base):
    def heads(self, t):
        B, L, _D = t.shape
        return t.reshape(B, self.n_heads, L, self.d_head)

    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.heads(self.W_q(query)),
            self.heads(self.W_k(key)),
            self.heads(self.W_v(value)),
        )
        out, w = self.attend(q, k, v, mask)
        return self.W_o(self.merge(out)), w


class NoBiases(Base):
    def __init__(self, d_model, n_heads):
        super().__init__(d_model, n_heads)
        self.W_q = nn.Linear(d_model, d_model, bias=False)
        self.W_k = nn.Linear(d_model, d_model, bias=False)
        self.W_v = nn.Linear(d_model, d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model, bias=False)

    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.heads(self.W_q(query)),
            self.heads(self.W_k(key)),
            self.heads(self.W_v(value)),
        )
        out, w = self.attend(q, k, v, mask)
        return self.W_o(self.merge(out)), w


class MaskAfterSoftmax(Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.heads(self.W_q(query)),
            self.heads(self.W_k(key)),
            self.heads(self.W_v(value)),
        )
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), dim=-1)
        if mask is not None:
            w = w.masked_fill(~mask, 0.0)
        return self.W_o(self.merge(w @ v)), w


class RightWithChunks(Base):
    def forward(self, query, key, value, mask=None):
        q = torch.stack(self.W_q(query).chunk(self.n_heads, dim=-1), dim=1)  # (B, H, T, d)
        k = torch.stack(self.W_k(key).chunk(self.n_heads, dim=-1), dim=1)
        v = torch.stack(self.W_v(value).chunk(self.n_heads, dim=-1), dim=1)
        out, w = self.attend(q, k, v, mask)
        return self.W_o(torch.cat(out.unbind(1), dim=-1)), w


class RightWithEinsum(Base):
    def forward(self, query, key, value, mask=None):
        H, d = self.n_heads, self.d_head
        q = self.W_q(query).unflatten(-1, (H, d))
        k = self.W_k(key).unflatten(-1, (H, d))
        v = self.W_v(value).unflatten(-1, (H, d))
        s = torch.einsum("bqhd,bkhd->bhqk", q, k) / d**0.5
        if mask is not None:
            s = torch.where(mask, s, float("-inf"))
        w = s.softmax(dim=-1)
        out = torch.einsum("bhqk,bkhd->bqhd", w, v).flatten(2)
        return self.W_o(out), w


# ------------------------------------------------------------------ 4.6 load the weights


def load_no_no_grad(ours, theirs):
    theirs.in_proj_weight.copy_(torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight]))
    theirs.in_proj_bias.copy_(torch.cat([ours.W_q.bias, ours.W_k.bias, ours.W_v.bias]))
    theirs.out_proj.weight.copy_(ours.W_o.weight)
    theirs.out_proj.bias.copy_(ours.W_o.bias)


def load_cat_dim_1(ours, theirs):
    with torch.no_grad():
        w = torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight], dim=1)
        theirs.in_proj_weight.copy_(w)
        theirs.in_proj_bias.copy_(torch.cat([ours.W_q.bias, ours.W_k.bias, ours.W_v.bias]))
        theirs.out_proj.weight.copy_(ours.W_o.weight)
        theirs.out_proj.bias.copy_(ours.W_o.bias)


def load_assign_tensor(ours, theirs):
    theirs.in_proj_weight = torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight])
    theirs.in_proj_bias = torch.cat([ours.W_q.bias, ours.W_k.bias, ours.W_v.bias])
    theirs.out_proj = ours.W_o


def load_same_state_dict(ours, theirs):
    theirs.load_state_dict(ours.state_dict())


def load_weights_only(ours, theirs):
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight]))
        theirs.out_proj.weight.copy_(ours.W_o.weight)


def load_transposed(ours, theirs):
    with torch.no_grad():
        D = ours.W_q.weight.shape[0]
        for i, lin in enumerate([ours.W_q, ours.W_k, ours.W_v]):
            theirs.in_proj_weight[i * D : (i + 1) * D] = lin.weight.T
            theirs.in_proj_bias[i * D : (i + 1) * D] = lin.bias
        theirs.out_proj.weight.copy_(ours.W_o.weight.T)
        theirs.out_proj.bias.copy_(ours.W_o.bias)


def load_kqv(ours, theirs):
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([ours.W_k.weight, ours.W_q.weight, ours.W_v.weight]))
        theirs.in_proj_bias.copy_(torch.cat([ours.W_k.bias, ours.W_q.bias, ours.W_v.bias]))
        theirs.out_proj.load_state_dict(ours.W_o.state_dict())


def load_new_parameters(ours, theirs):
    w = torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight]).detach().clone()
    b = torch.cat([ours.W_q.bias, ours.W_k.bias, ours.W_v.bias]).detach().clone()
    theirs.in_proj_weight = nn.Parameter(w)
    theirs.in_proj_bias = nn.Parameter(b)
    theirs.out_proj.load_state_dict(ours.W_o.state_dict())


def load_right_data(ours, theirs):
    lins = (ours.W_q, ours.W_k, ours.W_v)
    theirs.in_proj_weight.data = torch.cat([lin.weight.data for lin in lins]).clone()
    theirs.in_proj_bias.data = torch.cat([lin.bias.data for lin in lins]).clone()
    theirs.out_proj.weight.data = ours.W_o.weight.data.clone()
    theirs.out_proj.bias.data = ours.W_o.bias.data.clone()


def load_right_slices(ours, theirs):
    D = ours.W_q.weight.shape[0]
    with torch.no_grad():
        for i, lin in enumerate((ours.W_q, ours.W_k, ours.W_v)):
            theirs.in_proj_weight[i * D : (i + 1) * D] = lin.weight
            theirs.in_proj_bias[i * D : (i + 1) * D] = lin.bias
        theirs.out_proj.load_state_dict(ours.W_o.state_dict())


def load_right_state_dict(ours, theirs):
    mine = ours.state_dict()
    theirs.load_state_dict(
        {
            "in_proj_weight": torch.cat([mine[f"W_{n}.weight"] for n in "qkv"]),
            "in_proj_bias": torch.cat([mine[f"W_{n}.bias"] for n in "qkv"]),
            "out_proj.weight": mine["W_o.weight"],
            "out_proj.bias": mine["W_o.bias"],
        }
    )


# ------------------------------------------------------------------ an independent learner's


def split_np_split_time_axis(x, n_heads):
    return np.stack(np.split(x, n_heads, axis=1), axis=1)


def count_numpy_integer(d_model, n_heads, bias=True):
    return np.sum([d_model * d_model + (d_model if bias else 0) for _ in range(4)])


def merge_mean_of_heads(x):
    return x.mean(axis=1)


def merge_reversed_heads(x):
    return np.concatenate([x[:, h] for h in reversed(range(x.shape[1]))], axis=-1)


def count_bias_per_head(d_model, n_heads, bias=True):
    d = d_model // n_heads
    return 4 * d_model * d_model + (4 * d if bias else 0)


def count_one_head(d_model, n_heads, bias=True):
    d = d_model // n_heads
    return 3 * d_model * d + d_model * d_model + (4 * d_model if bias else 0)


class BooleanIndexMask(Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.heads(self.W_q(query)),
            self.heads(self.W_k(key)),
            self.heads(self.W_v(value)),
        )
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            s[~mask] = float("-inf")
        w = torch.softmax(s, dim=-1)
        return self.W_o(self.merge(w @ v)), w


# ------------------------------------------------------------------ a second learner's (round 2)


def merge_numpy_view(x):
    B, H, T, d = x.shape
    return x.transpose(0, 2, 1, 3).view(B, T, H * d)


def count_three_biases(d_model, n_heads, bias=True):
    n = 4 * d_model * d_model
    if bias:
        n += 3 * d_model
    return n


class KeyTransposedOneTwo(Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.heads(self.W_q(query)),
            self.heads(self.W_k(key)),
            self.heads(self.W_v(value)),
        )
        s = q @ k.transpose(1, 2) / math.sqrt(self.d_head)
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = torch.softmax(s, dim=-1)
        return self.W_o(self.merge(w @ v)), w


class MaskTransposed(Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.heads(self.W_q(query)),
            self.heads(self.W_k(key)),
            self.heads(self.W_v(value)),
        )
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            s = s.masked_fill(~mask.T, float("-inf"))
        w = torch.softmax(s, dim=-1)
        return self.W_o(self.merge(w @ v)), w


class ScaleAfterSoftmax(Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.heads(self.W_q(query)),
            self.heads(self.W_k(key)),
            self.heads(self.W_v(value)),
        )
        s = q @ k.transpose(-2, -1)
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = torch.softmax(s, dim=-1) / math.sqrt(self.d_head)
        return self.W_o(self.merge(w @ v)), w


def load_out_from_w_v(ours, theirs):
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight]))
        theirs.in_proj_bias.copy_(torch.cat([ours.W_q.bias, ours.W_k.bias, ours.W_v.bias]))
        theirs.out_proj.weight.copy_(ours.W_v.weight)
        theirs.out_proj.bias.copy_(ours.W_v.bias)


def load_through_float32(ours, theirs):
    with torch.no_grad():
        w = torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight]).float()
        theirs.in_proj_weight.copy_(w)
        theirs.in_proj_bias.copy_(torch.cat([ours.W_q.bias, ours.W_k.bias, ours.W_v.bias]).float())
        theirs.out_proj.weight.copy_(ours.W_o.weight)
        theirs.out_proj.bias.copy_(ours.W_o.bias)


# ------------------------------------------------------------------ round 4 (a learner's)


def split_torch_transpose(x, n_heads):
    B, T, D = x.shape
    return x.reshape(B, T, n_heads, D // n_heads).transpose(1, 2)


def split_batch_of_one(x, n_heads):
    _B, T, D = x.shape
    return x.reshape(1, T, n_heads, D // n_heads).transpose(0, 2, 1, 3)


def split_overlapping_slices(x, n_heads):
    d = x.shape[-1] // n_heads
    return np.stack([x[:, :, h : h + d] for h in range(n_heads)], axis=1)


def merge_no_reshape(x):
    return x.transpose(0, 2, 1, 3)


def merge_torch_transpose(x):
    B, H, T, d = x.shape
    return x.transpose(1, 2).reshape(B, T, H * d)


def merge_swapaxes_one_three(x):
    B, H, T, d = x.shape
    return x.swapaxes(1, 3).reshape(B, T, H * d)


def merge_list_of_heads(x):
    return [x[:, h] for h in range(x.shape[1])]


def count_one_head_everywhere(d_model, n_heads, bias=True):
    return 4 * d_model * (d_model // n_heads) + (4 * d_model if bias else 0)


def count_bias_as_one(d_model, n_heads, bias=True):
    return 4 * d_model * d_model + (4 if bias else 0)


def count_d_plus_one_squared(d_model, n_heads, bias=True):
    return 4 * (d_model + int(bias)) ** 2


class WeightsAveraged(Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.heads(self.W_q(query)),
            self.heads(self.W_k(key)),
            self.heads(self.W_v(value)),
        )
        out, w = self.attend(q, k, v, mask)
        return self.W_o(self.merge(out)), w.mean(dim=1)


class BoolMaskAdded(Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.heads(self.W_q(query)),
            self.heads(self.W_k(key)),
            self.heads(self.W_v(value)),
        )
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            s = s + mask
        w = s.softmax(-1)
        return self.W_o(self.merge(w @ v)), w


class ScoresAsWeights(Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.heads(self.W_q(query)),
            self.heads(self.W_k(key)),
            self.heads(self.W_v(value)),
        )
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        return self.W_o(self.merge(s.softmax(-1) @ v)), s


def load_in_biases_missing(ours, theirs):
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight]))
        theirs.out_proj.weight.copy_(ours.W_o.weight)
        theirs.out_proj.bias.copy_(ours.W_o.bias)


def load_out_weight_transposed(ours, theirs):
    lins = (ours.W_q, ours.W_k, ours.W_v)
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([lin.weight for lin in lins]))
        theirs.in_proj_bias.copy_(torch.cat([lin.bias for lin in lins]))
        theirs.out_proj.weight.copy_(ours.W_o.weight.T)
        theirs.out_proj.bias.copy_(ours.W_o.bias)


def load_into_ours(ours, theirs):
    D = ours.W_q.weight.shape[0]
    with torch.no_grad():
        for i, lin in enumerate((ours.W_q, ours.W_k, ours.W_v)):
            lin.weight.copy_(theirs.in_proj_weight[i * D : (i + 1) * D])
            lin.bias.copy_(theirs.in_proj_bias[i * D : (i + 1) * D])
        ours.W_o.weight.copy_(theirs.out_proj.weight)
        ours.W_o.bias.copy_(theirs.out_proj.bias)


def load_out_bias_from_w_q(ours, theirs):
    lins = (ours.W_q, ours.W_k, ours.W_v)
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([lin.weight for lin in lins]))
        theirs.in_proj_bias.copy_(torch.cat([lin.bias for lin in lins]))
        theirs.out_proj.weight.copy_(ours.W_o.weight)
        theirs.out_proj.bias.copy_(ours.W_q.bias)


def load_into_new_layer(ours, theirs):
    new = nn.MultiheadAttention(
        theirs.embed_dim, theirs.num_heads, batch_first=True, dtype=ours.W_q.weight.dtype
    )
    new.load_state_dict(ours.to_torch().state_dict())
    return new


def load_into_a_clone(ours, theirs):
    lins = (ours.W_q, ours.W_k, ours.W_v)
    with torch.no_grad():
        w = theirs.in_proj_weight.clone()
        w.copy_(torch.cat([lin.weight for lin in lins]))
        theirs.in_proj_bias.copy_(torch.cat([lin.bias for lin in lins]))
        theirs.out_proj.weight.copy_(ours.W_o.weight)
        theirs.out_proj.bias.copy_(ours.W_o.bias)


def merge_flattened(x):
    B = x.shape[0]
    return x.transpose(0, 2, 1, 3).reshape(B, -1)


def count_one_bias_vector(d_model, n_heads, bias=True):
    return 4 * d_model * d_model + (d_model if bias else 0)


def count_heads_times_weights(d_model, n_heads, bias=True):
    return n_heads * 4 * d_model * d_model + (4 * d_model if bias else 0)


class KeysFirst(Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.heads(self.W_q(query)),
            self.heads(self.W_k(key)),
            self.heads(self.W_v(value)),
        )
        s = k @ q.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = torch.softmax(s, dim=-1)
        return self.W_o(self.merge(w @ v)), w


def load_new_parameter_objects(ours, theirs):
    lins = (ours.W_q, ours.W_k, ours.W_v)
    theirs.in_proj_weight = nn.Parameter(torch.cat([lin.weight for lin in lins]).detach().clone())
    theirs.in_proj_bias = nn.Parameter(torch.cat([lin.bias for lin in lins]).detach().clone())
    theirs.out_proj.weight = nn.Parameter(ours.W_o.weight.detach().clone())
    theirs.out_proj.bias = nn.Parameter(ours.W_o.bias.detach().clone())


def load_out_proj_aliased(ours, theirs):
    lins = (ours.W_q, ours.W_k, ours.W_v)
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([lin.weight for lin in lins]))
        theirs.in_proj_bias.copy_(torch.cat([lin.bias for lin in lins]))
    theirs.out_proj.weight = ours.W_o.weight
    theirs.out_proj.bias = ours.W_o.bias


def load_data_shared(ours, theirs):
    lins = (ours.W_q, ours.W_k, ours.W_v)
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([lin.weight for lin in lins]))
        theirs.in_proj_bias.copy_(torch.cat([lin.bias for lin in lins]))
    theirs.out_proj.weight.data = ours.W_o.weight.data
    theirs.out_proj.bias.data = ours.W_o.bias.data


# ------------------------------------------------------------------ round six (issue 28)
# The sixth learner round: what its learner tried that got a fallback hint, a stock
# message, a misleading diagnosis, a pass or a bare exception.


def r6_split_dot_t(x, n_heads):
    B, T, D = x.shape
    d = D // n_heads
    return x.reshape(B, T, n_heads, d).T


def r6_split_stack_axis_0(x, n_heads):
    _B, _T, D = x.shape
    D // n_heads
    return np.stack(np.split(x, n_heads, axis=-1), axis=0)


def r6_split_d_h_swapped(x, n_heads):
    B, T, D = x.shape
    d = D // n_heads
    return x.reshape(B, T, d, n_heads).swapaxes(1, 3)


def r6_split_array_split_batch(x, n_heads):
    _B, _T, D = x.shape
    D // n_heads
    return np.stack(np.array_split(x, n_heads), axis=1)


def r6_split_stack_last(x, n_heads):
    _B, _T, D = x.shape
    d = D // n_heads
    return np.stack([x[:, :, h * d : (h + 1) * d] for h in range(n_heads)], axis=-1)


def r6_merge_batch_moved(x):
    B, H, T, d = x.shape
    return x.transpose(1, 2, 0, 3).reshape(B, T, H * d)


def r6_merge_to_d(x):
    B, _H, T, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, d)


def r6_merge_two_heads(x):
    B, _, T, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, 2 * d)


def r6_merge_concatenate_batch(x):
    _B, _H, _T, _d = x.shape
    return np.concatenate(x, axis=-1)


def r6_merge_swap_2_3(x):
    B, H, T, d = x.shape
    return x.swapaxes(2, 3).reshape(B, T, H * d)


def r6_merge_loop_h(x):
    B, H, T, d = x.shape
    out = np.zeros((B, T, H * d))
    for h in range(H):
        out[:, :, h : h + d] = x[:, h]
    return out


def r6_count_bias_square(d_model, n_heads, bias=True):
    return 4 * d_model * d_model + (4 * d_model * d_model if bias else 0)


def r6_count_precedence(d_model, n_heads, bias=True):
    return 4 * d_model**2 + 4 * d_model if bias else 0


class R6Layer(nn.Module):
    """The learner's layer: each variant below changes one line of its forward."""

    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        assert d_model % n_heads == 0, "n_heads must divide d_model"
        self.n_heads, self.d_head = n_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def split(self, t, B):
        return t.view(B, t.size(1), self.n_heads, self.d_head).transpose(1, 2)


class R6HardCodedCausal(R6Layer):
    def forward(self, query, key, value, mask=None):
        B, T, D = query.shape
        q, k, v = (
            self.split(self.W_q(query), B),
            self.split(self.W_k(key), B),
            self.split(self.W_v(value), B),
        )
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            hide = torch.triu(torch.ones(T, k.size(2), dtype=torch.bool), 1)
            s = s.masked_fill(hide, float("-inf"))
        w = torch.softmax(s, dim=-1)
        return self.W_o((w @ v).transpose(1, 2).reshape(B, T, D)), w


class R6KeysFromQuery(R6Layer):
    def forward(self, query, key, value, mask=None):
        B, T, D = query.shape
        q, k, v = (
            self.split(self.W_q(query), B),
            self.split(self.W_k(query), B),
            self.split(self.W_v(query), B),
        )
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = torch.softmax(s, dim=-1)
        return self.W_o((w @ v).transpose(1, 2).reshape(B, T, D)), w


class R6Dropout(R6Layer):
    def forward(self, query, key, value, mask=None):
        B, T, D = query.shape
        q, k, v = (
            self.split(self.W_q(query), B),
            self.split(self.W_k(key), B),
            self.split(self.W_v(value), B),
        )
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = torch.softmax(s, dim=-1)
        w = F.dropout(w, p=0.1, training=True)
        return self.W_o((w @ v).transpose(1, 2).reshape(B, T, D)), w


class R6ValuesNotSplit(R6Layer):
    def forward(self, query, key, value, mask=None):
        B, T, D = query.shape
        q, k, v = self.split(self.W_q(query), B), self.split(self.W_k(key), B), self.W_v(value)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = torch.softmax(s, dim=-1)
        return self.W_o((w @ v).transpose(1, 2).reshape(B, T, D)), w


class R6ScaleByHeads(R6Layer):
    def forward(self, query, key, value, mask=None):
        B, T, D = query.shape
        q, k, v = (
            self.split(self.W_q(query), B),
            self.split(self.W_k(key), B),
            self.split(self.W_v(value), B),
        )
        s = q @ k.transpose(-2, -1) / math.sqrt(self.n_heads)
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = torch.softmax(s, dim=-1)
        return self.W_o((w @ v).transpose(1, 2).reshape(B, T, D)), w


class R6MaskAxisOne(R6Layer):
    def forward(self, query, key, value, mask=None):
        B, T, D = query.shape
        q, k, v = (
            self.split(self.W_q(query), B),
            self.split(self.W_k(key), B),
            self.split(self.W_v(value), B),
        )
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            s = s.masked_fill(~mask[:, None], float("-inf"))
        w = torch.softmax(s, dim=-1)
        return self.W_o((w @ v).transpose(1, 2).reshape(B, T, D)), w


def r6_load_q_three_times(ours, theirs):
    with torch.no_grad():
        theirs.in_proj_weight.copy_(ours.W_q.weight.repeat(3, 1))
        theirs.in_proj_bias.copy_(torch.cat([ours.W_q.bias, ours.W_k.bias, ours.W_v.bias]))
        theirs.out_proj.weight.copy_(ours.W_o.weight)
        theirs.out_proj.bias.copy_(ours.W_o.bias)


def r6_load_separate_projections(ours, theirs):
    with torch.no_grad():
        theirs.q_proj_weight.copy_(ours.W_q.weight)
        theirs.k_proj_weight.copy_(ours.W_k.weight)
        theirs.v_proj_weight.copy_(ours.W_v.weight)
        theirs.out_proj.weight.copy_(ours.W_o.weight)


def r6_load_no_out_bias(ours, theirs):
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight]))
        theirs.in_proj_bias.copy_(torch.cat([ours.W_q.bias, ours.W_k.bias, ours.W_v.bias]))
        theirs.out_proj.weight.copy_(ours.W_o.weight)


def r6_load_q_v_k(ours, theirs):
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([ours.W_q.weight, ours.W_v.weight, ours.W_k.weight]))
        theirs.in_proj_bias.copy_(torch.cat([ours.W_q.bias, ours.W_v.bias, ours.W_k.bias]))
        theirs.out_proj.weight.copy_(ours.W_o.weight)
        theirs.out_proj.bias.copy_(ours.W_o.bias)


# The seventh learner round (issue 28), chapter 4 after round 6's fixes: its generic cases.
def r7_split_reshape_d_t_h(x, n_heads):
    B, T, D = x.shape
    return x.reshape(B, D // n_heads, T, n_heads).transpose(0, 3, 2, 1)


def r7_split_reshape_h_d_t(x, n_heads):
    B, T, D = x.shape
    return x.reshape(B, n_heads, D // n_heads, T).transpose(0, 1, 3, 2)


def r7_merge_first_head(x):
    B, _H, T, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, -1)[..., :d]


def r7_merge_last_head(x):
    return x[:, -1]


class R7KeysTransposedOneThree(Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.heads(self.W_q(query)),
            self.heads(self.W_k(key)),
            self.heads(self.W_v(value)),
        )
        s = q @ k.transpose(1, 3) / math.sqrt(self.d_head)
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = s.softmax(-1)
        return self.W_o(self.merge(w @ v)), w


def r7_load_side_by_side(ours, theirs):
    D = ours.W_q.weight.shape[1]
    with torch.no_grad():
        theirs.in_proj_weight.copy_(
            torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight], 1).reshape(-1, D)
        )
        theirs.in_proj_bias.copy_(torch.cat([ours.W_q.bias, ours.W_k.bias, ours.W_v.bias]))
        theirs.out_proj.weight.copy_(ours.W_o.weight)
        theirs.out_proj.bias.copy_(ours.W_o.bias)


def r7_load_stacked_dim_1(ours, theirs):
    D = ours.W_q.weight.shape[1]
    with torch.no_grad():
        theirs.in_proj_weight.copy_(
            torch.stack([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight], 1).reshape(3 * D, D)
        )
        theirs.in_proj_bias.copy_(torch.cat([ours.W_q.bias, ours.W_k.bias, ours.W_v.bias]))
        theirs.out_proj.weight.copy_(ours.W_o.weight)
        theirs.out_proj.bias.copy_(ours.W_o.bias)


ROUND_SEVEN = [
    ("split_heads", "round 7: reshape(B, d, T, H)", r7_split_reshape_d_t_h, "reshape is to (B, d, T, H)"),
    ("split_heads", "round 7: reshape(B, H, d, T)", r7_split_reshape_h_d_t, "reshape is to (B, H, d, T)"),
    ("merge_heads", "round 7: [..., :d] after the merge", r7_merge_first_head, "the first head's"),
    ("merge_heads", "round 7: x[:, -1]", r7_merge_last_head, "the last head's"),
    ("bert_parameters", "round 7: one too many", 2_362_369, "arithmetic slipped"),
    ("bert_parameters", "round 7: 7 too few", 2_362_361, "7 too few"),
    ("bert_parameters", "round 7: a fifth bias", 4 * 768 * 768 + 5 * 768, "counted where the layer has none"),
    ("multihead_attention", "round 7: k.transpose(1, 3)", R7KeysTransposedOneThree, "swaps axes 1 and 3 of `k`"),
    ("load_into_torch", "round 7: cat along dim 1, reshaped", r7_load_side_by_side, "side by side"),
    ("load_into_torch", "round 7: stack along dim 1, reshaped", r7_load_stacked_dim_1, "side by side"),
]  # fmt: skip


ROUND_SIX = [
    ("split_heads", "round 6: .T after the reshape", r6_split_dot_t, "`.T`"),
    ("split_heads", "round 6: np.stack(..., axis=0)", r6_split_stack_axis_0, "B axis and the H axis are swapped"),
    ("split_heads", "round 6: reshape(B, T, d, H)", r6_split_d_h_swapped, "every H-th feature"),
    ("split_heads", "round 6: np.array_split on the batch", r6_split_array_split_batch, "cuts along axis 0"),
    ("split_heads", "round 6: slices stacked on the last axis", r6_split_stack_last, "H axis is at axis 3"),
    ("merge_heads", "round 6: transpose(1, 2, 0, 3)", r6_merge_batch_moved, "moves x's batch axis"),
    ("merge_heads", "round 6: reshape(B, T, d)", r6_merge_to_d, "H·d"),
    ("merge_heads", "round 6: 2 * d", r6_merge_two_heads, "into 2 heads"),
    ("merge_heads", "round 6: np.concatenate(x, axis=-1)", r6_merge_concatenate_batch, "batch entries"),
    ("merge_heads", "round 6: swapaxes(2, 3)", r6_merge_swap_2_3, "swaps x's axes 2 and 3"),
    ("merge_heads", "round 6: head h at columns h .. h+d", r6_merge_loop_h, "overlap"),
    ("mha_parameter_count", "round 6: a D x D bias", r6_count_bias_square, "D x D"),
    ("mha_parameter_count", "round 6: ... + 4*D if bias else 0", r6_count_precedence, "precedence"),
    ("bert_parameters", "round 6: one head's four matrices", 4 * 768 * 64 + 4 * 768, "one head"),
    ("bert_parameters", "round 6: one 768 x 768 matrix", 768 * 768, "four"),
    ("bert_parameters", "round 6: W_o's bias left out", 4 * 768 * 768 + 3 * 768, "three bias"),
    ("bert_parameters", "round 6: the count in quotes", "2,362,368", "without quotes"),
    ("bert_parameters", "round 6: (D + 1)^2", 4 * 769**2, "(D + 1)²"),
    ("multihead_attention", "round 6: a causal mask of its own", R6HardCodedCausal, "causal mask of your own"),
    ("multihead_attention", "round 6: keys and values from query", R6KeysFromQuery, "come from `query`"),
    ("multihead_attention", "round 6: dropout on the weights", R6Dropout, "dropout"),
    ("multihead_attention", "round 6: values not split", R6ValuesNotSplit, "but not v"),
    ("multihead_attention", "round 6: scaled by sqrt(H)", R6ScaleByHeads, "√H"),
    ("multihead_attention", "round 6: mask[:, None]", R6MaskAxisOne, "in front, not in the middle"),
    ("load_into_torch", "round 6: W_q repeated 3 times", r6_load_q_three_times, "W_q fills all three blocks"),
    ("load_into_torch", "round 6: q_proj_weight", r6_load_separate_projections, "is None"),
    ("load_into_torch", "round 6: out_proj.bias left out", r6_load_no_out_bias, "out_proj.bias"),
    ("load_into_torch", "round 6: q, v, k", r6_load_q_v_k, "W_k and W_v are swapped"),
    ("blend_weight", "round 6: chapter 3's 0.88", 0.88, "chapter 3"),
    ("blend_weight", "round 6: 0.4", 0.4, "leaves 0.6 of the row"),
    ("which_key", "round 6: -1", -1, "a whole number from 0 to 5"),
]  # fmt: skip


# The fifth learner round (issue 28): what its learner tried that got a fallback hint, a
# misleading diagnosis or a pass.
ROUND_FIVE = [
    ("merge_heads", "reshape(B, -1)", merge_flattened, "joined the time axis"),
    ("mha_parameter_count", "weights x H", count_heads_times_weights, "multiplied the weights"),
    ("mha_parameter_count", "one bias vector", count_one_bias_vector, "one bias vector"),
    ("bert_parameters", "x12 layers, biases again", 28_348_416 + 3072, "twelve whole layers"),
    ("bert_parameters", "x12 weights, biases once", 12 * 4 * 768**2 + 4 * 768, "own four"),
    ("multihead_attention", "k @ q^T", KeysFirst, "score matrix is transposed"),
    ("load_into_torch", "new nn.Parameters", load_new_parameter_objects, "replaced theirs"),
    ("load_into_torch", "new Parameters, out_proj by state dict", load_new_parameters, "new object"),
    ("load_into_torch", "out_proj is ours' W_o", load_out_proj_aliased, "share one parameter"),
    ("load_into_torch", ".data = ours' .data", load_data_shared, "shares its memory"),
    ("blend_weight", "sigmoid(1)", 0.73, "sigmoid"),
    ("which_key", "two back", 3, "two tokens back"),
]  # fmt: skip

ROUND_FOUR = [
    ("split_heads", "torch's .transpose(1, 2)", split_torch_transpose, "torch's spelling"),
    ("split_heads", "a batch of 1 written in", split_batch_of_one, "a size in it is fixed"),
    ("split_heads", "slices h:h+d", split_overlapping_slices, "overlap"),
    ("merge_heads", "no reshape", merge_no_reshape, "did not join the last two"),
    ("merge_heads", "torch's .transpose(1, 2)", merge_torch_transpose, "torch's spelling"),
    ("merge_heads", "swapaxes(1, 3)", merge_swapaxes_one_three, "swapped axes 1 and 3"),
    ("merge_heads", "a list of heads", merge_list_of_heads, "joined along axis 2"),
    ("mha_parameter_count", "D x d each", count_one_head_everywhere, "one head's D x d"),
    ("mha_parameter_count", "a bias of 1", count_bias_as_one, "each bias as one number"),
    ("mha_parameter_count", "(D + 1)^2", count_d_plus_one_squared, "(D + 1)²"),
    ("multihead_attention", "weights averaged over heads", WeightsAveraged, "over the heads"),
    ("multihead_attention", "bool mask added", BoolMaskAdded, "added the boolean mask"),
    ("multihead_attention", "scores as weights", ScoresAsWeights, "before the softmax"),
    ("load_into_torch", "in_proj_bias missing", load_in_biases_missing, "not in_proj_bias"),
    ("load_into_torch", "W_o.weight.T", load_out_weight_transposed, "transposed W_o's weight"),
    ("load_into_torch", "theirs into ours", load_into_ours, "theirs is unchanged"),
    ("load_into_torch", "out_proj bias from W_q", load_out_bias_from_w_q, "bias is W_q's"),
    ("load_into_torch", "a new layer returned", load_into_new_layer, "theirs is unchanged"),
    ("load_into_torch", "into a clone", load_into_a_clone, "never reached it"),
]  # fmt: skip

SECOND_ROUND = [
    ("merge_heads", "NumPy's .view with a shape", merge_numpy_view, ".reshape"),
    ("mha_parameter_count", "W_o's bias forgotten", count_three_biases, "three bias vectors"),
    ("bert_parameters", "in millions", 2.36, "millions"),
    ("bert_parameters", "biases of 64", 4 * 768**2 + 4 * 64, "64 numbers"),
    ("multihead_attention", "k.transpose(1, 2)", KeyTransposedOneTwo, "last two axes of k"),
    ("multihead_attention", "mask.T", MaskTransposed, "transposed it"),
    ("multihead_attention", "weights / sqrt(d)", ScaleAfterSoftmax, "after the softmax"),
    ("load_into_torch", "out_proj from W_v", load_out_from_w_v, "holds W_v's numbers"),
    ("load_into_torch", "through float32", load_through_float32, "float32"),
    ("which_key", "the last position", 7, "causal"),
    ("bert_parameters", "rounded to 2.4 million", 2_400_000, "rounded"),
    ("bert_parameters", "W_q, W_k, W_v alone", 3 * 768 * 768, "output projection"),
]  # fmt: skip

CORPUS = [
    ("split_heads", "d = D / H, a float", split_float_size, "integer"),
    ("split_heads", "through torch", split_torch, "NumPy"),
    ("split_heads", "np.array(np.split(...))", split_np_split, "axes in another order"),
    ("split_heads", "swapaxes(1, 3)", split_swap_1_3, "axes"),
    ("split_heads", "two heads hard-coded", split_two_heads, "2"),
    ("split_heads", "every H-th column", split_columns_every_h, "every H-th feature"),
    ("merge_heads", "concatenate on axis 1", merge_concat_axis_1, "axis"),
    ("merge_heads", "B, T, H, d = x.shape", merge_names_out_of_order, "order"),
    ("merge_heads", "reshape to d", merge_to_d, "reshape"),
    ("merge_heads", "through torch", merge_torch, "NumPy"),
    ("merge_heads", "no transpose", merge_no_transpose, "reshaped straight"),
    ("mha_parameter_count", "no biases", count_no_bias, "biases"),
    ("mha_parameter_count", "biases even without bias", count_bias_always, "bias=False"),
    ("mha_parameter_count", "d = D / H, a float", count_float_head, "int"),
    ("mha_parameter_count", "three matrices", count_three, "W_o"),
    ("mha_parameter_count", "full D x D per head", count_full_heads, "every head"),
    ("mha_parameter_count", "the layer once per head", count_layer_per_head, "once per head"),
    ("bert_parameters", "no biases", 2_359_296, "bias"),
    ("bert_parameters", "one head's share", 4 * 768 * 64 + 4 * 64, "head"),
    ("bert_parameters", "twelve full layers", 12 * 2_362_368, "every head"),
    ("bert_parameters", "no W_o", 3 * 768 * 768 + 3 * 768, "W_o"),
    ("bert_parameters", "one bias only", 4 * 768 * 768 + 768, "bias"),
    ("multihead_attention", "keys and values swapped", KeyValueSwapped, "value"),
    ("multihead_attention", "returns out only", OnlyOut, "return"),
    ("multihead_attention", "scaled by sqrt(D)", ScaleByModel, "√D"),
    ("multihead_attention", "masked_fill(mask, -inf)", MaskFillsVisible, "inverted"),
    ("multihead_attention", "softmax over the heads", SoftmaxOverHeads, "heads"),
    ("multihead_attention", ".view after transpose", MergeWithView, ".reshape"),
    ("multihead_attention", "T for the keys' length", QueryLengthForKeys, "own length S"),
    ("multihead_attention", "torch.cat on dim 1", CatWrongAxis, "along the time axis"),
    ("multihead_attention", "repeat_interleave on dim 1", RepeatMaskWrongAxis, "without repeating"),
    ("multihead_attention", "softmax through NumPy", ThroughNumpy, "NumPy"),
    ("multihead_attention", "no W_o", NoOutputProjection, "W_o"),
    ("multihead_attention", "reshape straight to (B, H, L, d)", DirectSplit, "one reshape"),
    ("multihead_attention", "nn.Linear(..., bias=False)", NoBiases, "with its bias"),
    ("multihead_attention", "weights masked after the softmax", MaskAfterSoftmax, "after the softmax"),
    ("load_into_torch", "no torch.no_grad()", load_no_no_grad, "no_grad"),
    ("load_into_torch", "torch.cat(dim=1)", load_cat_dim_1, "dim 0"),
    ("load_into_torch", "assigns tensors to parameters", load_assign_tensor, "Parameter"),
    ("load_into_torch", "their state dict from ours", load_same_state_dict, "names"),
    ("load_into_torch", "weights without biases", load_weights_only, "bias"),
    ("load_into_torch", "transposed", load_transposed, "transposed"),
    ("load_into_torch", "k, q, v", load_kqv, "swapped"),
    ("blend_weight", "all on dog", 1.0, "subject"),
    ("blend_weight", "nothing on dog", 0.0, "subject"),
    ("blend_weight", "a quarter", 0.25, "four keys"),
    ("blend_weight", "a third", 1 / 3, "three keys"),
    ("blend_weight", "uniform over seven words", 1 / 7, "equal scores"),
    ("which_key", "the previous token", 4, "previous"),
    ("which_key", "itself", 5, "diagonal"),
    ("which_key", "the next token", 6, "no key 6"),
    ("which_key", "key 1", 1, "first"),
    ("which_key", "head 0's map read as head 1's", 2, "three tokens back"),
    ("split_heads", "np.split on the time axis", split_np_split_time_axis, "axis=-1"),
    ("merge_heads", "mean over the heads", merge_mean_of_heads, "reduced the heads"),
    ("merge_heads", "heads in reverse order", merge_reversed_heads, "reverse order"),
    ("mha_parameter_count", "bias of d numbers", count_bias_per_head, "D numbers"),
    ("mha_parameter_count", "one head's W_q, W_k, W_v", count_one_head, "one head"),
    ("bert_parameters", "x12 heads, no biases", 28311552, "twelve heads"),
    ("bert_parameters", "one head's matrices", 3 * 768 * 64 + 768 * 768 + 4 * 768, "one head"),
    ("mha_parameter_count", "np.sum gives np.int64", count_numpy_integer, "Python int"),
    ("multihead_attention", "scores[~mask] = -inf", BooleanIndexMask, "masked_fill"),
    *SECOND_ROUND,
    *ROUND_FOUR,
    *ROUND_FIVE,
    *ROUND_SIX,
    *ROUND_SEVEN,
]  # fmt: skip

CORRECT = [
    ("split_heads", "transpose with axes", split_right_transpose),
    ("split_heads", "slices stacked", split_right_slices),
    ("merge_heads", "swapaxes", merge_right_swapaxes),
    ("merge_heads", "heads concatenated", merge_right_concat),
    ("mha_parameter_count", "4 (D + 1) D", count_right),
    ("mha_parameter_count", "a loop over heads", count_right_by_heads),
    ("bert_parameters", "the number", 2_362_368),
    ("bert_parameters", "the formula", 4 * 768 * (768 + 1)),
    ("bert_parameters", "a float", 2362368.0),
    ("multihead_attention", "chunk and stack", RightWithChunks),
    ("multihead_attention", "einsum", RightWithEinsum),
    ("multihead_attention", "the course's layer", MultiHeadAttention),
    ("load_into_torch", ".data = a copy", load_right_data),
    ("load_into_torch", "slices assigned under no_grad", load_right_slices),
    ("load_into_torch", "a translated state dict", load_right_state_dict),
    ("blend_weight", "one half", 0.5),
    ("blend_weight", "the printed weight", 0.496),
    ("which_key", "an int", 0),
    ("which_key", "a float", 0.0),
]


# The corpus's four tests (tests/grading/corpus.py): every exercise covered, no wrong answer
# accepted or misled, the right answers pass, at least 9 in 10 specific.
(
    test_the_corpus_covers_every_exercise_five_times_and_is_large,
    test_no_wrong_answer_passes_or_is_misled,
    test_right_answers_written_differently_pass,
    test_at_least_nine_in_ten_get_a_specific_diagnosis,
) = chapter_tests(CHECKS, CORPUS, CORRECT)
