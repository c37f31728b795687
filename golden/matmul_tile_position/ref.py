"""out1 = a1_t.T @ b1, out2 = a2_t.T @ b2 (two 64x64 stationaries side by side)"""
import numpy as np


def make_inputs(rng):
    return {"a1_t": rng.standard_normal((64, 64)), "b1": rng.standard_normal((64, 128)),
            "a2_t": rng.standard_normal((64, 64)), "b2": rng.standard_normal((64, 128))}


def reference(a1_t, b1, a2_t, b2):
    f = np.float64
    return {"out1": a1_t.astype(f).T @ b1.astype(f), "out2": a2_t.astype(f).T @ b2.astype(f)}
