"""out[p, j] = data[p].reshape(-1)[idx[p, j]]"""
import numpy as np


def make_inputs(rng):
    return {"data": rng.standard_normal((128, 4, 32)), "idx": rng.integers(0, 128, (128, 16))}


def reference(data, idx):
    return {"out": np.take_along_axis(data.reshape(128, -1), idx, axis=1)}
