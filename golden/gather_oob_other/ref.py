"""out[i] = table[idx[i]] where 0 <= idx[i] < 64, else other = -7.5 (row skipped, filled)"""
import numpy as np


def make_inputs(rng):
    idx = rng.integers(0, 64, 128)
    idx[::3] = rng.integers(64, 500, idx[::3].shape)     # every 3rd index out of range
    return {"table": rng.standard_normal((64, 32)), "idx": idx.reshape(128, 1)}


def reference(table, idx):
    i = idx[:, 0]
    valid = (i >= 0) & (i < table.shape[0])
    out = np.full((idx.shape[0], table.shape[1]), -7.5)
    out[valid] = table[i[valid]]
    return {"out": out}
