"""attnlab.measure: medians of processor time, taken in turns after a warm-up."""

from __future__ import annotations

import time

import pytest

from attnlab.measure import (
    SAMPLE_SECONDS,
    check_clock,
    median_seconds,
    median_seconds_each,
    times_faster,
)


def spin(seconds: float) -> None:
    """Keep the processor busy for ``seconds`` of processor time."""
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass


def test_each_run_is_warmed_up_then_timed_in_turns() -> None:
    calls: list[str] = []
    runs = {
        "a": lambda: (calls.append("a"), spin(2 * SAMPLE_SECONDS)),
        "b": lambda: (calls.append("b"), spin(2 * SAMPLE_SECONDS)),
    }
    seconds = median_seconds_each(runs, repeats=3)
    assert list(seconds) == ["a", "b"]
    assert all(2 * SAMPLE_SECONDS <= s < 20 * SAMPLE_SECONDS for s in seconds.values())
    # a warm-up call and a timed one (how long is a call?), then rounds of a call each
    assert calls == ["a", "a", "b", "b"] + ["a", "b"] * 3
    calls.clear()
    median_seconds_each(runs, repeats=2, warm_up=False)
    assert calls == ["a", "b"] * 2


def test_a_short_call_is_repeated_within_each_round() -> None:
    calls: list[int] = []
    seconds = median_seconds(lambda: calls.append(1), repeats=3)
    assert len(calls) > 100  # not 5 calls: 3 rounds of many
    assert 0 < seconds < 1e-4  # the time of one call


def test_processor_time_does_not_count_waiting() -> None:
    # What makes the chapters' timings hold on a busy machine: time the process spends
    # not running (here asleep; there, descheduled for other programs) is not counted.
    wait = lambda: time.sleep(0.05)  # noqa: E731
    assert median_seconds(wait, repeats=1, clock="cpu") < 0.02
    assert median_seconds(wait, repeats=1, clock="wall") >= 0.05


def test_the_median_ignores_one_slow_round() -> None:
    delays = iter([0.01, 0.01, 0.01, 0.3, 0.01])  # warm-up, timed warm-up, 3 rounds
    seconds = median_seconds(lambda: time.sleep(next(delays)), repeats=3, clock="wall")
    assert 0.01 <= seconds < 0.1


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: median_seconds(lambda: None, repeats=0), "repeats"),
        (lambda: median_seconds(lambda: None, clock="gpu"), "clock must be one of"),
        (lambda: median_seconds_each({}), "at least one"),
        (lambda: check_clock("wall clock"), "'cpu', 'wall'"),
    ],
)
def test_bad_arguments(call, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize(
    ("ratio", "words"),
    [
        (4.43, "4.4x faster"),
        (1.06, "1.1x faster"),
        (1.04, "as fast"),
        (0.96, "as fast"),
        (0.94, "1.1x slower"),
        (0.5, "2.0x slower"),
    ],
)
def test_times_faster_says_what_the_digits_say(ratio: float, words: str) -> None:
    assert times_faster(ratio) == words


def test_times_faster_needs_a_positive_ratio() -> None:
    with pytest.raises(ValueError, match="ratio"):
        times_faster(0.0)
