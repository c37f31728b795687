"""per channel: h[t] = a[t] * h[t-1] + b[t], h[-1] = 0 (the selective-scan recurrence)"""
import numpy as np


def make_inputs(rng):
    return {"a": rng.uniform(0.8, 1.0, (128, 256)), "b": 0.1 * rng.standard_normal((128, 256))}


def reference(a, b):
    a, b = a.astype(np.float64), b.astype(np.float64)
    h = np.zeros_like(b)
    state = np.zeros(a.shape[0])
    for t in range(a.shape[1]):
        state = a[:, t] * state + b[:, t]
        h[:, t] = state
    return {"h": h}
