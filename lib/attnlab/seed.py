"""One helper that makes a notebook or a test repeatable.

Taught in: every chapter's first code cell.
"""

from __future__ import annotations

import os
import random

import numpy as np
import torch

from ._validate import check_int

__all__ = ["seed_everything"]


def seed_everything(seed: int = 0, *, threads: int | None = None) -> np.random.Generator:
    """Seed Python's, NumPy's and torch's generators and return a fresh NumPy ``Generator``.

    Also asks torch for deterministic kernels where it has them (``warn_only``, so an op
    without one still runs). ``threads`` optionally fixes torch's intra-op thread count,
    which also fixes the order of floating-point sums on the CPU.

    Returns:
        ``np.random.default_rng(seed)``, to pass around explicitly instead of global state.
    """
    seed = check_int(seed, "seed", low=0)
    os.environ["PYTHONHASHSEED"] = str(seed)
    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 - legacy global state, seeded for third-party code
    torch.manual_seed(seed)  # also seeds every CUDA device
    torch.use_deterministic_algorithms(True, warn_only=True)
    if threads is not None:
        torch.set_num_threads(threads)
    return np.random.default_rng(seed)
