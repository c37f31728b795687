"""Activate2 with a per-partition pointer immediate (the notes' imm0_ptr):
out = tanh(x * c[p] + 0.5), c a [128, 1] tile."""
import numpy as np


def make_inputs(rng):
    return {"x": rng.standard_normal((128, 64)), "c": rng.standard_normal((128, 1))}


def reference(x, c):
    return {"out": np.tanh(x.astype(np.float32) * c.astype(np.float32) + np.float32(0.5))}
