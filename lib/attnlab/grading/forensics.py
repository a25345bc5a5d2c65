"""Running the learner's code, and reading what went wrong from its traceback.

A check calls the learner's function through :func:`call_quietly` (fresh copies of the
inputs, NumPy's floating-point warnings silenced: the grader reports overflow itself). When
the call raises, the traceback says where: :func:`where` finds the innermost line of the
learner's own code, :func:`raised_directly` tells a stub's ``NotImplementedError`` from one
raised by another unfinished exercise it calls (:func:`unfinished_callee`), and
:func:`error_hints` turns NumPy's messages (broadcasting, matrix products) into advice.

Taught in: every chapter's exercises (first in exercises/02_similarity.ipynb)
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import re
import signal
import sysconfig
import textwrap
import threading
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np
import torch

from . import display
from .specs import Case

__all__ = [
    "TIME_LIMIT",
    "TooSlow",
    "call_quietly",
    "error_hints",
    "failing_line",
    "learner_frames",
    "line_diagnosis",
    "quiet",
    "raised_directly",
    "reversed_axes_clue",
    "signature_mismatch",
    "transposed_axes_clue",
    "unfinished_callee",
    "where",
    "widened_mask_clue",
]


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """No NumPy floating-point warnings: overflow and 0/0 are reported by the grader."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


TIME_LIMIT = 10.0
"""Processor seconds one call of the learner's function may use before it is stopped (a
right answer to any exercise takes well under a second)."""


class TooSlow(Exception):
    """Raised inside the learner's function when it runs past :data:`TIME_LIMIT`."""


def _importing(frame: Any) -> bool:
    """Whether ``frame`` or a caller of it is inside Python's import machinery."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Stop the code inside after ``seconds`` of processor time with :class:`TooSlow` (in the
    main thread, on systems with ``setitimer``; elsewhere no limit). An outer limit keeps
    running.

    Processor time, not wall time: an endless loop uses it up, while a machine busy with
    other programs does not stop a right answer. Never inside an import: a module stopped
    half-way stays half-initialised for the rest of the session (PyTorch imports ``sympy``
    lazily, the first time some layers run; cut off there, every later check that needs it
    would fail), so the limit waits for the import to finish and stops the code after it.

    Put the limit around a call (as :func:`call_quietly` does), not around a loop written
    inside the ``with``: CPython 3.13.0 can skip the ``try`` blocks (the ``with`` included)
    of the frame the signal handler raises in, never those of its callers.
    """
    if threading.current_thread() is not threading.main_thread() or not hasattr(
        signal, "setitimer"
    ):
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        if _importing(frame):
            signal.setitimer(signal.ITIMER_PROF, 0.05)  # again once the import is done
            return
        raise TooSlow(f"no answer after {seconds:g} s of processor time: the call was stopped")

    previous = signal.signal(signal.SIGPROF, stop)
    outer, _ = signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        left, _ = signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, signal.SIG_DFL if previous is None else previous)
        if outer:
            signal.setitimer(signal.ITIMER_PROF, max(outer - (seconds - left), 1e-3))


def call_quietly(fn: Callable[..., Any], case: Case) -> tuple[Any, tuple[Any, ...]]:
    """``fn`` on fresh copies of the case's inputs: ``(returned value, the arguments)``.

    A call that runs past :data:`TIME_LIMIT` raises :class:`TooSlow` (an endless loop)."""
    args = case.arguments()
    with quiet(), time_limit(TIME_LIMIT):
        return fn(*args, **case.options), args


def _filled(template: str, pattern: str, message: str) -> str:
    """``template`` filled with the groups ``pattern`` finds in ``message``; ``""`` if none."""
    found = re.search(pattern, message)
    return template.format(*found.groups()) if found else ""


def _broadcast_hint(message: str) -> str:
    """The hint for a broadcasting error, naming the shapes NumPy's or torch's message gives."""
    which = _filled(
        "sizes {0} and {1} met on the same axis and do not broadcast",
        r"size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\)",
        message,
    )
    if not which:
        shapes = _shapes(message)
        which = (
            f"the shapes {', '.join(shapes[:-1])} and {shapes[-1]} do not broadcast together"
            if len(shapes) >= 2
            else "the shapes did not line up"
        )
        added = _axis_added(shapes)
        if added:
            return f"{which}: {added}"
    return (
        f"{which}: one operand has an axis too many or too few, or its axes in another order "
        "(a reduction that dropped its axis, a transpose, a reshape, a missing [..., None])"
    )


def _axis_added(shapes: list[str]) -> str:
    """When one operand has more axes than the others and would broadcast with them but
    for one axis of size 1 (an ``[..., None]`` or ``unsqueeze`` too many): which operand and
    which axis; else ``""`` (with as many axes, the likelier fault is their order)."""
    found = [ast.literal_eval(shape) for shape in shapes]  # _shapes writes tuples
    for k, shape in enumerate(found):
        others = [o for i, o in enumerate(found) if i != k and o]
        if not others or len(shape) <= max(map(len, others)):
            continue  # an axis too many only where this operand has more than the rest
        for axis in reversed(range(len(shape))):
            if shape[axis] != 1:
                continue
            without = shape[:axis] + shape[axis + 1 :]
            try:
                np.broadcast_shapes(without, *others)
            except ValueError:
                continue
            return (
                f"{shapes[k]} is {without} with an axis of size 1 added (axis {axis}): "
                f"without it, it broadcasts with {', '.join(map(str, others))} as it is. "
                "An axis too many: added with None or unsqueeze to an input that already "
                "broadcasts, or kept by keepdims=True where the result needs none?"
            )
    return ""


def _fixed(hint: str) -> Callable[[str], str]:
    return lambda message: hint


def _shapes(message: str) -> list[str]:
    """The distinct shapes in an error message, as ``'(3, 5)'`` strings, in order."""
    shapes: list[str] = []
    for found in re.findall(r"\(([\d,\s]*)\)", message):
        shape = str(tuple(int(n) for n in found.replace(",", " ").split()))
        if shape not in shapes:
            shapes.append(shape)
    return shapes


def _aligned_hint(message: str) -> str:
    """np.dot's "shapes (3,5) and (3,5) not aligned": what a matrix product needs."""
    which = _filled(" {0} and {1}", r"shapes (\([\d,\s]*\)) and (\([\d,\s]*\))", message)
    return (
        f"np.dot of the shapes{which} is a matrix product: it pairs the last axis of the "
        "left operand with the first (or second-to-last) axis of the right one, and here "
        "those sizes differ"
    )


def _matmul_hint(message: str) -> str:
    """@'s "mismatch in its core dimension 0 ... (size 3 is different from 5)"."""
    which = _filled(" (sizes {1} and {0})", r"size (\d+) is different from (\d+)", message)
    return (
        "@ is a matrix product: the last axis of the left operand must have the size of "
        f"the second-to-last axis of the right one, and here they differ{which}"
    )


_EINSUM_HINT = (
    "your einsum subscripts give a fixed number of axes (one letter per axis), but this "
    "case's inputs have a different number of axes, or two letters that must match name "
    "axes of different sizes"
)

_DTYPE_HINT = (
    "two tensors of different precision met: one is float32, most likely made without "
    "`dtype=` (torch.zeros, torch.ones, torch.tensor and torch.arange default to "
    "float32) or by a cast such as `.float()`, while the inputs are float64"
)

_DTYPE_CLASH = ("same dtype", "float != double", "double != float", "Double and Float")
_CAST = re.compile(r"\.float\(\)|\.half\(\)|(?:torch|np)\.float(?:32|16)\b|['\"]float32['\"]")


def cast_clue(err: BaseException, fn: Any) -> str | None:
    """A precision clash whose float32 the learner's own cast made: the cast, by its line."""
    if not any(s in str(err) for s in _DTYPE_CLASH):
        return None
    learner = getattr(fn, "__learner__", fn)
    try:
        lines, first = inspect.getsourcelines(learner)
    except (OSError, TypeError):
        return None
    for number, line in enumerate(lines, start=first):
        found = _CAST.search(line.split("#")[0])
        if found:
            return (
                f"your `{found.group(0)}` (line {number}) makes float32 numbers out of the "
                "float64 inputs, and float32 then meets float64 in one operation: compute in "
                "the inputs' own dtype, without a cast"
            )
    return None


_INDEX_HINT = (
    "you indexed more axes than the array has (an index such as [:, None] or [i, j] assumes "
    "2-D data), but on this case the array has fewer axes"
)


def _pair_hint(message: str) -> str:
    """A ``torch.return_types`` pair used as a tensor: ``x.max(-1)`` for ``x.argmax(-1)``."""
    which = re.search(r"torch\.return_types\.(\w+)", message)
    name = which[1] if which else "max"
    return (
        f"`.{name}(dim)` (like torch.{name}(x, dim)) returns a pair, (values, indices), not "
        "one tensor, and your code used that pair as a tensor: take the part you need, "
        "`.values` or `.indices` (for the position of the largest entry alone there is "
        "argmax)"
    )


def _operand_hint(message: str) -> str:
    """``unsupported operand type(s) for @: 'ReLU' and 'Tensor'``, by what the operands are."""
    found = re.search(r"for (\S+): '([\w.]+)' and '([\w.]+)'", message)
    if found is None:
        return ""
    op, types = found[1], (found[2], found[3])
    layers = [t for t in types if isinstance(getattr(torch.nn, t, None), type)]
    if layers:
        layer = layers[0]
        return (
            f"one operand of `{op}` is an nn.{layer} layer, not a tensor: `nn.{layer}(h)` "
            f"does not apply {layer} to h, it builds a layer (h taken for one of its "
            "options); apply the function to the tensor (torch.nn.functional has one for "
            "each such layer), or build the layer first and then call it on the tensor"
        )
    scalars = [
        t
        for t in types
        if t in ("float", "int", "complex", "bool")
        or (t.startswith("numpy.") and t != "numpy.ndarray")
    ]
    if op == "@" and scalars:
        return (
            "@ needs arrays with at least one axis, and here it got single numbers (looping "
            "over a 1-D array gives numbers, not vectors)"
        )
    return ""


def _sequence_hint(message: str) -> str:
    """``torch.cat(a, b)``: the tensors not given as one sequence.

    PyTorch words it two ways: "cat(): argument 'tensors' (position 1) must be tuple of
    Tensors" (recent versions), and, as torch 2.5 does for ``cat(a, b, dim=1)``, "cat()
    received an invalid combination of arguments - got (Tensor, Tensor, ...), but expected
    one of: * (tuple of Tensors tensors, ...)"."""
    found = re.search(r"(\w+)\(\): argument 'tensors'", message)
    if found is None:
        found = re.search(
            r"(\w+)\(\) received an invalid combination of arguments - got \(Tensor, Tensor",
            message,
        )
        if found is None or "(tuple of Tensors tensors" not in message:
            return ""
    name = found[1]
    return (
        f"torch.{name} takes the tensors to join as one sequence (a list or a tuple) and the "
        f"axis as `dim`: given one by one, the first tensor is taken for that sequence and "
        "the second for the next argument"
    )


def _axis_hint(message: str) -> str:
    """NumPy's "axis 1 is out of bounds for array of dimension 1"."""
    which = _filled(
        "axis {0} does not exist in an array with {1} axes",
        r"axis (-?\d+) is out of bounds for array of dimension (\d+)",
        message,
    )
    return (
        f"the axis you named does not exist for this case's input{': ' + which if which else ''}"
        "; a fixed axis number only fits inputs with enough axes"
    )


def _torch_matmul_hint(message: str) -> str:
    """torch's "mat1 and mat2 shapes cannot be multiplied (3x5 and 4x5)" and its kin."""
    which = _filled(
        ": ({0}, {1}) @ ({2}, {3}) needs {1} = {2}", r"\((\d+)x(\d+) and (\d+)x(\d+)\)", message
    )
    return (
        "a matrix product whose inner sizes differ: the last axis of the left operand must "
        f"have the size of the second-to-last axis of the right one{which}; one operand "
        "needs a transpose, or is not the one you meant"
    )


def _cat_hint(message: str) -> str:
    axis = " (they differ along axis {0})"
    which = _filled(axis, r"except in dimension (\d+)", message) or _filled(
        axis, r"along dimension (\d+)", message
    )
    return (
        "concatenation joins arrays along one axis, and every other axis must have the same "
        f"size{which}: the axis you join along is not the one where the pieces differ"
    )


def _keyword_hint(message: str) -> str:
    """A keyword argument the function called does not take (``np.tril(..., dtype=bool)``)."""
    found = re.search(r"(\w+)\(\) got an unexpected keyword argument '(\w+)'", message)
    if found is None:
        return "a function was given a keyword argument it does not take: check its signature"
    fn, word = found.groups()
    said = f"`{fn}` takes no argument `{word}=`: look up the arguments it takes"
    if word == "dtype":
        return (
            f"{said}; give the dtype where the array is first made, or convert the result "
            "afterwards"
        )
    return said


_ERROR_HINTS: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("could not be broadcast", _broadcast_hint),
    ("got an unexpected keyword argument", _keyword_hint),
    (
        "is not defined",
        lambda message: _filled(
            "`{0}` is not defined where your code runs: a function or module it uses was "
            "never imported or defined there (run the notebook's import cell, or the cell "
            "that defines it, or import it yourself)",
            r"name '(\w+)' is not defined",
            message,
        ),
    ),
    (
        "as a data type",
        _fixed(
            "a number was read as a dtype: np.zeros, np.ones, np.empty and np.full take the "
            "shape as one tuple, and their next argument is the dtype (np.ones(T, T) reads "
            "the second T as one). Give the sizes together, in one tuple"
        ),
    ),
    (
        "only integer scalar arrays can be converted to a scalar index",
        _fixed(
            "an array was used where Python needs one integer: a slice bound or an index "
            "(`x[a:]` with an array `a`, one value per row). A slice takes one number; for "
            "a bound of its own in each row, compare the positions with the array "
            "(broadcasting), or loop over the rows"
        ),
    ),
    *(
        (
            negation,
            _fixed(
                "a minus sign does not invert booleans: `-mask` asks for the negative of "
                "True/False, which PyTorch and NumPy refuse. Flipping a boolean mask entry by "
                "entry is a logical not (the `~` operator, or logical_not())"
            ),
        )
        for negation in ("Negation, the `-` operator, on a bool tensor", "boolean negative")
    ),
    (
        "not compiled with CUDA",
        _fixed(
            "your code moves tensors to a GPU ('cuda'), which this machine does not have: the "
            "function should compute on the device its inputs come on, without moving them"
        ),
    ),
    (
        "Expected all tensors to be on the same device",
        _fixed(
            "your code moves some tensors to another device: the function should compute on "
            "the device its inputs come on, without moving them"
        ),
    ),
    ("must match the size of tensor b", _broadcast_hint),
    ("not aligned", _aligned_hint),
    ("mismatch in its core dimension", _matmul_hint),
    ("cannot be multiplied", _torch_matmul_hint),
    ("Expected size for first two dimensions of batch2 tensor", _torch_matmul_hint),
    ("size mismatch, got input", _torch_matmul_hint),
    ("Sizes of tensors must match except in dimension", _cat_hint),
    ("except for the concatenation axis must match", _cat_hint),
    (
        "masked_fill_ only supports boolean masks",
        _fixed(
            "masked_fill takes a boolean tensor, True where it fills: arithmetic on a mask "
            "(`1 - mask.float()`, `mask * 1.0`) makes a float tensor. The mask is boolean "
            "already, and its logical not (`~`) keeps it boolean"
        ),
    ),
    (
        "received an invalid combination of arguments - got (keepdims=",
        _fixed(
            "a NumPy function got a torch tensor: np.max, np.sum and the like hand "
            "`axis=` and `keepdims=` on to the tensor's own method, which takes `dim=` and "
            "`keepdim=`. The line that raised is NumPy code running on tensors: on tensors, "
            "call torch code (a torch version of that function)"
        ),
    ),
    (
        "stack expects each tensor to be equal size",
        _fixed(
            "torch.stack needs tensors of one shape, and here they differ: stack the pieces "
            "that belong together (one per step, each of the same shape)"
        ),
    ),
    (
        "all input arrays must have the same shape",
        _fixed(
            "np.stack needs arrays of one shape, and here they differ: stack the pieces that "
            "belong together (one per step, each of the same shape)"
        ),
    ),
    (
        "to have the same dtype",
        _fixed(_DTYPE_HINT),
    ),
    (
        "expected scalar type",
        _fixed(_DTYPE_HINT),
    ),
    (
        "must be Tensor, not numpy",
        _fixed(
            "a torch function got a NumPy array: this exercise works on NumPy arrays, so use "
            "NumPy's functions (np.exp, np.tanh, np.where, ...)"
        ),
    ),
    (
        "'Tensor' and 'numpy.ndarray'",
        _fixed("NumPy arrays and torch tensors were mixed in one operation: use one library"),
    ),
    (
        "'numpy.ndarray' and 'Tensor'",
        _fixed("NumPy arrays and torch tensors were mixed in one operation: use one library"),
    ),
    (
        "Can't call numpy() on Tensor that requires grad",
        _fixed(
            "your code goes through NumPy, which gradients cannot follow: use torch operations "
            "on the tensors themselves"
        ),
    ),
    (
        "TooSlow: no answer after",
        _fixed(
            "your function did not finish: a loop that never ends, most likely one that does "
            "not move on when nothing matches (the position it starts from stays the same)"
        ),
    ),
    (
        "bad operand type for unary ~: 'NoneType'",
        _fixed(
            "`mask` is None on the cases without a mask (mask=None is the default): use the "
            "mask only when one is given (`if mask is not None:`)"
        ),
    ),
    (
        "must be Tensor, not int",
        _fixed(
            "a torch function got a Python int (such as q.shape[-1]): for a plain number use "
            "math.sqrt (or ** 0.5), or make it a tensor first"
        ),
    ),
    (
        "must be Tensor, not float",
        _fixed(
            "a torch function got a Python float: for a plain number use the math module "
            "(math.sqrt, math.exp), or make it a tensor first"
        ),
    ),
    (
        "step must be greater than zero",
        _fixed(
            "torch tensors don't support negative steps such as [::-1]: reverse a tensor with "
            ".flip(dim) instead"
        ),
    ),
    (
        "does not require grad",
        _fixed(
            "autograd differentiates with respect to a tensor that requires grad and is used "
            "in the computation: the tensor you differentiate with respect to does not require "
            "grad (x[None].requires_grad_() makes a new tensor, x itself stays as it was); make "
            "x a leaf that requires grad before using it"
        ),
    ),
    (
        "Dimension out of range",
        _fixed(
            "the dim you named does not exist for this case's tensor (it has fewer axes); a "
            "fixed dim number only fits inputs with enough axes"
        ),
    ),
    (
        "is invalid for input of size",
        _fixed(
            "a reshape/view asked for a shape with another number of elements than the "
            "tensor holds: check the sizes you pass"
        ),
    ),
    (
        "view size is not compatible with input tensor's size and stride",
        _fixed(
            "`.view` needs memory laid out in order, which a transpose breaks: use `.reshape`"
            " (or `.contiguous().view`)"
        ),
    ),
    ("einstein sum", _fixed(_EINSUM_HINT)),
    ("einsum(): ", _fixed(_EINSUM_HINT)),
    (
        "boolean index did not match",
        _fixed(
            "a boolean index must have the shape of the array it indexes (it does not "
            "broadcast like the mask may): build a new array with np.where (or torch.where, "
            "masked_fill) instead"
        ),
    ),
    (
        "does not match the shape of the indexed tensor",
        _fixed(
            "a boolean index must have the shape of the tensor it indexes (it does not "
            "broadcast like a mask for masked_fill or torch.where does): build a new tensor "
            "with masked_fill (it fills where its argument is True) or torch.where instead"
        ),
    ),
    (
        "array split does not result in an equal division",
        _fixed(
            "np.split cuts the axis you name into equal pieces, and this axis's size does "
            "not divide: check which axis you split (the features are on the last axis, "
            "axis=-1; the positions on axis -2)"
        ),
    ),
    (
        "truth value of an array with more than one element is ambiguous",
        _fixed(
            "an array was used where Python needs one True/False: an `if`, `and`/`or`, or "
            "Python's built-in max/min/sorted, which compare whole rows of a 2-D array; use "
            "np.max / np.min (or .max()) for the largest entry, and .any() / .all() in a "
            "condition"
        ),
    ),
    (
        "Boolean value of Tensor with more than one value is ambiguous",
        _fixed(
            "a tensor was used where Python needs one True/False: an `if`, `and`/`or`, or "
            "Python's built-in max/min, which compare whole rows; use tensor.max() / "
            "torch.max for the largest entry, and .any() / .all() in a condition"
        ),
    ),
    (
        "Integers to negative integer powers are not allowed",
        _fixed(
            "NumPy refuses an integer raised to a negative integer power (10000 ** -2 with "
            "integer arrays): make the base a float, 10000.0, and check the exponent is the "
            "fraction you meant (a division by D gives floats too)"
        ),
    ),
    ("too many indices for array", _fixed(_INDEX_HINT)),
    ("too many indices for tensor", _fixed(_INDEX_HINT)),
    ("invalid index to scalar variable", _fixed(_INDEX_HINT)),
    ("is out of bounds for array of dimension", _axis_hint),
    ("torch.return_types.", _pair_hint),
    ("unsupported operand type(s) for", _operand_hint),
    ("argument 'tensors' (position 1) must be tuple of Tensors", _sequence_hint),
    ("received an invalid combination of arguments - got (Tensor, Tensor", _sequence_hint),
    (
        "before Module.__init__() call",
        _fixed(
            "nn.Module's own setup had not run when your `__init__` assigned its first layer: "
            "a module's `__init__` must first call the parent class's `__init__` (the stub's "
            "first line), which makes the place where layers and parameters are registered"
        ),
    ),
    (
        "modified by an inplace operation",
        _fixed(
            "autograd could not run backward through your code: it edits a tensor in place "
            "after computing it (`w[...] = ...`, `w += ...`, or a method ending in `_`, on "
            "softmax's output for example). Autograd keeps that tensor for the backward "
            "pass, so build a new tensor instead of overwriting it"
        ),
    ),
    (
        'missing 1 required positional arguments: "dim"',
        _fixed(
            "a softmax was called without `dim`: torch.softmax needs to be told which axis "
            "sums to 1; name the axis of the keys, the last one"
        ),
    ),
    (
        "must be a 3D tensor",
        _fixed(
            "torch.bmm (batched matrix product) takes only 3-D tensors, (B, n, m), and this "
            "case's tensors have another number of axes (2-D without a batch, or 4-D with "
            "heads): `@` (torch.matmul) multiplies the last two axes and accepts any number "
            "of leading ones"
        ),
    ),
    (
        "view() takes from 0 to 2 positional arguments",
        _fixed(
            "`.view` of a NumPy array is not torch's: NumPy's view(dtype) reinterprets the "
            "bytes as another dtype and takes no shape; use .reshape(...) to change the shape"
        ),
    ),
    (
        "Input must be 1- or 2-d",
        _fixed(
            "np.diag works on 1-D or 2-D arrays only, and this case's intermediate result "
            "has another number of axes"
        ),
    ),
)
"""``(substring, hint)``: an exception whose message contains the substring gets
``hint(message)``, after the grader's own hints."""


def dropped_axis_clue(message: str, inputs: dict[str, Any]) -> str | None:
    """A broadcasting error whose operand is an input with one axis reduced away.

    ``(2, 1)`` meeting ``(2, 3, 4)``, where the input ``mask`` is ``(2, 1, 4)``: a
    reduction of ``mask`` over its last axis without ``keepdims=True``. Only when exactly
    one input and one of its axes (of size > 1) explain a shape no input has.
    """
    if "broadcast" not in message and "must match the size" not in message:
        return None
    shapes = [
        tuple(int(n) for n in t.strip("()").replace(",", " ").split()) for t in _shapes(message)
    ]
    arrays = {
        name: tuple(value.shape)
        for name, value in inputs.items()
        if hasattr(value, "shape") and len(getattr(value, "shape", ())) >= 2
    }
    found = []
    for shape in shapes:
        if shape in arrays.values():
            continue
        for name, full in arrays.items():
            for axis in range(len(full)):
                if full[axis] > 1 and full[:axis] + full[axis + 1 :] == shape:
                    found.append((shape, name, full, axis - len(full)))
    if len(found) != 1:
        return None
    shape, name, full, axis = found[0]
    return (
        f"the operand of shape {shape} is `{name}`'s shape {full} without its axis {axis}: "
        "a reduction over that axis (sum, any, max, ...) dropped it, so the result no longer "
        f"lines up with the arrays that still have it. Keep the reduced axis "
        "(keepdims=True) and it broadcasts against them"
    )


def error_hints(message: str) -> list[str]:
    """The general hints for an exception message (broadcasting, matrix products)."""
    found = [hint(message) for s, hint in _ERROR_HINTS if s in message]
    return [h for h in found if h]


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
    if filename.startswith(("<__array_function__", "<frozen")):
        return True  # NumPy's dispatch wrappers (NumPy < 2), frozen standard modules
    path = str(Path(filename).resolve()) if filename else ""
    return path.startswith(_LIBRARY_DIRS) or "-packages" in path


def where(err: BaseException) -> str | None:
    """``'softmax, line 3: return e / e.sum()'``: the innermost frame in the learner's code."""
    for frame in reversed(traceback.extract_tb(err.__traceback__)):
        if _is_library(frame.filename):
            continue
        line = f": {frame.line.strip()}" if frame.line else ""
        return f"{frame.name}, line {frame.lineno}{line}"
    return None


def failing_line(err: BaseException) -> str:
    """The learner's line that raised ``err`` (its innermost frame), or ``""``."""
    for frame in reversed(traceback.extract_tb(err.__traceback__)):
        if not _is_library(frame.filename):
            return (frame.line or "").strip()
    return ""


def _called_frames(err: BaseException) -> list[FrameType]:
    """The traceback's frames from the function under test inwards.

    The first is the function the grader called (the frame after :func:`call_quietly`), the
    last the one that raised.
    """
    frames = [frame for frame, _ in traceback.walk_tb(err.__traceback__)]
    for i, frame in enumerate(frames):
        if frame.f_code is call_quietly.__code__:
            return frames[i + 1 :]
    return frames


def raised_directly(err: BaseException) -> bool:
    """Was ``err`` raised in the function under test's own frame (e.g. by its stub)?"""
    return len(_called_frames(err)) <= 1


def unfinished_callee(err: BaseException) -> str | None:
    """The learner's function, called by the one under test, that raised ``err``.

    ``None`` when ``err`` was raised directly or inside a library (an ordinary exception).
    """
    called = [f for f in _called_frames(err)[1:] if not _is_library(f.f_code.co_filename)]
    return called[-1].f_code.co_name if called else None


_SIGNATURE = re.compile(
    r"missing \d+ required (?:positional|keyword-only) arguments?"
    r"|takes (?:from \d+ to )?\d+ positional arguments? but \d+ (?:was|were) given"
    r"|got an unexpected keyword argument"
    r"|got multiple values for argument"
    r"|takes no arguments"
)


_TWO_AXES_TRANSPOSE = re.compile(r"\.transpose\(\s*-?\d+\s*,\s*-?\d+\s*\)")
_MASK_NEW_AXIS = re.compile(r"\bmask(?:\.unsqueeze\(\s*(?:1|-2)\s*\)|\[\s*:\s*,\s*None\s*\])")
_SPLIT_NO_AXIS = re.compile(r"\b(?:np|torch)\.(?:array_split|split|chunk|tensor_split)\(")
_PYTHON_NOT = re.compile(r"\bnot\b")
_CONDITION = re.compile(r"\b(?:if|elif|while|and|or|assert)\b|\b(?:max|min|sorted)\(")
_RESHAPE = re.compile(r"cannot reshape array of size (\d+) into shape \(([\d, ]+)\)")
_TORCH_RESHAPE = re.compile(r"shape '\[([-\d, ]+)\]' is invalid for input of size (\d+)")


# (.detach() is not here: x.detach().requires_grad_() is the right way to start a graph)
_GRADIENTS_OFF = re.compile(
    r"(?<![\w.])(?:torch\.)?(no_grad|inference_mode)\s*\(|set_grad_enabled\(\s*False"
)


def _gradients_off(code: Any, scope: dict[str, Any], depth: int = 3) -> tuple[str, str] | None:
    """``(function name, what)`` for the first of the learner's functions, ``code`` or one it
    calls (through ``scope``, its globals), whose source turns gradients off."""
    try:
        source = textwrap.dedent(inspect.getsource(code))
    except (OSError, TypeError):
        return None
    found = _GRADIENTS_OFF.search(source)
    if found is not None:
        what = {"no_grad": "torch.no_grad()", "inference_mode": "torch.inference_mode()"}
        return code.co_name, what.get(found.group(1) or "", "torch.set_grad_enabled(False)")
    if depth == 0:
        return None
    try:
        names = {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)}
    except SyntaxError:
        return None
    for name in sorted(names):
        callee = scope.get(name)
        inner = getattr(callee, "__code__", None)
        if inner is None or inner is code or _is_library(inner.co_filename):
            continue
        got = _gradients_off(inner, getattr(callee, "__globals__", scope), depth - 1)
        if got is not None:
            return got
    return None


def _no_graph_diagnosis(err: BaseException) -> str | None:
    """The tensor a learner differentiates has no graph ("element 0 of tensors does not
    require grad and does not have a grad_fn"): it is the *output* that autograd cannot
    follow back, so say where gradients were turned off, if the code says it."""
    frames = learner_frames(err)
    if "does not have a grad_fn" not in str(err) or not frames:
        return None
    outer = frames[0]
    found = _gradients_off(outer.f_code, outer.f_globals)
    if found is not None:
        name, what = found
        here = (
            "your function"
            if name == outer.f_code.co_name
            else f"`{name}`, which your code calls (your own function from an earlier exercise?)"
        )
        return (
            f"the tensor you differentiate has no graph: {here} uses `{what}`, and what is "
            "computed under it is not recorded, so autograd cannot follow it back to x. "
            "Gradient code needs the forward pass recorded (torch.no_grad() belongs to timing "
            "and evaluation code)"
            + ("" if name == outer.f_code.co_name else f"; fix `{name}` and run its check again")
        )
    return (
        "the tensor you differentiate has no graph: autograd recorded nothing between x and "
        "it. x must require grad before the forward pass uses it (x[None].requires_grad_() "
        "makes a new tensor, x itself stays as it was), and the forward pass must run with "
        "gradients on (no torch.no_grad(), .item() or NumPy on the way, and no .detach() "
        "after x)"
    )


def _call_arguments(line: str, start: int) -> str:
    """The text of a call's arguments, from just after its ``(`` to its closing one."""
    depth = 1
    for i in range(start, len(line)):
        depth += {"(": 1, ")": -1}.get(line[i], 0)
        if depth == 0:
            return line[start:i]
    return line[start:]


def widened_mask_clue(err: BaseException) -> str | None:
    """A broadcast error on a line that puts an axis of size 1 inside a (T, S) mask.

    A fallback, after the exercise's own diagnoses: in an exercise with head axes a mask
    line may fail for another reason (the heads), which the exercise names itself."""
    frames = [f for f in traceback.extract_tb(err.__traceback__) if not _is_library(f.filename)]
    line = (frames[-1].line or "") if frames else ""
    widened = _MASK_NEW_AXIS.search(line)
    if widened and any(s in str(err) for s in ("must match the size", "could not be broadcast")):
        return (
            f"`{widened.group(0)}` puts an axis of size 1 inside the mask, (T, 1, S) for a "
            "(T, S) mask, which lines its T axis up against another axis of the scores: a "
            "(T, S) mask broadcasts over the scores' leading axes as it is (axes of size 1 "
            "go in front, not in the middle)"
        )
    return None


_NAMED_TRANSPOSE = re.compile(
    r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\.transpose\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\)"
)
_SHAPE_ERRORS = (
    "must match the size",
    "could not be broadcast",
    "cannot be multiplied",
    "Expected size for first two dimensions",
    "mismatch in its core dimension",
    "not aligned",
)


def _named_value(frame: FrameType, name: str) -> Any:
    """``name`` (``k`` or ``self.k``) as the learner's frame holds it; None if unknown."""
    first, *rest = name.split(".")
    value = frame.f_locals.get(first, frame.f_globals.get(first))
    for attr in rest:
        value = getattr(value, attr, None)
    return value


def transposed_axes_clue(err: BaseException) -> str | None:
    """A product or broadcast that fails on a line where a tensor of three or more axes is
    transposed on two axes that are not its last two (``k.transpose(1, 3)`` for q kᵀ).

    A fallback, after the exercise's own diagnoses: it reads the transposed tensor's number
    of axes from the learner's frame, so a transpose of the last two (by any numbering) is
    never named."""
    frames = learner_frames(err)
    line = failing_line(err)
    if not frames or not any(s in str(err) for s in _SHAPE_ERRORS):
        return None
    if "@" not in line and not re.search(r"\b(?:matmul|bmm)\(", line):
        return None
    for found in _NAMED_TRANSPOSE.finditer(line):
        value = _named_value(frames[-1], found.group(1))
        ndim = getattr(value, "ndim", None)
        if not isinstance(ndim, int) or ndim < 3:
            continue
        i, j = (int(found.group(n)) for n in (2, 3))
        if not (-ndim <= i < ndim and -ndim <= j < ndim):
            continue
        a, b = sorted((i % ndim, j % ndim))
        if (a, b) == (ndim - 2, ndim - 1) or a == b:
            continue
        shape = tuple(int(n) for n in value.shape)
        return (
            f"`{found.group(0)}` swaps axes {a} and {b} of `{found.group(1)}`, which has "
            f"{ndim} axes, {shape}: `@` multiplies the matrices held in the last two axes and "
            "lines up every axis before them, so turning each of those matrices over swaps "
            "the last two axes only and leaves the others where they are"
        )
    return None


_NAMED_T = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\.T\b")


def reversed_axes_clue(err: BaseException) -> str | None:
    """A product or broadcast that fails on a line where ``x.T`` reverses a tensor of three
    or more axes (``block.T`` on a batch of rows): ``.T`` swaps the last two axes only in
    two dimensions. The tensor's number of axes is read from the learner's frame."""
    frames = learner_frames(err)
    if not frames or not any(s in str(err) for s in _SHAPE_ERRORS):
        return None
    for found in _NAMED_T.finditer(failing_line(err)):
        value = _named_value(frames[-1], found.group(1))
        ndim = getattr(value, "ndim", None)
        if not isinstance(ndim, int) or ndim < 3:
            continue
        shape = tuple(int(n) for n in value.shape)
        return (
            f"`{found.group(0)}` reverses all {ndim} axes of `{found.group(1)}`, {shape} -> "
            f"{shape[::-1]}, not just the last two: on a batch the batch axes move to the "
            "end and the scores leave the last axis; keep the axes where they are (a value "
            "per row lines up with a row's entries once it has a last axis of size 1)"
        )
    return None


def line_diagnosis(err: BaseException) -> str | None:
    """A diagnosis from the exception and the learner's line that raised it, for slips whose
    message alone misleads: a module the course's environment lacks, torch's two-axis
    ``transpose`` on a NumPy array, Python's ``not`` applied to a mask, a size from the
    example written into a reshape, a graph cut before the tensor a learner differentiates."""
    no_graph = _no_graph_diagnosis(err)
    if no_graph is not None:
        return no_graph
    if isinstance(err, ModuleNotFoundError):
        name = (err.name or "that module").split(".")[0]
        return (
            f"`{name}` is not part of the course's environment (it is not installed here), so "
            "this is not a mistake in your reasoning: write the step with NumPy (or torch) "
            "instead"
        )
    frames = [f for f in traceback.extract_tb(err.__traceback__) if not _is_library(f.filename)]
    line = (frames[-1].line or "") if frames else ""
    if "axes don't match array" in str(err) and _TWO_AXES_TRANSPOSE.search(line):
        return (
            "NumPy's `transpose` takes the new order of all the axes, one number per axis; "
            "`.transpose(1, 2)` with two axes is torch's spelling. On a NumPy array swap two "
            "axes with np.swapaxes (or give transpose the full order)"
        )
    split = _SPLIT_NO_AXIS.search(line)
    if split and not re.search(r"\b(axis|dim)\s*=", _call_arguments(line, split.end())):
        return (
            f"`{split.group(0)}...)` cuts along axis 0 unless it is told another axis "
            "(`axis=` in NumPy, `dim=` in torch): which axis of your array holds what you "
            "mean to cut, the first one?"
        )
    match = _TORCH_RESHAPE.search(str(err))
    if match:
        size = int(match.group(2))
        for n in (int(s) for s in match.group(1).replace(" ", "").split(",") if s):
            if n > 1 and size % n and re.search(rf"(?<![\w.]){n}(?![\w.])", line):
                return (
                    f"the {n} in your reshape is a size written into your code, and this "
                    f"case's tensor holds {size} numbers, not a multiple of {n}: read "
                    "every size from the tensor itself (its `.shape` or `.size(...)`) so "
                    "that any size fits"
                )
    if "is ambiguous" in str(err) and _PYTHON_NOT.search(line) and not _CONDITION.search(line):
        return (
            "Python's `not` asks for one True/False of the whole tensor (or array), which a "
            "mask of several entries does not have: it cannot flip each entry. Flipping a "
            "boolean mask entry by entry is a logical not applied element-wise (the `~` "
            "operator, or logical_not())"
        )
    match = _RESHAPE.search(str(err))
    if match:
        size = int(match.group(1))
        shape = [int(s) for s in match.group(2).replace(" ", "").split(",") if s]
        product = int(np.prod(shape)) if shape else 1
        called = re.search(r"\.(?:reshape|view)\(", line)
        written = _call_arguments(line, called.end()) if called else ""
        if (
            product
            and size % product == 0
            and size // product > 1
            and 1 in shape
            and re.search(r"(?<![\w.])1(?![\w.])", written)  # a 1 written in the call
        ):
            return (
                f"your reshape asks for {tuple(shape)}, {size // product} times fewer numbers "
                "than the array holds: a size in it is fixed (a 1 from the example?); read "
                "every size from the input's shape so that any batch fits"
            )
    return None


def learner_frames(err: BaseException) -> list[FrameType]:
    """The frames of the learner's own code that ``err`` passed through, innermost last."""
    return [f for f in _called_frames(err) if not _is_library(f.f_code.co_filename)]


def signature_mismatch(err: BaseException) -> bool:
    """Did calling the learner's function (or class) fail on its signature itself?

    True for a ``TypeError`` such as "missing 1 required positional argument" raised when
    the grader called it, before any line of the learner's code ran; a ``TypeError`` from a
    call inside the learner's code is the learner's own exception.
    """
    return (
        isinstance(err, TypeError)
        and _SIGNATURE.search(str(err)) is not None
        and not learner_frames(err)
    )


_SIZE_CALLS = {
    "reshape", "view", "zeros", "ones", "empty", "full", "range", "arange", "expand",
    "repeat", "tile", "broadcast_to", "eye", "tri", "rand", "randn", "new_zeros", "new_ones",
}  # fmt: skip


def _case_sizes(case: Any) -> set[int]:
    """Every axis length of a case's arrays and every int it passes (its sizes)."""
    found: set[int] = set()
    for value in list(case.inputs.values()) + list(case.options.values()):
        if hasattr(value, "shape"):
            found |= {int(n) for n in value.shape}
        elif isinstance(value, int) and not isinstance(value, bool):
            found.add(value)
    return found


def _size_literals(tree: ast.AST) -> list[tuple[int, ast.AST]]:
    """The int literals (>= 2) a function uses as sizes: in the arguments of a call that
    builds or reshapes an array, or loops a number of times, and in slice bounds."""
    found: list[tuple[int, ast.AST]] = []

    def literals(node: ast.AST, holder: ast.AST) -> None:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Constant) and type(sub.value) is int and sub.value >= 2:
                found.append((sub.value, holder))

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in _SIZE_CALLS:
                for arg in node.args:
                    if isinstance(arg, (ast.Constant, ast.Tuple, ast.List)):
                        literals(arg, node)
        elif isinstance(node, ast.Slice):
            for bound in (node.lower, node.upper):
                if isinstance(bound, ast.Constant):
                    literals(bound, node)
    return found


def hard_coded_size(fn: Any, case: Any, cases: Sequence[Any]) -> str | None:
    """A size written into the code: a literal that is a size of another case's inputs but
    of none of the failing case's (``reshape(2, 1)`` written for the example's two keys)."""
    learner = getattr(fn, "__learner__", fn)
    try:
        lines, first = inspect.getsourcelines(learner)
        source = textwrap.dedent("".join(lines))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError):
        return None
    here = _case_sizes(case)
    for value, node in _size_literals(tree):
        if value in here:
            continue
        fits = [c for c in cases if c is not case and value in _case_sizes(c)]
        if not fits:
            continue
        code = display.clipped(ast.get_source_segment(source, node) or "", 40)
        return (
            f"a size is written into your code: the {value} in `{code}` (line {first + node.lineno - 1}) fits case {fits[0].describe()}, but this case has no axis of "
            f"size {value}; read every size from the inputs (`.shape`, `len(...)`, or -1 "
            "in a reshape) so that any size fits"
        )
    return None
