"""Measuring code on a machine that other programs share: medians of processor time, peak memory.

A wall clock counts everything that happened while the code ran, including the other
programs the operating system ran in between. On a busy laptop a 30 ms loop can take 90 ms
of wall time while a 0.05 ms product, over before the next switch, loses nothing: every
curve of time against size bends, and a comparison can flip. Three habits keep a
measurement about the code itself:

- **Processor time** (:func:`time.process_time`): the seconds this process spent
  computing, however many other programs ran. With one thread (``threads=1``, as the
  chapters measure) that is the time the computation takes on an idle machine. Where the
  processor only queues the work (a GPU) or its clock is coarse (Windows counts it in
  steps of about 16 ms), the wall clock is used, after synchronising with the device.
- **A warm-up call** first: the first call pays for allocations and lazy initialisation.
- **Medians of several rounds, taken in turns**: to compare A with B, each round times A
  and then B, so a slow stretch of the machine falls on both; the median ignores the odd
  slow round. A call shorter than a few milliseconds is repeated within each round (as
  :mod:`timeit` does), so that it is not timed cold, its data pushed out of the caches by
  whatever ran just before.

Timings still differ between machines and runs: show them in figures, never in printed
text that a reader (or nbval) compares.

Memory is measured by :func:`peak_memory`, from every allocation and free of torch's CPU
allocator, and training time without its evaluations by a :class:`Stopwatch` that pauses.

Taught in: chapters/01_why_attention.ipynb, chapters/08_scale.ipynb
"""

from __future__ import annotations

import contextlib
import math
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import torch

from ._validate import positive_int, positive_number

__all__ = [
    "CLOCKS",
    "Stopwatch",
    "check_clock",
    "median_seconds",
    "median_seconds_each",
    "peak_memory",
    "times_faster",
]

CLOCKS = ("cpu", "wall")
"""``"cpu"``: processor time of this process; ``"wall"``: elapsed time."""
SAMPLE_SECONDS = 0.005
"""A shorter call is repeated within one timed sample (see :func:`median_seconds_each`)."""
MAX_CALLS = 10_000
"""The most calls of one run within one timed sample."""


def check_clock(clock: Any) -> str:
    """``clock`` if it is one of :data:`CLOCKS`, else a ``ValueError`` naming them."""
    if clock not in CLOCKS:
        raise ValueError(f"clock must be one of {CLOCKS}, got {clock!r}")
    return clock


def _clock(
    clock: str, device: torch.device | None
) -> tuple[Callable[[], float], Callable[[], None]]:
    """``(read the clock, wait for the device)`` for ``clock`` on ``device``."""
    check_clock(clock)
    kind = "cpu" if device is None else device.type
    if kind == "cuda":
        return time.perf_counter, torch.cuda.synchronize
    if kind == "mps":
        return time.perf_counter, torch.mps.synchronize
    coarse = sys.platform == "win32"  # process_time advances in clock ticks there
    if clock == "cpu" and not coarse:
        return time.process_time, lambda: None
    return time.perf_counter, lambda: None


def median_seconds_each(
    runs: Mapping[str, Callable[[], Any]],
    repeats: int = 5,
    *,
    clock: str = "cpu",
    device: str | torch.device | None = None,
    warm_up: bool = True,
) -> dict[str, float]:
    """Median seconds of one call of each run, the runs timed in turns after a warm-up.

    Round ``r`` times every run once, in order: a stretch of machine load slows all of
    them alike instead of one. A run shorter than :data:`SAMPLE_SECONDS` (measured after
    the warm-up) is called several times in a row within each round and the time divided
    by the count, as :mod:`timeit` does: a 0.02 ms call would otherwise be timed cold,
    right after the other runs or other programs filled the caches with their own data.

    Args:
        runs: ``{name: function of no arguments}``.
        repeats: timed rounds (``>= 1``).
        clock: ``"cpu"`` (processor time: other programs do not count) or ``"wall"``.
        device: where the work runs (default: the CPU). On a GPU the wall clock is used,
            with a synchronisation after each call.
        warm_up: call each run first, untimed (``False`` when the same code has just run,
            e.g. timed at a smaller size: then each round calls each run once).

    Returns:
        ``{name: seconds}``, in the order of ``runs``.

    Raises:
        ValueError: ``repeats`` not a positive integer, an unknown ``clock``, no runs.

    Taught in: chapters/01_why_attention.ipynb, chapters/08_scale.ipynb
    """
    positive_int(repeats, "repeats")
    if not runs:
        raise ValueError("runs must name at least one function to time")
    now, sync = _clock(clock, None if device is None else torch.device(device))

    def seconds(run: Callable[[], Any], number: int) -> float:
        start = now()
        for _ in range(number):
            run()
        sync()
        return (now() - start) / number

    calls = dict.fromkeys(runs, 1)
    for name, run in runs.items() if warm_up else ():
        seconds(run, 1)  # first calls pay for allocations and lazy set-up
        warm = seconds(run, 1)
        calls[name] = min(math.ceil(SAMPLE_SECONDS / max(warm, 1e-9)), MAX_CALLS)
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            times[name].append(seconds(run, calls[name]))
    return {name: statistics.median(t) for name, t in times.items()}


def median_seconds(
    run: Callable[[], Any],
    repeats: int = 3,
    *,
    clock: str = "cpu",
    device: str | torch.device | None = None,
) -> float:
    """Median seconds of ``run()`` over ``repeats`` calls, after one warm-up call.

    The median, not the mean: one call slowed down by the rest of the machine does not
    move it. Processor time by default (see the module's notes); timings vary from run to
    run: show them in figures, not in printed text.

    Args:
        run: a function of no arguments.
        repeats: number of timed calls (``>= 1``).
        clock: ``"cpu"`` (processor time) or ``"wall"`` (elapsed time).
        device: where the work runs (default: the CPU).

    Returns:
        Seconds (``float``).

    Raises:
        ValueError: ``repeats`` is not a positive integer, or an unknown ``clock``.

    Taught in: chapters/08_scale.ipynb
    """
    return median_seconds_each({"run": run}, repeats, clock=clock, device=device)["run"]


def times_faster(ratio: float) -> str:
    """A ratio of two times in words: ``"3.4x faster"``, ``"1.2x slower"`` or ``"as fast"``.

    ``ratio`` is the slower way's time over the faster one's, e.g. recomputation's over
    the cache's. The words follow the one decimal shown, so a title built from them says
    what the measured numbers say, whatever they are.

    Taught in: chapters/08_scale.ipynb
    """
    ratio = positive_number(ratio, "ratio")
    if round(ratio, 1) > 1:
        return f"{ratio:.1f}x faster"
    if round(1 / ratio, 1) > 1:
        return f"{1 / ratio:.1f}x slower"
    return "as fast"


class Stopwatch:
    """Seconds since it started, less the time spent inside :meth:`paused` blocks.

    For a training run graded as it goes: ``watch.seconds`` at each evaluation is the
    training time so far, the evaluations themselves left out::

        watch = Stopwatch()
        ...                                  # train some steps
        elapsed = watch.seconds              # training time so far
        with watch.paused():
            score = evaluate(model)          # not counted

    Args:
        clock: ``"wall"`` (elapsed time, the default) or ``"cpu"`` (processor time of this
            process, every thread's).

    Raises:
        ValueError: an unknown ``clock``.
    """

    def __init__(self, clock: str = "wall") -> None:
        self._now = time.process_time if check_clock(clock) == "cpu" else time.perf_counter
        self._start = self._now()
        self._paused = 0.0

    @property
    def seconds(self) -> float:
        """Seconds since the start, without the paused ones."""
        return self._now() - self._start - self._paused

    @property
    def paused_seconds(self) -> float:
        """Seconds spent inside :meth:`paused` blocks so far."""
        return self._paused

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Leave the time spent inside this block out of :attr:`seconds`."""
        start = self._now()
        try:
            yield
        finally:
            self._paused += self._now() - start


def peak_memory(run: Callable[[], Any]) -> int:
    """Peak CPU bytes allocated (and not yet freed) while ``run()`` executes.

    Every allocation and free of torch's CPU allocator is recorded by ``torch.profiler``
    (``profile_memory=True``); the peak of their running sum is what ``run`` needed on
    top of what existed before. Memory held by the result is counted (it is allocated
    during ``run``).

    Args:
        run: a function of no arguments.

    Returns:
        The peak in bytes (``int``, ``>= 0``).

    Taught in: chapters/08_scale.ipynb
    """
    from torch.profiler import ProfilerActivity, profile

    with _silent_stderr():  # the profiler's C++ side logs "profiler_start/stop" lines
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            run()
    current = peak = 0
    for event in sorted(prof.events(), key=lambda e: e.time_range.start):
        current += event.self_cpu_memory_usage  # > 0 allocation, < 0 free
        peak = max(peak, current)
    return int(peak)


@contextlib.contextmanager
def _silent_stderr() -> Iterator[None]:
    """Send what is written to file descriptor 2 (C and C++ code too) to /dev/null."""
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no file descriptor 2 (an embedded interpreter): nothing to silence
        yield
        return
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
