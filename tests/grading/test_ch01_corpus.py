"""Chapter 1's graders against wrong answers written as learners write them.

Each entry is a wrong answer a learner could plausibly submit to exercises 1.1-1.4 and the
predictions 1.5-1.6, written here without looking at the graders' planted or generated
mistakes (other styles: einsum, ``F.linear``, loops, NumPy detours, list comprehensions,
``math`` instead of integers), with words its diagnosis must contain (classes: see
``corpus.py``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from corpus import classify, tally

from attnlab.grading.ch01 import (
    check_bytenet_path,
    check_gradient_norms,
    check_loop_time,
    check_path_length,
    check_rnn_forward,
    check_rnn_step,
    check_survives_20,
)
from attnlab.grading.status import WRONG_ANSWER, WRONG_TYPE

CHECKS = {
    "rnn_step": check_rnn_step,
    "rnn_forward": check_rnn_forward,
    "gradient_norms": check_gradient_norms,
    "path_length": check_path_length,
    "survives_20": check_survives_20,
    "bytenet_path": check_bytenet_path,
    "loop_time": check_loop_time,
}


def step(x_t, h_prev, W_ih, W_hh, b):
    return torch.tanh(x_t @ W_ih.T + h_prev @ W_hh.T + b)


def forward(x, W_ih, W_hh, b):
    h = torch.zeros(x.shape[0], W_hh.shape[0], dtype=x.dtype)
    hs = []
    for t in range(x.shape[1]):
        h = step(x[:, t], h, W_ih, W_hh, b)
        hs.append(h)
    return torch.stack(hs, dim=1), h


# ------------------------------------------------------------------ 1.1 one step


def step_linear_forgot_tanh(x_t, h_prev, W_ih, W_hh, b):
    return F.linear(x_t, W_ih, b) + F.linear(h_prev, W_hh)


def step_einsum_wrong_index(x_t, h_prev, W_ih, W_hh, b):
    a = torch.einsum("bi,ih->bh", x_t, W_ih)  # W_ih is (H, I), not (I, H)
    return torch.tanh(a + h_prev @ W_hh.T + b)


def step_weights_on_the_left(x_t, h_prev, W_ih, W_hh, b):
    return torch.tanh(W_ih @ x_t.T + W_hh @ h_prev.T + b[:, None])  # (H, B)


def step_numpy(x_t, h_prev, W_ih, W_hh, b):
    z = x_t.numpy() @ W_ih.numpy().T + h_prev.numpy() @ W_hh.numpy().T + b.numpy()
    return torch.tensor(np.tanh(z))


def step_relu(x_t, h_prev, W_ih, W_hh, b):
    return F.relu(x_t @ W_ih.T + h_prev @ W_hh.T + b)


def step_in_place(x_t, h_prev, W_ih, W_hh, b):
    h_prev += x_t @ W_ih.T
    return torch.tanh(h_prev @ W_hh.T + b)


def step_star(x_t, h_prev, W_ih, W_hh, b):
    return torch.tanh(x_t * W_ih + h_prev * W_hh + b)


def step_bias_twice(x_t, h_prev, W_ih, W_hh, b):
    return torch.tanh((x_t @ W_ih.T + b) + (h_prev @ W_hh.T + b))


def step_float32(x_t, h_prev, W_ih, W_hh, b):
    return torch.tanh(x_t.float() @ W_ih.T.float() + h_prev.float() @ W_hh.T.float() + b.float())


def step_matmul_hh_not_transposed(x_t, h_prev, W_ih, W_hh, b):
    return torch.tanh(torch.matmul(x_t, W_ih.t()) + torch.matmul(h_prev, W_hh) + b)


def step_only_input(x_t, h_prev, W_ih, W_hh, b):
    return torch.tanh(F.linear(x_t, W_ih, b))


def step_prev_weight_swap(x_t, h_prev, W_ih, W_hh, b):
    return torch.tanh(x_t @ W_ih.T + h_prev @ W_ih.T + b)


def step_sigmoid(x_t, h_prev, W_ih, W_hh, b):
    return 1 / (1 + torch.exp(-(x_t @ W_ih.T + h_prev @ W_hh.T + b)))


def step_no_return(x_t, h_prev, W_ih, W_hh, b):
    h_t = torch.tanh(x_t @ W_ih.T + h_prev @ W_hh.T + b)  # noqa: F841


# ------------------------------------------------------------------ 1.2 the loop


def forward_fresh_state(x, W_ih, W_hh, b):
    outs = []
    for t in range(x.shape[1]):
        h = torch.zeros(x.shape[0], W_hh.shape[0], dtype=x.dtype)
        outs.append(step(x[:, t], h, W_ih, W_hh, b))
    return torch.stack(outs, 1), outs[-1]


def forward_time_major(x, W_ih, W_hh, b):
    outs, h = forward(x, W_ih, W_hh, b)
    return torch.stack([outs[:, t] for t in range(x.shape[1])]), h  # (T, B, H)


def forward_store_before(x, W_ih, W_hh, b):
    h = torch.zeros(x.shape[0], W_hh.shape[0], dtype=x.dtype)
    outs = []
    for t in range(x.shape[1]):
        outs.append(h)
        h = step(x[:, t], h, W_ih, W_hh, b)
    return torch.stack(outs, 1), h


def forward_outputs_only(x, W_ih, W_hh, b):
    return forward(x, W_ih, W_hh, b)[0]


def forward_first_state(x, W_ih, W_hh, b):
    outs, _ = forward(x, W_ih, W_hh, b)
    return outs, outs[:, 0]


def forward_float32_state(x, W_ih, W_hh, b):
    h = torch.zeros(x.shape[0], W_hh.shape[0])  # float32
    outs = []
    for t in range(x.shape[1]):
        h = step(x[:, t], h, W_ih, W_hh, b)
        outs.append(h)
    return torch.stack(outs, 1), h


def forward_batch_index(x, W_ih, W_hh, b):
    h = torch.zeros(x.shape[0], W_hh.shape[0], dtype=x.dtype)
    outs = []
    for t in range(x.shape[1]):
        h = step(x[t], h, W_ih, W_hh, b)
        outs.append(h)
    return torch.stack(outs, 1), h


def forward_cat(x, W_ih, W_hh, b):
    h = torch.zeros(x.shape[0], W_hh.shape[0], dtype=x.dtype)
    outs = []
    for t in range(x.shape[1]):
        h = step(x[:, t], h, W_ih, W_hh, b)
        outs.append(h)
    return torch.cat(outs, dim=1), h


def forward_skip_first(x, W_ih, W_hh, b):
    h = torch.zeros(x.shape[0], W_hh.shape[0], dtype=x.dtype)
    outs = [h]
    for t in range(1, x.shape[1]):
        h = step(x[:, t], h, W_ih, W_hh, b)
        outs.append(h)
    return torch.stack(outs, 1), h


def forward_no_grad(x, W_ih, W_hh, b):
    with torch.no_grad():
        return forward(x, W_ih, W_hh, b)


def forward_swapped_weights(x, W_ih, W_hh, b):
    h = torch.zeros(x.shape[0], W_hh.shape[0], dtype=x.dtype)
    outs = []
    for t in range(x.shape[1]):
        h = step(x[:, t], h, W_hh, W_ih, b)
        outs.append(h)
    return torch.stack(outs, 1), h


def forward_ones_start(x, W_ih, W_hh, b):
    h = torch.ones(x.shape[0], W_hh.shape[0], dtype=x.dtype)
    outs = []
    for t in range(x.shape[1]):
        h = step(x[:, t], h, W_ih, W_hh, b)
        outs.append(h)
    return torch.stack(outs, 1), h


def forward_reversed(x, W_ih, W_hh, b):
    h = torch.zeros(x.shape[0], W_hh.shape[0], dtype=x.dtype)
    outs = []
    for t in reversed(range(x.shape[1])):
        h = step(x[:, t], h, W_ih, W_hh, b)
        outs.append(h)
    return torch.stack(outs, 1), h


# ------------------------------------------------------------------ 1.3 gradient norms


def norms_sum_backward(x, W_ih, W_hh, b):
    x = x.detach().requires_grad_()
    _, h = forward(x[None], W_ih, W_hh, b)
    h.sum().backward()
    return x.grad.norm(dim=-1).flip(0)


def norms_by_position(x, W_ih, W_hh, b):
    x = x.detach().requires_grad_()
    jac = torch.autograd.functional.jacobian(lambda z: forward(z[None], W_ih, W_hh, b)[1][0], x)
    return jac.pow(2).sum(dim=(0, 2)).sqrt()  # (T,), by position


def norms_squared(x, W_ih, W_hh, b):
    jac = torch.autograd.functional.jacobian(lambda z: forward(z[None], W_ih, W_hh, b)[1][0], x)
    return jac.pow(2).sum(dim=(0, 2)).flip(0)


def norms_no_requires_grad(x, W_ih, W_hh, b):
    _, h = forward(x[None], W_ih, W_hh, b)
    rows = [torch.autograd.grad(h[0, j], x, retain_graph=True)[0] for j in range(h.shape[1])]
    return torch.stack(rows).pow(2).sum((0, 2)).sqrt().flip(0)


def norms_no_retain(x, W_ih, W_hh, b):
    x = x.detach().requires_grad_()
    _, h = forward(x[None], W_ih, W_hh, b)
    total = torch.zeros(x.shape[0], dtype=x.dtype)
    for j in range(h.shape[1]):
        (g,) = torch.autograd.grad(h[0, j], x)
        total += (g**2).sum(-1)
    return total.sqrt().flip(0)


def norms_first_unit(x, W_ih, W_hh, b):
    x = x.detach().requires_grad_()
    _, h = forward(x[None], W_ih, W_hh, b)
    (g,) = torch.autograd.grad(h[0, 0], x)
    return g.norm(dim=-1).flip(0)


def norms_numpy(x, W_ih, W_hh, b):
    jac = torch.autograd.functional.jacobian(lambda z: forward(z[None], W_ih, W_hh, b)[1][0], x)
    return np.sqrt((jac.numpy() ** 2).sum(axis=(0, 2)))[::-1].copy()


def norms_flip_dim1(x, W_ih, W_hh, b):
    jac = torch.autograd.functional.jacobian(lambda z: forward(z[None], W_ih, W_hh, b)[1][0], x)
    return jac.pow(2).sum(dim=(0, 2)).sqrt().flip(1)


def norms_max_entry(x, W_ih, W_hh, b):
    jac = torch.autograd.functional.jacobian(lambda z: forward(z[None], W_ih, W_hh, b)[1][0], x)
    return jac.abs().amax(dim=(0, 2)).flip(0)


# ------------------------------------------------------------------ 1.4 path lengths


def path(n, kind, k, recurrent=None, conv=None, dilated=None, attention=1):
    if kind == "recurrent":
        return n - 1 if recurrent is None else recurrent(n)
    if kind == "convolution":
        return -(-(n - 1) // (k - 1)) if conv is None else conv(n, k)
    if kind == "dilated_convolution":
        if dilated is None:
            layers = 0
            while k**layers < n:
                layers += 1
            return layers
        return dilated(n, k)
    return attention


# ------------------------------------------------------------------ an independent learner's attempts
# Written by someone who took chapter 1 in a real kernel without reading the graders; each
# got a misleading or generic result before the graders were changed for it.


def l_step_tuple(x_t, h_prev, W_ih, W_hh, b):
    h = torch.tanh(x_t @ W_ih.T + h_prev @ W_hh.T + b)
    return h, h


def l_step_tanh_each_term(x_t, h_prev, W_ih, W_hh, b):
    return torch.tanh(x_t @ W_ih.T) + torch.tanh(h_prev @ W_hh.T) + b


def l_forward_list(x, W_ih, W_hh, b):
    h = torch.zeros(x.shape[0], W_hh.shape[0], dtype=x.dtype)
    outs = []
    for t in range(x.shape[1]):
        h = step(x[:, t], h, W_ih, W_hh, b)
        outs.append(h)
    return outs, h


def l_forward_h0_input_size(x, W_ih, W_hh, b):
    B, T, I = x.shape  # noqa: E741
    h = torch.zeros(B, I, dtype=x.dtype)
    outs = []
    for t in range(T):
        h = step(x[:, t], h, W_ih, W_hh, b)
        outs.append(h)
    return torch.stack(outs, 1), h


def l_forward_h0_hard_coded(x, W_ih, W_hh, b):
    h = torch.zeros(x.shape[0], 16, dtype=x.dtype)
    outs = []
    for t in range(x.shape[1]):
        h = step(x[:, t], h, W_ih, W_hh, b)
        outs.append(h)
    return torch.stack(outs, 1), h


def l_norms_plain_x(x, W_ih, W_hh, b):
    xb = x[None].requires_grad_()
    _, h = forward(xb, W_ih, W_hh, b)
    rows = [torch.autograd.grad(h[0, j], x, retain_graph=True)[0] for j in range(h.shape[1])]
    return torch.stack(rows).pow(2).sum((0, 2)).sqrt().flip(0)


def l_norms_sum_of_norms(x, W_ih, W_hh, b):
    J = torch.autograd.functional.jacobian(lambda z: forward(z[None], W_ih, W_hh, b)[1][0], x)
    return J.norm(dim=2).sum(0).flip(0)


def l_norms_of_the_norm(x, W_ih, W_hh, b):
    x = x.detach().requires_grad_()
    _, h_last = forward(x[None], W_ih, W_hh, b)
    h_last.norm().backward()
    return x.grad.norm(dim=-1).flip(0)


def l_norms_state_powers(x, W_ih, W_hh, b):
    outs, _ = forward(x[None], W_ih, W_hh, b)
    T = x.shape[0]
    norms, J = [], torch.eye(W_hh.shape[0], dtype=x.dtype)
    for d in range(T):  # d h_T / d h_(T-1-d), through the tanh derivatives
        norms.append(J.norm())
        t = T - 1 - d
        J = J @ torch.diag(1 - outs[0, t] ** 2) @ W_hh
    return torch.stack(norms)


def l_norms_shifted(x, W_ih, W_hh, b):
    J = torch.autograd.functional.jacobian(lambda z: forward(z[None], W_ih, W_hh, b)[1][0], x)
    n = J.pow(2).sum(dim=(0, 2)).sqrt().flip(0)
    return torch.roll(n, 1)


def _forward_unbatched_only(x, W_ih, W_hh, b):
    B, T, _ = x.shape
    h = torch.zeros(B, W_hh.shape[0], dtype=x.dtype)
    outs = []
    for t in range(T):
        h = step(x[:, t], h, W_ih, W_hh, b)
        outs.append(h)
    return torch.stack(outs, 1), h


def l_norms_no_batch_axis(x, W_ih, W_hh, b):
    x = x.detach().requires_grad_()
    _, h = _forward_unbatched_only(x, W_ih, W_hh, b)
    rows = [torch.autograd.grad(h[0, j], x, retain_graph=True)[0] for j in range(h.shape[1])]
    return torch.stack(rows).pow(2).sum((0, 2)).sqrt().flip(0)


def l_norms_negative_step(x, W_ih, W_hh, b):
    J = torch.autograd.functional.jacobian(lambda z: forward(z[None], W_ih, W_hh, b)[1][0], x)
    return J.pow(2).sum(dim=(0, 2)).sqrt()[::-1]


# ------------------------------------------------------------------ round 3
# The second independent learner's non-specific cases, and more of the same families.


def r3_step_tanh_on_recurrent_only(x_t, h_prev, W_ih, W_hh, b):
    return x_t @ W_ih.T + torch.tanh(h_prev @ W_hh.T) + b


def r3_step_tanh_on_input_only(x_t, h_prev, W_ih, W_hh, b):
    return torch.tanh(x_t @ W_ih.T) + h_prev @ W_hh.T + b


def r3_forward_aliased(x, W_ih, W_hh, b):
    h = torch.zeros(x.shape[0], W_hh.shape[0], dtype=x.dtype)
    outs = []
    for t in range(x.shape[1]):
        h[:] = step(x[:, t], h, W_ih, W_hh, b)
        outs.append(h)
    return torch.stack(outs, dim=1), h


def r3_forward_copy_into(x, W_ih, W_hh, b):
    h = torch.zeros(x.shape[0], W_hh.shape[0], dtype=x.dtype)
    outs = []
    for t in range(x.shape[1]):
        h.copy_(step(x[:, t], h, W_ih, W_hh, b))
        outs.append(h)
    return torch.stack(outs, dim=1), h


def r3_forward_fixed_length(x, W_ih, W_hh, b):
    h = torch.zeros(x.shape[0], W_hh.shape[0], dtype=x.dtype)
    outs = []
    for t in range(6):
        h = step(x[:, t], h, W_ih, W_hh, b)
        outs.append(h)
    return torch.stack(outs, dim=1), h


def r3_forward_fresh_rnn(x, W_ih, W_hh, b):
    rnn = torch.nn.RNN(x.shape[-1], W_hh.shape[0], batch_first=True).double()
    out, h = rnn(x)
    return out, h[0]


def r3_forward_fresh_linear(x, W_ih, W_hh, b):
    cell = torch.nn.RNNCell(x.shape[-1], W_hh.shape[0]).double()
    h = torch.zeros(x.shape[0], W_hh.shape[0], dtype=x.dtype)
    outs = []
    for t in range(x.shape[1]):
        h = cell(x[:, t], h)
        outs.append(h)
    return torch.stack(outs, dim=1), h


def _r3_jacobian(x, W_ih, W_hh, b):
    return torch.autograd.functional.jacobian(lambda z: forward(z[None], W_ih, W_hh, b)[1][0], x)


def r3_norms_own_step(x, W_ih, W_hh, b):
    x = x.detach().requires_grad_()
    out = forward(x[None], W_ih, W_hh, b)[0][0]
    T, H = out.shape
    norms = []
    for t in range(T):
        rows = [torch.autograd.grad(out[t, j], x, retain_graph=True)[0][t] for j in range(H)]
        norms.append(torch.stack(rows).norm())
    return torch.stack(norms).flip(0)


def r3_norms_l1(x, W_ih, W_hh, b):
    return _r3_jacobian(x, W_ih, W_hh, b).abs().sum(dim=(0, 2)).flip(0)


def r3_norms_max(x, W_ih, W_hh, b):
    return _r3_jacobian(x, W_ih, W_hh, b).abs().amax(dim=(0, 2)).flip(0)


def r3_norms_per_unit(x, W_ih, W_hh, b):
    return _r3_jacobian(x, W_ih, W_hh, b).norm(dim=(1, 2)).flip(0)


def r3_norms_per_unit_unflipped(x, W_ih, W_hh, b):
    return torch.linalg.vector_norm(_r3_jacobian(x, W_ih, W_hh, b), dim=(1, 2))


def r3_norms_grad_accumulates(x, W_ih, W_hh, b):
    x = x.detach().requires_grad_()
    _, h_last = forward(x[None], W_ih, W_hh, b)
    sq = torch.zeros(x.shape[0], dtype=x.dtype)
    for j in range(h_last.shape[1]):
        h_last[0, j].backward(retain_graph=True)
        sq += (x.grad**2).sum(dim=1)
    return sq.sqrt().flip(0)


# ------------------------------------------------------------------ round 4


def r4_norms_no_detach_copy(x, W_ih, W_hh, b):
    x.requires_grad_(True)  # the caller's own tensor
    _, h_last = forward(x[None], W_ih, W_hh, b)
    sq = torch.zeros(x.shape[0], dtype=x.dtype)
    for j in range(h_last.shape[-1]):
        (g,) = torch.autograd.grad(h_last[0, j], x, retain_graph=True)
        sq += (g**2).sum(dim=1)
    return sq.sqrt().flip(0)


def r4_norms_backward_on_caller_x(x, W_ih, W_hh, b):
    x.requires_grad = True
    _, h_last = forward(x[None], W_ih, W_hh, b)
    sq = torch.zeros(x.shape[0], dtype=x.dtype)
    for j in range(h_last.shape[-1]):
        x.grad = None
        h_last[0, j].backward(retain_graph=True)
        sq += (x.grad**2).sum(dim=1)
    return sq.sqrt().flip(0).detach()


# ------------------------------------------------------------------ round 5 (learner round 3)


def r5_forward_backwards_in_time(x, W_ih, W_hh, b):
    h = torch.zeros(x.shape[0], W_hh.shape[0], dtype=x.dtype)
    outs = []
    for t in reversed(range(x.shape[1])):
        h = step(x[:, t], h, W_ih, W_hh, b)
        outs.append(h)
    return torch.stack(outs[::-1], dim=1), h


def r5_forward_backwards_unreordered(x, W_ih, W_hh, b):
    h = torch.zeros(x.shape[0], W_hh.shape[0], dtype=x.dtype)
    outs = []
    for t in range(x.shape[1] - 1, -1, -1):
        h = step(x[:, t], h, W_ih, W_hh, b)
        outs.append(h)
    return torch.stack(outs, dim=1), h


def r5_norms_spectral(x, W_ih, W_hh, b):
    J = _r3_jacobian(x, W_ih, W_hh, b)  # (H, T, I)
    return torch.stack([torch.linalg.matrix_norm(J[:, t], ord=2) for t in range(x.shape[0])]).flip(
        0
    )


def r5_norms_nuclear(x, W_ih, W_hh, b):
    J = _r3_jacobian(x, W_ih, W_hh, b).permute(1, 0, 2)  # (T, H, I)
    return torch.linalg.matrix_norm(J, ord="nuc").flip(0)


def r5_norms_list_of_floats(x, W_ih, W_hh, b):
    return [float(v) for v in _r3_jacobian(x, W_ih, W_hh, b).norm(dim=(0, 2)).flip(0)]


# ------------------------------------------------------------------ learner round 4 (chapters 1-2)


def r6_norms_first_state(x, W_ih, W_hh, b):
    x = x.detach().clone().requires_grad_(True)
    out, _ = forward(x[None], W_ih, W_hh, b)
    h = out[0, 0]  # meant out[0, -1]
    sq = torch.zeros(x.shape[0], dtype=x.dtype)
    for j in range(h.shape[0]):
        (g,) = torch.autograd.grad(h[j], x, retain_graph=True)
        sq += (g**2).sum(1)
    return sq.sqrt().flip(0)


CORPUS = [
    ("rnn_step", "F.linear, no tanh", step_linear_forgot_tanh, "tanh"),
    ("rnn_step", "einsum with W_ih as (I, H)", step_einsum_wrong_index, "einsum"),
    ("rnn_step", "weights on the left, (H, B)", step_weights_on_the_left, "transposed"),
    ("rnn_step", "through NumPy", step_numpy, "NumPy"),
    ("rnn_step", "relu", step_relu, "relu"),
    ("rnn_step", "h_prev += ...", step_in_place, "in place"),
    ("rnn_step", "* instead of @", step_star, "must match the size"),
    ("rnn_step", "bias added twice", step_bias_twice, "b"),
    ("rnn_step", "float32", step_float32, "float32"),
    ("rnn_step", "matmul with W_hh untransposed", step_matmul_hh_not_transposed, "W_hh"),
    ("rnn_step", "only the input term", step_only_input, "previous state"),
    ("rnn_step", "W_ih for the state too", step_prev_weight_swap, "W_ih"),
    ("rnn_step", "sigmoid by hand", step_sigmoid, "sigmoid"),
    ("rnn_step", "no return", step_no_return, "return"),
    ("rnn_forward", "fresh zeros each step", forward_fresh_state, "starts again from zeros"),
    ("rnn_forward", "time-major stack", forward_time_major, "(T, B, H)"),
    ("rnn_forward", "stored before the update", forward_store_before, "one step late"),
    ("rnn_forward", "returned outputs only", forward_outputs_only, "return both"),
    ("rnn_forward", "h_last is the first state", forward_first_state, "h_last"),
    ("rnn_forward", "float32 zeros", forward_float32_state, "float32"),
    ("rnn_forward", "x[t] for x[:, t]", forward_batch_index, "indexes along the wrong axis"),
    ("rnn_forward", "torch.cat", forward_cat, "which stacking makes"),
    ("rnn_forward", "loop from 1", forward_skip_first, "skips the first step"),
    ("rnn_forward", "torch.no_grad", forward_no_grad, "no_grad"),
    ("rnn_forward", "weights swapped in the call", forward_swapped_weights, "W_hh"),
    ("rnn_forward", "h starts at ones", forward_ones_start, "zero"),
    ("rnn_forward", "reversed time", forward_reversed, "backwards"),
    ("gradient_norms", "backward of h.sum()", norms_sum_backward, "single number"),
    ("gradient_norms", "by position", norms_by_position, "distance"),
    ("gradient_norms", "squared norms", norms_squared, "square root"),
    ("gradient_norms", "x does not require grad", norms_no_requires_grad, "require"),
    ("gradient_norms", "no retain_graph", norms_no_retain, "retain_graph"),
    ("gradient_norms", "one hidden unit", norms_first_unit, "every hidden unit"),
    ("gradient_norms", "NumPy result", norms_numpy, "torch"),
    ("gradient_norms", "flip(1) on a vector", norms_flip_dim1, "dim"),
    ("gradient_norms", "max entry, not the norm", norms_max_entry, "Frobenius"),
    ("path_length", "recurrent n", lambda n, kind, k: path(n, kind, k, recurrent=lambda n: n), "n - 1 steps"),
    ("path_length", "conv with /", lambda n, kind, k: path(n, kind, k, conv=lambda n, k: (n - 1) / (k - 1)), "expected an int"),
    ("path_length", "conv int()", lambda n, kind, k: path(n, kind, k, conv=lambda n, k: int((n - 1) / (k - 1))), "round"),
    ("path_length", "conv n // k", lambda n, kind, k: path(n, kind, k, conv=lambda n, k: n // k), "k - 1"),
    ("path_length", "dilated ceil(log)", lambda n, kind, k: path(n, kind, k, dilated=lambda n, k: math.ceil(math.log(n, k))), "math.log"),
    ("path_length", "dilated <=", lambda n, kind, k: path(n, kind, k, dilated=lambda n, k: next(L for L in range(60) if k**L > n)), "boundary"),
    ("path_length", "attention 0", lambda n, kind, k: path(n, kind, k, attention=0), "attention"),
    ("path_length", "dilated log2", lambda n, kind, k: path(n, kind, k, dilated=lambda n, k: math.ceil(math.log2(n))), "dilated"),
    ("survives_20", "0.9 ** 19", 0.9**19, "19 factors"),
    ("survives_20", "0.1", 0.1, "22 factors"),
    ("survives_20", "18", 18, "multiply"),
    ("bytenet_path", "111 (plain convolution)", 111, "plain convolution"),
    ("bytenet_path", "4 (1001 positions)", 4, "1000 positions"),
    # The independent learner's attempts (see the section above).
    ("rnn_step", "learner: return h, h", l_step_tuple, "only h_t"),
    ("rnn_step", "learner: tanh on each product, b outside", l_step_tanh_each_term, "the whole sum, once"),
    ("rnn_forward", "learner: outputs as a list", l_forward_list, "stack"),
    ("rnn_forward", "learner: h0 sized by the input", l_forward_h0_input_size, "W_hh.shape[0]"),
    ("rnn_forward", "learner: h0 with 16 columns", l_forward_h0_hard_coded, "W_hh.shape[0]"),
    ("gradient_norms", "learner: grad w.r.t. a plain x", l_norms_plain_x, "does not require grad"),
    ("gradient_norms", "learner: added the units' norms", l_norms_sum_of_norms, "added the norms"),
    ("gradient_norms", "learner: gradient of the norm of h_T", l_norms_of_the_norm, "norm of h_T"),
    ("gradient_norms", "learner: d h_T / d h_t", l_norms_state_powers, "with respect to the states"),
    ("gradient_norms", "learner: shifted by one", l_norms_shifted, "shifted by one"),
    ("gradient_norms", "learner: rnn_forward without a batch axis", l_norms_no_batch_axis, "x[None]"),
    ("gradient_norms", "learner: [::-1] on a tensor", l_norms_negative_step, ".flip("),
    ("path_length", "learner: int(math.log(n, k))", lambda n, kind, k: path(n, kind, k, dilated=lambda n, k: int(math.log(n, k))), "rounded the number of dilated layers down"),
    ("path_length", "learner: attention 0 (returned 0)", lambda n, kind, k: 0 if kind == "self_attention" else path(n, kind, k), "one step"),
    ("path_length", "learner: log2(n) ignoring k", lambda n, kind, k: path(n, kind, k, dilated=lambda n, k: math.ceil(math.log2(n))), "k, not 2"),
    ("path_length", "learner: returned k ** L", lambda n, kind, k: path(n, kind, k, dilated=lambda n, k: k ** path(n, kind, k)), "view"),
    ("path_length", "learner: k hard-coded as 3", lambda n, kind, k: path(n, kind, 3), "k = 3"),
    ("survives_20", "learner: 0.135 (e^-2)", 0.135, "e^-2"),
    ("survives_20", "learner: 12 (a percentage)", 12, "percentage"),
    ("survives_20", "learner: 0.88 (the part lost)", 0.88, "1 minus"),
    ("survives_20", "learner: 0.13", 0.13, "close"),
    ("bytenet_path", "learner: 2", 2, "100 positions"),
    ("loop_time", "round 2: 'quadruple' (a typo of the choice)", "quadruple", "T × T"),
    ("loop_time", "round 2: 'quadruples'", "quadruples", "T × T"),
    ("rnn_step", "round 3: tanh on the recurrent term only", r3_step_tanh_on_recurrent_only, "only the recurrent term"),
    ("rnn_step", "round 3: tanh on the input term only", r3_step_tanh_on_input_only, "only the input term"),
    ("rnn_forward", "round 3: h[:] = ... aliases every output", r3_forward_aliased, "same tensor"),
    ("rnn_forward", "round 3: h.copy_(...) aliases every output", r3_forward_copy_into, "same tensor"),
    ("rnn_forward", "round 3: range(6)", r3_forward_fixed_length, "x.shape[1]"),
    ("rnn_forward", "round 3: a fresh nn.RNN", r3_forward_fresh_rnn, "random"),
    ("rnn_forward", "round 3: a fresh nn.RNNCell", r3_forward_fresh_linear, "random"),
    ("gradient_norms", "round 3: d h_t / d x_t", r3_norms_own_step, "its own input"),
    ("gradient_norms", "round 3: L1 norm", r3_norms_l1, "L1"),
    ("gradient_norms", "round 3: max norm", r3_norms_max, "max norm"),
    ("gradient_norms", "round 3: one norm per unit", r3_norms_per_unit, "per hidden unit"),
    ("gradient_norms", "round 3: one norm per unit, not flipped", r3_norms_per_unit_unflipped, "per hidden unit"),
    ("gradient_norms", "round 3: x.grad never zeroed", r3_norms_grad_accumulates, "accumulates"),
    ("survives_20", "round 3: 0.01", 0.01, "44 factors"),
    ("survives_20", "round 3: 0.001", 0.001, "66 factors"),
    ("survives_20", "round 3: 0.35 (ten steps)", 0.35, "10 factors"),
    ("bytenet_path", "round 3: 500 (plain width 3)", 500, "plain convolution"),
    ("bytenet_path", "round 3: 7 (k = 3)", 7, "k = 3"),
    ("bytenet_path", "round 3: 10 (k itself)", 10, "width k"),
    ("bytenet_path", "round 3: 1000 (the view)", 1000, "number of layers"),
    ("loop_time", "round 3: 'halves'", "halves", "faster"),
    ("loop_time", "round 3: 4", 4, "T × T"),
    ("loop_time", "round 3: 'grows quadratically'", "grows quadratically", "T × T"),
    ("loop_time", "round 3: 'triples'", "triples", "threefold"),
    ("loop_time", "round 3: 'linear'", "linear", "right idea"),
    ("loop_time", "round 3: 'it grows linearly'", "it grows linearly", "right idea"),
    ("loop_time", "round 3: 'constant'", "constant", "overlap"),
    ("rnn_forward", "round 3 family: h_last = outputs.sum(1)", lambda x, W_ih, W_hh, b: (forward(x, W_ih, W_hh, b)[0], forward(x, W_ih, W_hh, b)[0].sum(1)), "sum of all the states"),
    ("rnn_forward", "round 3 family: h_last = outputs.mean(1)", lambda x, W_ih, W_hh, b: (forward(x, W_ih, W_hh, b)[0], forward(x, W_ih, W_hh, b)[0].mean(1)), "mean of all the states"),
    ("rnn_forward", "round 3 family: x[:, 0] at every step", lambda x, W_ih, W_hh, b: forward(x[:, :1].repeat(1, x.shape[1], 1), W_ih, W_hh, b), "first token"),
    ("gradient_norms", "round 3 family: root mean square", lambda x, W_ih, W_hh, b: _r3_jacobian(x, W_ih, W_hh, b).pow(2).mean(dim=(0, 2)).sqrt().flip(0), "root mean square"),
    ("gradient_norms", "round 3 family: divided by the first norm", lambda x, W_ih, W_hh, b: (lambda n: n / n[0])(_r3_jacobian(x, W_ih, W_hh, b).norm(dim=(0, 2)).flip(0)), "divided the norms by the first"),
    ("gradient_norms", "round 3 family: log of the norms", lambda x, W_ih, W_hh, b: _r3_jacobian(x, W_ih, W_hh, b).norm(dim=(0, 2)).flip(0).log(), "logarithms"),
    ("path_length", "round 3 family: ceil(log_k(n - 1))", lambda n, kind, k: path(n, kind, k) if kind != "dilated_convolution" else math.ceil(math.log(n - 1) / math.log(k)), "n - 1 positions"),
    ("bytenet_path", "round 4: 100 (the view of two layers)", 100, "two dilated layers"),
    ("gradient_norms", "round 4: requires_grad_ on the caller's x", r4_norms_no_detach_copy, "detach"),
    ("gradient_norms", "round 4: x.requires_grad = True and backward", r4_norms_backward_on_caller_x, "requires_grad"),
    ("rnn_forward", "round 5: the loop backwards in time, reordered", r5_forward_backwards_in_time, "backwards in time"),
    ("rnn_forward", "round 5: the loop backwards in time", r5_forward_backwards_unreordered, "backwards in time"),
    ("gradient_norms", "round 5: spectral norm of each Jacobian", r5_norms_spectral, "spectral norm"),
    ("gradient_norms", "round 5: nuclear norm of each Jacobian", r5_norms_nuclear, "nuclear norm"),
    ("gradient_norms", "round 5: a list of floats", r5_norms_list_of_floats, "list of numbers"),
    ("bytenet_path", "round 5: 2.9", 2.9, "whole number"),
    ("bytenet_path", "round 5: log10(1000) by hand, 2.99", 2.99, "whole number"),
    ("path_length", "round 2: dilated int(log) + 1", lambda n, kind, k: path(n, kind, k) if kind != "dilated_convolution" else int(math.log(n) / math.log(k)) + 1, "int(log) + 1"),
    ("gradient_norms", "learner r4: the first state differentiated", r6_norms_first_state, "first state h_1"),
    ("path_length", "learner r4: round(log(n, k))", lambda n, kind, k: path(n, kind, k) if kind != "dilated_convolution" else round(math.log(n, k)), "nearest whole number"),
    ("survives_20", "learner r4: 1 - 0.1 * 20", 1 - 0.1 * 20, "cannot be negative"),
]  # fmt: skip


# ------------------------------------------------------------------ learner round 5 (chapters 1-2)


def r5l_step_bias_column(x_t, h_prev, W_ih, W_hh, b):
    return torch.tanh(x_t @ W_ih.T + h_prev @ W_hh.T + b[:, None])


def r5l_step_tanh_each_term(x_t, h_prev, W_ih, W_hh, b):
    return torch.tanh(x_t @ W_ih.T) + torch.tanh(h_prev @ W_hh.T + b)


def r5l_forward_h0_kept(x, W_ih, W_hh, b):
    B, T, _ = x.shape
    h = torch.zeros(B, W_hh.shape[0], dtype=x.dtype)
    outs = [h]
    for t in range(T):
        h = step(x[:, t], h, W_ih, W_hh, b)
        outs.append(h)
    return torch.stack(outs, dim=1), h


def r5l_forward_last_of_batch(x, W_ih, W_hh, b):
    B, T, _ = x.shape
    h = torch.zeros(B, W_hh.shape[0], dtype=x.dtype)
    outs = []
    for t in range(T):
        h = step(x[:, t], h, W_ih, W_hh, b)
        outs.append(h)
    outputs = torch.stack(outs, dim=1)
    return outputs, outputs[-1]


def r5l_forward_time_major_unpack(x, W_ih, W_hh, b):
    T, B, _ = x.shape
    h = torch.zeros(B, W_hh.shape[0], dtype=x.dtype)
    outs = []
    for t in range(T):
        h = step(x[t], h, W_ih, W_hh, b)
        outs.append(h)
    return torch.stack(outs, dim=1), h


def r5l_path_floor_plus_one(n, kind, k):
    if kind == "recurrent":
        return n - 1
    if kind == "convolution":
        return (n - 1) // (k - 1) + 1
    if kind == "dilated_convolution":
        L = 0
        while k**L < n:
            L += 1
        return L
    return 1


CORPUS += [
    ("rnn_step", "learner r5: the bias as a column b[:, None]", r5l_step_bias_column, "made into a column"),
    ("rnn_forward", "learner r5: h0 kept among the outputs", r5l_forward_h0_kept, "initial state"),
    ("rnn_forward", "learner r5: h_last = outputs[-1]", r5l_forward_last_of_batch, "a[-1]"),
    ("rnn_forward", "learner r5: T, B, _ = x.shape", r5l_forward_time_major_unpack, "T, B, _ = x.shape"),
    ("loop_time", "learner r5: O(T^2)", "O(T^2)", "attention's score matrix"),
    ("rnn_step", "learner r5: tanh of each term, bias with the state", r5l_step_tanh_each_term, "each term separately"),
    ("survives_20", "learner r5: 1.0 (a linear RNN keeps everything)", 1.0, "linear does not mean"),
    ("path_length", "learner r5: (n - 1) // (k - 1) + 1", r5l_path_floor_plus_one, "ceiling"),
]  # fmt: skip


# ------------------------------------------------------------------ learner, round 6


def r6l_step_no_grad(x_t, h_prev, W_ih, W_hh, b):
    with torch.no_grad():
        return torch.tanh(x_t @ W_ih.T + h_prev @ W_hh.T + b)


def r6l_forward_no_grad_step(x, W_ih, W_hh, b):
    B, T, _ = x.shape
    h = torch.zeros(B, W_hh.shape[0], dtype=x.dtype)
    outs = []
    for t in range(T):
        h = r6l_step_no_grad(x[:, t], h, W_ih, W_hh, b)
        outs.append(h)
    return torch.stack(outs, dim=1), h


def r6l_grad_own_step_no_grad(x, W_ih, W_hh, b):
    xx = x.detach().clone().requires_grad_(True)
    _, h = r6l_forward_no_grad_step(xx[None], W_ih, W_hh, b)
    sq = torch.zeros(x.shape[0], dtype=x.dtype)
    for j in range(h.shape[1]):
        (g,) = torch.autograd.grad(h[0, j], xx, retain_graph=True)
        sq += (g**2).sum(dim=1)
    return sq.sqrt().flip(0)


def r6l_grad_forward_under_no_grad(x, W_ih, W_hh, b):
    xx = x.detach().clone().requires_grad_(True)
    with torch.no_grad():
        _, h = forward(xx[None], W_ih, W_hh, b)
    sq = torch.zeros(x.shape[0], dtype=x.dtype)
    for j in range(h.shape[1]):
        (g,) = torch.autograd.grad(h[0, j], xx, retain_graph=True)
        sq += (g**2).sum(dim=1)
    return sq.sqrt().flip(0)


def r6l_grad_unsqueeze_1(x, W_ih, W_hh, b):
    xx = x.detach().clone().requires_grad_(True)
    _, h = forward(xx.unsqueeze(1), W_ih, W_hh, b)
    sq = torch.zeros(x.shape[0], dtype=x.dtype)
    for j in range(h.shape[1]):
        (g,) = torch.autograd.grad(h[:, j].sum(), xx, retain_graph=True)
        sq += (g**2).sum(dim=1)
    return sq.sqrt().flip(0)


def r6l_grad_reversed_input(x, W_ih, W_hh, b):
    xx = x.flip(0).detach().clone().requires_grad_(True)
    _, h = forward(xx[None], W_ih, W_hh, b)
    sq = torch.zeros(x.shape[0], dtype=x.dtype)
    for j in range(h.shape[1]):
        (g,) = torch.autograd.grad(h[0, j], xx, retain_graph=True)
        sq += (g**2).sum(dim=1)
    return sq.sqrt()


def r6l_grad_every_step(x, W_ih, W_hh, b):
    xx = x.detach().clone().requires_grad_(True)
    out, h = forward(xx[None], W_ih, W_hh, b)
    sq = torch.zeros(x.shape[0], dtype=x.dtype)
    for j in range(h.shape[1]):
        (g,) = torch.autograd.grad(out[0, :, j].sum(), xx, retain_graph=True)
        sq += (g**2).sum(dim=1)
    return sq.sqrt().flip(0)


def _r6l_path(conv=None, dilated_k=None, recurrent=None, contains=False):
    def path_length(n, kind, k):
        if kind == "recurrent":
            return recurrent if recurrent is not None else n - 1
        if (contains and "convolution" in kind) or kind == "convolution":
            return conv(n, k) if conv else -(-(n - 1) // (k - 1))
        if kind == "dilated_convolution":
            L, base = 0, dilated_k or k
            while base**L < n:
                L += 1
            return L
        return 1

    return path_length


def r6l_path_n_floor(n, kind, k):
    if kind == "recurrent":
        return n - 1
    if kind == "convolution":
        return n // (k - 1)
    if kind == "dilated_convolution":
        L = 0
        while k**L < n:
            L += 1
        return L
    return 1


def r6l_path_ceil_n(n, kind, k):
    return {
        "recurrent": n - 1,
        "convolution": math.ceil(n / (k - 1)),
        "dilated_convolution": next(L for L in range(64) if k**L >= n),
        "self_attention": 1,
    }[kind]


def r6l_step_tanh_twice(x_t, h_prev, W_ih, W_hh, b):
    h = torch.tanh(x_t @ W_ih.T + h_prev @ W_hh.T + b)
    return torch.tanh(h)


def r6l_step_terms_multiplied(x_t, h_prev, W_ih, W_hh, b):
    return torch.tanh((x_t @ W_ih.T) * (h_prev @ W_hh.T) + b)


def r6l_forward_squeezed(x, W_ih, W_hh, b):
    B, T, _ = x.shape
    h = torch.zeros(B, W_hh.shape[0], dtype=x.dtype)
    outs = []
    for t in range(T):
        h = step(x[:, t], h, W_ih, W_hh, b)
        outs.append(h)
    return torch.stack(outs, dim=1).squeeze(), h


CORPUS += [
    ("gradient_norms", "learner r6: own rnn_step under no_grad", r6l_grad_own_step_no_grad, "which your code calls"),
    ("gradient_norms", "learner r6: forward under no_grad", r6l_grad_forward_under_no_grad, "your function uses `torch.no_grad()`"),
    ("gradient_norms", "learner r6: x.unsqueeze(1)", r6l_grad_unsqueeze_1, "one step each"),
    ("gradient_norms", "learner r6: input reversed, not the norms", r6l_grad_reversed_input, "reversed the input"),
    ("gradient_norms", "learner r6: every step's states", r6l_grad_every_step, "every time step"),
    ("path_length", "learner r6: n // (k - 1)", r6l_path_n_floor, "divides n, the number of positions"),
    ("path_length", "learner r6: ceil(n / (k - 1))", r6l_path_ceil_n, "the rounding up is right"),
    ("path_length", "learner r6: round((n - 1) / (k - 1))", _r6l_path(conv=lambda n, k: round((n - 1) / (k - 1))), "round()"),
    ("path_length", "learner r6: ceil(...) + 1", _r6l_path(conv=lambda n, k: math.ceil((n - 1) / (k - 1)) + 1), "no extra input layer"),
    ("path_length", "learner r6: convolution with k = 3 typed in", _r6l_path(conv=lambda n, k: math.ceil((n - 1) / 2)), "k = 3"),
    ("path_length", "learner r6: dilated with k = 3 typed in", _r6l_path(dilated_k=3), "k = 3"),
    ("path_length", "learner r6: recurrent 999 typed in", _r6l_path(recurrent=999), "n = 1000"),
    ("path_length", "learner r6: 'convolution' in kind first", _r6l_path(contains=True), "also matches"),
    ("rnn_step", "learner r6: tanh twice", r6l_step_tanh_twice, "tanh twice"),
    ("rnn_step", "learner r6: the two terms multiplied", r6l_step_terms_multiplied, "multiplied the input term"),
    ("rnn_forward", "learner r6: stack(...).squeeze()", r6l_forward_squeezed, "`.squeeze()` removed"),
    ("survives_20", "learner r6: 0.1 (one step's loss)", 0.1, "one step takes away"),
    ("survives_20", "learner r6: 0.9 ** 40 (two factors per step)", 0.9**40, "two per step"),
    ("survives_20", "learner r6: 0.012 (a decimal slip)", 0.012, "ten times too small"),
    ("survives_20", "learner r6: 0.15 (a rough guess)", 0.15, "about 18 factors"),
]  # fmt: skip

# ------------------------------------------------------------------ learner, round 7


def r7l_step_diagonal(x_t, h_prev, W_ih, W_hh, b):
    return torch.tanh(x_t @ W_ih.T + h_prev * W_hh.diagonal() + b)


def r7l_norms_rolled(x, W_ih, W_hh, b):
    xx = x.detach().clone().requires_grad_(True)
    _, h = forward(xx[None], W_ih, W_hh, b)
    sq = torch.zeros(x.shape[0], dtype=x.dtype)
    for j in range(h.shape[1]):
        (g,) = torch.autograd.grad(h[0, j], xx, retain_graph=True)
        sq += (g**2).sum(dim=1)
    n = sq.sqrt()  # norms by position, correct
    return torch.cat([n[-1:], n[:-1]])  # "put the last input first"


def r7l_norms_float32(x, W_ih, W_hh, b):
    return r7l_norms_rolled(x, W_ih, W_hh, b).roll(-1, 0).flip(0).float()


def r7l_path_misspelt_kind(n, kind, k):
    if kind == "recurrent":
        return n - 1
    elif kind == "convolution":
        return -(-(n - 1) // (k - 1))
    elif kind == "dilated":  # the exercise's kind is 'dilated_convolution'
        L = 0
        while k**L < n:
            L += 1
        return L
    elif kind == "self_attention":
        return 1


CORPUS += [
    ("path_length", "learner r7: kind == 'dilated' (misspelt)", r7l_path_misspelt_kind, "none of your branches handles kind='dilated_convolution'"),
    ("rnn_step", "learner r7: h_prev * W_hh.diagonal()", r7l_step_diagonal, "elementwise product"),
    ("gradient_norms", "learner r7: rolled by one instead of reversed", r7l_norms_rolled, "rolled by one"),
    ("gradient_norms", "learner r7: .float() on the result", r7l_norms_float32, "a tensor of dtype float32"),
    ("path_length", "learner r7: conv (n - 1) / (k - 1), a float", _r6l_path(conv=lambda n, k: (n - 1) / (k - 1)), "a float (4.0)"),
    ("survives_20", "learner r7: 1 - 20 * 0.01 (a linear loss)", 1 - 20 * 0.01, "linear loss"),
    ("bytenet_path", "learner r7: 99 (1000 / 10 - 1)", 99, "plain convolution"),
    ("bytenet_path", "learner r7: 1000 ** (1 / 10)", 1000 ** (1 / 10), "10th root"),
    ("bytenet_path", "learner r7: math.log2(1000)", math.log2(1000), "base 2"),
    ("bytenet_path", "learner r7: math.log(1000), natural", math.log(1000), "natural log"),
    ("loop_time", "learner r7: 'squares'", "squares", "T × T"),
    ("loop_time", "learner r7: 'x4'", "x4", "T × T"),
]  # fmt: skip


def test_a_one_axis_result_in_another_order_is_not_described_by_axes():
    result = check_gradient_norms(r7l_norms_rolled)
    text = f"{result.message}\n{result.diagnosis}"
    assert "rolled by one" in text and "axis 0" not in text, result.text


@pytest.mark.parametrize("answer", ["it doubles", "Doubles", "double"])
def test_the_right_choice_in_a_short_phrase_passes(answer):
    assert check_loop_time(answer).passed, check_loop_time(answer).text


@pytest.mark.parametrize("answer", [2, "linear", "O(T)"])
def test_the_right_idea_in_another_form_is_a_form_problem_not_a_wrong_idea(answer):
    result = check_loop_time(answer)
    assert not result.passed and result.status == WRONG_TYPE, result.text
    assert "answer with one of the words" in result.message and "'doubles'" in result.diagnosis


@pytest.mark.parametrize("answer", [4, "O(T^2)", "triples"])
def test_a_wrong_idea_off_the_menu_stays_a_wrong_answer(answer):
    assert check_loop_time(answer).status == WRONG_ANSWER


@pytest.mark.parametrize("answer", ["it does not double", "doubles or quadruples"])
def test_a_phrase_that_names_no_single_choice_is_not_read_as_one(answer):
    assert not check_loop_time(answer).passed


def test_the_corpus_covers_every_exercise_and_is_large():
    assert {e for e, *_ in CORPUS} == set(CHECKS)
    assert len(CORPUS) >= 45
    labels = [(e, what) for e, what, _, _ in CORPUS]
    assert len(labels) == len(set(labels))


@pytest.mark.parametrize(
    ("exercise", "what", "answer", "words"), CORPUS, ids=[f"{e}: {w}" for e, w, _, _ in CORPUS]
)
def test_no_wrong_answer_passes_or_is_misled(exercise, what, answer, words):
    kind, result = classify(CHECKS[exercise], answer, words)
    assert kind != "accepted", f"{what}: a wrong answer passed"
    assert kind != "crash", f"{what}: the grader failed\n{result.text}"
    assert kind != "misleading", f"{what}: expected {words!r}\n{result.text}"


def test_at_least_nine_in_ten_get_a_specific_diagnosis():
    counts = tally(CHECKS, CORPUS)
    assert counts["misleading"] == 0 and counts["accepted"] == 0, counts
    assert counts["specific"] >= 0.9 * len(CORPUS), counts
