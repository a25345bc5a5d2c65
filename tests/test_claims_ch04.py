"""Chapter 4's quantitative sentences, recomputed from the library and asserted.

Each test quotes the sentences it checks (tests/_claims.py). The trained models are the
chapter's own: ``heads.train_heads_model`` is seeded and runs on one thread, so the same call
gives the same weights on every machine.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _claims import claim, quotes_are_in
from torch.utils.flop_counter import FlopCounterMode

import attnlab as al
from attnlab import heads
from attnlab.multihead import (
    MultiHeadAttention,
    merge_heads,
    mha_flops,
    mha_parameter_count,
    split_heads,
    trace_shapes,
)

CHAPTER = "chapters/04_multihead.ipynb"
SENTENCES = {
    "dog ... barked": ("the dog that chased the cat barked", "dog"),
    "friend ... called": ("my old friend from school called", "friend"),
    "Bark ... dog": ("Bark is very cute and he is a dog", "Bark"),
}


def handset(sentence, head):
    """The hand-set figure's weights: head 0, head 1 or "both" (one head, both relations)."""
    text, subject = SENTENCES[sentence]
    toks = text.split()
    q, k = heads.handset_heads(len(toks), toks.index(subject))
    if head == "both":
        q, k = np.concatenate(list(q), -1), np.concatenate(list(k), -1)
    else:
        q, k = q[head], k[head]
    return toks, al.scaled_dot_product_attention(q, k, k)[1]


# -- one softmax row, one place to look -------------------------------------------------------


@claim(
    "Each head returns exactly one word: head 0 hands *barked* its subject, head 1 its neighbour.",
    "The single row splits its weight, and the output is *half dog, half cat*",
)
def test_two_heads_and_one():
    words = SENTENCES["dog ... barked"][0].split()
    q, k = heads.handset_heads(len(words), subject=words.index("dog"))
    values = np.eye(len(words))
    out, _ = al.scaled_dot_product_attention(q, k, values)
    t = words.index("barked")
    assert np.round(out[0, t], 2).tolist() == np.eye(7)[words.index("dog")].tolist()
    assert np.round(out[1, t], 2).tolist() == np.eye(7)[words.index("cat")].tolist()
    out_one, _ = al.scaled_dot_product_attention(
        np.concatenate([q[0], q[1]], -1), np.concatenate([k[0], k[1]], -1), values
    )
    mix = {w: round(a, 2) for w, a in zip(words, out_one[t], strict=True) if a > 0.01}
    assert mix == {"dog": 0.5, "cat": 0.5}


@claim(
    'The first word has no previous word, so its key also says "I am at 0": the first query '
    "finds the first word itself."
)
def test_the_first_query_finds_itself():
    for sentence in SENTENCES:
        _, A = handset(sentence, 1)
        assert A[0].argmax() == 0 and A[0, 0] > 0.99


@claim(
    "The one-head map shown first has two 0.5 cells in most rows: in the row of *barked*, under "
    "*dog* and under *cat*; in the first row under *dog* and under the first word itself",
    'the "subject" head is one bright column, the "previous" head one bright diagonal just '
    "below the main one (and the first cell of the main one).",
    "In the Bark sentence the one head's row of *dog* blends *Bark* and *a*",
)
def test_the_handset_slider():
    toks, A = handset("dog ... barked", "both")
    halves = [sorted(np.flatnonzero(np.round(row, 1) == 0.5).tolist()) for row in A]
    assert sum(len(h) == 2 for h in halves) > len(toks) / 2
    assert halves[toks.index("barked")] == [toks.index("dog"), toks.index("cat")]
    assert halves[0] == [0, toks.index("dog")]
    for sentence, (_, subject) in SENTENCES.items():
        toks, subject_head = handset(sentence, 0)
        assert (subject_head.argmax(-1) == toks.index(subject)).all()
        _, previous = handset(sentence, 1)
        assert previous.argmax(-1).tolist() == [0, *range(len(toks) - 1)]
    toks, A = handset("Bark ... dog", "both")
    row = A[toks.index("dog")]
    assert {toks[j] for j in np.flatnonzero(row > 0.4)} == {"Bark", "a"}


# -- split, attend, concatenate, project -------------------------------------------------------


@claim(
    'Its "head 0" holds 0, 1, 2, 3 (all of token 0) and 4, 5 (half of token 1).',
    "Head 0 holds the first two features of every token, head 1 the last two",
)
def test_the_split():
    x = np.arange(12).reshape(1, 3, 4)
    wrong = x.reshape(1, 2, 3, 2)
    assert wrong[0, 0].ravel().tolist() == [0, 1, 2, 3, 4, 5]
    right = split_heads(x, 2)
    assert np.array_equal(right[0, 0], x[0, :, :2]) and np.array_equal(right[0, 1], x[0, :, 2:])
    assert np.array_equal(merge_heads(right), x)


@claim(
    "a multi-head layer maps `(B, T, D)` to `(B, T, D)`.",
    "BERT-base has $D = 768$ and $H = 12$ heads, so each head works in $d = 64$ dimensions; "
    "its concatenated output is 768 wide again",
)
def test_shapes():
    trace = trace_shapes(batch=1, q_len=4, d_model=768, n_heads=12)
    assert trace.shape_of("split_heads(q): transpose") == (1, 12, 4, 64)
    assert trace.shape_of("out = concat @ W_o") == (1, 4, 768)
    trace = trace_shapes(batch=2, q_len=5, d_model=16, n_heads=4)
    assert trace.shape_of("out = concat @ W_o") == (2, 5, 16)  # the input's (B, T, D)


# -- the cost is the same ---------------------------------------------------------------------


@claim(
    "With the biases, a layer has $4D^2 + 4D$ parameters, and $H$ does not appear",
    "Nothing: both stay $4D^2 + 4D$ parameters and $2B(T + 2S)D^2 + 4BTSD + 2BTD^2$ operations.",
)
def test_parameters_and_operations_do_not_depend_on_h():
    D, B, T, S = 512, 8, 128, 128
    for H in [1, 2, 4, 8, 16]:
        built = sum(p.numel() for p in MultiHeadAttention(D, H).parameters())
        assert built == mha_parameter_count(D, H) == 4 * D * D + 4 * D
        total = 2 * B * (T + 2 * S) * D**2 + 4 * B * T * S * D + 2 * B * T * D**2
        assert mha_flops(D, H, T, batch=B)["total"] == total


@claim(
    "The formula and the counter agree, and the total is the same for every $H$. What grows "
    "with $H$ is the last column",
    "2.1 million softmax entries at $H = 16$, against 2.4 billion operations.",
    "only the number of softmax entries grows with $H$.",
)
def test_flops_counted_by_pytorch():
    B, T, D = 8, 128, 512
    x = torch.randn(B, T, D)
    totals, entries = set(), []
    for H in [1, 2, 4, 8, 16]:
        cost = mha_flops(D, H, T, batch=B)
        counter = FlopCounterMode(display=False)
        with counter, torch.no_grad():
            MultiHeadAttention(D, H)(x)
        assert counter.get_total_flops() == cost["total"]
        totals.add(cost["total"])
        entries.append(cost["softmax entries"])
    assert len(totals) == 1 and entries == sorted(entries) and entries[-1] == 16 * entries[0]
    assert round(entries[-1] / 1e6, 1) == 2.1 and round(totals.pop() / 1e9, 1) == 2.4


# -- PyTorch's layer ----------------------------------------------------------------------------


@claim("Any difference is float64 rounding, below $10^{-12}$")
def test_differences_with_pytorch():
    torch.manual_seed(0)
    ours = MultiHeadAttention(d_model=16, n_heads=4).double()
    theirs = ours.to_torch()
    x = torch.randn(2, 5, 16, dtype=torch.float64)
    with torch.no_grad():
        out, w = ours(x)
        ref, ref_w = theirs(x, x, x, average_attn_weights=False)
    assert (out - ref).abs().max().item() < 1e-12
    assert (w - ref_w).abs().max().item() < 1e-12


@claim(
    "`nn.MultiheadAttention` returned weights of shape `(2, 5, 5)` for 4 heads. Where are the "
    "heads?",
    "Call it with `average_attn_weights=False` to get `(2, 4, 5, 5)`.",
)
def test_averaged_weights():
    ours = MultiHeadAttention(d_model=16, n_heads=4).double()
    theirs = ours.to_torch()
    x = torch.randn(2, 5, 16, dtype=torch.float64)
    with torch.no_grad():
        _, w = ours(x)
        _, avg = theirs(x, x, x)
        _, per_head = theirs(x, x, x, average_attn_weights=False)
    assert tuple(avg.shape) == (2, 5, 5) and tuple(per_head.shape) == (2, 4, 5, 5)
    assert torch.allclose(w.mean(1), avg)


@claim(
    "$d = 256 / 8 = 32$. The weights are $(B, H, T, S) = (4, 8, 50, 50)$.",
)
def test_answer_1():
    with torch.no_grad():
        _, w = MultiHeadAttention(256, 8)(torch.randn(4, 50, 256))
    assert tuple(w.shape) == (4, 8, 50, 50) and 256 // 8 == 32


# -- heads in a trained model -------------------------------------------------------------------


@pytest.fixture(scope="module")
def trained():
    models = {H: heads.train_heads_model(n_heads=H, d_model=16, seed=3)[0] for H in (1, 2, 4)}
    test_x, _ = heads.first_and_previous_batch(1000, rng=1)
    return models, test_x


@claim(
    "one answer out of $8 \\times 8 = 64$ pairs.",
    "All three attention layers have the same 1,088 parameters, and all three models solve the "
    "task.",
    "**One head** spreads each row, about 0.6 on the first token and 0.35 on the previous one.",
    "**Two heads** divide the work cleanly: head 0 puts 0.96 on the previous token, head 1 puts "
    "1.00 on the first token.",
    "**Four heads**: head 0 takes the previous token, head 2 the first token, and the other two "
    "mostly duplicate the first-token head (0.78 and 0.82), with a little of the previous "
    "token.",
)
def test_head_roles(trained):
    models, test_x = trained
    roles = {H: heads.head_roles(m, test_x) for H, m in models.items()}
    assert models[1].readout.out_features == 8 * 8 + 1  # 64 pairs, and "no answer"
    for H, m in models.items():
        assert sum(p.numel() for p in m.attn.parameters()) == 1088
        assert roles[H]["accuracy"] > 0.99
    assert round(float(roles[1]["first"][0]), 1) == 0.6
    assert round(float(roles[1]["previous"][0]), 2) == 0.35
    assert [round(float(w), 2) for w in roles[2]["previous"]] == [0.96, 0.0]
    assert [round(float(w), 2) for w in roles[2]["first"]] == [0.02, 1.0]
    previous, first = roles[4]["previous"], roles[4]["first"]
    assert previous.argmax() == 0 and first.argmax() == 2
    assert [round(float(w), 2) for w in first[[1, 3]]] == [0.78, 0.82]
    assert all(0.05 < p < 0.2 for p in previous[[1, 3]])


def _maps(model, seq):
    with torch.no_grad():
        model(seq)
    return model.weights[0].numpy()  # (H, T, T)


@claim(
    "at $H = 2$, head 0 is one bright diagonal just below the main one (each token looks at its "
    "predecessor) and head 1 one bright first column (every token looks at the first). At "
    "$H = 1$ the single map has both, neither fully lit: more on the first column than on the "
    "diagonal. The title's parameter count stays 1,088 at every position of the slider.",
)
def test_the_head_count_slider(trained):
    models, test_x = trained
    example = test_x[:1]
    W = _maps(models[2], example)
    T = W.shape[-1]
    assert all(W[0, t, t - 1] > 0.9 for t in range(1, T))
    assert all(W[1, t, 0] > 0.9 for t in range(T))
    one = _maps(models[1], example)[0]
    first = one[2:, 0]
    previous = np.array([one[t, t - 1] for t in range(2, T)])
    assert (first < 0.9).all() and (previous < 0.9).all() and (previous > 0.2).all()
    assert (first > previous).all()
    assert {sum(p.numel() for p in m.attn.parameters()) for m in models.values()} == {1088}


@claim(
    "head 0 shows the diagonal just below the main one, 1.0 in almost every cell; head 2 a "
    "first column of 1.0. Head 3 is a near copy of head 2: on sequence 1 it puts about 0.9 or "
    "more of every row on the first token. Head 1 mixes the two relations, in proportions that "
    "change from one sequence to the next: mostly the first token on sequence 1 (with up to 0.4 "
    "of a row on the previous token), a split between the first and the previous token on "
    "sequence 2.",
)
def test_the_four_heads_slider(trained):
    models, test_x = trained
    maps = [_maps(models[4], test_x[i : i + 1]) for i in range(3)]
    T = maps[0].shape[-1]
    for W in maps:
        diagonal = np.round([W[0, t, t - 1] for t in range(1, T)], 1)
        assert (diagonal == 1.0).sum() >= T - 2
        assert (np.round(W[2, :, 0], 1) == 1.0).all()
    seq1 = maps[0]
    assert (np.round(seq1[3, :, 0], 1) >= 0.9).all()
    head1_prev = [seq1[1, t, t - 1] for t in range(2, T)]
    assert (seq1[1, 2:, 0] > np.array(head1_prev)).all()
    assert round(max(head1_prev), 1) == 0.4
    seq2 = maps[1]
    first = seq2[1, 2:, 0].mean()
    previous = np.mean([seq2[1, t, t - 1] for t in range(2, T)])
    assert 0.25 < first < 0.6 and 0.25 < previous < 0.6


@claim(
    "The first token: head 1 is the head that attends to it, and no other path brings another "
    "position's token to the read-out. The model could still name the previous token (head 0), "
    "but from position 2 on it would have to guess the first.",
)
def test_answer_5_without_head_1(trained):
    models, test_x = trained
    model, n = models[2], 8
    with torch.no_grad():
        h = model.embed(test_x) + model.position[: test_x.shape[1]]
        _, weights = model.attn(h, mask=al.causal_mask(test_x.shape[1], like=test_x))
        v = split_heads(model.attn.W_v(h), 2)  # (B, H, T, d)
        per_head = weights @ v  # (B, H, T, d)
        per_head[:, 1] = 0  # head 1 silenced
        out = model.attn.W_o(merge_heads(per_head))
        pred = model.readout(h + out).argmax(-1) - 1  # class 1 + first * n + previous
    first, previous = pred // n, pred % n
    later = slice(2, None)
    assert (first[:, later] == test_x[:, :1]).float().mean() < 0.3  # about a guess: 1/8
    assert (previous[:, 1:] == test_x[:, :-1]).float().mean() > 0.9


test_every_quoted_claim_is_in_the_chapter = quotes_are_in(CHAPTER, globals())
