"""perf_mode double_row: a K = 256 fp8 matmul in one PE pass.  Partition k
holds contraction rows k and 128 + k side by side: a_t is [128, 2, M] and
b is [128, 2, N], and out = sum over r of a_t[:, r, :].T @ b[:, r, :]."""
import numpy as np


def make_inputs(rng):
    return {"a_t": rng.standard_normal((128, 2, 64)), "b": rng.standard_normal((128, 2, 256))}


def reference(a_t, b):
    a = a_t.astype(np.float64)
    x = b.astype(np.float64)
    return {"out": a[:, 0, :].T @ x[:, 0, :] + a[:, 1, :].T @ x[:, 1, :]}
