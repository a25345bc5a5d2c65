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
