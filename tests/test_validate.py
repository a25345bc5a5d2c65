"""Tests for attnlab._validate and the one behaviour it gives the whole library.

- NumPy scalars (``np.float32(0.5)``, ``np.int64(2)``, what ``x.std()`` returns) are
  accepted wherever a Python number is; booleans are never numbers;
- empty inputs (zero keys, an empty batch) give the same result in NumPy and torch;
- modules name the shapes and dtypes of a wrong input instead of passing torch's raw
  "mat1 and mat2 shapes cannot be multiplied" through.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from attnlab import _validate
from attnlab.mechanism.attention import SelfAttention, scaled_dot_product_attention
from attnlab.mechanism.config import TransformerConfig
from attnlab.mechanism.masking import causal_mask, padding_mask
from attnlab.mechanism.multihead import MultiHeadAttention, split_heads
from attnlab.mechanism.positional import (
    SinusoidalPositionalEncoding,
    offset_matrix,
    sinusoidal_encoding,
)
from attnlab.mechanism.similarity import cosine_similarity, scaled_scores, softmax
from attnlab.mechanism.transformer import (
    Decoder,
    DecoderBlock,
    Encoder,
    EncoderBlock,
    FeedForward,
    LayerNorm,
)
from attnlab.tasks.embeddings import one_hot

KINDS = ["numpy", "torch"]


def _kind(x: np.ndarray, kind: str):
    return torch.from_numpy(x) if kind == "torch" else x


def _np(x) -> np.ndarray:
    return x.numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


# -- numbers ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value", [2, np.int64(2), np.int32(2), np.uint8(2), np.array(2), torch.tensor(2)]
)
def test_positive_int_accepts_python_and_numpy_integers(value) -> None:
    got = _validate.positive_int(value, "n")
    assert got == 2 and type(got) is int


@pytest.mark.parametrize(
    "value", [True, np.bool_(True), 2.0, np.float64(2.0), "2", None, [2], np.array([2]), 0, -1]
)
def test_positive_int_rejects_bools_floats_and_non_positive(value) -> None:
    with pytest.raises(ValueError, match="n must be a positive integer"):
        _validate.positive_int(value, "n")


@pytest.mark.parametrize(
    "value",
    [0.5, np.float32(0.5), np.float64(0.5), np.array(0.5), torch.tensor(0.5)],
)
def test_positive_number_accepts_numpy_scalars(value) -> None:
    got = _validate.positive_number(value, "t")
    assert got == 0.5 and type(got) is float


@pytest.mark.parametrize("value", [True, False, 0, -1.0, float("nan"), "1", 1j, None])
def test_positive_number_rejects_bools_and_bad_values(value) -> None:
    with pytest.raises(ValueError, match="t must be a positive number"):
        _validate.positive_number(value, "t")


def test_check_int_names_its_range() -> None:
    assert _validate.check_int(np.int64(-3), "k") == -3
    with pytest.raises(ValueError, match="w must be a non-negative integer, got -1"):
        _validate.check_int(-1, "w", low=0)
    with pytest.raises(ValueError, match="w must be an integer >= 3, got 2"):
        _validate.check_int(2, "w", low=3)
    assert _validate.check_int(np.int32(4), "n", low=1, high=4) == 4
    with pytest.raises(ValueError, match=r"n must be an integer in 1\.\.4, got 5"):
        _validate.check_int(5, "n", low=1, high=4)
    with pytest.raises(ValueError, match="n must be an integer <= 4, got 5"):
        _validate.check_int(5, "n", high=4)
    with pytest.raises(ValueError, match="year must be a four-digit year, got 99"):
        _validate.check_int(99, "year", low=1000, high=9999, expected="a four-digit year")


def test_every_module_accepts_numpy_integers_and_names_bad_ones() -> None:
    """The checks copied by hand in several modules now go through _validate."""
    from attnlab import seed
    from attnlab.mechanism import scale
    from attnlab.tasks import data, heads, recall, rnn

    assert seed.seed_everything(np.int64(3)).integers(10) == np.random.default_rng(3).integers(10)
    ids, answer = recall.recall_batch(np.int64(2), np.int64(3), n_symbols=np.int64(4))
    assert tuple(ids.shape) == (2, 4) and tuple(answer.shape) == (2,)
    assert rnn.path_lengths(np.int64(8), np.int64(2))["dilated_convolution"] == 3
    x, _ = heads.first_and_previous_batch(np.int64(2), n_symbols=4, length=np.int64(5), rng=0)
    assert x.shape[0] == 2
    q = np.random.default_rng(0).standard_normal((4, 2))
    out = scale.tiled_attention(q, q, q, block_q=np.int64(2), block_k=np.int64(2))
    assert out.shape == (4, 2)
    for call, words in (
        (lambda: seed.seed_everything(-1), "seed must be a non-negative integer, got -1"),
        (lambda: seed.seed_everything(True), "seed must be a non-negative integer"),
        (lambda: recall.recall_batch(0, 3), "batch_size must be a positive integer"),
        (lambda: rnn.path_lengths(8, 1), "kernel_size must be an integer >= 2, got 1"),
        (lambda: scale.tiled_attention(q, q, q, block_q=0), "block_q must be a positive"),
        (lambda: data.AdditionTask(n_digits=5), r"n_digits must be an integer in 1\.\.4"),
        (lambda: data.DateTask(min_year=99), "min_year must be a four-digit year"),
    ):
        with pytest.raises(ValueError, match=words):
            call()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("tau", [np.float32(0.5), np.float64(0.5), 0.5])
def test_softmax_accepts_a_numpy_temperature(kind: str, tau) -> None:
    x = _kind(np.array([1.0, 2.0, 3.0]), kind)
    want = np.exp([2.0, 4.0, 6.0]) / np.exp([2.0, 4.0, 6.0]).sum()
    np.testing.assert_allclose(_np(softmax(x, temperature=tau)), want, rtol=0, atol=1e-12)


def test_softmax_accepts_what_std_returns_as_temperature() -> None:
    x = np.array([1.0, 2.0, 4.0], dtype=np.float32)
    tau = x.std()  # a np.float32
    assert isinstance(tau, np.float32)
    np.testing.assert_allclose(softmax(x, temperature=tau).sum(), 1.0, rtol=0, atol=1e-6)


@pytest.mark.parametrize("tau", [True, np.bool_(True)])
def test_softmax_rejects_a_bool_temperature(tau) -> None:
    with pytest.raises(ValueError, match="temperature must be a positive number"):
        softmax(np.ones(3), temperature=tau)


@pytest.mark.parametrize("kind", KINDS)
def test_numpy_integers_are_accepted_as_sizes(kind: str) -> None:
    x = _kind(np.arange(24.0).reshape(1, 2, 12), kind)
    assert tuple(split_heads(x, np.int64(3)).shape) == (1, 3, 2, 4)
    assert causal_mask(np.int64(2), np.int32(3)).shape == (2, 3)
    assert sinusoidal_encoding(np.int64(4), np.int64(6)).shape == (4, 6)
    assert offset_matrix(np.int64(2), np.int64(4)).shape == (4, 4)
    assert tuple(one_hot(_kind(np.array([0, 2]), kind), np.int64(3)).shape) == (2, 3)
    assert _np(padding_mask(lengths=_kind(np.array([1, 2]), kind), max_len=np.int64(3))).shape == (
        2,
        1,
        3,
    )


def test_numpy_numbers_are_accepted_by_modules() -> None:
    mha = MultiHeadAttention(np.int64(8), np.int64(2), dropout=np.float32(0.0))
    assert (mha.d_model, mha.n_heads, mha.d_head) == (8, 2, 4)
    assert type(mha.d_model) is int
    out, _ = mha(torch.zeros(1, 3, 8))
    assert out.shape == (1, 3, 8)
    assert SelfAttention(np.int64(4)).d_model == 4
    assert LayerNorm(np.int64(4), eps=np.float32(1e-5)).d_model == 4
    assert SinusoidalPositionalEncoding(np.int64(4), np.int64(6)).max_len == 6
    cfg = TransformerConfig(np.int64(8), np.int64(2), d_ff=np.int32(16), dropout=np.float32(0.1))
    assert (cfg.d_model, cfg.d_ff) == (8, 16) and type(cfg.d_ff) is int
    assert isinstance(cfg.dropout, float)


@pytest.mark.parametrize("kind", KINDS)
def test_numpy_scale_and_eps_are_accepted(kind: str) -> None:
    q = _kind(np.ones((2, 4)), kind)
    np.testing.assert_allclose(_np(scaled_scores(q, q, scale=np.float32(0.5))), 2.0, atol=1e-12)
    np.testing.assert_allclose(_np(cosine_similarity(q, q, eps=np.float32(1e-8))), 1.0, atol=1e-12)
    out, _ = scaled_dot_product_attention(q, q, q, scale=np.float64(0.5))
    np.testing.assert_allclose(_np(out), 1.0, atol=1e-12)


@pytest.mark.parametrize(
    "build",
    [
        lambda: MultiHeadAttention(True, 1),
        lambda: MultiHeadAttention(8, 2, dropout=True),
        lambda: sinusoidal_encoding(True, 4),
        lambda: causal_mask(True),
        lambda: LayerNorm(4, eps=True),
        lambda: TransformerConfig(8, 2, n_layers=True),
    ],
)
def test_bools_are_not_numbers(build) -> None:
    with pytest.raises(ValueError, match="must be"):
        build()


# -- empty inputs: NumPy and torch agree -----------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape", [(0,), (2, 0), (3, 0)])
def test_softmax_over_an_empty_axis_is_empty(kind: str, shape) -> None:
    got = softmax(_kind(np.zeros(shape), kind))
    assert tuple(got.shape) == shape and type(got) is type(_kind(np.zeros(1), kind))


@pytest.mark.parametrize("kind", KINDS)
def test_softmax_of_an_empty_batch_is_empty(kind: str) -> None:
    got = softmax(_kind(np.zeros((0, 3)), kind), mask=_kind(np.ones(3, dtype=bool), kind))
    assert tuple(got.shape) == (0, 3)


@pytest.mark.parametrize("kind", KINDS)
def test_attention_with_zero_keys_gives_zero_output(kind: str) -> None:
    q = _kind(np.ones((2, 3)), kind)
    k = _kind(np.zeros((0, 3)), kind)
    v = _kind(np.zeros((0, 4)), kind)
    out, weights = scaled_dot_product_attention(q, k, v)
    assert tuple(weights.shape) == (2, 0)
    np.testing.assert_array_equal(_np(out), np.zeros((2, 4)))


@pytest.mark.parametrize("kind", KINDS)
def test_attention_with_an_empty_batch(kind: str) -> None:
    q = _kind(np.ones((0, 2, 3)), kind)
    out, weights = scaled_dot_product_attention(q, q, q)
    assert tuple(out.shape) == (0, 2, 3) and tuple(weights.shape) == (0, 2, 2)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("max_len", [None, 4])
def test_padding_mask_of_an_empty_batch(kind: str, max_len) -> None:
    got = padding_mask(lengths=_kind(np.zeros(0, dtype=np.int64), kind), max_len=max_len)
    assert tuple(got.shape) == (0, 1, 0 if max_len is None else max_len)
    assert _np(got).dtype == bool


def test_empty_results_agree_between_numpy_and_torch() -> None:
    for fn in (
        lambda a: softmax(a),
        lambda a: scaled_dot_product_attention(a, a, a)[0],
        lambda a: cosine_similarity(a, a),
    ):
        x = np.zeros((0, 3))
        got_np, got_t = fn(x), fn(torch.from_numpy(x))
        assert got_np.shape == tuple(got_t.shape)


# -- the inputs of modules -------------------------------------------------------------------

CFG = TransformerConfig(d_model=8, n_heads=2, d_ff=16)


def _modules() -> list[tuple[str, nn.Module, tuple[int, ...]]]:
    return [
        ("LayerNorm", LayerNorm(8), (2, 3, 8)),
        ("FeedForward", FeedForward(8, 16), (2, 3, 8)),
        ("MultiHeadAttention", MultiHeadAttention(8, 2), (2, 3, 8)),
        ("SelfAttention", SelfAttention(8, 4), (2, 3, 8)),
        ("EncoderBlock", EncoderBlock(CFG), (2, 3, 8)),
        ("DecoderBlock", DecoderBlock(CFG, cross_attention=False), (2, 3, 8)),
        ("EncoderBlock", Encoder(CFG), (2, 3, 8)),
        ("DecoderBlock", Decoder(CFG, cross_attention=False), (2, 3, 8)),
    ]


@pytest.mark.parametrize(("who", "module", "shape"), _modules())
def test_modules_name_a_wrong_feature_size(who: str, module: nn.Module, shape) -> None:
    x = torch.zeros(*shape[:-1], 7)
    with pytest.raises(ValueError, match=rf"{who}.*8.*shape \(2, 3, 7\)") as err:
        module(x)
    assert "mat1" not in str(err.value)


@pytest.mark.parametrize(("who", "module", "shape"), _modules())
def test_modules_name_an_integer_dtype(who: str, module: nn.Module, shape) -> None:
    with pytest.raises(TypeError, match=rf"{who}.*floating-point.*int64"):
        module(torch.zeros(shape, dtype=torch.int64))


@pytest.mark.parametrize(("who", "module", "shape"), _modules()[1:])
def test_modules_name_a_dtype_other_than_their_weights(who: str, module, shape) -> None:
    with pytest.raises(TypeError, match=rf"{who} has float32 weights.*float64"):
        module(torch.zeros(shape, dtype=torch.float64))
    module.double()(torch.zeros(shape, dtype=torch.float64))  # converted: fine


def test_layer_norm_promotes_like_torch() -> None:
    out = LayerNorm(4)(torch.arange(4.0, dtype=torch.float64)[None])
    assert out.dtype == torch.float64  # float32 weights, float64 input: promoted, no error


@pytest.mark.parametrize(("who", "module", "shape"), _modules())
def test_modules_reject_numpy_input(who: str, module, shape) -> None:
    with pytest.raises(TypeError, match=r"torch"):
        module(np.zeros(shape, dtype=np.float32))


def test_decoder_block_names_a_wrong_memory() -> None:
    block = DecoderBlock(CFG)
    with pytest.raises(
        ValueError, match=r"DecoderBlock: memory must have shape \(B, T, d_model=8\)"
    ):
        block(torch.zeros(2, 3, 8), torch.zeros(2, 5, 6))


@pytest.mark.parametrize(("who", "module", "shape"), _modules())
def test_modules_accept_an_empty_batch(who: str, module: nn.Module, shape) -> None:
    out = module(torch.zeros(0, *shape[1:]))
    out = out[0] if isinstance(out, tuple) else out
    assert out.shape[0] == 0


# -- to_numpy ---------------------------------------------------------------------------------


def test_to_numpy_is_the_one_used_by_viz() -> None:
    from attnlab.drawing import viz

    assert viz.to_numpy is _validate.to_numpy


def test_to_numpy_detaches_and_checks() -> None:
    t = torch.ones(2, requires_grad=True) * 2
    np.testing.assert_array_equal(_validate.to_numpy(t), [2.0, 2.0])
    with pytest.raises(TypeError, match="real numbers"):
        _validate.to_numpy(np.array(["a"]))
    assert _validate.to_numpy(np.array(["a"]), numeric=False).dtype.kind == "U"


# --- speed without losing the checks -----------------------------------------------------


def test_namespace_is_the_array_api_compat_one() -> None:
    from array_api_compat import array_namespace

    t32, t64, a = torch.zeros(2), torch.zeros(2, dtype=torch.float64), np.zeros(2)
    assert _validate.namespace(x=t32, y=t64) is array_namespace(t32, t64)
    assert _validate.namespace(x=a) is array_namespace(a)
    assert _validate.namespace(x=t64) is _validate.namespace(x=t32)
    with pytest.raises(TypeError, match="mixed array kinds"):
        _validate.namespace(x=t32, y=a)


def test_first_tensor_is_the_first_parameter_else_buffer() -> None:
    nested = nn.Sequential(nn.Identity(), nn.Sequential(nn.Linear(2, 3)), nn.Linear(3, 1))
    only_buffers = SinusoidalPositionalEncoding(4, 6)
    empty = nn.Sequential(nn.Identity(), nn.ReLU())
    for module in (nested, MultiHeadAttention(8, 2), LayerNorm(4), only_buffers):
        expected = next(iter([*module.parameters(), *module.buffers()]))
        assert _validate._first_tensor(module) is expected
    assert _validate._first_tensor(empty) is None
    assert _validate._first_tensor(None) is None


def test_inputs_checked_skips_check_input_inside_only() -> None:
    norm = LayerNorm(4)
    with pytest.raises(ValueError, match="LayerNorm"):
        norm(torch.zeros(2, 3))
    with _validate.inputs_checked():
        _validate.check_input(np.zeros(3), 4, who="nobody")  # nothing is checked inside
        with pytest.raises(RuntimeError):  # torch's own error, not attnlab's
            norm(torch.zeros(2, 3))
    with pytest.raises(ValueError, match="LayerNorm"):  # checked again after the block
        norm(torch.zeros(2, 3))
    with pytest.raises(KeyError), _validate.inputs_checked():
        raise KeyError("an error inside")
    with pytest.raises(TypeError, match="LayerNorm"):  # and after an error inside
        norm(np.zeros((2, 4)))


# --- the last two holes of the independent check ---------------------------------------------


@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_queries_and_keys_of_width_zero_are_refused_naming_the_shape(kind: str) -> None:
    """With d = 0 every score is 0 and the weights would be uniform, silently."""
    q, k, v = np.ones((2, 3, 0)), np.ones((2, 4, 0)), np.ones((2, 4, 5))
    if kind == "torch":
        q, k, v = (torch.from_numpy(a) for a in (q, k, v))
    with pytest.raises(ValueError, match=r"at least one feature.*q: shape \(2, 3, 0\)"):
        scaled_dot_product_attention(q, k, v)


@pytest.mark.parametrize("axis", [None, 1.0, "0", [0]])
def test_softmax_axis_of_the_wrong_type_is_a_type_error(axis) -> None:
    with pytest.raises(TypeError, match="axis must be an integer"):
        softmax(np.ones((2, 3)), axis=axis)
    with pytest.raises(ValueError, match="out of range"):  # a wrong value stays a ValueError
        softmax(np.ones((2, 3)), axis=2)
