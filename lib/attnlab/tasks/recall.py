r"""Long-range recall, trained: a recurrent network and one attention layer on the same task.

The task: read ``distance`` random symbols followed by a question mark, and answer with the
**first** symbol. The answer lies ``distance`` steps behind the question.

- :class:`RecurrentRecaller` reads the sequence one token at a time and answers from its
  last hidden state: the first symbol must survive ``distance`` updates of that state, and
  the gradient that teaches it to keep the symbol must travel back through all of them.
- :class:`AttentionRecaller` lets the last position look at every position directly
  (one query, learned positions): the path to the answer is one step long at any distance.

:func:`train_recall` trains one model with a seeded, single-threaded loop (the same numbers
on every run on one machine) and records its accuracy on a fixed test set; :func:`compare_recall` does it
for both models over a list of distances. Chapter 1 plots the result of one such sweep,
:data:`STORED_SWEEP`: training its 14 models takes longer than the chapter's run-time budget
allows, so the curves are stored with the package (:func:`stored_recall_curves`; regenerated
by :func:`write_recall_curves`; the tests check that :func:`compare_recall` still gives its
outcomes) and the chapter re-trains two of its distances live.

Taught in: chapters/01_why_attention.ipynb
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from .._validate import check_device, check_token_ids, describe, positive_int, positive_number
from ..data_files import StoredTable
from ..mechanism.attention import scaled_dot_product_attention

__all__ = [
    "SEED_SWEEP",
    "STORED_SWEEP",
    "AttentionRecaller",
    "RecallCurve",
    "RecurrentRecaller",
    "compare_recall",
    "question_id",
    "recall_batch",
    "recall_over_seeds",
    "same_outcome",
    "stored_recall_curves",
    "stored_recall_seeds",
    "train_recall",
    "write_recall_curves",
    "write_recall_seeds",
]

_CELLS = {"rnn": nn.RNN, "gru": nn.GRU, "lstm": nn.LSTM}


def recall_batch(
    batch_size: int,
    distance: int,
    *,
    n_symbols: int = 8,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Random recall examples: ``d`` symbols, then the question token; the answer is the first.

    .. math:: x = (x_0, x_1, \dots, x_{d-1}, \texttt{?}),\quad
              x_i \sim \mathcal{U}\{0, \dots, n-1\}, \qquad y = x_0

    The question token ``?`` has id ``n`` (:func:`question_id`), so a model's vocabulary
    has ``n + 1`` entries. It sits ``d`` positions after the answer.

    Args:
        batch_size: number of sequences ``B``.
        distance: ``d >= 1``, how far the question is from the symbol to recall.
        n_symbols: alphabet size ``n >= 2`` (chance accuracy is ``1 / n``).
        generator: a CPU ``torch.Generator`` (default: the global one).

    Returns:
        ``x``: ``(B, d + 1)`` int64 tokens (the last one ``n``), and ``y``: ``(B,)`` int64
        answers (``x[:, 0]``), on the CPU (move them to the model's device).

    Raises:
        ValueError: a size that is not a positive integer, or ``n_symbols < 2``.

    Taught in: chapters/01_why_attention.ipynb
    """
    positive_int(batch_size, "batch_size")
    positive_int(distance, "distance")
    if positive_int(n_symbols, "n_symbols") < 2:
        raise ValueError(f"n_symbols must be at least 2, got {n_symbols}")
    # drawn on the CPU (where the generator is), whatever torch's default device
    symbols = torch.randint(n_symbols, (batch_size, distance), generator=generator, device="cpu")
    question = torch.full((batch_size, 1), question_id(n_symbols), device="cpu")  # (B, 1)
    return torch.cat([symbols, question], dim=1), symbols[:, 0].clone()  # (B, d + 1), (B,)


def question_id(n_symbols: int) -> int:
    """Token id of the question mark in a recall task with ``n_symbols`` symbols: ``n_symbols``."""
    return n_symbols


def _check_tokens(
    x: object, model: nn.Module, n_symbols: int, max_len: int | None = None
) -> torch.Tensor:
    if not isinstance(x, torch.Tensor) or x.dtype != torch.long or x.ndim != 2 or not x.numel():
        raise TypeError(
            f"expected int64 tokens of shape (batch, length >= 1), got {describe(x)}"
            + (f", {x.dtype}" if isinstance(x, torch.Tensor) else "")
        )
    check_device(x, model, who=type(model).__name__)
    check_token_ids(
        x, n_symbols + 1, name="tokens", what=f"the task ({n_symbols} symbols, 1 question)"
    )
    if max_len is not None and x.shape[1] > max_len:
        raise ValueError(f"sequences longer than max_len={max_len}: got {describe(x)}")
    return x


class RecurrentRecaller(nn.Module):
    r"""Embed, run a recurrent network over the tokens, answer from the last hidden state.

    .. math:: h_t = \mathrm{cell}(E[x_t], h_{t-1}), \qquad
              \text{logits} = h_T W_{out}^\top + b_{out}

    Args:
        n_symbols: alphabet size ``n`` (answers; the inputs add the question token ``n``).
        hidden: size ``H`` of the embedding and of the hidden state.
        cell: ``"rnn"`` (``torch.nn.RNN``, tanh: the vanilla RNN of chapter 1),
            ``"gru"`` or ``"lstm"``.

    Shapes:
        ``x``: ``(B, T)`` int64 tokens -> logits ``(B, n_symbols)``.

    Taught in: chapters/01_why_attention.ipynb
    """

    def __init__(self, n_symbols: int, hidden: int = 16, cell: str = "rnn") -> None:
        super().__init__()
        positive_int(n_symbols, "n_symbols")
        positive_int(hidden, "hidden")
        if cell not in _CELLS:
            raise ValueError(f"cell must be one of {sorted(_CELLS)}, got {cell!r}")
        self.n_symbols, self.cell = n_symbols, cell
        self.embed = nn.Embedding(n_symbols + 1, hidden)  # the symbols and the question
        self.rnn = _CELLS[cell](hidden, hidden, batch_first=True)
        self.readout = nn.Linear(hidden, n_symbols)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = _check_tokens(x, self, self.n_symbols)
        states = self.rnn(self.embed(x))[0]  # (B, T) -> (B, T, H) -> (B, T, H)
        return self.readout(states[:, -1])  # (B, H) -> (B, n_symbols)


class AttentionRecaller(nn.Module):
    r"""One attention layer: the question (last position) queries every position, then answers.

    .. math:: h_t = E[x_t] + P_t,\quad q = h_T W_q,\ k_t = h_t W_k,\ v_t = h_t W_v,\quad
              \text{logits} = \Big(\sum_t \mathrm{softmax}_t\big(q k_t^\top/\sqrt{d}\big)\,
              v_t\Big) W_{out}^\top + b_{out}

    ``P`` is a learned position embedding: without it every position would look alike and
    "the first token" could not be found. Only the last position (the question token) forms
    a query, because only its answer is scored.

    Args:
        n_symbols: alphabet size ``n`` (answers; the inputs add the question token ``n``).
        hidden: size ``D`` of embeddings, queries, keys and values.
        max_len: longest sequence the position table covers.

    Shapes:
        ``x``: ``(B, T)`` int64 tokens, ``T <= max_len`` -> logits ``(B, n_symbols)``.
        :meth:`weights` returns the attention weights ``(B, T)`` of the last position.

    Taught in: chapters/01_why_attention.ipynb
    """

    def __init__(self, n_symbols: int, hidden: int = 16, max_len: int = 128) -> None:
        super().__init__()
        positive_int(n_symbols, "n_symbols")
        positive_int(hidden, "hidden")
        self.n_symbols, self.max_len = n_symbols, positive_int(max_len, "max_len")
        self.embed = nn.Embedding(n_symbols + 1, hidden)  # the symbols and the question
        self.position = nn.Embedding(max_len, hidden)
        self.W_q = nn.Linear(hidden, hidden, bias=False)
        self.W_k = nn.Linear(hidden, hidden, bias=False)
        self.W_v = nn.Linear(hidden, hidden, bias=False)
        self.readout = nn.Linear(hidden, n_symbols)

    def _attend(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = _check_tokens(x, self, self.n_symbols, self.max_len)
        positions = torch.arange(x.shape[1], device=x.device)  # (T,)
        h = self.embed(x) + self.position(positions)  # (B, T, D) + (T, D) -> (B, T, D)
        q = self.W_q(h[:, -1:])  # (B, 1, D): one query, from the last position
        out, weights = scaled_dot_product_attention(q, self.W_k(h), self.W_v(h))
        return out[:, 0], weights[:, 0]  # (B, 1, D) -> (B, D); (B, 1, T) -> (B, T)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.readout(self._attend(x)[0])  # (B, D) -> (B, n_symbols)

    def weights(self, x: torch.Tensor) -> torch.Tensor:
        """Attention weights ``(B, T)`` of the last position over all positions."""
        return self._attend(x)[1]


@dataclass(frozen=True)
class RecallCurve:
    """Test accuracy of one model during training on one distance.

    Attributes:
        model: ``"rnn"``, ``"gru"``, ``"lstm"`` or ``"attention"``.
        distance: the recall distance ``d``.
        steps: the training steps after which accuracy was measured (step 0 = untrained).
        accuracy: fraction of the fixed test set answered correctly, at each of ``steps``.
    """

    model: str
    distance: int
    steps: tuple[int, ...]
    accuracy: tuple[float, ...]

    @property
    def final(self) -> float:
        """Accuracy after the last training step."""
        return self.accuracy[-1]

    def steps_to(self, level: float = 0.9) -> int | None:
        """First measured step with accuracy ``>= level``; ``None`` if never reached."""
        if not 0 < level <= 1:
            raise ValueError(f"level must be in (0, 1], got {level!r}")
        return next((s for s, a in zip(self.steps, self.accuracy, strict=True) if a >= level), None)


def _model_name(model: nn.Module) -> str:
    if isinstance(model, RecurrentRecaller):
        return model.cell
    if isinstance(model, AttentionRecaller):
        return "attention"
    raise TypeError(
        f"expected a RecurrentRecaller or an AttentionRecaller, got {type(model).__name__}"
    )


def train_recall(
    model: nn.Module,
    distance: int,
    *,
    steps: int = 200,
    batch_size: int = 32,
    lr: float = 1e-2,
    eval_every: int = 10,
    n_eval: int = 256,
    seed: int = 0,
) -> RecallCurve:
    r"""Train ``model`` on recall at ``distance`` with Adam; measure test accuracy as it learns.

    Minimises the cross-entropy of the answer,
    :math:`-\log \mathrm{softmax}(\text{logits})_{y}`, on fresh random batches. Accuracy is
    measured on one fixed test set of ``n_eval`` sequences before training and every
    ``eval_every`` steps. Everything is seeded from ``seed`` and runs on one CPU thread
    (restored afterwards), so the same call returns the same curve on every run on one
    machine (another CPU may round differently and shift a curve by a grading or two); the
    global random state is left untouched.

    Args:
        model: a :class:`RecurrentRecaller` or :class:`AttentionRecaller` (trained in place).
        distance: ``d``, tokens between the symbol and the question.
        steps: number of optimisation steps.
        batch_size: sequences per step.
        lr: Adam's learning rate.
        eval_every: measure accuracy every this many steps.
        n_eval: size of the test set.
        seed: seeds the training batches (the test set uses ``seed + 1``).

    Returns:
        A :class:`RecallCurve` with ``steps // eval_every + 1`` measurements.

    Raises:
        TypeError: ``model`` is neither recaller.
        ValueError: a count that is not a positive integer, or ``lr <= 0``.

    Taught in: chapters/01_why_attention.ipynb
    """
    name = _model_name(model)
    for label, n in (
        ("distance", distance),
        ("steps", steps),
        ("batch_size", batch_size),
        ("eval_every", eval_every),
        ("n_eval", n_eval),
    ):
        positive_int(n, label)
    lr = positive_number(lr, "lr")
    device = next(model.parameters()).device
    n_symbols = model.n_symbols
    make = torch.Generator().manual_seed
    x_test, y_test = recall_batch(n_eval, distance, n_symbols=n_symbols, generator=make(seed + 1))
    x_test, y_test = x_test.to(device), y_test.to(device)
    data = make(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    def accuracy() -> float:
        model.eval()
        with torch.no_grad():
            correct = model(x_test).argmax(-1) == y_test  # (n_eval,)
        model.train()
        return round(correct.double().mean().item(), 6)

    previous_threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one thread: the same float sums, hence the same curve
    try:
        measured, curve = [0], [accuracy()]
        for step in range(1, steps + 1):
            x, y = recall_batch(batch_size, distance, n_symbols=n_symbols, generator=data)
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if step % eval_every == 0:
                measured.append(step)
                curve.append(accuracy())
    finally:
        torch.set_num_threads(previous_threads)
    return RecallCurve(name, distance, tuple(measured), tuple(curve))


def compare_recall(
    distances: Sequence[int],
    *,
    models: Sequence[str] = ("rnn", "attention"),
    n_symbols: int = 8,
    hidden: int = 16,
    seed: int = 0,
    **train_kwargs: object,
) -> dict[str, list[RecallCurve]]:
    """Train a fresh model of each kind at each distance: the same data, the same budget.

    Each model is initialised from ``torch.manual_seed(seed)`` inside a forked random state
    (the global one is untouched) and trained by :func:`train_recall` with ``seed`` and
    ``train_kwargs`` (``steps``, ``batch_size``, ``lr``, ...).

    Args:
        distances: the recall distances to try.
        models: kinds to compare: ``"attention"`` and any of ``"rnn"``, ``"gru"``,
            ``"lstm"``.
        n_symbols: alphabet size.
        hidden: width of every model.
        seed: seeds initial weights, training batches and test set.

    Returns:
        ``{kind: [RecallCurve per distance, in order]}``.

    Raises:
        ValueError: no distances, or an unknown model kind.

    Taught in: chapters/01_why_attention.ipynb
    """
    distances = list(distances)
    if not distances:
        raise ValueError("distances must not be empty")
    for kind in models:
        if kind != "attention" and kind not in _CELLS:
            raise ValueError(f"unknown model {kind!r}: use 'attention' or one of {sorted(_CELLS)}")
    results: dict[str, list[RecallCurve]] = {kind: [] for kind in models}
    for kind in models:
        for distance in distances:
            positive_int(distance, "distance")
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(seed)
                if kind == "attention":
                    model: nn.Module = AttentionRecaller(
                        n_symbols, hidden, max_len=max(128, max(distances) + 1)
                    )
                else:
                    model = RecurrentRecaller(n_symbols, hidden, kind)
            results[kind].append(train_recall(model, distance, seed=seed, **train_kwargs))
    return results


LEARNED = 0.9
"""The accuracy at which a recall model counts as having learned the task."""
CHANCE_AT_MOST = 0.2
"""The highest final accuracy that counts as "near chance" (chance is 1/8 = 0.125)."""
STEP_MARGIN = 20
"""How many training steps (two measurements) a retrained curve may reach 90% away from the
stored one and still tell the same story."""


def same_outcome(fresh: RecallCurve, stored: RecallCurve) -> bool:
    """Whether a retrained curve tells the stored curve's story: the outcome, not the digits.

    The training is seeded and single-threaded, so one machine repeats it exactly; another
    CPU's SIMD kernels or another PyTorch round differently, a score can cross a threshold
    one measurement earlier or later, and a curve can shift by a grading or two. So two
    curves of one model and distance agree when both end at :data:`LEARNED` (90%) or above
    and first reached it within :data:`STEP_MARGIN` steps of each other, or when both end
    below :data:`CHANCE_AT_MOST`. A training that is slower or faster by a learning rate off
    by ten misses those margins.

    Args:
        fresh: a curve just trained.
        stored: the stored curve of the same model and distance.

    Returns:
        ``True`` when the two tell the same story.

    Raises:
        ValueError: the curves are of different models, distances or measured steps.

    Taught in: chapters/01_why_attention.ipynb
    """
    if (fresh.model, fresh.distance, fresh.steps) != (stored.model, stored.distance, stored.steps):
        raise ValueError(
            f"compare curves of one model, distance and schedule: {fresh.model} at "
            f"{fresh.distance} against {stored.model} at {stored.distance}"
        )
    if (fresh.final >= LEARNED) != (stored.final >= LEARNED):
        return False
    if stored.final >= LEARNED:  # both learned: about as fast?
        return abs(fresh.steps_to(LEARNED) - stored.steps_to(LEARNED)) <= STEP_MARGIN
    return max(fresh.final, stored.final) < CHANCE_AT_MOST  # neither: both near chance?


# --- the stored sweep of chapter 1 -----------------------------------------------------------

STORED_SWEEP: dict[str, object] = {
    "distances": [1, 2, 4, 8, 16, 32, 64],
    "models": ["rnn", "attention"],
    "n_symbols": 8,
    "hidden": 16,
    "seed": 0,
    "steps": 150,
    "batch_size": 32,
    "lr": 0.01,
    "eval_every": 10,
    "n_eval": 256,
}
"""The arguments of the :func:`compare_recall` call whose curves :func:`stored_recall_curves`
returns: every argument spelled out, defaults included."""

_CURVES = StoredTable(
    "recall_curves.txt",
    "recall curves",
    STORED_SWEEP,
    "STORED_SWEEP",
    "write_recall_curves",
    comments=(
        "# Test accuracy of attnlab.tasks.recall.compare_recall(**settings) during training: one",
        "# row per model and distance, one column per measured step. Written by",
        "# attnlab.tasks.recall.write_recall_curves(); tests/test_recall.py checks it.",
    ),
)


def write_recall_curves(path: str | Path | None = None) -> dict[str, list[RecallCurve]]:
    """Run ``compare_recall(**STORED_SWEEP)`` and store the curves as a text table.

    Takes several seconds (14 models trained on one thread). Run it after changing
    :data:`STORED_SWEEP` or the training code:
    ``python -c "import attnlab.tasks.recall as r; r.write_recall_curves()"``.

    Args:
        path: where to write (default: the package's own data file, ``recall_curves.txt``
            in ``attnlab/data_files``, which :func:`stored_recall_curves` reads).

    Returns:
        The curves written, as :func:`compare_recall` returns them.

    Taught in: chapters/01_why_attention.ipynb
    """
    curves = compare_recall(**STORED_SWEEP)  # type: ignore[arg-type]
    steps = next(iter(curves.values()))[0].steps
    rows = ["steps " + " ".join(str(s) for s in steps)]
    for kind, row in curves.items():
        for curve in row:
            rows.append(f"{kind} {curve.distance} " + " ".join(repr(a) for a in curve.accuracy))
    _CURVES.write(path, rows)
    return curves


def stored_recall_curves(path: str | Path | None = None) -> dict[str, list[RecallCurve]]:
    """The curves of ``compare_recall(**STORED_SWEEP)``, read from the stored table.

    The :class:`RecallCurve` objects a fresh :func:`compare_recall` call returned on the
    machine that wrote the table, without the training time. Elsewhere the training rounds
    differently and a curve may move by a grading or two; tests/test_recall.py checks that
    the outcomes hold: the same models learn, and reach 90% within two gradings of the
    stored step.

    Args:
        path: a table written by :func:`write_recall_curves` (default: the package's).

    Returns:
        ``{kind: [RecallCurve per distance of STORED_SWEEP, in order]}``.

    Raises:
        ValueError: the table was written for other settings than :data:`STORED_SWEEP`
            (regenerate it with :func:`write_recall_curves`), or is malformed.

    Taught in: chapters/01_why_attention.ipynb
    """
    rows = [line.split() for line in _CURVES.rows(path)]
    if not rows or rows[0][0] != "steps":
        raise ValueError("a recall table starts with a settings line and a steps line")
    steps = tuple(int(s) for s in rows[0][1:])
    kinds: list[str] = STORED_SWEEP["models"]  # type: ignore[assignment]
    curves: dict[str, list[RecallCurve]] = {kind: [] for kind in kinds}
    for kind, distance, *values in rows[1:]:
        if kind not in curves or len(values) != len(steps):
            raise ValueError(f"malformed row in the recall table: {kind} {distance} ...")
        curves[kind].append(
            RecallCurve(kind, int(distance), steps, tuple(float(a) for a in values))
        )
    if any([c.distance for c in row] != STORED_SWEEP["distances"] for row in curves.values()):
        raise ValueError("the recall table does not hold every distance of STORED_SWEEP")
    return curves


# --- the spread over seeds -------------------------------------------------------------------

SEED_SWEEP: dict[str, object] = {
    "distances": [1, 2, 4, 8, 16, 32, 64],
    "models": ["rnn", "attention"],
    "seeds": list(range(10)),
    "n_symbols": 8,
    "hidden": 16,
    "steps": 150,
    "batch_size": 32,
    "lr": 0.01,
    "eval_every": 10,
    "n_eval": 256,
}
"""The arguments of the :func:`recall_over_seeds` call whose results
:func:`stored_recall_seeds` returns: :data:`STORED_SWEEP` trained again with ten seeds
(seed 0 is :data:`STORED_SWEEP` itself)."""

_SEEDS = StoredTable(
    "recall_seeds.txt",
    "recall seeds",
    SEED_SWEEP,
    "SEED_SWEEP",
    "write_recall_seeds",
    comments=(
        "# Final test accuracy of attnlab.tasks.recall.recall_over_seeds(**settings): one row per",
        "# model and distance, one column per seed. Written by",
        "# attnlab.tasks.recall.write_recall_seeds(); tests/test_recall.py checks it.",
    ),
)


def recall_over_seeds(
    seeds: Sequence[int],
    distances: Sequence[int],
    *,
    models: Sequence[str] = ("rnn", "attention"),
    **compare_kwargs: object,
) -> dict[str, dict[int, list[float]]]:
    """Final test accuracy of :func:`compare_recall` for every seed: how much one seed says.

    One seed's curves can sit on either side of a threshold by luck: the initial weights,
    the batches and the test set all come from the seed. Training the same sweep with
    several seeds shows which outcomes hold for every seed and which depend on it.

    Args:
        seeds: the seeds to train with (each seeds weights, batches and test set).
        distances: the recall distances.
        models: as for :func:`compare_recall`.
        compare_kwargs: the other arguments of :func:`compare_recall` (``steps``, ...).

    Returns:
        ``{kind: {distance: [final accuracy for each seed, in the order of seeds]}}``.

    Raises:
        ValueError: no seeds, or what :func:`compare_recall` refuses.

    Taught in: chapters/01_why_attention.ipynb
    """
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds must not be empty")
    distances = list(distances)
    finals: dict[str, dict[int, list[float]]] = {
        kind: {distance: [] for distance in distances} for kind in models
    }
    for seed in seeds:
        curves = compare_recall(distances, models=models, seed=seed, **compare_kwargs)  # type: ignore[arg-type]
        for kind in models:
            for curve in curves[kind]:
                finals[kind][curve.distance].append(curve.final)
    return finals


def write_recall_seeds(path: str | Path | None = None) -> dict[str, dict[int, list[float]]]:
    """Run ``recall_over_seeds(**SEED_SWEEP)`` and store the final accuracies as a text table.

    Trains 140 models (about half a minute on one thread). Run it after changing
    :data:`SEED_SWEEP` or the training code:
    ``python -c "import attnlab.tasks.recall as r; r.write_recall_seeds()"``.

    Args:
        path: where to write (default: the package's data file ``recall_seeds.txt``, which
            :func:`stored_recall_seeds` reads).

    Returns:
        The final accuracies written, as :func:`recall_over_seeds` returns them.

    Taught in: chapters/01_why_attention.ipynb
    """
    finals = recall_over_seeds(**SEED_SWEEP)  # type: ignore[arg-type]
    rows = [
        f"{kind} {distance} " + " ".join(repr(a) for a in values)
        for kind, by_distance in finals.items()
        for distance, values in by_distance.items()
    ]
    _SEEDS.write(path, rows)
    return finals


def stored_recall_seeds(path: str | Path | None = None) -> dict[str, dict[int, list[float]]]:
    """The final accuracies of ``recall_over_seeds(**SEED_SWEEP)``, read from the stored table.

    What :func:`recall_over_seeds` returned on the machine that wrote the table, without
    the half minute of training; tests/test_recall.py trains some of it again.

    Args:
        path: a table written by :func:`write_recall_seeds` (default: the package's).

    Returns:
        ``{kind: {distance: [final accuracy for each seed of SEED_SWEEP]}}``.

    Raises:
        ValueError: the table was written for other settings than :data:`SEED_SWEEP`
            (regenerate it with :func:`write_recall_seeds`), or is malformed.

    Taught in: chapters/01_why_attention.ipynb
    """
    kinds: list[str] = SEED_SWEEP["models"]  # type: ignore[assignment]
    distances: list[int] = SEED_SWEEP["distances"]  # type: ignore[assignment]
    n_seeds = len(SEED_SWEEP["seeds"])  # type: ignore[arg-type]
    finals: dict[str, dict[int, list[float]]] = {kind: {} for kind in kinds}
    for kind, distance, *values in (line.split() for line in _SEEDS.rows(path)):
        if kind not in finals or len(values) != n_seeds:
            raise ValueError(f"malformed row in the table of recall seeds: {kind} {distance} ...")
        finals[kind][int(distance)] = [float(a) for a in values]
    if any(list(row) != distances for row in finals.values()):
        raise ValueError("the table of recall seeds does not hold every distance of SEED_SWEEP")
    return finals
