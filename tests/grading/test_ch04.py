"""Chapter 4's graders: right answers pass, stubs and planted bugs get the expected report.

The "learner" answers below are written here, independently of the planted mistakes in
``attnlab.grading.ch04``, the way a learner would write them (NumPy, torch, einsum, loops).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from attnlab.grading.ch04 import (
    GRADERS,
    check_bert_parameters,
    check_blend_weight,
    check_load_into_torch,
    check_merge_heads,
    check_mha_parameter_count,
    check_multihead_attention,
    check_split_heads,
    summary,
)
from attnlab.mechanism.multihead import MultiHeadAttention

# ------------------------------------------------------------------ learners' answers


def split_np(x, n_heads):
    B, T, D = x.shape
    return x.reshape(B, T, n_heads, D // n_heads).transpose(0, 2, 1, 3)


def split_swapaxes(x, n_heads):
    *lead, T, _ = x.shape
    return np.swapaxes(x.reshape(*lead, T, n_heads, -1), -3, -2)


def split_loop(x, n_heads):
    d = x.shape[-1] // n_heads
    return np.stack([x[..., h * d : (h + 1) * d] for h in range(n_heads)], axis=1)


def split_einops_like(x, n_heads):
    B, T, D = x.shape
    return np.einsum("bthd->bhtd", x.reshape(B, T, n_heads, D // n_heads))


def merge_np(x):
    B, H, T, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * d)


def merge_concat(x):
    return np.concatenate([x[:, h] for h in range(x.shape[1])], axis=-1)


def merge_moveaxis(x):
    y = np.moveaxis(x, 1, 2)
    return y.reshape(*y.shape[:2], -1)


def count_formula(d_model, n_heads, bias=True):
    return 4 * d_model * d_model + (4 * d_model if bias else 0)


def count_by_heads(d_model, n_heads, bias=True):
    d = d_model // n_heads
    per_head = 3 * (d_model * d + (d if bias else 0))
    return n_heads * per_head + d_model * d_model + (d_model if bias else 0)


def count_by_building(d_model, n_heads, bias=True):
    return sum(p.numel() for p in MultiHeadAttention(d_model, n_heads, bias=bias).parameters())


class MHATorch(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads, self.d_head = n_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def split(self, x):
        B, L, _ = x.shape
        return x.view(B, L, self.n_heads, self.d_head).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.W_q(query)),
            self.split(self.W_k(key)),
            self.split(self.W_v(value)),
        )
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.softmax(dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(query.shape)
        return self.W_o(out), weights


class MHAEinsum(MHATorch):
    def forward(self, query, key, value, mask=None):
        H, d = self.n_heads, self.d_head
        q = self.W_q(query).unflatten(-1, (H, d))  # (B, T, H, d)
        k = self.W_k(key).unflatten(-1, (H, d))
        v = self.W_v(value).unflatten(-1, (H, d))
        scores = torch.einsum("bthd,bshd->bhts", q, k) * d**-0.5
        if mask is not None:
            scores = torch.where(mask, scores, -torch.inf)
        weights = torch.softmax(scores, -1)
        out = torch.einsum("bhts,bshd->bthd", weights, v).flatten(-2)
        return self.W_o(out), weights


class MHASdpa(MHATorch):
    """Uses PyTorch's fused attention for the output, and computes the weights aside."""

    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.W_q(query)),
            self.split(self.W_k(key)),
            self.split(self.W_v(value)),
        )
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        B, H, T, d = out.shape
        return self.W_o(out.transpose(1, 2).reshape(B, T, H * d)), scores.softmax(-1)


class MHALoop(MHATorch):
    """Head by head, with slices of the weight matrices, as the paper writes it."""

    def forward(self, query, key, value, mask=None):
        d, heads, weights = self.d_head, [], []
        for h in range(self.n_heads):
            rows = slice(h * d, (h + 1) * d)
            q = query @ self.W_q.weight[rows].T + self.W_q.bias[rows]
            k = key @ self.W_k.weight[rows].T + self.W_k.bias[rows]
            v = value @ self.W_v.weight[rows].T + self.W_v.bias[rows]
            s = q @ k.transpose(1, 2) / d**0.5
            if mask is not None:
                s = s.masked_fill(~mask, -math.inf)
            w = torch.softmax(s, dim=-1)
            heads.append(w @ v)
            weights.append(w)
        return self.W_o(torch.cat(heads, -1)), torch.stack(weights, 1)


def load_cat(ours, theirs):
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight]))
        theirs.in_proj_bias.copy_(torch.cat([ours.W_q.bias, ours.W_k.bias, ours.W_v.bias]))
        theirs.out_proj.weight.copy_(ours.W_o.weight)
        theirs.out_proj.bias.copy_(ours.W_o.bias)


def load_slices(ours, theirs):
    D = ours.d_model
    with torch.no_grad():
        for i, lin in enumerate([ours.W_q, ours.W_k, ours.W_v]):
            theirs.in_proj_weight[i * D : (i + 1) * D] = lin.weight
            theirs.in_proj_bias[i * D : (i + 1) * D] = lin.bias
        theirs.out_proj.load_state_dict(ours.W_o.state_dict())


def load_state_dict(ours, theirs):
    state = {
        "in_proj_weight": torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight]),
        "in_proj_bias": torch.cat([ours.W_q.bias, ours.W_k.bias, ours.W_v.bias]),
        "out_proj.weight": ours.W_o.weight,
        "out_proj.bias": ours.W_o.bias,
    }
    theirs.load_state_dict(state)


CORRECT = {
    "split_heads": (check_split_heads, [split_np, split_swapaxes, split_loop, split_einops_like]),
    "merge_heads": (check_merge_heads, [merge_np, merge_concat, merge_moveaxis]),
    "mha_parameter_count": (
        check_mha_parameter_count,
        [count_formula, count_by_heads, count_by_building],
    ),
    "multihead_attention": (
        check_multihead_attention,
        [MultiHeadAttention, MHATorch, MHAEinsum, MHASdpa, MHALoop],
    ),
    "load_into_torch": (check_load_into_torch, [load_cat, load_slices, load_state_dict]),
}


# Every right answer, graded by tests/grading/test_correct_answers.py (one test for all chapters).
CORRECT_ANSWERS = [(name, a) for name, (_, answers) in CORRECT.items() for a in answers]
MAX_ERROR = 1e-9


def test_every_grader_has_cases_and_every_exercise_is_listed():
    assert list(GRADERS.names) == [
        "split_heads",
        "merge_heads",
        "mha_parameter_count",
        "bert_parameters",
        "multihead_attention",
        "load_into_torch",
        "blend_weight",
        "which_key",
    ]
    for name in CORRECT:
        assert len(GRADERS[name].cases) >= 3


# ------------------------------------------------------------------ stubs


def stub(*args, **kwargs):
    raise NotImplementedError("Exercise 4.1")


class StubModule(MHATorch):
    def forward(self, query, key, value, mask=None):
        raise NotImplementedError("Exercise 4.5")


class StubInit(nn.Module):
    def __init__(self, d_model, n_heads):
        raise NotImplementedError("Exercise 4.5")


def load_into_torch(ours, theirs):
    raise NotImplementedError("Exercise 4.6")


@pytest.mark.parametrize(
    ("check", "answer"),
    [
        (check_split_heads, stub),
        (check_merge_heads, stub),
        (check_mha_parameter_count, stub),
        (check_multihead_attention, StubModule),
        (check_multihead_attention, StubInit),
        (check_load_into_torch, load_into_torch),
    ],
)
def test_stubs_are_not_attempted(check, answer):
    result = check(answer)
    assert result.status == "not attempted", result.text


def test_a_module_calling_an_unfinished_split_names_it():
    def split_heads(x, n_heads):
        raise NotImplementedError("Exercise 4.1")

    class UsesSplit(MHATorch):
        def split(self, x):
            return split_heads(x, self.n_heads)

    result = check_multihead_attention(UsesSplit)
    assert result.status == "raised an exception", result.text
    assert "split_heads" in result.diagnosis


def test_module_exception_is_reported_with_the_line():
    class Broken(MHATorch):
        def forward(self, query, key, value, mask=None):
            return self.W_q(query) @ self.W_k(key)  # (B, T, D) @ (B, S, D): wrong

    result = check_multihead_attention(Broken)
    assert result.status == "raised an exception", result.text
    assert "forward" in result.message


def test_loading_without_no_grad_gets_the_hint():
    def no_no_grad(ours, theirs):
        theirs.in_proj_weight.copy_(torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight]))

    result = check_load_into_torch(no_no_grad)
    assert result.status == "raised an exception", result.text
    assert "torch.no_grad()" in result.diagnosis


def test_returning_one_tensor_from_forward_is_a_wrong_type():
    class OnlyOut(MHATorch):
        def forward(self, query, key, value, mask=None):
            return MHATorch.forward(self, query, key, value, mask)[0]

    result = check_multihead_attention(OnlyOut)
    assert not result.passed


# ------------------------------------------------------------------ planted bugs


def split_one_reshape(x, n_heads):
    B, T, _ = x.shape
    return np.reshape(x, (B, n_heads, T, -1))


def split_strided(x, n_heads):
    return np.stack([x[..., h::n_heads] for h in range(n_heads)], axis=1)


def split_no_transpose(x, n_heads):
    B, T, _ = x.shape
    return x.reshape(B, T, n_heads, -1)


def merge_one_reshape(x):
    B, _, T, _ = x.shape
    return np.reshape(x, (B, T, -1))


def merge_interleaved(x):
    return np.stack([x[:, h] for h in range(x.shape[1])], axis=-1).reshape(
        x.shape[0], x.shape[2], -1
    )


def with_bug(bug):
    """The correct torch module with one learner-style bug."""

    class Buggy(MHATorch):
        def split(self, x):
            B, L, _ = x.shape
            if bug == "direct split":
                return x.reshape(B, self.n_heads, L, self.d_head)
            return super().split(x)

        def forward(self, query, key, value, mask=None):
            q, k, v = (
                self.split(self.W_q(query)),
                self.split(self.W_k(key)),
                self.split(self.W_v(value)),
            )
            scale = {
                "no scale": 1.0,
                "sqrt D": math.sqrt(q.shape[-1] * self.n_heads),
            }.get(bug, math.sqrt(self.d_head))
            scores = q @ k.transpose(-2, -1) / scale
            if mask is not None and bug != "no mask":
                scores = scores.masked_fill(~mask, float("-inf"))
            weights = scores.softmax(dim=1 if bug == "softmax over queries" else -1)
            if bug == "softmax over queries":
                weights = scores.softmax(dim=-2)
            heads = weights @ v
            if bug == "direct merge":
                out = heads.reshape(query.shape)
            else:
                out = heads.transpose(1, 2).reshape(query.shape)
            return (out if bug == "no W_o" else self.W_o(out)), weights

    return Buggy


def load_with(order=("q", "k", "v"), transpose=False, biases=True, out=True):
    def load(ours, theirs):
        lins = {"q": ours.W_q, "k": ours.W_k, "v": ours.W_v}
        with torch.no_grad():
            ws = [lins[n].weight.T if transpose else lins[n].weight for n in order]
            theirs.in_proj_weight.copy_(torch.cat(ws))
            if biases:
                theirs.in_proj_bias.copy_(torch.cat([lins[n].bias for n in order]))
            if out:
                theirs.out_proj.weight.copy_(ours.W_o.weight.T if transpose else ours.W_o.weight)
                if biases:
                    theirs.out_proj.bias.copy_(ours.W_o.bias)

    return load


PLANTED = [
    ("split_heads", split_one_reshape, "wrong values", "reshaped straight to (B, H, T, d)"),
    ("split_heads", split_strided, "wrong values", "every H-th feature"),
    ("split_heads", split_no_transpose, "wrong shape", "did not move the head axis"),
    ("split_heads", lambda x, n_heads: split_np(x, n_heads).transpose(0, 1, 3, 2), "wrong shape", None),
    ("merge_heads", merge_one_reshape, "wrong values", "reshaped straight to (B, T, D)"),
    ("merge_heads", merge_interleaved, "wrong values", "interleave the heads"),
    ("merge_heads", lambda x: np.concatenate(list(np.moveaxis(x, 1, 0)), axis=-2), "wrong shape", "along the time axis"),
    ("merge_heads", lambda x: x.transpose(0, 2, 1, 3), "wrong shape", None),
    ("mha_parameter_count", lambda d_model, n_heads, bias=True: 4 * d_model**2, "wrong values", "left out the biases"),
    ("mha_parameter_count", lambda d_model, n_heads, bias=True: 4 * d_model * (d_model + 1), "wrong values", "even with bias=False"),
    ("mha_parameter_count", lambda d_model, n_heads, bias=True: 3 * d_model * (d_model + bias), "wrong values", "forgot W_o"),
    ("mha_parameter_count", lambda d_model, n_heads, bias=True: count_formula(d_model, n_heads, bias) // n_heads, "wrong values", "divided by the number of heads"),
    ("mha_parameter_count", lambda d_model, n_heads, bias=True: 3 * n_heads * d_model * (d_model + bias) + d_model * (d_model + bias), "wrong values", "every head full D x D"),
    ("multihead_attention", with_bug("direct split"), "wrong values", "split the heads with one reshape"),
    ("multihead_attention", with_bug("direct merge"), "wrong values", "merged the heads with one reshape"),
    ("multihead_attention", with_bug("no scale"), "wrong values", "did not scale"),
    ("multihead_attention", with_bug("sqrt D"), "wrong values", "scaled by √D"),
    ("multihead_attention", with_bug("softmax over queries"), "NaN or inf", "over the queries"),
    ("multihead_attention", with_bug("no W_o"), "wrong values", "without the output projection"),
    ("multihead_attention", with_bug("no mask"), "wrong values", "ignored the mask"),
    ("load_into_torch", load_with(order=("k", "q", "v")), "wrong values", "W_q and W_k are swapped"),
    ("load_into_torch", load_with(order=("v", "k", "q")), "wrong values", "order of the stacked blocks"),
    ("load_into_torch", load_with(transpose=True), "wrong values", "transposed the weights"),
    ("load_into_torch", load_with(biases=False), "wrong values", "left the biases out"),
    ("load_into_torch", load_with(out=False), "wrong values", "did not copy W_o"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "bug", "status", "words"), PLANTED)
def test_planted_bugs_get_the_expected_diagnosis(name, bug, status, words):
    result = CORRECT[name][0](bug)
    assert result.status == status, result.text
    if words is not None:
        assert result.diagnosed, result.text
        assert words in result.diagnosis, result.text


# Each planted mistake is told apart from the others: tests/grading/test_chapters.py


def test_every_planted_mistake_has_a_learner_style_test():
    for name in CORRECT:
        n_tested = sum(p[0] == name and p[3] is not None for p in PLANTED)
        assert n_tested >= min(3, len(GRADERS[name].mistakes)), name


# ------------------------------------------------------------------ questions


# Right, listed wrong and unanswered answers of every question: tests/grading/test_chapters.py


def test_blend_weight_answer_is_the_measured_weight():
    import attnlab as al
    from attnlab.tasks.heads import handset_heads

    words = "the dog that chased the cat barked".split()
    q, k = handset_heads(len(words), words.index("dog"))
    q1, k1 = np.concatenate(list(q), -1), np.concatenate(list(k), -1)
    _, weights = al.scaled_dot_product_attention(q1, k1, k1)
    measured = weights[words.index("barked"), words.index("dog")]
    assert check_blend_weight(float(measured)).passed
    assert check_blend_weight(round(float(measured), 1)).passed


def test_bert_answer_is_the_layer_count():
    assert check_bert_parameters(
        sum(p.numel() for p in MultiHeadAttention(768, 12).parameters())
    ).passed


def test_summary_lists_every_exercise():
    check_split_heads(split_np)
    rows = summary().rows
    assert [name for name, _ in rows] == list(GRADERS.names)
