"""Chapter 8's quantitative sentences, recomputed from the library and asserted.

Each test quotes the sentences it checks (tests/_claims.py). The memory figures are
measured again with the chapter's own forms and lengths: ``peak_memory`` reads torch's
allocator through the profiler, which counts bytes, not time, so those numbers are the
same on every run. The timing claims read processor time, medians of runs taken in turns;
their margins are wide.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from _claims import claim, quotes_are_in
from torch.profiler import ProfilerActivity, profile

import attnlab as al
from attnlab.measure import median_seconds, peak_memory
from attnlab.mechanism.kvcache import KVCache
from attnlab.mechanism.scale import online_softmax_stats, online_softmax_update

CHAPTER = "chapters/08_scale.ipynb"
MiB, GiB = 2**20, 2**30
LENGTHS = [128, 256, 512, 1024]  # the memory figure's lengths
FORMS = {
    "materialised": lambda q, k, v: al.scaled_dot_product_attention(
        q, k, v, al.causal_mask(q.shape[-2], like=q)
    )[0],
    "tiled": lambda q, k, v: al.tiled_attention(q, k, v, causal=True),
    "PyTorch SDPA": lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
}
LLAMA2_7B = dict(n_layers=32, d_head=128, seq_len=4096, bytes_per_value=2)


def one_pass(form, T):
    """The chapter's measured pass: causal forward + backward, batch 1, 4 heads of 32."""
    qkv = [torch.randn(1, 4, T, 32) for _ in range(3)]

    def run():
        q, k, v = (x.clone().requires_grad_() for x in qkv)
        form(q, k, v).sum().backward()

    return run


@pytest.fixture(scope="module")
def peaks():
    al.seed_everything(0, threads=1)
    return {name: [peak_memory(one_pass(f, T)) for T in LENGTHS] for name, f in FORMS.items()}


# -- where the cost grows ---------------------------------------------------------------------


@claim(
    "at\n$T = 4096$, 8 heads and 12 layers, that is $96 \\times 64$ MiB = 6 GiB for a single\n"
    "sequence, against 1 MiB for the queries of one head.",
)
def test_the_weights_of_a_training_pass():
    T, bytes_ = 4096, 4
    assert T * T * bytes_ == 64 * MiB and 8 * 12 == 96
    assert 96 * 64 * MiB == 6 * GiB
    assert T * 64 * bytes_ == 1 * MiB


# -- online softmax ---------------------------------------------------------------------------


@claim(
    "The second block raises the maximum from 3 to 5, so the sum so far is multiplied by\n"
    "$e^{3-5} \\approx 0.135$ before the new terms are added: the 1.1353 of the first block\n"
    "counts only about 0.154 against the new maximum, and the block's own terms,\n"
    "$e^{0.5-5} + e^{5-5} = 1.0111$, bring the sum to 1.1648. The final pair matches the\n"
    "two-pass values to every printed digit.",
    "It is multiplied by $e^{3 - 5} = e^{-2} \\approx 0.135$ before the new block's terms are\n"
    "added.",
)
def test_the_running_sum_of_the_example_row():
    x = np.array([1.0, 3.0, 0.5, 5.0, 2.0, 4.0])
    m, total = np.array(-np.inf), np.array(0.0)
    states = []
    for start in range(0, 6, 2):
        m, total = online_softmax_update(m, total, x[start : start + 2])
        states.append((float(m), float(total)))
    assert [s[0] for s in states] == [3.0, 5.0, 5.0]
    assert f"{states[0][1]:.4f}" == "1.1353" and f"{states[1][1]:.4f}" == "1.1648"
    assert round(math.exp(-2), 3) == 0.135
    assert round(states[0][1] * math.exp(-2), 3) == 0.154
    assert f"{math.exp(0.5 - 5) + math.exp(0):.4f}" == "1.0111"
    whole = np.exp(x - x.max()).sum()
    assert f"{states[-1][1]:.4f}" == f"{whole:.4f}" == "1.5824"
    assert math.isclose(states[-1][1], whole, rel_tol=1e-14)


def slider_row():
    noise = 1.2 * np.random.default_rng(9).standard_normal(24)
    return np.round(np.linspace(-1, 3, 24) + noise, 2)  # the figure's row


@claim(
    "These scores drift upwards,\nso the maximum keeps rising; each rise scales down "
    "everything gathered so far, and the\nrunning sum can *fall* even though a block only adds "
    "positive terms (at blocks of 4 it\nfalls three times, each time with a jump of the maximum).",
    "At every block size the last point lands on the dashed line: the final maximum and sum\n"
    "do not depend on how the row was cut. Blocks of 24 are the ordinary two-pass softmax\n"
    "(one update); blocks of 1 are the fully streaming version (24 updates).",
)
def test_the_block_size_slider():
    row = slider_row()
    m, total = online_softmax_stats(row, 4)  # the default position
    falls = np.flatnonzero(np.diff(total) < 0)
    assert len(falls) == 3 and np.all(np.diff(m)[falls] > 0)
    assert np.diff(m).min() >= 0 and (np.diff(m) > 0).sum() >= 3  # keeps rising
    true_sum = np.exp(row - row.max()).sum()
    for size in (1, 2, 3, 4, 6, 8, 12, 24):
        m, total = online_softmax_stats(row, size)
        assert len(total) == math.ceil(24 / size)
        assert m[-1] == row.max()
        np.testing.assert_allclose(total[-1], true_sum, rtol=1e-12)
    assert len(online_softmax_stats(row, 24)[1]) == 1 and len(online_softmax_stats(row, 1)[1]) == 24


# -- tiled attention --------------------------------------------------------------------------


@claim(
    "The tile map of a causal mask with $T = S = 8$ blocks: 28 tiles are skipped, 8 straddle\n"
    "the diagonal and 28 are fully visible, so the work is $36/64$ of the unmasked case.",
)
def test_the_causal_tile_map():
    i, j = np.indices((8, 8))
    assert (j > i).sum() == 28 and (j == i).sum() == 8 and (j < i).sum() == 28
    assert (j <= i).sum() == 36


@claim(
    "The materialised curve climbs about four times per doubling of $T$ (slope 2)",
    "The tiled and\nPyTorch curves climb two times per doubling (slope 1), and they lie on top "
    "of each other\n(the tiled one is drawn dashed): the two peaks are equal to the byte at every "
    "length (the\nmeasuring cell prints them).\nEach is six $T \\times d$ tensors per head, the size of $q$, $k$, $v$ and their three\n"
    "gradients, plus 8 bytes",
    "Memory tells the story of this chapter: the materialised form grows like $T^2$, the other\n"
    "two like $T$.",
)
def test_the_memory_figure(peaks):
    mat, tiled, sdpa = (np.array(peaks[n], dtype=float) for n in FORMS)
    assert tiled.tolist() == sdpa.tolist()  # equal to the byte
    for T, p in zip(LENGTHS, tiled, strict=True):
        assert p == 6 * 4 * T * 32 * 4 + 8  # six (4, T, 32) float32 tensors, plus 8 bytes
    np.testing.assert_allclose(tiled[1:] / tiled[:-1], 2, rtol=1e-4)
    per_doubling = mat[1:] / mat[:-1]
    assert np.all((per_doubling > 3.4) & (per_doubling < 4.1))
    slope = np.polyfit(np.log(LENGTHS), np.log(mat), 1)[0]
    assert 1.8 < slope < 2.1


@claim(
    "PyTorch's CPU kernel is a FlashAttention kernel\n"
    "(`_scaled_dot_product_flash_attention_for_cpu`): the same tiling idea.",
)
def test_pytorch_runs_a_flash_kernel_on_the_cpu():
    q = torch.randn(1, 4, 128, 32, requires_grad=True)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        F.scaled_dot_product_attention(q, q, q, is_causal=True).sum().backward()
    names = {e.name for e in prof.events()}
    assert "aten::_scaled_dot_product_flash_attention_for_cpu" in names


@pytest.mark.slow
@claim(
    "The materialised form's time grows steeply with $T$: besides the arithmetic,\nit writes the "
    "$T \\times T$ matrices to memory and reads them back, several times over for\nthe backward "
    "pass.",
)
def test_the_materialised_time_grows_steeply():
    al.seed_everything(0, threads=1)
    short, long = (one_pass(FORMS["materialised"], T) for T in (128, 1024))
    ratio = median_seconds(long, repeats=3) / median_seconds(short, repeats=3)
    assert ratio > 8 * 2  # 8 times the length: far more than 8 times the time


# -- the KV cache -----------------------------------------------------------------------------


@claim(
    "Step $t$ reprocesses all $t$ tokens of the prefix\nthrough every layer, so generating $n$ "
    "tokens costs about $n^2/2$ token-passes (and the\nattention inside them about $n^3/6$ score "
    "computations).",
)
def test_the_cost_of_recomputing():
    n = 1000
    passes = sum(range(1, n + 1))
    scores = sum(t * t for t in range(1, n + 1)) / 2  # causal: about t^2 / 2 scores at step t
    assert abs(passes / (n**2 / 2) - 1) < 0.01
    assert abs(scores / (n**3 / 6) - 1) < 0.01


@claim(
    "The first two fixes, tiling and the cache, are exact: they change\nthe cost, not the result "
    "(up to floating-point rounding, since the sums are taken in\nanother order).",
)
def test_tiling_and_the_cache_differ_only_by_rounding():
    torch.manual_seed(0)
    for dtype, tol in ((torch.float32, 1e-5), (torch.float64, 1e-12)):
        q, k, v = (torch.randn(1, 2, 300, 16, dtype=dtype) for _ in range(3))
        mask = al.causal_mask(300, like=q)
        direct = al.scaled_dot_product_attention(q, k, v, mask)[0]
        tiled = al.tiled_attention(q, k, v, causal=True)
        torch.testing.assert_close(tiled, direct, rtol=0, atol=tol)
        if dtype == torch.float32:
            assert not torch.equal(tiled, direct)  # another order: other last bits
    lm, prompt = chapter_lm(), torch.tensor([[3, 1, 4, 1, 5, 9, 2, 6]])
    cache = KVCache(len(lm.decoder.layers))
    with torch.no_grad():
        full = lm(prompt)[0, -1]
        lm(prompt[:, :-1], cache=cache)
        cached = lm(prompt[:, -1:], cache=cache)[0, -1]
    torch.testing.assert_close(cached, full, rtol=0, atol=1e-5)


def chapter_lm():
    torch.manual_seed(0)
    config = al.TransformerConfig(d_model=64, n_heads=4, n_layers=2, d_ff=128, max_len=300)
    lm = al.DecoderOnlyLM(50, config)
    return lm.eval()


@claim(
    "The result must be *exactly*\nthe same tokens as recomputation:",
    "The prefill fills it with the 5 prompt tokens,\nand each step adds one:",
)
def test_the_cache_gives_the_same_tokens():
    lm, prompt = chapter_lm(), torch.tensor([[3, 1, 4, 1, 5]])
    slow = al.generate(lm, prompt, max_new_tokens=40)
    fast = al.generate(lm, prompt, max_new_tokens=40, use_cache=True)
    assert torch.equal(slow, fast)
    cache = KVCache(len(lm.decoder.layers))
    with torch.no_grad():
        lm(prompt, cache=cache)
        assert cache.length == 5 and tuple(cache[0].k.shape) == (1, 4, 5, 16)
        lm(torch.tensor([[9]]), cache=cache)
        assert cache.length == 6
    assert cache.nbytes() == 2 * 2 * 4 * 6 * 16 * 4 == 6144


@pytest.mark.slow
@claim(
    "With the cache every step feeds one token, so its time grows like\n$n$; recomputation's "
    "step $t$ feeds all $t$ tokens again, so its time grows faster,",
    "the\ncache's lead grows with $n$",
)
def test_the_generation_timings():
    lm, prompt = chapter_lm(), torch.tensor([[3, 1, 4, 1, 5]])
    al.seed_everything(0, threads=1)
    # three measurements, each the median of three runs: one busy moment moves nothing
    runs = [al.generation_seconds(lm, prompt, [16, 256], repeats=3) for _ in range(3)]
    cache = np.median([[r["cache_s"] for r in run] for run in runs], axis=0)
    recompute = np.median([[r["recompute_s"] for r in run] for run in runs], axis=0)
    assert 6 < cache[1] / cache[0] < 40  # 16 times the tokens: about 16 times the time
    assert recompute[1] / recompute[0] > 1.5 * cache[1] / cache[0]  # grows faster
    assert recompute[1] / cache[1] > recompute[0] / cache[0]  # the lead grows


# -- fewer key-value heads --------------------------------------------------------------------


def llama2_7b_parameters():
    vocab, D, d_ff, L = 32_000, 4096, 11_008, 32
    block = 4 * D * D + 3 * D * d_ff + 2 * D  # attention, SwiGLU FFN, two RMSNorm gains
    return 2 * vocab * D + L * block + D  # embedding, output layer, the final norm


@claim(
    "The cache holds $2 \\cdot L \\cdot B \\cdot G \\cdot S \\cdot d \\cdot b$ bytes: keys and "
    "values, for\n$L$ layers, $B$ sequences, $G$ key-value heads, $S$ cached tokens,",
)
def test_the_cache_formula_counts_the_cached_tokens():
    lm = chapter_lm()  # L = 2 layers, G = 4 heads of d = 16, float32
    cache = KVCache(len(lm.decoder.layers))
    with torch.no_grad():
        lm(torch.tensor([[3, 1, 4, 1, 5]] * 3), cache=cache)  # B = 3 prompts of 5 tokens
        lm(torch.tensor([[9]] * 3), cache=cache)  # T = 1 query against S = 6 cached tokens
    assert cache.length == 6
    expected = al.kv_cache_bytes(
        n_layers=2, n_kv_heads=4, d_head=16, seq_len=6, batch=3, bytes_per_value=4
    )
    assert cache.nbytes() == expected == 2 * 2 * 3 * 4 * 6 * 16 * 4


@claim(
    "With one key-value head per query head ($G = 32$) a batch of 16 sequences needs 32 GiB\n"
    "of cache, more than twice the 12.55 GiB of the model's own weights.",
    "lets all query heads share\na single key-value head ($G = 1$): 32 times less cache.",
)
def test_the_cache_of_a_7b_model():
    assert llama2_7b_parameters() == 6_738_415_616
    weights = llama2_7b_parameters() * 2 / GiB
    assert f"{weights:.2f}" == "12.55"
    batch = al.kv_cache_bytes(n_kv_heads=32, batch=16, **LLAMA2_7B) / GiB
    assert batch == 32 and batch > 2 * weights
    one, mqa = (al.kv_cache_bytes(n_kv_heads=g, **LLAMA2_7B) for g in (32, 1))
    assert one == 32 * mqa


@claim(
    "Top: the 32 query heads, coloured by the\nkey-value head they read, with a black line "
    "between groups.",
    "At $G = 8$ four query heads share each key-value head and the cache is a quarter of\n"
    "multi-head attention's (0.5 GiB instead of 2 GiB). Halving $G$ always halves the cache",
)
def test_the_group_slider():
    for G in (1, 2, 4, 8, 16, 32):
        group = np.arange(32) // (32 // G)  # the figure's colours: one per key-value head
        colours = plt.get_cmap("viridis", G)(np.arange(G))
        assert len({tuple(c) for c in colours}) == G  # no two groups share a colour
        assert np.bincount(group).tolist() == [32 // G] * G
    size = {g: al.kv_cache_bytes(n_kv_heads=g, **LLAMA2_7B) / GiB for g in (1, 2, 4, 8, 16, 32)}
    assert size[8] == 0.5 and size[32] == 2
    for g in (2, 4, 8, 16, 32):
        assert size[g // 2] == size[g] / 2


@claim(
    "Per token: $2 \\times 40 \\times 8 \\times 128 \\times 2 = 163{,}840$ bytes (160 KiB).\n"
    "For $8 \\times 8192$ tokens: $163{,}840 \\times 65{,}536$ bytes $= 10$ GiB. With 40\n"
    "key-value heads it would be 50 GiB.",
)
def test_answer_4():
    size = dict(n_layers=40, d_head=128, bytes_per_value=2)
    assert al.kv_cache_bytes(n_kv_heads=8, seq_len=1, **size) == 163_840 == 160 * 1024
    assert al.kv_cache_bytes(n_kv_heads=8, seq_len=8192, batch=8, **size) == 10 * GiB
    assert al.kv_cache_bytes(n_kv_heads=40, seq_len=8192, batch=8, **size) == 50 * GiB


test_every_quoted_claim_is_in_the_chapter = quotes_are_in(CHAPTER, globals())
