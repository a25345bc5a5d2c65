"""Graders for chapter 1's exercises: the RNN step and loop, gradient norms, path lengths,
and three predictions.

Each grader compares the learner's function with the attnlab reference (or with PyTorch's
``nn.RNN`` run on the same weights) on seeded cases chosen to tell mistakes apart (input
size, hidden size and batch all different, one token and several, large inputs that
saturate tanh), names planted and generated mistakes (see :mod:`attnlab.grading.pipeline`)
and checks that gradients flow through the torch answers. The notebook imports the
``check_*`` functions and ``summary`` (the chapter's score table).

Taught in: exercises/01_why_attention.ipynb
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import torch
from torch import nn
from torch.func import functional_call

from ..tasks.rnn import VanillaRNN, input_jacobian_norms, path_lengths
from .pipeline import Grader
from .questions import Question
from .registry import ChapterGraders
from .results import CheckResult
from .specs import Case, Mistake

__all__ = [
    "GRADERS",
    "check_bytenet_path",
    "check_gradient_norms",
    "check_loop_time",
    "check_path_length",
    "check_rnn_forward",
    "check_rnn_step",
    "check_survives_20",
    "summary",
]

GRADERS = ChapterGraders(__name__, mutants_reviewed=True)
"""Chapter 1's exercises, in the order of the notebook."""


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _weights(batch: int, inp: int, hidden: int, seed: int) -> dict[str, torch.Tensor]:
    g = _gen(seed)
    return {
        "W_ih": torch.randn(hidden, inp, generator=g, dtype=torch.float64) / inp**0.5,
        "W_hh": torch.randn(hidden, hidden, generator=g, dtype=torch.float64) / hidden**0.5,
        "b": 0.5 * torch.randn(hidden, generator=g, dtype=torch.float64),
    }


# ------------------------------------------------------------------ 1.1 one step


def _rnn_step(x_t, h_prev, W_ih, W_hh, b):
    return torch.tanh(x_t @ W_ih.T + h_prev @ W_hh.T + b)  # (B, I)@(I, H) + (B, H)@(H, H)


def _step_cases() -> tuple[Case, ...]:
    cases = []
    for label, (batch, inp, hidden, seed) in {
        "one sequence": (1, 3, 4, 0),
        "a batch of 5": (5, 6, 4, 1),
        "large inputs": (2, 3, 5, 2),
    }.items():
        g = _gen(10 + seed)
        scale = 4.0 if label == "large inputs" else 1.0
        x_t = scale * torch.randn(batch, inp, generator=g, dtype=torch.float64)
        h_prev = torch.randn(batch, hidden, generator=g, dtype=torch.float64).tanh()
        cases.append(
            Case(label, {"x_t": x_t, "h_prev": h_prev, **_weights(batch, inp, hidden, seed)})
        )
    return tuple(cases)


RNN_STEP = GRADERS.add(
    Grader(
        name="rnn_step",
        signature="rnn_step(x_t, h_prev, W_ih, W_hh, b) with x_t: (B, I), h_prev: (B, H), "
        "W_ih: (H, I), W_hh: (H, H), b: (H,) -> h_t: (B, H)",
        reference=_rnn_step,
        cases=_step_cases(),
        mistakes=(
            Mistake(
                "you applied tanh twice: the new state is squashed once, one tanh around the "
                "whole sum of the three terms",
                lambda x_t, h_prev, W_ih, W_hh, b: torch.tanh(
                    _rnn_step(x_t, h_prev, W_ih, W_hh, b)
                ),
            ),
            Mistake(
                "you multiplied the input term by the recurrent term: the two products (and b) "
                "are added inside the tanh",
                lambda x_t, h_prev, W_ih, W_hh, b: torch.tanh(
                    (x_t @ W_ih.T) * (h_prev @ W_hh.T) + b
                ),
            ),
            Mistake(
                "you forgot the tanh: the new state is tanh(x_t W_ihᵀ + h_prev W_hhᵀ + b)",
                lambda x_t, h_prev, W_ih, W_hh, b: x_t @ W_ih.T + h_prev @ W_hh.T + b,
            ),
            Mistake(
                "you multiplied h_prev by W_hh without transposing it: in PyTorch's layout "
                "W_hh has one row per hidden unit, so the state meets W_hhᵀ, as x_t meets "
                "W_ihᵀ (W_hh is square, so the shapes did not warn you)",
                lambda x_t, h_prev, W_ih, W_hh, b: torch.tanh(x_t @ W_ih.T + h_prev @ W_hh + b),
            ),
            Mistake(
                "the bias b is a vector of size H that is added to every row of the (B, H) "
                "sum as it is: made into a column (H, 1) (`b[:, None]`, a reshape) it lines "
                "up with the batch axis instead, which breaks as soon as B differs from H",
                lambda x_t, h_prev, W_ih, W_hh, b: torch.tanh(
                    x_t @ W_ih.T + h_prev @ W_hh.T + b[:, None]
                ),
            ),
            Mistake(
                "you left out the bias b",
                lambda x_t, h_prev, W_ih, W_hh, b: torch.tanh(x_t @ W_ih.T + h_prev @ W_hh.T),
            ),
            Mistake(
                "you left out the previous state: the recurrence is the term of h_prev times W_hhᵀ",
                lambda x_t, h_prev, W_ih, W_hh, b: torch.tanh(x_t @ W_ih.T + b),
            ),
            Mistake(
                "you used a sigmoid; the vanilla RNN squashes with tanh (values in (-1, 1))",
                lambda x_t, h_prev, W_ih, W_hh, b: torch.sigmoid(
                    x_t @ W_ih.T + h_prev @ W_hh.T + b
                ),
            ),
            Mistake(
                "you added the bias after the tanh: it belongs inside, with the two products, "
                "so that the state stays in (-1, 1)",
                lambda x_t, h_prev, W_ih, W_hh, b: torch.tanh(x_t @ W_ih.T + h_prev @ W_hh.T) + b,
            ),
            Mistake(
                "you applied tanh to each term separately and added the results: the tanh "
                "squashes the whole sum, once",
                lambda x_t, h_prev, W_ih, W_hh, b: (
                    torch.tanh(x_t @ W_ih.T) + torch.tanh(h_prev @ W_hh.T) + torch.tanh(b)
                ),
            ),
            Mistake(
                "you applied tanh to each product separately and added the results: the tanh "
                "squashes the whole sum, once (bias included)",
                lambda x_t, h_prev, W_ih, W_hh, b: (
                    torch.tanh(x_t @ W_ih.T) + torch.tanh(h_prev @ W_hh.T) + b
                ),
            ),
            Mistake(
                "you applied tanh to each term separately and added the results: the tanh "
                "squashes the whole sum, once, so that the state stays in (-1, 1)",
                lambda x_t, h_prev, W_ih, W_hh, b: (
                    torch.tanh(x_t @ W_ih.T) + torch.tanh(h_prev @ W_hh.T + b)
                ),
            ),
            Mistake(
                "you applied tanh to each term separately and added the results: the tanh "
                "squashes the whole sum, once, so that the state stays in (-1, 1)",
                lambda x_t, h_prev, W_ih, W_hh, b: (
                    torch.tanh(x_t @ W_ih.T + b) + torch.tanh(h_prev @ W_hh.T)
                ),
            ),
            Mistake(
                "your tanh squashes only the recurrent term h_prev W_hhᵀ: the input term and the "
                "bias are added outside it, so the state can leave (-1, 1); the tanh goes "
                "around the whole sum",
                lambda x_t, h_prev, W_ih, W_hh, b: x_t @ W_ih.T + torch.tanh(h_prev @ W_hh.T) + b,
            ),
            Mistake(
                "your tanh squashes only the input term x_t W_ihᵀ: the recurrent term and the "
                "bias are added outside it, so the state can leave (-1, 1); the tanh goes "
                "around the whole sum",
                lambda x_t, h_prev, W_ih, W_hh, b: torch.tanh(x_t @ W_ih.T) + h_prev @ W_hh.T + b,
            ),
            Mistake(
                "you added the bias twice: PyTorch's nn.RNN has two biases (b_ih and b_hh), "
                "but here they are already added up into the one b",
                lambda x_t, h_prev, W_ih, W_hh, b: torch.tanh(
                    x_t @ W_ih.T + b + h_prev @ W_hh.T + b
                ),
            ),
            Mistake(
                "your recurrent term is an elementwise product (`*`) of h_prev with one number "
                "per unit (W_hh's diagonal): each hidden unit then feeds only itself. The "
                "recurrent term is a matrix product with W_hhᵀ, in which every unit of the old "
                "state feeds every unit of the new one",
                lambda x_t, h_prev, W_ih, W_hh, b: torch.tanh(
                    x_t @ W_ih.T + h_prev * W_hh.diagonal() + b
                ),
            ),
            Mistake(
                "you swapped the two weight matrices: W_ih maps the input x_t and W_hh the "
                "previous state h_prev",
                lambda x_t, h_prev, W_ih, W_hh, b: torch.tanh(x_t @ W_hh.T + h_prev @ W_ih.T + b),
            ),
        ),
        outputs=("h_t",),
        hint="write the equation's three terms one at a time and check each one's shape "
        'against (B, H); the chapter\'s section "What a recurrent network does" computes '
        "this step",
        equivalent=(),
    )
)


def check_rnn_step(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x_t, h_prev, W_ih, W_hh, b)``: one step of a tanh RNN, ``(B, H)``.

    Taught in: chapters/01_why_attention.ipynb (exercise in exercises/01_why_attention.ipynb)
    """
    return RNN_STEP.check(fn)


# ------------------------------------------------------------------ 1.2 the loop


def _torch_rnn(W_ih, W_hh, b) -> nn.RNN:
    """``nn.RNN`` with our weights copied in (the bias as ``b_ih``, ``b_hh = 0``)."""
    hidden, inp = W_ih.shape
    ref = nn.RNN(inp, hidden, batch_first=True).to(W_ih.dtype)
    with torch.no_grad():
        ref.weight_ih_l0.copy_(W_ih)
        ref.weight_hh_l0.copy_(W_hh)
        ref.bias_ih_l0.copy_(b)
        ref.bias_hh_l0.zero_()
    return ref


def _rnn_forward(x, W_ih, W_hh, b):
    """``nn.RNN`` run on these very tensors (so that gradients reach them, as the learner's)."""
    weights = {
        "weight_ih_l0": W_ih,
        "weight_hh_l0": W_hh,
        "bias_ih_l0": b,
        "bias_hh_l0": torch.zeros_like(b),
    }
    outputs, h_n = functional_call(_torch_rnn(W_ih, W_hh, b), weights, (x,))
    return outputs, h_n[0]  # (B, T, H), (1, B, H) -> (B, H)


def _forward_cases() -> tuple[Case, ...]:
    cases = []
    for label, (batch, length, inp, hidden, seed) in {
        "one token": (1, 1, 3, 4, 3),
        "one sentence": (1, 6, 3, 4, 4),
        "a batch": (4, 9, 5, 3, 5),
        "a batch of 2, large inputs": (2, 5, 2, 6, 6),
    }.items():
        x = torch.randn(batch, length, inp, generator=_gen(20 + seed), dtype=torch.float64)
        if "large" in label:
            x = 4.0 * x
        cases.append(Case(label, {"x": x, **_weights(batch, inp, hidden, seed)}))
    return tuple(cases)


def _loop(x, W_ih, W_hh, b, *, carry=True, shift=False):
    h = x.new_zeros(x.shape[0], W_hh.shape[0])
    states = []
    for t in range(x.shape[1]):
        if shift:
            states.append(h)
        h = _rnn_step(x[:, t], h if carry else torch.zeros_like(h), W_ih, W_hh, b)
        if not shift:
            states.append(h)
    return torch.stack(states, dim=1), h


def _state_width_hint(message: str) -> str | None:
    """torch's "(1x3 and 4x4)": a state of the wrong width meeting the square W_hh."""
    found = re.search(r"\((\d+)x(\d+) and (\d+)x(\d+)\)", message)
    if found is None or found[3] != found[4] or found[2] == found[3]:
        return None
    return (
        f"a state with {found[2]} columns met W_hh, which is {found[3]} x {found[3]}: the "
        f"first state h0 needs one column per hidden unit, H = W_hh.shape[0] = {found[3]} "
        "(read it from the weights, don't take the input size or a fixed number)"
    )


RNN_FORWARD = GRADERS.add(
    Grader(
        name="rnn_forward",
        signature="rnn_forward(x, W_ih, W_hh, b) with x: (B, T, I) -> "
        "(outputs: (B, T, H), h_last: (B, H))",
        reference=_rnn_forward,
        cases=_forward_cases(),
        mistakes=(
            Mistake(
                "`.squeeze()` removed every axis of size 1, the batch axis too when B = 1 (and "
                "the time axis when T = 1): `outputs` keeps its shape (B, T, H) whatever the "
                "sizes, so squeeze nothing",
                lambda x, W_ih, W_hh, b: (
                    _rnn_forward(x, W_ih, W_hh, b)[0].squeeze(),
                    _rnn_forward(x, W_ih, W_hh, b)[1],
                ),
            ),
            Mistake(
                "every step of `outputs` holds the last state: you stored the same tensor at "
                "each step and overwrote it in place (`h[:] = ...`, `h.copy_(...)`), so all the "
                "stored entries show its final value; make a new tensor at each step instead",
                lambda x, W_ih, W_hh, b: (
                    _loop(x, W_ih, W_hh, b)[1][:, None].expand(-1, x.shape[1], -1),
                    _loop(x, W_ih, W_hh, b)[1],
                ),
            ),
            *(
                Mistake(
                    f"your `h_last` is the {what} of all the states: it is the last state "
                    "alone, the one after the final step",
                    lambda x, W_ih, W_hh, b, f=f: (
                        _loop(x, W_ih, W_hh, b)[0],
                        f(_loop(x, W_ih, W_hh, b)[0]),
                    ),
                )
                for what, f in (
                    ("sum", lambda o: o.sum(1)),
                    ("mean", lambda o: o.mean(1)),
                )
            ),
            Mistake(
                "every step reads the first token, x[:, 0]: step t reads the tokens of step t",
                lambda x, W_ih, W_hh, b: _loop(x[:, :1].expand_as(x), W_ih, W_hh, b),
            ),
            Mistake(
                "each step starts again from zeros: the state you just computed must be the "
                "previous state of the next step",
                lambda x, W_ih, W_hh, b: _loop(x, W_ih, W_hh, b, carry=False),
            ),
            Mistake(
                "your outputs are one step late: you stored h before updating it (starting "
                "with h_0 = 0). Store each state after computing it",
                lambda x, W_ih, W_hh, b: _loop(x, W_ih, W_hh, b, shift=True),
            ),
            *(
                Mistake(
                    "your loop runs backwards in time, from t = T - 1 down to 0, so the first "
                    "state you compute comes from the last token: an RNN reads the sequence "
                    f"left to right, t = 0, 1, ..., T - 1{then}",
                    lambda x, W_ih, W_hh, b, back=back: (
                        _loop(x.flip(1), W_ih, W_hh, b)[0].flip(1)
                        if back
                        else _loop(x.flip(1), W_ih, W_hh, b)[0],
                        _loop(x.flip(1), W_ih, W_hh, b)[1],
                    ),
                )
                for back, then in (
                    (True, " (putting the stored states back in order does not undo that)"),
                    (False, ""),
                )
            ),
            Mistake(
                "torch.cat joins the states along an axis they already have, (B, T·H): the "
                "time axis T is a new axis, which stacking makes",
                lambda x, W_ih, W_hh, b: (
                    torch.cat(list(_loop(x, W_ih, W_hh, b)[0].unbind(1)), dim=1),
                    _loop(x, W_ih, W_hh, b)[1],
                ),
            ),
            Mistake(
                "you stacked the states along the first axis (T, B, H); stack along dim=1 to "
                "get (B, T, H)",
                lambda x, W_ih, W_hh, b: (
                    _loop(x, W_ih, W_hh, b)[0].transpose(0, 1),
                    _loop(x, W_ih, W_hh, b)[1],
                ),
            ),
        ),
        outputs=("outputs", "h_last"),
        error_hints=(
            ("cannot be multiplied", _state_width_hint),
            (
                "out of bounds for dimension 1",
                "your loop asks for more time steps than this sequence has: take the number of "
                "steps from the input, x.shape[1], not a fixed number",
            ),
        ),
        hint="follow one sequence by hand for two steps: which state goes into step t, and "
        "which state does `outputs[:, t]` hold? The chapter's section \"Problem 1: one step "
        'after another" runs this loop',
        equivalent=(
            (
                "constant: x.shape[0] -> 1",
                "a zero first state with one row broadcasts against the batch in the first "
                "step, so a batch of 1 there gives the same numbers",
            ),
            *(
                (
                    "size: W_hh.shape[0] in h = x.new_zeros(x.shape[0], W_hh.shape[0]) -> "
                    f"W_hh.shape[{axis}]",
                    "W_hh is square (H, H): each of its two axes, counted from either end, "
                    "has size H",
                )
                for axis in ("-1", "-2", "1")
            ),
            (
                "size: x.shape[1] in for t in range(x.shape[1]): -> x.shape[-2]",
                "x has three axes: -2 is axis 1",
            ),
            (
                "axis: torch.stack(states, dim=1) in return torch.stack(states, dim=1), h -> "
                "torch.stack(states, dim=-2)",
                "stacking 2-D states gives 3 axes: dim=-2 is dim=1",
            ),
            *(
                (
                    f"input: x in h = x.new_zeros(x.shape[0], W_hh.shape[0]) -> {other}",
                    "new_zeros takes only the dtype and device of the tensor it is called on, "
                    "the same for every input",
                )
                for other in ("W_ih", "W_hh", "b")
            ),
            *(
                (
                    f"input: W_hh in h = x.new_zeros(x.shape[0], W_hh.shape[0]) -> {other}",
                    f"{other}.shape[0] is H too: one entry per hidden unit",
                )
                for other in ("W_ih", "b")
            ),
        ),
    )
)


def check_rnn_forward(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, W_ih, W_hh, b)`` against ``torch.nn.RNN`` with the same weights.

    Taught in: chapters/01_why_attention.ipynb (exercise in exercises/01_why_attention.ipynb)
    """
    return RNN_FORWARD.check(fn)


# ------------------------------------------------------------------ 1.3 gradient norms


def _as_rnn(W_ih, W_hh, b) -> VanillaRNN:
    """A :class:`VanillaRNN` holding these weights (the bias as ``b_ih``, ``b_hh = 0``)."""
    hidden, inp = W_ih.shape
    rnn = VanillaRNN(inp, hidden).to(W_ih.dtype)
    with torch.no_grad():
        rnn.weight_ih.copy_(W_ih)
        rnn.weight_hh.copy_(W_hh)
        rnn.bias_ih.copy_(b)
        rnn.bias_hh.zero_()
    return rnn


def _gradient_norms(x, W_ih, W_hh, b):
    rnn = _as_rnn(W_ih, W_hh, b)
    return input_jacobian_norms(rnn, x[None])[0].flip(0)  # (1, T, I) -> (T,), by distance


def _gradient_cases() -> tuple[Case, ...]:
    cases = []
    for label, (rho, length, seed) in {
        "radius 0.9": (0.9, 8, 0),
        "radius 1.5": (1.5, 12, 1),
        "one token": (0.5, 1, 2),
        "hidden size 6, input size 2": (0.8, 5, 3),
    }.items():
        inp, hidden = (2, 6) if "hidden size 6" in label else (3, 4)
        w = _weights(1, inp, hidden, 40 + seed)
        w["W_hh"] = w["W_hh"] * (rho / torch.linalg.eigvals(w["W_hh"]).abs().max())
        x = torch.randn(length, inp, generator=_gen(30 + seed), dtype=torch.float64)
        cases.append(Case(label, {"x": x, **w}))
    return tuple(cases)


def _sum_gradient(x, W_ih, W_hh, b):
    rnn = _as_rnn(W_ih, W_hh, b)
    x = x.detach().requires_grad_()
    (grad,) = torch.autograd.grad(rnn(x[None])[1].sum(), x)  # (T, I)
    return grad.norm(dim=-1).flip(0)


def _one_unit_gradient(x, W_ih, W_hh, b):
    rnn = _as_rnn(W_ih, W_hh, b)
    x = x.detach().requires_grad_()
    (grad,) = torch.autograd.grad(rnn(x[None])[1][0, 0], x)  # unit 0 only: (T, I)
    return grad.norm(dim=-1).flip(0)


def _jacobian(x, W_ih, W_hh, b):
    rnn = _as_rnn(W_ih, W_hh, b)
    return torch.autograd.functional.jacobian(lambda z: rnn(z[None])[1][0], x)  # (H, T, I)


def _sum_of_unit_norms(x, W_ih, W_hh, b):
    return _jacobian(x, W_ih, W_hh, b).norm(dim=2).sum(0).flip(0)


def _norm_gradient(x, W_ih, W_hh, b):
    rnn = _as_rnn(W_ih, W_hh, b)
    x = x.detach().requires_grad_()
    (grad,) = torch.autograd.grad(rnn(x[None])[1].norm(), x)
    return grad.norm(dim=-1).flip(0)


def _state_gradient(x, W_ih, W_hh, b):
    """‖∂h_T/∂h_(T-1-d)‖_F by distance d: the states' gradients, not the inputs'."""
    states = _rnn_forward(x[None], W_ih, W_hh, b)[0][0]  # (T, H)
    jac = torch.eye(W_hh.shape[0], dtype=x.dtype)
    norms = []
    for t in reversed(range(x.shape[0])):
        norms.append(jac.norm())
        jac = jac @ torch.diag(1 - states[t] ** 2) @ W_hh
    return torch.stack(norms).detach()


def _own_step_gradient(x, W_ih, W_hh, b):
    """‖∂h_t/∂x_t‖_F: each state against its own input (distance 0 every time)."""
    states = _rnn_forward(x[None], W_ih, W_hh, b)[0][0]  # (T, H)
    norms = [(torch.diag(1 - h**2) @ W_ih).norm() for h in states]  # (H, H) @ (H, I)
    return torch.stack(norms).flip(0).detach()


def _accumulated_grad(x, W_ih, W_hh, b):
    """``x.grad`` never zeroed: unit j's 'gradient' is the running sum over units 0..j."""
    running = _jacobian(x, W_ih, W_hh, b).cumsum(0)  # (H, T, I)
    return running.pow(2).sum(dim=(0, 2)).sqrt().flip(0)


def _first_state_gradient(x, W_ih, W_hh, b, *, flip=True):
    """‖∂h_1/∂x_t‖_F: the first state differentiated, not the last (only x_0 reaches it)."""
    states = _rnn_forward(x[None], W_ih, W_hh, b)[0][0]  # (T, H)
    norms = torch.zeros(x.shape[0], dtype=x.dtype)
    norms[0] = (torch.diag(1 - states[0] ** 2) @ W_ih).norm()  # (H, H) @ (H, I)
    return (norms.flip(0) if flip else norms).detach()


def _every_step_gradient(x, W_ih, W_hh, b):
    """Unit j's state summed over every time step, differentiated: not h_T alone."""
    jac = torch.autograd.functional.jacobian(
        lambda z: _rnn_forward(z[None], W_ih, W_hh, b)[0][0].sum(0), x
    )  # (H, T, I)
    return jac.pow(2).sum(dim=(0, 2)).sqrt().flip(0)


def _one_step_sequences(x, W_ih, W_hh, b):
    """x as T sequences of one step each, (T, 1, I): every state starts from zero."""
    h = torch.tanh(x @ W_ih.T + b)  # (T, I) @ (I, H) -> (T, H): one step from h0 = 0
    return (torch.diag_embed(1 - h**2) @ W_ih).norm(dim=(1, 2)).flip(0)  # (T, H, I) -> (T,)


def _by_position(x, W_ih, W_hh, b):
    return input_jacobian_norms(_as_rnn(W_ih, W_hh, b), x[None])[0]


GRADIENT_NORMS = GRADERS.add(
    Grader(
        name="gradient_norms",
        signature="gradient_norms(rnn, x) with x: (T, I) -> (T,), entry d = ‖∂h_T/∂x_(T-1-d)‖_F",
        reference=_gradient_norms,
        cases=_gradient_cases(),
        mistakes=(
            Mistake(
                "your norms are in order of position t, not of distance: entry 0 must be the "
                "last input (distance 0): reverse their order",
                _by_position,
            ),
            *(
                Mistake(
                    f"your norms are in order of position, rolled by one ({how}): ordering by "
                    "distance reverses the whole sequence, entry d is the norm for position "
                    "T - 1 - d, so the first input's norm comes last",
                    lambda x, W_ih, W_hh, b, shift=shift: _by_position(x, W_ih, W_hh, b).roll(
                        shift, 0
                    ),
                )
                for shift, how in (
                    (1, "the last input moved to the front, the others kept in order"),
                    (-1, "the first input moved to the end, the others kept in order"),
                )
            ),
            *(
                Mistake(
                    "only the norm for the first input x_0 is nonzero: you differentiated the "
                    "first state h_1 (`outputs[:, 0]`), which no later input reaches (and, "
                    "with h_0 = 0, which W_hh does not reach either); the exercise asks for the "
                    "last state h_T",
                    lambda x, W_ih, W_hh, b, flip=flip: _first_state_gradient(
                        x, W_ih, W_hh, b, flip=flip
                    ),
                )
                for flip in (True, False)
            ),
            Mistake(
                "you took the gradient of h_T.sum(), a single number: that adds the rows of "
                "the Jacobian before taking the norm. Take the gradient of each unit h_T[j] "
                "separately and sum the squares",
                _sum_gradient,
            ),
            Mistake(
                "you took the gradient of one hidden unit only: the Frobenius norm adds the "
                "squares of every hidden unit's Jacobian, one autograd.grad per unit",
                _one_unit_gradient,
            ),
            Mistake(
                "you added the norms of the units' gradients: the Frobenius norm adds the "
                "squares of all entries first (every unit, every input feature), then takes "
                "one square root",
                _sum_of_unit_norms,
            ),
            Mistake(
                "you differentiated the norm of h_T, a single number: the exercise asks for "
                "the Jacobian of every unit h_T[j], whose squares the Frobenius norm adds",
                _norm_gradient,
            ),
            Mistake(
                "these are the norms of ∂h_T/∂h_t, the gradient with respect to the states: "
                "the exercise asks for the inputs x_t, one more step back through the tanh "
                "and W_ih",
                _state_gradient,
            ),
            Mistake(
                "you added absolute values (an L1 norm): the Frobenius norm is the square root "
                "of the sum of the squares of all entries",
                lambda x, W_ih, W_hh, b: _jacobian(x, W_ih, W_hh, b).abs().sum(dim=(0, 2)).flip(0),
            ),
            Mistake(
                "you took the largest entry (a max norm): the Frobenius norm adds the squares "
                "of all H × I entries of the Jacobian, then takes one square root",
                lambda x, W_ih, W_hh, b: _jacobian(x, W_ih, W_hh, b).abs().amax(dim=(0, 2)).flip(0),
            ),
            Mistake(
                "you differentiated each state h_t with respect to its own input x_t (distance 0 "
                "every time): the exercise asks for the last state h_T against every input x_t",
                _own_step_gradient,
            ),
            *(
                Mistake(
                    "your result has one entry per hidden unit (H), not one per input position "
                    "(T): keep the position axis of the Jacobian and add the squares over the "
                    "hidden units and the input features",
                    fn,
                )
                for fn in (
                    lambda x, W_ih, W_hh, b: _jacobian(x, W_ih, W_hh, b).norm(dim=(1, 2)),
                    lambda x, W_ih, W_hh, b: _jacobian(x, W_ih, W_hh, b).norm(dim=(1, 2)).flip(0),
                )
            ),
            *(
                Mistake(
                    f"you took the {what} of each (H, I) Jacobian ({how}): the exercise asks "
                    "for the Frobenius norm, the square root of the sum of the squares of all "
                    f"H × I entries (torch.linalg.norm's default on a matrix){why}",
                    lambda x, W_ih, W_hh, b, order=order: torch.stack(
                        [
                            torch.linalg.matrix_norm(jac, ord=order)
                            for jac in _jacobian(x, W_ih, W_hh, b).unbind(1)  # (H, I) each
                        ]
                    ).flip(0),
                )
                for what, how, order, why in (
                    (
                        "spectral norm",
                        "ord=2, the largest singular value",
                        2,
                        "; a spectral norm is never above it, which is why your values are low",
                    ),
                    ("nuclear norm", "ord='nuc', the sum of the singular values", "nuc", ""),
                )
            ),
            Mistake(
                "you averaged the squares (a root mean square): the Frobenius norm adds them, "
                "every unit and every input feature, then takes the square root",
                lambda x, W_ih, W_hh, b: (
                    _jacobian(x, W_ih, W_hh, b).pow(2).mean(dim=(0, 2)).sqrt().flip(0)
                ),
            ),
            Mistake(
                "you divided the norms by the first one: the exercise asks for the norms "
                "themselves, not relative to distance 0",
                lambda x, W_ih, W_hh, b: (
                    _gradient_norms(x, W_ih, W_hh, b) / _gradient_norms(x, W_ih, W_hh, b)[0]
                ),
            ),
            Mistake(
                "you returned the logarithms of the norms (the chapter plots them on a log "
                "axis): return the norms themselves",
                lambda x, W_ih, W_hh, b: _gradient_norms(x, W_ih, W_hh, b).log(),
            ),
            Mistake(
                "x.grad accumulates: after unit j it holds the sum of the gradients of units "
                "0..j, so you squared running sums. Start each unit from no gradient (set "
                "x.grad to None between units) or use torch.autograd.grad, which returns a "
                "fresh one",
                _accumulated_grad,
            ),
            Mistake(
                "you reversed the input sequence before running the RNN: that is another "
                "sequence, with other states and other gradients; the norms are those of x "
                "run in its own order, and it is the list of norms that goes by distance",
                lambda x, W_ih, W_hh, b: _by_position(x.flip(0), W_ih, W_hh, b),
            ),
            Mistake(
                "you differentiated the states of every time step (a sum over the outputs), "
                "not the last state h_T only: the norms measure how far back x_t still "
                "reaches the final state",
                _every_step_gradient,
            ),
            Mistake(
                "your RNN ran T sequences of one step each (a (T, 1, I) batch, as "
                "x.unsqueeze(1) or x[:, None] makes): every state starts from zero, so no "
                "state is carried from one token to the next and W_hh never acts; one "
                "sequence of T steps is a batch of one, of shape (1, T, I)",
                _one_step_sequences,
            ),
            Mistake(
                "you returned the squared norm; take the square root",
                lambda x, W_ih, W_hh, b: _gradient_norms(x, W_ih, W_hh, b) ** 2,
            ),
        ),
        hint="check the pieces one at a time: the Jacobian of one hidden unit with respect to x "
        "has the shape of x, (T, I); the norm adds the squares of all H units' Jacobians; "
        "the order is by distance. The chapter's section \"Problem 2: gradients that vanish "
        'or explode" measures the same norms',
        error_hints=(
            (
                "does not require grad",
                "autograd differentiates with respect to a tensor that requires grad and is "
                "used in the computation: the tensor you differentiate with respect to does not "
                "require grad (x[None].requires_grad_() makes a new tensor, x itself stays as it "
                "was); make x a leaf that requires grad before using it",
            ),
            (
                "(expected 3, got 2)",
                "a function you call unpacks three sizes (B, T, I) from a tensor with two: "
                "x is one sequence (T, I), and rnn_forward takes a batch: give it a batch "
                "axis of size 1, x[None]",
            ),
        ),
        rtol=1e-6,
        atol=1e-10,
        equivalent=(
            (
                "offset: range(h_last.shape[-1]) in for j in range(h_last.shape[-1]): -> "
                "reversed(range(h_last.shape[-1]))",
                "the units' squares add up to the same sum in any order",
            ),
            (
                "library: return squared.sqrt().flip(0) -> return "
                "torch.from_numpy(squared.sqrt().flip(0).detach().nump",
                "the norms are a measurement, not a step of a model: they carry no gradient "
                "in the reference either",
            ),
            (
                "axis: squared.sqrt().flip(0) in return squared.sqrt().flip(0) -> "
                "squared.sqrt().flip(-1)",
                "the norms form one axis: -1 is 0",
            ),
            (
                "size: x.shape[0] in squared = torch.zeros(x.shape[0], dtype=x.dtype) -> "
                "x.shape[-2]",
                "x has two axes: -2 is 0",
            ),
            (
                "size: h_last.shape[-1] in for j in range(h_last.shape[-1]): -> h_last.shape[1]",
                "h_last has two axes: 1 is -1",
            ),
            (
                "axis: grad.pow(2).sum(-1) in squared += grad.pow(2).sum(-1) -> grad.pow(2).sum(1)",
                "each gradient has two axes: 1 is -1",
            ),
            (
                "offset: h_last[0, j] in (grad,) = torch.autograd.grad(h_last[0, j], x, "
                "retain_graph… -> h_last[0, j - 1]",
                "j - 1 visits every unit once too (unit -1 is the last one): the same sum in "
                "another order",
            ),
            *(
                (
                    f"input: x in squared = torch.zeros(x.shape[0], dtype=x.dtype) -> {other} (2)",
                    "every input is float64: any of their dtypes is the same",
                )
                for other in ("W_ih", "W_hh", "b")
            ),
        ),
    )
)


def check_gradient_norms(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, W_ih, W_hh, b)``: the Frobenius norm of ``∂h_T/∂x_t`` by distance, ``(T,)``.

    Taught in: chapters/01_why_attention.ipynb (exercise in exercises/01_why_attention.ipynb)
    """
    return GRADIENT_NORMS.check(fn)


# ------------------------------------------------------------------ 1.4 path lengths


def _path_length(n, kind, k):
    return path_lengths(n, k)[kind]


def _path_cases() -> tuple[Case, ...]:
    rows = [
        ("RNN", 1000, "recurrent", 3),
        ("RNN, two tokens", 2, "recurrent", 3),
        ("convolution, exact fit", 9, "convolution", 3),
        ("convolution, rounds up", 10, "convolution", 3),
        ("convolution, wide kernel", 1000, "convolution", 9),
        # k = 2 and k = 4: n // (k - 1) and ceil((n - 1) / (k - 1)) agree for k = 3 only.
        ("convolution, kernel 2", 5, "convolution", 2),
        ("convolution, kernel 4", 11, "convolution", 4),
        ("dilated, exact power", 125, "dilated_convolution", 5),
        ("dilated, rounds up", 126, "dilated_convolution", 5),
        ("dilated, an exact power with an exact log", 100, "dilated_convolution", 10),
        # One past an exact power: ceil(log_k(n - 1)) falls one layer short here.
        ("dilated, one past a power", 101, "dilated_convolution", 10),
        # Between two powers: rounding down (1) and counting n - 1 positions (2) part here.
        ("dilated, between two powers", 50, "dilated_convolution", 10),
        # A little past a power (log 2.3): rounding to the nearest (2) and n - 1 (3) part here.
        ("dilated, a little past a power", 200, "dilated_convolution", 10),
        ("dilated", 1000, "dilated_convolution", 10),
        ("attention", 1000, "self_attention", 3),
    ]
    return tuple(Case(label, {"n": n, "kind": kind, "k": k}) for label, n, kind, k in rows)


def _per_kind(recurrent, conv, dilated):
    def fn(n, kind, k):
        return {
            "recurrent": recurrent(n),
            "convolution": conv(n, k),
            "dilated_convolution": dilated(n, k),
            "self_attention": 1,
        }[kind]

    return fn


def _only_dilated(dilated):
    """A planted count that is right for the recurrent net and the convolution, ``dilated``
    for the dilated stack (the mistakes of the one count that takes a logarithm)."""
    return _per_kind(lambda n: n - 1, lambda n, k: _ceil_div(n - 1, k - 1), dilated)


def _ceil_div(a, b):
    return -(-a // b)


def _ceil_of_positions(n, kind, k):
    """Planted: the convolution count rounded up, of n positions, not n - 1 gaps."""
    if kind == "convolution":
        return math.ceil(n / (k - 1))
    return _path_length(n, kind, k)


def _dilated(n, k):
    layers = 0
    while k**layers < n:
        layers += 1
    return layers


PATH_LENGTH = GRADERS.add(
    Grader(
        name="path_length",
        signature='path_length(n, kind, k) with kind in "recurrent", "convolution", '
        '"dilated_convolution", "self_attention" -> int',
        reference=_path_length,
        cases=_path_cases(),
        mistakes=(
            Mistake(
                "an RNN needs n - 1 steps between the first and the n-th position, not n",
                _per_kind(lambda n: n, lambda n, k: _ceil_div(n - 1, k - 1), _dilated),
            ),
            Mistake(
                "you rounded the number of convolution layers down; a partial layer is still "
                "a layer: round up",
                _per_kind(lambda n: n - 1, lambda n, k: (n - 1) // (k - 1), _dilated),
            ),
            Mistake(
                "rounding down and adding 1 is not rounding up: it is one layer too many "
                "whenever k - 1 divides n - 1 exactly (n = 9, k = 3: 4 layers, not 5); round "
                "the quotient up instead (a ceiling division)",
                _per_kind(lambda n: n - 1, lambda n, k: (n - 1) // (k - 1) + 1, _dilated),
                needs=r"^(?![\s\S]*\bceil\b)",  # the same numbers as ceil(n / (k - 1)): next
            ),
            Mistake(
                # ceil(n / m) is (n - 1) // m + 1: the same numbers, another slip
                "your convolution count divides n, the number of positions, by k - 1: the "
                "path crosses the n - 1 gaps between the first and the n-th position, so it "
                "is one layer too many whenever k - 1 divides n - 1 exactly (n = 9, k = 3: "
                "4 layers, not 5); the rounding up is right, the n is not",
                _ceil_of_positions,
            ),
            Mistake(
                "your convolution count divides n, the number of positions, by k - 1 and "
                "rounds down: the path crosses the n - 1 gaps between the first and the n-th "
                "position, and a partial layer is still a layer (n = 11, k = 4: 4 layers, "
                "not 3; n = 5, k = 2: 4, not 5)",
                _per_kind(lambda n: n - 1, lambda n, k: n // (k - 1), _dilated),
            ),
            Mistake(
                "round() goes to the nearest whole number (and half to even: round(4.5) is "
                "4), so a partial convolution layer is sometimes dropped; a partial layer is "
                "still a layer: the count must always round up",
                _per_kind(lambda n: n - 1, lambda n, k: round((n - 1) / (k - 1)), _dilated),
            ),
            Mistake(
                "your convolution count is one layer too many on every case: the first layer "
                "already widens the view by k - 1 positions, there is no extra input layer to "
                "count (n = 9, k = 3: 4 layers, not 5)",
                _per_kind(lambda n: n - 1, lambda n, k: _ceil_div(n - 1, k - 1) + 1, _dilated),
            ),
            Mistake(
                "your dilated cases get the plain convolution's count: the test that picks "
                "the convolution branch also matches 'dilated_convolution' (it contains the "
                "word 'convolution'), and it runs first; compare the kind exactly, or test "
                "the dilated kind before the plain one",
                _per_kind(
                    lambda n: n - 1,
                    lambda n, k: _ceil_div(n - 1, k - 1),
                    lambda n, k: _ceil_div(n - 1, k - 1),
                ),
            ),
            Mistake(
                "each convolution layer widens the view by k - 1 positions, not k",
                _per_kind(lambda n: n - 1, lambda n, k: _ceil_div(n, k), _dilated),
            ),
            Mistake(
                "int(log) + 1 rounds up only when n is not a power of k: for n = k ** L it "
                "gives L + 1 layers even with an exact log (n = 100, k = 10 gives 3, not 2): "
                "an exact power of k needs no extra layer",
                _only_dilated(lambda n, k: int(math.log(n) / math.log(k)) + 1),
            ),
            Mistake(
                "math.log(n, k) is a float and can land just above a whole number "
                "(log(125) / log(5) = 3.0000000000000004), so ceil gives one layer too many; "
                "count the layers in integers instead",
                _only_dilated(lambda n, k: math.ceil(math.log(n) / math.log(k))),
            ),
            Mistake(
                "you rounded the number of dilated layers down: int() truncates, and a float "
                "log can land just below a whole number (math.log(1000, 10) is "
                "2.9999999999999996); k ** L must reach n, so count the layers in integers",
                _only_dilated(lambda n, k: int(math.log(n, k))),
            ),
            Mistake(
                "you rounded the logarithm to the nearest whole number: log_5(126) ≈ 3.004 "
                "rounds down to 3, but 5 ** 3 = 125 positions fall one short of 126, so a "
                "fourth layer is needed; a partial layer still counts (and count in integers: "
                "a float log can land just above a whole number)",
                _only_dilated(lambda n, k: round(math.log(n, k))),
            ),
            *(
                Mistake(
                    "you counted the layers for n - 1 positions: L layers of width k see "
                    "k ** L positions, and the first and the n-th position must both be in "
                    "one view (n = 101, k = 10 needs 3 layers, not 2)",
                    _only_dilated(layers),
                )
                for layers in (
                    lambda n, k: _dilated(n - 1, k),
                    lambda n, k: math.ceil(math.log(n - 1) / math.log(k)),
                )
            ),
            Mistake(
                "a self-attention layer connects every pair of positions directly: the path is "
                "one step, not 0",
                lambda n, kind, k: 0 if kind == "self_attention" else _path_length(n, kind, k),
            ),
            Mistake(
                "your dilated count uses base 2: the dilation grows by a factor of k per layer, "
                "so the base is k, not 2",
                _only_dilated(lambda n, k: math.ceil(math.log2(n))),
            ),
            Mistake(
                "you returned the view size k ** L of the dilated stack: the path length is the "
                "number of layers L itself",
                _only_dilated(lambda n, k: k ** _dilated(n, k)),
            ),
            Mistake(
                "you rounded the number of dilated layers down; k ** L must reach n",
                _only_dilated(lambda n, k: math.floor(math.log(n) / math.log(k) + 1e-9)),
            ),
        ),
        outputs=("length",),
        hint="work out each kind on a small n by hand (n = 4, k = 3), count the steps, then "
        'write the count for any n; the chapter\'s section "Problem 3: long paths" has the '
        "table",
    )
)


def check_path_length(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(n, kind, k)``: the longest path between ``n`` positions, per layer type.

    Taught in: chapters/01_why_attention.ipynb (exercise in exercises/01_why_attention.ipynb)
    """
    return PATH_LENGTH.check(fn)


# ------------------------------------------------------------------ predictions


def _factors_of_point_nine(value: float) -> str | None:
    """What a fraction between 0 and 1 is, counted in factors of 0.9."""
    if not 0 < value < 1:
        return None
    factors = round(math.log(value) / math.log(0.9))
    if factors == 20:
        return (
            f"{value:g} is about 20 factors of 0.9: the count is right, but the power is not "
            "worked out closely enough; give it to two significant digits"
        )
    return (
        f"{value:g} is what about {factors} factors of 0.9 leave: one factor per step, and "
        "the gradient goes 20 steps back; count the factors, then work the power out to two "
        "significant digits"
    )


SURVIVES_20 = GRADERS.add(
    Question(
        name="survives_20",
        answer=0.9**20,
        atol=0.005,
        explanation="each step multiplies the gradient by W_hh = 0.9 I, so 20 steps give "
        "0.9 ** 20 ≈ 0.12: about an eighth survives (and 0.9 ** 60 ≈ 0.002)",
        wrong=(
            (0.9, "0.9 is what survives one step; over 20 steps the factor is applied 20 times"),
            (
                1.0,
                "a linear RNN has no tanh to shrink the gradient, but it still multiplies it "
                "by W_hhᵀ = 0.9 I at every step: linear does not mean nothing is lost",
            ),
            (18.0, "the factors multiply, they do not add up: one factor of 0.9 per step"),
            (0.0, "it shrinks geometrically, but 20 factors of 0.9 do not reach zero"),
            (0.5, "halving would take about 6.6 steps at 0.9 per step; 20 steps is three halvings"),
            (
                0.9**19,
                "that is 19 factors of 0.9 (and about e^-2 = 0.135, if you used e^(-0.1 t)): "
                "count the factors again, one per step between x_t and h_T, 20 steps back",
            ),
            (0.9**21, "that is 21 factors of 0.9: one factor per step, 20 steps back"),
            (
                0.1,
                "0.1 = 1 - 0.9 is what one step takes away, not what is left after 20 steps; "
                "as what is left, 0.1 would be about 22 factors of 0.9: work it out to two "
                "digits",
            ),
            (
                0.9**40,
                "that is 40 factors of 0.9, two per step: going back one step multiplies by "
                "W_hhᵀ only (W_ih leads out to the input, once at the end), so one factor "
                "per step, 20 steps back",
            ),
            (
                0.9**20 / 10,
                "ten times too small: check the decimal point (0.9 ** 10 alone is still about "
                "a third)",
            ),
            (
                0.01,
                "far too small: 0.01 is about 44 factors of 0.9, more than twice the 20 steps "
                "here (0.9 ** 10 alone is still about a third)",
            ),
            (
                0.001,
                "far too small: 0.001 is about 66 factors of 0.9; 20 steps leave far more",
            ),
            (
                0.9**10,
                "that is 10 factors of 0.9, half the distance: one factor per step, 20 steps back",
            ),
            (
                -1.0,
                "a fraction of a gradient cannot be negative: you took away 10 % of the "
                "original per step (a linear loss), but each step multiplies what is left by "
                "0.9, so the losses compound",
            ),
            (
                0.8,
                "0.8 takes a fixed amount off per step (a linear loss, such as 1 - 20 × 0.01), "
                "or is what only 2 factors of 0.9 leave: each step multiplies what is left by "
                "0.9, so over 20 steps the losses compound; count the factors, then work the "
                "power out to two significant digits",
            ),
            (
                2.0,
                "you multiplied the loss per step, 0.1, by the 20 steps: the factors of 0.9 "
                "multiply, so what is lost compounds instead of adding up",
            ),
        ),
        hint="one step multiplies by 0.9; how many factors of 0.9 do 20 steps give? (Work "
        "it out to two significant digits.)",
        reason=_factors_of_point_nine,
    )
)


def check_survives_20(answer: Any) -> CheckResult:
    """Check the predicted fraction of the gradient left after 20 steps at ``W_hh = 0.9 I``.

    Taught in: chapters/01_why_attention.ipynb (exercise in exercises/01_why_attention.ipynb)
    """
    return SURVIVES_20.check(answer)


def _fractional_layers(value: float) -> str | None:
    """What a fractional count of layers (k = 10, 1000 positions) was computed as."""
    if value.is_integer():
        return None
    count = "count the layers: how many factors of 10 does the view need to reach 1000?"
    if value > 0 and math.isclose(value**10, 1000, rel_tol=1e-3):
        return (
            f"{value:g} is the 10th root of 1000, the number whose 10th power is 1000: the "
            "width 10 is the base that is multiplied, and the unknown is how many times, an "
            f"exponent (a logarithm of base 10), not a root; {count}"
        )
    for base, name in ((2, "2"), (math.e, "e (the natural log)")):
        if value > 0 and math.isclose(base**value, 1000, rel_tol=1e-3):
            return (
                f"{value:g} is the logarithm of 1000 in base {name}: each layer multiplies the "
                f"view by k = 10, so the base is 10; {count}"
            )
    return (
        f"{value:g} is not a whole number, and a signal crosses whole layers: a logarithm "
        f"gives a fractional count (rounded down, it also falls short), so {count}"
    )


BYTENET_PATH = GRADERS.add(
    Question(
        name="bytenet_path",
        answer=3,
        explanation="dilations 1, 10, 100 reach 10 ** 3 = 1000 positions: 3 layers, where an "
        "RNN needs 999 steps and attention 1",
        wrong=(
            (
                111,
                "that is a plain convolution (ceil(999 / 9)); dilations grow the view "
                "geometrically",
            ),
            (
                99,
                "99 divides the length by the width (1000 / 10 - 1), the kind of count of a "
                "plain convolution, whose layers add to the view: dilated layers multiply the "
                "view by k = 10 each; how many multiplications does it take to reach 1000?",
            ),
            (999, "that is the RNN's path; dilated layers multiply the view by k each time"),
            (
                4,
                "4 layers reach 10,000 positions; the first and the last of 1000 positions "
                "need a view of 1000 positions: is 4 the smallest count that reaches it?",
            ),
            (2, "two layers of width 10 see only 10 ** 2 = 100 positions, not 1000"),
            (1, "that is self-attention; a convolution stack needs several layers"),
            (
                100,
                "100 = 10 ** 2 is the view of two dilated layers (dilations 1 and 10), not a "
                "number of layers: how many layers does a view of 1000 positions need?",
            ),
            (
                500,
                "that is a plain convolution of width 3 (ceil(999 / 2), the chapter's count): "
                "here the layers are dilated and k = 10, so each layer multiplies the view by 10",
            ),
            (
                7,
                "that is the dilated count for width k = 3 (3 ** 7 = 2187 reaches 1000): here "
                "k = 10, so each layer multiplies the view by 10",
            ),
            (
                10,
                "10 is the width k of one layer (or log2(1000) rounded up, with base 2): the "
                "layers multiply the view by k = 10 each, so count the factors of 10 that reach "
                "1000",
            ),
            (
                1000,
                "1000 is the view the stack must reach (k ** L); the question asks for the "
                "number of layers L",
            ),
        ),
        hint="after L dilated layers of width k the view covers k ** L positions",
        reason=lambda value: _fractional_layers(value),
    )
)


def check_bytenet_path(answer: Any) -> CheckResult:
    """Check the predicted number of dilated layers (k = 10) to connect 1000 positions.

    Taught in: chapters/01_why_attention.ipynb (exercise in exercises/01_why_attention.ipynb)
    """
    return BYTENET_PATH.check(answer)


LOOP_TIME = GRADERS.add(
    Question(
        name="loop_time",
        answer="doubles",
        choices=("stays the same", "doubles", "quadruples"),
        explanation="the loop runs T steps of the same small size, one after another: twice "
        "the steps, twice the time (slope 1 on log-log axes)",
        wrong=(
            (
                "stays the same",
                "that is the hope for one parallel product on a big machine; "
                "the loop cannot overlap its steps",
            ),
            (
                "quadruples",
                "that is attention's T × T score matrix at long lengths; each RNN "
                "step costs the same whatever T is",
            ),
        ),
        hint="how many steps does the loop run, and does one step get dearer when T grows?",
        right_idea=("linear", "linearly", 2, "2x", "twice", "O(T)", "proportional"),
        aliases=(
            *(
                (
                    word,
                    "a quadratic cost (T × T) is attention's score matrix; each RNN step "
                    "costs the same whatever T is, and the loop runs one step per token",
                )
                for word in (
                    "quadruple",
                    "quadrupled",
                    "squares",
                    "square",
                    "x4",
                    "×4",
                    "fourfold",
                    "4 times",
                    "quadratic",
                    "quadratically",
                    "squared",
                    4,
                    "4x",
                    "O(T^2)",
                    "O(T²)",
                    "O(T**2)",
                    "T^2",
                    "T²",
                )
            ),
            *(
                (
                    word,
                    "a longer sequence cannot make the loop faster: it runs one step per "
                    "token, each of the same cost",
                )
                for word in ("halves", "half", "halved", 0.5)
            ),
            *(
                (
                    word,
                    "the right idea (a time proportional to T), said otherwise: the answer "
                    "is the choice that names what a linear cost does when T doubles",
                )
                for word in ("linear", "linearly", 2, "2x", "twice", "O(T)", "proportional")
            ),
            *(
                (
                    word,
                    "nothing here grows threefold: count the loop's steps for 2T tokens, "
                    "and ask whether one step costs more when T grows",
                )
                for word in ("triples", "triple", 3, "3x", "exponential", "exponentially")
            ),
            *(
                (
                    word,
                    "the loop cannot overlap its steps: twice the tokens means more steps, "
                    "one after another",
                )
                for word in ("same", "constant", "unchanged", 1, "1x")
            ),
        ),
    )
)


def check_loop_time(answer: Any) -> CheckResult:
    """Check the prediction of how the RNN loop's time changes when ``T`` doubles.

    Taught in: chapters/01_why_attention.ipynb (exercise in exercises/01_why_attention.ipynb)
    """
    return LOOP_TIME.check(answer)


summary = GRADERS.summary
