"""Shared reference of the grid_2d_* cases: a [64, 64] split into a 4 x 2
grid of [16, 32] blocks; block (i, j) becomes a * 2 + (10 * i + j), in fp32."""
import numpy as np


def make_inputs(rng):
    return {"a": rng.standard_normal((64, 64)).astype(np.float32)}


def reference(a):
    a = a.astype(np.float32)
    out = np.empty_like(a)
    for i in range(4):
        for j in range(2):
            blk = a[16 * i:16 * (i + 1), 32 * j:32 * (j + 1)]
            out[16 * i:16 * (i + 1), 32 * j:32 * (j + 1)] = \
                (blk * np.float32(2)).astype(np.float32) + np.float32(10 * i + j)
    return {"out": out}
