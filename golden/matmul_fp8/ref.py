"""out = a_t.T @ b; inputs are float8_e4m3fn values (rounded by golden.py)"""
import numpy as np


def make_inputs(rng):
    return {"a_t": rng.standard_normal((256, 128)), "b": rng.standard_normal((256, 256))}


def reference(a_t, b):
    return {"out": a_t.astype(np.float64).T @ b.astype(np.float64)}
