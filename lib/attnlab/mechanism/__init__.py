"""The mechanism: attention and the transformer, written as the equations.

Each module is a set of unchecked kernels that read like the math, wrapped by thin public
functions and layers that check their input first (``attnlab._validate``). Imports run only
downward: ``similarity`` <- ``attention`` <- ``multihead`` <- ``transformer`` <- ``decoding``;
``masking``, ``positional``, ``config`` and ``kvcache`` are leaves that ``transformer``
assembles; ``scale`` (tiled and grouped-query attention) and ``interop`` sit beside it.
"""
