"""Toy sequence-to-sequence tasks, small enough to train on a CPU in seconds.

Three tasks, each a different test of what a sequence model can do:

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

Taught in: chapters/01_why_attention.ipynb (recall) and chapters/07_transformer.ipynb
"""

from __future__ import annotations

import string
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import torch

__all__ = [
    "BOS_ID",
    "EOS_ID",
    "N_SPECIAL",
    "PAD_ID",
    "SEP_ID",
    "TASKS",
    "Batch",
    "Task",
    "batches",
    "make_batch",
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
            n = getattr(self, field)
            if not isinstance(n, int) or isinstance(n, bool) or n < 1:
                raise ValueError(f"{field} must be a positive integer, got {n!r}")
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
    if rng is None or (isinstance(rng, int) and not isinstance(rng, bool)):
        return np.random.default_rng(rng)
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
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
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


def batches(task: Task, batch_size: int, *, rng: Any = None, device: Any = None) -> Iterator[Batch]:
    """An endless stream of fresh batches of ``task`` (see :func:`make_batch`).

    With an int seed the stream is the same every time; pass it to
    :func:`attnlab.train.train`. Every batch is new data, so the training loss is also an
    estimate of the loss on unseen examples.

    Taught in: chapters/07_transformer.ipynb
    """
    gen = _as_rng(rng)
    while True:
        yield make_batch(task, batch_size, rng=gen, device=device)


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
