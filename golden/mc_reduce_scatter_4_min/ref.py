"""rank r: minimum over ranks of its row block r"""
import numpy as np


def make_inputs(rng):
    return {"x": rng.standard_normal((4, 128, 32)).astype(np.float32)}


def reference(x):
    m = x.min(axis=0)
    return {"out": np.stack([m[r * 32:(r + 1) * 32] for r in range(4)]).astype(np.float32)}
