"""sum over ranks in rank order; rank k keeps row block k of it"""
import numpy as np


def make_inputs(rng):
    return {"x": rng.standard_normal((4, 64, 32)).astype(np.float32)}


def reference(x):
    r = ((x[0] + x[1]) + x[2]) + x[3]
    return {"out": np.stack([r] * 4).astype(np.float32),
            "rs": np.stack([r[k * 16:(k + 1) * 16] for k in range(4)]).astype(np.float32)}
