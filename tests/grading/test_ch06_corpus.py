"""Chapter 6's graders against answers written as learners write them.

Wrong answers to every exercise of chapter 6 (6.1-6.8), written here from the statements
alone, without looking at the graders' planted or generated mistakes: float, torch and
strict masks, masks built in loops, a finite fill with the empty rows zeroed, a softmax
without its maximum or with one maximum for everything, boolean indexing in place, masks
whose axes are squeezed or added in the wrong place, integer masks, a causality test that
edits the caller's array or returns one number per feature, and predictions that forget
the fill. Each comes with words its diagnosis must contain (classes: see ``corpus.py``).
Right answers, two or more per exercise and written differently, must pass.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from corpus import chapter_tests

from attnlab.grading.ch06 import (
    check_blind_row,
    check_causal_mask,
    check_fill_leak,
    check_from_hf_attention_mask,
    check_future_change,
    check_masked_softmax,
    check_padding_mask,
    check_to_key_padding_mask,
)

CHECKS = {
    "causal_mask": check_causal_mask,
    "padding_mask": check_padding_mask,
    "masked_softmax": check_masked_softmax,
    "to_key_padding_mask": check_to_key_padding_mask,
    "from_hf_attention_mask": check_from_hf_attention_mask,
    "future_change": check_future_change,
    "fill_leak": check_fill_leak,
    "blind_row": check_blind_row,
}


# ------------------------------------------------------------------ 6.1 causal mask


def causal_float(T):
    return np.tril(np.ones((T, T)))


def causal_torch(T):
    return torch.tril(torch.ones(T, T, dtype=torch.bool))


def causal_strict(T):
    return np.arange(T)[None, :] < np.arange(T)[:, None]


def causal_upper(T):
    return np.arange(T)[:, None] <= np.arange(T)[None, :]


def causal_loop_without_diagonal(T):
    mask = np.zeros((T, T), dtype=bool)
    for i in range(T):
        mask[i, :i] = True
    return mask


def causal_right_tri(T):
    return np.tri(T, dtype=bool)


def causal_right_compare(T):
    i = np.arange(T)
    return i[None, :] <= i[:, None]


# ------------------------------------------------------------------ 6.2 padding mask


def pad_two_axes(lengths, max_len):
    return np.arange(max_len)[None, :] < lengths[:, None]


def pad_leading_axis(lengths, max_len):
    return (np.arange(max_len)[None, :] < lengths[:, None])[None]


def pad_inclusive(lengths, max_len):
    return (np.arange(max_len) <= lengths[:, None])[:, None, :]


def pad_ints(lengths, max_len):
    return (np.arange(max_len) < lengths[:, None]).astype(int)[:, None, :]


def pad_longest(lengths, max_len):
    return (np.arange(lengths.max()) < lengths[:, None])[:, None, :]


def pad_inverted(lengths, max_len):
    return (np.arange(max_len) >= lengths[:, None])[:, None, :]


def pad_right_loop(lengths, max_len):
    mask = np.zeros((len(lengths), 1, max_len), dtype=bool)
    for b, n in enumerate(lengths):
        mask[b, 0, :n] = True
    return mask


def pad_right_expand(lengths, max_len):
    return np.expand_dims(np.arange(max_len) < np.asarray(lengths)[:, None], 1)


# ------------------------------------------------------------------ 6.3 masked softmax


def soft_minus_1e4_zeroed(scores, mask):
    z = np.where(mask, scores, -1e4)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    return np.where(mask.any(axis=-1, keepdims=True), w, 0.0)


def soft_minus_1e9(scores, mask):
    z = np.where(mask, scores, -1e9)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def soft_unstable(scores, mask):
    e = np.where(mask, np.exp(scores), 0.0)
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def soft_one_max(scores, mask):
    z = np.where(mask, scores, -np.inf)
    top = scores.max()  # one maximum for the whole array
    e = np.exp(z - top)
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def soft_sum_over_axis_0(scores, mask):
    z = np.where(mask, scores, -np.inf)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return np.nan_to_num(e / e.sum(axis=0, keepdims=True))


def soft_bool_index(scores, mask):
    scores[~np.broadcast_to(mask, scores.shape)] = -np.inf
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    with np.errstate(invalid="ignore"):
        return np.nan_to_num(e / e.sum(axis=-1, keepdims=True))


def soft_weights_times_mask(scores, mask):
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    return w * mask


def soft_inverted(scores, mask):
    z = np.where(mask, -np.inf, scores)
    with np.errstate(invalid="ignore"):
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return np.nan_to_num(e / e.sum(axis=-1, keepdims=True))


def soft_right_nan_to_num(scores, mask):
    z = np.where(mask, scores, -np.inf)
    with np.errstate(invalid="ignore"):
        e = np.exp(z - np.max(z, axis=-1, keepdims=True))
        w = e / np.sum(e, axis=-1, keepdims=True)
    return np.nan_to_num(w, nan=0.0)


def soft_right_rows(scores, mask):
    mask = np.broadcast_to(mask, scores.shape)
    out = np.zeros_like(scores)
    for idx in np.ndindex(*scores.shape[:-1]):
        row, keep = scores[idx], mask[idx]
        if keep.any():
            e = np.exp(row[keep] - row[keep].max())
            out[idx][keep] = e / e.sum()
    return out


# ------------------------------------------------------------------ 6.4 key_padding_mask


def kpm_not_inverted(mask):
    return mask[:, 0, :]


def kpm_keeps_axis(mask):
    return ~mask


def kpm_squeeze(mask):
    return ~mask.squeeze()


def kpm_ints(mask):
    return 1 - mask[:, 0].int()


def kpm_numpy(mask):
    return ~mask.numpy()[:, 0, :]


def kpm_ones_as_float(mask):
    return (~mask[:, 0, :]).float()


def kpm_right_logical_not(mask):
    return torch.logical_not(mask.squeeze(1))


def kpm_right_float32(mask):
    return torch.zeros(mask.shape[0], mask.shape[-1]).masked_fill(~mask[:, 0], -math.inf)


def kpm_right_float64(mask):
    hidden = torch.zeros(mask.shape[0], mask.shape[-1], dtype=torch.float64)
    return hidden.masked_fill(~mask[:, 0], float("-inf"))


def kpm_right_eq_false(mask):
    return mask[:, 0, :] == False  # noqa: E712


# ------------------------------------------------------------------ 6.5 from Hugging Face


def hf_zero(attention_mask):
    return (attention_mask == 0)[:, None, :]


def hf_no_axis(attention_mask):
    return attention_mask.bool()


def hf_ints(attention_mask):
    return attention_mask[:, None, :]


def hf_float(attention_mask):
    return attention_mask.unsqueeze(1).float()


def hf_last_axis(attention_mask):
    return attention_mask.bool().unsqueeze(-1)


def hf_numpy(attention_mask):
    return attention_mask.numpy().astype(bool)[:, None, :]


def hf_right_bool(attention_mask):
    return attention_mask.bool()[:, None, :]


def hf_right_unsqueeze(attention_mask):
    return attention_mask.unsqueeze(1) > 0


# ------------------------------------------------------------------ 6.6 a causality test


def future_in_place(attend, x, t):
    before = attend(x)
    x[t + 1 :] = 0
    return float(np.abs(attend(x) - before)[: t + 1].max())


def future_from_t(attend, x, t):
    edited = x.copy()
    edited[t:] = 0
    return float(np.abs(attend(edited) - attend(x))[: t + 1].max())


def future_all_outputs(attend, x, t):
    edited = x.copy()
    edited[t + 1 :] = 0
    return float(np.abs(attend(edited) - attend(x)).max())


def future_per_feature(attend, x, t):
    edited = x.copy()
    edited[t + 1 :] = 0
    return np.abs(attend(edited) - attend(x))[: t + 1].max(axis=0)


def future_only_t(attend, x, t):
    edited = x.copy()
    edited[t + 1 :] = 0
    return float(np.abs(attend(edited)[t] - attend(x)[t]).max())


def future_sum(attend, x, t):
    edited = x.copy()
    edited[t + 1 :] = 0
    return float(np.abs(attend(edited)[: t + 1] - attend(x)[: t + 1]).sum())


def future_mean(attend, x, t):
    edited = x.copy()
    edited[t + 1 :] = 0
    return float(np.abs(attend(edited) - attend(x))[: t + 1].mean())


def future_right_loop(attend, x, t):
    edited = np.array(x)
    for s in range(t + 1, len(x)):
        edited[s] = 0.0
    a, b = attend(x), attend(edited)
    return max(float(abs(a[i] - b[i]).max()) for i in range(t + 1))


def future_right_concat(attend, x, t):
    edited = np.concatenate([x[: t + 1], np.zeros_like(x[t + 1 :])])
    return np.abs(attend(edited)[: t + 1] - attend(x)[: t + 1]).max().item()


# ------------------------------------------------------------------ an independent learner's


def soft_renormalised_guarded(scores, mask):
    e = np.exp(scores - scores.max(-1, keepdims=True)) * mask
    tot = e.sum(-1, keepdims=True)
    return np.where(tot > 0, e / np.where(tot > 0, tot, 1), 0.0)


def soft_no_max_empty_zeroed(scores, mask):
    s = np.where(mask, scores, -np.inf)
    empty = ~np.any(mask, axis=-1, keepdims=True)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.where(empty, 0.0, np.exp(s))
        tot = e.sum(-1, keepdims=True)
        return np.where(empty, 0.0, e / np.where(empty, 1.0, tot))


def soft_max_before_masking(scores, mask):
    m = scores.max(-1, keepdims=True)
    e = np.exp(scores - m) * mask
    tot = e.sum(-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = e / tot
    empty = ~np.any(mask, axis=-1, keepdims=True)
    return np.where(empty, 0.0, w)


def soft_along_queries(scores, mask):
    s = np.where(mask, scores, -np.inf)
    empty = ~np.any(mask, axis=-1, keepdims=True)
    s = np.where(empty, 0.0, s)
    with np.errstate(invalid="ignore"):
        e = np.exp(s - s.max(axis=-2, keepdims=True))
        w = e / e.sum(axis=-2, keepdims=True)
    return np.where(empty, 0.0, w)


def future_zeroes_past(attend, x, t):
    x2 = x.copy()
    x2[:t] = 0
    return float(np.max(np.abs(attend(x2)[: t + 1] - attend(x)[: t + 1])))


def future_zeroes_all(attend, x, t):
    x2 = np.zeros_like(x)
    return float(np.max(np.abs(attend(x2)[: t + 1] - attend(x)[: t + 1])))


def future_builtin_max(attend, x, t):
    x2 = x.copy()
    x2[t + 1 :] = 0
    return float(max(abs(attend(x2)[: t + 1] - attend(x)[: t + 1])))


# ------------------------------------------------------------------ a second learner's (round 2)
# Each was accepted, generic or misleading before; written as that learner wrote it.


def causal_hard_coded(T):
    return np.array([[True, False, False], [True, True, False], [True, True, True]])


def causal_diagonal_only(T):
    return np.eye(T, dtype=bool)


def causal_one_too_many(T):
    return np.tril(np.ones((T + 1, T + 1), dtype=bool))


def pad_loop_from_one(lengths, max_len):
    m = np.zeros((len(lengths), 1, max_len), dtype=bool)
    for b in range(len(lengths)):
        for j in range(1, lengths[b] + 1):
            if j < max_len:
                m[b, 0, j] = True
    return m


def pad_after_length(lengths, max_len):
    return (np.arange(max_len)[None, :] > lengths[:, None])[:, None, :]


def soft_queries_axis_nan_to_num(scores, mask):
    s = np.where(mask, scores, -np.inf)
    has = np.any(mask, axis=-1, keepdims=True)
    s = np.where(has, s, 0.0)
    e = np.exp(s - s.max(axis=-2, keepdims=True))
    w = e / e.sum(axis=-2, keepdims=True)
    return np.nan_to_num(np.where(has & mask, w, 0.0))


def soft_minus_1e9_zeroed(scores, mask):
    s = np.where(mask, scores, -1e9)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    return np.where(np.any(mask, axis=-1, keepdims=True), w, 0.0)


def soft_added_minus_1e9_zeroed(scores, mask):
    s = scores + np.where(mask, 0.0, -1e9)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    return np.where(np.any(mask, axis=-1, keepdims=True), w, 0.0)


def soft_added_minus_1e4_zeroed(scores, mask):
    s = scores + np.where(mask, 0.0, -1e4)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    return np.where(np.any(mask, axis=-1, keepdims=True), w, 0.0)


def soft_finfo_min_no_empty(scores, mask):
    s = np.where(mask, scores, np.finfo(scores.dtype).min)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def soft_zero_fill_zeroed(scores, mask):
    z = np.where(mask, scores, 0.0)
    e = np.exp(z - z.max(-1, keepdims=True))
    return np.where(mask, e / e.sum(-1, keepdims=True), 0.0)


def kpm_reshaped_s_b(mask):
    return ~mask.reshape(mask.shape[-1], -1)


def kpm_first_sequence(mask):
    return ~mask[0]


def kpm_list(mask):
    return (~mask[:, 0]).tolist()


def hf_axis_in_front(attention_mask):
    return attention_mask.bool().unsqueeze(0)


def hf_square(attention_mask):
    B, S = attention_mask.shape
    return attention_mask.bool()[:, None, :].expand(B, S, S)


def hf_additive_float32(attention_mask):
    return torch.where(attention_mask == 1, 0.0, float("-inf"))[:, None, :]


def hf_causal_too(attention_mask):
    S = attention_mask.shape[1]
    causal = torch.tril(torch.ones(S, S, dtype=torch.bool))
    return attention_mask.bool()[:, None, :] & causal


def hf_two_axes(attention_mask):
    return attention_mask.bool()[:, None, None, :]


def future_per_position(attend, x, t):
    edited = x.copy()
    edited[t + 1 :] = 0
    return np.abs(attend(edited)[: t + 1] - attend(x)[: t + 1]).max(axis=1)


def future_random_edit(attend, x, t):
    edited = x.copy()
    edited[t + 1 :] = np.random.default_rng(0).normal(size=edited[t + 1 :].shape)
    return float(np.abs(attend(edited)[: t + 1] - attend(x)[: t + 1]).max())


def future_next_token_only(attend, x, t):
    edited = x.copy()
    if t + 1 < len(x):
        edited[t + 1] = 0
    return float(np.abs(attend(edited) - attend(x))[: t + 1].max())


def future_yes_no(attend, x, t):
    edited = x.copy()
    edited[t + 1 :] = 0
    return float(not np.allclose(attend(edited)[: t + 1], attend(x)[: t + 1]))


def future_norm(attend, x, t):
    edited = x.copy()
    edited[t + 1 :] = 0
    return float(np.linalg.norm(attend(edited)[: t + 1] - attend(x)[: t + 1]))


def future_truncated(attend, x, t):
    return float(np.abs(attend(x[: t + 1]) - attend(x)[: t + 1]).max())


def soft_right_finfo_min(scores, mask):
    s = np.where(mask, scores, np.finfo(scores.dtype).min)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    return np.where(np.any(mask, axis=-1, keepdims=True), w, 0.0)


def soft_right_added_minus_inf(scores, mask):
    visible = mask.any(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore"):
        z = np.where(visible, scores + np.where(mask, 0.0, -np.inf), 0.0)
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return np.where(visible, e / e.sum(axis=-1, keepdims=True), 0.0)


def future_right_numpy_max(attend, x, t):
    edited = x.copy()
    edited[t + 1 :] = 0
    return np.max(np.abs(attend(edited)[: t + 1] - attend(x)[: t + 1]))


SECOND_ROUND = [
    ("causal_mask", "the 3 x 3 example hard-coded", causal_hard_coded, "hard-coded"),
    ("causal_mask", "the diagonal only", causal_diagonal_only, "only the diagonal"),
    ("causal_mask", "T + 1 rows and columns", causal_one_too_many, "off-by-one"),
    ("padding_mask", "a loop numbering positions from 1", pad_loop_from_one, "numbered from 0"),
    ("padding_mask", "positions after the length", pad_after_length, "after the length"),
    ("masked_softmax", "softmax along the queries, nan_to_num", soft_queries_axis_nan_to_num, "wrong axis"),
    ("masked_softmax", "-1e9 in place, empty rows zeroed", soft_minus_1e9_zeroed, "not always below"),
    ("masked_softmax", "-1e9 added, empty rows zeroed", soft_added_minus_1e9_zeroed, "added -1e9"),
    ("masked_softmax", "-1e4 added, empty rows zeroed", soft_added_minus_1e4_zeroed, "added -1e4"),
    ("masked_softmax", "finfo.min in place, no empty rows", soft_finfo_min_no_empty, "uniform"),
    ("masked_softmax", "0 in place, masked weights zeroed", soft_zero_fill_zeroed, "sums to"),
    ("to_key_padding_mask", "reshaped to (S, B)", kpm_reshaped_s_b, "swapped"),
    ("to_key_padding_mask", "the first sequence only", kpm_first_sequence, "batch size B"),
    ("to_key_padding_mask", "a list", kpm_list, "Python list"),
    ("from_hf_attention_mask", "unsqueeze(0)", hf_axis_in_front, "(1, B, S)"),
    ("from_hf_attention_mask", "expanded to (B, S, S)", hf_square, "(B, S, S)"),
    ("from_hf_attention_mask", "a float32 mask of 0 and -inf", hf_additive_float32, "boolean"),
    ("from_hf_attention_mask", "a causal triangle too", hf_causal_too, "causal triangle"),
    ("from_hf_attention_mask", "(B, 1, 1, S)", hf_two_axes, "(B, 1, S)"),
    ("future_change", "one maximum per position", future_per_position, "one number"),
    ("future_change", "random values for the future", future_random_edit, "other values than zeros"),
    ("future_change", "only the next token zeroed", future_next_token_only, "all of them must be set"),
    ("future_change", "1.0 if anything moved", future_yes_no, "how much"),
    ("future_change", "the norm of the difference", future_norm, "norm"),
    ("future_change", "the layer on the first t + 1 tokens", future_truncated, "dropping the future"),
    ("fill_leak", "the softmax of 0 and 1", math.e / (1 + math.e), "not 1"),
    ("fill_leak", "NaN", float("nan"), "finite"),
    ("fill_leak", "a list of both weights", [0.5, 0.5], "one number"),
    ("blind_row", "NaN, as with -inf", float("nan"), "NaN comes from -inf"),
    ("blind_row", "about 0 (1e-9)", 1e-9, "plain -1e9 fill"),
]  # fmt: skip


# ------------------------------------------------------------------ the learner's round 4


def r4_pad_axis_at_end(lengths, max_len):
    return (np.arange(max_len)[None, :] < lengths[:, None])[:, :, None]


def r4_pad_uses_max_length(lengths, max_len):
    return (np.arange(lengths.max())[None, :] < lengths[:, None])[:, None, :]


def r4_soft_any_no_keepdims(scores, mask):
    s = np.where(mask, scores, -np.inf)
    empty = ~np.any(mask, axis=-1)
    s = np.where(empty, 0.0, s)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    return np.where(empty, 0.0, w)


def r4_kpm_one_minus(mask):
    return 1 - mask.squeeze(1)


def r4_kpm_flip(mask):
    return mask.squeeze(1).flip(-1)


def r4_future_signed_max(attend, x, t):
    x2 = x.copy()
    x2[t + 1 :] = 0
    return float(np.max(attend(x)[: t + 1] - attend(x2)[: t + 1]))


def r4_future_signed_max_other_way(attend, x, t):
    x2 = x.copy()
    x2[t + 1 :] = 0
    return float(np.max(attend(x2)[: t + 1] - attend(x)[: t + 1]))


ROUND_4 = [
    ("padding_mask", "round 4: None at the end", r4_pad_axis_at_end, "the new axis went last"),
    ("padding_mask", "round 4: lengths.max() for max_len", r4_pad_uses_max_length, "(1, 1, 5)"),
    ("masked_softmax", "round 4: np.any without keepdims", r4_soft_any_no_keepdims, "keepdims=True"),
    ("to_key_padding_mask", "round 4: 1 - mask", r4_kpm_one_minus, "logical not"),
    ("to_key_padding_mask", "round 4: .flip(-1)", r4_kpm_flip, "reverses the order"),
    ("future_change", "round 4: no abs", r4_future_signed_max, "*signed* difference"),
    ("future_change", "round 4: no abs, the other way round", r4_future_signed_max_other_way, "*signed* difference"),
    ("fill_leak", "round 4: 0.25", 0.25, "four equal scores"),
    ("blind_row", "round 4: four different weights", [0.25, 0.25, 0.25, 0.3], "same value"),
]  # fmt: skip


# ------------------------------------------------------------------ the learner's round 5


def r5_pad_no_axis(lengths, max_len):
    return (np.arange(max_len) < lengths)[:, None, :]


def r5_pad_batch_of_three(lengths, max_len):
    m = np.zeros((3, 1, max_len), dtype=bool)
    for b in range(3):
        m[b, 0, : lengths[b]] = True
    return m


def r5_soft_all_for_empty(scores, mask):
    s = np.where(mask, scores, -np.inf)
    empty = ~np.all(mask, axis=-1, keepdims=True)
    s = np.where(empty, 0.0, s)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    return np.where(empty, 0.0, w)


def r5_soft_mask_times_inf(scores, mask):
    s = scores * mask + (~mask) * (-np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    z = e.sum(axis=-1, keepdims=True)
    return np.divide(e, z, out=np.zeros_like(e), where=z > 0)


def r5_kpm_mT(mask):
    return ~mask.mT


def r5_kpm_view(mask):
    return ~mask.view(-1)


def r5_hf_byte(attention_mask):
    return attention_mask.byte()[:, None, :]


def r5_hf_float_times_minus_1e9(attention_mask):
    return (attention_mask.float() * -1e9)[:, None, :]


def r5_future_feature_axis(attend, x, t):
    x2 = x.copy()
    x2[:, t + 1 :] = 0
    return float(np.abs(attend(x)[: t + 1] - attend(x2)[: t + 1]).max())


def r5_future_against_input(attend, x, t):
    x2 = x.copy()
    x2[t + 1 :] = 0
    return float(np.abs(attend(x2)[: t + 1] - x[: t + 1]).max())


def r5_future_outputs_after_t(attend, x, t):
    x2 = x.copy()
    x2[t + 1 :] = 0
    return float(np.abs(attend(x)[t + 1 :] - attend(x2)[t + 1 :]).max())


# A generic hint, a misleading diagnosis or a bare exception before.
ROUND_5 = [
    ("padding_mask", "round 5: arange(max_len) < lengths", r5_pad_no_axis, "lengths[:, None]"),
    ("padding_mask", "round 5: a batch of 3 written in", r5_pad_batch_of_three, "a size is written into your code: the 3"),
    ("masked_softmax", "round 5: np.all for the empty rows", r5_soft_all_for_empty, "needs any()"),
    ("masked_softmax", "round 5: scores * mask + ~mask * -inf", r5_soft_mask_times_inf, "0 · (-inf) = NaN"),
    ("to_key_padding_mask", "round 5: ~mask.mT", r5_kpm_mT, "(B, S, 1)"),
    ("to_key_padding_mask", "round 5: ~mask.view(-1)", r5_kpm_view, "view(-1)"),
    ("from_hf_attention_mask", "round 5: .byte()", r5_hf_byte, "integer type"),
    ("from_hf_attention_mask", "round 5: attention_mask * -1e9", r5_hf_float_times_minus_1e9, "hides the real tokens"),
    ("future_change", "round 5: x2[:, t + 1:] = 0", r5_future_feature_axis, "feature columns"),
    ("future_change", "round 5: compared with the input", r5_future_against_input, "with the input x itself"),
    ("future_change", "round 5: the outputs after t", r5_future_outputs_after_t, "outputs after t"),
]  # fmt: skip


def r6_pad_reshaped_from_positions_by_lengths(lengths, max_len):
    m = np.arange(max_len)[:, None] < lengths[None, :]
    return m.reshape(len(lengths), 1, max_len)


def r6_pad_square(lengths, max_len):
    m = np.arange(max_len)[None, :] < lengths[:, None]
    return np.broadcast_to(m[:, None, :], (len(lengths), max_len, max_len))


def r6_pad_axis_at_the_end(lengths, max_len):
    return (np.arange(max_len)[None, :] < lengths[:, None])[..., None]


def r6_causal_additive(T):
    return np.where(np.tril(np.ones((T, T))) == 1, 0.0, -np.inf)


def r6_kpm_python_not(mask):
    return not mask.squeeze(1)


def r6_kpm_minus(mask):
    return -mask[:, 0]


def r6_hf_bitwise_not(attention_mask):
    return (~attention_mask)[:, None, :].bool()


def r6_future_edited_twice(attend, x, t):
    x2 = x.copy()
    x2[t + 1 :] = 0
    return float(np.max(np.abs(attend(x2)[: t + 1] - attend(x2)[: t + 1])))


def r6_future_row_norms(attend, x, t):
    x2 = x.copy()
    x2[t + 1 :] = 0
    return float(np.max(np.linalg.norm(attend(x2)[: t + 1] - attend(x)[: t + 1], axis=-1)))


def r6_future_last_feature(attend, x, t):
    x2 = x.copy()
    x2[t + 1 :] = 0
    a, b = attend(x), attend(x2)
    return float(max(abs(a[i, -1] - b[i, -1]) for i in range(t + 1)))


def r6_future_zero(attend, x, t):
    return 0.0


# The sixth learner round (issue 28): a generic hint, a misleading diagnosis or a bare
# exception before.
ROUND_6 = [
    ("padding_mask", "round 6: (S, B) reshaped to (B, 1, S)", r6_pad_reshaped_from_positions_by_lengths, "reshape never swaps axes"),
    ("padding_mask", "round 6: broadcast to (B, S, S)", r6_pad_square, "do not expand it"),
    ("padding_mask", "round 6: [..., None]", r6_pad_axis_at_the_end, "(B, max_len, 1)"),
    ("causal_mask", "round 6: an additive 0/-inf mask", r6_causal_additive, "your mask is additive"),
    ("to_key_padding_mask", "round 6: not mask", r6_kpm_python_not, "Python's `not`"),
    ("to_key_padding_mask", "round 6: -mask", r6_kpm_minus, "does not invert booleans"),
    ("from_hf_attention_mask", "round 6: ~ on the integer mask", r6_hf_bitwise_not, "bitwise NOT"),
    ("future_change", "round 6: the edited input twice", r6_future_edited_twice, "returns 0 even for the layer without a mask"),
    ("future_change", "round 6: a max of row norms", r6_future_row_norms, "vector norm over its features"),
    ("future_change", "round 6: the last feature only", r6_future_last_feature, "only the last feature"),
    ("future_change", "round 6: 0.0", r6_future_zero, "returns 0 even for the layer without a mask"),
]  # fmt: skip


def r7_pad_positions_by_lengths(lengths, max_len):
    return (np.arange(max_len)[:, None] < lengths[None, :])[:, None, :]


def r7_pad_left(lengths, max_len):
    return (np.arange(max_len)[None, :] >= max_len - lengths[:, None])[:, None, :]


def r7_soft_empty_along_queries(scores, mask):
    empty = ~np.broadcast_to(mask, scores.shape).any(axis=-2, keepdims=True)
    s = np.where(mask, scores, -np.inf)
    s = np.where(empty, 0.0, s)
    m = s.max(axis=-1, keepdims=True)
    e = np.exp(s - m)
    return np.where(
        empty | ~np.isfinite(e.sum(-1, keepdims=True)), 0.0, e / e.sum(axis=-1, keepdims=True)
    )


def r7_hf_additive_inverted(attention_mask):
    m = attention_mask[:, None, :].double()
    return m.masked_fill(m == 1, float("-inf"))


# The seventh learner round (issue 28): a grader error, and two generic diagnoses.
ROUND_7 = [
    ("padding_mask", "round 7: positions down, lengths across", r7_pad_positions_by_lengths, "(max_len, 1, B)"),
    ("padding_mask", "round 7: left padding", r7_pad_left, "left padding"),
    ("masked_softmax", "round 7: empty rows tested along axis -2", r7_soft_empty_along_queries, "empty row runs along the queries"),
    ("from_hf_attention_mask", "round 7: additive, -inf on the real tokens", r7_hf_additive_inverted, "-inf sit on the real tokens"),
]  # fmt: skip


def r8_soft_global_max(scores, mask):
    empty = ~np.any(mask, axis=-1, keepdims=True)
    s = np.where(mask, scores, -np.inf)
    s = np.where(empty, 0.0, s)
    s = s - s.max()
    e = np.exp(s)
    return np.where(empty, 0.0, e / e.sum(axis=-1, keepdims=True))


def r8_soft_placeholder_kept(scores, mask):
    empty = ~np.any(mask, axis=-1, keepdims=True)
    s = np.where(mask, scores, -np.inf)
    s = np.where(empty, 0.0, s)
    s = s - s.max(axis=-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(axis=-1, keepdims=True)


def r8_soft_extra_axis(scores, mask):
    mask = mask[..., None]
    empty = ~np.any(mask, axis=-1, keepdims=True)
    s = np.where(mask, scores, -np.inf)
    s = np.where(empty, 0.0, s)
    s = s - s.max(axis=-1, keepdims=True)
    e = np.exp(s)
    return np.where(empty, 0.0, e / e.sum(axis=-1, keepdims=True))


def r8_future_rounded(attend, x, t):
    y = x.copy()
    y[t + 1 :] = 0
    return round(float(np.abs(attend(x)[: t + 1] - attend(y)[: t + 1]).max()), 2)


def r8_future_alias(attend, x, t):
    y = x
    y[t + 1 :] = 0
    return float(np.abs(attend(x)[: t + 1] - attend(y)[: t + 1]).max())


def r9_soft_scaled(scores, mask):
    empty = ~mask.any(axis=-1, keepdims=True)
    s = np.where(mask, scores / np.sqrt(scores.shape[-1]), -np.inf)
    s = np.where(empty, 0.0, s)
    s = s - s.max(axis=-1, keepdims=True)
    e = np.exp(s)
    w = e / e.sum(axis=-1, keepdims=True)
    return np.where(empty, 0.0, w)


def r9_kpm_penalty_on_real(mask):
    return mask[:, 0].double() * -1e9


def r9_hf_flattened(attention_mask):
    return attention_mask.bool().reshape(1, 1, -1)


def r9_hf_reshape_scramble(attention_mask):
    B, S = attention_mask.shape
    return attention_mask.bool().reshape(S, 1, B).transpose(0, 2)


def r9_hf_greater_than_one(attention_mask):
    return (attention_mask > 1)[:, None, :]


def r9_future_sizes(attend, x, t):
    x2 = x.copy()
    x2[t + 1 :] = 0
    return float((np.abs(attend(x2)[: t + 1]) - np.abs(attend(x)[: t + 1])).max())


def r9_future_sizes_other_way(attend, x, t):
    x2 = x.copy()
    x2[t + 1 :] = 0
    return float((np.abs(attend(x)[: t + 1]) - np.abs(attend(x2)[: t + 1])).max())


def r9_future_from_t_plus_2(attend, x, t):
    x2 = x.copy()
    x2[t + 2 :] = 0
    return float(np.abs(attend(x2)[: t + 1] - attend(x)[: t + 1]).max())


def r9_pad_one_short(lengths, max_len):
    return (np.arange(max_len) < lengths[:, None] - 1)[:, None, :]


# The ninth learner round (issue 28): three misleading diagnoses and seven generic ones.
ROUND_9 = [
    ("masked_softmax", "round 9: scores divided by sqrt(S) inside", r9_soft_scaled, "multiplied by 1/2.236 = 1/√5"),
    ("to_key_padding_mask", "round 9: a -1e9 float mask on the real tokens", r9_kpm_penalty_on_real, "penalty on the real tokens"),
    ("from_hf_attention_mask", "round 9: batch merged into the keys", r9_hf_flattened, "merged into one long row"),
    ("from_hf_attention_mask", "round 9: reshape, then transpose", r9_hf_reshape_scramble, "keeps the order of the entries"),
    ("from_hf_attention_mask", "round 9: > 1", r9_hf_greater_than_one, "whether any entry holds"),
    ("future_change", "round 9: |a| - |b|", r9_future_sizes, "|a| - |b|"),
    ("future_change", "round 9: |b| - |a|", r9_future_sizes_other_way, "|a| - |b|"),
    ("future_change", "round 9: zeroed from t + 2", r9_future_from_t_plus_2, "called again with t = 1"),
    ("padding_mask", "round 9: lengths - 1", r9_pad_one_short, "one real token too few"),
    ("fill_leak", "round 9: e^-1", math.exp(-1), "one exponential"),
    ("fill_leak", "round 9: the score 1e4", 1e4, "between 0 and 1"),
    ("blind_row", "round 9: 0.5 each", 0.5, "sum to 2"),
    ("blind_row", "round 9: the score -1e9", -1e9, "between 0 and 1"),
    ("blind_row", "round 9: infinity", float("inf"), "between 0 and 1"),
]  # fmt: skip


def r10_causal_tril_dtype(T):
    return np.tril(np.ones((T, T)), dtype=bool)


def r10_pad_hard_coded_range(lengths, max_len):
    return (np.arange(4)[None, :] < lengths[:, None])[:, None, :]


def r10_pad_range_one_short(lengths, max_len):
    return (np.arange(max_len - 1)[None, :] < lengths[:, None])[:, None, :]


def r10_soft_min(scores, mask):
    empty = ~np.any(mask, axis=-1, keepdims=True)
    s = np.where(mask, scores, -np.inf)
    s = np.where(empty, 0.0, s)
    e = np.exp(s - s.min(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    return np.where(empty, 0.0, w)


def r10_soft_divided_by_max(scores, mask):
    empty = ~np.any(mask, axis=-1, keepdims=True)
    s = np.where(mask, scores, -np.inf)
    s = np.where(empty, 0.0, s)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    w = e / e.max(axis=-1, keepdims=True)
    return np.where(empty, 0.0, w)


def r10_soft_fill_minus_50(scores, mask):
    empty = ~np.any(mask, axis=-1, keepdims=True)
    s = np.where(mask, scores, -50.0)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return np.where(empty, 0.0, e / e.sum(axis=-1, keepdims=True))


def r10_hf_squeeze(attention_mask):
    return attention_mask.squeeze().bool()[:, None]


def r10_hf_reshape_swapped(attention_mask):
    B, S = attention_mask.shape
    return attention_mask.bool().reshape(S, 1, B)


def r10_hf_transposed(attention_mask):
    return attention_mask.bool().T[:, None]


def r10_hf_unsqueeze_in_place(attention_mask):
    return attention_mask.unsqueeze_(1).bool()


def r10_future_past_edited(attend, x, t):
    x2 = x.copy()
    x2[:t] = 0
    return float(np.abs(attend(x2)[t:] - attend(x)[t:]).max())


def r10_future_difference_of_maxima(attend, x, t):
    x2 = x.copy()
    x2[t + 1 :] = 0
    return float(abs(np.abs(attend(x2)[: t + 1]).max() - np.abs(attend(x)[: t + 1]).max()))


def r10_future_argmax(attend, x, t):
    x2 = x.copy()
    x2[t + 1 :] = 0
    return float(np.abs(attend(x2)[: t + 1] - attend(x)[: t + 1]).argmax())


# The tenth learner round (issue 28): one crash, nine misleading diagnoses, three generic.
ROUND_10 = [
    ("causal_mask", "round 10: np.tril(..., dtype=bool)", r10_causal_tril_dtype, "takes no argument `dtype=`"),
    ("padding_mask", "round 10: np.arange(4)", r10_pad_hard_coded_range, "the 4 in `np.arange(4)`"),
    ("padding_mask", "round 10: np.arange(max_len - 1)", r10_pad_range_one_short, "one entry too few on every case"),
    ("masked_softmax", "round 10: the row's min subtracted", r10_soft_min, "minimum, not its maximum"),
    ("masked_softmax", "round 10: divided by the row's max", r10_soft_divided_by_max, "not by their sum"),
    ("masked_softmax", "round 10: a fill of -50", r10_soft_fill_minus_50, "the masked key's fill is the largest"),
    ("from_hf_attention_mask", "round 10: squeeze() on a batch of one", r10_hf_squeeze, "bare `squeeze()`"),
    ("from_hf_attention_mask", "round 10: reshape(S, 1, B)", r10_hf_reshape_swapped, "batch and the key axes are swapped"),
    ("from_hf_attention_mask", "round 10: .T[:, None]", r10_hf_transposed, "batch and the key axes are swapped"),
    ("from_hf_attention_mask", "round 10: unsqueeze_ in place", r10_hf_unsqueeze_in_place, "in place"),
    ("future_change", "round 10: the past edited, the future compared", r10_future_past_edited, "backwards in time"),
    ("future_change", "round 10: the difference of the two maxima", r10_future_difference_of_maxima, "two largest outputs"),
    ("future_change", "round 10: argmax", r10_future_argmax, "argmax"),
    ("fill_leak", "round 10: the visible key's weight with the fill alone", 1.0, "the visible key"),
]  # fmt: skip


def r11_soft_overflow_hidden(scores, mask):
    e = np.where(mask, np.exp(scores), 0.0)
    w = e / e.sum(axis=-1, keepdims=True)
    return np.nan_to_num(w)


def r11_soft_times_mask(scores, mask):
    s = scores * mask
    empty = ~np.any(mask, axis=-1, keepdims=True)
    e = np.exp(s - s.max(axis=-1, keepdims=True)) * mask
    d = e.sum(axis=-1, keepdims=True)
    return np.where(empty, 0.0, e / np.where(d == 0, 1, d))


def r11_kpm_flipped(mask):
    return ~mask.transpose(1, 2).reshape(mask.shape[-1], -1).T.contiguous().reshape(
        mask.shape[0], -1
    ).flip(-1)


def r11_kpm_reshape_transposed(mask):
    B, _, S = mask.shape
    return ~mask.reshape(S, B).T if B != S else ~mask.reshape(S, B)


def r11_kpm_finite_fill(mask):
    m = mask[:, 0, :]
    return torch.zeros(m.shape, dtype=torch.float32).masked_fill(~m, -1e9)


def r11_future_features_sliced(attend, x, t):
    x2 = x.copy()
    x2[t + 1 :] = 0
    return float(np.abs(attend(x2)[:, : t + 1] - attend(x)[:, : t + 1]).max())


def r11_future_relative(attend, x, t):
    x2 = x.copy()
    x2[t + 1 :] = 0
    a, b = attend(x)[: t + 1], attend(x2)[: t + 1]
    return float(np.max(np.abs(a - b) / np.abs(a)))


# The eleventh learner round (issue 28): three misleading, one accepted, six generic.
ROUND_11 = [
    ("masked_softmax", "round 11: no max, NaN hidden by nan_to_num", r11_soft_overflow_hidden, "overflows to inf"),
    ("masked_softmax", "round 11: scores multiplied by the mask", r11_soft_times_mask, "multiplying the scores by the mask"),
    ("to_key_padding_mask", "round 11: reversed along the keys", r11_kpm_flipped, "reversed along the keys"),
    ("to_key_padding_mask", "round 11: reshape(S, B).T", r11_kpm_reshape_transposed, "never swaps axes"),
    ("to_key_padding_mask", "round 11: a finite -1e9 float mask", r11_kpm_finite_fill, "finite penalty"),
    ("future_change", "round 11: the features sliced", r11_future_features_sliced, "features, not their positions"),
    ("future_change", "round 11: a relative change", r11_future_relative, "relative change"),
    ("blind_row", "round 11: the word 'uniform'", "uniform", "is a word"),
]  # fmt: skip


def r12_soft_relative_fill(scores, mask):
    mask = np.broadcast_to(mask, scores.shape)
    s = np.where(mask, scores, scores.min(axis=-1, keepdims=True) - 20)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    return np.where(mask.any(axis=-1, keepdims=True), w, 0.0)


def r12_soft_masked_array(scores, mask):
    mask = np.broadcast_to(mask, scores.shape)
    s = np.ma.masked_array(scores, mask=~mask)
    e = np.ma.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def r12_causal_special_case(T):
    m = np.zeros((T, T), dtype=bool)
    for i in range(T):
        for j in range(T):
            m[i, j] = j < i + 0 or (i == 0 and j == 0)
    return m


def r12_pad_query_and_key(lengths, max_len):
    k = np.arange(max_len)[None, :] < lengths[:, None]
    return k[:, :, None] & k[:, None, :]


def r12_kpm_times_minus_inf(mask):
    return (~mask[:, 0]).float() * float("-inf")


def r12_hf_first_sequence(attention_mask):
    return attention_mask[0].bool()[None, None, :]


def r12_hf_query_and_key(attention_mask):
    m = attention_mask.bool()
    return m[:, None, :] & m[:, :, None]


def r12_future_one_indexed(attend, x, t):
    x2 = x.copy()
    x2[t:] = 0
    return float(np.abs(attend(x2)[:t] - attend(x)[:t]).max())


# The twelfth learner round (issue 28): one accepted, three misleading, four generic.
ROUND_12 = [
    ("masked_softmax", "round 12: a fill of the row's min - 20", r12_soft_relative_fill, "not exactly 0"),
    ("masked_softmax", "round 12: a NumPy masked array", r12_soft_masked_array, "masked array"),
    ("causal_mask", "round 12: a diagonal True at (0, 0) only", r12_causal_special_case, "special case"),
    ("padding_mask", "round 12: queries masked too", r12_pad_query_and_key, "query-by-key mask"),
    ("to_key_padding_mask", "round 12: 0/1 times -inf", r12_kpm_times_minus_inf, "0 × (-inf) is NaN"),
    ("from_hf_attention_mask", "round 12: attention_mask[0]", r12_hf_first_sequence, "first sequence only"),
    ("from_hf_attention_mask", "round 12: queries masked too", r12_hf_query_and_key, "one row per query"),
    ("future_change", "round 12: t counted from 1", r12_future_one_indexed, "counted from 1"),
]  # fmt: skip


def r13_pad_array_slice(lengths, max_len):
    m = np.ones((len(lengths), 1, max_len), dtype=bool)
    m[:, 0, lengths:] = False
    return m


# The thirteenth learner round (issue 28): five accepted, one misleading, one crash, one
# false rejection (an array of the four equal weights), two generic.
ROUND_13 = [
    ("from_hf_attention_mask", "round 13: 1 and -inf", lambda am: am[:, None, :].float().masked_fill(am[:, None, :] == 0, float("-inf")), "your -inf hide the padding"),
    ("from_hf_attention_mask", "round 13: 1 and -1e9", lambda am: am[:, None, :].float().masked_fill(am[:, None, :] == 0, -1e9), "only -inf hides a key"),
    ("from_hf_attention_mask", "round 13: float() - 1", lambda am: (am.float() - 1)[:, None, :], "a -1 hides nothing"),
    ("fill_leak", "round 13: 0.49", 0.49, "exact numbers"),
    ("fill_leak", "round 13: 0.51", 0.51, "exact numbers"),
    ("fill_leak", "round 13: 0.45", 0.45, "exact numbers"),
    ("blind_row", "round 13: 0.24", 0.24, "exact, not an estimate"),
    ("blind_row", "round 13: 1, no division", 1.0, "before the division"),
    ("padding_mask", "round 13: lengths as a slice bound", r13_pad_array_slice, "needs one integer"),
]  # fmt: skip


def r14_causal_ones_two_sizes(T):
    return np.tril(np.ones(T, T)).astype(bool)


def r14_causal_loop_from_one(T):
    m = np.zeros((T, T), dtype=bool)
    for i in range(1, T):
        m[i, : i + 1] = True
    return m


def r14_pad_first_length(lengths, max_len):
    m = np.zeros((len(lengths), 1, max_len), dtype=bool)
    m[:, 0, : lengths[0]] = True
    return m


def r14_future_torch(attend, x, t):
    xt = torch.as_tensor(x)
    x2 = xt.clone()
    x2[t + 1 :] = 0
    return (attend(x2)[: t + 1] - attend(xt)[: t + 1]).abs().max()


# The fourteenth learner round (issue 28): two crashes, three generic.
ROUND_14 = [
    ("causal_mask", "round 14: np.ones(T, T)", r14_causal_ones_two_sizes, "read as a dtype"),
    ("causal_mask", "round 14: a loop from row 1", r14_causal_loop_from_one, "row 0 is all False"),
    ("padding_mask", "round 14: every row cut at lengths[0]", r14_pad_first_length, "first sequence's length"),
    ("future_change", "round 14: attend given a torch tensor", r14_future_torch, "takes and returns NumPy arrays"),
]  # fmt: skip


# The eighth learner round (issue 28): two misleading diagnoses and three generic ones.
ROUND_8 = [
    ("masked_softmax", "round 8: one max for the whole array", r8_soft_global_max, "one maximum for the whole array"),
    ("masked_softmax", "round 8: placeholder scores never overwritten", r8_soft_placeholder_kept, "placeholder scores"),
    ("masked_softmax", "round 8: an extra [..., None] on the mask", r8_soft_extra_axis, "(2, 1, 4) with an axis of size 1 added"),
    ("future_change", "round 8: rounded to 2 decimals", r8_future_rounded, "rounded to 2 decimals"),
    ("future_change", "round 8: y = x is not a copy", r8_future_alias, "`y = x` does not copy"),
]  # fmt: skip


def test_an_additive_mask_with_the_right_sign_is_not_called_inverted():
    def additive(attention_mask):
        m = attention_mask[:, None, :].double()
        return m.masked_fill(m == 0, float("-inf")).masked_fill(m == 1, 0.0)

    result = check_from_hf_attention_mask(additive)
    assert not result.passed
    assert "(-inf on the padding) the same way" in result.diagnosis
    assert "real tokens" not in result.diagnosis


# Round 7: diagnoses name the step and where to look, never the solution's line.
SOLUTION_LINES = [
    ("masked_softmax", "round 7: no empty-row handling (NaN)", r"mask.any("),
    ("masked_softmax", "round 7: a -1e9 fill", r"mask.any("),
    ("to_key_padding_mask", "round 7: a bare squeeze()", "squeeze(1)"),
    ("future_change", "round 7: feature columns zeroed", "x[t + 1:]"),
    ("padding_mask", "round 7: padded to the longest", "np.arange(max_len)"),
]


def _r7_nan(scores, mask):
    s = np.where(mask, scores, -np.inf)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _r7_fill(scores, mask):
    s = np.where(mask, scores, -1e9)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _r7_squeeze(mask):
    return ~mask.squeeze()


def _r7_columns(attend, x, t):
    x2 = x.copy()
    x2[:, t + 1 :] = 0
    return float(np.max(np.abs(attend(x2)[: t + 1] - attend(x)[: t + 1])))


def _r7_longest(lengths, max_len):
    return (np.arange(lengths.max())[None, :] < lengths[:, None])[:, None, :]


@pytest.mark.parametrize(
    ("exercise", "answer", "line"),
    [
        (e, a, line)
        for (e, _, line), a in zip(
            SOLUTION_LINES, [_r7_nan, _r7_fill, _r7_squeeze, _r7_columns, _r7_longest], strict=True
        )
    ],
    ids=[what for _, what, _ in SOLUTION_LINES],
)
def test_a_diagnosis_never_writes_the_solution_line(exercise, answer, line):
    result = CHECKS[exercise](answer)
    assert not result.passed and result.diagnosed, result.text
    assert line not in result.diagnosis, result.diagnosis


CORPUS = [
    ("causal_mask", "floats", causal_float, "bool"),
    ("causal_mask", "torch", causal_torch, "NumPy"),
    ("causal_mask", "strictly below", causal_strict, "diagonal"),
    ("causal_mask", "upper triangle", causal_upper, "future"),
    ("causal_mask", "a loop without the diagonal", causal_loop_without_diagonal, "diagonal"),
    ("padding_mask", "(B, S)", pad_two_axes, "axis of size 1"),
    ("padding_mask", "(1, B, S)", pad_leading_axis, "another order"),
    ("padding_mask", "<=", pad_inclusive, "j < length"),
    ("padding_mask", "ints", pad_ints, "bool"),
    ("padding_mask", "to the longest", pad_longest, "max_len"),
    ("padding_mask", "inverted", pad_inverted, "inverted"),
    ("masked_softmax", "-1e4 fill, empty rows zeroed", soft_minus_1e4_zeroed, "finite"),
    ("masked_softmax", "-1e9 fill", soft_minus_1e9, "uniform"),
    ("masked_softmax", "no max subtracted", soft_unstable, "max"),
    ("masked_softmax", "one max for everything", soft_one_max, "own"),
    ("masked_softmax", "scores[~mask] = -inf", soft_bool_index, "in place"),
    ("masked_softmax", "sum over axis 0", soft_sum_over_axis_0, "last axis"),
    ("masked_softmax", "weights * mask", soft_weights_times_mask, "BEFORE the softmax"),
    ("masked_softmax", "inverted", soft_inverted, "inverted"),
    ("to_key_padding_mask", "not inverted", kpm_not_inverted, "invert"),
    ("to_key_padding_mask", "keeps the query axis", kpm_keeps_axis, "query axis"),
    ("to_key_padding_mask", "squeeze()", kpm_squeeze, "squeeze"),
    ("to_key_padding_mask", "ints", kpm_ints, "integers"),
    ("to_key_padding_mask", "NumPy", kpm_numpy, "torch tensor"),
    ("to_key_padding_mask", "1.0 for padding", kpm_ones_as_float, "ADDED"),
    ("from_hf_attention_mask", "== 0", hf_zero, "inverted"),
    ("from_hf_attention_mask", "no query axis", hf_no_axis, "query axis"),
    ("from_hf_attention_mask", "ints", hf_ints, "integers"),
    ("from_hf_attention_mask", "floats", hf_float, "ADDED"),
    ("from_hf_attention_mask", "(B, S, 1)", hf_last_axis, "last"),
    ("from_hf_attention_mask", "NumPy", hf_numpy, "torch tensor"),
    ("future_change", "edits x itself", future_in_place, "in place"),
    ("future_change", "edits from t", future_from_t, "t + 1"),
    ("future_change", "every output", future_all_outputs, "0 .. t only"),
    ("future_change", "one number per feature", future_per_feature, "one number"),
    ("future_change", "output t only", future_only_t, "only output t"),
    ("future_change", "the mean", future_mean, "largest"),
    ("future_change", "the sum", future_sum, "summed"),
    ("fill_leak", "fully masked", 0.0, "10000"),
    ("fill_leak", "all of it", 1.0, "10000"),
    ("fill_leak", "e^0 / (e^0 + e^1)", 1 / (1 + math.e), "not 1"),
    ("fill_leak", "tiny", 1e-4, "after the fill"),
    ("fill_leak", "e^-1e4", math.exp(-1e4), "after the fill"),
    ("blind_row", "zeros", 0.0, "plain -1e9 fill"),
    ("blind_row", "all on one key", 1.0, "compare the four scores"),
    ("blind_row", "NaN", float("nan"), "NaN"),
    ("blind_row", "one fifth", 0.2, "four"),
    ("blind_row", "one third", 1 / 3, "four"),
    ("masked_softmax", "max of unmasked scores, renormalised", soft_renormalised_guarded, "row max includes the masked"),
    ("masked_softmax", "-inf fill, no max subtracted", soft_no_max_empty_zeroed, "overflows"),
    ("masked_softmax", "row max taken before masking", soft_max_before_masking, "row max includes the masked"),
    ("masked_softmax", "softmax along axis -2", soft_along_queries, "axis=-1"),
    ("future_change", "zeroes the past", future_zeroes_past, "before t"),
    ("future_change", "zeroes every token", future_zeroes_all, "every token"),
    ("future_change", "built-in max on a 2-D array", future_builtin_max, "np.max"),
    *SECOND_ROUND,
    *ROUND_4,
    *ROUND_5,
    *ROUND_6,
    *ROUND_7,
    *ROUND_8,
    *ROUND_9,
    *ROUND_10,
    *ROUND_11,
    *ROUND_12,
    *ROUND_13,
    *ROUND_14,
]  # fmt: skip

CORRECT = [
    ("causal_mask", "np.tri", causal_right_tri),
    ("causal_mask", "compared indices", causal_right_compare),
    ("padding_mask", "a loop", pad_right_loop),
    ("padding_mask", "expand_dims", pad_right_expand),
    ("masked_softmax", "nan_to_num", soft_right_nan_to_num),
    ("masked_softmax", "row by row", soft_right_rows),
    ("to_key_padding_mask", "logical_not", kpm_right_logical_not),
    ("to_key_padding_mask", "float32 0 / -inf", kpm_right_float32),
    ("to_key_padding_mask", "float64 0 / -inf", kpm_right_float64),
    ("to_key_padding_mask", "== False", kpm_right_eq_false),
    ("from_hf_attention_mask", ".bool()", hf_right_bool),
    ("from_hf_attention_mask", "unsqueeze and > 0", hf_right_unsqueeze),
    ("future_change", "a loop", future_right_loop),
    ("future_change", "concatenate", future_right_concat),
    ("fill_leak", "a half", 0.5),
    ("fill_leak", "a fraction", 1 / 2),
    ("blind_row", "a quarter", 0.25),
    ("blind_row", "one over four", 1 / 4),
    ("masked_softmax", "finfo.min in place, empty rows zeroed", soft_right_finfo_min),
    ("masked_softmax", "-inf added, empty rows zeroed", soft_right_added_minus_inf),
    ("to_key_padding_mask", "flatten", lambda mask: ~mask.flatten(1)),
    ("from_hf_attention_mask", "view", lambda am: am.bool().view(am.shape[0], 1, am.shape[1])),
    ("future_change", "np.max without float()", future_right_numpy_max),
    ("blind_row", "round 4: the weight of each of the four keys", [0.25, 0.25, 0.25, 0.25]),
    ("blind_row", "round 13: np.full(4, 0.25)", np.full(4, 0.25)),
    (
        "to_key_padding_mask",
        "round 4: logical_not of [:, 0]",
        lambda mask: mask[:, 0].logical_not(),
    ),
]


# The corpus's four tests (tests/grading/corpus.py): every exercise covered, no wrong answer
# accepted or misled, the right answers pass, at least 9 in 10 specific.
(
    test_the_corpus_covers_every_exercise_five_times_and_is_large,
    test_no_wrong_answer_passes_or_is_misled,
    test_right_answers_written_differently_pass,
    test_at_least_nine_in_ten_get_a_specific_diagnosis,
) = chapter_tests(CHECKS, CORPUS, CORRECT)
