"""every rank gets the max over ranks (in rank order) of its x[rank]"""
import numpy as np


def make_inputs(rng):
    return {"x": rng.standard_normal((8, 128, 32)).astype(np.float32)}


def reference(x):
    r = x[0].astype(np.float32)
    for k in range(1, 8):
        r = np.maximum(r, x[k])
    return {"out": np.stack([r] * 8).astype(np.float32)}
