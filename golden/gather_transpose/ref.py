"""Gather-transpose: out[:, j] = table[idx[j], 0, :] where 0 <= idx[j] < 64, else -1 (skipped)."""
import numpy as np


def make_inputs(rng):
    idx = rng.integers(0, 64, 128)
    idx[::7] = rng.integers(64, 300, idx[::7].shape)     # every 7th index out of range: skipped
    return {"table": rng.standard_normal((64, 1, 32)), "idx": idx.reshape(128, 1)}


def reference(table, idx):
    i = idx[:, 0]
    valid = (i >= 0) & (i < table.shape[0])
    out = np.full((table.shape[2], i.shape[0]), -1.0)
    out[:, valid] = table[i[valid], 0, :].T
    return {"out": out}
