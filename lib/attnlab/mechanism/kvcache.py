"""The KV cache: the keys and values of past positions, kept for the next generation step.

When a decoder generates token ``t + 1``, the keys and values of tokens ``0..t`` are the
ones it computed at the steps before: every layer's attention can keep them instead of
recomputing them, and each step becomes a pass over one new token instead of the whole
prefix. :class:`LayerKV` holds one layer's, :class:`KVCache` a stack's;
:func:`kv_cache_bytes` says what a full cache weighs.

Taught in: chapters/08_scale.ipynb
"""

from __future__ import annotations

import math

import torch

from .._validate import positive_int, same_device

__all__ = ["KVCache", "LayerKV", "kv_cache_bytes"]


class LayerKV:
    """The cached keys and values of one attention layer, ``(B, heads, t, d)`` each.

    Two ways to store them, with the same results:

    - growing (the default): each :meth:`update` concatenates the new keys to the old,
      ``torch.cat``, which copies all ``t`` cached positions at every step;
    - preallocated (``capacity`` given): the first :meth:`update` allocates buffers of
      ``capacity`` positions and every update writes the new positions into them in
      place; ``k`` and ``v`` are views of the first ``t`` positions. Nothing is copied
      but the new keys, at the price of reserving the memory of a full cache up front.

    Args:
        capacity: optional, the most positions the buffers will hold (e.g. the model's
            ``max_len``).

    Attributes:
        k: ``(B, heads, t, d)`` the cached keys (``None`` before the first update).
        v: ``(B, heads, t, d_v)`` the cached values (``None`` before the first update).

    Raises:
        ValueError: a ``capacity`` that is not a positive integer.

    Taught in: chapters/08_scale.ipynb
    """

    def __init__(self, capacity: int | None = None) -> None:
        self.capacity = None if capacity is None else positive_int(capacity, "capacity")
        self._k: torch.Tensor | None = None  # (B, heads, capacity or t, d)
        self._v: torch.Tensor | None = None  # (B, heads, capacity or t, d_v)
        self._length = 0

    @property
    def k(self) -> torch.Tensor | None:
        return None if self._k is None else self._k[..., : self._length, :]

    @property
    def v(self) -> torch.Tensor | None:
        return None if self._v is None else self._v[..., : self._length, :]

    @property
    def length(self) -> int:
        """Number of cached positions ``t``."""
        return self._length

    def update(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Append the keys and values of new positions; return all of them.

        Args:
            k: ``(B, heads, T_new, d)`` new keys. v: ``(B, heads, T_new, d_v)`` new values.

        Returns:
            ``(k_all, v_all)``: ``(B, heads, t + T_new, d)`` and ``(..., d_v)``.

        Raises:
            ValueError: new keys whose batch, heads or width differ from the cached ones,
                keys and values on different devices (or on another device than the
                cached ones), or (preallocated) more positions than ``capacity``.
        """
        same_device(k=k, v=v)
        if self._k is not None and k.device != self._k.device:
            raise ValueError(
                f"the cache holds keys on {self._k.device} but the new k and v are on "
                f"{k.device}: move them, e.g. k.to('{self._k.device}')"
            )
        t, n = self._length, k.shape[-2]
        if self._k is None:
            if self.capacity is None:
                self._k, self._v = k, v
            else:  # reserve the whole cache once: (B, heads, capacity, d)
                self._k = k.new_empty((*k.shape[:-2], self.capacity, k.shape[-1]))
                self._v = v.new_empty((*v.shape[:-2], self.capacity, v.shape[-1]))
                self._write(k, v, 0)
            self._length = n
            return self.k, self.v
        if k.shape[:2] != self._k.shape[:2] or k.shape[-1] != self._k.shape[-1]:
            raise ValueError(
                f"new keys of shape {tuple(k.shape)} do not fit the cached keys of "
                f"shape {tuple(self.k.shape)} (same batch, heads and width needed)"
            )
        if self.capacity is None:
            self._k = torch.cat([self._k, k], dim=-2)  # (B, G, t, d) -> (B, G, t + n, d)
            self._v = torch.cat([self._v, v], dim=-2)  # (B, G, t, d_v) -> (B, G, t + n, d_v)
        else:
            self._write(k, v, t)
        self._length = t + n
        return self.k, self.v

    def _write(self, k: torch.Tensor, v: torch.Tensor, t: int) -> None:
        """Copy ``n`` new positions into the preallocated buffers at ``t .. t + n - 1``."""
        n = k.shape[-2]
        if t + n > self._k.shape[-2]:
            raise ValueError(
                f"the cache holds at most capacity={self.capacity} positions: "
                f"{t} cached + {n} new do not fit"
            )
        self._k[..., t : t + n, :] = k  # in place: no copy of the t cached positions
        self._v[..., t : t + n, :] = v

    def nbytes(self) -> int:
        """Bytes of the ``t`` cached keys and values (a preallocated buffer reserves
        ``capacity`` positions: :meth:`reserved_bytes`)."""
        if self._k is None:
            return 0
        per_position = self._k.shape[-1] * self._k.element_size()
        per_position += self._v.shape[-1] * self._v.element_size()
        return math.prod(self._k.shape[:-2]) * self._length * per_position

    def reserved_bytes(self) -> int:
        """Bytes the buffers occupy: ``capacity`` positions when preallocated, else ``t``."""
        if self._k is None:
            return 0
        return sum(x.numel() * x.element_size() for x in (self._k, self._v))


class KVCache:
    """A key-value cache for a stack of attention layers: one :class:`LayerKV` per layer.

    Each layer appends the keys and values of the positions it processes, so a decoder
    that generates one token per step computes one new key and value per layer, and its
    queries attend to everything cached. Memory: ``2 · layers · B · heads · t · d``
    numbers (:func:`kv_cache_bytes`); inference only (no gradients flow through it).

    Args:
        n_layers: number of attention layers that will use the cache.
        capacity: optional, preallocate every layer's buffers for this many positions
            (see :class:`LayerKV`); :func:`~attnlab.mechanism.decoding.generate` passes the
            model's ``max_len``.

    Attributes:
        layers: the per-layer caches, ``layers[i]`` for layer ``i``.
        key_visible: optional ``(B, 1, 1, t)`` boolean, ``False`` for cached padding keys
            (kept by models that mask padding).

    Raises:
        ValueError: ``n_layers`` or ``capacity`` not a positive integer.

    Taught in: chapters/08_scale.ipynb
    """

    def __init__(self, n_layers: int, capacity: int | None = None) -> None:
        positive_int(n_layers, "n_layers")
        self.layers = [LayerKV(capacity) for _ in range(n_layers)]
        self.key_visible: torch.Tensor | None = None

    def __len__(self) -> int:
        return len(self.layers)

    def __getitem__(self, layer: int) -> LayerKV:
        return self.layers[layer]

    @property
    def length(self) -> int:
        """Number of cached positions (those of the first layer)."""
        return self.layers[0].length

    def nbytes(self) -> int:
        """Bytes of all the cached keys and values (``t`` positions per layer)."""
        return sum(layer.nbytes() for layer in self.layers)

    def reserved_bytes(self) -> int:
        """Bytes the layers' buffers occupy (``capacity`` positions when preallocated)."""
        return sum(layer.reserved_bytes() for layer in self.layers)

    def __repr__(self) -> str:
        return f"KVCache(layers={len(self)}, length={self.length}, nbytes={self.nbytes()})"


def kv_cache_bytes(
    *,
    n_layers: int,
    n_kv_heads: int,
    d_head: int,
    seq_len: int,
    batch: int = 1,
    bytes_per_value: int = 2,
) -> int:
    r"""Memory of a full KV cache: ``2 · layers · batch · kv_heads · seq_len · d_head · bytes``.

    .. math:: M = 2 \cdot L \cdot B \cdot G \cdot S \cdot d \cdot b

    The 2 is one key and one value per position. Example: 32 layers, 32 heads of 128,
    4096 positions in 16-bit floats: 2 GiB per sequence; with 8 key-value heads, 512 MiB.

    Args:
        n_layers, n_kv_heads, d_head, seq_len, batch: the sizes above (keywords).
        bytes_per_value: 2 for float16/bfloat16, 4 for float32.

    Returns:
        The number of bytes (an ``int``).

    Raises:
        ValueError: a size that is not a positive integer.

    Taught in: chapters/08_scale.ipynb
    """
    sizes = {
        "n_layers": n_layers,
        "n_kv_heads": n_kv_heads,
        "d_head": d_head,
        "seq_len": seq_len,
        "batch": batch,
        "bytes_per_value": bytes_per_value,
    }
    for name, n in sizes.items():
        positive_int(n, name)
    return 2 * n_layers * batch * n_kv_heads * seq_len * d_head * bytes_per_value
