"""NKI tensor_copy_predicated: dst = src where the predicate (xor
reverse_pred) is non-zero, else dst unchanged; src a tile or a number."""
import numpy as np


def make_inputs(rng):
    return {"x": rng.standard_normal((16, 48)), "y": rng.standard_normal((16, 48)),
            "pred": rng.integers(0, 3, (16, 48)).astype(np.uint8)}


def reference(x, y, pred):
    out = x.astype(np.float32).copy()
    p = pred != 0
    out[:, :16] = np.where(~p[:, :16], y[:, :16].astype(np.float32), out[:, :16])
    out[:, 16:32] = np.where(p[:, 16:32], np.float32(-3.5), out[:, 16:32])
    out[:, 32:] = np.where(~p[:, 32:], np.float32(0.125), out[:, 32:])
    return {"out": out}
