"""Forensics: wrong outputs read against the right ones, exceptions read for their meaning.

attnlab.grading.relations on outputs made here (transposed, scaled by a named size, sign
flipped, normalised along another axis, shifted, reversed, right except where a mask hides
everything, right only on some cases), and the pipeline's rules for exceptions and
messages: an exception of the grader's own code is never the learner's, a TypeError is
"keep the signature" only when the call itself failed, a None gradient is not "forget
return", a float32 result says where float32 comes from, NaN explained by an inverted mask
is named as such, and torch answers must let gradients through.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import torch

from attnlab import grading
from attnlab.grading import Case, Grader
from attnlab.grading.ch01 import check_rnn_step
from attnlab.grading.ch03 import check_attention, check_attention_torch, check_self_attention_module
from attnlab.grading.forensics import error_hints
from attnlab.grading.relations import (
    Seen,
    cases_clue,
    fixed_shape_clue,
    nan_clue,
    shape_clue,
    sizes,
    value_clue,
)
from attnlab.grading.specs import AnswerProblem, returned
from attnlab.grading.status import NO_GRADIENT, WRONG_GRADIENT

RNG = np.random.default_rng(0)


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def clue(got, want, named=None, inputs=None, name="weights", expected=None):
    seen = Seen(got, want, expected or {name: want}, inputs or {}, {}, named or {})
    return value_clue([seen], name=name)


def test_sizes_are_read_from_the_signature():
    inputs = {"q": np.ones((2, 3, 5)), "k": np.ones((2, 4, 5)), "v": np.ones((2, 4, 6))}
    named = sizes(
        "attention(q, k, v) with q: (..., T, d), k: (..., S, d), v: (..., S, d_v)", inputs
    )
    assert named == {"T": 3, "d": 5, "S": 4, "d_v": 6}


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda w: w.T, "transposed"),
        (lambda w: -w, "sign flipped"),
        (lambda w: 2.0 * w, "multiplied by 2 (√4, the square root of d)"),
        (lambda w: w / 4.0, "multiplied by 0.25 (1 / (4 = d))"),
        (lambda w: np.flip(w, 0), "reversed along the second-to-last axis (axis 0)"),
        (lambda w: np.roll(w, 1, axis=0), "shifted by one position"),
    ],
)
def test_a_wrong_output_is_recognised_as_the_right_one_changed(make, words):
    want = softmax(RNG.standard_normal((5, 5)))
    assert words in (clue(make(want), want, named={"T": 5, "d": 4}) or "")


def test_normalised_along_another_axis_or_over_everything():
    scores = RNG.standard_normal((3, 4))
    want = softmax(scores, -1)
    assert "sums to 1 along the second-to-last axis (axis 0)" in clue(softmax(scores, 0), want)
    whole = np.exp(scores) / np.exp(scores).sum()
    assert "over the whole array" in clue(whole, want)


def test_right_except_where_the_mask_hides_every_key():
    mask = np.ones((3, 4), dtype=bool)
    mask[1] = False
    want = np.where(mask.any(-1, keepdims=True), softmax(RNG.standard_normal((3, 4))), 0.0)
    got = want.copy()
    got[1] = 0.25
    assert "hides every key" in clue(got, want, inputs={"mask": mask})
    nan = want.copy()
    nan[1] = np.nan
    assert "NaN exactly in the rows where `mask` hides every key" in nan_clue(
        nan, name="weights", inputs={"mask": mask}
    )


def test_a_slice_of_another_output_is_recognised():
    outputs = RNG.standard_normal((2, 5, 3))
    h_last = outputs[:, -1]
    got = outputs[:, 0]
    text = clue(got, h_last, name="h_last", expected={"outputs": outputs, "h_last": h_last})
    assert "first entry of `outputs` along axis 1" in text


def test_one_coincidence_is_no_relation():
    assert clue(np.array([3.0]), np.array([4.0])) is None  # one number: any factor fits


def test_shapes_are_said_with_the_signatures_names():
    text, reason = shape_clue((3, 1), (3,), name="out", named={"T": 3})
    assert text == "expected (3,) = (T,), got (3, 1) = (T, 1)"
    assert "extra axis of size 1" in reason
    text, reason = shape_clue((4, 3), (3, 4), name="weights", named={"T": 3, "S": 4})
    assert "(S, T)" in text and "another order" in reason


def test_a_wrong_shape_said_by_what_it_is():
    _, reason = shape_clue((2,), (), name="output", named={})
    assert "array of shape (2,) where one number is expected" in reason
    _, reason = shape_clue((5, 5), (4, 4), name="output", named={})
    assert "every axis of your `output` is one longer" in reason
    _, reason = shape_clue((3, 5), (4, 4), name="output", named={})
    assert reason is None  # no pattern: nothing claimed
    _, reason = shape_clue((2, 2), (3, 3), name="output", named={"T": 3, "d": 2})
    assert reason is None or "one shorter" not in reason  # (d, d) for (T, T): not n - 1


def test_a_wrong_shape_read_against_the_inputs_shapes():
    x = np.zeros((1, 6, 3))
    named = {"B": 1, "T": 6, "I": 3, "H": 4}
    # axes of the input read in the other order (time-first for batch-first)
    _, reason = shape_clue((6, 1, 4), (1, 6, 4), name="outputs", named=named, inputs={"x": x})
    assert "axes 0 and 1 in the other order" in reason and "`T, B, _ = x.shape`" in reason
    assert "`x[:, t]`" in reason
    # the last along the batch axis where the last time step was meant
    _, reason = shape_clue((6, 4), (1, 4), name="h_last", named=named, inputs={"x": x})
    assert "the size of `x`'s axis 1" in reason and "`a[:, -1]` along axis 1" in reason
    # a size from the wrong axis of a table
    E = np.zeros((12, 4))
    named = {"n_vocab": 12, "D": 4}
    _, reason = shape_clue((5, 12), (5, 4), name="output", named=named, inputs={"E": E})
    assert "the wrong axis of `E`" in reason and "`E.shape[0]` where `E.shape[1]`" in reason
    # one step too many or too few along one axis
    _, reason = shape_clue((1, 7, 4), (1, 6, 4), name="o", named={"B": 1, "T": 6, "H": 4})
    assert "one step too many" in reason and "initial state" in reason
    _, reason = shape_clue((1, 5, 4), (1, 6, 4), name="o", named={"B": 1, "T": 6, "H": 4})
    assert "one step missing" in reason
    # a many-axis input handled as if it had one axis
    ids = np.zeros((2, 3), dtype=int)
    _, reason = shape_clue((2, 4), (2, 3, 4), name="output", named={"D": 4}, inputs={"ids": ids})
    assert "lost an axis" in reason and "`len(ids)`" in reason
    # a bare number where a list is expected; a 0-d array is still "summed into one"
    _, reason = shape_clue((), (1,), name="output", named={}, returned=0)
    assert "a single number (0) where a list of 1 item is expected" in reason
    for summed in (np.zeros(()), np.float64(0.0)):  # a reduction's result, not a bare item
        _, reason = shape_clue((), (1,), name="output", named={}, returned=summed)
        assert "list" not in reason
    # no input explains it: the shape-only reading stays
    _, reason = shape_clue((4, 3), (3, 4), name="w", named={"T": 3, "S": 4}, inputs={})
    assert "another order" in reason


def test_a_shape_that_never_changes_is_a_hard_coded_example():
    seen = [((3, 3), (T, T), {"T": T}) for T in (1, 2, 4)]
    reason = fixed_shape_clue(seen, name="output")
    assert "shape (3, 3) whatever T is" in reason and "hard-coded" in reason
    # the right shape does not change either: nothing to say
    assert fixed_shape_clue([((3,), (2,), {"T": 1}), ((3,), (2,), {"T": 2})], name="o") is None
    # the learner's shape changes: not this mistake
    assert fixed_shape_clue([((1,), (2,), {"T": 1}), ((2,), (3,), {"T": 2})], name="o") is None
    # a single number where the right output follows the input's shape: a reduction
    scalar = fixed_shape_clue([((), (1,), {}), ((), (3, 4), {})], name="perplexity")
    assert "single number" in scalar and "reduction" in scalar and "hard-coded" not in scalar


def test_cases_tell_a_hard_coded_size_and_an_ignored_input():
    def case(d, kind="a"):
        return ("", {"d": d}, {"kind": kind}, {})

    assert "right only when d = 4" in cases_clue([case(4), case(4)], [case(8), case(16)])
    assert "kind = 'b'" in cases_clue([case(4), case(8)], [case(4, "b")])
    assert cases_clue([case(4)], [case(8)]) is None  # one right case proves nothing


def test_an_option_is_blamed_only_when_every_wrong_case_has_it():
    def case(**options):
        return ("", {}, {}, options)

    plain, tempered = case(), case(temperature=0.5)
    assert "`temperature=`" in cases_clue([plain, plain], [tempered, tempered])
    # wrong on a case without the option too: the option does not explain it
    assert cases_clue([plain, plain], [plain, tempered]) is None


# ------------------------------------------------------------------ exceptions and messages


def test_an_exception_of_the_graders_own_code_is_never_the_learners():
    # A harness written in the grading package (as a chapter's is): its line fails on
    # what the learner's function returned.
    names = {}
    exec(
        compile("def run(fn, x):\n    return fn(x).sum(dim=7)\n", grading.__file__, "exec"),
        names,
    )
    run = names["run"]
    grader = Grader(
        name="harness",
        signature="f(x)",
        reference=lambda x: torch.as_tensor(1.0),
        cases=(Case("a vector", {"x": torch.ones(3)}),),
    )
    result = grader.check(functools.partial(run, lambda y: y))
    assert result.status == "raised an exception"
    assert "what your code returned or built failed when used" in result.message
    assert "\n  at " not in result.message  # no line of the learner's is blamed


def test_a_problem_found_by_the_graders_own_code_is_reported_as_it_is():
    with pytest.raises(AnswerProblem) as found:
        returned(torch.ones(2, 3), ("out", "weights"), "your forward")
    assert "returned a Tensor of shape (2, 3)" in found.value.message

    class OnlyOut(torch.nn.Module):
        def __init__(self, d_model, d_head):
            super().__init__()
            self.W_q = torch.nn.Linear(d_model, d_head, bias=False)
            self.W_k = torch.nn.Linear(d_model, d_head, bias=False)
            self.W_v = torch.nn.Linear(d_model, d_head, bias=False)

        def forward(self, x, mask=None):
            q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
            return torch.softmax(q @ k.transpose(-2, -1) / 2, -1) @ v

    result = check_self_attention_module(OnlyOut)
    assert result.status == "wrong type"
    assert "not enough values to unpack" not in result.text
    assert "return all 2: (out, weights)" in result.diagnosis


def test_keep_the_signature_only_when_the_call_itself_failed():
    result = check_rnn_step(lambda x_t, h_prev, W_ih, W_hh: x_t)
    assert result.diagnosis.startswith("keep the signature of the exercise")

    def passes_a_bad_argument(x_t, h_prev, W_ih, W_hh, b):
        return torch.tanh(x_t @ W_ih.T + h_prev @ W_hh.T + b, dim=1)  # tanh takes no dim

    result = check_rnn_step(passes_a_bad_argument)
    assert result.status == "raised an exception"
    assert "keep the signature" not in (result.diagnosis or "")


def test_a_float32_result_says_where_float32_comes_from():
    def step(x_t, h_prev, W_ih, W_hh, b):
        out = torch.zeros(x_t.shape[0], W_hh.shape[0])  # float32 by default
        out += torch.tanh(x_t @ W_ih.T + h_prev @ W_hh.T + b)
        return out

    result = check_rnn_step(step)
    assert result.status == "wrong type"
    assert "torch.zeros" in result.diagnosis and "dtype=" in result.diagnosis
    assert "no dtype conversions" not in result.diagnosis


def test_a_none_gradient_is_not_a_forgotten_return():
    from attnlab.grading.pipeline import _none_item

    assert "forget" not in _none_item("W_q.weight.grad")
    assert "no gradient reached it" in _none_item("W_q.weight.grad")


def test_nan_from_an_inverted_mask_is_named_as_the_mask():
    def attention(q, k, v, mask=None):
        scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = np.where(mask, -np.inf, scores)  # hides the visible keys
        e = np.exp(scores - scores.max(-1, keepdims=True))
        weights = e / e.sum(-1, keepdims=True)
        return weights @ v, weights

    result = check_attention(attention)
    assert result.status == "NaN or inf"
    assert "inverted" in result.diagnosis or "wrong way round" in result.diagnosis
    assert "exp overflowing" not in result.diagnosis


def test_a_softmax_over_the_wrong_axis_with_nan_is_named_as_the_axis():
    def attention_torch(q, k, v, mask=None):
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-2)
        return weights @ v, weights

    result = check_attention_torch(attention_torch)
    assert "axis" in result.diagnosis or "dim" in result.diagnosis, result.text


def test_torch_answers_must_let_gradients_through():
    def through_numpy(x_t, h_prev, W_ih, W_hh, b):
        return torch.from_numpy(np.tanh(step(x_t, h_prev, W_ih, W_hh, b).numpy()))

    def step(x_t, h_prev, W_ih, W_hh, b):
        return x_t @ W_ih.T + h_prev @ W_hh.T + b

    result = check_rnn_step(through_numpy)
    assert result.status == NO_GRADIENT
    assert "NumPy" in result.diagnosis

    def detached_bias(x_t, h_prev, W_ih, W_hh, b):
        return torch.tanh(x_t @ W_ih.T + h_prev @ W_hh.T + b.detach())

    result = check_rnn_step(detached_bias)
    assert result.status == WRONG_GRADIENT
    assert "`b`" in result.message and "`.detach()`" in result.diagnosis


def test_time_limit_stops_an_endless_call_and_restores_the_handler():
    import signal
    import time

    from attnlab.grading.forensics import TooSlow, time_limit

    def endless():
        while True:
            pass

    before = signal.getsignal(signal.SIGPROF)
    began = time.perf_counter()
    with pytest.raises(TooSlow, match=r"no answer after 0\.2 s of processor time"):
        with time_limit(0.2):
            endless()
    assert time.perf_counter() - began < 30
    assert signal.getsignal(signal.SIGPROF) == before
    assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)
    with time_limit(5.0):  # a call that finishes in time is not stopped
        assert sum(range(1000)) == 499500
    with time_limit(0.2):  # waiting uses no processor time: a busy machine stops nothing
        time.sleep(0.5)


def test_time_limit_stops_a_called_function_every_time():
    import signal
    import time

    from attnlab.grading.forensics import TooSlow, time_limit

    # the learner's code runs as a call (call_quietly): CPython 3.13.0 can skip the `try`
    # blocks of the frame a signal handler raises in (a few times in a hundred, where the
    # handler runs after a call to a built-in), never those of its callers
    def spin():
        end = time.process_time() + 5
        while time.process_time() < end:
            pass

    before = signal.getsignal(signal.SIGPROF)
    for _ in range(100):
        with pytest.raises(TooSlow), time_limit(0.01):
            spin()
    assert signal.getsignal(signal.SIGPROF) == before
    assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)


def test_time_limit_never_stops_an_import_half_way(tmp_path, monkeypatch):
    import sys
    import time

    from attnlab.grading.forensics import TooSlow, time_limit

    # an import that computes for longer than the limit (as a first `import sympy` does
    # on a slow machine), then the learner's code that goes on for too long
    (tmp_path / "attnlab_slow_import.py").write_text(
        "import time\nend = time.process_time() + 0.4\nwhile time.process_time() < end:\n"
        "    pass\nDONE = True\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "attnlab_slow_import", raising=False)

    def learners_code():
        import attnlab_slow_import  # noqa: F401

        end = time.process_time() + 5
        while time.process_time() < end:
            pass

    with pytest.raises(TooSlow), time_limit(0.1):
        learners_code()
    assert sys.modules["attnlab_slow_import"].DONE  # the import ran to its end


def _uses_q(q, k):
    return q


def _uses_shift(shift, top):
    return shift + top


def test_generated_diagnoses_drop_names_the_learners_code_lacks():
    from attnlab.grading.pipeline import _in_learner_terms

    text = "`*` where `@` is needed (in the line that computes `shift`)"
    assert _in_learner_terms(text, _uses_q) == "`*` where `@` is needed"
    assert _in_learner_terms(text, _uses_shift) == text
    text = "the max (`top`) is not subtracted"
    assert _in_learner_terms(text, _uses_q) == "the max is not subtracted"
    assert _in_learner_terms(text, _uses_shift) == text


def test_a_broadcast_of_an_input_reduced_without_keepdims_is_named():
    from attnlab.grading.forensics import dropped_axis_clue

    message = "operands could not be broadcast together with shapes (2,1) () (2,3,4)"
    inputs = {"scores": np.zeros((2, 3, 4)), "mask": np.ones((2, 1, 4), bool)}
    clue = dropped_axis_clue(message, inputs)
    assert "`mask`'s shape (2, 1, 4) without its axis -1" in clue and "keepdims=True" in clue
    # a shape that is an input's own, or that no single reduction explains: nothing claimed
    assert (
        dropped_axis_clue("could not be broadcast together with shapes (2,1,4) (3,)", inputs)
        is None
    )
    assert (
        dropped_axis_clue("could not be broadcast together with shapes (7,) (2,3,4)", inputs)
        is None
    )


# ------------------------------------------------------------------ a size written in


def _two_keys_written_in(q, k, targets):
    c = (targets - k @ q) / (q @ q)
    return k + c.reshape(2, 1) * q


def test_a_size_written_into_the_code_is_named_from_the_cases():
    from attnlab.grading.forensics import hard_coded_size

    two = Case("two keys", {"q": np.ones(4), "k": np.ones((2, 4)), "targets": np.ones(2)})
    five = Case("five keys", {"q": np.ones(8), "k": np.ones((5, 8)), "targets": np.ones(5)})
    found = hard_coded_size(_two_keys_written_in, five, (two, five))
    assert found is not None
    assert "the 2 in `c.reshape(2, 1)`" in found and '"two keys"' in found
    # on a case that has an axis of size 2, the 2 may be right: nothing is said
    assert hard_coded_size(_two_keys_written_in, two, (two, five)) is None


def test_a_wrong_helper_the_learner_never_calls_is_not_blamed():
    from attnlab.grading.pipeline import _names_used

    scope = {"__name__": "notebook"}
    exec(  # a notebook: a wrong earlier exercise, a helper, a function calling the helper
        "def attention_torch(q, k, v):\n    return None\n"
        "def own(x):\n    return x\n"
        "def calls_own(x):\n    return own(x)\n"
        "def calls_it(x):\n    return own(attention_torch(x, x, x))\n",
        scope,
    )
    used = _names_used(scope["calls_own"], scope)
    assert used is not None and "own" in used and "attention_torch" not in used
    assert "attention_torch" in _names_used(scope["calls_it"], scope)


def test_cat_without_a_sequence_is_named_in_both_of_pytorchs_wordings():
    # torch 2.5 (the lowest allowed) words torch.cat(a, b, dim=1) as an invalid combination;
    # later versions name the 'tensors' argument. Another function's invalid combination
    # gets no such hint.
    older = (
        "TypeError: cat() received an invalid combination of arguments - got (Tensor, Tensor, "
        "dim=int), but expected one of:\n * (tuple of Tensors tensors, int dim = 0, *, Tensor "
        "out = None)\n"
    )
    newer = "TypeError: cat(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor"
    other = (
        "TypeError: matmul() received an invalid combination of arguments - got (Tensor, "
        "Tensor, Tensor), but expected one of:\n * (Tensor input, Tensor other, *, Tensor out = "
        "None)\n"
    )
    for message in (older, newer):
        assert any(
            "torch.cat takes the tensors to join as one sequence" in h for h in error_hints(message)
        )
    assert not any("one sequence" in h for h in error_hints(other))


def _raised(fn, *args):
    try:
        fn(*args)
    except Exception as err:  # the error itself is what is tested
        return err
    raise AssertionError("expected an exception")


def test_a_transpose_of_axes_other_than_the_last_two_is_named_by_its_axes():
    from attnlab.grading.forensics import transposed_axes_clue

    q, k = torch.zeros(2, 3, 5, 4), torch.zeros(2, 3, 6, 4)

    def wrong(q, k):
        return q @ k.transpose(1, 3)

    def right_then_other_mistake(q, k):
        return q @ k.transpose(-2, -1) @ k.transpose(2, 3)  # the second product fails

    def three_axes(q, k):
        return q[0] @ k[0].transpose(0, 1)  # no name: the transposed tensor is not read

    clue = transposed_axes_clue(_raised(wrong, q, k))
    assert clue is not None and "swaps axes 1 and 3 of `k`" in clue and "(2, 3, 6, 4)" in clue
    assert transposed_axes_clue(_raised(right_then_other_mistake, q, k)) is None
    assert transposed_axes_clue(_raised(three_axes, q, k)) is None


def test_a_full_reversal_of_a_batch_by_dot_T_is_named_by_its_shapes():
    from attnlab.grading.forensics import reversed_axes_clue

    block, m = np.zeros((2, 3, 4)), np.zeros((2, 3))

    def wrong(block, m):
        return np.exp(block.T - m).T

    def matrix(block, m):
        rows = block[0]
        return rows.T - m  # a 2-D .T swaps the last two axes: not the mistake named

    clue = reversed_axes_clue(_raised(wrong, block, m))
    assert clue is not None and "reverses all 3 axes of `block`" in clue
    assert "(2, 3, 4) -> (4, 3, 2)" in clue
    assert reversed_axes_clue(_raised(matrix, block, m)) is None


def test_axes_in_another_order_under_a_signature_that_names_fewer_axes():
    """Round 7: "(B, 1, max_len)" names no axis of size 1, so the signature's axis names
    are fewer than the output's axes: the clue numbers the axes instead of failing."""
    from attnlab.grading.relations import _order_text

    assert "the order (2, 1, 0) of the expected axes" in _order_text((2, 1, 0), ())
    assert "the order (1, 0, 2) of the expected axes" in _order_text((1, 0, 2), ("B", "S"))
    assert "(S, B) where (B, S) is expected" in _order_text((1, 0), ("B", "S"))
