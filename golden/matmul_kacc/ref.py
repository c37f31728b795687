"""out = a_t.T @ b with K = 512"""
import numpy as np


def make_inputs(rng):
    return {"a_t": rng.standard_normal((512, 128)), "b": rng.standard_normal((512, 256))}


def reference(a_t, b):
    return {"out": a_t.astype(np.float64).T @ b.astype(np.float64)}
