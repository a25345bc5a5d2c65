"""Real text for a language model: the shipped Shakespeare corpus and a character vocabulary.

The corpus is eight of Shakespeare's plays as plain text, each speech the speaker's name
and a colon, then its lines, then a blank line (the layout of the widely used "tiny
Shakespeare" file). It ships with the package, gzipped (``data_files/shakespeare.txt.gz``,
derived by ``tools/make_shakespeare.py``), so nothing is downloaded. The validation split
is fixed: the last 10% of the characters, never seen in training.

A character-level model reads the text one character at a time: its vocabulary is the set
of distinct characters (:class:`CharVocab`), a few dozen ids.

Written for chapter 9 (a GPT on real text).
"""

from __future__ import annotations

import functools
import gzip
from collections.abc import Iterable
from importlib import resources
from typing import Any

import numpy as np
import torch

from .._validate import check_int, check_real, describe, positive_int

__all__ = [
    "SHAKESPEARE_SHA256",
    "VALIDATION_FRACTION",
    "CharBPE",
    "CharVocab",
    "load_shakespeare",
    "random_windows",
    "shakespeare_split",
    "split_text",
]

SHAKESPEARE_SHA256 = "a16972e1512c70267c39c6689ebd97c28991dcbd3fa772c884c38948f348e605"
"""SHA-256 of the corpus text (UTF-8), as ``tools/make_shakespeare.py`` prints it."""

VALIDATION_FRACTION = 0.1
"""The share of the corpus held out for validation: its last 10%."""


@functools.cache
def load_shakespeare() -> str:
    """The whole corpus as one string (1,096,686 characters, 64 distinct).

    Read once from the gzipped file shipped in ``attnlab.data_files`` and kept.
    """
    packed = resources.files("attnlab.data_files").joinpath("shakespeare.txt.gz").read_bytes()
    return gzip.decompress(packed).decode("utf-8")


def split_text(text: str, validation: float = VALIDATION_FRACTION) -> tuple[str, str]:
    """Cut ``text`` in two: the first part for training, the last ``validation`` share held out.

    The cut is at character ``int(len(text) * (1 - validation))``, as nanoGPT cuts its
    Shakespeare. No shuffling: the held-out text is a stretch the model never saw, not
    lines scattered among the ones it trained on.

    Args:
        text: the corpus.
        validation: the share of characters held out, in ``(0, 1)``.

    Returns:
        ``(train, val)`` with ``train + val == text``.

    Raises:
        TypeError: ``text`` is not a string.
        ValueError: ``validation`` outside ``(0, 1)``.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {describe(text)}")
    validation = check_real(
        validation, "validation", expected="a share in (0, 1)", ok=lambda f: 0.0 < f < 1.0
    )
    cut = int(len(text) * (1 - validation))
    return text[:cut], text[cut:]


def shakespeare_split() -> tuple[str, str]:
    """The corpus's fixed split: ``(train, val)``, the validation text its last 10%."""
    return split_text(load_shakespeare(), VALIDATION_FRACTION)


class CharVocab:
    """One id per character: the vocabulary of a character-level language model.

    ``CharVocab.from_text(text)`` takes the distinct characters of ``text`` in sorted
    (code point) order, as nanoGPT does, so the same text always gives the same ids. There
    is no unknown token: a character outside the vocabulary is an error, named with its
    position, because a model cannot read what it never had an embedding for.

    Args:
        chars: the characters, in id order; each a string of length 1, none repeated.

    Raises:
        TypeError: ``chars`` is one string (use :meth:`from_text`), or holds a non-string.
        ValueError: an empty vocabulary, an entry longer than one character, or a repeat.

    Written for chapter 9 (a GPT on real text).
    """

    def __init__(self, chars: Iterable[str]) -> None:
        if isinstance(chars, str):
            raise TypeError(
                "CharVocab expects a list of characters; for the characters of a text "
                "use CharVocab.from_text(text)"
            )
        chars = list(chars)
        for c in chars:
            if not isinstance(c, str):
                raise TypeError(f"characters must be strings, got {c!r} ({type(c).__name__})")
            if len(c) != 1:
                raise ValueError(f"each entry must be one character, got {c!r}")
        if not chars:
            raise ValueError("a CharVocab needs at least one character")
        if len(set(chars)) != len(chars):
            seen: set[str] = set()
            again = next(c for c in chars if c in seen or seen.add(c))
            raise ValueError(f"character {again!r} appears twice")
        self._chars = tuple(chars)
        self._ids = {c: i for i, c in enumerate(chars)}

    @classmethod
    def from_text(cls, text: str) -> CharVocab:
        """The vocabulary of the distinct characters of ``text``, in sorted order."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a string, got {describe(text)}")
        return cls(sorted(set(text)))

    @property
    def chars(self) -> tuple[str, ...]:
        """The characters in id order: ``vocab.chars[i]`` has id ``i``."""
        return self._chars

    def __len__(self) -> int:
        return len(self._chars)

    def __contains__(self, char: object) -> bool:
        return char in self._ids

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CharVocab) and self._chars == other._chars

    def __hash__(self) -> int:
        return hash(self._chars)

    def __repr__(self) -> str:
        return f"CharVocab({len(self)} characters: {''.join(self._chars)!r})"

    def encode(self, text: str) -> list[int]:
        """Text -> one id per character.

        Raises:
            TypeError: ``text`` is not a string.
            ValueError: a character not in the vocabulary; the message names it (and its
                code point), its position, and how many other unknown characters follow.
        """
        if not isinstance(text, str):
            raise TypeError(f"encode expects a string, got {describe(text)}")
        ids = self._ids
        try:
            return [ids[c] for c in text]
        except KeyError:
            unknown = sorted({c for c in text if c not in ids})
            at = next(i for i, c in enumerate(text) if c not in ids)
            c = text[at]
            more = f" ({len(unknown) - 1} other unknown characters too)" if len(unknown) > 1 else ""
            raise ValueError(
                f"character {c!r} (U+{ord(c):04X}) at position {at} is not in the "
                f"vocabulary of {len(self)} characters{more}: build the vocabulary from a "
                "text that contains it, or remove it from the input"
            ) from None

    def decode(self, ids: Any) -> str:
        """Ids -> text.

        Args:
            ids: a 1-D sequence of integer ids (list, NumPy array or tensor, any device).

        Raises:
            TypeError: ids that are not integers, or not a 1-D sequence.
            ValueError: an id outside ``0 .. len(vocab) - 1`` (the message names it).
        """
        return "".join(self._chars[i] for i in _id_list(ids, len(self), "characters"))


def _id_list(ids: Any, n: int, what: str) -> list[int]:
    """``ids`` (a 1-D list, array or tensor) as Python ints, each checked to be in ``0..n-1``."""
    if isinstance(ids, (torch.Tensor, np.ndarray)):
        if ids.ndim != 1 or not _integral(ids):
            raise TypeError(f"ids must be a 1-D sequence of integers, got {describe(ids)}")
        ids = ids.tolist()
    elif isinstance(ids, str) or not isinstance(ids, Iterable):
        raise TypeError(f"ids must be a 1-D sequence of integers, got {describe(ids)}")
    out = []
    for i in ids:
        i = check_int(i, "each id")
        if not 0 <= i < n:
            raise ValueError(
                f"id {i} is out of range for a vocabulary of {n} {what} (valid ids: 0..{n - 1})"
            )
        out.append(i)
    return out


class CharBPE:
    r"""Byte-pair encoding over characters: the character vocabulary plus learned merges.

    Training starts from one token per character (:class:`CharVocab`) and repeats: count
    every adjacent pair of tokens in the text, fuse the most frequent pair into a new token
    everywhere (left to right, so ``aaa`` becomes ``aa a``), record the merge. Ties go to
    the pair of smallest ids. Encoding a text replays the merges in the order learned.
    Nothing is lost: every token is a string of characters and decoding joins them, so
    ``decode(encode(text)) == text``, newlines, spaces and capitals included. Merges may
    cross spaces and newlines (frequent pieces such as ``"the "`` or ``":\n"`` become
    tokens).

    Fewer tokens per text means a model sees more text in the same context; the price is a
    larger vocabulary, with rarer tokens to learn.

    Args:
        vocab: the character vocabulary the merges build on.
        merges: the merges in order, each a pair of token ids ``(a, b)``; merge ``i``
            makes token ``len(vocab) + i``.

    Raises:
        TypeError: ``vocab`` is not a :class:`CharVocab`.
        ValueError: a merge naming a token that does not exist yet.

    Written for chapter 9 (a GPT on real text).
    """

    def __init__(self, vocab: CharVocab, merges: Iterable[tuple[int, int]] = ()) -> None:
        if not isinstance(vocab, CharVocab):
            raise TypeError(f"vocab must be a CharVocab, got {type(vocab).__name__}")
        self.vocab = vocab
        tokens = list(vocab.chars)
        self.merges: tuple[tuple[int, int], ...] = ()
        checked = []
        for pair in merges:
            a, b = (check_int(t, "a merged token id", low=0) for t in pair)
            if max(a, b) >= len(tokens):
                raise ValueError(
                    f"merge {len(checked)} fuses token {max(a, b)}, which does not exist "
                    f"before it (tokens 0..{len(tokens) - 1})"
                )
            tokens.append(tokens[a] + tokens[b])
            checked.append((a, b))
        self.merges = tuple(checked)
        self.tokens: tuple[str, ...] = tuple(tokens)

    @classmethod
    def train(cls, text: str, n_merges: int, vocab: CharVocab | None = None) -> CharBPE:
        """Learn ``n_merges`` merges on ``text`` (fewer if no pair occurs twice).

        Args:
            text: the training text.
            n_merges: how many merges to learn, ``>= 0``.
            vocab: the character vocabulary (default: that of ``text``).
        """
        n_merges = check_int(n_merges, "n_merges", low=0)
        vocab = CharVocab.from_text(text) if vocab is None else vocab
        ids = np.asarray(vocab.encode(text), dtype=np.int64)  # (N,)
        size = len(vocab) + n_merges  # every id stays below this
        merges: list[tuple[int, int]] = []
        for new in range(len(vocab), size):
            if ids.shape[0] < 2:
                break
            counts = np.bincount(ids[:-1] * size + ids[1:])  # one bin per pair (a, b)
            best = int(counts.argmax())  # the most frequent pair; ties: the smallest ids
            if counts[best] < 2:
                break  # no pair repeats: merging would only rename
            a, b = divmod(best, size)
            merges.append((a, b))
            ids = _merge(ids, a, b, new)
        return cls(vocab, merges)

    def __len__(self) -> int:
        return len(self.tokens)

    def __repr__(self) -> str:
        return f"CharBPE({len(self.vocab)} characters + {len(self.merges)} merges)"

    def encode(self, text: str) -> list[int]:
        """Text -> token ids: one id per character, then every merge in order.

        Raises:
            TypeError: ``text`` is not a string.
            ValueError: a character outside the character vocabulary (named, with its
                position).
        """
        ids = np.asarray(self.vocab.encode(text), dtype=np.int64)  # (N,)
        for new, (a, b) in enumerate(self.merges, start=len(self.vocab)):
            if ids.shape[0] < 2:
                break
            ids = _merge(ids, a, b, new)
        return ids.tolist()

    def decode(self, ids: Any) -> str:
        """Token ids -> text (each token's characters, joined).

        Raises:
            TypeError: ids that are not integers, or not a 1-D sequence.
            ValueError: an id outside ``0 .. len(bpe) - 1``.
        """
        return "".join(self.tokens[i] for i in _id_list(ids, len(self), "tokens"))


def _merge(ids: np.ndarray, a: int, b: int, new: int) -> np.ndarray:
    """Replace each non-overlapping occurrence of the pair ``(a, b)``, left to right, by ``new``."""
    at = np.flatnonzero((ids[:-1] == a) & (ids[1:] == b))  # where a pair starts
    if a == b and at.size:  # in a run "a a a" the pairs overlap: keep every other one
        starts = np.r_[True, np.diff(at) != 1]  # the first pair of each run
        run_start = np.maximum.accumulate(np.where(starts, at, 0))
        at = at[(at - run_start) % 2 == 0]
    out = ids.copy()
    out[at] = new
    return np.delete(out, at + 1)  # drop the second token of each merged pair


def _integral(a: torch.Tensor | np.ndarray) -> bool:
    """Whether an array or tensor holds integers (booleans are not ids)."""
    if isinstance(a, np.ndarray):
        return a.dtype.kind in "iu"
    return not (a.is_floating_point() or a.is_complex() or a.dtype == torch.bool)


def random_windows(
    ids: torch.Tensor,
    batch_size: int,
    context: int,
    *,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""A batch of random windows of a token stream, and the same windows shifted by one.

    .. math:: x_b = \text{ids}[s_b : s_b + T], \qquad y_b = \text{ids}[s_b + 1 : s_b + T + 1]

    Each row of ``y`` is what a language model must predict at each position of ``x``: the
    next token. The starts ``s_b`` are drawn uniformly from ``0 .. len(ids) - T - 1`` on the
    generator's device (the CPU for a CPU generator), then moved to the device of ``ids``.

    Args:
        ids: ``(N,)`` token ids (an integer tensor, on any device).
        batch_size: ``B``, the number of windows.
        context: ``T``, the length of each window.
        generator: optional ``torch.Generator`` (the same seed gives the same windows).

    Returns:
        ``(x, y)``, each ``(B, T)``, of the dtype and device of ``ids``.

    Raises:
        TypeError: ``ids`` not an integer tensor.
        ValueError: ``ids`` not 1-D, too short for one window of ``T + 1``, or a size that is
            not a positive integer.

    Written for chapter 9 (a GPT on real text).
    """
    if not isinstance(ids, torch.Tensor) or not _integral(ids):
        raise TypeError(f"ids must be a tensor of integer token ids, got {describe(ids)}")
    if ids.ndim != 1:
        raise ValueError(f"ids must be one stream of tokens (N,), got {describe(ids)}")
    batch_size = positive_int(batch_size, "batch_size")
    context = positive_int(context, "context")
    if ids.shape[0] < context + 1:
        raise ValueError(
            f"ids holds {ids.shape[0]} tokens, too few for a window of context={context} "
            "and its next token"
        )
    where = generator.device if generator is not None else ids.device
    starts = torch.randint(
        ids.shape[0] - context, (batch_size,), generator=generator, device=where
    ).to(ids.device)  # (B,)
    offsets = torch.arange(context + 1, device=ids.device)  # (T + 1,)
    windows = ids[starts[:, None] + offsets]  # (B, 1) + (T + 1,) -> (B, T + 1)
    return windows[:, :-1], windows[:, 1:]  # (B, T), (B, T)
