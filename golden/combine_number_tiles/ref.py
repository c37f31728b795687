"""Bare-number operands: out = -1 - 2.5 * a (two tensor_tensor ops with a number operand each), fill = 7."""
import numpy as np


def make_inputs(rng):
    return {"a": rng.standard_normal((128, 64)).astype(np.float32)}


def reference(a):
    u = (a.astype(np.float32) * np.float32(2.5)).astype(np.float32)
    return {"out": (np.float32(-1.0) - u).astype(np.float32),
            "fill": np.full((96, 40), 7.0, dtype=np.float32)}
