"""The check pipeline: :class:`Grader` runs the learner's function and reports what is wrong.

Every ``check_*`` function of a chapter takes the learner's implementation, runs it on seeded
cases (NumPy arrays; a grader may also use torch tensors), compares it with the attnlab
reference and returns a :class:`~attnlab.grading.results.CheckResult` that the notebook
displays. Problems are reported in a fixed order, stopping at the first kind found:

1. not attempted: the function under test itself still raises ``NotImplementedError`` (a
   ``NotImplementedError`` from a function it calls, such as the learner's unfinished
   softmax, is an exception that names that function),
2. raised an exception (type, message, the line and the inputs' shapes; a broadcasting error
   shows the two shapes),
3. wrong type (``None``, a list, a torch tensor, one array instead of a pair, integers, a
   lower-precision dtype, ...),
4. modified its input in place (before the values: an edited input often explains them),
5. wrong shape (expected vs got),
6. NaN or inf in the output,
7. wrong values (with the max error); a pass states the tolerance met, not the error.

For shapes, NaN and values the output is also compared with *planted mistakes*: small wrong
implementations of the same function (softmax without subtracting the max, over the wrong
axis, ...). A mistake is named only if it reproduces the learner's output on the failing
case and agrees with it on every case the learner gets right. Otherwise a *property* that every
right output has (rows of weights summing to 1, ...) and the learner's breaks gives the
diagnosis (values right to about 3 digits are told first that they have a precision
problem); anything else gets the exercise's generic hint. A grader never raises (except ``KeyboardInterrupt`` and friends):
whatever the learner's function does, the check cell shows a result.

A grader holds no state: the planted mistakes are run when a check needs them, and the
result is recorded by :mod:`attnlab.grading.results`.

Taught in: every chapter's exercises (first in exercises/02_similarity.ipynb)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from array_api_compat import is_torch_array

from .._validate import to_numpy
from .forensics import call_quietly, error_hints, raised_directly, unfinished_callee, where
from .results import CheckResult, graded, latest, make_result
from .specs import Case, Mistake, Property
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


@dataclass
class _Run:
    """The learner's function on one case."""

    case: Case
    expected: tuple[np.ndarray, ...]  # the reference's outputs, as NumPy arrays
    torch_out: tuple[bool, ...]  # which of them are torch tensors
    returned: Any = None
    error: Exception | None = None
    arguments: tuple[Any, ...] = ()
    outputs: tuple[np.ndarray, ...] = ()  # the learner's, as NumPy arrays, once types are right


@dataclass(frozen=True)
class Grader:
    """Checks a learner's function against a reference on seeded cases.

    Args:
        name: the exercise's name, used in messages and the score table.
        signature: how the learner's function is called, e.g.
            ``"softmax(x, axis=-1, temperature=1.0) -> weights"``.
        reference: the attnlab implementation, called like the learner's function.
        cases: the inputs, from the simplest to the edge cases.
        mistakes: planted wrong implementations with their diagnoses.
        outputs: names of the returned arrays; more than one means a tuple is expected.
        hint: shown when the values are wrong and no planted mistake matches.
        error_hints: ``(substring, hint)`` pairs: an exception whose message contains the
            substring gets the hint (or ``hint(message)``, when that is not ``None``, for a
            callable: e.g. to tell two shapes apart).
        properties: what every right output has (rows summing to 1, ...): when no planted
            mistake explains a failure, the first property the learner's output breaks
            gives the diagnosis (values right to about 3 digits but not to ``rtol`` are
            told first that they have a precision problem).
        adapt: applied to what the learner's function returns before it is checked, for
            an exercise whose natural answer is not an array (a list of token ids); it must
            return anything it cannot convert unchanged, and never raise.
        rtol, atol: tolerances of the comparison (``np.allclose``).
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
        runs = [self._run(fn, case) for case in self.cases]

        for run in runs:
            if isinstance(run.error, NotImplementedError) and raised_directly(run.error):
                return self._result(
                    NOT_ATTEMPTED,
                    "not attempted yet: replace `raise NotImplementedError(...)` with your "
                    "code, then run this cell again",
                )
        for run in runs:
            if run.error is not None:
                return self._exception_result(run)
        for run in runs:
            outputs, problem, diagnosis = self._as_outputs(run.returned, run)
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
                if not _same(before, after):
                    return self._result(
                        IN_PLACE,
                        f"modified its input `{arg}` in place on case {run.case.describe()}",
                        "the caller's array changed: an in-place update such as "
                        f"`{arg} /= ...`, `{arg} -= ...`, `{arg}[...] = ...` or "
                        f"`np.exp({arg}, out={arg})` edits it; build a new array instead "
                        f"(`z = {arg} / ...`)",
                        diagnosed=True,
                    )
        for run in runs:
            for k, (name, got, want) in enumerate(
                zip(self.outputs, run.outputs, run.expected, strict=True)
            ):
                if got.shape != want.shape:
                    return self._diagnosed(
                        WRONG_SHAPE,
                        f"wrong shape{self._of(name)} on case {run.case.describe()}: "
                        f"expected {tuple(want.shape)}, got {tuple(got.shape)}",
                        runs,
                        (run, k),
                        "compare the shapes: which axis did you reduce, keep or transpose?",
                    )
        for run in runs:
            for k, (name, got) in enumerate(zip(self.outputs, run.outputs, strict=True)):
                if got.dtype.kind in "fc" and not np.all(np.isfinite(got)):
                    what = " and ".join(
                        w
                        for w, bad in (("NaN", np.isnan(got)), ("inf", np.isinf(got)))
                        if np.any(bad)
                    )
                    return self._diagnosed(
                        NOT_FINITE,
                        f"{what} in the output{self._of(name)} on case {run.case.describe()}",
                        runs,
                        (run, k),
                        "NaN and inf usually come from exp overflowing (e^1000 = inf, "
                        "inf/inf = NaN) or from dividing 0 by 0",
                    )
        errors = [self._errors(run) for run in runs]
        max_error = max((e for per_run in errors for e in per_run), default=0.0)
        for run in runs:
            for k, (name, got, want) in enumerate(
                zip(self.outputs, run.outputs, run.expected, strict=True)
            ):
                if not self._close(got, want):
                    return self._diagnosed(
                        WRONG_VALUES,
                        f"wrong values{self._of(name)} on case {run.case.describe()}: "
                        f"{_worst(got, want)}",
                        runs,
                        (run, k),
                        self.hint or "compare your code with the equation, step by step",
                        max_error=max_error,
                    )
        # The success line states the tolerance that was met, never the error itself: the
        # last digits of a float error differ between CPUs, thread counts and BLAS builds,
        # and the committed notebooks' outputs must read the same on every machine.
        n = len(runs)
        return self._result(PASSED, _passed_line(n, self.rtol), None, max_error)

    # ---- helpers

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

    def _run(self, fn: Callable[..., Any], case: Case) -> _Run:
        expected = self._items(call_quietly(self.reference, case)[0])
        run = _Run(
            case=case,
            expected=tuple(_numpy(e) for e in expected),
            torch_out=tuple(is_torch_array(e) for e in expected),
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
        self, value: Any, run: _Run
    ) -> tuple[tuple[np.ndarray, ...], str | None, str | None]:
        """The returned value as arrays, or a problem (and maybe a diagnosis)."""
        names = ", ".join(self.outputs)
        n = len(self.outputs)
        if n > 1:
            return_all = f"return {'both' if n == 2 else f'all {n}'}: `return {names}`"
            if value is None:
                return (), f"returned None instead of ({names})", "did you forget `return`?"
            if not isinstance(value, (tuple, list)):
                single = is_torch_array(value) or isinstance(value, (np.ndarray, np.generic))
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
            items = (value,)
        arrays = []
        for name, item, want, torch_out in zip(
            self.outputs, items, run.expected, run.torch_out, strict=True
        ):
            what = "returned" if len(self.outputs) == 1 else f"`{name}` is"
            if item is None:
                return (), f"{what} None", "did you forget `return`?"
            if torch_out and not is_torch_array(item):
                return (
                    (),
                    f"{what} {_describe(item)}; expected a torch.Tensor",
                    "compute with torch operations so that tensors in give tensors out",
                )
            if is_torch_array(item) and not torch_out:
                return (
                    (),
                    f"{what} {_describe(item)} for NumPy input",
                    "compute with NumPy (np.exp, np.sum, @) so that NumPy in gives NumPy out",
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
                    hint = "work on whole arrays with NumPy instead of building a Python list"
                return (), f"{what} {_describe(item)}; expected a NumPy array", hint
            if array.dtype != want.dtype:
                if array.dtype.kind == want.dtype.kind == "f":
                    hint = "keep the input's precision: no astype or dtype= conversions"
                elif array.dtype.kind in "iu" and want.dtype.kind in "fc":
                    hint = "converting to int truncates; keep floats"
                else:
                    hint = f"return {want.dtype} values"
                return (), f"{what} an array of dtype {array.dtype}; expected {want.dtype}", hint
            arrays.append(array)
        return tuple(arrays), None, None

    def _close(self, got: np.ndarray, want: np.ndarray) -> bool:
        return got.shape == want.shape and bool(
            np.allclose(got, want, rtol=self.rtol, atol=self.atol, equal_nan=True)
        )

    def _errors(self, run: _Run) -> list[float]:
        return [
            float(np.max(_abs_diff(got, want), initial=0.0))
            for got, want in zip(run.outputs, run.expected, strict=True)
        ]

    def _exception_result(self, run: _Run) -> CheckResult:
        err = run.error
        assert err is not None
        text = str(err).strip().splitlines()[0] if str(err).strip() else ""
        if len(text) > 200:
            text = text[:197] + "..."
        message = f"raised {type(err).__name__}{': ' + text if text else ''}"
        message += f" on case {run.case.describe()}"
        where_ = where(err)
        if where_:
            message += f"\n  at {where_}"
        said = f"{type(err).__name__}: {err}"  # substrings may name the type: "KeyError"
        hints = [h(said) if callable(h) else h for s, h in self.error_hints if s in said]
        hints = [h for h in hints if h]
        hints += error_hints(said)
        if isinstance(err, TypeError) and "argument" in str(err):
            hints.append(f"keep the signature of the exercise: {self.signature}")
        if isinstance(err, NotImplementedError):
            callee = unfinished_callee(err)
            if callee is not None:
                raised = f'NotImplementedError("{text}")' if text else "NotImplementedError"
                hints.insert(
                    0,
                    f"your code calls `{callee}`, which still raises {raised}: finish that "
                    f"exercise first (or write the {callee} step inline)",
                )
        return self._result(EXCEPTION, message, hints[0] if hints else None, diagnosed=bool(hints))

    def _mistake_outputs(self, mistake: Mistake) -> list[tuple[np.ndarray, ...] | None]:
        """The planted mistake's outputs on every case (``None`` where it raises).

        Run only when a failure needs a diagnosis, and not kept: a grader holds no state.
        """
        outs: list[tuple[np.ndarray, ...] | None] = []
        for case in self.cases:
            try:
                value = call_quietly(mistake.fn, case)[0]
                if self.adapt is not None:
                    value = self.adapt(value)
                outs.append(tuple(_numpy(v) for v in self._items(value)))
            except Exception:
                outs.append(None)
        return outs

    def _diagnosed(
        self,
        status: str,
        message: str,
        runs: list[_Run],
        failing: tuple[_Run, int],
        fallback: str,
        max_error: float | None = None,
    ) -> CheckResult:
        """A failure, with the planted mistake that explains the learner's output, if any.

        A mistake qualifies when it reproduces the failing output (``failing``: the run and
        the output's index) and agrees with the learner on every output the learner gets
        right; among those, the one agreeing with the learner most often wins (the first
        listed on a tie).
        """
        failing_run, k = failing
        index = runs.index(failing_run)
        best, best_score = None, (False, -1)
        for mistake in self.mistakes:
            planted_runs = self._mistake_outputs(mistake)
            planted = planted_runs[index]
            if planted is None or len(planted) != len(self.outputs):
                continue
            if not self._close(failing_run.outputs[k], planted[k]):
                continue  # it does not explain the failure shown
            agreements, contradicted = 0, False
            for run, outs in zip(runs, planted_runs, strict=True):
                for j, (got, want) in enumerate(zip(run.outputs, run.expected, strict=True)):
                    agrees = outs is not None and self._close(got, outs[j])
                    agreements += agrees
                    contradicted |= not agrees and self._close(got, want)
            if contradicted:  # the learner is right where the mistake is wrong
                continue
            score = (
                all(self._close(g, p) for g, p in zip(failing_run.outputs, planted, strict=True)),
                agreements,
            )
            if score > best_score:
                best, best_score = mistake, score
        if best is not None:
            return self._result(status, message, best.diagnosis, max_error, diagnosed=True)
        if status == WRONG_VALUES:
            error = _near_miss(runs)
            if error is not None:
                diagnosis = _precision_diagnosis(error, self.rtol)
                return self._result(status, message, diagnosis, max_error, diagnosed=True)
        # A property that every right output has, broken by the failing output (or, when
        # that one holds NaN or inf, by the learner's output on another case).
        finite = all(np.all(np.isfinite(o)) for o in failing_run.outputs if o.dtype.kind in "fc")
        for run in [failing_run] if finite else [failing_run, *runs]:
            outputs = dict(zip(self.outputs, run.outputs, strict=True))
            for prop in self.properties:
                found = prop.violated(outputs, run.case)
                if found:
                    return self._result(status, message, found, max_error, diagnosed=True)
        return self._result(status, message, fallback, max_error)


def _numpy(x: Any) -> np.ndarray:
    """``x`` as a NumPy array, whatever it holds (tensors detached and moved to the CPU)."""
    return to_numpy(x, numeric=False)


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


def _worst(got: np.ndarray, want: np.ndarray) -> str:
    """``'max error 3.1e-01; at index (0, 2): expected 0.2312, got 0.5412'``.

    The two numbers get as many digits as it takes to tell them apart (a result rounded
    to 4 decimals shows ``expected -0.33541, got -0.3354``, not the same number twice).
    """
    diff = _abs_diff(got, want)
    index = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.ndim else ()
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
        for got, want in zip(run.outputs, run.expected, strict=True):
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
