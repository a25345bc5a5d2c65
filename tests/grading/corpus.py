"""What the learner corpora share: how a wrong answer's result is classified.

Each chapter's corpus (``test_chNN_corpus.py``) lists wrong answers written the way a
learner writes them, each with words its diagnosis must contain. A result is

- *accepted* when the wrong answer passes (a grader defect);
- *specific* when it is a diagnosis (a recognised mistake, not the exercise's generic
  hint) containing the expected words;
- *misleading* when it is a diagnosis that does not contain them;
- *generic* otherwise (the exercise's hint, or nothing).

The course's goal, per chapter: at least 9 in 10 specific, none accepted, none misleading.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from attnlab import grading
from attnlab.grading.results import CheckResult
from attnlab.grading.status import GRADER_ERROR

Entry = tuple[str, str, Any, str]
"""``(exercise, what the learner did, the answer, words the diagnosis must contain)``."""


def classify(
    check: Callable[[Any], CheckResult], answer: Any, words: str
) -> tuple[str, CheckResult]:
    """``("specific" | "generic" | "misleading" | "accepted" | "crash", the result)``.

    A *crash* is the grader's own failure on the answer (a grader defect, like *accepted*).
    """
    grading.reset()
    result = check(answer)
    if result.status == GRADER_ERROR:
        return "crash", result
    if result.passed:
        return "accepted", result
    if not result.diagnosed:
        return "generic", result
    text = f"{result.message}\n{result.diagnosis}"
    return ("specific" if words in text else "misleading"), result


def tally(checks: dict[str, Callable[[Any], CheckResult]], corpus: Sequence[Entry]) -> Counter:
    """How many entries of ``corpus`` fall in each class."""
    return Counter(classify(checks[e], answer, words)[0] for e, _, answer, words in corpus)


def chapter_tests(
    checks: dict[str, Callable[[Any], CheckResult]],
    corpus: Sequence[Entry],
    correct: Sequence[tuple[str, str, Any]] | None = None,
) -> tuple[Callable[..., None] | None, ...]:
    """The four tests a chapter's corpus runs, built for its ``checks``, ``corpus`` and
    ``correct`` answers (``(exercise, what, answer)``; a chapter whose right answers are
    tested beside its graders passes none, and gets ``None`` for that test). A corpus
    module assigns them to its own ``test_...`` names, where pytest collects them:

    - the corpus covers every exercise with at least 5 wrong and 2 right answers, no label
      twice;
    - no wrong answer passes or gets a diagnosis without its expected words;
    - every right answer, written differently from the worked solution, passes;
    - at least 9 in 10 wrong answers get a specific diagnosis.
    """

    def covers() -> None:
        assert {e for e, *_ in corpus} == set(checks)
        for exercise in checks:
            assert sum(e == exercise for e, *_ in corpus) >= 5, exercise
            if correct is not None:
                assert sum(e == exercise for e, *_ in correct) >= 2, exercise
        labels = [(e, what) for e, what, _, _ in corpus]
        assert len(labels) == len(set(labels))

    @pytest.mark.parametrize(
        ("exercise", "what", "answer", "words"), corpus, ids=[f"{e}: {w}" for e, w, _, _ in corpus]
    )
    def wrong(exercise: str, what: str, answer: Any, words: str) -> None:
        kind, result = classify(checks[exercise], answer, words)
        assert kind != "accepted", f"{what}: a wrong answer passed"
        assert kind != "misleading", f"{what}: expected {words!r}\n{result.text}"

    def right(exercise: str, what: str, answer: Any) -> None:
        result = checks[exercise](answer)
        assert result.passed, f"{what}\n{result.text}"

    if correct is not None:
        ids = [f"{e}: {w}" for e, w, _ in correct]
        right = pytest.mark.parametrize(("exercise", "what", "answer"), correct, ids=ids)(right)

    def nine_in_ten() -> None:
        counts = tally(checks, corpus)
        assert counts["misleading"] == 0 and counts["accepted"] == 0, counts
        assert counts["specific"] >= 0.9 * len(corpus), counts

    return covers, wrong, (right if correct is not None else None), nine_in_ten
