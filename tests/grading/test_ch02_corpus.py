"""Chapter 2's graders against a corpus of realistic wrong answers, written as learners write.

Each entry is a wrong answer a learner could plausibly submit (einsum slips, transposes,
broadcasting, float32, swapped arguments, eps idioms, whole-batch sums, a value passed
instead of a function, ...), labelled with words its diagnosis must contain. None of them
is a planted mistake's own code: they test that the graders' diagnoses carry over to code
written differently. An answer is

- *specific* when the result is a diagnosis (not the exercise's generic hint) containing
  the expected words,
- *generic* when the result is only the generic hint (or nothing),
- *misleading* when it is a diagnosis that does not contain them.

The goal of the course: at least 9 in 10 specific, none misleading, none accepted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

from attnlab.grading.ch02 import (
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
)
from attnlab.grading.results import CheckResult
from attnlab.grading.status import GRADER_ERROR

CHECKS: dict[str, Callable[[Any], CheckResult]] = {
    "wordpiece": check_wordpiece,
    "embed": check_embed,
    "dot": check_dot,
    "cosine_similarity": check_cosine_similarity,
    "softmax": check_softmax,
    "score_spread": check_score_spread,
    "self_attention": check_self_attention,
    "cosine_flip": check_cosine_flip,
    "shifted_softmax": check_shifted_softmax,
    "equal_rows": check_equal_rows,
}


# ------------------------------------------------------------------ helpers learners write


def good_softmax(x, axis=-1, temperature=1.0):
    z = x / temperature
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def good_dot(a, b):
    return (a * b).sum(-1)


def norm(v):
    return np.sqrt((v**2).sum(axis=-1))


# ------------------------------------------------------------------ 2.1 WordPiece


def wp_shortest_first(word, vocab):
    ids, i = [], 0
    while i < len(word):
        j = i + 1
        while j <= len(word) and (word[i:j] if i == 0 else "##" + word[i:j]) not in vocab:
            j += 1
        if j > len(word):
            return [vocab["<unk>"]]
        ids.append(vocab[word[i:j] if i == 0 else "##" + word[i:j]])
        i = j
    return ids


def wp_no_hashes(word, vocab):
    ids, i = [], 0
    while i < len(word):
        for j in range(len(word), i, -1):
            if word[i:j] in vocab:
                ids.append(vocab[word[i:j]])
                i = j
                break
        else:
            return [vocab["<unk>"]]
    return ids


def wp_skip_unknown(word, vocab):
    ids, i = [], 0
    while i < len(word):
        for j in range(len(word), i, -1):
            piece = word[i:j] if i == 0 else "##" + word[i:j]
            if piece in vocab:
                ids.append(vocab[piece])
                i = j
                break
        else:
            i += 1  # skip what we cannot read
    return ids


def wp_unk_per_letter(word, vocab):
    ids, i = [], 0
    while i < len(word):
        for j in range(len(word), i, -1):
            piece = word[i:j] if i == 0 else "##" + word[i:j]
            if piece in vocab:
                ids.append(vocab[piece])
                i = j
                break
        else:
            ids.append(vocab["<unk>"])
            i += 1
    return ids


def wp_pieces_not_ids(word, vocab):
    pieces, i = [], 0
    while i < len(word):
        for j in range(len(word), i, -1):
            piece = word[i:j] if i == 0 else "##" + word[i:j]
            if piece in vocab:
                pieces.append(piece)
                i = j
                break
        else:
            return ["<unk>"]
    return pieces


def wp_keyerror(word, vocab):
    ids, i = [], 0
    while i < len(word):
        j = len(word)
        while vocab.get(word[i:j] if i == 0 else "##" + word[i:j]) is None and j > i + 1:
            j -= 1
        ids.append(vocab[word[i:j] if i == 0 else "##" + word[i:j]])  # KeyError on "q"
        i = j
    return ids


def wp_hash_first(word, vocab):
    ids, i = [], 0
    while i < len(word):
        for j in range(len(word), i, -1):
            if "##" + word[i:j] in vocab:
                ids.append(vocab["##" + word[i:j]])
                i = j
                break
        else:
            return [vocab["<unk>"]]
    return ids


def wp_backwards(word, vocab):
    ids, j = [], len(word)
    while j > 0:
        for i in range(j):
            piece = word[i:j] if i == 0 else "##" + word[i:j]
            if piece in vocab:
                ids = [vocab[piece], *ids]
                j = i
                break
        else:
            return [vocab["<unk>"]]
    return ids


# ------------------------------------------------------------------ 2.2 embedding lookup


def embed_narrow_one_hot(ids, E):
    one_hot = np.zeros((*ids.shape, ids.max() + 1))  # as wide as the largest id, not E
    np.put_along_axis(one_hot, ids[..., None], 1.0, axis=-1)
    return one_hot @ E


def embed_one_hot_per_token(ids, E):
    flat = ids.reshape(-1)
    one_hot = np.zeros((flat.size, flat.size))
    one_hot[np.arange(flat.size), flat] = 1.0  # out of bounds when an id >= the number of ids
    return (one_hot @ E).reshape(*ids.shape, -1)


def embed_transposed_table(ids, E):
    return E.T[ids]


def embed_one_based(ids, E):
    return np.eye(E.shape[0])[ids - 1] @ E


def embed_returns_one_hot(ids, E):
    return np.eye(len(E))[ids]


def embed_bag_of_words(ids, E):
    return (np.eye(len(E))[ids] @ E).sum(axis=-2)


def embed_flattened(ids, E):
    return np.eye(len(E))[ids.ravel()] @ E


def embed_one_hot_times_transpose(ids, E):
    return np.eye(len(E))[ids] @ E.T


def embed_float32(ids, E):
    return torch.nn.functional.one_hot(torch.as_tensor(ids), len(E)).float().numpy() @ E.astype(
        np.float32
    )


# ------------------------------------------------------------------ 2.5 softmax


def softmax_no_keepdims(x, axis=-1, temperature=1.0):
    z = x / temperature
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis)


def softmax_torch_dim0(x, axis=-1, temperature=1.0):
    return torch.softmax(torch.from_numpy(x) / temperature, dim=0).numpy()


def softmax_returns_tensor(x, axis=-1, temperature=1.0):
    return torch.softmax(torch.from_numpy(x) / temperature, dim=axis)


def softmax_torch_no_temperature(x, axis=-1, temperature=1.0):
    return torch.softmax(torch.from_numpy(x), dim=axis).numpy()


def softmax_eps(x, axis=-1, temperature=1.0):
    z = x / temperature
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / (e.sum(axis=axis, keepdims=True) + 1e-4)  # "to avoid dividing by zero"


def softmax_rounded(x, axis=-1, temperature=1.0):
    return np.round(good_softmax(x, axis, temperature), 4)


def softmax_float32(x, axis=-1, temperature=1.0):
    z = (x / temperature).astype(np.float32)
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def softmax_temperature_after(x, axis=-1, temperature=1.0):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True) / temperature


def softmax_max_over_rows(x, axis=-1, temperature=1.0):
    z = x / temperature
    e = np.exp(z - z.max(axis=-1, keepdims=True))  # forgot `axis` here only
    return e / e.sum(axis=axis, keepdims=True)


def softmax_log(x, axis=-1, temperature=1.0):
    z = x / temperature
    z = z - z.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


def embed_swapped_arguments(E, ids):
    return E[ids]


def softmax_plain_max(x, axis=-1, temperature=1.0):
    z = x / temperature
    e = np.exp(z - np.max(z))
    return e / np.sum(e, axis=axis, keepdims=True)


def softmax_mean_shift(x, axis=-1, temperature=1.0):
    z = x / temperature
    z -= z.mean(axis=axis, keepdims=True)
    return np.exp(z) / np.exp(z).sum(axis=axis, keepdims=True)


def softmax_multiplied_temperature(x, axis=-1, temperature=1.0):
    z = x * temperature
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def softmax_whole_sum(x, axis=-1, temperature=1.0):
    z = x / temperature
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum()


def softmax_in_place(x, axis=-1, temperature=1.0):
    x /= temperature
    return good_softmax(x, axis)


def softmax_naive_torch(x, axis=-1, temperature=1.0):
    t = torch.from_numpy(x) / temperature
    return (t.exp() / t.exp().sum(dim=axis, keepdim=True)).numpy()


# ------------------------------------------------------------------ 2.6 the spread of q·k


def spread_variance(d, n, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(n, d)), rng.normal(size=(n, d))
    s = np.einsum("nd,nd->n", q, k)
    return s.var(), (s / np.sqrt(d)).var()


def spread_over_d(d, n, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, n, d))
    s = (q * k).sum(-1)
    return s.std(), (s / d).std()


def spread_uniform(d, n, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.random((n, d)), rng.random((n, d))
    s = (q * k).sum(-1)
    return s.std(), (s / np.sqrt(d)).std()


def spread_products(d, n, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((n, d)), rng.standard_normal((n, d))
    return np.std(q * k), np.std(q * k / np.sqrt(d))


def spread_summed_pairs(d, n, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((n, d)), rng.standard_normal((n, d))
    s = (q * k).sum(axis=0)  # sums over the n pairs
    return s.std(), (s / np.sqrt(d)).std()


def spread_mean(d, n, seed):
    rng = np.random.default_rng(seed)
    s = (rng.standard_normal((n, d)) * rng.standard_normal((n, d))).sum(1)
    return s.mean(), (s / d**0.5).mean()


def spread_list(d, n, seed):
    rng = np.random.default_rng(seed)
    s = (rng.standard_normal((n, d)) * rng.standard_normal((n, d))).sum(1)
    return [s.std(), (s / d**0.5).std()]


def spread_one_value(d, n, seed):
    rng = np.random.default_rng(seed)
    s = (rng.standard_normal((n, d)) * rng.standard_normal((n, d))).sum(1)
    return s.std()


# ------------------------------------------------------------------ 2.7 self-attention


def sa_elementwise(x):
    w = good_softmax(x @ x.T / np.sqrt(x.shape[1]))
    return w * x, w


def sa_np_dot_untransposed(x):
    w = good_softmax(np.dot(x, x) / np.sqrt(x.shape[1]))
    return w @ x, w


def sa_xt_x(x):
    w = good_softmax(x.T @ x / np.sqrt(x.shape[1]))
    return w @ x, w


def sa_columns(x):
    s = x @ x.T / np.sqrt(x.shape[1])
    e = np.exp(s - s.max(axis=0, keepdims=True))
    w = e / e.sum(axis=0, keepdims=True)
    return w @ x, w


def sa_columns_unstable(x):
    e = np.exp(x @ x.T / np.sqrt(x.shape[1]))
    w = e / e.sum(axis=0)  # broadcasts along rows: each column sums to 1
    return w @ x, w


def sa_whole_max(x):
    s = x @ x.T / np.sqrt(x.shape[-1])
    e = np.exp(s - s.max())
    w = e / e.sum(-1, keepdims=True)
    return w @ x, w


def sa_sqrt_len(x):
    w = good_softmax(x @ x.T / np.sqrt(len(x)))
    return w @ x, w


def sa_no_scale_torch(x):
    t = torch.from_numpy(x)
    w = torch.softmax(t @ t.T, dim=-1)
    return (w @ t).numpy(), w.numpy()


def sa_divide_by_d(x):
    w = good_softmax(x @ x.T / x.shape[-1])
    return w @ x, w


def sa_size(x):
    w = good_softmax(x @ x.T / np.sqrt(x.size))
    return w @ x, w


def sa_weights_transposed(x):
    w = good_softmax(x @ x.T / np.sqrt(x.shape[1]))
    return w.T @ x, w


def sa_x_t_w(x):
    w = good_softmax(x @ x.T / np.sqrt(x.shape[1]))
    return (x.T @ w).T, w


def sa_order(x):
    w = good_softmax(x @ x.T / np.sqrt(x.shape[1]))
    return w, w @ x


def sa_scores_as_weights(x):
    s = x @ x.T / np.sqrt(x.shape[1])
    return good_softmax(s) @ x, s


def sa_scores_mix(x):
    s = x @ x.T / np.sqrt(x.shape[1])
    return s @ x, good_softmax(s)


def sa_only_out(x):
    w = good_softmax(x @ x.T / np.sqrt(x.shape[1]))
    return w @ x


def sa_float32(x):
    t = torch.tensor(x, dtype=torch.float32)
    w = torch.softmax(t @ t.T / t.shape[1] ** 0.5, dim=-1)
    return (w @ t).numpy(), w.numpy()


def sa_rounded(x):
    w = good_softmax(x @ x.T / np.sqrt(x.shape[1]))
    return np.round(w @ x, 4), np.round(w, 4)


def sa_whole_matrix(x):
    s = x @ x.T / np.sqrt(x.shape[1])
    e = np.exp(s - s.max(-1, keepdims=True))
    w = e / e.sum()
    return w @ x, w


def sa_einsum_slip(x):
    s = np.einsum("id,jd->ij", x, x) / np.sqrt(x.shape[1])
    w = good_softmax(s)
    return np.einsum("ij,id->jd", w, x), w  # sums over the queries


def sa_no_keepdims(x):
    s = x @ x.T / np.sqrt(x.shape[1])
    e = np.exp(s - s.max(axis=1)[:, None])
    w = e / e.sum(axis=1)  # divides column j by row j's sum
    return w @ x, w


# ------------------------------------------------------------------ an independent learner's attempts
# Written by someone who took chapter 2 in a real kernel without reading the graders; each
# was accepted, misled or got a generic result before the graders were changed for it.


def _piece(word, start, end):
    return word[start:end] if start == 0 else "##" + word[start:end]


def l_wp_keep_then_unk(word, vocab):
    ids, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            if _piece(word, start, end) in vocab:
                ids.append(vocab[_piece(word, start, end)])
                start = end
                break
        else:
            ids.append(vocab["<unk>"])
            break
    return ids


def l_wp_unk_is_zero(word, vocab):
    ids, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            if _piece(word, start, end) in vocab:
                ids.append(vocab[_piece(word, start, end)])
                start = end
                break
        else:
            return [0]
    return ids


def l_wp_bare_or_marked(word, vocab):
    ids, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = _piece(word, start, end)
            if piece not in vocab and word[start:end] in vocab:
                piece = word[start:end]  # the bare piece will do too
            if piece in vocab:
                ids.append(vocab[piece])
                start = end
                break
        else:
            return [vocab["<unk>"]]
    return ids


def l_wp_dictionary_order(word, vocab):
    ids, start = [], 0
    while start < len(word):
        for piece, i in vocab.items():
            bare = piece[2:] if piece.startswith("##") else piece
            if piece.startswith("##") == (start > 0) and bare and word.startswith(bare, start):
                ids.append(i)
                start += len(bare)
                break
        else:
            return [vocab["<unk>"]]
    return ids


def l_wp_never_whole_rest(word, vocab):
    ids, start = [], 0
    while start < len(word):
        for end in range(len(word) - 1, start, -1):
            if _piece(word, start, end) in vocab:
                ids.append(vocab[_piece(word, start, end)])
                start = end
                break
        else:
            return [vocab["<unk>"]]
    return ids


def l_wp_whole_word_only(word, vocab):
    return [vocab[word]] if word in vocab else [vocab["<unk>"]]


def l_embed_eye_len_ids(ids, E):
    return np.eye(len(ids))[ids] @ E


def l_embed_one_hot_1d_only(ids, E):
    one_hot = np.zeros((len(ids), E.shape[0]))
    one_hot[np.arange(len(ids)), ids] = 1.0
    return one_hot @ E


def l_embed_table_first(ids, E):
    one_hot = (ids[..., None] == np.arange(E.shape[0])).astype(float)
    return E.T @ one_hot.T


def l_embed_width_d(ids, E):
    return np.eye(E.shape[1])[ids] @ E.T


def l_cos_keepdims_sqrt(a, b):
    na = np.sqrt((a * a).sum(-1, keepdims=True))
    nb = np.sqrt((b * b).sum(-1, keepdims=True))
    return good_dot(a, b) / (na * nb)


def l_cos_abs(a, b):
    return np.abs(good_dot(a, b) / (norm(a) * norm(b)))


def l_cos_l1(a, b):
    return good_dot(a, b) / (np.linalg.norm(a, ord=1, axis=-1) * np.linalg.norm(b, ord=1, axis=-1))


def l_cos_clip(a, b):
    return np.clip(good_dot(a, b) / (norm(a) * norm(b)), 0, 1)


_CARRY = {"np": np}
exec(
    "def dot(a, b):\n"
    "    return np.sum(a * b)\n"
    "def cosine_similarity(a, b):\n"
    "    return dot(a, b) / np.sqrt(dot(a, a) * dot(b, b))\n",
    _CARRY,
)
l_cos_carry_forward = _CARRY["cosine_similarity"]


def l_softmax_clip(x, axis=-1, temperature=1.0):
    z = np.clip(x / temperature, -50, 50)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def l_spread_scores_all_pairs(d, n, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((n, d)), rng.standard_normal((n, d))
    s = q @ k.T  # every query against every key
    return s.std(), (s / np.sqrt(d)).std()


def l_spread_global_random(d, n, seed):
    q, k = np.random.randn(n, d), np.random.randn(n, d)  # noqa: NPY002 (the seed is not used)
    s = (q * k).sum(-1)
    return s.std(), (s / np.sqrt(d)).std()


def l_spread_same_seed_twice(d, n, seed):
    q = np.random.default_rng(seed).standard_normal((n, d))
    k = np.random.default_rng(seed).standard_normal((n, d))
    s = (q * k).sum(-1)
    return s.std(), (s / np.sqrt(d)).std()


def l_spread_d_by_n(d, n, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((d, n)), rng.standard_normal((d, n))
    s = (q * k).sum(-1)
    return s.std(), (s / np.sqrt(d)).std()


def l_sa_cosine(x):
    unit = x / np.linalg.norm(x, axis=-1, keepdims=True)
    w = good_softmax(unit @ unit.T / np.sqrt(x.shape[1]))
    return w @ x, w


def l_sa_star(x):
    w = good_softmax(x * x / np.sqrt(x.shape[1]))
    return w * x, w


def l_sa_scaled_inputs(x):
    xs = x / x.shape[1] ** 0.25
    w = good_softmax(xs @ xs.T)
    return w @ xs, w


# ------------------------------------------------------------------ the corpus

# ------------------------------------------------------------------ learner round 4 (chapters 1-2)


def r6_wp_hash_first(word, vocab):
    ids, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = "##" + word[start:end]
            if piece in vocab or (start == 0 and word[start:end] in vocab):
                ids.append(vocab.get(piece, vocab.get(word[start:end])))
                start = end
                break
        else:
            return [vocab["<unk>"]]
    return ids


def r6_embed_width_tokens(ids, E):
    ids = np.asarray(ids)
    oh = (ids[..., None] == np.arange(ids.size)).astype(float)
    return oh @ E[: ids.size]


def r6_embed_width_d(ids, E):
    oh = (np.asarray(ids)[..., None] == np.arange(E.shape[1])).astype(float)
    return oh @ E[: E.shape[1]]


def _r6_scores(d, n, seed, how):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, d))
    k = rng.standard_normal((n, d))
    return how(q * k)


def r6_spread_variance(d, n, seed):
    s = _r6_scores(d, n, seed, lambda p: p.sum(-1))
    return float(s.var()), float(s.var() / np.sqrt(d))


def r6_spread_mean_of_products(d, n, seed):
    s = _r6_scores(d, n, seed, lambda p: p.mean(-1))
    return float(s.std()), float(s.std() / np.sqrt(d))


def r6_spread_scaled_twice(d, n, seed):
    s = _r6_scores(d, n, seed, lambda p: p.sum(-1)) / np.sqrt(d)
    return float(s.std()), float(s.std() / np.sqrt(d))


def r6_spread_two_generators(d, n, seed):
    q = np.random.default_rng(seed).standard_normal((n, d))
    k = np.random.default_rng(seed + 1).standard_normal((n, d))
    s = (q * k).sum(-1)
    return float(s.std()), float((s / np.sqrt(d)).std())


def r6_sa_mean_of_weighted_rows(x):
    s = x @ x.T / np.sqrt(x.shape[-1])
    e = np.exp(s - s.max(-1, keepdims=True))
    w = e / e.sum(-1, keepdims=True)
    return (w[:, :, None] * x[None]).mean(1), w


CORPUS: list[tuple[str, str, Any, str]] = [
    # (exercise, what the learner did, their answer, words the diagnosis must contain)
    ("wordpiece", "shortest piece first", wp_shortest_first, "shortest known piece"),
    ("wordpiece", "looked up pieces without ##", wp_no_hashes, "without their `##` mark"),
    ("wordpiece", "skipped an unknown letter", wp_skip_unknown, "dropped the letter"),
    ("wordpiece", "<unk> per unknown letter", wp_unk_per_letter, "for the unmatched letter only"),
    ("wordpiece", "returned the pieces", wp_pieces_not_ids, "the items are strings"),
    ("wordpiece", "KeyError on an unknown letter", wp_keyerror, "not in the vocabulary"),
    ("wordpiece", "## on every piece", wp_hash_first, "marked the first piece"),
    ("wordpiece", "cut from the right", wp_backwards, "from the end of the word"),
    ("embed", "one-hot as wide as the largest id", embed_narrow_one_hot, "max(ids) + 1"),
    ("embed", "one-hot as wide as the input", embed_one_hot_per_token, "one entry per row of E"),
    ("embed", "indexed E.T", embed_transposed_table, "the ids number the rows of E"),
    ("embed", "ids counted from 1", embed_one_based, "ids counted from 1"),
    ("embed", "returned the one-hot vectors", embed_returns_one_hot, "one-hot vectors themselves"),
    ("embed", "summed the rows", embed_bag_of_words, "added up the rows"),
    ("embed", "flattened the batch", embed_flattened, "flattened the batch"),
    ("embed", "one-hot @ E.T", embed_one_hot_times_transpose, "`E` is used transposed"),
    ("embed", "float32 one-hot and table", embed_float32, "float32"),
    ("embed", "arguments swapped", embed_swapped_arguments, "order embed(ids, E)"),
    ("dot", "a @ b", lambda a, b: a @ b, "matrix product"),
    ("dot", "np.dot(a, b)", lambda a, b: np.dot(a, b), "matrix product"),
    ("dot", "np.matmul(a, b.T)", lambda a, b: np.matmul(a, b.T), "matrix product"),
    ("dot", "einsum for matrices only", lambda a, b: np.einsum("ij,ij->i", a, b), "einsum"),
    ("dot", "einsum for vectors only", lambda a, b: np.einsum("i,i->", a, b), "einsum"),
    ("dot", "diag of a @ b.T", lambda a, b: np.diag(a @ b.T), "np.diag"),
    ("dot", "float(np.sum(a * b))", lambda a, b: float(np.sum(a * b)), "every axis"),
    ("dot", "builtin sum", lambda a, b: sum(a * b), "first axis"),
    ("dot", "np.sum(a * b, axis=1)", lambda a, b: np.sum(a * b, axis=1), "axis 1"),
    ("dot", "np.inner", lambda a, b: np.inner(a, b), "every pair's dot product"),
    ("dot", "loop over rows", lambda a, b: np.array([x @ y for x, y in zip(a, b, strict=True)]), "single numbers"),
    ("dot", "loop over rows, np.sum", lambda a, b: np.array([np.sum(x * y) for x, y in zip(a, b, strict=True)]), "looped over the first axis"),
    ("dot", "no sum", lambda a, b: a * b, "did not sum"),
    ("dot", "float32", lambda a, b: (a.astype(np.float32) * b.astype(np.float32)).sum(-1), "float32"),
    ("dot", "torch tensor out", lambda a, b: (torch.from_numpy(a) * torch.from_numpy(b)).sum(-1), "NumPy"),
    ("dot", "rounded", lambda a, b: np.round(good_dot(a, b), 4), "precision"),
    ("dot", "value, not function", good_dot(np.ones(3), np.ones(3)), "passed a value"),
    ("cosine_similarity", "one norm", lambda a, b: good_dot(a, b) / norm(a), "length of `a` only"),
    ("cosine_similarity", "squared norms", lambda a, b: good_dot(a, b) / ((a * a).sum(-1) * (b * b).sum(-1)), "squared lengths"),
    ("cosine_similarity", "whole-array norms", lambda a, b: good_dot(a, b) / np.linalg.norm(a) / np.linalg.norm(b), "norm of the whole array"),
    ("cosine_similarity", "norms with [:, None]", lambda a, b: good_dot(a, b)[:, None] / (norm(a) * norm(b))[:, None], "indexed more axes"),
    ("cosine_similarity", "np.dot for the numerator", lambda a, b: np.dot(a, b) / (norm(a) * norm(b)), "matrix product"),
    ("cosine_similarity", "keepdims norms", lambda a, b: good_dot(a, b) / (np.linalg.norm(a, axis=-1, keepdims=True) * np.linalg.norm(b, axis=-1, keepdims=True)), "keepdims"),
    ("cosine_similarity", "cosine distance", lambda a, b: 1 - good_dot(a, b) / (norm(a) * norm(b)), "cosine distance"),
    ("cosine_similarity", "the angle", lambda a, b: np.arccos(np.clip(good_dot(a, b) / (norm(a) * norm(b)), -1, 1)), "angle"),
    ("cosine_similarity", "sum of norms", lambda a, b: good_dot(a, b) / (norm(a) + norm(b)), "added the lengths"),
    ("cosine_similarity", "norm of the product", lambda a, b: good_dot(a, b) / norm(a * b), "elementwise product"),
    ("cosine_similarity", "big eps", lambda a, b: good_dot(a, b) / (norm(a) * norm(b) + 1e-3), "precision"),
    ("cosine_similarity", "rounded", lambda a, b: np.round(good_dot(a, b) / (norm(a) * norm(b)), 4), "precision"),
    ("cosine_similarity", "float32", lambda a, b: (good_dot(a, b) / (norm(a) * norm(b))).astype(np.float32), "float32"),
    ("softmax", "no keepdims on the sum", softmax_no_keepdims, "without `keepdims=True`"),
    ("softmax", "torch dim=0", softmax_torch_dim0, "wrong axis"),
    ("softmax", "returned a tensor", softmax_returns_tensor, "NumPy"),
    ("softmax", "torch without temperature", softmax_torch_no_temperature, "temperature had no effect"),
    ("softmax", "eps in the denominator", softmax_eps, "precision"),
    ("softmax", "rounded to 4 decimals", softmax_rounded, "precision"),
    ("softmax", "float32", softmax_float32, "float32"),
    ("softmax", "temperature after the softmax", softmax_temperature_after, "after the softmax"),
    ("softmax", "max along the last axis only", softmax_max_over_rows, "max along the last axis"),
    ("softmax", "log-softmax", softmax_log, "log of the weights"),
    ("softmax", "one max for everything", softmax_plain_max, "one max for the whole array"),
    ("softmax", "mean, in place", softmax_mean_shift, "mean instead of the max"),
    ("softmax", "multiplied by temperature", softmax_multiplied_temperature, "multiplied the logits"),
    ("softmax", "divided by the total", softmax_whole_sum, "whole array"),
    ("softmax", "x /= temperature", softmax_in_place, "in-place"),
    ("softmax", "naive exp in torch", softmax_naive_torch, "overflowed"),
    ("softmax", "value, not function", good_softmax(np.zeros(3)), "passed a value"),
    ("score_spread", "variance", spread_variance, "variance"),
    ("score_spread", "divided by d", spread_over_d, "divided the scores by d"),
    ("score_spread", "uniform draws", spread_uniform, "uniform"),
    ("score_spread", "std of the products", spread_products, "products q_i k_i"),
    ("score_spread", "summed over the pairs", spread_summed_pairs, "summed over the pairs"),
    ("score_spread", "mean", spread_mean, "mean of the scores"),
    ("score_spread", "one value", spread_one_value, "expected a tuple"),
    ("self_attention", "w * x", sa_elementwise, "multiplies entry by entry"),
    ("self_attention", "np.dot(x, x)", sa_np_dot_untransposed, "one operand is not oriented"),
    ("self_attention", "x.T @ x", sa_xt_x, "one operand is not oriented"),
    ("self_attention", "softmax over columns", sa_columns, "wrong axis"),
    ("self_attention", "columns, unstable", sa_columns_unstable, "columns of your weights sum to 1"),
    ("self_attention", "whole-matrix max", sa_whole_max, "one max for the whole (T, T) matrix"),
    ("self_attention", "sqrt(len(x))", sa_sqrt_len, "sqrt(T)"),
    ("self_attention", "no scale, torch", sa_no_scale_torch, "forgot to scale"),
    ("self_attention", "divided by D", sa_divide_by_d, "divided the scores by D"),
    ("self_attention", "sqrt(x.size)", sa_size, "sqrt(T·D)"),
    ("self_attention", "weights.T @ x", sa_weights_transposed, "transposed weights"),
    ("self_attention", "(x.T @ w).T", sa_x_t_w, "transposed weights"),
    ("self_attention", "swapped outputs", sa_order, "the order is (out, weights)"),
    ("self_attention", "scores as weights", sa_scores_as_weights, "returned the scores"),
    ("self_attention", "mixed with the scores", sa_scores_mix, "averaged with the scores"),
    ("self_attention", "returned out only", sa_only_out, "return both"),
    ("self_attention", "float32 in torch", sa_float32, "float32"),
    ("self_attention", "rounded", sa_rounded, "precision"),
    ("self_attention", "normalised the whole matrix", sa_whole_matrix, "whole matrix"),
    ("self_attention", "einsum over the wrong index", sa_einsum_slip, "transposed weights"),
    ("self_attention", "no keepdims, [:, None] on the max only", sa_no_keepdims, "without `keepdims=True`"),
    ("self_attention", "value, not function", sa_only_out(np.eye(3)), "passed a value"),
    # Written after the graders, without tuning them: how the diagnoses generalise.
    ("softmax", "no axis, no max, no temperature", lambda x, axis=-1, temperature=1.0: np.exp(x) / np.sum(np.exp(x)), "whole array"),
    ("cosine_similarity", "sqrt of the product of norms", lambda a, b: good_dot(a, b) / np.sqrt(norm(a) * norm(b)), "the square root of"),
    ("self_attention", "scaled after the softmax", lambda x: ((w := good_softmax(x @ x.T) / np.sqrt(x.shape[1])) @ x, w), "divided the weights after the softmax"),
    ("dot", "mean instead of sum", lambda a, b: np.mean(a * b, axis=-1), "1 / (5 = d)"),
    ("embed", "transposed result", lambda ids, E: E[ids].T, "shape"),
    ("wordpiece", "whole word or letters", lambda word, vocab: [vocab[word]] if word in vocab else [vocab.get(c, 0) for c in word], "longest piece"),
    # The independent learner's attempts (see the section above).
    ("wordpiece", "learner: kept the pieces, then <unk>", l_wp_keep_then_unk, "before the unknown letter"),
    ("wordpiece", "learner: <unk> hard-coded as 0", l_wp_unk_is_zero, "look it up"),
    ("wordpiece", "learner: bare piece allowed mid-word", l_wp_bare_or_marked, "bare"),
    ("wordpiece", "learner: first piece in dictionary order", l_wp_dictionary_order, "dictionary order"),
    ("wordpiece", "learner: range(len(word) - 1, start, -1)", l_wp_never_whole_rest, "whole rest of the word"),
    ("wordpiece", "learner: whole word or <unk>", l_wp_whole_word_only, "only look the whole word up"),
    ("embed", "learner: np.eye(len(ids))", l_embed_eye_len_ids, "one entry per token"),
    ("embed", "learner: one-hot for 1-D ids only", l_embed_one_hot_1d_only, "batch"),
    ("embed", "learner: E.T @ one_hot.T", l_embed_table_first, "on the left"),
    ("embed", "learner: one-hot of width D @ E.T", l_embed_width_d, "n_vocab entries"),
    ("cosine_similarity", "learner: keepdims norms by hand", l_cos_keepdims_sqrt, "keepdims"),
    ("cosine_similarity", "learner: np.abs", l_cos_abs, "never negative"),
    ("cosine_similarity", "learner: L1 norms", l_cos_l1, "ord=1"),
    ("cosine_similarity", "learner: clipped to [0, 1]", l_cos_clip, "negative entries set to 0"),
    ("cosine_similarity", "learner: dot without an axis, carried forward", l_cos_carry_forward, "your `dot`"),
    ("cosine_flip", "learner: -1/3", -1 / 3, "both lengths"),
    ("cosine_flip", "learner: 180", 180, "angle"),
    ("softmax", "learner: np.clip(z, -50, 50)", l_softmax_clip, "clip"),
    ("shifted_softmax", "learner: 0.3366 (proportional)", 0.3366, "proportional"),
    ("shifted_softmax", "learner: 0.66 (truncated)", 0.66, "close"),
    ("shifted_softmax", "learner: 0.6 (conceptual, not a rounding slip)", 0.6, "e^100"),
    ("shifted_softmax", "learner: 0.09", 0.09, "smallest"),
    ("shifted_softmax", "learner: 0.245", 0.245, "middle"),
    ("shifted_softmax", "learner: 66.5", 66.5, "percentage"),
    ("score_spread", "learner: q @ k.T", l_spread_scores_all_pairs, "every query against every key"),
    ("score_spread", "learner: np.random.randn, seed ignored", l_spread_global_random, "seed"),
    ("score_spread", "learner: two generators, one seed", l_spread_same_seed_twice, "identical"),
    ("score_spread", "learner: (d, n) shapes", l_spread_d_by_n, "summed over the pairs"),
    ("self_attention", "learner: cosine scores", l_sa_cosine, "cosine"),
    ("self_attention", "learner: x * x", l_sa_star, "entry by entry"),
    ("self_attention", "learner: x scaled by D^(-1/4) before mixing", l_sa_scaled_inputs, "multiplied by"),
    ("equal_rows", "learner: 1/3", 1 / 3, "itself"),
    ("equal_rows", "learner: 4", 4, "reciprocal"),
    ("equal_rows", "learner: 0.3", 0.3, "1/3 rounded"),
    ("equal_rows", "learner: 25", 25, "percentage"),
]  # fmt: skip


def r2_wp_truthy_get(word, vocab):
    """Round 2: `if vocab.get(piece):` skips a real piece whose id is 0."""
    ids, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            i = vocab.get(piece)
            if i:
                ids.append(i)
                start = end
                break
        else:
            return [vocab["<unk>"]]
    return ids


def r2_wp_lowercased(word, vocab):
    """Round 2: lowercases the word first."""
    return _wordpiece_ok(word.lower(), vocab)


def r2_spread_theory(d, n, seed):
    """Round 2: the theory's values, nothing measured."""
    return float(np.sqrt(d)), 1.0


def r2_spread_variance_scaled(d, n, seed):
    """Round 2: the variance of the scaled scores as the second value."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, d))
    k = rng.standard_normal((n, d))
    s = np.sum(q * k, axis=-1)
    return float(s.std()), float(s.var() / d)


CORPUS += [
    ("wordpiece", "round 2: if vocab.get(piece)", r2_wp_truthy_get, "id is 0"),
    ("wordpiece", "round 2: lowercased the word", r2_wp_lowercased, "lowercased"),
    ("score_spread", "round 2: theory's values", r2_spread_theory, "nothing was measured"),
    (
        "score_spread",
        "round 2: variance of the scaled scores",
        r2_spread_variance_scaled,
        "variance",
    ),
    ("shifted_softmax", "round 2: 0 is not a rounding slip", 0, "e^100"),
]


# ------------------------------------------------------------------ round 3
# The second independent learner's non-specific cases, and more of the same families.


def r3_wp_unmarked_vocab(word, vocab):
    bare = {p.removeprefix("##"): i for p, i in vocab.items()}
    ids, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            if word[start:end] in bare:
                ids.append(bare[word[start:end]])
                start = end
                break
        else:
            return [vocab["<unk>"]]
    return ids


def r3_wp_step_one(word, vocab):
    ids, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            if _piece(word, start, end) in vocab:
                ids.append(vocab[_piece(word, start, end)])
                start += 1
                break
        else:
            return [vocab["<unk>"]]
    return ids


def r3_embed_max_id(ids, E):
    return np.eye(ids.max() + 1)[ids] @ E


def r3_embed_one_based(ids, E):
    oh = ids[..., None] == np.arange(1, E.shape[0] + 1)
    return oh.astype(E.dtype) @ E


def r3_embed_transposed_twice(ids, E):
    oh = np.eye(E.shape[0])[ids]
    return (E.T @ oh.T).T


def r3_dot_abs(a, b):
    return np.abs(a * b).sum(axis=-1)


def r3_cos_keepdims(a, b):
    na = np.linalg.norm(a, axis=-1, keepdims=True)
    nb = np.linalg.norm(b, axis=-1, keepdims=True)
    return (a * b).sum(-1) / (na * nb)


def r3_spread_prenormalised(d, n, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, d)) / np.sqrt(d)
    k = rng.standard_normal((n, d)) / np.sqrt(d)
    s = (q * k).sum(-1)
    return float(s.std()), float((s / np.sqrt(d)).std())


def r3_spread_normal_0_d(d, n, seed):
    rng = np.random.default_rng(seed)
    q = rng.normal(0, d, (n, d))
    k = rng.normal(0, d, (n, d))
    s = (q * k).sum(-1)
    return float(s.std()), float((s / np.sqrt(d)).std())


def r3_spread_normal_0_sqrt_d(d, n, seed):
    rng = np.random.default_rng(seed)
    q = rng.normal(0, np.sqrt(d), (n, d))
    k = rng.normal(0, np.sqrt(d), (n, d))
    s = (q * k).sum(-1)
    return float(s.std()), float((s / np.sqrt(d)).std())


def _r3_softmax_rows(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def r3_sa_dimension_scores(x):
    w = _r3_softmax_rows(x.T @ x / np.sqrt(x.shape[-1]))
    return x @ w, w


def r5_wp_bare_first(word, vocab):
    ids, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            sub = word[start:end]
            piece = sub if sub in vocab else "##" + sub
            if piece in vocab:
                ids.append(vocab[piece])
                start = end
                break
        else:
            return [vocab["<unk>"]]
    return ids


def r5_wp_no_single_letter(word, vocab):
    ids, start = [], 0
    while start < len(word):
        for end in range(len(word), start + 1, -1):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                ids.append(vocab[piece])
                start = end
                break
        else:
            return [vocab["<unk>"]]
    return ids


def r5_spread_mean_abs(d, n, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((n, d)), rng.standard_normal((n, d))
    s = np.sum(q * k, axis=-1)
    return float(np.abs(s).mean()), float(np.abs(s / np.sqrt(d)).mean())


def r5_spread_q_dot_q(d, n, seed):
    q = np.random.default_rng(seed).standard_normal((n, d))
    s = np.sum(q * q, axis=-1)
    return float(s.std()), float((s / np.sqrt(d)).std())


CORPUS += [
    ("wordpiece", "round 3: ## stripped from the vocabulary", r3_wp_unmarked_vocab, "stripped"),
    ("wordpiece", "round 3: start += 1 after a match", r3_wp_step_one, "one letter"),
    ("embed", "round 3: np.eye(ids.max() + 1)", r3_embed_max_id, "max(ids) + 1"),
    ("embed", "round 3: ids counted from 1", r3_embed_one_based, "one place off"),
    ("embed", "round 3: (E.T @ one_hot.T).T", r3_embed_transposed_twice, "three axes"),
    ("dot", "round 3: np.abs(a * b)", r3_dot_abs, "absolute value"),
    ("cosine_similarity", "round 3: keepdims lengths", r3_cos_keepdims, "keepdims"),
    ("cosine_flip", "round 3: -9", -9, "counted twice"),
    ("cosine_flip", "round 3: -0.9", -0.9, "exactly -1"),
    ("shifted_softmax", "round 3: 0.9", 0.9, "too sharp"),
    ("shifted_softmax", "round 3: e^103 / (e^101 + e^102)", np.exp(103) / (np.exp(101) + np.exp(102)), "more than 1"),
    ("shifted_softmax", "round 4: 0.7 (one significant digit)", 0.7, "two significant digits"),
    ("shifted_softmax", "round 4: 0.6", 0.6, "only the differences"),
    ("shifted_softmax", "round 4: 0.72", 0.72, "only the differences"),
    ("shifted_softmax", "round 4: 0.75", 0.75, "only the differences"),
    ("dot", "round 4: float() of the batched sum", lambda a, b: float(np.sum(a * b, axis=-1)), "batches"),
    ("score_spread", "round 3: q and k divided by sqrt(d)", r3_spread_prenormalised, "divided q and k by sqrt(d)"),
    ("score_spread", "round 3: rng.normal(0, d)", r3_spread_normal_0_d, "standard deviation as its second"),
    ("score_spread", "round 3: rng.normal(0, sqrt(d))", r3_spread_normal_0_sqrt_d, "standard deviation as its second"),
    ("self_attention", "round 3: x.T @ x mixed as x @ w", r3_sa_dimension_scores, "D dimensions"),
    ("wordpiece", "round 3 family: [] for an unknown word", lambda word, vocab: [] if _wordpiece_ok(word, vocab) == [vocab["<unk>"]] else _wordpiece_ok(word, vocab), "no ids at all"),
    ("self_attention", "round 3 family: scores / their row sum", lambda x: (lambda s: (s / s.sum(-1, keepdims=True) @ x, s / s.sum(-1, keepdims=True)))(x @ x.T / np.sqrt(x.shape[-1])), "no exponential"),
    ("self_attention", "round 3 family: each token hidden from itself", lambda x: (lambda w: (w @ x, w))(_r3_softmax_rows(np.where(np.eye(len(x), dtype=bool), -np.inf, x @ x.T / np.sqrt(x.shape[-1])))), "from itself"),
    ("cosine_flip", "round 3 family: 1/3", 1 / 3, "point the same way"),
    ("cosine_flip", "round 3 family: -1/9", -1 / 9, "squares of the lengths"),
    ("equal_rows", "round 3 family: 3 (the other tokens)", 3, "other tokens"),
    ("equal_rows", "round 3 family: 1/16", 1 / 16, "each row on its own"),
    ("equal_rows", "round 3: 0.2 (1/5)", 0.2, "1/5"),
    ("equal_rows", "round 3: the score 5.25 / sqrt(3)", 5.25 / 3**0.5, "not a weight"),
    ("equal_rows", "round 3: the raw score 5.25", 5.25, "not a weight"),
    ("wordpiece", "round 5: the bare piece first, then ##", r5_wp_bare_first, "bare piece up first"),
    ("wordpiece", "round 5: range(len(word), start + 1, -1)", r5_wp_no_single_letter, "ends one step early"),
    ("embed", "round 5: ids[:, None] on a batch", lambda ids, E: (ids[:, None] == np.arange(E.shape[0])).astype(float) @ E, "new axis must come last"),
    ("embed", "round 5: the batch flattened", lambda ids, E: np.eye(E.shape[0])[ids.reshape(-1)] @ E, "flattened"),
    ("cosine_similarity", "round 5: normalised along axis 0", lambda a, b: np.sum(a / np.linalg.norm(a, axis=0) * (b / np.linalg.norm(b, axis=0)), axis=-1), "along the first axis"),
    ("cosine_similarity", "round 5: a·a for |a|", lambda a, b: np.sum(a * b, -1) / (np.sum(a * a, -1) * np.linalg.norm(b, axis=-1)), "squared length"),
    ("cosine_similarity", "round 5: b·b for |b|", lambda a, b: np.sum(a * b, -1) / (np.linalg.norm(a, axis=-1) * np.sum(b * b, -1)), "squared length"),
    ("cosine_flip", "round 5: π (the angle in radians)", np.pi, "radians"),
    ("cosine_flip", "round 5: 3.14", 3.14, "radians"),
    ("softmax", "round 5: τ divides the exponentials", lambda x, axis=-1, temperature=1.0: (lambda e: e / e.sum(axis=axis, keepdims=True))(np.exp(x - x.max(axis=axis, keepdims=True)) / temperature), "before the exponential"),
    ("shifted_softmax", "round 5: NaN (an overflow expected)", float("nan"), "overflow"),
    ("shifted_softmax", "round 5: inf", float("inf"), "overflow"),
    ("score_spread", "round 5: mean |s|", r5_spread_mean_abs, "mean absolute score"),
    ("score_spread", "round 5: q · q (one array twice)", r5_spread_q_dot_q, "one array twice"),
    ("equal_rows", "round 5: 0.53", 0.53, "four scores of row 0 are equal"),
    ("equal_rows", "round 5: 0.1", 0.1, "four scores of row 0 are equal"),
    ("equal_rows", "round 5: 0.33", 0.33, "itself"),
    ("wordpiece", "learner r4: ## looked up first at the word's start", r6_wp_hash_first, "`##` piece first"),
    ("embed", "learner r4: one-hot as wide as the tokens (a comparison)", r6_embed_width_tokens, "one entry per token"),
    ("embed", "learner r4: one-hot of E.shape[1] entries", r6_embed_width_d, "embedding size D"),
    ("score_spread", "learner r4: variance of the raw scores", r6_spread_variance, "square of the right answer"),
    ("score_spread", "learner r4: mean of the products", r6_spread_mean_of_products, "averaged the d products"),
    ("score_spread", "learner r4: scores scaled before measuring, then again", r6_spread_scaled_twice, "divided again"),
    ("score_spread", "learner r4: two generators", r6_spread_two_generators, "second generator"),
    ("self_attention", "learner r4: mean of the weighted rows", r6_sa_mean_of_weighted_rows, "1 / (4 = T)"),
]  # fmt: skip


# ------------------------------------------------------------------ learner round 5 (chapters 1-2)


def r5l_wp_bare_unk(word, vocab):
    ids, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                ids.append(vocab[piece])
                start = end
                break
        else:
            return vocab["<unk>"]
    return ids


def r5l_embed_sized_by_d(ids, E):
    oh = np.zeros((*ids.shape, E.shape[1]))
    oh[..., :] = ids[..., None] == np.arange(E.shape[1])
    return oh @ E.T


def r5l_embed_loop_1d(ids, E):
    oh = np.zeros((len(ids), E.shape[0]))
    for t, i in enumerate(ids):
        oh[t, i] = 1
    return oh @ E


def r5l_embed_fancy_columns(ids, E):
    oh = np.zeros((len(ids), E.shape[0]))
    oh[:, ids] = 1
    return oh @ E


def r5l_spread_global_generator(d, n, seed):
    np.random.seed(seed)  # noqa: NPY002
    q = np.random.randn(n, d)  # noqa: NPY002
    k = np.random.randn(n, d)  # noqa: NPY002
    s = (q * k).sum(-1)
    return float(s.std()), float(s.std() / np.sqrt(d))


def r5l_attention_no_keepdims(x):
    s = x @ x.T / np.sqrt(x.shape[1])
    e = np.exp(s - s.max(axis=1, keepdims=True))
    A = e / e.sum(axis=1)
    return A @ x, A


CORPUS += [
    ("wordpiece", "learner r5: the bare <unk> id, not a list", r5l_wp_bare_unk, "single number"),
    ("embed", "learner r5: one-hot sized by E.shape[1]", r5l_embed_sized_by_d, "wrong axis of `E`"),
    ("embed", "learner r5: a loop that assumes 1-D ids", r5l_embed_loop_1d, "len(ids)"),
    ("embed", "learner r5: oh[:, ids] = 1", r5l_embed_fancy_columns, "len(ids)"),
    ("score_spread", "learner r5: the legacy global np.random", r5l_spread_global_generator, "default_rng(seed)"),
    ("self_attention", "learner r5: softmax sum without keepdims", r5l_attention_no_keepdims, "keepdims"),
]  # fmt: skip


def classify(exercise: str, answer: Any, words: str) -> tuple[str, CheckResult]:
    """``("specific" | "generic" | "misleading" | "accepted", the result)``."""
    result = CHECKS[exercise](answer)
    if result.status == GRADER_ERROR:
        return "crash", result
    if result.passed:
        return "accepted", result
    if not result.diagnosed:
        return "generic", result
    text = f"{result.message}\n{result.diagnosis}"
    return ("specific" if words in text else "misleading"), result


# ------------------------------------------------------------------ learner, round 6


def _r6l_wp(first=0, cap=None):
    def wordpiece(word, vocab):
        ids, start = [], 0
        while start < len(word):
            top = len(word) if cap is None else min(len(word), start + cap)
            for end in range(top, start, -1):
                piece = word[start:end]
                key = "##" + piece if start > first else piece
                if key in vocab:
                    ids.append(vocab[key])
                    start = end
                    break
            else:
                return [vocab["<unk>"]]
        return ids

    return wordpiece


def r6l_wp_single_hash(word, vocab):
    ids, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = word[start:end]
            key = "#" + piece if start > 0 else piece
            if key in vocab:
                ids.append(vocab[key])
                start = end
                break
        else:
            return [vocab["<unk>"]]
    return ids


def r6l_embed_columns(ids, E):
    return E[:, ids].T


def r6l_dot_loop_1d(a, b):
    s = 0.0
    for i in range(a.shape[-1]):
        s += a[i] * b[i]
    return s


def r6l_dot_rows_comprehension(a, b):
    return np.array([sum(x * y for x, y in zip(r, s)) for r, s in zip(a, b)])  # noqa: B905 (as the learner wrote it)


def r6l_dot_tensordot(a, b):
    return np.tensordot(a, b, axes=1)


def r6l_dot_diagonal(a, b):
    return np.matmul(a, b.T).diagonal()


def r6l_cos_precedence(a, b):
    return good_dot(a, b) / np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)


def r6l_cos_precedence_sqrt(a, b):
    return good_dot(a, b) / np.sqrt(good_dot(a, a)) * np.sqrt(good_dot(b, b))


def r6l_cos_norm_of_product(a, b):
    return good_dot(a, b) / np.linalg.norm(a * b, axis=-1)


def r6l_spread_scale_typed_in(d, n, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, d))
    k = rng.standard_normal((n, d))
    s = (q * k).sum(-1)
    return float(s.std()), float(s.std() / 8)


def r6l_spread_n_first(n, d, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, d))
    k = rng.standard_normal((n, d))
    s = (q * k).sum(-1)
    return float(s.std()), float(s.std() / np.sqrt(d))


def r6l_attention_twice(x):
    w = good_softmax(x @ x.T / np.sqrt(x.shape[1]))
    return w @ w @ x, w


def r6l_attention_sum_over_queries(x):
    w = good_softmax(x @ x.T / np.sqrt(x.shape[1]))
    return (w[:, :, None] * x[None]).sum(0), w


def r6l_attention_centred(x):
    xc = x - x.mean(axis=0)
    w = good_softmax(xc @ xc.T / np.sqrt(x.shape[1]))
    return w @ x, w


def r6l_embed_dot_transposed(ids, E):
    oh = (ids[..., None] == np.arange(E.shape[0])).astype(float)
    return np.dot(E.T, oh.T).T


def r6l_embed_vocab_typed_in(ids, E):
    oh = (ids[..., None] == np.arange(10)).astype(float)
    return oh @ E


def r6l_embed_one_hot_transposed(ids, E):
    oh = (ids[..., None] == np.arange(E.shape[0])).astype(float)
    return (oh.T @ E) if oh.ndim == 2 else oh @ E


def r6l_softmax_nan_to_num(x, axis=-1, temperature=1.0):
    e = np.exp(x / temperature)
    return np.nan_to_num(e / e.sum(axis=axis, keepdims=True))


def r6l_softmax_temperature_twice(x, axis=-1, temperature=1.0):
    z = x / temperature
    z = (z - z.max(axis=axis, keepdims=True)) / temperature
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def r6l_softmax_abs_max(x, axis=-1, temperature=1.0):
    z = x / temperature
    e = np.exp(z - np.abs(z).max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


CORPUS += [
    ("wordpiece", "learner r6: start > 1", _r6l_wp(first=1), "position 1"),
    ("wordpiece", "learner r6: pieces capped at 5 letters", _r6l_wp(cap=5), "longer than 5 letters"),
    ("wordpiece", "learner r6: a single # mark", r6l_wp_single_hash, "single `#`"),
    ("embed", "learner r6: E[:, ids].T", r6l_embed_columns, "E[:, ids] picks columns"),
    ("dot", "learner r6: a loop over a[i]", r6l_dot_loop_1d, "only on inputs with 1 axis"),
    ("dot", "learner r6: a comprehension over rows", r6l_dot_rows_comprehension, "only on inputs with 2 axes"),
    ("dot", "learner r6: np.tensordot(a, b, axes=1)", r6l_dot_tensordot, "np.tensordot(a, b, axes=1) is a matrix product"),
    ("dot", "learner r6: matmul(a, b.T).diagonal()", r6l_dot_diagonal, "the diagonal of a matrix product"),
    ("cosine_similarity", "learner r6: dot / |a| * |b|", r6l_cos_precedence, "operator precedence"),
    ("cosine_similarity", "learner r6: dot / sqrt(a.a) * sqrt(b.b)", r6l_cos_precedence_sqrt, "operator precedence"),
    ("cosine_similarity", "learner r6: the norm of a * b", r6l_cos_norm_of_product, "elementwise product"),
    ("score_spread", "learner r6: sqrt(64) typed in", r6l_spread_scale_typed_in, "sqrt(64)"),
    ("score_spread", "learner r6: parameters (n, d, seed)", r6l_spread_n_first, "stub's order"),
    ("self_attention", "learner r6: w @ w @ x", r6l_attention_twice, "applied the weights twice"),
    ("self_attention", "learner r6: sum over the queries", r6l_attention_sum_over_queries, "sums over the queries"),
    ("self_attention", "learner r6: x centred first", r6l_attention_centred, "subtracted the mean token"),
    ("embed", "learner r6: np.dot(E.T, oh.T).T on a batch", r6l_embed_dot_transposed, "reverses every axis"),
    ("embed", "learner r6: vocabulary size 10 typed in", r6l_embed_vocab_typed_in, "a number typed in"),
    ("embed", "learner r6: oh.T @ E", r6l_embed_one_hot_transposed, "a one-hot transposed"),
    ("softmax", "learner r6: np.nan_to_num", r6l_softmax_nan_to_num, "nan_to_num hides the overflow"),
    ("softmax", "learner r6: temperature twice", r6l_softmax_temperature_twice, "temperature twice"),
    ("softmax", "learner r6: shift by max |x|", r6l_softmax_abs_max, "largest absolute value"),
    ("cosine_flip", "learner r6: pi to 5 decimals", 3.14159, "in radians"),
    ("cosine_flip", "learner r6: -0.5", -0.5, "120° angle"),
]  # fmt: skip


# ------------------------------------------------------------------ learner, round 7


def r7l_wp_step_by_marked_piece(word, vocab):
    ids, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                ids.append(vocab[piece])
                start += len(piece)  # len("##ing") == 5, not 3
                break
        else:
            return [vocab["<unk>"]]
    return ids


def r7l_embed_identity_times_picked_rows(ids, E):
    onehot = np.zeros((len(ids), len(ids)))
    onehot[np.arange(len(ids)), np.arange(len(ids))] = 1
    return onehot @ E[ids]


def r7l_embed_one_hot_per_token_wrapped(ids, E):
    T = ids.size
    onehot = np.zeros((T, T))
    onehot[np.arange(T), ids.ravel() % T] = 1
    return (onehot @ E[:T]).reshape(*ids.shape, -1)


def r7l_dot_squared_products(a, b):
    return ((a * b) ** 2).sum(axis=-1)


def r7l_spread_scaled_scores_not_std(d, n, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, d))
    k = rng.standard_normal((n, d))
    s = (q * k).sum(-1)
    return s.std(), s / np.sqrt(d)


def r7l_attention_weights_divided(x):
    w = good_softmax(x @ x.T, axis=-1) / np.sqrt(x.shape[-1])
    return w @ x, w


# (exercise, what, answer, words the diagnosis must contain, words it must not contain)
ROUND7 = [
    ("wordpiece", "learner r7: moved on by len(piece), `##` counted", r7l_wp_step_by_marked_piece, "counts the two `#`", ("Hint",)),
    ("embed", "learner r7: identity (T, T) @ E[ids]", r7l_embed_identity_times_picked_rows, "rows of `E[ids]`, not of E", ("3 rows of E", "(3 here)", "transposed")),
    ("embed", "learner r7: one-hot (T, T), ids % T", r7l_embed_one_hot_per_token_wrapped, "wrong for the larger ids (7, 11)", ("Hint",)),
    ("dot", "learner r7: squared products", r7l_dot_squared_products, "never negative", ("check your result's shape",)),
    ("cosine_flip", "learner r7: -pi", -np.pi, "in radians", ()),
    ("cosine_flip", "learner r7: -2, outside [-1, 1]", -2.0, "between -1 and 1", ()),
    ("shifted_softmax", "learner r7: 103, the largest score", 103, "largest score", ()),
    ("shifted_softmax", "learner r7: e^3, the numerator", np.exp(3), "numerator", ()),
    ("shifted_softmax", "learner r7: 2.5, more than 1", 2.5, "not a weight", ()),
    ("score_spread", "learner r7: the scaled scores, not their std", r7l_spread_scaled_scores_not_std, "the scaled scores themselves", ("same scores",)),
    ("self_attention", "learner r7: weights divided by sqrt(D)", r7l_attention_weights_divided, "sums to 1/sqrt(D)", ()),
]  # fmt: skip
CORPUS += [entry[:4] for entry in ROUND7]


@pytest.mark.parametrize(
    ("exercise", "what", "answer", "words", "absent"), ROUND7, ids=[e[1] for e in ROUND7]
)
def test_round7_diagnoses_name_the_learners_mistake(exercise, what, answer, words, absent):
    result = CHECKS[exercise](answer)
    assert not result.passed and result.diagnosed, result.text
    text = f"{result.message}\n{result.diagnosis}"
    assert words in text, text
    for wrong in absent:  # the misleading words of round 7, in the diagnosis
        assert wrong not in (result.diagnosis or ""), text


def test_a_one_hot_sized_by_the_largest_id_with_rows_cut_to_match_passes():
    """Round 7's accepted case: one-hot vectors of max(ids) + 1 entries times E[:max(ids) + 1]
    give E[ids] exactly, for every input; a right answer by its outputs, so it passes."""

    def embed(ids, E):
        n = ids.max() + 1
        return (ids[..., None] == np.arange(n)).astype(float) @ E[:n]

    assert check_embed(embed).passed


def test_the_corpus_is_large_and_covers_every_exercise():
    assert len(CORPUS) >= 60
    assert {entry[0] for entry in CORPUS} == set(CHECKS)
    labels = [(e, what) for e, what, _, _ in CORPUS]
    assert len(labels) == len(set(labels))


@pytest.mark.parametrize(
    ("exercise", "what", "answer", "words"), CORPUS, ids=[f"{e}: {w}" for e, w, _, _ in CORPUS]
)
def test_no_wrong_answer_passes_or_is_misled(exercise, what, answer, words):
    kind, result = classify(exercise, answer, words)
    assert kind != "accepted", f"{what}: a wrong answer passed"
    assert kind != "crash", f"{what}: the grader failed\n{result.text}"
    assert kind != "misleading", f"{what}: expected {words!r}\n{result.text}"


def test_at_least_nine_in_ten_get_a_specific_diagnosis():
    kinds = [classify(e, answer, words)[0] for e, _, answer, words in CORPUS]
    specific = kinds.count("specific")
    assert kinds.count("misleading") == 0
    assert kinds.count("accepted") == 0
    assert specific >= 0.9 * len(CORPUS), (specific, len(CORPUS))


FIX_CODE = ("np.sum(a * b, axis=-1)", "axis=-1)", "keepdims=True)", "np.linalg.norm(a, axis")


@pytest.mark.parametrize(
    ("exercise", "what", "answer", "words"), CORPUS, ids=[f"{e}: {w}" for e, w, _, _ in CORPUS]
)
def test_diagnoses_say_what_is_wrong_not_the_fix(exercise, what, answer, words):
    result = CHECKS[exercise](answer)
    for code in FIX_CODE:
        assert code not in (result.diagnosis or ""), result.text


CORRECT = [
    # (exercise, what the learner did, a right answer): each must pass.
    ("shifted_softmax", "round 4: 0.67, two significant digits", 0.67),
    (
        "score_spread",
        "learner r5: one default_rng, both draws in one call",
        lambda d, n, seed: (lambda s: (float(s.std()), float(s.std() / np.sqrt(d))))(
            np.prod(np.random.default_rng(seed).standard_normal((2, n, d)), axis=0).sum(-1)
        ),
    ),
    (
        "wordpiece",
        "learner: returned tuple(ids)",
        lambda word, vocab: tuple(_wordpiece_ok(word, vocab)),
    ),
]


def _wordpiece_ok(word, vocab):
    ids, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            if _piece(word, start, end) in vocab:
                ids.append(vocab[_piece(word, start, end)])
                start = end
                break
        else:
            return [vocab["<unk>"]]
    return ids


@pytest.mark.parametrize(("exercise", "what", "answer"), CORRECT, ids=[w for _, w, _ in CORRECT])
def test_right_answers_written_otherwise_pass(exercise, what, answer):
    result = CHECKS[exercise](answer)
    assert result.passed, result.text


def l_wp_endless(word, vocab):
    """The learner's loop that does not move on when nothing matches."""
    ids, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            if _piece(word, start, end) in vocab:
                ids.append(vocab[_piece(word, start, end)])
                start = end
                break
    return ids


def test_an_endless_loop_is_stopped_and_named(monkeypatch):
    """The learner's 2.1 attempt that never ends: stopped after the time limit (shortened
    here), reported once, with a diagnosis, and the other cases are not run."""
    import time

    from attnlab.grading import forensics

    monkeypatch.setattr(forensics, "TIME_LIMIT", 0.5)
    began = time.process_time()  # the limit counts processor time, as the check does
    result = check_wordpiece(l_wp_endless)
    assert time.process_time() - began < 10
    assert not result.passed and result.diagnosed
    assert "TooSlow" in result.message and "did not finish" in result.diagnosis
    assert "move on when nothing matches" in result.diagnosis
