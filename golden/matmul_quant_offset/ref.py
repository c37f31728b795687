"""matmul with ifmap_quant_offset 8: the moving data are quantised values
with zero point 8, so out = a_t.T @ (b - 8)."""
import numpy as np


def make_inputs(rng):
    return {"a_t": rng.standard_normal((64, 32)),
            "b": rng.integers(0, 16, (64, 128)).astype(np.float32)}


def reference(a_t, b):
    return {"out": a_t.astype(np.float64).T @ (b.astype(np.float64) - 8.0)}
