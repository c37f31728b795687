"""nc_find_index8 with a broadcast vals row: every row of x holds the 8
query values once (at random places); idx[p, k] = position of q[k] in x[p]."""
import numpy as np


def make_inputs(rng):
    q = np.arange(1, 9, dtype=np.float32) * 100.0
    x = rng.uniform(-1.0, 1.0, (16, 64)).astype(np.float32)
    for p in range(16):
        x[p, rng.choice(64, 8, replace=False)] = q
    return {"x": x, "q": q.reshape(1, 8)}


def reference(x, q):
    idx = np.zeros((16, 8), dtype=np.uint32)
    for p in range(16):
        for k in range(8):
            idx[p, k] = np.flatnonzero(x[p] == q[0, k])[0]
    return {"idx": idx}
