"""The mutation engine (attnlab.grading.mutants) on small answers written for the tests.

What each operator makes, that only the answer lines change, that keys read the same from
the source, that a mutant that would loop forever is stopped, and that a grader names the
generated mistake that reproduces a learner's answer (outputs or exception).
"""

from __future__ import annotations

import ast
import math
from collections import Counter

import numpy as np
import pytest

from attnlab.grading import mutants
from attnlab.grading.ch02 import check_softmax
from attnlab.grading.ch03 import ATTENTION, check_attention

SOFTMAX = '''def softmax(x, axis=-1, temperature=1.0):
    """Given to the learner."""
    ### BEGIN SOLUTION
    z = x / temperature
    z = z - z.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)
    ### END SOLUTION'''

ATTEND = """def attend(q, k, v, mask=None):
    d = q.shape[-1]  # given, not part of the answer
    ### BEGIN SOLUTION
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return weights @ v, weights
    ### END SOLUTION"""


def by_key(source):
    return {m.key: m for m in mutants.generate(source)}


def test_each_family_of_operators_applies_where_it_fits():
    kinds = Counter(m.kind for m in mutants.generate(SOFTMAX))
    assert {"axis", "scale", "drop", "inplace", "swap", "sign", "dtype"} <= set(kinds)
    kinds = Counter(m.kind for m in mutants.generate(ATTEND))
    assert {"transpose", "fill", "input", "scale", "return", "product", "swap"} <= set(kinds)


def test_axis_mutants_cover_every_reduction_and_keepdims():
    found = by_key(SOFTMAX)
    assert (
        "axis: z.max(axis=axis, keepdims=True) in z = z - z.max(axis=axis, keepdims=True) -> z.max(axis=-1, keepdims=True)"
        in found
    )
    assert any(k.endswith("-> z.max(axis=axis)") for k in found)  # keepdims dropped
    assert any(k.endswith("-> e.sum()") for k in found)  # a reduction over everything
    described = [m.description for m in found.values() if m.kind == "axis"]
    assert any("ignores the `axis` it is given" in d for d in described)


REPEAT = """def repeat_heads(k, n):
    ### BEGIN SOLUTION
    return k.repeat_interleave(n, dim=1)
    ### END SOLUTION"""


def test_an_axis_left_out_of_a_repeat_flattens_and_another_axis_is_named():
    found = by_key(REPEAT)
    flat = found[
        "axis: k.repeat_interleave(n, dim=1) in return k.repeat_interleave(n, dim=1) -> k.repeat_interleave(n)"
    ]
    assert "without `dim=` works on the array flattened" in flat.description
    other = found[
        "axis: k.repeat_interleave(n, dim=1) in return k.repeat_interleave(n, dim=1) -> k.repeat_interleave(n, dim=0)"
    ]
    assert "along the wrong axis: yours works along axis 0" in other.description
    assert "reduce" not in other.description  # a repeat reduces nothing


def test_scale_fill_transpose_and_input_mutants_say_what_changed():
    texts = {m.description for m in mutants.generate(ATTEND)}
    assert any(t.startswith("the division by `np.sqrt(d)` is missing") for t in texts)
    assert any(t.startswith("you divided by `d`, not by its square root") for t in texts)
    assert any("filled with 0, and exp(0) = 1" in t for t in texts)
    assert any("a finite number (-1e9)" in t for t in texts)
    assert any("`k.T` reverses every axis of a batch" in t for t in texts)
    assert "you used `v` where `k` belongs" in texts
    assert any("a mask read the wrong way round" in t for t in texts)


def test_only_the_answer_lines_change():
    for mutant in mutants.generate(ATTEND):
        assert "d = q.shape[-1]" in mutant.source, mutant.key


def test_keys_are_unique_and_read_from_the_source():
    found = mutants.generate(ATTEND)
    keys = [m.key for m in found]
    assert len(keys) == len(set(keys))
    assert "drop: if mask is not None: -> (left out)" in keys


def test_a_mutant_that_would_loop_forever_is_stopped():
    source = """def count(n):
    ### BEGIN SOLUTION
    layers = 0
    while 2**layers < n:
        layers += 1
    return layers
    ### END SOLUTION"""
    stuck = [m for m in mutants.generate(source) if "update of `layers`" in m.description]
    assert stuck
    made = mutants.build(stuck[0].source, "count", {})
    with pytest.raises(mutants.LoopLimit):
        made(10)


def test_hard_coded_sizes_take_the_value_of_the_first_run():
    names = {"np": np, "softmax": None}
    found = mutants.hard_coded(ATTEND, "attend", names, lambda fn: None)
    assert found == []  # d = q.shape[-1] is given, outside the answer
    source = ATTEND.replace("np.sqrt(d)", "np.sqrt(q.shape[-1])")
    names = {"np": np, "softmax": lambda s: s}
    q, k, v = np.ones((2, 5)), np.ones((3, 5)), np.ones((3, 2))
    found = mutants.hard_coded(source, "attend", names, lambda fn: fn(q, k, v))
    assert [m.key for m in found] == ["constant: q.shape[-1] -> 5"]
    assert "fixed number 5" in found[0].description


def test_a_grader_names_the_generated_mistake_that_gives_the_learners_outputs():
    def softmax(x, axis=-1, temperature=1.0):
        z = x / temperature
        e = np.exp(z - z.max(axis=axis, keepdims=True))
        return e / e.sum(axis=0, keepdims=True)  # the sum along axis 0 only

    result = check_softmax(softmax)
    assert result.diagnosed, result.text
    assert "`sum`" in result.diagnosis and "axis 0" in result.diagnosis


def test_a_grader_names_the_generated_mistake_that_raises_the_learners_exception():
    def attention(q, k, v, mask=None):
        scores = q @ k.T / math.sqrt(q.shape[-1])  # .T reverses a batch's axes
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        e = np.exp(scores - scores.max(-1, keepdims=True))
        weights = e / e.sum(-1, keepdims=True)
        return weights @ v, weights

    result = check_attention(attention)
    assert result.status == "raised an exception"
    assert result.diagnosed
    assert "LAST two axes" in result.diagnosis  # the grader's own hint comes first


def test_generated_mistakes_are_computed_once_per_grader():
    first = ATTENTION.generated_candidates()
    assert first is ATTENTION.generated_candidates()
    assert len(first) == len(ATTENTION.mutants())


def test_a_missing_division_names_its_factor_or_says_a_division():
    slide = """def slide(q, k, targets):
    ### BEGIN SOLUTION
    shift = (targets - k @ q) / (q @ q)
    other = shift / (np.linalg.norm(q) * np.sum(k, axis=-1) + 1.0)
    return k + other[:, None] * q
    ### END SOLUTION"""
    texts = {m.description for m in mutants.generate(slide)}
    missing = [t for t in texts if "is missing" in t and "division" in t]
    assert any(t.startswith("the division by q·q (q's squared length) is missing") for t in missing)
    assert any(t.startswith("a division is missing") for t in missing)  # a long factor
    assert not any("division by is" in t or "division by  " in t for t in texts)


def test_a_tree_copy_holds_the_fields_only_whatever_ipython_attached():
    """IPython's traceback display (its `executing` helper) sets a `parent` on every node it
    parses, the shared `Load`/`Add` nodes of every later parse included; a copy that
    followed it dragged a whole file into each mutant (grading ten times slower)."""
    tree = ast.parse("y = a * b + c[0]")
    shared = list({id(n): n for n in ast.walk(tree) if not n._fields}.values())  # Load, Add, ...
    big = ast.parse("\n".join(f"v{i} = v{i - 1} + {i}" for i in range(1, 300)))
    try:
        for node in shared:
            node.parent = big
        copied = mutants._clone(tree)
        nodes = list(ast.walk(copied))
        assert len(nodes) == len(list(ast.walk(tree))) < 30
        assert all(not hasattr(n, "parent") or n in shared for n in nodes)
        assert ast.unparse(copied) == "y = a * b + c[0]"
        assert all(n is not o for n, o in zip(nodes, ast.walk(tree), strict=True) if n._fields)
        source = SOFTMAX
        assert mutants.generate(source)  # still made, and the same as before
    finally:
        for node in shared:
            del node.parent


def test_grading_after_an_ipython_traceback_copies_small_trees():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        shell.run_cell("x = [1, 2][0] * 3 + 2.0 ^ 1")  # a traceback, shown by IPython
        sizes = []
        original = mutants._clone

        def measured(node):
            copied = original(node)
            sizes.append(sum(1 for _ in ast.walk(copied)) if isinstance(node, ast.AST) else 0)
            return copied

        mutants._clone = measured
        try:
            mutants._generate.cache_clear()
            assert mutants.generate(SOFTMAX)
        finally:
            mutants._clone = original
        assert sizes and max(sizes) < 200, max(sizes)
    finally:
        InteractiveShell.clear_instance()
