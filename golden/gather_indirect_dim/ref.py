"""Indirect DMAs whose indexed dim is not dim 0 (NKI .ap(indirect_dim=d):
the index scales dim d's stride): rows = data[2, idx, :],
cols = data[1, :, cidx].T, out2 = base with out2[1, sidx, 4:12] = rows[0:16, 0:8]."""
import numpy as np


def make_inputs(rng):
    return {"data": rng.standard_normal((4, 64, 24)),
            "idx": rng.integers(0, 64, (128, 1)),
            "cidx": rng.integers(0, 24, (24, 1)),
            "sidx": rng.permutation(32)[:16].reshape(16, 1),
            "base": rng.standard_normal((3, 32, 16))}


def reference(data, idx, cidx, sidx, base):
    rows = data[2][idx[:, 0], :]
    cols = data[1][:, cidx[:, 0]].T
    out2 = base.copy()
    out2[1, sidx[:, 0], 4:12] = rows[0:16, 0:8]
    return {"rows": rows, "cols": cols, "out2": out2}
