"""Graders for the exercises: run the learner's code, say what is wrong and why.

A chapter's notebook imports from its own module: ``from attnlab.grading.ch02 import
check_softmax, summary``. The machinery, each job in its module:

- :mod:`.specs`: :class:`Case` (an input), :class:`Mistake` (a planted wrong answer) and
  :class:`Property` (what every right output has);
- :mod:`.pipeline`: :class:`Grader`, the ordered checks of a learner's function;
- :mod:`.questions`: :class:`Question`, a prediction checked against the right value;
- :mod:`.modules`: a learner's ``nn.Module`` class graded by a :class:`Grader` (the
  adapter every module exercise uses: :func:`~.modules.adapt`, :func:`~.modules.check_class`);
- :mod:`.forensics`: running the learner's code and reading its tracebacks;
- :mod:`.results` and :mod:`.display`: :class:`CheckResult`, the score :class:`Summary`
  (the only state: the latest result per exercise) and how both look;
- :mod:`.registry`: :class:`ChapterGraders`, a chapter's exercises in order, numbered by
  the module's name (``ch02``);
- :mod:`.unfinished`: :func:`skip_if_unfinished`, for a cell that uses the learner's code
  outside a check (it must not stop Run All while the exercise is a stub).

Taught in: every chapter's exercises (first in exercises/02_similarity.ipynb)
"""

from .pipeline import Grader
from .questions import Question
from .registry import ChapterGraders
from .results import CheckResult, Summary, record, reset, summary
from .specs import Case, Mistake, Property
from .unfinished import skip_if_unfinished

__all__ = [
    "Case",
    "ChapterGraders",
    "CheckResult",
    "Grader",
    "Mistake",
    "Property",
    "Question",
    "Summary",
    "record",
    "reset",
    "skip_if_unfinished",
    "summary",
]
