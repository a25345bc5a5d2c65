"""Chapter 8's wrong answers written by an independent learner in a real kernel.

Each entry: the attempt's name, the exercise, its code as the learner wrote it in the
notebook, and words its diagnosis must contain (``corpus.py``); ``None`` marks an attempt
that still gets the exercise's generic hint (what is left, counted in the tests).
"""

LEARNER = [
    (
        "8.1_w01_npmax",
        "online_update",
        """\
def online_update(m: np.ndarray, total: np.ndarray, block: np.ndarray):
    m_new = np.max(m, block.max(axis=-1))
    total_new = total * np.exp(m - m_new) + np.exp(block - m_new[..., None]).sum(axis=-1)
    return m_new, total_new
""",
        "np.max(a, b) reads its second argument a",  # learner: S
    ),
    (
        "8.1_w02_norescale",
        "online_update",
        """\
def online_update(m: np.ndarray, total: np.ndarray, block: np.ndarray):
    m_new = np.maximum(m, block.max(axis=-1))
    total_new = total + np.exp(block - m_new[..., None]).sum(axis=-1)
    return m_new, total_new
""",
        "you did not rescale the old sum: when th",  # learner: S
    ),
    (
        "8.1_w03_rescale_inverted",
        "online_update",
        """\
def online_update(m: np.ndarray, total: np.ndarray, block: np.ndarray):
    m_new = np.maximum(m, block.max(axis=-1))
    total_new = total * np.exp(m_new - m) + np.exp(block - m_new[..., None]).sum(axis=-1)
    return m_new, total_new
""",
        "you rescaled the old sum by exp(m' - m),",  # learner: S
    ),
    (
        "8.1_w04_global_max",
        "online_update",
        """\
def online_update(m: np.ndarray, total: np.ndarray, block: np.ndarray):
    m_new = np.maximum(m, block.max())
    total_new = total * np.exp(m - m_new) + np.exp(block - m_new[..., None]).sum(axis=-1)
    return m_new, total_new
""",
        "`max` without an axis reduces the whole ",  # learner: S
    ),
    (
        "8.1_w05_axis0",
        "online_update",
        """\
def online_update(m: np.ndarray, total: np.ndarray, block: np.ndarray):
    m_new = np.maximum(m, block.max(axis=0))
    total_new = total * np.exp(m - m_new) + np.exp(block - m_new).sum(axis=0)
    return m_new, total_new
""",
        "a reduction runs along axis 0",  # learner: S
    ),
    (
        "8.1_w06_swapped_return",
        "online_update",
        """\
def online_update(m: np.ndarray, total: np.ndarray, block: np.ndarray):
    m_new = np.maximum(m, block.max(axis=-1))
    total_new = total * np.exp(m - m_new) + np.exp(block - m_new[..., None]).sum(axis=-1)
    return total_new, m_new
""",
        "the outputs are returned in the wrong or",  # learner: S
    ),
    (
        "8.1_w07_block_old_max",
        "online_update",
        """\
def online_update(m: np.ndarray, total: np.ndarray, block: np.ndarray):
    m_new = np.maximum(m, block.max(axis=-1))
    total_new = total * np.exp(m - m_new) + np.exp(block - m[..., None]).sum(axis=-1)
    return m_new, total_new
""",
        "you exponentiated the new block against ",  # learner: S
    ),
    (
        "8.1_w08_torch",
        "online_update",
        """\
def online_update(m: np.ndarray, total: np.ndarray, block: np.ndarray):
    m_new = torch.maximum(m, block.amax(-1))
    total_new = total * torch.exp(m - m_new) + torch.exp(block - m_new[..., None]).sum(-1)
    return m_new, total_new
""",
        "this exercise is in NumPy: its inputs ar",  # learner: S
    ),
    (
        "8.1_w09_no_keepdims",
        "online_update",
        """\
def online_update(m: np.ndarray, total: np.ndarray, block: np.ndarray):
    m_new = np.maximum(m, block.max(axis=-1))
    total_new = total * np.exp(m - m_new) + np.exp(block - m_new).sum(axis=-1)
    return m_new, total_new
""",
        "a last axis of size 1",  # learner: S
    ),
    (
        "8.1_w10_only_block_max",
        "online_update",
        """\
def online_update(m: np.ndarray, total: np.ndarray, block: np.ndarray):
    m_new = block.max(axis=-1)
    total_new = total * np.exp(m - m_new) + np.exp(block - m_new[..., None]).sum(axis=-1)
    return m_new, total_new
""",
        "your m is the block's max alone; the run",  # learner: S
    ),
    (
        "8.1_w11_max_of_block_sum",
        "online_update",
        """\
def online_update(m: np.ndarray, total: np.ndarray, block: np.ndarray):
    m_new = np.maximum(m, block.max(axis=-1))
    total_new = total * np.exp(m - m_new) + np.exp(block.sum(axis=-1) - m_new)
    return m_new, total_new
""",
        "sum of the exponentials",  # learner: G
    ),
    (
        "8.1_w12_float32",
        "online_update",
        """\
def online_update(m: np.ndarray, total: np.ndarray, block: np.ndarray):
    block = block.astype(np.float32)
    m_new = np.maximum(m, block.max(axis=-1)).astype(np.float32)
    total_new = total * np.exp(m - m_new) + np.exp(block - m_new[..., None]).sum(axis=-1)
    return m_new, total_new.astype(np.float32)
""",
        "your result is float32, a lower precisio",  # learner: S
    ),
    (
        "8.1_w13_sum_all_rows",
        "online_update",
        """\
def online_update(m: np.ndarray, total: np.ndarray, block: np.ndarray):
    m_new = np.maximum(m, block.max(axis=-1))
    total_new = total * np.exp(m - m_new) + np.exp(block - m_new[..., None]).sum()
    return m_new, total_new
""",
        "`sum` without an axis reduces the whole ",  # learner: S
    ),
    (
        "8.2_w01_no_inf_guard",
        "online_softmax",
        """\
def online_softmax(x: np.ndarray, block_size: int) -> np.ndarray:
    n = x.shape[-1]
    m = np.full(x.shape[:-1], -np.inf)
    total = np.zeros(x.shape[:-1])
    for s in range(0, n, block_size):
        blk = x[..., s:s + block_size]
        m_new = np.maximum(m, blk.max(axis=-1))
        safe = m_new
        total = total * np.exp(m - safe) + np.exp(blk - safe[..., None]).sum(axis=-1)
        m = m_new
    return np.exp(x - m[..., None]) / total[..., None]
""",
        "NaN in a row that starts with masked blo",  # learner: S
    ),
    (
        "8.2_w02_drop_last_block",
        "online_softmax",
        """\
def online_softmax(x: np.ndarray, block_size: int) -> np.ndarray:
    n = x.shape[-1]
    m = np.full(x.shape[:-1], -np.inf)
    total = np.zeros(x.shape[:-1])
    for s in range(0, n - block_size + 1, block_size):
        blk = x[..., s:s + block_size]
        m_new = np.maximum(m, blk.max(axis=-1))
        safe = np.where(np.isneginf(m_new), 0.0, m_new)
        total = total * np.exp(m - safe) + np.exp(blk - safe[..., None]).sum(axis=-1)
        m = m_new
    safe = np.where(np.isneginf(m), 0.0, m)
    num = np.exp(x - safe[..., None])
    den = np.where(total == 0, 1.0, total)
    return np.where(total[..., None] == 0, 0.0, num / den[..., None])
""",
        "your loop leaves out the last, shorter b",  # learner: S
    ),
    (
        "8.2_w03_nblocks_floor",
        "online_softmax",
        """\
def online_softmax(x: np.ndarray, block_size: int) -> np.ndarray:
    n = x.shape[-1]
    m = np.full(x.shape[:-1], -np.inf)
    total = np.zeros(x.shape[:-1])
    for s in (i * block_size for i in range(n // block_size)):
        blk = x[..., s:s + block_size]
        m_new = np.maximum(m, blk.max(axis=-1))
        safe = np.where(np.isneginf(m_new), 0.0, m_new)
        total = total * np.exp(m - safe) + np.exp(blk - safe[..., None]).sum(axis=-1)
        m = m_new
    safe = np.where(np.isneginf(m), 0.0, m)
    num = np.exp(x - safe[..., None])
    den = np.where(total == 0, 1.0, total)
    return np.where(total[..., None] == 0, 0.0, num / den[..., None])
""",
        "your loop leaves out the last, shorter b",  # learner: S
    ),
    (
        "8.2_w04_end_0div0",
        "online_softmax",
        """\
def online_softmax(x: np.ndarray, block_size: int) -> np.ndarray:
    n = x.shape[-1]
    m = np.full(x.shape[:-1], -np.inf)
    total = np.zeros(x.shape[:-1])
    for s in range(0, n, block_size):
        blk = x[..., s:s + block_size]
        m_new = np.maximum(m, blk.max(axis=-1))
        safe = np.where(np.isneginf(m_new), 0.0, m_new)
        total = total * np.exp(m - safe) + np.exp(blk - safe[..., None]).sum(axis=-1)
        m = m_new
    safe = np.where(np.isneginf(m), 0.0, m)
    return np.exp(x - safe[..., None]) / total[..., None]
""",
        "a row with no visible score gives 0/0 = ",  # learner: S
    ),
    (
        "8.2_w05_stale_numerators",
        "online_softmax",
        """\
def online_softmax(x: np.ndarray, block_size: int) -> np.ndarray:
    n = x.shape[-1]
    m = np.full(x.shape[:-1], -np.inf)
    total = np.zeros(x.shape[:-1])
    parts = []
    for s in range(0, n, block_size):
        blk = x[..., s:s + block_size]
        m_new = np.maximum(m, blk.max(axis=-1))
        safe = np.where(np.isneginf(m_new), 0.0, m_new)
        total = total * np.exp(m - safe) + np.exp(blk - safe[..., None]).sum(axis=-1)
        parts.append(np.exp(blk - safe[..., None]))
        m = m_new
    den = np.where(total == 0, 1.0, total)
    return np.concatenate(parts, axis=-1) / den[..., None]
""",
        "stale",  # learner: G
    ),
    (
        "8.2_w06_neg_big_fill",
        "online_softmax",
        """\
def online_softmax(x: np.ndarray, block_size: int) -> np.ndarray:
    x = np.where(np.isneginf(x), -1e9, x)
    n = x.shape[-1]
    m = np.full(x.shape[:-1], -np.inf)
    total = np.zeros(x.shape[:-1])
    for s in range(0, n, block_size):
        blk = x[..., s:s + block_size]
        m_new = np.maximum(m, blk.max(axis=-1))
        total = total * np.exp(m - m_new) + np.exp(blk - m_new[..., None]).sum(axis=-1)
        m = m_new
    return np.exp(x - m[..., None]) / total[..., None]
""",
        "a row with no visible score (all -inf) m",  # learner: S
    ),
    (
        "8.2_w07_global_max",
        "online_softmax",
        """\
def online_softmax(x: np.ndarray, block_size: int) -> np.ndarray:
    n = x.shape[-1]
    m = np.full(x.shape[:-1], -np.inf)
    total = np.zeros(x.shape[:-1])
    for s in range(0, n, block_size):
        blk = x[..., s:s + block_size]
        m_new = np.maximum(m, blk.max())
        safe = np.where(np.isneginf(m_new), 0.0, m_new)
        total = total * np.exp(m - safe) + np.exp(blk - safe[..., None]).sum(axis=-1)
        m = m_new
    safe = np.where(np.isneginf(m), 0.0, m)
    num = np.exp(x - safe[..., None])
    den = np.where(total == 0, 1.0, total)
    return np.where(total[..., None] == 0, 0.0, num / den[..., None])
""",
        "your running max is one number for the w",  # learner: S
    ),
    (
        "8.2_w08_blocks_on_axis0",
        "online_softmax",
        """\
def online_softmax(x: np.ndarray, block_size: int) -> np.ndarray:
    m = np.full(x.shape[:-1], -np.inf)
    total = np.zeros(x.shape[:-1])
    for s in range(0, len(x), block_size):
        blk = x[s:s + block_size]
        m_new = np.maximum(m[s:s + block_size], blk.max(axis=-1))
        safe = np.where(np.isneginf(m_new), 0.0, m_new)
        total[s:s + block_size] = total[s:s + block_size] * np.exp(m[s:s + block_size] - safe) + np.exp(blk - safe[..., None]).sum(axis=-1)
        m[s:s + block_size] = m_new
    safe = np.where(np.isneginf(m), 0.0, m)
    den = np.where(total == 0, 1.0, total)
    return np.where(total[..., None] == 0, 0.0, np.exp(x - safe[..., None]) / den[..., None])
""",
        "not block by block",  # learner: A
    ),
    (
        "8.2_w09_no_normalise",
        "online_softmax",
        """\
def online_softmax(x: np.ndarray, block_size: int) -> np.ndarray:
    n = x.shape[-1]
    m = np.full(x.shape[:-1], -np.inf)
    total = np.zeros(x.shape[:-1])
    for s in range(0, n, block_size):
        blk = x[..., s:s + block_size]
        m_new = np.maximum(m, blk.max(axis=-1))
        safe = np.where(np.isneginf(m_new), 0.0, m_new)
        total = total * np.exp(m - safe) + np.exp(blk - safe[..., None]).sum(axis=-1)
        m = m_new
    safe = np.where(np.isneginf(m), 0.0, m)
    return np.exp(x - safe[..., None])
""",
        "you forgot to normalise: divide exp(x - ",  # learner: S
    ),
    (
        "8.2_w10_zero_rows_uniform",
        "online_softmax",
        """\
def online_softmax(x: np.ndarray, block_size: int) -> np.ndarray:
    n = x.shape[-1]
    m = np.full(x.shape[:-1], -np.inf)
    total = np.zeros(x.shape[:-1])
    for s in range(0, n, block_size):
        blk = x[..., s:s + block_size]
        m_new = np.maximum(m, blk.max(axis=-1))
        safe = np.where(np.isneginf(m_new), 0.0, m_new)
        total = total * np.exp(m - safe) + np.exp(blk - safe[..., None]).sum(axis=-1)
        m = m_new
    safe = np.where(np.isneginf(m), 0.0, m)
    w = np.exp(x - safe[..., None]) / np.where(total == 0, 1.0, total)[..., None]
    n_ = x.shape[-1]
    return np.where(total[..., None] == 0, 1.0 / n_, w)
""",
        "a row with no visible score (all -inf) m",  # learner: S
    ),
    (
        "8.2_w11_guard_only_end",
        "online_softmax",
        """\
def online_softmax(x: np.ndarray, block_size: int) -> np.ndarray:
    n = x.shape[-1]
    m = np.full(x.shape[:-1], -np.inf)
    total = np.zeros(x.shape[:-1])
    for s in range(0, n, block_size):
        blk = x[..., s:s + block_size]
        m_new = np.maximum(m, blk.max(axis=-1))
        safe = m_new
        total = total * np.exp(m - safe) + np.exp(blk - safe[..., None]).sum(axis=-1)
        m = m_new
    safe = np.where(np.isneginf(m), 0.0, m)
    num = np.exp(x - safe[..., None])
    den = np.where(total == 0, 1.0, total)
    return np.where(total[..., None] == 0, 0.0, num / den[..., None])
""",
        "NaN in a row that starts with masked blo",  # learner: S
    ),
    (
        "8.2_w12_nan_to_num",
        "online_softmax",
        """\
def online_softmax(x: np.ndarray, block_size: int) -> np.ndarray:
    n = x.shape[-1]
    m = np.full(x.shape[:-1], -np.inf)
    total = np.zeros(x.shape[:-1])
    for s in range(0, n, block_size):
        blk = x[..., s:s + block_size]
        m_new = np.maximum(m, blk.max(axis=-1))
        safe = m_new
        total = total * np.exp(m - safe) + np.exp(blk - safe[..., None]).sum(axis=-1)
        m = m_new
    return np.nan_to_num(np.exp(x - m[..., None]) / total[..., None])
""",
        "inside the loop",  # learner: M
    ),
    (
        "8.2_w13_no_blocks_at_all",
        "online_softmax",
        """\
def online_softmax(x: np.ndarray, block_size: int) -> np.ndarray:
    m = x.max(axis=-1, keepdims=True)
    m = np.where(np.isneginf(m), 0.0, m)
    e = np.exp(x - m)
    s = e.sum(axis=-1, keepdims=True)
    return e / np.where(s == 0, 1.0, s)
""",
        "not block by block",  # learner: A
    ),
    (
        "8.2_w14_slice_end_bug",
        "online_softmax",
        """\
def online_softmax(x: np.ndarray, block_size: int) -> np.ndarray:
    n = x.shape[-1]
    m = np.full(x.shape[:-1], -np.inf)
    total = np.zeros(x.shape[:-1])
    for s in range(0, n, block_size):
        blk = x[..., s:block_size]
        m_new = np.maximum(m, blk.max(axis=-1))
        safe = np.where(np.isneginf(m_new), 0.0, m_new)
        total = total * np.exp(m - safe) + np.exp(blk - safe[..., None]).sum(axis=-1)
        m = m_new
    safe = np.where(np.isneginf(m), 0.0, m)
    num = np.exp(x - safe[..., None])
    den = np.where(total == 0, 1.0, total)
    return np.where(total[..., None] == 0, 0.0, num / den[..., None])
""",
        "the term `start` is missing from the sum",  # learner: S
    ),
    (
        "8.3_w01_acc_not_rescaled",
        "tile_update",
        """\
def tile_update(m, total, acc, scores, v):
    m_new = np.maximum(m, scores.max(axis=-1))
    alpha = np.exp(m - m_new)
    p = np.exp(scores - m_new[..., None])
    total = alpha * total + p.sum(axis=-1)
    acc = acc + p @ v
    return m_new, total, acc
""",
        "you rescaled `total` but not acc: the ac",  # learner: S
    ),
    (
        "8.3_w02_alpha_no_newaxis",
        "tile_update",
        """\
def tile_update(m, total, acc, scores, v):
    m_new = np.maximum(m, scores.max(axis=-1))
    alpha = np.exp(m - m_new)
    p = np.exp(scores - m_new[..., None])
    total = alpha * total + p.sum(axis=-1)
    acc = alpha * acc + p @ v
    return m_new, total, acc
""",
        "you multiplied acc by alpha as it is: al",  # learner: S
    ),
    (
        "8.3_w03_v_transposed",
        "tile_update",
        """\
def tile_update(m, total, acc, scores, v):
    m_new = np.maximum(m, scores.max(axis=-1))
    alpha = np.exp(m - m_new)
    p = np.exp(scores - m_new[..., None])
    total = alpha * total + p.sum(axis=-1)
    acc = alpha[..., None] * acc + p @ v.swapaxes(-1, -2)
    return m_new, total, acc
""",
        "`v` is used transposed in a product",  # learner: S
    ),
    (
        "8.3_w04_p_old_max",
        "tile_update",
        """\
def tile_update(m, total, acc, scores, v):
    m_new = np.maximum(m, scores.max(axis=-1))
    alpha = np.exp(m - m_new)
    p = np.exp(scores - np.where(np.isneginf(m), m_new, m)[..., None])
    total = alpha * total + p.sum(axis=-1)
    acc = alpha[..., None] * acc + p @ v
    return m_new, total, acc
""",
        "old max",  # learner: G
    ),
    (
        "8.3_w05_normalise_each_step",
        "tile_update",
        """\
def tile_update(m, total, acc, scores, v):
    m_new = np.maximum(m, scores.max(axis=-1))
    alpha = np.exp(m - m_new)
    p = np.exp(scores - m_new[..., None])
    total = alpha * total + p.sum(axis=-1)
    acc = (alpha[..., None] * acc * (alpha * total - p.sum(-1) + p.sum(-1))[..., None] + p @ v) / total[..., None]
    return m_new, total, acc
""",
        None,  # learner: G
    ),
    (
        "8.3_w06_total_wrong_axis",
        "tile_update",
        """\
def tile_update(m, total, acc, scores, v):
    m_new = np.maximum(m, scores.max(axis=-1))
    alpha = np.exp(m - m_new)
    p = np.exp(scores - m_new[..., None])
    total = alpha * total + p.sum(axis=-2)
    acc = alpha[..., None] * acc + p @ v
    return m_new, total, acc
""",
        "axis=-2",  # learner: M
    ),
    (
        "8.3_w07_torch",
        "tile_update",
        """\
def tile_update(m, total, acc, scores, v):
    m, total, acc, scores, v = map(torch.as_tensor, (m, total, acc, scores, v))
    m_new = torch.maximum(m, scores.amax(-1))
    alpha = torch.exp(m - m_new)
    p = torch.exp(scores - m_new[..., None])
    return m_new, alpha * total + p.sum(-1), alpha[..., None] * acc + p @ v
""",
        "this exercise is in NumPy: compute with ",  # learner: S
    ),
    (
        "8.3_w08_tile_max",
        "tile_update",
        """\
def tile_update(m, total, acc, scores, v):
    m_new = np.maximum(m, scores.max())
    alpha = np.exp(m - m_new)
    p = np.exp(scores - m_new[..., None])
    total = alpha * total + p.sum(axis=-1)
    acc = alpha[..., None] * acc + p @ v
    return m_new, total, acc
""",
        "your new maximum is one number for the w",  # learner: S
    ),
    (
        "8.3_w09_rescale_again",
        "tile_update",
        """\
def tile_update(m, total, acc, scores, v):
    m_new = np.maximum(m, scores.max(axis=-1))
    alpha = np.exp(m - m_new)
    p = np.exp(scores / np.sqrt(v.shape[-1]) - m_new[..., None])
    total = alpha * total + p.sum(axis=-1)
    acc = alpha[..., None] * acc + p @ v
    return m_new, total, acc
""",
        "already scaled",  # learner: G
    ),
    (
        "8.3_w10_alpha_inverted",
        "tile_update",
        """\
def tile_update(m, total, acc, scores, v):
    m_new = np.maximum(m, scores.max(axis=-1))
    alpha = np.exp(m_new - m)
    p = np.exp(scores - m_new[..., None])
    total = alpha * total + p.sum(axis=-1)
    acc = alpha[..., None] * acc + p @ v
    return m_new, total, acc
""",
        "the wrong way round",  # learner: S
    ),
    (
        "8.3_w11_acc_alpha_squared",
        "tile_update",
        """\
def tile_update(m, total, acc, scores, v):
    m_new = np.maximum(m, scores.max(axis=-1))
    alpha = np.exp(m - m_new)
    p = np.exp(scores - m_new[..., None])
    total = alpha * total + p.sum(axis=-1)
    acc = alpha[..., None] * (alpha[..., None] * acc + p @ v)
    return m_new, total, acc
""",
        "twice",  # learner: G
    ),
    (
        "8.3_w12_p_no_newaxis",
        "tile_update",
        """\
def tile_update(m, total, acc, scores, v):
    m_new = np.maximum(m, scores.max(axis=-1))
    alpha = np.exp(m - m_new)
    p = np.exp(scores - m_new)
    total = alpha * total + p.sum(axis=-1)
    acc = alpha[..., None] * acc + p @ v
    return m_new, total, acc
""",
        "[..., None]",  # learner: M
    ),
    (
        "8.3_w13_vT_at_pT",
        "tile_update",
        """\
def tile_update(m, total, acc, scores, v):
    m_new = np.maximum(m, scores.max(axis=-1))
    alpha = np.exp(m - m_new)
    p = np.exp(scores - m_new[..., None])
    total = alpha * total + p.sum(axis=-1)
    acc = alpha[..., None] * acc + np.swapaxes(v, -1, -2) @ np.swapaxes(p, -1, -2)
    return m_new, total, acc
""",
        "came out transposed",  # learner: S
    ),
    (
        "8.4_w01_cat_feature_axis",
        "kv_step",
        """\
def kv_step(q, k, v, k_cache, v_cache):
    k_cache = torch.cat([k_cache, k], dim=-1)
    v_cache = torch.cat([v_cache, v], dim=-1)
    scores = q @ k_cache.transpose(-2, -1) / math.sqrt(q.shape[-1])
    out = torch.softmax(scores, dim=-1) @ v_cache
    return out, k_cache, v_cache
""",
        "`cat` along the wrong axis: yours works ",  # learner: S
    ),
    (
        "8.4_w02_no_scale",
        "kv_step",
        """\
def kv_step(q, k, v, k_cache, v_cache):
    k_cache = torch.cat([k_cache, k], dim=-2)
    v_cache = torch.cat([v_cache, v], dim=-2)
    scores = q @ k_cache.transpose(-2, -1)
    out = torch.softmax(scores, dim=-1) @ v_cache
    return out, k_cache, v_cache
""",
        "not divided by √d",  # learner: S
    ),
    (
        "8.4_w03_scale_d",
        "kv_step",
        """\
def kv_step(q, k, v, k_cache, v_cache):
    k_cache = torch.cat([k_cache, k], dim=-2)
    v_cache = torch.cat([v_cache, v], dim=-2)
    scores = q @ k_cache.transpose(-2, -1) / q.shape[-1]
    out = torch.softmax(scores, dim=-1) @ v_cache
    return out, k_cache, v_cache
""",
        "you divided by `q.shape[-1]`, not by its",  # learner: S
    ),
    (
        "8.4_w04_attend_before_append",
        "kv_step",
        """\
def kv_step(q, k, v, k_cache, v_cache):
    scores = q @ k_cache.transpose(-2, -1) / math.sqrt(q.shape[-1])
    out = torch.softmax(scores, dim=-1) @ v_cache
    k_cache = torch.cat([k_cache, k], dim=-2)
    v_cache = torch.cat([v_cache, v], dim=-2)
    return out, k_cache, v_cache
""",
        "your query attended to the cache only: a",  # learner: S
    ),
    (
        "8.4_w05_prepend",
        "kv_step",
        """\
def kv_step(q, k, v, k_cache, v_cache):
    k_cache = torch.cat([k, k_cache], dim=-2)
    v_cache = torch.cat([v, v_cache], dim=-2)
    scores = q @ k_cache.transpose(-2, -1) / math.sqrt(q.shape[-1])
    out = torch.softmax(scores, dim=-1) @ v_cache
    return out, k_cache, v_cache
""",
        "you put the new key and value first; app",  # learner: S
    ),
    (
        "8.4_w06_softmax_dim_m2",
        "kv_step",
        """\
def kv_step(q, k, v, k_cache, v_cache):
    k_cache = torch.cat([k_cache, k], dim=-2)
    v_cache = torch.cat([v_cache, v], dim=-2)
    scores = q @ k_cache.transpose(-2, -1) / math.sqrt(q.shape[-1])
    out = torch.softmax(scores, dim=-2) @ v_cache
    return out, k_cache, v_cache
""",
        "query axis",  # learner: S
    ),
    (
        "8.4_w07_sdpa_is_causal",
        "kv_step",
        """\
def kv_step(q, k, v, k_cache, v_cache):
    kc = torch.cat((k_cache, k), -2)
    vc = torch.cat((v_cache, v), -2)
    out = torch.nn.functional.scaled_dot_product_attention(q, kc, vc, is_causal=True)
    return out, kc, vc
""",
        "is_causal",  # learner: G
    ),
    (
        "8.4_w08_caches_not_returned",
        "kv_step",
        """\
def kv_step(q, k, v, k_cache, v_cache):
    k_all = torch.cat([k_cache, k], dim=-2)
    v_all = torch.cat([v_cache, v], dim=-2)
    scores = q @ k_all.transpose(-2, -1) / math.sqrt(q.shape[-1])
    out = torch.softmax(scores, dim=-1) @ v_all
    return out, k_cache, v_cache
""",
        "you returned the old caches: return the ",  # learner: S
    ),
    (
        "8.4_w09_scale_model_dim",
        "kv_step",
        """\
def kv_step(q, k, v, k_cache, v_cache):
    k_cache = torch.cat([k_cache, k], dim=-2)
    v_cache = torch.cat([v_cache, v], dim=-2)
    scores = q @ k_cache.transpose(-2, -1) / math.sqrt(q.shape[1] * q.shape[-1])
    out = torch.softmax(scores, dim=-1) @ v_cache
    return out, k_cache, v_cache
""",
        "H·d",  # learner: G
    ),
    (
        "8.4_w10_keys_as_values",
        "kv_step",
        """\
def kv_step(q, k, v, k_cache, v_cache):
    k_cache = torch.cat([k_cache, k], dim=-2)
    v_cache = torch.cat([v_cache, v], dim=-2)
    scores = q @ k_cache.transpose(-2, -1) / math.sqrt(q.shape[-1])
    out = torch.softmax(scores, dim=-1) @ k_cache
    return out, k_cache, v_cache
""",
        "you used `k_cache` where `v_cache` belon",  # learner: S
    ),
    (
        "8.4_w11_v_appended_k",
        "kv_step",
        """\
def kv_step(q, k, v, k_cache, v_cache):
    k_cache = torch.cat([k_cache, k], dim=-2)
    v_cache = torch.cat([v_cache, k], dim=-2)
    scores = q @ k_cache.transpose(-2, -1) / math.sqrt(q.shape[-1])
    out = torch.softmax(scores, dim=-1) @ v_cache
    return out, k_cache, v_cache
""",
        "you used `k` where `v` belongs",  # learner: S
    ),
    (
        "8.4_w12_numpy",
        "kv_step",
        """\
def kv_step(q, k, v, k_cache, v_cache):
    k_cache = np.concatenate([k_cache, k], axis=-2)
    v_cache = np.concatenate([v_cache, v], axis=-2)
    s = q.numpy() @ np.swapaxes(k_cache, -1, -2) / np.sqrt(q.shape[-1])
    w = np.exp(s - s.max(-1, keepdims=True)); w /= w.sum(-1, keepdims=True)
    return w @ v_cache, k_cache, v_cache
""",
        "this exercise is in torch: compute with ",  # learner: S
    ),
    (
        "8.4_w13_cat_heads",
        "kv_step",
        """\
def kv_step(q, k, v, k_cache, v_cache):
    k_cache = torch.cat([k_cache, k], dim=1)
    v_cache = torch.cat([v_cache, v], dim=1)
    scores = q @ k_cache.transpose(-2, -1) / math.sqrt(q.shape[-1])
    out = torch.softmax(scores, dim=-1) @ v_cache
    return out, k_cache, v_cache
""",
        "`cat` along the wrong axis: yours works ",  # learner: S
    ),
    (
        "8.4_w14_scale_num_keys",
        "kv_step",
        """\
def kv_step(q, k, v, k_cache, v_cache):
    k_cache = torch.cat([k_cache, k], dim=-2)
    v_cache = torch.cat([v_cache, v], dim=-2)
    scores = q @ k_cache.transpose(-2, -1) / math.sqrt(k_cache.shape[-2])
    out = torch.softmax(scores, dim=-1) @ v_cache
    return out, k_cache, v_cache
""",
        "you scaled the scores by the square root",  # learner: S
    ),
    (
        "8.5_w01_repeat",
        "gqa",
        """\
def gqa(q, k, v):
    n = q.shape[1] // k.shape[1]
    k = k.repeat(1, n, 1, 1)
    v = v.repeat(1, n, 1, 1)
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return w @ v
""",
        "query head h used key-value head h % G (",  # learner: S
    ),
    (
        "8.5_w02_modulo_index",
        "gqa",
        """\
def gqa(q, k, v):
    H, G = q.shape[1], k.shape[1]
    idx = torch.arange(H) % G
    k, v = k[:, idx], v[:, idx]
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return w @ v
""",
        "query head h used key-value head h % G (",  # learner: S
    ),
    (
        "8.5_w03_no_scale",
        "gqa",
        """\
def gqa(q, k, v):
    n = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(n, dim=1)
    v = v.repeat_interleave(n, dim=1)
    w = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
    return w @ v
""",
        "you forgot to scale: divide the scores b",  # learner: S
    ),
    (
        "8.5_w04_repeat_G_times",
        "gqa",
        """\
def gqa(q, k, v):
    n = k.shape[1]
    k = k.repeat_interleave(n, dim=1)
    v = v.repeat_interleave(n, dim=1)
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return w @ v
""",
        "the query heads and your key-value heads",  # learner: S
    ),
    (
        "8.5_w05_interleave_tokens",
        "gqa",
        """\
def gqa(q, k, v):
    n = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(n, dim=2)
    v = v.repeat_interleave(n, dim=2)
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return w @ v
""",
        "the query heads and your key-value heads",  # learner: S
    ),
    (
        "8.5_w06_softmax_dim_m2",
        "gqa",
        """\
def gqa(q, k, v):
    n = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(n, dim=1)
    v = v.repeat_interleave(n, dim=1)
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-2)
    return w @ v
""",
        "softmax over the wrong axis: each query'",  # learner: S
    ),
    (
        "8.5_w07_expand_wrong_order",
        "gqa",
        """\
def gqa(q, k, v):
    B, H, T, d = q.shape
    G = k.shape[1]
    k = k[:, None].expand(B, H // G, G, *k.shape[2:]).reshape(B, H, *k.shape[2:])
    v = v[:, None].expand(B, H // G, G, *v.shape[2:]).reshape(B, H, *v.shape[2:])
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d), dim=-1)
    return w @ v
""",
        "query head h used key-value head h % G (",  # learner: S
    ),
    (
        "8.5_w08_only_v_repeated_right",
        "gqa",
        """\
def gqa(q, k, v):
    n = q.shape[1] // k.shape[1]
    k = k.repeat(1, n, 1, 1)
    v = v.repeat_interleave(n, dim=1)
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return w @ v
""",
        "two different ways",  # learner: G
    ),
    (
        "8.5_w09_scale_by_H_d",
        "gqa",
        """\
def gqa(q, k, v):
    n = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(n, dim=1)
    v = v.repeat_interleave(n, dim=1)
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[1] * q.shape[-1]), dim=-1)
    return w @ v
""",
        "H·d",  # learner: M
    ),
    (
        "8.5_w10_sum_heads_instead",
        "gqa",
        """\
def gqa(q, k, v):
    B, H, T, d = q.shape
    G = k.shape[1]
    # average the query heads of a group, attend once per kv head, then copy back
    qg = q.view(B, G, H // G, T, d).mean(2)
    w = torch.softmax(qg @ k.transpose(-2, -1) / math.sqrt(d), dim=-1)
    return (w @ v).repeat_interleave(H // G, dim=1)
""",
        "own queries",  # learner: G
    ),
    (
        "8.5_w11_no_transpose_k",
        "gqa",
        """\
def gqa(q, k, v):
    n = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(n, dim=1)
    v = v.repeat_interleave(n, dim=1)
    w = torch.softmax(q @ k.reshape(k.shape[0], k.shape[1], k.shape[3], k.shape[2]) / math.sqrt(q.shape[-1]), dim=-1)
    return w @ v
""",
        "reshape",  # learner: G
    ),
    (
        "8.5_w12_scale_S",
        "gqa",
        """\
def gqa(q, k, v):
    n = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(n, dim=1)
    v = v.repeat_interleave(n, dim=1)
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2]), dim=-1)
    return w @ v
""",
        "number of keys",  # learner: M
    ),
    (
        "8.5_w13_group_view_wrong",
        "gqa",
        """\
def gqa(q, k, v):
    B, H, T, d = q.shape
    G = k.shape[1]
    qg = q.view(B, H // G, G, T, d).transpose(1, 2)          # B G n T d
    s = qg @ k[:, :, None].transpose(-2, -1) / math.sqrt(d)
    out = s.softmax(-1) @ v[:, :, None]
    return out.transpose(1, 2).reshape(B, H, T, d)
""",
        "query head h used key-value head h % G (",  # learner: S
    ),
    (
        "8.6_w01_kv_full_width",
        "gqa_module",
        """\
class MyGroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.H, self.d)[:, :, :self.G].transpose(1, 2)
        v = self.W_v(x).view(B, T, self.H, self.d)[:, :, :self.G].transpose(1, 2)
        n = self.H // self.G
        k = k.repeat_interleave(n, dim=1)
        v = v.repeat_interleave(n, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, D)
        return self.W_o(out), weights
""",
        "W_k and W_v project to the G key-value h",  # learner: S
    ),
    (
        "8.6_w02_mask_zero_fill",
        "gqa_module",
        """\
class MyGroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)
        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)
        n = self.H // self.G
        k = k.repeat_interleave(n, dim=1)
        v = v.repeat_interleave(n, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        if mask is not None:
            scores = scores.masked_fill(~mask, 0.0)
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, D)
        return self.W_o(out), weights
""",
        "the hidden entries are filled with 0, an",  # learner: S
    ),
    (
        "8.6_w03_mask_inverted",
        "gqa_module",
        """\
class MyGroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)
        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)
        n = self.H // self.G
        k = k.repeat_interleave(n, dim=1)
        v = v.repeat_interleave(n, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, D)
        return self.W_o(out), weights
""",
        "you hid the keys where the mask is True;",  # learner: S
    ),
    (
        "8.6_w04_merge_no_transpose",
        "gqa_module",
        """\
class MyGroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)
        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)
        n = self.H // self.G
        k = k.repeat_interleave(n, dim=1)
        v = v.repeat_interleave(n, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).reshape(B, T, D)
        return self.W_o(out), weights
""",
        "you merged the heads with one reshape to",  # learner: S
    ),
    (
        "8.6_w05_repeat_tiled",
        "gqa_module",
        """\
class MyGroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)
        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)
        n = self.H // self.G
        k = k.repeat(1, n, 1, 1)
        v = v.repeat(1, n, 1, 1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, D)
        return self.W_o(out), weights
""",
        "query head h used key-value head h % G (",  # learner: S
    ),
    (
        "8.6_w06_no_bias",
        "gqa_module",
        """\
class MyGroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model, bias=False)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d, bias=False)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d, bias=False)
        self.W_o = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)
        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)
        n = self.H // self.G
        k = k.repeat_interleave(n, dim=1)
        v = v.repeat_interleave(n, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, D)
        return self.W_o(out), weights
""",
        "no bias",  # learner: G
    ),
    (
        "8.6_w07_no_W_o",
        "gqa_module",
        """\
class MyGroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)
        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)
        n = self.H // self.G
        k = k.repeat_interleave(n, dim=1)
        v = v.repeat_interleave(n, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, D)
        return out, weights
""",
        "you returned the concatenated heads with",  # learner: S
    ),
    (
        "8.6_w08_mask_after_softmax",
        "gqa_module",
        """\
class MyGroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)
        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)
        n = self.H // self.G
        k = k.repeat_interleave(n, dim=1)
        v = v.repeat_interleave(n, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        if mask is not None:
            pass
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights * mask
        out = (weights @ v).transpose(1, 2).reshape(B, T, D)
        return self.W_o(out), weights
""",
        "you applied the mask after the softmax (",  # learner: S
    ),
    (
        "8.6_w09_scale_dmodel",
        "gqa_module",
        """\
class MyGroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)
        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)
        n = self.H // self.G
        k = k.repeat_interleave(n, dim=1)
        v = v.repeat_interleave(n, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(D)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, D)
        return self.W_o(out), weights
""",
        "you scaled the scores by √d_model: the s",  # learner: S
    ),
    (
        "8.6_w10_kv_headsize_wrong",
        "gqa_module",
        """\
class MyGroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, n_kv_heads)
        self.W_v = nn.Linear(d_model, n_kv_heads)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.G, 1).expand(B, T, self.G, self.d).transpose(1, 2)
        v = self.W_v(x).view(B, T, self.G, 1).expand(B, T, self.G, self.d).transpose(1, 2)
        n = self.H // self.G
        k = k.repeat_interleave(n, dim=1)
        v = v.repeat_interleave(n, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, D)
        return self.W_o(out), weights
""",
        "W_k and W_v project to the G key-value h",  # learner: S
    ),
    (
        "8.6_w11_weights_avg_heads",
        "gqa_module",
        """\
class MyGroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)
        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)
        n = self.H // self.G
        k = k.repeat_interleave(n, dim=1)
        v = v.repeat_interleave(n, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, D)
        return self.W_o(out), weights.mean(1)
""",
        "your `weights` has lost an axis, the one",  # learner: S
    ),
    (
        "8.6_w13_split_heads_view_wrong",
        "gqa_module",
        """\
class MyGroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q = self.W_q(x).view(B, self.H, T, self.d)
        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)
        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)
        n = self.H // self.G
        k = k.repeat_interleave(n, dim=1)
        v = v.repeat_interleave(n, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, D)
        return self.W_o(out), weights
""",
        "query heads",  # learner: G
    ),
    (
        "8.6_w14_names",
        "gqa_module",
        """\
class MyGroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)
        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)
        n = self.H // self.G
        k = k.repeat_interleave(n, dim=1)
        v = v.repeat_interleave(n, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, D)
        return self.out_proj(out), weights
""",
        "name the four projections self.W_q, self",  # learner: S
    ),
    (
        "8.6_w15_view_after_transpose",
        "gqa_module",
        """\
class MyGroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)
        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)
        n = self.H // self.G
        k = k.repeat_interleave(n, dim=1)
        v = v.repeat_interleave(n, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).view(B, T, D)
        return self.W_o(out), weights
""",
        "`.view` needs memory laid out in order, ",  # learner: S
    ),
    (
        "8.6_w16_no_repeat",
        "gqa_module",
        """\
class MyGroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)
        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)
        n = self.H // self.G
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, D)
        return self.W_o(out), weights
""",
        "without a repeat",  # learner: S
    ),
    (
        "8.6_w17_softmax_heads",
        "gqa_module",
        """\
class MyGroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)
        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)
        n = self.H // self.G
        k = k.repeat_interleave(n, dim=1)
        v = v.repeat_interleave(n, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, D)
        return self.W_o(out), weights
""",
        "`softmax` along the wrong axis: yours wo",  # learner: S
    ),
    (
        "8.6_w18_split_no_transpose",
        "gqa_module",
        """\
class MyGroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q = self.W_q(x).view(B, T, self.H, self.d)
        k = self.W_k(x).view(B, T, self.G, self.d)
        v = self.W_v(x).view(B, T, self.G, self.d)
        n = self.H // self.G
        k = k.repeat_interleave(n, dim=1)
        v = v.repeat_interleave(n, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, D)
        return self.W_o(out), weights
""",
        "dim 2",  # learner: G
    ),
    (
        "8.6_w19_repeat_interleave_dim2",
        "gqa_module",
        """\
class MyGroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)
        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)
        n = self.H // self.G
        k = k.repeat_interleave(n, dim=2)
        v = v.repeat_interleave(n, dim=2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, D)
        return self.W_o(out), weights
""",
        "along another dim",  # learner: M
    ),
    (
        "8.8_w01_query_heads",
        "cache_memory",
        """\
answer = 192  # your prediction
""",
        "that is the cache with 16 key-value head",  # learner: S
    ),
    (
        "8.8_w02_only_keys",
        "cache_memory",
        """\
answer = 24  # your prediction
""",
        "the keys or the values alone",  # learner: S
    ),
    (
        "8.8_w03_MB",
        "cache_memory",
        """\
answer = 50.33  # your prediction
""",
        "that is the size in MB (10**6 bytes); th",  # learner: S
    ),
    (
        "8.8_w04_bytes",
        "cache_memory",
        """\
answer = 50331648  # your prediction
""",
        "size in bytes",  # learner: G
    ),
    (
        "8.8_w05_float32",
        "cache_memory",
        """\
answer = 96  # your prediction
""",
        "float16 is 2 bytes per number, not 4",  # learner: S
    ),
    (
        "8.8_w06_GiB",
        "cache_memory",
        """\
answer = 0.046875  # your prediction
""",
        "GiB",  # learner: G
    ),
    (
        "8.8_w07_KiB",
        "cache_memory",
        """\
answer = 49152  # your prediction
""",
        "that is the size in KiB (2**10 bytes): 1",  # learner: S
    ),
    (
        "8.8_w08_per_layer",
        "cache_memory",
        """\
answer = 2  # your prediction
""",
        "that is the cache of one layer: the mode",  # learner: S
    ),
    (
        "8.8_w09_string",
        "cache_memory",
        """\
answer = "48 MiB"  # your prediction
""",
        "write the number without quotes",  # learner: S
    ),
    (
        "8.8_w10_heads_times_d_as_D",
        "cache_memory",
        """\
answer = 2 * 24 * 1024 * 2048 * 2 / 2**20  # your prediction
""",
        "that is the cache with 16 key-value head",  # learner: S
    ),
    (
        "8.8_w11_bits",
        "cache_memory",
        """\
answer = 2 * 24 * 4 * 64 * 2048 * 16 / 2**20  # your prediction
""",
        "bits",  # learner: M
    ),
    (
        "8.8_w12_one_kv_head",
        "cache_memory",
        """\
answer = 12  # your prediction
""",
        "one key-value head",  # learner: G
    ),
    (
        "8.9_w01_strict_lower",
        "causal_tiles",
        """\
answer = 28  # your prediction
""",
        "you counted the tiles below the diagonal",  # learner: S
    ),
    (
        "8.9_w02_half",
        "causal_tiles",
        """\
answer = 32  # your prediction
""",
        "half of 64 cuts the diagonal tiles in tw",  # learner: S
    ),
    (
        "8.9_w03_all",
        "causal_tiles",
        """\
answer = 64  # your prediction
""",
        "tiles above the diagonal see only future",  # learner: S
    ),
    (
        "8.9_w04_diag",
        "causal_tiles",
        """\
answer = 8  # your prediction
""",
        "the diagonal tiles are computed, but so ",  # learner: S
    ),
    (
        "8.9_w05_off_by_one",
        "causal_tiles",
        """\
answer = 35  # your prediction
""",
        "one short",  # learner: G
    ),
    (
        "8.9_w06_string",
        "causal_tiles",
        """\
answer = "36"  # your prediction
""",
        "write the number without quotes",  # learner: S
    ),
    (
        "8.9_w07_upper_plus",
        "causal_tiles",
        """\
answer = 56  # your prediction
""",
        "that is every tile but the diagonal; the",  # learner: S
    ),
    (
        "8.9_w08_float_half_plus_diag",
        "causal_tiles",
        """\
answer = 36.5  # your prediction
""",
        "whole",  # learner: G
    ),
    (
        "8.9_w09_elements_not_tiles",
        "causal_tiles",
        """\
answer = 524800  # your prediction
""",
        "pairs",  # learner: G
    ),
    (
        "8.1_r2_08",
        "online_update",
        "def online_update(m, total, block):\n    m_new = np.maximum(m, block.max(axis=-1))\n    total_new = total * np.exp(m - m_new) + np.exp(block - m_new[..., None]).sum(axis=0)\n    return m_new, total_new",
        "axis 0",  # round 2: was generic or misleading
    ),
    (
        "8.2_r2_17",
        "online_softmax",
        "def online_softmax(x, block_size):\n    m = np.full(x.shape[:-1], -np.inf); total = np.zeros(x.shape[:-1])\n    for s in range(0, x.shape[-1], block_size):\n        b = x[..., s:s+block_size-1]\n        if b.shape[-1] == 0: continue\n        mn = np.maximum(m, b.max(-1))\n        safe = np.where(np.isinf(mn), 0.0, mn)\n        total = total * np.exp(m - safe) + np.exp(b - safe[..., None]).sum(-1)\n        m = mn\n    safe = np.where(np.isinf(m), 0.0, m)\n    w = np.exp(x - safe[..., None])\n    return np.divide(w, total[..., None], out=np.zeros_like(w), where=total[..., None] > 0)",
        "one score",  # round 2: was generic or misleading
    ),
    (
        "8.2_r2_18",
        "online_softmax",
        "def online_softmax(x, block_size):\n    m = np.full(x.shape[:-1], -np.inf); total = np.zeros(x.shape[:-1]); m0 = None\n    for s in range(0, x.shape[-1], block_size):\n        b = x[..., s:s+block_size]\n        mn = np.maximum(m, b.max(-1))\n        safe = np.where(np.isinf(mn), 0.0, mn)\n        total = total * np.exp(m - safe) + np.exp(b - safe[..., None]).sum(-1)\n        m = mn\n        if m0 is None: m0 = safe.copy()\n    w = np.exp(x - m0[..., None])\n    return np.divide(w, total[..., None], out=np.zeros_like(w), where=total[..., None] > 0)",
        "first block",  # round 2: was generic or misleading
    ),
    (
        "8.3_r2_25",
        "tile_update",
        "def tile_update(m, total, acc, scores, v):\n    mn = np.maximum(m, scores.max(-1)); a = np.exp(mn - m); p = np.exp(scores - mn[..., None])\n    return mn, a * total + p.sum(-1), a[..., None] * acc + p @ v",
        "wrong way round",  # round 2: was generic or misleading
    ),
    (
        "8.4_r2_40",
        "kv_step",
        "def kv_step(q, k, v, k_cache, v_cache):\n    K = torch.cat([k_cache, k], -2); V = torch.cat([v_cache, v], -2)\n    s = q @ K.transpose(-2, -1) / math.sqrt(q.shape[-2])\n    return torch.softmax(s, -1) @ V, K, V",
        "q.shape[-2]",  # round 2: was generic or misleading
    ),
    (
        "8.4_r2_42",
        "kv_step",
        "def kv_step(q, k, v, k_cache, v_cache):\n    K = torch.cat([k_cache, k], -2); V = torch.cat([v_cache, v], -2)\n    s = q @ V.transpose(-2, -1) / math.sqrt(q.shape[-1])\n    return torch.softmax(s, -1) @ K, K, V",
        "swapped",  # round 2: was generic or misleading
    ),
    (
        "8.5_r2_52",
        "gqa",
        "def gqa(q, k, v):\n    k = k[:, :1]; v = v[:, :1]\n    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -1) @ v",
        "head 0",  # round 2: was generic or misleading
    ),
    (
        "8.8_r2_77",
        "cache_memory",
        "answer = 24.0\n",
        "bytes",  # round 2: was generic or misleading
    ),
    (
        "8.8_r2_78",
        "cache_memory",
        "answer = 49.152\n",
        "1024·1000",  # round 2: was generic or misleading
    ),
    (
        "8.9_r2_86",
        "causal_tiles",
        "answer = 72\n",
        "twice",  # round 2: was generic or misleading
    ),
    (
        "8.9_r2_87",
        "causal_tiles",
        "answer = 36/64\n",
        "fraction",  # round 2: was generic or misleading
    ),
    (
        "8.1_r2_94",
        "online_update",
        "def online_update(m, total, block):\n    m_new = np.maximum(m[..., None], block).max(-1)\n    total_new = total * np.exp(m - m_new) + np.exp(block - m_new[..., None]).sum(-1, keepdims=True)\n    return m_new, total_new",
        "keepdims",  # round 2: was generic or misleading
    ),
    (
        "8.1_r2_95",
        "online_update",
        "def online_update(m, total, block):\n    m_new = np.maximum(m, block.max(axis=-1))\n    total_new = total * np.exp(m - m_new) + np.exp(block - m_new[..., None]).sum(axis=-1)\n    return m_new, np.log(total_new)",
        "log",  # round 2: was generic or misleading
    ),
    (
        "8.1_r2_96",
        "online_update",
        "def online_update(m, total, block):\n    m_new = np.empty_like(m); t = np.empty_like(total)\n    for i in range(len(m)):\n        m_new[i] = max(m[i], block[i].max())\n        t[i] = total[i] * np.exp(m[i] - m_new[i]) + np.exp(block[i] - m_new[i]).sum()\n    return m_new, t",
        "one batch axis",  # round 2: was generic or misleading
    ),
    (
        "8.2_r2_97",
        "online_softmax",
        "def online_softmax(x, block_size):\n    m = np.full(x.shape[:-1], -np.inf); total = np.zeros(x.shape[:-1])\n    for s in range(0, x.shape[-1], block_size):\n        b = x[..., s:s+block_size]\n        bm = b.max(-1)\n        safe = np.where(np.isneginf(bm), 0.0, bm); old = np.where(np.isneginf(m), 0.0, m)\n        total = total * np.exp(old - safe) + np.exp(b - safe[..., None]).sum(-1)\n        m = bm\n    safe = np.where(np.isneginf(m), 0.0, m)\n    w = np.exp(x - safe[..., None])\n    return np.divide(w, total[..., None], out=np.zeros_like(w), where=total[..., None] > 0)",
        "forgets the old one",  # round 2: was generic or misleading
    ),
    (
        "8.2_r2_98",
        "online_softmax",
        "def online_softmax(x, block_size):\n    m = np.full(x.shape[:-1], -np.inf); total = np.zeros(x.shape[:-1]); out = np.zeros(x.shape)\n    for s in range(0, x.shape[-1], block_size):\n        b = x[..., s:s+block_size]\n        mn = np.maximum(m, b.max(-1)); safe = np.where(np.isneginf(mn), 0.0, mn)\n        total = total * np.exp(m - safe) + np.exp(b - safe[..., None]).sum(-1)\n        m = mn\n        w = np.exp(b - safe[..., None])\n        out[..., s:s+block_size] = np.divide(w, total[..., None], out=np.zeros_like(w), where=total[..., None] > 0)\n    return out",
        "as they stood",  # round 2: was generic or misleading
    ),
    (
        "8.2_r2_100",
        "online_softmax",
        "def online_softmax(x, block_size):\n    m = np.full(x.shape[0], -np.inf); total = np.zeros(x.shape[0])\n    for s in range(0, x.shape[1], block_size):\n        b = x[:, s:s+block_size]\n        mn = np.maximum(m, b.max(1)); safe = np.where(np.isneginf(mn), 0.0, mn)\n        total = total * np.exp(m - safe) + np.exp(b - safe[:, None]).sum(1)\n        m = mn\n    safe = np.where(np.isneginf(m), 0.0, m)\n    w = np.exp(x - safe[:, None])\n    return np.divide(w, total[:, None], out=np.zeros_like(w), where=total[:, None] > 0)",
        "2-D",  # round 2: was generic or misleading
    ),
    (
        "8.3_r2_102",
        "tile_update",
        "def tile_update(m, total, acc, scores, v):\n    mn = np.maximum(m, scores.max(-1)); a = np.exp(m - mn); p = a[..., None] * np.exp(scores - mn[..., None])\n    return mn, a * total + p.sum(-1), a[..., None] * acc + p @ v",
        "tile's p by alpha",  # round 2: was generic or misleading
    ),
    (
        "8.3_r2_103",
        "tile_update",
        "def tile_update(m, total, acc, scores, v):\n    mn = np.maximum(m, scores.max(-1)); a = np.exp(m - mn); p = np.exp(scores - mn[..., None])\n    return mn, a * total + p.sum(-1), a[..., None] * acc + np.dot(p, v)",
        "np.dot",  # round 2: was generic or misleading
    ),
    (
        "8.3_r2_104",
        "tile_update",
        "def tile_update(m, total, acc, scores, v):\n    mn = scores.max(-1); a = np.exp(m - mn); p = np.exp(scores - mn[..., None])\n    return mn, a * total + p.sum(-1), a[..., None] * acc + p @ v",
        "never goes down",  # round 2: was generic or misleading
    ),
    (
        "8.6_r2_116",
        "gqa_module",
        "class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.n_kv, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model, bias=True)\n        self.W_k = nn.Linear(d_model, self.n_kv * self.d, bias=True)\n        self.W_v = nn.Linear(d_model, self.n_kv * self.d, bias=True)\n        self.W_o = nn.Linear(d_model, d_model, bias=True)\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, -1, self.d).transpose(1, 2).repeat_interleave(self.H // self.n_kv, dim=1)\n        v = self.W_v(x).view(B, T, -1, self.d).transpose(1, 2).repeat_interleave(self.H // self.n_kv, dim=1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        mask = torch.tril(torch.ones(T, T, dtype=torch.bool))\n        if True:\n            s = s.masked_fill(~mask, float('-inf'))\n        w = torch.softmax(s, dim=-1)\n        out = w @ v\n        o = out.transpose(1, 2).reshape(B, T, D)\n        return self.W_o(o), w\n",
        "mask=None",  # round 2: was generic or misleading
    ),
    (
        "8.6_r2_118",
        "gqa_module",
        "class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.n_kv, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model, bias=True)\n        self.W_k = nn.Linear(d_model, self.n_kv * self.d, bias=True)\n        self.W_v = nn.Linear(d_model, self.n_kv * self.d, bias=True)\n        self.W_o = nn.Linear(d_model, d_model, bias=True)\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, -1, self.d).transpose(1, 2).repeat_interleave(self.H // self.n_kv, dim=1)\n        v = self.W_v(x).view(B, T, -1, self.d).transpose(1, 2).repeat_interleave(self.H // self.n_kv, dim=1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s.masked_fill(~mask, float('-inf'))\n        w = torch.softmax(s, dim=-1)\n        out = w @ v\n        o = out.transpose(1, 2).reshape(B, T, D)\n        return self.W_o(o), s\n",
        "before the softmax",  # round 2: was generic or misleading
    ),
    (
        "8.8_r2_121",
        "cache_memory",
        "answer = 240\n",
        "20 heads",  # round 2: was generic or misleading
    ),
    (
        "8.8_r2_122",
        "cache_memory",
        "answer = 0.75\n",
        "head size",  # round 2: was generic or misleading
    ),
    (
        "8.8_r2_123",
        "cache_memory",
        "answer = 72\n",
        "factor 3",  # round 2: was generic or misleading
    ),
    (
        "8.9_r2_125",
        "causal_tiles",
        "answer = 45\n",
        "9 x 9",  # round 2: was generic or misleading
    ),
    (
        "8.5_r2_128",
        "gqa",
        "def gqa(q, k, v):\n    k = k.repeat_interleave(2, dim=1); v = v.repeat_interleave(2, dim=1)\n    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -1) @ v",
        "fixed number",  # round 2: was generic or misleading
    ),
    (
        "8.1_r2_131",
        "online_update",
        "def online_update(m, total, block):\n    m_new = np.maximum(m, block.max(-1))\n    return m_new, total * np.exp(m - m_new) + np.exp(block[..., :2] - m_new[..., None]).sum(-1)",
        "first 2 scores",  # round 2: was generic or misleading
    ),
    (
        "8.6_r2_132",
        "gqa_module",
        "class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.n_kv, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model, bias=True)\n        self.W_k = nn.Linear(d_model, self.n_kv * self.d, bias=True)\n        self.W_v = nn.Linear(d_model, self.n_kv * self.d, bias=True)\n        self.W_o = nn.Linear(d_model, d_model, bias=True)\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, -1, self.d).transpose(1, 2).repeat_interleave(2, dim=1)\n        v = self.W_v(x).view(B, T, -1, self.d).transpose(1, 2).repeat_interleave(2, dim=1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s.masked_fill(~mask, float('-inf'))\n        w = torch.softmax(s, dim=-1)\n        out = w @ v\n        o = out.transpose(1, 2).reshape(B, T, D)\n        return self.W_o(o), w\n",
        "fixed number",  # round 2: was generic or misleading
    ),
    (
        "8.1_w7_forgot_new_axis_r3",
        "online_update",
        "def online_update(m, total, block):\n    m_new = np.maximum(m, block.max(axis=-1))\n    return m_new, total * np.exp(m - m_new) + np.exp(block - m_new).sum(-1)\n",
        "a last axis of size 1",  # round 3: was not specific
    ),
    (
        "8.2_w6_block_stride_minus_one_r3",
        "online_softmax",
        "def online_softmax(x, block_size):\n    m = np.full(x.shape[:-1], -np.inf)\n    total = np.zeros(x.shape[:-1])\n    n = x.shape[-1]\n    for s in range(0, n, block_size):\n        blk = x[..., s:s + block_size - 1]\n        m_new = np.maximum(m, blk.max(axis=-1))\n        safe = np.where(np.isneginf(m_new), 0.0, m_new)\n        total = total * np.exp(m - safe) + np.exp(blk - safe[..., None]).sum(-1)\n        m = m_new\n    safe = np.where(np.isneginf(m), 0.0, m)\n    w = np.exp(x - safe[..., None])\n    denom = np.where(total == 0, 1.0, total)\n    return w / denom[..., None]\n",
        "the block is empty",  # round 3: was not specific
    ),
    (
        "8.2_w10_block_size_hardcoded_2_r3",
        "online_softmax",
        "def online_softmax(x, block_size):\n    m = np.full(x.shape[:-1], -np.inf)\n    total = np.zeros(x.shape[:-1])\n    n = x.shape[-1]\n    for s in range(0, n, 2):\n        blk = x[..., s:s + 2]\n        m_new = np.maximum(m, blk.max(axis=-1))\n        safe = np.where(np.isneginf(m_new), 0.0, m_new)\n        total = total * np.exp(m - safe) + np.exp(blk - safe[..., None]).sum(-1)\n        m = m_new\n    safe = np.where(np.isneginf(m), 0.0, m)\n    w = np.exp(x - safe[..., None])\n    denom = np.where(total == 0, 1.0, total)\n    return w / denom[..., None]\n",
        "ignores its `block_size`",  # round 3: was not specific
    ),
    (
        "8.2_w13_running_max_starts_at_zero_r3",
        "online_softmax",
        "def online_softmax(x, block_size):\n    m = np.zeros(x.shape[:-1])\n    total = np.zeros(x.shape[:-1])\n    n = x.shape[-1]\n    for s in range(0, n, block_size):\n        blk = x[..., s:s + block_size]\n        m_new = np.maximum(m, blk.max(axis=-1))\n        safe = np.where(np.isneginf(m_new), 0.0, m_new)\n        total = total * np.exp(m - safe) + np.exp(blk - safe[..., None]).sum(-1)\n        m = m_new\n    safe = np.where(np.isneginf(m), 0.0, m)\n    w = np.exp(x - safe[..., None])\n    denom = np.where(total == 0, 1.0, total)\n    return w / denom[..., None]\n",
        "starts at 0",  # round 3: was not specific
    ),
    (
        "8.3_w3_v_transposed_r3",
        "tile_update",
        "def tile_update(m, total, acc, scores, v):\n    m_new = np.maximum(m, scores.max(axis=-1))\n    alpha = np.exp(m - m_new)\n    p = np.exp(scores - m_new[..., None])\n    total_new = alpha * total + p.sum(axis=-1)\n    acc_new = alpha[..., None] * acc + (v.swapaxes(-1, -2) @ p.swapaxes(-1, -2))\n    return m_new, total_new, acc_new\n",
        "came out transposed",  # round 3: was not specific
    ),
    (
        "8.3_w11_alpha_on_new_terms_too_r3",
        "tile_update",
        "def tile_update(m, total, acc, scores, v):\n    m_new = np.maximum(m, scores.max(axis=-1))\n    alpha = np.exp(m - m_new)\n    p = np.exp(scores - m_new[..., None])\n    total_new = alpha * total + p.sum(axis=-1)\n    acc_new = alpha[..., None] * (acc + p @ v)\n    return m_new, total_new, acc_new\n",
        "new tile's term by alpha",  # round 3: was not specific
    ),
    (
        "8.4_w11_k_v_swapped_in_cache_r3",
        "kv_step",
        "def kv_step(q, k, v, k_cache, v_cache):\n    k_cache = torch.cat([k_cache, v], dim=-2)\n    v_cache = torch.cat([v_cache, k], dim=-2)\n    scores = q @ k_cache.transpose(-2, -1) / math.sqrt(q.shape[-1])\n    out = torch.softmax(scores, dim=-1) @ v_cache\n    return out, k_cache, v_cache\n",
        "into the value cache",  # round 3: was not specific
    ),
    (
        "8.4_w13_operands_swapped_k_at_q_r3",
        "kv_step",
        "def kv_step(q, k, v, k_cache, v_cache):\n    k_cache = torch.cat([k_cache, k], dim=-2)\n    v_cache = torch.cat([v_cache, v], dim=-2)\n    scores = k_cache @ q.transpose(-2, -1) / math.sqrt(q.shape[-1])\n    out = (torch.softmax(scores, dim=-1).transpose(-2, -1)) @ v_cache\n    return out, k_cache, v_cache\n",
        "keys times query",  # round 3: was not specific
    ),
    (
        "8.4_w14_float64_output_r3",
        "kv_step",
        "def kv_step(q, k, v, k_cache, v_cache):\n    k_cache = torch.cat([k_cache, k], dim=-2)\n    v_cache = torch.cat([v_cache, v], dim=-2)\n    scores = q @ k_cache.transpose(-2, -1) / math.sqrt(q.shape[-1])\n    out = torch.softmax(scores.double(), dim=-1) @ v_cache.double()\n    return out, k_cache, v_cache\n",
        "keep the input's dtype",  # round 3: was not specific
    ),
    (
        "8.5_w13_float64_output_r3",
        "gqa",
        "def gqa(q, k, v):\n    n = q.shape[1] // k.shape[1]\n    k = k.repeat_interleave(n, dim=1)\n    v = v.repeat_interleave(n, dim=1)\n    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)\n    return w.double() @ v.double()\n",
        "keep the input's dtype",  # round 3: was not specific
    ),
    (
        "8.6-8_7_w12_head_size_from_kv_heads_r3",
        "gqa_module",
        'class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_kv_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, d_model // n_heads * n_kv_heads)\n        self.W_v = nn.Linear(d_model, d_model // n_heads * n_kv_heads)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, -1).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.G, -1).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.G, -1).transpose(1, 2)\n        k = k.repeat_interleave(self.H // self.G, dim=1)\n        v = v.repeat_interleave(self.H // self.G, dim=1)\n        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            scores = scores.masked_fill(~mask, float("-inf"))\n        weights = torch.softmax(scores, dim=-1)\n        out = (weights @ v).transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), weights\n',
        "n_kv_heads)",  # round 3: was not specific
    ),
    (
        "8.6-8_7_w14_kv_viewed_with_h_heads_r3",
        "gqa_module",
        'class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.H, -1).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.H, -1).transpose(1, 2)\n        k = k\n        v = v\n        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            scores = scores.masked_fill(~mask, float("-inf"))\n        weights = torch.softmax(scores, dim=-1)\n        out = (weights @ v).transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), weights\n',
        "features per head",  # round 3: was not specific
    ),
    (
        "8.9_w5_above_incl_diag_wrong_formula_r3",
        "causal_tiles",
        "answer = 8 * 7 // 2 + 1\n",
        "diagonal as one tile",  # round 3: was not specific
    ),
    (
        "8.8_w7_bits_r3",
        "cache_memory",
        "answer = 2 * 24 * 4 * 64 * 2048 * 16 / 2**20\n",
        "bits, not bytes",  # round 3: was not specific
    ),
    (
        "8.8_w2_forgot_k_and_v_r3",
        "cache_memory",
        "answer = 24 * 4 * 64 * 2048 * 2 / 2**20\n",
        "keys or the values alone",  # round 3: was not specific
    ),
    (
        "8.9_w4_diag_only_r3",
        "causal_tiles",
        "answer = 8\n",
        "every tile below the diagonal",  # round 3: was not specific
    ),
    (
        "8.9_w1_strictly_below_r3",
        "causal_tiles",
        "answer = 28\n",
        "tiles on the diagonal",  # round 3: was not specific
    ),
    (
        "8.2_r4_max_of_first_block_only",
        "online_softmax",
        "def online_softmax(x: np.ndarray, block_size: int) -> np.ndarray:\n    m = x[..., :block_size].max(-1)\n    m = np.where(np.isneginf(m), 0.0, m)\n    total = np.zeros(x.shape[:-1])\n    for s in range(0, x.shape[-1], block_size):\n        total = total + np.exp(x[..., s:s + block_size] - m[..., None]).sum(-1)\n    out = np.exp(x - m[..., None])\n    return np.divide(out, total[..., None], out=np.zeros_like(out), where=total[..., None] > 0)\n",
        "fixed by the first block and never updated",  # round 4: was accepted
    ),
    (
        "8.2_r4_no_blocks_at_all",
        "online_softmax",
        "def online_softmax(x: np.ndarray, block_size: int) -> np.ndarray:\n    m = x.max(-1, keepdims=True)\n    m = np.where(np.isneginf(m), 0.0, m)\n    e = np.exp(x - m)\n    t = e.sum(-1, keepdims=True)\n    return np.divide(e, t, out=np.zeros_like(e), where=t > 0)\n",
        "not block by block",  # round 4: was accepted
    ),
    (
        "8.2_r4_block_index_as_start",
        "online_softmax",
        "def online_softmax(x: np.ndarray, block_size: int) -> np.ndarray:\n    m = np.full(x.shape[:-1], -np.inf)\n    total = np.zeros(x.shape[:-1])\n    nb = -(-x.shape[-1] // block_size)\n    for s in range(nb):\n        b = x[..., s:s + block_size]\n        m_new = np.maximum(m, b.max(-1))\n        safe = np.where(np.isneginf(m_new), 0.0, m_new)\n        total = total * np.exp(m - safe) + np.exp(b - safe[..., None]).sum(-1)\n        m = m_new\n    safe = np.where(np.isneginf(m), 0.0, m)\n    out = np.exp(x - safe[..., None])\n    return np.divide(out, total[..., None], out=np.zeros_like(out), where=total[..., None] > 0)\n",
        "each block's number used as its start",  # round 4: was generic
    ),
    (
        "8.3_r4_normalised_inside",
        "tile_update",
        "def tile_update(m, total, acc, scores, v):\n    m_new = np.maximum(m, scores.max(-1))\n    alpha = np.exp(m - m_new)\n    p = np.exp(scores - m_new[..., None])\n    total_new = alpha * total + p.sum(-1)\n    acc_new = (alpha[..., None] * acc * total[..., None] + p @ v) / total_new[..., None]\n    return m_new, total_new, acc_new\n",
        "a running average",  # round 4: was generic
    ),
    (
        "8.3_r4_alpha_flipped_guarded",
        "tile_update",
        "def tile_update(m, total, acc, scores, v):\n    m_new = np.maximum(m, scores.max(-1))\n    alpha = np.exp(np.where(np.isinf(m), -np.inf, m_new - m))\n    p = np.exp(scores - m_new[..., None])\n    total_new = alpha * total + p.sum(-1)\n    acc_new = alpha[..., None] * acc + p @ v\n    return m_new, total_new, acc_new\n",
        "exp(m' - m), the wrong way round",  # round 4: was generic
    ),
    (
        "8.6_r4_kv_head_size_D_over_G",
        "gqa_module",
        'class MyGroupedQueryAttention(nn.Module):\n    """Self-attention: n_heads query heads share n_kv_heads key-value heads."""\n\n    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:\n        super().__init__()\n        self.n_heads, self.n_kv_heads = n_heads, n_kv_heads\n        self.d = d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.n_heads, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.n_kv_heads, D // self.n_kv_heads).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.n_kv_heads, D // self.n_kv_heads).transpose(1, 2)\n        k = k.repeat_interleave(self.n_heads // self.n_kv_heads, dim=1)\n        v = v.repeat_interleave(self.n_heads // self.n_kv_heads, dim=1)\n        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            scores = scores.masked_fill(~mask, float(\'-inf\'))\n        w = torch.softmax(scores, dim=-1)\n        o = w @ v\n        merged = o.transpose(1, 2).reshape(B, T, D)\n        return self.W_o(merged), w\n',
        "d = d_model / n_heads",  # round 4: was generic
    ),
    (
        "8.1_r5_no_rescale",
        "online_update",
        "def online_update(m, total, block):\n    m_new = np.maximum(m, block.max(axis=-1))\n    return m_new, total + np.exp(block - m_new[..., None]).sum(axis=-1)\n",
        "you did not rescale the old sum: when th",  # learner: S
    ),
    (
        "8.1_r5_inverted_rescale",
        "online_update",
        "def online_update(m, total, block):\n    m_new = np.maximum(m, block.max(axis=-1))\n    return m_new, total * np.exp(m_new - m) + np.exp(block - m_new[..., None]).sum(axis=-1)\n",
        "you rescaled the old sum by exp(m' - m),",  # learner: S
    ),
    (
        "8.1_r5_np_max_axis0",
        "online_update",
        "def online_update(m, total, block):\n    m_new = np.maximum(m, np.max(block, axis=0))\n    return m_new, total * np.exp(m - m_new) + np.exp(block - m_new).sum(axis=-1)\n",
        "a reduction runs along axis 0 (down the ",  # learner: S
    ),
    (
        "8.1_r5_block_max_only",
        "online_update",
        "def online_update(m, total, block):\n    m_new = block.max(axis=-1)\n    return m_new, total * np.exp(m - m_new) + np.exp(block - m_new[..., None]).sum(axis=-1)\n",
        "your m is the block's max alone; the run",  # learner: S
    ),
    (
        "8.1_r5_old_m_for_block",
        "online_update",
        "def online_update(m, total, block):\n    m_new = np.maximum(m, block.max(axis=-1))\n    return m_new, total * np.exp(m - m_new) + np.exp(block - m[..., None]).sum(axis=-1)\n",
        "you exponentiated the new block against ",  # learner: S
    ),
    (
        "8.1_r5_no_keepdims_bcast",
        "online_update",
        "def online_update(m, total, block):\n    m_new = np.maximum(m, block.max(axis=-1))\n    return m_new, total * np.exp(m - m_new) + np.exp(block - m_new).sum(axis=-1)\n",
        "a (rows, keys) array, shape (3,4), met a",  # learner: S
    ),
    (
        "8.1_r5_swapped_return",
        "online_update",
        "def online_update(m, total, block):\n    m_new = np.maximum(m, block.max(axis=-1))\n    return total * np.exp(m - m_new) + np.exp(block - m_new[..., None]).sum(axis=-1), m_new\n",
        "the outputs are returned in the wrong or",  # learner: S
    ),
    (
        "8.1_r5_torch",
        "online_update",
        "def online_update(m, total, block):\n    m, total, block = torch.as_tensor(m), torch.as_tensor(total), torch.as_tensor(block)\n    m_new = torch.maximum(m, block.amax(dim=-1))\n    return m_new, total * torch.exp(m - m_new) + torch.exp(block - m_new[..., None]).sum(dim=-1)\n",
        "this exercise is in NumPy: compute with ",  # learner: S
    ),
    (
        "8.1_r5_mutates_in_place",
        "online_update",
        "def online_update(m, total, block):\n    m_new = np.maximum(m, block.max(axis=-1))\n    total *= np.exp(m - m_new)\n    total += np.exp(block - m_new[..., None]).sum(axis=-1)\n    return m_new, total\n",
        "the caller's array changed: an in-place ",  # learner: S
    ),
    (
        "8.1_r5_exp_minus_sum",
        "online_update",
        "def online_update(m, total, block):\n    m_new = np.maximum(m, block.max(axis=-1))\n    return m_new, total * np.exp(m - m_new) + np.exp(block.sum(axis=-1) - m_new)\n",
        "you exponentiated the sum of the block's",  # learner: S
    ),
    (
        "8.2_r5_nan_allmasked",
        "online_softmax",
        "def online_softmax(x, block_size):\n    m = np.full(x.shape[:-1], -np.inf); total = np.zeros(x.shape[:-1])\n    for s in range(0, x.shape[-1], block_size):\n        b = x[..., s:s+block_size]\n        mn = np.maximum(m, b.max(-1))\n        total = total * np.exp(m - mn) + np.exp(b - mn[..., None]).sum(-1)\n        m = mn\n    return np.exp(x - m[..., None]) / total[..., None]\n",
        "NaN in a row that starts with masked blo",  # learner: S
    ),
    (
        "8.2_r5_div_zero_nan_end",
        "online_softmax",
        "def online_softmax(x, block_size):\n    m = np.full(x.shape[:-1], -np.inf); total = np.zeros(x.shape[:-1])\n    for s in range(0, x.shape[-1], block_size):\n        b = x[..., s:s+block_size]\n        mn = np.maximum(m, b.max(-1))\n        safe = np.where(np.isneginf(mn), 0.0, mn)\n        total = total * np.exp(m - safe) + np.exp(b - safe[..., None]).sum(-1)\n        m = mn\n    safe = np.where(np.isneginf(m), 0.0, m)\n    return np.exp(x - safe[..., None]) / total[..., None]\n",
        "a row with no visible score gives 0/0 = ",  # learner: S
    ),
    (
        "8.2_r5_skip_last_block",
        "online_softmax",
        "def online_softmax(x, block_size):\n    n = x.shape[-1]\n    m = np.full(x.shape[:-1], -np.inf); total = np.zeros(x.shape[:-1])\n    for s in range(0, n - block_size + 1, block_size):\n        b = x[..., s:s+block_size]\n        mn = np.maximum(m, b.max(-1))\n        safe = np.where(np.isneginf(mn), 0.0, mn)\n        total = total * np.exp(m - safe) + np.exp(b - safe[..., None]).sum(-1)\n        m = mn\n    safe = np.where(np.isneginf(m), 0.0, m)\n    out = np.exp(x - safe[..., None])\n    return np.divide(out, total[..., None], out=np.zeros_like(out), where=total[..., None] > 0)\n",
        "your loop leaves out the last, shorter b",  # learner: S
    ),
    (
        "8.2_r5_nan_to_num",
        "online_softmax",
        'def online_softmax(x, block_size):\n    m = np.full(x.shape[:-1], -np.inf); total = np.zeros(x.shape[:-1])\n    with np.errstate(all="ignore"):\n        for s in range(0, x.shape[-1], block_size):\n            b = x[..., s:s+block_size]\n            mn = np.maximum(m, b.max(-1))\n            total = total * np.exp(m - mn) + np.exp(b - mn[..., None]).sum(-1)\n            m = mn\n        out = np.exp(x - m[..., None]) / total[..., None]\n    return np.nan_to_num(out)\n',
        "a row that starts with masked blocks com",  # learner: S
    ),
    (
        "8.2_r5_final_blockmax",
        "online_softmax",
        "def online_softmax(x, block_size):\n    m = np.full(x.shape[:-1], -np.inf); total = np.zeros(x.shape[:-1])\n    for s in range(0, x.shape[-1], block_size):\n        b = x[..., s:s+block_size]\n        bm = b.max(-1)\n        mn = np.maximum(m, bm)\n        safe = np.where(np.isneginf(mn), 0.0, mn)\n        total = total * np.exp(m - safe) + np.exp(b - safe[..., None]).sum(-1)\n        m = mn\n    last = np.where(np.isneginf(bm), 0.0, bm)\n    out = np.exp(x - last[..., None])\n    return np.divide(out, total[..., None], out=np.zeros_like(out), where=total[..., None] > 0)\n",
        "you used the last block's max for the we",  # learner: S
    ),
    (
        "8.2_r5_total_init_one",
        "online_softmax",
        "def online_softmax(x, block_size):\n    m = np.full(x.shape[:-1], -np.inf); total = np.ones(x.shape[:-1])\n    for s in range(0, x.shape[-1], block_size):\n        b = x[..., s:s+block_size]\n        mn = np.maximum(m, b.max(-1))\n        safe = np.where(np.isneginf(mn), 0.0, mn)\n        total = total * np.exp(np.where(np.isneginf(m), 0.0, m) - safe) + np.exp(b - safe[..., None]).sum(-1)\n        m = mn\n    safe = np.where(np.isneginf(m), 0.0, m)\n    out = np.exp(x - safe[..., None])\n    return np.divide(out, total[..., None], out=np.zeros_like(out), where=total[..., None] > 0)\n",
        "your running sum starts at 1, not at 0: ",  # round 5: was generic
    ),
    (
        "8.2_r5_uniform_masked_rows",
        "online_softmax",
        "def online_softmax(x, block_size):\n    m = np.full(x.shape[:-1], -np.inf); total = np.zeros(x.shape[:-1])\n    for s in range(0, x.shape[-1], block_size):\n        b = x[..., s:s+block_size]\n        mn = np.maximum(m, b.max(-1))\n        safe = np.where(np.isneginf(mn), 0.0, mn)\n        total = total * np.exp(m - safe) + np.exp(b - safe[..., None]).sum(-1)\n        m = mn\n    safe = np.where(np.isneginf(m), 0.0, m)\n    out = np.exp(x - safe[..., None])\n    res = np.divide(out, total[..., None], out=np.zeros_like(out), where=total[..., None] > 0)\n    dead = total == 0\n    res[dead] = 1.0 / x.shape[-1]\n    return res\n",
        "a row with no visible score (all -inf) m",  # learner: S
    ),
    (
        "8.2_r5_only_first_block_guard",
        "online_softmax",
        "def online_softmax(x, block_size):\n    m = np.full(x.shape[:-1], -np.inf); total = np.zeros(x.shape[:-1])\n    for s in range(0, x.shape[-1], block_size):\n        b = x[..., s:s+block_size]\n        mn = np.maximum(m, b.max(-1))\n        safe = np.where(np.isneginf(mn), 0.0, mn)\n        total = total * np.exp(np.where(np.isneginf(m), 0.0, m) - safe) + np.exp(b - safe[..., None]).sum(-1)\n    mf = x.max(-1)\n    safe = np.where(np.isneginf(mf), 0.0, mf)\n    out = np.exp(x - safe[..., None])\n    return np.divide(out, total[..., None], out=np.zeros_like(out), where=total[..., None] > 0)\n",
        "your loop computes the new max but never",  # round 5: was generic
    ),
    (
        "8.2_r5_plain_softmax",
        "online_softmax",
        "def online_softmax(x, block_size):\n    mx = x.max(-1, keepdims=True)\n    mx = np.where(np.isneginf(mx), 0.0, mx)\n    e = np.exp(x - mx)\n    s = e.sum(-1, keepdims=True)\n    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)\n",
        "the exercise is the online softmax: it r",  # learner: S
    ),
    (
        "8.3_r5_acc_not_rescaled",
        "tile_update",
        "def tile_update(m, total, acc, scores, v):\n    mn = np.maximum(m, scores.max(-1))\n    a = np.exp(m - mn); p = np.exp(scores - mn[..., None])\n    return mn, a * total + p.sum(-1), acc + p @ v\n",
        "you rescaled `total` but not acc: the ac",  # learner: S
    ),
    (
        "8.3_r5_alpha_no_none",
        "tile_update",
        "def tile_update(m, total, acc, scores, v):\n    mn = np.maximum(m, scores.max(-1))\n    a = np.exp(m - mn); p = np.exp(scores - mn[..., None])\n    return mn, a * total + p.sum(-1), a * acc + p @ v\n",
        "you multiplied acc by alpha as it is: al",  # learner: S
    ),
    (
        "8.3_r5_p_transposed",
        "tile_update",
        "def tile_update(m, total, acc, scores, v):\n    mn = np.maximum(m, scores.max(-1))\n    a = np.exp(m - mn); p = np.exp(scores - mn[..., None])\n    return mn, a * total + p.sum(-1), a[..., None] * acc + np.swapaxes(p, -1, -2) @ v\n",
        "`p` is used transposed in a product",  # learner: S
    ),
    (
        "8.3_r5_total_not_rescaled",
        "tile_update",
        "def tile_update(m, total, acc, scores, v):\n    mn = np.maximum(m, scores.max(-1))\n    a = np.exp(m - mn); p = np.exp(scores - mn[..., None])\n    return mn, total + p.sum(-1), a[..., None] * acc + p @ v\n",
        "you rescaled acc but not `total`: the ru",  # learner: S
    ),
    (
        "8.3_r5_normalised_p",
        "tile_update",
        "def tile_update(m, total, acc, scores, v):\n    mn = np.maximum(m, scores.max(-1))\n    a = np.exp(m - mn); p = np.exp(scores - mn[..., None])\n    s = p.sum(-1)\n    return mn, a * total + s, a[..., None] * acc + (p / s[..., None]) @ v\n",
        "you normalised p within the tile (p divi",  # round 5: was generic
    ),
    (
        "8.3_r5_elementwise_pv",
        "tile_update",
        "def tile_update(m, total, acc, scores, v):\n    mn = np.maximum(m, scores.max(-1))\n    a = np.exp(m - mn); p = np.exp(scores - mn[..., None])\n    return mn, a * total + p.sum(-1), a[..., None] * acc + (p[..., None] * v[..., None, :, :]).sum(-3)\n",
        "an array of 3 rows met one of 4 rows, bo",  # round 5: was generic
    ),
    (
        "8.3_r5_scales_again",
        "tile_update",
        "def tile_update(m, total, acc, scores, v):\n    scores = scores / np.sqrt(v.shape[-1])\n    mn = np.maximum(m, scores.max(-1))\n    a = np.exp(m - mn); p = np.exp(scores - mn[..., None])\n    return mn, a * total + p.sum(-1), a[..., None] * acc + p @ v\n",
        "the scores you receive are already scale",  # round 5: was misleading
    ),
    (
        "8.3_r5_torch_return",
        "tile_update",
        "def tile_update(m, total, acc, scores, v):\n    m, total, acc, scores, v = map(torch.as_tensor, (m, total, acc, scores, v))\n    mn = torch.maximum(m, scores.amax(-1))\n    a = torch.exp(m - mn); p = torch.exp(scores - mn[..., None])\n    return mn, a * total + p.sum(-1), a[..., None] * acc + p @ v\n",
        "this exercise is in NumPy: compute with ",  # learner: S
    ),
    (
        "8.3_r5_returns_output",
        "tile_update",
        "def tile_update(m, total, acc, scores, v):\n    mn = np.maximum(m, scores.max(-1))\n    a = np.exp(m - mn); p = np.exp(scores - mn[..., None])\n    t = a * total + p.sum(-1)\n    acc2 = a[..., None] * acc + p @ v\n    return mn, t, acc2 / t[..., None]\n",
        "you divided acc by the running sum insid",  # learner: S
    ),
    (
        "8.4_r5_no_scale",
        "kv_step",
        "def kv_step(q, k, v, k_cache, v_cache):\n    kc = torch.cat([k_cache, k], dim=-2); vc = torch.cat([v_cache, v], dim=-2)\n    w = torch.softmax(q @ kc.transpose(-2, -1), dim=-1)\n    return w @ vc, kc, vc\n",
        "your scores are not divided by √d: no sc",  # learner: S
    ),
    (
        "8.4_r5_prepend",
        "kv_step",
        "def kv_step(q, k, v, k_cache, v_cache):\n    kc = torch.cat([k, k_cache], dim=-2); vc = torch.cat([v, v_cache], dim=-2)\n    w = torch.softmax(q @ kc.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)\n    return w @ vc, kc, vc\n",
        "you put the new key and value first; app",  # learner: S
    ),
    (
        "8.4_r5_attend_before_append",
        "kv_step",
        "def kv_step(q, k, v, k_cache, v_cache):\n    w = torch.softmax(q @ k_cache.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)\n    out = w @ v_cache\n    return out, torch.cat([k_cache, k], dim=-2), torch.cat([v_cache, v], dim=-2)\n",
        "your query attended to the cache only: a",  # learner: S
    ),
    (
        "8.4_r5_cat_dim_minus1",
        "kv_step",
        "def kv_step(q, k, v, k_cache, v_cache):\n    kc = torch.cat([k_cache, k], dim=-1); vc = torch.cat([v_cache, v], dim=-1)\n    w = torch.softmax(q @ kc.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)\n    return w @ vc, kc, vc\n",
        "`cat` along the wrong axis: yours works ",  # learner: S
    ),
    (
        "8.4_r5_softmax_dim_minus2",
        "kv_step",
        "def kv_step(q, k, v, k_cache, v_cache):\n    kc = torch.cat([k_cache, k], dim=-2); vc = torch.cat([v_cache, v], dim=-2)\n    w = torch.softmax(q @ kc.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-2)\n    return w @ vc, kc, vc\n",
        "every weight of yours is 1, so out is th",  # learner: S
    ),
    (
        "8.4_r5_scale_by_t",
        "kv_step",
        "def kv_step(q, k, v, k_cache, v_cache):\n    kc = torch.cat([k_cache, k], dim=-2); vc = torch.cat([v_cache, v], dim=-2)\n    w = torch.softmax(q @ kc.transpose(-2, -1) / math.sqrt(kc.shape[-2]), dim=-1)\n    return w @ vc, kc, vc\n",
        "you scaled the scores by the square root",  # learner: S
    ),
    (
        "8.4_r5_return_old_cache",
        "kv_step",
        "def kv_step(q, k, v, k_cache, v_cache):\n    kc = torch.cat([k_cache, k], dim=-2); vc = torch.cat([v_cache, v], dim=-2)\n    w = torch.softmax(q @ kc.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)\n    return w @ vc, k_cache, v_cache\n",
        "you returned the old caches: return the ",  # learner: S
    ),
    (
        "8.4_r5_keys_as_values",
        "kv_step",
        "def kv_step(q, k, v, k_cache, v_cache):\n    kc = torch.cat([k_cache, k], dim=-2); vc = torch.cat([v_cache, v], dim=-2)\n    w = torch.softmax(q @ kc.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)\n    return w @ kc, kc, vc\n",
        "you used `k_cache` where `v_cache` belon",  # learner: S
    ),
    (
        "8.4_r5_causal_mask_wrong",
        "kv_step",
        'def kv_step(q, k, v, k_cache, v_cache):\n    kc = torch.cat([k_cache, k], dim=-2); vc = torch.cat([v_cache, v], dim=-2)\n    s = q @ kc.transpose(-2, -1) / math.sqrt(q.shape[-1])\n    mask = torch.tril(torch.ones(1, kc.shape[-2], dtype=torch.bool))\n    s = s.masked_fill(~mask, float("-inf"))\n    return torch.softmax(s, dim=-1) @ vc, kc, vc\n',
        "your query saw only the first key: that ",  # learner: S
    ),
    (
        "8.4_r5_numpy",
        "kv_step",
        "def kv_step(q, k, v, k_cache, v_cache):\n    q, k, v, k_cache, v_cache = (t.numpy() for t in (q, k, v, k_cache, v_cache))\n    kc = np.concatenate([k_cache, k], axis=-2); vc = np.concatenate([v_cache, v], axis=-2)\n    s = q @ np.swapaxes(kc, -1, -2) / np.sqrt(q.shape[-1])\n    w = np.exp(s - s.max(-1, keepdims=True)); w /= w.sum(-1, keepdims=True)\n    return w @ vc, kc, vc\n",
        "this exercise is in torch: compute with ",  # learner: S
    ),
    (
        "8.5_r5_repeat_tile",
        "gqa",
        "def gqa(q, k, v):\n    r = q.shape[1] // k.shape[1]\n    k = k.repeat(1, r, 1, 1); v = v.repeat(1, r, 1, 1)\n    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -1) @ v\n",
        "query head h used key-value head h % G (",  # learner: S
    ),
    (
        "8.5_r5_repeat_interleave_G",
        "gqa",
        "def gqa(q, k, v):\n    G = k.shape[1]\n    k = k.repeat_interleave(G, dim=1); v = v.repeat_interleave(G, dim=1)\n    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -1) @ v\n",
        "the query heads and your key-value heads",  # learner: S
    ),
    (
        "8.5_r5_repeat_interleave_dim0",
        "gqa",
        "def gqa(q, k, v):\n    r = q.shape[1] // k.shape[1]\n    k = k.repeat_interleave(r, dim=0); v = v.repeat_interleave(r, dim=0)\n    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -1) @ v\n",
        "the query heads and your key-value heads",  # learner: S
    ),
    (
        "8.5_r5_modulo_index",
        "gqa",
        "def gqa(q, k, v):\n    H, G = q.shape[1], k.shape[1]\n    idx = torch.arange(H) % G\n    k = k[:, idx]; v = v[:, idx]\n    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -1) @ v\n",
        "query head h used key-value head h % G (",  # learner: S
    ),
    (
        "8.5_r5_no_scale",
        "gqa",
        "def gqa(q, k, v):\n    r = q.shape[1] // k.shape[1]\n    k = k.repeat_interleave(r, dim=1); v = v.repeat_interleave(r, dim=1)\n    return torch.softmax(q @ k.transpose(-2, -1), -1) @ v\n",
        "you forgot to scale: divide the scores b",  # learner: S
    ),
    (
        "8.5_r5_scale_by_group_dim",
        "gqa",
        "def gqa(q, k, v):\n    r = q.shape[1] // k.shape[1]\n    k = k.repeat_interleave(r, dim=1); v = v.repeat_interleave(r, dim=1)\n    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1] * r), -1) @ v\n",
        "you scaled by the square root of d·H/G, ",  # round 5: was generic
    ),
    (
        "8.5_r5_softmax_dim_minus2",
        "gqa",
        "def gqa(q, k, v):\n    r = q.shape[1] // k.shape[1]\n    k = k.repeat_interleave(r, dim=1); v = v.repeat_interleave(r, dim=1)\n    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -2) @ v\n",
        "softmax over the wrong axis: each query'",  # learner: S
    ),
    (
        "8.5_r5_mean_query_heads",
        "gqa",
        "def gqa(q, k, v):\n    B, H, T, d = q.shape; G = k.shape[1]; r = H // G\n    qg = q.view(B, G, r, T, d).mean(2)\n    o = torch.softmax(qg @ k.transpose(-2, -1) / math.sqrt(d), -1) @ v\n    return o.repeat_interleave(r, dim=1)\n",
        "every head of a group got the same outpu",  # learner: S
    ),
    (
        "8.5_r5_expand_wrong_view",
        "gqa",
        "def gqa(q, k, v):\n    B, H, T, d = q.shape; G = k.shape[1]; r = H // G\n    k = k[:, None].expand(B, r, G, *k.shape[2:]).reshape(B, H, *k.shape[2:])\n    v = v[:, None].expand(B, r, G, *v.shape[2:]).reshape(B, H, *v.shape[2:])\n    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d), -1) @ v\n",
        "query head h used key-value head h % G (",  # learner: S
    ),
    (
        "8.6_r5_kv_full_width",
        "gqa_module",
        'class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, d_model)\n        self.W_v = nn.Linear(d_model, d_model)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.H, self.d).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.H, self.d).transpose(1, 2)\n        r = 1\n        k = k.repeat_interleave(r, 1); v = v.repeat_interleave(r, 1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s.masked_fill(~mask, float("-inf"))\n        w = torch.softmax(s, -1)\n        out = (w @ v).transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), w\n',
        "W_k and W_v project to the G key-value h",  # learner: S
    ),
    (
        "8.6_r5_mask_fill_true",
        "gqa_module",
        'class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)\n        r = self.H // self.G\n        k = k.repeat_interleave(r, 1); v = v.repeat_interleave(r, 1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s.masked_fill(mask, float("-inf"))\n        w = torch.softmax(s, -1)\n        out = (w @ v).transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), w\n',
        "you hid the keys where the mask is True;",  # learner: S
    ),
    (
        "8.6_r5_no_transpose_before_reshape",
        "gqa_module",
        'class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)\n        r = self.H // self.G\n        k = k.repeat_interleave(r, 1); v = v.repeat_interleave(r, 1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s.masked_fill(~mask, float("-inf"))\n        w = torch.softmax(s, -1)\n        out = (w @ v).reshape(B, T, D)\n        return self.W_o(out), w\n',
        "you merged the heads with one reshape to",  # learner: S
    ),
    (
        "8.6_r5_view_no_transpose",
        "gqa_module",
        'class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, self.H, T, self.d)\n        k = self.W_k(x).view(B, self.G, T, self.d)\n        v = self.W_v(x).view(B, self.G, T, self.d)\n        r = self.H // self.G\n        k = k.repeat_interleave(r, 1); v = v.repeat_interleave(r, 1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s.masked_fill(~mask, float("-inf"))\n        w = torch.softmax(s, -1)\n        out = (w @ v).transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), w\n',
        "you split the heads with one view/reshap",  # learner: S
    ),
    (
        "8.6_r5_repeat_tile",
        "gqa_module",
        'class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)\n        r = self.H // self.G\n        k = k.repeat(1, r, 1, 1); v = v.repeat(1, r, 1, 1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s.masked_fill(~mask, float("-inf"))\n        w = torch.softmax(s, -1)\n        out = (w @ v).transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), w\n',
        "query head h used key-value head h % G (",  # learner: S
    ),
    (
        "8.6_r5_no_bias",
        "gqa_module",
        'class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model, bias=False)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d, bias=False)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d, bias=False)\n        self.W_o = nn.Linear(d_model, d_model, bias=False)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)\n        r = self.H // self.G\n        k = k.repeat_interleave(r, 1); v = v.repeat_interleave(r, 1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s.masked_fill(~mask, float("-inf"))\n        w = torch.softmax(s, -1)\n        out = (w @ v).transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), w\n',
        "your projections have no bias (bias=Fals",  # learner: S
    ),
    (
        "8.6_r5_no_Wo",
        "gqa_module",
        'class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)\n        r = self.H // self.G\n        k = k.repeat_interleave(r, 1); v = v.repeat_interleave(r, 1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s.masked_fill(~mask, float("-inf"))\n        w = torch.softmax(s, -1)\n        out = (w @ v).transpose(1, 2).reshape(B, T, D)\n        return out, w\n',
        "you returned the concatenated heads with",  # learner: S
    ),
    (
        "8.6_r5_scale_D",
        "gqa_module",
        'class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)\n        r = self.H // self.G\n        k = k.repeat_interleave(r, 1); v = v.repeat_interleave(r, 1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(D)\n        if mask is not None:\n            s = s.masked_fill(~mask, float("-inf"))\n        w = torch.softmax(s, -1)\n        out = (w @ v).transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), w\n',
        "you scaled the scores by √d_model: the s",  # learner: S
    ),
    (
        "8.6_r5_mask_zero_fill",
        "gqa_module",
        "class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)\n        r = self.H // self.G\n        k = k.repeat_interleave(r, 1); v = v.repeat_interleave(r, 1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s.masked_fill(~mask, 0.0)\n        w = torch.softmax(s, -1)\n        out = (w @ v).transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), w\n",
        "the hidden entries are filled with 0, an",  # learner: S
    ),
    (
        "8.6_r5_mask_ignored",
        "gqa_module",
        "class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)\n        r = self.H // self.G\n        k = k.repeat_interleave(r, 1); v = v.repeat_interleave(r, 1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            pass\n        w = torch.softmax(s, -1)\n        out = (w @ v).transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), w\n",
        "you ignored the mask: set the scores whe",  # learner: S
    ),
    (
        "8.6_r5_mask_after_softmax",
        "gqa_module",
        "class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)\n        r = self.H // self.G\n        k = k.repeat_interleave(r, 1); v = v.repeat_interleave(r, 1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            pass\n        w = torch.softmax(s, -1)\n        if mask is not None:\n            w = w.masked_fill(~mask, 0.0)\n        out = (w @ v).transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), w\n",
        "you applied the mask after the softmax (",  # learner: S
    ),
    (
        "8.6_r5_weights_detached",
        "gqa_module",
        'class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)\n        r = self.H // self.G\n        k = k.repeat_interleave(r, 1); v = v.repeat_interleave(r, 1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s.masked_fill(~mask, float("-inf"))\n        w = torch.softmax(s, -1).detach()\n        out = (w @ v).transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), w\n',
        "out and weights are right but no gradien",  # round 5: was generic
    ),
    (
        "8.6_r5_modulo_heads",
        "gqa_module",
        'class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)\n        r = self.H // self.G\n        idx = torch.arange(self.H) % self.G; k = k[:, idx]; v = v[:, idx]\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s.masked_fill(~mask, float("-inf"))\n        w = torch.softmax(s, -1)\n        out = (w @ v).transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), w\n',
        "query head h used key-value head h % G (",  # learner: S
    ),
    (
        "8.8_r5_query_heads",
        "cache_memory",
        "answer = 192",
        "that is the cache with 16 key-value head",  # learner: S
    ),
    (
        "8.8_r5_keys_only",
        "cache_memory",
        "answer = 24",
        "a factor is missing: either you cached t",  # learner: S
    ),
    (
        "8.8_r5_float32",
        "cache_memory",
        "answer = 96",
        "float16 is 2 bytes per number, not 4",  # learner: S
    ),
    (
        "8.8_r5_bytes",
        "cache_memory",
        "answer = 50331648",
        "that is the size in bytes; the question ",  # learner: S
    ),
    (
        "8.8_r5_one_layer",
        "cache_memory",
        "answer = 2",
        "that is the cache of one layer: the mode",  # learner: S
    ),
    (
        "8.8_r5_MB_decimal",
        "cache_memory",
        "answer = 50.33",
        "that is the size in MB (10**6 bytes); th",  # learner: S
    ),
    (
        "8.8_r5_string",
        "cache_memory",
        "answer = '48 MiB'",
        "write the number without quotes",  # learner: S
    ),
    (
        "8.9_r5_strict_lower",
        "causal_tiles",
        "answer = 28",
        "you counted the tiles below the diagonal",  # learner: S
    ),
    (
        "8.9_r5_half",
        "causal_tiles",
        "answer = 32",
        "half of 64 cuts the diagonal tiles in tw",  # learner: S
    ),
    (
        "8.9_r5_all",
        "causal_tiles",
        "answer = 64",
        "tiles above the diagonal see only future",  # learner: S
    ),
    (
        "8.9_r5_diag_only",
        "causal_tiles",
        "answer = 8",
        "the diagonal tiles are computed, but so ",  # learner: S
    ),
    (
        "8.9_r5_float",
        "causal_tiles",
        "answer = 36.5",
        "a tile is computed whole or skipped whol",  # learner: S
    ),
    (
        "8.9_r5_upper_incl",
        "causal_tiles",
        "answer = 36 + 8",
        "that counts the 8 diagonal tiles twice (",  # round 5: was generic
    ),
    (
        "8.1_r5_npmax_two_args",
        "online_update",
        "def online_update(m, total, block):\n    m_new = np.max(m, block.max(axis=-1))\n    return m_new, total * np.exp(m - m_new) + np.exp(block - m_new[..., None]).sum(axis=-1)\n",
        "np.max(a, b) reads its second argument a",  # learner: S
    ),
    (
        "8.1_r5_global_blockmax",
        "online_update",
        "def online_update(m, total, block):\n    m_new = np.maximum(m, block.max())\n    return m_new, total * np.exp(m - m_new) + np.exp(block - m_new[..., None]).sum(axis=-1)\n",
        "`max` without an axis reduces the whole ",  # learner: S
    ),
    (
        "8.1_r5_axis1_hardcoded",
        "online_update",
        "def online_update(m, total, block):\n    m_new = np.maximum(m, block.max(axis=1))\n    return m_new, total * np.exp(m - m_new) + np.exp(block - m_new[..., None]).sum(axis=1)\n",
        "`max` along the wrong axis: yours works ",  # learner: S
    ),
    (
        "8.1_r5_row_loop_2d",
        "online_update",
        "def online_update(m, total, block):\n    m_new = np.empty_like(m); t_new = np.empty_like(total)\n    for i in range(len(m)):\n        m_new[i] = max(m[i], block[i].max())\n        t_new[i] = total[i] * math.exp(m[i] - m_new[i]) + np.exp(block[i] - m_new[i]).sum()\n    return m_new, t_new\n",
        "your loop over the rows (m[i], block[i])",  # learner: S
    ),
    (
        "8.1_r5_sum_then_exp_max",
        "online_update",
        "def online_update(m, total, block):\n    bmax = block.max(axis=-1)\n    m_new = np.maximum(m, bmax)\n    return m_new, total * np.exp(m - bmax) + np.exp(block - m_new[..., None]).sum(axis=-1)\n",
        "you rescaled the old sum by exp(m - max(",  # round 5: was generic
    ),
    (
        "8.2_r5_slice_off_by_one",
        "online_softmax",
        "def online_softmax(x, block_size):\n    m = np.full(x.shape[:-1], -np.inf); total = np.zeros(x.shape[:-1])\n    for s in range(0, x.shape[-1], block_size):\n        b = x[..., s:s+block_size-1]\n        if b.shape[-1] == 0: continue\n        mn = np.maximum(m, b.max(-1))\n        safe = np.where(np.isneginf(mn), 0.0, mn)\n        total = total * np.exp(m - safe) + np.exp(b - safe[..., None]).sum(-1)\n        m = mn\n    safe = np.where(np.isneginf(m), 0.0, m)\n    out = np.exp(x - safe[..., None])\n    return np.divide(out, total[..., None], out=np.zeros_like(out), where=total[..., None] > 0)\n",
        "your blocks leave out one score each (a ",  # learner: S
    ),
    (
        "8.2_r5_first_block_ref",
        "online_softmax",
        "def online_softmax(x, block_size):\n    ref = x[..., :block_size].max(-1)\n    ref = np.where(np.isneginf(ref), 0.0, ref)\n    total = np.zeros(x.shape[:-1])\n    for s in range(0, x.shape[-1], block_size):\n        total = total + np.exp(x[..., s:s+block_size] - ref[..., None]).sum(-1)\n    out = np.exp(x - ref[..., None])\n    return np.divide(out, total[..., None], out=np.zeros_like(out), where=total[..., None] > 0)\n",
        "your reference max is fixed by the first",  # learner: S
    ),
    (
        "8.2_r5_replace_neginf_big",
        "online_softmax",
        "def online_softmax(x, block_size):\n    x = np.where(np.isneginf(x), -1e30, x)\n    m = np.full(x.shape[:-1], -np.inf); total = np.zeros(x.shape[:-1])\n    for s in range(0, x.shape[-1], block_size):\n        b = x[..., s:s+block_size]\n        mn = np.maximum(m, b.max(-1))\n        total = total * np.exp(m - mn) + np.exp(b - mn[..., None]).sum(-1)\n        m = mn\n    return np.exp(x - m[..., None]) / total[..., None]\n",
        "a row with no visible score (all -inf) m",  # learner: S
    ),
    (
        "8.2_r5_inplace_x",
        "online_softmax",
        "def online_softmax(x, block_size):\n    dead = np.isneginf(x).all(-1)\n    m = np.full(x.shape[:-1], -np.inf); total = np.zeros(x.shape[:-1])\n    for s in range(0, x.shape[-1], block_size):\n        b = x[..., s:s+block_size]\n        mn = np.maximum(m, b.max(-1))\n        safe = np.where(np.isneginf(mn), 0.0, mn)\n        total = total * np.exp(m - safe) + np.exp(b - safe[..., None]).sum(-1)\n        m = mn\n    safe = np.where(np.isneginf(m), 0.0, m)\n    x -= safe[..., None]\n    np.exp(x, out=x)\n    x[~dead] /= total[~dead][..., None]\n    return x\n",
        "the caller's array changed: an in-place ",  # learner: S
    ),
    (
        "8.2_r5_guard_minus1e9_rescale",
        "online_softmax",
        "def online_softmax(x, block_size):\n    m = np.full(x.shape[:-1], -np.inf); total = np.zeros(x.shape[:-1])\n    for s in range(0, x.shape[-1], block_size):\n        b = x[..., s:s+block_size]\n        mn = np.maximum(m, b.max(-1))\n        total = total * np.exp(np.where(np.isneginf(m), -1e9, m) - mn) + np.exp(b - mn[..., None]).sum(-1)\n        m = mn\n    safe = np.where(np.isneginf(m), 0.0, m)\n    out = np.exp(x - safe[..., None])\n    return np.divide(out, total[..., None], out=np.zeros_like(out), where=total[..., None] > 0)\n",
        "a row that starts with masked blocks com",  # round 5: was generic
    ),
    (
        "8.3_r5_old_m_for_p",
        "tile_update",
        "def tile_update(m, total, acc, scores, v):\n    mn = np.maximum(m, scores.max(-1))\n    a = np.exp(m - mn); p = np.exp(scores - np.where(np.isneginf(m), mn, m)[..., None])\n    return mn, a * total + p.sum(-1), a[..., None] * acc + p @ v\n",
        "you exponentiated this tile against the ",  # learner: S
    ),
    (
        "8.3_r5_alpha_on_pv",
        "tile_update",
        "def tile_update(m, total, acc, scores, v):\n    mn = np.maximum(m, scores.max(-1))\n    a = np.exp(m - mn); p = np.exp(scores - mn[..., None])\n    return mn, a * total + p.sum(-1), acc + a[..., None] * (p @ v)\n",
        "you put alpha on this tile's p·v instead",  # round 5: was misleading
    ),
    (
        "8.3_r5_inplace_acc",
        "tile_update",
        "def tile_update(m, total, acc, scores, v):\n    mn = np.maximum(m, scores.max(-1))\n    a = np.exp(m - mn); p = np.exp(scores - mn[..., None])\n    acc *= a[..., None]\n    acc += p @ v\n    return mn, a * total + p.sum(-1), acc\n",
        "the caller's array changed: an in-place ",  # learner: S
    ),
    (
        "8.3_r5_axis0_max",
        "tile_update",
        "def tile_update(m, total, acc, scores, v):\n    mn = np.maximum(m, scores.max(axis=0))\n    a = np.exp(m - mn); p = np.exp(scores - mn[..., None])\n    return mn, a * total + p.sum(-1), a[..., None] * acc + p @ v\n",
        "two vectors of different lengths met (3 ",  # learner: S
    ),
    (
        "8.3_r5_total_sum_axis0",
        "tile_update",
        "def tile_update(m, total, acc, scores, v):\n    mn = np.maximum(m, scores.max(-1))\n    a = np.exp(m - mn); p = np.exp(scores - mn[..., None])\n    return mn, a * total + p.sum(-2), a[..., None] * acc + p @ v\n",
        "two vectors of different lengths met (3 ",  # learner: S
    ),
    (
        "8.4_r5_cat_heads",
        "kv_step",
        "def kv_step(q, k, v, k_cache, v_cache):\n    kc = torch.cat([k_cache, k], dim=1); vc = torch.cat([v_cache, v], dim=1)\n    w = torch.softmax(q @ kc.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)\n    return w @ vc, kc, vc\n",
        "`cat` along the wrong axis: yours works ",  # learner: S
    ),
    (
        "8.4_r5_stack",
        "kv_step",
        "def kv_step(q, k, v, k_cache, v_cache):\n    kc = torch.stack([k_cache, k], dim=-2); vc = torch.stack([v_cache, v], dim=-2)\n    w = torch.softmax(q @ kc.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)\n    return w @ vc, kc, vc\n",
        "torch.stack puts tensors side by side on",  # round 5: was misleading
    ),
    (
        "8.4_r5_squeeze_out",
        "kv_step",
        "def kv_step(q, k, v, k_cache, v_cache):\n    kc = torch.cat([k_cache, k], dim=-2); vc = torch.cat([v_cache, v], dim=-2)\n    w = torch.softmax(q @ kc.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)\n    return (w @ vc).squeeze(-2), kc, vc\n",
        "your `out` has lost an axis, the one of ",  # learner: S
    ),
    (
        "8.4_r5_mul_scale",
        "kv_step",
        "def kv_step(q, k, v, k_cache, v_cache):\n    kc = torch.cat([k_cache, k], dim=-2); vc = torch.cat([v_cache, v], dim=-2)\n    w = torch.softmax(q @ kc.transpose(-2, -1) * math.sqrt(q.shape[-1]), dim=-1)\n    return w @ vc, kc, vc\n",
        "you multiplied by `math.sqrt(q.shape[-1]",  # learner: S
    ),
    (
        "8.4_r5_float64",
        "kv_step",
        "def kv_step(q, k, v, k_cache, v_cache):\n    kc = torch.cat([k_cache, k], dim=-2).double(); vc = torch.cat([v_cache, v], dim=-2).double()\n    w = torch.softmax(q.double() @ kc.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)\n    return w @ vc, kc, vc\n",
        "the output must keep the input's dtype: ",  # learner: S
    ),
    (
        "8.4_r5_kT_dot",
        "kv_step",
        "def kv_step(q, k, v, k_cache, v_cache):\n    kc = torch.cat([k_cache, k], dim=-2); vc = torch.cat([v_cache, v], dim=-2)\n    w = torch.softmax(q @ kc.T / math.sqrt(q.shape[-1]), dim=-1)\n    return w @ vc, kc, vc\n",
        "`k_cache.T` reverses every axis of a bat",  # learner: S
    ),
    (
        "8.5_r5_only_k_repeated",
        "gqa",
        "def gqa(q, k, v):\n    r = q.shape[1] // k.shape[1]\n    k = k.repeat_interleave(r, dim=1)\n    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -1) @ v\n",
        "the query heads and your key-value heads",  # round 5: was generic
    ),
    (
        "8.5_r5_k_interleave_v_tile",
        "gqa",
        "def gqa(q, k, v):\n    r = q.shape[1] // k.shape[1]\n    k = k.repeat_interleave(r, dim=1); v = v.repeat(1, r, 1, 1)\n    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -1) @ v\n",
        "keys and values were expanded in two dif",  # learner: S
    ),
    (
        "8.5_r5_scale_by_S",
        "gqa",
        "def gqa(q, k, v):\n    r = q.shape[1] // k.shape[1]\n    k = k.repeat_interleave(r, dim=1); v = v.repeat_interleave(r, dim=1)\n    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2]), -1) @ v\n",
        "you scaled by the square root of S, the ",  # learner: S
    ),
    (
        "8.5_r5_no_repeat",
        "gqa",
        "def gqa(q, k, v):\n    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -1) @ v\n",
        "the query heads and your key-value heads",  # learner: S
    ),
    (
        "8.5_r5_group_view_wrong_order",
        "gqa",
        "def gqa(q, k, v):\n    B, H, T, d = q.shape; G = k.shape[1]\n    qg = q.reshape(B, H // G, G, T, d)\n    o = torch.softmax(qg @ k[:, None].transpose(-2, -1) / d ** 0.5, -1) @ v[:, None]\n    return o.reshape(B, H, T, d)\n",
        "query head h used key-value head h % G (",  # learner: S
    ),
    (
        "8.5_r5_numpy_softmax",
        "gqa",
        "def gqa(q, k, v):\n    r = q.shape[1] // k.shape[1]\n    k = k.repeat_interleave(r, dim=1).numpy(); v = v.repeat_interleave(r, dim=1).numpy(); q = q.numpy()\n    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])\n    w = np.exp(s - s.max(-1, keepdims=True)); w /= w.sum(-1, keepdims=True)\n    return w @ v\n",
        "this exercise is in torch: compute with ",  # learner: S
    ),
    (
        "8.6_r5_kv_out_G",
        "gqa_module",
        'class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads)\n        self.W_v = nn.Linear(d_model, n_kv_heads)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)\n        r = self.H // self.G\n        k = k.repeat_interleave(r, 1); v = v.repeat_interleave(r, 1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s.masked_fill(~mask, float("-inf"))\n        w = torch.softmax(s, -1)\n        out = (w @ v).transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), w\n',
        "W_k and W_v project to the G key-value h",  # learner: S
    ),
    (
        "8.6_r5_mask_unsqueeze1",
        "gqa_module",
        'class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)\n        r = self.H // self.G\n        k = k.repeat_interleave(r, 1); v = v.repeat_interleave(r, 1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s.masked_fill(~mask.unsqueeze(1), float("-inf"))\n        w = torch.softmax(s, -1)\n        out = (w @ v).transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), w\n',
        "the mask line fails, not the heads: mask",  # round 5: was misleading
    ),
    (
        "8.6_r5_return_scores",
        "gqa_module",
        'class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)\n        r = self.H // self.G\n        k = k.repeat_interleave(r, 1); v = v.repeat_interleave(r, 1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s.masked_fill(~mask, float("-inf"))\n        w = torch.softmax(s, -1)\n        out = (w @ v).transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), s\n',
        "your `weights` are the scores before the",  # learner: S
    ),
    (
        "8.6_r5_weights_head_mean",
        "gqa_module",
        'class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)\n        r = self.H // self.G\n        k = k.repeat_interleave(r, 1); v = v.repeat_interleave(r, 1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s.masked_fill(~mask, float("-inf"))\n        w = torch.softmax(s, -1)\n        out = (w @ v).transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), w.mean(1)\n',
        "your `weights` has lost an axis, the one",  # learner: S
    ),
    (
        "8.6_r5_softmax_dim2",
        "gqa_module",
        'class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)\n        r = self.H // self.G\n        k = k.repeat_interleave(r, 1); v = v.repeat_interleave(r, 1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s.masked_fill(~mask, float("-inf"))\n        w = torch.softmax(s, -2)\n        out = (w @ v).transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), w\n',
        "the softmax runs over the queries (dim=-",  # learner: S
    ),
    (
        "8.6_r5_kv_from_wq",
        "gqa_module",
        'class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)\n        v = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)\n        r = self.H // self.G\n        k = k.repeat_interleave(r, 1); v = v.repeat_interleave(r, 1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s.masked_fill(~mask, float("-inf"))\n        w = torch.softmax(s, -1)\n        out = (w @ v).transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), w\n',
        "you used `self.W_k` where `self.W_v` bel",  # learner: S
    ),
    (
        "8.6_r5_d_from_G",
        "gqa_module",
        'class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, d_model // n_kv_heads)\n        self.W_v = nn.Linear(d_model, d_model // n_kv_heads)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)\n        r = self.H // self.G\n        k = k.repeat_interleave(r, 1); v = v.repeat_interleave(r, 1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s.masked_fill(~mask, float("-inf"))\n        w = torch.softmax(s, -1)\n        out = (w @ v).transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), w\n',
        "W_k and W_v project to the G key-value h",  # learner: S
    ),
    (
        "8.8_r5_keys_only_numbers",
        "cache_memory",
        "answer = 12",
        "that is a quarter of the cache, and two ",  # round 5: was misleading
    ),
    (
        "8.8_r5_GiB",
        "cache_memory",
        "answer = 0.046875",
        "that is the size in GiB (2**30 bytes); t",  # learner: S
    ),
    (
        "8.8_r5_dmodel_kv",
        "cache_memory",
        "answer = 768",
        "that stores d_model = 16 · 64 = 1024 num",  # round 5: was generic
    ),
    (
        "8.9_r5_64_minus_8",
        "causal_tiles",
        "answer = 56",
        "that is every tile but the diagonal; the",  # learner: S
    ),
    (
        "8.9_r5_plus_one",
        "causal_tiles",
        "answer = 37",
        "one too many: count the tiles row of til",  # learner: S
    ),
    (
        "8.9_r5_string36",
        "causal_tiles",
        "answer = '36'",
        "write the number without quotes",  # learner: S
    ),
    (
        "8.1_r5_float32",
        "online_update",
        "def online_update(m, total, block):\n    block = block.astype(np.float32)\n    m_new = np.maximum(m, block.max(axis=-1))\n    return m_new, total * np.exp(m - m_new) + np.exp(block - m_new[..., None]).sum(axis=-1)\n",
        "a precision problem: your values agree w",  # learner: S
    ),
    (
        "8.3_r5_v_transposed",
        "tile_update",
        "def tile_update(m, total, acc, scores, v):\n    mn = np.maximum(m, scores.max(-1))\n    a = np.exp(m - mn); p = np.exp(scores - mn[..., None])\n    return mn, a * total + p.sum(-1), a[..., None] * acc + p @ np.swapaxes(v, -1, -2)\n",
        "`v` is used transposed in a product",  # learner: S
    ),
    (
        "8.3_r5_alpha_squared",
        "tile_update",
        "def tile_update(m, total, acc, scores, v):\n    mn = np.maximum(m, scores.max(-1))\n    a = np.exp(m - mn); p = np.exp(scores - mn[..., None])\n    return mn, a * total + p.sum(-1), (a ** 2)[..., None] * acc + p @ v\n",
        "you multiplied acc by alpha twice (alpha",  # round 5: was generic
    ),
    (
        "8.6_r5_view_noncontig",
        "gqa_module",
        'class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)\n        r = self.H // self.G\n        k = k.repeat_interleave(r, 1); v = v.repeat_interleave(r, 1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s.masked_fill(~mask, float("-inf"))\n        w = torch.softmax(s, -1)\n        out = (w @ v).transpose(1, 2).view(B, T, D)\n        return self.W_o(out), w\n',
        "`.view` needs memory laid out in order, ",  # learner: S
    ),
    (
        "8.6_r5_hardcoded_d",
        "gqa_module",
        'class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.G, self.d = n_heads, n_kv_heads, 4\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)\n        r = self.H // self.G\n        k = k.repeat_interleave(r, 1); v = v.repeat_interleave(r, 1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s.masked_fill(~mask, float("-inf"))\n        w = torch.softmax(s, -1)\n        out = (w @ v).transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), w\n',
        "W_k and W_v project to the G key-value h",  # learner: S
    ),
    (
        "8.6_r5_all_from_Wq",
        "gqa_module",
        'class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_q(x)[..., :self.G * self.d].view(B, T, self.G, self.d).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)\n        r = self.H // self.G\n        k = k.repeat_interleave(r, 1); v = v.repeat_interleave(r, 1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s.masked_fill(~mask, float("-inf"))\n        w = torch.softmax(s, -1)\n        out = (w @ v).transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), w\n',
        "your keys come from W_q's output (its fi",  # round 5: was generic
    ),
    (
        "8.6_r5_mask_float_add",
        "gqa_module",
        "class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.G, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)\n        r = self.H // self.G\n        k = k.repeat_interleave(r, 1); v = v.repeat_interleave(r, 1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s + mask\n        w = torch.softmax(s, -1)\n        out = (w @ v).transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), w\n",
        "you added the boolean mask to the scores",  # round 5: was generic
    ),
    (
        "8.9_r5_lower_incl_all",
        "causal_tiles",
        "answer = 1024 * 1025 / 2 / 128**2",
        "that is the number of visible (query, ke",  # round 5: was generic
    ),
    (
        "8.3_r6_p_with_old_max",
        "tile_update",
        "def tile_update(m, total, acc, scores, v):\n    m_new = np.maximum(m, scores.max(-1))\n    alpha = np.exp(m - m_new)\n    p = np.exp(scores - scores.max(-1, keepdims=True))\n    return m_new, alpha * total + p.sum(-1), alpha[..., None] * acc + p @ v\n",
        "against its own max",  # round 6: was not specific
    ),
    (
        "8.3_r6_returns_old_m",
        "tile_update",
        "def tile_update(m, total, acc, scores, v):\n    m_new = np.maximum(m, scores.max(-1))\n    alpha = np.exp(m - m_new)\n    p = np.exp(scores - m_new[..., None])\n    return m, alpha * total + p.sum(-1), alpha[..., None] * acc + p @ v\n",
        "old running max m",  # round 6: was not specific
    ),
    (
        "8.4_r6_cat_no_list",
        "kv_step",
        "def kv_step(q, k, v, k_cache, v_cache):\n    k_cache = torch.cat(k_cache, k, dim=-2)\n    v_cache = torch.cat(v_cache, v, dim=-2)\n    w = torch.softmax(q @ k_cache.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)\n    return w @ v_cache, k_cache, v_cache\n",
        "tensors to join as one sequence",  # round 6: was not specific
    ),
    (
        "8.5_r6_sdpa_no_gqa_flag",
        "gqa",
        "def gqa(q, k, v):\n    return F.scaled_dot_product_attention(q, k, v)\n",
        "do not line up on the head axis",  # round 6: was not specific
    ),
    (
        "8.6_r6_repeat_k_only",
        "gqa_module",
        "class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.H, self.G = n_heads, n_kv_heads\n        self.d = d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)\n        k = k.repeat_interleave(self.H // self.G, dim=1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s.masked_fill(~mask, float('-inf'))\n        w = torch.softmax(s, dim=-1)\n        out = w @ v\n        out = out.transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), w\n",
        "the weights and v do not line up",  # round 6: was not specific
    ),
    (
        "8.6_r6_no_super_init",
        "gqa_module",
        "class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        self.H, self.G = n_heads, n_kv_heads\n        self.d = d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.H, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.G, self.d).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.G, self.d).transpose(1, 2)\n        k = k.repeat_interleave(self.H // self.G, dim=1); v = v.repeat_interleave(self.H // self.G, dim=1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s.masked_fill(~mask, float('-inf'))\n        w = torch.softmax(s, dim=-1)\n        out = w @ v\n        out = out.transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), w\n",
        "parent class's `__init__`",  # round 6: was not specific
    ),
    (
        "8.8_r6_per_token",
        "cache_memory",
        "answer = 2 * 24 * 4 * 64 * 2 / 2**20\n",
        "one token",  # round 6: was not specific
    ),
    (
        "8.9_r6_skipped_count",
        "causal_tiles",
        "answer = 28\n",
        "tiles skipped",  # round 6: was not specific
    ),
    (
        "8.1_r7_block_T",
        "online_update",
        "def online_update(m, total, block):\n    m_new = np.maximum(m, block.max(axis=-1))\n    return m_new, total * np.exp(m - m_new) + np.exp(block.T - m_new).T.sum(-1)\n",
        "reverses all 3 axes of `block`",  # round 7: was generic
    ),
    (
        "8.2_r7_final_exp_unguarded",
        "online_softmax",
        "def online_softmax(x, block_size):\n    m = np.full(x.shape[:-1], -np.inf); total = np.zeros(x.shape[:-1])\n    for s in range(0, x.shape[-1], block_size):\n        b = x[..., s:s+block_size]\n        m_new = np.maximum(m, b.max(-1))\n        safe = np.where(np.isneginf(m_new), 0.0, m_new)\n        total = total * np.exp(m - safe) + np.exp(b - safe[..., None]).sum(-1)\n        m = m_new\n    d = np.where(total == 0, 1.0, total)\n    return np.exp(x - m[..., None]) / d[..., None]\n",
        "exp(-inf - (-inf))",  # round 7: was misleading
    ),
    (
        "8.3_r7_p_normalised",
        "tile_update",
        "def tile_update(m, total, acc, scores, v):\n    m2 = np.maximum(m, scores.max(-1)); a = np.exp(m - m2)\n    p = np.exp(scores - m2[..., None]); p = p / p.sum(-1, keepdims=True)\n    return m2, a * total + p.sum(-1), a[..., None] * acc + p @ v\n",
        "normalised the tile's p by its own sum",  # round 7: was generic
    ),
    (
        "8.6_r7_view_BGTd",
        "gqa_module",
        'class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.h, self.g, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.h, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, self.g, T, self.d)\n        v = self.W_v(x).view(B, self.g, T, self.d)\n        r = self.h // self.g\n        k = k.repeat_interleave(r, dim=1)\n        v = v.repeat_interleave(r, dim=1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s.masked_fill(~mask, float("-inf"))\n        w = torch.softmax(s, dim=-1)\n        out = (w @ v).transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), w\n',
        "split the key-value heads with one view",  # round 7: was generic
    ),
    (
        "8.6_r7_mask_inverted_finite",
        "gqa_module",
        "class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.h, self.g, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.h, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.g, self.d).transpose(1, 2)\n        v = self.W_v(x).view(B, T, self.g, self.d).transpose(1, 2)\n        r = self.h // self.g\n        k = k.repeat_interleave(r, dim=1)\n        v = v.repeat_interleave(r, dim=1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s.masked_fill(mask == 1, -1e9)\n        w = torch.softmax(s, dim=-1)\n        out = (w @ v).transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), w\n",
        "large negative number in place of -inf",  # round 7: was generic
    ),
    (
        "8.6_r7_view_BTdG",
        "gqa_module",
        'class MyGroupedQueryAttention(nn.Module):\n    def __init__(self, d_model, n_heads, n_kv_heads):\n        super().__init__()\n        self.h, self.g, self.d = n_heads, n_kv_heads, d_model // n_heads\n        self.W_q = nn.Linear(d_model, d_model)\n        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)\n        self.W_o = nn.Linear(d_model, d_model)\n\n    def forward(self, x, mask=None):\n        B, T, D = x.shape\n        q = self.W_q(x).view(B, T, self.h, self.d).transpose(1, 2)\n        k = self.W_k(x).view(B, T, self.d, self.g).permute(0, 3, 1, 2)\n        v = self.W_v(x).view(B, T, self.d, self.g).permute(0, 3, 1, 2)\n        r = self.h // self.g\n        k = k.repeat_interleave(r, dim=1)\n        v = v.repeat_interleave(r, dim=1)\n        s = q @ k.transpose(-2, -1) / math.sqrt(self.d)\n        if mask is not None:\n            s = s.masked_fill(~mask, float("-inf"))\n        w = torch.softmax(s, dim=-1)\n        out = (w @ v).transpose(1, 2).reshape(B, T, D)\n        return self.W_o(out), w\n',
        "the head index last",  # round 7: was generic
    ),
]
