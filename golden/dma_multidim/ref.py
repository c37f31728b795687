"""Strided (complicated) loads and stores: o1 interleaves a[:, ::2, ::4] and
a[:, 1::2, 1::4] along dim 1; o2 = b[:, ::2, ::2, ::4]"""
import numpy as np


def make_inputs(rng):
    return {"a": rng.standard_normal((8, 8, 64)), "b": rng.standard_normal((8, 6, 8, 32))}


def reference(a, b):
    o1 = np.empty((8, 8, 16))
    o1[:, 0::2, :] = a[:, 0::2, 0::4]
    o1[:, 1::2, :] = a[:, 1::2, 1::4]
    return {"o1": o1, "o2": b[:, ::2, ::2, ::4]}
