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
]
