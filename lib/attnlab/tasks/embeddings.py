"""A hand-made embedding table whose every dimension has a name.

Learned embeddings have hundreds of dimensions that mean nothing one by one. This table has
15, each a property you can read: ``royalty``, ``male``, ``female``, ``person``, ``animal``,
``nature``, ``money``, ``action``, ``past``, ``affection``, ``grammar`` (function words),
``city``, ``country``, and a map position ``north``/``east`` (for cities and countries).
The numbers (0 to 1, "how much of this property") were chosen by hand so that what is said
about real embeddings can be checked by eye:

- similar words point the same way: ``cosine(dog, cat)`` is high, ``cosine(dog, money)`` is 0;
- arithmetic changes meaning: ``king - man + woman`` lands next to ``queen`` (gender),
  ``walked - walk + swim`` next to ``swam`` (tense), ``paris - france + italy`` next to
  ``rome`` (the homeland of a city);
- ``river`` and ``bank`` share the ``nature`` direction (large dot product), ``bank`` and
  ``money`` share ``money``, and ``by`` is nearly neutral (small dot product with every other
  word), as in the river/bank/by example of self-attention;
- in "Bark is very cute and he is a dog", ``dog`` relates most to ``cute``, ``bark`` and
  ``he``.

Token ids become vectors by a row lookup, :func:`embed` (``table[ids]``, what
``nn.Embedding`` does), which equals multiplying the one-hot vectors (:func:`one_hot`) by
the table.

Reference: Mikolov, Yih & Zweig, "Linguistic Regularities in Continuous Space Word
Representations", NAACL 2013 (the analogy arithmetic on learned vectors).

Taught in: chapters/02_similarity.ipynb
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import (
    as_array,
    as_float,
    check_token_ids,
    describe,
    device,
    namespace,
    positive_int,
)
from ..data_files import read_text
from ..mechanism.similarity import cosine_similarity
from .tokenizer import word_tokenize

__all__ = ["EmbeddingTable", "UnknownWordError", "embed", "one_hot", "toy_embeddings"]

DIMS = [
    "royalty",
    "male",
    "female",
    "person",
    "animal",
    "nature",
    "money",
    "action",
    "past",
    "affection",
    "grammar",
    "city",
    "country",
    "north",
    "east",
]


class UnknownWordError(KeyError):
    """A word that is not in the table (a ``KeyError`` whose message reads well)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True, eq=False)
class EmbeddingTable:
    """A vocabulary of words with one vector each: ``vectors[i]`` embeds ``words[i]``.

    Row ``i`` of ``vectors`` is the embedding of token id ``i``, so
    :func:`embed` (``vectors[ids]``) turns ids into vectors.

    The table is frozen: the inputs are copied, ``words`` and ``dims`` become tuples and
    ``vectors`` is read-only (``table.vectors[0, 0] = 1`` raises ``ValueError``), so no
    experiment can corrupt it for the next. :meth:`vector` and :meth:`vectors_for` return
    fresh, writable arrays.

    Attributes:
        words: the ``n_vocab`` words, in id order (a tuple).
        dims: the names of the ``D`` dimensions (a tuple).
        vectors: ``(n_vocab, D)`` float64 array, read-only.

    Raises:
        ValueError: ``vectors`` not of shape ``(len(words), len(dims))``, or repeated words.

    Taught in: chapters/02_similarity.ipynb
    """

    words: tuple[str, ...]
    dims: tuple[str, ...]
    vectors: np.ndarray

    def __post_init__(self) -> None:
        words, dims = tuple(self.words), tuple(self.dims)
        vectors = np.array(self.vectors, dtype=np.float64)  # a copy: the caller's stays apart
        v, d = len(words), len(dims)
        if vectors.shape != (v, d):
            raise ValueError(
                f"vectors must have shape (len(words), len(dims)) = ({v}, {d}), got {vectors.shape}"
            )
        if len(set(words)) != v:
            raise ValueError("words must be distinct")
        vectors.setflags(write=False)
        # A frozen dataclass: its fields are set once, here, through object.__setattr__.
        object.__setattr__(self, "words", words)
        object.__setattr__(self, "dims", dims)
        object.__setattr__(self, "vectors", vectors)

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: object) -> bool:
        return word in self.words

    def index(self, word: str) -> int:
        """The id (row) of ``word``.

        Raises:
            UnknownWordError: (a ``KeyError``) naming the word and suggesting close ones.
        """
        try:
            return self.words.index(word)
        except ValueError:
            close = difflib.get_close_matches(str(word), self.words, n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            raise UnknownWordError(
                f"{word!r} is not in the embedding table ({len(self)} words){hint}"
            ) from None

    def vector(self, word: str) -> np.ndarray:
        """The ``(D,)`` embedding of one word (a copy: editing it leaves the table alone)."""
        return self.vectors[self.index(word)].copy()

    def vectors_for(self, words: str | Sequence[str]) -> np.ndarray:
        """The ``(T, D)`` embeddings of a list of words, or of a sentence (cut into words).

        ``table.vectors_for("money in the bank")`` gives 4 rows, one per word, ready for
        self-attention. The result is a fresh, writable array (scale it as you like).
        Punctuation and unknown words raise :class:`UnknownWordError`.
        """
        if isinstance(words, str):
            words = word_tokenize(words)
        ids = [self.index(w) for w in words]
        return self.vectors[ids].copy()  # (T,) -> (T, D), writable

    def nearest(
        self, vector: np.ndarray, k: int = 5, exclude: Iterable[str] = ()
    ) -> list[tuple[str, float]]:
        r"""The ``k`` words whose vectors have the largest cosine similarity with ``vector``.

        :math:`\cos(u, w) = \frac{u \cdot w}{\|u\|\,\|w\|}` for every word ``w`` (via
        :func:`attnlab.mechanism.similarity.cosine_similarity`), best first.

        Args:
            vector: ``(D,)`` query vector (e.g. ``table.vector("king")`` or an analogy).
            k: how many words to return.
            exclude: words to leave out (e.g. the query word itself).

        Returns:
            ``[(word, cosine), ...]``, at most ``k`` pairs, sorted by decreasing cosine.
        """
        vector = np.asarray(vector, dtype=np.float64)
        if vector.shape != (len(self.dims),):
            raise ValueError(
                f"vector must have shape ({len(self.dims)},) (one value per dimension), "
                f"got {vector.shape}"
            )
        skip = {self.index(w) for w in exclude}
        cos = cosine_similarity(self.vectors, vector)  # (n_vocab, D) vs (D,) -> (n_vocab,)
        order = [i for i in np.argsort(-cos, kind="stable") if i not in skip]
        return [(self.words[i], float(cos[i])) for i in order[:k]]

    def analogy(self, a: str, b: str, c: str, k: int = 1) -> list[tuple[str, float]]:
        """ "``a`` is to ``b`` as ``c`` is to ?": the words nearest to ``b - a + c``.

        ``table.analogy("man", "king", "woman")`` computes ``king - man + woman`` and returns
        ``[("queen", 0.99...)]``. The three input words are excluded from the answer (as in
        Mikolov et al.; otherwise ``b`` itself is often the nearest).
        """
        target = self.vector(b) - self.vector(a) + self.vector(c)  # (D,)
        return self.nearest(target, k=k, exclude=(a, b, c))


def toy_embeddings() -> EmbeddingTable:
    """The hand-made table: 45 words x 15 named dimensions (a fresh copy on each call).

    Taught in: chapters/02_similarity.ipynb
    """
    # One row per word, one column per dimension of DIMS (abbreviated in the header); "." is
    # 0. north/east are map coordinates: (latitude - 46) / 8 and (longitude - 5) / 10, rounded.
    table = read_text("toy_embeddings.txt")
    header, *rows = (line.split() for line in table.strip().splitlines())
    if len(header) - 1 != len(DIMS):
        raise AssertionError("the table header does not match DIMS")
    words = [row[0] for row in rows]
    vectors = np.array(
        [[0.0 if x == "." else float(x) for x in row[1:]] for row in rows], dtype=np.float64
    )  # (n_vocab, D)
    return EmbeddingTable(words=tuple(words), dims=tuple(DIMS), vectors=vectors)


# ---------------------------------------------------------------------------------------------
# Ids -> vectors
# ---------------------------------------------------------------------------------------------


def _check_index_array(ids: Any, xp: Any, size: int, what: str) -> None:
    if not xp.isdtype(ids.dtype, "integral"):
        raise TypeError(f"ids must be integers, got {describe(ids)}")
    check_token_ids(ids, size, what=what)


def one_hot(ids: Any, vocab_size: int, *, like: Any = None) -> Any:
    r"""One-hot vectors: row ``i`` of the result is all zeros except a 1 at column ``ids[i]``.

    :math:`\mathrm{onehot}(t)_j = [\,j = t\,]`. Multiplying by an embedding table picks a row:
    ``one_hot(ids, n_vocab) @ table == table[ids]`` (see :func:`embed`).

    Args:
        ids: ``(...)`` integer token ids in ``0 .. vocab_size - 1`` (NumPy, torch or a list).
        vocab_size: ``n_vocab``, the length of each one-hot vector.
        like: optional array of the same kind whose float dtype the result takes (pass the
            embedding table, so ``one_hot(ids, n_vocab, like=table) @ table`` has matching dtypes).

    Returns:
        ``(..., n_vocab)`` floats on ``ids``' device: ``like``'s dtype if given, else NumPy
        float64 / torch's default dtype.

    Raises:
        ValueError: an id out of range (named, with the vocabulary size).
        TypeError: non-integer ids.
    """
    ids = as_array(ids, "ids")
    xp = namespace(ids=ids)
    vocab_size = positive_int(vocab_size, "vocab_size")
    _check_index_array(ids, xp, vocab_size, "a vocabulary")
    classes = xp.arange(vocab_size, device=device(ids))  # (n_vocab,)
    hot = ids[..., None] == classes  # (...) -> (..., n_vocab) booleans
    if like is None:
        return as_float(hot, "one_hot", xp)
    like = as_array(like, "like")
    namespace(ids=ids, like=like)
    if not xp.isdtype(like.dtype, "real floating"):
        raise TypeError(f"like must hold floats, got {describe(like)}")
    return xp.astype(hot, like.dtype)


def embed(ids: Any, table: Any) -> Any:
    r"""Embedding lookup: the vector of each token is its row of the table, ``table[ids]``.

    This is a plain row gather, and it equals the matrix product of one-hot vectors with the
    table: :math:`\mathrm{onehot}(ids)\,E = E[ids]`, i.e.
    ``one_hot(ids, n_vocab) @ table == table[ids]``. The gather is what libraries do
    (``nn.Embedding``): same result, without building a ``(..., n_vocab)`` matrix of zeros.

    Args:
        ids: ``(...)`` integer token ids in ``0 .. n_vocab - 1``.
        table: ``(n_vocab, D)`` embedding matrix, one row per token (same kind as ``ids``).

    Returns:
        ``(..., D)``: the embeddings, same kind (and device) as ``table``.

    Raises:
        ValueError: a table that is not 2-D, or an id out of range.
        TypeError: non-integer ids, or NumPy ids with a torch table (or the reverse).
    """
    ids, table = as_array(ids, "ids"), as_array(table, "table")
    xp = namespace(ids=ids, table=table)
    if table.ndim != 2:
        raise ValueError(f"table must be (vocab_size, d_model), got {describe(table)}")
    _check_index_array(ids, xp, table.shape[0], "a table")
    return table[ids]  # (...) -> (..., D)
