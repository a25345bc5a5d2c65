"""Chapter 9's modules (corpus, modern, decoding, textlm) on any device, as ``test_device.py`` checks.

The modern options of the config-only model (RMSNorm, GELU, SwiGLU, tied weights, fused
attention) are checked here too: a :class:`DecoderOnlyLM` built with all of them, with
and without a KV cache, makes nothing on the default device.

The same four groups and the same stand-in for a GPU (PyTorch's ``meta`` device); see
``test_device.py``, whose test that every public callable is covered reads :data:`CASES`
and :data:`EXCLUDED` from here too.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest
import torch
from test_device import (
    CPU,
    META,
    Case,
    _check_result,
    ids_,
    meta_is_the_default,
    on,
    tensors,
    x_,
)
from torch import nn

from attnlab.mechanism import modern
from attnlab.mechanism import sampling as decoding
from attnlab.mechanism.config import TransformerConfig
from attnlab.mechanism.kvcache import KVCache
from attnlab.mechanism.transformer import DecoderOnlyLM
from attnlab.tasks import corpus, textlm

B, T, V, D = 2, 3, 5, 8  # batch, length, vocabulary, d_model

EXCLUDED = {
    "corpus.load_shakespeare": "reads the text shipped with the package: a string, no tensor",
    "corpus.shakespeare_split": "two strings, no tensor",
    "corpus.split_text": "a string in, two strings out",
    "textlm.TextRecipe": "a frozen record of settings: no computation",
    "textlm.TextRun": "a record of a run's numbers (and its model): no computation",
    "textlm.shakespeare_ids": "the corpus's ids as CPU tensors, read from the shipped text "
    "(move them with .to(device))",
    "textlm.text_model": "builds a DecoderOnlyLM from the recipe's TransformerConfig (the "
    "model with every modern option is covered under NEED_VALUES)",
    "textlm.train_text_lm": "trains on the CPU (the timing experiment of chapter 9)",
    "textlm.write_stored_text_model": "trains on the CPU and writes the shipped files",
    "textlm.stored_text_model": "loads the stored model onto the CPU (map_location='cpu'); "
    "move it with .to(device)",
    "textlm.stored_ablations": "reads stored numbers (JSON): no tensor",
}
"""Public callables of chapter 9's modules that are not mechanisms, each with the reason."""


class _TinyLM(nn.Module):
    """Ids ``(B, T)`` -> logits ``(B, T, V)``: an embedding and a linear read-out."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(V, D)
        self.out = nn.Linear(D, V)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.out(self.emb(ids))


def _model(device: torch.device = CPU) -> _TinyLM:
    torch.manual_seed(0)
    return _TinyLM().to(device)


def _modern_lm() -> DecoderOnlyLM:
    """Every chapter 9 option at once: RMSNorm, SwiGLU, tied weights, fused attention."""
    torch.manual_seed(0)
    config = TransformerConfig(
        d_model=D, n_heads=2, n_layers=2, max_len=6, norm="rms", ffn="swiglu",
        tie_weights=True, fused_attention=True, bias=False,
    )  # fmt: skip
    return DecoderOnlyLM(V, config).eval()


def _prepare_modern_cache() -> Any:
    lm = _modern_lm()

    def run() -> tuple[Any, ...]:
        cache = KVCache(2)
        return lm(ids_(B, T, device=CPU), cache), lm(ids_(B, 1, device=CPU), cache)

    return run


def _gen() -> torch.Generator:
    return torch.Generator().manual_seed(0)  # on the CPU, as a learner makes one


ON_META = [
    Case("modern.gelu", lambda: modern.gelu(x_(B, T, D)), [(B, T, D)]),
    Case("modern.gelu", lambda: modern.gelu(x_(B, T, D), "tanh"), [(B, T, D)], "tanh"),
    Case("modern.silu", lambda: modern.silu(x_(B, T, D)), [(B, T, D)]),
    Case("modern.RMSNorm", lambda: on(modern.RMSNorm(D))(x_(B, T, D)), [(B, T, D)]),
    Case("modern.MLP", lambda: on(modern.MLP(D, 16))(x_(B, T, D)), [(B, T, D)]),
    Case("modern.SwiGLU", lambda: on(modern.SwiGLU(D, 16))(x_(B, T, D)), [(B, T, D)]),
    Case("sampling.temperature_probs", lambda: decoding.temperature_probs(x_(B, V), 0.5), [(B, V)]),
    Case(
        "sampling.temperature_probs",
        lambda: decoding.temperature_probs(x_(B, V), 0),
        [(B, V)],
        "greedy",
    ),
    Case("sampling.top_k_probs", lambda: decoding.top_k_probs(x_(B, V), 2), [(B, V)]),
    Case("sampling.top_p_probs", lambda: decoding.top_p_probs(x_(B, V), 0.9), [(B, V)]),
    Case(
        "sampling.next_token_probs",
        lambda: decoding.next_token_probs(x_(B, T, V), temperature=0.7, top_k=3, top_p=0.8),
        [(B, T, V)],
    ),
]


NEED_VALUES = [
    Case(
        "sampling.sample",
        lambda: functools.partial(
            decoding.sample, torch.softmax(x_(B, V, device=CPU), -1), generator=_gen()
        ),
        [(B,)],
        "checks the weights",
    ),
    Case(
        "sampling.sample",
        lambda: functools.partial(decoding.sample, torch.full((B, V), 0.2)),
        [(B,)],
        "global generator",
    ),
    Case(
        "sampling.sample_from_logits",
        lambda: functools.partial(
            decoding.sample_from_logits, x_(B, V, device=CPU), top_p=0.9, generator=_gen()
        ),
        [(B,)],
    ),
    Case(
        "sampling.sample_tokens",
        lambda: functools.partial(
            decoding.sample_tokens,
            _model(),
            ids_(B, T, device=CPU),
            max_new_tokens=2,
            top_k=2,
            generator=_gen(),
            context=4,
        ),
        [(B, T + 2)],
    ),
    Case(
        "sampling.beam_search",
        lambda: functools.partial(
            decoding.beam_search, _model(), ids_(T, device=CPU), beam_width=3, max_new_tokens=2
        ),
        [(3, T + 2), (3,)],
    ),
    Case(
        "sampling.beam_search",
        lambda: functools.partial(
            decoding.beam_search,
            _model(),
            ids_(T, device=CPU),
            beam_width=3,
            max_new_tokens=2,
            eos_id=1,
        ),
        [(3, T + 2), (3,)],
        "eos",
    ),
    Case(
        "sampling.sequence_log_prob",
        lambda: functools.partial(decoding.sequence_log_prob, _model(), ids_(B, 4, device=CPU)),
        [(B,)],
    ),
    Case(
        "sampling.sequence_log_prob",
        lambda: functools.partial(
            decoding.sequence_log_prob, _model(), ids_(B, 4, device=CPU), context=2
        ),
        [(B,)],
        "sliding window",
    ),
    Case(
        "sampling.repetition",
        lambda: functools.partial(decoding.repetition, ids_(6, device=CPU), 2),
        [],
        check=lambda r: r == 1 - 4 / 5,  # 0 1 2 3 0 1: the bigram (0, 1) comes twice
    ),
    Case(
        "sampling.text_loss",
        lambda: functools.partial(decoding.text_loss, _model(), ids_(11, device=CPU), context=3),
        [],
        check=lambda loss: isinstance(loss, float) and loss > 0,
    ),
    Case(
        "sampling.perplexity",
        lambda: functools.partial(decoding.perplexity, torch.ones(B, dtype=torch.float64)),
        [(B,)],
    ),
    Case(
        "sampling.bits_per_token",
        lambda: functools.partial(decoding.bits_per_token, torch.ones(B)),
        [(B,)],
    ),
    Case(
        "corpus.random_windows",
        lambda: functools.partial(
            corpus.random_windows, ids_(20, device=CPU), B, T, generator=_gen()
        ),
        [(B, T), (B, T)],
    ),
    Case(
        "corpus.CharVocab",
        lambda: functools.partial(
            corpus.CharVocab(["a", "b", "c", "d"]).decode, ids_(6, device=CPU)
        ),
        [],
        "decodes ids",
        check=lambda text: text == "abcdab",
    ),
]


NEED_VALUES += [
    Case(
        "transformer.DecoderOnlyLM",
        lambda: functools.partial(_modern_lm(), ids_(B, T, device=CPU)),
        [(B, T, V)],
        "modern options",
    ),
    Case(
        "transformer.DecoderOnlyLM",
        _prepare_modern_cache,
        [(B, T, V), (B, 1, V)],
        "modern options; cache",
    ),
    Case(
        "textlm.validation_loss",
        lambda: functools.partial(textlm.validation_loss, _modern_lm(), ids_(13, device=CPU), 4),
        [],
        check=lambda loss: isinstance(loss, float) and loss > 0,
    ),
]


NEED_VALUES.append(
    Case(
        "corpus.CharBPE",
        lambda: functools.partial(corpus.CharBPE.train("abab", 1).decode, ids_(3, device=CPU)),
        [],
        "decodes ids",
        check=lambda text: text == "abab",  # ids 0 1 2: "a", "b", "ab"
    )
)


OWN_TENSORS: list[Case] = []  # nothing here builds its own tensors from sizes alone


def _random_windows_on_meta() -> Any:
    """Starts drawn by a CPU generator, moved to the ids' device: a meta stream gets meta windows."""
    return corpus.random_windows(x_(20, dtype=torch.long), B, T, generator=_gen())


ON_META.append(Case("corpus.random_windows", _random_windows_on_meta, [(B, T), (B, T)], "meta"))


MIXED = [
    Case("modern.RMSNorm", lambda: on(modern.RMSNorm(D))(x_(B, T, D, device=CPU))),
    Case("modern.MLP", lambda: on(modern.MLP(D, 16))(x_(B, T, D, device=CPU))),
    Case("modern.SwiGLU", lambda: on(modern.SwiGLU(D, 16))(x_(B, T, D, device=CPU))),
    Case(
        "sampling.sample_tokens",
        lambda: decoding.sample_tokens(_model(META), ids_(B, T, device=CPU), max_new_tokens=1),
    ),
    Case(
        "sampling.beam_search",
        lambda: decoding.beam_search(
            _model(META), ids_(T, device=CPU), beam_width=2, max_new_tokens=1
        ),
    ),
    Case(
        "sampling.sequence_log_prob",
        lambda: decoding.sequence_log_prob(_model(META), ids_(B, T, device=CPU)),
    ),
    Case(
        "sampling.text_loss",
        lambda: decoding.text_loss(_model(META), ids_(9, device=CPU), context=3),
    ),
    Case(
        "textlm.validation_loss",
        lambda: textlm.validation_loss(on(_modern_lm()), ids_(9, device=CPU), 3),
    ),
    Case(
        "transformer.DecoderOnlyLM",
        lambda: on(_modern_lm())(ids_(B, T, device=CPU)),
        label="modern options",
    ),
]

CASES = ON_META + NEED_VALUES + OWN_TENSORS
"""Every case of the three groups that cover a callable (MIXED adds checks, not coverage)."""


@pytest.mark.parametrize("case", ON_META, ids=lambda c: c.id)
def test_runs_on_meta(case: Case) -> None:
    result = case.run()
    assert tensors(result), f"{case.id}: no tensor came out"
    _check_result(case, result, META)


@pytest.mark.parametrize("case", NEED_VALUES, ids=lambda c: c.id)
def test_needs_values_and_makes_nothing_on_the_default_device(
    case: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    call = case.run()  # the module and the CPU inputs, built with the CPU as the default
    with meta_is_the_default(monkeypatch):
        result = call()
    _check_result(case, result, CPU)


@pytest.mark.parametrize("case", MIXED, ids=lambda c: c.id)
def test_mixed_devices_raise_the_courses_error(case: Case) -> None:
    with pytest.raises(ValueError, match=r"(?s)(\bcpu\b.*\bmeta\b|\bmeta\b.*\bcpu\b)") as error:
        case.run()
    assert "move" in str(error.value), f"{case.id}: the message must say what to move"


def test_a_seeded_draw_does_not_depend_on_the_dtype_of_the_probabilities() -> None:
    """The uniform numbers come from the generator (float64, on its device), not from the
    probabilities: float32 and float64 copies of one distribution give the same ids."""
    probs = torch.softmax(torch.randn(64, V, generator=_gen()), -1)
    first = decoding.sample(probs, generator=torch.Generator().manual_seed(3))
    again = decoding.sample(probs.double(), generator=torch.Generator().manual_seed(3))
    assert torch.equal(first, again) and len(set(first.tolist())) > 1


def test_every_case_names_a_public_callable() -> None:
    here = ("corpus.", "sampling.", "modern.", "textlm.")  # the model itself is test_device's
    names = {c.covers for c in CASES if c.covers.startswith(here)} | set(EXCLUDED)
    public = {
        f"{module.__name__.rsplit('.', 1)[-1]}.{name}"
        for module in (corpus, decoding, modern, textlm)
        for name in module.__all__
        if callable(getattr(module, name))
    }
    assert names == public, sorted(names ^ public)
