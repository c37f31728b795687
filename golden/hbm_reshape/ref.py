"""NKI tensor.reshape views of HBM tensors (C order): g gathers rows of the
[8, 16, 24] table seen as [128, 24] by index; y = rows 8..23 of x seen as
[32, 32], flattened; s = x as [16, 64] minus the first 16 rows of the table
seen as [48, 64] (dma_compute)."""
import numpy as np


def make_inputs(rng):
    return {"table": rng.standard_normal((8, 16, 24)),
            "idx": rng.integers(0, 128, (32, 1)).astype(np.int32),
            "x": rng.standard_normal((4, 256))}


def reference(table, idx, x):
    t2 = table.astype(np.float32).reshape(128, 24)
    x = x.astype(np.float32)
    return {"g": t2[idx[:, 0]], "y": x.reshape(32, 32)[8:24, :].reshape(512),
            "s": x.reshape(16, 64) - table.astype(np.float32).reshape(48, 64)[0:16, :]}
