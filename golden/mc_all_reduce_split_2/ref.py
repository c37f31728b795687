"""every rank gets the add over ranks (in rank order) of its x[rank]; the
split form reduces each half on one core, still in rank order"""
import numpy as np


def make_inputs(rng):
    return {"x": rng.standard_normal((2, 16, 1024)).astype(np.float32)}


def reference(x):
    r = x[0].astype(np.float32)
    for k in range(1, 2):
        r = np.add(r, x[k])
    return {"out": np.stack([r] * 2).astype(np.float32)}
