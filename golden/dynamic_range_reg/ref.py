"""dynamic_range with the loop variable as a register: i = 2, 5, 8, ... < n
(n = 27: 9 iterations, past the compile-time guess of 6); idx[i] = i
(register_store of the loop variable's register), rows[i] = a[i]."""
import numpy as np


def make_inputs(rng):
    return {"a": rng.standard_normal((32, 8)).astype(np.float32),
            "n": np.array([[27]], np.int32)}


def reference(a, n):
    idx = np.full((32, 1), -1, np.int32)
    rows = np.zeros((32, 8), np.float32)
    for i in range(2, int(n[0, 0]), 3):
        idx[i] = i
        rows[i] = a[i]
    return {"idx": idx, "rows": rows}
