"""Chapter 7's graders against wrong answers written as learners write them.

Wrong answers to exercises 7.1-7.8 and the predictions 7.3, 7.5 and 7.9, written here
without looking at the graders' planted or generated mistakes: ``Tensor.var``'s default,
eps outside the root, a detour through NumPy, a block that forgets the ``[0]`` of the
attention's pair, the padding id written as 0 in decoding and in the loss, ids hard-coded,
each with words its diagnosis must contain (classes: see ``corpus.py``). The right answers
written two ways or more are in ``test_ch07.py``.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from corpus import classify, tally
from test_ch07 import DecoderParts, EncoderParts

from attnlab.grading.ch07 import (
    check_block_parameters,
    check_decoder_block,
    check_encoder_block,
    check_feed_forward,
    check_final_norm,
    check_greedy_decode,
    check_initial_loss,
    check_layer_norm,
    check_training_loss,
)

CHECKS = {
    "layer_norm": check_layer_norm,
    "feed_forward": check_feed_forward,
    "block_parameters": check_block_parameters,
    "encoder_block": check_encoder_block,
    "final_norm": check_final_norm,
    "decoder_block": check_decoder_block,
    "greedy_decode": check_greedy_decode,
    "training_loss": check_training_loss,
    "initial_loss": check_initial_loss,
}


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# ------------------------------------------------------------------ 7.1 LayerNorm


def ln_var_default(x, gamma, beta, eps=1e-5):
    return gamma * (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True) + eps) + beta


def ln_eps_outside(x, gamma, beta, eps=1e-5):
    mu = x.mean(-1, keepdim=True)
    sd = ((x - mu) ** 2).mean(-1, keepdim=True).sqrt()
    return gamma * (x - mu) / (sd + eps) + beta


def ln_numpy(x, gamma, beta, eps=1e-5):
    a = x.detach().numpy()
    mu = a.mean(-1, keepdims=True)
    var = a.var(-1, keepdims=True)
    return torch.from_numpy(
        gamma.detach().numpy() * (a - mu) / (var + eps) ** 0.5 + beta.detach().numpy()
    )


def ln_over_positions(x, gamma, beta, eps=1e-5):
    mu = x.mean(-2, keepdim=True)
    var = ((x - mu) ** 2).mean(-2, keepdim=True)
    return gamma * (x - mu) / torch.sqrt(var + eps) + beta


def ln_no_keepdim(x, gamma, beta, eps=1e-5):
    mu = x.mean(-1)
    var = ((x - mu[..., None]) ** 2).mean(-1)
    return gamma * (x - mu[..., None]) / torch.sqrt(var + eps) + beta


def ln_detached_stats(x, gamma, beta, eps=1e-5):
    mu = x.mean(-1, keepdim=True).detach()
    var = x.var(-1, keepdim=True, unbiased=False).detach()
    return gamma * (x - mu) / torch.sqrt(var + eps) + beta


def ln_beta_gamma_swapped(x, gamma, beta, eps=1e-5):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return beta * (x - mu) / torch.sqrt(var + eps) + gamma


# ------------------------------------------------------------------ 7.2 feed-forward


def ffn_no_relu(x, W_1, b_1, W_2, b_2):
    return (x @ W_1 + b_1) @ W_2 + b_2


def ffn_relu_at_end(x, W_1, b_1, W_2, b_2):
    return F.relu((x @ W_1 + b_1) @ W_2 + b_2)


def ffn_transposed(x, W_1, b_1, W_2, b_2):
    return F.relu(x @ W_2.T + b_1) @ W_1.T + b_2


def ffn_plus_x(x, W_1, b_1, W_2, b_2):
    return x + torch.relu(x @ W_1 + b_1) @ W_2 + b_2


def ffn_gelu(x, W_1, b_1, W_2, b_2):
    return F.gelu(x @ W_1 + b_1) @ W_2 + b_2


def ffn_numpy(x, W_1, b_1, W_2, b_2):
    h = (x @ W_1 + b_1).detach().numpy().clip(min=0)
    return torch.from_numpy(h) @ W_2 + b_2


def ffn_sequential_no_grad(x, W_1, b_1, W_2, b_2):
    D, d_ff = W_1.shape
    net = torch.nn.Sequential(torch.nn.Linear(D, d_ff), torch.nn.ReLU(), torch.nn.Linear(d_ff, D))
    net = net.double()
    with torch.no_grad():
        net[0].weight.copy_(W_1.T)
        net[0].bias.copy_(b_1)
        net[2].weight.copy_(W_2.T)
        net[2].bias.copy_(b_2)
        return net(x)


def ffn_bias_after_relu(x, W_1, b_1, W_2, b_2):
    return (torch.relu(x @ W_1) + b_1) @ W_2 + b_2


# ------------------------------------------------------------------ 7.4 encoder block


class EncNoIndex(EncoderParts):
    def forward(self, x, mask=None):
        if self.norm_first:
            x = x + self.self_attn(self.norm1(x), mask=mask)
            return x + self.ffn(self.norm2(x))
        x = self.norm1(x + self.self_attn(x, mask=mask))
        return self.norm2(x + self.ffn(x))


class EncPreLNResidualNormalised(EncoderParts):
    def forward(self, x, mask=None):
        if self.norm_first:
            h = self.norm1(x)
            h = h + self.self_attn(h, mask=mask)[0]
            h2 = self.norm2(h)
            return h2 + self.ffn(h2)
        x = self.norm1(x + self.self_attn(x, mask=mask)[0])
        return self.norm2(x + self.ffn(x))


class EncNoMask(EncoderParts):
    def forward(self, x, mask=None):
        if self.norm_first:
            x = x + self.self_attn(self.norm1(x))[0]
            return x + self.ffn(self.norm2(x))
        x = self.norm1(x + self.self_attn(x)[0])
        return self.norm2(x + self.ffn(x))


class EncInvertedMask(EncoderParts):
    def forward(self, x, mask=None):
        m = None if mask is None else ~mask
        if self.norm_first:
            x = x + self.self_attn(self.norm1(x), mask=m)[0]
            return x + self.ffn(self.norm2(x))
        x = self.norm1(x + self.self_attn(x, mask=m)[0])
        return self.norm2(x + self.ffn(x))


class EncOneNorm(EncoderParts):
    def forward(self, x, mask=None):
        if self.norm_first:
            x = x + self.self_attn(self.norm1(x), mask=mask)[0]
            return x + self.ffn(self.norm1(x))
        x = self.norm1(x + self.self_attn(x, mask=mask)[0])
        return self.norm1(x + self.ffn(x))


class EncPostOnly(EncoderParts):
    def forward(self, x, mask=None):
        x = self.norm1(x + self.self_attn(x, mask=mask)[0])
        return self.norm2(x + self.ffn(x))


class EncFfnOnInput(EncoderParts):
    def forward(self, x, mask=None):
        if self.norm_first:
            a = x + self.self_attn(self.norm1(x), mask=mask)[0]
            return a + self.ffn(self.norm2(x))
        a = self.norm1(x + self.self_attn(x, mask=mask)[0])
        return self.norm2(a + self.ffn(x))


# ------------------------------------------------------------------ 7.6 decoder block


class DecQueriesFromMemory(DecoderParts):
    def forward(self, x, memory, self_mask=None, memory_mask=None):
        sub = [
            (lambda h: self.self_attn(h, mask=self_mask)[0], self.norm1),
            (lambda h: self.cross_attn(memory, h, h, mask=memory_mask)[0], self.norm2),
            (self.ffn, self.norm3),
        ]
        for f, n in sub:
            x = x + f(n(x)) if self.norm_first else n(x + f(x))
        return x


class DecNoCausal(DecoderParts):
    def forward(self, x, memory, self_mask=None, memory_mask=None):
        sub = [
            (lambda h: self.self_attn(h)[0], self.norm1),
            (lambda h: self.cross_attn(h, memory, memory, mask=memory_mask)[0], self.norm2),
            (self.ffn, self.norm3),
        ]
        for f, n in sub:
            x = x + f(n(x)) if self.norm_first else n(x + f(x))
        return x


class DecMemoryNormalised(DecoderParts):
    def forward(self, x, memory, self_mask=None, memory_mask=None):
        if self.norm_first:
            x = x + self.self_attn(self.norm1(x), mask=self_mask)[0]
            m = self.norm2(memory)
            x = x + self.cross_attn(self.norm2(x), m, m, mask=memory_mask)[0]
            return x + self.ffn(self.norm3(x))
        x = self.norm1(x + self.self_attn(x, mask=self_mask)[0])
        x = self.norm2(x + self.cross_attn(x, memory, memory, mask=memory_mask)[0])
        return self.norm3(x + self.ffn(x))


class DecNoMemoryMask(DecoderParts):
    def forward(self, x, memory, self_mask=None, memory_mask=None):
        sub = [
            (lambda h: self.self_attn(h, mask=self_mask)[0], self.norm1),
            (lambda h: self.cross_attn(h, memory, memory)[0], self.norm2),
            (self.ffn, self.norm3),
        ]
        for f, n in sub:
            x = x + f(n(x)) if self.norm_first else n(x + f(x))
        return x


class DecSelfMaskForCross(DecoderParts):
    def forward(self, x, memory, self_mask=None, memory_mask=None):
        sub = [
            (lambda h: self.self_attn(h, mask=memory_mask)[0], self.norm1),
            (lambda h: self.cross_attn(h, memory, memory, mask=self_mask)[0], self.norm2),
            (self.ffn, self.norm3),
        ]
        for f, n in sub:
            x = x + f(n(x)) if self.norm_first else n(x + f(x))
        return x


class DecNoCrossResidual(DecoderParts):
    def forward(self, x, memory, self_mask=None, memory_mask=None):
        if self.norm_first:
            x = x + self.self_attn(self.norm1(x), mask=self_mask)[0]
            x = self.cross_attn(self.norm2(x), memory, memory, mask=memory_mask)[0]
            return x + self.ffn(self.norm3(x))
        x = self.norm1(x + self.self_attn(x, mask=self_mask)[0])
        x = self.norm2(self.cross_attn(x, memory, memory, mask=memory_mask)[0])
        return self.norm3(x + self.ffn(x))


# ------------------------------------------------------------------ 7.7 greedy decoding


def _decoder(pad=None, eos=None, bos=None, last=True, stop_any=False, keep_bos=False, ev=True):
    @torch.no_grad()
    def greedy_decode(model, src, bos_id, eos_id, max_len):
        if ev:
            model.eval()
        memory, src_mask = model.encode(src)
        start = bos_id if bos is None else bos
        stop = eos_id if eos is None else eos
        fill = model.pad_id if pad is None else pad
        ys = torch.full((src.shape[0], 1), start, dtype=torch.long)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        for _ in range(max_len):
            logits = model.decode(ys, memory, src_mask)
            nxt = logits[:, -1 if last else 0].argmax(-1)
            nxt[done] = fill
            ys = torch.cat([ys, nxt[:, None]], dim=1)
            done = done | (nxt == stop)
            if done.any() if stop_any else done.all():
                break
        return ys if keep_bos else ys[:, 1:]

    return greedy_decode


@torch.no_grad()
def greedy_python_lists(model, src, bos_id, eos_id, max_len):
    model.eval()
    memory, src_mask = model.encode(src)
    rows = [[bos_id] for _ in range(src.shape[0])]
    for _ in range(max_len):
        logits = model.decode(torch.tensor(rows), memory, src_mask)
        for b, token in enumerate(logits[:, -1].argmax(-1).tolist()):
            rows[b].append(0 if eos_id in rows[b][1:] else token)
        if all(eos_id in r[1:] for r in rows):
            break
    return torch.tensor([r[1:] for r in rows])


# ------------------------------------------------------------------ 7.8 the loss


def loss_pad_zero(model, src, tgt, pad_id):
    logits = model(src, tgt[:, :-1])
    return F.cross_entropy(logits.flatten(0, 1), tgt[:, 1:].flatten(), ignore_index=0)


def loss_no_ignore(model, src, tgt, pad_id):
    logits = model(src, tgt[:, :-1])
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt[:, 1:].reshape(-1))


def loss_no_shift(model, src, tgt, pad_id):
    logits = model(src, tgt)
    return F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1), ignore_index=pad_id
    )


def loss_unflattened(model, src, tgt, pad_id):
    return F.cross_entropy(model(src, tgt[:, :-1]), tgt[:, 1:], ignore_index=pad_id)


def loss_log_softmax_nll_sum(model, src, tgt, pad_id):
    logp = model(src, tgt[:, :-1]).log_softmax(-1)
    target = tgt[:, 1:]
    nll = -logp.gather(-1, target[..., None])[..., 0]
    return (nll * (target != pad_id)).sum()


def loss_mask_from_input(model, src, tgt, pad_id):
    tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]
    per = F.cross_entropy(model(src, tgt_in).transpose(1, 2), tgt_out, reduction="none")
    keep = (tgt_in != pad_id).float()
    return (per * keep).sum() / keep.sum()


def loss_float(model, src, tgt, pad_id):
    logits = model(src, tgt[:, :-1])
    return F.cross_entropy(logits.flatten(0, 1), tgt[:, 1:].flatten(), ignore_index=pad_id).item()


def loss_probabilities(model, src, tgt, pad_id):
    probs = model(src, tgt[:, :-1]).softmax(-1)
    return F.cross_entropy(probs.flatten(0, 1), tgt[:, 1:].flatten(), ignore_index=pad_id)


# ------------------------------------------------------------------ the corpus

_ATTENTION = 4 * 768 * 768 + 4 * 768
_FFN = 2 * 768 * 3072 + 3072 + 768
_NORMS = 2 * 2 * 768

CORPUS = [
    ("layer_norm", "Tensor.var's default", ln_var_default, "D - 1"),
    ("layer_norm", "eps outside the root", ln_eps_outside, "under the root"),
    ("layer_norm", "through NumPy", ln_numpy, "torch"),
    ("layer_norm", "statistics over the positions", ln_over_positions, "axis"),
    ("layer_norm", "no keepdim", ln_no_keepdim, "keep"),
    ("layer_norm", "detached statistics", ln_detached_stats, "gradient"),
    ("layer_norm", "gamma and beta swapped", ln_beta_gamma_swapped, "gamma"),
    ("feed_forward", "no ReLU", ffn_no_relu, "non-linearity"),
    ("feed_forward", "ReLU at the end", ffn_relu_at_end, "ReLU"),
    ("feed_forward", "transposed weights", ffn_transposed, "W_2ᵀ"),
    ("feed_forward", "residual added", ffn_plus_x, "residual"),
    ("feed_forward", "GELU", ffn_gelu, "ReLU"),
    ("feed_forward", "ReLU through NumPy", ffn_numpy, "gradient"),
    ("feed_forward", "b_1 after the ReLU", ffn_bias_after_relu, "b_1"),
    ("feed_forward", "weights copied into nn.Linear", ffn_sequential_no_grad, "no_grad"),
    ("block_parameters", "no biases", 4 * 768 * 768 + 2 * 768 * 3072, "bias"),
    ("block_parameters", "no LayerNorms", _ATTENTION + _FFN, "LayerNorm"),
    ("block_parameters", "heads multiply", 12 * _ATTENTION + _FFN + _NORMS, "heads"),
    ("block_parameters", "the whole encoder", 12 * (_ATTENTION + _FFN + _NORMS), "one block"),
    ("block_parameters", "attention only", _ATTENTION, "feed-forward"),
    ("encoder_block", "attention's pair not indexed", EncNoIndex, "pair"),
    ("encoder_block", "pre-LN stream normalised", EncPreLNResidualNormalised, "un-normalised"),
    ("encoder_block", "mask not passed", EncNoMask, "mask"),
    ("encoder_block", "mask inverted", EncInvertedMask, "mask"),
    ("encoder_block", "norm1 twice", EncOneNorm, "norm2"),
    ("encoder_block", "post-LN only", EncPostOnly, "norm_first"),
    ("encoder_block", "FFN reads the block's input", EncFfnOnInput, "block's input"),
    ("final_norm", "a", "a", "weights"),
    ("final_norm", "c", "c", "warm-up"),
    ("final_norm", "d", "d", "undo"),
    ("final_norm", "e", "e", "one of"),
    ("final_norm", "2", 2, "one of"),
    ("decoder_block", "queries from memory", DecQueriesFromMemory, "queries"),
    ("decoder_block", "no causal mask", DecNoCausal, "self_mask"),
    ("decoder_block", "memory normalised", DecMemoryNormalised, "memory"),
    ("decoder_block", "memory mask not passed", DecNoMemoryMask, "memory_mask"),
    ("decoder_block", "masks swapped", DecSelfMaskForCross, "mask"),
    ("decoder_block", "no residual around cross-attention", DecNoCrossResidual, "residual"),
    ("greedy_decode", "pad written as 0", _decoder(pad=0), "model.pad_id"),
    ("greedy_decode", "EOS written as 2", _decoder(eos=2), "eos_id"),
    ("greedy_decode", "BOS written as 1", _decoder(bos=1), "bos_id"),
    ("greedy_decode", "the first position's logits", _decoder(last=False), "last"),
    ("greedy_decode", "stops at the first EOS", _decoder(stop_any=True), "every row"),
    ("greedy_decode", "BOS kept", _decoder(keep_bos=True), "BOS"),
    ("greedy_decode", "no model.eval()", _decoder(ev=False), "model.eval()"),
    ("greedy_decode", "lists, pad written as 0", greedy_python_lists, "model.pad_id"),
    ("training_loss", "ignore_index=0", loss_pad_zero, "pad_id"),
    ("training_loss", "padding counted", loss_no_ignore, "padding"),
    ("training_loss", "no shift", loss_no_shift, "shift"),
    ("training_loss", "logits not flattened", loss_unflattened, "flatten"),
    ("training_loss", "a sum", loss_log_softmax_nll_sum, "mean"),
    ("training_loss", "padding of the input", loss_mask_from_input, "target"),
    ("training_loss", ".item()", loss_float, "backward"),
    ("training_loss", "softmax first", loss_probabilities, "softmax"),
    ("initial_loss", "log2", math.log2(50_257), "natural log"),
    ("initial_loss", "log10", math.log10(50_257), "natural log"),
    ("initial_loss", "1/n_vocab", 1 / 50_257, "minus the log"),
    ("initial_loss", "n_vocab", 50_257.0, "log"),
    ("initial_loss", "0", 0.0, "perfect"),
]  # fmt: skip


def test_the_corpus_covers_every_exercise_and_is_large():
    assert {e for e, *_ in CORPUS} == set(CHECKS)
    for exercise in CHECKS:
        assert sum(e == exercise for e, *_ in CORPUS) >= 5, exercise
    labels = [(e, what) for e, what, _, _ in CORPUS]
    assert len(labels) == len(set(labels))


@pytest.mark.parametrize(
    ("exercise", "what", "answer", "words"), CORPUS, ids=[f"{e}: {w}" for e, w, _, _ in CORPUS]
)
def test_no_wrong_answer_passes_or_is_misled(exercise, what, answer, words):
    kind, result = classify(CHECKS[exercise], answer, words)
    assert kind != "accepted", f"{what}: a wrong answer passed"
    assert kind != "misleading", f"{what}: expected {words!r}\n{result.text}"


def test_at_least_nine_in_ten_get_a_specific_diagnosis():
    counts = tally(CHECKS, CORPUS)
    assert counts["misleading"] == 0 and counts["accepted"] == 0, counts
    assert counts["specific"] >= 0.9 * len(CORPUS), counts
