"""Shared reference of the dynamic_range_* cases: NKI dynamic_range whose
trip count n is a register value (register_load of the input n).  out =
zeros with the first n 32-row blocks = a*b; total = the sum of those
blocks, accumulated in iteration order in float32."""
import numpy as np


def inputs_with(n):
    def make_inputs(rng):
        return {"a": rng.standard_normal((256, 16)), "b": rng.standard_normal((256, 16)),
                "n": np.array([[n]])}
    return make_inputs


def reference(a, b, n):
    a, b = a.astype(np.float32), b.astype(np.float32)
    out = np.zeros((256, 16), np.float32)
    total = np.zeros((32, 16), np.float32)
    for i in range(int(n[0, 0])):
        blk = a[i * 32:(i + 1) * 32] * b[i * 32:(i + 1) * 32]
        out[i * 32:(i + 1) * 32] = blk
        total = total + blk
    return {"out": out, "total": total}
