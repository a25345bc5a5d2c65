"""Mistakes generated from the worked solution: its answer, changed one way at a time.

A learner's wrong answer is usually the right one with one thing changed: an axis, a
transpose, a scale, a bound, a fill value, a sign, an argument, a step left out. This
module makes those changes mechanically, on the abstract syntax tree of the worked
solution's answer lines (the lines between ``### BEGIN SOLUTION`` and ``### END SOLUTION``
of ``solutions/NN_*.ipynb``, see :mod:`.worked`), and says what each one means in the
learner's terms. A :class:`~.pipeline.Grader` runs every mutant on its cases when a
learner's answer fails, and names the mutant that gives exactly the learner's outputs (or
raises the learner's exception); the tests check that every mutant is told apart from
the right answer by some case, or is recorded as equivalent, and gets a diagnosis.

The operators (:data:`KINDS`), each applied at every place it fits:

- ``axis``: another axis for every reduction, softmax, concatenation, stack or flip; the
  axis dropped (a reduction over everything); ``keepdims`` dropped;
- ``transpose``: a transpose dropped, ``.T`` for a swap of the last two axes;
- ``swap``: the two operands of ``-``, ``/``, ``@``, ``**``, ``//`` swapped; two arguments
  of a call swapped; the branches of ``a if c else b`` swapped;
- ``input``: one use of an input replaced by another input (keys for values, ...);
- ``scale``: a divisor or scale factor dropped, ``/`` and ``*`` exchanged, ``sqrt(d)`` ->
  ``d``, ``/ e`` -> ``/ sqrt(e)``;
- ``size``: ``x.shape[i]`` read on another axis;
- ``offset``: off by one in every ``range``, integer constant, comparison, index and slice;
- ``fill``: each fill value (``-inf``, ``-1e9``, ``-1e4``, ``0``, ``finfo.min``) for another;
- ``sign``: a minus dropped, ``+`` and ``-`` exchanged;
- ``inplace``: ``z = x op y`` on an input done in place (``x op= y``);
- ``dtype``: ``dtype=`` dropped, ``x.new_zeros`` -> ``torch.zeros``, a float32 result;
- ``library``: a NumPy function for torch's (or the other way round), a result computed
  through NumPy;
- ``drop``: a function around an expression left out (``tanh``, ``sqrt``, ``softmax``,
  ...), ``tanh`` for ``sigmoid``/``relu``, a term of a sum left out, a step left out;
- ``return``: the outputs in the other order, or only the first;
- ``product``: ``@`` and ``*`` exchanged;
- ``constant`` (:func:`hard_coded`): a size read from the inputs replaced by the number it
  had on the first case.

Taught in: every chapter's exercises (first in exercises/01_why_attention.ipynb)
"""

from __future__ import annotations

import ast
import functools
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .worked import answer_lines

__all__ = ["KINDS", "LoopLimit", "Mutant", "build", "generate", "hard_coded"]

KINDS = (
    "axis",
    "transpose",
    "swap",
    "input",
    "scale",
    "size",
    "offset",
    "fill",
    "sign",
    "inplace",
    "dtype",
    "library",
    "drop",
    "return",
    "product",
    "constant",
)

LOOP_LIMIT = 100_000
"""Iterations of ``while`` loops a mutant may run per call before it is stopped."""


class LoopLimit(RuntimeError):
    """A mutant's ``while`` loop ran :data:`LOOP_LIMIT` times: it would never stop."""


@dataclass(frozen=True)
class Mutant:
    """One generated mistake.

    Attributes:
        key: a stable name, ``"axis: z.max(axis=axis, keepdims=True) -> z.max(axis=0, ...)"``
            (what changed, before and after; ``" (2)"`` and on for a repeated change).
        kind: the operator's family, one of :data:`KINDS`.
        description: what the mistake is, in the learner's terms (a diagnosis).
        source: the changed definition, as Python source (``while`` loops guarded).
        unlikely: how unlikely a learner is to make it (0 for most; 1 for one input used
            for another, 2 for two arguments of a call swapped): when two mutants explain a
            learner's answer equally well, the likelier one names it.
        whole: named only when it gives the learner's outcome on every case, never from
            a partial match (a swap of `where`'s values: a partial match is a coincidence
            of zeros, and the advice to swap them would fix nothing).
    """

    key: str
    kind: str
    description: str
    source: str
    unlikely: int = 0
    whole: bool = False


@dataclass(frozen=True)
class _Variant:
    kind: str
    description: str
    new: Any  # an expression, a list of statements, or None (delete the statement)
    unlikely: int = 0
    whole: bool = False


# ------------------------------------------------------------------ names and fragments

_MODULES = {"np", "numpy", "torch", "math", "F", "nn", "functional"}
_REDUCTIONS = {
    "sum", "mean", "max", "min", "amax", "amin", "std", "var", "prod", "any", "all",
    "norm", "vector_norm", "logsumexp", "argmax", "argmin", "cumsum", "count_nonzero",
}  # fmt: skip
_NORMALISERS = {"softmax", "log_softmax"}
_JOINERS = {"cat", "concatenate", "concat", "stack", "hstack", "vstack"}
_REORDERS = {"flip", "roll", "squeeze", "unsqueeze", "expand_dims", "repeat_interleave"}
_FLATTENING = {"repeat_interleave", "roll"}  # without an axis: along the flattened array
_TRANSPOSES = {"swapaxes", "transpose", "swapdims", "movedim", "moveaxis"}
_WRAPPERS = {
    "tanh", "sigmoid", "relu", "exp", "log", "sqrt", "abs", "softmax", "log_softmax",
    "nan_to_num", "flip", "float", "double", "clip", "clamp", "clamp_min",
}  # fmt: skip
_ACTIVATIONS = {"tanh": ("sigmoid", "relu"), "sigmoid": ("tanh",), "relu": ("tanh",)}
_NUMPY_TWINS = {"tanh", "exp", "log", "sqrt", "abs", "stack", "zeros", "ones", "where"}
_AXIS_WORDS = {"axis", "dim"}
_MAXIMA = {"max", "amax", "maximum", "logsumexp"}
_KEEP_WORDS = {"keepdims", "keepdim"}


def _name(func: ast.expr) -> str:
    """``"max"`` for ``np.max``, ``z.max`` or ``max``."""
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def _is_method(call: ast.Call) -> bool:
    """``z.max(...)`` (a method of an array), not ``np.max(...)`` (a module's function)."""
    func = call.func
    return isinstance(func, ast.Attribute) and not (
        isinstance(func.value, ast.Name) and func.value.id in _MODULES
    )


def _numbered(key: str, counts: dict[str, int]) -> str:
    """``key``, or ``key (n)`` when it is the n-th mutant so named (counted in ``counts``)."""
    counts[key] = counts.get(key, 0) + 1
    return key if counts[key] == 1 else f"{key} ({counts[key]})"


def _code(node: ast.AST, limit: int = 48) -> str:
    """The node as Python, shortened to ``limit`` characters."""
    text = ast.unparse(node)
    if len(text) <= limit:
        return text
    return text[: limit - 1].rstrip(". ,") + "…"  # no "..…" when "..." is cut


def _int(node: ast.AST) -> int | None:
    """The value of an integer literal (``3``, ``-1``), else ``None``."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return None


def _literal(value: Any) -> ast.expr:
    if isinstance(value, (int, float)) and value < 0:
        return ast.UnaryOp(ast.USub(), ast.Constant(-value))
    return ast.Constant(value)


def _parse_expr(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


def _axis_words(value: int) -> str:
    return {-1: "the last axis", -2: "the second-to-last axis", 0: "axis 0", 1: "axis 1"}.get(
        value, f"axis {value}"
    )


# ------------------------------------------------------------------ operators


@dataclass
class _Context:
    params: tuple[str, ...]  # the inputs a learner's function receives (no defaults)
    optional: tuple[str, ...]  # its inputs with a default (``mask=None``)
    attributes: tuple[str, ...]  # ``self.x`` set in ``__init__`` (a class's layers)
    torch_code: bool  # does the answer use torch
    numpy_code: bool  # does it use NumPy
    parents: dict[int, ast.AST]
    maxima: frozenset[str] = frozenset()  # names assigned from a max (``top = np.max(...)``)


def _where(node: ast.AST, ctx: _Context) -> str:
    """``" (in the line that computes `scores`)"``: where in the answer ``node`` sits."""
    while not isinstance(node, ast.stmt) and id(node) in ctx.parents:
        node = ctx.parents[id(node)]
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        names = [target] if not isinstance(target, ast.Tuple) else target.elts
        shown = ", ".join(_code(n, 20) for n in names)
        return f" (in the line that computes `{shown}`)"
    if isinstance(node, ast.AugAssign):
        return f" (in the update of `{_code(node.target, 20)}`)"
    if isinstance(node, ast.Return):
        return " (in the returned value)"
    return ""


def _short(node: ast.AST) -> bool:
    """Short enough to quote without quoting a line of the answer."""
    return len(ast.unparse(node)) <= 24 and not any(
        isinstance(n, (ast.BinOp, ast.Compare)) for n in ast.walk(node)
    )


def _calling(node: ast.Call, other: str) -> ast.Call:
    """A copy of the call ``node`` that calls ``other`` (``np.zeros(...)`` -> ``np.ones(...)``)."""
    new = _clone(node)
    if isinstance(new.func, ast.Attribute):
        new.func.attr = other
    else:
        new.func.id = other  # type: ignore[attr-defined]
    return new


def _axis_ops(node: ast.AST, ctx: _Context) -> Iterator[_Variant]:
    if not isinstance(node, ast.Call):
        return
    name = _name(node.func)
    if name in _TRANSPOSES:
        yield from _transpose_call(node, name)
        return
    if name not in _REDUCTIONS | _NORMALISERS | _JOINERS | _REORDERS:
        return
    what = f"`{name}`"
    # the axis, given by keyword or by position
    where: tuple[str, int | str] | None = None
    for i, kw in enumerate(node.keywords):
        if kw.arg in _AXIS_WORDS:
            where = ("kw", i)
    if where is None:
        position = 0 if _is_method(node) else 1
        if len(node.args) > position and (
            _int(node.args[position]) is not None or isinstance(node.args[position], ast.Name)
        ):
            where = ("arg", position)
    if where is not None:
        kind, i = where
        value = node.keywords[i].value if kind == "kw" else node.args[i]  # type: ignore[index]
        current = _int(value)
        candidates = [-1, -2, 0, 1] if current is not None else [-1, 0]
        for other in candidates:
            if other == current:
                continue
            new = _clone(node)
            if kind == "kw":
                new.keywords[i].value = _literal(other)  # type: ignore[index]
            else:
                new.args[i] = _literal(other)  # type: ignore[index]
            if current is None:
                text = (
                    f"your {what} ignores the `{ast.unparse(value)}` it is given: it always "
                    f"works along {_axis_words(other)}"
                )
            elif name in _REORDERS:
                text = (
                    f"{what} along the wrong axis: yours works along {_axis_words(other)}, "
                    "not along the axis it should work along"
                )
            else:
                text = (
                    f"{what} along the wrong axis: yours works along {_axis_words(other)}, "
                    f"not along the axis of the slices it should "
                    f"{'join' if name in _JOINERS else 'normalise' if name in _NORMALISERS else 'reduce'}"
                )
            yield _Variant("axis", text, new)
        if name in _REDUCTIONS and kind == "kw":
            new = _clone(node)
            del new.keywords[i]  # type: ignore[arg-type]
            new.keywords = [k for k in new.keywords if k.arg not in _KEEP_WORDS]
            yield _Variant(
                "axis",
                f"{what} without an axis reduces the whole array to one number, where each "
                "slice needs its own",
                new,
            )
        if name in _FLATTENING and kind == "kw":
            new = _clone(node)
            word = new.keywords[i].arg  # type: ignore[index]
            del new.keywords[i]  # type: ignore[arg-type]
            yield _Variant(
                "axis",
                f"{what} without `{word}=` works on the array flattened to one axis (every "
                "entry in a row), not along the axis it should work along",
                new,
            )
    for i, kw in enumerate(node.keywords):
        if kw.arg in _KEEP_WORDS:
            new = _clone(node)
            del new.keywords[i]
            yield _Variant(
                "axis",
                f"{what} without `{kw.arg}=True` drops the axis it reduces, so its result no "
                "longer lines up with the array it is combined with (each slice against its "
                "own value)",
                new,
            )


def _transpose_call(node: ast.Call, name: str) -> Iterator[_Variant]:
    target = node.func.value if _is_method(node) else (node.args[0] if node.args else None)  # type: ignore[attr-defined]
    if target is None:
        return
    yield _Variant(
        "transpose",
        f"`{_code(target)}` is used without its transpose (`{name}`)",
        _clone(target),
    )
    ints = [_int(a) for a in node.args[(0 if _is_method(node) else 1) :]]
    if len(ints) == 2 and None not in ints and sorted(ints) == [-2, -1]:  # type: ignore[type-var]
        yield _Variant(
            "transpose",
            f"`{_code(target)}.T` reverses every axis of a batch, where only the last two "
            "should swap",
            ast.Attribute(_clone(target), "T", ast.Load()),
        )


def _attribute_transpose_ops(node: ast.AST, ctx: _Context) -> Iterator[_Variant]:
    if isinstance(node, ast.Attribute) and node.attr in {"T", "mT"}:
        yield _Variant(
            "transpose",
            f"`{_code(node.value)}` is used without its transpose (`.{node.attr}`)",
            _clone(node.value),
        )
    # a transpose added to an operand of a matrix product that has none
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        for side in ("left", "right"):
            operand = getattr(node, side)
            if isinstance(operand, ast.Attribute) and operand.attr in {"T", "mT"}:
                continue
            if isinstance(operand, ast.Call) and _name(operand.func) in _TRANSPOSES:
                continue
            if not isinstance(operand, (ast.Name, ast.Subscript, ast.Attribute)):
                continue
            new = _clone(node)
            setattr(new, side, ast.Attribute(_clone(operand), "T", ast.Load()))
            yield _Variant(
                "transpose",
                f"`{_code(operand)}` is used transposed in a product{_where(node, ctx)}",
                new,
            )


_NONCOMMUTATIVE = {
    ast.Sub: "-",
    ast.Div: "/",
    ast.MatMult: "@",
    ast.Pow: "**",
    ast.FloorDiv: "//",
}


def _swap_ops(node: ast.AST, ctx: _Context) -> Iterator[_Variant]:
    if isinstance(node, ast.BinOp) and type(node.op) in _NONCOMMUTATIVE:
        if isinstance(node.left, ast.Constant) and isinstance(node.right, ast.Constant):
            return
        new = ast.BinOp(_clone(node.right), node.op, _clone(node.left))
        symbol = _NONCOMMUTATIVE[type(node.op)]
        yield _Variant(
            "swap",
            f"the two sides of a `{symbol}` are the wrong way round{_where(node, ctx)}",
            new,
        )
    elif isinstance(node, ast.Call) and len(node.args) >= 2 and _name(node.func) != "range":
        name = _name(node.func)
        for i in range(len(node.args)):
            for j in range(i + 1, len(node.args)):
                a, b = node.args[i], node.args[j]
                if isinstance(a, ast.Constant) and isinstance(b, ast.Constant):
                    continue
                if isinstance(a, ast.Starred) or isinstance(b, ast.Starred):
                    continue
                new = _clone(node)
                new.args[i], new.args[j] = new.args[j], new.args[i]
                if name == "where" and (i, j) == (1, 2):
                    names = {n.id for n in ast.walk(node.args[0]) if isinstance(n, ast.Name)}
                    if names & set(ctx.params + ctx.optional):  # the condition is an input
                        text = (
                            "the two values of `where` are swapped: the entries the condition "
                            "keeps and the ones it replaces trade places (a mask read the "
                            "wrong way round)"
                        )
                    else:
                        text = (
                            f"the two values of `where` are swapped{_where(node, ctx)}: the "
                            "entries its condition keeps and the ones it replaces trade places"
                        )
                        yield _Variant("swap", text, new, unlikely=1, whole=True)
                        continue
                else:
                    text = f"two arguments of `{name}` are swapped{_where(node, ctx)}"
                    if _short(a) and _short(b) and name != "where":  # its arguments: the answer
                        text = (
                            f"two arguments of `{name}` are swapped: `{_code(a)}` and `{_code(b)}`"
                        )
                    yield _Variant("swap", text, new, unlikely=2)
                    continue
                yield _Variant("swap", text, new)
    elif isinstance(node, ast.IfExp):
        new = ast.IfExp(node.test, _clone(node.orelse), _clone(node.body))
        yield _Variant(
            "swap",
            f"the two branches of `... if {_code(node.test, 30)} else ...` are swapped",
            new,
        )


def _input_ops(node: ast.AST, ctx: _Context) -> Iterator[_Variant]:
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
        and node.attr in ctx.attributes
        and isinstance(node.ctx, ast.Load)
    ):
        for other in ctx.attributes:
            if other != node.attr:
                yield _Variant(
                    "input",
                    f"you used `self.{other}` where `self.{node.attr}` belongs",
                    ast.Attribute(ast.Name("self", ast.Load()), other, ast.Load()),
                )
        return
    if isinstance(node, ast.Call):
        for i, arg in enumerate(node.args):
            if isinstance(arg, ast.Name) and arg.id in ctx.optional:
                new = _clone(node)
                del new.args[i]
                yield _Variant("drop", f"`{arg.id}` is not passed on to `{_name(node.func)}`", new)
        for i, kw in enumerate(node.keywords):
            if isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, bool):
                new = _clone(node)
                del new.keywords[i]
                yield _Variant(
                    "drop", f"`{kw.arg}={kw.value.value}` is missing in `{_name(node.func)}`", new
                )
        return
    if isinstance(node, ast.Tuple) and isinstance(node.ctx, ast.Load) and len(node.elts) <= 4:
        parent = ctx.parents.get(id(node))
        if isinstance(parent, ast.Subscript) and parent.slice is node:
            for i in range(len(node.elts)):
                for j in range(i + 1, len(node.elts)):
                    new_parent = _clone(parent)
                    elts = new_parent.slice.elts  # type: ignore[attr-defined]
                    elts[i], elts[j] = elts[j], elts[i]
                    yield _Variant(
                        "axis",
                        f"`{_code(new_parent, 60)}` indexes along the wrong axis: entries "
                        f"{i + 1} and {j + 1} of the index are in each other's place",
                        new_parent.slice,
                    )
            return
        for i in range(len(node.elts)):
            for j in range(i + 1, len(node.elts)):
                new = _clone(node)
                new.elts[i], new.elts[j] = new.elts[j], new.elts[i]
                yield _Variant(
                    "swap",
                    f"`{_code(node.elts[i], 24)}` and `{_code(node.elts[j], 24)}` trade places",
                    new,
                )
        return
    if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)):
        return
    if node.id not in ctx.params:
        return
    parent = ctx.parents.get(id(node))
    if isinstance(parent, ast.Call) and parent.func is node:
        return
    for other in ctx.params:
        if other != node.id:
            yield _Variant(
                "input",
                f"you used `{other}` where `{node.id}` belongs",
                ast.Name(other, ast.Load()),
                unlikely=1,
            )


_SCALE_NAMES = {"temperature", "tau", "scale", "d", "d_k", "d_head", "D", "norm", "n"}


def _is_sqrt(node: ast.AST) -> bool:
    if isinstance(node, ast.Call) and _name(node.func) == "sqrt" and len(node.args) == 1:
        return True
    return (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Pow)
        and isinstance(node.right, ast.Constant)
        and node.right.value == 0.5
    )


def _sqrt_inner(node: ast.AST) -> ast.expr:
    return node.args[0] if isinstance(node, ast.Call) else node.left  # type: ignore[attr-defined]


def _factor_words(factor: ast.AST) -> str:
    """A scale factor named for a message: quoted when short, ``q·q`` for a vector's dot
    product with itself, else ``""`` (never a blank where the factor's name belongs)."""
    while isinstance(factor, ast.Expr):
        factor = factor.value
    if _short(factor):
        return f"`{_code(factor)}`"
    if (
        isinstance(factor, ast.BinOp)
        and isinstance(factor.op, ast.MatMult)
        and _short(factor.left)
        and ast.unparse(factor.left) == ast.unparse(factor.right)
    ):
        x = _code(factor.left)
        return f"{x}·{x} ({x}'s squared length)"
    return ""


def _scale_ops(node: ast.AST, ctx: _Context) -> Iterator[_Variant]:
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Mult))):
        return
    divides = isinstance(node.op, ast.Div)
    factors = [("right", node.right)] if divides else [("right", node.right), ("left", node.left)]
    for side, factor in factors:
        scale_like = (
            divides
            or _is_sqrt(factor)
            or isinstance(factor, ast.Constant)
            or (isinstance(factor, ast.Name) and factor.id in _SCALE_NAMES)
        )
        if not scale_like:
            continue
        rest = node.left if side == "right" else node.right
        named = _factor_words(factor)
        if named:
            missing = f"the {'division' if divides else 'multiplication'} by {named} is missing"
        else:
            missing = f"a {'division' if divides else 'multiplication'} is missing"
        yield _Variant("scale", f"{missing}{_where(node, ctx)}", _clone(rest))
        other_op = ast.Mult() if divides else ast.Div()
        new = _clone(node)
        new.op = other_op
        if side == "left":  # c * x -> x / c
            new = ast.BinOp(_clone(rest), ast.Div(), _clone(factor))
        what = f"`{_code(factor)}`" if _short(factor) else "it"
        yield _Variant(
            "scale",
            f"you {'multiplied by' if divides else 'divided by'} {what} where the formula "
            f"{'divides' if divides else 'multiplies'}{_where(node, ctx)}",
            new,
        )
        if _is_sqrt(factor):
            new = _clone(node)
            setattr(new, side, _clone(_sqrt_inner(factor)))
            inner = _sqrt_inner(factor)
            shown_inner = f"`{_code(inner)}`" if _short(inner) else "the number itself"
            yield _Variant(
                "scale",
                f"you {'divided' if divides else 'multiplied'} by {shown_inner}, not by its "
                f"square root{_where(node, ctx)}",
                new,
            )
        elif divides and not isinstance(factor, ast.Constant):
            new = _clone(node)
            new.right = ast.Call(
                ast.Attribute(ast.Name("np", ast.Load()), "sqrt", ast.Load()),
                [_clone(factor)],
                [],
            )
            shown_factor = f"`{_code(factor)}`" if _short(factor) else "the divisor"
            yield _Variant(
                "scale",
                f"you divided by the square root of {shown_factor}, not by "
                f"{'it' if _short(factor) else 'the divisor'} itself{_where(node, ctx)}",
                new,
            )


def _size_ops(node: ast.AST, ctx: _Context) -> Iterator[_Variant]:
    if not (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "shape"
    ):
        return
    index = _int(node.slice)
    if index is None:
        return
    for other in (-1, -2, 0, 1):
        if other == index:
            continue
        new = _clone(node)
        new.slice = _literal(other)
        yield _Variant(
            "size",
            f"`{_code(new)}` is the size of another axis ({_axis_words(other)} of "
            f"`{_code(node.value.value, 20)}`) than the one needed",
            new,
        )


def _plus(node: ast.expr, delta: int) -> ast.expr:
    value = _int(node)
    if value is not None:
        return _literal(value + delta)
    op = ast.Add() if delta > 0 else ast.Sub()
    return ast.BinOp(_clone(node), op, ast.Constant(abs(delta)))


def _offset_ops(node: ast.AST, ctx: _Context) -> Iterator[_Variant]:
    if isinstance(node, ast.Call) and _name(node.func) == "range" and not node.keywords:
        args = node.args
        step = _int(args[2]) if len(args) == 3 else None
        descending = step is not None and step < 0  # range(n, 0, -1): the ends swap roles
        if len(args) == 1:
            new = _clone(node)
            new.args = [ast.Constant(1), _clone(args[0])]
            yield _Variant("offset", "your loop starts at 1 and skips the first step", new)
        for i, arg in enumerate(args[:2]):
            for delta in (-1, 1):
                new = _clone(node)
                new.args[i] = _plus(arg, delta)
                where = "ends" if (len(args) == 1 or i == 1) else "starts"
                early = ((delta < 0) == (where == "ends")) != descending
                yield _Variant(
                    "offset",
                    f"off by one: your loop {where} one step {'early' if early else 'late'} "
                    f"(`{_code(new, 40)}`)",
                    new,
                )
        parent = ctx.parents.get(id(node))
        if isinstance(parent, ast.For) and parent.iter is node:
            yield _Variant(
                "offset",
                "your loop runs backwards, from the last step to the first",
                ast.Call(ast.Name("reversed", ast.Load()), [_clone(node)], []),
            )
        return
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        value = _int(node.right)
        if value is not None and value != 0:
            for delta in (-1, 1):
                changed = value + delta
                new = (
                    _clone(node.left)
                    if changed == 0
                    else ast.BinOp(_clone(node.left), node.op, ast.Constant(changed))
                )
                text = f"off by one: `{_code(new)}` where the count needs one "
                text += "more" if (delta < 0) == isinstance(node.op, ast.Add) else "less"
                if _short(node.left):
                    text = f"off by one: `{_code(new)}` instead of `{_code(node)}`"
                yield _Variant("offset", text, new)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        swaps = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
        op = type(node.ops[0])
        if op in swaps:
            new = _clone(node)
            new.ops = [swaps[op]()]
            yield _Variant(
                "offset",
                "off by one at the boundary: your code decides the equal case the other "
                f"way, as `{_code(new)}` would",
                new,
            )
        value = _int(node.comparators[0])
        if op in (ast.Eq, ast.NotEq) and value is not None:
            for delta in (-1, 1):
                new = _clone(node)
                new.comparators = [_literal(value + delta)]
                picks = "the entries equal to" if op is ast.Eq else "every entry but"
                yield _Variant(
                    "offset",
                    f"off by one in a comparison: your code selects what `{_code(new)}` "
                    f"would, {picks} {value + delta}; check which value marks the entries "
                    "you want, and whether any entry holds the value you compare with",
                    new,
                )
    if isinstance(node, ast.Subscript):
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for k, part in enumerate(parts):
            if isinstance(part, ast.Name):
                for delta in (-1, 1):
                    new = _clone(node)
                    new_parts = new.slice.elts if isinstance(new.slice, ast.Tuple) else None
                    replaced = _plus(part, delta)
                    if new_parts is None:
                        new.slice = replaced
                    else:
                        new_parts[k] = replaced
                    yield _Variant(
                        "offset",
                        f"off by one: `{_code(new)}` reads the "
                        f"{'next' if delta > 0 else 'previous'} position",
                        new,
                    )
            if isinstance(part, ast.Slice):
                for bound in ("lower", "upper"):
                    value = getattr(part, bound)
                    if value is None or _int(value) is None:
                        continue
                    for delta in (-1, 1):
                        new = _clone(node)
                        target = (
                            new.slice.elts[k] if isinstance(new.slice, ast.Tuple) else new.slice
                        )
                        setattr(target, bound, _plus(value, delta))
                        yield _Variant("offset", f"off by one in the slice `{_code(new)}`", new)
    if isinstance(node, ast.keyword) and node.arg in {"diagonal", "k", "shifts", "offset"}:
        value = _int(node.value)
        if value is not None:
            for delta in (-1, 1):
                yield _Variant(
                    "offset",
                    f"off by one: `{node.arg}={value + delta}`",
                    ast.keyword(node.arg, _literal(value + delta)),
                )


_FILLS = {
    "-inf": "-math.inf",
    "-1e9": "-1e9",
    "-1e4": "-1e4",
    "0": "0.0",
    "finfo.min": "-1.7976931348623157e308",
}


def _fill_of(node: ast.AST) -> str | None:
    """Which fill value ``node`` spells, or ``None``."""
    text = ast.unparse(node).replace(" ", "").replace("'", '"')
    if text in {
        "-np.inf",
        "-math.inf",
        "-torch.inf",
        'float("-inf")',
        '-float("inf")',
        "np.NINF",
    }:
        return "-inf"
    if text in {"-1e9", "-1000000000.0", "-1e+9"}:
        return "-1e9"
    if text in {"-1e4", "-10000.0", "-1e+4"}:
        return "-1e4"
    if "finfo" in text and text.endswith(".min"):
        return "finfo.min"
    return None


def _fill_description(new: str) -> str:
    if new == "0":
        return (
            "the hidden entries are filled with 0, and exp(0) = 1 still gives them weight: "
            "a hidden key needs a score that exp turns into exactly 0"
        )
    if new == "-inf":
        return "the hidden entries are filled with -inf where the exercise uses a finite number"
    return (
        f"the hidden entries are filled with a finite number ({new}): exp of it is not "
        "exactly 0 when the other scores are as low, and a query that sees no key at all "
        "gets an even spread over the hidden keys instead of all-zero weights"
    )


def _fill_ops(node: ast.AST, ctx: _Context) -> Iterator[_Variant]:
    if not isinstance(node, ast.expr):
        return
    current = _fill_of(node)
    if current is None:
        return
    parent = ctx.parents.get(id(node))
    if parent is not None and isinstance(parent, ast.expr) and _fill_of(parent):
        return  # the enclosing expression is the fill
    for other, text in _FILLS.items():
        if other != current:
            yield _Variant("fill", _fill_description(other), _parse_expr(text))


def _sign_ops(node: ast.AST, ctx: _Context) -> Iterator[_Variant]:
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and not isinstance(node.operand, ast.Constant)
        and _fill_of(node) is None
    ):
        yield _Variant(
            "sign", f"a minus sign is missing: `{_code(node.operand)}`", _clone(node.operand)
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        if _int(node.right) is not None:
            return  # an offset, handled there
        new = _clone(node)
        new.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
        verb = "subtracted" if isinstance(node.op, ast.Add) else "added"
        yield _Variant(
            "sign",
            f"a sign is flipped: you {verb} `{_code(node.right, 30)}` (`{_code(new, 40)}`)",
            new,
        )


def _product_ops(node: ast.AST, ctx: _Context) -> Iterator[_Variant]:
    if not isinstance(node, ast.BinOp):
        return
    if isinstance(node.op, ast.MatMult):
        op, text = ast.Mult(), "`*` multiplies entry by entry where a matrix product `@` is needed"
    elif isinstance(node.op, ast.Mult) and not any(
        isinstance(s, ast.Constant) for s in (node.left, node.right)
    ):
        op, text = (
            ast.MatMult(),
            "`@` is a matrix product where the formula multiplies entry by entry",
        )
    else:
        return
    new = _clone(node)
    new.op = op
    yield _Variant("product", f"{text}{_where(node, ctx)}", new)


def _drop_ops(node: ast.AST, ctx: _Context) -> Iterator[_Variant]:
    if isinstance(node, ast.Call):
        name = _name(node.func)
        if name in _WRAPPERS:
            inner = node.func.value if _is_method(node) else (node.args[0] if node.args else None)  # type: ignore[attr-defined]
            if inner is not None:
                yield _Variant("drop", f"the `{name}` is missing", _clone(inner))
        for other in _ACTIVATIONS.get(name, ()):
            yield _Variant(
                "drop", f"`{other}` where the formula has `{name}`", _calling(node, other)
            )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and _fill_of(node) is None:
        shown = f"`{_code(node.right)}`" if _short(node.right) else "the second term"
        if isinstance(node.right, ast.Name) and node.right.id in ctx.maxima:
            shown = f"the max (`{node.right.id}`)"
        elif isinstance(node.right, ast.Call) and _name(node.right.func) in _MAXIMA:
            shown = "the max"
        yield _Variant(
            "drop",
            f"{shown} is not subtracted{_where(node, ctx)}",
            _clone(node.left),
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        for side, other in (("left", node.right), ("right", node.left)):
            dropped = getattr(node, side)
            if isinstance(dropped, ast.BinOp) and isinstance(dropped.op, ast.Add):
                continue  # a term of the inner sum: dropped there
            yield _Variant(
                "drop",
                f"the term `{_code(dropped, 30)}` is missing from the sum",
                _clone(other),
            )


def _statement_ops(node: ast.AST, ctx: _Context, assigned_before: set[str]) -> Iterator[_Variant]:
    """A step left out: an update of a name, an ``if`` block, an expression statement."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        if isinstance(target, ast.Name) and target.id in assigned_before:
            calls = [_name(n.func) for n in ast.walk(node.value) if isinstance(n, ast.Call)]
            with_ = f" with `{calls[0]}`" if calls and calls[0] else ""
            yield _Variant(
                "drop", f"a step is missing: the line that updates `{target.id}`{with_}", None
            )
    elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        yield _Variant("drop", f"a step is missing: the update of `{node.target.id}`", None)
    elif isinstance(node, ast.If) and not node.orelse:
        yield _Variant("drop", f"the block `if {_code(node.test, 30)}:` is skipped", None)
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        yield _Variant("drop", f"a step is missing: the call to `{_name(node.value.func)}`", None)


def _summary(node: ast.expr) -> str:
    """``np.where(...)`` for a call, the code itself when short."""
    text = ast.unparse(node)
    if len(text) <= 30:
        return text
    if isinstance(node, ast.Call):
        return f"{ast.unparse(node.func)}(...)"
    return text[:29] + "…"


def _inplace_ops(node: ast.AST, ctx: _Context) -> Iterator[_Variant]:
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
        return
    target, value = node.targets[0], node.value
    if not (isinstance(target, ast.Name) and isinstance(value, ast.BinOp)):
        return
    left = value.left
    if isinstance(left, ast.Name) and left.id in ctx.params and target.id != left.id:
        edit = ast.AugAssign(ast.Name(left.id, ast.Store()), value.op, _clone(value.right))
        keep = ast.Assign([ast.Name(target.id, ast.Store())], ast.Name(left.id, ast.Load()))
        for made in (edit, keep):
            ast.fix_missing_locations(ast.copy_location(made, node))
        yield _Variant(
            "inplace",
            f"`{left.id}` is edited in place (`{left.id} {_op(value.op)}= ...`): the caller's "
            "array changes",
            [edit, keep],
        )


def _op(op: ast.operator) -> str:
    return {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}.get(type(op), "?")


_FILLED = {"zeros": "ones", "zeros_like": "ones_like", "new_zeros": "new_ones"}


def _constant_ops(node: ast.AST, ctx: _Context) -> Iterator[_Variant]:
    """A hard-coded start: ones where the answer starts from zeros."""
    if isinstance(node, ast.Call) and _name(node.func) in _FILLED:
        other = _FILLED[_name(node.func)]
        yield _Variant(
            "constant",
            f"your start value is ones (`{other}`), where the answer starts from zeros"
            f"{_where(node, ctx)}",
            _calling(node, other),
        )


def _dtype_ops(node: ast.AST, ctx: _Context) -> Iterator[_Variant]:
    if isinstance(node, ast.Call):
        for i, kw in enumerate(node.keywords):
            if kw.arg == "dtype":
                new = _clone(node)
                del new.keywords[i]
                yield _Variant(
                    "dtype",
                    f"`{_name(node.func)}` without `dtype=` makes "
                    f"{'float32 (torch' if ctx.torch_code else 'float64 (NumPy'}'s default), "
                    "not the inputs' precision",
                    new,
                )
        if _name(node.func) in {"new_zeros", "new_ones", "new_full", "new_empty"} and _is_method(
            node
        ):
            new = ast.Call(
                ast.Attribute(ast.Name("torch", ast.Load()), _name(node.func)[4:], ast.Load()),
                _clone(node.args),
                _clone(node.keywords),
            )
            yield _Variant(
                "dtype",
                f"`torch.{_name(node.func)[4:]}` makes a float32 tensor (torch's default), where "
                "the inputs are float64",
                new,
            )


def _library_ops(node: ast.AST, ctx: _Context) -> Iterator[_Variant]:
    if not (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in {"torch", "np"}
        and node.attr in _NUMPY_TWINS
    ):
        return
    other = "np" if node.value.id == "torch" else "torch"
    parent = ctx.parents.get(id(node))
    if not (isinstance(parent, ast.Call) and parent.func is node):
        return
    text = (
        f"`np.{node.attr}` is NumPy's: on torch tensors it goes through NumPy, so the result "
        "is no longer a tensor that gradients flow through"
        if other == "np"
        else f"`torch.{node.attr}` is torch's: this exercise works on NumPy arrays"
    )
    yield _Variant(
        "library", text, ast.Attribute(ast.Name(other, ast.Load()), node.attr, ast.Load())
    )


_ROUND_TRIP = "torch.from_numpy(({}).detach().numpy().copy())"


def _return_ops(node: ast.AST, ctx: _Context) -> Iterator[_Variant]:
    if not (isinstance(node, ast.Return) and node.value is not None):
        return
    value = node.value
    items = value.elts if isinstance(value, ast.Tuple) else [value]
    if isinstance(value, ast.Tuple) and len(items) == 2:
        yield _Variant(
            "return",
            "the outputs are returned in the wrong order",
            ast.Return(ast.Tuple([_clone(items[1]), _clone(items[0])], ast.Load())),
        )
        yield _Variant(
            "return",
            f"only `{_code(items[0], 30)}` is returned, not the pair",
            ast.Return(_clone(items[0])),
        )
    for k, item in enumerate(items):
        if ctx.torch_code:
            wrapped = _parse_expr(_ROUND_TRIP.format(ast.unparse(item)))
            text = (
                "computed through NumPy: `.numpy()` (or a NumPy function) and back to a "
                "tensor gives the right numbers, but no gradient flows back through them"
            )
            kind = "library"
        else:
            wrapped = _parse_expr(f"np.asarray({ast.unparse(item)}).astype(np.float32)")
            text = "the result is computed or stored in float32 (single precision)"
            kind = "dtype"
        new_items = [_clone(i) for i in items]
        new_items[k] = wrapped
        new_value = ast.Tuple(new_items, ast.Load()) if isinstance(value, ast.Tuple) else wrapped
        yield _Variant(kind, text, ast.Return(new_value))


_EXPRESSION_OPS: tuple[Callable[[ast.AST, _Context], Iterator[_Variant]], ...] = (
    _axis_ops,
    _attribute_transpose_ops,
    _swap_ops,
    _input_ops,
    _scale_ops,
    _size_ops,
    _offset_ops,
    _fill_ops,
    _sign_ops,
    _product_ops,
    _drop_ops,
    _inplace_ops,
    _dtype_ops,
    _constant_ops,
    _library_ops,
    _return_ops,
)


# ------------------------------------------------------------------ applying them


class _LoopGuard(ast.NodeTransformer):
    """``while`` loops call ``__loop_guard__()`` first in their body."""

    def visit_While(self, node: ast.While) -> ast.While:
        self.generic_visit(node)
        guard = ast.Expr(ast.Call(ast.Name("__loop_guard__", ast.Load()), [], []))
        node.body.insert(0, guard)
        return node


def _clone(node: Any) -> Any:
    """A deep copy of a syntax tree (or a list of them, or a leaf value): its fields and
    locations only.

    Not ``copy.deepcopy``, which copies every attribute a node holds: in IPython (the
    learner's kernel) the traceback display sets a ``parent`` on every node it parses,
    the shared ``Load``/``Add`` nodes included, so each copy of a three-line answer dragged
    in the whole last parsed file (thousands of nodes; grading slowed tenfold on Python
    3.10). Nodes without fields (contexts and operators) are shared, as ``ast.parse`` shares
    them.
    """
    if isinstance(node, ast.AST):
        if not node._fields:
            return node
        new = node.__class__.__new__(node.__class__)
        for name in node._fields:
            if hasattr(node, name):
                setattr(new, name, _clone(getattr(node, name)))
        for name in node._attributes:
            if hasattr(node, name):
                setattr(new, name, getattr(node, name))
        return new
    if isinstance(node, list):
        return [_clone(item) for item in node]
    return node


def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    parents = {}
    for parent in ast.walk(tree):
        for child in ast.iter_child_nodes(parent):
            parents[id(child)] = parent
    return parents


def _replace(tree: ast.AST, index: int, new: Any) -> ast.AST:
    """A copy of ``tree`` with its ``index``-th node (walk order) replaced by ``new``."""
    tree = _clone(tree)
    target = list(ast.walk(tree))[index]
    parent = _parents(tree)[id(target)]
    for field, value in ast.iter_fields(parent):
        if value is target:
            setattr(parent, field, _clone(new))
            return ast.fix_missing_locations(tree)
        if isinstance(value, list) and any(v is target for v in value):
            position = next(i for i, v in enumerate(value) if v is target)
            if new is None:
                value.pop(position)
                if not value:
                    value.append(ast.Pass())
            elif isinstance(new, list):
                value[position : position + 1] = _clone(new)
            else:
                value[position] = _clone(new)
            return ast.fix_missing_locations(tree)
    raise LookupError("node not found in its parent")


def _finish(tree: ast.AST) -> str:
    guarded = _LoopGuard().visit(_clone(tree))
    ast.fix_missing_locations(guarded)
    return ast.unparse(guarded)


def _tree(source: str) -> tuple[ast.Module, list[tuple[int, int]]]:
    source = textwrap.dedent(source)
    return ast.parse(source), answer_lines(source)


def _definition(tree: ast.Module) -> ast.FunctionDef | ast.ClassDef:
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            return node
    raise ValueError("the source defines no function or class")


def _params(definition: ast.FunctionDef | ast.ClassDef) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(required inputs, optional inputs)`` of a function, or of a class's ``forward``."""
    if isinstance(definition, ast.ClassDef):
        forward = next(
            (n for n in definition.body if isinstance(n, ast.FunctionDef) and n.name == "forward"),
            None,
        )
        if forward is None:
            return (), ()
        definition = forward
    args = definition.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args) if a.arg != "self"]
    split = len(positional) - len(args.defaults)
    return tuple(positional[:split]), tuple(positional[split:])


def _attributes(definition: ast.FunctionDef | ast.ClassDef) -> tuple[str, ...]:
    if not isinstance(definition, ast.ClassDef):
        return ()
    found: list[str] = []
    for node in ast.walk(definition):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
            and node.attr not in found
        ):
            found.append(node.attr)
    return tuple(found)


def generate(source: str) -> list[Mutant]:
    """Every mutant of the answer in ``source`` (a definition with solution markers).

    Only the lines between the markers change. Two operators that give the same code give
    one mutant (the first); a change that gives back the original code gives none.

    The list depends on ``source`` alone, so it is made once per source and kept: every
    failed check asks for its reference's mutants again, and making them (a copy of the
    tree per change) would otherwise be repeated for each.
    """
    return list(_generate(source))


@functools.lru_cache(maxsize=128)
def _generate(source: str) -> tuple[Mutant, ...]:
    tree, ranges = _tree(source)
    text_source = textwrap.dedent(source)
    definition = _definition(tree)
    original = ast.unparse(tree)
    text = ast.unparse(definition)
    required, optional = _params(definition)
    ctx = _Context(
        params=required,
        optional=optional,
        attributes=_attributes(definition),
        maxima=frozenset(
            t.id
            for n in ast.walk(definition)
            if isinstance(n, ast.Assign)
            and any(isinstance(c, ast.Call) and _name(c.func) in _MAXIMA for c in ast.walk(n.value))
            for t in n.targets
            if isinstance(t, ast.Name)
        ),
        torch_code="torch" in text or "nn." in text or "masked_fill" in text,
        numpy_code="np." in text,
        parents=_parents(tree),
    )

    def inside(node: ast.AST) -> bool:
        line = getattr(node, "lineno", None)
        end = getattr(node, "end_lineno", line)
        return line is not None and any(a <= line and end <= b for a, b in ranges)

    nodes = list(ast.walk(tree))
    stores = [
        (n.lineno, n.id)
        for n in ast.walk(definition)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    ]
    params = set(ctx.params)

    def assigned_before(statement: ast.stmt) -> set[str]:
        return params | {name for line, name in stores if line < statement.lineno}

    found: list[Mutant] = []
    counts: dict[str, int] = {}
    seen: set[str] = set()
    for index, node in enumerate(nodes):
        if isinstance(node, ast.keyword):
            inside_node = inside(ctx.parents.get(id(node), node))
        else:
            inside_node = inside(node)
        if not inside_node:
            continue
        variants = [v for op in _EXPRESSION_OPS for v in op(node, ctx)]
        if isinstance(node, ast.stmt):
            variants += list(_statement_ops(node, ctx, assigned_before(node)))
        for variant in variants:
            try:
                changed = _replace(tree, index, variant.new)
                code = ast.unparse(changed)
            except (LookupError, TypeError, ValueError, AttributeError):
                continue
            if code == original or code in seen:
                continue
            seen.add(code)
            before = _segment(text_source, node)
            statement = _segment(text_source, _statement(node, ctx.parents))
            if not isinstance(node, ast.stmt) and statement != before:
                before = f"{before} in {statement}"
            after = (
                "(left out)"
                if variant.new is None
                else _first_line(variant.new)
                if isinstance(variant.new, (ast.stmt, list))
                else _code(variant.new, 60)
            )
            key = f"{variant.kind}: {before} -> {after}"
            key = _numbered(key, counts)
            found.append(
                Mutant(
                    key,
                    variant.kind,
                    variant.description,
                    _finish(changed),
                    variant.unlikely,
                    variant.whole,
                )
            )
    return tuple(found)


def _statement(node: ast.AST, parents: dict[int, ast.AST]) -> ast.AST:
    while not isinstance(node, ast.stmt) and id(node) in parents:
        node = parents[id(node)]
    return node


def _strip_comment(line: str) -> str:
    """``line`` without its ``# comment`` (a ``#`` inside a string stays)."""
    quote = None
    for i, char in enumerate(line):
        if quote:
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "#":
            return line[:i]
    return line


def _segment(source: str, node: ast.AST) -> str:
    """The node as written in the source (spaces collapsed), at most 60 characters.

    Keys are read from the source rather than unparsed, so that they read the same on
    every Python version.
    """
    text = ast.get_source_segment(source, node) if hasattr(node, "lineno") else None
    if text is None:
        text = ast.unparse(node)
    lines = [_strip_comment(line) for line in text.split("\n")]
    if isinstance(node, (ast.For, ast.While, ast.If, ast.With, ast.FunctionDef, ast.ClassDef)):
        lines = lines[:1]  # a block: its header
    text = " ".join(" ".join(lines).split())
    return text if len(text) <= 60 else text[:59] + "…"


def _first_line(node: Any) -> str:
    if isinstance(node, list):
        return "; ".join(_first_line(n) for n in node)
    return ast.unparse(node).split("\n")[0][:60]


def hard_coded(
    source: str, name: str, names: dict[str, Any], run: Callable[[Any], Any]
) -> list[Mutant]:
    """Mutants where a size read from the inputs is a fixed number.

    Every ``x.shape[i]``, ``x.size(i)`` and ``len(x)`` of the answer is replaced by the value
    it had when ``run(obj)`` ran the worked solution's ``name`` (built in ``names``) once,
    typically on a grader's first case. Nothing comes back if that run raises.
    """
    tree, ranges = _tree(source)
    nodes = list(ast.walk(tree))
    sites = []
    for index, node in enumerate(nodes):
        line = getattr(node, "lineno", None)
        if line is None or not any(a <= line <= b for a, b in ranges):
            continue
        is_shape = (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "shape"
        )
        is_len = isinstance(node, ast.Call) and _name(node.func) in {"len", "size"}
        if is_shape or is_len:
            sites.append(index)
    if not sites:
        return []
    probed = _clone(tree)
    probed_nodes = list(ast.walk(probed))
    parents = _parents(probed)
    for k, index in enumerate(sites):
        node = probed_nodes[index]
        call = ast.Call(ast.Name("__probe__", ast.Load()), [ast.Constant(k), node], [])
        parent = parents[id(node)]
        for field, value in ast.iter_fields(parent):
            if value is node:
                setattr(parent, field, call)
            elif isinstance(value, list):
                for i, v in enumerate(value):
                    if v is node:
                        value[i] = call
    ast.fix_missing_locations(probed)
    values: dict[int, Any] = {}

    def probe(k: int, value: Any) -> Any:
        values.setdefault(k, value)
        return value

    names["__probe__"] = probe
    try:
        run(build(_finish(probed), name, names))
    except Exception:
        return []
    found = []
    seen: set[str] = set()
    counts: dict[str, int] = {}
    for k, index in enumerate(sites):
        value = values.get(k)
        if type(value) is not int:
            continue
        node = nodes[index]
        code = _finish(_replace(tree, index, ast.Constant(value)))
        if code in seen:
            continue
        seen.add(code)
        key = f"constant: {_code(node)} -> {value}"
        key = _numbered(key, counts)
        found.append(
            Mutant(
                key,
                "constant",
                f"a size is hard-coded: your code uses the fixed number {value} where it "
                f"should read it from the input (`{_code(node, 30)}`), so it fits only inputs "
                "of that size",
                code,
            )
        )
    return found


def build(mutant_source: str, name: str, names: dict[str, Any]) -> Any:
    """Execute a mutant's source in ``names`` and return the object it defines as ``name``.

    A function comes back wrapped so that each call may run :data:`LOOP_LIMIT` iterations
    of its ``while`` loops; past that it raises :class:`LoopLimit`.
    """
    counter = [0]

    def guard() -> None:
        counter[0] += 1
        if counter[0] > LOOP_LIMIT:
            raise LoopLimit(f"a while loop ran {LOOP_LIMIT} times")

    names["__loop_guard__"] = guard
    exec(compile(mutant_source, f"<mutant of {name}>", "exec"), names)
    made = names[name]
    if isinstance(made, type):
        return made

    def call(*args: Any, **kwargs: Any) -> Any:
        counter[0] = 0
        return made(*args, **kwargs)

    call.__name__ = name
    call.__wrapped__ = made  # type: ignore[attr-defined]
    return call
