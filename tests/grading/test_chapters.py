"""Every chapter with exercises has its grading module, numbered by its name, used as is.

The chapter's number is declared once, by its files (``chapters/NN_slug.ipynb``); the
graders follow from it: ``attnlab.grading.chNN`` holds ``GRADERS`` for chapter NN and the
``summary`` its notebooks end with, and the solution notebook checks every exercise.
Two tests every chapter needs are written here, once, over what each chapter registers:
every planted mistake, submitted as an answer, fails with its own diagnosis; every
prediction question passes its right answer with the explanation, gives each listed wrong
answer its diagnosis and calls an unanswered cell "not attempted". A chapter's own tests
add what is particular to it (learner-written bugs, differently written right answers).
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import nbformat
import pytest

from attnlab.course import chapters
from attnlab.grading import ChapterGraders
from attnlab.grading.questions import Question
from attnlab.grading.status import NOT_ATTEMPTED, PASSED, WRONG_ANSWER

ROOT = Path(__file__).resolve().parents[2]


CHAPTERS = [c for c in chapters(ROOT) if c.has_exercises]


def _questions():
    """``(module, question)`` for every Question every chapter registers, in order."""
    for chapter in CHAPTERS:
        module = importlib.import_module(chapter.grading_module)
        for exercise in module.GRADERS:
            if isinstance(exercise, Question):
                yield pytest.param(module, exercise, id=f"ch{chapter.number:02d}-{exercise.name}")


QUESTIONS = list(_questions())


def _mistakes():
    """``(grader, index)`` for every planted mistake of every registered exercise."""
    for chapter in CHAPTERS:
        module = importlib.import_module(chapter.grading_module)
        for exercise in module.GRADERS:
            grader = getattr(exercise, "values", exercise)  # a ModuleExercise's grader
            for index, _ in enumerate(getattr(grader, "mistakes", ())):
                yield pytest.param(
                    grader, index, id=f"ch{chapter.number:02d}-{exercise.name}-{index}"
                )


MISTAKES = list(_mistakes())


def test_there_are_chapters_with_exercises():
    assert CHAPTERS, "no chapter has a solutions notebook"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.stem)
def test_the_grading_module_is_the_chapters(chapter):
    module = importlib.import_module(chapter.grading_module)
    graders = module.GRADERS
    assert isinstance(graders, ChapterGraders)
    assert graders.chapter == chapter.number
    assert len(graders) >= 4, "a chapter has at least four graded exercises"
    assert module.summary().title == f"Chapter {chapter.number} exercises"
    assert [name for name, _ in module.summary().rows] == list(graders.names)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.stem)
def test_the_solutions_check_every_exercise_and_end_with_the_score(chapter):
    nb = nbformat.read(chapter.solutions, as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert f"from attnlab.grading.ch{chapter.number:02d} import" in code
    module = importlib.import_module(chapter.grading_module)
    called = set(re.findall(r"\b(check_\w+)\(", code))
    for name in module.GRADERS.names:
        assert f"check_{name}" in called, f"{chapter.solutions.name} never checks {name}"
        assert callable(getattr(module, f"check_{name}")), f"no check_{name} in the module"
    last_code = [c for c in nb.cells if c.cell_type == "code"][-1].source.strip()
    assert last_code == "summary()", "the notebook ends with the chapter's score"


@pytest.mark.parametrize(("grader", "index"), MISTAKES)
def test_each_planted_mistake_is_told_apart_from_the_others(grader, index):
    # Submitted as an answer, a planted mistake must fail and be diagnosed as itself: two
    # mistakes with the same outputs on every case would make the diagnosis a coin toss.
    mistake = grader.mistakes[index]
    result = grader.check(mistake.fn)
    assert not result.passed, result.text
    assert result.diagnosed and result.diagnosis == mistake.diagnosis, result.text


def test_there_are_prediction_questions():
    assert len(QUESTIONS) >= len(CHAPTERS), "every chapter asks at least one prediction"


@pytest.mark.parametrize(("module", "question"), QUESTIONS)
def test_questions_right_wrong_and_unanswered(module, question):
    check = getattr(module, f"check_{question.name}")
    right = check(question.answer)
    assert right.status == PASSED, right.text
    assert right.explanation and right.explanation == question.explanation, right.text
    assert question.wrong, f"{question.name} lists no likely wrong answer"
    for value, diagnosis in question.wrong:
        result = check(value)
        assert result.status == WRONG_ANSWER, result.text
        assert result.diagnosed and result.diagnosis == diagnosis, result.text
    assert check(...).status == NOT_ATTEMPTED


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.stem)
def test_the_exercise_title_is_the_chapters(chapter):
    # One rule for every exercise page: "Exercises: N. Title" (the generator turns the
    # solutions' "Solutions:" into "Exercises:"), with the chapter's number and title up
    # to its subtitle (the part before a colon).
    solutions = nbformat.read(chapter.solutions, as_version=4)
    title = solutions.cells[0].source.split("\n", 1)[0]
    chapter_nb = nbformat.read(ROOT / "chapters" / chapter.solutions.name, as_version=4)
    chapter_title = chapter_nb.cells[0].source.split("\n", 1)[0].removeprefix("# ")
    assert title == f"# Solutions: {chapter_title.split(':')[0]}"
    assert title.startswith(f"# Solutions: {chapter.number}. ")
