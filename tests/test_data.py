"""Tests for attnlab.data: the toy tasks, their padding and their determinism."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from attnlab.data import (
    BOS_ID,
    EOS_ID,
    N_SPECIAL,
    PAD_ID,
    SEP_ID,
    Batch,
    Task,
    batches,
    make_batch,
    token_labels,
)


def _rows(batch: Batch) -> list[tuple[list[int], list[int], list[int]]]:
    """Each example without its padding: (src, y from tgt_in, y from tgt_out)."""
    out = []
    for src, tgt_in, tgt_out in zip(*batch, strict=True):
        s = [t for t in src.tolist() if t != PAD_ID]
        ti = [t for t in tgt_in.tolist() if t != PAD_ID]
        to = [t for t in tgt_out.tolist() if t != PAD_ID]
        assert ti[0] == BOS_ID and to[-1] == EOS_ID
        out.append((s, ti[1:], to[:-1]))
    return out


def test_special_ids_are_distinct_and_below_the_symbols() -> None:
    assert sorted({PAD_ID, BOS_ID, EOS_ID, SEP_ID}) == list(range(N_SPECIAL))
    task = Task("copy", n_symbols=7)
    assert task.vocab_size == N_SPECIAL + 7


@pytest.mark.parametrize("name", ["copy", "reverse"])
def test_copy_and_reverse_targets(name: str) -> None:
    task = Task(name, n_symbols=10, min_len=3, max_len=9)
    batch = make_batch(task, 64, rng=0)
    assert all(t.dtype == torch.int64 for t in batch)
    for src, y_in, y_out in _rows(batch):
        assert 3 <= len(src) <= 9
        assert all(N_SPECIAL <= t < N_SPECIAL + 10 for t in src)
        expected = src if name == "copy" else src[::-1]
        assert y_in == expected and y_out == expected


def test_padding_layout() -> None:
    task = Task("reverse", min_len=2, max_len=8)
    src, tgt_in, tgt_out = make_batch(task, 50, rng=1)
    lengths = (src != PAD_ID).sum(1)
    assert src.shape[1] == int(lengths.max())
    assert tgt_in.shape == tgt_out.shape == (50, src.shape[1] + 1)
    for b in range(50):
        n = int(lengths[b])
        assert torch.all(src[b, n:] == PAD_ID) and torch.all(src[b, :n] != PAD_ID)
        assert tgt_in[b, 0] == BOS_ID and tgt_out[b, n] == EOS_ID
        assert torch.all(tgt_in[b, n + 1 :] == PAD_ID) and torch.all(tgt_out[b, n + 1 :] == PAD_ID)
        # Teacher forcing: the decoder reads y shifted right by one.
        torch.testing.assert_close(tgt_in[b, 1 : n + 1], tgt_out[b, :n], rtol=0, atol=0)
    assert len(set(lengths.tolist())) > 1, "variable lengths expected"


@pytest.mark.parametrize("n_pairs", [1, 3])
def test_recall_answers_the_value_of_the_queried_key(n_pairs: int) -> None:
    task = Task("recall", n_symbols=8, min_len=2 * n_pairs + 2, max_len=20, n_pairs=n_pairs)
    assert task.max_tgt_len == 1 and task.max_seq_len == 20
    for src, y_in, y_out in _rows(make_batch(task, 100, rng=2)):
        keys, values = src[0 : 2 * n_pairs : 2], src[1 : 2 * n_pairs : 2]
        assert len(set(keys)) == n_pairs, "keys must be distinct"
        assert src[-2] == SEP_ID and src[-1] in keys
        noise = src[2 * n_pairs : -2]
        assert not set(noise) & set(keys), "noise must not look like a key"
        assert y_in == y_out == [values[keys.index(src[-1])]]


def test_same_seed_same_batch_and_generators_are_consumed() -> None:
    task = Task("copy", min_len=4, max_len=12)
    a, b = make_batch(task, 8, rng=5), make_batch(task, 8, rng=5)
    for x, y in zip(a, b, strict=True):
        torch.testing.assert_close(x, y, rtol=0, atol=0)
    gen = np.random.default_rng(5)
    first, second = make_batch(task, 8, rng=gen), make_batch(task, 8, rng=gen)
    torch.testing.assert_close(first.src, a.src, rtol=0, atol=0)
    assert not torch.equal(first.src[:, :4], second.src[:, :4])


def test_batches_stream_is_reproducible_and_fresh() -> None:
    task = Task("reverse")
    run1 = [b.src for b in itertools.islice(batches(task, 4, rng=3), 3)]
    run2 = [b.src for b in itertools.islice(batches(task, 4, rng=3), 3)]
    for x, y in zip(run1, run2, strict=True):
        torch.testing.assert_close(x, y, rtol=0, atol=0)
    assert not torch.equal(run1[0], run1[1])


def test_device_argument() -> None:
    batch = Task("copy").sample(2, rng=0, device=torch.device("cpu"))
    assert all(t.device.type == "cpu" for t in batch)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"name": "sort"}, "unknown task"),
        ({"name": "copy", "min_len": 5, "max_len": 4}, "min_len=5"),
        ({"name": "copy", "n_symbols": 0}, "n_symbols"),
        ({"name": "recall", "min_len": 3, "max_len": 9}, "length >= 4"),
        ({"name": "recall", "n_symbols": 2, "n_pairs": 2, "min_len": 8}, "n_pairs < n_symbols"),
    ],
)
def test_task_rejects_impossible_settings(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        Task(**kwargs)


def test_make_batch_argument_errors() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        make_batch(Task("copy"), 0)
    with pytest.raises(TypeError, match="Task"):
        make_batch("copy", 2)
    with pytest.raises(TypeError, match="rng"):
        make_batch(Task("copy"), 2, rng=1.5)


def test_token_labels() -> None:
    ids = torch.tensor([PAD_ID, BOS_ID, EOS_ID, SEP_ID, N_SPECIAL, N_SPECIAL + 1, N_SPECIAL + 26])
    assert token_labels(ids) == ["<pad>", "<bos>", "<eos>", "?", "a", "b", "s26"]
    assert token_labels([N_SPECIAL + 2]) == ["c"]
    with pytest.raises(ValueError, match="negative"):
        token_labels([-1])
