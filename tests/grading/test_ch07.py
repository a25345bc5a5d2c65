"""Chapter 7's graders: right answers pass, stubs and planted bugs get the expected report.

The "learner" answers below are written here, independently of the planted mistakes in
``attnlab.grading.ch07``, the way a learner would write them (torch formulas, PyTorch's
own layers, loops, einsum, a row-by-row decoder).
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from attnlab.grading.ch07 import (
    GRADERS,
    GREEDY_DECODE,
    _small_model,
    check_block_parameters,
    check_decoder_block,
    check_encoder_block,
    check_feed_forward,
    check_final_norm,
    check_greedy_decode,
    check_initial_loss,
    check_layer_norm,
    check_training_loss,
    summary,
)
from attnlab.mechanism.config import TransformerConfig
from attnlab.mechanism.decoding import greedy_decode
from attnlab.mechanism.multihead import MultiHeadAttention
from attnlab.mechanism.transformer import (
    DecoderBlock,
    EncoderBlock,
    FeedForward,
    LayerNorm,
)
from attnlab.tasks.data import EOS_ID, PAD_ID
from attnlab.tasks.training import sequence_loss


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """These models are tiny: one thread is ten times faster than several on a busy CPU."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# ------------------------------------------------------------------ learners' answers


def ln_mean_var(x, gamma, beta, eps=1e-5):
    mu = x.mean(dim=-1, keepdim=True)
    var = ((x - mu) ** 2).mean(dim=-1, keepdim=True)
    return gamma * (x - mu) / torch.sqrt(var + eps) + beta


def ln_var_mean(x, gamma, beta, eps=1e-5):
    var, mu = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    return (x - mu) * torch.rsqrt(var + eps) * gamma + beta


def ln_std_unbiased_false(x, gamma, beta, eps=1e-5):
    mu = x.mean(-1, keepdim=True)
    sd = torch.sqrt(x.std(-1, unbiased=False, keepdim=True) ** 2 + eps)
    return gamma * ((x - mu) / sd) + beta


def ln_module(x, gamma, beta, eps=1e-5):
    # PyTorch's own layer, as a function: gradients reach x, gamma and beta
    return nn.functional.layer_norm(x, (x.shape[-1],), gamma, beta, eps)


def ln_loop(x, gamma, beta, eps=1e-5):
    rows = x.reshape(-1, x.shape[-1])
    out = torch.empty_like(rows)
    for i, row in enumerate(rows):
        D = row.shape[0]
        mu = sum(row) / D
        var = sum((v - mu) ** 2 for v in row) / D
        out[i] = gamma * (row - mu) / torch.sqrt(var + eps) + beta
    return out.reshape(x.shape)


def ffn_formula(x, W_1, b_1, W_2, b_2):
    return torch.relu(x @ W_1 + b_1) @ W_2 + b_2


def ffn_linear(x, W_1, b_1, W_2, b_2):
    return F.linear(F.relu(F.linear(x, W_1.T, b_1)), W_2.T, b_2)


def ffn_einsum_clamp(x, W_1, b_1, W_2, b_2):
    h = torch.einsum("...d,df->...f", x, W_1) + b_1
    return torch.einsum("...f,fd->...d", h.clamp(min=0), W_2) + b_2


def ffn_functional(x, W_1, b_1, W_2, b_2):
    """nn.Linear's functional form: its weight is (out, in), so the matrices transposed."""
    return F.linear(F.relu(F.linear(x, W_1.T, b_1)), W_2.T, b_2)


class EncoderParts(nn.Module):
    """The exercise's __init__, given to the learner."""

    def __init__(self, d_model, n_heads, d_ff, norm_first=False):
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, n_heads)
        self.ffn = FeedForward(d_model, d_ff)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)


class EncoderIfElse(EncoderParts):
    def forward(self, x, mask=None):
        if self.norm_first:
            x = x + self.self_attn(self.norm1(x), mask=mask)[0]
            x = x + self.ffn(self.norm2(x))
        else:
            x = self.norm1(x + self.self_attn(x, mask=mask)[0])
            x = self.norm2(x + self.ffn(x))
        return x


class EncoderSublayers(EncoderParts):
    """A helper that wraps any sub-layer, and the learner's own LayerNorm function."""

    def sublayer(self, x, f, norm):
        def ln(h):
            return ln_var_mean(h, norm.gamma, norm.beta, norm.eps)

        return x + f(ln(x)) if self.norm_first else ln(x + f(x))

    def forward(self, x, mask=None):
        x = self.sublayer(x, lambda h: self.self_attn(h, h, h, mask)[0], self.norm1)
        return self.sublayer(x, self.ffn, self.norm2)


class EncoderTorchMask(EncoderParts):
    """Builds its own masked attention from the projections, with -inf and softmax."""

    def attend(self, h, mask):
        a = self.self_attn
        H = a.n_heads
        B, T, D = h.shape

        def split(t):
            return t.view(B, T, H, D // H).transpose(1, 2)

        q, k, v = split(a.W_q(h)), split(a.W_k(h)), split(a.W_v(h))
        s = q @ k.transpose(-1, -2) / math.sqrt(D // H)
        if mask is not None:
            s = s.masked_fill(~mask, -math.inf)
        out = (s.softmax(-1) @ v).transpose(1, 2).reshape(B, T, D)
        return a.W_o(out)

    def forward(self, x, mask=None):
        if self.norm_first:
            h = x + self.attend(self.norm1(x), mask)
            return h + self.ffn(self.norm2(h))
        h = self.norm1(x + self.attend(x, mask))
        return self.norm2(h + self.ffn(h))


class DecoderParts(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, norm_first=False):
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, n_heads)
        self.cross_attn = MultiHeadAttention(d_model, n_heads)
        self.ffn = FeedForward(d_model, d_ff)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.norm3 = LayerNorm(d_model)


class DecoderIfElse(DecoderParts):
    def forward(self, x, memory, self_mask=None, memory_mask=None):
        if self.norm_first:
            x = x + self.self_attn(self.norm1(x), mask=self_mask)[0]
            x = x + self.cross_attn(self.norm2(x), memory, memory, mask=memory_mask)[0]
            return x + self.ffn(self.norm3(x))
        x = self.norm1(x + self.self_attn(x, mask=self_mask)[0])
        x = self.norm2(x + self.cross_attn(x, memory, memory, mask=memory_mask)[0])
        return self.norm3(x + self.ffn(x))


class DecoderLoop(DecoderParts):
    def forward(self, x, memory, self_mask=None, memory_mask=None):
        steps = [
            (lambda h: self.self_attn(query=h, mask=self_mask)[0], self.norm1),
            (
                lambda h: self.cross_attn(query=h, key=memory, value=memory, mask=memory_mask)[0],
                self.norm2,
            ),
            (self.ffn, self.norm3),
        ]
        for f, norm in steps:
            x = x + f(norm(x)) if self.norm_first else norm(x + f(x))
        return x


@torch.no_grad()
def greedy_reencode(model, src, bos_id, eos_id, max_len):
    """Runs the whole model at every step (encoder included): the right tokens, but the
    statement asks for one encoder run."""
    model.eval()
    B = src.shape[0]
    ys = torch.full((B, 1), bos_id, dtype=torch.long)
    finished = torch.zeros(B, dtype=torch.bool)
    for _ in range(max_len):
        nxt = model(src, ys)[:, -1, :].argmax(dim=-1)
        nxt[finished] = model.pad_id
        ys = torch.cat([ys, nxt.unsqueeze(1)], dim=1)
        finished = finished | (nxt == eos_id)
        if finished.all():
            break
    return ys[:, 1:]


@torch.no_grad()
def greedy_rows(model, src, bos_id, eos_id, max_len):
    """One row at a time, then padded to the longest row."""
    model.eval()
    rows = []
    for b in range(src.shape[0]):
        memory, src_mask = model.encode(src[b : b + 1])
        tokens = [bos_id]
        while len(tokens) - 1 < max_len:
            logits = model.decode(torch.tensor([tokens]), memory, src_mask)
            tokens.append(int(logits[0, -1].argmax()))
            if tokens[-1] == eos_id:
                break
        rows.append(tokens[1:])
    L = max(len(r) for r in rows)
    out = torch.full((len(rows), L), model.pad_id, dtype=torch.long)
    for b, r in enumerate(rows):
        out[b, : len(r)] = torch.tensor(r)
    return out


@torch.no_grad()
def greedy_preallocated(model, src, bos_id, eos_id, max_len):
    model.eval()
    memory, src_mask = model.encode(src)
    B = src.shape[0]
    buf = torch.full((B, max_len + 1), model.pad_id, dtype=torch.long)
    buf[:, 0] = bos_id
    alive = torch.ones(B, dtype=torch.bool)
    n = 0
    while n < max_len and alive.any():
        logits = model.decode(buf[:, : n + 1], memory, src_mask)
        buf[alive, n + 1] = logits[alive, -1].argmax(-1)
        alive &= buf[:, n + 1] != eos_id
        n += 1
    return buf[:, 1 : n + 1]


def loss_lib(model, src, tgt, pad_id):
    return sequence_loss(model(src, tgt[:, :-1]), tgt[:, 1:], pad_id)


def loss_flat(model, src, tgt, pad_id):
    tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]
    logits = model(src, tgt_in)
    return F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=pad_id
    )


def loss_gather(model, src, tgt, pad_id):
    logp = model(src, tgt[:, :-1]).log_softmax(-1)  # (B, T, V)
    target = tgt[:, 1:]
    nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = target != pad_id
    return nll[real].mean()


def loss_module(model, src, tgt, pad_id):
    criterion = nn.CrossEntropyLoss(ignore_index=pad_id)
    logits = model(src, tgt[:, :-1])
    return criterion(logits.transpose(1, 2), tgt[:, 1:])  # classes on axis 1


def _by_sizes(block: type) -> type:
    """The library's block under the exercise's signature, ``(d_model, n_heads, d_ff,
    norm_first=False)``: the library builds its blocks from a TransformerConfig."""

    class BySizes(block):
        def __init__(self, d_model: int, n_heads: int, d_ff: int, norm_first: bool = False):
            sizes = {"d_model": d_model, "n_heads": n_heads, "d_ff": d_ff}
            super().__init__(TransformerConfig(**sizes, norm_first=norm_first))

    BySizes.__name__ = BySizes.__qualname__ = block.__name__
    return BySizes


CORRECT = {
    "layer_norm": (
        check_layer_norm,
        [ln_mean_var, ln_var_mean, ln_std_unbiased_false, ln_module, ln_loop],
    ),
    "feed_forward": (
        check_feed_forward,
        [ffn_formula, ffn_linear, ffn_einsum_clamp, ffn_functional],
    ),
    "encoder_block": (
        check_encoder_block,
        [_by_sizes(EncoderBlock), EncoderIfElse, EncoderSublayers, EncoderTorchMask],
    ),
    "decoder_block": (check_decoder_block, [_by_sizes(DecoderBlock), DecoderIfElse, DecoderLoop]),
    "greedy_decode": (
        check_greedy_decode,
        [greedy_decode, greedy_rows, greedy_preallocated],
    ),
    "training_loss": (check_training_loss, [loss_lib, loss_flat, loss_gather, loss_module]),
}


# Every right answer, graded by tests/grading/test_correct_answers.py (one test for all chapters).
CORRECT_ANSWERS = [(name, a) for name, (_, answers) in CORRECT.items() for a in answers]
MAX_ERROR = 1e-9


def test_every_exercise_is_listed_in_order_with_cases():
    assert list(GRADERS.names) == [
        "layer_norm",
        "feed_forward",
        "block_parameters",
        "encoder_block",
        "final_norm",
        "decoder_block",
        "greedy_decode",
        "training_loss",
        "initial_loss",
    ]
    for name in CORRECT:
        assert len(GRADERS[name].cases) >= 4


def test_block_cases_cover_both_norm_placements_and_masks():
    for name in ("encoder_block", "decoder_block"):
        cases = GRADERS[name].cases
        assert {c.inputs["norm_first"] for c in cases} == {False, True}
        masked = [c for c in cases if c.inputs.get("mask", c.inputs.get("memory_mask")) is not None]
        assert {c.inputs["norm_first"] for c in masked} == {False, True}


def test_greedy_cases_end_early_late_and_never():
    """The models' rows end at different steps: the cases can tell the planted bugs apart."""
    seen_unfinished, seen_early_stop, seen_ragged = False, False, False
    for case in GREEDY_DECODE.cases:
        out = greedy_decode(
            _small_model(case.inputs["model"]),
            case.inputs["src"],
            bos_id=1,
            eos_id=EOS_ID,
            max_len=case.inputs["max_len"],
        )
        ends = [int((row == EOS_ID).nonzero()[0]) if (row == EOS_ID).any() else None for row in out]
        seen_unfinished |= None in ends
        seen_early_stop |= out.shape[1] < case.inputs["max_len"]
        seen_ragged |= len({e for e in ends if e is not None}) > 1
        assert out.shape[1] >= 2, "the first token must not end every row"
    assert seen_unfinished and seen_early_stop and seen_ragged


# ------------------------------------------------------------------ stubs and misuse


def stub(*args, **kwargs):
    raise NotImplementedError("Exercise 7.1")


class StubEncoder(EncoderParts):
    def forward(self, x, mask=None):
        raise NotImplementedError("Exercise 7.4")


class StubDecoder(DecoderParts):
    def forward(self, x, memory, self_mask=None, memory_mask=None):
        raise NotImplementedError("Exercise 7.6")


class StubInit(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, norm_first=False):
        raise NotImplementedError("Exercise 7.4")


def greedy_stub(model, src, bos_id, eos_id, max_len):
    raise NotImplementedError("Exercise 7.7")


@torch.no_grad()
def greedy_stub_decorated(model, src, bos_id, eos_id, max_len):
    raise NotImplementedError("Exercise 7.7")


def loss_stub(model, src, tgt, pad_id):
    raise NotImplementedError("Exercise 7.8")


@pytest.mark.parametrize(
    ("check", "answer"),
    [
        (check_layer_norm, stub),
        (check_feed_forward, stub),
        (check_encoder_block, StubEncoder),
        (check_encoder_block, StubInit),
        (check_decoder_block, StubDecoder),
        (check_greedy_decode, greedy_stub),
        (check_greedy_decode, greedy_stub_decorated),
        (check_training_loss, loss_stub),
    ],
)
def test_stubs_are_not_attempted(check, answer):
    result = check(answer)
    assert result.status == "not attempted", result.text


def test_a_block_calling_an_unfinished_layer_norm_names_it():
    def layer_norm(x, gamma, beta, eps=1e-5):
        raise NotImplementedError("Exercise 7.1")

    class UsesLayerNorm(EncoderParts):
        def forward(self, x, mask=None):
            h = layer_norm(x, self.norm1.gamma, self.norm1.beta)
            return x + self.self_attn(h, mask=mask)[0]

    result = check_encoder_block(UsesLayerNorm)
    assert result.status == "raised an exception", result.text
    assert "layer_norm" in result.diagnosis


def test_an_instance_instead_of_the_class_is_a_wrong_type():
    result = check_encoder_block(EncoderIfElse(8, 2, 16))
    assert result.status == "wrong type", result.text
    assert "pass the class itself" in result.diagnosis


def test_renamed_parts_get_the_keep_the_init_hint():
    class Renamed(nn.Module):
        def __init__(self, d_model, n_heads, d_ff, norm_first=False):
            super().__init__()
            self.attention = MultiHeadAttention(d_model, n_heads)

        def forward(self, x, mask=None):
            return x

    result = check_encoder_block(Renamed)
    assert result.status == "raised an exception", result.text
    assert "self_attn" in result.diagnosis


def test_a_float_loss_is_a_wrong_type():
    result = check_training_loss(
        lambda model, src, tgt, pad_id: loss_lib(model, src, tgt, pad_id).item()
    )
    assert result.status == "wrong type", result.text


def test_cross_entropy_on_unflattened_logits_gets_the_hint():
    def unflattened(model, src, tgt, pad_id):
        return F.cross_entropy(model(src, tgt[:, :-1]), tgt[:, 1:], ignore_index=pad_id)

    result = check_training_loss(unflattened)
    assert result.status == "raised an exception", result.text
    assert "flatten" in result.diagnosis


# ------------------------------------------------------------------ planted bugs


def ln_torch_var(x, gamma, beta, eps=1e-5):  # Tensor.var divides by D - 1 by default
    return gamma * (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True) + eps) + beta


def ln_over_tokens(x, gamma, beta, eps=1e-5):
    mu, var = x.mean(-2, keepdim=True), x.var(-2, keepdim=True, correction=0)
    return gamma * (x - mu) / torch.sqrt(var + eps) + beta


def ln_global(x, gamma, beta, eps=1e-5):
    return gamma * (x - x.mean()) / torch.sqrt(x.var(correction=0) + eps) + beta


def ln_eps_outside(x, gamma, beta, eps=1e-5):
    mu, sd = x.mean(-1, keepdim=True), x.std(-1, keepdim=True, correction=0)
    return gamma * (x - mu) / (sd + eps) + beta


def ln_no_eps(x, gamma, beta, eps=1e-5):
    mu, sd = x.mean(-1, keepdim=True), x.std(-1, keepdim=True, correction=0)
    return gamma * (x - mu) / sd + beta


def ln_no_sqrt(x, gamma, beta, eps=1e-5):
    var, mu = torch.var_mean(x, -1, keepdim=True, correction=0)
    return gamma * (x - mu) / (var + eps) + beta


def ln_swapped(x, gamma, beta, eps=1e-5):
    return ln_mean_var(x, beta, gamma, eps)


def ln_plain(x, gamma, beta, eps=1e-5):
    return ln_mean_var(x, torch.ones_like(gamma), torch.zeros_like(beta), eps)


def ffn_no_relu(x, W_1, b_1, W_2, b_2):
    return (x @ W_1 + b_1) @ W_2 + b_2


def ffn_gelu(x, W_1, b_1, W_2, b_2):
    return F.gelu(x @ W_1 + b_1) @ W_2 + b_2


def ffn_residual(x, W_1, b_1, W_2, b_2):
    return x + ffn_formula(x, W_1, b_1, W_2, b_2)


def ffn_no_b2(x, W_1, b_1, W_2, b_2):
    return torch.relu(x @ W_1 + b_1) @ W_2


def encoder_with(bug):
    class Buggy(EncoderParts):
        def forward(self, x, mask=None):
            attn = self.self_attn(
                self.norm1(x) if self.norm_first else x, mask=None if bug == "no mask" else mask
            )[0]
            if self.norm_first:
                x = attn if bug == "no residual" else x + attn
                return x + self.ffn(self.norm2(x))
            if bug == "pre-LN always":
                x = x + self.self_attn(self.norm1(x), mask=mask)[0]
                return x + self.ffn(self.norm2(x))
            x = self.norm1(attn if bug == "no residual" else x + attn)
            return self.norm2(x + self.ffn(x))

    return Buggy


class EncoderParallel(EncoderParts):
    """Both sub-layers read the block's input (post-LN)."""

    def forward(self, x, mask=None):
        if self.norm_first:
            return EncoderIfElse.forward(self, x, mask)
        h = self.norm1(x + self.self_attn(x, mask=mask)[0])
        return self.norm2(h + self.ffn(x))


class EncoderPostOnly(EncoderParts):
    def forward(self, x, mask=None):
        x = self.norm1(x + self.self_attn(x, mask=mask)[0])
        return self.norm2(x + self.ffn(x))


class EncoderNormalisedStream(EncoderParts):
    def forward(self, x, mask=None):
        if not self.norm_first:
            return EncoderIfElse.forward(self, x, mask)
        x = self.norm1(x)
        x = x + self.self_attn(x, mask=mask)[0]
        x = self.norm2(x)
        return x + self.ffn(x)


class EncoderTorchConvention(EncoderParts):
    """Passes PyTorch's convention (True = ignore) to the course's attention."""

    def forward(self, x, mask=None):
        if mask is not None:
            mask = mask == 0
        return EncoderIfElse.forward(self, x, mask)


def decoder_with(bug):
    class Buggy(DecoderParts):
        def forward(self, x, memory, self_mask=None, memory_mask=None):
            sm = None if bug == "no causal" else self_mask
            mm = None if bug == "no memory mask" else memory_mask
            if self.norm_first:
                x = x + self.self_attn(self.norm1(x), mask=sm)[0]
                h = self.norm2(x)
                kv = h if bug == "self twice" else memory
                if bug == "norm memory":
                    kv = self.norm2(memory)
                x = x + self.cross_attn(h, kv, kv, mask=None if bug == "self twice" else mm)[0]
                return x + self.ffn(self.norm3(x))
            x = self.norm1(x + self.self_attn(x, mask=sm)[0])
            c = self.cross_attn(x, memory, memory, mask=mm)[0]
            x = self.norm2(c if bug == "no cross residual" else x + c)
            return self.norm3(x + self.ffn(x))

    return Buggy


class DecoderQueriesFromMemory(DecoderParts):
    def forward(self, x, memory, self_mask=None, memory_mask=None):
        x = self.norm1(x + self.self_attn(x, mask=self_mask)[0])
        x = self.norm2(x + self.cross_attn(memory, x, x)[0])
        return self.norm3(x + self.ffn(x))


class DecoderCrossFirst(DecoderParts):
    def forward(self, x, memory, self_mask=None, memory_mask=None):
        if self.norm_first:
            x = x + self.cross_attn(self.norm2(x), memory, memory, mask=memory_mask)[0]
            x = x + self.self_attn(self.norm1(x), mask=self_mask)[0]
            return x + self.ffn(self.norm3(x))
        x = self.norm2(x + self.cross_attn(x, memory, memory, mask=memory_mask)[0])
        x = self.norm1(x + self.self_attn(x, mask=self_mask)[0])
        return self.norm3(x + self.ffn(x))


class DecoderPostOnly(DecoderParts):
    def forward(self, x, memory, self_mask=None, memory_mask=None):
        x = self.norm1(x + self.self_attn(x, mask=self_mask)[0])
        x = self.norm2(x + self.cross_attn(x, memory, memory, mask=memory_mask)[0])
        return self.norm3(x + self.ffn(x))


@torch.no_grad()
def greedy_no_stop(model, src, bos_id, eos_id, max_len):
    model.eval()
    ys = torch.full((src.shape[0], 1), bos_id)
    for _ in range(max_len):
        ys = torch.cat([ys, model(src, ys)[:, -1].argmax(-1, keepdim=True)], 1)
    return ys[:, 1:]


@torch.no_grad()
def greedy_stop_on_first(model, src, bos_id, eos_id, max_len):
    model.eval()
    ys = torch.full((src.shape[0], 1), bos_id)
    for _ in range(max_len):
        nxt = model(src, ys)[:, -1].argmax(-1, keepdim=True)
        ys = torch.cat([ys, nxt], 1)
        if (nxt == eos_id).any():
            break
    return ys[:, 1:]


@torch.no_grad()
def greedy_unpadded(model, src, bos_id, eos_id, max_len):
    model.eval()
    ys = torch.full((src.shape[0], 1), bos_id)
    for _ in range(max_len):
        ys = torch.cat([ys, model(src, ys)[:, -1].argmax(-1, keepdim=True)], 1)
        if (ys == eos_id).any(dim=1).all():
            break
    return ys[:, 1:]


@torch.no_grad()
def greedy_with_bos(model, src, bos_id, eos_id, max_len):
    return torch.cat(
        [
            torch.full((src.shape[0], 1), bos_id),
            greedy_reencode(model, src, bos_id, eos_id, max_len),
        ],
        dim=1,
    )


@torch.no_grad()
def greedy_first_position(model, src, bos_id, eos_id, max_len):
    model.eval()
    ys = torch.full((src.shape[0], 1), bos_id)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        nxt = model(src, ys)[:, 0].argmax(-1)
        nxt[done] = model.pad_id
        ys = torch.cat([ys, nxt[:, None]], 1)
        done |= nxt == eos_id
        if done.all():
            break
    return ys[:, 1:]


@torch.no_grad()
def greedy_short(model, src, bos_id, eos_id, max_len):
    return greedy_reencode(model, src, bos_id, eos_id, max_len - 1)


def loss_no_shift(model, src, tgt, pad_id):
    logits = model(src, tgt)
    return F.cross_entropy(logits.flatten(0, 1), tgt.flatten(), ignore_index=pad_id)


def loss_counts_padding(model, src, tgt, pad_id):
    logits = model(src, tgt[:, :-1])
    return F.cross_entropy(logits.flatten(0, 1), tgt[:, 1:].flatten())


def loss_sum(model, src, tgt, pad_id):
    logits = model(src, tgt[:, :-1])
    return F.cross_entropy(
        logits.flatten(0, 1), tgt[:, 1:].flatten(), ignore_index=pad_id, reduction="sum"
    )


def loss_softmax_first(model, src, tgt, pad_id):
    probs = model(src, tgt[:, :-1]).softmax(-1)
    return F.cross_entropy(probs.flatten(0, 1), tgt[:, 1:].flatten(), ignore_index=pad_id)


def loss_reversed(model, src, tgt, pad_id):
    logits = model(src, tgt[:, 1:])
    return F.cross_entropy(logits.flatten(0, 1), tgt[:, :-1].flatten(), ignore_index=pad_id)


def loss_per_sequence(model, src, tgt, pad_id):
    losses = [loss_flat(model, src[b : b + 1], tgt[b : b + 1], pad_id) for b in range(len(src))]
    return torch.stack(losses).mean()


def loss_without_eos(model, src, tgt, pad_id):
    logits, target = model(src, tgt[:, :-1]), tgt[:, 1:].clone()
    target[target == EOS_ID] = pad_id
    return F.cross_entropy(logits.flatten(0, 1), target.flatten(), ignore_index=pad_id)


def loss_input_mask(model, src, tgt, pad_id):
    tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]
    nll = F.cross_entropy(model(src, tgt_in).transpose(1, 2), tgt_out, reduction="none")
    keep = tgt_in != pad_id
    return nll[keep].mean()


PLANTED = [
    ("layer_norm", ln_torch_var, "wrong values", "unbiased variance"),
    ("layer_norm", ln_over_tokens, "wrong values", "over the tokens"),
    ("layer_norm", ln_global, "wrong values", "whole tensor"),
    ("layer_norm", ln_eps_outside, "wrong values", "outside the square root"),
    ("layer_norm", ln_no_eps, "NaN or inf", "there is no eps"),
    ("layer_norm", ln_no_sqrt, "wrong values", "divided by the variance"),
    ("layer_norm", ln_swapped, "wrong values", "gamma and beta are swapped"),
    ("layer_norm", ln_plain, "wrong values", "are not applied"),
    ("feed_forward", ffn_no_relu, "wrong values", "no non-linearity"),
    ("feed_forward", ffn_gelu, "wrong values", "GELU"),
    ("feed_forward", ffn_residual, "wrong values", "added the input back"),
    ("feed_forward", ffn_no_b2, "wrong values", "b_2 is missing"),
    ("encoder_block", encoder_with("no residual"), "wrong values", "attention sub-layer has no residual"),
    ("encoder_block", encoder_with("no mask"), "wrong values", "mask is not passed"),
    ("encoder_block", encoder_with("pre-LN always"), "wrong values", "pre-LN even when norm_first=False"),
    ("encoder_block", EncoderParallel, "wrong values", "reads the block's input"),
    ("encoder_block", EncoderPostOnly, "wrong values", "post-LN even when norm_first=True"),
    ("encoder_block", EncoderNormalisedStream, "wrong values", "residual carries the normalised"),
    ("encoder_block", EncoderTorchConvention, "wrong values", "mask is inverted"),
    ("decoder_block", decoder_with("no causal"), "wrong values", "ignores self_mask"),
    ("decoder_block", decoder_with("no memory mask"), "wrong values", "ignores memory_mask"),
    ("decoder_block", decoder_with("self twice"), "wrong values", "over the decoder's own tokens"),
    ("decoder_block", decoder_with("norm memory"), "wrong values", "normalises memory"),
    ("decoder_block", decoder_with("no cross residual"), "wrong values", "cross-attention sub-layer has no residual"),
    ("decoder_block", DecoderQueriesFromMemory, "raised an exception", "takes its queries from memory"),
    ("decoder_block", DecoderCrossFirst, "wrong values", "comes before the masked self-attention"),
    ("decoder_block", DecoderPostOnly, "wrong values", "post-LN even when norm_first=True"),
    ("greedy_decode", greedy_no_stop, "wrong shape", "does not stop at EOS"),
    ("greedy_decode", greedy_reencode, "wrong values", "run the encoder once"),
    ("greedy_decode", greedy_stop_on_first, "wrong shape", "as soon as one row"),
    ("greedy_decode", greedy_unpadded, "wrong values", "keeps writing after its EOS"),
    ("greedy_decode", greedy_with_bos, "wrong shape", "starts with BOS"),
    ("greedy_decode", greedy_first_position, "wrong shape", "first position"),
    ("greedy_decode", greedy_short, "wrong shape", "one step too few"),
    ("training_loss", loss_no_shift, "wrong values", "no shift"),
    ("training_loss", loss_reversed, "wrong values", "wrong way"),
    ("training_loss", loss_counts_padding, "wrong values", "padding is counted"),
    ("training_loss", loss_sum, "wrong values", "is a sum"),
    ("training_loss", loss_softmax_first, "wrong values", "softmax before the cross-entropy"),
    ("training_loss", loss_per_sequence, "wrong values", "averaged each sequence"),
    ("training_loss", loss_without_eos, "wrong values", "EOS is left out"),
    ("training_loss", loss_input_mask, "wrong values", "*input* is padding"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "bug", "status", "words"), PLANTED, ids=[f"{p[0]}-{p[3]}" for p in PLANTED]
)
def test_planted_bugs_get_the_expected_diagnosis(name, bug, status, words):
    result = CORRECT[name][0](bug)
    assert result.status == status, result.text
    assert result.diagnosed, result.text
    assert words in result.diagnosis, result.text


# Each planted mistake is told apart from the others: tests/grading/test_chapters.py


def test_every_planted_mistake_has_a_learner_style_test():
    for name in CORRECT:
        n_tested = sum(p[0] == name for p in PLANTED)
        assert n_tested >= min(4, len(GRADERS[name].mistakes)), name


# ------------------------------------------------------------------ questions


# Right, listed wrong and unanswered answers of every question: tests/grading/test_chapters.py


def test_block_parameters_is_the_counted_block():
    block = EncoderBlock(TransformerConfig(d_model=768, n_heads=12, d_ff=3072))
    assert check_block_parameters(sum(p.numel() for p in block.parameters())).passed
    torch_block = nn.TransformerEncoderLayer(768, 12, 3072)
    assert check_block_parameters(sum(p.numel() for p in torch_block.parameters())).passed


def test_initial_loss_is_ln_vocab_and_an_untrained_model_is_near_it():
    assert check_initial_loss(math.log(50_257)).passed
    assert check_initial_loss(10.8).passed
    model = _small_model(0)  # a 12-token vocabulary, untrained
    src = torch.randint(3, 12, (8, 5), generator=torch.Generator().manual_seed(0))
    tgt = torch.randint(3, 12, (8, 6), generator=torch.Generator().manual_seed(1))
    loss = loss_lib(model, src, tgt, PAD_ID).item()
    assert abs(loss - math.log(12)) < 0.6


def test_final_norm_accepts_upper_case():
    assert check_final_norm("B").passed


def test_summary_lists_every_exercise():
    check_layer_norm(ln_mean_var)
    rows = summary().rows
    assert [name for name, _ in rows] == list(GRADERS.names)


def test_an_exact_count_near_the_block_is_read_by_its_offset_not_called_a_rounding():
    right = 7_087_872
    for given, words in (
        (right + 768, "1 x 768 too many"),
        (right - 5 * 768, "5 x 768 too few"),
        (right + 64 * 5, "5 x 64 too many"),
        (right - 17, "arithmetic slipped"),
        (right + 1000, "exact integer, 1,000 too many"),
        (7_090_000, "rounded"),
        (7.09e6, "rounded"),
    ):
        result = check_block_parameters(given)
        assert not result.passed and result.diagnosed, result.text
        assert words in result.diagnosis, result.text
        if words != "rounded":
            assert "rounded" not in result.diagnosis, result.text


def test_a_loss_that_is_the_log_of_a_round_vocabulary_is_named_and_a_guess_is_not():
    for given, n in ((9.2, "10,000"), (math.log(10_000), "10,000"), (6.91, "1,000")):
        result = check_initial_loss(given)
        assert not result.passed and f"ln {n}" in result.diagnosis, result.text
    for guess in (9, 12.0, 9.5):
        result = check_initial_loss(guess)
        assert not result.passed and "that is ln " not in (result.diagnosis or ""), result.text
