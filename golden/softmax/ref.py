"""softmax over the last axis"""
import numpy as np


def make_inputs(rng):
    return {"x": 3.0 * rng.standard_normal((128, 256))}


def reference(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return {"out": e / e.sum(axis=-1, keepdims=True)}
