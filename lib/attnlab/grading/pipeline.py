"""The check pipeline: :class:`Grader` runs the learner's function and reports what is wrong.

Every ``check_*`` function of a chapter takes the learner's implementation, runs it on seeded
cases (NumPy arrays or torch tensors), compares it with the attnlab reference and returns a
:class:`~attnlab.grading.results.CheckResult` that the notebook displays. Problems are
reported in a fixed order, stopping at the first kind found:

1. not attempted: the function under test itself still raises ``NotImplementedError`` (a
   ``NotImplementedError`` from a function it calls, such as the learner's unfinished
   softmax, is an exception that names that function),
2. raised an exception (type, message, the line and the inputs' shapes),
3. wrong type (``None``, a list, a torch tensor, one array instead of a pair, integers, a
   lower-precision dtype, ...),
4. modified its input in place (before the values: an edited input often explains them),
5. wrong shape (expected vs got, the sizes named after the signature),
6. NaN or inf in the output,
7. wrong values (with the max error); a pass states the tolerance met, not the error,
8. for torch exercises whose reference is differentiable: no gradient, or the wrong one
   (a NumPy round trip, a ``.detach()``): the values alone do not show it.

**The most specific diagnosis wins.** Whatever the stage, the learner's outcomes on every
case (outputs, or the exception raised) are compared with those of the *known mistakes*,
in this order:

- the *planted* ones, written by hand with their diagnosis (:class:`~.specs.Mistake`);
- the learner's own earlier exercises: when the worked solution calls another exercise
  (``rnn_forward`` calls ``rnn_step``), the worked solution run with the learner's version
  of it (the learner's function is right, the one it calls is not);
- the *generated* ones: the worked solution changed one way at a time
  (:mod:`.mutants`), whose description says what changed.

A mistake is named when it gives the learner's outcome on every case (best), or on the
failing case while agreeing with every case the learner gets right. NaN is no excuse: a
mistake that matches the learner's output wherever that output is finite also counts (an
inverted mask that leaves a row with no visible key is a mask problem, not an overflow).
An exception matches when the mistake raises the same exception with the same message on
the same case. Only when no mistake explains the outcome do the other clues speak:
forensics on the output (:mod:`.relations`: transposed, scaled, normalised along another
axis, shifted, right except where a mask hides everything, right on some cases only),
the properties every right output has, the known meanings of exception messages
(:mod:`.forensics`), and last the stage's own message and the exercise's hint.

Exceptions raised by the grader's own code about the learner's answer
(:class:`~.specs.AnswerProblem`, e.g. a module returning ``out`` alone where
``(out, weights)`` is expected) are reported as what they are, never as the learner's
exception; a ``TypeError`` raised when calling the learner's function on its signature is
told to keep the signature, any other ``TypeError`` is the learner's own.

A grader never raises (except ``KeyboardInterrupt`` and friends): whatever the learner's
function does, the check cell shows a result. It holds no state: planted mistakes are run
when a check needs them; the generated mutants' outcomes on the grader's fixed cases are
computed once per grader, on the first failure that needs them, and kept.

Taught in: every chapter's exercises (first in exercises/01_why_attention.ipynb)
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import re
import textwrap
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from array_api_compat import is_torch_array

from .._validate import to_numpy
from . import mutants as _mutants
from . import relations, worked
from .forensics import (
    TooSlow,
    call_quietly,
    cast_clue,
    dropped_axis_clue,
    error_hints,
    failing_line,
    hard_coded_size,
    learner_frames,
    line_diagnosis,
    raised_directly,
    reversed_axes_clue,
    signature_mismatch,
    transposed_axes_clue,
    unfinished_callee,
    where,
    widened_mask_clue,
)
from .gradients import gradient_problem
from .results import CheckResult, graded, latest, make_result
from .specs import AnswerProblem, Case, Mistake, Property
from .status import (
    EXCEPTION,
    IN_PLACE,
    NOT_ATTEMPTED,
    NOT_FINITE,
    PASSED,
    WRONG_SHAPE,
    WRONG_TYPE,
    WRONG_VALUES,
)

__all__ = ["Grader"]


@dataclass(frozen=True)
class _Raised:
    """An exception, as compared between the learner and a mistake: type and first line."""

    kind: str
    message: str


def _before_softmax(got: np.ndarray, want: np.ndarray, name: str) -> str | None:
    """When ``got`` holds -inf and its softmax along the last axis is ``want``: the scores
    were returned in place of the weights."""
    if got.shape != want.shape or got.ndim == 0 or not np.any(np.isneginf(got)):
        return None
    with np.errstate(all="ignore"):
        shifted = got - np.max(got, axis=-1, keepdims=True)
        e = np.exp(shifted)
        soft = e / e.sum(axis=-1, keepdims=True)
    if np.allclose(soft, want, rtol=1e-5, atol=1e-7):
        return (
            f"your `{name}` are the scores before the softmax (-inf where masked): return the "
            "softmax's output, the weights each row of which sums to 1"
        )
    return None


def _joined_along(pieces: Any, want: np.ndarray) -> int | None:
    """The axis along which concatenating (or stacking) ``pieces`` gives ``want``, if any."""
    arrays = [np.asarray(p.detach().cpu() if hasattr(p, "detach") else p) for p in pieces]
    for axis in range(-1, -want.ndim - 1, -1):
        for join in (np.concatenate, np.stack):
            try:
                with np.errstate(all="ignore"):
                    joined = join(arrays, axis=axis)
            except (ValueError, TypeError):
                continue
            if joined.shape == want.shape and np.allclose(joined, want, rtol=1e-5, atol=1e-7):
                return want.ndim + axis
    return None


def _raised(err: BaseException) -> _Raised:
    text = str(err).strip().splitlines()[0] if str(err).strip() else ""
    return _Raised(type(err).__name__, text)


@dataclass
class _Run:
    """The learner's function on one case."""

    case: Case
    expected: tuple[np.ndarray, ...]  # the reference's outputs, as NumPy arrays
    torch_out: tuple[bool, ...]  # which of them are torch tensors
    returned: Any = None
    error: Exception | None = None
    arguments: tuple[Any, ...] = ()
    outputs: tuple[np.ndarray, ...] | None = None  # the learner's, as arrays, once typed
    learner: Any = None  # the function under test


@dataclass(frozen=True)
class _Candidate:
    """A known mistake and its outcome on every case."""

    source: str  # "planted", "dependency", "generated"
    diagnosis: str
    outcomes: tuple[Any, ...]
    whole: bool = False  # named on a full match only (see Mutant.whole)


_GENERATED: dict[int, tuple[_Candidate, ...]] = {}
"""The generated mutants' outcomes, per grader (by id, dropped with the grader)."""


def _paired(learner: Any, candidate: Any) -> bool | list[tuple[np.ndarray, np.ndarray]]:
    """Two outcomes' outputs side by side, or the verdict where there is nothing to compare.

    An exception matches only the same exception; outputs of another count or another shape
    never match. Otherwise the (learner's, candidate's) pairs, for a comparison of values.
    """
    if isinstance(learner, _Raised) or isinstance(candidate, _Raised):
        return learner == candidate
    if learner is None or candidate is None or len(learner) != len(candidate):
        return False
    pairs = list(zip(learner, candidate, strict=True))
    return pairs if all(got.shape == made.shape for got, made in pairs) else False


def _exactly(learner: Any, candidate: Any) -> bool:
    """The same outputs to the last digits (not only within the grader's tolerance)."""
    pairs = _paired(learner, candidate)
    if isinstance(pairs, bool):
        return pairs
    for got, made in pairs:
        if got.dtype.kind not in "biuf" or made.dtype.kind not in "biuf":
            if not np.array_equal(got, made):
                return False
        elif not np.allclose(got, made, rtol=1e-9, atol=1e-12, equal_nan=True):
            return False
    return True


@dataclass(frozen=True)
class Grader:
    """Checks a learner's function against a reference on seeded cases.

    Args:
        name: the exercise's name, used in messages and the score table.
        signature: how the learner's function is called, e.g.
            ``"softmax(x, axis=-1, temperature=1.0) -> weights"``; ``name: (dims)`` entries
            (``"q: (..., T, d)"``) name the sizes that messages speak of.
        reference: the attnlab implementation, called like the learner's function.
        cases: the inputs, from the simplest to the edge cases: chosen so that every
            mistake gives another outcome than the right answer on at least one of them.
        mistakes: planted wrong implementations with their diagnoses (named before the
            generated ones).
        outputs: names of the returned arrays; more than one means a tuple is expected.
        hint: shown when the values are wrong and nothing explains them: it leads (what to
            compare, where the chapter shows it) and never contains the answer.
        error_hints: ``(substring, hint)`` pairs: an exception whose message contains the
            substring gets the hint (or ``hint(message)``, when that is not ``None``, for a
            callable: e.g. to tell two shapes apart).
        properties: what every right output has (rows summing to 1, ...): when no mistake
            explains a failure, the first property the learner's output breaks gives the
            diagnosis.
        adapt: applied to what the learner's function returns before it is checked, for
            an exercise whose natural answer is not an array (a list of token ids); it must
            return anything it cannot convert unchanged, and never raise.
        rtol, atol: tolerances of the comparison (``np.allclose``).
        solution: the name of the worked solution's function or class in the chapter's
            solution notebook, whose answer lines :mod:`.mutants` changes to generate
            mistakes; ``""`` (the default) means the exercise's ``name`` when the notebook
            defines it, ``None`` no generated mistakes.
        wrap: turns the worked solution's object into the function the grader calls, as
            the exercise's check does with the learner's: a class (``lambda cls:
            adapt(run, cls)``), or a function of objects the grader builds
            (``greedy_decode(model, ...)``: ``lambda fn: adapt(run, fn)``); ``None`` for a
            function of the case's inputs.
        chapter: the chapter number, set by :meth:`.ChapterGraders.add`.
        equivalent: ``(key, reason)`` for each generated mutant (:meth:`mutants`) that gives
            the right outcome on every case, with the reason no input could tell it apart
            (``.T`` of a 1-D array, ``dim=-2`` for ``dim=1`` on 3-D tensors): the tests
            check that every other mutant fails and gets a diagnosis, so a mutant that
            passes unrecorded is a missing case.
        no_loops: the statement forbids Python loops: a right answer whose own code loops
            (``for``, ``while``, a comprehension) is refused, with where; a string is the
            diagnosis to give (what the statement says about loops), else a general one.
        structure: for a statement that asks for a method, not only for values (walk the
            row block by block): called with the learner's function once its values are
            right, it returns ``(message, diagnosis)`` when the function does not work the
            way the statement asks, else ``None``.
        norm_atol: an absolute tolerance relative to each output's largest magnitude
            (``|got - want| <= atol + norm_atol * max|want| + rtol * |want|``), for outputs
            whose entries near 0 carry the rounding of the large ones (gradients).
        statistical: the outputs are measurements of random draws from a seed, compared
            with a tolerance as wide as the draws vary (a right answer may draw in another
            order). Within it, an answer is still refused when a second call with the same
            seed gives other numbers (the seed is not used), or when it gives exactly the
            numbers of a planted mistake on every case and not the reference's (the same
            draws, measured the wrong way).
        not_finite_hint: the fallback for NaN or inf in an output, when the learner's code
            computes no exponential (a mask handed to PyTorch's attention): what gives NaN
            there. By default, the exp-overflow explanation.
    """

    name: str
    signature: str
    reference: Callable[..., Any]
    cases: tuple[Case, ...]
    mistakes: tuple[Mistake, ...] = ()
    outputs: tuple[str, ...] = ("output",)
    hint: str = ""
    error_hints: tuple[tuple[str, str | Callable[[str], str | None]], ...] = ()
    properties: tuple[Property, ...] = ()
    adapt: Callable[[Any], Any] | None = None
    rtol: float = 1e-6
    atol: float = 1e-8
    solution: str | None = ""
    wrap: Callable[[Any], Callable[..., Any]] | None = None
    chapter: int | None = None
    equivalent: tuple[tuple[str, str], ...] = ()
    statistical: bool = False
    norm_atol: float = 0.0
    no_loops: bool | str = False
    structure: Callable[[Any], tuple[str, str] | None] | None = None
    dtype_probe: bool = True
    not_finite_hint: str = ""

    def check(self, fn: Any) -> CheckResult:
        """Grade ``fn``, record the result for :func:`summary`, and return it. Never raises.

        A value passed instead of a function (``check_dot(dot(a, b))``) is reported but not
        recorded over an earlier result: it is not a new attempt, so the score keeps it.
        """
        if not callable(fn):
            earlier = latest(self.name)
            if earlier is not None and earlier.status != WRONG_TYPE:
                return self._not_a_function(fn, earlier)
        return graded(self.name, self._grade, fn)

    # The order of the checks is the order of this method.
    def _grade(self, fn: Any) -> CheckResult:
        if not callable(fn):
            return self._not_a_function(fn, None)
        runs: list[_Run] = []
        for case in self.cases:
            if any(isinstance(r.error, TooSlow) for r in runs):
                # one endless call is enough: the others would each wait as long
                runs.append(self._skipped(case))
                continue
            runs.append(self._run(fn, case))

        for run in runs:
            if isinstance(run.error, NotImplementedError) and raised_directly(run.error):
                return self._result(
                    NOT_ATTEMPTED,
                    "not attempted yet: replace `raise NotImplementedError(...)` with your "
                    "code, then run this cell again",
                )
        for run in runs:
            if isinstance(run.error, AnswerProblem):
                err = run.error
                return self._result(
                    err.status,
                    f"{err.message} on case {run.case.describe()}",
                    err.diagnosis,
                    diagnosed=True,
                )
        for run in runs:
            if run.error is not None:
                return self._exception_result(run, runs, fn)
        for run in runs:
            outputs, problem, diagnosis = self._as_outputs(run.returned, run, fn)
            if problem is not None:
                return self._result(
                    WRONG_TYPE,
                    f"wrong type on case {run.case.describe()}: {problem}",
                    diagnosis,
                    diagnosed=diagnosis is not None,
                )
            run.outputs = outputs

        for run in runs:
            for (arg, before), after in zip(run.case.inputs.items(), run.arguments, strict=True):
                if _grad_switched_on(before, after):
                    return self._result(
                        IN_PLACE,
                        f"switched on requires_grad of its input `{arg}` on case "
                        f"{run.case.describe()}",
                        f"the values may be right, but the caller's own tensor `{arg}` now "
                        f"records gradients (`{arg}.requires_grad_()` or `{arg}.requires_grad "
                        "= True` changes the caller's tensor, and a later backward leaves a "
                        f"`.grad` on it; a non-leaf `{arg}` would raise): differentiate a "
                        f"copy instead, `{arg} = {arg}.detach().requires_grad_()`",
                        diagnosed=True,
                    )
                if not _same(before, after):
                    alias = _alias_of(fn, arg)
                    if alias is not None:
                        return self._result(
                            IN_PLACE,
                            f"modified its input `{arg}` in place on case {run.case.describe()}",
                            f"`{alias} = {arg}` does not copy: `{alias}` is a second name for "
                            f"the same array, so editing `{alias}` edited the caller's `{arg}` "
                            f"(and anything that compares `{alias}` with `{arg}` compares an "
                            "array with itself). Make a real copy before editing it",
                            diagnosed=True,
                        )
                    return self._result(
                        IN_PLACE,
                        f"modified its input `{arg}` in place on case {run.case.describe()}",
                        "the caller's array changed: an in-place update such as "
                        f"`{arg} /= ...`, `{arg} -= ...`, `{arg}[...] = ...`, "
                        f"`np.exp({arg}, out={arg})` or a torch method ending in `_` edits "
                        f"it (a slice such as `{arg}[:]` is a view of the same array, not a "
                        f"copy); build a new array instead",
                        diagnosed=True,
                    )
        for run in runs:
            for k, (name, got, want) in enumerate(
                zip(self.outputs, run.outputs or (), run.expected, strict=True)
            ):
                if got.shape != want.shape:
                    named = relations.sizes(self.signature, run.case.inputs)
                    raw = run.returned
                    if len(self.outputs) > 1 and isinstance(raw, (tuple, list)):
                        raw = raw[k] if k < len(raw) else None
                    text, reason = relations.shape_clue(
                        tuple(got.shape),
                        tuple(want.shape),
                        name=name,
                        named=named,
                        inputs=run.case.inputs,
                        returned=raw,
                    )
                    seen = [
                        (tuple(r.outputs[k].shape), tuple(r.expected[k].shape), r.case.inputs)
                        for r in runs
                        if r.outputs is not None
                    ]
                    # an off-by-one on every case outranks a size it equals on one case
                    # ("(B)"); the single case's own off-by-one text says more (the
                    # initial state kept among the outputs)
                    said_one_step = reason is not None and "one step" in reason
                    reason = (
                        hard_coded_size(fn, run.case, self.cases)
                        or relations.fixed_shape_clue(seen, name=name)
                        or (
                            None if said_one_step else relations.steady_offset_clue(seen, name=name)
                        )
                        or reason
                    )
                    return self._failure(
                        WRONG_SHAPE,
                        f"wrong shape{self._of(name)} on case {run.case.describe()}: {text}",
                        runs,
                        (run, k),
                        (self.hint if self.adapt is not None else None)
                        or "compare the shapes step by step: which axis did you reduce, keep "
                        "or transpose?",
                        recognised=reason,
                    )
        for run in runs:
            for k, (name, got) in enumerate(zip(self.outputs, run.outputs or (), strict=True)):
                if got.dtype.kind in "fc" and not np.all(np.isfinite(got)):
                    what = " and ".join(
                        w
                        for w, bad in (("NaN", np.isnan(got)), ("inf", np.isinf(got)))
                        if np.any(bad)
                    )
                    return self._failure(
                        NOT_FINITE,
                        f"{what} in the output{self._of(name)} on case {run.case.describe()}",
                        runs,
                        (run, k),
                        self.not_finite_hint
                        or "NaN and inf come from exp overflowing (e^1000 = inf, inf/inf = "
                        "NaN), from 0/0, or from inf - inf (a row whose entries are all -inf "
                        "minus its max)",
                        recognised=_before_softmax(got, run.expected[k], name),
                    )
        errors = [self._errors(run) for run in runs]
        max_error = max((e for per_run in errors for e in per_run), default=0.0)
        for run in runs:
            for k, (name, got, want) in enumerate(
                zip(self.outputs, run.outputs or (), run.expected, strict=True)
            ):
                if not self._close(got, want):
                    return self._failure(
                        WRONG_VALUES,
                        f"wrong values{self._of(name)} on case {run.case.describe()}: "
                        f"{_worst(got, want, self.rtol)}",
                        runs,
                        (run, k),
                        self.hint or "compare your code with the equation, step by step",
                        max_error=max_error,
                    )
        if self.no_loops:
            loop = _python_loop(fn)
            if loop is not None:
                return self._result(
                    WRONG_VALUES,
                    f"right values, but your code uses a Python loop ({loop})",
                    self.no_loops
                    if isinstance(self.no_loops, str)
                    else "the statement asks for no Python loops: let broadcasting pair "
                    "every query with every key at once (new axes of size 1), so that one "
                    "expression computes every score",
                    max_error,
                    diagnosed=True,
                )
        if self.structure is not None:
            found = self.structure(fn)
            if found is not None:
                return self._result(WRONG_VALUES, found[0], found[1], max_error, diagnosed=True)
        if self.statistical:
            found = self._statistical_problem(fn, runs)
            if found is not None:
                return self._result(WRONG_VALUES, found[0], found[1], max_error, diagnosed=True)
        if any(runs[0].torch_out):
            problem = gradient_problem(fn, self.reference, self.cases, self.outputs, self.rtol)
            if problem is not None:
                status, message, diagnosis = problem
                return self._result(status, message, diagnosis, max_error, diagnosed=True)
        found = self._dtype_problem(fn)
        if found is not None:
            return self._result(WRONG_TYPE, found[0], found[1], max_error, diagnosed=True)
        # The success line states the tolerance that was met, never the error itself: the
        # last digits of a float error differ between CPUs, thread counts and BLAS builds,
        # and the committed notebooks' outputs must read the same on every machine.
        n = len(runs)
        return self._result(PASSED, _passed_line(n, self.rtol), None, max_error)

    # ---- helpers

    def _dtype_problem(self, fn: Any) -> tuple[str, str] | None:
        """:meth:`_float32_problem`, leaving the global random state as it was (the notebook's
        next random numbers must not depend on the check: building layers draws weights)."""
        import torch  # only torch inputs get here

        with torch.random.fork_rng(devices=[]):
            return self._float32_problem(fn)

    def _float32_problem(self, fn: Any) -> tuple[str, str] | None:
        """``(message, diagnosis)`` when ``fn`` turns float32 tensors into another dtype.

        The cases are float64 (so that the comparison is tight); a float32 model is what the
        chapters build. The first case whose inputs hold a float64 tensor is run again with
        every float64 tensor made float32: each floating-point tensor ``fn`` returns must be
        float32 too (a ``.double()`` inside passes every float64 case, and breaks the next
        float32 layer). Only the dtype is compared, not the values.
        """
        if self.dtype_probe is False:
            return None
        for case in self.cases:
            if any(
                is_torch_array(a) and str(a.dtype) == "torch.float64" for a in case.inputs.values()
            ):
                break
        else:
            return None
        inputs = {
            k: (a.float() if is_torch_array(a) and str(a.dtype) == "torch.float64" else a)
            for k, a in case.inputs.items()
        }
        single = Case(f"{case.label}, in float32", inputs, case.options)
        try:  # only where the reference itself keeps float32 (not a float64 model's adapter)
            kept = self._items(call_quietly(self.reference, single)[0])
        except Exception:
            return None
        if not any(is_torch_array(k) and str(k.dtype) == "torch.float32" for k in kept) or any(
            is_torch_array(k) and str(k.dtype) == "torch.float64" for k in kept
        ):
            return None
        try:
            returned, _ = call_quietly(fn, single)
        except Exception as err:
            said = (
                f"right values on float64 inputs, but on float32 inputs (case "
                f"{single.describe()}) it raised {type(err).__name__}: {_raised(err).message}"
            )
            if "cannot be converted to type float without overflow" in str(err):
                return (
                    said,
                    "a constant in your code is too large for float32, which holds numbers "
                    "up to about 3.4e38 (float64's lowest, -1.8e308, is beyond it): a model "
                    "in float32 would raise this; use a value that every float dtype holds",
                )
            return (
                said,
                "your code mixes dtypes: something inside is float64 whatever the input "
                "(a tensor built with dtype=torch.float64, or a `.double()`); build new "
                "tensors with the input's dtype (`dtype=x.dtype`, `x.new_zeros(...)`)",
            )
        if self.adapt is not None:
            returned = self.adapt(returned)
        try:
            items = self._items(returned)
        except TypeError:
            return None
        for name, item in zip(self.outputs, items, strict=False):
            if (
                is_torch_array(item)
                and item.is_floating_point()
                and str(item.dtype) != "torch.float32"
            ):
                what = "your function returns" if len(self.outputs) == 1 else f"`{name}` is"
                return (
                    f"right values, but {what} {str(item.dtype).removeprefix('torch.')} "
                    f"for float32 inputs (case {single.describe()})",
                    "the output must keep the input's dtype: a cast such as `.double()`, "
                    "`.to(torch.float64)` or a float64 tensor mixed in promotes the result, "
                    'and inside a float32 model the next nn.Linear then refuses it ("expected '
                    "... same dtype\"); compute in the input's dtype, without the cast",
                )
        return None

    def _statistical_problem(self, fn: Any, runs: list[_Run]) -> tuple[str, str] | None:
        """Within the tolerance, but not repeatable, or exactly a planted mistake's draws."""
        first = runs[0]
        try:
            again = self._items(call_quietly(fn, first.case)[0])
            repeated = tuple(_numpy(v) for v in again)
        except Exception:
            repeated = None
        if repeated is None or not all(
            np.array_equal(a, b) for a, b in zip(repeated, first.outputs or (), strict=False)
        ):
            return (
                f"two calls on case {first.case.describe()} gave different numbers",
                "the same seed must give the same draws: draw from a generator made from "
                "the seed (np.random.default_rng(seed)), not from NumPy's global random "
                "state, which ignores it",
            )

        def exactly(a: tuple[np.ndarray, ...], b: Any) -> bool:
            return not isinstance(b, _Raised) and all(
                np.allclose(x, y, rtol=1e-9, atol=1e-12) for x, y in zip(a, b, strict=True)
            )

        # Numbers that do not move with the seed were not measured (the theory's values
        # typed in), when the reference's measurement does move with it.
        if "seed" in first.case.inputs and isinstance(first.case.inputs["seed"], int):
            other = replace(
                first.case, inputs={**first.case.inputs, "seed": first.case.inputs["seed"] + 1}
            )
            try:
                moved = tuple(_numpy(v) for v in self._items(call_quietly(fn, other)[0]))
                want = tuple(_numpy(v) for v in self._items(call_quietly(self.reference, other)[0]))
            except Exception:
                moved = want = None
            if (
                moved is not None
                and want is not None
                and all(
                    np.array_equal(a, b) for a, b in zip(moved, first.outputs or (), strict=False)
                )
                and not all(
                    np.array_equal(a, b) for a, b in zip(want, first.expected, strict=False)
                )
            ):
                return (
                    f"your numbers are the same for seed {first.case.inputs['seed']} and "
                    f"seed {first.case.inputs['seed'] + 1}: the seed is not used, or nothing "
                    "was measured",
                    "a measurement of random draws moves a little with the seed: draw the "
                    "vectors from a generator made from `seed` itself and compute the "
                    "statistics from them, rather than returning the values the theory "
                    "predicts",
                )
        # What every right output has, checked even within the tolerance (a variance where
        # a spread was asked can fall inside a measurement's tolerance).
        broken = self._broken_property(runs)
        if broken is not None:
            run, found = broken
            return f"your numbers on case {run.case.describe()} do not fit together", found
        learner = [r.outputs or () for r in runs]
        if all(exactly(o, r.expected) for o, r in zip(learner, runs, strict=True)):
            return None
        for mistake in self.mistakes:
            outcomes = self._outcomes(mistake.fn)
            if all(exactly(o, m) for o, m in zip(learner, outcomes, strict=True)):
                return (
                    "your numbers are within the tolerance of a measurement, but they are "
                    "exactly those of a known mistake on every case",
                    mistake.diagnosis,
                )
        return None

    def _not_a_function(self, value: Any, earlier: CheckResult | None) -> CheckResult:
        """The check was given a value (often what the function returned), not a function."""
        kept = f" (your earlier result, {earlier.status}, still counts)" if earlier else ""
        return self._result(
            WRONG_TYPE,
            f"you passed a value, not a function: got {_describe(value)}{kept}",
            f"check_{self.name} calls your function itself, on its own test cases; a value "
            f"that {self.name}(...) returned cannot be tested that way: pass the function, "
            f"check_{self.name}({self.name}), without calling it",
            diagnosed=True,
        )

    def _broken_property(self, runs: list[_Run]) -> tuple[_Run, str] | None:
        """The first run whose outputs break a property every right output has, and what
        the property says of them."""
        for run in runs:
            if run.outputs is None:
                continue
            named_outputs = dict(zip(self.outputs, run.outputs, strict=True))
            for prop in self.properties:
                found = prop.violated(named_outputs, run.case)
                if found:
                    return run, found
        return None

    def _result(
        self,
        status: str,
        message: str,
        diagnosis: str | None = None,
        max_error: float | None = None,
        diagnosed: bool = False,
    ) -> CheckResult:
        return make_result(
            self.name, status, message, diagnosis, max_error=max_error, diagnosed=diagnosed
        )

    def _of(self, name: str) -> str:
        return "" if len(self.outputs) == 1 else f" of `{name}`"

    def _skipped(self, case: Case) -> _Run:
        expected = self._items(call_quietly(self.reference, case)[0])
        return _Run(
            case=case,
            expected=tuple(_numpy(e) for e in expected),
            torch_out=tuple(is_torch_array(e) for e in expected),
            error=TooSlow("not run: an earlier case did not finish"),
        )

    def _run(self, fn: Callable[..., Any], case: Case) -> _Run:
        expected = self._items(call_quietly(self.reference, case)[0])
        run = _Run(
            case=case,
            expected=tuple(_numpy(e) for e in expected),
            torch_out=tuple(is_torch_array(e) for e in expected),
            learner=fn,
        )
        try:
            run.returned, run.arguments = call_quietly(fn, case)
        except Exception as err:
            run.error = err
        else:
            if self.adapt is not None:
                run.returned = self.adapt(run.returned)
        return run

    def _items(self, value: Any) -> tuple[Any, ...]:
        return (value,) if len(self.outputs) == 1 else tuple(value)

    def _as_outputs(
        self, value: Any, run: _Run, fn: Any = None
    ) -> tuple[tuple[np.ndarray, ...], str | None, str | None]:
        """The returned value as arrays, or a problem (and maybe a diagnosis)."""
        names = ", ".join(self.outputs)
        n = len(self.outputs)
        if value is None:
            return (
                (),
                "returned None" + (f" instead of ({names})" if n > 1 else ""),
                (_none_returned(fn, {**run.case.inputs, **run.case.options})),
            )
        if isinstance(value, np.ma.MaskedArray):
            # np.asarray reads its hidden entries' data: the values shown would be those
            return (
                (),
                "returned a NumPy masked array (np.ma)",
                "a masked array keeps the data of its hidden entries (np.asarray and every "
                "function outside np.ma still see them): what your code computed is not "
                "what it returns there. Return a plain array, with the hidden entries given "
                "the value they must have",
            )
        if n > 1:
            return_all = f"return {'both' if n == 2 else f'all {n}'}: `return {names}`"
            if not isinstance(value, (tuple, list)):
                single = is_torch_array(value) or isinstance(
                    value, (np.ndarray, np.generic, int, float)
                )
                return (
                    (),
                    f"expected a tuple ({names}), got {_describe(value)}",
                    return_all if single else None,
                )
            if len(value) != n:
                return (
                    (),
                    f"expected a tuple of {n} ({names}), "
                    f"got {len(value)} item{'s' * (len(value) != 1)}",
                    return_all if len(value) < n else f"return only those {n}: `return {names}`",
                )
            items = tuple(value)
        else:
            if (
                isinstance(value, (tuple, list))
                and len(value) > 1
                and all(is_torch_array(v) or isinstance(v, np.ndarray) for v in value)
            ):
                want = run.expected[0]
                if (
                    want.ndim >= 1
                    and len(value) == want.shape[0]
                    and all(tuple(v.shape) == want.shape[1:] for v in value)
                ):
                    return (
                        (),
                        f"returned a {type(value).__name__} of {len(value)} rows; expected one "
                        + ("torch.Tensor" if run.torch_out[0] else "NumPy array"),
                        f"each row is right-shaped, but a Python {type(value).__name__} of rows "
                        "is not an array: make one array of them (stack them, or compute all "
                        "rows at once)",
                    )
                joined = _joined_along(value, want)
                if joined is not None:
                    return (
                        (),
                        f"returned a {type(value).__name__} of {len(value)} arrays; expected one "
                        + ("torch.Tensor" if run.torch_out[0] else "NumPy array"),
                        f"your {len(value)} pieces are right once joined along axis {joined}: "
                        f"a Python {type(value).__name__} is not one array; join them into one "
                        "(concatenate them along that axis)",
                    )
                return (
                    (),
                    f"returned a {type(value).__name__} of {len(value)} arrays; expected one "
                    + ("torch.Tensor" if run.torch_out[0] else "NumPy array"),
                    f"your function returned {len(value)} values where the exercise returns "
                    f"one, `{self.outputs[0]}`: return only {self.outputs[0]}, not a tuple",
                )
            items = (value,)
        arrays = []
        for name, item, want, torch_out in zip(
            self.outputs, items, run.expected, run.torch_out, strict=True
        ):
            what = "returned" if len(self.outputs) == 1 else f"`{name}` is"
            if item is None:
                return (), f"{what} None", _none_item(name, fn)
            if (
                isinstance(item, (list, tuple))
                and item
                and all(is_torch_array(i) or isinstance(i, np.ndarray) for i in item)
            ):
                library = "torch" if torch_out else "np"
                return (
                    (),
                    f"{what} {_describe(item)}; expected "
                    + ("a torch.Tensor" if torch_out else "a NumPy array"),
                    f"`{name}` is a Python {type(item).__name__} of {len(item)} array{'s' * (len(item) != 1)}, one per "
                    f"step: stack them into one array ({library}.stack, along the axis where "
                    "the signature puts them)",
                )
            if torch_out and isinstance(item, (list, tuple)):
                return (
                    (),
                    f"{what} {_describe(item)}; expected a torch.Tensor",
                    f"your result is a Python {type(item).__name__} of numbers (float() or "
                    ".item() of each entry turns it into a plain number): keep the values as "
                    "tensors and return one tensor (torch.stack of 0-d tensors, or work on "
                    "whole tensors without converting)",
                )
            if torch_out and not is_torch_array(item):
                return (
                    (),
                    f"{what} {_describe(item)}; expected a torch.Tensor",
                    "this exercise is in torch: compute with torch operations, so that "
                    "tensors in give tensors out (a NumPy function on a tensor returns a "
                    "NumPy array)",
                )
            if is_torch_array(item) and not torch_out:
                return (
                    (),
                    f"{what} {_describe(item)} for NumPy input",
                    "this exercise is in NumPy: compute with NumPy (np.exp, np.sum, @), so "
                    "that NumPy in gives NumPy out",
                )
            if isinstance(item, (bool, np.bool_)) and np.asarray(want).dtype.kind != "b":
                return (
                    (),
                    f"{what} a bool ({item}); expected a number",
                    "return the number itself, not whether it is small: comparing it with a "
                    "threshold is the caller's job",
                )
            if isinstance(item, np.integer) and self.signature.rstrip().endswith("-> int"):
                return (
                    (),
                    f"{what} a NumPy integer ({type(item).__name__} {item}); expected a Python int",
                    "the exercise asks for a Python int: np.sum and other NumPy functions "
                    "give NumPy integers; wrap the result in int(...) or add the terms "
                    "with + and sum()",
                )
            if is_torch_array(item) or isinstance(item, np.ndarray):
                array = _numpy(item)
            elif isinstance(item, np.generic) or (
                isinstance(item, (float, int)) and not isinstance(item, bool)
            ):  # a number where an array is expected is a shape problem, reported below
                array = np.asarray(item)
            else:
                hint = None
                if (
                    isinstance(item, (list, tuple))
                    and item
                    and all(isinstance(i, str) for i in item)
                ):
                    hint = "the items are strings; the exercise asks for numbers"
                elif isinstance(item, (list, tuple)):
                    hint = "work on whole arrays instead of building a Python list"
                expected = "a torch.Tensor" if torch_out else "a NumPy array"
                if self.adapt is not None:  # the answer's natural form is not an array
                    expected = "numbers: the exercise " + self.signature.split(";")[-1].strip()
                return (), f"{what} {_describe(item)}; expected {expected}", hint
            if array.dtype != want.dtype:
                if array.dtype.kind == want.dtype.kind == "f":
                    hint = _precision_hint(array.dtype, want.dtype, torch_out)
                elif array.dtype.kind in "iu" and want.dtype.kind in "fc":
                    hint = "converting to int truncates; keep floats"
                elif array.dtype.kind == "f" and want.dtype.kind in "iu" and array.ndim == 0:
                    return (
                        (),
                        f"{what} a float ({float(array)!r}); expected an int",
                        "the answer is a whole number, an int: / and math.log give floats "
                        "(3.0); math.ceil, math.floor and // give ints",
                    )
                elif (
                    want.dtype == np.bool_
                    and array.dtype.kind in "iuf"
                    and "mask" in (self.signature)
                ):
                    hint = _numbers_for_booleans(array)
                else:
                    hint = f"return {want.dtype} values"
                made = "a tensor" if is_torch_array(item) else "an array"
                return (), f"{what} {made} of dtype {array.dtype}; expected {want.dtype}", hint
            arrays.append(array)
        return tuple(arrays), None, None

    def _atol(self, want: np.ndarray) -> float:
        if not self.norm_atol or want.dtype.kind not in "fc" or want.size == 0:
            return self.atol
        finite = np.abs(want[np.isfinite(want)])
        return self.atol + self.norm_atol * float(np.max(finite, initial=0.0))

    def _close(self, got: np.ndarray, want: np.ndarray) -> bool:
        return got.shape == want.shape and bool(
            np.allclose(got, want, rtol=self.rtol, atol=self._atol(want), equal_nan=True)
        )

    def _errors(self, run: _Run) -> list[float]:
        return [
            float(np.max(_abs_diff(got, want), initial=0.0))
            for got, want in zip(run.outputs or (), run.expected, strict=True)
        ]

    # ---- exceptions

    def _exception_result(self, run: _Run, runs: list[_Run], fn: Any) -> CheckResult:
        err = run.error
        assert err is not None
        said = f"{type(err).__name__}: {err}"  # substrings may name the type: "KeyError"
        lines = str(err).strip().splitlines()
        text = lines[0] if lines else ""
        if text.endswith(":") and len(lines) > 1:  # "Error(s) in loading ...:" names them next
            text = f"{text} {lines[1].strip()}"
        if len(text) > 200:
            text = text[:197] + "..."
        if signature_mismatch(err):
            return self._result(
                EXCEPTION,
                f"could not call your code on case {run.case.describe()}: "
                f"{type(err).__name__}: {text}",
                f"keep the signature of the exercise: {self.signature}",
                diagnosed=True,
            )
        ours = not learner_frames(err)  # raised by the grader's own code, on your result
        if ours:
            message = (
                f"what your code returned or built failed when used, on case "
                f"{run.case.describe()}: {type(err).__name__}{': ' + text if text else ''}"
            )
        else:
            message = f"raised {type(err).__name__}{': ' + text if text else ''}"
            message += f" on case {run.case.describe()}"
            where_ = where(err)
            if where_:
                message += f"\n  at {where_}"
        if isinstance(err, NotImplementedError):
            callee = unfinished_callee(err)
            if callee is not None:
                raised = f'NotImplementedError("{text}")' if text else "NotImplementedError"
                return self._result(
                    EXCEPTION,
                    message,
                    f"your code calls `{callee}`, which still raises {raised}: finish that "
                    f"exercise first (or write the {callee} step inline)",
                    diagnosed=True,
                )
        if not ours:
            from_line = line_diagnosis(err) or cast_clue(err, fn)
            if from_line is not None:
                return self._result(EXCEPTION, message, from_line, diagnosed=True)
        index = runs.index(run)
        for run_ in runs:  # the other runs' outputs, where they convert, for comparisons
            if run_.error is None and run_.outputs is None:
                outputs, problem, _ = self._as_outputs(run_.returned, run_)
                run_.outputs = outputs if problem is None else None
        rank, found = self._ranked(runs, index, None, fn, groups=(self._planted,))
        if found is not None and rank < 3:
            # a planted mistake that explains only part of the cases gives way to a
            # generated one that explains every case (the same exceptions, the same values)
            rank, whole = self._ranked(
                runs, index, None, fn, groups=(self._dependencies, self._generated)
            )
            if whole is not None and rank >= 3:
                found = whole
        line = failing_line(err)
        authored = [_hint_for(h, said, line) for s, h in self.error_hints if s in said]
        authored = [h for h in authored if h]
        if found is None and authored:
            found = authored[0]
        if found is None:
            found = self._explain(
                runs, index, None, fn, groups=(self._dependencies, self._generated)
            )
        if found is None and not ours:
            found = hard_coded_size(fn, run.case, self.cases)
        if found is None:
            found = self._failing_callee(fn)
        if found is None and not ours:
            found = widened_mask_clue(err) or transposed_axes_clue(err) or reversed_axes_clue(err)
        if found is None:
            found = dropped_axis_clue(said, run.case.inputs)
        if found is None:
            general = error_hints(said)
            found = general[0] if general else None
        if found is None and not ours:
            found = self._leading_axes_clue(runs)
        if found is not None:
            return self._result(EXCEPTION, message, found, diagnosed=True)
        if ours and "values to unpack" in text:
            return self._result(
                EXCEPTION,
                message,
                "your code returned another number of values than the exercise asks for: "
                f"{self.signature}",
                diagnosed=True,
            )
        if ours:
            return self._result(
                EXCEPTION,
                message,
                f"what your code returns does not fit the exercise: {self.signature}",
            )
        return self._result(EXCEPTION, message, None)

    # ---- diagnoses

    def _failure(
        self,
        status: str,
        message: str,
        runs: list[_Run],
        failing: tuple[_Run, int],
        fallback: str,
        max_error: float | None = None,
        recognised: str | None = None,
    ) -> CheckResult:
        """A failure, with the most specific explanation found (see the module's docstring).

        ``recognised``: what the stage itself recognised (a shape with an axis kept or
        lost), said when nothing more specific is found.
        """
        failing_run, k = failing
        index = runs.index(failing_run)
        found = self._explain(runs, index, k, failing_run.learner)
        if found is None:
            found = self._failing_callee(failing_run.learner)
        if found is None and status == WRONG_VALUES:
            found = self._typed_in_clue(runs)
        if found is not None:
            return self._result(status, message, found, max_error, diagnosed=True)
        if status == WRONG_VALUES:
            error = _near_miss(runs)
            if error is not None:
                diagnosis = _precision_diagnosis(error, self.rtol)
                return self._result(status, message, diagnosis, max_error, diagnosed=True)
        outputs = failing_run.outputs or ()
        # A property that every right output has, broken by the failing output (or, when
        # that one holds NaN or inf, by the learner's output on another case).
        finite = all(np.all(np.isfinite(o)) for o in outputs if o.dtype.kind in "fc")
        broken = self._broken_property([failing_run] if finite else [failing_run, *runs])
        if broken is not None:
            return self._result(status, message, broken[1], max_error, diagnosed=True)
        if status in (WRONG_VALUES, NOT_FINITE, WRONG_SHAPE):
            case = failing_run.case
            got = outputs[k]
            if status == NOT_FINITE:
                clue = relations.nan_clue(got, name=self.outputs[k], inputs=case.inputs)
            else:
                clue = relations.value_clue(
                    [
                        relations.Seen(
                            got=run.outputs[k],
                            want=run.expected[k],
                            expected=dict(zip(self.outputs, run.expected, strict=True)),
                            inputs=run.case.inputs,
                            options=run.case.options,
                            named=relations.sizes(self.signature, run.case.inputs),
                            axes=relations.output_axes(self.signature),
                        )
                        for run in [failing_run, *runs]
                        if run.outputs is not None
                        and (run is failing_run or not self._close(run.outputs[k], run.expected[k]))
                    ][: len(runs)],
                    name=self.outputs[k],
                )
            if clue:
                return self._result(status, message, clue, max_error, diagnosed=True)
        clue = (self._leading_axes_clue(runs) if status == WRONG_VALUES else None) or (
            self._cases_clue(runs)
        )
        if clue:
            return self._result(status, message, clue, max_error, diagnosed=True)
        clue = self._randomness_or_unused_input(runs) if status == WRONG_VALUES else None
        if clue:
            return self._result(status, message, clue, max_error, diagnosed=True)
        if recognised:
            return self._result(status, message, recognised, max_error, diagnosed=True)
        return self._result(status, message, fallback, max_error)

    def _again(self, fn: Any, case: Case) -> tuple[np.ndarray, ...] | None:
        """``fn``'s outputs on ``case`` as arrays, or None when it raises or they don't fit."""
        try:
            value = call_quietly(fn, case)[0]
            if self.adapt is not None:
                value = self.adapt(value)
            return tuple(_numpy(v) for v in self._items(value))
        except Exception:
            return None

    def _randomness_or_unused_input(self, runs: list[_Run]) -> str | None:
        """Forensics on the learner's function itself, for values nothing else explains: it
        gives other numbers on a second call (something random inside), or its outputs do
        not move when an input that moves the reference's does (that input is never used)."""
        done = [r for r in runs if r.error is None and r.outputs is not None and r.learner]
        for run in done[:2]:
            again = self._again(run.learner, run.case)
            if again is not None and not self._agree(again, run.outputs, False):
                return (
                    "two calls on the same inputs gave different numbers: something in your "
                    "code is random (a layer created inside the function, such as a new "
                    "nn.Linear or nn.RNN with its own random weights, dropout, or a random "
                    "draw); the result must depend on the inputs only"
                )
        if self.wrap is not None:  # a module's inputs are weights the adapter copies in
            return None
        # An input is unused only if the learner's result stays put on every case where
        # moving it moves the reference's: on one case alone a factor that happens to be 0
        # there (the first tile's rescale) hides an input the code does use.
        still: dict[str, bool] = {}
        for run in done[:2]:
            if all(np.ptp(o) == 0 for o in run.outputs if o.size and o.dtype.kind in "fc"):
                continue  # a constant output (all zeros) has a cause of its own
            for name, value in run.case.inputs.items():
                if str(getattr(value, "dtype", "")).removeprefix("torch.") not in (
                    "float64",
                    "float32",
                ):
                    continue
                moved = Case(
                    run.case.label,
                    {**run.case.inputs, name: value * 1.5 + 0.25},
                    run.case.options,
                )
                want = self._again(self.reference, moved)
                got = self._again(run.learner, moved)
                if want is None or got is None or self._agree(want, run.expected, False):
                    continue
                still[name] = still.get(name, True) and self._agree(got, run.outputs, False)
        for name, unused in still.items():
            if unused:
                return (
                    f"your result does not change when `{name}` changes: your code never "
                    f"uses the `{name}` it is given (a value typed in instead, a layer or "
                    "weights of its own, or a variable of the notebook with another name)"
                )
        return None

    def _leading_axes_clue(self, runs: list[_Run]) -> str | None:
        """For a function of ``(..., d)`` inputs: right on the cases with one number of axes
        and wrong (or raising) on every case with another, as code written for one pair of
        vectors, or for a matrix of them, is."""
        if "..." not in self.signature:
            return None

        def axes(run: _Run) -> int | None:
            arrays = [v for v in run.case.inputs.values() if hasattr(v, "shape")]
            return len(arrays[0].shape) if arrays else None

        right = [r for r in runs if self._right(r)]
        wrong = [r for r in runs if not self._right(r)]
        kept = {axes(r) for r in right}
        if not right or not wrong or len(kept) != 1 or None in kept:
            return None
        (n,) = kept
        if any(axes(r) == n or axes(r) is None for r in wrong):
            return None
        failing = wrong[0]
        what = f"raises {type(failing.error).__name__}" if failing.error is not None else "is wrong"
        plural = "axis" if n == 1 else "axes"
        return (
            f"your code works only on inputs with {n} {plural}: it is right on case "
            f"{right[0].case.describe()} and {what} on case {failing.case.describe()}. The "
            f"inputs are {self.signature.split(' -> ')[0]}: any number of leading axes, and "
            "the same code must handle them all: instead of indexing, looping over or "
            "transposing a fixed axis, work along the last axis, which every input has"
        )

    def _typed_in_clue(self, runs: list[_Run]) -> str | None:
        """A whole-number argument replaced by a constant: on every case the learner gets
        wrong, the reference called with that argument set to one value (a value another
        case has: the ``k = 3`` of the examples, the table's ``n = 1000``) gives exactly the
        learner's result."""
        if self.statistical or self.wrap is not None:
            return None
        wrong = [
            r for r in runs if r.error is None and r.outputs is not None and not self._right(r)
        ]
        if not wrong:
            return None

        def whole(value: Any) -> bool:
            return isinstance(value, int) and not isinstance(value, bool)

        for arg in [a for a, v in wrong[0].case.inputs.items() if whole(v)]:
            values = sorted({r.case.inputs[arg] for r in runs if whole(r.case.inputs.get(arg))})
            for value in values:
                if all(r.case.inputs.get(arg) == value for r in wrong):
                    continue
                for run in wrong:
                    if not whole(run.case.inputs.get(arg)):
                        break
                    moved = Case(run.case.label, {**run.case.inputs, arg: value}, run.case.options)
                    made = self._again(self.reference, moved)
                    if made is None or not self._agree(run.outputs, made, False):
                        break
                else:
                    shown = next(r for r in wrong if r.case.inputs[arg] != value)
                    return (
                        f"on every case you get wrong, your result is the right one for "
                        f"{arg} = {value} (case {shown.case.describe()} has {arg} = "
                        f"{shown.case.inputs[arg]}): is a number typed into your code (the "
                        f"{value} of another case, or one worked out from it) where it should "
                        f"read `{arg}`?"
                    )
        return None

    def _cases_clue(self, runs: list[_Run]) -> str | None:
        def info(run: _Run) -> tuple[str, dict[str, int], Any, Any]:
            named = relations.sizes(self.signature, run.case.inputs)
            return (run.case.label, named, run.case.inputs, run.case.options)

        right = [info(r) for r in runs if self._right(r)]
        wrong = [info(r) for r in runs if not self._right(r)]
        return relations.cases_clue(right, wrong)

    def _right(self, run: _Run) -> bool:
        return (
            run.error is None
            and run.outputs is not None
            and all(self._close(g, w) for g, w in zip(run.outputs, run.expected, strict=True))
        )

    def _explain(
        self,
        runs: list[_Run],
        index: int,
        k: int | None,
        fn: Any,
        groups: tuple[Callable[[list[_Run], Any], Iterator[_Candidate]], ...] | None = None,
    ) -> str | None:
        """The diagnosis of the known mistake that best explains the learner's outcomes."""
        return self._ranked(runs, index, k, fn, groups)[1]

    def _ranked(
        self,
        runs: list[_Run],
        index: int,
        k: int | None,
        fn: Any,
        groups: tuple[Callable[[list[_Run], Any], Iterator[_Candidate]], ...] | None = None,
    ) -> tuple[int, str | None]:
        """``(how well, diagnosis)`` of the known mistake that best explains the learner's
        outcomes: 3 or more explains every case, less only part of them (0: none)."""
        learner = [(_raised(r.error) if r.error is not None else r.outputs) for r in runs]
        right = [self._right(r) for r in runs]
        best: tuple[tuple[int, ...], _Candidate] | None = None
        if groups is None:
            groups = (self._planted, self._dependencies, self._generated)
        for group in groups:
            for candidate in group(runs, fn):
                if candidate.source == "generated" and _refuted_by_source(
                    candidate.diagnosis, fn, self._reference_source()
                ):
                    continue  # it names code the learner's function does not have
                if all(
                    self._agree(o, r.expected, False)
                    for o, r in zip(candidate.outcomes, runs, strict=True)
                ):
                    continue  # right values everywhere (a gradient mistake): explains no value
                rank = self._rank(candidate.outcomes, learner, right, index)
                if rank is not None and candidate.whole and rank[0] < 3:
                    continue
                if rank is not None and (best is None or rank > best[0]):
                    best = (rank, candidate)
            if best is not None and best[0][0] >= 3:
                break  # a full match: later groups can only tie
        if best is None:
            return 0, None
        if best[1].source == "generated":
            return best[0][0], _in_learner_terms(best[1].diagnosis, fn)
        return best[0][0], best[1].diagnosis

    def _rank(
        self, outcomes: tuple[Any, ...], learner: list[Any], right: list[bool], index: int
    ) -> tuple[int, ...] | None:
        strict = [self._agree(a, b, False) for a, b in zip(learner, outcomes, strict=True)]
        if all(strict):
            # among full matches, the one with the learner's exact numbers wins (within a
            # measurement's tolerance two mistakes can both match)
            return (4, len(strict), sum(map(_exactly, learner, outcomes)))
        lenient = [self._agree(a, b, True) for a, b in zip(learner, outcomes, strict=True)]
        if all(lenient):
            return (3, sum(strict))
        contradicted = any(r and not s for r, s in zip(right, strict, strict=True))
        if contradicted:
            return None
        # A partial match (a second mistake elsewhere) must explain at least half of the
        # cases the learner gets wrong, not one case by coincidence.
        wrong = [i for i, r in enumerate(right) if not r]
        explained = sum(lenient[i] for i in wrong)
        if 2 * explained < len(wrong):
            return None
        if strict[index]:
            return (2, sum(strict))
        if lenient[index]:
            return (1, sum(strict))
        return None

    def _agree(self, learner: Any, candidate: Any, lenient: bool) -> bool:
        pairs = _paired(learner, candidate)
        if isinstance(pairs, bool):
            return pairs
        for got, made in pairs:
            if lenient and got.dtype.kind in "fc":
                finite = np.isfinite(got)
                if not finite.all() and not self._close(got[finite], made[finite]):
                    return False
                if finite.all() and not self._close(got, made):
                    return False
            elif not self._close(got.astype(np.float64), made.astype(np.float64)):
                return False
        return True

    # ---- the known mistakes

    def _outcomes(self, fn: Callable[..., Any]) -> tuple[Any, ...]:
        """``fn``'s outcome on every case: its outputs as arrays, or the exception raised."""
        found: list[Any] = []
        for case in self.cases:
            try:
                value = call_quietly(fn, case)[0]
                if self.adapt is not None:
                    value = self.adapt(value)
                items = self._items(value)
                found.append(tuple(_numpy(v) for v in items))
            except Exception as err:
                found.append(_raised(err))
        return tuple(found)

    def _planted(self, runs: list[_Run], fn: Any) -> Iterator[_Candidate]:
        source: str | None = None
        for mistake in self.mistakes:
            if mistake.needs:
                if source is None:
                    try:
                        source = inspect.getsource(getattr(fn, "__learner__", fn))
                    except (OSError, TypeError):
                        source = ""
                if source and not re.search(mistake.needs, source):
                    continue  # the learner's code lacks what the diagnosis speaks of
            yield _Candidate("planted", mistake.diagnosis, self._outcomes(mistake.fn))

    def _solution_name(self) -> str | None:
        if self.solution is None or self.chapter is None:
            return None
        code = worked.chapter_code(self.chapter)
        name = self.solution or self.name
        if code is None or name not in code.definitions:
            return None
        return name

    def _as_graded(self, made: Any) -> Callable[..., Any]:
        return self.wrap(made) if self.wrap is not None else made

    def _failing_callee(self, fn: Any) -> str | None:
        """The learner's own earlier exercise that this function calls, when it is wrong.

        The learner's ``cosine_similarity`` may call their ``dot``: when that ``dot`` fails
        its own check, it is the likelier cause (found from the names the function's code
        uses, whatever the worked solution calls).
        """
        if self.chapter is None or fn is None:
            return None
        learner = getattr(fn, "__learner__", fn)
        code = getattr(learner, "__code__", None)
        scope = _globals_of(learner)
        if code is None or not scope:
            return None
        try:
            module = importlib.import_module(f"{__package__}.ch{self.chapter:02d}")
            graders = module.GRADERS
        except (ImportError, AttributeError):
            return None
        for name in code.co_names:
            if name == self.name or name not in graders.names:
                continue
            mine, other = scope.get(name), graders[name]
            if not callable(mine) or (getattr(mine, "__module__", "") or "").startswith("attnlab"):
                continue
            if not isinstance(other, Grader):
                continue
            result = other._grade(mine)
            if result.passed or result.status == NOT_ATTEMPTED:
                continue
            return (
                f"your `{self.name}` calls your `{name}`, which does not pass its own check "
                f"({result.message.splitlines()[0]}): fix `{name}` first, then check this "
                "exercise again"
            )
        return None

    def _dependencies(self, runs: list[_Run], fn: Any) -> Iterator[_Candidate]:
        """The worked solution run with the learner's own versions of what it calls."""
        name = self._solution_name()
        if name is None or fn is None or self.chapter is None:
            return
        learner = getattr(fn, "__learner__", fn)
        scope = _globals_of(learner)
        code = worked.chapter_code(self.chapter)
        assert code is not None
        called = _called_names(code.definitions[name]) & set(code.definitions) - {name}
        used = _names_used(learner, scope)
        for dep in sorted(called):
            if used is not None and dep not in used:
                continue  # the learner's code never calls it: it cannot be the cause
            mine = scope.get(dep)
            if (
                mine is None
                or not callable(mine)
                or (getattr(mine, "__module__", None) or "").startswith("attnlab")
            ):
                continue
            names = worked.namespace(self.chapter)
            names[dep] = mine
            try:
                made = _mutants.build(code.definitions[name], name, names)
                outcomes = self._outcomes(self._as_graded(made))
            except Exception:
                continue
            yield _Candidate(
                "dependency",
                f"your `{name}` itself looks right: the worked `{name}`, given your `{dep}` "
                f"(which it calls), does the same (the same numbers, or the same exception); "
                f"the mistake is in your `{dep}` (check that exercise again)",
                outcomes,
            )

    def _generated(self, runs: list[_Run], fn: Any) -> Iterator[_Candidate]:
        yield from self.generated_candidates()

    def generated_candidates(self) -> tuple[_Candidate, ...]:
        """The generated mutants and their outcomes on every case (computed once)."""
        key = id(self)
        if key in _GENERATED:
            return _GENERATED[key]
        name = self._solution_name()
        found: list[_Candidate] = []
        unlikely: list[int] = []
        for mutant in self.mutants() if name is not None else ():
            assert self.chapter is not None and name is not None
            try:
                made = _mutants.build(mutant.source, name, worked.namespace(self.chapter))
                outcomes = self._outcomes(self._as_graded(made))
            except Exception:
                continue
            found.append(_Candidate("generated", mutant.description, outcomes, mutant.whole))
            unlikely.append(mutant.unlikely)
        # The likelier mistakes first: on a tie, the first candidate names the answer.
        order = sorted(range(len(found)), key=lambda i: unlikely[i])
        _GENERATED[key] = tuple(found[i] for i in order)
        weakref.finalize(self, _GENERATED.pop, key, None)
        return _GENERATED[key]

    def _reference_source(self) -> str | None:
        name = self._solution_name()
        code = worked.chapter_code(self.chapter) if self.chapter is not None else None
        return code.definitions.get(name) if code is not None and name is not None else None

    def mutants(self) -> list[_mutants.Mutant]:
        """Every generated mutant of the worked solution (:mod:`.mutants`), in order."""
        name = self._solution_name()
        if name is None or self.chapter is None:
            return []
        source = worked.chapter_code(self.chapter).definitions[name]  # type: ignore[union-attr]
        found = _mutants.generate(source)
        first = self.cases[0]

        def run_first(made: Any) -> Any:
            return call_quietly(self._as_graded(made), first)

        found += _mutants.hard_coded(source, name, worked.namespace(self.chapter), run_first)
        return found


_NAMED_PLACE = re.compile(
    r" ?\((?:in the line that computes|in the update of) `([^`]+)`\)|(?<=\w) \(`(\w+)`\)"
)


_INDEXED_NAME = re.compile(r"`([A-Za-z_]\w*)\[")


def _alias_of(fn: Any, arg: str) -> str | None:
    """The name the learner's code binds to the input ``arg`` itself (``y = x``) and then
    edits through (``y[...] = ...``, ``y += ...``): a second name, not a copy."""
    tree = _source_tree(getattr(fn, "__learner__", fn))
    if tree is None:
        return None
    aliases = {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Name)
        and node.value.id == arg
        for target in node.targets
        if isinstance(target, ast.Name) and target.id != arg
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            edited = node.target  # y += ...
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            edited = next((t.value for t in targets if isinstance(t, ast.Subscript)), None)
        else:
            continue
        if isinstance(edited, ast.Name) and edited.id in aliases:
            return edited.id  # y[...] = ...
    return None


def _source_tree(obj: Any) -> ast.Module | None:
    """The parsed source of the learner's function or class (None where there is none).

    Kept for the next candidate diagnosis of the same answer: for a class, ``inspect``
    parses the whole file that defines it each time (Python 3.10-3.12), and a wrong answer
    is tested against every generated mistake. Callers only read the tree.
    """
    try:
        hash(obj)
    except TypeError:
        return _parse_source.__wrapped__(obj)
    return _parse_source(obj)


@functools.lru_cache(maxsize=32)
def _parse_source(obj: Any) -> ast.Module | None:
    try:
        return ast.parse(textwrap.dedent(inspect.getsource(obj)))
    except (OSError, TypeError, SyntaxError):
        return None


def _refuted_by_source(diagnosis: str, fn: Any, reference: str | None) -> bool:
    """A generated diagnosis that quotes code the learner's function does not have:
    "`*` ... where `@` is needed" with no `*` in it, "a minus sign is missing: `e`" when
    the learner's code has `-e`, or "`n` instead of `n - 1`" when the
    learner's code keeps as many `n - 1` as the worked solution (``reference``) has: the
    same numbers from another mistake."""
    tree = _source_tree(getattr(fn, "__learner__", fn))
    if tree is None:
        return False
    ops = {type(n.op) for n in ast.walk(tree) if isinstance(n, ast.BinOp)}
    if diagnosis.startswith("`*` multiplies entry by entry") and ast.Mult not in ops:
        return True
    if diagnosis.startswith("`@` is a matrix product") and ast.MatMult not in ops:
        return True
    found = re.match(r"you used `(self\.)?(\w+)` where `(?:self\.)?(\w+)` belongs", diagnosis)
    if found and reference is not None:
        try:
            model = ast.parse(textwrap.dedent(reference))
        except SyntaxError:
            return False

        def uses(t: ast.AST, name: str) -> int:
            if found[1]:  # `self.name`
                return sum(
                    isinstance(n, ast.Attribute) and n.attr == name and _is_self(n.value)
                    for n in ast.walk(t)
                )
            return sum(
                isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
                for n in ast.walk(t)
            )

        # the mutant has one `belongs` fewer and one `used` more than the worked solution:
        # a learner who uses both as often as the worked solution made another mistake
        # (with the same exception, say)
        return all(uses(tree, n) >= uses(model, n) > 0 for n in (found[2], found[3]))
    found = re.match(r"a minus sign is missing: `([^`]+)`", diagnosis)
    if found:  # the learner's code negates that expression: the sign is there
        try:
            negated = ast.unparse(ast.parse(found[1], mode="eval"))
        except SyntaxError:
            return False
        return any(
            isinstance(n, ast.UnaryOp)
            and isinstance(n.op, ast.USub)
            and ast.unparse(n.operand) == negated
            for n in ast.walk(tree)
        )
    found = re.match(r"off by one: `([^`]+)` instead of `([^`]+)`", diagnosis)
    if found and reference is not None:
        try:
            right = ast.unparse(ast.parse(found[2], mode="eval"))
            model = ast.parse(textwrap.dedent(reference))
        except SyntaxError:
            return False

        def count(t: ast.AST) -> int:
            return sum(isinstance(n, ast.expr) and ast.unparse(n) == right for n in ast.walk(t))

        return count(tree) >= count(model) > 0
    return False


def _hint_for(hint: Any, said: str, line: str) -> str | None:
    """An authored error hint: a text, or a function of the exception's text (and of the
    learner's line that raised it, for a function with a ``line`` parameter)."""
    if not callable(hint):
        return hint
    if "line" in inspect.signature(hint).parameters:
        return hint(said, line=line)
    return hint(said)


def _is_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _in_learner_terms(diagnosis: str, fn: Any) -> str:
    """A generated mutant's diagnosis without the worked solution's variable names that the
    learner's code does not use ("(in the line that computes `shift`)", "the max (`top`)")."""
    try:
        source = inspect.getsource(getattr(fn, "__learner__", fn))
    except (OSError, TypeError):
        return diagnosis

    def keep(found: re.Match[str]) -> str:
        names = re.findall(r"[A-Za-z_]\w*", found[1] or found[2])
        used = all(re.search(rf"\b{re.escape(n)}\b", source) for n in names)
        return found[0] if used else ""

    def index_only(found: re.Match[str]) -> str:  # `real[:, :, None]` -> `[:, :, None]`
        used = re.search(rf"\b{re.escape(found[1])}\b", source)
        return found[0] if used else "`["

    diagnosis = _INDEXED_NAME.sub(index_only, _NAMED_PLACE.sub(keep, diagnosis))
    # A diagnosis that opens on a quote of the worked solution's code ("`z[..., -1:]` indexes
    # along the wrong axis") does not say the learner wrote it when the learner did not. A
    # lone operator ("`*` where `@` is needed") names the slip, not a line of code.
    lead = re.match(r"`([^`]+)`", diagnosis)
    quotes_code = lead is not None and re.search(r"\w", lead[1]) is not None
    if quotes_code and _squeezed(lead[1].rstrip("…")) not in _squeezed(source):
        diagnosis = f"your code does the equivalent of this slip: {diagnosis}"
    return diagnosis


def _squeezed(code: str) -> str:
    return re.sub(r"\s+", "", code)


def _python_loop(fn: Any) -> str | None:
    """``'a for loop, line 3'`` when the learner's own function loops, else ``None``."""
    try:
        source = textwrap.dedent(inspect.getsource(getattr(fn, "__learner__", fn)))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError):
        return None
    kinds = {
        ast.For: "a for loop",
        ast.While: "a while loop",
        ast.ListComp: "a list comprehension",
        ast.GeneratorExp: "a generator expression",
        ast.SetComp: "a comprehension",
        ast.DictComp: "a comprehension",
    }
    for node in ast.walk(tree):
        for kind, words in kinds.items():
            if isinstance(node, kind):
                return f"{words}, line {node.lineno} of your function"
    return None


def _called_names(source: str) -> set[str]:
    tree = ast.parse(textwrap.dedent(source))
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _names_used(learner: Any, scope: dict[str, Any]) -> set[str] | None:
    """The global names the learner's function (or class) can reach, through the learner's
    own helper functions too; ``None`` when its code cannot be read."""

    def codes_of(obj: Any) -> list[Any]:
        if isinstance(obj, type):
            found = []
            for value in vars(obj).values():
                found += codes_of(getattr(value, "__func__", value))
            return found
        code = getattr(obj, "__code__", None)
        return [code] if code is not None else []

    pending = codes_of(learner)
    if not pending:
        return None
    names: set[str] = set()
    seen: set[int] = set()
    while pending:
        code = pending.pop()
        if id(code) in seen:
            continue
        seen.add(id(code))
        pending += [c for c in code.co_consts if hasattr(c, "co_names")]
        for name in code.co_names:
            if name in names:
                continue
            names.add(name)
            helper = scope.get(name)
            if callable(helper) and getattr(helper, "__module__", None) == scope.get("__name__"):
                pending += codes_of(helper)  # the learner's own helper
    return names


def _globals_of(learner: Any) -> dict[str, Any]:
    if isinstance(learner, type):
        for attribute in ("forward", "__init__"):
            method = getattr(learner, attribute, None)
            scope = getattr(method, "__globals__", None)
            if scope is not None and not scope.get("__name__", "").startswith("torch"):
                return scope
        return {}
    return getattr(learner, "__globals__", {}) or {}


def _none_returned(fn: Any, inputs: Mapping[str, Any] | None = None) -> str:
    """What a None return means, from the function's own code when it can be read."""
    tree = _source_tree(getattr(fn, "__learner__", fn))
    if tree is None:
        return "your function returned None: a `return` is missing, or returns nothing"
    valued = [n for n in ast.walk(tree) if isinstance(n, ast.Return) and n.value is not None]
    if not valued:
        return "your function has no `return` with a value: did you forget `return`?"
    unmatched = _unmatched_string(tree, inputs or {})
    if unmatched is not None:
        return unmatched
    return (
        "your function returned None on this case: a path through it ends without a "
        "`return` (an `if` without `else`?), or it returns something that is None (such as "
        "what `list.append` or `dict.update` return)"
    )


def _unmatched_string(tree: ast.AST, inputs: Mapping[str, Any]) -> str | None:
    """A string argument that none of the code's comparisons with that name spells."""
    for name, value in inputs.items():
        if not isinstance(value, str):
            continue
        spelled = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                if any(isinstance(n, ast.Name) and n.id == name for n in sides):
                    spelled |= {
                        n.value
                        for n in sides
                        if isinstance(n, ast.Constant) and isinstance(n.value, str)
                    }
        if spelled and value not in spelled:
            return (
                f"none of your branches handles {name}={value!r}: your code compares {name} "
                f"with {', '.join(map(repr, sorted(spelled)))}, so this case falls through "
                "every `if` and the function ends without a `return`; check the spelling of "
                f"each {name} string"
            )
    return None


def _none_item(name: str, fn: Any = None) -> str:
    try:
        source = inspect.getsource(getattr(fn, "__learner__", fn)) if fn is not None else ""
    except (OSError, TypeError):
        source = ""
    if name == "weights" and "scaled_dot_product_attention" in source:
        return (
            "F.scaled_dot_product_attention doesn't return the weights, only the output: "
            "compute the weights yourself and return both"
        )
    if "grad" in name:
        return (
            f"`{name}` is None: no gradient reached it, so the computation does not use that "
            "weight, or cuts it from the graph"
        )
    return (
        f"`{name}` is None: a variable that was never given a value, or the result of a "
        "method that works in place and returns None"
    )


def _numbers_for_booleans(array: np.ndarray) -> str:
    """Why numbers came back where a boolean mask is expected (an exercise whose signature
    says mask), read from the numbers: an additive mask (0 and -inf or a large negative
    fill), 0/1 numbers, or either."""
    kind = array.dtype
    if array.dtype.kind == "f" and (np.any(np.isneginf(array)) or np.any(array <= -1e4)):
        return (
            f"your mask is additive ({kind}: 0 where a key is visible, -inf or a large "
            "negative number where it is hidden), the convention of masks added to the "
            "scores; this exercise's mask is boolean, dtype bool, True = may attend"
        )
    if array.size and set(np.unique(array).tolist()) <= {0, 1} and np.any(array == 1):
        return (
            f"your mask holds 1s and 0s as {kind} numbers: this exercise's mask is boolean, "
            "dtype bool (True = may attend); a comparison gives booleans, and NumPy and "
            "torch build arrays of booleans directly (dtype=bool)"
        )
    return (
        f"your mask holds {kind} numbers: this exercise's mask is boolean, dtype bool "
        "(True = may attend); 1/0 numbers and an additive mask (0 and -inf) are other "
        "conventions"
    )


def _precision_hint(got: np.dtype, want: np.dtype, torch_out: bool) -> str:
    if got.itemsize < want.itemsize:
        made = (
            "torch.zeros, torch.ones, torch.tensor and torch.arange make float32 unless given "
            "`dtype=` (or use `x.new_zeros(...)`)"
            if torch_out
            else "np.float32 somewhere, or an array made from float32 data"
        )
        return (
            f"your result is {got}, a lower precision than the inputs' {want}: something "
            f"along the way is {got} ({made}), or a conversion such as "
            + ("`.float()`" if torch_out else "`.astype(np.float32)`")
        )
    return (
        f"your result is {got} where the inputs are {want}: keep the input's precision. An "
        f"operand of higher precision along the way (a table or array made by NumPy, "
        f"`.double()`, `dtype=`) promotes the result: convert it to the input's dtype "
        f"(`.to(x.dtype)` in torch, `.astype(x.dtype)` in NumPy)"
    )


def _numpy(x: Any) -> np.ndarray:
    """``x`` as a NumPy array, whatever it holds (tensors detached and moved to the CPU)."""
    return to_numpy(x, numeric=False)


def _grad_switched_on(before: Any, after: Any) -> bool:
    """Did the call make the caller's tensor record gradients (or leave a ``.grad`` on it)?"""
    if not is_torch_array(after) or not is_torch_array(before):
        return False
    if before.requires_grad:  # a case input meant to record gradients
        return False
    return after.requires_grad or after.grad is not None


def _same(before: Any, after: Any) -> bool:
    """Is an input unchanged by the call (same shape and values, NaN equal to NaN)?"""
    if hasattr(before, "shape"):
        a, b = _numpy(before), _numpy(after)
        return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    return bool(before == after)


def _describe(x: Any) -> str:
    if is_torch_array(x):
        return f"a torch.Tensor of shape {tuple(x.shape)}"
    if isinstance(x, np.ndarray):
        return f"a NumPy array of shape {x.shape}"
    if isinstance(x, (list, tuple)):
        return f"a {type(x).__name__} of {len(x)} item{'s' * (len(x) != 1)}"
    return f"a {type(x).__name__}"


def _passed_line(n: int, rtol: float) -> str:
    """``'6 cases passed, every value within 1e-06 (relative) of the reference'``."""
    return (
        f"{n} case{'s' * (n != 1)} passed, every value within {rtol:.0e} (relative) "
        f"of the reference"
    )


def _fmt(x: float) -> str:
    return f"{x:.1e}"


def _abs_diff(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """``|got - want|`` in float64 (booleans and integers too, e.g. masks)."""
    return np.abs(got.astype(np.float64) - want.astype(np.float64))


def _worst(got: np.ndarray, want: np.ndarray, rtol: float = 0.0) -> str:
    """``'max error 3.1e-01; at index (0, 2): expected 0.2312, got 0.5412'``.

    The two numbers get as many digits as it takes to tell them apart (a result rounded
    to 4 decimals shows ``expected -0.33541, got -0.3354``, not the same number twice).
    """
    diff = _abs_diff(got, want)
    # The entry that breaks the tolerance most, not only the largest difference.
    excess = diff - rtol * np.abs(want.astype(np.float64)) if want.dtype.kind in "fc" else diff
    excess = np.where(np.isnan(excess), np.inf, excess)
    index = np.unravel_index(int(np.argmax(excess)), diff.shape) if diff.ndim else ()
    where = f" at index {tuple(int(i) for i in index)}:" if diff.ndim else ""
    expected, value = _values(want[index], got[index])
    return f"max error {_fmt(float(diff[index]))};{where} expected {expected}, got {value}"


def _values(want: Any, got: Any) -> tuple[str, str]:
    """The two numbers, with the fewest significant digits (at least 4) that differ."""
    if isinstance(want, (bool, np.bool_)) or isinstance(got, (bool, np.bool_)):
        return str(bool(want)), str(bool(got))
    w, g = float(want), float(got)
    for digits in range(4, 18):
        a, b = f"{w:.{digits}g}", f"{g:.{digits}g}"
        if a != b:
            return a, b
    return a, b


def _near_miss(runs: list[_Run], rtol: float = 1e-3) -> float | None:
    """The worst relative error when every output is right to about 3 digits, else ``None``.

    The scale of an output is its largest magnitude (at least 1), so that entries near 0
    are not judged by a relative error.
    """
    worst = 0.0
    for run in runs:
        for got, want in zip(run.outputs or (), run.expected, strict=True):
            if got.shape != want.shape or want.dtype.kind not in "fc":
                return None
            scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
            error = float(np.max(_abs_diff(got, want), initial=0.0)) / scale
            if not error <= rtol:  # also False for NaN
                return None
            worst = max(worst, error)
    return worst


def _precision_diagnosis(error: float, rtol: float) -> str:
    return (
        f"a precision problem: your values agree with the expected ones to about "
        f"{max(1, round(-np.log10(max(error, 1e-300))))} significant digits, but the check "
        f"asks for a relative error below {rtol:.0e}; something loses precision, such as "
        "rounding the result, computing in float32 along the way, or an eps added to a "
        "denominator that is too large to be negligible"
    )
