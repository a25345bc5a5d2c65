"""Graders for the exercises: run the learner's function, say what is wrong and why.

``from attnlab.grading import CHAPTER02, check_softmax, summary`` is all an exercise notebook
needs; ``summary("Chapter 2", CHAPTER02)`` scores every exercise of the chapter, checked or
not.
The machinery (results, the score summary, :class:`Grader`, :class:`Case`,
:class:`Mistake`) is in :mod:`attnlab.grading.core`; each chapter's graders are in their own
module.

Taught in: every exercises/ notebook (first in exercises/02_similarity.ipynb)
"""

from .chapter02 import (
    CHAPTER02,
    COSINE,
    DOT,
    SELF_ATTENTION,
    SOFTMAX,
    check_cosine_similarity,
    check_dot,
    check_self_attention,
    check_softmax,
)
from .core import GRADERS, Case, CheckResult, Grader, Mistake, Summary, register, reset, summary

__all__ = [
    "CHAPTER02",
    "COSINE",
    "DOT",
    "GRADERS",
    "SELF_ATTENTION",
    "SOFTMAX",
    "Case",
    "CheckResult",
    "Grader",
    "Mistake",
    "Summary",
    "check_cosine_similarity",
    "check_dot",
    "check_self_attention",
    "check_softmax",
    "register",
    "reset",
    "summary",
]
