"""load_transpose2d(dtype=bfloat16): out = x.T rounded to bfloat16 (RNE)."""
import numpy as np

from lowp import round_to


def make_inputs(rng):
    return {"x": rng.standard_normal((64, 32)).astype(np.float32)}


def reference(x):
    return {"out": round_to(x.astype(np.float32).T.copy(), "bfloat16")}
