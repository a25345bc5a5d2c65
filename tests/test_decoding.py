"""Decoding: the next-token distributions, sampling, beam search against exhaustive search,
sequence log-probabilities and the repetition measure.

Tolerances: float64 within 1e-12; float32 within 1e-6.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from torch import nn

import attnlab
from attnlab.mechanism import sampling as decoding
from attnlab.mechanism.sampling import (
    beam_search,
    bits_per_token,
    next_token_probs,
    perplexity,
    repetition,
    sample,
    sample_from_logits,
    sample_tokens,
    sequence_log_prob,
    temperature_probs,
    text_loss,
    top_k_probs,
    top_p_probs,
)

F64 = {"rtol": 1e-12, "atol": 1e-12}


class PrefixModel(nn.Module):
    """A tiny language model whose logits depend on the whole prefix (a running mean)."""

    def __init__(self, vocab: int = 3, width: int = 4, seed: int = 0) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.emb = nn.Parameter(torch.randn(vocab, width, generator=g, dtype=torch.float64) * 2)
        self.out = nn.Parameter(torch.randn(width, vocab, generator=g, dtype=torch.float64) * 2)
        self.calls = 0

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        h = self.emb[ids]  # (B, T, W)
        steps = torch.arange(1, ids.shape[1] + 1, device=ids.device, dtype=h.dtype)
        return (h.cumsum(dim=1) / steps[:, None]) @ self.out  # (B, T, W) @ (W, V) -> (B, T, V)


class BigramModel(nn.Module):
    """Logits from the last token only: a table of next-token probabilities."""

    def __init__(self, table: list[list[float]]) -> None:
        super().__init__()
        self.log_table = nn.Parameter(torch.tensor(table, dtype=torch.float64).log())

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.log_table[ids]  # (B, T) -> (B, T, V)


def _exhaustive(model, prompt: list[int], n: int, eos: int | None = None):
    """Every continuation of length ``n``, with its log-probability, best first (stable)."""
    with torch.no_grad():
        return _enumerate(model, prompt, n, eos)


def _enumerate(model, prompt: list[int], n: int, eos: int | None):
    V = model(torch.tensor([prompt])).shape[-1]
    rows, scores = [], []
    for tail in itertools.product(range(V), repeat=n):
        if eos is not None and eos in tail:
            first = tail.index(eos)
            if any(t != eos for t in tail[first:]):
                continue  # after eos only eos
            scored = first + 1
        else:
            scored = n
        ids = torch.tensor([prompt + list(tail)])
        total = 0.0
        for t in range(len(prompt), len(prompt) + scored):
            total += float(torch.log_softmax(model(ids[:, :t])[0, -1].double(), -1)[ids[0, t]])
        rows.append(prompt + list(tail))
        scores.append(total)
    order = sorted(range(len(rows)), key=lambda i: -scores[i])  # sorted() is stable
    return torch.tensor([rows[i] for i in order]), torch.tensor(
        [scores[i] for i in order], dtype=torch.float64
    )


# -- distributions ---------------------------------------------------------------------------------

Z = torch.tensor([2.0, 1.0, 0.5, 0.5, -1.0], dtype=torch.float64)


@pytest.mark.parametrize("tau", [0.25, 1.0, 3.0])
def test_temperature_probs_is_the_softmax_of_scaled_logits(tau: float) -> None:
    logits = torch.randn(3, 7, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    torch.testing.assert_close(
        temperature_probs(logits, tau), torch.softmax(logits / tau, -1), **F64
    )
    np_out = temperature_probs(logits.numpy(), tau)
    assert isinstance(np_out, np.ndarray)
    np.testing.assert_allclose(np_out, torch.softmax(logits / tau, -1).numpy(), **F64)


def test_numpy_logits_may_be_read_only() -> None:
    logits = np.broadcast_to(np.array([1.0, 2.0, 3.0]), (4, 3))  # a read-only view
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        probs = top_p_probs(logits, 0.5)
        ids = sample(probs, generator=torch.Generator().manual_seed(0))
    assert probs.shape == (4, 3) and ids.tolist() == [2, 2, 2, 2]


def test_temperature_zero_is_greedy_and_low_temperature_tends_to_it() -> None:
    assert temperature_probs(Z, 0).tolist() == [1.0, 0.0, 0.0, 0.0, 0.0]
    tie = torch.tensor([1.0, 3.0, 3.0])
    assert temperature_probs(tie, 0).tolist() == [0.0, 1.0, 0.0]  # the first maximum
    assert float(temperature_probs(Z, 0.01)[0]) > 1 - 1e-12
    flat = temperature_probs(Z, 1e6)
    torch.testing.assert_close(flat, torch.full((5,), 0.2, dtype=torch.float64), rtol=0, atol=1e-5)


def test_top_k_keeps_the_k_largest_and_renormalises() -> None:
    probs = top_k_probs(Z, 2)
    expected = torch.softmax(torch.tensor([2.0, 1.0], dtype=torch.float64), -1)
    torch.testing.assert_close(probs[:2], expected, **F64)
    assert probs[2:].tolist() == [0.0, 0.0, 0.0]
    assert top_k_probs(Z, 1).tolist() == [1.0, 0.0, 0.0, 0.0, 0.0]
    torch.testing.assert_close(top_k_probs(Z, 5), torch.softmax(Z, -1), **F64)
    torch.testing.assert_close(
        top_k_probs(Z, 2, temperature=0.5)[:2],
        torch.softmax(torch.tensor([4.0, 2.0]).double(), -1),
        **F64,
    )


def test_top_k_keeps_tokens_tied_with_the_kth() -> None:
    probs = top_k_probs(Z, 3)  # the 3rd largest logit, 0.5, is shared by two tokens
    assert (probs > 0).tolist() == [True, True, True, True, False]
    torch.testing.assert_close(probs[:4], torch.softmax(Z[:4], -1), **F64)


def test_top_p_keeps_the_fewest_tokens_reaching_p() -> None:
    probs = torch.tensor([0.125, 0.5, 0.25, 0.125], dtype=torch.float64)
    logits = probs.log()
    eps = 1e-9
    kept = {
        p: (top_p_probs(logits, p) > 0).tolist() for p in (0.3, 0.5 - eps, 0.5 + eps, 0.75 + eps)
    }
    assert kept[0.3] == [False, True, False, False]  # 0.5 alone already reaches 0.3
    assert kept[0.5 - eps] == [False, True, False, False]
    assert kept[0.5 + eps] == [False, True, True, False]
    assert kept[0.75 + eps] == [True, True, True, False]  # a tie: the earlier id first
    torch.testing.assert_close(
        top_p_probs(logits, 0.7), torch.tensor([0.0, 2 / 3, 1 / 3, 0.0], dtype=torch.float64), **F64
    )
    torch.testing.assert_close(top_p_probs(logits, 1.0), probs, **F64)


def test_top_p_applies_the_temperature_first() -> None:
    logits = torch.tensor([1.0, 0.0], dtype=torch.float64)  # p = 0.731, 0.269
    assert (top_p_probs(logits, 0.7) > 0).tolist() == [True, False]
    assert (top_p_probs(logits, 0.7, temperature=5.0) > 0).tolist() == [True, True]  # 0.55, 0.45


def test_the_distributions_follow_a_permutation_of_the_logits() -> None:
    logits = torch.randn(4, 9, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    perm = torch.randperm(9, generator=torch.Generator().manual_seed(2))
    for f in (
        lambda z: top_k_probs(z, 4),
        lambda z: top_p_probs(z, 0.6),
        lambda z: next_token_probs(z, temperature=0.7, top_k=6, top_p=0.8),
    ):
        torch.testing.assert_close(f(logits[:, perm]), f(logits)[:, perm], **F64)
        torch.testing.assert_close(f(logits).sum(-1), torch.ones(4, dtype=torch.float64), **F64)


def test_next_token_probs_combines_top_k_then_top_p() -> None:
    probs = next_token_probs(Z, top_k=4, top_p=0.7)  # top 4: .551 .203 .123 .123 -> nucleus
    assert (probs > 0).tolist() == [True, True, False, False, False]
    assert next_token_probs(Z, temperature=0, top_k=3, top_p=0.1).tolist() == [1, 0, 0, 0, 0]
    ints = next_token_probs(torch.tensor([0, 0]))  # integer logits are promoted
    assert ints.dtype == torch.get_default_dtype() and ints.tolist() == [0.5, 0.5]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"temperature": -1.0}, ValueError, "temperature must be 0 .greedy. or a positive number"),
        ({"temperature": float("nan")}, ValueError, "temperature must be"),
        ({"temperature": "1"}, ValueError, "temperature must be"),
        ({"top_k": 0}, ValueError, r"top_k must be an integer in 1\.\.V=5, got 0"),
        ({"top_k": 6}, ValueError, r"top_k must be an integer in 1\.\.V=5, got 6"),
        ({"top_k": 2.0}, ValueError, "top_k must be an integer"),
        ({"top_p": 0.0}, ValueError, r"top_p must be a mass in \(0, 1\], got 0.0"),
        ({"top_p": 1.5}, ValueError, "top_p must be a mass"),
    ],
)
def test_next_token_probs_refuses_bad_parameters(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        next_token_probs(Z, **kwargs)


def test_the_distributions_refuse_bad_logits() -> None:
    with pytest.raises(ValueError, match=r"logits must be \(\.\.\., V\) with V >= 1"):
        temperature_probs(torch.tensor(1.0))
    with pytest.raises(ValueError, match=r"logits must be \(\.\.\., V\)"):
        temperature_probs(torch.zeros(3, 0))
    with pytest.raises(TypeError, match="logits must be a NumPy array or a torch tensor"):
        temperature_probs("logits")
    with pytest.raises(ValueError, match="temperature must be a positive number, got 0"):
        top_k_probs(Z, 2, temperature=0)  # top-k needs a real temperature: 0 is greedy


# -- sampling ----------------------------------------------------------------------------------------


def test_sample_draws_with_the_given_probabilities() -> None:
    probs = torch.tensor([0.1, 0.2, 0.0, 0.3, 0.4], dtype=torch.float64)
    draws = sample(probs.expand(40_000, 5), generator=torch.Generator().manual_seed(0))
    assert draws.shape == (40_000,) and draws.dtype == torch.int64
    freq = torch.bincount(draws, minlength=5).double() / 40_000
    assert int(freq[2] * 40_000) == 0  # a token of probability 0 is never drawn
    torch.testing.assert_close(freq, probs, rtol=0, atol=0.01)  # 4 standard errors: 0.01


def test_sample_is_reproducible_and_keeps_the_leading_axes() -> None:
    probs = torch.softmax(torch.randn(2, 3, 6, generator=torch.Generator().manual_seed(3)), -1)
    first = sample(probs, generator=torch.Generator().manual_seed(7))
    again = sample(probs, generator=torch.Generator().manual_seed(7))
    assert first.shape == (2, 3) and torch.equal(first, again)
    as_numpy = sample(probs.numpy(), generator=torch.Generator().manual_seed(7))
    assert isinstance(as_numpy, np.ndarray) and as_numpy.tolist() == first.tolist()


def test_sample_accepts_unnormalised_weights_and_one_hot_rows() -> None:
    weights = torch.tensor([[0.0, 0.0, 5.0], [3.0, 0.0, 0.0], [0.0, 2.0, 2.0]])
    draws = sample(weights.repeat(50, 1), generator=torch.Generator().manual_seed(0))
    assert set(draws[0::3].tolist()) == {2} and set(draws[1::3].tolist()) == {0}
    assert set(draws[2::3].tolist()) == {1, 2}


@pytest.mark.parametrize(
    ("probs", "match"),
    [
        (torch.tensor([0.5, -0.1, 0.6]), "non-negative"),
        (torch.tensor([0.5, float("nan")]), "non-negative"),
        (torch.tensor([[0.5, 0.5], [0.0, 0.0]]), "row of zeros"),
    ],
)
def test_sample_refuses_what_is_not_a_distribution(probs: torch.Tensor, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        sample(probs)


def test_sample_from_logits_greedy_and_top_1_ignore_the_generator() -> None:
    logits = torch.randn(20, 8, generator=torch.Generator().manual_seed(4))
    best = logits.argmax(-1)
    assert torch.equal(sample_from_logits(logits, temperature=0), best)
    for seed in range(3):
        g = torch.Generator().manual_seed(seed)
        assert torch.equal(sample_from_logits(logits, top_k=1, temperature=2.0, generator=g), best)


# -- running a model ---------------------------------------------------------------------------------


def test_greedy_sampling_is_chapter_7s_generate() -> None:
    torch.manual_seed(0)
    config = attnlab.TransformerConfig(
        d_model=16, n_heads=2, d_ff=32, n_layers=2, dropout=0.0, max_len=6
    )
    model = attnlab.DecoderOnlyLM(11, config)
    prompt = torch.tensor([[1, 2, 3], [4, 5, 6]])
    ours = sample_tokens(model, prompt, max_new_tokens=8, temperature=0, context=6)
    assert torch.equal(ours, attnlab.generate(model, prompt, max_new_tokens=8))


def test_sample_tokens_draws_only_from_the_top_k() -> None:
    model = PrefixModel(vocab=6, seed=1)
    out = sample_tokens(
        model,
        torch.tensor([0, 3]),
        max_new_tokens=12,
        top_k=2,
        generator=torch.Generator().manual_seed(0),
    )
    assert out.shape == (1, 14) and out[0, :2].tolist() == [0, 3]
    for t in range(2, 14):
        top2 = model(out[:, :t])[0, -1].topk(2).indices.tolist()
        assert int(out[0, t]) in top2


def test_sample_tokens_is_seeded_and_restores_the_mode() -> None:
    model = PrefixModel(vocab=5, seed=2).train()
    runs = [
        sample_tokens(
            model,
            torch.tensor([[1]]),
            max_new_tokens=20,
            generator=torch.Generator().manual_seed(9),
        )
        for _ in range(2)
    ]
    assert torch.equal(*runs) and model.training
    other = sample_tokens(
        model, torch.tensor([[1]]), max_new_tokens=20, generator=torch.Generator().manual_seed(10)
    )
    assert not torch.equal(runs[0], other)


def test_sample_tokens_reads_only_the_last_context_tokens() -> None:
    seen = []

    def model(ids: torch.Tensor) -> torch.Tensor:
        seen.append(ids.shape[1])
        return torch.zeros(ids.shape[0], ids.shape[1], 4)

    sample_tokens(model, torch.tensor([0, 1, 2]), max_new_tokens=4, temperature=0, context=4)
    assert seen == [3, 4, 4, 4]


def test_beam_search_equals_exhaustive_search_when_wide_enough() -> None:
    for seed, V, n in ((0, 3, 3), (1, 4, 2), (2, 2, 4)):
        model = PrefixModel(vocab=V, seed=seed)
        width = V ** (n - 1)  # every prefix is kept until the last step
        ids, scores = beam_search(model, torch.tensor([0, 1]), beam_width=width, max_new_tokens=n)
        best_ids, best_scores = _exhaustive(model, [0, 1], n)
        assert ids.shape == (width, 2 + n)
        torch.testing.assert_close(scores, best_scores[:width], **F64)
        assert torch.equal(ids, best_ids[:width])


def test_beam_search_scores_are_sequence_log_probabilities() -> None:
    model = PrefixModel(vocab=5, seed=3)
    ids, scores = beam_search(model, torch.tensor([2]), beam_width=3, max_new_tokens=4)
    torch.testing.assert_close(sequence_log_prob(model, ids, start=1), scores, **F64)
    assert bool((scores[:-1] >= scores[1:]).all())  # best first


def test_width_one_is_greedy_and_width_two_beats_it_on_a_garden_path() -> None:
    """From token 0, greedy takes 1 (0.6) and then finds at most 0.34; 2 (0.4) leads to 0.9."""
    model = BigramModel([[0.0001, 0.6, 0.3999], [0.34, 0.33, 0.33], [0.05, 0.05, 0.9]])
    greedy = sample_tokens(model, torch.tensor([0]), max_new_tokens=2, temperature=0)
    ids1, score1 = beam_search(model, torch.tensor([0]), beam_width=1, max_new_tokens=2)
    assert torch.equal(ids1, greedy) and ids1.tolist() == [[0, 1, 0]]
    assert float(score1[0]) == pytest.approx(math.log(0.6 * 0.34), abs=1e-12)
    ids2, score2 = beam_search(model, torch.tensor([0]), beam_width=2, max_new_tokens=2)
    assert ids2[0].tolist() == [0, 2, 2]
    assert float(score2[0]) == pytest.approx(math.log(0.3999 * 0.9), abs=1e-12)


def test_beam_search_with_eos_equals_exhaustive_search() -> None:
    model = PrefixModel(vocab=3, seed=4)
    ids, scores = beam_search(model, torch.tensor([1]), beam_width=9, max_new_tokens=3, eos_id=0)
    best_ids, best_scores = _exhaustive(model, [1], 3, eos=0)
    assert len(best_ids) == 15  # 2**3 without eos + 2**2 + 2 + 1 ending in it
    torch.testing.assert_close(scores, best_scores[:9], **F64)
    assert torch.equal(ids, best_ids[:9])


def test_beam_search_keeps_fewer_beams_when_fewer_exist() -> None:
    model = PrefixModel(vocab=3, seed=5)
    ids, scores = beam_search(model, torch.tensor([[0]]), beam_width=50, max_new_tokens=2)
    assert ids.shape == (9, 3) and scores.shape == (9,)


def test_sequence_log_prob_is_the_sum_of_next_token_log_probs() -> None:
    model = PrefixModel(vocab=4, seed=6)
    ids = torch.tensor([[0, 1, 2, 3, 0, 1], [3, 3, 2, 1, 0, 0]])
    for start in (1, 3, 5):
        expected = torch.zeros(2, dtype=torch.float64)
        for t in range(start, 6):
            log_p = torch.log_softmax(model(ids[:, :t])[:, -1], -1)  # (B, V)
            expected += log_p.gather(-1, ids[:, t : t + 1])[:, 0]
        torch.testing.assert_close(sequence_log_prob(model, ids, start=start), expected, **F64)


def test_sequence_log_prob_is_minus_the_cross_entropy_times_length() -> None:
    model = PrefixModel(vocab=4, seed=7)
    ids = torch.tensor([[0, 1, 2, 3, 0, 1, 1, 2]])
    loss = F.cross_entropy(model(ids[:, :-1])[0], ids[0, 1:]).detach()
    assert float(sequence_log_prob(model, ids)[0]) == pytest.approx(-7 * float(loss), abs=1e-12)


def test_sequence_log_prob_with_a_sliding_window() -> None:
    model = PrefixModel(vocab=4, seed=8)
    ids = torch.tensor([0, 1, 2, 3, 0, 1, 2])
    expected = 0.0
    for t in range(2, 7):
        window = ids[None, max(0, t - 3) : t]
        expected += float(torch.log_softmax(model(window)[0, -1], -1)[ids[t]].detach())
    got = sequence_log_prob(model, ids, start=2, context=3)
    assert got.shape == (1,) and float(got[0]) == pytest.approx(expected, abs=1e-12)
    torch.testing.assert_close(
        sequence_log_prob(model, ids, context=6), sequence_log_prob(model, ids), **F64
    )


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (
            lambda m: sample_tokens("model", torch.tensor([0]), max_new_tokens=2),
            TypeError,
            "model must map",
        ),
        (
            lambda m: sample_tokens(m, torch.tensor([0.0]), max_new_tokens=2),
            TypeError,
            "integer token ids",
        ),
        (lambda m: sample_tokens(m, [0, 1], max_new_tokens=2), TypeError, "tensor of token ids"),
        (
            lambda m: sample_tokens(m, torch.zeros(1, 1, 2, dtype=torch.long), max_new_tokens=2),
            ValueError,
            r"\(B, T\)",
        ),
        (
            lambda m: sample_tokens(m, torch.zeros(1, 0, dtype=torch.long), max_new_tokens=2),
            ValueError,
            "T >= 1",
        ),
        (
            lambda m: sample_tokens(m, torch.tensor([0]), max_new_tokens=0),
            ValueError,
            "max_new_tokens must be",
        ),
        (
            lambda m: sample_tokens(m, torch.tensor([0]), max_new_tokens=2, top_p=2),
            ValueError,
            "top_p must be",
        ),
        (
            lambda m: sample_tokens(m, torch.tensor([0]), max_new_tokens=2, top_k=0),
            ValueError,
            "top_k must be",
        ),
        (
            lambda m: sample_tokens(m, torch.tensor([0]), max_new_tokens=2, context=0),
            ValueError,
            "context must be",
        ),
        (
            lambda m: sample_tokens(lambda ids: ids.float(), torch.tensor([0]), max_new_tokens=2),
            ValueError,
            r"must return logits \(B, T, V\)",
        ),
        (
            lambda m: beam_search(m, torch.tensor([[0], [1]]), beam_width=2, max_new_tokens=2),
            ValueError,
            "one prompt",
        ),
        (
            lambda m: beam_search(m, torch.tensor([0]), beam_width=0, max_new_tokens=2),
            ValueError,
            "beam_width must be",
        ),
        (
            lambda m: beam_search(m, torch.tensor([0]), beam_width=2, max_new_tokens=2, eos_id=3),
            ValueError,
            "eos_id=3 is out of range for V=3",
        ),
        (
            lambda m: beam_search(m, torch.tensor([0]), beam_width=2, max_new_tokens=2, eos_id=-1),
            ValueError,
            "eos_id must be",
        ),
        (lambda m: sequence_log_prob(m, torch.tensor([0])), ValueError, "at least 2 tokens"),
        (
            lambda m: sequence_log_prob(m, torch.tensor([0, 1, 2]), start=3),
            ValueError,
            r"start must be an integer in 1\.\.T-1=2",
        ),
        (
            lambda m: sequence_log_prob(m, torch.tensor([0, 1, 2]), start=0),
            ValueError,
            "start must be",
        ),
    ],
)
def test_model_runners_refuse_bad_input(call, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        call(PrefixModel(vocab=3))


# -- repetition ------------------------------------------------------------------------------------


def test_repetition_counts_repeated_n_grams() -> None:
    assert repetition("abcabcabc", 3) == pytest.approx(1 - 3 / 7)
    assert repetition("abcdefg", 2) == 0.0
    assert repetition("aaaa", 1) == 0.75
    assert repetition("the cat sat", 11) == 0.0
    ids = [1, 2, 1, 2, 1, 2]
    for kind in (ids, tuple(ids), np.array(ids), torch.tensor(ids)):
        assert repetition(kind, 2) == pytest.approx(1 - 2 / 5)


def test_more_repetitive_text_scores_higher() -> None:
    varied = "Before we proceed any further, hear me speak."
    looped = "the king, the king, the king, the king, the king"
    assert repetition(looped) > 0.5 > repetition(varied) == 0.0


@pytest.mark.parametrize(
    ("tokens", "n", "error", "match"),
    [
        ("abc", 4, ValueError, "at least n=4 tokens, got 3"),
        ("abc", 0, ValueError, "n must be a positive integer"),
        (torch.zeros(2, 3), 2, TypeError, "1-D sequence"),
        ({1: 2}, 1, TypeError, "1-D sequence"),
    ],
)
def test_repetition_refuses_bad_input(tokens: object, n: int, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        repetition(tokens, n)


@pytest.mark.parametrize("context", [1, 2, 5, 7, 22, 40])
def test_text_loss_scores_every_token_once_in_windows(context: int) -> None:
    """Windows start at 0, T, 2T, ...; 22 = 3 * 7 + 1: T = 7 ends with a window of 1 token."""
    model = PrefixModel(vocab=4, seed=9)
    ids = torch.randint(4, (23,), generator=torch.Generator().manual_seed(0))
    total = 0.0
    with torch.no_grad():
        for start in range(0, 22, context):
            window = ids[start : start + context + 1]
            total += float(
                F.cross_entropy(model(window[None, :-1])[0], window[1:], reduction="sum")
            )
    assert text_loss(model, ids, context=context, batch_size=2) == pytest.approx(
        total / 22, abs=1e-12
    )


def test_text_loss_of_a_short_stream_is_the_cross_entropy() -> None:
    model = PrefixModel(vocab=4, seed=10)
    ids = torch.tensor([0, 1, 2, 3, 3, 2])
    with torch.no_grad():
        expected = float(F.cross_entropy(model(ids[None, :-1])[0], ids[1:]))
    assert text_loss(model, ids, context=8) == pytest.approx(expected, abs=1e-12)
    seq = float(sequence_log_prob(model, ids)[0])
    assert text_loss(model, ids, context=5) == pytest.approx(-seq / 5, abs=1e-12)


def test_text_loss_refuses_bad_input() -> None:
    model = PrefixModel(vocab=4)
    with pytest.raises(ValueError, match=r"one stream of tokens \(N,\)"):
        text_loss(model, torch.zeros(2, 5, dtype=torch.long), context=4)
    with pytest.raises(ValueError, match="at least 2 tokens"):
        text_loss(model, torch.tensor([1]), context=4)
    with pytest.raises(ValueError, match="context must be a positive integer"):
        text_loss(model, torch.tensor([1, 2]), context=0)
    with pytest.raises(TypeError, match="integer token ids"):
        text_loss(model, torch.tensor([1.0, 2.0]), context=2)


def test_perplexity_and_bits_per_token() -> None:
    assert perplexity(math.log(65)) == pytest.approx(65, rel=1e-12)  # uniform over 65 tokens
    assert perplexity(0.0) == 1.0  # a sure model
    assert bits_per_token(math.log(2)) == pytest.approx(1.0, rel=1e-12)
    assert bits_per_token(1.88) == pytest.approx(1.88 / math.log(2), rel=1e-12)  # 2.71 bits
    losses = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64)
    torch.testing.assert_close(perplexity(losses), losses.exp(), **F64)
    np.testing.assert_allclose(bits_per_token(losses.numpy()), losses.numpy() / np.log(2), **F64)
    assert type(perplexity(1)) is float and type(bits_per_token(np.float64(1.0))) is float


@pytest.mark.parametrize("f", [perplexity, bits_per_token])
@pytest.mark.parametrize("loss", [-0.1, float("nan"), torch.tensor([1.0, -1.0]), "1.0", True])
def test_loss_conversions_refuse_what_is_not_a_loss(f, loss: object) -> None:
    with pytest.raises((ValueError, TypeError), match="loss"):
        f(loss)


def test_the_module_lists_what_it_defines() -> None:
    assert sorted(decoding.__all__) == decoding.__all__
    assert all(callable(getattr(decoding, name)) for name in decoding.__all__)


# -- properties (hypothesis) -------------------------------------------------------------------------

SETTINGS = settings(deadline=None, max_examples=60)
LOGITS = st.integers(1, 12).flatmap(
    lambda V: arrays(np.float64, (3, V), elements=st.floats(-30, 30, allow_nan=False))
)


@SETTINGS
@given(logits=LOGITS, data=st.data())
def test_top_k_keeps_the_largest_logits(logits: np.ndarray, data: st.DataObject) -> None:
    V = logits.shape[-1]
    k = data.draw(st.integers(1, V))
    probs = top_k_probs(logits, k)
    np.testing.assert_allclose(probs.sum(-1), 1.0, rtol=0, atol=1e-12)
    for row, p in zip(logits, probs, strict=True):
        kept = p > 0
        assert kept.sum() >= k  # exactly k, or more on a tie with the k-th
        if not kept.all():
            assert row[kept].min() > row[~kept].max()  # every kept logit beats every dropped one
        assert kept.sum() == (row >= np.sort(row)[-k]).sum()


@SETTINGS
@given(logits=LOGITS, p=st.floats(0.01, 1.0))
def test_top_p_keeps_the_fewest_most_likely_tokens_reaching_p(logits: np.ndarray, p: float) -> None:
    full = temperature_probs(logits)
    nucleus = top_p_probs(logits, p)
    np.testing.assert_allclose(nucleus.sum(-1), 1.0, rtol=0, atol=1e-12)
    for q, r in zip(full, nucleus, strict=True):
        kept = r > 0
        mass = q[kept].sum()
        assert mass >= p - 1e-9  # the kept tokens reach p
        assert mass - q[kept].min() < p + 1e-9  # without the least likely kept one, they do not
        if not kept.all():
            assert q[kept].min() >= q[~kept].max()  # the most likely tokens are the ones kept
        np.testing.assert_allclose(r[kept], q[kept] / mass, rtol=1e-9, atol=1e-12)


@SETTINGS
@given(logits=LOGITS, seed=st.integers(0, 2**32 - 1))
def test_a_sample_is_always_in_the_support(logits: np.ndarray, seed: int) -> None:
    probs = next_token_probs(logits, top_k=max(1, logits.shape[-1] // 2), top_p=0.9)
    ids = sample(probs, generator=torch.Generator().manual_seed(seed))
    assert all(probs[i, j] > 0 for i, j in enumerate(ids))
