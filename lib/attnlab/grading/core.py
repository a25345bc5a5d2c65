"""Graders for the exercises: run the learner's function, say what is wrong and why.

Every ``check_*`` function takes the learner's implementation, runs it on seeded cases
(NumPy arrays; a grader may also use torch tensors), compares it with the attnlab reference
and returns a :class:`CheckResult` that the notebook displays. Problems are reported in a
fixed order, stopping at the first kind found:

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
7. wrong values (with the max error).

For shapes, NaN and values the output is also compared with *planted mistakes*: small wrong
implementations of the same function (softmax without subtracting the max, over the wrong
axis, ...). A mistake is named only if it reproduces the learner's output on the failing
case and agrees with it on every case the learner gets right; otherwise the result gives the
exercise's generic hint. A grader never raises (except ``KeyboardInterrupt`` and friends):
whatever the learner's function does, the check cell shows a result.

This module is the machinery; each chapter's graders live in their own module
(``chapter02.py``, ...). Adding one takes a :class:`Grader` with a few :class:`Case` and
:class:`Mistake` entries and a one-line ``check_*`` function (see ``chapter02.check_softmax``).

Taught in: every exercises/ notebook (first in exercises/02_similarity.ipynb)
"""

from __future__ import annotations

import contextlib
import copy
import html
import re
import sysconfig
import traceback
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np
from array_api_compat import is_torch_array

__all__ = [
    "GRADERS",
    "Case",
    "CheckResult",
    "Grader",
    "Mistake",
    "Summary",
    "register",
    "reset",
    "summary",
]

# The statuses, in the order they are looked for.
PASSED = "passed"
NOT_ATTEMPTED = "not attempted"
EXCEPTION = "raised an exception"
WRONG_TYPE = "wrong type"
WRONG_SHAPE = "wrong shape"
NOT_FINITE = "NaN or inf"
WRONG_VALUES = "wrong values"
IN_PLACE = "modified its input"
NOT_CHECKED = "not checked"
GRADER_ERROR = "grader error"

_SYMBOLS = {PASSED: "✓", NOT_ATTEMPTED: "○", NOT_CHECKED: "○"}
_COLOURS = {  # (border, background): green for passed, grey for not attempted, red otherwise
    PASSED: ("#2e7d32", "#e8f5e9"),
    NOT_ATTEMPTED: ("#757575", "#f5f5f5"),
    NOT_CHECKED: ("#757575", "#f5f5f5"),
}
_FAILED_COLOURS = ("#c62828", "#ffebee")


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class CheckResult:
    """What a grader found, displayed by the check cell (plain text and a coloured box).

    Attributes:
        name: the exercise, e.g. ``"softmax"``.
        status: ``"passed"``, ``"not attempted"``, ``"raised an exception"``,
            ``"wrong type"``, ``"modified its input"``, ``"wrong shape"``, ``"NaN or inf"``
            or ``"wrong values"`` (or ``"grader error"`` if the grader itself failed).
        passed: ``status == "passed"``.
        message: one line saying what happened, on which case.
        diagnosis: the likely mistake (or a generic hint), or ``None``.
        max_error: largest absolute difference from the reference, when it was measured.
        diagnosed: ``True`` when ``diagnosis`` names a recognised mistake, ``False`` when it
            is the exercise's generic hint.
    """

    name: str
    status: str
    passed: bool
    message: str
    diagnosis: str | None = None
    max_error: float | None = None
    diagnosed: bool = False

    @property
    def text(self) -> str:
        """The result as plain text: a symbol, the exercise, the message, the diagnosis."""
        lines = [f"{_SYMBOLS.get(self.status, '✗')} {self.name}: {self.message}"]
        if self.diagnosis:
            label = "Diagnosis" if self.diagnosed else "Hint"
            lines.append(f"  {label}: {self.diagnosis}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        border, background = _COLOURS.get(self.status, _FAILED_COLOURS)
        return (
            f'<div style="border-left: 6px solid {border}; background: {background}; '
            "color: #1a1a1a; padding: 0.5em 0.8em; margin: 0.3em 0; white-space: pre-wrap; "
            f'font-family: monospace;">{html.escape(self.text)}</div>'
        )


@dataclass(frozen=True)
class Summary:
    """A score table over the exercises checked so far (see :func:`summary`)."""

    title: str
    rows: tuple[tuple[str, str], ...]  # (exercise, status)

    @property
    def score(self) -> int:
        return sum(status == PASSED for _, status in self.rows)

    @property
    def total(self) -> int:
        return len(self.rows)

    @property
    def text(self) -> str:
        lines = [self.title]
        if not self.rows:
            lines.append("  (no exercise checked yet)")
        width = max((len(name) for name, _ in self.rows), default=0)
        for name, status in self.rows:
            lines.append(f"  {_SYMBOLS.get(status, '✗')} {name:<{width}}  {status}")
        lines.append(f"Score: {self.score}/{self.total}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        pad = "padding: 0.15em 0.6em; border: none; text-align: left"
        cells = []
        for name, status in self.rows:
            colour = _COLOURS.get(status, _FAILED_COLOURS)[0]
            symbol = _SYMBOLS.get(status, "✗")
            cells.append(
                f'<tr><td style="{pad}; color: {colour}">{symbol}</td>'
                f'<td style="{pad}"><code>{html.escape(name)}</code></td>'
                f'<td style="{pad}; color: {colour}">{html.escape(status)}</td></tr>'
            )
        body = "".join(cells) or (
            f'<tr><td colspan="3" style="{pad}">(no exercise checked yet)</td></tr>'
        )
        return (
            '<div style="margin: 0.3em 0;">'
            f"<strong>{html.escape(self.title)}</strong>"
            f'<table style="margin: 0.3em 0; border-collapse: collapse;">{body}</table>'
            f"<strong>Score: {self.score}/{self.total}</strong></div>"
        )


_RESULTS: dict[str, CheckResult] = {}
"""The latest result per exercise, in the order the exercises were first checked."""


def summary(title: str = "Exercises", exercises: Iterable[str] | None = None) -> Summary:
    """The score table: every checked exercise with its latest status, and ``Score: k/n``.

    Args:
        title: first line of the table (e.g. ``"Chapter 2 exercises"``).
        exercises: the exercises to list, by grader name (``"softmax"``), in this order;
            those never checked count as ``"not checked"``. Each chapter's module exports
            its list (``summary("Chapter 2", CHAPTER02)``), so that the score counts the
            exercises not checked yet. Default: those checked so far.

    Returns:
        A :class:`Summary`, displayed as a table by Jupyter.
    """
    names = list(_RESULTS) if exercises is None else list(exercises)
    rows = tuple((n, _RESULTS[n].status if n in _RESULTS else NOT_CHECKED) for n in names)
    return Summary(title=title, rows=rows)


def reset() -> None:
    """Forget every recorded result (the next :func:`summary` starts from zero)."""
    _RESULTS.clear()


# --------------------------------------------------------------------------- specs


@dataclass(frozen=True)
class Case:
    """One input for a grader: arguments passed positionally (by name) and keyword options.

    Inputs are NumPy arrays or torch tensors (or plain values such as an int). The function
    under test always receives fresh copies, so an in-place edit can be seen; the reference
    decides the expected kind of output (NumPy in, NumPy out; tensors in, tensors out).
    """

    label: str
    inputs: Mapping[str, Any]
    options: Mapping[str, Any] = field(default_factory=dict)

    def arguments(self) -> tuple[Any, ...]:
        """Fresh copies of the inputs, in order."""
        return tuple(_copy(a) for a in self.inputs.values())

    def describe(self) -> str:
        """``'"columns" (x: shape (4, 3), axis=0)'``."""
        parts = [
            f"{n}: shape {tuple(a.shape)}" if hasattr(a, "shape") else f"{n}={a!r}"
            for n, a in self.inputs.items()
        ]
        parts += [f"{k}={v!r}" for k, v in self.options.items()]
        return f'"{self.label}" ({", ".join(parts)})'


@dataclass(frozen=True)
class Mistake:
    """A planted wrong implementation, called like the learner's, and what it means."""

    diagnosis: str
    fn: Callable[..., Any]


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
            substring gets the hint.
        rtol, atol: tolerances of the comparison (``np.allclose``).
    """

    name: str
    signature: str
    reference: Callable[..., Any]
    cases: tuple[Case, ...]
    mistakes: tuple[Mistake, ...] = ()
    outputs: tuple[str, ...] = ("output",)
    hint: str = ""
    error_hints: tuple[tuple[str, str], ...] = ()
    rtol: float = 1e-6
    atol: float = 1e-8
    _mistake_cache: dict[int, list[tuple[np.ndarray, ...] | None]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def check(self, fn: Any) -> CheckResult:
        """Grade ``fn``, record the result for :func:`summary`, and return it. Never raises."""
        try:
            result = self._grade(fn)
        except Exception as err:  # a grader bug must not crash the learner's notebook either
            result = self._result(
                GRADER_ERROR,
                f"the grader itself failed ({type(err).__name__}: {err}); please report this",
            )
        _RESULTS[self.name] = result
        return result

    # The order of the checks is the order of this method.
    def _grade(self, fn: Any) -> CheckResult:
        if not callable(fn):
            return self._result(
                WRONG_TYPE,
                f"expected your function, got {_describe(fn)}",
                f"pass the function itself: check_{self.name}({self.name}), without calling it",
                diagnosed=True,
            )
        runs = [self._run(fn, case) for case in self.cases]

        for run in runs:
            if isinstance(run.error, NotImplementedError) and _raised_directly(run.error):
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
        n = len(runs)
        return self._result(
            PASSED, f"{n} case{'s' * (n != 1)} passed, max error {_fmt(max_error)}", None, max_error
        )

    # ---- helpers

    def _result(
        self,
        status: str,
        message: str,
        diagnosis: str | None = None,
        max_error: float | None = None,
        diagnosed: bool = False,
    ) -> CheckResult:
        return CheckResult(
            name=self.name,
            status=status,
            passed=status == PASSED,
            message=message,
            diagnosis=diagnosis,
            max_error=max_error,
            diagnosed=diagnosed,
        )

    def _of(self, name: str) -> str:
        return "" if len(self.outputs) == 1 else f" of `{name}`"

    def _run(self, fn: Callable[..., Any], case: Case) -> _Run:
        expected = self._items(_call_quietly(self.reference, case)[0])
        run = _Run(
            case=case,
            expected=tuple(_numpy(e) for e in expected),
            torch_out=tuple(is_torch_array(e) for e in expected),
        )
        try:
            run.returned, run.arguments = _call_quietly(fn, case)
        except Exception as err:
            run.error = err
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
                isinstance(item, (float, int)) and not isinstance(item, bool) and want.ndim == 0
            ):
                array = np.asarray(item)
            else:
                hint = None
                if isinstance(item, (list, tuple)):
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
        where = _where(err)
        if where:
            message += f"\n  at {where}"
        hints = [h for s, h in self.error_hints if s in str(err)]
        hints += [h(str(err)) for s, h in _ERROR_HINTS if s in str(err)]
        if isinstance(err, TypeError) and "argument" in str(err):
            hints.append(f"keep the signature of the exercise: {self.signature}")
        if isinstance(err, NotImplementedError):
            callee = _unfinished_callee(err)
            if callee is not None:
                raised = f'NotImplementedError("{text}")' if text else "NotImplementedError"
                hints.insert(
                    0,
                    f"your code calls `{callee}`, which still raises {raised}: finish that "
                    f"exercise first (or write the {callee} step inline)",
                )
        return self._result(EXCEPTION, message, hints[0] if hints else None, diagnosed=bool(hints))

    def _mistake_outputs(self, index: int) -> list[tuple[np.ndarray, ...] | None]:
        """The planted mistake's outputs on every case (``None`` where it raises)."""
        if index not in self._mistake_cache:
            outs: list[tuple[np.ndarray, ...] | None] = []
            for case in self.cases:
                try:
                    value = _call_quietly(self.mistakes[index].fn, case)[0]
                    outs.append(tuple(_numpy(v) for v in self._items(value)))
                except Exception:
                    outs.append(None)
            self._mistake_cache[index] = outs
        return self._mistake_cache[index]

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
        for i, mistake in enumerate(self.mistakes):
            planted_runs = self._mistake_outputs(i)
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
        if best is None:
            return self._result(status, message, fallback, max_error)
        return self._result(status, message, best.diagnosis, max_error, diagnosed=True)


def _broadcast_hint(message: str) -> str:
    """The hint for a broadcasting error, naming the shapes NumPy's message gives."""
    shapes: list[str] = []
    for found in re.findall(r"\(([\d,\s]*)\)", message):
        shape = str(tuple(int(n) for n in found.replace(",", " ").split()))
        if shape not in shapes:
            shapes.append(shape)
    which = (
        f"the shapes {', '.join(shapes[:-1])} and {shapes[-1]} do not broadcast together"
        if len(shapes) >= 2
        else "the shapes did not line up"
    )
    return (
        f"{which}: check each reduction's `axis` and `keepdims` (with keepdims=True a sum or "
        "max keeps the reduced axis with size 1, so that it lines up with its input)"
    )


def _fixed(hint: str) -> Callable[[str], str]:
    return lambda message: hint


_ERROR_HINTS: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("broadcast", _broadcast_hint),
    (
        "not aligned",
        _fixed(
            "np.dot and @ multiply matrices; for vectors stored in rows, multiply elementwise "
            "and sum over the last axis"
        ),
    ),
    (
        "mismatch in its core dimension",
        _fixed("@ multiplies matrices: check the shapes (and transpose the right operand)"),
    ),
)
"""``(substring, hint)``: an exception whose message contains the substring gets
``hint(message)``, after the grader's own ``error_hints``."""


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """No NumPy floating-point warnings: overflow and 0/0 are reported by the grader."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _copy(x: Any) -> Any:
    if is_torch_array(x):
        return x.detach().clone()
    if isinstance(x, np.ndarray):
        return x.copy()
    return copy.deepcopy(x)


def _numpy(x: Any) -> np.ndarray:
    """``x`` as a NumPy array (tensors are detached and moved to the CPU first)."""
    if is_torch_array(x):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def _same(before: Any, after: Any) -> bool:
    """Is an input unchanged by the call (same shape and values, NaN equal to NaN)?"""
    if hasattr(before, "shape"):
        a, b = _numpy(before), _numpy(after)
        return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    return bool(before == after)


def _call_quietly(fn: Callable[..., Any], case: Case) -> tuple[Any, tuple[Any, ...]]:
    args = case.arguments()
    with _quiet():
        return fn(*args, **case.options), args


def _describe(x: Any) -> str:
    if is_torch_array(x):
        return f"a torch.Tensor of shape {tuple(x.shape)}"
    if isinstance(x, np.ndarray):
        return f"a NumPy array of shape {x.shape}"
    if isinstance(x, (list, tuple)):
        return f"a {type(x).__name__} of {len(x)} item{'s' * (len(x) != 1)}"
    return f"a {type(x).__name__}"


def _fmt(x: float) -> str:
    return f"{x:.1e}"


def _abs_diff(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """``|got - want|`` in float64 (booleans and integers too, e.g. masks)."""
    return np.abs(got.astype(np.float64) - want.astype(np.float64))


def _worst(got: np.ndarray, want: np.ndarray) -> str:
    """``'max error 3.1e-01; at index (0, 2): expected 0.2312, got 0.5412'``."""
    diff = _abs_diff(got, want)
    index = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.ndim else ()
    where = f" at index {tuple(int(i) for i in index)}:" if diff.ndim else ""
    return (
        f"max error {_fmt(float(diff[index]))};{where} expected {_value(want[index])}, "
        f"got {_value(got[index])}"
    )


def _value(x: Any) -> str:
    return str(bool(x)) if isinstance(x, (bool, np.bool_)) else f"{float(x):.4g}"


_LIBRARY_DIRS = tuple(
    str(p)
    for p in {
        Path(__file__).resolve().parents[1],  # the attnlab package
        Path(sysconfig.get_paths()["stdlib"]).resolve(),
        Path(sysconfig.get_paths()["purelib"]).resolve(),
        Path(sysconfig.get_paths()["platlib"]).resolve(),
    }
)


def _is_library(filename: str) -> bool:
    """Is ``filename`` attnlab's, the standard library's or an installed package's?"""
    path = str(Path(filename).resolve()) if filename else ""
    return path.startswith(_LIBRARY_DIRS) or "-packages" in path


def _where(err: Exception) -> str | None:
    """``'softmax, line 3: return e / e.sum()'``: the innermost frame in the learner's code."""
    for frame in reversed(traceback.extract_tb(err.__traceback__)):
        if _is_library(frame.filename):
            continue
        line = f": {frame.line.strip()}" if frame.line else ""
        return f"{frame.name}, line {frame.lineno}{line}"
    return None


def _called_frames(err: BaseException) -> list[FrameType]:
    """The traceback's frames from the function under test inwards.

    The first is the function the grader called (the frame after :func:`_call_quietly`), the
    last the one that raised.
    """
    frames = [frame for frame, _ in traceback.walk_tb(err.__traceback__)]
    for i, frame in enumerate(frames):
        if frame.f_code is _call_quietly.__code__:
            return frames[i + 1 :]
    return frames


def _raised_directly(err: BaseException) -> bool:
    """Was ``err`` raised in the function under test's own frame (e.g. by its stub)?"""
    return len(_called_frames(err)) <= 1


def _unfinished_callee(err: BaseException) -> str | None:
    """The learner's function, called by the one under test, that raised ``err``.

    ``None`` when ``err`` was raised directly or inside a library (an ordinary exception).
    """
    called = [f for f in _called_frames(err)[1:] if not _is_library(f.f_code.co_filename)]
    return called[-1].f_code.co_name if called else None


GRADERS: dict[str, Grader] = {}
"""Every grader by exercise name."""


def register(grader: Grader) -> Grader:
    """Add ``grader`` to :data:`GRADERS` (by name) and return it."""
    GRADERS[grader.name] = grader
    return grader
