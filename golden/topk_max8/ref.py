"""vals = the 16 largest per row, descending; idx = positions of the 8 largest"""
import numpy as np


def make_inputs(rng):
    # distinct values per row so the indices are unambiguous
    return {"x": np.stack([rng.permutation(512) for _ in range(128)]) / 64.0 - 4.0}


def reference(x):
    order = np.argsort(-x, axis=1, kind="stable")
    return {"vals": np.take_along_axis(x, order[:, :16], axis=1), "idx": order[:, :8]}
