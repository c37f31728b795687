"""out = a_t.T @ b (a_t holds A transposed: K on the first axis)"""
import numpy as np


def make_inputs(rng):
    return {"a_t": rng.standard_normal((128, 64)), "b": rng.standard_normal((128, 256))}


def reference(a_t, b):
    return {"out": a_t.astype(np.float64).T @ b.astype(np.float64)}
