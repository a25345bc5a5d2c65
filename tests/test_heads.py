"""Tests for attnlab.tasks.heads: hand-set heads, the first-and-previous task, the tiny model."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnlab.mechanism.attention import scaled_dot_product_attention
from attnlab.tasks.heads import (
    IGNORE,
    OneLayerMultiHead,
    decode_pair,
    first_and_previous_batch,
    first_and_previous_batches,
    handset_heads,
    head_roles,
    train_heads_model,
)


@pytest.mark.parametrize(("length", "subject"), [(6, 1), (7, 0), (5, 4)])
def test_handset_heads_each_follow_one_relation(length, subject) -> None:
    q, k = handset_heads(length, subject)
    assert q.shape == k.shape == (2, length, length + 1)
    _, weights = scaled_dot_product_attention(q, k, k)  # (2, T, T)
    assert np.all(weights[0].argmax(-1) == subject)
    expected_prev = np.maximum(np.arange(length) - 1, 0)
    expected_prev[0] = 0
    assert np.all(weights[1].argmax(-1) == expected_prev)
    assert weights.max(-1).min() > 0.99  # sharpness 8: e^8 against a few e^0


def test_one_wide_head_adds_the_two_relations_and_splits_its_weight() -> None:
    q, k = handset_heads(6, 1)
    wide_q, wide_k = np.concatenate(list(q), -1), np.concatenate(list(k), -1)  # (T, 2d)
    _, weights = scaled_dot_product_attention(wide_q, wide_k, wide_k)
    # query 4: the subject (1) and the previous token (3) score equally: half each
    np.testing.assert_allclose(weights[4, [1, 3]], [0.5, 0.5], atol=0.01)
    # query 2: the previous token is the subject: all the weight on it
    assert weights[2, 1] > 0.99


def test_handset_heads_reject_bad_positions() -> None:
    with pytest.raises(ValueError, match=r"subject must be a position in 0..5, got 6"):
        handset_heads(6, 6)
    with pytest.raises(ValueError, match="length must be an integer >= 2"):
        handset_heads(1, 0)


def test_batch_targets_code_first_and_previous() -> None:
    x, y = first_and_previous_batch(5, n_symbols=4, length=6, rng=0)
    assert x.shape == y.shape == (5, 6) and x.dtype == y.dtype == torch.int64
    assert torch.all(y[:, 0] == IGNORE)
    first, prev = decode_pair(y[:, 1:], 4)
    assert torch.equal(first, x[:, :1].expand(5, 5))
    assert torch.equal(prev, x[:, :-1])
    assert int(y[:, 1:].min()) >= 1 and int(y.max()) <= 16


def test_batches_are_reproducible_and_reject_bad_sizes() -> None:
    a = next(first_and_previous_batches(3, rng=7))
    b = next(first_and_previous_batches(3, rng=7))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    with pytest.raises(ValueError, match="length must be at least 2"):
        first_and_previous_batch(3, length=1)
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        first_and_previous_batch(0)


def test_model_shapes_and_stored_weights() -> None:
    torch.manual_seed(0)
    model = OneLayerMultiHead(n_symbols=5, length=6, d_model=8, n_heads=2)
    x, _ = first_and_previous_batch(3, n_symbols=5, length=6, rng=0)
    assert model(x).shape == (3, 6, 26)
    assert model.weights.shape == (3, 2, 6, 6)
    assert torch.all(model.weights.triu(diagonal=1) == 0)  # causal
    with pytest.raises(ValueError, match="sequence length 7 is longer than length=6"):
        model(torch.zeros(1, 7, dtype=torch.long))


def test_two_heads_learn_the_task_and_split_the_two_relations() -> None:
    threads = torch.get_num_threads()
    model, losses = train_heads_model(2, seed=3)
    assert torch.get_num_threads() == threads  # restored
    assert len(losses) == 300 and losses[-1] < 0.1 * losses[0]
    x, _ = first_and_previous_batch(500, rng=1)
    roles = head_roles(model, x)
    assert roles["accuracy"] > 0.99
    # one head on the previous token, the other on the first token
    by_prev = np.argsort(roles["previous"])
    assert roles["previous"][by_prev[1]] > 0.9 and roles["first"][by_prev[0]] > 0.9


def test_training_is_deterministic() -> None:
    a, la = train_heads_model(1, steps=30)
    b, lb = train_heads_model(1, steps=30)
    assert la == lb
    for pa, pb in zip(a.parameters(), b.parameters(), strict=True):
        torch.testing.assert_close(pa, pb, rtol=0, atol=0)
