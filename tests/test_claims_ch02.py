"""Chapter 2's quantitative sentences, recomputed from the library and asserted.

Each test quotes the sentences it checks (tests/_claims.py). The statistical claims (how
scores spread with ``d``, how the softmax saturates) are recomputed with draws of their own,
as many as the chapter's, and asserted with margins that its figure's numbers clear; the
exact digits the chapter prints are compared by nbval.
"""

from __future__ import annotations

import math

import nbformat
import numpy as np
import pytest
from _claims import ROOT, claim, quotes_are_in

import attnlab as al
from attnlab.tasks.embeddings import toy_embeddings
from attnlab.tasks.tokenizer import _AFFIXES as AFFIXES
from attnlab.tasks.tokenizer import _BASE_WORDS as BASE_WORDS
from attnlab.tasks.tokenizer import DEFAULT_CORPUS, WordPieceTokenizer, default_vocab, train_bpe

CHAPTER = "chapters/02_similarity.ipynb"
STRETCH = 3.0


@pytest.fixture(scope="module")
def tokenizer():
    return WordPieceTokenizer()


@pytest.fixture(scope="module")
def table():
    return toy_embeddings()


@pytest.fixture(scope="module")
def E_toy(tokenizer, table):
    """The chapter's embedding matrix: the table's vectors at the tokenizer's ids."""
    E = np.zeros((len(tokenizer.vocab), len(table.dims)))
    for word in table.words:
        E[tokenizer.vocab[word]] = table.vector(word)
    return E


def weights_of(tokenizer, E_toy, text, tau=1.0):
    ids = tokenizer.encode(text)
    X = STRETCH * E_toy[ids]
    return tokenizer.decode(ids).split(), al.softmax(
        al.scaled_scores(X, X), axis=-1, temperature=tau
    )


# -- tokens -------------------------------------------------------------------------------------


@claim(
    "Our tokenizer's vocabulary is small, 560 entries",
    "four special tokens such as `<unk>`, about 400 common English words (every word of the "
    "embedding table used later in this chapter among them), nearly 50 prefixes and suffixes "
    "such as `un`, `##ing` and `##ness`, every ASCII punctuation mark, and every ASCII letter "
    "and digit, alone and as a `##` piece.",
    "So a word made of letters and digits is never unknown",
)
def test_the_vocabulary(tokenizer, table):
    import string

    vocab = default_vocab()
    tokens = vocab.tokens
    assert len(vocab) == 560
    assert "<unk>" in tokens[:4] and all(t.startswith("<") for t in tokens[:4])
    words = set(BASE_WORDS) - set(string.ascii_lowercase)
    assert 380 <= len(words) <= 420
    assert set(table.words) <= set(tokens)
    assert 45 <= len(set(AFFIXES)) < 50
    assert {"un", "##ing", "##ness"} <= set(AFFIXES)
    for c in string.ascii_lowercase + string.digits:
        assert c in tokens and "##" + c in tokens
    assert set(string.punctuation) <= set(tokens)
    for word in ["qzx9", "xylophonic", "a1b2c3"]:
        assert "<unk>" not in tokenizer.tokenize(word)


@claim(
    "Common words stay whole and familiar ones split at a stem, prefix or suffix "
    "(*play·ful·ness*).",
    "When the vocabulary lacks the stem, as for *unhappy*, the middle is spelled out; a "
    "made-up word is spelled out entirely. *Café* shows the limit: *é* is not in this small "
    "vocabulary, so the word becomes `<unk>`.",
)
def test_how_words_are_cut(tokenizer):
    cut = {w: tokenizer.tokenize(w) for w in ["walking", "playfulness", "unhappy", "zyxt", "café"]}
    assert cut["walking"] == ["walk", "##ing"]
    assert cut["playfulness"] == ["play", "##ful", "##ness"]
    assert cut["unhappy"] == ["un", "##h", "##a", "##p", "##p", "##y"]
    assert cut["zyxt"] == ["z", "##y", "##x", "##t"]
    assert cut["café"] == ["<unk>"]


@claim(
    "Frequent endings such as *-ing* and *-ed* and short words like *the* and *and* appear "
    "after a handful of merges",
)
def test_bpe_finds_endings_and_short_words_first():
    merges = train_bpe(DEFAULT_CORPUS, n_merges=12)
    made = {a.removeprefix("##") + b.removeprefix("##") for a, b in merges}
    made_whole = {a + b.removeprefix("##") for a, b in merges if not a.startswith("##")}
    assert {"ing", "ed"} <= made
    assert {"the", "and"} <= made_whole


# -- directions that mean something -----------------------------------------------------------


@claim(
    "Look for the royalty column, bright for king and queen and faint (0.1) for money, and the "
    "nature column, bright for river and bank and faint for dog and by."
)
def test_the_embedding_figure(table):
    show = "king queen man woman river bank money by dog cute".split()
    dims = list(table.dims)
    V = table.vectors_for(show)
    column = lambda dim: dict(zip(show, V[:, dims.index(dim)], strict=True))  # noqa: E731
    lit = lambda dim: {w for w, v in column(dim).items() if v > 0.5}  # noqa: E731
    faint = lambda dim: {w for w, v in column(dim).items() if 0 < v <= 0.2}  # noqa: E731
    assert lit("royalty") == {"king", "queen"} and faint("royalty") == {"money"}
    assert column("royalty")["money"] == 0.1
    assert lit("nature") == {"river", "bank"} and faint("nature") == {"dog", "by"}
    assert not {w for w, v in column("royalty").items() if 0.2 < v <= 0.5}  # nothing between
    assert (len(table.words), len(table.dims)) == (45, 15)


@claim(
    "The second line follows a grammatical direction (past tense), the third a geographic one "
    "(the capital of a country). The cosines are almost exactly 1 because we built the table so"
)
def test_analogies(table):
    found = [table.analogy(a, b, c)[0] for a, b, c in
             [("man", "king", "woman"), ("walk", "walked", "swim"), ("france", "paris", "italy")]]  # fmt: skip
    assert [w for w, _ in found] == ["queen", "swam", "rome"]
    assert all(cos >= 0.985 for _, cos in found)


# -- how alike are two vectors ---------------------------------------------------------------


@claim(
    "for example $[2, 3] \\cdot [1, 4] = 2 + 12 = 14$",
    "Stretching $b$ tenfold multiplies the dot product by ten and leaves the cosine unchanged.",
)
def test_dot_and_cosine():
    a, b = np.array([2.0, 3.0]), np.array([1.0, 4.0])
    assert al.dot(a, b) == 14
    assert al.dot(a, 10 * b) == 140
    assert al.cosine_similarity(a, 10 * b) == pytest.approx(al.cosine_similarity(a, b))


@claim("doubling the length of key 0, without turning it, raises its share")
def test_a_longer_key_wins_more_weight():
    query = np.array([1.0, 0.5])
    keys = np.array([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]])
    before = al.softmax(al.dot(query, keys))
    keys[0] *= 2
    after = al.softmax(al.dot(query, keys))
    assert after[0] > before[0] + 0.2  # 0.38 -> 0.62
    assert np.round(before, 2).tolist() == [0.38, 0.23, 0.4]
    assert np.round(after, 2).tolist() == [0.62, 0.14, 0.24]


@claim(
    "At 90° both are zero: the vectors share nothing. Past 90° both turn negative. But only the "
    "dot product grows when $b$ gets longer."
)
def test_the_dot_and_cosine_slider():
    a = np.array([2.0, 0.0])

    def both(angle, length):
        t = np.deg2rad(angle)
        b = length * np.array([np.cos(t), np.sin(t)])
        return float(al.dot(a, b)), float(al.cosine_similarity(a, b))

    assert all(abs(v) < 1e-12 for v in both(90, 2.0))
    for angle in (120, 150, 180):
        assert all(v < 0 for v in both(angle, 2.0))
    for angle in (0, 30, 60):
        dots = [both(angle, L)[0] for L in (0.5, 1.0, 2.0, 4.0)]
        cosines = [both(angle, L)[1] for L in (0.5, 1.0, 2.0, 4.0)]
        assert dots == sorted(dots) and dots[0] < dots[-1]
        assert max(cosines) - min(cosines) < 1e-12


# -- softmax ------------------------------------------------------------------------------------


@claim("$e^{1000}$ overflows a float64 to infinity, and $\\infty/\\infty$ is NaN.")
def test_the_naive_softmax_overflows():
    logits = np.array([1000.0, 999.0, 998.0])
    with np.errstate(over="ignore", invalid="ignore"):
        naive = np.exp(logits) / np.exp(logits).sum()
    assert np.isnan(naive).all()
    assert np.round(al.softmax(logits), 4).tolist() == [0.6652, 0.2447, 0.09]


@claim(
    'As $\\tau \\to 0$ all the weight goes to the largest score (an "argmax"); as $\\tau$ '
    "grows the weights approach uniform.",
    "0 when one word takes everything, $\\ln 6 \\approx 1.79$ when all six share equally.",
)
def test_temperature():
    scores = np.array([2.0, 1.5, 1.0, 0.5, -0.5, -1.0])

    def entropy(tau):
        w = al.softmax(scores, temperature=tau)
        return float(-(w * np.log(w + 1e-12)).sum()), w

    cold, w_cold = entropy(0.1)
    hot, w_hot = entropy(20.0)
    assert w_cold[0] > 0.99 and cold < 0.1
    assert np.ptp(w_hot) < 0.03 and hot > 1.78
    assert round(math.log(6), 2) == 1.79
    entropies = [entropy(t)[0] for t in (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 20.0)]
    assert entropies == sorted(entropies)


# -- why divide by sqrt(d) --------------------------------------------------------------------


@claim(
    "on log–log axes the measured spread of $q \\cdot k$ lies on the $\\sqrt{d}$ line, while "
    "the scaled score stays at 1 for every $d$.",
    "Scores of random 256-dimensional vectors have a standard deviation of about 16.",
    "Scores of random $d$-dimensional vectors spread like $\\sqrt{d}$ (we measured it)",
)
def test_scores_spread_like_sqrt_d():
    rng = np.random.default_rng(1)
    for d in [4, 16, 64, 256, 1024]:
        q = rng.standard_normal((20_000, d))
        k = rng.standard_normal((20_000, d))
        s = al.dot(q, k)
        assert s.std() == pytest.approx(math.sqrt(d), rel=0.03)
        assert (s / math.sqrt(d)).std() == pytest.approx(1.0, rel=0.03)


@claim(
    "Without scaling, the largest weight climbs towards 1 and the gradient falls about eightfold "
    "from $d = 4$ to $d = 1024$. With scaling, both stay put whatever the dimension."
)
def test_saturation():
    rng = np.random.default_rng(1)

    def saturation(scores):
        p = al.softmax(scores)  # (n, 8)
        jac = p[:, :, None] * np.eye(8) - p[:, :, None] * p[:, None, :]
        return p.max(axis=-1).mean(), np.linalg.norm(jac, axis=(1, 2)).mean()

    raw, scaled = [], []
    for d in [4, 16, 64, 256, 1024]:
        q = rng.standard_normal((2000, 1, d))
        k = rng.standard_normal((2000, 8, d))
        raw.append(saturation(al.scores(q, k)[:, 0]))
        scaled.append(saturation(al.scaled_scores(q, k)[:, 0]))
    raw_max, raw_jac = zip(*raw, strict=True)
    assert list(raw_max) == sorted(raw_max) and raw_max[-1] > 0.95
    assert 6.5 <= raw_jac[0] / raw_jac[-1] <= 9.5
    for m, j in scaled:
        assert 0.33 <= m <= 0.38 and 0.35 <= j <= 0.38


# -- self-attention with no weights -----------------------------------------------------------


@claim(
    "(shuffle the sentence and every token gets the same new vector, only shuffled)",
    "Yet the output is **contextual**: the same word gets a different vector in a different "
    "sentence.",
)
def test_weightless_attention_ignores_order_but_not_context(tokenizer, E_toy):
    ids = tokenizer.encode("the river bank by the water")
    X = STRETCH * E_toy[ids]
    Y, _ = al.scaled_dot_product_attention(X, X, X)
    perm = np.random.default_rng(0).permutation(len(ids))
    Y_shuffled, _ = al.scaled_dot_product_attention(X[perm], X[perm], X[perm])
    assert np.allclose(Y_shuffled, Y[perm])
    other = tokenizer.encode("the money in the bank")
    X2 = STRETCH * E_toy[other]
    Y2, _ = al.scaled_dot_product_attention(X2, X2, X2)
    bank = tokenizer.vocab["bank"]
    assert not np.allclose(Y[ids.index(bank)], Y2[other.index(bank)])


@claim(
    "Since each score multiplies two vectors, that multiplies the scores by 9: the same as a "
    "temperature of $1/9$."
)
def test_stretching_is_a_temperature(E_toy, tokenizer):
    X = E_toy[tokenizer.encode("the river bank by the water")]
    assert np.allclose(al.scaled_scores(3 * X, 3 * X), 9 * al.scaled_scores(X, X))
    assert np.allclose(
        al.softmax(al.scaled_scores(3 * X, 3 * X)),
        al.softmax(al.scaled_scores(X, X), temperature=1 / 9),
    )


@claim(
    'The "bank" row puts its weight on itself, "river" and "water", which share the nature '
    'direction. The two "the" rows are spread out almost evenly',
    'matches nothing strongly (its largest weight, 0.24, goes to "by"). The "by" row keeps much '
    "of its weight on itself: its one strong component, *grammar*, is strong in no other word.",
)
def test_the_weightless_map(tokenizer, E_toy, table):
    words, A = weights_of(tokenizer, E_toy, "the river bank by the water")
    row = dict(enumerate(words))
    bank = A[words.index("bank")]
    assert {row[j] for j in np.argsort(bank)[-3:]} == {"bank", "river", "water"}
    by = words.index("by")
    for i in (0, 4):  # the two "the"
        assert words[i] == "the" and A[i].max() < 0.25 and A[i].min() > 0.1
        assert A[i].argmax() == by and round(A[i, by], 2) == 0.24
    assert A[by].argmax() == by and A[by, by] > 0.35
    v = table.vector("by")
    assert [table.dims[i] for i in np.flatnonzero(v > 0.5)] == ["grammar"]
    grammar = list(table.dims).index("grammar")
    assert [w for w in set(words) if table.vector(w)[grammar] > 0.5] == ["by"]


@claim(
    "*River* and *water* barely move (cosine 0.98 and 0.97 with their inputs): they put most "
    "of their weight on *river*, *water* and *bank*, which point the same way.",
    "*Bank* is pulled towards *river*: its output is much closer to the river direction than "
    "its input was. And *the*, which matches nothing strongly, moves most of all",
    "So a token keeps its meaning when the words it attends to point its way (*water* attends "
    "most to *river*, and barely moves).",
)
def test_how_far_each_token_moves(tokenizer, E_toy):
    ids = tokenizer.encode("the river bank by the water")
    words = tokenizer.decode(ids).split()
    X = STRETCH * E_toy[ids]
    Y, A = al.scaled_dot_product_attention(X, X, X)
    river = E_toy[tokenizer.vocab["river"]]
    moved = [float(al.cosine_similarity(X[i], Y[i])) for i in range(len(words))]
    assert round(moved[1], 2) == 0.98 and round(moved[5], 2) == 0.97
    nature = [words.index(w) for w in ("river", "bank", "water")]
    for i in (1, 5):
        assert A[i, nature].sum() > 0.8
    bank = words.index("bank")
    before = float(al.cosine_similarity(X[bank], river))
    after = float(al.cosine_similarity(Y[bank], river))
    assert after > before + 0.15  # 0.69 -> 0.89
    assert np.argmin(moved) in (0, 4) and moved[0] == min(moved)
    water = words.index("water")
    assert words[A[water].argmax()] == "river" and moved[water] > 0.95


@claim(
    "Before attention, *bank* sits almost exactly between the two meanings (0.69 and 0.69). "
    "After it, "
    "the river sentence makes it a riverside bank and the money sentence a financial one."
)
def test_bank_in_two_sentences(tokenizer, E_toy):
    river = E_toy[tokenizer.vocab["river"]]
    money = E_toy[tokenizer.vocab["money"]]
    bank = E_toy[tokenizer.vocab["bank"]]
    cos = lambda a, b: float(al.cosine_similarity(a, b))  # noqa: E731
    assert abs(cos(bank, river) - cos(bank, money)) < 0.01
    assert round(cos(bank, river), 2) == round(cos(bank, money), 2) == 0.69

    def bank_after(text):
        ids = tokenizer.encode(text)
        Xs = STRETCH * E_toy[ids]
        Ys, _ = al.scaled_dot_product_attention(Xs, Xs, Xs)
        return Ys[ids.index(tokenizer.vocab["bank"])]

    by_river = bank_after("the river bank by the water")
    by_money = bank_after("the money in the bank")
    assert cos(by_river, river) > cos(bank, river) > cos(by_river, money)
    assert cos(by_money, money) > cos(bank, money) > cos(by_money, river)


@claim(
    "*Dog* keeps half of its weight for itself (0.50) and draws next on *cute* (0.17) and "
    "*bark* (0.11)",
    "But *he* puts its largest weight, 0.35, on itself, and gives *Bark* 0.06, the least of any "
    "word in the sentence. Cooling the softmax makes it worse: at $\\tau = 0.5$ *he* keeps 0.70 "
    "for itself.",
    "*bark* is the sound a dog makes and shares no direction with *he*.",
)
def test_the_bark_sentence(tokenizer, E_toy, table):
    text = "bark is very cute and he is a dog"
    words, A = weights_of(tokenizer, E_toy, text)
    he, dog = words.index("he"), words.index("dog")
    order = np.argsort(A[dog])[::-1]
    assert [words[j] for j in order[:3]] == ["dog", "cute", "bark"]
    assert np.round(A[dog, order[:3]], 2).tolist() == [0.5, 0.17, 0.11]
    assert A[he].argmax() == he and round(A[he, he], 2) == 0.35
    assert A[he].argmin() == 0 and round(A[he, 0], 2) == 0.06
    _, cold = weights_of(tokenizer, E_toy, text, tau=0.5)
    assert round(cold[he, he], 2) == 0.7
    assert float(al.dot(table.vector("bark"), table.vector("he"))) == 0


@claim(
    "$5 \\times 560$. The product does $5 \\times 560 \\times 8$ multiply-adds, of which only "
    "$5 \\times 8$ involve a nonzero entry"
)
def test_the_one_hot_product(tokenizer):
    ids = tokenizer.encode("tokens are spelled")
    onehot = al.one_hot(np.array(ids), 560)
    assert onehot.shape == (5, 560)
    assert int(onehot.sum()) == 5  # one nonzero per row: 5 x 8 useful multiply-adds


@claim(
    "ask you to write seven of them yourself, and to predict three numbers before the code "
    "confirms them."
)
def test_the_exercises_this_chapter_announces():
    nb = nbformat.read(ROOT / "solutions" / "02_similarity.ipynb", as_version=4)
    titles = [c.source.splitlines()[0] for c in nb.cells if c.source.startswith("## Exercise")]
    predictions = [t for t in titles if ": predict:" in t]
    assert (len(titles) - len(predictions), len(predictions)) == (7, 3)


test_every_quoted_claim_is_in_the_chapter = quotes_are_in(CHAPTER, globals())
