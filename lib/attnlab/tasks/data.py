"""Toy sequence tasks, small enough to train on a CPU in seconds.

Three synthetic tasks (:class:`Task`), each a different test of what a sequence model can
do:

- ``copy``: output the source unchanged (each output looks at one source position).
- ``reverse``: output the source backwards (output ``t`` must find source ``L - 1 - t``:
  a diagonal the other way, impossible to fake without positions).
- ``recall``: long-range associative recall. The source starts with ``n_pairs`` key–value
  pairs, then noise, then ``SEP`` and one of the keys; the answer is that key's value.
  The value sits ``L - 2`` positions before the query in the one-pair case: an RNN must
  carry it through every noise token, attention looks it up in one step.

Token ids (shared by source and target vocabularies):

===========  ====  =========================================
``PAD_ID``   0     padding after the end of a sequence
``BOS_ID``   1     begin-of-sequence, first token of ``tgt_in``
``EOS_ID``   2     end-of-sequence, last real token of ``tgt_out``
``SEP_ID``   3     the "query follows" marker of ``recall``
symbols      4..   ``n_symbols`` ordinary tokens, shown as ``a, b, c, ...``
===========  ====  =========================================

A batch is ``(src, tgt_in, tgt_out)``, three ``(B, length)`` LongTensors padded with
``PAD_ID``: for a target ``y``, ``tgt_in = [BOS] + y`` (what the decoder reads) and
``tgt_out = y + [EOS]`` (what it must predict at each position; teacher forcing).

Two tasks with readable tokens, for the capstone models:

- :class:`DateTask` (encoder–decoder): ``"march 5, 2021"`` or ``"5 march 2021"`` ->
  ``"2021-03-05"``. Each output character comes from one identifiable part of the input
  (the year digits, the month word, the day), so the cross-attention is easy to read.
- :class:`AdditionTask` (decoder-only): ``"12+34=046"``, the prompt ``"12+34="`` and the
  sum written with ``n_digits + 1`` digits; batches are ``(inputs, targets)`` for
  next-token prediction, with the prompt's targets set to ``PAD_ID`` (not graded).

Both share the special ids below and hold out a fixed part of their inputs
(``split="test"``), so a model can be graded on inputs it never trained on.

One more task, with no decoder: ``pronouns`` (chapter 3). Each sequence holds a
male name, a female name, ``he``, ``she`` and two filler words, shuffled; ``he`` must name
the male name of *its* sequence and ``she`` the female one (every other word names
itself). The answer is in the context, not in the pronoun, so no per-token map can give
it: one self-attention layer solves it only if the query of ``he`` looks for a key
*unlike itself*, the job of learned query and key projections.

Taught in: chapters/01_why_attention.ipynb (recall), chapters/03_qkv.ipynb (pronouns) and
chapters/07_transformer.ipynb
"""

from __future__ import annotations

import datetime
import functools
import string
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import torch

from .._validate import check_int, check_token_ids, positive_int, same_device

__all__ = [
    "BOS_ID",
    "EOS_ID",
    "FEMALE_NAMES",
    "FILLERS",
    "MALE_NAMES",
    "MONTHS",
    "N_SPECIAL",
    "PAD_ID",
    "PRONOUN_WORDS",
    "SEP_ID",
    "TASKS",
    "AdditionTask",
    "Batch",
    "DateTask",
    "Task",
    "batches",
    "make_batch",
    "pronoun_accuracy",
    "pronoun_batch",
    "pronoun_batches",
    "token_labels",
]

PAD_ID, BOS_ID, EOS_ID, SEP_ID = 0, 1, 2, 3
N_SPECIAL = 4  # ids below this are special; symbols are N_SPECIAL .. N_SPECIAL + n_symbols - 1
TASKS = ("copy", "reverse", "recall")


class Batch(NamedTuple):
    """One padded batch: ``src`` ``(B, S)``, ``tgt_in`` ``(B, T)``, ``tgt_out`` ``(B, T)``."""

    src: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor


@dataclass(frozen=True)
class Task:
    """A toy task: its name, alphabet size and the range of source lengths.

    Args:
        name: ``"copy"``, ``"reverse"`` or ``"recall"``.
        n_symbols: number of ordinary tokens (the vocabulary is ``N_SPECIAL + n_symbols``).
        min_len: shortest source sequence.
        max_len: longest source sequence (each batch is padded to its own longest).
        n_pairs: ``recall`` only: key–value pairs at the start of the source (keys are
            distinct, so ``n_pairs <= n_symbols - 1``: the noise uses the other symbols).

    Raises:
        ValueError: unknown name, or sizes that cannot make a valid sequence (e.g. a
            ``recall`` source shorter than ``2 * n_pairs + 2``).

    Taught in: chapters/07_transformer.ipynb
    """

    name: str
    n_symbols: int = 10
    min_len: int = 10
    max_len: int = 10
    n_pairs: int = 1

    def __post_init__(self) -> None:
        if self.name not in TASKS:
            raise ValueError(f"unknown task {self.name!r}: choose one of {TASKS}")
        for field in ("n_symbols", "min_len", "max_len", "n_pairs"):
            # Frozen: the checked plain int (np.int64 accepted) is set once, here.
            object.__setattr__(self, field, positive_int(getattr(self, field), field))
        if self.min_len > self.max_len:
            raise ValueError(f"min_len={self.min_len} is larger than max_len={self.max_len}")
        if self.name == "recall":
            if self.min_len < 2 * self.n_pairs + 2:
                raise ValueError(
                    f"recall with n_pairs={self.n_pairs} needs sources of length >= "
                    f"{2 * self.n_pairs + 2} (pairs, SEP, query key), got min_len={self.min_len}"
                )
            if self.n_pairs >= self.n_symbols:
                raise ValueError(
                    f"recall needs n_pairs < n_symbols (distinct keys plus noise symbols), got "
                    f"n_pairs={self.n_pairs}, n_symbols={self.n_symbols}"
                )

    @property
    def vocab_size(self) -> int:
        """Number of token ids: the 4 special ones plus the symbols."""
        return N_SPECIAL + self.n_symbols

    @property
    def max_tgt_len(self) -> int:
        """Longest target ``y`` (without BOS/EOS): ``tgt_in``/``tgt_out`` are one longer."""
        return 1 if self.name == "recall" else self.max_len

    @property
    def max_seq_len(self) -> int:
        """The ``max_len`` a model needs for this task: the longest ``src`` or ``tgt_in``."""
        return max(self.max_len, self.max_tgt_len + 1)

    def sample(self, batch_size: int, *, rng: Any = None, device: Any = None) -> Batch:
        """Shorthand for :func:`make_batch` ``(self, batch_size, rng=rng, device=device)``."""
        return make_batch(self, batch_size, rng=rng, device=device)


def _as_rng(rng: Any) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None:
        return np.random.default_rng()
    try:
        return np.random.default_rng(check_int(rng, "rng", low=0))
    except ValueError:
        pass
    raise TypeError(
        f"rng must be a numpy.random.Generator or an int seed, got {type(rng).__name__}"
    )


def _pad(rows: Sequence[np.ndarray], width: int) -> np.ndarray:
    out = np.full((len(rows), width), PAD_ID, dtype=np.int64)  # (B, width)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out


def _source_and_target(task: Task, length: int, rng: np.random.Generator) -> tuple[Any, Any]:
    symbols = N_SPECIAL + np.arange(task.n_symbols)
    if task.name in ("copy", "reverse"):
        src = rng.choice(symbols, size=length)
        return src, (src if task.name == "copy" else src[::-1])
    # recall: [k1 v1 ... kn vn, noise ..., SEP, k_q] -> [v_q]
    keys = rng.choice(symbols, size=task.n_pairs, replace=False)
    values = rng.choice(symbols, size=task.n_pairs)
    noise_symbols = np.setdiff1d(symbols, keys)  # noise never looks like a key
    noise = rng.choice(noise_symbols, size=length - 2 * task.n_pairs - 2)
    q = rng.integers(task.n_pairs)
    pairs = np.stack([keys, values], axis=1).reshape(-1)  # (n, 2) -> (2n,): k1 v1 k2 v2 ...
    src = np.concatenate([pairs, noise, [SEP_ID, keys[q]]])
    return src, values[q : q + 1]


def make_batch(task: Task, batch_size: int, *, rng: Any = None, device: Any = None) -> Batch:
    """Draw ``batch_size`` fresh examples of ``task``, padded into one batch.

    Source lengths are uniform in ``task.min_len .. task.max_len``; each tensor is padded
    with ``PAD_ID`` to the longest sequence of *this* batch.

    Args:
        task: the :class:`Task`.
        batch_size: number of examples ``B``.
        rng: a ``numpy.random.Generator`` (consumed: the next call gives new examples) or an
            int seed; the same seed gives the same batch. ``None``: fresh OS entropy.
        device: where to put the tensors (default CPU).

    Returns:
        :class:`Batch` ``(src (B, S), tgt_in (B, T), tgt_out (B, T))`` of int64 ids:
        ``tgt_in = [BOS] + y``, ``tgt_out = y + [EOS]``, both padded.

    Taught in: chapters/07_transformer.ipynb
    """
    if not isinstance(task, Task):
        raise TypeError(f"task must be a Task, got {type(task).__name__}")
    batch_size = positive_int(batch_size, "batch_size")
    gen = _as_rng(rng)
    lengths = gen.integers(task.min_len, task.max_len + 1, size=batch_size)  # (B,)
    pairs = [_source_and_target(task, int(n), gen) for n in lengths]
    srcs = [s for s, _ in pairs]
    tgt_ins = [np.concatenate([[BOS_ID], y]) for _, y in pairs]
    tgt_outs = [np.concatenate([y, [EOS_ID]]) for _, y in pairs]
    S = max(len(s) for s in srcs)
    T = max(len(y) for y in tgt_ins)
    return Batch(
        *(
            torch.from_numpy(_pad(rows, width)).to(device)
            for rows, width in ((srcs, S), (tgt_ins, T), (tgt_outs, T))
        )
    )


def batches(task: Any, batch_size: int, *, rng: Any = None, device: Any = None) -> Iterator[Any]:
    """An endless stream of fresh batches of ``task`` (``task.sample``, e.g. :func:`make_batch`).

    Works for every task here: :class:`Task`, :class:`DateTask` (``Batch`` triples) and
    :class:`AdditionTask` (``(inputs, targets)`` pairs).

    With an int seed the stream is the same every time; pass it to
    :func:`attnlab.tasks.training.train`. Every batch is new data, so the training loss is also an
    estimate of the loss on unseen examples.

    Taught in: chapters/07_transformer.ipynb
    """
    gen = _as_rng(rng)
    while True:
        yield task.sample(batch_size, rng=gen, device=device)


def token_labels(ids: Any) -> list[str]:
    """Readable labels for token ids, for axis ticks: ``<pad> <bos> <eos> ?`` then ``a, b, ...``.

    Symbols beyond the 26 letters are labelled ``s26, s27, ...``.

    Args:
        ids: a 1-D sequence of ids (list, NumPy array or tensor).

    Returns:
        One string per id.

    Raises:
        ValueError: a negative id.

    Taught in: chapters/07_transformer.ipynb
    """
    if isinstance(ids, torch.Tensor):
        ids = ids.tolist()
    special = {PAD_ID: "<pad>", BOS_ID: "<bos>", EOS_ID: "<eos>", SEP_ID: "?"}
    labels = []
    for i in np.asarray(ids).reshape(-1).tolist():
        j = int(i) - N_SPECIAL
        if int(i) in special:
            labels.append(special[int(i)])
        elif 0 <= j < 26:
            labels.append(string.ascii_lowercase[j])
        elif j >= 26:
            labels.append(f"s{j}")
        else:
            raise ValueError(f"token id {i} is negative")
    return labels


# Tasks with readable tokens: dates (encoder-decoder) and addition (decoder-only) ----------

MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
"""The month words of :class:`DateTask`, January first."""

_SPECIAL_TOKENS = ("<pad>", "<bos>", "<eos>", "?")  # ids PAD_ID, BOS_ID, EOS_ID, SEP_ID
_DIGITS = tuple("0123456789")
_SPLITS = ("train", "test")


class _TextTask:
    """Shared by the tasks whose tokens are strings: id <-> token tables and decoding."""

    tokens: tuple[str, ...]

    @property
    def vocab_size(self) -> int:
        """Number of token ids (the 4 special ones included)."""
        return len(self.tokens)

    def token_id(self, token: str) -> int:
        """The id of one token string; ``ValueError`` names a token not in the vocabulary."""
        try:
            return self.tokens.index(token)
        except ValueError:
            raise ValueError(f"{token!r} is not a token of this task: {self.tokens}") from None

    def labels(self, ids: Any) -> list[str]:
        """One string per id (specials included), for axis ticks.

        Raises:
            ValueError: an id outside ``0 .. vocab_size - 1``.
        """
        if isinstance(ids, torch.Tensor):
            ids = ids.tolist()
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        check_token_ids(ids, len(self.tokens), what="this task's vocabulary")
        return [self.tokens[i] for i in ids.tolist()]

    def decode(self, ids: Any) -> str:
        """The text of one sequence of ids: stops at the first EOS, skips PAD and BOS."""
        words = []
        for token in self.labels(ids):
            if token == "<eos>":
                break
            if token not in ("<pad>", "<bos>"):
                words.append(token)
        return self._join(words)

    @staticmethod
    def _join(words: Sequence[str]) -> str:
        return "".join(words)


def _check_split(split: Any) -> None:
    if split not in _SPLITS:
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")


@dataclass(frozen=True)
class DateTask(_TextTask):
    """Rewrite a date written in words as an ISO date: ``"march 5, 2021"`` -> ``"2021-03-05"``.

    Source tokens are month words, single digits and ``","``; the day has no leading zero,
    so it is one or two tokens. Two source layouts (``formats``): ``"mdy"``
    (``march 5, 2021``) and ``"dmy"`` (``5 march 2021``); each example picks one at random.
    The target is always ten characters, ``yyyy-mm-dd``. Every target character has an
    obvious source: the year digits are copied, the month digits come from the month
    word, the day digits from the day (with a ``0`` added before a one-digit day).

    Dates are drawn uniformly between January 1 of ``min_year`` and December 31 of
    ``max_year``. One day in ten (those whose ordinal is a multiple of 10) is held out:
    ``split="train"`` never draws them and ``split="test"`` draws only them.

    Args:
        formats: the source layouts to draw from, a non-empty subset of ``("mdy", "dmy")``.
        min_year: first year (at least 1000, so years have four digits).
        max_year: last year (at most 9999).
        split: ``"train"`` or ``"test"``.

    Raises:
        ValueError: an unknown format or split, or a year range outside 1000..9999.

    Taught in: chapters/07_transformer.ipynb
    """

    formats: tuple[str, ...] = ("mdy", "dmy")
    min_year: int = 1900
    max_year: int = 2099
    split: str = "train"

    def __post_init__(self) -> None:
        object.__setattr__(self, "formats", tuple(self.formats))
        if not self.formats or any(f not in ("mdy", "dmy") for f in self.formats):
            raise ValueError(
                f"formats must be a non-empty subset of ('mdy', 'dmy'), got {self.formats!r}"
            )
        for field in ("min_year", "max_year"):
            check_int(
                getattr(self, field), field, low=1000, high=9999, expected="a four-digit year"
            )
        if self.min_year > self.max_year:
            raise ValueError(f"min_year={self.min_year} is after max_year={self.max_year}")
        _check_split(self.split)

    @property
    def tokens(self) -> tuple[str, ...]:  # type: ignore[override]
        """Every token, in id order: the 4 specials, the digits, ``","``, ``"-"``, the months."""
        return (*_SPECIAL_TOKENS, *_DIGITS, ",", "-", *MONTHS)

    @property
    def max_seq_len(self) -> int:
        """The ``max_len`` a model needs: the longest source (8) or ``tgt_in`` (11)."""
        return 11

    @staticmethod
    def _join(words: Sequence[str]) -> str:
        # "march 5 , 2021" -> "march 5, 2021"; digits of one number stay together
        text = ""
        for w in words:
            glue = (w.isdigit() and text[-1:].isdigit()) or w in (",", "-") or text[-1:] == "-"
            text += w if not text or glue else " " + w
        return text

    def source_tokens(self, year: int, month: int, day: int, fmt: str = "mdy") -> list[str]:
        """The source of one date as tokens, e.g. ``['march', '5', ',', '2', '0', '2', '1']``."""
        if fmt == "mdy":
            return [MONTHS[month - 1], *str(day), ",", *str(year)]
        if fmt == "dmy":
            return [*str(day), MONTHS[month - 1], *str(year)]
        raise ValueError(f"fmt must be 'mdy' or 'dmy', got {fmt!r}")

    @staticmethod
    def target_tokens(year: int, month: int, day: int) -> list[str]:
        """The target of one date, ``yyyy-mm-dd``, as ten one-character tokens."""
        return list(f"{year:04d}-{month:02d}-{day:02d}")

    def encode(self, text: str) -> torch.Tensor:
        """Token ids ``(1, S)`` of a source written as text, e.g. ``"march 5, 2021"``.

        Raises:
            ValueError: a word that is not a token (e.g. a misspelt month).
        """
        words = []
        for word in text.lower().replace(",", " , ").split():
            words.extend(list(word) if word.isdigit() else [word])
        return torch.tensor([[self.token_id(w) for w in words]])

    def _ordinals(self, n: int, gen: np.random.Generator) -> np.ndarray:
        first = datetime.date(self.min_year, 1, 1).toordinal()
        last = datetime.date(self.max_year, 12, 31).toordinal()
        if self.split == "test":  # the held-out days: multiples of 10 in [first, last]
            return 10 * gen.integers(-(-first // 10), last // 10 + 1, size=n)
        ords = gen.integers(first, last + 1, size=n)
        while (held := ords % 10 == 0).any():  # draw held-out days again
            ords[held] = gen.integers(first, last + 1, size=int(held.sum()))
        return ords

    def sample(self, batch_size: int, *, rng: Any = None, device: Any = None) -> Batch:
        """Draw ``batch_size`` dates of this split as a padded :class:`Batch`.

        Args:
            batch_size: number of examples ``B``.
            rng: a ``numpy.random.Generator`` or an int seed (``None``: OS entropy).
            device: where to put the tensors.

        Returns:
            ``(src (B, S), tgt_in (B, 11), tgt_out (B, 11))``, ``S <= 8``.
        """
        batch_size = positive_int(batch_size, "batch_size")
        gen = _as_rng(rng)
        ords = self._ordinals(batch_size, gen)
        fmts = gen.integers(0, len(self.formats), size=batch_size)
        dates = []
        for o, f in zip(ords.tolist(), fmts.tolist(), strict=True):
            d = datetime.date.fromordinal(int(o))
            dates.append((d.year, d.month, d.day, self.formats[f]))
        return self.batch(dates, device=device)

    def batch(self, dates: Sequence[tuple[int, int, int, str]], *, device: Any = None) -> Batch:
        """The :class:`Batch` of chosen dates, e.g. ``task.batch([(2021, 3, 5, "mdy")])``.

        Args:
            dates: ``(year, month, day, fmt)`` tuples, ``fmt`` ``"mdy"`` or ``"dmy"``.
            device: where to put the tensors.

        Returns:
            ``(src (B, S), tgt_in (B, 11), tgt_out (B, 11))`` as :meth:`sample` gives.

        Raises:
            ValueError: a date that does not exist, or an unknown ``fmt``.
        """
        srcs, tgt_ins, tgt_outs = [], [], []
        for year, month, day, fmt in dates:
            datetime.date(year, month, day)  # raises ValueError for e.g. February 30
            src = self.source_tokens(year, month, day, fmt)
            y = [self.token_id(t) for t in self.target_tokens(year, month, day)]
            srcs.append(np.array([self.token_id(t) for t in src]))
            tgt_ins.append(np.array([BOS_ID, *y]))
            tgt_outs.append(np.array([*y, EOS_ID]))
        if not srcs:
            raise ValueError("dates is empty: give at least one (year, month, day, fmt)")
        S = max(len(s) for s in srcs)
        return Batch(
            *(
                torch.from_numpy(_pad(rows, width)).to(device)
                for rows, width in ((srcs, S), (tgt_ins, 11), (tgt_outs, 11))
            )
        )


@functools.cache
def _addition_problems(n_digits: int, split: str) -> np.ndarray:
    """The ``(N, 2)`` problems of one split, computed once (read-only: copy before changing)."""
    base = 10**n_digits
    perm = np.random.default_rng(1337).permutation(base * base)
    n_test = min(500, base * base // 5)
    ix = perm[:n_test] if split == "test" else perm[n_test:]
    pairs = np.stack([ix // base, ix % base], axis=1)  # (N,) -> (N, 2)
    pairs.flags.writeable = False
    return pairs


@dataclass(frozen=True)
class AdditionTask(_TextTask):
    """Add two ``n_digits``-digit numbers, written out one character per token: ``12+34=046``.

    A decoder-only model reads the prompt ``"12+34="`` and must continue with the sum,
    always written with ``n_digits + 1`` digits (leading zeros kept, so every sequence has
    the same length ``3 * n_digits + 3``). Training batches are ``(inputs, targets)``:
    ``inputs`` is the sequence without its last token and ``targets`` the sequence shifted
    left by one, with the targets inside the prompt set to ``PAD_ID`` so that only the sum
    is graded (the prompt's numbers are random: there is nothing to learn in predicting
    them).

    Of the ``10 ** (2 * n_digits)`` problems, ``min(500, 20%)`` chosen by a fixed
    permutation (seed 1337) form ``split="test"``; ``split="train"`` draws only the others.
    (The same split rule as minGPT's adder demo, whose digits it also shares, though
    minGPT writes the sum reversed and without ``+``/``=``.)

    Args:
        n_digits: digits of each operand (1 to 4).
        split: ``"train"`` or ``"test"``.

    Raises:
        ValueError: ``n_digits`` outside 1..4 or an unknown split.

    Taught in: chapters/07_transformer.ipynb
    """

    n_digits: int = 2
    split: str = "train"

    def __post_init__(self) -> None:
        check_int(self.n_digits, "n_digits", low=1, high=4)
        _check_split(self.split)

    @property
    def tokens(self) -> tuple[str, ...]:  # type: ignore[override]
        """Every token, in id order: the 4 specials, the digits, ``"+"``, ``"="``."""
        return (*_SPECIAL_TOKENS, *_DIGITS, "+", "=")

    @property
    def prompt_len(self) -> int:
        """Tokens before the sum: ``2 * n_digits + 2`` (``12+34=``)."""
        return 2 * self.n_digits + 2

    @property
    def seq_len(self) -> int:
        """Tokens of a whole problem: the prompt and ``n_digits + 1`` sum digits."""
        return self.prompt_len + self.n_digits + 1

    @property
    def max_seq_len(self) -> int:
        """The ``max_len`` a model needs: the inputs are ``seq_len - 1`` tokens."""
        return self.seq_len - 1

    def problems(self) -> np.ndarray:
        """Every problem of this split, ``(N, 2)`` pairs ``(a, b)``, in a fixed order."""
        return _addition_problems(self.n_digits, self.split).copy()  # (N, 2)

    def encode(self, pairs: Any) -> torch.Tensor:
        """Whole problems as ids ``(N, seq_len)``: ``(12, 34)`` -> the tokens of ``12+34=046``."""
        pairs = np.asarray(pairs).reshape(-1, 2)
        n = self.n_digits
        if (pairs < 0).any() or (pairs >= 10**n).any():
            raise ValueError(f"operands must be in 0..{10**n - 1}, got {pairs.tolist()}")
        a, b = pairs[:, :1].astype(np.int64), pairs[:, 1:].astype(np.int64)  # (N, 1) each
        zero = self.token_id("0")  # the digits' ids are consecutive: id("7") = id("0") + 7

        def digits(v: np.ndarray, k: int) -> np.ndarray:  # (N, 1) -> (N, k), leading zeros
            return zero + v // 10 ** np.arange(k - 1, -1, -1) % 10

        plus, equals = (np.full_like(a, self.token_id(ch)) for ch in "+=")
        ids = [digits(a, n), plus, digits(b, n), equals, digits(a + b, n + 1)]
        return torch.from_numpy(np.concatenate(ids, axis=1))  # (N, seq_len)

    def sample(
        self, batch_size: int, *, rng: Any = None, device: Any = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Draw ``batch_size`` problems of this split (with replacement) for training.

        Returns:
            ``(inputs, targets)``, both ``(B, seq_len - 1)``: ``targets[:, t]`` is the token
            after ``inputs[:, t]``, or ``PAD_ID`` while the next token is still prompt.
        """
        batch_size = positive_int(batch_size, "batch_size")
        pairs = _addition_problems(self.n_digits, self.split)
        seqs = self.encode(pairs[_as_rng(rng).integers(0, len(pairs), size=batch_size)])
        inputs = seqs[:, :-1]  # (B, L) -> (B, L - 1)
        targets = seqs[:, 1:].clone()  # (B, L - 1): the next token at every position
        targets[:, : self.prompt_len - 1] = PAD_ID  # predicting the prompt is not graded
        return inputs.to(device), targets.to(device)


# -- pronouns: "he" and "she" name the names of their sequence (chapter 3) ------------------

MALE_NAMES = ("Bark", "Rex", "Max", "Leo")
FEMALE_NAMES = ("Luna", "Bella", "Daisy", "Mia")
FILLERS = ("is", "a", "very", "cute", "dog", "and")
PRONOUN_WORDS = ("he", "she", *MALE_NAMES, *FEMALE_NAMES, *FILLERS)
"""The vocabulary of the pronouns task: id ``i`` is ``PRONOUN_WORDS[i]``."""

_HE, _SHE = 0, 1
_MALE = np.arange(2, 2 + len(MALE_NAMES))
_FEMALE = _MALE[-1] + 1 + np.arange(len(FEMALE_NAMES))
_FILLER = _FEMALE[-1] + 1 + np.arange(len(FILLERS))


def pronoun_batch(batch_size: int, *, rng: Any = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Sentences of six words; ``he``/``she`` must name the male/female name among them.

    Each sequence holds one male name, one female name, ``he``, ``she`` and two distinct
    filler words, in random order (there are no positions: order plays no part). The
    target of ``he`` is the id of the male name of the same sequence, the target of
    ``she`` the female name; every other word's target is itself. Words are ids into
    :data:`PRONOUN_WORDS`.

    Args:
        batch_size: number of sequences ``B``.
        rng: a ``numpy.random.Generator`` (consumed) or an int seed.

    Returns:
        ``(ids, targets)``: two ``(B, 6)`` int64 tensors.

    Raises:
        ValueError: ``batch_size`` is not a positive integer.

    Taught in: chapters/03_qkv.ipynb
    """
    batch_size = positive_int(batch_size, "batch_size")
    gen = _as_rng(rng)
    ids, targets = [], []
    for _ in range(batch_size):
        male, female = gen.choice(_MALE), gen.choice(_FEMALE)
        fillers = gen.choice(_FILLER, size=2, replace=False)
        words = np.array([male, female, _HE, _SHE, *fillers])  # (6,)
        answer = np.array([male, female, male, female, *fillers])  # he -> male, she -> female
        order = gen.permutation(len(words))
        ids.append(words[order])
        targets.append(answer[order])
    return (
        torch.from_numpy(np.stack(ids).astype(np.int64)),  # (B, 6)
        torch.from_numpy(np.stack(targets).astype(np.int64)),  # (B, 6)
    )


def pronoun_batches(
    batch_size: int, *, rng: Any = None
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """An endless stream of :func:`pronoun_batch` batches, for :func:`attnlab.tasks.training.train`.

    Taught in: chapters/03_qkv.ipynb
    """
    gen = _as_rng(rng)
    while True:
        yield pronoun_batch(batch_size, rng=gen)


def pronoun_accuracy(logits: torch.Tensor, ids: torch.Tensor, targets: torch.Tensor) -> float:
    """Fraction of the pronouns (``he``, ``she``) whose prediction is their answer.

    Args:
        logits: ``(B, T, n_vocab)`` scores of a model on ``ids``.
        ids: ``(B, T)`` the words (from :func:`pronoun_batch`).
        targets: ``(B, T)`` the answers.

    Returns:
        A number in ``[0, 1]``; the other words are not counted.

    Raises:
        ValueError: shapes that do not fit, or no pronoun in ``ids``.

    Taught in: chapters/03_qkv.ipynb
    """
    if (
        logits.ndim != 3
        or tuple(ids.shape) != tuple(logits.shape[:2])
        or ids.shape != targets.shape
    ):
        raise ValueError(
            f"logits must be (B, T, n_vocab) and ids, targets (B, T), got logits "
            f"{tuple(logits.shape)}, ids {tuple(ids.shape)}, targets {tuple(targets.shape)}"
        )
    same_device(logits=logits, ids=ids, targets=targets)
    pronouns = ids <= _SHE  # (B, T): he and she
    if not bool(pronouns.any()):
        raise ValueError("ids hold no pronoun: nothing to score")
    right = logits.argmax(-1) == targets  # (B, T)
    return right[pronouns].double().mean().item()
