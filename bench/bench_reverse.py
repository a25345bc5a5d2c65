"""Wall time on 2 CPU threads for a small EncoderDecoder to reach 99% exact match on `reverse`.

The model and recipe are those of tests/test_learning.py (10 symbols, length 10, d_model 64,
4 heads, 1 layer, batch 64, Adam with warm-up). Every 25 steps training pauses, 500 fresh
sequences are decoded greedily, and training stops once at least 99% come out exactly
right. The time of those checks is *not* counted: "train s" is optimisation only. The
final column re-grades the stopped model on 1000 other fresh sequences.

Target: under 60 s. Run: ``python bench/bench_reverse.py`` (or ``make bench``).
"""

from __future__ import annotations

import argparse

import torch
from _table import print_table

from attnlab.measure import Stopwatch
from attnlab.mechanism.config import TransformerConfig
from attnlab.mechanism.transformer import EncoderDecoder
from attnlab.seed import seed_everything
from attnlab.tasks.data import Task, batches
from attnlab.tasks.training import exact_match, train

TARGET = 0.99


def run(seed: int, max_steps: int = 1000) -> tuple[int, float, float, float]:
    """Train one model; return (steps, train seconds, check seconds, final exact match)."""
    seed_everything(seed, threads=2)
    task = Task("reverse", n_symbols=10, min_len=10, max_len=10)
    config = TransformerConfig(d_model=64, n_heads=4, d_ff=128, max_len=task.max_seq_len)
    model = EncoderDecoder(task.vocab_size, task.vocab_size, config)
    watch = Stopwatch()  # training time; the checks of the target are paused out of it

    def reached() -> bool:
        with watch.paused():
            return exact_match(model, task, n=500, rng=10_000 + seed) >= TARGET

    history = train(
        model,
        batches(task, 64, rng=seed + 1),
        steps=max_steps,
        lr=2e-3,
        warmup=50,
        stop_when=reached,
        check_every=25,
        progress=False,
    )
    training, checking = watch.seconds, watch.paused_seconds
    final = exact_match(model, task, n=1000, rng=20_000 + seed)
    return len(history), training, checking, final


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3, help="number of runs (seeds 0..n-1)")
    args = parser.parse_args()
    torch.set_num_threads(2)
    rows = []
    for seed in range(args.seeds):
        steps, train_s, check_s, final = run(seed)
        rows.append([seed, steps, f"{train_s:.1f}", f"{check_s:.1f}", f"{final:.3f}"])
    print_table(
        f"reverse (10 symbols, length 10): time to {TARGET:.0%} exact match, "
        f"{torch.get_num_threads()} CPU threads (target < 60 s)",
        ["seed", "steps", "train s", "checks s", "exact match (1000 new)"],
        rows,
    )


if __name__ == "__main__":
    main()
