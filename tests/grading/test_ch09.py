"""Chapter 9's graders: right answers pass, stubs and the class checks get the expected report.

The right answers below are written here, independently of the worked solutions, the way
learners write them (sort instead of topk, a loop over rows, ``F.rms_norm``, ``nn.SiLU``,
a beam kept as a Python list). Every planted mistake's own diagnosis is tested for every
chapter in ``test_chapters.py``; learners' wrong answers are in ``test_ch09_corpus.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn
from torch.nn import functional as F

from attnlab import grading
from attnlab.grading.ch09 import (
    GRADERS,
    check_beam_search,
    check_loss_metrics,
    check_rms_norm,
    check_swiglu,
    check_temperature_repetition,
    check_tied_savings,
    check_top_k,
    check_top_p,
    summary,
)

# ------------------------------------------------------------------ correct answers


def metrics_numpy(loss):
    return np.exp(loss), loss / np.log(2)


def metrics_powers(loss):
    bits = loss * np.log2(np.e)
    return 2.0**bits, bits


def metrics_log2_of_exp(loss):
    return np.e**loss, np.log2(np.exp(loss))


def top_k_sort(logits, k, temperature=1.0):
    z = logits / temperature
    values, _ = torch.sort(z, dim=-1, descending=True)
    kth = values[..., k - 1 : k]
    return torch.softmax(torch.where(z >= kth, z, torch.full_like(z, -math.inf)), dim=-1)


def top_k_renormalised(logits, k, temperature=1.0):
    z = logits / temperature
    kth = torch.kthvalue(-z, k, dim=-1, keepdim=True).values  # k-th smallest of -z
    probs = torch.softmax(z, dim=-1) * (z >= -kth)
    return probs / probs.sum(dim=-1, keepdim=True)


def top_k_min_of_topk(logits, k, temperature=1.0):
    z = logits / temperature
    threshold = z.topk(k).values.min(dim=-1, keepdim=True).values
    return F.softmax(z.masked_fill(z < threshold, float("-inf")), dim=-1)


def top_p_gather(logits, p, temperature=1.0):
    probs = torch.softmax(logits / temperature, dim=-1)
    sorted_p, order = probs.sort(dim=-1, descending=True, stable=True)
    keep_sorted = torch.cumsum(sorted_p, -1) - sorted_p < p
    keep = keep_sorted.gather(-1, order.argsort(dim=-1))
    kept = torch.where(keep, probs, torch.zeros_like(probs))
    return kept / kept.sum(-1, keepdim=True)


def top_p_shifted(logits, p, temperature=1.0):
    probs = F.softmax(logits / temperature, dim=-1)
    sorted_p, order = torch.sort(probs, descending=True, stable=True)
    cum = sorted_p.cumsum(-1)
    first = torch.ones_like(cum[..., :1], dtype=torch.bool)
    keep_sorted = torch.cat([first, cum[..., :-1] < p], dim=-1)
    out = torch.zeros_like(probs).scatter(-1, order, sorted_p * keep_sorted)
    return out / out.sum(-1, keepdim=True)


def top_p_rows(logits, p, temperature=1.0):
    """One row at a time, in a loop."""
    probs = torch.softmax(logits / temperature, dim=-1)
    flat = probs.reshape(-1, probs.shape[-1])
    rows = []
    for row in flat:
        order = torch.argsort(row, descending=True, stable=True)
        mass, keep = 0.0, torch.zeros_like(row, dtype=torch.bool)
        for i in order:
            if mass >= p:
                break
            keep[i] = True
            mass = mass + float(row[i])
        kept = row * keep
        rows.append(kept / kept.sum())
    return torch.stack(rows).reshape(probs.shape)


def beam_sort(model, prompt, beam_width, max_new_tokens):
    seqs, scores = prompt, torch.zeros(1, dtype=torch.float64)
    for _ in range(max_new_tokens):
        log_p = F.log_softmax(model(seqs)[:, -1, :], dim=-1)
        V = log_p.shape[-1]
        cand = scores.unsqueeze(1) + log_p
        best, idx = cand.flatten().sort(descending=True, stable=True)
        idx, scores = idx[:beam_width], best[:beam_width]
        seqs = torch.cat([seqs[idx // V], (idx % V).unsqueeze(1)], dim=1)
    return seqs, scores


def beam_lists(model, prompt, beam_width, max_new_tokens):
    """Beams as a Python list of (score, tokens), sorted with a stable key."""
    beams = [(0.0, prompt[0].tolist())]
    for _ in range(max_new_tokens):
        candidates = []
        for score, tokens in beams:
            logits = model(torch.tensor([tokens]))[0, -1]
            log_p = torch.log_softmax(logits, dim=-1)
            for token in range(log_p.shape[0]):
                candidates.append((score + float(log_p[token]), [*tokens, token]))
        candidates.sort(key=lambda c: -c[0])  # stable: earlier beam, smaller id first
        beams = candidates[:beam_width]
    ids = torch.tensor([tokens for _, tokens in beams])
    return ids, torch.tensor([score for score, _ in beams], dtype=torch.float64)


class RMSNormRsqrt(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class RMSNormFunctional(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))

    def forward(self, x):
        return F.rms_norm(x, (x.shape[-1],), self.weight, self.eps)


class RMSNormFromNorm(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.d, self.eps = d_model, eps
        self.weight = nn.Parameter(torch.ones(d_model))

    def forward(self, x):
        mean_square = torch.linalg.vector_norm(x, dim=-1, keepdim=True) ** 2 / self.d
        return self.weight * x / torch.sqrt(mean_square + self.eps)


class SwiGLUPlain(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.W_gate = nn.Linear(d_model, d_ff, bias=False)
        self.W_up = nn.Linear(d_model, d_ff, bias=False)
        self.W_down = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x):
        return self.W_down(F.silu(self.W_gate(x)) * self.W_up(x))


class SwiGLUSigmoid(SwiGLUPlain):
    def forward(self, x):
        gate = self.W_gate(x)
        return self.W_down(gate * torch.sigmoid(gate) * self.W_up(x))


class SwiGLUModule(SwiGLUPlain):
    def __init__(self, d_model, d_ff):
        super().__init__(d_model, d_ff)
        self.act = nn.SiLU()

    def forward(self, x):
        up = self.W_up(x)
        return self.W_down(self.act(self.W_gate(x)) * up)


CORRECT = [
    ("loss_metrics", "exp and a division by ln 2", metrics_numpy),
    ("loss_metrics", "2 to the bits", metrics_powers),
    ("loss_metrics", "log2 of exp", metrics_log2_of_exp),
    ("top_k", "sort, then the k-th value", top_k_sort),
    ("top_k", "kthvalue, softmax renormalised", top_k_renormalised),
    ("top_k", "the min of topk", top_k_min_of_topk),
    ("top_p", "gather with the inverse permutation", top_p_gather),
    ("top_p", "cumsum shifted by one", top_p_shifted),
    ("top_p", "a loop over rows", top_p_rows),
    ("beam_search", "sort of the flattened scores", beam_sort),
    ("beam_search", "Python lists", beam_lists),
    ("rms_norm", "rsqrt", RMSNormRsqrt),
    ("rms_norm", "F.rms_norm", RMSNormFunctional),
    ("rms_norm", "vector_norm", RMSNormFromNorm),
    ("swiglu", "F.silu", SwiGLUPlain),
    ("swiglu", "x times sigmoid", SwiGLUSigmoid),
    ("swiglu", "nn.SiLU", SwiGLUModule),
    ("temperature_repetition", "the word", "rises"),
    ("temperature_repetition", "capitalised, with a full stop", "Rises."),
    ("tied_savings", "the product", 512 * 192),
    ("tied_savings", "a float", 98304.0),
]
CORRECT_ANSWERS = [(name, answer) for name, _, answer in CORRECT]


def test_every_exercise_has_right_answers_written_two_ways():
    for name in GRADERS.names:
        assert sum(n == name for n, _, _ in CORRECT) >= 2, name


def test_every_graded_function_has_four_cases_or_more():
    for exercise in GRADERS:
        grader = getattr(exercise, "values", exercise)
        if hasattr(grader, "cases"):
            assert len(grader.cases) >= 5, grader.name


def test_the_graders_are_in_notebook_order():
    assert GRADERS.names == (
        "loss_metrics",
        "top_k",
        "top_p",
        "beam_search",
        "temperature_repetition",
        "rms_norm",
        "swiglu",
        "tied_savings",
    )
    assert GRADERS.chapter == 9


# ------------------------------------------------------------------ stubs


def stub(*args, **kwargs):
    raise NotImplementedError("Exercise 9.1")


class StubLayer(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        raise NotImplementedError("Exercise 9.6")


@pytest.mark.parametrize(
    "check", [check_loss_metrics, check_top_k, check_top_p, check_beam_search], ids=str
)
def test_a_stub_is_not_attempted(check):
    result = check(stub)
    assert result.status == "not attempted"
    assert "not attempted yet" in result.message


@pytest.mark.parametrize("check", [check_rms_norm, check_swiglu], ids=str)
def test_a_stub_class_is_not_attempted(check):
    result = check(StubLayer)
    assert result.status == "not attempted"


@pytest.mark.parametrize("check", [check_temperature_repetition, check_tied_savings], ids=str)
def test_an_unanswered_prediction_is_not_attempted(check):
    assert check(...).status == "not attempted"


def test_the_score_lists_every_exercise():
    grading.reset()
    check_loss_metrics(metrics_numpy)
    rows = dict(summary().rows)
    assert list(rows) == list(GRADERS.names)
    assert rows["loss_metrics"] == "passed"
    assert rows["top_k"] == "not checked"


# ------------------------------------------------------------------ what the checks ask


@pytest.mark.parametrize("not_a_class", [RMSNormRsqrt(4), "MyRMSNorm", None])
def test_the_module_checks_want_the_class(not_a_class):
    result = check_rms_norm(not_a_class)
    assert result.status == "wrong type"
    assert "check_rms_norm(MyRMSNorm)" in result.diagnosis


def test_a_weight_that_is_not_a_parameter_is_named():
    class PlainWeight(RMSNormRsqrt):
        def __init__(self, d_model, eps=1e-5):
            nn.Module.__init__(self)
            self.eps = eps
            self.weight = torch.ones(d_model)

    result = check_rms_norm(PlainWeight)
    assert not result.passed
    assert "not an nn.Parameter" in result.text
    assert "registered parameter" in result.diagnosis  # leads, without the answer's line
    assert "nn.Parameter(" not in result.diagnosis


@pytest.mark.parametrize("init", [torch.zeros, torch.randn, lambda d: torch.ones(1)])
def test_the_weight_starts_as_d_model_ones(init):
    """The check copies torch's weight in only after it has seen the fresh layer's."""

    class Starts(RMSNormRsqrt):
        def __init__(self, d_model, eps=1e-5):
            super().__init__(d_model, eps)
            self.weight = nn.Parameter(init(d_model))

    result = check_rms_norm(Starts)
    assert not result.passed and result.diagnosed
    assert "d_model ones" in result.diagnosis


def test_float32_in_float32_out():
    class Promotes(RMSNormRsqrt):
        def forward(self, x):
            return super().forward(x.double())

    result = check_rms_norm(Promotes)
    assert not result.passed and result.diagnosed
    assert "float32" in result.text


def test_a_fill_float32_cannot_hold_is_named():
    def top_k_lowest(logits, k, temperature=1.0):  # float64's lowest number as the fill
        z = logits / temperature
        kth = torch.topk(z, k, dim=-1).values[..., -1:]
        return torch.softmax(z.masked_fill(z < kth, -1.7976931348623157e308), dim=-1)

    result = check_top_k(top_k_lowest)
    assert not result.passed and result.diagnosed
    assert "too large for float32" in result.text and "mixes dtypes" not in result.text


def test_numpy_top_k_is_refused_with_the_reason():
    def top_k_numpy(logits, k, temperature=1.0):
        z = logits.numpy() / temperature
        kth = np.sort(z, axis=-1)[..., -k][..., None]
        e = np.where(z >= kth, np.exp(z - z.max(-1, keepdims=True)), 0.0)
        return torch.from_numpy(e / e.sum(-1, keepdims=True))

    result = check_top_k(top_k_numpy)
    assert not result.passed
    assert "NumPy" in result.text or "numpy" in result.text


def test_beam_search_reads_the_model_it_is_given():
    # The tiny models depend on the position: a search that feeds the last token only fails.
    def last_token_only(model, prompt, beam_width, max_new_tokens):
        seqs, scores = prompt, torch.zeros(1, dtype=torch.float64)
        for _ in range(max_new_tokens):
            log_p = torch.log_softmax(model(seqs[:, -1:])[:, -1], -1)
            V = log_p.shape[-1]
            best, idx = (scores[:, None] + log_p).flatten().sort(descending=True, stable=True)
            idx, scores = idx[:beam_width], best[:beam_width]
            seqs = torch.cat([seqs[idx // V], (idx % V)[:, None]], 1)
        return seqs, scores

    result = check_beam_search(last_token_only)
    assert not result.passed
    assert "whole sequence" in result.diagnosis


def test_a_right_count_is_shown_in_full():
    """98,304 is not shown as "9.83e+04", which reads like a rounded answer accepted."""
    result = check_tied_savings(98304)
    assert result.passed
    assert "right: 98,304" in result.text
    assert "e+04" not in result.text


@pytest.mark.parametrize("text", ["98304 parameters", "98,304 parameters", "98304"])
def test_a_number_in_quotes_is_refused_as_every_question_refuses_it(text):
    """One policy for every chapter's questions: the answer is a Python number; text is
    refused with how to write it (with the unit word named when there is one)."""
    result = check_tied_savings(text)
    assert result.status != "passed" and result.diagnosed
    assert "without quotes" in result.diagnosis
    if "parameters" in text:
        assert "without the word 'parameters'" in result.diagnosis
