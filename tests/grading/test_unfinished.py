"""skip_if_unfinished: a cell that uses the learner's code runs, or says what is not done yet."""

from __future__ import annotations

import pytest

from attnlab.grading import Question, reset, skip_if_unfinished
from attnlab.grading.unfinished import stub_label


def stub():
    raise NotImplementedError("Exercise 5.2")


def uses_stub():
    return stub() @ stub()


def test_a_stub_skips_the_rest_of_the_block_and_says_which_exercise(capsys):
    ran = []
    with skip_if_unfinished():
        ran.append("before")
        uses_stub()
        ran.append("after")  # never reached
    assert ran == ["before"]
    assert capsys.readouterr().out == (
        "○ not done yet: this cell uses exercise 5.2, which still raises "
        "NotImplementedError; run the cell again once its check passes\n"
    )


def test_a_finished_block_runs_as_if_unguarded(capsys):
    with skip_if_unfinished():
        print("M_3 PE(p) = PE(p + 3): True")
    assert capsys.readouterr().out == "M_3 PE(p) = PE(p + 3): True\n"


@pytest.mark.parametrize(
    "error",
    [
        ValueError("shapes (3, 5) and (3, 5) not aligned"),  # the learner's bug: shown
        NotImplementedError("the meta device has no kernel for this"),  # not a stub
        NotImplementedError(),
        NotImplementedError("Exercise 5.2", "more"),
    ],
)
def test_other_errors_are_raised_as_usual(error, capsys):
    with pytest.raises(type(error)) as raised, skip_if_unfinished():
        raise error
    assert raised.value is error
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize(
    ("error", "label"),
    [
        (NotImplementedError("Exercise 5.2"), "5.2"),
        (NotImplementedError("Exercise 12.10"), "12.10"),
        (NotImplementedError("Exercise 5"), None),
        (NotImplementedError("see Exercise 5.2"), None),
        (RuntimeError("Exercise 5.2"), None),
    ],
)
def test_stub_label(error, label):
    assert stub_label(error) == label


@pytest.fixture
def checked():
    """A check of an exercise named ``demo`` (a question: 0.5 is right), then a clean score."""
    reset()
    question = Question(name="demo", answer=0.5, atol=0.01)
    yield question.check
    reset()


def test_after_a_check_that_did_not_pass_an_error_is_one_line(checked, capsys):
    checked(0.9)
    with skip_if_unfinished(after="demo"):
        raise RuntimeError("Input dtypes must be the same, got: input float, batch1: double\nmore")
    assert capsys.readouterr().out == (
        "✗ this cell uses your demo, whose check has not passed yet (RuntimeError: Input "
        "dtypes must be the same, got: input float, batch1: double): fix it with the check's "
        "message, then run this cell again\n"
    )


def test_after_a_passed_check_or_none_errors_are_raised_as_usual(checked, capsys):
    with pytest.raises(ValueError), skip_if_unfinished(after="demo"):  # never checked
        raise ValueError("a bug")
    checked(0.5)
    with pytest.raises(ValueError), skip_if_unfinished(after="demo"):  # passed: a real bug
        raise ValueError("a bug")
    assert capsys.readouterr().out == ""


def test_after_a_check_a_stub_still_says_not_done(checked, capsys):
    checked(0.9)
    with skip_if_unfinished(after="demo"):
        uses_stub()
    assert "not done yet: this cell uses exercise 5.2" in capsys.readouterr().out


def test_a_block_that_runs_after_a_check_that_did_not_pass_says_so(checked, capsys):
    checked(0.9)
    with skip_if_unfinished(after="demo"):
        print("no mask: [0. 0. 0.]")
    out = capsys.readouterr().out
    assert out.startswith("no mask: [0. 0. 0.]\n✗ the lines above come from your demo, ")
    assert "latest check did not pass" in out
    checked(0.5)
    with skip_if_unfinished(after="demo"):
        print("no mask: [0.5 0.3 0.]")
    assert capsys.readouterr().out == "no mask: [0.5 0.3 0.]\n"
