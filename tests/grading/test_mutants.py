"""Every generated mistake is told apart from the right answer, and diagnosed by name.

For every exercise of every chapter whose graders are declared reviewed
(``ChapterGraders(__name__, mutants_reviewed=True)``), the worked solution's answer (from
``solutions/NN_*.ipynb``) is changed one way at a time by :mod:`attnlab.grading.mutants`
and each change, submitted as the learner's answer, must

- fail: some case tells it from the right answer (else it is a missing case), unless the
  grader records it in ``equivalent`` with the reason no input could tell them apart;
- get a diagnosis: a recognised mistake (planted, generated, or read off the output), not
  the exercise's generic hint.

The mutants are generated here, from the notebooks, so a new exercise is covered as soon
as its solution and grader exist. Chapters not yet reviewed are listed, so that the list
shrinks as each is done.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections import Counter
from pathlib import Path

import pytest

from attnlab import grading
from attnlab.course import chapters
from attnlab.grading import mutants, worked
from attnlab.grading.questions import Question

ROOT = Path(__file__).resolve().parents[2]
NOT_YET_REVIEWED: set[int] = set()
"""Chapters whose generated mistakes are not held to this test yet: none (issue 28)."""


CHAPTERS = [c for c in chapters(ROOT) if c.has_exercises]


def _graders():
    for chapter in CHAPTERS:
        module = importlib.import_module(chapter.grading_module)
        if not module.GRADERS.mutants_reviewed:
            continue
        for exercise in module.GRADERS:
            if isinstance(exercise, Question):
                continue
            grader = getattr(exercise, "values", exercise)
            yield pytest.param(module, exercise, grader, id=f"ch{chapter.number:02d}-{grader.name}")


GRADERS = list(_graders())


def test_the_reviewed_chapters_are_the_ones_declared():
    reviewed = {
        c.number
        for c in CHAPTERS
        if importlib.import_module(c.grading_module).GRADERS.mutants_reviewed
    }
    assert reviewed == {c.number for c in CHAPTERS} - NOT_YET_REVIEWED


def outcome(module, exercise, grader, mutant):
    """The check's result for the mutant, submitted as the learner's answer.

    The check gets what a learner passes to it: the function or the class itself (a
    grader's ``wrap`` is how the check runs it, for a class or for a function of objects the
    grader builds, such as ``greedy_decode(model, ...)``).
    """
    name = grader._solution_name()
    made = mutants.build(mutant.source, name, worked.namespace(grader.chapter))
    check = getattr(module, f"check_{exercise.name}")
    grading.reset()
    return check(made)


@pytest.mark.parametrize(("module", "exercise", "grader"), GRADERS)
def test_every_generated_mistake_fails_with_a_diagnosis_or_is_recorded(module, exercise, grader):
    found = grader.mutants()
    assert found, f"{grader.name}: no mistake generated from its worked solution"
    keys = [m.key for m in found]
    assert len(keys) == len(set(keys)), "mutant keys must be unique"
    equivalent = dict(grader.equivalent)
    stale = sorted(set(equivalent) - set(keys))
    assert not stale, f"recorded as equivalent, but no longer generated: {stale}"
    problems = []
    for mutant in found:
        result = outcome(module, exercise, grader, mutant)
        if mutant.key in equivalent:
            if not result.passed:
                problems.append(f"recorded as equivalent, but fails: {mutant.key}\n{result.text}")
            continue
        if result.passed:
            problems.append(f"no case tells it from the right answer: {mutant.key}")
        elif not result.diagnosed:
            problems.append(f"no diagnosis: {mutant.key}\n{result.text}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("module", "exercise", "grader"), GRADERS)
def test_each_kind_of_mistake_is_generated(module, exercise, grader):
    kinds = Counter(m.kind for m in grader.mutants())
    assert set(kinds) <= set(mutants.KINDS)
    assert len(kinds) >= 3, kinds
