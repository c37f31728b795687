"""NKI range_select as its docstring's NumPy pseudo-code: column index j
(range_start + position) kept where lo <= j < hi, else FP32_MIN; m is the
row maximum of the whole selected row (two calls chained through the
accumulator).  Rows 0-3 cover edge windows: empty, whole row, one column,
lo past the end."""
import numpy as np


def make_inputs(rng):
    x = rng.standard_normal((16, 64)) * 4.0
    lo = rng.integers(0, 48, 16).astype(np.float64)
    hi = lo + rng.integers(1, 24, 16)
    lo[0], hi[0] = 10, 10
    lo[1], hi[1] = 0, 64
    lo[2], hi[2] = 31, 32
    lo[3], hi[3] = 70, 80
    return {"x": x, "lohi": np.stack([lo, hi], axis=1)}


def reference(x, lohi):
    x = x.astype(np.float32)
    j = np.arange(64, dtype=np.float32)[None, :]
    keep = (j >= lohi[:, 0:1]) & (j < lohi[:, 1:2])
    y = np.where(keep, x, np.finfo(np.float32).min).astype(np.float32)
    return {"y": y, "m": y.max(axis=1, keepdims=True)}
