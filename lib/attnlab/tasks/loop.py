"""The training loop: cross-entropy over the non-padding positions, Adam with a warm-up.

:func:`train` is the textbook loop (forward, cross-entropy, backward, clip, Adam step) with
the warm-up of Vaswani et al. (2017, section 5.3): the learning rate rises linearly for
``warmup`` steps, then decays (here along a cosine, by default to 10% of ``lr``)
(:func:`lr_at`). Padding positions are left out of the loss (:func:`sequence_loss`).
Any model that maps a batch's inputs to ``(B, T, n_vocab)`` logits trains with it:
chapter 4's heads model, chapter 7's transformers.

Taught in: chapters/04_multihead.ipynb and chapters/07_transformer.ipynb
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from tqdm.auto import tqdm

from .._validate import check_int, check_real, positive_int, positive_number, same_device
from .data import PAD_ID

__all__ = ["lr_at", "sequence_loss", "train"]


def sequence_loss(logits: torch.Tensor, targets: torch.Tensor, pad_id: int | None) -> torch.Tensor:
    r"""Mean cross-entropy over the non-padding positions.

    .. math:: \mathcal{L} = -\frac{1}{N}\sum_{(b, t):\, y_{bt} \ne \mathrm{PAD}} \log p_\theta(y_{bt} \mid \dots)

    Args:
        logits: ``(B, T, n_vocab)`` scores for every vocabulary entry.
        targets: ``(B, T)`` ids; positions equal to ``pad_id`` are ignored.
        pad_id: the padding id, or ``None`` to count every position.

    Returns:
        A scalar tensor.

    Raises:
        ValueError: if the shapes do not fit, or if every target equals ``pad_id``
            (nothing to average over: the loss would be NaN).

    Taught in: chapters/07_transformer.ipynb
    """
    if logits.ndim != 3 or targets.shape != logits.shape[:2]:
        raise ValueError(
            f"logits must be (B, T, n_vocab) and targets (B, T), got logits {tuple(logits.shape)} "
            f"and targets {tuple(targets.shape)}"
        )
    same_device(logits=logits, targets=targets)
    if pad_id is not None and bool((targets == pad_id).all()):
        raise ValueError(
            f"every target is padding (pad_id={pad_id}): the mean over zero real tokens "
            "would be NaN; check that the batch holds real tokens"
        )
    n_vocab = logits.shape[-1]
    return F.cross_entropy(
        logits.reshape(-1, n_vocab),  # (B, T, n_vocab) -> (B*T, n_vocab)
        targets.reshape(-1),  # (B, T) -> (B*T,)
        ignore_index=-100 if pad_id is None else pad_id,
    )


def lr_at(
    step: int,
    *,
    lr: float,
    steps: int,
    warmup: int,
    schedule: str = "cosine",
    decay_to: float = 0.1,
) -> float:
    r"""The learning rate at ``step`` (0-based): linear warm-up, then constant or cosine decay.

    Warm-up: ``lr · (step + 1) / warmup`` for ``step < warmup``. Then ``"constant"`` stays at
    ``lr``; ``"cosine"`` goes from ``lr`` down to ``decay_to · lr`` at the last step
    (``step = steps - 1``):

    .. math:: \eta_{step} = \eta \Big(f + (1 - f)\, \tfrac12 \big(1 + \cos \pi p\big)\Big),
              \qquad p = \frac{step - warmup}{steps - warmup - 1}

    where ``f = decay_to`` and ``p`` runs from 0 after the warm-up to 1 at the last step.

    Raises:
        ValueError: an unknown ``schedule``, or ``decay_to`` outside ``[0, 1]``.

    Taught in: chapters/07_transformer.ipynb
    """
    if schedule not in ("cosine", "constant"):
        raise ValueError(f"schedule must be 'cosine' or 'constant', got {schedule!r}")
    decay_to = check_real(decay_to, "decay_to", expected="in [0, 1]", ok=lambda f: 0 <= f <= 1)
    if step < warmup:
        return lr * (step + 1) / warmup
    if schedule == "constant":
        return lr
    progress = (step - warmup) / max(1, steps - warmup - 1)  # 0 after warm-up, 1 at the end
    return lr * (decay_to + (1 - decay_to) * 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress))))


def train(
    model: nn.Module,
    batches: Iterable[Any],
    *,
    steps: int,
    lr: float = 1e-3,
    warmup: int = 0,
    schedule: str = "cosine",
    decay_to: float = 0.1,
    clip_norm: float | None = 1.0,
    pad_id: int | None = PAD_ID,
    stop_when: Callable[[], bool] | None = None,
    check_every: int = 100,
    callback: Callable[[int], Any] | None = None,
    progress: bool = True,
) -> list[float]:
    """Train ``model`` with Adam on ``steps`` batches; return the loss of every step.

    Each batch is either ``(src, tgt_in, tgt_out)`` for an :class:`EncoderDecoder`
    (``loss = CE(model(src, tgt_in), tgt_out)``) or ``(inputs, targets)`` for a model that
    takes one tensor (a :class:`DecoderOnlyLM`: ``loss = CE(model(inputs), targets)``).
    Batches are moved to the model's device. Adam uses ``betas=(0.9, 0.98), eps=1e-9`` as
    in the paper; gradients are clipped to norm ``clip_norm``.

    Args:
        model: the model to train (put in train mode during the call, restored after).
        batches: an iterable of batches, e.g. :func:`attnlab.tasks.data.batches`.
        steps: the most optimisation steps.
        lr: peak learning rate.
        warmup: linear warm-up steps.
        schedule: ``"cosine"`` (decay to ``decay_to·lr`` at ``steps``) or ``"constant"``.
        decay_to: the fraction of ``lr`` the cosine ends at (see :func:`lr_at`).
        clip_norm: global gradient-norm clip, or ``None``.
        pad_id: target id left out of the loss (``None``: none).
        stop_when: optional callable checked every ``check_every`` steps (and after the
            last); training stops early when it returns ``True``, e.g.
            ``lambda: exact_match(model, task, 200) >= 0.99``.
        check_every: how often to call ``stop_when``.
        callback: optional ``callback(step)`` called before the first step (``step = 0``)
            and after every step with the number of steps done, in eval mode and without
            gradients, e.g. to record attention maps while the model learns.
        progress: show a ``tqdm`` progress bar (turn off in tests and scripts).

    Returns:
        The per-step training losses (``len`` is the number of steps taken).

    Raises:
        ValueError: non-positive ``steps``/``lr``, ``decay_to`` outside ``[0, 1]``, or a
            batch that is not a 2- or 3-tuple.

    Taught in: chapters/07_transformer.ipynb
    """
    steps = positive_int(steps, "steps")
    lr = positive_number(lr, "lr")
    warmup = check_int(warmup, "warmup", low=0)
    check_every = positive_int(check_every, "check_every")
    schedule_kw = {
        "lr": lr,
        "steps": steps,
        "warmup": warmup,
        "schedule": schedule,
        "decay_to": decay_to,
    }
    lr_at(0, **schedule_kw)  # validates `schedule` and `decay_to`
    device = next(model.parameters()).device
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-9)
    history: list[float] = []
    was_training = model.training
    model.train()
    bar = tqdm(total=steps, disable=not progress, desc="training", unit="step")
    try:
        _call_quietly(model, callback, 0)
        for step, batch in zip(range(steps), batches, strict=False):
            for group in optimizer.param_groups:
                group["lr"] = lr_at(step, **schedule_kw)
            *inputs, targets = (t.to(device) for t in _unpack(batch))
            logits = model(*inputs)  # (B, T, n_vocab)
            loss = sequence_loss(logits, targets, pad_id)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if clip_norm is not None:
                nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
            optimizer.step()
            history.append(loss.item())
            bar.update(1)
            bar.set_postfix(loss=f"{history[-1]:.4f}", refresh=False)
            _call_quietly(model, callback, step + 1)
            last = step + 1 == steps
            if stop_when is not None and ((step + 1) % check_every == 0 or last):
                model.eval()
                stop = stop_when()
                model.train()
                if stop:
                    break
    finally:
        bar.close()
        model.train(was_training)
    return history


def _call_quietly(model: nn.Module, callback: Callable[[int], Any] | None, step: int) -> None:
    if callback is None:
        return
    model.eval()
    with torch.no_grad():
        callback(step)
    model.train()


def _unpack(batch: Any) -> tuple[torch.Tensor, ...]:
    if not isinstance(batch, (tuple, list)) or len(batch) not in (2, 3):
        raise ValueError(
            "each batch must be (src, tgt_in, tgt_out) or (inputs, targets), got "
            f"{type(batch).__name__} of length {len(batch) if hasattr(batch, '__len__') else '?'}"
        )
    return tuple(batch)
