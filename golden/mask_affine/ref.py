"""NKI mask=: the op is computed only where the affine predicate over the
destination's indices holds (p: partition, i_d: free indices); elsewhere
the destination keeps what it held (y here)."""
import numpy as np


def make_inputs(rng):
    return {"x": rng.standard_normal((32, 4, 16)), "y": rng.standard_normal((32, 4, 16)),
            "xf": rng.standard_normal((32, 64)), "yf": rng.standard_normal((32, 64))}


def reference(x, y, xf, yf):
    x, y = x.astype(np.float32), y.astype(np.float32)
    xf, yf = xf.astype(np.float32), yf.astype(np.float32)
    p, f = np.meshgrid(np.arange(32), np.arange(64), indexing="ij")
    a = np.where(f - 8 >= 0, xf * np.float32(2) + np.float32(1), yf)
    b = np.where((f - p >= 0).reshape(32, 4, 16), x, y)
    return {"a": a, "b": b}
