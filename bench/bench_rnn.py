"""Chapter 1's measurements as tables: sequential steps against attention's products,
what attention's T × T scores cost, and the trained recall comparison.

1. Time of two loop RNNs (``T`` steps, one after another, looped in Python by
   ``VanillaRNN`` and in C++ by ``nn.RNN``) and of self-attention over all ``T``
   positions, for ``T = 16 … 1024``, ``d = 64``, batch 1, one CPU thread, processor
   time, median of 5 taken in turns; with the slope of each line on log–log axes
   (1 = linear, 2 = quadratic).
2. Time and score memory of self-attention alone, ``T = 256 … 4096``.
3. Recall trained: steps until 90% test accuracy for a vanilla RNN and one attention layer,
   distances 1 … 64, 150 steps each (deterministic), and the wall time of the whole run.

Run: ``python bench/bench_rnn.py`` (or ``make bench``).
"""

from __future__ import annotations

import numpy as np
from _table import print_table

from attnlab.measure import Stopwatch
from attnlab.tasks.recall import compare_recall
from attnlab.tasks.rnn import attention_cost, sequential_vs_parallel_time

MB = 2**20


def slope(xs: list[float], ys: list[float]) -> float:
    """Slope of log(y) against log(x), by least squares."""
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def main() -> None:
    lengths = [16, 32, 64, 128, 256, 512, 1024]
    rows = sequential_vs_parallel_time(lengths, 64, repeats=5, threads=1)
    print_table(
        "1. Loop RNNs vs attention (d = 64, batch 1, 1 thread, median of 5, CPU time)",
        ["T", "RNN steps", "Python loop ms", "nn.RNN ms", "attention ms", "Python / attention"],
        [
            [r[key] for key in ("length", "rnn_steps", "rnn_ms", "torch_rnn_ms")]
            + [r["attention_ms"], r["ratio"]]
            for r in rows
        ],
    )
    rnn_ms = [r["rnn_ms"] for r in rows]
    torch_ms = [r["torch_rnn_ms"] for r in rows]
    attn_ms = [r["attention_ms"] for r in rows]
    print(
        f"log-log slopes over T = 16..1024: Python loop {slope(lengths, rnn_ms):.2f}, "
        f"nn.RNN {slope(lengths, torch_ms):.2f}, attention {slope(lengths, attn_ms):.2f} "
        f"(T = 256..1024: {slope(lengths[-3:], attn_ms[-3:]):.2f})"
    )

    long = [256, 512, 1024, 2048, 4096]
    cost = attention_cost(long, 64, repeats=3, threads=1)
    print_table(
        "2. Self-attention alone (d = 64, 1 thread, median of 3, CPU time)",
        ["T", "attention ms", "scores MiB"],
        [[r["length"], r["attention_ms"], r["scores_bytes"] / MB] for r in cost],
    )
    print(
        f"log-log slope of time, T = 1024..4096: {slope(long[-3:], [r['attention_ms'] for r in cost][-3:]):.2f}"
    )

    distances = [1, 2, 4, 8, 16, 32, 64]
    wall, cpu = Stopwatch("wall"), Stopwatch("cpu")
    curves = compare_recall(distances, steps=150)
    wall, cpu = wall.seconds, cpu.seconds
    print_table(
        "3. Recall at distance d: steps to 90% test accuracy (150 steps at most; - = never)",
        ["d", "RNN steps", "RNN final acc", "attention steps", "attention final acc"],
        [
            [
                d,
                rnn.steps_to(0.9) or "-",
                f"{rnn.final:.2f}",
                att.steps_to(0.9) or "-",
                f"{att.final:.2f}",
            ]
            for d, rnn, att in zip(distances, curves["rnn"], curves["attention"], strict=True)
        ],
    )
    print(f"training all 14 models: {wall:.1f} s wall, {cpu:.1f} s CPU")


if __name__ == "__main__":
    main()
