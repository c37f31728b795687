"""TensorScalarGEP: the per-partition scalar is fetched through a pointer
moved by a register (k, loaded at run time): out = x * s[:, k]."""
import numpy as np


def make_inputs(rng):
    return {"x": rng.standard_normal((128, 32)), "s": rng.standard_normal((128, 8)),
            "k": np.array([[5]], dtype=np.int32)}


def reference(x, s, k):
    return {"out": x.astype(np.float32) * s.astype(np.float32)[:, k[0, 0]:k[0, 0] + 1]}
