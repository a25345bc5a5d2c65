"""Attention at scale on this CPU: tiled vs materialised vs PyTorch, the KV cache, GQA memory.

1. Time and peak memory of one causal forward + backward pass against the length T, for
   three forms of the same attention: attnlab's materialised
   ``scaled_dot_product_attention`` (it builds the (B, H, T, T) weights), attnlab's
   ``tiled_attention`` (tiles of 128 x 128, backward by recomputation) and PyTorch's
   ``F.scaled_dot_product_attention``. Peak memory is measured with ``torch.profiler``
   (every allocation and free of the CPU allocator). Target: tiled / PyTorch peak memory
   <= 1.5 at T = 4096.
2. Greedy generation of 512 tokens by a small decoder-only model, with and without the
   KV cache (``generate(..., use_cache=True)``); the same tokens either way (checked).
   Target: the cache at least 5x faster, on 2 CPU threads.
3. The memory of a KV cache for 4 layers of ``GroupedQueryAttention`` (8 query heads)
   with 8, 4, 2 and 1 key-value heads after a 1024-token prompt: measured bytes against
   the formula ``2 · layers · B · G · T · d · bytes``.

Run: ``python bench/bench_scale.py`` (or ``make bench``). Options shorten the run.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F
from _table import print_table

from attnlab.attention import scaled_dot_product_attention
from attnlab.masking import causal_mask
from attnlab.scale import GroupedQueryAttention, KVCache, kv_cache_bytes, peak_memory
from attnlab.scale import tiled_attention as tiled
from attnlab.seed import seed_everything

MB = 2**20


def _materialised(q, k, v):
    return scaled_dot_product_attention(q, k, v, causal_mask(q.shape[-2], like=q))[0]


FORMS: dict[str, Callable] = {
    "materialised (attnlab)": _materialised,
    "tiled (attnlab)": lambda q, k, v: tiled(q, k, v, causal=True, block_q=128, block_k=128),
    "F.scaled_dot_product_attention": lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, is_causal=True
    ),
}


def _pass(form: Callable, qkv: tuple[torch.Tensor, ...]) -> Callable[[], None]:
    def run() -> None:
        q, k, v = (x.detach().requires_grad_() for x in qkv)
        out = form(q, k, v)  # (B, H, T, d)
        out.backward(torch.ones_like(out))

    return run


def _seconds(run: Callable[[], None], repeats: int) -> float:
    run()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def attention_table(lengths: list[int], heads: int, d: int, max_materialised: int) -> float:
    """Print time and peak memory per form and length; return tiled/PyTorch at the last T."""
    rows, ratio = [], float("nan")
    for T in lengths:
        torch.manual_seed(0)
        qkv = tuple(torch.randn(1, heads, T, d) for _ in range(3))  # (B, H, T, d)
        peaks = {}
        for name, form in FORMS.items():
            if name.startswith("materialised") and T > max_materialised:
                rows.append([T, name, "-", "-"])
                continue
            run = _pass(form, qkv)
            peaks[name] = peak_memory(run)
            seconds = _seconds(run, repeats=1 if T >= 2048 else 3)
            rows.append([T, name, f"{1e3 * seconds:.0f}", f"{peaks[name] / MB:.1f}"])
        ratio = peaks["tiled (attnlab)"] / peaks["F.scaled_dot_product_attention"]
        rows.append([T, "tiled / PyTorch peak memory", "", f"{ratio:.2f}"])
    weights_mb = heads * lengths[-1] ** 2 * 4 / MB
    print_table(
        f"causal attention, forward + backward, B=1, H={heads}, d={d}, "
        f"{torch.get_num_threads()} threads (one (T, T) weight matrix at T={lengths[-1]}: "
        f"{weights_mb:.0f} MB; target tiled / PyTorch peak <= 1.5 at T={lengths[-1]})",
        ["T", "form", "ms", "peak MB"],
        rows,
    )
    return ratio


def cache_table(new_tokens: int, repeats: int) -> float:
    """Print generation time with and without the cache; return the speedup."""
    from attnlab.transformer import DecoderOnlyLM, generate

    seed_everything(0)
    model = DecoderOnlyLM(
        vocab=64, d_model=128, n_heads=4, n_layers=4, d_ff=512, max_len=new_tokens + 1
    ).eval()
    prompt = torch.tensor([[1]])
    outs, seconds = {}, {}
    for use_cache in (False, True):
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            outs[use_cache] = generate(
                model, prompt, max_new_tokens=new_tokens, use_cache=use_cache
            )
            times.append(time.perf_counter() - start)
        seconds[use_cache] = min(times)
    same = bool(torch.equal(outs[False], outs[True]))
    speedup = seconds[False] / seconds[True]
    print_table(
        f"greedy generation of {new_tokens} tokens, DecoderOnlyLM d_model=128, 4 heads, "
        f"4 layers, {torch.get_num_threads()} threads (best of {repeats}; target >= 5x)",
        ["generation", "s", "ms / token", "same tokens"],
        [
            ["recompute the prefix", f"{seconds[False]:.2f}",
             f"{1e3 * seconds[False] / new_tokens:.2f}", ""],
            ["KV cache", f"{seconds[True]:.2f}", f"{1e3 * seconds[True] / new_tokens:.2f}",
             str(same)],
            ["speedup", f"{speedup:.1f}x", "", ""],
        ],
    )  # fmt: skip
    return speedup


def gqa_cache_table(T: int, n_layers: int = 4, d_model: int = 256, n_heads: int = 8) -> None:
    """Print the KV-cache memory of a GQA stack for 8, 4, 2, 1 key-value heads."""
    torch.manual_seed(0)
    x = torch.randn(1, T, d_model)  # (B, T, D)
    mask = causal_mask(T, like=x)
    rows = []
    for G in (8, 4, 2, 1):
        layers = [GroupedQueryAttention(d_model, n_heads, G) for _ in range(n_layers)]
        cache = KVCache(n_layers)
        with torch.no_grad():
            h = x
            for i, layer in enumerate(layers):
                h = h + layer(h, mask, cache=cache[i])[0]
        formula = kv_cache_bytes(
            n_layers=n_layers, n_kv_heads=G, d_head=d_model // n_heads, seq_len=T,
            bytes_per_value=4,
        )  # fmt: skip
        kind = {n_heads: "multi-head", 1: "multi-query"}.get(G, "grouped-query")
        rows.append([G, kind, f"{cache.nbytes() / MB:.2f}", f"{formula / MB:.2f}"])
    print_table(
        f"KV cache after a {T}-token prompt: {n_layers} layers, {n_heads} query heads of "
        f"{d_model // n_heads}, float32",
        ["kv heads G", "attention", "measured MB", "formula MB"],
        rows,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[256, 512, 1024, 2048, 4096])
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--max-materialised", type=int, default=2048)
    parser.add_argument("--new-tokens", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(2)
    attention_table(args.lengths, args.heads, 64, args.max_materialised)
    cache_table(args.new_tokens, args.repeats)
    gqa_cache_table(1024)


if __name__ == "__main__":
    main()
