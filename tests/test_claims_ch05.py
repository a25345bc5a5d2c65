"""Chapter 5's quantitative sentences, recomputed from the library and asserted.

Each test quotes the sentences it checks (tests/_claims.py). Where a sentence is about the
chapter's own random vectors, the test draws them as the chapter does: the generator of
``al.seed_everything(0)``, used in the chapter's order.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from _claims import claim, quotes_are_in

import attnlab as al

CHAPTER = "chapters/05_positional.ipynb"


def chapter_draws():
    """The chapter's NumPy draws, in its order: words, RoPE inputs, random projections, tokens."""
    rng = al.seed_everything(0)
    draws = {}
    draws["cat"], draws["car"] = rng.standard_normal((2, 16)) / np.sqrt(16)
    draws["q"] = rng.standard_normal((6, 8))
    draws["q_vec"], draws["k_vec"] = rng.standard_normal((2, 16))
    draws["W_q"], draws["W_k"] = rng.standard_normal((2, 16, 16)) / np.sqrt(16)
    draws["x_word"] = rng.standard_normal(16)
    draws["tokens"] = rng.standard_normal((100, 512)) / np.sqrt(512)
    return draws


def wavelengths(d_model, base=10000.0):
    """Positions per turn of each pair, read off the library's table (row 1 is the angle)."""
    pe = al.sinusoidal_encoding(2, d_model, base=base)
    omega = np.arctan2(pe[1, 0::2], pe[1, 1::2])  # angle of position 1: one step
    return 2 * np.pi / omega


# -- attention sees a set --------------------------------------------------------------------


@claim(
    "*dog* gets the same output vector whether it bites or is\nbitten, and so do *man* and "
    "*bites*. The second block is the first with its rows\nreordered.",
)
def test_the_two_sentences_give_the_same_rows():
    al.seed_everything(0)
    vocab = ["dog", "bites", "man"]
    embedding = torch.nn.Embedding(len(vocab), 8)
    attention = al.SelfAttention(d_model=8)

    def run(sentence):
        ids = torch.tensor([vocab.index(w) for w in sentence.split()])
        with torch.no_grad():
            return attention(embedding(ids)[None])[0][0]

    a, b = run("dog bites man"), run("man bites dog")
    torch.testing.assert_close(b, a[[2, 1, 0]], rtol=0, atol=1e-6)
    assert (a[0] - a[2]).abs().max() > 1e-3  # dog and man do differ


# -- the naive fixes ---------------------------------------------------------------------------


@claim(
    "At position 0 the two words point in different directions (cosine 0.24). From position 10\n"
    "on, the code is more than 40 times longer than either word, both vectors point along "
    "$(1, 1, \\ldots, 1)$,"
    "\nand their cosine is 1.000 to three decimals",
    "the cosine between two different words once the raw index is added jumps\nfrom 0.24 at "
    "position 0 to 0.97 at position 1, and climbs to 1 after that.",
)
def test_the_raw_index_swamps_the_words():
    d = chapter_draws()
    raw = al.index_encoding(1001, 16)
    cos = [float(al.cosine_similarity(d["cat"] + raw[p], d["car"] + raw[p])) for p in range(1001)]
    assert round(cos[0], 2) == 0.24 and round(cos[1], 2) == 0.97
    assert np.all(np.diff(cos[1:21]) > 0)  # climbs
    assert min(cos[10:]) >= 0.9995  # 1.000 to three decimals
    for word in (d["cat"], d["car"]):
        assert np.linalg.norm(raw[10]) > 40 * np.linalg.norm(word)
        assert 0.5 < np.linalg.norm(word) < 1.5  # "length about 1"


@claim(
    "position 2 is 0.5 in a 4-token sentence and 0.0625\nin a 32-token one",
    '"one step to the\nright" is 0.25 in one sentence and 0.03 in another',
)
def test_p_over_t():
    for T, at_2, step in [(4, 0.5, 0.25), (32, 0.0625, 0.03125)]:
        frac = al.index_encoding(T, 1, divide_by_length=True)[:, 0]
        assert frac[2] == at_2 and frac[1] == step


# -- sinusoids ---------------------------------------------------------------------------------


@claim(
    "Pair 0 turns fastest,\n$\\omega_0 = 1$ radian per position, so it comes round every "
    "$2\\pi \\approx 6.3$ positions.",
    "the slowest, pair $D/2 - 1$, turns once in\n$2\\pi \\cdot 10000^{(D-2)/D}$ positions: nearly "
    "$2\\pi \\cdot 10000 \\approx 62{,}832$ for wide\nvectors (60,611 for $D = 512$), fewer for "
    "narrow ones (19,869 for the $D = 16$ below).",
    "each pair $10000^{2/D}$ times slower than\nthe one before (a factor 3.16 here)",
    "from wavelength $2\\pi$ up to\n  $2\\pi \\cdot 10000^{(D-2)/D}$;",
)
def test_the_wavelengths():
    for D in (16, 64, 512):
        waves = wavelengths(D)
        np.testing.assert_allclose(waves[-1], 2 * np.pi * 10000 ** ((D - 2) / D), rtol=1e-9)
        assert round(waves[0], 1) == 6.3
        np.testing.assert_allclose(waves[1:] / waves[:-1], 10000 ** (2 / D), rtol=1e-9)
    assert round(wavelengths(512)[-1]) == 60_611 and round(wavelengths(16)[-1]) == 19_869
    assert round(2 * np.pi * 10000) == 62_832
    assert wavelengths(512)[-1] / (2 * np.pi * 10000) > 0.96  # nearly
    assert round(10000 ** (2 / 16), 2) == 3.16


@claim(
    "feature 0 is $\\sin p$, a wave of period\n$6.3$. Moving right the waves stretch out "
    "(feature 6 needs 15 positions per turn,\nfeature 14 needs 47, feature 40 nearly 2000), and "
    "from about feature 40 on the 50\npositions shown cover less than a fortieth of a turn, so "
    "the columns look flat: sines\nbelow 0.16, cosines above 0.98. (Feature 30, whose pair turns "
    "once in 471 positions,\nstill climbs to 0.61.)",
    "the sines (blue) and\ncosines (orange) swing fast on the left and settle to 0 and 1 on the "
    "right.",
)
def test_the_heat_map_of_the_table():
    pe = al.sinusoidal_encoding(50, 64)  # the figure's table
    waves = np.repeat(wavelengths(64), 2)  # per feature
    assert round(waves[0], 1) == 6.3
    assert [round(waves[f]) for f in (6, 14, 30)] == [15, 47, 471]
    assert 1900 < waves[40] < 2000
    assert all(49 / waves[f] < 1 / 40 for f in range(40, 64))
    assert np.abs(pe[:, 40::2]).max() < 0.16 and pe[:, 41::2].min() > 0.98
    assert np.abs(pe[:, 38]).max() > 0.2  # flat only from about feature 40
    assert round(pe[:, 30].max(), 2) == 0.61
    for row in pe[[20, 45]]:  # a row: fast swings on the left, 0 and 1 on the right
        assert np.abs(row[0:8:2]).max() > 0.5 and np.abs(row[56::2]).max() < 0.05
        assert row[57::2].min() > 0.99


@claim(
    "each position vector has length\n$\\sqrt{D/2}$, at position 5 as at position five million.",
    "the table of a 10-token sentence is the first 10 rows of the table for 1000 tokens.",
    "With $D = 5$ the columns are sin, cos, sin, cos, sin:",
)
def test_lengths_and_odd_d():
    pe = al.sinusoidal_encoding(100_000, 64)
    np.testing.assert_allclose(np.linalg.norm(pe[::997], axis=1), np.sqrt(32), rtol=1e-12)
    # far positions through RoPE, which turns each pair by the same angle p * omega_i:
    # the pair (0, 1) turned by a is (-sin a, cos a), so PE(p) is that with the sines negated
    upright = np.tile([0.0, 1.0], 32)
    far = al.apply_rope(np.stack([upright, upright]), positions=np.array([5, 5_000_000]))
    np.testing.assert_allclose(-far[0, 0::2], pe[5, 0::2], atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(far, axis=1), np.sqrt(32), rtol=1e-12)
    np.testing.assert_array_equal(
        al.sinusoidal_encoding(10, 64), al.sinusoidal_encoding(1000, 64)[:10]
    )
    odd = al.sinusoidal_encoding(3, 5)
    p = np.arange(3)
    for f, kind in enumerate([np.sin, np.cos, np.sin, np.cos, np.sin]):
        np.testing.assert_allclose(odd[:, f], kind(p * 10000.0 ** (-(f - f % 2) / 5)))


# -- offsets are linear maps -------------------------------------------------------------------


@claim(
    "Written as a block, one row per new feature,\nthey are",
    "row $j$\nof $M_k$ says how feature $j$ of $PE(p + k)$ is made from the features of $PE(p)$.",
    "PE(p + k) = PE(p)\\, M_k^\\top \\quad \\text{for every } p ,",
    "a whole $T \\times D$ table moves in one product, `pe @ M_k.T`.",
)
def test_the_offset_matrix_acts_on_rows_through_its_transpose():
    D, pe = 8, al.sinusoidal_encoding(300, 8)
    omega = 10000.0 ** (-np.arange(0, D, 2) / D)
    for k in (1, 3, 40, -2):
        m = al.offset_matrix(k, D)
        for i, w in enumerate(omega):
            b = k * w
            block = [[np.cos(b), np.sin(b)], [-np.sin(b), np.cos(b)]]
            np.testing.assert_allclose(m[2 * i : 2 * i + 2, 2 * i : 2 * i + 2], block, atol=1e-12)
        lo, hi = max(0, -k), 300 - max(0, k)
        np.testing.assert_allclose(pe[lo:hi] @ m.T, pe[lo + k : hi + k], atol=1e-9)
        for j in range(D):  # row j builds feature j of the later position
            np.testing.assert_allclose(pe[7] @ m[j], pe[7 + k, j], atol=1e-12)


@claim(
    "At $k = 0$, $M_0$ is the identity and the dots and stars coincide.",
    "At $k = 2$, $M_k$ is block diagonal: four $2 \\times 2$ blocks, each holding $\\cos b$ twice on "
    "its diagonal and $\\pm \\sin b$ off it.",
    "Pair 0 (features 0, 1) turns by $2$ radians ($115°$), pair 1\n(features 2, 3) by a tenth "
    "of that ($11.5°$), and pair 3 (features 6, 7) by $0.115°$, too\nlittle to see.",
    "at $k = 40$ pair 2 has\nturned $22.9°$, pair 1 $229°$, and pair 0 has gone round more than "
    "six times ($2{,}292°$);\nonly the slowest block, pair 3 at $2.29°$, still reads as the "
    "identity (1.0 on its\ndiagonal, 0.0 off it).",
)
def test_the_offset_slider():
    np.testing.assert_array_equal(al.offset_matrix(0, 8), np.eye(8))
    m2 = al.offset_matrix(2, 8)
    blocks = np.kron(np.eye(4), np.ones((2, 2))).astype(bool)
    assert (m2[~blocks] == 0).all()
    for i in range(4):
        (c1, s1), (s2, c2) = m2[2 * i : 2 * i + 2, 2 * i : 2 * i + 2]
        assert c1 == c2 and s1 == -s2 and math.isclose(c1**2 + s1**2, 1)
    omega = 2 * np.pi / wavelengths(8)  # radians per step, from the table

    def degrees(k):
        return np.degrees(k * omega)

    assert [f"{a:.3g}" for a in degrees(2)] == ["115", "11.5", "1.15", "0.115"]
    assert round(degrees(2)[0] / degrees(2)[1]) == 10
    assert [f"{a:.3g}" for a in degrees(40)[1:]] == ["229", "22.9", "2.29"]
    assert round(degrees(40)[0]) == 2292 and 6 < degrees(40)[0] / 360 < 7
    m40 = np.round(al.offset_matrix(40, 8), 1) + 0.0  # as the figure writes it
    np.testing.assert_array_equal(m40[6:, 6:], np.eye(2))
    for i in range(3):  # every other block visibly turned
        assert not np.array_equal(m40[2 * i : 2 * i + 2, 2 * i : 2 * i + 2], np.eye(2))


@claim(
    "So the heat map of all these dot products is constant along every\ndiagonal, and it is "
    "largest on the main diagonal, where each of the $D/2$ cosines is 1:",
    "The bright main diagonal is $D/2 = 32$; the values\nfall off on both sides, not "
    "monotonically, with ripples from the fast pairs.",
    "the dot product is the same for $p - q = 3$ and $p - q = -3$ (cosine is even)",
)
def test_the_dot_product_map():
    pe = al.sinusoidal_encoding(40, 64)
    gram = pe @ pe.T  # the figure's 40 x 40
    for k in range(-39, 40):
        assert np.ptp(np.diagonal(gram, k)) < 1e-9
    np.testing.assert_allclose(np.diagonal(gram), 32)
    assert (gram < 32 - 1e-9)[~np.eye(40, dtype=bool)].all()
    row = gram[0]
    assert (np.diff(row) > 0).any() and (np.diff(row) < 0).any()  # not monotonic
    np.testing.assert_allclose(gram[10, 13], gram[13, 10])


@claim(
    "a\nlearned pair of matrices can break that symmetry, because $PE(q) = PE(p)\\, M_{q-p}^\\top$ "
    "is\na known linear function of $PE(p)$.",
)
def test_projections_can_tell_before_from_after():
    pe = al.sinusoidal_encoding(30, 16)
    np.testing.assert_allclose(pe[13], pe[10] @ al.offset_matrix(3, 16).T, atol=1e-12)
    W_q, W_k = np.random.default_rng(0).standard_normal((2, 16, 16))
    after = (pe[10] @ W_q) @ (pe[13] @ W_k)
    before = (pe[10] @ W_q) @ (pe[7] @ W_k)
    assert abs(after - before) > 0.1
    np.testing.assert_allclose(pe[10] @ pe[13], pe[10] @ pe[7])  # raw vectors cannot


@claim(
    "With base 10000,\nonly 10 of the 32 pairs complete a turn within 100 positions",
    "position 0 is still fairly similar to position 50 (0.49)",
    "With base 10 every pair turns\nwithin 59 positions, all features wiggle, and the similarity "
    "falls to 0.08 four steps away\nand then stays between $-0.23$ and $0.11$",
)
def test_the_base_slider():
    def similarity(base):
        pe = al.sinusoidal_encoding(100, 64, base=float(base))
        return pe @ pe[0] / 32

    assert (wavelengths(64) < 100).sum() == 10
    assert round(similarity(10000)[50], 2) == 0.49
    assert wavelengths(64, base=10.0).max() < 59
    s = similarity(10)
    assert round(s[4], 2) == 0.08
    assert round(s[4:].min(), 2) == -0.23 and round(s[4:].max(), 2) == 0.11


# -- learned tables ----------------------------------------------------------------------------


@claim(
    "Rows 10 to 15 get exactly zero, whatever the loss, on every step",
    "There is no row for positions 512 to 599: the lookup fails (here, a `ValueError`).",
    "In the second case the lookup works, but rows 10 to 15 never received a gradient, so the "
    "model adds the random vectors they were initialised with (or, with weight decay, those\n"
    "vectors shrunk towards zero).",
    "they never learn\nanything. With a plain optimiser they stay the random numbers they started "
    "as (with\nweight decay, as BERT and GPT-2 were trained, they only shrink towards zero)",
)
def test_a_learned_table_and_its_unseen_rows():
    torch.manual_seed(0)
    learned = al.LearnedPositionalEmbedding(max_len=16, d_model=8)
    for loss_of in (lambda y: y.pow(2).mean(), lambda y: y.sin().sum()):
        learned.zero_grad()
        loss_of(learned(torch.randn(4, 10, 8))).backward()
        grad = learned.embedding.weight.grad.norm(dim=1)
        assert (grad[10:] == 0).all() and (grad[:10] > 0).all()
    with pytest.raises(ValueError):
        al.LearnedPositionalEmbedding(max_len=512, d_model=8)(torch.zeros(1, 600, 8))
    # train on 10-token inputs: with plain SGD the unseen rows keep their initial values;
    # with decoupled weight decay (AdamW) they only shrink, each along its own direction
    for optimiser, decays in ((torch.optim.SGD, False), (torch.optim.AdamW, True)):
        torch.manual_seed(0)
        table = al.LearnedPositionalEmbedding(max_len=16, d_model=8)
        start = table.embedding.weight.detach().clone()
        kwargs = {"lr": 0.1, "weight_decay": 0.01} if decays else {"lr": 0.1}
        opt = optimiser(table.parameters(), **kwargs)
        for _ in range(20):
            opt.zero_grad()
            table(torch.randn(4, 10, 8)).sin().sum().backward()
            opt.step()
        after = table.embedding.weight.detach()
        assert (after[:10] - start[:10]).abs().max() > 0.1  # the seen rows learned
        if not decays:
            assert torch.equal(after[10:], start[10:])
        else:
            ratio = after[10:] / start[10:]  # one shrink factor for every entry
            torch.testing.assert_close(ratio, torch.full_like(ratio, ratio[0, 0].item()))
            assert 0.9 < ratio[0, 0] < 1


# -- RoPE ----------------------------------------------------------------------------------------


@claim(
    "With RoPE (left) every diagonal has one colour: the score depends only on\n$p - q$. With "
    "sinusoids added to the input (right) it does not: the pattern runs in\nhorizontal and "
    "vertical bands, set by the absolute positions of the query and the key,\nbecause the codes "
    "also enter through cross terms such as $(x W^Q) \\cdot (PE(q)\\, W^K)$\nthat depend on one "
    "position alone.",
    "The score depends on the content ($x$, $y$) and on the offset $p - q$, and never on $p$\n"
    "alone.",
)
def test_rope_against_added_sinusoids():
    d, T = chapter_draws(), 24
    Q = al.apply_rope(np.tile(d["q_vec"], (T, 1)))
    K = al.apply_rope(np.tile(d["k_vec"], (T, 1)))
    rope = Q @ K.T
    assert max(np.ptp(np.diagonal(rope, o)) for o in range(1 - T, T)) < 1e-9
    pe, x, W_q, W_k = al.sinusoidal_encoding(T, 16), d["x_word"], d["W_q"], d["W_k"]
    added = ((x + pe) @ W_q) @ ((x + pe) @ W_k).T
    assert max(np.ptp(np.diagonal(added, o)) for o in range(1 - T, T)) > 3
    # the four terms: content-content (one number), one-position terms, position-position
    by_query = (pe @ W_q) @ (x @ W_k)  # (T,): rows, horizontal bands
    by_key = (x @ W_q) @ (pe @ W_k).T  # (T,): columns, vertical bands
    both = (pe @ W_q) @ (pe @ W_k).T
    np.testing.assert_allclose(
        added, (x @ W_q) @ (x @ W_k) + by_query[:, None] + by_key[None, :] + both, atol=1e-9
    )
    assert np.ptp(by_query) > 1 and np.ptp(by_key) > 1  # each spans a good part of the map
    # bands: a row effect plus a column effect explains most of the map (0.9 of its variance)
    c = added - added.mean()
    bands = c.mean(axis=1, keepdims=True) + c.mean(axis=0, keepdims=True)
    assert ((c - bands) ** 2).sum() < 0.2 * (c**2).sum()


@claim(
    "Read each pair as one complex number and the rotation is a multiplication:",
)
def test_rope_is_a_complex_multiplication():
    x = chapter_draws()["q"]  # (6, 8)
    rotated = al.apply_rope(x)
    omega = 10000.0 ** (-np.arange(0, 8, 2) / 8)
    p = np.arange(6)[:, None]
    z = (x[:, 0::2] + 1j * x[:, 1::2]) * np.exp(1j * p * omega)
    np.testing.assert_allclose(rotated[:, 0::2], z.real, atol=1e-12)
    np.testing.assert_allclose(rotated[:, 1::2], z.imag, atol=1e-12)


# -- adding or concatenating -----------------------------------------------------------------


@claim(
    "The dot product of two\nconcatenations, $x \\cdot y + PE(p) \\cdot PE(q)$, keeps only the "
    "first and the last.",
    "$[x ; PE(p)]\\, W^Q = x\\, U + PE(p)\\, R$, where $U$ holds the first $D$ rows of\n$W^Q$ and "
    "$R$ the others. That is a projected token plus a projected position, and the\nscore of two "
    "such queries and keys has all four terms again.",
)
def test_concatenation_after_a_projection_has_the_cross_terms():
    rng = np.random.default_rng(1)
    D, d = 16, 8
    pe = al.sinusoidal_encoding(20, D)
    x, y = rng.standard_normal((2, D))
    p, q = pe[3], pe[11]
    cat_x, cat_y = np.concatenate([x, p]), np.concatenate([y, q])
    np.testing.assert_allclose(cat_x @ cat_y, x @ y + p @ q)
    W_q, W_k = rng.standard_normal((2, 2 * D, d))
    U, R = W_q[:D], W_q[D:]
    Uk, Rk = W_k[:D], W_k[D:]
    np.testing.assert_allclose(cat_x @ W_q, x @ U + p @ R)
    terms = [(x @ U) @ (y @ Uk), (x @ U) @ (q @ Rk), (p @ R) @ (y @ Uk), (p @ R) @ (q @ Rk)]
    np.testing.assert_allclose((cat_x @ W_q) @ (cat_y @ W_k), sum(terms))
    assert min(abs(t) for t in terms[1:3]) > 0.1  # the cross terms are back


@claim(
    "A sinusoidal vector has length $\\sqrt{D/2}$ (16 for $D = 512$). Token vectors\n"
    "initialised with entries of variance $1/D$ have length about 1",
    "for such tokens the factor brings the length to about\n$\\sqrt{D}$ (23 for $D = 512$), close "
    "to the 16 of a position vector.",
    "Unscaled, the sum points almost entirely along the position (cosine 1.00) and the word is\n"
    "nearly lost; scaled by $\\sqrt{D}$, both parts are visible in the sum.",
    "a token and a position vector have a cosine\nof 0.035 on average, in absolute value.",
)
def test_the_sizes_of_token_and_position():
    d = chapter_draws()
    pe, tokens = al.sinusoidal_encoding(100, 512), d["tokens"]
    assert np.linalg.norm(pe, axis=1).round(6).tolist() == [16.0] * 100
    assert 0.9 < np.linalg.norm(tokens, axis=1).mean() < 1.1
    mixed = tokens + pe
    assert round(al.cosine_similarity(mixed, pe).mean(), 2) == 1.00
    scaled = np.sqrt(512) * tokens
    assert round(np.linalg.norm(scaled, axis=1).mean()) == 23 == round(np.sqrt(512))
    assert round(al.cosine_similarity(scaled + pe, scaled).mean(), 2) == 0.82
    assert round(al.cosine_similarity(scaled + pe, pe).mean(), 2) == 0.58
    assert round(np.abs(al.cosine_similarity(tokens, pe)).mean(), 3) == 0.035


@claim(
    "$PE(7) \\cdot PE(7) = D/2 = 32$: each of the 32 pairs contributes $\\sin^2 + \\cos^2 = 1$.\n"
    "The other three are equal: $\\sum_i \\cos(3\\,\\omega_i)$",
)
def test_answer_3():
    pe = al.sinusoidal_encoding(30, 64)
    omega = 10000.0 ** (-np.arange(0, 64, 2) / 64)
    assert math.isclose(pe[7] @ pe[7], 32)
    for a, b in [(7, 10), (10, 7), (20, 23)]:
        assert math.isclose(pe[a] @ pe[b], np.cos(3 * omega).sum(), rel_tol=1e-12)


@claim(
    "The base sets the ratio between the slowest and the fastest clock hand: the ratio is\n"
    "$\\mathrm{base}^{(D-2)/D}$, about 7,500 for base 10000 at this $D = 64$, and nearly the base\n"
    "itself for large $D$.",
)
def test_the_base_sets_the_ratio_of_the_wavelengths():
    for base in (10.0, 10000.0):
        for D in (16, 64, 512):
            waves = wavelengths(D, base=base)
            np.testing.assert_allclose(waves[-1] / waves[0], base ** ((D - 2) / D), rtol=1e-9)
    waves = wavelengths(64)
    assert round(waves[-1] / waves[0], -2) == 7_500
    assert wavelengths(4096)[-1] / wavelengths(4096)[0] / 10000 > 0.99


test_every_quoted_claim_is_in_the_chapter = quotes_are_in(CHAPTER, globals())
