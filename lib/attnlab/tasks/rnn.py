r"""A vanilla recurrent network, and three measurements of why attention replaced it.

.. math:: h_t = \tanh(x_t W_{ih}^\top + b_{ih} + h_{t-1} W_{hh}^\top + b_{hh})

The hidden state ``h_t`` is the network's only memory of ``x_0 .. x_t``. Three limits follow
from that one line, and this module measures each:

1. **Gradients vanish or explode with distance.** ``∂h_T/∂x_t`` is a product of one
   Jacobian ``diag(f'(·)) W_hh`` per step between ``t`` and ``T``, so its norm behaves like
   ``ρ(W_hh)^(T-1-t)`` (``ρ`` = spectral radius): it shrinks geometrically when ``ρ < 1`` and
   grows geometrically when ``ρ > 1`` and the nonlinearity does not saturate
   (:func:`gradient_norm_vs_distance`, :func:`set_recurrent_radius`).
2. **Time is sequential.** Step ``t`` needs ``h_{t-1}``: ``T`` steps one after another,
   where attention compares all positions in two large matrix products
   (:func:`sequential_vs_parallel_time`).
3. **Long paths.** Information from position ``i`` reaches position ``j`` through
   ``|i - j|`` steps; convolutions need a stack of layers; self-attention connects any two
   positions directly (:func:`path_lengths`, Table 1 and Section 4 of Vaswani et al.).

What attention pays instead, a ``T × T`` score matrix, is measured by
:func:`attention_cost`; the trained comparison on a recall task is in :mod:`attnlab.tasks.recall`.

References: Bengio, Simard & Frasconi, "Learning Long-Term Dependencies with Gradient Descent
is Difficult", IEEE Trans. Neural Networks 1994; Pascanu, Mikolov & Bengio, "On the
Difficulty of Training Recurrent Neural Networks", ICML 2013; Vaswani et al., "Attention Is
All You Need", 2017 (Table 1); Gehring et al., "Convolutional Sequence to Sequence
Learning", 2017 (ConvS2S); Kalchbrenner et al., "Neural Machine Translation in Linear Time",
2016 (ByteNet).

Taught in: chapters/01_why_attention.ipynb
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch import nn

from .._validate import (
    check_device,
    check_input,
    check_int,
    describe,
    positive_int,
    positive_number,
    same_device,
    to_numpy,
)
from ..measure import check_clock, median_seconds, median_seconds_each
from ..mechanism.attention import scaled_dot_product_attention

__all__ = [
    "VanillaRNN",
    "attention_cost",
    "gradient_norm_vs_distance",
    "input_jacobian_norms",
    "path_lengths",
    "sequential_vs_parallel_time",
    "set_recurrent_radius",
    "spectral_radius",
]

_NONLINEARITIES = {"tanh": torch.tanh, "relu": torch.relu, "linear": lambda z: z}


class VanillaRNN(nn.Module):
    r"""An Elman RNN written as an explicit loop over time.

    .. math:: h_t = f(x_t W_{ih}^\top + b_{ih} + h_{t-1} W_{hh}^\top + b_{hh}),\quad h_{-1} = 0

    The Python ``for`` loop is the point: step ``t`` cannot start before step ``t - 1`` has
    finished. Parameters are named and initialised as in ``torch.nn.RNN`` (uniform in
    ``±1/sqrt(hidden_size)``), so weights can be copied across (``weight_ih`` <->
    ``weight_ih_l0``, ...).

    Args:
        input_size: size of each input vector ``x_t``.
        hidden_size: size ``H`` of the hidden state.
        nonlinearity: ``"tanh"`` (default), ``"relu"`` or ``"linear"`` (no squashing: the
            clearest case of exploding gradients).
        bias: whether to add ``b_ih`` and ``b_hh``.

    Shapes:
        ``x``: ``(B, T, input_size)`` (batch first); optional ``h0``: ``(B, H)``.
        Returns ``outputs``: ``(B, T, H)`` (every ``h_t``) and ``h_T``: ``(B, H)`` (the last).

    Taught in: chapters/01_why_attention.ipynb
    """

    def __init__(
        self, input_size: int, hidden_size: int, nonlinearity: str = "tanh", bias: bool = True
    ) -> None:
        super().__init__()
        input_size = positive_int(input_size, "input_size")
        hidden_size = positive_int(hidden_size, "hidden_size")
        if nonlinearity not in _NONLINEARITIES:
            raise ValueError(
                f"nonlinearity must be one of {sorted(_NONLINEARITIES)}, got {nonlinearity!r}"
            )
        self.input_size, self.hidden_size = input_size, hidden_size
        self.nonlinearity = nonlinearity
        self.weight_ih = nn.Parameter(torch.empty(hidden_size, input_size))
        self.weight_hh = nn.Parameter(torch.empty(hidden_size, hidden_size))
        if bias:
            self.bias_ih = nn.Parameter(torch.empty(hidden_size))
            self.bias_hh = nn.Parameter(torch.empty(hidden_size))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Uniform in ``±1/sqrt(hidden_size)``, as ``torch.nn.RNN``."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}, nonlinearity={self.nonlinearity!r}"

    def forward(
        self, x: torch.Tensor, h0: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        shape = f"(batch, T >= 1, input_size={self.input_size})"
        check_input(x, self.input_size, who="VanillaRNN", shape=shape, ndim=3, module=self)
        if x.shape[1] == 0:
            raise ValueError(f"VanillaRNN: x must have shape {shape}, got {describe(x)}")
        batch, length, _ = x.shape
        if h0 is None:
            h = x.new_zeros(batch, self.hidden_size)  # (B, H), on x's device
        else:
            if tuple(h0.shape) != (batch, self.hidden_size):
                raise ValueError(
                    f"h0 must have shape (batch={batch}, hidden_size={self.hidden_size}), "
                    f"got {describe(h0)}"
                )
            same_device(x=x, h0=h0)
            h = h0
        f = _NONLINEARITIES[self.nonlinearity]
        outputs = []
        for t in range(length):  # one step after another: h_t needs h_{t-1}
            pre = (
                x[:, t] @ self.weight_ih.T + h @ self.weight_hh.T
            )  # (B, I)@(I, H) + (B, H)@(H, H) -> (B, H)
            if self.bias_ih is not None:
                pre = pre + self.bias_ih + self.bias_hh
            h = f(pre)  # (B, H)
            outputs.append(h)
        return torch.stack(outputs, dim=1), h  # T x (B, H) -> (B, T, H); (B, H)


# ---------------------------------------------------------------------------------------------
# 1. Vanishing and exploding gradients
# ---------------------------------------------------------------------------------------------


def _recurrent_weight(rnn: nn.Module) -> nn.Parameter:
    for name in ("weight_hh", "weight_hh_l0"):  # VanillaRNN, torch.nn.RNN/GRU/LSTM
        w = getattr(rnn, name, None)
        if isinstance(w, torch.Tensor):
            return w
    raise TypeError(
        f"expected a VanillaRNN or a torch.nn.RNN (a module with weight_hh), "
        f"got {type(rnn).__name__}"
    )


def spectral_radius(weight: torch.Tensor) -> float:
    r"""Largest absolute eigenvalue :math:`\rho(W) = \max_i |\lambda_i(W)|` of a square matrix.

    Raises:
        ValueError: if ``weight`` is not square.
    """
    if weight.ndim != 2 or weight.shape[0] != weight.shape[1]:
        raise ValueError(f"spectral_radius needs a square matrix, got {describe(weight)}")
    eigenvalues = torch.linalg.eigvals(weight.detach().double())  # (H,) complex
    return float(eigenvalues.abs().max())


def set_recurrent_radius(rnn: nn.Module, rho: float) -> nn.Module:
    r"""Rescale ``W_hh`` in place so that its spectral radius is ``rho``; returns ``rnn``.

    :math:`W_{hh} \leftarrow \rho\, W_{hh} / \rho(W_{hh})`. With a linear nonlinearity the
    gradient over ``d`` steps scales like ``rho ** d``: ``rho < 1`` vanishes, ``rho > 1``
    explodes. With ``tanh`` (derivative at most 1) a large ``rho`` can still vanish once the
    units saturate.

    Works on :class:`VanillaRNN` and on ``torch.nn.RNN`` (first layer).

    Raises:
        ValueError: ``rho`` not positive, or ``W_hh`` all zeros.
    """
    rho = positive_number(rho, "rho")
    weight = _recurrent_weight(rnn)
    radius = spectral_radius(weight)
    if radius == 0:
        raise ValueError("W_hh has spectral radius 0 (all eigenvalues zero); cannot rescale it")
    with torch.no_grad():
        weight.mul_(rho / radius)
    return rnn


def gradient_norm_vs_distance(
    rnn: nn.Module,
    length: int,
    *,
    batch: int = 16,
    generator: torch.Generator | None = None,
    threads: int | None = None,
) -> np.ndarray:
    r"""How strongly the last state depends on each input: :math:`\|\partial h_T / \partial x_t\|_F` by distance.

    Feeds ``batch`` random sequences (standard normal inputs) through ``rnn`` and, by
    backpropagation (:func:`input_jacobian_norms`), computes the Jacobian of the last
    hidden state ``h_T`` with respect to every input ``x_t``. By the chain rule

    .. math:: \frac{\partial h_T}{\partial x_t} = \Big(\prod_{s=t+1}^{T} D_s W_{hh}\Big) D_t W_{ih},
              \quad D_s = \mathrm{diag}\, f'(\text{pre-activation}_s),

    a product of ``T - 1 - t`` recurrent factors: its norm decays or grows geometrically with
    the distance ``T - 1 - t``.

    Args:
        rnn: a :class:`VanillaRNN`, or a module returning ``(outputs, ...)`` such as
            ``torch.nn.RNN``: outputs ``(B, T, H)`` if it is batch first (no
            ``batch_first`` attribute counts as batch first), else ``(T, B, H)`` (the input
            is then transposed to ``(T, B, I)`` for it).
        length: sequence length ``T``.
        batch: number of random sequences; the norms are averaged over them.
        generator: a CPU ``torch.Generator`` for the random inputs (default: the global one).
        threads: if given, the CPU thread count during the computation (restored
            afterwards). The matrices of a small RNN are tiny: ``threads=1`` avoids the
            threads waiting for one another at every step, many times faster on a busy CPU.

    Returns:
        ``(T,)`` float64 NumPy array; entry ``d`` is the mean Frobenius norm of
        ``∂h_T/∂x_t`` for ``t = T - 1 - d`` (entry 0: the last input, entry ``T - 1``: the
        first).

    Taught in: chapters/01_why_attention.ipynb
    """
    length, batch = positive_int(length, "length"), positive_int(batch, "batch")
    threads = None if threads is None else positive_int(threads, "threads")
    weight = _recurrent_weight(rnn)
    input_size = getattr(rnn, "input_size", None)
    if not isinstance(input_size, int):
        raise TypeError(f"{type(rnn).__name__} has no integer input_size attribute")
    # drawn on the CPU (where the generator is), whatever torch's default device, then moved
    x = torch.randn(
        batch, length, input_size, generator=generator, dtype=weight.dtype, device="cpu"
    )
    previous_threads = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        norms = input_jacobian_norms(rnn, x.to(weight.device)).mean(0)  # (B, T) -> (T,), by t
    finally:
        torch.set_num_threads(previous_threads)
    return to_numpy(norms.flip(0)).astype(np.float64)  # indexed by distance T - 1 - t


def input_jacobian_norms(rnn: nn.Module, x: torch.Tensor) -> torch.Tensor:
    r"""Frobenius norm of :math:`\partial h_T / \partial x_t` for every sample and position.

    .. math:: N_{b,t} = \Big\| \frac{\partial h_T^{(b)}}{\partial x_t^{(b)}} \Big\|_F
              = \Big(\sum_{j,i} \big(\partial h_{T,j}^{(b)} / \partial x_{t,i}^{(b)}\big)^2
              \Big)^{1/2}

    One backward pass gives one row of a Jacobian (the gradient of one unit ``h_{T,j}``),
    so the ``H`` rows would take ``H`` passes. Instead the batch is copied ``H`` times and
    copy ``j`` backpropagates unit ``j``: one forward and one backward pass in all (the
    samples do not interact, so the copies do not either).

    Args:
        rnn: a :class:`VanillaRNN`, or a module returning ``(outputs, ...)`` such as
            ``torch.nn.RNN`` (outputs ``(B, T, H)`` when batch first, else ``(T, B, H)``).
        x: ``(B, T, input_size)`` inputs, batch first whatever the module's layout.

    Returns:
        ``(B, T)`` tensor of norms, indexed by position ``t`` (not by distance), detached.
        The parameters' ``.grad`` are left untouched.

    Raises:
        TypeError: ``rnn`` has no recurrent weight, or ``x`` is not a floating tensor.
        ValueError: ``x`` is not ``(B, T, input_size)``.

    Taught in: chapters/01_why_attention.ipynb
    """
    weight = _recurrent_weight(rnn)
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise TypeError(f"x must be a floating-point torch.Tensor, got {describe(x)}")
    input_size = getattr(rnn, "input_size", None)
    if x.ndim != 3 or x.shape[-1] != input_size or 0 in x.shape:
        raise ValueError(
            f"x must have shape (batch, T >= 1, input_size={input_size}), got {describe(x)}"
        )
    check_device(x, rnn, who=type(rnn).__name__)
    batch, length, _ = x.shape
    hidden = weight.shape[0]
    copies = x.detach().repeat(hidden, 1, 1).requires_grad_()  # (H*B, T, I), copy j first
    if getattr(rnn, "batch_first", True):
        h_last = rnn(copies)[0][:, -1]  # (H*B, T, H) -> (H*B, H)
    else:  # torch.nn.RNN's default layout is time first
        h_last = rnn(copies.transpose(0, 1))[0][-1]  # (T, H*B, I) -> ... -> (H*B, H)
    # unit j of copy j: (H, B, H) -> (B, H), entry [b, j] = h_T[j-th copy of b, j]
    picked = h_last.reshape(hidden, batch, hidden).diagonal(dim1=0, dim2=2)
    (grad,) = torch.autograd.grad(picked.sum(), copies)  # (H*B, T, I): row j in copy j
    squared = grad.reshape(hidden, batch, length, -1).pow(2).sum((0, 3))  # -> (B, T)
    return squared.sqrt().detach()


# ---------------------------------------------------------------------------------------------
# 2. Sequential steps vs one parallel product
# ---------------------------------------------------------------------------------------------


def _lengths(lengths: Any) -> list[int]:
    """``lengths`` as a non-empty list of Python ints, each a positive integer."""
    try:
        checked = [positive_int(n, "length") for n in lengths]
    except (ValueError, TypeError):
        checked = []
    if not checked:
        raise ValueError(f"lengths must be a non-empty list of positive integers, got {lengths!r}")
    return checked


def sequential_vs_parallel_time(
    lengths: list[int],
    d: int,
    *,
    repeats: int = 5,
    batch: int = 1,
    device: str | torch.device | None = None,
    threads: int | None = None,
    clock: str = "cpu",
) -> list[dict[str, float]]:
    r"""Time of an RNN's ``T`` sequential steps vs self-attention over all ``T`` positions.

    For each length ``T`` the same random input ``x`` of shape ``(batch, T, d)`` goes through
    a :class:`VanillaRNN` (``T`` steps, each waiting for the last, looped in Python), through
    ``torch.nn.RNN`` with the same weights (the same ``T`` steps, looped in C++), and
    through :func:`attnlab.mechanism.attention.scaled_dot_product_attention` with ``q = k = v = x``
    (``softmax(x xᵀ / √d) x``: two matrix products, each over all positions at once).
    When ``T > d`` attention does *more* arithmetic (``2 T² d`` multiply-adds against the
    RNN's ``2 T d²``) yet usually takes less time: a few large products run at the
    processor's full speed, ``T`` small dependent ones spend most of their time getting
    started. The two RNNs differ only by the loop: their gap is the cost of Python's work at
    every step. Each timing is the median of ``repeats`` runs without gradients, the three
    timed in turns after a warm-up (:func:`attnlab.measure.median_seconds_each`), in
    processor time by default, so that other programs on the machine do not bend the
    curves. With ``threads=1`` nothing runs side by side: the measurement compares many
    small dependent steps with a few large ones, not what several cores would add. The
    RNN's weights come from a fixed seed, so the global RNG is left untouched.

    Args:
        lengths: the sequence lengths ``T`` to time.
        d: the model width (input and hidden size).
        repeats: runs per measurement (the median is kept).
        batch: sequences per run.
        device: where to run (default: torch's default device).
        threads: if given, run with this many CPU threads (restored afterwards). On a busy
            machine ``threads=1`` gives far steadier numbers: multi-threaded kernels can
            wait milliseconds for a thread that the OS has descheduled.
        clock: ``"cpu"`` (processor time, the default) or ``"wall"`` (elapsed time); on a
            GPU the wall clock is used.

    Returns:
        One dict per length: ``{"length": T, "rnn_steps": T, "attention_steps": 1,
        "rnn_ms": ..., "torch_rnn_ms": ..., "attention_ms": ...,
        "ratio": rnn_ms / attention_ms}`` (``rnn_ms``: :class:`VanillaRNN`;
        ``torch_rnn_ms``: ``torch.nn.RNN``).

    Taught in: chapters/01_why_attention.ipynb (and bench/)
    """
    d, repeats, batch = (
        positive_int(n, name) for n, name in ((d, "d"), (repeats, "repeats"), (batch, "batch"))
    )
    threads = None if threads is None else positive_int(threads, "threads")
    lengths = _lengths(lengths)
    device = torch.empty(0).device if device is None else torch.device(device)
    clock = check_clock(clock)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        rnn = VanillaRNN(d, d).to(device)
        torch_rnn = nn.RNN(d, d, batch_first=True).to(device)
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):  # the same weights
            getattr(torch_rnn, name + "_l0").copy_(getattr(rnn, name))
    generator = torch.Generator().manual_seed(0)
    # one (B, T, D) input per length, drawn on the CPU (the generator's device), then moved
    inputs = [
        torch.randn(batch, n, d, generator=generator, device="cpu").to(device) for n in lengths
    ]
    previous_threads = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        return [_time_one_length(rnn, torch_rnn, x, repeats, device, clock) for x in inputs]
    finally:
        torch.set_num_threads(previous_threads)


def _time_one_length(
    rnn: VanillaRNN,
    torch_rnn: nn.RNN,
    x: torch.Tensor,
    repeats: int,
    device: torch.device,
    clock: str,
) -> dict[str, float]:
    length = x.shape[1]
    runs = {
        "rnn": lambda: rnn(x),  # T sequential steps, looped in Python
        "torch_rnn": lambda: torch_rnn(x),  # the same T steps, looped in C++
        "attention": lambda: scaled_dot_product_attention(x, x, x),  # two large products
    }
    with torch.no_grad():
        seconds = median_seconds_each(runs, repeats, clock=clock, device=device)
    rnn_s, attn_s = seconds["rnn"], seconds["attention"]
    return {
        "length": length,
        "rnn_steps": length,
        "attention_steps": 1,
        "rnn_ms": 1e3 * rnn_s,
        "torch_rnn_ms": 1e3 * seconds["torch_rnn"],
        "attention_ms": 1e3 * attn_s,
        "ratio": rnn_s / attn_s,
    }


def attention_cost(
    lengths: list[int],
    d: int,
    *,
    repeats: int = 3,
    threads: int | None = None,
    device: str | torch.device | None = None,
    clock: str = "cpu",
) -> list[dict[str, float]]:
    r"""What one self-attention layer costs as the sequence grows: time and score memory.

    For each length ``T``, times :func:`attnlab.mechanism.attention.scaled_dot_product_attention` on a
    random ``(1, T, d)`` input with ``q = k = v = x`` (median of ``repeats`` after a
    warm-up, processor time by default: :func:`attnlab.measure.median_seconds`), and
    records the size in bytes of the ``(1, T, T)`` weight matrix it returned: ``T² × 4``
    in float32.
    The arithmetic is ``≈ 4 T² d`` (two ``T × T × d`` products), so at large ``T`` both
    grow like ``T²``.

    Args:
        lengths: the sequence lengths ``T``.
        d: the width of queries, keys and values.
        repeats: timed runs per length (the median is kept).
        threads: if given, the CPU thread count during the runs (restored afterwards).
        device: where to run (default: torch's default device).
        clock: ``"cpu"`` (processor time, the default) or ``"wall"`` (elapsed time).

    Returns:
        One dict per length: ``{"length": T, "attention_ms": ..., "scores_bytes": ...}``.

    Taught in: chapters/01_why_attention.ipynb
    """
    d, repeats = positive_int(d, "d"), positive_int(repeats, "repeats")
    threads = None if threads is None else positive_int(threads, "threads")
    lengths = _lengths(lengths)
    device = torch.empty(0).device if device is None else torch.device(device)
    clock = check_clock(clock)
    generator = torch.Generator().manual_seed(0)
    previous_threads = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    rows = []
    try:
        for length in lengths:
            x = torch.randn(1, length, d, generator=generator, device="cpu")  # (1, T, d)
            x = x.to(device)
            with torch.no_grad():
                _, weights = scaled_dot_product_attention(x, x, x)  # (1, T, T)
                seconds = median_seconds(
                    lambda x=x: scaled_dot_product_attention(x, x, x),
                    repeats,
                    clock=clock,
                    device=device,
                )
            rows.append(
                {
                    "length": length,
                    "attention_ms": 1e3 * seconds,
                    "scores_bytes": weights.numel() * weights.element_size(),
                }
            )
    finally:
        torch.set_num_threads(previous_threads)
    return rows


# ---------------------------------------------------------------------------------------------
# 3. Path lengths
# ---------------------------------------------------------------------------------------------


def path_lengths(n: int, kernel_size: int = 3) -> dict[str, int]:
    r"""Maximum number of steps a signal travels between two of ``n`` positions, per layer type.

    As in Table 1 and Section 4 of Vaswani et al. (2017), counted exactly rather than in
    O-notation:

    - ``"recurrent"``: ``n - 1`` (from the first position to the last, one step at a time);
    - ``"convolution"`` (contiguous kernels of width ``k``, as ConvS2S): each layer widens the
      receptive field by ``k - 1``, so ``ceil((n - 1) / (k - 1))`` layers;
    - ``"dilated_convolution"`` (kernels of width ``k`` with dilations ``1, k, k², ...``, an
      idealised stack): the receptive field is ``k^L`` after ``L`` layers, so
      ``ceil(log_k n)`` layers. ByteNet's dilations were ``1, 2, 4, 8, 16`` with ``k = 3``,
      repeated in stacks: logarithmic within one stack's reach, linear beyond it;
    - ``"self_attention"``: 1, every position sees every other directly.

    For ``n = 1`` every path has length 0.

    Args:
        n: number of positions.
        kernel_size: convolution width ``k >= 2``.

    Returns:
        ``{"recurrent": ..., "convolution": ..., "dilated_convolution": ...,
        "self_attention": ...}``.

    Taught in: chapters/01_why_attention.ipynb
    """
    n = check_int(n, "n", low=1, expected="an integer >= 1")
    k = check_int(kernel_size, "kernel_size", low=2)
    layers = 0  # smallest L with k**L >= n, in integers (math.log can round 2.0 up to 3)
    while k**layers < n:
        layers += 1
    return {
        "recurrent": n - 1,
        "convolution": -(-(n - 1) // (k - 1)),  # ceil((n - 1) / (k - 1))
        "dilated_convolution": layers,
        "self_attention": 1 if n > 1 else 0,
    }
