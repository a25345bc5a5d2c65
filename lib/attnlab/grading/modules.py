"""Module exercises: grading a learner's ``nn.Module`` class with a function :class:`Grader`.

A :class:`~.pipeline.Grader` checks a *function* of a case's inputs. For an exercise that
asks for a class, write that function once, taking the class first, and let this module
adapt the learner's class to it::

    def _run(cls, x, W_q, W_k, W_v, mask=None):     # one case, for any class
        layer = cls(d_model, d_head).double()       # build it, copy the weights in
        ...
        out, weights = layer(x, mask)                # run it (and backpropagate)
        return out.detach(), weights.detach(), grads...

    LAYER = GRADERS.add(Grader(
        name="self_attention_module",
        reference=adapt(_run, SelfAttention),        # the lib's class
        mistakes=(Mistake("...", adapt(_run, PlantedClass)), ...),
        cases=..., outputs=("out", "weights", ...), ...))

    def check_self_attention_module(cls):
        return check_class(LAYER, cls, _run, example="check_self_attention_module(SelfAttention)")

:func:`adapt` turns ``(run, learner)`` into the function the grader calls: a
``NotImplementedError`` raised by the learner's stub itself (its ``__init__`` or
``forward``) reads as "not attempted", one raised deeper (by another unfinished exercise the
class calls) as an exception naming that exercise. :func:`check_class` first makes sure the
learner passed a class (not an instance, not ``None``), optionally inspects it
(``inspect``: e.g. "the table must be a buffer"), then grades it with the grader. When the
exercise object registered in the chapter must carry the inspection too, register a
:class:`ModuleExercise` instead of the bare grader. An exercise that asks for a function of
an object the grader builds (``load_into_torch(ours, theirs)``, ``greedy_decode(model,
...)``) is graded by :func:`check_function` in the same way.

Taught in: every chapter's exercises (first in exercises/03_qkv.ipynb)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from inspect import unwrap
from typing import Any

import torch
from torch import nn

from .forensics import error_hints, where
from .pipeline import Grader
from .results import CheckResult, graded, make_result
from .status import EXCEPTION, NOT_ATTEMPTED, WRONG_TYPE

__all__ = [
    "Finding",
    "ModuleExercise",
    "adapt",
    "building_error",
    "check_class",
    "check_function",
    "memoised",
    "seed_cpu",
    "stub_raised",
]

STUB_METHODS = ("__init__", "forward")
"""The methods of a learner's class whose own ``NotImplementedError`` means "not attempted"."""


@dataclass(frozen=True)
class Finding:
    """What an inspection of the learner's class found: a status, a message, a diagnosis."""

    status: str
    message: str
    diagnosis: str | None = None


def _stub_codes(learner: Any, methods: Iterable[str]) -> set[Any]:
    if isinstance(learner, type):
        owners = [getattr(learner, m, None) for m in methods]
    else:
        owners = [learner]
    # A decorated stub (``@torch.no_grad()``) raises in the function it wraps.
    return {getattr(unwrap(o), "__code__", None) for o in owners if callable(o)} - {None}


def stub_raised(err: BaseException, learner: Any, methods: Iterable[str] = STUB_METHODS) -> bool:
    """Was ``err`` raised directly by ``learner`` (a function, or one of a class's methods)?"""
    tb, last = err.__traceback__, None
    while tb is not None:
        last, tb = tb.tb_frame.f_code, tb.tb_next
    return last is not None and last in _stub_codes(learner, methods)


def adapt(
    run: Callable[..., Any], learner: Any, methods: Iterable[str] = STUB_METHODS
) -> Callable[..., Any]:
    """``run(learner, *inputs)`` as a function of a case's inputs, for a :class:`Grader`.

    Args:
        run: ``run(learner, *inputs, **options)``: builds and runs ``learner`` on one case
            and returns the outputs the grader compares.
        learner: the class under test (the learner's, the lib's or a planted one), or a
            function (e.g. a learner's ``load_into_torch(ours, theirs)``).
        methods: for a class, the methods whose own ``NotImplementedError`` is a stub.

    Returns:
        ``case(*inputs, **options)``. A stub's ``NotImplementedError`` is raised again from
        this function itself, so the grader reports "not attempted"; any other error passes
        through unchanged.
    """
    methods = tuple(methods)

    def case(*args: Any, **kwargs: Any) -> Any:
        try:
            return run(learner, *args, **kwargs)
        except NotImplementedError as err:
            if stub_raised(err, learner, methods):
                raise NotImplementedError(*err.args) from None
            raise

    case.__learner__ = learner  # type: ignore[attr-defined]  # read by the grader's diagnoses
    return case


def seed_cpu(seed: int) -> None:
    """Seed the CPU generator that the graders' layers draw their weights from.

    The same weights as ``torch.manual_seed(seed)`` for a layer built on the CPU, where
    the graders build theirs. Not ``torch.manual_seed`` itself: it also queues a seed for
    every accelerator PyTorch knows (CUDA, XPU, MPS), each recording the Python stack in
    case that device starts later; deep inside pytest and a grader that is about 10 ms a
    call, and the graders seed a layer per case (8,500 times in chapter 4's generated
    mistakes, 40% of that test's time).
    """
    torch.default_generator.manual_seed(seed)


def memoised(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` computed once per distinct input: for a module exercise's reference and planted
    mistakes.

    They are deterministic (seeded layers), and a failing check runs every planted mistake
    on every case: later failing checks (and the tests) reuse their outputs. Inputs are
    compared by value (a tensor by its shape, dtype and bytes); the outputs, a tensor or a
    tuple of them, come back as fresh clones. An exception is not remembered.
    """
    cache: dict[tuple[Any, ...], Any] = {}

    def key(a: Any) -> Any:
        if isinstance(a, torch.Tensor):
            return (tuple(a.shape), str(a.dtype), a.detach().cpu().numpy().tobytes())
        return a

    def clone(value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            return value.clone()
        if isinstance(value, tuple):
            return tuple(clone(v) for v in value)
        return value

    def memo(*args: Any, **kwargs: Any) -> Any:
        k = (tuple(key(a) for a in args), tuple(sorted((n, key(v)) for n, v in kwargs.items())))
        if k not in cache:
            cache[k] = fn(*args, **kwargs)
        return clone(cache[k])

    memo.__name__ = getattr(fn, "__name__", "memoised")
    if hasattr(fn, "__learner__"):
        memo.__learner__ = fn.__learner__  # type: ignore[attr-defined]
    return memo


def check_class(
    grader: Grader,
    cls: Any,
    run: Callable[..., Any],
    *,
    example: str,
    inspect: Callable[[type], Finding | None] | None = None,
    not_attempted: str | None = None,
) -> CheckResult:
    """Grade the learner's ``nn.Module`` class ``cls``; record the result and return it.

    Args:
        grader: the exercise's grader; its reference and mistakes are ``adapt(run, ...)``.
        cls: what the learner passed: it must be a subclass of ``torch.nn.Module``.
        run: ``run(cls, *inputs)``, as given to :func:`adapt`.
        example: the right call, shown when ``cls`` is not a class, e.g.
            ``"check_multihead_attention(MyMultiHeadAttention)"``.
        inspect: optional ``inspect(cls) -> Finding | None``, run before the values are
            graded (a ``NotImplementedError`` from it is "not attempted").
        not_attempted: the message for a stub, if not the grader's.

    Returns:
        The :class:`~.results.CheckResult`. Never raises.
    """
    return graded(
        grader.name,
        lambda c: _check(grader, c, run, example, inspect, not_attempted),
        cls,
    )


def _check(
    grader: Grader,
    cls: Any,
    run: Callable[..., Any],
    example: str,
    inspect: Callable[[type], Finding | None] | None,
    not_attempted: str | None,
) -> CheckResult:
    if not (isinstance(cls, type) and issubclass(cls, nn.Module)):
        shown = cls.__name__ if isinstance(cls, type) else type(cls).__name__
        return make_result(
            grader.name,
            WRONG_TYPE,
            f"expected your class (a subclass of torch.nn.Module), got {shown}",
            f"pass the class itself, not an instance: {example}, without building it",
            diagnosed=True,
        )
    if inspect is not None:
        try:
            finding = inspect(cls)
        except NotImplementedError:
            finding = Finding(NOT_ATTEMPTED, not_attempted or "not attempted yet")
        if finding is not None:
            return make_result(
                grader.name,
                finding.status,
                finding.message,
                finding.diagnosis,
                diagnosed=finding.diagnosis is not None,
            )
    result = grader.check(adapt(run, cls))
    if result.status == NOT_ATTEMPTED and not_attempted:
        result = dataclasses.replace(result, message=not_attempted)
    return result


def check_function(grader: Grader, fn: Any, run: Callable[..., Any]) -> CheckResult:
    """Grade the learner's function ``fn`` of objects ``run`` builds; record and return it.

    Args:
        grader: the exercise's grader; its reference and mistakes are ``adapt(run, ...)``.
        fn: what the learner passed; a non-callable is reported by the grader as such.
        run: ``run(fn, *inputs)``, as given to :func:`adapt` (it builds the model or
            layers of a case and calls ``fn`` on them).

    Returns:
        The :class:`~.results.CheckResult`. Never raises.
    """
    return grader.check(adapt(run, fn) if callable(fn) else fn)


def building_error(err: BaseException, call: str, signature: str) -> Finding:
    """The finding for a class that fails to build: the error, its line, the signature."""
    at = where(err)
    return Finding(
        EXCEPTION,
        f"raised {type(err).__name__}: {err} when building the layer with {call}"
        + (f"\n  at {at}" if at else ""),
        _building_diagnosis(str(err))
        or next(iter(error_hints(str(err))), None)
        or f"keep the signature: {signature}",
    )


def _building_diagnosis(message: str) -> str | None:
    """A diagnosis for a layer that fails to build for a known reason other than its signature."""
    if "before Module.__init__() call" in message:
        return (
            "call super().__init__() first, before any self.… assignment or "
            "register_buffer: nn.Module sets up its stores of parameters, buffers and "
            "submodules there"
        )
    if "cannot assign" in message and "to buffer" in message and "numpy" in message:
        return (
            "register_buffer takes a torch tensor, not a NumPy array: convert the table "
            "first (torch.from_numpy(table) or torch.tensor(table))"
        )
    if "cannot assign" in message and "parameter" in message and "numpy" in message:
        return (
            "a parameter holds a torch tensor, not a NumPy array: convert it first "
            "(torch.from_numpy(array))"
        )
    return None


@dataclass(frozen=True)
class ModuleExercise:
    """A registered module exercise: a grader of values plus the checks of the class itself.

    Register it when the chapter's exercise object must inspect the class before grading
    its values (``GRADERS.add(ModuleExercise(...))``); its :meth:`check` is
    :func:`check_class` with these arguments.
    """

    values: Grader
    run: Callable[..., Any]
    example: str
    inspect: Callable[[type], Finding | None] | None = None
    not_attempted: str | None = None

    @property
    def name(self) -> str:
        """The exercise's name: its grader's."""
        return self.values.name

    def check(self, cls: Any) -> CheckResult:
        """Grade the class ``cls``, record the result, and return it. Never raises."""
        return check_class(
            self.values,
            cls,
            self.run,
            example=self.example,
            inspect=self.inspect,
            not_attempted=self.not_attempted,
        )
