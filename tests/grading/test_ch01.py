"""Chapter 1's graders: right answers pass, stubs and planted bugs get the expected report.

The "learner" answers below are written here, independently of the planted mistakes in
``attnlab.grading.ch01``, in several styles (loops, einsum, ``nn.RNNCell``, functional
Jacobians), the way different learners would write them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from attnlab.grading.ch01 import (
    GRADERS,
    check_bytenet_path,
    check_gradient_norms,
    check_loop_time,
    check_path_length,
    check_rnn_forward,
    check_rnn_step,
    check_survives_20,
    summary,
)

# ------------------------------------------------------------------ correct answers


def step_matmul(x_t, h_prev, W_ih, W_hh, b):
    return torch.tanh(x_t @ W_ih.T + h_prev @ W_hh.T + b)


def step_einsum(x_t, h_prev, W_ih, W_hh, b):
    pre = torch.einsum("bi,hi->bh", x_t, W_ih) + torch.einsum("bk,hk->bh", h_prev, W_hh)
    return (pre + b).tanh()


def step_linear(x_t, h_prev, W_ih, W_hh, b):
    f = torch.nn.functional
    return torch.tanh(f.linear(x_t, W_ih, b) + f.linear(h_prev, W_hh))


def forward_loop(x, W_ih, W_hh, b):
    h = torch.zeros(x.shape[0], W_hh.shape[0], dtype=x.dtype)
    outs = []
    for t in range(x.shape[1]):
        h = step_matmul(x[:, t], h, W_ih, W_hh, b)
        outs.append(h)
    return torch.stack(outs, 1), h


def forward_preallocated(x, W_ih, W_hh, b):
    B, T, _ = x.shape
    h = torch.zeros(B, W_hh.shape[0], dtype=x.dtype)
    outs = torch.empty(B, T, W_hh.shape[0], dtype=x.dtype)
    for t in range(T):
        h = step_linear(x[:, t], h, W_ih, W_hh, b)
        outs[:, t] = h  # writing into a new tensor keeps the gradient
    return outs, h


def grads_rows(x, W_ih, W_hh, b):
    x = x.detach().requires_grad_()
    _, h = forward_loop(x[None], W_ih, W_hh, b)
    total = torch.zeros(x.shape[0], dtype=x.dtype)
    for j in range(h.shape[-1]):
        (g,) = torch.autograd.grad(h[0, j], x, retain_graph=True)
        total = total + (g**2).sum(-1)
    return torch.flip(total.sqrt(), [0])


def grads_functional(x, W_ih, W_hh, b):
    jac = torch.autograd.functional.jacobian(
        lambda xs: forward_loop(xs[None], W_ih, W_hh, b)[1][0], x
    )  # (H, T, I)
    return torch.linalg.matrix_norm(jac.permute(1, 0, 2)).flip(0)  # (T,)


def path_if(n, kind, k):
    if kind == "recurrent":
        return n - 1
    if kind == "convolution":
        return math.ceil((n - 1) / (k - 1))
    if kind == "dilated_convolution":
        return next(L for L in range(64) if k**L >= n)
    return 1


def path_dict(n, kind, k):
    layers, reach = 0, 1
    while reach < n:
        layers, reach = layers + 1, reach * k
    return {
        "recurrent": n - 1,
        "convolution": (n - 1 + k - 2) // (k - 1),
        "dilated_convolution": layers,
        "self_attention": 1,
    }[kind]


RIGHT = {
    "rnn_step": (check_rnn_step, [step_matmul, step_einsum, step_linear]),
    "rnn_forward": (check_rnn_forward, [forward_loop, forward_preallocated]),
    "gradient_norms": (check_gradient_norms, [grads_rows, grads_functional]),
    "path_length": (check_path_length, [path_if, path_dict]),
}


@pytest.mark.parametrize(
    ("name", "index"), [(n, i) for n, (_, fns) in RIGHT.items() for i in range(len(fns))]
)
def test_differently_written_correct_answers_pass(name, index):
    check, fns = RIGHT[name]
    result = check(fns[index])
    assert result.passed, result.text
    assert result.diagnosis is None


@pytest.mark.parametrize("name", ["rnn_step", "rnn_forward", "gradient_norms", "path_length"])
def test_the_reference_passes(name):
    assert GRADERS[name].check(GRADERS[name].reference).passed


def stub(*args, **kwargs):
    raise NotImplementedError("Exercise 1.1")


@pytest.mark.parametrize("name", list(RIGHT))
def test_stub_is_not_attempted(name):
    result = RIGHT[name][0](stub)
    assert result.status == "not attempted"
    assert not result.passed


# ------------------------------------------------------------------ planted mistakes


# Each planted mistake is told apart from the others: tests/grading/test_chapters.py


def test_learner_written_bugs_are_recognised():
    def no_tanh(x_t, h_prev, W_ih, W_hh, b):
        return x_t @ W_ih.T + h_prev @ W_hh.T + b

    assert "tanh" in check_rnn_step(no_tanh).diagnosis

    def no_carry(x, W_ih, W_hh, b):
        h0 = torch.zeros(x.shape[0], W_hh.shape[0], dtype=x.dtype)
        outs = [step_matmul(x[:, t], h0, W_ih, W_hh, b) for t in range(x.shape[1])]
        return torch.stack(outs, 1), outs[-1]

    assert "starts again from zeros" in check_rnn_forward(no_carry).diagnosis

    def by_position(x, W_ih, W_hh, b):
        return grads_rows(x, W_ih, W_hh, b).flip(0)

    assert "distance" in check_gradient_norms(by_position).diagnosis

    def float_log(n, kind, k):
        if kind == "dilated_convolution":
            return math.ceil(math.log(n, k))
        return path_if(n, kind, k)

    assert "math.log" in check_path_length(float_log).diagnosis


def test_untransposed_input_weights_get_the_transpose_hint():
    def no_transpose(x_t, h_prev, W_ih, W_hh, b):
        return torch.tanh(x_t @ W_ih + h_prev @ W_hh.T + b)

    result = check_rnn_step(no_transpose)
    assert result.status == "raised an exception"
    # the generated mistake (W_ih without .T) raises the same error on the same case
    assert result.diagnosis == "`W_ih` is used without its transpose (`.T`)"


def test_answers_that_cut_the_gradient_are_told_so():
    def through_numpy(x_t, h_prev, W_ih, W_hh, b):
        pre = x_t.numpy() @ W_ih.numpy().T + h_prev.numpy() @ W_hh.numpy().T + b.numpy()
        return torch.from_numpy(np.tanh(pre))

    result = check_rnn_step(through_numpy)
    assert result.status == "no gradient", result.text
    assert "NumPy" in result.diagnosis

    def with_cell(x, W_ih, W_hh, b):
        cell = torch.nn.RNNCell(W_ih.shape[1], W_ih.shape[0]).to(x.dtype)
        with torch.no_grad():
            cell.weight_ih.copy_(W_ih)
            cell.weight_hh.copy_(W_hh)
            cell.bias_ih.copy_(b)
            cell.bias_hh.zero_()
            h = x.new_zeros(x.shape[0], W_ih.shape[0])
            outs = [h := cell(x[:, t], h) for t in range(x.shape[1])]
        return torch.stack(outs, 1), h

    result = check_rnn_forward(with_cell)
    assert result.status == "no gradient", result.text
    assert "torch.no_grad()" in result.diagnosis

    def detached_state(x, W_ih, W_hh, b):
        h = torch.zeros(x.shape[0], W_hh.shape[0], dtype=x.dtype)
        outs = []
        for t in range(x.shape[1]):
            h = step_matmul(x[:, t], h.detach(), W_ih, W_hh, b)
            outs.append(h)
        return torch.stack(outs, 1), h

    result = check_rnn_forward(detached_state)
    assert result.status == "wrong gradient", result.text
    assert "`.detach()`" in result.diagnosis


# ------------------------------------------------------------------ predictions


@pytest.mark.parametrize(
    ("check", "right"),
    [
        (check_survives_20, [0.12, 0.9**20, 0.122, 0.125]),
        (check_bytenet_path, [3, 3.0]),
        (check_loop_time, ["doubles", " Doubles "]),
    ],
)
def test_questions_accept_the_answer_however_written(check, right):
    # Each listed wrong answer (and none): tests/grading/test_chapters.py
    for answer in right:
        assert check(answer).passed, answer


def test_summary_lists_every_exercise_in_order():
    check_rnn_step(step_matmul)
    table = summary()
    assert table.title == "Chapter 1 exercises"
    assert [name for name, _ in table.rows] == [
        "rnn_step",
        "rnn_forward",
        "gradient_norms",
        "path_length",
        "survives_20",
        "bytenet_path",
        "loop_time",
    ]
