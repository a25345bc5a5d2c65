"""Run-all time of every chapter notebook, against the course's 30-second budget.

Each notebook runs top to bottom in a fresh ``python3`` kernel, exactly as a learner's
"Run all" does (slider frames included: in a kernel every explorer draws all its frames), on
a copy in a temporary folder so that the committed file is untouched. Reported per notebook:
wall seconds from the first cell to the last, the kernel's CPU seconds (user + system of the
kernel process, which a busy machine inflates less than wall time), the slowest cell, and
whether the wall time is within the budget. The load average before each run is printed,
because on a shared machine wall times are only meaningful when it is low.

Budgets are wall times on a 2-core CPU machine with nothing else running: every chapter
runs top to bottom in 30 seconds there (README.md, the ``bench/`` row of the layout). Timing is measured here rather than in a test because a
timed test fails on slow or busy machines for reasons that have nothing to do with the code.

Run: ``python bench/bench_notebooks.py [NOTEBOOK ...]`` (default: ``chapters/*.ipynb``;
``make bench`` runs it with the other benches).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
from datetime import datetime
from pathlib import Path

import nbformat
from _table import print_table
from nbclient import NotebookClient

from attnlab.measure import Stopwatch

ROOT = Path(__file__).resolve().parent.parent
BUDGET_S = 30.0


def _cell_seconds(cell: nbformat.NotebookNode) -> float:
    timing = cell.get("metadata", {}).get("execution", {})
    start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
    if not (start and end):
        return 0.0
    parse = datetime.fromisoformat
    return (parse(end.replace("Z", "+00:00")) - parse(start.replace("Z", "+00:00"))).total_seconds()


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(path: Path, timeout: int) -> tuple[float, float, int, float]:
    """Execute ``path`` in a fresh kernel; return (wall s, kernel CPU s, slowest cell, its s)."""
    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory() as tmp:
        # the notebook's folder layout, so relative paths (e.g. ../references) still resolve
        work = Path(tmp) / path.parent.name
        shutil.copytree(path.parent, work, ignore=shutil.ignore_patterns("*.ipynb"))
        client = NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            record_timing=True,
            resources={"metadata": {"path": str(work)}},
        )
        cpu0 = _children_cpu()
        watch = Stopwatch("wall")
        client.execute()
        wall = watch.seconds
        cpu = _children_cpu() - cpu0  # the kernel has exited: its CPU time is counted
    seconds = [(_cell_seconds(c), i) for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    slowest, index = max(seconds, default=(0.0, -1))
    return wall, cpu, index, slowest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--timeout", type=int, default=600, help="per cell, seconds")
    args = parser.parse_args()
    paths = args.notebooks or sorted((ROOT / "chapters").glob("*.ipynb"))
    rows = []
    for path in paths:
        load = os.getloadavg()[0]
        wall, cpu, index, slowest = run(path.resolve(), args.timeout)
        verdict = "ok" if wall <= BUDGET_S else "over"
        rows.append((path.name, f"{load:.1f}", wall, cpu, f"#{index}: {slowest:.0f}", verdict))
        print(f"{path.name}: {wall:.1f} s", file=sys.stderr, flush=True)
    print_table(
        f"Run all, fresh kernel, budget {BUDGET_S:.0f} s wall ({os.cpu_count()} CPUs)",
        ("notebook", "load before", "wall s", "kernel cpu s", "slowest cell: s", "budget"),
        rows,
    )


if __name__ == "__main__":
    main()
