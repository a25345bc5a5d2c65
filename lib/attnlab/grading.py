"""Graders for the exercises: run the learner's function, say what is wrong and why.

Every ``check_*`` function takes the learner's implementation, runs it on seeded cases
(NumPy arrays; a grader may also use torch tensors), compares it with the attnlab reference and returns a :class:`CheckResult` that the
notebook displays. Problems are reported in a fixed order, stopping at the first kind found:

1. not attempted (the stub still raises ``NotImplementedError``),
2. raised an exception (type, message, the line and the inputs' shapes),
3. wrong type (``None``, a list, a torch tensor, a lower-precision dtype, ...),
4. wrong shape (expected vs got),
5. NaN or inf in the output,
6. wrong values (with the max error),
7. modified its input in place.

For shapes, NaN and values the output is also compared with *planted mistakes*: small wrong
implementations of the same function (softmax without subtracting the max, over the wrong
axis, ...). If the learner's output matches one, the result names that mistake; otherwise
it gives the exercise's generic hint. A grader never raises (except ``KeyboardInterrupt``
and friends): whatever the learner's function does, the check cell shows a result.

Adding a grader for a later chapter takes a :class:`Grader` with a few :class:`Case` and
:class:`Mistake` entries and a one-line ``check_*`` function (see :func:`check_softmax`).

Taught in: every exercises/ notebook (first in exercises/02_similarity.ipynb)
"""

from __future__ import annotations

import contextlib
import copy
import html
import math
import sysconfig
import traceback
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from array_api_compat import is_torch_array

from .attention import scaled_dot_product_attention
from .similarity import cosine_similarity, dot, softmax

__all__ = [
    "GRADERS",
    "Case",
    "CheckResult",
    "Grader",
    "Mistake",
    "Summary",
    "check_cosine_similarity",
    "check_dot",
    "check_self_attention",
    "check_softmax",
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
            ``"wrong type"``, ``"wrong shape"``, ``"NaN or inf"``, ``"wrong values"`` or
            ``"modified its input"`` (or ``"grader error"`` if the grader itself failed).
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
        cells = []
        for name, status in self.rows:
            colour = _COLOURS.get(status, _FAILED_COLOURS)[0]
            symbol = _SYMBOLS.get(status, "✗")
            cells.append(
                f'<tr><td style="color: {colour}; text-align: center">{symbol}</td>'
                f"<td><code>{html.escape(name)}</code></td>"
                f'<td style="color: {colour}">{html.escape(status)}</td></tr>'
            )
        body = "".join(cells) or '<tr><td colspan="3">(no exercise checked yet)</td></tr>'
        return (
            '<div style="margin: 0.3em 0;">'
            f"<strong>{html.escape(self.title)}</strong>"
            f'<table style="margin: 0.3em 0;">{body}</table>'
            f"<strong>Score: {self.score}/{self.total}</strong></div>"
        )


_RESULTS: dict[str, CheckResult] = {}
"""The latest result per exercise, in the order the exercises were first checked."""


def summary(title: str = "Exercises", exercises: Iterable[str] | None = None) -> Summary:
    """The score table: every checked exercise with its latest status, and ``Score: k/n``.

    Args:
        title: first line of the table (e.g. ``"Chapter 2 exercises"``).
        exercises: the exercises to list, by grader name (``"softmax"``), in this order;
            those never checked count as ``"not checked"``. Default: those checked so far.

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
            if isinstance(run.error, NotImplementedError):
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
            for name, got, want in zip(self.outputs, run.outputs, run.expected, strict=True):
                if got.shape != want.shape:
                    return self._diagnosed(
                        WRONG_SHAPE,
                        f"wrong shape{self._of(name)} on case {run.case.describe()}: "
                        f"expected {tuple(want.shape)}, got {tuple(got.shape)}",
                        runs,
                        run,
                        "compare the shapes: which axis did you reduce, keep or transpose?",
                    )
        for run in runs:
            for name, got in zip(self.outputs, run.outputs, strict=True):
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
                        run,
                        "NaN and inf usually come from exp overflowing (e^1000 = inf, "
                        "inf/inf = NaN) or from dividing 0 by 0",
                    )
        errors = [self._errors(run) for run in runs]
        max_error = max((e for per_run in errors for e in per_run), default=0.0)
        for run in runs:
            for name, got, want in zip(self.outputs, run.outputs, run.expected, strict=True):
                if not self._close(got, want):
                    return self._diagnosed(
                        WRONG_VALUES,
                        f"wrong values{self._of(name)} on case {run.case.describe()}: "
                        f"{_worst(got, want)}",
                        runs,
                        run,
                        self.hint or "compare your code with the equation, step by step",
                        max_error=max_error,
                    )
        for run in runs:
            for (arg, before), after in zip(run.case.inputs.items(), run.arguments, strict=True):
                if not _same(before, after):
                    return self._result(
                        IN_PLACE,
                        f"modified its input `{arg}` in place on case {run.case.describe()}",
                        "the caller's array changed: an in-place update such as "
                        f"`{arg} -= ...`, `{arg}[...] = ...` or `np.exp({arg}, out={arg})` "
                        f"edits it; build a new array instead (`z = {arg} - ...`)",
                        max_error=max_error,
                        diagnosed=True,
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
        if len(self.outputs) > 1:
            if value is None:
                return (), f"returned None instead of ({names})", "did you forget `return`?"
            if not isinstance(value, (tuple, list)):
                return (), f"expected a tuple ({names}), got {_describe(value)}", None
            if len(value) != len(self.outputs):
                return (
                    (),
                    f"expected a tuple of {len(self.outputs)} ({names}), "
                    f"got {len(value)} item{'s' * (len(value) != 1)}",
                    f"return {names} together: `return {names}`",
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
                isinstance(item, float) and not isinstance(item, bool) and want.ndim == 0
            ):
                array = np.asarray(item)
            else:
                hint = None
                if isinstance(item, (list, tuple)):
                    hint = "work on whole arrays with NumPy instead of building a Python list"
                return (), f"{what} {_describe(item)}; expected a NumPy array", hint
            if array.dtype != want.dtype:
                both_float = array.dtype.kind == want.dtype.kind == "f"
                return (
                    (),
                    f"{what} an array of dtype {array.dtype}; expected {want.dtype}",
                    "keep the input's precision: no astype or dtype= conversions"
                    if both_float
                    else f"return {want.dtype} values",
                )
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
        hints = [h for s, h in (*self.error_hints, *_ERROR_HINTS) if s in str(err)]
        if isinstance(err, TypeError) and "argument" in str(err):
            hints.append(f"keep the signature of the exercise: {self.signature}")
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
        failing: _Run,
        fallback: str,
        max_error: float | None = None,
    ) -> CheckResult:
        """A failure, with the planted mistake that best explains the learner's output."""
        best, best_score = None, (False, 0)
        for i, mistake in enumerate(self.mistakes):
            explains_failing, explained, agreements = False, 0, 0
            for run, planted in zip(runs, self._mistake_outputs(i), strict=True):
                if planted is None or len(planted) != len(run.outputs):
                    continue
                for got, want, out in zip(run.outputs, run.expected, planted, strict=True):
                    if self._close(got, out):
                        agreements += 1
                        if not self._close(got, want):  # wrong in the same way
                            explained += 1
                            explains_failing |= run is failing
            score = (explains_failing, agreements)
            if explained and score > best_score:
                best, best_score = mistake, score
        if best is None:
            return self._result(status, message, fallback, max_error)
        return self._result(status, message, best.diagnosis, max_error, diagnosed=True)


_ERROR_HINTS = (
    (
        "broadcast",
        "the shapes did not line up: a reduction (max, sum) needs keepdims=True to "
        "broadcast back against its input",
    ),
    (
        "not aligned",
        "np.dot and @ multiply matrices; for vectors stored in rows, multiply elementwise "
        "and sum over the last axis",
    ),
    (
        "mismatch in its core dimension",
        "@ multiplies matrices: check the shapes (and transpose the right operand)",
    ),
)


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
        Path(__file__).resolve().parent,
        Path(sysconfig.get_paths()["stdlib"]).resolve(),
        Path(sysconfig.get_paths()["purelib"]).resolve(),
        Path(sysconfig.get_paths()["platlib"]).resolve(),
    }
)


def _where(err: Exception) -> str | None:
    """``'softmax, line 3: return e / e.sum()'``: the innermost frame in the learner's code."""
    for frame in reversed(traceback.extract_tb(err.__traceback__)):
        path = str(Path(frame.filename).resolve()) if frame.filename else ""
        if path.startswith(_LIBRARY_DIRS) or "-packages" in path:
            continue
        line = f": {frame.line.strip()}" if frame.line else ""
        return f"{frame.name}, line {frame.lineno}{line}"
    return None


GRADERS: dict[str, Grader] = {}
"""Every grader by exercise name."""


def _register(grader: Grader) -> Grader:
    GRADERS[grader.name] = grader
    return grader


# --------------------------------------------------------------------------- chapter 2


def _rng() -> np.random.Generator:
    return np.random.default_rng(2)


_BATCHED_VECTOR_HINTS = (
    (
        "mismatch in its core dimension",
        "@ and np.dot multiply matrices; for vectors stored along the last axis, multiply "
        "elementwise and sum over that axis: np.sum(a * b, axis=-1)",
    ),
    (
        "not aligned",
        "@ and np.dot multiply matrices; for vectors stored along the last axis, multiply "
        "elementwise and sum over that axis: np.sum(a * b, axis=-1)",
    ),
)


def _dot_cases() -> tuple[Case, ...]:
    rng = _rng()
    shapes = {"two vectors": (5,), "rows of a matrix": (3, 5), "a batch": (2, 3, 4)}
    cases = [
        Case(label, {"a": rng.standard_normal(s), "b": rng.standard_normal(s)})
        for label, s in shapes.items()
    ]
    cases.append(Case("size-1 vectors", {"a": rng.standard_normal((4, 1)), "b": np.ones((4, 1))}))
    cases.append(
        Case(
            "very different lengths",
            {"a": 1e3 * rng.standard_normal((4, 6)), "b": 1e-2 * rng.standard_normal((4, 6))},
        )
    )
    return tuple(cases)


DOT = _register(
    Grader(
        name="dot",
        signature="dot(a, b) with a, b: (..., d) -> (...)",
        reference=dot,
        cases=_dot_cases(),
        mistakes=(
            Mistake(
                "you multiplied elementwise but did not sum: add up a * b over the last axis "
                "(np.sum(a * b, axis=-1))",
                lambda a, b: a * b,
            ),
            Mistake(
                "you summed over the first axis; the vector entries are on the last axis: axis=-1",
                lambda a, b: np.sum(a * b, axis=0),
            ),
            Mistake(
                "you summed over every axis (one number for the whole batch); sum over the "
                "last axis only: axis=-1",
                lambda a, b: np.sum(a * b),
            ),
            Mistake(
                "you summed a + b; the dot product sums the products a * b",
                lambda a, b: np.sum(a + b, axis=-1),
            ),
        ),
        hint="the dot product multiplies matching entries and sums them: Σ_i a_i b_i, "
        "over the last axis",
        error_hints=_BATCHED_VECTOR_HINTS,
    )
)


def check_dot(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(a, b)``: the dot product along the last axis, ``(..., d), (..., d) -> (...)``.

    Taught in: chapters/02_similarity.ipynb (exercise in exercises/02_similarity.ipynb)
    """
    return DOT.check(fn)


def _norm(x: np.ndarray) -> np.ndarray:
    return np.sqrt(np.sum(x * x, axis=-1))


def _cosine_cases() -> tuple[Case, ...]:
    rng = _rng()
    shapes = {"two vectors": (5,), "rows of a matrix": (3, 5), "a batch": (2, 3, 4)}
    cases = [
        Case(label, {"a": rng.standard_normal(s), "b": rng.standard_normal(s)})
        for label, s in shapes.items()
    ]
    a = rng.standard_normal((4, 6))
    cases.append(
        Case(
            "very different lengths",
            {"a": 1e3 * a, "b": 1e-2 * rng.standard_normal((4, 6))},
        )
    )
    b = np.concatenate([3.0 * a[:2], -0.5 * a[2:]])  # rows 0, 1 parallel; rows 2, 3 opposite
    cases.append(Case("parallel and opposite vectors", {"a": a, "b": b}))
    return tuple(cases)


COSINE = _register(
    Grader(
        name="cosine_similarity",
        signature="cosine_similarity(a, b) with a, b: (..., d) -> (...)",
        reference=cosine_similarity,
        cases=_cosine_cases(),
        mistakes=(
            Mistake(
                "you divided by the length of `a` only; normalise both sides: a·b / (|a| |b|)",
                lambda a, b: np.sum(a * b, axis=-1) / _norm(a),
            ),
            Mistake(
                "you divided by the length of `b` only; normalise both sides: a·b / (|a| |b|)",
                lambda a, b: np.sum(a * b, axis=-1) / _norm(b),
            ),
            Mistake(
                "you returned the dot product: divide it by both lengths, |a| |b|",
                lambda a, b: np.sum(a * b, axis=-1),
            ),
            Mistake(
                "you divided by the squared lengths: the length is the square root of the "
                "sum of squares, |a| = sqrt(Σ a_i²)",
                lambda a, b: np.sum(a * b, axis=-1) / (np.sum(a * a, -1) * np.sum(b * b, -1)),
            ),
            Mistake(
                "you took the norm of the whole array; each vector needs its own length: "
                "np.linalg.norm(a, axis=-1)",
                lambda a, b: np.sum(a * b, axis=-1) / (np.linalg.norm(a) * np.linalg.norm(b)),
            ),
            Mistake(
                "you divided by |a| twice; the denominator is |a| |b|",
                lambda a, b: np.sum(a * b, axis=-1) / _norm(a) ** 2,
            ),
            Mistake(
                "you added the lengths; multiply them: a·b / (|a| |b|)",
                lambda a, b: np.sum(a * b, axis=-1) / (_norm(a) + _norm(b)),
            ),
        ),
        error_hints=_BATCHED_VECTOR_HINTS,
        hint="cos = a·b / (|a| |b|): the dot product over the last axis, divided by the "
        "product of the two lengths; the result lies in [-1, 1]",
    )
)


def check_cosine_similarity(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(a, b)``: cosine similarity along the last axis, ``(..., d), (..., d) -> (...)``.

    Taught in: chapters/02_similarity.ipynb (exercise in exercises/02_similarity.ipynb)
    """
    return COSINE.check(fn)


def _softmax_reference(x: Any, axis: int = -1, temperature: float = 1.0) -> Any:
    return softmax(x, axis, temperature=temperature)


def _exp_over(z: np.ndarray, axis: int) -> np.ndarray:
    """``exp(z - max)`` along ``axis``: the stable numerator, shared by planted mistakes."""
    return np.exp(z - np.max(z, axis=axis, keepdims=True))


def _softmax_cases() -> tuple[Case, ...]:
    rng = _rng()

    def logits(*shape: int) -> np.ndarray:
        return 2.0 * rng.standard_normal(shape)

    return (
        Case("a vector", {"x": logits(5)}),
        Case("rows of a matrix", {"x": logits(3, 6)}),
        Case("a square matrix", {"x": logits(4, 4)}),
        Case("a batch", {"x": logits(2, 3, 4)}),
        Case("columns", {"x": logits(4, 3)}, {"axis": 0}),
        Case("the middle axis of a batch", {"x": logits(2, 3, 4)}, {"axis": 1}),
        Case("a low temperature", {"x": logits(3, 5)}, {"temperature": 0.5}),
        Case("a high temperature", {"x": logits(2, 6)}, {"temperature": 10.0}),
        Case("a very low temperature", {"x": logits(3, 4)}, {"axis": 0, "temperature": 0.1}),
        Case("logits of 1000", {"x": 1000.0 + logits(2, 4)}),
        Case("logits of -1000", {"x": -1000.0 + logits(2, 4)}),
        Case("rows of 1000 and -1000", {"x": np.array([[1000.0], [-1000.0]]) + logits(2, 4)}),
    )


SOFTMAX = _register(
    Grader(
        name="softmax",
        signature="softmax(x, axis=-1, temperature=1.0) -> weights, the shape of x",
        reference=_softmax_reference,
        cases=_softmax_cases(),
        mistakes=(
            Mistake(
                "overflowed at logits of 1000: subtract the max before exp (e^1000 = inf and "
                "inf/inf = NaN; at -1000, 0/0). softmax(x) = softmax(x - max(x)): the max "
                "cancels in the ratio",
                lambda x, axis=-1, temperature=1.0: (
                    np.exp(x / temperature)
                    / np.sum(np.exp(x / temperature), axis=axis, keepdims=True)
                ),
            ),
            Mistake(
                "you subtracted one max for the whole array, so slices far below it underflow "
                "to 0/0: take the max along `axis`, with keepdims=True",
                lambda x, axis=-1, temperature=1.0: (
                    np.exp(x / temperature - np.max(x / temperature))
                    / np.sum(np.exp(x / temperature - np.max(x / temperature)), axis, keepdims=True)
                ),
            ),
            Mistake(
                "you ignored the `axis` argument (always the last axis): pass axis=axis to "
                "max and sum",
                lambda x, axis=-1, temperature=1.0: softmax(x, -1, temperature=temperature),
            ),
            Mistake(
                "softmax over the wrong axis: you normalised along axis 0; the slices that sum "
                "to 1 run along `axis` (by default the last one, -1)",
                lambda x, axis=-1, temperature=1.0: softmax(x, 0, temperature=temperature),
            ),
            Mistake(
                "you divided by the sum over the whole array; sum along `axis` only "
                "(keepdims=True), so that each slice sums to 1",
                lambda x, axis=-1, temperature=1.0: (
                    _exp_over(x / temperature, axis) / np.sum(_exp_over(x / temperature, axis))
                ),
            ),
            Mistake(
                "you multiplied the logits by the temperature; divide them by it "
                "(x / temperature), so that a high temperature flattens the weights",
                lambda x, axis=-1, temperature=1.0: softmax(x * temperature, axis),
            ),
            Mistake(
                "the temperature had no effect: divide the logits by it before exp",
                lambda x, axis=-1, temperature=1.0: softmax(x, axis),
            ),
            Mistake(
                "you forgot to normalise: divide exp(...) by its sum along `axis` so that "
                "each slice sums to 1",
                lambda x, axis=-1, temperature=1.0: _exp_over(x / temperature, axis),
            ),
        ),
        hint="softmax(x)_i = exp(x_i/τ - m) / Σ_j exp(x_j/τ - m), with m the max of x/τ "
        "along `axis`; the output has the shape of x and sums to 1 along `axis`",
    )
)


def check_softmax(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, axis=-1, temperature=1.0)``: a numerically stable softmax with temperature.

    The output has the shape of ``x``, is non-negative and sums to 1 along ``axis``; logits
    of ±1000 must not overflow. Cases use the defaults, ``axis=0``/``axis=1`` and
    temperatures from 0.1 to 10 (always given as keywords).

    Taught in: chapters/02_similarity.ipynb (exercise in exercises/02_similarity.ipynb)
    """
    return SOFTMAX.check(fn)


def _self_attention_reference(x: Any) -> tuple[Any, Any]:
    return scaled_dot_product_attention(x, x, x)


def _scaled_scores(x: np.ndarray, divide_by: float | None = None) -> np.ndarray:
    """``x xᵀ / sqrt(D)`` (or divided by a planted wrong scale)."""
    scale = math.sqrt(x.shape[-1]) if divide_by is None else divide_by
    return x @ x.T / scale  # (T, D) @ (D, T) -> (T, T)


def _attend(
    x: np.ndarray, divide_by: float | None = None, axis: int = -1
) -> tuple[np.ndarray, np.ndarray]:
    """``(out, weights)`` of weightless self-attention, with a planted scale or axis."""
    weights = softmax(_scaled_scores(x, divide_by), axis)  # (T, T)
    return weights @ x, weights  # (T, T) @ (T, D) -> (T, D)


def _attend_unstable(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Planted: a softmax without the max subtraction (overflows on large entries)."""
    e = np.exp(_scaled_scores(x))  # (T, T)
    weights = e / np.sum(e, axis=-1, keepdims=True)
    return weights @ x, weights


def _attend_whole(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Planted: the weights normalised over the whole (T, T) matrix, not per row."""
    e = _exp_over(_scaled_scores(x), -1)  # (T, T)
    weights = e / np.sum(e)
    return weights @ x, weights


def _self_attention_cases() -> tuple[Case, ...]:
    rng = _rng()
    return (
        Case("4 tokens of size 3", {"x": rng.standard_normal((4, 3))}),
        Case("6 tokens of size 8", {"x": rng.standard_normal((6, 8))}),
        Case("5 tokens of size 5", {"x": rng.standard_normal((5, 5))}),
        Case("one token", {"x": rng.standard_normal((1, 4))}),
        Case("large entries", {"x": 30.0 * rng.standard_normal((3, 4))}),
    )


SELF_ATTENTION = _register(
    Grader(
        name="self_attention",
        signature="self_attention(x) with x: (T, D) -> (out (T, D), weights (T, T))",
        reference=_self_attention_reference,
        cases=_self_attention_cases(),
        outputs=("out", "weights"),
        mistakes=(
            Mistake(
                "you forgot to scale: divide the scores x xᵀ by sqrt(D) before the softmax",
                lambda x: _attend(x, divide_by=1.0),
            ),
            Mistake(
                "you divided the scores by D; divide by sqrt(D), the square root of the "
                "vector size",
                lambda x: _attend(x, divide_by=x.shape[-1]),
            ),
            Mistake(
                "you multiplied the scores by sqrt(D); divide by it",
                lambda x: _attend(x, divide_by=1.0 / math.sqrt(x.shape[-1])),
            ),
            Mistake(
                "you divided by sqrt(T), the number of tokens; the scale is sqrt(D), the size "
                "of each vector (x.shape[-1])",
                lambda x: _attend(x, divide_by=math.sqrt(x.shape[0])),
            ),
            Mistake(
                "softmax over the wrong axis: each ROW of the weights (one query) must sum to "
                "1, so take the softmax along axis=-1, not over columns",
                lambda x: _attend(x, axis=0),
            ),
            Mistake(
                "overflowed on large entries: your softmax does not subtract the row max "
                "before exp (reuse your stable softmax)",
                _attend_unstable,
            ),
            Mistake(
                "you normalised over the whole matrix; each row of the weights sums to 1 "
                "(softmax along axis=-1)",
                _attend_whole,
            ),
            Mistake(
                "you returned the scores (before the softmax) as `weights`; return the "
                "weights, softmax(scores)",
                lambda x: (_attend(x)[0], _scaled_scores(x)),
            ),
            Mistake(
                "you averaged with the scores; `out` = weights @ x, with the softmax weights",
                lambda x: (_scaled_scores(x) @ x, _attend(x)[1]),
            ),
            Mistake(
                "you used the transposed weights; `out` = weights @ x: row i of out mixes the "
                "rows of x with the weights of query i",
                lambda x: (_attend(x)[1].T @ x, _attend(x)[1]),
            ),
            Mistake(
                "you averaged the scores, not the vectors: `out` = weights @ x",
                lambda x: (_attend(x)[1] @ _scaled_scores(x), _attend(x)[1]),
            ),
            Mistake(
                "you returned x unchanged as `out`; `out` = weights @ x, a weighted average "
                "of the rows of x",
                lambda x: (x, _attend(x)[1]),
            ),
            Mistake(
                "you returned (weights, out); the order is (out, weights)",
                lambda x: _attend(x)[::-1],
            ),
        ),
        hint="scores = x xᵀ / sqrt(D) is (T, T); weights = softmax(scores) along each row; "
        "out = weights @ x is (T, D); return (out, weights)",
    )
)


def check_self_attention(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x)``: weightless self-attention, ``x: (T, D) -> (out (T, D), weights (T, T))``.

    ``weights = softmax(x xᵀ / sqrt(D))`` row by row and ``out = weights @ x``: every token
    becomes a weighted average of all tokens (the queries, keys and values are x itself).

    Taught in: chapters/02_similarity.ipynb (exercise in exercises/02_similarity.ipynb)
    """
    return SELF_ATTENTION.check(fn)
