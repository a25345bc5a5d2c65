"""Chapter 6's graders: right answers pass, stubs and planted bugs get the expected report.

The "learner" functions below are written here, independently of the planted mistakes in
``attnlab.grading.ch06``, the way a learner would write them: with NumPy, with torch, with
loops. Every planted mistake must be recognised as itself, and every listed wrong answer of
a prediction question must get its own diagnosis. The two mask converters are graded by
PyTorch's behaviour (their masks go into nn.MultiheadAttention or
F.scaled_dot_product_attention), so the tests below also check that converters PyTorch
accepts pass although they differ from attnlab's, and that a mistake shows as what PyTorch
does with it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import attnlab
from attnlab.grading.ch06 import (
    BLIND_ROW,
    FILL_LEAK,
    GRADERS,
    Attend,
    check_blind_row,
    check_causal_mask,
    check_from_hf_attention_mask,
    check_future_change,
    check_masked_softmax,
    check_padding_mask,
    check_to_key_padding_mask,
    summary,
)

CHECKS = {
    "causal_mask": check_causal_mask,
    "padding_mask": check_padding_mask,
    "masked_softmax": check_masked_softmax,
    "to_key_padding_mask": check_to_key_padding_mask,
    "from_hf_attention_mask": check_from_hf_attention_mask,
    "future_change": check_future_change,
}

# ------------------------------------------------------------------ correct answers, several ways


def causal_tril(T):
    return np.tril(np.ones((T, T), dtype=bool))


def causal_compare(T):
    i = np.arange(T)
    return i[None, :] <= i[:, None]  # key j <= query i


def causal_loops(T):
    mask = np.zeros((T, T), dtype=bool)
    for i in range(T):
        for j in range(i + 1):
            mask[i, j] = True
    return mask


def padding_broadcast(lengths, max_len):
    return (np.arange(max_len)[None, :] < lengths[:, None])[:, None, :]


def padding_loops(lengths, max_len):
    mask = np.zeros((len(lengths), 1, max_len), dtype=bool)
    for b, n in enumerate(lengths):
        mask[b, 0, :n] = True
    return mask


def masked_softmax_where(scores, mask):
    z = np.where(mask, scores, -np.inf)
    visible = mask.any(axis=-1, keepdims=True)
    z = np.where(visible, z, 0.0)  # rows with no visible key: any finite scores
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    return np.where(visible, w, 0.0)


def masked_softmax_divide_safely(scores, mask):
    mask = np.broadcast_to(mask, scores.shape)
    z = np.where(mask, scores, -np.inf)
    m = np.max(z, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(z - m)  # exp(-inf) = 0 exactly
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total > 0, total, 1.0)


def masked_softmax_torch(scores, mask):
    s, m = torch.from_numpy(scores), torch.from_numpy(np.broadcast_to(mask, scores.shape))
    w = torch.softmax(s.masked_fill(~m, float("-inf")), dim=-1)
    return torch.nan_to_num(w, nan=0.0).numpy()


def kpm_invert(mask):
    return ~mask[:, 0, :]


def kpm_logical_not(mask):
    return torch.logical_not(mask.squeeze(1))


def kpm_compare(mask):
    return mask.reshape(mask.shape[0], -1) == False  # noqa: E712 (a learner's way)


def hf_compare(attention_mask):
    return (attention_mask == 1)[:, None, :]


def hf_bool(attention_mask):
    return attention_mask.bool().unsqueeze(1)


def hf_gt(attention_mask):
    return (attention_mask > 0).view(attention_mask.shape[0], 1, -1)


# Right by PyTorch, but not what attnlab's converters return: float masks that PyTorch adds
# to the scores (0 = attend, -inf = hide), in PyTorch's default dtype.


def kpm_additive(mask):
    hide = ~mask[:, 0, :]
    return torch.zeros(hide.shape).masked_fill(hide, float("-inf"))


def hf_additive(attention_mask):
    return torch.where(attention_mask == 1, 0.0, float("-inf"))[:, None, :]


def future_change_copy(attend, x, t):
    edited = x.copy()
    edited[t + 1 :] = 0.0
    return float(np.abs(attend(edited)[: t + 1] - attend(x)[: t + 1]).max())


def future_change_concat(attend, x, t):
    edited = np.concatenate([x[: t + 1], np.zeros_like(x[t + 1 :])])
    return np.max(np.abs(attend(edited) - attend(x))[: t + 1])  # a NumPy scalar


def future_change_loops(attend, x, t):
    edited = x.copy()
    for s in range(t + 1, len(x)):
        edited[s] = 0.0
    before, after = attend(x), attend(edited)
    worst = 0.0
    for i in range(t + 1):
        worst = max(worst, float(np.max(np.abs(after[i] - before[i]))))
    return worst


TORCH_GRADED = ("to_key_padding_mask", "from_hf_attention_mask")

CORRECT = {
    "causal_mask": [lambda T: attnlab.causal_mask(T), causal_tril, causal_compare, causal_loops],
    "padding_mask": [
        lambda lengths, max_len: attnlab.padding_mask(lengths=lengths, max_len=max_len),
        padding_broadcast,
        padding_loops,
    ],
    "masked_softmax": [
        lambda scores, mask: attnlab.softmax(scores, mask=mask),
        masked_softmax_where,
        masked_softmax_divide_safely,
        masked_softmax_torch,
    ],
    "to_key_padding_mask": [
        attnlab.to_key_padding_mask,
        kpm_invert,
        kpm_logical_not,
        kpm_compare,
        kpm_additive,
    ],
    "from_hf_attention_mask": [
        attnlab.from_hf_attention_mask,
        hf_compare,
        hf_bool,
        hf_gt,
    ],
    "future_change": [future_change_copy, future_change_concat, future_change_loops],
}


# Every right answer, graded by tests/grading/test_correct_answers.py (one test for all chapters).
CORRECT_ANSWERS = [(name, fn) for name, fns in CORRECT.items() for fn in fns]
# PyTorch runs the converters' masks in float32, its default (see TORCH_GRADED).
MAX_ERROR = {name: 1e-5 if name in TORCH_GRADED else 1e-12 for name in CORRECT}


def test_every_exercise_has_several_correct_answers():
    assert all(len(fns) >= 3 for fns in CORRECT.values())
    assert set(CORRECT) == set(CHECKS)


def stub(*args, **kwargs):
    raise NotImplementedError("Exercise 6.1")


@pytest.mark.parametrize("name", CHECKS)
def test_stub_is_not_attempted(name):
    result = CHECKS[name](stub)
    assert result.status == "not attempted"
    assert repr(result).startswith(f"○ {name}: not attempted yet")


# ------------------------------------------------------------------ planted bugs


def masked_softmax_after(scores, mask):
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) * mask


def masked_softmax_renormalised(scores, mask):
    w = masked_softmax_after(scores, mask)
    return w / w.sum(axis=-1, keepdims=True)


def masked_softmax_fill(fill):
    def masked_softmax(scores, mask):
        z = np.where(mask, scores, fill)
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    return masked_softmax


def masked_softmax_added(scores, mask):
    z = scores + (1.0 - mask) * -1e4
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def masked_softmax_times(scores, mask):
    z = scores * mask
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def future_change_with(edit_from, upto):
    def future_change(attend, x, t):
        edited = x.copy()
        edited[edit_from(t) :] = 0.0
        diff = np.abs(attend(edited) - attend(x))
        return float(np.max(diff[: upto(t, len(x))], initial=0.0))

    return future_change


def future_change_only_t(attend, x, t):
    edited = x.copy()
    edited[t + 1 :] = 0.0
    return float(np.abs(attend(edited)[t] - attend(x)[t]).max())


PLANTED = [
    # (exercise, learner's bug, status, words expected in the diagnosis)
    ("causal_mask", lambda T: np.triu(np.ones((T, T), dtype=bool)), "wrong values", "upper-triangular"),
    ("causal_mask", lambda T: np.tri(T, k=-1, dtype=bool), "wrong values", "the diagonal is False"),
    ("causal_mask", lambda T: np.tri(T, k=1, dtype=bool), "wrong values", "also sees key i + 1"),
    ("causal_mask", lambda T: ~causal_tril(T), "wrong values", "inverted"),
    ("causal_mask", lambda T: np.full((T, T), True), "wrong values", "no mask at all"),
    ("causal_mask", lambda T: np.tril(np.ones((T, T))), "wrong type", "1s and 0s as float64"),
    ("causal_mask", lambda T: np.where(np.tril(np.ones((T, T))) == 1, 0.0, -np.inf), "wrong type", "your mask is additive"),
    ("padding_mask", lambda lengths, max_len: padding_broadcast(lengths, max_len)[:, 0], "wrong shape", "add the query axis"),
    ("padding_mask", lambda lengths, max_len: (np.arange(max_len) <= lengths[:, None])[:, None], "wrong values", "j < length"),
    ("padding_mask", lambda lengths, max_len: ~padding_broadcast(lengths, max_len), "wrong values", "inverted"),
    ("padding_mask", lambda lengths, max_len: padding_broadcast(lengths, lengths.max()), "wrong shape", "not to max_len"),
    ("masked_softmax", masked_softmax_after, "wrong values", "zeroed the masked weights afterwards"),
    ("masked_softmax", masked_softmax_renormalised, "NaN or inf", "renormalised"),
    ("masked_softmax", masked_softmax_fill(-np.inf), "NaN or inf", "no visible key gave NaN"),
    ("masked_softmax", masked_softmax_fill(-1e9), "wrong values", "uniform weights"),
    ("masked_softmax", masked_softmax_added, "wrong values", "added -1e4"),
    ("masked_softmax", masked_softmax_times, "wrong values", "multiplied the scores by the mask"),
    ("masked_softmax", lambda s, m: masked_softmax_where(s, ~m), "wrong values", "inverted"),
    ("to_key_padding_mask", lambda mask: mask[:, 0], "NaN or inf", "IGNORES the keys marked True"),
    ("to_key_padding_mask", lambda mask: ~mask, "raised an exception", "drop the axis of size 1"),
    ("to_key_padding_mask", lambda mask: (~mask[:, 0]).float(), "wrong values", "return bool values"),
    ("to_key_padding_mask", lambda mask: (~mask[:, 0]).int(), "raised an exception", "integers are refused"),
    ("to_key_padding_mask", lambda mask: (~mask[:, 0]).numpy(), "raised an exception", "return a torch tensor"),
    ("to_key_padding_mask", lambda mask: None, "raised an exception", "forget `return`"),
    # A fully masked row (the inverted mask of a sequence without padding): zeros from
    # F.scaled_dot_product_attention in recent releases, NaN in older ones; either status.
    ("from_hf_attention_mask", lambda am: (am == 0)[:, None], ("wrong values", "NaN or inf"), "inverted"),
    ("from_hf_attention_mask", lambda am: am == 1, "raised an exception", "add the query axis"),
    ("from_hf_attention_mask", lambda am: (am == 1)[..., None], ("wrong values", "raised an exception"), "put the new axis last"),
    ("from_hf_attention_mask", lambda am: (am == 1)[:, None].expand(-1, am.shape[1], -1), "raised an exception", "(B, S, S)"),
    ("from_hf_attention_mask", hf_additive, "wrong type", "boolean"),
    ("from_hf_attention_mask", lambda am: am[:, None].float(), "wrong type", "ADDED to the scores"),
    ("from_hf_attention_mask", lambda am: am.unsqueeze(1), "raised an exception", "not integers"),
    ("future_change", future_change_with(lambda t: t, lambda t, T: t + 1), "wrong values", "also edited token t itself"),
    ("future_change", future_change_with(lambda t: t + 1, lambda t, T: T), "wrong values", "compared every output"),
    ("future_change", future_change_with(lambda t: t + 1, lambda t, T: t), "wrong values", "before t only"),
    ("future_change", future_change_only_t, "wrong values", "compared only output t"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "bug", "status", "words"), PLANTED)
def test_planted_bugs_get_the_expected_diagnosis(name, bug, status, words):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the learner's bug may overflow; not the point here
        result = CHECKS[name](bug)
    assert result.status in ((status,) if isinstance(status, str) else status), result.text
    assert result.diagnosed, result.text
    assert words in result.diagnosis, result.text


def test_every_exercise_has_at_least_three_planted_bugs_tested():
    counts = {name: sum(p[0] == name for p in PLANTED) for name in CHECKS}
    assert min(counts.values()) >= 3, counts


# Each planted mistake is told apart from the others: tests/grading/test_chapters.py


# ------------------------------------------------------------------ the causality test at work


@pytest.mark.parametrize(("kind", "causal"), [("causal", True), ("full", False)])
def test_the_learners_test_proves_causality_only_of_causal_attention(kind, causal):
    x = np.random.default_rng(0).normal(size=(6, 4))
    changes = [future_change_copy(Attend(kind), x, t) for t in range(6)]
    assert (max(changes) == 0.0) == causal, changes


def test_attend_cases_compare_equal_after_a_copy_and_show_their_kind():
    import copy

    a = Attend("one ahead")
    assert copy.deepcopy(a) == a
    assert repr(a) == "one ahead attention"
    np.testing.assert_array_equal(a.mask(3), [[1, 1, 0], [1, 1, 1], [1, 1, 1]])


# ------------------------------------------------------------------ prediction questions


def test_fill_leak_is_what_the_softmax_gives():
    """The question's answer, computed: a visible score 0, a masked one 1e4 plus -1e4."""
    keep = np.array([True, False])
    w = attnlab.softmax(np.array([0.0, 1e4]) + attnlab.to_additive_mask(keep, fill=-1e4))
    assert w[1] == pytest.approx(FILL_LEAK.answer, abs=1e-12)


def test_blind_row_is_what_the_softmax_gives():
    w = attnlab.softmax(np.full(4, -1e9) + 0.0)  # every score replaced by the fill
    np.testing.assert_allclose(w, BLIND_ROW.answer, atol=1e-12)


# Right, listed wrong and unanswered answers of every question: tests/grading/test_chapters.py


def test_summary_lists_every_exercise_in_order():
    check_causal_mask(causal_tril)
    table = summary()
    assert table.title == "Chapter 6 exercises"
    assert [name for name, _ in table.rows] == list(GRADERS.names)
    assert len(GRADERS) >= 6


# ------------------------------------------------------------------ conventions, by PyTorch


def test_converters_pytorch_accepts_pass_where_attnlab_would_differ():
    # A float mask of 0 / -inf means to PyTorch what the boolean one means: graded by
    # PyTorch's behaviour it passes, compared with attnlab's converter it could not.
    mask = attnlab.padding_mask(lengths=torch.tensor([3, 1]), max_len=4)
    assert kpm_additive(mask).dtype != attnlab.to_key_padding_mask(mask).dtype
    assert check_to_key_padding_mask(kpm_additive).passed
    # 6.5 asks for our mask, a boolean tensor: the float form PyTorch would read the same
    # way is refused there (al.combine_masks takes booleans only).
    assert not check_from_hf_attention_mask(hf_additive).passed


def test_a_float64_mask_of_0_and_minus_inf_passes():
    # 6.4's statement accepts a float mask of 0 and -inf; NumPy and the chapter's demo make
    # it in float64 while the model is float32: the check gives it in the model's dtype.
    # (6.5 asks for a boolean tensor: a float mask is refused there in either dtype.)
    assert check_to_key_padding_mask(lambda mask: kpm_additive(mask).double()).passed
    assert not check_from_hf_attention_mask(lambda am: hf_additive(am).double()).passed
    # Not any float mask: 1.0 for padding is still added to the scores.
    assert not check_to_key_padding_mask(lambda mask: (~mask[:, 0]).double()).passed


def test_an_inverted_key_padding_mask_is_caught_by_what_pytorch_does_with_it():
    # nn.MultiheadAttention ignores the keys marked True: with our mask passed unchanged, a
    # sequence without padding has every key ignored and PyTorch returns NaN for it.
    result = check_to_key_padding_mask(lambda mask: mask[:, 0, :])
    assert result.status == "NaN or inf" and "NaN in the output" in result.message
    assert "IGNORES the keys marked True" in result.diagnosis


def test_the_converter_graders_do_not_call_attnlabs_converters(monkeypatch):
    import attnlab.mechanism.masking

    def broken(*args, **kwargs):
        raise AssertionError("the grader must not use attnlab's converters")

    for name in ("to_key_padding_mask", "from_hf_attention_mask"):
        monkeypatch.setattr(attnlab.mechanism.masking, name, broken)
        monkeypatch.setattr(attnlab, name, broken)
    assert check_to_key_padding_mask(kpm_invert).passed
    assert check_from_hf_attention_mask(hf_compare).passed


@pytest.mark.parametrize("name", TORCH_GRADED)
def test_no_case_has_a_query_without_a_visible_key(name):
    # There PyTorch and the course disagree (NaN or zeros vs zeros): not a mask convention.
    for case in GRADERS[name].cases:
        mask = next(iter(case.inputs.values()))  # the mask comes first
        assert bool((mask != 0).reshape(mask.shape[0], -1).any(dim=-1).all()), case.label


def test_pytorch_gives_nan_where_the_course_gives_zeros():
    # Why the cases avoid a sequence without a real token.
    layer = torch.nn.MultiheadAttention(4, 2, batch_first=True)
    x = torch.randn(1, 3, 4, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        out, _ = layer(x, x, x, key_padding_mask=torch.ones(1, 3, dtype=torch.bool))
    assert torch.isnan(out).all()
    keep = np.zeros((1, 3), dtype=bool)
    w = attnlab.softmax(np.zeros((3, 3)), mask=keep)
    assert np.array_equal(w, np.zeros((3, 3)))


def test_the_converter_checks_leave_the_global_seed_alone():
    torch.manual_seed(3)
    state = torch.get_rng_state()
    check_to_key_padding_mask(kpm_invert)
    check_from_hf_attention_mask(hf_compare)
    assert torch.equal(torch.get_rng_state(), state)


def test_a_nan_from_pytorchs_attention_is_not_blamed_on_an_exponential():
    # The mask conversions compute no exp: a NaN there is PyTorch's row with every key
    # hidden, and the fallback says so instead of the exp-overflow explanation.
    # (first key always hidden too: a sequence of length 1 has none left)
    every_key_hidden = [
        check_to_key_padding_mask(lambda mask: ~mask[:, 0] | (torch.arange(mask.shape[-1]) == 0)),
    ]
    for result in every_key_hidden:
        assert result.status == "NaN or inf", result.text
        assert "exp overflowing" not in result.text
        assert "computes no exponential" in result.diagnosis, result.text


def test_a_shape_label_never_names_a_size_of_one():
    result = check_padding_mask(
        lambda lengths, max_len: (np.arange(lengths.max()) < lengths[:, None])[:, None, :]
    )
    assert "expected (1, 1, 5)" in result.message and "(B, B" not in result.message


def test_blind_row_reads_four_equal_weights_as_one_number():
    assert check_blind_row([0.25] * 4).passed
    assert check_blind_row((0.25, 0.25, 0.25, 0.25)).passed
    assert "four keys, not five" in check_blind_row([0.2] * 4).diagnosis  # graded as 0.2
    different = check_blind_row([0.25, 0.25, 0.25, 0.3])
    assert not different.passed and "same value" in different.diagnosis
    assert "one number, not a list" in check_blind_row([0.25] * 3).diagnosis
