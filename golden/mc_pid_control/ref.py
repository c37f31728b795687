"""Programs 0 and 2 take exp of their 128-row block; programs 1 and 3 double theirs pid times."""
import numpy as np


def make_inputs(rng):
    return {"a": rng.uniform(-1.0, 1.0, (512, 64)).astype(np.float32)}


def reference(a):
    a = a.astype(np.float32)
    out = np.empty_like(a)
    for p in range(4):
        blk = a[p * 128:(p + 1) * 128]
        out[p * 128:(p + 1) * 128] = np.exp(blk) if p % 2 == 0 else blk * np.float32(2 ** p)
    return {"out": out}
