"""Graders for the exercises: run the learner's code, say what is wrong and why.

A chapter's notebook imports from its own module: ``from attnlab.grading.ch02 import
check_softmax, summary``. The machinery, each job in its module:

- :mod:`.specs`: :class:`Case` (an input), :class:`Mistake` (a planted wrong answer),
  :class:`Property` (what every right output has) and :class:`~.specs.AnswerProblem`
  (raised by a grader's own code about the learner's answer);
- :mod:`.pipeline`: :class:`Grader`, the ordered checks of a learner's function and the
  choice of the most specific diagnosis;
- :mod:`.worked`: the worked solutions' code (``solution_code.json``, written by
  ``make exercises`` from ``solutions/``);
- :mod:`.mutants`: mistakes generated from that code, one change at a time, each with
  what it means;
- :mod:`.relations`: forensics on a wrong output (transposed, scaled, normalised along
  another axis, shifted, right on some cases only, ...);
- :mod:`.forensics`: running the learner's code and reading its tracebacks;
- :mod:`.gradients`: do gradients flow through a torch answer, and are they right;
- :mod:`.questions`: :class:`Question`, a prediction checked against the right value;
- :mod:`.modules`: a learner's ``nn.Module`` class graded by a :class:`Grader` (the
  adapter every module exercise uses: :func:`~.modules.adapt`, :func:`~.modules.check_class`);
- :mod:`.results` and :mod:`.display`: :class:`CheckResult`, the score :class:`Summary`
  (the only state: the latest result per exercise) and how both look;
- :mod:`.registry`: :class:`ChapterGraders`, a chapter's exercises in order, numbered by
  the module's name (``ch02``);
- :mod:`.unfinished`: :func:`skip_if_unfinished`, for a cell that uses the learner's code
  outside a check (it must not stop Run All while the exercise is a stub).

How to write a chapter's graders (README.md, "Graders"): separating cases, a worked
solution in ``solutions/`` whose generated mistakes the cases tell apart (or that the
grader records as ``equivalent``), planted mistakes for what no single change makes, hints
that lead, ``ChapterGraders(__name__, mutants_reviewed=True)`` once the tests hold.

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
