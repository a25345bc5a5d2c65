"""Chapter 7's graders against wrong answers written as learners write them.

Wrong answers to exercises 7.1-7.8 and the predictions 7.3, 7.5 and 7.9, written here
without looking at the graders' planted or generated mistakes: ``Tensor.var``'s default,
eps outside the root, a detour through NumPy, a block that forgets the ``[0]`` of the
attention's pair, the padding id written as 0 in decoding and in the loss, ids hard-coded,
each with words its diagnosis must contain (classes: see ``corpus.py``). The right answers
written two ways or more are in ``test_ch07.py``.
"""

from __future__ import annotations

import linecache
import math

import pytest
import torch
import torch.nn.functional as F
from corpus import chapter_tests, classify
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


# The corpus's tests (tests/grading/corpus.py): every exercise covered, no wrong answer
# accepted or misled, at least 9 in 10 specific (the right answers are in test_chNN.py).
(
    test_the_corpus_covers_every_exercise_and_is_large,
    test_no_wrong_answer_passes_or_is_misled,
    _,
    test_at_least_nine_in_ten_get_a_specific_diagnosis,
) = chapter_tests(CHECKS, CORPUS)


# ------------------------------------------------------------------ a learner's attempts
# Every attempt of an independent learner (chapter 7 taken in a real kernel, through the
# notebook's check cells) whose message was not specific, a crash, misleading, accepted, or
# a right answer refused: the code as the learner wrote it, with words its diagnosis must
# contain. The learner's right answers that were refused must pass.

LEARNER = [
    ('layer_norm', 'stats over axis 1 (tested on 2-D input)', 'def layer_norm(x, gamma, beta, eps=1e-5):\n    mu = x.mean(dim=1, keepdim=True)\n    var = ((x - mu) ** 2).mean(dim=1, keepdim=True)\n    return gamma * (x - mu) / torch.sqrt(var + eps) + beta\n', 'axis 1'),
    ('layer_norm', 'hard-coded eps 1e-3 (ignores the argument)', 'def layer_norm(x, gamma, beta, eps=1e-5):\n    mu = x.mean(-1, keepdim=True)\n    sd = torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + 1e-3)\n    return gamma * (x - mu) / sd + beta\n', 'constant'),
    ('feed_forward', 'torch.maximum(h, 0) TypeError', 'def feed_forward(x, W_1, b_1, W_2, b_2):\n    return torch.maximum(x @ W_1 + b_1, 0) @ W_2 + b_2\n', 'torch.maximum'),
    ('feed_forward', 'ReLU on the input instead of hidden', 'def feed_forward(x, W_1, b_1, W_2, b_2):\n    return (torch.relu(x) @ W_1 + b_1) @ W_2 + b_2\n', 'input x'),
    ('feed_forward', 'leaky relu', 'def feed_forward(x, W_1, b_1, W_2, b_2):\n    return F.leaky_relu(x @ W_1 + b_1, 0.1) @ W_2 + b_2\n', 'leaky'),
    ('block_parameters', 'no biases (4D^2 + 2 D dff + LN)', 'answer = 4*768*768 + 2*768*3072 + 4*768\ncheck_block_parameters(answer)\n', 'biases'),
    ('block_parameters', 'forgot W_o (3 matrices)', 'answer = 3*768*768 + 3*768 + 2*768*3072 + 3072 + 768 + 4*768\ncheck_block_parameters(answer)\n', 'W_o'),
    ('block_parameters', 'one LayerNorm only', 'answer = 4*768*768 + 4*768 + 2*768*3072 + 3072 + 768 + 2*768\ncheck_block_parameters(answer)\n', 'one LayerNorm'),
    ('block_parameters', 'biases of FFN both sized D (2D)', 'answer = 4*768*768 + 4*768 + 2*768*3072 + 2*768 + 4*768\ncheck_block_parameters(answer)\n', 'b_1'),
    ('block_parameters', 'rough: 7 million', 'answer = 7_000_000\ncheck_block_parameters(answer)\n', 'exact'),
    ('block_parameters', 'per-head d_k=64 matrices: 4*768*64', 'answer = 4*768*64 + 4*64 + 2*768*3072 + 3072 + 768 + 4*768\ncheck_block_parameters(answer)\n', '768 x 64'),
    ('initial_loss', 'sign slip -ln V', 'answer = -math.log(50257)\ncheck_initial_loss(answer)\n', 'sign'),
    ('initial_loss', 'ln(28) from the date task', 'answer = math.log(28)\ncheck_initial_loss(answer)\n', '28'),
    ('initial_loss', 'about 1 (uniform => loss 1)', 'answer = 1.0\ncheck_initial_loss(answer)\n', 'loss of 1'),
    ('encoder_block', 'placements swapped (if not self.norm_first)', 'class MyEncoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n\n    def forward(self, x, mask=None):\n        if not self.norm_first:\n            x = x + self.self_attn(self.norm1(x), mask=mask)[0]\n            x = x + self.ffn(self.norm2(x))\n        else:\n            x = self.norm1(x + self.self_attn(x, mask=mask)[0])\n            x = self.norm2(x + self.ffn(x))\n        return x\n', 'swapped'),
    ('encoder_block', 'FFN before attention', 'class MyEncoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n\n    def forward(self, x, mask=None):\n        if self.norm_first:\n            x = x + self.ffn(self.norm1(x))\n            x = x + self.self_attn(self.norm2(x), mask=mask)[0]\n        else:\n            x = self.norm1(x + self.ffn(x))\n            x = self.norm2(x + self.self_attn(x, mask=mask)[0])\n        return x\n', 'order'),
    ('encoder_block', 'uses the attention weights [1] instead of out', 'class MyEncoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n\n    def forward(self, x, mask=None):\n        if self.norm_first:\n            x = x + self.self_attn(self.norm1(x), mask=mask)[1]\n            x = x + self.ffn(self.norm2(x))\n        else:\n            x = self.norm1(x + self.self_attn(x, mask=mask)[1])\n            x = self.norm2(x + self.ffn(x))\n        return x\n', '[0]'),
    ('encoder_block', 'pre-LN residual from x0 for both (keeps original input)', 'class MyEncoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n\n    def forward(self, x, mask=None):\n        if self.norm_first:\n            a = x + self.self_attn(self.norm1(x), mask=mask)[0]\n            x = x + self.ffn(self.norm2(a))\n        else:\n            x = self.norm1(x + self.self_attn(x, mask=mask)[0])\n            x = self.norm2(x + self.ffn(x))\n        return x\n', 'lost'),
    ('encoder_block', 'post-LN with the norm inside the residual: x + LN(sublayer(x))', 'class MyEncoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n\n    def forward(self, x, mask=None):\n        if self.norm_first:\n            x = x + self.self_attn(self.norm1(x), mask=mask)[0]\n            x = x + self.ffn(self.norm2(x))\n        else:\n            x = x + self.norm1(self.self_attn(x, mask=mask)[0])\n            x = x + self.norm2(self.ffn(x))\n        return x\n', 'normalises the sum'),
    ('decoder_block', 'cross-attn keys/values from x (self-attention twice)', 'class MyDecoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.cross_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n        self.norm3 = LayerNorm(d_model)\n\n    def forward(self, x, memory, self_mask=None, memory_mask=None):\n        if self.norm_first:\n            h = self.norm1(x)\n            x = x + self.self_attn(h, mask=self_mask)[0]\n            h = self.norm2(x)\n            x = x + self.cross_attn(h, h, h, mask=memory_mask)[0]\n            x = x + self.ffn(self.norm3(x))\n        else:\n            x = self.norm1(x + self.self_attn(x, mask=self_mask)[0])\n            x = self.norm2(x + self.cross_attn(x, x, x, mask=memory_mask)[0])\n            x = self.norm3(x + self.ffn(x))\n        return x\n', "decoder's own tokens"),
    ('decoder_block', 'pre-LN: cross-attn query from un-normalised x', 'class MyDecoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.cross_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n        self.norm3 = LayerNorm(d_model)\n\n    def forward(self, x, memory, self_mask=None, memory_mask=None):\n        if self.norm_first:\n            h = self.norm1(x)\n            x = x + self.self_attn(h, mask=self_mask)[0]\n            h = self.norm2(x)\n            x = x + self.cross_attn(x, memory, memory, mask=memory_mask)[0]\n            x = x + self.ffn(self.norm3(x))\n        else:\n            x = self.norm1(x + self.self_attn(x, mask=self_mask)[0])\n            x = self.norm2(x + self.cross_attn(x, memory, memory, mask=memory_mask)[0])\n            x = self.norm3(x + self.ffn(x))\n        return x\n', 'raw stream'),
    ('decoder_block', 'norm2/norm3 swapped', 'class MyDecoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.cross_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n        self.norm3 = LayerNorm(d_model)\n\n    def forward(self, x, memory, self_mask=None, memory_mask=None):\n        if self.norm_first:\n            h = self.norm1(x)\n            x = x + self.self_attn(h, mask=self_mask)[0]\n            h = self.norm3(x)\n            x = x + self.cross_attn(h, memory, memory, mask=memory_mask)[0]\n            x = x + self.ffn(self.norm2(x))\n        else:\n            x = self.norm1(x + self.self_attn(x, mask=self_mask)[0])\n            x = self.norm3(x + self.cross_attn(x, memory, memory, mask=memory_mask)[0])\n            x = self.norm2(x + self.ffn(x))\n        return x\n', 'norm2 and norm3 are swapped'),
    ('decoder_block', 'causal mask inverted ~self_mask', 'class MyDecoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.cross_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n        self.norm3 = LayerNorm(d_model)\n\n    def forward(self, x, memory, self_mask=None, memory_mask=None):\n        if self.norm_first:\n            h = self.norm1(x)\n            x = x + self.self_attn(h, mask=~self_mask)[0]\n            h = self.norm2(x)\n            x = x + self.cross_attn(h, memory, memory, mask=memory_mask)[0]\n            x = x + self.ffn(self.norm3(x))\n        else:\n            x = self.norm1(x + self.self_attn(x, mask=~self_mask)[0])\n            x = self.norm2(x + self.cross_attn(x, memory, memory, mask=memory_mask)[0])\n            x = self.norm3(x + self.ffn(x))\n        return x\n', 'inverted'),
    ('greedy_decode', 'finished updated before replacing: EOS itself becomes padding', '@torch.no_grad()\ndef greedy_decode(model, src, bos_id, eos_id, max_len):\n    model.eval()\n    memory, src_mask = model.encode(src)\n    B = src.shape[0]\n    prefix = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)\n    finished = torch.zeros(B, dtype=torch.bool, device=src.device)\n    for _ in range(max_len):\n        logits = model.decode(prefix, memory, src_mask)\n        nxt = logits[:, -1].argmax(dim=-1)\n        finished = finished | (nxt == eos_id)\n        nxt = torch.where(finished, torch.full_like(nxt, model.pad_id), nxt)\n        prefix = torch.cat([prefix, nxt[:, None]], dim=1)\n        if finished.all():\n            break\n    return prefix[:, 1:]\n', 'EOS itself'),
    ('greedy_decode', 'softmax over the positions axis then argmax', '@torch.no_grad()\ndef greedy_decode(model, src, bos_id, eos_id, max_len):\n    model.eval()\n    memory, src_mask = model.encode(src)\n    B = src.shape[0]\n    prefix = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)\n    finished = torch.zeros(B, dtype=torch.bool, device=src.device)\n    for _ in range(max_len):\n        logits = model.decode(prefix, memory, src_mask)\n        nxt = logits.softmax(dim=1)[:, -1].argmax(dim=-1)\n        nxt = torch.where(finished, torch.full_like(nxt, model.pad_id), nxt)\n        prefix = torch.cat([prefix, nxt[:, None]], dim=1)\n        finished = finished | (nxt == eos_id)\n        if finished.all():\n            break\n    return prefix[:, 1:]\n', 'softmax'),
    ('greedy_decode', 'encode before model.eval()', '@torch.no_grad()\ndef greedy_decode(model, src, bos_id, eos_id, max_len):\n    memory, src_mask = model.encode(src)\n    model.eval()\n    B = src.shape[0]\n    prefix = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)\n    finished = torch.zeros(B, dtype=torch.bool, device=src.device)\n    for _ in range(max_len):\n        logits = model.decode(prefix, memory, src_mask)\n        nxt = logits[:, -1].argmax(dim=-1)\n        nxt = torch.where(finished, torch.full_like(nxt, model.pad_id), nxt)\n        prefix = torch.cat([prefix, nxt[:, None]], dim=1)\n        finished = finished | (nxt == eos_id)\n        if finished.all():\n            break\n    return prefix[:, 1:]\n', 'before the encoder'),
    ('greedy_decode', 'argmax over dim=1 of the 3-D logits', '@torch.no_grad()\ndef greedy_decode(model, src, bos_id, eos_id, max_len):\n    model.eval()\n    memory, src_mask = model.encode(src)\n    B = src.shape[0]\n    prefix = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)\n    finished = torch.zeros(B, dtype=torch.bool, device=src.device)\n    for _ in range(max_len):\n        logits = model.decode(prefix, memory, src_mask)\n        nxt = logits.argmax(dim=1)[:, -1]\n        nxt = torch.where(finished, torch.full_like(nxt, model.pad_id), nxt)\n        prefix = torch.cat([prefix, nxt[:, None]], dim=1)\n        finished = finished | (nxt == eos_id)\n        if finished.all():\n            break\n    return prefix[:, 1:]\n', 'picks a position'),
    ('training_loss', 'nll_loss on raw logits', 'def training_loss(model, src, tgt, pad_id):\n    tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]\n    logits = model(src, tgt_in)\n    return F.nll_loss(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=pad_id)\n', 'log-probabilities'),
    ('training_loss', 'model.eval() inside the loss (no dropout)', 'def training_loss(model, src, tgt, pad_id):\n    tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]\n    model.eval()\n    logits = model(src, tgt_in)\n    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=pad_id)\n', 'evaluation mode'),
    ('layer_norm', 'hard-coded 1e-6 (TF default)', 'def layer_norm(x, gamma, beta, eps=1e-5):\n    mu = x.mean(dim=-1, keepdim=True)\n    var = ((x - mu) ** 2).mean(dim=-1, keepdim=True)\n    return gamma * (x - mu) / torch.sqrt(var + 1e-6) + beta\n', 'constant'),
    ('feed_forward', 'ReLU applied after W_2 but before b_2', 'def feed_forward(x, W_1, b_1, W_2, b_2):\n    return torch.relu((x @ W_1 + b_1) @ W_2) + b_2\n', 'second matrix'),
    ('encoder_block', 'mask passed positionally (lands in key)', 'class MyEncoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n\n    def forward(self, x, mask=None):\n        if self.norm_first:\n            x = x + self.self_attn(self.norm1(x), mask)[0]\n            x = x + self.ffn(self.norm2(x))\n        else:\n            x = self.norm1(x + self.self_attn(x, mask)[0])\n            x = self.norm2(x + self.ffn(x))\n        return x\n', '`key`'),
    ('encoder_block', 'pre-LN: final norm2 applied to output as well', 'class MyEncoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n\n    def forward(self, x, mask=None):\n        if self.norm_first:\n            x = x + self.self_attn(self.norm1(x), mask=mask)[0]\n            x = x + self.ffn(self.norm2(x))\n            return self.norm2(x)\n        x = self.norm1(x + self.self_attn(x, mask=mask)[0])\n        x = self.norm2(x + self.ffn(x))\n        return x\n', 'final norm'),
    ('decoder_block', 'self_mask passed positionally (lands in key)', 'class MyDecoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.cross_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n        self.norm3 = LayerNorm(d_model)\n\n    def forward(self, x, memory, self_mask=None, memory_mask=None):\n        if self.norm_first:\n            h = self.norm1(x)\n            x = x + self.self_attn(h, self_mask)[0]\n            h = self.norm2(x)\n            x = x + self.cross_attn(h, memory, memory, mask=memory_mask)[0]\n            x = x + self.ffn(self.norm3(x))\n        else:\n            x = self.norm1(x + self.self_attn(x, self_mask)[0])\n            x = self.norm2(x + self.cross_attn(x, memory, memory, mask=memory_mask)[0])\n            x = self.norm3(x + self.ffn(x))\n        return x\n', '`key`'),
    ('decoder_block', 'pre-LN: ffn input normalised with norm2 again (norm3 unused)', 'class MyDecoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.cross_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n        self.norm3 = LayerNorm(d_model)\n\n    def forward(self, x, memory, self_mask=None, memory_mask=None):\n        if self.norm_first:\n            h = self.norm1(x)\n            x = x + self.self_attn(h, mask=self_mask)[0]\n            h = self.norm2(x)\n            x = x + self.cross_attn(h, memory, memory, mask=memory_mask)[0]\n            x = x + self.ffn(self.norm2(x))\n        else:\n            x = self.norm1(x + self.self_attn(x, mask=self_mask)[0])\n            x = self.norm2(x + self.cross_attn(x, memory, memory, mask=memory_mask)[0])\n            x = self.norm3(x + self.ffn(x))\n        return x\n', 'norm3 is never used'),
    ('greedy_decode', 'prefix built as float (ones * bos_id)', '@torch.no_grad()\ndef greedy_decode(model, src, bos_id, eos_id, max_len):\n    model.eval()\n    memory, src_mask = model.encode(src)\n    B = src.shape[0]\n    prefix = torch.ones(B, 1) * bos_id\n    finished = torch.zeros(B, dtype=torch.bool, device=src.device)\n    for _ in range(max_len):\n        logits = model.decode(prefix, memory, src_mask)\n        nxt = logits[:, -1].argmax(dim=-1)\n        nxt = torch.where(finished, torch.full_like(nxt, model.pad_id), nxt)\n        prefix = torch.cat([prefix, nxt[:, None]], dim=1)\n        finished = finished | (nxt == eos_id)\n        if finished.all():\n            break\n    return prefix[:, 1:]\n', 'dtype=torch.long'),
    ('greedy_decode', 'pads only the position right after EOS (no finished flag)', '@torch.no_grad()\ndef greedy_decode(model, src, bos_id, eos_id, max_len):\n    model.eval()\n    memory, src_mask = model.encode(src)\n    B = src.shape[0]\n    prefix = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)\n    finished = torch.zeros(B, dtype=torch.bool, device=src.device)\n    for _ in range(max_len):\n        logits = model.decode(prefix, memory, src_mask)\n        nxt = logits[:, -1].argmax(dim=-1)\n        nxt = torch.where(prefix[:, -1] == eos_id, torch.full_like(nxt, model.pad_id), nxt)\n        prefix = torch.cat([prefix, nxt[:, None]], dim=1)\n        finished = finished | (nxt == eos_id)\n        if finished.all():\n            break\n    return prefix[:, 1:]\n', 'right after EOS'),
    ('greedy_decode', 'decode() given the source ids instead of memory', '@torch.no_grad()\ndef greedy_decode(model, src, bos_id, eos_id, max_len):\n    model.eval()\n    memory, src_mask = model.encode(src)\n    B = src.shape[0]\n    prefix = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)\n    finished = torch.zeros(B, dtype=torch.bool, device=src.device)\n    for _ in range(max_len):\n        logits = model.decode(prefix, src, src_mask)\n        nxt = logits[:, -1].argmax(dim=-1)\n        nxt = torch.where(finished, torch.full_like(nxt, model.pad_id), nxt)\n        prefix = torch.cat([prefix, nxt[:, None]], dim=1)\n        finished = finished | (nxt == eos_id)\n        if finished.all():\n            break\n    return prefix[:, 1:]\n', 'memory'),
    ('training_loss', 'input full tgt, targets tgt[:,1:] (length mismatch)', 'def training_loss(model, src, tgt, pad_id):\n    tgt_in, tgt_out = tgt, tgt[:, 1:]\n    logits = model(src, tgt_in)\n    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=pad_id)\n', 'L - 1'),
    ('training_loss', 'log_softmax over wrong axis (dim=1) + nll', 'def training_loss(model, src, tgt, pad_id):\n    tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]\n    logp = F.log_softmax(model(src, tgt_in), dim=1)\n    return F.nll_loss(logp.reshape(-1, logp.shape[-1]), tgt_out.reshape(-1), ignore_index=pad_id)\n', 'positions'),
    ('decoder_block', 'pre-LN: residual of the cross-attention added to the normalised h', 'class MyDecoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.cross_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n        self.norm3 = LayerNorm(d_model)\n\n    def forward(self, x, memory, self_mask=None, memory_mask=None):\n        if self.norm_first:\n            h = self.norm1(x)\n            x = x + self.self_attn(h, mask=self_mask)[0]\n            h = self.norm2(x)\n            x = h + self.cross_attn(h, memory, memory, mask=memory_mask)[0]\n            x = x + self.ffn(self.norm3(x))\n        else:\n            x = self.norm1(x + self.self_attn(x, mask=self_mask)[0])\n            x = self.norm2(x + self.cross_attn(x, memory, memory, mask=memory_mask)[0])\n            x = self.norm3(x + self.ffn(x))\n        return x\n', 'un-normalised'),
    ('greedy_decode', 'B=1 logic: if nxt.item() == eos_id: break', '@torch.no_grad()\ndef greedy_decode(model, src, bos_id, eos_id, max_len):\n    model.eval()\n    memory, src_mask = model.encode(src)\n    B = src.shape[0]\n    prefix = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)\n    finished = torch.zeros(B, dtype=torch.bool, device=src.device)\n    for _ in range(max_len):\n        logits = model.decode(prefix, memory, src_mask)\n        nxt = logits[:, -1].argmax(dim=-1)\n        nxt = torch.where(finished, torch.full_like(nxt, model.pad_id), nxt)\n        prefix = torch.cat([prefix, nxt[:, None]], dim=1)\n        if nxt.item() == eos_id:\n            break\n    return prefix[:, 1:]\n', 'finished.all()'),
    ('training_loss', 'in-place: tgt_out[tgt_out == pad_id] = -100 (mutates tgt)', 'def training_loss(model, src, tgt, pad_id):\n    tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]\n    tgt_out[tgt_out == pad_id] = -100\n    logits = model(src, tgt_in)\n    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))\n', 'view'),
    ('training_loss', 'mask applied but divided by all positions', 'def training_loss(model, src, tgt, pad_id):\n    tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]\n    per_tok = F.cross_entropy(model(src, tgt_in).transpose(1, 2), tgt_out, reduction="none")\n    return (per_tok * (tgt_out != pad_id)).mean()\n', 'real target tokens'),
    ('block_parameters', 'rounded 7.09e6', 'answer = 7.09e6\ncheck_block_parameters(answer)\n', 'exact'),
    ('layer_norm', 'round 2: reduce over axis 0 (batch) instead of features', 'def layer_norm(x, gamma, beta, eps=1e-5):\n    mu = x.mean(0, keepdim=True)\n    var = ((x - mu)**2).mean(0, keepdim=True)\n    return gamma * (x - mu) / torch.sqrt(var + eps) + beta\n', 'axis 0'),
    ('block_parameters', 'round 2: forgot all biases (and LN beta)', 'answer = 7079424  # forgot all biases (and LN beta)\ncheck_block_parameters(answer)', 'every bias'),
    ('block_parameters', 'round 2: FFN one matrix only', 'answer = 4728576  # FFN one matrix only\ncheck_block_parameters(answer)', 'has two'),
    ('block_parameters', 'round 2: in millions, 7.1', 'answer = 7.1  # in millions, 7.1\ncheck_block_parameters(answer)', 'millions'),
    ('initial_loss', 'round 2: log(V-1)... fine? no: ln(V)/2 thinking of scaled', 'answer = math.log(50257)/2\ncheck_initial_loss(answer)', 'half of ln'),
    ('encoder_block', 'round 2: pre-LN but FFN reads the un-normed x', 'class MyEncoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n\n    def forward(self, x, mask=None):\n        if self.norm_first:\n            x = x + self.self_attn(self.norm1(x), mask=mask)[0]\n            return self.norm2(x + self.ffn(x))\n        x = self.norm1(x + self.self_attn(x, mask=mask)[0])\n        return self.norm2(x + self.ffn(x))\n', 'different placements'),
    ('decoder_block', 'round 2: pre-LN: memory normalised by norm2 too', 'class MyDecoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.cross_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n        self.norm3 = LayerNorm(d_model)\n\n    def forward(self, x, memory, self_mask=None, memory_mask=None):\n        if self.norm_first:\n            h = self.norm1(x); x = x + self.self_attn(h, mask=self_mask)[0]\n            h = self.norm2(x); x = x + self.cross_attn(h, self.norm2(memory), self.norm2(memory), mask=memory_mask)[0]\n            h = self.norm3(x); x = x + self.ffn(h)\n        else:\n            h = x; x = self.norm1(x + self.self_attn(h, mask=self_mask)[0])\n            h = x; x = self.norm2(x + self.cross_attn(h, self.norm2(memory), self.norm2(memory), mask=memory_mask)[0])\n            h = x; x = self.norm3(x + self.ffn(h))\n        return x\n', 'normalises memory'),
    ('decoder_block', 'round 2: values from x, keys from memory (key/value order mixed)', 'class MyDecoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.cross_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n        self.norm3 = LayerNorm(d_model)\n\n    def forward(self, x, memory, self_mask=None, memory_mask=None):\n        if self.norm_first:\n            h = self.norm1(x); x = x + self.self_attn(h, mask=self_mask)[0]\n            h = self.norm2(x); x = x + self.cross_attn(h, memory, h if h.shape[1]==memory.shape[1] else memory, mask=memory_mask)[0]\n            h = self.norm3(x); x = x + self.ffn(h)\n        else:\n            h = x; x = self.norm1(x + self.self_attn(h, mask=self_mask)[0])\n            h = x; x = self.norm2(x + self.cross_attn(h, memory, h if h.shape[1]==memory.shape[1] else memory, mask=memory_mask)[0])\n            h = x; x = self.norm3(x + self.ffn(h))\n        return x\n', 'values from the decoder'),
    ('decoder_block', 'round 2: cross-attention sub-layer skipped', 'class MyDecoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.cross_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n        self.norm3 = LayerNorm(d_model)\n\n    def forward(self, x, memory, self_mask=None, memory_mask=None):\n        if self.norm_first:\n            x = x + self.self_attn(self.norm1(x), mask=self_mask)[0]\n            return x + self.ffn(self.norm3(x))\n        x = self.norm1(x + self.self_attn(x, mask=self_mask)[0])\n        return self.norm3(x + self.ffn(x))\n', 'does not depend on memory'),
    ('layer_norm', 'round 2: RMSNorm (no mean subtraction at all)', 'def layer_norm(x, gamma, beta, eps=1e-5):\n    return gamma * x / torch.sqrt((x**2).mean(-1, keepdim=True) + eps) + beta\n', 'RMSNorm'),
    ('feed_forward', 'round 2: W_2 transposed', 'def feed_forward(x, W_1, b_1, W_2, b_2):\n    return torch.relu(x @ W_1 + b_1) @ W_2.T + b_2\n', 'W_2 is transposed'),
    ('greedy_decode', 'round 2: decode only the last token (no prefix)', '@torch.no_grad()\ndef greedy_decode(model, src, bos_id, eos_id, max_len):\n    model.eval()\n    memory, src_mask = model.encode(src)\n    B = src.shape[0]\n    ys = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)\n    done = torch.zeros(B, dtype=torch.bool, device=src.device)\n    for _ in range(max_len):\n        logits = model.decode(ys[:, -1:], memory, src_mask)\n        nxt = logits[:, -1].argmax(-1)\n        nxt = torch.where(done, torch.full_like(nxt, model.pad_id), nxt)\n        ys = torch.cat([ys, nxt[:, None]], dim=1)\n        done = done | (nxt == eos_id)\n        if done.all(): break\n    return ys[:, 1:]\n', 'whole prefix'),
    ('greedy_decode', 'round 2: EOS detection on the un-padded token, pad compared', '@torch.no_grad()\ndef greedy_decode(model, src, bos_id, eos_id, max_len):\n    model.eval()\n    memory, src_mask = model.encode(src)\n    B = src.shape[0]\n    ys = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)\n    done = torch.zeros(B, dtype=torch.bool, device=src.device)\n    for _ in range(max_len):\n        logits = model.decode(ys, memory, src_mask)\n        nxt = logits[:, -1].argmax(-1)\n        raw = nxt; nxt = torch.where(done, torch.full_like(nxt, model.pad_id), nxt)\n        ys = torch.cat([ys, nxt[:, None]], dim=1)\n        done = (raw == eos_id)\n        if done.all(): break\n    return ys[:, 1:]\n', 'not kept'),
    ('layer_norm', 'round 3: W12_float64_result', 'def layer_norm(x, gamma, beta, eps=1e-5):\n    x = x.double()\n    mu = x.mean(-1, keepdim=True)\n    var = ((x - mu) ** 2).mean(-1, keepdim=True)\n    return gamma.double() * (x - mu) / torch.sqrt(var + eps) + beta.double()\ncheck_layer_norm(layer_norm)\n', "keep the input's dtype"),
    ('layer_norm', 'round 3: W14_rms_instead_of_var', 'def layer_norm(x, gamma, beta, eps=1e-5):\n    mu = x.mean(-1, keepdim=True)\n    ms = (x ** 2).mean(-1, keepdim=True)\n    return gamma * (x - mu) / torch.sqrt(ms + eps) + beta\ncheck_layer_norm(layer_norm)\n', 'mean of x²'),
    ('feed_forward', 'round 3: W8_max_with_x_typo', 'def feed_forward(x, W_1, b_1, W_2, b_2):\n    h = x @ W_1 + b_1\n    return torch.clamp(h, max=0) @ W_2 + b_2\n\ncheck_feed_forward(feed_forward)\n', 'min(h, 0)'),
    ('feed_forward', 'round 3: W9_torch_max_with_dim', 'def feed_forward(x, W_1, b_1, W_2, b_2):\n    return torch.max(x @ W_1 + b_1, 0) @ W_2 + b_2\ncheck_feed_forward(feed_forward)\n', 'second argument is a dim'),
    ('feed_forward', 'round 3: W10_float64', 'def feed_forward(x, W_1, b_1, W_2, b_2):\n    h = torch.relu(x.double() @ W_1.double() + b_1.double())\n    return h @ W_2.double() + b_2.double()\ncheck_feed_forward(feed_forward)\n', "keep the input's dtype"),
    ('block_parameters', 'round 3: W7_ffn_one_bias', 'answer = 4 * (768**2 + 768) + 2 * 768 * 3072 + 3072 + 4 * 768\n\ncheck_block_parameters(answer)\n', 'one vector of 768'),
    ('encoder_block', 'round 3: W2_postLN_no_residual', 'class MyEncoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n\n    def forward(self, x, mask=None):\n        if self.norm_first:\n            x = x + self.self_attn(self.norm1(x), mask=mask)[0]\n            x = x + self.ffn(self.norm2(x))\n        else:\n            x = self.norm1(self.self_attn(x, mask=mask)[0])\n            x = self.norm2(self.ffn(x))\n        return x\n\ncheck_encoder_block(MyEncoderBlock)\n', 'no sub-layer has its residual'),
    ('encoder_block', 'round 3: W13_preLN_query_unnormalised', 'class MyEncoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n\n    def forward(self, x, mask=None):\n        if self.norm_first:\n            h = self.norm1(x)\n            x = x + self.self_attn(x, h, h, mask=mask)[0]\n            x = x + self.ffn(self.norm2(x))\n        else:\n            x = self.norm1(x + self.self_attn(x, mask=mask)[0])\n            x = self.norm2(x + self.ffn(x))\n        return x\ncheck_encoder_block(MyEncoderBlock)\n', 'queries come from the raw stream'),
    ('encoder_block', 'round 3: W15_preLN_ffn_reads_stale_h', 'class MyEncoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n\n    def forward(self, x, mask=None):\n        if self.norm_first:\n            h = self.norm1(x)\n            x = x + self.self_attn(h, mask=mask)[0]\n            x = x + self.ffn(self.norm2(h))\n        else:\n            x = self.norm1(x + self.self_attn(x, mask=mask)[0])\n            x = self.norm2(x + self.ffn(x))\n        return x\ncheck_encoder_block(MyEncoderBlock)\n', 'stale'),
    ('encoder_block', 'round 3: W16_gamma_beta_swapped_via_fn', "def layer_norm(x, gamma, beta, eps=1e-5):  # the learner's own, passing, 7.1\n    mu = x.mean(dim=-1, keepdim=True)\n    var = ((x - mu) ** 2).mean(dim=-1, keepdim=True)\n    return gamma * (x - mu) / torch.sqrt(var + eps) + beta\n\nclass MyEncoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n\n    def forward(self, x, mask=None):\n        def ln(norm, t):\n            return layer_norm(t, norm.beta, norm.gamma)\n        if self.norm_first:\n            x = x + self.self_attn(ln(self.norm1, x), mask=mask)[0]\n            x = x + self.ffn(ln(self.norm2, x))\n        else:\n            x = ln(self.norm1, x + self.self_attn(x, mask=mask)[0])\n            x = ln(self.norm2, x + self.ffn(x))\n        return x\ncheck_encoder_block(MyEncoderBlock)\n", 'γ and β swapped'),
    ('decoder_block', 'round 3: W11_memory_mask_inverted', 'class MyDecoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.cross_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n        self.norm3 = LayerNorm(d_model)\n\n    def forward(self, x, memory, self_mask=None, memory_mask=None):\n        if self.norm_first:\n            x = x + self.self_attn(self.norm1(x), mask=self_mask)[0]\n            h = self.norm2(x)\n            x = x + self.cross_attn(h, memory, memory, mask=None if memory_mask is None else ~memory_mask)[0]\n            x = x + self.ffn(self.norm3(x))\n        else:\n            x = self.norm1(x + self.self_attn(x, mask=self_mask)[0])\n            h = x\n            x = self.norm2(x + self.cross_attn(h, memory, memory, mask=None if memory_mask is None else ~memory_mask)[0])\n            x = self.norm3(x + self.ffn(x))\n        return x\ncheck_decoder_block(MyDecoderBlock)\n', 'memory mask is inverted'),
    ('decoder_block', 'round 3: W12_preLN_ffn_reads_stale_h', 'class MyDecoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.cross_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n        self.norm3 = LayerNorm(d_model)\n\n    def forward(self, x, memory, self_mask=None, memory_mask=None):\n        if self.norm_first:\n            x = x + self.self_attn(self.norm1(x), mask=self_mask)[0]\n            h = self.norm2(x)\n            x = x + self.cross_attn(h, memory, memory, mask=memory_mask)[0]\n            x = x + self.ffn(self.norm3(h))\n        else:\n            x = self.norm1(x + self.self_attn(x, mask=self_mask)[0])\n            x = self.norm2(x + self.cross_attn(x, memory, memory, mask=memory_mask)[0])\n            x = self.norm3(x + self.ffn(x))\n        return x\ncheck_decoder_block(MyDecoderBlock)\n', 'stale'),
    ('decoder_block', 'round 3: W14_preLN_self_attn_kv_raw', 'class MyDecoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.cross_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n        self.norm3 = LayerNorm(d_model)\n\n    def forward(self, x, memory, self_mask=None, memory_mask=None):\n        if self.norm_first:\n            x = x + self.self_attn(self.norm1(x), x, x, mask=self_mask)[0]\n            h = self.norm2(x)\n            x = x + self.cross_attn(h, memory, memory, mask=memory_mask)[0]\n            x = x + self.ffn(self.norm3(x))\n        else:\n            x = self.norm1(x + self.self_attn(x, mask=self_mask)[0])\n            h = x\n            x = self.norm2(x + self.cross_attn(h, memory, memory, mask=memory_mask)[0])\n            x = self.norm3(x + self.ffn(x))\n        return x\ncheck_decoder_block(MyDecoderBlock)\n', 'keys and values come from the raw'),
    ('decoder_block', 'round 3: W15_ffn_no_residual', 'class MyDecoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.cross_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n        self.norm3 = LayerNorm(d_model)\n\n    def forward(self, x, memory, self_mask=None, memory_mask=None):\n        if self.norm_first:\n            x = x + self.self_attn(self.norm1(x), mask=self_mask)[0]\n            h = self.norm2(x)\n            x = x + self.cross_attn(h, memory, memory, mask=memory_mask)[0]\n            x = self.ffn(self.norm3(x))\n        else:\n            x = self.norm1(x + self.self_attn(x, mask=self_mask)[0])\n            h = x\n            x = self.norm2(x + self.cross_attn(h, memory, memory, mask=memory_mask)[0])\n            x = self.norm3(self.ffn(x))\n        return x\ncheck_decoder_block(MyDecoderBlock)\n', 'feed-forward sub-layer has no residual'),
    ('greedy_decode', 'round 3: W9_sampling_not_argmax', '@torch.no_grad()\ndef greedy_decode(model, src, bos_id, eos_id, max_len):\n    model.eval()\n    memory, src_mask = model.encode(src)\n    B = src.shape[0]\n    ys = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)\n    done = torch.zeros(B, dtype=torch.bool, device=src.device)\n    for _ in range(max_len):\n        logits = model.decode(ys, memory, src_mask)\n        nxt = torch.multinomial(logits[:, -1].softmax(-1), 1)[:, 0]\n        nxt = torch.where(done, torch.full_like(nxt, model.pad_id), nxt)\n        ys = torch.cat([ys, nxt[:, None]], dim=1)\n        done = done | (nxt == eos_id)\n        if done.all():\n            break\n    return ys[:, 1:]\n\ncheck_greedy_decode(greedy_decode)\n', 'at random'),
    ('greedy_decode', 'round 3: W15_reencodes_each_step_full_forward', '@torch.no_grad()\ndef greedy_decode(model, src, bos_id, eos_id, max_len):\n    model.eval()\n    memory, src_mask = model.encode(src)\n    B = src.shape[0]\n    ys = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)\n    done = torch.zeros(B, dtype=torch.bool, device=src.device)\n    for _ in range(max_len):\n        logits = model(src, ys)\n        nxt = logits[:, -1].argmax(-1)\n        nxt = torch.where(done, torch.full_like(nxt, model.pad_id), nxt)\n        ys = torch.cat([ys, nxt[:, None]], dim=1)\n        done = done | (nxt == eos_id)\n        if done.all():\n            break\n    return ys[:, 1:]\ncheck_greedy_decode(greedy_decode)\n', 'encoder once'),
    ('greedy_decode', 'round 3: W16_cat_without_new_axis', '@torch.no_grad()\ndef greedy_decode(model, src, bos_id, eos_id, max_len):\n    model.eval()\n    memory, src_mask = model.encode(src)\n    B = src.shape[0]\n    ys = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)\n    done = torch.zeros(B, dtype=torch.bool, device=src.device)\n    for _ in range(max_len):\n        logits = model.decode(ys, memory, src_mask)\n        nxt = logits[:, -1].argmax(-1)\n        nxt = torch.where(done, torch.full_like(nxt, model.pad_id), nxt)\n        ys = torch.cat([ys, nxt], dim=1)\n        done = done | (nxt == eos_id)\n        if done.all():\n            break\n    return ys[:, 1:]\ncheck_greedy_decode(greedy_decode)\n', 'token axis of length 1'),
    ('greedy_decode', 'round 3: W17_prefix_never_grows', '@torch.no_grad()\ndef greedy_decode(model, src, bos_id, eos_id, max_len):\n    model.eval()\n    memory, src_mask = model.encode(src)\n    B = src.shape[0]\n    bos = torch.full((B, 1), bos_id, dtype=torch.long)\n    done = torch.zeros(B, dtype=torch.bool)\n    out = []\n    for _ in range(max_len):\n        nxt = model.decode(bos, memory, src_mask)[:, -1].argmax(-1)\n        nxt = torch.where(done, torch.full_like(nxt, model.pad_id), nxt)\n        out.append(nxt)\n        done = done | (nxt == eos_id)\n        if done.all():\n            break\n    return torch.stack(out, 1)\ncheck_greedy_decode(greedy_decode)\n', 'never grows'),
    ('training_loss', 'round 3: W13_label_smoothing', 'def training_loss(model, src, tgt, pad_id):\n    logits = model(src, tgt[:, :-1])\n    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1), ignore_index=pad_id, label_smoothing=0.1)\ncheck_training_loss(training_loss)\n', 'label_smoothing'),
    ('initial_loss', 'round 3: W8_log_of_log', 'answer = math.log(math.log(50257))\ncheck_initial_loss(answer)\n', 'log taken twice'),
    ('feed_forward', 'round 4: sigmoid', 'def feed_forward(x, W_1, b_1, W_2, b_2):\n    return torch.sigmoid(x @ W_1 + b_1) @ W_2 + b_2\n', 'a sigmoid'),
    ('encoder_block', 'round 4: residual adds weights.mean(1) @ x', 'class MyEncoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n\n    def forward(self, x, mask=None):\n        if self.norm_first:\n            out, w = self.self_attn(self.norm1(x), mask=mask)\n            x = x + w.mean(1) @ x\n            x = x + self.ffn(self.norm2(x))\n        else:\n            out, w = self.self_attn(x, mask=mask)\n            x = self.norm1(x + w.mean(1) @ x)\n            x = self.norm2(x + self.ffn(x))\n        return x\n', "mixture you built from the attention's weights"),
    ('decoder_block', 'round 4: post-LN cross-attention reads the block input', 'class MyDecoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.cross_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n        self.norm3 = LayerNorm(d_model)\n\n    def forward(self, x, memory, self_mask=None, memory_mask=None):\n        if self.norm_first:\n            x = x + self.self_attn(self.norm1(x), mask=self_mask)[0]\n            x = x + self.cross_attn(self.norm2(x), memory, memory, mask=memory_mask)[0]\n            x = x + self.ffn(self.norm3(x))\n        else:\n            x0 = x\n            x = self.norm1(x + self.self_attn(x, mask=self_mask)[0])\n            x = self.norm2(x + self.cross_attn(x0, memory, memory, mask=memory_mask)[0])\n            x = self.norm3(x + self.ffn(x))\n        return x\n', "reads the block's input"),
    ('greedy_decode', 'round 4: .max(-1)[0], values not indices', '@torch.no_grad()\ndef greedy_decode(model, src, bos_id, eos_id, max_len):\n    model.eval()\n    memory, src_mask = model.encode(src)\n    B = src.shape[0]\n    ys = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)\n    finished = torch.zeros(B, dtype=torch.bool, device=src.device)\n    for _ in range(max_len):\n        logits = model.decode(ys, memory, src_mask)\n        nxt = logits[:, -1].max(-1)[0]\n        nxt = torch.where(finished, torch.full_like(nxt, model.pad_id), nxt)\n        finished = finished | (nxt == eos_id)\n        ys = torch.cat([ys, nxt[:, None]], dim=1)\n        if finished.all():\n            break\n    return ys[:, 1:]\n', 'the values first and the indices second'),
    # A count in quotes is text: refused as every question refuses a quoted number (issue 28).
    ('block_parameters', 'the count as a string with commas', 'answer = "7,087,872"\ncheck_block_parameters(answer)\n', 'without quotes'),
    ('layer_norm', 'round 6: divides by x.shape[1] (T) instead of D', 'def layer_norm(x, gamma, beta, eps=1e-5):\n    mu = x.mean(-1, keepdim=True)\n    var = ((x - mu) ** 2).sum(-1, keepdim=True) / x.shape[1]\n    return gamma * (x - mu) / torch.sqrt(var + eps) + beta\n', 'x.shape[1]'),
    ('layer_norm', 'round 6: gamma multiplies x before centring', 'def layer_norm(x, gamma, beta, eps=1e-5):\n    mu = x.mean(-1, keepdim=True)\n    var = ((x - mu) ** 2).mean(-1, keepdim=True)\n    return (gamma * x - mu) / torch.sqrt(var + eps) + beta\n', 'before the mean is subtracted'),
    ('layer_norm', 'round 6: variance over the whole tensor, mean per token', 'def layer_norm(x, gamma, beta, eps=1e-5):\n    mu = x.mean(-1, keepdim=True)\n    var = x.var(unbiased=False)\n    return gamma * (x - mu) / torch.sqrt(var + eps) + beta\n', 'whole tensor'),
    ('feed_forward', 'round 6: biases swapped (shape error)', 'def feed_forward(x, W_1, b_1, W_2, b_2):\n    return torch.relu(x @ W_1 + b_2) @ W_2 + b_1\n', 'biases are swapped'),
    ('feed_forward', 'round 6: misplaced parenthesis', 'def feed_forward(x, W_1, b_1, W_2, b_2):\n    return F.relu(x @ W_1 + b_1 @ W_2 + b_2)\n', 'parenthesis is misplaced'),
    ('feed_forward', 'round 6: nn.ReLU(tensor) builds a module', 'def feed_forward(x, W_1, b_1, W_2, b_2):\n    return nn.ReLU(x @ W_1 + b_1) @ W_2 + b_2\n', 'builds a layer'),
    ('block_parameters', 'round 6: each LN counted as D only', 'answer = 4 * (768 * 768 + 768) + 2 * 768 * 3072 + 3072 + 768 + 2 * 768\ncheck_block_parameters(answer)\n', 'fits two slips'),
    ('encoder_block', 'round 6: post-LN: normalises the residual branch only', 'class MyEncoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n\n    def forward(self, x, mask=None):\n        if self.norm_first:\n            x = x + self.self_attn(self.norm1(x), mask=mask)[0]\n            x = x + self.ffn(self.norm2(x))\n        else:\n            x = self.norm1(x) + self.self_attn(x, mask=mask)[0]\n            x = self.norm2(x) + self.ffn(x)\n        return x\n', 'normalises only the stream'),
    ('encoder_block', 'round 6: pre-LN: adds both x and the normalised h', 'class MyEncoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n\n    def forward(self, x, mask=None):\n        if self.norm_first:\n            h = self.norm1(x)\n            x = x + h + self.self_attn(h, mask=mask)[0]\n            h = self.norm2(x)\n            x = x + h + self.ffn(h)\n        else:\n            x = self.norm1(x + self.self_attn(x, mask=mask)[0])\n            x = self.norm2(x + self.ffn(x))\n        return x\n', 'normalised copy'),
    ('encoder_block', 'round 6: LayerNorm without the learned gamma/beta (ignores norm1/norm2)', 'class MyEncoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n\n    def forward(self, x, mask=None):\n        D = x.shape[-1]\n        ln = lambda t: F.layer_norm(t, (D,))\n        if self.norm_first:\n            x = x + self.self_attn(ln(x), mask=mask)[0]\n            x = x + self.ffn(ln(x))\n        else:\n            x = ln(x + self.self_attn(x, mask=mask)[0])\n            x = ln(x + self.ffn(x))\n        return x\n', 'no γ and β'),
    ('decoder_block', 'round 6: pre-LN: reuses norm1(x) from before self-attention as cross-attn query', 'class MyDecoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.cross_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n        self.norm3 = LayerNorm(d_model)\n\n    def forward(self, x, memory, self_mask=None, memory_mask=None):\n        if self.norm_first:\n            h = self.norm1(x)\n            x = x + self.self_attn(h, mask=self_mask)[0]\n            x = x + self.cross_attn(h, memory, memory, mask=memory_mask)[0]\n            x = x + self.ffn(self.norm3(x))\n        else:\n            x = self.norm1(x + self.self_attn(x, mask=self_mask)[0])\n            x = self.norm2(x + self.cross_attn(x, memory, memory, mask=memory_mask)[0])\n            x = self.norm3(x + self.ffn(x))\n        return x\n', 'stale tensor'),
    ('decoder_block', 'round 6: sub-layer order: cross-attention first', 'class MyDecoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.cross_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n        self.norm3 = LayerNorm(d_model)\n\n    def forward(self, x, memory, self_mask=None, memory_mask=None):\n        if self.norm_first:\n            x = x + self.cross_attn(self.norm1(x), memory, memory, mask=memory_mask)[0]\n            x = x + self.self_attn(self.norm2(x), mask=self_mask)[0]\n            x = x + self.ffn(self.norm3(x))\n        else:\n            x = self.norm1(x + self.cross_attn(x, memory, memory, mask=memory_mask)[0])\n            x = self.norm2(x + self.self_attn(x, mask=self_mask)[0])\n            x = self.norm3(x + self.ffn(x))\n        return x\n', 'comes before the masked self-attention'),
    ('decoder_block', 'round 6: post-LN: forgot norm3', 'class MyDecoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.cross_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n        self.norm3 = LayerNorm(d_model)\n\n    def forward(self, x, memory, self_mask=None, memory_mask=None):\n        if self.norm_first:\n            x = x + self.self_attn(self.norm1(x), mask=self_mask)[0]\n            x = x + self.cross_attn(self.norm2(x), memory, memory, mask=memory_mask)[0]\n            x = x + self.ffn(self.norm3(x))\n        else:\n            x = self.norm1(x + self.self_attn(x, mask=self_mask)[0])\n            x = self.norm2(x + self.cross_attn(x, memory, memory, mask=memory_mask)[0])\n            x = x + self.ffn(x)\n        return x\n', '(norm3)'),
    ('decoder_block', 'round 6: post-LN: residual of cross-attention from the block input x, not from y', 'class MyDecoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.cross_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n        self.norm3 = LayerNorm(d_model)\n\n    def forward(self, x, memory, self_mask=None, memory_mask=None):\n        if self.norm_first:\n            x = x + self.self_attn(self.norm1(x), mask=self_mask)[0]\n            x = x + self.cross_attn(self.norm2(x), memory, memory, mask=memory_mask)[0]\n            x = x + self.ffn(self.norm3(x))\n        else:\n            y = self.norm1(x + self.self_attn(x, mask=self_mask)[0])\n            x = self.norm2(x + self.cross_attn(y, memory, memory, mask=memory_mask)[0])\n            x = self.norm3(x + self.ffn(x))\n        return x\n', "added to the block's input x"),
    ('decoder_block', 'round 6: LayerNorm without gamma/beta', 'class MyDecoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.cross_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n        self.norm3 = LayerNorm(d_model)\n\n    def forward(self, x, memory, self_mask=None, memory_mask=None):\n        ln = lambda t: F.layer_norm(t, t.shape[-1:])\n        if self.norm_first:\n            x = x + self.self_attn(ln(x), mask=self_mask)[0]\n            x = x + self.cross_attn(ln(x), memory, memory, mask=memory_mask)[0]\n            x = x + self.ffn(ln(x))\n        else:\n            x = ln(x + self.self_attn(x, mask=self_mask)[0])\n            x = ln(x + self.cross_attn(x, memory, memory, mask=memory_mask)[0])\n            x = ln(x + self.ffn(x))\n        return x\n', 'no γ and β'),
    ('greedy_decode', 'round 6: .max(-1) returns (values, indices)', '@torch.no_grad()\ndef greedy_decode(model, src, bos_id, eos_id, max_len):\n    model.eval()\n    memory, src_mask = model.encode(src)\n    B = src.shape[0]\n    out = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)\n    done = torch.zeros(B, dtype=torch.bool, device=src.device)\n    for _ in range(max_len):\n        nxt = model.decode(out, memory, src_mask)[:, -1].max(-1)\n        nxt = torch.where(done, torch.full_like(nxt, model.pad_id), nxt)\n        out = torch.cat([out, nxt[:, None]], dim=1)\n        done = done | (nxt == eos_id)\n        if done.all():\n            break\n    return out[:, 1:]\n', '(values, indices)'),
    ('training_loss', 'round 6: hard-coded vocabulary size 28', 'def training_loss(model, src, tgt, pad_id):\n    logits = model(src, tgt[:, :-1])\n    return F.cross_entropy(logits.reshape(-1, 28), tgt[:, 1:].reshape(-1), ignore_index=pad_id)\n', 'size written into your code'),
    ('training_loss', 'round 6: forward pass under torch.no_grad (no graph)', 'def training_loss(model, src, tgt, pad_id):\n    with torch.no_grad():\n        logits = model(src, tgt[:, :-1])\n    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1), ignore_index=pad_id)\n', 'torch.no_grad()'),
    ('training_loss', 'round 6: detaches the logits (no graph back to the model)', 'def training_loss(model, src, tgt, pad_id):\n    logits = model(src, tgt[:, :-1]).detach()\n    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1), ignore_index=pad_id)\n', '`.detach()`'),

    ('feed_forward', 'round 6: * instead of @ for the second layer', 'def feed_forward(x, W_1, b_1, W_2, b_2):\n    return torch.relu(x @ W_1 + b_1) * W_2 + b_2\n', '`*` multiplies entry by entry'),
    # round 7: two slips that give the same count are both named; an exact count is no
    # rounding; a loss that is the log of a round number, or no log at all, is named
    ('block_parameters', 'round 7: LayerNorms counted as one vector of 768 in all (3·768 short)', 'answer = 4*768*768 + 4*768 + 2*768*3072 + 3072 + 768 + 768\ncheck_block_parameters(answer)\n', 'LayerNorms three vectors short'),
    ('block_parameters', "round 7: the attention's four biases left out (4·768 short, like the LayerNorms)", 'answer = 4*768*768 + 2*768*3072 + 3072 + 768 + 4*768\ncheck_block_parameters(answer)\n', "the attention's four biases"),
    ('block_parameters', 'round 7: both biases of the feed-forward network given d_ff entries', 'answer = 4*768*768 + 4*768 + 2*768*3072 + 2*3072 + 4*768\ncheck_block_parameters(answer)\n', 'b_2 given d_ff entries'),
    ('block_parameters', 'round 7: per-head biases for q, k, v added', 'answer = 4*768*768 + 4*768 + 2*768*3072 + 3072 + 768 + 4*768 + 12*64*3\ncheck_block_parameters(answer)\n', 'counted per head'),
    ('training_loss', 'round 7: both slices one column short', 'def training_loss(model, src, tgt, pad_id):\n    tgt_in, tgt_out = tgt[:, :-2], tgt[:, 1:-1]\n    logits = model(src, tgt_in)\n    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt_out.reshape(-1), ignore_index=pad_id)\n', 'one column short'),
    ('initial_loss', 'round 7: ln 2', 'answer = math.log(2)\ncheck_initial_loss(answer)\n', 'coin flip'),
    ('initial_loss', 'round 7: ln(n_vocab) / n_vocab', 'answer = math.log(50257) / 50257\ncheck_initial_loss(answer)\n', 'not over the vocabulary'),
    ('initial_loss', 'round 7: 9.2, ln 10,000', 'answer = 9.2\ncheck_initial_loss(answer)\n', 'ln 10,000'),
    ('initial_loss', 'round 7: sqrt(n_vocab)', 'answer = math.sqrt(50257)\ncheck_initial_loss(answer)\n', 'square root of n_vocab'),
    ('decoder_block', 'round 7: cross_attn(memory): queries, keys and values all from memory', 'class MyDecoderBlock(nn.Module):\n    def __init__(self, d_model, n_heads, d_ff, norm_first=False):\n        super().__init__()\n        self.norm_first = norm_first\n        self.self_attn = MultiHeadAttention(d_model, n_heads)\n        self.cross_attn = MultiHeadAttention(d_model, n_heads)\n        self.ffn = FeedForward(d_model, d_ff)\n        self.norm1 = LayerNorm(d_model)\n        self.norm2 = LayerNorm(d_model)\n        self.norm3 = LayerNorm(d_model)\n\n    def forward(self, x, memory, self_mask=None, memory_mask=None):\n        if self.norm_first:\n            h = self.norm1(x); x = x + self.self_attn(h, mask=self_mask)[0]\n            h = self.norm2(x); x = x + self.cross_attn(memory, mask=memory_mask)[0]\n            h = self.norm3(x); x = x + self.ffn(h)\n        else:\n            h = x; x = self.norm1(x + self.self_attn(h, mask=self_mask)[0])\n            h = x; x = self.norm2(x + self.cross_attn(memory, mask=memory_mask)[0])\n            x = self.norm3(x + self.ffn(x))\n        return x\n', 'queries must come from the decoder'),
]  # fmt: skip


LEARNER_RIGHT = [
    ('final_norm', 'correct: "b." with space', 'answer = " b."\ncheck_final_norm(answer)\n'),
    ('initial_loss', 'rounded to 11', 'answer = 11\ncheck_initial_loss(answer)\n'),
    ('final_norm', '"(b)"', 'answer = "(b)"\ncheck_final_norm(answer)\n'),
]  # fmt: skip

_DEFINED = {
    "layer_norm": "layer_norm",
    "feed_forward": "feed_forward",
    "encoder_block": "MyEncoderBlock",
    "decoder_block": "MyDecoderBlock",
    "greedy_decode": "greedy_decode",
    "training_loss": "training_loss",
}


def _learner_answer(exercise: str, code: str):
    """What the learner's cell defines (a function or class), or the answer it checks."""
    import attnlab
    import attnlab.tasks.data
    from attnlab.mechanism.multihead import MultiHeadAttention
    from attnlab.mechanism.transformer import FeedForward, LayerNorm

    answers = []
    names = {
        "al": attnlab,
        "torch": torch,
        "nn": torch.nn,
        "F": F,
        "math": math,
        "MultiHeadAttention": MultiHeadAttention,
        "FeedForward": FeedForward,
        "LayerNorm": LayerNorm,
        **{k: v for k, v in vars(attnlab.tasks.data).items() if k.isupper()},
        **{f"check_{name}": answers.append for name in CHECKS},
    }
    filename = f"<learner {exercise}>"
    # as a notebook's kernel does: the cell's lines can be read back (the diagnoses quote them)
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    exec(compile(code, filename, "exec"), names)
    return names[_DEFINED[exercise]] if exercise in _DEFINED else answers[-1]


@pytest.mark.parametrize(
    ("exercise", "what", "code", "words"), LEARNER, ids=[f"{e}: {w}" for e, w, _, _ in LEARNER]
)
def test_each_learner_attempt_gets_its_diagnosis(exercise, what, code, words):
    kind, result = classify(CHECKS[exercise], _learner_answer(exercise, code), words)
    assert kind == "specific", f"{what}: expected {words!r}, got {kind}\n{result.text}"


@pytest.mark.parametrize(
    ("exercise", "what", "code"), LEARNER_RIGHT, ids=[f"{e}: {w}" for e, w, _ in LEARNER_RIGHT]
)
def test_the_learners_right_answers_pass(exercise, what, code):
    result = CHECKS[exercise](_learner_answer(exercise, code))
    assert result.passed, f"{what}\n{result.text}"


# Words a learner's diagnosis must not contain: a cause the learner's code does not have
# (round 7: keys and values said to come from the decoder when all three came from memory;
# an exact integer count called a rounding).
_NOT_SAID = {
    "round 7: cross_attn(memory): queries, keys and values all from memory": "values from the decoder",
    "round 7: both biases of the feed-forward network given d_ff entries": "rounded",
    "round 7: per-head biases for q, k, v added": "rounded",
}
LEARNER_NOT = [(e, w, c, _NOT_SAID[w]) for e, w, c, _ in LEARNER if w in _NOT_SAID]


@pytest.mark.parametrize(
    ("exercise", "what", "code", "not_words"),
    LEARNER_NOT,
    ids=[f"{e}: {w}" for e, w, _, _ in LEARNER_NOT],
)
def test_no_learner_attempt_is_told_of_a_slip_it_did_not_make(exercise, what, code, not_words):
    assert len(LEARNER_NOT) == len(_NOT_SAID)
    result = CHECKS[exercise](_learner_answer(exercise, code))
    assert not result.passed and result.diagnosed, f"{what}\n{result.text}"
    assert not_words not in f"{result.message}\n{result.diagnosis}", f"{what}\n{result.text}"
