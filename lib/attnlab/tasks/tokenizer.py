"""From text to token ids to vectors: a vocabulary, a WordPiece tokenizer, one-hot and lookup.

Everything here is written by hand on purpose, in a few dozen readable lines each. Real
models use fast library tokenizers, but the mechanism *is* the lesson:

1. cut text into tokens (:func:`word_tokenize` for whole words, :class:`WordPieceTokenizer`
   for subwords as BERT does: a rare word is split into known pieces, and a word never seen
   is spelled out letter by letter, so nothing is lost);
2. give each token an integer id (:class:`Vocab`);
3. turn ids into vectors: that is the next module's job, :mod:`attnlab.tasks.embeddings`
   (``embed`` is a row lookup ``table[ids]``, the same as multiplying the one-hot vectors,
   ``one_hot``, by the table).

:func:`train_bpe` shows where subword pieces come from: merge the most frequent pair of
adjacent symbols, again and again (byte-pair encoding, Sennrich et al. 2016).

References: Sennrich, Haddow & Birch, "Neural Machine Translation of Rare Words with Subword
Units", ACL 2016; Wu et al., "Google's Neural Machine Translation System", 2016 (WordPiece);
Devlin et al., "BERT", NAACL 2019.

Taught in: chapters/02_similarity.ipynb
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from itertools import pairwise
from typing import Any

import numpy as np
from array_api_compat import is_torch_array

from .._validate import check_int, check_token_ids, describe, namespace
from ..data_files import read_text

__all__ = [
    "DEFAULT_CORPUS",
    "Vocab",
    "WordPieceTokenizer",
    "bpe_segment",
    "default_vocab",
    "train_bpe",
    "vocab_from_merges",
    "word_tokenize",
]

# ---------------------------------------------------------------------------------------------
# Words
# ---------------------------------------------------------------------------------------------

_WORD_OR_PUNCT = re.compile(r"\w+|[^\w\s]")


def word_tokenize(text: str) -> list[str]:
    r"""Lower-case ``text`` and cut it into words and single punctuation marks.

    The regular expression ``\w+|[^\w\s]`` keeps runs of letters/digits together and makes
    every other visible character its own token; whitespace only separates.

    Example: ``word_tokenize("The river-bank, by night!")`` is
    ``['the', 'river', '-', 'bank', ',', 'by', 'night', '!']``.

    Raises:
        TypeError: if ``text`` is not a string.
    """
    if not isinstance(text, str):
        raise TypeError(f"word_tokenize expects a string, got a {type(text).__name__}")
    return _WORD_OR_PUNCT.findall(text.lower())


# ---------------------------------------------------------------------------------------------
# Vocabulary: token <-> id
# ---------------------------------------------------------------------------------------------


class Vocab:
    """A two-way table between tokens and integer ids, with four special tokens first.

    ``<pad>`` = 0 fills short sequences in a batch, ``<unk>`` = 1 stands for any token not in
    the table, ``<bos>`` = 2 and ``<eos>`` = 3 mark the beginning and end of a sequence. The
    other tokens follow in the order given (duplicates are kept once).

    Args:
        tokens: the ordinary tokens, in id order (specials among them are skipped).

    Example::

        vocab = Vocab(["river", "bank"])
        vocab.encode(["the", "river", "bank"])   # [1, 4, 5]: "the" is unknown -> <unk>
        vocab.decode([4, 5])                     # ['river', 'bank']
        vocab["bank"], list(vocab)[5]            # 5, 'bank' (iterating gives the tokens)

    Taught in: chapters/02_similarity.ipynb
    """

    PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<bos>", "<eos>"
    SPECIALS = (PAD, UNK, BOS, EOS)
    pad_id, unk_id, bos_id, eos_id = 0, 1, 2, 3

    def __init__(self, tokens: Iterable[str] = ()) -> None:
        if isinstance(tokens, str):
            raise TypeError("Vocab expects a list of tokens, not one string")
        self._tokens: list[str] = list(self.SPECIALS)
        self._ids: dict[str, int] = {t: i for i, t in enumerate(self._tokens)}
        for token in tokens:
            if not isinstance(token, str):
                raise TypeError(f"tokens must be strings, got {token!r}")
            if token not in self._ids:
                self._ids[token] = len(self._tokens)
                self._tokens.append(token)

    @classmethod
    def from_corpus(
        cls,
        corpus: str | Iterable[str],
        *,
        min_count: int = 1,
        max_size: int | None = None,
        tokenize: Any = word_tokenize,
    ) -> Vocab:
        """Build a vocabulary from text: most frequent tokens first (ties alphabetical).

        Args:
            corpus: one string or an iterable of strings (e.g. sentences).
            min_count: drop tokens seen fewer times than this.
            max_size: keep at most this many tokens in total, specials included.
            tokenize: the function that cuts a string into tokens.
        """
        texts = [corpus] if isinstance(corpus, str) else list(corpus)
        counts = Counter(t for text in texts for t in tokenize(text))
        ranked = sorted(
            (t for t, c in counts.items() if c >= min_count), key=lambda t: (-counts[t], t)
        )
        if max_size is not None:
            if max_size < len(cls.SPECIALS):
                raise ValueError(f"max_size must be at least {len(cls.SPECIALS)} (the specials)")
            ranked = ranked[: max_size - len(cls.SPECIALS)]
        return cls(ranked)

    @property
    def tokens(self) -> list[str]:
        """All tokens in id order (``tokens[i]`` has id ``i``)."""
        return list(self._tokens)

    def __len__(self) -> int:
        return len(self._tokens)

    def __contains__(self, token: object) -> bool:
        return token in self._ids

    def __iter__(self) -> Iterator[str]:
        """The tokens in id order, as :attr:`tokens`: ``list(vocab) == vocab.tokens``."""
        return iter(self._tokens)

    def __getitem__(self, token: str) -> int:
        """The id of ``token``, or ``unk_id`` if it is not in the vocabulary.

        Raises:
            TypeError: a key that is not a string (an id, say): the token of id ``i`` is
                ``vocab.tokens[i]`` or ``vocab.decode([i])``.
        """
        if not isinstance(token, str):
            raise TypeError(
                f"vocab[...] maps a token string to its id, got {token!r} "
                f"({type(token).__name__}); for the token of id i use vocab.tokens[i] "
                "or vocab.decode([i])"
            )
        return self._ids.get(token, self.unk_id)

    def __repr__(self) -> str:
        head = ", ".join(repr(t) for t in self._tokens[:8])
        more = ", ..." if len(self) > 8 else ""
        return f"Vocab({len(self)} tokens: [{head}{more}])"

    def encode(
        self, tokens: Sequence[str], *, add_bos: bool = False, add_eos: bool = False
    ) -> list[int]:
        """Token strings -> ids; a token not in the vocabulary becomes ``<unk>``.

        Args:
            tokens: a list of token strings (cut a text first, e.g. with :func:`word_tokenize`).
            add_bos, add_eos: put ``<bos>`` in front / ``<eos>`` at the end.

        Raises:
            TypeError: if ``tokens`` is a single string (iterating it would give characters).
        """
        if isinstance(tokens, str):
            raise TypeError(
                "encode expects a list of tokens, got one string; cut it first, "
                "e.g. vocab.encode(word_tokenize(text))"
            )
        ids = [self[t] for t in tokens]
        return [self.bos_id] * add_bos + ids + [self.eos_id] * add_eos

    def decode(self, ids: Any, *, skip_special: bool = False) -> list[str]:
        """Ids -> token strings.

        Args:
            ids: a 1-D sequence of integer ids (list, NumPy array or tensor).
            skip_special: drop ``<pad>``, ``<bos>`` and ``<eos>`` (``<unk>`` is kept: it
                stands for a real token).

        Raises:
            ValueError: an id outside ``0 .. len(vocab) - 1`` (the message names both).
            TypeError: ids that are not integers.
        """
        skip = {self.pad_id, self.bos_id, self.eos_id} if skip_special else set()
        return [self._tokens[i] for i in _check_ids(ids, len(self)) if i not in skip]


def _check_ids(ids: Any, vocab_size: int) -> list[int]:
    """``ids`` as a list of Python ints, each checked to lie in ``0 .. vocab_size - 1``."""
    if is_torch_array(ids) or isinstance(ids, np.ndarray):
        xp = namespace(ids=ids)
        if ids.ndim != 1 or not xp.isdtype(ids.dtype, "integral"):
            raise TypeError(f"ids must be a 1-D sequence of integers, got {describe(ids)}")
        ids = ids.tolist()
    for i in ids:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"ids must be integers, got {i!r} ({type(i).__name__})")
    out = [int(i) for i in ids]
    check_token_ids(np.asarray(out, dtype=np.int64), vocab_size)
    return out


# ---------------------------------------------------------------------------------------------
# A small built-in vocabulary and corpus (nothing to download)
# ---------------------------------------------------------------------------------------------

_LETTERS = list(string.ascii_lowercase)
_DIGITS = list(string.digits)
_PUNCTUATION = list(string.punctuation)
# Every character alone and as a continuation piece: any word made of a-z, 0-9 can always
# be spelled out, so plain English text never becomes <unk>.
_ALPHABET = (
    _PUNCTUATION + _DIGITS + _LETTERS + ["##" + c for c in _DIGITS] + ["##" + c for c in _LETTERS]
)

# The whole words and the affixes live in data files (attnlab/data_files), one per kind.
_BASE_WORDS = read_text("base_words.txt").split()
_AFFIXES = read_text("affixes.txt").split()


def default_vocab() -> Vocab:
    """The built-in WordPiece vocabulary (560 entries): words, affixes and single characters.

    It holds every letter, digit and punctuation mark, alone (``"x"``) and as a
    continuation piece (``"##x"``), so a word never seen is at worst spelled out letter by
    letter; about 400 whole words (including every word of :func:`toy_embeddings
    <attnlab.tasks.embeddings.toy_embeddings>`); and common suffixes such as ``"##ed"``,
    ``"##izer"``, ``"##ification"``. Hand-written, so the example splits are predictable:
    ``"tokenizer"`` -> ``token ##izer``, ``"spelled"`` -> ``spell ##ed``.
    """
    return Vocab(_ALPHABET + _BASE_WORDS + _AFFIXES)


DEFAULT_CORPUS = read_text("corpus.txt")
"""A small English text (a few hundred words, all about this course) to build a
:meth:`Vocab.from_corpus` from or to run :func:`train_bpe` on."""


# ---------------------------------------------------------------------------------------------
# WordPiece: greedy longest-match-first subwords
# ---------------------------------------------------------------------------------------------


class WordPieceTokenizer:
    """Cut text into subword pieces as BERT does: greedy longest match first.

    Each word (from :func:`word_tokenize`) is read left to right; at each point the longest
    piece found in the vocabulary is taken. Pieces after the first carry the prefix ``##``
    ("continues the previous piece"), so ``"tokenizer"`` becomes ``["token", "##izer"]`` and
    :meth:`decode` can glue them back. With every letter in the vocabulary (as
    :func:`default_vocab` has), a word never seen is spelled out: ``"xq"`` -> ``["x", "##q"]``.
    A word that cannot be covered at all (a character missing from the vocabulary), or longer
    than ``max_chars``, becomes a single ``<unk>``, as in BERT.

    Args:
        vocab: the pieces (default: :func:`default_vocab`).
        max_chars: words longer than this become ``<unk>``.

    Example::

        tok = WordPieceTokenizer()
        tok.tokenize("The tokenizer spelled out transformerification")
        # ['the', 'token', '##izer', 'spell', '##ed', 'out',
        #  'transform', '##er', '##ification']

    Taught in: chapters/02_similarity.ipynb
    """

    def __init__(self, vocab: Vocab | None = None, *, max_chars: int = 100) -> None:
        if vocab is not None and not isinstance(vocab, Vocab):
            raise TypeError(f"vocab must be a Vocab, got a {type(vocab).__name__}")
        self.vocab = default_vocab() if vocab is None else vocab
        self.max_chars = max_chars

    def tokenize_word(self, word: str) -> list[str]:
        """The pieces of one word: repeatedly take the longest known piece from the left."""
        if len(word) > self.max_chars:
            return [Vocab.UNK]
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    break
                end -= 1
            if end == start:  # not even one character matched
                return [Vocab.UNK]
            pieces.append(piece)
            start = end
        return pieces

    def tokenize(self, text: str) -> list[str]:
        """Text -> pieces: lower-case, cut into words and punctuation, then each word into pieces."""
        return [p for word in word_tokenize(text) for p in self.tokenize_word(word)]

    def encode(self, text: str, *, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """Text -> piece ids (``<bos>``/``<eos>`` optional)."""
        return self.vocab.encode(self.tokenize(text), add_bos=add_bos, add_eos=add_eos)

    def decode(self, ids: Any) -> str:
        """Ids -> text: ``##`` pieces are glued to the piece before; specials are dropped.

        Lower-casing and the spaces around punctuation are not undone: ``decode(encode(t))``
        equals ``" ".join(word_tokenize(t))`` when nothing in ``t`` is unknown.
        """
        words: list[str] = []
        for piece in self.vocab.decode(ids, skip_special=True):
            if piece.startswith("##") and words:
                words[-1] += piece[2:]
            else:
                words.append(piece)
        return " ".join(words)


# ---------------------------------------------------------------------------------------------
# Byte-pair encoding: where the pieces come from
# ---------------------------------------------------------------------------------------------


def _merge_pair(symbols: list[str], a: str, b: str) -> list[str]:
    """Replace every adjacent ``a, b`` in ``symbols`` by the merged symbol."""
    merged = a + b.removeprefix("##")
    out, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and symbols[i] == a and symbols[i + 1] == b:
            out.append(merged)
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


def _spell(word: str) -> list[str]:
    return [word[0]] + ["##" + c for c in word[1:]]  # "cat" -> ["c", "##a", "##t"]


def train_bpe(corpus: str | Iterable[str], n_merges: int) -> list[tuple[str, str]]:
    """Learn byte-pair-encoding merges: repeatedly fuse the most frequent adjacent pair.

    Every word starts spelled out (``"walked"`` -> ``w ##a ##l ##k ##e ##d``, written with
    WordPiece's ``##`` so the result is a WordPiece vocabulary). Each round counts adjacent
    symbol pairs over the corpus (weighted by word frequency), merges the most frequent pair
    everywhere (ties: the alphabetically first pair) and records it. Frequent endings such as
    ``##ed`` and ``##ing`` and frequent whole words emerge after a few dozen merges.

    Args:
        corpus: a string or an iterable of strings (cut with :func:`word_tokenize`).
        n_merges: how many merges to learn (fewer if every word is already one symbol).

    Returns:
        The merges in the order learned, e.g. ``[("t", "##h"), ("th", "##e"), ...]``.

    Reference: Sennrich, Haddow & Birch, ACL 2016, Algorithm 1.
    """
    n_merges = check_int(n_merges, "n_merges", low=0)
    texts = [corpus] if isinstance(corpus, str) else list(corpus)
    counts = Counter(w for text in texts for w in word_tokenize(text))
    splits = {w: _spell(w) for w in counts}
    merges: list[tuple[str, str]] = []
    for _ in range(n_merges):
        pairs: Counter[tuple[str, str]] = Counter()
        for word, count in counts.items():
            symbols = splits[word]
            for pair in pairwise(symbols):
                pairs[pair] += count
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))  # most frequent, then alphabetical
        merges.append(best)
        splits = {w: _merge_pair(s, *best) for w, s in splits.items()}
    return merges


def bpe_segment(word: str, merges: Sequence[tuple[str, str]]) -> list[str]:
    """Cut one (lower-case) word by replaying ``merges`` in the order they were learned."""
    if not word:
        return []
    symbols = _spell(word)
    for a, b in merges:
        symbols = _merge_pair(symbols, a, b)
    return symbols


def vocab_from_merges(merges: Sequence[tuple[str, str]]) -> Vocab:
    """A WordPiece vocabulary from BPE merges: every character, then each merged piece.

    Use it with :class:`WordPieceTokenizer` to see the learned pieces at work (greedy longest
    match usually, but not always, gives the same split as :func:`bpe_segment`).
    """
    pieces = [s for a, b in merges for s in (a, b, a + b.removeprefix("##"))]
    return Vocab(_ALPHABET + pieces)
