"""Heads that specialise: hand-set heads for two relations, and a tiny model that learns them.

Chapter 4 needs two relations that one token must use at the same time: the **first**
token of the sequence (think: the subject of the sentence) and the **previous** token.

- :func:`handset_heads` builds, by hand, the queries and keys of two heads that each follow
  one relation exactly, from one-hot position features.
- :func:`first_and_previous_batch` makes the task: at every position ``t >= 1`` the model
  must name the pair (first token, previous token), one answer out of ``n_symbols²``.
- :class:`OneLayerMultiHead` is the smallest model that can solve it: token and position
  embeddings, one causal :class:`~attnlab.mechanism.multihead.MultiHeadAttention` layer with a
  residual connection, and a linear read-out. :func:`train_heads_model` trains it
  deterministically in about a second (one CPU thread) with :func:`attnlab.tasks.loop.train`.
- :func:`head_roles` measures, for every head, how much weight it puts on the previous
  token and on the first token: the two numbers that say which head does what.

Taught in: chapters/04_multihead.ipynb
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from .._validate import check_device, check_int, positive_int, to_numpy
from ..data_files import StoredTable
from ..mechanism.masking import causal_mask
from ..mechanism.multihead import MultiHeadAttention
from .loop import train

__all__ = [
    "HEAD_SEEDS",
    "IGNORE",
    "OneLayerMultiHead",
    "accuracy_without_heads",
    "decode_pair",
    "first_and_previous_batch",
    "first_and_previous_batches",
    "handset_heads",
    "head_roles",
    "roles_over_seeds",
    "stored_head_roles",
    "train_heads_model",
    "write_head_roles",
]

IGNORE = 0
"""Target id of the positions left out of the loss (position 0 has no previous token)."""


def handset_heads(length: int, subject: int, *, sharpness: float = 8.0) -> tuple[Any, Any]:
    """Queries and keys of two hand-set heads: "find the subject" and "find the previous token".

    Token ``j`` is described by ``length + 1`` features: a one-hot code of its position and a
    flag that is 1 for the subject. Head 0 (subject): every query is ``s·e_flag`` and every
    key is its token's flag, so the score is ``s`` for the subject and 0 elsewhere. Head 1
    (previous): query ``t`` is ``s·onehot(t)`` and key ``j`` is ``onehot(j + 1)``, so the score
    is ``s`` exactly when ``j = t - 1`` (query 0, which has no previous token, matches
    itself). ``s = sharpness · √d`` cancels the ``1/√d`` of attention, so each row's winning
    score is ``sharpness`` above the others after scaling.

    Args:
        length: number of tokens ``T``.
        subject: position of the subject, ``0 <= subject < T``.
        sharpness: the scaled score of the winning key (the others score 0).

    Returns:
        ``(q, k)``: NumPy arrays of shape ``(2, T, d)`` with ``d = T + 1``, head 0 first.
        Concatenating the two heads along the last axis gives one head of size ``2d``
        whose scores are the *sum* of both relations' scores.

    Raises:
        ValueError: ``length`` < 2 or ``subject`` outside ``0 .. length - 1``.

    Taught in: chapters/04_multihead.ipynb
    """
    length = check_int(length, "length", low=2)
    subject = check_int(
        subject, "subject", low=0, high=length - 1, expected=f"a position in 0..{length - 1}"
    )
    T, d = length, length + 1
    s = sharpness * math.sqrt(d)
    q = np.zeros((2, T, d))
    k = np.zeros((2, T, d))
    q[0, :, T] = s  # every query asks for the subject flag
    k[0, subject, T] = 1.0  # only the subject has it
    q[1, np.arange(T), np.arange(T)] = s  # query t: "I am at t"
    k[1, np.arange(T - 1), np.arange(1, T)] = 1.0  # key j: "I am just before j + 1"
    k[1, 0, 0] = 1.0  # query 0 has no previous token: it matches itself
    return q, k


def first_and_previous_batch(
    batch_size: int, *, n_symbols: int = 8, length: int = 8, rng: Any = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """One batch of the task "name the first token and the previous token".

    Inputs are random symbols ``0 .. n_symbols - 1``. At position ``t >= 1`` the target is
    the pair ``(x[0], x[t - 1])`` coded as one class ``1 + x[0]·n_symbols + x[t - 1]``
    (:func:`decode_pair` undoes it); position 0 has no previous token and gets
    :data:`IGNORE`, which the loss leaves out.

    Args:
        batch_size: number of sequences ``B``.
        n_symbols: alphabet size ``n``; there are ``n²`` possible answers.
        length: sequence length ``T`` (at least 2).
        rng: a ``numpy.random.Generator`` or a seed (default: fresh randomness).

    Returns:
        ``(inputs, targets)``: two ``(B, T)`` LongTensors.

    Raises:
        ValueError: a size that is not a positive integer, or ``length`` < 2.

    Taught in: chapters/04_multihead.ipynb
    """
    batch_size = positive_int(batch_size, "batch_size")
    n_symbols = positive_int(n_symbols, "n_symbols")
    length = positive_int(length, "length")
    if length < 2:
        raise ValueError(f"length must be at least 2 (a first and a previous token), got {length}")
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    x = rng.integers(0, n_symbols, size=(batch_size, length))  # (B, T)
    y = 1 + x[:, :1] * n_symbols + np.roll(x, 1, axis=1)  # (B, 1) + (B, T) -> (B, T)
    y[:, 0] = IGNORE
    return torch.from_numpy(x), torch.from_numpy(y)


def first_and_previous_batches(
    batch_size: int, *, n_symbols: int = 8, length: int = 8, rng: Any = None
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """An endless stream of :func:`first_and_previous_batch` batches from one generator.

    Taught in: chapters/04_multihead.ipynb
    """
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    while True:
        yield first_and_previous_batch(batch_size, n_symbols=n_symbols, length=length, rng=rng)


def decode_pair(target: Any, n_symbols: int = 8) -> tuple[Any, Any]:
    """Split class ids of :func:`first_and_previous_batch` into ``(first, previous)``.

    Taught in: chapters/04_multihead.ipynb
    """
    return (target - 1) // n_symbols, (target - 1) % n_symbols


class OneLayerMultiHead(nn.Module):
    """Embeddings, one causal multi-head attention layer with a residual, a linear read-out.

    ``h = E[x] + P``; ``logits = W_out (h + MultiHeadAttention(h))``. There is no
    feed-forward network and no LayerNorm, so whatever the read-out knows about other
    positions came through the attention heads. After each forward pass ``weights`` holds
    the detached ``(B, H, T, T)`` attention weights.

    Args:
        n_symbols: input alphabet size ``n`` (the read-out has ``n² + 1`` classes).
        length: the longest sequence ``T`` (learned position embeddings).
        d_model: width ``D``.
        n_heads: heads ``H``; must divide ``D``.

    Shapes:
        ``forward(x (B, T))`` -> logits ``(B, T, n² + 1)``.

    Taught in: chapters/04_multihead.ipynb
    """

    def __init__(self, n_symbols: int, length: int, d_model: int, n_heads: int) -> None:
        super().__init__()
        self.n_symbols, self.length = n_symbols, length
        self.embed = nn.Embedding(n_symbols, d_model)
        self.position = nn.Parameter(0.5 * torch.randn(length, d_model))
        self.attn = MultiHeadAttention(d_model, n_heads)
        self.readout = nn.Linear(d_model, n_symbols * n_symbols + 1)
        self.weights: torch.Tensor | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_device(x, self, who="OneLayerMultiHead")
        T = x.shape[1]
        if T > self.length:
            raise ValueError(f"sequence length {T} is longer than length={self.length}")
        h = self.embed(x) + self.position[:T]  # (B, T, D) + (T, D) -> (B, T, D)
        out, weights = self.attn(h, mask=causal_mask(T, like=x))  # (B, T, D), (B, H, T, T)
        self.weights = weights.detach()
        return self.readout(h + out)  # (B, T, D) -> (B, T, n² + 1)


def train_heads_model(
    n_heads: int,
    *,
    d_model: int = 16,
    n_symbols: int = 8,
    length: int = 8,
    steps: int = 300,
    batch_size: int = 32,
    lr: float = 1e-2,
    seed: int = 0,
) -> tuple[OneLayerMultiHead, list[float]]:
    """Train a :class:`OneLayerMultiHead` on "first and previous", deterministically.

    Seeds torch and NumPy with ``seed`` and runs on one CPU thread (restored afterwards), so
    the same call gives the same weights on every machine; about a second of CPU time with
    the defaults. Adam with 20 warm-up steps and a cosine decay (:func:`attnlab.tasks.loop.train`).

    Args:
        n_heads: heads ``H`` (must divide ``d_model``).
        d_model, n_symbols, length: model and task sizes.
        steps, batch_size, lr: training budget.
        seed: seed of the initial weights and of the training batches.

    Returns:
        ``(model, losses)``: the trained model (in eval mode, on the CPU) and the loss of
        every step.

    Taught in: chapters/04_multihead.ipynb
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(seed)
        model = OneLayerMultiHead(n_symbols, length, d_model, n_heads)
        data = first_and_previous_batches(
            batch_size, n_symbols=n_symbols, length=length, rng=np.random.default_rng(seed)
        )
        losses = train(model, data, steps=steps, lr=lr, warmup=20, pad_id=IGNORE, progress=False)
    finally:
        torch.set_num_threads(threads)
    return model.eval(), losses


@torch.no_grad()
def head_roles(model: OneLayerMultiHead, inputs: torch.Tensor) -> dict[str, Any]:
    """How each head of ``model`` splits its attention, and how often the model is right.

    Runs ``model`` on ``inputs`` and averages, over the batch and over query positions
    ``t >= 2`` (where the first and the previous token are different positions), the
    weight each head puts on key ``t - 1`` and on key 0.

    Args:
        model: a trained :class:`OneLayerMultiHead`.
        inputs: ``(B, T)`` symbols, e.g. from :func:`first_and_previous_batch`.

    Returns:
        ``{"previous": (H,), "first": (H,), "accuracy": float}``: NumPy weight averages per
        head, and the fraction of positions ``t >= 1`` where the predicted pair is right.

    Taught in: chapters/04_multihead.ipynb
    """
    logits = model(inputs)  # (B, T, n² + 1)
    weights = model.weights  # (B, H, T, T)
    T = inputs.shape[1]
    rows = torch.arange(2, T, device=weights.device)
    previous = weights[:, :, rows, rows - 1].mean(dim=(0, 2))  # (H,)
    first_w = weights[:, :, rows, 0].mean(dim=(0, 2))  # (H,)
    return {
        "previous": to_numpy(previous),
        "first": to_numpy(first_w),
        "accuracy": _accuracy(logits, inputs, model.n_symbols),
    }


def _accuracy(logits: torch.Tensor, inputs: torch.Tensor, n: int) -> float:
    """Fraction of positions ``t >= 1`` whose predicted pair (first, previous) is right."""
    targets = 1 + inputs[:, :1] * n + torch.roll(inputs, 1, dims=1)  # (B, 1) + (B, T) -> (B, T)
    right = logits.argmax(-1)[:, 1:] == targets[:, 1:]  # (B, T - 1)
    return right.float().mean().item()


@torch.no_grad()
def accuracy_without_heads(
    model: OneLayerMultiHead, inputs: torch.Tensor, removed: Sequence[int]
) -> float:
    """The accuracy of ``model`` when the heads ``removed`` contribute nothing.

    Head ``h``'s answer reaches the output only through its block of ``W^O``, the rows
    ``h d .. (h+1) d - 1`` that multiply its ``d`` features of the concatenation
    (``Concat(...) W^O = sum_h head_h W^O_h``). Zeroing that block removes the head and
    nothing else; the other heads, the residual path and the read-out are untouched. The
    model itself is left as it was (a copy is changed).

    Args:
        model: a trained :class:`OneLayerMultiHead`.
        inputs: ``(B, T)`` symbols, e.g. from :func:`first_and_previous_batch`.
        removed: the heads to remove, numbered from 0 (may be empty).

    Returns:
        The fraction of positions ``t >= 1`` where the predicted pair is right, as
        :func:`head_roles` counts it.

    Raises:
        ValueError: a head number outside ``0 .. H - 1``.

    Taught in: chapters/04_multihead.ipynb
    """
    H, d = model.attn.n_heads, model.attn.d_head
    removed = [check_int(h, "head", low=0, high=H - 1) for h in removed]
    pruned = copy.deepcopy(model)
    for h in removed:
        # nn.Linear stores W^O transposed, (out, in): head h's rows of W^O are these columns
        pruned.attn.W_o.weight[:, h * d : (h + 1) * d] = 0
    return _accuracy(pruned(inputs), inputs, model.n_symbols)


# --- the spread over seeds -------------------------------------------------------------------

HEAD_SEEDS: dict[str, Any] = {
    "n_heads": [1, 2, 4],
    "seeds": list(range(10)),
    "d_model": 16,
    "test_size": 1000,
    "test_rng": 1,
}
"""The arguments of the :func:`roles_over_seeds` call whose results :func:`stored_head_roles`
returns: :func:`train_heads_model` with its defaults for each head count and seed, measured
on the chapter's test batch (``first_and_previous_batch(1000, rng=1)``)."""

_ROLES = StoredTable(
    "head_roles.txt",
    "head roles",
    HEAD_SEEDS,
    "HEAD_SEEDS",
    "write_head_roles",
    comments=(
        "# attnlab.tasks.heads.roles_over_seeds(**settings): for each head count H and seed, the",
        "# accuracy, then each head's mean weight on the previous token, then on the first.",
        "# Written by attnlab.tasks.heads.write_head_roles(); tests/test_heads.py checks it.",
    ),
)


def roles_over_seeds(
    n_heads: Sequence[int],
    seeds: Sequence[int],
    *,
    d_model: int = 16,
    test_size: int = 1000,
    test_rng: int = 1,
) -> dict[int, dict[int, dict[str, Any]]]:
    """:func:`head_roles` of a model trained with each head count and each seed.

    Which head takes which relation, and whether the heads divide the work at all, depends
    on the initial weights and the batches: one seed shows one outcome. Training the same
    model with several seeds shows which outcomes are typical.

    Args:
        n_heads: head counts to train.
        seeds: seeds for :func:`train_heads_model`.
        d_model: the model width.
        test_size, test_rng: the test batch, ``first_and_previous_batch(test_size,
            rng=test_rng)``.

    Returns:
        ``{H: {seed: head_roles(...)}}``, each with ``"previous"`` and ``"first"`` as
        ``(H,)`` NumPy arrays and ``"accuracy"``.

    Taught in: chapters/04_multihead.ipynb
    """
    test_x, _ = first_and_previous_batch(test_size, rng=test_rng)
    return {
        H: {
            seed: head_roles(train_heads_model(H, d_model=d_model, seed=seed)[0], test_x)
            for seed in seeds
        }
        for H in n_heads
    }


def write_head_roles(path: str | Path | None = None) -> dict[int, dict[int, dict[str, Any]]]:
    """Run ``roles_over_seeds(**HEAD_SEEDS)`` and store it as a text table.

    Trains 30 small models (about half a minute on one thread). Run it after changing
    :data:`HEAD_SEEDS` or the training: ``python -c "import attnlab.tasks.heads as h;
    h.write_head_roles()"``.

    Args:
        path: where to write (default: the package's data file ``head_roles.txt``, which
            :func:`stored_head_roles` reads).

    Returns:
        What :func:`roles_over_seeds` returned.

    Taught in: chapters/04_multihead.ipynb
    """
    roles = roles_over_seeds(**HEAD_SEEDS)
    rows = []
    for H, by_seed in roles.items():
        for seed, r in by_seed.items():
            numbers = [r["accuracy"], *r["previous"].tolist(), *r["first"].tolist()]
            rows.append(f"{H} {seed} " + " ".join(repr(round(x, 6)) for x in numbers))
    _ROLES.write(path, rows)
    return roles


def stored_head_roles(path: str | Path | None = None) -> dict[int, dict[int, dict[str, Any]]]:
    """What ``roles_over_seeds(**HEAD_SEEDS)`` returned, read from the stored table.

    The numbers of the machine that wrote the table (rounded to 6 decimals), without the
    half minute of training; tests/test_heads.py trains some of them again.

    Args:
        path: a table written by :func:`write_head_roles` (default: the package's).

    Returns:
        ``{H: {seed: {"previous": (H,), "first": (H,), "accuracy": float}}}``.

    Raises:
        ValueError: the table was written for other settings than :data:`HEAD_SEEDS`
            (regenerate it with :func:`write_head_roles`), or is malformed.

    Taught in: chapters/04_multihead.ipynb
    """
    roles: dict[int, dict[int, dict[str, Any]]] = {H: {} for H in HEAD_SEEDS["n_heads"]}
    for line in _ROLES.rows(path):
        H, seed, *numbers = line.split()
        if int(H) not in roles or len(numbers) != 1 + 2 * int(H):
            raise ValueError(f"malformed row in the table of head roles: {line[:40]} ...")
        values = [float(x) for x in numbers]
        roles[int(H)][int(seed)] = {
            "accuracy": values[0],
            "previous": np.array(values[1 : 1 + int(H)]),
            "first": np.array(values[1 + int(H) :]),
        }
    if any(list(by_seed) != HEAD_SEEDS["seeds"] for by_seed in roles.values()):
        raise ValueError("the table of head roles does not hold every seed of HEAD_SEEDS")
    return roles
