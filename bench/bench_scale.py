"""Attention at scale on this CPU: tiled vs materialised vs PyTorch, the KV cache, GQA memory.

1. Time and peak memory of one causal forward + backward pass against the length T, for
   three forms of the same attention: attnlab's materialised
   ``scaled_dot_product_attention`` (it builds the (B, H, T, T) weights), attnlab's
   ``tiled_attention`` (tiles of 128 x 128, backward by recomputation) and PyTorch's
   ``F.scaled_dot_product_attention``. Peak memory is measured with ``torch.profiler``
   (every allocation and free of the CPU allocator). Target: tiled / PyTorch peak memory
   <= 1.5 at T = 4096.
2. Greedy generation of 64 to 512 tokens by a small decoder-only model, with and without
   the KV cache (``generate(..., use_cache=True)``); the same tokens either way (checked).
   The speedup grows with the length. Target: the cache at least 5x faster for 512
   tokens, on 2 CPU threads. The table prints the load average: other processes on the
   machine slow the many small operations of cached decoding most.
3. The memory of a KV cache for 4 layers of ``GroupedQueryAttention`` (8 query heads)
   with 8, 4, 2 and 1 key-value heads after a 1024-token prompt: measured bytes against
   the formula ``2 · layers · B · G · T · d · bytes``.

Run: ``python bench/bench_scale.py`` (or ``make bench``). Options shorten the run
(``--only cache`` runs the generation table alone).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable

import torch
import torch.nn.functional as F
from _table import print_table

from attnlab.measure import median_seconds, median_seconds_each, peak_memory
from attnlab.mechanism.attention import scaled_dot_product_attention
from attnlab.mechanism.kvcache import KVCache, kv_cache_bytes
from attnlab.mechanism.masking import causal_mask
from attnlab.mechanism.scale import GroupedQueryAttention
from attnlab.mechanism.scale import tiled_attention as tiled
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
            seconds = median_seconds(run, 1 if T >= 2048 else 3, clock="wall")
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


def cache_table(lengths: list[int], repeats: int) -> float:
    """Print generation time with and without the cache per length; return the last speedup."""
    from attnlab.mechanism.config import TransformerConfig
    from attnlab.mechanism.decoding import generate
    from attnlab.mechanism.transformer import DecoderOnlyLM

    seed_everything(0)
    config = TransformerConfig(
        d_model=128, n_heads=4, n_layers=4, d_ff=512, max_len=max(lengths) + 1
    )
    model = DecoderOnlyLM(64, config).eval()
    prompt = torch.tensor([[1]])
    rows, speedup = [], float("nan")
    generate(model, prompt, max_new_tokens=8, use_cache=True)  # warm-up
    for n in lengths:
        outs = {c: generate(model, prompt, max_new_tokens=n, use_cache=c) for c in (False, True)}
        runs = {
            c: lambda c=c, n=n: generate(model, prompt, max_new_tokens=n, use_cache=c)
            for c in (False, True)
        }
        seconds = median_seconds_each(runs, repeats, clock="wall", warm_up=False)
        speedup = seconds[False] / seconds[True]
        rows.append([
            n, f"{seconds[False]:.2f}", f"{seconds[True]:.2f}",
            f"{1e3 * seconds[False] / n:.2f}", f"{1e3 * seconds[True] / n:.2f}",
            f"{speedup:.1f}x", str(bool(torch.equal(outs[False], outs[True]))),
        ])  # fmt: skip
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print_table(
        f"greedy generation, DecoderOnlyLM d_model=128, 4 heads, 4 layers, "
        f"{torch.get_num_threads()} threads (median of {repeats}; load average {load}; "
        f"target >= 5x at {lengths[-1]} tokens)",
        ["tokens", "recompute s", "cache s", "recompute ms/token", "cache ms/token",
         "speedup", "same tokens"],
        rows,
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
    parser.add_argument("--new-tokens", type=int, nargs="+", default=[64, 128, 256, 512])
    parser.add_argument("--repeats", type=int, default=2)
    parts = ("attention", "cache", "gqa")
    parser.add_argument("--only", choices=parts, nargs="+", default=list(parts))
    args = parser.parse_args()
    torch.set_num_threads(2)
    if "attention" in args.only:
        attention_table(args.lengths, args.heads, 64, args.max_materialised)
    if "cache" in args.only:
        cache_table(args.new_tokens, args.repeats)
    if "gqa" in args.only:
        gqa_cache_table(1024)


if __name__ == "__main__":
    main()
