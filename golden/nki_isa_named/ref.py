"""nki.isa reciprocal / exponential / tensor_copy_predicated / nc_n_gather
under their NKI names, following the SDK docstrings."""
import numpy as np


def make_inputs(rng):
    x = rng.uniform(0.5, 2.0, (32, 64)) * rng.choice([-1.0, 1.0], (32, 64))
    return {"x": x, "m": x.max(axis=1, keepdims=True),
            "pred": rng.integers(0, 2, (32, 64)).astype(np.uint8),
            "idx": rng.integers(0, 64, (32, 16)).astype(np.uint32)}


def reference(x, m, pred, idx):
    x = x.astype(np.float32)
    m = m.astype(np.float32)
    e = np.exp((x - np.float32(1.5)).astype(np.float64))
    c = np.full((32, 64), -5.0, dtype=np.float32)
    c = np.where(pred != 0, x, c)          # copy where the predicate holds
    return {"recip": 1.0 / x.astype(np.float64), "ex": e, "exsum": e.sum(axis=1, keepdims=True),
            "cp": c, "g": np.take_along_axis(x, idx.astype(np.int64), axis=1)}
