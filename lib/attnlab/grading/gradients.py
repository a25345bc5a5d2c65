"""Do gradients flow through the learner's torch code, and are they the right ones?

A torch exercise is written in torch so that gradients reach the weights. A function that
takes a detour through NumPy (``.numpy()``, ``np.tanh`` on a tensor, ``torch.tensor`` of a
result) gives the right numbers and no gradient; one that ``.detach()``-es a part gives
the right numbers and the wrong gradient. :func:`gradient_problem` runs a function and its
reference once more with inputs that require gradients, and compares the gradients of a
fixed random projection of every differentiable output with respect to every input.
:class:`Recorder` notes the calls that cut the graph, so the diagnosis can name the one the
learner used.

Taught in: every torch exercise (first in exercises/01_why_attention.ipynb)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch.overrides import TorchFunctionMode

from .specs import AnswerProblem, Case, fresh_copy
from .status import NO_GRADIENT, WRONG_GRADIENT

__all__ = ["Recorder", "cut_by", "gradient_problem", "require_gradient"]

_CUTS = {
    "numpy": "a round trip through NumPy (`.numpy()`, `np.asarray`, or a NumPy function on "
    "a tensor)",
    "__array__": "a round trip through NumPy (`.numpy()`, `np.asarray`, or a NumPy function "
    "on a tensor)",
    "detach": "`.detach()`",
    "item": "`.item()` (a plain Python number)",
    "tolist": "`.tolist()` (plain Python numbers)",
    "tensor": "`torch.tensor(...)` of a computed value (it copies the numbers, not the graph)",
}


class Recorder(TorchFunctionMode):
    """Notes, while active, the torch calls that cut the autograd graph.

    ``quiet``: a module of the grader's (a model handed to the learner's function) whose
    own cuts are not the learner's: the course's layers keep a detached copy of their
    attention weights, so the cuts made while one of its sub-modules runs are not noted
    (``torch.no_grad()`` around it still is).
    """

    def __init__(self, quiet: torch.nn.Module | None = None) -> None:
        super().__init__()
        self.cuts: list[str] = []
        self.no_grad = False
        self._quiet = quiet
        self._inside = 0
        self._hooks: list[Any] = []

    def _enter_module(self, *_: Any) -> None:
        self._inside += 1

    def _leave_module(self, *_: Any) -> None:
        self._inside -= 1

    def __enter__(self) -> Recorder:
        if self._quiet is not None:
            for module in self._quiet.modules():
                self._hooks.append(module.register_forward_pre_hook(self._enter_module))
                self._hooks.append(module.register_forward_hook(self._leave_module))
        return super().__enter__()

    def __exit__(self, *exc: Any) -> None:
        for hook in self._hooks:
            hook.remove()
        self._hooks.clear()
        return super().__exit__(*exc)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in _CUTS and _CUTS[name] not in self.cuts and not self._inside:
            self.cuts.append(_CUTS[name])
        if not torch.is_grad_enabled():
            self.no_grad = True
        return func(*args, **(kwargs or {}))


def cut_by(recorder: Recorder | None) -> str:
    """What cut the graph, in words, from what ``recorder`` saw."""
    if recorder is not None and recorder.cuts:
        return " or ".join(recorder.cuts[:2])
    if recorder is not None and recorder.no_grad:
        return "`torch.no_grad()` (nothing computed inside it is recorded for gradients)"
    return (
        "something that copies the numbers without the graph (`.data`, `.detach()`, a "
        "NumPy round trip, a new tensor filled from the values)"
    )


def require_gradient(value: torch.Tensor, name: str, recorder: Recorder | None = None) -> None:
    """Raise :class:`~.specs.AnswerProblem` when ``value`` carries no gradient.

    For graders' own code that backpropagates through the learner's result (a module's
    output), so that "does not require grad" is reported as the learner's problem, with
    its cause, not as an error of the grader.
    """
    if not value.requires_grad:
        raise AnswerProblem(
            NO_GRADIENT,
            f"no gradient flows from `{name}` back to the inputs and weights",
            f"`{name}` has the right numbers but carries no gradient: it was cut from the "
            f"computation by {cut_by(recorder)}; compute it with torch operations only",
        )


def _with_grad(args: Sequence[Any]) -> tuple[Any, ...]:
    made = []
    for a in args:
        a = fresh_copy(a)
        if isinstance(a, torch.Tensor) and a.is_floating_point():
            a.requires_grad_(True)
        made.append(a)
    return tuple(made)


def _items(value: Any, n: int) -> tuple[Any, ...]:
    if n == 1:
        return (value,)
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _projection(t: torch.Tensor) -> torch.Tensor:
    g = torch.Generator().manual_seed(1234 + t.numel())
    return torch.randn(t.shape, generator=g, dtype=t.dtype)


def _grads(outputs: Sequence[Any], keep: Sequence[int], inputs: Sequence[Any]) -> list[Any]:
    leaves = [a for a in inputs if isinstance(a, torch.Tensor) and a.requires_grad]
    loss = sum((outputs[k] * _projection(outputs[k])).sum() for k in keep)
    found = torch.autograd.grad(loss, leaves, allow_unused=True)
    return [torch.zeros_like(a) if g is None else g for a, g in zip(leaves, found, strict=True)]


def gradient_problem(
    fn: Callable[..., Any],
    reference: Callable[..., Any],
    cases: Sequence[Case],
    outputs: Sequence[str],
    rtol: float,
) -> tuple[str, str, str] | None:
    """``(status, message, diagnosis)`` when gradients do not flow as the reference's, else None.

    Only cases with a floating-point tensor input take part, and only the outputs that the
    reference makes differentiable; a reference with none (a measurement such as a
    gradient norm) is never compared.
    """
    for case in cases:
        ref_args = _with_grad(case.arguments())
        if not any(isinstance(a, torch.Tensor) and a.requires_grad for a in ref_args):
            continue
        with np.errstate(all="ignore"):
            expected = _items(reference(*ref_args, **case.options), len(outputs))
        keep = [
            k
            for k, e in enumerate(expected)
            if isinstance(e, torch.Tensor) and e.is_floating_point() and e.requires_grad
        ]
        if not keep:
            continue
        args = _with_grad(case.arguments())
        recorder = Recorder()
        try:
            with recorder, np.errstate(all="ignore"):
                got = _items(fn(*args, **case.options), len(outputs))
        except Exception as err:
            if "numpy" in str(err):
                return (
                    NO_GRADIENT,
                    f"with inputs that require gradients, your code raised "
                    f"{type(err).__name__}: {str(err).splitlines()[0]} (case {case.describe()})",
                    "your code goes through NumPy (`.numpy()`, or a NumPy function on a "
                    "tensor): the numbers come out right, but no gradient can flow back "
                    "through NumPy; compute with torch operations only",
                )
            return None  # an error only with gradients on: not this check's business
        for k in keep:
            item = got[k] if k < len(got) else None
            if not isinstance(item, torch.Tensor):
                return None
            if not item.requires_grad:
                name = outputs[k]
                return (
                    NO_GRADIENT,
                    f"no gradient flows from `{name}` back to the inputs (case {case.describe()})",
                    f"the values are right, but `{name}` was cut from the computation by "
                    f"{cut_by(recorder)}: a torch exercise must let gradients through, so "
                    "compute with torch operations only",
                )
        want = _grads(expected, keep, ref_args)
        try:
            have = _grads(got, keep, args)
        except RuntimeError as err:
            if "inplace operation" not in str(err):
                raise
            return (
                NO_GRADIENT,
                f"right values, but no gradient can be computed through your code (case "
                f"{case.describe()}): autograd reports that a tensor it needs was modified "
                "by an in-place operation",
                "your code edits a tensor in place after computing it (`w[...] = ...`, "
                "`w += ...`, or a method ending in `_`, on softmax's output for example): "
                "autograd keeps that tensor for the backward pass, so build a new tensor "
                "instead of overwriting it",
            )
        names = [
            n
            for n, a in zip(case.inputs, args, strict=True)
            if isinstance(a, torch.Tensor) and a.requires_grad
        ]
        for name, w, h in zip(names, want, have, strict=True):
            if not bool(torch.any(w != 0)):
                continue  # the reference lets no gradient reach it (weights copied in)
            both = torch.isfinite(w) & torch.isfinite(h)
            if not torch.allclose(h[both], w[both], rtol=max(rtol, 1e-6) * 10, atol=1e-9):
                zero = bool(torch.count_nonzero(h) == 0)
                return (
                    WRONG_GRADIENT,
                    f"right values, but the gradient with respect to `{name}` is "
                    f"{'zero' if zero else 'wrong'} (case {case.describe()})",
                    f"part of the computation is cut from the graph by {cut_by(recorder)}, so "
                    f"gradients {'do not reach' if zero else 'reach only part of'} `{name}`; "
                    "compute every step with torch operations on the tensors themselves",
                )
    return None
