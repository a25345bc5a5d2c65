"""Speed and memory of attnlab's MultiHeadAttention against PyTorch's nn.MultiheadAttention.

1. Time: forward + backward at batch 32, length 128, d_model 256, 8 heads, on 2 CPU threads;
   the median of repeated runs after warm-up. PyTorch is timed twice: ``need_weights=True``
   (it materialises the (B, H, T, S) weights, like ours, which always returns them) and
   ``need_weights=False`` (it may call a fused attention kernel that never stores them).
   Target: ours / PyTorch(need_weights=True) <= 1.3.
2. Memory: the peak CPU memory allocated by one forward (+ backward) pass, measured with
   ``torch.profiler`` (``profile_memory=True``: every allocation and free, in time order),
   against the size of the attention weights ``B·H·T·S·4`` bytes, as the length grows.
   The weights grow as T², everything else in the layer as T.

Run: ``python bench/bench_mha.py`` (or ``make bench``).
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable

import torch
from _table import print_table
from torch import nn

from attnlab.measure import median_seconds_each, peak_memory
from attnlab.mechanism.multihead import MultiHeadAttention

MB = 2**20


def _ours(d_model: int, n_heads: int) -> Callable[[torch.Tensor], torch.Tensor]:
    mha = MultiHeadAttention(d_model, n_heads)
    return lambda x: mha(x)[0]


def _theirs(d_model: int, n_heads: int, need_weights: bool) -> Callable:
    mha = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
    return lambda x: mha(x, x, x, need_weights=need_weights)[0]


def _fwd_bwd(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor) -> None:
    x = x.detach().requires_grad_()
    out = fn(x)  # (B, T, D)
    out.backward(torch.ones_like(out))


def time_table(batch: int, length: int, d_model: int, n_heads: int, repeats: int) -> None:
    torch.manual_seed(0)
    x = torch.randn(batch, length, d_model)
    fns = {
        "attnlab MultiHeadAttention": _ours(d_model, n_heads),
        "nn.MultiheadAttention need_weights=True": _theirs(d_model, n_heads, True),
        "nn.MultiheadAttention need_weights=False": _theirs(d_model, n_heads, False),
    }
    # Timed in turns (attnlab.measure) so that a burst of load on the machine hits them alike.
    runs = {name: functools.partial(_fwd_bwd, fn, x) for name, fn in fns.items()}
    samples = [median_seconds_each(runs, repeats, clock="wall") for _ in range(3)]
    seconds = {name: min(s[name] for s in samples) for name in fns}
    ours = seconds["attnlab MultiHeadAttention"]
    rows = [[name, f"{1e3 * s:.1f}", f"{ours / s:.2f}"] for name, s in seconds.items()]
    print_table(
        f"forward + backward, B={batch}, T=S={length}, D={d_model}, H={n_heads}, "
        f"{torch.get_num_threads()} threads (best of 3 medians of {repeats}; target ours/PyTorch "
        "need_weights=True <= 1.3)",
        ["implementation", "ms", "ours / this"],
        rows,
    )


def memory_table(batch: int, lengths: list[int], d_model: int, n_heads: int) -> None:
    torch.manual_seed(0)
    ours = _ours(d_model, n_heads)
    theirs_w = _theirs(d_model, n_heads, True)
    theirs_nw = _theirs(d_model, n_heads, False)
    rows = []
    for T in lengths:
        x = torch.randn(batch, T, d_model)
        weights_mb = batch * n_heads * T * T * 4 / MB  # (B, H, T, S) float32

        def forward_only(fn: Callable = ours, x: torch.Tensor = x) -> None:
            with torch.no_grad():
                fn(x)

        rows.append(
            [
                T,
                f"{weights_mb:.1f}",
                f"{peak_memory(forward_only) / MB:.1f}",
                f"{peak_memory(lambda x=x: _fwd_bwd(ours, x)) / MB:.1f}",
                f"{peak_memory(lambda x=x: _fwd_bwd(theirs_w, x)) / MB:.1f}",
                f"{peak_memory(lambda x=x: _fwd_bwd(theirs_nw, x)) / MB:.1f}",
            ]
        )
    print_table(
        f"peak CPU memory (MB) of one pass, B={batch}, D={d_model}, H={n_heads} "
        "(torch.profiler, profile_memory=True)",
        [
            "T = S",
            "weights B·H·T·S·4",
            "ours fwd (no_grad)",
            "ours fwd+bwd",
            "nn.MHA weights=True fwd+bwd",
            "nn.MHA weights=False fwd+bwd",
        ],
        rows,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--lengths", type=int, nargs="+", default=[128, 256, 512, 1024])
    args = parser.parse_args()
    torch.set_num_threads(2)
    time_table(32, 128, 256, 8, args.repeats)
    memory_table(4, args.lengths, 256, 8)


if __name__ == "__main__":
    main()
