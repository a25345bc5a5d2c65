"""Forensics on a wrong output: how it relates to the right one, said in the learner's terms.

When no planted or generated mistake reproduces a learner's output, the output itself often
says what happened. :func:`value_clue` compares a wrong output with the expected one and
recognises:

- the right answer transposed (its last two axes, or any two axes, swapped);
- another output, or an input, in its place (``weights`` returned as ``out``, ``x``
  unchanged);
- the right answer times a constant (a sign flip, a missing or extra ``sqrt(d)``, a
  temperature), or plus a constant;
- normalised along another axis, or over the whole array, or not normalised at all;
- permuted along an axis: reversed, rolled by one, in another order, or shifted by one
  position (one step late or early);
- right except in some entries: only where a mask hides everything, only at masked
  positions, only at the first or last index of an axis.

:func:`shape_clue` does the same for a wrong shape (the sizes named after the exercise's
signature: ``T``, ``S``, ``d``, ...), and :func:`cases_clue` for an answer right on some
cases and wrong on others (a size that was hard-coded, a mask or option ignored).

The names of the sizes come from the grader's signature (``q: (..., T, d)``): :func:`sizes`
reads them off a case's inputs.

Taught in: every chapter's exercises (first in exercises/01_why_attention.ipynb)
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "Seen",
    "cases_clue",
    "fixed_shape_clue",
    "nan_clue",
    "output_axes",
    "shape_clue",
    "sizes",
    "value_clue",
]

_SHAPE = re.compile(r"(\w+): \(([^()]*)\)")


def sizes(signature: str, inputs: Mapping[str, Any]) -> dict[str, int]:
    """The named sizes of a case: ``{"T": 3, "S": 4, "d": 5, "d_v": 2}``.

    Read from the signature's ``name: (dims)`` entries, aligned from the right for ``...``.
    """
    found: dict[str, int] = {}
    for name, dims in _SHAPE.findall(signature):
        value = inputs.get(name)
        shape = getattr(value, "shape", None)
        if shape is None:
            continue
        labels = [d.strip() for d in dims.split(",") if d.strip()]
        if "..." in labels:
            labels = labels[labels.index("...") + 1 :]
        elif len(labels) != len(shape):
            continue
        for label, size in zip(reversed(labels), reversed(tuple(shape)), strict=False):
            if re.fullmatch(r"[A-Za-z_]\w*", label):
                found.setdefault(label, int(size))
    return found


def _label(size: int, named: Mapping[str, int]) -> str:
    names = [n for n, v in named.items() if v == size]
    return f"{size} ({' = '.join(names)})" if names else str(size)


def _short(size: int, named: Mapping[str, int]) -> str:
    names = [n for n, v in named.items() if v == size]
    return names[0] if len(names) == 1 else str(size)


def _shape_text(shape: Sequence[int], named: Mapping[str, int]) -> str:
    inverse: dict[int, list[str]] = {}
    for n, v in named.items():
        inverse.setdefault(v, []).append(n)
    # A size of 1 is left as a number: it is also the kept axis of many shapes ((B, 1, S)),
    # so with B = 1 a name would mislabel it.
    parts = [inverse[s][0] if len(inverse.get(s, [])) == 1 and s != 1 else str(s) for s in shape]
    plain = "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
    named_text = "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    return plain if named_text == plain else f"{plain} = {named_text}"


def _close(a: np.ndarray, b: np.ndarray, rtol: float = 1e-5) -> bool:
    if a.shape != b.shape:
        return False
    finite = np.abs(b[np.isfinite(b)]) if b.dtype.kind in "fc" else np.abs(b)
    scale = max(float(np.max(finite, initial=0.0)), 1e-12)  # an inf in b: atol stays finite
    return bool(np.allclose(a, b, rtol=rtol, atol=1e-8 * scale, equal_nan=True))


def _float(x: Any) -> np.ndarray | None:
    array = np.asarray(x)
    if array.dtype.kind not in "fiub":
        return None
    return array.astype(np.float64)


def _named_factor(c: float, named: Mapping[str, int], options: Mapping[str, Any]) -> str | None:
    """``"√64 = 8, the square root of d"`` when ``c`` is such a number."""
    candidates: list[tuple[float, str]] = []
    for name, value in named.items():
        if value > 1:
            candidates += [
                (math.sqrt(value), f"√{value}, the square root of {name}"),
                (float(value), f"{value} = {name}"),
                (value**0.25, f"{value}^(1/4), the fourth root of {name}"),
            ]
    for name, value in options.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value not in (0, 1):
            candidates += [(float(value), f"{value} = {name}")]
    for value, words in candidates:
        if math.isclose(c, value, rel_tol=1e-6):
            return words
        if math.isclose(c, 1.0 / value, rel_tol=1e-6):
            return f"1 / ({words})"
    return None


def _sums(x: np.ndarray, axis: int | None) -> bool:
    if x.size == 0 or (axis is not None and x.shape[axis] < 2):
        return False
    return bool(np.allclose(x.sum(axis=axis), 1.0, atol=1e-6))


def _axis_name(axis: int, ndim: int) -> str:
    k = axis % ndim
    if ndim == 1:
        return "its one axis"
    if k == ndim - 1:
        return f"the last axis (axis {k})"
    if k == ndim - 2:
        return f"the second-to-last axis (axis {k})"
    return f"axis {k}"


@dataclass(frozen=True)
class Seen:
    """One case's wrong output, with what forensics needs to read it.

    Attributes:
        got, want: the learner's output and the expected one.
        expected: every expected output of the case, by name (to recognise a swap).
        inputs: the case's inputs (to recognise one returned unchanged, or a mask).
        options: the case's keyword options.
        named: the case's named sizes (:func:`sizes`).
        axes: the names of the output's axes, from the signature (``("B", "H", "T", "d")``),
            or ``()`` when the signature does not name them (:func:`output_axes`).
    """

    got: Any
    want: Any
    expected: Mapping[str, Any]
    inputs: Mapping[str, Any]
    options: Mapping[str, Any]
    named: Mapping[str, int]
    axes: tuple[str, ...] = ()


def value_clue(seen: Sequence[Seen], *, name: str) -> str | None:
    """What a wrong output is, when the same relation holds on every case it is wrong on.

    ``seen``: the failing case first, then the other cases where this output is wrong.
    """
    clues = [_one_clue(s, name) for s in seen]
    # A case with fewer than 3 numbers cannot show a relation (too few to tell it from a
    # coincidence): it neither names one nor contradicts one that the other cases show.
    told = [c for c, s in zip(clues, seen, strict=True) if c is not None or np.size(s.want) >= 3]
    if told and told != clues and all(c is not None for c in told):
        clues = told
    first = clues[0]
    if first is None:
        return _square_across(seen, name) or _factor_across(seen, name)
    if any(c is None for c in clues):
        return None
    if any(c[0] != first[0] for c in clues):
        return _common_factor(clues, seen, name)
    return first[1]


def _common_factor(clues: Sequence[tuple[str, str]], seen: Sequence[Seen], name: str) -> str | None:
    """A factor named by different sizes on different cases only because two sizes are
    equal on some case (T = D = 5): the one size that names it on every case."""
    if not all(c[0].startswith("factor ") for c in clues):
        return None
    common = None
    for s in seen:
        g, w = _float(s.got), _float(s.want)
        if g is None or w is None:
            return None
        finite = np.isfinite(g) & np.isfinite(w)
        wf = w[finite]
        c = float(np.dot(g[finite], wf)) / float(np.dot(wf, wf))
        kinds = set()
        for size, value in s.named.items():
            if _named_factor(c, {size: value}, {}) is not None:
                kinds.add(size)
        common = kinds if common is None else common & kinds
    if not common or len(common) != 1:
        return None
    size = common.pop()
    s = seen[0]
    g, w = _float(s.got), _float(s.want)
    finite = np.isfinite(g) & np.isfinite(w)  # type: ignore[operator]
    c = float(np.dot(g[finite], w[finite])) / float(np.dot(w[finite], w[finite]))  # type: ignore[index]
    words = _named_factor(c, {size: s.named[size]}, {})
    return f"your `{name}` is the right answer multiplied by {c:.4g} ({words}) on every case"


def _square_across(seen: Sequence[Seen], name: str) -> str | None:
    """The square (or the square root) of the right answer on every case where it is wrong,
    on at least two cases, with numbers far enough from 0 and 1 that a square shows."""
    found = set()
    for s in seen:
        g, w = _float(s.got), _float(s.want)
        if g is None or w is None or g.shape != w.shape or not np.all(np.isfinite(g)):
            return None
        if not np.all(np.isfinite(w)) or np.any(np.abs(np.abs(w) - 1) < 0.05) or np.any(w == 0):
            return None
        if np.allclose(g, w**2, rtol=1e-6, atol=0):
            found.add("square")
        elif np.all(w > 0) and np.allclose(g, np.sqrt(w), rtol=1e-6, atol=0):
            found.add("root")
        else:
            return None
    if len(seen) < 2 or len(found) != 1:
        return None
    g0, w0 = (float(np.asarray(x).reshape(-1)[0]) for x in (seen[0].got, seen[0].want))
    if found == {"square"}:
        return (
            f"your `{name}` is the square of the right answer on every case ({g0:.4g} = "
            f"{w0:.4g}²): a variance where a standard deviation is asked, or a squared norm "
            "where the norm is?"
        )
    return (
        f"your `{name}` is the square root of the right answer on every case ({g0:.4g} = "
        f"√{w0:.4g}): a standard deviation where a variance is asked, or a norm where its "
        "square is?"
    )


def _factor_across(seen: Sequence[Seen], name: str) -> str | None:
    """A factor read from a few numbers per case (a scalar output), the same on every case.

    Accepted only when it is named the same way on at least two cases (``1 / d`` where d
    changes from case to case), so that one coincidence is not taken for a relation.
    """
    words: list[str] = []
    for s in seen:
        g, w = _float(s.got), _float(s.want)
        if g is None or w is None or g.shape != w.shape or not np.all(np.isfinite(g)):
            return None
        nonzero = w != 0
        if not nonzero.any():
            return None
        ratios = g[nonzero] / w[nonzero]
        c = float(ratios.flat[0])
        if not np.allclose(ratios, c, rtol=1e-6) or math.isclose(c, 1.0):
            return None
        named = _named_factor(c, s.named, s.options)
        if named is None:
            return None
        words.append(named.split(", ")[-1].split(" = ")[-1])
    if len(words) < 2 or len(set(words)) != 1:
        return None
    s = seen[0]
    c = float((_float(s.got)[_float(s.want) != 0] / _float(s.want)[_float(s.want) != 0]).flat[0])  # type: ignore[index]
    return (
        f"your `{name}` is the right answer multiplied by {c:.4g} "
        f"({_named_factor(c, s.named, s.options)}) on every case"
    )


def _one_clue(seen: Seen, name: str) -> tuple[str, str] | None:
    """``(relation, text)`` for one case: the relation (with its parameter) is compared
    across cases, the text is shown."""
    g, w = _float(seen.got), _float(seen.want)
    if g is None or w is None:
        return None
    named, options, inputs = seen.named, seen.options, seen.inputs
    yours = f"your `{name}`"
    # another output, or an input, in its place
    for other, value in seen.expected.items():
        v = _float(value)
        if other != name and v is not None and _close(g, v) and not _close(v, w):
            return (
                f"output {other}",
                f"{yours} holds what `{other}` should hold: the outputs are mixed up",
            )
    for arg, value in inputs.items():
        v = _numeric_input(value)
        if v is not None and _close(g, v) and not _close(v, w):
            return f"input {arg}", f"{yours} is the input `{arg}` unchanged"
    for other, value in seen.expected.items():
        v = _float(value)
        if other == name or v is None or v.ndim != g.ndim + 1:
            continue
        for axis in range(v.ndim):
            for index in (0, v.shape[axis] - 1):
                part = np.take(v, index, axis)
                if part.shape == g.shape and _close(g, part) and not _close(part, w):
                    which = "first" if index == 0 else "last"
                    return (
                        f"slice {other} {axis} {which}",
                        f"{yours} is the {which} entry of `{other}` along axis {axis}, which "
                        f"is not the one `{name}` should hold",
                    )
    if g.shape != w.shape:
        return _axes_clue(g, w, yours, named, seen.axes)
    finite = np.isfinite(g) & np.isfinite(w)
    if np.count_nonzero(finite & (w != 0)) < 3:
        return None  # too few numbers to tell a relation from a coincidence
    if w.ndim >= 2:
        found = _axes_clue(g, w, yours, named, seen.axes)
        if found:
            return found
    if finite.all() and np.any(w < 0):
        if _close(g, np.abs(w)):
            return "abs", (
                f"{yours} is the absolute value of the right answer: it is never negative, "
                "where the right one is (an abs(), a square root of a square, a clip?)"
            )
        if _close(g, np.maximum(w, 0)):
            return "clip 0", (
                f"{yours} is the right answer with its negative entries set to 0: the right "
                "values go below 0"
            )
    gf, wf = g[finite], w[finite]
    denominator = float(np.dot(wf, wf))
    if denominator > 0 and finite.all():
        c = float(np.dot(gf, wf)) / denominator
        if abs(c - 1.0) > 1e-6 and abs(c) > 1e-12 and _close(g, c * w):
            if math.isclose(c, -1.0, rel_tol=1e-6):
                return "sign", f"{yours} is the right answer with its sign flipped"
            words = _named_factor(c, named, options)
            if words:
                kind = words.split(", ")[-1].split(" = ")[-1]
                return (
                    f"factor {kind}",
                    f"{yours} is the right answer multiplied by {c:.4g} ({words})",
                )
            return f"factor {c:.6g}", f"{yours} is the right answer multiplied by {c:.4g}"
        shift = float(np.mean(gf - wf))
        if abs(shift) > 1e-9 and _close(g, w + shift):
            return (
                f"shift {shift:.6g}",
                f"{yours} is the right answer plus a constant ({shift:.4g})",
            )
    found = _normalisation_clue(g, w, yours)
    if found:
        return found
    found = _order_clue(g, w, yours, named)
    if found:
        return found
    return _region_clue(g, w, yours, inputs)


def _numeric_input(value: Any) -> np.ndarray | None:
    if not hasattr(value, "shape"):
        return None
    if hasattr(value, "detach"):
        value = value.detach().cpu()
    return _float(np.asarray(value))


def output_axes(signature: str) -> tuple[str, ...]:
    """The names of a one-output signature's axes: ``"... -> (B, H, T, d)"`` gives
    ``("B", "H", "T", "d")``; ``()`` when it names none (or several outputs)."""
    found = re.search(r"->\s*\(([^()]*)\)\s*$", signature)
    if not found:
        return ()
    names = tuple(a.strip() for a in found.group(1).split(",") if a.strip())
    return names if all(re.fullmatch(r"[A-Za-z_]\w*", a) for a in names) else ()


def _order_text(order: Sequence[int], axes: Sequence[str]) -> str:
    """Which axes a permutation moved, in the output's axis names (or numbers)."""
    n = len(order)
    label = [f"the {a} axis" for a in axes] if len(axes) == n else [f"axis {i}" for i in range(n)]
    if len(axes) == n:
        shown = f"({', '.join(axes[i] for i in order)}) where ({', '.join(axes)}) is expected"
    else:  # a signature that does not name every axis: numbers, never an index past its names
        shown = f"the order {tuple(order)} of the expected axes"
    if n > 2 and tuple(order) == tuple(reversed(range(n))):
        return (
            f"every axis is reversed, {shown}: that is what `.T` does to an array of more "
            "than two axes (it reverses all of them, not only the last two)"
        )
    moved = [i for i in range(n) if order[i] != i]
    if len(moved) == 2:
        i, j = moved
        text = f"{label[order[j]]} and {label[order[i]]} are swapped (axes {i} and {j}), {shown}"
        if n > 2 and (i, j) == (0, n - 1):  # (B, T, H, d).T is (d, H, T, B)
            text += " (a `.T` reverses every axis of an array with more than two, not the last two)"
        return text
    for i in moved:  # one axis taken out and put back elsewhere
        rest = [a for a in order if a != order[i]]
        if rest == sorted(rest):
            return f"{label[order[i]]} is at axis {i} instead of axis {order[i]}, {shown}"
    return f"its axes are {shown}"


def _axes_clue(
    g: np.ndarray,
    w: np.ndarray,
    yours: str,
    named: Mapping[str, int],
    axes: Sequence[str] = (),
) -> tuple[str, str] | None:
    if g.ndim != w.ndim or g.ndim < 2 or sorted(g.shape) != sorted(w.shape):
        return None
    last_two = (*tuple(range(g.ndim - 2)), g.ndim - 1, g.ndim - 2)
    if g.shape == tuple(w.shape[i] for i in last_two) and _close(np.transpose(g, last_two), w):
        if g.shape == w.shape:
            return "transposed", (
                f"{yours} is the right answer transposed: its last two axes are swapped "
                f"(entry [i, j] holds what belongs at [j, i])"
            )
        return "transposed", (
            f"{yours} is the right answer transposed: expected "
            f"{_shape_text(w.shape, named)}, got {_shape_text(g.shape, named)}, the last two "
            "axes swapped"
        )
    if g.ndim <= 4:
        for order in itertools.permutations(range(g.ndim)):
            if order == tuple(range(g.ndim)) or order == last_two:
                continue
            if tuple(g.shape[i] for i in np.argsort(order)) != w.shape:
                continue
            if _close(np.transpose(g, np.argsort(order)), w):
                return "axes", (
                    f"{yours} has the right numbers with its axes in another order: "
                    f"{_order_text(order, axes)}"
                )
    return None


def _normalisation_clue(g: np.ndarray, w: np.ndarray, yours: str) -> tuple[str, str] | None:
    axes = [a for a in range(w.ndim) if _sums(w, a) and np.all(w >= 0)]
    if not axes or _sums(g, axes[0]):
        return None
    right = axes[0]
    others = [a for a in range(g.ndim) if a != right and _sums(g, a)]
    if others:
        return f"normalised {others[0]}", (
            f"{yours} sums to 1 along {_axis_name(others[0], g.ndim)}, where each slice "
            f"along {_axis_name(right, w.ndim)} should: normalised along the wrong axis"
        )
    if g.size > 1 and np.isclose(g.sum(), 1.0, atol=1e-6):
        return "normalised whole", (
            f"{yours} sums to 1 over the whole array, where each slice along "
            f"{_axis_name(right, w.ndim)} should sum to 1 by itself"
        )
    with np.errstate(all="ignore"):
        ratio = g / np.where(w == 0, np.nan, w)
    spread = np.nanmax(ratio, axis=right) - np.nanmin(ratio, axis=right)
    if np.all(np.isfinite(spread)) and np.allclose(spread, 0.0, atol=1e-6):
        return "not normalised", (
            f"{yours} has the right proportions within each slice along "
            f"{_axis_name(right, w.ndim)}, but the slices do not sum to 1: the normalisation "
            "(the division by the sum) is missing or divides by something else"
        )
    return None


def _order_clue(
    g: np.ndarray, w: np.ndarray, yours: str, named: Mapping[str, int]
) -> tuple[str, str] | None:
    for axis in range(w.ndim):
        n = w.shape[axis]
        if n < 2:
            continue
        label = _axis_name(axis, w.ndim)
        if _close(np.flip(g, axis), w):
            return f"reversed {axis}", f"{yours} is the right answer reversed along {label}"
        for shift in (1, -1):
            if n > 2 and _close(np.roll(g, -shift, axis), w):
                way = "late" if shift == 1 else "early"
                return f"rolled {axis} {shift}", (
                    f"{yours} is the right answer shifted by one position along {label} "
                    f"(rolled around): each entry sits one step {way}"
                )
        head = [slice(None)] * w.ndim
        tail = [slice(None)] * w.ndim
        head[axis], tail[axis] = slice(1, None), slice(None, -1)
        if n > 2 and _close(g[tuple(head)], w[tuple(tail)]):
            return f"late {axis}", (
                f"{yours} is one step late along {label}: position t holds what belongs at t - 1"
            )
        if n > 2 and _close(g[tuple(tail)], w[tuple(head)]):
            return f"early {axis}", (
                f"{yours} is one step early along {label}: position t holds what belongs at t + 1"
            )
        # another order of the slices along the axis
        if n <= 12:
            gs = [np.take(g, i, axis) for i in range(n)]
            ws = [np.take(w, i, axis) for i in range(n)]
            match = []
            for gi in gs:
                found = [j for j, wj in enumerate(ws) if _close(gi, wj)]
                match.append(found[0] if found else None)
            if None not in match and sorted(match) == list(range(n)) and match != list(range(n)):
                return (
                    f"order {axis}",
                    f"{yours} has the right entries, in another order"
                    if w.ndim == 1
                    else f"{yours} has the right slices along {label}, in another order",
                )
    return None


def _masks(inputs: Mapping[str, Any]) -> list[tuple[str, np.ndarray]]:
    found = []
    for name, value in inputs.items():
        if hasattr(value, "shape"):
            array = np.asarray(value.detach().cpu() if hasattr(value, "detach") else value)
            if array.dtype == bool:
                found.append((name, array))
    return found


def _softmax_scale(g: np.ndarray, w: np.ndarray, visible: np.ndarray) -> str | None:
    """``g``'s rows as the softmax of ``c`` times the scores whose softmax gives ``w``, with
    one ``c != 1`` for every row (a temperature, such as a stray 1/√d): ``c`` in words."""
    rows_g = g.reshape(-1, g.shape[-1])
    rows_w = w.reshape(-1, w.shape[-1])
    rows_v = visible.reshape(-1, visible.shape[-1])
    xs, ys = [], []
    for gr, wr, vr in zip(rows_g, rows_w, rows_v, strict=True):
        if vr.sum() < 2 or np.any(wr[vr] <= 0) or np.any(gr[vr] <= 0):
            continue
        lw, lg = np.log(wr[vr]), np.log(gr[vr])  # log-softmax: the scores up to a constant
        xs.append(lw - lw.mean())
        ys.append(lg - lg.mean())
    if not xs:
        return None
    x, y = np.concatenate(xs), np.concatenate(ys)
    if not np.any(np.abs(x) > 1e-6):
        return None
    c = float(x @ y / (x @ x))
    if abs(c - 1) < 1e-3 or c <= 0 or np.max(np.abs(y - c * x)) > 1e-4 * (1 + np.max(np.abs(y))):
        return None
    root = round(1 / c**2)
    if root > 1 and abs(1 / c - np.sqrt(root)) < 1e-6 * np.sqrt(root):
        return f"1/{1 / c:.4g} = 1/√{root}"
    return f"{c:.4g}"


def _region_clue(
    g: np.ndarray, w: np.ndarray, yours: str, inputs: Mapping[str, Any]
) -> tuple[str, str] | None:
    wrong = ~np.isclose(g, w, rtol=1e-5, atol=1e-8, equal_nan=True)
    if not wrong.any() or wrong.all():
        return None
    for name, mask in _masks(inputs):
        try:
            full = np.broadcast_to(mask, w.shape)
        except ValueError:
            continue
        blind = ~full.any(axis=-1, keepdims=True) & np.ones_like(full)
        if blind.any() and np.all(blind[wrong]):
            return "blind rows", (
                f"{yours} is right except in the rows where `{name}` hides every key (a query "
                "that sees nothing must get all-zero weights and a zero output)"
            )
        if np.all(~full[wrong]):
            return "hidden", f"{yours} is right except where `{name}` is False (the hidden entries)"
        if np.all(full[wrong]) and (~full).any():
            # right where hidden, wrong where visible: the mask is read the right way (an
            # inverted one would be wrong on both); what went wrong is the visible part
            said = f"{yours} is right where `{name}` is False and wrong where it is True"
            scale = _softmax_scale(g, w, full)
            if scale is not None:
                return "visible scaled", (
                    f"{said}: there, your weights are the softmax of the scores multiplied by "
                    f"{scale}. The hidden keys are handled; a scale was applied to the scores "
                    "(or left out) before the softmax: this function takes the scores as "
                    "they come"
                )
            return "visible", (
                f"{said}: the hidden entries are handled; the computation of the visible "
                "ones is not (the softmax over them, its axis, or what is added to them)"
            )
    for axis in range(w.ndim):
        if w.shape[axis] < 3:
            continue
        indices = np.unique(np.nonzero(wrong)[axis])
        if len(indices) == 1:
            index = int(indices[0])
            where = (
                "the first"
                if index == 0
                else "the last"
                if index == w.shape[axis] - 1
                else f"index {index}"
            )
            return f"position {axis} {where}", (
                f"{yours} is right except at {where} position along {_axis_name(axis, w.ndim)}"
            )
    return None


def _axes_of(inputs: Mapping[str, Any] | None) -> list[tuple[str, tuple[int, ...]]]:
    return [
        (arg, tuple(int(n) for n in value.shape))
        for arg, value in (inputs or {}).items()
        if hasattr(value, "shape") and len(getattr(value, "shape", ())) >= 1
    ]


# An axis one entry off, and what makes it so: said for one case (shape_clue) and for
# every case (steady_offset_clue)
_TOO_MANY_CAUSES = "a range or a size one too long, a slice that keeps one more"
_ONE_STEP_MISSING = (
    "one step missing along it (a range that starts at 1 or stops one early, or a slice "
    "that drops an end)"
)


def _input_clue(
    got: tuple[int, ...],
    want: tuple[int, ...],
    yours: str,
    named: Mapping[str, int],
    inputs: Mapping[str, Any] | None,
    returned: Any,
) -> str | None:
    """A wrong shape read against the inputs' shapes: what the learner's code did."""
    label = lambda n: _label(n, named)  # noqa: E731
    if (
        not got
        and len(want) == 1
        and type(returned) in (int, float)  # not np.float64 (a float too): a reduction's result
    ):
        return (
            f"{yours} is a single number ({returned!r}) where a list of {want[0]} "
            f"item{'s' * (want[0] != 1)} is expected: even one item is returned in a list, "
            "`[...]`, never bare"
        )
    axes = _axes_of(inputs)
    if len(got) == len(want):
        diffs = [i for i in range(len(got)) if got[i] != want[i]]
        if len(diffs) == 2:
            i, j = diffs
            if got[i] == want[j] and got[j] == want[i]:
                for arg, shape in axes:
                    for p in range(len(shape) - 1):
                        if (shape[p], shape[p + 1]) == (want[i], want[j]) and j == i + 1:
                            parts = ["_"] * len(shape)
                            parts[p], parts[p + 1] = _short(want[j], named), _short(want[i], named)
                            head = ", ".join(parts)
                            return (
                                f"{yours} has axes {i} and {j} in the other order ({label(got[i])}"
                                f" first, where {label(want[i])} comes first, as in `{arg}`, "
                                f"shape {_shape_text(shape, named)}): were `{arg}`'s axes read in "
                                f"the other order (unpacked as `{head} = {arg}.shape`, or "
                                f"indexed `{arg}[t]` where a step along axis {p + 1} is "
                                f"`{arg}[{':, ' * (p + 1)}t]`), or stacked or transposed the other "
                                "way?"
                            )
        if len(diffs) == 1:
            i = diffs[0]
            # the size of another axis of the same input: the wrong one of its axes
            for arg, shape in axes:
                if want[i] in shape and got[i] in shape and want[i] != got[i]:
                    p, q = shape.index(want[i]), shape.index(got[i])
                    return (
                        f"axis {i} of {yours} has size {label(got[i])}, the size of `{arg}`'s "
                        f"axis {q}, where it should have {label(want[i])}, `{arg}`'s axis {p}: "
                        f"the wrong axis of `{arg}` was used (`{arg}.shape[{q}]` where "
                        f"`{arg}.shape[{p}]` belongs, a transpose too many or too few, or an "
                        f"index or reduction that took away axis {p} where it should have "
                        f"taken another: `a[-1]` takes the last entry along axis 0, "
                        "`a[:, -1]` along axis 1)"
                    )
            if abs(got[i] - want[i]) == 1 and got[i] not in named.values() and want[i] > 0:
                if got[i] > want[i]:
                    return (
                        f"axis {i} of {yours} has {got[i]} entries where it should have "
                        f"{label(want[i])}: one step too many along it ({_TOO_MANY_CAUSES}, or a "
                        "starting value kept among the results, such as an initial state put "
                        "in the list before the loop)"
                    )
                return (
                    f"axis {i} of {yours} has {got[i]} entries where it should have "
                    f"{label(want[i])}: {_ONE_STEP_MISSING}"
                )
    if len(got) + 1 == len(want):
        for i in range(len(want)):
            if want[:i] + want[i + 1 :] != got:
                continue
            for arg, shape in axes:
                if len(shape) >= 2 and want[i] in shape[1:] and shape[0] in got:
                    return (
                        f"{yours} has lost an axis, the one of size {label(want[i])}: "
                        f"`{arg}` has {len(shape)} axes here (shape {_shape_text(shape, named)}),"
                        f" and code that reads only its first axis (`len({arg})`, "
                        f"`{arg}.shape[0]`, a loop `for ... in {arg}`) handles one axis but "
                        "not the others: work on every axis (`[..., None]`, "
                        f"`{arg}.shape + (...,)`)"
                    )
    return None


def shape_clue(
    got: tuple[int, ...],
    want: tuple[int, ...],
    *,
    name: str,
    named: Mapping[str, int],
    inputs: Mapping[str, Any] | None = None,
    returned: Any = None,
) -> tuple[str, str | None]:
    """A wrong shape, said with the signature's names: ``(text, what it suggests)``.

    ``text`` is ``"expected (3, 4) = (T, S), got (4, 3) = (S, T)"``; the second item is a
    diagnosis when the difference is recognisable (an axis of size 1 too many, an axis
    lost, the sizes in another order, one size changed), else ``None``. With the case's
    ``inputs`` (and the raw ``returned`` value) it is read against the inputs' shapes: two
    axes of an input read in the other order, the size of the wrong axis of an input, one
    step too many or too few along an axis, an axis of a many-axis input handled as if the
    input had one, a bare number where a list is expected.
    """
    text = f"expected {_shape_text(want, named)}, got {_shape_text(got, named)}"
    yours = f"your `{name}`"
    clue = _input_clue(got, want, yours, named, inputs, returned)
    if clue is not None:
        return text, clue
    if len(got) == len(want) + 1:
        for i in range(len(got)):
            if got[i] == 1 and got[:i] + got[i + 1 :] == want:
                return text, (
                    f"{yours} has an extra axis of size 1 at axis {i} (a reduction with "
                    "keepdims=True, or a [:, None], where the result should not keep it)"
                )
    if len(got) + 1 == len(want):
        for i in range(len(want)):
            if want[:i] + want[i + 1 :] == got:
                lost = _label(want[i], named)
                return text, (
                    f"{yours} has lost an axis, the one of size {lost}: something reduced, "
                    "indexed or squeezed it away"
                )
    if len(got) == len(want) and sorted(got) == sorted(want):
        return text, (
            f"{yours} has the right sizes in another order: a transpose too many or too few, "
            "or operands of a product in the other order"
        )
    if len(got) == len(want):
        diffs = [i for i in range(len(got)) if got[i] != want[i]]
        if len(diffs) == 1 and got[diffs[0]] in named.values():
            i = diffs[0]
            return text, (
                f"axis {i} of {yours} has size {_label(got[i], named)} where it should have "
                f"{_label(want[i], named)}: which input gives that axis its size?"
            )
    if (
        len(got) == len(want)
        and got
        and {g - w for g, w in zip(got, want, strict=True)} in ({1}, {-1})
        and not set(got) & set(named.values())  # (d, d) for (T, T): another size, not n ± 1
    ):
        longer = "longer" if got[0] > want[0] else "shorter"
        return text, (
            f"every axis of {yours} is one {longer} than expected: an off-by-one in the "
            "size it was built with (n + 1, n - 1, or a range that starts at 1?)"
        )
    if not got and want:
        return text, f"{yours} is a single number: everything was summed into one"
    if got and not want:
        return text, (
            f"{yours} is an array of shape {got} where one number is expected: reduce over "
            "every axis (not along one), and return that number"
        )
    return text, None


def fixed_shape_clue(
    seen: Sequence[tuple[tuple[int, ...], tuple[int, ...], Mapping[str, Any]]], *, name: str
) -> str | None:
    """An output whose shape never changes while the right one does: sizes not read from
    the inputs (a hard-coded example).

    ``seen``: ``(the learner's shape, the expected shape, the case's inputs)`` per case.
    """
    if len(seen) < 2 or len({got for got, _, _ in seen}) != 1:
        return None
    if len({want for _, want, _ in seen}) == 1:
        return None
    varying = [
        arg
        for arg in seen[0][2]
        if all(isinstance(i.get(arg), int) and not isinstance(i.get(arg), bool) for *_, i in seen)
        and len({i[arg] for *_, i in seen}) > 1
    ]
    if seen[0][0] == () and all(len(want) >= 1 for _, want, _ in seen):
        return (
            f"your `{name}` is a single number on every case, while the right one has a "
            f"shape that follows the inputs ({', '.join(str(w) for _, w, _ in seen)}): a "
            "reduction (.mean(), .sum(), float(...), .item()) collapsed it; return one value "
            "per entry, with no reduction"
        )
    what = (
        f"whatever {' and '.join(varying)} {'is' if len(varying) == 1 else 'are'}"
        if varying
        else "on every case"
    )
    return (
        f"your `{name}` has shape {seen[0][0]} {what}, while the right shape changes from "
        f"case to case ({', '.join(str(w) for _, w, _ in seen)}): your code does not take "
        "its sizes from its inputs. A hard-coded example? Build the result from the "
        "arguments"
    )


def steady_offset_clue(
    seen: Sequence[tuple[tuple[int, ...], tuple[int, ...], Mapping[str, Any]]], *, name: str
) -> str | None:
    """An output one entry short (or long) along the same axis on every case, while that
    axis's right size changes from case to case: an off-by-one in the code, whatever other
    size the wrong one happens to equal on one case (B = max_len - 1, say).

    ``seen``: ``(the learner's shape, the expected shape, the case's inputs)`` per case.
    """
    if len(seen) < 2 or any(len(got) != len(want) for got, want, _ in seen):
        return None
    axes = {i for got, want, _ in seen for i in range(len(want)) if got[i] != want[i]}
    if len(axes) != 1:
        return None
    (i,) = axes
    offsets = {got[i] - want[i] for got, want, _ in seen}
    if offsets not in ({1}, {-1}) or len({want[i] for _, want, _ in seen}) < 2:
        return None
    pairs = ", ".join(f"{got[i]} for {want[i]}" for got, want, _ in seen[:3])
    if offsets == {1}:
        return (
            f"axis {i} of your `{name}` has one entry too many on every case ({pairs}): "
            f"one step too many along it ({_TOO_MANY_CAUSES})"
        )
    return (
        f"axis {i} of your `{name}` has one entry too few on every case ({pairs}): "
        f"{_ONE_STEP_MISSING}"
    )


def nan_clue(got: np.ndarray, *, name: str, inputs: Mapping[str, Any]) -> str | None:
    """Where the NaN or inf of an output sit, when that says why."""
    bad = ~np.isfinite(got)
    if not bad.any() or got.ndim == 0:
        return None
    yours = f"your `{name}`"
    for mask_name, mask in _masks(inputs):
        try:
            full = np.broadcast_to(mask, (*got.shape[:-1], mask.shape[-1]))
        except ValueError:
            continue
        blind = ~full.any(axis=-1)  # (..., T): rows that see no key
        rows = (
            bad.reshape((*bad.shape[: blind.ndim], -1)).any(axis=-1)
            if bad.ndim > blind.ndim
            else bad
        )
        if rows.shape == blind.shape and blind.any() and np.array_equal(rows, blind):
            return (
                f"{yours} has NaN exactly in the rows where `{mask_name}` hides every key: "
                "a softmax over a row of -inf is 0/0; such a row must give all-zero weights "
                "and a zero output"
            )
    return None


def cases_clue(
    passed: Sequence[tuple[str, Mapping[str, int], Mapping[str, Any], Mapping[str, Any]]],
    failed: Sequence[tuple[str, Mapping[str, int], Mapping[str, Any], Mapping[str, Any]]],
) -> str | None:
    """What the cases a learner gets right share, and the wrong ones lack.

    Each case is ``(label, named sizes, inputs, options)``. Returns a diagnosis when one
    feature separates them (a size that is always the same where the answer is right, a
    mask, an option), else ``None``.
    """
    if len(passed) < 2 or not failed:
        return None
    for size in sorted({k for _, named, _, _ in passed for k in named}):
        right = {named.get(size) for _, named, _, _ in passed}
        wrong = {named.get(size) for _, named, _, _ in failed}
        if len(right) == 1 and None not in right and not (right & wrong):
            (value,) = right
            return (
                f"right only when {size} = {value}: does your code use the number {value} "
                f"where it should read {size} from the inputs?"
            )
    for option in sorted({k for _, _, _, options in failed for k in options}):
        # the option separates the cases only when every wrong one has it
        if all(option not in options for _, _, _, options in passed) and all(
            option in options for _, _, _, options in failed
        ):
            return (
                f"right on the cases without `{option}=` and wrong on those with it: is the "
                f"`{option}` argument used?"
            )

    def column(cases: Sequence[tuple[Any, Any, Mapping[str, Any], Any]], arg: str) -> list[Any]:
        return [inputs.get(arg) for _, _, inputs, _ in cases]

    def plain(values: list[Any], kinds: tuple[type, ...]) -> bool:
        return all(isinstance(v, kinds) and not isinstance(v, bool) for v in values)

    for arg in sorted({k for _, _, inputs, _ in failed for k in inputs}):
        values, others = column(failed, arg), column(passed, arg)
        if not plain(values + others, (str, int)):
            continue
        categorical = isinstance(values[0], str)
        if len(set(values)) == 1 and values[0] not in others and (categorical or len(values) > 1):
            return (
                f"right on every case except those with {arg} = {values[0]!r}: look at what "
                f"your code does for that {arg}, and at what else those cases have in common "
                "(a sign, a value that only they reach)"
            )
    for arg in sorted({k for _, _, inputs, _ in passed for k in inputs}):
        right_list, wrong_values = column(passed, arg), column(failed, arg)
        if not plain(right_list + wrong_values, (int,)):
            continue
        right_values = set(right_list)
        if len(right_values) == 1 and not right_values & set(wrong_values):
            (value,) = right_values
            return (
                f"right only when {arg} = {value}, wrong with {arg} = "
                f"{', '.join(str(v) for v in sorted(set(wrong_values)))}: does your code use the "
                f"number {value} where it should read {arg}?"
            )
    with_mask = [any(_masks(inputs)) for _, _, inputs, _ in failed]
    without = [not any(_masks(inputs)) for _, _, inputs, _ in passed]
    if all(with_mask) and all(without):
        return "right without a mask and wrong with one: look at how the mask is applied"
    return None
