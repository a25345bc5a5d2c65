"""Tests for attnlab.tasks.tokenizer: vocabulary, word and WordPiece tokenizers, BPE, its data files.

``one_hot`` and ``embed`` moved to :mod:`attnlab.tasks.embeddings` (tested in test_embeddings.py).
"""

from __future__ import annotations

import itertools
import string

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.tasks.tokenizer import (
    DEFAULT_CORPUS,
    Vocab,
    WordPieceTokenizer,
    bpe_segment,
    default_vocab,
    train_bpe,
    vocab_from_merges,
    word_tokenize,
)

# --- word_tokenize ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The river-bank, by night!", ["the", "river", "-", "bank", ",", "by", "night", "!"]),
        ("  Bark   is\ta dog\n", ["bark", "is", "a", "dog"]),
        ("don't", ["don", "'", "t"]),
        ("3.14 apples", ["3", ".", "14", "apples"]),
        ("", []),
    ],
)
def test_word_tokenize(text: str, expected: list[str]) -> None:
    assert word_tokenize(text) == expected


def test_word_tokenize_rejects_non_strings() -> None:
    with pytest.raises(TypeError, match="string"):
        word_tokenize(["a", "b"])  # type: ignore[arg-type]


# --- Vocab ----------------------------------------------------------------------------------------


def test_vocab_specials_come_first() -> None:
    vocab = Vocab(["river", "bank", "river", "<pad>"])
    assert vocab.tokens[:4] == ["<pad>", "<unk>", "<bos>", "<eos>"]
    assert (vocab.pad_id, vocab.unk_id, vocab.bos_id, vocab.eos_id) == (0, 1, 2, 3)
    assert vocab.tokens == ["<pad>", "<unk>", "<bos>", "<eos>", "river", "bank"]
    assert len(vocab) == 6
    assert "bank" in vocab
    assert "the" not in vocab


def test_vocab_encode_decode_round_trip_and_unknown() -> None:
    vocab = Vocab(["river", "bank"])
    ids = vocab.encode(["the", "river", "bank"], add_bos=True, add_eos=True)
    assert ids == [2, 1, 4, 5, 3]
    assert vocab.decode(ids) == ["<bos>", "<unk>", "river", "bank", "<eos>"]
    assert vocab.decode(ids, skip_special=True) == ["<unk>", "river", "bank"]
    assert vocab["bank"] == 5
    assert vocab["nope"] == vocab.unk_id


def test_vocab_iterates_over_its_tokens_in_id_order() -> None:
    vocab = Vocab(["river", "bank"])
    # islice: without __iter__, Python would iterate through __getitem__(0, 1, ...) forever
    assert list(itertools.islice(vocab, len(vocab) + 1)) == vocab.tokens
    assert list(vocab) == ["<pad>", "<unk>", "<bos>", "<eos>", "river", "bank"]


@pytest.mark.parametrize("key", [0, 5, np.int64(4), None])
def test_vocab_lookup_by_id_is_a_type_error_pointing_to_decode(key) -> None:
    with pytest.raises(TypeError, match=r"vocab\.tokens\[i\].*vocab\.decode\(\[i\]\)"):
        Vocab(["river", "bank"])[key]


@pytest.mark.parametrize(
    ("ids", "bad"),
    [
        ([0, 6], 6),
        (np.array([0, 6]), 6),
        (torch.tensor([6]), 6),
        ([-1], -1),
        (np.array([7], np.uint8), 7),
    ],
)
def test_vocab_decode_out_of_range_names_id_and_size(ids: object, bad: int) -> None:
    with pytest.raises(ValueError, match=rf"token id {bad} .*has 6 ids: valid ids are 0\.\.5"):
        Vocab(["river", "bank"]).decode(ids)


@pytest.mark.parametrize("ids", [[1.0], [True], np.array([1.0]), torch.tensor([[1, 2]])])
def test_vocab_decode_rejects_non_integer_ids(ids: object) -> None:
    with pytest.raises(TypeError, match="integers"):
        Vocab(["a"]).decode(ids)


def test_vocab_decode_accepts_arrays_and_tensors() -> None:
    vocab = Vocab(["river", "bank"])
    assert vocab.decode(np.array([4, 5])) == ["river", "bank"]
    assert vocab.decode(torch.tensor([5, 4])) == ["bank", "river"]


def test_vocab_encode_rejects_a_plain_string() -> None:
    with pytest.raises(TypeError, match="word_tokenize"):
        Vocab(["a"]).encode("a cat")


def test_vocab_from_corpus_orders_by_frequency_then_alphabet() -> None:
    vocab = Vocab.from_corpus(["b a b c", "c b"], min_count=1)
    assert vocab.tokens[4:] == ["b", "c", "a"]
    assert Vocab.from_corpus("b a b c c b", min_count=2).tokens[4:] == ["b", "c"]
    assert Vocab.from_corpus("b a b c c b", max_size=5).tokens == [*Vocab.SPECIALS, "b"]
    with pytest.raises(ValueError, match="max_size"):
        Vocab.from_corpus("a", max_size=2)


def test_vocab_from_default_corpus_encodes_it_without_unknowns() -> None:
    vocab = Vocab.from_corpus(DEFAULT_CORPUS)
    ids = vocab.encode(word_tokenize(DEFAULT_CORPUS))
    assert vocab.unk_id not in ids
    assert vocab.decode(ids) == word_tokenize(DEFAULT_CORPUS)


# --- WordPiece --------------------------------------------------------------------------------------


def test_wordpiece_example_sentence() -> None:
    tok = WordPieceTokenizer()
    pieces = tok.tokenize("The tokenizer spelled out transformerification")
    assert pieces == [
        "the",
        "token",
        "##izer",
        "spell",
        "##ed",
        "out",
        "transform",
        "##er",
        "##ification",
    ]
    assert tok.decode(tok.encode("The tokenizer spelled out transformerification")) == (
        "the tokenizer spelled out transformerification"
    )


def test_wordpiece_spells_out_unseen_words() -> None:
    tok = WordPieceTokenizer()
    assert tok.tokenize("xqzv") == ["x", "##q", "##z", "##v"]
    assert tok.tokenize("Bark is very cute and he is a dog") == word_tokenize(
        "Bark is very cute and he is a dog"
    )


def test_wordpiece_is_greedy_longest_match_first() -> None:
    # "un", "##aff", "##able" are in the vocabulary, and so is the shorter "##a":
    # greedy longest match must take "##aff", not "##a".
    vocab = Vocab(["un", "##a", "##aff", "##able", "##f", "##b", "##l", "##e", "##ff"])
    assert WordPieceTokenizer(vocab).tokenize("unaffable") == ["un", "##aff", "##able"]


def test_wordpiece_unknown_character_gives_unk_for_the_whole_word() -> None:
    tok = WordPieceTokenizer()
    assert tok.tokenize("the café") == ["the", "<unk>"]
    assert WordPieceTokenizer(max_chars=3).tokenize("the river") == ["the", "<unk>"]


def test_default_vocab_covers_every_letter_alone_and_continued() -> None:
    vocab = default_vocab()
    for c in string.ascii_lowercase + string.digits:
        assert c in vocab
        assert "##" + c in vocab
    assert len(set(vocab.tokens)) == len(vocab)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=string.ascii_letters, min_size=1, max_size=25), max_size=8))
def test_wordpiece_never_unknown_and_round_trips_on_plain_letters(words: list[str]) -> None:
    tok = WordPieceTokenizer()
    text = " ".join(words)
    pieces = tok.tokenize(text)
    assert "<unk>" not in pieces
    assert all(p in tok.vocab for p in pieces)
    assert tok.decode(tok.encode(text)) == text.lower()


def test_wordpiece_decode_drops_specials() -> None:
    tok = WordPieceTokenizer()
    ids = tok.encode("river bank", add_bos=True, add_eos=True)
    assert ids[0] == Vocab.bos_id
    assert ids[-1] == Vocab.eos_id
    assert tok.decode([*ids, Vocab.pad_id, Vocab.pad_id]) == "river bank"


def test_wordpiece_rejects_a_non_vocab() -> None:
    with pytest.raises(TypeError, match="Vocab"):
        WordPieceTokenizer(["a", "b"])  # type: ignore[arg-type]


# --- BPE ------------------------------------------------------------------------------------------


def test_train_bpe_merges_most_frequent_pair_first() -> None:
    # "##e ##r" appears 3 + 2 = 5 times; every other pair at most 3 times.
    merges = train_bpe("lower lower lower newer newer", 1)
    assert merges == [("##e", "##r")]


def test_train_bpe_by_hand() -> None:
    merges = train_bpe(["ab ab ab", "abc"], 3)
    # Pairs: (a, ##b) x4, (##b, ##c) x1 -> merge "ab"; then (ab, ##c) x1; then nothing is left.
    assert merges == [("a", "##b"), ("ab", "##c")]
    assert bpe_segment("abc", merges) == ["abc"]
    assert bpe_segment("abd", merges) == ["ab", "##d"]
    assert bpe_segment("", merges) == []


def test_bpe_on_default_corpus_learns_common_pieces() -> None:
    merges = train_bpe(DEFAULT_CORPUS, 100)
    assert len(merges) == 100
    merged = {a + b.removeprefix("##") for a, b in merges}
    for piece in ("the", "and", "##ing", "##ed", "token"):
        assert piece in merged
    assert bpe_segment("walking", merges) == ["walk", "##ing"]
    tok = WordPieceTokenizer(vocab_from_merges(merges))
    assert tok.tokenize("talked") == ["talk", "##ed"]


def test_bpe_segmentation_concatenates_back_to_the_word() -> None:
    merges = train_bpe(DEFAULT_CORPUS, 60)
    for word in ("transformerification", "attention", "q", "recurrently"):
        pieces = bpe_segment(word, merges)
        assert "".join(p.removeprefix("##") for p in pieces) == word
        assert all(p.startswith("##") for p in pieces[1:])


def test_train_bpe_rejects_negative_merges() -> None:
    with pytest.raises(ValueError, match="n_merges"):
        train_bpe("a b", -1)


# --- data files and moved names ---------------------------------------------------------------


def test_the_vocabulary_and_corpus_are_package_data_files() -> None:
    """The words, affixes and corpus are text files shipped with the package, not code."""
    import sys
    from pathlib import Path

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10: pytest itself depends on tomli there
        import tomli as tomllib

    from attnlab.data_files import read_text

    assert read_text("corpus.txt") == DEFAULT_CORPUS
    assert DEFAULT_CORPUS.startswith("A tokenizer cuts text into tokens.")
    vocab = default_vocab()
    for name in ("base_words.txt", "affixes.txt"):
        words = read_text(name).split()
        assert len(words) >= 40 and all(w in vocab for w in words), name
    assert {"##izer", "##ification", "queen", "bank"} <= set(vocab.tokens)
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    shipped = pyproject["tool"]["setuptools"]["package-data"]["attnlab.data_files"]
    folder = Path(__file__).parents[1] / "lib" / "attnlab" / "data_files"
    files = sorted(p.name for p in folder.iterdir() if p.suffix != ".py" and p.is_file())
    assert files and all(any(Path(f).match(glob) for glob in shipped) for f in files), files
