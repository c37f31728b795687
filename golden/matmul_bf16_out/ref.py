"""out = bf16(a_t.T @ b) with bf16 inputs and fp32 accumulation"""
import numpy as np


def make_inputs(rng):
    return {"a_t": rng.standard_normal((128, 128)), "b": rng.standard_normal((128, 256))}


def reference(a_t, b):
    return {"out": a_t.astype(np.float64).T @ b.astype(np.float64)}
