"""Chapter 6's quantitative sentences, recomputed from the library and asserted.

Each test quotes the sentences it checks (tests/_claims.py). The chapter's random layer is
rebuilt as the chapter builds it: ``al.seed_everything(0)``, then the embedding and the
self-attention layer, in that order.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from _claims import claim, quotes_are_in

import attnlab as al
from attnlab.tasks.data import PAD_ID, Task, make_batch, token_labels
from attnlab.tasks.training import sequence_loss

CHAPTER = "chapters/06_masking.ipynb"
WORDS = ["<pad>", "the", "cat", "sat", "on", "mat", "a", "dog", "ran"]
D = 8


@pytest.fixture(scope="module")
def layer():
    """The chapter's embedding and self-attention layer (cell "padding: the same sentence")."""
    al.seed_everything(0)
    embed = torch.nn.Embedding(len(WORDS), D)
    return embed, al.SelfAttention(D).eval()


def encode(text, n_pad=0):
    return torch.tensor([[WORDS.index(w) for w in text.split() + ["<pad>"] * n_pad]])


def weights(layer, text, n_pad=0, masked=False):
    embed, attention = layer
    tokens = encode(text, n_pad)
    mask = al.padding_mask(tokens=tokens, pad_id=PAD_ID) if masked else None
    with torch.no_grad():
        out, w = attention(embed(tokens), mask)
    return out[0], w[0]


SENTENCE = "the cat sat on the mat"


@claim(
    "Without the mask, each real token gives about a third of its attention (0.34 to 0.39) to\n"
    "the three pads, and its output moves by up to 0.2.",
    "With the mask, the change is 0\nto the last printed digit (what is left, below $10^{-6}$, is "
    "float32 rounding): every pad\nkey gets weight exactly 0",
)
def test_padding_changes_the_outputs(layer):
    alone, _ = weights(layer, SENTENCE)
    no_mask, w = weights(layer, SENTENCE, 3)
    masked, w_masked = weights(layer, SENTENCE, 3, masked=True)
    share = w[:6, 6:].sum(-1)
    assert round(float(share.min()), 2) == 0.34 and round(float(share.max()), 2) == 0.39
    assert round(float((no_mask[:6] - alone).abs().max()), 1) == 0.2
    assert (masked[:6] - alone).abs().max() < 1e-6
    assert (w_masked[:, 6:] == 0).all()


@claim(
    "A zero\n> input still gets a key: the zero vector here, where the projections have no bias "
    "and no\n> position code is added (elsewhere a key bias $b^K$ or a position code makes it "
    "non-zero).\n> Here the key gives the score $q \\cdot 0 = 0$, and $e^0 = 1$ is not small: the "
    "pad still takes its\n> share.",
)
def test_zero_vector_pads_still_take_weight(layer):
    embed, attention = layer
    zeros = torch.cat([embed(encode(SENTENCE)), torch.zeros(1, 3, D)], dim=1)
    with torch.no_grad():
        _, w = attention(zeros)
        zero_key = attention.W_k(torch.zeros(D))
        mha = torch.nn.MultiheadAttention(D, num_heads=1)  # PyTorch's layer: biases by default
        torch.nn.init.normal_(mha.in_proj_bias)  # it starts at zero; a trained one is not
        b_k = mha.in_proj_bias[D : 2 * D]
        biased_key = F.linear(torch.zeros(D), mha.in_proj_weight[D : 2 * D], b_k)
        positioned = attention.W_k(torch.as_tensor(al.sinusoidal_encoding(8, D)[7]).float())
    assert (w[0, :6, 6:].sum(-1) > 0.3).all()
    assert attention.W_k.bias is None and (zero_key == 0).all()  # no bias: the key is zero
    assert biased_key.abs().max() > 0.1 and positioned.abs().max() > 0.1  # elsewhere it is not


@claim(
    "At the start (three words, three pads, no mask) the real tokens give the pads 0.57 of\n"
    "their attention on average, more than half. Switch the mask on and they give them exactly\n"
    "nothing.",
    "The shorter the sentence and the more padding, the larger the leak (from 0.16 for six\n"
    "words and one pad to 0.65 for two words and three pads)",
    "With the mask the real rows never change as you\nadd padding.",
    "pad queries still attend to the real\ntokens, so they get outputs.",
)
def test_the_padding_slider(layer):
    words = SENTENCE.split()

    def on_pads(length, n_pad, masked=False):
        _, w = weights(layer, " ".join(words[:length]), n_pad, masked)
        return float(w[:length, length:].sum(-1).mean())

    assert round(on_pads(3, 3), 2) == 0.57 and on_pads(3, 3, masked=True) == 0
    assert round(on_pads(6, 1), 2) == 0.16 and round(on_pads(2, 3), 2) == 0.65
    leak = {(n, p): on_pads(n, p) for n in (2, 3, 4, 6) for p in (1, 2, 3)}
    assert min(leak, key=leak.get) == (6, 1) and max(leak, key=leak.get) == (2, 3)
    for n in (2, 3, 4, 6):  # more padding, more leak
        assert leak[n, 1] < leak[n, 2] < leak[n, 3]
    for p in (1, 2, 3):  # shorter sentence, more leak
        assert leak[2, p] > leak[3, p] > leak[4, p] > leak[6, p]
    for n in (2, 3, 4, 6):
        rows = [weights(layer, " ".join(words[:n]), p, masked=True)[1][:n, :n] for p in range(4)]
        for r in rows[1:]:
            torch.testing.assert_close(r, rows[0], rtol=0, atol=1e-6)
        _, w = weights(layer, " ".join(words[:n]), 3, masked=True)
        assert (w[n:, :n].sum(-1) > 0.999).all()  # the pad queries read the real tokens


@claim(
    "With the mask, positions 0 to 3 do not move at all (exactly 0.0), position 4 changes\n"
    "because its own input changed, and 5 changes because it may read 4. Without the mask every\n"
    "position moves.",
    "Everything to the right of\nthe diagonal, the future, is 0.0 exactly (not merely small)",
    "the gradient of\noutput $i$ with respect to every later input $x_j$, $j > i$, is **exactly "
    "zero**",
)
def test_causality():
    torch.manual_seed(0)
    T = 6
    mha = al.MultiHeadAttention(D, n_heads=2).double().eval()
    x = torch.randn(1, T, D, dtype=torch.float64)
    edited = x.clone()
    edited[0, 4] = torch.randn(D, dtype=torch.float64)
    causal = al.causal_mask(T, like=x)
    with torch.no_grad():
        moved = (mha(edited, mask=causal)[0] - mha(x, mask=causal)[0])[0].abs().amax(-1)
        moved_all = (mha(edited)[0] - mha(x)[0])[0].abs().amax(-1)
    assert (moved[:4] == 0).all() and (moved[4:] > 0.01).all()
    assert (moved_all > 0.01).all()
    jac = torch.autograd.functional.jacobian(lambda z: mha(z, mask=causal)[0][0], x)
    grad = jac[:, :, 0].pow(2).sum(dim=(1, 3)).sqrt()
    below = torch.ones(T, T, dtype=torch.bool).tril()
    assert (grad[~below] == 0).all() and (grad[below] > 0).all()


@claim(
    'Query 2, "sat", spreads its weight over "the", "cat" and itself, and gives exactly 0 '
    '(0.00) to\n"on", "the" and "mat". The first query can only attend to itself (weight 1); '
    "the\nlast sees all six.",
)
def test_the_causal_slider(layer):
    embed, attention = layer
    tokens = encode(SENTENCE)
    with torch.no_grad():
        _, w = attention(embed(tokens), al.causal_mask(6, like=tokens))
    w = w[0]
    assert (w[2, :3] > 0.2).all() and (w[2, 3:] == 0).all()
    assert w[0, 0] == 1 and (w[5] > 0).all()


@claim(
    "the row sums to 0.14, and the real\n  weights are wrong",
    "the masked keys get weight 0.07 each.",
    "The real keys' weights underflow to exactly 0, and $0/0$ is NaN:",
    "change a masked score and they change.",
)
def test_the_wrong_ways_to_mask():
    scores = np.array([2.0, 1.0, 0.5, 3.0, 4.0])
    keep = np.array([True, True, True, False, False])
    right = al.softmax(scores, mask=keep)
    after = al.softmax(scores) * keep
    times0 = al.softmax(scores * keep)
    assert round(after.sum(), 2) == 0.14 and not np.allclose(after[:3], right[:3])
    assert times0[3:].round(2).tolist() == [0.07, 0.07]
    other = al.softmax(np.array([2.0, 1.0, 0.5, 3.0, 9.0])) * keep
    assert not np.allclose(other[:3], after[:3])  # the leak
    big = al.softmax(np.array([2.0, 1.0, 0.5, 3.0, 1000.0])) * keep
    assert (big[:3] == 0).all()
    with np.errstate(invalid="ignore"):
        assert np.isnan(big / big.sum()).all()


@claim(
    "The largest float16 number is 65504.",
    "The fill $-10^9$ cannot be stored: it\n  becomes $-\\infty$ by accident, and PyTorch's "
    "`masked_fill` refuses it outright.",
    "half-precision code fills with $-10^4$, which float16 stores exactly but which leaks\n  "
    "as soon as masked scores come near $10^4$ (the first way), or with the dtype's lowest\n  "
    "value, $-65504$. `masked_fill` *replaces* a masked score by that value, so it cannot leak\n"
    "  while the visible scores stay far above $-65504$; but a query that sees no key then gets\n"
    "  uniform weights instead of none (below).",
    "Adding $-10^4$ to a masked score of $10^4$ gives 0, a perfectly\n  ordinary score, and the "
    "masked key competes again.",
)
def test_fills_in_float16():
    half = torch.float16
    assert torch.tensor(-1e9, dtype=half).item() == -math.inf
    assert torch.tensor(-1e4, dtype=half).item() == -10000.0
    low = torch.finfo(half).min
    assert low == -65504.0 and torch.finfo(half).max == 65504.0
    keep = torch.tensor([True, True, True, False, False])
    with pytest.raises(RuntimeError):
        torch.zeros(5, dtype=half).masked_fill(~keep, -1e9)
    scores = torch.tensor([3.0, 2.0, 1.0, 1e4 + 2.5, 1e3 + 1.0], dtype=half)
    added = torch.softmax((scores + torch.where(keep, 0.0, -1e4).to(half)).float(), -1)
    assert added[3] > 0.01  # -1e4 leaks at scores near 1e4
    replaced = torch.softmax(scores.masked_fill(~keep, low).float(), -1)
    assert (replaced[3:] == 0).all()  # the lowest value, replacing: no leak
    blind = torch.softmax(torch.full((3,), low, dtype=half).float(), -1)
    torch.testing.assert_close(blind, torch.full((3,), 1 / 3))  # no key: uniform


ROW = np.array([3.0, 2.0, 1.0, 1e4 + 2.5, 1e3 + 1.0])
KEEP = np.array([True, True, True, False, False])


def with_fill(fill):
    return al.softmax(ROW + al.to_additive_mask(KEEP, fill=fill))


@claim(
    "With $-10^2$ and $-10^3$ the masked keys take *all* the weight; with $-10^4$ the first\n"
    "masked score lands at 2.5, between the real ones, and still takes 0.29. Only when the\n"
    "fill is far beyond every score ($-10^9$ here) does the leak vanish",
    "At $-10^4$ (the start) the masked key k3 still holds 0.29 of the weight and k0 only 0.47.\n"
    "From $-10^9$ on, the red bars are at 0 and the real keys get 0.67, 0.24 and 0.09, the\n"
    "same as if the masked keys did not exist.",
)
def test_the_fill_slider():
    for fill in (-1e2, -1e3):
        assert round(with_fill(fill)[~KEEP].sum(), 3) == 1.0
    w = with_fill(-1e4)
    assert (ROW + al.to_additive_mask(KEEP, fill=-1e4))[3] == 2.5
    assert round(w[3], 2) == 0.29 and round(w[0], 2) == 0.47
    for fill in (-1e9, -math.inf):
        w = with_fill(fill)
        assert w[~KEEP].sum() < 1e-12
        assert w[:3].round(2).tolist() == [0.67, 0.24, 0.09]
        np.testing.assert_allclose(w[:3], al.softmax(ROW[:3]), atol=1e-12)


@claim(
    "Every score is\n$-\\infty$, the softmax computes $e^{-\\infty}/\\sum e^{-\\infty} = 0/0$, and NaN "
    "spreads\nthrough every later layer. A finite fill hides the problem instead: all scores are "
    "equally\n$-10^9$, the weights come out uniform",
    "In recent PyTorch versions the\nCPU kernels return zeros for such a row (as below)",
    "`nn.MultiheadAttention` (in the version used to build\nthis page) returns NaN:",
)
def test_a_query_that_sees_nothing():
    torch.manual_seed(0)
    q = k = v = torch.randn(1, 3, 4, dtype=torch.float64)
    blind = torch.tensor([[False, False, False], [True, True, False], [True, True, True]])
    s = q @ k.transpose(-2, -1) / 2
    assert torch.softmax(s.masked_fill(~blind, -math.inf), -1)[0, 0].isnan().all()
    uniform = torch.softmax(s.masked_fill(~blind, -1e9), -1)[0, 0]
    torch.testing.assert_close(uniform, torch.full((3,), 1 / 3, dtype=torch.float64))
    out, w = al.scaled_dot_product_attention(q, k, v, blind)
    assert (w[0, 0] == 0).all() and (out[0, 0] == 0).all()
    assert (F.scaled_dot_product_attention(q, k, v, attn_mask=blind)[0, 0] == 0).all()
    mha = torch.nn.MultiheadAttention(4, 1, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        assert mha(q, k, v, attn_mask=~blind)[0][0, 0].isnan().all()


@pytest.fixture(scope="module")
def decoder_batch():
    rng = al.seed_everything(0)
    task = Task("reverse", n_symbols=6, min_len=2, max_len=5)
    src, tgt_in, tgt_out = make_batch(task, 3, rng=2)
    mask = al.combine_masks(
        al.causal_mask(tgt_in.shape[1], like=tgt_in),
        al.padding_mask(tokens=tgt_in, pad_id=PAD_ID),
    )
    del rng
    return task, src, tgt_in, tgt_out, mask


@claim(
    "Each is the\ncausal triangle with the pad columns cut off; the longer the padding, the "
    "narrower the\ntriangle. In the pad rows at the bottom, the pad queries still see every real "
    "token",
    "`combine_masks` (or `&`) gives `(B, T, T)`, one mask per sequence.",
)
def test_the_decoder_batch(decoder_batch):
    _, _, tgt_in, _, mask = decoder_batch
    assert tuple(mask.shape) == (3, 6, 6)
    T = tgt_in.shape[1]
    causal = al.causal_mask(T, like=tgt_in)
    real = (tgt_in != PAD_ID).sum(-1).tolist()
    assert sorted(real, reverse=True) == real and len(set(real)) == 3  # more and more padding
    for b, n in enumerate(real):
        expected = causal.clone()
        expected[:, n:] = False
        assert torch.equal(mask[b], expected)
        assert mask[b, n:, :n].all()  # pad rows see every real token
        assert int(mask[b].any(0).sum()) == n  # the narrower the triangle


@claim(
    "a single row, `key_padding_mask`, with 1 under the two\npad keys, and a triangle, "
    "`attn_mask`, with 1 on the *future*. Neither alone is the whole\nmask: a cell may be "
    "attended to only where both say 0.",
    "its grey cells are exactly those\ngrey in one of the two masks of `nn.MultiheadAttention` "
    "(the pad columns below the\ndiagonal, which that triangle leaves at 0, come from its padding "
    "row). The additive float\nform writes $-\\infty$ where the boolean form writes 0, and 0 where "
    "it writes 1. The\nHugging Face row is the only one with no causal information",
)
def test_the_convention_explorer(decoder_batch):
    _, _, tgt_in, _, mask = decoder_batch
    T = tgt_in.shape[1]
    pad = al.padding_mask(tokens=tgt_in, pad_id=PAD_ID)
    causal = al.causal_mask(T, like=tgt_in)
    kpm = al.to_key_padding_mask(pad)  # (B, T), True = pad
    ignore = al.to_ignore_mask(causal)  # (T, T), True = future
    hf = (tgt_in != PAD_ID).long()
    assert int(kpm[1].sum()) == 2
    for b in range(3):
        assert torch.equal(~mask[b], ignore | kpm[b][None, :])
        if b > 0:  # the padded sequences: neither mask alone is the whole
            assert not torch.equal(~mask[b], ignore)
            assert not torch.equal(~mask[b], kpm[b].expand(T, T))
        below = ~ignore & kpm[b][None, :]  # pad cells the triangle leaves at 0
        assert below.any() == bool(kpm[b].any())
        add = al.to_additive_mask(mask[b], dtype=torch.float64)
        assert (add[~mask[b]] == -math.inf).all() and (add[mask[b]] == 0).all()
        assert hf[b].bool().tolist() == pad[b, 0].tolist()  # keys only: one row, no triangle


@claim(
    'after `<bos>` comes "e", after "e" comes "d", and after the last letter,\n`<eos>`. '
    "The two pad positions at the end predict pads",
)
def test_teacher_forcing(decoder_batch):
    _, src, tgt_in, tgt_out, _ = decoder_batch
    labels = [token_labels(t) for t in (src[1], tgt_in[1], tgt_out[1])]
    assert labels[1][:4] == ["<bos>", "e", "d", "c"] and labels[2][:4] == ["e", "d", "c", "<eos>"]
    assert labels[1][4:] == labels[2][4:] == ["<pad>", "<pad>"]


@claim("The padded positions receive a gradient of exactly 0")
def test_the_loss_ignores_padding(decoder_batch):
    task, _, _, tgt_out, _ = decoder_batch
    logits = torch.randn(*tgt_out.shape, task.vocab_size, requires_grad=True)
    sequence_loss(logits, tgt_out, pad_id=PAD_ID).backward()
    real = tgt_out != PAD_ID
    assert (logits.grad[~real] == 0).all() and (logits.grad[real].abs().sum(-1) > 0).all()


@claim(
    "Only the short sentence's: its 3 real queries attend to 7 pad keys. The long sentence has "
    "no padding, so nothing changes for it. (With the mask, neither changes.)",
)
def test_answer_1():
    torch.manual_seed(0)
    attention = al.SelfAttention(D).eval()
    short, long = torch.randn(1, 3, D), torch.randn(1, 10, D)
    batch = torch.cat([torch.cat([short, torch.randn(1, 7, D)], dim=1), long])  # (2, 10, D)
    lengths = torch.tensor([3, 10])
    mask = al.padding_mask(lengths=lengths, max_len=10)  # (2, 1, 10)
    with torch.no_grad():
        alone_short, alone_long = attention(short)[0][0], attention(long)[0][0]
        unmasked, w = attention(batch)
        masked = attention(batch, mask)[0]
    assert (w[0, :3, 3:].sum(-1) > 0.1).all()  # 3 real queries give weight to the 7 pads
    assert (unmasked[0, :3] - alone_short).abs().max() > 1e-3
    torch.testing.assert_close(unmasked[1], alone_long)
    torch.testing.assert_close(masked[0, :3], alone_short)
    torch.testing.assert_close(masked[1], alone_long)


@claim(
    "Together the two masks make every sequence of a padded\nbatch compute what it would compute "
    "alone: the attention mask keeps padding out of the\nreal outputs, and the loss mask keeps the "
    "pad outputs out of the loss. The loss still\naverages over all the real tokens of the batch, "
    "so a long sequence weighs more than a\nshort one: one step on the batch is not the same "
    "update as one step per sequence.",
)
def test_a_padded_batch_computes_each_sequence_as_alone():
    torch.manual_seed(0)
    n_vocab = 9
    attention = al.SelfAttention(D).eval()
    head = torch.nn.Linear(D, n_vocab)
    lengths = [3, 8]
    xs = [torch.randn(1, n, D) for n in lengths]
    targets = [torch.randint(1, n_vocab, (1, n)) for n in lengths]
    batch = torch.cat([xs[0], torch.randn(1, 5, D)], dim=1), xs[1]
    batch = torch.cat(batch)  # (2, 8, D): the short sequence padded with 5 random vectors
    target = torch.cat([torch.cat([targets[0], torch.full((1, 5), PAD_ID)], dim=1), targets[1]])
    mask = al.padding_mask(lengths=torch.tensor(lengths), max_len=8)  # (2, 1, 8)

    def logits_of(x, m=None):
        return head(attention(x, m)[0])

    def per_token(logits, t):
        return F.cross_entropy(logits.transpose(1, 2), t, reduction="none")

    batch_tokens = per_token(logits_of(batch, mask), target)
    alone = [per_token(logits_of(x), t)[0] for x, t in zip(xs, targets, strict=True)]
    torch.testing.assert_close(batch_tokens[0, :3], alone[0])  # each sequence as alone
    torch.testing.assert_close(batch_tokens[1], alone[1])
    loss = sequence_loss(logits_of(batch, mask), target, pad_id=PAD_ID)
    torch.testing.assert_close(loss, torch.cat(alone).mean())  # over the batch's 11 real tokens
    assert abs(loss - (alone[0].mean() + alone[1].mean()) / 2) > 0.01  # not per sequence
    # one step on the batch is not the same update as one step per sequence
    grads = []
    for losses in ([loss], [a.mean() for a in alone]):
        head.zero_grad()
        for part in losses:
            part.backward(retain_graph=True)
        grads.append(head.weight.grad.clone())
    assert (grads[0] - grads[1]).abs().max() > 1e-3


test_every_quoted_claim_is_in_the_chapter = quotes_are_in(CHAPTER, globals())
