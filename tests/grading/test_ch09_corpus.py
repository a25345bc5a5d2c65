"""Chapter 9's graders against wrong answers written as learners write them.

Wrong answers to exercises 9.1-9.8, written here without looking at the graders' planted
or generated mistakes: a perplexity of 2 to the loss, a top-k that keeps exactly k tokens
or zeroes after the softmax, a nucleus that stops before the token crossing p or is left
in sorted order, a beam that multiplies probabilities or keeps two per beam, an RMSNorm
that centres or uses ``torch.norm``, a SwiGLU with the gate on the wrong side; each with
words its diagnosis must contain (classes: see ``corpus.py``). The right answers written
two ways or more are in ``test_ch09.py``.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from corpus import chapter_tests
from torch import nn
from torch.nn import functional as F

from attnlab.grading.ch09 import (
    check_beam_search,
    check_loss_metrics,
    check_rms_norm,
    check_swiglu,
    check_temperature_repetition,
    check_tied_savings,
    check_top_k,
    check_top_p,
)

CHECKS = {
    "loss_metrics": check_loss_metrics,
    "top_k": check_top_k,
    "top_p": check_top_p,
    "beam_search": check_beam_search,
    "temperature_repetition": check_temperature_repetition,
    "rms_norm": check_rms_norm,
    "swiglu": check_swiglu,
    "tied_savings": check_tied_savings,
}


# ------------------------------------------------------------------ 9.1 loss metrics


def lm_two_to_the_loss(loss):
    return 2**loss, loss / np.log(2)


def lm_times_ln2(loss):
    return np.exp(loss), loss * np.log(2)


def lm_log2_of_loss(loss):
    return np.exp(loss), np.log2(loss)


def lm_torch(loss):
    loss = torch.as_tensor(loss)
    return torch.exp(loss), loss / math.log(2)


def lm_swapped(loss):
    return loss / np.log(2), np.exp(loss)


def lm_bits_from_perplexity(loss):
    return np.exp(loss), np.log(np.exp(loss)) / np.log(10)


def lm_exp_of_bits(loss):
    bits = loss / np.log(2)
    return np.exp(bits), bits


def lm_float32(loss):
    loss = loss.astype(np.float32)
    return np.exp(loss), loss / np.float32(np.log(2))


# ------------------------------------------------------------------ 9.2 top-k


def tk_exactly_k(logits, k, temperature=1.0):
    z = logits / temperature
    idx = torch.topk(z, k, dim=-1).indices
    masked = torch.full_like(z, float("-inf")).scatter(-1, idx, z.gather(-1, idx))
    return torch.softmax(masked, dim=-1)


def tk_zero_after_softmax(logits, k, temperature=1.0):
    probs = torch.softmax(logits / temperature, dim=-1)
    kth = torch.topk(probs, k, dim=-1).values[..., -1:]
    return torch.where(probs >= kth, probs, torch.zeros_like(probs))


def tk_global_threshold(logits, k, temperature=1.0):
    z = logits / temperature
    kth = torch.topk(z.flatten(), k).values[-1]
    return torch.softmax(z.masked_fill(z < kth, float("-inf")), dim=-1)


def tk_fill_zero(logits, k, temperature=1.0):
    z = logits / temperature
    kth = torch.topk(z, k, dim=-1).values[..., -1:]
    return torch.softmax(torch.where(z >= kth, z, torch.zeros_like(z)), dim=-1)


def tk_times_temperature(logits, k, temperature=1.0):
    z = logits * temperature
    kth = torch.topk(z, k, dim=-1).values[..., -1:]
    return torch.softmax(z.masked_fill(z < kth, float("-inf")), dim=-1)


def tk_strict(logits, k, temperature=1.0):
    z = logits / temperature
    kth = torch.topk(z, k + 1, dim=-1).values[..., -1:] if k < z.shape[-1] else None
    if kth is None:
        return torch.softmax(z, dim=-1)
    return torch.softmax(z.masked_fill(z <= kth, float("-inf")), dim=-1)


def tk_numpy(logits, k, temperature=1.0):
    z = np.asarray(logits) / temperature
    kth = np.sort(z, axis=-1)[..., -k, None]
    e = np.exp(np.where(z >= kth, z - z.max(axis=-1, keepdims=True), -np.inf))
    return torch.tensor(e / e.sum(axis=-1, keepdims=True))


def tk_no_temperature(logits, k, temperature=1.0):
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]
    return torch.softmax(logits.masked_fill(logits < kth, float("-inf")), dim=-1)


# ------------------------------------------------------------------ 9.3 top-p


def _sorted_probs(logits, temperature):
    probs = torch.softmax(logits / temperature, dim=-1)
    sorted_p, order = torch.sort(probs, dim=-1, descending=True, stable=True)
    return probs, sorted_p, order


def _back(probs, order, keep_sorted):
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    kept = probs * keep
    return kept / kept.sum(-1, keepdim=True)


def tp_cumsum_le_p(logits, p, temperature=1.0):
    probs, sorted_p, order = _sorted_probs(logits, temperature)
    return _back(probs, order, torch.cumsum(sorted_p, -1) <= p)


def tp_cumsum_lt_p(logits, p, temperature=1.0):
    probs, sorted_p, order = _sorted_probs(logits, temperature)
    return _back(probs, order, torch.cumsum(sorted_p, -1) < p)


def tp_sorted_order(logits, p, temperature=1.0):
    _, sorted_p, _ = _sorted_probs(logits, temperature)
    keep = torch.cumsum(sorted_p, -1) - sorted_p < p
    kept = sorted_p * keep
    return kept / kept.sum(-1, keepdim=True)


def tp_no_renormalise(logits, p, temperature=1.0):
    probs, sorted_p, order = _sorted_probs(logits, temperature)
    keep_sorted = torch.cumsum(sorted_p, -1) - sorted_p < p
    return probs * torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)


def tp_ascending(logits, p, temperature=1.0):
    probs = torch.softmax(logits / temperature, dim=-1)
    sorted_p, order = torch.sort(probs, dim=-1)
    return _back(probs, order, torch.cumsum(sorted_p, -1) - sorted_p < p)


def tp_wrong_scatter(logits, p, temperature=1.0):
    """Indexes the mask with the sort order instead of inverting it."""
    probs, sorted_p, order = _sorted_probs(logits, temperature)
    keep_sorted = torch.cumsum(sorted_p, -1) - sorted_p < p
    keep = keep_sorted.gather(-1, order)
    kept = probs * keep
    return kept / kept.sum(-1, keepdim=True)


def tp_before_le_p(logits, p, temperature=1.0):
    probs, sorted_p, order = _sorted_probs(logits, temperature)
    return _back(probs, order, torch.cumsum(sorted_p, -1) - sorted_p <= p)


def tp_no_temperature(logits, p, temperature=1.0):
    return tp_cumsum_correct(logits, p)


def tp_cumsum_correct(logits, p, temperature=1.0):
    probs, sorted_p, order = _sorted_probs(logits, temperature)
    return _back(probs, order, torch.cumsum(sorted_p, -1) - sorted_p < p)


# ------------------------------------------------------------------ 9.4 beam search


def _beam(model, prompt, beam_width, max_new_tokens, step):
    seqs, scores = prompt, torch.zeros(1, dtype=torch.float64)
    for _ in range(max_new_tokens):
        logits = model(seqs)[:, -1]
        V = logits.shape[-1]
        seqs, scores = step(seqs, scores, logits, V, beam_width)
    return seqs, scores


def bs_products(model, prompt, beam_width, max_new_tokens):
    seqs, probs = prompt, torch.ones(1, dtype=torch.float64)
    for _ in range(max_new_tokens):
        p = torch.softmax(model(seqs)[:, -1], dim=-1)
        V = p.shape[-1]
        best, idx = (probs[:, None] * p).flatten().sort(descending=True, stable=True)
        idx, probs = idx[:beam_width], best[:beam_width]
        seqs = torch.cat([seqs[idx // V], (idx % V)[:, None]], dim=1)
    return seqs, torch.log(probs)


def bs_two_per_beam(model, prompt, beam_width, max_new_tokens):
    seqs, scores = prompt, torch.zeros(1, dtype=torch.float64)
    for _ in range(max_new_tokens):
        log_p = torch.log_softmax(model(seqs)[:, -1], dim=-1)
        top, tok = torch.sort(log_p, dim=-1, descending=True, stable=True)
        top, tok = top[:, :beam_width], tok[:, :beam_width]
        parents = torch.arange(seqs.shape[0]).repeat_interleave(top.shape[1])
        seqs = torch.cat([seqs[parents], tok.reshape(-1, 1)], dim=1)
        scores = (scores[:, None] + top).reshape(-1)
    order = torch.sort(scores, descending=True, stable=True).indices
    return seqs[order], scores[order]


def bs_step_only(model, prompt, beam_width, max_new_tokens):
    def step(seqs, scores, logits, V, k):
        log_p = torch.log_softmax(logits, -1)
        best, idx = log_p.flatten().sort(descending=True, stable=True)
        new_scores = scores[idx[:k] // V] + best[:k]
        return torch.cat([seqs[idx[:k] // V], (idx[:k] % V)[:, None]], 1), new_scores

    return _beam(model, prompt, beam_width, max_new_tokens, step)


def bs_raw_logits(model, prompt, beam_width, max_new_tokens):
    def step(seqs, scores, logits, V, k):
        best, idx = (scores[:, None] + logits).flatten().sort(descending=True, stable=True)
        return torch.cat([seqs[idx[:k] // V], (idx[:k] % V)[:, None]], 1), best[:k]

    return _beam(model, prompt, beam_width, max_new_tokens, step)


def bs_no_prompt(model, prompt, beam_width, max_new_tokens):
    seqs, scores = bs_right(model, prompt, beam_width, max_new_tokens)
    return seqs[:, prompt.shape[1] :], scores


def bs_right(model, prompt, beam_width, max_new_tokens):
    def step(seqs, scores, logits, V, k):
        log_p = torch.log_softmax(logits, -1)
        best, idx = (scores[:, None] + log_p).flatten().sort(descending=True, stable=True)
        return torch.cat([seqs[idx[:k] // V], (idx[:k] % V)[:, None]], 1), best[:k]

    return _beam(model, prompt, beam_width, max_new_tokens, step)


def bs_topk(model, prompt, beam_width, max_new_tokens):
    def step(seqs, scores, logits, V, k):
        log_p = torch.log_softmax(logits, -1)
        best, idx = torch.topk((scores[:, None] + log_p).flatten(), k)
        return torch.cat([seqs[idx // V], (idx % V)[:, None]], 1), best

    return _beam(model, prompt, beam_width, max_new_tokens, step)


def bs_mean(model, prompt, beam_width, max_new_tokens):
    seqs, scores = bs_right(model, prompt, beam_width, max_new_tokens)
    return seqs, scores / max_new_tokens


def bs_probabilities_returned(model, prompt, beam_width, max_new_tokens):
    seqs, scores = bs_right(model, prompt, beam_width, max_new_tokens)
    return seqs, scores.exp()


def bs_last_token(model, prompt, beam_width, max_new_tokens):
    def step(seqs, scores, logits, V, k):
        log_p = torch.log_softmax(model(seqs[:, -1:])[:, -1], -1)
        best, idx = (scores[:, None] + log_p).flatten().sort(descending=True, stable=True)
        return torch.cat([seqs[idx[:k] // V], (idx[:k] % V)[:, None]], 1), best[:k]

    return _beam(model, prompt, beam_width, max_new_tokens, step)


# ------------------------------------------------------------------ 9.6 RMSNorm


class _RMS(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))


class RMSCentred(_RMS):
    def forward(self, x):
        x = x - x.mean(-1, keepdim=True)
        return self.weight * x / torch.sqrt((x**2).mean(-1, keepdim=True) + self.eps)


class RMSTorchNorm(_RMS):
    def forward(self, x):
        return self.weight * x / (torch.norm(x, dim=-1, keepdim=True) + self.eps)


class RMSEpsOutside(_RMS):
    def forward(self, x):
        rms = torch.sqrt(torch.mean(x**2, dim=-1, keepdim=True))
        return self.weight * x / (rms + self.eps)


class RMSStd(_RMS):
    def forward(self, x):
        return self.weight * x / torch.sqrt(x.var(-1, keepdim=True) + self.eps)


class RMSNoWeight(_RMS):
    def forward(self, x):
        return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


class RMSPlainTensor(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = torch.ones(d_model, requires_grad=True)

    def forward(self, x):
        return self.weight * x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


class RMSGammaName(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.gamma = nn.Parameter(torch.ones(d_model))

    def forward(self, x):
        return self.gamma * x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


class RMSFixedEps(_RMS):
    def forward(self, x):
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


class RMSMeanOverAll(_RMS):
    def forward(self, x):
        return self.weight * x / torch.sqrt(x.pow(2).mean() + self.eps)


# ------------------------------------------------------------------ 9.7 SwiGLU


class _Swi(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.W_gate = nn.Linear(d_model, d_ff, bias=False)
        self.W_up = nn.Linear(d_model, d_ff, bias=False)
        self.W_down = nn.Linear(d_ff, d_model, bias=False)


class SwiGateOnUp(_Swi):
    def forward(self, x):
        return self.W_down(self.W_gate(x) * F.silu(self.W_up(x)))


class SwiGelu(_Swi):
    def forward(self, x):
        return self.W_down(F.gelu(self.W_gate(x)) * self.W_up(x))


class SwiSigmoid(_Swi):
    def forward(self, x):
        return self.W_down(torch.sigmoid(self.W_gate(x)) * self.W_up(x))


class SwiWithBias(_Swi):
    def __init__(self, d_model, d_ff):
        super().__init__(d_model, d_ff)
        self.W_gate = nn.Linear(d_model, d_ff)
        self.W_up = nn.Linear(d_model, d_ff)
        self.W_down = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.W_down(F.silu(self.W_gate(x)) * self.W_up(x))


class SwiDownWrongWay(_Swi):
    def __init__(self, d_model, d_ff):
        super().__init__(d_model, d_ff)
        self.W_down = nn.Linear(d_model, d_ff, bias=False)

    def forward(self, x):
        return self.W_down(F.silu(self.W_gate(x)) * self.W_up(x))


class SwiSiluOfProduct(_Swi):
    def forward(self, x):
        return self.W_down(F.silu(self.W_gate(x) * self.W_up(x)))


class SwiNoUp(_Swi):
    def forward(self, x):
        return self.W_down(F.silu(self.W_gate(x)))


class SwiMatmulGate(_Swi):
    def forward(self, x):
        gate = F.silu(self.W_gate(x))
        return self.W_down(gate * self.W_up(x)) + 0 * gate.sum()


class SwiThroughNumpy(_Swi):
    def forward(self, x):
        g = self.W_gate(x).detach().numpy()
        gate = torch.from_numpy(g / (1 + np.exp(-g)))
        return self.W_down(gate * self.W_up(x))


# ------------------------------------------------------------------ answers of the wrong kind


def bs_ids_only(model, prompt, beam_width, max_new_tokens):
    return bs_right(model, prompt, beam_width, max_new_tokens)[0]


def bs_python_lists(model, prompt, beam_width, max_new_tokens):
    ids, scores = bs_right(model, prompt, beam_width, max_new_tokens)
    return ids.tolist(), scores.tolist()


def bs_cat_no_column(model, prompt, beam_width, max_new_tokens):
    def step(seqs, scores, logits, V, k):
        log_p = torch.log_softmax(logits, -1)
        best, idx = (scores[:, None] + log_p).flatten().sort(descending=True, stable=True)
        return torch.cat([seqs[idx[:k] // V], idx[:k] % V], dim=1), best[:k]

    return _beam(model, prompt, beam_width, max_new_tokens, step)


def tk_returns_numpy(logits, k, temperature=1.0):
    z = logits / temperature
    kth = torch.topk(z, k, dim=-1).values[..., -1:]
    return torch.softmax(z.masked_fill(z < kth, float("-inf")), dim=-1).numpy()


def tk_topk_dim0(logits, k, temperature=1.0):
    z = logits / temperature
    kth = torch.topk(z, k, dim=0).values[-1:]
    return torch.softmax(z.masked_fill(z < kth, float("-inf")), dim=-1)


def tp_cumsum_without_dim(logits, p, temperature=1.0):
    probs = torch.softmax(logits / temperature, dim=-1)
    sorted_p, order = torch.sort(probs, descending=True)
    keep_sorted = torch.cumsum(sorted_p) - sorted_p < p
    return _back(probs, order, keep_sorted)


class RMSReturnsPair(_RMS):
    def forward(self, x):
        rms = torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x / rms, rms


class SwiNoSuper(nn.Module):
    def __init__(self, d_model, d_ff):
        self.W_gate = nn.Linear(d_model, d_ff, bias=False)
        self.W_up = nn.Linear(d_model, d_ff, bias=False)
        self.W_down = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x):
        return self.W_down(F.silu(self.W_gate(x)) * self.W_up(x))


class SwiFloat32(_Swi):
    def forward(self, x):
        return self.W_down(F.silu(self.W_gate(x)) * self.W_up(x)).float()


# ------------------------------------------------------------------ the corpus


CORPUS = [
    ("loss_metrics", "2 to the loss", lm_two_to_the_loss, "2 to the loss"),
    ("loss_metrics", "bits times ln 2", lm_times_ln2, "divide by ln 2"),
    ("loss_metrics", "log2 of the loss", lm_log2_of_loss, "log2 of the loss"),
    ("loss_metrics", "torch in a NumPy exercise", lm_torch, "NumPy"),
    ("loss_metrics", "outputs swapped", lm_swapped, "other order"),
    ("loss_metrics", "base 10", lm_bits_from_perplexity, "ln 10"),
    ("loss_metrics", "perplexity e to the bits", lm_exp_of_bits, "e to the bits"),
    ("loss_metrics", "float32 along the way", lm_float32, "float32"),
    ("top_k", "exactly k indices", tk_exactly_k, "tied"),
    ("top_k", "zeroed after the softmax", tk_zero_after_softmax, "renormalised"),
    ("top_k", "one threshold for the batch", tk_global_threshold, "each row"),
    ("top_k", "hidden logits set to 0", tk_fill_zero, "-inf"),
    ("top_k", "times the temperature", tk_times_temperature, "divide by it"),
    ("top_k", "strictly above the (k+1)-th", tk_strict, "tied"),
    ("top_k", "through NumPy", tk_numpy, "NumPy"),
    ("top_k", "temperature ignored", tk_no_temperature, "temperature"),
    ("top_p", "cumsum <= p", tp_cumsum_le_p, "crosses p"),
    ("top_p", "cumsum < p", tp_cumsum_lt_p, "reaches or crosses p"),
    ("top_p", "left in sorted order", tp_sorted_order, "id order"),
    ("top_p", "not renormalised", tp_no_renormalise, "renormalised"),
    ("top_p", "ascending sort", tp_ascending, "most"),
    ("top_p", "gather with the sort order", tp_wrong_scatter, "order"),
    ("top_p", "mass before <= p", tp_before_le_p, "strictly below p"),
    ("top_p", "temperature ignored", tp_no_temperature, "temperature"),
    ("beam_search", "multiplied probabilities", bs_products, "log-probabilities"),
    ("beam_search", "two per beam", bs_two_per_beam, "grows"),
    ("beam_search", "last step's score only", bs_step_only, "sum"),
    ("beam_search", "raw logits summed", bs_raw_logits, "log-softmax"),
    ("beam_search", "prompt left out", bs_no_prompt, "prompt"),
    ("beam_search", "torch.topk on ties", bs_topk, "tie"),
    ("beam_search", "length normalised", bs_mean, "length"),
    ("beam_search", "probabilities returned", bs_probabilities_returned, "log"),
    ("beam_search", "only the last token to the model", bs_last_token, "whole sequence"),
    ("rms_norm", "mean subtracted", RMSCentred, "LayerNorm"),
    ("rms_norm", "torch.norm", RMSTorchNorm, "√D"),
    ("rms_norm", "eps outside the root", RMSEpsOutside, "under the"),
    ("rms_norm", "variance", RMSStd, "mean"),
    ("rms_norm", "no weight", RMSNoWeight, "weight"),
    ("rms_norm", "weight a plain tensor", RMSPlainTensor, "nn.Parameter"),
    ("rms_norm", "weight named gamma", RMSGammaName, "self.weight"),
    ("rms_norm", "eps written as 1e-6", RMSFixedEps, "eps"),
    ("rms_norm", "one mean over the whole batch", RMSMeanOverAll, "own"),
    ("swiglu", "SiLU on the up projection", SwiGateOnUp, "gate"),
    ("swiglu", "GELU", SwiGelu, "SiLU"),
    ("swiglu", "sigmoid gate", SwiSigmoid, "SiLU"),
    ("swiglu", "biases", SwiWithBias, "bias"),
    ("swiglu", "W_down the wrong way", SwiDownWrongWay, "W_down"),
    ("swiglu", "SiLU of the product", SwiSiluOfProduct, "product"),
    ("swiglu", "no up projection", SwiNoUp, "up projection"),
    ("swiglu", "gate through NumPy", SwiThroughNumpy, "NumPy"),
    ("beam_search", "ids only", bs_ids_only, "return both"),
    ("beam_search", "Python lists", bs_python_lists, "torch"),
    ("beam_search", "tokens not a column", bs_cat_no_column, "column"),
    ("top_k", "NumPy array returned", tk_returns_numpy, "torch"),
    ("top_k", "topk along the batch", tk_topk_dim0, "dim=-1"),
    ("top_p", "cumsum without dim", tp_cumsum_without_dim, "axis"),
    ("rms_norm", "returns (out, rms)", RMSReturnsPair, "one tensor"),
    ("swiglu", "no super().__init__()", SwiNoSuper, "super().__init__()"),
    ("swiglu", "float32 output", SwiFloat32, "float32"),
    ("temperature_repetition", "falls", "falls", "predictable"),
    ("temperature_repetition", "stays", "stays the same", "likeliest"),
    ("temperature_repetition", "capitalised wrong", "Falls", "predictable"),
    ("temperature_repetition", "another word", "goes down", "rises"),
    ("temperature_repetition", "a number", 0.3, "rises"),
    ("temperature_repetition", "True", True, "rises"),
    ("tied_savings", "bias too", 512 * 192 + 512, "bias"),
    ("tied_savings", "both matrices", 2 * 512 * 192, "one of the two"),
    ("tied_savings", "the bias only", 512, "bias"),
    ("tied_savings", "D x D", 192 * 192, "V x D"),
    ("tied_savings", "nothing", 0, "does save"),
    ("tied_savings", "half", 49152, "whole"),
]  # fmt: skip


# ------------------------------------------------------------------ the learner review's cases
# Wrong answers an independent learner wrote that got the fallback hint, a misleading
# diagnosis, a crash or a pass; each now has a diagnosis with these words.


def lm_exp_minus(loss):
    return np.exp(-loss), loss / np.log(2)


def lm_times_1_44(loss):
    return np.exp(loss), loss * 1.44


def lm_math_exp(loss):
    return math.exp(loss), loss / math.log(2)


def lm_list_of_rows(loss):
    return [math.exp(x) for x in loss], [x / math.log(2) for x in loss]


def tk_sorted_index_k(logits, k, temperature=1.0):
    z = logits / temperature
    s, _ = torch.sort(z, dim=-1, descending=True)
    thr = s[..., min(k, z.shape[-1] - 1) :][..., :1]
    return torch.softmax(z.masked_fill(z < thr, float("-inf")), dim=-1)


def tk_kthvalue(logits, k, temperature=1.0):
    z = logits / temperature
    thr = torch.kthvalue(z, k, dim=-1, keepdim=True).values
    return torch.softmax(z.masked_fill(z < thr, float("-inf")), dim=-1)


def tk_renormalise_by_max(logits, k, temperature=1.0):
    z = logits / temperature
    thr = torch.topk(z, k, dim=-1).values[..., -1:]
    p = torch.softmax(z, dim=-1) * (z >= thr)
    return p / p.max(-1, keepdim=True).values


def tk_first_of_topk(logits, k, temperature=1.0):
    z = logits / temperature
    thr = torch.topk(z, k, dim=-1).values[..., :1]
    return torch.softmax(z.masked_fill(z < thr, float("-inf")), dim=-1)


def tk_probs_over_t(logits, k, temperature=1.0):
    thr = torch.topk(logits, k, dim=-1).values[..., -1:]
    probs = torch.softmax(logits.masked_fill(logits < thr, float("-inf")), dim=-1)
    return probs / temperature


def tk_last_row_threshold(logits, k, temperature=1.0):
    z = logits / temperature
    thr = torch.topk(z, k).values[-1]
    return torch.softmax(z.masked_fill(z < thr, float("-inf")), dim=-1)


def _tp_keep_first(cumulative_test):
    def top_p(logits, p, temperature=1.0):
        probs = torch.softmax(logits / temperature, dim=-1)
        sp, idx = torch.sort(probs, dim=-1, descending=True, stable=True)
        keep = cumulative_test(torch.cumsum(sp, -1), p)
        keep[..., 0] = True
        out = torch.zeros_like(probs).scatter(-1, idx, sp * keep)
        return out / out.sum(-1, keepdim=True)

    return top_p


tp_cum_lt_p_first_kept = _tp_keep_first(lambda c, p: c < p)
tp_cum_le_p_first_kept = _tp_keep_first(lambda c, p: c <= p)


def tp_inverted(logits, p, temperature=1.0):
    probs = torch.softmax(logits / temperature, dim=-1)
    sp, idx = torch.sort(probs, dim=-1, descending=True, stable=True)
    out = torch.zeros_like(probs).scatter(-1, idx, sp * (torch.cumsum(sp, -1) >= p))
    return out / out.sum(-1, keepdim=True)


def tp_id_order(logits, p, temperature=1.0):
    probs = torch.softmax(logits / temperature, dim=-1)
    kept = probs * (torch.cumsum(probs, -1) - probs < p)
    return kept / kept.sum(-1, keepdim=True)


def tp_gather_values(logits, p, temperature=1.0):
    probs = torch.softmax(logits / temperature, dim=-1)
    sp, idx = torch.sort(probs, dim=-1, descending=True, stable=True)
    out = (sp * (torch.cumsum(sp, -1) - sp < p)).gather(-1, idx)
    return out / out.sum(-1, keepdim=True)


def tp_logit_mass(logits, p, temperature=1.0):
    z = logits / temperature
    sz, idx = torch.sort(z, dim=-1, descending=True, stable=True)
    keep = torch.zeros_like(z, dtype=torch.bool).scatter(-1, idx, torch.cumsum(sz, -1) - sz < p)
    return torch.softmax(z.masked_fill(~keep, float("-inf")), dim=-1)


def tp_sorted_mask_on_ids(logits, p, temperature=1.0):
    z = logits / temperature
    sp = torch.sort(torch.softmax(z, dim=-1), dim=-1, descending=True, stable=True).values
    keep = torch.cumsum(sp, -1) - sp < p
    return torch.softmax(z.masked_fill(~keep, float("-inf")), dim=-1)


def _bs(parent="flat", start="prompt", only_best=False, position=-1, ids=None, out=None):
    """A beam search written as a learner wrote it, with one slip."""

    def beam_search(model, prompt, beam_width, max_new_tokens):
        beams = prompt.clone() if start == "prompt" else prompt.repeat(beam_width, 1)
        scores = torch.zeros(beams.shape[0], dtype=torch.float64)
        for _ in range(max_new_tokens):
            logp = torch.log_softmax(model(beams)[:, position, :], dim=-1)
            V = logp.shape[-1]
            rows = 1 if only_best else len(beams)
            cand = (scores[:rows, None] + logp[:rows]).reshape(-1)
            order = torch.sort(cand, descending=True, stable=True).indices[:beam_width]
            if parent == "swapped":
                b, t = order % len(beams), order // len(beams)
            else:
                b, t = order // V, order % V
            if parent == "none":
                kept = beams.expand(len(t), -1) if beams.shape[0] == 1 else beams
            else:
                kept = beams[b]
            beams = torch.cat([kept, t[:, None]], dim=1)
            if ids == "float":
                beams = beams.double()
            scores = cand[order]
        if out == "worst first":
            return beams.flip(0), scores.flip(0)
        if out == "per token":
            return beams, scores / beams.shape[1]
        return beams, scores

    return beam_search


def bs_greedy_after_first(model, prompt, beam_width, max_new_tokens):
    logp0 = torch.log_softmax(model(prompt)[:, -1], -1)[0]
    v, t = torch.sort(logp0, descending=True, stable=True)
    beams = torch.cat([prompt.repeat(beam_width, 1), t[:beam_width, None]], 1)
    scores = v[:beam_width].clone()
    for _ in range(max_new_tokens - 1):
        best = torch.log_softmax(model(beams)[:, -1], -1).max(-1)
        beams = torch.cat([beams, best.indices[:, None]], 1)
        scores = scores + best.values
    o = torch.sort(scores, descending=True, stable=True).indices
    return beams[o], scores[o]


def _rms(init=torch.ones, in_place=False, gain_first=False, mean_abs=False):
    class Learner(nn.Module):
        def __init__(self, d_model, eps=1e-5):
            super().__init__()
            self.eps = eps
            self.weight = nn.Parameter(init(d_model))

        def forward(self, x):
            if gain_first:
                x = self.weight * x
                return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
            if mean_abs:
                return self.weight * x / (x.abs().mean(dim=-1, keepdim=True) + self.eps)
            if in_place:
                x.mul_(torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps))
                return self.weight * x
            return self.weight * x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)

    return Learner


class _SwiLinear(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.W_gate = nn.Linear(d_model, d_ff, bias=False)
        self.W_up = nn.Linear(d_model, d_ff, bias=False)
        self.W_down = nn.Linear(d_ff, d_model, bias=False)


class SwiWeightNoT(_SwiLinear):
    def forward(self, x):
        h = F.silu(x @ self.W_gate.weight) * (x @ self.W_up.weight)
        return h @ self.W_down.weight


class SwiUpAsDown(_SwiLinear):
    def forward(self, x):
        return (F.silu(self.W_gate(x)) * self.W_up(x)) @ self.W_up.weight


class SwiSigmoidOfUp(_SwiLinear):
    def forward(self, x):
        return self.W_down(self.W_gate(x) * torch.sigmoid(self.W_up(x)))


CORPUS += [
    ("loss_metrics", "review: e to minus the loss", lm_exp_minus, "minus"),
    ("loss_metrics", "review: 1/ln 2 as 1.44", lm_times_1_44, "rounded"),
    ("loss_metrics", "review: math.exp on an array", lm_math_exp, "NumPy's functions"),
    ("loss_metrics", "review: a list over rows", lm_list_of_rows, "rows, not numbers"),
    ("top_k", "review: sorted[k] keeps k + 1", tk_sorted_index_k, "k + 1"),
    ("top_k", "review: kthvalue", tk_kthvalue, "smallest"),
    ("top_k", "review: renormalised by the max", tk_renormalise_by_max, "largest one"),
    ("top_k", "review: the first of topk", tk_first_of_topk, "only the maximum"),
    ("top_k", "review: probabilities over T", tk_probs_over_t, "after the softmax"),
    ("top_k", "review: values[-1]", tk_last_row_threshold, "equivalent of this slip"),
    ("top_p", "review: cumsum < p, first kept", tp_cum_lt_p_first_kept, "*before*"),
    ("top_p", "review: cumsum <= p, first kept", tp_cum_le_p_first_kept, "crosses p is kept"),
    ("top_p", "review: inverted mask", tp_inverted, "inverted"),
    ("top_p", "review: mass in id order", tp_id_order, "token-id order"),
    ("top_p", "review: gathered values", tp_gather_values, "gather(-1, order)"),
    ("top_p", "review: mass of logits", tp_logit_mass, "adds up logits"),
    ("top_p", "review: sorted mask on ids", tp_sorted_mask_on_ids, "sorted order"),
    ("beam_search", "review: not reordered", _bs(parent="none"), "parent beam"),
    ("beam_search", "review: // and % swapped", _bs(parent="swapped"), "wrong way round"),
    ("beam_search", "review: copies of the prompt", _bs(start="copies"), "copies"),
    ("beam_search", "review: best beam only", _bs(only_best=True), "only the best beam"),
    ("beam_search", "review: position 0", _bs(position=0), "first position"),
    ("beam_search", "review: float ids", _bs(ids="float"), "integers"),
    ("beam_search", "review: worst first", _bs(out="worst first"), "worst first"),
    ("beam_search", "review: per token", _bs(out="per token"), "length"),
    ("beam_search", "review: greedy after the first", bs_greedy_after_first, "greedy per beam"),
    ("rms_norm", "review: zeros init", _rms(init=torch.zeros), "d_model ones"),
    ("rms_norm", "review: randn init", _rms(init=torch.randn), "d_model ones"),
    ("rms_norm", "review: x.mul_", _rms(in_place=True), "in place"),
    ("rms_norm", "review: gain first", _rms(gain_first=True), "before normalising"),
    ("rms_norm", "review: mean |x|", _rms(mean_abs=True), "mean absolute"),
    ("swiglu", "review: .weight without .T", SwiWeightNoT, "(d_out, d_in)"),
    ("swiglu", "review: W_up as W_down", SwiUpAsDown, "never used"),
    ("swiglu", "review: sigmoid of up", SwiSigmoidOfUp, "sigmoid of the up"),
    ("tied_savings", "review: V + D", 512 + 192, "V + D"),
    ("tied_savings", "review: 98,000", 98000, "exact"),
    ("tied_savings", "review: 98,305", 98305, "exact"),
    ("tied_savings", "review: both layers and bias", 2 * 512 * 192 + 512, "both"),
    ("tied_savings", "review: bytes", 4 * 512 * 192, "bytes"),
    ("tied_savings", "review: a word that is not the unit", "98304 bytes", "'bytes'"),
]  # fmt: skip


# ------------------------------------------------------------------ round 7


def r7_metrics_mean_floats(loss):
    return float(np.exp(loss).mean()), float((loss / np.log(2)).mean())


def r7_top_k_threshold_no_axis(logits, k, temperature=1.0):
    z = logits / temperature
    thr = torch.topk(z, k, dim=-1).values[..., -1]
    return torch.softmax(z.masked_fill(z < thr, float("-inf")), dim=-1)


def r7_top_k_power_after_softmax(logits, k, temperature=1.0):
    thr = torch.topk(logits, k, dim=-1).values[..., -1:]
    p = torch.softmax(logits.masked_fill(logits < thr, float("-inf")), dim=-1)
    return p ** (1 / temperature)


def r7_top_k_strict(logits, k, temperature=1.0):
    z = logits / temperature
    thr = torch.topk(z, k, dim=-1).values[..., -1:]
    return torch.softmax(z.masked_fill(~(z > thr), float("-inf")), dim=-1)


def r7_top_p_by_value(logits, p, temperature=1.0):
    probs = torch.softmax(logits / temperature, dim=-1)
    sp, _si = torch.sort(probs, dim=-1, descending=True, stable=True)
    keep = (torch.cumsum(sp, -1) - sp) < p
    smallest = torch.where(keep, sp, torch.full_like(sp, 2.0)).min(-1, keepdim=True).values
    out = torch.where(probs >= smallest, probs, torch.zeros_like(probs))
    return out / out.sum(-1, keepdim=True)


def r7_beam_split_by_width(model, prompt, beam_width, max_new_tokens):
    beams, scores = prompt, torch.zeros(1, dtype=torch.float64)
    for _ in range(max_new_tokens):
        lp = torch.log_softmax(model(beams)[:, -1, :], dim=-1)
        flat = (scores[:, None] + lp).reshape(-1)
        order = torch.sort(flat, descending=True, stable=True).indices[:beam_width]
        b, t = order // beam_width, order % beam_width
        b = b.clamp(max=beams.shape[0] - 1)
        beams = torch.cat([beams[b], t[:, None]], dim=1)
        scores = flat[order]
    return beams, scores


class SwiNoDown(_SwiLinear):
    def forward(self, x):
        return F.silu(self.W_gate(x)) * self.W_up(x)


class SwiBiasTrue(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.W_gate = nn.Linear(d_model, d_ff)
        self.W_up = nn.Linear(d_model, d_ff)
        self.W_down = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.W_down(F.silu(self.W_gate(x)) * self.W_up(x))


# The learner's round 7: generic or misleading before (a nucleus chosen by value was "the
# right answer times 0.5"; a scalar result was "a hard-coded example?").
ROUND_SEVEN = [
    ("loss_metrics", "round 7: float(...mean())", r7_metrics_mean_floats, "reduction"),
    ("top_k", "round 7: threshold values[..., -1]", r7_top_k_threshold_no_axis, "lost its axis"),
    ("top_k", "round 7: p ** (1 / temperature) after the softmax", r7_top_k_power_after_softmax, "after the softmax"),
    ("top_k", "round 7: ~(z > thr)", r7_top_k_strict, "equal case"),
    ("top_p", "round 7: nucleus chosen by value", r7_top_p_by_value, "by probability value"),
    ("beam_search", "round 7: flat index split by beam_width", r7_beam_split_by_width, "beam_width"),
    ("swiglu", "round 7: no W_down", SwiNoDown, "W_down"),
    ("swiglu", "round 7: bias=True", SwiBiasTrue, "biases"),
    ("tied_savings", "round 7: 512 × 196", 512 * 196, "196"),
]  # fmt: skip

CORPUS += ROUND_SEVEN


def test_round_seven_misleading_and_blaming_words_are_gone():
    """The nucleus chosen by value is not a scale factor; a scalar is not a hard-coded
    example; a layer that cannot take the weights is the layer's problem, not the check's."""
    for check, answer, wrong_words in (
        (check_top_p, r7_top_p_by_value, "multiplied by"),
        (check_loss_metrics, r7_metrics_mean_floats, "hard-coded"),
        (check_swiglu, SwiBiasTrue, "the check could not"),
        (check_top_k, r7_top_k_strict, "`z <= kth` decides"),
    ):
        result = check(answer)
        assert not result.passed
        assert wrong_words not in f"{result.message}\n{result.diagnosis}", result.text


# The corpus's tests (tests/grading/corpus.py): every exercise covered, no wrong answer
# accepted or misled, at least 9 in 10 specific (the right answers are in test_ch09.py).
(
    test_the_corpus_covers_every_exercise_and_is_large,
    test_no_wrong_answer_passes_or_is_misled,
    _,
    test_at_least_nine_in_ten_get_a_specific_diagnosis,
) = chapter_tests(CHECKS, CORPUS)
