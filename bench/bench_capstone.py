"""Chapter 9's race: nanoGPT's CPU recipe against the course's, and the modern-block ablations.

**The race** (default). For each seed, in turns (so a slow stretch of a shared machine falls
on both), ``attnlab.tasks.textlm.NANOGPT_CPU`` (nanoGPT's README CPU run rebuilt with the
course's model: 4 layers, 4 heads, 128 wide, context 64, batch 12, 2,000 steps) and
``FAST_CPU`` (the course's recipe) train on the shipped Shakespeare. Per run: training
seconds (evaluations left out), the exact validation loss on the whole held-out text
("val loss"), characters per second, and where the time went (forward, backward,
optimiser, batches, in % of the training time). For the course's recipe: whether its final
validation loss is at or below the baseline's of the same seed, the training seconds at
its first curve point at or below the baseline's last (both on the curve's fixed stretch of
the validation text), and its time as a fraction of the baseline's. The goal: at or below
the baseline's loss in at most a third of its time, on every seed.

**The ablations** (``--ablations``): each entry of ``attnlab.tasks.textlm.ABLATIONS``
changes one thing in ``ABLATION_RECIPE`` (the course's recipe on a budget of training
seconds); every run gets the same training seconds (by ``--clock``), and the steps that
fitted in them (and the milliseconds per step) are reported beside its loss: a block that
costs more per step pays for it in steps. ``--write`` stores the table in ``attnlab/data_files/ablations.json``, which the
chapter reads (``attnlab.tasks.textlm.stored_ablations``).

The machine's load (``os.getloadavg``) is printed before and after. On a shared machine
pass ``--clock cpu --threads 1``: processor time of one thread is about the time on an
idle machine, where wall time counts the other programs too.

Run: ``python bench/bench_capstone.py [--seeds 3] [--threads 2] [--clock wall] [--jobs 1]``
(``--jobs 6``: the six runs side by side, one process each, each pair under the same load;
processor time, ``--clock cpu``, is the clock for that),
``python bench/bench_capstone.py --ablations [--seeds 5] [--write]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
from concurrent.futures import ProcessPoolExecutor
from importlib import resources
from pathlib import Path

from _table import print_table

from attnlab.tasks.textlm import (
    ABLATION_RECIPE,
    ABLATIONS,
    FAST_CPU,
    NANOGPT_CPU,
    TextRun,
    text_model,
    train_text_lm,
)


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f}, {five:.1f}, {fifteen:.1f} on {os.cpu_count()} cores"


def _split(run: TextRun) -> list[str]:
    total = sum(run.split.values())
    parts = ("forward", "backward", "optimizer", "batches")
    return [f"{100 * run.split[p] / total:.0f}" for p in parts]


def _row(run: TextRun, baseline: TextRun | None) -> list[object]:
    row: list[object] = [
        run.recipe.name,
        run.seed,
        run.steps[-1],
        f"{run.train_seconds:.1f}",
        f"{run.final_val_loss:.3f}",
        f"{run.tokens_per_second:.0f}",
        *_split(run),
    ]
    if baseline is None:
        return [*row, "-", "-", "-"]
    reached = run.final_val_loss <= baseline.final_val_loss
    at = run.seconds_to(baseline.val_loss[-1])
    ratio = run.train_seconds / baseline.train_seconds
    return [*row, "yes" if reached else "no", "-" if at is None else f"{at:.1f}", f"{ratio:.2f}"]


def _one(recipe_name: str, seed: int, threads: int, clock: str) -> TextRun:
    """One run of the race (its model dropped: the record only)."""
    recipe = {r.name: r for r in (NANOGPT_CPU, FAST_CPU)}[recipe_name]
    run = train_text_lm(recipe, seed, threads=threads, clock=clock)
    print(
        f"{recipe_name}, seed {seed}: {run.final_val_loss:.3f} after {run.steps[-1]} steps, "
        f"{run.train_seconds:.1f} {clock} s ({_load()})",
        flush=True,
    )
    run.model = None
    return run


def race(seeds: int, threads: int, clock: str, jobs: int) -> None:
    rows, verdicts = [], []
    # Per seed the baseline, then the course's recipe; with jobs > 1 that many runs side by
    # side (jobs = 2 * seeds: every run at once, each pair under the same load).
    todo = [(r.name, seed) for seed in range(seeds) for r in (NANOGPT_CPU, FAST_CPU)]
    args = ([n for n, _ in todo], [s for _, s in todo], [threads] * len(todo), [clock] * len(todo))
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            done = list(pool.map(_one, *args))
    else:
        done = [_one(*a) for a in zip(*args, strict=True)]
    pairs = list(zip(done[::2], done[1::2], strict=True))
    for base, ours in pairs:
        rows += [_row(base, None), _row(ours, base)]
        met = ours.final_val_loss <= base.final_val_loss
        verdicts.append(met and ours.train_seconds <= base.train_seconds / 3)
    header = ["recipe", "seed", "steps", f"{clock} s", "val loss", "chars/s", "fwd %", "bwd %"]
    header += ["opt %", "data %", "<= base", "s to base", "time / base"]
    title = f"nanoGPT's CPU recipe vs the course's, {threads} thread(s), {clock} clock"
    if jobs > 1:
        title += f", {jobs} runs at a time"
    print_table(title, header, rows)
    ok = (
        "yes"
        if all(verdicts)
        else "no: " + ", ".join(f"seed {i}" for i, v in enumerate(verdicts) if not v)
    )
    print(
        f"course recipe at or below the baseline's val loss in <= 1/3 of its time, every seed: {ok}"
    )


def _ablation(name: str, seed: int, threads: int, clock: str) -> TextRun:
    recipe = dataclasses.replace(ABLATION_RECIPE, name=name, **ABLATIONS[name])
    run = train_text_lm(recipe, seed, threads=threads, clock=clock)
    print(
        f"{name}, seed {seed}: {run.final_val_loss:.3f} after {run.steps[-1]} steps, "
        f"{run.train_seconds:.1f} {clock} s ({_load()})",
        flush=True,
    )
    run.model = None
    return run


def ablations(seeds: int, threads: int, clock: str, write: bool, jobs: int) -> None:
    rows, stored = [], []
    todo = [(name, seed) for seed in range(seeds) for name in ABLATIONS]
    args = ([n for n, _ in todo], [s for _, s in todo], [threads] * len(todo), [clock] * len(todo))
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            done = list(pool.map(_ablation, *args))
    else:
        done = [_ablation(*a) for a in zip(*args, strict=True)]
    results = {name: [r for r in done if r.recipe.name == name] for name in ABLATIONS}
    reference = sum(r.final_val_loss for r in results["course recipe"]) / seeds
    own = [r.final_val_loss for r in results["course recipe"]]  # seed by seed, in seed order
    for name, runs in results.items():
        recipe = runs[0].recipe
        n_params = sum(p.numel() for p in text_model(recipe, 64).parameters())
        losses = [r.final_val_loss for r in runs]
        seconds = [r.train_seconds for r in runs]
        steps = [r.steps[-1] for r in runs]
        ms = [1000 * s / n for s, n in zip(seconds, steps, strict=True)]
        mean = sum(losses) / seeds
        paired = [v - o for v, o in zip(losses, own, strict=True)]  # the same seed's recipe
        lower = sum(d < 0 for d in paired)
        rows.append([name, n_params, *(f"{v:.3f}" for v in losses), f"{mean - reference:+.3f}",
                     f"{min(paired):+.3f}..{max(paired):+.3f}", f"{lower}/{seeds}",
                     f"{sum(seconds) / seeds:.1f}", f"{sum(steps) / seeds:.0f}",
                     f"{sum(ms) / seeds:.1f}"])  # fmt: skip
        stored.append({
            "name": name,
            "changes": ABLATIONS[name],
            "parameters": n_params,
            "val_loss": [round(v, 4) for v in losses],
            "seconds": [round(s, 1) for s in seconds],
            "steps": steps,
            "ms_per_step": [round(m, 1) for m in ms],
            "tokens_per_second": [round(r.tokens_per_second) for r in runs],
        })  # fmt: skip
    header = [
        "change",
        "params",
        *(f"val seed {s}" for s in range(seeds)),
        "vs recipe",
        "same seed",
        "lower",
        f"{clock} s",
        "steps",
        "ms/step",
    ]
    budget = ABLATION_RECIPE.seconds
    print_table(f"ablations: {budget:g} {clock} seconds of training each, {threads} thread(s)",
                header, rows)  # fmt: skip
    if write:
        record = {
            "recipe": dataclasses.asdict(ABLATION_RECIPE),
            "equal": f"{clock} seconds: {budget:g} of training each (the steps follow)",
            "seeds": list(range(seeds)),
            "threads": threads,
            "clock": clock,
            "rows": stored,
        }
        path = Path(str(resources.files("attnlab.data_files"))) / "ablations.json"
        path.write_text(json.dumps(record, indent=1) + "\n")
        print(f"wrote {path.name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=None, help="seeds 0..n-1 (3; ablations 5)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall")
    parser.add_argument("--ablations", action="store_true", help="run the ablations instead")
    parser.add_argument("--write", action="store_true", help="store the ablation table")
    parser.add_argument("--jobs", type=int, default=1, help="runs side by side")
    args = parser.parse_args()
    print(_load(), flush=True)
    if args.ablations:
        ablations(args.seeds or 5, args.threads, args.clock, args.write, args.jobs)
    else:
        race(args.seeds or 3, args.threads, args.clock, args.jobs)
    print(_load())


if __name__ == "__main__":
    main()
