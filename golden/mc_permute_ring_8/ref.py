"""rank r receives rank r-1's tensor"""
import numpy as np


def make_inputs(rng):
    return {"x": rng.standard_normal((8, 16, 32)).astype(np.float32)}


def reference(x):
    return {"out": np.stack([x[(r - 1) % 8] for r in range(8)]).astype(np.float32)}
