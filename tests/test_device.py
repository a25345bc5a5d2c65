"""Every mechanism of attnlab runs on any device: checked here with PyTorch's ``meta`` device.

DESIGN promises device-agnostic code (CUDA in Colab, the CPU here). This machine has no GPU,
but the ``meta`` device stands in for one: a meta tensor has a shape, a dtype and a device
and no values, and an operation mixing it with a CPU tensor fails as one mixing a CUDA
tensor with a CPU tensor does. So a function that makes a tensor without the input's
device (``torch.zeros(n)`` where it needed ``torch.zeros(n, device=x.device)``) fails here
as it would on a GPU.

Four groups of cases, and :func:`test_every_public_callable_is_covered_or_excluded`, which
fails when a public callable of attnlab is in none of them and not in :data:`EXCLUDED`
with its reason (a new mechanism cannot slip through untested):

1. :data:`ON_META`: inputs and modules on meta; every output is a tensor on meta, of the
   expected shape.
2. :data:`NEED_VALUES`: functions that read their inputs' values (``int(x.max())`` to
   check token ids, ``.item()``, an argmax loop, eigenvalues) cannot run on meta, which has
   no values. They run on CPU inputs inside ``with torch.device("meta")``, where torch's
   *default* device is meta: a tensor the function makes without naming a device lands
   on meta, and the first operation mixing it with the CPU inputs fails, exactly as a CPU
   tensor meeting CUDA inputs fails on a GPU (whose default device is the CPU). Two holes
   of that stand-in are closed by :func:`meta_is_the_default`: ``cuda_tensor.numpy()``
   raises where ``cpu_tensor.numpy()`` does not, so ``Tensor.numpy`` may be called only
   by ``attnlab._validate.to_numpy`` (which copies to the host first); and a CPU
   ``torch.Generator`` cannot draw on a GPU, where meta lets it, so a draw with a
   generator must be made on the generator's device. Every tensor output is on the CPU.
3. :data:`OWN_TENSORS`: functions that take no tensor and build their own (a shape trace,
   timing experiments, data generators) run inside the same context: the model-building
   ones on the default device (meta), the data generators on the CPU, as documented.
4. :data:`MIXED`: every function that takes a mask or several tensors (a module's weights
   count as one), called with one of them on the CPU and the others on meta, raises the
   course's ``ValueError`` naming both devices. The policy (attnlab._validate): never move
   a tensor behind the learner's back, say which one is where and how to move it.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import pkgutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import torch
from torch import nn

import attnlab
from attnlab import _validate
from attnlab.mechanism import interop, kvcache, scale
from attnlab.mechanism.attention import CrossAttention, OneLayerAttention, SelfAttention
from attnlab.mechanism.config import TransformerConfig
from attnlab.mechanism.multihead import MultiHeadAttention
from attnlab.mechanism.transformer import (
    Decoder,
    DecoderBlock,
    DecoderOnlyLM,
    Encoder,
    EncoderBlock,
    EncoderDecoder,
    FeedForward,
    LayerNorm,
)
from attnlab.tasks import data, heads, recall, training

META, CPU = torch.device("meta"), torch.device("cpu")
B, H, T, S, d, d_v, D = 2, 2, 3, 5, 4, 6, 8  # batch, heads, queries, keys, d_head, d_v, d_model

# -- what is not a mechanism --------------------------------------------------------------------

EXCLUDED_MODULES = {
    "grading": "exercise graders: they call the learner's function and the lib reference on "
    "CPU test cases and report a verdict; the mechanisms they compare are tested here",
    "viz": "drawing: every array reaches matplotlib through to_numpy, which copies to the host",
    "widgets": "sliders that redraw figures; no tensor computation of their own",
    "data_files": "reads the text files shipped with the package",
    "course": "reads the chapters' notebooks from the repository's folders",
}
"""Whole modules that hold no mechanism (their public names are not enumerated)."""

_NUMBERS = "arithmetic on Python numbers (sizes in, a count out): no tensor in or out"
_CPU_RUN = (
    "a seeded, single-threaded training run on the CPU by design, so that every machine "
    "reproduces the numbers the chapter prints (or stores); it takes no tensor"
)
_TEXT = "text in, token strings or ids (Python lists) out: no tensor"
_CONTAINER = "a frozen record of results or settings: no computation"

EXCLUDED = {
    "config.TransformerConfig": _CONTAINER + " (the hyper-parameters of a model)",
    "multihead.ShapeTrace": _CONTAINER + " (shapes recorded by trace_shapes, covered)",
    "recall.RecallCurve": _CONTAINER,
    "training.AdderRun": _CONTAINER,
    "data.Batch": _CONTAINER + " (a NamedTuple of three tensors)",
    "multihead.mha_flops": _NUMBERS,
    "multihead.mha_parameter_count": _NUMBERS,
    "kvcache.kv_cache_bytes": _NUMBERS,
    "rnn.path_lengths": _NUMBERS,
    "recall.question_id": _NUMBERS,
    "loop.lr_at": _NUMBERS,
    "measure.median_seconds": "times a callable (processor or wall clock); no tensor in or "
    "out (device= only says which GPU to synchronize before reading the clock)",
    "measure.median_seconds_each": "times callables in turns, as measure.median_seconds",
    "measure.check_clock": "validates the name of a clock",
    "measure.Stopwatch": "reads a clock, less the paused stretches: no tensor",
    "measure.times_faster": _NUMBERS,
    "decoding.generation_seconds": "times generate, with and without the cache "
    "(generate's own device behaviour is tested under NEED_VALUES)",
    "measure.peak_memory": "reads the CPU allocator through torch.profiler: a measurement of "
    "the CPU by definition",
    "seed.seed_everything": "seeds the random generators and sets the thread count",
    "embeddings.EmbeddingTable": "a NumPy table of hand-made word vectors (no tensor)",
    "embeddings.toy_embeddings": "builds the NumPy EmbeddingTable",
    "embeddings.UnknownWordError": "an exception class",
    "heads.handset_heads": "builds NumPy queries and keys from sizes (no tensor)",
    "heads.train_heads_model": _CPU_RUN,
    "recall.train_recall": _CPU_RUN,
    "recall.compare_recall": _CPU_RUN,
    "recall.write_recall_curves": _CPU_RUN,
    "recall.stored_recall_curves": "loads stored curves (JSON numbers) shipped with the package",
    "recall.same_outcome": "compares two RecallCurve records (Python numbers): no tensor",
    "recall.recall_over_seeds": _CPU_RUN,
    "recall.write_recall_seeds": _CPU_RUN,
    "recall.stored_recall_seeds": "loads stored accuracies (numbers) shipped with the package",
    "heads.roles_over_seeds": _CPU_RUN,
    "heads.write_head_roles": _CPU_RUN,
    "heads.stored_head_roles": "loads stored weights and accuracies (NumPy numbers) shipped "
    "with the package",
    "training.train_adder": _CPU_RUN,
    "training.write_stored_adder": _CPU_RUN,
    "training.stored_adder": "loads the stored adder onto the CPU (map_location='cpu'); "
    "move it with .to(device), which the models here support (DecoderOnlyLM is covered)",
    "tokenizer.Vocab": _TEXT,
    "tokenizer.WordPieceTokenizer": _TEXT,
    "tokenizer.bpe_segment": _TEXT,
    "tokenizer.default_vocab": _TEXT,
    "tokenizer.train_bpe": _TEXT,
    "tokenizer.vocab_from_merges": _TEXT,
    "tokenizer.word_tokenize": _TEXT,
}
"""Public callables that are not mechanisms, each with the reason."""

# -- helpers ------------------------------------------------------------------------------------


def x_(*shape: int, dtype: torch.dtype = torch.float32, device: torch.device = META) -> Any:
    """A tensor of ``shape`` on ``device`` (meta by default: no values, only a shape)."""
    return torch.zeros(shape, dtype=dtype, device=device)


def ids_(*shape: int, device: torch.device = META) -> Any:
    """Token ids of ``shape``: 0, 1, 2, ... cycling through 4 (valid in any vocabulary here)."""
    n = int(np.prod(shape))
    return (torch.arange(n, device=CPU) % 4).reshape(shape).to(device)


def ones_(*shape: int, device: torch.device = META) -> Any:
    """An all-``True`` boolean mask of ``shape``."""
    return torch.ones(shape, dtype=torch.bool, device=device)


def causal_(t: int, s: int | None = None, device: torch.device = META) -> Any:
    return attnlab.causal_mask(t, s, like=x_(1, device=device))


def on(module: nn.Module, device: torch.device = META) -> Any:
    return module.to(device)


_cpu_ = functools.partial(x_, device=CPU)


def tensors(out: Any) -> list[torch.Tensor]:
    """The tensors in ``out`` (a tensor, or tuples, lists and dicts of them), in order."""
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, dict):
        out = list(out.values())
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in tensors(o)]
    return []


@dataclass(frozen=True)
class Case:
    """One run of the public callable ``covers`` (``"module.name"``).

    ``run`` makes the call; in :data:`NEED_VALUES` it returns a thunk instead, built
    outside the meta-default context (the CPU inputs) and called inside it. ``shapes``:
    the shapes of the tensor outputs, in order (``None``: not compared; a callable: computed
    when the test runs). ``check``: an extra assertion on the result.
    """

    covers: str
    run: Callable[[], Any]
    shapes: Any = ()
    label: str = ""
    check: Callable[[Any], bool] | None = None

    @property
    def id(self) -> str:
        return f"{self.covers}[{self.label}]" if self.label else self.covers


def _expected(case: Case) -> Any:
    return case.shapes() if callable(case.shapes) else case.shapes


def _check_result(case: Case, result: Any, device: torch.device) -> None:
    outs = tensors(result)
    assert [t.device for t in outs] == [device] * len(outs), f"{case.id}: outputs off {device}"
    shapes = _expected(case)
    if shapes is not None:
        assert [tuple(t.shape) for t in outs] == [tuple(s) for s in shapes], case.id
    if case.check is not None:
        assert case.check(result), f"{case.id}: unexpected result {result!r}"


# -- 1. on meta ---------------------------------------------------------------------------------


def _tiled_backward() -> tuple[Any, ...]:
    q, k, v = (x_(*s).requires_grad_() for s in ((B, H, T, d), (B, H, S, d), (B, H, S, d_v)))
    out = attnlab.tiled_attention(q, k, v, ones_(T, S), causal=True, block_q=2, block_k=2)
    out.sum().backward()  # the tiled backward pass recomputes the tiles: on meta too
    return out, q.grad, k.grad, v.grad


def _layer_kv(capacity: int | None) -> tuple[Any, ...]:
    cache = kvcache.LayerKV(capacity)
    cache.update(x_(B, H, T, d), x_(B, H, T, d_v))
    k, v = cache.update(x_(B, H, 1, d), x_(B, H, 1, d_v))  # one more position
    return k, v, cache.k, cache.v


def _decoder_with_cache() -> tuple[Any, ...]:
    decoder = on(
        Decoder(
            TransformerConfig(d_model=D, n_heads=H, n_layers=2, d_ff=16, norm_first=False),
            cross_attention=False,
        )
    )
    cache = attnlab.KVCache(2, capacity=8)
    first = decoder(x_(B, T, D), None, causal_(T), cache=cache)  # the prompt
    step = decoder(x_(B, 1, D), None, None, cache=cache)  # one new token
    return first, step, cache[0].k, cache[1].v


def _gqa_module_with_cache() -> tuple[Any, ...]:
    gqa = on(scale.GroupedQueryAttention(D, 4, 2))
    cache = kvcache.LayerKV()
    gqa(x_(B, T, D), causal_(T), cache)
    return gqa(x_(B, 1, D), None, cache)  # one query over T + 1 cached keys


def _mha_from_torch() -> tuple[Any, ...]:
    theirs = nn.MultiheadAttention(D, H, batch_first=True, device=META)
    ours = MultiHeadAttention.from_torch(theirs)
    return (*ours(x_(B, T, D)), ours.W_q.weight)


def _mha_to_torch() -> tuple[Any, ...]:
    theirs = on(MultiHeadAttention(D, H)).to_torch()
    out, weights = theirs(*(x_(B, T, D),) * 3, average_attn_weights=False)
    return out, weights, theirs.in_proj_weight


def _copied_encoder_block() -> Any:
    theirs = nn.TransformerEncoderLayer(D, H, 16, batch_first=True, device=META)
    ours = interop.copy_torch_weights(
        on(EncoderBlock(TransformerConfig(d_model=D, n_heads=H, d_ff=16, norm_first=False))), theirs
    )
    return ours(x_(B, T, D)), ours.ffn.linear1.weight


def _block(block: nn.Module, *args: Any) -> tuple[Any, ...]:
    """A block's output and the attention weights it keeps (on meta too)."""
    out = on(block)(*args)
    kept = [getattr(block, n, None) for n in ("self_attn_weights", "cross_attn_weights")]
    return (out, *[w for w in kept if w is not None])


def _task_shapes(task: Any) -> Callable[[], list[tuple[int, ...]]]:
    return lambda: [tuple(t.shape) for t in task.sample(B, rng=0)]


_COPY = data.Task("copy", n_symbols=4, min_len=3, max_len=3)
_q, _k, _v = (B, H, T, d), (B, H, S, d), (B, H, S, d_v)

ON_META = [
    # similarity
    Case("similarity.dot", lambda: attnlab.dot(x_(B, T, d), x_(d)), [(B, T)]),
    Case(
        "similarity.cosine_similarity",
        lambda: attnlab.cosine_similarity(x_(B, T, d), x_(B, T, d)),
        [(B, T)],
    ),
    Case("similarity.scores", lambda: attnlab.scores(x_(*_q), x_(*_k)), [(B, H, T, S)]),
    Case(
        "similarity.scaled_scores", lambda: attnlab.scaled_scores(x_(*_q), x_(*_k)), [(B, H, T, S)]
    ),
    Case(
        "similarity.general_scores",
        lambda: attnlab.general_scores(x_(B, T, 3), x_(B, S, d), x_(3, d)),
        [(B, T, S)],
    ),
    Case(
        "similarity.additive_scores",
        lambda: attnlab.additive_scores(x_(B, T, 3), x_(B, S, d), x_(3, 5), x_(d, 5), x_(5)),
        [(B, T, S)],
    ),
    Case("similarity.softmax", lambda: attnlab.softmax(x_(B, T, S)), [(B, T, S)]),
    Case(
        "similarity.softmax",
        lambda: attnlab.softmax(x_(B, T, S), temperature=0.5, mask=ones_(B, 1, S)),
        [(B, T, S)],
        "mask",
    ),
    # attention
    Case(
        "attention.scaled_dot_product_attention",
        lambda: attnlab.scaled_dot_product_attention(x_(*_q), x_(*_k), x_(*_v), ones_(T, S)),
        [(B, H, T, d_v), (B, H, T, S)],
    ),
    Case(
        "attention.SelfAttention",
        lambda: on(SelfAttention(D, d))(x_(B, T, D), causal_(T)),
        [(B, T, d), (B, T, T)],
    ),
    Case(
        "attention.CrossAttention",
        lambda: on(CrossAttention(D, d, d_context=6))(x_(B, T, D), x_(B, S, 6), ones_(B, 1, S)),
        [(B, T, d), (B, T, S)],
    ),
    # multi-head attention
    Case("multihead.split_heads", lambda: attnlab.split_heads(x_(B, T, D), H), [(B, H, T, D // H)]),
    Case("multihead.merge_heads", lambda: attnlab.merge_heads(x_(B, H, T, d)), [(B, T, H * d)]),
    Case(
        "multihead.MultiHeadAttention",
        lambda: on(MultiHeadAttention(D, H))(
            x_(B, T, D), x_(B, S, D), x_(B, S, D), ones_(B, 1, 1, S)
        ),
        [(B, T, D), (B, H, T, S)],
    ),
    Case(
        "multihead.MultiHeadAttention",
        _mha_from_torch,
        [(B, T, D), (B, H, T, T), (D, D)],
        "from_torch",
    ),
    Case(
        "multihead.MultiHeadAttention",
        _mha_to_torch,
        [(B, T, D), (B, H, T, T), (3 * D, D)],
        "to_torch",
    ),
    # positions
    Case(
        "positional.sinusoidal_encoding",
        lambda: attnlab.sinusoidal_encoding(T, D, like=x_(1)),
        [(T, D)],
    ),
    Case("positional.offset_matrix", lambda: attnlab.offset_matrix(3, D, like=x_(1)), [(D, D)]),
    Case(
        "positional.index_encoding",
        lambda: attnlab.index_encoding(T, D, divide_by_length=True, like=x_(1)),
        [(T, D)],
    ),
    Case("positional.apply_rope", lambda: attnlab.apply_rope(x_(*_q)), [_q]),
    Case(
        "positional.apply_rope",
        lambda: attnlab.apply_rope(x_(B, T, d), [4, 5, 9]),
        [(B, T, d)],
        "positions",
    ),
    Case(
        "positional.apply_rope",
        lambda: attnlab.apply_rope(x_(B, T, d), torch.tensor([4, 5, 9])),
        [(B, T, d)],
        "cpu positions",  # positions are numbers, read on the host: any device is fine
    ),
    Case(
        "positional.SinusoidalPositionalEncoding",
        lambda: on(attnlab.SinusoidalPositionalEncoding(D, 16))(x_(B, T, D), 2),
        [(B, T, D)],
    ),
    Case(
        "positional.LearnedPositionalEmbedding",
        lambda: on(attnlab.LearnedPositionalEmbedding(D, 16))(x_(B, T, D), 2),
        [(B, T, D)],
    ),
    # masks
    Case("masking.causal_mask", lambda: causal_(T, S), [(T, S)]),
    Case(
        "masking.padding_mask",
        lambda: attnlab.padding_mask(tokens=ids_(B, S), pad_id=0),
        [(B, 1, S)],
        "tokens",
    ),
    Case(
        "masking.combine_masks",
        lambda: attnlab.combine_masks(causal_(T, S), ones_(B, 1, S)),
        [(B, T, S)],
    ),
    Case("masking.from_ignore_mask", lambda: attnlab.from_ignore_mask(ones_(B, S)), [(B, S)]),
    Case("masking.to_ignore_mask", lambda: attnlab.to_ignore_mask(ones_(T, S)), [(T, S)]),
    Case(
        "masking.to_key_padding_mask", lambda: attnlab.to_key_padding_mask(ones_(B, 1, S)), [(B, S)]
    ),
    Case(
        "masking.to_additive_mask",
        lambda: attnlab.to_additive_mask(ones_(T, S), dtype=torch.float16),
        [(T, S)],
    ),
    Case(
        "masking.to_hf_attention_mask",
        lambda: attnlab.to_hf_attention_mask(ones_(B, 1, 1, S)),
        [(B, S)],
    ),
    # heads that specialise
    Case("heads.decode_pair", lambda: heads.decode_pair(ids_(B, T) + 1), [(B, T), (B, T)]),
    Case(
        "heads.OneLayerMultiHead",
        lambda: on(heads.OneLayerMultiHead(4, 6, D, H))(ids_(B, 5)),
        [(B, 5, 17)],
    ),
    # the recurrent baseline
    Case(
        "rnn.VanillaRNN",
        lambda: on(attnlab.VanillaRNN(3, D))(x_(B, T, 3), x_(B, D)),
        [(B, T, D), (B, D)],
    ),
    Case(
        "rnn.input_jacobian_norms",
        lambda: attnlab.input_jacobian_norms(on(attnlab.VanillaRNN(3, D)), x_(B, T, 3)),
        [(B, T)],
    ),
    Case(
        "rnn.input_jacobian_norms",
        lambda: attnlab.input_jacobian_norms(on(nn.RNN(3, D, batch_first=True)), x_(B, T, 3)),
        [(B, T)],
        "nn.RNN",
    ),
    # attention at scale
    Case(
        "scale.online_softmax_update",
        lambda: scale.online_softmax_update(x_(B, T), x_(B, T), x_(B, T, 2)),
        [(B, T), (B, T)],
    ),
    Case(
        "scale.online_softmax_stats",
        lambda: scale.online_softmax_stats(x_(B, T, S), 2, mask=ones_(T, S)),
        [(B, T, 3), (B, T, 3)],
    ),
    Case("scale.online_softmax", lambda: attnlab.online_softmax(x_(B, T, S), 2), [(B, T, S)]),
    Case(
        "scale.online_softmax",
        lambda: attnlab.online_softmax(x_(B, T, S), 2, mask=ones_(B, 1, S)),
        [(B, T, S)],
        "mask",
    ),
    Case(
        "scale.attention_tile_update",
        lambda: scale.attention_tile_update(
            x_(B, 2), x_(B, 2), x_(B, 2, d_v), x_(B, 2, 3), x_(B, 3, d_v)
        ),
        [(B, 2), (B, 2), (B, 2, d_v)],
    ),
    Case(
        "scale.tiled_attention",
        lambda: attnlab.tiled_attention(
            x_(*_q), x_(*_k), x_(*_v), ones_(T, S), block_q=2, block_k=2
        ),
        [(B, H, T, d_v)],
    ),
    Case(
        "scale.tiled_attention", _tiled_backward, [(B, H, T, d_v), _q, _k, _v], "causal, backward"
    ),
    Case("scale.repeat_kv", lambda: scale.repeat_kv(x_(B, 2, S, d), 2), [(B, 4, S, d)]),
    Case(
        "scale.grouped_query_attention",
        lambda: attnlab.grouped_query_attention(
            x_(B, 4, T, d), x_(B, 2, S, d), x_(B, 2, S, d_v), ones_(B, 4, T, S)
        ),
        [(B, 4, T, d_v), (B, 4, T, S)],
    ),
    Case(
        "scale.GroupedQueryAttention",
        lambda: on(scale.GroupedQueryAttention(D, 4, 2))(x_(B, T, D), causal_(T)),
        [(B, T, D), (B, 4, T, T)],
    ),
    Case(
        "scale.GroupedQueryAttention",
        _gqa_module_with_cache,
        [(B, 1, D), (B, 4, 1, T + 1)],
        "cache",
    ),
    Case(
        "kvcache.LayerKV",
        lambda: _layer_kv(None),
        [(B, H, T + 1, d), (B, H, T + 1, d_v)] * 2,
        "growing",
    ),
    Case(
        "kvcache.LayerKV",
        lambda: _layer_kv(8),
        [(B, H, T + 1, d), (B, H, T + 1, d_v)] * 2,
        "preallocated",
    ),
    Case(
        "kvcache.KVCache",
        _decoder_with_cache,
        [(B, T, D), (B, 1, D), (B, H, T + 1, D // H), (B, H, T + 1, D // H)],
    ),
    # the transformer
    Case("transformer.LayerNorm", lambda: on(LayerNorm(D))(x_(B, T, D)), [(B, T, D)]),
    Case("transformer.FeedForward", lambda: on(FeedForward(D, 16))(x_(B, T, D)), [(B, T, D)]),
    Case(
        "transformer.EncoderBlock",
        lambda: _block(
            EncoderBlock(TransformerConfig(d_model=D, n_heads=H, d_ff=16, norm_first=False)),
            x_(B, T, D),
            ones_(B, 1, 1, T),
        ),
        [(B, T, D), (B, H, T, T)],
    ),
    Case(
        "transformer.EncoderBlock",
        lambda: _block(
            EncoderBlock(TransformerConfig(d_model=D, n_heads=H, d_ff=16, norm_first=True)),
            x_(B, T, D),
        ),
        [(B, T, D), (B, H, T, T)],
        "pre-LN",
    ),
    Case(
        "transformer.DecoderBlock",
        lambda: _block(
            DecoderBlock(TransformerConfig(d_model=D, n_heads=H, d_ff=16, norm_first=False)),
            x_(B, T, D),
            x_(B, S, D),
            causal_(T),
            ones_(B, 1, 1, S),
        ),
        [(B, T, D), (B, H, T, T), (B, H, T, S)],
    ),
    Case(
        "transformer.Encoder",
        lambda: on(
            Encoder(TransformerConfig(d_model=D, n_heads=H, n_layers=2, d_ff=16, norm_first=True))
        )(x_(B, S, D), ones_(B, 1, 1, S)),
        [(B, S, D)],
    ),
    Case(
        "transformer.Decoder",
        lambda: on(
            Decoder(TransformerConfig(d_model=D, n_heads=H, n_layers=2, d_ff=16, norm_first=False))
        )(x_(B, T, D), x_(B, S, D), causal_(T), ones_(B, 1, 1, S)),
        [(B, T, D)],
    ),
    Case("interop.copy_torch_weights", _copied_encoder_block, [(B, T, D), (16, D)]),
    # tasks: their tensors go where they are told
    Case("data.Task", lambda: _COPY.sample(B, rng=0, device=META), _task_shapes(_COPY)),
    Case(
        "data.make_batch",
        lambda: data.make_batch(_COPY, B, rng=0, device=META),
        _task_shapes(_COPY),
    ),
    Case(
        "data.batches",
        lambda: next(data.batches(_COPY, B, rng=0, device=META)),
        _task_shapes(_COPY),
    ),
    Case(
        "data.DateTask",
        lambda: data.DateTask().sample(B, rng=0, device=META),
        _task_shapes(data.DateTask()),
    ),
    Case(
        "data.AdditionTask",
        lambda: data.AdditionTask().sample(B, rng=0, device=META),
        _task_shapes(data.AdditionTask()),
    ),
]


@pytest.mark.parametrize("case", ON_META, ids=lambda c: c.id)
def test_runs_on_meta(case: Case) -> None:
    result = case.run()
    assert tensors(result), f"{case.id}: no tensor came out"
    _check_result(case, result, META)


# -- 2. functions that need values: CPU inputs, meta as the default device ------------------------


@contextlib.contextmanager
def meta_is_the_default(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Make the CPU the *wrong* device: what a GPU run makes of the CPU.

    Inside, torch's default device is meta; ``Tensor.numpy`` may only be called by
    ``to_numpy`` (which moves a tensor to the host first), and a random draw with a
    generator must happen on the generator's device (CUDA refuses a CPU generator).
    """
    real_numpy = torch.Tensor.numpy
    inside_to_numpy = []  # the device context re-dispatches the call: let that through

    def host_only(self: torch.Tensor, *args: Any, **kwargs: Any) -> np.ndarray:
        caller = sys._getframe(1).f_code
        if not inside_to_numpy and caller is not _validate.to_numpy.__code__:
            raise AssertionError(
                f"Tensor.numpy() called from {caller.co_name} ({caller.co_filename}): "
                "it fails for a tensor on a GPU; convert with attnlab._validate.to_numpy"
            )
        inside_to_numpy.append(caller)
        try:
            return real_numpy(self, *args, **kwargs)
        finally:
            inside_to_numpy.pop()

    def on_generator_device(draw: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(draw)
        def strict(*args: Any, generator: Any = None, device: Any = None, **kwargs: Any) -> Any:
            where = torch.get_default_device() if device is None else torch.device(device)
            if generator is not None and where.type != generator.device.type:
                raise RuntimeError(
                    f"a {generator.device.type} generator cannot draw on {where.type} "
                    f"(CUDA refuses it; name device='{generator.device.type}')"
                )
            return draw(*args, generator=generator, device=device, **kwargs)

        return strict

    monkeypatch.setattr(torch.Tensor, "numpy", host_only)
    for name in ("rand", "randn", "randint", "randperm"):
        monkeypatch.setattr(torch, name, on_generator_device(getattr(torch, name)))
    with torch.device(META):
        yield


def _small_ed() -> EncoderDecoder:
    torch.manual_seed(0)
    return EncoderDecoder(
        12, 12, TransformerConfig(d_model=D, n_heads=H, d_ff=16, max_len=8)
    ).eval()


def _small_lm(pad_id: int | None = None) -> DecoderOnlyLM:
    torch.manual_seed(0)
    return DecoderOnlyLM(
        12, TransformerConfig(d_model=D, n_heads=H, d_ff=16, max_len=8), pad_id=pad_id
    )


_SRC = torch.tensor([[4, 5, 6, 0], [7, 8, 9, 10]])  # (2, 4), padded
_TGT = torch.tensor([[1, 4, 5], [1, 6, 0]])  # (2, 3)


def _prepare_ed_maps() -> Callable[[], Any]:
    ed = _small_ed()
    return lambda: (ed(_SRC, _TGT), ed.attention_maps())


def _prepare_lm_cache() -> Callable[[], Any]:
    lm = _small_lm(pad_id=0).eval()

    def run() -> tuple[Any, ...]:
        cache = attnlab.KVCache(1)
        return lm(_SRC, cache), lm(_TGT[:, :1], cache), cache[0].k

    return run


def _prepare_adder_exact_match() -> Callable[[], Any]:
    task = data.AdditionTask(1)
    torch.manual_seed(0)
    config = TransformerConfig(d_model=D, n_heads=H, d_ff=16, max_len=task.max_seq_len)
    lm = DecoderOnlyLM(task.vocab_size, config)
    return lambda: training.exact_match(lm, task, n=4, batch_size=2)


def _prepare_head_roles() -> Callable[[], Any]:
    torch.manual_seed(0)
    model = heads.OneLayerMultiHead(4, 6, D, H).eval()
    return functools.partial(heads.head_roles, model, ids_(B, 5, device=CPU))


def _prepare_accuracy_without_heads() -> Callable[[], Any]:
    torch.manual_seed(0)
    model = heads.OneLayerMultiHead(4, 6, D, H).eval()
    return functools.partial(heads.accuracy_without_heads, model, ids_(B, 5, device=CPU), [1])


def _prepare_radius() -> Callable[[], Any]:
    torch.manual_seed(0)
    net = attnlab.VanillaRNN(3, D)
    return lambda: attnlab.spectral_radius(attnlab.set_recurrent_radius(net, 0.9).weight_hh)


def _prepare_gradient_norms(net: nn.Module) -> Callable[[], Any]:
    generator = torch.Generator().manual_seed(0)
    return lambda: attnlab.gradient_norm_vs_distance(net, 5, batch=2, generator=generator)


def _prepare_gap() -> Callable[[], Any]:
    torch.manual_seed(0)
    layer = SelfAttention(D)
    x = torch.randn(B, T, D)
    return lambda: attnlab.permutation_gap(lambda x: layer(x)[0], x, [2, 0, 1])


def _prepare_pronoun_accuracy() -> Callable[[], Any]:
    ids, targets = data.pronoun_batch(B, rng=0)
    logits = torch.randn(B, 6, len(data.PRONOUN_WORDS))
    return lambda: data.pronoun_accuracy(logits, ids, targets)


def _cpu(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[[], Callable[[], Any]]:
    """Prepare ``fn(*args, **kwargs)``: the arguments are built now, on the CPU."""
    return lambda: lambda: fn(*args, **kwargs)


def _is_probability(r: float) -> bool:
    return isinstance(r, float) and 0.0 <= r <= 1.0


NEED_VALUES = [
    Case(
        "attention.OneLayerAttention",
        lambda: functools.partial(OneLayerAttention(_cpu_(6, D)), ids_(B, T, device=CPU)),
        [(B, T, 6)],
        "checks ids with int(ids.max())",
    ),
    Case(
        "attention.OneLayerAttention",
        lambda: functools.partial(
            OneLayerAttention(_cpu_(6, D), learned=False).attend, ids_(B, T, device=CPU)
        ),
        [(B, T, D), (B, T, T)],
        "weightless attend",
    ),
    Case(
        "positional.permutation_gap",
        _prepare_gap,
        [],
        "returns a float",
        check=lambda gap: isinstance(gap, float) and gap < 1e-5,
    ),
    Case(
        "masking.padding_mask",
        _cpu(attnlab.padding_mask, lengths=torch.tensor([2, 5]), max_len=S),
        [(B, 1, S)],
        "lengths: checks int(lengths.max())",
    ),
    Case(
        "masking.from_additive_mask",
        _cpu(attnlab.from_additive_mask, attnlab.to_additive_mask(causal_(T, S, device=CPU))),
        [(T, S)],
        "checks for NaN",
    ),
    Case(
        "masking.from_hf_attention_mask",
        _cpu(attnlab.from_hf_attention_mask, torch.tensor([[1, 1, 0], [1, 0, 0]])),
        [(B, 1, 3)],
        "checks the values are 0/1",
    ),
    Case(
        "embeddings.embed",
        _cpu(attnlab.embed, ids_(B, T, device=CPU), _cpu_(6, D)),
        [(B, T, D)],
        "checks the id range",
    ),
    Case(
        "embeddings.one_hot",
        _cpu(attnlab.one_hot, ids_(B, T, device=CPU), 6, like=torch.zeros(1, dtype=torch.float16)),
        [(B, T, 6)],
        "checks the id range",
    ),
    Case(
        "heads.head_roles",
        _prepare_head_roles,
        [],
        "returns NumPy weights",
        check=lambda r: r["previous"].shape == r["first"].shape == (H,),
    ),
    Case(
        "heads.accuracy_without_heads",
        _prepare_accuracy_without_heads,
        [],
        "returns a float",
        check=_is_probability,
    ),
    Case(
        "rnn.spectral_radius",
        _prepare_radius,
        [],
        "eigenvalues",
        check=lambda rho: abs(rho - 0.9) < 1e-5,
    ),
    Case("rnn.set_recurrent_radius", _prepare_radius, [], "eigenvalues", check=lambda r: r > 0),
    Case(
        "rnn.gradient_norm_vs_distance",
        lambda: _prepare_gradient_norms(attnlab.VanillaRNN(3, D)),
        [],
        "returns NumPy",
        check=lambda norms: norms.shape == (5,) and norms.dtype == np.float64,
    ),
    Case(
        "rnn.gradient_norm_vs_distance",
        lambda: _prepare_gradient_norms(nn.RNN(3, D)),
        [],
        "nn.RNN, time first",
        check=lambda norms: norms.shape == (5,),
    ),
    Case(
        "transformer.EncoderDecoder",
        _prepare_ed_maps,
        [(B, 3, 12), (B, H, 4, 4), (B, H, 3, 3), (B, H, 3, 4)],
        "checks token ids",
    ),
    Case(
        "transformer.DecoderOnlyLM",
        _prepare_lm_cache,
        [(B, 4, 12), (B, 1, 12), (B, H, 5, D // H)],
        "checks token ids; cache",
    ),
    Case(
        "decoding.greedy_decode",
        lambda: functools.partial(
            attnlab.greedy_decode, _small_ed(), _SRC, bos_id=1, eos_id=2, max_len=5
        ),
        None,
        "argmax loop",
        check=lambda out: out.shape[0] == B and 1 <= out.shape[1] <= 5,
    ),
    Case(
        "decoding.generate",
        lambda: functools.partial(attnlab.generate, _small_lm(), _SRC, max_new_tokens=3),
        [(B, 7)],
        "greedy",
    ),
    Case(
        "decoding.generate",
        lambda: functools.partial(
            attnlab.generate, _small_lm(), _SRC, max_new_tokens=6, use_cache=True
        ),
        [(B, 10)],
        "cache, sliding window",
    ),
    Case(
        "decoding.generate",
        lambda: functools.partial(
            attnlab.generate,
            _small_lm(),
            _SRC,
            max_new_tokens=3,
            temperature=0.8,
            generator=torch.Generator().manual_seed(0),
        ),
        [(B, 7)],
        "sampling",
    ),
    Case(
        "loop.sequence_loss",
        _cpu(training.sequence_loss, _cpu_(B, T, 5), torch.tensor([[1, 2, 0], [1, 0, 0]]), 0),
        [()],
        "checks the targets",
    ),
    Case(
        "loop.train",
        lambda: functools.partial(
            training.train, _small_ed(), data.batches(_COPY, B, rng=0), steps=2, progress=False
        ),
        [],
        "loss.item()",
        check=lambda losses: len(losses) == 2,
    ),
    Case(
        "training.exact_match",
        lambda: functools.partial(training.exact_match, _small_ed(), _COPY, 4, batch_size=2),
        [],
        "encoder-decoder",
        check=_is_probability,
    ),
    Case(
        "training.exact_match",
        _prepare_adder_exact_match,
        [],
        "decoder-only",
        check=_is_probability,
    ),
    Case(
        "data.pronoun_accuracy",
        _prepare_pronoun_accuracy,
        [],
        "reads the pronouns",
        check=_is_probability,
    ),
    Case(
        "data.token_labels",
        _cpu(data.token_labels, torch.tensor([0, 1, 2, 4])),
        [],
        "tensor ids",
        check=lambda labels: len(labels) == 4,
    ),
    Case(
        "recall.RecurrentRecaller",
        lambda: functools.partial(recall.RecurrentRecaller(4), ids_(B, 5, device=CPU)),
        [(B, 4)],
        "checks token ids",
    ),
    Case(
        "recall.AttentionRecaller",
        lambda: functools.partial(recall.AttentionRecaller(4), ids_(B, 5, device=CPU)),
        [(B, 4)],
        "checks token ids",
    ),
    Case(
        "recall.AttentionRecaller",
        lambda: functools.partial(recall.AttentionRecaller(4).weights, ids_(B, 5, device=CPU)),
        [(B, 5)],
        "weights",
    ),
]


@pytest.mark.parametrize("case", NEED_VALUES, ids=lambda c: c.id)
def test_needs_values_and_makes_nothing_on_the_default_device(
    case: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    call = case.run()  # the module and the CPU inputs, built with the CPU as the default
    with meta_is_the_default(monkeypatch):
        result = call()
    _check_result(case, result, CPU)


def test_the_meta_default_catches_a_tensor_made_without_a_device(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The stand-in itself: code that forgets the device fails inside it, and fixed code runs."""

    def forgets(x: torch.Tensor) -> torch.Tensor:
        return x + torch.zeros(x.shape)  # the bug: on the default device

    def remembers(x: torch.Tensor) -> torch.Tensor:
        return x + torch.zeros(x.shape, device=x.device)

    x = torch.ones(3)
    with meta_is_the_default(monkeypatch):
        with pytest.raises(RuntimeError, match="device"):
            forgets(x)
        assert remembers(x).device == CPU
        with pytest.raises(AssertionError, match="to_numpy"):
            x.numpy()  # a GPU tensor cannot do this
        assert _validate.to_numpy(x).tolist() == [1.0, 1.0, 1.0]
        with pytest.raises(RuntimeError, match="generator"):
            torch.randn(2, generator=torch.Generator())
        assert torch.randn(2, generator=torch.Generator(), device="cpu").device == CPU


# -- 3. functions that build their own tensors -----------------------------------------------------


def _cpu_tokens(out: Any) -> bool:
    return all(t.device == CPU and t.dtype == torch.int64 for t in tensors(out))


OWN_TENSORS = [
    Case(
        "multihead.trace_shapes",
        lambda: attnlab.trace_shapes(B, T, D, H, k_len=S),
        check=lambda trace: trace.shape_of("weights = softmax(scores)") == (B, H, T, S),
    ),
    Case(
        "rnn.sequential_vs_parallel_time",
        lambda: attnlab.sequential_vs_parallel_time([2, 3], 4, repeats=1),
        check=lambda rows: [r["length"] for r in rows] == [2, 3],
    ),
    Case(
        "rnn.attention_cost",
        lambda: attnlab.attention_cost([2, 3], 4, repeats=1),
        check=lambda rows: [r["scores_bytes"] for r in rows] == [2 * 2 * 4, 3 * 3 * 4],
    ),
    Case(
        "heads.first_and_previous_batch",
        lambda: heads.first_and_previous_batch(B, rng=0),
        check=_cpu_tokens,
    ),
    Case(
        "heads.first_and_previous_batches",
        lambda: next(heads.first_and_previous_batches(B, rng=0)),
        check=_cpu_tokens,
    ),
    Case("data.pronoun_batch", lambda: data.pronoun_batch(B, rng=0), check=_cpu_tokens),
    Case("data.pronoun_batches", lambda: next(data.pronoun_batches(B, rng=0)), check=_cpu_tokens),
    Case(
        "recall.recall_batch",
        lambda: recall.recall_batch(B, 3, generator=torch.Generator().manual_seed(0)),
        check=_cpu_tokens,
    ),
    Case(
        "recall.recall_batch",
        lambda: recall.recall_batch(B, 3),
        label="global RNG",
        check=_cpu_tokens,
    ),
]


@pytest.mark.parametrize("case", OWN_TENSORS, ids=lambda c: c.id)
def test_builds_its_own_tensors_on_the_right_device(
    case: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    with meta_is_the_default(monkeypatch):
        result = case.run()
    assert case.check is not None and case.check(result), f"{case.id}: {result!r}"


def test_timing_runs_where_it_is_told(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []

    def attention(q: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(q.device)
        return attnlab.scaled_dot_product_attention(q, *args, **kwargs)

    monkeypatch.setattr(attnlab.tasks.rnn, "scaled_dot_product_attention", attention)
    rows = attnlab.sequential_vs_parallel_time([2], 4, repeats=1, device=META)
    assert rows[0]["rnn_steps"] == 2
    assert attnlab.attention_cost([2], 4, repeats=1, device=META)[0]["scores_bytes"] == 16
    assert seen and set(seen) == {META}  # the timed attention ran on the device asked for


# -- 4. mixed devices: the course's own error -------------------------------------------------------


def _mixed(covers: str, label: str, call: Callable[[], Any]) -> Case:
    return Case(covers, call, label=label)


MIXED = [
    _mixed("similarity.dot", "b", lambda: attnlab.dot(x_(T, d), _cpu_(T, d))),
    _mixed(
        "similarity.cosine_similarity",
        "a",
        lambda: attnlab.cosine_similarity(_cpu_(T, d), x_(T, d)),
    ),
    _mixed("similarity.scores", "k", lambda: attnlab.scores(x_(T, d), _cpu_(S, d))),
    _mixed("similarity.scaled_scores", "k", lambda: attnlab.scaled_scores(x_(T, d), _cpu_(S, d))),
    _mixed(
        "similarity.general_scores",
        "W",
        lambda: attnlab.general_scores(x_(T, d), x_(S, d), _cpu_(d, d)),
    ),
    _mixed(
        "similarity.additive_scores",
        "v_a",
        lambda: attnlab.additive_scores(x_(T, d), x_(S, d), x_(d, 5), x_(d, 5), _cpu_(5)),
    ),
    _mixed(
        "similarity.softmax",
        "mask",
        lambda: attnlab.softmax(x_(T, S), mask=ones_(T, S, device=CPU)),
    ),
    _mixed(
        "attention.scaled_dot_product_attention",
        "mask",
        lambda: attnlab.scaled_dot_product_attention(
            x_(*_q), x_(*_k), x_(*_v), ones_(T, S, device=CPU)
        ),
    ),
    _mixed(
        "attention.scaled_dot_product_attention",
        "v",
        lambda: attnlab.scaled_dot_product_attention(x_(*_q), x_(*_k), _cpu_(*_v)),
    ),
    _mixed("attention.SelfAttention", "x", lambda: on(SelfAttention(D))(_cpu_(B, T, D))),
    _mixed(
        "attention.SelfAttention",
        "mask",
        lambda: on(SelfAttention(D))(x_(B, T, D), causal_(T, device=CPU)),
    ),
    _mixed(
        "attention.CrossAttention",
        "context",
        lambda: on(CrossAttention(D))(x_(B, T, D), _cpu_(B, S, D)),
    ),
    _mixed(
        "attention.CrossAttention",
        "mask",
        lambda: on(CrossAttention(D))(x_(B, T, D), x_(B, S, D), ones_(B, 1, S, device=CPU)),
    ),
    _mixed(
        "attention.OneLayerAttention",
        "ids",
        lambda: on(OneLayerAttention(x_(6, D, device=CPU)))(ids_(B, T, device=CPU)),
    ),
    _mixed(
        "multihead.MultiHeadAttention",
        "key",
        lambda: on(MultiHeadAttention(D, H))(x_(B, T, D), _cpu_(B, S, D)),
    ),
    _mixed(
        "multihead.MultiHeadAttention",
        "mask",
        lambda: on(MultiHeadAttention(D, H))(x_(B, T, D), mask=causal_(T, device=CPU)),
    ),
    _mixed(
        "positional.SinusoidalPositionalEncoding",
        "x",
        lambda: on(attnlab.SinusoidalPositionalEncoding(D, 16))(_cpu_(B, T, D)),
    ),
    _mixed(
        "positional.LearnedPositionalEmbedding",
        "x",
        lambda: on(attnlab.LearnedPositionalEmbedding(D, 16))(_cpu_(B, T, D)),
    ),
    _mixed(
        "masking.combine_masks",
        "second mask",
        lambda: attnlab.combine_masks(causal_(T), ones_(B, 1, T, device=CPU)),
    ),
    _mixed("embeddings.embed", "table", lambda: attnlab.embed(ids_(B, T), _cpu_(6, D))),
    _mixed(
        "embeddings.one_hot", "like", lambda: attnlab.one_hot(ids_(B, T, device=CPU), 6, like=x_(1))
    ),
    _mixed(
        "heads.OneLayerMultiHead",
        "x",
        lambda: on(heads.OneLayerMultiHead(4, 6, D, H))(ids_(B, 5, device=CPU)),
    ),
    _mixed("rnn.VanillaRNN", "x", lambda: on(attnlab.VanillaRNN(3, D))(_cpu_(B, T, 3))),
    _mixed("rnn.VanillaRNN", "h0", lambda: on(attnlab.VanillaRNN(3, D))(x_(B, T, 3), _cpu_(B, D))),
    _mixed(
        "rnn.input_jacobian_norms",
        "x",
        lambda: attnlab.input_jacobian_norms(on(nn.RNN(3, D, batch_first=True)), _cpu_(B, T, 3)),
    ),
    _mixed(
        "scale.online_softmax_update",
        "block",
        lambda: scale.online_softmax_update(x_(T), x_(T), _cpu_(T, 2)),
    ),
    _mixed(
        "scale.online_softmax_stats",
        "mask",
        lambda: scale.online_softmax_stats(x_(T, S), 2, mask=ones_(T, S, device=CPU)),
    ),
    _mixed(
        "scale.online_softmax",
        "mask",
        lambda: attnlab.online_softmax(x_(T, S), 2, mask=ones_(T, S, device=CPU)),
    ),
    _mixed(
        "scale.attention_tile_update",
        "v",
        lambda: scale.attention_tile_update(x_(2), x_(2), x_(2, d_v), x_(2, 3), _cpu_(3, d_v)),
    ),
    _mixed(
        "scale.tiled_attention", "k", lambda: attnlab.tiled_attention(x_(*_q), _cpu_(*_k), x_(*_v))
    ),
    _mixed(
        "scale.tiled_attention",
        "mask",
        lambda: attnlab.tiled_attention(x_(*_q), x_(*_k), x_(*_v), ones_(T, S, device=CPU)),
    ),
    _mixed(
        "scale.grouped_query_attention",
        "v",
        lambda: attnlab.grouped_query_attention(x_(B, 4, T, d), x_(B, 2, S, d), _cpu_(B, 2, S, d)),
    ),
    _mixed(
        "scale.grouped_query_attention",
        "mask",
        lambda: attnlab.grouped_query_attention(
            x_(B, 4, T, d), x_(B, 2, S, d), x_(B, 2, S, d), ones_(T, S, device=CPU)
        ),
    ),
    _mixed(
        "scale.GroupedQueryAttention",
        "x",
        lambda: on(scale.GroupedQueryAttention(D, 4, 2))(_cpu_(B, T, D)),
    ),
    _mixed(
        "scale.GroupedQueryAttention",
        "mask",
        lambda: on(scale.GroupedQueryAttention(D, 4, 2))(x_(B, T, D), causal_(T, device=CPU)),
    ),
    _mixed(
        "kvcache.LayerKV", "v", lambda: kvcache.LayerKV().update(x_(B, H, T, d), _cpu_(B, H, T, d))
    ),
    _mixed(
        "kvcache.LayerKV",
        "cached",
        lambda: _update_twice(kvcache.LayerKV(8), x_(B, H, T, d), _cpu_(B, H, 1, d)),
    ),
    _mixed("transformer.LayerNorm", "x", lambda: on(LayerNorm(D))(_cpu_(B, T, D))),
    _mixed("transformer.FeedForward", "x", lambda: on(FeedForward(D, 16))(_cpu_(B, T, D))),
    _mixed(
        "transformer.EncoderBlock",
        "mask",
        lambda: on(
            EncoderBlock(TransformerConfig(d_model=D, n_heads=H, d_ff=16, norm_first=False))
        )(x_(B, T, D), ones_(B, 1, 1, T, device=CPU)),
    ),
    _mixed(
        "transformer.DecoderBlock",
        "memory",
        lambda: on(
            DecoderBlock(TransformerConfig(d_model=D, n_heads=H, d_ff=16, norm_first=False))
        )(x_(B, T, D), _cpu_(B, S, D)),
    ),
    _mixed(
        "transformer.DecoderBlock",
        "memory_mask",
        lambda: on(
            DecoderBlock(TransformerConfig(d_model=D, n_heads=H, d_ff=16, norm_first=False))
        )(x_(B, T, D), x_(B, S, D), None, ones_(B, 1, 1, S, device=CPU)),
    ),
    _mixed(
        "transformer.Encoder",
        "mask",
        lambda: on(
            Encoder(TransformerConfig(d_model=D, n_heads=H, n_layers=1, d_ff=16, norm_first=False))
        )(x_(B, S, D), ones_(B, 1, 1, S, device=CPU)),
    ),
    _mixed(
        "transformer.Decoder",
        "self_mask",
        lambda: on(
            Decoder(TransformerConfig(d_model=D, n_heads=H, n_layers=1, d_ff=16, norm_first=False))
        )(x_(B, T, D), x_(B, S, D), causal_(T, device=CPU)),
    ),
    _mixed("transformer.EncoderDecoder", "src", lambda: on(_small_ed())(_SRC, _TGT.to(META))),
    _mixed("transformer.EncoderDecoder", "tgt_in", lambda: _decode_on_cpu_target()),
    _mixed("transformer.DecoderOnlyLM", "tokens", lambda: on(_small_lm())(_SRC)),
    _mixed(
        "decoding.greedy_decode",
        "src",
        lambda: attnlab.greedy_decode(on(_small_ed()), _SRC, bos_id=1, eos_id=2, max_len=3),
    ),
    _mixed(
        "decoding.generate",
        "prompt",
        lambda: attnlab.generate(on(_small_lm()), _SRC, max_new_tokens=2),
    ),
    _mixed(
        "loop.sequence_loss",
        "targets",
        lambda: training.sequence_loss(x_(B, T, 5), ids_(B, T, device=CPU), 0),
    ),
    _mixed(
        "data.pronoun_accuracy",
        "ids",
        lambda: data.pronoun_accuracy(x_(B, 6, 20), ids_(B, 6, device=CPU), ids_(B, 6)),
    ),
    _mixed(
        "recall.RecurrentRecaller",
        "x",
        lambda: on(recall.RecurrentRecaller(4))(ids_(B, 5, device=CPU)),
    ),
    _mixed(
        "recall.AttentionRecaller",
        "x",
        lambda: on(recall.AttentionRecaller(4))(ids_(B, 5, device=CPU)),
    ),
]


def _update_twice(cache: kvcache.LayerKV, first: Any, second: Any) -> Any:
    cache.update(first, first)
    return cache.update(second, second)  # new keys on another device than the cached ones


def _decode_on_cpu_target() -> Any:
    ed = on(_small_ed())
    memory = x_(B, 4, D)
    return ed.decode(_TGT, memory, ones_(B, 1, 1, 4))


@pytest.mark.parametrize("case", MIXED, ids=lambda c: c.id)
def test_mixed_devices_raise_the_courses_error(case: Case) -> None:
    with pytest.raises(ValueError, match=r"(?s)(\bcpu\b.*\bmeta\b|\bmeta\b.*\bcpu\b)") as error:
        case.run()
    assert "move" in str(error.value), f"{case.id}: the message must say what to move"


def test_the_device_message_names_each_tensor() -> None:
    with pytest.raises(ValueError) as error:
        attnlab.scaled_dot_product_attention(x_(T, d), x_(S, d), _cpu_(S, d_v))
    assert str(error.value) == (
        "q, k and v must be on one device, got q on meta, k on meta and v on cpu: "
        "move them, e.g. v.to('meta')"
    )
    with pytest.raises(ValueError) as error:
        attnlab.softmax(x_(T, S), mask=ones_(T, S, device=CPU))
    assert str(error.value) == (
        "mask is on cpu but the logits are on meta: move the mask, e.g. mask.to('meta')"
    )


# -- every public callable is covered --------------------------------------------------------------


def _home(obj: Any) -> str:
    """The module that defines ``obj``, by its last name: ``"multihead"``."""
    return obj.__module__.rsplit(".", 1)[-1]


def public_callables() -> dict[str, Any]:
    """``{"module.name": obj}``: every callable in the ``__all__`` of attnlab and of its public
    modules, under the module that defines it (a re-export counts once).

    Constants (``PAD_ID``, ``ADDER``, ...) are not callables: they compute nothing.
    """
    modules = [attnlab] + [
        importlib.import_module(info.name)
        for info in pkgutil.walk_packages(attnlab.__path__, "attnlab.")
        if not info.ispkg
        and not any(part.startswith("_") for part in info.name.split("."))
        and EXCLUDED_MODULES.keys().isdisjoint(info.name.split("."))
    ]
    found = {}
    for module in modules:
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.ismodule(obj) or not callable(obj):
                continue
            if EXCLUDED_MODULES.keys().isdisjoint(obj.__module__.split(".")):
                found[f"{_home(obj)}.{obj.__name__}"] = obj
    return found


GROUPS = {"ON_META": ON_META, "NEED_VALUES": NEED_VALUES, "OWN_TENSORS": OWN_TENSORS}


def test_every_public_callable_is_covered_or_excluded() -> None:
    import test_device_text as chapter_9  # chapter 9's modules: their cases live there

    public = public_callables()
    covered = {c.covers for cases in GROUPS.values() for c in cases}
    covered |= {c.covers for c in chapter_9.CASES}
    excluded = {**EXCLUDED, **chapter_9.EXCLUDED}
    missing = sorted(set(public) - covered - set(excluded))
    assert not missing, (
        f"public callables with no device test: {missing}; add a case to ON_META (runs on "
        "meta), NEED_VALUES (reads values) or OWN_TENSORS, or a reasoned entry to EXCLUDED"
    )
    both = sorted(covered & set(excluded))
    assert not both, f"both tested and excluded: {both}"
    mixed = {c.covers for c in MIXED + chapter_9.MIXED}
    unknown = sorted((covered | set(excluded) | mixed) - set(public))
    assert not unknown, f"cases for names that are not public callables of attnlab: {unknown}"
    assert len(public) > 80  # the enumeration itself found the library


def _parameters(obj: Any) -> list[str]:
    """The parameters of a function, or of a module's ``forward`` (without ``self``)."""
    target = obj.forward if inspect.isclass(obj) and issubclass(obj, nn.Module) else obj
    return [p for p in inspect.signature(target).parameters if p != "self"]


def test_every_function_taking_a_mask_has_a_mixed_device_case() -> None:
    """A mask next to other inputs (not a converter whose one input is a mask)."""
    takes_mask = {
        name
        for name, obj in public_callables().items()
        if name not in EXCLUDED and any("mask" in p for p in _parameters(obj)[1:])
    }
    mixed_mask = {c.covers for c in MIXED if "mask" in c.label}
    assert takes_mask - mixed_mask == set(), sorted(takes_mask - mixed_mask)
    assert "attention.scaled_dot_product_attention" in takes_mask  # the scan sees masks
