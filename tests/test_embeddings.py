"""Tests for attnlab.tasks.embeddings: the hand-made table keeps the promises the chapter makes;
one_hot and embed (ids to vectors)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnlab.mechanism.attention import scaled_dot_product_attention
from attnlab.mechanism.similarity import cosine_similarity
from attnlab.tasks.embeddings import (
    DIMS,
    EmbeddingTable,
    UnknownWordError,
    embed,
    one_hot,
    toy_embeddings,
)
from attnlab.tasks.tokenizer import WordPieceTokenizer


@pytest.fixture(scope="module")
def table() -> EmbeddingTable:
    return toy_embeddings()


def _cos(table: EmbeddingTable, a: str, b: str) -> float:
    return float(cosine_similarity(table.vector(a), table.vector(b)))


def _dot(table: EmbeddingTable, a: str, b: str) -> float:
    return float(table.vector(a) @ table.vector(b))


# --- structure ------------------------------------------------------------------------------------


def test_table_shape_and_names(table: EmbeddingTable) -> None:
    assert table.dims == tuple(DIMS)
    assert isinstance(table.words, tuple)
    assert 8 <= len(table.dims) <= 16
    assert 30 <= len(table) <= 50
    assert table.vectors.shape == (len(table.words), len(table.dims))
    assert table.vectors.dtype == np.float64
    assert len(set(table.words)) == len(table.words)
    assert np.abs(table.vectors).max() <= 1.0
    assert (np.linalg.norm(table.vectors, axis=1) > 0).all(), "a word has the zero vector"


def test_every_word_is_one_wordpiece_token(table: EmbeddingTable) -> None:
    tok = WordPieceTokenizer()
    for word in table.words:
        assert tok.tokenize(word) == [word]


def test_toy_embeddings_returns_a_fresh_copy() -> None:
    a, b = toy_embeddings(), toy_embeddings()
    assert a is not b and not np.shares_memory(a.vectors, b.vectors)


def test_table_is_read_only(table: EmbeddingTable) -> None:
    with pytest.raises(ValueError, match="read-only"):
        table.vectors[0, 0] = 99.0
    with pytest.raises(ValueError, match="read-only"):
        table.vectors *= 3
    with pytest.raises(AttributeError):
        table.words.append("unicorn")  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        table.dims[0] = "magic"  # type: ignore[index]
    assert table.vectors[0, 0] != 99.0 and "unicorn" not in table


def test_table_copies_its_inputs() -> None:
    """Editing the arrays and lists passed in afterwards leaves the table alone."""
    words, dims, vectors = ["a", "b"], ["x", "y"], np.array([[1.0, 0.0], [0.0, 1.0]])
    t = EmbeddingTable(words=words, dims=dims, vectors=vectors)
    vectors[0, 0], words[0], dims[0] = 5.0, "z", "w"
    assert t.words == ("a", "b") and t.dims == ("x", "y")
    np.testing.assert_array_equal(t.vectors, np.eye(2))
    assert t.vectors.dtype == np.float64


def test_vectors_for_returns_a_fresh_writable_array(table: EmbeddingTable) -> None:
    x = table.vectors_for("the king")
    assert x.flags.writeable
    x *= 3  # callers stretch the vectors in place
    np.testing.assert_allclose(x[1], 3 * table.vector("king"), rtol=0, atol=1e-15)
    np.testing.assert_allclose(table.vectors_for(["king"])[0], x[1] / 3, rtol=0, atol=1e-15)


def test_vector_is_a_copy_and_matches_the_row(table: EmbeddingTable) -> None:
    v = table.vector("king")
    np.testing.assert_array_equal(v, table.vectors[table.index("king")])
    v[:] = 0
    assert table.vector("king").any()


def test_vectors_for_sentence_and_list(table: EmbeddingTable) -> None:
    x = table.vectors_for("Money in the bank")
    assert x.shape == (4, len(table.dims))
    np.testing.assert_array_equal(x, table.vectors_for(["money", "in", "the", "bank"]))
    np.testing.assert_array_equal(x[3], table.vector("bank"))
    ids = [table.index(w) for w in ["money", "in", "the", "bank"]]
    np.testing.assert_array_equal(embed(np.array(ids), table.vectors), x)


@pytest.mark.parametrize(("word", "suggestion"), [("qeen", "queen"), ("rivers", "river")])
def test_unknown_word_names_it_and_suggests(
    table: EmbeddingTable, word: str, suggestion: str
) -> None:
    with pytest.raises(KeyError) as info:
        table.vector(word)
    assert isinstance(info.value, UnknownWordError)
    message = str(info.value)
    assert repr(word) in message
    assert repr(suggestion) in message


def test_unknown_word_without_close_match(table: EmbeddingTable) -> None:
    with pytest.raises(KeyError, match="'zzzzzz' is not in the embedding table"):
        table.vectors_for("the zzzzzz")


def test_table_validates_shapes() -> None:
    with pytest.raises(ValueError, match="shape"):
        EmbeddingTable(words=["a", "b"], dims=["x"], vectors=np.zeros((3, 1)))
    with pytest.raises(ValueError, match="distinct"):
        EmbeddingTable(words=["a", "a"], dims=["x"], vectors=np.zeros((2, 1)))


# --- nearest and analogies ------------------------------------------------------------------------


def test_nearest_is_sorted_by_cosine_and_excludes(table: EmbeddingTable) -> None:
    result = table.nearest(table.vector("dog"), k=4)
    assert result[0] == ("dog", pytest.approx(1.0))
    cosines = [c for _, c in result]
    assert cosines == sorted(cosines, reverse=True)
    brute = sorted(((_cos(table, "dog", w), w) for w in table.words if w != "dog"), reverse=True)
    assert [w for w, _ in table.nearest(table.vector("dog"), k=3, exclude=["dog"])] == [
        w for _, w in brute[:3]
    ]
    assert {w for w, _ in table.nearest(table.vector("dog"), k=2, exclude=["dog"])} == {
        "cat",
        "puppy",
    }


def test_nearest_rejects_wrong_length(table: EmbeddingTable) -> None:
    with pytest.raises(ValueError, match=r"\(15,\)"):
        table.nearest(np.ones(3))


@pytest.mark.parametrize(
    ("a", "b", "c", "expected"),
    [
        # gender
        ("man", "king", "woman", "queen"),
        ("boy", "prince", "girl", "princess"),
        ("man", "he", "woman", "she"),
        ("king", "queen", "prince", "princess"),
        # tense
        ("walk", "walked", "swim", "swam"),
        ("swim", "swam", "buy", "bought"),
        ("buy", "bought", "walk", "walked"),
        ("walked", "walk", "swam", "swim"),
        # the homeland of a city
        ("france", "paris", "italy", "rome"),
        ("germany", "berlin", "spain", "madrid"),
        ("paris", "france", "london", "england"),
    ],
)
def test_analogies(table: EmbeddingTable, a: str, b: str, c: str, expected: str) -> None:
    (word, cosine), (_, runner_up) = table.analogy(a, b, c, k=2)
    assert word == expected
    assert cosine > 0.95
    assert cosine > runner_up


def test_every_capital_country_analogy_works(table: EmbeddingTable) -> None:
    pairs = [
        ("paris", "france"),
        ("rome", "italy"),
        ("berlin", "germany"),
        ("madrid", "spain"),
        ("london", "england"),
    ]
    for city1, country1 in pairs:
        for city2, country2 in pairs:
            if city1 != city2:
                assert table.analogy(country1, city1, country2)[0][0] == city2
                assert table.analogy(city1, country1, city2)[0][0] == country2


def test_king_minus_man_plus_woman_is_close_to_queen(table: EmbeddingTable) -> None:
    target = table.vector("king") - table.vector("man") + table.vector("woman")
    assert float(cosine_similarity(target, table.vector("queen"))) > 0.99
    # the analogy excludes its inputs: without that, "king" itself is a strong candidate
    assert table.nearest(target, k=1, exclude=["king", "man", "woman"])[0][0] == "queen"


def test_similar_words_point_the_same_way(table: EmbeddingTable) -> None:
    assert _cos(table, "dog", "cat") > 0.9
    assert _cos(table, "king", "queen") > 0.5
    assert _cos(table, "dog", "money") == pytest.approx(0.0, abs=1e-12)
    assert _cos(table, "king", "river") < 0.1


# --- river, bank, by ------------------------------------------------------------------------------


def test_river_and_bank_share_nature_and_by_is_neutral(table: EmbeddingTable) -> None:
    river_bank = _dot(table, "river", "bank")
    assert river_bank > 0.6
    nature = DIMS.index("nature")
    assert table.vector("river")[nature] > 0.5
    assert table.vector("bank")[nature] > 0.5
    for word in table.words:
        if word == "by":
            continue
        assert abs(_dot(table, "by", word)) < 0.3, word
        if table.vector(word)[DIMS.index("grammar")] == 0:  # a content word
            assert abs(_dot(table, "by", word)) <= 0.1, word
    assert _dot(table, "by", "by") > 2 * max(
        abs(_dot(table, "by", w)) for w in table.words if w != "by"
    )


def test_bank_is_between_river_and_money(table: EmbeddingTable) -> None:
    assert _dot(table, "bank", "money") > 0.5
    assert _dot(table, "river", "money") == 0.0
    assert abs(_cos(table, "bank", "river") - _cos(table, "bank", "money")) < 0.05


def _contextual(table: EmbeddingTable, sentence: str, word: str) -> np.ndarray:
    """Self-attention with no weights: each word becomes a softmax-weighted mix of all."""
    x = table.vectors_for(sentence)  # (T, D)
    out, _ = scaled_dot_product_attention(x, x, x)  # (T, D)
    return out[sentence.lower().split().index(word)]


def test_context_pulls_bank_towards_river_or_money(table: EmbeddingTable) -> None:
    river, money = table.vector("river"), table.vector("money")
    bank = table.vector("bank")
    by_the_river = _contextual(table, "walk by the river bank", "bank")
    in_money = _contextual(table, "money in the bank", "bank")
    cos = cosine_similarity
    assert float(cos(by_the_river, river)) > float(cos(bank, river)) + 0.05
    assert float(cos(by_the_river, money)) < float(cos(bank, money)) - 0.2
    assert float(cos(in_money, money)) > float(cos(bank, money)) + 0.1
    assert float(cos(in_money, river)) < float(cos(bank, river)) - 0.2


def test_river_and_bank_attend_to_each_other_more_than_to_by(table: EmbeddingTable) -> None:
    x = table.vectors_for("river bank by")
    _, weights = scaled_dot_product_attention(x, x, x)
    river, bank, by = 0, 1, 2
    assert weights[river, bank] > weights[river, by]
    assert weights[bank, river] > weights[bank, by]
    assert weights[by, by] > max(weights[by, river], weights[by, bank])


# --- "Bark is very cute and he is a dog" ------------------------------------------------------------


def test_bark_sentence_dog_relates_to_bark_cute_he(table: EmbeddingTable) -> None:
    sentence = "Bark is very cute and he is a dog".lower().split()
    x = table.vectors_for(sentence)  # every word is in the table
    assert x.shape == (9, len(table.dims))
    others = [w for w in dict.fromkeys(sentence) if w != "dog"]
    ranked = sorted(others, key=lambda w: -_dot(table, "dog", w))
    assert set(ranked[:3]) == {"bark", "cute", "he"}
    for w in ("is", "very", "and", "a"):
        assert _dot(table, "dog", w) < _dot(table, "dog", "he")


# --- one_hot and embed ----------------------------------------------------------------------------


def test_one_hot_numpy() -> None:
    out = one_hot(np.array([0, 2, 1]), 3)
    assert isinstance(out, np.ndarray)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, np.eye(3)[[0, 2, 1]])


def test_one_hot_torch_keeps_kind_and_device() -> None:
    ids = torch.tensor([[3, 0], [1, 1]])
    out = one_hot(ids, 4)
    assert isinstance(out, torch.Tensor)
    assert out.shape == (2, 2, 4)
    assert out.dtype == torch.get_default_dtype()
    assert out.device == ids.device
    torch.testing.assert_close(out, torch.nn.functional.one_hot(ids, 4).float(), rtol=0, atol=0)


@pytest.mark.parametrize(("ids", "bad"), [([0, 5], 5), ([-2, 1], -2)])
def test_one_hot_out_of_range(ids: list[int], bad: int) -> None:
    with pytest.raises(ValueError, match=rf"token id {bad} .*has 5 ids: valid ids are 0\.\.4"):
        one_hot(ids, 5)


def test_one_hot_like_sets_dtype() -> None:
    table = torch.zeros(3, 2, dtype=torch.float64)
    assert one_hot(torch.tensor([1]), 3, like=table).dtype == torch.float64
    assert one_hot([1], 3, like=np.zeros(1, np.float32)).dtype == np.float32
    with pytest.raises(TypeError, match="mixed"):
        one_hot([1], 3, like=table)
    with pytest.raises(TypeError, match="floats"):
        one_hot([1], 3, like=np.zeros(1, int))


def test_one_hot_bad_input() -> None:
    with pytest.raises(TypeError, match="integers"):
        one_hot(np.array([0.0, 1.0]), 3)
    with pytest.raises(ValueError, match="vocab_size"):
        one_hot([0], 0)


@pytest.mark.parametrize("kind", ["numpy", "torch"])
@pytest.mark.parametrize("shape", [(5,), (2, 3), (0,)])
def test_embed_equals_one_hot_times_table(kind: str, shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(0)
    table = rng.standard_normal((7, 4))
    ids = rng.integers(0, 7, size=shape)
    if kind == "torch":
        table, ids = torch.from_numpy(table), torch.from_numpy(ids)
    looked_up = embed(ids, table)
    product = one_hot(ids, 7, like=table) @ table  # (..., V) @ (V, D) -> (..., D)
    assert type(looked_up) is type(table)
    assert tuple(looked_up.shape) == (*shape, 4)
    np.testing.assert_allclose(np.asarray(looked_up), np.asarray(product), rtol=0, atol=1e-12)
    # and the lookup really is the row gather
    if shape == (5,):
        np.testing.assert_array_equal(np.asarray(looked_up[2]), np.asarray(table[int(ids[2])]))


def test_embed_bad_input() -> None:
    table = np.zeros((3, 2))
    with pytest.raises(ValueError, match=r"token id 3 .*has 3 ids"):
        embed([0, 3], table)
    with pytest.raises(ValueError, match="vocab_size, d_model"):
        embed([0], np.zeros(3))
    with pytest.raises(TypeError, match="integers"):
        embed(np.array([0.5]), table)
    with pytest.raises(TypeError, match="mixed"):
        embed(np.array([0]), torch.zeros(3, 2))


def test_embed_gradient_flows_to_the_rows_used() -> None:
    table = torch.zeros(4, 2, requires_grad=True)
    embed(torch.tensor([1, 1, 3]), table).sum().backward()
    torch.testing.assert_close(table.grad, torch.tensor([[0.0, 0], [2, 2], [0, 0], [1, 1]]))
