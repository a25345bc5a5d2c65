"""Tests for attnlab.tasks.rnn: the loop RNN against torch.nn.RNN, gradient decay/growth, path lengths."""

from __future__ import annotations

import math
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch
from torch import nn

from attnlab.tasks.rnn import (
    VanillaRNN,
    attention_cost,
    gradient_norm_vs_distance,
    input_jacobian_norms,
    path_lengths,
    sequential_vs_parallel_time,
    set_recurrent_radius,
    spectral_radius,
)


def _copy_to_torch_rnn(rnn: VanillaRNN, *, bias: bool = True, batch_first: bool = True) -> nn.RNN:
    ref = nn.RNN(
        rnn.input_size,
        rnn.hidden_size,
        nonlinearity=rnn.nonlinearity,
        bias=bias,
        batch_first=batch_first,
    ).to(rnn.weight_ih.dtype)
    with torch.no_grad():
        ref.weight_ih_l0.copy_(rnn.weight_ih)
        ref.weight_hh_l0.copy_(rnn.weight_hh)
        if bias:
            ref.bias_ih_l0.copy_(rnn.bias_ih)
            ref.bias_hh_l0.copy_(rnn.bias_hh)
    return ref


# --- VanillaRNN -----------------------------------------------------------------------------------


@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
@pytest.mark.parametrize(("batch", "length", "input_size", "hidden"), [(1, 1, 1, 1), (3, 7, 4, 5)])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("seed", [0, 1])
def test_matches_torch_rnn_with_copied_weights(
    nonlinearity: str, batch: int, length: int, input_size: int, hidden: int, bias: bool, seed: int
) -> None:
    torch.manual_seed(seed)
    rnn = VanillaRNN(input_size, hidden, nonlinearity, bias=bias).double()
    ref = _copy_to_torch_rnn(rnn, bias=bias)
    x = torch.randn(batch, length, input_size, dtype=torch.float64)
    h0 = torch.randn(batch, hidden, dtype=torch.float64)
    outputs, h_last = rnn(x, h0)
    ref_outputs, ref_h = ref(x, h0[None])  # torch wants h0 as (layers, B, H)
    assert outputs.shape == (batch, length, hidden)
    assert h_last.shape == (batch, hidden)
    torch.testing.assert_close(outputs, ref_outputs, rtol=0, atol=1e-10)
    torch.testing.assert_close(h_last, ref_h[0], rtol=0, atol=1e-10)
    torch.testing.assert_close(h_last, outputs[:, -1], rtol=0, atol=0)


def test_gradients_match_torch_rnn() -> None:
    torch.manual_seed(0)
    rnn = VanillaRNN(3, 4).double()
    ref = _copy_to_torch_rnn(rnn)
    x = torch.randn(2, 6, 3, dtype=torch.float64)
    rnn(x)[0].pow(2).sum().backward()
    ref(x)[0].pow(2).sum().backward()
    torch.testing.assert_close(rnn.weight_hh.grad, ref.weight_hh_l0.grad, rtol=0, atol=1e-10)
    torch.testing.assert_close(rnn.bias_ih.grad, ref.bias_ih_l0.grad, rtol=0, atol=1e-10)


def test_linear_rnn_by_hand() -> None:
    rnn = VanillaRNN(1, 1, "linear", bias=False)
    with torch.no_grad():
        rnn.weight_ih.fill_(1.0)
        rnn.weight_hh.fill_(0.5)
    outputs, h_last = rnn(torch.tensor([[[1.0], [2.0], [4.0]]]))
    # h0 = 1, h1 = 0.5 + 2 = 2.5, h2 = 1.25 + 4 = 5.25
    torch.testing.assert_close(outputs, torch.tensor([[[1.0], [2.5], [5.25]]]))
    torch.testing.assert_close(h_last, torch.tensor([[5.25]]))


def test_default_init_is_in_torch_range() -> None:
    rnn = VanillaRNN(8, 25)
    bound = 1 / math.sqrt(25)
    for p in rnn.parameters():
        assert p.abs().max() <= bound
    assert {n for n, _ in rnn.named_parameters()} == {
        "weight_ih",
        "weight_hh",
        "bias_ih",
        "bias_hh",
    }


def test_output_follows_input_dtype_and_device() -> None:
    rnn = VanillaRNN(2, 3)
    outputs, _ = rnn(torch.randn(1, 4, 2))
    assert outputs.dtype == torch.float32
    assert outputs.device == rnn.weight_hh.device


@pytest.mark.parametrize(
    ("x", "match"),
    [
        (torch.zeros(4, 2), "shape"),
        (torch.zeros(1, 4, 3), "input_size=2"),
        (torch.zeros(1, 0, 2), "T >= 1"),
        (np.zeros((1, 4, 2)), "torch.Tensor"),
    ],
)
def test_forward_rejects_bad_input(x: object, match: str) -> None:
    rnn = VanillaRNN(2, 3)
    with pytest.raises((ValueError, TypeError), match=match):
        rnn(x)


def test_bad_h0_and_constructor_arguments() -> None:
    with pytest.raises(ValueError, match="h0"):
        VanillaRNN(2, 3)(torch.zeros(2, 4, 2), torch.zeros(2, 4))
    with pytest.raises(ValueError, match="nonlinearity"):
        VanillaRNN(2, 3, "sigmoid")
    with pytest.raises(ValueError, match="hidden_size"):
        VanillaRNN(2, 0)


# --- spectral radius ------------------------------------------------------------------------------


def test_spectral_radius_known_matrices() -> None:
    assert spectral_radius(torch.diag(torch.tensor([0.5, -2.0, 1.0]))) == pytest.approx(2.0)
    rotation = torch.tensor([[0.0, -3.0], [3.0, 0.0]])  # eigenvalues ±3i
    assert spectral_radius(rotation) == pytest.approx(3.0)
    with pytest.raises(ValueError, match="square"):
        spectral_radius(torch.zeros(2, 3))


@pytest.mark.parametrize("rho", [0.5, 1.0, 1.5])
def test_set_recurrent_radius(rho: float) -> None:
    torch.manual_seed(0)
    rnn = VanillaRNN(3, 16)
    before = rnn.weight_hh.detach().clone()
    assert set_recurrent_radius(rnn, rho) is rnn
    assert spectral_radius(rnn.weight_hh) == pytest.approx(rho, rel=1e-5)
    # a rescaling: same direction, only the size changed
    ratio = (rnn.weight_hh.detach() / before).flatten()
    torch.testing.assert_close(ratio, ratio[:1].expand_as(ratio), rtol=1e-5, atol=0)


def test_set_recurrent_radius_on_torch_rnn_and_errors() -> None:
    ref = nn.RNN(2, 8, batch_first=True)
    set_recurrent_radius(ref, 0.7)
    assert spectral_radius(ref.weight_hh_l0) == pytest.approx(0.7, rel=1e-5)
    with pytest.raises(ValueError, match="rho"):
        set_recurrent_radius(ref, 0.0)
    with pytest.raises(TypeError, match="weight_hh"):
        set_recurrent_radius(nn.Linear(2, 2), 1.0)
    zero = VanillaRNN(1, 2)
    with torch.no_grad():
        zero.weight_hh.zero_()
    with pytest.raises(ValueError, match="spectral radius 0"):
        set_recurrent_radius(zero, 1.0)


# --- gradient norm vs distance --------------------------------------------------------------------


def _rnn(nonlinearity: str, rho: float, hidden: int = 16, seed: int = 0) -> VanillaRNN:
    torch.manual_seed(seed)
    return set_recurrent_radius(VanillaRNN(4, hidden, nonlinearity).double(), rho)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gradients_vanish_for_small_radius(seed: int) -> None:
    rnn = _rnn("tanh", 0.5, seed=seed)
    norms = gradient_norm_vs_distance(rnn, 60, batch=4, generator=torch.Generator().manual_seed(0))
    assert norms.shape == (60,)
    assert norms.dtype == np.float64
    assert norms[50] < 1e-3 * norms[0]
    slope = np.polyfit(np.arange(10, 50), np.log(norms[10:50]), 1)[0]
    assert slope < math.log(0.5) + 0.05  # at least as fast as 0.5 ** distance


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gradients_explode_for_large_radius_without_squashing(seed: int) -> None:
    rnn = _rnn("linear", 1.5, seed=seed)
    norms = gradient_norm_vs_distance(rnn, 50, batch=2, generator=torch.Generator().manual_seed(1))
    assert norms[40] > 1e3 * norms[0]
    slope = np.polyfit(np.arange(10, 45), np.log(norms[10:45]), 1)[0]
    assert math.log(1.3) < slope < math.log(1.7)  # grows like 1.5 ** distance


def test_linear_rnn_gradient_is_the_matrix_power() -> None:
    # For f(z) = z: dh_T/dx_t = W_hh^d W_ih exactly, for every input.
    rnn = _rnn("linear", 1.2, hidden=6)
    norms = gradient_norm_vs_distance(rnn, 12, batch=3)
    w_hh, w_ih = rnn.weight_hh.detach(), rnn.weight_ih.detach()
    expected = [
        torch.linalg.matrix_norm(torch.linalg.matrix_power(w_hh, d) @ w_ih).item()
        for d in range(12)
    ]
    np.testing.assert_allclose(norms, expected, rtol=1e-10, atol=0)


@pytest.mark.parametrize("batch_first", [True, False])
def test_gradient_norms_same_for_torch_rnn_and_leave_parameters_alone(batch_first: bool) -> None:
    rnn = _rnn("tanh", 0.9, hidden=8)
    ref = _copy_to_torch_rnn(rnn, batch_first=batch_first)
    ours = gradient_norm_vs_distance(rnn, 15, batch=3, generator=torch.Generator().manual_seed(5))
    theirs = gradient_norm_vs_distance(ref, 15, batch=3, generator=torch.Generator().manual_seed(5))
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=0)
    assert all(p.grad is None for p in rnn.parameters())


def test_gradient_norm_is_reproducible_with_a_generator() -> None:
    rnn = _rnn("tanh", 1.0, hidden=8)
    a = gradient_norm_vs_distance(rnn, 10, batch=2, generator=torch.Generator().manual_seed(3))
    b = gradient_norm_vs_distance(rnn, 10, batch=2, generator=torch.Generator().manual_seed(3))
    np.testing.assert_array_equal(a, b)


def test_gradient_norm_threads_used_then_restored_same_numbers() -> None:
    seen: list[int] = []

    class Recording(VanillaRNN):
        def forward(self, x, h0=None):  # type: ignore[override]
            seen.append(torch.get_num_threads())
            return super().forward(x, h0)

    torch.manual_seed(0)
    rnn = Recording(4, 6).double()
    set_recurrent_radius(rnn, 0.9)
    before = torch.get_num_threads()
    one = gradient_norm_vs_distance(
        rnn, 20, batch=3, generator=torch.Generator().manual_seed(2), threads=1
    )
    assert seen == [1]
    assert torch.get_num_threads() == before, "the thread count was not restored"
    default = gradient_norm_vs_distance(
        rnn, 20, batch=3, generator=torch.Generator().manual_seed(2)
    )
    assert seen == [1, before]
    np.testing.assert_allclose(one, default, rtol=1e-12, atol=0)


def test_gradient_norm_bad_arguments() -> None:
    rnn = VanillaRNN(2, 3)
    with pytest.raises(ValueError, match="length"):
        gradient_norm_vs_distance(rnn, 0)
    with pytest.raises(ValueError, match="batch"):
        gradient_norm_vs_distance(rnn, 5, batch=0)
    with pytest.raises(ValueError, match="threads"):
        gradient_norm_vs_distance(rnn, 5, threads=0)
    with pytest.raises(TypeError, match="weight_hh"):
        gradient_norm_vs_distance(nn.Linear(2, 2), 5)


# --- timing ------------------------------------------------------------------------------------
# The rows' shape, and the claims chapter 1 makes of its figure, on sizes where they hold by
# a wide margin: processor time (the default clock) does not count other programs, so they
# hold on a busy machine too (tests run beside nbval on a two-core machine).

CHAPTER_1 = Path(__file__).resolve().parent.parent / "chapters" / "01_why_attention.ipynb"


def _prose(path: Path) -> str:
    cells = nbformat.read(path, as_version=4).cells
    return " ".join(" ".join(c.source.split()) for c in cells if c.cell_type == "markdown")


def _slope(xs: list[float], ys: list[float]) -> float:
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def test_chapter_1_claims_of_the_loop_and_the_product() -> None:
    prose = _prose(CHAPTER_1)
    assert "We count **processor time**" in prose
    assert "Both RNN lines have a slope close to 1" in prose
    assert "Attention sits below the Python loop at every length" in prose
    lengths = [32, 128, 512]
    rows = sequential_vs_parallel_time(lengths, 32, repeats=5, threads=1)
    rnn_ms = [row["rnn_ms"] for row in rows]
    assert 0.75 < _slope(lengths, rnn_ms) < 1.25  # about 1.0: T steps of the same size
    assert all(row["ratio"] > 1.5 for row in rows), rows  # about 3 to 20 on a busy machine


def test_sequential_vs_parallel_time_rows() -> None:
    state, threads = torch.random.get_rng_state(), torch.get_num_threads()
    rows = sequential_vs_parallel_time([3, 17], 8, repeats=1, threads=1)
    assert torch.equal(torch.random.get_rng_state(), state), "the global RNG was consumed"
    assert torch.get_num_threads() == threads, "the thread count was not restored"
    assert [r["length"] for r in rows] == [3, 17]
    for row in rows:
        assert set(row) == {
            "length",
            "rnn_steps",
            "attention_steps",
            "rnn_ms",
            "torch_rnn_ms",
            "attention_ms",
            "ratio",
        }
        assert row["rnn_steps"] == row["length"]
        assert row["attention_steps"] == 1
        assert row["rnn_ms"] > 0
        assert row["torch_rnn_ms"] > 0
        assert row["attention_ms"] > 0
        assert row["ratio"] == pytest.approx(row["rnn_ms"] / row["attention_ms"])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"lengths": [], "d": 4}, "lengths"),
        ({"lengths": [0], "d": 4}, "lengths"),
        ({"lengths": [4], "d": 0}, "d must"),
        ({"lengths": [4], "d": 4, "repeats": 0}, "repeats"),
        ({"lengths": [4], "d": 4, "threads": 0}, "threads"),
    ],
)
def test_sequential_vs_parallel_time_bad_arguments(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        sequential_vs_parallel_time(**kwargs)


# --- path lengths ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "k", "expected"),
    [
        (1, 3, (0, 0, 0, 0)),
        (2, 2, (1, 1, 1, 1)),
        (9, 3, (8, 4, 2, 1)),  # 3**2 = 9 reaches all 9 positions: exactly 2 dilated layers
        (10, 3, (9, 5, 3, 1)),
        (8, 2, (7, 7, 3, 1)),
        (100, 5, (99, 25, 3, 1)),
        (125, 5, (124, 31, 3, 1)),
        (126, 5, (125, 32, 4, 1)),
        (1000, 10, (999, 111, 3, 1)),
    ],
)
def test_path_lengths_by_hand(n: int, k: int, expected: tuple[int, int, int, int]) -> None:
    lengths = path_lengths(n, kernel_size=k)
    assert list(lengths) == ["recurrent", "convolution", "dilated_convolution", "self_attention"]
    assert tuple(lengths.values()) == expected
    assert all(isinstance(v, int) for v in lengths.values())


def test_path_lengths_order_for_long_sequences() -> None:
    for n in (10, 100, 1000):
        p = path_lengths(n)
        assert p["recurrent"] > p["convolution"] > p["dilated_convolution"] > p["self_attention"]


@pytest.mark.parametrize(("n", "k"), [(0, 3), (5, 1), (2.5, 3), (True, 3)])
def test_path_lengths_bad_arguments(n: object, k: int) -> None:
    with pytest.raises(ValueError, match="must be an integer"):
        path_lengths(n, kernel_size=k)  # type: ignore[arg-type]


# --- per-sample Jacobian norms --------------------------------------------------------------------


@pytest.mark.parametrize("nonlinearity", ["tanh", "linear"])
def test_input_jacobian_norms_match_the_full_jacobian(nonlinearity: str) -> None:
    rnn = _rnn(nonlinearity, 0.9, hidden=5)
    x = torch.randn(3, 7, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    norms = input_jacobian_norms(rnn, x)
    assert norms.shape == (3, 7)
    for b in range(3):
        jac = torch.autograd.functional.jacobian(lambda xb: rnn(xb[None])[1][0], x[b])
        expected = jac.pow(2).sum((0, 2)).sqrt()  # (H, T, I) -> (T,)
        torch.testing.assert_close(norms[b], expected, rtol=1e-10, atol=0)
    assert all(p.grad is None for p in rnn.parameters())


def test_input_jacobian_norms_bad_input() -> None:
    rnn = VanillaRNN(2, 3)
    with pytest.raises(TypeError, match="floating"):
        input_jacobian_norms(rnn, torch.zeros(1, 4, 2, dtype=torch.long))
    with pytest.raises(ValueError, match="input_size=2"):
        input_jacobian_norms(rnn, torch.zeros(1, 4, 3))
    with pytest.raises(TypeError, match="weight_hh"):
        input_jacobian_norms(nn.Linear(2, 2), torch.zeros(1, 4, 2))


# --- attention cost (sizes exact, timings only positive) ------------------------------------------


def test_attention_cost_rows() -> None:
    threads = torch.get_num_threads()
    rows = attention_cost([4, 32], 8, repeats=1, threads=1)
    assert torch.get_num_threads() == threads
    assert [r["length"] for r in rows] == [4, 32]
    assert [r["scores_bytes"] for r in rows] == [4 * 4 * 4, 32 * 32 * 4]  # T² float32
    assert all(r["attention_ms"] > 0 for r in rows)
    with pytest.raises(ValueError, match="lengths"):
        attention_cost([], 8)
    with pytest.raises(ValueError, match="d must"):
        attention_cost([4], 0)
