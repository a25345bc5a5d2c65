"""Chapter 3's quantitative sentences, recomputed from the library and asserted.

Each test quotes the sentences it checks (tests/_claims.py). Most figures are computed from
fixed numbers (the compass store, the hand-set projections, the 112/96 example). The pronoun
model is trained from the chapter's random state, so :func:`pronoun_run` replays the
chapter's draws in order, and checks its accuracy report against the chapter's committed
output (which nbval keeps equal to a fresh run): if the chapter's draws change, this test
says so instead of checking another model.
"""

from __future__ import annotations

import math

import nbformat
import numpy as np
import pytest
import torch
from _claims import ROOT, claim, quotes_are_in

import attnlab as al
from attnlab.tasks.data import PRONOUN_WORDS, pronoun_accuracy, pronoun_batch, pronoun_batches

CHAPTER = "chapters/03_qkv.ipynb"

KEYS = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, -1.0], [-1.0, 0.0]])  # N, E, S, W
VALUES = np.array([[10.0], [20.0], [30.0], [40.0]])
ANGLES = [0, 20, 45, 70, 90, 135, 180, 250]  # the slider's


def lookup(angle, tau):
    rad = np.deg2rad(angle)
    q = np.array([[np.cos(rad), np.sin(rad)]])
    out, weights = al.scaled_dot_product_attention(q, KEYS, VALUES, scale=1 / tau)
    return float(out[0, 0]), weights[0]


# -- the soft dictionary ----------------------------------------------------------------------


@claim(
    "The query *east* gets almost all of its weight on the key *east* and returns almost "
    "exactly its value, 20. The query *north-east*, which a dictionary cannot answer, splits "
    "its weight evenly between *north* and *east* and returns 15.1, halfway between their "
    "values (the other two keys keep a sliver each, 0.002, too small for the two decimals "
    "printed, yet it is why the output is 15.1 and not 15.0)."
)
def test_two_queries():
    out, w = lookup(0, 0.25)
    assert w[1] > 0.95 and round(out, 1) == 20.0
    out, w = lookup(45, 0.25)
    assert w[0] == pytest.approx(w[1]) and round(w[0], 2) == 0.5
    assert round(out, 1) == 15.1
    assert w[2] == pytest.approx(w[3]) and round(w[2], 3) == 0.002
    assert f"{w[2]:.2f}" == "0.00"  # as the chapter prints it
    without = (w[0] * 10 + w[1] * 20) / (w[0] + w[1])  # the two keys alone
    assert round(without, 1) == 15.0


@claim(
    "At the start (query at 20°, $\\tau = 0.25$) *east* takes 0.91 of the weight and *north* "
    "0.08, so the output, 19.2, is pulled a little from 20 towards north's 10. Raise $\\tau$ to "
    "1 and the weights spread over all four keys; lower it to 0.05 and the closest key takes "
    "everything: the output jumps from one stored value to the next as the query turns.",
    "Only an exact tie, at 45° or 135°, still splits the weight.",
)
def test_the_lookup_slider():
    out, w = lookup(20, 0.25)
    assert (round(w[1], 2), round(w[0], 2), round(out, 1)) == (0.91, 0.08, 19.2)
    assert all(lookup(20, 1.0)[1] > 0.05)
    outputs = []
    for angle in ANGLES:
        out, w = lookup(angle, 0.05)
        if angle in (45, 135):
            assert sorted(w)[-2:] == pytest.approx([0.5, 0.5], abs=1e-6)
        else:
            assert w.max() > 0.99
            outputs.append(round(out))
    assert set(outputs) <= {10, 20, 30, 40} and len(set(outputs)) == 4


@claim(
    "At 20° the closest key is *east*, so all the weight goes to it and the output is 20",
    "At 45° *north* and *east* tie exactly, so they always get equal weights, and as "
    "$\\tau \\to 0$ they share everything, 0.5 each: the output goes to 15, halfway between 10 "
    "and 20. At a higher temperature the two keys behind the query keep a share as well and "
    "pull the output up: at $\\tau = 1$ the weights are 0.40, 0.40, 0.10 and 0.10, and the "
    "output is 18.9",
)
def test_answer_1():
    assert lookup(20, 1e-3)[0] == pytest.approx(20)
    for tau in (1.0, 0.25, 0.05, 1e-3):
        out, w = lookup(45, tau)
        assert w[0] == pytest.approx(w[1])
    assert lookup(45, 1e-3)[0] == pytest.approx(15)
    out, w = lookup(45, 1.0)
    assert np.round(w, 2).tolist() == [0.4, 0.4, 0.1, 0.1]
    assert round(out, 1) == 18.9


@claim(
    "its `scale` argument multiplies the scores, so `scale=4` means a temperature $\\tau = 1/4$."
)
def test_scale_is_one_over_the_temperature():
    q = np.array([[0.6, 0.8]])
    _, w = al.scaled_dot_product_attention(q, KEYS, VALUES, scale=4.0)
    assert np.allclose(w[0], al.softmax((q @ KEYS.T)[0], temperature=1 / 4))


# -- why three roles --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bark():
    table = al.toy_embeddings()
    words = "bark is very cute and he is a dog".split()
    X = table.vectors_for(words)
    Xs = 3.0 * X
    _, plain = al.scaled_dot_product_attention(Xs, Xs, Xs)
    dims = list(table.dims)
    W_q, W_k = np.zeros((15, 2)), np.zeros((15, 2))
    W_q[dims.index("male"), 0] = W_q[dims.index("female"), 0] = 3.0
    W_k[dims.index("animal"), 0] = 3.0
    W_q[dims.index("animal"), 1] = 3.0
    W_k[dims.index("affection"), 1] = 3.0
    Z, roles = al.scaled_dot_product_attention(X @ W_q, X @ W_k, X)
    return {"table": table, "words": words, "X": X, "plain": plain, "roles": roles, "Z": Z,
            "W_q": W_q, "W_k": W_k}  # fmt: skip


@claim(
    "*He* keeps the largest share, 0.35, for itself and gives *dog* 0.11.",
    "never negative, and usually the largest in its row",
)
def test_he_without_projections(bark):
    words, A = bark["words"], bark["plain"]
    he, dog = words.index("he"), words.index("dog")
    assert A[he].argmax() == he and round(A[he, he], 2) == 0.35
    assert round(A[he, dog], 2) == 0.11
    diagonal_wins = sum(A[i].argmax() == i or A[i, i] == A[i].max() for i in range(len(words)))
    assert diagonal_wins > len(words) / 2


@claim(
    "Flip the slider back to see the diagonal of weightless attention, where the words with a "
    "strong vector (*bark*, *cute*, *he*, *dog*) put their largest weight on themselves (from "
    "0.29 for *bark* to 0.50 for *dog*) and the others spread their weight almost evenly."
)
def test_the_map_without_projections(bark):
    words, A = bark["words"], bark["plain"]
    strong = [words.index(w) for w in ("bark", "cute", "he", "dog")]
    for i in strong:
        assert A[i].argmax() == i
    selves = [A[i, i] for i in strong]
    assert f"{min(selves):.2f}" == f"{A[0, 0]:.2f}" == "0.29"  # bark: the heat map's text
    assert f"{max(selves):.2f}" == f"{A[8, 8]:.2f}" == "0.50"  # dog
    for w in ("is", "very", "and", "a"):
        i = words.index(w)
        assert A[i].max() < 0.14 and A[i].min() > 0.08  # 1/9 = 0.11, give or take


@claim(
    'Only five cells are non-zero: in $W^Q$, *male* and *female* ask "animal?" (two '
    "neighbouring cells)"
)
def test_five_cells(bark):
    assert np.count_nonzero(bark["W_q"]) + np.count_nonzero(bark["W_k"]) == 5
    dims = list(bark["table"].dims)
    assert dims.index("female") == dims.index("male") + 1  # side by side: one block of two


@claim(
    "a token hands over its embedding unchanged, all 15 numbers of it. A value need not be as "
    "wide as the queries and keys, which have 2 numbers here ($d = 2$, one per question)",
)
def test_the_value_width(bark):
    assert bark["W_q"].shape == bark["W_k"].shape == (15, 2)
    assert bark["Z"].shape == (9, 15)  # each output is a mix of 15-number values


@claim(
    "With the projections, *he* sends 0.74 of its weight to *dog*, 0.13 to *bark* and only "
    '0.01 to itself: its query ("animal?") is orthogonal to its own key, since *he* has no '
    "animal component, and *dog* is more of an animal than *bark*. The *dog* row asks "
    '"affection?" and finds *cute* (0.74). The rows of *is*, *very*, *and* and *a* are flat '
    "at 0.11 = 1/9: those words ask no question (their query is zero), every key scores 0, "
    "and they take a plain average.",
    "With one vector per token the score $x_i \\cdot x_j$ is symmetric: *he* scores *dog* exactly "
    "as *dog* scores *he*, and their weights differ (0.11 and 0.06 in the weightless map) only "
    "because each row is normalised on its own.",
    "*he* gives *dog* 0.74 of its weight, *dog* gives *he* 0.00.",
)
def test_he_with_projections(bark):
    words, A, X, table = bark["words"], bark["roles"], bark["X"], bark["table"]
    he, dog, cute = (words.index(w) for w in ("he", "dog", "cute"))
    assert [round(A[he, j], 2) for j in (dog, 0, he)] == [0.74, 0.13, 0.01]
    animal = list(table.dims).index("animal")
    assert table.vector("he")[animal] == 0
    assert table.vector("dog")[animal] > table.vector("bark")[animal]
    assert A[dog].argmax() == cute and round(A[dog, cute], 2) == 0.74
    for w in ("is", "very", "and", "a"):
        i = words.index(w)
        assert not (X[i] @ bark["W_q"]).any()
        assert np.allclose(A[i], 1 / 9) and round(1 / 9, 2) == 0.11
    assert A[dog, he] < 0.01 and f"{A[dog, he]:.2f}" == "0.00"  # as the heat map writes it
    Xs = 3.0 * X
    scores = Xs @ Xs.T
    np.testing.assert_allclose(scores, scores.T)  # weightless: symmetric scores
    plain = bark["plain"]
    assert (f"{plain[he, dog]:.2f}", f"{plain[dog, he]:.2f}") == ("0.11", "0.06")
    W = bark["W_q"] @ bark["W_k"].T
    assert not np.allclose(W, W.T)
    projected = (X @ bark["W_q"]) @ (X @ bark["W_k"]).T
    assert projected[he, dog] > 5 and projected[dog, he] == 0


@claim("Because the values are the embeddings, the new vector of *he* is now mostly *dog*")
def test_he_becomes_dog(bark):
    he = bark["words"].index("he")
    dog = bark["table"].vector("dog")
    assert float(al.cosine_similarity(bark["X"][he], dog)) < 0.3
    assert float(al.cosine_similarity(bark["Z"][he], dog)) > 0.99


# -- the worked example ------------------------------------------------------------------------


@claim(
    "| score $q_1 \\cdot k_j$ | 112 | 96 |",
    "| divide by $\\sqrt{d} = 8$ | 14 | 12 |",
    "| softmax | 0.88 | 0.12 |",
    "Only the *difference* between the scaled scores matters: "
    "$e^{14}/(e^{14} + e^{12}) = 1/(1 + e^{-2}) = 0.8808$.",
    "the raw scores differ by 16, the scaled ones by 2.",
)
def test_the_worked_example():
    rng = np.random.default_rng(7)
    d = 64
    q1 = rng.standard_normal(d)
    k = rng.standard_normal((2, d))
    v = rng.standard_normal((2, d))
    k += ((np.array([112.0, 96.0]) - k @ q1) / (q1 @ q1))[:, None] * q1
    s = al.scores(q1[None], k)[0]
    assert np.allclose(s, [112, 96]) and np.allclose(s / math.sqrt(d), [14, 12])
    a = al.softmax(s / math.sqrt(d))
    assert np.round(a, 2).tolist() == [0.88, 0.12] and round(a[0], 4) == 0.8808
    assert round(1 / (1 + math.exp(-2)), 4) == 0.8808
    z, _ = al.scaled_dot_product_attention(q1[None], k, v)
    assert np.allclose(z[0], a[0] * v[0] + a[1] * v[1])


@claim(
    "At 8 you see 0.8808 and 0.1192. Without the division (1) the first key takes 1.0000 and "
    "the second 0.0000: a difference of 16 in the scores is $e^{16} \\approx 9$ million to one",
    "Dividing by 64 goes the other way, 0.5622 to 0.4378: nearly an even average.",
    "the first is $1/(1 + e^{-16}) \\approx 0.9999999$ and the second "
    "$\\approx 1.1 \\times 10^{-7}$.",
)
def test_the_divisor_slider():
    w = {div: al.softmax(np.array([112.0, 96.0]) / div) for div in (1, 2, 4, 8, 16, 32, 64)}
    assert np.round(w[8], 4).tolist() == [0.8808, 0.1192]
    assert np.round(w[1], 4).tolist() == [1.0, 0.0]
    assert round(math.exp(16) / 1e6) == 9
    assert np.round(w[64], 4).tolist() == [0.5622, 0.4378]
    assert round(w[1][0], 7) == 0.9999999 and round(w[1][1] * 1e7, 1) == 1.1


# -- four ways to score ------------------------------------------------------------------------


@claim(
    "With $W = I$ the general score *is* the dot product. And with $W = W^Q (W^K)^\\top$ it is "
    "exactly what the query and key projections of the previous section compute",
    "$2 D d$ numbers instead of $D^2$, and a matrix of rank at most $d$.",
)
def test_general_scores():
    rng = np.random.default_rng(0)
    q, K = rng.standard_normal((1, 8)), rng.standard_normal((3, 8))
    Wq, Wk = rng.standard_normal((8, 2)), rng.standard_normal((8, 2))
    assert np.allclose(al.general_scores(q, K, np.eye(8)), al.scores(q, K))
    assert np.allclose(al.general_scores(q, K, Wq @ Wk.T), al.scores(q @ Wq, K @ Wk))
    assert Wq.size + Wk.size == 2 * 8 * 2 < 8 * 8
    assert np.linalg.matrix_rank(Wq @ Wk.T) <= 2


@claim(
    "On paper the three are close.",
    "The additive score must build a $T \\times S \\times d_a$ tensor, 64 times larger here",
)
def test_the_cost_of_scoring():
    T = S = 512
    d = d_a = 64
    costs = {
        "dot": T * S * d,
        "general": T * d * d + T * S * d,
        "additive": T * d * d_a + S * d * d_a + T * S * d_a,
    }
    assert [round(c / 1e6, 1) for c in costs.values()] == [16.8, 18.9, 21.0]
    assert max(costs.values()) / min(costs.values()) < 1.3
    assert T * S * d_a / (T * S) == 64


@claim(
    "It maps $q$ and $k$ through a feature map $\\phi$ with positive outputs and gives value $j$ "
    "the weight $\\phi(q) \\cdot \\phi(k_j)$ divided by the sum of these over all keys",
    "Without the exponential, the sums over the keys can be computed once and shared by every "
    "query",
)
def test_linear_attention_shares_the_sums_over_the_keys():
    rng = np.random.default_rng(0)
    T, d = 6, 4
    q, k, v = rng.standard_normal((T, d)), rng.standard_normal((T, d)), rng.standard_normal((T, 3))
    phi = lambda x: np.where(x > 0, x + 1, np.exp(x))  # noqa: E731  (elu + 1: positive)
    kernel = phi(q) @ phi(k).T  # (T, S): phi(q_i) . phi(k_j), in place of exp(q_i . k_j)
    assert (kernel > 0).all()
    weights = kernel / kernel.sum(-1, keepdims=True)  # each row sums to 1, no softmax
    pairwise = weights @ v  # T x S weights: quadratic in the length
    kv, k_sum = phi(k).T @ v, phi(k).sum(0)  # (d, 3) and (d,): once, for every query
    shared = (phi(q) @ kv) / (phi(q) @ k_sum)[:, None]  # linear in the length
    np.testing.assert_allclose(shared, pairwise)


# -- projections, shapes and parameters --------------------------------------------------------


@claim(
    "one layer has $3Dd$ parameters (98,304 for 512 → 64).",
    "Parameters: $3 \\times 512 \\times 64 = 98{,}304$ (without biases).",
)
def test_parameters():
    layer = al.SelfAttention(d_model=512, d_head=64)
    assert sum(p.numel() for p in layer.parameters()) == 3 * 512 * 64 == 98_304
    assert tuple(layer.W_q.weight.shape) == (64, 512)
    assert 3 * 512 * 512 == 786_432


@claim(
    "$Q$: $7 \\times 64$; $K$ and $V$: $12 \\times 64$; weights $7 \\times 12$ (one row per "
    "query); output $7 \\times 64$."
)
def test_cross_attention_shapes():
    cross = al.CrossAttention(d_model=512, d_head=64)
    z, w = cross(torch.randn(1, 7, 512), torch.randn(1, 12, 512))
    assert tuple(w.shape) == (1, 7, 12) and tuple(z.shape) == (1, 7, 64)
    assert torch.allclose(w.sum(-1), torch.ones(1, 7))


# -- learning the projections -----------------------------------------------------------------


@claim(
    "Each sentence holds six words: a male name, a female name, *he*, *she* and two filler "
    "words, in random order.",
    "each of the 16 words gets a fixed random embedding of 16 numbers",
)
def test_the_pronoun_task():
    assert len(PRONOUN_WORDS) == 16  # "each of the 16 words gets a fixed random embedding"
    ids, targets = pronoun_batch(200, rng=1)
    words = np.array(PRONOUN_WORDS)
    for row, answer in zip(ids.tolist(), targets.tolist(), strict=True):
        assert len(row) == 6
        he, she = row.index(PRONOUN_WORDS.index("he")), row.index(PRONOUN_WORDS.index("she"))
        others = [i for i in range(6) if i not in (he, she)]
        assert [answer[i] for i in others] == [row[i] for i in others]
        assert words[answer[he]] != "he" and answer[he] in row
        assert words[answer[she]] != "she" and answer[she] in row


def _committed_output(cell_source_start: str) -> str:
    nb = nbformat.read(ROOT / CHAPTER, as_version=4)
    cell = next(c for c in nb.cells if c.source.startswith(cell_source_start))
    return "".join(o.get("text", "") for o in cell.outputs)


@pytest.fixture(scope="module")
def pronoun_run():
    """The chapter's pronoun model, trained from the chapter's random state.

    ``seed_everything(0, threads=1)``, then every draw the chapter makes before the model,
    in its order: the worked example's ``q1, k, v``; the scorers' ``q, K, W, W_a, U_a, v_a``;
    ``Wq, Wk``; the torch draws of the shape trace and of cross-attention; then ``E``.
    """
    threads = torch.get_num_threads()
    try:
        rng = al.seed_everything(0, threads=1)
        for shape in [(64,), (2, 64), (2, 64), (1, 8), (3, 8), (8, 8), (8, 16), (8, 16), (16,),
                      (8, 2), (8, 2)]:  # fmt: skip
            rng.standard_normal(shape)
        al.SelfAttention(d_model=512, d_head=64)
        torch.randn(1, 2, 512)
        torch.randn(1, 5, 16), torch.randn(1, 3, 16)
        al.CrossAttention(d_model=16, d_head=8)
        al.SelfAttention(16, 8)
        E = torch.from_numpy(rng.standard_normal((16, 16)))
        test_ids, test_targets = pronoun_batch(1000, rng=2)
        plain = al.OneLayerAttention(E, learned=False)
        with torch.no_grad():
            plain_logits = plain(test_ids)
        model = al.OneLayerAttention(E, d_head=4)
        example = test_ids[:1]
        stream = pronoun_batches(32, rng=0)
        snapshots, report, done = {}, [], 0
        for step in [0, 10, 20, 30, 40, 60, 100]:
            if step > done:
                al.train(model, stream, steps=step - done, lr=1e-2, pad_id=None,
                               schedule="constant", progress=False)  # fmt: skip
                done = step
            snapshots[step] = model.attend(example)[1][0].detach().numpy()
            accuracy = pronoun_accuracy(model(test_ids), test_ids, test_targets)
            report.append(f"step {step:>3}: {accuracy:6.1%} of pronouns right")
    finally:
        torch.set_num_threads(threads)
    assert "\n".join(report) + "\n" == _committed_output("model = al.OneLayerAttention(E"), (
        "the replay no longer draws what the chapter draws: update pronoun_run"
    )
    labels = [PRONOUN_WORDS[i] for i in example[0]]
    with torch.no_grad():
        right = model(test_ids).argmax(-1) == test_targets
    return {"right": right,"model": model, "plain": plain, "plain_logits": plain_logits, "ids": test_ids,
            "targets": test_targets, "snapshots": snapshots, "labels": labels,
            "report": report}  # fmt: skip


@claim(
    "Weightless attention gets every pronoun wrong: each word's strongest match is itself, so "
    "*he* predicts *he* and *she* predicts *she*.",
    "learned $W^Q, W^K$ ($16 \\times 4$: queries and keys of $d = 4$ numbers) and $W^V$ "
    "($16 \\times 16$: values as wide as the embeddings, since the output is compared with "
    "them)",
)
def test_weightless_attention_fails(pronoun_run):
    ids, logits = pronoun_run["ids"], pronoun_run["plain_logits"]
    assert pronoun_accuracy(logits, ids, pronoun_run["targets"]) == 0
    predicted = logits.argmax(-1)
    for word in ("he", "she"):
        where = ids == PRONOUN_WORDS.index(word)
        assert (predicted[where] == PRONOUN_WORDS.index(word)).all()
    attn = pronoun_run["model"].attention
    shapes = {name: tuple(p.shape) for name, p in attn.named_parameters()}
    assert shapes == {"W_q.weight": (4, 16), "W_k.weight": (4, 16), "W_v.weight": (16, 16)}


@claim(
    "From 1.6% at the start (random projections), the layer climbs to 99.2% after 60 steps "
    "and 100% after 100: every pronoun in the 1000 test sentences names the right word.",
    "on the pronoun task, weightless attention fails and a trained layer resolves every pronoun.",
)
def test_training(pronoun_run):
    report = pronoun_run["report"]
    assert report[0].endswith("  1.6% of pronouns right")
    assert report[5] == "step  60:  99.2% of pronouns right"
    assert report[6] == "step 100: 100.0% of pronouns right"
    assert len(pronoun_run["ids"]) == 1000


@claim(
    "At step 0 the random projections spread every row thinly, between 0.13 and 0.21. By step "
    "100 *he* puts 0.76 of its weight on *Leo*, the male name of this sentence, and *she* 0.89 "
    "on *Bella*.",
    "The other rows only have to predict their own word, and the task does not care how: *Leo* "
    "and *a* look at themselves, *Bella* looks at *she*",
)
def test_the_training_slider(pronoun_run):
    labels, snaps = pronoun_run["labels"], pronoun_run["snapshots"]
    assert round(snaps[0].min(), 2) == 0.13 and round(snaps[0].max(), 2) == 0.21
    A = snaps[100]
    at = labels.index
    assert round(A[at("he"), at("Leo")], 2) == 0.76 and A[at("he")].argmax() == at("Leo")
    assert round(A[at("she"), at("Bella")], 2) == 0.89 and A[at("she")].argmax() == at("Bella")
    assert A[at("Leo")].argmax() == at("Leo") and A[at("a")].argmax() == at("a")
    assert A[at("Bella")].argmax() == at("she")
    assert pronoun_run["right"].all()  # every word of the 1000 sentences, pronoun or not


test_every_quoted_claim_is_in_the_chapter = quotes_are_in(CHAPTER, globals())
