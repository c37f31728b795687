"""Strided (complicated) loads and stores: o1 interleaves a[:, ::2, ::4] and
a[:, 1::2, 1::4] along dim 1; o2 = b[:, ::2, ::2, ::4]; o3 takes c's first
half into the even partitions and its second half into the odd ones
(partition-strided DMA: a re-derived partition AP)"""
import numpy as np


def make_inputs(rng):
    return {"a": rng.standard_normal((8, 8, 64)), "b": rng.standard_normal((8, 6, 8, 32)),
            "c": rng.standard_normal((128, 16))}


def reference(a, b, c):
    o1 = np.empty((8, 8, 16))
    o1[:, 0::2, :] = a[:, 0::2, 0::4]
    o1[:, 1::2, :] = a[:, 1::2, 1::4]
    o3 = np.empty((128, 16))
    o3[0::2] = c[:64]
    o3[1::2] = c[64:]
    return {"o1": o1, "o2": b[:, ::2, ::2, ::4], "o3": o3}
