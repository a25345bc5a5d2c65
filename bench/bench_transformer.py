"""Chapter 7's two models: steps and seconds to 99% exact match, and the final score, per seed.

- **Dates** (encoder–decoder, 2 + 2 blocks, D 32, 4 heads, d_ff 64, about 46k parameters):
  ``DateTask`` ("march 5, 2021" -> "2021-03-05"), 250 steps of 32 dates, Adam lr 5e-3 with
  25 warm-up steps, graded on 1000 held-out dates (the chapter's training and grading).
- **Addition** (decoder-only, ``attnlab.tasks.training.ADDER``: the recipe of the adder the chapter
  loads, trained by ``attnlab.tasks.training.train_adder``), graded on all 500 held-out sums.

Every run trains for its whole budget, as the chapter does, and is graded every
``--check-every`` steps: "steps to 99%" is the first grading at or above 99%, "s to 99%" the
training time up to it and "train s" the time of the whole budget (wall clock, the gradings
left out); "cpu s" is this process's CPU time for the run, gradings included, which a busy
machine inflates less than wall time. "final" is the exact match after the last step.
A run per seed and per thread count; under each table, two lines say whether every run
reached 99% and whether every one ended at or above it.

Run: ``python bench/bench_transformer.py [--seeds 5] [--threads 1 2]`` (or ``make bench``).
"""

from __future__ import annotations

import argparse
import time

from _table import print_table

from attnlab.mechanism.config import TransformerConfig
from attnlab.mechanism.transformer import EncoderDecoder
from attnlab.seed import seed_everything
from attnlab.tasks.data import DateTask, batches
from attnlab.tasks.training import ADDER, exact_match, train, train_adder

TARGET = 0.99


def _dates(seed: int, threads: int, check_every: int) -> tuple[list[int], list[float], list[float]]:
    """The chapter's date model with ``seed``: graded steps, scores and training seconds."""
    seed_everything(seed, threads=threads)
    task, test = DateTask(), DateTask(split="test")
    config = TransformerConfig(d_model=32, n_heads=4, n_layers=2, d_ff=64, max_len=task.max_seq_len)
    model = EncoderDecoder(task.vocab_size, task.vocab_size, config)
    steps, checked, accuracy, seconds = 250, [], [], []
    grading, start = 0.0, time.perf_counter()

    def grade(step: int) -> None:
        nonlocal grading
        if step % check_every == 0 or step == steps:
            now = time.perf_counter()
            seconds.append(now - start - grading)
            checked.append(step)
            accuracy.append(exact_match(model, test, n=1000))
            grading += time.perf_counter() - now

    train(
        model, batches(task, 32, rng=seed + 1), steps=steps, lr=5e-3, warmup=25,
        callback=grade, progress=False,
    )  # fmt: skip
    return checked, accuracy, seconds


def _row(seed, threads, checked, accuracy, seconds, cpu) -> list[object]:
    first = next((i for i, a in enumerate(accuracy) if a >= TARGET), None)
    reached = [checked[first], f"{seconds[first]:.1f}"] if first is not None else ["never", "-"]
    return [seed, threads, *reached, f"{seconds[-1]:.1f}", f"{cpu:.1f}", f"{accuracy[-1]:.1%}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="runs with seeds 0..n-1")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="torch threads")
    parser.add_argument("--check-every", type=int, default=25, help="steps between gradings")
    args = parser.parse_args()
    date_rows, add_rows = [], []
    for threads in args.threads:
        for seed in range(args.seeds):
            cpu = time.process_time()
            graded = _dates(seed, threads, args.check_every)
            date_rows.append(_row(seed, threads, *graded, time.process_time() - cpu))

            cpu = time.process_time()
            run = train_adder(seed, threads=threads, eval_every=args.check_every, progress=False)
            graded = (run.checked, run.accuracy, run.seconds)
            add_rows.append(_row(seed, threads, *graded, time.process_time() - cpu))
    header = ["seed", "threads", "steps to 99%", "s to 99%", "train s", "cpu s", "final"]
    recipe = ", ".join(f"{k} {v}" for k, v in ADDER.items())
    tables = [
        ("dates, encoder-decoder, 250 steps of 32: exact match on 1000 held-out dates", date_rows),
        (f"2-digit addition, decoder-only ({recipe}): exact match on the 500 held-out sums",
         add_rows),
    ]  # fmt: skip
    seeds = f"seeds 0-{args.seeds - 1}" if args.seeds > 1 else "seed 0"
    runs = f"{seeds} at {' and '.join(str(t) for t in args.threads)} thread(s)"
    for title, rows in tables:
        print_table(title, header, rows)
        never = [f"seed {r[0]} at {r[1]}" for r in rows if r[2] == "never"]
        below = [f"seed {r[0]} at {r[1]}" for r in rows if float(r[-1][:-1]) < 100 * TARGET]
        for what, missed in (("reached", never), ("ended at or above", below)):
            verdict = "yes" if not missed else "no: not " + ", ".join(missed) + " thread(s)"
            print(f"every run ({runs}) {what} {TARGET:.0%}: {verdict}")


if __name__ == "__main__":
    main()
