"""The cost of H heads of size D/H against one head of size D, computed and measured.

For a fixed width D, one :class:`~attnlab.mechanism.multihead.MultiHeadAttention` layer is built with
H = 1, 2, 4, ..., 64 heads. For each, the table lists:

- the parameter count (``mha_parameter_count``: 4·D² + 4·D whatever H);
- the FLOPs of the matrix products computed by ``mha_flops`` and the FLOPs counted by
  ``torch.utils.flop_counter.FlopCounterMode`` during a real forward pass (they agree and
  do not depend on H);
- the softmax entries B·H·T·S, which do grow with H;
- the measured time of forward + backward on 2 CPU threads (median of repeats, best of 3
  interleaved rounds), relative to H = 1.

Matrix products of the same total size run in about the same time whatever H, until the
heads get so thin (d = D/H of 4 or 8) that the batched products of the scores, the
softmax over H·T·S entries and the reshapes start to show.

Run: ``python bench/bench_heads.py`` (or ``make bench``).
"""

from __future__ import annotations

import argparse
import functools

import torch
from _table import print_table
from torch.utils.flop_counter import FlopCounterMode

from attnlab.measure import median_seconds_each
from attnlab.mechanism.multihead import MultiHeadAttention, mha_flops, mha_parameter_count


def fwd_bwd(mha: MultiHeadAttention, x: torch.Tensor) -> None:
    """One forward + backward pass."""
    out, _ = mha(x.detach().requires_grad_())
    out.backward(torch.ones_like(out))


def counted_flops(mha: MultiHeadAttention, x: torch.Tensor) -> int:
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        mha(x)
    return counter.get_total_flops()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--d-model", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    torch.set_num_threads(2)
    torch.manual_seed(0)
    B, T, D = args.batch, args.length, args.d_model
    x = torch.randn(B, T, D)
    heads = [h for h in (1, 2, 4, 8, 16, 32, 64) if D % h == 0]
    layers = {H: MultiHeadAttention(D, H) for H in heads}
    # Timed in turns (attnlab.measure), so a burst of load hits every H alike.
    runs = {H: functools.partial(fwd_bwd, mha, x) for H, mha in layers.items()}
    samples = [median_seconds_each(runs, args.repeats, clock="wall") for _ in range(3)]
    seconds = {H: min(s[H] for s in samples) for H in heads}
    rows = []
    for H, mha in layers.items():
        cost = mha_flops(D, H, T, batch=B)
        params = sum(p.numel() for p in mha.parameters())
        assert params == mha_parameter_count(D, H)
        rows.append(
            [
                H,
                D // H,
                f"{params:,}",
                f"{cost['total'] / 1e6:.1f}",
                f"{counted_flops(mha, x) / 1e6:.1f}",
                f"{cost['softmax entries']:,}",
                f"{1e3 * seconds[H]:.1f}",
                f"{seconds[H] / seconds[heads[0]]:.2f}",
            ]
        )
    print_table(
        f"H heads of size d = D/H, B={B}, T=S={T}, D={D}, {torch.get_num_threads()} threads "
        f"(forward + backward: best of 3 medians of {args.repeats})",
        [
            "H",
            "d",
            "parameters",
            "MFLOP formula",
            "MFLOP counted",
            "softmax entries",
            "ms fwd+bwd",
            "time / H=1",
        ],
        rows,
    )


if __name__ == "__main__":
    main()
