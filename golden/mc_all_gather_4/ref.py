"""every rank gets the ranks' tiles side by side"""
import numpy as np


def make_inputs(rng):
    return {"x": rng.standard_normal((4, 64, 16)).astype(np.float32)}


def reference(x):
    g = np.concatenate(list(x), axis=1)
    return {"out": np.stack([g] * 4).astype(np.float32)}
