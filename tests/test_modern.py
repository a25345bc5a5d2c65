"""RMSNorm, GELU, SiLU, the MLP and SwiGLU: against PyTorch's own where it has one.

Tolerances: float64 within 1e-12 (relative and absolute: the formulas are the same up to the
order of a few operations); float32 within 1e-6 absolute and 1e-5 relative.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from attnlab.mechanism import modern
from attnlab.mechanism.modern import MLP, RMSNorm, SwiGLU
from attnlab.mechanism.transformer import FeedForward

F64 = {"rtol": 1e-12, "atol": 1e-12}
F32 = {"rtol": 1e-5, "atol": 1e-6}
TOL = {torch.float64: F64, torch.float32: F32}


def _x(*shape: int, dtype: torch.dtype = torch.float64, seed: int = 0, scale: float = 3.0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype) * scale


# -- activations ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_matches_torch(dtype: torch.dtype, approximate: str) -> None:
    x = torch.cat([_x(2000, dtype=dtype), torch.tensor([-40.0, -8.0, 0.0, 8.0, 40.0], dtype=dtype)])
    ours = modern.gelu(x, approximate=approximate)
    assert ours.dtype == dtype
    torch.testing.assert_close(ours, F.gelu(x, approximate=approximate), **TOL[dtype])


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_on_numpy_is_the_same_function(approximate: str) -> None:
    x = _x(3, 50)
    ours = modern.gelu(x.numpy(), approximate=approximate)
    assert isinstance(ours, np.ndarray) and ours.shape == (3, 50) and ours.dtype == np.float64
    np.testing.assert_allclose(ours, F.gelu(x, approximate=approximate).numpy(), **F64)
    assert modern.gelu([0.0, 1.0]).tolist() == pytest.approx([0.0, 0.8413447460685429], abs=1e-15)
    assert modern.gelu(np.zeros((0, 3))).shape == (0, 3)


def test_gelu_is_x_times_the_normal_cdf() -> None:
    """Φ(1) = 0.841344746..., Φ(-1) = 1 - Φ(1): GELU(1) - GELU(-1) = 1 (x Φ(x) - (-x)(1-Φ(x)))."""
    one = modern.gelu(torch.tensor([1.0, -1.0], dtype=torch.float64))
    assert float(one[0]) == pytest.approx(0.8413447460685429, abs=1e-15)
    assert float(one[0] - one[1]) == pytest.approx(1.0, abs=1e-15)


def test_gelu_refuses_an_unknown_approximation() -> None:
    with pytest.raises(ValueError, match="approximate must be 'none' or 'tanh', got 'erf'"):
        modern.gelu(torch.zeros(2), approximate="erf")
    with pytest.raises(TypeError, match="must be a NumPy array or a torch tensor"):
        modern.gelu("x")


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_silu_matches_torch_without_overflow(dtype: torch.dtype) -> None:
    x = torch.cat(
        [_x(1000, dtype=dtype), torch.tensor([-1e4, -100.0, 0.0, 100.0, 1e4], dtype=dtype)]
    )
    torch.testing.assert_close(modern.silu(x), F.silu(x), **TOL[dtype])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # exp(-x) would overflow for x = -1e4 in a naive form
        out = modern.silu(x.numpy())
    np.testing.assert_allclose(out, F.silu(x).numpy(), **TOL[dtype])
    assert np.isfinite(out).all()


def test_the_activation_table() -> None:
    x = _x(100)
    assert set(modern.ACTIVATIONS) == {"relu", "gelu", "gelu_tanh", "silu"}
    torch.testing.assert_close(modern.ACTIVATIONS["relu"](x), torch.relu(x), **F64)
    torch.testing.assert_close(
        modern.ACTIVATIONS["gelu_tanh"](x), F.gelu(x, approximate="tanh"), **F64
    )


# -- RMSNorm -------------------------------------------------------------------------------------


def _pair(
    d_model: int, eps: float, dtype: torch.dtype, seed: int = 1
) -> tuple[RMSNorm, nn.RMSNorm]:
    ours = RMSNorm(d_model, eps=eps).to(dtype)
    theirs = nn.RMSNorm(d_model, eps=eps, dtype=dtype)
    with torch.no_grad():
        ours.gamma.copy_(_x(d_model, dtype=dtype, seed=seed))
        theirs.weight.copy_(ours.gamma)
    return ours, theirs


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("eps", [1e-5, 1e-6, 0.5])
@pytest.mark.parametrize("shape", [(2, 5, 8), (8,), (3, 1, 4, 8)])
def test_rmsnorm_matches_torch_with_copied_weights(
    dtype: torch.dtype, eps: float, shape: tuple[int, ...]
) -> None:
    ours, theirs = _pair(8, eps, dtype)
    x = _x(*shape, dtype=dtype, seed=2)
    torch.testing.assert_close(ours(x), theirs(x), **TOL[dtype])


def test_rmsnorm_gradients_match_torch() -> None:
    ours, theirs = _pair(6, 1e-5, torch.float64)
    x1 = _x(4, 3, 6, seed=3).requires_grad_()
    x2 = x1.detach().clone().requires_grad_()
    upstream = _x(4, 3, 6, seed=4)
    (ours(x1) * upstream).sum().backward()
    (theirs(x2) * upstream).sum().backward()
    torch.testing.assert_close(x1.grad, x2.grad, **F64)
    torch.testing.assert_close(ours.gamma.grad, theirs.weight.grad, **F64)


def test_rmsnorm_rescales_to_root_mean_square_one_and_ignores_scale() -> None:
    norm = RMSNorm(16, eps=1e-12).double()
    x = _x(5, 16, seed=5) + 4.0  # a mean far from 0: RMSNorm keeps it (LayerNorm would not)
    y = norm(x)
    torch.testing.assert_close(y.pow(2).mean(-1), torch.ones(5, dtype=torch.float64), **F64)
    torch.testing.assert_close(norm(7.5 * x), y, **F64)
    assert bool((y.mean(-1) > 0.5).all())  # not centred
    assert sum(p.numel() for p in norm.parameters()) == 16  # γ only, no β


def test_rmsnorm_refuses_bad_input() -> None:
    norm = RMSNorm(4)
    with pytest.raises(ValueError, match=r"RMSNorm: x must have shape \(\.\.\., 4\)"):
        norm(torch.zeros(2, 5))
    with pytest.raises(TypeError, match="RMSNorm expects floating-point x"):
        norm(torch.zeros(2, 4, dtype=torch.long))
    with pytest.raises(TypeError, match=r"RMSNorm expects a torch\.Tensor"):
        norm(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="d_model must be a positive integer"):
        RMSNorm(0)
    with pytest.raises(ValueError, match="eps must be a positive number"):
        RMSNorm(4, eps=0)
    assert repr(norm) == "RMSNorm(d_model=4, eps=1e-05)"


# -- the feed-forward networks ----------------------------------------------------------------------


def test_mlp_with_relu_is_chapter_7s_feed_forward() -> None:
    torch.manual_seed(0)
    ffn = FeedForward(8, 32).double()
    mlp = MLP(8, 32, activation="relu").double()
    mlp.load_state_dict(ffn.state_dict())  # the same names: linear1, linear2
    x = _x(2, 5, 8, seed=6)
    torch.testing.assert_close(mlp(x), ffn(x), **F64)


@pytest.mark.parametrize("activation", ["gelu", "gelu_tanh", "silu", "relu"])
def test_mlp_applies_its_activation_between_the_layers(activation: str) -> None:
    torch.manual_seed(1)
    mlp = MLP(6, 24, activation=activation).double()
    x = _x(3, 4, 6, seed=7)
    f = {
        "gelu": F.gelu,
        "gelu_tanh": lambda h: F.gelu(h, approximate="tanh"),
        "silu": F.silu,
        "relu": F.relu,
    }[activation]
    expected = (
        f(x @ mlp.linear1.weight.T + mlp.linear1.bias) @ mlp.linear2.weight.T + mlp.linear2.bias
    )
    torch.testing.assert_close(mlp(x), expected, **F64)
    assert repr(mlp).startswith(f"MLP(\n  activation='{activation}'")


def test_mlp_without_bias_and_with_dropout() -> None:
    mlp = MLP(4, 8, bias=False, dropout=0.5)
    assert mlp.linear1.bias is None and mlp.linear2.bias is None
    assert sum(p.numel() for p in mlp.parameters()) == 2 * 4 * 8
    mlp.eval()
    x = _x(2, 4, dtype=torch.float32)
    assert torch.equal(mlp(x), mlp(x))  # eval: no dropout


def test_swiglu_is_the_gated_formula() -> None:
    torch.manual_seed(2)
    ffn = SwiGLU(8, 20).double()
    x = _x(2, 3, 8, seed=8)
    W_g, W_u, W_d = ffn.W_gate.weight, ffn.W_up.weight, ffn.W_down.weight
    expected = (F.silu(x @ W_g.T) * (x @ W_u.T)) @ W_d.T  # (B, T, d_ff) -> (B, T, D)
    torch.testing.assert_close(ffn(x), expected, **F64)
    assert sum(p.numel() for p in ffn.parameters()) == 3 * 8 * 20  # no biases by default
    assert sum(p.numel() for p in SwiGLU(8, 20, bias=True).parameters()) == 3 * 8 * 20 + 2 * 20 + 8


def test_swiglu_gradients_reach_all_three_matrices() -> None:
    torch.manual_seed(3)
    ffn = SwiGLU(4, 6)
    ffn(_x(2, 4, dtype=torch.float32)).sum().backward()
    for name in ("W_gate", "W_up", "W_down"):
        grad = getattr(ffn, name).weight.grad
        assert grad is not None and bool(grad.abs().sum() > 0), name


def test_a_zero_gate_or_up_projection_closes_the_swiglu() -> None:
    ffn = SwiGLU(4, 6).double()
    with torch.no_grad():
        ffn.W_up.weight.zero_()
    assert torch.equal(ffn(_x(3, 4)), torch.zeros(3, 4, dtype=torch.float64))


@pytest.mark.parametrize("layer", [MLP(4, 8), SwiGLU(4, 8)], ids=["MLP", "SwiGLU"])
def test_feed_forwards_refuse_bad_input(layer: nn.Module) -> None:
    who = type(layer).__name__
    with pytest.raises(ValueError, match=rf"{who}: x must have shape \(\.\.\., 4\)"):
        layer(torch.zeros(2, 5))
    with pytest.raises(TypeError, match=f"{who} has float32 weights but x is"):
        layer(torch.zeros(2, 4, dtype=torch.float64))
    with pytest.raises(TypeError, match=rf"{who} expects a torch\.Tensor"):
        layer([[0.0] * 4])


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: MLP(4, 8, activation="tanh"), r"activation must be one of \['gelu'"),
        (lambda: MLP(4, 0), "d_ff must be a positive integer"),
        (lambda: MLP(4, 8, dropout=1.0), r"dropout must be a probability in \[0, 1\)"),
        (lambda: SwiGLU(0, 8), "d_model must be a positive integer"),
        (lambda: SwiGLU(4, 8.0), "d_ff must be a positive integer"),
    ],
)
def test_feed_forwards_refuse_bad_sizes(build, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        build()
