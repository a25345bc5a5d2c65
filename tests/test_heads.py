"""Tests for attnlab.tasks.heads: hand-set heads, the first-and-previous task, the tiny model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from attnlab.mechanism.attention import scaled_dot_product_attention
from attnlab.mechanism.masking import causal_mask
from attnlab.mechanism.multihead import merge_heads, split_heads
from attnlab.tasks import heads
from attnlab.tasks.heads import (
    HEAD_SEEDS,
    IGNORE,
    OneLayerMultiHead,
    accuracy_without_heads,
    decode_pair,
    first_and_previous_batch,
    first_and_previous_batches,
    handset_heads,
    head_roles,
    roles_over_seeds,
    stored_head_roles,
    train_heads_model,
    write_head_roles,
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


# --- removing heads --------------------------------------------------------------------------


def test_accuracy_without_heads_removes_only_what_it_is_told() -> None:
    model, _ = train_heads_model(2, seed=3)
    x, _ = first_and_previous_batch(300, rng=1)
    before = {name: p.clone() for name, p in model.named_parameters()}
    assert accuracy_without_heads(model, x, []) == head_roles(model, x)["accuracy"]
    # head 1 attends to the first token, head 0 to the previous one: each is needed
    assert accuracy_without_heads(model, x, [1]) < 0.5
    assert accuracy_without_heads(model, x, [0]) < 0.5
    assert accuracy_without_heads(model, x, [0, 1]) < accuracy_without_heads(model, x, [0])
    for name, p in model.named_parameters():  # the model itself is untouched
        assert torch.equal(p, before[name]), name
    with pytest.raises(ValueError, match="head"):
        accuracy_without_heads(model, x, [2])


def test_accuracy_without_heads_is_the_sum_over_heads_without_one() -> None:
    # zeroing head h's block of W^O is the same as zeroing head h's output before W^O
    torch.manual_seed(0)
    model = OneLayerMultiHead(n_symbols=4, length=5, d_model=8, n_heads=2).eval()
    x, _ = first_and_previous_batch(50, n_symbols=4, length=5, rng=0)
    with torch.no_grad():
        h = model.embed(x) + model.position[:5]
        _, weights = model.attn(h, mask=causal_mask(5, like=x))
        per_head = weights @ split_heads(model.attn.W_v(h), 2)  # (B, H, T, d)
        per_head[:, 0] = 0
        logits = model.readout(h + model.attn.W_o(merge_heads(per_head)))
    targets = 1 + x[:, :1] * 4 + torch.roll(x, 1, dims=1)
    expected = (logits.argmax(-1)[:, 1:] == targets[:, 1:]).float().mean().item()
    assert accuracy_without_heads(model, x, [0]) == expected


# --- the spread over seeds (chapter 4 prints the stored table) -------------------------------

ROLE_TOLERANCE = 0.02  # another CPU rounds the training differently: weights move by ~1e-6 here


def _assert_same_roles(fresh: dict, stored: dict, where: str) -> None:
    for key in ("previous", "first"):
        np.testing.assert_allclose(fresh[key], stored[key], atol=ROLE_TOLERANCE, err_msg=where)
    assert abs(fresh["accuracy"] - stored["accuracy"]) <= ROLE_TOLERANCE, where


def test_stored_head_roles_cover_the_sweep() -> None:
    roles = stored_head_roles()
    assert list(roles) == HEAD_SEEDS["n_heads"] == [1, 2, 4]
    for H, by_seed in roles.items():
        assert list(by_seed) == HEAD_SEEDS["seeds"]
        for r in by_seed.values():
            assert r["previous"].shape == r["first"].shape == (H,)
            assert 0 <= r["accuracy"] <= 1


def test_stored_head_roles_are_what_training_gives_on_a_subset() -> None:
    # two seeds whose heads mix the relations (the chapter trains seed 3, a clean split)
    fresh = roles_over_seeds([2], [0, 4])
    stored = stored_head_roles()
    for seed, r in fresh[2].items():
        _assert_same_roles(r, stored[2][seed], f"H = 2, seed {seed}")


def test_the_roles_check_tells_two_seeds_apart() -> None:
    # the tolerance is far below the differences between seeds: a training that drew other
    # batches or other initial weights does not pass as the stored one
    stored = stored_head_roles()[2]
    for a, b in [(0, 1), (2, 6), (3, 5)]:
        with pytest.raises(AssertionError):
            _assert_same_roles(stored[a], stored[b], f"seed {a} as {b}")


@pytest.mark.slow
def test_stored_head_roles_are_what_training_gives(tmp_path) -> None:
    written = write_head_roles(tmp_path / "roles.txt")  # trains all 30 models
    stored = stored_head_roles()
    for H, by_seed in written.items():
        for seed, r in by_seed.items():
            _assert_same_roles(r, stored[H][seed], f"H = {H}, seed {seed}")
    read_back = stored_head_roles(tmp_path / "roles.txt")
    for H, by_seed in written.items():
        for seed, r in by_seed.items():
            _assert_same_roles(r, read_back[H][seed], "the table round-trips")


def test_stored_head_roles_refuse_other_settings_and_bad_tables(tmp_path, monkeypatch) -> None:
    text = (Path(heads.__file__).parents[1] / "data_files" / "head_roles.txt").read_text()
    monkeypatch.setitem(HEAD_SEEDS, "d_model", 32)
    with pytest.raises(ValueError, match="regenerate"):
        stored_head_roles()
    monkeypatch.undo()
    bad = tmp_path / "bad.txt"
    bad.write_text(text.replace("settings ", "setting "))
    with pytest.raises(ValueError, match="settings line"):
        stored_head_roles(bad)
    bad.write_text(text.replace("\n2 5 ", "\n2 5 0.5 "))
    with pytest.raises(ValueError, match="malformed row"):
        stored_head_roles(bad)
    bad.write_text("\n".join(line for line in text.splitlines() if not line.startswith("4 9 ")))
    with pytest.raises(ValueError, match="every seed"):
        stored_head_roles(bad)
