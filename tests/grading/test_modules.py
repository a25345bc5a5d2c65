"""The module-exercise adapter (``attnlab.grading.modules``) on a made-up layer exercise."""

from __future__ import annotations

import torch
from torch import nn

from attnlab import grading
from attnlab.grading import Case, Grader, Mistake
from attnlab.grading.modules import (
    Finding,
    ModuleExercise,
    adapt,
    check_class,
    check_function,
    memoised,
    stub_raised,
)


class Double(nn.Module):
    """The reference: ``x @ W.T`` with a weight copied in by the run."""

    def __init__(self, d: int) -> None:
        super().__init__()
        self.W = nn.Linear(d, d, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.W(x)


class Transposed(Double):
    def forward(self, x):
        return x @ self.W.weight


def _run(cls, x, w):
    layer = cls(x.shape[-1]).double()
    with torch.no_grad():
        layer.W.weight.copy_(w)
    return layer(x).detach()


_g = torch.Generator().manual_seed(0)
LINEAR = Grader(
    name="linear_layer",
    signature="Layer(d)(x) -> x @ W.T",
    reference=adapt(_run, Double),
    cases=(
        Case(
            "d = 3",
            {
                "x": torch.randn(2, 3, generator=_g, dtype=torch.float64),
                "w": torch.randn(3, 3, generator=_g, dtype=torch.float64),
            },
        ),
    ),
    mistakes=(Mistake("you multiplied by W, not W.T", adapt(_run, Transposed)),),
)


def _check(cls, **kw):
    return check_class(LINEAR, cls, _run, example="check_linear_layer(Layer)", **kw)


def test_a_right_class_passes_and_a_planted_bug_is_diagnosed():
    class Mine(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.W = nn.Linear(d, d, bias=False)

        def forward(self, x):
            return torch.einsum("...i,ji->...j", x, self.W.weight)

    assert _check(Mine).passed
    result = _check(Transposed)
    assert result.diagnosis == "you multiplied by W, not W.T", result.text
    assert grading.summary().rows == (("linear_layer", "wrong values"),)


def test_a_stub_in_init_or_forward_is_not_attempted():
    class InitStub(nn.Module):
        def __init__(self, d):
            super().__init__()
            raise NotImplementedError("Exercise 1")

    class ForwardStub(Double):
        def forward(self, x):
            raise NotImplementedError("Exercise 2")

    for stub in (InitStub, ForwardStub):
        assert _check(stub).status == "not attempted"
    message = "write __init__ and forward"
    assert _check(ForwardStub, not_attempted=message).message == message


def test_an_unfinished_helper_is_named_not_taken_for_a_stub():
    def helper(x):
        raise NotImplementedError("Exercise 0")

    class UsesHelper(Double):
        def forward(self, x):
            return helper(self.W(x))

    result = _check(UsesHelper)
    assert result.status == "raised an exception", result.text
    assert "helper" in result.diagnosis


def test_anything_but_a_class_is_a_wrong_type_naming_the_right_call():
    for wrong in (Double(3), None, lambda x: x, Case):
        result = _check(wrong)
        assert result.status == "wrong type", result.text
        assert "check_linear_layer(Layer)" in result.diagnosis
        assert "not an instance" in result.diagnosis


def test_an_inspection_finding_stops_the_check():
    def no_bias(cls):
        layer = cls(2)
        if layer.W.bias is None:
            return None
        return Finding("wrong type", "your layer has a bias", "bias=False")

    class WithBias(Double):
        def __init__(self, d):
            super().__init__(d)
            self.W = nn.Linear(d, d)

    assert _check(Double, inspect=no_bias).passed
    result = _check(WithBias, inspect=no_bias)
    assert (result.status, result.diagnosis) == ("wrong type", "bias=False")


def test_a_registered_module_exercise_checks_like_check_class():
    exercise = ModuleExercise(LINEAR, _run, example="check_linear_layer(Layer)")
    assert exercise.name == "linear_layer"
    assert exercise.check(Double).passed
    assert exercise.check(Double(3)).status == "wrong type"


def test_a_function_learner_is_adapted_too():
    def load(layer, w):
        raise NotImplementedError("Exercise 3")

    try:
        load(None, None)
    except NotImplementedError as err:
        assert stub_raised(err, load)
        assert not stub_raised(err, Double)


def test_a_decorated_stub_is_not_attempted():
    @torch.no_grad()
    def load(layer, w):
        raise NotImplementedError("Exercise 3")

    class DecoratedForward(Double):
        @torch.no_grad()
        def forward(self, x):
            raise NotImplementedError("Exercise 3")

    try:
        load(None, None)
    except NotImplementedError as err:
        assert stub_raised(err, load)
    assert _check(DecoratedForward).status == "not attempted"


def _run_apply(fn, x, w):
    """A function-of-a-layer exercise: ``fn(layer, x)`` on a layer the grader builds."""
    layer = Double(x.shape[-1]).double()
    with torch.no_grad():
        layer.W.weight.copy_(w)
    return fn(layer, x).detach()


APPLY = Grader(
    name="apply_layer",
    signature="apply(layer, x) -> layer(x)",
    reference=adapt(_run_apply, lambda layer, x: layer(x)),
    cases=LINEAR.cases,
    mistakes=(
        Mistake("you multiplied by W, not W.T", adapt(_run_apply, lambda lay, x: x @ lay.W.weight)),
    ),
)


def test_check_function_grades_a_function_of_a_built_layer():
    def stub(layer, x):
        raise NotImplementedError("Exercise 3")

    assert check_function(APPLY, lambda layer, x: x @ layer.W.weight.T, _run_apply).passed
    wrong = check_function(APPLY, lambda layer, x: x @ layer.W.weight, _run_apply)
    assert wrong.diagnosis == "you multiplied by W, not W.T", wrong.text
    assert check_function(APPLY, stub, _run_apply).status == "not attempted"
    for not_a_function in (None, 3.0):  # passed to the grader as is, which says so
        assert check_function(APPLY, not_a_function, _run_apply).status == "wrong type"


def test_memoised_runs_once_per_input_and_hands_out_fresh_clones():
    calls = []

    def run(x, n, mask=None):
        calls.append(n)
        return x * n, (x + n).sum()

    memo = memoised(run)
    x = torch.arange(3.0)
    first = memo(x, 2)
    first[0].add_(100.0)  # an edit of what came back does not reach the cache
    again = memo(x.clone(), 2)
    assert calls == [2]
    torch.testing.assert_close(again[0], x * 2)
    memo(x, 3)
    memo(x, 2, mask=torch.ones(3, dtype=torch.bool))
    memo(x.double(), 2)  # another dtype is another input
    assert calls == [2, 3, 2, 2]
