"""What the four similarity scores of chapter 3 cost: dot, scaled dot, general, additive.

Scores ``T`` queries against ``S = T`` keys of size ``d = 64`` (hidden size ``h = 64`` for
the additive score), float32 tensors on 2 CPU threads; the median of repeated runs after
warm-up. The dot-product scores are one matrix product; the general score adds a
``(T, d) @ (d, d)`` product; the additive score builds a ``(T, S, h)`` tensor and takes a
``tanh`` of every entry, so its time and memory grow as ``T·S·h``.

Run: ``python bench/bench_similarity.py`` (or ``make bench``).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from _table import print_table

from attnlab.measure import median_seconds
from attnlab.mechanism.similarity import additive_scores, general_scores, scaled_scores, scores

D = H = 64


def _median_ms(fn: Callable[[], object], repeats: int = 7) -> float:
    return 1e3 * median_seconds(fn, repeats, clock="wall")


def main() -> None:
    torch.set_num_threads(2)
    g = torch.Generator().manual_seed(0)
    rows = []
    for T in (128, 256, 512, 1024):
        q, k = torch.randn(T, D, generator=g), torch.randn(T, D, generator=g)
        W = torch.randn(D, D, generator=g) / D**0.5
        W_a, U_a = torch.randn(D, H, generator=g), torch.randn(D, H, generator=g)
        v_a = torch.randn(H, generator=g)
        with torch.no_grad():
            dot = _median_ms(lambda q=q, k=k: scores(q, k))
            scaled = _median_ms(lambda q=q, k=k: scaled_scores(q, k))
            general = _median_ms(lambda q=q, k=k, W=W: general_scores(q, k, W))
            additive = _median_ms(
                lambda q=q, k=k, W_a=W_a, U_a=U_a, v_a=v_a: additive_scores(q, k, W_a, U_a, v_a)
            )
        hidden_mb = T * T * H * 4 / 2**20  # the (T, S, h) float32 tensor
        rows.append((T, dot, scaled, general, additive, additive / scaled, hidden_mb))
    print_table(
        f"Scoring T queries against T keys, d = h = {D}, float32, 2 threads (ms, median)",
        ["T", "dot", "scaled", "general", "additive", "additive/scaled", "(T,S,h) MB"],
        rows,
    )


if __name__ == "__main__":
    main()
